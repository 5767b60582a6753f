/* SPARK: the Lobatto IIIA–IIIB pair for the Lagrange–d'Alembert equations as an index-2 DAE, with
 * s = 2, 3 or 4 stages (the parameter s), one engine over coefficient tables (spark.h).
 *
 * Source: L. O. Jay, "Solution of index 2 implicit differential-algebraic equations by Lobatto
 * Runge-Kutta methods", BIT 43 (2003) 93–106, doi:10.1023/A:1023696822355, in the form two codes
 * implement it: odelab's Spark (odelab/scheme/rungekutta.py, with the split of
 * NonHolonomic.multi_dynamics in odelab/system/nonholonomic/__init__.py; github.com/olivierverdier/
 * odelab, commit ee3300c) and GeometricIntegrators.jl's SPARK family (docs/src/integrators/spark.md
 * and lobatto_ω_matrix in src/spark/coefficients_lob.jl, commit 9c299a2). The paper itself was not
 * at hand; the equations below are those codes', written for nhbench's systems.
 *
 * The DAE (systems/system.h, constant M): q̇ = v, M v̇ = f(t, q, v) + A(q)ᵀλ, 0 = g(q, v), with
 * f = −∇V(q) − αMv + F(t) and g = A(q)v + b(q). Lobatto IIIA (a, b, c) integrates q, Lobatto IIIB
 * (â, b, c) the momentum Mv together with each stage's constraint force A(Q_j)ᵀλ_j (odelab's split
 * f₁ = (v, 0) → IIIA, f₂ = (0, f + Aᵀλ) → IIIB), the step from (q_k, v_k) at t_k to t_k + h:
 *   (S1) Q_i = q_k + h Σ_j a_ij V_j                                              i = 1..s
 *   (S2) M V_i = M v_k + h Σ_j â_ij [f_j + A(Q_j)ᵀλ_j],  f_j = f(t_k + c_j h, Q_j, V_j)
 *   (S3) q_{k+1} = q_k + h Σ_j b_j V_j,   M v_{k+1} = M v_k + h Σ_j b_j [f_j + A(Q_j)ᵀλ_j]
 *   (S4) 0 = Σ_j a_ij g(Q_j, V_j)                                                i = 2..s
 *   (S5) 0 = g(q_{k+1}, v_{k+1})
 * (S4)–(S5) are both codes' s equations ω [g(Q_1, V_1) … g(Q_s, V_s), g(q_{k+1}, v_{k+1})]ᵀ = 0:
 * ω = L⁻¹ [Ã 0; 0 1] with L = [Ã; e_sᵀ] invertible and Ã = rows 2..s of IIIA, so ω = 0 says exactly
 * (S4) and (S5). Claimed order 2s − 2 in q and v (Jay 2003; GeometricIntegrators.jl's table,
 * "Lobatto 2s−2"), for s = 2, 3, 4: orders 2, 4, 6.
 *
 * Structure used: IIIA's first row is zero (Q_1 = q_k) and its last row is b (Q_s = q_{k+1});
 * IIIB's last column is zero, so λ_s enters only v_{k+1} in (S3). (S3) and (S5) then make v_{k+1}
 * the M-orthogonal projection onto D_{q_{k+1}} of
 *   v̂ = v_k + Σ_{j<s} b_j U_j + h b_s M⁻¹f_s,   with   h b_s λ_s = −C⁻¹ g(q_{k+1}, v̂), C = A M⁻¹Aᵀ,
 * where U_j = h M⁻¹[f_j + A(Q_j)ᵀλ_j] is stage j's velocity increment, and (S2) reads
 * V_i = v_k + Σ_{j<s} â_ij U_j. Newton (the shared solver) runs on X = [U_1 … U_{s−1} | Λ_1 … Λ_{s−1}],
 * Λ_j = hλ_j (both O(h): the Jacobian stays O(1) as h → 0), (s − 1)(n + k) unknowns:
 *   R_j = M U_j − h f_j − A(Q_j)ᵀΛ_j     (n each, j = 1..s−1)
 *   C_i = Σ_l a_il g(Q_l, V_l)             (k each, i = 2..s)
 * and the analytic Jacobian, with P = a·â (so ∂Q_i/∂U_m = h P_im, ∂V_i/∂U_m = â_im):
 *   ∂R_j/∂U_m = δ_jm M + αh â_jm M + h P_jm [h ∇²V(Q_j) − G_j],   G_j = Σ_a Λ_j^a ∂_q μ^a(Q_j)
 *   ∂R_j/∂Λ_m = −δ_jm A(Q_j)ᵀ
 *   ∂C_i/∂U_m = Σ_l a_il [â_lm A(Q_l) + h P_lm ∂_q g(Q_l, V_l)],   ∂C_i/∂Λ = 0,
 * with (G_j)_il = Σ_a Λ_j^a ∂_l μ^a_i and ∂_q g = ∂_q(A(q)V) + ∂_q b (nh_constraint_derivative plus
 * affine->jacobian). Row 1 of a is zero, so P_1m = 0 and stage 1's q-derivatives drop out.
 * Initial guess: U_j = h a(t_k, q_k, v_k) and Λ_j = hλ(t_k, q_k, v_k), the index-reduced acceleration
 * and multiplier (77) at the step's start (O(h²) off).
 *
 * Declined: a configuration-dependent mass matrix (the Jacobian would need ∂²M, which the system
 * interface lacks), and any system whose stage system exceeds the shared solver's NH_NEWTON_MAX_DIM
 * unknowns (none of the registered systems at s ≤ 4). Damping, forcing and affine constraints are
 * handled. The claim assumes index 2, C = A M⁻¹Aᵀ invertible along the solution: on the Foucault
 * pendulum, whose A(q) = (−y, x) vanishes at the origin that every trajectory crosses, s = 3 and 4
 * lose their order near the crossing (tests/integrators/test_spark.c; tests/orders/spark_foucault_pendulum.cfg).
 * Symmetric on D: under (q_k, v_k) ↔ (q_{k+1}, v_{k+1}), h → −h and the stages reversed, both
 * tables satisfy x_{s+1−i,s+1−j} = b_j − x_ij, so (S1)–(S4) map to themselves (IIIB's zero last
 * column to its constant first column b_1) and (S5) to g(q_k, v_k) = 0, which holds on D: there
 * Φ_{−h} ∘ Φ_h = id (off D the step lands on D and cannot come back); compositions over
 * spark(s=2) reach their orders (tests/integrators/test_spark.c, tests/orders/spark_*particle.cfg).
 * What a step leaves: y->lambda = λ_s, the last stage's multiplier (c_s = 1), in the +Aᵀλ
 * convention, an O(h^{s−1}) approximation of λ(t_{k+1}) (measured, tests/integrators/test_spark.c).
 * newton_unknowns cannot read the stages off a step's result (y holds q_{k+1} and v_{k+1} only): it
 * solves the step from x again, the same deterministic Newton, and returns its solution.
 * Cost: rhs_evals counts ∇V evaluations (∇V(q_k) once, stages 2..s−1 per iteration, ∇V(q_{k+1})
 * once) and the guess's multiplier; constraint_evals every A(q) (A(q_k) once, stages 2..s per
 * iteration, A(q_{k+1}) for the projection, and the guess's). */
