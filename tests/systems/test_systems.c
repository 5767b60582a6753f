/* Unit tests of the system interface and the generic derived quantities (systems/ sources,
 * integrators/reference.c) against exact solutions, finite differences and values stated in
 * spec/newmark.md (§2.0, §3.1, §3.2, §5 C1, §6 A10). */
#include <criterion/criterion.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <string.h>

#include "integrators/integrator.h"
#include "tests/checks.h"
#include "systems/system.h"

/* ---- shared helpers ------------------------------------------------------------------------- */

static double max_abs_diff(int n, const double *a, const double *b) {
  double d = 0;
  for (int i = 0; i < n; i++) d = fmax(d, fabs(a[i] - b[i]));
  return d;
}

/* A particle state on D: ż = y ẋ (spec §3.1). */
static nh_state particle_state(double t, double x, double y, double z, double vx, double vy) {
  nh_state s;
  memset(&s, 0, sizeof s);
  s.t = t;
  s.q[0] = x, s.q[1] = y, s.q[2] = z;
  s.v[0] = vx, s.v[1] = vy, s.v[2] = y * vx;
  return s;
}

/* A random state on D built directly from the constraint, independent of the library's
 * projection: particle ż = y ẋ; chaotic particle ẋ = −(y1 ż1 + y2 ż2) (spec §3.1, §3.2). */
static void random_state_on_D(const nh_system *sys, gsl_rng *r, nh_state *s) {
  memset(s, 0, sizeof *s);
  for (int i = 0; i < sys->n; i++) {
    s->q[i] = 4 * gsl_rng_uniform(r) - 2;
    s->v[i] = 4 * gsl_rng_uniform(r) - 2;
  }
  if (strcmp(sys->type->name, "particle") == 0)
    s->v[2] = s->q[1] * s->v[0];
  else
    s->v[0] = -(s->q[1] * s->v[3] + s->q[2] * s->v[4]);
}

static const double particle_times[] = {-1.3, 0.0, 0.4, 2.0, 7.5};
#define NTIMES (int)(sizeof particle_times / sizeof particle_times[0])

/* ---- nonholonomic particle: exact solution (spec §3.1) -------------------------------------- */

/* spec §3.1: the exact flow stays on D (ż − yẋ = 0) and conserves E = ½|v|². */
static void check_exact_invariants(const nh_state *x0) {
  nh_system sys = test_system("particle", NULL);
  double E0 = nh_energy(&sys, x0->q, x0->v);
  for (int i = 0; i < NTIMES; i++) {
    nh_state x;
    cr_assert(nh_exact_solution(&sys, x0, particle_times[i], &x) == 0, "exact() failed");
    double res = nh_constraint_residual(&sys, x.q, x.v);
    double dE = fabs(nh_energy(&sys, x.q, x.v) - E0);
    cr_assert(res <= 1e-14, "t=%g: constraint residual %.3e > 1e-14", particle_times[i], res);
    cr_assert(dE <= 1e-14, "t=%g: |E-E0| = %.3e > 1e-14", particle_times[i], dE);
  }
}

Test(systems, particle_exact_on_D_and_conserves_energy) {
  check_exact_invariants(&(nh_state){.t = 0, .q = {1, 1, -1}, .v = {1, -1, 1}}); /* paper Fig. 1 IC */
  nh_state s = particle_state(1.5, 0.3, -0.7, 2.0, -0.8, 0.45);
  check_exact_invariants(&s);
  s = particle_state(0, -0.2, 0.9, 0.1, 0.6, 0); /* ẏ = 0 branch */
  check_exact_invariants(&s);
}

/* spec §3.1: the exact solution solves q̇ = v, v̇ = Γ_nh(q,v,λ(q,v)) (central differences,
 * δ = 1e-4: truncation ~δ², round-off ~1e-16/δ) and starts at x0. */
