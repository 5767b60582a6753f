/* The observables registry (studies/observables.h). Each entry is a const table: name,
 * documentation with its source, units, what it needs, its components and who defines it. */
#include "studies/observables.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------------- */
/* Norms and shared pieces                                                                        */

/* NaN propagates: fmax alone would drop it, and a failed run's error would read as 0. */
double nh_norm_max(int n, const double *d) {
  double m = 0;
  for (int i = 0; i < n; i++) {
    if (isnan(d[i])) return NAN;
    m = fmax(m, fabs(d[i]));
  }
  return m;
}

/* Scaled by the largest entry so that squares neither overflow nor underflow. */
double nh_norm_2(int n, const double *d) {
  double m = nh_norm_max(n, d), s = 0;
  if (m == 0 || !isfinite(m)) return m; /* 0, Inf or NaN */
  for (int i = 0; i < n; i++) s += (d[i] / m) * (d[i] / m);
  return m * sqrt(s);
}

static int one(const nh_system *sys NH_UNUSED) { return 1; }
static int dim_n(const nh_system *sys) { return sys->n; }
static int dim_k(const nh_system *sys) { return sys->k; }
static int dim_2n(const nh_system *sys) { return 2 * sys->n; }
static int dim_invariants(const nh_system *sys) { return nh_invariant_count(sys); }
static int dim_derived(const nh_system *sys) { return nh_derived_count(sys); }

static void label_none(const nh_system *sys NH_UNUSED, int i NH_UNUSED, char *buf, size_t len) {
  snprintf(buf, len, "value");
}
static void label_q(const nh_system *sys NH_UNUSED, int i, char *buf, size_t len) { snprintf(buf, len, "q[%d]", i); }
static void label_v(const nh_system *sys NH_UNUSED, int i, char *buf, size_t len) { snprintf(buf, len, "v[%d]", i); }
static void label_qv(const nh_system *sys, int i, char *buf, size_t len) {
  if (i < sys->n) snprintf(buf, len, "q[%d]", i);
  else snprintf(buf, len, "v[%d]", i - sys->n);
}
static void label_constraint(const nh_system *sys NH_UNUSED, int i, char *buf, size_t len) {
  snprintf(buf, len, "constraint %d", i);
}
static int dim_2k(const nh_system *sys) { return 2 * sys->k; }
static void label_shifted(const nh_system *sys, int i, char *buf, size_t len) {
  snprintf(buf, len, "constraint %d at q %c (h/2) v", i % sys->k, i < sys->k ? '+' : '-');
}
static void label_lambda(const nh_system *sys NH_UNUSED, int i, char *buf, size_t len) {
  snprintf(buf, len, "lambda[%d]", i);
}
static void label_invariant(const nh_system *sys, int i, char *buf, size_t len) {
  snprintf(buf, len, "%s", nh_invariant_name(sys, i));
}
static void label_derived(const nh_system *sys, int i, char *buf, size_t len) {
  const char *units = nh_derived_units(sys, i);
  if (units[0]) snprintf(buf, len, "%s [%s]", nh_derived_name(sys, i), units);
  else snprintf(buf, len, "%s", nh_derived_name(sys, i));
}

/* Absence reasons. */
static const char *always(const nh_method *m NH_UNUSED, const nh_system *sys NH_UNUSED) { return NULL; }

static const char *needs_constraints(const nh_method *m NH_UNUSED, const nh_system *sys) {
  return sys->k == 0 ? "the system has no constraints" : NULL;
}

static const char *has_lambda(const nh_method *m, const nh_system *sys) {
  if (sys->k == 0) return "the system has no constraints";
  if (!m) return NULL;
  return nh_method_lacks_multiplier(m);
}

static const char *has_holonomic(const nh_method *m NH_UNUSED, const nh_system *sys) {
  return sys->k > 0 && nh_has_holonomic(sys) ? NULL : "the system has no holonomic constraint phi(q) = 0";
}

static const char *has_discrete_constraint(const nh_method *m, const nh_system *sys) {
  if (sys->k == 0) return "the system has no constraints";
  if (!m) return NULL;
  if (nh_method_has_discrete_constraint(m)) return NULL;
  return "the method (or a composition's base) has no discrete constraint of its own";
}

static const char *has_discrete_energy(const nh_method *m, const nh_system *sys NH_UNUSED) {
  return m ? nh_method_lacks_discrete_energy(m) : NULL;
}

