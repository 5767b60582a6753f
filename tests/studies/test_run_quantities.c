/* studies/: checks added for mutation robustness (issue 16). Each expected value comes from the
 * spec's definition (study.h) or a hand computation, never from an earlier run. */
#include <criterion/criterion.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "studies/study.h"
#include "tests/helpers.h"

#define DATA NHBENCH_SOURCE_DIR "/tests/data/"

static void load(const char *path, const char *const *ov, int nov, nh_study *st) {
  char err[1024];
  cr_assert_eq(nh_study_load(path, ov, nov, st, err, sizeof err), 0, "%s", err);
}

/* divergence = 1e-300: any energy change at all exceeds divergence · max(1, |E0|), so every run
 * that moves the energy stops as NH_RUN_DIVERGED (study.h) and its status says so; a run with
 * status 0 must then have kept the energy exactly (its energy_error samples all 0). */
Test(run_quantities, trajectory_status_records_divergence) {
  const char *ov[] = {"divergence=1e-300"};
  nh_study st;
  nh_trajectory_result r;
  char err[1024];
  load(DATA "trajectory_particle.cfg", ov, 1, &st);
  cr_assert_eq(nh_run_trajectory(&st, &r, err, sizeof err), 0, "%s", err);
  const size_t runs = (size_t)st.nmethods * st.nh * st.nic;
  int diverged = 0;
  for (size_t run = 0; run < runs; run++) {
    cr_expect(r.status[run] == 0 || r.status[run] == NH_RUN_DIVERGED, "run %zu: status %d", run, r.status[run]);
    diverged += r.status[run] == NH_RUN_DIVERGED;
  }
  cr_expect_gt(diverged, 0, "no run of %zu recorded as diverged at divergence = 1e-300", runs);
  nh_trajectory_result_free(&r);
  nh_study_free(&st);
}

/* Writes a spec to a temporary file and loads it; returns nh_study_load's code. */
static int load_text(const char *text, nh_study *st, char *err, size_t errlen, char *path, size_t pathlen) {
  snprintf(path, pathlen, "/tmp/nhbench_mut_studies_%d.cfg", (int)getpid());
  FILE *f = fopen(path, "w");
  cr_assert_not_null(f);
  fputs(text, f);
  fclose(f);
  return nh_study_load(path, NULL, 0, st, err, errlen);
}

#define ENSEMBLE_HEAD "study = \"ensemble\"; system = \"chaotic_particle\"; T = 0.4; h = 0.2;\n"
#define ENSEMBLE_TAIL "methods = [\"rk4\"]; # 99999999999 in a comment is no value\n"

/* libconfig 1.5 wraps an integer literal beyond 32 bits (4294967297 = 2^32 + 1 would read as 1):
 * such a seed is refused with file, line and value; with an L suffix it reads exactly; a big
 * number inside a string or comment is not a literal. */
