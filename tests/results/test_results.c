/* The results layer (results/): every study kind written from hand-filled results with distinct
 * values and read back bit for bit, through the reader and directly with H5LT; shapes, dimension
 * names, scales and units; what the writer derives (primary flags, ensemble statistics, maxima,
 * fit ranges) against values worked out by hand; version-1 and damaged files refused with exit
 * status 2; failed writes that leave an earlier file untouched; nhbench info and export. */
#define _GNU_SOURCE /* popen, setresuid */
#include <criterion/criterion.h>
#include <dirent.h>
#include <hdf5.h>
#include <hdf5_hl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "results/results.h"
#include "studies/study.h"
#include "tests/helpers.h"

/* ---- fixtures: a study and results filled by hand ----------------------------------------- */

static char *dup_s(const char *s) {
  char *d = malloc(strlen(s) + 1);
  return strcpy(d, s);
}

/* A study of `kind` on falling_disk (n = 5, k = 2) with the given methods. */
static void study_init(nh_study *st, nh_study_kind kind, int nm, const char *const *methods) {
  memset(st, 0, sizeof *st);
  st->kind = kind;
  st->spec_file = dup_s("tests/fixture.cfg");
  st->spec_text = dup_s("# a hand-filled study\n");
  st->overrides = dup_s("");
  st->sys = test_system("falling_disk", NULL);
  st->T = 2.5;
  st->nmethods = st->nprimary = nm;
  st->methods = calloc((size_t)nm, sizeof *st->methods);
  st->method_names = calloc((size_t)nm, sizeof *st->method_names);
  for (int m = 0; m < nm; m++) {
    char name[512];
    st->methods[m] = test_method(methods[m]);
    nh_method_format(st->methods[m], name, sizeof name);
    st->method_names[m] = dup_s(name);
  }
  nh_system_default_state(&st->sys, &st->x0);
  st->initial = dup_s("default");
  st->norm = NH_NORM_MAX;
  st->reference_tol = 1e-13;
}

/* nic given initial conditions, distinct. */
static void study_ics(nh_study *st, int nic) {
  st->nic = nic;
  st->ics = calloc((size_t)nic, sizeof *st->ics);
  st->ic_names = calloc((size_t)nic, sizeof *st->ic_names);
  for (int i = 0; i < nic; i++) {
    for (int j = 0; j < st->sys.n; j++) st->ics[i].q[j] = 10 * i + j + 0.5, st->ics[i].v[j] = -(10 * i + j) - 0.25;
    char name[32];
    snprintf(name, sizeof name, "ic_%d", i);
    st->ic_names[i] = dup_s(name);
  }
}

static void study_h(nh_study *st, int nh, const double *h) {
  st->nh = nh;
  st->h = malloc(sizeof(double) * (size_t)nh);
  memcpy(st->h, h, sizeof(double) * (size_t)nh);
}

static void study_free(nh_study *st) {
  for (int m = 0; m < st->nmethods; m++) nh_method_free(st->methods[m]), free(st->method_names[m]);
  for (int i = 0; i < st->nic; i++) free(st->ic_names[i]);
  for (int g = 0; g < st->ngrids; g++) {
    free(st->grids[g].template_name), free(st->grids[g].param[0]), free(st->grids[g].param[1]);
    free(st->grids[g].values[0]), free(st->grids[g].values[1]), free(st->grids[g].method_index);
  }
  for (int m = 0; st->order_reason && m < st->nmethods; m++) free(st->order_reason[m]);
  free(st->order_reason), free(st->order_expected), free(st->grids);
  free(st->methods), free(st->method_names), free(st->ics), free(st->ic_names), free(st->h);
  free(st->spec_file), free(st->spec_text), free(st->overrides), free(st->initial), free(st->obs);
}

/* Distinct values: base + i + 1/8 (exact in binary), so a wrong index or order shows. */
static double *dseq(size_t n, double base) {
  double *x = malloc(sizeof(double) * (n ? n : 1));
  for (size_t i = 0; i < n; i++) x[i] = base + (double)i + 0.125;
  return x;
}

static int *iseq(size_t n, int base) {
  int *x = malloc(sizeof(int) * (n ? n : 1));
  for (size_t i = 0; i < n; i++) x[i] = base + (int)i;
  return x;
}

static nh_cost *cseq(size_t n) {
  nh_cost *c = calloc(n ? n : 1, sizeof *c);
  for (size_t i = 0; i < n; i++)
    c[i] = (nh_cost){10 * i + 1, 10 * i + 2, 10 * i + 3, 10 * i + 4, 10 * i + 5, 10 * i + 6};
  return c;
}

static void tmp_path(char *buf, size_t len, const char *tag) {
  snprintf(buf, len, "/tmp/nhbench-results-%d-%s.h5", (int)getpid(), tag);
}

/* Two observables for the sampled kinds: obs_a (1 component), obs_b (`wb` components). */
static int width_one(const nh_system *sys) { return (void)sys, 1; }
static int width_three(const nh_system *sys) { return (void)sys, 3; }
static void label_c(const nh_system *sys, int i, char *buf, size_t len) { (void)sys, snprintf(buf, len, "c %d", i); }
static const nh_observable obs_a = {.name = "obs_a", .doc = "observable a", .units = "energy", .width = width_one,
                                    .label = label_c};
static const nh_observable obs_b = {.name = "obs_b", .doc = "observable b", .units = "as q", .width = width_three,
                                    .label = label_c};

/* Observable o, component c of run r at sample s: its value in the fixture (obs_b c = 1 negative). */
static double obs_value(long run, int s, int o, int c) {
  double v = run * 1e4 + s * 100 + o * 10 + c;
  return o == 1 && c == 1 ? -v : v;
}

/* Samples of both observables over `runs` runs; run nan_run has NaN from sample nan_from on. */
static void samples_fill(nh_study *st, nh_samples *s, long runs, int ns, long nan_run, int nan_from) {
  st->nobs = 2;
  st->obs = malloc(2 * sizeof *st->obs);
  st->obs[0] = &obs_a, st->obs[1] = &obs_b;
  s->nobs = 2, s->row = 4;
  s->width = iseq(2, 0), s->offset = iseq(2, 0);
  s->width[0] = 1, s->width[1] = 3, s->offset[0] = 0, s->offset[1] = 1;
  s->values = malloc(sizeof(double) * (size_t)(runs * ns * 4));
  for (long r = 0; r < runs; r++)
    for (int k = 0; k < ns; k++)
      for (int o = 0; o < 2; o++)
        for (int c = 0; c < s->width[o]; c++)
          s->values[(r * ns + k) * 4 + s->offset[o] + c] = r == nan_run && k >= nan_from ? NAN : obs_value(r, k, o, c);
  s->absent = calloc((size_t)(2 * st->nmethods), sizeof *s->absent);
  s->absent[0 * st->nmethods + 1] = "method 1 has no a";
}

static void samples_free(nh_samples *s) { free(s->width), free(s->offset), free(s->values), free(s->absent); }

/* ---- checks ------------------------------------------------------------------------------- */

/* The coordinate dataset each dimension must be attached to (NULL: none). */
static const char *coordinate_of(const char *dim) {
  static const char *const map[][2] = {{"method", "methods"}, {"h", "h"},         {"ic", "ic_names"},
                                       {"state", "state_labels"}, {"point", "point_t"}, {"norm", "norms"}};
  for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
    if (strcmp(map[i][0], dim) == 0) return map[i][1];
  return NULL;
}

static char *attr_str(hid_t obj, const char *name) {
  hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
  cr_assert_geq(a, 0, "attribute %s missing", name);
  hid_t t = H5Aget_type(a), s = H5Aget_space(a);
  cr_assert_eq(H5Tget_class(t), H5T_STRING, "attribute %s is not a string", name);
  cr_assert_gt(H5Tis_variable_str(t), 0, "attribute %s: not variable-length", name);
  cr_assert_eq(H5Tget_cset(t), H5T_CSET_UTF8, "attribute %s: not UTF-8", name);
  cr_assert_eq(H5Sget_simple_extent_type(s), H5S_SCALAR, "attribute %s: not scalar", name);
  char *p = NULL;
  cr_assert_geq(H5Aread(a, t, &p), 0);
  char *out = dup_s(p);
  H5free_memory(p);
  H5Tclose(t), H5Sclose(s), H5Aclose(a);
  return out;
}

static void expect_attr_str(hid_t obj, const char *name, const char *want) {
  char *got = attr_str(obj, name);
  cr_expect_str_eq(got, want, "attribute %s", name);
  free(got);
}

/* A scalar numeric attribute (dataspace H5S_SCALAR). */
static double attr_num(hid_t obj, const char *name) {
  double v = NAN;
  hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
  cr_assert_geq(a, 0, "attribute %s missing", name);
  hid_t s = H5Aget_space(a);
  cr_expect_eq(H5Sget_simple_extent_type(s), H5S_SCALAR, "attribute %s: not scalar", name);
  cr_assert_geq(H5Aread(a, H5T_NATIVE_DOUBLE, &v), 0);
  H5Sclose(s), H5Aclose(a);
  return v;
}

/* Dimension names, labels, scales and attributes of dataset NAME of group g. */
static void check_layout(hid_t g, const char *name, const char *dims, int rank, const hsize_t *shape,
                         const char *units) {
  hid_t ds = H5Dopen2(g, name, H5P_DEFAULT);
  cr_assert_geq(ds, 0, "dataset %s missing", name);
  hid_t space = H5Dget_space(ds);
  hsize_t got[16];
  cr_assert_eq(H5Sget_simple_extent_ndims(space), rank, "%s: rank", name);
  H5Sget_simple_extent_dims(space, got, NULL);
  for (int i = 0; i < rank; i++) cr_expect_eq(got[i], shape[i], "%s: dimension %d has %llu, want %llu", name, i,
                                              (unsigned long long)got[i], (unsigned long long)shape[i]);
  expect_attr_str(ds, "dimensions", dims);
  if (units) expect_attr_str(ds, "units", units);
  char *desc = attr_str(ds, "description");
  cr_expect_gt(strlen(desc), 5, "%s: no description", name);
  free(desc);
  char dim[64];
  const char *p = dims;
  for (int i = 0; i < rank; i++) {
    size_t len = strcspn(p, ",");
    snprintf(dim, sizeof dim, "%.*s", (int)len, p);
    p += len + (p[len] == ',');
    char label[64] = "";
    H5DSget_label(ds, (unsigned)i, label, sizeof label);
    cr_expect_str_eq(label, dim, "%s: label of dimension %d", name, i);
    const char *coord = coordinate_of(dim);
    if (coord && strcmp(coord, name) != 0) {
      hid_t sc = H5Dopen2(g, coord, H5P_DEFAULT);
      cr_expect_gt(H5DSis_attached(ds, sc, (unsigned)i), 0, "%s: dimension %d not attached to %s", name, i, coord);
      H5Dclose(sc);
    }
  }
  H5Sclose(space), H5Dclose(ds);
}

static int same_bits(const void *a, const void *b, size_t n) { return memcmp(a, b, n) == 0; }

static size_t count_of(int rank, const hsize_t *shape) {
  size_t n = 1;
  for (int i = 0; i < rank; i++) n *= shape[i];
  return n;
}

/* Doubles: through the reader and through H5LT, bit for bit, and the layout. */
static void check_f64(nh_h5 *f, const char *name, const char *dims, int rank, const hsize_t *shape,
                      const double *want, const char *units) {
  hsize_t got[16];
  double *a = nh_h5_doubles(f, name, dims, got);
  cr_assert(a != NULL, "reader: %s", name);
  for (int i = 0; i < rank; i++) cr_expect_eq(got[i], shape[i], "reader: %s dimension %d", name, i);
  const size_t n = count_of(rank, shape);
  cr_expect(same_bits(a, want, n * sizeof(double)), "reader: %s differs from what was written", name);
  double *b = malloc(sizeof(double) * (n ? n : 1));
  cr_assert_geq(H5LTread_dataset_double(f->group, name, b), 0, "H5LT: %s", name);
  cr_expect(same_bits(b, want, n * sizeof(double)), "H5LT: %s differs from what was written", name);
  free(a), free(b);
  check_layout(f->group, name, dims, rank, shape, units);
}

static void check_i32(nh_h5 *f, const char *name, const char *dims, int rank, const hsize_t *shape, const int *want) {
  hsize_t got[16];
  int *a = nh_h5_ints(f, name, dims, got);
  cr_assert(a != NULL, "reader: %s", name);
  const size_t n = count_of(rank, shape);
  cr_expect(same_bits(a, want, n * sizeof(int)), "reader: %s differs from what was written", name);
  int *b = malloc(sizeof(int) * (n ? n : 1));
  cr_assert_geq(H5LTread_dataset_int(f->group, name, b), 0, "H5LT: %s", name);
  cr_expect(same_bits(b, want, n * sizeof(int)), "H5LT: %s differs from what was written", name);
  free(a), free(b);
  check_layout(f->group, name, dims, rank, shape, "1");
}

/* Cost records: through the reader, and with a compound type of the documented member names. */
static void check_cost(nh_h5 *f, const char *dims, int rank, const hsize_t *shape, const nh_cost *want) {
  const size_t n = count_of(rank, shape);
  nh_cost *a = nh_h5_costs(f, "cost", dims, NULL);
  cr_assert(a != NULL);
  cr_expect(same_bits(a, want, n * sizeof(nh_cost)), "reader: cost differs");
  static const char *const names[] = {"steps", "rhs_evals", "jacobian_evals", "linear_solves", "newton_iterations",
                                      "constraint_evals"};
  hid_t t = H5Tcreate(H5T_COMPOUND, 6 * sizeof(unsigned long long));
  for (int i = 0; i < 6; i++) H5Tinsert(t, names[i], (size_t)i * sizeof(unsigned long long), H5T_NATIVE_ULLONG);
  unsigned long long *b = malloc(sizeof(unsigned long long) * 6 * (n ? n : 1));
  cr_assert_geq(H5LTread_dataset(f->group, "cost", t, b), 0);
  for (size_t i = 0; i < n; i++)
    cr_expect(b[6 * i] == want[i].steps && b[6 * i + 1] == want[i].rhs_evals && b[6 * i + 2] == want[i].jacobian_evals &&
                  b[6 * i + 3] == want[i].linear_solves && b[6 * i + 4] == want[i].newton_iterations &&
                  b[6 * i + 5] == want[i].constraint_evals,
              "cost record %zu", i);
  H5Tclose(t);
  free(a), free(b);
  check_layout(f->group, "cost", dims, rank, shape, NULL);
}

static void check_strings(nh_h5 *f, const char *name, const char *dim, int n, char *const *want) {
  int count = 0;
  char **got = nh_h5_strings(f, name, dim, &count);
  cr_assert(got != NULL, "%s", name);
  cr_assert_eq(count, n, "%s: %d strings", name, count);
  for (int i = 0; i < n; i++) cr_expect_str_eq(got[i], want[i], "%s[%d]", name, i);
  nh_h5_free_strings(got, count);
  hsize_t shape[1] = {(hsize_t)n};
  check_layout(f->group, name, dim, 1, shape, "-");
}

