/* The one stepping loop (integrators/evolve.h). The states live in a ring of two (three to keep
 * the state two steps back): a step writes into the oldest slot and the pointers turn, so that no
 * state is copied per step (a state is 304 bytes; rk4's step costs about 55 ns). */
#include "integrators/evolve.h"

#include <math.h>

void nh_evolve_start(nh_evolve *e, const nh_method *m, const nh_system *sys, const nh_state *x0, double h, int keep) {
  e->m = m, e->sys = sys, e->h = h, e->t0 = x0->t, e->k = 0;
  e->cost = (nh_cost){0};
  e->ring = keep >= 2 ? 3 : 2;
  /* Every slot starts as the start state: a step may leave fields it does not use alone. */
  for (int i = 0; i < e->ring; i++) e->buf[i] = *x0;
  e->x = &e->buf[0], e->prev = &e->buf[1], e->prev2 = &e->buf[e->ring - 1];
}

nh_step_status nh_evolve_init(nh_evolve *e) {
  const nh_step_status status = nh_method_init(e->m, e->sys, e->x, e->h, &e->cost);
  for (int i = 0; i < e->ring; i++) e->buf[i] = *e->x; /* the prepared start in every slot, as at the start */
  return status;
}

int nh_evolve_steps(nh_evolve *e, long n, nh_evolve_observer observe, void *ctx) {
  for (long s = 0; s < n; s++) {
    nh_state *next = e->ring == 3 ? e->prev2 : e->prev; /* the oldest slot */
    const nh_step_status status = nh_method_step(e->m, e->sys, e->x, next, e->h, &e->cost);
    if (status != NH_STEP_OK) return status;
    if (e->ring == 3) e->prev2 = e->prev;
    e->prev = e->x, e->x = next;
    e->k++;
    e->x->t = e->t0 + (double)e->k * e->h; /* no accumulated round-off in t */
    const int stop = observe ? observe(ctx, e) : NH_STEP_OK;
    if (stop != NH_STEP_OK) return stop;
  }
  return NH_STEP_OK;
}

int nh_evolve_track_residual(void *ctx, const nh_evolve *e) {
  double *residual = ctx;
  *residual = fmax(*residual, nh_constraint_residual(e->sys, e->x->q, e->x->v));
  return NH_STEP_OK;
}

int nh_integrate(const nh_method *m, const nh_system *sys, nh_state *x, long nsteps, double h, nh_cost *cost,
                 double *residual) {
  nh_evolve e;
  nh_evolve_start(&e, m, sys, x, h, 1);
  if (residual) *residual = nh_constraint_residual(sys, x->q, x->v);
  const int status = nh_evolve_steps(&e, nsteps, residual ? nh_evolve_track_residual : NULL, residual);
  *x = *e.x;
  nh_cost_add(cost, &e.cost);
  return status;
}
