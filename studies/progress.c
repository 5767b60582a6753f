/* A progress line on stderr, shown only once a run has taken more than a second. On a terminal it
 * redraws one line; in a log it prints at most one line every 10 seconds. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "studies/study.h"

void nh_progress_start(nh_progress *p, const char *label, long total) {
  p->label = label;
  p->total = total;
  p->done = 0;
  p->start = p->last_print = omp_get_wtime();
  p->printed = 0;
  p->threads = omp_get_max_threads();
  p->nkinds = 0;
  p->kind_total = p->kind_done = NULL;
  p->kind_time = NULL;
}

int nh_progress_kinds(nh_progress *p, int nkinds, const long *total) {
  p->kind_total = malloc(sizeof(long) * (size_t)nkinds);
  p->kind_done = calloc((size_t)nkinds, sizeof(long));
  p->kind_time = calloc((size_t)nkinds, sizeof(double));
  if (!p->kind_total || !p->kind_done || !p->kind_time) {
    free(p->kind_total), free(p->kind_done), free(p->kind_time);
    p->kind_total = p->kind_done = NULL, p->kind_time = NULL;
    return -1;
  }
  for (int k = 0; k < nkinds; k++) p->kind_total[k] = total[k];
  p->nkinds = nkinds;
  return 0;
}

double nh_progress_eta(const nh_progress *p, double now) {
  if (p->done == 0) return 0;
  if (p->nkinds == 0) return (now - p->start) * (double)(p->total - p->done) / (double)p->done;
  double mean_of_means = 0, left = 0;
  int measured = 0;
  for (int k = 0; k < p->nkinds; k++)
    if (p->kind_done[k]) mean_of_means += p->kind_time[k] / (double)p->kind_done[k], measured++;
  if (measured) mean_of_means /= measured;
  for (int k = 0; k < p->nkinds; k++) {
    const double mean = p->kind_done[k] ? p->kind_time[k] / (double)p->kind_done[k] : mean_of_means;
    left += (double)(p->kind_total[k] - p->kind_done[k]) * mean;
  }
  return left / (p->threads > 0 ? p->threads : 1);
}

static void print_line(nh_progress *p, double now, const char *end) {
  double el = now - p->start;
  double eta = nh_progress_eta(p, now);
  fprintf(stderr, "%s%s: %ld/%ld tasks, %.1f s elapsed, ~%.0f s left%s", isatty(2) ? "\r" : "", p->label,
          p->done, p->total, el, eta, end);
  fflush(stderr);
  p->printed = 1;
  p->last_print = now;
}

void nh_progress_tick(nh_progress *p) {
#pragma omp atomic
  p->done++;
  double now = omp_get_wtime();
  double every = isatty(2) ? 0.5 : 10.0;
  if (now - p->start < 1.0 || now - p->last_print < every) return;
#pragma omp critical(nh_progress)
  if (now - p->last_print >= every) print_line(p, now, isatty(2) ? "" : "\n");
}

void nh_progress_tick_kind(nh_progress *p, int kind, double seconds) {
  if (kind >= 0 && kind < p->nkinds) {
#pragma omp critical(nh_progress_kinds)
    {
      p->kind_done[kind]++;
      p->kind_time[kind] += seconds;
    }
  }
  nh_progress_tick(p);
}

void nh_progress_end(nh_progress *p) {
  if (p->printed) print_line(p, omp_get_wtime(), "\n");
  free(p->kind_total), free(p->kind_done), free(p->kind_time);
  p->kind_total = p->kind_done = NULL, p->kind_time = NULL;
  p->nkinds = 0;
}
