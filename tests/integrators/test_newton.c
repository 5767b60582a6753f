/* integrators/newton.c, the shared Newton solver, on small systems with known answers: quadratic
 * convergence to round-off, its cost counters, and every way it must refuse (a singular Jacobian, a
 * NaN residual, divergence, no convergence). */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "integrators/newton.h"

/* x² + y² = 4, x = y: the root (√2, √2) from (1, 2). */
static void circle_line(void *ctx, const double *x, double *F, double *J) {
  (void)ctx;
  F[0] = x[0] * x[0] + x[1] * x[1] - 4;
  F[1] = x[0] - x[1];
  J[0] = 2 * x[0], J[1] = 2 * x[1], J[2] = 1, J[3] = -1;
}

Test(newton, converges_to_round_off_and_counts) {
  double x[2] = {1, 2};
  nh_cost cost = {0};
  cr_assert_eq(nh_newton_solve(2, x, circle_line, NULL, &cost), NH_STEP_OK);
  cr_expect(fabs(x[0] - sqrt(2)) <= 4e-16 && fabs(x[1] - sqrt(2)) <= 4e-16, "(%.17g, %.17g)", x[0], x[1]);
  /* Quadratic convergence: |e| 0.6 → ~0.1 → ~4e-3 → ~5e-6 → ~1e-11 → round-off, then the
   * stopping step: 5 to 7 iterations, not the dozens of a linear rate. */
  cr_expect(cost.newton_iterations >= 4 && cost.newton_iterations <= 7, "%llu iterations", cost.newton_iterations);
  cr_expect(cost.jacobian_evals == cost.newton_iterations && cost.linear_solves == cost.newton_iterations);
}

/* F = (x + y, 2x + 2y): a singular Jacobian everywhere. */
static void singular(void *ctx, const double *x, double *F, double *J) {
  (void)ctx;
  F[0] = x[0] + x[1] - 1, F[1] = 2 * x[0] + 2 * x[1] - 3;
  J[0] = 1, J[1] = 1, J[2] = 2, J[3] = 2;
}

/* A residual that turns NaN while the Jacobian stays finite and regular. */
static void nan_residual(void *ctx, const double *x, double *F, double *J) {
  (void)ctx;
  F[0] = x[0] < 0.5 ? NAN : x[0] - 0.25;
  J[0] = 1;
}

/* atan(x) = 0 from x0 = 3: Newton's iterates grow without bound. */
static void arctangent(void *ctx, const double *x, double *F, double *J) {
  (void)ctx;
  F[0] = atan(x[0]);
  J[0] = 1 / (1 + x[0] * x[0]);
}

/* x² + 1 = 0 has no real root: the iterates wander forever. */
static void no_root(void *ctx, const double *x, double *F, double *J) {
  (void)ctx;
  F[0] = x[0] * x[0] + 1;
  J[0] = 2 * x[0];
}

/* x⁵ = 0: a root of multiplicity 5, where Newton converges only linearly (x ← 4x/5): from 1 it
 * would need about 85 iterations to stop, so it fails after exactly the solver's 50, each with
 * one Jacobian and one solve counted. */
static void fifth_power(void *ctx, const double *x, double *F, double *J) {
  (void)ctx;
  F[0] = pow(x[0], 5);
  J[0] = 5 * pow(x[0], 4);
}

Test(newton, gives_up_after_fifty_iterations) {
  double x[1] = {1};
  nh_cost cost = {0};
  cr_expect_eq(nh_newton_solve(1, x, fifth_power, NULL, &cost), NH_STEP_SOLVER_FAILED);
  cr_expect_eq(cost.newton_iterations, 50);
  cr_expect(cost.jacobian_evals == 50 && cost.linear_solves == 50);
  cr_expect(fabs(x[0] - pow(0.8, 50)) <= 1e-12 * pow(0.8, 50), "x = %.17g, (4/5)^50 = %.17g", x[0], pow(0.8, 50));
}

