/* The worked example of issue 50 ("Done when": the worked example runs every study kind; its
 * results equal the built-in system's to round-off): for each study kind, two small specs that
 * differ only in their system, one `system = "chaotic_particle"` (systems/chaotic_particle.c), the
 * other the chaotic particle written as text (studies/systems/chaotic_particle.sys, included as
 * README "Your own system" shows), both run by the nhbench the tests run; then every numeric
 * dataset of the two results files is compared value by value (the kind's key datasets must be
 * among them), the cost counters (Newton iterations among them) exactly, and the file of the
 * definition must name its system my_chaotic_particle().
 *
 * Tolerance. The definition's derivatives are its own symbolic ones, compiled from the printed
 * expressions, so the two systems agree to round-off, not bit for bit (the order of the sums in ∇V,
 * ∇²V, A(q)v differs). Measured over these short runs: differences up to ~1e-13 relative to a
 * dataset's scale (dE, err, err_coord, final_state: 1e-16..1e-13), 3e-12 for the onestep
 * embedding residual (a difference quotient). A real value passes if |a - b| <= RTOL * scale +
 * ATOL, scale the largest finite |x| of that dataset (or compound member) in either file:
 *  - RTOL = 1e-10: two to six orders above what is measured, far below any real discrepancy: a
 *    definition whose potential has an extra 1e-9 * x^2 fails every kind here (tried by hand);
 *  - ATOL = 1e-12: the floor for quantities that are themselves round-off (the constraint residual
 *    of a method that keeps the constraint, round-trip and adjoint defects, the error floor of the
 *    fits: 1e-16..1e-13 with differences as large as themselves), whose relative difference means
 *    nothing; ~5000 ulps of an O(1) state, and 2 orders below the smallest method error compared
 *    (rk4's local error at h = 0.0125, 8e-11). The per-dataset scale makes the test coarse for the
 *    small entries of a dataset (rk4's errors at fine h), but the states they come from (stepped,
 *    final_state) are O(1) and compared at 1e-10.
 *  - FIT_TOL = 1e-6, absolute, for the fitted orders and their standard errors (orders.observed,
 *    slope, ...): a slope is a weighted sum of log e over log h, and log e moves by δe/e, which for
 *    rk4's smallest errors (8e-11, differing by 3.5e-18) is 4e-8; measured: 3e-8 (onestep rk4),
 *    8e-9 (convergence rk4). An order is read to two decimals: 1e-6 hides nothing that matters.
 * Integer datasets and members (status, cost counters with the Newton iterations, fit indices,
 * Pareto flags, work) must be equal, and so must what the spec sets rather than the system computes
 * (h, t, q0, v0; the ensemble's q0, which the sampler draws from the seed and the box: same seed,
 * same sample_box; its v0 is scaled to the energy with the system's V(q), so v0 and E0 agree to
 * round-off only). Wall times (and the Pareto front against them) differ from run to run and are not
 * compared; strings are compared exactly. Each test has its own NHBENCH_CACHE_DIR (a fresh mkdtemp
 * directory, mode 0700, removed afterwards): the tests run in parallel processes. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, setenv */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <errno.h>
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/helpers.h"

#define RTOL 1e-10
#define ATOL 1e-12
#define FIT_TOL 1e-6

/* Methods of every spec: an explicit method, an implicit one with Newton iterations, and the
 * Rattle method whose state carries multipliers. */
#define METHODS "methods = [\"rk4\", \"nh_newmark(beta=0.1,beta2=0.1,alpha=0.5)\", \"nh_rattle\"];\n"

typedef struct {
  const char *kind;         /* the study kind, also the results group */
  const char *settings;     /* the spec after its system */
  const char *const *keys;  /* datasets (under /KIND) that must be compared, NULL-terminated */
  const char *const *exact; /* real datasets compared bit for bit, NULL-terminated */
} kind_case;

static const char *const convergence_keys[] = {
    "err", "err_q", "err_v", "final_state", "reference_state", "orders", "constraint_residual", "status", "cost", NULL};
static const char *const ensemble_keys[] = {
    "q0",     "v0",   "E0", "dE", "max_abs_dE", "drift_slope", "dE_mean", "dE_var", "max_constraint_residual",
    "status", "cost", NULL};
