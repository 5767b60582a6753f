/* The contact Hamiltonian splitting integrator of order 2 (issue 17): A. Bravetti, M. Seri,
 * M. Vermeeren, F. Zadra, "Numerical integration in celestial mechanics: a case for contact
 * geometry", Celest. Mech. Dyn. Astr. 132 (2020) 7, as its reference code
 * github.com/mseri/contact-integrators, integrators/contact.py, implements it in `step` (order 2)
 * and `step6` (order 6, Yoshida's composition of `step`; here yoshida6(contact2), below).
 *
 * Setting. The paper's contact Hamiltonian H = p²/2 + V(q, t) + f(t) S, generalized to a constant
 * mass matrix M, with the paper's V(q, t) = V(q) + W(q, t) − F(t)·q (the system's potential, its
 * time-dependent potential and its forcing) and the damping f(t) = α(t) (constant or not, any sign):
 *   H(q, p, z, t) = ½ pᵀM⁻¹p + V(q) + W(q, t) − F(t)·q + α(t) z,
 * with the contact Hamilton equations q̇ = ∂H/∂p, ṗ = −∂H/∂q − p ∂H/∂z, ż = pᵀ∂H/∂p − H. They
 * give M v̇ = −∇V − ∇W + F(t) − α(t)Mv (systems/system.h with k = 0: the damping is the same
 * mass-proportional −αMv) and ż = T − V − W + F·q − αz = L(q, v, z), the Herglotz equation of
 * spec/herglotz.md §2.1 with the Lagrangian of herglotz.c, L = T − V + F·q − αz. So the contact
 * variable S is the Herglotz action z that herglotz2 computes, with the same z_0 = 0 (init below),
 * and the `action` observable compares the two directly.
 *
 * Splitting (the reference `step`; H = A + B + C in its labels, D the time flow of the
 * autonomized system, during which A, B, C see a frozen t). Each flow is exact; over a time τ,
 * with p = Mv and T(v) = ½vᵀMv:
 *   C = ½pᵀM⁻¹p (drift):   q ← q + τ v,                 v fixed,  z ← z + τ T(v)     (ż = pᵀM⁻¹p − C);
 *   B = U(q, t) = V(q) + W(q, t) − F(t)·q:
 *                          v ← v − τ M⁻¹∇U(q, t),       q fixed,  z ← z − τ U(q, t);
 *   A = α(t) z:            v ← e^{−α(t)τ} v,             q fixed,  z ← e^{−α(t)τ} z      (ṗ = −αp, ż = −αz);
 *   D:                     t ← t + τ.
 * One step of size h applies, first to last, D_{h/2} C_{h/2} B_{h/2} A_h B_{h/2} C_{h/2} D_{h/2}
 * (the reference's order: the kinetic drift first), so B and A see t_j + h/2: α, W and F are
 * evaluated at the step's mid time, as the reference's `step` evaluates f and V_q, and this is what
 * keeps a time-dependent α(t) or W(q, t) second order (the autonomized system's D flow is part of
 * the palindrome, so the symmetry argument below covers it). Since A and B leave q alone, both B
 * half-steps act at the same point q̄ = q_j + (h/2)v_j: one ∇V, one V (one ∇W, one W) and one F per
 * step. With α = 0 this is the drift-kick-drift Störmer–Verlet (leapfrog) step, z gaining
 * h[(T(v_j) + T(v_{j+1}))/2 − V(q̄) + F·q̄].
 *
 * Order and symmetry. Each exact flow satisfies φ_{−τ} = φ_τ⁻¹ and the composition is a palindrome,
 * so Φ_{−h} = Φ_h⁻¹: the step is symmetric, hence of even order, 2 (a Strang splitting). The
 * compositions of integrators/compose.c therefore raise it: triple_jump(contact2) and
 * suzuki5(contact2) have order 4, yoshida6(contact2) order 6 and mclachlan8(contact2) order 8.
 * yoshida6(contact2) is the reference `step6`: the same 7 stages, Yoshida's solution A (the
 * reference's a_six, printed with 15 digits; compose.c uses the 26-digit refinement), so the paper's
 * order-6 method needs no type of its own. The reference's other order-6 tables (Yoshida's
 * solutions B and C, the triple-jump product e_six) are not provided.
 *
 * Scope. Unconstrained systems (k = 0) with a constant mass matrix. A configuration-dependent
 * M(q) makes the kinetic piece ½pᵀM(q)⁻¹p a geodesic flow with no explicit solution (declined via
 * `handles`). Constraints (k > 0) are declined too (`applies`): the multiplier λ(q, v) of the
 * Lagrange–d'Alembert equations depends on the whole force, so the constrained equations do not
 * split into exactly integrable contact flows (the drift must stay on D, the kicks need their
 * own projections), and the paper gives no such splitting; a nonholonomic version would be a new
 * method (e.g. projected pieces), not this one. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "integrators/integrator.h"

/* C over τ: q ← q + τv, z ← z + τT(v) (the kinetic flow; v, i.e. p, is its invariant). */
static void kinetic_flow(const nh_system *sys, double tau, double *q, const double *v, double *z) {
  for (int i = 0; i < sys->n; i++) q[i] += tau * v[i];
  *z += tau * nh_kinetic_energy(sys, q, v); /* q is ignored: the mass is constant */
}

/* B_{h/2} A_h B_{h/2} at the fixed q, time t (the step's midpoint): with the generalized gradient
 * g = M⁻¹∇U(q, t) and potential U = V(q) + W(q, t) − F(t)·q,
 *   v ← e^{−α(t)h}(v − (h/2)g) − (h/2)g,   z ← e^{−α(t)h}(z − (h/2)U) − (h/2)U. */
