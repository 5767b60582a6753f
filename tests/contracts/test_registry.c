/* The interface contract, for every registered system and method: analytic derivatives agree
 * with finite differences, the default initial condition lies on D, the sampler either works or
 * declines the system, exact solutions start at their initial state, and method names
 * round-trip through the method syntax. New systems and methods are covered automatically. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "integrators/integrator.h"
#include "tests/helpers.h"

typedef struct {
  char name[64];
} named;

ParameterizedTestParameters(registry, system) {
  static named cases[64];
  size_t n = 0;
  for (int i = 0; nh_system_types[i] && n < 64; i++) snprintf(cases[n++].name, 64, "%s", nh_system_types[i]->name);
  return cr_make_param_array(named, cases, n);
}

#define FD_STEP 1e-5
#define FD_TOL 1e-6

/* Central difference of f: R^n -> R^m at q along coordinate j, into d (m). */
typedef void (*vector_fn)(const nh_system *sys, const double *q, double *out);

static void fd_column(const nh_system *sys, vector_fn f, const double *q, int j, int m, double *d) {
  double qp[NH_MAX_N], qm[NH_MAX_N], fp[NH_MAX_N * NH_MAX_N * NH_MAX_N], fm[NH_MAX_N * NH_MAX_N * NH_MAX_N];
  memcpy(qp, q, sizeof qp);
  memcpy(qm, q, sizeof qm);
  qp[j] += FD_STEP;
  qm[j] -= FD_STEP;
  f(sys, qp, fp);
  f(sys, qm, fm);
  for (int i = 0; i < m; i++) d[i] = (fp[i] - fm[i]) / (2 * FD_STEP);
}

static void potential_fn(const nh_system *s, const double *q, double *o) { o[0] = s->type->potential(s->p, q); }
static void grad_fn(const nh_system *s, const double *q, double *o) { s->type->grad_potential(s->p, q, o); }
static void constraints_fn(const nh_system *s, const double *q, double *o) { s->type->constraints(s->p, q, o); }
static void mass_fn(const nh_system *s, const double *q, double *o) { s->type->mass(s->p, q, o); }
static void affine_fn(const nh_system *s, const double *q, double *o) { s->type->affine->values(s->p, q, o); }

/* analytic[i*n + j] (or the layout given by idx) against d/dq_j of f. */
static void check_jacobian(const nh_system *sys, const char *what, vector_fn f, int m, const double *q,
                           const double *analytic, int (*idx)(int i, int j, int n)) {
  const int n = sys->n;
  for (int j = 0; j < n; j++) {
    double d[NH_MAX_N * NH_MAX_N * NH_MAX_N];
    fd_column(sys, f, q, j, m, d);
    for (int i = 0; i < m; i++) {
      double a = analytic[idx(i, j, n)];
      cr_expect(fabs(a - d[i]) <= FD_TOL * (1 + fabs(d[i])), "%s: %s entry %d, d/dq%d: analytic %.12g, finite difference %.12g",
                sys->type->name, what, i, j, a, d[i]);
    }
  }
}

static int row_major(int i, int j, int n) { return i * n + j; }
static int last_index(int i, int j, int n) { return i * n + j; } /* dA[(a*n+i)*n+j]: row i' = a*n+i */

