/* Generic quantities derived from the system interface (spec/newmark.md §2.0, spec/herglotz.md
 * §2.1): energy, constraint residuals, the eliminated multiplier and the index-reduced ODE. */
#define _POSIX_C_SOURCE 200809L /* strtok_r: declared only by POSIX; clang -fopenmp, unlike gcc, does not imply it */
#include "systems/system.h"
#include "core/text.h"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_randist.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cache_mass(nh_system *sys) {
  int n = sys->n;
  sys->constant_mass = sys->type->mass_jacobian == NULL;
  sys->unit_mass = 0;
  if (!sys->constant_mass) return 0;
  sys->type->mass(sys->p, NULL, sys->M);
  sys->unit_mass = 1;
  for (int i = 0; i < n * n; i++) sys->unit_mass &= sys->M[i] == (i % (n + 1) == 0);
  memcpy(sys->Minv, sys->M, sizeof(double) * (size_t)(n * n));
  return nh_spd_invert(n, sys->Minv);
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
  char msg[256];
  if (nh_param_set_value(sys->type->params, sys->type->nparams, sys->p, name, value, msg, sizeof msg) != 0) {
    snprintf(err, errlen, "system %s: %s", sys->type->name, msg);
    return -1;
  }
  if (cache_mass(sys) != 0) {
    snprintf(err, errlen, "system %s: mass matrix is not positive definite", sys->type->name);
    return -1;
  }
  return 0;
}

int nh_system_set_params_text(nh_system *sys, const char *text, char *err, size_t errlen) {
  char buf[512];
  snprintf(buf, sizeof buf, "%s", text ? text : "");
  for (char *save = NULL, *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
    char *eq = strchr(item, '='), *end;
    if (!eq) {
      snprintf(err, errlen, "system %s: expected name=value, got '%s'", sys->type->name, item);
      return -1;
    }
    *eq = '\0';
    double v = strtod(eq + 1, &end);
    if (end == eq + 1 || *end) {
      snprintf(err, errlen, "system %s: parameter %s='%s' is not a number", sys->type->name, item, eq + 1);
      return -1;
    }
    if (nh_system_set_param(sys, item, v, err, errlen) != 0) return -1;
  }
  return 0;
}

int nh_system_apply_preset(nh_system *sys, const char *name, nh_state *x, char *err, size_t errlen) {
  const nh_system_knowledge *kn = sys->type->knowledge;
  const int npresets = kn ? kn->npresets : 0;
  for (int i = 0; i < npresets; i++) {
    const nh_preset *pr = &kn->presets[i];
    if (strcmp(pr->name, name) != 0) continue;
    if (nh_system_set_params_text(sys, pr->params, err, errlen) != 0) return -1;
    memset(x, 0, sizeof *x);
    memcpy(x->q, pr->q, sizeof(double) * (size_t)sys->n);
    memcpy(x->v, pr->v, sizeof(double) * (size_t)sys->n);
    return 0;
  }
  char list[512] = "";
  for (int i = 0; i < npresets; i++) nh_text_append(list, sizeof list, ", ", "%s", kn->presets[i].name);
  snprintf(err, errlen, "system %s has no preset '%s' (presets: %s)", sys->type->name, name,
           npresets ? list : "none");
  return -1;
}

void nh_no_constraints(const double *p NH_UNUSED, const double *q NH_UNUSED, double *out NH_UNUSED) {}

void nh_unit_mass_matrix(int n, double *M) {
  memset(M, 0, sizeof(double) * (size_t)(n * n));
  for (int i = 0; i < n; i++) M[i * n + i] = 1;
}

