/* Every method on a system as large as nh_state allows: n = NH_MAX_N, k = NH_MAX_K. The registry's
 * systems stop at n = 7, so a loop over the coordinates that runs one index too far (i <= n)
 * writes into an unused slot and passes every other test; here that slot does not exist, and the
 * write lands in the neighbouring field (q[n] is v[0], lambda[k] is carry[0]) or past a local
 * array, and the trajectory goes wrong. The reference is computed here, independently of
 * nhbench's systems layer: the index-reduced ODE written out below (spec/newmark.md §2.0:
 * M a = f + Aᵀλ with λ from A a + (DA[v])v = 0), integrated by GSL's rk8pd to 1e-13.
 *
 * The system: constant diagonal mass M_ii = 1 + i/4, potential V = Σ ½ c_i q_i² + q_i⁴/40 with
 * c_i = 1 + i/8, and k = 4 nonholonomic constraints μ^a·v = 0 with
 *   μ^a = e_{2a} − sin(q_{j(a)}) e_{2a+1},   j(a) = (2a + 3) mod n,
 * of full rank everywhere (the 1 in column 2a). */
#include <criterion/criterion.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_odeiv2.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tests/helpers.h"

enum { N = NH_MAX_N, K = NH_MAX_K };
_Static_assert(2 * K <= N, "one constraint per pair of coordinates");

static double mass_ii(int i) { return 1 + i / 4.0; }
static double stiffness(int i) { return 1 + i / 8.0; }
static int angle_of(int a) { return (2 * a + 3) % N; }

static void mass(const double *p, const double *q, double *M) {
  (void)p, (void)q;
  memset(M, 0, sizeof(double) * N * N);
  for (int i = 0; i < N; i++) M[i * N + i] = mass_ii(i);
}
static double potential(const double *p, const double *q) {
  (void)p;
  double V = 0;
  for (int i = 0; i < N; i++) V += 0.5 * stiffness(i) * q[i] * q[i] + pow(q[i], 4) / 40;
  return V;
}
static void grad_potential(const double *p, const double *q, double *g) {
  (void)p;
  for (int i = 0; i < N; i++) g[i] = stiffness(i) * q[i] + pow(q[i], 3) / 10;
}
static void hess_potential(const double *p, const double *q, double *H) {
  (void)p;
  memset(H, 0, sizeof(double) * N * N);
  for (int i = 0; i < N; i++) H[i * N + i] = stiffness(i) + 3 * q[i] * q[i] / 10;
}
static void constraints(const double *p, const double *q, double *A) {
  (void)p;
  memset(A, 0, sizeof(double) * K * N);
  for (int a = 0; a < K; a++) A[a * N + 2 * a] = 1, A[a * N + 2 * a + 1] = -sin(q[angle_of(a)]);
}
static void constraints_jacobian(const double *p, const double *q, double *dA) {
  (void)p;
  memset(dA, 0, sizeof(double) * K * N * N);
  for (int a = 0; a < K; a++) dA[(a * N + 2 * a + 1) * N + angle_of(a)] = -cos(q[angle_of(a)]);
}

static double q0[N], v0[N];
static const nh_system_knowledge full_size_knowledge = {.sample_box = 1};
static const nh_system_type full_size = {
    .name = "full_size",
    .doc = "tests/contracts/test_full_size.c: n = NH_MAX_N, k = NH_MAX_K",
    .n = N,
    .k = K,
    .q0 = q0,
    .v0 = v0,
    .knowledge = &full_size_knowledge,
    .mass = mass,
    .potential = potential,
    .grad_potential = grad_potential,
    .hess_potential = hess_potential,
    .constraints = constraints,
    .constraints_jacobian = constraints_jacobian,
};

/* A state on D: v_{2a} = sin(q_j(a)) v_{2a+1}. */
static void initial_state(void) {
  for (int i = 0; i < N; i++) q0[i] = 0.3 * cos(1.7 * i + 0.4), v0[i] = 0.8 * sin(2.3 * i + 1.1);
  for (int a = 0; a < K; a++) v0[2 * a] = sin(q0[angle_of(a)]) * v0[2 * a + 1];
}

