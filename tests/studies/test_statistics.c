/* The statistics a study stores, against values computed by hand on small inputs: the ensemble
 * mean and unbiased variance (with NaN, stopped runs, one sample, equal samples), the drift slope,
 * the order fit, the running maximum of the constraint residual, and the random streams. */
#include <criterion/criterion.h>
#include <gsl/gsl_statistics_double.h>
#include <float.h>
#include <math.h>
#include <omp.h>
#include <string.h>
#include <unistd.h>

#include "studies/study.h"
#include "tests/helpers.h"

#define DATA NHBENCH_SOURCE_DIR "/tests/data/"

/* Columns: [1, 2, 6] → mean 3, variance ((−2)² + (−1)² + 3²)/2 = 7; with a stopped run (NaN) and
 * an infinite value left out; one finite entry → variance NaN; none → mean NaN; equal entries → 0. */
Test(statistics, column_mean_and_unbiased_variance_by_hand) {
  const double N = NAN, I = INFINITY;
  const double x[4 * 5] = {
      1, 5, N, 2, N,  /* run 0 */
      2, N, N, 2, N,  /* run 1 stopped at column 1 */
      6, 7, 4, 2, N,  /* run 2 */
      N, I, N, 2, N,  /* run 3 failed at once */
  };
  double mean[5], var[5];
  int count[5];
  nh_column_stats(4, 5, x, mean, var, count);
  cr_expect_eq(count[0], 3);
  cr_expect_eq(mean[0], 3);
  cr_expect_eq(var[0], 7);
  cr_expect_eq(count[1], 2);
  cr_expect_eq(mean[1], 6);
  cr_expect_eq(var[1], 2, "(5−6)² + (7−6)² over 1: %g", var[1]);
  cr_expect_eq(count[2], 1);
  cr_expect_eq(mean[2], 4);
  cr_expect(isnan(var[2]), "one sample: no variance");
  cr_expect_eq(count[3], 4);
  cr_expect_eq(mean[3], 2);
  cr_expect_eq(var[3], 0, "equal samples");
  cr_expect_eq(count[4], 0);
  cr_expect(isnan(mean[4]) && isnan(var[4]));
}

/* The two-pass variance does not lose the digits a one-pass Σx² − (Σx)²/n would: 1e8 + {1, 2, 3}. */
Test(statistics, variance_without_cancellation) {
  const double x[3] = {1e8 + 1, 1e8 + 2, 1e8 + 3};
  double mean, var;
  int count;
  nh_column_stats(3, 1, x, &mean, &var, &count);
  cr_expect_eq(var, 1);
  cr_expect_eq(mean, 1e8 + 2);
  /* Deviations of 1e-9 from 1, which no double holds exactly: the variance agrees with GSL's to
   * round-off, where Σ(d + m)(d − m), equal in exact arithmetic, is off by 26 times the value. */
  double y[6];
  for (int i = 0; i < 6; i++) y[i] = 1 + 1e-9 * (double[]){1, 2, 3, 5, 8, 13}[i];
  nh_column_stats(6, 1, y, &mean, &var, &count);
  const double want = gsl_stats_variance(y, 1, 6);
  cr_expect(fabs(var - want) <= 1e-12 * want, "variance %.17g, GSL's %.17g", var, want);
  cr_expect(fabs(mean - gsl_stats_mean(y, 1, 6)) <= 2 * DBL_EPSILON, "mean %.17g, GSL's %.17g", mean, gsl_stats_mean(y, 1, 6));
}

/* Least squares by hand: y = 2 + 3t exactly → 3; y = t² on t = 0, 1, 2 → slope 2 (the normal
 * equations: Σ(t − 1)(y − 5/3) / Σ(t − 1)² = (−1·−5/3 + 1·7/3)/2 = 2); fewer than two points → NaN. */
