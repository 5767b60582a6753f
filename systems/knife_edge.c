/* The knife edge on an inclined plane (spec/rattle.md §4 A): q = (x, y, θ), x down the slope,
 *   M = diag(m, m, J),   V = −m g sin α · x,   constraint ẋ sin θ − ẏ cos θ = 0, μ = (sin θ, −cos θ, 0).
 * The blade moves along (cos θ, sin θ) with speed s = ẋ cos θ + ẏ sin θ; θ̇ = ω is constant, so the
 * motion has a closed form, and p_θ = Jω is a horizontal-symmetry momentum map (∂_θ ∈ D). */
#include <math.h>
#include <string.h>

#include "systems/lane_kernels.h"

enum { X, Y, TH, N = 3 };
enum { P_M, P_J, P_G, P_ALPHA, P_COUNT };

static const nh_param_desc params[] = {
    [P_M] = {"m", NH_PARAM_REAL, 1, 1e-6, 1e6, "mass", 0},
    [P_J] = {"J", NH_PARAM_REAL, 1, 1e-6, 1e6, "moment of inertia about the vertical axis", 0},
    [P_G] = {"g", NH_PARAM_REAL, 2, 0, 1e3, "gravitational acceleration (g sin alpha = 1 with the defaults)", 0},
    [P_ALPHA] = {"alpha", NH_PARAM_REAL, 0.5235987755982988, -1.5707963267948966, 1.5707963267948966,
     "inclination of the plane in radians (default pi/6)", 0},
};
_Static_assert(sizeof params / sizeof *params == P_COUNT, "params[] and the P_* enum disagree");

/* Acceleration down the slope, g sin α. */
static double slope_gravity(const double *p) { return p[P_G] * sin(p[P_ALPHA]); }

static void mass(const double *p, const double *q NH_UNUSED, double *M) {
  memset(M, 0, N * N * sizeof *M);
  M[X * N + X] = M[Y * N + Y] = p[P_M];
  M[TH * N + TH] = p[P_J];
}

static double potential(const double *p, const double *q) { return -p[P_M] * slope_gravity(p) * q[X]; }

/* The formulas, written once for the scalar functions and the lane kernels, on the parameters and
 * sin θ, cos θ, which the caller takes (per lane in the lane kernels: a vector libm rounds
 * otherwise); the matrices with every entry. ∇V = (−m g sin α, 0, 0) is constant, ∇²V = 0. */
static inline NH_LANES_INLINE nh_vec3 gradient_at(double m, double G) { return (nh_vec3){-m * G, 0, 0}; }

static inline NH_LANES_INLINE nh_vec3 constraints_at(double sin_th, double cos_th) {
  return (nh_vec3){sin_th, -cos_th, 0};
}

static inline NH_LANES_INLINE nh_mat3 jacobian_at(double sin_th, double cos_th) {
  return (nh_mat3){{0, 0, cos_th}, {0, 0, sin_th}, {0, 0, 0}}; /* ∂μ_x/∂θ, ∂μ_y/∂θ */
}

static void grad_potential(const double *p, const double *q NH_UNUSED, double *g) {
  nh_store3(g, 1, 0, gradient_at(p[P_M], slope_gravity(p)));
}

static void hess_potential(const double *p NH_UNUSED, const double *q NH_UNUSED, double *H) {
  memset(H, 0, N * N * sizeof *H);
}

static void constraints(const double *p NH_UNUSED, const double *q, double *A) {
  nh_store3(A, 1, 0, constraints_at(sin(q[TH]), cos(q[TH])));
}

static void constraints_jacobian(const double *p NH_UNUSED, const double *q, double *dA) {
  nh_store_mat3(dA, 1, 0, jacobian_at(sin(q[TH]), cos(q[TH])));
}

/* ---- the same on NH_LANES points (core/lanes.h) -------------------------------------------------- */

/* ∇V and ∇²V do not depend on q: every lane's is the scalar one. */
static void grad_of_lanes(const double *p, const double *q NH_UNUSED, double *g) {
  const nh_vec3 g0 = gradient_at(p[P_M], slope_gravity(p));
  for (int l = 0; l < NH_LANES; l++) nh_store3(g, NH_LANES, l, g0);
}

static void hess_of_lanes(const double *p NH_UNUSED, const double *q NH_UNUSED, double *H) {
  memset(H, 0, N * N * NH_LANES * sizeof *H);
}

/* The kernels below take sin θ and cos θ lane by lane (nh_lane_map, as the scalar functions call
 * them), then run the arithmetic as one vectorized lane loop. */
typedef struct {
  double s[NH_LANES], c[NH_LANES];
} trig_lanes;

/* sin θ and cos θ keep their last values (nh_lane_map_memo): A, DA and the residual at one point
 * take them once. */
static _Thread_local nh_lane_memo sin_memo = {.f = sin}, cos_memo = {.f = cos};

static trig_lanes trig_of(const double *q) {
  trig_lanes t;
  nh_lane_map_memo(&sin_memo, q + TH * NH_LANES, t.s), nh_lane_map_memo(&cos_memo, q + TH * NH_LANES, t.c);
  return t;
}

