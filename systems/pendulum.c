/* The planar pendulum in Cartesian coordinates, a holonomic test system (spec/rattle.md §4 F):
 *   q = (x, y), M = m I, V = m g y, φ(q) = ½(|q|² − l²), A(q) = G(q) = ∂φ/∂q = qᵀ.
 * With q = l(sin θ, −cos θ) the motion is θ̈ = −(g/l) sin θ, solved exactly with Jacobi elliptic
 * functions (below). g = 0 is the free particle on the circle (spec/rattle.md §5.2 F). */
#include <gsl/gsl_errno.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_sf_elljac.h>
#include <gsl/gsl_sf_ellint.h>
#include <math.h>
#include <string.h>

#include "systems/system.h"

enum { P_M, P_G, P_L, P_COUNT };

static const nh_param_desc params[] = {
    [P_M] = {"m", NH_PARAM_REAL, 1, 1e-6, 1e6, "mass of the bob (M = m I)", 0},
    [P_G] = {"g", NH_PARAM_REAL, 1, 0, 1e6,
     "gravity, V = m g y (spec/rattle.md 4 F suggests g = 1; g = 0: free circle)", 0},
    [P_L] = {"l", NH_PARAM_REAL, 1, 1e-6, 1e6, "length, constraint phi(q) = (|q|^2 - l^2)/2", 0},
};
_Static_assert(sizeof params / sizeof *params == P_COUNT, "params[] and the P_* enum disagree");

static void mass(const double *p, const double *q NH_UNUSED, double *M) {
  M[0] = M[3] = p[P_M];
  M[1] = M[2] = 0;
}

static double potential(const double *p, const double *q) { return p[P_M] * p[P_G] * q[1]; }

static void grad_potential(const double *p, const double *q NH_UNUSED, double *g) {
  g[0] = 0;
  g[1] = p[P_M] * p[P_G];
}

static void hess_potential(const double *p NH_UNUSED, const double *q NH_UNUSED, double *H) {
  memset(H, 0, 4 * sizeof *H);
}

static void constraints(const double *p NH_UNUSED, const double *q, double *A) {
  A[0] = q[0];
  A[1] = q[1];
}

static void constraints_jacobian(const double *p NH_UNUSED, const double *q NH_UNUSED, double *dA) {
  dA[0] = dA[3] = 1; /* ∂q_i/∂q_j = δ_ij */
  dA[1] = dA[2] = 0;
}

static void holonomic(const double *p, const double *q, double *phi) {
  phi[0] = 0.5 * (q[0] * q[0] + q[1] * q[1] - p[P_L] * p[P_L]);
}

/* sin θ, cos θ and θ̇ at time t of θ̈ = −ω² sin θ from (θ0, θ̇0). With the energy in the form
 * θ̇² = 4ω²(k² − sin²(θ/2)), k² = sin²(θ0/2) + θ̇0²/(4ω²):
 *  - libration (k < 1): sin(θ/2) = k sn(u, k), cos(θ/2) = dn(u, k), θ̇ = 2kω cn(u, k),
 *    u = ωt + u0 with sn u0 = sin(θ0/2)/k, cn u0 = θ̇0/(2kω), i.e. u0 = F(atan2(sn u0, cn u0), k);
 *  - rotation and separatrix (k ≥ 1): θ/2 = am(u, 1/k), θ̇ = 2σkω dn(u, 1/k), u = σkωt + F(θ0/2, 1/k),
 *    σ = sign θ̇0 (dφ/√(1 − k⁻² sin²φ) = σkω dt for φ = θ/2);
 *  - ω = 0: uniform rotation; k = 0 or the upright equilibrium: rest.
 * (GSL: elljac takes the parameter k², the elliptic integral F the modulus k.) Returns 0 or -1. */
static int pendulum_angle(double w, double th0, double thd0, double t, double *s, double *c, double *thd) {
  double sn, cn, dn;
  if (w == 0) {
    *s = sin(th0 + thd0 * t), *c = cos(th0 + thd0 * t), *thd = thd0;
    return 0;
  }
  const double s0 = sin(0.5 * th0), k2 = s0 * s0 + thd0 * thd0 / (4 * w * w);
  if (k2 == 0 || (thd0 == 0 && k2 >= 1)) {
    *s = sin(th0), *c = cos(th0), *thd = 0;
    return 0;
  }
  const double k = sqrt(k2);
  if (k < 1) {
    double u0 = gsl_sf_ellint_F(atan2(s0 / k, thd0 / (2 * k * w)), k, GSL_PREC_DOUBLE);
    if (gsl_sf_elljac_e(u0 + w * t, k2, &sn, &cn, &dn) != GSL_SUCCESS) return -1;
    *s = 2 * k * sn * dn;
    *c = 1 - 2 * k2 * sn * sn;
    *thd = 2 * k * w * cn;
    return 0;
  }
  const double sigma = thd0 > 0 ? 1 : -1;
  double u0 = gsl_sf_ellint_F(0.5 * th0, 1 / k, GSL_PREC_DOUBLE);
  if (gsl_sf_elljac_e(u0 + sigma * k * w * t, 1 / k2, &sn, &cn, &dn) != GSL_SUCCESS) return -1;
  *s = 2 * sn * cn;
  *c = cn * cn - sn * sn;
  *thd = 2 * sigma * k * w * dn;
  return 0;
}

