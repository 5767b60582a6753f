/* Checks shared by the method-hook test files: stepping a method to T, the true solution and λ
 * along it, the signed multiplier error, finite-difference and Newton-convergence checks of a
 * method's newton_eval, and a system whose A(q) counts its calls. Each fails the calling test with
 * a message naming the method and system; tolerances stay with the callers. */
#ifndef NH_TEST_CHECKS_H
#define NH_TEST_CHECKS_H

#include <gsl/gsl_integration.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_randist.h>
#include <math.h>
#include <string.h>

#include "tests/helpers.h"

/* nh_method_init must succeed. */
static inline void test_init_ok(const nh_method *m, const nh_system *sys, nh_state *x, double h, nh_cost *cost) {
  cr_assert(nh_method_init(m, sys, x, h, cost) == NH_STEP_OK, "init of %s on %s failed", m->type->name,
            sys->type->name);
}

/* nh_method_step must succeed. */
static inline void test_step_ok(const nh_method *m, const nh_system *sys, const nh_state *x, nh_state *y, double h,
                                nh_cost *cost) {
  nh_step_status st = nh_method_step(m, sys, x, y, h, cost);
  cr_assert(st == NH_STEP_OK, "%s on %s: step of h=%g failed (%d)", m->type->name, sys->type->name, h, (int)st);
}

/* max_i |v_i|. */
static inline double test_max_abs(int n, const double *v) {
  double s = 0;
  for (int i = 0; i < n; i++) s = fmax(s, fabs(v[i]));
  return s;
}

/* The state of a preset, or the system's default state for preset NULL. */
static inline nh_state test_preset_or_default(nh_system *sys, const char *preset) {
  if (!preset) {
    nh_state x;
    nh_system_default_state(sys, &x);
    return x;
  }
  return test_preset(sys, preset);
}

/* The true solution from x0 at time t (tolerance 1e-13). */
static inline nh_state test_true_state(const nh_system *sys, const nh_state *x0, double t) {
  nh_state ex;
  cr_assert(nh_true_solution(sys, x0, t, 1e-13, &ex, NULL) == 0, "no true solution of %s at t = %g",
            sys->type->name, t);
  return ex;
}

/* λ(t) of nh_multiplier along the true solution from x0. */
static inline void test_true_lambda(const nh_system *sys, const nh_state *x0, double t, double *lam) {
  nh_state ex = test_true_state(sys, x0, t);
  cr_assert(nh_multiplier(sys, t, ex.q, ex.v, lam) == 0);
}

/* Runs `method` from x for N steps of size h; the last state. */
static inline nh_state test_run_steps(const char *method, const nh_system *sys, nh_state x, double h, long N) {
  nh_method *m = test_method(method);
  nh_cost cost = {0};
  nh_state y;
  test_init_ok(m, sys, &x, h, &cost);
  for (long s = 0; s < N; s++) {
    test_step_ok(m, sys, &x, &y, h, &cost);
    x = y;
  }
  nh_method_free(m);
  return x;
}

/* On the CVT (eps = 0.1), whose dynamics does not change when its angle xi moves by 2 pi: the
 * largest difference of the velocities after two steps of `method` (size h) from xi0 = 0.3 and from
 * xi0 + 2 pi 2000. Only the rounding of xi0 itself separates them, ~1e-15 at h = 0.1/64; a step that
 * forms v from the rounded q_{k+1} − q_k loses ulp(xi)/h (issue 46 item 1). */
static inline double test_cvt_angle_shift_gap(const char *method, double h) {
  nh_system sys = test_system("cvt", "eps=0.1");
  nh_state end[2];
  for (int shifted = 0; shifted < 2; shifted++) {
    nh_state x = {0};
    const double q0[3] = {1, 1, 0.3}, v0[3] = {0, 0, 2.8284271247461903};
    memcpy(x.q, q0, sizeof q0), memcpy(x.v, v0, sizeof v0);
    if (shifted) x.q[2] += 12566.370614359172; /* 2 pi 2000 */
    end[shifted] = test_run_steps(method, &sys, x, h, 2);
  }
  double d = 0;
  for (int c = 0; c < 3; c++) d = fmax(d, fabs(end[0].v[c] - end[1].v[c]));
  return d;
}