unsigned nh_system_features(const nh_system *sys) {
  const nh_system_forces *fs = sys->type->forces;
  double F[NH_MAX_N];
  unsigned f = 0;
  if (!sys->constant_mass) f |= NH_SYS_VARIABLE_MASS;
  if (sys->type->affine) f |= NH_SYS_AFFINE_CONSTRAINTS;
  if (!fs) return f;
  if (fs->time_dependence) f |= fs->time_dependence(sys->p) & (NH_SYS_TIME_DAMPING | NH_SYS_TIME_POTENTIAL);
  /* A constant α is read at t = 0; a time-dependent one counts as damping even where α(0) = 0. */
  if ((f & NH_SYS_TIME_DAMPING) || (fs->damping && fs->damping(sys->p, 0) != 0)) f |= NH_SYS_DAMPING;
  if (fs->forcing && fs->forcing(sys->p, 0, F)) f |= NH_SYS_FORCING;
  return f;
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

void nh_mass(const nh_system *sys, const double *q, double *M) {
  if (sys->constant_mass) memcpy(M, sys->M, sizeof(double) * (size_t)(sys->n * sys->n));
  else sys->type->mass(sys->p, q, M);
}

const double *nh_mass_at(const nh_system *sys, const double *q, double *space) {
  if (sys->constant_mass) return sys->M;
  sys->type->mass(sys->p, q, space);
  return space;
}

const double *nh_mass_times(const nh_system *sys, const double *M, const double *v, double *space) {
  if (sys->unit_mass) return v;
  nh_matvec(sys->n, M, v, space);
  return space;
}

int nh_mass_solve(const nh_system *sys, const double *q, const double *p, double *v) {
  const int n = sys->n;
  if (sys->unit_mass) {
    memcpy(v, p, sizeof(double) * (size_t)n);
    return 0;
  }
  if (sys->constant_mass) {
    nh_matvec(n, sys->Minv, p, v);
    return 0;
  }
  double M[NH_MAX_N * NH_MAX_N];
  sys->type->mass(sys->p, q, M);
  memcpy(v, p, sizeof(double) * (size_t)n);
  return nh_spd_solve(n, M, v);
}

static double quad_form(int n, const double *M, const double *v) {
  double s = 0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) s += v[i] * M[i * n + j] * v[j];
  return s;
}

double nh_kinetic_energy(const nh_system *sys, const double *q, const double *v) {
  double space[NH_MAX_N * NH_MAX_N];
  if (sys->unit_mass) { /* quad_form's sum without its zero terms: the same number */
    double s = 0;
    for (int i = 0; i < sys->n; i++) s += v[i] * v[i];
    return 0.5 * s;
  }
  return 0.5 * quad_form(sys->n, nh_mass_at(sys, q, space), v);
}

double nh_energy(const nh_system *sys, const double *q, const double *v) {
  return nh_kinetic_energy(sys, q, v) + sys->type->potential(sys->p, q);
}

const char *nh_system_name(const nh_system *sys) { return sys->type->name; }

void nh_constraint_terms(const nh_system *sys, const double *q, double *A, double *b) {
  sys->type->constraints(sys->p, q, A);
  if (sys->type->affine) sys->type->affine->values(sys->p, q, b);
  else
    for (int a = 0; a < sys->k; a++) b[a] = 0;
}

void nh_constraint_values(const nh_system *sys, const double *q, const double *v, double *r) {
  const int n = sys->n, k = sys->k;
  double A[NH_MAX_K * NH_MAX_N];
  nh_constraint_terms(sys, q, A, r);
  for (int a = 0; a < k; a++)
    for (int i = 0; i < n; i++) r[a] += A[a * n + i] * v[i];
}

double nh_potential(const nh_system *sys, const double *q) { return sys->type->potential(sys->p, q); }

void nh_grad_potential(const nh_system *sys, const double *q, double *g) { sys->type->grad_potential(sys->p, q, g); }

int nh_forcing(const nh_system *sys, double t, double *F) {
  const nh_system_forces *fs = sys->type->forces;
  return fs && fs->forcing && fs->forcing(sys->p, t, F);
}

int nh_has_holonomic(const nh_system *sys) { return sys->type->holonomic != NULL; }

void nh_holonomic(const nh_system *sys, const double *q, double *phi) { sys->type->holonomic(sys->p, q, phi); }

/* The knowledge's invariants and derived quantities, NULL when the system has none. */
static const nh_system_invariants *invariants_of(const nh_system *sys) {
  return sys->type->knowledge ? sys->type->knowledge->invariants : NULL;
}

static const nh_system_derived *derived_of(const nh_system *sys) {
  return sys->type->knowledge ? sys->type->knowledge->derived : NULL;
}

int nh_invariant_count(const nh_system *sys) { return invariants_of(sys) ? invariants_of(sys)->count : 0; }

const char *nh_invariant_name(const nh_system *sys, int i) { return invariants_of(sys)->names[i]; }

void nh_invariants(const nh_system *sys, const double *q, const double *v, double *out) {
  invariants_of(sys)->values(sys->p, q, v, out);
}

int nh_derived_count(const nh_system *sys) { return derived_of(sys) ? derived_of(sys)->count : 0; }

const char *nh_derived_name(const nh_system *sys, int i) { return derived_of(sys)->names[i]; }

const char *nh_derived_units(const nh_system *sys, int i) {
  const char *const *u = derived_of(sys)->units;
  return u && u[i] ? u[i] : "";
}

