/* M11: the auxiliary second-order leap-frog of the proof of Theorem 4.1 (spec/rattle.md §2.7,
 * (11a)-(11b); Ferraro, Iglesias-Ponte and Martín de Diego 2009), applied to the λ-eliminated
 * ODE (5) q̇ = M⁻¹p, ṗ = Φ(q, p), for constant M, linear constraints μ(q)q̇ = 0, no damping or
 * forcing:
 *   (11a) q_{k+1}   = q_k + h M⁻¹ p_{k+1/2}
 *   (11b) p_{k+1/2} = p_{k−1/2} + h Φ(q_k, p̄),   p̄ = (p_{k−1/2} + p_{k+1/2})/2,
 *         Φ(q, p) = −V_q − μᵀC⁻¹(μ_q[M⁻¹p, M⁻¹p] − μM⁻¹V_q),   μ, C = μM⁻¹μᵀ at q.
 * A comparison method: it integrates (5) without projection, so the constraint is not kept
 * (residual O(h²) at fixed T, §2.7 [check]); order 2 (§3.2 (i)).
 *
 * Start and output (spec §7 A8, the §2.7 [suggested] choice): p_{1/2} = p_0 + (h/2)Φ(q_0, p_0),
 * and the momentum at the nodes is the average p_k = (p_{k−1/2} + p_{k+1/2})/2.
 *
 * How the one-step interface carries the leap-frog. The state after step k is (q_k, v_k) with
 * v_k = M⁻¹p_k, and the carried v_{k+1/2} = M⁻¹p_{k+1/2}, which (11b) at node k has already
 * produced. A step (q_k, v_k, v_{k+1/2}) → (q_{k+1}, v_{k+1}, v_{k+3/2}) is (11a), then (11b) at
 * node k+1. Written in the node's average v̄ = M⁻¹p̄ = v_{k+1} (the step's output), (11b) reads
 *   F(v̄) = v̄ − v_{k+1/2} − (h/2) a(q_{k+1}, v̄) = 0,   a(q, v) = M⁻¹(−∇V + μᵀλ(q, v)),
 *   λ(q, v) = C⁻¹(μM⁻¹∇V − μ_q[v, v])   (+μᵀλ sign of nh_multiplier: minus the spec's λ of (4)),
 * and v_{k+3/2} = 2v̄ − v_{k+1/2}. So every step solves one n×n system, by Newton with the
 * analytic Jacobian J = I + (h/2) M⁻¹μᵀC⁻¹ K, K_al = ∂(μ_q[v,v])_a/∂v_l
 * = Σ_j (∂μ^a_l/∂q^j + ∂μ^a_j/∂q^l) v̄_j, from the guess 2v_{k+1/2} − v_k (an O(h²) extrapolation);
 * tolerance that of integrators/newton.c (1e-14 relative). The output at T = Nh thus looks one
 * half-step past T (p_{N+1/2}), as the average p_N requires. The state carries the h-dependent
 * v_{k+1/2}: NH_HISTORY (no compositions, no step-size changes, a step must start from init's or a
 * step's output). With k = 0, (11) is Störmer–Verlet and the step is explicit.
 *
 * What it defines (integrator.h): the multiplier λ(q_{k+1}, v_{k+1}) of (4), the one (11b) applies
 * at node k+1, left in y->lambda (init leaves λ(q_0, v_0)); it approximates λ(t_{k+1}) to O(h²).
 * No discrete constraint, energy or action (it is not variational); the Newton system above.
 * Cost per step: one ∇V, one A(q) (with its Jacobian dA) at q_{k+1}, one k×k Cholesky, and the
 * Newton iterations (each one n×n LU); init: one of each at q_0. constraint_evals counts the
 * evaluations of A(q). */
#include <math.h>
#include <string.h>

#include "integrators/integrator.h"
#include "integrators/newton.h"