static const char *tracks_action(const nh_method *m, const nh_system *sys NH_UNUSED) {
  return m ? nh_method_lacks_action(m) : NULL;
}

static const char *has_invariants(const nh_method *m NH_UNUSED, const nh_system *sys) {
  return nh_invariant_count(sys) > 0 ? NULL : "the system declares no invariants besides energy";
}

static const char *has_derived(const nh_method *m NH_UNUSED, const nh_system *sys) {
  return nh_derived_count(sys) > 0 ? NULL : "the system declares no derived quantities";
}

/* ---------------------------------------------------------------------------------------------- */
/* Evaluations                                                                                    */

static void eval_energy(const nh_obs_ctx *c, double *out) { out[0] = nh_energy(c->sys, c->cur->q, c->cur->v); }

static void eval_energy_error(const nh_obs_ctx *c, double *out) {
  out[0] = nh_energy(c->sys, c->cur->q, c->cur->v) - c->E0;
}

static void eval_relative_energy_error(const nh_obs_ctx *c, double *out) {
  out[0] = (nh_energy(c->sys, c->cur->q, c->cur->v) - c->E0) / fabs(c->E0);
}

static void eval_reference_energy(const nh_obs_ctx *c, double *out) {
  out[0] = nh_energy(c->sys, c->ref->q, c->ref->v);
}

static void eval_discrete_energy(const nh_obs_ctx *c, double *out) {
  out[0] = nh_method_discrete_energy(c->m, c->sys, c->prev, c->cur, c->h); /* h: as eval_discrete_constraint */
}

/* P = −α(t) vᵀM(q)v + F(t)·v = −2α(t)T + F(t)·v, the rate of work of the damping and forcing
 * forces at (t, q, v) (spec/herglotz.md §2.1, §3.2: dE/dt = −2αT + F·q̇). */
static double power(const nh_system *sys, const nh_state *x) {
  const double alpha = nh_damping(sys, x->t);
  double F[NH_MAX_N], P = alpha != 0 ? -2 * alpha * nh_kinetic_energy(sys, x->q, x->v) : 0; /* +0, not −0 */
  if (nh_forcing(sys, x->t, F))
    for (int i = 0; i < sys->n; i++) P += F[i] * x->v[i];
  return P;
}

static void eval_power(const nh_obs_ctx *c, double *out) { out[0] = power(c->sys, c->cur); }

static void eval_reference_power(const nh_obs_ctx *c, double *out) { out[0] = power(c->sys, c->ref); }

/* Signed residual of each constraint, A(q)v + b(q). */
static void eval_constraint_residual(const nh_obs_ctx *c, double *out) {
  nh_constraint_values(c->sys, c->cur->q, c->cur->v, out);
}

/* The step's own h (every step of a sampled run is c->h: studies/sampling.c), not cur.t − prev.t,
 * which differs from it by rounding: a composition replays its sub-steps with it (compose.c). */
static void eval_discrete_constraint(const nh_obs_ctx *c, double *out) {
  nh_method_discrete_constraint(c->m, c->sys, c->prev, c->cur, c->h, out);
}

static void eval_multiplier(const nh_obs_ctx *c, double *out) {
  memcpy(out, c->cur->lambda, sizeof(double) * (size_t)c->sys->k);
}

/* λ(q, v) of (77) at the sampled state: the continuous multiplier (NaN where C is singular). */
static void eval_continuous_multiplier(const nh_obs_ctx *c, double *out) {
  if (nh_multiplier(c->sys, c->cur->t, c->cur->q, c->cur->v, out) != 0)
    for (int a = 0; a < c->sys->k; a++) out[a] = NAN;
}

/* A(q ± (h/2)v)v + b there: the constraint at the nodes half a step from the sampled one, with its
 * velocity. For a scheme whose state (Q_k, W_k) sits at the midpoints of the original nodes (js_b,
 * js_p2new: Q_k = (q_k + q_k+1)/2, W_k = (q_k+1 − q_k)/h) these are the original nodes q_k+1 and q_k
 * with the backward and the forward difference velocity (spec/discretization.md R9); for a state at
 * an original node with its forward difference (js_p2orig), the + half is the deformed constraint
 * (98) (§6.5 r^h). */
static void eval_shifted_constraint(const nh_obs_ctx *c, double *out) {
  const nh_system *sys = c->sys;
  for (int half = 0; half < 2; half++) {
    double qs[NH_MAX_N];
    const double shift = (half ? -0.5 : 0.5) * c->h;
    for (int i = 0; i < sys->n; i++) qs[i] = c->cur->q[i] + shift * c->cur->v[i];
    nh_constraint_values(sys, qs, c->cur->v, out + half * sys->k);
  }
}

