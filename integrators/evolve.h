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

/* ---- The same loop on NH_LANES runs at once (core/lanes.h, issue 51) ------------------------------ */

/* Up to NH_LANES runs of one method (one with lanes: nh_method_has_lanes) on one system with one
 * step h, stepped together: each lane's states, cost, status and residuals are those nh_evolve
 * gives its run alone, to the bit. A lane stops at its first failed step (status[l], live[l] = 0)
 * and keeps its last good state (nh_evolve_lanes_state), as nh_evolve keeps e->x; the others go on.
 * Lanes from `runs` on are idle (live 0) copies of lane 0. */
typedef struct {
  const nh_method *m;
  const nh_system *sys;
  double h;
  double t0[NH_LANES];
  long k; /* steps taken since the start (by the live lanes) */
  int runs;
  nh_lanes *x, *prev, *prev2; /* as nh_evolve's, lane by lane (prev2 only with keep = 2) */
  int live[NH_LANES];
  int status[NH_LANES];    /* NH_STEP_OK, the failed step's (or init's) status, or nh_evolve_lanes_stop's */
  nh_state last[NH_LANES]; /* a stopped lane's state, which its slots in the ring no longer keep */
  nh_cost cost[NH_LANES];
  /* With tracking (nh_evolve_lanes_steps' track): the largest constraint residual of the states
   * reached since the caller last set it, as nh_evolve_track_residual keeps it */
  double residual[NH_LANES];
  int ring;
  nh_lanes buf[3];
} nh_evolve_lanes;

/* Runs x0[0 … runs − 1] (1 ≤ runs ≤ NH_LANES); keep as nh_evolve_start's. */
void nh_evolve_lanes_start(nh_evolve_lanes *e, const nh_method *m, const nh_system *sys, const nh_state *x0, int runs,
                           double h, int keep);
/* nh_evolve_init on every run (the method's init, lane by lane); a lane whose init fails stops. */
void nh_evolve_lanes_init(nh_evolve_lanes *e);
/* n more steps of the live lanes, tracking each lane's residual when track; returns how many lanes
 * are still live. Allocates nothing. */
int nh_evolve_lanes_steps(nh_evolve_lanes *e, long n, int track);
/* Lane l's current state, previous and the one before (as e->x, e->prev, e->prev2 of its run; prev
 * and prev2 may be NULL; a stopped lane's are its last state). */
void nh_evolve_lanes_state(const nh_evolve_lanes *e, int l, nh_state *x, nh_state *prev, nh_state *prev2);
/* Stops lane l (the caller's reason, e.g. a diverged run): it keeps its state. */
void nh_evolve_lanes_stop(nh_evolve_lanes *e, int l, int status);

#endif