Test(run_quantities, integer_literal_beyond_32_bits) {
  nh_study st;
  char err[1024], path[128];
  int rc = load_text(ENSEMBLE_HEAD "\nensemble = { count = 2; energy = 1.5; seed = 4294967297; };\n" ENSEMBLE_TAIL, &st,
                     err, sizeof err, path, sizeof path);
  cr_expect_eq(rc, -1, "a wrapped seed was accepted");
  char where[160];
  snprintf(where, sizeof where, "%s:3: the integer 4294967297 ", path);
  cr_expect(strstr(err, where) != NULL, "message '%s' lacks '%s'", err, where);
  nh_study_free(&st);
  rc = load_text(ENSEMBLE_HEAD "ensemble = { count = 2; energy = 1.5; seed = -2147483649; };\n" ENSEMBLE_TAIL, &st, err,
                 sizeof err, path, sizeof path);
  cr_expect(rc == -1 && strstr(err, ":2: the integer -2147483649 "), "below INT_MIN: %s", err);
  nh_study_free(&st);
  /* INT_MAX itself fits; 2^32 + 1 with an L suffix is read exactly. */
  rc = load_text(ENSEMBLE_HEAD "ensemble = { count = 2; energy = 1.5; seed = 2147483647; };\n" ENSEMBLE_TAIL, &st, err,
                 sizeof err, path, sizeof path);
  cr_expect(rc == 0 && st.seed == 2147483647u, "INT_MAX: rc %d, %s", rc, err);
  nh_study_free(&st);
  rc = load_text(ENSEMBLE_HEAD "ensemble = { count = 2; energy = 1.5; seed = 4294967297L; };\n" ENSEMBLE_TAIL, &st, err,
                 sizeof err, path, sizeof path);
  cr_expect(rc == 0 && st.seed == 4294967297u, "L suffix: rc %d, seed %llu, %s", rc, (unsigned long long)st.seed, err);
  nh_study_free(&st);
  remove(path);
  /* The bounds themselves, read by the literal check alone: INT_MIN and INT_MAX fit, one beyond
   * either does not. */
  cr_expect_eq(nh_config_check_integers("s.cfg", "a = -2147483648;\nb = 2147483647;\n", err, sizeof err), 0, "%s", err);
  cr_expect_eq(nh_config_check_integers("s.cfg", "a = 1;\nb = 2147483648;\n", err, sizeof err), -1);
  cr_expect(strstr(err, "s.cfg:2: the integer 2147483648 ") != NULL, "%s", err);
  cr_expect_eq(nh_config_check_integers("s.cfg", "a = -2147483649;\n", err, sizeof err), -1);
  cr_expect(strstr(err, "s.cfg:1: the integer -2147483649 ") != NULL, "%s", err);
}

/* A convergence run that fails (nh_newmark with beta' > beta gains energy, spec/newmark.md 2.2,
 * and blows up long before T = 400) has no error and no multiplier error: both NaN, status not 0. */
Test(run_quantities, failed_convergence_run_has_no_errors) {
  nh_study st;
  nh_convergence_result r;
  char err[1024], path[128];
  cr_assert_eq(load_text("study = \"convergence\"; system = \"chaotic_particle\"; T = 400.0; h = [0.2, 0.1];\n"
                         "methods = [\"nh_newmark(beta=0,beta2=0.3,alpha=0.5)\"];\n",
                         &st, err, sizeof err, path, sizeof path),
               0, "%s", err);
  remove(path);
  const double t0 = omp_get_wtime();
  cr_assert_eq(nh_run_convergence(&st, &r, err, sizeof err), 0, "%s", err);
  const double elapsed = omp_get_wtime() - t0;
  for (int hi = 0; hi < st.nh; hi++) {
    /* Each run's wall time lies within the whole call's (not a clock reading or a sum of two). */
    cr_expect(r.wall_time[hi] >= 0 && r.wall_time[hi] <= elapsed, "h = %g: wall time %g of %g s", st.h[hi],
              r.wall_time[hi], elapsed);
    cr_expect_neq(r.status[hi], 0, "h = %g ran to T", st.h[hi]);
    cr_expect(isnan(r.err[hi]) && isnan(r.err_q[hi]) && isnan(r.err_v[hi]), "h = %g: error %g", st.h[hi], r.err[hi]);
    cr_expect(isnan(r.lambda_err[hi]), "h = %g: multiplier error %g of a failed run", st.h[hi], r.lambda_err[hi]);
  }
  nh_convergence_result_free(&r);
  nh_study_free(&st);
}

/* A convergence run's own quantities, recomputed step by step from their definitions (study.h):
 * the constraint residual is the largest over the start and every step; the discrete residual the
 * largest of the method's own constraint over every step (NaN for rk4, which has none); the
 * multiplier error max_a |λ − λ(t*)| of the last step; the step count T/h. */
