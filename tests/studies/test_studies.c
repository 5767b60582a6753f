/* Study-level tests: observed convergence orders, thread-count reproducibility of ensembles,
 * the order fit, and clear errors for bad specs. */
#include <criterion/criterion.h>
#include <hdf5.h>
#include <hdf5_hl.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "results/results.h"
#include "studies/study.h"
#include "tests/helpers.h"

#define DATA NHBENCH_SOURCE_DIR "/tests/data/"

static void load_or_fail(const char *path, nh_study *st) {
  char err[1024];
  cr_assert_eq(nh_study_load(path, NULL, 0, st, err, sizeof err), 0, "%s", err);
}

/* The claimed orders in the order table are the theoretical ones. */
Test(convergence, declared_orders) {
  nh_study st;
  load_or_fail(NHBENCH_SOURCE_DIR "/tests/orders/particle.cfg", &st);
  const int expected[] = {4, 2, 2, 2, 1, 2, 2, 4};
  cr_assert_eq(st.nmethods, 8);
  for (int m = 0; m < st.nmethods; m++)
    cr_expect_eq(nh_method_order(st.methods[m]), expected[m], "%s", st.method_names[m]);
  nh_study_free(&st);
}

/* The fit: synthetic errors C h^p with p = 3 are fitted exactly; points under the floor and
 * coarse points beyond fit_points are left out. */
Test(convergence, order_fit_rule) {
  double h[6], e[6], p, se;
  int first, count;
  for (int i = 0; i < 6; i++) {
    h[i] = ldexp(0.2, -i);
    e[i] = 5 * pow(h[i], 3) * (1 + (i == 0 ? 0.5 : 0)); /* coarsest point off the asymptote */
  }
  e[5] = 1e-14; /* under the round-off floor */
  cr_assert_eq(nh_fit_order(6, h, e, 3, 1e-11, &p, &se, &first, &count), 0);
  cr_expect_eq(first, 4, "finest admissible point is h[4], got h[%d]", first);
  cr_expect_eq(count, 3);
  cr_expect(fabs(p - 3) < 1e-12, "order %.15g", p);
  cr_expect(se < 1e-10, "stderr %g", se);
  e[2] = e[3] = e[4] = NAN;
  cr_expect_eq(nh_fit_order(6, h, e, 3, 1e-11, &p, &se, &first, &count), 0);
  cr_expect(fabs(p - 3) > 0.1, "only the two coarse points remain, one off the asymptote: %g", p);
  e[1] = NAN;
  cr_expect_eq(nh_fit_order(6, h, e, 3, 1e-11, &p, &se, &first, &count), -1);
}

/* ---------------------------------------------------------------------------------------------- */

/* Loads the ensemble spec at path and runs it into r; free both. */
static void run_ensemble_spec(const char *path, nh_study *st, nh_ensemble_result *r) {
  char err[1024];
  load_or_fail(path, st);
  cr_assert_eq(nh_run_ensemble(st, r, err, sizeof err), 0, "%s", err);
}

static int run_ensemble_to(const char *out, int threads) {
  nh_study st;
  nh_ensemble_result r;
  char err[1024];
  load_or_fail(DATA "small_ensemble.cfg", &st);
  omp_set_num_threads(threads);
  cr_assert_eq(nh_run_ensemble(&st, &r, err, sizeof err), 0, "%s", err);
  int rc = nh_write_ensemble(out, &st, &r, "test", err, sizeof err);
  cr_assert_eq(rc, 0, "%s", err);
  int nm = st.nmethods;
  nh_ensemble_result_free(&r);
  nh_study_free(&st);
  return nm;
}

static void *read_all(hid_t f, const char *name, size_t *bytes) {
  hid_t ds = H5Dopen2(f, name, H5P_DEFAULT);
  cr_assert_geq(ds, 0, "dataset %s missing", name);
  hid_t type = H5Dget_type(ds), space = H5Dget_space(ds);
  hid_t native = H5Tget_native_type(type, H5T_DIR_ASCEND);
  *bytes = (size_t)H5Sget_simple_extent_npoints(space) * H5Tget_size(native);
  void *buf = malloc(*bytes);
  cr_assert_geq(H5Dread(ds, native, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf), 0);
  H5Tclose(native), H5Tclose(type), H5Sclose(space), H5Dclose(ds);
  return buf;
}

