/* Rolling falling disk, damped and forced (spec/herglotz.md §3.2; paper eqs (4.8)-(4.12), after
 * Paris & Zhang). q = (X, Y, θ, ϕ, ψ): contact-point projection of the centre, tilt (0 upright),
 * heading, spin. Thin homogeneous disk: I_A = ½ m R², I_T = ¼ m R².
 *   L = ½m[Ẋ² + Ẏ² + R² sin²θ θ̇²] + ½[I_A (ψ̇ − ϕ̇ sinθ)² + I_T (θ̇² + ϕ̇² cos²θ)] − m g R cosθ   (4.10)
 * with the rolling constraints (4.11) as A(q) q̇ = 0, mass-proportional damping −α M(q) q̇ (the
 * Herglotz term −αz, §2.1) and the generalized force F(t) (4.12):
 *   F_ψ = F_psi_const + F_psi_slope t,  F_ϕ = F_phi_slope t,  F_X = F_Y = F_θ = 0,
 * which covers Exp 1 (F_ψ = 12) and Exp 3 (F_ψ = F_ϕ = t/16). The Euler-angle chart is singular
 * at θ = ±π/2 (the fully fallen disk). */
#include <math.h>
#include <string.h>

#include "systems/system.h"

enum { IX, IY, ITH, IPHI, IPSI, N = 5 };
enum { P_M, P_R, P_G, P_ALPHA, P_FPSI, P_FPSI_SLOPE, P_FPHI_SLOPE, P_COUNT };

static const nh_param_desc params[] = {
    [P_M] = {"m", NH_PARAM_REAL, 5, 1e-6, 1e6, "disk mass [kg] (paper: 5)", 0},
    [P_R] = {"R", NH_PARAM_REAL, 0.5, 1e-6, 1e3, "disk radius [m] (paper: 0.5); I_A = m R^2/2, I_T = m R^2/4", 0},
    [P_G] = {"g", NH_PARAM_REAL, 9.81, 0, 1e3, "gravity [m/s^2] (paper: 9.81)", 0},
    [P_ALPHA] = {"alpha", NH_PARAM_REAL, 0, 0, 10, "damping alpha, force -alpha M(q) qdot (paper: 0, 0.005, 0.1)", 0},
    [P_FPSI] = {"F_psi_const", NH_PARAM_REAL, 0, -1e6, 1e6, "constant part of the torque F_psi [N m] (Exp 1: 12)", 0},
    [P_FPSI_SLOPE] = {"F_psi_slope", NH_PARAM_REAL, 0, -1e6, 1e6,
     "F_psi grows by this per second [N m/s] (Exp 3: 1/16)", 0},
    [P_FPHI_SLOPE] = {"F_phi_slope", NH_PARAM_REAL, 0, -1e6, 1e6, "F_phi = F_phi_slope t [N m] (Exp 3: 1/16)", 0},
};
_Static_assert(sizeof params / sizeof *params == P_COUNT, "params[] and the P_* enum disagree");

static double inertia_axial(const double *p) { return 0.5 * p[P_M] * p[P_R] * p[P_R]; }
static double inertia_transverse(const double *p) { return 0.25 * p[P_M] * p[P_R] * p[P_R]; }

/* M(q) from (4.10); it depends on θ only. */
static void mass(const double *p, const double *q, double *M) {
  const double m = p[P_M], R = p[P_R], IA = inertia_axial(p), IT = inertia_transverse(p);
  const double s = sin(q[ITH]), c = cos(q[ITH]);
  memset(M, 0, sizeof(double) * N * N);
  M[IX * N + IX] = M[IY * N + IY] = m;
  M[ITH * N + ITH] = m * R * R * s * s + IT;
  M[IPHI * N + IPHI] = IA * s * s + IT * c * c;
  M[IPHI * N + IPSI] = M[IPSI * N + IPHI] = -IA * s;
  M[IPSI * N + IPSI] = IA;
}

