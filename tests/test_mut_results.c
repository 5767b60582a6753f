/* results/: the writer's building blocks (results/writer.h) driven directly, each result read back
 * with the HDF5 API and compared with what was written or with the documented rule; checks added
 * for mutation robustness (issue 16). */
#include <criterion/criterion.h>
#include <hdf5.h>
#include <hdf5_hl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "results/writer.h"

typedef struct {
  char path[128];
  hid_t file;
  nh_writer w;
} wfx;

static void wfx_open(wfx *x, const char *tag) {
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL); /* failures below are expected and checked */
  snprintf(x->path, sizeof x->path, "/tmp/nhbench-mut-results-%d-%s.h5", (int)getpid(), tag);
  x->file = H5Fcreate(x->path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  cr_assert_geq(x->file, 0);
  memset(&x->w, 0, sizeof x->w);
  x->w.file = x->file;
}

static void wfx_close(wfx *x) {
  for (int i = 0; i < x->w.ndims; i++)
    if (x->w.dim[i].scale >= 0) H5Dclose(x->w.dim[i].scale);
  H5Fclose(x->file);
  remove(x->path);
}

static void expect_attr_str(hid_t loc, const char *obj, const char *name, const char *want) {
  char buf[256] = "";
  hid_t o = H5Oopen(loc, obj, H5P_DEFAULT), a = H5Aopen(o, name, H5P_DEFAULT), t = H5Aget_type(a);
  char *v = NULL;
  cr_assert_eq(H5Aread(a, t, &v), 0, "%s@%s", obj, name);
  snprintf(buf, sizeof buf, "%s", v ? v : "(null)");
  H5free_memory(v);
  H5Tclose(t), H5Aclose(a), H5Oclose(o);
  cr_expect_str_eq(buf, want, "%s@%s = '%s', want '%s'", obj, name, buf, want);
}

/* The writer's message starts with want (nh_w_fail may append the OS's reason after ": "). */
static void expect_err(const nh_writer *w, const char *want) {
  const size_t n = strlen(want);
  cr_expect(w->failed && strncmp(w->err, want, n) == 0 && (w->err[n] == '\0' || w->err[n] == ':'),
            "err = '%s', want '%s'", w->err, want);
}

/* A group twice: the second H5Gcreate fails, the writer says which, and stays failed (later calls
 * are no-ops; the first message stays). */
Test(mut_results, writer_failures_are_sticky_and_named) {
  wfx x;
  wfx_open(&x, "fail");
  hid_t g = nh_w_group(&x.w, x.file, "g", "first");
  cr_assert_geq(g, 0);
  H5Gclose(g);
  cr_expect_eq(x.w.failed, 0);
  cr_expect_lt(nh_w_group(&x.w, x.file, "g", "again"), 0);
  expect_err(&x.w, "cannot create group g");
  nh_w_attr_f64(&x.w, x.file, "after", 1.0);
  cr_expect_eq(H5Aexists(x.file, "after"), 0, "an attribute was written after a failure");
  expect_err(&x.w, "cannot create group g");
  wfx_close(&x);
}

/* Dimensions: NH_W_DIMS of them fit, one more is refused by name; an undeclared one in a dataset's
 * dims is named; a dimension with a coordinate dataset keeps its size; undim forgets. */
