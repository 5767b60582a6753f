/* Foucault pendulum with Rayleigh damping (spec/herglotz.md §3.1; paper eqs (4.1)-(4.5)).
 * Small-angle model in the Earth frame, q = (x, y) (x south, y east):
 *   L = ½ m (ẋ² + ẏ²) − (m g / 2l)(x² + y²),  damping force −α m q̇ (Herglotz term −αz, §2.1),
 *   affine nonholonomic constraint (4.2): −y ẋ + x ẏ + s (x² + y²) = 0,  s = Ω sin β,
 * i.e. A(q) = (−y, x), b(q) = s (x² + y²). The index-reduced ODE has a removable singularity at
 * the origin (the multiplier divides by x² + y²), which every consistent motion crosses; the
 * exact solution below has none. */
#include <gsl/gsl_randist.h>
#include <math.h>
#include <string.h>

#include "systems/system.h"

enum { P_M, P_L, P_G, P_BETA, P_OMEGA, P_ALPHA, P_COUNT };
#define SAMPLE_BOX 1.0 /* [m] */

static const nh_param_desc params[] = {
    [P_M] = {"m", NH_PARAM_REAL, 28, 1e-6, 1e6, "bob mass [kg] (paper: 28, Paris 1851)", 0},
    [P_L] = {"l", NH_PARAM_REAL, 67, 1e-6, 1e6, "pendulum length [m] (paper: 67)", 0},
    [P_G] = {"g", NH_PARAM_REAL, 9.81, 0, 1e3, "gravity [m/s^2] (not in the paper; spec 6 suggests 9.81)", 0},
    [P_BETA] = {"beta_deg", NH_PARAM_REAL, 49, -90, 90, "latitude beta in DEGREES (paper: 49)", 0},
    [P_OMEGA] = {"Omega", NH_PARAM_REAL, 7.2921159e-5, 0, 1, "Earth's rotation rate [rad/s] (sidereal; spec 6)", 0},
    [P_ALPHA] = {"alpha", NH_PARAM_REAL, 1e-3, 0, 10,
     "Rayleigh damping alpha, force -alpha m qdot (paper: 1e-3 Exp 1, 1e-4 Exp 2)", 0},
};
_Static_assert(sizeof params / sizeof *params == P_COUNT, "params[] and the P_* enum disagree");

/* s = Ω sin β, the vertical component of Earth's rotation (the precession rate is −s). */
static double rate(const double *p) { return p[P_OMEGA] * sin(p[P_BETA] * (3.14159265358979323846 / 180)); }

