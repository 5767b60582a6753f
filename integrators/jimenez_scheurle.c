/* Jiménez–Scheurle discrete Lagrange–d'Alembert schemes for simple mechanical systems
 * L = ½ vᵀMv − V(q), μ(q)v = 0 (spec/discretization.md §2.4–2.9; the paper's formulas were lost
 * in extraction, the spec's reconstructions and its §7 choices are followed):
 *   js_a      Scheme A (§2.4, (79)–(82)): ψ⁰, linearly explicit, order 1, D at the original nodes.
 *   js_b      Scheme B (§2.5, (86a)–(86d)): midpoint ψ^{1/2} on the redefined nodes (Q_k, W_k),
 *             Newton on (W_{k+1}, hλ) with the analytic Jacobian, order 2, D at the new nodes.
 *   js_p1     P1 (§2.6, (91)/(92)): Scheme A written out in closed form for the particle.
 *   js_p2new  P2 with node redefinition (§2.7, (93)–(96)): Scheme B in closed form for the particle.
 *   js_p2orig P2 at the original nodes (§2.7, (97)–(99)): keeps the deformed constraint D_h (98),
 *             not D; order 1.
 * The particle forms include the optional harmonic potential V = ½ω²(x² + y²) (§3.3): the
 * trapezoidal force is linear in the unknowns, so P2 stays closed-form.
 *
 * Observables (integrator.h; spec §6.5 "Multipliers"): every step leaves λ of its DLA equation in
 * y->lambda, in the +μᵀλ sign of the spec (§7 choice 2, = nh_multiplier's) and the scaling of
 * M(q_{k+1} − 2q_k + q_{k−1})/h² = … + μᵀλ_k, which approximates λ(t): at t_{k+1} for A, P1 and
 * P2-orig (the node where μ acts), at t_k + h/2 for B and P2-new (the original node q̄ between the
 * new nodes). Each method gives its own discrete constraint (§6.5), its L_d^α (§2.1: α = 0 for A
 * and P1, α = ½ for the P2 and B schemes), and B its Newton system (and the factors that undo its
 * Λ = hλ, newton_scaling). constraint_evals counts the evaluations of μ; the particle closed forms
 * read μ = (−y, 0, 1) inline and count each point at which they do (as rhs_evals counts their
 * inline ∇V), so P1 costs what A does. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "integrators/integrator.h"
#include "integrators/newton.h"

static const char *const constant_mass_doc =
    "needs a constant mass matrix, linear constraints and no damping or forcing (spec/discretization.md 3.1)";

/* out = M⁻¹ g for the constant mass matrix cached in sys (core/linalg.h). */
static inline void minv_apply(const nh_system *sys, const double *g, double *out) {
  nh_matvec(sys->n, sys->Minv, g, out);
}

/* ---- what the schemes define, for the observables -------------------------------------------- */

/* ΔqᵀMΔq/(2h) with Δq = q1 − q0: the kinetic part of every L_d^α. */
static double kinetic_action(const nh_system *sys, const double *q0, const double *q1, double h) {
  const int n = sys->n;
  double dq[NH_MAX_N], s = 0;
  for (int i = 0; i < n; i++) dq[i] = q1[i] - q0[i];
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) s += dq[i] * sys->M[i * n + j] * dq[j];
  return s / (2 * h);
}

/* L_d^0(q0, q1) = ΔqᵀMΔq/(2h) − h V(q0), (80). */
static double action_alpha0(const nh_method *m NH_UNUSED, const nh_system *sys, double t NH_UNUSED, const double *q0,
                            const double *q1, double h) {
  return kinetic_action(sys, q0, q1, h) - h * sys->type->potential(sys->p, q0);
}

/* L_d^{1/2}(q0, q1) = ΔqᵀMΔq/(2h) − h V((q0 + q1)/2), §2.5. */
static double action_midpoint(const nh_method *m NH_UNUSED, const nh_system *sys, double t NH_UNUSED, const double *q0,
                              const double *q1, double h) {
  double qm[NH_MAX_N];
  for (int i = 0; i < sys->n; i++) qm[i] = 0.5 * (q0[i] + q1[i]);
  return kinetic_action(sys, q0, q1, h) - h * sys->type->potential(sys->p, qm);
}