/* Same results, to the bit, with 1 and 2 threads (every dataset but wall-clock time). */
Test(ensemble, bit_identical_with_1_and_2_threads) {
  char a[64], b[64];
  snprintf(a, sizeof a, "/tmp/nhbench-test-%d-1.h5", (int)getpid());
  snprintf(b, sizeof b, "/tmp/nhbench-test-%d-2.h5", (int)getpid());
  int nm = run_ensemble_to(a, 1);
  run_ensemble_to(b, 2);
  cr_assert_eq(nm, 7, "2 listed methods + 6 grid points, of which 1 skipped (beta+beta2 = 1/2)");
  const char *names[] = {"t", "q0", "v0", "E0", "dE", "max_abs_dE", "drift_slope", "max_constraint_residual",
                         "status", "dE_mean", "dE_var", "dE_count", "cost", "grid0/method_index"};
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  hid_t fa = H5Fopen(a, H5F_ACC_RDONLY, H5P_DEFAULT), fb = H5Fopen(b, H5F_ACC_RDONLY, H5P_DEFAULT);
  cr_assert(fa >= 0 && fb >= 0);
  hid_t ga = H5Gopen2(fa, "ensemble", H5P_DEFAULT), gb = H5Gopen2(fb, "ensemble", H5P_DEFAULT);
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
    size_t na, nb;
    void *da = read_all(ga, names[i], &na), *db = read_all(gb, names[i], &nb);
    cr_expect(na == nb && memcmp(da, db, na) == 0, "dataset %s differs between 1 and 2 threads", names[i]);
    free(da), free(db);
  }
  /* And the run is not trivial: the trajectories moved and energy errors are nonzero but small. */
  size_t n;
  double *maxdE = read_all(ga, "max_abs_dE", &n);
  cr_expect(maxdE[0] > 0 && maxdE[0] < 1e-2, "max|dE| of the first trajectory: %g", maxdE[0]);
  free(maxdE);
  H5Gclose(ga), H5Gclose(gb), H5Fclose(fa), H5Fclose(fb);
  remove(a), remove(b);
}

/* The sampled initial conditions do not depend on anything but (seed, index), and lie on D at E. */
Test(ensemble, initial_conditions_on_D_at_energy) {
  nh_study st;
  nh_ensemble_result r;
  run_ensemble_spec(DATA "small_ensemble.cfg", &st, &r);
  for (int ic = 0; ic < st.count; ic++) {
    const double *q = r.q0 + ic * st.sys.n, *v = r.v0 + ic * st.sys.n;
    cr_expect(nh_constraint_residual(&st.sys, q, v) <= 1e-14);
    cr_expect(fabs(nh_energy(&st.sys, q, v) - 1.535) <= 1e-13, "E0 = %.17g", nh_energy(&st.sys, q, v));
    cr_expect(ic == 0 || q[0] != r.q0[0], "initial conditions differ");
  }
  /* Ensemble statistics: the unbiased variance at the last sample, recomputed here. */
  int ns = st.nsamples, nic = st.count;
  double mean = 0, var = 0;
  for (int ic = 0; ic < nic; ic++) mean += r.dE[(size_t)ic * ns + ns - 1];
  mean /= nic;
  for (int ic = 0; ic < nic; ic++) var += pow(r.dE[(size_t)ic * ns + ns - 1] - mean, 2);
  var /= nic - 1;
  cr_expect(fabs(r.dE_var[ns - 1] - var) <= 1e-12 * var, "variance %g vs %g", r.dE_var[ns - 1], var);
  /* The quantiles at the last sample, by sorting here (insertion sort) and interpolating at the
   * rank p(k − 1) between order statistics. */
  double sorted[64];
  cr_assert(nic <= 64);
  for (int ic = 0; ic < nic; ic++) {
    double d = r.dE[(size_t)ic * ns + ns - 1];
    int j = ic;
    for (; j > 0 && sorted[j - 1] > d; j--) sorted[j] = sorted[j - 1];
    sorted[j] = d;
  }
  const double p[3] = {0.1, 0.5, 0.9}, *got[3] = {r.dE_q10, r.dE_q50, r.dE_q90};
  for (int i = 0; i < 3; i++) {
    const double rank = p[i] * (nic - 1), lo = floor(rank);
    const double want = sorted[(int)lo] + (rank - lo) * ((int)lo + 1 < nic ? sorted[(int)lo + 1] - sorted[(int)lo] : 0);
    cr_expect(fabs(got[i][ns - 1] - want) <= 1e-15 * (1 + fabs(want)), "quantile %g: %.17g, by hand %.17g", p[i],
              got[i][ns - 1], want);
  }
  cr_expect(r.dE_q10[ns - 1] <= r.dE_q50[ns - 1] && r.dE_q50[ns - 1] <= r.dE_q90[ns - 1]);
  nh_ensemble_result_free(&r);
  nh_study_free(&st);
}

/* ---------------------------------------------------------------------------------------------- */
/* Bad specs: a clear message naming file, line and value; exit status 2; no result file.         */

static void expect_spec_error(const char *file, const char *needle1, const char *needle2) {
  char out[8192], args[1024];
  char result[128];
  snprintf(result, sizeof result, "/tmp/nhbench-bad-%d.h5", (int)getpid());
  snprintf(args, sizeof args, "run " DATA "%s -o %s", file, result);
  int rc = test_run_nhbench(args, out, sizeof out);
  cr_expect_eq(rc, 2, "%s: exit status %d, output:\n%s", file, rc, out);
  cr_expect(strstr(out, needle1) != NULL, "%s: message lacks '%s':\n%s", file, needle1, out);
  cr_expect(strstr(out, needle2) != NULL, "%s: message lacks '%s':\n%s", file, needle2, out);
  cr_expect(access(result, F_OK) != 0, "%s: a result file was written", file);
}