Test(newton, refuses_singular_nan_divergent_and_rootless) {
  nh_cost cost = {0};
  double a[2] = {0, 0};
  cr_expect_eq(nh_newton_solve(2, a, singular, NULL, &cost), NH_STEP_SOLVER_FAILED, "singular Jacobian");
  double b[1] = {1};
  cr_expect_eq(nh_newton_solve(1, b, nan_residual, NULL, &cost), NH_STEP_SOLVER_FAILED, "NaN residual");
  double c[1] = {3};
  cr_expect_eq(nh_newton_solve(1, c, arctangent, NULL, &cost), NH_STEP_SOLVER_FAILED, "diverging iterates");
  double d[1] = {0.7};
  cost = (nh_cost){0};
  cr_expect_eq(nh_newton_solve(1, d, no_root, NULL, &cost), NH_STEP_SOLVER_FAILED, "no root");
  double g[2] = {NAN, 1};
  cr_expect_eq(nh_newton_solve(2, g, circle_line, NULL, &cost), NH_STEP_SOLVER_FAILED, "NaN start");
  /* Control: the same atan from x0 = 1 converges (to 0, well inside the basin |x0| < 1.39). */
  double e[1] = {1};
  cr_expect_eq(nh_newton_solve(1, e, arctangent, NULL, &cost), NH_STEP_OK);
  cr_expect(fabs(e[0]) <= 1e-15, "atan root %.3e", e[0]);
}

/* ---- the stopping rules at their boundaries ---------------------------------------------------
 * F(x) = x − t_it with J = 1: every Newton update lands exactly on the target of its iteration,
 * x_{it+1} = t_it, so the sequence of updates |dx_it| = |x_it − t_it| is chosen by hand and each
 * rule of nh_newton_solve (newton.h) can be put just inside or just outside its threshold:
 *   converged:  dx ≤ 1e-14 (1 + |x|∞);
 *   stagnated:  dx > ½ dx_prev and dx ≤ 1e-9 (1 + |x|∞);
 *   diverged:   |x|∞ > 1e6 (1 + |x_0|∞). */
typedef struct {
  const double *target;
  int count; /* the last target repeats */
  int calls;
} scripted;

static void scripted_fn(void *ctx, const double *x, double *F, double *J) {
  scripted *s = ctx;
  const int it = s->calls < s->count ? s->calls : s->count - 1;
  s->calls++;
  F[0] = x[0] - s->target[it];
  J[0] = 1;
}

static nh_step_status run_scripted(double x0, const double *target, int count, double *x, nh_cost *cost) {
  scripted s = {target, count, 0};
  *cost = (nh_cost){0};
  x[0] = x0;
  return nh_newton_solve(1, x, scripted_fn, &s, cost);
}

/* Round-off noise ±ε around c = 1000 that never settles below the tolerance 1e-14·1001 ≈ 1e-11:
 * with ε = 1e-10 the updates 1, 2ε, 2ε, … stagnate (2ε > ½·2ε) under 1e-9·1001, accepted on the
 * third iteration; with 2ε just above 1e-9·1001 (ε = 5.0075e-7: 2ε = 1.0015e-6) they are not,
 * and the solver gives up after its 50 iterations. */
Test(newton, stagnation_accepted_below_1e_9_relative_only) {
  enum { COUNT = 60 };
  double small[COUNT], large[COUNT], x[1];
  for (int i = 0; i < COUNT; i++) {
    small[i] = 1000 + (i % 2 ? -1e-10 : 1e-10);
    large[i] = 1000 + (i % 2 ? -5.0075e-7 : 5.0075e-7);
  }
  nh_cost cost;
  cr_expect_eq(run_scripted(1001, small, COUNT, x, &cost), NH_STEP_OK, "noise 1e-10 at |x| = 1000 is round-off");
  cr_expect_eq(cost.newton_iterations, 3);
  cr_expect(cost.jacobian_evals == 3 && cost.linear_solves == 3, "%llu Jacobians, %llu solves", cost.jacobian_evals,
            cost.linear_solves);
  cr_expect(fabs(x[0] - 1000) <= 2e-10, "x = %.17g", x[0]);
  cr_expect_eq(run_scripted(1001, large, COUNT, x, &cost), NH_STEP_SOLVER_FAILED,
               "updates 1.0015e-6 > 1e-9 (1 + 1000) accepted as stagnation");
  cr_expect_eq(cost.newton_iterations, 50);
}