/* μ(q_k)(q_{k+1} − q_k)/h: the discrete constraint D_d of ψ⁰ (§2.4; (91) for P1). */
static void constraint_alpha0(const nh_method *m NH_UNUSED, const nh_system *sys, const nh_state *x, const nh_state *y,
                              double h, double *out) {
  const int n = sys->n;
  double A[NH_MAX_K * NH_MAX_N];
  if (sys->k == 0) return;
  sys->type->constraints(sys->p, x->q, A);
  for (int a = 0; a < sys->k; a++) {
    out[a] = 0;
    for (int i = 0; i < n; i++) out[a] += A[a * n + i] * (y->q[i] - x->q[i]) / h;
  }
}

/* μ(q + s v) v at the result's state, s = 0: (86d) μ(Q_{k+1})W_{k+1} at the new nodes (B, P2-new);
 * s = h/2: the deformed constraint (98) of P2-orig (§2.7, R14). */
static void constraint_at(const nh_system *sys, const nh_state *y, double s, double *out) {
  const int n = sys->n;
  double q[NH_MAX_N], A[NH_MAX_K * NH_MAX_N];
  if (sys->k == 0) return;
  for (int i = 0; i < n; i++) q[i] = y->q[i] + s * y->v[i];
  sys->type->constraints(sys->p, q, A);
  for (int a = 0; a < sys->k; a++) {
    out[a] = 0;
    for (int i = 0; i < n; i++) out[a] += A[a * n + i] * y->v[i];
  }
}

static void constraint_new_nodes(const nh_method *m NH_UNUSED, const nh_system *sys, const nh_state *x NH_UNUSED,
                                 const nh_state *y, double h NH_UNUSED, double *out) {
  constraint_at(sys, y, 0, out);
}

static void constraint_deformed(const nh_method *m NH_UNUSED, const nh_system *sys, const nh_state *x NH_UNUSED,
                                const nh_state *y, double h, double *out) {
  constraint_at(sys, y, 0.5 * h, out);
}

static const char *const lambda_a_doc =
    "lambda_{k+1} of (81b)/(82) (spec/discretization.md 2.4), M v_{k+1} = M v_k - h grad V(q_{k+1}) + h "
    "mu(q_{k+1})^T lambda_{k+1}: approximates lambda(t_{k+1}) to O(h) (Prop 6.1, R3)";
static const char *const lambda_b_doc =
    "lambda of (86c) (spec/discretization.md 2.5), h mu(qbar)^T lambda with qbar = Q_k + (h/2) W_k the original "
    "node: approximates lambda(t_k + h/2) to O(h^2), lambda(t_{k+1}) only to O(h) (Prop 6.2, R6, 6.5)";

/* ---- Scheme A (spec/discretization.md §2.4) -------------------------------------------------- */

/* (81a) q_{k+1} = q_k + h v_k; (81b)–(82) in the equivalent projected form (§2.4, derived):
 * v_{k+1} = P(q_{k+1})[v_k − h M⁻¹∇V(q_{k+1})], P the M-orthogonal projector onto D_{q_{k+1}}. */
