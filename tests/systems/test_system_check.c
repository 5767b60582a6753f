/* The system contract checker (systems/check.c) on hand-written tables, and the plugin loader
 * (systems/plugin.c) on shared objects compiled here. The tables are a 2-D particle, q = (x, y),
 * with V = x³/3 + xy² + y²/2 and one constraint, in the variants each check is about: an affine
 * part, a holonomic constraint, a time-dependent potential, a variable mass, kernels. Each variant
 * is right, so that every check passes, or wrong in one place (a global fault switch), so that
 * exactly that check fails and names the entry it gets wrong. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "systems/check.h"
#include "systems/plugin.h"
#include "tests/helpers.h"

/* ---- the hand-written tables ---------------------------------------------------------------- */

typedef enum {
  F_NONE,
  F_GRAD,       /* ∂V/∂y of the wrong sign */
  F_HESS,       /* ∂²V/∂x∂y of the wrong sign in entry [0][1] */
  F_NAN,        /* V is NaN */
  F_DA,         /* ∂μ_1/∂x of the wrong sign */
  F_AFFINE_JAC, /* ∂b/∂y of the wrong sign */
  F_TIME_GRAD,  /* ∂W/∂x of the wrong sign */
  F_TIME_HESS,  /* ∂²W/∂x∂y of the wrong sign in entry [0][1] */
  F_HOLONOMIC,  /* A = (2x, y), not ∂φ/∂q = (2x, 2y) */
  F_DMASS,      /* ∂M_01/∂y of the wrong sign */
  F_ASYMMETRIC, /* M_01 ≠ M_10 */
  F_NOT_PD,     /* M = [[1, 2], [2, 1]] */
  F_ACCEL,      /* the acceleration kernel's a_1 off by a factor 1.5 */
  F_LANES,      /* the lane kernel of ∇V one ulp off in entry 1 on lane 3 */
} fault_kind;
static fault_kind fault;

static double potential(const double *p, const double *q) {
  (void)p;
  if (fault == F_NAN) return NAN;
  return q[0] * q[0] * q[0] / 3 + q[0] * q[1] * q[1] + q[1] * q[1] / 2;
}
static void grad_potential(const double *p, const double *q, double *g) {
  (void)p;
  g[0] = q[0] * q[0] + q[1] * q[1];
  g[1] = (fault == F_GRAD ? -1 : 1) * (2 * q[0] * q[1] + q[1]);
}
static void hess_potential(const double *p, const double *q, double *H) {
  (void)p;
  H[0] = 2 * q[0];
  H[1] = (fault == F_HESS ? -1 : 1) * 2 * q[1];
  H[2] = 2 * q[1];
  H[3] = 2 * q[0] + 1;
}

/* M constant [[2, 0.5], [0.5, 1]] (q may be NULL), or the identity for the kernels' table. */
static void mass(const double *p, const double *q, double *M) {
  (void)p, (void)q;
  M[0] = 2, M[1] = fault == F_ASYMMETRIC ? 0.6 : 0.5, M[2] = 0.5, M[3] = 1;
  if (fault == F_NOT_PD) M[0] = 1, M[1] = M[2] = 2, M[3] = 1;
}
static void unit_mass(const double *p, const double *q, double *M) {
  (void)p, (void)q;
  M[0] = M[3] = 1, M[1] = M[2] = 0;
}
/* M(q) = [[2 + x², 0.3y], [0.3y, 1 + y²]], positive definite everywhere. */
static void variable_mass(const double *p, const double *q, double *M) {
  (void)p;
  M[0] = 2 + q[0] * q[0], M[1] = M[2] = 0.3 * q[1], M[3] = 1 + q[1] * q[1];
}
static void variable_mass_jacobian(const double *p, const double *q, double *dM) {
  (void)p;
  memset(dM, 0, 8 * sizeof *dM);
  dM[(0 * 2 + 0) * 2 + 0] = 2 * q[0];
  dM[(0 * 2 + 1) * 2 + 1] = fault == F_DMASS ? -0.3 : 0.3;
  dM[(1 * 2 + 0) * 2 + 1] = 0.3;
  dM[(1 * 2 + 1) * 2 + 1] = 2 * q[1];
}

/* Nonholonomic μ(q) = (1, x). */
static void constraints(const double *p, const double *q, double *A) {
  (void)p;
  A[0] = 1, A[1] = q[0];
}
static void constraints_jacobian(const double *p, const double *q, double *dA) {
  (void)p, (void)q;
  dA[0] = dA[1] = dA[3] = 0;
  dA[(0 * 2 + 1) * 2 + 0] = fault == F_DA ? -1 : 1;
}
/* b(q) = 0.2xy. */
static void affine_values(const double *p, const double *q, double *b) {
  (void)p;
  b[0] = 0.2 * q[0] * q[1];
}
static void affine_jacobian(const double *p, const double *q, double *db) {
  (void)p;
  db[0] = 0.2 * q[1];
  db[1] = (fault == F_AFFINE_JAC ? -0.2 : 0.2) * q[0];
}
static const nh_affine_constraints affine = {.values = affine_values, .jacobian = affine_jacobian};

