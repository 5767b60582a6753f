/* An energy-preserving nonholonomic scheme of discrete-gradient type: odelab's NonHolonomicEnergy
 * (odelab/scheme/constrained.py, github.com/olivierverdier/odelab, commit ee3300c). Its
 * get_residual solves, for u = (q, v, λ) and the codistribution at the midpoint (its
 * codistribution_q), Δq = h v̄, Δv = h F̄ + μ(q̄)ᵀλ_1, Δλ = λ_1 − λ_0 − h μ(q̄)v̄ (i.e. μ(q̄)v̄ = 0),
 * with v̄ the system's average_velocity ((v_k + v_{k+1})/2 by default, odelab/system/nonholonomic)
 * and F̄ its average_force. For L = ½ vᵀMv − V(q) with constant M, μ(q)v = 0 and Λ = λ_1:
 *   (a) q_{k+1} = q_k + (h/2)(v_k + v_{k+1})
 *   (b) M(v_{k+1} − v_k) = −h ∇̄V(q_k, q_{k+1}) + μ(q̄)ᵀΛ,   q̄ = (q_k + q_{k+1})/2
 *   (c) μ(q̄)(v_k + v_{k+1}) = 0
 * odelab leaves F̄ = −∇̄V to each system: for its polynomial potentials the exact average along the
 * chord, gradient=average (the default, odelab's choice):
 *   ∇̄V = ∫₀¹ ∇V(q_k + sΔq) ds,   Δq = q_{k+1} − q_k,
 * here by 5-point Gauss–Legendre quadrature, exact for V a polynomial of degree ≤ 10 (every
 * polynomial potential of the registry has degree ≤ 4); for any other V its error is
 * O(|Δq|¹⁰ |∇¹¹V|) (≤ 1e-17 relative on the CVT's cos ξ at h = 0.1). The average is additive over
 * uncoupled blocks and keeps each quadratic part's own energy, e.g. E_y = (y² + ẏ²)/2 of the
 * contact oscillator (issue 46 item 4). gradient=midpoint is Gonzalez's midpoint discrete gradient
 * (O. Gonzalez, "Time integration and discrete Hamiltonian systems", J. Nonlinear Sci. 6 (1996)
 * 449–467), defined for every V:
 *   ∇̄V = ∇V(q̄) + [V(q_{k+1}) − V(q_k) − ∇V(q̄)·Δq] Δq / |Δq|²,
 * which satisfies ∇̄V·Δq = V(q_{k+1}) − V(q_k) exactly, is symmetric in its two points and equals
 * ∇V(q̄) + O(|Δq|²); it differs from the average by O(|Δq|²) unless V is quadratic, and couples
 * blocks through |Δq|². Both are symmetric in the two points; Δq is the step's increment
 * (h/2)(v_k + v_{k+1}), not the difference of rounded positions (issue 46 item 1).
 * Energy: with (a) and (b), ½v_{k+1}ᵀMv_{k+1} − ½v_kᵀMv_k = v̄ᵀM(v_{k+1} − v_k) = −∇̄V·Δq + Λ·μ(q̄)v̄,
 * and (c) removes the last term: E(q_{k+1}, v_{k+1}) = E(q_k, v_k) to the Newton tolerance, at any h,
 * for constant M and linear homogeneous constraints (gradient=average: where the quadrature is exact). The constraint holds at the midpoint (c), not
 * at the nodes: μ(q_k)v_k is O(h²) off zero unless μ is constant. Order 2.
 * Not declared symmetric, although (a)–(c) are invariant under (q_k, v_k) ↔ (q_{k+1}, v_{k+1}),
 * h → −h, Λ → −Λ, so that Φ_{−h} ∘ Φ_h = id: off D the map is not near the identity, since (c)
 * reflects the normal velocity, μ(q_{k+1})v_{k+1} = −μ(q_k)v_k + O(h²). A composition's sub-steps
 * leave the O(h²) node residuals of different step sizes, which then no longer cancel: the triple
 * jump of nh_energy is only of order 2 (measured, tests/integrators/test_mp418_nh_energy.c), so compositions refuse
 * it instead of claiming order 4.
 *
 * Newton on X = [v_{k+1} | Λ] (Λ = hλ keeps the Jacobian O(1)), q_{k+1} eliminated by (a), so
 * ∂q_{k+1}/∂v_{k+1} = (h/2)I, ∂q̄/∂v_{k+1} = (h/4)I; (c) is written without the ½:
 *   R1 = M(v' − v_k) + h∇̄V − μ(q̄)ᵀΛ,   R2 = μ(q̄)(v_k + v')
 *   J  = [ M + (h²/2) ∂₂∇̄V − (h/4) Σ_a Λ_a ∂μ^a(q̄)              −μ(q̄)ᵀ ]
 *        [ μ(q̄) + (h/4) Σ_i ∂_j μ_i(q̄)(v_k + v')_i                  0    ]. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "core/quadrature.h"
#include "integrators/integrator.h"
#include "integrators/newton.h"

enum { P_GRADIENT, P_COUNT };
enum { GRADIENT_AVERAGE, GRADIENT_MIDPOINT };

static const char *const gradient_choices[] = {[GRADIENT_AVERAGE] = "average", [GRADIENT_MIDPOINT] = "midpoint",
                                               NULL};

static const nh_param_desc params[] = {
    [P_GRADIENT] = {"gradient", NH_PARAM_CHOICE, GRADIENT_AVERAGE, 0, 1,
     "discrete gradient: average = the exact average of grad V along the chord (odelab's NonHolonomicEnergy; "
     "5-point Gauss-Legendre, exact for polynomial V of degree <= 10), midpoint = Gonzalez's (1996) midpoint "
     "discrete gradient",
     1, gradient_choices},
};
_Static_assert(sizeof params / sizeof *params == P_COUNT, "params[] and the P_* enum disagree");

typedef struct {
  const nh_system *sys;
  double h, V0;
  int gradient;
  const double *q0, *v0;
  nh_cost *cost;
} en_ctx;

/* The average ∫₀¹ ∇V(q0 + sΔq) ds and, when D is not NULL, its derivative in q1 = q0 + Δq,
 * D = ∫₀¹ s ∇²V(q0 + sΔq) ds, by 5-point Gauss–Legendre (core/quadrature.h). */