static void open_ok(nh_h5 *f, const char *path) {
  cr_assert_eq(nh_h5_open(f, "test", path), 0, "cannot read back %s", path);
}

/* Root attributes, the common part of every study group. */
static void check_common(nh_h5 *f, const nh_study *st, int nic, const double *q0, const double *v0, char *const *names) {
  cr_expect_eq(attr_num(f->file, "schema_version"), 3);
  cr_expect_eq(attr_num(f->file, "T"), st->T);
  cr_expect_eq(attr_num(f->file, "n"), 5);
  expect_attr_str(f->file, "study", nh_study_kind_name(st->kind));
  char sys[512];
  nh_system_format(&st->sys, sys, sizeof sys);
  expect_attr_str(f->file, "system", sys);
  expect_attr_str(f->file, "spec_text", st->spec_text);
  cr_expect_eq(f->kind, st->kind);
  check_strings(f, "methods", "method", st->nmethods, st->method_names);
  int *claimed = malloc(sizeof(int) * (size_t)st->nmethods);
  for (int m = 0; m < st->nmethods; m++) claimed[m] = nh_method_order(st->methods[m]);
  hsize_t dm[1] = {(hsize_t)st->nmethods}, dicn[2] = {(hsize_t)nic, 5};
  check_i32(f, "order_claimed", "method", 1, dm, claimed);
  free(claimed);
  check_strings(f, "ic_names", "ic", nic, names);
  check_f64(f, "q0", "ic,dof", 2, dicn, q0, "as q");
  check_f64(f, "v0", "ic,dof", 2, dicn, v0, "as v");
  char *labels[10] = {"q[0]", "q[1]", "q[2]", "q[3]", "q[4]", "v[0]", "v[1]", "v[2]", "v[3]", "v[4]"};
  check_strings(f, "state_labels", "state", 10, labels);
}

/* The rows of st->ics as [ic][n]. */
static double *ic_rows(const nh_study *st, int velocities) {
  double *x = malloc(sizeof(double) * (size_t)(st->nic * 5));
  for (int i = 0; i < st->nic; i++)
    for (int j = 0; j < 5; j++) x[i * 5 + j] = velocities ? st->ics[i].v[j] : st->ics[i].q[j];
  return x;
}

/* NaN-aware equality, for values the writer derived. */
static int same(double a, double b) { return (isnan(a) && isnan(b)) || a == b; }

/* ---- convergence -------------------------------------------------------------------------- */

static const char *const conv_methods[] = {"rk4", "nh_newmark(alpha=0.5)", "nh_newmark(alpha=0)"};

typedef struct {
  nh_study st;
  nh_convergence_result r;
} conv_fx;

static void conv_fill(conv_fx *x) {
  nh_study *st = &x->st;
  nh_convergence_result *r = &x->r;
  study_init(st, NH_STUDY_CONVERGENCE, 3, conv_methods);
  const double h[4] = {0.4, 0.1, 0.2, 0.05};
  study_h(st, 4, h);
  st->norm = NH_NORM_2, st->fit_points = 3, st->error_floor = 1e-11, st->order_tolerance = 0.15;
  st->order_expected = iseq(3, 0);
  st->order_expected[0] = 4, st->order_expected[1] = 2, st->order_expected[2] = 2;
  st->order_reason = calloc(3, sizeof(char *));
  st->order_reason[0] = dup_s(""), st->order_reason[1] = dup_s(""), st->order_reason[2] = dup_s("x"); /* one character: info shows it, not "(no reason recorded)" */
  memset(r, 0, sizeof *r);
  r->err = dseq(12, 100), r->err_q = dseq(12, 200), r->err_v = dseq(12, 300), r->err_max = dseq(12, 400);
  r->err_2 = dseq(12, 500), r->err_coord = dseq(120, 1000), r->final_state = dseq(120, 2000);
  r->lambda_err = dseq(12, 600), r->discrete_residual = dseq(12, 650), r->residual = dseq(12, 700);
  r->residual[11] = NAN;
  r->z = dseq(12, 750), r->wall_time = dseq(12, 800), r->cost = cseq(12);
  r->status = iseq(12, 0);
  const int status[12] = {0, 0, 0, 0, 1, 0, 2, 0, 0, 0, 0, 3};
  memcpy(r->status, status, sizeof status);
  r->order = dseq(3, 0), r->order_stderr = dseq(3, 0);
  r->order[0] = 4.0625, r->order[1] = 2.03125, r->order[2] = NAN;
  r->order_stderr[0] = 0.001, r->order_stderr[1] = NAN, r->order_stderr[2] = NAN;
  r->fit_first = iseq(3, 0), r->fit_count = iseq(3, 0), r->order_ok = iseq(3, 0);
  r->fit_first[0] = 3, r->fit_first[1] = 1, r->fit_first[2] = -1;
  r->fit_count[0] = 3, r->fit_count[1] = 2, r->fit_count[2] = 0;
  r->order_ok[0] = 1, r->order_ok[1] = 1, r->order_ok[2] = 0;
  for (int i = 0; i < 5; i++) r->reference.x.q[i] = i + 0.5, r->reference.x.v[i] = -i - 0.75;
  r->reference.kind = "rk8pd", r->reference.tol = 1e-14, r->reference.check_tol = 1e-16;
  r->reference.error = 2.5e-15;
  r->fit_floor = dseq(12, 900);
}

static void conv_build(conv_fx *x, const char *path) {
  char err[1024];
  conv_fill(x);
  cr_assert_eq(nh_write_convergence(path, &x->st, &x->r, "nhbench run tests/fixture.cfg", err, sizeof err), 0, "%s",
               err);
}

static void conv_free(conv_fx *x) {
  nh_convergence_result_free(&x->r); /* every array the fixture made, the rest NULL */
  study_free(&x->st);
}

/* The orders table is stored packed (results/schema.c): each member right after the one before, no
 * padding, whatever the layout of nh_order_row in memory. */
static void check_orders_packed(nh_h5 *f) {
  hid_t ds = H5Dopen2(f->group, "orders", H5P_DEFAULT), type = H5Dget_type(ds);
  cr_assert(ds >= 0 && type >= 0);
  size_t next = 0;
  const int n = H5Tget_nmembers(type);
  cr_expect_eq(n, 11);
  for (int i = 0; i < n; i++) {
    hid_t member = H5Tget_member_type(type, (unsigned)i);
    cr_expect_eq(H5Tget_member_offset(type, (unsigned)i), next, "member %d", i);
    next += H5Tget_size(member);
    H5Tclose(member);
  }
  cr_expect_eq(H5Tget_size(type), next, "the table's record is the sum of its members");
  H5Tclose(type), H5Dclose(ds);
}

static void check_orders(nh_h5 *f) {
  check_orders_packed(f);
  nh_order_row *o = nh_h5_read_orders(f);
  cr_assert(o != NULL);
  const int claimed[3] = {4, 2, 1}, expected[3] = {4, 2, 2}, first[3] = {3, 1, -1}, count[3] = {3, 2, 0};
  const double obs[3] = {4.0625, 2.03125, NAN}, se[3] = {0.001, NAN, NAN};
  const double lo[3] = {0.05, 0.1, NAN}, hi[3] = {0.2, 0.2, NAN}; /* h sorted: 0.05 0.1 0.2 0.4 */
  const char *reason[3] = {"", "", "x"};
  for (int m = 0; m < 3; m++) {
    cr_expect_str_eq(o[m].method, f->methods[m]);
    cr_expect_eq(o[m].claimed, claimed[m], "claimed[%d]", m);
    cr_expect_eq(o[m].expected, expected[m], "expected[%d]", m);
    cr_expect(same(o[m].observed, obs[m]) && same(o[m].stderr_, se[m]), "observed[%d]", m);
    cr_expect(o[m].fit_first == first[m] && o[m].fit_count == count[m], "fit points[%d]", m);
    cr_expect(same(o[m].fit_h_min, lo[m]) && same(o[m].fit_h_max, hi[m]), "fit range[%d]: %g .. %g", m,
              o[m].fit_h_min, o[m].fit_h_max);
    cr_expect_eq(o[m].ok, m < 2, "ok[%d]", m);
    cr_expect_str_eq(o[m].reason, reason[m]);
  }
  nh_h5_free_orders(o, 3);
  /* Directly, by member name, as h5py or h5dump see it. */
  struct {
    double observed, fit_h_min;
  } rows[3];
  hid_t t = H5Tcreate(H5T_COMPOUND, sizeof rows[0]);
  H5Tinsert(t, "observed", 0, H5T_NATIVE_DOUBLE);
  H5Tinsert(t, "fit_h_min", sizeof(double), H5T_NATIVE_DOUBLE);
  cr_assert_geq(H5LTread_dataset(f->group, "orders", t, rows), 0);
  cr_expect(rows[0].observed == 4.0625 && rows[1].fit_h_min == 0.1);
  H5Tclose(t);
  hsize_t dm[1] = {3};
  check_layout(f->group, "orders", "method", 1, dm, NULL);
}

/* The convergence file written with its k-th allocation failing, for every k up to the last: each
 * write fails with "out of memory", leaves no block of ours behind and no file at the path; the
 * write without a failure succeeds. */
Test(results, writing_out_of_memory_at_each_allocation) {
  char path[128], again[160], err[1024];
  tmp_path(path, sizeof path, "conv-oom");
  snprintf(again, sizeof again, "%s.again", path);
  conv_fx x;
  conv_build(&x, path);
  int failures = 0;
  for (long k = 1;; k++) {
    const long blocks = test_live_blocks();
    err[0] = '\0';
    test_fail_allocation = k;
    const int rc = nh_write_convergence(again, &x.st, &x.r, "test", err, sizeof err);
    const int reached = test_fail_allocation <= 0;
    test_fail_allocation = 0;
    if (!reached) {
      cr_expect_eq(rc, 0, "without a failed allocation: %s", err);
      break;
    }
    failures++;
    cr_expect(rc == -1 && strstr(err, "out of memory"), "allocation %ld failed: %d, '%s'", k, rc, err);
    cr_expect_eq(test_live_blocks(), blocks, "allocation %ld failed: %ld blocks left behind", k,
                 test_live_blocks() - blocks);
    cr_expect_neq(access(again, F_OK), 0, "allocation %ld failed, yet %s exists", k, again);
  }
  cr_expect_gt(failures, 5, "only %d allocations", failures);
  conv_free(&x);
  remove(path), remove(again);
}

Test(results, convergence_round_trip) {
  char path[128];
  tmp_path(path, sizeof path, "conv");
  conv_fx x;
  conv_build(&x, path);
  const nh_convergence_result *r = &x.r;
  nh_h5 f;
  open_ok(&f, path);
  char *names[1] = {"default"};
  check_common(&f, &x.st, 1, x.st.x0.q, x.st.x0.v, names);
  hsize_t dh[1] = {4}, dmh[2] = {3, 4}, dmhx[3] = {3, 4, 10}, dx[1] = {10}, dm[1] = {3};
  check_f64(&f, "h", "h", 1, dh, x.st.h, "time");
  const char *const mh[] = {"err", "err_q", "err_v", "err_max", "err_2", "lambda_err", "discrete_residual",
                            "constraint_residual", "z", "wall_time"};
  const double *mhv[] = {r->err, r->err_q, r->err_v, r->err_max, r->err_2, r->lambda_err, r->discrete_residual,
                         r->residual, r->z, r->wall_time};
  for (int i = 0; i < 10; i++) check_f64(&f, mh[i], "method,h", 2, dmh, mhv[i], NULL);
  check_f64(&f, "err_coord", "method,h,state", 3, dmhx, r->err_coord, "as q, v");
  check_f64(&f, "final_state", "method,h,state", 3, dmhx, r->final_state, "as q, v");
  check_i32(&f, "status", "method,h", 2, dmh, r->status);
  check_cost(&f, "method,h", 2, dmh, r->cost);
  const double ref[10] = {0.5, 1.5, 2.5, 3.5, 4.5, -0.75, -1.75, -2.75, -3.75, -4.75};
  check_f64(&f, "reference_state", "state", 1, dx, ref, "as q, v");
  check_orders(&f);
  /* The summary over h, worked out by hand: statuses 0000 / 1020 / 0003; residual 700.125 + i, the
   * last NaN; wall 800.125 + i summed over each row. */
  const int failures[3] = {0, 2, 1};
  const double rmax[3] = {703.125, 707.125, 710.125}, wall[3] = {3206.5, 3222.5, 3238.5};
  check_i32(&f, "summary/failures", "method", 1, dm, failures);
  check_f64(&f, "summary/max_constraint_residual", "method", 1, dm, rmax, "as v");
  check_f64(&f, "summary/wall_time", "method", 1, dm, wall, "s");
  int primary[3] = {1, 1, 1};
  check_i32(&f, "primary", "method", 1, dm, primary);
  expect_attr_str(f.group, "norm", "2");
  expect_attr_str(f.group, "reference", "rk8pd");
  expect_attr_str(f.group, "initial", "default");
  cr_expect_eq(attr_num(f.group, "fit_points"), 3);
  cr_expect_eq(attr_num(f.group, "order_tolerance"), 0.15);
  /* the reference's tolerance as used (not the spec's start) and its estimated error */
  cr_expect_eq(attr_num(f.group, "reference_tol"), 1e-14);
  cr_expect_eq(attr_num(f.group, "reference_check_tol"), 1e-16);
  cr_expect_eq(attr_num(f.group, "reference_error"), 2.5e-15);
  expect_attr_str(f.group, "reference_tol_rule", "given");
  cr_expect_eq(attr_num(f.group, "error_floor"), 1e-11);
  expect_attr_str(f.group, "error_floor_rule", "given: max(error_floor, 10 reference_error)");
  check_f64(&f, "fit_floor", "method,h", 2, dmh, r->fit_floor, "as q, v");
  nh_h5_close(&f);
  conv_free(&x);
  remove(path);
}

/* ---- ensemble ----------------------------------------------------------------------------- */

/* Listed: rk4, nh_newmark(beta=0.1,beta2=0.1,...); the grid adds nh_newmark(alpha=0.5) at (0, 0) and
 * nh_newmark(beta=0.1,beta2=0,...) at (0.1, 0), skips (0, 0.1), and finds a listed one at (0.1, 0.1). */
static const char *const ens_methods[] = {"rk4", "nh_newmark(beta=0.1,beta2=0.1,alpha=0.5)", "nh_newmark(alpha=0.5)",
                                          "nh_newmark(beta=0.1,beta2=0,alpha=0.5)"};

static void grid_fill(nh_study *st, const int *index) {
  st->ngrids = 1;
  st->grids = calloc(1, sizeof *st->grids);
  nh_grid *g = &st->grids[0];
  g->template_name = dup_s("nh_newmark(alpha=0.5)");
  g->param[0] = dup_s("beta"), g->param[1] = dup_s("beta2");
  g->nvalues[0] = g->nvalues[1] = 2;
  g->values[0] = dseq(2, 0), g->values[1] = dseq(2, 10);
  g->method_index = iseq(4, 0);
  memcpy(g->method_index, index, 4 * sizeof(int));
}

