/* One-step study (studies/onestep.c) against values computed here independently: steps taken by
 * the test itself, norms by hand-written loops, the particle's exact solution, multiplier and
 * action in closed form (spec/newmark.md §3.1), and the condition number by QR instead of LU.
 * Expectations: spec/discretization.md §6.3, R1, R18; spec/newmark.md §2.5, §2.7, C8, C12. The
 * study is built by hand here (the spec loader is tested elsewhere). */
#include <criterion/criterion.h>
#include <gsl/gsl_fit.h>
#include <gsl/gsl_linalg.h>
#include <float.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "studies/study.h"
#include "tests/hand_study.h"


/* ---- set-up ------------------------------------------------------------------------------------ */

typedef struct {
  const char *system, *params;
  const char *const *methods;
  int nm;
  const nh_state *ics; /* NULL: the system's default state */
  int nic;
  double T;
  int npoints;
  double h0; /* h = h0 / 2^i, i = 0 … nh−1 */
  int nh;
  nh_norm norm;
  int fit_points;
} setup;

/* Each test states its study in one `setup` line; that line, build_and_run and finish repeat
 * between tests as the tests' data (not merged further). */
static nh_study build(const setup *s) {
  nh_study st = test_hand_study(NH_STUDY_ONESTEP, "test_onestep", s->system, s->params, s->methods, s->nm, s->ics,
                                s->nic);
  st.T = s->T;
  st.npoints = s->npoints;
  st.nh = s->nh;
  st.h = calloc((size_t)s->nh, sizeof *st.h);
  for (int i = 0; i < s->nh; i++) st.h[i] = ldexp(s->h0, -i);
  st.norm = s->norm;
  st.fit_points = s->fit_points ? s->fit_points : s->nh;
  st.error_floor = 1e-13;
  st.reference_tol = 1e-13;
  return st;
}

static void run(const nh_study *st, nh_onestep_result *r) {
  char err[512] = "";
  cr_assert_eq(nh_run_onestep(st, r, err, sizeof err), 0, "%s", err);
  cr_assert_eq(r->npoints, st->nic * st->npoints);
}

/* The study of s, run into r (nh_study and result of most tests; free both with finish). */
static nh_study build_and_run(const setup *s, nh_onestep_result *r) {
  nh_study st = build(s);
  run(&st, r);
  return st;
}

static void finish(nh_study *st, nh_onestep_result *r) {
  nh_onestep_result_free(r);
  test_hand_study_release(st);
}

static size_t cell(const nh_study *st, const nh_onestep_result *r, int mi, int hi, int p) {
  return ((size_t)mi * st->nh + hi) * r->npoints + p;
}

/* The start state of point p, rebuilt from the result. */
static nh_state point_state(const nh_study *st, const nh_onestep_result *r, int p) {
  const int n = st->sys.n;
  nh_state x = {0};
  x.t = r->point_t[p];
  memcpy(x.q, r->points + (size_t)p * 2 * n, sizeof(double) * (size_t)n);
  memcpy(x.v, r->points + (size_t)p * 2 * n + n, sizeof(double) * (size_t)n);
  return x;
}

/* One step of m from x (after init), as a user would take it. */
static void step_from(const nh_method *m, const nh_system *sys, nh_state *x, nh_state *y, double h) {
  nh_cost c = {0};
  cr_assert_eq(nh_method_init(m, sys, x, h, &c), NH_STEP_OK);
  cr_assert_eq(nh_method_step(m, sys, x, y, h, &c), NH_STEP_OK);
}

static double max_abs(int n, const double *d) {
  double m = 0;
  for (int i = 0; i < n; i++)
    if (fabs(d[i]) > m) m = fabs(d[i]);
  return m;
}

static double root_sum_sq(int n, const double *d) {
  double s = 0;
  for (int i = 0; i < n; i++) s += d[i] * d[i];
  return sqrt(s);
}

/* Least-squares slope of log y against log x. */
static double loglog_slope(int n, const double *x, const double *y) {
  double lx[16], ly[16], c0, c1, c00, c01, c11, ss;
  for (int i = 0; i < n; i++) lx[i] = log(x[i]), ly[i] = log(y[i]);
  gsl_fit_linear(lx, 1, ly, 1, (size_t)n, &c0, &c1, &c00, &c01, &c11, &ss);
  return c1;
}

/* The particle's second initial condition (spec/discretization.md §5): on D (ż = y ẋ), y ≠ 0 along
 * the whole run. The first is the paper's (preset "newmark"). */
static nh_state particle_ic(int which) {
  nh_state x = {0};
  const double q[2][3] = {{1, 1, -1}, {0, 0.3, 0}}, v[2][3] = {{1, -1, 1}, {1, 0.8, 0.3}};
  memcpy(x.q, q[which], sizeof q[0]);
  memcpy(x.v, v[which], sizeof v[0]);
  return x;
}

/* ---- points ------------------------------------------------------------------------------------ */

/* Points are the true solution from ics[i] at ics[i].t + j T/npoints, index i·npoints + j; the
 * chaotic particle has no exact solution, so this exercises the rk8pd reference. The second IC
 * starts at t = 0.5 so that a missing time offset would show. */
/* Points are the IC itself and states of the true solution with their velocity projected onto D
 * (the reference's round-off off D removed: an identity of a step, F*_{-h} o F_h = id, holds on D). */
Test(onestep, points_follow_the_true_solution) {
  nh_system sys = test_system("chaotic_particle", NULL);
  nh_state ics[2];
  nh_system_default_state(&sys, &ics[0]);
  gsl_rng *rng = test_rng(7);
  cr_assert_eq(nh_sample_on_D(&sys, 1.535, rng, &ics[1]), 0);
  gsl_rng_free(rng);
  ics[1].t = 0.5;
  const char *methods[] = {"rk4"};
  setup s = {"chaotic_particle", NULL, methods, 1, ics, 2, 1.5, 3, 0.1, 1, NH_NORM_MAX, 0};
  nh_onestep_result r;
  nh_study st = build_and_run(&s, &r);
  const int n = st.sys.n;
  cr_expect_str_eq(r.reference_kind, "rk8pd");
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 3; j++) {
      const int p = i * 3 + j;
      const double t = ics[i].t + j * 0.5;
      cr_expect(fabs(r.point_t[p] - t) <= 1e-15, "point %d at t = %.17g, expected %.17g", p, r.point_t[p], t);
      nh_state x = ics[i];
      if (j > 0) cr_assert_eq(nh_true_solution(&sys, &ics[i], t, 1e-13, &x, NULL), 0);
      /* The reference's velocity projected onto D (M = I, one constraint: v − μ(μ·v)/|μ|²); the IC
       * itself as given. */
      double mu[NH_MAX_N], mv = 0, mm = 0, res = 0, vmax = 0;
      sys.type->constraints(sys.p, x.q, mu);
      for (int c = 0; c < n; c++) mv += mu[c] * x.v[c], mm += mu[c] * mu[c];
      for (int c = 0; c < n; c++) {
        const double v = j > 0 ? x.v[c] - mu[c] * (mv / mm) : x.v[c], got = r.points[p * 2 * n + n + c];
        cr_expect_eq(r.points[p * 2 * n + c], x.q[c], "point %d q[%d]", p, c);
        cr_expect(fabs(got - v) <= 2.3e-16 * fabs(v), "point %d v[%d]: %.17g, projected by hand %.17g", p, c, got, v);
        if (j == 0) cr_expect_eq(got, x.v[c], "the IC's v[%d] as given", c);
        res += mu[c] * got, vmax = fmax(vmax, fabs(got));
      }
      /* on D to the rounding of μ·v (5 terms of size ≤ |μ||v|): 5 ulp of |μ|∞|v|∞ */
      double mumax = 0;
      for (int c = 0; c < n; c++) mumax = fmax(mumax, fabs(mu[c]));
      cr_expect(fabs(res) <= 5 * 2.2e-16 * mumax * vmax, "point %d: |mu.v| = %.3e", p, fabs(res));
    }
  /* Not trivially equal: the points move along each solution and the two ICs differ. */
  cr_expect(fabs(r.points[0] - r.points[2 * n]) > 1e-3, "points 0 and 1 coincide");
  cr_expect(fabs(r.points[0] - r.points[3 * 2 * n]) > 1e-3, "IC 0 and IC 1 coincide");
  finish(&st, &r);
}

/* One point per IC is the IC itself, no true state needed to reach it; the step from it still
 * takes the rk8pd reference (chaotic particle), and says so. */
Test(onestep, reference_kind_from_the_steps_alone) {
  const char *methods[] = {"rk4"};
  setup s = {"chaotic_particle", NULL, methods, 1, NULL, 1, 1.0, 1, 0.1, 1, NH_NORM_MAX, 0};
  nh_onestep_result r;
  nh_study st = build_and_run(&s, &r);
  cr_expect_str_eq(r.reference_kind, "rk8pd");
  finish(&st, &r);
}

/* ---- local error, stepped state, slopes -------------------------------------------------------- */