Test(mut_results, writer_dimensions) {
  wfx x;
  wfx_open(&x, "dims");
  char name[32];
  for (int i = 0; i < NH_W_DIMS; i++) snprintf(name, sizeof name, "d%d", i), nh_w_dim(&x.w, name, i + 1);
  cr_expect_eq(x.w.failed, 0, "%s", x.w.err);
  cr_expect_eq(x.w.ndims, NH_W_DIMS);
  nh_w_dim(&x.w, "d5", 9); /* re-sizing a declared one without a scale is fine */
  cr_expect_eq(x.w.failed, 0, "%s", x.w.err);
  cr_expect_eq(x.w.dim[5].size, 9);
  nh_w_undim(&x.w, "d0");
  cr_expect_eq(x.w.ndims, NH_W_DIMS - 1);
  cr_expect_str_eq(x.w.dim[0].name, "d31", "the last dimension takes the freed place");
  nh_w_dim(&x.w, "again", 2);
  nh_w_dim(&x.w, "one_too_many", 2);
  cr_expect_eq(x.w.failed, 1);
  expect_err(&x.w, "too many dimensions (one_too_many)");
  wfx_close(&x);

  wfx_open(&x, "dims2");
  const double h[3] = {0.5, 0.25, 0.125};
  nh_w_dim(&x.w, "h", 3);
  nh_w_scale_f64(&x.w, x.file, "h", "h", h, "1", "step sizes");
  nh_w_dim(&x.w, "h", 3); /* same size: fine */
  cr_expect_eq(x.w.failed, 0, "%s", x.w.err);
  nh_w_dim(&x.w, "h", 4);
  expect_err(&x.w, "dimension h has a coordinate dataset and cannot change size");
  wfx_close(&x);

  wfx_open(&x, "dims3");
  nh_w_dim(&x.w, "a", 2);
  const double v[2] = {1, 2};
  nh_w_f64(&x.w, x.file, "x", "a,b", v, "1", "x");
  expect_err(&x.w, "undeclared dimension 'b'");
  wfx_close(&x);

  wfx_open(&x, "dims4");
  nh_w_dim(&x.w, "a", 2);
  nh_w_f64(&x.w, x.file, "x", "a", NULL, "1", "x");
  expect_err(&x.w, "no data for dataset x (a result field left unset)");
  wfx_close(&x);
}

/* A dataset of shape (2, 3) and its attributes read back: values, description, units,
 * dimensions, the dimension labels, and the scale attached to dimension 0. */
Test(mut_results, writer_dataset_read_back) {
  wfx x;
  wfx_open(&x, "ds");
  const double h[2] = {0.5, 0.25};
  const double v[6] = {1.5, -2, 3.25, 4, 5e-300, -6};
  const int iv[6] = {7, -8, 9, 10, 11, -2147483647};
  nh_w_dim(&x.w, "h", 2);
  nh_w_dim(&x.w, "c", 3);
  nh_w_scale_f64(&x.w, x.file, "h", "h", h, "time", "step sizes");
  nh_w_f64(&x.w, x.file, "v", "h,c", v, "energy", "some values");
  nh_w_i32(&x.w, x.file, "i", "h,c", iv, "1", "some counts");
  nh_w_attr_f64(&x.w, x.file, "a_f64", -0.1);
  nh_w_attr_i32(&x.w, x.file, "a_i32", -7);
  nh_w_attr_i64(&x.w, x.file, "a_i64", 4294967297LL);
  nh_w_attr_str(&x.w, x.file, "a_str", NULL);
  nh_w_attr_str(&x.w, x.file, "a_str", "replaced"); /* a second write replaces */
  cr_assert_eq(x.w.failed, 0, "%s", x.w.err);
  double back[6];
  int iback[6];
  cr_assert_eq(H5LTread_dataset_double(x.file, "v", back), 0);
  cr_assert_eq(H5LTread_dataset_int(x.file, "i", iback), 0);
  for (int i = 0; i < 6; i++) cr_expect(back[i] == v[i] && iback[i] == iv[i], "element %d", i);
  int rank = 0;
  hsize_t dims[2];
  cr_assert_eq(H5LTget_dataset_ndims(x.file, "v", &rank), 0);
  H5LTget_dataset_info(x.file, "v", dims, NULL, NULL);
  cr_expect(rank == 2 && dims[0] == 2 && dims[1] == 3, "shape");
  expect_attr_str(x.file, "v", "description", "some values");
  expect_attr_str(x.file, "v", "units", "energy");
  expect_attr_str(x.file, "v", "dimensions", "h,c");
  expect_attr_str(x.file, "h", "units", "time");
  expect_attr_str(x.file, "/", "a_str", "replaced");
  double f = 0;
  int i32 = 0;
  long long i64 = 0;
  H5LTget_attribute_double(x.file, "/", "a_f64", &f);
  H5LTget_attribute_int(x.file, "/", "a_i32", &i32);
  H5LTget_attribute_long_long(x.file, "/", "a_i64", &i64);
  cr_expect(f == -0.1 && i32 == -7 && i64 == 4294967297LL, "attributes %g %d %lld", f, i32, i64);
  hid_t ds = H5Dopen2(x.file, "v", H5P_DEFAULT), sc = H5Dopen2(x.file, "h", H5P_DEFAULT);
  char label[16] = "";
  H5DSget_label(ds, 1, label, sizeof label);
  cr_expect_str_eq(label, "c");
  H5DSget_label(ds, 0, label, sizeof label);
  cr_expect_str_eq(label, "h");
  cr_expect_eq(H5DSis_scale(sc), 1);
  cr_expect_eq(H5DSis_attached(ds, sc, 0), 1, "the h scale on dimension 0");
  cr_expect_eq(H5DSis_attached(ds, sc, 1), 0);
  H5Dclose(ds), H5Dclose(sc);
  wfx_close(&x);
}