static nh_step_status a_step(const nh_method *m NH_UNUSED, const nh_system *sys, const nh_state *x, nh_state *y,
                             double h, nh_cost *cost) {
  const int n = sys->n;
  double g[NH_MAX_N], a[NH_MAX_N];
  *y = *x;
  y->t = x->t + h;
  for (int i = 0; i < n; i++) y->q[i] = x->q[i] + h * x->v[i];
  sys->type->grad_potential(sys->p, y->q, g);
  minv_apply(sys, g, a);
  for (int i = 0; i < n; i++) y->v[i] = x->v[i] - h * a[i];
  cost->steps++;
  cost->rhs_evals++;
  if (sys->k == 0) return NH_STEP_OK;
  cost->linear_solves++; /* the k×k solve with C(q_{k+1}) of (82) */
  cost->constraint_evals++;
  /* The projection removes M⁻¹μᵀ y; (81b) adds h M⁻¹μᵀλ_{k+1}: λ_{k+1} = −y/h, i.e. (82). */
  double yk[NH_MAX_K];
  if (nh_project_velocity_multiplier(sys, y->q, y->v, yk) != 0) return NH_STEP_SOLVER_FAILED;
  for (int a = 0; a < sys->k; a++) y->lambda[a] = -yk[a] / h;
  return NH_STEP_OK;
}

const nh_integrator_type nh_integrator_js_a = {
    .name = "js_a",
    .doc = "Jimenez-Scheurle Scheme A (spec/discretization.md 2.4, (79)-(82)): finite-difference map "
           "psi^0, q1 = q0 + h v0, v1 = P(q1)[v0 - h M^-1 grad V(q1)] (symplectic Euler, position "
           "first, then the M-orthogonal projection onto D). Linearly explicit (one k x k solve), "
           "order 1 (Prop 6.1), keeps D exactly at the original nodes.",
    .properties = NH_PRESERVES_CONSTRAINT,
    .applies_doc = constant_mass_doc,
    .order = nh_order_1,
    .step = a_step,
    .lambda_time = NH_LAMBDA_END,
    .lambda_doc = lambda_a_doc,
    .discrete_constraint = constraint_alpha0,
    .discrete_constraint_doc = "mu(q_k)(q_{k+1} - q_k)/h, the discrete constraint of psi^0 (spec/discretization.md "
                               "2.4); q_{k+1} - q_k = h v_k, so it is the constraint of the step's start state",
    .discrete_action = action_alpha0,
};

/* ---- Scheme B (spec/discretization.md §2.5) -------------------------------------------------- */

typedef struct {
  const nh_system *sys;
  double h;
  double qbar[NH_MAX_N];            /* the original node q̄ = Q_k + (h/2)W_k (86a) */
  double known[NH_MAX_N];           /* M W_k − (h/2)∇V(Q_k): the part of R1 fixed by the step */
  double Abar[NH_MAX_K * NH_MAX_N]; /* μ(q̄), where the multiplier acts (§7 choice 4) */
  nh_cost *cost;
} b_ctx;

/* Residual and Jacobian of (86c)–(86d) with Q_{k+1} = q̄ + (h/2)W' eliminated (86b) and the
 * multiplier scaled as Λ = hλ so the Jacobian stays O(1) as h → 0 (R17); X = [W' | Λ]:
 *   R1 = M W' − known + (h/2)∇V(Q') − μ(q̄)ᵀΛ
 *   R2 = μ(Q') W'
 *   J  = [ M + (h²/4)∇²V(Q')                  −μ(q̄)ᵀ ]
 *        [ μ(Q') + (h/2) Σ_i ∂_j μ_i(Q') W'_i     0    ]   (spec §2.5, "Jacobian"). */
static void b_residual(void *vctx, const double *X, double *F, double *J) {
  const b_ctx *C = vctx;
  const nh_system *sys = C->sys;
  const int n = sys->n, k = sys->k, dim = n + k;
  const double h = C->h, *W1 = X, *Lam = X + n;
  double Q1[NH_MAX_N] = {0}, g1[NH_MAX_N], H1[NH_MAX_N * NH_MAX_N];
  for (int i = 0; i < n; i++) Q1[i] = C->qbar[i] + 0.5 * h * W1[i];
  sys->type->grad_potential(sys->p, Q1, g1);
  sys->type->hess_potential(sys->p, Q1, H1);
  C->cost->rhs_evals++;
  memset(J, 0, sizeof(double) * (size_t)(dim * dim));
  for (int i = 0; i < n; i++) {
    double r = -C->known[i] + 0.5 * h * g1[i];
    for (int j = 0; j < n; j++) {
      r += sys->M[i * n + j] * W1[j];
      J[i * dim + j] = sys->M[i * n + j] + 0.25 * h * h * H1[i * n + j];
    }
    for (int a = 0; a < k; a++) {
      r -= C->Abar[a * n + i] * Lam[a];
      J[i * dim + n + a] = -C->Abar[a * n + i];
    }
    F[i] = r;
  }
  nh_newton_constraint_rows(sys, Q1, W1, 0.5 * h, dim, F + n, J + n * dim, NULL, C->cost);
}

