/* Runs sampled along the way (studies/sampling.h), through the one stepping loop
 * (integrators/evolve.h): with no observables nothing but the energy is computed at a sample, and
 * no state is kept or copied per step, so sampling costs nothing when nothing is asked. */
#include "studies/sampling.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void nh_truth_start(nh_truth *tr, const nh_system *sys, const nh_state *x0, double tol) {
  tr->sys = sys;
  tr->x0 = tr->x = *x0;
  tr->tol = tol;
  nh_state probe;
  tr->exact = nh_exact_solution(sys, x0, x0->t, &probe) == 0;
  tr->kind = tr->exact ? "exact" : "rk8pd";
}

const char *nh_truth_failure(int rc) {
  return rc == NH_REFERENCE_NO_MEMORY ? "out of memory for the reference solution"
                                      : "the reference solver (rk8pd) failed";
}

int nh_truth_at(nh_truth *tr, double t, nh_state *out) {
  if (tr->exact) return nh_exact_solution(tr->sys, &tr->x0, t, out);
  if (t != tr->x.t) {
    const int rc = nh_reference_solve(tr->sys, &tr->x, t, tr->tol, &tr->x);
    if (rc < 0) return rc;
  }
  *out = tr->x;
  return 0;
}

int nh_samples_init(nh_samples *s, const nh_study *st, size_t runs, int nsamples) {
  memset(s, 0, sizeof *s);
  s->nobs = st->nobs;
  if (st->nobs == 0) return 0;
  s->width = calloc((size_t)st->nobs, sizeof *s->width);
  s->offset = calloc((size_t)st->nobs, sizeof *s->offset);
  s->absent = calloc((size_t)st->nobs * (size_t)st->nmethods, sizeof *s->absent);
  if (!s->width || !s->offset || !s->absent) return -1;
  for (int o = 0; o < st->nobs; o++) {
    s->width[o] = st->obs[o]->width(&st->sys);
    s->offset[o] = s->row;
    s->row += s->width[o];
    for (int mi = 0; mi < st->nmethods; mi++)
      s->absent[(size_t)o * st->nmethods + mi] = st->obs[o]->absent(st->methods[mi], &st->sys);
  }
  size_t count = runs * (size_t)nsamples * (size_t)s->row;
  s->values = malloc(sizeof(double) * (count ? count : 1));
  if (!s->values) return -1;
  for (size_t i = 0; i < count; i++) s->values[i] = NAN;
  return 0;
}

void nh_samples_free(nh_samples *s) {
  free(s->width), free(s->offset), free(s->absent), free(s->values);
  memset(s, 0, sizeof *s);
}

/* What the true solution must supply for this run's observables. */
static unsigned needs_of(const nh_sampled_run *r) {
  unsigned needs = 0;
  for (int o = 0; r->layout && o < r->layout->nobs; o++)
    if (!r->layout->absent[(size_t)o * r->st->nmethods + r->method_index]) needs |= r->st->obs[o]->needs;
  return needs;
}

/* Every observable at one sample; 0, or the true solution's failure (nh_truth_at). */
static int sample(nh_sampled_run *r, nh_truth *tr, unsigned needs, double E0, const nh_state *prev,
                  const nh_state *prev2, const nh_state *cur, double *row) {
  nh_state ref, ref_lambda;
  nh_obs_ctx c = {&r->st->sys, r->m, r->h, E0, prev, cur, NULL, NULL, prev2};
  int rc;
  if ((needs & NH_OBS_LAMBDA_REFERENCE) && prev) {
    if ((rc = nh_truth_at(tr, nh_method_multiplier_time(r->m, prev->t, cur->t), &ref_lambda)) < 0) return rc;
    c.ref_lambda = &ref_lambda;
  }
  if (needs & NH_OBS_REFERENCE) {
    if ((rc = nh_truth_at(tr, cur->t, &ref)) < 0) return rc;
    c.ref = &ref;
  }
  for (int o = 0; o < r->layout->nobs; o++) nh_observable_sample(r->st->obs[o], &c, row + r->layout->offset[o]);
  return 0;
}

/* One sample of a run that reached state x (its residuals up to there in chunk): what
 * nh_sampled_run_go does at sample s; 0, or the true solution's failure. */
static int take_sample(nh_sampled_run *r, nh_truth *tr, unsigned needs, double E0, int s, double chunk, long k,
                       const nh_state *x, const nh_state *prev, const nh_state *prev2) {
  const int row = r->layout ? r->layout->row : 0;
  r->max_residual = fmax(r->max_residual, chunk);
  double dE = nh_energy(&r->st->sys, x->q, x->v) - E0;
  if (r->dE) r->dE[s] = dE;
  /* prev2 exists once two steps are taken: s·K ≥ 2 */
  int rc = 0;
  if (row &&
      (rc = sample(r, tr, needs, E0, s ? prev : NULL, k >= 2 ? prev2 : NULL, x, r->values + (size_t)s * row)) < 0) {
    r->status = NH_STEP_SOLVER_FAILED;
    return rc;
  }
  r->reached = s + 1;
  r->max_abs_dE = fmax(r->max_abs_dE, fabs(dE));
  /* A blown-up trajectory may stay finite for long; stop it and say so. */
  if (r->divergence > 0 && fabs(dE) > r->divergence * fmax(1, fabs(E0))) r->status = NH_RUN_DIVERGED;
  return 0;
}

