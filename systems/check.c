/* The system contract on any system (systems/check.h). Central differences with step
 * δ = 1e-6·max(1, |q_j|): truncation O(δ²) ≈ 1e-12 and round-off O(ε/δ) ≈ 1e-10 relative, so a
 * derivative within 1e-6 of them is right and a wrong sign or a missing term is off by O(1). */
#include "systems/check.h"

#include <float.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define FD_TOLERANCE 1e-6
/* Kernels and closed forms against the generic code: the same quantity in another order of
 * operations, equal to round-off (a few ulps of the terms' size, times the terms' count). */
#define KERNEL_TOLERANCE 1e-10
#define ON_D_TOLERANCE 1e-12

typedef void (*vector_fn)(const nh_system *sys, const double *q, double *out); /* out has m entries */

/* The worst entry so far of one check, its error given. */
static void compare_error(nh_system_check *c, const nh_system *sys, const double *q, const char *entry, double error,
                          double got, double want, const char *reference) {
  if (!(error <= c->error) && !(c->error != c->error)) { /* NaN is the worst */
    c->error = error != error ? NAN : error;
    int at =
        snprintf(c->where, sizeof c->where, "%s is %.17g where %s gives %.17g, at q = (", entry, got, reference, want);
    for (int i = 0; i < sys->n && at > 0 && at < (int)sizeof c->where; i++)
      at += snprintf(c->where + at, sizeof c->where - (size_t)at, "%s%.6g", i ? ", " : "", q[i]);
    if (at > 0 && at < (int)sizeof c->where) snprintf(c->where + at, sizeof c->where - (size_t)at, ")");
  }
}

static void compare(nh_system_check *c, const nh_system *sys, const double *q, const char *entry, double got,
                    double want, const char *reference) {
  compare_error(c, sys, q, entry, fabs(got - want) / fmax(1, fabs(want)), got, want, reference);
}

/* To the bit (a NaN against any NaN: IEEE 754 leaves a NaN result's sign and payload open): other
 * bits are an error of at least the smallest double, so that −0 against 0 fails a tolerance of 0. */
static void compare_bits(nh_system_check *c, const nh_system *sys, const double *q, const char *entry, double got,
                         double want, const char *reference) {
  if (!memcmp(&got, &want, sizeof got) || (isnan(got) && isnan(want))) return;
  const double error = fabs(got - want) / fmax(1, fabs(want));
  compare_error(c, sys, q, entry, error > 0 || isnan(error) ? error : DBL_TRUE_MIN, got, want, reference);
}

/* Column j of the central difference of f (m values) at q into d. */
static void central_difference(const nh_system *sys, vector_fn f, int m, const double *q, int j, double *d) {
  double qp[NH_MAX_N], qm[NH_MAX_N], fp[NH_MAX_N * NH_MAX_N * NH_MAX_N], fm[NH_MAX_N * NH_MAX_N * NH_MAX_N];
  const double delta = 1e-6 * fmax(1, fabs(q[j]));
  memcpy(qp, q, sizeof(double) * (size_t)sys->n);
  memcpy(qm, q, sizeof(double) * (size_t)sys->n);
  qp[j] += delta, qm[j] -= delta;
  f(sys, qp, fp);
  f(sys, qm, fm);
  for (int i = 0; i < m; i++) d[i] = (fp[i] - fm[i]) / (qp[j] - qm[j]);
}

/* The name of entry (i, j) of the derivative called label: label[j] for a scalar f (cols < 0),
 * label[i][j] for a vector (cols = 0), label[i / cols][i % cols][j] for a matrix of cols columns. */
static void entry_name(char *buf, size_t len, const char *label, int cols, int i, int j) {
  if (cols < 0) /* a scalar's gradient */
    snprintf(buf, len, "%s[%d]", label, j);
  else if (cols > 0)
    snprintf(buf, len, "%s[%d][%d][%d]", label, i / cols, i % cols, j);
  else
    snprintf(buf, len, "%s[%d][%d]", label, i, j);
}

/* analytic[i*n + j] against ∂f_i/∂q_j for the m values of f (cols as entry_name's). */
static void check_jacobian(nh_system_check *c, const nh_system *sys, const double *q, vector_fn f, int m, int cols,
                           const double *analytic, const char *label, const char *reference) {
  double d[NH_MAX_N * NH_MAX_N * NH_MAX_N];
  char entry[96];
  for (int j = 0; j < sys->n; j++) {
    central_difference(sys, f, m, q, j, d);
    for (int i = 0; i < m; i++) {
      entry_name(entry, sizeof entry, label, cols, i, j);
      compare(c, sys, q, entry, analytic[i * sys->n + j], d[i], reference);
    }
  }
}