Test(statistics, drift_slope_by_hand) {
  const double t[4] = {0, 1, 2, 3}, y[4] = {2, 5, 8, 11}, y2[3] = {0, 1, 4};
  cr_expect(fabs(nh_drift_slope(4, t, y) - 3) < 1e-15);
  cr_expect(fabs(nh_drift_slope(3, t, y2) - 2) < 1e-15);
  cr_expect(isnan(nh_drift_slope(1, t, y)));
  const double down[3] = {1, 0, -1};
  cr_expect(fabs(nh_drift_slope(3, t, down) + 1) < 1e-15, "sign of a downward drift");
}

/* Order fit: exact power laws, a power law with a round-off floor, noisy data with known slope. */
Test(statistics, order_fit_by_hand) {
  double h[6], e[6], p, se;
  int first, count;
  for (int i = 0; i < 6; i++) h[i] = ldexp(0.1, -i), e[i] = 3 * pow(h[i], 2);
  cr_assert_eq(nh_fit_order(6, h, e, 3, 1e-11, &p, &se, &first, &count), 0);
  cr_expect(fabs(p - 2) < 1e-12 && first == 5 && count == 3, "p %.15g first %d", p, first);
  /* Floor: the three finest points sit on round-off and are skipped; the fit uses h[0..2]. */
  e[3] = e[4] = e[5] = 1e-13;
  cr_assert_eq(nh_fit_order(6, h, e, 3, 1e-11, &p, &se, &first, &count), 0);
  cr_expect(fabs(p - 2) < 1e-12 && first == 2 && count == 3, "p %g first %d count %d", p, first, count);
  /* Noise ±10% alternating on an order-4 law: slope by hand from the three points. */
  double hh[3] = {0.4, 0.2, 0.1}, ee[3];
  for (int i = 0; i < 3; i++) ee[i] = pow(hh[i], 4) * (i == 1 ? 1.1 : 0.9);
  cr_assert_eq(nh_fit_order(3, hh, ee, 3, 0, &p, &se, &first, &count), 0);
  double x[3], y[3], xm = 0, ym = 0, sxy = 0, sxx = 0;
  for (int i = 0; i < 3; i++) x[i] = log(hh[i]), y[i] = log(ee[i]), xm += x[i] / 3, ym += y[i] / 3;
  for (int i = 0; i < 3; i++) sxy += (x[i] - xm) * (y[i] - ym), sxx += (x[i] - xm) * (x[i] - xm);
  cr_expect(fabs(p - sxy / sxx) < 1e-12, "p %.15g vs %.15g", p, sxy / sxx);
  cr_expect(se > 0.01, "noisy data: a real standard error, %g", se);
  /* Two points: a slope but no standard error. */
  cr_assert_eq(nh_fit_order(2, hh, ee, 3, 0, &p, &se, &first, &count), 0);
  cr_expect(isnan(se) && count == 2);
}

/* Out of memory is not "fewer than 2 points": the order fit says -2, with nothing fitted, whichever
 * of its two allocations fails; and the states drawn on D say NH_DRAW_NO_MEMORY, not "no state". */
Test(statistics, order_fit_and_draw_out_of_memory) {
  const double h[3] = {0.4, 0.2, 0.1}, e[3] = {16e-4, 4e-4, 1e-4};
  for (long k = 1; k <= 2; k++) {
    double p = 0, se = 0;
    int first = 5, count = 5;
    test_fail_allocation = k;
    const int rc = nh_fit_order(3, h, e, 3, 0, &p, &se, &first, &count);
    test_fail_allocation = 0;
    cr_expect_eq(rc, -2, "allocation %ld failed: %d", k, rc);
    cr_expect(isnan(p) && isnan(se) && first == -1 && count == 0, "allocation %ld: %g %g %d %d", k, p, se, first, count);
  }
  double p, se;
  int first, count;
  cr_expect_eq(nh_fit_order(3, h, e, 3, 0, &p, &se, &first, &count), 0);
  cr_expect(fabs(p - 2) < 1e-12 && count == 3, "slope %g over %d points", p, count);
  nh_system sys = test_system("chaotic_particle", NULL);
  nh_state x[2];
  test_fail_allocation = 1;
  const int rc = nh_draw_states(&sys, 2, 1.535, 3, x);
  test_fail_allocation = 0;
  cr_expect_eq(rc, NH_DRAW_NO_MEMORY);
  cr_expect_eq(nh_draw_states(&sys, 2, 1.535, 3, x), 0);
}

