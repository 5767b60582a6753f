/* results/ reader (read.c, read_attr.c, read_parts.c) on files built object by object with the HDF5
 * API in the test: every value read back is one the test wrote, and every refusal is checked by
 * its return value and its whole stderr (one line naming the program, the file and the object, and
 * nothing else). Issue 16: mutation robustness. */
#include <criterion/criterion.h>
#include <hdf5.h>
#include <hdf5_hl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "results/reader.h"
#include "results/results.h"
#include "tests/helpers.h"

/* ---- building files ------------------------------------------------------------------------- */

#define NOVERSION (-99999)

static void fx_path(char *buf, size_t len, const char *tag) {
  snprintf(buf, len, "/tmp/nhbench-mut2-results-%d-%s.h5", (int)getpid(), tag);
}

static hid_t vlen_type(void) {
  hid_t t = H5Tcopy(H5T_C_S1);
  H5Tset_size(t, H5T_VARIABLE);
  H5Tset_cset(t, H5T_CSET_UTF8);
  return t;
}

/* A scalar variable-length string attribute, as the writer stores them. */
static void put_attr_str(hid_t loc, const char *obj, const char *name, const char *value) {
  hid_t o = H5Oopen(loc, obj, H5P_DEFAULT), t = vlen_type(), s = H5Screate(H5S_SCALAR);
  cr_assert_geq(o, 0, "object %s", obj);
  hid_t a = H5Acreate2(o, name, t, s, H5P_DEFAULT, H5P_DEFAULT);
  cr_assert_geq(H5Awrite(a, t, &value), 0);
  H5Aclose(a), H5Sclose(s), H5Tclose(t), H5Oclose(o);
}

/* A 1-D variable-length string attribute of n entries. */
static void put_attr_strs(hid_t loc, const char *obj, const char *name, hsize_t n, const char *const *v) {
  hid_t o = H5Oopen(loc, obj, H5P_DEFAULT), t = vlen_type(), s = H5Screate_simple(1, &n, NULL);
  cr_assert_geq(o, 0, "object %s", obj);
  hid_t a = H5Acreate2(o, name, t, s, H5P_DEFAULT, H5P_DEFAULT);
  cr_assert_geq(a, 0);
  if (n) cr_assert_geq(H5Awrite(a, t, v), 0);
  H5Aclose(a), H5Sclose(s), H5Tclose(t), H5Oclose(o);
}

static void put_attr_int(hid_t loc, const char *obj, const char *name, int v) {
  cr_assert_geq(H5LTset_attribute_int(loc, obj, name, &v, 1), 0);
}

static void set_dims(hid_t loc, const char *name, const char *dims) {
  if (dims) put_attr_str(loc, name, "dimensions", dims);
}

static void put_ds(hid_t loc, const char *name, const char *dims, int rank, const hsize_t *shape, hid_t ftype,
                   hid_t mtype, const void *data) {
  hid_t s = H5Screate_simple(rank, shape, NULL);
  hid_t d = H5Dcreate2(loc, name, ftype, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  cr_assert_geq(d, 0, "dataset %s", name);
  hsize_t n = 1;
  for (int i = 0; i < rank; i++) n *= shape[i];
  if (n && data) cr_assert_geq(H5Dwrite(d, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), 0);
  H5Dclose(d), H5Sclose(s);
  set_dims(loc, name, dims);
}

static void put_f64(hid_t loc, const char *name, const char *dims, int rank, const hsize_t *shape, const double *v) {
  put_ds(loc, name, dims, rank, shape, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, v);
}

static void put_i32(hid_t loc, const char *name, const char *dims, int rank, const hsize_t *shape, const int *v) {
  put_ds(loc, name, dims, rank, shape, H5T_STD_I32LE, H5T_NATIVE_INT, v);
}

static void put_strs(hid_t loc, const char *name, const char *dims, hsize_t n, const char *const *v) {
  hid_t t = vlen_type();
  put_ds(loc, name, dims, 1, &n, t, t, v);
  H5Tclose(t);
}

/* A file with the root attributes schema_version (unless NOVERSION) and study (unless NULL). */
static hid_t fx_root(const char *path, int version, const char *study) {
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL); /* failures below are expected and checked */
  hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  cr_assert_geq(f, 0, "cannot create %s", path);
  if (version != NOVERSION) put_attr_int(f, "/", "schema_version", version);
  if (study) put_attr_str(f, "/", "study", study);
  return f;
}

/* The smallest readable results file of `kind`: methods "m0", "m1" (primary 1, 0). The study group
 * is returned open in *g; the caller adds to it and closes both. */