/* Particle (exact solution): local error slope p + 1 (discretization §6.3, R18): 2 for the order-1
 * nh_newmark(alpha=0), 3 for the order-2 nh_newmark(alpha=0.5), 5 for rk4. Every local error and
 * stepped state equals a step taken here against the exact solution, and the slope equals a fit
 * of the maxima over the points made here. */
Test(onestep, local_error_slopes_and_values_particle) {
  const char *methods[] = {"nh_newmark(alpha=0)", "nh_newmark(alpha=0.5)", "rk4"};
  const double expected[] = {2, 3, 5};
  const nh_state ics[] = {particle_ic(0), particle_ic(1)};
  setup s = {"particle", NULL, methods, 3, ics, 2, 2.0, 2, 0.1, 5, NH_NORM_MAX, 0};
  nh_onestep_result r;
  nh_study st = build_and_run(&s, &r);
  cr_expect_str_eq(r.reference_kind, "exact");
  const int n = st.sys.n;
  int checked = 0;
  for (int mi = 0; mi < 3; mi++) {
    double emax[5];
    for (int hi = 0; hi < st.nh; hi++) {
      emax[hi] = 0;
      for (int p = 0; p < r.npoints; p++) {
        const size_t c = cell(&st, &r, mi, hi, p);
        const double h = st.h[hi];
        nh_state x = point_state(&st, &r, p), y, ex;
        const nh_state start = x;
        step_from(st.methods[mi], &st.sys, &x, &y, h);
        cr_assert_eq(nh_exact_solution(&st.sys, &start, start.t + h, &ex), 0);
        double d[2 * NH_MAX_N];
        for (int i = 0; i < n; i++) d[i] = y.q[i] - ex.q[i], d[n + i] = y.v[i] - ex.v[i];
        cr_expect_eq(r.status[c], NH_STEP_OK);
        cr_expect(fabs(r.local_err[c] - max_abs(2 * n, d)) <= 1e-15 * max_abs(2 * n, d), "%s h=%g p=%d: %.17g vs %.17g",
                  methods[mi], h, p, r.local_err[c], max_abs(2 * n, d));
        cr_expect(fabs(r.local_err_q[c] - max_abs(n, d)) <= 1e-15 * max_abs(n, d), "q part");
        cr_expect(fabs(r.local_err_v[c] - max_abs(n, d + n)) <= 1e-15 * max_abs(n, d + n), "v part");
        for (int i = 0; i < n; i++) {
          cr_expect_eq(r.stepped[c * 2 * n + i], y.q[i], "stepped q[%d]", i);
          cr_expect_eq(r.stepped[c * 2 * n + n + i], y.v[i], "stepped v[%d]", i);
        }
        emax[hi] = fmax(emax[hi], max_abs(2 * n, d));
        checked++;
      }
    }
    cr_expect(fabs(r.slope[mi] - expected[mi]) < 0.1, "%s: local error slope %.3f, expected %g", methods[mi],
              r.slope[mi], expected[mi]);
    cr_expect_eq(r.fit_count[mi], 5);
    cr_expect_eq(r.fit_first[mi], 4, "the finest h is h[4]");
    const double slope = loglog_slope(5, st.h, emax);
    cr_expect(fabs(r.slope[mi] - slope) < 1e-10, "%s: slope %.15g, fit here %.15g", methods[mi], r.slope[mi], slope);
  }
  cr_expect_eq(checked, 3 * 5 * 4);
  /* The q and v parts are different numbers here, so a swap would show. */
  const size_t c = cell(&st, &r, 1, 0, 0);
  cr_expect(fabs(r.local_err_q[c] - r.local_err_v[c]) > 0.1 * r.local_err_q[c], "q %g v %g", r.local_err_q[c],
            r.local_err_v[c]);
  finish(&st, &r);
}

/* rk4 by itself on the chaotic particle (reference solution): slope 5; a failing method in the
 * same study records its status and NaN values while the others go on. nh_newmark at
 * (β, β') = (½, 0) has an exactly singular Jacobian (spec/newmark.md §2.5): Newton fails. */
Test(onestep, rk4_slope_and_failed_steps) {
  const char *methods[] = {"nh_newmark(beta=0.5,beta2=0,alpha=0.5,allow_ill_conditioned=1)", "rk4"};
  setup s = {"chaotic_particle", NULL, methods, 2, NULL, 1, 2.0, 2, 0.1, 4, NH_NORM_MAX, 0};
  nh_onestep_result r;
  nh_study st = build_and_run(&s, &r);
  cr_expect(fabs(r.slope[1] - 5) < 0.1, "rk4 local error slope %.3f, expected 5", r.slope[1]);
  for (int hi = 0; hi < st.nh; hi++)
    for (int p = 0; p < r.npoints; p++) {
      const size_t c = cell(&st, &r, 0, hi, p);
      cr_expect_eq(r.status[c], NH_STEP_SOLVER_FAILED, "h=%g p=%d", st.h[hi], p);
      cr_expect(isnan(r.local_err[c]) && isnan(r.local_err_q[c]) && isnan(r.local_err_v[c]) &&
                    isnan(r.lambda_err[c]) && isnan(r.adjoint_defect[c]) && isnan(r.stepped[c * 2 * st.sys.n]),
                "failed step leaves NaN");
      cr_expect(isnan(r.reversal_defect[c]) && isnan(r.embedding_residual[c]),
                "failed step: reversal %g, embedding %g", r.reversal_defect[c], r.embedding_residual[c]);
      /* Its Newton Jacobian, taken at the step's start since there is no solution, has no λ_k
       * column at all (the (N1), (N2) weights of λ_k are 1−2β = 0 and 2β' = 0): exactly singular,
       * +Inf in either scaling, where a Newton that merely failed to converge would give a number. */
      cr_expect(r.cond[c] == INFINITY && r.cond_unscaled[c] == INFINITY, "failed step at (1/2, 0): cond %g, unscaled %g",
                r.cond[c], r.cond_unscaled[c]);
      const size_t ok = cell(&st, &r, 1, hi, p); /* rk4's, in the same study: all three exist (rk8pd truth) */
      cr_expect(isfinite(r.reversal_defect[ok]) && isnan(r.cond_unscaled[ok]) && isfinite(r.embedding_residual[ok]),
                "rk4: reversal %g, cond_unscaled %g, embedding %g", r.reversal_defect[ok], r.cond_unscaled[ok],
                r.embedding_residual[ok]);
      /* The whole state of the failed step, and of its backward step (which fails alike), is NaN. */
      for (int i = 0; i < 2 * st.sys.n; i++)
        cr_expect(isnan(r.stepped[c * 2 * st.sys.n + i]) && isnan(r.backward[c * 2 * st.sys.n + i]),
                  "h=%g p=%d: component %d of the failed steps: %g %g", st.h[hi], p, i, r.stepped[c * 2 * st.sys.n + i],
                  r.backward[c * 2 * st.sys.n + i]);
      cr_expect_eq(r.status[cell(&st, &r, 1, hi, p)], NH_STEP_OK);
    }
  cr_expect(isnan(r.slope[0]), "no slope from failed steps: %g", r.slope[0]);
  cr_expect_eq(r.fit_count[0], 0);
  finish(&st, &r);
}

/* ---- the 2-norm and the multipliers ------------------------------------------------------------- */

/* With norm = "2": the local error is sqrt(Σ d²) over (q, v). Multipliers: nh_newmark's λ'_{k+1}
 * approximates λ(t + h) (NH_LAMBDA_END), dla's λ_DLA λ(t) (NH_LAMBDA_START); the errors are against
 * the particle's closed form λ = ẋẏ/(1 + y²) at those times, and rk4 defines none (NaN). */
Test(onestep, norm_2_and_multipliers) {
  const char *methods[] = {"nh_newmark(alpha=0.5)", "dla", "rk4"};
  const nh_state ics[] = {particle_ic(1)};
  setup s = {"particle", NULL, methods, 3, ics, 1, 2.0, 2, 0.2, 2, NH_NORM_2, 0};
  nh_onestep_result r;
  nh_study st = build_and_run(&s, &r);
  const int n = st.sys.n;
  for (int hi = 0; hi < st.nh; hi++)
    for (int p = 0; p < r.npoints; p++) {
      const double h = st.h[hi];
      nh_state x0 = point_state(&st, &r, p), ex;
      cr_assert_eq(nh_exact_solution(&st.sys, &x0, x0.t + h, &ex), 0);
      const double lam_start = x0.v[0] * x0.v[1] / (1 + x0.q[1] * x0.q[1]);
      const double lam_end = ex.v[0] * ex.v[1] / (1 + ex.q[1] * ex.q[1]);
      for (int mi = 0; mi < 3; mi++) {
        const size_t c = cell(&st, &r, mi, hi, p);
        nh_state x = x0, y;
        step_from(st.methods[mi], &st.sys, &x, &y, h);
        double d[2 * NH_MAX_N];
        for (int i = 0; i < n; i++) d[i] = y.q[i] - ex.q[i], d[n + i] = y.v[i] - ex.v[i];
        const double e2 = root_sum_sq(2 * n, d);
        cr_expect(fabs(r.local_err[c] - e2) <= 1e-14 * e2, "%s: 2-norm %.17g vs %.17g", methods[mi], r.local_err[c],
                  e2);
        cr_expect(fabs(r.local_err_v[c] - root_sum_sq(n, d + n)) <= 1e-14 * root_sum_sq(n, d + n));
        cr_expect(r.local_err[c] > max_abs(2 * n, d) * (1 + 1e-6), "the 2-norm is not the max-norm here");
        if (mi == 2) {
          cr_expect(isnan(r.lambda[c]) && isnan(r.lambda_err[c]), "rk4 has no multiplier");
          continue;
        }
        const double ref = mi == 0 ? lam_end : lam_start, other = mi == 0 ? lam_start : lam_end;
        cr_expect_eq(r.lambda[c], y.lambda[0], "%s: lambda is the step's", methods[mi]);
        cr_expect(fabs(r.lambda_err[c] - fabs(y.lambda[0] - ref)) <= 1e-13 * fmax(1, fabs(ref)),
                  "%s h=%g p=%d: lambda_err %.17g, expected %.17g", methods[mi], h, p, r.lambda_err[c],
                  fabs(y.lambda[0] - ref));
        cr_expect(fabs(r.lambda_err[c] - fabs(y.lambda[0] - other)) > 1e-6,
                  "%s: lambda_err must use the method's own multiplier time", methods[mi]);
      }
    }
  finish(&st, &r);
}

