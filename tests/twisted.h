/* A test-only nonholonomic system shared by tests/integrators/test_newmark_family.c and
 * tests/integrators/test_method_hooks_newmark.c (and its variable-mass twin, in
 * tests/integrators/test_method_hooks_js_herglotz.c): non-diagonal M, and a constraint that moves along its own
 * force, so that (N3) of spec/newmark.md is nonlinear in Λ0 for α ≠ 0 and dla's k-dimensional
 * problem needs Newton. Include it only where `twisted` is used (its data are static). */
#ifndef NH_TEST_TWISTED_H
#define NH_TEST_TWISTED_H

#include <math.h>
#include <string.h>

#include "systems/system.h"

/* A nonholonomic system whose constraint moves along its own force directions, so (N3) is
 * nonlinear in Λ0 for α ≠ 0: q = (x, y, θ), μ(q) = (1, x, y) (ẋ + x ẏ + y θ̇ = 0, non-integrable:
 * μ ∧ dμ = (1 + y) dx∧dy∧dθ), constant non-diagonal M, V = ½|q|² + ¼ x² y². */
static const double tw_M[9] = {2, 0.5, 0, 0.5, 1, 0.2, 0, 0.2, 1.5};

static inline void tw_mass(const double *p, const double *q, double *M) {
  (void)p, (void)q;
  memcpy(M, tw_M, sizeof tw_M);
}

static inline double tw_potential(const double *p, const double *q) {
  (void)p;
  return 0.5 * (q[0] * q[0] + q[1] * q[1] + q[2] * q[2]) + 0.25 * q[0] * q[0] * q[1] * q[1];
}

static inline void tw_grad(const double *p, const double *q, double *g) {
  (void)p;
  g[0] = q[0] + 0.5 * q[0] * q[1] * q[1];
  g[1] = q[1] + 0.5 * q[0] * q[0] * q[1];
  g[2] = q[2];
}

static inline void tw_hess(const double *p, const double *q, double *H) {
  (void)p;
  memset(H, 0, 9 * sizeof *H);
  H[0] = 1 + 0.5 * q[1] * q[1];
  H[4] = 1 + 0.5 * q[0] * q[0];
  H[1] = H[3] = q[0] * q[1];
  H[8] = 1;
}

static inline void tw_constraints(const double *p, const double *q, double *A) {
  (void)p;
  A[0] = 1, A[1] = q[0], A[2] = q[1];
}

static inline void tw_constraints_jacobian(const double *p, const double *q, double *dA) {
  (void)p, (void)q;
  memset(dA, 0, 9 * sizeof *dA);
  dA[1 * 3 + 0] = 1; /* ∂μ_y/∂x */
  dA[2 * 3 + 1] = 1; /* ∂μ_θ/∂y */
}

static const double tw_q0[] = {0.3, -0.2, 0.5}, tw_v0[] = {-0.18, 0.4, -0.3}; /* μ·v0 = 0 */

/* The type of twisted, or of a twin with another mass matrix (mass_jacobian NULL: constant). */
static const nh_system_knowledge tw_knowledge = {.sample_box = 1};
#define TWISTED_TYPE(name_, doc_, mass_, mass_jacobian_)                                                          \
  {.name = name_, .doc = doc_, .n = 3, .k = 1, .q0 = tw_q0, .v0 = tw_v0, .ic_doc = "", .mass = mass_,            \
   .mass_jacobian = mass_jacobian_, .potential = tw_potential, .grad_potential = tw_grad,                        \
   .hess_potential = tw_hess, .constraints = tw_constraints, .constraints_jacobian = tw_constraints_jacobian,     \
   .knowledge = &tw_knowledge}

static const nh_system_type twisted =
    TWISTED_TYPE("twisted_test", "test-only system with a constraint that is nonlinear in the Newmark multiplier",
                 tw_mass, NULL);

/* For a twin of twisted with a configuration-dependent M(q) whose every entry varies with some coordinate and
 * every coordinate moves some entry, one of them jointly with another (positive definite for |q| ≤ 2, by diagonal dominance), for the
 * mass terms of the Herglotz schemes: an index wrong there shows here, where the falling disk's
 * M(θ) alone would hide it. */
static inline void tw_variable_mass(const double *p, const double *q, double *M) {
  (void)p;
  M[0] = 2 + 0.3 * sin(q[1]), M[4] = 1 + 0.2 * q[2] * q[2], M[8] = 1.5 + 0.25 * sin(q[0]);
  M[1] = M[3] = 0.5 + 0.1 * q[2] * cos(q[0]);
  M[5] = M[7] = 0.2 * cos(q[0]);
  M[2] = M[6] = 0;
}

/* dM[(i*3 + j)*3 + l] = ∂M_ij/∂q^l. */
static inline void tw_variable_mass_jacobian(const double *p, const double *q, double *dM) {
  (void)p;
  memset(dM, 0, 27 * sizeof *dM);
  dM[(0 * 3 + 0) * 3 + 1] = 0.3 * cos(q[1]);
  dM[(1 * 3 + 1) * 3 + 2] = 0.4 * q[2];
  dM[(2 * 3 + 2) * 3 + 0] = 0.25 * cos(q[0]);
  dM[(0 * 3 + 1) * 3 + 2] = dM[(1 * 3 + 0) * 3 + 2] = 0.1 * cos(q[0]);
  dM[(0 * 3 + 1) * 3 + 0] = dM[(1 * 3 + 0) * 3 + 0] = -0.1 * q[2] * sin(q[0]);
  dM[(1 * 3 + 2) * 3 + 0] = dM[(2 * 3 + 1) * 3 + 0] = -0.2 * sin(q[0]);
}

#endif
