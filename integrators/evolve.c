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

/* ---- lanes ---- */

void nh_evolve_lanes_start(nh_evolve_lanes *e, const nh_method *m, const nh_system *sys, const nh_state *x0, int runs,
                           double h, int keep) {
  e->m = m, e->sys = sys, e->h = h, e->k = 0, e->runs = runs;
  e->ring = keep >= 2 ? 3 : 2;
  for (int l = 0; l < NH_LANES; l++) {
    const nh_state *start = &x0[l < runs ? l : 0];
    e->t0[l] = start->t, e->live[l] = l < runs, e->status[l] = NH_STEP_OK, e->cost[l] = (nh_cost){0};
    e->residual[l] = 0;
    for (int i = 0; i < e->ring; i++) nh_lanes_put(&e->buf[i], l, start);
  }
  e->x = &e->buf[0], e->prev = &e->buf[1], e->prev2 = &e->buf[e->ring - 1];
}

void nh_evolve_lanes_init(nh_evolve_lanes *e) {
  for (int l = 0; l < e->runs; l++) {
    nh_state x;
    nh_lanes_get(e->x, l, &x);
    e->status[l] = nh_method_init(e->m, e->sys, &x, e->h, &e->cost[l]);
    for (int i = 0; i < e->ring; i++) nh_lanes_put(&e->buf[i], l, &x);
    if (e->status[l] != NH_STEP_OK) nh_evolve_lanes_stop(e, l, e->status[l]);
  }
}

void nh_evolve_lanes_stop(nh_evolve_lanes *e, int l, int status) {
  if (!e->live[l]) return;
  nh_lanes_get(e->x, l, &e->last[l]);
  e->live[l] = 0, e->status[l] = status;
}

/* The larger of m (not NaN) and r, as fmax(m, r) for r ≥ 0 or NaN. */
static double larger(double m, double r) { return r > m ? r : m; }

/* The bookkeeping after each step runs as passes over all the lanes with selects, not as a branch
 * per lane (with the branches, a 64-trajectory rk4 ensemble on the chaotic particle took 1/0.86 of
 * the time). */
int nh_evolve_lanes_steps(nh_evolve_lanes *e, long n, int track) {
  int live = 0;
  for (int l = 0; l < NH_LANES; l++) live += e->live[l];
  for (long s = 0; s < n && live > 0; s++) {
    nh_lanes *next = e->ring == 3 ? e->prev2 : e->prev; /* the oldest slot */
    nh_step_status status[NH_LANES];
    nh_method_step_lanes(e->m, e->sys, e->x, next, e->h, e->live, status, e->cost);
    int failed = 0;
#pragma omp simd reduction(| : failed)
    for (int l = 0; l < NH_LANES; l++) failed |= e->live[l] & (status[l] != NH_STEP_OK);
    for (int l = 0; failed && l < NH_LANES; l++)
      if (e->live[l] && status[l] != NH_STEP_OK) nh_evolve_lanes_stop(e, l, status[l]), live--;
    if (e->ring == 3) e->prev2 = e->prev;
    e->prev = e->x, e->x = next;
    e->k++;
    const double kh = (double)e->k * e->h; /* no accumulated round-off in t */
    double *const t = e->x->t;
    /* On every lane: a stopped lane's slots in the ring are no longer its state (e->last is) */
#pragma omp simd
    for (int l = 0; l < NH_LANES; l++) t[l] = e->t0[l] + kh;
    if (!track) continue;
    double r[NH_LANES];
    nh_lanes_constraint_residual(e->sys, &e->x->q[0][0], &e->x->v[0][0], r);
#pragma omp simd
    for (int l = 0; l < NH_LANES; l++) e->residual[l] = e->live[l] ? larger(e->residual[l], r[l]) : e->residual[l];
  }
  return live;
}

void nh_evolve_lanes_state(const nh_evolve_lanes *e, int l, nh_state *x, nh_state *prev, nh_state *prev2) {
  if (!e->live[l]) {
    *x = e->last[l];
    if (prev) *prev = e->last[l];
    if (prev2) *prev2 = e->last[l];
    return;
  }
  nh_lanes_get(e->x, l, x);
  if (prev) nh_lanes_get(e->prev, l, prev);
  if (prev2) nh_lanes_get(e->prev2, l, prev2);
}