/* max |v − v(t + h/2)| of the true solution: the error of a difference velocity (q_k+1 − q_k)/h,
 * which approximates v at the middle of its step (spec/discretization.md R13). The true state half
 * a step on is the exact solution's from the reference state, or rk8pd's at the default reference
 * tolerance 1e-13 where the system has none. */
static void eval_error_v_half_step(const nh_obs_ctx *c, double *out) {
  const nh_system *sys = c->sys;
  nh_state mid;
  double d[NH_MAX_N];
  if (nh_true_solution(sys, c->ref, c->ref->t + 0.5 * c->h, 1e-13, &mid, NULL) != 0) {
    out[0] = NAN;
    return;
  }
  for (int i = 0; i < sys->n; i++) d[i] = c->cur->v[i] - mid.v[i];
  out[0] = nh_norm_max(sys->n, d);
}

/* The method's discrete energy of its last step minus E of the true solution at the middle of that
 * step, where the discrete energies of nhbench's methods sit (the chord or half-step velocity of
 * nh_rattle's E_d, the midpoint energy of the contact schemes): spec/herglotz.md §5 item 12, whose
 * E_d at t_j+1/2 against E_ref(t_j+1) would carry an O(h) offset of the comparison's own. The true
 * state half a step back is exact, or rk8pd's at 1e-13. */
static void eval_discrete_energy_error(const nh_obs_ctx *c, double *out) {
  nh_state mid;
  if (nh_true_solution(c->sys, c->ref, c->ref->t - 0.5 * c->h, 1e-13, &mid, NULL) != 0) {
    out[0] = NAN;
    return;
  }
  const double Ed = nh_method_discrete_energy(c->m, c->sys, c->prev, c->cur, c->h);
  out[0] = Ed - nh_energy(c->sys, mid.q, mid.v);
}

/* The central difference w = (q_k+1 − q_k−1)/(2h) at the node one step before the sample (the
 * sample is k + 1): the velocity a two-step scheme's positions give there, spec/herglotz.md §5 items
 * 3 and 10 ("the continuous constraint / energy at central-difference velocities"), spec/rattle.md
 * §2.4 (p_k = M(q_k+1 − q_k−1)/(2h)). */
static void central_velocity(const nh_obs_ctx *c, double *w) {
  for (int i = 0; i < c->sys->n; i++) w[i] = (c->cur->q[i] - c->prev2->q[i]) / (2 * c->h);
}

static void eval_central_residual(const nh_obs_ctx *c, double *out) {
  double w[NH_MAX_N];
  central_velocity(c, w);
  nh_constraint_values(c->sys, c->prev->q, w, out);
}

static void eval_central_energy(const nh_obs_ctx *c, double *out) {
  double w[NH_MAX_N];
  central_velocity(c, w);
  out[0] = nh_energy(c->sys, c->prev->q, w);
}

/* w − v_k: the method's own velocity at that node against its positions' central difference. */
static void eval_central_velocity_error(const nh_obs_ctx *c, double *out) {
  central_velocity(c, out);
  for (int i = 0; i < c->sys->n; i++) out[i] -= c->prev->v[i];
}

/* (h²/8) λᵀC(q)λ, C = A M⁻¹Aᵀ at the sampled state, λ the step's multiplier: the kinetic energy of
 * the half-step constraint impulse (h/2)M⁻¹Aᵀλ. For nh_rattle the identity of spec/rattle.md §2.9,
 * E_d = H(q_k, p_k) + (h²/8)λ_kᵀC(q_k)λ_k (items 3 and B). */
static void eval_impulse_energy(const nh_obs_ctx *c, double *out) {
  const nh_system *sys = c->sys;
  const int k = sys->k;
  double A[NH_MAX_K * NH_MAX_N], b[NH_MAX_K], W[NH_MAX_N * NH_MAX_K], C[NH_MAX_K * NH_MAX_K], s = 0;
  nh_constraint_terms(sys, c->cur->q, A, b); /* b: not needed */
  if (nh_constraint_gram(sys, c->cur->q, A, W, C) != 0) {
    out[0] = NAN;
    return;
  }
  for (int a = 0; a < k; a++)
    for (int b = 0; b < k; b++) s += c->cur->lambda[a] * C[a * k + b] * c->cur->lambda[b];
  out[0] = c->h * c->h / 8 * s;
}

