/* Hand-written kernels of four methods on the chaotic particle (spec/newmark.md §3.2): the floors
 * `make bench` measures the harness against (issue 11). Each is what a researcher would write for
 * this one system in plain C: q = (x, y1, y2, z1, z2), M = I, one constraint μ(q) = (1, 0, 0, y1, y2)
 * with the constant derivative ∂μ_z1/∂y1 = ∂μ_z2/∂y2 = 1, V and its derivatives written out, fixed
 * sizes, no function pointers. Each computes the same numbers as the harness's method (same
 * equations, predictor, unknown scaling and Newton stopping rule), so its state agrees with the
 * harness's to round-off and its Newton iteration count is the same: bench.c prints both
 * differences and tests/performance/test_bench.c checks them. */
#include "bench/performance/floors.h"

#include <math.h>
#include <string.h>

enum { X, Y1, Y2, Z1, Z2, N = 5 };

/* ---- the system, written out ---------------------------------------------------------------- */

/* V and its gradient repeat systems/chaotic_particle.c on purpose: a floor shares no code with
 * the harness it measures. */

static double potential(const double *q) {
  const double x = q[X], y1 = q[Y1], y2 = q[Y2], z1 = q[Z1], z2 = q[Z2];
  return 0.5 * (x * x + y1 * y1 + y2 * y2 + z1 * z1 + z2 * z2 + z1 * z1 * z2 * z2 + y1 * y1 * z1 * z1 +
                y2 * y2 * z2 * z2);
}

static void gradient(const double *q, double *g) {
  const double x = q[X], y1 = q[Y1], y2 = q[Y2], z1 = q[Z1], z2 = q[Z2];
  g[X] = x;
  g[Y1] = y1 + y1 * z1 * z1;
  g[Y2] = y2 + y2 * z2 * z2;
  g[Z1] = z1 + z1 * z2 * z2 + y1 * y1 * z1;
  g[Z2] = z2 + z1 * z1 * z2 + y2 * y2 * z2;
}

/* μ(q); μ·μ = 1 + y1² + y2². */
static void mu(const double *q, double *m) {
  m[X] = 1, m[Y1] = 0, m[Y2] = 0, m[Z1] = q[Y1], m[Z2] = q[Y2];
}

static double dot(const double *a, const double *b) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4];
}

/* The multiplier of the index-reduced ODE in the +μᵀλ sign: μ·(−g + μλ) + (Dμ[v])v = 0, with
 * (Dμ[v])v = v_y1 v_z1 + v_y2 v_z2. */
static double multiplier(const double *m, const double *g, const double *v) {
  return (dot(m, g) - (v[Y1] * v[Z1] + v[Y2] * v[Z2])) / dot(m, m);
}

void nh_floor_onto_constraint(nh_floor_state *s) {
  s->v[X] = -(s->q[Y1] * s->v[Z1] + s->q[Y2] * s->v[Z2]); /* μ(q)·v = 0, μ_x = 1 */
}

void nh_floor_acceleration(const double *q, const double *v, double *a) {
  double g[N], m[N];
  gradient(q, g);
  mu(q, m);
  const double lambda = multiplier(m, g, v);
  for (int i = 0; i < N; i++) a[i] = -g[i] + m[i] * lambda;
}

/* ---- rk4 ------------------------------------------------------------------------------------ */

void nh_floor_rk4(nh_floor_state *s, double h, long steps) {
  double *q = s->q, *v = s->v;
  for (long k = 0; k < steps; k++) {
    double k1v[N], k2v[N], k3v[N], k4v[N], qs[N], vs[N], k2q[N], k3q[N], k4q[N];
    nh_floor_acceleration(q, v, k1v);
    for (int i = 0; i < N; i++) qs[i] = q[i] + h / 2 * v[i], vs[i] = k2q[i] = v[i] + h / 2 * k1v[i];
    nh_floor_acceleration(qs, vs, k2v);
    for (int i = 0; i < N; i++) qs[i] = q[i] + h / 2 * k2q[i], vs[i] = k3q[i] = v[i] + h / 2 * k2v[i];
    nh_floor_acceleration(qs, vs, k3v);
    for (int i = 0; i < N; i++) qs[i] = q[i] + h * k3q[i], vs[i] = k4q[i] = v[i] + h * k3v[i];
    nh_floor_acceleration(qs, vs, k4v);
    for (int i = 0; i < N; i++) {
      q[i] += h / 6 * (v[i] + 2 * k2q[i] + 2 * k3q[i] + k4q[i]);
      v[i] += h / 6 * (k1v[i] + 2 * k2v[i] + 2 * k3v[i] + k4v[i]);
    }
  }
}