/* A first-order method claimed as order 2 fails the order check; the real order passes. */
Test(statistics, order_check_negative_control) {
  nh_study st;
  nh_convergence_result r;
  char err[1024];
  const char *ov[] = {"T=1", "h0=0.05", "halvings=3"};
  cr_assert_eq(nh_study_load(DATA "order_claim.cfg", ov, 3, &st, err, sizeof err), 0, "%s", err);
  cr_assert_eq(nh_run_convergence(&st, &r, err, sizeof err), 0, "%s", err);
  cr_assert_eq(st.nmethods, 2);
  cr_expect_eq(st.order_expected[0], 2, "js_a is claimed as order 2 in the spec");
  cr_expect(fabs(r.order[0] - 1) < 0.15, "js_a is order 1: %g", r.order[0]);
  cr_expect_eq(r.order_ok[0], 0, "order 1 against a claim of 2 must fail");
  cr_expect_eq(r.order_ok[1], 1, "js_b at its true order 2 passes: %g", r.order[1]);
  nh_convergence_result_free(&r);
  nh_study_free(&st);
}

/* A correct method on step sizes outside its asymptotic range fails the order check too; the same
 * method and problem pass once the step sizes are small (h0 = 0.05). */
Test(statistics, order_check_outside_the_asymptotic_range) {
  const char *const h0[2] = {NULL, "h0=0.05"};
  for (int k = 0; k < 2; k++) {
    nh_study st;
    nh_convergence_result r;
    char err[1024];
    cr_assert_eq(nh_study_load(DATA "order_range.cfg", &h0[k], k, &st, err, sizeof err), 0, "%s", err);
    cr_assert_eq(nh_run_convergence(&st, &r, err, sizeof err), 0, "%s", err);
    cr_expect_eq(st.order_expected[0], 4);
    if (k == 0) cr_expect(fabs(r.order[0] - 4) > 0.15 && r.order_ok[0] == 0, "h0 = 2: order %g must fail", r.order[0]);
    else cr_expect(fabs(r.order[0] - 4) < 0.15 && r.order_ok[0] == 1, "h0 = 0.05: order %g must pass", r.order[0]);
    nh_convergence_result_free(&r);
    nh_study_free(&st);
  }
}

/* The running maximum of the constraint residual is over every step, not the last one: recomputed
 * here step by step for rk4 on the chaotic particle. */
Test(statistics, running_max_of_constraint_residual) {
  nh_system sys = test_system("chaotic_particle", NULL);
  nh_method *m = test_method("rk4");
  nh_state x, y;
  nh_cost cost = {0};
  nh_system_default_state(&sys, &x);
  nh_state x0 = x;
  double hand = nh_constraint_residual(&sys, x.q, x.v), last = 0;
  for (int s = 0; s < 100; s++) {
    cr_assert_eq(nh_method_step(m, &sys, &x, &y, 0.2, &cost), NH_STEP_OK);
    x = y;
    last = nh_constraint_residual(&sys, x.q, x.v);
    hand = fmax(hand, last);
  }
  double res;
  cr_assert_eq(nh_integrate(m, &sys, &x0, 100, 0.2, &cost, &res), NH_STEP_OK);
  cr_expect_eq(res, hand);
  cr_expect(hand > last, "the maximum is not the last residual here (%g vs %g)", hand, last);
  nh_method_free(m);
}