#include "integrators/spark.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/linalg.h"
#include "integrators/newton.h"

enum { P_S, P_COUNT };

static const nh_param_desc params[] = {
    [P_S] = {"s", NH_PARAM_INT, 2, 2, NH_SPARK_MAX_S,
     "Lobatto stages: 2, 3 or 4 (order 2s - 2: 2, 4, 6); s = 2 is a nonholonomic Stormer-Verlet step", 0},
};
_Static_assert(sizeof params / sizeof *params == P_COUNT, "params[] and the P_* enum disagree");

#define SQRT5 2.2360679774997896964 /* √5, for s = 4 */

/* Lobatto IIIA and IIIB for s = 2, 3, 4 (E. Hairer, G. Wanner, Solving Ordinary Differential
 * Equations II, 2nd ed., Springer 1996, §IV.5; the same values as odelab's LobattoIIIA and
 * LobattoIIIB tableaux). IIIA satisfies C(s) and IIIB D(s), both B(2s − 2) (tests/integrators/test_spark.c
 * checks them). */
const nh_lobatto_pair nh_lobatto_pairs[NH_SPARK_MAX_S + 1] = {
    [2] = {.s = 2,
           .c = {0, 1},
           .b = {1. / 2, 1. / 2},
           .a = {{0, 0}, {1. / 2, 1. / 2}},
           .ahat = {{1. / 2, 0}, {1. / 2, 0}}},
    [3] = {.s = 3,
           .c = {0, 1. / 2, 1},
           .b = {1. / 6, 2. / 3, 1. / 6},
           .a = {{0, 0, 0}, {5. / 24, 1. / 3, -1. / 24}, {1. / 6, 2. / 3, 1. / 6}},
           .ahat = {{1. / 6, -1. / 6, 0}, {1. / 6, 1. / 3, 0}, {1. / 6, 5. / 6, 0}}},
    [4] = {.s = 4,
           .c = {0, (5 - SQRT5) / 10, (5 + SQRT5) / 10, 1},
           .b = {1. / 12, 5. / 12, 5. / 12, 1. / 12},
           .a = {{0, 0, 0, 0},
                 {(11 + SQRT5) / 120, (25 - SQRT5) / 120, (25 - 13 * SQRT5) / 120, (-1 + SQRT5) / 120},
                 {(11 - SQRT5) / 120, (25 + 13 * SQRT5) / 120, (25 + SQRT5) / 120, (-1 - SQRT5) / 120},
                 {1. / 12, 5. / 12, 5. / 12, 1. / 12}},
           .ahat = {{1. / 12, (-1 - SQRT5) / 24, (-1 + SQRT5) / 24, 0},
                    {1. / 12, (25 + SQRT5) / 120, (25 - 13 * SQRT5) / 120, 0},
                    {1. / 12, (25 + 13 * SQRT5) / 120, (25 - SQRT5) / 120, 0},
                    {1. / 12, (11 - SQRT5) / 24, (11 + SQRT5) / 24, 0}}},
};