/* ---- Newton, as integrators/newton.c decides when to stop ----------------------------------- */

/* Gaussian elimination with partial pivoting on the D×D system J d = F, d returned in F. */
#define FLOOR_MAX 7
static int solve(int d, double J[FLOOR_MAX][FLOOR_MAX], double *F) {
  for (int k = 0; k < d; k++) {
    int p = k;
    for (int i = k + 1; i < d; i++)
      if (fabs(J[i][k]) > fabs(J[p][k])) p = i;
    if (J[p][k] == 0) return -1;
    if (p != k) {
      for (int j = k; j < d; j++) {
        double t = J[k][j];
        J[k][j] = J[p][j], J[p][j] = t;
      }
      double t = F[k];
      F[k] = F[p], F[p] = t;
    }
    for (int i = k + 1; i < d; i++) {
      double l = J[i][k] / J[k][k];
      for (int j = k + 1; j < d; j++) J[i][j] -= l * J[k][j];
      F[i] -= l * F[k];
    }
  }
  for (int i = d - 1; i >= 0; i--) {
    double t = F[i];
    for (int j = i + 1; j < d; j++) t -= J[i][j] * F[j];
    F[i] = t / J[i][i];
  }
  return 0;
}

/* The update rule of nh_newton_solve: x −= J⁻¹F; done when |δ|∞ ≤ 1e-14 (1 + |x|∞), or when it
 * stagnates (|δ| > ½ the previous one) below 1e-9 (1 + |x|∞). Returns 1 when done, 0 to go on. */
static int newton_update(int d, double *x, const double *delta, double *prev) {
  double dx = 0, xn = 0;
  for (int i = 0; i < d; i++) {
    x[i] -= delta[i];
    dx = fmax(dx, fabs(delta[i]));
    xn = fmax(xn, fabs(x[i]));
  }
  if (dx <= 1e-14 * (1 + xn) || (dx > 0.5 * *prev && dx <= 1e-9 * (1 + xn))) return 1;
  *prev = dx;
  return 0;
}

/* ---- nh_newmark(β, β', α = ½), constraint (14): v eliminated, Y = (Δq, Λ0, Λ1) ------------- */

/* The residual and Jacobian of integrators/nh_newmark.c's newmark_residual for this system
 * (spec/newmark.md §2.3-2.5; c = h²/2, Λ = cλ, (N3) and (N4) multiplied by h, the unknown the
 * increment Δq = q1 − q0): 7 equations. Also returns w = h v1. */
