/* integrators/: checks added for mutation robustness (issue 16), second round. Expected values
 * come from the spec's formulas written out here, from closed forms, or from where the equations
 * are undefined (a singular constraint Gram matrix); nothing is copied from the program's output. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tests/checks.h"
#include "tests/counting_system.h"
#include "tests/helpers.h"

/* ---- the Newton hooks where the step's equations are undefined ----------------------------------- */

/* The pendulum (φ(q) = (|q|² − l²)/2, G(q) = qᵀ) at q = 0, v = 0: C = G M⁻¹Gᵀ = |q|²/m = 0, so every
 * quantity that needs C⁻¹ is undefined there, and the hooks say so with NaN (integrator.h: "NaN
 * where it fails"), never with a stale or made-up number. Which entries need C⁻¹, per method:
 *   newmark   F (Γ = nh_acceleration needs λ(q, v)) and X (a_{k+1} = Γ at the result)
 *   rattle, shake   X: Λ = C(q_k)⁻¹G(q_k)(q_f − q_{k+1})
 *   js_b, herglotz1, herglotz2, la1   the multiplier unknowns X[n..n+k), by a k×k solve with A(q̄)
 *                   at q̄ = q (v = 0)
 *   m11       F and J (its node set-up solves with C(q_{k+1}))
 *   spark     X (the stages solved again from x, which fails).
 * Every entry starts at a finite sentinel, so a deleted NaN fill shows. Control: at a regular state
 * of the same pendulum (q = (1, 0), v = (0, 0.5) on D, after nh_method_init) every entry is finite. */
typedef struct {
  const char *method;
  int nan_F, nan_J, nan_X_from; /* nan_X_from: first X entry that must be NaN; -1 none */
} singular_case;

static void fill(double *a, int len, double value) {
  for (int i = 0; i < len; i++) a[i] = value;
}

Test(method_interface, newton_hooks_say_nan_where_c_is_singular) {
  static const singular_case cases[] = {
      {"newmark", 1, 0, 0}, {"rattle", 0, 0, 0},    {"shake", 0, 0, 0},     {"js_b", 0, 0, 2},
      {"herglotz1", 0, 0, 2}, {"herglotz2", 0, 0, 2}, {"la1", 0, 0, 2}, {"m11", 1, 1, -1}, {"spark", 0, 0, 0},
  };
  nh_system sys = test_system("pendulum", "");
  cr_assert_eq(sys.n, 2);
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    const singular_case *sc = &cases[c];
    nh_method *m = test_method(sc->method);
    const nh_integrator_type *t = m->type;
    cr_assert(t->newton, "%s has the Newton hooks", sc->method);
    const int N = t->newton->size(m, &sys);
    cr_assert(N > 0 && N <= NH_MAX_NEWTON, "%s: size %d", sc->method, N);
    double X[NH_MAX_NEWTON], F[NH_MAX_NEWTON], J[NH_MAX_NEWTON * NH_MAX_NEWTON], U[NH_MAX_NEWTON];
    for (int singular = 1; singular >= 0; singular--) {
      nh_state x, y;
      memset(&x, 0, sizeof x);
      if (!singular) {
        x.q[0] = 1, x.v[1] = 0.5;
        nh_cost cost = {0};
        cr_assert_eq(nh_method_init(m, &sys, &x, 0.1, &cost), NH_STEP_OK, "%s", sc->method);
      }
      y = x;
      fill(X, N, 0), fill(F, N, 123), fill(J, N * N, 123), fill(U, N, 123);
      t->newton->eval(m, &sys, &x, 0.1, X, F, J);
      t->newton->unknowns(m, &sys, &x, &y, 0.1, U);
      for (int i = 0; i < N; i++) {
        const int want_nan_F = singular && sc->nan_F, want_nan_X = singular && sc->nan_X_from >= 0 && i >= sc->nan_X_from;
        cr_expect(want_nan_F ? isnan(F[i]) : isfinite(F[i]), "%s, %s state: F[%d] = %g", sc->method,
                  singular ? "singular" : "regular", i, F[i]);
        cr_expect(want_nan_X ? isnan(U[i]) : isfinite(U[i]), "%s, %s state: X[%d] = %g", sc->method,
                  singular ? "singular" : "regular", i, U[i]);
      }
      for (int i = 0; i < N * N; i++)
        if (singular && sc->nan_J) cr_expect(isnan(J[i]), "%s: J[%d] = %g", sc->method, i, J[i]);
        else if (!singular) cr_expect(isfinite(J[i]), "%s, regular state: J[%d] = %g", sc->method, i, J[i]);
    }
    nh_method_free(m);
  }
}

/* ---- discrete constraints on arbitrary pairs of states ------------------------------------------- */

/* A(q) and b(q) (0 without an affine part) of the system. */
static void constraint_of(const nh_system *sys, const double *q, double *A, double *b) {
  sys->type->constraints(sys->p, q, A);
  for (int a = 0; a < sys->k; a++) b[a] = 0;
  if (sys->type->affine) sys->type->affine->values(sys->p, q, b);
}

/* out = A(qa) w + affine · b(qa). */
static void apply_constraint(const nh_system *sys, const double *qa, const double *w, int affine, double *out) {
  double A[NH_MAX_K * NH_MAX_N], b[NH_MAX_K];
  constraint_of(sys, qa, A, b);
  for (int a = 0; a < sys->k; a++) {
    out[a] = affine ? b[a] : 0;
    for (int i = 0; i < sys->n; i++) out[a] += A[a * sys->n + i] * w[i];
  }
}

/* Each method's discrete constraint (its table's discrete_constraint_doc, the spec formula cited
 * there) for the pair x → y of size h, written out independently; 0 when the test does not know
 * the method. x, y are arbitrary: not a step's result, so the method's own equations do not make
 * the value vanish, and every term shows. */
static int expected_constraint(const nh_method *m, const nh_system *sys, const nh_state *x, const nh_state *y, double h,
                               double *out) {
  const char *name = m->type->name;
  const int n = sys->n, k = sys->k;
  double dq[NH_MAX_N], w[NH_MAX_N], qa[NH_MAX_N];
  for (int i = 0; i < n; i++) dq[i] = (y->q[i] - x->q[i]) / h;
  if (!strcmp(name, "js_a") || !strcmp(name, "js_p1")) { /* μ(q_k)(q_{k+1} − q_k)/h */
    apply_constraint(sys, x->q, dq, 0, out);
  } else if (!strcmp(name, "js_b") || !strcmp(name, "js_p2new") || !strcmp(name, "mp418") ||
             !strcmp(name, "nh_rattle")) { /* μ(q_{k+1}) v_{k+1} */
    apply_constraint(sys, y->q, y->v, 0, out);
  } else if (!strcmp(name, "spark")) { /* A(q_{k+1}) v_{k+1} + b(q_{k+1}) */
    apply_constraint(sys, y->q, y->v, 1, out);
  } else if (!strcmp(name, "js_p2orig")) { /* μ(q_{k+1} + (h/2) v_{k+1}) v_{k+1}, (98) */
    for (int i = 0; i < n; i++) qa[i] = y->q[i] + 0.5 * h * y->v[i];
    apply_constraint(sys, qa, y->v, 0, out);
  } else if (!strcmp(name, "nh_energy")) { /* μ(q̄)(v_k + v_{k+1})/2 */
    for (int i = 0; i < n; i++) qa[i] = 0.5 * (x->q[i] + y->q[i]), w[i] = 0.5 * (x->v[i] + y->v[i]);
    apply_constraint(sys, qa, w, 0, out);
  } else if (!strcmp(name, "herglotz2")) { /* A(q̄)Δq/h + b(q̄) */
    for (int i = 0; i < n; i++) qa[i] = 0.5 * (x->q[i] + y->q[i]);
    apply_constraint(sys, qa, dq, 1, out);
  } else if (!strcmp(name, "herglotz1") || !strcmp(name, "la1")) { /* A(q_j)Δq/h + b(q_j) */
    apply_constraint(sys, x->q, dq, 1, out);
  } else if (!strcmp(name, "nh_newmark") || !strcmp(name, "dla")) { /* (14) or (15) of spec/newmark.md §2.4 */
    const double alpha = nh_method_param(m, "alpha");
    if (nh_method_param(m, "constraint") == 0) { /* point: μ((1 − α)q_k + αq_{k+1}) Δq/h */
      for (int i = 0; i < n; i++) qa[i] = (1 - alpha) * x->q[i] + alpha * y->q[i];
      apply_constraint(sys, qa, dq, 0, out);
    } else { /* average: ((1 − α)μ(q_k) + αμ(q_{k+1})) Δq/h */
      double o0[NH_MAX_K], o1[NH_MAX_K];
      apply_constraint(sys, x->q, dq, 0, o0);
      apply_constraint(sys, y->q, dq, 0, o1);
      for (int a = 0; a < k; a++) out[a] = (1 - alpha) * o0[a] + alpha * o1[a];
    }
  } else if (!strcmp(name, "rattle") || !strcmp(name, "shake")) { /* φ(q_{k+1}) */
    sys->type->holonomic(sys->p, y->q, out);
  } else {
    return 0;
  }
  return 1;
}