/* dM[(i*N + j)*N + l] = ∂M_ij/∂q^l: only l = θ is nonzero. */
static void mass_jacobian(const double *p, const double *q, double *dM) {
  const double m = p[P_M], R = p[P_R], IA = inertia_axial(p), IT = inertia_transverse(p);
  const double s = sin(q[ITH]), c = cos(q[ITH]);
  memset(dM, 0, sizeof(double) * N * N * N);
  dM[(ITH * N + ITH) * N + ITH] = 2 * m * R * R * s * c;
  dM[(IPHI * N + IPHI) * N + ITH] = 2 * (IA - IT) * s * c;
  dM[(IPHI * N + IPSI) * N + ITH] = dM[(IPSI * N + IPHI) * N + ITH] = -IA * c;
}

static double potential(const double *p, const double *q) { return p[P_M] * p[P_G] * p[P_R] * cos(q[ITH]); }

static void grad_potential(const double *p, const double *q, double *g) {
  memset(g, 0, sizeof(double) * N);
  g[ITH] = -p[P_M] * p[P_G] * p[P_R] * sin(q[ITH]);
}

static void hess_potential(const double *p, const double *q, double *H) {
  memset(H, 0, sizeof(double) * N * N);
  H[ITH * N + ITH] = -p[P_M] * p[P_G] * p[P_R] * cos(q[ITH]);
}

/* (4.11) as A(q) q̇ = 0, exactly the spec's matrix, columns (X, Y, θ, ϕ, ψ). */
static void constraints(const double *p, const double *q, double *A) {
  const double R = p[P_R], st = sin(q[ITH]), ct = cos(q[ITH]), sp = sin(q[IPHI]), cp = cos(q[IPHI]);
  const double row0[N] = {1, 0, R * sp * ct, R * st * cp, -R * cp};
  const double row1[N] = {0, 1, -R * cp * ct, R * st * sp, -R * sp};
  memcpy(A, row0, sizeof row0);
  memcpy(A + N, row1, sizeof row1);
}

/* dA[(a*N + i)*N + j] = ∂A_ai/∂q^j; only j ∈ {θ, ϕ} are nonzero. */
static void constraints_jacobian(const double *p, const double *q, double *dA) {
  const double R = p[P_R], st = sin(q[ITH]), ct = cos(q[ITH]), sp = sin(q[IPHI]), cp = cos(q[IPHI]);
  memset(dA, 0, sizeof(double) * 2 * N * N);
  dA[(0 * N + ITH) * N + ITH] = -R * sp * st;
  dA[(0 * N + ITH) * N + IPHI] = R * cp * ct;
  dA[(0 * N + IPHI) * N + ITH] = R * ct * cp;
  dA[(0 * N + IPHI) * N + IPHI] = -R * st * sp;
  dA[(0 * N + IPSI) * N + IPHI] = R * sp;
  dA[(1 * N + ITH) * N + ITH] = R * cp * st;
  dA[(1 * N + ITH) * N + IPHI] = R * sp * ct;
  dA[(1 * N + IPHI) * N + ITH] = R * ct * sp;
  dA[(1 * N + IPHI) * N + IPHI] = R * st * cp;
  dA[(1 * N + IPSI) * N + IPHI] = -R * cp;
}

static double damping(const double *p, double t NH_UNUSED) { return p[P_ALPHA]; }

static int forcing(const double *p, double t, double *F) {
  memset(F, 0, sizeof(double) * N);
  F[IPSI] = p[P_FPSI] + p[P_FPSI_SLOPE] * t;
  F[IPHI] = p[P_FPHI_SLOPE] * t;
  return p[P_FPSI] != 0 || p[P_FPSI_SLOPE] != 0 || p[P_FPHI_SLOPE] != 0;
}

/* φ_k(x) = Σ_{i≥0} (−x)^i/(i+k)!, k = 1, 2, 3 (so φ1 = (1 − e^{−x})/x, φ_{k+1} = (1/k! − φ_k)/x):
 * the series for small |x|, where the closed forms cancel, and the closed forms otherwise. */