void nh_derived(const nh_system *sys, double t, const double *q, const double *v, double *out) {
  derived_of(sys)->values(sys->p, t, q, v, out);
}

int nh_has_exact_solution(const nh_system *sys) { return sys->type->knowledge && sys->type->knowledge->exact; }

int nh_exact_solution(const nh_system *sys, const nh_state *x0, double t, nh_state *x) {
  return nh_has_exact_solution(sys) && sys->type->knowledge->exact(sys->p, x0, t, x) == 0 ? 0 : -1;
}

int nh_system_param_index(const nh_system *sys, const char *name) {
  return nh_param_index(sys->type->params, sys->type->nparams, name);
}

int nh_system_has_own_sampler(const nh_system *sys) { return sys->type->knowledge && sys->type->knowledge->sample; }

const char *nh_system_sampler_doc(const nh_system *sys) {
  return sys->type->knowledge ? sys->type->knowledge->sampler_doc : NULL;
}

double nh_constraint_residual(const nh_system *sys, const double *q, const double *v) {
  double r[NH_MAX_K], largest = 0;
  if (sys->k == 0) return 0;
  nh_constraint_values(sys, q, v, r);
  for (int a = 0; a < sys->k; a++) largest = fmax(largest, fabs(r[a]));
  return largest;
}

void nh_curvature_term(const nh_system *sys, const double *q, const double *v, double *out) {
  int n = sys->n, k = sys->k;
  const nh_affine_constraints *affine = sys->type->affine;
  double dA[NH_MAX_K * NH_MAX_N * NH_MAX_N], db[NH_MAX_K * NH_MAX_N];
  if (k == 0) return;
  if (sys->type->kernels && sys->type->kernels->constraint_curvature) {
    sys->type->kernels->constraint_curvature(sys->p, q, v, out);
    return;
  }
  sys->type->constraints_jacobian(sys->p, q, dA);
  if (affine) affine->jacobian(sys->p, q, db);
  for (int a = 0; a < k; a++) {
    double s = 0;
    for (int i = 0; i < n; i++) {
      for (int j = 0; j < n; j++) s += dA[(a * n + i) * n + j] * v[j] * v[i];
      if (affine) s += db[a * n + i] * v[i];
    }
    out[a] = s;
  }
}

void nh_constraint_derivative(const nh_system *sys, const double *q, const double *w, double *D) {
  const int n = sys->n, k = sys->k;
  double dA[NH_MAX_K * NH_MAX_N * NH_MAX_N];
  if (sys->type->kernels && sys->type->kernels->constraint_derivative) {
    sys->type->kernels->constraint_derivative(sys->p, q, w, D);
    return;
  }
  sys->type->constraints_jacobian(sys->p, q, dA);
  for (int a = 0; a < k; a++)
    for (int l = 0; l < n; l++) {
      double s = 0;
      for (int i = 0; i < n; i++) s += dA[(a * n + i) * n + l] * w[i];
      D[a * n + l] = s;
    }
}

double nh_contact_hamiltonian(const nh_system *sys, double t, const double *q, const double *v, double z) {
  const nh_system_forces *fs = sys->type->forces;
  double H = nh_energy(sys, q, v), F[NH_MAX_N];
  if (!fs) return H;
  if (fs->potential) H += fs->potential->value(sys->p, q, t);
  if (fs->forcing && fs->forcing(sys->p, t, F))
    for (int i = 0; i < sys->n; i++) H -= F[i] * q[i];
  if (fs->damping) H += fs->damping(sys->p, t) * z;
  return H;
}

double nh_damping(const nh_system *sys, double t) {
  const nh_system_forces *fs = sys->type->forces;
  return fs && fs->damping ? fs->damping(sys->p, t) : 0;
}

void nh_free_force(const nh_system *sys, double t, const double *q, const double *v, double *f) {
  const nh_system_type *T = sys->type;
  const nh_system_forces *fs = T->forces;
  const int n = sys->n;
  T->grad_potential(sys->p, q, f);
  if (fs && fs->potential) {
    double g[NH_MAX_N];
    fs->potential->gradient(sys->p, q, t, g);
    for (int i = 0; i < n; i++) f[i] += g[i];
  }
  for (int i = 0; i < n; i++) f[i] = -f[i];
  if (!sys->constant_mass) {
    /* −Ṁv + ½∂_q(vᵀMv): (Ṁv)_i = Σ_jl ∂_l M_ij v_l v_j, ½∂_i(vᵀMv) = ½ Σ_jl ∂_i M_jl v_j v_l. */
    double dM[NH_MAX_N * NH_MAX_N * NH_MAX_N];
    T->mass_jacobian(sys->p, q, dM);
    for (int i = 0; i < n; i++) {
      double s = 0;
      for (int j = 0; j < n; j++)
        for (int l = 0; l < n; l++)
          s += (0.5 * dM[(j * n + l) * n + i] - dM[(i * n + j) * n + l]) * v[j] * v[l];
      f[i] += s;
    }
  }
  if (!fs) return;
  if (fs->damping) {
    double alpha = fs->damping(sys->p, t), M[NH_MAX_N * NH_MAX_N];
    nh_mass(sys, q, M);
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++) f[i] -= alpha * M[i * n + j] * v[j];
  }
  if (fs->forcing) {
    double F[NH_MAX_N];
    if (fs->forcing(sys->p, t, F))
      for (int i = 0; i < n; i++) f[i] += F[i];
  }
}

