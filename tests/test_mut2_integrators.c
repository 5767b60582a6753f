/* integrators/: checks added for mutation robustness (issue 16), second round. Expected values
 * come from the spec's formulas written out here, from closed forms, or from where the equations
 * are undefined (a singular constraint Gram matrix); nothing is copied from the program's output. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

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

Test(mut2_integrators, newton_hooks_say_nan_where_c_is_singular) {
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
    cr_assert(t->newton_size && t->newton_eval && t->newton_unknowns, "%s has the Newton hooks", sc->method);
    const int N = t->newton_size(m, &sys);
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
      t->newton_eval(m, &sys, &x, 0.1, X, F, J);
      t->newton_unknowns(m, &sys, &x, &y, 0.1, U);
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
