/* A test-only nonholonomic system shared by tests/test_newmark_family.c and
 * tests/test_method_hooks_newmark.c: non-diagonal M, and a constraint that moves along its own
 * force, so that (N3) of spec/newmark.md is nonlinear in Λ0 for α ≠ 0 and dla's k-dimensional
 * problem needs Newton. Include it only where `twisted` is used (its data are static). */
#ifndef NH_TEST_TWISTED_H
#define NH_TEST_TWISTED_H

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

static const nh_system_type twisted = {
    .name = "twisted_test",
    .doc = "test-only system with a constraint that is nonlinear in the Newmark multiplier",
    .n = 3,
    .k = 1,
    .q0 = tw_q0,
    .v0 = tw_v0,
    .ic_doc = "",
    .sample_box = 1,
    .mass = tw_mass,
    .potential = tw_potential,
    .grad_potential = tw_grad,
    .hess_potential = tw_hess,
    .constraints = tw_constraints,
    .constraints_jacobian = tw_constraints_jacobian,
};

#endif