Test(method_interface, discrete_constraints_on_arbitrary_pairs) {
  static const char *const systems[] = {"chaotic_particle", "vertical_disk", "foucault_pendulum", "pendulum",
                                        "chaplygin_sleigh"};
  static const char *const variants[] = {"nh_newmark(alpha=0)", "nh_newmark(alpha=0.3)",
                                         "nh_newmark(alpha=0.3,constraint=average)", "nh_newmark(alpha=1)",
                                         "nh_newmark(alpha=1,constraint=average)", "dla(alpha=0.7)",
                                         "dla(alpha=0.7,constraint=average)"};
  /* Every registered method with a discrete constraint, by name (its defaults), and the
   * nh_newmark/dla variants that change the formula; nh_shake's needs q_{k−1}, which only its carry
   * holds (its value on a run: tests/integrators/test_method_hooks_rattle.c). */
  const char *texts[64];
  int ntexts = 0;
  for (int i = 0; nh_integrator_types[i]; i++) {
    const nh_integrator_type *t = nh_integrator_types[i];
    if (!t->takes_base && t->discrete_constraint && strcmp(t->name, "nh_shake") && ntexts < 64) texts[ntexts++] = t->name;
  }
  for (size_t v = 0; v < sizeof variants / sizeof *variants && ntexts < 64; v++) texts[ntexts++] = variants[v];
  gsl_rng *rng = test_rng(1601);
  int checked = 0, nonzero = 0;
  for (size_t s = 0; s < sizeof systems / sizeof *systems; s++) {
    nh_system sys = test_system(systems[s], "");
    for (int i = 0; i < ntexts; i++) {
      const char *text = texts[i];
      char err[512];
      nh_method *m = test_method(text);
      if (nh_method_applies(m, &sys, err, sizeof err)) {
        nh_method_free(m);
        continue;
      }
      for (int trial = 0; trial < 3; trial++) {
        nh_state x, y;
        memset(&x, 0, sizeof x), memset(&y, 0, sizeof y);
        for (int j = 0; j < sys.n; j++) {
          x.q[j] = gsl_rng_uniform(rng) * 1.6 - 0.8, y.q[j] = gsl_rng_uniform(rng) * 1.6 - 0.8;
          x.v[j] = gsl_rng_uniform(rng) * 2 - 1, y.v[j] = gsl_rng_uniform(rng) * 2 - 1;
        }
        const double h = 0.25 + 0.1 * trial;
        y.t = x.t + h;
        double got[NH_MAX_K], want[NH_MAX_K];
        for (int a = 0; a < NH_MAX_K; a++) got[a] = NAN;
        if (!expected_constraint(m, &sys, &x, &y, h, want)) {
          cr_expect_fail("%s: no formula in the test for its discrete constraint", text);
          break;
        }
        m->type->discrete_constraint(m, &sys, &x, &y, h, got);
        for (int a = 0; a < sys.k; a++) {
          cr_expect(fabs(got[a] - want[a]) <= 1e-13 * (1 + fabs(want[a])), "%s on %s, row %d: %.17g, expected %.17g",
                    text, systems[s], a, got[a], want[a]);
          nonzero += fabs(want[a]) > 1e-3;
        }
        checked++;
      }
      nh_method_free(m);
    }
  }
  gsl_rng_free(rng);
  cr_expect_gt(checked, 60, "only %d pairs checked", checked);
  cr_expect_gt(nonzero, checked / 2, "the values are not trivially 0 (%d of %d)", nonzero, checked);
}

/* ---- discrete actions and energies on arbitrary pairs --------------------------------------------- */

/* ½ wᵀM(q)w. */
static double kinetic(const nh_system *sys, const double *q, const double *w) {
  double space[NH_MAX_N * NH_MAX_N], s = 0;
  const double *M = nh_mass_at(sys, q, space);
  for (int i = 0; i < sys->n; i++)
    for (int j = 0; j < sys->n; j++) s += w[i] * M[i * sys->n + j] * w[j];
  return 0.5 * s;
}

/* The discrete Lagrangians (spec/discretization.md §2.1, (80), §2.5; spec/newmark.md §2.6;
 * spec/rattle.md §2.8), all of the form h·½(Δq/h)ᵀM(Δq/h) − h·V̄ with V̄ the method's quadrature of
 * V: (1 − α)V(q0) + αV(q1) (nh_newmark, dla), V(q0) (js_a, js_p1), V((q0 + q1)/2) (js_b, js_p2new,
 * js_p2orig), (V(q0) + V(q1))/2 (the RATTLE family); NaN for nh_newmark with β or β' ≠ 0. The
 * discrete energies: the contact schemes' midpoint energy ½(Δq/h)ᵀM(q̄)(Δq/h) + (V(q0) + V(q1))/2
 * (spec/herglotz.md §6) and nh_shake's E_d, the same with constant M (spec/rattle.md §2.9). */
static double expected_action(const nh_method *m, const nh_system *sys, const double *q0, const double *q1, double h,
                              int *known) {
  const char *name = m->type->name;
  double dq[NH_MAX_N], qm[NH_MAX_N], Vbar;
  const double V0 = sys->type->potential(sys->p, q0), V1 = sys->type->potential(sys->p, q1);
  for (int i = 0; i < sys->n; i++) dq[i] = (q1[i] - q0[i]) / h, qm[i] = 0.5 * (q0[i] + q1[i]);
  *known = 1;
  if (!strcmp(name, "nh_newmark") || !strcmp(name, "dla")) {
    if (!strcmp(name, "nh_newmark") && (nh_method_param(m, "beta") != 0 || nh_method_param(m, "beta2") != 0)) return NAN;
    const double alpha = nh_method_param(m, "alpha");
    Vbar = (1 - alpha) * V0 + alpha * V1;
  } else if (!strcmp(name, "js_a") || !strcmp(name, "js_p1")) {
    Vbar = V0;
  } else if (!strcmp(name, "js_b") || !strcmp(name, "js_p2new") || !strcmp(name, "js_p2orig")) {
    Vbar = sys->type->potential(sys->p, qm);
  } else if (!strcmp(name, "nh_rattle") || !strcmp(name, "nh_shake") || !strcmp(name, "rattle") ||
             !strcmp(name, "shake")) {
    Vbar = 0.5 * (V0 + V1);
  } else {
    *known = 0;
    return NAN;
  }
  return h * kinetic(sys, q0, dq) - h * Vbar;
}

static double expected_energy(const nh_method *m, const nh_system *sys, const nh_state *x, const nh_state *y, double h,
                              int *known) {
  const char *name = m->type->name;
  double dq[NH_MAX_N], qm[NH_MAX_N];
  for (int i = 0; i < sys->n; i++) dq[i] = (y->q[i] - x->q[i]) / h, qm[i] = 0.5 * (x->q[i] + y->q[i]);
  *known = !strcmp(name, "herglotz1") || !strcmp(name, "herglotz2") || !strcmp(name, "la1") || !strcmp(name, "nh_shake");
  return kinetic(sys, qm, dq) + 0.5 * (sys->type->potential(sys->p, x->q) + sys->type->potential(sys->p, y->q));
}