/* What a step carries to the next: v_{k+1/2} = M⁻¹p_{k+1/2}. */
typedef struct {
  double v_half[NH_MAX_N];
} m11_carry;
NH_CARRY_FITS(m11_carry);
#define V_HALF(x) NH_CARRY(x, m11_carry, v_half)

/* Everything (11b) at node q needs that does not depend on the unknown v̄. */
typedef struct {
  const nh_system *sys;
  double h;
  double w[NH_MAX_N];                       /* v_{k+1/2} */
  double mg[NH_MAX_N];                      /* M⁻¹∇V(q) */
  double W[NH_MAX_N * NH_MAX_K];            /* M⁻¹μᵀ (n×k) */
  double Cinv[NH_MAX_K * NH_MAX_K];         /* C⁻¹ */
  double sigma[NH_MAX_K];                   /* C⁻¹μM⁻¹∇V */
  double dA[NH_MAX_K * NH_MAX_N * NH_MAX_N]; /* ∂μ^a_i/∂q^j */
} m11_ctx;

/* Fills c at node q (one ∇V, one A(q), dA, one k×k SPD inverse). Returns 0, or -1 if C is singular. */
static int node_setup(m11_ctx *c, const nh_system *sys, const double *q, const double *w, double h, nh_cost *cost) {
  const int n = sys->n, k = sys->k;
  double g[NH_MAX_N], A[NH_MAX_K * NH_MAX_N], C[NH_MAX_K * NH_MAX_K];
  c->sys = sys;
  c->h = h;
  memcpy(c->w, w, sizeof(double) * (size_t)n);
  sys->type->grad_potential(sys->p, q, g);
  cost->rhs_evals++;
  for (int i = 0; i < n; i++) {
    double s = 0;
    for (int j = 0; j < n; j++) s += sys->Minv[i * n + j] * g[j];
    c->mg[i] = s;
  }
  if (k == 0) return 0;
  sys->type->constraints(sys->p, q, A);
  cost->constraint_evals++;
  sys->type->constraints_jacobian(sys->p, q, c->dA);
  if (nh_constraint_gram(sys, q, A, c->W, C) != 0) return -1;
  for (int a = 0; a < k; a++)
    for (int b = 0; b < k; b++) c->Cinv[a * k + b] = a == b;
  cost->linear_solves++;
  if (nh_spd_solve_many(k, C, c->Cinv, k) != 0) return -1;
  double mu_mg[NH_MAX_K]; /* (μM⁻¹∇V)_a = Σ_i W_ia ∇V_i (M symmetric) */
  for (int a = 0; a < k; a++) {
    double s = 0;
    for (int i = 0; i < n; i++) s += c->W[i * k + a] * g[i];
    mu_mg[a] = s;
  }
  for (int a = 0; a < k; a++) {
    double s = 0;
    for (int b = 0; b < k; b++) s += c->Cinv[a * k + b] * mu_mg[b];
    c->sigma[a] = s;
  }
  return 0;
}

/* λ(q, v) = C⁻¹(μM⁻¹∇V − μ_q[v, v]) and, if K is not NULL, K_al = ∂(μ_q[v,v])_a/∂v_l. */
static void multiplier(const m11_ctx *c, const double *v, double *lambda, double *K) {
  const int n = c->sys->n, k = c->sys->k;
  double kap[NH_MAX_K];
  for (int a = 0; a < k; a++) {
    const double *D = c->dA + (size_t)a * n * n;
    double s = 0;
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++) s += D[i * n + j] * v[j] * v[i];
    kap[a] = s;
    if (K)
      for (int l = 0; l < n; l++) {
        double d = 0;
        for (int j = 0; j < n; j++) d += (D[l * n + j] + D[j * n + l]) * v[j];
        K[a * n + l] = d;
      }
  }
  for (int a = 0; a < k; a++) {
    double s = c->sigma[a];
    for (int b = 0; b < k; b++) s -= c->Cinv[a * k + b] * kap[b];
    lambda[a] = s;
  }
}