/* Holonomic φ(q) = x² + y² − 1, A = ∂φ/∂q = (2x, 2y) (with the fault (2x, y), and dA its own
 * derivative, so that only the relation to φ is wrong). */
static void holonomic(const double *p, const double *q, double *phi) {
  (void)p;
  phi[0] = q[0] * q[0] + q[1] * q[1] - 1;
}
static void circle_constraints(const double *p, const double *q, double *A) {
  (void)p;
  A[0] = 2 * q[0], A[1] = (fault == F_HOLONOMIC ? 1 : 2) * q[1];
}
static void circle_constraints_jacobian(const double *p, const double *q, double *dA) {
  (void)p, (void)q;
  dA[0] = 2, dA[1] = dA[2] = 0, dA[3] = fault == F_HOLONOMIC ? 1 : 2;
}

/* W(q, t) = sin(t) x² y + t y. */
static double time_value(const double *p, const double *q, double t) {
  (void)p;
  return sin(t) * q[0] * q[0] * q[1] + t * q[1];
}
static void time_gradient(const double *p, const double *q, double t, double *g) {
  (void)p;
  g[0] = (fault == F_TIME_GRAD ? -2 : 2) * sin(t) * q[0] * q[1];
  g[1] = sin(t) * q[0] * q[0] + t;
}
static void time_hessian(const double *p, const double *q, double t, double *H) {
  (void)p;
  H[0] = 2 * sin(t) * q[1];
  H[1] = (fault == F_TIME_HESS ? -2 : 2) * sin(t) * q[0];
  H[2] = 2 * sin(t) * q[0];
  H[3] = 0;
}
static const nh_time_potential time_potential = {
    .value = time_value, .gradient = time_gradient, .hessian = time_hessian};
static const nh_system_forces forces = {.potential = &time_potential};

/* The kernels of the unit-mass table with μ = (1, x), no affine part: (DA[v])v = v_y v_x,
 * D[0][l] = Σ_i ∂_l μ_i w_i = (w_y, 0), and a = f + Aᵀλ with f = −∇V, C = 1 + x²,
 * λ = −(A f + v_y v_x)/C, written out. */
static void curvature_kernel(const double *p, const double *q, const double *v, double *out) {
  (void)p, (void)q;
  out[0] = v[1] * v[0];
}
static void derivative_kernel(const double *p, const double *q, const double *w, double *D) {
  (void)p, (void)q;
  D[0] = w[1], D[1] = 0;
}
static int acceleration_kernel(const double *p, double t, const double *q, const double *v, double *a, double *lambda) {
  (void)t;
  (void)p;
  const double f[2] = {-(q[0] * q[0] + q[1] * q[1]), -(2 * q[0] * q[1] + q[1])}; /* −∇V, never the faulty one */
  lambda[0] = -(f[0] + q[0] * f[1] + v[1] * v[0]) / (1 + q[0] * q[0]);
  a[0] = f[0] + lambda[0];
  a[1] = (fault == F_ACCEL ? 1.5 : 1) * (f[1] + q[0] * lambda[0]);
  return 0;
}
static const nh_system_kernels kernels = {.constraint_curvature = curvature_kernel,
                                          .constraint_derivative = derivative_kernel,
                                          .acceleration = acceleration_kernel};
static const nh_system_kernels acceleration_only = {.acceleration = acceleration_kernel};

/* Lane kernels (core/lanes.h layout) that call the scalar functions lane by lane: right to the bit,
 * but for the fault. */
static void lane_of_q(void (*f)(const double *p, const double *q, double *out), int count, const double *p,
                      const double *q, double *out) {
  for (int l = 0; l < NH_LANES; l++) {
    double ql[2] = {q[l], q[NH_LANES + l]}, o[4];
    f(p, ql, o);
    for (int i = 0; i < count; i++) out[i * NH_LANES + l] = o[i];
  }
}
static void grad_lanes(const double *p, const double *q, double *g) {
  lane_of_q(grad_potential, 2, p, q, g);
  if (fault == F_LANES) g[1 * NH_LANES + 3] = nextafter(g[1 * NH_LANES + 3], INFINITY);
}
static void hess_lanes(const double *p, const double *q, double *H) { lane_of_q(hess_potential, 4, p, q, H); }
static const nh_system_kernels lane_kernels = {.grad_potential_lanes = grad_lanes, .hess_potential_lanes = hess_lanes};

/* Default states on D: μ·v = 0 at (0.5, 0.2); with b, v_x + 0.5 v_y + 0.02 = 0; on the circle at
 * (1, 0), A = (2, 0). */
