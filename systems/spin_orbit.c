/* The spin–orbit problem (issue 17) of A. Bravetti, M. Seri, M. Vermeeren, F. Zadra, "Numerical
 * integration in celestial mechanics: a case for contact geometry", Celest. Mech. Dyn. Astr. 132
 * (2020) 7, with the data of its reference code (github.com/mseri/contact-integrators, "The
 * Spin-Orbit problem.ipynb", class SpinOrbit): the spin angle θ = q of a satellite on a Keplerian
 * orbit of eccentricity e (time in units of the orbital mean motion), with a periodically varying
 * moment of inertia I(t) ∝ 1 + λ cos(Ωt) (Gkolias, Efthymiopoulos, Pucacco, Celletti 2017 [GEPC17]),
 * tidal torque −a and constant torque μ. The notebook's contact Hamiltonian
 *   H = p²/2 + f(t) S + V(q, t),   f(t) = −a − λΩ sin(Ωt)/(1 + λ cos(Ωt)),
 *   V(q, t) = −(ε/2)/(1 + λ cos(Ωt)) Σ_{k} c_k(e) cos(2q − k t) − μ q,
 * gives θ̈ = −V_q − f(t) θ̇ with V_q = (ε/(1 + λ cos Ωt)) Σ c_k sin(2q − kt) − μ. Here: n = 1, M = 1,
 * k = 0, the potential V(q) = −μq, the time-dependent potential W(q, t) = the cosine sum, and the
 * interface's damping α(t) = f(t) (negative while I(t) decreases, and −a for the tidal term).
 * f = d/dt log I(t) − a with I ∝ 1 + λ cos Ωt, so θ̈ = −W_q + μ − fθ̇ reads (Iθ̇)˙ = I(−W_q + μ + aθ̇)
 * [derived]: the notebook's a > 0 enters as α = −a < 0.
 * c_k(e) are the Cayley coefficients of the expansion of (a/r)³ cos 2(θ − ν) to O(e⁷) (A. Celletti,
 * "Analysis of resonances in the spin-orbit problem in celestial mechanics", ZAMP 41 (1990) [C90]),
 * k = −5, ..., 9 (no k = 0 term), as the notebook's table cayley_coefficients; c_2 = 1 − 5e²/2 + ...
 * is the synchronous 1:1 resonance θ ≈ t, θ̇ ≈ 1. ε = 3(B − A)/(2C) is the equatorial flattening
 * (notebook: 0.75 · 0.01). No first integral (time-dependent); no exact solution. */
#include <math.h>

#include "systems/system.h"

enum { N = 1 };
enum { P_ECC, P_EPS, P_OMEGA, P_LAMBDA, P_A, P_MU, P_COUNT };

static const nh_param_desc params[] = {
    [P_ECC] = {"ecc", NH_PARAM_REAL, 0.01, 0, 0.5,
               "orbital eccentricity e of the Cayley series (notebook: 0.01, 0.1, 0.2)", 0, NULL},
    [P_EPS] = {"eps", NH_PARAM_REAL, 0.0075, 0, 1, "flattening epsilon = 3(B - A)/(2C) (notebook: 0.75 * 0.01)", 0,
               NULL},
    [P_OMEGA] = {"omega", NH_PARAM_REAL, 1, 0, 1e3,
                 "angular frequency Omega of the moment of inertia (notebook: 1 resonant, sqrt 2)", 0, NULL},
    [P_LAMBDA] = {"lambda", NH_PARAM_REAL, 0.001, 0, 0.9,
                  "relative amplitude of I(t) ~ 1 + lambda cos(Omega t) (notebook: 0.001, 0.01, 0.1, 0.2)", 0, NULL},
    [P_A] = {"a", NH_PARAM_REAL, 0, -10, 10, "constant part of the damping: f(t) = -a - ... (notebook default 0)", 0,
             NULL},
    [P_MU] = {"mu", NH_PARAM_REAL, 0, -10, 10, "constant torque: V gains -mu q (notebook default 0)", 0, NULL},
};
_Static_assert(sizeof params / sizeof *params == P_COUNT, "params[] and the P_* enum disagree");

/* Cayley coefficients [C90], the notebook's table: CAYLEY[k − K_MIN][j] is the coefficient of e^j
 * in c_k(e). */