static void average_gradient(const en_ctx *C, const double *dq, double *dg, double *D) {
  const nh_system *sys = C->sys;
  const int n = sys->n;
  double x[NH_MAX_N], g[NH_MAX_N], H[NH_MAX_N * NH_MAX_N];
  memset(dg, 0, sizeof(double) * (size_t)n);
  if (D) memset(D, 0, sizeof(double) * (size_t)(n * n));
  for (int p = 0; p < NH_GL5_POINTS; p++) {
    for (int i = 0; i < n; i++) x[i] = C->q0[i] + nh_gl5_node[p] * dq[i];
    sys->type->grad_potential(sys->p, x, g);
    C->cost->rhs_evals++;
    for (int i = 0; i < n; i++) dg[i] += nh_gl5_weight[p] * g[i];
    if (!D) continue;
    sys->type->hess_potential(sys->p, x, H);
    for (int i = 0; i < n * n; i++) D[i] += nh_gl5_weight[p] * nh_gl5_node[p] * H[i];
  }
}

/* Gonzalez's discrete gradient dg = ∇̄V(q0, q1) (header) and, when D is not NULL, its derivative
 * D = ∂dg/∂q1 (n×n): with g = ∇V(q̄), H = ∇²V(q̄), r = V(q1) − V(q0) − g·Δq, s = |Δq|², c = r/s,
 * D = H/2 + c I + Δq ⊗ (∂r − 2cΔq)/s,  ∂r = ∇V(q1) − g − HΔq/2. Where |r| is within its own
 * rounding, 8ε(|V(q1)| + |V(q0)| + |g·Δq|), the quotient would be round-off divided by |Δq|²:
 * ∇V(q̄) is used, whose energy defect is that r. (A test on |Δq|² relative to |q̄|² switched the
 * CVT's steps to ∇V(q̄) wherever its unbounded angle was large: issue 46 item 1.) */
