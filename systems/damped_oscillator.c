/* The damped, optionally forced, harmonic oscillator of the contact-integrator papers (issue 17):
 *   ẍ + α ẋ + ω² x = β sin(Ω t),   q = (x), M = 1, V = ½ω²x², no constraint (k = 0),
 * i.e. L = ½ẋ² − ½ω²x² with the interface's mass-proportional damping −αMv and generalized force
 * F(t) = β sin(Ωt). It is the benchmark of M. Vermeeren, A. Bravetti, M. Seri, "Contact variational
 * integrators", J. Phys. A 52 (2019) 445206 (doi:10.1088/1751-8121/ab4767): its damped oscillator and
 * Example 6 (forced), with the data of the paper's notebooks (github.com/mseri/contact-variational-
 * integrator, DampedOscillator.ipynb, DampedOscillatorWithForcing.ipynb): ω = 1, α ∈ {0.01, 0.1,
 * 1, 2}, h = 0.1; unforced from (x0, ẋ0) = (−0.25, 0.75), T = 50 (15 for α ≥ 1); forced with
 * β = 0.3, Ω = π/3 from the steady state, T = 50.
 * The time-dependent damping ẍ + f(t)ẋ + ... of Bravetti–Seri–Vermeeren–Zadra (2020) is the
 * Lane–Emden system (systems/lane_emden.c, f = 2/t): this oscillator keeps a constant α, for which
 * its exact solution below holds.
 * Exact solution, every α ≥ 0 (under-, critically and over-damped): x = x_p + ξ with the particular
 * solution x_p = a sin Ωt + b cos Ωt, (a, b) = β(ω² − Ω², −αΩ)/D, D = (ω² − Ω²)² + α²Ω² (the
 * notebook's reference() in another form; for α = 0, Ω = ω the resonant −(β/2ω) t cos ωt), and ξ
 * the homogeneous solution from ξ0 = x0 − x_p(t0), η0 = ẋ0 − ẋ_p(t0):
 *   ξ(τ) = e^{−ζτ}[ξ0 C(τ) + (η0 + ζξ0) S(τ)],  ξ̇(τ) = e^{−ζτ}[η0 C(τ) − (ζη0 + ω²ξ0) S(τ)],
 * ζ = α/2, σ = ω² − ζ², C' = −σS, S' = C, C(0) = 1, S(0) = 0: (cos rτ, sin(rτ)/r) for σ = r² > 0,
 * (cosh rτ, sinh(rτ)/r) for σ = −r² < 0, (1, τ) for σ = 0 [derived].
 * Time-dependent first integral [derived]: Q = e^{αt}(½ξ̇² + ½ω²ξ² + (α/2)ξξ̇), since
 * d/dt(½ξ̇² + ½ω²ξ² + (α/2)ξξ̇) = −α(½ξ̇² + ½ω²ξ² + (α/2)ξξ̇) along ξ̈ + αξ̇ + ω²ξ = 0. The
 * interface's invariants take no t, so Q is a derived quantity. */
#include <math.h>
#include <string.h>

#include "systems/system.h"

enum { N = 1 };
enum { P_OMEGA, P_ALPHA, P_BETA, P_OMEGA_F, P_COUNT };

#define PI_3 1.0471975511965976 /* π/3, the papers' forcing frequency */

static const nh_param_desc params[] = {
    [P_OMEGA] = {"omega", NH_PARAM_REAL, 1, 0, 1e3, "natural angular frequency: V = omega^2 x^2 / 2 (papers: 1)", 0},
    [P_ALPHA] = {"alpha", NH_PARAM_REAL, 0.1, 0, 10,
                 "damping alpha, force -alpha xdot (papers: 0.01, 0.1, 1, 2; alpha = 2 omega is critical)", 0},
    [P_BETA] = {"beta", NH_PARAM_REAL, 0, -100, 100, "forcing amplitude: F(t) = beta sin(omega_f t) (papers: 0, 0.3)",
                0},
    [P_OMEGA_F] = {"omega_f", NH_PARAM_REAL, PI_3, 0, 1e3, "forcing angular frequency (papers: pi/3)", 0},
};
_Static_assert(sizeof params / sizeof *params == P_COUNT, "params[] and the P_* enum disagree");

static void mass(const double *p NH_UNUSED, const double *q NH_UNUSED, double *M) { M[0] = 1; }

static double potential(const double *p, const double *q) { return 0.5 * p[P_OMEGA] * p[P_OMEGA] * q[0] * q[0]; }

