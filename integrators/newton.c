#include "integrators/newton.h"

#include "core/lanes.h"
#include "core/linalg.h"
#include <math.h>
#include <string.h>

#define NEWTON_MAX_ITER 50
#define NEWTON_TOL 1e-14
#define NEWTON_STAGNATION 1e-9
/* An iterate this many times larger than the initial guess has diverged: the tolerances, relative
 * to |x|, would otherwise accept a blown-up iterate (e.g. an exactly singular system). */
#define NEWTON_DIVERGED 1e6

_Static_assert(NH_NEWTON_MAX_DIM <= NH_LU_MAX_DIM, "nh_lu_solve takes every Newton system");

/* x −= δ, with the largest |δ_i| and the largest |x_i| after and before the update, each NaN if an
 * entry is (fmax would drop a NaN and let a NaN update pass as converged; it is also a libm call
 * at -O2). One pass, branch-free: the maxima compile to maxsd, and the NaN test is a sum of the
 * magnitudes, NaN exactly when one of them is (no inf − inf among terms ≥ 0). */
static void update(int dim, double *x, const double *delta, double *dx, double *xn, double *xn_before) {
  double md = 0, mx = 0, m0 = 0, s = 0;
  for (int i = 0; i < dim; i++) {
    const double c = fabs(x[i]);
    x[i] -= delta[i];
    const double a = fabs(delta[i]), b = fabs(x[i]);
    md = a > md ? a : md;
    mx = b > mx ? b : mx;
    m0 = c > m0 ? c : m0;
    s += a + b + c;
  }
  const int nan = s != s;
  *dx = nan ? NAN : md;
  *xn = nan ? NAN : mx;
  *xn_before = nan ? NAN : m0;
}

nh_step_status nh_newton_solve(int dim, double *x, nh_newton_fn fn, void *ctx, nh_cost *cost) {
  return nh_newton_solve_with(dim, x, fn, NULL, ctx, cost);
}

nh_step_status nh_newton_solve_with(int dim, double *x, nh_newton_fn fn, nh_linear_solve_fn solve, void *ctx,
                                    nh_cost *cost) {
  double F[NH_NEWTON_MAX_DIM], J[NH_NEWTON_MAX_DIM * NH_NEWTON_MAX_DIM];
  double prev = INFINITY, x0n = 0;
  for (int it = 0; it < NEWTON_MAX_ITER; it++) {
    fn(ctx, x, F, J);
    cost->jacobian_evals++;
    cost->newton_iterations++;
    /* F becomes J⁻¹F */
    if ((solve ? solve(ctx, dim, J, F) : nh_lu_solve(dim, J, F)) < 0) return NH_STEP_SOLVER_FAILED;
    cost->linear_solves++;
    double dx, xn, xb;
    update(dim, x, F, &dx, &xn, &xb);
    if (it == 0) x0n = xb; /* the size of the initial guess (taken here, not in a pass of its own) */
    /* Written so that a NaN iterate (or start) fails too. */
    if (!isfinite(dx) || !(xn <= NEWTON_DIVERGED * (1 + x0n))) return NH_STEP_SOLVER_FAILED;
    if (dx <= NEWTON_TOL * (1 + xn)) return NH_STEP_OK;
    /* No more progress, but already at round-off level for this conditioning. */
    if (dx > 0.5 * prev && dx <= NEWTON_STAGNATION * (1 + xn)) return NH_STEP_OK;
    prev = dx;
  }
  return NH_STEP_SOLVER_FAILED;
}

/* update on every lane: x −= δ where run[l] (a frozen lane keeps x), and each lane's |δ|∞, |x|∞
 * after and before, NaN as update makes them. */
