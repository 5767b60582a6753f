/* The Herglotz contact integrator with nonholonomic constraints (spec/herglotz.md §2.4, eq. (3.4))
 * and the paper's Lagrange–d'Alembert comparison integrator (4.4), one generic engine over a table
 * per scheme.
 *
 * Discrete contact Lagrangian (spec §2.5), with q̄ = (q_j + q_{j+1})/2, Δq = q_{j+1} − q_j:
 *   L_d(j) = T(q̄, Δq/h) − ½[V(q_j) + V(q_{j+1})] + ½[F_a·q_j + F_b·q_{j+1}] − α[(1−w) z_j + w z_{j+1}]
 * herglotz2: w = ½ (factor c₂ = (1 − αh/2)/(1 + αh/2)); herglotz1: w = 0 (factor c₁ = 1 − αh). The
 * force time level: (F_a, F_b) = (F(t_j), F(t_{j+1})) by default, which gives exactly the paper's
 * "F_j at node j" in both D1L_d(j) and D2L_d(j−1) (A.1–A.5), forcing=ends; forcing=midpoint takes
 * F(t_j + h/2) for both (spec §6, "Force time level").
 * The same L_d gives z: spec §2.6 step 3 writes F_j·q̄ there, which is not the L_d of A.1–A.5 and
 * makes z only first order for a time-dependent F; both agree for constant F. herglotz1 takes T at
 * the midpoint as well (for the constant mass of (4.7) the point does not matter).
 * Discrete constraint (spec §2.3, §6 affine part): A(q_d)Δq/h + b(q_d) = 0 with q_d = q̄ (herglotz2,
 * A.2–A.3) or q_j (herglotz1, (4.7)); the multiplier acts through A(q_j)ᵀ (spec §2.4).
 *
 * One-step form (spec §2.6): from (q_j, p_j), solve for (q_{j+1}, λ)
 *   D1L_d(q_j, q_{j+1}) + (1 + h D3) p_j / h = λ A(q_j)ᵀ,   A(q_d)Δq/h + b(q_d) = 0,
 * then p_{j+1} = h D2L_d(q_j, q_{j+1}) / (1 − h D4) and z_{j+1} = [(1 + h D3) z_j + h L̃_d]/(1 − h D4),
 * where D3 = −α(1−w), D4 = −αw and L̃_d is L_d without its z terms (z_0 = 0 at init).
 * The state velocity is v_j := the M(q_j)-orthogonal projection of M(q_j)⁻¹ p_j onto
 * D_{q_j} = {A(q_j)v + b(q_j) = 0} (nh_project_velocity), and the step takes p_j = M(q_j) v_j. This
 * is exactly the paper's scheme: p_j enters the step only through the first equation, where any
 * multiple of A(q_j)ᵀ is absorbed by λ, and the projection changes p_j only by such a multiple. It
 * also makes v_j an O(h²) velocity on D (p_j itself is off by O(h) along A(q_j)ᵀ). The
 * initialization p_0 = ∂L/∂q̇(q_0, q̇_0) of spec §2.6 is then the state itself.
 *
 * la1 is the paper's first-order LA integrator (4.4) in the same form, generalized from the system
 * interface: L_d = h L(q_j, Δq/h) (left point, so σ = ν = 0 below), forces
 * F_d^− = −α M(q_j)Δq + h F(t_j), F_d^+ = 0, and the same left-point discrete constraint as herglotz1.
 * Its p_{j+1} = M(q_j)Δq/h is a backward difference, so it does not start from p_0 = M(q_0)q̇_0 (a
 * first-order start) but from a second-order consistent one (la1_init below, issue 10).
 *
 * Observables (integrator.h). Multiplier: (3.4)'s λ has the opposite sign of nh_multiplier's (its
 * equation reads −(ṗ − ∂L/∂q) = λA with L_d ≈ L), and since the step starts from the projected
 * p_j (a multiple of A(q_j)ᵀ away from the paper's p_j⁺), it carries only the part of the node
 * impulse that falls after t_j; the paper's node multiplier is λ + (1 + hD3)y_j/h, with y_j the
 * previous projection's multiplier. The step therefore reports its whole constraint impulse per
 * unit time, λ̄ = −Λ/(h²(1 + hD3)) − y_{j+1}/h: (3.4)'s part at A(q_j) and the end projection's at
 * A(q_{j+1}), each half a step, which approximates λ(t_j + h/2) (to O(h²) for herglotz2, O(h) for
 * herglotz1 and la1; tests/integrators/test_method_hooks_js_herglotz.c). Discrete constraint: A(q_d)Δq/h +
 * b(q_d) at the scheme's point; energy: the midpoint energy of spec §6; Newton: the system below.
 * constraint_evals counts A(q_j), the predictor's A(q_j), one per iteration at x_γ (none for γ = 0:
 * the left-point constraint reuses A(q_j)) and the end projection's A(q_{j+1}).
 *
 * The unknowns are X = (Δq, Λ) with Λ = h²λ, and the first equation is multiplied by h², so the
 * Jacobian is O(1). The increment Δq, not q_{j+1}: p_{j+1} = M Δq/h then carries no cancellation
 * of q_{j+1} − q_j, whose rounding ulp(|q|)/h grows with |q| and as h shrinks (issue 46 item 1:
 * herglotz2's Φ_{−h}∘Φ_h defect was 1.7e-14 at h = 0.2/64 on the chaotic particle), and Newton's
 * stopping rule, relative to |X|, is relative to the increment. The Jacobian is analytic except for the term ⅛ ∂²M[Δq, Δq] (the interface has
 * no second derivative of M), which is taken by central differences of ∂M; it is O(h²) relative to
 * M, so Newton keeps its quadratic convergence and the shared solver's round-off tolerance (those
 * 2n mass-Jacobian calls per iteration have no cost counter; each residual counts one rhs_eval). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "integrators/integrator.h"
#include "integrators/newton.h"

enum { P_FORCING, P_SOLVE, P_COUNT };
enum { FORCING_ENDS, FORCING_MIDPOINT };
enum { SOLVE_NEWTON, SOLVE_CLOSED };

static const char *const forcing_choices[] = {[FORCING_ENDS] = "ends", [FORCING_MIDPOINT] = "midpoint", NULL};
static const char *const solve_choices[] = {[SOLVE_NEWTON] = "newton", [SOLVE_CLOSED] = "closed", NULL};

static const nh_param_desc params[] = {
    [P_FORCING] = {"forcing", NH_PARAM_CHOICE, FORCING_ENDS, 0, 1,
     "time level of F(t): ends = F(t_j) at node j as printed in A.1-A.5 (trapezoidal F.q in L_d), "
     "midpoint = F(t_j + h/2) at the midpoint (spec/herglotz.md 6)",
     1, forcing_choices},
    /* herglotz1 and la1 only (their nparams): herglotz2's midpoint constraint is not linear in dq */
    [P_SOLVE] = {"solve", NH_PARAM_CHOICE, SOLVE_NEWTON, 0, 1,
     "newton = the shared Newton solver; closed = the step in closed form, the predictor (the step without "
     "the constraint) plus its projection onto the left-point discrete constraint (spec/herglotz.md 2.7), "
     "exact for a constant mass matrix, where the step is linear in (dq, lambda)",
     1, solve_choices},
};
_Static_assert(sizeof params / sizeof *params == P_COUNT, "params[] and the P_* enum disagree");

/* The old spelling force=0|1, still read with a deprecation note. */
static const nh_param_alias aliases[] = {
    {"force", "0", "forcing", "ends"},
    {"force", "1", "forcing", "midpoint"},
    {NULL},
};

