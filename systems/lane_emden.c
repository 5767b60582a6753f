/* The Lane–Emden equation as a damped oscillator with time-dependent damping (issue 17):
 *   (1/s²) d/ds(s² dx/ds) + xⁿ = 0,  i.e.  ẍ + (2/s) ẋ + xⁿ = 0,
 * q = (x), M = 1, V = x^{n+1}/(n+1), k = 0, damping α(s) = f(s) = 2/s: the contact Hamiltonian
 * H = p²/2 + f(s) S + V(q) of A. Bravetti, M. Seri, M. Vermeeren, F. Zadra, "Numerical integration
 * in celestial mechanics: a case for contact geometry", Celest. Mech. Dyn. Astr. 132 (2020) 7, as
 * its reference code (github.com/mseri/contact-integrators, "The Lane-Emden Model.ipynb", class
 * LaneEmden: f(t) = 2/t, V = q^{n+1}/(n+1), V_q = qⁿ) sets it up; n = 0, ..., 9 there.
 *
 * Time origin. The notebook starts at s = 0 from (x, ẋ) = (1, 0), where f = 2/s is singular; its
 * `step` never evaluates f there (it takes f at s + h/2), but rk4, the reference ODE solver and any
 * method that evaluates α at a step's start would. The state's time t is shifted: the physical time
 * is s = t + t0 (parameter t0 ≥ 0), α(t) = 2/(t + t0), and the presets start at t = 0, i.e. s = t0,
 * on the notebook's solution through (1, 0) at s = 0 (the classical θ_n(0) = 1, θ_n'(0) = 0). With
 * t0 = 0 the start is the notebook's: α(0) = inf, and only methods that take α at t_j + h/2
 * (contact2 and its compositions) apply (nh_method_applies; issue 46 item 5); the truth must then be
 * exact (a study refuses the rk8pd reference there). The regular solutions through s = 0 have
 * ẋ(0) = 0, and the closed forms below cover them for n = 0, 1, 5.
 *
 * Exact solutions [derived; the three classical closed forms are Chandrasekhar, "An Introduction to
 * the Study of Stellar Structure" (1939), Ch. IV], from (x0, ẋ0) at s0:
 *   n = 0: x = C − s²/6 + D/s (the notebook's 1 − s²/6 for C = 1, D = 0): D = −s0²(ẋ0 + s0/3),
 *          C = x0 + s0²/6 − D/s0.
 *   n = 1: u = s x solves ü = s ẍ + 2ẋ = −u, so u = u0 cos(s − s0) + u̇0 sin(s − s0) with u0 = s0 x0,
 *          u̇0 = x0 + s0 ẋ0; x = u/s, ẋ = (u̇ − x)/s (the notebook's sin s/s for u0 = sin s0, ...).
 *   From s0 = 0 (ẋ0 = 0 required): x = x0 − s²/6, x0 sin(s)/s, and n = 5's family with A = x0.
 *   n = 5: only the homology family x = A w^{−1/2}, w = 1 + A⁴s²/3 (A = 1: the notebook's
 *          (1 + s²/3)^{−1/2}; φ(s) = Aθ(A²s) solves the equation whenever θ does, and −x too). A state
 *          is on it iff c = A⁴s0²/3 = −r/(1 + r) ≥ 0 with r = s0ẋ0/x0 (from ẋ/x = −(A⁴s/3)/w) and
 *          x0 = A(1 + c)^{−1/2}; exact() declines (−1: the reference takes over) any other state and
 *          every other n.
 * Energy ½ẋ² + V decays as d/ds(½ẋ² + V) = −(2/s)ẋ² (no first integral is known for general n). */
#include <math.h>

#include "systems/system.h"

enum { N = 1 };
enum { P_N, P_T0, P_COUNT };

static const nh_param_desc params[] = {
    [P_N] = {"n", NH_PARAM_INT, 1, 0, 9, "polytropic index: V = x^(n+1)/(n+1) (notebook: 0, ..., 9; exact for 0, 1, 5)",
             0, NULL},
    [P_T0] = {"t0", NH_PARAM_REAL, 1, 0, 1e3,
              "physical time s = t + t0 of the state's t = 0 (s = 0 is singular: alpha = 2/s; t0 = 0, the "
              "notebook's start, admits only methods that take alpha at t_j + h/2, e.g. contact2)", 0, NULL},
};
_Static_assert(sizeof params / sizeof *params == P_COUNT, "params[] and the P_* enum disagree");