/* Updates that shrink by a fixed ratio r around c = 1000, t_it = c + ε(−r)^it (ε = 1e-8), so
 * dx_it = ε r^(it−1) (1 + r) for it ≥ 1. r = 0.6 > ½ is stagnation, accepted at it = 2 (dx = 9.6e-9
 * ≤ 1.001e-6): 3 iterations. r = 0.4 < ½ is still converging: the solver goes on until
 * 1.4e-8 · 0.4^(it−1) ≤ 1e-14 · 1001, first at it − 1 = 8 (9.2e-12; at 7, 2.3e-11): 10 iterations. */
Test(newton, stagnation_needs_updates_above_half_the_previous) {
  enum { COUNT = 60 };
  double fast[COUNT], slow[COUNT], x[1];
  for (int i = 0; i < COUNT; i++) {
    fast[i] = 1000 + 1e-8 * pow(-0.4, i);
    slow[i] = 1000 + 1e-8 * pow(-0.6, i);
  }
  nh_cost cost;
  cr_expect_eq(run_scripted(1001, slow, COUNT, x, &cost), NH_STEP_OK);
  cr_expect_eq(cost.newton_iterations, 3, "ratio 0.6: %llu iterations", cost.newton_iterations);
  cr_expect_eq(run_scripted(1001, fast, COUNT, x, &cost), NH_STEP_OK);
  cr_expect_eq(cost.newton_iterations, 10, "ratio 0.4: %llu iterations", cost.newton_iterations);
  cr_expect(fabs(x[0] - 1000) <= 1e-11, "x = %.17g", x[0]);
}

/* Near zero the tolerance is absolute: after an update of 1, an update of 0.9e-14 ≤ 1e-14 (1 + ~0)
 * stops (2 iterations); one of 1.1e-14 does not, and the next, 0, does (3 iterations). */
Test(newton, convergence_tolerance_absolute_near_zero) {
  double x[1];
  nh_cost cost;
  const double below[] = {0, 0.9e-14};
  cr_expect_eq(run_scripted(1, below, 2, x, &cost), NH_STEP_OK);
  cr_expect_eq(cost.newton_iterations, 2, "update 0.9e-14: %llu iterations", cost.newton_iterations);
  const double above[] = {0, 1.1e-14};
  cr_expect_eq(run_scripted(1, above, 2, x, &cost), NH_STEP_OK);
  cr_expect_eq(cost.newton_iterations, 3, "update 1.1e-14: %llu iterations", cost.newton_iterations);
}

/* Divergence is measured against the initial guess: from x0 = 1 an iterate of 1.999e6 ≤ 1e6 (1 + 1)
 * is kept (and the next update lands on it again, converged), 2.001e6 is refused at once. */
Test(newton, divergence_bound_relative_to_the_initial_guess) {
  double x[1];
  nh_cost cost;
  const double inside[] = {1.999e6}, outside[] = {2.001e6};
  cr_expect_eq(run_scripted(1, inside, 1, x, &cost), NH_STEP_OK);
  cr_expect_eq(cost.newton_iterations, 2);
  cr_expect_eq(x[0], 1.999e6);
  cr_expect_eq(run_scripted(1, outside, 1, x, &cost), NH_STEP_SOLVER_FAILED);
  cr_expect_eq(cost.newton_iterations, 1);
  /* The bound is the initial guess's, not a later iterate's: from x0 = 1 through 1.5e6 (inside),
   * a step to 2.5e6 is outside 1e6 (1 + 1) although it is inside 1e6 (1 + 1.5e6). */
  const double through[] = {1.5e6, 2.5e6};
  cr_expect_eq(run_scripted(1, through, 2, x, &cost), NH_STEP_SOLVER_FAILED);
  cr_expect_eq(cost.newton_iterations, 2);
}

/* ---- in lanes: nh_newton_solve_lanes against nh_newton_solve lane by lane ---------------------- */

/* Lane l's problem: x² + c y² = r, x − s y = 0 (s = 1 on most lanes) from its own start; the lanes
 * reach their answers in different numbers of iterations, and some fail (no root, a NaN, a singular
 * Jacobian at the start, divergence). */
typedef struct {
  double r[NH_LANES], c[NH_LANES], s[NH_LANES];
} lane_problems;

