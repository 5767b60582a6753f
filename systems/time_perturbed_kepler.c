/* The time-perturbed Kepler problem (issue 17) of A. Bravetti, M. Seri, M. Vermeeren, F. Zadra,
 * "Numerical integration in celestial mechanics: a case for contact geometry", Celest. Mech. Dyn.
 * Astr. 132 (2020) 7, with the data of its reference code (github.com/mseri/contact-integrators,
 * "The Time-Perturbed Kepler model.ipynb", class TimePerturbedKepler):
 *   H = |p|²/2 + α sin(θt) S + γ/|q|,   i.e.   q̈ = γ q/|q|³ − α sin(θt) q̇,
 * q ∈ R², M = I, V = γ/|q| (γ < 0 attracts; the notebook's γ = −1), k = 0, and the interface's
 * time-dependent damping α(t) = f(t) = α sin(θt), negative half of the time (it pumps energy in).
 * Initial conditions (notebook init_ecc(e)): q0 = (1 − e, 0), p0 = (0, √((1 + e)/(1 − e))), the
 * pericentre of the γ = −1 Kepler ellipse of eccentricity e and semi-major axis 1.
 *
 * First integrals [derived]. The angular momentum L = q₁q̇₂ − q₂q̇₁ obeys L̇ = q × q̈ = −f(t) L (the
 * central force has no torque), so L·exp(∫₀ᵗ f) = L·exp(α(1 − cos θt)/θ) is conserved for every α, θ
 * (θ = 0: f ≡ 0, L itself). The interface's invariants take no t, so both are derived quantities.
 * At α = 0 the energy ½|q̇|² + γ/|q| (nh_energy) and L are conserved (plain Kepler). */
#include <math.h>

#include "systems/system.h"

enum { N = 2 };
enum { P_ALPHA, P_THETA, P_GAMMA, P_COUNT };

#define TWO_PI 6.283185307179586

static const nh_param_desc params[] = {
    [P_ALPHA] = {"alpha", NH_PARAM_REAL, -0.07, -10, 10,
                 "damping amplitude: f(t) = alpha sin(theta t) (notebook: -0.07, -0.01, 1.7)", 0, NULL},
    [P_THETA] = {"theta", NH_PARAM_REAL, TWO_PI, 0, 1e3, "damping angular frequency (notebook: 2 pi, pi)", 0, NULL},
    [P_GAMMA] = {"gamma", NH_PARAM_REAL, -1, -100, 100, "potential V = gamma/|q| (notebook: -1, attracting)", 0, NULL},
};
_Static_assert(sizeof params / sizeof *params == P_COUNT, "params[] and the P_* enum disagree");

static void mass(const double *p NH_UNUSED, const double *q NH_UNUSED, double *M) { nh_unit_mass_matrix(N, M); }

static double potential(const double *p, const double *q) { return p[P_GAMMA] / hypot(q[0], q[1]); }

/* ∇(γ/r) = −γ q/r³ (notebook: Vq = −q γ/|q|³). */
static void grad_potential(const double *p, const double *q, double *g) {
  const double r = hypot(q[0], q[1]), c = -p[P_GAMMA] / (r * r * r);
  g[0] = c * q[0], g[1] = c * q[1];
}

/* ∇²(γ/r) = γ(3 q qᵀ/r⁵ − I/r³). */
static void hess_potential(const double *p, const double *q, double *H) {
  const double r2 = q[0] * q[0] + q[1] * q[1], r = sqrt(r2), c = p[P_GAMMA] / (r2 * r), d = 3 * c / r2;
  H[0] = d * q[0] * q[0] - c, H[3] = d * q[1] * q[1] - c, H[1] = H[2] = d * q[0] * q[1];
}

static double damping(const double *p, double t) { return p[P_ALPHA] * sin(p[P_THETA] * t); }

/* f ≡ 0 for α = 0 or θ = 0: then the plain (conservative) Kepler problem. */
static unsigned time_dependence(const double *p) {
  return p[P_ALPHA] != 0 && p[P_THETA] != 0 ? NH_SYS_TIME_DAMPING : 0;
}

static const char *const derived_names[] = {"angular_momentum", "scaled_angular_momentum"};
static const char *const derived_docs[] = {
    "L = q1 qdot2 - q2 qdot1; conserved at alpha = 0, else dL/dt = -alpha sin(theta t) L",
    "L exp(alpha (1 - cos(theta t))/theta) (L for theta = 0): a first integral of the exact flow for every alpha, "
    "theta (header of systems/time_perturbed_kepler.c); its drift measures a method's error in the damping",
};

static void derived(const double *p, double t, const double *q, const double *v, double *out) {
  const double L = q[0] * v[1] - q[1] * v[0], th = p[P_THETA];
  out[0] = L;
  out[1] = th == 0 ? L : L * exp(p[P_ALPHA] * (1 - cos(th * t)) / th);
}

/* init_ecc(e) of the notebook: q0 = (1 − e, 0), qdot0 = (0, √((1 + e)/(1 − e))). */
static const double q_e04[] = {0.6, 0}, v_e04[] = {0, 1.5275252316519468};
static const double q_e001[] = {0.99, 0}, v_e001[] = {0, 1.0100505037878156};
/* The notebook's init_ecc(e) as its cells run it: the pair is unpacked as (p0, q0), so q0 = (0,
 * √((1 + e)/(1 − e))) and qdot0 = (1 − e, 0), the apocentre of an orbit of eccentricity 0.450 and
 * a = 1.053 for e = 0.4 (0.01005, a = 1.000001 for e = 0.01), not e's orbit. */