/* The part of (86c) that the step fixes: q̄ = Q_k + (h/2)W_k (86a), M W_k − (h/2)∇V(Q_k) and μ(q̄). */
static void b_setup(const nh_system *sys, const nh_state *x, double h, b_ctx *C, nh_cost *cost) {
  const int n = sys->n;
  double g0[NH_MAX_N];
  C->sys = sys;
  C->h = h;
  C->cost = cost;
  sys->type->grad_potential(sys->p, x->q, g0);
  cost->rhs_evals++;
  for (int i = 0; i < n; i++) {
    double MW = 0;
    for (int j = 0; j < n; j++) MW += sys->M[i * n + j] * x->v[j];
    C->qbar[i] = x->q[i] + 0.5 * h * x->v[i];
    C->known[i] = MW - 0.5 * h * g0[i];
  }
  if (sys->k > 0) {
    sys->type->constraints(sys->p, C->qbar, C->Abar);
    cost->constraint_evals++;
  }
}

/* (Q_k, W_k) → (Q_{k+1}, W_{k+1}) by (86a)–(86d); the harness state (q, v) is (Q_k, W_k). */
static nh_step_status b_step(const nh_method *m NH_UNUSED, const nh_system *sys, const nh_state *x, nh_state *y,
                             double h, nh_cost *cost) {
  const int n = sys->n, k = sys->k;
  b_ctx C;
  double X[NH_NEWTON_MAX_DIM];
  cost->steps++;
  b_setup(sys, x, h, &C, cost);
  /* Initial guess W' = W_k and hλ(q̄, W_k) from (77) (§2.5); nh_multiplier evaluates μ(q̄) once more. */
  if (nh_newton_velocity_guess(sys, x->t, C.qbar, x->v, h, X, cost) != 0) return NH_STEP_SOLVER_FAILED;
  nh_step_status st = nh_newton_solve(n + k, X, b_residual, &C, cost);
  if (st != NH_STEP_OK) return st;
  nh_newton_velocity_result(sys, x, X, h, y); /* Λ = hλ, λ at q̄ ≈ q(t_k + h/2) */
  for (int i = 0; i < n; i++) y->q[i] = C.qbar[i] + 0.5 * h * X[i]; /* (86b) */
  return NH_STEP_OK;
}

/* F and J of b_residual for the step from x: X = [W_{k+1} | hλ]. */
static void b_newton_eval(const nh_method *m NH_UNUSED, const nh_system *sys, const nh_state *x, double h,
                          const double *X, double *F, double *J) {
  nh_cost scratch = {0};
  b_ctx C;
  b_setup(sys, x, h, &C, &scratch);
  b_residual(&C, X, F, J);
}

/* X of a result: W_{k+1} = y->v and hλ from R1 = 0, μ(q̄)ᵀΛ = M W' − known + (h/2)∇V(Q'), solved in
 * the least-squares sense (exact at a solution): Λ = (μμᵀ)⁻¹ μ R1|_{Λ=0}. */