/* A scheme of the family. With x_s = q_j + s Δq:
 *   σ   point of T (the mass matrix): x_σ;      ν  weight of the right node in V and F;
 *   γ   point of the discrete constraint: x_γ;  w  weight of z_{j+1} in the −αz term (Herglotz);
 *   la  1: damping as the LA force −α M(q_j)Δq and no action (z is not tracked). */
typedef struct {
  double sigma, nu, gamma, w;
  int la, order;
} scheme;

static const scheme herglotz2_scheme = {.sigma = 0.5, .nu = 0.5, .gamma = 0.5, .w = 0.5, .order = 2};
static const scheme herglotz1_scheme = {.sigma = 0.5, .nu = 0.5, .gamma = 0, .w = 0, .order = 1};
static const scheme la1_scheme = {.sigma = 0, .nu = 0, .gamma = 0, .w = 0, .la = 1, .order = 1};

typedef struct {
  const nh_system *sys;
  const scheme *sc;
  int n, k;
  double h, kappa; /* kappa: coefficient of −M(x_σ)Δq, 1 + αh for la1, else 1 */
  const double *q0;
  double c[NH_MAX_N];             /* constant part of the first equation (·h²) */
  double A0[NH_MAX_K * NH_MAX_N]; /* A(q_j): the multiplier term, and the left-point constraint */
  double b0[NH_MAX_K];            /* b(q_j) */
  /* Constant mass and k > 0: engine_linear_solve eliminates the first block, whose Jacobian rows
   * it never reads (engine_residual then writes only the constraint rows), with W = M⁻¹A0ᵀ (n×k). */
  int block;
  double W[NH_MAX_N * NH_MAX_K];
  nh_cost *cost;
} engine_ctx;

/* g_i = ∂_i M[Δq, Δq] = Σ_jm ∂M_jm/∂q^i Δq_j Δq_m (2 h² ∂T/∂q at velocity Δq/h). */
static void mass_force(int n, const double *dM, const double *dq, double *g) {
  for (int i = 0; i < n; i++) {
    double s = 0;
    for (int j = 0; j < n; j++)
      for (int m = 0; m < n; m++) s += dM[(j * n + m) * n + i] * dq[j] * dq[m];
    g[i] = s;
  }
}

/* S_il = ∂_l g_i(x) at fixed Δq, by central differences of the mass Jacobian. */
static void mass_force_derivative(const nh_system *sys, const double *x, const double *dq, double *S) {
  const int n = sys->n;
  double xs[NH_MAX_N], dM[NH_MAX_N * NH_MAX_N * NH_MAX_N], gp[NH_MAX_N], gm[NH_MAX_N];
  memcpy(xs, x, sizeof(double) * (size_t)n);
  for (int l = 0; l < n; l++) {
    const double eps = 1e-5 * (1 + fabs(x[l]));
    xs[l] = x[l] + eps;
    sys->type->mass_jacobian(sys->p, xs, dM);
    mass_force(n, dM, dq, gp);
    xs[l] = x[l] - eps;
    sys->type->mass_jacobian(sys->p, xs, dM);
    mass_force(n, dM, dq, gm);
    xs[l] = x[l];
    for (int i = 0; i < n; i++) S[i * n + l] = (gp[i] - gm[i]) / (2 * eps);
  }
}

/* The configuration-dependent mass terms of the first equation at x_σ, added to F and J:
 *   F += ((1−σ)/2) g,
 *   J_il += −κσ Σ_j ∂_l M_ij Δq_j + (1−σ) Σ_j ∂_i M_jl Δq_j + ((1−σ)σ/2) S_il. */
static void add_mass_terms(const engine_ctx *C, const double *xs, const double *dq, double *F, double *J, int dim) {
  const nh_system *sys = C->sys;
  const int n = C->n;
  const double sg = C->sc->sigma;
  double dM[NH_MAX_N * NH_MAX_N * NH_MAX_N], g[NH_MAX_N], S[NH_MAX_N * NH_MAX_N] = {0};
  sys->type->mass_jacobian(sys->p, xs, dM);
  mass_force(n, dM, dq, g);
  if (sg != 0) mass_force_derivative(sys, xs, dq, S);
  for (int i = 0; i < n; i++) {
    F[i] += 0.5 * (1 - sg) * g[i];
    for (int l = 0; l < n; l++) {
      double a = 0, b = 0;
      for (int j = 0; j < n; j++) {
        a += dM[(i * n + j) * n + l] * dq[j];
        b += dM[(j * n + l) * n + i] * dq[j];
      }
      J[i * dim + l] += -C->kappa * sg * a + (1 - sg) * b + 0.5 * (1 - sg) * sg * S[i * n + l];
    }
  }
}

/* The discrete constraint rows, ·h: G_a = A_a(x_γ)Δq + h b_a(x_γ), and their Jacobian. At the left
 * point (γ = 0) they are linear in Δq with the matrix A(q_j) of the multiplier term. */
static void constraint_rows(const engine_ctx *C, const double *dq, double *F, double *J, int dim) {
  const nh_system *sys = C->sys;
  const int n = C->n, k = C->k;
  const double gm = C->sc->gamma, h = C->h;
  if (gm == 0) {
    for (int a = 0; a < k; a++) {
      double s = h * C->b0[a];
      for (int i = 0; i < n; i++) s += C->A0[a * n + i] * dq[i];
      F[n + a] = s;
      for (int l = 0; l < n; l++) J[(n + a) * dim + l] = C->A0[a * n + l];
    }
    return;
  }
  double x[NH_MAX_N], A[NH_MAX_K * NH_MAX_N], D[NH_MAX_K * NH_MAX_N];
  double b[NH_MAX_K], db[NH_MAX_K * NH_MAX_N];
  const nh_affine_constraints *affine = sys->type->affine; /* NULL: b = 0, not even zeroed, it is hot */
  for (int i = 0; i < n; i++) x[i] = C->q0[i] + gm * dq[i];
  sys->type->constraints(sys->p, x, A);
  C->cost->constraint_evals++;
  nh_constraint_derivative(sys, x, dq, D);
  if (affine) {
    affine->values(sys->p, x, b);
    affine->jacobian(sys->p, x, db);
  }
  for (int a = 0; a < k; a++) {
    double s = affine ? h * b[a] : 0;
    for (int i = 0; i < n; i++) s += A[a * n + i] * dq[i];
    F[n + a] = s;
    for (int l = 0; l < n; l++) {
      const double curv = D[a * n + l];
      J[(n + a) * dim + l] = A[a * n + l] + gm * (affine ? curv + h * db[a * n + l] : curv);
    }
  }
}

/* Residual and Jacobian; X = [Δq | Λ], q_{j+1} = q_j + Δq. First equation (h² × (3.4)):
 *   R = −κ M(x_σ)Δq + ((1−σ)/2) ∂M(x_σ)[Δq, Δq] + c − A(q_j)ᵀΛ. */
static void engine_residual(void *vctx, const double *X, double *F, double *J) {
  const engine_ctx *C = vctx;
  const nh_system *sys = C->sys;
  const int n = C->n, k = C->k, dim = n + k;
  const double *dq = X, *L = X + n;
  double xs[NH_MAX_N] = {0}, Mspace[NH_MAX_N * NH_MAX_N], space[NH_MAX_N];
  if (!sys->constant_mass)
    for (int i = 0; i < n; i++) xs[i] = C->q0[i] + C->sc->sigma * dq[i];
  const double *M = nh_mass_at(sys, xs, Mspace), *Mdq = nh_mass_times(sys, M, dq, space);
  const int first_rows = !C->block; /* the block solve reads only the constraint rows */
  if (first_rows) memset(J, 0, sizeof(double) * (size_t)(dim * dim));
  for (int i = 0; i < n; i++) {
    double s = C->c[i] - C->kappa * Mdq[i];
    for (int a = 0; a < k; a++) s -= C->A0[a * n + i] * L[a];
    F[i] = s;
    if (!first_rows) continue;
    for (int j = 0; j < n; j++) J[i * dim + j] = -C->kappa * M[i * n + j];
    for (int a = 0; a < k; a++) J[i * dim + n + a] = -C->A0[a * n + i];
  }
  if (!sys->constant_mass) add_mass_terms(C, xs, dq, F, J, dim);
  constraint_rows(C, dq, F, J, dim);
  C->cost->rhs_evals++;
}