Test(spec_errors, unknown_method) {
  expect_spec_error("bad_unknown_method.cfg", "bad_unknown_method.cfg:7:", "nh_newmark_typo");
}
Test(spec_errors, parameter_out_of_range) {
  expect_spec_error("bad_parameter.cfg", "bad_parameter.cfg:5:", "beta=0.7");
}
Test(spec_errors, missing_field) {
  expect_spec_error("bad_missing_field.cfg", "bad_missing_field.cfg:5:", "missing setting 'energy'");
}
Test(spec_errors, malformed_file) {
  expect_spec_error("bad_malformed.cfg", "bad_malformed.cfg:4: syntax error in `h = [0.1, 0.05;`",
                    "lists [a, b] with no trailing comma");
}
Test(spec_errors, unknown_system) {
  expect_spec_error("bad_unknown_system.cfg", "bad_unknown_system.cfg:2:", "partcle");
}
Test(spec_errors, unknown_setting) {
  expect_spec_error("bad_unknown_setting.cfg", "bad_unknown_setting.cfg:5:", "metods");
}
Test(spec_errors, grid_value_out_of_range) {
  expect_spec_error("bad_grid_range.cfg", "bad_grid_range.cfg:7:", "beta=0.6");
}
Test(spec_errors, method_not_applicable) {
  expect_spec_error("bad_not_applicable.cfg", "bad_not_applicable.cfg:6:", "nh_rattle does not apply to falling_disk");
}
Test(spec_errors, unknown_observable) {
  expect_spec_error("bad_observable.cfg", "bad_observable.cfg:8:", "unknown observable 'energies' (observables: energy,");
}
Test(spec_errors, duplicate_step_size) {
  expect_spec_error("bad_duplicate_h.cfg", "bad_duplicate_h.cfg:6:", "h = 0.1 is listed twice");
}
Test(spec_errors, unknown_norm) {
  expect_spec_error("bad_norm.cfg", "bad_norm.cfg:7:", "norm = 'euclid'");
}
Test(spec_errors, unknown_study_kind) {
  expect_spec_error("bad_study_kind.cfg", "bad_study_kind.cfg:2:", "\"work_precision\"");
}
Test(spec_errors, missing_spec_file) {
  expect_spec_error("no_such_file.cfg", "no_such_file.cfg", "cannot read");
}

/* A failed run leaves an existing result file as it was. */
Test(spec_errors, failed_run_keeps_good_file) {
  char path[128], out[8192], args[512];
  snprintf(path, sizeof path, "/tmp/nhbench-keep-%d.h5", (int)getpid());
  FILE *f = fopen(path, "w");
  fputs("good", f);
  fclose(f);
  snprintf(args, sizeof args, "run " DATA "bad_parameter.cfg -o %s", path);
  cr_expect_eq(test_run_nhbench(args, out, sizeof out), 2);
  snprintf(args, sizeof args, "run " NHBENCH_SOURCE_DIR "/tests/orders/particle.cfg -o /proc/nonexistent-dir/x.h5");
  cr_expect_eq(test_run_nhbench(args, out, sizeof out), 2, "%s", out); /* an unwritable output is refused before computing */
  cr_expect(strstr(out, "/proc/nonexistent-dir") != NULL, "%s", out);
  char buf[16] = "";
  f = fopen(path, "r");
  cr_assert(fgets(buf, sizeof buf, f));
  fclose(f);
  cr_expect_str_eq(buf, "good");
  remove(path);
}

/* --set overrides change the study and unknown paths are refused. */
Test(spec_errors, overrides) {
  nh_study st;
  char err[1024];
  const char *ok[] = {"ensemble.count=3", "T=4"};
  cr_assert_eq(nh_study_load(DATA "small_ensemble.cfg", ok, 2, &st, err, sizeof err), 0, "%s", err);
  cr_expect_eq(st.count, 3);
  cr_expect_eq(st.T, 4.0);
  cr_expect_eq(st.nsteps, 20);
  nh_study_free(&st);
  const char *bad[] = {"nosuch.count=3"};
  cr_expect_eq(nh_study_load(DATA "small_ensemble.cfg", bad, 1, &st, err, sizeof err), -1);
  cr_expect(strstr(err, "nosuch") != NULL, "%s", err);
  nh_study_free(&st);
}

/* A trajectory that blows up stops as diverged (status 3) once |dE| > divergence · max(1, |E0|),
 * with NaN samples after it, rather than running on with a finite but meaningless state. */