static inline NH_LANES_INLINE void constraints_lanes_lanes(const double *s, const double *c, double *A) {
#pragma omp simd
  for (int l = 0; l < NH_LANES; l++) nh_store3(A, NH_LANES, l, constraints_at(s[l], c[l]));
}
NH_LANES_ISA_VARIANTS(constraints_lanes, (const double *s, const double *c, double *A), (s, c, A))

static void constraints_of_lanes(const double *p NH_UNUSED, const double *q, double *A) {
  const trig_lanes t = trig_of(q);
  constraints_lanes(t.s, t.c, A);
}

static inline NH_LANES_INLINE void jacobian_lanes_lanes(const double *s, const double *c, double *dA) {
#pragma omp simd
  for (int l = 0; l < NH_LANES; l++) nh_store_mat3(dA, NH_LANES, l, jacobian_at(s[l], c[l]));
}
NH_LANES_ISA_VARIANTS(jacobian_lanes, (const double *s, const double *c, double *dA), (s, c, dA))

static void jacobian_of_lanes(const double *p NH_UNUSED, const double *q, double *dA) {
  const trig_lanes t = trig_of(q);
  jacobian_lanes(t.s, t.c, dA);
}

static inline NH_LANES_INLINE void residual_lanes_lanes(const double *s, const double *c, const double *v,
                                                        double *out) {
#pragma omp simd
  for (int l = 0; l < NH_LANES; l++) out[l] = nh_residual_one3(constraints_at(s[l], c[l]), nh_load3(v, NH_LANES, l));
}
NH_LANES_ISA_VARIANTS(residual_lanes, (const double *s, const double *c, const double *v, double *out), (s, c, v, out))

static void residual_of_lanes(const double *p NH_UNUSED, const double *q, const double *v, double *out) {
  const trig_lanes t = trig_of(q);
  residual_lanes(t.s, t.c, v, out);
}

/* nh_acceleration's generic path (constant M, one constraint; systems/lane_kernels.h) on every lane,
 * with M⁻¹ as nh_system_init caches it (Minv NULL: M = I, the default m = J = 1), written as two
 * loops so that each inlines its Minv as a constant. */
static inline NH_LANES_INLINE void acceleration_lanes_lanes(const double *Minv, nh_vec3 g, const double *s,
                                                            const double *c, const double *v, double *a, double *lambda,
                                                            int *status) {
  double gram[NH_LANES];
  if (!Minv) {
#pragma omp simd
    for (int l = 0; l < NH_LANES; l++) {
      const nh_acceleration3 r =
          nh_acceleration_one3(NULL, g, constraints_at(s[l], c[l]), jacobian_at(s[l], c[l]), nh_load3(v, NH_LANES, l));
      nh_store3(a, NH_LANES, l, r.a);
      lambda[l] = r.lambda, gram[l] = r.gram;
    }
    nh_lane_gram_status(gram, status);
    return;
  }
#pragma omp simd
  for (int l = 0; l < NH_LANES; l++) {
    const nh_acceleration3 r =
        nh_acceleration_one3(Minv, g, constraints_at(s[l], c[l]), jacobian_at(s[l], c[l]), nh_load3(v, NH_LANES, l));
    nh_store3(a, NH_LANES, l, r.a);
    lambda[l] = r.lambda, gram[l] = r.gram;
  }
  nh_lane_gram_status(gram, status);
}
NH_LANES_ISA_VARIANTS(acceleration_lanes,
                      (const double *Minv, nh_vec3 g, const double *s, const double *c, const double *v, double *a,
                       double *lambda, int *status),
                      (Minv, g, s, c, v, a, lambda, status))

static void acceleration_of_lanes(const double *p, const double *t NH_UNUSED, const double *q, const double *v,
                                  double *a, double *lambda, int *status) {
  double Minv[N * N];
  const int unit = nh_lane_mass_inverse(mass, p, Minv);
  const trig_lanes tr = trig_of(q);
  acceleration_lanes(unit ? NULL : Minv, gradient_at(p[P_M], slope_gravity(p)), tr.s, tr.c, v, a, lambda, status);
}

static const nh_system_kernels kernels = {
    .acceleration_lanes = acceleration_of_lanes,
    .constraint_residual_lanes = residual_of_lanes,
    .grad_potential_lanes = grad_of_lanes,
    .constraints_lanes = constraints_of_lanes,
    .hess_potential_lanes = hess_of_lanes,
    .constraints_jacobian_lanes = jacobian_of_lanes,
};

static double sinc(double u) { return u == 0 ? 1 : sin(u) / u; }

/* (w − sin w)/w², by its series for small |w| where the difference cancels. */
static double one_minus_sinc_over_w(double w) {
  if (fabs(w) >= 0.5) return (w - sin(w)) / (w * w);
  double term = w / 6, sum = 0, w2 = w * w;
  for (int k = 1; k < 12; k++) {
    sum += term;
    term *= -w2 / ((2.0 * k + 2) * (2.0 * k + 3));
  }
  return sum;
}