/* J d = b for engine_residual's Jacobian with a constant mass: J = [−κM  −A0ᵀ; G  0] (G the
 * constraint rows' Jacobian), so d_q = −M⁻¹(b_1 + A0ᵀd_Λ)/κ and the k×k Schur complement
 * (G M⁻¹A0ᵀ) d_Λ = −κ b_2 − G M⁻¹b_1 (block elimination, issue 11: k unknowns instead of n + k).
 * A variable mass keeps the general LU (the mass terms make the first block depend on Δq). */
static int engine_linear_solve(void *vctx, int dim, double *J, double *b) {
  const engine_ctx *C = vctx;
  const nh_system *sys = C->sys;
  const int n = C->n, k = C->k;
  if (!C->block) return nh_lu_solve(dim, J, b);
  const double *W = C->W;
  double space[NH_MAX_N], S[NH_MAX_K * NH_MAX_K], r[NH_MAX_K];
  const double *Mb = sys->unit_mass ? b : space; /* M⁻¹ b_1 (b itself for M = I) */
  if (!sys->unit_mass) nh_mass_solve(sys, NULL, b, space);
  for (int a = 0; a < k; a++) {
    const double *G = J + (n + a) * dim;
    double s = -C->kappa * b[n + a];
    for (int i = 0; i < n; i++) s -= G[i] * Mb[i];
    r[a] = s;
    for (int c = 0; c < k; c++) {
      double t = 0;
      for (int i = 0; i < n; i++) t += G[i] * W[i * k + c];
      S[a * k + c] = t;
    }
  }
  if (nh_lu_solve(k, S, r) != 0) return -1;
  for (int i = 0; i < n; i++) {
    double s = Mb[i];
    for (int c = 0; c < k; c++) s += W[i * k + c] * r[c];
    b[i] = C->kappa == 1 ? -s : -s / C->kappa; /* the same number, without a division */
  }
  for (int a = 0; a < k; a++) b[n + a] = r[a];
  return 0;
}

/* α is constant here: the engine declines NH_SYS_TIME_DAMPING and NH_SYS_TIME_POTENTIAL (not in
 * ALL_FEATURES). Its L_d takes α once per step in the factor c₂ = (1 − αh/2)/(1 + αh/2) and V at
 * both ends; an α(t_j + h/2) in c₂ would keep the symmetric step second order, but spec/herglotz.md
 * derives no such scheme (its A.1–A.5 are for a constant α), and a W(q, t) at the two ends would
 * bring ∇²W(·, t_{j+1}) into the Newton system: a new discretization to derive, not an extension.
 * So α is read once, as nh_damping(sys, 0). */

/* The forces of a step at the two ends of L_d's F·q term, (F_a, F_b) (spec §2.5). */
typedef struct {
  const double *a, *b;
  double space[2][NH_MAX_N];
} step_forces;

static const double no_force[NH_MAX_N]; /* F ≡ 0: read, never cleared per step */

/* F at time t in `space` (one force evaluation), or no_force without forcing. */
static const double *force_at(const nh_system *sys, double t, double *space, nh_cost *cost) {
  const nh_system_forces *fs = sys->type->forces;
  if (!fs || !fs->forcing) return no_force;
  fs->forcing(sys->p, t, space);
  cost->rhs_evals++;
  return space;
}

/* M(q) v = p, then the M-orthogonal projection onto D_q: the state velocity (see the header); y its
 * multiplier, p − A(q)ᵀy = M(q)v. */
static int velocity_from_momentum(const nh_system *sys, const double *q, const double *p, double *v, double *y,
                                  nh_cost *cost) {
  if (nh_mass_solve(sys, q, p, v) != 0) return -1;
  if (sys->k) cost->constraint_evals++;
  return nh_project_velocity_multiplier(sys, q, v, y);
}

/* h·D2L_d(q_j, q_{j+1}) = M(x_σ)Δq/h + (σ/(2h)) ∂M(x_σ)[Δq, Δq] + hν (F_b − ∇V(q_{j+1})), from
 * the increment Δq (q_{j+1} = q_j + Δq as rounded). */
static void right_momentum(const nh_system *sys, const scheme *sc, const double *q0, const double *dq,
                           const double *q1, const double *Fb, double h, double *p) {
  const int n = sys->n, mass_terms = !sys->constant_mass; /* x_σ and ∂M only for a variable M */
  double xs[NH_MAX_N] = {0}, Mspace[NH_MAX_N * NH_MAX_N], g1[NH_MAX_N], space[NH_MAX_N];
  if (mass_terms)
    for (int i = 0; i < n; i++) xs[i] = q0[i] + sc->sigma * dq[i];
  const double *Mdq = nh_mass_times(sys, nh_mass_at(sys, xs, Mspace), dq, space);
  sys->type->grad_potential(sys->p, q1, g1);
  for (int i = 0; i < n; i++) p[i] = Mdq[i] / h + h * sc->nu * (Fb[i] - g1[i]);
  if (mass_terms && sc->sigma != 0) {
    double dM[NH_MAX_N * NH_MAX_N * NH_MAX_N], gq[NH_MAX_N];
    sys->type->mass_jacobian(sys->p, xs, dM);
    mass_force(n, dM, dq, gq);
    for (int i = 0; i < n; i++) p[i] += sc->sigma / (2 * h) * gq[i];
  }
}

/* L̃_d = T(q̄, Δq/h) − ½[V(q_j) + V(q_{j+1})] + ½[F_a·q_j + F_b·q_{j+1}]: the z-free part of L_d,
 * with the increment Δq of the step (q_{j+1} = q_j + Δq). */
static double lagrangian_d(const nh_system *sys, const double *q0, const double *dq, const double *q1,
                           const double *Fa, const double *Fb, double h) {
  const int n = sys->n;
  double qbar[NH_MAX_N], vel[NH_MAX_N], work = 0;
  for (int i = 0; i < n; i++) {
    qbar[i] = q0[i] + 0.5 * dq[i];
    vel[i] = dq[i] / h;
    work += 0.5 * (Fa[i] * q0[i] + Fb[i] * q1[i]);
  }
  const double V = 0.5 * (sys->type->potential(sys->p, q0) + sys->type->potential(sys->p, q1));
  return nh_kinetic_energy(sys, qbar, vel) - V + work;
}

/* (1 + h D3) and (1 − h D4) of the scheme; la1 keeps 1 and puts the damping into κ. */
static void damping_factors(const scheme *sc, double alpha, double h, double *c_minus, double *c_plus) {
  *c_minus = sc->la ? 1 : 1 - alpha * (1 - sc->w) * h;
  *c_plus = sc->la ? 1 : 1 + alpha * sc->w * h;
}

/* The Newton system of the step from x (the forces at the time level of m's `forcing`), with one
 * counted evaluation of A(q_j). */