/* The interface's functions as vector_fn. */
static void potential_fn(const nh_system *sys, const double *q, double *out) {
  out[0] = sys->type->potential(sys->p, q);
}
static void grad_fn(const nh_system *sys, const double *q, double *out) { sys->type->grad_potential(sys->p, q, out); }
static void constraints_fn(const nh_system *sys, const double *q, double *out) {
  sys->type->constraints(sys->p, q, out);
}
static void mass_fn(const nh_system *sys, const double *q, double *out) { sys->type->mass(sys->p, q, out); }
static void affine_fn(const nh_system *sys, const double *q, double *out) { sys->type->affine->values(sys->p, q, out); }
static void holonomic_fn(const nh_system *sys, const double *q, double *out) { sys->type->holonomic(sys->p, q, out); }
static const double check_time = 0.3; /* where a time-dependent potential is checked */
static void time_potential_fn(const nh_system *sys, const double *q, double *out) {
  out[0] = sys->type->forces->potential->value(sys->p, q, check_time);
}
static void time_gradient_fn(const nh_system *sys, const double *q, double *out) {
  sys->type->forces->potential->gradient(sys->p, q, check_time, out);
}

typedef enum {
  C_GRAD,
  C_HESS,
  C_MASS,
  C_DMASS,
  C_DA,
  C_DB,
  C_HOLONOMIC,
  C_TIME_GRAD,
  C_TIME_HESS,
  C_CURVATURE,
  C_DERIVATIVE,
  C_ACCELERATION,
  C_LANES,
  C_ON_D,
  C_COUNT
} check_id;

static const struct {
  const char *name, *what;
} checks[C_COUNT] = {
    [C_GRAD] = {"grad_potential", "the gradient of V against finite differences of potential"},
    [C_HESS] = {"hess_potential", "the Hessian of V against finite differences of grad_potential"},
    [C_MASS] = {"mass", "M symmetric and positive definite"},
    [C_DMASS] = {"mass_jacobian", "dM/dq against finite differences of mass"},
    [C_DA] = {"constraints_jacobian", "dA/dq against finite differences of constraints"},
    [C_DB] = {"affine.jacobian", "db/dq against finite differences of affine.values"},
    [C_HOLONOMIC] = {"holonomic", "A against finite differences of the holonomic constraints phi"},
    [C_TIME_GRAD] = {"forces.potential.gradient", "the gradient of W(q, t) against finite differences of its value"},
    [C_TIME_HESS] = {"forces.potential.hessian", "the Hessian of W(q, t) against finite differences of its gradient"},
    [C_CURVATURE] = {"kernels.constraint_curvature", "against the contraction of constraints_jacobian"},
    [C_DERIVATIVE] = {"kernels.constraint_derivative", "against the contraction of constraints_jacobian"},
    [C_ACCELERATION] = {"kernels.acceleration", "against the generic index-reduced acceleration"},
    [C_LANES] = {"kernels.*_lanes", "each lane kernel against its scalar function on every lane, to the bit"},
    [C_ON_D] = {"default state", "the default initial condition on D: |A(q0) v0 + b(q0)|"},
};
_Static_assert(C_COUNT <= NH_SYSTEM_CHECKS, "raise NH_SYSTEM_CHECKS");

static void check_mass(nh_system_check *c, const nh_system *sys, const double *q) {
  const int n = sys->n;
  double M[NH_MAX_N * NH_MAX_N], L[NH_MAX_N * NH_MAX_N];
  sys->type->mass(sys->p, q, M);
  char entry[64];
  for (int i = 0; i < n; i++)
    for (int j = i + 1; j < n; j++) {
      snprintf(entry, sizeof entry, "M[%d][%d]", i, j);
      compare(c, sys, q, entry, M[i * n + j], M[j * n + i], "M[j][i] (symmetry)");
    }
  memcpy(L, M, sizeof L);
  if (nh_spd_invert(n, L) != 0)
    compare(c, sys, q, "M", INFINITY, 0, "a Cholesky factorization (not positive definite)");
}