/* A study whose every method has multipliers (no rk4 among them) still gets the true λ: the
 * multiplier error of nh_newmark (λ at the step's end) and dla (at its start) against the
 * particle's closed form λ = ẋ ż / (1 + y²), not NaN. */
Test(onestep, multipliers_when_every_method_has_them) {
  const char *methods[] = {"nh_newmark(alpha=0.5)", "dla"};
  const nh_state ics[] = {particle_ic(1)};
  setup s = {"particle", NULL, methods, 2, ics, 1, 1.0, 1, 0.1, 1, NH_NORM_MAX, 0};
  nh_onestep_result r;
  nh_study st = build_and_run(&s, &r);
  const double h = st.h[0];
  nh_state x0 = point_state(&st, &r, 0), ex;
  cr_assert_eq(nh_exact_solution(&st.sys, &x0, x0.t + h, &ex), 0);
  const double lam_start = x0.v[0] * x0.v[1] / (1 + x0.q[1] * x0.q[1]);
  const double lam_end = ex.v[0] * ex.v[1] / (1 + ex.q[1] * ex.q[1]);
  for (int mi = 0; mi < 2; mi++) {
    const size_t c = cell(&st, &r, mi, 0, 0);
    nh_state x = x0, y;
    step_from(st.methods[mi], &st.sys, &x, &y, h);
    const double ref = mi == 0 ? lam_end : lam_start;
    cr_expect(fabs(r.lambda_err[c] - fabs(y.lambda[0] - ref)) <= 1e-13 * fmax(1, fabs(ref)),
              "%s: lambda_err %.17g, expected %.17g", methods[mi], r.lambda_err[c], fabs(y.lambda[0] - ref));
  }
  finish(&st, &r);
}

/* lambda_start: nh_newmark's λ_k of (N1), the multiplier its step solves for at the start node
 * (C12 compares it with λ'). On the particle, λ = ẋẏ/(1 + y²) in closed form: λ_k approaches
 * λ(t_k), the start's, as h shrinks (an index slip to λ' = λ_{k+1} would not: it approaches λ(t_k + h));
 * the value is the one the step leaves in its state; NaN for dla, which defines none. */
Test(onestep, start_multiplier_of_nh_newmark) {
  const char *methods[] = {"nh_newmark(beta=0.1,beta2=0.1,alpha=0.5)", "dla"};
  const nh_state ics[] = {particle_ic(1)};
  setup s = {"particle", NULL, methods, 2, ics, 1, 1.0, 1, 0.1, 3, NH_NORM_MAX, 0};
  nh_onestep_result r;
  nh_study st = build_and_run(&s, &r);
  const nh_state x0 = point_state(&st, &r, 0);
  const double lam0 = x0.v[0] * x0.v[1] / (1 + x0.q[1] * x0.q[1]);
  double err[3];
  for (int hi = 0; hi < st.nh; hi++) {
    const double h = st.h[hi];
    nh_state x = x0, y, ex;
    step_from(st.methods[0], &st.sys, &x, &y, h);
    double own[NH_MAX_K];
    st.methods[0]->type->start_multiplier(st.methods[0], &st.sys, &y, own);
    const double got = r.lambda_start[cell(&st, &r, 0, hi, 0)];
    cr_expect_eq(got, own[0], "h = %g: lambda_start %.17g, the step's %.17g", h, got, own[0]);
    cr_assert_eq(nh_exact_solution(&st.sys, &x0, x0.t + h, &ex), 0);
    const double lam1 = ex.v[0] * ex.v[1] / (1 + ex.q[1] * ex.q[1]);
    err[hi] = fabs(got - lam0);
    cr_expect(err[hi] < fabs(got - lam1), "h = %g: lambda_k %.9g nearer lambda(t + h) %.9g than lambda(t) %.9g", h,
              got, lam1, lam0);
    cr_expect(isnan(r.lambda_start[cell(&st, &r, 1, hi, 0)]), "dla defines no start multiplier");
  }
  cr_expect(err[2] < err[1] && err[1] < err[0] && err[0] < 0.1 * fmax(1, fabs(lam0)),
            "lambda_k - lambda(t0): %.3e, %.3e, %.3e at h = 0.1, 0.05, 0.025", err[0], err[1], err[2]);
  finish(&st, &r);
}

/* ---- adjoint defects and backward steps (spec/newmark.md §2.7, C8) ------------------------------ */

/* Chaotic particle: |F*_{−h}(F_h(x)) − x| at round-off for symmetric methods (F* = F: the β = β' =
 * 0.1, α = ½ Newmark, nh_rattle carrying its λ in the state, the adjoint pair Ψ_h) and for
 * nh_newmark(alpha=0) with its declared adjoint nh_newmark(alpha=1) (Prop 3.7); NaN where no
 * adjoint is declared (rk4) or the method is two-step (dla, nh_shake: the history in their state
 * was made with +h). Negative control: nh_newmark(alpha=0) composed with itself,
 * F_{−h}∘F_h − id = O(h²), slope 2 and far above round-off, through the study's own defect
 * routine and equal to the same composition stepped here. */
Test(onestep, adjoint_defects) {
  const char *methods[] = {"nh_newmark(beta=0.1,beta2=0.1,alpha=0.5)",
                           "nh_rattle",
                           "adjoint_pair(nh_newmark(alpha=0))",
                           "nh_newmark(alpha=0)",
                           "rk4",
                           "dla",
                           "nh_shake"};
  setup s = {"chaotic_particle", NULL, methods, 7, NULL, 1, 2.0, 2, 0.2, 4, NH_NORM_MAX, 0};
  nh_onestep_result r;
  nh_study st = build_and_run(&s, &r);
  const int n = st.sys.n;
  double worst = 0;
  for (int hi = 0; hi < st.nh; hi++)
    for (int p = 0; p < r.npoints; p++) {
      nh_state x = point_state(&st, &r, p);
      const double scale = fmax(max_abs(n, x.q), max_abs(n, x.v));
      for (int mi = 0; mi < 4; mi++) {
        const double dfc = r.adjoint_defect[cell(&st, &r, mi, hi, p)];
        cr_expect(dfc <= 1e-13 * scale, "%s h=%g p=%d: adjoint defect %.3e", methods[mi], st.h[hi], p, dfc);
        worst = fmax(worst, dfc / scale);
      }
      cr_expect(isnan(r.adjoint_defect[cell(&st, &r, 4, hi, p)]), "rk4 declares no adjoint");
      cr_expect(isnan(r.adjoint_defect[cell(&st, &r, 5, hi, p)]), "dla is two-step: not meaningful");
      cr_expect(isnan(r.adjoint_defect[cell(&st, &r, 6, hi, p)]), "nh_shake is two-step: not meaningful");
    }
  cr_log_info("adjoint defects of symmetric methods and of the Prop 3.7 pair <= %.2e relative", worst);

  /* Negative control: F = F* wrongly assumed for the non-symmetric nh_newmark(alpha=0). */
  const nh_method *m = st.methods[3];
  double defect[4];
  nh_state x0 = point_state(&st, &r, 1);
  for (int hi = 0; hi < st.nh; hi++) {
    const double h = st.h[hi];
    nh_state x = x0, y, z;
    nh_cost c = {0};
    step_from(m, &st.sys, &x, &y, h);
    defect[hi] = nh_onestep_adjoint_defect(m, m, &st.sys, &x, &y, h, NH_NORM_MAX);
    cr_assert_eq(nh_method_step(m, &st.sys, &y, &z, -h, &c), NH_STEP_OK);
    double d[2 * NH_MAX_N];
    for (int i = 0; i < n; i++) d[i] = z.q[i] - x.q[i], d[n + i] = z.v[i] - x.v[i];
    cr_expect_eq(defect[hi], max_abs(2 * n, d), "the study's defect is |F_{-h}(F_h(x)) - x|");
  }
  const double slope = loglog_slope(4, st.h, defect);
  cr_expect(fabs(slope - 2) < 0.15, "F_{-h} o F_h - id of nh_newmark(alpha=0): slope %.3f, expected 2", slope);
  /* measured 6.8e-2 at h = 0.2 and 1.2e-3 at h = 0.025, against round-off ~1e-15 */
  cr_expect(defect[0] > 1e-2 && defect[3] > 1e-4, "far above round-off: %.3e at h = 0.2, %.3e at h = 0.025", defect[0],
            defect[3]);
  cr_log_info("nh_newmark(alpha=0) with itself: defect %.3e .. %.3e, slope %.3f", defect[0], defect[3], slope);
  finish(&st, &r);
}