Test(run_quantities, convergence_run_quantities_recomputed_step_by_step) {
  nh_study st;
  nh_convergence_result r;
  char err[1024];
  const char *ov[] = {"h=[0.4, 0.05]"}; /* T = 0.4: one step, then eight */
  load(DATA "convergence_norms.cfg", ov, 1, &st);
  cr_assert_eq(nh_run_convergence(&st, &r, err, sizeof err), 0, "%s", err);
  const nh_system *sys = &st.sys;
  for (int mi = 0; mi < st.nmethods; mi++)
    for (int hi = 0; hi < st.nh; hi++) {
      const nh_method *m = st.methods[mi];
      const int cell = mi * st.nh + hi;
      const double h = st.h[hi];
      const long nsteps = lround(st.T / h);
      nh_state x = st.x0, prev;
      nh_cost c = {0};
      double res = nh_constraint_residual(sys, x.q, x.v), disc = -1, d[NH_MAX_K];
      cr_assert_eq(nh_method_init(m, sys, &x, h, &c), NH_STEP_OK);
      for (long s = 0; s < nsteps; s++) {
        prev = x;
        cr_assert_eq(nh_method_step(m, sys, &prev, &x, h, &c), NH_STEP_OK);
        x.t = st.x0.t + (double)(s + 1) * h;
        res = fmax(res, nh_constraint_residual(sys, x.q, x.v));
        if (m->type->discrete_constraint) {
          m->type->discrete_constraint(m, sys, &prev, &x, h, d);
          disc = fmax(disc, nh_norm_max(sys->k, d));
        }
      }
      cr_expect_eq(r.status[cell], NH_STEP_OK);
      cr_expect_eq(r.cost[cell].steps, (unsigned long long)nsteps, "%s, h = %g", m->type->name, h);
      cr_expect_eq(r.residual[cell], res, "%s, h = %g: residual %.17g, by hand %.17g", m->type->name, h,
                   r.residual[cell], res);
      if (m->type->discrete_constraint)
        cr_expect_eq(r.discrete_residual[cell], disc, "%s, h = %g: %.17g, by hand %.17g", m->type->name, h,
                     r.discrete_residual[cell], disc);
      else
        cr_expect(isnan(r.discrete_residual[cell]), "%s has no discrete constraint", m->type->name);
      const double t = nh_method_multiplier_time(m, prev.t, x.t);
      if (isnan(t)) {
        cr_expect(isnan(r.lambda_err[cell]), "%s defines no multiplier", m->type->name);
        continue;
      }
      nh_state ref;
      double lam[NH_MAX_K], e = 0;
      cr_assert_eq(nh_true_solution(sys, &st.x0, t, st.reference_tol, &ref, NULL), 0);
      cr_assert_eq(nh_multiplier(sys, t, ref.q, ref.v, lam), 0);
      for (int a = 0; a < sys->k; a++) e = fmax(e, fabs(x.lambda[a] - lam[a]));
      cr_expect_eq(r.lambda_err[cell], e, "%s, h = %g: %.17g, by hand %.17g", m->type->name, h, r.lambda_err[cell], e);
    }
  nh_convergence_result_free(&r);
  nh_study_free(&st);
}

/* The constraint residual of a convergence run is the largest from the start on: nh_rattle keeps
 * A(q)v at round-off after every step (spec/rattle.md), so a start 5e-13 off D (allowed: within
 * 1e-12) is the largest, and the study reports exactly it. */
Test(run_quantities, convergence_residual_counts_the_start) {
  nh_study st;
  nh_convergence_result r;
  char err[1024], path[128];
  cr_assert_eq(load_text("study = \"convergence\"; system = \"particle\"; T = 0.1; h = [0.1, 0.05];\n"
                         "initial = { q = [0.1, 0.2, 0.3]; v = [1.0, 0.5, 0.2000000000005]; };\n"
                         "methods = [\"nh_rattle\"];\n",
                         &st, err, sizeof err, path, sizeof path),
               0, "%s", err);
  remove(path);
  const double start = nh_constraint_residual(&st.sys, st.x0.q, st.x0.v);
  cr_assert(start > 4e-13 && start < 6e-13, "%g", start);
  cr_assert_eq(nh_run_convergence(&st, &r, err, sizeof err), 0, "%s", err);
  for (int hi = 0; hi < st.nh; hi++) cr_expect_eq(r.residual[hi], start, "h = %g: %.17g", st.h[hi], r.residual[hi]);
  nh_convergence_result_free(&r);
  nh_study_free(&st);
}

