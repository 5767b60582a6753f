/* McLachlan–Perlmutter's reversible nonholonomic integrator, eq. (4.18) of R. McLachlan and
 * M. Perlmutter, "Integrators for nonholonomic mechanical systems", J. Nonlinear Sci. 16 (2006)
 * 283–328, doi:10.1007/s00332-005-0698-1, as odelab implements it (class McLachlan in
 * odelab/scheme/constrained.py, github.com/olivierverdier/odelab, commit ee3300c: its docstring
 * states the scheme, its get_residual solves it). The paper itself was not at hand; the equations
 * below are odelab's, written for L = ½ vᵀMv − V(q) with constant M (H_q(q, p) = ∇V(q), so odelab's
 * average (H_q(q_½, p0) + H_q(q_½, p1))/2 is ∇V(q_½)) and μ(q)v = 0:
 *   (a) q̄       = q_k + (h/2) v_k
 *   (b) M v_{k+1} = M v_k − h ∇V(q̄) + h μ(q̄)ᵀλ
 *   (c) q_{k+1} = q̄ + (h/2) v_{k+1}
 *   (d) μ(q_{k+1}) v_{k+1} = 0
 * Written in the original nodes q̄_k this is the nonholonomic Störmer–Verlet step: the force at the
 * node, the constraint at the midpoint of two nodes. The state (q_k, v_k) is js_b's (Q_k, W_k)
 * (spec/discretization.md §2.5): the two schemes share (a), (c), (d) and the node q̄ where μᵀλ acts,
 * and differ only in the force of (b), ∇V(q̄) here against the trapezoidal ½[∇V(Q_k) + ∇V(Q_{k+1})]
 * of (86c); the two are equal for a constant force and differ by O(h²) otherwise, so the maps differ
 * by O(h³) per step. Symmetric for js_b's reason (Φ_{−h} from (q_{k+1}, v_{k+1}) has the same q̄).
 *
 * Newton on X = [v_{k+1} | Λ = hλ] (Λ keeps the Jacobian O(1) as h → 0), q_{k+1} eliminated by (c):
 *   R1 = M v' − (M v_k − h∇V(q̄)) − μ(q̄)ᵀΛ          J = [ M                              −μ(q̄)ᵀ ]
 *   R2 = μ(q̄ + (h/2)v') v'                              [ μ(q') + (h/2) Σ_i ∂_j μ_i(q') v'_i    0 ]
 * R1 is linear: the force is fixed by the step's start. */
#include "integrators/integrator.h"
#include "integrators/newton.h"

typedef struct {
  const nh_system *sys;
  double h;
  double qbar[NH_MAX_N];            /* q̄ of (a) */
  double known[NH_MAX_N];           /* M v_k − h∇V(q̄): the part of R1 the step fixes */
  double Abar[NH_MAX_K * NH_MAX_N]; /* μ(q̄) */
  nh_cost *cost;
} mp_ctx;

/* q̄, M v_k − h∇V(q̄) and μ(q̄) for the step from x. */
static void mp_setup(const nh_system *sys, const nh_state *x, double h, mp_ctx *C, nh_cost *cost) {
  const int n = sys->n;
  double g[NH_MAX_N];
  C->sys = sys;
  C->h = h;
  C->cost = cost;
  for (int i = 0; i < n; i++) C->qbar[i] = x->q[i] + 0.5 * h * x->v[i];
  sys->type->grad_potential(sys->p, C->qbar, g);
  cost->rhs_evals++;
  nh_matvec(n, sys->M, x->v, C->known);
  for (int i = 0; i < n; i++) C->known[i] -= h * g[i];
  if (sys->k > 0) {
    sys->type->constraints(sys->p, C->qbar, C->Abar);
    cost->constraint_evals++;
  }
}

/* R1, R2 and (J not NULL) their Jacobian at X, as in the header. */
static void mp_residual(void *vctx, const double *X, double *F, double *J) {
  const mp_ctx *C = vctx;
  const nh_system *sys = C->sys;
  const int n = sys->n, k = sys->k, dim = n + k;
  const double *v1 = X, *Lam = X + n;
  double q1[NH_MAX_N];
  for (int i = 0; i < n; i++) {
    q1[i] = C->qbar[i] + 0.5 * C->h * v1[i];
    F[i] = -C->known[i];
    for (int j = 0; j < n; j++) F[i] += sys->M[i * n + j] * v1[j];
    for (int a = 0; a < k; a++) F[i] -= C->Abar[a * n + i] * Lam[a];
    if (!J) continue;
    for (int j = 0; j < n; j++) J[i * dim + j] = sys->M[i * n + j];
    for (int a = 0; a < k; a++) J[i * dim + n + a] = -C->Abar[a * n + i];
  }
  nh_newton_constraint_rows(sys, q1, v1, 0.5 * C->h, dim, F + n, J ? J + n * dim : NULL, NULL, C->cost);
}

