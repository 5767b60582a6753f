/* The nonholonomic particle in R³ (spec/newmark.md §3.1, spec/discretization.md §3.2):
 * L = ½|v|², constraint ż − y ẋ = 0, μ(q) = (−y, 0, 1). */
#include <math.h>
#include <string.h>

#include "systems/system.h"

static void mass(const double *p, const double *q, double *M) {
  (void)p, (void)q;
  memset(M, 0, 9 * sizeof *M);
  M[0] = M[4] = M[8] = 1;
}

static double potential(const double *p, const double *q) {
  (void)p, (void)q;
  return 0;
}

static void grad_potential(const double *p, const double *q, double *g) {
  (void)p, (void)q;
  g[0] = g[1] = g[2] = 0;
}

static void hess_potential(const double *p, const double *q, double *H) {
  (void)p, (void)q;
  memset(H, 0, 9 * sizeof *H);
}

static void constraints(const double *p, const double *q, double *A) {
  (void)p;
  A[0] = -q[1];
  A[1] = 0;
  A[2] = 1;
}

static void constraints_jacobian(const double *p, const double *q, double *dA) {
  (void)p, (void)q;
  memset(dA, 0, 9 * sizeof *dA);
  dA[0 * 3 + 1] = -1; /* ∂μ_x/∂y */
}

/* Closed form (spec/discretization.md §3.2): with c = ẋ0 √(1+y0²) and w = ẏ0,
 * y = y0 + w t, ẋ = c/√(1+y²), x = x0 + (c/w)(asinh y − asinh y0),
 * z = z0 + (c/w)(√(1+y²) − √(1+y0²)), ż = y ẋ; for w = 0 the motion is uniform. */
static int exact(const double *p, const nh_state *x0, double t, nh_state *x) {
  (void)p;
  const double y0 = x0->q[1], u0 = x0->v[0], w = x0->v[1];
  const double y = y0 + w * (t - x0->t);
  const double c = u0 * sqrt(1 + y0 * y0);
  memset(x, 0, sizeof *x);
  x->t = t;
  x->q[1] = y;
  x->v[1] = w;
  x->v[0] = c / sqrt(1 + y * y);
  x->v[2] = y * x->v[0];
  if (w == 0) {
    x->q[0] = x0->q[0] + u0 * (t - x0->t);
    x->q[2] = x0->q[2] + y0 * u0 * (t - x0->t);
  } else {
    x->q[0] = x0->q[0] + (c / w) * (asinh(y) - asinh(y0));
    x->q[2] = x0->q[2] + (c / w) * (sqrt(1 + y * y) - sqrt(1 + y0 * y0));
  }
  return 0;
}

static const double q0[] = {1, 1, -1};
static const double v0[] = {1, -1, 1};

const nh_system_type nh_system_particle = {
    .name = "particle",
    .doc = "Nonholonomic particle in R^3, L = |v|^2/2, constraint zdot = y xdot; exact solution "
           "(spec/newmark.md 3.1, spec/discretization.md 3.2).",
    .n = 3,
    .k = 1,
    .params = NULL,
    .nparams = 0,
    .q0 = q0,
    .v0 = v0,
    .ic_doc = "q0 = (1, 1, -1), v0 = (1, -1, 1), E0 = 1.5 (paper Fig. 1)",
    .sample_box = 1,
    .mass = mass,
    .potential = potential,
    .grad_potential = grad_potential,
    .hess_potential = hess_potential,
    .constraints = constraints,
    .constraints_jacobian = constraints_jacobian,
    .exact = exact,
};
