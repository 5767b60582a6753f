/* studies/ runner pieces (issue 16, round 2): the order fit, the stepping loop's deadline, the
 * sampled run's divergence stop and statistics, and the true solution of sampled runs on a system
 * without an exact solution, each against a computation made here. */
#include <criterion/criterion.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "studies/sampling.h"
#include "studies/study.h"
#include "tests/hand_study.h"
#include "tests/helpers.h"

/* ---- nh_fit_order ------------------------------------------------------------------------------ */

/* Least-squares slope of y on x and its standard error sqrt(s² / Sxx), s² = RSS / (n − 2), by hand. */
static void ls_by_hand(int n, const double *x, const double *y, double *slope, double *se) {
  double xm = 0, ym = 0, sxx = 0, sxy = 0, rss = 0;
  for (int i = 0; i < n; i++) xm += x[i] / n, ym += y[i] / n;
  for (int i = 0; i < n; i++) sxx += (x[i] - xm) * (x[i] - xm), sxy += (x[i] - xm) * (y[i] - ym);
  *slope = sxy / sxx;
  for (int i = 0; i < n; i++) {
    const double r = y[i] - ym - *slope * (x[i] - xm);
    rss += r * r;
  }
  *se = n > 2 ? sqrt(rss / (n - 2) / sxx) : NAN;
}

/* More than 64 step sizes: the finest are fitted wherever they are listed (the fit kept only the
 * first 64 of the list before, and fitted h[61..63] here). h_i = 1/(i + 1), i = 0 … 69, listed
 * coarse to fine; err = h² (×10 for i ≥ 64, so that a fit of other points has another intercept
 * but the same slope: the points are told apart by first). */
Test(sampled_runs, order_fit_over_more_than_64_step_sizes) {
  double h[70], e[70], p, se;
  int first, count;
  for (int i = 0; i < 70; i++) h[i] = 1.0 / (i + 1), e[i] = h[i] * h[i] * (i >= 64 ? 10 : 1);
  cr_assert_eq(nh_fit_order(70, h, e, 3, 1e-11, &p, &se, &first, &count), 0);
  cr_expect_eq(first, 69);
  cr_expect_eq(count, 3);
  cr_expect(fabs(p - 2) < 1e-12, "%.17g", p);
  /* 7 points reach across the jump (69 … 63): slope and stderr of these by hand. */
  cr_assert_eq(nh_fit_order(70, h, e, 7, 1e-11, &p, &se, &first, &count), 0);
  double x[7], y[7], slope, s;
  for (int k = 0; k < 7; k++) x[k] = log(h[69 - k]), y[k] = log(e[69 - k]);
  ls_by_hand(7, x, y, &slope, &s);
  cr_expect(first == 69 && count == 7);
  cr_expect(fabs(p - slope) < 1e-12 * fabs(slope), "%.17g vs %.17g", p, slope);
  cr_expect(fabs(se - s) < 1e-9 * s, "stderr %.17g vs %.17g", se, s);
}

/* The fitted points: finite, strictly above the floor, consecutive in h from the finest admissible
 * one; the slope and its standard error are those of the points chosen. */