typedef struct {
  nh_study st;
  nh_ensemble_result r;
} ens_fx;

enum { ENS_M = 4, ENS_IC = 3, ENS_S = 6 };

static void ens_build(ens_fx *x, const char *path) {
  nh_study *st = &x->st;
  nh_ensemble_result *r = &x->r;
  study_init(st, NH_STUDY_ENSEMBLE, ENS_M, ens_methods);
  const int index[4] = {2, -1, 3, 1};
  grid_fill(st, index);
  st->nprimary = 2;
  st->count = ENS_IC, st->nsamples = ENS_S, st->random_ics = 1, st->sample_every = 2;
  study_h(st, 1, (const double[]){0.25});
  st->nsteps = 10, st->divergence = 1e3, st->energy = 1.5, st->seed = 12345;
  memset(r, 0, sizeof *r);
  const size_t runs = ENS_M * ENS_IC, cells = ENS_M * ENS_S;
  r->t = dseq(ENS_S, 0), r->q0 = dseq(ENS_IC * 5, 10), r->v0 = dseq(ENS_IC * 5, 30), r->E0 = dseq(ENS_IC, 50);
  r->dE = dseq(runs * ENS_S, 1000), r->max_abs_dE = dseq(runs, 100), r->drift_slope = dseq(runs, -20);
  r->max_residual = dseq(runs, 200), r->status = iseq(runs, 0);
  /* Runs 1, 5, 9 failed: Newton (method 0, IC 1), diverged (method 1, IC 2), non-finite (method 3, IC 0). */
  for (size_t i = 0; i < runs; i++) r->status[i] = i == 1 ? 1 : i == 5 ? NH_RUN_DIVERGED : i == 9 ? 2 : 0;
  r->dE_mean = dseq(cells, 300), r->dE_var = dseq(cells, 500), r->dE_count = iseq(cells, 0);
  r->dE_q10 = dseq(cells, 700), r->dE_q50 = dseq(cells, 800), r->dE_q90 = dseq(cells, 900);
  for (size_t i = 0; i < cells; i++) r->dE_count[i] = 3;
  r->dE_count[2 * ENS_S + ENS_S - 1] = 1; /* method 2: one IC left at T */
  r->cost = cseq(ENS_M), r->wall_time = dseq(ENS_M, 900);
  samples_fill(st, &r->samples, (long)runs, ENS_S, 5, 4);
  char err[1024];
  cr_assert_eq(nh_write_ensemble(path, st, r, "nhbench run tests/fixture.cfg", err, sizeof err), 0, "%s", err);
}

static void ens_free(ens_fx *x) {
  nh_ensemble_result *r = &x->r;
  free(r->t), free(r->q0), free(r->v0), free(r->E0), free(r->dE), free(r->max_abs_dE), free(r->drift_slope);
  free(r->max_residual), free(r->status), free(r->dE_mean), free(r->dE_var), free(r->dE_count), free(r->cost);
  free(r->dE_q10), free(r->dE_q50), free(r->dE_q90);
  free(r->wall_time);
  samples_free(&r->samples);
  study_free(&x->st);
}

/* observables/obs_b and its summaries for runs [R][...], in the fixture's formula. */
static void check_obs_b(nh_h5 *f, const char *run_dims, long runs, int ns, long nan_run, int nan_from) {
  char dims[128], sdims[128];
  snprintf(dims, sizeof dims, "%s,sample,component", run_dims);
  snprintf(sdims, sizeof sdims, "%s,component", run_dims);
  double *x = nh_h5_doubles(f, "observables/obs_b", dims, NULL);
  double *mx = nh_h5_doubles(f, "observables_max_abs/obs_b", sdims, NULL);
  double *last = nh_h5_doubles(f, "observables_last/obs_b", sdims, NULL);
  cr_assert(x && mx && last);
  for (long r = 0; r < runs; r++)
    for (int c = 0; c < 3; c++) {
      const int end = r == nan_run ? nan_from - 1 : ns - 1; /* the last sample with a value */
      for (int k = 0; k < ns; k++) {
        double want = r == nan_run && k >= nan_from ? NAN : obs_value(r, k, 1, c);
        cr_expect(same(x[(r * ns + k) * 3 + c], want), "obs_b run %ld sample %d component %d: %g, want %g", r, k, c,
                  x[(r * ns + k) * 3 + c], want);
      }
      cr_expect_eq(mx[r * 3 + c], fabs(obs_value(r, end, 1, c)), "max |obs_b| run %ld component %d", r, c);
      cr_expect_eq(last[r * 3 + c], obs_value(r, end, 1, c), "last obs_b run %ld component %d", r, c);
    }
  free(x), free(mx), free(last);
  /* the summaries carry the components' labels too (a claims row selects a component by name) */
  static const char *const summaries[] = {"observables_max_abs/obs_b", "observables_last/obs_b"};
  for (int i = 0; i < 2; i++) {
    int count = 0;
    char **labels = nh_h5_attr_strings(f, summaries[i], "labels", &count);
    cr_assert(labels && count == 3, "%s: %d labels", summaries[i], count);
    for (int c = 0; c < 3; c++) {
      char want[16];
      snprintf(want, sizeof want, "c %d", c);
      cr_expect_str_eq(labels[c], want, "%s label %d", summaries[i], c);
    }
    nh_h5_free_strings(labels, count);
  }
}

static void check_observable_attrs(nh_h5 *f, int nm) {
  int nobs = 0;
  nh_h5_observable *o = NULL;
  cr_assert_eq(nh_h5_read_observables(f, &nobs, &o), 0);
  cr_assert_eq(nobs, 2);
  cr_expect_str_eq(o[0].name, "obs_a");
  cr_expect_str_eq(o[1].name, "obs_b");
  cr_expect_str_eq(o[0].units, "energy");
  cr_expect_str_eq(o[1].description, "observable b");
  cr_expect_eq(o[0].width, 1);
  cr_assert_eq(o[1].width, 3);
  cr_expect_str_eq(o[0].labels[0], "c 0", "obs_a's one label");
  for (int c = 0; c < 3; c++) {
    char want[16];
    snprintf(want, sizeof want, "c %d", c);
    cr_expect_str_eq(o[1].labels[c], want, "obs_b's label %d", c);
  }
  for (int m = 0; m < nm; m++) {
    cr_expect_str_eq(o[0].absent[m], m == 1 ? "method 1 has no a" : "");
    cr_expect_str_eq(o[1].absent[m], "");
  }
  nh_h5_free_observables(nobs, o);
}

Test(results, ensemble_round_trip) {
  char path[128];
  tmp_path(path, sizeof path, "ens");
  ens_fx x;
  ens_build(&x, path);
  const nh_ensemble_result *r = &x.r;
  nh_h5 f;
  open_ok(&f, path);
  char *names[3] = {"random 0", "random 1", "random 2"};
  check_common(&f, &x.st, ENS_IC, r->q0, r->v0, names);
  hsize_t ds[1] = {ENS_S}, dic[1] = {ENS_IC}, dm[1] = {ENS_M}, dmic[2] = {ENS_M, ENS_IC};
  hsize_t dms[2] = {ENS_M, ENS_S}, dmics[3] = {ENS_M, ENS_IC, ENS_S};
  check_f64(&f, "t", "sample", 1, ds, r->t, "time");
  check_f64(&f, "E0", "ic", 1, dic, r->E0, "energy");
  check_f64(&f, "dE", "method,ic,sample", 3, dmics, r->dE, "energy");
  check_f64(&f, "max_abs_dE", "method,ic", 2, dmic, r->max_abs_dE, "energy");
  check_f64(&f, "drift_slope", "method,ic", 2, dmic, r->drift_slope, "energy/time");
  check_f64(&f, "max_constraint_residual", "method,ic", 2, dmic, r->max_residual, "as v");
  check_i32(&f, "status", "method,ic", 2, dmic, r->status);
  check_f64(&f, "dE_mean", "method,sample", 2, dms, r->dE_mean, "energy");
  check_f64(&f, "dE_q10", "method,sample", 2, dms, r->dE_q10, "energy");
  check_f64(&f, "dE_q50", "method,sample", 2, dms, r->dE_q50, "energy");
  check_f64(&f, "dE_q90", "method,sample", 2, dms, r->dE_q90, "energy");
  check_f64(&f, "dE_var", "method,sample", 2, dms, r->dE_var, "energy^2");
  check_i32(&f, "dE_count", "method,sample", 2, dms, r->dE_count);
  check_cost(&f, "method", 1, dm, r->cost);
  check_f64(&f, "wall_time", "method", 1, dm, r->wall_time, "s");
  const int primary[4] = {1, 1, 0, 0};
  check_i32(&f, "primary", "method", 1, dm, primary);
  for (int m = 0; m < ENS_M; m++) cr_expect_eq(f.primary[m], primary[m]);
  /* Grid. */
  int ngrids = 0;
  nh_h5_grid *g = NULL;
  cr_assert_eq(nh_h5_read_grids(&f, &ngrids, &g), 0);
  cr_assert_eq(ngrids, 1);
  cr_expect_str_eq(g[0].param[1], "beta2");
  cr_expect(g[0].method_index[0] == 2 && g[0].method_index[1] == -1 && g[0].method_index[3] == 1);
  cr_expect(g[0].values[1][1] == 11.125);
  nh_h5_free_grids(ngrids, g);
  /* The stored summary is the writer's one, with final_var from the last sample (index 5). */
  nh_ensemble_summary *s = nh_h5_read_ensemble_summary(&f);
  cr_assert(s != NULL);
  for (int m = 0; m < ENS_M; m++) {
    nh_ensemble_summary w;
    nh_ensemble_summarize(&x.st, r, m, &w);
    cr_expect(same_bits(&s[m], &w, sizeof w), "summary of method %d", m);
    cr_expect(same(s[m].final_var, m == 2 ? NAN : r->dE_var[m * ENS_S + ENS_S - 1]), "final_var[%d]", m);
  }
  free(s);
  check_observable_attrs(&f, ENS_M);
  check_obs_b(&f, "method,ic", ENS_M * ENS_IC, ENS_S, 5, 4);
  cr_expect_eq(attr_num(f.group, "seed"), 12345);
  cr_expect_eq(attr_num(f.group, "random_ics"), 1);
  long long nh = 0;
  double *h = nh_h5_steps(&f, &nh);
  cr_expect(h && nh == 1 && h[0] == 0.25, "the ensemble's one h, the dataset h");
  cr_expect(nh_h5_has(&f, "h") && !nh_h5_has_attr(&f, ".", "h"));
  free(h);
  nh_h5_close(&f);
  ens_free(&x);
  remove(path);
}

/* Statistics over the ICs, worked out by hand: NaN values, a failed run, a single run, equal values,
 * an even count; one sample (the last is index 0). */
Test(results, ensemble_summary_by_hand) {
  nh_study st;
  study_init(&st, NH_STUDY_ENSEMBLE, 4, ens_methods);
  st.count = 5, st.nsamples = 1;
  nh_ensemble_result r = {0};
  const int status[20] = {0, 0, 1, 0, 0, /**/ 0, 3, 3, 3, 3, /**/ 0, 0, 0, 2, 0, /**/ 0, 0, 0, 0, 0};
  double max_abs[20] = {3, NAN, 100, 1, 2, /**/ 7, 1, 1, 1, 1, /**/ 0.5, 0.5, 0.5, 9, 0.5, /**/ 4, 1, 3, 2, NAN};
  double slope[20] = {-4, 2, 50, NAN, 1, /**/ NAN, 1, 1, 1, 1, /**/ -0.25, -0.25, -0.25, 9, -0.25, /**/ 1, 2, 3, 4, 5};
  double resid[20] = {1e-3, 2e-3, 9, NAN, 5e-4, /**/ 0.5, 9, 9, 9, 9, /**/ 1, 1, 1, 1, 1, /**/ 1, 2, 3, 4, 5};
  double var[4] = {0.25, 123, 0, 2};
  int count[4] = {2, 1, 4, 5}; /* method 0: 2 ICs at T, the fewest with a variance; method 1: 1, none */
  r.status = (int *)status, r.max_abs_dE = max_abs, r.drift_slope = slope, r.max_residual = resid;
  r.dE_var = var, r.dE_count = count;
  const nh_ensemble_summary want[4] = {
      {4, 1, 3, 2, -1.0 / 3, 2, 2e-3, 0.25},         /* {3,1,2}; {-4,2,1}; {1e-3,2e-3,5e-4} */
      {1, 4, 7, 7, NAN, NAN, 0.5, NAN},              /* one run; its slope NaN; count 1 at T */
      {4, 1, 0.5, 0.5, -0.25, 0.25, 1, 0},           /* equal values */
      {5, 0, 4, 2.5, 3, 3, 5, 2},                    /* {4,1,3,2}: even count */
  };
  for (int m = 0; m < 4; m++) {
    nh_ensemble_summary s;
    nh_ensemble_summarize(&st, &r, m, &s);
    cr_expect(s.ok == want[m].ok && s.failures == want[m].failures, "method %d: ok %d failures %d", m, s.ok,
              s.failures);
    cr_expect(same(s.max_max_abs_dE, want[m].max_max_abs_dE), "method %d: max %g", m, s.max_max_abs_dE);
    cr_expect(same(s.median_max_abs_dE, want[m].median_max_abs_dE), "method %d: median %g", m, s.median_max_abs_dE);
    cr_expect(same(s.mean_drift_slope, want[m].mean_drift_slope) ||
                  fabs(s.mean_drift_slope - want[m].mean_drift_slope) <= 1e-16,
              "method %d: mean slope %.17g", m, s.mean_drift_slope);
    cr_expect(same(s.median_abs_drift_slope, want[m].median_abs_drift_slope), "method %d: median |slope| %g", m,
              s.median_abs_drift_slope);
    cr_expect(same(s.max_residual, want[m].max_residual), "method %d: max residual %g", m, s.max_residual);
    cr_expect(same(s.final_var, want[m].final_var), "method %d: final var %g", m, s.final_var);
  }
  study_free(&st);
}

/* Which methods the spec listed: the first nprimary, as the loader says. */
Test(results, primary_flags) {
  nh_study st;
  study_init(&st, NH_STUDY_ENSEMBLE, 4, ens_methods);
  int got[4];
  const int want[5][4] = {{0, 0, 0, 0}, {1, 0, 0, 0}, {1, 1, 0, 0}, {1, 1, 1, 0}, {1, 1, 1, 1}};
  for (int np = 0; np <= 4; np++) {
    st.nprimary = np;
    nh_primary_methods(&st, got);
    for (int m = 0; m < 4; m++) cr_expect_eq(got[m], want[np][m], "nprimary %d: method %d", np, m);
  }
  study_free(&st);
}