/* What a step fixes before Newton: the pair, P = a·â, the start, F(t_k + c_i h), and stage 1's
 * ∇V, A and b (Q_1 = q_k whatever the unknowns). */
typedef struct {
  const nh_system *sys;
  const nh_lobatto_pair *L;
  double h, t, alpha; /* step, start time, damping coefficient (0: none) */
  const double *q0, *v0;
  double P[NH_SPARK_MAX_S][NH_SPARK_MAX_S];
  double force[NH_SPARK_MAX_S][NH_MAX_N]; /* F(t_k + c_i h); 0 without forcing */
  double g0[NH_MAX_N];                    /* ∇V(q_k) */
  double A0[NH_MAX_K * NH_MAX_N], b0[NH_MAX_K];
  nh_cost *cost;
} spark_ctx;

/* Stage i's values and constraint: V_i, Q_i, A(Q_i), g(Q_i, V_i) and (Jacobian only, i ≥ 2)
 * ∂_q g(Q_i, V_i). */
typedef struct {
  double V[NH_MAX_N], Q[NH_MAX_N];
  double A[NH_MAX_K * NH_MAX_N], g[NH_MAX_K], Dg[NH_MAX_K * NH_MAX_N];
} stage;

static int stages_of(const nh_method *m) { return (int)m->p[P_S]; }

static int spark_order(const nh_method *m) { return 2 * stages_of(m) - 2; }

static int spark_size(const nh_method *m, const nh_system *sys) { return (stages_of(m) - 1) * (sys->n + sys->k); }

/* A(q) and b(q) (b = 0 for linear constraints): one constraint evaluation. */
static void constraint_at(const spark_ctx *C, const double *q, double *A, double *b) {
  const nh_system *sys = C->sys;
  if (sys->k == 0) return;
  sys->type->constraints(sys->p, q, A);
  C->cost->constraint_evals++;
  if (sys->type->affine) sys->type->affine->values(sys->p, q, b);
  else memset(b, 0, sizeof(double) * (size_t)sys->k);
}