static void newmark_system(const double *q0, const double *v0, const double *g0, const double *m0, double b,
                           double b2, double h, const double *Y, double *F, double J[FLOOR_MAX][FLOOR_MAX],
                           double *w) {
  const double c = 0.5 * h * h, L0 = Y[5], L1 = Y[6], *dq = Y;
  double g1[N], m1[N], q1[N], qa[N], ma[N];
  for (int i = 0; i < N; i++) q1[i] = q0[i] + dq[i];
  gradient(q1, g1);
  mu(q1, m1);
  for (int i = 0; i < N; i++) qa[i] = 0.5 * (q0[i] + q1[i]);
  mu(qa, ma);
  /* K = c ∇²V(q1) − ∂(μ1ᵀΛ1)/∂q1, symmetric part from V plus the two constant μ entries. */
  const double y1 = q1[Y1], y2 = q1[Y2], z1 = q1[Z1], z2 = q1[Z2];
  double K[N][N] = {{0}};
  K[X][X] = c;
  K[Y1][Y1] = c * (1 + z1 * z1);
  K[Y2][Y2] = c * (1 + z2 * z2);
  K[Z1][Z1] = c * (1 + z2 * z2 + y1 * y1);
  K[Z2][Z2] = c * (1 + z1 * z1 + y2 * y2);
  K[Y1][Z1] = K[Z1][Y1] = c * 2 * y1 * z1;
  K[Y2][Z2] = K[Z2][Y2] = c * 2 * y2 * z2;
  K[Z1][Z2] = K[Z2][Z1] = c * 2 * z1 * z2;
  K[Z1][Y1] -= L1;
  K[Z2][Y2] -= L1;
  for (int i = 0; i < N; i++) {
    F[i] = dq[i] - h * v0[i] + c * ((1 - 2 * b) * g0[i] + 2 * b * g1[i]) - (1 - 2 * b) * m0[i] * L0 -
           2 * b * m1[i] * L1;
    for (int j = 0; j < N; j++) J[i][j] = (i == j) + 2 * b * K[i][j];
    J[i][5] = -(1 - 2 * b) * m0[i];
    J[i][6] = -2 * b * m1[i];
    w[i] = dq[i] - (c * (2 * b2 * g0[i] + (1 - 2 * b2) * g1[i]) - 2 * b2 * m0[i] * L0 - (1 - 2 * b2) * m1[i] * L1);
  }
  /* (N3)·h = μ(q_½)·Δq, ∂/∂q1 = μ(q_½) + ½ (Dμ)ᵀΔq; (N4)·h = μ1·w. */
  F[5] = dot(ma, dq);
  F[6] = dot(m1, w);
  for (int j = 0; j < N; j++) {
    double m1K = 0;
    for (int i = 0; i < N; i++) m1K += m1[i] * K[i][j];
    J[5][j] = ma[j];
    J[6][j] = m1[j] - (1 - 2 * b2) * m1K;
  }
  J[5][Y1] += 0.5 * dq[Z1];
  J[5][Y2] += 0.5 * dq[Z2];
  J[6][Y1] += w[Z1];
  J[6][Y2] += w[Z2];
  J[5][5] = J[5][6] = 0;
  J[6][5] = 2 * b2 * dot(m1, m0);
  J[6][6] = (1 - 2 * b2) * dot(m1, m1);
}

long nh_floor_nh_newmark(nh_floor_state *s, double beta, double beta2, double h, long steps) {
  const double c = 0.5 * h * h;
  long iterations = 0;
  for (long k = 0; k < steps; k++) {
    double g0[N], m0[N], Y[FLOOR_MAX], F[FLOOR_MAX], J[FLOOR_MAX][FLOOR_MAX], w[N];
    gradient(s->q, g0);
    mu(s->q, m0);
    /* Predictor: a Taylor step with the index-reduced multiplier. */
    const double lambda = multiplier(m0, g0, s->v);
    for (int i = 0; i < N; i++) Y[i] = h * s->v[i] + c * (-g0[i] + m0[i] * lambda); /* Δq */
    Y[5] = Y[6] = c * lambda;
    double prev = INFINITY;
    for (int it = 0;; it++) {
      if (it == 50) return -1;
      newmark_system(s->q, s->v, g0, m0, beta, beta2, h, Y, F, J, w);
      iterations++;
      if (solve(7, J, F) < 0) return -1;
      if (newton_update(7, Y, F, &prev)) break;
    }
    newmark_system(s->q, s->v, g0, m0, beta, beta2, h, Y, F, J, w); /* w at the solution */
    double m1[N];
    for (int i = 0; i < N; i++) s->q[i] += Y[i], s->v[i] = w[i] / h;
    /* (N4) imposed by the projection onto D at q1, as the harness's finish_step (nh_project_onto) */
    mu(s->q, m1);
    double cc = 0, y = 0;
    for (int i = 0; i < N; i++) cc += m1[i] * m1[i], y += m1[i] * s->v[i];
    y /= cc;
    for (int i = 0; i < N; i++) s->v[i] -= m1[i] * y;
    s->lambda = Y[6] / c;
  }
  return iterations;
}

/* ---- nh_rattle (spec/rattle.md §2.5): explicit for linear constraints ----------------------- */

