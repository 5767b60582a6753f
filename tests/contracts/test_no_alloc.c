/* "Step routines allocate nothing" (brief, Numerics): every allocation made by nhbench's own code
 * goes through tests/heap_guard.c, which counts them on request. Every base method and a
 * composition over it, on every system they apply to, must take 20 steps without a single
 * allocation. */
#include <criterion/criterion.h>
#include <stdio.h>

#include "integrators/integrator.h"
#include "tests/heap_guard.h"

static void check_steps(const char *text, const nh_system *sys) {
  char err[512];
  nh_method *m = nh_method_parse(text, err, sizeof err);
  if (!m) return; /* e.g. a composition over a base that is not symmetric */
  if (nh_method_applies(m, sys, err, sizeof err) == 0) {
    nh_state x, y;
    nh_cost cost = {0};
    nh_system_default_state(sys, &x);
    cr_assert_eq(nh_method_init(m, sys, &x, 0.01, &cost), NH_STEP_OK, "%s on %s: init", text, sys->type->name);
    test_allocations = 0;
    test_counting = 1;
    for (int s = 0; s < 20; s++) {
      nh_method_step(m, sys, &x, &y, 0.01, &cost);
      x = y;
    }
    test_counting = 0;
    cr_expect_eq(test_allocations, 0, "%s on %s: %ld allocations in 20 steps", text, sys->type->name,
                 test_allocations);
  }
  nh_method_free(m);
}

Test(no_alloc, every_method_on_every_system) {
  int checked = 0;
  for (int s = 0; nh_system_types[s]; s++) {
    nh_system sys;
    nh_system_init(&sys, nh_system_types[s]);
    for (int i = 0; nh_integrator_types[i]; i++) {
      const char *name = nh_integrator_types[i]->name;
      char text[256];
      if (nh_integrator_types[i]->takes_base) {
        snprintf(text, sizeof text, "%s(nh_newmark(alpha=0.5))", name);
      } else {
        snprintf(text, sizeof text, "%s", name);
      }
      check_steps(text, &sys);
      checked++;
    }
    check_steps("adjoint_pair(nh_newmark(beta=0.1,beta2=0.1,alpha=0))", &sys);
    check_steps("spark(s=4)", &sys); /* the largest stage system; the registry loop runs s = 2 */
    check_steps("yoshida6(contact2)", &sys); /* the paper's order-6 step6: compositions over an explicit base */
  }
  cr_assert_gt(checked, 100);
}

/* The same in lanes: every method with lanes, and a composition over it, 20 steps of NH_LANES
 * trajectories on every system where it has them, through nh_method_step_lanes. */
static int check_lane_steps(const char *text, const nh_system *sys) {
  char err[512];
  nh_method *m = nh_method_parse(text, err, sizeof err);
  int checked = 0;
  if (m && nh_method_applies(m, sys, err, sizeof err) == 0 && nh_method_has_lanes(m, sys)) {
    static nh_lanes x, y;
    nh_state s;
    nh_cost cost[NH_LANES] = {0};
    nh_step_status status[NH_LANES];
    int live[NH_LANES];
    nh_system_default_state(sys, &s);
    for (int l = 0; l < NH_LANES; l++) live[l] = 1, nh_lanes_put(&x, l, &s);
    test_allocations = 0;
    test_counting = 1;
    for (int k = 0; k < 20; k++) {
      nh_method_step_lanes(m, sys, &x, &y, 0.01, live, status, cost);
      x = y;
    }
    test_counting = 0;
    cr_expect_eq(test_allocations, 0, "%s on %s in lanes: %ld allocations in 20 steps", text, sys->type->name,
                 test_allocations);
    checked = 1;
  }
  nh_method_free(m);
  return checked;
}

Test(no_alloc, every_method_in_lanes) {
  int checked = 0;
  for (int s = 0; nh_system_types[s]; s++) {
    nh_system sys;
    nh_system_init(&sys, nh_system_types[s]);
    for (int i = 0; nh_integrator_types[i]; i++) {
      const nh_integrator_type *t = nh_integrator_types[i];
      char text[256];
      if (!t->step_lanes) continue;
      snprintf(text, sizeof text, t->takes_base ? "%s(nh_newmark(alpha=0.5))" : "%s", t->name);
      checked += check_lane_steps(text, &sys);
    }
    checked += check_lane_steps("nh_newmark(beta=0.1,beta2=0.1,alpha=0.5)", &sys);
    checked += check_lane_steps("adjoint_pair(nh_newmark(beta=0.1,beta2=0.1,alpha=0))", &sys);
  }
  cr_assert_gt(checked, 40);
}

/* The counters do count: parsing a method allocates. */
Test(no_alloc, counter_sees_allocations) {
  char err[256];
  test_allocations = 0;
  test_counting = 1;
  nh_method *m = nh_method_parse("rk4", err, sizeof err);
  test_counting = 0;
  cr_expect_gt(test_allocations, 0);
  nh_method_free(m);
}
