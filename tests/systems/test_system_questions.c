/* What a system is asked without its table (systems/system.h: nh_system_name, nh_constraint_terms,
 * nh_constraint_values, nh_potential, nh_forcing, nh_invariants, nh_derived, nh_exact_solution, ...),
 * the door the studies use: each answer against the system's documented formula, worked here. */
#include <criterion/criterion.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <string.h>

#include "systems/system.h"
#include "tests/helpers.h"

/* particle: D is z' = y x', A = (-y, 0, 1), b = 0 (spec/newmark.md 3.1). */
Test(system_questions, constraints_of_the_particle) {
  nh_system sys = test_system("particle", NULL);
  const double q[3] = {0.5, 2, -1}, on[3] = {1, 0, 2}, off[3] = {1, 0, 0};
  double A[3], b[1] = {7}, r[1];
  nh_constraint_terms(&sys, q, A, b);
  cr_expect(A[0] == -2 && A[1] == 0 && A[2] == 1 && b[0] == 0, "A = (%g, %g, %g), b = %g", A[0], A[1], A[2], b[0]);
  nh_constraint_values(&sys, q, on, r);
  cr_expect_eq(r[0], 0, "v on D");
  nh_constraint_values(&sys, q, off, r);
  cr_expect_eq(r[0], -2, "z' - y x' = 0 - 2 * 1");
  cr_expect_eq(nh_constraint_residual(&sys, q, off), 2);
  cr_expect_str_eq(nh_system_name(&sys), "particle");
  cr_expect(!nh_has_holonomic(&sys) && nh_invariant_count(&sys) == 0 && nh_derived_count(&sys) == 0);
  cr_expect(!nh_system_has_own_sampler(&sys));
}

/* foucault_pendulum: the affine constraint's b = Omega sin(beta) (x^2 + y^2), beta in degrees:
 * Omega = 0.5, beta = 30 degrees, x^2 + y^2 = 0.25: b = 0.5 * 0.5 * 0.25. */
Test(system_questions, the_affine_part_of_a_constraint) {
  nh_system sys = test_system("foucault_pendulum", "Omega=0.5,beta_deg=30");
  const double q[2] = {0.3, -0.4}, v[2] = {0, 0};
  double A[2], b[1], r[1];
  nh_constraint_terms(&sys, q, A, b);
  cr_expect_float_eq(b[0], 0.0625, 1e-16, "b = %.17g", b[0]);
  nh_constraint_values(&sys, q, v, r);
  cr_expect_eq(r[0], b[0], "v = 0: the residual is b");
  cr_expect(nh_system_has_own_sampler(&sys));
  cr_expect(strncmp(nh_system_sampler_doc(&sys), "own sampler (affine constraint)", 31) == 0);
}

/* damped_oscillator: V = omega^2 x^2 / 2, F(t) = beta sin(omega_f t), parameters in their order. */
Test(system_questions, potential_forcing_and_parameters) {
  nh_system sys = test_system("damped_oscillator", "beta=0.3,omega=2");
  const double q[1] = {1.5};
  cr_expect_float_eq(nh_potential(&sys, q), 0.5 * 4 * 2.25, 1e-15);
  double g[1];
  nh_grad_potential(&sys, q, g);
  cr_expect_float_eq(g[0], 4 * 1.5, 1e-15);
  double F[1] = {0};
  cr_expect_eq(nh_forcing(&sys, 1.5, F), 1);
  cr_expect_float_eq(F[0], 0.3 * sin(3.14159265358979323846 / 3 * 1.5), 1e-15, "F = %.17g", F[0]);
  cr_expect_eq(nh_system_param_index(&sys, "omega"), 0);
  cr_expect_eq(nh_system_param_index(&sys, "beta"), 2);
  cr_expect_eq(nh_system_param_index(&sys, "gamma"), -1);
  nh_system still = test_system("oscillator", NULL);
  cr_expect_eq(nh_forcing(&still, 1.5, F), 0, "no forcing");
}

/* knife_edge: the invariant p_theta = J thetadot; chaplygin_sleigh: forward speed and angular
 * velocity, with their units. */