/* The force carried from step to step, ∇V(q0) + μ(q0)λ0 in the spec's sign (λ0 = −λ of the ODE). */
void nh_floor_rattle_init(nh_floor_state *s) {
  double g[N], m[N];
  gradient(s->q, g);
  mu(s->q, m);
  const double lambda = -multiplier(m, g, s->v);
  for (int i = 0; i < N; i++) s->force[i] = g[i] + m[i] * lambda;
}

void nh_floor_nh_rattle(nh_floor_state *s, double h, long steps) {
  for (long k = 0; k < steps; k++) {
    double g1[N], m1[N];
    for (int i = 0; i < N; i++) {
      s->v[i] -= 0.5 * h * s->force[i]; /* (9a) */
      s->q[i] += h * s->v[i];           /* (9b) */
    }
    gradient(s->q, g1);
    mu(s->q, m1);
    for (int i = 0; i < N; i++) s->v[i] -= 0.5 * h * g1[i];
    const double y = dot(m1, s->v) / dot(m1, m1); /* (9d)-(9e): the projection's multiplier */
    for (int i = 0; i < N; i++) {
      s->v[i] -= m1[i] * y;
      s->force[i] = g1[i] + m1[i] * (2 * y / h);
    }
    s->lambda = -2 * y / h;
  }
}

/* ---- herglotz2 (spec/herglotz.md §2.4-2.6) without damping or forcing: X = (q1, Λ = h²λ) ---- */

long nh_floor_herglotz2(nh_floor_state *s, double h, long steps) {
  long iterations = 0;
  for (long k = 0; k < steps; k++) {
    double g0[N], m0[N], a[N], X[6], cst[N];
    gradient(s->q, g0);
    mu(s->q, m0);
    nh_floor_acceleration(s->q, s->v, a); /* the predictor's Taylor step */
    for (int i = 0; i < N; i++) {
      X[i] = s->q[i] + h * s->v[i] + 0.5 * h * h * a[i];
      cst[i] = h * s->v[i] - 0.5 * h * h * g0[i];
    }
    X[5] = 0;
    double prev = INFINITY;
    for (int it = 0;; it++) {
      if (it == 50) return -1;
      /* R = cst − Δq − μ0 Λ (n rows), G = μ(q̄)·Δq with ∂G/∂q1 = μ(q̄) + ½(Dμ)ᵀΔq. The first block
       * is −I, so the 6×6 solve reduces to its Schur complement, a scalar. */
      double dq[N], qb[N], mb[N], R[N], Jg[N], delta[6];
      for (int i = 0; i < N; i++) dq[i] = X[i] - s->q[i], qb[i] = s->q[i] + 0.5 * dq[i];
      mu(qb, mb);
      for (int i = 0; i < N; i++) R[i] = cst[i] - dq[i] - m0[i] * X[5], Jg[i] = mb[i];
      Jg[Y1] += 0.5 * dq[Z1];
      Jg[Y2] += 0.5 * dq[Z2];
      const double G = dot(mb, dq);
      iterations++;
      /* [−I −μ0; Jgᵀ 0] δ = (R, G): δq = −R − μ0 δΛ, Jg·δq = G. */
      const double s0 = dot(Jg, m0);
      if (s0 == 0) return -1;
      delta[5] = -(G + dot(Jg, R)) / s0;
      for (int i = 0; i < N; i++) delta[i] = -R[i] - m0[i] * delta[5];
      if (newton_update(6, X, delta, &prev)) break;
    }
    double g1[N], m1[N], p1[N], dq[N], T = 0;
    gradient(X, g1);
    mu(X, m1);
    for (int i = 0; i < N; i++) {
      dq[i] = X[i] - s->q[i];
      p1[i] = dq[i] / h - 0.5 * h * g1[i];
      T += 0.5 * (dq[i] / h) * (dq[i] / h);
    }
    const double y = dot(m1, p1) / dot(m1, m1);
    s->z += h * (T - 0.5 * (potential(s->q) + potential(X)));
    for (int i = 0; i < N; i++) s->q[i] = X[i], s->v[i] = p1[i] - m1[i] * y;
    s->lambda = -X[5] / (h * h) - y / h;
  }
  return iterations;
}
