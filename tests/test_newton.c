/* integrators/newton.c, the shared Newton solver, on small systems with known answers: quadratic
 * convergence to round-off, its cost counters, and every way it must refuse (a singular Jacobian, a
 * NaN residual, divergence, no convergence). */
#include <criterion/criterion.h>
#include <math.h>

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
