/* The β = β' = 0 structure of the nonholonomic Newmark family (spec/newmark.md §2.9, Prop 3.8),
 * shared by nh_newmark's fast path (integrators/nh_newmark.c) and the DLA recurrence
 * (integrators/dla.c, §2.6 Prop 3.5). Both move from q0 to q1 = q0 + dq with
 *   dq = dp + M⁻¹A(q0)ᵀΛ,      Φ(q0, q1) = 0   ((14) or (15) with parameter α, §2.4),
 * where dp is the unconstrained increment; they differ only in dp. Constant mass matrix and linear
 * constraints only (the methods decline other systems by their flags). */
#ifndef NH_NEWMARK_H
#define NH_NEWMARK_H

#include "integrators/integrator.h"

/* y = M⁻¹x with the system's cached constant M⁻¹. */
void nh_newmark_minv(const nh_system *sys, const double *x, double *y);

/* Solves Φ(q0, q0 + dq) = 0 for the increment dq = dp + M⁻¹A(q0)ᵀΛ, where dp is the
 * unconstrained increment and Λ the k multipliers: in closed form (one k×k solve) when Φ is linear
 * in Λ, otherwise by Newton on the k-dimensional problem. Increments rather than positions keep
 * dq/h free of cancellation. */
nh_step_status nh_newmark_constrained_increment(const nh_system *sys, int disc, double alpha, const double *q0,
                                                const double *dp, double *dq, nh_cost *cost);

/* The velocity of (N2)+(N4) with β' = 0 after the step dq = q1 − q0:
 * v1 = dq/h − (h/2)M⁻¹∇V(q1) + M⁻¹A(q1)ᵀΛ1/h with A(q1)v1 = 0, i.e. the M-orthogonal projection of
 * dq/h − (h/2)M⁻¹∇V(q1) onto D_{q1}. */
nh_step_status nh_newmark_end_velocity(const nh_system *sys, const double *q1, const double *dq, double h,
                                       double *v1, nh_cost *cost);

#endif
