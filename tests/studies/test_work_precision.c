/* Work-precision study (studies/work_precision.c): the Pareto marking on hand-made sets with a
 * known answer, medians of repeated wall times, the per-task time limit, errors in every norm
 * against runs and norms made here, and the counted work. The study is built by hand (the spec
 * loader is tested elsewhere). */
#include <criterion/criterion.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "studies/study.h"
#include "tests/hand_study.h"

/* Declared in studies/work_precision.c (to be added to study.h). */

/* ---- Pareto front on hand-made sets --------------------------------------------------------------- */

/* Seven runs, drawn on paper (err down, cost right):
 *   0 (1e-2, 10)   efficient: the cheapest
 *   1 (1e-4, 100)  efficient
 *   2 (1e-3, 100)  dominated by 1 (same cost, larger error)
 *   3 (1e-4, 200)  dominated by 1 (same error, more cost)
 *   4 (1e-6, 1000) efficient: the most accurate ok run
 *   5 (1e-8, 5)    would dominate everything, but failed: never efficient, dominates nothing
 *   6 (1e-4, 100)  an exact tie with 1: neither dominates the other, both efficient */
Test(work_precision, pareto_hand_made) {
  const double err[] = {1e-2, 1e-4, 1e-3, 1e-4, 1e-6, 1e-8, 1e-4};
  const double cost[] = {10, 100, 100, 200, 1000, 5, 100};
  const int ok[] = {1, 1, 1, 1, 1, 0, 1};
  const int expected[] = {1, 1, 0, 0, 1, 0, 1};
  int eff[7];
  nh_pareto_front(7, err, cost, ok, eff);
  for (int i = 0; i < 7; i++) cr_expect_eq(eff[i], expected[i], "run %d: %d, expected %d", i, eff[i], expected[i]);

  /* The failed run counted as ok dominates every other run (negative control of the ok mask). */
  const int all_ok[] = {1, 1, 1, 1, 1, 1, 1};
  nh_pareto_front(7, err, cost, all_ok, eff);
  for (int i = 0; i < 7; i++)
    cr_expect_eq(eff[i], i == 5, "with run 5 ok, only it is efficient; run %d: %d", i, eff[i]);

  /* Non-finite error or cost is never efficient and dominates nothing. */
  const double err2[] = {NAN, 1e-3, 1e-5}, cost2[] = {1, 10, INFINITY};
  const int ok3[] = {1, 1, 1};
  nh_pareto_front(3, err2, cost2, ok3, eff);
  cr_expect(eff[0] == 0 && eff[1] == 1 && eff[2] == 0, "NaN error, infinite cost: %d %d %d", eff[0], eff[1], eff[2]);
  /* ... also at −∞, which would otherwise dominate every run (each of the three: the others are
   * finite, so only the finite one is efficient). */
  const double err3[][3] = {{-INFINITY, 1e-3, 1e-5}, {1e-9, 1e-3, 1e-5}, {NAN, 1e-3, 1e-5}},
               cost3[][3] = {{1, 10, 100}, {-INFINITY, 10, 100}, {-INFINITY, 10, 100}};
  for (int k = 0; k < 3; k++) {
    nh_pareto_front(3, err3[k], cost3[k], ok3, eff);
    cr_expect(eff[0] == 0 && eff[1] == 1 && eff[2] == 1, "case %d: %d %d %d", k, eff[0], eff[1], eff[2]);
  }

  /* A single ok run is efficient; equal error with strictly smaller cost dominates. */
  const double e1[] = {1e-3, 1e-3}, c1[] = {10, 9};
  nh_pareto_front(1, e1, c1, ok3, eff);
  cr_expect_eq(eff[0], 1);
  nh_pareto_front(2, e1, c1, ok3, eff);
  cr_expect(eff[0] == 0 && eff[1] == 1, "strict in cost only: %d %d", eff[0], eff[1]);
}

/* ---- studies built by hand ------------------------------------------------------------------------- */

static nh_study build(const char *system, const char *const *methods, int nm, const double *h, int nh, double T,
                      int repeats, double time_limit, nh_norm norm) {
  nh_study st = test_hand_study(NH_STUDY_WORK_PRECISION, "test_work_precision", system, NULL, methods, nm, NULL, 1);
  st.nh = nh;
  st.h = calloc((size_t)nh, sizeof *st.h);
  memcpy(st.h, h, sizeof *h * (size_t)nh);
  st.T = T;
  st.norm = norm;
  st.repeats = repeats;
  st.time_limit = time_limit;
  st.reference_tol = 1e-13;
  return st;
}