static const char *const trajectory_keys[] = {"final_state",
                                              "observables/energy",
                                              "observables/constraint_residual",
                                              "observables_last/energy",
                                              "round_trip_defect",
                                              "round_trip_defect_lambda",
                                              "status",
                                              "cost",
                                              NULL};
static const char *const onestep_keys[] = {"points", "local_err", "max_local_err", "stepped", "backward",
                                           "lambda", "slope",     "cond",          "status",  NULL};
static const char *const work_precision_keys[] = {"err", "reference_state", "work", "pareto_work", "status", "cost",
                                                  NULL};

/* Set by the spec, not computed from the system: the same bits in both files. */
static const char *const given_exact[] = {"h", "q0", "v0", NULL};
/* The sampler draws q uniformly in the box, the same for both (same seed, same sample_box); v is then
 * scaled to the energy with the system's own V(q), so v0 and E0 agree to round-off only. */
static const char *const ensemble_exact[] = {"h", "t", "q0", NULL};
static const char *const trajectory_exact[] = {"h", "t", "q0", "v0", NULL};
static const char *const onestep_exact[] = {"h", "point_t", NULL};
/* work: a count of evaluations, stored as a real. */
static const char *const work_precision_exact[] = {"h", "q0", "v0", "work", NULL};

static const kind_case convergence_case = {.kind = "convergence",
                                           .settings = "T = 1.0;\nh0 = 0.2;\nhalvings = 3;\n" METHODS,
                                           .keys = convergence_keys,
                                           .exact = given_exact};
/* Random initial conditions at E = 1.535 from the generic sampler (its box: sample_box = 1 in both). */
static const kind_case ensemble_case = {.kind = "ensemble",
                                        .settings = "T = 10.0;\nh = 0.2;\nsample_every = 5;\n"
                                                    "ensemble = { count = 4; energy = 1.535; seed = 7; };\n"
                                                    "observables = [\"constraint_residual\"];\n" METHODS,
                                        .keys = ensemble_keys,
                                        .exact = ensemble_exact};
/* The default initial condition (q0, v0 of the paper's Fig. 2 in both), with the round trip. */
static const kind_case trajectory_case = {.kind = "trajectory",
                                          .settings =
                                              "T = 5.0;\nh = [0.1, 0.05];\nsample_every = 5;\nround_trip = true;\n"
                                              "observables = [\"energy\", \"constraint_residual\"];\n" METHODS,
                                          .keys = trajectory_keys,
                                          .exact = trajectory_exact};
static const kind_case onestep_case = {.kind = "onestep",
                                       .settings = "T = 2.0;\npoints = 2;\nh0 = 0.1;\nhalvings = 3;\n" METHODS,
                                       .keys = onestep_keys,
                                       .exact = onestep_exact};
static const kind_case work_precision_case = {.kind = "work_precision",
                                              .settings = "T = 2.0;\nh = [0.2, 0.1, 0.05];\nrepeats = 1;\n" METHODS,
                                              .keys = work_precision_keys,
                                              .exact = work_precision_exact};

static char out[1 << 16];

/* Runs spec dir/NAME.cfg into dir/NAME.h5; it must exit 0. */
static void run_spec(const char *dir, const char *name, const char *kind, const char *system, const char *settings) {
  char spec[256], text[4096], args[1024];
  snprintf(spec, sizeof spec, "%s/%s.cfg", dir, name);
  snprintf(text, sizeof text, "study = \"%s\";\n%s\n%s", kind, system, settings);
  test_write_file(spec, text);
  snprintf(args, sizeof args, "run %s -o %s/%s.h5", spec, dir, name);
  cr_assert_eq(test_run_nhbench(args, out, sizeof out), 0, "%s: nhbench %s failed:\n%s", kind, args, out);
}

/* ---- comparing two results files ---------------------------------------------------------------- */

typedef struct {
  char path[64][128];
  int count;
} path_list;

static herr_t add_dataset(hid_t loc, const char *name, const H5O_info_t *info, void *vl) {
  (void)loc;
  path_list *l = vl;
  if (info->type == H5O_TYPE_DATASET) {
    cr_assert_lt(l->count, 64, "more datasets than the test keeps");
    snprintf(l->path[l->count++], sizeof l->path[0], "/%s", name);
  }
  return 0;
}

typedef enum {
  EXACT,    /* integers; and what is not computed from the system (q0 of the sampler, the spec's q0, v0) */
  ROUNDOFF, /* within RTOL * scale + ATOL */
  FIT,      /* a fitted order: within FIT_TOL */
} how;