ParameterizedTest(named *c, registry, system) {
  nh_system sys;
  const nh_system_type *T = nh_system_type_find(c->name);
  cr_assert(T);
  cr_assert_eq(nh_system_init(&sys, T), 0, "%s: mass matrix not SPD", c->name);
  cr_expect(T->doc && T->doc[0] && T->ic_doc && T->ic_doc[0], "%s: documentation missing", c->name);
  nh_state x0;
  nh_system_default_state(&sys, &x0);
  cr_expect(isfinite(nh_energy(&sys, x0.q, x0.v)), "%s: default energy", c->name);
  cr_expect_leq(nh_constraint_residual(&sys, x0.q, x0.v), 1e-12, "%s: default initial condition off D", c->name);

  /* Derivatives at a point near the default state, off any symmetry. */
  const int n = sys.n, k = sys.k;
  double q[NH_MAX_N], g[NH_MAX_N], H[NH_MAX_N * NH_MAX_N], dA[NH_MAX_K * NH_MAX_N * NH_MAX_N];
  for (int i = 0; i < n; i++) q[i] = x0.q[i] + 0.1 * (i + 1) - 0.05 * i * i;
  T->grad_potential(sys.p, q, g);
  T->hess_potential(sys.p, q, H);
  check_jacobian(&sys, "grad V", potential_fn, 1, q, g, row_major);
  check_jacobian(&sys, "Hessian of V", grad_fn, n, q, H, row_major);
  if (k) {
    T->constraints_jacobian(sys.p, q, dA);
    check_jacobian(&sys, "dA", constraints_fn, k * n, q, dA, last_index);
  }
  if (T->mass_jacobian) {
    double dM[NH_MAX_N * NH_MAX_N * NH_MAX_N];
    T->mass_jacobian(sys.p, q, dM);
    check_jacobian(&sys, "dM", mass_fn, n * n, q, dM, last_index);
  }
  if (T->affine) {
    double db[NH_MAX_K * NH_MAX_N];
    T->affine->jacobian(sys.p, q, db);
    check_jacobian(&sys, "db", affine_fn, k, q, db, row_major);
  }

  /* The exact solution starts where it is asked to. */
  nh_state xe;
  if (nh_exact_solution(&sys, &x0, x0.t, &xe) == 0)
    for (int i = 0; i < n; i++)
      cr_expect(fabs(xe.q[i] - x0.q[i]) + fabs(xe.v[i] - x0.v[i]) <= 1e-14, "%s: exact(t0) != x0", c->name);

  /* Every system has a knowledge table: at least its sampler's documentation (below). A group
   * that is there is whole: its functions all set (or, where each is optional, one of them), and
   * its lists counted, named and documented. */
  const nh_system_knowledge *K = T->knowledge;
  cr_assert(K, "%s: no knowledge table", c->name);
  if (T->affine) cr_expect(T->affine->values && T->affine->jacobian, "%s: affine part without b or db", c->name);
  if (T->forces) {
    const nh_system_forces *F = T->forces;
    cr_expect(F->damping || F->forcing || F->potential, "%s: an empty forces group", c->name);
    cr_expect(!F->potential || (F->potential->value && F->potential->gradient && F->potential->hessian),
              "%s: W(q, t) without its value, gradient or Hessian", c->name);
    cr_expect(!F->potential || (F->time_dependence && (F->time_dependence(sys.p) & NH_SYS_TIME_POTENTIAL)),
              "%s: W(q, t) not declared in time_dependence", c->name);
  }
  const nh_system_kernels *kn = T->kernels;
  if (kn) /* lane kernels alone make a group (particle, cvt, knife_edge) */
    cr_expect(kn->constraint_curvature || kn->constraint_derivative || kn->acceleration || kn->acceleration_lanes ||
                  kn->constraint_residual_lanes || kn->grad_potential_lanes || kn->constraints_lanes ||
                  kn->hess_potential_lanes || kn->constraints_jacobian_lanes || kn->potential_lanes ||
                  kn->constraint_derivative_lanes,
              "%s: an empty kernels group", c->name);
  if (K->invariants)
    cr_expect(K->invariants->count > 0 && K->invariants->names && K->invariants->values, "%s: invariants incomplete",
              c->name);
  if (K->derived)
    cr_expect(K->derived->count > 0 && K->derived->names && K->derived->docs && K->derived->values,
              "%s: derived quantities incomplete", c->name);

  /* Presets lie on D unless their documentation says they are printed off it. */
  for (int p = 0; p < K->npresets; p++) {
    char err[512];
    nh_system ps = sys;
    nh_state xp;
    cr_expect_eq(nh_system_apply_preset(&ps, K->presets[p].name, &xp, err, sizeof err), 0, "%s", err);
    if (!strstr(K->presets[p].doc, "off D"))
      cr_expect_leq(nh_constraint_residual(&ps, xp.q, xp.v), 1e-12, "%s: preset %s off D", c->name, K->presets[p].name);
  }

  /* The sampler: states on D at the energy, or a clear decline, documented, for what it cannot
   * reach (a system's own sampler handles affine or holonomic constraints). */
  cr_expect(K->sampler_doc && strlen(K->sampler_doc) > 10, "%s: no sampler_doc", c->name);
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(rng, 11);
  nh_state xs;
  double E = nh_energy(&sys, x0.q, x0.v) + 1;
  int rc = nh_sample_on_D(&sys, E, rng, &xs);
  if ((T->affine || T->holonomic) && !K->sample) {
    cr_expect_eq(rc, -2, "%s: the sampler should decline affine or holonomic systems", c->name);
  } else {
    cr_expect_eq(rc, 0, "%s: the sampler found no state at E = %g", c->name, E);
    cr_expect_leq(nh_constraint_residual(&sys, xs.q, xs.v), 1e-12, "%s: sampled state off D", c->name);
    if (T->holonomic) {
      double phi[NH_MAX_K];
      T->holonomic(sys.p, xs.q, phi);
      cr_expect_leq(fabs(phi[0]), 1e-12, "%s: sampled state off the holonomic constraint", c->name);
    }
    cr_expect(fabs(nh_energy(&sys, xs.q, xs.v) - E) <= 1e-12 * fabs(E), "%s: sampled energy", c->name);
  }
  gsl_rng_free(rng);
}

