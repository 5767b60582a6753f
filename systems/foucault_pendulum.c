/* Foucault pendulum with Rayleigh damping (spec/herglotz.md §3.1; paper eqs (4.1)-(4.5)).
 * Small-angle model in the Earth frame, q = (x, y) (x south, y east):
 *   L = ½ m (ẋ² + ẏ²) − (m g / 2l)(x² + y²),  damping force −α m q̇ (Herglotz term −αz, §2.1),
 *   affine nonholonomic constraint (4.2): −y ẋ + x ẏ + s (x² + y²) = 0,  s = Ω sin β,
 * i.e. A(q) = (−y, x), b(q) = s (x² + y²). The index-reduced ODE has a removable singularity at
 * the origin (the multiplier divides by x² + y²), which every consistent motion crosses; the
 * exact solution below has none. */
#include <math.h>
#include <string.h>

#include "systems/system.h"

enum { P_M, P_L, P_G, P_BETA, P_OMEGA, P_ALPHA };

static const nh_param_desc params[] = {
    {"m", NH_PARAM_REAL, 28, 1e-6, 1e6, "bob mass [kg] (paper: 28, Paris 1851)", 0},
    {"l", NH_PARAM_REAL, 67, 1e-6, 1e6, "pendulum length [m] (paper: 67)", 0},
    {"g", NH_PARAM_REAL, 9.81, 0, 1e3, "gravity [m/s^2] (not in the paper; spec 6 suggests 9.81)", 0},
    {"beta_deg", NH_PARAM_REAL, 49, -90, 90, "latitude beta in DEGREES (paper: 49)", 0},
    {"Omega", NH_PARAM_REAL, 7.2921159e-5, 0, 1, "Earth's rotation rate [rad/s] (sidereal; spec 6)", 0},
    {"alpha", NH_PARAM_REAL, 1e-3, 0, 10, "Rayleigh damping alpha, force -alpha m qdot (paper: 1e-3 Exp 1, 1e-4 Exp 2)", 0},
};

/* s = Ω sin β, the vertical component of Earth's rotation (the precession rate is −s). */
static double rate(const double *p) { return p[P_OMEGA] * sin(p[P_BETA] * (3.14159265358979323846 / 180)); }

static void mass(const double *p, const double *q, double *M) {
  (void)q;
  M[0] = M[3] = p[P_M];
  M[1] = M[2] = 0;
}

static double potential(const double *p, const double *q) {
  return p[P_M] * p[P_G] / (2 * p[P_L]) * (q[0] * q[0] + q[1] * q[1]);
}

static void grad_potential(const double *p, const double *q, double *g) {
  const double k = p[P_M] * p[P_G] / p[P_L];
  g[0] = k * q[0];
  g[1] = k * q[1];
}

static void hess_potential(const double *p, const double *q, double *H) {
  (void)q;
  H[0] = H[3] = p[P_M] * p[P_G] / p[P_L];
  H[1] = H[2] = 0;
}

static void constraints(const double *p, const double *q, double *A) {
  (void)p;
  A[0] = -q[1];
  A[1] = q[0];
}

static void constraints_jacobian(const double *p, const double *q, double *dA) {
  (void)p, (void)q;
  dA[0] = dA[3] = 0;
  dA[0 * 2 + 1] = -1; /* ∂A_x/∂y */
  dA[1 * 2 + 0] = 1;  /* ∂A_y/∂x */
}

static void constraint_affine(const double *p, const double *q, double *b) {
  b[0] = rate(p) * (q[0] * q[0] + q[1] * q[1]);
}

static void constraint_affine_jacobian(const double *p, const double *q, double *db) {
  db[0] = 2 * rate(p) * q[0];
  db[1] = 2 * rate(p) * q[1];
}

static double damping(const double *p) { return p[P_ALPHA]; }

/* Solution of ü + α u̇ + k u = 0 at time τ from (u0, u̇0): with a = α/2 and w² = k − a²,
 *   u = e^{−aτ}[u0 C + (u̇0 + a u0) S],  u̇ = e^{−aτ}[u̇0 C − (k u0 + a u̇0) S],
 * where (C, S) = (cos wτ, sin(wτ)/w), (cosh, sinh(|w|τ)/|w|) or (1, τ) as w² >, <, = 0. */
static void damped_oscillator(double alpha, double k, double u0, double du0, double tau, double *u,
                              double *du) {
  const double a = alpha / 2, w2 = k - a * a, w = sqrt(fabs(w2));
  double C = 1, S = tau;
  if (w2 > 0) C = cos(w * tau), S = sin(w * tau) / w;
  if (w2 < 0) C = cosh(w * tau), S = sinh(w * tau) / w;
  const double e = exp(-a * tau);
  *u = e * (u0 * C + (du0 + a * u0) * S);
  *du = e * (du0 * C - (k * u0 + a * du0) * S);
}