static void mass(const double *p NH_UNUSED, const double *q NH_UNUSED, double *M) { M[0] = 1; }

/* xⁿ for the integer n of the parameter (pow is exact enough and defined for x < 0 at integer n). */
static double power(double x, double n) { return n == 0 ? 1 : pow(x, n); }

static double potential(const double *p, const double *q) {
  return power(q[0], p[P_N] + 1) / (p[P_N] + 1);
}

static void grad_potential(const double *p, const double *q, double *g) { g[0] = power(q[0], p[P_N]); }

static void hess_potential(const double *p, const double *q, double *H) {
  H[0] = p[P_N] == 0 ? 0 : p[P_N] * power(q[0], p[P_N] - 1);
}

/* f(s) = 2/s at s = t + t0 (notebook: f(t) = 2/t). */
static double damping(const double *p, double t) { return 2 / (t + p[P_T0]); }

static unsigned time_dependence(const double *p NH_UNUSED) { return NH_SYS_TIME_DAMPING; }

/* The closed forms through (x0, 0) at s0 = 0 (the header): the regular solutions there. */
static int closed_form_from_origin(double n, double x0, double v0, double s, double *x, double *v) {
  if (v0 != 0) return -1; /* ẋ(0) ≠ 0: no solution is regular at s = 0 */
  if (n == 0) {
    *x = x0 - s * s / 6;
    *v = -s / 3;
    return 0;
  }
  if (n == 1) {
    *x = s == 0 ? x0 : x0 * sin(s) / s;
    *v = s == 0 ? 0 : x0 * (s * cos(s) - sin(s)) / (s * s);
    return 0;
  }
  if (n == 5) {
    const double A4 = x0 * x0 * x0 * x0, w = 1 + A4 * s * s / 3;
    *x = x0 / sqrt(w);
    *v = -x0 * A4 * s / 3 / (w * sqrt(w));
    return 0;
  }
  return -1;
}

/* The closed forms of the header at s from (x0, v0) at s0; -1 where none applies. */
static int closed_form(double n, double s0, double x0, double v0, double s, double *x, double *v) {
  if (s0 == 0) return closed_form_from_origin(n, x0, v0, s, x, v);
  if (s == 0) return -1; /* the solutions from s0 > 0 are singular at s = 0 but for the regular ones */
  if (n == 0) {
    const double D = -s0 * s0 * (v0 + s0 / 3), C = x0 + s0 * s0 / 6 - D / s0;
    *x = C - s * s / 6 + D / s;
    *v = -s / 3 - D / (s * s);
    return 0;
  }
  if (n == 1) {
    const double u0 = s0 * x0, du0 = x0 + s0 * v0, c = cos(s - s0), sn = sin(s - s0);
    const double u = u0 * c + du0 * sn, du = du0 * c - u0 * sn;
    *x = u / s;
    *v = (du - *x) / s;
    return 0;
  }
  if (n == 5) {
    if (x0 == 0) {
      if (v0 != 0) return -1;
      *x = *v = 0; /* the trivial solution, A = 0 */
      return 0;
    }
    const double r = s0 * v0 / x0;
    if (!(r > -1 && r <= 0)) return -1;
    const double c = -r / (1 + r), A4 = 3 * c / (s0 * s0), A = copysign(pow(A4, 0.25), x0);
    if (fabs(A / sqrt(1 + c) - x0) > 1e-12 * fabs(x0)) return -1; /* not on the family */
    const double w = 1 + A4 * s * s / 3;
    *x = A / sqrt(w);
    *v = -A * A4 * s / 3 / (w * sqrt(w));
    return 0;
  }
  return -1;
}

static int exact(const double *p, const nh_state *x0, double t, nh_state *x) {
  double q, v;
  if (closed_form(p[P_N], x0->t + p[P_T0], x0->q[0], x0->v[0], t + p[P_T0], &q, &v) != 0) return -1;
  *x = *x0;
  x->t = t;
  x->q[0] = q;
  x->v[0] = v;
  return 0;
}