static const double q_e04_run[] = {0, 1.5275252316519468}, v_e04_run[] = {0.6, 0};
static const double q_e001_run[] = {0, 1.0100505037878156}, v_e001_run[] = {0.99, 0};
#define AS_RUN(E) \
  "; the notebook's state as its cells run it: init_ecc(" E ") unpacked as (p0, q0), q0 = (0, sqrt((1+e)/(1-e))), " \
  "qdot0 = (1-e, 0) (The Time-Perturbed Kepler model.ipynb, contact-integrators 34b239e)"

static const nh_preset presets[] = {
    {"k5_30", "notebook figure K5-30: alpha = -0.07, theta = 2 pi, gamma = -1, e = 0.4 (notebook: h = 0.5, T = 40)",
     q_e04, v_e04, "alpha=-0.07,theta=6.283185307179586,gamma=-1"},
    {"pi_55", "notebook: alpha = -0.01, theta = pi, gamma = -1, e = 0.4 (notebook: h = 0.5, T = 55)", q_e04, v_e04,
     "alpha=-0.01,theta=3.141592653589793,gamma=-1"},
    {"scattering", "notebook 'convergence of scattering trajectories': alpha = 1.7, theta = 2 pi, gamma = -1, e = 0.01 "
     "(notebook: h = 0.1, 0.01, 0.001, T = 10)", q_e001, v_e001, "alpha=1.7,theta=6.283185307179586,gamma=-1"},
    {"small_ecc", "notebook 'small eccentricity': alpha = -0.07, theta = 2 pi, gamma = -1, e = 0.01 (notebook: "
     "h = 0.1 ... 1.1, T = 80)", q_e001, v_e001, "alpha=-0.07,theta=6.283185307179586,gamma=-1"},
    {"kepler", "unperturbed Kepler, alpha = 0, e = 0.4: energy and angular momentum conserved", q_e04, v_e04,
     "alpha=0,theta=6.283185307179586,gamma=-1"},
    {"k5_30_as_run", "notebook figure K5-30: alpha = -0.07, theta = 2 pi, gamma = -1 (notebook: h = 0.5, T = 40)"
     AS_RUN("0.4"), q_e04_run, v_e04_run, "alpha=-0.07,theta=6.283185307179586,gamma=-1"},
    {"pi_55_as_run", "notebook: alpha = -0.01, theta = pi, gamma = -1 (notebook: h = 0.5, T = 55)" AS_RUN("0.4"),
     q_e04_run, v_e04_run, "alpha=-0.01,theta=3.141592653589793,gamma=-1"},
    {"scattering_as_run", "notebook 'convergence of scattering trajectories': alpha = 1.7, theta = 2 pi, gamma = -1 "
     "(notebook: h = 0.1, 0.01, 0.001, T = 10)" AS_RUN("0.01"), q_e001_run, v_e001_run,
     "alpha=1.7,theta=6.283185307179586,gamma=-1"},
    {"small_ecc_as_run", "notebook 'small eccentricity': alpha = -0.07, theta = 2 pi, gamma = -1 (notebook: h = 0.1 "
     "... 1.1, T = 80)" AS_RUN("0.01"), q_e001_run, v_e001_run, "alpha=-0.07,theta=6.283185307179586,gamma=-1"},
};
_Static_assert(sizeof presets / sizeof *presets <= NH_MAX_PRESETS, "too many presets");

static const nh_system_forces forces = {
    .damping = damping,
    .time_dependence = time_dependence,
};

static const nh_system_knowledge knowledge = {
    NH_SYSTEM_DERIVED(derived_names, derived_docs, NULL, derived),
    NH_SYSTEM_PRESETS(presets),
    .sample_box = 1.5,
    .sampler_doc =
        "generic (spec/newmark.md 6 A10) without constraints: q uniform in [-1.5,1.5]^2 with V(q) < E - 0.1, "
        "qdot ~ N(0, I) rescaled to kinetic energy E - V(q)",
};

const nh_system_type nh_system_time_perturbed_kepler = {
    .name = "time_perturbed_kepler",
    .doc = "Time-perturbed Kepler problem qddot = gamma q/|q|^3 - alpha sin(theta t) qdot, q in R^2, M = I, "
           "V = gamma/|q| (Bravetti-Seri-Vermeeren-Zadra 2020, contact Hamiltonian |p|^2/2 + alpha sin(theta t) S + "
           "gamma/|q|; notebook 'The Time-Perturbed Kepler model'). Time-dependent damping; derived: the angular "
           "momentum and its scaled first integral L exp(alpha (1 - cos theta t)/theta).",
    .n = N,
    .k = 0,
    NH_SYSTEM_PARAMS(params),
    .q0 = q_e04,
    .v0 = v_e04,
    .ic_doc = "preset k5_30: pericentre of the e = 0.4 ellipse, q0 = (0.6, 0), qdot0 = (0, sqrt(1.4/0.6))",
    NH_SYSTEM_UNCONSTRAINED_MECHANICS,
    .forces = &forces,
    .knowledge = &knowledge,
};