static const double q0[] = {0.5, 0.2}, v0[] = {-0.5, 1}, v0_affine[] = {-0.52, 1}, v0_off[] = {1, 1};
static const double q0_circle[] = {1, 0}, v0_circle[] = {0, 1};

/* The plain table: constant mass, one linear homogeneous constraint, nothing optional. */
static nh_system_type plain(void) {
  return (nh_system_type){.name = "check_particle",
                          .n = 2,
                          .k = 1,
                          .q0 = q0,
                          .v0 = v0,
                          .mass = mass,
                          .potential = potential,
                          .grad_potential = grad_potential,
                          .hess_potential = hess_potential,
                          .constraints = constraints,
                          .constraints_jacobian = constraints_jacobian};
}
static nh_system_type with_affine(void) {
  nh_system_type t = plain();
  t.affine = &affine, t.v0 = v0_affine;
  return t;
}
static nh_system_type with_holonomic(void) {
  nh_system_type t = plain();
  t.holonomic = holonomic, t.constraints = circle_constraints, t.constraints_jacobian = circle_constraints_jacobian;
  t.q0 = q0_circle, t.v0 = v0_circle;
  return t;
}
static nh_system_type with_time_potential(void) {
  nh_system_type t = plain();
  t.forces = &forces;
  return t;
}
static nh_system_type with_variable_mass(void) {
  nh_system_type t = plain();
  t.mass = variable_mass, t.mass_jacobian = variable_mass_jacobian;
  return t;
}
static nh_system_type with_kernels(void) {
  nh_system_type t = plain();
  t.mass = unit_mass, t.kernels = &kernels;
  return t;
}

static nh_system_type with_lane_kernels(void) {
  nh_system_type t = plain();
  t.kernels = &lane_kernels;
  return t;
}

/* Every check of the table t (which must stay alive) at 6 points into cs. */
static void check(const nh_system_type *t, nh_system_check cs[NH_SYSTEM_CHECKS], int *count) {
  nh_system sys;
  cr_assert_eq(nh_system_init(&sys, t), 0, "nh_system_init refused the table");
  *count = nh_system_check_all(&sys, 6, cs);
  cr_assert(*count > 0 && *count <= NH_SYSTEM_CHECKS, "%d checks", *count);
}

static const nh_system_check *find(const nh_system_check *cs, int count, const char *name) {
  for (int i = 0; i < count; i++)
    if (!strcmp(cs[i].name, name)) return &cs[i];
  cr_assert_fail("no check named %s", name);
  return NULL;
}

/* The names of the checks that apply, or that fail, separated by spaces, in the checker's order. */
static void names_where(const nh_system_check *cs, int count, int failing, char *buf, size_t len) {
  buf[0] = '\0';
  for (int i = 0; i < count; i++)
    if (failing ? !cs[i].ok : cs[i].applies) {
      strncat(buf, buf[0] ? " " : "", len - strlen(buf) - 1);
      strncat(buf, cs[i].name, len - strlen(buf) - 1);
    }
}

static void expect_names(const nh_system_check *cs, int count, int failing, const char *want) {
  char got[1024];
  names_where(cs, count, failing, got, sizeof got);
  cr_expect_str_eq(got, want, "%s: '%s', expected '%s'", failing ? "failing" : "applying", got, want);
}

/* The checks that apply to each structure, and every one passes on the right table. */
Test(system_check, applies_by_structure_and_right_tables_pass) {
  const struct {
    nh_system_type (*table)(void);
    const char *applies;
  } cases[] = {
      {plain, "grad_potential hess_potential mass constraints_jacobian default state"},
      {with_affine, "grad_potential hess_potential mass constraints_jacobian affine.jacobian default state"},
      {with_holonomic, "grad_potential hess_potential mass constraints_jacobian holonomic default state"},
      {with_time_potential, "grad_potential hess_potential mass constraints_jacobian forces.potential.gradient "
                            "forces.potential.hessian default state"},
      {with_variable_mass, "grad_potential hess_potential mass mass_jacobian constraints_jacobian default state"},
      {with_kernels, "grad_potential hess_potential mass constraints_jacobian kernels.constraint_curvature "
                     "kernels.constraint_derivative kernels.acceleration default state"},
      {with_lane_kernels, "grad_potential hess_potential mass constraints_jacobian kernels.*_lanes default state"},
  };
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    const nh_system_type t = cases[c].table();
    nh_system_check cs[NH_SYSTEM_CHECKS];
    int count;
    check(&t, cs, &count);
    expect_names(cs, count, 0, cases[c].applies);
    expect_names(cs, count, 1, "");
    for (int i = 0; i < count; i++) {
      cr_expect(cs[i].name && cs[i].what && cs[i].what[0], "check %d has no name or description", i);
      cr_expect(!cs[i].reference_failed, "%s: reference_failed '%s' on a right table", cs[i].name,
                cs[i].reference_failed);
      if (cs[i].applies && strcmp(cs[i].name, "mass") && strcmp(cs[i].name, "kernels.*_lanes"))
        cr_expect(cs[i].error <= cs[i].tolerance && cs[i].tolerance > 0, "%s: error %g, tolerance %g", cs[i].name,
                  cs[i].error, cs[i].tolerance);
    }
    /* Symmetry is asked to the bit: the error of a symmetric M is exactly 0. */
    cr_expect_eq(find(cs, count, "mass")->error, 0);
    cr_expect_eq(find(cs, count, "mass")->tolerance, 0);
    /* So are the lane kernels: the same bits on every lane. */
    cr_expect_eq(find(cs, count, "kernels.*_lanes")->error, 0);
    cr_expect_eq(find(cs, count, "kernels.*_lanes")->tolerance, 0);
  }
}