typedef struct {
  int compared;      /* numeric datasets and members compared */
  double used;       /* the largest |a - b| / tolerance over the ROUNDOFF values */
  char used_at[256]; /* where */
  double rel;        /* the largest |a - b| / scale over ROUNDOFF datasets whose tolerance is relative */
  char rel_at[256];  /* where (RTOL * scale > ATOL) */
  double fit;        /* the largest |a - b| over the fitted orders */
  char fit_at[256];  /* where */
} comparison;

static void note(double d, double *max, char *at, size_t len, const char *where, double a, double b) {
  if (d <= *max) return;
  *max = d;
  snprintf(at, len, "%s: %.17g built in, %.17g defined", where, a, b);
}

/* Dataset PATH (member MEMBER of its compound type, or NULL for the whole) of files a and b as
 * doubles, compared as HOW says. */
static void compare_values(hid_t fa, hid_t fb, const char *kind, const char *path, const char *member, how how,
                           comparison *c) {
  hid_t da = H5Dopen2(fa, path, H5P_DEFAULT), db = H5Dopen2(fb, path, H5P_DEFAULT);
  cr_assert(da >= 0 && db >= 0, "%s: dataset %s missing from a file", kind, path);
  hid_t sa = H5Dget_space(da), sb = H5Dget_space(db);
  const hssize_t n = H5Sget_simple_extent_npoints(sa);
  cr_assert_eq(n, H5Sget_simple_extent_npoints(sb), "%s: %s has %lld values in one file, %lld in the other", kind, path,
               (long long)n, (long long)H5Sget_simple_extent_npoints(sb));
  hid_t mt = H5T_NATIVE_DOUBLE;
  if (member) {
    mt = H5Tcreate(H5T_COMPOUND, sizeof(double));
    H5Tinsert(mt, member, 0, H5T_NATIVE_DOUBLE);
  }
  double *a = malloc(sizeof(double) * (size_t)(n ? n : 1)), *b = malloc(sizeof(double) * (size_t)(n ? n : 1));
  cr_assert(a && b);
  cr_assert(H5Dread(da, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, a) >= 0 &&
                H5Dread(db, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, b) >= 0,
            "%s: cannot read %s%s%s as numbers", kind, path, member ? "." : "", member ? member : "");
  if (member) H5Tclose(mt);
  double scale = 0;
  for (hssize_t i = 0; i < n; i++) {
    if (isfinite(a[i])) scale = fmax(scale, fabs(a[i]));
    if (isfinite(b[i])) scale = fmax(scale, fabs(b[i]));
  }
  const double tol = how == EXACT ? 0 : how == FIT ? FIT_TOL : RTOL * scale + ATOL;
  for (hssize_t i = 0; i < n; i++) {
    char where[160];
    snprintf(where, sizeof where, "%s%s%s[%lld]", path, member ? "." : "", member ? member : "", (long long)i);
    if (!isfinite(a[i]) || !isfinite(b[i])) { /* NaN where the quantity is undefined, on both sides */
      cr_expect((isnan(a[i]) && isnan(b[i])) || a[i] == b[i], "%s: %s is %.17g built in, %.17g defined", kind, where,
                a[i], b[i]);
      continue;
    }
    const double d = fabs(a[i] - b[i]);
    cr_expect_leq(d, tol, "%s: %s is %.17g built in, %.17g defined: |diff| %.3g > tolerance %.3g (scale %.3g)", kind,
                  where, a[i], b[i], d, tol, scale);
    if (how == ROUNDOFF) {
      note(d / tol, &c->used, c->used_at, sizeof c->used_at, where, a[i], b[i]);
      if (RTOL * scale > ATOL) note(d / scale, &c->rel, c->rel_at, sizeof c->rel_at, where, a[i], b[i]);
    } else if (how == FIT)
      note(d, &c->fit, c->fit_at, sizeof c->fit_at, where, a[i], b[i]);
  }
  c->compared++;
  free(a), free(b);
  H5Sclose(sa), H5Sclose(sb), H5Dclose(da), H5Dclose(db);
}

