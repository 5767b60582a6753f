/* The reference a study measures its errors against and the order fit's error floor
 * (studies/reference.c, issue 46 item 8): the estimate of an rk8pd reference's error against an
 * independent tighter run, "auto" tightening to the smallest error, the floors by hand, the fit
 * with a floor per h, and a convergence study whose sixth-order errors near 1e-13 are fitted. */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <unistd.h>

#include "studies/study.h"
#include "tests/helpers.h"

/* A convergence spec of the contact oscillator (no exact solution) with `extra` settings, loaded. */
static void load_spec(const char *extra, nh_study *st) {
  char path[128], text[1024], err[1024];
  snprintf(path, sizeof path, "/tmp/nhbench-reference-%d.cfg", (int)getpid());
  snprintf(text, sizeof text,
           "study = \"convergence\";\nsystem = \"contact_oscillator\";\ninitial = \"sin_eps03\";\nT = 10.0;\n"
           "h0 = 0.2;\nhalvings = 5;\n%s",
           extra);
  test_write_file(path, text);
  const int rc = nh_study_load(path, NULL, 0, st, err, sizeof err);
  remove(path);
  cr_assert_eq(rc, 0, "%s", err);
}

static double distance_max(const nh_state *a, const nh_state *b, int n) {
  double d = 0;
  for (int i = 0; i < n; i++) d = fmax(d, fmax(fabs(a->q[i] - b->q[i]), fabs(a->v[i] - b->v[i])));
  return d;
}

/* The estimate is the max-norm distance from GSL's rk8pd run 100 times tighter, 10 times at the
 * limit 1e-15, and 100 times looser at 1e-16; an exact solution has error 0 and no check run. */
Test(reference, error_estimated_against_a_tighter_run) {
  nh_study st;
  load_spec("methods = [\"rk4\"];\n", &st);
  const double t = st.x0.t + st.T;
  const double tols[][2] = {{1e-13, 1e-15}, {1e-14, 1e-16}, {1e-15, 1e-16}, {1e-16, 1e-14}};
  for (size_t i = 0; i < sizeof tols / sizeof *tols; i++) {
    nh_study_reference ref;
    nh_state x, check;
    st.reference_tol = tols[i][0];
    cr_assert_eq(nh_study_reference_at(&st, &st.x0, t, &ref), 0);
    cr_assert_eq(nh_reference_solve(&st.sys, &st.x0, t, tols[i][0], &x), 0);
    cr_assert_eq(nh_reference_solve(&st.sys, &st.x0, t, tols[i][1], &check), 0);
    cr_expect_str_eq(ref.kind, "rk8pd");
    cr_expect(ref.tol == tols[i][0] && ref.check_tol == tols[i][1], "tol %g checked at %g", ref.tol, ref.check_tol);
    cr_expect_eq(distance_max(&ref.x, &x, st.sys.n), 0, "the reference is the run at tol");
    cr_expect_eq(ref.error, distance_max(&x, &check, st.sys.n), "tol %g", tols[i][0]);
    cr_expect(ref.error > 0 && ref.error < 1e-11, "tol %g: error %g", tols[i][0], ref.error);
  }
  nh_study_free(&st);

  nh_system sys = test_system("pendulum", NULL);
  nh_study ex = {.sys = sys, .reference_tol = 1e-13, .reference_tol_auto = 1};
  ex.x0 = test_preset(&sys, "rattle");
  nh_study_reference ref;
  cr_assert_eq(nh_study_reference_at(&ex, &ex.x0, 2.0, &ref), 0);
  cr_expect_str_eq(ref.kind, "exact");
  cr_expect(ref.error == 0 && isnan(ref.check_tol), "an exact solution: error %g", ref.error);
  cr_assert_eq(nh_study_reference_refine(&ex, &ex.x0, 2.0, 1e-300, &ref), 0);
  cr_expect(ref.error == 0 && ref.tol == 1e-13, "an exact solution is never tightened");
}

/* "auto" tightens tenfold at a time while the error is above the smallest error / 100, and stops
 * at 1e-15; a given tolerance is kept whatever the errors. */