/* One wrong entry: the checks that fail, the worst entry's name, and the failed references. */
typedef struct {
  fault_kind fault;
  nh_system_type (*table)(void);
  const char *failing;   /* the failing checks, in the checker's order */
  const char *check;     /* the one whose where is asserted */
  const char *where;     /* the start of its where */
  const char *dependent; /* a check whose reference_failed is asserted, or NULL */
  const char *reference; /* what it must name */
} wrong_case;

static void expect_wrong(const wrong_case *w) {
  fault = w->fault;
  const nh_system_type t = w->table();
  nh_system_check cs[NH_SYSTEM_CHECKS];
  int count;
  check(&t, cs, &count);
  expect_names(cs, count, 1, w->failing);
  const nh_system_check *c = find(cs, count, w->check);
  cr_expect(!c->ok && c->applies && c->error > c->tolerance, "%s: ok %d, error %g", c->name, c->ok, c->error);
  cr_expect(!strncmp(c->where, w->where, strlen(w->where)), "%s: where '%s' does not start with '%s'", c->name,
            c->where, w->where);
  cr_expect(strstr(c->where, "at q = (") != NULL, "%s: where '%s' gives no point", c->name, c->where);
  cr_expect(!c->reference_failed, "%s names a failed reference '%s' of its own", c->name, c->reference_failed);
  if (w->dependent) {
    const nh_system_check *d = find(cs, count, w->dependent);
    cr_expect(d->reference_failed && !strcmp(d->reference_failed, w->reference), "%s: reference_failed '%s', not '%s'",
              d->name, d->reference_failed ? d->reference_failed : "(null)", w->reference);
  }
  fault = F_NONE;
}

Test(system_check, wrong_potential_derivatives) {
  const wrong_case cases[] = {
      {F_GRAD, plain, "grad_potential hess_potential", "grad_potential", "grad_potential[1] is ", "hess_potential",
       "grad_potential"},
      {F_HESS, plain, "hess_potential", "hess_potential", "hess_potential[0][1] is ", NULL, NULL},
      {F_TIME_GRAD, with_time_potential, "forces.potential.gradient forces.potential.hessian",
       "forces.potential.gradient", "gradient[0] is ", "forces.potential.hessian", "forces.potential.gradient"},
      {F_TIME_HESS, with_time_potential, "forces.potential.hessian", "forces.potential.hessian", "hessian[0][1] is ",
       NULL, NULL},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) expect_wrong(&cases[i]);
}

Test(system_check, wrong_constraint_derivatives) {
  const wrong_case cases[] = {
      /* The curvature and derivative kernels are right: their reference, the contraction of the
       * wrong dA, is what fails them. The acceleration's generic reference uses the curvature
       * kernel, so it passes. */
      {F_DA, with_kernels, "constraints_jacobian kernels.constraint_curvature kernels.constraint_derivative",
       "constraints_jacobian", "constraints_jacobian[0][1][0] is ", "kernels.constraint_curvature",
       "constraints_jacobian"},
      {F_DA, with_kernels, "constraints_jacobian kernels.constraint_curvature kernels.constraint_derivative",
       "constraints_jacobian", "constraints_jacobian[0][1][0] is ", "kernels.constraint_derivative",
       "constraints_jacobian"},
      {F_DA, plain, "constraints_jacobian", "constraints_jacobian", "constraints_jacobian[0][1][0] is -1 ", NULL, NULL},
      /* k = 1: the entry [0][1] of db; the row index may be left out. */
      {F_AFFINE_JAC, with_affine, "affine.jacobian", "affine.jacobian", "affine.jacobian[", NULL, NULL},
      {F_HOLONOMIC, with_holonomic, "holonomic", "holonomic", "constraints[", NULL, NULL},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) expect_wrong(&cases[i]);
  /* The entry of the affine and holonomic faults is column 1 (∂/∂y), and the reference named. */
  const fault_kind faults[] = {F_AFFINE_JAC, F_HOLONOMIC};
  nh_system_type (*tables[])(void) = {with_affine, with_holonomic};
  const char *names[] = {"affine.jacobian", "holonomic"};
  const char *refs[] = {"finite differences of affine.values", "finite differences of holonomic"};
  for (int i = 0; i < 2; i++) {
    fault = faults[i];
    const nh_system_type t = tables[i]();
    nh_system_check cs[NH_SYSTEM_CHECKS];
    int count;
    check(&t, cs, &count);
    const nh_system_check *c = find(cs, count, names[i]);
    cr_expect(strstr(c->where, "1] is ") && strstr(c->where, refs[i]), "%s: where '%s'", names[i], c->where);
    fault = F_NONE;
  }
}