static void spark_setup(const nh_method *m, const nh_system *sys, const nh_state *x, double h, spark_ctx *C,
                        nh_cost *cost) {
  const nh_lobatto_pair *L = (const nh_lobatto_pair *)m->type->data + stages_of(m);
  const int s = L->s;
  *C = (spark_ctx){.sys = sys, .L = L, .h = h, .t = x->t, .q0 = x->q, .v0 = x->v, .cost = cost};
  C->alpha = nh_damping(sys, x->t); /* constant: spark declines α(t) */
  for (int i = 0; i < s; i++)
    for (int j = 0; j < s; j++) {
      C->P[i][j] = 0;
      for (int l = 0; l < s; l++) C->P[i][j] += L->a[i][l] * L->ahat[l][j];
    }
  for (int i = 0; i < s; i++)
    if (!nh_forcing(sys, x->t + L->c[i] * h, C->force[i]))
      memset(C->force[i], 0, sizeof C->force[i]);
  sys->type->grad_potential(sys->p, x->q, C->g0);
  cost->rhs_evals++;
  constraint_at(C, x->q, C->A0, C->b0);
}

/* V_i = v_k + Σ_{j<s} â_ij U_j (S2) and Q_i = q_k + h Σ_l a_il V_l (S1), every stage. */
static void stage_values(const spark_ctx *C, const double *U, stage *S) {
  const nh_lobatto_pair *L = C->L;
  const int n = C->sys->n, s = L->s;
  for (int i = 0; i < s; i++)
    for (int d = 0; d < n; d++) {
      double v = C->v0[d];
      for (int j = 0; j < s - 1; j++) v += L->ahat[i][j] * U[j * n + d];
      S[i].V[d] = v;
    }
  for (int i = 0; i < s; i++)
    for (int d = 0; d < n; d++) {
      double dq = 0;
      for (int l = 0; l < s; l++) dq += L->a[i][l] * S[l].V[d];
      S[i].Q[d] = C->q0[d] + C->h * dq; /* exactly q_k for i = 1 */
    }
}

/* A(Q_i), g(Q_i, V_i) and (with_D, i ≥ 2) ∂_q g(Q_i, V_i) for every stage i. */
static void stage_constraints(const spark_ctx *C, stage *S, int with_D) {
  const nh_system *sys = C->sys;
  const int n = sys->n, k = sys->k;
  double b[NH_MAX_K], db[NH_MAX_K * NH_MAX_N];
  if (k == 0) return;
  for (int i = 0; i < C->L->s; i++) {
    if (i == 0) {
      memcpy(S[0].A, C->A0, sizeof(double) * (size_t)(k * n));
      memcpy(b, C->b0, sizeof(double) * (size_t)k);
    } else {
      constraint_at(C, S[i].Q, S[i].A, b);
    }
    for (int a = 0; a < k; a++) {
      S[i].g[a] = b[a];
      for (int d = 0; d < n; d++) S[i].g[a] += S[i].A[a * n + d] * S[i].V[d];
    }
    if (!with_D || i == 0) continue;
    nh_constraint_derivative(sys, S[i].Q, S[i].V, S[i].Dg);
    if (!sys->type->affine) continue;
    sys->type->affine->jacobian(sys->p, S[i].Q, db);
    for (int e = 0; e < k * n; e++) S[i].Dg[e] += db[e];
  }
}

/* K = h ∇²V(Q_j) − G_j (n×n) at stage j ≥ 2, the q-derivative of h∇V(Q) − A(Q)ᵀΛ_j. */
static void stage_curvature(const spark_ctx *C, const stage *S, const double *Lam, double *K) {
  const nh_system *sys = C->sys;
  const int n = sys->n, k = sys->k;
  double dA[NH_MAX_K * NH_MAX_N * NH_MAX_N];
  sys->type->hess_potential(sys->p, S->Q, K);
  for (int e = 0; e < n * n; e++) K[e] *= C->h;
  if (k == 0) return;
  sys->type->constraints_jacobian(sys->p, S->Q, dA);
  for (int i = 0; i < n; i++)
    for (int l = 0; l < n; l++)
      for (int a = 0; a < k; a++) K[i * n + l] -= Lam[a] * dA[(a * n + i) * n + l];
}

