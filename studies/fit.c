/* Statistics of studies: order fits, drift slopes, statistics across an ensemble, and per-task
 * random states drawn from per-task streams (core/rng.h). */
#include <gsl/gsl_fit.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/rng.h"
#include "studies/study.h"

/* floors[i] when floors is given, else floor for every i. */
static int fit_order(int nh, const double *h, const double *err, int fit_points, double floor, const double *floors,
                     double *order, double *stderr_, int *first, int *count) {
  /* Indices by increasing h; the finest admissible points are the first ones. */
  const size_t len = nh > 0 ? (size_t)nh : 0;
  int *idx = nh_malloc_array(len, sizeof *idx), n = 0;
  double *x = nh_malloc_array(len, 2 * sizeof *x); /* log h, then log err */
  *first = -1, *count = 0;
  *order = *stderr_ = NAN;
  if (!idx || !x) {
    free(idx), free(x);
    return -2;
  }
  double *y = x + len;
  for (int i = 0; i < nh; i++) idx[i] = i;
  for (int i = 1; i < nh; i++)
    for (int j = i; j > 0 && h[idx[j]] < h[idx[j - 1]]; j--) {
      int t = idx[j];
      idx[j] = idx[j - 1];
      idx[j - 1] = t;
    }
  for (int a = 0; a < nh && n < fit_points; a++) {
    int i = idx[a];
    if (!(err[i] > (floors ? floors[i] : floor)) || !isfinite(err[i])) {
      if (n) break; /* keep the fitted points consecutive in h */
      continue;
    }
    if (!n) *first = i;
    x[n] = log(h[i]);
    y[n] = log(err[i]);
    n++;
  }
  *count = n;
  if (n >= 2) {
    double c0, c1, cov00, cov01, cov11, sumsq;
    gsl_fit_linear(x, 1, y, 1, (size_t)n, &c0, &c1, &cov00, &cov01, &cov11, &sumsq);
    *order = c1;
    *stderr_ = n > 2 ? sqrt(cov11) : NAN;
  }
  free(idx), free(x);
  return n >= 2 ? 0 : -1;
}

int nh_fit_order(int nh, const double *h, const double *err, int fit_points, double floor, double *order,
                 double *stderr_, int *first, int *count) {
  return fit_order(nh, h, err, fit_points, floor, NULL, order, stderr_, first, count);
}

int nh_fit_order_floors(int nh, const double *h, const double *err, int fit_points, const double *floors,
                        double *order, double *stderr_, int *first, int *count) {
  return fit_order(nh, h, err, fit_points, NAN, floors, order, stderr_, first, count);
}

double nh_drift_slope(int n, const double *t, const double *y) {
  double c0, c1, cov00, cov01, cov11, sumsq;
  if (n < 2) return NAN;
  gsl_fit_linear(t, 1, y, 1, (size_t)n, &c0, &c1, &cov00, &cov01, &cov11, &sumsq);
  return c1;
}

/* Two passes (mean, then squared deviations) in a fixed order: the same bits whatever the thread
 * count, and no cancellation of a sum of squares minus a squared sum. */
void nh_column_stats(int rows, int cols, const double *x, double *mean, double *var, int *count) {
  for (int c = 0; c < cols; c++) {
    double sum = 0, sum2 = 0;
    int k = 0;
    for (int r = 0; r < rows; r++) {
      double d = x[(size_t)r * cols + c];
      if (isfinite(d)) sum += d, k++;
    }
    double m = k ? sum / k : NAN;
    for (int r = 0; r < rows; r++) {
      double d = x[(size_t)r * cols + c];
      if (isfinite(d)) sum2 += (d - m) * (d - m);
    }
    mean[c] = m;
    var[c] = k > 1 ? sum2 / (k - 1) : NAN;
    count[c] = k;
  }
}

double nh_study_memory_estimate(const nh_study *st) {
  double row = 0; /* one sample of every observable */
  for (int o = 0; o < st->nobs; o++) row += st->obs[o]->width(&st->sys);
  if (st->kind == NH_STUDY_ENSEMBLE) {
    const double runs = (double)st->nmethods * st->count, ns = st->nsamples;
    return 8 * (runs * ns * (1 + row) + 6.0 * st->nmethods * ns);
  }
  if (st->kind == NH_STUDY_TRAJECTORY) {
    double hmin = INFINITY;
    for (int i = 0; i < st->nh; i++) hmin = fmin(hmin, st->h[i]);
    const double ns = floor(st->T / (hmin * st->sample_every)) + 1;
    return 8 * (double)st->nmethods * st->nh * st->nic * ns * row;
  }
  return 0;
}

int nh_study_check_room(const nh_study *st, double disk_free, double memory, char *err, size_t errlen) {
  const double need = nh_study_memory_estimate(st), on_disk = 2 * need, GiB = 1u << 30;
  if (st->kind != NH_STUDY_ENSEMBLE && memory > 0 && need > 0.8 * memory) {
    snprintf(err, errlen,
             "%s: the run's sampled results would take about %.1f GiB of memory, more than the %.1f GiB (80 %% of this "
             "machine's memory); sample less often (sample_every), or run fewer initial conditions, methods or a "
             "shorter T",
             st->spec_file, need / GiB, 0.8 * memory / GiB);
    return -1;
  }
  /* The journal holds the rows uncompressed, and the file written from it at the end is at most as
   * large (compression only shrinks it): both are on the disk at once. */
  if (disk_free > 0 && on_disk > disk_free) {
    snprintf(err, errlen,
             "%s: the run's sampled results would take about %.1f GiB on disk (its journal and the file written "
             "from it, uncompressed), more than the %.1f GiB free where the output goes; sample less often "
             "(sample_every), or run fewer initial conditions, methods or a shorter T",
             st->spec_file, on_disk / GiB, disk_free / GiB);
    return -1;
  }
  return 0;
}

int nh_column_quantile(int rows, int cols, const double *x, double p, double *out) {
  double *col = malloc(sizeof(double) * (size_t)(rows > 0 ? rows : 1));
  if (!col) return -1;
  for (int c = 0; c < cols; c++) {
    size_t k = 0;
    for (int r = 0; r < rows; r++) {
      const double d = x[(size_t)r * cols + c];
      if (isfinite(d)) col[k++] = d;
    }
    if (k == 0) {
      out[c] = NAN;
      continue;
    }
    gsl_sort(col, 1, k);
    out[c] = gsl_stats_quantile_from_sorted_data(col, 1, k, p);
  }
  free(col);
  return 0;
}

int nh_draw_states(const nh_system *sys, int count, double energy, uint64_t seed, nh_state *x) {
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  if (!rng) return NH_DRAW_NO_MEMORY;
  int rc = 0;
  for (int i = 0; i < count && rc == 0; i++) {
    memset(&x[i], 0, sizeof x[i]);
    /* State i's stream depends on (seed, i) only. */
    gsl_rng_set(rng, (unsigned long)nh_stream_seed(seed, (uint64_t)i));
    rc = nh_sample_on_D(sys, energy, rng, &x[i]);
  }
  gsl_rng_free(rng);
  return rc;
}