Test(system_check, wrong_mass) {
  const wrong_case cases[] = {
      {F_DMASS, with_variable_mass, "mass_jacobian", "mass_jacobian", "mass_jacobian[0][1][1] is -0.29", NULL, NULL},
      {F_ASYMMETRIC, plain, "mass", "mass", "M[0][1] is 0.59", NULL, NULL},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) expect_wrong(&cases[i]);
  /* Not positive definite: nh_system_init refuses such a constant M, so the system is put
   * together by hand (the checker reads the table's mass, never the cache). */
  fault = F_NOT_PD;
  const nh_system_type t = plain();
  nh_system sys;
  cr_expect_eq(nh_system_init(&sys, &t), -1, "nh_system_init took an indefinite M");
  sys = (nh_system){.type = &t, .n = 2, .k = 1};
  nh_system_check cs[NH_SYSTEM_CHECKS];
  const int count = nh_system_check_all(&sys, 3, cs);
  expect_names(cs, count, 1, "mass");
  const nh_system_check *c = find(cs, count, "mass");
  cr_expect(isinf(c->error), "error %g", c->error);
  cr_expect(!strncmp(c->where, "M is inf", 8) && strstr(c->where, "not positive definite"), "where '%s'", c->where);
}

Test(system_check, wrong_kernel_and_state_off_D) {
  const wrong_case cases[] = {
      {F_ACCEL, with_kernels, "kernels.acceleration", "kernels.acceleration", "entry 1 is ", NULL, NULL},
      /* A wrong ∇V makes the generic acceleration, the kernel's reference, wrong too. */
      {F_GRAD, with_kernels, "grad_potential hess_potential kernels.acceleration", "grad_potential",
       "grad_potential[1] is ", "kernels.acceleration", "grad_potential"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) expect_wrong(&cases[i]);
  /* A lane kernel one ulp off on one lane: named with its entry, lane and scalar function. */
  const wrong_case lanes = {
      F_LANES, with_lane_kernels, "kernels.*_lanes", "kernels.*_lanes", "grad_potential_lanes[1] on lane 3 is ", NULL,
      NULL};
  expect_wrong(&lanes);
  /* The kernel off by 1.5 in a_1: the error is about half of |a_1|, far above round-off. */
  fault = F_ACCEL;
  nh_system_type t = with_kernels();
  nh_system_check cs[NH_SYSTEM_CHECKS];
  int count;
  check(&t, cs, &count);
  cr_expect_gt(find(cs, count, "kernels.acceleration")->error, 1e-3);
  cr_expect(strstr(find(cs, count, "kernels.acceleration")->where, "the generic acceleration"));
  fault = F_NONE;
  /* Only the acceleration kernel: it passes, and its reference is the generic code. */
  t.kernels = &acceleration_only;
  check(&t, cs, &count);
  expect_names(cs, count, 0,
               "grad_potential hess_potential mass constraints_jacobian kernels.acceleration default state");
  expect_names(cs, count, 1, "");
  /* A default velocity off D: A v0 = 1 + 0.5 = 1.5. */
  t = plain();
  t.v0 = v0_off;
  check(&t, cs, &count);
  expect_names(cs, count, 1, "default state");
  const nh_system_check *c = find(cs, count, "default state");
  cr_expect(fabs(c->error - 1.5) < 1e-12, "error %.17g", c->error);
  cr_expect(!strncmp(c->where, "|A(q0) v0 + b(q0)| is 1.5 where the constraint gives 0, at q = (0.5, 0.2)",
                     strlen("|A(q0) v0 + b(q0)| is 1.5 where the constraint gives 0, at q = (0.5, 0.2)")),
            "where '%s'", c->where);
  /* The affine table's default v0 is on D only with b: without the affine part it is off. */
  t = plain();
  t.v0 = v0_affine;
  check(&t, cs, &count);
  expect_names(cs, count, 1, "default state");
}

/* A NaN anywhere is the worst error: the check fails with error NaN. */
Test(system_check, nan_fails) {
  fault = F_NAN;
  const nh_system_type t = plain();
  nh_system_check cs[NH_SYSTEM_CHECKS];
  int count;
  check(&t, cs, &count);
  const nh_system_check *g = find(cs, count, "grad_potential");
  cr_expect(!g->ok && isnan(g->error), "grad_potential: ok %d, error %g", g->ok, g->error);
  cr_expect(strstr(g->where, "nan") != NULL, "where '%s'", g->where);
  /* hess_potential's reference (grad_potential) is fine: it passes, yet names the failed check. */
  const nh_system_check *h = find(cs, count, "hess_potential");
  cr_expect(h->ok, "hess_potential failed: %s", h->where);
  cr_expect(h->reference_failed && !strcmp(h->reference_failed, "grad_potential"));
  expect_names(cs, count, 1, "grad_potential");
  fault = F_NONE;
}

/* ---- plugins -------------------------------------------------------------------------------- */

static char dir[64];

static void plugin_setup(void) {
  snprintf(dir, sizeof dir, "/tmp/nhbench-syscheck-XXXXXX");
  cr_assert(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
}
static void plugin_teardown(void) { test_remove_tree(dir); }

/* A plugin's source: every function written out (no host function called), the table's fields
 * chosen by -D flags: NO_<FIELD> leaves one out, N, K, NPARAMS, PARAMS, NAME override, NULL_TABLE
 * has nhbench_system_type() return NULL, ABI the version exported. */
static const char plugin_source[] =
    "#include \"systems/system.h\"\n"
    "#ifndef N\n#define N 2\n#endif\n"
    "#ifndef K\n#define K 1\n#endif\n"
    "#ifndef NPARAMS\n#define NPARAMS 1\n#endif\n"
    "#ifndef PARAMS\n#define PARAMS pdesc\n#endif\n"
    "#ifndef NAME\n#define NAME \"syscheck_plugin\"\n#endif\n"
    "#ifndef ABI\n#define ABI NH_SYSTEM_ABI\n#endif\n"
    "static const nh_param_desc pdesc[] = {{.name = \"w\", .kind = NH_PARAM_REAL, .def = 1, .min = 0, .max = 10}};\n"
    "static const double q0[2] = {0.5, 0.2}, v0[2] = {-0.5, 1};\n"
    "static void mass(const double *p, const double *q, double *M)"
    " { (void)p; (void)q; M[0] = M[3] = 1; M[1] = M[2] = 0; }\n"
    "static double potential(const double *p, const double *q) { return p[0] * (q[0] * q[0] + q[1] * q[1]) / 2; }\n"
    "static void grad_potential(const double *p, const double *q, double *g)"
    " { g[0] = p[0] * q[0]; g[1] = p[0] * q[1]; }\n"
    "static void hess_potential(const double *p, const double *q, double *H)"
    " { (void)q; H[0] = H[3] = p[0]; H[1] = H[2] = 0; }\n"
    "static void constraints(const double *p, const double *q, double *A) { (void)p; A[0] = 1; A[1] = q[0]; }\n"
    "static void constraints_jacobian(const double *p, const double *q, double *dA)"
    " { (void)p; (void)q; dA[0] = dA[1] = dA[3] = 0; dA[2] = 1; }\n"
    "const nh_system_type plug = {\n"
    "#ifndef NO_NAME\n  .name = NAME,\n#endif\n"
    "  .n = N, .k = K, .nparams = NPARAMS, .params = PARAMS,\n"
    "#ifndef NO_Q0\n  .q0 = q0,\n#endif\n"
    "#ifndef NO_V0\n  .v0 = v0,\n#endif\n"
    "#ifndef NO_MASS\n  .mass = mass,\n#endif\n"
    "#ifndef NO_POTENTIAL\n  .potential = potential,\n#endif\n"
    "#ifndef NO_GRAD_POTENTIAL\n  .grad_potential = grad_potential,\n#endif\n"
    "#ifndef NO_HESS_POTENTIAL\n  .hess_potential = hess_potential,\n#endif\n"
    "#ifndef NO_CONSTRAINTS\n  .constraints = constraints,\n#endif\n"
    "#ifndef NO_CONSTRAINTS_JACOBIAN\n  .constraints_jacobian = constraints_jacobian,\n#endif\n"
    "};\n"
    "const int nhbench_system_abi = ABI;\n"
    "#ifdef NULL_TABLE\n"
    "const nh_system_type *nhbench_system_type(void) { return NULL; }\n"
    "#else\n"
    "const nh_system_type *nhbench_system_type(void) { return &plug; }\n"
    "#endif\n";

/* DIR/NAME.so, the source above compiled with the flags; the test is skipped without cc. */
static void compile_plugin(char *path, size_t len, const char *name, const char *flags) {
  char cmd[4096], out[1 << 14], source[128];
  if (test_run_command("command -v cc >/dev/null 2>&1", out, sizeof out) != 0)
    cr_skip_test("no C compiler (cc) to build a plugin with");
  snprintf(source, sizeof source, "%s/plugin.c", dir);
  if (access(source, R_OK) != 0) test_write_file(source, plugin_source);
  snprintf(path, len, "%s/%s.so", dir, name);
  snprintf(cmd, sizeof cmd, "cc -std=c11 -shared -fPIC -w -I'%s' %s -o '%s' '%s' 2>&1", NHBENCH_SOURCE_DIR, flags, path,
           source);
  cr_assert_eq(test_run_command(cmd, out, sizeof out), 0, "%s failed:\n%s", cmd, out);
}

/* Opens the plugin of the flags, which must be refused with a message holding each of the texts. */
static void expect_refused(const char *name, const char *flags, const char *text1, const char *text2) {
  char path[256], err[1024] = "";
  compile_plugin(path, sizeof path, name, flags);
  nh_system_plugin *pl = nh_system_plugin_open(path, err, sizeof err);
  cr_expect_null(pl, "%s: the plugin (%s) was taken", name, flags);
  if (pl) nh_system_plugin_close(pl);
  cr_expect(strstr(err, path) != NULL, "%s: '%s' does not name the file", name, err);
  cr_expect(strstr(err, text1) != NULL, "%s: '%s' does not say '%s'", name, err, text1);
  if (text2) cr_expect(strstr(err, text2) != NULL, "%s: '%s' does not say '%s'", name, err, text2);
}

/* The right plugin loads, its table is the one compiled, and the contract checker passes it. */
Test(system_check, plugin_right_plugin_loads_and_passes, .init = plugin_setup, .fini = plugin_teardown,
     .timeout = 120) {
  char path[256], err[1024] = "";
  compile_plugin(path, sizeof path, "right", "");
  nh_system_plugin *pl = nh_system_plugin_open(path, err, sizeof err);
  cr_assert_not_null(pl, "%s", err);
  const nh_system_type *t = nh_system_plugin_type(pl);
  cr_expect_str_eq(t->name, "syscheck_plugin");
  cr_expect(t->n == 2 && t->k == 1 && t->nparams == 1 && !strcmp(t->params[0].name, "w"));
  nh_system sys;
  cr_assert_eq(nh_system_init(&sys, t), 0);
  cr_expect_eq(sys.p[0], 1);
  cr_expect_eq(nh_potential(&sys, (const double[]){1, 2}), 2.5);
  nh_system_check cs[NH_SYSTEM_CHECKS];
  const int count = nh_system_check_all(&sys, 4, cs);
  expect_names(cs, count, 1, "");
  nh_system_plugin_close(pl);
  nh_system_plugin_close(NULL); /* nothing */
}

Test(system_check, plugin_missing_core_entries_refused, .init = plugin_setup, .fini = plugin_teardown, .timeout = 120) {
  const struct {
    const char *define, *missing;
  } cases[] = {
      {"NO_MASS", "has no mass"},
      {"NO_POTENTIAL", "has no potential"},
      {"NO_GRAD_POTENTIAL", "has no grad_potential"},
      {"NO_HESS_POTENTIAL", "has no hess_potential"},
      {"NO_CONSTRAINTS", "has no constraints"},
      {"NO_CONSTRAINTS_JACOBIAN", "has no constraints_jacobian"},
      {"NO_Q0", "q0 and v0"},
      {"NO_V0", "q0 and v0"},
      {"NO_NAME", "name"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char flags[64];
    snprintf(flags, sizeof flags, "-D%s", cases[i].define);
    expect_refused(cases[i].define, flags, "its table has no", cases[i].missing);
  }
  /* "has no constraints" must not be satisfied by a longer name: the jacobian case is exact. */
  char path[256], err[1024] = "";
  compile_plugin(path, sizeof path, "NO_CONSTRAINTS2", "-DNO_CONSTRAINTS");
  cr_expect_null(nh_system_plugin_open(path, err, sizeof err));
  cr_expect(strstr(err, "constraints_jacobian") == NULL, "'%s'", err);
  /* An empty name is no name either. */
  expect_refused("empty_name", "-DNAME='\"\"'", "its table has no", "name");
}

Test(system_check, plugin_sizes_out_of_range_refused, .init = plugin_setup, .fini = plugin_teardown, .timeout = 120) {
  char big[64], many[64];
  snprintf(big, sizeof big, "-DN=%d -DK=1", NH_MAX_N + 1);
  snprintf(many, sizeof many, "-DNPARAMS=%d", NH_MAX_PARAMS + 1);
  const struct {
    const char *name, *flags, *says;
  } cases[] = {
      {"n0", "-DN=0 -DK=0", "n = 0, k = 0"},
      {"k_eq_n", "-DK=2", "n = 2, k = 2"},
      {"k_gt_n", "-DK=3", "n = 2, k = 3"},
      {"k_negative", "-DK=-1", "k = -1"},
      {"n_big", big, "nhbench takes 1 <= n <="},
      {"many_params", many, "parameters: nhbench takes"},
      {"params_null", "-DPARAMS=NULL", "1 parameters"},
      {"nparams_negative", "-DNPARAMS=-1", "-1 parameters"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    expect_refused(cases[i].name, cases[i].flags, cases[i].says, "0 <= k < n");
}

Test(system_check, plugin_builtin_name_null_table_and_no_plugin_refused, .init = plugin_setup, .fini = plugin_teardown,
     .timeout = 120) {
  char flags[256];
  snprintf(flags, sizeof flags, "-DNAME='\"%s\"'", nh_system_types[0]->name);
  expect_refused("builtin", flags, "is a built-in system's", nh_system_types[0]->name);
  expect_refused("null_table", "-DNULL_TABLE", "nhbench_system_type() returned no table", NULL);
  expect_refused("abi", "-DABI=NH_SYSTEM_ABI+1", "interface version", "rebuild it");
  /* A shared object without NH_SYSTEM_PLUGIN, and a file that is not there. */
  char source[128], path[256], cmd[1024], out[4096], err[1024] = "";
  snprintf(source, sizeof source, "%s/other.c", dir);
  snprintf(path, sizeof path, "%s/other.so", dir);
  test_write_file(source, "int nhbench_something_else(void) { return 1; }\n");
  snprintf(cmd, sizeof cmd, "cc -shared -fPIC -o '%s' '%s' 2>&1", path, source);
  if (test_run_command("command -v cc >/dev/null 2>&1", out, sizeof out) != 0) cr_skip_test("no cc");
  cr_assert_eq(test_run_command(cmd, out, sizeof out), 0, "%s", out);
  cr_expect_null(nh_system_plugin_open(path, err, sizeof err));
  cr_expect(strstr(err, "is not an nhbench system plugin"), "'%s'", err);
  snprintf(path, sizeof path, "%s/absent.so", dir);
  cr_expect_null(nh_system_plugin_open(path, err, sizeof err));
  cr_expect(strstr(err, "does not load"), "'%s'", err);
  /* A name without '/' is a file here, not a library on the search path. */
  cr_expect_null(nh_system_plugin_open("libm.so.6", err, sizeof err));
  cr_expect(strstr(err, "does not load") && strstr(err, "./libm.so.6"), "'%s'", err);
}

/* An unconstrained system (k = 0) with an acceleration kernel: the kernel is compared all the same
 * (it was once skipped with the constraint kernels, and a wrong one passed with error 0). The
 * oscillator V = q²/2, M = 1: a = −q. */
static double kernel_factor = 1;
static void unit_mass_1(const double *p NH_UNUSED, const double *q NH_UNUSED, double *M) { M[0] = 1; }
static double half_square(const double *p NH_UNUSED, const double *q) { return 0.5 * q[0] * q[0]; }
static void identity_gradient(const double *p NH_UNUSED, const double *q, double *g) { g[0] = q[0]; }
static void unit_hessian(const double *p NH_UNUSED, const double *q NH_UNUSED, double *H) { H[0] = 1; }
static int oscillator_acceleration(const double *p NH_UNUSED, double t NH_UNUSED, const double *q,
                                   const double *v NH_UNUSED, double *a, double *lambda NH_UNUSED) {
  a[0] = -kernel_factor * q[0];
  return 0;
}

Test(system_check, unconstrained_acceleration_kernel_is_compared) {
  static const double zero[] = {0.3}, one[] = {0};
  static const nh_system_kernels kernels = {.acceleration = oscillator_acceleration};
  static const nh_system_type t = {.name = "check_oscillator",
                                   .n = 1,
                                   .k = 0,
                                   .q0 = zero,
                                   .v0 = one,
                                   .mass = unit_mass_1,
                                   .potential = half_square,
                                   .grad_potential = identity_gradient,
                                   .hess_potential = unit_hessian,
                                   .constraints = nh_no_constraints,
                                   .constraints_jacobian = nh_no_constraints,
                                   .kernels = &kernels};
  nh_system sys;
  cr_assert_eq(nh_system_init(&sys, &t), 0);
  nh_system_check cs[NH_SYSTEM_CHECKS];
  for (int wrong = 0; wrong < 2; wrong++) {
    kernel_factor = wrong ? 2 : 1;
    const int n = nh_system_check_all(&sys, 3, cs);
    int found = 0;
    for (int i = 0; i < n; i++) {
      if (strcmp(cs[i].name, "kernels.acceleration") != 0) continue;
      found = 1;
      cr_expect(cs[i].applies, "the acceleration kernel's check does not apply to k = 0");
      cr_expect_eq(cs[i].ok, !wrong, "an acceleration kernel %s is %s", wrong ? "twice too large" : "right",
                   cs[i].ok ? "passed" : "refused");
      if (wrong) cr_expect_gt(cs[i].error, 0.5, "error %g", cs[i].error);
    }
    cr_expect(found);
  }
}
