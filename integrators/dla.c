/* The discrete Lagrange–d'Alembert (DLA) integrator of Cortés–Martínez in its two-step position
 * form (spec/newmark.md §2.6, Prop 3.5), with the discrete Lagrangian
 *   L_d^{sym,α}(q0, q1) = (h/2) ((q1−q0)/h)ᵀ M ((q1−q0)/h) − h(1−α)V(q0) − hαV(q1)
 * (the ½ of the kinetic term restored, typo A2: without it D1 L_d + D2 L_d would carry 2M). The
 * DLA equations D1 L_d(q_{k+1}, q_{k+2}) + D2 L_d(q_k, q_{k+1}) ∈ D°_{q_{k+1}} and
 * Φ(q_{k+1}, q_{k+2}) = 0 read, the potential parts adding up to h∇V(q_{k+1}) whatever α,
 *   (q_{k+2} − 2q_{k+1} + q_k)/h² = −M⁻¹∇V(q_{k+1}) + M⁻¹A(q_{k+1})ᵀΛ,
 * with Φ the discrete constraint (14) or (15) with parameter α (§2.4). α enters only there.
 *
 * A two-step method: the state carries the previous position, as the increment d_k = q_{k+1} − q_k
 * (summed form: the second difference is never formed from positions, HLW VIII.5), and the step
 * size it belongs to. The new increment is d_{k+1} = d_k − h²M⁻¹∇V(q_{k+1}) + M⁻¹A(q_{k+1})ᵀΛ, a
 * k-dimensional problem for Λ shared with nh_newmark's β = β' = 0 path (nh_newmark.h).
 *
 * Start (init): the virtual increment d_{−1} = h v0 + (h²/2)M⁻¹∇V(q0), i.e. the previous position
 * of (N2) with λ' = 0, so that the first step is (N1)+(N3) with β = 0: q1 is nh_newmark(0,0,α)'s.
 * Velocity: the (N2)+(N4) velocity of nh_newmark(0,0,α) at q_{k+2}, which needs λ'_{k+2}; it
 * depends only on (q_{k+1}, q_{k+2}) and is the M-orthogonal projection onto D_{q_{k+2}} of
 *   d_{k+1}/h − (h/2)M⁻¹∇V(q_{k+2})
 * (from (N2): h v = d − (h²/2)M⁻¹∇V + M⁻¹AᵀΛ' with A v = 0). With this start and velocity, dla's
 * (q, v) sequence is nh_newmark(0,0,α)'s (Prop 3.5: (N2) at step k plus (N1) at step k+1 is the
 * DLA recurrence with Λ = (h²/2)(λ_{k+1} + λ'_{k+1})).
 *
 * Multiplier (integrator.h, the observables). The step x → y solves the DLA equation centred at
 * x's node q_{k+1}: M(q_{k+2} − 2q_{k+1} + q_k)/h² = −∇V(q_{k+1}) + A(q_{k+1})ᵀλ_DLA with
 * λ_DLA = Λ/h² = (λ_{k+1} + λ'_{k+1})/2 of nh_newmark(0,0,α) (Prop 3.5 above), in the +Aᵀλ
 * convention: a central second difference at t_{k+1}, so λ_DLA approximates λ at the step's START
 * (x->t), not at its end: to O(h²) for α = ½ and O(h) for other α (the O(1) curvature offsets
 * ±(1−2α)C⁻¹(DA[v])v of λ_{k+1} and λ'_{k+1}, see nh_newmark.c, cancel in the mean); against the
 * step's end it is only O(h). The first step has no true previous position: the virtual start is
 * (N2) with λ' = 0, so Λ = (h²/2)λ_0 there (λ_0 of (N1)), and y->lambda = 2Λ/h² = λ_0 for that step
 * (the carried `fresh` flag marks a state fresh from init): O(h) for α = ½, but λ_0 → λ + (1−2α)C⁻¹(DA[v])v
 * otherwise.
 * Discrete constraint: Φ(q_{k+1}, q_{k+2}) of (14)/(15), as nh_newmark's. Discrete action:
 * L_d^{sym,α}. Newton system: the k-dimensional problem R(Λ) = h Φ(q_{k+1}, q_{k+1} + d(Λ)) in the
 * unknown Λ (nh_newmark_increment_eval; closed form when linear, Newton otherwise). */