static void b_newton_unknowns(const nh_method *m NH_UNUSED, const nh_system *sys, const nh_state *x, const nh_state *y,
                              double h, double *X) {
  const int n = sys->n, k = sys->k, dim = n + k;
  nh_cost scratch = {0};
  b_ctx C;
  double F[NH_NEWTON_MAX_DIM], J[NH_NEWTON_MAX_DIM * NH_NEWTON_MAX_DIM], G[NH_MAX_K * NH_MAX_K];
  b_setup(sys, x, h, &C, &scratch);
  for (int i = 0; i < dim; i++) X[i] = i < n ? y->v[i] : 0;
  b_residual(&C, X, F, J);
  for (int a = 0; a < k; a++) {
    X[n + a] = 0;
    for (int i = 0; i < n; i++) X[n + a] += C.Abar[a * n + i] * F[i];
    for (int b = 0; b < k; b++) {
      G[a * k + b] = 0;
      for (int i = 0; i < n; i++) G[a * k + b] += C.Abar[a * n + i] * C.Abar[b * n + i];
    }
  }
  if (k > 0 && nh_spd_solve(k, G, X + n) != 0)
    for (int a = 0; a < k; a++) X[n + a] = NAN;
}

/* The spec's unscaled system (spec/discretization.md §2.5, "Unknowns per step"): the same R1, R2 in
 * (W', λ), whose λ column is −h μ(q̄)ᵀ: Λ = hλ undone by columns n … n+k−1 times h, rows as they are.
 * R17's bounded condition number is the scaled system's. */
static void b_newton_scaling(const nh_method *m NH_UNUSED, const nh_system *sys, double h, double *row, double *col) {
  for (int i = 0; i < sys->n + sys->k; i++) { /* nh_newton_velocity_size */
    row[i] = 1;
    col[i] = i < sys->n ? 1 : h;
  }
}

static const nh_newton_hooks b_newton = {nh_newton_velocity_size, b_newton_eval, b_newton_unknowns, b_newton_scaling};

const nh_integrator_type nh_integrator_js_b = {
    .name = "js_b",
    .doc = "Jimenez-Scheurle Scheme B (spec/discretization.md 2.5, (86a)-(86d)): midpoint map psi^{1/2} on "
           "the redefined nodes; the state (q, v) is (Q_k, W_k) = ((q_k + q_{k+1})/2, (q_{k+1} - q_k)/h) "
           "and the multiplier acts at the original node qbar = Q_k + (h/2) W_k. Newton on "
           "(W_{k+1}, h lambda) with the analytic Jacobian. Order 2 (Prop 6.2), symmetric, keeps D "
           "exactly at the new nodes; without constraints it is the trapezoidal rule.",
    .properties = NH_PRESERVES_CONSTRAINT,
    .applies_doc = constant_mass_doc,
    .order = nh_order_2,
    /* B and P2-new are symmetric as maps of D: Φ_{−h} from (Q', W') has the same original node
     * q̄ = Q' − (h/2)W' = Q + (h/2)W, the same trapezoidal force and the same μ(q̄)ᵀλ, and the
     * constraint (86d) of the one is the premise (Q, W) ∈ D of the other. */
    .is_symmetric = nh_always_symmetric,
    .step = b_step,
    .lambda_time = NH_LAMBDA_MIDPOINT,
    .lambda_doc = lambda_b_doc,
    .discrete_constraint = constraint_new_nodes,
    .discrete_constraint_doc = "(86d) at the new nodes: mu(Q_{k+1}) W_{k+1} (spec/discretization.md 2.5, 6.5)",
    .discrete_action = action_midpoint,
    .newton = &b_newton,
};

/* ---- The particle schemes (spec/discretization.md §2.6–2.7) ---------------------------------- */

/* The particle schemes need what the system declares by NH_CAP_PARTICLE_STRUCTURE (systems/system.h):
 * q = (x, y, z), v = (u, w, ζ), M = I, μ(q) = (−y, 0, 1), ∇V = ω²(x, y, 0) with a constant ω². */
enum { X_, Y_, Z_ };

/* ω² of the particle's harmonic potential V = ½ω²(x² + y²) (0 for the free particle): the constant
 * ∂²V/∂x² the capability promises, read from the system's Hessian. */
static double omega2(const nh_system *sys) {
  const double q[3] = {0, 0, 0};
  double H[NH_MAX_N * NH_MAX_N];
  sys->type->hess_potential(sys->p, q, H);
  return H[0];
}