Test(ensemble, diverging_trajectories_stop) {
  nh_study st;
  nh_ensemble_result r;
  run_ensemble_spec(DATA "diverging_ensemble.cfg", &st, &r);
  int ns = st.nsamples, diverged = 0;
  for (int ic = 0; ic < st.count; ic++) {
    const double *dE = r.dE + (size_t)ic * ns;
    cr_expect_neq(r.status[ic], 0, "IC %d of an anti-damped method ran to T", ic);
    if (r.status[ic] != NH_RUN_DIVERGED) continue;
    diverged++;
    int last = 0;
    while (last + 1 < ns && isfinite(dE[last + 1])) last++;
    cr_expect_gt(fabs(dE[last]), 10.0 * 1.535, "stopped at |dE| = %g", fabs(dE[last]));
    cr_expect(last + 1 < ns && isnan(dE[ns - 1]), "samples after the divergence are NaN");
    for (int s = 0; s < last; s++) cr_expect_leq(fabs(dE[s]), 10.0 * 1.535, "diverged earlier, at sample %d", s);
  }
  cr_expect_gt(diverged, 0, "no IC stopped as diverged (statuses %d %d %d)", r.status[0], r.status[1], r.status[2]);
  nh_ensemble_result_free(&r);
  nh_study_free(&st);
}

/* A bad --set value names the --set setting, not a line of the file. */
Test(spec_errors, bad_set_value_names_the_setting) {
  char out[8192], args[512];
  snprintf(args, sizeof args, "run " DATA "trajectory_particle.cfg --set sample_every=0 -o /tmp/nhbench-set-%d.h5",
           (int)getpid());
  cr_expect_eq(test_run_nhbench(args, out, sizeof out), 2, "%s", out);
  cr_expect(strstr(out, "trajectory_particle.cfg: --set sample_every: sample_every = 0") != NULL, "%s", out);
  cr_expect(strstr(out, ":0:") == NULL, "no line 0: %s", out);
}

/* ---- spec range checks at both sides of each boundary ------------------------------------------ */

/* One spec: the head (study, system, T on lines 1..3) and the rest from line 4; --set overrides
 * (NULL: none). want: NULL, the spec loads; ":N: message", the error is exactly FILE:N: message;
 * ": message", exactly FILE: message (no line: the whole spec or a --set); anything else, a part of
 * the message. */
typedef struct {
  const char *head, *rest, *set, *want;
} spec_case;

static const char *const CONV = "study = \"convergence\";\nsystem = \"particle\";\nT = 1.0;\n";
static const char *const ENS = "study = \"ensemble\";\nsystem = \"chaotic_particle\";\nT = 2.0;\n";
#define ENS_OK "h = 0.5;\nmethods = [\"rk4\"];\n"
#define ENS_GROUP(count, seed) "ensemble = { count = " count "; energy = 1.535; seed = " seed "; };\n"

static int load_case(const spec_case *k, nh_study *st, char *path, size_t pathlen, char *err, size_t errlen) {
  snprintf(path, pathlen, "/tmp/nhbench-spec-%d.cfg", (int)getpid());
  FILE *f = fopen(path, "w");
  cr_assert(f);
  fprintf(f, "%s%s", k->head, k->rest);
  fclose(f);
  const char *ov[1] = {k->set};
  err[0] = '\0';
  int rc = nh_study_load(path, ov, k->set ? 1 : 0, st, err, errlen);
  remove(path);
  return rc;
}

static void check_case(const spec_case *k) {
  nh_study st;
  char path[128], err[2048];
  int rc = load_case(k, &st, path, sizeof path, err, sizeof err);
  if (!k->want) {
    cr_expect_eq(rc, 0, "%s%s (--set %s): %s", k->head, k->rest, k->set ? k->set : "-", err);
  } else {
    cr_expect_eq(rc, -1, "%s%s (--set %s) loaded; want the error %s", k->head, k->rest, k->set ? k->set : "-",
                 k->want);
    char exact[2048];
    snprintf(exact, sizeof exact, "%s%s", path, k->want);
    if (k->want[0] == ':') cr_expect_str_eq(err, exact, "%s%s: the message is\n%s\nnot\n%s", k->head, k->rest, err, exact);
    else cr_expect(strstr(err, k->want) != NULL, "%s%s: message '%s' lacks '%s'", k->head, k->rest, err, k->want);
  }
  nh_study_free(&st);
}