/* Runs `method` from x with N = T/h steps (rounded); the last state. */
static inline nh_state test_run_to(const char *method, const nh_system *sys, nh_state x, double h, double T) {
  return test_run_steps(method, sys, x, h, lround(T / h));
}

/* Signed error of component a of the multiplier left by the last of T/h steps against λ at
 * T + offset·h (offset −½: the step's midpoint, −1: its start, 0: its end). */
static inline double test_lambda_error(const char *method, const char *system, const char *params,
                                       const char *preset, int a, double h, double T, double offset) {
  nh_system sys = test_system(system, params);
  nh_state x0 = test_preset_or_default(&sys, preset), x = test_run_to(method, &sys, x0, h, T);
  double lam[NH_MAX_K];
  test_true_lambda(&sys, &x0, T + offset * h, lam);
  return x.lambda[a] - lam[a];
}

/* ---- discrete Lagrangians ----------------------------------------------------------------------- */

typedef struct {
  const nh_system *sys;
  const nh_state *x0;
} test_lagrangian_ctx;

/* L = T − V along the true solution from x0, at time t. */
static inline double test_lagrangian_at(double t, void *vctx) {
  const test_lagrangian_ctx *c = vctx;
  nh_state ex = test_true_state(c->sys, c->x0, t);
  return nh_kinetic_energy(c->sys, ex.q, ex.v) - c->sys->type->potential(c->sys->p, ex.q);
}

/* L_d(q(t0), q(t0 + h)) − ∫L along the true solution from x0 (10-point Gauss–Legendre), with
 * L_d the method's discrete_action, or Ld when m is NULL (a control written out in the test). */
static inline double test_action_error(const nh_method *m, const nh_system *sys, const nh_state *x0, double t0,
                                       double h,
                                       double (*Ld)(const nh_system *, const double *, const double *, double)) {
  gsl_integration_glfixed_table *tab = gsl_integration_glfixed_table_alloc(10);
  test_lagrangian_ctx c = {sys, x0};
  gsl_function f = {test_lagrangian_at, &c};
  const double exact = gsl_integration_glfixed(&f, t0, t0 + h, tab);
  gsl_integration_glfixed_table_free(tab);
  nh_state a = test_true_state(sys, x0, t0), b = test_true_state(sys, x0, t0 + h);
  const double Lval = m ? m->type->discrete_action(m, sys, t0, a.q, b.q, h) : Ld(sys, a.q, b.q, h);
  return Lval - exact;
}

/* ---- Newton systems (newton_size / newton_eval / newton_unknowns) ------------------------------ */

/* A random state near the default of the system: q + 0.3 U(−1, 1)(1 + |q|), v + N(0, ½), projected on D. */
static inline nh_state test_random_state_near_default(const nh_system *sys, gsl_rng *r) {
  nh_state x;
  nh_system_default_state(sys, &x);
  for (int i = 0; i < sys->n; i++) {
    x.q[i] += 0.3 * gsl_ran_flat(r, -1, 1) * (1 + fabs(x.q[i]));
    x.v[i] += gsl_ran_gaussian(r, 0.5);
  }
  cr_assert(nh_project_velocity(sys, x.q, x.v) == 0);
  return x;
}

/* The column-relative error of J against central differences (step 1e-6(1 + |X_j|)) of the
 * method's F at X: max_j max_i |ΔF_i/Δ − J_ij| / max(max_i |J_ij|, 1e-3 max |J|). */
static inline double test_jacobian_fd_error(const nh_method *m, const nh_system *sys, const nh_state *x, double h,
                                            const double *X, const double *J, int dim) {
  double Fp[NH_MAX_NEWTON], Fm[NH_MAX_NEWTON], Jd[NH_MAX_NEWTON * NH_MAX_NEWTON], Xp[NH_MAX_NEWTON], err = 0;
  const double jmax = test_max_abs(dim * dim, J);
  for (int j = 0; j < dim; j++) {
    const double eps = 1e-6 * (1 + fabs(X[j]));
    memcpy(Xp, X, sizeof(double) * (size_t)dim);
    Xp[j] = X[j] + eps;
    m->type->newton->eval(m, sys, x, h, Xp, Fp, Jd);
    Xp[j] = X[j] - eps;
    m->type->newton->eval(m, sys, x, h, Xp, Fm, Jd);
    double col = 0, d = 0;
    for (int i = 0; i < dim; i++) col = fmax(col, fabs(J[i * dim + j]));
    for (int i = 0; i < dim; i++) d = fmax(d, fabs((Fp[i] - Fm[i]) / (2 * eps) - J[i * dim + j]));
    err = fmax(err, d / fmax(col, 1e-3 * jmax));
  }
  return err;
}