static nh_step_status mp_step(const nh_method *m NH_UNUSED, const nh_system *sys, const nh_state *x, nh_state *y,
                              double h, nh_cost *cost) {
  const int n = sys->n, k = sys->k;
  mp_ctx C;
  double X[NH_NEWTON_MAX_DIM];
  cost->steps++;
  mp_setup(sys, x, h, &C, cost);
  /* Guess v' = v_k, Λ = hλ(q̄, v_k) of (77), as js_b (spec/discretization.md §2.5). */
  if (nh_newton_velocity_guess(sys, x->t, C.qbar, x->v, h, X, cost) != 0) return NH_STEP_SOLVER_FAILED;
  nh_step_status st = nh_newton_solve(n + k, X, mp_residual, &C, cost);
  if (st != NH_STEP_OK) return st;
  nh_newton_velocity_result(sys, x, X, h, y);
  for (int i = 0; i < n; i++) y->q[i] = C.qbar[i] + 0.5 * h * X[i]; /* (c) */
  return NH_STEP_OK;
}

static void mp_newton_eval(const nh_method *m NH_UNUSED, const nh_system *sys, const nh_state *x, double h,
                           const double *X, double *F, double *J) {
  nh_cost scratch = {0};
  mp_ctx C;
  mp_setup(sys, x, h, &C, &scratch);
  mp_residual(&C, X, F, J);
}

/* μ(q_{k+1}) v_{k+1}, (d). */
static void mp_constraint(const nh_method *m NH_UNUSED, const nh_system *sys, const nh_state *x NH_UNUSED,
                          const nh_state *y, double h NH_UNUSED, double *out) {
  nh_cost scratch = {0};
  nh_newton_constraint_rows(sys, y->q, y->v, 0, 0, out, NULL, NULL, &scratch);
}

/* What the peers' codes call it (an unknown method of that name suggests it). */
static const nh_peer_name mp418_peers[] = {
    {"McLachlan", "odelab", NULL},
    {NULL},
};

static const nh_newton_hooks mp_newton = {nh_newton_velocity_size, mp_newton_eval, nh_newton_velocity_unknowns, NULL};

const nh_integrator_type nh_integrator_mp418 = {
    .name = "mp418",
    .peer_names = mp418_peers,
    .doc = "McLachlan-Perlmutter (2006) eq. (4.18), as odelab's McLachlan scheme: qbar = q + (h/2) v, "
           "M v1 = M v - h grad V(qbar) + h mu(qbar)^T lambda, q1 = qbar + (h/2) v1, mu(q1) v1 = 0 "
           "(nonholonomic Stormer-Verlet: force at the original node qbar, constraint at the next "
           "midpoint). Same state convention as js_b, which it equals for a constant force; differs "
           "from js_b by O(h^2) otherwise. Newton on (v1, h lambda) with the analytic Jacobian. Order 2, "
           "symmetric, keeps D exactly. R. McLachlan, M. Perlmutter, J. Nonlinear Sci. 16 (2006) 283-328.",
    .properties = NH_PRESERVES_CONSTRAINT,
    .applies_doc = "needs a constant mass matrix, linear homogeneous constraints and no damping or forcing",
    .order = nh_order_2,
    .is_symmetric = nh_always_symmetric,
    .step = mp_step,
    .lambda_time = NH_LAMBDA_MIDPOINT,
    .lambda_doc = "lambda of (b), h mu(qbar)^T lambda with qbar = q_k + (h/2) v_k the original node: "
                  "approximates lambda(t_k + h/2) to O(h^2), as js_b's (tests/integrators/test_mp418_nh_energy.c)",
    .discrete_constraint = mp_constraint,
    .discrete_constraint_doc = "(d): mu(q_{k+1}) v_{k+1}, the constraint at the step's end",
    .newton = &mp_newton,
};