/* The rows R_j = M U_j − h f_j − A(Q_j)ᵀΛ_j, j = 1..s−1, and (J not NULL) their Jacobian rows. */
static void momentum_rows(const spark_ctx *C, const stage *S, const double *X, double *F, double *J, int dim) {
  const nh_system *sys = C->sys;
  const nh_lobatto_pair *L = C->L;
  const int n = sys->n, k = sys->k, s = L->s, lam0 = (s - 1) * n;
  const double h = C->h, *M = sys->M;
  double grad[NH_MAX_N], K[NH_MAX_N * NH_MAX_N];
  for (int j = 0; j < s - 1; j++) {
    const double *U = X + j * n, *Lam = X + lam0 + j * k, *g = C->g0;
    if (j > 0) {
      sys->type->grad_potential(sys->p, S[j].Q, grad);
      C->cost->rhs_evals++;
      g = grad;
    }
    for (int i = 0; i < n; i++) {
      double r = h * (g[i] - C->force[j][i]); /* −h f_j without its damping part */
      for (int d = 0; d < n; d++) r += M[i * n + d] * (U[d] + C->alpha * h * S[j].V[d]);
      for (int a = 0; a < k; a++) r -= S[j].A[a * n + i] * Lam[a];
      F[j * n + i] = r;
    }
    if (!J) continue;
    if (j > 0) stage_curvature(C, &S[j], Lam, K); /* P_1m = 0: stage 1 has none */
    for (int i = 0; i < n; i++) {
      double *row = J + (size_t)(j * n + i) * dim;
      for (int m = 0; m < s - 1; m++) {
        const double dm = (j == m) + C->alpha * h * L->ahat[j][m], hp = h * C->P[j][m];
        for (int d = 0; d < n; d++) row[m * n + d] = dm * M[i * n + d] + (j > 0 ? hp * K[i * n + d] : 0);
        for (int a = 0; a < k; a++) row[lam0 + m * k + a] = j == m ? -S[j].A[a * n + i] : 0;
      }
    }
  }
}

/* The rows C_i = Σ_l a_il g(Q_l, V_l), i = 2..s, and (J not NULL) their Jacobian rows. */
static void constraint_rows(const spark_ctx *C, const stage *S, double *F, double *J, int dim) {
  const nh_lobatto_pair *L = C->L;
  const int n = C->sys->n, k = C->sys->k, s = L->s, row0 = (s - 1) * n;
  const double h = C->h;
  for (int i = 1; i < s; i++)
    for (int a = 0; a < k; a++) {
      const int r = row0 + (i - 1) * k + a;
      F[r] = 0;
      for (int l = 0; l < s; l++) F[r] += L->a[i][l] * S[l].g[a];
      if (!J) continue;
      double *row = J + (size_t)r * dim;
      memset(row, 0, sizeof(double) * (size_t)dim); /* ∂C/∂Λ = 0 */
      for (int m = 0; m < s - 1; m++)
        for (int d = 0; d < n; d++) {
          double e = 0;
          for (int l = 0; l < s; l++)
            e += L->a[i][l] * (L->ahat[l][m] * S[l].A[a * n + d] + (l > 0 ? h * C->P[l][m] * S[l].Dg[a * n + d] : 0));
          row[m * n + d] = e;
        }
    }
}

static void spark_residual(void *vctx, const double *X, double *F, double *J) {
  const spark_ctx *C = vctx;
  const int dim = (C->L->s - 1) * (C->sys->n + C->sys->k);
  stage S[NH_SPARK_MAX_S];
  stage_values(C, X, S);
  stage_constraints(C, S, J != NULL);
  momentum_rows(C, S, X, F, J, dim);
  constraint_rows(C, S, F, J, dim);
}