/* Three Newton iterations from X0, or (wrong) with every Jacobian 10% too large, which makes it
 * converge linearly at rate 1/11; e[i] = max_j |X_i − X*|_j/(1 + |X*_j|) for i = 0..3. */
static inline void test_newton_errors(const nh_method *m, const nh_system *sys, const nh_state *x, double h,
                                      const double *Xs, const double *X0, int dim, int wrong, double e[4]) {
  double X[NH_MAX_NEWTON], F[NH_MAX_NEWTON], J[NH_MAX_NEWTON * NH_MAX_NEWTON];
  size_t pd[NH_MAX_NEWTON];
  memcpy(X, X0, sizeof(double) * (size_t)dim);
  for (int it = 0; it < 4; it++) {
    e[it] = 0;
    for (int i = 0; i < dim; i++) e[it] = fmax(e[it], fabs(X[i] - Xs[i]) / (1 + fabs(Xs[i])));
    if (it == 3) break;
    m->type->newton->eval(m, sys, x, h, X, F, J);
    if (wrong)
      for (int i = 0; i < dim * dim; i++) J[i] *= 1.1;
    gsl_matrix_view Jv = gsl_matrix_view_array(J, (size_t)dim, (size_t)dim);
    gsl_vector_view Fv = gsl_vector_view_array(F, (size_t)dim);
    gsl_permutation perm = {(size_t)dim, pd};
    int sg;
    gsl_linalg_LU_decomp(&Jv.matrix, &perm, &sg);
    gsl_linalg_LU_svx(&Jv.matrix, &perm, &Fv.vector);
    for (int i = 0; i < dim; i++) X[i] -= F[i];
  }
}

/* The checks of one Newton system at the step x → y of size h (m->type->newton_size gives dim):
 *  - F(X*) ≈ 0 at the unknowns X* of the step's result: ≤ 1e-14 |J|(1 + |X*|); control: X* moved
 *    by 1e-7 relative fails it;
 *  - the analytic Jacobian against central differences, at X* and at a random point off it
 *    (X* + 0.05 U(−1, 1)(1 + |X*|), drawn from r): ≤ 1e-8 column-relative; control: the largest
 *    entry off by 1e-6 fails it;
 *  - Newton from X* + 1e-2 relative: order > 1.7 where the third error is above round-off (1e-12),
 *    else quadratic decrease e1 ≤ 10 e0²; control: every Jacobian 10% off gives order < 1.3.
 * Returns 1 when Newton's order was measured, 0 when the errors reached round-off first. */