static void grad_potential(const double *p, const double *q, double *g) { g[0] = p[P_OMEGA] * p[P_OMEGA] * q[0]; }

static void hess_potential(const double *p, const double *q NH_UNUSED, double *H) { H[0] = p[P_OMEGA] * p[P_OMEGA]; }

static double damping(const double *p, double t NH_UNUSED) { return p[P_ALPHA]; }

static int forcing(const double *p, double t, double *F) {
  F[0] = p[P_BETA] * sin(p[P_OMEGA_F] * t);
  return p[P_BETA] != 0;
}

/* The particular solution (x_p, ẋ_p) at t (header); 0 when β = 0. */
static void particular(const double *p, double t, double *x, double *v) {
  const double w = p[P_OMEGA], al = p[P_ALPHA], beta = p[P_BETA], W = p[P_OMEGA_F];
  const double d = w * w - W * W, D = d * d + al * al * W * W;
  if (beta == 0) {
    *x = *v = 0;
  } else if (D == 0) { /* α = 0, Ω = ω: x_p = −(β/2ω) t cos ωt */
    *x = -beta / (2 * w) * t * cos(w * t);
    *v = -beta / (2 * w) * (cos(w * t) - w * t * sin(w * t));
  } else {
    const double a = beta * d / D, b = -beta * al * W / D, s = sin(W * t), c = cos(W * t);
    *x = a * s + b * c;
    *v = W * (a * c - b * s);
  }
}

/* e^{−ζτ}C(τ) and e^{−ζτ}S(τ) (header). For σ < 0 with |rτ| large, e^{−ζτ}cosh rτ is formed from
 * the two exponentials e^{(±r−ζ)τ}, each finite where the product is, instead of cosh rτ alone. */
static void decaying_basis(double zeta, double sigma, double tau, double *EC, double *ES) {
  const double r = sqrt(fabs(sigma));
  if (sigma > 0) {
    const double e = exp(-zeta * tau);
    *EC = e * cos(r * tau), *ES = e * sin(r * tau) / r;
  } else if (sigma < 0 && fabs(r * tau) > 20) {
    const double ep = exp((r - zeta) * tau), em = exp(-(r + zeta) * tau);
    *EC = 0.5 * (ep + em), *ES = (ep - em) / (2 * r);
  } else if (sigma < 0) {
    const double e = exp(-zeta * tau);
    *EC = e * cosh(r * tau), *ES = e * sinh(r * tau) / r;
  } else {
    const double e = exp(-zeta * tau);
    *EC = e, *ES = e * tau;
  }
}

static int exact(const double *p, const nh_state *x0, double t, nh_state *x) {
  const double w2 = p[P_OMEGA] * p[P_OMEGA], zeta = 0.5 * p[P_ALPHA];
  double xp0, vp0, xp, vp, EC, ES;
  particular(p, x0->t, &xp0, &vp0);
  particular(p, t, &xp, &vp);
  decaying_basis(zeta, w2 - zeta * zeta, t - x0->t, &EC, &ES);
  const double xi = x0->q[0] - xp0, eta = x0->v[0] - vp0;
  *x = *x0;
  x->t = t;
  x->q[0] = xp + EC * xi + ES * (eta + zeta * xi);
  x->v[0] = vp + EC * eta - ES * (zeta * eta + w2 * xi);
  return 0;
}

static const char *const derived_names[] = {"transient_invariant"};
static const char *const derived_docs[] = {
    "Q = e^{alpha t} (eta^2/2 + omega^2 xi^2/2 + alpha xi eta/2) with xi = x - x_p(t), eta = xdot - xdot_p(t) the "
    "transient (x_p the steady forced response; 0 without forcing): a first integral of the exact flow for every "
    "alpha, beta (header of systems/damped_oscillator.c); its drift measures a method's error in the decay rate "
    "and phase of the transient. Overflows for alpha t > ~700",
};

static void derived(const double *p, double t, const double *q, const double *v, double *out) {
  const double w = p[P_OMEGA], al = p[P_ALPHA];
  double xp, vp;
  particular(p, t, &xp, &vp);
  const double xi = q[0] - xp, eta = v[0] - vp;
  out[0] = exp(al * t) * (0.5 * eta * eta + 0.5 * w * w * xi * xi + 0.5 * al * xi * eta);
}