static void engine_setup(const nh_method *m, const nh_system *sys, const nh_state *x, double h, engine_ctx *C,
                         step_forces *F, nh_cost *cost) {
  const scheme *sc = m->type->data;
  const int n = sys->n, k = sys->k;
  const double alpha = nh_damping(sys, 0);
  double c_minus, c_plus, Mspace[NH_MAX_N * NH_MAX_N], g0[NH_MAX_N], space[NH_MAX_N];
  damping_factors(sc, alpha, h, &c_minus, &c_plus);
  /* field by field: a compound literal would zero the arrays as well, every step */
  C->sys = sys, C->sc = sc, C->n = n, C->k = k, C->h = h, C->kappa = sc->la ? 1 + alpha * h : 1;
  C->q0 = x->q, C->cost = cost, C->block = 0;
  if (m->p[P_FORCING] == FORCING_MIDPOINT) {
    F->a = F->b = force_at(sys, x->t + 0.5 * h, F->space[0], cost);
  } else {
    F->a = force_at(sys, x->t, F->space[0], cost);
    F->b = force_at(sys, x->t + h, F->space[1], cost);
  }
  const double *p0 = nh_mass_times(sys, nh_mass_at(sys, x->q, Mspace), x->v, space); /* p_j = M(q_j) v_j */
  sys->type->grad_potential(sys->p, x->q, g0);
  if (k) {
    sys->type->constraints(sys->p, x->q, C->A0);
    cost->constraint_evals++;
    if (sys->type->affine) sys->type->affine->values(sys->p, x->q, C->b0);
    else memset(C->b0, 0, sizeof(double) * (size_t)k);
  }
  cost->rhs_evals++;
  for (int i = 0; i < n; i++) C->c[i] = h * c_minus * p0[i] + h * h * (1 - sc->nu) * (F->a[i] - g0[i]);
}

/* X = [Δq | Λ] by Newton from a Taylor predictor with the index-reduced acceleration; Λ enters
 * linearly with a constant Jacobian column, so its start value does not matter. */
static nh_step_status newton_unknowns(const nh_system *sys, const nh_state *x, double h, engine_ctx *C, double *X,
                                      nh_cost *cost) {
  const int n = sys->n, k = sys->k;
  double acc[NH_MAX_N];
  if (nh_acceleration(sys, x->t, x->q, x->v, acc) != 0) return NH_STEP_SOLVER_FAILED;
  cost->rhs_evals++;
  if (k) cost->constraint_evals++; /* nh_acceleration evaluates A(q_j) */
  for (int i = 0; i < n + k; i++) X[i] = i < n ? h * x->v[i] + 0.5 * h * h * acc[i] : 0; /* Δq, Λ */
  return nh_newton_solve_with(n + k, X, engine_residual, engine_linear_solve, C, cost);
}

/* X = [Δq | Λ] in closed form (solve=closed; a left-point constraint and a constant M, where
 * engine_residual is linear): the predictor Δq* = M⁻¹c/κ (the first equation at Λ = 0), then its
 * projection onto A(q_j)Δq + h b(q_j) = 0 along W = M⁻¹A(q_j)ᵀ, (A W/κ)Λ = A Δq* + h b and
 * Δq = Δq* − WΛ/κ: spec/herglotz.md §2.7's closed-form updates, for every such system. */
static nh_step_status closed_form_unknowns(const nh_system *sys, double h, const engine_ctx *C, double *X,
                                           nh_cost *cost) {
  const int n = sys->n, k = sys->k;
  double S[NH_MAX_K * NH_MAX_K];
  nh_mass_solve(sys, NULL, C->c, X);
  for (int i = 0; i < n; i++) X[i] /= C->kappa;
  for (int a = 0; a < k; a++) {
    double r = h * C->b0[a];
    for (int i = 0; i < n; i++) r += C->A0[a * n + i] * X[i];
    X[n + a] = r;
    for (int b = 0; b < k; b++) {
      double t = 0;
      for (int i = 0; i < n; i++) t += C->A0[a * n + i] * C->W[i * k + b];
      S[a * k + b] = t / C->kappa;
    }
  }
  if (k && nh_lu_solve(k, S, X + n) != 0) return NH_STEP_SOLVER_FAILED;
  if (k) cost->linear_solves++;
  for (int i = 0; i < n; i++)
    for (int a = 0; a < k; a++) X[i] -= C->W[i * k + a] * X[n + a] / C->kappa;
  return NH_STEP_OK;
}

static nh_step_status engine_step(const nh_method *m, const nh_system *sys, const nh_state *x, nh_state *y,
                                  double h, nh_cost *cost) {
  const scheme *sc = m->type->data;
  const int n = sys->n, k = sys->k;
  double c_minus, c_plus;
  step_forces F;
  engine_ctx C;
  damping_factors(sc, nh_damping(sys, 0), h, &c_minus, &c_plus);
  cost->steps++;
  engine_setup(m, sys, x, h, &C, &F, cost);
  C.block = sys->constant_mass && k > 0; /* (the observables' hooks keep the whole Jacobian) */
  if (C.block) nh_mass_solve_transpose(sys, C.A0, C.W);
  double X[NH_NEWTON_MAX_DIM];
  const int closed = m->type->nparams > P_SOLVE && m->p[P_SOLVE] == SOLVE_CLOSED;
  nh_step_status st = closed ? closed_form_unknowns(sys, h, &C, X, cost) : newton_unknowns(sys, x, h, &C, X, cost);
  if (st != NH_STEP_OK) return st;

  /* The engine's schemes carry nothing: y's fields are written below (z kept by la1). */
  y->z = x->z;
  y->t = x->t + h;
  for (int i = 0; i < n; i++) y->q[i] = x->q[i] + X[i];
  double p1[NH_MAX_N], yk[NH_MAX_K];
  right_momentum(sys, sc, x->q, X, y->q, F.b, h, p1);
  cost->rhs_evals++;
  if (c_plus != 1)
    for (int i = 0; i < n; i++) p1[i] /= c_plus;
  if (velocity_from_momentum(sys, y->q, p1, y->v, yk, cost) != 0) return NH_STEP_SOLVER_FAILED;
  /* The step's constraint impulse, in the +Aᵀλ sign: −(h/c₋)λ A(q_j)ᵀ from (3.4) (p_j − p_j^− with
   * Λ = h²λ) and −A(q_{j+1})ᵀy from the projection; per unit time, the step's multiplier. */
  for (int a = 0; a < k; a++) y->lambda[a] = -X[n + a] / (h * h * c_minus) - yk[a] / h;
  /* (3.2): z_{j+1} − z_j = h L_d, solved for z_{j+1} (L_d is affine in z). */
  if (!sc->la) y->z = (c_minus * x->z + h * lagrangian_d(sys, x->q, X, y->q, F.a, F.b, h)) / c_plus;
  return NH_STEP_OK;
}

/* ---- in lanes (core/lanes.h): engine_step on NH_LANES states, for a constant mass matrix, linear
 * constraints and no forcing (engine_has_lanes); the same operations on every lane ---------------- */

/* engine_ctx in lanes (block form: the first Jacobian rows are never written nor read). */
typedef struct {
  const nh_system *sys;
  const scheme *sc;
  int n, k;
  double h, kappa;
  const double *q0;
  NH_LANES_ALIGNED double c[NH_MAX_N * NH_LANES], A0[NH_MAX_K * NH_MAX_N * NH_LANES], b0[NH_MAX_K * NH_LANES];
  NH_LANES_ALIGNED double W[NH_MAX_N * NH_MAX_K * NH_LANES];
  nh_cost *cost;
} engine_lanes_ctx;