static inline int test_check_newton_system(const nh_method *m, const nh_system *sys, const nh_state *x,
                                           const nh_state *y, double h, int dim, gsl_rng *r) {
  const char *name = m->type->name, *sname = sys->type->name;
  double Xs[NH_MAX_NEWTON], F[NH_MAX_NEWTON], J[NH_MAX_NEWTON * NH_MAX_NEWTON], X0[NH_MAX_NEWTON], e[4], ef[4];
  m->type->newton->unknowns(m, sys, x, y, h, Xs);
  m->type->newton->eval(m, sys, x, h, Xs, F, J);
  const double tol = 1e-14 * test_max_abs(dim * dim, J) * (1 + test_max_abs(dim, Xs));
  cr_expect(test_max_abs(dim, F) < tol, "%s on %s: |F(X*)| = %.3e (tol %.1e)", name, sname, test_max_abs(dim, F),
            tol);
  for (int i = 0; i < dim; i++) X0[i] = Xs[i] + 1e-7 * (1 + fabs(Xs[i]));
  m->type->newton->eval(m, sys, x, h, X0, F, J);
  cr_expect(test_max_abs(dim, F) > 10 * tol, "control: F at X* + 1e-7 is %.3e", test_max_abs(dim, F));
  for (int at = 0; at < 2; at++) {
    for (int i = 0; i < dim; i++) X0[i] = Xs[i] + at * 0.05 * gsl_ran_flat(r, -1, 1) * (1 + fabs(Xs[i]));
    m->type->newton->eval(m, sys, x, h, X0, F, J);
    const double fe = test_jacobian_fd_error(m, sys, x, h, X0, J, dim);
    cr_expect(fe <= 1e-8, "%s on %s: Jacobian vs finite differences %.3e", name, sname, fe);
    int big = 0;
    for (int i = 1; i < dim * dim; i++) big = fabs(J[i]) > fabs(J[big]) ? i : big;
    J[big] *= 1 + 1e-6;
    cr_expect(test_jacobian_fd_error(m, sys, x, h, X0, J, dim) > 1e-8, "control: a wrong entry passes");
  }
  for (int i = 0; i < dim; i++) X0[i] = Xs[i] + 1e-2 * (1 + fabs(Xs[i])) * (i % 2 ? -1 : 1);
  test_newton_errors(m, sys, x, h, Xs, X0, dim, 0, e);
  test_newton_errors(m, sys, x, h, Xs, X0, dim, 1, ef);
  if (e[2] > 1e-12) {
    const double p = log(e[2] / e[1]) / log(e[1] / e[0]), pf = log(ef[2] / ef[1]) / log(ef[1] / ef[0]);
    cr_expect(p > 1.7, "%s on %s: Newton order %.2f (errors %.2e %.2e %.2e)", name, sname, p, e[0], e[1], e[2]);
    cr_expect(pf < 1.3, "%s on %s: control, a 10%% Jacobian error converges at order %.2f", name, sname, pf);
    return 1;
  }
  cr_expect(e[1] <= 10 * e[0] * e[0], "%s on %s: errors %.2e %.2e %.2e", name, sname, e[0], e[1], e[2]);
  return 0;
}

/* `trials` random states of sys (test_random_state_near_default, from r), each started at time
 * *t0 (t0 NULL: the default state's time) and stepped once by h = 0.05, then
 * test_check_newton_system at the step. A failed step fails the test unless may_fail (far random
 * states of some methods); *checked counts the states checked, *orders those where Newton's order
 * was measured. */
static inline void test_check_newton_trials(const nh_method *m, const nh_system *sys, int dim, gsl_rng *r,
                                            int trials, const double *t0, int may_fail, int *checked, int *orders) {
  for (int trial = 0; trial < trials; trial++) {
    const double h = 0.05;
    nh_state x = test_random_state_near_default(sys, r), y;
    nh_cost cost = {0};
    if (t0) x.t = *t0;
    test_init_ok(m, sys, &x, h, &cost);
    if (may_fail) {
      if (nh_method_step(m, sys, &x, &y, h, &cost) != NH_STEP_OK) continue;
    } else {
      test_step_ok(m, sys, &x, &y, h, &cost);
    }
    *orders += test_check_newton_system(m, sys, &x, &y, h, dim, r);
    (*checked)++;
  }
}

/* ---- a system's derivatives ---------------------------------------------------------------------- */

/* ∇V, the Hessian of V, ∇W and ∇²W of a time-dependent potential (at a random t ∈ [−5, 5]) and
 * ∂μ/∂q of the system `name` with parameters params against central
 * differences (δ = 1e-5), relative tolerance 1e-7, at 10 random points q ∈ [−2, 2]^n drawn from a
 * Mersenne Twister seeded with seed. */
