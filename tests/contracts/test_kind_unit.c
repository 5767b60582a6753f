/* A study kind is one file and one registry line (issue 48 item 2): here a kind of this test's own,
 * "tally", defined whole in this file as a kind's file defines it (its result, its columns, its own
 * dimension and the names along it, the settings it stores, its runner, its table) and written by
 * the results layer from that table alone (nh_write_kind), with nothing added to results/ or to any
 * other file. Every dataset and attribute is read back with the HDF5 API and checked against the
 * spec (step sizes, initial conditions, settings) and the table (dimensions, units, descriptions). */
#include <criterion/criterion.h>
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "results/results.h"
#include "tests/helpers.h"

/* The kind's result: steps [method][h][ic], T/h; span [h], h times the steps of the first run; a
 * value per part of the kind's own dimension; a scratch column the file must not have. */
typedef struct {
  int *steps;
  double *span, *by_part, *scratch;
} tally_result;

#define CELL(f) offsetof(tally_result, f)
static const nh_result_column tally_columns[] = {
    {"steps", "method,h,ic", NH_COLUMN_I32, CELL(steps), NH_COLUMN_JOURNALED, NULL, "1", "T/h of each run"},
    {"span", "h", NH_COLUMN_F64, CELL(span), 0, NULL, "time", "h times the steps of the first run"},
    {"by_part", "part", NH_COLUMN_F64, CELL(by_part), 0, NULL, "1", "the part's number plus one half"},
    {"scratch", "h", NH_COLUMN_F64, CELL(scratch), NH_COLUMN_SCRATCH, NULL, "1", "not written"},
    {NULL}};

static const char *const part_names[] = {"first", "second", "third"};
static const nh_kind_labels parts = {"parts", "part", part_names, "the parts of the tally"};

static void own_dims(const nh_study *st, const void *r, nh_column_dims *d) {
  (void)st, (void)r;
  nh_column_dims_set(d, "part", 3);
}

static const nh_study_kind_type tally_kind;

static int run_tally(const nh_study *st, void *vr, char *err, size_t errlen) {
  tally_result *r = vr;
  nh_column_dims d;
  nh_kind_dims(&tally_kind, st, r, &d);
  if (nh_result_columns_alloc(tally_columns, st, &d, r) < 0) return snprintf(err, errlen, "out of memory"), -1;
  for (int m = 0; m < st->nmethods; m++)
    for (int i = 0; i < st->nh; i++)
      for (int j = 0; j < st->nic; j++) r->steps[((size_t)m * st->nh + i) * st->nic + j] = (int)lround(st->T / st->h[i]);
  for (int i = 0; i < st->nh; i++) r->span[i] = st->h[i] * r->steps[(size_t)i * st->nic];
  for (int p = 0; p < 3; p++) r->by_part[p] = p + 0.5;
  return 0;
}

static void free_tally(void *r) { nh_result_columns_free(tally_columns, r); }

static const nh_study_kind_type tally_kind = {
    .kind = NH_STUDY_TRAJECTORY, /* the enum's place of the spec it is loaded from; the table is what counts */
    .name = "tally",
    .doc = "T/h of every run",
    .settings = "h0 halvings observables sample_every divergence",
    .stores = "sample_every divergence",
    .result_size = sizeof(tally_result),
    .columns = tally_columns,
    .run = run_tally,
    .free_result = free_tally,
    .file = {.ics = NH_KIND_ICS_GIVEN, .labels = &parts, .own_dims = own_dims},
};

/* Attribute name of object obj as text ("" if it is not there or not text). */
static void attr_text(hid_t file, const char *obj, const char *name, char *out, size_t len) {
  out[0] = '\0';
  if (H5Aexists_by_name(file, obj, name, H5P_DEFAULT) <= 0) return;
  hid_t a = H5Aopen_by_name(file, obj, name, H5P_DEFAULT, H5P_DEFAULT), t = H5Aget_type(a);
  if (H5Tget_class(t) == H5T_STRING) {
    hid_t mt = H5Tcopy(H5T_C_S1);
    H5Tset_size(mt, H5T_VARIABLE);
    char *s = NULL;
    if (H5Tis_variable_str(t) > 0 && H5Aread(a, mt, &s) >= 0 && s) snprintf(out, len, "%s", s);
    H5free_memory(s);
    H5Tclose(mt);
  }
  H5Tclose(t), H5Aclose(a);
}