/* engine_residual's F and constraint rows of J on every lane. */
static inline NH_LANES_INLINE void residual_shaped_lanes(const engine_lanes_ctx *C, const double *X, const int *running,
                                                         double *F, double *J, const int n, const int k) {
  const nh_system *sys = C->sys;
  const int dim = n + k;
  const double gm = C->sc->gamma, h = C->h, kappa = C->kappa;
  const double *dq = X, *L = NH_LANE_ROW(X, n);
  NH_LANES_ALIGNED double space[NH_MAX_N * NH_LANES];
  const double *Mdq = nh_lanes_mass_times(sys, dq, space);
  /* Each row summed in a local accumulator and stored once: summed in place in F, each term waited
   * for the store of the one before. */
  for (int i = 0; i < n; i++) {
    double s[NH_LANES];
#pragma omp simd
    for (int l = 0; l < NH_LANES; l++) s[l] = NH_LANE_AT(C->c, i, l) - kappa * NH_LANE_AT(Mdq, i, l);
    for (int a = 0; a < k; a++) {
#pragma omp simd
      for (int l = 0; l < NH_LANES; l++) s[l] -= NH_LANE_AT(C->A0, a * n + i, l) * NH_LANE_AT(L, a, l);
    }
#pragma omp simd
    for (int l = 0; l < NH_LANES; l++) NH_LANE_AT(F, i, l) = s[l];
  }
  /* constraint_rows: at the left point with A(q_j), else at x_γ (no affine part here: b = 0) */
  NH_LANES_ALIGNED double x[NH_MAX_N * NH_LANES], A[NH_MAX_K * NH_MAX_N * NH_LANES], D[NH_MAX_K * NH_MAX_N * NH_LANES];
  const double *At = C->A0;
  if (gm != 0) {
#pragma omp simd
    for (int i = 0; i < n * NH_LANES; i++) x[i] = C->q0[i] + gm * dq[i];
    nh_lanes_constraints(sys, x, A);
    NH_LANES_COUNT(C->cost, running, constraint_evals);
    nh_lanes_constraint_derivative(sys, x, dq, D);
    At = A;
  }
  /* gm == 0 or not: one branch around each lane loop, not a select in it (which GCC left scalar) */
  for (int a = 0; a < k; a++) {
    double s[NH_LANES];
    if (gm == 0) {
#pragma omp simd
      for (int l = 0; l < NH_LANES; l++) s[l] = h * NH_LANE_AT(C->b0, a, l);
    } else {
#pragma omp simd
      for (int l = 0; l < NH_LANES; l++) s[l] = 0;
    }
    for (int i = 0; i < n; i++) {
#pragma omp simd
      for (int l = 0; l < NH_LANES; l++) s[l] += NH_LANE_AT(At, a * n + i, l) * NH_LANE_AT(dq, i, l);
    }
#pragma omp simd
    for (int l = 0; l < NH_LANES; l++) NH_LANE_AT(F, n + a, l) = s[l];
    for (int j = 0; j < n; j++) {
      double *const Jaj = NH_LANE_ROW(J, (n + a) * dim + j);
      if (gm == 0) {
#pragma omp simd
        for (int l = 0; l < NH_LANES; l++) Jaj[l] = NH_LANE_AT(At, a * n + j, l);
      } else {
#pragma omp simd
        for (int l = 0; l < NH_LANES; l++) Jaj[l] = NH_LANE_AT(At, a * n + j, l) + gm * NH_LANE_AT(D, a * n + j, l);
      }
    }
  }
  NH_LANES_COUNT(C->cost, running, rhs_evals);
}
/* With n and k constants for the common shapes (NH_LANES_SHAPED, core/lanes.h). */
static inline NH_LANES_INLINE void engine_residual_lanes_lanes(void *vctx, const double *X, const int *running,
                                                               double *F, double *J) {
  const engine_lanes_ctx *C = vctx;
  NH_LANES_SHAPED(C->n, C->k, residual_shaped_lanes, C, X, running, F, J);
}
NH_LANES_ISA_VARIANTS(engine_residual_lanes, (void *vctx, const double *X, const int *running, double *F, double *J),
                      (vctx, X, running, F, J))

/* engine_linear_solve's block elimination on every lane. */
static inline NH_LANES_INLINE void linear_solve_shaped_lanes(const engine_lanes_ctx *C, int dim, double *J, double *b,
                                                             int *failed, const int n, const int k) {
  const double kappa = C->kappa;
  NH_LANES_ALIGNED double space[NH_MAX_N * NH_LANES], S[NH_MAX_K * NH_MAX_K * NH_LANES], r[NH_MAX_K * NH_LANES];
  const double *Mb = nh_lanes_mass_solved(C->sys, b, space);
  for (int a = 0; a < k; a++) {
    const double *G = NH_LANE_ROW(J, (n + a) * dim);
    /* Sums in local accumulators, stored once: summed in place in r and S, each term waited for
     * the store of the one before (the rows may alias J, for all GCC knows). */
    double s[NH_LANES];
#pragma omp simd
    for (int l = 0; l < NH_LANES; l++) s[l] = -kappa * NH_LANE_AT(b, n + a, l);
    for (int i = 0; i < n; i++) {
#pragma omp simd
      for (int l = 0; l < NH_LANES; l++) s[l] -= NH_LANE_AT(G, i, l) * NH_LANE_AT(Mb, i, l);
    }
#pragma omp simd
    for (int l = 0; l < NH_LANES; l++) NH_LANE_AT(r, a, l) = s[l];
    for (int c = 0; c < k; c++) {
      double t[NH_LANES];
#pragma omp simd
      for (int l = 0; l < NH_LANES; l++) t[l] = 0;
      for (int i = 0; i < n; i++) {
#pragma omp simd
        for (int l = 0; l < NH_LANES; l++) t[l] += NH_LANE_AT(G, i, l) * NH_LANE_AT(C->W, i * k + c, l);
      }
#pragma omp simd
      for (int l = 0; l < NH_LANES; l++) NH_LANE_AT(S, a * k + c, l) = t[l];
    }
  }
  nh_lanes_lu_solve(k, S, r, failed);
  for (int i = 0; i < n; i++) {
    double s[NH_LANES];
#pragma omp simd
    for (int l = 0; l < NH_LANES; l++) s[l] = NH_LANE_AT(Mb, i, l);
    for (int c = 0; c < k; c++) {
#pragma omp simd
      for (int l = 0; l < NH_LANES; l++) s[l] += NH_LANE_AT(C->W, i * k + c, l) * NH_LANE_AT(r, c, l);
    }
    if (kappa == 1) { /* a branch around the lane loops: a select in one kept the division on the Newton step's path */
#pragma omp simd
      for (int l = 0; l < NH_LANES; l++) NH_LANE_AT(b, i, l) = -s[l];
    } else {
#pragma omp simd
      for (int l = 0; l < NH_LANES; l++) NH_LANE_AT(b, i, l) = -s[l] / kappa;
    }
  }
  memcpy(NH_LANE_ROW(b, n), r, sizeof(double) * (size_t)(k * NH_LANES));
}
static inline NH_LANES_INLINE void engine_linear_solve_lanes_lanes(void *vctx, int dim, double *J, double *b,
                                                                   int *failed) {
  const engine_lanes_ctx *C = vctx;
  NH_LANES_SHAPED(C->n, C->k, linear_solve_shaped_lanes, C, dim, J, b, failed);
}
NH_LANES_ISA_VARIANTS(engine_linear_solve_lanes, (void *vctx, int dim, double *J, double *b, int *failed),
                      (vctx, dim, J, b, failed))

/* engine_setup and newton_unknowns' predictor on every lane; running[l] = 0 where the acceleration
 * is undefined. */