/* The system's invariants (momentum maps ⟨Mv, ξ_Q(q)⟩) at q_k with the discrete post-momentum of the
 * trapezoidal L_d, v⁺ = (q_k − q_k−1)/h − (h/2)M⁻¹∇V(q_k) (spec/rattle.md §2.8, §2.9: J_d =
 * ⟨D_2L_d(q_k−1, q_k), ξ_Q(q_k)⟩, the two-point form of items 5 and E). */
static void eval_invariants_discrete(const nh_obs_ctx *c, double *out) {
  const nh_system *sys = c->sys;
  const int n = sys->n;
  const double h = c->h;
  double g[NH_MAX_N], mg[NH_MAX_N], v[NH_MAX_N];
  nh_grad_potential(sys, c->cur->q, g);
  if (nh_mass_solve(sys, c->cur->q, g, mg) != 0) {
    for (int i = 0; i < nh_invariant_count(sys); i++) out[i] = NAN;
    return;
  }
  for (int i = 0; i < n; i++) v[i] = (c->cur->q[i] - c->prev->q[i]) / h - 0.5 * h * mg[i];
  nh_invariants(sys, c->cur->q, v, out);
}

/* The same on the exact or reference state at the sample time: λ(t_k) of the true solution. */
static void eval_reference_multiplier(const nh_obs_ctx *c, double *out) {
  if (nh_multiplier(c->sys, c->ref->t, c->ref->q, c->ref->v, out) != 0)
    for (int a = 0; a < c->sys->k; a++) out[a] = NAN;
}

static void eval_holonomic(const nh_obs_ctx *c, double *out) { nh_holonomic(c->sys, c->cur->q, out); }

static void eval_multiplier_time(const nh_obs_ctx *c, double *out) {
  out[0] = nh_method_multiplier_time(c->m, c->prev->t, c->cur->t);
}

static void eval_multiplier_error(const nh_obs_ctx *c, double *out) {
  double lam[NH_MAX_K];
  const nh_state *r = c->ref_lambda;
  if (nh_multiplier(c->sys, r->t, r->q, r->v, lam) != 0) {
    for (int a = 0; a < c->sys->k; a++) out[a] = NAN;
    return;
  }
  for (int a = 0; a < c->sys->k; a++) out[a] = c->cur->lambda[a] - lam[a];
}

static void eval_action(const nh_obs_ctx *c, double *out) { out[0] = c->cur->z; }

static void eval_contact_hamiltonian(const nh_obs_ctx *c, double *out) {
  out[0] = nh_contact_hamiltonian(c->sys, c->cur->t, c->cur->q, c->cur->v, c->cur->z);
}

static void eval_invariants(const nh_obs_ctx *c, double *out) { nh_invariants(c->sys, c->cur->q, c->cur->v, out); }

static void eval_invariants_error(const nh_obs_ctx *c, double *out) {
  double ref[NH_MAX_INVARIANTS];
  nh_invariants(c->sys, c->cur->q, c->cur->v, out);
  nh_invariants(c->sys, c->ref->q, c->ref->v, ref);
  for (int i = 0; i < nh_invariant_count(c->sys); i++) out[i] -= ref[i];
}

static void eval_derived(const nh_obs_ctx *c, double *out) { nh_derived(c->sys, c->cur->t, c->cur->q, c->cur->v, out); }

static void eval_derived_reference(const nh_obs_ctx *c, double *out) {
  nh_derived(c->sys, c->ref->t, c->ref->q, c->ref->v, out);
}

static void eval_q(const nh_obs_ctx *c, double *out) { memcpy(out, c->cur->q, sizeof(double) * (size_t)c->sys->n); }
static void eval_v(const nh_obs_ctx *c, double *out) { memcpy(out, c->cur->v, sizeof(double) * (size_t)c->sys->n); }

/* Differences to the true solution: (q, v) − (q_ref, v_ref), 2n entries. */
static void difference(const nh_obs_ctx *c, double *d) {
  const int n = c->sys->n;
  for (int i = 0; i < n; i++) {
    d[i] = c->cur->q[i] - c->ref->q[i];
    d[n + i] = c->cur->v[i] - c->ref->v[i];
  }
}

static void eval_error(const nh_obs_ctx *c, double *out) { difference(c, out); }

#define NORM_EVAL(NAME, NORM, FIRST, COUNT)                                                           \
  static void NAME(const nh_obs_ctx *c, double *out) {                                              \
    double d[2 * NH_MAX_N];                                                                         \
    difference(c, d);                                                                               \
    out[0] = NORM(COUNT, d + (FIRST));                                                              \
  }