/* reversal_defect = |F_{−h}(F_h(x)) − x| with F itself, declared adjoint or not (C8's contrast).
 * Where the declared adjoint is the method itself (a symmetric method: its copy) the study makes
 * the same computation for both columns, so they agree bit for bit, round-off included; rk4 declares
 * no adjoint (adjoint_defect NaN) but has a reversal defect: with F_h = φ_h + e h^{p+1} + O(h^{p+2}),
 * F_{−h}(F_h(x)) − x = (1 + (−1)^{p+1}) e h^{p+1} + O(h^{p+2}), whose h⁵ term cancels for the even
 * p = 4: O(h⁶) (measured slope 5.94); two-step methods have neither (the history in their state was
 * made with +h). */
Test(onestep, reversal_defect_against_adjoint_defect) {
  const char *methods[] = {"nh_newmark(alpha=0.5)", "nh_newmark(beta=0.1,beta2=0.1,alpha=0.5)", "nh_rattle",
                           "adjoint_pair(nh_newmark(alpha=0))", "rk4", "dla"};
  setup s = {"chaotic_particle", NULL, methods, 6, NULL, 1, 2.0, 2, 0.2, 4, NH_NORM_MAX, 0};
  nh_onestep_result r;
  nh_study st = build_and_run(&s, &r);
  const int n = st.sys.n;
  double rk4_max[4] = {0};
  for (int hi = 0; hi < st.nh; hi++)
    for (int p = 0; p < r.npoints; p++) {
      for (int mi = 0; mi < 4; mi++) {
        const size_t c = cell(&st, &r, mi, hi, p);
        cr_expect(isfinite(r.reversal_defect[c]) && r.reversal_defect[c] == r.adjoint_defect[c],
                  "%s h=%g p=%d: reversal %.17g, adjoint %.17g", methods[mi], st.h[hi], p, r.reversal_defect[c],
                  r.adjoint_defect[c]);
      }
      const size_t c4 = cell(&st, &r, 4, hi, p), c5 = cell(&st, &r, 5, hi, p);
      cr_expect(isnan(r.adjoint_defect[c4]), "rk4 declares no adjoint");
      /* by hand: F_h from the point, then F_{−h} from where it left the state */
      nh_state x = point_state(&st, &r, p), y, z;
      nh_cost cost = {0};
      step_from(st.methods[4], &st.sys, &x, &y, st.h[hi]);
      cr_assert_eq(nh_method_step(st.methods[4], &st.sys, &y, &z, -st.h[hi], &cost), NH_STEP_OK);
      double d[2 * NH_MAX_N];
      for (int i = 0; i < n; i++) d[i] = z.q[i] - x.q[i], d[n + i] = z.v[i] - x.v[i];
      cr_expect_eq(r.reversal_defect[c4], max_abs(2 * n, d), "rk4 h=%g p=%d: %.17g, by hand %.17g", st.h[hi], p,
                   r.reversal_defect[c4], max_abs(2 * n, d));
      rk4_max[hi] = fmax(rk4_max[hi], r.reversal_defect[c4]);
      cr_expect(isnan(r.reversal_defect[c5]) && isnan(r.adjoint_defect[c5]), "dla is two-step: %g",
                r.reversal_defect[c5]);
    }
  const double slope = loglog_slope(4, st.h, rk4_max);
  cr_log_info("rk4 reversal defect %.3e .. %.3e, slope %.3f", rk4_max[0], rk4_max[3], slope);
  cr_expect(fabs(slope - 6) < 0.15, "rk4: F_{-h} o F_h - id slope %.3f, expected 6", slope);
  cr_expect(rk4_max[3] > 1e-12, "rk4 at h = 0.025: %.3e, above round-off", rk4_max[3]);
  finish(&st, &r);
}

/* nh_newmark(alpha=0) (spec/newmark.md C8): with its declared adjoint nh_newmark(alpha=1) the
 * defect is round-off (Prop 3.7); with itself, the reversal defect F^{0,0,0}_{−h}∘F^{0,0,0}_h − id is
 * O(h²) for this order-1 non-symmetric method, slope 2 and far above round-off, equal to two steps
 * taken here with nh_method_step. */
Test(onestep, reversal_defect_order_2_for_nh_newmark_alpha_0) {
  const char *methods[] = {"nh_newmark(alpha=0)"};
  setup s = {"chaotic_particle", NULL, methods, 1, NULL, 1, 2.0, 2, 0.2, 4, NH_NORM_MAX, 0};
  nh_onestep_result r;
  nh_study st = build_and_run(&s, &r);
  const int n = st.sys.n;
  double worst[4] = {0};
  for (int hi = 0; hi < st.nh; hi++)
    for (int p = 0; p < r.npoints; p++) {
      const size_t c = cell(&st, &r, 0, hi, p);
      nh_state x = point_state(&st, &r, p), y, z;
      const double scale = fmax(max_abs(n, x.q), max_abs(n, x.v));
      nh_cost cost = {0};
      step_from(st.methods[0], &st.sys, &x, &y, st.h[hi]);
      cr_assert_eq(nh_method_step(st.methods[0], &st.sys, &y, &z, -st.h[hi], &cost), NH_STEP_OK);
      double d[2 * NH_MAX_N];
      for (int i = 0; i < n; i++) d[i] = z.q[i] - x.q[i], d[n + i] = z.v[i] - x.v[i];
      cr_expect_eq(r.reversal_defect[c], max_abs(2 * n, d), "h=%g p=%d: %.17g, by hand %.17g", st.h[hi], p,
                   r.reversal_defect[c], max_abs(2 * n, d));
      cr_expect(r.adjoint_defect[c] <= 1e-13 * scale, "h=%g p=%d: adjoint defect %.3e", st.h[hi], p,
                r.adjoint_defect[c]);
      worst[hi] = fmax(worst[hi], r.reversal_defect[c]);
    }
  const double slope = loglog_slope(4, st.h, worst);
  cr_log_info("nh_newmark(alpha=0) reversal defect %.3e .. %.3e, slope %.3f", worst[0], worst[3], slope);
  cr_expect(fabs(slope - 2) < 0.15, "slope %.3f, expected 2", slope);
  /* measured 6.8e-2 at h = 0.2 and 1.2e-3 at h = 0.025 from the first point (test adjoint_defects) */
  cr_expect(worst[0] > 1e-2 && worst[3] > 1e-4, "far above round-off: %.3e, %.3e", worst[0], worst[3]);
  finish(&st, &r);
}

/* backward = F_{−h}(x) as stepped here, from its own start for −h (m11's start, the half-step
 * velocity v + (h/2)a, depends on the sign of h); for a symmetric method F_h(F_{−h}(x)) = x to
 * round-off (nh_newmark needs no state beyond (q, v), so the stored backward state can be stepped
 * again); rk4 is not symmetric: F_h∘F_{−h} − id = O(h⁶) (the h⁵ terms cancel for an even order,
 * test reversal_defect_against_adjoint_defect), small but far above round-off at h = 0.2 (negative
 * control). */