/* How dataset PATH (member MEMBER, or NULL) of kind K is compared, its HDF5 class CLS. */
static how how_of(const kind_case *k, const char *path, const char *member, H5T_class_t cls) {
  if (cls == H5T_INTEGER) return EXACT;
  const char *name = path + strlen(k->kind) + 2; /* after "/KIND/" */
  for (const char *const *e = k->exact; *e; e++)
    if (!strcmp(name, *e)) return EXACT;
  static const char *const fits[] = {"orders.observed", "orders.stderr", "slope", "slope_stderr", "action_slope", NULL};
  char full[160];
  snprintf(full, sizeof full, "%s%s%s", name, member ? "." : "", member ? member : "");
  for (const char *const *f = fits; *f; f++)
    if (!strcmp(full, *f)) return FIT;
  return ROUNDOFF;
}

/* Whether dataset PATH's string values (variable-length strings, as the writer makes them) are the same
 * in both files. */
static void compare_strings(hid_t fa, hid_t fb, const char *kind, const char *path) {
  hid_t da = H5Dopen2(fa, path, H5P_DEFAULT), db = H5Dopen2(fb, path, H5P_DEFAULT);
  hid_t sa = H5Dget_space(da);
  const hssize_t n = H5Sget_simple_extent_npoints(sa);
  hid_t ft = H5Dget_type(da), mt = H5Tcopy(H5T_C_S1);
  H5Tset_size(mt, H5T_VARIABLE);
  H5Tset_cset(mt, H5Tget_cset(ft)); /* UTF-8 in our files: HDF5 converts no character set into another */
  H5Tclose(ft);
  char **a = calloc((size_t)(n ? n : 1), sizeof *a), **b = calloc((size_t)(n ? n : 1), sizeof *b);
  cr_assert(H5Dread(da, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, a) >= 0 &&
                H5Dread(db, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, b) >= 0,
            "%s: cannot read %s as strings", kind, path);
  for (hssize_t i = 0; i < n; i++)
    cr_expect_str_eq(a[i] ? a[i] : "", b[i] ? b[i] : "", "%s: %s[%lld] is '%s' built in, '%s' defined", kind, path,
                     (long long)i, a[i] ? a[i] : "", b[i] ? b[i] : "");
  H5Dvlen_reclaim(mt, sa, H5P_DEFAULT, a);
  H5Dvlen_reclaim(mt, sa, H5P_DEFAULT, b);
  free(a), free(b);
  H5Tclose(mt), H5Sclose(sa), H5Dclose(da), H5Dclose(db);
}

/* Timings: they differ from run to run (and the Pareto front against wall time follows them). */
static int is_timing(const char *path) { return strstr(path, "wall_time") || strstr(path, "pareto_time"); }

/* Compares every dataset of the two files, timings aside; the datasets of both files must be the
 * same, and the keys of the kind among those compared. */
static comparison compare_files(const char *builtin, const char *defined, const kind_case *k) {
  comparison c = {.compared = 0, .used_at = "none", .rel_at = "none", .fit_at = "none"};
  static path_list la, lb;
  la.count = lb.count = 0;
  hid_t fa = H5Fopen(builtin, H5F_ACC_RDONLY, H5P_DEFAULT), fb = H5Fopen(defined, H5F_ACC_RDONLY, H5P_DEFAULT);
  cr_assert(fa >= 0 && fb >= 0, "%s: cannot open the results files", k->kind);
  H5Ovisit2(fa, H5_INDEX_NAME, H5_ITER_NATIVE, add_dataset, &la, H5O_INFO_BASIC);
  H5Ovisit2(fb, H5_INDEX_NAME, H5_ITER_NATIVE, add_dataset, &lb, H5O_INFO_BASIC);
  cr_assert_eq(la.count, lb.count, "%s: %d datasets built in, %d defined", k->kind, la.count, lb.count);
  int compared[64] = {0};
  for (int i = 0; i < la.count; i++) {
    const char *p = la.path[i];
    cr_assert_str_eq(p, lb.path[i], "%s: dataset %s built in, %s defined", k->kind, p, lb.path[i]);
    if (is_timing(p)) continue;
    hid_t d = H5Dopen2(fa, p, H5P_DEFAULT), t = H5Dget_type(d);
    const H5T_class_t cls = H5Tget_class(t);
    if (cls == H5T_INTEGER || cls == H5T_FLOAT) {
      compare_values(fa, fb, k->kind, p, NULL, how_of(k, p, NULL, cls), &c);
      compared[i] = 1;
    } else if (cls == H5T_STRING) {
      compare_strings(fa, fb, k->kind, p);
      compared[i] = 1;
    } else if (cls == H5T_COMPOUND) {
      for (int m = 0; m < H5Tget_nmembers(t); m++) {
        const H5T_class_t mc = H5Tget_member_class(t, (unsigned)m);
        if (mc != H5T_INTEGER && mc != H5T_FLOAT) continue; /* the method's name, a reason: text */
        char *name = H5Tget_member_name(t, (unsigned)m);
        compare_values(fa, fb, k->kind, p, name, how_of(k, p, name, mc), &c);
        H5free_memory(name);
        compared[i] = 1;
      }
    } else
      cr_log_info("%s: %s (HDF5 class %d) not compared", k->kind, p, (int)cls);
    H5Tclose(t), H5Dclose(d);
  }
  const char *const *lists[] = {k->keys, k->exact};
  for (int l = 0; l < 2; l++)
    for (const char *const *key = lists[l]; *key; key++) {
      char p[128];
      snprintf(p, sizeof p, "/%s/%s", k->kind, *key);
      int found = 0;
      for (int i = 0; i < la.count; i++) found |= !strcmp(la.path[i], p) && compared[i];
      cr_expect(found, "%s: dataset %s missing or not compared", k->kind, p);
    }
  H5Fclose(fa), H5Fclose(fb);
  return c;
}