/* U_j = h a(t_k, q_k, v_k), Λ_j = hλ(t_k, q_k, v_k) for every j. Returns 0, or -1 where λ is undefined. */
static int spark_guess(const spark_ctx *C, double *X) {
  const nh_system *sys = C->sys;
  const int n = sys->n, k = sys->k, s = C->L->s;
  double lam[NH_MAX_K] = {0}, f[NH_MAX_N], acc[NH_MAX_N], Mv[NH_MAX_N];
  if (k > 0) {
    if (nh_multiplier(sys, C->t, C->q0, C->v0, lam) != 0) return -1;
    C->cost->rhs_evals++;
    C->cost->constraint_evals++;
  }
  nh_matvec(n, sys->M, C->v0, Mv);
  for (int i = 0; i < n; i++) {
    f[i] = C->force[0][i] - C->g0[i] - C->alpha * Mv[i];
    for (int a = 0; a < k; a++) f[i] += C->A0[a * n + i] * lam[a];
  }
  nh_mass_solve(sys, C->q0, f, acc);
  for (int j = 0; j < s - 1; j++) {
    for (int i = 0; i < n; i++) X[j * n + i] = C->h * acc[i];
    for (int a = 0; a < k; a++) X[(s - 1) * n + j * k + a] = C->h * lam[a];
  }
  return 0;
}

/* The stage unknowns X of the step from x (setup, guess, Newton). */
static nh_step_status solve_stages(const nh_method *m, const nh_system *sys, const nh_state *x, double h,
                                   spark_ctx *C, double *X, nh_cost *cost) {
  spark_setup(m, sys, x, h, C, cost);
  if (spark_guess(C, X) != 0) return NH_STEP_SOLVER_FAILED;
  return nh_newton_solve(spark_size(m, sys), X, spark_residual, C, cost);
}

/* q_{k+1} = Q_s and v_{k+1} the projection of v̂ onto D_{q_{k+1}}, λ_s = −y/(h b_s) (header). */
static nh_step_status spark_finish(const spark_ctx *C, const double *X, const nh_state *x, nh_state *y) {
  const nh_system *sys = C->sys;
  const nh_lobatto_pair *L = C->L;
  const int n = sys->n, k = sys->k, s = L->s;
  const double h = C->h;
  stage S[NH_SPARK_MAX_S];
  double f[NH_MAX_N], Mv[NH_MAX_N], acc[NH_MAX_N], A[NH_MAX_K * NH_MAX_N], b[NH_MAX_K], ylam[NH_MAX_K];
  stage_values(C, X, S);
  const stage *last = &S[s - 1];
  sys->type->grad_potential(sys->p, last->Q, f);
  C->cost->rhs_evals++;
  nh_matvec(n, sys->M, last->V, Mv);
  for (int i = 0; i < n; i++) f[i] = C->force[s - 1][i] - f[i] - C->alpha * Mv[i];
  nh_mass_solve(sys, last->Q, f, acc);
  *y = *x;
  y->t = x->t + h;
  for (int i = 0; i < n; i++) {
    double v = x->v[i] + h * L->b[s - 1] * acc[i];
    for (int j = 0; j < s - 1; j++) v += L->b[j] * X[j * n + i];
    y->q[i] = last->Q[i];
    y->v[i] = v;
  }
  constraint_at(C, y->q, A, b);
  if (nh_project_onto(sys, y->q, A, sys->type->affine ? b : NULL, y->v, ylam) != 0)
    return NH_STEP_SOLVER_FAILED;
  for (int a = 0; a < k; a++) y->lambda[a] = -ylam[a] / (h * L->b[s - 1]);
  return NH_STEP_OK;
}

static nh_step_status spark_step(const nh_method *m, const nh_system *sys, const nh_state *x, nh_state *y, double h,
                                 nh_cost *cost) {
  spark_ctx C;
  double X[NH_NEWTON_MAX_DIM];
  cost->steps++;
  nh_step_status st = solve_stages(m, sys, x, h, &C, X, cost);
  return st != NH_STEP_OK ? st : spark_finish(&C, X, x, y);
}

static void spark_newton_eval(const nh_method *m, const nh_system *sys, const nh_state *x, double h, const double *X,
                              double *F, double *J) {
  nh_cost scratch = {0};
  spark_ctx C;
  spark_setup(m, sys, x, h, &C, &scratch);
  spark_residual(&C, X, F, J);
}