Test(sampled_runs, order_fit_chooses_its_points) {
  /* listed out of order; by increasing h: 0.0125 (below the floor), 0.025 (exactly the floor:
   * excluded), 0.05, 0.1, 0.2 (NaN: ends the run), 0.4 */
  const double h[6] = {0.4, 0.0125, 0.1, 0.025, 0.2, 0.05};
  const double e[6] = {0.3, 1e-13, 2e-3, 1e-11, NAN, 4e-4};
  double p, se;
  int first, count;
  cr_assert_eq(nh_fit_order(6, h, e, 5, 1e-11, &p, &se, &first, &count), 0);
  cr_expect_eq(first, 5, "h = 0.05 is the finest admissible");
  cr_expect_eq(count, 2, "0.05 and 0.1, then the NaN at 0.2 ends the run");
  cr_expect(fabs(p - log(2e-3 / 4e-4) / log(2.0)) < 1e-13, "%.17g", p);
  cr_expect(isnan(se), "two points: no standard error");
  /* With an infinite error instead of NaN, the same. */
  const double e2[6] = {0.3, 1e-13, 2e-3, 1e-11, INFINITY, 4e-4};
  cr_assert_eq(nh_fit_order(6, h, e2, 5, 1e-11, &p, &se, &first, &count), 0);
  cr_expect(first == 5 && count == 2);
  /* fit_points = 2 stops at two points even when more are admissible: e = h³ on 0.05, 0.1, 0.2 … */
  const double e3[6] = {0.064, 1e-13, 1e-3, 1e-11, 8e-3, 1.25e-4};
  cr_assert_eq(nh_fit_order(6, h, e3, 2, 1e-11, &p, &se, &first, &count), 0);
  cr_expect(first == 5 && count == 2 && fabs(p - 3) < 1e-12, "first %d count %d p %.17g", first, count, p);
  cr_assert_eq(nh_fit_order(6, h, e3, 4, 1e-11, &p, &se, &first, &count), 0);
  cr_expect(first == 5 && count == 4 && fabs(p - 3) < 1e-12, "first %d count %d p %.17g", first, count, p);
  cr_expect(se >= 0 && se < 1e-12, "an exact power law: stderr %g", se);
  /* Noisy: stderr by hand. */
  const double e4[6] = {0.07, 1e-13, 1.1e-3, 1e-11, 7e-3, 1.3e-4};
  cr_assert_eq(nh_fit_order(6, h, e4, 4, 1e-11, &p, &se, &first, &count), 0);
  const double x[4] = {log(0.05), log(0.1), log(0.2), log(0.4)}, y[4] = {log(1.3e-4), log(1.1e-3), log(7e-3), log(0.07)};
  double slope, s;
  ls_by_hand(4, x, y, &slope, &s);
  cr_expect(fabs(p - slope) < 1e-12 * slope, "%.17g vs %.17g", p, slope);
  cr_expect(fabs(se - s) < 1e-9 * s, "stderr %.17g vs %.17g", se, s);
  /* One admissible point, or none: -1, order and stderr NaN; first is the one point, or -1. */
  const double e5[6] = {NAN, 1e-13, NAN, 1e-12, NAN, 5e-3};
  cr_expect_eq(nh_fit_order(6, h, e5, 3, 1e-11, &p, &se, &first, &count), -1);
  cr_expect(isnan(p) && isnan(se) && first == 5 && count == 1, "first %d count %d", first, count);
  const double e6[6] = {NAN, 1e-13, NAN, 1e-12, NAN, 1e-11};
  cr_expect_eq(nh_fit_order(6, h, e6, 3, 1e-11, &p, &se, &first, &count), -1);
  cr_expect(isnan(p) && first == -1 && count == 0, "first %d count %d", first, count);
  cr_expect_eq(nh_fit_order(0, h, e6, 3, 1e-11, &p, &se, &first, &count), -1);
  cr_expect(isnan(p) && first == -1 && count == 0);
}

/* ---- the evolve loop and the time limit ------------------------------------------------------- */

/* A deadline already past stops the loop at the first check, after step 64 (checked every 64
 * steps): status NH_RUN_TIMED_OUT, the state and the counters those of 64 steps, t = 64 h; 63
 * steps finish before any check. A deadline far ahead never stops it. */