Test(onestep, backward_step) {
  const char *methods[] = {"nh_newmark(beta=0.1,beta2=0.1,alpha=0.5)", "rk4", "m11"};
  const nh_state ics[] = {particle_ic(0), particle_ic(1)};
  setup s = {"particle", NULL, methods, 3, ics, 2, 2.0, 2, 0.2, 3, NH_NORM_MAX, 0};
  nh_onestep_result r;
  nh_study st = build_and_run(&s, &r);
  const int n = st.sys.n;
  double rk4_min = INFINITY;
  for (int mi = 0; mi < 3; mi++)
    for (int hi = 0; hi < st.nh; hi++)
      for (int p = 0; p < r.npoints; p++) {
        const double h = st.h[hi];
        const size_t c = cell(&st, &r, mi, hi, p);
        const nh_state x0 = point_state(&st, &r, p);
        nh_state x = x0, b, back = {0}, fwd;
        nh_cost cost = {0};
        step_from(st.methods[mi], &st.sys, &x, &b, -h);
        for (int i = 0; i < n; i++) {
          cr_expect_eq(r.backward[c * 2 * n + i], b.q[i], "%s backward q[%d]", methods[mi], i);
          cr_expect_eq(r.backward[c * 2 * n + n + i], b.v[i], "%s backward v[%d]", methods[mi], i);
          back.q[i] = r.backward[c * 2 * n + i], back.v[i] = r.backward[c * 2 * n + n + i];
        }
        if (mi == 2) continue; /* m11 carries a half-step velocity: (q, v) alone cannot be stepped */
        back.t = x0.t - h;
        cr_assert_eq(nh_method_step(st.methods[mi], &st.sys, &back, &fwd, h, &cost), NH_STEP_OK);
        double d[2 * NH_MAX_N];
        for (int i = 0; i < n; i++) d[i] = fwd.q[i] - x0.q[i], d[n + i] = fwd.v[i] - x0.v[i];
        if (mi == 0)
          cr_expect(max_abs(2 * n, d) <= 1e-13 * fmax(max_abs(n, x0.q), max_abs(n, x0.v)),
                    "F_h(F_{-h}(x)) - x = %.3e for a symmetric method", max_abs(2 * n, d));
        else if (hi == 0)
          rk4_min = fmin(rk4_min, max_abs(2 * n, d));
      }
  /* measured 1.9e-8 .. 1.6e-7 at h = 0.2, against round-off 1e-13 */
  cr_expect(rk4_min > 1e-9, "rk4 is not symmetric: smallest |F_h(F_{-h}(x)) - x| at h = 0.2: %.3e", rk4_min);
  finish(&st, &r);
}

/* The multipliers of the backward step and the λ part of the round trip (rattle 6, spec/rattle.md
 * §3.3). backward_lambda is F_{−h}(x)'s own λ, entry by entry as a user's step gives it, and it
 * approximates λ(t − h) on the knife edge's exact solution to O(h²) (an index or sign slip misses
 * by O(1)). adjoint_defect_lambda is nh_rattle's λ after Φ_{−h}∘Φ_h against x's carried λ_0: at
 * round-off, which λ = (2/h)C⁻¹μM⁻¹p̃ scales by 2/h (bound 32 ε (2/h) max(1, |λ|)); NaN for
 * nh_newmark, whose y->lambda is an output, not state, and for rk4 (no λ at all). */
Test(onestep, backward_multipliers_and_the_lambda_round_trip) {
  const char *methods[] = {"nh_rattle", "nh_rattle(lambda0=0)", "nh_newmark", "rk4"};
  setup s = {"knife_edge", NULL, methods, 4, NULL, 1, 2.0, 2, 0.02, 3, NH_NORM_MAX, 0};
  nh_onestep_result r;
  nh_study st = build_and_run(&s, &r);
  const int k = st.sys.k;
  for (int mi = 0; mi < 4; mi++)
    for (int hi = 0; hi < st.nh; hi++)
      for (int p = 0; p < r.npoints; p++) {
        const double h = st.h[hi];
        const size_t c = cell(&st, &r, mi, hi, p);
        nh_state x = point_state(&st, &r, p), b, ref;
        step_from(st.methods[mi], &st.sys, &x, &b, -h);
        double lam[NH_MAX_K];
        cr_assert(nh_true_solution(&st.sys, &st.ics[0], x.t - h, 1e-13, &ref, NULL) == 0);
        cr_assert(nh_multiplier(&st.sys, ref.t, ref.q, ref.v, lam) == 0);
        for (int a = 0; a < k; a++) {
          const double got = r.backward_lambda[c * k + a];
          if (mi == 3) {
            cr_expect(isnan(got), "rk4 has no multiplier: %g", got);
            continue;
          }
          cr_expect_eq(got, b.lambda[a], "%s, h = %g, point %d: backward_lambda %.17g, step %.17g", methods[mi], h, p,
                       got, b.lambda[a]);
          if (mi == 0)
            cr_expect(fabs(got - lam[a]) <= 5 * h * h * fmax(1, fabs(lam[a])),
                      "nh_rattle, h = %g: lambda of F_-h(x) %.6g, lambda(t - h) %.6g", h, got, lam[a]);
        }
        const double d = r.adjoint_defect_lambda[c];
        if (mi < 2)
          cr_expect(d <= 32 * DBL_EPSILON * (2 / h) * fmax(1, max_abs(k, b.lambda)), "%s, h = %g: lambda round trip %.3e",
                    methods[mi], h, d);
        else
          cr_expect(isnan(d), "%s: lambda is not state, adjoint_defect_lambda %g", methods[mi], d);
      }
  finish(&st, &r);
}

/* ---- condition number of the Newton Jacobian (spec/newmark.md §2.5, C12; R17) -------------------- */

/* ‖J‖₁‖J⁻¹‖₁ with J⁻¹ column by column from a QR factorisation (the study uses LU). */
static double cond_by_qr(int d, const double *J0) {
  double J[NH_MAX_NEWTON * NH_MAX_NEWTON], tau[NH_MAX_NEWTON], e[NH_MAX_NEWTON], col[NH_MAX_NEWTON];
  double nJ = 0, nI = 0;
  memcpy(J, J0, sizeof(double) * (size_t)(d * d));
  for (int j = 0; j < d; j++) {
    double s = 0;
    for (int i = 0; i < d; i++) s += fabs(J0[i * d + j]);
    nJ = fmax(nJ, s);
  }
  gsl_matrix_view Jv = gsl_matrix_view_array(J, (size_t)d, (size_t)d);
  gsl_vector_view tv = gsl_vector_view_array(tau, (size_t)d);
  cr_assert_eq(gsl_linalg_QR_decomp(&Jv.matrix, &tv.vector), 0);
  for (int j = 0; j < d; j++) {
    for (int i = 0; i < d; i++) e[i] = i == j;
    gsl_vector_view ev = gsl_vector_view_array(e, (size_t)d), cv = gsl_vector_view_array(col, (size_t)d);
    cr_assert_eq(gsl_linalg_QR_solve(&Jv.matrix, &tv.vector, &ev.vector, &cv.vector), 0);
    double s = 0;
    for (int i = 0; i < d; i++) s += fabs(col[i]);
    nI = fmax(nI, s);
  }
  return nJ * nI;
}

/* Chaotic particle, first step from the paper's IC. The study's cond equals the QR value from the
 * method's own Jacobian. nh_newmark solves in scaled unknowns (Λ = (h²/2)λ, (N3)·h, (N4)·h, §2.5
 * harness tip) with v eliminated, so its cond stays bounded (h^0) for β = β' = 0.1 and grows like
 * h^-2 at β + β' = ½, three orders of magnitude larger at the finest h. Undoing the scaling by hand
 * gives the paper's unknowns, where the growth is h^-3 and h^-5 (C12): the study's cond_unscaled
 * (nh_newmark's newton_scaling) is that hand value, and its own slopes are C12's. rk4 solves
 * nothing: NaN in both; m11 solves for its velocity without scaling anything and declares no
 * scaling: a cond, but no cond_unscaled. */