static void check_kernels(nh_system_check *cs, const nh_system *sys, const double *q, gsl_rng *rng) {
  const int n = sys->n, k = sys->k;
  const nh_system_kernels *kn = sys->type->kernels;
  double v[NH_MAX_N], dA[NH_MAX_K * NH_MAX_N * NH_MAX_N], db[NH_MAX_K * NH_MAX_N] = {0}, out[NH_MAX_K * NH_MAX_N];
  char entry[64];
  for (int i = 0; i < n; i++) v[i] = 2 * gsl_rng_uniform(rng) - 1;
  sys->type->constraints_jacobian(sys->p, q, dA);
  if (sys->type->affine) sys->type->affine->jacobian(sys->p, q, db);
  if (kn && kn->constraint_curvature) {
    kn->constraint_curvature(sys->p, q, v, out);
    for (int a = 0; a < k; a++) {
      double want = 0;
      for (int i = 0; i < n; i++) {
        for (int j = 0; j < n; j++) want += dA[(a * n + i) * n + j] * v[i] * v[j];
        want += db[a * n + i] * v[i];
      }
      snprintf(entry, sizeof entry, "entry %d", a);
      compare(&cs[C_CURVATURE], sys, q, entry, out[a], want, "the contraction");
    }
  }
  if (kn && kn->constraint_derivative) {
    kn->constraint_derivative(sys->p, q, v, out);
    for (int a = 0; a < k; a++)
      for (int l = 0; l < n; l++) {
        double want = 0;
        for (int i = 0; i < n; i++) want += dA[(a * n + i) * n + l] * v[i];
        snprintf(entry, sizeof entry, "entry [%d][%d]", a, l);
        compare(&cs[C_DERIVATIVE], sys, q, entry, out[a * n + l], want, "the contraction");
      }
  }
  if (kn && kn->acceleration) {
    nh_system_kernels without = *kn;
    without.acceleration = NULL;
    nh_system_type generic_type = *sys->type;
    generic_type.kernels = &without;
    nh_system generic = *sys;
    generic.type = &generic_type;
    double a[NH_MAX_N], lambda[NH_MAX_K], want[NH_MAX_N];
    if (kn->acceleration(sys->p, 0, q, v, a, lambda) == 0 && nh_acceleration(&generic, 0, q, v, want) == 0)
      for (int i = 0; i < n; i++) {
        snprintf(entry, sizeof entry, "entry %d", i);
        compare(&cs[C_ACCELERATION], sys, q, entry, a[i], want[i], "the generic acceleration");
      }
  }
}

/* count values per lane of got (lane layout) against the scalar function's want at lane l's point. */
static void compare_lane(nh_system_check *c, const nh_system *sys, const double *ql, const char *kernel, int l,
                         int count, const double *got, const double *want, const char *reference) {
  char entry[96];
  for (int i = 0; i < count; i++) {
    snprintf(entry, sizeof entry, "%s[%d] on lane %d", kernel, i, l);
    compare_bits(c, sys, ql, entry, got[i * NH_LANES + l], want[i], reference);
  }
}

/* Each lane kernel the system has (nh_system_kernels) at NH_LANES points, lane 0 at q and the others
 * random around it, against the scalar function the generic lane code would call on each lane. */