static inline NH_LANES_INLINE void engine_setup_lanes_lanes(const nh_system *sys, const scheme *sc, const nh_lanes *x,
                                                            double h, double c_minus, engine_lanes_ctx *C, int *running,
                                                            double *X, nh_cost *cost) {
  const int n = sys->n, k = sys->k;
  const double alpha = nh_damping(sys, 0);
  NH_LANES_ALIGNED double space[NH_MAX_N * NH_LANES], g0[NH_MAX_N * NH_LANES], acc[NH_MAX_N * NH_LANES],
      lambda[NH_MAX_K * NH_LANES];
  int failed[NH_LANES];
  C->sys = sys, C->sc = sc, C->n = n, C->k = k, C->h = h, C->kappa = sc->la ? 1 + alpha * h : 1;
  C->q0 = &x->q[0][0], C->cost = cost;
  const double *p0 = nh_lanes_mass_times(sys, &x->v[0][0], space);
  nh_lanes_grad_potential(sys, &x->q[0][0], g0);
  nh_lanes_constraints(sys, &x->q[0][0], C->A0);
  NH_LANES_COUNT(cost, running, constraint_evals);
  memset(C->b0, 0, sizeof(double) * (size_t)(k * NH_LANES));
  NH_LANES_COUNT(cost, running, rhs_evals);
#pragma omp simd
  for (int i = 0; i < n * NH_LANES; i++) /* F_a = 0 (no forcing): no_force's zeros */
    C->c[i] = h * c_minus * p0[i] + h * h * (1 - sc->nu) * (no_force[0] - g0[i]);
  nh_lanes_mass_solve_transpose(sys, C->A0, C->W);
  nh_lanes_acceleration(sys, x->t, &x->q[0][0], &x->v[0][0], acc, lambda, failed);
  for (int l = 0; l < NH_LANES; l++) running[l] = running[l] && !failed[l];
  NH_LANES_COUNT(cost, running, rhs_evals);
  NH_LANES_COUNT(cost, running, constraint_evals);
#pragma omp simd
  for (int i = 0; i < n * NH_LANES; i++) X[i] = h * (&x->v[0][0])[i] + 0.5 * h * h * acc[i];
  memset(NH_LANE_ROW(X, n), 0, sizeof(double) * (size_t)(k * NH_LANES));
}
NH_LANES_ISA_VARIANTS(engine_setup_lanes,
                      (const nh_system *sys, const scheme *sc, const nh_lanes *x, double h, double c_minus,
                       engine_lanes_ctx *C, int *running, double *X, nh_cost *cost),
                      (sys, sc, x, h, c_minus, C, running, X, cost))

/* The end of engine_step on every lane: q_{j+1}, the velocity from right_momentum's p_{j+1}, the
 * multiplier and z. */
static inline NH_LANES_INLINE void engine_finish_lanes_lanes(const nh_system *sys, const scheme *sc, const nh_lanes *x,
                                                             const double *X, double h, double c_minus, double c_plus,
                                                             int *running, nh_lanes *y, nh_cost *cost) {
  const int n = sys->n, k = sys->k;
  NH_LANES_ALIGNED double space[NH_MAX_N * NH_LANES], g1[NH_MAX_N * NH_LANES], p1[NH_MAX_N * NH_LANES],
      A1[NH_MAX_K * NH_MAX_N * NH_LANES];
  NH_LANES_ALIGNED double yk[NH_MAX_K * NH_LANES];
  int failed[NH_LANES];
#pragma omp simd
  for (int l = 0; l < NH_LANES; l++) y->z[l] = x->z[l], y->t[l] = x->t[l] + h;
#pragma omp simd
  for (int i = 0; i < n * NH_LANES; i++) (&y->q[0][0])[i] = (&x->q[0][0])[i] + X[i];
  const double *Mdq = nh_lanes_mass_times(sys, X, space);
  nh_lanes_grad_potential(sys, &y->q[0][0], g1);
#pragma omp simd
  for (int i = 0; i < n * NH_LANES; i++) p1[i] = Mdq[i] / h + h * sc->nu * (no_force[0] - g1[i]);
  NH_LANES_COUNT(cost, running, rhs_evals);
  if (c_plus != 1)
#pragma omp simd
    for (int i = 0; i < n * NH_LANES; i++) p1[i] /= c_plus;
  nh_lanes_mass_solve(sys, p1, &y->v[0][0]); /* velocity_from_momentum */
  NH_LANES_COUNT(cost, running, constraint_evals);
  nh_lanes_constraints(sys, &y->q[0][0], A1);
  nh_lanes_project_onto(sys, A1, &y->v[0][0], yk, failed);
  for (int l = 0; l < NH_LANES; l++) running[l] = running[l] && !failed[l];
  for (int a = 0; a < k; a++) {
#pragma omp simd
    for (int l = 0; l < NH_LANES; l++)
      y->lambda[a][l] = -NH_LANE_AT(X, n + a, l) / (h * h * c_minus) - NH_LANE_AT(yk, a, l) / h;
  }
  if (sc->la) return;
  /* lagrangian_d */
  NH_LANES_ALIGNED double qbar[NH_MAX_N * NH_LANES], vel[NH_MAX_N * NH_LANES];
  double work[NH_LANES] = {0}, V0[NH_LANES], V1[NH_LANES], T[NH_LANES];
  for (int i = 0; i < n; i++) {
#pragma omp simd
    for (int l = 0; l < NH_LANES; l++) {
      NH_LANE_AT(qbar, i, l) = x->q[i][l] + 0.5 * NH_LANE_AT(X, i, l);
      NH_LANE_AT(vel, i, l) = NH_LANE_AT(X, i, l) / h;
      work[l] += 0.5 * (no_force[i] * x->q[i][l] + no_force[i] * y->q[i][l]);
    }
  }
  nh_lanes_potential(sys, &x->q[0][0], V0);
  nh_lanes_potential(sys, &y->q[0][0], V1);
  nh_lanes_kinetic_energy(sys, qbar, vel, T);
#pragma omp simd
  for (int l = 0; l < NH_LANES; l++) {
    const double Ld = T[l] - 0.5 * (V0[l] + V1[l]) + work[l];
    y->z[l] = (c_minus * x->z[l] + h * Ld) / c_plus;
  }
}
NH_LANES_ISA_VARIANTS(engine_finish_lanes,
                      (const nh_system *sys, const scheme *sc, const nh_lanes *x, const double *X, double h,
                       double c_minus, double c_plus, int *running, nh_lanes *y, nh_cost *cost),
                      (sys, sc, x, X, h, c_minus, c_plus, running, y, cost))

static void engine_step_lanes(const nh_method *m, const nh_system *sys, const nh_lanes *x, nh_lanes *y, double h,
                              const int *live, nh_step_status *status, nh_cost *cost) {
  const scheme *sc = m->type->data;
  const int n = sys->n, k = sys->k;
  double c_minus, c_plus, X[NH_NEWTON_MAX_DIM * NH_LANES];
  int running[NH_LANES];
  nh_step_status solved[NH_LANES];
  engine_lanes_ctx C;
  damping_factors(sc, nh_damping(sys, 0), h, &c_minus, &c_plus);
  for (int l = 0; l < NH_LANES; l++) running[l] = live[l];
  NH_LANES_COUNT(cost, running, steps);
  engine_setup_lanes(sys, sc, x, h, c_minus, &C, running, X, cost);
  nh_newton_solve_lanes_with(n + k, X, engine_residual_lanes, engine_linear_solve_lanes, &C, running, solved, cost);
  for (int l = 0; l < NH_LANES; l++) running[l] = running[l] && solved[l] == NH_STEP_OK;
  engine_finish_lanes(sys, sc, x, X, h, c_minus, c_plus, running, y, cost);
  for (int l = 0; l < NH_LANES; l++)
    if (live[l]) status[l] = running[l] ? NH_STEP_OK : NH_STEP_SOLVER_FAILED;
}

/* Lanes where the step is the block-eliminated Newton step of a constant mass, with linear
 * constraints and no forcing (the paper's contact systems with forcing step one at a time). */