/* Every method: documented, all three Newton hooks or none, defaults within their ranges, a
 * positive order, and its canonical name parses back to the same method. */
Test(registry, methods) {
  for (int i = 0; nh_integrator_types[i]; i++) {
    const nh_integrator_type *t = nh_integrator_types[i];
    cr_expect(t->doc && strlen(t->doc) > 20, "%s: documentation missing", t->name);
    cr_expect(!t->newton || (t->newton->size && t->newton->eval && t->newton->unknowns),
              "%s: Newton hooks without their size, evaluation or unknowns", t->name);
    for (int p = 0; p < t->nparams; p++) {
      const nh_param_desc *d = &t->params[p];
      cr_expect(d->def >= d->min && d->def <= d->max && d->help, "%s: parameter %s", t->name, d->name);
      /* A choice lists its names, min and max are its first and last index, and the kinds agree. */
      cr_expect_eq(d->kind == NH_PARAM_CHOICE, d->choices != NULL, "%s.%s: choices and kind disagree", t->name,
                   d->name);
      if (d->kind == NH_PARAM_CHOICE)
        cr_expect(nh_param_nchoices(d) >= 2 && d->min == 0 && d->max == nh_param_nchoices(d) - 1,
                  "%s.%s: [min, max] = [%g, %g] for %d choices", t->name, d->name, d->min, d->max,
                  nh_param_nchoices(d));
    }
    /* Every deprecated spelling reads as a parameter value the type has. */
    for (const nh_param_alias *a = t->aliases; a && a->old_name; a++) {
      double vals[NH_MAX_PARAMS];
      char err[256] = "";
      cr_expect_lt(nh_param_index(t->params, t->nparams, a->old_name), 0, "%s: alias %s shadows a parameter",
                   t->name, a->old_name);
      cr_expect_eq(nh_param_set(t->params, t->nparams, vals, a->name, a->value, err, sizeof err), 0,
                   "%s: alias %s=%s -> %s=%s: %s", t->name, a->old_name, a->old_value, a->name, a->value, err);
    }
    char text[256], err[512], again[1024], once[1024];
    snprintf(text, sizeof text, t->takes_base ? "%s(nh_newmark(alpha=0.5))" : "%s", t->name);
    nh_method *m = nh_method_parse(text, err, sizeof err);
    cr_assert(m, "%s: %s", text, err);
    cr_expect_gt(nh_method_order(m), 0, "%s: order", text);
    nh_method_format(m, once, sizeof once);
    nh_method *m2 = nh_method_parse(once, err, sizeof err);
    cr_assert(m2, "%s: %s", once, err);
    nh_method_format(m2, again, sizeof again);
    cr_expect_str_eq(once, again);
    nh_method_free(m);
    nh_method_free(m2);
  }
}

/* Every system's parameter table: named, documented, unique names, defaults in range (a missing
 * row in the middle of a designated-initializer table would be all zero and fail here). */