NORM_EVAL(eval_error_max, nh_norm_max, 0, 2 * c->sys->n)
NORM_EVAL(eval_error_2, nh_norm_2, 0, 2 * c->sys->n)
NORM_EVAL(eval_error_q_max, nh_norm_max, 0, c->sys->n)
NORM_EVAL(eval_error_q_2, nh_norm_2, 0, c->sys->n)
NORM_EVAL(eval_error_v_max, nh_norm_max, c->sys->n, c->sys->n)
NORM_EVAL(eval_error_v_2, nh_norm_2, c->sys->n, c->sys->n)

/* ---------------------------------------------------------------------------------------------- */
/* The registry                                                                                   */

/* SCALE: LOG for a size that a good method keeps small (an error, a residual), plotted as |value| on
 * a log scale; LINEAR for the rest. */
enum { LINEAR = 0, LOG = 1 };
#define OBSERVABLE(ID, NAME, SYMBOL, UNITS, SCALE, NEEDS, WIDTH, LABEL, ABSENT, EVAL, DOC)                             \
  static const nh_observable ID = {.name = NAME,                                                                       \
                                   .symbol = SYMBOL,                                                                   \
                                   .doc = DOC,                                                                         \
                                   .units = UNITS,                                                                     \
                                   .log_scale = SCALE,                                                                 \
                                   .needs = NEEDS,                                                                     \
                                   .width = WIDTH,                                                                     \
                                   .label = LABEL,                                                                     \
                                   .absent = ABSENT,                                                                   \
                                   .eval = EVAL}

OBSERVABLE(o_energy, "energy", "E(q, v)", "energy", LINEAR, 0, one, label_none, always, eval_energy,
           "E(q, v) = ½ vᵀM(q)v + V(q) of the sampled state (spec/newmark.md §2.0)");
OBSERVABLE(o_energy_error, "energy_error", "E − E_0", "energy", LOG, 0, one, label_none, always, eval_energy_error,
           "E(q, v) − E0, the energy drift (spec/newmark.md §4, A6)");
OBSERVABLE(o_rel_energy_error, "relative_energy_error", "(E − E_0) / |E_0|", "1", LOG, 0, one, label_none, always,
           eval_relative_energy_error, "(E(q, v) − E0) / |E0| (spec/newmark.md §6 A6)");
OBSERVABLE(o_ref_energy, "reference_energy", "E_{ref}", "energy", LINEAR, NH_OBS_REFERENCE, one, label_none, always,
           eval_reference_energy,
           "E of the exact or reference solution at the sample time: the energy a damped or forced run "
           "should follow (spec/herglotz.md §5 items 10-12)");
OBSERVABLE(o_power, "power", "P", "energy/time", LINEAR, 0, one, label_none, always, eval_power,
           "P = −α(t) vᵀM(q)v + F(t)·v at the sampled state and time, the rate of work of the damping and "
           "forcing forces; 0 for a conservative system. Along the exact solution it is dE/dt when the "
           "constraints are linear homogeneous and there is no W(q, t) (spec/herglotz.md §2.1, §3.2: dE/dt = "
           "−2αT + F·q̇); it leaves out the work of an affine constraint's force (the Foucault pendulum, §3.1) "
           "and of the force −∇W(q, t) of a time-dependent potential, with which E is not a function of (q, v)");
OBSERVABLE(o_ref_power, "reference_power", "P_{ref}", "energy/time", LINEAR, NH_OBS_REFERENCE, one, label_none, always,
           eval_reference_power,
           "P = −α(t) vᵀM(q)v + F(t)·v of the exact or reference solution at the sample time: where power is "
           "dE/dt, its integral over [t0, T] is reference_energy(T) − reference_energy(t0), the energy balance "
           "of spec/herglotz.md §5 item 11");
OBSERVABLE(o_discrete_energy, "discrete_energy", "E_d", "energy", LINEAR, NH_OBS_STEP, one, label_none,
           has_discrete_energy, eval_discrete_energy,
           "the method's own discrete energy of its last step, e.g. E_d of nh_rattle (spec/rattle.md §2.9) "
           "or the midpoint energy of the contact schemes (spec/herglotz.md §6); see `nhbench list methods`");