static void check_lane_kernels(nh_system_check *c, const nh_system *sys, const double *q, gsl_rng *rng) {
  const nh_system_kernels *kn = sys->type->kernels;
  const nh_system_type *T = sys->type;
  const int n = sys->n, k = sys->k;
  _Alignas(64) double Q[NH_MAX_N * NH_LANES], V[NH_MAX_N * NH_LANES], out[NH_MAX_K * NH_MAX_N * NH_MAX_N * NH_LANES];
  double t[NH_LANES], pts[NH_LANES][NH_MAX_N], vs[NH_LANES][NH_MAX_N], want[NH_MAX_K * NH_MAX_N * NH_MAX_N];
  int status[NH_LANES];
  if (!kn) return;
  for (int l = 0; l < NH_LANES; l++) {
    t[l] = check_time;
    for (int i = 0; i < n; i++) {
      pts[l][i] = Q[i * NH_LANES + l] = l == 0 ? q[i] : q[i] + 2 * gsl_rng_uniform(rng) - 1;
      vs[l][i] = V[i * NH_LANES + l] = 2 * gsl_rng_uniform(rng) - 1;
    }
  }
  const struct {
    void (*lanes)(const double *p, const double *q, double *out);
    void (*scalar)(const double *p, const double *q, double *out);
    const char *name, *reference;
    int count;
  } of_q[] = {
      {kn->grad_potential_lanes, T->grad_potential, "grad_potential_lanes", "grad_potential", n},
      {kn->constraints_lanes, T->constraints, "constraints_lanes", "constraints", k * n},
      {kn->hess_potential_lanes, T->hess_potential, "hess_potential_lanes", "hess_potential", n * n},
      {kn->constraints_jacobian_lanes, T->constraints_jacobian, "constraints_jacobian_lanes", "constraints_jacobian",
       k * n * n},
  };
  for (size_t f = 0; f < sizeof of_q / sizeof *of_q; f++) {
    if (!of_q[f].lanes) continue;
    of_q[f].lanes(sys->p, Q, out);
    for (int l = 0; l < NH_LANES; l++) {
      of_q[f].scalar(sys->p, pts[l], want);
      compare_lane(c, sys, pts[l], of_q[f].name, l, of_q[f].count, out, want, of_q[f].reference);
    }
  }
  if (kn->potential_lanes) {
    kn->potential_lanes(sys->p, Q, out);
    for (int l = 0; l < NH_LANES; l++) {
      want[0] = T->potential(sys->p, pts[l]);
      compare_lane(c, sys, pts[l], "potential_lanes", l, 1, out, want, "potential");
    }
  }
  if (kn->constraint_derivative_lanes) {
    kn->constraint_derivative_lanes(sys->p, Q, V, out);
    for (int l = 0; l < NH_LANES; l++) {
      nh_constraint_derivative(sys, pts[l], vs[l], want);
      compare_lane(c, sys, pts[l], "constraint_derivative_lanes", l, k * n, out, want, "nh_constraint_derivative");
    }
  }
  if (kn->constraint_residual_lanes) {
    kn->constraint_residual_lanes(sys->p, Q, V, out);
    for (int l = 0; l < NH_LANES; l++) {
      want[0] = nh_constraint_residual(sys, pts[l], vs[l]);
      compare_lane(c, sys, pts[l], "constraint_residual_lanes", l, 1, out, want, "nh_constraint_residual");
    }
  }
  if (kn->acceleration_lanes) {
    double lambda[NH_MAX_K * NH_LANES], mult[NH_MAX_K];
    kn->acceleration_lanes(sys->p, t, Q, V, out, lambda, status);
    for (int l = 0; l < NH_LANES; l++) {
      const int st = nh_acceleration(sys, t[l], pts[l], vs[l], want);
      char entry[64];
      snprintf(entry, sizeof entry, "acceleration_lanes' status on lane %d", l);
      if (status[l] != st) {
        compare_error(c, sys, pts[l], entry, INFINITY, status[l], st, "nh_acceleration");
      } else if (st == 0) {
        compare_lane(c, sys, pts[l], "acceleration_lanes", l, n, out, want, "nh_acceleration");
        nh_multiplier(sys, t[l], pts[l], vs[l], mult);
        compare_lane(c, sys, pts[l], "acceleration_lanes' multiplier", l, k, lambda, mult, "nh_multiplier");
      }
    }
  }
}

static void check_at(nh_system_check *cs, const nh_system *sys, const double *q, gsl_rng *rng) {
  const nh_system_type *t = sys->type;
  const int n = sys->n, k = sys->k;
  double a[NH_MAX_N * NH_MAX_N * NH_MAX_N];
  t->grad_potential(sys->p, q, a);
  check_jacobian(&cs[C_GRAD], sys, q, potential_fn, 1, -1, a, "grad_potential", "finite differences of potential");
  t->hess_potential(sys->p, q, a);
  check_jacobian(&cs[C_HESS], sys, q, grad_fn, n, 0, a, "hess_potential", "finite differences of grad_potential");
  check_mass(&cs[C_MASS], sys, q);
  if (t->mass_jacobian) {
    double dM[NH_MAX_N * NH_MAX_N * NH_MAX_N];
    t->mass_jacobian(sys->p, q, dM);
    check_jacobian(&cs[C_DMASS], sys, q, mass_fn, n * n, n, dM, "mass_jacobian", "finite differences of mass");
  }
  if (k > 0) {
    t->constraints_jacobian(sys->p, q, a);
    check_jacobian(&cs[C_DA], sys, q, constraints_fn, k * n, n, a, "constraints_jacobian",
                   "finite differences of constraints");
  }
  if (t->affine) {
    t->affine->jacobian(sys->p, q, a);
    check_jacobian(&cs[C_DB], sys, q, affine_fn, k, 0, a, "affine.jacobian", "finite differences of affine.values");
  }
  if (t->holonomic) {
    t->constraints(sys->p, q, a);
    check_jacobian(&cs[C_HOLONOMIC], sys, q, holonomic_fn, k, 0, a, "constraints", "finite differences of holonomic");
  }
  const nh_time_potential *w = t->forces ? t->forces->potential : NULL;
  if (w) {
    w->gradient(sys->p, q, check_time, a);
    check_jacobian(&cs[C_TIME_GRAD], sys, q, time_potential_fn, 1, -1, a, "gradient", "finite differences of W");
    w->hessian(sys->p, q, check_time, a);
    check_jacobian(&cs[C_TIME_HESS], sys, q, time_gradient_fn, n, 0, a, "hessian",
                   "finite differences of the gradient");
  }
  check_kernels(cs, sys, q, rng); /* an unconstrained system may have an acceleration kernel too */
  check_lane_kernels(&cs[C_LANES], sys, q, rng);
}