static void midpoint_gradient(const en_ctx *C, const double *dq, const double *q1, double *dg, double *D) {
  const nh_system *sys = C->sys;
  const int n = sys->n;
  double qb[NH_MAX_N] = {0}, H[NH_MAX_N * NH_MAX_N], g1[NH_MAX_N], dr[NH_MAX_N];
  double s = 0, gdq = 0;
  for (int i = 0; i < n; i++) {
    qb[i] = C->q0[i] + 0.5 * dq[i];
    s += dq[i] * dq[i];
  }
  sys->type->grad_potential(sys->p, qb, dg);
  C->cost->rhs_evals++;
  if (D) sys->type->hess_potential(sys->p, qb, H);
  for (int i = 0; i < n && D; i++)
    for (int j = 0; j < n; j++) D[i * n + j] = 0.5 * H[i * n + j];
  const double V1 = sys->type->potential(sys->p, q1);
  for (int i = 0; i < n; i++) gdq += dg[i] * dq[i];
  const double r = V1 - C->V0 - gdq;
  if (s == 0 || fabs(r) <= 8 * DBL_EPSILON * (fabs(V1) + fabs(C->V0) + fabs(gdq))) return;
  const double c = r / s;
  if (D) {
    sys->type->grad_potential(sys->p, q1, g1);
    C->cost->rhs_evals++;
    for (int j = 0; j < n; j++) {
      dr[j] = g1[j] - dg[j];
      for (int i = 0; i < n; i++) dr[j] -= 0.5 * H[i * n + j] * dq[i];
    }
    for (int i = 0; i < n; i++) {
      D[i * n + i] += c;
      for (int j = 0; j < n; j++) D[i * n + j] += dq[i] * (dr[j] - 2 * c * dq[j]) / s;
    }
  }
  for (int i = 0; i < n; i++) dg[i] += c * dq[i];
}

/* ∇̄V(q0, q0 + Δq) of the method's `gradient` and, when D is not NULL, its derivative in q1. */
static void discrete_gradient(const en_ctx *C, const double *dq, const double *q1, double *dg, double *D) {
  if (C->gradient == GRADIENT_AVERAGE) average_gradient(C, dq, dg, D);
  else midpoint_gradient(C, dq, q1, dg, D);
}

/* R1, R2 and (J not NULL) their Jacobian at X, as in the header. */
static void en_residual(void *vctx, const double *X, double *F, double *J) {
  const en_ctx *C = vctx;
  const nh_system *sys = C->sys;
  const int n = sys->n, k = sys->k, dim = n + k;
  const double h = C->h, *v1 = X, *Lam = X + n;
  double vs[NH_MAX_N], dq[NH_MAX_N], q1[NH_MAX_N], qb[NH_MAX_N], dg[NH_MAX_N], D[NH_MAX_N * NH_MAX_N];
  double A[NH_MAX_K * NH_MAX_N], dA[NH_MAX_K * NH_MAX_N * NH_MAX_N];
  for (int i = 0; i < n; i++) {
    vs[i] = C->v0[i] + v1[i];
    dq[i] = 0.5 * h * vs[i];
    q1[i] = C->q0[i] + dq[i];
    qb[i] = C->q0[i] + 0.25 * h * vs[i];
  }
  discrete_gradient(C, dq, q1, dg, J ? D : NULL);
  nh_newton_constraint_rows(sys, qb, vs, 0.25 * h, dim, F + n, J ? J + n * dim : NULL, A, C->cost);
  if (J && k) sys->type->constraints_jacobian(sys->p, qb, dA);
  for (int i = 0; i < n; i++) {
    F[i] = h * dg[i];
    for (int j = 0; j < n; j++) F[i] += sys->M[i * n + j] * (v1[j] - C->v0[j]);
    for (int a = 0; a < k; a++) F[i] -= A[a * n + i] * Lam[a];
    if (!J) continue;
    for (int j = 0; j < n; j++) {
      double dmu = 0; /* Σ_a Λ_a ∂_j μ^a_i(q̄) */
      for (int a = 0; a < k; a++) dmu += Lam[a] * dA[(a * n + i) * n + j];
      J[i * dim + j] = sys->M[i * n + j] + 0.5 * h * h * D[i * n + j] - 0.25 * h * dmu;
    }
    for (int a = 0; a < k; a++) J[i * dim + n + a] = -A[a * n + i];
  }
}

static void en_setup(const nh_method *m, const nh_system *sys, const nh_state *x, double h, en_ctx *C,
                     nh_cost *cost) {
  *C = (en_ctx){.sys = sys, .h = h, .gradient = (int)m->p[P_GRADIENT], .q0 = x->q, .v0 = x->v, .cost = cost};
  C->V0 = sys->type->potential(sys->p, x->q);
}