Test(method_interface, discrete_actions_and_energies_on_arbitrary_pairs) {
  static const char *const systems[] = {"chaotic_particle", "vertical_disk", "pendulum", "falling_disk",
                                        "oscillator"};
  static const char *const variants[] = {"nh_newmark(alpha=0)", "nh_newmark(alpha=0.3)", "nh_newmark(alpha=1)",
                                         "nh_newmark(beta=0.1,beta2=0.1)", "nh_newmark(beta2=0.2)",
                                         "dla(alpha=0.7)", "dla(alpha=0)"};
  const char *texts[64];
  int ntexts = 0;
  for (int i = 0; nh_integrator_types[i]; i++) {
    const nh_integrator_type *t = nh_integrator_types[i];
    if (!t->takes_base && (t->discrete_action || t->discrete_energy) && strcmp(t->name, "nh_rattle") && ntexts < 64)
      texts[ntexts++] = t->name; /* nh_rattle's E_d reads the force in its carry (its run: test_method_hooks_rattle.c) */
  }
  for (size_t v = 0; v < sizeof variants / sizeof *variants && ntexts < 64; v++) texts[ntexts++] = variants[v];
  gsl_rng *rng = test_rng(1602);
  int actions = 0, energies = 0;
  for (size_t s = 0; s < sizeof systems / sizeof *systems; s++) {
    nh_system sys = test_system(systems[s], "");
    for (int i = 0; i < ntexts; i++) {
      char err[512];
      nh_method *m = test_method(texts[i]);
      if (nh_method_applies(m, &sys, err, sizeof err)) {
        nh_method_free(m);
        continue;
      }
      for (int trial = 0; trial < 2; trial++) {
        nh_state x, y;
        memset(&x, 0, sizeof x), memset(&y, 0, sizeof y);
        for (int j = 0; j < sys.n; j++) {
          x.q[j] = gsl_rng_uniform(rng) * 1.6 - 0.8, y.q[j] = x.q[j] + gsl_rng_uniform(rng) * 0.6 - 0.3;
          x.v[j] = gsl_rng_uniform(rng) * 2 - 1, y.v[j] = gsl_rng_uniform(rng) * 2 - 1;
        }
        const double h = 0.2 + 0.15 * trial;
        x.t = 0.5, y.t = x.t + h;
        int known;
        if (m->type->discrete_action) {
          const double want = expected_action(m, &sys, x.q, y.q, h, &known);
          cr_assert(known, "%s: no formula in the test for its discrete action", texts[i]);
          const double got = m->type->discrete_action(m, &sys, x.t, x.q, y.q, h);
          if (isnan(want)) cr_expect(isnan(got), "%s on %s: action %g, expected NaN", texts[i], systems[s], got);
          else cr_expect(fabs(got - want) <= 1e-13 * (1 + fabs(want)), "%s on %s: action %.17g, expected %.17g",
                         texts[i], systems[s], got, want);
          actions++;
        }
        if (m->type->discrete_energy) {
          const double want = expected_energy(m, &sys, &x, &y, h, &known);
          cr_assert(known, "%s: no formula in the test for its discrete energy", texts[i]);
          const double got = m->type->discrete_energy(m, &sys, &x, &y, h);
          cr_expect(fabs(got - want) <= 1e-13 * (1 + fabs(want)), "%s on %s: energy %.17g, expected %.17g", texts[i],
                    systems[s], got, want);
          energies++;
        }
      }
      nh_method_free(m);
    }
  }
  gsl_rng_free(rng);
  cr_expect_gt(actions, 40, "%d actions checked", actions);
  cr_expect_gt(energies, 8, "%d energies checked", energies);
}

/* ---- cost counters against a system that counts its own evaluations ------------------------------ */

/* counted_system, a_calls, g_calls: tests/counting_system.h */

/* integrator.h: rhs_evals counts the evaluations of ∇V (or of the right-hand side, which evaluates
 * it once), constraint_evals those of A(q) = μ(q). Over init and 4 steps from the default state,
 * for every method outside the Newmark family (tests/integrators/test_method_hooks_newmark.c counts that one)
 * and compositions, on every registered system it applies to, the counters equal the calls the
 * system saw: a step that forgot to count one, or counted one it did not make, fails. The contact
 * engine (herglotz1, herglotz2, la1) also counts each Newton residual (integrators/herglotz.c
 * header: "each residual counts one rhs_eval"), so its rhs_evals = ∇V calls + Newton iterations
 * (one residual per iteration) on a system without forcing (with forcing it also counts F(t), on
 * its own (force_at) but not inside nh_free_force: not checked there). js_p1 reads
 * μ and ∇V of the particle inline and counts what js_a evaluates (jimenez_scheurle.c header: "P1
 * costs what A does"); js_p2new/js_p2orig likewise count inline points, not checked here. */
Test(method_interface, cost_counters_match_counted_evaluations) {
  static const char *const methods[] = {
      "js_a", "js_b", "herglotz1", "herglotz2", "herglotz2(forcing=midpoint)",
      "la1", "la1(forcing=midpoint)", "contact2", "m11", "mp418", "nh_energy", "spark(s=2)", "spark(s=3)", "js_p1",
      "spark(s=4)", "nh_rattle", "nh_rattle(lambda0=0)", "nh_shake", "rattle", "shake", "triple_jump(js_b)",
      "adjoint_pair(nh_rattle)", "suzuki5(spark(s=2))", "triple_jump(herglotz2)",
      "triple_jump(contact2)"};
  int checked = 0;
  for (int s = 0; nh_system_types[s]; s++)
    for (size_t mi = 0; mi < sizeof methods / sizeof *methods; mi++) {
      const nh_system_type *base = nh_system_types[s];
      nh_system sys = counted_system(base);
      char err[512];
      nh_method *m = nh_method_parse(methods[mi], err, sizeof err);
      cr_assert(m, "%s: %s", methods[mi], err);
      if (nh_method_applies(m, &sys, err, sizeof err)) {
        nh_method_free(m);
        continue;
      }
      nh_state x, y;
      nh_system_default_state(&sys, &x);
      nh_cost cost = {0};
      a_calls = g_calls = 0;
      nh_step_status st = nh_method_init(m, &sys, &x, 0.05, &cost);
      for (int step = 0; step < 4 && st == NH_STEP_OK; step++) {
        st = nh_method_step(m, &sys, &x, &y, 0.05, &cost);
        x = y;
      }
      cr_expect_eq(st, NH_STEP_OK, "%s on %s", methods[mi], base->name);
      if (!strcmp(methods[mi], "js_p1")) {
        nh_system ref = test_system_of(&counted_type, NULL);
        nh_method *a = test_method("js_a");
        nh_state xa, ya;
        nh_system_default_state(&ref, &xa);
        nh_cost ca = {0};
        a_calls = g_calls = 0;
        cr_assert_eq(nh_method_init(a, &ref, &xa, 0.05, &ca), NH_STEP_OK);
        for (int step = 0; step < 4; step++) {
          cr_assert_eq(nh_method_step(a, &ref, &xa, &ya, 0.05, &ca), NH_STEP_OK);
          xa = ya;
        }
        nh_method_free(a);
        cr_expect(a_calls > 0 && g_calls > 0, "js_a on %s evaluates", base->name);
      }
      const int engine = strstr(methods[mi], "herglotz") || strstr(methods[mi], "la1");
      if (engine) g_calls += cost.newton_iterations;
      const int check_rhs = !(engine && test_forces(base)->forcing);
      cr_expect(cost.constraint_evals == a_calls, "%s on %s: constraint_evals %llu, A evaluated %llu times",
                methods[mi], base->name, cost.constraint_evals, a_calls);
      cr_expect(!check_rhs || cost.rhs_evals == g_calls, "%s on %s: rhs_evals %llu, expected %llu", methods[mi],
                base->name, cost.rhs_evals, g_calls);
      checked++;
      nh_method_free(m);
    }
  cr_expect_gt(checked, 100, "only %d method x system pairs checked", checked);
}