/* Storage (write.c, creation_plist): fewer than 4096 elements contiguous; 4096 and more chunked
 * with shuffle and deflate, chunks of whole trailing rows halved (rounded up) along the leading
 * dimension until at most 1 MiB: (600, 600) doubles = 2.88 MB -> 300 -> 150 rows (720 kB). */
static void expect_layout(hid_t file, const char *name, H5D_layout_t layout, int rank, const hsize_t *chunk) {
  hid_t ds = H5Dopen2(file, name, H5P_DEFAULT), pl = H5Dget_create_plist(ds);
  cr_expect_eq(H5Pget_layout(pl), layout, "%s layout", name);
  if (layout == H5D_CHUNKED) {
    hsize_t got[2] = {0, 0};
    cr_expect_eq(H5Pget_chunk(pl, 2, got), rank, "%s chunk rank", name);
    for (int i = 0; i < rank; i++) cr_expect_eq(got[i], chunk[i], "%s chunk[%d] = %llu", name, i, (unsigned long long)got[i]);
    cr_expect_eq(H5Pget_nfilters(pl), 2, "%s: shuffle and deflate", name);
  }
  H5Pclose(pl), H5Dclose(ds);
}

Test(mut_results, writer_storage_layout) {
  wfx x;
  wfx_open(&x, "layout");
  double *v = calloc(600 * 600, sizeof *v);
  nh_w_dim(&x.w, "small", 4095);
  nh_w_dim(&x.w, "edge", 4096);
  nh_w_dim(&x.w, "r", 600);
  nh_w_dim(&x.w, "c", 600);
  nh_w_dim(&x.w, "r3", 3);
  nh_w_dim(&x.w, "c2k", 2000);
  nh_w_f64(&x.w, x.file, "small", "small", v, "1", "4095 values");
  nh_w_f64(&x.w, x.file, "edge", "edge", v, "1", "4096 values");
  nh_w_f64(&x.w, x.file, "big", "r,c", v, "1", "600 x 600");
  nh_w_f64(&x.w, x.file, "rows", "r3,c2k", v, "1", "3 x 2000, 48 kB");
  cr_assert_eq(x.w.failed, 0, "%s", x.w.err);
  expect_layout(x.file, "small", H5D_CONTIGUOUS, 1, NULL);
  expect_layout(x.file, "edge", H5D_CHUNKED, 1, (const hsize_t[]){4096});
  expect_layout(x.file, "big", H5D_CHUNKED, 2, (const hsize_t[]){150, 600});
  expect_layout(x.file, "rows", H5D_CHUNKED, 2, (const hsize_t[]){3, 2000});
  free(v);
  wfx_close(&x);
}
