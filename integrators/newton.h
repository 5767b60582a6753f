/* The shared Newton solver for the implicit methods: analytic Jacobian, LU with partial
 * pivoting (core/linalg.h) on stack storage, tolerance near round-off. */
#ifndef NH_NEWTON_H
#define NH_NEWTON_H

#include "integrators/integrator.h"

#define NH_NEWTON_MAX_DIM NH_MAX_NEWTON

/* Evaluates the residual F(x) (dim) and its Jacobian J (dim×dim, row-major) together. */
typedef void (*nh_newton_fn)(void *ctx, const double *x, double *F, double *J);

/* Solves F(x) = 0 from the initial guess in x. Stops when the Newton update is below
 * 1e-14 (1 + |x|∞) or stagnates at round-off below 1e-9. Returns NH_STEP_OK or
 * NH_STEP_SOLVER_FAILED (singular Jacobian, no convergence in 50 iterations, NaN, or an iterate
 * 1e6 times larger than the initial guess: diverged). */
nh_step_status nh_newton_solve(int dim, double *x, nh_newton_fn fn, void *ctx, nh_cost *cost);

/* Solves J d = b in place (b becomes d; J may be overwritten), exploiting a method's block
 * structure; returns 0, or -1 if J is singular. */
typedef int (*nh_linear_solve_fn)(void *ctx, int dim, double *J, double *b);
/* nh_newton_solve with the method's own linear solve (NULL: LU with partial pivoting). */
nh_step_status nh_newton_solve_with(int dim, double *x, nh_newton_fn fn, nh_linear_solve_fn solve, void *ctx,
                                    nh_cost *cost);

#endif