/* ---- integrators/method.c: the syntax's exact messages, with_param, the step's finiteness check -- */

static void expect_parse_error(const char *text, const char *want) {
  char err[512] = "";
  nh_method *m = nh_method_parse(text, err, sizeof err);
  cr_expect(m == NULL, "'%s' was accepted", text);
  if (m) nh_method_free(m);
  cr_expect_str_eq(err, want, "for '%s'", text);
}

/* Columns count from 1 at the first character of the text (fail() in method.c). */
Test(method_interface, syntax_errors_name_the_column) {
  expect_parse_error("rk4 x", "unexpected text after the method at column 5 of method 'rk4 x'");
  expect_parse_error("(rk4)", "expected a name at column 1 of method '(rk4)'");
  expect_parse_error("nh_newmark(alpha 0.5)",
                     "expected '=' after a parameter name at column 18 of method 'nh_newmark(alpha 0.5)'");
  expect_parse_error("nh_newmark(alpha=0.5 beta=0)",
                     "expected ',' or ')' at column 22 of method 'nh_newmark(alpha=0.5 beta=0)'");
  expect_parse_error("triple_jump", "triple_jump needs a base method, as in triple_jump(nh_newmark(alpha=0.5)), in "
                                    "'triple_jump'");
  expect_parse_error("triple_jump()", "expected a name at column 13 of method 'triple_jump()'");
  /* A parameter once (issue 47): a second value would silently win; an old spelling is its new name,
   * a lone value its one parameter; in a composition each method has its own. */
  expect_parse_error("nh_newmark(beta=0.1,beta=0.2)",
                     "parameter 'beta' is given twice at column 29 of method 'nh_newmark(beta=0.1,beta=0.2)'");
  expect_parse_error("nh_newmark(disc=14,constraint=point)",
                     "parameter 'constraint' is given twice at column 36 of method 'nh_newmark(disc=14,constraint=point)'");
  expect_parse_error("spark(3,s=3)", "parameter 's' is given twice at column 12 of method 'spark(3,s=3)'");
  nh_method_free(test_method("nh_newmark(beta=0.1,beta2=0.1,alpha=0.5)"));
  nh_method_free(test_method("triple_jump(nh_newmark(alpha=0.5,beta=0))"));
  /* Controls: the same texts written correctly parse, spaces allowed around every token. */
  static const char *const good[] = {" rk4 ", "nh_newmark( alpha = 0.5 , beta = 0 )",
                                     "triple_jump( nh_newmark(alpha=0.5) )"};
  for (int i = 0; i < 3; i++) nh_method_free(test_method(good[i]));
  nh_method *m = test_method("nh_newmark( alpha = 0.3 , beta = 0.1 )");
  cr_expect_eq(nh_method_param(m, "alpha"), 0.3);
  cr_expect_eq(nh_method_param(m, "beta"), 0.1);
  cr_expect(isnan(nh_method_param(m, "gamma")), "no such parameter: NaN");
  nh_method_free(m);
}

/* with_param sets the parameter on the innermost method that has it and re-validates; a value out
 * of range names the method and the parameter; the original is untouched. */
Test(method_interface, with_param) {
  char err[512] = "";
  nh_method *m = test_method("triple_jump(nh_newmark(alpha=0.5))");
  nh_method *w = nh_method_with_param(m, "alpha", 0.5, err, sizeof err);
  cr_assert(w, "%s", err);
  cr_expect_eq(nh_method_param(w->base, "alpha"), 0.5);
  nh_method_free(w);
  /* α = 0.3 makes the base non-symmetric of order 1: the triple jump refuses it on re-parse. */
  w = nh_method_with_param(m, "alpha", 0.3, err, sizeof err);
  cr_expect(w == NULL, "triple_jump of a non-symmetric base accepted");
  cr_expect(strstr(err, "triple_jump needs a symmetric base method of order 2") != NULL, "%s", err);
  nh_method_free(w);
  nh_method *n = test_method("nh_newmark(alpha=0.5)");
  w = nh_method_with_param(n, "beta", 0.2, err, sizeof err);
  cr_assert(w, "%s", err);
  cr_expect_eq(nh_method_param(w, "beta"), 0.2);
  cr_expect_eq(nh_method_param(n, "beta"), 0, "the original is untouched");
  nh_method_free(w);
  err[0] = '\0';
  w = nh_method_with_param(n, "alpha", 2, err, sizeof err);
  cr_expect(w == NULL, "alpha = 2 accepted");
  char fmt[256];
  nh_method_format(n, fmt, sizeof fmt);
  char prefix[300];
  snprintf(prefix, sizeof prefix, "%s: ", fmt);
  cr_expect(strncmp(err, prefix, strlen(prefix)) == 0 && strstr(err, "alpha"), "%s", err);
  nh_method_free(n);
  nh_method_free(m);
}

/* A stand-in method whose step writes a chosen state, to check what nh_method_step adds to it. */
static double fake_q_last, fake_v_last;
static nh_step_status fake_status;
static nh_step_status fake_step(const nh_method *m, const nh_system *sys, const nh_state *x, nh_state *y, double h,
                                nh_cost *cost) {
  (void)m, (void)cost;
  *y = *x;
  y->t = x->t + h;
  for (int i = 0; i < sys->n; i++) y->q[i] = 1.5 + i, y->v[i] = -0.5 - i;
  y->q[sys->n - 1] = fake_q_last, y->v[sys->n - 1] = fake_v_last;
  return fake_status;
}
static nh_step_status fake_init(const nh_method *m, const nh_system *sys, nh_state *x, double h, nh_cost *cost) {
  (void)m, (void)sys;
  x->z = h; /* a mark */
  cost->steps += 7;
  return NH_STEP_OK;
}

/* nh_method_step passes a failure through and turns any non-finite entry of q or v (the last one
 * included; +inf alone, which u + u would keep finite-looking as inf == inf, and NaN) into
 * NH_STEP_NONFINITE; finite states pass. */
Test(method_interface, step_reports_nonfinite_states) {
  static nh_integrator_type fake = {.name = "fake", .step = fake_step, .init = fake_init};
  nh_method m = {.type = &fake};
  nh_system sys = test_system("chaotic_particle", "");
  nh_state x, y;
  nh_system_default_state(&sys, &x);
  nh_cost cost = {0};
  const double bad[] = {INFINITY, -INFINITY, NAN};
  fake_status = NH_STEP_OK;
  fake_q_last = 2, fake_v_last = 3;
  cr_expect_eq(nh_method_step(&m, &sys, &x, &y, 0.1, &cost), NH_STEP_OK);
  for (int b = 0; b < 3; b++) {
    fake_q_last = bad[b], fake_v_last = 3;
    cr_expect_eq(nh_method_step(&m, &sys, &x, &y, 0.1, &cost), NH_STEP_NONFINITE, "q last = %g", bad[b]);
    fake_q_last = 2, fake_v_last = bad[b];
    cr_expect_eq(nh_method_step(&m, &sys, &x, &y, 0.1, &cost), NH_STEP_NONFINITE, "v last = %g", bad[b]);
  }
  fake_q_last = 2, fake_v_last = 3;
  fake_status = NH_STEP_SOLVER_FAILED;
  cr_expect_eq(nh_method_step(&m, &sys, &x, &y, 0.1, &cost), NH_STEP_SOLVER_FAILED);
  fake_status = NH_STEP_OK;
  /* init: the type's own, else (a composition) the base's, else nothing. */
  nh_method comp = {.type = nh_integrator_type_find("triple_jump"), .base = &m};
  nh_state x1 = x;
  cr_expect_eq(nh_method_init(&comp, &sys, &x1, 0.25, &cost), NH_STEP_OK);
  cr_expect_eq(x1.z, 0.25, "the base's init ran");
  cr_expect_eq(cost.steps, 7);
  static nh_integrator_type bare = {.name = "bare", .step = fake_step};
  nh_method b = {.type = &bare};
  nh_state x2 = x;
  cr_expect_eq(nh_method_init(&b, &sys, &x2, 0.25, &cost), NH_STEP_OK);
  cr_expect_eq(memcmp(&x2, &x, sizeof x), 0, "no init: the state is untouched");
  cr_expect_eq(cost.steps, 7);
}

