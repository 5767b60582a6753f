/* The one stepping loop (integrators/evolve.h): against steps taken by hand with nh_method_step —
 * the same states bit for bit, t = t0 + k·h exactly after step k however the run is cut into calls,
 * the states one and two steps back, the observer's stop, the cost — and the method wrappers the
 * studies use instead of a method's table (integrators/method.c). */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "integrators/evolve.h"
#include "tests/helpers.h"

/* count states by hand: x[0] = x0 after init, x[s + 1] = step(x[s]), t set as the loop sets it. */
static void by_hand(const nh_method *m, const nh_system *sys, const nh_state *x0, double h, int count, nh_state *x,
                    nh_cost *cost) {
  x[0] = *x0;
  cr_assert_eq(nh_method_init(m, sys, &x[0], h, cost), NH_STEP_OK);
  for (int s = 0; s + 1 < count; s++) {
    x[s + 1] = x[s];
    cr_assert_eq(nh_method_step(m, sys, &x[s], &x[s + 1], h, cost), NH_STEP_OK);
    x[s + 1].t = x0->t + (double)(s + 1) * h;
  }
}

static int same_qv(const nh_state *a, const nh_state *b, int n) {
  return memcmp(a->q, b->q, sizeof(double) * (size_t)n) == 0 && memcmp(a->v, b->v, sizeof(double) * (size_t)n) == 0;
}

typedef struct {
  const nh_state *want; /* the states by hand */
  int n, calls, bad_prev, bad_prev2, keep;
  long stop_at; /* the step after which the observer stops the run with status 7; 0: never */
} watch;

static int observe(void *ctx, const nh_evolve *e) {
  watch *w = ctx;
  w->calls++;
  w->bad_prev += !same_qv(e->prev, &w->want[e->k - 1], w->n) || e->prev->t != w->want[e->k - 1].t;
  if (w->keep == 2 && e->k >= 2) w->bad_prev2 += !same_qv(e->prev2, &w->want[e->k - 2], w->n);
  return w->stop_at && e->k == w->stop_at ? 7 : NH_STEP_OK;
}

/* A two-step method (its history set by init) and a time-dependent system, so that t and the
 * prepared start both count: the loop's states are the hand-stepped ones bit for bit, whether it
 * runs in one call or in calls of 1, 2 and 7 steps, with one or two states kept. */
Test(evolve, states_times_and_previous_states_as_by_hand) {
  static const char *const cases[][2] = {{"chaotic_particle", "dla"}, {"time_perturbed_kepler", "rk4"},
                                          {"vertical_disk", "nh_rattle"}};
  for (int c = 0; c < 3; c++) {
    nh_system sys = test_system(cases[c][0], NULL);
    nh_method *m = test_method(cases[c][1]);
    nh_state x0;
    nh_system_default_state(&sys, &x0);
    x0.t = 0.3;
    const double h = 0.05;
    enum { STEPS = 20 };
    nh_state want[STEPS + 1];
    nh_cost cost = {0};
    by_hand(m, &sys, &x0, h, STEPS + 1, want, &cost);
    for (int keep = 1; keep <= 2; keep++) {
      static const long chunks[][4] = {{20, 0, 0, 0}, {1, 2, 7, 10}};
      for (int split = 0; split < 2; split++) {
        nh_evolve e;
        nh_evolve_start(&e, m, &sys, &x0, h, keep);
        cr_assert_eq(nh_evolve_init(&e), NH_STEP_OK);
        cr_expect(same_qv(e.x, &want[0], sys.n), "%s: the prepared start", cases[c][1]);
        watch w = {want, sys.n, 0, 0, 0, keep, 0};
        for (int k = 0; k < 4 && chunks[split][k]; k++)
          cr_assert_eq(nh_evolve_steps(&e, chunks[split][k], observe, &w), NH_STEP_OK);
        cr_expect_eq(e.k, STEPS);
        cr_expect(same_qv(e.x, &want[STEPS], sys.n), "%s, keep %d, split %d: the last state", cases[c][1], keep,
                  split);
        cr_expect_eq(e.x->t, want[STEPS].t, "t = t0 + k h exactly: %.17g, not %.17g", e.x->t, want[STEPS].t);
        cr_expect_eq(w.calls, STEPS, "the observer after every step");
        cr_expect_eq(w.bad_prev + w.bad_prev2, 0, "%s: %d states one back, %d two back differ", cases[c][1], w.bad_prev,
                     w.bad_prev2);
        cr_expect(memcmp(&e.cost, &cost, sizeof cost) == 0, "%s: the cost counts init and every step", cases[c][1]);
      }
    }
    nh_method_free(m);
  }
}

/* The observer's status stops the run after that step; a failing step stops it with its status,
 * the last good state kept. nh_integrate is the loop as a function of a state. */