/* Each of count wall times is a duration in (0, limit] seconds. */
static void expect_within(const char *what, const double *t, int count, double limit) {
  for (int i = 0; i < count; i++) cr_expect(t[i] > 0 && t[i] <= limit, "%s %d: %g of %g s", what, i, t[i], limit);
}

/* Wall times are durations inside the call: a trajectory run's and a work-precision repeat's lie
 * within the whole call's; an ensemble method's is the sum over its trajectories, run on at most
 * omp_get_max_threads() threads at once, so within that many times the call's, and not 0. */
Test(run_quantities, wall_times_lie_within_the_call) {
  nh_study tst, wst, est;
  char err[1024];
  nh_trajectory_result tr;
  nh_work_precision_result wp;
  nh_ensemble_result en;
  load(DATA "trajectory_particle.cfg", NULL, 0, &tst);
  load(DATA "work_precision_small.cfg", NULL, 0, &wst);
  load(DATA "small_ensemble.cfg", NULL, 0, &est);
  double t0 = omp_get_wtime();
  cr_assert_eq(nh_run_trajectory(&tst, &tr, err, sizeof err), 0, "%s", err);
  expect_within("trajectory run", tr.wall_time, tst.nmethods * tst.nh * tst.nic, omp_get_wtime() - t0);
  t0 = omp_get_wtime();
  cr_assert_eq(nh_run_work_precision(&wst, &wp, err, sizeof err), 0, "%s", err);
  expect_within("work-precision repeat", wp.wall_times, wst.nmethods * wst.nh * wst.repeats, omp_get_wtime() - t0);
  t0 = omp_get_wtime();
  cr_assert_eq(nh_run_ensemble(&est, &en, err, sizeof err), 0, "%s", err);
  expect_within("ensemble method", en.wall_time, est.nmethods, omp_get_max_threads() * (omp_get_wtime() - t0));
  nh_trajectory_result_free(&tr), nh_work_precision_result_free(&wp), nh_ensemble_result_free(&en);
  nh_study_free(&tst), nh_study_free(&wst), nh_study_free(&est);
}

/* sample_every must divide the step count T/h of every h, the first one included: T = 2 with
 * h = 0.4 (5 steps) and 0.1 (20 steps) at sample_every = 4 fails on h = 0.4 only; 3 fails on the
 * 20 steps of h = 0.1 alone; 5 divides both. */
Test(run_quantities, sample_every_divides_the_first_h_too) {
  static const struct {
    const char *h;
    int every;
    const char *refusal; /* NULL: loaded */
  } cases[] = {{"[0.4, 0.1]", 4, ":2: sample_every = 4 does not divide the 5 steps of h = 0.4"},
               {"0.1", 3, ":2: sample_every = 3 does not divide the 20 steps of h = 0.1"},
               {"[0.4, 0.1]", 5, NULL}};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    nh_study st;
    char text[512], err[1024] = "", path[128];
    snprintf(text, sizeof text,
             "study = \"trajectory\"; system = \"particle\"; T = 2.0; h = %s;\n"
             "sample_every = %d; observables = [\"energy_error\"]; methods = [\"rk4\"];\n",
             cases[i].h, cases[i].every);
    const int rc = load_text(text, &st, err, sizeof err, path, sizeof path);
    remove(path);
    cr_expect_eq(rc, cases[i].refusal ? -1 : 0, "h = %s, sample_every = %d: %s", cases[i].h, cases[i].every, err);
    if (cases[i].refusal) cr_expect(strstr(err, cases[i].refusal) != NULL, "%s", err);
    nh_study_free(&st);
  }
}