static void phi_functions(double x, double phi[3]) {
  if (fabs(x) < 0.5) {
    for (int k = 1; k <= 3; k++) {
      double term = 1, sum = 0;
      for (int j = 2; j <= k; j++) term /= j; /* 1/k! */
      for (int i = 0; i < 30; i++) sum += term, term *= -x / (i + k + 1);
      phi[k - 1] = sum;
    }
    return;
  }
  phi[0] = -expm1(-x) / x;
  phi[1] = (1 - phi[0]) / x;
  phi[2] = (0.5 - phi[1]) / x;
}

/* Spin rate and angle of v̇ + αv = (c + b t)/J from v(t0) = v0 after τ (upright rolling), by
 * variation of constants: with f = f0 + f1 τ and x = ατ,
 *   v = v0 e^{−x} + f0 τ φ1 + f1 τ² φ2,   angle = v0 τ φ1 + f0 τ² φ2 + f1 τ³ φ3. */
static void upright_spin(double alpha, double J, double c, double b, double t0, double v0, double tau,
                         double *v, double *angle) {
  const double f0 = (c + b * t0) / J, f1 = b / J, x = alpha * tau;
  double phi[3];
  phi_functions(x, phi);
  *v = v0 * exp(-x) + f0 * tau * phi[0] + f1 * tau * tau * phi[1];
  *angle = tau * (v0 * phi[0] + tau * (f0 * phi[1] + f1 * tau * phi[2]));
}

/* Exact solution (spec §3.2, Exp 1, derived): from an upright state (θ = θ̇ = ϕ̇ = 0) without
 * heading torque (F_ϕ ≡ 0), the disk keeps rolling upright along its heading ϕ0, with
 * J ψ̈ = F_ψ(t) − αJ ψ̇, J = I_A + m R², and X, Y from (4.11): Ẋ = R cosϕ0 ψ̇, Ẏ = R sinϕ0 ψ̇.
 * For ψ̇0 = 0 and F_ψ = F constant: ψ = (F/(αJ))(t − (1 − e^{−αt})/α). Returns -1 for other
 * states (and for inconsistent initial velocities). z is not computed (set to 0). */
static int exact(const double *p, const nh_state *x0, double t, nh_state *x) {
  const double R = p[P_R], J = inertia_axial(p) + p[P_M] * R * R;
  const double *q = x0->q, *v = x0->v, cp = cos(q[IPHI]), sp = sin(q[IPHI]);
  if (q[ITH] != 0 || v[ITH] != 0 || v[IPHI] != 0 || p[P_FPHI_SLOPE] != 0) return -1;
  const double scale = 1e-14 * (1 + fabs(R * v[IPSI]));
  if (fabs(v[IX] - R * cp * v[IPSI]) > scale || fabs(v[IY] - R * sp * v[IPSI]) > scale) return -1;
  double w, angle;
  upright_spin(p[P_ALPHA], J, p[P_FPSI], p[P_FPSI_SLOPE], x0->t, v[IPSI], t - x0->t, &w, &angle);
  memset(x, 0, sizeof *x);
  x->t = t;
  x->q[IX] = q[IX] + R * cp * angle;
  x->q[IY] = q[IY] + R * sp * angle;
  x->q[IPHI] = q[IPHI];
  x->q[IPSI] = q[IPSI] + angle;
  x->v[IX] = R * cp * w;
  x->v[IY] = R * sp * w;
  x->v[IPSI] = w;
  return 0;
}

/* Presets (spec §3.2 table and §6): X0 = Y0 = ϕ0 = ψ0 = 0, θ̇0 = 0 unless stated; Ẋ0, Ẏ0 from
 * (4.11): Ẋ0 = R(ψ̇0 − sinθ0 ϕ̇0), Ẏ0 = 0. α is not set by the presets (paper: Exp 1 α ∈ {0.005,
 * 0.1}, Exp 2-4 α ∈ {0, 0.005, 0.1}): choose it with system_params. */
