/* The failure returns of systems/ and integrators/ on the paths where a linear system is singular:
 * each public function's exact -1 (an error code turned positive anywhere on the path must fail
 * here), the generic sampler that finds no state, and every method's step reporting
 * NH_STEP_SOLVER_FAILED, not a state, where the constraint's Gram matrix vanishes. The systems are
 * test-only types built to be singular: a constraint row that is identically zero, two equal
 * rows, a configuration-dependent mass matrix that is singular at q0 = 0. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "integrators/newton.h"
#include "tests/helpers.h"

/* V = ½|q|² on R², M = I; the calls counted (the generic sampler evaluates V once per draw). */
static long potential_calls;
static double potential(const double *p, const double *q) {
  (void)p;
  potential_calls++;
  return 0.5 * (q[0] * q[0] + q[1] * q[1]);
}
static void grad_potential(const double *p, const double *q, double *g) {
  (void)p;
  g[0] = q[0], g[1] = q[1];
}
static void hess_potential(const double *p, const double *q, double *H) {
  (void)p, (void)q;
  H[0] = 1, H[1] = H[2] = 0, H[3] = 1;
}
static void unit_mass(const double *p, const double *q, double *M) {
  (void)p, (void)q;
  M[0] = 1, M[1] = M[2] = 0, M[3] = 1;
}
static void heavy_mass(const double *p, const double *q, double *M) {
  (void)p, (void)q;
  M[0] = 2, M[1] = M[2] = 0, M[3] = 1;
}
/* M(q) = diag(q0, 1): singular at q0 = 0, indefinite below. */
static void singular_mass(const double *p, const double *q, double *M) {
  (void)p;
  M[0] = q[0], M[1] = M[2] = 0, M[3] = 1;
}
static void singular_mass_jacobian(const double *p, const double *q, double *dM) {
  (void)p, (void)q;
  memset(dM, 0, sizeof(double) * 8);
  dM[0] = 1; /* ∂M_00/∂q^0 */
}
/* μ ≡ 0 (k = 1): the constraint holds for every v and C = A M⁻¹Aᵀ = 0. */
static void zero_row(const double *p, const double *q, double *A) {
  (void)p, (void)q;
  A[0] = A[1] = 0;
}
/* Two equal rows (k = 2): C = [[1, 1], [1, 1]] is singular. */
static void equal_rows(const double *p, const double *q, double *A) {
  (void)p, (void)q;
  A[0] = 1, A[1] = 0, A[2] = 1, A[3] = 0;
}
/* μ = (0, 1): regular. */
static void second_row(const double *p, const double *q, double *A) {
  (void)p, (void)q;
  A[0] = 0, A[1] = 1;
}
static void constant_rows_jacobian(const double *p, const double *q, double *dA) {
  (void)p, (void)q;
  memset(dA, 0, sizeof(double) * 8); /* k ≤ 2, n = 2 */
}

static const double q0[] = {0.3, 1}, v0[] = {0.2, 0.5};

static const nh_system_knowledge generic_sampler = {.sample_box = 1, .sampler_doc = "generic"};

#define TEST_SYSTEM(type_name, k_, mass_, mass_jacobian_, rows)                                                  \
  {.name = type_name, .doc = "test-only", .n = 2, .k = k_, .q0 = q0, .v0 = v0, .mass = mass_,                    \
   .mass_jacobian = mass_jacobian_, .potential = potential, .grad_potential = grad_potential,                    \
   .hess_potential = hess_potential, .constraints = rows, .constraints_jacobian = constant_rows_jacobian,         \
   .knowledge = &generic_sampler}

static const nh_system_type zero_constraint = TEST_SYSTEM("zero_constraint", 1, unit_mass, NULL, zero_row);
static const nh_system_type heavy_zero_constraint =
    TEST_SYSTEM("heavy_zero_constraint", 1, heavy_mass, NULL, zero_row);
static const nh_system_type equal_constraints = TEST_SYSTEM("equal_constraints", 2, unit_mass, NULL, equal_rows);
static const nh_system_type singular_mass_system =
    TEST_SYSTEM("singular_mass", 1, singular_mass, singular_mass_jacobian, second_row);

