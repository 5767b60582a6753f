/* The one stepping loop (GSL's odeiv2 "evolve" above its "step"): a method stepped from a start
 * state, t = t0 + k·h exactly after step k of the run (k counted from the start, so no round-off
 * accumulates in t however often the loop is stopped and resumed), the states before the last
 * two steps kept without a copy, and an observer told of every step. Every study kind and the
 * benchmarks step through it; it knows nothing of studies. */
#ifndef NH_EVOLVE_H
#define NH_EVOLVE_H

#include "integrators/integrator.h"

typedef struct nh_evolve nh_evolve;

/* Called after every step with the run (e->x the new state, e->prev the one before it, e->prev2
 * the one before that when keep = 2): NH_STEP_OK to go on, any other status to stop the run with
 * it (e.g. a study's time limit). */
typedef int (*nh_evolve_observer)(void *ctx, const nh_evolve *e);

struct nh_evolve {
  const nh_method *m;
  const nh_system *sys;
  double h, t0; /* the step, and the start's time */
  long k;       /* steps taken since the start */
  nh_state *x;  /* the state after step k */
  nh_state *prev, *prev2; /* after steps k − 1 and k − 2 (valid once taken; prev2 only with keep = 2) */
  nh_cost cost; /* summed over the steps (and the method's init) */
  int ring;     /* states in buf: 2, or 3 to keep prev2 */
  nh_state buf[3];
};

/* A run of m on sys from x0 with steps h; keep = 2 keeps e->prev2 (else 0 or 1: e->prev only). */
void nh_evolve_start(nh_evolve *e, const nh_method *m, const nh_system *sys, const nh_state *x0, double h, int keep);
/* The method's preparation of the start (nh_method_init: a two-step method's history). */
nh_step_status nh_evolve_init(nh_evolve *e);
/* n more steps, observe (NULL: none) called after each: NH_STEP_OK, the failing step's status, or
 * what the observer stopped the run with. Allocates nothing. */
int nh_evolve_steps(nh_evolve *e, long n, nh_evolve_observer observe, void *ctx);

/* An observer that keeps the largest constraint residual max_a |A(q)v + b| of the states reached
 * in the double at ctx. */
int nh_evolve_track_residual(void *ctx, const nh_evolve *e);

/* The loop without an observer, as a function of a state: nsteps steps of size h from *x (its t
 * the start's), the last state into *x, the cost added to *cost. residual (may be NULL) receives
 * the largest constraint residual max_a |A(q)v + b| over the run, the start included. */
int nh_integrate(const nh_method *m, const nh_system *sys, nh_state *x, long nsteps, double h, nh_cost *cost,
                 double *residual);

#endif