static const double q_upright[N] = {0, 0, 0, 0, 0};
static const double v_rest[N] = {0, 0, 0, 0, 0};
/* Exp 2: θ0 = π/36, ψ̇0 = 2π, Ẋ0 = R ψ̇0 = π. */
static const double q_exp2[N] = {0, 0, 0.0872664625997164788, 0, 0};
static const double v_exp2[N] = {3.14159265358979324, 0, 0, 0, 6.28318530717958648};
/* Exp 3: upright, ψ̇0 = π, Ẋ0 = π/2. */
static const double v_exp3[N] = {1.57079632679489662, 0, 0, 0, 3.14159265358979324};
/* Exp 4: steady circle, θ0 = π/12, ψ̇0 = 2π, ϕ̇0 = slow root of the steady condition (spec §3.2),
 * 0.568912648240357424; Ẋ0 = R(2π − sin(π/12) ϕ̇0). */
static const double q_exp4[N] = {0, 0, 0.261799387799149437, 0, 0};
static const double v_exp4[N] = {3.06796993940763544, 0, 0, 0.568912648240357424, 6.28318530717958648};
/* Exp 1 perturbed (spec §6 stress case): θ0 = 1e-3, at rest. */
static const double q_tilted[N] = {0, 0, 1e-3, 0, 0};

#define NO_FORCE "F_psi_const=0,F_psi_slope=0,F_phi_slope=0"
static const nh_preset presets[] = {
    {"exp1", "paper Exp 1: upright at rest, F_psi = 12 (exact solution); E0 = m g R = 24.525 J", q_upright, v_rest,
     "F_psi_const=12,F_psi_slope=0,F_phi_slope=0"},
    {"exp2", "paper Exp 2: theta0 = pi/36, psidot0 = 2 pi, no force; E0 = 61.44269147 J", q_exp2, v_exp2, NO_FORCE},
    {"exp3", "paper Exp 3: upright, psidot0 = pi, F_psi = F_phi = t/16; E0 = 33.77775413 J", q_upright, v_exp3,
     "F_psi_const=0,F_psi_slope=0.0625,F_phi_slope=0.0625"},
    {"exp4", "paper Exp 4: steady circle theta0 = pi/12, psidot0 = 2 pi, phidot0 = 0.5689126482 (spec 3.2); "
             "E0 = 59.03316363 J",
     q_exp4, v_exp4, NO_FORCE},
    {"exp1_tilted", "Exp 1 perturbed (spec 6): theta0 = 1e-3, at rest, F_psi = 12", q_tilted, v_rest,
     "F_psi_const=12,F_psi_slope=0,F_phi_slope=0"},
};

static const nh_system_forces forces = {
    .damping = damping,
    .forcing = forcing,
};

static const nh_system_knowledge knowledge = {
    .exact = exact,
    NH_SYSTEM_PRESETS(presets),
    .sample_box = 1,
    .sampler_doc = "generic (spec/newmark.md 6 A10): q uniform in [-1,1]^5 (|theta| <= 1, inside the chart) with "
                   "V = m g R cos(theta) < E - 0.1, v ~ N(0, I) projected M(q)-orthogonally on D and rescaled to "
                   "kinetic energy v^T M(q) v / 2 = E - V(q) (linear constraints, so both stay on D); damping and "
                   "forcing play no part",
};

const nh_system_type nh_system_falling_disk = {
    .name = "falling_disk",
    .doc = "Rolling falling disk (thin, homogeneous) without slip, q = (X, Y, theta, phi, psi), mass matrix "
           "M(q) from (4.10), rolling constraints (4.11), damping -alpha M(q) qdot and torques F_psi = "
           "F_psi_const + F_psi_slope t, F_phi = F_phi_slope t (spec/herglotz.md 3.2). Exact solution for "
           "upright rolling (Exp 1). Singular at theta = +-pi/2. Presets exp1-exp4 set the forcing of each "
           "experiment but not alpha (paper: 0, 0.005, 0.1): set it in system_params.",
    .n = N,
    .k = 2,
    NH_SYSTEM_PARAMS(params),
    .q0 = q_exp2,
    .v0 = v_exp2,
    .ic_doc = "paper Exp 2: theta0 = pi/36, psidot0 = 2 pi, Xdot0 = pi, the rest 0; E0 = 61.44269147 J",
    NH_SYSTEM_MECHANICS,
    .constraints_solved_first = 1, /* (4.11): Xdot, Ydot from the angles' rates */
    .mass_jacobian = mass_jacobian,
    .forces = &forces,
    .knowledge = &knowledge,
};
