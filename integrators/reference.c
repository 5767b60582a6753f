/* High-accuracy reference for systems without an exact solution: GSL's adaptive rk8pd
 * (Prince–Dormand 8(9)) on the index-reduced ODE q̇ = v, v̇ = Γ_nh(q, v, λ(q,v)). */
#include <gsl/gsl_errno.h>
#include <gsl/gsl_odeiv2.h>
#include <string.h>

#include "integrators/integrator.h"

static int reduced_ode(double t, const double y[], double f[], void *params) {
  const nh_system *sys = params;
  const int n = sys->n;
  memcpy(f, y + n, sizeof(double) * (size_t)n);
  return nh_acceleration(sys, t, y, y + n, f + n) != 0 ? GSL_EBADFUNC : GSL_SUCCESS;
}

int nh_reference_solve(const nh_system *sys, const nh_state *x0, double T, double tol, nh_state *x) {
  const int n = sys->n;
  gsl_odeiv2_system ode = {reduced_ode, NULL, (size_t)(2 * n), (void *)sys};
  double h0 = T >= x0->t ? 1e-3 : -1e-3;
  /* GSL refuses a negative tolerance with no driver, which is then not out of memory. */
  if (!(tol >= 0)) return -1;
  gsl_odeiv2_driver *d = gsl_odeiv2_driver_alloc_y_new(&ode, gsl_odeiv2_step_rk8pd, h0, tol, tol);
  if (!d) return NH_REFERENCE_NO_MEMORY;
  double y[2 * NH_MAX_N], t = x0->t;
  memcpy(y, x0->q, sizeof(double) * (size_t)n);
  memcpy(y + n, x0->v, sizeof(double) * (size_t)n);
  int status = gsl_odeiv2_driver_apply(d, &t, T, y);
  gsl_odeiv2_driver_free(d);
  if (status != GSL_SUCCESS) return -1;
  *x = *x0;
  x->t = T;
  memcpy(x->q, y, sizeof(double) * (size_t)n);
  memcpy(x->v, y + n, sizeof(double) * (size_t)n);
  return 0;
}

int nh_true_solution(const nh_system *sys, const nh_state *x0, double t, double tol, nh_state *x,
                     const char **kind) {
  if (sys->type->exact && sys->type->exact(sys->p, x0, t, x) == 0) {
    if (kind) *kind = "exact";
    return 0;
  }
  if (kind) *kind = "rk8pd";
  return nh_reference_solve(sys, x0, t, tol, x);
}