/* The time a multiplier approximates: t0, (t0 + t1)/2, t1, or NaN, by lambda_time; a composition
 * has its base's when that is the step's end, else none. */
Test(method_interface, multiplier_times) {
  static nh_integrator_type types[4];
  const nh_lambda_time when[4] = {NH_LAMBDA_NONE, NH_LAMBDA_START, NH_LAMBDA_MIDPOINT, NH_LAMBDA_END};
  const double t0 = 1.25, t1 = 2.0, want[4] = {NAN, 1.25, 1.625, 2.0};
  for (int i = 0; i < 4; i++) {
    types[i] = (nh_integrator_type){.name = "fake", .step = fake_step, .lambda_time = when[i]};
    nh_method m = {.type = &types[i]};
    nh_method comp = {.type = nh_integrator_type_find("adjoint_pair"), .base = &m};
    const double got = nh_method_multiplier_time(&m, t0, t1);
    if (i == 0) cr_expect(isnan(got), "none: %g", got);
    else cr_expect_eq(got, want[i], "lambda_time %d: %g", i, got);
    cr_expect_eq(nh_method_lambda_time(&comp), i == 3 ? NH_LAMBDA_END : NH_LAMBDA_NONE, "composition over %d", i);
    const double gc = nh_method_multiplier_time(&comp, t0, t1);
    if (i == 3) cr_expect_eq(gc, t1);
    else cr_expect(isnan(gc), "composition over %d: %g", i, gc);
  }
}

/* nh_cost_add adds each counter into its own field. */
Test(method_interface, cost_add_field_by_field) {
  nh_cost sum = {1, 2, 3, 4, 5, 6};
  const nh_cost c = {10, 200, 3000, 40000, 500000, 6000000};
  nh_cost_add(&sum, &c);
  cr_expect_eq(sum.steps, 11);
  cr_expect_eq(sum.rhs_evals, 202);
  cr_expect_eq(sum.jacobian_evals, 3003);
  cr_expect_eq(sum.linear_solves, 40004);
  cr_expect_eq(sum.newton_iterations, 500005);
  cr_expect_eq(sum.constraint_evals, 6000006);
}

/* Why a method does not apply, feature by feature (method.c nh_method_applies): a method that
 * handles nothing, with applies_doc "needs X", on systems whose features are known from their
 * headers; a method handling every feature applies, and then its base decides. */
static int applies_never(const nh_method *m, const nh_system *sys, char *err, size_t errlen) {
  (void)m, (void)sys;
  snprintf(err, errlen, "never here");
  return -1;
}

Test(method_interface, applies_messages) {
  static const nh_integrator_type none = {.name = "fake", .step = fake_step, .applies_doc = "needs X"};
  /* handles all but the time dependence: refused with the time-dependence reason instead */
  static const nh_integrator_type untimed = {
      .name = "untimed", .step = fake_step, .applies_doc = "needs X",
      .handles = ~0u & ~(unsigned)(NH_SYS_TIME_DAMPING | NH_SYS_TIME_POTENTIAL)};
  char err[512];
  static const struct {
    const nh_integrator_type *type;
    const char *system, *params, *want;
  } cases[] = {
      {&none, "falling_disk", "alpha=0.1,F_psi_const=12", "fake does not apply to falling_disk: it needs X; "
       "falling_disk has a configuration-dependent mass matrix damping forcing"},
      {&none, "falling_disk", "", "fake does not apply to falling_disk: it needs X; falling_disk has a "
       "configuration-dependent mass matrix"},
      {&none, "foucault_pendulum", "", "fake does not apply to foucault_pendulum: it needs X; foucault_pendulum has "
       "affine constraints damping"},
      {&none, "lane_emden", "", "fake does not apply to lane_emden: it needs X; lane_emden has time-dependent "
       "damping alpha(t)"},
      {&untimed, "lane_emden", "", "untimed does not apply to lane_emden: it takes the damping alpha as a constant "
       "and the potential as time-independent; lane_emden has time-dependent damping alpha(t)"},
      {&untimed, "spin_orbit", "", "untimed does not apply to spin_orbit: it takes the damping alpha as a constant "
       "and the potential as time-independent; spin_orbit has time-dependent damping alpha(t) a time-dependent "
       "potential W(q,t)"},
  };
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    nh_method m = {.type = cases[c].type};
    nh_system sys = test_system(cases[c].system, cases[c].params);
    err[0] = '\0';
    cr_expect_eq(nh_method_applies(&m, &sys, err, sizeof err), -1, "%s", cases[c].system);
    cr_expect_str_eq(err, cases[c].want);
  }
  nh_method m = {.type = &none};
  nh_system plain = test_system("particle", "");
  cr_expect_eq(nh_method_applies(&m, &plain, err, sizeof err), 0, "no extra feature: applies");
  static const nh_integrator_type picky = {.name = "picky", .step = fake_step, .handles = ~0u, .applies = applies_never};
  nh_method p = {.type = &picky};
  cr_expect_eq(nh_method_applies(&p, &plain, err, sizeof err), -1);
  cr_expect_str_eq(err, "picky does not apply to particle: never here");
  static const nh_integrator_type all = {.name = "all", .step = fake_step, .handles = ~0u};
  nh_method comp = {.type = &all, .base = &p};
  cr_expect_eq(nh_method_applies(&comp, &plain, err, sizeof err), -1, "the base decides");
  cr_expect_str_eq(err, "picky does not apply to particle: never here");
}

/* ---- integrators/reference.c ------------------------------------------------------------------- */

/* rk8pd at tol 1e-12 reproduces exact solutions forwards and backwards from a start at t0 ≠ 0
 * (the initial step's sign follows T − t0), keeps what it does not integrate (z) from x0, and
 * ends at exactly T; where the index-reduced ODE is undefined (C singular at the start) it fails.
 * nh_true_solution takes the exact solution where the system has one for the state ("exact"), else
 * the same rk8pd solve ("rk8pd", bit for bit). */