Test(sampled_runs, deadline_checked_every_64_steps) {
  nh_system sys = test_system("chaotic_particle", NULL);
  nh_method *m = test_method("rk4");
  nh_state x0;
  nh_system_default_state(&sys, &x0);
  const double h = 0.01, past = 1e-9, ahead = omp_get_wtime() + 3600; /* omp_get_wtime() is far beyond 1e-9 s */
  nh_state ref = x0;
  nh_cost cref = {0};
  double rref;
  cr_assert_eq(nh_integrate(m, &sys, &ref, 64, h, &cref, &rref), NH_STEP_OK);
  nh_evolve e;
  nh_evolve_start(&e, m, &sys, &x0, h, 0);
  cr_expect_eq(nh_evolve_steps(&e, 200, nh_study_time_limit, (void *)&past), NH_RUN_TIMED_OUT);
  cr_expect_eq(e.cost.steps, 64ull);
  cr_expect_eq(e.k, 64);
  cr_expect_eq(e.cost.rhs_evals, cref.rhs_evals);
  cr_expect_eq(memcmp(e.x->q, ref.q, sizeof ref.q), 0);
  cr_expect_eq(memcmp(e.x->v, ref.v, sizeof ref.v), 0);
  cr_expect_eq(e.x->t, x0.t + 64 * h);
  nh_evolve_start(&e, m, &sys, &x0, h, 0);
  cr_expect_eq(nh_evolve_steps(&e, 63, nh_study_time_limit, (void *)&past), NH_STEP_OK);
  cr_expect_eq(e.cost.steps, 63ull);
  nh_evolve_start(&e, m, &sys, &x0, h, 0);
  cr_expect_eq(nh_evolve_steps(&e, 200, nh_study_time_limit, (void *)&ahead), NH_STEP_OK);
  cr_expect_eq(e.cost.steps, 200ull);
  cr_expect_eq(e.x->t, x0.t + 200 * h);
  /* nh_integrate: 200 steps, t = t0 + 200 h; zero steps: the state unchanged, the residual that of
   * the start. */
  nh_state x = x0;
  nh_cost c = {0};
  double r;
  cr_expect_eq(nh_integrate(m, &sys, &x, 200, h, &c, NULL), NH_STEP_OK);
  cr_expect_eq(c.steps, 200ull);
  cr_expect_eq(x.t, x0.t + 200 * h);
  x = x0;
  cr_expect_eq(nh_integrate(m, &sys, &x, 0, h, &c, &r), NH_STEP_OK);
  cr_expect_eq(memcmp(&x, &x0, sizeof x), 0);
  cr_expect_eq(r, nh_constraint_residual(&sys, x0.q, x0.v));
  nh_method_free(m);
}

/* ---- the sampled run (studies/sampling.c) ----------------------------------------------------- */

/* E − E0 every K steps, stepped here: js_a (order 1, no energy conservation) on the chaotic
 * particle from a state at energy E. d[s] for s = 0 … ns − 1. */
static void energy_errors(const nh_system *sys, const nh_method *m, const nh_state *x0, double h, int K, int ns,
                          double *d) {
  nh_state x = *x0;
  nh_cost c = {0};
  const double E0 = nh_energy(sys, x0->q, x0->v);
  cr_assert_eq(nh_method_init(m, sys, &x, h, &c), NH_STEP_OK);
  for (int s = 0; s < ns; s++) {
    if (s) cr_assert_eq(nh_integrate(m, sys, &x, K, h, &c, NULL), NH_STEP_OK);
    d[s] = nh_energy(sys, x.q, x.v) - E0;
  }
}

/* The divergence test |E − E0| > divergence · max(1, |E0|) at every sample: for E0 = 0.5 (the 1
 * counts) and E0 = 3 (|E0| counts), a divergence set between the running maximum of |dE| before a
 * sample j and |dE_j| stops the run exactly at j (status 3, j + 1 samples reached, NaN after),
 * and one just above |dE_j|, or (E0 = 0.5) equal to it, does not stop it there. */