Test(onestep, newton_condition_number) {
  const char *methods[] = {"nh_newmark(beta=0.1,beta2=0.1,alpha=0.5)",
                           "nh_newmark(beta=0.25,beta2=0.25,alpha=0.5,allow_ill_conditioned=1)", "rk4", "m11"};
  nh_method *probe = test_method(methods[0]);
  const int hooks = probe->type->newton != NULL;
  nh_method_free(probe);
  if (!hooks) cr_skip_test("nh_newmark defines no Newton hooks yet: the condition number is NaN by design");
  setup s = {"chaotic_particle", NULL, methods, 4, NULL, 1, 1.0, 1, 0.025, 4, NH_NORM_MAX, 0};
  nh_onestep_result r;
  nh_study st = build_and_run(&s, &r);
  const int n = st.sys.n, k = st.sys.k, d = n + 2 * k;
  double cs[2][4], cu[2][4], cstudy[2][4];
  for (int mi = 0; mi < 2; mi++)
    for (int hi = 0; hi < st.nh; hi++) {
      const double h = st.h[hi];
      const nh_method *m = st.methods[mi];
      nh_state x = point_state(&st, &r, 0), y;
      step_from(m, &st.sys, &x, &y, h);
      cr_assert_eq(m->type->newton->size(m, &st.sys), d);
      double X[NH_MAX_NEWTON], F[NH_MAX_NEWTON], J[NH_MAX_NEWTON * NH_MAX_NEWTON];
      m->type->newton->unknowns(m, &st.sys, &x, &y, h, X);
      m->type->newton->eval(m, &st.sys, &x, h, X, F, J);
      cs[mi][hi] = r.cond[cell(&st, &r, mi, hi, 0)];
      const double ref = cond_by_qr(d, J);
      cr_expect(fabs(cs[mi][hi] - ref) <= 1e-8 * ref, "%s h=%g: cond %.10g, by QR %.10g", methods[mi], h, cs[mi][hi],
                ref);
      cr_expect(fabs(nh_onestep_newton_cond(m, &st.sys, &x, &y, h) - cs[mi][hi]) <= 1e-12 * ref);
      /* The paper's unknowns: λ = Λ/(h²/2) (columns n …) and (N3), (N4) = rows n … n+2k−1 divided by h. */
      for (int i = 0; i < d; i++)
        for (int j = n; j < d; j++) J[i * d + j] *= 0.5 * h * h;
      for (int i = n; i < n + 2 * k; i++)
        for (int j = 0; j < d; j++) J[i * d + j] /= h;
      cu[mi][hi] = cond_by_qr(d, J);
      cstudy[mi][hi] = r.cond_unscaled[cell(&st, &r, mi, hi, 0)];
      cr_expect(fabs(cstudy[mi][hi] - cu[mi][hi]) <= 1e-8 * cu[mi][hi], "%s h=%g: cond_unscaled %.10g, by hand %.10g",
                methods[mi], h, cstudy[mi][hi], cu[mi][hi]);
      cr_expect_eq(nh_onestep_newton_cond_unscaled(m, &st.sys, &x, &y, h), cstudy[mi][hi]);
    }
  const double s_reg = loglog_slope(4, st.h, cs[0]), s_half = loglog_slope(4, st.h, cs[1]);
  const double u_reg = loglog_slope(4, st.h, cu[0]), u_half = loglog_slope(4, st.h, cu[1]);
  cr_log_info(
      "cond1, scaled unknowns: h^%.2f (beta = 0.1), h^%.2f (beta + beta2 = 1/2); paper's unknowns: h^%.2f, h^%.2f",
      s_reg, s_half, u_reg, u_half);
  cr_expect(fabs(s_reg) < 0.15, "scaled, beta = beta2 = 0.1: slope %.3f, expected 0", s_reg);
  cr_expect(fabs(s_half + 2) < 0.15, "scaled, beta + beta2 = 1/2: slope %.3f, expected -2", s_half);
  cr_expect(cs[1][3] > 1000 * cs[0][3], "beta + beta2 = 1/2 far worse: %.3g vs %.3g", cs[1][3], cs[0][3]);
  cr_expect(fabs(u_reg + 3) < 0.15, "C12 unscaled: slope %.3f, expected -3", u_reg);
  cr_expect(fabs(u_half + 5) < 0.15, "C12 unscaled at beta + beta2 = 1/2: slope %.3f, expected -5", u_half);
  const double c_reg = loglog_slope(4, st.h, cstudy[0]), c_half = loglog_slope(4, st.h, cstudy[1]);
  cr_expect(fabs(c_reg + 3) < 0.15, "C12, cond_unscaled: slope %.3f, expected -3", c_reg);
  cr_expect(fabs(c_half + 5) < 0.15, "C12, cond_unscaled at beta + beta2 = 1/2: slope %.3f, expected -5", c_half);
  for (int hi = 0; hi < st.nh; hi++) {
    cr_expect(isnan(r.cond[cell(&st, &r, 2, hi, 0)]) && isnan(r.cond_unscaled[cell(&st, &r, 2, hi, 0)]),
              "rk4: no Newton system");
    const double cm = r.cond[cell(&st, &r, 3, hi, 0)], cmu = r.cond_unscaled[cell(&st, &r, 3, hi, 0)];
    cr_expect(cm >= 1 && isfinite(cm) && isnan(cmu), "m11 h=%g: cond %g, cond_unscaled %g (no declared scaling)",
              st.h[hi], cm, cmu);
  }
  finish(&st, &r);
}

/* js_b (spec/discretization.md §2.5, R17) solves in (W', Λ = hλ): its cond stays bounded (R17,
 * measured 3.06 .. 3.01 over h = 0.05 .. 0.00625), while in the spec's own unknowns (W', λ), whose
 * λ column is −h μ(q̄)ᵀ, it grows like h^-1 (measured h^-0.95). cond_unscaled equals the QR value of
 * the Jacobian with its Λ columns multiplied by h here. */
Test(onestep, newton_condition_number_js_b) {
  const char *methods[] = {"js_b"};
  setup s = {"chaotic_particle", NULL, methods, 1, NULL, 1, 1.0, 1, 0.05, 4, NH_NORM_MAX, 0};
  nh_onestep_result r;
  nh_study st = build_and_run(&s, &r);
  const nh_method *m = st.methods[0];
  const int n = st.sys.n, d = n + st.sys.k;
  double cs[4], cu[4];
  for (int hi = 0; hi < st.nh; hi++) {
    const double h = st.h[hi];
    nh_state x = point_state(&st, &r, 0), y;
    step_from(m, &st.sys, &x, &y, h);
    cr_assert_eq(m->type->newton->size(m, &st.sys), d);
    double X[NH_MAX_NEWTON], F[NH_MAX_NEWTON], J[NH_MAX_NEWTON * NH_MAX_NEWTON];
    m->type->newton->unknowns(m, &st.sys, &x, &y, h, X);
    m->type->newton->eval(m, &st.sys, &x, h, X, F, J);
    for (int i = 0; i < d; i++)
      for (int j = n; j < d; j++) J[i * d + j] *= h; /* λ = Λ/h */
    const double ref = cond_by_qr(d, J);
    cs[hi] = r.cond[cell(&st, &r, 0, hi, 0)];
    cu[hi] = r.cond_unscaled[cell(&st, &r, 0, hi, 0)];
    cr_expect(fabs(cu[hi] - ref) <= 1e-8 * ref, "h=%g: cond_unscaled %.10g, by hand %.10g", h, cu[hi], ref);
  }
  const double s_scaled = loglog_slope(4, st.h, cs), s_unscaled = loglog_slope(4, st.h, cu);
  cr_log_info("js_b cond: scaled h^%.2f, unscaled h^%.2f", s_scaled, s_unscaled);
  cr_expect(fabs(s_scaled) < 0.1, "R17: scaled cond bounded, slope %.3f", s_scaled);
  cr_expect(fabs(s_unscaled + 1) < 0.1, "unscaled: slope %.3f, expected -1", s_unscaled);
  finish(&st, &r);
}

/* m11 solves for v_{k+1} only where there are constraints: on the oscillator (k = 0) its step is
 * explicit, its Newton system has no unknowns, and the study reports no condition number (NaN, not
 * the 0 an empty matrix would give). On the chaotic particle (k = 1) it has one, and cond ≥ 1. */
Test(onestep, no_unknowns_no_condition_number) {
  const char *methods[] = {"m11"};
  const char *systems[] = {"oscillator", "chaotic_particle"};
  for (int s = 0; s < 2; s++) {
    setup su = {systems[s], NULL, methods, 1, NULL, 1, 1.0, 1, 0.1, 2, NH_NORM_MAX, 0};
    nh_onestep_result r;
    nh_study st = build_and_run(&su, &r);
    cr_assert_eq(st.methods[0]->type->newton->size(st.methods[0], &st.sys), s ? st.sys.n : 0, "%s", systems[s]);
    for (int hi = 0; hi < st.nh; hi++) {
      const double c = r.cond[cell(&st, &r, 0, hi, 0)];
      if (s) cr_expect(c >= 1 && isfinite(c), "%s h=%g: cond %g", systems[s], st.h[hi], c);
      else cr_expect(isnan(c), "%s h=%g: cond %g, expected NaN", systems[s], st.h[hi], c);
    }
    finish(&st, &r);
  }
}

/* ---- embedding residual (spec/discretization.md §6.4, R19) -------------------------------------- */

/* R19 on the free particle from the spec's data (§5: q0 = (0, 0.3, 0), v0 = (1, 0.8, 0.3)), exact
 * solution: max over t of |∂_tG − X(G)| is O(h^p), slope 1 for Scheme A (js_a), 2 for Scheme B
 * (js_b), and 4 for rk4 (the negative control: the slope follows the order, it is not fixed by the
 * construction). Measured: 0.99, 2.03, 4.00. */
Test(onestep, embedding_residual_slopes_R19) {
  const char *methods[] = {"js_a", "js_b", "rk4"};
  const double expected[] = {1, 2, 4};
  const nh_state ics[] = {particle_ic(1)};
  setup s = {"particle", NULL, methods, 3, ics, 1, 2.0, 2, 0.1, 5, NH_NORM_MAX, 0};
  nh_onestep_result r;
  nh_study st = build_and_run(&s, &r);
  cr_expect_str_eq(r.reference_kind, "exact");
  for (int mi = 0; mi < 3; mi++) {
    double emax[5] = {0};
    for (int hi = 0; hi < st.nh; hi++)
      for (int p = 0; p < r.npoints; p++) {
        const double e = r.embedding_residual[cell(&st, &r, mi, hi, p)];
        cr_expect(isfinite(e) && e > 0, "%s h=%g p=%d: %g", methods[mi], st.h[hi], p, e);
        emax[hi] = fmax(emax[hi], e);
      }
    const double slope = loglog_slope(5, st.h, emax);
    cr_log_info("%s: embedding residual %.3e .. %.3e, slope %.3f", methods[mi], emax[0], emax[4], slope);
    cr_expect(fabs(slope - expected[mi]) < 0.1, "%s: slope %.3f, expected %g", methods[mi], slope, expected[mi]);
  }
  finish(&st, &r);
}

/* The true solution backward in time, as the embedding residual takes it from the stepped state
 * (φ_{t−h}(y), t − h ∈ (−h, 0)): nh_true_solution_times through a descending grid. On the chaotic
 * particle (rk8pd, one driver for the grid) each state agrees with nh_true_solution from y to that
 * time alone and with the forward solution from x, to the reference tolerance; on the particle
 * each is the exact solution's, bit for bit. */