static inline NH_LANES_INLINE void update_each_lanes(int dim, double *x, const double *delta, const double *run,
                                                     double *dx, double *xn, double *xb) {
  double md[NH_LANES] = {0}, mx[NH_LANES] = {0}, m0[NH_LANES] = {0}, s[NH_LANES] = {0};
  for (int i = 0; i < dim; i++) {
#pragma omp simd
    for (int l = 0; l < NH_LANES; l++) {
      const double c = fabs(x[i * NH_LANES + l]), next = x[i * NH_LANES + l] - delta[i * NH_LANES + l];
      const double a = fabs(delta[i * NH_LANES + l]), b = fabs(next);
      x[i * NH_LANES + l] = run[l] != 0 ? next : x[i * NH_LANES + l];
      md[l] = a > md[l] ? a : md[l];
      mx[l] = b > mx[l] ? b : mx[l];
      m0[l] = c > m0[l] ? c : m0[l];
      s[l] += a + b + c;
    }
  }
#pragma omp simd
  for (int l = 0; l < NH_LANES; l++) {
    const int nan = s[l] != s[l];
    dx[l] = nan ? NAN : md[l], xn[l] = nan ? NAN : mx[l], xb[l] = nan ? NAN : m0[l];
  }
}

/* Each lane's Newton state between iterations, in doubles (the lane loops' type): run[l] 1 while
 * lane l iterates, its last |δ|∞ and its |x|∞ before the first update; verdict[l] the outcome of
 * the last tests, 1 converged, 0 failed, -1 going on or not running. */
typedef struct {
  double run[NH_LANES], prev[NH_LANES], x0n[NH_LANES], verdict[NH_LANES];
} newton_lanes;

/* One iteration's update (update_each_lanes) and nh_newton_solve_with's tests after it, on every
 * lane as selects: lanes converge at different iterations (a branch per lane was mispredicted: 9 %
 * of herglotz2's step in lanes), and in one pass the maxima stay in registers for the tests. */
static inline NH_LANES_INLINE void iterate_each_lanes(int dim, int first, double *x, const double *delta,
                                                      newton_lanes *N) {
  double dx[NH_LANES], xn[NH_LANES], xb[NH_LANES];
  update_each_lanes(dim, x, delta, N->run, dx, xn, xb);
#pragma omp simd
  for (int l = 0; l < NH_LANES; l++) {
    const int on = N->run[l] != 0;
    const double x0 = on & first ? xb[l] : N->x0n[l];
    /* dx − dx == 0: dx finite (NaN for ±inf and NaN) */
    const int failed = !(dx[l] - dx[l] == 0) | !(xn[l] <= NEWTON_DIVERGED * (1 + x0));
    const int converged =
        (dx[l] <= NEWTON_TOL * (1 + xn[l])) | ((dx[l] > 0.5 * N->prev[l]) & (dx[l] <= NEWTON_STAGNATION * (1 + xn[l])));
    const int stop = failed | converged;
    N->x0n[l] = x0;
    N->verdict[l] = on & stop ? (failed ? 0 : 1) : -1;
    N->prev[l] = on & !stop ? dx[l] : N->prev[l];
    N->run[l] = on & !stop ? 1 : 0;
  }
}

/* With dim a constant for the sizes of most Newton systems here, the update's loop unrolled whole. */
static inline NH_LANES_INLINE void iterate_sized_lanes(int dim, int first, double *x, const double *delta,
                                                       newton_lanes *N) {
  switch (dim) {
  case 5:
    iterate_each_lanes(5, first, x, delta, N);
    return;
  case 6:
    iterate_each_lanes(6, first, x, delta, N);
    return;
  case 7:
    iterate_each_lanes(7, first, x, delta, N);
    return;
  case 8:
    iterate_each_lanes(8, first, x, delta, N);
    return;
  default:
    iterate_each_lanes(dim, first, x, delta, N);
  }
}
NH_LANES_ISA_VARIANTS(iterate_sized, (int dim, int first, double *x, const double *delta, newton_lanes *N),
                      (dim, first, x, delta, N))

void nh_newton_solve_lanes(int dim, double *X, nh_newton_lanes_fn fn, void *ctx, const int *live,
                           nh_step_status *status, nh_cost *cost) {
  nh_newton_solve_lanes_with(dim, X, fn, NULL, ctx, live, status, cost);
}