/* W = M⁻¹Aᵀ (n×k) for the k×n A; Minv NULL: M = I, W = Aᵀ. */
static void minv_transpose(int n, int k, const double *Minv, const double *A, double *W) {
  if (!Minv) {
    for (int i = 0; i < n; i++)
      for (int a = 0; a < k; a++) W[i * k + a] = A[a * n + i];
    return;
  }
  for (int i = 0; i < n; i++)
    for (int a = 0; a < k; a++) {
      double s = 0;
      for (int j = 0; j < n; j++) s += Minv[i * n + j] * A[a * n + j];
      W[i * k + a] = s;
    }
}

void nh_mass_solve_transpose(const nh_system *sys, const double *A, double *W) {
  minv_transpose(sys->n, sys->k, sys->unit_mass ? NULL : sys->Minv, A, W);
}

/* W = M⁻¹ Aᵀ (n×k), C = A M⁻¹ Aᵀ (k×k), and *Minv = M⁻¹ at q: the system's cached inverse for a
 * constant mass (nothing copied), else `space` holding the inverse of M(q). */
static int constraint_gram(const nh_system *sys, const double *q, const double *A, double *space, const double **Minv,
                           double *W, double *C) {
  int n = sys->n, k = sys->k;
  if (sys->constant_mass) {
    *Minv = sys->Minv;
  } else {
    sys->type->mass(sys->p, q, space);
    if (nh_spd_invert(n, space) != 0) return -1;
    *Minv = space;
  }
  minv_transpose(n, k, sys->unit_mass ? NULL : *Minv, A, W);
  for (int a = 0; a < k; a++)
    for (int b = 0; b < k; b++) {
      double s = 0;
      for (int i = 0; i < n; i++) s += A[a * n + i] * W[i * k + b];
      C[a * k + b] = s;
    }
  return 0;
}

/* λ and the free force together, for nh_acceleration; *Minv as constraint_gram's. */
static int multiplier_and_force(const nh_system *sys, double t, const double *q, const double *v, double *lambda,
                                double *f, double *A, double *space, const double **Minv) {
  int n = sys->n, k = sys->k;
  double W[NH_MAX_N * NH_MAX_K], C[NH_MAX_K * NH_MAX_K], curv[NH_MAX_K];
  if (k) sys->type->constraints(sys->p, q, A);
  nh_free_force(sys, t, q, v, f);
  if (constraint_gram(sys, q, A, space, Minv, W, C) != 0) return -1;
  if (k == 0) return 0;
  nh_curvature_term(sys, q, v, curv);
  for (int a = 0; a < k; a++) {
    double s = 0; /* (A M⁻¹ f)_a = Σ_i W_ia f_i, M symmetric */
    for (int i = 0; i < n; i++) s += W[i * k + a] * f[i];
    lambda[a] = -s - curv[a];
  }
  return nh_spd_solve(k, C, lambda);
}

int nh_multiplier(const nh_system *sys, double t, const double *q, const double *v, double *lambda) {
  double A[NH_MAX_K * NH_MAX_N], f[NH_MAX_N], space[NH_MAX_N * NH_MAX_N];
  const double *Minv;
  if (sys->type->kernels && sys->type->kernels->acceleration)
    return sys->type->kernels->acceleration(sys->p, t, q, v, f, lambda);
  return multiplier_and_force(sys, t, q, v, lambda, f, A, space, &Minv);
}