Test(registry, system_parameter_tables) {
  for (int i = 0; nh_system_types[i]; i++) {
    const nh_system_type *t = nh_system_types[i];
    for (int j = 0; j < t->nparams; j++) {
      const nh_param_desc *d = &t->params[j];
      cr_assert(d->name && d->name[0], "%s: parameter %d has no name", t->name, j);
      cr_expect(d->help && strlen(d->help) >= 3, "%s.%s: no help", t->name, d->name);
      cr_expect(d->min <= d->def && d->def <= d->max, "%s.%s: default outside [min, max]", t->name, d->name);
      for (int k = 0; k < j; k++) cr_expect_neq(strcmp(d->name, t->params[k].name), 0, "%s.%s twice", t->name, d->name);
    }
  }
}

/* A system declaring the particle structure has it: M = I, μ = (−y, 0, 1), ∇V = ω²(x, y, 0) with
 * ω² = ∂²V/∂x², no affine part, damping or forcing, at random states (spec/discretization.md §3.2–3.3). */
Test(registry, particle_structure_capability_holds) {
  gsl_rng *rng = test_rng(3);
  int declared = 0;
  for (int i = 0; nh_system_types[i]; i++) {
    const nh_system_type *t = nh_system_types[i];
    if (!(t->capabilities & NH_CAP_PARTICLE_STRUCTURE)) continue;
    declared++;
    cr_assert(t->n == 3 && t->k == 1, "%s", t->name);
    cr_expect(!t->affine && !t->forces && !t->mass_jacobian, "%s", t->name);
    const char *const params[] = {"omega2=0", "omega2=1.7"};
    for (int pi = 0; pi < 2; pi++) {
      nh_system sys = test_system_of(t, params[pi]);
      for (int r = 0; r < 5; r++) {
        double q[3], A[3], g[3], H[9], M[9];
        for (int a = 0; a < 3; a++) q[a] = gsl_ran_flat(rng, -2, 2);
        nh_mass(&sys, q, M), t->constraints(sys.p, q, A), t->grad_potential(sys.p, q, g), t->hess_potential(sys.p, q, H);
        for (int a = 0; a < 9; a++) cr_expect_eq(M[a], a % 4 == 0 ? 1 : 0, "%s: M", t->name);
        cr_expect(A[0] == -q[1] && A[1] == 0 && A[2] == 1, "%s: mu", t->name);
        cr_expect(fabs(g[0] - H[0] * q[0]) < 1e-14 && fabs(g[1] - H[0] * q[1]) < 1e-14 && g[2] == 0, "%s: grad V", t->name);
      }
    }
  }
  cr_expect(declared >= 1, "the particle declares it");
  gsl_rng_free(rng);
}

/* constraints_solved_first is declared exactly where A(q) = [I_k | B(q)]: at 5 random states around
 * the default one (a system with that structure that does not declare it keeps rk4_reduced from a
 * system it applies to, and a definition with the same rows would get it: systems/defined.c). */
Test(registry, constraints_solved_first_declared_where_it_holds) {
  gsl_rng *rng = test_rng(5);
  int declared = 0;
  for (int i = 0; nh_system_types[i]; i++) {
    const nh_system_type *t = nh_system_types[i];
    if (t->k == 0 || t->holonomic) continue;
    nh_system sys = test_system_of(t, NULL);
    int holds = 1;
    for (int r = 0; r < 5; r++) {
      double q[NH_MAX_N], A[NH_MAX_K * NH_MAX_N];
      for (int a = 0; a < t->n; a++) q[a] = t->q0[a] + gsl_ran_flat(rng, -0.5, 0.5);
      t->constraints(sys.p, q, A);
      for (int a = 0; a < t->k; a++)
        for (int j = 0; j < t->k; j++) holds &= A[a * t->n + j] == (a == j);
    }
    declared += t->constraints_solved_first;
    cr_expect_eq(t->constraints_solved_first, holds, "%s: constraints_solved_first %d, but A = [I_k | B] %s", t->name,
                 t->constraints_solved_first, holds ? "holds" : "does not hold");
  }
  cr_expect_geq(declared, 3, "the rolling disks and the chaotic particle declare it");
  gsl_rng_free(rng);
}