Test(onestep, true_solution_backward_in_time) {
  const char *systems[] = {"chaotic_particle", "particle"}, *kinds[] = {"rk8pd", "exact"};
  for (int s = 0; s < 2; s++) {
    nh_system sys = test_system(systems[s], NULL);
    nh_state x, y, back[8], one, fwd;
    nh_system_default_state(&sys, &x);
    x.t = 0.5;
    const double h = 0.1;
    double t[8];
    for (int j = 0; j < 8; j++) t[j] = x.t + (8 - j) * h / 9; /* descending from y.t = x.t + h */
    cr_assert_eq(nh_true_solution(&sys, &x, x.t + h, 1e-13, &y, NULL), 0);
    const char *kind = NULL;
    cr_assert_eq(nh_true_solution_times(&sys, &y, 8, t, 1e-13, back, &kind), 0, "%s", systems[s]);
    cr_expect_str_eq(kind, kinds[s]);
    for (int j = 0; j < 8; j++) {
      cr_assert_eq(nh_true_solution(&sys, &y, t[j], 1e-13, &one, NULL), 0);
      cr_assert_eq(nh_true_solution(&sys, &x, t[j], 1e-13, &fwd, NULL), 0);
      cr_expect_eq(back[j].t, t[j]);
      for (int i = 0; i < sys.n; i++) {
        const double d1 = fmax(fabs(back[j].q[i] - one.q[i]), fabs(back[j].v[i] - one.v[i]));
        const double d2 = fmax(fabs(back[j].q[i] - fwd.q[i]), fabs(back[j].v[i] - fwd.v[i]));
        if (s) cr_expect(d1 == 0, "%s t=%g [%d]: sweep and one time differ by %g", systems[s], t[j], i, d1);
        cr_expect(d1 <= 1e-12 && d2 <= 1e-12, "%s t=%g [%d]: %g from the single time, %g from forward", systems[s],
                  t[j], i, d1, d2);
      }
    }
  }
}

/* χ'(τ) of χ = E0/(E0 + E1), E0 = e^{−1/τ}, E1 = e^{−1/(1−τ)} (§6.2), by the quotient rule. */
static double smooth_step_derivative(double tau) {
  const double E0 = exp(-1 / tau), E1 = exp(-1 / (1 - tau));
  const double dE0 = E0 / (tau * tau), dE1 = -E1 / ((1 - tau) * (1 - tau));
  return (dE0 * E1 - E0 * dE1) / ((E0 + E1) * (E0 + E1));
}

/* The forced damped oscillator ẍ + αẋ + ω²x = β sin(Ωt) (exact solution): X(t, ·) is affine, so
 * ρ(t) = (χ'(t/h)/h)(φ_{t−h}(y) − φ_t(x)) exactly, the convex combinations cancelling. The study's
 * value is the largest |ρ(t_i)| over t_i = i h/(N + 1), i = 1 … N, computed here from the system's
 * exact solution at the absolute times x.t + t_i (the second point starts at t = 1, so that a
 * missing offset would move the forcing) from the point and from the stepped state. */
Test(onestep, embedding_residual_by_hand_forced_oscillator) {
  const char *methods[] = {"herglotz1", "herglotz2"};
  setup s = {"damped_oscillator", "alpha=0.1,beta=0.3", methods, 2, NULL, 1, 2.0, 2, 0.2, 2, NH_NORM_MAX, 0};
  nh_onestep_result r;
  nh_study st = build_and_run(&s, &r);
  const nh_system *sys = &st.sys;
  const int N = NH_EMBEDDING_GRID;
  cr_expect_str_eq(r.reference_kind, "exact");
  for (int mi = 0; mi < 2; mi++)
    for (int hi = 0; hi < st.nh; hi++)
      for (int p = 0; p < r.npoints; p++) {
        const size_t c = cell(&st, &r, mi, hi, p);
        const double h = st.h[hi];
        const nh_state x = point_state(&st, &r, p);
        nh_state y = x, a, b;
        y.t = x.t + h;
        y.q[0] = r.stepped[c * 2], y.v[0] = r.stepped[c * 2 + 1];
        double worst = 0;
        for (int i = 1; i <= N; i++) {
          const double t = i * h / (N + 1), w = smooth_step_derivative(t / h) / h;
          cr_assert_eq(nh_exact_solution(sys, &x, x.t + t, &a), 0);
          cr_assert_eq(nh_exact_solution(sys, &y, x.t + t, &b), 0);
          worst = fmax(worst, fmax(fabs(w * (b.q[0] - a.q[0])), fabs(w * (b.v[0] - a.v[0]))));
        }
        cr_expect(fabs(r.embedding_residual[c] - worst) <= 1e-12 * worst, "%s h=%g p=%d: %.17g, by hand %.17g",
                  methods[mi], h, p, r.embedding_residual[c], worst);
      }
  finish(&st, &r);
}

/* ρ(t) at one t, component by component, against hand formulas: on the forced oscillator (X affine)
 * ρ = (χ'/h)(b − a); on the free particle X(q, v) = (v, (−yλ, 0, λ)) with λ = ẋẏ/(1 + y²) is not
 * affine, and ρ = (1−χ)X(a) + χX(b) + (χ'/h)(b − a) − X((1−χ)a + χb) with χ = E0/(E0 + E1). τ = 0.3,
 * where χ ≠ ½: a and b do not enter alike. */
Test(onestep, embedding_rho_by_hand) {
  const double tau = 0.3, h = 0.2, E0 = exp(-1 / tau), E1 = exp(-1 / (1 - tau)), chi = E0 / (E0 + E1);
  const double w = smooth_step_derivative(tau) / h;
  /* forced oscillator at t = 1.3: any two states */
  nh_system osc = test_system("damped_oscillator", "alpha=0.1,beta=0.3");
  const double ao[2] = {0.4, -0.7}, bo[2] = {0.43, -0.66};
  double rho[2 * NH_MAX_N];
  cr_assert_eq(nh_embedding_rho(&osc, 1.3, tau, h, ao, bo, rho), 0);
  for (int i = 0; i < 2; i++)
    cr_expect(fabs(rho[i] - w * (bo[i] - ao[i])) <= 1e-14 * fabs(w * (bo[i] - ao[i])),
              "oscillator [%d]: %.17g vs %.17g", i, rho[i], w * (bo[i] - ao[i]));
  /* free particle: a on D, b off it a little (a stepped state need not be on D) */
  nh_system par = test_system("particle", NULL);
  const double a[6] = {0.1, 0.35, 0.02, 0.95, 0.8, 0.3325}, b[6] = {0.2, 0.5, 0.1, 0.8, 1.0, 0.45};
  double G[6], X[3][6], want[6];
  const double *in[3] = {a, b, G};
  for (int i = 0; i < 6; i++) G[i] = (1 - chi) * a[i] + chi * b[i];
  for (int s = 0; s < 3; s++) {
    const double *z = in[s], lam = z[3] * z[4] / (1 + z[1] * z[1]);
    X[s][0] = z[3], X[s][1] = z[4], X[s][2] = z[5], X[s][3] = -z[1] * lam, X[s][4] = 0, X[s][5] = lam;
  }
  for (int i = 0; i < 6; i++) want[i] = (1 - chi) * X[0][i] + chi * X[1][i] + w * (b[i] - a[i]) - X[2][i];
  cr_assert_eq(nh_embedding_rho(&par, 0.7, tau, h, a, b, rho), 0);
  for (int i = 0; i < 6; i++)
    cr_expect(fabs(rho[i] - want[i]) <= 1e-14 * max_abs(6, want), "particle [%d]: %.17g vs %.17g", i, rho[i], want[i]);
  /* not the affine formula: the bracket the particle adds is far above the tolerance above */
  cr_expect(fabs(want[3] - w * (b[3] - a[3])) > 1e-6 * max_abs(6, want), "the bracket matters here: %g of %g",
            want[3] - w * (b[3] - a[3]), max_abs(6, want));
}

/* ---- local action error (spec/discretization.md §2.1, R1) -------------------------------------- */

/* Free particle (V = 0): ∫_t^{t+h} L dt = h E exactly (E conserved) and L_d^α = |Δq|²/(2h) for every
 * α, so action_err = ||Δq|²/(2h) − hE| with the exact Δq, slope 3. Methods without a discrete
 * Lagrangian (rk4, a composition) or not variational (β ≠ 0) give NaN. */