/* Random streams: the same seed gives the same initial conditions whatever the thread count and
 * ensemble size; another seed gives others; stream seeds differ per index. */
Test(statistics, random_streams) {
  nh_study st;
  char err[1024];
  double q3[2][5];
  const char *sizes[2][1] = {{"ensemble.count=3"}, {"ensemble.count=5"}};
  for (int k = 0; k < 2; k++) {
    nh_ensemble_result r;
    cr_assert_eq(nh_study_load(DATA "small_ensemble.cfg", sizes[k], 1, &st, err, sizeof err), 0, "%s", err);
    omp_set_num_threads(k + 1);
    cr_assert_eq(nh_run_ensemble(&st, &r, err, sizeof err), 0, "%s", err);
    memcpy(q3[k], r.q0 + 2 * 5, sizeof q3[k]); /* initial condition 2 */
    nh_ensemble_result_free(&r);
    nh_study_free(&st);
  }
  cr_expect_eq(memcmp(q3[0], q3[1], sizeof q3[0]), 0, "IC 2 depends on (seed, 2) only");
  nh_ensemble_result r;
  const char *other[] = {"ensemble.count=3", "ensemble.seed=8"};
  cr_assert_eq(nh_study_load(DATA "small_ensemble.cfg", other, 2, &st, err, sizeof err), 0, "%s", err);
  cr_assert_eq(nh_run_ensemble(&st, &r, err, sizeof err), 0, "%s", err);
  cr_expect_neq(memcmp(q3[0], r.q0 + 2 * 5, sizeof q3[0]), 0, "another seed, another IC");
  nh_ensemble_result_free(&r);
  nh_study_free(&st);
  cr_expect_neq(nh_stream_seed(7, 0), nh_stream_seed(7, 1));
  cr_expect_neq(nh_stream_seed(7, 0), nh_stream_seed(8, 0));
  cr_expect_eq(nh_stream_seed(7, 3), nh_stream_seed(7, 3));
}

/* Per trajectory, max|E − E0| is over every sample (not the last), the drift slope is the
 * least-squares slope over the samples reached, and the ensemble mean at each time is over the
 * runs still going: all recomputed here from the stored series. */
Test(statistics, ensemble_per_run_statistics_from_the_series) {
  nh_study st;
  nh_ensemble_result r;
  char err[1024];
  cr_assert_eq(nh_study_load(DATA "small_ensemble.cfg", NULL, 0, &st, err, sizeof err), 0, "%s", err);
  cr_assert_eq(nh_run_ensemble(&st, &r, err, sizeof err), 0, "%s", err);
  const int ns = st.nsamples, nic = st.count;
  int differs_from_last = 0;
  for (int run = 0; run < st.nmethods * nic; run++) {
    const double *d = r.dE + (size_t)run * ns;
    double m = 0;
    int reached = 0;
    for (int s = 0; s < ns && isfinite(d[s]); s++) m = fmax(m, fabs(d[s])), reached++;
    cr_expect_eq(r.max_abs_dE[run], m, "run %d", run);
    differs_from_last += reached == ns && m > fabs(d[ns - 1]);
    double tm = 0, ym = 0, sty = 0, stt = 0;
    for (int s = 0; s < reached; s++) tm += r.t[s] / reached, ym += d[s] / reached;
    for (int s = 0; s < reached; s++) sty += (r.t[s] - tm) * (d[s] - ym), stt += (r.t[s] - tm) * (r.t[s] - tm);
    if (reached >= 2) cr_expect(fabs(r.drift_slope[run] - sty / stt) <= 1e-9 * fabs(sty / stt) + 1e-18, "run %d slope", run);
  }
  cr_expect(differs_from_last > 0, "some run's maximum is not its last sample");
  /* The residual maximum is over the whole run (every step of every segment): each method from
   * each IC, stepped here over all nsteps at once (nh_integrate's running maximum is checked above). */
  for (int mi = 0; mi < 2; mi++)
    for (int ic = 0; ic < nic; ic++) {
      nh_state x = {0};
      memcpy(x.q, r.q0 + ic * 5, sizeof(double) * 5), memcpy(x.v, r.v0 + ic * 5, sizeof(double) * 5);
      nh_cost cost = {0};
      double res;
      cr_assert_eq(nh_integrate(st.methods[mi], &st.sys, &x, st.nsteps, st.h[0], &cost, &res), 0);
      cr_expect_eq(r.max_residual[mi * nic + ic], res, "method %d IC %d: %g vs %g", mi, ic, r.max_residual[mi * nic + ic], res);
    }
  for (int mi = 0; mi < st.nmethods; mi++) {
    double sum = 0;
    int count = 0;
    for (int ic = 0; ic < nic; ic++) {
      double v = r.dE[((size_t)mi * nic + ic) * ns + ns - 1];
      if (isfinite(v)) sum += v, count++;
    }
    cr_expect_eq(r.dE_count[(size_t)mi * ns + ns - 1], count);
    if (count) cr_expect(fabs(r.dE_mean[(size_t)mi * ns + ns - 1] - sum / count) <= 1e-15 * fabs(sum / count) + 1e-300);
  }
  nh_ensemble_result_free(&r);
  nh_study_free(&st);
}