static inline void test_check_system_derivatives(const char *name, const char *params, unsigned long seed) {
  nh_system sys = test_system(name, params);
  const int n = sys.n, k = sys.k;
  const double d = 1e-5, tol = 1e-7;
  gsl_rng *r = test_rng(seed);
  for (int trial = 0; trial < 10; trial++) {
    double q[NH_MAX_N], g[NH_MAX_N], H[NH_MAX_N * NH_MAX_N], dA[NH_MAX_K * NH_MAX_N * NH_MAX_N];
    for (int i = 0; i < n; i++) q[i] = 4 * gsl_rng_uniform(r) - 2;
    sys.type->grad_potential(sys.p, q, g);
    sys.type->hess_potential(sys.p, q, H);
    sys.type->constraints_jacobian(sys.p, q, dA);
    for (int j = 0; j < n; j++) {
      double qp[NH_MAX_N], qm[NH_MAX_N], gp[NH_MAX_N], gm[NH_MAX_N];
      double Ap[NH_MAX_K * NH_MAX_N], Am[NH_MAX_K * NH_MAX_N];
      memcpy(qp, q, sizeof qp), memcpy(qm, q, sizeof qm);
      qp[j] += d, qm[j] -= d;
      double dV = (sys.type->potential(sys.p, qp) - sys.type->potential(sys.p, qm)) / (2 * d);
      cr_assert(fabs(dV - g[j]) <= tol * (1 + fabs(g[j])), "%s: dV/dq%d = %.12g, grad %.12g", name, j, dV, g[j]);
      sys.type->grad_potential(sys.p, qp, gp);
      sys.type->grad_potential(sys.p, qm, gm);
      for (int i = 0; i < n; i++) {
        double fd = (gp[i] - gm[i]) / (2 * d), an = H[i * n + j];
        cr_assert(fabs(fd - an) <= tol * (1 + fabs(an)), "%s: H[%d][%d] = %.12g, FD %.12g", name, i, j, an, fd);
      }
      const nh_time_potential *W = test_time_potential(sys.type);
      if (W->value) { /* W(q, t), ∇W, ∇²W at a random time */
        const double t = 10 * gsl_rng_uniform(r) - 5;
        double gw[NH_MAX_N], gwp[NH_MAX_N], gwm[NH_MAX_N], Hw[NH_MAX_N * NH_MAX_N];
        W->gradient(sys.p, q, t, gw);
        W->hessian(sys.p, q, t, Hw);
        W->gradient(sys.p, qp, t, gwp);
        W->gradient(sys.p, qm, t, gwm);
        const double dW = (W->value(sys.p, qp, t) - W->value(sys.p, qm, t)) / (2 * d);
        cr_assert(fabs(dW - gw[j]) <= tol * (1 + fabs(gw[j])), "%s: dW/dq%d = %.12g, grad %.12g", name, j, dW, gw[j]);
        for (int i = 0; i < n; i++) {
          const double fd = (gwp[i] - gwm[i]) / (2 * d), an = Hw[i * n + j];
          cr_assert(fabs(fd - an) <= tol * (1 + fabs(an)), "%s: HW[%d][%d] = %.12g, FD %.12g", name, i, j, an, fd);
        }
      }
      sys.type->constraints(sys.p, qp, Ap);
      sys.type->constraints(sys.p, qm, Am);
      for (int a = 0; a < k; a++)
        for (int i = 0; i < n; i++) {
          double fd = (Ap[a * n + i] - Am[a * n + i]) / (2 * d), an = dA[(a * n + i) * n + j];
          cr_assert(fabs(fd - an) <= tol * (1 + fabs(an)), "%s: dmu^%d_%d/dq%d = %.12g, FD %.12g", name, a, i, j,
                    an, fd);
        }
    }
  }
  gsl_rng_free(r);
}

/* ---- the constraint_evals counter -------------------------------------------------------------- */

/* The state of the counting system (one per test file: static storage in a static inline function). */
typedef struct {
  const nh_system_type *base;
  nh_system_type type;
  long calls;
} test_counter;

static inline test_counter *test_counter_state(void) {
  static test_counter c;
  return &c;
}

/* How many times the counted system's A(q) has been called since the caller last set it to 0. */
#define test_counted_calls (test_counter_state()->calls)

static inline void test_counting_constraints(const double *p, const double *q, double *A) {
  test_counter_state()->calls++;
  test_counter_state()->base->constraints(p, q, A);
}

/* The named system with parameters params (NULL for the defaults) and its A(q) wrapped in a call
 * counter. */
static inline nh_system test_counted_system(const char *name, const char *params) {
  test_counter *c = test_counter_state();
  c->base = nh_system_type_find(name);
  cr_assert(c->base != NULL, "system '%s' is not in the registry", name);
  c->type = *c->base;
  c->type.constraints = test_counting_constraints;
  return test_system_of(&c->type, params);
}

#endif
