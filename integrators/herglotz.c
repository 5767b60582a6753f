/* STUB: placeholder so the registry links while this family is written. */
#include "integrators/integrator.h"

static int stub_order(const nh_method *m) {
  (void)m;
  return 0;
}

static nh_step_status stub_step(const nh_method *m, const nh_system *sys, const nh_state *x, nh_state *y,
                                 double h, nh_cost *cost) {
  (void)m, (void)sys, (void)x, (void)y, (void)h, (void)cost;
  return NH_STEP_SOLVER_FAILED;
}

const nh_integrator_type nh_integrator_herglotz1 = {.name = "herglotz1", .doc = "not implemented yet", .order = stub_order, .step = stub_step};
const nh_integrator_type nh_integrator_herglotz2 = {.name = "herglotz2", .doc = "not implemented yet", .order = stub_order, .step = stub_step};