static double attr_number(hid_t file, const char *obj, const char *name) {
  double x = NAN;
  hid_t a = H5Aopen_by_name(file, obj, name, H5P_DEFAULT, H5P_DEFAULT);
  cr_assert(a >= 0, "no attribute %s of %s", name, obj);
  cr_assert(H5Aread(a, H5T_NATIVE_DOUBLE, &x) >= 0);
  H5Aclose(a);
  return x;
}

/* Dataset obj as doubles, with its element count. */
static double *dataset(hid_t file, const char *obj, size_t *n) {
  hid_t ds = H5Dopen2(file, obj, H5P_DEFAULT);
  cr_assert(ds >= 0, "no dataset %s", obj);
  hid_t space = H5Dget_space(ds);
  *n = (size_t)H5Sget_simple_extent_npoints(space);
  double *x = malloc(sizeof(double) * (*n ? *n : 1));
  cr_assert(H5Dread(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, x) >= 0);
  H5Sclose(space), H5Dclose(ds);
  return x;
}

static void expect_column(hid_t file, const char *name, const char *dims, const char *units, const char *doc) {
  char obj[64], got[256];
  snprintf(obj, sizeof obj, "/tally/%s", name);
  attr_text(file, obj, "dimensions", got, sizeof got);
  cr_expect_str_eq(got, dims, "%s: dimensions", name);
  attr_text(file, obj, "units", got, sizeof got);
  cr_expect_str_eq(got, units, "%s: units", name);
  attr_text(file, obj, "description", got, sizeof got);
  cr_expect_str_eq(got, doc, "%s: description", name);
}

Test(kind_unit, a_kind_defined_in_one_file_is_written_from_its_table, .timeout = 60) {
  char spec[512], err[512], path[256];
  snprintf(spec, sizeof spec, "%s/tests/data/trajectory_particle.cfg", NHBENCH_SOURCE_DIR);
  nh_study st;
  cr_assert_eq(nh_study_load(spec, NULL, 0, &st, err, sizeof err), 0, "%s", err);
  tally_result r = {0};
  cr_assert_eq(tally_kind.run(&st, &r, err, sizeof err), 0, "%s", err);
  snprintf(path, sizeof path, "/tmp/nhbench-kind-unit-%d.h5", (int)getpid());
  cr_assert_eq(nh_write_kind(path, &st, &tally_kind, &r, "test", err, sizeof err), 0, "%s", err);
  tally_kind.free_result(&r);
  cr_expect_null(r.steps, "free_result leaves no column behind");

  hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  cr_assert(file >= 0);
  char text[256];
  attr_text(file, "/", "study", text, sizeof text);
  cr_expect_str_eq(text, "tally", "the root names the kind of the table");
  cr_expect_gt(H5Lexists(file, "/tally", H5P_DEFAULT), 0, "the group is the kind's name");
  cr_expect_eq(H5Lexists(file, "/trajectory", H5P_DEFAULT), 0, "nothing of the spec's own kind");

  /* The columns, as the table describes them; the scratch one not at all. */
  expect_column(file, "steps", "method,h,ic", "1", "T/h of each run");
  expect_column(file, "span", "h", "time", "h times the steps of the first run");
  expect_column(file, "by_part", "part", "1", "the part's number plus one half");
  cr_expect_eq(H5Lexists(file, "/tally/scratch", H5P_DEFAULT), 0, "a scratch column is not written");
  size_t n;
  double *steps = dataset(file, "/tally/steps", &n);
  cr_assert_eq(n, (size_t)st.nmethods * st.nh * st.nic);
  for (size_t c = 0; c < n; c++) /* spec: T = 2, h = 0.1 and 0.05 */
    cr_expect_eq(steps[c], (c / st.nic) % st.nh == 0 ? 20 : 40, "steps[%zu]", c);
  double *span = dataset(file, "/tally/span", &n), *h = dataset(file, "/tally/h", &n);
  cr_assert_eq(n, 2);
  cr_expect_eq(h[0], 0.1);
  cr_expect_eq(h[1], 0.05);
  for (size_t i = 0; i < n; i++) cr_expect_float_eq(span[i], 2.0, 1e-15, "span[%zu]", i);
  double *by_part = dataset(file, "/tally/by_part", &n);
  cr_assert_eq(n, 3, "the kind's own dimension part has 3 points");
  for (size_t p = 0; p < n; p++) cr_expect_eq(by_part[p], p + 0.5);

  /* The spec's initial conditions, given: [ic][dof], as loaded. */
  double *q0 = dataset(file, "/tally/q0", &n);
  cr_assert_eq(n, (size_t)st.nic * st.sys.n);
  for (int j = 0; j < st.nic; j++)
    for (int k = 0; k < st.sys.n; k++) cr_expect_eq(q0[j * st.sys.n + k], st.ics[j].q[k], "q0[%d][%d]", j, k);
  cr_expect_gt(H5Lexists(file, "/tally/parts", H5P_DEFAULT), 0, "the names along part, its coordinate");

  /* The settings its table stores, and no other of the spec's. */
  cr_expect_eq(attr_number(file, "/tally", "sample_every"), 2);
  cr_expect_eq(attr_number(file, "/tally", "divergence"), 1e3);
  cr_expect_eq(H5Aexists_by_name(file, "/tally", "norm", H5P_DEFAULT), 0);
  cr_expect_eq(H5Aexists_by_name(file, "/tally", "reference_tol", H5P_DEFAULT), 0);
  H5Fclose(file);
  free(steps), free(span), free(h), free(by_part), free(q0);
  nh_study_free(&st);
  unlink(path);
}