#include <string.h>

#include "integrators/integrator.h"
#include "integrators/nh_newmark.h"

enum { P_ALPHA, P_CONSTRAINT, P_COUNT };

/* What a step carries to the next: the last increment d, the step size it was made with, and 1 for a
 * state fresh from init (its increment is the virtual start, with λ' = 0), else 0. */
typedef struct {
  double increment[NH_MAX_N];
  double h;
  double fresh;
} dla_carry;
NH_CARRY_FITS(dla_carry);
#define INCREMENT(x) NH_CARRY(x, dla_carry, increment)
#define CARRIED_H(x) (*NH_CARRY(x, dla_carry, h))
#define FRESH(x) (*NH_CARRY(x, dla_carry, fresh))

static const nh_param_desc params[] = {
    [P_ALPHA] = {"alpha", NH_PARAM_REAL, 0.5, 0, 1,
     "constraint discretisation point: mu at (1-alpha) q_k + alpha q_{k+1}", 0},
    [P_CONSTRAINT] = NH_NEWMARK_CONSTRAINT_PARAM,
};
_Static_assert(sizeof params / sizeof *params == P_COUNT, "params[] and the P_* enum disagree");

static const nh_param_alias aliases[] = {NH_NEWMARK_DISC_ALIASES, {NULL}};

/* out = d + s M⁻¹∇V(q): one potential gradient. */
static void add_scaled_force(const nh_system *sys, const double *q, const double *d, double s, double *out,
                             nh_cost *cost) {
  double g[NH_MAX_N], Mg[NH_MAX_N];
  sys->type->grad_potential(sys->p, q, g);
  cost->rhs_evals++;
  nh_newmark_minv(sys, g, Mg);
  for (int i = 0; i < sys->n; i++) out[i] = d[i] + s * Mg[i];
}

static nh_step_status dla_init(const nh_method *m NH_UNUSED, const nh_system *sys, nh_state *x, double h,
                               nh_cost *cost) {
  double hv[NH_MAX_N];
  for (int i = 0; i < sys->n; i++) hv[i] = h * x->v[i];
  add_scaled_force(sys, x->q, hv, 0.5 * h * h, INCREMENT(x), cost);
  CARRIED_H(x) = h;
  FRESH(x) = 1;
  return NH_STEP_OK;
}

/* λ_DLA = Λ/scale: h² after a true previous position, h²/2 for the first step from init. */
static double start_scale(const nh_system *sys NH_UNUSED, const nh_state *x, double h) {
  return FRESH(x) != 0 ? 0.5 * h * h : h * h;
}

static nh_step_status dla_step(const nh_method *m, const nh_system *sys, const nh_state *x, nh_state *y,
                               double h, nh_cost *cost) {
  const int n = sys->n;
  /* History made for another step size (or never made: init not called) means a wrong method. */
  if (CARRIED_H(x) != h) return NH_STEP_SOLVER_FAILED;
  double dp[NH_MAX_N], d[NH_MAX_N], q[NH_MAX_N], v[NH_MAX_N], L[NH_MAX_K];
  cost->steps++;
  add_scaled_force(sys, x->q, INCREMENT(x), -h * h, dp, cost);
  nh_step_status st =
      nh_newmark_constrained_increment(sys, nh_newmark_disc(m->p[P_CONSTRAINT]), m->p[P_ALPHA], x->q, dp, d, L, cost);
  if (st != NH_STEP_OK) return st;
  for (int i = 0; i < n; i++) q[i] = x->q[i] + d[i];
  if ((st = nh_newmark_end_velocity(sys, q, d, h, v, NULL, cost)) != NH_STEP_OK) return st;
  *y = *x;
  y->t = x->t + h;
  memcpy(y->q, q, sizeof(double) * (size_t)n);
  memcpy(y->v, v, sizeof(double) * (size_t)n);
  memcpy(INCREMENT(y), d, sizeof(double) * (size_t)n);
  FRESH(y) = 0;
  const double scale = start_scale(sys, x, h);
  for (int a = 0; a < sys->k; a++) y->lambda[a] = L[a] / scale;
  return NH_STEP_OK;
}

/* The hooks below forward to nh_newmark.h, as nh_newmark's do: Prop 3.5 makes the two methods share
 * their discrete constraint and action (spec/newmark.md 2.4, 2.6). */