/* a(q, v) = −M⁻¹∇V + M⁻¹μᵀλ. */
static void acceleration(const m11_ctx *c, const double *lambda, double *acc) {
  const int n = c->sys->n, k = c->sys->k;
  for (int i = 0; i < n; i++) {
    double s = -c->mg[i];
    for (int a = 0; a < k; a++) s += c->W[i * k + a] * lambda[a];
    acc[i] = s;
  }
}

/* F(v̄) = v̄ − v_{k+1/2} − (h/2) a(q, v̄) and J = I + (h/2) W C⁻¹ K(v̄) (nh_newton_fn). */
static void residual(void *vctx, const double *X, double *F, double *J) {
  const m11_ctx *c = vctx;
  const int n = c->sys->n, k = c->sys->k;
  double lambda[NH_MAX_K], acc[NH_MAX_N], K[NH_MAX_K * NH_MAX_N], CK[NH_MAX_K * NH_MAX_N];
  multiplier(c, X, lambda, K);
  acceleration(c, lambda, acc);
  for (int i = 0; i < n; i++) F[i] = X[i] - c->w[i] - 0.5 * c->h * acc[i];
  if (!J) return;
  for (int a = 0; a < k; a++)
    for (int l = 0; l < n; l++) {
      double s = 0;
      for (int b = 0; b < k; b++) s += c->Cinv[a * k + b] * K[b * n + l];
      CK[a * n + l] = s;
    }
  for (int i = 0; i < n; i++)
    for (int l = 0; l < n; l++) {
      double s = i == l;
      for (int a = 0; a < k; a++) s += 0.5 * c->h * c->W[i * k + a] * CK[a * n + l];
      J[i * n + l] = s;
    }
}

/* The code base's multiplier into x->lambda. */
static void store_multiplier(const nh_system *sys, const double *lambda, nh_state *x) {
  for (int a = 0; a < sys->k; a++) x->lambda[a] = lambda[a];
}

/* p_{1/2} = p_0 + (h/2)Φ(q_0, p_0), i.e. v_{1/2} = v_0 + (h/2) a(q_0, v_0), into the carry; λ(q_0, v_0)
 * into x->lambda. */
static nh_step_status m11_init(const nh_method *m NH_UNUSED, const nh_system *sys, nh_state *x, double h,
                               nh_cost *cost) {
  m11_ctx c;
  double lambda[NH_MAX_K], acc[NH_MAX_N];
  if (node_setup(&c, sys, x->q, x->v, h, cost) != 0) return NH_STEP_SOLVER_FAILED;
  multiplier(&c, x->v, lambda, NULL);
  acceleration(&c, lambda, acc);
  for (int i = 0; i < sys->n; i++) V_HALF(x)[i] = x->v[i] + 0.5 * h * acc[i];
  store_multiplier(sys, lambda, x);
  return NH_STEP_OK;
}

/* (q_k, v_k, v_{k+1/2}) ↦ (q_{k+1}, v_{k+1}, v_{k+3/2}): (11a), then (11b) at node k+1 for
 * v̄ = v_{k+1} by Newton; v_{k+3/2} = 2v̄ − v_{k+1/2}. */