/* A kind whose initial conditions are the result's drawn q0 and v0: written from those columns,
 * named as the spec names them when they are the given ones; refused when the table has no such
 * columns, or when given initial conditions do not match the count. */
typedef struct {
  double *q0, *v0;
} drawn_result;

static const nh_result_column drawn_columns[] = {
    {"q0", "ic,dof", NH_COLUMN_F64, offsetof(drawn_result, q0), NH_COLUMN_APART, NULL, "as q", "drawn q"},
    {"v0", "ic,dof", NH_COLUMN_F64, offsetof(drawn_result, v0), NH_COLUMN_APART, NULL, "as v", "drawn v"},
    {NULL}};

/* Its ic dimension: the study's count, as an ensemble's. */
static void count_dims(const nh_study *st, const void *r, nh_column_dims *d) {
  (void)r;
  nh_column_dims_set(d, "ic", st->count);
}

Test(kind_unit, drawn_initial_conditions_from_the_result, .timeout = 60) {
  char spec[512], err[512], path[256];
  snprintf(spec, sizeof spec, "%s/tests/data/trajectory_particle.cfg", NHBENCH_SOURCE_DIR);
  nh_study st;
  cr_assert_eq(nh_study_load(spec, NULL, 0, &st, err, sizeof err), 0, "%s", err);
  snprintf(path, sizeof path, "/tmp/nhbench-kind-drawn-%d.h5", (int)getpid());
  double q[2][3] = {{1, 2, 3}, {4, 5, 6}}, v[2][3] = {{-1, -2, -3}, {-4, -5, -6}};
  drawn_result r = {&q[0][0], &v[0][0]};
  nh_study_kind_type kind = {.kind = NH_STUDY_TRAJECTORY,
                             .name = "drawn",
                             .doc = "drawn states",
                             .columns = drawn_columns,
                             .file = {.ics = NH_KIND_ICS_DRAWN, .own_dims = count_dims}};
  /* count = nic = 2: the spec's given initial conditions, as the result holds them */
  st.count = 2;
  cr_assert_eq(nh_write_kind(path, &st, &kind, &r, "test", err, sizeof err), 0, "%s", err);
  hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  size_t n;
  double *got = dataset(file, "/drawn/v0", &n);
  cr_assert_eq(n, 6);
  for (int i = 0; i < 6; i++) cr_expect_eq(got[i], -(i + 1.0), "v0[%d]", i);
  free(got);
  H5Fclose(file);
  /* no q0, v0 columns: refused, and nothing left at the path */
  unlink(path);
  const nh_result_column none[] = {{NULL}};
  kind.columns = none;
  cr_expect_eq(nh_write_kind(path, &st, &kind, &r, "test", err, sizeof err), -1);
  cr_expect(strstr(err, "no columns q0 and v0 of drawn initial conditions") != NULL, "%s", err);
  cr_expect_neq(access(path, F_OK), 0, "no file written");
  /* given initial conditions (not random) whose number is not the ic dimension's */
  kind.columns = drawn_columns;
  st.count = 3;
  cr_expect_eq(nh_write_kind(path, &st, &kind, &r, "test", err, sizeof err), -1);
  cr_expect(strstr(err, "given initial conditions with count != nic") != NULL, "%s", err);
  cr_expect_neq(access(path, F_OK), 0, "no file written");
  nh_study_free(&st);
}