static void check_exact_solves_eom(const nh_state *x0) {
  nh_system sys = test_system("particle", NULL);
  const double d = 1e-4;
  nh_state x, xp, xm;
  cr_assert(nh_exact_solution(&sys, x0, x0->t, &x) == 0, "exact() failed");
  double e0 = fmax(max_abs_diff(3, x.q, x0->q), max_abs_diff(3, x.v, x0->v));
  cr_assert(e0 <= 1e-15, "exact(t0) differs from x0 by %.3e", e0);
  for (int i = 0; i < NTIMES; i++) {
    double t = x0->t + particle_times[i], acc[3], dq[3], dv[3];
    nh_exact_solution(&sys, x0, t, &x);
    nh_exact_solution(&sys, x0, t + d, &xp);
    nh_exact_solution(&sys, x0, t - d, &xm);
    cr_assert(nh_acceleration(&sys, x.t, x.q, x.v, acc) == 0, "nh_acceleration failed");
    for (int j = 0; j < 3; j++) {
      dq[j] = (xp.q[j] - xm.q[j]) / (2 * d);
      dv[j] = (xp.v[j] - xm.v[j]) / (2 * d);
    }
    double eq = max_abs_diff(3, dq, x.v), ev = max_abs_diff(3, dv, acc);
    cr_assert(eq <= 1e-7, "t=%g: |dq/dt - v| = %.3e > 1e-7", t, eq);
    cr_assert(ev <= 1e-7, "t=%g: |dv/dt - a(q,v)| = %.3e > 1e-7", t, ev);
  }
}

Test(systems, particle_exact_solves_equations_of_motion) {
  check_exact_solves_eom(&(nh_state){.t = 0, .q = {1, 1, -1}, .v = {1, -1, 1}});
  nh_state s = particle_state(1.5, 0.3, -0.7, 2.0, -0.8, 0.45);
  check_exact_solves_eom(&s);
}

Test(systems, particle_exact_w0_branch) {
  /* ẏ0 = 0 (spec §3.1: λ = ẋẏ/(1+y²) = 0): uniform motion, handled by its own branch. */
  nh_state s = particle_state(0.7, -0.2, 0.9, 0.1, 0.6, 0);
  check_exact_solves_eom(&s);
  nh_state x;
  nh_system sys = test_system("particle", NULL);
  nh_exact_solution(&sys, &s, 0.7 + 2.5, &x);
  cr_assert_float_eq(x.q[0], -0.2 + 0.6 * 2.5, 1e-15, "x(t) = x0 + ẋ0 t, got %.17g", x.q[0]);
  cr_assert_float_eq(x.q[2], 0.1 + 0.9 * 0.6 * 2.5, 1e-15, "z(t) = z0 + y0 ẋ0 t, got %.17g", x.q[2]);
}

/* ---- default initial conditions (spec §5 C1) ------------------------------------------------ */

Test(systems, particle_default_ic) {
  /* spec C1: E0 = 1.5, μ·v0 = 0. */
  nh_system sys = test_system("particle", NULL);
  nh_state x;
  nh_system_default_state(&sys, &x);
  cr_assert_float_eq(nh_energy(&sys, x.q, x.v), 1.5, 1e-15, "particle E0 should be 1.5");
  cr_assert(nh_constraint_residual(&sys, x.q, x.v) == 0, "particle default IC is not on D");
}

Test(systems, chaotic_particle_default_ic) {
  /* spec C1, §3.2: E0 = 3.2575 (KE 0.2575 + V 3.0), μ·v0 = 0. */
  nh_system sys = test_system("chaotic_particle", NULL);
  nh_state x;
  nh_system_default_state(&sys, &x);
  cr_assert_float_eq(sys.type->potential(sys.p, x.q), 3.0, 1e-15, "V(q0) should be 3");
  cr_assert_float_eq(nh_energy(&sys, x.q, x.v), 3.2575, 1e-14, "chaotic E0 should be 3.2575");
  cr_assert(nh_constraint_residual(&sys, x.q, x.v) == 0, "chaotic default IC is not on D");
}

/* ---- derivatives by finite differences (spec §3.1, §3.2) ------------------------------------ */

/* Central differences with δ = 1e-5 at 10 random points in [-2,2]^n (tests/checks.h). */

Test(systems, particle_derivatives_match_finite_differences) {
  test_check_system_derivatives("particle", NULL, 12345);
}
Test(systems, chaotic_particle_derivatives_match_finite_differences) {
  test_check_system_derivatives("chaotic_particle", NULL, 12345);
}

/* ---- eliminated multiplier (spec §2.0, §3.1, §3.2 [derived]) -------------------------------- */

/* The acceleration keeps the velocity on D: d/dt(A v) = A a + (DA[v]) v = 0 (spec §2.0). */
static void check_tangent(const nh_system *sys, const nh_state *s) {
  double a[NH_MAX_N], A[NH_MAX_K * NH_MAX_N], curv[NH_MAX_K];
  cr_assert(nh_acceleration(sys, s->t, s->q, s->v, a) == 0, "nh_acceleration failed");
  sys->type->constraints(sys->p, s->q, A);
  nh_curvature_term(sys, s->q, s->v, curv);
  double Aa = 0, scale = fabs(curv[0]);
  for (int i = 0; i < sys->n; i++) Aa += A[i] * a[i], scale += fabs(A[i] * a[i]);
  cr_assert(fabs(Aa + curv[0]) <= 1e-14 * (1 + scale), "%s: A a + (DA[v])v = %.3e, not 0", sys->type->name,
            Aa + curv[0]);
}