/* Declines a system without the particle structure, naming the general scheme to use instead, and
 * one whose ω² is negative at its parameters (the capability promises ω² ≥ 0: a definition's
 * parameters have no range, systems/defined.c). */
static int particle_structure(const nh_method *m, const nh_system *sys, const char *general, char *err,
                              size_t errlen) {
  if (!(sys->type->capabilities & NH_CAP_PARTICLE_STRUCTURE) || sys->n != 3 || sys->k != 1) {
    snprintf(err, errlen,
             "%s is written in closed form for the nonholonomic particle zdot = y xdot "
             "(spec/discretization.md 2.6-2.7; systems declaring NH_CAP_PARTICLE_STRUCTURE); use %s for "
             "other systems",
             m->type->name, general);
    return -1;
  }
  const double w2 = omega2(sys);
  if (w2 >= 0) return 0;
  snprintf(err, errlen, "%s needs the harmonic potential's omega^2 = d2V/dx2 >= 0 (NH_CAP_PARTICLE_STRUCTURE), not %g",
           m->type->name, w2);
  return -1;
}

static int applies_like_a(const nh_method *m, const nh_system *sys, char *err, size_t errlen) {
  return particle_structure(m, sys, "js_a", err, errlen);
}

static int applies_like_b(const nh_method *m, const nh_system *sys, char *err, size_t errlen) {
  return particle_structure(m, sys, "js_b", err, errlen);
}

/* P1: (92) in velocity form, i.e. (81)/(82) for μ = (−y, 0, 1), M = I (§2.6, closed form):
 * q1 = q + h v, (ũ, w1) = (u, w) − h ω²(x1, y1), Λ = hλ = (y1 ũ − ζ)/(1 + y1²),
 * u1 = ũ − y1 Λ, ζ1 = ζ + Λ (= y1 u1). */
static nh_step_status p1_step(const nh_method *m NH_UNUSED, const nh_system *sys, const nh_state *x, nh_state *y,
                              double h, nh_cost *cost) {
  const double w2 = omega2(sys);
  *y = *x;
  y->t = x->t + h;
  for (int i = 0; i < 3; i++) y->q[i] = x->q[i] + h * x->v[i];
  const double y1 = y->q[Y_], ut = x->v[X_] - h * w2 * y->q[X_];
  const double Lam = (y1 * ut - x->v[Z_]) / (1 + y1 * y1);
  y->v[X_] = ut - y1 * Lam;
  y->v[Y_] = x->v[Y_] - h * w2 * y1;
  y->v[Z_] = x->v[Z_] + Lam;
  y->lambda[0] = Lam / h;
  cost->steps++;
  cost->rhs_evals++;
  cost->constraint_evals++; /* μ(q_{k+1}) = (−y1, 0, 1), inline */
  return NH_STEP_OK;
}

const nh_integrator_type nh_integrator_js_p1 = {
    .name = "js_p1",
    .doc = "Jimenez-Scheurle P1 for the nonholonomic particle (spec/discretization.md 2.6, (91)/(92)): "
           "discrete constraint z1 - z0 = y0 (x1 - x0), velocities (q_{k+1} - q_k)/h at the original "
           "nodes; Scheme A (js_a) in closed form, with the optional harmonic potential. Explicit, "
           "order 1, keeps D exactly. Particle only.",
    .properties = NH_PRESERVES_CONSTRAINT,
    .applies_doc = constant_mass_doc,
    .applies = applies_like_a,
    .order = nh_order_1,
    .step = p1_step,
    .lambda_time = NH_LAMBDA_END,
    .lambda_doc = "lambda_{k+1} = Lam/h of (92) in velocity form (spec/discretization.md 2.6, = js_a's): "
                  "approximates lambda(t_{k+1}) to O(h)",
    .discrete_constraint = constraint_alpha0,
    .discrete_constraint_doc = "(91): (z_{k+1} - z_k - y_k (x_{k+1} - x_k))/h (spec/discretization.md 2.6)",
    .discrete_action = action_alpha0,
};