Test(method_interface, reference_solutions) {
  static const struct {
    const char *system, *params, *preset;
  } cases[] = {{"knife_edge", "", NULL}, {"damped_oscillator", "beta=0.3", NULL}, {"falling_disk", "alpha=0.1", "exp1"},
               {"foucault_pendulum", "", NULL}};
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    nh_system sys = test_system(cases[c].system, cases[c].params);
    nh_state x0, ex, x;
    if (cases[c].preset) x0 = test_preset(&sys, cases[c].preset);
    else nh_system_default_state(&sys, &x0);
    x0.t = 0.75, x0.z = -2.5;
    for (int dir = -1; dir <= 1; dir += 2) {
      const double T = x0.t + dir * 1.5;
      cr_assert_eq(nh_reference_solve(&sys, &x0, T, 1e-12, &x), 0, "%s to %g", cases[c].system, T);
      cr_assert_eq(nh_exact_solution(&sys, &x0, T, &ex), 0, "%s: exact", cases[c].system);
      cr_expect_eq(x.t, T);
      cr_expect_eq(x.z, -2.5);
      for (int i = 0; i < sys.n; i++) {
        cr_expect(fabs(x.q[i] - ex.q[i]) <= 1e-9 * (1 + fabs(ex.q[i])), "%s, T = %g: q%d %.15g, exact %.15g",
                  cases[c].system, T, i, x.q[i], ex.q[i]);
        cr_expect(fabs(x.v[i] - ex.v[i]) <= 1e-9 * (1 + fabs(ex.v[i])), "%s, T = %g: v%d %.15g, exact %.15g",
                  cases[c].system, T, i, x.v[i], ex.v[i]);
      }
      const char *kind = NULL;
      nh_state y;
      cr_assert_eq(nh_true_solution(&sys, &x0, T, 1e-12, &y, &kind), 0);
      cr_expect_str_eq(kind, "exact");
      cr_expect_eq(memcmp(y.q, ex.q, sizeof ex.q), 0, "%s: the exact solution itself", cases[c].system);
      cr_assert_eq(nh_true_solution(&sys, &x0, T, 1e-12, &y, NULL), 0, "kind may be NULL");
    }
  }
  /* No exact solution for a tilted falling disk (exact() returns -1): rk8pd. */
  nh_system disk = test_system("falling_disk", "");
  nh_state x0 = test_preset(&disk, "exp2"), a, b, ex;
  cr_assert_neq(nh_exact_solution(&disk, &x0, 0.5, &ex), 0, "exp2 has no exact solution");
  const char *kind = NULL;
  cr_assert_eq(nh_true_solution(&disk, &x0, 0.5, 1e-11, &a, &kind), 0);
  cr_expect_str_eq(kind, "rk8pd");
  cr_assert_eq(nh_reference_solve(&disk, &x0, 0.5, 1e-11, &b), 0);
  cr_expect_eq(memcmp(a.q, b.q, sizeof a.q), 0);
  cr_expect_eq(memcmp(a.v, b.v, sizeof a.v), 0);
  cr_expect_neq(memcmp(a.q, x0.q, sizeof a.q), 0, "it moved");
  /* Undefined at the start: the Foucault pendulum at the origin, where C = |q|²/m = 0. */
  nh_system fp = test_system("foucault_pendulum", "");
  nh_state origin = {0}, r;
  cr_expect_eq(nh_reference_solve(&fp, &origin, 1, 1e-10, &r), -1);
}

/* ---- symmetry and adjoints, registry-wide ------------------------------------------------------ */

/* The adjoint Φ*_h = (Φ_{−h})⁻¹ (integrator.h) undoes a step: Φ*_{−h}(Φ_h(x)) = x, with Φ* = Φ for a
 * method that declares itself symmetric and nh_method_adjoint's method otherwise. For every
 * one-step fixed-step method (registry defaults and the variants below) on each of a few systems it
 * applies to, the round trip returns to x to the Newton tolerance (1e-10 relative: conditioning
 * included). Negative control: a method that declares neither symmetry nor an adjoint does not
 * return with itself (defect > 1e-8; on the two nonlinear systems), so that the declaration is not
 * merely unchecked; nh_energy
 * is the documented exception (reversible but not declared symmetric, integrators/nh_energy.c). */
Test(method_interface, adjoint_round_trips_for_every_method) {
  static const char *const variants[] = {"nh_newmark(alpha=0)", "nh_newmark(beta=0.1,beta2=0.2,alpha=0.3)",
                                         "nh_newmark(beta=0.1,beta2=0.1,alpha=0.5,constraint=average)",
                                         "newmark(beta=0.25,gamma=0.5)", "newmark(beta=0,gamma=0.5)",
                                         "herglotz2(forcing=midpoint)", "spark(s=3)", "nh_rattle(lambda0=0)",
                                         "triple_jump(nh_rattle)", "adjoint_pair(nh_newmark(alpha=0))"};
  static const char *const systems[] = {"chaotic_particle", "pendulum", "oscillator", "vertical_disk"};
  const char *texts[64];
  int ntexts = 0, symmetric = 0, adjoints = 0, controls = 0;
  for (int i = 0; nh_integrator_types[i]; i++)
    if (!nh_integrator_types[i]->takes_base && ntexts < 64) texts[ntexts++] = nh_integrator_types[i]->name;
  for (size_t v = 0; v < sizeof variants / sizeof *variants && ntexts < 64; v++) texts[ntexts++] = variants[v];
  for (int i = 0; i < ntexts; i++) {
    nh_method *m = test_method(texts[i]);
    const nh_integrator_type *t = m->type;
    if (t->properties & (NH_HISTORY | NH_TOLERANCE_DRIVEN)) {
      nh_method_free(m);
      continue;
    }
    nh_method *adj = nh_method_adjoint(m);
    const int sym = nh_method_is_symmetric(m);
    for (size_t s = 0; s < sizeof systems / sizeof *systems; s++) {
      nh_system sys = test_system(systems[s], "");
      char err[512];
      if (nh_method_applies(m, &sys, err, sizeof err)) continue;
      nh_state x, y, z;
      nh_system_default_state(&sys, &x);
      nh_cost cost = {0};
      const double h = 0.1;
      cr_assert_eq(nh_method_init(m, &sys, &x, h, &cost), NH_STEP_OK, "%s on %s", texts[i], systems[s]);
      cr_assert_eq(nh_method_step(m, &sys, &x, &y, h, &cost), NH_STEP_OK, "%s on %s", texts[i], systems[s]);
      const nh_method *back = adj ? adj : m;
      cr_assert_eq(nh_method_step(back, &sys, &y, &z, -h, &cost), NH_STEP_OK, "%s on %s: back", texts[i], systems[s]);
      double defect = 0, scale = 1;
      for (int j = 0; j < sys.n; j++) {
        defect = fmax(defect, fmax(fabs(z.q[j] - x.q[j]), fabs(z.v[j] - x.v[j])));
        scale = fmax(scale, fmax(fabs(x.q[j]), fabs(x.v[j])));
      }
      cr_expect(fabs(z.t - x.t) < 1e-15, "%s: t back at %.17g", texts[i], z.t);
      if (adj) {
        cr_expect(defect <= 1e-10 * scale, "%s on %s (%s): Phi*_{-h} Phi_h moves x by %.3e", texts[i], systems[s],
                  sym ? "symmetric" : "with its adjoint", defect);
        sym ? symmetric++ : adjoints++;
      } else if (strcmp(t->name, "nh_energy") != 0 && s < 2) { /* nonlinear systems only: a linear or free
                                                                  * motion can be reversible by accident */
        cr_expect(defect > 1e-8 * scale, "%s on %s declares no adjoint, yet Phi_{-h} Phi_h = id (%.3e)", texts[i],
                  systems[s], defect);
        controls++;
      }
    }
    nh_method_free(adj);
    nh_method_free(m);
  }
  cr_expect_gt(symmetric, 15, "%d symmetric round trips", symmetric);
  cr_expect_gt(adjoints, 2, "%d adjoint round trips", adjoints);
  cr_expect_gt(controls, 3, "%d controls", controls);
}

/* Remark 3.3 of spec/newmark.md: β + β' = ½ is refused with the reason unless
 * allow_ill_conditioned=1, and then carries a caveat, also through a composition (its base's);
 * next to it (β + β' = 0.5 ± 1e-6, allowed) and other methods carry none. */
Test(method_interface, ill_conditioned_newmark_refused_or_caveated) {
  expect_parse_error("nh_newmark(beta=0.2,beta2=0.3)",
                     "nh_newmark: beta + beta2 = 1/2 makes the Newton system ill-conditioned (spec/newmark.md 2.5, "
                     "Remark 3.3); add allow_ill_conditioned=1 to run it anyway in method "
                     "'nh_newmark(beta=0.2,beta2=0.3)'");
  nh_method *m = test_method("nh_newmark(beta=0.2,beta2=0.3,allow_ill_conditioned=1)");
  const char *c = nh_method_caveat(m);
  cr_assert(c != NULL, "no caveat at beta + beta2 = 1/2");
  cr_expect(strstr(c, "beta + beta2 = 1/2 (run with allow_ill_conditioned=1)") == c, "%s", c);
  nh_method *comp = test_method("adjoint_pair(nh_newmark(beta=0.2,beta2=0.3,alpha=0,allow_ill_conditioned=1))");
  cr_expect_str_eq(nh_method_caveat(comp), c);
  nh_method_free(comp);
  nh_method_free(m);
  static const char *const clean[] = {"nh_newmark(beta=0.2,beta2=0.300001)", "nh_newmark(beta=0.2,beta2=0.299999)",
                                      "nh_newmark(beta=0.2,beta2=0.3000001,allow_ill_conditioned=1)", "rk4",
                                      "triple_jump(nh_newmark)"};
  for (int i = 0; i < 5; i++) {
    nh_method *k = test_method(clean[i]);
    cr_expect(nh_method_caveat(k) == NULL, "%s has a caveat", clean[i]);
    nh_method_free(k);
  }
}