static void mass(const double *p, const double *q NH_UNUSED, double *M) {
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

static void hess_potential(const double *p, const double *q NH_UNUSED, double *H) {
  H[0] = H[3] = p[P_M] * p[P_G] / p[P_L];
  H[1] = H[2] = 0;
}

static void constraints(const double *p NH_UNUSED, const double *q, double *A) {
  A[0] = -q[1];
  A[1] = q[0];
}

static void constraints_jacobian(const double *p NH_UNUSED, const double *q NH_UNUSED, double *dA) {
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

static double damping(const double *p, double t NH_UNUSED) { return p[P_ALPHA]; }

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

/* A random state on D at energy E. The constraint A(q)v + b(q) = 0 is affine, so the generic
 * sampler's rescaling of v would leave it; instead
 *  - q uniform in the sample box with V(q) < E − margin (as the generic sampler), q ≠ 0;
 *  - v = v_p + κ w: v_p = −M⁻¹Aᵀ C⁻¹ b = s (y, −x) is the M-orthogonal (least kinetic energy)
 *    solution of A v + b = 0, C = A M⁻¹Aᵀ = |q|²/m; w is g ~ N(0, I) projected M-orthogonally on
 *    ker A = span q (M = m I: w = (g·q̂) q̂); κ > 0 solves ½(v_p + κw)ᵀM(v_p + κw) = E − V(q),
 *    a κ² + β κ + c = 0 with a = ½wᵀMw, β = v_pᵀMw (0 up to rounding, v_p ⟂_M ker A),
 *    c = ½v_pᵀMv_p − (E − V). Draws without a positive root (c ≥ 0: the rotation alone has more
 *    kinetic energy than E − V allows) or with w = 0 are rejected.
 * Returns 0, or -1 when no draw in NH_SAMPLE_TRIES succeeds. */
static int sample(const double *p, double E, gsl_rng *rng, nh_state *x) {
  const double box = SAMPLE_BOX, m = p[P_M], s = rate(p);
  memset(x, 0, sizeof *x);
  if (!(E - NH_SAMPLE_MARGIN > 0)) return -1; /* min V = 0: no admissible q */
  for (long tries = 0; tries < NH_SAMPLE_TRIES; tries++) {
    const double qx = gsl_ran_flat(rng, -box, box), qy = gsl_ran_flat(rng, -box, box);
    const double q[2] = {qx, qy}, V = potential(p, q), r = hypot(qx, qy);
    if (V >= E - NH_SAMPLE_MARGIN || r == 0) continue;
    const double g0 = gsl_ran_gaussian_ziggurat(rng, 1.0), g1 = gsl_ran_gaussian_ziggurat(rng, 1.0);
    const double ex = qx / r, ey = qy / r, gr = g0 * ex + g1 * ey;
    const double vp[2] = {s * qy, -s * qx}, w[2] = {gr * ex, gr * ey};
    const double a = 0.5 * m * (w[0] * w[0] + w[1] * w[1]), beta = m * (vp[0] * w[0] + vp[1] * w[1]);
    const double c = 0.5 * m * (vp[0] * vp[0] + vp[1] * vp[1]) - (E - V), disc = beta * beta - 4 * a * c;
    if (!(a > 0) || !(c < 0) || !(disc >= 0)) continue;
    /* The positive root, in the form without cancellation for either sign of β. */
    const double kappa = beta >= 0 ? -2 * c / (beta + sqrt(disc)) : (-beta + sqrt(disc)) / (2 * a);
    x->q[0] = qx, x->q[1] = qy;
    x->v[0] = vp[0] + kappa * w[0];
    x->v[1] = vp[1] + kappa * w[1];
    return 0;
  }
  return -1;
}

/* The oscillation plane. On D, q × q̇ = −s|q|², so w = q̇ + s Jq (Jq = (−y, x): q̇ with the
 * frame rotation −s removed) is parallel to q: both lie along e = (cos φ, sin φ), the plane,
 * and along the exact solution q = u e, w = u̇ e. The plane angle is the principal axis of
 * S = ω0² q qᵀ + w wᵀ (ω0² = g/l, or 1 s⁻² when g = 0), ½ atan2(2S_xy, S_xx − S_yy) ∈ (−π/2, π/2]:
 * φ modulo π. The weights make ½ tr S = ½(ω0²u² + u̇²) the radial oscillation's energy per unit
 * mass (up to the O(s²) frequency shift), so S does not vanish along a motion: near u = 0 the
 * plane comes from w, near u̇ = 0 from q, and u = 0 needs no special case. Off D (a method's
 * drift) it is the energy-weighted average direction. At rest at the origin there is no plane: NaN.
 * out[1] is the same angle plus s t, reduced likewise: the plane in the frame that turns with the
 * exact precession −s, constant (φ0) along the exact solution, so its changes are the precession
 * error and the plane jumps themselves (spec/herglotz.md §5 item 13). */
static const char *const derived_names[] = {"plane_angle", "plane_angle_corotating"};
static const char *const derived_units[] = {"rad", "rad"};
static const char *const derived_docs[] = {
    "oscillation-plane angle modulo pi in (-pi/2, pi/2]: principal axis of (g/l) q q^T + w w^T with "
    "w = qdot + s (-y, x) (the velocity without the frame rotation, parallel to q on D); equals phi0 - s t "
    "mod pi along the exact solution, including at the crossings of the origin (there from w); NaN at rest "
    "at the origin. An angle modulo pi: take differences modulo pi (spec/herglotz.md 5 item 13)",
    "plane angle + s t, reduced to (-pi/2, pi/2]: the plane in the frame turning with the exact precession "
    "-s, constant phi0 mod pi along the exact solution; its drift is the precession error and its "
    "single-step changes the plane jumps (spec/herglotz.md 5 item 13). Modulo pi like plane_angle",
};

/* ½ atan2(y, x) in (−π/2, π/2]: atan2(−0, x < 0) = −π would give −π/2. */
static double half_angle(double y, double x) {
  const double h = 0.5 * atan2(y, x);
  return h <= -0.5 * 3.14159265358979323846 ? h + 3.14159265358979323846 : h;
}

static void derived(const double *p, double t, const double *q, const double *v, double *out) {
  const double s = rate(p), w2 = p[P_G] > 0 ? p[P_G] / p[P_L] : 1, w0 = sqrt(w2);
  double a[2] = {w0 * q[0], w0 * q[1]}, w[2] = {v[0] - s * q[1], v[1] + s * q[0]};
  /* Scale both by their size so that the squares neither underflow nor overflow. */
  const double size = fmax(fmax(fabs(a[0]), fabs(a[1])), fmax(fabs(w[0]), fabs(w[1])));
  if (!(size > 0)) {
    out[0] = out[1] = NAN;
    return;
  }
  for (int i = 0; i < 2; i++) a[i] /= size, w[i] /= size;
  const double C = a[0] * a[0] - a[1] * a[1] + w[0] * w[0] - w[1] * w[1]; /* S_xx − S_yy */
  const double S = 2 * (a[0] * a[1] + w[0] * w[1]);                       /* 2 S_xy */
  const double c2 = cos(2 * s * t), s2 = sin(2 * s * t);
  out[0] = half_angle(S, C);
  out[1] = half_angle(S * c2 + C * s2, C * c2 - S * s2); /* the doubled angle turned by 2 s t */
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

static const nh_affine_constraints affine = {.values = constraint_affine, .jacobian = constraint_affine_jacobian};

static const nh_system_forces forces = {
    .damping = damping,
};

static const nh_system_knowledge knowledge = {
    .exact = exact,
    NH_SYSTEM_DERIVED(derived_names, derived_docs, derived_units, derived),
    NH_SYSTEM_PRESETS(presets),
    .sample_box = SAMPLE_BOX,
    .sample = sample,
    .sampler_doc = "own sampler (affine constraint): q uniform in [-1,1]^2 with V(q) < E - 0.1, q != 0; "
                   "v = s (y, -x) (the M-orthogonal solution -M^-1 A^T C^-1 b of A v + b = 0, at rest in the "
                   "inertial frame) + kappa w, w = N(0, I) projected on ker A = span q, kappa > 0 the root of "
                   "m |v|^2 / 2 = E - V(q); draws without a real root are rejected",
};

const nh_system_type nh_system_foucault_pendulum = {
    .name = "foucault_pendulum",
    .doc = "Foucault pendulum with Rayleigh damping, small-angle model in the Earth frame, q = (x, y); "
           "affine constraint -y xdot + x ydot + s (x^2 + y^2) = 0 with s = Omega sin(beta), damping "
           "force -alpha m qdot; exact solution for every consistent state (spec/herglotz.md 3.1). "
           "The index-reduced ODE is singular at the origin, which every motion crosses.",
    .n = 2,
    .k = 1,
    NH_SYSTEM_PARAMS(params),
    .q0 = q_a1,
    .v0 = v_a1,
    .ic_doc = "q0 = (1, 0) m, v0 = (0, -s) with s = Omega sin(beta) = 5.50343e-5 rad/s (default Omega, "
              "beta; at rest in the inertial frame, spec 6); E0 = 2.049850789 J",
    NH_SYSTEM_MECHANICS,
    .affine = &affine,
    .forces = &forces,
    .knowledge = &knowledge,
};