/* λ of nh_multiplier against the spec's closed form at 10 random states on D (seeded), relative
 * tolerance tol, and the acceleration tangent to D there (check_tangent). */
static void check_multiplier_closed_form(const char *name, unsigned long seed, double (*closed_form)(const nh_state *),
                                         double tol) {
  nh_system sys = test_system(name, NULL);
  gsl_rng *r = test_rng(seed);
  for (int trial = 0; trial < 10; trial++) {
    nh_state s;
    double lambda;
    random_state_on_D(&sys, r, &s);
    const double expect = closed_form(&s);
    cr_assert(nh_multiplier(&sys, s.t, s.q, s.v, &lambda) == 0, "nh_multiplier failed");
    cr_assert(fabs(lambda - expect) <= tol * (1 + fabs(expect)), "%s λ = %.17g, closed form %.17g", name, lambda,
              expect);
    check_tangent(&sys, &s);
  }
  gsl_rng_free(r);
}

/* spec §3.1 [derived]: λ = ẋẏ/(1+y²). */
static double particle_lambda(const nh_state *s) { return s->v[0] * s->v[1] / (1 + s->q[1] * s->q[1]); }

/* spec §3.2 [derived]: λ = [x + y1(z1 + z1z2² + y1²z1) + y2(z2 + z1²z2 + y2²z2)
 *                          − (ẏ1ż1 + ẏ2ż2)] / (1 + y1² + y2²). */
static double chaotic_lambda(const nh_state *s) {
  const double x = s->q[0], y1 = s->q[1], y2 = s->q[2], z1 = s->q[3], z2 = s->q[4];
  const double dy1 = s->v[1], dy2 = s->v[2], dz1 = s->v[3], dz2 = s->v[4];
  return (x + y1 * (z1 + z1 * z2 * z2 + y1 * y1 * z1) + y2 * (z2 + z1 * z1 * z2 + y2 * y2 * z2) -
          (dy1 * dz1 + dy2 * dz2)) /
         (1 + y1 * y1 + y2 * y2);
}

Test(systems, particle_multiplier_closed_form) { check_multiplier_closed_form("particle", 7, particle_lambda, 1e-14); }

Test(systems, chaotic_particle_multiplier_closed_form) {
  check_multiplier_closed_form("chaotic_particle", 8, chaotic_lambda, 1e-13);
}

/* ---- the optional fused kernels against the generic path (systems/system.h) ------------------ */

/* Every system with a constraint_curvature or acceleration kernel: nh_curvature_term,
 * nh_multiplier and nh_acceleration with the kernels equal the generic contraction and Gram solve
 * (the same type with the kernels removed) to round-off, at 20 random states of D and 20 states
 * off D (random q, v: the kernels must not assume A v = 0). */
Test(systems, fused_kernels_match_the_generic_path) {
  gsl_rng *r = test_rng(11);
  int kernels = 0;
  for (int t = 0; nh_system_types[t]; t++) {
    const nh_system_type *T = nh_system_types[t];
    if (!test_kernels(T)->constraint_curvature && !test_kernels(T)->acceleration) continue;
    kernels++;
    nh_system_type plain_type = *T;
    nh_system_kernels plain_kernels = *T->kernels;
    plain_kernels.constraint_curvature = NULL;
    plain_kernels.acceleration = NULL;
    plain_type.kernels = &plain_kernels;
    nh_system fused = test_system_of(T, NULL), plain = test_system_of(&plain_type, NULL);
    for (int trial = 0; trial < 40; trial++) {
      nh_state s;
      random_state_on_D(&fused, r, &s);
      if (trial >= 20)
        for (int i = 0; i < fused.n; i++) s.q[i] += gsl_ran_gaussian(r, 0.5), s.v[i] += gsl_ran_gaussian(r, 0.5);
      double c1[NH_MAX_K], c2[NH_MAX_K], l1[NH_MAX_K], l2[NH_MAX_K], a1[NH_MAX_N], a2[NH_MAX_N];
      nh_curvature_term(&fused, s.q, s.v, c1);
      nh_curvature_term(&plain, s.q, s.v, c2);
      cr_assert(nh_multiplier(&fused, s.t, s.q, s.v, l1) == 0 && nh_multiplier(&plain, s.t, s.q, s.v, l2) == 0);
      cr_assert(nh_acceleration(&fused, s.t, s.q, s.v, a1) == 0 && nh_acceleration(&plain, s.t, s.q, s.v, a2) == 0);
      for (int a = 0; a < fused.k; a++) {
        cr_expect(fabs(c1[a] - c2[a]) <= 1e-14 * (1 + fabs(c2[a])), "%s: curvature %d: %.17g, generic %.17g",
                  T->name, a, c1[a], c2[a]);
        cr_expect(fabs(l1[a] - l2[a]) <= 1e-13 * (1 + fabs(l2[a])), "%s: lambda %d: %.17g, generic %.17g", T->name,
                  a, l1[a], l2[a]);
      }
      for (int i = 0; i < fused.n; i++)
        cr_expect(fabs(a1[i] - a2[i]) <= 1e-13 * (1 + fabs(a2[i])), "%s: acceleration %d: %.17g, generic %.17g",
                  T->name, i, a1[i], a2[i]);
    }
  }
  cr_expect(kernels >= 1, "no system has a fused kernel: nothing checked");
  gsl_rng_free(r);
}