/* The reader refuses primary flags other than 0 and 1 (found by fuzz_results: a damaged flag of
 * 2^31 − 1 overflowed `nhbench export`'s count of primary methods), and reads 0 and 1. */
Test(results, reader_refuses_damaged_primary_flags, .timeout = 60) {
  char path[128], cmd[1024];
  snprintf(path, sizeof path, "/tmp/nhbench-primary-%d.h5", (int)getpid());
  snprintf(cmd, sizeof cmd, "%s run %s/tests/data/small_ensemble.cfg -o %s 2>/dev/null", NHBENCH_EXE,
           NHBENCH_SOURCE_DIR, path);
  cr_assert_eq(system(cmd), 0);
  const int values[] = {0, 1, 2, -1, 2147483647};
  for (size_t i = 0; i < sizeof values / sizeof *values; i++) {
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT), d = H5Dopen2(f, "/ensemble/primary", H5P_DEFAULT);
    cr_assert(f >= 0 && d >= 0);
    int flags[64] = {0};
    cr_assert_eq(H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, flags), 0);
    flags[1] = values[i];
    cr_assert_eq(H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, flags), 0);
    H5Dclose(d), H5Fclose(f);
    nh_h5 r;
    const int rc = nh_h5_open(&r, "test", path);
    if (rc == 0) nh_h5_close(&r);
    cr_expect_eq(rc, values[i] == 0 || values[i] == 1 ? 0 : -1, "primary flag %d", values[i]);
  }
  remove(path);
}

/* ---- trajectory --------------------------------------------------------------------------- */

typedef struct {
  nh_study st;
  nh_trajectory_result r;
} traj_fx;

enum { TR_M = 2, TR_H = 3, TR_IC = 4, TR_S = 7 };

static void traj_build(traj_fx *x, const char *path) {
  nh_study *st = &x->st;
  nh_trajectory_result *r = &x->r;
  study_init(st, NH_STUDY_TRAJECTORY, TR_M, conv_methods);
  study_ics(st, TR_IC);
  const double h[TR_H] = {0.1, 0.2, 0.4};
  study_h(st, TR_H, h);
  st->sample_every = 3, st->divergence = 1e3;
  memset(r, 0, sizeof *r);
  const size_t runs = TR_M * TR_H * TR_IC;
  r->nsamples = TR_S;
  r->nsamples_h = iseq(TR_H, 0);
  r->nsamples_h[0] = 7, r->nsamples_h[1] = 4, r->nsamples_h[2] = 2;
  r->t = dseq(TR_H * TR_S, 0);
  for (int j = 0; j < TR_H; j++)
    for (int k = r->nsamples_h[j]; k < TR_S; k++) r->t[j * TR_S + k] = NAN;
  r->status = iseq(runs, 0), r->cost = cseq(runs), r->wall_time = dseq(runs, 50);
  r->final_state = dseq(runs * 10, 100);
  r->reference_kind = "exact";
  samples_fill(st, &r->samples, (long)runs, TR_S, 13, 2);
  char err[1024];
  cr_assert_eq(nh_write_trajectory(path, st, r, "nhbench run tests/fixture.cfg", err, sizeof err), 0, "%s", err);
}

static void traj_free(traj_fx *x) {
  nh_trajectory_result *r = &x->r;
  free(r->nsamples_h), free(r->t), free(r->status), free(r->cost), free(r->wall_time), free(r->final_state);
  samples_free(&r->samples);
  study_free(&x->st);
}

Test(results, trajectory_round_trip) {
  char path[128];
  tmp_path(path, sizeof path, "traj");
  traj_fx x;
  traj_build(&x, path);
  const nh_trajectory_result *r = &x.r;
  nh_h5 f;
  open_ok(&f, path);
  double *q = ic_rows(&x.st, 0), *v = ic_rows(&x.st, 1);
  check_common(&f, &x.st, TR_IC, q, v, x.st.ic_names);
  free(q), free(v);
  hsize_t dh[1] = {TR_H}, dhs[2] = {TR_H, TR_S}, dr[3] = {TR_M, TR_H, TR_IC}, drx[4] = {TR_M, TR_H, TR_IC, 10};
  check_f64(&f, "h", "h", 1, dh, x.st.h, "time");
  check_i32(&f, "nsamples_h", "h", 1, dh, r->nsamples_h);
  check_f64(&f, "t", "h,sample", 2, dhs, r->t, "time");
  check_i32(&f, "status", "method,h,ic", 3, dr, r->status);
  check_cost(&f, "method,h,ic", 3, dr, r->cost);
  check_f64(&f, "wall_time", "method,h,ic", 3, dr, r->wall_time, "s");
  check_f64(&f, "final_state", "method,h,ic,state", 4, drx, r->final_state, "as q, v");
  check_observable_attrs(&f, TR_M);
  check_obs_b(&f, "method,h,ic", TR_M * TR_H * TR_IC, TR_S, 13, 2);
  hsize_t dobs[5] = {TR_M, TR_H, TR_IC, TR_S, 1};
  check_layout(f.group, "observables/obs_a", "method,h,ic,sample,component", 5, dobs, "energy");
  /* One run's slice: method 1, h[2], IC 3 is run (1·3 + 2)·4 + 3 = 23. */
  long long idx[3] = {1, 2, 3};
  hsize_t shape[5];
  double *s = nh_h5_doubles_at(&f, "observables/obs_b", "method,h,ic,sample,component", 3, idx, shape);
  cr_assert(s != NULL);
  for (int k = 0; k < TR_S; k++)
    for (int c = 0; c < 3; c++) cr_expect_eq(s[k * 3 + c], obs_value(23, k, 1, c), "slice sample %d component %d", k, c);
  free(s);
  expect_attr_str(f.group, "reference", "exact");
  cr_expect_eq(attr_num(f.group, "sample_every"), 3);
  nh_h5_close(&f);
  traj_free(&x);
  remove(path);
}

/* ---- one-step ----------------------------------------------------------------------------- */

typedef struct {
  nh_study st;
  nh_onestep_result r;
} one_fx;

enum { OS_M = 3, OS_H = 4, OS_IC = 2, OS_PER = 3, OS_P = OS_IC * OS_PER };

/* The fixture's one-step file; drawn: its points start from random states (the spec's ensemble)
 * at energy 1.535 from seed 77, else from given ones. */
static void one_build_from(one_fx *x, const char *path, int drawn) {
  nh_study *st = &x->st;
  nh_onestep_result *r = &x->r;
  study_init(st, NH_STUDY_ONESTEP, OS_M, conv_methods);
  study_ics(st, OS_IC);
  if (drawn) st->random_ics = 1, st->energy = 1.535, st->seed = 77;
  const double h[OS_H] = {0.1, 0.05, 0.2, 0.025};
  study_h(st, OS_H, h);
  st->npoints = OS_PER;
  memset(r, 0, sizeof *r);
  const size_t cells = OS_M * OS_H * OS_P;
  r->npoints = OS_P;
  r->point_t = dseq(OS_P, 0), r->points = dseq(OS_P * 10, 10);
  r->local_err = dseq(cells, 0), r->local_err_q = dseq(cells, 100), r->local_err_v = dseq(cells, 200);
  r->local_err[(1 * OS_H + 2) * OS_P + 4] = NAN;
  r->stepped = dseq(cells * 10, 1000), r->backward = dseq(cells * 10, 3000), r->lambda = dseq(cells * 2, 5000);
  r->lambda_err = dseq(cells, 300), r->adjoint_defect = dseq(cells, 400), r->cond = dseq(cells, 500);
  r->action_err = dseq(cells, 600), r->status = iseq(cells, 0);
  r->reversal_defect = dseq(cells, 700), r->cond_unscaled = dseq(cells, 800), r->embedding_residual = dseq(cells, 900);
  r->backward_lambda = dseq(cells * 2, 7000), r->lambda_start = dseq(cells * 2, 9000);
  r->adjoint_defect_lambda = dseq(cells, 1100);
  for (size_t i = 0; i < (size_t)OS_H * OS_P; i++) r->adjoint_defect[i] = r->cond[i] = NAN; /* method 0: none */
  /* failed steps: method 0's first cell, method 1's first and two more, method 2's last (24 cells a
   * method) */
  for (size_t i = 0; i < cells; i++) r->status[i] = i == 0 || i == 24 || i == 30 || i == 31 || i == 71;
  r->slope = dseq(OS_M, 0), r->slope_stderr = dseq(OS_M, 0), r->action_slope = dseq(OS_M, 0);
  r->slope[0] = 5.0625, r->slope[1] = 3.125, r->slope[2] = NAN;
  r->fit_first = iseq(OS_M, 0), r->fit_count = iseq(OS_M, 0), r->fit_floor = dseq(OS_H, 950);
  st->error_floor_auto = 1;
  r->fit_first[0] = 3, r->fit_first[1] = 1, r->fit_first[2] = -1;
  r->fit_count[0] = 2, r->fit_count[1] = 3, r->fit_count[2] = 0;
  /* The runner's maxima over the points (studies/onestep.c, tested there): here distinct values. */
  r->max_local_err = dseq(OS_M * OS_H, 0), r->max_action_err = dseq(OS_M * OS_H, 600);
  for (int i = 0; i < OS_M * OS_H; i++) r->max_local_err[i] = i * 6 + 5.125, r->max_action_err[i] = 600 + i * 6 + 5.125;
  r->max_local_err[1 * OS_H + 2] = NAN;
  r->reference_kind = "exact";
  char err[1024];
  cr_assert_eq(nh_write_onestep(path, st, r, "nhbench run tests/fixture.cfg", err, sizeof err), 0, "%s", err);
}

static void one_build(one_fx *x, const char *path) { one_build_from(x, path, 0); }

static void one_free(one_fx *x) {
  nh_onestep_result_free(&x->r); /* every array the fixture made, the rest NULL */
  study_free(&x->st);
}

Test(results, onestep_round_trip) {
  char path[128];
  tmp_path(path, sizeof path, "one");
  one_fx x;
  one_build(&x, path);
  const nh_onestep_result *r = &x.r;
  nh_h5 f;
  open_ok(&f, path);
  double *q = ic_rows(&x.st, 0), *v = ic_rows(&x.st, 1);
  check_common(&f, &x.st, OS_IC, q, v, x.st.ic_names);
  free(q), free(v);
  hsize_t dp[1] = {OS_P}, dpx[2] = {OS_P, 10}, dc[3] = {OS_M, OS_H, OS_P}, dcx[4] = {OS_M, OS_H, OS_P, 10};
  hsize_t dcl[4] = {OS_M, OS_H, OS_P, 2}, dm[1] = {OS_M}, dmh[2] = {OS_M, OS_H};
  check_f64(&f, "point_t", "point", 1, dp, r->point_t, "time");
  check_f64(&f, "points", "point,state", 2, dpx, r->points, "as q, v");
  check_i32(&f, "point_ic", "point", 1, dp, (int[]){0, 0, 0, 1, 1, 1});
  const char *const c[] = {"local_err", "local_err_q",     "local_err_v",   "lambda_err",         "adjoint_defect",
                           "cond",      "action_err",      "reversal_defect", "cond_unscaled",    "embedding_residual",
                           "adjoint_defect_lambda"};
  const double *cv[] = {r->local_err, r->local_err_q,     r->local_err_v,     r->lambda_err,    r->adjoint_defect,
                        r->cond,      r->action_err,      r->reversal_defect, r->cond_unscaled, r->embedding_residual,
                        r->adjoint_defect_lambda};
  for (int i = 0; i < 11; i++) check_f64(&f, c[i], "method,h,point", 3, dc, cv[i], NULL);
  check_i32(&f, "status", "method,h,point", 3, dc, r->status);
  check_f64(&f, "stepped", "method,h,point,state", 4, dcx, r->stepped, "as q, v");
  check_f64(&f, "backward", "method,h,point,state", 4, dcx, r->backward, "as q, v");
  check_f64(&f, "lambda", "method,h,point,multiplier", 4, dcl, r->lambda, "as lambda");
  check_f64(&f, "backward_lambda", "method,h,point,multiplier", 4, dcl, r->backward_lambda, "as lambda");
  check_f64(&f, "lambda_start", "method,h,point,multiplier", 4, dcl, r->lambda_start, "as lambda");
  check_f64(&f, "slope", "method", 1, dm, r->slope, "1");
  check_i32(&f, "fit_first", "method", 1, dm, r->fit_first);
  check_i32(&f, "slope_expected", "method", 1, dm, (int[]){5, 3, 2});
  /* h sorted: 0.025 0.05 0.1 0.2; method 0 from h[3] = 0.025, 2 points; method 1 from 0.05, 3. */
  check_f64(&f, "fit_h_min", "method", 1, dm, (double[]){0.025, 0.05, NAN}, "time");
  check_f64(&f, "fit_h_max", "method", 1, dm, (double[]){0.05, 0.2, NAN}, "time");
  /* As the fixture set them: (m·4 + h)·6 + 5 + 1/8, NaN at (1, 2). */
  double ml[OS_M * OS_H], ma[OS_M * OS_H];
  for (int i = 0; i < OS_M * OS_H; i++) ml[i] = i * 6 + 5.125, ma[i] = 600 + i * 6 + 5.125;
  ml[1 * OS_H + 2] = NAN;
  check_f64(&f, "max_local_err", "method,h", 2, dmh, ml, "as q, v");
  check_f64(&f, "max_action_err", "method,h", 2, dmh, ma, "action");
  /* cond 500.125 + i over method m's cells i = 24m .. 24m + 23; none for method 0. */
  check_f64(&f, "summary/cond_min", "method", 1, dm, (double[]){NAN, 524.125, 548.125}, "1");
  check_f64(&f, "summary/cond_max", "method", 1, dm, (double[]){NAN, 547.125, 571.125}, "1");
  check_f64(&f, "summary/max_adjoint_defect", "method", 1, dm, (double[]){NAN, 447.125, 471.125}, "as q, v");
  check_i32(&f, "summary/failures", "method", 1, dm, (int[]){1, 3, 1});
  cr_expect_eq(attr_num(f.group, "npoints"), OS_PER);
  cr_expect_eq(attr_num(f.group, "random_ics"), 0, "given initial conditions");
  cr_expect_eq(attr_num(f.group, "energy"), 0);
  cr_expect_eq(attr_num(f.group, "seed"), 0);
  expect_attr_str(f.group, "norm", "max");
  expect_attr_str(f.group, "reference", "exact");
  cr_expect_eq(attr_num(f.group, "reference_tol"), 1e-13);
  cr_expect(isnan(attr_num(f.group, "error_floor")), "the fixture's floor is auto");
  expect_attr_str(f.group, "error_floor_rule", NH_ERROR_FLOOR_AUTO);
  check_f64(&f, "fit_floor", "h", 1, (hsize_t[]){OS_H}, (double[]){950.125, 951.125, 952.125, 953.125}, "as q, v");
  nh_h5_close(&f);
  one_free(&x);
  remove(path);
}

/* Points from random states: the file says so, with the energy and the seed they were drawn from
 * (results/README.md), as an ensemble file does. */