static int engine_has_lanes(const nh_method *m, const nh_system *sys) {
  const nh_system_forces *fs = sys->type->forces;
  const int closed = m->type->nparams > P_SOLVE && m->p[P_SOLVE] == SOLVE_CLOSED;
  return sys->constant_mass && sys->k > 0 && !sys->type->affine && !(fs && fs->forcing) && !closed;
}

/* ---- what the schemes define, for the observables (integrator.h) ------------------------------ */

static int engine_newton_size(const nh_method *m NH_UNUSED, const nh_system *sys) { return sys->n + sys->k; }

/* F and J of engine_residual for the step from x: X = [Δq | h²λ]. */
static void engine_newton_eval(const nh_method *m, const nh_system *sys, const nh_state *x, double h,
                               const double *X, double *F, double *J) {
  nh_cost scratch = {0};
  step_forces Fs;
  engine_ctx C;
  engine_setup(m, sys, x, h, &C, &Fs, &scratch);
  engine_residual(&C, X, F, J);
}

/* X of a result: Δq = y->q − x->q (as rounded in y) and Λ from the first equation, A(q_j)ᵀΛ = R|_{Λ=0}, solved in the
 * least-squares sense (exact at a solution): Λ = (A Aᵀ)⁻¹ A R|_{Λ=0}. */
static void engine_newton_unknowns(const nh_method *m, const nh_system *sys, const nh_state *x, const nh_state *y,
                                   double h, double *X) {
  const int n = sys->n, k = sys->k, dim = n + k;
  nh_cost scratch = {0};
  double F[NH_NEWTON_MAX_DIM], J[NH_NEWTON_MAX_DIM * NH_NEWTON_MAX_DIM];
  step_forces Fs;
  double G[NH_MAX_K * NH_MAX_K];
  engine_ctx C;
  engine_setup(m, sys, x, h, &C, &Fs, &scratch);
  for (int i = 0; i < dim; i++) X[i] = i < n ? y->q[i] - x->q[i] : 0;
  engine_residual(&C, X, F, J);
  for (int a = 0; a < k; a++) {
    X[n + a] = 0;
    for (int i = 0; i < n; i++) X[n + a] += C.A0[a * n + i] * F[i];
    for (int b = 0; b < k; b++) {
      G[a * k + b] = 0;
      for (int i = 0; i < n; i++) G[a * k + b] += C.A0[a * n + i] * C.A0[b * n + i];
    }
  }
  if (k > 0 && nh_spd_solve(k, G, X + n) != 0)
    for (int a = 0; a < k; a++) X[n + a] = NAN;
}

/* A(q_d)Δq/h + b(q_d) with q_d = q_j + γΔq: the scheme's discrete constraint (spec §2.3, §6). */
static void engine_constraint(const nh_method *m, const nh_system *sys, const nh_state *x, const nh_state *y,
                              double h, double *out) {
  const scheme *sc = m->type->data;
  const int n = sys->n, k = sys->k;
  double qd[NH_MAX_N], A[NH_MAX_K * NH_MAX_N], b[NH_MAX_K] = {0};
  if (k == 0) return;
  for (int i = 0; i < n; i++) qd[i] = x->q[i] + sc->gamma * (y->q[i] - x->q[i]);
  sys->type->constraints(sys->p, qd, A);
  if (sys->type->affine) sys->type->affine->values(sys->p, qd, b);
  for (int a = 0; a < k; a++) {
    out[a] = b[a];
    for (int i = 0; i < n; i++) out[a] += A[a * n + i] * (y->q[i] - x->q[i]) / h;
  }
}

/* The midpoint energy T(q̄, Δq/h) + ½(V(q_j) + V(q_{j+1})) (spec §6, §5 items 9-10), at t_j + h/2. */
static double engine_energy(const nh_method *m NH_UNUSED, const nh_system *sys, const nh_state *x, const nh_state *y,
                            double h) {
  const int n = sys->n;
  double qbar[NH_MAX_N], vel[NH_MAX_N];
  for (int i = 0; i < n; i++) {
    qbar[i] = 0.5 * (x->q[i] + y->q[i]);
    vel[i] = (y->q[i] - x->q[i]) / h;
  }
  return nh_kinetic_energy(sys, qbar, vel) +
         0.5 * (sys->type->potential(sys->p, x->q) + sys->type->potential(sys->p, y->q));
}

#define ENGINE_LAMBDA_DOC                                                                                      \
  "the step's constraint impulse per unit time, in the +A^T lambda sign of nh_multiplier: "                     \
  "-Lambda/(h^2 (1 + h D3)) - y_{j+1}/h. Lambda = h^2 lambda is the Newton unknown of (3.4), whose lambda "     \
  "pushes p_j by -(h/(1 + h D3)) lambda A(q_j)^T (the opposite sign) and, p_j being already projected on D, "   \
  "carries only the half of the node impulse after t_j; y_{j+1}, the multiplier of the projection of v_{j+1} "  \
  "on D_{q_{j+1}} (p -= A(q_{j+1})^T y_{j+1}), carries the half before t_{j+1}. Approximates lambda(t_j + h/2)"
#define ENGINE_ENERGY_DOC                                                                                      \
  "midpoint energy T(qbar, dq/h) + (V(q_j) + V(q_{j+1}))/2 of the step, at t_j + h/2 (spec/herglotz.md 6, "    \
  "5 items 9-10)"

/* z_0 = 0 (spec §2.2, (3.2)); p_0 = M(q_0) q̇_0 is the state itself (see the header). */
static nh_step_status herglotz_init(const nh_method *m NH_UNUSED, const nh_system *sys NH_UNUSED, nh_state *x,
                                    double h NH_UNUSED, nh_cost *cost NH_UNUSED) {
  x->z = 0;
  return NH_STEP_OK;
}

/* la1's start (spec §6 "First step q_1", §5 item 8). la1 is a two-step method, (4.4), written in
 * one-step form: its momentum is the backward difference p_{j+1} = h D2L_d(q_j, q_{j+1}) =
 * M(q_j)Δq/h, a velocity at t_{j+½}·M(q_j), not at t_{j+1}. The start p_0 = M(q_0)q̇_0 therefore
 * gives q_1 = q_0 + h q̇_0 + h² ä_0 + O(h³) (twice the Taylor h²/2 term, an O(h²) start error) and
 * the global order 1 in q. The consistent start is the momentum of a virtual step (q_{−1}, q_0) of
 * the exact motion, p_0 = M(q(−h))(q_0 − q(−h))/h:
 *   p_0 = M(q_0) q̇_0 − h [Ṁ(q_0) q̇_0 + ½ M(q_0) a_0] + O(h²),  Ṁ q̇ = Σ_l ∂_l M q̇^l q̇,
 * with a_0 the acceleration of the index-reduced ODE (nh_acceleration: damping, forcing and the
 * constraint force included). Then D1L_d(q_0, q_1) + p_0/h = λA(q_0)ᵀ holds for the Taylor q_1 up
 * to O(h³) along D_{q_0} (the A(q_0)ᵀ part of p_0 is absorbed by λ; the A(q_0) part of q_1 is the
 * left-point discrete constraint A(q_0)Δq/h + b(q_0) = 0, which matches the Taylor q_1 to O(h³)
 * when (∂A[q̇_0] + ∂b) q̇_0 = 0, e.g. on the Foucault presets: there q_1 = q(h) + O(h³)).
 * What the step reads is M(q_0)v_0 modulo A(q_0)ᵀ, so init stores v_0 := the M-orthogonal
 * projection of M⁻¹p_0 on D_{q_0} (as every later v_j): v_0 moves by O(h), like every v_j of la1
 * (a velocity at t_{j−½} projected on D_{q_j}, first order). */
