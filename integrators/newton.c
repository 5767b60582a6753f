#include "integrators/newton.h"

#include "core/linalg.h"
#include <math.h>

#define NEWTON_MAX_ITER 50
#define NEWTON_TOL 1e-14
#define NEWTON_STAGNATION 1e-9
/* An iterate this many times larger than the initial guess has diverged: the tolerances, relative
 * to |x|, would otherwise accept a blown-up iterate (e.g. an exactly singular system). */
#define NEWTON_DIVERGED 1e6

_Static_assert(NH_NEWTON_MAX_DIM <= NH_LU_MAX_DIM, "nh_lu_solve takes every Newton system");

/* The largest |v_i|, NaN if any v_i is NaN (fmax would drop it and let a NaN update pass as
 * converged; it is also a libm call at -O2). Branch-free: the maximum and the NaN test are kept
 * apart, so the loop compiles to maxsd and a flag. */
static double max_abs_nan(int dim, const double *v) {
  double m = 0;
  int nan = 0;
  for (int i = 0; i < dim; i++) {
    const double a = fabs(v[i]);
    m = a > m ? a : m;
    nan |= a != a;
  }
  return nan ? NAN : m;
}

nh_step_status nh_newton_solve(int dim, double *x, nh_newton_fn fn, void *ctx, nh_cost *cost) {
  return nh_newton_solve_with(dim, x, fn, NULL, ctx, cost);
}

nh_step_status nh_newton_solve_with(int dim, double *x, nh_newton_fn fn, nh_linear_solve_fn solve, void *ctx,
                                    nh_cost *cost) {
  double F[NH_NEWTON_MAX_DIM], J[NH_NEWTON_MAX_DIM * NH_NEWTON_MAX_DIM];
  double prev = INFINITY;
  const double x0n = max_abs_nan(dim, x);
  for (int it = 0; it < NEWTON_MAX_ITER; it++) {
    fn(ctx, x, F, J);
    cost->jacobian_evals++;
    cost->newton_iterations++;
    /* F becomes J⁻¹F */
    if (solve ? solve(ctx, dim, J, F) : nh_lu_solve(dim, J, F)) return NH_STEP_SOLVER_FAILED;
    cost->linear_solves++;
    for (int i = 0; i < dim; i++) x[i] -= F[i];
    const double dx = max_abs_nan(dim, F), xn = max_abs_nan(dim, x);
    /* Written so that a NaN iterate (or start) fails too. */
    if (!isfinite(dx) || !(xn <= NEWTON_DIVERGED * (1 + x0n))) return NH_STEP_SOLVER_FAILED;
    if (dx <= NEWTON_TOL * (1 + xn)) return NH_STEP_OK;
    /* No more progress, but already at round-off level for this conditioning. */
    if (dx > 0.5 * prev && dx <= NEWTON_STAGNATION * (1 + xn)) return NH_STEP_OK;
    prev = dx;
  }
  return NH_STEP_SOLVER_FAILED;
}
