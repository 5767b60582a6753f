/* results/: the writer's building blocks (results/writer.h) driven directly, each result read back
 * with the HDF5 API and compared with what was written or with the documented rule; checks added
 * for mutation robustness (issue 16). */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <hdf5_hl.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "results/reader.h"
#include "results/writer.h"
#include "studies/observables.h"
#include "tests/helpers.h"

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
Test(writer, writer_failures_are_sticky_and_named) {
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
  cr_expect_lt(nh_w_group(&x.w, x.file, "later", "after the failure"), 0, "a group id from a failed writer");
  cr_expect_eq(H5Lexists(x.file, "later", H5P_DEFAULT), 0, "a group made after a failure");
  expect_err(&x.w, "cannot create group g");
  wfx_close(&x);
}

/* Dimensions: NH_W_DIMS of them fit, one more is refused by name; an undeclared one in a dataset's
 * dims is named; a dimension with a coordinate dataset keeps its size; undim forgets. */
Test(writer, writer_dimensions) {
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
Test(writer, writer_dataset_read_back) {
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
 * dimension until at most 1 MiB: (600, 600) doubles = 2.88 MB -> 300 -> 150 rows (720 kB); (2, 65536)
 * doubles, exactly 1 MiB, stay one chunk, (2, 65537) are halved. */
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

Test(writer, writer_storage_layout) {
  wfx x;
  wfx_open(&x, "layout");
  double *v = calloc(600 * 600, sizeof *v);
  nh_w_dim(&x.w, "small", 4095);
  nh_w_dim(&x.w, "edge", 4096);
  nh_w_dim(&x.w, "r", 600);
  nh_w_dim(&x.w, "c", 600);
  nh_w_dim(&x.w, "r3", 3);
  nh_w_dim(&x.w, "c2k", 2000);
  nh_w_dim(&x.w, "one", 1);
  nh_w_dim(&x.w, "none", 0);
  nh_w_dim(&x.w, "c5k", 5000);
  nh_w_dim(&x.w, "two", 2);
  nh_w_dim(&x.w, "c64k", 65536);
  nh_w_dim(&x.w, "c64k1", 65537);
  nh_w_f64(&x.w, x.file, "small", "small", v, "1", "4095 values");
  nh_w_f64(&x.w, x.file, "edge", "edge", v, "1", "4096 values");
  nh_w_f64(&x.w, x.file, "big", "r,c", v, "1", "600 x 600");
  nh_w_f64(&x.w, x.file, "rows", "r3,c2k", v, "1", "3 x 2000, 48 kB");
  nh_w_f64(&x.w, x.file, "single_row", "one,c5k", v, "1", "1 x 5000: a dimension of 1 is still chunked");
  nh_w_f64(&x.w, x.file, "empty", "none,c5k", v, "1", "0 x 5000: no elements, contiguous");
  nh_w_f64(&x.w, x.file, "mib", "two,c64k", v, "1", "2 x 65536: 1 MiB");
  nh_w_f64(&x.w, x.file, "over_mib", "two,c64k1", v, "1", "2 x 65537: 16 bytes over 1 MiB");
  cr_assert_eq(x.w.failed, 0, "%s", x.w.err);
  expect_layout(x.file, "mib", H5D_CHUNKED, 2, (const hsize_t[]){2, 65536});
  expect_layout(x.file, "over_mib", H5D_CHUNKED, 2, (const hsize_t[]){1, 65537});
  expect_layout(x.file, "small", H5D_CONTIGUOUS, 1, NULL);
  expect_layout(x.file, "edge", H5D_CHUNKED, 1, (const hsize_t[]){4096});
  expect_layout(x.file, "big", H5D_CHUNKED, 2, (const hsize_t[]){150, 600});
  expect_layout(x.file, "rows", H5D_CHUNKED, 2, (const hsize_t[]){3, 2000});
  expect_layout(x.file, "single_row", H5D_CHUNKED, 2, (const hsize_t[]){1, 5000});
  expect_layout(x.file, "empty", H5D_CONTIGUOUS, 2, NULL);
  free(v);
  wfx_close(&x);
}

/* The observables of a study written without their samples: values and fetch both unset, or
 * width, offset or absent unset, each refused by name before anything is read. */
Test(writer, observables_without_their_samples_are_refused) {
  static const char *absent[1] = {NULL};
  int width[1] = {1}, offset[1] = {0};
  double values[2] = {0, 0};
  nh_study st;
  memset(&st, 0, sizeof st);
  st.nobs = 1;
  for (int unset = 0; unset < 4; unset++) {
    wfx x;
    wfx_open(&x, "obs-unset");
    x.w.st = &st;
    nh_samples s = {.nobs = 1, .row = 1, .width = width, .offset = offset, .values = values, .absent = absent};
    if (unset == 0) s.values = NULL; /* and no fetch */
    if (unset == 1) s.width = NULL;
    if (unset == 2) s.offset = NULL;
    if (unset == 3) s.absent = NULL;
    nh_w_observables(&x.w, x.file, "run", 1, 2, &s);
    expect_err(&x.w, "no data for the observables (result field samples left unset)");
    wfx_close(&x);
  }
}

/* Open file descriptors of this process (the entries of /proc/self/fd, less the directory's own). */
static int open_fds(void) {
  DIR *d = opendir("/proc/self/fd");
  cr_assert_not_null(d);
  int n = 0;
  for (struct dirent *e; (e = readdir(d));) n += e->d_name[0] != '.';
  closedir(d);
  return n - 1;
}

/* nh_h5_open checks its path (readable, not a directory, HDF5) before HDF5 opens it: each refusal,
 * and an open and close, leave no descriptor open. */
Test(writer, opening_leaves_no_descriptor_open) {
  wfx x;
  wfx_open(&x, "fds");
  H5Fclose(x.file);
  char text[160];
  snprintf(text, sizeof text, "%s.txt", x.path);
  FILE *t = fopen(text, "w");
  cr_assert(t && fputs("not hdf5\n", t) >= 0 && fclose(t) == 0);
  const char *paths[] = {x.path, text, "/tmp", "/nonexistent/x.h5"};
  const int before = open_fds();
  fflush(stderr);
  const int saved = dup(2), null = open("/dev/null", O_WRONLY);
  dup2(null, 2);
  for (int i = 0; i < 4; i++) {
    nh_h5 f;
    if (nh_h5_open(&f, "test", paths[i]) == 0) nh_h5_close(&f);
  }
  dup2(saved, 2), close(saved), close(null);
  cr_expect_eq(open_fds(), before, "descriptors open: %d, before %d", open_fds(), before);
  remove(text), remove(x.path);
}

/* results/ writer (write.c): the building blocks driven directly and read back with the HDF5 API.
 * Issue 16: mutation robustness. */

static hid_t new_file(char *path, size_t len, const char *tag, nh_writer *w) {
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  snprintf(path, len, "/tmp/nhbench-mut2-writer-%d-%s.h5", (int)getpid(), tag);
  hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  cr_assert_geq(f, 0);
  memset(w, 0, sizeof *w);
  w->file = f;
  return f;
}

static void close_file(hid_t f, nh_writer *w, const char *path) {
  for (int i = 0; i < w->ndims; i++)
    if (w->dim[i].scale >= 0) H5Dclose(w->dim[i].scale);
  H5Fclose(f);
  remove(path);
}

/* Sizes: 0 is a size (an empty dataset, written and read back with its shape), a negative one is
 * refused by name (a count never set), and so the dataset after it is not written. */
Test(writer, dimension_sizes_zero_and_negative) {
  char path[128];
  nh_writer w;
  hid_t f = new_file(path, sizeof path, "sizes", &w);
  nh_w_dim(&w, "empty", 0);
  nh_w_dim(&w, "three", 3);
  const double v[3] = {0.5, 1.5, 2.5};
  nh_w_f64(&w, f, "nothing", "three,empty", v, "1", "no values");
  nh_w_f64(&w, f, "some", "three", v, "1", "three values");
  cr_assert_eq(w.failed, 0, "%s", w.err);
  int rank = 0;
  hsize_t dims[2] = {9, 9};
  cr_assert_eq(H5LTget_dataset_ndims(f, "nothing", &rank), 0);
  H5LTget_dataset_info(f, "nothing", dims, NULL, NULL);
  cr_expect(rank == 2 && dims[0] == 3 && dims[1] == 0, "shape (%llu, %llu)", (unsigned long long)dims[0],
            (unsigned long long)dims[1]);
  double back[3] = {0};
  cr_assert_eq(H5LTread_dataset_double(f, "some", back), 0);
  cr_expect(back[0] == 0.5 && back[1] == 1.5 && back[2] == 2.5);
  nh_w_dim(&w, "minus", -1);
  cr_expect_eq(w.failed, 1);
  cr_expect_str_eq(w.err, "dimension minus has a negative size");
  nh_w_f64(&w, f, "after", "three", v, "1", "not written");
  cr_expect_eq(H5Lexists(f, "after", H5P_DEFAULT), 0);
  close_file(f, &w, path);
  /* The same for a dimension already declared. */
  f = new_file(path, sizeof path, "sizes2", &w);
  nh_w_dim(&w, "n", 2);
  nh_w_dim(&w, "n", -3);
  cr_expect_str_eq(w.err, "dimension n has a negative size");
  cr_expect_eq(w.dim[0].size, 2, "the declared size is kept");
  close_file(f, &w, path);
}

/* The dimension table's own refusals carry no system error text, whatever errno held before. */
Test(writer, dimension_refusals_without_os_reason) {
  char path[128];
  nh_writer w;
  hid_t f = new_file(path, sizeof path, "full", &w);
  char name[32];
  for (int i = 0; i < NH_W_DIMS; i++) snprintf(name, sizeof name, "d%d", i), nh_w_dim(&w, name, 1);
  errno = ENOENT;
  nh_w_dim(&w, "d32", 1);
  cr_expect_str_eq(w.err, "too many dimensions (d32)");
  close_file(f, &w, path);
  f = new_file(path, sizeof path, "scale", &w);
  nh_w_dim(&w, "h", 2);
  nh_w_scale_f64(&w, f, "h", "h", (const double[]){0.5, 0.25}, "time", "step sizes");
  errno = ENOSPC;
  nh_w_dim(&w, "h", 3);
  cr_expect_str_eq(w.err, "dimension h has a coordinate dataset and cannot change size");
  close_file(f, &w, path);
}

/* An ensemble summary without samples: no last sample, so no variance at T (NaN), and nothing read
 * from the per-sample arrays; the per-run statistics as usual (one run, status 0). */
Test(writer, ensemble_summary_without_samples) {
  nh_study st;
  memset(&st, 0, sizeof st);
  st.count = 1, st.nsamples = 0, st.nmethods = 1;
  int status[1] = {0}, count[1] = {5};
  double maxdE[1] = {0.5}, slope[1] = {-0.25}, resid[1] = {1e-3}, var[1] = {2};
  nh_ensemble_result r;
  memset(&r, 0, sizeof r);
  r.status = status, r.max_abs_dE = maxdE, r.drift_slope = slope, r.max_residual = resid;
  r.dE_count = count + 1, r.dE_var = var + 1; /* one past the end: must not be read */
  nh_ensemble_summary s;
  nh_ensemble_summarize(&st, &r, 0, &s);
  cr_expect(s.ok == 1 && s.failures == 0 && s.max_max_abs_dE == 0.5 && s.median_abs_drift_slope == 0.25 &&
            s.mean_drift_slope == -0.25 && s.max_residual == 1e-3);
  cr_expect(isnan(s.final_var), "final_var %g without samples", s.final_var);
}

/* A dataset of rank 0 (dims ""): one value, written whole by nh_w_f64 and as its single row by
 * nh_w_f64_rows, read back as a scalar. */
static int row_of_seven(const void *ctx, long long i, double *out) {
  (void)ctx;
  out[0] = 7.25 + (double)i; /* row 0 only: 7.25 */
  return 0;
}
Test(writer, rank_zero_datasets_hold_one_value) {
  char path[128];
  nh_writer w;
  hid_t f = new_file(path, sizeof path, "rank0", &w);
  const double one = -3.5;
  nh_w_f64(&w, f, "whole", "", &one, "1", "one value");
  nh_w_f64_rows(&w, f, "by_rows", "", 0, row_of_seven, NULL, "1", "one row");
  cr_assert_eq(w.failed, 0, "%s", w.err);
  int rank = -1;
  double back = 0;
  cr_assert_eq(H5LTget_dataset_ndims(f, "by_rows", &rank), 0, "by_rows was not written");
  cr_expect_eq(rank, 0);
  cr_assert_eq(H5LTread_dataset_double(f, "by_rows", &back), 0);
  cr_expect_eq(back, 7.25);
  cr_assert_eq(H5LTread_dataset_double(f, "whole", &back), 0);
  cr_expect_eq(back, -3.5);
  close_file(f, &w, path);
}

/* HDF5's own refusal (a dataset name taken) is reported by the dataset's name alone: no system
 * error text, whatever errno held before the call. */
Test(writer, dataset_refused_by_hdf5_without_os_reason) {
  char path[128];
  nh_writer w;
  hid_t f = new_file(path, sizeof path, "twice", &w);
  nh_w_dim(&w, "two", 2);
  const double v[2] = {1, 2};
  nh_w_f64(&w, f, "x", "two", v, "1", "first");
  cr_assert_eq(w.failed, 0, "%s", w.err);
  errno = EACCES;
  nh_w_f64(&w, f, "x", "two", v, "1", "again");
  cr_expect_eq(w.failed, 1);
  cr_expect_str_eq(w.err, "cannot write dataset x");
  close_file(f, &w, path);
}

/* results/: the writer's failures that come from a row callback (a streamed dataset whose rows
 * cannot be had), through the public nh_w_file: its exact -1 and its message. Issue 16: mutation
 * robustness (a callee's -1 turned into +1 must not pass for success). */

/* A study with just what the provenance, the dimensions and the observables read: one method on
 * falling_disk, the energy observable. */
static void minimal_study(nh_study *st, const nh_observable **obs) {
  memset(st, 0, sizeof *st);
  st->kind = NH_STUDY_ENSEMBLE;
  st->sys = test_system("falling_disk", NULL);
  st->nmethods = 1;
  obs[0] = nh_observable_find("energy");
  cr_assert_not_null(obs[0]);
  st->nobs = 1;
  st->obs = obs;
}

static void file_path(char *path, size_t len, const char *tag) {
  snprintf(path, len, "/tmp/nhbench-mut3-results-%d-%s.h5", (int)getpid(), tag);
  remove(path);
}

/* nh_w_file fails with -1 and a message naming the path and (the start of) the writer's reason;
 * no file is left at path. */
static void expect_file_failed(int rc, const char *path, const char *err, const char *reason) {
  cr_expect_eq(rc, -1, "nh_w_file returned %d: %s", rc, err);
  char want[512];
  snprintf(want, sizeof want, "%s: writing the results failed: %s", path, reason);
  cr_expect(strncmp(err, want, strlen(want)) == 0, "err = '%s', want '%s...'", err, want);
  cr_expect_neq(access(path, F_OK), 0, "%s was written", path);
}

/* ---- a dataset written row by row --------------------------------------------------------- */

/* Row i is (i, i + 0.5); row `fail_at` cannot be had. */
static int rows_until(const void *ctx, long long i, double *out) {
  if (i == *(const long long *)ctx) return -1;
  out[0] = (double)i, out[1] = (double)i + 0.5;
  return 0;
}

static void rows_body(nh_writer *w, hid_t g, const void *ctx) {
  nh_w_dim(w, "row", 3);
  nh_w_dim(w, "col", 2);
  nh_w_f64_rows(w, g, "by_rows", "row,col", 1, rows_until, ctx, "1", "three rows");
}

/* The file written by body with its callback never failing (written), then failing on the second
 * row or run: no file, -1 and `message`. */
static void fails_on_the_second(void (*body)(nh_writer *, hid_t, const void *), const char *tag, const char *message) {
  nh_study st;
  const nh_observable *obs[1];
  minimal_study(&st, obs);
  char path[128], err[1024] = "";
  file_path(path, sizeof path, tag);
  const long long never = -1, second = 1;
  cr_assert_eq(nh_w_file(path, &st, body, &never, "test", err, sizeof err), 0, "%s", err);
  remove(path);
  const int rc = nh_w_file(path, &st, body, &second, "test", err, sizeof err);
  expect_file_failed(rc, path, err, message);
}

Test(writer, row_callback_failure_fails_the_file) {
  fails_on_the_second(rows_body, "rows", "cannot read back the rows of dataset by_rows");
}

/* ---- a streamed run's observables ---------------------------------------------------------- */

enum { RUNS = 2, SAMPLES = 3 };

/* Run `run`'s [sample][row] block (one component per row); run `fail_at` cannot be read back. */
static int fetch_until(const void *ctx, long long run, double *out) {
  if (run == *(const long long *)ctx) return -1;
  for (int k = 0; k < SAMPLES; k++) out[k] = (double)(10 * run + k);
  return 0;
}

static void observables_body(nh_writer *w, hid_t g, const void *ctx) {
  int width[1] = {1}, offset[1] = {0};
  const char *absent[1] = {NULL};
  const nh_samples s = {.nobs = 1, .row = 1, .width = width, .offset = offset, .absent = absent,
                        .fetch = fetch_until, .fetch_ctx = ctx};
  nh_w_dim(w, "method", 1);
  nh_w_dim(w, "ic", RUNS);
  nh_w_dim(w, "sample", SAMPLES);
  nh_w_observables(w, g, "method,ic", RUNS, SAMPLES, &s);
}

Test(writer, streamed_observable_fetch_failure_fails_the_file) {
  fails_on_the_second(observables_body, "fetch", "cannot read back the rows of dataset energy");
}

/* nh_w_columns writes a kind's columns with their descriptors' attributes, the coordinates first so
 * that the others attach to them; scratch, apart and absent columns are not written; a column asked
 * for by a name the table lacks fails the write, naming it. */
typedef struct {
  double *x, *t, *s;
  int *n;
} toy;
static int never(const nh_study *st) { return st == NULL; }
static const nh_column_condition never_held = {never, "never"};
Test(writer, columns_from_their_descriptors) {
  static const nh_result_column cols[] = {
      {"x", "sample", NH_COLUMN_F64, offsetof(toy, x), 0, NULL, "as q", "the x column"},
      {"t", "sample", NH_COLUMN_F64, offsetof(toy, t), NH_COLUMN_SCALE, NULL, "time", "the times"},
      {"n", "sample", NH_COLUMN_I32, offsetof(toy, n), NH_COLUMN_SCRATCH, NULL, "1", "not written"},
      {"s", "sample", NH_COLUMN_F64, offsetof(toy, s), NH_COLUMN_APART, NULL, "1", "written apart"},
      {NULL}};
  static const nh_result_column absent[] = {
      {"a", "sample", NH_COLUMN_F64, offsetof(toy, x), 0, &never_held, "1", "absent"}, {NULL}};
  double x[3] = {1, 2, 3}, t[3] = {0, 0.5, 1}, s[3] = {0};
  int n[3] = {0};
  toy r = {x, t, s, n};
  const nh_study st = {0};
  wfx f;
  wfx_open(&f, "columns");
  f.w.st = &st;
  nh_w_dim(&f.w, "sample", 3);
  nh_w_columns(&f.w, f.file, cols, &r);
  nh_w_columns(&f.w, f.file, absent, &r);
  cr_assert(!f.w.failed, "%s", f.w.err);
  cr_expect(H5Lexists(f.file, "x", H5P_DEFAULT) > 0 && H5Lexists(f.file, "t", H5P_DEFAULT) > 0);
  cr_expect(H5Lexists(f.file, "n", H5P_DEFAULT) == 0 && H5Lexists(f.file, "s", H5P_DEFAULT) == 0 &&
            H5Lexists(f.file, "a", H5P_DEFAULT) == 0);
  expect_attr_str(f.file, "x", "units", "as q");
  expect_attr_str(f.file, "x", "description", "the x column");
  expect_attr_str(f.file, "x", "dimensions", "sample");
  hid_t ds = H5Dopen2(f.file, "x", H5P_DEFAULT), sc = H5Dopen2(f.file, "t", H5P_DEFAULT);
  cr_expect_eq(H5DSis_attached(ds, sc, 0), 1, "x hangs on its coordinate t, written before it");
  double back[3];
  cr_expect_geq(H5Dread(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, back), 0);
  cr_expect(back[0] == 1 && back[1] == 2 && back[2] == 3);
  H5Dclose(ds), H5Dclose(sc);
  nh_w_column_rows(&f.w, f.file, cols, "y", 1, NULL, NULL);
  expect_err(&f.w, "no column y in the kind's table");
  wfx_close(&f);
}