enum { K_MIN = -5, K_MAX = 9, NK = K_MAX - K_MIN + 1, NPOW = 8 };
static const double CAYLEY[NK][NPOW] = {
    [-5 - K_MIN] = {[7] = 15625. / 129024},
    [-4 - K_MIN] = {[6] = 4. / 45},
    [-3 - K_MIN] = {[5] = 81. / 1280, [7] = 81. / 2048},
    [-2 - K_MIN] = {[4] = 1. / 24, [6] = 7. / 240},
    [-1 - K_MIN] = {[3] = 1. / 48, [5] = 11. / 768, [7] = 313. / 30720},
    [1 - K_MIN] = {[1] = -1. / 2, [3] = 1. / 16, [5] = -5. / 384, [7] = -143. / 18432},
    [2 - K_MIN] = {[0] = 1, [2] = -5. / 2, [4] = 13. / 16, [6] = -35. / 288},
    [3 - K_MIN] = {[1] = 7. / 2, [3] = -123. / 16, [5] = 489. / 128, [7] = -1763. / 2048},
    [4 - K_MIN] = {[2] = 17. / 2, [4] = -115. / 6, [6] = 601. / 48},
    [5 - K_MIN] = {[3] = 845. / 48, [5] = -32525. / 768, [7] = 208225. / 6144},
    [6 - K_MIN] = {[4] = 533. / 16, [6] = -13827. / 160},
    [7 - K_MIN] = {[5] = 228347. / 3840, [7] = -3071075. / 18432},
    [8 - K_MIN] = {[6] = 73369. / 720},
    [9 - K_MIN] = {[7] = 12144273. / 71680},
};

/* c_k(e) by Horner's rule. */
static double cayley(int k, double e) {
  double c = 0;
  for (int j = NPOW - 1; j >= 0; j--) c = c * e + CAYLEY[k - K_MIN][j];
  return c;
}

/* The cosine and sine sums S_c = Σ c_k cos(2q − kt), S_s = Σ c_k sin(2q − kt), scaled by
 * ε/(1 + λ cos Ωt). */
static void sums(const double *p, double q, double t, double *Sc, double *Ss) {
  const double scale = p[P_EPS] / (1 + p[P_LAMBDA] * cos(p[P_OMEGA] * t));
  double c = 0, s = 0;
  for (int k = K_MIN; k <= K_MAX; k++) {
    const double ck = cayley(k, p[P_ECC]), arg = 2 * q - k * t;
    c += ck * cos(arg), s += ck * sin(arg);
  }
  *Sc = scale * c, *Ss = scale * s;
}

static void mass(const double *p NH_UNUSED, const double *q NH_UNUSED, double *M) { M[0] = 1; }

/* The time-independent part −μq. */
static double potential(const double *p, const double *q) { return -p[P_MU] * q[0]; }

static void grad_potential(const double *p, const double *q NH_UNUSED, double *g) { g[0] = -p[P_MU]; }

static void hess_potential(const double *p NH_UNUSED, const double *q NH_UNUSED, double *H) { H[0] = 0; }

/* W = −½ S_c, W_q = S_s, W_qq = 2 S_c (the sums above, scaled). */
static double time_potential(const double *p, const double *q, double t) {
  double Sc, Ss;
  sums(p, q[0], t, &Sc, &Ss);
  return -0.5 * Sc;
}

static void grad_time_potential(const double *p, const double *q, double t, double *g) {
  double Sc;
  sums(p, q[0], t, &Sc, g);
}

static void hess_time_potential(const double *p, const double *q, double t, double *H) {
  double Ss;
  sums(p, q[0], t, H, &Ss);
  H[0] *= 2;
}

/* f(t) = −a − λΩ sin(Ωt)/(1 + λ cos(Ωt)) (notebook SpinOrbit.f). */
static double damping(const double *p, double t) {
  const double W = p[P_OMEGA], l = p[P_LAMBDA];
  return -p[P_A] - l * W * sin(W * t) / (1 + l * cos(W * t));
}

static unsigned time_dependence(const double *p) {
  return NH_SYS_TIME_POTENTIAL | (p[P_LAMBDA] != 0 && p[P_OMEGA] != 0 ? NH_SYS_TIME_DAMPING : 0);
}