Test(sampled_runs, divergence_stops_at_the_sample_that_crosses) {
  const double energies[2] = {0.5, 3.0};
  const char *methods[] = {"js_a"};
  for (int k = 0; k < 2; k++) {
    char file[] = "hand";
    nh_state x0;
    nh_system sys = test_system("chaotic_particle", NULL);
    cr_assert_eq(nh_draw_states(&sys, 1, energies[k], 11, &x0), 0);
    nh_study st = test_hand_study(NH_STUDY_ENSEMBLE, file, "chaotic_particle", NULL, methods, 1, &x0, 1);
    st.reference_tol = 1e-13;
    const double h = 0.05, E0 = nh_energy(&st.sys, x0.q, x0.v), scale = fmax(1, fabs(E0));
    cr_assert(fabs(E0 - energies[k]) < 1e-12);
    enum { K = 4, NS = 60 };
    double d[NS];
    energy_errors(&st.sys, st.methods[0], &x0, h, K, NS, d);
    /* j: a sample whose |dE| exceeds every earlier one by less than 20 %, after 5 samples. */
    int j = -1;
    double M = 0;
    for (int s = 0; s < NS; s++) {
      if (s > 5 && j < 0 && fabs(d[s]) > M && fabs(d[s]) < 1.2 * M) j = s;
      M = fmax(M, fabs(d[s]));
    }
    cr_assert(j > 0, "E0 = %g: no sample j with a modest new maximum", E0);
    M = 0;
    for (int s = 0; s < j; s++) M = fmax(M, fabs(d[s]));
    double dE[NS];
    nh_sampled_run run = {.st = &st, .m = st.methods[0], .method_index = 0, .h = h, .nsteps = (long)K * (NS - 1),
                          .K = K, .x0 = x0, .divergence = (M + fabs(d[j])) / 2 / scale, .dE = dE};
    cr_assert_eq(nh_sampled_run_go(&run), 0);
    cr_expect_eq(run.status, NH_RUN_DIVERGED, "E0 = %g", E0);
    cr_expect_eq(run.reached, j + 1, "E0 = %g: reached %d, want %d", E0, run.reached, j + 1);
    for (int s = 0; s <= j; s++) cr_expect_eq(dE[s], d[s], "E0 = %g sample %d", E0, s);
    for (int s = j + 1; s < NS; s++) cr_expect(isnan(dE[s]), "E0 = %g sample %d after the stop", E0, s);
    cr_expect_eq(run.max_abs_dE, fabs(d[j]), "E0 = %g", E0);
    cr_expect_eq(run.cost.steps, (unsigned long long)K * j);
    /* Just above |dE_j|: the run goes on past j. */
    run.divergence = fabs(d[j]) * (1 + 1e-9) / scale;
    cr_assert_eq(nh_sampled_run_go(&run), 0);
    cr_expect_gt(run.reached, j + 1, "E0 = %g", E0);
    if (scale == 1) { /* E0 = 0.5: the bound is divergence itself, so |dE_j| exactly: strict, no stop at j */
      run.divergence = fabs(d[j]);
      cr_assert_eq(nh_sampled_run_go(&run), 0);
      cr_expect_gt(run.reached, j + 1, "E0 = %g: stopped where |dE| equals the bound", E0);
    }
    /* divergence 0: never stops; the running maximum of |dE| over all samples. */
    run.divergence = 0;
    cr_assert_eq(nh_sampled_run_go(&run), 0);
    double all = 0;
    for (int s = 0; s < NS; s++) all = fmax(all, fabs(d[s]));
    cr_expect(run.status == NH_STEP_OK && run.reached == NS && run.max_abs_dE == all, "E0 = %g", E0);
    cr_expect_eq(run.cost.steps, (unsigned long long)K * (NS - 1));
    test_hand_study_release(&st);
  }
}

/* The ensemble study of spec text, loaded and run (both must succeed). */
static void run_ensemble_spec(const char *text, nh_study *st, nh_ensemble_result *r) {
  char path[128], err[1024];
  snprintf(path, sizeof path, "/tmp/nhbench-mut2-run-%d.cfg", (int)getpid());
  test_write_file(path, text);
  cr_assert_eq(nh_study_load(path, NULL, 0, st, err, sizeof err), 0, "%s", err);
  remove(path);
  cr_assert_eq(nh_run_ensemble(st, r, err, sizeof err), 0, "%s", err);
}

/* An ensemble with observables on the chaotic particle (no exact solution): the `error` observable
 * is q, v − the rk8pd reference integrated from sample to sample; here the reference is taken from
 * x0 straight to each sample time (nh_true_solution), which agrees to the reference's tolerance.
 * A truth that did not advance (stuck at x0) would be off by O(1). */
Test(sampled_runs, sampled_error_against_the_rk8pd_reference) {
  nh_study st;
  nh_ensemble_result r;
  run_ensemble_spec("study = \"ensemble\";\nsystem = \"chaotic_particle\";\nT = 1.2;\nh = 0.1;\nsample_every = 3;\n"
                    "methods = [\"rk4\", \"nh_newmark(beta=0.1,beta2=0.1,alpha=0.5)\"];\n"
                    "ensemble = { count = 2; energy = 1.535; seed = 3; };\nobservables = [\"q\", \"v\", \"error\"];\n",
                    &st, &r);
  const int n = st.sys.n, ns = st.nsamples, row = r.samples.row;
  cr_assert_eq(ns, 5);
  cr_assert_eq(row, 4 * n, "q, v and error (2n)");
  for (int mi = 0; mi < 2; mi++)
    for (int ic = 0; ic < 2; ic++) {
      const long task = (long)mi * 2 + ic;
      nh_state x0 = {0};
      memcpy(x0.q, r.q0 + ic * n, sizeof(double) * n), memcpy(x0.v, r.v0 + ic * n, sizeof(double) * n);
      cr_expect_eq(r.status[task], 0);
      for (int s = 0; s < ns; s++) {
        const double *v = r.samples.values + ((size_t)task * ns + s) * row;
        nh_state ref;
        cr_assert_eq(nh_true_solution(&st.sys, &x0, r.t[s], 1e-13, &ref, NULL), 0);
        cr_expect_eq(r.t[s], s * 3 * 0.1);
        for (int i = 0; i < n; i++) {
          cr_expect(fabs(v[2 * n + i] - (v[i] - ref.q[i])) < 1e-9, "m %d ic %d s %d q%d: %.3g vs %.3g", mi, ic, s, i,
                    v[2 * n + i], v[i] - ref.q[i]);
          cr_expect(fabs(v[3 * n + i] - (v[n + i] - ref.v[i])) < 1e-9, "m %d ic %d s %d v%d", mi, ic, s, i);
        }
        if (s == 0) cr_expect(v[2 * n] == 0 && v[3 * n] == 0, "no error at t = 0");
      }
    }
  nh_ensemble_result_free(&r);
  nh_study_free(&st);
}