/* ---- the progress line's estimate of the time left (studies/progress.c) ------------------------ */

/* Two kinds of 10 tasks, one thread. Kind 0: 5 done in 0.01 s each (fast failures), kind 1: 2 done
 * in 1 s each: left = 5 × 0.01 + 8 × 1 = 8.05 s; a plain tasks-per-second estimate would say
 * (elapsed 2.05 s) × 13/7 = 3.8 s. Before kind 1 has a task done, its mean is the mean of the
 * measured kinds' means: 5 × 0.01 + 10 × 0.01. Two threads halve it. Without kinds: elapsed × left
 * / done; nothing done: 0. */
Test(statistics, progress_eta_by_kind_by_hand) {
  nh_progress p;
  nh_progress_start(&p, "test", 20);
  p.threads = 1;
  cr_expect_eq(nh_progress_eta(&p, p.start + 5), 0.0, "nothing done");
  const long totals[2] = {10, 10};
  cr_assert_eq(nh_progress_kinds(&p, 2, totals), 0);
  for (int i = 0; i < 5; i++) nh_progress_tick_kind(&p, 0, 0.01);
  cr_expect(fabs(nh_progress_eta(&p, p.start + 0.05) - (5 * 0.01 + 10 * 0.01)) < 1e-12, "%.17g",
            nh_progress_eta(&p, p.start + 0.05));
  nh_progress_tick_kind(&p, 1, 1.0);
  nh_progress_tick_kind(&p, 1, 1.0);
  cr_expect(fabs(nh_progress_eta(&p, p.start + 2.05) - 8.05) < 1e-12, "%.17g", nh_progress_eta(&p, p.start + 2.05));
  p.threads = 2;
  cr_expect(fabs(nh_progress_eta(&p, p.start + 2.05) - 8.05 / 2) < 1e-12);
  nh_progress_end(&p);
  cr_expect_eq(p.nkinds, 0, "kinds freed");
  nh_progress q;
  nh_progress_start(&q, "plain", 10);
  for (int i = 0; i < 4; i++) nh_progress_tick(&q);
  cr_expect(fabs(nh_progress_eta(&q, q.start + 2) - 2.0 * 6 / 4) < 1e-12, "%.17g", nh_progress_eta(&q, q.start + 2));
  nh_progress_end(&q);
}