static void discrete_constraint(const nh_method *m, const nh_system *sys, const nh_state *x, const nh_state *y,
                                double h, double *out) {
  nh_newmark_discrete_constraint(sys, nh_newmark_disc(m->p[P_CONSTRAINT]), m->p[P_ALPHA], x->q, y->q, h, out);
}

static double discrete_action(const nh_method *m, const nh_system *sys, double t NH_UNUSED, const double *q0,
                              const double *q1, double h) {
  return nh_newmark_discrete_action(sys, m->p[P_ALPHA], q0, q1, h);
}

static int newton_size(const nh_method *m NH_UNUSED, const nh_system *sys) { return sys->k; }

/* R(Λ) = ⟨μ̄, d(Λ)⟩ with d(Λ) = dp + M⁻¹A(q_{k+1})ᵀΛ and dp = d_k − h²M⁻¹∇V(q_{k+1}) from x. */
static void newton_eval(const nh_method *m, const nh_system *sys, const nh_state *x, double h, const double *X,
                        double *F, double *J) {
  double dp[NH_MAX_N];
  nh_cost unused = {0};
  add_scaled_force(sys, x->q, INCREMENT(x), -h * h, dp, &unused);
  nh_newmark_increment_eval(sys, nh_newmark_disc(m->p[P_CONSTRAINT]), m->p[P_ALPHA], x->q, dp, X, F, J, &unused);
}

static void newton_unknowns(const nh_method *m NH_UNUSED, const nh_system *sys, const nh_state *x, const nh_state *y,
                            double h, double *X) {
  const double scale = start_scale(sys, x, h);
  for (int a = 0; a < sys->k; a++) X[a] = scale * y->lambda[a];
}

/* The recurrence is invariant under q_k ↔ q_{k+2}, h → −h exactly when Φ is symmetric (α = ½). */
static int is_symmetric(const nh_method *m) { return m->p[P_ALPHA] == 0.5; }

/* As nh_newmark(0,0,α) (Prop 3.4/3.5): order 2 for α = ½, else 1. */
static int order(const nh_method *m) { return is_symmetric(m) ? 2 : 1; }

static const nh_newton_hooks newton_hooks = {newton_size, newton_eval, newton_unknowns, NULL};

const nh_integrator_type nh_integrator_dla = {
    .name = "dla",
    .doc = "Discrete Lagrange-d'Alembert (Cortes-Martinez) two-step recurrence with L_d^{sym,alpha} "
           "(spec/newmark.md 2.6, Prop 3.5, 1/2 restored: A2) and the discrete constraint of `constraint`, "
           "point (14) or average (15) (2.4). Started from q_{-1} = q_0 - h v_0 - (h^2/2) M^-1 grad V(q_0); "
           "outputs the (N2)+(N4) velocity on D, so its (q, v) sequence is nh_newmark(beta=0,beta2=0,alpha)'s. "
           "Two-step: needs init with the step size, no compositions. Order 2 for alpha = 1/2, else 1.",
    .params = params,
    .nparams = P_COUNT,
    .aliases = aliases,
    .properties = NH_PRESERVES_CONSTRAINT | NH_HISTORY,
    .handles = 0,
    .applies_doc = "needs a constant mass matrix, linear constraints and no damping or forcing "
                   "(spec/newmark.md 2.6: L_d of type (2))",
    .order = order,
    .is_symmetric = is_symmetric,
    .init = dla_init,
    .step = dla_step,
    .lambda_time = NH_LAMBDA_START,
    .lambda_doc = "lambda_DLA = Lambda/h^2 = (lambda_{k+1} + lambda'_{k+1})/2 of the DLA equation centred at the "
                  "step's start node (Prop 3.5): approximates lambda at the step's start, O(h^2) for alpha = 1/2, "
                  "O(h) otherwise; first step: lambda_0 of (N1) (virtual start with lambda' = 0), O(h) for "
                  "alpha = 1/2 only",
    .discrete_constraint = discrete_constraint,
    .discrete_constraint_doc =
        "Phi(q_{k+1}, q_{k+2}) of (14) or (15) as `constraint` says (spec/newmark.md 2.4), as nh_newmark(0,0,alpha)",
    .discrete_action = discrete_action,
    .newton = &newton_hooks,
};