/* nh_acceleration's a with its multiplier λ (nh_multiplier's). */
static int acceleration_multiplier(const nh_system *sys, double t, const double *q, const double *v, double *acc,
                                   double *lambda) {
  int n = sys->n, k = sys->k;
  double A[NH_MAX_K * NH_MAX_N], f[NH_MAX_N], space[NH_MAX_N * NH_MAX_N];
  const double *Minv;
  if (sys->type->kernels && sys->type->kernels->acceleration)
    return sys->type->kernels->acceleration(sys->p, t, q, v, acc, lambda);
  if (multiplier_and_force(sys, t, q, v, lambda, f, A, space, &Minv) != 0) return -1;
  for (int i = 0; i < n; i++)
    for (int a = 0; a < k; a++) f[i] += A[a * n + i] * lambda[a];
  if (sys->unit_mass) {
    memcpy(acc, f, sizeof(double) * (size_t)n);
    return 0;
  }
  nh_matvec(n, Minv, f, acc);
  return 0;
}

int nh_acceleration(const nh_system *sys, double t, const double *q, const double *v, double *acc) {
  double lambda[NH_MAX_K];
  return acceleration_multiplier(sys, t, q, v, acc, lambda);
}

/* ---- lanes (core/lanes.h) ---- */

/* Lane l's point of x (n components, lane layout) into p. */
static void lane_point(int n, const double *x, int l, double *p) {
  for (int i = 0; i < n; i++) p[i] = x[i * NH_LANES + l];
}

/* A system without a lane kernel: its scalar function lane by lane (the *_lane_by_lane functions
 * below). Not inlined into the nh_lanes_* function that chooses, so that the kernel's path there is
 * a jump, with no stack frame for these arrays: rk4's ensemble on the chaotic particle spent 7 % of
 * its time in nh_lanes_acceleration's frame before. */
#define NH_LANE_BY_LANE __attribute__((noinline))

NH_LANE_BY_LANE static void acceleration_lane_by_lane(const nh_system *sys, const double *t, const double *q,
                                                      const double *v, double *a, double *lambda, int *status) {
  const int n = sys->n;
  for (int l = 0; l < NH_LANES; l++) {
    double ql[NH_MAX_N], vl[NH_MAX_N], al[NH_MAX_N], yl[NH_MAX_K];
    lane_point(n, q, l, ql), lane_point(n, v, l, vl);
    status[l] = acceleration_multiplier(sys, t[l], ql, vl, al, yl);
    for (int i = 0; i < n; i++) a[i * NH_LANES + l] = al[i];
    for (int i = 0; i < sys->k; i++) lambda[i * NH_LANES + l] = yl[i];
  }
}

void nh_lanes_acceleration(const nh_system *sys, const double *t, const double *q, const double *v, double *a,
                           double *lambda, int *status) {
  const nh_system_kernels *kn = sys->type->kernels;
  if (kn && kn->acceleration_lanes) kn->acceleration_lanes(sys->p, t, q, v, a, lambda, status);
  else acceleration_lane_by_lane(sys, t, q, v, a, lambda, status);
}

NH_LANE_BY_LANE static void residual_lane_by_lane(const nh_system *sys, const double *q, const double *v, double *out) {
  for (int l = 0; l < NH_LANES; l++) {
    double ql[NH_MAX_N], vl[NH_MAX_N];
    lane_point(sys->n, q, l, ql), lane_point(sys->n, v, l, vl);
    out[l] = nh_constraint_residual(sys, ql, vl);
  }
}

void nh_lanes_constraint_residual(const nh_system *sys, const double *q, const double *v, double *out) {
  const nh_system_kernels *kn = sys->type->kernels;
  if (kn && kn->constraint_residual_lanes) kn->constraint_residual_lanes(sys->p, q, v, out);
  else residual_lane_by_lane(sys, q, v, out);
}

/* out = f(q) at every lane's point (count values per point, lane layout): the system's lane
 * kernel lanes_f when it has one, else its scalar f lane by lane. */
typedef void (*of_q_fn)(const double *p, const double *q, double *out);
static void lanes_of_q(const nh_system *sys, of_q_fn lanes_f, of_q_fn f, int count, const double *q, double *out) {
  if (lanes_f) {
    lanes_f(sys->p, q, out);
    return;
  }
  for (int l = 0; l < NH_LANES; l++) {
    double ql[NH_MAX_N], ol[NH_MAX_K * NH_MAX_N * NH_MAX_N];
    lane_point(sys->n, q, l, ql);
    f(sys->p, ql, ol);
    for (int i = 0; i < count; i++) out[i * NH_LANES + l] = ol[i];
  }
}

#define LANE_KERNEL(sys, name) ((sys)->type->kernels ? (sys)->type->kernels->name : NULL)

void nh_lanes_grad_potential(const nh_system *sys, const double *q, double *g) {
  lanes_of_q(sys, LANE_KERNEL(sys, grad_potential_lanes), sys->type->grad_potential, sys->n, q, g);
}

