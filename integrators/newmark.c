/* Classical Newmark (β, γ) (spec/newmark.md §2.1, eq. (1)) applied to the index-reduced
 * second-order ODE q̈ = Γ(t, q, q̇) = nh_acceleration: what a user who ignores the constraint
 * structure would run. With a_k = Γ(t_k, q_k, q̇_k):
 *   q_{k+1} = q_k + h q̇_k + h²[(½ − β) a_k + β a_{k+1}]
 *   q̇_{k+1} = q̇_k + h[(1 − γ) a_k + γ a_{k+1}]
 * Solved for the new acceleration a = a_{k+1} (the usual "a-form", n unknowns):
 *   F(a) = a − Γ(t_{k+1}, q̂ + h²β a, v̂ + hγ a) = 0,   q̂ = q_k + h q̇_k + h²(½−β) a_k,  v̂ = q̇_k + h(1−γ) a_k.
 * The eliminated multiplier λ(t,q,v) makes Γ depend on q̇ (and on every system term: M(q),
 * damping, forcing, affine constraints), so the method is implicit unless β = γ = 0. The Newton
 * Jacobian I − ∂Γ/∂a is taken by forward differences: an analytic ∂λ/∂(q, v) would need second
 * derivatives of M(q), A(q) and b(q) that the system interface does not provide. Newton still
 * converges to round-off, linearly at a rate of the Jacobian's O(√ε) error times h.
 *
 * For the observables it defines no multiplier and no discrete constraint (it solves an ODE). Its
 * Newton hooks expose the a-form system above: X = a_{k+1} (n unknowns; none for β = γ = 0), F as
 * above and J the solver's own forward-difference Jacobian (not analytic, for the reason above);
 * the unknowns of a result are a_{k+1} = Γ(t_{k+1}, q_{k+1}, q̇_{k+1}). Cost: each Γ evaluates ∇V
 * and, for k > 0, A(q) once (nh_acceleration), counted in rhs_evals and constraint_evals. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "integrators/integrator.h"
#include "integrators/newton.h"

enum { P_BETA, P_GAMMA, P_COUNT };

static const nh_param_desc params[] = {
    [P_BETA] = {"beta", NH_PARAM_REAL, 0.25, 0, 0.5,
     "weight of the new acceleration in the position update (spec/newmark.md 2.1, eq. (1)); 1/4: trapezoidal", 0},
    [P_GAMMA] = {"gamma", NH_PARAM_REAL, 0.5, 0, 1,
     "weight of the new acceleration in the velocity update; order 2 iff 1/2", 0},
};
_Static_assert(sizeof params / sizeof *params == P_COUNT, "params[] and the P_* enum disagree");

typedef struct {
  const nh_system *sys;
  int n;
  double t1, hb, hg; /* t_{k+1}, h²β, hγ */
  double qhat[NH_MAX_N], vhat[NH_MAX_N];
  nh_cost *cost;
} newmark_ctx;

/* Γ(t_{k+1}, q̂ + h²β a, v̂ + hγ a); -1 if the multiplier's Gram matrix is singular. */
static int acceleration_at(const newmark_ctx *C, const double *a, double *G) {
  double q[NH_MAX_N], v[NH_MAX_N];
  for (int i = 0; i < C->n; i++) {
    q[i] = C->qhat[i] + C->hb * a[i];
    v[i] = C->vhat[i] + C->hg * a[i];
  }
  C->cost->rhs_evals++;
  if (C->sys->k) C->cost->constraint_evals++;
  return nh_acceleration(C->sys, C->t1, q, v, G);
}

/* F(a) = a − Γ(a) and J = I − ∂Γ/∂a by forward differences (one Γ per column; none if J is NULL). */
static void newmark_residual(void *vctx, const double *a, double *F, double *J) {
  const newmark_ctx *C = vctx;
  const int n = C->n;
  double G[NH_MAX_N], Gj[NH_MAX_N], aj[NH_MAX_N];
  if (acceleration_at(C, a, G) != 0) {
    for (int i = 0; i < n; i++) F[i] = NAN; /* the Newton solver reports the failure */
    return;
  }
  for (int i = 0; i < n; i++) F[i] = a[i] - G[i];
  if (!J) return;
  memcpy(aj, a, sizeof(double) * (size_t)n);
  for (int j = 0; j < n; j++) {
    aj[j] = a[j] + sqrt(DBL_EPSILON) * fmax(1, fabs(a[j]));
    const double delta = aj[j] - a[j]; /* the increment actually represented */
    if (acceleration_at(C, aj, Gj) != 0) {
      for (int i = 0; i < n; i++) F[i] = NAN;
      return;
    }
    for (int i = 0; i < n; i++) J[i * n + j] = (i == j) - (Gj[i] - G[i]) / delta;
    aj[j] = a[j];
  }
}

/* The context of the step from x of size h: a_k = Γ(t_k, q_k, q̇_k) into a, and q̂, v̂. */
static int newmark_setup(const nh_method *m, const nh_system *sys, const nh_state *x, double h, newmark_ctx *C,
                         double *a, nh_cost *cost) {
  const int n = sys->n;
  const double beta = m->p[P_BETA], gamma = m->p[P_GAMMA];
  *C = (newmark_ctx){.sys = sys, .n = n, .t1 = x->t + h, .hb = h * h * beta, .hg = h * gamma, .cost = cost};
  cost->rhs_evals++;
  if (sys->k) cost->constraint_evals++;
  if (nh_acceleration(sys, x->t, x->q, x->v, a) != 0) return -1;
  for (int i = 0; i < n; i++) {
    C->qhat[i] = x->q[i] + h * x->v[i] + h * h * (0.5 - beta) * a[i];
    C->vhat[i] = x->v[i] + h * (1 - gamma) * a[i];
  }
  return 0;
}