/* nh_constraint_derivative, D[a][l] = Σ_i ∂_l μ^a_i(q) w_i, against central differences of
 * A(q)w in q (an independent reference: a swap of the derivative and velocity indices in the
 * contraction fails it), for every constrained system at random q and w, with the system's kernel
 * and without it (the dense contraction). */
Test(systems, constraint_derivative_against_central_differences) {
  gsl_rng *r = test_rng(12);
  int kernels = 0;
  for (int t = 0; nh_system_types[t]; t++) {
    const nh_system_type *T = nh_system_types[t];
    if (T->k == 0) continue;
    kernels += test_kernels(T)->constraint_derivative != NULL;
    nh_system_type plain_type = *T;
    nh_system_kernels plain_kernels = *test_kernels(T);
    plain_kernels.constraint_derivative = NULL;
    plain_type.kernels = &plain_kernels;
    nh_system fused = test_system_of(T, NULL), plain = test_system_of(&plain_type, NULL);
    const int n = fused.n, k = fused.k;
    for (int trial = 0; trial < 10; trial++) {
      double q[NH_MAX_N], w[NH_MAX_N], D1[NH_MAX_K * NH_MAX_N], D2[NH_MAX_K * NH_MAX_N];
      for (int i = 0; i < n; i++) q[i] = gsl_ran_gaussian(r, 0.7), w[i] = gsl_ran_gaussian(r, 1.0);
      nh_constraint_derivative(&fused, q, w, D1);
      nh_constraint_derivative(&plain, q, w, D2);
      for (int l = 0; l < n; l++) {
        const double eps = 1e-6 * (1 + fabs(q[l]));
        double qp[NH_MAX_N], qm[NH_MAX_N], Ap[NH_MAX_K * NH_MAX_N], Am[NH_MAX_K * NH_MAX_N];
        memcpy(qp, q, sizeof qp), memcpy(qm, q, sizeof qm);
        qp[l] += eps, qm[l] -= eps;
        T->constraints(fused.p, qp, Ap);
        T->constraints(fused.p, qm, Am);
        for (int a = 0; a < k; a++) {
          double fd = 0;
          for (int i = 0; i < n; i++) fd += (Ap[a * n + i] - Am[a * n + i]) * w[i];
          fd /= 2 * eps;
          cr_expect(fabs(D2[a * n + l] - fd) <= 1e-6 * (1 + fabs(fd)), "%s: D[%d][%d] = %.12g, central difference %.12g",
                    T->name, a, l, D2[a * n + l], fd);
          cr_expect(fabs(D1[a * n + l] - D2[a * n + l]) <= 1e-14 * (1 + fabs(D2[a * n + l])),
                    "%s: kernel D[%d][%d] = %.17g, contraction %.17g", T->name, a, l, D1[a * n + l], D2[a * n + l]);
        }
      }
    }
  }
  cr_expect(kernels >= 1, "no system has a constraint_derivative kernel: the kernel path is not checked");
  gsl_rng_free(r);
}

/* nh_mass_times against the product written out, for M = I (no copy: v itself) and for a
 * variable mass; nh_kinetic_energy of M = I against ½|v|²; nh_project_onto with a given A and b
 * against nh_project_velocity_multiplier, which evaluates them itself, and its result on D. */