/* Before the first step: the run's outcome zeroed, its E0 and its true solution from x0 (what both
 * nh_sampled_run_go and the lanes start each run with). */
static double start_run(nh_sampled_run *r, nh_truth *tr) {
  const nh_system *sys = &r->st->sys;
  r->error = 0, r->reached = 0, r->max_abs_dE = 0;
  r->max_residual = nh_constraint_residual(sys, r->x0.q, r->x0.v);
  nh_truth_start(tr, sys, &r->x0, r->st->reference_tol);
  return nh_energy(sys, r->x0.q, r->x0.v);
}

/* After the last sample: NaN where the run did not reach. */
static void finish_run(nh_sampled_run *r) {
  const int nsamples = (int)(r->nsteps / r->K) + 1, row = r->layout ? r->layout->row : 0;
  for (int s = r->reached; r->dE && s < nsamples; s++) r->dE[s] = NAN;
  for (size_t i = (size_t)r->reached * row; r->values && i < (size_t)nsamples * row; i++) r->values[i] = NAN;
}

int nh_sampled_run_go(nh_sampled_run *r) {
  const nh_system *sys = &r->st->sys;
  const int nsamples = (int)(r->nsteps / r->K) + 1, row = r->layout ? r->layout->row : 0;
  const unsigned needs = needs_of(r);
  nh_truth tr;
  const double E0 = start_run(r, &tr);
  /* The states before the last two steps are kept for the observables (a discrete energy spans
   * a step, some quantities two). */
  nh_evolve e;
  nh_evolve_start(&e, r->m, sys, &r->x0, r->h, row ? 2 : 0);
  r->status = nh_evolve_init(&e);
  int rc = 0;
  for (int s = 0; s < nsamples && r->status == NH_STEP_OK; s++) {
    double chunk = 0; /* the residuals of the steps to this sample, kept only when they all succeeded */
    if (s > 0 && (r->status = nh_evolve_steps(&e, r->K, nh_evolve_track_residual, &chunk)) != NH_STEP_OK) break;
    if ((rc = take_sample(r, &tr, needs, E0, s, chunk, e.k, e.x, e.prev, e.prev2)) < 0) break;
  }
  finish_run(r);
  r->final = *e.x;
  r->cost = e.cost;
  return r->error = rc;
}

/* ---- in lanes ---- */

int nh_lanes_enabled(void) {
  const char *v = getenv("NHBENCH_LANES");
  return !v || !(strcmp(v, "off") == 0 || strcmp(v, "0") == 0 || strcmp(v, "1") == 0);
}

/* nh_sampled_run_go on every run, their steps in lanes: the same sequence per lane (init, K steps
 * with the residual tracked, a sample), a lane leaving when its run stops. */
static int sampled_runs_in_lanes(nh_sampled_run *r, int count) {
  const nh_sampled_run *r0 = &r[0];
  const nh_system *sys = &r0->st->sys;
  const int nsamples = (int)(r0->nsteps / r0->K) + 1, row = r0->layout ? r0->layout->row : 0;
  const unsigned needs = needs_of(r0);
  double E0[NH_LANES];
  nh_truth tr[NH_LANES];
  nh_state x0[NH_LANES];
  nh_evolve_lanes e;
  int rc = 0;
  for (int l = count; l < NH_LANES; l++) x0[l] = r0->x0; /* the idle lanes' */
  for (int l = 0; l < count; l++) x0[l] = r[l].x0, E0[l] = start_run(&r[l], &tr[l]);
  nh_evolve_lanes_start(&e, r0->m, sys, x0, count, r0->h, row ? 2 : 0);
  nh_evolve_lanes_init(&e);
  for (int l = 0; l < count; l++) r[l].status = e.status[l];
  for (int s = 0; s < nsamples; s++) {
    for (int l = 0; l < NH_LANES; l++) e.residual[l] = 0; /* each sample's chunk */
    if (s > 0) nh_evolve_lanes_steps(&e, r0->K, 1);
    int running = 0;
    for (int l = 0; l < count; l++) {
      if (r[l].status != NH_STEP_OK) continue; /* stopped before this sample */
      if (!e.live[l]) {                        /* its step failed on the way here */
        r[l].status = e.status[l];
        continue;
      }
      nh_state x, prev, prev2;
      nh_evolve_lanes_state(&e, l, &x, row ? &prev : NULL, row ? &prev2 : NULL);
      const int got = take_sample(&r[l], &tr[l], needs, E0[l], s, e.residual[l], e.k, &x, &prev, &prev2);
      if (got < 0) r[l].error = got;
      if (got < 0 && rc == 0) rc = got;
      if (r[l].status != NH_STEP_OK) nh_evolve_lanes_stop(&e, l, r[l].status);
      running += r[l].status == NH_STEP_OK;
    }
    if (!running) break;
  }
  for (int l = 0; l < count; l++) {
    finish_run(&r[l]);
    nh_evolve_lanes_state(&e, l, &r[l].final, NULL, NULL);
    r[l].cost = e.cost[l];
  }
  return rc;
}

int nh_sampled_runs_go(nh_sampled_run *r, int count) {
  if (count > 1 && nh_lanes_enabled() && nh_method_has_lanes(r[0].m, &r[0].st->sys))
    return sampled_runs_in_lanes(r, count);
  int rc = 0;
  for (int l = 0; l < count; l++) {
    const int got = nh_sampled_run_go(&r[l]);
    if (got < 0 && rc == 0) rc = got;
  }
  return rc;
}