static nh_step_status m11_step(const nh_method *m NH_UNUSED, const nh_system *sys, const nh_state *x, nh_state *y,
                               double h, nh_cost *cost) {
  const int n = sys->n;
  const double *w = V_HALF(x);
  double X[NH_MAX_N], lambda[NH_MAX_K];
  m11_ctx c;
  *y = *x;
  y->t = x->t + h;
  cost->steps++;
  for (int i = 0; i < n; i++) y->q[i] = x->q[i] + h * w[i];
  if (node_setup(&c, sys, y->q, w, h, cost) != 0) return NH_STEP_SOLVER_FAILED;
  if (sys->k == 0) {
    for (int i = 0; i < n; i++) X[i] = w[i] - 0.5 * h * c.mg[i];
  } else {
    for (int i = 0; i < n; i++) X[i] = 2 * w[i] - x->v[i];
    nh_step_status st = nh_newton_solve(n, X, residual, &c, cost);
    if (st != NH_STEP_OK) return st;
  }
  multiplier(&c, X, lambda, NULL);
  for (int i = 0; i < n; i++) {
    y->v[i] = X[i];
    V_HALF(y)[i] = 2 * X[i] - w[i];
  }
  store_multiplier(sys, lambda, y);
  return NH_STEP_OK;
}

/* ---- the Newton system (integrator.h): unknowns v̄ = v_{k+1} -------------------------------- */

static int m11_newton_size(const nh_method *m NH_UNUSED, const nh_system *sys) { return sys->k > 0 ? sys->n : 0; }

static void m11_newton_eval(const nh_method *m NH_UNUSED, const nh_system *sys, const nh_state *x, double h,
                            const double *X, double *F, double *J) {
  const int n = sys->n;
  double q1[NH_MAX_N] = {0};
  nh_cost scratch = {0};
  m11_ctx c;
  for (int i = 0; i < n; i++) q1[i] = x->q[i] + h * V_HALF(x)[i];
  if (node_setup(&c, sys, q1, V_HALF(x), h, &scratch) != 0) {
    for (int i = 0; i < n; i++) F[i] = NAN;
    for (int i = 0; i < n * n; i++) J[i] = NAN;
    return;
  }
  residual(&c, X, F, J);
}

static void m11_newton_unknowns(const nh_method *m, const nh_system *sys, const nh_state *x NH_UNUSED,
                                const nh_state *y, double h NH_UNUSED, double *X) {
  /* m11_newton_size entries: none for k = 0 (the step is explicit there), where X may hold nothing. */
  memcpy(X, y->v, sizeof(double) * (size_t)m11_newton_size(m, sys));
}

static const nh_newton_hooks m11_newton = {m11_newton_size, m11_newton_eval, m11_newton_unknowns, NULL};

const nh_integrator_type nh_integrator_m11 = {
    .name = "m11",
    .doc = "Auxiliary leap-frog (11a)-(11b) of the proof of Thm 4.1 (spec/rattle.md 2.7) on the lambda-eliminated "
           "ODE (5): implicit in p_{k+1/2} through mu_q[M^-1 pbar, M^-1 pbar], solved by Newton (analytic "
           "Jacobian, n unknowns). Start p_{1/2} = p_0 + (h/2) Phi(q_0, p_0), output p_k = (p_{k-1/2} + "
           "p_{k+1/2})/2 (spec 7 A8); the state carries v_{k+1/2} = M^-1 p_{k+1/2} from step to step (two-step-like). "
           "Order 2; the constraint is not preserved (residual O(h^2)).",
    .properties = NH_HISTORY,
    .handles = 0,
    .applies_doc = "needs a constant mass matrix, linear homogeneous constraints and no damping or forcing "
                   "(spec/rattle.md 2.0)",
    .order = nh_order_2,
    /* The recurrence (11) is symmetric (k ↔ −k with h ↔ −h); as for nh_shake, the one-step map on
     * (q, v) with its history is not reversed by a single step of −h (NH_HISTORY). */
    .is_symmetric = nh_always_symmetric,
    .init = m11_init,
    .step = m11_step,
    .lambda_time = NH_LAMBDA_END,
    .lambda_doc = "lambda(q_{k+1}, v_{k+1}) of (4) at the step's output state, the multiplier (11b) applies at "
                  "node k+1 (spec/rattle.md 2.7), which approximates lambda(t_{k+1}) to O(h^2); in the +A^T "
                  "lambda sign of nh_multiplier: minus the spec's lambda",
    .newton = &m11_newton,
};