Test(onestep, action_error_particle) {
  const char *methods[] = {"nh_newmark(alpha=0)", "nh_rattle", "nh_newmark(beta=0.1,beta2=0.1,alpha=0.5)", "rk4",
                           "adjoint_pair(nh_newmark(alpha=0))"};
  const nh_state ics[] = {particle_ic(0), particle_ic(1)};
  setup s = {"particle", NULL, methods, 5, ics, 2, 2.0, 2, 0.1, 4, NH_NORM_MAX, 0};
  nh_onestep_result r;
  nh_study st = build_and_run(&s, &r);
  const int n = st.sys.n;
  for (int hi = 0; hi < st.nh; hi++)
    for (int p = 0; p < r.npoints; p++) {
      const double h = st.h[hi];
      nh_state x = point_state(&st, &r, p), ex;
      cr_assert_eq(nh_exact_solution(&st.sys, &x, x.t + h, &ex), 0);
      double dq2 = 0, E = 0;
      for (int i = 0; i < n; i++) dq2 += (ex.q[i] - x.q[i]) * (ex.q[i] - x.q[i]), E += 0.5 * x.v[i] * x.v[i];
      const double expected = fabs(dq2 / (2 * h) - h * E);
      for (int mi = 0; mi < 2; mi++) {
        const double a = r.action_err[cell(&st, &r, mi, hi, p)];
        cr_expect(fabs(a - expected) <= 1e-14 * h * E + 1e-6 * expected, "%s h=%g p=%d: %.6e, expected %.6e",
                  methods[mi], h, p, a, expected);
      }
      for (int mi = 2; mi < 5; mi++)
        cr_expect(isnan(r.action_err[cell(&st, &r, mi, hi, p)]), "%s: no L_d", methods[mi]);
    }
  cr_expect(fabs(r.action_slope[0] - 3) < 0.1, "V = 0: slope %.3f, expected 3", r.action_slope[0]);
  cr_expect(isnan(r.action_slope[2]) && isnan(r.action_slope[3]));
  finish(&st, &r);
}

/* Chaotic particle (V ≠ 0): L_d^α − ∫L = (α − ½)h² ∂L/∂q·q̇ + O(h³) (R1): slope 2 for α = 0, 3 for
 * α = ½. The α = 0 slope is the negative control of the α = ½ one. */
Test(onestep, action_error_slopes_R1) {
  const char *methods[] = {"nh_newmark(alpha=0)", "nh_newmark(alpha=0.5)"};
  setup s = {"chaotic_particle", NULL, methods, 2, NULL, 1, 2.0, 2, 0.025, 4, NH_NORM_MAX, 3};
  nh_onestep_result r;
  nh_study st = build_and_run(&s, &r);
  cr_log_info("action slopes: alpha = 0: %.3f, alpha = 1/2: %.3f", r.action_slope[0], r.action_slope[1]);
  cr_expect(fabs(r.action_slope[0] - 2) < 0.15, "alpha = 0: slope %.3f, expected 2", r.action_slope[0]);
  cr_expect(fabs(r.action_slope[1] - 3) < 0.15, "alpha = 1/2: slope %.3f, expected 3", r.action_slope[1]);
  finish(&st, &r);
}

/* Damping makes T − V no Lagrangian of the motion: the action error is NaN then, and finite for the
 * same system and method without damping. */
Test(onestep, action_error_absent_with_damping) {
  const char *methods[] = {"nh_newmark(alpha=0.5)"};
  double a[2];
  const char *params[] = {"alpha=0", "alpha=0.001"};
  for (int i = 0; i < 2; i++) {
    setup s = {"foucault_pendulum", params[i], methods, 1, NULL, 1, 1.0, 1, 0.1, 1, NH_NORM_MAX, 0};
    nh_onestep_result r;
    nh_study st = build_and_run(&s, &r);
    cr_expect_eq(r.status[0], NH_STEP_OK);
    a[i] = r.action_err[0];
    finish(&st, &r);
  }
  cr_expect(isfinite(a[0]), "no damping: action error %g", a[0]);
  cr_expect(isnan(a[1]), "damping: action error %g, expected NaN", a[1]);
}

/* ---- reproducibility ---------------------------------------------------------------------------- */

static void run_threads(const nh_study *st, nh_onestep_result *r, int threads) {
  omp_set_num_threads(threads);
  run(st, r);
}

#define SAME(field, count) \
  cr_expect(memcmp(a.field, b.field, sizeof *a.field *(count)) == 0, #field " differs between 1 and 2 threads")

Test(onestep, bit_identical_with_1_and_2_threads) {
  const char *methods[] = {"nh_newmark(beta=0.1,beta2=0.1,alpha=0.5)", "nh_rattle", "rk4"};
  setup s = {"chaotic_particle", NULL, methods, 3, NULL, 1, 2.0, 3, 0.1, 3, NH_NORM_MAX, 0};
  nh_study st = build(&s);
  nh_onestep_result a, b;
  run_threads(&st, &a, 1);
  run_threads(&st, &b, 2);
  const size_t cells = (size_t)st.nmethods * st.nh * a.npoints, n2 = 2 * (size_t)st.sys.n;
  SAME(points, a.npoints * n2);
  SAME(local_err, cells);
  SAME(local_err_q, cells);
  SAME(local_err_v, cells);
  SAME(stepped, cells * n2);
  SAME(backward, cells * n2);
  SAME(lambda, cells * st.sys.k);
  SAME(lambda_err, cells);
  SAME(adjoint_defect, cells);
  SAME(reversal_defect, cells);
  SAME(cond, cells);
  SAME(cond_unscaled, cells);
  SAME(action_err, cells);
  SAME(embedding_residual, cells);
  SAME(status, cells);
  SAME(slope, st.nmethods);
  SAME(action_slope, st.nmethods);
  nh_onestep_result_free(&a);
  nh_onestep_result_free(&b);
  test_hand_study_release(&st);
}

/* A step that fails at some points only: rk4 on the Foucault pendulum cannot start at the origin,
 * where the index-reduced ODE is singular (C = A M⁻¹Aᵀ = 0). That point records the failure, the
 * others their errors, and the slope leaves out every h at which a point failed (a maximum over
 * the remaining points would understate the error): here all of them, so no slope. */
Test(onestep, partial_failure_leaves_h_out_of_the_fit) {
  nh_system sys = test_system("foucault_pendulum", NULL);
  nh_state ics[2];
  memset(ics, 0, sizeof ics);
  nh_system_default_state(&sys, &ics[0]);
  ics[1].v[0] = 0.3, ics[1].v[1] = 0.1; /* at the origin, on D (A(0) = 0, b(0) = 0) */
  const char *methods[] = {"rk4"};
  setup s = {"foucault_pendulum", NULL, methods, 1, ics, 2, 2.0, 2, 0.1, 3, NH_NORM_MAX, 0};
  nh_onestep_result r;
  nh_study st = build_and_run(&s, &r);
  for (int hi = 0; hi < st.nh; hi++)
    for (int p = 0; p < 4; p++) {
      const size_t c = cell(&st, &r, 0, hi, p);
      if (p == 2) {
        cr_expect_eq(r.status[c], NH_STEP_SOLVER_FAILED, "h=%g: rk4 at the origin", st.h[hi]);
        cr_expect(isnan(r.local_err[c]));
      } else {
        cr_expect_eq(r.status[c], NH_STEP_OK, "h=%g p=%d", st.h[hi], p);
        cr_expect(isfinite(r.local_err[c]) && r.local_err[c] > 0, "h=%g p=%d: %g", st.h[hi], p, r.local_err[c]);
      }
    }
  cr_expect(isnan(r.slope[0]) && r.fit_count[0] == 0, "slope %g from %d points", r.slope[0], r.fit_count[0]);
  /* The stored maxima over the points: NaN here, where one point failed at every h. */
  for (int hi = 0; hi < st.nh; hi++) cr_expect(isnan(r.max_local_err[hi]), "h=%g: one point failed", st.h[hi]);
  finish(&st, &r);
}

/* The stored maxima over the points are the largest local and action errors, computed here. */
Test(onestep, maxima_over_points_by_hand) {
  nh_system sys = test_system("particle", "omega2=1");
  nh_state ics[1];
  memset(ics, 0, sizeof ics);
  nh_system_default_state(&sys, &ics[0]);
  const char *methods[] = {"nh_newmark(alpha=0.5)", "rk4"};
  setup s = {"particle", "omega2=1", methods, 2, ics, 1, 2.0, 3, 0.1, 3, NH_NORM_MAX, 0};
  nh_onestep_result r;
  nh_study st = build_and_run(&s, &r);
  for (int mi = 0; mi < st.nmethods; mi++)
    for (int hi = 0; hi < st.nh; hi++) {
      double e = 0, a = 0;
      for (int p = 0; p < r.npoints; p++) {
        const size_t c = cell(&st, &r, mi, hi, p);
        e = fmax(e, r.local_err[c]);
        a = isnan(r.action_err[c]) || isnan(a) ? NAN : fmax(a, r.action_err[c]);
      }
      const size_t mh = (size_t)mi * st.nh + hi;
      cr_expect_eq(r.max_local_err[mh], e, "%s h=%g", st.method_names[mi], st.h[hi]);
      cr_expect(a == r.max_action_err[mh] || (isnan(a) && isnan(r.max_action_err[mh])), "%s h=%g action",
                st.method_names[mi], st.h[hi]);
    }
  cr_expect(isfinite(r.max_action_err[0]) && isnan(r.max_action_err[st.nh]), "nh_newmark(0,0,½) is variational, rk4 not");
  finish(&st, &r);
}