/* What every generic quantity that needs C⁻¹ reports where C is singular: exactly -1. */
static void expect_gram_failures(const nh_system_type *t, const double *q) {
  nh_system sys = test_system_of(t, NULL);
  double v[NH_MAX_N] = {0.2, 0.5}, y[NH_MAX_K], lam[NH_MAX_K], acc[NH_MAX_N], A[NH_MAX_K * NH_MAX_N];
  double X[NH_MAX_N + NH_MAX_K];
  nh_cost cost = {0};
  t->constraints(sys.p, q, A);
  cr_expect_eq(nh_project_onto(&sys, q, A, NULL, v, y), -1, "%s: nh_project_onto", t->name);
  cr_expect_eq(nh_project_velocity_multiplier(&sys, q, v, y), -1, "%s: nh_project_velocity_multiplier", t->name);
  cr_expect_eq(nh_project_velocity(&sys, q, v), -1, "%s: nh_project_velocity", t->name);
  cr_expect_eq(nh_multiplier(&sys, 0, q, v, lam), -1, "%s: nh_multiplier", t->name);
  cr_expect_eq(nh_acceleration(&sys, 0, q, v, acc), -1, "%s: nh_acceleration", t->name);
  cr_expect_eq(nh_newton_velocity_guess(&sys, 0, q, v, 0.1, X, &cost), -1, "%s: nh_newton_velocity_guess", t->name);
  cr_expect_eq(cost.rhs_evals + cost.constraint_evals, 0, "%s: a failed guess counted as evaluated", t->name);
}

Test(failure_returns, singular_gram_matrix_is_minus_one_on_every_path) {
  const double q[] = {0.3, 1};
  expect_gram_failures(&zero_constraint, q);       /* M = I, k = 1: the one-pass projection */
  expect_gram_failures(&heavy_zero_constraint, q); /* constant M ≠ I: the Gram matrix from M⁻¹ */
  expect_gram_failures(&equal_constraints, q);     /* k = 2: the Cholesky solve */
}

Test(failure_returns, singular_mass_matrix_is_minus_one_on_every_path) {
  nh_system sys = test_system_of(&singular_mass_system, NULL);
  const double q[] = {0, 1}, good[] = {1, 1};
  double v[NH_MAX_N] = {0.2, 0}, p[NH_MAX_N] = {1, 1}, out[NH_MAX_N], A[NH_MAX_N], W[NH_MAX_N], C[1];
  double y[1], lam[1], acc[NH_MAX_N];
  second_row(sys.p, q, A);
  cr_assert_eq(sys.constant_mass, 0);
  cr_expect_eq(nh_mass_solve(&sys, q, p, out), -1, "nh_mass_solve with a singular M(q)");
  cr_expect_eq(nh_constraint_gram(&sys, q, A, W, C), -1, "nh_constraint_gram with a singular M(q)");
  cr_expect_eq(nh_project_onto(&sys, q, A, NULL, v, y), -1, "nh_project_onto with a singular M(q)");
  cr_expect_eq(nh_multiplier(&sys, 0, q, v, lam), -1, "nh_multiplier with a singular M(q)");
  cr_expect_eq(nh_acceleration(&sys, 0, q, v, acc), -1, "nh_acceleration with a singular M(q)");
  /* the negative control: the same calls where M(q) is regular */
  cr_expect_eq(nh_mass_solve(&sys, good, p, out), 0);
  cr_expect_eq(nh_constraint_gram(&sys, good, A, W, C), 0);
  cr_expect_eq(nh_multiplier(&sys, 0, good, v, lam), 0);
  cr_expect_eq(nh_acceleration(&sys, 0, good, v, acc), 0);
}

Test(failure_returns, reference_solver_fails_where_the_multiplier_is_undefined) {
  nh_system sys = test_system_of(&zero_constraint, NULL);
  nh_state x0 = {0}, x;
  const char *kind = NULL;
  nh_system_default_state(&sys, &x0);
  cr_expect_eq(nh_reference_solve(&sys, &x0, 1, 1e-10, &x), -1);
  cr_expect_eq(nh_true_solution(&sys, &x0, 1, 1e-10, &x, &kind), -1);
  cr_expect(kind && strcmp(kind, "rk8pd") == 0, "kind '%s'", kind ? kind : "(null)");
}

/* The reference solver's failures told apart: a tolerance GSL refuses is the solver's (-1), no
 * memory for its driver is NH_REFERENCE_NO_MEMORY (which the studies report as such, not as a
 * failed solve); nh_true_solution passes either on. */
