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

/* rk8pd from x0 through the times T[0 … count−1], monotone away from x0->t, with one driver: x[i] is
 * x0 with t = T[i] and the integrated (q, v); untouched past a failure. x may alias x0. */
static int reference_sweep(const nh_system *sys, const nh_state *x0, int count, const double *T, double tol,
                           nh_state *x) {
  const int n = sys->n;
  const nh_state start = *x0;
  gsl_odeiv2_system ode = {reduced_ode, NULL, (size_t)(2 * n), (void *)sys};
  double h0 = T[0] >= start.t ? 1e-3 : -1e-3;
  /* GSL refuses a negative tolerance with no driver, which is then not out of memory. */
  if (!(tol >= 0)) return -1;
  gsl_odeiv2_driver *d = gsl_odeiv2_driver_alloc_y_new(&ode, gsl_odeiv2_step_rk8pd, h0, tol, tol);
  if (!d) return NH_REFERENCE_NO_MEMORY;
  double y[2 * NH_MAX_N], t = start.t;
  memcpy(y, start.q, sizeof(double) * (size_t)n);
  memcpy(y + n, start.v, sizeof(double) * (size_t)n);
  int status = GSL_SUCCESS;
  for (int i = 0; i < count && status == GSL_SUCCESS; i++) {
    /* the driver continues from where the previous time left it, in the same direction */
    if ((status = gsl_odeiv2_driver_apply(d, &t, T[i], y)) != GSL_SUCCESS) break;
    x[i] = start;
    x[i].t = T[i];
    memcpy(x[i].q, y, sizeof(double) * (size_t)n);
    memcpy(x[i].v, y + n, sizeof(double) * (size_t)n);
  }
  gsl_odeiv2_driver_free(d);
  return status == GSL_SUCCESS ? 0 : -1;
}

int nh_reference_solve(const nh_system *sys, const nh_state *x0, double T, double tol, nh_state *x) {
  return reference_sweep(sys, x0, 1, &T, tol, x);
}

int nh_true_solution_times(const nh_system *sys, const nh_state *x0, int count, const double *t, double tol,
                           nh_state *x, const char **kind) {
  int exact = nh_has_exact_solution(sys);
  for (int i = 0; exact && i < count; i++) exact = nh_exact_solution(sys, x0, t[i], &x[i]) == 0;
  if (kind) *kind = exact ? "exact" : "rk8pd";
  return exact ? 0 : reference_sweep(sys, x0, count, t, tol, x);
}

int nh_true_solution(const nh_system *sys, const nh_state *x0, double t, double tol, nh_state *x,
                     const char **kind) {
  return nh_true_solution_times(sys, x0, 1, &t, tol, x, kind);
}