static void potential_damping_flows(const nh_system *sys, double t, double h, const double *q, double *v,
                                    double *z, nh_cost *cost) {
  const int n = sys->n;
  double grad[NH_MAX_N], g[NH_MAX_N], F[NH_MAX_N];
  sys->type->grad_potential(sys->p, q, grad);
  double U = sys->type->potential(sys->p, q);
  cost->rhs_evals++;
  const nh_time_potential *W = sys->type->forces ? sys->type->forces->potential : NULL;
  if (W) { /* W(q, t) at the mid time, counted with ∇V as one gradient */
    double gw[NH_MAX_N];
    W->gradient(sys->p, q, t, gw);
    U += W->value(sys->p, q, t);
    for (int i = 0; i < n; i++) grad[i] += gw[i];
  }
  if (nh_forcing(sys, t, F)) { /* 0: F ≡ 0 for these parameters */
    cost->rhs_evals++; /* one force evaluation, counted as herglotz.c counts it */
    for (int i = 0; i < n; i++) {
      grad[i] -= F[i];
      U -= F[i] * q[i];
    }
  }
  nh_mass_solve(sys, q, grad, g); /* the cached M⁻¹ (or a copy for M = I): cannot fail */
  const double alpha = nh_damping(sys, t);
  const double decay = exp(-alpha * h), half = 0.5 * h;
  for (int i = 0; i < n; i++) v[i] = decay * (v[i] - half * g[i]) - half * g[i];
  *z = decay * (*z - half * U) - half * U;
}

/* D_{h/2} C_{h/2} B_{h/2} A_h B_{h/2} C_{h/2} D_{h/2} (the header). Explicit; allocates nothing. */
static nh_step_status contact2_step(const nh_method *m NH_UNUSED, const nh_system *sys, const nh_state *x, nh_state *y,
                                    double h, nh_cost *cost) {
  const size_t bytes = sizeof(double) * (size_t)sys->n;
  cost->steps++;
  memcpy(y->q, x->q, bytes);
  memcpy(y->v, x->v, bytes);
  y->z = x->z;
  kinetic_flow(sys, 0.5 * h, y->q, y->v, &y->z);
  potential_damping_flows(sys, x->t + 0.5 * h, h, y->q, y->v, &y->z, cost);
  kinetic_flow(sys, 0.5 * h, y->q, y->v, &y->z);
  y->t = x->t + h;
  return NH_STEP_OK;
}

/* z_0 = 0: the Herglotz action starts at zero, as herglotz2's (spec/herglotz.md §2.2). */
static nh_step_status contact2_init(const nh_method *m NH_UNUSED, const nh_system *sys NH_UNUSED, nh_state *x,
                                    double h NH_UNUSED, nh_cost *cost NH_UNUSED) {
  x->z = 0;
  return NH_STEP_OK;
}

/* Constraints are declined (the header, "Scope"). */
static int contact2_applies(const nh_method *m NH_UNUSED, const nh_system *sys, char *err, size_t errlen) {
  if (sys->k == 0) return 0;
  snprintf(err, errlen,
           "it needs an unconstrained system (k = 0): with %d constraint(s) the multiplier couples the pieces "
           "and the contact splitting has no exactly integrable flows",
           sys->k);
  return -1;
}

/* What the peers' codes call it (an unknown method of that name suggests it). */
static const nh_peer_name contact2_peers[] = {
    {"step", "contact-integrators", NULL},
    {"step6", "contact-integrators", "yoshida6(contact2)"},
    {NULL},
};

const nh_integrator_type nh_integrator_contact2 = {
    .name = "contact2",
    .peer_names = contact2_peers,
    .doc = "Contact Hamiltonian splitting integrator, order 2 (Bravetti, Seri, Vermeeren, Zadra, Celest. Mech. "
           "Dyn. Astr. 132 (2020) 7; reference code contact-integrators, `step`): H = p^T M^-1 p / 2 + V(q) - "
           "F(t).q + W(q,t) + alpha(t) z split into exact flows, kinetic drift (q += tau v, z += tau T), "
           "potential kick (v -= tau M^-1 grad U, z -= tau U, U = V + W - F.q) and damping (v, z *= "
           "exp(-alpha tau)), applied as drift h/2, kick h/2, damping h, kick h/2, drift h/2 with t frozen at "
           "t_j + h/2 (alpha, W and F taken there; time-dependent alpha(t) and W(q,t) handled). Explicit, "
           "symmetric, order 2; with alpha = 0 the drift-kick-drift Stormer-Verlet step. z is the Herglotz "
           "action of herglotz2 (same L = T - V + F.q - alpha z, z_0 = 0). The paper's order-6 step6 is "
           "yoshida6(contact2) (Yoshida's solution A; no type of its own). Unconstrained systems (k = 0) with "
           "a constant mass matrix only: constraints couple the pieces through the multiplier, and the "
           "nonholonomic case is not a straightforward extension (see integrators/contact_splitting.c).",
    .properties = NH_TRACKS_ACTION | NH_MIDPOINT_TIME, /* alpha, W, F at t_j + h/2 only */
    .handles = NH_SYS_DAMPING | NH_SYS_FORCING | NH_SYS_TIME_DAMPING | NH_SYS_TIME_POTENTIAL,
    .applies_doc = "needs an unconstrained system (k = 0) with a constant mass matrix (the kinetic flow of "
                   "p^T M(q)^-1 p / 2 is a geodesic flow, not explicit)",
    .applies = contact2_applies,
    .order = nh_order_2,
    .is_symmetric = nh_always_symmetric,
    .init = contact2_init,
    .step = contact2_step,
};