/* The exact solution for a state on the circle |q| = l with q·v = 0: θ0 = atan2(x, −y),
 * θ̇0 = (x ẏ − y ẋ)/l², ω² = g/l; then q = l(sin θ, −cos θ), v = l θ̇ (cos θ, sin θ).
 * Returns -1 for a state off the constraint manifold (no solution of the constrained motion). */
static int exact(const double *p, const nh_state *x0, double t, nh_state *x) {
  const double l = p[P_L], *q = x0->q, *v = x0->v;
  const double tol = 1e-10 * l * l;
  if (fabs(q[0] * q[0] + q[1] * q[1] - l * l) > tol || fabs(q[0] * v[0] + q[1] * v[1]) > tol) return -1;
  const double th0 = atan2(q[0], -q[1]), thd0 = (q[0] * v[1] - q[1] * v[0]) / (l * l);
  double s, c, thd;
  if (pendulum_angle(sqrt(p[P_G] / l), th0, thd0, t - x0->t, &s, &c, &thd) != 0) return -1;
  memset(x, 0, sizeof *x);
  x->t = t;
  x->q[0] = l * s;
  x->q[1] = -l * c;
  x->v[0] = l * thd * c;
  x->v[1] = l * thd * s;
  return 0;
}

/* A random state on D at energy E. The constraint is holonomic, so q must lie on the circle
 * |q| = l, which a box draw never hits: θ uniform in [−π, π) with V = −m g l cos θ < E − margin,
 * q = l(sin θ, −cos θ); v = σ|v| t̂ along the tangent t̂ = (cos θ, sin θ), σ the sign of the
 * tangential component of g ~ N(0, I) (the generic recipe: g projected on the tangent line and
 * rescaled), |v| = √(2(E − V)/m). Returns 0, or -1 if no θ is admissible (E − margin ≤ −m g l). */
static int sample(const double *p, double E, gsl_rng *rng, nh_state *x) {
  const double m = p[P_M], l = p[P_L], pi = 3.14159265358979323846;
  memset(x, 0, sizeof *x);
  if (!(E - NH_SAMPLE_MARGIN > -m * p[P_G] * l)) return -1;
  for (long tries = 0; tries < NH_SAMPLE_TRIES; tries++) {
    const double th = gsl_ran_flat(rng, -pi, pi), c = cos(th), sn = sin(th);
    const double q[2] = {l * sn, -l * c}, V = potential(p, q);
    if (V >= E - NH_SAMPLE_MARGIN) continue;
    const double g0 = gsl_ran_gaussian_ziggurat(rng, 1.0), g1 = gsl_ran_gaussian_ziggurat(rng, 1.0);
    const double gt = g0 * c + g1 * sn;
    if (gt == 0) continue;
    const double speed = copysign(sqrt(2 * (E - V) / m), gt);
    x->q[0] = q[0], x->q[1] = q[1];
    x->v[0] = speed * c;
    x->v[1] = speed * sn;
    return 0;
  }
  return -1;
}

/* θ0 = 0.5, θ̇0 = 1 on the unit circle (spec/rattle.md §4 F): q0 = (sin 0.5, −cos 0.5),
 * v0 = (cos 0.5, sin 0.5); q0·v0 = 0 exactly in floating point. */
static const double q0[] = {0.479425538604203, -0.8775825618903728};
static const double v0[] = {0.8775825618903728, 0.479425538604203};

static const nh_preset presets[] = {
    {"rattle", "theta0 = 0.5, thetadot0 = 1 with m = g = l = 1 (spec/rattle.md 4 F)", q0, v0, "m=1,g=1,l=1"},
    {"free_circle", "free particle on the unit circle, g = 0, |v0| = 1 (spec/rattle.md 4 F, 5.2 F)", q0, v0,
     "m=1,g=0,l=1"},
};

static const nh_system_knowledge knowledge = {
    .exact = exact,
    NH_SYSTEM_PRESETS(presets),
    .sample_box = 1,
    .sample = sample,
    .sampler_doc = "own sampler (holonomic constraint, q on the circle): theta uniform in [-pi, pi) with "
                   "V = -m g l cos(theta) < E - 0.1, q = l (sin theta, -cos theta); v tangent, l thetadot = "
                   "+-sqrt(2 (E - V)/m) with the sign of the tangential part of N(0, I); sample_box unused",
};

const nh_system_type nh_system_pendulum = {
    .name = "pendulum",
    .doc = "Planar pendulum in Cartesian coordinates q = (x, y), M = m I, V = m g y, holonomic constraint "
           "phi = (|q|^2 - l^2)/2 with A = q^T; exact solution by Jacobi elliptic functions (libration and "
           "rotation) (spec/rattle.md 4 F).",
    .n = 2,
    .k = 1,
    NH_SYSTEM_PARAMS(params),
    .q0 = q0,
    .v0 = v0,
    .ic_doc = "theta0 = 0.5, thetadot0 = 1: q0 = (sin 0.5, -cos 0.5), v0 = (cos 0.5, sin 0.5), on the circle "
              "for l = 1 (spec/rattle.md 4 F); with another l use initial = { q; v; } scaled by l",
    NH_SYSTEM_MECHANICS,
    .holonomic = holonomic,
    .knowledge = &knowledge,
};