/* The index-reduced ODE, y = (q, v): λ from (A M⁻¹ Aᵀ) λ = −A M⁻¹ f − (DA[v])v, a = M⁻¹(f + Aᵀλ). */
static int reduced_ode(double t, const double y[], double dy[], void *unused) {
  (void)t, (void)unused;
  const double *q = y, *v = y + N;
  double A[K * N], f[N], S[K * K], r[K], lambda[K];
  constraints(NULL, q, A);
  grad_potential(NULL, q, f);
  for (int i = 0; i < N; i++) f[i] = -f[i];
  for (int a = 0; a < K; a++) {
    const int j = angle_of(a);
    r[a] = cos(q[j]) * v[2 * a + 1] * v[j]; /* −(DA[v])v: −Σ ∂_j μ^a_i v_i v_j */
    for (int i = 0; i < N; i++) r[a] -= A[a * N + i] * f[i] / mass_ii(i);
    for (int b = 0; b < K; b++) {
      S[a * K + b] = 0;
      for (int i = 0; i < N; i++) S[a * K + b] += A[a * N + i] * A[b * N + i] / mass_ii(i);
    }
  }
  gsl_matrix_view Sv = gsl_matrix_view_array(S, K, K);
  gsl_vector_view rv = gsl_vector_view_array(r, K), lv = gsl_vector_view_array(lambda, K);
  gsl_linalg_cholesky_decomp1(&Sv.matrix);
  gsl_linalg_cholesky_solve(&Sv.matrix, &rv.vector, &lv.vector);
  for (int i = 0; i < N; i++) {
    double force = f[i];
    for (int a = 0; a < K; a++) force += A[a * N + i] * lambda[a];
    dy[i] = v[i], dy[N + i] = force / mass_ii(i);
  }
  return GSL_SUCCESS;
}

static void reference(double T, double *y) {
  gsl_odeiv2_system ode = {reduced_ode, NULL, 2 * N, NULL};
  gsl_odeiv2_driver *d = gsl_odeiv2_driver_alloc_y_new(&ode, gsl_odeiv2_step_rk8pd, 1e-3, 1e-13, 1e-13);
  double t = 0;
  memcpy(y, q0, sizeof q0), memcpy(y + N, v0, sizeof v0);
  cr_assert_eq(gsl_odeiv2_driver_apply(d, &t, T, y), GSL_SUCCESS);
  gsl_odeiv2_driver_free(d);
}

/* The reference system's own check: the reference keeps A(q)v = 0, so the ODE above is the one
 * meant (a sign error in the curvature term would let the constraint drift). */
Test(full_size, reference_stays_on_the_constraint) {
  initial_state();
  double y[2 * N], A[K * N];
  reference(1.0, y);
  constraints(NULL, y, A);
  for (int a = 0; a < K; a++) {
    double c = 0;
    for (int i = 0; i < N; i++) c += A[a * N + i] * y[N + i];
    cr_expect(fabs(c) < 1e-11, "constraint %d: %g", a, c);
  }
}

/* Every base method that applies (default parameters), and its adjoint pair, 40 steps of
 * h = 0.0025 to T = 0.1, against the reference (a write past the state's arrays is an error of
 * order one). */
static int check_method(const char *text, int must_parse) {
  const double T = 0.1, h = 0.0025;
  const long steps = 40;
  char err[512];
  nh_system sys;
  cr_assert_eq(nh_system_init(&sys, &full_size), 0);
  nh_method *m = nh_method_parse(text, err, sizeof err);
  cr_assert(m || !must_parse, "%s", err);
  if (!m) return 0; /* an adjoint pair of a method without a known adjoint */
  if (nh_method_applies(m, &sys, err, sizeof err) != 0) {
    nh_method_free(m);
    return 0;
  }
  double y[2 * N];
  reference(T, y);
  nh_state x, next;
  memset(&x, 0, sizeof x);
  nh_system_default_state(&sys, &x);
  nh_cost cost = {0};
  cr_assert_eq(nh_method_init(m, &sys, &x, h, &cost), NH_STEP_OK, "%s: init", text);
  for (long s = 0; s < steps; s++) {
    cr_assert_eq(nh_method_step(m, &sys, &x, &next, h, &cost), NH_STEP_OK, "%s: step %ld", text, s);
    x = next;
  }
  double worst = 0;
  for (int i = 0; i < N; i++) worst = fmax(worst, fmax(fabs(x.q[i] - y[i]), fabs(x.v[i] - y[N + i])));
  /* Each is at least 15 times its method's error here (order 1: ≤ 3.3e-4, order 2: ≤ 6.7e-8, rk4:
   * 1.5e-14, ida/cvode at their default rtol = 1e-6: ≤ 2.7e-7). */
  const int order = nh_method_order(m);
  const double tol = (m->type->properties & NH_TOLERANCE_DRIVEN) ? 1e-5 : order >= 4 ? 1e-12 : order >= 2 ? 1e-6 : 5e-3;
  cr_expect(worst < tol, "%s: max |x - x_ref| = %g at T = %g (order %d: below %g)", text, worst, T, order, tol);
  cr_expect(fabs(x.t - T) < 1e-12, "%s: t = %.17g, not %g", text, x.t, T);
  nh_method_free(m);
  return 1;
}

Test(full_size, every_method_at_the_largest_dimensions) {
  initial_state();
  int applied = 0;
  for (int i = 0; nh_integrator_types[i]; i++) {
    const nh_integrator_type *t = nh_integrator_types[i];
    if (t->takes_base) continue;
    char text[256];
    snprintf(text, sizeof text, "%s", t->name);
    applied += check_method(text, 1);
    snprintf(text, sizeof text, "adjoint_pair(%s)", t->name);
    if (!(t->properties & (NH_HISTORY | NH_TOLERANCE_DRIVEN))) check_method(text, 0);
  }
  cr_expect(applied >= 10, "only %d methods", applied);
}
