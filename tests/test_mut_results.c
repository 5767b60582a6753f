/* results/: the writer's building blocks (results/writer.h) driven directly, each result read back
 * with the HDF5 API and compared with what was written or with the documented rule; checks added
 * for mutation robustness (issue 16). */
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <hdf5.h>
#include <hdf5_hl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "results/reader.h"
#include "results/writer.h"
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
  cr_expect_lt(nh_w_group(&x.w, x.file, "later", "after the failure"), 0, "a group id from a failed writer");
  cr_expect_eq(H5Lexists(x.file, "later", H5P_DEFAULT), 0, "a group made after a failure");
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

/* ---- the attribute reader (results/read_attr.c) on a real results file with attributes added by
 * the HDF5 API: every value known from what the test wrote. */

Test(mut_results, attribute_reader_by_hand) {
  char path[128], cmd[512];
  snprintf(path, sizeof path, "/tmp/nhbench-mut-results-%d-attr.h5", (int)getpid());
  snprintf(cmd, sizeof cmd, "%s run %s/tests/data/convergence_norms.cfg -o %s >/dev/null 2>&1", NHBENCH_EXE,
           NHBENCH_SOURCE_DIR, path);
  cr_assert_eq(system(cmd), 0, "%s", cmd);
  hid_t file = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  cr_assert_geq(file, 0);
  /* Fixed-length strings, 5 bytes each, one padded with NULs: "ab", "cdefg", "". */
  hid_t t = H5Tcopy(H5T_C_S1);
  H5Tset_size(t, 5);
  hsize_t three = 3;
  hid_t sp = H5Screate_simple(1, &three, NULL);
  hid_t a = H5Acreate2(file, "fixed3", t, sp, H5P_DEFAULT, H5P_DEFAULT);
  H5Awrite(a, t, "ab\0\0\0cdefg\0\0\0\0\0");
  H5Aclose(a), H5Sclose(sp), H5Tclose(t);
  const double two[2] = {0.5, -3};
  H5LTset_attribute_double(file, "/", "two", two, 2);
  const int one = 7;
  H5LTset_attribute_int(file, "/", "one_int", &one, 1);
  H5Fclose(file);

  nh_h5 f;
  cr_assert_eq(nh_h5_open(&f, "test", path), 0);
  int n = 0;
  char **s = nh_h5_attr_strings(&f, "/", "fixed3", &n);
  cr_assert_not_null(s);
  cr_assert_eq(n, 3);
  cr_expect(strcmp(s[0], "ab") == 0 && strcmp(s[1], "cdefg") == 0 && strcmp(s[2], "") == 0, "'%s' '%s' '%s'", s[0],
            s[1], s[2]);
  nh_h5_free_strings(s, n);
  double *d = nh_h5_attr_doubles(&f, "/", "two", &n);
  cr_assert_not_null(d);
  cr_expect(n == 2 && d[0] == 0.5 && d[1] == -3, "%d values", n);
  free(d);
  d = nh_h5_attr_doubles(&f, "/", "one_int", &n); /* integers read as doubles */
  cr_expect(d && n == 1 && d[0] == 7.0);
  free(d);
  double x = 0;
  long long ll = 0;
  cr_expect_eq(nh_h5_attr_double(&f, "/", "one_int", &x), 0);
  cr_expect_eq(x, 7.0);
  cr_expect_eq(nh_h5_attr_ll(&f, "/", "one_int", &ll), 0);
  cr_expect_eq(ll, 7);
  cr_expect_eq(nh_h5_attr_is_string(&f, "/", "fixed3"), 1);
  cr_expect_eq(nh_h5_attr_is_string(&f, "/", "two"), 0);
  cr_expect_eq(nh_h5_attr_is_string(&f, "/", "absent"), 0);
  cr_expect_eq(nh_h5_has_attr(&f, "/", "two"), 1);
  cr_expect_eq(nh_h5_has_attr(&f, "no_such_object", "two"), 0);

  /* The refusals, each with its message naming the attribute and its object. */
  int saved;
  char err[4096];
  FILE *cap = test_capture_stderr(&saved);
  const int r1 = nh_h5_attr_double(&f, "/", "two", &x);        /* two values */
  const int r2 = nh_h5_attr_int(&f, "/", "absent", &(int){0}); /* missing */
  char *r3 = nh_h5_attr_string(&f, "/", "fixed3");              /* three strings */
  char **r4 = nh_h5_attr_strings(&f, "/", "two", &n);           /* numbers */
  double *r5 = nh_h5_attr_doubles(&f, "/", "fixed3", &n);       /* text */
  test_restore_stderr(cap, saved, err, sizeof err);
  cr_expect(r1 == -1 && r2 == -1 && !r3 && !r4 && !r5, "%d %d %p %p %p", r1, r2, (void *)r3, (void *)r4, (void *)r5);
  static const char *const needles[] = {"attribute 'two' of / is not a single number",
                                        "missing attribute 'absent' of /",
                                        "attribute 'fixed3' of / is not a single string",
                                        "attribute 'two' of / is not text",
                                        "attribute 'fixed3' of / is not numeric"};
  for (int i = 0; i < 5; i++) cr_expect(strstr(err, needles[i]) != NULL, "'%s' not in:\n%s", needles[i], err);
  /* Where a group-relative object is: under the study group. */
  char where[64];
  cr_expect_str_eq(nh_r_where(&f, ".", where, sizeof where), "/convergence");
  cr_expect_str_eq(nh_r_where(&f, "summary", where, sizeof where), "/convergence/summary");
  cr_expect_str_eq(nh_r_where(&f, "/x", where, sizeof where), "/x");
  nh_h5_close(&f);
  remove(path);
}

/* nh_h5_fmt: NaN and the infinities by name, else the shortest of 15 to 17 digits that reads
 * back exactly. */
Test(mut_results, h5_fmt_by_hand) {
  char b[64];
  cr_expect_str_eq(nh_h5_fmt(b, sizeof b, NAN), "NaN");
  cr_expect_str_eq(nh_h5_fmt(b, sizeof b, INFINITY), "Inf");
  cr_expect_str_eq(nh_h5_fmt(b, sizeof b, -INFINITY), "-Inf");
  cr_expect_str_eq(nh_h5_fmt(b, sizeof b, 0.1), "0.1");
  /* 1/3: 15 digits do not read back (checked here), the text given does, and has 16 or 17. */
  char b15[64];
  snprintf(b15, sizeof b15, "%.15g", 1.0 / 3);
  cr_assert(strtod(b15, NULL) != 1.0 / 3);
  nh_h5_fmt(b, sizeof b, 1.0 / 3);
  cr_expect(strtod(b, NULL) == 1.0 / 3 && (strlen(b) == 18 || strlen(b) == 19), "1/3 as %s", b);
  cr_expect_str_eq(nh_h5_fmt(b, sizeof b, 0.1 + 0.2), "0.30000000000000004");
  /* The shortest starts at 15 digits: 1e23 reads back from "1e+23", while 16 digits give
   * 9.999999999999999e+22 (the double nearest 1e23 is 9.99999999999999916e22). */
  cr_expect_str_eq(nh_h5_fmt(b, sizeof b, 1e23), "1e+23");
}

/* The observables of a study written without their samples: values and fetch both unset, or
 * width, offset or absent unset, each refused by name before anything is read. */
Test(mut_results, observables_without_their_samples_are_refused) {
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
Test(mut_results, opening_leaves_no_descriptor_open) {
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