/* Quantiles across the ICs (the ensemble's dE_q10/q50/q90), by hand: column 0 = {4, 1, NaN, 3, 2}:
 * finite and sorted {1, 2, 3, 4}, rank p(k − 1): p = 0.1 → 1.3, 0.5 → 2.5, 0.9 → 3.7; column 1
 * has one finite entry (5, the rest a stopped run); column 2 only NaN; column 3 equal values. */
Test(statistics, column_quantiles_by_hand) {
  const double x[5 * 4] = {4, NAN, NAN, 2, /**/ 1, NAN, NAN, 2, /**/ NAN, 5, NAN, 2, /**/ 3, INFINITY, NAN, 2,
                           /**/ 2, NAN, NAN, 2};
  const double p[3] = {0.1, 0.5, 0.9}, want0[3] = {1.3, 2.5, 3.7};
  for (int i = 0; i < 3; i++) {
    double *q = malloc(4 * sizeof *q); /* guarded (tests/heap_guard.c): a fifth column written aborts */
    cr_assert(q);
    cr_assert_eq(nh_column_quantile(5, 4, x, p[i], q), 0);
    cr_expect(fabs(q[0] - want0[i]) < 1e-15, "p = %g: %.17g, want %g", p[i], q[0], want0[i]);
    cr_expect_eq(q[1], 5.0, "one finite entry");
    cr_expect(isnan(q[2]), "no finite entry: NaN");
    cr_expect_eq(q[3], 2.0, "equal values");
    free(q);
  }
}

/* The pre-flight's memory estimate, by hand: small_ensemble.cfg (2 listed methods + 5 grid points
 * = 7 methods, 5 ICs, T = 20, h = 0.2, every 2 steps: 51 samples) with the observables energy (1)
 * and q (5 on the chaotic particle): 8 bytes × (7·5·51·(1 + 6) + 6·7·51). A trajectory study:
 * trajectory_particle.cfg's methods × step sizes × ICs × samples of the finest h × its row. */
Test(statistics, memory_estimate_by_hand) {
  nh_study st;
  char err[1024];
  const char *ov[] = {"observables=[\"energy\", \"q\"]"};
  cr_assert_eq(nh_study_load(DATA "small_ensemble.cfg", ov, 1, &st, err, sizeof err), 0, "%s", err);
  cr_assert(st.nmethods == 7 && st.count == 5 && st.nsamples == 51, "%d methods, %d ICs, %d samples", st.nmethods,
            st.count, st.nsamples);
  cr_expect_eq(nh_study_memory_estimate(&st), 8.0 * (7 * 5 * 51 * 7 + 6 * 7 * 51));
  nh_study_free(&st);
  cr_assert_eq(nh_study_load(DATA "trajectory_particle.cfg", NULL, 0, &st, err, sizeof err), 0, "%s", err);
  double hmin = st.h[0], row = 0;
  for (int i = 1; i < st.nh; i++) hmin = fmin(hmin, st.h[i]);
  for (int o = 0; o < st.nobs; o++) row += st.obs[o]->width(&st.sys);
  const double ns = floor(st.T / (hmin * st.sample_every) + 0.5) + 1;
  cr_expect(fabs(nh_study_memory_estimate(&st) - 8 * st.nmethods * st.nh * st.nic * ns * row) <= 0.5,
            "%g", nh_study_memory_estimate(&st));
  nh_study_free(&st);
  cr_assert_eq(nh_study_load(DATA "order_claim.cfg", NULL, 0, &st, err, sizeof err), 0, "%s", err);
  cr_expect_eq(nh_study_memory_estimate(&st), 0.0, "a convergence study keeps little");
  nh_study_free(&st);
}

/* The pre-flight's room check at its boundaries: an ensemble's estimate E against the disk (E
 * bytes free pass, one byte less is refused, the memory plays no part), a trajectory study's
 * against 80 % of the memory (E / 0.8 passes, a little less is refused); unknown capacity (0)
 * passes. */
