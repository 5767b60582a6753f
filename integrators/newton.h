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

/* Lanes (core/lanes.h): F and J of every lane at X, in lane layout (X[i·NH_LANES + l],
 * J[(i·dim + j)·NH_LANES + l]); counts the evaluations of the lanes with running[l] in their costs,
 * as the scalar residual counts them. */
typedef void (*nh_newton_lanes_fn)(void *ctx, const double *X, const int *running, double *F, double *J);
/* nh_newton_solve on NH_LANES problems at once, for the lanes with live[l]: every lane takes the
 * scalar solver's iterates, stopping rule and counts (cost[l]), bit for bit; a lane that has
 * stopped is frozen while the others iterate. status[l] (live lanes): NH_STEP_OK or
 * NH_STEP_SOLVER_FAILED. */
void nh_newton_solve_lanes(int dim, double *X, nh_newton_lanes_fn fn, void *ctx, const int *live,
                           nh_step_status *status, nh_cost *cost);
/* nh_linear_solve_fn on every lane: failed[l] = 1 where it would return -1, else 0. */
typedef void (*nh_linear_solve_lanes_fn)(void *ctx, int dim, double *J, double *b, int *failed);
/* nh_newton_solve_lanes with the method's own linear solve in lanes (NULL: nh_lanes_lu_solve), as
 * nh_newton_solve_with. */
void nh_newton_solve_lanes_with(int dim, double *X, nh_newton_lanes_fn fn, nh_linear_solve_lanes_fn solve, void *ctx,
                                const int *live, nh_step_status *status, nh_cost *cost);

/* Building blocks of the velocity-form Newton systems X = [w | Λ = hλ] (js_b, mp418, nh_energy),
 * in which the constraint acts at a point q that moves with the unknown velocity, ∂q/∂w = s·I. */

/* The constraint rows of such a system: Fc[a] = μ^a(q)·c (k entries) and, when Jc is not NULL, the
 * rows Jc[a·dim + j] = μ^a_j(q) + s Σ_i ∂_j μ^a_i(q) c_i in the columns j < n of w, for the
 * constrained velocity c (whose derivative in w is the identity), zero in Λ's columns. A (k×n, may
 * be NULL) receives μ(q) for the caller's other rows. With s = 0 and Jc NULL it is a method's
 * discrete constraint μ(q)c. */
void nh_newton_constraint_rows(const nh_system *sys, const double *q, const double *c, double s, int dim, double *Fc,
                               double *Jc, double *A, nh_cost *cost);

/* The initial guess X = [v | hλ(q, v)] of such a system: the start velocity and the continuous
 * multiplier (77) (nh_multiplier) at the point q where μ acts. Returns 0, or -1 where λ is undefined. */
int nh_newton_velocity_guess(const nh_system *sys, double t, const double *q, const double *v, double h, double *X,
                             nh_cost *cost);

/* The result y of a step of size h from x with the solution X: x's other fields, t + h, v = w,
 * λ = Λ/h. The caller sets y->q. */
void nh_newton_velocity_result(const nh_system *sys, const nh_state *x, const double *X, double h, nh_state *y);

/* newton_size and newton_unknowns hooks of such a system: n + k unknowns, X = [y->v | h y->λ]. */
int nh_newton_velocity_size(const nh_method *m, const nh_system *sys);
void nh_newton_velocity_unknowns(const nh_method *m, const nh_system *sys, const nh_state *x, const nh_state *y,
                                 double h, double *X);

#endif
