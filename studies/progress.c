/* A progress line on stderr, shown only once a run has taken more than a second. On a terminal it
 * redraws one line; in a log it prints at most one line every 10 seconds. */
#include <omp.h>
#include <stdio.h>
#include <unistd.h>

#include "studies/study.h"

void nh_progress_start(nh_progress *p, const char *label, long total) {
  p->label = label;
  p->total = total;
  p->done = 0;
  p->start = p->last_print = omp_get_wtime();
  p->printed = 0;
}

static void print_line(nh_progress *p, double now, const char *end) {
  double el = now - p->start;
  double eta = p->done ? el * (double)(p->total - p->done) / (double)p->done : 0;
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

void nh_progress_end(nh_progress *p) {
  if (p->printed) print_line(p, omp_get_wtime(), "\n");
}

void nh_parallel_tasks(const char *label, long count, void (*task)(void *ctx, long i), void *ctx) {
  nh_progress prog;
  nh_progress_start(&prog, label, count);
#pragma omp parallel for schedule(dynamic)
  for (long i = 0; i < count; i++) {
    task(ctx, i);
    nh_progress_tick(&prog);
  }
  nh_progress_end(&prog);
}
