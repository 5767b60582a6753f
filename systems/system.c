/* Generic quantities derived from the system interface (spec/newmark.md §2.0). */
#include "systems/system.h"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_randist.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* Kinetic-energy margin below E when sampling q (spec/newmark.md §6 A10). */
#define NH_SAMPLE_MARGIN 0.1
#define NH_SAMPLE_TRIES 1000000

int nh_spd_solve(int m, double *S, double *b) {
  gsl_matrix_view Sv = gsl_matrix_view_array(S, (size_t)m, (size_t)m);
  gsl_vector_view bv = gsl_vector_view_array(b, (size_t)m);
  if (gsl_linalg_cholesky_decomp1(&Sv.matrix) != GSL_SUCCESS) return -1;
  return gsl_linalg_cholesky_svx(&Sv.matrix, &bv.vector) == GSL_SUCCESS ? 0 : -1;
}

static int cache_mass(nh_system *sys) {
  int n = sys->n;
  sys->type->mass(sys->p, sys->M);
  memcpy(sys->Minv, sys->M, sizeof(double) * (size_t)(n * n));
  gsl_matrix_view Mi = gsl_matrix_view_array(sys->Minv, (size_t)n, (size_t)n);
  if (gsl_linalg_cholesky_decomp1(&Mi.matrix) != GSL_SUCCESS) return -1;
  return gsl_linalg_cholesky_invert(&Mi.matrix) == GSL_SUCCESS ? 0 : -1;
}

int nh_system_init(nh_system *sys, const nh_system_type *type) {
  /* The library reports failures through return codes; GSL must not abort the process. */
  gsl_set_error_handler_off();
  memset(sys, 0, sizeof *sys);
  sys->type = type;
  sys->n = type->n;
  sys->k = type->k;
  nh_param_defaults(type->params, type->nparams, sys->p);
  return cache_mass(sys);
}

int nh_system_set_param(nh_system *sys, const char *name, double value, char *err, size_t errlen) {
  if (nh_param_set_value(sys->type->params, sys->type->nparams, sys->p, name, value, err, errlen))
    return -1;
  if (cache_mass(sys)) {
    snprintf(err, errlen, "system %s: mass matrix is not positive definite", sys->type->name);
    return -1;
  }
  return 0;
}

size_t nh_system_format(const nh_system *sys, char *buf, size_t len) {
  int w = snprintf(buf, len, "%s(", sys->type->name);
  size_t used = (size_t)w < len ? (size_t)w : len;
  used += nh_params_format(sys->type->params, sys->type->nparams, sys->p, buf + used, len - used);
  if (used + 1 < len) strcat(buf, ")");
  return used + 1;
}

void nh_system_default_state(const nh_system *sys, nh_state *x) {
  memset(x, 0, sizeof *x);
  memcpy(x->q, sys->type->q0, sizeof(double) * (size_t)sys->n);
  memcpy(x->v, sys->type->v0, sizeof(double) * (size_t)sys->n);
}

static double quad_form(int n, const double *M, const double *v) {
  double s = 0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) s += v[i] * M[i * n + j] * v[j];
  return s;
}

double nh_energy(const nh_system *sys, const double *q, const double *v) {
  return 0.5 * quad_form(sys->n, sys->M, v) + sys->type->potential(sys->p, q);
}

double nh_constraint_residual(const nh_system *sys, const double *q, const double *v) {
  int n = sys->n, k = sys->k;
  double A[NH_MAX_K * NH_MAX_N], r = 0;
  sys->type->constraints(sys->p, q, A);
  for (int a = 0; a < k; a++) {
    double s = 0;
    for (int i = 0; i < n; i++) s += A[a * n + i] * v[i];
    r = fmax(r, fabs(s));
  }
  return r;
}

void nh_curvature_term(const nh_system *sys, const double *q, const double *v, double *out) {
  int n = sys->n, k = sys->k;
  double dA[NH_MAX_K * NH_MAX_N * NH_MAX_N];
  sys->type->constraints_jacobian(sys->p, q, dA);
  for (int a = 0; a < k; a++) {
    double s = 0;
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++) s += dA[(a * n + i) * n + j] * v[j] * v[i];
    out[a] = s;
  }
}