void nh_newton_solve_lanes_with(int dim, double *X, nh_newton_lanes_fn fn, nh_linear_solve_lanes_fn solve, void *ctx,
                                const int *live, nh_step_status *status, nh_cost *cost) {
  NH_LANES_ALIGNED double F[NH_NEWTON_MAX_DIM * NH_LANES];
  NH_LANES_ALIGNED double J[NH_NEWTON_MAX_DIM * NH_NEWTON_MAX_DIM * NH_LANES];
  newton_lanes N;
  int running[NH_LANES], singular[NH_LANES], left = 0;
  for (int l = 0; l < NH_LANES; l++) {
    running[l] = live[l], left += live[l] != 0;
    N.prev[l] = INFINITY, N.x0n[l] = 0;
    status[l] = NH_STEP_SOLVER_FAILED; /* what a lane still running after the last iteration gets */
  }
  for (int it = 0; it < NEWTON_MAX_ITER && left; it++) {
    fn(ctx, X, running, F, J);
    if (solve) solve(ctx, dim, J, F, singular);
    else nh_lanes_lu_solve(dim, J, F, singular);
    /* The counts and a singular lane's stop (SOLVER_FAILED) as sums and selects, no branch per lane. */
    for (int l = 0; l < NH_LANES; l++) {
      const int on = running[l] != 0, solved = on && !singular[l];
      cost[l].jacobian_evals += on, cost[l].newton_iterations += on, cost[l].linear_solves += solved;
      N.run[l] = solved;
    }
    iterate_sized(dim, it == 0, X, F, &N);
    left = 0;
    for (int l = 0; l < NH_LANES; l++) {
      status[l] = N.verdict[l] > 0 ? NH_STEP_OK : N.verdict[l] == 0 ? NH_STEP_SOLVER_FAILED : status[l];
      running[l] = N.run[l] != 0;
      left += running[l];
    }
  }
}

void nh_newton_constraint_rows(const nh_system *sys, const double *q, const double *c, double s, int dim, double *Fc,
                               double *Jc, double *A, nh_cost *cost) {
  const int n = sys->n, k = sys->k;
  double Aq[NH_MAX_K * NH_MAX_N], D[NH_MAX_K * NH_MAX_N];
  if (k == 0) return;
  A = A ? A : Aq;
  sys->type->constraints(sys->p, q, A);
  cost->constraint_evals++;
  for (int a = 0; a < k; a++) {
    Fc[a] = 0;
    for (int i = 0; i < n; i++) Fc[a] += A[a * n + i] * c[i];
  }
  if (!Jc) return;
  nh_constraint_derivative(sys, q, c, D); /* ∂(μ(q)c)/∂q */
  for (int a = 0; a < k; a++) {
    memset(Jc + a * dim, 0, sizeof(double) * (size_t)dim);
    for (int j = 0; j < n; j++) Jc[a * dim + j] = A[a * n + j] + s * D[a * n + j];
  }
}

int nh_newton_velocity_guess(const nh_system *sys, double t, const double *q, const double *v, double h, double *X,
                             nh_cost *cost) {
  double lambda[NH_MAX_K];
  memcpy(X, v, sizeof(double) * (size_t)sys->n);
  if (sys->k == 0) return 0;
  if (nh_multiplier(sys, t, q, v, lambda) != 0) return -1;
  cost->rhs_evals++;
  cost->constraint_evals++;
  for (int a = 0; a < sys->k; a++) X[sys->n + a] = h * lambda[a];
  return 0;
}

void nh_newton_velocity_result(const nh_system *sys, const nh_state *x, const double *X, double h, nh_state *y) {
  *y = *x;
  y->t = x->t + h;
  memcpy(y->v, X, sizeof(double) * (size_t)sys->n);
  for (int a = 0; a < sys->k; a++) y->lambda[a] = X[sys->n + a] / h;
}

int nh_newton_velocity_size(const nh_method *m NH_UNUSED, const nh_system *sys) { return sys->n + sys->k; }

void nh_newton_velocity_unknowns(const nh_method *m NH_UNUSED, const nh_system *sys, const nh_state *x NH_UNUSED,
                                 const nh_state *y, double h, double *X) {
  memcpy(X, y->v, sizeof(double) * (size_t)sys->n);
  for (int a = 0; a < sys->k; a++) X[sys->n + a] = h * y->lambda[a];
}
