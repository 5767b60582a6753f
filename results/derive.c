/* What the writer derives from a study and its results, once (results/results.h). */
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>

#include "core/alloc.h"
#include "results/results.h"

void nh_primary_methods(const nh_study *st, int *primary) {
  for (int m = 0; m < st->nmethods; m++) primary[m] = m < st->nprimary;
}

static double median_of(double *v, size_t n) {
  if (n == 0) return NAN;
  gsl_sort(v, 1, n);
  return gsl_stats_median_from_sorted_data(v, 1, n);
}

int nh_ensemble_summarize(const nh_study *st, const nh_ensemble_result *r, int method, nh_ensemble_summary *s) {
  const int nic = st->count, ns = st->nsamples;
  const size_t off = (size_t)method * (size_t)nic;
  double *a = nh_malloc_array((size_t)nic, 4 * sizeof(double)); /* max_abs_dE, drift, |drift|, residual */
  if (!a) return -1;
  double *b = a + nic, *c = b + nic, *d = c + nic;
  size_t na = 0, nb = 0, nd = 0;
  s->ok = s->failures = 0;
  for (int i = 0; i < nic; i++) {
    if (r->status[off + i] != 0) {
      s->failures++;
      continue;
    }
    s->ok++;
    if (!isnan(r->max_abs_dE[off + i])) a[na++] = r->max_abs_dE[off + i];
    if (!isnan(r->drift_slope[off + i])) b[nb] = r->drift_slope[off + i], c[nb++] = fabs(r->drift_slope[off + i]);
    if (!isnan(r->max_residual[off + i])) d[nd++] = r->max_residual[off + i];
  }
  s->max_max_abs_dE = na ? gsl_stats_max(a, 1, na) : NAN;
  s->median_max_abs_dE = median_of(a, na);
  s->mean_drift_slope = nb ? gsl_stats_mean(b, 1, nb) : NAN;
  s->median_abs_drift_slope = median_of(c, nb);
  s->max_residual = nd ? gsl_stats_max(d, 1, nd) : NAN;
  const size_t last = (size_t)method * (size_t)ns + (size_t)ns - 1;
  /* A streamed run keeps only the last sample's statistics in memory (studies/study.h). */
  const int count = ns <= 0 ? 0 : r->dE_count ? r->dE_count[last] : r->last_count[method];
  s->final_var = count >= 2 ? (r->dE_var ? r->dE_var[last] : r->last_var[method]) : NAN;
  free(a);
  return 0;
}

void nh_fit_h_range(const double *h, int nh, int first, int count, double *lo, double *hi) {
  *lo = *hi = NAN;
  if (first < 0 || first >= nh || count < 1) return;
  /* h[first] is the smallest used; the largest is the (count-1)-th next larger step size. */
  int rank = 0;
  for (int i = 0; i < nh; i++) rank += h[i] < h[first];
  for (int i = 0; i < nh; i++) {
    int r = 0;
    for (int j = 0; j < nh; j++) r += h[j] < h[i];
    if (r == rank + count - 1) {
      *lo = h[first];
      *hi = h[i];
    }
  }
}