/* Exact solution (spec §3.1, derived): the constraint makes the motion radial in the frame that
 * rotates at −s, q = u(t)(cos φ, sin φ) with φ = φ0 − s t and ü + α u̇ + (g/l − s²) u = 0.
 * Any consistent initial state is handled: for r0 > 0, φ0 = atan2(y0, x0), u0 = r0 and
 * u̇0 = q0·v0/r0; at the origin every velocity is consistent, and the motion leaves along it
 * (φ0 = direction of v0, u0 = 0, u̇0 = |v0|). Returns -1 if the initial state is off D.
 * z is not computed (set to 0). */
static int exact(const double *p, const nh_state *x0, double t, nh_state *x) {
  const double s = rate(p), k = p[P_G] / p[P_L] - s * s;
  const double *q = x0->q, *v = x0->v;
  const double r = hypot(q[0], q[1]);
  const double speed = hypot(v[0], v[1]);
  const double residual = -q[1] * v[0] + q[0] * v[1] + s * r * r;
  if (fabs(residual) > 1e-12 * (r * speed + fabs(s) * r * r) + 1e-300) return -1;
  double phi0, u0, du0;
  if (r > 0) {
    phi0 = atan2(q[1], q[0]), u0 = r, du0 = (q[0] * v[0] + q[1] * v[1]) / r;
  } else {
    phi0 = atan2(v[1], v[0]), u0 = 0, du0 = speed;
  }
  const double tau = t - x0->t, phi = phi0 - s * tau, c = cos(phi), sn = sin(phi);
  double u, du;
  damped_oscillator(p[P_ALPHA], k, u0, du0, tau, &u, &du);
  memset(x, 0, sizeof *x);
  x->t = t;
  x->q[0] = u * c;
  x->q[1] = u * sn;
  /* q̇ = u̇ e − s u e⊥, e = (cos φ, sin φ), e⊥ = (−sin φ, cos φ). */
  x->v[0] = du * c + s * u * sn;
  x->v[1] = du * sn - s * u * c;
  return 0;
}

/* The default initial condition and the presets assume the default Ω and β:
 * s = 7.2921159e-5 sin(49°) = 5.50342972982480e-5 rad/s; q0 = (A, 0), q̇0 = (0, −sA) ("at rest in the
 * inertial frame", spec §6). */
static const double q_a1[] = {1, 0};
static const double v_a1[] = {0, -5.50342972982480123e-5};
static const double q_a3[] = {3, 0};
static const double v_a3[] = {0, -1.65102891894744037e-4};

static const nh_preset presets[] = {
    {"exp1", "paper Exp 1: alpha = 1e-3, amplitude A = 1 m, q0 = (1, 0), v0 = (0, -s)", q_a1, v_a1, "alpha=1e-3"},
    {"exp2", "paper Exp 2: alpha = 1e-4 (air friction), A = 1 m", q_a1, v_a1, "alpha=1e-4"},
    {"amplitude3", "A = 3 m (spec 6), q0 = (3, 0), v0 = (0, -3s); alpha unchanged", q_a3, v_a3, ""},
};

const nh_system_type nh_system_foucault_pendulum = {
    .name = "foucault_pendulum",
    .doc = "Foucault pendulum with Rayleigh damping, small-angle model in the Earth frame, q = (x, y); "
           "affine constraint -y xdot + x ydot + s (x^2 + y^2) = 0 with s = Omega sin(beta), damping "
           "force -alpha m qdot; exact solution for every consistent state (spec/herglotz.md 3.1). "
           "The index-reduced ODE is singular at the origin, which every motion crosses.",
    .n = 2,
    .k = 1,
    .params = params,
    .nparams = sizeof params / sizeof params[0],
    .q0 = q_a1,
    .v0 = v_a1,
    .ic_doc = "q0 = (1, 0) m, v0 = (0, -s) with s = Omega sin(beta) = 5.50343e-5 rad/s (default Omega, "
              "beta; at rest in the inertial frame, spec 6); E0 = 2.049850789 J",
    .sample_box = 1,
    .mass = mass,
    .potential = potential,
    .grad_potential = grad_potential,
    .hess_potential = hess_potential,
    .constraints = constraints,
    .constraints_jacobian = constraints_jacobian,
    .constraint_affine = constraint_affine,
    .constraint_affine_jacobian = constraint_affine_jacobian,
    .damping = damping,
    .exact = exact,
    .npresets = sizeof presets / sizeof presets[0],
    .presets = presets,
};