/* ---- the hooks write exactly their outputs ----------------------------------------------------- */

#define SENTINEL 7777.0

/* Every hook that fills a caller's array writes all of its entries and nothing past them:
 * newton_eval F (N) and J (N×N), newton_unknowns X (N), discrete_constraint (k), for every method on
 * each system it applies to, after init and one step (x → y). The arrays sit in larger ones filled
 * with a sentinel: an entry left at the sentinel was not written, one past the end that changed was
 * overwritten (a loop bound off by one). */
Test(method_interface, hooks_write_exactly_their_outputs) {
  static const char *const systems[] = {"chaotic_particle", "pendulum", "oscillator", "vertical_disk",
                                        "foucault_pendulum", "falling_disk", "particle"};
  int checked = 0;
  for (int i = 0; nh_integrator_types[i]; i++) {
    const nh_integrator_type *t = nh_integrator_types[i];
    if (t->takes_base || (t->properties & NH_TOLERANCE_DRIVEN) || (!t->newton && !t->discrete_constraint))
      continue;
    nh_method *m = test_method(t->name);
    for (size_t s = 0; s < sizeof systems / sizeof *systems; s++) {
      nh_system sys = test_system(systems[s], "");
      char err[512];
      if (nh_method_applies(m, &sys, err, sizeof err)) continue;
      nh_state x, y;
      nh_system_default_state(&sys, &x);
      nh_cost cost = {0};
      const double h = 0.05;
      cr_assert_eq(nh_method_init(m, &sys, &x, h, &cost), NH_STEP_OK, "%s on %s", t->name, systems[s]);
      cr_assert_eq(nh_method_step(m, &sys, &x, &y, h, &cost), NH_STEP_OK, "%s on %s", t->name, systems[s]);
      enum { PAD = 4 };
      if (t->newton) {
        const int N = t->newton->size(m, &sys);
        double X[NH_MAX_NEWTON + PAD], F[NH_MAX_NEWTON + PAD], J[NH_MAX_NEWTON * NH_MAX_NEWTON + PAD];
        fill(X, NH_MAX_NEWTON + PAD, SENTINEL), fill(F, NH_MAX_NEWTON + PAD, SENTINEL);
        fill(J, NH_MAX_NEWTON * NH_MAX_NEWTON + PAD, SENTINEL);
        t->newton->unknowns(m, &sys, &x, &y, h, X);
        for (int j = 0; j < N; j++) cr_expect_neq(X[j], SENTINEL, "%s on %s: X[%d] not written", t->name, systems[s], j);
        for (int j = N; j < N + PAD; j++)
          cr_expect_eq(X[j], SENTINEL, "%s on %s: X[%d] written past N = %d", t->name, systems[s], j, N);
        if (N > 0) {
          for (int j = 0; j < N; j++) X[j] = isfinite(X[j]) ? X[j] : 0;
          t->newton->eval(m, &sys, &x, h, X, F, J);
          for (int j = 0; j < N; j++) cr_expect_neq(F[j], SENTINEL, "%s on %s: F[%d] not written", t->name, systems[s], j);
          for (int j = 0; j < N * N; j++)
            cr_expect_neq(J[j], SENTINEL, "%s on %s: J[%d] not written", t->name, systems[s], j);
          for (int j = N; j < N + PAD; j++)
            cr_expect_eq(F[j], SENTINEL, "%s on %s: F[%d] written past N = %d", t->name, systems[s], j, N);
          for (int j = N * N; j < N * N + PAD; j++)
            cr_expect_eq(J[j], SENTINEL, "%s on %s: J[%d] written past N² = %d", t->name, systems[s], j, N * N);
        }
        checked++;
      }
      if (t->discrete_constraint && strcmp(t->name, "nh_shake") && strcmp(t->name, "shake")) {
        double out[NH_MAX_K + PAD];
        fill(out, NH_MAX_K + PAD, SENTINEL);
        t->discrete_constraint(m, &sys, &x, &y, h, out);
        for (int a = 0; a < sys.k; a++) cr_expect_neq(out[a], SENTINEL, "%s on %s: row %d not written", t->name, systems[s], a);
        for (int a = sys.k; a < sys.k + PAD; a++)
          cr_expect_eq(out[a], SENTINEL, "%s on %s: out[%d] written past k = %d", t->name, systems[s], a, sys.k);
        checked++;
      }
    }
    nh_method_free(m);
  }
  cr_expect_gt(checked, 40, "%d hook calls checked", checked);
}

/* A step writes q and v (n entries) and the multiplier (k entries) of its result and nothing past
 * them: the entries of x (and of the y it is given) beyond n and k hold a sentinel, which init and
 * three steps leave unchanged, for every method (and a composition) on every
 * registered system it applies to with n < NH_MAX_N. A loop over n or k one entry too far writes
 * the sentinel's slot. */
Test(method_interface, steps_write_nothing_past_n_and_k) {
  const char *texts[80];
  int ntexts = 0, checked = 0;
  for (int i = 0; nh_integrator_types[i]; i++)
    if (!nh_integrator_types[i]->takes_base && ntexts < 70) texts[ntexts++] = nh_integrator_types[i]->name;
  texts[ntexts++] = "triple_jump(nh_newmark)";
  texts[ntexts++] = "adjoint_pair(nh_newmark(alpha=0))";
  texts[ntexts++] = "nh_newmark(beta=0.1,beta2=0.2,alpha=0.3)";
  for (int s = 0; nh_system_types[s]; s++) {
    nh_system sys = test_system_of(nh_system_types[s], NULL);
    if (sys.n >= NH_MAX_N) continue;
    for (int i = 0; i < ntexts; i++) {
      nh_method *m = test_method(texts[i]);
      char err[512];
      if (nh_method_applies(m, &sys, err, sizeof err)) {
        nh_method_free(m);
        continue;
      }
      nh_state x, y;
      nh_system_default_state(&sys, &x);
      for (int j = sys.n; j < NH_MAX_N; j++) x.q[j] = x.v[j] = SENTINEL;
      for (int a = sys.k; a < NH_MAX_K; a++) x.lambda[a] = SENTINEL;
      nh_cost cost = {0};
      nh_step_status st = nh_method_init(m, &sys, &x, 0.05, &cost);
      for (int step = 0; step < 3 && st == NH_STEP_OK; step++) {
        y = x; /* y's own entries past n, k hold the sentinel too (rk4 writes only what it defines) */
        st = nh_method_step(m, &sys, &x, &y, 0.05, &cost);
        x = y;
      }
      cr_expect_eq(st, NH_STEP_OK, "%s on %s", texts[i], sys.type->name);
      for (int j = sys.n; j < NH_MAX_N; j++)
        cr_expect(x.q[j] == SENTINEL && x.v[j] == SENTINEL, "%s on %s: q[%d] = %g, v[%d] = %g past n = %d", texts[i],
                  sys.type->name, j, x.q[j], j, x.v[j], sys.n);
      for (int a = sys.k; a < NH_MAX_K; a++)
        cr_expect(x.lambda[a] == SENTINEL, "%s on %s: lambda[%d] = %g past k = %d", texts[i], sys.type->name, a,
                  x.lambda[a], sys.k);
      checked++;
      nh_method_free(m);
    }
  }
  cr_expect_gt(checked, 150, "%d method x system pairs", checked);
}