Test(results, onestep_random_points_keep_their_energy_and_seed) {
  char path[128];
  tmp_path(path, sizeof path, "one-drawn");
  one_fx x;
  one_build_from(&x, path, 1);
  nh_h5 f;
  open_ok(&f, path);
  cr_expect_eq(attr_num(f.group, "random_ics"), 1);
  cr_expect_eq(attr_num(f.group, "energy"), 1.535);
  cr_expect_eq(attr_num(f.group, "seed"), 77);
  nh_h5_close(&f);
  one_free(&x);
  remove(path);
}

/* ---- work-precision ----------------------------------------------------------------------- */

typedef struct {
  nh_study st;
  nh_work_precision_result r;
} wp_fx;

enum { WP_M = 3, WP_H = 4, WP_R = 5 };

static void wp_build(wp_fx *x, const char *path) {
  nh_study *st = &x->st;
  nh_work_precision_result *r = &x->r;
  study_init(st, NH_STUDY_WORK_PRECISION, WP_M, conv_methods);
  const double h[WP_H] = {0.2, 0.1, 0.05, 0.025};
  study_h(st, WP_H, h);
  st->repeats = WP_R, st->time_limit = 60, st->norm = NH_NORM_2, st->reference_tol_auto = 1;
  memset(r, 0, sizeof *r);
  const size_t cells = WP_M * WP_H;
  r->err = dseq(cells * NH_WP_NORMS, 0), r->cost = cseq(cells), r->work = dseq(cells, 100);
  r->wall_time = dseq(cells, 200), r->wall_times = dseq(cells * WP_R, 300), r->status = iseq(cells, 0);
  r->pareto_work = iseq(cells, 0), r->pareto_time = iseq(cells, 0);
  for (size_t i = 0; i < cells; i++) r->status[i] = i == 7 ? NH_RUN_TIMED_OUT : 0, r->pareto_work[i] = i % 3 == 0,
                                      r->pareto_time[i] = i % 4 == 1;
  for (int i = 0; i < 5; i++) r->reference.x.q[i] = i, r->reference.x.v[i] = 10 + i;
  r->reference.kind = "rk8pd", r->reference.tol = 1e-15, r->reference.check_tol = 1e-16;
  r->reference.error = 3.5e-15;
  char err[1024];
  cr_assert_eq(nh_write_work_precision(path, st, r, "nhbench run tests/fixture.cfg", err, sizeof err), 0, "%s", err);
}

static void wp_free(wp_fx *x) {
  nh_work_precision_result *r = &x->r;
  free(r->err), free(r->cost), free(r->work), free(r->wall_time), free(r->wall_times), free(r->status);
  free(r->pareto_work), free(r->pareto_time);
  study_free(&x->st);
}

Test(results, work_precision_round_trip) {
  char path[128];
  tmp_path(path, sizeof path, "wp");
  wp_fx x;
  wp_build(&x, path);
  const nh_work_precision_result *r = &x.r;
  nh_h5 f;
  open_ok(&f, path);
  char *names[1] = {"default"};
  check_common(&f, &x.st, 1, x.st.x0.q, x.st.x0.v, names);
  hsize_t dmh[2] = {WP_M, WP_H}, dmhn[3] = {WP_M, WP_H, NH_WP_NORMS};
  hsize_t dmhr[3] = {WP_M, WP_H, WP_R};
  char *norms[NH_WP_NORMS] = {"qv_max", "qv_2", "q_max", "q_2", "v_max", "v_2"};
  check_strings(&f, "norms", "norm", NH_WP_NORMS, norms);
  check_f64(&f, "err", "method,h,norm", 3, dmhn, r->err, "as q, v");
  check_cost(&f, "method,h", 2, dmh, r->cost);
  check_f64(&f, "work", "method,h", 2, dmh, r->work, "1");
  check_f64(&f, "wall_time", "method,h", 2, dmh, r->wall_time, "s");
  check_f64(&f, "wall_times", "method,h,repeat", 3, dmhr, r->wall_times, "s");
  check_i32(&f, "status", "method,h", 2, dmh, r->status);
  check_i32(&f, "pareto_work", "method,h", 2, dmh, r->pareto_work);
  check_i32(&f, "pareto_time", "method,h", 2, dmh, r->pareto_time);
  const hsize_t dx[1] = {10};
  const double ref[10] = {0, 1, 2, 3, 4, 10, 11, 12, 13, 14};
  check_f64(&f, "reference_state", "state", 1, dx, ref, "as q, v");
  expect_attr_str(f.group, "reference", "rk8pd");
  cr_expect_eq(attr_num(f.group, "reference_tol"), 1e-15);
  cr_expect_eq(attr_num(f.group, "reference_error"), 3.5e-15);
  expect_attr_str(f.group, "reference_tol_rule", NH_REFERENCE_TOL_AUTO);
  expect_attr_str(f.group, "pareto_norm", "qv_2");
  expect_attr_str(f.group, "norm", "2");
  cr_expect_eq(attr_num(f.group, "repeats"), WP_R);
  cr_expect_eq(attr_num(f.group, "time_limit"), 60);
  nh_h5_close(&f);
  wp_free(&x);
  remove(path);
}

/* ---- failed writes ------------------------------------------------------------------------ */

static void expect_file(const char *path, const char *text) {
  char buf[256] = "";
  FILE *fp = fopen(path, "r");
  cr_assert(fp, "%s is gone", path);
  size_t n = fread(buf, 1, sizeof buf - 1, fp);
  buf[n] = '\0';
  fclose(fp);
  cr_expect_str_eq(buf, text, "%s was changed", path);
}

/* Files in dir other than `keep`. */
static int others_in(const char *dir, const char *keep) {
  DIR *d = opendir(dir);
  cr_assert(d);
  int n = 0;
  for (struct dirent *e; (e = readdir(d));)
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && strcmp(e->d_name, keep)) n++;
  closedir(d);
  return n;
}

/* A child process writes x's convergence file to path (as user nobody when run as root, so that
 * permissions hold), optionally under a file-size limit; no Criterion call happens in the child.
 * Its exit status: 0 if the write failed (-1) with a message naming path, 1 if it did not return
 * -1, 2 if the message is wrong, 3 if it could not drop root. */
static int child_write(const char *path, const conv_fx *x, int drop_root, long fsize_limit) {
  fflush(NULL);
  pid_t pid = test_fork();
  cr_assert_geq(pid, 0);
  if (pid == 0) {
    if (drop_root && geteuid() == 0 && (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))) _exit(3);
    if (fsize_limit > 0) {
      signal(SIGXFSZ, SIG_IGN);
      struct rlimit rl = {(rlim_t)fsize_limit, (rlim_t)fsize_limit};
      setrlimit(RLIMIT_FSIZE, &rl);
    }
    char err[2048] = "";
    int rc = nh_write_convergence(path, &x->st, &x->r, "test", err, sizeof err);
    /* Past the file-size limit the OS's reason is EFBIG: the message must say so. */
    const int reason = fsize_limit <= 0 || strstr(err, strerror(EFBIG));
    if (rc == -1 && !reason) fprintf(stderr, "no OS reason in: %s\n", err);
    _exit(rc != -1 ? 1 : strstr(err, path) && strstr(err, "unchanged") && reason ? 0 : 2);
  }
  int status;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* A convergence fixture (written once to a scratch file) and an old file at DIR/out.h5. */
static void failing_setup(conv_fx *x, char *dir, size_t dlen, char *path, size_t plen, const char *tag) {
  char scratch[128];
  tmp_path(scratch, sizeof scratch, tag);
  conv_build(x, scratch);
  remove(scratch);
  snprintf(dir, dlen, "/tmp/nhbench-results-%s-%d", tag, (int)getpid());
  snprintf(path, plen, "%s/out.h5", dir);
  cr_assert_eq(mkdir(dir, 0755), 0, "mkdir %s", dir);
  test_write_file(path, "old results");
}

/* A pipe where the results go (as /dev/null would be) is refused before anything is created: the
 * rename onto it would replace it. */
Test(results, write_onto_a_pipe_refused) {
  char dir[128], path[192], err[1024] = "";
  conv_fx x;
  failing_setup(&x, dir, sizeof dir, path, sizeof path, "pipe");
  remove(path);
  cr_assert_eq(mkfifo(path, 0600), 0, "mkfifo %s", path);
  cr_expect_eq(nh_write_convergence(path, &x.st, &x.r, "test", err, sizeof err), -1);
  char want[400];
  snprintf(want, sizeof want, "%s: not a regular file (a directory, device, pipe or socket); nothing written there",
           path);
  cr_expect_str_eq(err, want);
  struct stat sb;
  cr_expect(stat(path, &sb) == 0 && S_ISFIFO(sb.st_mode), "%s is no longer the pipe", path);
  remove(path);
  cr_expect_eq(rmdir(dir), 0, "%s holds a file left behind", dir);
  conv_free(&x);
}

Test(results, failed_write_in_unwritable_directory_keeps_old_file) {
  char dir[128], path[192];
  conv_fx x;
  failing_setup(&x, dir, sizeof dir, path, sizeof path, "ro");
  chmod(path, 0644);
  chmod(dir, 0555);
  int rc = child_write(path, &x, 1, 0);
  chmod(dir, 0755);
  cr_expect_eq(rc, 0, "the write into a read-only directory: child status %d", rc);
  expect_file(path, "old results");
  cr_expect_eq(others_in(dir, "out.h5"), 0, "a temporary file was left behind");
  remove(path), rmdir(dir);
  conv_free(&x);
}

/* A file system full (here: the file-size limit) when the temporary file is created: the message
 * carries the OS's reason and no empty temporary file is left (issue 47 item 7). */
Test(results, failed_create_leaves_no_temporary) {
  char dir[128], path[192];
  conv_fx x;
  failing_setup(&x, dir, sizeof dir, path, sizeof path, "create");
  for (long limit = 1; limit <= 4096; limit *= 8) {
    int rc = child_write(path, &x, 0, limit);
    cr_expect_eq(rc, 0, "the write with a %ld-byte file limit: child status %d", limit, rc);
    expect_file(path, "old results");
    cr_expect_eq(others_in(dir, "out.h5"), 0, "a temporary file was left behind (limit %ld)", limit);
  }
  remove(path), rmdir(dir);
  conv_free(&x);
}

Test(results, failed_write_disk_full_keeps_old_file) {
  char dir[128], path[192];
  conv_fx x;
  failing_setup(&x, dir, sizeof dir, path, sizeof path, "full");
  int rc = child_write(path, &x, 0, 6000); /* the file needs more than 6000 bytes */
  cr_expect_eq(rc, 0, "the write with a 6000-byte file limit: child status %d", rc);
  expect_file(path, "old results");
  cr_expect_eq(others_in(dir, "out.h5"), 0, "a temporary file was left behind");
  remove(path), rmdir(dir);
  conv_free(&x);
}

Test(results, failed_write_missing_field_keeps_old_file) {
  char dir[128], path[192];
  snprintf(dir, sizeof dir, "/tmp/nhbench-results-field-%d", (int)getpid());
  snprintf(path, sizeof path, "%s/out.h5", dir);
  cr_assert_eq(mkdir(dir, 0755), 0);
  test_write_file(path, "old results");
  traj_fx x;
  traj_build(&x, path); /* a good file first, then the failing one over it */
  char before[64];
  FILE *fp = fopen(path, "rb");
  cr_assert(fp && fread(before, 1, sizeof before, fp) == sizeof before);
  fclose(fp);
  double *keep = x.r.final_state;
  x.r.final_state = NULL;
  char err[2048];
  cr_expect_eq(nh_write_trajectory(path, &x.st, &x.r, "test", err, sizeof err), -1);
  cr_expect(strstr(err, "final_state") && strstr(err, path), "the message names the path and the field: %s", err);
  x.r.final_state = keep;
  char after[64];
  fp = fopen(path, "rb");
  cr_assert(fp && fread(after, 1, sizeof after, fp) == sizeof after);
  fclose(fp);
  cr_expect(memcmp(before, after, sizeof before) == 0, "the good file was changed");
  nh_h5 f;
  open_ok(&f, path);
  nh_h5_close(&f);
  cr_expect_eq(others_in(dir, "out.h5"), 0, "a temporary file was left behind");
  traj_free(&x);
  remove(path), rmdir(dir);
}

/* ---- nhbench info and export -------------------------------------------------------------- */

static void expect_run(const char *args, int want, const char *needle) {
  static char out[1 << 18];
  int rc = test_run_nhbench(args, out, sizeof out);
  cr_expect_eq(rc, want, "nhbench %s: exit status %d, want %d; output:\n%.3000s", args, rc, want, out);
  if (needle) cr_expect(strstr(out, needle) != NULL, "nhbench %s: output lacks '%s':\n%.3000s", args, needle, out);
  /* The reader words every failure itself: the HDF5 library's own error stack is never shown. */
  cr_expect(strstr(out, "HDF5-DIAG") == NULL, "nhbench %s: HDF5's error stack printed:\n%.3000s", args, out);
}

/* The data rows (not comments, not blank) of an export, as numbers: row r, column c. */
typedef struct {
  int rows, cols[512];
  double v[512][16];
  int blocks;
} table;

static void export_table(const char *args, table *t) {
  static char out[1 << 18];
  int rc = test_run_nhbench(args, out, sizeof out);
  cr_assert_eq(rc, 0, "nhbench %s: exit status %d:\n%.3000s", args, rc, out);
  memset(t, 0, sizeof *t);
  for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
    if (line[0] == '#') {
      if (strncmp(line, "# method", 8) == 0) t->blocks++;
      continue;
    }
    char *p = line, *end;
    int c = 0;
    for (double x = strtod(p, &end); end != p && c < 16; x = strtod(p, &end)) t->v[t->rows][c++] = x, p = end;
    if (c && t->rows < 511) t->cols[t->rows++] = c;
  }
}

/* expect_run and export_table with the arguments fmt, its one %s replaced by the file path. */
static void expect_on(const char *path, const char *fmt, int want, const char *needle) {
  char args[512];
  snprintf(args, sizeof args, fmt, path);
  expect_run(args, want, needle);
}

static void export_on(const char *path, const char *fmt, table *t) {
  char args[512];
  snprintf(args, sizeof args, fmt, path);
  export_table(args, t);
}

/* A convergence file with no step sizes (h of size 0): info refuses it, naming the dataset. */
Test(results_cli, info_of_a_convergence_without_step_sizes) {
  char path[128], err[1024];
  tmp_path(path, sizeof path, "cli-conv-noh");
  conv_fx x;
  conv_fill(&x);
  x.st.nh = 0;
  for (int m = 0; m < 3; m++) x.r.fit_first[m] = -1, x.r.fit_count[m] = 0;
  cr_assert_eq(nh_write_convergence(path, &x.st, &x.r, "nhbench run tests/fixture.cfg", err, sizeof err), 0, "%s",
               err);
  x.st.nh = 4;
  char want[256];
  snprintf(want, sizeof want, "nhbench info: %s: no step sizes in /convergence/h\n", path);
  expect_on(path, "info %s", 2, want);
  conv_free(&x);
  remove(path);
}