Test(statistics, room_check_at_its_boundaries) {
  nh_study st;
  char err[1024] = "";
  cr_assert_eq(nh_study_load(DATA "small_ensemble.cfg", NULL, 0, &st, err, sizeof err), 0, "%s", err);
  double E = nh_study_memory_estimate(&st);
  /* On disk: its journal and the file written from it, each at most E. */
  cr_expect_eq(nh_study_check_room(&st, 2 * E, 0, err, sizeof err), 0);
  cr_expect_eq(nh_study_check_room(&st, 2 * E - 1, 1e30, err, sizeof err), -1, "one byte short on disk");
  cr_expect(strstr(err, "on disk (its journal and the file") && strstr(err, "free where the output goes"), "%s", err);
  cr_expect_eq(nh_study_check_room(&st, 0, 0, err, sizeof err), 0, "capacity unknown");
  cr_expect_eq(nh_study_check_room(&st, 1, 0, err, sizeof err), -1, "1 byte free is a capacity, and too little");
  cr_expect_eq(nh_study_check_room(&st, 2 * E, 1, err, sizeof err), 0, "an ensemble streams: memory is not asked");
  nh_study_free(&st);
  cr_assert_eq(nh_study_load(DATA "trajectory_particle.cfg", NULL, 0, &st, err, sizeof err), 0, "%s", err);
  E = nh_study_memory_estimate(&st);
  cr_expect_eq(nh_study_check_room(&st, 0, E / 0.8, err, sizeof err), 0);
  cr_expect_eq(nh_study_check_room(&st, 2 * E, 0, err, sizeof err), 0, "memory unknown: %s", err);
  /* At the boundary to the bit: a memory whose 80 % is exactly E passes (refused only above). */
  double at = E / 0.8;
  for (int k = 0; k < 8 && 0.8 * at != E; k++) at = nextafter(at, 0.8 * at < E ? INFINITY : 0);
  cr_assert_eq(0.8 * at, E, "no memory whose 80 %% is E to the bit");
  cr_expect_eq(nh_study_check_room(&st, 0, at, err, sizeof err), 0, "80 %% of the memory is E: %s", err);
  cr_expect_eq(nh_study_check_room(&st, 1e30, E / 0.8 * (1 - 1e-9), err, sizeof err), -1, "memory just short");
  cr_expect_eq(nh_study_check_room(&st, 0, 1, err, sizeof err), -1, "1 byte of memory is a capacity, and too little");
  cr_expect(strstr(err, "of memory, more than the ") != NULL, "%s", err);
  cr_expect_eq(nh_study_check_room(&st, 2 * E, E / 0.8, err, sizeof err), 0, "disk and memory just enough");
  cr_expect_eq(nh_study_check_room(&st, 2 * E * (1 - 1e-9), 1e30, err, sizeof err), -1, "disk just short");
  cr_expect(strstr(err, "on disk") != NULL, "%s", err);
  nh_study_free(&st);
}

/* The room check's message gives the sizes in GiB, to one decimal, computed here: a trajectory
 * study made long enough to need about 20 GiB against a memory whose 80 % is 0.9 of that, and an
 * ensemble whose estimate E is over 1 GiB (2E on disk: the journal and the file) against a disk of
 * E bytes. */
