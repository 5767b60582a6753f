/* The β = β' = 0 structure of the nonholonomic Newmark family (spec/newmark.md §2.9, Prop 3.8),
 * shared by nh_newmark's fast path (integrators/nh_newmark.c) and the DLA recurrence
 * (integrators/dla.c, §2.6 Prop 3.5). Both move from q0 to q1 = q0 + dq with
 *   dq = dp + M⁻¹A(q0)ᵀΛ,      Φ(q0, q1) = 0   ((14) or (15) with parameter α, §2.4),
 * where dp is the unconstrained increment; they differ only in dp. Constant mass matrix and linear
 * constraints only (the methods decline other systems by their flags).
 * Also shared: the discrete constraint Φ and the discrete Lagrangian L_d^{sym,α} (§2.4, §2.6), which
 * both methods expose to the observables (integrators/integrator.h). */
#ifndef NH_NEWMARK_H
#define NH_NEWMARK_H

#include "integrators/integrator.h"

/* The `constraint` parameter of nh_newmark and dla, a choice (core/param.h) of the discrete
 * constraint Φ of spec/newmark.md §2.4: point = (14), μ at (1−α)q_k + αq_{k+1}; average = (15),
 * (1−α)μ(q_k) + αμ(q_{k+1}). The functions below take the equation number, 14 or 15, as `disc`. */
enum { NH_CONSTRAINT_POINT, NH_CONSTRAINT_AVERAGE };
extern const char *const nh_newmark_constraint_choices[];
#define NH_NEWMARK_CONSTRAINT_PARAM                                                                             \
  {"constraint", NH_PARAM_CHOICE, NH_CONSTRAINT_POINT, 0, 1,                                                   \
   "discrete constraint: point = mu at (1-alpha) q_k + alpha q_{k+1}, spec/newmark.md (14); "                   \
   "average = (1-alpha) mu(q_k) + alpha mu(q_{k+1}), (15)",                                                    \
   0, nh_newmark_constraint_choices}
/* The old spelling disc=14|15 (equation numbers), still read with a deprecation note. */
#define NH_NEWMARK_DISC_ALIASES {"disc", "14", "constraint", "point"}, {"disc", "15", "constraint", "average"}
/* The equation number of a `constraint` value. */
static inline int nh_newmark_disc(double constraint) { return constraint == NH_CONSTRAINT_POINT ? 14 : 15; }

/* y = M⁻¹x with the system's cached constant M⁻¹. */
void nh_newmark_minv(const nh_system *sys, const double *x, double *y);

/* Solves Φ(q0, q0 + dq) = 0 for the increment dq = dp + M⁻¹A(q0)ᵀΛ, where dp is the
 * unconstrained increment and Λ the k multipliers: in closed form (one k×k solve) when Φ is linear
 * in Λ, otherwise by Newton on the k-dimensional problem. Increments rather than positions keep
 * dq/h free of cancellation. Lambda (k entries, may be NULL) receives Λ. */
nh_step_status nh_newmark_constrained_increment(const nh_system *sys, int disc, double alpha, const double *q0,
                                                const double *dp, double *dq, double *Lambda, nh_cost *cost);

/* The k-dimensional problem nh_newmark_constrained_increment solves, R(Λ) = h Φ(q0, q0 + dq(Λ)) =
 * ⟨μ̄, dq(Λ)⟩ (k) and its Jacobian J = ∂R/∂Λ (k×k, row-major; not written when J is NULL), for the
 * Newton hooks. Counts its evaluations of A in cost. */
void nh_newmark_increment_eval(const nh_system *sys, int disc, double alpha, const double *q0, const double *dp,
                               const double *Lambda, double *R, double *J, nh_cost *cost);

/* The velocity of (N2)+(N4) with β' = 0 after the step dq = q1 − q0:
 * v1 = dq/h − (h/2)M⁻¹∇V(q1) + M⁻¹A(q1)ᵀΛ1/h with A(q1)v1 = 0, i.e. the M-orthogonal projection of
 * dq/h − (h/2)M⁻¹∇V(q1) onto D_{q1}. Lambda1 (k entries, may be NULL) receives the scaled multiplier
 * Λ1 = (h²/2)λ'_{k+1} of (N2), in the +Aᵀλ convention. */
nh_step_status nh_newmark_end_velocity(const nh_system *sys, const double *q1, const double *dq, double h,
                                       double *v1, double *Lambda1, nh_cost *cost);

/* The discrete constraint of (N3), spec/newmark.md §2.4, for the step q0 → q1 of size h (k entries):
 *   (14) Φ^a = ⟨μ^a((1−α) q0 + α q1), (q1 − q0)/h⟩,   (15) Φ̃^a = ⟨(1−α) μ^a(q0) + α μ^a(q1), (q1 − q0)/h⟩. */
void nh_newmark_discrete_constraint(const nh_system *sys, int disc, double alpha, const double *q0,
                                    const double *q1, double h, double *phi);

/* L_d^{sym,α}(q0, q1) = (1/(2h)) (q1−q0)ᵀ M (q1−q0) − h(1−α)V(q0) − hαV(q1) (spec/newmark.md §2.6,
 * with the ½ of typo A2 restored), an approximation of ∫ L dt over the step. */
double nh_newmark_discrete_action(const nh_system *sys, double alpha, const double *q0, const double *q1, double h);

#endif