/* The notebook's solutions through (x, ẋ) = (1, 0) at s = 0, taken at s = t0 = 1 (the default):
 * n = 0: (1 − 1/6, −1/3); n = 1: (sin 1, cos 1 − sin 1); n = 5: ((4/3)^{−1/2}, −(1/3)(4/3)^{−3/2}).
 * tests/systems/test_time_dependent.c checks them against these formulas. */
static const double q_n0[] = {0.8333333333333334}, v_n0[] = {-0.3333333333333333};
static const double q_n1[] = {0.8414709848078965}, v_n1[] = {-0.30116867893975674};
static const double q_n5[] = {0.8660254037844387}, v_n5[] = {-0.21650635094610965};
static const double q_origin[] = {1}, v_origin[] = {0}; /* the notebook's start, at s = t0 = 0 */

#define LE_DOC(N, X, T)                                                                                              \
  "Lane-Emden n = " N " on the notebook's solution " X " through (1, 0) at s = 0, started at s = t0 = 1 "          \
  "(notebook: " T ")"

#define LE_ORIGIN_DOC(N, X, T)                                                                                       \
  "Lane-Emden n = " N ", the notebook's own start: (x, xdot) = (1, 0) at s = t0 = 0, solution " X ", where "       \
  "alpha = 2/s is singular: only contact2 and its compositions run from it (notebook: " T ")"

static const nh_preset presets[] = {
    {"n0", LE_DOC("0", "1 - s^2/6", "h = 0.2, T = 150"), q_n0, v_n0, "n=0,t0=1"},
    {"n1", LE_DOC("1", "sin(s)/s", "h = 0.001, T = 10"), q_n1, v_n1, "n=1,t0=1"},
    {"n5", LE_DOC("5", "(1 + s^2/3)^(-1/2)", "h = 0.2, T = 150"), q_n5, v_n5, "n=5,t0=1"},
    {"n0_origin", LE_ORIGIN_DOC("0", "1 - s^2/6", "h = 0.2, T = 150"), q_origin, v_origin, "n=0,t0=0"},
    {"n1_origin", LE_ORIGIN_DOC("1", "sin(s)/s", "h = 0.001, T = 10"), q_origin, v_origin, "n=1,t0=0"},
    {"n5_origin", LE_ORIGIN_DOC("5", "(1 + s^2/3)^(-1/2)", "h = 0.2, T = 150"), q_origin, v_origin, "n=5,t0=0"},
};
_Static_assert(sizeof presets / sizeof *presets <= NH_MAX_PRESETS, "too many presets");

static const nh_system_forces forces = {
    .damping = damping,
    .time_dependence = time_dependence,
};

static const nh_system_knowledge knowledge = {
    .exact = exact,
    NH_SYSTEM_PRESETS(presets),
    .sample_box = 1,
    .sampler_doc = "generic (spec/newmark.md 6 A10) without constraints: x uniform in [-1,1] with V(x) < E - 0.1, "
                   "xdot = +-sqrt(2(E - V(x)))",
};

const nh_system_type nh_system_lane_emden = {
    .name = "lane_emden",
    .doc = "Lane-Emden equation xddot + (2/s) xdot + x^n = 0, s = t + t0, as a contact system with time-dependent "
           "damping alpha(t) = 2/(t + t0) (Bravetti-Seri-Vermeeren-Zadra 2020, contact-integrators notebook "
           "'The Lane-Emden Model'), k = 0, M = 1, V = x^(n+1)/(n+1). Exact solution for n = 0 and 1 (every state) "
           "and n = 5 (the homology family (1 + A^4 s^2/3)^(-1/2) A); else the reference.",
    .n = N,
    .k = 0,
    NH_SYSTEM_PARAMS(params),
    .q0 = q_n1,
    .v0 = v_n1,
    .ic_doc = "preset n1: sin(s)/s at s = t0 = 1, x0 = sin 1, xdot0 = cos 1 - sin 1",
    NH_SYSTEM_UNCONSTRAINED_MECHANICS,
    .forces = &forces,
    .knowledge = &knowledge,
};