/* The stages are not in y: the step from x solved again (NaN where it fails; y is not read). */
static void spark_newton_unknowns(const nh_method *m, const nh_system *sys, const nh_state *x,
                                  const nh_state *y NH_UNUSED, double h, double *X) {
  nh_cost scratch = {0};
  spark_ctx C;
  if (solve_stages(m, sys, x, h, &C, X, &scratch) == NH_STEP_OK) return;
  for (int i = 0; i < spark_size(m, sys); i++) X[i] = NAN;
}

/* g(q_{k+1}, v_{k+1}), (S5): round-off after every step. */
static void spark_constraint(const nh_method *m NH_UNUSED, const nh_system *sys, const nh_state *x NH_UNUSED,
                             const nh_state *y, double h, double *out) {
  nh_cost scratch = {0};
  spark_ctx C = {.sys = sys, .h = h, .cost = &scratch};
  double A[NH_MAX_K * NH_MAX_N];
  constraint_at(&C, y->q, A, out);
  for (int a = 0; a < sys->k; a++)
    for (int i = 0; i < sys->n; i++) out[a] += A[a * sys->n + i] * y->v[i];
}

static int spark_applies(const nh_method *m, const nh_system *sys, char *err, size_t errlen) {
  const int dim = spark_size(m, sys);
  if (dim <= NH_NEWTON_MAX_DIM) return 0;
  snprintf(err, errlen,
           "its stage system at s = %d has (s - 1)(n + k) = %d unknowns, more than the shared Newton solver's "
           "NH_NEWTON_MAX_DIM = %d",
           stages_of(m), dim, NH_NEWTON_MAX_DIM);
  return -1;
}

/* What the peers' codes call it (an unknown method of that name suggests it). */
static const nh_peer_name spark_peers[] = {
    {"Spark", "odelab", NULL},
    {NULL},
};

static const nh_newton_hooks spark_newton = {spark_size, spark_newton_eval, spark_newton_unknowns, NULL};

const nh_integrator_type nh_integrator_spark = {
    .name = "spark",
    .peer_names = spark_peers,
    .doc = "SPARK: the Lobatto IIIA-IIIB pair with s stages for the Lagrange-d'Alembert equations as an index-2 "
           "DAE (L. O. Jay, BIT 43 (2003) 93-106, as odelab's Spark and GeometricIntegrators.jl implement it): "
           "IIIA for q, IIIB for M v with a multiplier lambda_j at every stage, the constraint A(q)v + b(q) = 0 "
           "averaged over the stages with IIIA's rows 2..s and imposed exactly at the step's end. Newton on the "
           "stage velocity increments and h lambda_j ((s-1)(n+k) unknowns) with the analytic Jacobian. Order "
           "2s - 2 in q and v (s = 2, 3, 4: orders 2, 4, 6) where A M^-1 A^T stays invertible; symmetric; keeps D "
           "exactly. Handles damping, forcing and affine constraints; declines a configuration-dependent mass "
           "matrix.",
    .params = params,
    .nparams = P_COUNT,
    .data = nh_lobatto_pairs,
    .properties = NH_PRESERVES_CONSTRAINT,
    .handles = NH_SYS_AFFINE_CONSTRAINTS | NH_SYS_DAMPING | NH_SYS_FORCING,
    .applies_doc = "needs a constant mass matrix (its Newton Jacobian would need the second derivatives of M)",
    .applies = spark_applies,
    .order = spark_order,
    .is_symmetric = nh_always_symmetric,
    .step = spark_step,
    .lambda_time = NH_LAMBDA_END,
    .lambda_doc = "lambda_s, the multiplier of the last stage (c_s = 1), fixed by the end constraint (S5): "
                  "h b_s lambda_s = -C^-1 g(q_{k+1}, vhat); approximates lambda(t_{k+1}) to O(h^(s-1)) only",
    .discrete_constraint = spark_constraint,
    .discrete_constraint_doc = "(S5): A(q_{k+1}) v_{k+1} + b(q_{k+1}), the constraint at the step's end",
    .newton = &spark_newton,
};