/* Random initial conditions start at t = 0, as the presets do: on lane_emden, whose damping
 * α(t) = 2/(t + t0) depends on time, each member's sampled q is that of rk4 stepped here from
 * (t = 0, q0, v0) (a start at t = 1 would damp less: O(0.01) apart after 1.2). */
Test(sampled_runs, random_initial_conditions_start_at_t_0) {
  nh_study st;
  nh_ensemble_result r;
  run_ensemble_spec("study = \"ensemble\";\nsystem = \"lane_emden\";\nT = 1.2;\nh = 0.1;\nsample_every = 4;\n"
                    "methods = [\"rk4\"];\nensemble = { count = 2; energy = 0.5; seed = 5; };\nobservables = [\"q\"];\n",
                    &st, &r);
  cr_assert(st.random_ics);
  const int n = st.sys.n, ns = st.nsamples, row = r.samples.row;
  cr_assert_eq(ns, 4);
  for (int ic = 0; ic < 2; ic++) {
    nh_state x = {0};
    memcpy(x.q, r.q0 + ic * n, sizeof(double) * n), memcpy(x.v, r.v0 + ic * n, sizeof(double) * n);
    nh_cost cost = {0};
    cr_assert_eq(nh_method_init(st.methods[0], &st.sys, &x, 0.1, &cost), NH_STEP_OK);
    for (int s = 0; s < ns; s++) {
      if (s) cr_assert_eq(nh_integrate(st.methods[0], &st.sys, &x, 4, 0.1, &cost, NULL), NH_STEP_OK);
      const double *v = r.samples.values + ((size_t)ic * ns + s) * row;
      for (int i = 0; i < n; i++)
        cr_expect(fabs(v[i] - x.q[i]) <= 1e-12 * (1 + fabs(x.q[i])), "ic %d sample %d q%d: %.17g, stepped here %.17g",
                  ic, s, i, v[i], x.q[i]);
    }
  }
  nh_ensemble_result_free(&r);
  nh_study_free(&st);
}

/* multiplier_error where the true multiplier does not exist (the Foucault pendulum's reference at
 * the origin, where A M⁻¹ Aᵀ = 0: nh_multiplier fails): NaN in each of the k components, and
 * nothing written past them. */
Test(sampled_runs, multiplier_error_without_a_true_multiplier) {
  nh_system sys = test_system("foucault_pendulum", NULL);
  nh_method *m = test_method("herglotz2");
  const nh_observable *o = nh_observable_find("multiplier_error");
  cr_assert(o != NULL);
  cr_assert_eq(sys.k, 1);
  nh_state cur = {0}, prev = {0}, ref = {0};
  double lam[NH_MAX_K];
  cur.t = 0.1, cur.q[0] = 1, cur.lambda[0] = 0.5;
  cr_assert_eq(nh_multiplier(&sys, 0, ref.q, ref.v, lam), -1, "the origin has a multiplier after all");
  nh_obs_ctx c = {&sys, m, 0.1, 0, &prev, &cur, &ref, &ref, NULL};
  double out[3] = {7, 7, 7};
  nh_observable_sample(o, &c, out);
  cr_expect(isnan(out[0]), "%g", out[0]);
  cr_expect(out[1] == 7 && out[2] == 7, "written past k: %g %g", out[1], out[2]);
  /* Where it exists: λ − λ(t*) (ref at q = (1, 0), v = (0, -s), the default state). */
  nh_system_default_state(&sys, &ref);
  cr_assert_eq(nh_multiplier(&sys, ref.t, ref.q, ref.v, lam), 0);
  nh_observable_sample(o, &c, out);
  cr_expect_eq(out[0], 0.5 - lam[0]);
  cr_expect(out[1] == 7, "written past k");
  nh_method_free(m);
}