OBSERVABLE(o_discrete_energy_error, "discrete_energy_error", "E_d − E_{ref}", "energy", LOG,
           NH_OBS_STEP | NH_OBS_REFERENCE, one, label_none, has_discrete_energy, eval_discrete_energy_error,
           "discrete_energy minus E of the exact or reference solution at the middle of the last step, where the "
           "methods' discrete energies sit (spec/herglotz.md 5 item 12): the discrete energy against the energy it "
           "should follow, without the O(h) of comparing it with the end of its step");
OBSERVABLE(o_residual, "constraint_residual", "A(q)v + b", "as A v", LOG, 0, dim_k, label_constraint, needs_constraints,
           eval_constraint_residual,
           "A(q)v + b(q) per constraint, the continuous constraint at the sampled state (signed)");
OBSERVABLE(o_discrete_residual, "discrete_constraint", "discrete constraint", "as A v", LOG, NH_OBS_STEP, dim_k,
           label_constraint, has_discrete_constraint, eval_discrete_constraint,
           "the method's own discrete constraint for its last step, e.g. Phi(q_k, q_k+1) of nh_newmark "
           "(spec/newmark.md §2.4, C2), A(q̄)Δq/h of the contact schemes (spec/herglotz.md §5 item 3), "
           "the deformed constraint of js_p2orig (spec/discretization.md R14); for a composition, per constraint "
           "the signed value of largest magnitude over its sub-steps, each its own method's (spec/newmark.md C2: "
           "the inner steps of Psi_h; integrators/compose.c)");
OBSERVABLE(o_multiplier, "multiplier", "λ", "as lambda", LINEAR, NH_OBS_STEP, dim_k, label_lambda, has_lambda,
           eval_multiplier,
           "the multipliers of the method's last step, +Aᵀλ convention, scaled to approximate the "
           "continuous λ at multiplier_time (spec/discretization.md §6.5)");
OBSERVABLE(o_multiplier_time, "multiplier_time", "t^*", "time", LINEAR, NH_OBS_STEP, one, label_none, has_lambda,
           eval_multiplier_time,
           "the time t* whose continuous λ(t*) the method's multiplier approximates: the start, "
           "midpoint or end of its last step");
OBSERVABLE(o_multiplier_error, "multiplier_error", "λ − λ_{ref}(t^*)", "as lambda", LOG,
           NH_OBS_STEP | NH_OBS_LAMBDA_REFERENCE, dim_k, label_lambda, has_lambda, eval_multiplier_error,
           "multiplier − λ(t*) of the exact or reference solution at multiplier_time (spec/discretization.md "
           "R3, R6; spec/rattle.md §5.2 A)");
OBSERVABLE(o_continuous_multiplier, "continuous_multiplier", "λ(q, v)", "as lambda", LINEAR, 0, dim_k, label_lambda,
           needs_constraints, eval_continuous_multiplier,
           "lambda(q, v) of the eliminated multiplier (spec/newmark.md 2.0, spec/discretization.md (77)) at the "
           "sampled state, +A^T lambda convention: at t = 0 the lambda(0) of an initial condition (spec/rattle.md 4), "
           "along a run what the index-reduced ODE would use there");
OBSERVABLE(o_ref_multiplier, "reference_multiplier", "λ_{ref}", "as lambda", LINEAR, NH_OBS_REFERENCE, dim_k,
           label_lambda, needs_constraints, eval_reference_multiplier,
           "lambda(q, v) of (77) on the exact or reference solution at the sample time t_k, +A^T lambda convention: "
           "a method's multiplier against lambda(t_k) whatever time it approximates (multiplier_error takes the "
           "method's own; spec/discretization.md R6: js_b against lambda(t_k+1) as well as at the half step)");
OBSERVABLE(o_shifted_residual, "shifted_constraint_residual", "A(q ± (h/2)v)v + b", "as A v", LINEAR, 0, dim_2k,
           label_shifted, needs_constraints, eval_shifted_constraint,
           "A(q + (h/2)v)v + b and A(q - (h/2)v)v + b: the constraint half a step on and back along the sampled "
           "velocity; for js_b's midpoint state (Q_k, W_k) the original nodes with the backward and the forward "
           "difference velocity (spec/discretization.md R9), for js_p2orig the deformed constraint (98) (6.5)");
OBSERVABLE(o_error_v_half, "error_v_half_step", "‖v − v_{ref}(t + h/2)‖_∞", "as v", LOG, NH_OBS_REFERENCE, one,
           label_none, always, eval_error_v_half_step,
           "max-norm of v - v(t + h/2) of the exact solution: the error of a difference velocity (q_k+1 - q_k)/h "
           "against the time it approximates best (spec/discretization.md R13); the true state half a step on is "
           "exact, or rk8pd's at 1e-13");