/* The adjoint defect is NaN (absent) without an adjoint, and for a method that carries history
 * between steps (dla: NH_HISTORY, a step depends on more than the state), on either side; a
 * plain method against itself gives a number. */
Test(run_quantities, adjoint_defect_absent_without_adjoint_or_with_history) {
  nh_system sys = test_system("particle", NULL);
  nh_method *rk4 = test_method("rk4"), *dla = test_method("dla");
  nh_state x, y;
  nh_system_default_state(&sys, &x);
  nh_cost c = {0};
  cr_assert_eq(nh_method_init(rk4, &sys, &x, 0.1, &c), NH_STEP_OK);
  cr_assert_eq(nh_method_step(rk4, &sys, &x, &y, 0.1, &c), NH_STEP_OK);
  cr_expect(isnan(nh_onestep_adjoint_defect(rk4, NULL, &sys, &x, &y, 0.1, NH_NORM_MAX)), "no adjoint");
  cr_expect(isnan(nh_onestep_adjoint_defect(dla, dla, &sys, &x, &y, 0.1, NH_NORM_MAX)), "history on both sides");
  cr_expect(isnan(nh_onestep_adjoint_defect(rk4, dla, &sys, &x, &y, 0.1, NH_NORM_MAX)), "history in the adjoint");
  cr_expect(isnan(nh_onestep_adjoint_defect(dla, rk4, &sys, &x, &y, 0.1, NH_NORM_MAX)), "history in the method");
  const double d = nh_onestep_adjoint_defect(rk4, rk4, &sys, &x, &y, 0.1, NH_NORM_MAX);
  cr_expect(isfinite(d) && d >= 0, "rk4 against itself: %g", d);
  nh_method_free(rk4), nh_method_free(dla);
}

/* The defect by hand (study.h): F*_{-h} from y as the forward step left it, its carry included (an
 * adjoint of the same type is not initialised again); an adjoint of another type is first
 * initialised on y with -h. Then the max norm of (q, v) − x, to the bit. */
static double adjoint_defect_by_hand(nh_method *m, nh_method *adj, const nh_system *sys, const nh_state *x0,
                                     double h, nh_state *x, nh_state *y) {
  nh_cost c = {0};
  *x = *x0;
  cr_assert_eq(nh_method_init(m, sys, x, h, &c), NH_STEP_OK);
  cr_assert_eq(nh_method_step(m, sys, x, y, h, &c), NH_STEP_OK);
  nh_state start = *y, z;
  if (adj->type != m->type) cr_assert_eq(nh_method_init(adj, sys, &start, -h, &c), NH_STEP_OK);
  cr_assert_eq(nh_method_step(adj, sys, &start, &z, -h, &c), NH_STEP_OK);
  double worst = 0;
  for (int i = 0; i < sys->n; i++) worst = fmax(worst, fmax(fabs(z.q[i] - x->q[i]), fabs(z.v[i] - x->v[i])));
  return worst;
}

Test(run_quantities, adjoint_defect_from_the_step_left_carry) {
  nh_system sys = test_system("chaotic_particle", NULL);
  nh_state x0, x, y;
  nh_system_default_state(&sys, &x0);
  static const char *const pairs[][2] = {{"nh_rattle", "nh_rattle"},
                                         {"nh_newmark(beta=0.1,beta2=0.1,alpha=0)", "nh_newmark(beta=0.1,beta2=0.1,alpha=1)"},
                                         {"rk4", "nh_newmark(alpha=0.5)"}};
  for (int k = 0; k < 3; k++) {
    nh_method *m = test_method(pairs[k][0]), *adj = test_method(pairs[k][1]);
    const double want = adjoint_defect_by_hand(m, adj, &sys, &x0, 0.2, &x, &y);
    const double got = nh_onestep_adjoint_defect(m, adj, &sys, &x, &y, 0.2, NH_NORM_MAX);
    cr_expect_eq(got, want, "%s then %s: %.17g, by hand %.17g", pairs[k][0], pairs[k][1], got, want);
    nh_method_free(m), nh_method_free(adj);
  }
}