Test(reference, auto_tightens_to_the_smallest_error) {
  nh_study st;
  load_spec("methods = [\"rk4\"];\n", &st);
  const double t = st.x0.t + st.T;
  nh_study_reference ref, start;
  cr_assert(st.reference_tol_auto && st.reference_tol == 1e-13);
  cr_assert_eq(nh_study_reference_at(&st, &st.x0, t, &start), 0);
  ref = start;
  cr_assert_eq(nh_study_reference_refine(&st, &st.x0, t, 100 * start.error, &ref), 0);
  cr_expect(ref.tol == 1e-13 && ref.error == start.error, "error = smallest / 100: kept at %g", ref.tol);
  ref = start;
  cr_assert_eq(nh_study_reference_refine(&st, &st.x0, t, 99 * start.error, &ref), 0);
  cr_expect(ref.tol == 1e-14, "error just above smallest / 100: one decade, to %g", ref.tol);
  cr_expect(ref.error <= 0.99 * start.error, "and more accurate: %g, was %g", ref.error, start.error);
  ref = start;
  cr_assert_eq(nh_study_reference_refine(&st, &st.x0, t, 1e-300, &ref), 0);
  cr_expect(ref.tol == 1e-15 && ref.check_tol == 1e-16, "stops at 1e-15: %g", ref.tol);
  ref = start;
  cr_assert_eq(nh_study_reference_refine(&st, &st.x0, t, NAN, &ref), 0);
  cr_expect(ref.tol == 1e-13, "no error measured: kept");
  st.reference_tol_auto = 0;
  ref = start;
  cr_assert_eq(nh_study_reference_refine(&st, &st.x0, t, 1e-300, &ref), 0);
  cr_expect(ref.tol == 1e-13 && ref.error == start.error, "a given tolerance is kept");
  nh_study_free(&st);
}

/* The floors by hand: given, max(error_floor, 10 e_ref); auto, max(10 e_ref, N eps |x|). */
Test(reference, error_floors_by_hand) {
  nh_study st = {.error_floor = 1e-11};
  cr_expect_eq(nh_error_floor(&st, 1e-13, 4.0, 400), 1e-11);
  cr_expect_eq(nh_error_floor(&st, 2e-12, 4.0, 400), 10 * 2e-12);
  st.error_floor_auto = 1;
  cr_expect_eq(nh_error_floor(&st, 0, 4.0, 400), 400 * DBL_EPSILON * 4.0);
  cr_expect_eq(nh_error_floor(&st, 0, 4.0, 1), DBL_EPSILON * 4.0);
  cr_expect_eq(nh_error_floor(&st, 0, 4.0, 0.25), DBL_EPSILON * 4.0, "at least one step");
  cr_expect_eq(nh_error_floor(&st, 1e-13, 4.0, 400), 10 * 1e-13, "10 e_ref above the round-off 3.6e-13");
  cr_expect_eq(nh_error_floor(&st, 1e-15, 4.0, 400), 400 * DBL_EPSILON * 4.0);
  const double x[4] = {3, -4, 0, 0};
  st.norm = NH_NORM_2;
  cr_expect_eq(nh_state_norm(st.norm, 4, x), 5);
  st.norm = NH_NORM_MAX;
  cr_expect_eq(nh_state_norm(st.norm, 4, x), 4);
}

/* A floor per h: the point at h[i] must lie above floors[i], each its own. */
Test(reference, fit_with_a_floor_per_step_size) {
  const double h[4] = {0.1, 0.05, 0.025, 0.0125};
  const double e[4] = {1e-4, 1.25e-5, 1.5625e-6, 1e-9}; /* order 3, then a point at round-off */
  double p, se;
  int first, count;
  const double low[4] = {1e-12, 1e-12, 1e-12, 1e-12}, mid[4] = {1e-12, 1e-12, 1e-12, 1e-9};
  cr_assert_eq(nh_fit_order_floors(4, h, e, 3, low, &p, &se, &first, &count), 0);
  cr_expect(first == 3 && count == 3, "1e-9 > 1e-12: the finest point is fitted (%d, %d)", first, count);
  cr_assert_eq(nh_fit_order_floors(4, h, e, 3, mid, &p, &se, &first, &count), 0);
  cr_expect(first == 2 && count == 3 && fabs(p - 3) < 1e-12, "1e-9 is not above its own floor 1e-9: %d %d %g",
            first, count, p);
  const double high0[4] = {1e-3, 1e-12, 1e-12, 1e-9};
  cr_assert_eq(nh_fit_order_floors(4, h, e, 3, high0, &p, &se, &first, &count), 0);
  cr_expect(first == 2 && count == 2, "h[0]'s own floor leaves two points: %d %d", first, count);
}