static void set_up(nh_system_check *cs, const nh_system *sys) {
  const nh_system_type *t = sys->type;
  const nh_system_kernels *kn = t->kernels;
  const int applies[C_COUNT] = {
      [C_GRAD] = 1,
      [C_HESS] = 1,
      [C_MASS] = 1,
      [C_DMASS] = t->mass_jacobian != NULL,
      [C_DA] = sys->k > 0,
      [C_DB] = t->affine != NULL,
      [C_HOLONOMIC] = t->holonomic != NULL,
      [C_TIME_GRAD] = t->forces && t->forces->potential,
      [C_TIME_HESS] = t->forces && t->forces->potential,
      [C_CURVATURE] = sys->k > 0 && kn && kn->constraint_curvature,
      [C_DERIVATIVE] = sys->k > 0 && kn && kn->constraint_derivative,
      [C_ACCELERATION] = kn && kn->acceleration,
      [C_LANES] = kn && (kn->acceleration_lanes || kn->constraint_residual_lanes || kn->grad_potential_lanes ||
                         kn->constraints_lanes || kn->hess_potential_lanes || kn->constraints_jacobian_lanes ||
                         kn->potential_lanes || kn->constraint_derivative_lanes),
      [C_ON_D] = 1,
  };
  for (int i = 0; i < C_COUNT; i++)
    cs[i] = (nh_system_check){.name = checks[i].name,
                              .what = checks[i].what,
                              .applies = applies[i],
                              .tolerance = i >= C_CURVATURE ? KERNEL_TOLERANCE : FD_TOLERANCE};
  cs[C_MASS].tolerance = 0; /* symmetric to the bit: every integrator assumes it */
  cs[C_ON_D].tolerance = ON_D_TOLERANCE;
  cs[C_LANES].tolerance = 0; /* the same bits on every lane (core/lanes.h) */
}

int nh_system_check_all(const nh_system *sys, int points, nh_system_check *cs) {
  set_up(cs, sys);
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  if (!rng) return -1;
  gsl_rng_set(rng, 20261203);
  nh_state x;
  nh_system_default_state(sys, &x);
  const double box =
      sys->type->knowledge && sys->type->knowledge->sample_box > 0 ? sys->type->knowledge->sample_box : 1;
  for (int p = 0; p < points; p++) {
    double q[NH_MAX_N];
    for (int i = 0; i < sys->n; i++) q[i] = p == 0 ? x.q[i] : box * (2 * gsl_rng_uniform(rng) - 1);
    check_at(cs, sys, q, rng);
  }
  gsl_rng_free(rng);
  compare(&cs[C_ON_D], sys, x.q, "|A(q0) v0 + b(q0)|", nh_constraint_residual(sys, x.q, x.v), 0, "the constraint");
  for (int i = 0; i < C_COUNT; i++) cs[i].ok = !cs[i].applies || cs[i].error <= cs[i].tolerance;
  /* Whose function each check's reference is made of. */
  static const struct {
    check_id check, reference;
  } made_of[] = {{C_HESS, C_GRAD},          {C_TIME_HESS, C_TIME_GRAD},    {C_CURVATURE, C_DA},
                 {C_CURVATURE, C_DB},       {C_DERIVATIVE, C_DA},          {C_ACCELERATION, C_CURVATURE},
                 {C_ACCELERATION, C_GRAD},  {C_ACCELERATION, C_DA},        {C_ACCELERATION, C_DB},
                 {C_ACCELERATION, C_DMASS}, {C_ACCELERATION, C_TIME_GRAD}, {C_LANES, C_ACCELERATION}};
  for (size_t i = 0; i < sizeof made_of / sizeof *made_of; i++)
    if (!cs[made_of[i].reference].ok && !cs[made_of[i].check].reference_failed)
      cs[made_of[i].check].reference_failed = cs[made_of[i].reference].name;
  return C_COUNT;
}
