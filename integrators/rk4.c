/* Classical 4-stage RK4 on the index-reduced ODE q̇ = v, v̇ = M⁻¹(−∇V + Aᵀλ(q,v)), no projection
 * (spec/newmark.md §2.10, §6 A5). Does not preserve the constraint. Cost per step: 4 right-hand
 * sides, each one evaluation of ∇V and (k > 0) of A(q). No multiplier of its own. */
#include <stddef.h>

#include "integrators/integrator.h"

/* Stage derivative at (q + s dq, v + s dv); dq = dv = NULL for the first stage. */
static int stage(const nh_system *sys, const nh_state *x, const double *dq, const double *dv, double s,
                 double *kq, double *kv, nh_cost *cost) {
  double q[NH_MAX_N], v[NH_MAX_N];
  for (int i = 0; i < sys->n; i++) {
    q[i] = dq ? x->q[i] + s * dq[i] : x->q[i];
    v[i] = dv ? x->v[i] + s * dv[i] : x->v[i];
    kq[i] = v[i];
  }
  cost->rhs_evals++;
  if (sys->k) cost->constraint_evals++; /* nh_acceleration evaluates A(q) once */
  return nh_acceleration(sys, x->t + s, q, v, kv);
}

static nh_step_status rk4_step(const nh_method *m NH_UNUSED, const nh_system *sys, const nh_state *x, nh_state *y,
                               double h, nh_cost *cost) {
  const int n = sys->n;
  double k1q[NH_MAX_N], k1v[NH_MAX_N], k2q[NH_MAX_N], k2v[NH_MAX_N];
  double k3q[NH_MAX_N], k3v[NH_MAX_N], k4q[NH_MAX_N], k4v[NH_MAX_N];
  cost->steps++;
  if (stage(sys, x, NULL, NULL, 0, k1q, k1v, cost) != 0 || stage(sys, x, k1q, k1v, h / 2, k2q, k2v, cost) != 0 ||
      stage(sys, x, k2q, k2v, h / 2, k3q, k3v, cost) != 0 || stage(sys, x, k3q, k3v, h, k4q, k4v, cost) != 0)
    return NH_STEP_SOLVER_FAILED;
  /* rk4 carries nothing and defines no multiplier: of x's other fields only z goes on (no copy
   * of the whole state, a tenth of a step's cost here). */
  y->t = x->t + h;
  y->z = x->z;
  for (int i = 0; i < n; i++) {
    y->q[i] = x->q[i] + h / 6 * (k1q[i] + 2 * k2q[i] + 2 * k3q[i] + k4q[i]);
    y->v[i] = x->v[i] + h / 6 * (k1v[i] + 2 * k2v[i] + 2 * k3v[i] + k4v[i]);
  }
  return NH_STEP_OK;
}

static int order(const nh_method *m NH_UNUSED) { return 4; }

const nh_integrator_type nh_integrator_rk4 = {
    .name = "rk4",
    .doc = "Classical RK4 on the index-reduced ODE with the eliminated multiplier lambda(q,v), no "
           "projection (spec/newmark.md 2.10). Order 4; the constraint is not preserved.",
    .handles = NH_SYS_VARIABLE_MASS | NH_SYS_AFFINE_CONSTRAINTS | NH_SYS_DAMPING | NH_SYS_FORCING |
               NH_SYS_TIME_DAMPING | NH_SYS_TIME_POTENTIAL, /* nh_acceleration takes t */
    .order = order,
    .step = rk4_step,
};