/* Closed form of spec/rattle.md §4 A with G = g sin α, θ = θ0 + ωτ:
 *   s = s0 + G (sin θ − sin θ0)/ω,
 *   x = x0 + A (sin θ − sin θ0)/ω + G (sin²θ − sin²θ0)/(2ω),
 *   y = y0 + A (cos θ0 − cos θ)/ω + G [τ/2 − (sin 2θ − sin 2θ0)/(4ω)],   A = s0 − G sin θ0,
 * rewritten without the 1/ω cancellations (and valid at ω = 0), with u = ωτ/2, c = θ0 + u:
 *   S = (sin θ − sin θ0)/ω = τ cos c sinc u,   C = (cos θ0 − cos θ)/ω = τ sin c sinc u,
 *   x = x0 + s0 S + (G/2) S²,
 *   y = y0 + s0 C + G τ² [(2u − sin 2u)/(2(2u)²) + sin(2c) sinc²(u)/4].
 * Declines (−1) a start off D, where the blade speed s0 does not describe the velocity. */
static int exact(const double *p, const nh_state *x0, double t, nh_state *x) {
  const double th0 = x0->q[TH], w = x0->v[TH], tau = t - x0->t, G = slope_gravity(p);
  if (fabs(x0->v[X] * sin(th0) - x0->v[Y] * cos(th0)) > 1e-12) return -1;
  const double s0 = x0->v[X] * cos(th0) + x0->v[Y] * sin(th0);
  const double u = 0.5 * w * tau, c = th0 + u, sc = sinc(u);
  const double S = tau * cos(c) * sc, C = tau * sin(c) * sc;
  const double th = th0 + w * tau, s = s0 + G * S;
  *x = *x0;
  x->t = t;
  x->q[X] = x0->q[X] + s0 * S + 0.5 * G * S * S;
  x->q[Y] = x0->q[Y] + s0 * C + G * tau * tau * (0.5 * one_minus_sinc_over_w(2 * u) + 0.25 * sin(2 * c) * sc * sc);
  x->q[TH] = th;
  x->v[X] = s * cos(th);
  x->v[Y] = s * sin(th);
  x->v[TH] = w;
  return 0;
}

static const char *const invariant_names[] = {"p_theta"};

/* p_θ = J θ̇: ∂_θ is a horizontal symmetry (μ·e_θ = 0, L independent of θ). */
static void invariants(const double *p, const double *q NH_UNUSED, const double *v, double *out) {
  out[0] = p[P_J] * v[TH];
}

/* spec/rattle.md §4 A: ω = 1, x0 = y0 = 0; IC-1 θ0 = s0 = 0 (λ(0) = 0), IC-2 θ0 = 0.3, s0 = 0.5,
 * v0 = s0 (cos θ0, sin θ0, ·) = (0.5 cos 0.3, 0.5 sin 0.3, 1). */
static const double q_ic1[] = {0, 0, 0};
static const double v_ic1[] = {0, 0, 1};
static const double q_ic2[] = {0, 0, 0.3};
static const double v_ic2[] = {0.477668244562803, 0.14776010333066977, 1};

static const nh_preset presets[] = {
    {"ic1", "spec/rattle.md 4 A IC-1: theta0 = 0, s0 = 0, omega = 1 (lambda(0) = 0), H0 = 0.5", q_ic1, v_ic1, ""},
    {"ic2", "spec/rattle.md 4 A IC-2: theta0 = 0.3, s0 = 0.5, omega = 1, H0 = 0.625, lambda(0) = 0.795520 in "
            "the spec's sign (ours: -0.795520, force +A^T lambda)",
     q_ic2, v_ic2, ""},
};

static const nh_system_knowledge knowledge = {
    .exact = exact,
    NH_SYSTEM_INVARIANTS(invariant_names, invariants),
    NH_SYSTEM_PRESETS(presets),
    .sample_box = 1,
    .sampler_doc = "generic (spec/newmark.md 6 A10): q uniform in [-1,1]^3 with V(q) = -m g sin(alpha) x < E - 0.1, "
                   "v ~ N(0, I) projected M-orthogonally on D (M = diag(m, m, J)) and rescaled to kinetic energy "
                   "E - V(q)",
};

const nh_system_type nh_system_knife_edge = {
    .name = "knife_edge",
    .doc = "Knife edge on an inclined plane: q = (x, y, theta), M = diag(m, m, J), V = -m g sin(alpha) x, "
           "constraint xdot sin(theta) - ydot cos(theta) = 0 (spec/rattle.md 4 A). Exact solution; "
           "invariant p_theta = J thetadot.",
    .n = N,
    .k = 1,
    NH_SYSTEM_PARAMS(params),
    .q0 = q_ic2,
    .v0 = v_ic2,
    .ic_doc = "preset ic2: q0 = (0, 0, 0.3), v0 = (0.5 cos 0.3, 0.5 sin 0.3, 1), H0 = 0.625 (spec/rattle.md 4 A IC-2)",
    NH_SYSTEM_MECHANICS,
    .kernels = &kernels,
    .knowledge = &knowledge,
};