/* The notebooks' initial conditions, (p0, q0) there = (xdot0, x0) here. Unforced: (-0.25, 0.75).
 * Forced: the steady state x_p(0) = b, xdot_p(0) = a Omega for beta = 0.3, Omega = pi/3 (the
 * notebook's reference(0), dreference(0)). */
static const double q_damped[] = {-0.25};
static const double v_damped[] = {0.75};
static const double q_one[] = {1}, v_one[] = {1}; /* the contact-integrators notebook's (p0, q0) = (1, 1) */
static const double q_forced_a001[] = {-0.3325981545963761}, v_forced_a001[] = {-3.2136535447911867};
static const double q_forced_a01[] = {-1.5474167599216113}, v_forced_a01[] = {-1.4951560274969613};
static const double q_forced_a1[] = {-0.284060586391659}, v_forced_a1[] = {-0.027446704011356668};
static const double q_forced_a2[] = {-0.14293523386365783}, v_forced_a2[] = {-0.006905394913254071};

#define UNFORCED(A) "omega=1,beta=0,alpha=" A
#define FORCED(A) "omega=1,beta=0.3,omega_f=1.0471975511965976,alpha=" A
#define DAMPED_DOC(A, T) \
  "VBS 2019 damped oscillator, alpha = " A ": x0 = -0.25, xdot0 = 0.75, omega = 1 (paper T = " T ", h = 0.1)"
#define FORCED_DOC(A) \
  "VBS 2019 forced oscillator, alpha = " A ", beta = 0.3, Omega = pi/3, on the steady state (paper T = 50, h = 0.1)"

static const nh_preset presets[] = {
    {"damped_a001", DAMPED_DOC("0.01", "50"), q_damped, v_damped, UNFORCED("0.01")},
    {"damped_a01", DAMPED_DOC("0.1", "50"), q_damped, v_damped, UNFORCED("0.1")},
    {"damped_a1", DAMPED_DOC("1", "15"), q_damped, v_damped, UNFORCED("1")},
    {"damped_a2", DAMPED_DOC("2 (critical)", "15"), q_damped, v_damped, UNFORCED("2")},
    {"forced_a001", FORCED_DOC("0.01"), q_forced_a001, v_forced_a001, FORCED("0.01")},
    {"forced_a01", FORCED_DOC("0.1"), q_forced_a01, v_forced_a01, FORCED("0.1")},
    {"forced_a1", FORCED_DOC("1"), q_forced_a1, v_forced_a1, FORCED("1")},
    {"forced_a2", FORCED_DOC("2"), q_forced_a2, v_forced_a2, FORCED("2")},
    {"notebook_a0125", "contact-integrators 'Damped Oscillator.ipynb' (34b239e): alpha = 0.125, omega = 1, no "
     "forcing, x0 = 1, xdot0 = 1 (notebook: ic.step, h = 0.5 and 0.001, T = 50, against the closed form)",
     q_one, v_one, UNFORCED("0.125")},
};
_Static_assert(sizeof presets / sizeof *presets <= NH_MAX_PRESETS, "too many presets");

static const nh_system_forces forces = {
    .damping = damping,
    .forcing = forcing,
};

static const nh_system_knowledge knowledge = {
    .exact = exact,
    NH_SYSTEM_DERIVED(derived_names, derived_docs, NULL, derived),
    NH_SYSTEM_PRESETS(presets),
    .sample_box = 1,
    .sampler_doc = "generic (spec/newmark.md 6 A10) without constraints: x uniform in [-1,1] with V(x) < E - 0.1, "
                   "xdot = +-sqrt(2(E - V(x))) (the sign of a normal draw)",
};

const nh_system_type nh_system_damped_oscillator = {
    .name = "damped_oscillator",
    .doc = "Damped, optionally forced, harmonic oscillator xddot + alpha xdot + omega^2 x = beta sin(omega_f t), "
           "k = 0, M = 1 (Vermeeren-Bravetti-Seri 2019: the damped oscillator and Example 6). Exact solution for "
           "every alpha >= 0; derived: the transient's time-dependent first integral.",
    .n = N,
    .k = 0,
    NH_SYSTEM_PARAMS(params),
    .q0 = q_damped,
    .v0 = v_damped,
    .ic_doc = "preset damped_a01: x0 = -0.25, xdot0 = 0.75 with the default alpha = 0.1, no forcing, E0 = 0.3125",
    NH_SYSTEM_UNCONSTRAINED_MECHANICS,
    .forces = &forces,
    .knowledge = &knowledge,
};