void nh_lanes_constraints(const nh_system *sys, const double *q, double *A) {
  lanes_of_q(sys, LANE_KERNEL(sys, constraints_lanes), sys->type->constraints, sys->k * sys->n, q, A);
}

void nh_lanes_hess_potential(const nh_system *sys, const double *q, double *H) {
  lanes_of_q(sys, LANE_KERNEL(sys, hess_potential_lanes), sys->type->hess_potential, sys->n * sys->n, q, H);
}

void nh_lanes_constraints_jacobian(const nh_system *sys, const double *q, double *dA) {
  lanes_of_q(sys, LANE_KERNEL(sys, constraints_jacobian_lanes), sys->type->constraints_jacobian,
             sys->k * sys->n * sys->n, q, dA);
}

NH_LANE_BY_LANE static void potential_lane_by_lane(const nh_system *sys, const double *q, double *V) {
  for (int l = 0; l < NH_LANES; l++) {
    double ql[NH_MAX_N];
    lane_point(sys->n, q, l, ql);
    V[l] = sys->type->potential(sys->p, ql);
  }
}

void nh_lanes_potential(const nh_system *sys, const double *q, double *V) {
  if (LANE_KERNEL(sys, potential_lanes)) sys->type->kernels->potential_lanes(sys->p, q, V);
  else potential_lane_by_lane(sys, q, V);
}

/* nh_kinetic_energy's unit-mass sum, lane by lane. */
static inline NH_LANES_INLINE void unit_kinetic_lanes(int n, const double *v, double *T) {
  double s[NH_LANES] = {0};
  for (int i = 0; i < n; i++) {
#pragma omp simd
    for (int l = 0; l < NH_LANES; l++) s[l] += v[i * NH_LANES + l] * v[i * NH_LANES + l];
  }
#pragma omp simd
  for (int l = 0; l < NH_LANES; l++) T[l] = 0.5 * s[l];
}
NH_LANES_ISA_VARIANTS(unit_kinetic, (int n, const double *v, double *T), (n, v, T))

NH_LANE_BY_LANE static void kinetic_lane_by_lane(const nh_system *sys, const double *q, const double *v, double *T) {
  for (int l = 0; l < NH_LANES; l++) {
    double ql[NH_MAX_N], vl[NH_MAX_N];
    lane_point(sys->n, q, l, ql), lane_point(sys->n, v, l, vl);
    T[l] = nh_kinetic_energy(sys, ql, vl);
  }
}

void nh_lanes_kinetic_energy(const nh_system *sys, const double *q, const double *v, double *T) {
  if (sys->unit_mass) unit_kinetic(sys->n, v, T);
  else kinetic_lane_by_lane(sys, q, v, T);
}

NH_LANE_BY_LANE static void derivative_lane_by_lane(const nh_system *sys, const double *q, const double *w, double *D) {
  const int n = sys->n, kn = sys->k * sys->n;
  for (int l = 0; l < NH_LANES; l++) {
    double ql[NH_MAX_N], wl[NH_MAX_N], Dl[NH_MAX_K * NH_MAX_N];
    lane_point(n, q, l, ql), lane_point(n, w, l, wl);
    nh_constraint_derivative(sys, ql, wl, Dl);
    for (int i = 0; i < kn; i++) D[i * NH_LANES + l] = Dl[i];
  }
}

void nh_lanes_constraint_derivative(const nh_system *sys, const double *q, const double *w, double *D) {
  if (LANE_KERNEL(sys, constraint_derivative_lanes)) sys->type->kernels->constraint_derivative_lanes(sys->p, q, w, D);
  else derivative_lane_by_lane(sys, q, w, D);
}

const double *nh_lanes_mass_times(const nh_system *sys, const double *x, double *space) {
  if (sys->unit_mass) return x;
  nh_lanes_matvec(sys->n, sys->M, x, space);
  return space;
}

const double *nh_lanes_mass_solved(const nh_system *sys, const double *p, double *space) {
  if (sys->unit_mass) return p;
  nh_lanes_matvec(sys->n, sys->Minv, p, space);
  return space;
}

void nh_lanes_mass_solve(const nh_system *sys, const double *p, double *v) {
  if (sys->unit_mass)
    memcpy(v, p, sizeof(double) * (size_t)(sys->n * NH_LANES));
  else nh_lanes_matvec(sys->n, sys->Minv, p, v);
}