/* The info_and_export tests share their shape (build a fixture, run nhbench, read a table) but
 * each reads another study kind with its own expected values: data, not code (not merged). */
Test(results_cli, info_and_export_convergence) {
  char path[128];
  tmp_path(path, sizeof path, "cli-conv");
  conv_fx x;
  conv_build(&x, path);
  /* #, expected (* an exception), observed +- se, ok, fit h range, err(h_min), failed, method */
  expect_on(path, "info %s", 0, "   0       4   4.062 +- 1.0e-03  ok      0.05 .. 0.2   1.03e+02      0  rk4");
  expect_on(path, "info %s", 0, "\n   2       2*            no fit  NO ");
  expect_on(path, "info %s", 0, "\n* expected order differs from the claimed one:\n   2 claimed 1, expected 2: x\n");
  expect_on(path, "export %s study", 0, "convergence\n");
  table t;
  export_on(path, "export %s orders", &t);
  cr_assert_eq(t.rows, 3);
  cr_expect(t.v[0][4] == 0.05 && t.v[0][5] == 0.2 && t.v[1][4] == 0.1 && isnan(t.v[2][4]), "fit h range columns");
  cr_expect(t.v[2][6] == 2 && t.v[2][7] == 0 && t.v[1][2] == 2.03125, "expected, ok, observed");
  export_on(path, "export %s convergence --methods 2", &t);
  cr_assert_eq(t.rows, 4);
  cr_assert_eq(t.cols[1], 11);
  /* Method 2, h[1]: cell 9 of the [method][h] datasets. */
  const double want[11] = {0.1, 109.125, 209.125, 309.125, 709.125, 0, 759.125, 409.125, 509.125, 609.125, 659.125};
  for (int c = 0; c < 11; c++) cr_expect_eq(t.v[1][c], want[c], "convergence column %d: %g", c, t.v[1][c]);
  expect_on(path, "export %s energy", 2, "is a convergence study; table 'energy' is for ensemble studies");
  expect_on(path, "export %s convergence --methods 3", 2, "method indices 0..2");
  expect_on(path, "export %s attr reference", 0, "rk8pd\n");
  expect_on(path, "export %s attr err/units", 0, "as q, v\n");
  conv_free(&x);
  remove(path);
}

Test(results_cli, info_and_export_ensemble) {
  char path[128];
  tmp_path(path, sizeof path, "cli-ens");
  ens_fx x;
  ens_build(&x, path);
  expect_on(path, "info %s", 0, "methods      4: 2 listed in the spec, 2 more from 1 grid");
  /* The failed runs by cause, one line per method with a failure, in method order. */
  char causes[512];
  snprintf(causes, sizeof causes, "Failed runs by cause (status of each IC that did not reach T):\n%4d  %-28s  rk4\n%4d  %-28s  nh_newmark(beta=0.1,beta2=0.1,", 0, "1 solver failed", 1, "1 diverged");
  expect_on(path, "info %s", 0, causes);
  snprintf(causes, sizeof causes, "\n%4d  %-28s  nh_newmark(beta=0.1,beta2=0,", 3, "1 non-finite");
  expect_on(path, "info %s", 0, causes);
  expect_on(path, "export %s methods --primary", 0,
            "# index name label (label: to the end of the line)\n0 rk4 rk4\n1 nh_newmark(beta=0.1,beta2=0.1,");
  table t;
  export_on(path, "export %s methods --primary", &t);
  cr_expect_eq(t.rows, 2, "only the listed methods");
  export_on(path, "export %s variance", &t);
  cr_expect(t.blocks == 2 && t.rows == 2 * ENS_S, "variance: a block per listed method");
  export_on(path, "export %s quantiles --methods 1", &t);
  cr_assert_eq(t.rows, ENS_S, "quantiles: one row per sample of method 1");
  for (int k = 0; k < ENS_S; k++) {
    const size_t c = 1 * ENS_S + (size_t)k;
    cr_expect(t.v[k][0] == x.r.t[k] && t.v[k][1] == x.r.dE_q10[c] && t.v[k][2] == x.r.dE_q50[c] &&
                  t.v[k][3] == x.r.dE_q90[c] && t.v[k][4] == x.r.dE_count[c],
              "quantiles row %d: %g %g %g %g %g", k, t.v[k][0], t.v[k][1], t.v[k][2], t.v[k][3], t.v[k][4]);
  }
  export_on(path, "export %s grid --stat final_var", &t);
  cr_assert_eq(t.rows, 4);
  /* (0, 0) is method 2: one IC left at T, so no variance; (0.1, 0.1) method 1: dE_var[1][5]. */
  cr_expect(isnan(t.v[0][2]) && t.v[0][3] == 2, "cell (0, 0): %g, method %g", t.v[0][2], t.v[0][3]);
  cr_expect(isnan(t.v[1][2]) && t.v[1][3] == -1, "cell (0, 0.1) skipped");
  cr_expect(t.v[3][2] == 511.125 && t.v[3][3] == 1 && t.v[3][4] == 1 && t.v[3][5] == 3, "cell (0.1, 0.1)");
  export_on(path, "export %s energy --method 3 --ics 1:3", &t);
  cr_assert_eq(t.rows, 12);
  cr_expect_eq(t.blocks, 2);
  cr_expect(t.v[0][1] == 1000 + (3 * 3 + 1) * 6 + 0.125 && t.v[7][1] == 1000 + (3 * 3 + 2) * 6 + 1.125, "dE rows");
  export_on(path, "export %s series --observable obs_b --method 1 --ic 2", &t);
  cr_assert_eq(t.rows, 6);
  for (int k = 0; k < 6; k++)
    for (int c = 0; c < 3; c++)
      cr_expect(same(t.v[k][1 + c], k >= 4 ? NAN : obs_value(5, k, 1, c)), "series sample %d component %d", k, c);
  expect_on(path, "export %s series --h 1", 2, "one step size");
  expect_on(path, "export %s observables", 0, "absent for method 1: method 1 has no a");
  ens_free(&x);
  remove(path);
}

/* Every status in the causes line: method 0 with two timed-out ICs (4, the last known status) and
 * one solver failure, method 1 with statuses no nhbench writes (-1 and 9) besides a non-finite
 * one, method 2 all ok (no line), method 3 diverged once. Counts by hand from the statuses set. */
Test(results_cli, info_failure_causes_every_status) {
  char path[128];
  tmp_path(path, sizeof path, "cli-causes");
  ens_fx x;
  ens_build(&x, path);
  const int status[ENS_M * ENS_IC] = {NH_RUN_TIMED_OUT, 1, NH_RUN_TIMED_OUT, -1, 2, 9, 0, 0, 0, 0, NH_RUN_DIVERGED, 0};
  memcpy(x.r.status, status, sizeof status);
  char err[1024];
  cr_assert_eq(nh_write_ensemble(path, &x.st, &x.r, "nhbench run tests/fixture.cfg", err, sizeof err), 0, "%s", err);
  char causes[512];
  snprintf(causes, sizeof causes,
           "Failed runs by cause (status of each IC that did not reach T):\n%4d  %-28s  rk4\n%4d  %-28s  "
           "nh_newmark(beta=0.1,beta2=0.1,",
           0, "1 solver failed, 2 timed out", 1, "1 non-finite, 2 unknown status");
  expect_on(path, "info %s", 0, causes);
  snprintf(causes, sizeof causes, "\n%4d  %-28s  nh_newmark(beta=0.1,beta2=0,", 3, "1 diverged");
  expect_on(path, "info %s", 0, causes);
  ens_free(&x);
  remove(path);
}

Test(results_cli, info_and_export_trajectory) {
  char path[128];
  tmp_path(path, sizeof path, "cli-traj");
  traj_fx x;
  traj_build(&x, path);
  expect_on(path, "info %s", 0, "obs_a                    absent: method 1 has no a");
  expect_on(path, "info %s", 0, ", IC 0 (ic_0): "); /* every IC is listed, the first too */
  /* Method 1, h[2], IC 3 (run 23): status 23 is no known status; 2 samples. */
  expect_on(path, "info %s", 0, "h = 0.4, IC 3 (ic_3): unknown status, 2 samples");
  table t;
  export_on(path, "export %s series --observable obs_b --method 1 --h 1 --ic 2", &t);
  cr_assert_eq(t.rows, 4, "nsamples_h[1] = 4 rows");
  for (int k = 0; k < 4; k++) {
    cr_expect_eq(t.v[k][0], 1 * 7 + k + 0.125, "t of sample %d", k);
    for (int c = 0; c < 3; c++) cr_expect_eq(t.v[k][1 + c], obs_value((1 * 3 + 1) * 4 + 2, k, 1, c));
  }
  expect_on(path, "export %s series --h 3", 2, "--h 3");
  expect_on(path, "export %s series --observable nosuch", 2, "has obs_a obs_b");
  traj_free(&x);
  remove(path);
}

Test(results_cli, info_and_export_onestep) {
  char path[128];
  tmp_path(path, sizeof path, "cli-one");
  one_fx x;
  one_build(&x, path);
  expect_on(path, "info %s", 0, "       5  5.062 +- 1.2e-01    0.025 .. 0.05   0.125          -");
  table t;
  export_on(path, "export %s local_error --methods 1", &t);
  cr_assert_eq(t.rows, 4);
  cr_expect(t.v[0][0] == 0.1 && t.v[0][1] == (1 * 4 + 0) * 6 + 5.125 && isnan(t.v[2][1]), "max local error");
  cr_expect(t.v[3][2] == 600 + (1 * 4 + 3) * 6 + 5.125, "max action error");
  export_on(path, "export %s slopes", &t);
  cr_assert_eq(t.rows, 3);
  cr_expect(t.v[1][2] == 3 && t.v[1][3] == 3.125 && t.v[1][5] == 0.05 && t.v[1][6] == 0.2, "slopes row 1");
  cr_expect(t.v[2][9] == 548.125 && t.v[2][10] == 571.125, "cond range of method 2");
  one_free(&x);
  remove(path);
}

Test(results_cli, info_and_export_work_precision) {
  char path[128];
  tmp_path(path, sizeof path, "cli-wp");
  wp_fx x;
  wp_build(&x, path);
  expect_on(path, "info %s", 0, "timed out");
  expect_on(path, "info %s", 0, "Error at T in the qv_2 norm");
  table t;
  export_on(path, "export %s work_precision --methods 1 --norm q_2", &t);
  cr_assert_eq(t.rows, 4);
  /* Method 1, h[3]: cell 7, err column 3 (q_2); timed out; pareto_work 7 % 3 != 0, pareto_time 7 % 4 != 1. */
  cr_expect(t.v[3][0] == 0.025 && t.v[3][1] == 107.125 && t.v[3][2] == 207.125, "h work wall_time");
  cr_expect(t.v[3][3] == 7 * 6 + 3 + 0.125, "err in q_2: %g", t.v[3][3]);
  cr_expect(t.v[3][4] == 0 && t.v[3][5] == 0 && t.v[3][6] == NH_RUN_TIMED_OUT, "flags and status");
  cr_expect(t.v[2][4] == 1 && t.v[1][5] == 1, "pareto flags of cells 6 and 5");
  expect_on(path, "export %s work_precision --norm l_3", 2, "--norm 'l_3'");
  wp_free(&x);
  remove(path);
}

/* ---- files this nhbench refuses ----------------------------------------------------------- */