Test(failure_returns, reference_solver_out_of_memory_or_refused) {
  nh_system sys = test_system("chaotic_particle", NULL);
  nh_state x0 = {0}, x;
  nh_system_default_state(&sys, &x0);
  cr_expect_eq(nh_reference_solve(&sys, &x0, 0.1, -1, &x), -1);
  test_fail_allocation = 1;
  const int rc = nh_reference_solve(&sys, &x0, 0.1, 1e-10, &x);
  test_fail_allocation = 0;
  cr_expect_eq(rc, NH_REFERENCE_NO_MEMORY);
  test_fail_allocation = 1;
  const int truth = nh_true_solution(&sys, &x0, 0.1, 1e-10, &x, NULL);
  test_fail_allocation = 0;
  cr_expect_eq(truth, NH_REFERENCE_NO_MEMORY);
  cr_expect_eq(nh_reference_solve(&sys, &x0, 0.1, 1e-10, &x), 0);
  cr_expect(fabs(x.t - 0.1) < 1e-15 && nh_constraint_residual(&sys, x.q, x.v) < 1e-9, "t %g", x.t);
}

/* The generic sampler projects every draw: with C ≡ 0 no projection succeeds, and after exactly
 * 10⁶ draws (systems/system.h) it reports -1, not a state off D. */
Test(failure_returns, generic_sampler_gives_up_when_no_projection_succeeds) {
  nh_system sys = test_system_of(&zero_constraint, NULL);
  gsl_rng *r = test_rng(3);
  nh_state x;
  potential_calls = 0;
  cr_expect_eq(nh_sample_on_D(&sys, 10, r, &x), -1);
  cr_expect_eq(potential_calls, 1000000, "%ld draws", potential_calls);
  gsl_rng_free(r);
}

/* Methods whose init reads the starting multiplier or the start acceleration: on these systems they
 * fail there, before any step. */
static int init_needs_the_multiplier(const char *name) {
  static const char *const names[] = {"nh_rattle", "nh_shake", "m11", "la1", "ida", "cvode"};
  for (size_t i = 0; i < sizeof names / sizeof *names; i++)
    if (strcmp(name, names[i]) == 0) return 1;
  return 0;
}

/* Every base method that applies to the zero constraint needs C⁻¹ (a projection, the multiplier or
 * a Newton system whose λ columns are Aᵀ = 0): init or the first step must report
 * NH_STEP_SOLVER_FAILED, never a state, and already at the start multiplier or the first linear
 * solve, before any Newton iteration. nh_rattle and nh_shake also with lambda0 = 0, which starts
 * without the multiplier and meets the singular projection in the step. */
Test(failure_returns, every_method_fails_where_the_gram_matrix_vanishes) {
  const nh_system_type *const systems[] = {&zero_constraint, &heavy_zero_constraint, &equal_constraints};
  const char *texts[64];
  int ntexts = 0, tried = 0;
  for (int i = 0; nh_integrator_types[i]; i++)
    if (!nh_integrator_types[i]->takes_base) texts[ntexts++] = nh_integrator_types[i]->name;
  texts[ntexts++] = "nh_rattle(lambda0=0)";
  texts[ntexts++] = "nh_shake(lambda0=0)";
  cr_assert_leq(ntexts, 64);
  for (size_t s = 0; s < sizeof systems / sizeof *systems; s++) {
    nh_system sys = test_system_of(systems[s], NULL);
    for (int i = 0; i < ntexts; i++) {
      char err[512] = "";
      nh_method *m = test_method(texts[i]);
      if (nh_method_applies(m, &sys, err, sizeof err) < 0) {
        nh_method_free(m);
        continue;
      }
      nh_state x, y;
      nh_cost cost = {0};
      nh_system_default_state(&sys, &x);
      nh_step_status st = nh_method_init(m, &sys, &x, 0.1, &cost);
      const int at_init = st != NH_STEP_OK;
      if (!at_init) st = nh_method_step(m, &sys, &x, &y, 0.1, &cost);
      cr_expect_eq(st, NH_STEP_SOLVER_FAILED, "%s on %s: status %d", texts[i], sys.type->name, (int)st);
      cr_expect_eq(cost.newton_iterations, 0, "%s on %s: %llu Newton iterations before failing", texts[i],
                   sys.type->name, cost.newton_iterations);
      if (init_needs_the_multiplier(texts[i]))
        cr_expect(at_init, "%s on %s: init succeeded without a multiplier", texts[i], sys.type->name);
      tried++;
      nh_method_free(m);
    }
  }
  cr_expect_geq(tried, 30, "only %d (method, system) pairs ran", tried);
}