static void lane_residual(const lane_problems *P, int l, const double *x, double *F, double *J) {
  F[0] = x[0] * x[0] + P->c[l] * x[1] * x[1] - P->r[l];
  F[1] = x[0] - P->s[l] * x[1];
  J[0] = 2 * x[0], J[1] = 2 * P->c[l] * x[1], J[2] = 1, J[3] = -P->s[l];
}

static int lane_of_scalar; /* the lane the scalar solver works on */

static void one_lane(void *ctx, const double *x, double *F, double *J) { lane_residual(ctx, lane_of_scalar, x, F, J); }

static int lane_evaluations[NH_LANES]; /* the running lanes' evaluations, per lane */

static void every_lane(void *ctx, const double *X, const int *running, double *F, double *J) {
  for (int l = 0; l < NH_LANES; l++) {
    double x[2] = {X[l], X[NH_LANES + l]}, f[2], j[4];
    lane_residual(ctx, l, x, f, j);
    for (int i = 0; i < 2; i++) F[i * NH_LANES + l] = f[i];
    for (int i = 0; i < 4; i++) J[i * NH_LANES + l] = j[i];
    lane_evaluations[l] += running[l] != 0;
  }
}

Test(newton, lanes_take_the_scalar_iterates_counts_and_verdicts) {
  const lane_problems P = {
      .r = {4, 9, -1, 4, NAN, 4, 4, 2},
      .c = {1, 2, 1, 1, 1, 1, 0, 1},
      .s = {1, 1, 1, 1, 1, 1, 1, -1},
  };
  /* lane 3 starts at the origin (singular), lane 5 far out (its iterates stay within the divergence
   * bound only because that bound is relative to the start), lane 6's y never enters (c = 0: fine) */
  const double start[NH_LANES][2] = {{1, 2}, {5, 0.1}, {1, 1}, {0, 0}, {1, 1}, {1e7, 1e7}, {3, -1}, {1, -2}};
  const int live[NH_LANES] = {1, 1, 1, 1, 1, 1, 1, 0}; /* lane 7 idle: untouched and uncounted */
  double X[2 * NH_LANES];
  nh_cost cost[NH_LANES] = {0};
  nh_step_status status[NH_LANES];
  for (int l = 0; l < NH_LANES; l++) X[l] = start[l][0], X[NH_LANES + l] = start[l][1];
  memset(lane_evaluations, 0, sizeof lane_evaluations);
  nh_newton_solve_lanes(2, X, every_lane, (void *)&P, live, status, cost);
  int ok = 0, failed = 0;
  for (int l = 0; l < NH_LANES; l++) {
    if (!live[l]) {
      cr_expect(X[l] == start[l][0] && X[NH_LANES + l] == start[l][1], "idle lane %d moved", l);
      cr_expect_eq(cost[l].newton_iterations, 0);
      cr_expect_eq(lane_evaluations[l], 0);
      continue;
    }
    double x[2] = {start[l][0], start[l][1]};
    nh_cost c = {0};
    lane_of_scalar = l;
    const nh_step_status st = nh_newton_solve(2, x, one_lane, (void *)&P, &c);
    cr_expect_eq(status[l], st, "lane %d: status %d, scalar %d", l, status[l], st);
    cr_expect(memcmp(&cost[l], &c, sizeof c) == 0, "lane %d: %llu iterations %llu solves, scalar %llu %llu", l,
              cost[l].newton_iterations, cost[l].linear_solves, c.newton_iterations, c.linear_solves);
    cr_expect_eq((unsigned long long)lane_evaluations[l], c.newton_iterations, "lane %d: evaluations counted", l);
    if (st == NH_STEP_OK)
      cr_expect(memcmp(&X[l], &x[0], sizeof x[0]) == 0 && memcmp(&X[NH_LANES + l], &x[1], sizeof x[1]) == 0,
                "lane %d: (%a, %a), scalar (%a, %a)", l, X[l], X[NH_LANES + l], x[0], x[1]);
    ok += st == NH_STEP_OK, failed += st != NH_STEP_OK;
  }
  cr_expect_geq(ok, 3, "lanes that converge");
  cr_expect_geq(failed, 3, "lanes that fail (no root, NaN, singular start)");
}