/* C = A M⁻¹ Aᵀ (k×k) and W = M⁻¹ Aᵀ (n×k). */
static void constraint_gram(const nh_system *sys, const double *A, double *W, double *C) {
  int n = sys->n, k = sys->k;
  for (int i = 0; i < n; i++)
    for (int a = 0; a < k; a++) {
      double s = 0;
      for (int j = 0; j < n; j++) s += sys->Minv[i * n + j] * A[a * n + j];
      W[i * k + a] = s;
    }
  for (int a = 0; a < k; a++)
    for (int b = 0; b < k; b++) {
      double s = 0;
      for (int i = 0; i < n; i++) s += A[a * n + i] * W[i * k + b];
      C[a * k + b] = s;
    }
}

int nh_multiplier(const nh_system *sys, const double *q, const double *v, double *lambda) {
  int n = sys->n, k = sys->k;
  double A[NH_MAX_K * NH_MAX_N], W[NH_MAX_N * NH_MAX_K], C[NH_MAX_K * NH_MAX_K];
  double g[NH_MAX_N], curv[NH_MAX_K];
  sys->type->constraints(sys->p, q, A);
  sys->type->grad_potential(sys->p, q, g);
  constraint_gram(sys, A, W, C);
  nh_curvature_term(sys, q, v, curv);
  for (int a = 0; a < k; a++) {
    double s = 0; /* (A M⁻¹ ∇V)_a = Σ_i W_ia g_i, M symmetric */
    for (int i = 0; i < n; i++) s += W[i * k + a] * g[i];
    lambda[a] = s - curv[a];
  }
  return k ? nh_spd_solve(k, C, lambda) : 0;
}

int nh_acceleration(const nh_system *sys, const double *q, const double *v, double *acc) {
  int n = sys->n, k = sys->k;
  double A[NH_MAX_K * NH_MAX_N], lambda[NH_MAX_K], f[NH_MAX_N];
  if (nh_multiplier(sys, q, v, lambda)) return -1;
  sys->type->constraints(sys->p, q, A);
  sys->type->grad_potential(sys->p, q, f);
  for (int i = 0; i < n; i++) {
    f[i] = -f[i];
    for (int a = 0; a < k; a++) f[i] += A[a * n + i] * lambda[a];
  }
  for (int i = 0; i < n; i++) {
    double s = 0;
    for (int j = 0; j < n; j++) s += sys->Minv[i * n + j] * f[j];
    acc[i] = s;
  }
  return 0;
}

int nh_project_velocity(const nh_system *sys, const double *q, double *v) {
  int n = sys->n, k = sys->k;
  double A[NH_MAX_K * NH_MAX_N], W[NH_MAX_N * NH_MAX_K], C[NH_MAX_K * NH_MAX_K], y[NH_MAX_K];
  if (k == 0) return 0;
  sys->type->constraints(sys->p, q, A);
  constraint_gram(sys, A, W, C);
  for (int a = 0; a < k; a++) {
    double s = 0;
    for (int i = 0; i < n; i++) s += A[a * n + i] * v[i];
    y[a] = s;
  }
  if (nh_spd_solve(k, C, y)) return -1;
  for (int i = 0; i < n; i++)
    for (int a = 0; a < k; a++) v[i] -= W[i * k + a] * y[a];
  return 0;
}

int nh_sample_on_D(const nh_system *sys, double E, gsl_rng *rng, nh_state *x) {
  int n = sys->n;
  const double box = sys->type->sample_box;
  memset(x, 0, sizeof *x);
  for (long tries = 0; tries < NH_SAMPLE_TRIES; tries++) {
    for (int i = 0; i < n; i++) x->q[i] = gsl_ran_flat(rng, -box, box);
    double V = sys->type->potential(sys->p, x->q);
    if (V >= E - NH_SAMPLE_MARGIN) continue;
    for (int i = 0; i < n; i++) x->v[i] = gsl_ran_gaussian_ziggurat(rng, 1.0);
    if (nh_project_velocity(sys, x->q, x->v)) continue;
    double T = 0.5 * quad_form(n, sys->M, x->v);
    if (!(T > 0)) continue;
    double scale = sqrt((E - V) / T);
    for (int i = 0; i < n; i++) x->v[i] *= scale;
    return 0;
  }
  return -1;
}