static nh_step_status newmark_step(const nh_method *m, const nh_system *sys, const nh_state *x, nh_state *y,
                                   double h, nh_cost *cost) {
  const int n = sys->n;
  const double beta = m->p[P_BETA], gamma = m->p[P_GAMMA];
  newmark_ctx C;
  double a[NH_MAX_N];
  cost->steps++;
  if (newmark_setup(m, sys, x, h, &C, a, cost) != 0) return NH_STEP_SOLVER_FAILED;
  /* β = γ = 0 is explicit; otherwise solve for a_{k+1}, predicted by a_k. */
  if (beta != 0 || gamma != 0) {
    nh_step_status st = nh_newton_solve(n, a, newmark_residual, &C, cost);
    if (st != NH_STEP_OK) return st;
  }
  *y = *x;
  y->t = x->t + h;
  for (int i = 0; i < n; i++) {
    y->q[i] = C.qhat[i] + C.hb * a[i];
    y->v[i] = C.vhat[i] + C.hg * a[i];
  }
  return NH_STEP_OK;
}

static int newton_size(const nh_method *m, const nh_system *sys) {
  return m->p[P_BETA] == 0 && m->p[P_GAMMA] == 0 ? 0 : sys->n;
}

static void newton_eval(const nh_method *m, const nh_system *sys, const nh_state *x, double h, const double *X,
                        double *F, double *J) {
  newmark_ctx C;
  double a[NH_MAX_N];
  nh_cost unused = {0};
  if (newmark_setup(m, sys, x, h, &C, a, &unused) != 0) {
    for (int i = 0; i < sys->n; i++) F[i] = NAN;
    return;
  }
  newmark_residual(&C, X, F, J);
}

/* a_{k+1} = Γ(t_{k+1}, q_{k+1}, q̇_{k+1}) of the result: at the solution q_{k+1} = q̂ + h²β a and
 * q̇_{k+1} = v̂ + hγ a, so F vanishes there up to the rounding of those two sums. */
static void newton_unknowns(const nh_method *m NH_UNUSED, const nh_system *sys, const nh_state *x NH_UNUSED,
                            const nh_state *y, double h NH_UNUSED, double *X) {
  if (nh_acceleration(sys, y->t, y->q, y->v, X) != 0)
    for (int i = 0; i < sys->n; i++) X[i] = NAN;
}

static int is_symmetric(const nh_method *m) { return m->p[P_GAMMA] == 0.5; }

/* spec §2.1: second order iff γ = ½, otherwise only consistent. */
static int order(const nh_method *m) { return is_symmetric(m) ? 2 : 1; }

/* Reversing a step (x1 = Newmark_{−h}(x0) solved for x1) gives again the Newmark equations with
 * γ* = 1 − γ and β* = ½ + β − γ: the adjoint is Newmark(½ + β − γ, 1 − γ), when β* ∈ [0, ½].
 * (Equivalently, in the exponential form of §2.2 the adjoint swaps β and β', and γ = ½ + β − β'.) */
static int adjoint(const nh_method *m, nh_method *adj) {
  const double beta = 0.5 + m->p[P_BETA] - m->p[P_GAMMA];
  if (beta < 0 || beta > 0.5) return -1;
  *adj = *m;
  adj->p[P_BETA] = beta;
  adj->p[P_GAMMA] = 1 - m->p[P_GAMMA];
  return 0;
}

static const nh_newton_hooks newton_hooks = {newton_size, newton_eval, newton_unknowns, NULL};

const nh_integrator_type nh_integrator_newmark = {
    .name = "newmark",
    .doc = "Classical Newmark(beta, gamma) (spec/newmark.md 2.1, eq. (1)) on the index-reduced ODE "
           "qddot = Gamma(t, q, qdot) with the eliminated multiplier, ignoring the constraint structure: "
           "the constraint is not preserved. Implicit unless beta = gamma = 0: Newton on the new "
           "acceleration with a forward-difference Jacobian. Order 2 iff gamma = 1/2 (symmetric), else 1. "
           "Adjoint: newmark(beta=1/2+beta-gamma, gamma=1-gamma). For k = 0 newmark(beta=b, gamma=1/2+b-b2) "
           "equals nh_newmark(beta=b, beta2=b2) (2.2, typo A1).",
    .params = params,
    .nparams = P_COUNT,
    .properties = 0,
    .handles = NH_SYS_VARIABLE_MASS | NH_SYS_AFFINE_CONSTRAINTS | NH_SYS_DAMPING | NH_SYS_FORCING |
               NH_SYS_TIME_DAMPING | NH_SYS_TIME_POTENTIAL, /* Γ at t_k and t_{k+1}; Jacobian by differences */
    .applies_doc = "handles every system nh_acceleration handles",
    .order = order,
    .is_symmetric = is_symmetric,
    .adjoint = adjoint,
    .step = newmark_step,
    .newton = &newton_hooks,
};