/* One initial condition (thetadot0, theta0) of each of the notebook's phase portraits c-fig1a–d
 * (ecc = 0.01, eps = 0.0075, Omega = 1, h = pi/10, 600 points at t = 2 pi k), and of its
 * non-resonant one (Omega = sqrt 2, ecc = 0.1). */
static const double q_zero[] = {0}, q_pi[] = {3.141592653589793};
static const double v_1[] = {1.0}, v_098[] = {0.98}, v_09[] = {0.9}, v_081[] = {0.81};

#define FIG(L) "ecc=0.01,eps=0.0075,omega=1,a=0,mu=0,lambda=" L
#define FIG_DOC(F, L, V) \
  "notebook figure c-fig1" F ": lambda = " L ", (theta0, thetadot0) = (0, " V "), ecc = 0.01, eps = 0.0075, " \
  "Omega = 1 (notebook: h = pi/10, points at t = 2 pi k, k < 600)"

static const nh_preset presets[] = {
    {"fig1a", FIG_DOC("a", "0.001", "1.0"), q_zero, v_1, FIG("0.001")},
    {"fig1b", FIG_DOC("b", "0.01", "0.98"), q_zero, v_098, FIG("0.01")},
    {"fig1c", FIG_DOC("c", "0.1", "0.9"), q_zero, v_09, FIG("0.1")},
    {"fig1d", FIG_DOC("d", "0.2", "0.81"), q_zero, v_081, FIG("0.2")},
    {"nonresonant", "notebook's non-resonant case: Omega = sqrt 2, ecc = 0.1, lambda = 0.01, (theta0, thetadot0) = "
     "(pi, 1) (notebook: 1500 points at t = 2 pi k)", q_pi, v_1,
     "ecc=0.1,eps=0.0075,omega=1.4142135623730951,a=0,mu=0,lambda=0.01"},
    {"fig5b", "the notebook's figure c-fig5b (The Spin-Orbit problem.ipynb, contact-integrators 34b239e): "
     "SpinOrbit(0.06, 3/4 0.06, sqrt 2, 0.2): ecc = 0.06, eps = 0.045, Omega = sqrt 2, lambda = 0.2, (theta0, "
     "thetadot0) = (pi, 1) (notebook: ic.step, h = pi/10, 3000 points at t = 2 pi k)", q_pi, v_1,
     "ecc=0.06,eps=0.045,omega=1.4142135623730951,a=0,mu=0,lambda=0.2"},
};
_Static_assert(sizeof presets / sizeof *presets <= NH_MAX_PRESETS, "too many presets");

static const nh_time_potential time_potential_table = {
    .value = time_potential,
    .gradient = grad_time_potential,
    .hessian = hess_time_potential,
};

static const nh_system_forces forces = {
    .damping = damping,
    .potential = &time_potential_table,
    .time_dependence = time_dependence,
};

static const nh_system_knowledge knowledge = {
    NH_SYSTEM_PRESETS(presets),
    .sample_box = 3.141592653589793,
    .sampler_doc = "generic (spec/newmark.md 6 A10) without constraints: theta uniform in [-pi, pi] with V(theta) < "
                   "E - 0.1 (V = -mu theta, without the time-dependent W), thetadot = +-sqrt(2(E - V))",
};

const nh_system_type nh_system_spin_orbit = {
    .name = "spin_orbit",
    .doc = "Spin-orbit problem thetaddot = -W_q(theta, t) + mu - f(t) thetadot with the Cayley series to e^7 "
           "(Bravetti-Seri-Vermeeren-Zadra 2020, notebook 'The Spin-Orbit problem'; Celletti 1990; Gkolias et al. "
           "2017): W = -(eps/2)/(1 + lambda cos Omega t) sum_k c_k(e) cos(2 theta - k t), f(t) = -a - lambda Omega "
           "sin(Omega t)/(1 + lambda cos Omega t). n = 1, k = 0, M = 1; time-dependent potential and damping.",
    .n = N,
    .k = 0,
    NH_SYSTEM_PARAMS(params),
    .q0 = q_zero,
    .v0 = v_1,
    .ic_doc = "preset fig1a: theta0 = 0, thetadot0 = 1 (the 1:1 resonance) with lambda = 0.001",
    NH_SYSTEM_UNCONSTRAINED_MECHANICS,
    .forces = &forces,
    .knowledge = &knowledge,
};