/* Random initial conditions: state i depends on (seed, i) only. Drawn 3 or 5 at a time, the first
 * three are the same bits (q, v, t, z, λ: the whole state); an ensemble run with 1 or 2 threads
 * and a one-step study's `ensemble` states are those draws; another seed gives other states. */
Test(sampled_runs, random_states_depend_on_seed_and_index_only) {
  nh_system sys = test_system("chaotic_particle", NULL);
  nh_state three[3], five[5], other[3];
  cr_assert_eq(nh_draw_states(&sys, 3, 1.535, 77, three), 0);
  cr_assert_eq(nh_draw_states(&sys, 5, 1.535, 77, five), 0);
  cr_assert_eq(nh_draw_states(&sys, 3, 1.535, 78, other), 0);
  for (int i = 0; i < 3; i++) {
    cr_expect_eq(memcmp(&three[i], &five[i], sizeof three[i]), 0, "state %d", i);
    cr_expect_neq(memcmp(three[i].q, other[i].q, sizeof three[i].q), 0, "state %d of another seed", i);
    cr_expect(fabs(nh_energy(&sys, three[i].q, three[i].v) - 1.535) < 1e-12);
  }
  cr_expect_neq(memcmp(three[0].q, three[1].q, sizeof three[0].q), 0, "states 0 and 1 differ");
  char path[128], err[1024];
  snprintf(path, sizeof path, "/tmp/nhbench-mut2-draw-%d.cfg", (int)getpid());
  for (int threads = 1; threads <= 2; threads++) {
    omp_set_num_threads(threads);
    test_write_file(path, "study = \"ensemble\";\nsystem = \"chaotic_particle\";\nT = 0.4;\nh = 0.2;\n"
                          "methods = [\"rk4\", \"nh_rattle\"];\nensemble = { count = 5; energy = 1.535; seed = 77; };\n");
    nh_study st;
    nh_ensemble_result r;
    cr_assert_eq(nh_study_load(path, NULL, 0, &st, err, sizeof err), 0, "%s", err);
    cr_assert_eq(nh_run_ensemble(&st, &r, err, sizeof err), 0, "%s", err);
    for (int i = 0; i < 5; i++) {
      cr_expect_eq(memcmp(r.q0 + 5 * i, five[i].q, 5 * sizeof(double)), 0, "%d threads: q0 of IC %d", threads, i);
      cr_expect_eq(memcmp(r.v0 + 5 * i, five[i].v, 5 * sizeof(double)), 0, "%d threads: v0 of IC %d", threads, i);
      cr_expect_eq(r.E0[i], nh_energy(&sys, five[i].q, five[i].v));
    }
    nh_ensemble_result_free(&r);
    nh_study_free(&st);
    test_write_file(path, "study = \"onestep\";\nsystem = \"chaotic_particle\";\nT = 1.0;\nh = [0.2, 0.1];\n"
                          "methods = [\"rk4\"];\nensemble = { count = 3; energy = 1.535; seed = 77; };\n");
    cr_assert_eq(nh_study_load(path, NULL, 0, &st, err, sizeof err), 0, "%s", err);
    cr_assert_eq(st.nic, 3);
    for (int i = 0; i < 3; i++) cr_expect_eq(memcmp(&st.ics[i], &three[i], sizeof three[i]), 0, "one-step state %d", i);
    nh_study_free(&st);
  }
  remove(path);
}

/* The q-quantile of the finite values of x (n of them), by hand: sorted, rank q (k − 1), linear
 * interpolation between the two neighbours; NaN without finite values. */
static double quantile_by_hand(int n, const double *x, double q) {
  double v[64];
  int k = 0;
  for (int i = 0; i < n; i++)
    if (isfinite(x[i])) v[k++] = x[i];
  if (!k) return NAN;
  for (int i = 1; i < k; i++)
    for (int j = i; j > 0 && v[j] < v[j - 1]; j--) {
      const double t = v[j];
      v[j] = v[j - 1], v[j - 1] = t;
    }
  const double rank = q * (k - 1);
  const int lo = (int)floor(rank);
  return lo + 1 < k ? v[lo] + (rank - lo) * (v[lo + 1] - v[lo]) : v[lo];
}