OBSERVABLE(o_central_residual, "central_difference_residual", "A(q_k)w + b", "as A v", LINEAR,
           NH_OBS_STEP | NH_OBS_TWO_STEPS, dim_k, label_constraint, needs_constraints, eval_central_residual,
           "A(q_k) w + b with the central difference w = (q_k+1 - q_k-1)/(2h), at the node one step before the "
           "sample (t - h): the continuous constraint at central-difference velocities (spec/herglotz.md 5 item 3)");
OBSERVABLE(o_central_energy, "central_difference_energy", "E(q_k, w)", "energy", LINEAR, NH_OBS_STEP | NH_OBS_TWO_STEPS,
           one, label_none, always, eval_central_energy,
           "E(q_k, w), w = (q_k+1 - q_k-1)/(2h), at the node one step before the sample (t - h): the energy at "
           "central-difference velocities (spec/herglotz.md 5 item 10)");
OBSERVABLE(
    o_central_velocity_error, "central_difference_velocity_error", "w − v_k", "as v", LOG,
    NH_OBS_STEP | NH_OBS_TWO_STEPS, dim_n, label_v, always, eval_central_velocity_error,
    "(q_k+1 - q_k-1)/(2h) - v_k at the node one step before the sample (t - h): a method's velocity against "
    "the central difference of its positions (spec/rattle.md 2.4: p_k = M(q_k+1 - q_k-1)/(2h) of SHAKE, item 7)");
OBSERVABLE(o_impulse_energy, "impulse_energy", "(h^2/8) λ^TCλ", "energy", LINEAR, NH_OBS_STEP, one, label_none,
           has_lambda, eval_impulse_energy,
           "(h^2/8) lambda^T C(q) lambda, C = A M^-1 A^T, lambda the step's multiplier: the kinetic energy of the "
           "half-step constraint impulse; nh_rattle's E_d = H + this (spec/rattle.md 2.9, items 3 and B)");
OBSERVABLE(o_invariants_discrete, "invariants_discrete", "J_d", "as declared", LINEAR, NH_OBS_STEP, dim_invariants,
           label_invariant, has_invariants, eval_invariants_discrete,
           "the invariants at q_k with the discrete post-momentum of the trapezoidal L_d, v+ = (q_k - q_k-1)/h - "
           "(h/2) M^-1 grad V(q_k): the two-point discrete momentum map J_d (spec/rattle.md 2.8-2.9, items 5 and E)");
OBSERVABLE(
    o_holonomic, "holonomic_constraint", "φ(q)", "as phi", LINEAR, 0, dim_k, label_constraint, has_holonomic,
    eval_holonomic,
    "phi(q) of a holonomic constraint phi(q) = 0 at the sampled state, e.g. (|q|^2 - 1)/2 of the pendulum: "
    "what methods that keep only the velocity constraint A(q)v = 0 let drift (spec/rattle.md Remark 2, 6 item 8)");
OBSERVABLE(o_action, "action", "z", "action", LINEAR, 0, one, label_none, tracks_action, eval_action,
           "the Herglotz action z of contact methods, z(0) = 0 (spec/herglotz.md §2.2, §2.6)");
OBSERVABLE(o_contact_hamiltonian, "contact_hamiltonian", "H(q, v, z, t)", "energy", LINEAR, 0, one, label_none,
           tracks_action, eval_contact_hamiltonian,
           "H = ½vᵀMv + V(q) + W(q, t) − F(t)·q + α(t) z with z the method's Herglotz action, the contact "
           "Hamiltonian of Bravetti-Seri-Vermeeren-Zadra 2020 (its notebooks' error on the contact "
           "Hamiltonian; integrators/contact_splitting.c); H0 e^{−αt} for constant α, no forcing");
OBSERVABLE(o_invariants, "invariants", "I(q, v)", "as declared", LINEAR, 0, dim_invariants, label_invariant,
           has_invariants, eval_invariants,
           "the system's first integrals besides energy, e.g. momentum maps (`nhbench list systems`)");
OBSERVABLE(o_invariants_error, "invariants_error", "I − I_{ref}", "as declared", LOG, NH_OBS_REFERENCE, dim_invariants,
           label_invariant, has_invariants, eval_invariants_error,
           "invariants − their value on the exact or reference solution");