static nh_step_status la1_init(const nh_method *m NH_UNUSED, const nh_system *sys, nh_state *x, double h,
                               nh_cost *cost) {
  const int n = sys->n;
  double acc[NH_MAX_N], Mspace[NH_MAX_N * NH_MAX_N], p[NH_MAX_N], y[NH_MAX_K];
  x->z = 0;
  if (nh_acceleration(sys, x->t, x->q, x->v, acc) != 0) return NH_STEP_SOLVER_FAILED;
  cost->rhs_evals++;
  if (sys->k) cost->constraint_evals++;
  const double *M = nh_mass_at(sys, x->q, Mspace);
  for (int i = 0; i < n; i++) {
    double s = 0;
    for (int j = 0; j < n; j++) s += M[i * n + j] * (x->v[j] - 0.5 * h * acc[j]);
    p[i] = s;
  }
  if (!sys->constant_mass && sys->type->mass_jacobian) {
    double dM[NH_MAX_N * NH_MAX_N * NH_MAX_N];
    sys->type->mass_jacobian(sys->p, x->q, dM);
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++)
        for (int l = 0; l < n; l++) p[i] -= h * dM[(i * n + j) * n + l] * x->v[l] * x->v[j];
  }
  if (velocity_from_momentum(sys, x->q, p, x->v, y, cost) != 0) return NH_STEP_SOLVER_FAILED;
  return NH_STEP_OK;
}

static int order(const nh_method *m) {
  const scheme *sc = m->type->data;
  return sc->order;
}

/* solve=closed needs the step linear in (Δq, Λ): a constant mass matrix (the left-point constraint
 * is the scheme's). */
static int engine_applies(const nh_method *m, const nh_system *sys, char *why, size_t len) {
  if (m->type->nparams <= P_SOLVE || m->p[P_SOLVE] != SOLVE_CLOSED || sys->constant_mass) return 0;
  snprintf(why, len, "solve=closed needs a constant mass matrix, where the step is linear in (dq, lambda)");
  return -1;
}

/* herglotz2 is symmetric: L_d(q_{j+1}, q_j; −h) = L_d(q_j, q_{j+1}; h) for both force levels,
 * c₂(−h) = 1/c₂(h), the midpoint constraint is odd under the swap, and the left-point multiplier
 * becomes the right-point one of the reversed step, which the velocity projection absorbs. */
static int is_symmetric(const nh_method *m) { return m->type->data == &herglotz2_scheme; }

#define ALL_FEATURES (NH_SYS_VARIABLE_MASS | NH_SYS_AFFINE_CONSTRAINTS | NH_SYS_DAMPING | NH_SYS_FORCING)

static const nh_newton_hooks engine_newton = {engine_newton_size, engine_newton_eval, engine_newton_unknowns, NULL};

/* What the three schemes share: the engine's step, Newton system, discrete constraint and energy. */
#define ENGINE_HOOKS                                                                                                   \
  .params = params, .handles = ALL_FEATURES, .order = order, .applies = engine_applies, .is_symmetric = is_symmetric,  \
  .step = engine_step, .step_lanes = engine_step_lanes, .has_lanes = engine_has_lanes,                                 \
  .lanes_doc = "on systems with a constant mass matrix, linear constraints (k > 0) and no forcing, solve=newton",      \
  .lambda_time = NH_LAMBDA_MIDPOINT, .discrete_constraint = engine_constraint, .discrete_energy = engine_energy,       \
  .discrete_energy_doc = ENGINE_ENERGY_DOC, .newton = &engine_newton

const nh_integrator_type nh_integrator_herglotz2 = {
    ENGINE_HOOKS,
    .name = "herglotz2",
    .doc = "Herglotz contact integrator with nonholonomic constraints, second order (spec/herglotz.md "
           "2.4-2.6, eq. (3.4), Appendix A.1-A.5): L_d with T at the midpoint, trapezoidal V and F.q, "
           "-alpha (z_j + z_{j+1})/2 (factor c2 = (1 - alpha h/2)/(1 + alpha h/2)), discrete constraint "
           "A(qbar) dq/h + b(qbar) = 0, multiplier at A(q_j). Newton on (dq, lambda). v is the "
           "projection of M^-1 p on D; z is the Herglotz action (z_0 = 0). Symmetric, order 2.",
    .nparams = P_SOLVE, /* forcing only */
    .aliases = aliases,
    .data = &herglotz2_scheme,
    .properties = NH_PRESERVES_CONSTRAINT | NH_TRACKS_ACTION,
    .init = herglotz_init,
    .lambda_doc = ENGINE_LAMBDA_DOC " to O(h^2)",
    .discrete_constraint_doc = "A(qbar) dq/h + b(qbar), qbar = (q_j + q_{j+1})/2 (spec/herglotz.md 2.5, A.2-A.3)",
};

const nh_integrator_type nh_integrator_herglotz1 = {
    ENGINE_HOOKS,
    .name = "herglotz1",
    .doc = "Herglotz contact integrator with nonholonomic constraints, first order (spec/herglotz.md 2.5, "
           "eqs (4.6)-(4.7)): L_d depends on z_j only (factor c1 = 1 - alpha h), left-point discrete "
           "constraint A(q_j) dq/h + b(q_j) = 0; otherwise as herglotz2 (T at the midpoint, trapezoidal "
           "V and F.q). Reproduces the paper's pendulum scheme (4.7); solve=closed takes the step in closed "
           "form (predictor plus projection, spec/herglotz.md 2.7). Order 1.",
    .nparams = P_COUNT,
    .aliases = aliases,
    .data = &herglotz1_scheme,
    .properties = NH_PRESERVES_CONSTRAINT | NH_TRACKS_ACTION,
    .init = herglotz_init,
    .lambda_doc = ENGINE_LAMBDA_DOC " to O(h)",
    .discrete_constraint_doc = "A(q_j) dq/h + b(q_j), the left point (spec/herglotz.md 2.5, (4.7))",
};

const nh_integrator_type nh_integrator_la1 = {
    ENGINE_HOOKS,
    .name = "la1",
    .doc = "First-order Lagrange-d'Alembert nonholonomic integrator, the paper's comparison method "
           "(spec/herglotz.md 2.3 (2.4), 2.7 (4.4)): L_d = h L(q_j, dq/h), forces F_d^- = -alpha M(q_j) dq "
           "+ h F(t_j), F_d^+ = 0, left-point discrete constraint as herglotz1. v is the projection of "
           "M^-1 p on D, p_{j+1} = M(q_j) dq/h (a velocity at t_{j+1/2}: v is first order). Start "
           "(spec/herglotz.md 6 'First step q_1'): not p_0 = M v_0, which makes q_1 O(h^2) wrong and q "
           "first order, but a start consistent to second order, the momentum of a virtual exact step "
           "(q(-h), q_0): p_0 = M v_0 - h (Mdot v_0 + M a_0 / 2), a_0 the constrained acceleration; init "
           "replaces v_0 by the projection of M^-1 p_0 on D. Then q_1 = q(h) + O(h^3) along D and q is "
           "order 2 where the O(alpha^2 h) damping error is negligible (Foucault alpha = 1e-4, spec 5 item "
           "8). solve=closed takes the step in closed form (predictor plus projection, spec/herglotz.md 2.7). "
           "Order 1 (damping; and v).",
    .nparams = P_COUNT,
    .aliases = aliases,
    .data = &la1_scheme,
    .properties = NH_PRESERVES_CONSTRAINT,
    .init = la1_init,
    .lambda_doc = ENGINE_LAMBDA_DOC " to O(h) (the multiplier of (2.4); la1 has no D3, its damping is the force "
                                    "-alpha M(q_j) dq)",
    .discrete_constraint_doc = "A(q_j) dq/h + b(q_j), the left point (spec/herglotz.md 2.7, (4.4))",
};
