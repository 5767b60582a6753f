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

int nh_sampled_run_go(nh_sampled_run *r) {
  const nh_system *sys = &r->st->sys;
  const int nsamples = (int)(r->nsteps / r->K) + 1, row = r->layout ? r->layout->row : 0;
  const unsigned needs = needs_of(r);
  const double E0 = nh_energy(sys, r->x0.q, r->x0.v);
  nh_truth tr;
  nh_truth_start(&tr, sys, &r->x0, r->st->reference_tol);
  /* The states before the last two steps are kept for the observables (a discrete energy spans
   * a step, some quantities two). */
  nh_evolve e;
  nh_evolve_start(&e, r->m, sys, &r->x0, r->h, row ? 2 : 0);
  r->max_abs_dE = 0;
  r->max_residual = nh_constraint_residual(sys, r->x0.q, r->x0.v);
  r->status = nh_evolve_init(&e);
  r->reached = 0;
  int rc = 0;
  for (int s = 0; s < nsamples && r->status == NH_STEP_OK; s++) {
    double chunk = 0; /* the residuals of the steps to this sample, kept only when they all succeeded */
    if (s > 0 && (r->status = nh_evolve_steps(&e, r->K, nh_evolve_track_residual, &chunk)) != NH_STEP_OK) break;
    r->max_residual = fmax(r->max_residual, chunk);
    const nh_state *x = e.x;
    double dE = nh_energy(sys, x->q, x->v) - E0;
    if (r->dE) r->dE[s] = dE;
    /* prev2 exists once two steps are taken: s·K ≥ 2 */
    const nh_state *two_back = e.k >= 2 ? e.prev2 : NULL;
    if (row && (rc = sample(r, &tr, needs, E0, s ? e.prev : NULL, two_back, x, r->values + (size_t)s * row)) < 0) {
      r->status = NH_STEP_SOLVER_FAILED;
      break;
    }
    r->reached = s + 1;
    r->max_abs_dE = fmax(r->max_abs_dE, fabs(dE));
    /* A blown-up trajectory may stay finite for long; stop it and say so. */
    if (r->divergence > 0 && fabs(dE) > r->divergence * fmax(1, fabs(E0))) r->status = NH_RUN_DIVERGED;
  }
  for (int s = r->reached; r->dE && s < nsamples; s++) r->dE[s] = NAN;
  for (size_t i = (size_t)r->reached * row; r->values && i < (size_t)nsamples * row; i++) r->values[i] = NAN;
  r->final = *e.x;
  r->cost = e.cost;
  return rc;
}