OBSERVABLE(o_derived, "derived", "derived", "per component (labels)", LINEAR, 0, dim_derived, label_derived,
           has_derived, eval_derived,
           "quantities the system declares, e.g. the Foucault pendulum's oscillation-plane angle "
           "(spec/herglotz.md §5 item 13; `nhbench list systems`)");
OBSERVABLE(o_derived_ref, "derived_reference", "derived (reference)", "per component (labels)", LINEAR,
           NH_OBS_REFERENCE, dim_derived, label_derived, has_derived, eval_derived_reference,
           "the system's derived quantities on the exact or reference solution (e.g. the exact plane angle)");
/* A norm of the error against the exact or reference solution: one value, on a log scale. */
#define ERROR_NORM(ID, NAME, SYMBOL, UNITS, EVAL, DOC)                                                                 \
  OBSERVABLE(ID, NAME, SYMBOL, UNITS, LOG, NH_OBS_REFERENCE, one, label_none, always, EVAL, DOC)

OBSERVABLE(o_q, "q", "q", "as q", LINEAR, 0, dim_n, label_q, always, eval_q, "the positions q");
OBSERVABLE(o_v, "v", "v", "as v", LINEAR, 0, dim_n, label_v, always, eval_v, "the velocities v");
OBSERVABLE(o_error, "error", "(q, v) − (q, v)_{ref}", "as q, v", LOG, NH_OBS_REFERENCE, dim_2n, label_qv, always,
           eval_error, "(q, v) − (q, v) of the exact or reference solution, per coordinate (signed)");
ERROR_NORM(o_error_max, "error_max", "‖(q, v) − (q, v)_{ref}‖_∞", "as q, v", eval_error_max,
           "max-norm of the (q, v) error");
ERROR_NORM(o_error_2, "error_2", "‖(q, v) − (q, v)_{ref}‖_2", "as q, v", eval_error_2, "2-norm of the (q, v) error");
ERROR_NORM(o_error_q_max, "error_q_max", "‖q − q_{ref}‖_∞", "as q", eval_error_q_max, "max-norm of the q error");
ERROR_NORM(o_error_q_2, "error_q_2", "‖q − q_{ref}‖_2", "as q", eval_error_q_2,
           "2-norm of the q error, ‖q − q_ref‖₂ (spec/herglotz.md §4, Fig. 6a)");
ERROR_NORM(o_error_v_max, "error_v_max", "‖v − v_{ref}‖_∞", "as v", eval_error_v_max, "max-norm of the v error");
ERROR_NORM(o_error_v_2, "error_v_2", "‖v − v_{ref}‖_2", "as v", eval_error_v_2, "2-norm of the v error");

const nh_observable *const nh_observables[] = {
    &o_energy, &o_energy_error, &o_rel_energy_error, &o_ref_energy, &o_power, &o_ref_power, &o_discrete_energy,
    &o_discrete_energy_error, &o_residual, &o_discrete_residual, &o_multiplier, &o_multiplier_time, &o_multiplier_error, &o_continuous_multiplier,
    &o_ref_multiplier, &o_shifted_residual, &o_error_v_half, &o_central_residual,
    &o_central_energy, &o_central_velocity_error, &o_impulse_energy, &o_invariants_discrete, &o_holonomic, &o_action,
    &o_contact_hamiltonian, &o_invariants, &o_invariants_error, &o_derived, &o_derived_ref, &o_q, &o_v, &o_error,
    &o_error_max, &o_error_2, &o_error_q_max, &o_error_q_2, &o_error_v_max, &o_error_v_2, NULL,
};

const nh_observable *nh_observable_find(const char *name) {
  for (int i = 0; nh_observables[i]; i++)
    if (strcmp(nh_observables[i]->name, name) == 0) return nh_observables[i];
  return NULL;
}

void nh_observable_sample(const nh_observable *o, const nh_obs_ctx *c, double *out) {
  const int w = o->width(c->sys);
  int ok = o->absent(c->m, c->sys) == NULL;
  if ((o->needs & NH_OBS_STEP) && !c->prev) ok = 0;
  if ((o->needs & NH_OBS_REFERENCE) && !c->ref) ok = 0;
  if ((o->needs & NH_OBS_LAMBDA_REFERENCE) && !c->ref_lambda) ok = 0;
  if ((o->needs & NH_OBS_TWO_STEPS) && !(c->prev && c->prev2)) ok = 0;
  if (ok) o->eval(c, out);
  else
    for (int i = 0; i < w; i++) out[i] = NAN;
}