/* Scheme B's velocity update (86c)–(86d) for the particle, solved in closed form: Q is the new
 * node Q_k, qb the original node q̄ where μ(q̄) = (−ȳ, 0, 1) acts, W = W_k. With
 * a = 1 + h²ω²/4, the trapezoidal force makes the (u, w) equations linear:
 *   w' = [w − (h/2)ω²(Y + ȳ)]/a,   Y' = ȳ + (h/2)w',   ũ = [u − (h/2)ω²(X + x̄)]/a,
 *   u' = ũ − ȳΛ/a,   ζ' = ζ + Λ,   and (86d) ζ' = Y'u' gives Λ = hλ = (Y'ũ − ζ)/(1 + Y'ȳ/a).
 * For ω = 0 this is spec §2.7's λ = (ỹ_{k+1}u_k − ζ_k)/(h(1 + ỹ_{k+1}ȳ)) (P2-new). Returns Λ. */
static double p2_velocity(double w2, double h, const double *Q, const double *qb, const double *W, double *W1) {
  const double a = 1 + 0.25 * h * h * w2;
  W1[Y_] = (W[Y_] - 0.5 * h * w2 * (Q[Y_] + qb[Y_])) / a;
  const double Y1 = qb[Y_] + 0.5 * h * W1[Y_];
  const double ut = (W[X_] - 0.5 * h * w2 * (Q[X_] + qb[X_])) / a;
  const double Lam = (Y1 * ut - W[Z_]) / (1 + Y1 * qb[Y_] / a);
  W1[X_] = ut - qb[Y_] * Lam / a;
  W1[Z_] = W[Z_] + Lam;
  return Lam;
}

/* P2-new (§2.7, (95)/(96)): q̄ = Q_k + (h/2)W_k, W_{k+1} as above, Q_{k+1} = q̄ + (h/2)W_{k+1}. */
static nh_step_status p2new_step(const nh_method *m NH_UNUSED, const nh_system *sys, const nh_state *x, nh_state *y,
                                 double h, nh_cost *cost) {
  double qb[3];
  *y = *x;
  y->t = x->t + h;
  for (int i = 0; i < 3; i++) qb[i] = x->q[i] + 0.5 * h * x->v[i];
  y->lambda[0] = p2_velocity(omega2(sys), h, x->q, qb, x->v, y->v) / h;
  for (int i = 0; i < 3; i++) y->q[i] = qb[i] + 0.5 * h * y->v[i];
  cost->steps++;
  cost->rhs_evals++;
  cost->constraint_evals += 2; /* μ(q̄) and μ(Q_{k+1}), inline */
  return NH_STEP_OK;
}

const nh_integrator_type nh_integrator_js_p2new = {
    .name = "js_p2new",
    .doc = "Jimenez-Scheurle P2 with node redefinition for the nonholonomic particle "
           "(spec/discretization.md 2.7, (93)-(96)): midpoint discrete constraint "
           "z1 - z0 = (y0 + y1)(x1 - x0)/2 read on the new nodes; the state (q, v) is (Q_k, W_k) as for "
           "js_b, of which this is the closed form (with the optional harmonic potential). Explicit, "
           "order 2 (Prop 6.3), symmetric, keeps D exactly. Particle only.",
    .properties = NH_PRESERVES_CONSTRAINT,
    .applies_doc = constant_mass_doc,
    .applies = applies_like_b,
    .order = nh_order_2,
    /* symmetric for the reason given at js_b */
    .is_symmetric = nh_always_symmetric,
    .step = p2new_step,
    .lambda_time = NH_LAMBDA_MIDPOINT,
    .lambda_doc = "lambda = Lam/h of (96) (spec/discretization.md 2.7, = js_b's), at the original node "
                  "qbar: approximates lambda(t_k + h/2) to O(h^2) (6.5)",
    .discrete_constraint = constraint_new_nodes,
    .discrete_constraint_doc = "(86d) at the new nodes: zeta_{k+1} - y_{k+1} u_{k+1} of (Q_{k+1}, W_{k+1}) "
                               "(spec/discretization.md 2.7, 6.5)",
    .discrete_action = action_midpoint,
};