Test(systems, mass_product_kinetic_energy_and_projection_onto) {
  gsl_rng *r = test_rng(13);
  const char *names[] = {"chaotic_particle", "cvt", "falling_disk", "chaplygin_sleigh"};
  for (size_t s = 0; s < sizeof names / sizeof *names; s++) {
    nh_system sys = test_system(names[s], NULL);
    const int n = sys.n, k = sys.k;
    double q[NH_MAX_N], v[NH_MAX_N], Mspace[NH_MAX_N * NH_MAX_N], space[NH_MAX_N], M[NH_MAX_N * NH_MAX_N];
    for (int i = 0; i < n; i++) q[i] = gsl_ran_gaussian(r, 0.5), v[i] = gsl_ran_gaussian(r, 1.0);
    const double *Mv = nh_mass_times(&sys, nh_mass_at(&sys, q, Mspace), v, space);
    nh_mass(&sys, q, M);
    double T = 0, vv = 0;
    for (int i = 0; i < n; i++) {
      double e = 0;
      for (int j = 0; j < n; j++) e += M[i * n + j] * v[j];
      cr_expect(fabs(Mv[i] - e) <= 1e-14 * (1 + fabs(e)), "%s: (Mv)_%d = %.17g, written out %.17g", names[s], i, Mv[i], e);
      T += 0.5 * v[i] * e, vv += v[i] * v[i];
    }
    cr_expect(sys.unit_mass == (Mv == v), "%s: M = I must give v itself, and only then", names[s]);
    cr_expect(fabs(nh_kinetic_energy(&sys, q, v) - T) <= 1e-14 * (1 + T), "%s: T", names[s]);
    if (sys.unit_mass) cr_expect_eq(nh_kinetic_energy(&sys, q, v), 0.5 * vv, "%s: T = |v|^2/2 for M = I", names[s]);
    double A[NH_MAX_K * NH_MAX_N], b[NH_MAX_K] = {0}, w1[NH_MAX_N], w2[NH_MAX_N], y1[NH_MAX_K], y2[NH_MAX_K];
    sys.type->constraints(sys.p, q, A);
    if (sys.type->affine) sys.type->affine->values(sys.p, q, b);
    memcpy(w1, v, sizeof w1), memcpy(w2, v, sizeof w2);
    cr_assert_eq(nh_project_velocity_multiplier(&sys, q, w1, y1), 0);
    cr_assert_eq(nh_project_onto(&sys, q, A, sys.type->affine ? b : NULL, w2, y2), 0);
    for (int i = 0; i < n; i++) cr_expect_eq(w1[i], w2[i], "%s: v_%d", names[s], i);
    for (int a = 0; a < k; a++) cr_expect_eq(y1[a], y2[a], "%s: y_%d", names[s], a);
    cr_expect(nh_constraint_residual(&sys, q, w2) <= 1e-13 * (1 + sqrt(vv)), "%s: projection off D by %g", names[s],
              nh_constraint_residual(&sys, q, w2));
    if (sys.unit_mass && k == 1) { /* the one-constraint formula written out: w = v − A (A·v + b)/(A·A) */
      double av = b[0], aa = 0;
      for (int i = 0; i < n; i++) av += A[i] * v[i], aa += A[i] * A[i];
      for (int i = 0; i < n; i++)
        cr_expect(fabs(w2[i] - (v[i] - A[i] * av / aa)) <= 1e-14 * (1 + fabs(v[i])), "%s: w_%d", names[s], i);
      cr_expect(fabs(y2[0] - av / aa) <= 1e-14 * (1 + fabs(av / aa)), "%s: y", names[s]);
    }
  }
  gsl_rng_free(r);
}

/* Two constraints (k = 2): the vertical disk, A = [[1, 0, −R cos φ, 0], [0, 1, −R sin φ, 0]] and
 * M = diag(m, m, I_r, I_h) (spec/rattle.md §4 D), so M⁻¹Aᵀ and the Gram matrix
 *   C = A M⁻¹Aᵀ = [[1/m + R²c²/I_r, R²cs/I_r], [R²cs/I_r, 1/m + R²s²/I_r]]   (c, s = cos φ, sin φ)
 * are written out by hand; with m = I_r = I_h = 1 (M = I, the unit-mass path) W is Aᵀ exactly. The
 * projection onto D of a velocity with both constraints violated lands on D, and moves v by
 * M⁻¹Aᵀy for its multiplier y (M-orthogonal). */