Test(spec_errors, counts_at_both_sides_of_their_ranges) {
  const spec_case cases[] = {
      {CONV, "methods = [\"rk4\"];\nh0 = 0.1;\nhalvings = 1;\n", NULL, NULL},
      {CONV, "methods = [\"rk4\"];\nh0 = 0.1;\nhalvings = 0;\n", NULL, ":6: halvings = 0 must be a whole number in [1, 30]"},
      {CONV, "methods = [\"rk4\"];\nh0 = 0.1;\nhalvings = 30;\n", NULL, NULL},
      {CONV, "methods = [\"rk4\"];\nh0 = 0.1;\nhalvings = 31;\n", NULL, ":6: halvings = 31 must be a whole number in [1, 30]"},
      {CONV, "methods = [\"rk4\"];\nh0 = 0.1;\nhalvings = 1.5;\n", NULL, ":6: halvings = 1.5 must be a whole number in [1, 30]"},
      {CONV, "methods = [\"rk4\"];\nh0 = 0.1;\nhalvings = 2;\n", "halvings=0",
       ": --set halvings: halvings = 0 must be a whole number in [1, 30]"},
      {CONV, "methods = [\"rk4\"];\nh = [0.1, 0.05];\nfit_points = 2;\n", NULL, NULL},
      {CONV, "methods = [\"rk4\"];\nh = [0.1, 0.05];\nfit_points = 1;\n", NULL, ":6: fit_points = 1 must be a whole number in [2, 100]"},
      {CONV, "methods = [\"rk4\"];\nh = [0.1, 0.05];\nfit_points = 100;\n", NULL, NULL},
      {CONV, "methods = [\"rk4\"];\nh = [0.1, 0.05];\nfit_points = 101;\n", NULL, ":6: fit_points = 101 must be a whole number in [2, 100]"},
      {CONV, "methods = [\"rk4\"];\nh = [0.1, 0.05];\nexpected_orders = ( { method = \"rk4\"; order = 0; reason = \"r\"; } );\n", NULL, NULL},
      {CONV, "methods = [\"rk4\"];\nh = [0.1, 0.05];\nexpected_orders = ( { method = \"rk4\"; order = 20; reason = \"r\"; } );\n", NULL, NULL},
      {CONV, "methods = [\"rk4\"];\nh = [0.1, 0.05];\nexpected_orders = ( { method = \"rk4\"; order = 21; reason = \"r\"; } );\n", NULL,
       ":6: order = 21 must be a whole number in [0, 20]"},
      {CONV, "methods = [\"rk4\"];\nh = [0.1, 0.05];\nexpected_orders = ( { method = \"rk4\"; order = -1; reason = \"r\"; } );\n", NULL,
       ":6: order = -1 must be a whole number in [0, 20]"},
      {ENS, ENS_OK ENS_GROUP("1", "0"), NULL, NULL},
      {ENS, ENS_OK ENS_GROUP("0", "0"), NULL, ":6: count = 0 must be a whole number in [1, 1000000]"},
      {ENS, ENS_OK ENS_GROUP("1000000", "0"), NULL, NULL},
      {ENS, ENS_OK ENS_GROUP("1000001", "0"), NULL, ":6: count = 1000001 must be a whole number in [1, 1000000]"},
      {ENS, ENS_OK ENS_GROUP("1", "-1"), NULL, ":6: seed = -1 must be a whole number >= 0 (from 2^53 on, an integer with an L suffix)"},
      {ENS, ENS_OK ENS_GROUP("1", "0.5"), NULL, ":6: seed = 0.5 must be a whole number >= 0 (from 2^53 on, an integer with an L suffix)"},
      /* A real seed is exact below 2^53 only (2^53 + 1 written as a real reads as 2^53). */
      {ENS, ENS_OK ENS_GROUP("1", "9007199254740991.0"), NULL, NULL},
      {ENS, ENS_OK ENS_GROUP("1", "9007199254740992.0"), NULL, ":6: seed = 9007199254740992 must be a whole number >= 0 (from 2^53 on, an integer with an L suffix)"},
      {ENS, ENS_OK ENS_GROUP("1", "9007199254740992L"), NULL, NULL},
      {ENS, ENS_OK ENS_GROUP("1", "0") "grids = ( { method = \"nh_newmark(alpha=0.5)\"; beta = [0.6, 0.1]; beta2 = [0.0]; } );\n",
       NULL, "cfg:7: grid: nh_newmark: "},
      {ENS, ENS_OK ENS_GROUP("1", "0") "grids = ( { method = \"nh_newmark(alpha=0.5)\"; beta = [0.1]; beta2 = [0.0, 0.6]; } );\n",
       NULL, "cfg:7: grid: nh_newmark: "},
      {ENS, ENS_OK ENS_GROUP("1", "0") "sample_every = 4;\n", NULL, NULL},
      {ENS, ENS_OK ENS_GROUP("1", "0") "sample_every = 3;\n", NULL, ":7: sample_every = 3 does not divide the number of steps 4"},
      {ENS, ENS_OK ENS_GROUP("1", "0") "sample_every = 0;\n", NULL, ":7: sample_every = 0 must be a whole number in [1, 1073741824]"},
      {"study = \"onestep\";\nsystem = \"particle\";\nT = 1.0;\n", "methods = [\"rk4\"];\nh = [0.1, 0.05];\npoints = 1;\n", NULL, NULL},
      {"study = \"onestep\";\nsystem = \"particle\";\nT = 1.0;\n", "methods = [\"rk4\"];\nh = [0.1, 0.05];\npoints = 0;\n", NULL,
       ":6: points = 0 must be a whole number in [1, 100000]"},
      {"study = \"onestep\";\nsystem = \"particle\";\nT = 1.0;\n", "methods = [\"rk4\"];\nh = [0.1, 0.05];\npoints = 100000;\n", NULL, NULL},
      {"study = \"onestep\";\nsystem = \"particle\";\nT = 1.0;\n", "methods = [\"rk4\"];\nh = [0.1, 0.05];\npoints = 100001;\n", NULL,
       ":6: points = 100001 must be a whole number in [1, 100000]"},
      {"study = \"work_precision\";\nsystem = \"particle\";\nT = 1.0;\n", "methods = [\"rk4\"];\nh = [0.1];\nrepeats = 1;\n", NULL, NULL},
      {"study = \"work_precision\";\nsystem = \"particle\";\nT = 1.0;\n", "methods = [\"rk4\"];\nh = [0.1];\nrepeats = 0;\n", NULL,
       ":6: repeats = 0 must be a whole number in [1, 1000]"},
      {"study = \"work_precision\";\nsystem = \"particle\";\nT = 1.0;\n", "methods = [\"rk4\"];\nh = [0.1];\nrepeats = 1000;\n", NULL, NULL},
      {"study = \"work_precision\";\nsystem = \"particle\";\nT = 1.0;\n", "methods = [\"rk4\"];\nh = [0.1];\nrepeats = 1001;\n", NULL,
       ":6: repeats = 1001 must be a whole number in [1, 1000]"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) check_case(&cases[i]);
}

/* Numbers with a range: positive (T, h, divergence, time_limit) and reference_tol in [1e-16, 1e-3],
 * each on both sides. */
Test(spec_errors, numbers_at_both_sides_of_their_ranges) {
  const char *const WP = "study = \"work_precision\";\nsystem = \"particle\";\nT = 1.0;\n";
  const spec_case cases[] = {
      {CONV, "methods = [\"rk4\"];\nh = [0.1, 0.05];\nreference_tol = 1e-16;\n", NULL, NULL},
      {CONV, "methods = [\"rk4\"];\nh = [0.1, 0.05];\nreference_tol = 9.9e-17;\n", NULL, ":6: reference_tol = 9.9e-17 must lie in [1e-16, 1e-3]"},
      {CONV, "methods = [\"rk4\"];\nh = [0.1, 0.05];\nreference_tol = 1e-3;\n", NULL, NULL},
      {CONV, "methods = [\"rk4\"];\nh = [0.1, 0.05];\nreference_tol = 0.0011;\n", NULL, ":6: reference_tol = 0.0011 must lie in [1e-16, 1e-3]"},
      {WP, "methods = [\"rk4\"];\nh = [0.1];\nreference_tol = 0.0011;\n", NULL, ":6: reference_tol = 0.0011 must lie in [1e-16, 1e-3]"},
      {CONV, "methods = [\"rk4\"];\nh = [0.1, 0.05];\n", "T=0", ": --set T: T = 0 must be positive"},
      {CONV, "methods = [\"rk4\"];\nh = [0.1, 0.05];\n", "T=-1", ": --set T: T = -1 must be positive"},
      {CONV, "methods = [\"rk4\"];\nh = [0.1, 0.0];\n", NULL, ":5: step sizes must be positive; h[1] = 0"},
      {CONV, "methods = [\"rk4\"];\nh = [-0.1, 0.05];\n", NULL, ":5: step sizes must be positive; h[0] = -0.1"},
      {CONV, "methods = [\"rk4\"];\nh = [0.1];\n", NULL, ":5: this study needs at least 2 step sizes"},
      {CONV, "methods = [\"rk4\"];\nh = [0.1, 0.1];\n", NULL, ":5: step size h = 0.1 is listed twice"},
      {CONV, "methods = [\"rk4\"];\nh = [0.3, 0.1];\n", NULL, ":5: T = 1 is not a whole number of steps of h = 0.3"},
      /* T/h within 1e-9 relative of a whole number: 10 + 5e-9 steps pass, 10 + 1e-6 do not. */
      {CONV, "methods = [\"rk4\"];\nh = [0.09999999995, 0.05];\n", NULL, NULL},
      {CONV, "methods = [\"rk4\"];\nh = [0.0999999, 0.05];\n", NULL, ":5: T = 1 is not a whole number of steps of h = 0.0999999"},
      {ENS, "h = 0.19999999995;\nmethods = [\"rk4\"];\n" ENS_GROUP("1", "0"), NULL, NULL},
      {ENS, "h = 0.1999999;\nmethods = [\"rk4\"];\n" ENS_GROUP("1", "0"), NULL, ":4: T = 2 is not a whole number of steps of h = 0.1999999"},
      {CONV, "methods = [\"rk4\"];\nh = [0.25, 0.125];\nh0 = 0.1;\n", NULL, ":6: 'h0' and 'h' both give the step sizes; keep one ('h' = a list, or 'h0' with 'halvings')"},
      {CONV, "methods = [\"rk4\"];\nh = [0.1, 0.05];\ninitial = [\"default\", \"default\"];\n", NULL,
       ":6: a convergence study takes one initial condition"},
      {ENS, ENS_OK ENS_GROUP("1", "0") "divergence = 1e-300;\n", NULL, NULL},
      {ENS, ENS_OK ENS_GROUP("1", "0") "divergence = 0;\n", NULL, ":7: divergence must be a positive number (default 1e3)"},
      {ENS, "h = 0;\nmethods = [\"rk4\"];\n" ENS_GROUP("1", "0"), NULL, ":4: h = 0 must be positive"},
      {ENS, "h = 0.3;\nmethods = [\"rk4\"];\n" ENS_GROUP("1", "0"), NULL, ":4: T = 2 is not a whole number of steps of h = 0.3"},
      {WP, "methods = [\"rk4\"];\nh = [0.1];\ntime_limit = 1e-9;\n", NULL, NULL},
      /* error_floor and reference_tol: a number (error_floor >= 0) or "auto" */
      {CONV, "methods = [\"rk4\"];\nh = [0.1, 0.05];\nerror_floor = 0;\n", NULL, NULL},
      {CONV, "methods = [\"rk4\"];\nh = [0.1, 0.05];\nerror_floor = \"auto\";\n", NULL, NULL},
      {CONV, "methods = [\"rk4\"];\nh = [0.1, 0.05];\nerror_floor = -1e-300;\n", NULL,
       ":6: error_floor = -1e-300 must be a number >= 0 or \"auto\""},
      {CONV, "methods = [\"rk4\"];\nh = [0.1, 0.05];\nerror_floor = \"Auto\";\n", NULL,
       ":6: 'error_floor' must be a number or \"auto\", not \"Auto\""},
      {CONV, "methods = [\"rk4\"];\nh = [0.1, 0.05];\n", "reference_tol=auto", NULL},
      {CONV, "methods = [\"rk4\"];\nh = [0.1, 0.05];\norder_tolerance = 0;\n", NULL, NULL},
      {CONV, "methods = [\"rk4\"];\nh = [0.1, 0.05];\norder_tolerance = -0.1;\n", NULL,
       ":6: order_tolerance = -0.1 must be a number >= 0"},
      {CONV, "methods = [\"rk4\"];\nh = [0.1, 0.05];\n", "order_tolerance=nan",
       ": --set order_tolerance: 'order_tolerance' = nan must be a finite number"},
      {CONV, "methods = [\"rk4\"];\nh = [0.1, 0.05];\n", "error_floor=inf",
       ": --set error_floor: 'error_floor' = inf must be a finite number"},
      {CONV, "methods = [\"rk4\"];\nh = [0.1, 0.05];\n", "reference_tol=fine",
       ": --set reference_tol: 'reference_tol' must be a number or \"auto\", not \"fine\""},
      {WP, "methods = [\"rk4\"];\nh = [0.1];\ntime_limit = 0;\n", NULL, ":6: time_limit must be a positive number of seconds (default 60)"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) check_case(&cases[i]);
}

/* An error about the spec as a whole names the file without a line (no "FILE:0:"). */
Test(spec_errors, whole_spec_errors_have_no_line) {
  const spec_case cases[] = {
      {CONV, "h = [0.1, 0.05];\n", NULL, ": missing setting 'methods'"},
      {CONV, "methods = [\"rk4\"];\n", NULL, ": missing setting 'h' (a list of step sizes) or 'h0' and 'halvings'"},
      {CONV, "methods = [];\nh = [0.1, 0.05];\n", NULL, ": no methods to run"},
      {ENS, ENS_OK, NULL, ": missing setting 'ensemble' ({ count; energy; seed; }) or 'initial'"},
      {"study = \"trajectory\";\nsystem = \"particle\";\nT = 1.0;\n", "methods = [\"rk4\"];\nh = [0.1];\n", NULL,
       ": a trajectory study needs 'observables', e.g. [\"energy_error\"] (nhbench list observables)"},
      {"system = \"particle\";\n", "", NULL, ": missing setting 'study'"},
      {"study = \"convergence\";\nT = 1.0;\n", "methods = [\"rk4\"];\nh = [0.1, 0.05];\n", NULL,
       ": missing setting 'system'"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) check_case(&cases[i]);
}

/* The loaded values: the defaults where a setting is left out, and what the settings say. */
Test(spec_errors, loaded_values_and_defaults) {
  nh_study st;
  char path[128], err[2048];
  spec_case k = {CONV, "methods = [\"rk4\"];\nh0 = 0.1;\nhalvings = 2;\n", NULL, NULL};
  cr_assert_eq(load_case(&k, &st, path, sizeof path, err, sizeof err), 0, "%s", err);
  cr_expect(st.nh == 3 && st.h[0] == 0.1 && st.h[1] == 0.05 && st.h[2] == 0.025, "h0 and 2 halvings: %d", st.nh);
  cr_expect(st.fit_points == 3 && st.error_floor_auto && st.reference_tol == 1e-13 && st.reference_tol_auto &&
                st.order_tolerance == 0.15,
            "defaults %d %d %g %d %g", st.fit_points, st.error_floor_auto, st.reference_tol, st.reference_tol_auto,
            st.order_tolerance);
  cr_expect(st.norm == NH_NORM_MAX && st.nic == 1 && st.nmethods == 1 && st.T == 1.0);
  nh_study_free(&st);
  k = (spec_case){ENS, ENS_OK ENS_GROUP("3", "9007199254740993L") "sample_every = 2;\n", NULL, NULL};
  cr_assert_eq(load_case(&k, &st, path, sizeof path, err, sizeof err), 0, "%s", err);
  cr_expect(st.count == 3 && st.seed == 9007199254740993ull && st.nsteps == 4 && st.sample_every == 2 &&
                st.nsamples == 3 && st.divergence == 1e3 && st.reference_tol == 1e-13 && st.energy == 1.535 && st.nh == 1 && st.h[0] == 0.5,
            "ensemble %d %g %ld %d %d %g", st.count, (double)st.seed, st.nsteps, st.sample_every, st.nsamples,
            st.divergence);
  nh_study_free(&st);
  k = (spec_case){"study = \"onestep\";\nsystem = \"particle\";\nT = 1.0;\n", "methods = [\"rk4\"];\nh = [0.1, 0.05];\nnorm = \"2\";\n", NULL, NULL};
  cr_assert_eq(load_case(&k, &st, path, sizeof path, err, sizeof err), 0, "%s", err);
  cr_expect(st.npoints == 8 && st.norm == NH_NORM_2 && st.reference_tol == 1e-13, "points %d", st.npoints);
  nh_study_free(&st);
  k = (spec_case){"study = \"work_precision\";\nsystem = \"particle\";\nT = 1.0;\n", "methods = [\"rk4\"];\nh = [0.1];\n", NULL, NULL};
  cr_assert_eq(load_case(&k, &st, path, sizeof path, err, sizeof err), 0, "%s", err);
  cr_expect(st.repeats == 3 && st.time_limit == 60 && st.nh == 1 && st.reference_tol == 1e-13, "repeats %d, time_limit %g", st.repeats, st.time_limit);
  nh_study_free(&st);
}

/* A run's samples are counted in int: T / h / sample_every = INT_MAX − 1 samples after t = 0 load,
 * INT_MAX is refused, named at sample_every (or at the whole spec when it is not given). */
Test(spec_errors, sample_count_at_int_max) {
  const spec_case cases[] = {
      {"study = \"ensemble\";\nsystem = \"chaotic_particle\";\nT = 2147483646.0;\n", "h = 1.0;\nmethods = [\"rk4\"];\n" ENS_GROUP("1", "0"), NULL, NULL},
      {"study = \"ensemble\";\nsystem = \"chaotic_particle\";\nT = 2147483647.0;\n", "h = 1.0;\nmethods = [\"rk4\"];\n" ENS_GROUP("1", "0"), NULL,
       ": 2147483647 steps sampled every 1 make more than 2147483646 samples per run; sample less often"},
      {"study = \"ensemble\";\nsystem = \"chaotic_particle\";\nT = 4294967294.0;\n", "h = 1.0;\nmethods = [\"rk4\"];\n" ENS_GROUP("1", "0") "sample_every = 2;\n", NULL,
       ":7: 4294967294 steps sampled every 2 make more than 2147483646 samples per run; sample less often"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) check_case(&cases[i]);
}

/* A spec is read whole up to 1 MiB: a valid spec padded with a comment to exactly 1 MiB loads (its
 * last setting, after the padding, is read too); one byte more is refused as too large. */
Test(spec_errors, spec_of_exactly_the_size_limit) {
  char path[128], err[1024] = "";
  snprintf(path, sizeof path, "/tmp/nhbench-big-%d.cfg", (int)getpid());
  const char *head = "study = \"convergence\";\nsystem = \"particle\";\nT = 1.0;\nh = [0.1, 0.05];\n#";
  const char *tail = "\nmethods = [\"rk4\"];\n";
  const size_t limit = 1u << 20;
  for (int extra = 0; extra < 2; extra++) {
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fputs(head, f);
    for (size_t i = strlen(head) + strlen(tail); i < limit + (size_t)extra; i++) fputc('x', f);
    fputs(tail, f);
    fclose(f);
    nh_study st;
    const int rc = nh_study_load(path, NULL, 0, &st, err, sizeof err);
    if (extra == 0) {
      cr_expect_eq(rc, 0, "1 MiB: %s", err);
      cr_expect_eq(st.nmethods, 1, "the setting after the padding");
    } else {
      cr_expect_eq(rc, -1);
      cr_expect(strstr(err, "cannot read: File too large"), "%s", err);
    }
    nh_study_free(&st);
  }
  remove(path);
}

/* Loading a spec closes its file: with at most 16 files open, 64 loads in a row all succeed. */
Test(spec_errors, loading_closes_the_spec_file) {
  struct rlimit lim = {16, 16};
  cr_assert_eq(setrlimit(RLIMIT_NOFILE, &lim), 0);
  for (int i = 0; i < 64; i++) {
    nh_study st;
    char err[1024];
    cr_assert_eq(nh_study_load(DATA "order_claim.cfg", NULL, 0, &st, err, sizeof err), 0, "load %d: %s", i, err);
    nh_study_free(&st);
  }
}