enum { P_START, P_COUNT };

static const nh_param_desc p2orig_params[] = {
    [P_START] = {"start", NH_PARAM_INT, 0, 0, 1,
     "initial data: 0 = as given, on D (the paper's first case, D -> D_h); 1 = zdot0 replaced by "
     "(y0 + h ydot0/2) xdot0 to start on D_h (second case, (99))",
     1},
};
_Static_assert(sizeof p2orig_params / sizeof *p2orig_params == P_COUNT,
               "p2orig_params[] and the P_* enum disagree");

/* Second case (§2.7): move the initial data onto D_h (98), ζ0 = (y0 + (h/2)w0)u0. */
static nh_step_status p2orig_init(const nh_method *m, const nh_system *sys NH_UNUSED, nh_state *x, double h,
                                  nh_cost *cost NH_UNUSED) {
  if (m->p[P_START] == 1) x->v[Z_] = (x->q[Y_] + 0.5 * h * x->v[Y_]) * x->v[X_];
  return NH_STEP_OK;
}

/* P2-orig (§2.7, (97)–(99)): the P2 trajectory q_k read at the original nodes with forward
 * differences v_k = (q_{k+1} − q_k)/h. The new node of the pair is Q_k = q_k + (h/2)v_k and the
 * multiplier's node is q̄ = q_{k+1} = q_k + h v_k (97), so the velocity update is P2's; the
 * constraint (86d) at Q_{k+1} = q_{k+1} + (h/2)v_{k+1} is the deformed constraint (98). */
static nh_step_status p2orig_step(const nh_method *m NH_UNUSED, const nh_system *sys, const nh_state *x, nh_state *y,
                                  double h, nh_cost *cost) {
  double Q[3];
  *y = *x;
  y->t = x->t + h;
  for (int i = 0; i < 3; i++) {
    Q[i] = x->q[i] + 0.5 * h * x->v[i];
    y->q[i] = x->q[i] + h * x->v[i];
  }
  y->lambda[0] = p2_velocity(omega2(sys), h, Q, y->q, x->v, y->v) / h;
  cost->steps++;
  cost->rhs_evals++;
  cost->constraint_evals += 2; /* μ(q_{k+1}) and μ(q_{k+1} + (h/2)v_{k+1}), inline */
  return NH_STEP_OK;
}

const nh_integrator_type nh_integrator_js_p2orig = {
    .name = "js_p2orig",
    .doc = "Jimenez-Scheurle P2 at the original nodes for the nonholonomic particle "
           "(spec/discretization.md 2.7, (97)-(99)): the P2 trajectory with forward-difference velocities "
           "(q_{k+1} - q_k)/h. Keeps the deformed constraint D_h: zdot = (y + (h/2) ydot) xdot (98), not "
           "D: the residual zdot - y xdot is O(h). Order 1. start=1 moves the initial data onto D_h. "
           "Particle only (with the optional harmonic potential).",
    .params = p2orig_params,
    .nparams = P_COUNT,
    .applies_doc = constant_mass_doc,
    .applies = applies_like_b,
    .order = nh_order_1,
    .init = p2orig_init,
    .step = p2orig_step,
    .lambda_time = NH_LAMBDA_END,
    .lambda_doc = "lambda_{k+1} of (97)/(99) (spec/discretization.md 2.7), acting at mu(q_{k+1}): "
                  "approximates lambda(t_{k+1}) (6.5)",
    .discrete_constraint = constraint_deformed,
    .discrete_constraint_doc = "the deformed constraint (98), mu(q_{k+1} + (h/2) v_{k+1}) v_{k+1} = zeta - "
                               "(y + (h/2) w) u: round-off from step 1 on (spec/discretization.md 2.7, R14)",
    .discrete_action = action_midpoint,
};