/* minv_transpose's sums, lane by lane (Minv NULL: the transposed copy). */
static inline NH_LANES_INLINE void transpose_minv_lanes(int n, int k, const double *Minv, const double *A, double *W) {
  for (int i = 0; i < n; i++)
    for (int a = 0; a < k; a++) {
      double *const w = &W[(i * k + a) * NH_LANES];
      if (!Minv) {
#pragma omp simd
        for (int l = 0; l < NH_LANES; l++) w[l] = A[(a * n + i) * NH_LANES + l];
        continue;
      }
      double s[NH_LANES] = {0};
      for (int j = 0; j < n; j++) {
        const double m = Minv[i * n + j];
#pragma omp simd
        for (int l = 0; l < NH_LANES; l++) s[l] += m * A[(a * n + j) * NH_LANES + l];
      }
#pragma omp simd
      for (int l = 0; l < NH_LANES; l++) w[l] = s[l];
    }
}
NH_LANES_ISA_VARIANTS(transpose_minv, (int n, int k, const double *Minv, const double *A, double *W),
                      (n, k, Minv, A, W))

void nh_lanes_mass_solve_transpose(const nh_system *sys, const double *A, double *W) {
  transpose_minv(sys->n, sys->k, sys->unit_mass ? NULL : sys->Minv, A, W);
}

/* nh_project_onto's unit-mass one-constraint pass, lane by lane: c = |A|², y = A·v, then where c
 * is positive and finite (nh_spd_solve_scalar) y /= c and v −= A y; elsewhere -1, v as it was.
 * No arithmetic under a condition: GCC's vectorizer does not compute a division or a product that a
 * condition guards on every lane (it might raise a flag the condition avoids, -ftrapping-math), and
 * at AVX2 and SSE2 these loops stayed scalar, a branch per lane: a third of nh_rattle's time in
 * lanes. So every lane divides, by 1 where c is unfit (s / 1 is s, bit for bit), and the update is
 * kept or dropped by a select on its bits (nh_lanes_pick). */
static inline NH_LANES_INLINE void project_unit_one_lanes(int n, const double *A, double *v, double *y, int *status) {
  double c[NH_LANES] = {0}, s[NH_LANES] = {0}, divisor[NH_LANES];
  uint64_t fit[NH_LANES];
  for (int i = 0; i < n; i++) {
#pragma omp simd
    for (int l = 0; l < NH_LANES; l++) {
      const double a = A[i * NH_LANES + l];
      c[l] += a * a, s[l] += a * v[i * NH_LANES + l];
    }
  }
  /* The divisor, c where it is positive and finite, else 1, in a loop of its own: in one loop with
   * the division GCC kept it scalar. */
#pragma omp simd
  for (int l = 0; l < NH_LANES; l++) {
    const double positive = c[l] > 0 ? c[l] : 1;
    divisor[l] = c[l] - c[l] == 0 ? positive : 1;
  }
#pragma omp simd
  for (int l = 0; l < NH_LANES; l++) {
    const int ok = divisor[l] == c[l]; /* c was fit: where it was not, the divisor is 1 and c is 0, NaN or ∞ */
    fit[l] = nh_lanes_mask(ok);
    status[l] = ok ? 0 : -1;
    y[l] = s[l] / divisor[l];
  }
  for (int i = 0; i < n; i++) {
#pragma omp simd
    for (int l = 0; l < NH_LANES; l++) {
      const double w = v[i * NH_LANES + l];
      v[i * NH_LANES + l] = nh_lanes_pick(fit[l], w - A[i * NH_LANES + l] * y[l], w);
    }
  }
}
NH_LANES_ISA_VARIANTS(project_unit_one, (int n, const double *A, double *v, double *y, int *status),
                      (n, A, v, y, status))

NH_LANE_BY_LANE static void project_lane_by_lane(const nh_system *sys, const double *A, double *v, double *y,
                                                 int *status) {
  const int n = sys->n, k = sys->k;
  for (int l = 0; l < NH_LANES; l++) {
    double Al[NH_MAX_K * NH_MAX_N], vl[NH_MAX_N], yl[NH_MAX_K];
    lane_point(n * k, A, l, Al), lane_point(n, v, l, vl);
    status[l] = nh_project_onto(sys, NULL, Al, NULL, vl, yl);
    for (int i = 0; i < n; i++) v[i * NH_LANES + l] = vl[i];
    for (int a = 0; a < k; a++) y[a * NH_LANES + l] = yl[a];
  }
}