static int close_or_both_nan(double a, double b, double tol) {
  return (isnan(a) && isnan(b)) || fabs(a - b) <= tol * fabs(b);
}

/* The ensemble's statistics at every sample, in memory and streamed through a journal, against
 * the rows recomputed here: mean, unbiased variance, the 10/50/90 % quantiles and the count of the
 * runs still going (one method diverges part-way, so counts fall and NaNs are left out). */
Test(sampled_runs, ensemble_statistics_per_sample_by_hand) {
  char path[128], journal[128], err[1024];
  snprintf(path, sizeof path, "/tmp/nhbench-mut2-stats-%d.cfg", (int)getpid());
  snprintf(journal, sizeof journal, "/tmp/nhbench-mut2-stats-%d.journal", (int)getpid());
  test_write_file(path, "study = \"ensemble\";\nsystem = \"chaotic_particle\";\nT = 4.0;\nh = 0.1;\nsample_every = 4;\n"
                        "divergence = 0.039;\nmethods = [\"rk4\", \"js_a\"];\n"
                        "ensemble = { count = 7; energy = 1.535; seed = 5; };\n");
  for (int streamed = 0; streamed < 2; streamed++) {
    nh_study st;
    nh_ensemble_result r;
    cr_assert_eq(nh_study_load(path, NULL, 0, &st, err, sizeof err), 0, "%s", err);
    remove(journal);
    if (streamed) st.checkpoint = journal, st.checkpoint_key = "stats key";
    cr_assert_eq(nh_run_ensemble(&st, &r, err, sizeof err), 0, "%s", err);
    const int ns = st.nsamples, nic = st.count;
    int falling = 0;
    for (int mi = 0; mi < st.nmethods; mi++) {
      double rows[7][11], got[NH_STATS][11];
      cr_assert_eq(ns, 11);
      for (int ic = 0; ic < nic; ic++) cr_assert_eq(nh_ensemble_dE_row(&st, &r, (long)mi * nic + ic, rows[ic]), 0);
      for (int w = 0; w < NH_STATS; w++) cr_assert_eq(nh_ensemble_stat_row(&st, &r, mi, w, got[w]), 0);
      for (int s = 0; s < ns; s++) {
        double col[7], sum = 0, ss = 0;
        int k = 0;
        for (int ic = 0; ic < nic; ic++) {
          col[ic] = rows[ic][s];
          if (isfinite(col[ic])) sum += col[ic], k++;
        }
        const double mean = k ? sum / k : NAN;
        for (int ic = 0; ic < nic; ic++)
          if (isfinite(col[ic])) ss += (col[ic] - mean) * (col[ic] - mean);
        const double var = k > 1 ? ss / (k - 1) : NAN;
        falling += mi == 1 && k < nic && k > 0;
        cr_expect_eq(got[NH_STAT_COUNT][s], (double)k, "streamed %d m %d s %d: count", streamed, mi, s);
        cr_expect(close_or_both_nan(got[NH_STAT_MEAN][s], mean, 1e-13), "m %d s %d: mean %.17g vs %.17g", mi, s,
                  got[NH_STAT_MEAN][s], mean);
        cr_expect(close_or_both_nan(got[NH_STAT_VAR][s], var, 1e-12), "m %d s %d: var %.17g vs %.17g", mi, s,
                  got[NH_STAT_VAR][s], var);
        const double q[3] = {0.1, 0.5, 0.9};
        const int which[3] = {NH_STAT_Q10, NH_STAT_Q50, NH_STAT_Q90};
        for (int j = 0; j < 3; j++)
          cr_expect(close_or_both_nan(got[which[j]][s], quantile_by_hand(nic, col, q[j]), 1e-13),
                    "streamed %d m %d s %d: quantile %g: %.17g vs %.17g", streamed, mi, s, q[j], got[which[j]][s],
                    quantile_by_hand(nic, col, q[j]));
      }
    }
    cr_expect_gt(falling, 0, "js_a: no sample with some runs stopped and some going");
    nh_ensemble_result_free(&r);
    nh_study_free(&st);
  }
  remove(path), remove(journal);
}