Test(systems, two_constraint_gram_and_projection_by_hand) {
  const char *params[] = {"m=1,I_r=1,I_h=1,R=0.7", "m=1.5,I_r=0.3,I_h=0.2,R=0.8"};
  for (int variant = 0; variant < 2; variant++) {
    nh_system sys = test_system("vertical_disk", params[variant]);
    cr_assert_eq(sys.unit_mass, variant == 0, "%s: unit_mass %d", params[variant], sys.unit_mass);
    const double m = sys.p[0], Ir = sys.p[1], Ih = sys.p[2], R = sys.p[3], phi = 0.9, c = cos(phi), sn = sin(phi);
    const double q[4] = {0.3, -0.4, 1.1, phi}, Minv[4] = {1 / m, 1 / m, 1 / Ir, 1 / Ih};
    const double A[8] = {1, 0, -R * c, 0, 0, 1, -R * sn, 0};
    const double Cexp[4] = {1 / m + R * R * c * c / Ir, R * R * c * sn / Ir, R * R * c * sn / Ir,
                            1 / m + R * R * sn * sn / Ir};
    double W[8], W2[8], C[4];
    nh_mass_solve_transpose(&sys, A, W);
    cr_assert_eq(nh_constraint_gram(&sys, q, A, W2, C), 0);
    for (int i = 0; i < 4; i++)
      for (int a = 0; a < 2; a++) {
        const double e = Minv[i] * A[a * 4 + i];
        cr_expect(fabs(W[i * 2 + a] - e) <= 1e-15 * (1 + fabs(e)), "%s: (M^-1 A^T)[%d][%d] = %.17g, by hand %.17g",
                  params[variant], i, a, W[i * 2 + a], e);
        cr_expect(fabs(W2[i * 2 + a] - e) <= 1e-15 * (1 + fabs(e)), "%s: gram's W[%d][%d] = %.17g, by hand %.17g",
                  params[variant], i, a, W2[i * 2 + a], e);
        if (variant == 0) cr_expect_eq(W[i * 2 + a], A[a * 4 + i], "M = I: W = A^T exactly");
      }
    for (int i = 0; i < 4; i++)
      cr_expect(fabs(C[i] - Cexp[i]) <= 1e-14 * (1 + fabs(Cexp[i])), "%s: C[%d] = %.17g, by hand %.17g",
                params[variant], i, C[i], Cexp[i]);
    /* Projection: v off both constraints. */
    double v[4] = {0.5, -0.2, 0.8, -1.3}, w[4], y[2];
    memcpy(w, v, sizeof w);
    cr_assert_eq(nh_project_velocity_multiplier(&sys, q, w, y), 0);
    cr_expect(nh_constraint_residual(&sys, q, w) <= 1e-15, "%s: projection off D by %.3e", params[variant],
              nh_constraint_residual(&sys, q, w));
    for (int i = 0; i < 4; i++) {
      const double e = v[i] - Minv[i] * (A[i] * y[0] + A[4 + i] * y[1]);
      cr_expect(fabs(w[i] - e) <= 1e-15 * (1 + fabs(e)), "%s: v_%d = %.17g, v - M^-1 A^T y = %.17g",
                params[variant], i, w[i], e);
    }
    /* y = C⁻¹(A v) by Cramer's rule. */
    const double r0 = v[0] - R * c * v[2], r1 = v[1] - R * sn * v[2], det = Cexp[0] * Cexp[3] - Cexp[1] * Cexp[2];
    const double y0 = (Cexp[3] * r0 - Cexp[1] * r1) / det, y1 = (Cexp[0] * r1 - Cexp[2] * r0) / det;
    cr_expect(fabs(y[0] - y0) <= 1e-14 * (1 + fabs(y0)) && fabs(y[1] - y1) <= 1e-14 * (1 + fabs(y1)),
              "%s: multiplier (%.17g, %.17g), Cramer (%.17g, %.17g)", params[variant], y[0], y[1], y0, y1);
  }
}

/* A test-only system whose constant mass diag(a, 1) is SPD only for a > 0: nh_system_init and
 * nh_system_set_param cache M and M⁻¹ (unit_mass when M = I) and refuse, with -1 and the message,
 * a parameter that leaves the range or makes M indefinite. */
static const nh_param_desc sign_mass_params[] = {{"a", NH_PARAM_REAL, 1, -1, 2, "mass of the first coordinate", 0, NULL}};
static void sign_mass(const double *p, const double *q, double *M) {
  (void)q;
  M[0] = p[0], M[1] = M[2] = 0, M[3] = 1;
}
static double zero_potential(const double *p, const double *q) {
  (void)p, (void)q;
  return 0;
}
static const nh_system_type sign_mass_type = {
    .name = "sign_mass_test", .doc = "test-only", .n = 2, .k = 0, .params = sign_mass_params, .nparams = 1,
    .mass = sign_mass, .potential = zero_potential};