static nh_step_status en_step(const nh_method *m, const nh_system *sys, const nh_state *x, nh_state *y,
                              double h, nh_cost *cost) {
  const int n = sys->n, k = sys->k;
  en_ctx C;
  double X[NH_NEWTON_MAX_DIM], qm[NH_MAX_N];
  cost->steps++;
  en_setup(m, sys, x, h, &C, cost);
  /* Guess v' = v_k, Λ = hλ of (77) at the explicit midpoint q_k + (h/2)v_k. */
  for (int i = 0; i < n; i++) qm[i] = x->q[i] + 0.5 * h * x->v[i];
  if (nh_newton_velocity_guess(sys, x->t, qm, x->v, h, X, cost) != 0) return NH_STEP_SOLVER_FAILED;
  nh_step_status st = nh_newton_solve(n + k, X, en_residual, &C, cost);
  if (st != NH_STEP_OK) return st;
  nh_newton_velocity_result(sys, x, X, h, y);
  for (int i = 0; i < n; i++) y->q[i] = x->q[i] + 0.5 * h * (x->v[i] + X[i]); /* (a) */
  return NH_STEP_OK;
}

static void en_newton_eval(const nh_method *m, const nh_system *sys, const nh_state *x, double h,
                           const double *X, double *F, double *J) {
  nh_cost scratch = {0};
  en_ctx C;
  en_setup(m, sys, x, h, &C, &scratch);
  en_residual(&C, X, F, J);
}

/* μ(q̄)(v_k + v_{k+1})/2 with q̄ = (q_k + q_{k+1})/2: (c), at round-off after every step. */
static void en_constraint(const nh_method *m NH_UNUSED, const nh_system *sys, const nh_state *x, const nh_state *y,
                          double h NH_UNUSED, double *out) {
  double qb[NH_MAX_N], vb[NH_MAX_N];
  nh_cost scratch = {0};
  for (int i = 0; i < sys->n; i++) {
    qb[i] = 0.5 * (x->q[i] + y->q[i]);
    vb[i] = 0.5 * (x->v[i] + y->v[i]);
  }
  nh_newton_constraint_rows(sys, qb, vb, 0, 0, out, NULL, NULL, &scratch);
}

/* What the peers' codes call it (an unknown method of that name suggests it). */
static const nh_peer_name nh_energy_peers[] = {
    {"NonHolonomicEnergy", "odelab", NULL},
    {NULL},
};

static const nh_newton_hooks en_newton = {nh_newton_velocity_size, en_newton_eval, nh_newton_velocity_unknowns, NULL};

const nh_integrator_type nh_integrator_nh_energy = {
    .name = "nh_energy",
    .peer_names = nh_energy_peers,
    .doc = "Energy-preserving nonholonomic discrete-gradient scheme: "
           "q1 = q + (h/2)(v + v1), M(v1 - v) = -h gradbar V(q, q1) + mu(qbar)^T h lambda, "
           "mu(qbar)(v + v1)/2 = 0 at qbar = (q + q1)/2. gradient=average (default) is odelab's "
           "NonHolonomicEnergy, gradbar V the exact average of grad V along the chord (5-point Gauss-Legendre: "
           "exact for polynomial V of degree <= 10); gradient=midpoint is Gonzalez's (1996) midpoint discrete "
           "gradient, O(h^2) from it. Energy exact to the Newton tolerance at any h (average: where the "
           "quadrature is exact); the constraint holds at the midpoint, not at the nodes (O(h^2) there). Newton on (v1, h lambda) with the analytic Jacobian. Order 2. "
           "Phi_{-h} o Phi_h = id, but off D the step reflects mu v instead of being near the identity, so "
           "compositions do not raise its order: not declared symmetric, compositions refuse it.",
    .applies_doc = "needs a constant mass matrix, linear homogeneous constraints and no damping or forcing "
                   "(the energy identity uses all three)",
    .params = params,
    .nparams = P_COUNT,
    .order = nh_order_2,
    .step = en_step,
    .lambda_time = NH_LAMBDA_MIDPOINT,
    .lambda_doc = "lambda of (b), h mu(qbar)^T lambda at qbar = (q_k + q_{k+1})/2: approximates "
                  "lambda(t_k + h/2) only to O(h), with an error that alternates in sign from step to step "
                  "(it also undoes the reflected normal velocity; two consecutive steps' mean is far closer)",
    .discrete_constraint = en_constraint,
    .discrete_constraint_doc = "(c): mu(qbar)(v_k + v_{k+1})/2 at qbar = (q_k + q_{k+1})/2, round-off after every step",
    .newton = &en_newton,
};