void nh_lanes_project_onto(const nh_system *sys, const double *A, double *v, double *y, int *status) {
  const int n = sys->n, k = sys->k;
  if (k == 0) {
    for (int l = 0; l < NH_LANES; l++) status[l] = 0;
    return;
  }
  if (sys->unit_mass && k == 1) project_unit_one(n, A, v, y, status);
  else project_lane_by_lane(sys, A, v, y, status); /* the general case */
}

int nh_constraint_gram(const nh_system *sys, const double *q, const double *A, double *W, double *C) {
  double space[NH_MAX_N * NH_MAX_N];
  const double *Minv;
  return constraint_gram(sys, q, A, space, &Minv, W, C);
}

int nh_project_velocity(const nh_system *sys, const double *q, double *v) {
  double y[NH_MAX_K];
  return nh_project_velocity_multiplier(sys, q, v, y);
}

int nh_project_velocity_multiplier(const nh_system *sys, const double *q, double *v, double *y) {
  double A[NH_MAX_K * NH_MAX_N], b[NH_MAX_K];
  if (sys->k == 0) return 0;
  sys->type->constraints(sys->p, q, A);
  if (sys->type->affine) sys->type->affine->values(sys->p, q, b);
  return nh_project_onto(sys, q, A, sys->type->affine ? b : NULL, v, y);
}

int nh_project_onto(const nh_system *sys, const double *q, const double *A, const double *b, double *v, double *y) {
  const int n = sys->n, k = sys->k;
  double W[NH_MAX_N * NH_MAX_K], C[NH_MAX_K * NH_MAX_K], space[NH_MAX_N * NH_MAX_N];
  const double *Minv;
  if (k == 0) return 0;
  if (sys->unit_mass && k == 1) { /* the common case, in one pass: the same sums in the same order */
    double c = 0;
    y[0] = b ? b[0] : 0;
    for (int i = 0; i < n; i++) c += A[i] * A[i], y[0] += A[i] * v[i];
    if (nh_spd_solve_scalar(&c, y, 1) != 0) return -1;
    for (int i = 0; i < n; i++) v[i] -= A[i] * y[0];
    return 0;
  }
  if (sys->unit_mass) { /* W = Aᵀ: C = A Aᵀ read from A, the same numbers without the copy */
    for (int a = 0; a < k; a++)
      for (int c = 0; c < k; c++) {
        double s = 0;
        for (int i = 0; i < n; i++) s += A[a * n + i] * A[c * n + i];
        C[a * k + c] = s;
      }
  } else if (constraint_gram(sys, q, A, space, &Minv, W, C) != 0) {
    return -1;
  }
  for (int a = 0; a < k; a++) {
    double s = b ? b[a] : 0;
    for (int i = 0; i < n; i++) s += A[a * n + i] * v[i];
    y[a] = s;
  }
  if (nh_spd_solve(k, C, y) != 0) return -1;
  if (sys->unit_mass)
    for (int i = 0; i < n; i++)
      for (int a = 0; a < k; a++) v[i] -= A[a * n + i] * y[a];
  else
    for (int i = 0; i < n; i++)
      for (int a = 0; a < k; a++) v[i] -= W[i * k + a] * y[a];
  return 0;
}

/* A system's own sampler (knowledge->sample) when it has one, for affine or holonomic constraints
 * where projecting and rescaling v would leave D; otherwise the generic draw of spec/newmark.md
 * §6 A10, whose sequence of random numbers is unchanged so that existing ensembles reproduce bit
 * for bit. */
int nh_sample_on_D(const nh_system *sys, double E, gsl_rng *rng, nh_state *x) {
  int n = sys->n;
  const nh_system_knowledge *kn = sys->type->knowledge;
  memset(x, 0, sizeof *x);
  if (!kn) return -2;
  const double box = kn->sample_box;
  if (kn->sample) return kn->sample(sys->p, E, rng, x);
  if (sys->type->affine || sys->type->holonomic) return -2;
  for (long tries = 0; tries < NH_SAMPLE_TRIES; tries++) {
    for (int i = 0; i < n; i++) x->q[i] = gsl_ran_flat(rng, -box, box);
    double V = sys->type->potential(sys->p, x->q);
    if (V >= E - NH_SAMPLE_MARGIN) continue;
    for (int i = 0; i < n; i++) x->v[i] = gsl_ran_gaussian_ziggurat(rng, 1.0);
    if (nh_project_velocity(sys, x->q, x->v) != 0) continue;
    double T = nh_kinetic_energy(sys, x->q, x->v);
    if (!(T > 0)) continue;
    double scale = sqrt((E - V) / T);
    for (int i = 0; i < n; i++) x->v[i] *= scale;
    return 0;
  }
  return -1;
}