Test(evolve, stops_and_nh_integrate) {
  nh_system sys = test_system("chaotic_particle", NULL);
  nh_method *m = test_method("rk4");
  nh_state x0, want[13];
  nh_system_default_state(&sys, &x0);
  nh_cost cost = {0};
  by_hand(m, &sys, &x0, 0.1, 13, want, &cost);
  nh_evolve e;
  nh_evolve_start(&e, m, &sys, &x0, 0.1, 1);
  watch w = {want, sys.n, 0, 0, 0, 1, 5};
  cr_expect_eq(nh_evolve_steps(&e, 12, observe, &w), 7);
  cr_expect(e.k == 5 && w.calls == 5 && same_qv(e.x, &want[5], sys.n), "stopped after step 5: k = %ld", e.k);
  /* A step to a NaN state (a NaN h): NH_STEP_NONFINITE, the state before it kept. */
  nh_evolve_start(&e, m, &sys, &x0, NAN, 1);
  cr_expect_eq(nh_evolve_steps(&e, 3, NULL, NULL), NH_STEP_NONFINITE);
  cr_expect(e.k == 0 && same_qv(e.x, &x0, sys.n));
  nh_state x = x0;
  nh_cost c = {.steps = 5, .rhs_evals = 3}; /* the run's cost is added to what is there */
  double residual = -1;
  cr_expect_eq(nh_integrate(m, &sys, &x, 12, 0.1, &c, &residual), NH_STEP_OK);
  cr_expect(c.steps == 5 + 12 && c.rhs_evals == 3 + 4 * 12, "cost added: %llu steps, %llu rhs", c.steps, c.rhs_evals);
  cr_expect(same_qv(&x, &want[12], sys.n) && x.t == want[12].t);
  double most = 0;
  for (int s = 0; s <= 12; s++) most = fmax(most, nh_constraint_residual(&sys, want[s].q, want[s].v));
  cr_expect_eq(residual, most, "the largest residual over the run, the start included");
  nh_method_free(m);
}

/* The wrappers answer as the method tables do: a composition defines no multiplier, discrete
 * energy, action or own discrete constraint; a contact method's composition tracks the action; a
 * parameter is found on the method that has it. */
Test(evolve, method_wrappers_answer_for_compositions) {
  nh_system sys = test_system("vertical_disk", NULL);
  nh_method *rattle = test_method("nh_rattle"), *pair = test_method("adjoint_pair(nh_newmark(alpha=0.5))");
  nh_method *rk4 = test_method("rk4"), *contact = test_method("adjoint_pair(herglotz2)");
  cr_expect_null(nh_method_lacks_discrete_energy(rattle));
  cr_expect_str_eq(nh_method_lacks_discrete_energy(pair), "compositions define discrete energies per sub-step only");
  cr_expect_str_eq(nh_method_lacks_discrete_energy(rk4), "the method defines no discrete energy");
  cr_expect_null(nh_method_lacks_multiplier(rattle));
  cr_expect(nh_method_lacks_multiplier(rk4) && strstr(nh_method_lacks_multiplier(rk4), "defines no multiplier"));
  cr_expect_null(nh_method_lacks_action(contact));
  cr_expect_not_null(nh_method_lacks_action(rattle));
  nh_state x0, y;
  nh_system_default_state(&sys, &x0);
  nh_cost c = {0};
  double d[NH_MAX_K] = {42}, lam[NH_MAX_K] = {42};
  y = x0;
  cr_assert_eq(nh_method_step(rattle, &sys, &x0, &y, 0.1, &c), NH_STEP_OK);
  cr_expect(isfinite(nh_method_discrete_energy(rattle, &sys, &x0, &y, 0.1)));
  cr_expect(isnan(nh_method_discrete_energy(pair, &sys, &x0, &y, 0.1)));
  cr_expect_eq(nh_method_own_discrete_constraint(pair, &sys, &x0, &y, 0.1, d), -1);
  cr_expect_eq(d[0], 42, "out untouched");
  cr_expect_eq(nh_method_start_multiplier(rattle, &sys, &y, lam), -1);
  cr_expect_eq(lam[0], 42, "out untouched");
  cr_expect(nh_method_param_owner(pair, "beta") != pair && nh_method_param_owner(pair, "beta") != NULL);
  cr_expect_null(nh_method_param_owner(rk4, "beta"));
  cr_expect_str_eq(nh_method_type_name(nh_method_param_owner(pair, "beta")), "nh_newmark");
  char err[256];
  cr_expect_eq(nh_method_check_param(nh_method_param_owner(pair, "beta"), "beta", 0.25, err, sizeof err), 0);
  cr_expect_eq(nh_method_check_param(nh_method_param_owner(pair, "beta"), "beta", -1, err, sizeof err), -1);
  cr_expect(!nh_method_has_history(rattle) && !nh_method_has_discrete_action(pair));
  cr_expect(isnan(nh_method_discrete_action(rk4, &sys, 0, x0.q, y.q, 0.1)));
  nh_method_free(rattle), nh_method_free(pair), nh_method_free(rk4), nh_method_free(contact);
}