Test(systems, mass_cache_and_refused_parameters) {
  nh_system sys;
  char err[256] = "";
  cr_assert_eq(nh_system_init(&sys, &sign_mass_type), 0);
  cr_expect(sys.constant_mass == 1 && sys.unit_mass == 1 && sys.Minv[0] == 1 && sys.Minv[3] == 1, "a = 1: M = I");
  cr_assert_eq(nh_system_set_param(&sys, "a", 2, err, sizeof err), 0, "%s", err);
  cr_expect(sys.unit_mass == 0 && sys.M[0] == 2 && fabs(sys.Minv[0] - 0.5) <= 1e-16 && sys.Minv[1] == 0 &&
                sys.Minv[3] == 1,
            "a = 2: M^-1 = diag(%.17g, %g), expected diag(1/2, 1)", sys.Minv[0], sys.Minv[3]);
  cr_expect_eq(nh_system_set_param(&sys, "a", -0.5, err, sizeof err), -1, "an indefinite mass accepted");
  cr_expect_str_eq(err, "system sign_mass_test: mass matrix is not positive definite");
  cr_expect_eq(nh_system_set_param(&sys, "a", 0, err, sizeof err), -1, "a singular mass accepted");
  cr_expect_eq(nh_system_set_param(&sys, "a", 3, err, sizeof err), -1, "a = 3 is out of range");
  cr_expect_str_eq(err, "system sign_mass_test: parameter a=3 is out of range [-1, 2]");
  cr_expect_eq(nh_system_set_param(&sys, "b", 1, err, sizeof err), -1, "an unknown parameter accepted");
  cr_assert_eq(nh_system_set_param(&sys, "a", 1, err, sizeof err), 0, "%s", err);
  cr_expect(sys.unit_mass == 1, "back to M = I");
  nh_system_type singular = sign_mass_type;
  nh_param_desc zero_default = sign_mass_params[0];
  zero_default.def = 0;
  singular.params = &zero_default;
  cr_expect_eq(nh_system_init(&sys, &singular), -1, "a singular default mass accepted by nh_system_init");
}

/* ---- reference solver (integrators/reference.c) --------------------------------------------- */

Test(systems, reference_solver_matches_particle_exact_solution) {
  /* GSL rk8pd at tol 1e-13 against the closed form of spec §3.1, T = 2. */
  nh_system sys = test_system("particle", NULL);
  nh_state x0, ref, ex;
  nh_system_default_state(&sys, &x0);
  cr_assert(nh_reference_solve(&sys, &x0, 2.0, 1e-13, &ref) == 0, "nh_reference_solve failed");
  nh_exact_solution(&sys, &x0, 2.0, &ex);
  double e = fmax(max_abs_diff(3, ref.q, ex.q), max_abs_diff(3, ref.v, ex.v));
  cr_assert(e <= 1e-10, "reference vs exact at T=2: max error %.3e > 1e-10", e);
  cr_assert_float_eq(ref.t, 2.0, 0, "reference state time %g, expected 2", ref.t);
}

/* ---- random states on D (spec §6 A10) ------------------------------------------------------- */

#define NSAMPLES 20

static void draw_samples(unsigned long seed, nh_state *s) {
  nh_system sys = test_system("chaotic_particle", NULL);
  gsl_rng *r = test_rng(seed);
  for (int i = 0; i < NSAMPLES; i++)
    cr_assert(nh_sample_on_D(&sys, 1.535, r, &s[i]) == 0, "nh_sample_on_D failed (seed %lu)", seed);
  gsl_rng_free(r);
}

Test(systems, sample_on_D_states_are_admissible) {
  /* spec §6 A10: q uniform in the box with V(q) < E − 0.1, v on D, E(q,v) = E (spec §5 C15: 1.535). */
  nh_system sys = test_system("chaotic_particle", NULL);
  const double E = 1.535, box = sys.type->knowledge->sample_box;
  nh_state s[NSAMPLES];
  draw_samples(2024, s);
  for (int i = 0; i < NSAMPLES; i++) {
    double res = nh_constraint_residual(&sys, s[i].q, s[i].v);
    double relE = fabs(nh_energy(&sys, s[i].q, s[i].v) - E) / E;
    cr_assert(res <= 1e-14, "sample %d: constraint residual %.3e > 1e-14", i, res);
    cr_assert(relE <= 1e-13, "sample %d: relative energy error %.3e > 1e-13", i, relE);
    cr_assert(sys.type->potential(sys.p, s[i].q) < E - 0.1, "sample %d: V(q) >= E - 0.1", i);
    for (int j = 0; j < sys.n; j++)
      cr_assert(fabs(s[i].q[j]) <= box, "sample %d: q[%d] = %g outside [-%g, %g]", i, j, s[i].q[j], box, box);
  }
}