/* nh_method_format as snprintf: whatever the buffer's length, the full name's length returned, the
 * name's first len − 1 characters and a '\0' written, nothing at or past buf[len] (the buffer is
 * longer, filled with '#'). A composition, a method without parameters and one with: every part
 * of a name is cut somewhere. */
Test(method_interface, method_format_cuts_like_snprintf) {
  static const char *const texts[] = {"triple_jump(nh_newmark(beta=0.1,beta2=0.1))", "rk4", "spark(s=3)"};
  for (size_t t = 0; t < sizeof texts / sizeof *texts; t++) {
    nh_method *m = test_method(texts[t]);
    char full[256], buf[260];
    const size_t n = nh_method_format(m, full, sizeof full);
    cr_assert_eq(n, strlen(full), "%s", full);
    cr_expect_eq(nh_method_format(m, NULL, 0), n, "%s: a length-0 buffer is not written", full);
    for (size_t len = 1; len <= n + 2; len++) {
      memset(buf, '#', sizeof buf);
      cr_expect_eq(nh_method_format(m, buf, len), n, "%s in %zu", full, len);
      const size_t kept = len - 1 < n ? len - 1 : n;
      cr_expect(strncmp(buf, full, kept) == 0 && buf[kept] == '\0', "%s in %zu: '%.*s'", full, len, (int)kept, buf);
      for (size_t i = len; i < sizeof buf; i++)
        if (buf[i] != '#') {
          cr_expect_fail("%s in %zu: buf[%zu] written", full, len, i);
          break;
        }
    }
    nh_method_free(m);
  }
}

/* A method's display label (issue 49 item 5): its name, with the parameters off their defaults
 * (nh_newmark's are beta = beta2 = 0, alpha = 1/2, constraint = point) as nh_params_label writes
 * them, a composition's base inside; no parentheses when nothing is off its default. */
Test(method_interface, method_labels_leave_defaults_out) {
  static const char *const cases[][2] = {
      {"rk4", "rk4"},
      {"nh_newmark(alpha=0.5)", "nh_newmark"},
      {"nh_newmark(beta=0.1,beta2=0.1,alpha=0.5235987755982988)", "nh_newmark(beta=0.1,beta2=0.1,alpha=π/6)"},
      {"nh_newmark(alpha=0,constraint=average)", "nh_newmark(alpha=0,constraint=average)"},
      {"triple_jump(nh_newmark(alpha=0.5))", "triple_jump(nh_newmark)"},
      {"adjoint_pair(nh_newmark(beta=0.123456,alpha=0))", "adjoint_pair(nh_newmark(beta=0.1235,alpha=0))"},
      {"yoshida6(nh_newmark(beta=0.25,beta2=0.25,alpha=0.5,allow_ill_conditioned=1))",
       "yoshida6(nh_newmark(beta=0.25,beta2=0.25,allow_ill_conditioned=1))"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    nh_method *m = test_method(cases[i][0]);
    char buf[256];
    cr_expect_eq(nh_method_label(m, buf, sizeof buf), strlen(cases[i][1]), "%s", cases[i][0]);
    cr_expect_str_eq(buf, cases[i][1], "%s", cases[i][0]);
    cr_expect_eq(nh_method_label(m, NULL, 0), strlen(cases[i][1]), "%s: a length-0 buffer", cases[i][0]);
    char small[8];
    nh_method_label(m, small, sizeof small);
    cr_expect(strncmp(small, cases[i][1], 7) == 0 &&
                  strlen(small) == (strlen(cases[i][1]) < 7 ? strlen(cases[i][1]) : 7),
              "%s cut to 7: '%s'", cases[i][0], small);
    nh_method_free(m);
  }
}

/* The lists a method's parse error gives: an unknown name lists every method of the registry
 * (joined here from nh_integrator_types), and an old parameter spelling with a value that has no
 * new spelling lists the type's old spellings that do, in its alias table's order. */
Test(method_interface, parse_errors_list_what_is_known) {
  char want[2048] = "unknown method 'nosuch' in 'nosuch' (methods: ";
  for (int i = 0; nh_integrator_types[i]; i++) {
    if (i) strcat(want, ", ");
    strcat(want, nh_integrator_types[i]->name);
  }
  strcat(want, ")");
  cr_assert(strlen(want) < 500, "the list fits the parser's 512 bytes: %zu", strlen(want));
  expect_parse_error("nosuch", want);
  expect_parse_error("nh_newmark(disc=16)", "nh_newmark: deprecated parameter disc='16' has no new spelling "
                                            "(disc=14 is now constraint=point, disc=15 is now constraint=average) "
                                            "in method 'nh_newmark(disc=16)'");
  expect_parse_error("nh_newmark(force=2)", "nh_newmark: deprecated parameter force='2' has no new spelling "
                                            "(force=0 is now allow_ill_conditioned=0, force=1 is now "
                                            "allow_ill_conditioned=1) in method 'nh_newmark(force=2)'");
  /* dla has no old spelling force: an unknown parameter, with the type's parameters. */
  expect_parse_error("dla(force=2)", "dla: unknown parameter 'force' (parameters: alpha, constraint) in method "
                                     "'dla(force=2)'");
}

/* ---- predictors ------------------------------------------------------------------------------------ */

/* Three Newton methods start from a predictor that is the exact solution of their equations when
 * the acceleration and the multiplier stay constant along the step: spark's U_j = h a, Λ_j = hλ
 * (spark.c, spark_guess), newmark's a_{k+1} predicted by a_k, m11's v_{k+1} = 2v_{k+1/2} − v_k (an
 * extrapolation exact for linear v). The knife edge with θ̇ = 0 is such a motion: it slides along a
 * fixed line under constant gravity (θ0 = 0.3, so gravity has a component across the blade and
 * λ ≠ 0). Newton's first update is then at round-off: one iteration per step. Control: with
 * θ̇ = 0.5 the acceleration turns with the blade and the same steps take more. */
Test(method_interface, predictors_exact_for_constant_acceleration) {
  static const char *const methods[] = {"spark(s=2)", "spark(s=3)", "spark(s=4)", "newmark", "m11"};
  const double th = 0.3, speed = 0.7;
  for (int turning = 0; turning < 2; turning++)
    for (int i = 0; i < (int)(sizeof methods / sizeof *methods); i++) {
      nh_system sys = test_system("knife_edge", NULL);
      nh_method *m = test_method(methods[i]);
      nh_state x = {.q = {0.1, -0.2, th}, .v = {speed * cos(th), speed * sin(th), turning ? 0.5 : 0}}, y;
      nh_cost cost = {0};
      test_init_ok(m, &sys, &x, 0.1, &cost);
      cost = (nh_cost){0};
      for (int k = 0; k < 10; k++, x = y) test_step_ok(m, &sys, &x, &y, 0.1, &cost);
      if (turning)
        cr_expect_gt(cost.newton_iterations, 10, "%s, turning: %llu iterations in 10 steps", methods[i],
                     cost.newton_iterations);
      else
        cr_expect_eq(cost.newton_iterations, 10, "%s: %llu iterations in 10 steps", methods[i], cost.newton_iterations);
      nh_method_free(m);
    }
}

/* nh_method_same_family: one integrator type, whatever the parameters; a composition is its own
 * type, not its base's. */
Test(method_interface, same_family_is_the_integrator_type) {
  nh_method *a = test_method("nh_newmark(alpha=0)"), *b = test_method("nh_newmark(beta=0.1,beta2=0.1,alpha=0.5)");
  nh_method *r = test_method("rk4"), *pair = test_method("adjoint_pair(nh_newmark(alpha=0))");
  cr_expect(nh_method_same_family(a, b) && nh_method_same_family(b, a) && nh_method_same_family(r, r));
  cr_expect(!nh_method_same_family(a, r) && !nh_method_same_family(r, a));
  cr_expect(!nh_method_same_family(pair, a) && !nh_method_same_family(a, pair));
  nh_method_free(a), nh_method_free(b), nh_method_free(r), nh_method_free(pair);
}