Test(system_questions, invariants_and_derived_quantities) {
  nh_system knife = test_system("knife_edge", "J=2.5");
  const double q[3] = {0.1, 0.2, 0.3}, v[3] = {0.4, -0.5, 0.7};
  double out[NH_MAX_INVARIANTS];
  cr_assert_eq(nh_invariant_count(&knife), 1);
  cr_expect_str_eq(nh_invariant_name(&knife, 0), "p_theta");
  nh_invariants(&knife, q, v, out);
  cr_expect_float_eq(out[0], 2.5 * 0.7, 1e-15);
  nh_system sleigh = test_system("chaplygin_sleigh", NULL);
  cr_assert_eq(nh_derived_count(&sleigh), 2);
  cr_expect_str_eq(nh_derived_name(&sleigh, 0), "forward_speed");
  cr_expect_str_eq(nh_derived_units(&sleigh, 0), "m/s");
  cr_expect_str_eq(nh_derived_name(&sleigh, 1), "angular_velocity");
  cr_expect_str_eq(nh_derived_units(&sleigh, 1), "rad/s");
  nh_derived(&sleigh, 0, q, v, out);
  cr_expect_float_eq(out[0], 0.4 * cos(0.3) - 0.5 * sin(0.3), 1e-15);
  cr_expect_eq(out[1], 0.7);
}

/* The exact solution where there is one (the free particle), -1 where there is none; a
 * pendulum's holonomic constraint phi = x^2 + y^2 - l^2 vanishes on the circle. */
Test(system_questions, exact_solutions_and_holonomic_constraints) {
  nh_system particle = test_system("particle", "omega2=0");
  nh_state x0 = test_preset(&particle, "newmark"), x;
  cr_assert_eq(nh_exact_solution(&particle, &x0, x0.t, &x), 0);
  for (int i = 0; i < 3; i++) cr_expect_float_eq(x.q[i], x0.q[i], 1e-15, "at t0 the start");
  cr_assert_eq(nh_exact_solution(&particle, &x0, x0.t + 0.5, &x), 0);
  cr_expect_eq(x.t, x0.t + 0.5);
  cr_expect_float_eq(nh_energy(&particle, x.q, x.v), 1.5, 1e-13, "E0 = 1.5 kept (spec/newmark.md 3.1)");
  cr_expect_float_eq(nh_constraint_residual(&particle, x.q, x.v), 0, 1e-13, "on D");
  nh_system chaotic = test_system("chaotic_particle", NULL);
  nh_state c0;
  nh_system_default_state(&chaotic, &c0);
  cr_expect_eq(nh_exact_solution(&chaotic, &c0, 1, &x), -1);
  nh_system pendulum = test_system("pendulum", NULL);
  cr_assert(nh_has_holonomic(&pendulum));
  nh_state p0;
  nh_system_default_state(&pendulum, &p0);
  double phi[NH_MAX_K];
  nh_holonomic(&pendulum, p0.q, phi);
  cr_expect_float_eq(phi[0], 0, 1e-14, "the default state is on the circle: phi = %g", phi[0]);
}

/* A system with the core alone (no forces, kernels, affine part or knowledge group: the oscillator's
 * physics without its table's knowledge): every question about a missing group has its "none"
 * answer, and the sampler refuses (-2), where the registered oscillator draws a state. */
Test(system_questions, a_system_without_its_optional_groups) {
  nh_system_type bare = *nh_system_type_find("oscillator");
  bare.knowledge = NULL, bare.forces = NULL, bare.kernels = NULL;
  nh_system sys;
  cr_assert_eq(nh_system_init(&sys, &bare), 0);
  const double q[2] = {1, 0}, v[2] = {0, 0.5};
  nh_state x0 = {.t = 0}, x;
  memcpy(x0.q, q, sizeof q), memcpy(x0.v, v, sizeof v);
  cr_expect_eq(nh_invariant_count(&sys), 0);
  cr_expect_eq(nh_derived_count(&sys), 0);
  cr_expect_not(nh_has_exact_solution(&sys));
  cr_expect_eq(nh_exact_solution(&sys, &x0, 1.0, &x), -1);
  cr_expect_not(nh_system_has_own_sampler(&sys));
  cr_expect_null(nh_system_sampler_doc(&sys));
  cr_expect_eq(nh_damping(&sys, 0.0), 0);
  char err[256] = "";
  cr_expect_neq(nh_system_apply_preset(&sys, "ellipse", &x, err, sizeof err), 0, "no presets without knowledge");
  cr_expect(strstr(err, "has no preset 'ellipse' (presets: none)") != NULL, "%s", err);
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  cr_expect_eq(nh_sample_on_D(&sys, 1.0, rng, &x), -2);
  nh_system full = test_system("oscillator", NULL);
  cr_expect_eq(nh_invariant_count(&full), 1);
  cr_expect(nh_has_exact_solution(&full));
  cr_expect_eq(nh_sample_on_D(&full, 1.0, rng, &x), 0);
  cr_expect_eq(nh_system_apply_preset(&full, "ellipse", &x, err, sizeof err), 0, "%s", err);
  gsl_rng_free(rng);
}