Test(systems, sample_on_D_is_reproducible_by_seed) {
  /* Same seed -> bit-identical states; different seed -> different states. */
  nh_state a[NSAMPLES], b[NSAMPLES], c[NSAMPLES];
  draw_samples(99, a);
  draw_samples(99, b);
  draw_samples(100, c);
  for (int i = 0; i < NSAMPLES; i++) {
    cr_assert(memcmp(a[i].q, b[i].q, sizeof a[i].q) == 0 && memcmp(a[i].v, b[i].v, sizeof a[i].v) == 0,
              "sample %d differs between two runs with seed 99", i);
    cr_assert(max_abs_diff(5, a[i].q, c[i].q) > 1e-6, "sample %d: seeds 99 and 100 give the same q", i);
  }
}

/* ---- velocity projection (system.h, spec §6 A10) -------------------------------------------- */

static void check_projection(const char *name) {
  nh_system sys = test_system(name, NULL);
  const int n = sys.n;
  gsl_rng *r = test_rng(31);
  for (int trial = 0; trial < 10; trial++) {
    double q[NH_MAX_N], v[NH_MAX_N], w[NH_MAX_N], v2[NH_MAX_N], A[NH_MAX_N], vnorm = 0;
    for (int i = 0; i < n; i++) {
      q[i] = 4 * gsl_rng_uniform(r) - 2;
      v[i] = w[i] = 4 * gsl_rng_uniform(r) - 2;
      vnorm = fmax(vnorm, fabs(v[i]));
    }
    cr_assert(nh_project_velocity(&sys, q, w) == 0, "nh_project_velocity failed");
    double res = nh_constraint_residual(&sys, q, w);
    cr_assert(res <= 1e-14 * (1 + vnorm), "%s: A(q)Pv = %.3e after projection", name, res);
    /* M = I: the removed part v − Pv is parallel to μ(q) (M-orthogonal projection). */
    sys.type->constraints(sys.p, q, A);
    double mu2 = 0, dmu = 0;
    for (int i = 0; i < n; i++) mu2 += A[i] * A[i], dmu += A[i] * (v[i] - w[i]);
    for (int i = 0; i < n; i++) {
      double perp = (v[i] - w[i]) - A[i] * dmu / mu2;
      cr_assert(fabs(perp) <= 1e-14 * (1 + vnorm), "%s: v - Pv not along mu, component %d: %.3e", name, i, perp);
    }
    memcpy(v2, w, sizeof v2);
    cr_assert(nh_project_velocity(&sys, q, v2) == 0, "nh_project_velocity failed");
    double d = max_abs_diff(n, v2, w);
    cr_assert(d <= 1e-15 * (1 + vnorm), "%s: projection not idempotent, |P(Pv) - Pv| = %.3e", name, d);
  }
  gsl_rng_free(r);
}

Test(systems, particle_projection) { check_projection("particle"); }
Test(systems, chaotic_particle_projection) { check_projection("chaotic_particle"); }

/* Found by tests/fuzz/fuzz_spec.c (corpus spec/data_trajectory_multiplier.cfg): built with clang,
 * system.c saw no declaration of strtok_r, so its char * result was cut to an int and the second
 * item's parse crashed on the truncated pointer. Every item of a list must be read. */
Test(systems, params_text_reads_every_item_of_a_list) {
  nh_system sys = test_system("falling_disk", NULL);
  char err[256] = "";
  cr_assert_eq(nh_system_set_params_text(&sys, "alpha=0.1,F_phi_slope=0.0625,F_psi_const=12", err, sizeof err), 0,
               "%s", err);
  const char *names[] = {"alpha", "F_phi_slope", "F_psi_const"};
  const double want[] = {0.1, 0.0625, 12};
  for (int i = 0; i < 3; i++)
    cr_expect_eq(sys.p[nh_param_index(sys.type->params, sys.type->nparams, names[i])], want[i], "%s", names[i]);
  cr_expect_eq(nh_system_set_params_text(&sys, "alpha=0.1,F_phi_slope", err, sizeof err), -1,
               "a second item without '=' is refused");
  cr_expect(strstr(err, "F_phi_slope") != NULL, "the message names the bad item: %s", err);
}