/* `nhbench export FILE attr system` is WANT (followed by a newline). */
static void expect_system(const char *file, const char *want) {
  char args[512];
  snprintf(args, sizeof args, "export %s attr system", file);
  cr_assert_eq(test_run_nhbench(args, out, sizeof out), 0, "nhbench %s failed:\n%s", args, out);
  out[strcspn(out, "\n")] = '\0';
  cr_expect_str_eq(out, want, "%s: system '%s', expected '%s'", file, out, want);
}

/* ---- the kinds ---------------------------------------------------------------------------------- */

/* This test's directory of specs and results, and its NHBENCH_CACHE_DIR: fresh mkdtemp directories
 * (mode 0700), removed after the test whether it passed or not. */
static char dir[64], cache[64];

static void setup(void) {
  snprintf(dir, sizeof dir, "/tmp/nhbench-defkinds-XXXXXX");
  snprintf(cache, sizeof cache, "/tmp/nhbench-defkinds-cache-XXXXXX");
  cr_assert(mkdtemp(dir) && mkdtemp(cache), "mkdtemp: %s", strerror(errno));
  setenv("NHBENCH_CACHE_DIR", cache, 1);
  unsetenv("NHBENCH_CC");
}

static void teardown(void) {
  if (dir[0]) test_remove_tree(dir);
  if (cache[0]) test_remove_tree(cache);
}

TestSuite(defined_kinds, .init = setup, .fini = teardown);

static void check_kind(const kind_case *k) {
  run_spec(dir, "builtin", k->kind, "system = \"chaotic_particle\";", k->settings);
  run_spec(dir, "defined", k->kind,
           "system = {\n  @include \"" NHBENCH_SOURCE_DIR "/studies/systems/chaotic_particle.sys\"\n};", k->settings);

  char a[128], b[128];
  snprintf(a, sizeof a, "%s/builtin.h5", dir);
  snprintf(b, sizeof b, "%s/defined.h5", dir);
  expect_system(a, "chaotic_particle()");
  expect_system(b, "my_chaotic_particle()");
  const comparison c = compare_files(a, b, k);
  cr_expect_gt(c.compared, 0);
  cr_log_info("%s: %d numeric datasets and members compared; largest |diff|/tolerance %.3g at %s; largest "
              "|diff|/scale %.3g at %s; largest |diff| of a fitted order %.3g at %s",
              k->kind, c.compared, c.used, c.used_at, c.rel, c.rel_at, c.fit, c.fit_at);
}

Test(defined_kinds, convergence, .timeout = 120) { check_kind(&convergence_case); }
Test(defined_kinds, ensemble, .timeout = 120) { check_kind(&ensemble_case); }
Test(defined_kinds, trajectory, .timeout = 120) { check_kind(&trajectory_case); }
Test(defined_kinds, onestep, .timeout = 120) { check_kind(&onestep_case); }
Test(defined_kinds, work_precision, .timeout = 120) { check_kind(&work_precision_case); }
