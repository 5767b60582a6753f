/* The nonholonomic particle in R³ (spec/newmark.md §3.1, spec/discretization.md §3.2):
 * L = ½|v|² − V(q), constraint ż − y ẋ = 0, μ(q) = (−y, 0, 1), with the optional harmonic
 * potential V = ½ ω² (x² + y²) (spec/discretization.md §3.3, spec/rattle.md §4 C); ω² = 0 by
 * default, the free particle of the papers. */
#include <math.h>
#include <string.h>

#include "systems/system.h"

enum { P_OMEGA2, P_COUNT };

static const nh_param_desc params[] = {
    [P_OMEGA2] = {"omega2", NH_PARAM_REAL, 0, 0, 100,
     "omega^2 of the harmonic potential V = omega2 (x^2 + y^2)/2 (spec/discretization.md 3.3); "
     "0 = free particle, the only case with an exact solution",
     1},
};
_Static_assert(sizeof params / sizeof *params == P_COUNT, "params[] and the P_* enum disagree");

static void mass(const double *p NH_UNUSED, const double *q NH_UNUSED, double *M) { nh_unit_mass_matrix(3, M); }

static double potential(const double *p, const double *q) {
  return 0.5 * p[P_OMEGA2] * (q[0] * q[0] + q[1] * q[1]);
}

static void grad_potential(const double *p, const double *q, double *g) {
  g[0] = p[P_OMEGA2] * q[0];
  g[1] = p[P_OMEGA2] * q[1];
  g[2] = 0;
}

static void hess_potential(const double *p, const double *q NH_UNUSED, double *H) {
  memset(H, 0, 9 * sizeof *H);
  H[0] = H[4] = p[P_OMEGA2];
}

static void constraints(const double *p NH_UNUSED, const double *q, double *A) {
  A[0] = -q[1];
  A[1] = 0;
  A[2] = 1;
}

static void constraints_jacobian(const double *p NH_UNUSED, const double *q NH_UNUSED, double *dA) {
  memset(dA, 0, 9 * sizeof *dA);
  dA[0 * 3 + 1] = -1; /* ∂μ_x/∂y */
}

/* Closed form of the free particle (spec/discretization.md §3.2): with c = ẋ0 √(1+y0²) and
 * w = ẏ0, y = y0 + w t, ẋ = c/√(1+y²), x = x0 + (c/w)(asinh y − asinh y0),
 * z = z0 + (c/w)(√(1+y²) − √(1+y0²)), ż = y ẋ; for w = 0 the motion is uniform.
 * With the harmonic potential there is no closed form (§3.3): the state is set to NaN and −1
 * returned, so a caller that ignores the status cannot mistake it for a solution. */
static int exact(const double *p, const nh_state *x0, double t, nh_state *x) {
  memset(x, 0, sizeof *x);
  x->t = t;
  if (p[P_OMEGA2] != 0) {
    for (int i = 0; i < 3; i++) x->q[i] = x->v[i] = NAN;
    return -1;
  }
  const double y0 = x0->q[1], u0 = x0->v[0], w = x0->v[1];
  const double y = y0 + w * (t - x0->t);
  const double c = u0 * sqrt(1 + y0 * y0);
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

/* Initial conditions of the papers; each satisfies ż0 = y0 ẋ0. */
static const double newmark_q[] = {1, 1, -1}, newmark_v[] = {1, -1, 1};
static const double discretization_q[] = {0, 0.3, 0}, discretization_v[] = {1, 0.8, 0.3};
static const double harmonic_q[] = {0.2, 0.3, 0}, harmonic_v[] = {1, 0.8, 0.3};
static const double rattle_q[] = {0, 1, 0}, rattle_v[] = {1, 1, 1};

static const nh_preset presets[] = {
    {"newmark", "q0 = (1, 1, -1), v0 = (1, -1, 1), E0 = 1.5, free particle (spec/newmark.md 3.1, paper Fig. 1)",
     newmark_q, newmark_v, "omega2=0"},
    {"discretization",
     "q0 = (0, 0.3, 0), v0 = (1, 0.8, 0.3), free particle, T = 2 suggested (spec/discretization.md 3.2)",
     discretization_q, discretization_v, "omega2=0"},
    {"harmonic",
     "q0 = (0.2, 0.3, 0), v0 = (1, 0.8, 0.3) with V = (x^2 + y^2)/2 (omega2 = 1), T = 3 suggested "
     "(spec/discretization.md 3.3)",
     harmonic_q, harmonic_v, "omega2=1"},
    {"rattle",
     "q0 = (0, 1, 0), v0 = (1, 1, 1), free particle, T = 10 suggested (spec/rattle.md 4 C); "
     "set omega2 = 1 for its harmonic case",
     rattle_q, rattle_v, "omega2=0"},
};

static const nh_system_knowledge knowledge = {
    .exact = exact,
    NH_SYSTEM_PRESETS(presets),
    .sample_box = 1,
    .sampler_doc = "generic (spec/newmark.md 6 A10): q uniform in [-1,1]^3 with V(q) < E - 0.1, v ~ N(0, I) "
                   "projected on D (M = I) and rescaled to kinetic energy E - V(q); V = 0 when omega2 = 0, so E > 0.1",
};

const nh_system_type nh_system_particle = {
    .name = "particle",
    .doc = "Nonholonomic particle in R^3, L = |v|^2/2 - V, constraint zdot = y xdot, optional harmonic "
           "potential V = omega2 (x^2 + y^2)/2; exact solution for omega2 = 0 (spec/newmark.md 3.1, "
           "spec/discretization.md 3.2-3.3).",
    .n = 3,
    .k = 1,
    NH_SYSTEM_PARAMS(params),
    .q0 = newmark_q,
    .v0 = newmark_v,
    .ic_doc = "q0 = (1, 1, -1), v0 = (1, -1, 1), E0 = 1.5 (paper Fig. 1; preset \"newmark\")",
    NH_SYSTEM_MECHANICS,
    .capabilities = NH_CAP_PARTICLE_STRUCTURE, /* the closed forms js_p1, js_p2new, js_p2orig */
    .knowledge = &knowledge,
};