/* A file as nhbench wrote schema version 1 (version attribute: 1, `version` = -1: none). */
static void write_v1(const char *path, int version) {
  hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  cr_assert_geq(f, 0);
  if (version >= 0) H5LTset_attribute_int(f, "/", "schema_version", &version, 1);
  H5LTset_attribute_string(f, "/", "study", "convergence");
  H5LTset_attribute_string(f, "/", "spec_file", "studies/chaotic_convergence.cfg");
  hid_t g = H5Gcreate2(f, "convergence", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  hsize_t n = 2;
  double h[2] = {0.1, 0.05};
  H5LTmake_dataset_double(g, "h", 1, &n, h);
  H5Gclose(g);
  H5Fclose(f);
}

Test(results_cli, version_1_files_refused) {
  char path[128];
  tmp_path(path, sizeof path, "v1");
  const char *msg = "written with results schema version 1 by an older nhbench; re-run the study "
                    "(`nhbench run studies/chaotic_convergence.cfg`) to get version 3";
  write_v1(path, 1);
  expect_on(path, "info %s", 2, msg);
  expect_on(path, "export %s study", 2, msg);
  write_v1(path, -1); /* before schema_version existed */
  expect_on(path, "info %s", 2, msg);
  write_v1(path, 4);
  expect_on(path, "info %s", 2, "results schema version 4 (written by a newer nhbench); this nhbench reads versions 2 to 3");
  /* Negative control: the same reader opens a version-3 file. */
  conv_fx x;
  conv_build(&x, path);
  expect_on(path, "info %s", 0, "convergence study");
  conv_free(&x);
  remove(path);
}

/* An ensemble of schema version 3 stores its one h as every kind does, the dataset h; version 2
 * stored the group's attribute h, and such a file is still read (export steps, info, energy). */
Test(results_cli, version_2_ensembles_read) {
  char path[128];
  tmp_path(path, sizeof path, "v2-ensemble");
  ens_fx x;
  ens_build(&x, path);
  ens_free(&x);
  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  double h = 0;
  hsize_t n = 0;
  cr_assert_geq(H5LTget_dataset_info(f, "/ensemble/h", &n, NULL, NULL), 0, "no dataset /ensemble/h");
  cr_expect_eq(n, 1);
  cr_expect_geq(H5LTread_dataset_double(f, "/ensemble/h", &h), 0);
  cr_expect_eq(h, 0.25);
  cr_expect_eq(H5Aexists_by_name(f, "/ensemble", "h", H5P_DEFAULT), 0, "no attribute h any more");
  H5Fclose(f);
  expect_on(path, "export %s steps", 0, "# index h\n0 0.25\n");
  /* As version 2 wrote it. */
  f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  const int two = 2;
  H5LTset_attribute_int(f, "/", "schema_version", &two, 1);
  H5Ldelete(f, "/ensemble/h", H5P_DEFAULT);
  H5LTset_attribute_double(f, "/ensemble", "h", &h, 1);
  H5Fclose(f);
  expect_on(path, "export %s steps", 0, "# index h\n0 0.25\n");
  expect_on(path, "info %s", 0, "  h            0.25 (");
  expect_on(path, "export %s energy", 0, "# t dE");
  /* Version 2 without the attribute either: refused, naming it. */
  f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  H5Adelete_by_name(f, "/ensemble", "h", H5P_DEFAULT);
  H5Fclose(f);
  expect_on(path, "export %s steps", 2, "'h'");
  /* Version 3 without its dataset h: refused, naming it. */
  f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  const int three = 3;
  H5LTset_attribute_int(f, "/", "schema_version", &three, 1);
  H5Fclose(f);
  expect_on(path, "export %s steps", 2, "missing dataset /ensemble/h");
  expect_on(path, "info %s", 2, "missing dataset /ensemble/h");
  /* The other kinds stored h as a dataset in version 2 already: read from there. */
  conv_fx c;
  conv_build(&c, path);
  conv_free(&c);
  f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  H5LTset_attribute_int(f, "/", "schema_version", &two, 1);
  H5Fclose(f);
  expect_on(path, "export %s steps", 0, "# index h\n0 0.4\n1 0.1\n2 0.2\n3 0.05\n");
  remove(path);
}

/* Copies the first `bytes` of src to dst (bytes < 0: all). */
static void copy_file(const char *src, const char *dst, long bytes) {
  FILE *a = fopen(src, "rb"), *b = fopen(dst, "wb");
  cr_assert(a && b);
  char buf[4096];
  long total = 0;
  for (size_t n; (n = fread(buf, 1, sizeof buf, a)) > 0 && (bytes < 0 || total < bytes); total += (long)n)
    fwrite(buf, 1, bytes < 0 || total + (long)n <= bytes ? n : (size_t)(bytes - total), b);
  fclose(a), fclose(b);
}

Test(results_cli, damaged_and_foreign_files_refused) {
  char good[128], bad[128];
  tmp_path(good, sizeof good, "good");
  tmp_path(bad, sizeof bad, "bad");
  ens_fx x;
  ens_build(&x, good);
  ens_free(&x);
  /* Cut short: the HDF5 library cannot read it; exit 2, no crash. */
  struct stat sb;
  cr_assert_eq(stat(good, &sb), 0);
  for (long cut = 512; cut < sb.st_size; cut += sb.st_size / 7) {
    copy_file(good, bad, cut);
    expect_on(bad, "info %s", 2, bad);
    expect_on(bad, "export %s energy", 2, bad);
  }
  /* Not HDF5; missing; a directory; HDF5 but not nhbench's. */
  test_write_file(bad, "method,h\n1,2\n");
  expect_on(bad, "info %s", 2, "not an HDF5 file");
  remove(bad);
  expect_on(bad, "info %s", 2, "No such file");
  expect_run("info /tmp", 2, "is a directory");
  hid_t f = H5Fcreate(bad, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  H5Fclose(f);
  expect_on(bad, "info %s", 2, "not an nhbench results file");
  /* A dataset whose dimensions attribute disagrees with the schema (swapped). */
  copy_file(good, bad, -1);
  f = H5Fopen(bad, H5F_ACC_RDWR, H5P_DEFAULT);
  hid_t ds = H5Dopen2(f, "/ensemble/dE", H5P_DEFAULT);
  H5Adelete(ds, "dimensions");
  H5LTset_attribute_string(f, "/ensemble/dE", "dimensions", "ic,method,sample");
  H5Dclose(ds), H5Fclose(f);
  expect_on(bad, "export %s energy", 2, "dataset /ensemble/dE has dimensions 'ic,method,sample', expected 'method,ic,sample'");
  /* A summary dataset of the wrong length. */
  copy_file(good, bad, -1);
  f = H5Fopen(bad, H5F_ACC_RDWR, H5P_DEFAULT);
  H5Ldelete(f, "/ensemble/summary/ok", H5P_DEFAULT);
  hsize_t n = 3;
  int ok[3] = {1, 2, 3};
  H5LTmake_dataset_int(f, "/ensemble/summary/ok", 1, &n, ok);
  H5LTset_attribute_string(f, "/ensemble/summary/ok", "dimensions", "method");
  H5Fclose(f);
  expect_on(bad, "info %s", 2, "has 3 entries along dimension method, other datasets 4");
  /* A study dataset of the wrong length: export dims reads every dataset for its dimensions. */
  copy_file(good, bad, -1);
  f = H5Fopen(bad, H5F_ACC_RDWR, H5P_DEFAULT);
  H5Ldelete(f, "/ensemble/E0", H5P_DEFAULT);
  n = 1;
  const double e0 = 1;
  H5LTmake_dataset_double(f, "/ensemble/E0", 1, &n, &e0);
  H5LTset_attribute_string(f, "/ensemble/E0", "dimensions", "ic");
  H5Fclose(f);
  expect_on(bad, "export %s dims", 2, "entries along dimension ic, other datasets 1");
  expect_on(good, "export %s dims", 0, "\nic ");
  /* What is not a dataset with dimensions is no study dimension: a soft link, a dataset without the
   * attribute; export dims reads past them. */
  copy_file(good, bad, -1);
  f = H5Fopen(bad, H5F_ACC_RDWR, H5P_DEFAULT);
  H5Lcreate_soft("/ensemble/E0", f, "/ensemble/E0_again", H5P_DEFAULT, H5P_DEFAULT);
  {
    const hsize_t seven = 7;
    const double zeros[7] = {0};
    H5LTmake_dataset_double(f, "/ensemble/stray", 1, &seven, zeros);
  }
  H5Fclose(f);
  expect_on(bad, "export %s dims", 0, "\nsample ");
  /* State labels that do not match the degrees of freedom: export ics refuses, counting both. */
  copy_file(good, bad, -1);
  f = H5Fopen(bad, H5F_ACC_RDWR, H5P_DEFAULT);
  H5Ldelete(f, "/ensemble/state_labels", H5P_DEFAULT);
  {
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, 8);
    const hsize_t four = 4;
    hid_t sp = H5Screate_simple(1, &four, NULL);
    hid_t lab = H5Dcreate2(f, "/ensemble/state_labels", t, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    const char text[4][8] = {"q[0]", "q[1]", "v[0]", "v[1]"};
    H5Dwrite(lab, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, text);
    H5Dclose(lab), H5Sclose(sp), H5Tclose(t);
  }
  H5LTset_attribute_string(f, "/ensemble/state_labels", "dimensions", "state");
  H5Fclose(f);
  expect_on(bad, "export %s ics", 2, "4 state labels for 5 degrees of freedom");
  /* Datasets of the wrong class, both ways: reals where integers belong, integers where reals. */
  copy_file(good, bad, -1);
  f = H5Fopen(bad, H5F_ACC_RDWR, H5P_DEFAULT);
  H5Ldelete(f, "/ensemble/summary/ok", H5P_DEFAULT);
  n = 4;
  const double okd[4] = {1, 2, 3, 4};
  H5LTmake_dataset_double(f, "/ensemble/summary/ok", 1, &n, okd);
  H5LTset_attribute_string(f, "/ensemble/summary/ok", "dimensions", "method");
  H5Fclose(f);
  expect_on(bad, "info %s", 2, "dataset /ensemble/summary/ok holds floating-point numbers, expected integers");
  copy_file(good, bad, -1);
  f = H5Fopen(bad, H5F_ACC_RDWR, H5P_DEFAULT);
  H5Ldelete(f, "/ensemble/t", H5P_DEFAULT);
  n = ENS_S;
  int ti[ENS_S] = {0};
  H5LTmake_dataset_int(f, "/ensemble/t", 1, &n, ti);
  H5LTset_attribute_string(f, "/ensemble/t", "dimensions", "sample");
  H5Fclose(f);
  expect_on(bad, "export %s variance", 2, "dataset /ensemble/t holds integers, expected floating-point numbers");
  /* A dataset that declares 2^40 values and stores none (chunked, never written): refused before
   * any allocation (a damaged 39 KB file once made the reader ask for 14.8 GB). */
  copy_file(good, bad, -1);
  f = H5Fopen(bad, H5F_ACC_RDWR, H5P_DEFAULT);
  H5Ldelete(f, "/ensemble/t", H5P_DEFAULT);
  hsize_t huge = (hsize_t)1 << 40, chunk = 1024;
  hid_t space = H5Screate_simple(1, &huge, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(dcpl, 1, &chunk);
  ds = H5Dcreate2(f, "/ensemble/t", H5T_IEEE_F64LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  H5Dclose(ds), H5Pclose(dcpl), H5Sclose(space);
  H5LTset_attribute_string(f, "/ensemble/t", "dimensions", "sample");
  H5Fclose(f);
  expect_on(bad, "export %s variance", 2, "dataset /ensemble/t declares 1099511627776 values but stores 0 bytes");
  remove(good), remove(bad);
}

/* The energy tables of the ensemble fixture, by its formulas: dE[m][ic][s] = 1000 + (m·3 + ic)·6 +
 * s + 1/8, t[s] = s + 1/8, E0[ic] = 50 + ic + 1/8. --ics: A:B, A: (to the end), A (one), the
 * default (the first min(5, ICs)), ranges outside the ICs refused; --relative divides by E0;
 * energy-all-methods: one IC, a block per listed method. */
Test(results_cli, export_energy_tables_by_hand) {
  char path[128];
  tmp_path(path, sizeof path, "cli-energy");
  ens_fx x;
  ens_build(&x, path);
#define DE(m, ic, s) (1000 + ((m) * ENS_IC + (ic)) * ENS_S + (s) + 0.125)
  static const struct {
    const char *args;
    int method, ic0, nic, relative;
  } cases[] = {
      {"--method 2 --ics 1:3", 2, 1, 2, 0}, {"--method 1 --ics 1:", 1, 1, 2, 0}, {"--method 3 --ics 2", 3, 2, 1, 0},
      {"", 0, 0, 3, 0},                     {"--method 1 --ics 0:2 --relative", 1, 0, 2, 1},
  };
  for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
    char args[256];
    table t;
    snprintf(args, sizeof args, "export %s energy %s", path, cases[k].args);
    export_table(args, &t);
    cr_assert_eq(t.blocks, cases[k].nic, "%s: %d blocks", cases[k].args, t.blocks);
    cr_assert_eq(t.rows, cases[k].nic * ENS_S, "%s: %d rows", cases[k].args, t.rows);
    for (int b = 0; b < cases[k].nic; b++)
      for (int s = 0; s < ENS_S; s++) {
        const int ic = cases[k].ic0 + b;
        const double want = DE(cases[k].method, ic, s) / (cases[k].relative ? 50 + ic + 0.125 : 1);
        const double *row = t.v[b * ENS_S + s];
        cr_expect(row[0] == s + 0.125 && row[1] == want, "%s: IC %d sample %d: %.17g %.17g, want %.17g", cases[k].args,
                  ic, s, row[0], row[1], want);
      }
  }
  expect_on(path, "export %s energy --method 3 --ics 1", 0, "# method 3 nh_newmark(beta=0.1,beta2=0,alpha=0.5");
  expect_on(path, "export %s energy --method 3 --ics 1", 0, ", IC 1, E0 51.125, status 0\n");
  expect_on(path, "export %s energy --method 1 --ics 2", 0, ", IC 2, E0 52.125, status 3\n");
  expect_on(path, "export %s energy --ics 3", 2, "--ics 3:4: ");
  expect_on(path, "export %s energy --ics 3", 2, "has initial conditions 0..2 (A:B selects A, ..., B-1)");
  expect_on(path, "export %s energy --ics 1:4", 2, "--ics 1:4: ");
  expect_on(path, "export %s energy --ics 2:2", 2, "--ics 2:2: ");
  expect_on(path, "export %s energy --ics 2:1", 2, "--ics 2:1: ");
  expect_on(path, "export %s energy --method 4", 2, "--method 4: ");
  expect_on(path, "export %s energy --method 3 --ics 0:3", 0, NULL);
  /* One IC, several methods. */
  table t;
  char args[256];
  snprintf(args, sizeof args, "export %s energy-all-methods --ic 2 --methods 3,0 --relative", path);
  export_table(args, &t);
  cr_assert(t.blocks == 2 && t.rows == 2 * ENS_S, "%d blocks, %d rows", t.blocks, t.rows);
  for (int s = 0; s < ENS_S; s++) {
    cr_expect(t.v[s][0] == s + 0.125 && t.v[s][1] == DE(3, 2, s) / 52.125, "method 3 sample %d: %.17g", s, t.v[s][1]);
    cr_expect(t.v[ENS_S + s][1] == DE(0, 2, s) / 52.125, "method 0 sample %d: %.17g", s, t.v[ENS_S + s][1]);
  }
  snprintf(args, sizeof args, "export %s energy-all-methods", path);
  export_table(args, &t);
  cr_assert(t.blocks == 2 && t.rows == 2 * ENS_S, "the listed methods by default, IC 0: %d blocks", t.blocks);
  cr_expect(t.v[0][1] == DE(0, 0, 0) && t.v[ENS_S + ENS_S - 1][1] == DE(1, 0, ENS_S - 1));
  expect_on(path, "export %s energy-all-methods --ic 3", 2, "--ic 3: ");
  expect_on(path, "export %s energy-all-methods --methods 4", 2, "expected comma-separated method indices 0..3");
#undef DE
  ens_free(&x);
  remove(path);
}

/* export's refusals, each with exit status 2 and its message: option values (an index, --ics, a
 * --stat), a table's options, attributes that are not there, arguments too many; and the forms
 * that are accepted at the bounds (index 0, --ics 0:3 of three ICs, an option before FILE). */
Test(results_cli, export_refusals_and_bounds) {
  char path[128];
  tmp_path(path, sizeof path, "cli-refuse");
  ens_fx x;
  ens_build(&x, path);
  /* An attribute of compound type on the root: export attr cannot print it. */
  hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT), t = H5Tcreate(H5T_COMPOUND, sizeof(double)),
        sp = H5Screate(H5S_SCALAR);
  H5Tinsert(t, "x", 0, H5T_NATIVE_DOUBLE);
  const double one = 1;
  hid_t a = H5Acreate2(f, "record", t, sp, H5P_DEFAULT, H5P_DEFAULT);
  cr_assert(f >= 0 && a >= 0 && H5Awrite(a, t, &one) >= 0);
  H5Aclose(a), H5Sclose(sp), H5Tclose(t), H5Fclose(f);
  static const struct {
    const char *args, *message;
  } bad[] = {
      {"attr record", "attribute 'record' of / is not numeric"},
      {"energy --method -1", "--method needs a whole number >= 0, not '-1'"},
      {"energy --method 100000001", "--method needs a whole number >= 0, not '100000001'"},
      {"energy --ics x", "--ics 'x': expected A:B"},
      {"energy --ics 1:y", "--ics '1:y': expected A:B"},
      {"energy --ics -1:2", "--ics '-1:2': expected A:B"},
      {"energy --ics 0:0", "--ics 0:0: "},
      {"grid --stat median", "--stat 'median': expected median_max_abs_dE, max_max_abs_dE"},
      {"grid --grid 1", "--grid 1: "},
      {"study --method 1", "table 'study' takes no option --method (its options: none)"},
      {"energy --ic 1", "table 'energy' takes no option --ic (its options: --method --ics --relative)"},
      {"attr", "attr needs an attribute NAME"},
      {"attr nosuch", "no attribute 'nosuch' on / or on the study group"},
      {"attr grid0/nosuch", "no attribute 'nosuch' on grid0 in the study group"},
      {"attr seed extra", "unexpected argument 'extra'"},
      {"series --h 0", "--h: "},
      {"orders", "is a ensemble study; table 'orders' is for convergence studies\n"},
      {"slopes", "table 'slopes' is for onestep studies\n"},
  };
  for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
    char args[512];
    snprintf(args, sizeof args, "export %s %s", path, bad[k].args);
    expect_run(args, 2, bad[k].message);
  }
  expect_on(path, "export %s attr seed", 0, "12345\n");
  expect_on(path, "export %s attr grid0/param0", 0, "beta\n");
  expect_on(path, "export %s attr count", 0, "3\n");
  expect_on(path, "export --method 0 %s energy --ics 0:3", 0, ", IC 2, E0 52.125,");
  expect_on(path, "export %s energy --method 100000000", 2, "--method 100000000: ");
  expect_on(path, "export %s grid --grid 0 --stat max_max_abs_dE", 0, "stat = max_max_abs_dE over the ICs");
  ens_free(&x);
  remove(path);
}

/* ---- what the writer derives (results/derive.c), by hand --------------------------------------- */

/* The fitted step sizes: from h[first] (the smallest used) to the (count − 1)-th next larger one,
 * whatever order h is listed in; NaN for no fit (first −1, out of range, or no points). h[5] lies
 * past the 5 step sizes given: read, 0.07 would change the answers. */
Test(results, fit_h_range_by_hand) {
  const double h[6] = {0.2, 0.05, 0.4, 0.1, 0.025, 0.07}; /* ascending: 0.025 0.05 0.1 0.2 0.4 */
  double lo, hi;
  static const struct {
    int first, count;
    double lo, hi;
  } cases[] = {{4, 3, 0.025, 0.1}, {1, 1, 0.05, 0.05}, {1, 4, 0.05, 0.4}, {3, 2, 0.1, 0.2}, {0, 2, 0.2, 0.4},
               {1, 0, NAN, NAN},   {-1, 0, NAN, NAN},  {-1, 2, NAN, NAN}, {5, 1, NAN, NAN}, {3, 3, 0.1, 0.4},
               {2, 2, NAN, NAN}};
  for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
    nh_fit_h_range(h, 5, cases[k].first, cases[k].count, &lo, &hi);
    cr_expect(same(lo, cases[k].lo) && same(hi, cases[k].hi), "first %d count %d: %g .. %g, want %g .. %g",
              cases[k].first, cases[k].count, lo, hi, cases[k].lo, cases[k].hi);
  }
}