/* spark(s=4) on the contact oscillator: its errors at h = 0.025 are ~2.6e-13, below the old fixed
 * floor 1e-11 and 25 times the error of a 1e-13 reference. With "auto" the reference is tightened
 * (its error at most the smallest error / 100 or at 1e-15), the floor follows the run, and the fit
 * reaches h = 0.025 with order 6. Every error is |x_N − reference|, the reference the rk8pd run at
 * the tolerance the file records; lambda_err is measured against that tolerance too. */
Test(reference, sixth_order_errors_near_round_off_are_fitted) {
  nh_study st;
  char err[1024];
  load_spec("methods = [\"spark(s=4)\", \"nh_rattle\", \"triple_jump(nh_rattle)\"];\n", &st);
  nh_convergence_result r;
  cr_assert_eq(nh_run_convergence(&st, &r, err, sizeof err), 0, "%s", err);
  const int n = st.sys.n, nh = st.nh;
  double smallest = INFINITY;
  for (int c = 0; c < 3 * nh; c++) smallest = fmin(smallest, r.err[c]);
  cr_expect(r.reference.error <= smallest / 100 || r.reference.tol == 1e-15, "reference error %g, smallest %g",
            r.reference.error, smallest);
  cr_expect(r.reference.tol < 1e-13, "tightened: %g", r.reference.tol);
  nh_state x;
  cr_assert_eq(nh_reference_solve(&st.sys, &st.x0, st.x0.t + st.T, r.reference.tol, &x), 0);
  cr_expect_eq(distance_max(&x, &r.reference.x, n), 0);
  for (int c = 0; c < 3 * nh; c++) {
    double e = 0;
    for (int i = 0; i < n; i++)
      e = fmax(e, fmax(fabs(r.final_state[c * 2 * n + i] - x.q[i]), fabs(r.final_state[c * 2 * n + n + i] - x.v[i])));
    cr_expect_eq(r.err[c], e, "cell %d", c);
  }
  /* the floor of each run: its base steps, N = T/h for spark, 3N for the triple jump's sub-steps */
  const double size = nh_study_reference_norm(&st, &r.reference.x);
  for (int hi = 0; hi < nh; hi++) {
    const double N = round(st.T / st.h[hi]);
    cr_expect_eq(r.cost[hi].steps, (unsigned long long)N);
    cr_expect_eq(r.cost[2 * nh + hi].steps, (unsigned long long)(3 * N));
    cr_expect_eq(r.fit_floor[hi], fmax(10 * r.reference.error, N * DBL_EPSILON * size));
    cr_expect_eq(r.fit_floor[2 * nh + hi], fmax(10 * r.reference.error, 3 * N * DBL_EPSILON * size));
  }
  cr_expect(fabs(r.order[0] - 6) <= 0.15 && st.h[r.fit_first[0]] == 0.025, "spark(s=4): %g down to h = %g",
            r.order[0], st.h[r.fit_first[0]]);
  /* nh_rattle's λ_N against λ(t*) of the reference at the recorded tolerance, t* its multiplier time */
  const int last = nh + nh - 1;
  const double h = st.h[nh - 1], tN = st.x0.t + st.T;
  nh_state y = st.x0, ref_t;
  nh_cost cost = {0};
  cr_assert_eq(nh_method_init(st.methods[1], &st.sys, &y, h, &cost), NH_STEP_OK);
  cr_assert_eq(nh_integrate(st.methods[1], &st.sys, &y, lround(st.T / h), h, &cost, NULL), NH_STEP_OK);
  const double ts = nh_method_multiplier_time(st.methods[1], tN - h, tN);
  double lam[NH_MAX_K], d = 0;
  cr_assert_eq(nh_reference_solve(&st.sys, &st.x0, ts, r.reference.tol, &ref_t), 0);
  cr_assert_eq(nh_multiplier(&st.sys, ts, ref_t.q, ref_t.v, lam), 0);
  cr_assert(st.sys.k > 0);
  for (int a = 0; a < st.sys.k; a++) d = fmax(d, fabs(y.lambda[a] - lam[a]));
  cr_expect_eq(r.lambda_err[last], d, "lambda_err %g, by hand %g", r.lambda_err[last], d);
  nh_convergence_result_free(&r);
  nh_study_free(&st);
}