static hid_t fx_valid(const char *path, const char *kind, hid_t *g) {
  hid_t f = fx_root(path, 2, kind);
  *g = H5Gcreate2(f, kind, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  const char *const m[2] = {"m0", "m1"};
  put_strs(*g, "methods", "method", 2, m);
  const hsize_t two = 2;
  put_i32(*g, "primary", "method", 1, &two, (const int[]){1, 0});
  return f;
}

static void fx_close(hid_t f, hid_t g) {
  if (g >= 0) H5Gclose(g);
  H5Fclose(f);
}

/* ---- stderr --------------------------------------------------------------------------------- */

static char said[16384];

#define CAPTURE(stmt)                                                                                                 \
  do {                                                                                                                \
    int saved_;                                                                                                       \
    FILE *t_ = test_capture_stderr(&saved_);                                                                          \
    stmt;                                                                                                             \
    test_restore_stderr(t_, saved_, said, sizeof said);                                                               \
  } while (0)

/* stderr was exactly "test: PATH: MSG\n" (MSG NULL: nothing at all). */
static void expect_said(const char *path, const char *msg) {
  char want[4096] = "";
  if (msg) snprintf(want, sizeof want, "test: %s: %s\n", path, msg);
  cr_expect_str_eq(said, want, "stderr:\n%s\nwant:\n%s", said, want);
}

/* nh_h5_open refuses path with exactly msg, and leaves f closed and empty. */
static void expect_open_refused(const char *path, const char *msg) {
  nh_h5 f;
  int rc = 0;
  CAPTURE(rc = nh_h5_open(&f, "test", path));
  cr_expect_eq(rc, -1, "%s: nh_h5_open returned %d", path, rc);
  expect_said(path, msg);
  cr_expect(f.file == -1 && f.group == -1 && f.methods == NULL && f.primary == NULL && f.nmethods == 0,
            "after a refusal: file %lld group %lld nmethods %d", (long long)f.file, (long long)f.group, f.nmethods);
  if (rc == 0) nh_h5_close(&f);
}

static void open_ok(nh_h5 *f, const char *path) {
  int rc = -1;
  CAPTURE(rc = nh_h5_open(f, "test", path));
  cr_assert_eq(rc, 0, "cannot open %s: %s", path, said);
  expect_said(path, NULL);
}

/* ---- opening -------------------------------------------------------------------------------- */

Test(reader, open_refusals_each_with_its_one_line) {
  char p[128], msg[512];
  fx_path(p, sizeof p, "open");
  hid_t f, g;
  remove(p);
  expect_open_refused(p, "No such file or directory");
  expect_open_refused("/tmp", "is a directory, not a results file");
  FILE *t = fopen(p, "w");
  fputs("not hdf5\n", t);
  fclose(t);
  expect_open_refused(p, "not an HDF5 file");

  /* No schema_version: a foreign file, or version 1 (root attribute study, or its groups). */
  fx_close(fx_root(p, NOVERSION, NULL), -1);
  expect_open_refused(p, "not an nhbench results file (no root attributes 'study' and 'schema_version')");
  f = fx_root(p, NOVERSION, NULL);
  H5Gclose(H5Gcreate2(f, "trajectory", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  fx_close(f, -1);
  expect_open_refused(p, "not an nhbench results file (no root attributes 'study' and 'schema_version')");
  static const char old_spec[] = "written with results schema version 1 by an older nhbench; re-run the study "
                                 "(`nhbench run SPEC`) to get version 3";
  for (int k = 0; k < 2; k++) {
    f = fx_root(p, NOVERSION, NULL);
    H5Gclose(H5Gcreate2(f, k ? "ensemble" : "convergence", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    fx_close(f, -1);
    expect_open_refused(p, old_spec);
  }
  f = fx_root(p, NOVERSION, "convergence");
  put_attr_str(f, "/", "spec_file", "studies/a.cfg");
  fx_close(f, -1);
  expect_open_refused(p, "written with results schema version 1 by an older nhbench; re-run the study "
                         "(`nhbench run studies/a.cfg`) to get version 3");
  f = fx_root(p, 1, "convergence");
  put_attr_str(f, "/", "spec_file", ""); /* empty: the placeholder */
  fx_close(f, -1);
  expect_open_refused(p, old_spec);

  /* Versions other than 2 and 3. */
  const int versions[] = {4, 0, -2};
  for (int i = 0; i < 3; i++) {
    fx_close(fx_root(p, versions[i], "convergence"), -1);
    snprintf(msg, sizeof msg, "results schema version %d%s; this nhbench reads versions 2 to 3", versions[i],
             versions[i] > 3 ? " (written by a newer nhbench)" : "");
    expect_open_refused(p, msg);
  }
  f = fx_root(p, NOVERSION, "convergence");
  put_attr_str(f, "/", "schema_version", "2");
  fx_close(f, -1);
  expect_open_refused(p, "attribute 'schema_version' of / is not a single number");
  fx_close(fx_root(p, 2, NULL), -1);
  expect_open_refused(p, "missing root attribute 'study'");
  f = fx_root(p, 2, NULL);
  put_attr_int(f, "/", "study", 1);
  fx_close(f, -1);
  expect_open_refused(p, "attribute 'study' of / is not text");

  /* The study kind and its group. */
  fx_close(fx_root(p, 2, "convergences"), -1);
  expect_open_refused(p, "unknown study kind 'convergences'");
  for (int k = 0; k < NH_STUDY_KINDS; k++) {
    const char *kind = nh_study_kind_name((nh_study_kind)k);
    fx_close(fx_root(p, 2, kind), -1);
    snprintf(msg, sizeof msg, "missing group /%s: not a complete nhbench results file", kind);
    expect_open_refused(p, msg);
  }
  f = fx_root(p, 2, "onestep"); /* the name is there, but not a group */
  const hsize_t one = 1;
  put_f64(f, "onestep", NULL, 1, &one, (const double[]){1});
  fx_close(f, -1);
  expect_open_refused(p, "missing group /onestep: not a complete nhbench results file");

  /* methods and primary. */
  f = fx_root(p, 2, "ensemble");
  fx_close(f, H5Gcreate2(f, "ensemble", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  expect_open_refused(p, "missing dataset /ensemble/methods");
  f = fx_root(p, 2, "ensemble");
  g = H5Gcreate2(f, "ensemble", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  put_strs(g, "methods", "method", 0, NULL);
  fx_close(f, g);
  expect_open_refused(p, "no methods in /ensemble/methods");
  f = fx_root(p, 2, "ensemble");
  g = H5Gcreate2(f, "ensemble", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  put_strs(g, "methods", "method", 1, (const char *const[]){"rk4"});
  fx_close(f, g);
  expect_open_refused(p, "missing dataset /ensemble/primary");
  static const struct {
    int flags[3];
    int n;
    const char *msg;
  } bad[] = {
      {{1, 2}, 2, "/ensemble/primary[1] = 2: the flags are 0 or 1 (a damaged file?)"},
      {{-1, 0}, 2, "/ensemble/primary[0] = -1: the flags are 0 or 1 (a damaged file?)"},
      {{1, 0, 1}, 3, "dataset /ensemble/primary has 3 entries along dimension method, other datasets 2"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    f = fx_root(p, 2, "ensemble");
    g = H5Gcreate2(f, "ensemble", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    put_strs(g, "methods", "method", 2, (const char *const[]){"a", "b"});
    const hsize_t n = (hsize_t)bad[i].n;
    put_i32(g, "primary", "method", 1, &n, bad[i].flags);
    fx_close(f, g);
    expect_open_refused(p, bad[i].msg);
  }
  remove(p);
}

/* Every study kind opens: its kind, its group, its methods and primary flags, nothing said; closing
 * empties the handle. */
Test(reader, open_reads_every_kind) {
  char p[128];
  fx_path(p, sizeof p, "kinds");
  for (int k = 0; k < NH_STUDY_KINDS; k++) {
    const char *kind = nh_study_kind_name((nh_study_kind)k);
    hid_t g, f = fx_valid(p, kind, &g);
    fx_close(f, g);
    nh_h5 r;
    open_ok(&r, p);
    cr_expect_eq(r.kind, (nh_study_kind)k, "kind %s read as %d", kind, (int)r.kind);
    cr_expect_str_eq(r.kind_name, kind);
    cr_expect_str_eq(r.prog, "test");
    cr_expect_str_eq(r.path, p);
    cr_assert_eq(r.nmethods, 2);
    cr_expect_str_eq(r.methods[0], "m0");
    cr_expect_str_eq(r.methods[1], "m1");
    cr_expect(r.primary[0] == 1 && r.primary[1] == 0, "primary %d %d", r.primary[0], r.primary[1]);
    cr_expect(r.file >= 0 && r.group >= 0);
    char name[64] = "";
    H5Iget_name(r.group, name, sizeof name);
    cr_expect_eq(name[0], '/');
    cr_expect_str_eq(name + 1, kind, "the study group opened is %s", name);
    cr_expect_eq(nh_h5_dim(&r, "method"), 2);
    nh_h5_close(&r);
    cr_expect(r.file == -1 && r.group == -1 && r.methods == NULL && r.primary == NULL && r.nmethods == 0);
  }
  remove(p);
}

/* ---- datasets ------------------------------------------------------------------------------- */

Test(reader, datasets_read_back_and_refused_exactly) {
  char p[128];
  fx_path(p, sizeof p, "data");
  hid_t g, f = fx_valid(p, "convergence", &g);
  const hsize_t s23[2] = {2, 3}, s3[1] = {3}, s4[1] = {4}, s22[2] = {2, 2};
  const double x[6] = {1.5, -2.25, 3e-300, 4e300, -0.0, 6.125};
  const int ix[6] = {7, -8, 2147483647, -2147483647 - 1, 0, 11};
  put_f64(g, "x", "method,h", 2, s23, x);
  put_i32(g, "ix", "method,h", 2, s23, ix);
  put_f64(g, "nodims", NULL, 1, s3, x);
  put_f64(g, "otherdims", "h", 1, s3, x);
  put_f64(g, "rank2", "h", 2, s23, x); /* dimensions name one, the data has two */
  put_f64(g, "h4", "h", 1, s4, x);
  put_f64(g, "m22", "method,method2", 2, s22, x);
  hsize_t s9[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  put_f64(g, "r8", "a,b,c,d,e,f,g,i", 8, s9, x);
  put_f64(g, "r9", "a,b,c,d,e,f,g,i,j", 9, s9, x);
  /* Records and strings where numbers belong. */
  hid_t ct = H5Tcreate(H5T_COMPOUND, sizeof(double));
  H5Tinsert(ct, "v", 0, H5T_NATIVE_DOUBLE);
  put_ds(g, "rec", "h", 1, s3, ct, ct, x);
  H5Tclose(ct);
  put_strs(g, "words", "h", 3, (const char *const[]){"a", "bb", ""});
  fx_close(f, g);

  nh_h5 r;
  open_ok(&r, p);
  hsize_t shape[8] = {0};
  double *d = NULL;
  int *iv = NULL;
  CAPTURE(d = nh_h5_doubles(&r, "x", "method,h", shape));
  expect_said(p, NULL);
  cr_assert_not_null(d);
  cr_expect(shape[0] == 2 && shape[1] == 3, "shape %llu %llu", (unsigned long long)shape[0],
            (unsigned long long)shape[1]);
  cr_expect(memcmp(d, x, sizeof x) == 0, "x differs from what was written");
  free(d);
  CAPTURE(iv = nh_h5_ints(&r, "ix", "method,h", NULL));
  expect_said(p, NULL);
  cr_assert_not_null(iv);
  cr_expect(memcmp(iv, ix, sizeof ix) == 0, "ix differs from what was written");
  free(iv);
  cr_expect_eq(nh_h5_dim(&r, "h"), 3, "h learned from x");
  CAPTURE(d = nh_h5_doubles(&r, "r8", "a,b,c,d,e,f,g,i", shape));
  expect_said(p, NULL);
  cr_expect(d && d[0] == 1.5, "a rank-8 dataset is read");
  free(d);

  static const struct {
    const char *name, *dims, *msg;
    int ints;
  } refused[] = {
      {"nope", "h", "missing dataset /convergence/nope", 0},
      {"nodims", "h", "dataset /convergence/nodims has dimensions '(no 'dimensions' attribute)', expected 'h'", 0},
      {"otherdims", "method", "dataset /convergence/otherdims has dimensions 'h', expected 'method'", 0},
      {"rank2", "h", "dataset /convergence/rank2 has rank 2, but its dimensions are 'h'", 0},
      {"h4", "h", "dataset /convergence/h4 has 4 entries along dimension h, other datasets 3", 0},
      {"r9", "a,b,c,d,e,f,g,i,j", "cannot read dataset /convergence/r9", 0},
      {"x", "method,h", "dataset /convergence/x holds floating-point numbers, expected integers", 1},
      {"ix", "method,h", "dataset /convergence/ix holds integers, expected floating-point numbers", 0},
      {"rec", "h", "dataset /convergence/rec holds records, expected floating-point numbers", 0},
      {"words", "h", "dataset /convergence/words holds something else, expected floating-point numbers", 0},
  };
  for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
    void *v = NULL;
    if (refused[i].ints) CAPTURE(v = nh_h5_ints(&r, refused[i].name, refused[i].dims, NULL));
    else CAPTURE(v = nh_h5_doubles(&r, refused[i].name, refused[i].dims, NULL));
    cr_expect_null(v, "%s read", refused[i].name);
    expect_said(p, refused[i].msg);
    free(v);
  }
  CAPTURE(d = nh_h5_doubles(&r, "m22", "method,method2", NULL));
  expect_said(p, NULL);
  cr_expect(d && d[3] == x[3]);
  free(d);
  nh_cost *c = NULL;
  CAPTURE(c = nh_h5_costs(&r, "x", "method,h", NULL));
  cr_expect_null(c);
  expect_said(p, "dataset /convergence/x holds floating-point numbers, expected records");
  /* A dimension is learned only from a dataset that was accepted. */
  cr_expect_eq(nh_h5_dim(&r, "a"), 1);
  CAPTURE(cr_expect_eq(nh_h5_dim(&r, "j"), -1));
  expect_said(p, "cannot tell the size of dimension 'j'");
  nh_h5_close(&r);
  remove(p);
}

/* Slices: the trailing dimensions at fixed leading indices, in C order; an index outside its
 * dimension (either side) refused naming it; more indices than dimensions refused. */
Test(reader, doubles_at_slices) {
  char p[128];
  fx_path(p, sizeof p, "slices");
  hid_t g, f = fx_valid(p, "onestep", &g);
  double v[24];
  for (int i = 0; i < 24; i++) v[i] = 100 + i + 0.5;
  const hsize_t s[3] = {2, 3, 4};
  put_f64(g, "c3", "method,h,point", 3, s, v);
  fx_close(f, g);
  nh_h5 r;
  open_ok(&r, p);
  hsize_t shape[3] = {0};
  double *d = NULL;
  CAPTURE(d = nh_h5_doubles_at(&r, "c3", "method,h,point", 1, (const long long[]){1}, shape));
  expect_said(p, NULL);
  cr_assert_not_null(d);
  cr_expect(shape[0] == 2 && shape[1] == 3 && shape[2] == 4, "the full shape");
  for (int i = 0; i < 12; i++) cr_expect_eq(d[i], v[12 + i], "[1][%d]", i);
  free(d);
  CAPTURE(d = nh_h5_doubles_at(&r, "c3", "method,h,point", 2, (const long long[]){0, 2}, NULL));
  expect_said(p, NULL);
  cr_assert_not_null(d);
  for (int i = 0; i < 4; i++) cr_expect_eq(d[i], v[8 + i], "[0][2][%d]", i);
  free(d);
  CAPTURE(d = nh_h5_doubles_at(&r, "c3", "method,h,point", 3, (const long long[]){1, 1, 3}, NULL));
  expect_said(p, NULL);
  cr_expect(d && d[0] == v[12 + 4 + 3]);
  free(d);
  static const struct {
    int nfixed;
    long long index[4];
    const char *msg;
  } bad[] = {
      {1, {2}, "dataset /onestep/c3 has no index 2 along dimension 0"},
      {1, {-1}, "dataset /onestep/c3 has no index -1 along dimension 0"},
      {2, {1, 3}, "dataset /onestep/c3 has no index 3 along dimension 1"},
      {3, {0, 0, 4}, "dataset /onestep/c3 has no index 4 along dimension 2"},
      {4, {0, 0, 0, 0}, "dataset /onestep/c3 has rank 3, fewer than the 4 indices given"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    CAPTURE(d = nh_h5_doubles_at(&r, "c3", "method,h,point", bad[i].nfixed, bad[i].index, NULL));
    cr_expect_null(d, "case %zu", i);
    expect_said(p, bad[i].msg);
    free(d);
  }
  nh_h5_close(&r);
  remove(p);
}

/* Dimension sizes: learned from each accepted dataset, except `component` (each observable has its
 * own); at most NH_H5_MAX_DIMS of them are remembered; nh_h5_dim finds the others' sizes in their
 * coordinate datasets. */
Test(reader, dimensions_learned_and_looked_up) {
  char p[128];
  fx_path(p, sizeof p, "dims");
  hid_t g, f = fx_valid(p, "trajectory", &g);
  const double z[16] = {0};
  const hsize_t s21[2] = {2, 1}, s23[2] = {2, 3}, one[8] = {1, 1, 1, 1, 1, 1, 1, 1}, two = 2;
  put_f64(g, "obs1", "method,component", 2, s21, z);
  put_f64(g, "obs3", "method,component", 2, s23, z);
  char dims[128], name[16];
  for (int k = 0; k < 4; k++) { /* d1 .. d32, 8 per dataset */
    snprintf(dims, sizeof dims, "d%d,d%d,d%d,d%d,d%d,d%d,d%d,d%d", 8 * k + 1, 8 * k + 2, 8 * k + 3, 8 * k + 4,
             8 * k + 5, 8 * k + 6, 8 * k + 7, 8 * k + 8);
    snprintf(name, sizeof name, "block%d", k);
    put_f64(g, name, dims, 8, one, z);
  }
  put_f64(g, "d31x2", "d31", 1, &two, z);
  put_f64(g, "d32x2", "d32", 1, &two, z);
  fx_close(f, g);
  nh_h5 r;
  open_ok(&r, p);
  double *d = NULL;
  CAPTURE(d = nh_h5_doubles(&r, "obs1", "method,component", NULL));
  cr_expect_not_null(d);
  free(d);
  CAPTURE(d = nh_h5_doubles(&r, "obs3", "method,component", NULL));
  cr_expect_not_null(d, "a second observable with another width: %s", said);
  free(d);
  CAPTURE(cr_expect_eq(nh_h5_dim(&r, "component"), -1));
  expect_said(p, "cannot tell the size of dimension 'component'");
  /* method is known (1), d1 .. d31 fill the table (32); d32 is not remembered. */
  for (int k = 0; k < 4; k++) {
    snprintf(dims, sizeof dims, "d%d,d%d,d%d,d%d,d%d,d%d,d%d,d%d", 8 * k + 1, 8 * k + 2, 8 * k + 3, 8 * k + 4,
             8 * k + 5, 8 * k + 6, 8 * k + 7, 8 * k + 8);
    snprintf(name, sizeof name, "block%d", k);
    CAPTURE(d = nh_h5_doubles(&r, name, dims, NULL));
    cr_expect_not_null(d, "%s: %s", name, said);
    free(d);
  }
  cr_expect_eq(r.ndims, NH_H5_MAX_DIMS);
  CAPTURE(d = nh_h5_doubles(&r, "d31x2", "d31", NULL));
  cr_expect_null(d);
  expect_said(p, "dataset /trajectory/d31x2 has 2 entries along dimension d31, other datasets 1");
  free(d);
  CAPTURE(d = nh_h5_doubles(&r, "d32x2", "d32", NULL));
  cr_expect_not_null(d, "d32 was not remembered: %s", said);
  free(d);
  nh_h5_close(&r);

  /* Coordinate datasets. */
  f = fx_valid(p, "work_precision", &g);
  const hsize_t s3 = 3, s4 = 4, s5 = 5, s9 = 9, s27[2] = {2, 7}, s238[3] = {2, 3, 8}, s10 = 10;
  double big[64] = {0};
  put_f64(g, "h", "h", 1, &s3, big);
  put_strs(g, "ic_names", "ic", 2, (const char *const[]){"a", "b"});
  put_strs(g, "state_labels", "state", 4, (const char *const[]){"q[0]", "q[1]", "v[0]", "v[1]"});
  put_f64(g, "point_t", "point", 1, &s5, big);
  put_strs(g, "norms", "norm", 6, (const char *const[]){"a", "b", "c", "d", "e", "f"});
  put_f64(g, "q0", "ic,dof", 2, s27, big);
  put_f64(g, "wall_times", "method,h,repeat", 3, s238, big);
  put_f64(g, "t", "sample", 1, &s9, big);
  put_f64(g, "lambda", "multiplier", 1, &s10, big);
  put_f64(g, "undescribed", NULL, 1, &s4, big);
  fx_close(f, g);
  open_ok(&r, p);
  static const struct {
    const char *dim;
    long long size;
  } coord[] = {{"method", 2}, {"state", 4}, {"point", 5}, {"norm", 6},   {"dof", 7},
               {"ic", 2},     {"repeat", 8}, {"h", 3},    {"sample", 9}, {"multiplier", 10}};
  for (size_t i = 0; i < sizeof coord / sizeof *coord; i++) {
    long long n = 0;
    CAPTURE(n = nh_h5_dim(&r, coord[i].dim));
    cr_expect_eq(n, coord[i].size, "dimension %s: %lld", coord[i].dim, n);
    expect_said(p, NULL);
  }
  CAPTURE(cr_expect_eq(nh_h5_dim(&r, "value0"), -1));
  expect_said(p, "cannot tell the size of dimension 'value0'");
  nh_h5_close(&r);
  /* A coordinate dataset that is missing, or has no dimensions attribute. */
  f = fx_valid(p, "work_precision", &g);
  put_f64(g, "h", NULL, 1, &s3, big);
  fx_close(f, g);
  open_ok(&r, p);
  CAPTURE(cr_expect_eq(nh_h5_dim(&r, "h"), -1));
  expect_said(p, "cannot tell the size of dimension 'h'");
  CAPTURE(cr_expect_eq(nh_h5_dim(&r, "sample"), -1));
  expect_said(p, "cannot tell the size of dimension 'sample'");
  nh_h5_close(&r);
  remove(p);
}

/* A damaged file may declare more values than it stores: up to 1 MiB plus 2000 bytes per stored
 * byte is read, one value more is refused before anything is allocated. */
static void chunked(hid_t g, const char *name, hsize_t n, hsize_t chunk, int write_first) {
  hid_t s = H5Screate_simple(1, &n, NULL), pl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(pl, 1, &chunk);
  hid_t d = H5Dcreate2(g, name, H5T_IEEE_F64LE, s, H5P_DEFAULT, pl, H5P_DEFAULT);
  cr_assert_geq(d, 0);
  if (write_first) {
    double v[100];
    for (int i = 0; i < 100; i++) v[i] = i + 0.25;
    hsize_t start = 0, count = chunk;
    hid_t ms = H5Screate_simple(1, &count, NULL);
    H5Sselect_hyperslab(s, H5S_SELECT_SET, &start, NULL, &count, NULL);
    cr_assert_geq(H5Dwrite(d, H5T_NATIVE_DOUBLE, ms, s, H5P_DEFAULT, v), 0);
    H5Sclose(ms);
  }
  H5Dclose(d), H5Pclose(pl), H5Sclose(s);
  set_dims(g, name, name);
}

Test(reader, declared_size_bounds) {
  char p[128];
  fx_path(p, sizeof p, "sizes");
  hid_t g, f = fx_valid(p, "ensemble", &g);
  /* Nothing stored: 2^20 bytes = 131072 doubles at most. */
  chunked(g, "e131072", 131072, 1024, 0);
  chunked(g, "e131073", 131073, 1024, 0);
  /* One chunk of 100 doubles stored (800 bytes): 2^20 + 2000 * 800 bytes = 331072 doubles. */
  chunked(g, "s331072", 331072, 100, 1);
  chunked(g, "s331073", 331073, 100, 1);
  fx_close(f, g);
  nh_h5 r;
  open_ok(&r, p);
  hid_t ds = H5Dopen2(r.group, "s331073", H5P_DEFAULT);
  cr_assert_eq(H5Dget_storage_size(ds), 800, "precondition: one chunk stored");
  H5Dclose(ds);
  double *d = NULL;
  CAPTURE(d = nh_h5_doubles(&r, "e131072", "e131072", NULL));
  expect_said(p, NULL);
  cr_expect(d && d[0] == 0 && d[131071] == 0, "the fill value");
  free(d);
  CAPTURE(d = nh_h5_doubles(&r, "e131073", "e131073", NULL));
  cr_expect_null(d);
  expect_said(p, "dataset /ensemble/e131073 declares 131073 values but stores 0 bytes: a damaged file");
  free(d);
  CAPTURE(d = nh_h5_doubles(&r, "s331072", "s331072", NULL));
  expect_said(p, NULL);
  cr_expect(d && d[0] == 0.25 && d[99] == 99.25 && d[100] == 0 && d[331071] == 0, "stored chunk and fill");
  free(d);
  CAPTURE(d = nh_h5_doubles(&r, "s331073", "s331073", NULL));
  cr_expect_null(d);
  expect_said(p, "dataset /ensemble/s331073 declares 331073 values but stores 800 bytes: a damaged file");
  free(d);
  nh_h5_close(&r);
  remove(p);
}

/* String datasets: variable- and fixed-length (NUL padding dropped), empty lists, and refusals. */
Test(reader, string_datasets) {
  char p[128];
  fx_path(p, sizeof p, "strings");
  hid_t g, f = fx_valid(p, "convergence", &g);
  hid_t t = H5Tcopy(H5T_C_S1);
  H5Tset_size(t, 4);
  const hsize_t three = 3, s22[2] = {2, 2}, one = 1;
  put_ds(g, "fixed", "h", 1, &three, t, t, "ab\0\0cdefg\0\0\0");
  H5Tclose(t);
  put_strs(g, "none", "x", 0, NULL);
  put_strs(g, "h3", "h", 3, (const char *const[]){"u", "vv", "www"});
  hid_t vt = vlen_type();
  const char *grid[4] = {"a", "b", "c", "d"};
  put_ds(g, "grid", "r,c", 2, s22, vt, vt, grid);
  H5Tclose(vt);
  put_f64(g, "num", "y", 1, &one, (const double[]){1});
  fx_close(f, g);
  nh_h5 r;
  open_ok(&r, p);
  int n = -1;
  char **s = NULL;
  CAPTURE(s = nh_h5_strings(&r, "fixed", "h", &n));
  expect_said(p, NULL);
  cr_assert_not_null(s);
  cr_assert_eq(n, 3);
  cr_expect(strcmp(s[0], "ab") == 0 && strcmp(s[1], "cdef") == 0 && strcmp(s[2], "g") == 0, "'%s' '%s' '%s'", s[0],
            s[1], s[2]);
  cr_expect_null(s[3], "the list ends with NULL");
  nh_h5_free_strings(s, n);
  CAPTURE(s = nh_h5_strings(&r, "h3", "h", &n));
  cr_assert_not_null(s);
  cr_expect(n == 3 && strcmp(s[2], "www") == 0 && s[3] == NULL);
  nh_h5_free_strings(s, n);
  n = -1;
  CAPTURE(s = nh_h5_strings(&r, "none", "x", &n));
  expect_said(p, NULL);
  cr_expect_not_null(s);
  cr_expect_eq(n, 0);
  nh_h5_free_strings(s, n);
  n = 99;
  CAPTURE(s = nh_h5_strings(&r, "grid", "r,c", &n));
  cr_expect_null(s);
  expect_said(p, "dataset /convergence/grid is not a list of strings");
  CAPTURE(s = nh_h5_strings(&r, "num", "y", &n));
  cr_expect_null(s);
  expect_said(p, "dataset /convergence/num is not a list of strings");
  CAPTURE(s = nh_h5_strings(&r, "h3", "x", &n));
  cr_expect_null(s);
  expect_said(p, "dataset /convergence/h3 has dimensions 'h', expected 'x'");
  cr_expect_eq(n, 99, "count untouched by a refusal");
  /* nh_h5_has: datasets and groups, not missing paths or dangling links. */
  cr_expect_eq(nh_h5_has(&r, "h3"), 1);
  cr_expect_eq(nh_h5_has(&r, "nope"), 0);
  cr_expect_eq(nh_h5_has(&r, "nope/deeper"), 0);
  nh_h5_close(&r);
  f = H5Fopen(p, H5F_ACC_RDWR, H5P_DEFAULT);
  H5Lcreate_soft("/convergence/gone", f, "/convergence/dangling", H5P_DEFAULT, H5P_DEFAULT);
  H5Gclose(H5Gcreate2(f, "/convergence/sub", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  H5Fclose(f);
  open_ok(&r, p);
  cr_expect_eq(nh_h5_has(&r, "dangling"), 0);
  cr_expect_eq(nh_h5_has(&r, "sub"), 1);
  nh_h5_close(&r);
  remove(p);
}

/* ---- attributes ----------------------------------------------------------------------------- */

/* Every attribute reader on attributes the test wrote: values, counts, and each refusal as one
 * line naming the attribute and its object (a missing one is said once, not followed by another
 * complaint about what could not be opened). */
/* Attribute reader CALL (0 nh_h5_attr_strings, 1 _string, 2 _doubles, 3 _double, 4 _int, 5 _ll) on
 * attribute NM of O, its stderr captured: what it returned, a pointer as -1 when NULL (else 1). */
static int attr_reader(nh_h5 *r, int call, const char *o, const char *nm, double *x, int *i32, long long *ll) {
  int rc = 0, n = 1234;
  void *ptr = NULL;
  switch (call) {
    case 0: CAPTURE(ptr = nh_h5_attr_strings(r, o, nm, &n)); break;
    case 1: CAPTURE(ptr = nh_h5_attr_string(r, o, nm)); break;
    case 2: CAPTURE(ptr = nh_h5_attr_doubles(r, o, nm, &n)); break;
    case 3: CAPTURE(rc = nh_h5_attr_double(r, o, nm, x)); break;
    case 4: CAPTURE(rc = nh_h5_attr_int(r, o, nm, i32)); break;
    default: CAPTURE(rc = nh_h5_attr_ll(r, o, nm, ll)); break;
  }
  return call <= 2 ? (ptr ? 1 : -1) : rc;
}

Test(reader, attributes_read_back_and_refused_exactly) {
  char p[128];
  fx_path(p, sizeof p, "attrs");
  hid_t g, f = fx_valid(p, "ensemble", &g);
  H5Gclose(H5Gcreate2(g, "sub", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  put_attr_str(g, "sub", "s", "in a subgroup");
  put_attr_strs(g, ".", "three", 3, (const char *const[]){"x", "", "zz"});
  put_attr_strs(g, ".", "empty", 0, NULL);
  put_attr_str(g, ".", "one", "just one");
  const double two[2] = {0.5, -3};
  cr_assert_geq(H5LTset_attribute_double(g, ".", "two", two, 2), 0);
  cr_assert_geq(H5LTset_attribute_double(g, ".", "nodata", two, 0), 0);
  const long long big = 1099511627777LL; /* 2^40 + 1 */
  cr_assert_geq(H5LTset_attribute_long_long(g, ".", "big", &big, 1), 0);
  const double third = 1.0 / 3;
  cr_assert_geq(H5LTset_attribute_double(f, "/", "third", &third, 1), 0);
  put_attr_int(f, "/", "seven", -7);
  hid_t ct = H5Tcreate(H5T_COMPOUND, sizeof(double)), s1 = H5Screate(H5S_SCALAR);
  H5Tinsert(ct, "v", 0, H5T_NATIVE_DOUBLE);
  hid_t a = H5Acreate2(g, "record", ct, s1, H5P_DEFAULT, H5P_DEFAULT);
  H5Awrite(a, ct, &third);
  H5Aclose(a), H5Tclose(ct), H5Sclose(s1);
  fx_close(f, g);

  nh_h5 r;
  open_ok(&r, p);
  int n = -1;
  char **s = NULL, *one = NULL;
  double *d = NULL, x = 0;
  int i32 = 0;
  long long ll = 0;
  CAPTURE(s = nh_h5_attr_strings(&r, ".", "three", &n));
  expect_said(p, NULL);
  cr_assert_not_null(s);
  cr_assert_eq(n, 3);
  cr_expect(strcmp(s[0], "x") == 0 && strcmp(s[1], "") == 0 && strcmp(s[2], "zz") == 0 && s[3] == NULL);
  nh_h5_free_strings(s, n);
  CAPTURE(s = nh_h5_attr_strings(&r, ".", "empty", &n));
  expect_said(p, NULL);
  cr_expect(s != NULL && n == 0, "an empty list: %p, %d", (void *)s, n);
  nh_h5_free_strings(s, n);
  CAPTURE(one = nh_h5_attr_string(&r, "sub", "s"));
  expect_said(p, NULL);
  cr_expect_str_eq(one ? one : "(null)", "in a subgroup");
  free(one);
  CAPTURE(one = nh_h5_attr_string(&r, ".", "one"));
  cr_expect_str_eq(one ? one : "(null)", "just one");
  free(one);
  CAPTURE(d = nh_h5_attr_doubles(&r, ".", "two", &n));
  expect_said(p, NULL);
  cr_expect(d && n == 2 && d[0] == 0.5 && d[1] == -3);
  free(d);
  CAPTURE(d = nh_h5_attr_doubles(&r, ".", "nodata", &n));
  expect_said(p, NULL);
  cr_expect(d != NULL && n == 0, "no values: %p, %d", (void *)d, n);
  free(d);
  CAPTURE(cr_expect_eq(nh_h5_attr_ll(&r, ".", "big", &ll), 0));
  cr_expect_eq(ll, big);
  CAPTURE(cr_expect_eq(nh_h5_attr_double(&r, "/", "third", &x), 0));
  cr_expect_eq(x, third);
  CAPTURE(cr_expect_eq(nh_h5_attr_int(&r, "/", "seven", &i32), 0));
  cr_expect_eq(i32, -7);
  CAPTURE(cr_expect_eq(nh_h5_attr_double(&r, "/", "seven", &x), 0));
  cr_expect_eq(x, -7.0);
  expect_said(p, NULL);
  cr_expect_eq(nh_h5_attr_is_string(&r, ".", "one"), 1);
  cr_expect_eq(nh_h5_attr_is_string(&r, ".", "three"), 1);
  cr_expect_eq(nh_h5_attr_is_string(&r, ".", "two"), 0);
  cr_expect_eq(nh_h5_attr_is_string(&r, ".", "missing"), 0);
  cr_expect_eq(nh_h5_attr_is_string(&r, "nowhere", "one"), 0);
  cr_expect_eq(nh_h5_has_attr(&r, "sub", "s"), 1);
  cr_expect_eq(nh_h5_has_attr(&r, ".", "s"), 0);
  cr_expect_eq(nh_h5_has_attr(&r, "/", "seven"), 1);
  cr_expect_eq(nh_h5_has_attr(&r, "nowhere", "s"), 0);

  /* nh_r_attr_of: one string or NULL, and out of memory said apart from "none". */
  int no_memory = 7;
  char *v = nh_r_attr_of(r.group, "one", &no_memory);
  cr_expect_str_eq(v ? v : "(null)", "just one");
  cr_expect_eq(no_memory, 0);
  free(v);
  for (long k = 1; k <= 2; k++) { /* the raw buffer, then the copy */
    no_memory = 0;
    test_fail_allocation = k;
    v = nh_r_attr_of(r.group, "one", &no_memory);
    test_fail_allocation = 0;
    cr_expect(v == NULL && no_memory == 1, "allocation %ld failed: %s, no_memory %d", k, v ? v : "(null)", no_memory);
    free(v);
  }
  cr_expect_null(nh_r_attr_of(r.group, "three", &no_memory), "three strings are not one");
  cr_expect_null(nh_r_attr_of(r.group, "two", &no_memory), "numbers are not a string");
  cr_expect_null(nh_r_attr_of(r.group, "missing", &no_memory));
  cr_expect_eq(no_memory, 0, "none is not out of memory");

  static const struct {
    int call;
    const char *obj, *name, *msg;
  } refused[] = {
      {0, ".", "missing", "missing attribute 'missing' of /ensemble"},
      {0, "sub", "missing", "missing attribute 'missing' of /ensemble/sub"},
      {0, "nowhere", "s", "missing attribute 's' of /ensemble/nowhere"},
      {0, "/", "missing", "missing attribute 'missing' of /"},
      {0, ".", "two", "attribute 'two' of /ensemble is not text"},
      {1, ".", "three", "attribute 'three' of /ensemble is not a single string"},
      {1, ".", "empty", "attribute 'empty' of /ensemble is not a single string"},
      {1, ".", "missing", "missing attribute 'missing' of /ensemble"},
      {1, ".", "big", "attribute 'big' of /ensemble is not text"},
      {2, ".", "one", "attribute 'one' of /ensemble is not numeric"},
      {2, ".", "record", "attribute 'record' of /ensemble is not numeric"},
      {2, ".", "missing", "missing attribute 'missing' of /ensemble"},
      {3, ".", "two", "attribute 'two' of /ensemble is not a single number"},
      {3, ".", "nodata", "attribute 'nodata' of /ensemble is not a single number"},
      {3, ".", "one", "attribute 'one' of /ensemble is not a single number"},
      {3, ".", "record", "attribute 'record' of /ensemble is not a single number"},
      {3, ".", "missing", "missing attribute 'missing' of /ensemble"},
      {4, ".", "two", "attribute 'two' of /ensemble is not a single number"},
      {4, "sub", "missing", "missing attribute 'missing' of /ensemble/sub"},
      {5, ".", "one", "attribute 'one' of /ensemble is not a single number"},
      {5, ".", "missing", "missing attribute 'missing' of /ensemble"},
  };
  for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
    const int rc = attr_reader(&r, refused[i].call, refused[i].obj, refused[i].name, &x, &i32, &ll);
    cr_expect_eq(rc, -1, "case %zu: %s returned %d", i, refused[i].name, rc);
    expect_said(p, refused[i].msg);
  }
  cr_expect(x == -7.0 && i32 == -7 && ll == big, "refusals left the outputs alone");

  /* An attribute whose dataspace cannot be had (HDF5 fails it on a damaged file): every reader
   * refuses it with its one line and leaves nothing open. */
  static const char *const readable[6] = {"three", "one", "two", "third", "seven", "big"};
  for (int call = 0; call < 6; call++) {
    const char *o = call >= 3 && call <= 4 ? "/" : ".", *nm = readable[call];
    const long ids = test_open_hdf5_ids();
    test_fail_hdf5("H5Aget_space", 0);
    const int rc = attr_reader(&r, call, o, nm, &x, &i32, &ll);
    test_fail_hdf5(NULL, 0);
    cr_expect_eq(rc, -1, "call %d: %s returned %d", call, nm, rc);
    char msg[128];
    snprintf(msg, sizeof msg, "cannot read attribute '%s' of %s", nm, o[0] == '/' ? "/" : "/ensemble");
    expect_said(p, msg);
    cr_expect_eq(test_open_hdf5_ids(), ids, "call %d left HDF5 identifiers open", call);
  }
  nh_h5_close(&r);
  remove(p);
}

/* ---- grids ---------------------------------------------------------------------------------- */

static void put_grid(hid_t g, int k, const char *method, int n0, int n1, const int *index) {
  char obj[16], name[64];
  snprintf(obj, sizeof obj, "grid%d", k);
  H5Gclose(H5Gcreate2(g, obj, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  if (method) put_attr_str(g, obj, "method", method);
  put_attr_str(g, obj, "param0", k ? "alpha" : "beta");
  put_attr_str(g, obj, "param1", k ? "beta" : "beta2");
  double v[8];
  for (int i = 0; i < 8; i++) v[i] = 10 * k + i + 0.5;
  const hsize_t s0 = (hsize_t)n0, s1 = (hsize_t)n1, s01[2] = {s0, s1};
  snprintf(name, sizeof name, "%s/values0", obj);
  put_f64(g, name, "value0", 1, &s0, v);
  snprintf(name, sizeof name, "%s/values1", obj);
  put_f64(g, name, "value1", 1, &s1, v + 4);
  snprintf(name, sizeof name, "%s/method_index", obj);
  put_i32(g, name, "value0,value1", 2, s01, index);
}

static void expect_grids_refused(const char *p, const char *msg) {
  nh_h5 r;
  open_ok(&r, p);
  int n = 77, rc = 0;
  nh_h5_grid *gr = (nh_h5_grid *)&n;
  CAPTURE(rc = nh_h5_read_grids(&r, &n, &gr));
  cr_expect_eq(rc, -1);
  cr_expect(n == 0 && gr == NULL, "after a refusal: %d grids, %p", n, (void *)gr);
  expect_said(p, msg);
  nh_h5_close(&r);
}

Test(reader, grids_read_back_and_refused_exactly) {
  char p[128];
  fx_path(p, sizeof p, "grids");
  hid_t g, f = fx_valid(p, "ensemble", &g);
  put_grid(g, 0, "nh_newmark(alpha=0.5)", 2, 3, (const int[]){0, -1, 1, 1, -1, 0});
  put_grid(g, 1, "dla", 4, 1, (const int[]){1, 0, -1, 1});
  put_attr_int(g, ".", "grids", 2);
  const hsize_t s5 = 5, s6 = 6;
  put_f64(g, "extra5", "extra", 1, &s5, (const double[]){0, 0, 0, 0, 0});
  put_f64(g, "extra6", "extra", 1, &s6, (const double[]){0, 0, 0, 0, 0, 0});
  fx_close(f, g);
  nh_h5 r;
  open_ok(&r, p);
  int n = -1;
  nh_h5_grid *gr = NULL;
  const int known = r.ndims;             /* the dimensions known on opening */
  for (int pass = 0; pass < 2; pass++) { /* twice: the value sizes of the first read are forgotten */
    int rc = -1;
    CAPTURE(rc = nh_h5_read_grids(&r, &n, &gr));
    cr_assert_eq(rc, 0, "pass %d: %s", pass, said);
    expect_said(p, NULL);
    /* Only the last grid's value0 and value1 stay known, at the end (after extra, once it is). */
    cr_expect_eq(r.ndims, known + 2 + pass, "pass %d: %d dimensions known", pass, r.ndims);
    cr_expect(strcmp(r.dim_name[r.ndims - 2], "value0") == 0 && strcmp(r.dim_name[r.ndims - 1], "value1") == 0 &&
                  r.dim_size[r.ndims - 2] == 4 && r.dim_size[r.ndims - 1] == 1,
              "pass %d: the last two dimensions %s, %s", pass, r.dim_name[r.ndims - 2], r.dim_name[r.ndims - 1]);
    cr_assert_eq(n, 2);
    cr_expect_str_eq(gr[0].method, "nh_newmark(alpha=0.5)");
    cr_expect_str_eq(gr[1].method, "dla");
    cr_expect(strcmp(gr[0].param[0], "beta") == 0 && strcmp(gr[0].param[1], "beta2") == 0 &&
              strcmp(gr[1].param[0], "alpha") == 0 && strcmp(gr[1].param[1], "beta") == 0);
    cr_expect(gr[0].n[0] == 2 && gr[0].n[1] == 3 && gr[1].n[0] == 4 && gr[1].n[1] == 1, "sizes");
    cr_expect(gr[0].values[0][1] == 1.5 && gr[0].values[1][2] == 6.5 && gr[1].values[0][3] == 13.5 &&
              gr[1].values[1][0] == 14.5);
    const int want0[6] = {0, -1, 1, 1, -1, 0}, want1[4] = {1, 0, -1, 1};
    cr_expect(memcmp(gr[0].method_index, want0, sizeof want0) == 0 &&
              memcmp(gr[1].method_index, want1, sizeof want1) == 0);
    nh_h5_free_grids(n, gr);
    if (pass == 0) { /* a dimension learned after the grids' survives their forgetting */
      double *d = nh_h5_doubles(&r, "extra5", "extra", NULL);
      cr_expect_not_null(d);
      free(d);
    }
  }
  cr_expect_eq(nh_h5_dim(&r, "extra"), 5);
  cr_expect_eq(nh_h5_dim(&r, "value0"), 4);
  cr_expect_eq(nh_h5_dim(&r, "value1"), 1);
  double *d = NULL;
  CAPTURE(d = nh_h5_doubles(&r, "extra6", "extra", NULL));
  cr_expect_null(d);
  expect_said(p, "dataset /ensemble/extra6 has 6 entries along dimension extra, other datasets 5");
  nh_h5_close(&r);

  /* No grids attribute: none; 0 grids. */
  f = fx_valid(p, "ensemble", &g);
  fx_close(f, g);
  open_ok(&r, p);
  n = 5, gr = (nh_h5_grid *)&n;
  cr_expect_eq(nh_h5_read_grids(&r, &n, &gr), 0);
  cr_expect(n == 0 && gr == NULL);
  nh_h5_close(&r);
  f = fx_valid(p, "ensemble", &g);
  put_attr_int(g, ".", "grids", 0);
  fx_close(f, g);
  open_ok(&r, p);
  cr_expect_eq(nh_h5_read_grids(&r, &n, &gr), 0);
  cr_expect_eq(n, 0);
  nh_h5_free_grids(n, gr);
  nh_h5_close(&r);

  /* Counts: 10000 is a count (then grid0 is missing), -1 and 10001 are not. */
  const int counts[3] = {-1, 10001, 10000};
  for (int i = 0; i < 3; i++) {
    f = fx_valid(p, "ensemble", &g);
    put_attr_int(g, ".", "grids", counts[i]);
    fx_close(f, g);
    char msg[256];
    if (i < 2) snprintf(msg, sizeof msg, "/ensemble attribute 'grids' = %d is not a grid count", counts[i]);
    else snprintf(msg, sizeof msg, "missing attribute 'method' of /ensemble/grid0");
    expect_grids_refused(p, msg);
  }
  f = fx_valid(p, "ensemble", &g);
  put_attr_str(g, ".", "grids", "2");
  fx_close(f, g);
  expect_grids_refused(p, "attribute 'grids' of /ensemble is not a single number");
  /* Method indices: -1 .. nmethods - 1 (here 1). */
  const int bad[2] = {-2, 2};
  for (int i = 0; i < 2; i++) {
    f = fx_valid(p, "ensemble", &g);
    put_grid(g, 0, "rk4", 1, 2, (const int[]){0, 1});
    put_grid(g, 1, "rk4", 2, 1, (const int[]){-1, bad[i]});
    put_attr_int(g, ".", "grids", 2);
    fx_close(f, g);
    char msg[256];
    snprintf(msg, sizeof msg, "/ensemble/grid1/method_index holds %d, not a method index (0..1) or -1", bad[i]);
    expect_grids_refused(p, msg);
  }
  f = fx_valid(p, "ensemble", &g);
  put_grid(g, 0, NULL, 1, 1, (const int[]){0});
  put_attr_int(g, ".", "grids", 1);
  fx_close(f, g);
  expect_grids_refused(p, "missing attribute 'method' of /ensemble/grid0");
  /* A grid without one of its axes' values. */
  for (int axis = 0; axis < 2; axis++) {
    f = fx_valid(p, "ensemble", &g);
    put_grid(g, 0, "rk4", 1, 2, (const int[]){0, 1});
    cr_assert_geq(H5Ldelete(g, axis ? "grid0/values1" : "grid0/values0", H5P_DEFAULT), 0);
    put_attr_int(g, ".", "grids", 1);
    fx_close(f, g);
    expect_grids_refused(p, axis ? "missing dataset /ensemble/grid0/values1" : "missing dataset /ensemble/grid0/values0");
  }
  remove(p);
}

/* ---- observables and the ensemble summary --------------------------------------------------- */

static void put_observable(hid_t g, const char *name, int width, int nabsent, int with_units) {
  char obj[64];
  snprintf(obj, sizeof obj, "observables/%s", name);
  const hsize_t s[3] = {2, 1, (hsize_t)width};
  double z[8] = {0};
  put_f64(g, obj, "method,sample,component", 3, s, z);
  put_attr_str(g, obj, "description", name[0] == 'e' ? "the energy" : "positions");
  if (with_units) put_attr_str(g, obj, "units", name[0] == 'e' ? "energy" : "as q");
  static const char *const labels[] = {"q[0]", "q[1]", "q[2]"}, *const absent[] = {"", "no energy here", "x"};
  put_attr_strs(g, obj, "labels", (hsize_t)width, labels);
  put_attr_strs(g, obj, "absent", (hsize_t)nabsent, absent);
}

static hid_t fx_observables(const char *p, hid_t *g, int order) {
  hid_t f = fx_valid(p, "ensemble", g);
  H5Gclose(H5Gcreate2(*g, "observables", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  if (order) put_attr_strs(*g, "observables", "order", 2, (const char *const[]){"q", "energy"});
  return f;
}

static void expect_observables_refused(const char *p, const char *msg) {
  nh_h5 r;
  open_ok(&r, p);
  int n = 77, rc = 0;
  nh_h5_observable *o = (nh_h5_observable *)&n;
  CAPTURE(rc = nh_h5_read_observables(&r, &n, &o));
  cr_expect_eq(rc, -1);
  cr_expect(n == 0 && o == NULL, "after a refusal: %d observables, %p", n, (void *)o);
  expect_said(p, msg);
  nh_h5_close(&r);
}

Test(reader, observables_read_back_and_refused_exactly) {
  char p[128];
  fx_path(p, sizeof p, "obs");
  hid_t g, f = fx_observables(p, &g, 1);
  put_observable(g, "energy", 1, 2, 1);
  put_observable(g, "q", 3, 2, 1);
  fx_close(f, g);
  nh_h5 r;
  open_ok(&r, p);
  int n = -1, rc = -1;
  nh_h5_observable *o = NULL;
  CAPTURE(rc = nh_h5_read_observables(&r, &n, &o));
  expect_said(p, NULL);
  cr_assert_eq(rc, 0);
  cr_assert_eq(n, 2);
  cr_expect(strcmp(o[0].name, "q") == 0 && strcmp(o[1].name, "energy") == 0, "in the order attribute's order");
  cr_expect(strcmp(o[0].description, "positions") == 0 && strcmp(o[1].units, "energy") == 0 &&
            strcmp(o[0].units, "as q") == 0);
  cr_expect(o[0].width == 3 && o[1].width == 1, "widths %d %d", o[0].width, o[1].width);
  cr_expect(strcmp(o[0].labels[2], "q[2]") == 0 && o[0].labels[3] == NULL && strcmp(o[1].labels[0], "q[0]") == 0);
  cr_expect(strcmp(o[1].absent[0], "") == 0 && strcmp(o[1].absent[1], "no energy here") == 0 && o[1].absent[2] == NULL);
  nh_h5_free_observables(n, o);
  nh_h5_close(&r);

  f = fx_valid(p, "ensemble", &g); /* none sampled */
  fx_close(f, g);
  open_ok(&r, p);
  n = 5, o = (nh_h5_observable *)&n;
  cr_expect_eq(nh_h5_read_observables(&r, &n, &o), 0);
  cr_expect(n == 0 && o == NULL);
  nh_h5_close(&r);

  f = fx_observables(p, &g, 0);
  fx_close(f, g);
  expect_observables_refused(p, "missing attribute 'order' of /ensemble/observables");
  f = fx_observables(p, &g, 1);
  put_observable(g, "q", 3, 2, 1);
  fx_close(f, g);
  expect_observables_refused(p, "missing dataset /ensemble/observables/energy");
  f = fx_observables(p, &g, 1);
  put_observable(g, "q", 3, 2, 1);
  put_observable(g, "energy", 1, 3, 1);
  fx_close(f, g);
  expect_observables_refused(p, "attribute 'absent' of /ensemble/observables/energy has 3 entries for 2 methods");
  f = fx_observables(p, &g, 1);
  put_observable(g, "q", 3, 1, 1);
  put_observable(g, "energy", 1, 2, 1);
  fx_close(f, g);
  expect_observables_refused(p, "attribute 'absent' of /ensemble/observables/q has 1 entries for 2 methods");
  f = fx_observables(p, &g, 1);
  put_observable(g, "q", 3, 2, 0);
  put_observable(g, "energy", 1, 2, 1);
  fx_close(f, g);
  expect_observables_refused(p, "missing attribute 'units' of /ensemble/observables/q");
  remove(p);
}

static const char *const summary_names[6] = {"max_max_abs_dE", "median_max_abs_dE", "mean_drift_slope",
                                             "median_abs_drift_slope", "max_constraint_residual", "final_var"};

static hid_t fx_summary(const char *p, hid_t *g, const char *leave_out) {
  hid_t f = fx_valid(p, "ensemble", g);
  H5Gclose(H5Gcreate2(*g, "summary", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  const hsize_t two = 2;
  char name[64];
  if (strcmp(leave_out, "ok") != 0) put_i32(*g, "summary/ok", "method", 1, &two, (const int[]){5, 6});
  if (strcmp(leave_out, "failures") != 0) put_i32(*g, "summary/failures", "method", 1, &two, (const int[]){7, 8});
  for (int k = 0; k < 6; k++) {
    if (strcmp(leave_out, summary_names[k]) == 0) continue;
    snprintf(name, sizeof name, "summary/%s", summary_names[k]);
    put_f64(*g, name, "method", 1, &two, (const double[]){k + 0.25, -(k + 0.5)});
  }
  return f;
}

Test(reader, ensemble_summary_read_back_and_refused_exactly) {
  char p[128];
  fx_path(p, sizeof p, "summary");
  hid_t g, f = fx_summary(p, &g, "");
  fx_close(f, g);
  nh_h5 r;
  open_ok(&r, p);
  nh_ensemble_summary *s = NULL;
  CAPTURE(s = nh_h5_read_ensemble_summary(&r));
  expect_said(p, NULL);
  cr_assert_not_null(s);
  for (int m = 0; m < 2; m++) {
    const double x[6] = {s[m].max_max_abs_dE,         s[m].median_max_abs_dE, s[m].mean_drift_slope,
                         s[m].median_abs_drift_slope, s[m].max_residual,      s[m].final_var};
    cr_expect(s[m].ok == 5 + m && s[m].failures == 7 + m, "method %d: ok %d failures %d", m, s[m].ok,
              s[m].failures);
    for (int k = 0; k < 6; k++)
      cr_expect_eq(x[k], m ? -(k + 0.5) : k + 0.25, "method %d: %s = %g", m, summary_names[k], x[k]);
  }
  free(s);
  nh_h5_close(&r);
  static const char *const missing[] = {"ok", "failures", "max_max_abs_dE", "median_abs_drift_slope", "final_var"};
  for (size_t i = 0; i < sizeof missing / sizeof *missing; i++) {
    f = fx_summary(p, &g, missing[i]);
    fx_close(f, g);
    open_ok(&r, p);
    CAPTURE(s = nh_h5_read_ensemble_summary(&r));
    cr_expect_null(s, "without %s", missing[i]);
    char msg[128];
    snprintf(msg, sizeof msg, "missing dataset /ensemble/summary/%s", missing[i]);
    expect_said(p, msg);
    free(s);
    nh_h5_close(&r);
  }
  remove(p);
}

/* Edge shapes: a dataset of rank 0 (dimensions "") holds one value; a dimension learned with size
 * 0 is a size like any other (known, and enforced on the next dataset). */
Test(reader, scalar_and_empty_dimensions) {
  char p[128];
  fx_path(p, sizeof p, "edges");
  hid_t g, f = fx_valid(p, "convergence", &g);
  hid_t s = H5Screate(H5S_SCALAR), d = H5Dcreate2(g, "one", H5T_IEEE_F64LE, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  const double v = -2.75;
  H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, &v);
  H5Dclose(d), H5Sclose(s);
  set_dims(g, "one", "");
  const hsize_t zero = 0, three = 3;
  put_f64(g, "none", "x", 1, &zero, NULL);
  put_f64(g, "three", "x", 1, &three, (const double[]){1, 2, 3});
  put_f64(g, "t", "sample", 1, &zero, NULL);
  fx_close(f, g);
  nh_h5 r;
  open_ok(&r, p);
  /* An empty dimension learned from its coordinate dataset (t for sample) before any read. */
  cr_expect_eq(nh_h5_dim(&r, "sample"), 0);
  double *x = NULL;
  CAPTURE(x = nh_h5_doubles(&r, "one", "", NULL));
  expect_said(p, NULL);
  cr_expect(x && x[0] == -2.75, "the scalar: %s", said);
  free(x);
  x = NULL;
  CAPTURE(x = nh_h5_doubles(&r, "none", "x", NULL));
  expect_said(p, NULL);
  cr_expect_not_null(x, "an empty dataset is read (as an empty array)");
  free(x);
  cr_expect_eq(nh_h5_dim(&r, "x"), 0);
  CAPTURE(x = nh_h5_doubles(&r, "three", "x", NULL));
  cr_expect_null(x);
  expect_said(p, "dataset /convergence/three has 3 entries along dimension x, other datasets 0");
  nh_h5_close(&r);
  remove(p);
}

/* Out of memory for a dataset's values: said once, with the dataset and its size, NULL returned,
 * nothing of ours left allocated and no HDF5 identifier left open; HDF5 is not then asked to read
 * into nothing (which would add "cannot read dataset"). Each allocation of the read fails in turn. */
Test(reader, reading_out_of_memory_says_so_once) {
  char p[128];
  fx_path(p, sizeof p, "oom-read");
  hid_t g, f = fx_valid(p, "ensemble", &g);
  const hsize_t s3 = 3;
  put_f64(g, "x", "three", 1, &s3, (const double[]){1, 2, 3});
  fx_close(f, g);
  nh_h5 r;
  open_ok(&r, p);
  int out_of_memory = 0;
  for (long k = 1;; k++) {
    const long blocks = test_live_blocks(), ids = test_open_hdf5_ids();
    double *d = NULL;
    test_fail_allocation = k;
    CAPTURE(d = nh_h5_doubles(&r, "x", "three", NULL));
    const int reached = test_fail_allocation <= 0;
    test_fail_allocation = 0;
    if (!reached) {
      cr_expect(d && d[0] == 1 && d[1] == 2 && d[2] == 3, "without a failed allocation");
      free(d);
      break;
    }
    cr_expect_null(d, "allocation %ld failed", k);
    if (strstr(said, "out of memory for dataset")) {
      out_of_memory++;
      expect_said(p, "out of memory for dataset /ensemble/x (3 values)");
    }
    cr_expect_eq(test_live_blocks(), blocks, "allocation %ld failed: blocks left behind", k);
    cr_expect_eq(test_open_hdf5_ids(), ids, "allocation %ld failed: HDF5 identifiers left open", k);
  }
  cr_expect_eq(out_of_memory, 1, "the values' allocation failed once");
  nh_h5_close(&r);
  remove(p);
}

/* ---- the attribute reader (results/read_attr.c) on a real results file with attributes added by
 * the HDF5 API: every value known from what the test wrote. */

Test(reader, attribute_reader_by_hand) {
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
Test(reader, h5_fmt_by_hand) {
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