/* The ensemble summary of method 1 of two, 5 ICs, 3 samples (the variance at T is the last
 * sample's, of this method), by hand: ICs 1 and 4 failed (their values, the largest, are left out),
 * NaN entries skipped; medians of 3 values; the variance at T only with two or more ICs there, from
 * dE_var, or (a streamed run) from last_var and last_count. */
Test(results, ensemble_summary_of_a_later_method_and_streamed) {
  nh_study st;
  memset(&st, 0, sizeof st);
  st.count = 5, st.nsamples = 3, st.nmethods = 2;
  const double N = NAN;
  int status[10] = {0, 0, 0, 0, 0, /**/ 0, 1, 0, 0, 3};
  double maxdE[10] = {90, 90, 90, 90, 90, /**/ 4, 100, 7, 1, 50};
  double slope[10] = {90, 90, 90, 90, 90, /**/ -2, 9, 3, -6, 7};
  double resid[10] = {9, 9, 9, 9, 9, /**/ 1e-3, 9, N, 2e-3, 9};
  int dE_count[6] = {5, 5, 5, 3, 3, 3};
  double dE_var[6] = {8, 8, 8, 0.25, 0.5, 0.75};
  nh_ensemble_result r;
  memset(&r, 0, sizeof r);
  r.status = status, r.max_abs_dE = maxdE, r.drift_slope = slope, r.max_residual = resid;
  r.dE_count = dE_count, r.dE_var = dE_var;
  nh_ensemble_summary s;
  nh_ensemble_summarize(&st, &r, 1, &s);
  cr_expect(s.ok == 3 && s.failures == 2, "ok %d failures %d", s.ok, s.failures);
  cr_expect_eq(s.max_max_abs_dE, 7);
  cr_expect_eq(s.median_max_abs_dE, 4, "median of {4, 7, 1}");
  cr_expect(fabs(s.mean_drift_slope - (-5.0 / 3)) < 1e-15, "mean of {-2, 3, -6}: %g", s.mean_drift_slope);
  cr_expect_eq(s.median_abs_drift_slope, 3, "median of {2, 3, 6}");
  cr_expect_eq(s.max_residual, 2e-3, "the NaN and the failed runs' residuals left out");
  cr_expect_eq(s.final_var, 0.75, "dE_var[1][T]");
  /* An even count: the median is the mean of the middle two; one IC at T: no variance. */
  status[7] = 2, dE_count[5] = 1;
  nh_ensemble_summarize(&st, &r, 1, &s);
  cr_expect(s.ok == 2 && s.failures == 3);
  cr_expect_eq(s.median_max_abs_dE, 2.5, "median of {4, 1}");
  cr_expect_eq(s.median_abs_drift_slope, 4, "median of {2, 6}");
  cr_expect(isnan(s.final_var), "one IC at T: %g", s.final_var);
  dE_count[5] = 2;
  nh_ensemble_summarize(&st, &r, 1, &s);
  cr_expect_eq(s.final_var, 0.75, "two ICs at T");
  /* Every IC failed: NaN statistics. */
  for (int i = 5; i < 10; i++) status[i] = 1;
  nh_ensemble_summarize(&st, &r, 1, &s);
  cr_expect(s.ok == 0 && s.failures == 5 && isnan(s.max_max_abs_dE) && isnan(s.median_max_abs_dE) &&
            isnan(s.mean_drift_slope) && isnan(s.median_abs_drift_slope) && isnan(s.max_residual));
  /* Streamed: the last sample's count and variance per method. */
  int last_count[2] = {7, 2};
  double last_var[2] = {1, 0.125};
  r.dE_count = NULL, r.dE_var = NULL, r.last_count = last_count, r.last_var = last_var;
  nh_ensemble_summarize(&st, &r, 1, &s);
  cr_expect_eq(s.final_var, 0.125);
  last_count[1] = 1;
  nh_ensemble_summarize(&st, &r, 1, &s);
  cr_expect(isnan(s.final_var));
  nh_ensemble_summarize(&st, &r, 0, &s);
  cr_expect(s.ok == 5 && s.max_max_abs_dE == 90 && s.final_var == 1, "method 0's own rows");
}

/* A --methods list that names no method of the file is refused with exit status 2 by every table
 * that takes one, whatever the study kind. */
Test(results_cli, export_bad_method_lists_of_every_kind) {
  char path[128];
  conv_fx c;
  tmp_path(path, sizeof path, "cli-ml-conv");
  conv_build(&c, path);
  expect_on(path, "export %s convergence --methods 3", 2, "--methods '3': expected comma-separated method indices 0..2");
  expect_on(path, "export %s convergence --methods 0,", 0, "# method 0 ");
  expect_on(path, "export %s convergence --methods ,", 2, "--methods ','");
  expect_on(path, "export %s convergence --methods ''", 2, "nhbench export: --methods '': no methods\n");
  conv_free(&c);
  remove(path);
  one_fx o;
  tmp_path(path, sizeof path, "cli-ml-one");
  one_build(&o, path);
  expect_on(path, "export %s local_error --methods 9", 2, "--methods '9'");
  expect_on(path, "export %s local_error --methods x", 2, "--methods 'x'");
  one_free(&o);
  remove(path);
  wp_fx w;
  tmp_path(path, sizeof path, "cli-ml-wp");
  wp_build(&w, path);
  expect_on(path, "export %s work_precision --methods 9", 2, "--methods '9'");
  wp_free(&w);
  remove(path);
  ens_fx e;
  tmp_path(path, sizeof path, "cli-ml-ens");
  ens_build(&e, path);
  expect_on(path, "export %s variance --methods 4", 2, "--methods '4'");
  expect_on(path, "export %s quantiles --methods -1", 2, "--methods '-1'");
  ens_free(&e);
  remove(path);
}

/* A grid cell's method index must be a method of the file (0 .. nmethods − 1) or −1 (skipped): a
 * file holding nmethods or −2 there is refused with the value named; −1 and nmethods − 1 are read.
 * Value k goes into cell k of the 2 x 2 grid, the others as written: every cell is checked, the
 * last one too. */
Test(results_cli, grid_method_index_bounds) {
  char path[128];
  tmp_path(path, sizeof path, "cli-gridindex");
  ens_fx x;
  ens_build(&x, path);
  const int values[4] = {ENS_M - 1, -1, ENS_M, -2};
  int orig[4];
  for (int k = 0; k < 4; k++) {
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    cr_assert(f >= 0);
    hid_t ds = H5Dopen2(f, "/ensemble/grid0/method_index", H5P_DEFAULT);
    cr_assert(ds >= 0);
    int idx[4];
    if (k == 0) cr_assert(H5Dread(ds, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, orig) >= 0);
    memcpy(idx, orig, sizeof idx);
    idx[k] = values[k];
    cr_assert(H5Dwrite(ds, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, idx) >= 0);
    H5Dclose(ds), H5Fclose(f);
    char needle[128];
    snprintf(needle, sizeof needle, "/ensemble/grid0/method_index holds %d, not a method index (0..%d) or -1",
             values[k], ENS_M - 1);
    if (k < 2) expect_on(path, "export %s grid", 0, NULL);
    else expect_on(path, "export %s grid", 2, needle);
  }
  ens_free(&x);
  remove(path);
}

/* Every HDF5 object the writer or the reader opens is closed again: with the file's default weak
 * close degree a forgotten dataset, group, type or attribute keeps the file open behind an
 * H5Fclose that seems to succeed. H5Fget_obj_count over all files counts what is still open (0 at
 * the start of this test process). */
static void expect_nothing_open(const char *when) {
  const ssize_t open_objects = H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL);
  cr_expect_eq(open_objects, 0, "%s: %zd HDF5 objects still open", when, open_objects);
}

/* Reads back what nhbench info reads of any kind: the method names, orders, summary, grids and
 * observables, each freed, then closes. */
static void read_back_and_close(const char *path) {
  nh_h5 f;
  open_ok(&f, path);
  int n = 0;
  nh_h5_grid *g = NULL;
  if (nh_h5_read_grids(&f, &n, &g) == 0) nh_h5_free_grids(n, g);
  nh_h5_observable *o = NULL;
  if (nh_h5_has(&f, "observables") && nh_h5_read_observables(&f, &n, &o) == 0) nh_h5_free_observables(n, o);
  if (f.kind == NH_STUDY_CONVERGENCE) nh_h5_free_orders(nh_h5_read_orders(&f), f.nmethods);
  if (f.kind == NH_STUDY_ENSEMBLE) free(nh_h5_read_ensemble_summary(&f));
  char *cmd = nh_h5_attr_string(&f, "/", "command");
  free(cmd);
  nh_h5_close(&f);
}

Test(results, every_hdf5_object_closed_after_write_and_read) {
  char path[128];
  expect_nothing_open("start");
  conv_fx c;
  tmp_path(path, sizeof path, "closed-conv");
  conv_build(&c, path);
  expect_nothing_open("nh_write_convergence");
  read_back_and_close(path);
  expect_nothing_open("reading a convergence file");
  conv_free(&c);
  ens_fx e;
  ens_build(&e, path);
  expect_nothing_open("nh_write_ensemble");
  read_back_and_close(path);
  expect_nothing_open("reading an ensemble file");
  ens_free(&e);
  traj_fx t;
  traj_build(&t, path);
  expect_nothing_open("nh_write_trajectory");
  read_back_and_close(path);
  traj_free(&t);
  one_fx s;
  one_build(&s, path);
  expect_nothing_open("nh_write_onestep");
  read_back_and_close(path);
  one_free(&s);
  wp_fx w;
  wp_build(&w, path);
  expect_nothing_open("nh_write_work_precision");
  read_back_and_close(path);
  expect_nothing_open("reading a work-precision file");
  wp_free(&w);
  remove(path);
}

/* Leaves each of the result's fields in turn unset (NULL): the write is refused, naming the field
 * ("no data for NAME (a result field left unset)", or "for dataset NAME" where the field is a
 * dataset), without dereferencing it, and leaves no file at path. Then the field is put back. */
static void expect_each_unset_field_refused(const char *path, int (*write)(const char *, const void *, char *, size_t),
                                            const void *fx, void **const *fields, const char *const *names, int n) {
  char err[1024], want[128], want_dataset[128];
  for (int i = 0; i < n; i++) {
    void *kept = *fields[i];
    *fields[i] = NULL;
    err[0] = '\0';
    cr_expect_eq(write(path, fx, err, sizeof err), -1, "%s unset", names[i]);
    snprintf(want, sizeof want, "no data for %s (a result field left unset)", names[i]);
    snprintf(want_dataset, sizeof want_dataset, "no data for dataset %s (a result field left unset)", names[i]);
    cr_expect(strstr(err, want) || strstr(err, want_dataset), "%s unset: %s", names[i], err);
    cr_expect_neq(access(path, F_OK), 0, "%s unset: a refused result left a file", names[i]);
    *fields[i] = kept;
  }
}

static int write_onestep_fx(const char *path, const void *fx, char *err, size_t errlen) {
  const one_fx *x = fx;
  return nh_write_onestep(path, &x->st, &x->r, "test", err, errlen);
}

static int write_convergence_fx(const char *path, const void *fx, char *err, size_t errlen) {
  const conv_fx *x = fx;
  return nh_write_convergence(path, &x->st, &x->r, "test", err, errlen);
}

/* A one-step result with its fit indices or counts left unset; a convergence result with any field
 * of its orders table left unset, whichever it is (the checks are one chain). */
Test(results, unset_result_fields_refused) {
  char one_path[128], conv_path[128];
  tmp_path(one_path, sizeof one_path, "one-unset");
  tmp_path(conv_path, sizeof conv_path, "conv-unset");
  one_fx o;
  one_build(&o, one_path);
  conv_fx c;
  conv_build(&c, conv_path);
  remove(one_path), remove(conv_path);
  void **one_fields[] = {(void **)&o.r.fit_first, (void **)&o.r.fit_count};
  static const char *const one_names[] = {"fit_first", "fit_count"};
  expect_each_unset_field_refused(one_path, write_onestep_fx, &o, one_fields, one_names, 2);
  void **conv_fields[] = {(void **)&c.r.order,     (void **)&c.r.order_stderr, (void **)&c.r.fit_first,
                          (void **)&c.r.fit_count, (void **)&c.r.order_ok,     (void **)&c.st.order_expected};
  static const char *const conv_names[] = {"order", "order_stderr", "fit_first", "fit_count", "order_ok",
                                           "order_expected"};
  expect_each_unset_field_refused(conv_path, write_convergence_fx, &c, conv_fields, conv_names, 6);
  one_free(&o);
  conv_free(&c);
}