Test(statistics, room_check_message_sizes_by_hand) {
  nh_study st;
  char err[1024] = "", want[160];
  const double GiB = 1u << 30;
  cr_assert_eq(nh_study_load(DATA "trajectory_particle.cfg", NULL, 0, &st, err, sizeof err), 0, "%s", err);
  st.T *= ceil(20 * GiB / nh_study_memory_estimate(&st));
  const double need = nh_study_memory_estimate(&st);
  cr_assert(need > 19 * GiB, "%g", need);
  cr_assert_eq(nh_study_check_room(&st, 0, need * 0.9 / 0.8, err, sizeof err), -1);
  snprintf(want, sizeof want, "about %.1f GiB of memory, more than the %.1f GiB (80 %%", need / GiB, 0.9 * need / GiB);
  cr_expect(strstr(err, want) != NULL, "'%s' lacks '%s'", err, want);
  nh_study_free(&st);
  cr_assert_eq(nh_study_load(DATA "small_ensemble.cfg", NULL, 0, &st, err, sizeof err), 0, "%s", err);
  st.nsamples *= 100000;
  const double e = nh_study_memory_estimate(&st);
  cr_assert(e > GiB, "%g", e);
  cr_assert_eq(nh_study_check_room(&st, e, 0, err, sizeof err), -1);
  snprintf(want, sizeof want, "about %.1f GiB on disk", 2 * e / GiB);
  cr_expect(strstr(err, want) != NULL, "'%s' lacks '%s'", err, want);
  snprintf(want, sizeof want, "more than the %.1f GiB free where", e / GiB);
  cr_expect(strstr(err, want) != NULL, "'%s' lacks '%s'", err, want);
  nh_study_free(&st);
}

/* The progress line in a log (stderr not a terminal): nothing in the first second, then at most one
 * line per 10 s, "LABEL: DONE/TOTAL tasks, E s elapsed, ~L s left" with L = E·(TOTAL − DONE)/DONE,
 * and a last line at the end; a tick of a kind out of range counts the task but no kind. The clock
 * is moved by shifting the line's start and last print back. */
Test(statistics, progress_line_in_a_log) {
  char path[128];
  snprintf(path, sizeof path, "/tmp/nhbench-progress-%d.txt", (int)getpid());
  cr_assert(freopen(path, "w", stderr));
  nh_progress p;
  nh_progress_start(&p, "lbl", 10);
  const long totals[2] = {5, 5};
  cr_assert_eq(nh_progress_kinds(&p, 2, totals), 0);
  nh_progress_tick(&p); /* within the first second: silent */
  p.start -= 20, p.last_print -= 20;
  nh_progress_tick_kind(&p, 2, 1.0); /* prints: 2 done; kind 2 does not exist */
  nh_progress_tick_kind(&p, -1, 1.0);
  p.last_print -= 9.5;
  nh_progress_tick(&p); /* 9.5 s since the last line: silent */
  p.last_print -= 0.6;
  nh_progress_tick(&p); /* 10.1 s: prints, 5 done */
  cr_expect(p.done == 5 && p.kind_done[0] == 0 && p.kind_done[1] == 0, "done %ld, kinds %ld %ld", p.done, p.kind_done[0],
            p.kind_done[1]);
  p.nkinds = 0; /* the plain estimate for the last line */
  free(p.kind_total), free(p.kind_done), free(p.kind_time);
  p.kind_total = p.kind_done = NULL, p.kind_time = NULL;
  nh_progress_end(&p);
  fflush(stderr);
  FILE *f = fopen(path, "r");
  cr_assert(f);
  char line[4][256];
  int n = 0;
  while (n < 4 && fgets(line[n], sizeof line[n], f)) n++;
  fclose(f);
  remove(path);
  cr_assert_eq(n, 3, "three lines, not %d", n);
  const long want_done[3] = {2, 5, 5};
  for (int i = 0; i < 3; i++) {
    long done, total;
    double el, left;
    cr_assert_eq(sscanf(line[i], "lbl: %ld/%ld tasks, %lf s elapsed, ~%lf s left", &done, &total, &el, &left), 4,
                 "line %d: %s", i, line[i]);
    cr_expect(done == want_done[i] && total == 10, "line %d: %s", i, line[i]);
    cr_expect(el >= 20 && el < 21, "line %d: elapsed %g", i, el);
    /* lines 0 and 1 by kinds, none measured (ticks out of range): the mean of no means is 0 */
    const double want = i < 2 ? 0 : el * (10 - done) / done;
    cr_expect(fabs(left - want) <= 1, "line %d: ~%g s left, want %g", i, left, want);
  }
}