static void run(const nh_study *st, nh_work_precision_result *r) {
  char err[512] = "";
  cr_assert_eq(nh_run_work_precision(st, r, err, sizeof err), 0, "%s", err);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The median by hand: the middle value, or the mean of the two middle values. */
static double median(int n, const double *v) {
  double s[16];
  memcpy(s, v, sizeof *v * (size_t)n);
  qsort(s, (size_t)n, sizeof *s, cmp_double);
  return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

/* wall_time is the median of the repeats: odd (3) and even (4) counts. Runs short enough that the
 * repeats differ in the last digits of the clock, never equal in general. */
Test(work_precision, median_of_odd_and_even_repeats) {
  const char *methods[] = {"rk4", "nh_newmark(alpha=0.5)"};
  const double h[] = {0.01, 0.005};
  for (int R = 3; R <= 4; R++) {
    nh_study st = build("particle", methods, 2, h, 2, 1.0, R, 60, NH_NORM_MAX);
    nh_work_precision_result r;
    run(&st, &r);
    for (int c = 0; c < 4; c++) {
      const double *w = r.wall_times + (size_t)c * R;
      for (int i = 0; i < R; i++) cr_expect(isfinite(w[i]) && w[i] > 0, "repeat %d of task %d: %g", i, c, w[i]);
      cr_expect_eq(r.status[c], NH_STEP_OK);
      cr_expect(fabs(r.wall_time[c] - median(R, w)) <= 1e-15 * median(R, w), "R = %d, task %d: %.17g vs median %.17g",
                R, c, r.wall_time[c], median(R, w));
    }
    nh_work_precision_result_free(&r);
    test_hand_study_release(&st);
  }
}

/* A 1 ms limit: the long run (10⁷ rk4 steps, seconds) stops as timed out, its errors and median
 * NaN, no further repeats, and it is never efficient; the short run in the same sweep completes. */
Test(work_precision, time_limit_stops_one_task) {
  const char *methods[] = {"rk4"};
  const double h[] = {0.1, 1e-7};
  nh_study st = build("particle", methods, 1, h, 2, 1.0, 3, 1e-3, NH_NORM_MAX);
  nh_work_precision_result r;
  const double t0 = omp_get_wtime();
  run(&st, &r);
  const double elapsed = omp_get_wtime() - t0;
  cr_expect_eq(r.status[0], NH_STEP_OK, "10 steps finish within 1 ms");
  cr_expect(isfinite(r.err[0]) && isfinite(r.wall_time[0]));
  cr_expect_eq(r.status[1], NH_RUN_TIMED_OUT);
  for (int i = 0; i < NH_WP_NORMS; i++) cr_expect(isnan(r.err[NH_WP_NORMS + i]), "timed out: error %d NaN", i);
  cr_expect(isnan(r.wall_time[1]), "timed out: no median");
  cr_expect(r.wall_times[3] >= 1e-3 && r.wall_times[3] < 0.5, "stopped after %g s", r.wall_times[3]);
  cr_expect(isnan(r.wall_times[4]) && isnan(r.wall_times[5]), "no repeats after a time-out");
  cr_expect(r.cost[1].steps > 0 && r.cost[1].steps < 10000000ull, "stopped part-way: %llu steps", r.cost[1].steps);
  cr_expect(r.pareto_work[0] == 1 && r.pareto_work[1] == 0 && r.pareto_time[1] == 0);
  cr_expect(elapsed < 1.0, "the sweep did not wait for the long run: %g s", elapsed);
  nh_work_precision_result_free(&r);
  test_hand_study_release(&st);
}

/* Errors at T in all six norms equal the norms of (q, v)(T) − exact, computed here from a run made
 * here; the cost equals that run's counters and work is rhs + Jacobian + constraint evaluations.
 * Chaotic particle (rk8pd reference) with an implicit method so that every counter is nonzero. */
Test(work_precision, errors_in_every_norm_and_counted_work) {
  const char *methods[] = {"nh_newmark(beta=0.1,beta2=0.1,alpha=0.5)", "rk4"};
  const double h[] = {0.1, 0.05};
  nh_study st = build("chaotic_particle", methods, 2, h, 2, 1.0, 1, 60, NH_NORM_MAX);
  nh_work_precision_result r;
  run(&st, &r);
  const int n = st.sys.n;
  nh_state ref;
  cr_assert_eq(nh_reference_solve(&st.sys, &st.ics[0], 1.0, 1e-13, &ref), 0);
  cr_expect_str_eq(r.reference.kind, "rk8pd");
  /* a given tolerance is kept; its error is estimated against a run 100 times tighter */
  nh_state check;
  cr_assert_eq(nh_reference_solve(&st.sys, &st.ics[0], 1.0, 1e-15, &check), 0);
  double e = 0;
  for (int i = 0; i < n; i++) {
    cr_expect_eq(r.reference.x.q[i], ref.q[i]);
    cr_expect_eq(r.reference.x.v[i], ref.v[i]);
    e = fmax(e, fmax(fabs(ref.q[i] - check.q[i]), fabs(ref.v[i] - check.v[i])));
  }
  cr_expect(r.reference.tol == 1e-13 && r.reference.check_tol == 1e-15 && r.reference.error == e,
            "reference at %g, checked at %g: error %g, expected %g", r.reference.tol, r.reference.check_tol,
            r.reference.error, e);
  for (int mi = 0; mi < 2; mi++)
    for (int hi = 0; hi < 2; hi++) {
      const int c = mi * 2 + hi;
      nh_state x = st.ics[0], y;
      nh_cost cost = {0};
      cr_assert_eq(nh_method_init(st.methods[mi], &st.sys, &x, h[hi], &cost), NH_STEP_OK);
      for (long s = 0; s < lround(1.0 / h[hi]); s++) {
        cr_assert_eq(nh_method_step(st.methods[mi], &st.sys, &x, &y, h[hi], &cost), NH_STEP_OK);
        x = y;
      }
      double mq = 0, mv = 0, sq = 0, sv = 0;
      for (int i = 0; i < n; i++) {
        const double dq = x.q[i] - ref.q[i], dv = x.v[i] - ref.v[i];
        mq = fmax(mq, fabs(dq)), mv = fmax(mv, fabs(dv));
        sq += dq * dq, sv += dv * dv;
      }
      const double expected[NH_WP_NORMS] = {fmax(mq, mv), sqrt(sq + sv), mq, sqrt(sq), mv, sqrt(sv)};
      const double *e = r.err + (size_t)c * NH_WP_NORMS;
      for (int k = 0; k < NH_WP_NORMS; k++)
        cr_expect(fabs(e[k] - expected[k]) <= 1e-13 * expected[k], "%s h=%g norm %d: %.17g, expected %.17g",
                  methods[mi], h[hi], k, e[k], expected[k]);
      /* Different numbers here, so a swapped index would show: q and v parts differ, and each
       * 2-norm exceeds its max-norm ((q,v) max is one of the parts' max by definition). */
      cr_expect(fabs(mq - mv) > 1e-3 * fmax(mq, mv), "q and v max coincide");
      cr_expect(fabs(sq - sv) > 1e-3 * fmax(sq, sv), "q and v 2-norms coincide");
      for (int k = 0; k < NH_WP_NORMS; k += 2)
        cr_expect(expected[k + 1] > expected[k] * (1 + 1e-6), "2-norm %d equals max-norm %d", k + 1, k);
      cr_expect(memcmp(&r.cost[c], &cost, sizeof cost) == 0, "%s h=%g: cost differs from a run made here", methods[mi],
                h[hi]);
      cr_expect_eq(r.work[c], (double)(cost.rhs_evals + cost.jacobian_evals + cost.constraint_evals));
      cr_expect(cost.rhs_evals > 0 && cost.constraint_evals > 0);
      if (mi == 0) cr_expect(cost.jacobian_evals > 0 && cost.newton_iterations > 0, "Newton counted");
    }
  nh_work_precision_result_free(&r);
  test_hand_study_release(&st);
}

/* The marks in a real sweep equal a brute-force dominance check made here in the study norm
 * (column 1 for the 2-norm); counted work, errors and marks against work do not depend on the
 * thread count. */
Test(work_precision, pareto_marks_and_thread_independence) {
  const char *methods[] = {"rk4", "nh_newmark(alpha=0.5)", "adjoint_pair(nh_newmark(alpha=0))", "nh_rattle"};
  const double h[] = {0.2, 0.1, 0.05};
  nh_study st = build("chaotic_particle", methods, 4, h, 3, 2.0, 1, 60, NH_NORM_2);
  nh_work_precision_result a, b;
  omp_set_num_threads(1);
  run(&st, &a);
  omp_set_num_threads(2);
  run(&st, &b);
  const int cells = 12;
  int efficient = 0;
  for (int i = 0; i < cells; i++) {
    const double ei = a.err[i * NH_WP_NORMS + 1];
    int dominated = 0, dominated_t = 0;
    for (int j = 0; j < cells; j++) {
      const double ej = a.err[j * NH_WP_NORMS + 1];
      if (j == i) continue;
      if (ej <= ei && a.work[j] <= a.work[i] && (ej < ei || a.work[j] < a.work[i])) dominated = 1;
      if (ej <= ei && a.wall_time[j] <= a.wall_time[i] && (ej < ei || a.wall_time[j] < a.wall_time[i])) dominated_t = 1;
    }
    cr_expect_eq(a.status[i], NH_STEP_OK);
    cr_expect_eq(a.pareto_work[i], !dominated, "run %d: pareto_work %d", i, a.pareto_work[i]);
    cr_expect_eq(a.pareto_time[i], !dominated_t, "run %d: pareto_time %d", i, a.pareto_time[i]);
    efficient += a.pareto_work[i];
  }
  cr_expect(efficient >= 2 && efficient < cells, "a front, not everything: %d of %d efficient", efficient, cells);
  cr_expect(memcmp(a.err, b.err, sizeof *a.err * cells * NH_WP_NORMS) == 0, "errors differ between 1 and 2 threads");
  cr_expect(memcmp(a.cost, b.cost, sizeof *a.cost * cells) == 0, "cost differs between 1 and 2 threads");
  cr_expect(memcmp(a.work, b.work, sizeof *a.work * cells) == 0, "work differs between 1 and 2 threads");
  cr_expect(memcmp(a.pareto_work, b.pareto_work, sizeof *a.pareto_work * cells) == 0);
  nh_work_precision_result_free(&a);
  nh_work_precision_result_free(&b);
  test_hand_study_release(&st);
}

/* The front uses the error in the study norm. Chaotic particle, T = 1: nh_rattle at h = 0.1 has a
 * larger max-norm error than rk4 at h = 0.5 (6.6e-3 vs 6.4e-3, measured) for more work, but a
 * smaller 2-norm error (8.2e-3 vs 1.1e-2): dominated under "max", efficient under "2". */
Test(work_precision, pareto_uses_the_study_norm) {
  const char *methods[] = {"rk4", "nh_rattle"};
  const double h[] = {0.5, 0.1};
  int marks[2];
  for (int norm = 0; norm < 2; norm++) {
    nh_study st = build("chaotic_particle", methods, 2, h, 2, 1.0, 1, 60, (nh_norm)norm);
    nh_work_precision_result r;
    run(&st, &r);
    const int rk = 0, ra = 3; /* rk4 at h = 0.5, nh_rattle at h = 0.1 */
    cr_assert(r.work[rk] < r.work[ra] && r.err[rk * NH_WP_NORMS] < r.err[ra * NH_WP_NORMS] &&
                  r.err[rk * NH_WP_NORMS + 1] > r.err[ra * NH_WP_NORMS + 1],
              "set-up no longer separates the norms: work %g %g, max %g %g, 2 %g %g", r.work[rk], r.work[ra],
              r.err[rk * NH_WP_NORMS], r.err[ra * NH_WP_NORMS], r.err[rk * NH_WP_NORMS + 1],
              r.err[ra * NH_WP_NORMS + 1]);
    marks[norm] = r.pareto_work[ra];
    nh_work_precision_result_free(&r);
    test_hand_study_release(&st);
  }
  cr_expect_eq(marks[NH_NORM_MAX], 0, "max norm: nh_rattle at h = 0.1 is dominated by rk4 at h = 0.5");
  cr_expect_eq(marks[NH_NORM_2], 1, "2-norm: nh_rattle at h = 0.1 is efficient");
}

/* reference_tol = "auto": spark(s=4)'s errors near 1e-13 tighten the rk8pd reference, and every
 * error is |x_N − x(T)| against the reference at the tolerance the result records, not the one the
 * runs started with (studies/reference.c). */
Test(work_precision, errors_against_the_tightened_reference) {
  const char *methods[] = {"spark(s=4)"};
  const double h[] = {0.05, 0.025};
  nh_study st = build("contact_oscillator", methods, 1, h, 2, 10.0, 1, 60, NH_NORM_MAX);
  st.reference_tol_auto = 1;
  nh_work_precision_result r;
  run(&st, &r);
  cr_expect(r.reference.tol < 1e-13, "tightened to %g (error %g)", r.reference.tol, r.reference.error);
  nh_state ref;
  cr_assert_eq(nh_reference_solve(&st.sys, &st.ics[0], 10.0, r.reference.tol, &ref), 0);
  for (int hi = 0; hi < 2; hi++) {
    nh_state x = st.ics[0];
    nh_cost cost = {0};
    cr_assert_eq(nh_method_init(st.methods[0], &st.sys, &x, h[hi], &cost), NH_STEP_OK);
    cr_assert_eq(nh_integrate(st.methods[0], &st.sys, &x, lround(10.0 / h[hi]), h[hi], &cost, NULL), NH_STEP_OK);
    double e = 0;
    for (int i = 0; i < st.sys.n; i++) e = fmax(e, fmax(fabs(x.q[i] - ref.q[i]), fabs(x.v[i] - ref.v[i])));
    cr_expect_eq(r.err[hi * NH_WP_NORMS], e, "h = %g: %g, by hand %g", h[hi], r.err[hi * NH_WP_NORMS], e);
  }
  cr_expect(r.reference.error <= r.err[NH_WP_NORMS] / 100 || r.reference.tol == 1e-15);
  nh_work_precision_result_free(&r);
  test_hand_study_release(&st);
}
