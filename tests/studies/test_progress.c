/* The progress line (studies/progress.c): nothing for a run shorter than a second; in a log (stderr
 * not a terminal, as here) a line at most every 10 s and a last one at the end if any was printed;
 * each line "LABEL: DONE/TOTAL tasks, E s elapsed, ~ETA s left". The clock is the real one: the
 * tests move the recorded start and last print back instead of waiting. */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "studies/study.h"

extern long test_fail_allocation; /* tests/contracts/test_no_alloc.c */

static void redirect(void) { cr_redirect_stderr(); }

/* The lines printed so far on the redirected stderr. */
static char *stderr_text(void) {
  static char text[4096];
  fflush(stderr);
  FILE *f = cr_get_redirected_stderr();
  size_t n = fread(text, 1, sizeof text - 1, f);
  text[n] = '\0';
  return text;
}

/* One progress line of `text` (the k-th, from 0) read back: 1 if it has the expected form. */
static int parse_line(const char *text, int k, char *label, long *done, long *total, double *elapsed, double *eta) {
  for (int i = 0; i < k && text; i++) text = strchr(text, '\n') ? strchr(text, '\n') + 1 : NULL;
  return text && sscanf(text, "%31[^:]: %ld/%ld tasks, %lf s elapsed, ~%lf s left\n", label, done, total, elapsed,
                        eta) == 5;
}

static int count_lines(const char *text) {
  int n = 0;
  for (; *text; text++) n += *text == '\n';
  return n;
}

Test(progress, start_sets_every_field_of_a_dirty_struct) {
  nh_progress p;
  memset(&p, 0x5a, sizeof p);
  const double before = omp_get_wtime();
  nh_progress_start(&p, "label", 17);
  cr_expect_str_eq(p.label, "label");
  cr_expect_eq(p.total, 17);
  cr_expect_eq(p.done, 0);
  cr_expect_eq(p.printed, 0);
  cr_expect_eq(p.threads, omp_get_max_threads());
  cr_expect_eq(p.nkinds, 0);
  cr_expect(p.kind_total == NULL && p.kind_done == NULL && p.kind_time == NULL);
  cr_expect(p.start >= before && p.start <= omp_get_wtime(), "start %g", p.start);
  cr_expect_eq(p.last_print, p.start);
}

Test(progress, a_run_shorter_than_a_second_prints_nothing, .init = redirect) {
  nh_progress p;
  memset(&p, 0x5a, sizeof p); /* a stale `printed` would print at the end */
  nh_progress_start(&p, "quick", 3);
  for (int i = 0; i < 3; i++) nh_progress_tick(&p);
  cr_expect_eq(p.done, 3);
  nh_progress_end(&p);
  cr_expect_str_eq(stderr_text(), "");
}

/* 20 s into a run of 4 tasks, one done: elapsed 20, and 3 tasks left at 20 s each: 60 s. */
Test(progress, a_long_run_prints_done_elapsed_and_time_left, .init = redirect) {
  nh_progress p;
  nh_progress_start(&p, "long run", 4);
  p.start -= 20, p.last_print -= 20;
  nh_progress_tick(&p);
  char label[32];
  long done, total;
  double elapsed, eta;
  const char *text = stderr_text();
  cr_assert(parse_line(text, 0, label, &done, &total, &elapsed, &eta), "'%s'", text);
  cr_expect_str_eq(label, "long run");
  cr_expect_eq(done, 1);
  cr_expect_eq(total, 4);
  cr_expect(elapsed >= 20 && elapsed < 21, "elapsed %g", elapsed);
  cr_expect(eta >= 60 && eta <= 63, "eta %g", eta);
  cr_expect_eq(p.printed, 1);
  cr_expect(p.last_print > p.start + 19.9, "the line's time is remembered");
}

/* In a log a line every 10 s at most: a tick 9.5 s after the last line prints nothing, one 10.5 s
 * after prints; the end prints the last line (all tasks done, nothing left). */
Test(progress, a_log_gets_a_line_every_ten_seconds_and_one_at_the_end, .init = redirect) {
  nh_progress p;
  nh_progress_start(&p, "log", 3);
  p.start -= 30;
  p.last_print = omp_get_wtime() - 9.5;
  nh_progress_tick(&p);
  cr_expect_eq(p.printed, 0, "9.5 s after the last line");
  p.last_print = omp_get_wtime() - 10.5;
  nh_progress_tick(&p);
  cr_expect_eq(p.printed, 1, "10.5 s after the last line");
  nh_progress_tick(&p);
  nh_progress_end(&p);
  const char *text = stderr_text();
  cr_assert_eq(count_lines(text), 2, "'%s'", text);
  char label[32];
  long done, total;
  double elapsed, eta;
  cr_assert(parse_line(text, 0, label, &done, &total, &elapsed, &eta), "'%s'", text);
  cr_expect_eq(done, 2);
  cr_expect(eta >= 15 && eta <= 17, "one task left at 15 s a task: %g", eta);
  cr_assert(parse_line(text, 1, label, &done, &total, &elapsed, &eta), "'%s'", text);
  cr_expect_eq(done, 3);
  cr_expect_eq(total, 3);
  cr_expect_eq(eta, 0, "nothing left");
}

/* The first second is quiet: 0.9 s into a run (and as long since any line) a tick prints
 * nothing, 1.01 s into it one prints. */
Test(progress, the_first_second_is_quiet, .init = redirect) {
  nh_progress p;
  nh_progress_start(&p, "first", 9);
  p.start -= 0.9, p.last_print -= 20;
  nh_progress_tick(&p);
  cr_expect_eq(p.printed, 0, "0.9 s in");
  p.start -= 0.11;
  nh_progress_tick(&p);
  cr_expect_eq(p.printed, 1, "1.01 s in");
  cr_expect_eq(count_lines(stderr_text()), 1);
}

/* Threads that tick together, 10.5 s after the last line: each may find the line due, but only
 * the first into the critical section prints it (the others look again there). Whether two
 * threads ever race here is up to the scheduler, so the test repeats; one line each time. */
Test(progress, threads_ticking_together_print_one_line, .init = redirect) {
  enum { ROUNDS = 20 };
  const int threads = 8;
  for (int round = 0; round < ROUNDS; round++) {
    nh_progress p;
    nh_progress_start(&p, "together", threads);
    p.start -= 30, p.last_print -= 10.5;
#pragma omp parallel num_threads(threads)
    {
#pragma omp barrier
      nh_progress_tick(&p);
    }
  }
  const int lines = count_lines(stderr_text());
  cr_expect_eq(lines, ROUNDS, "%d lines for %d rounds", lines, ROUNDS);
}

/* A task of a kind out of range counts as done but is no kind's; the end frees the kinds. */
Test(progress, kinds_out_of_range_and_the_end) {
  nh_progress p;
  nh_progress_start(&p, "kinds", 5);
  const long totals[2] = {2, 3};
  cr_assert_eq(nh_progress_kinds(&p, 2, totals), 0);
  cr_expect(p.kind_total[0] == 2 && p.kind_total[1] == 3 && p.nkinds == 2);
  nh_progress_tick_kind(&p, 2, 7.0);
  nh_progress_tick_kind(&p, -1, 7.0);
  nh_progress_tick_kind(&p, 1, 0.5);
  nh_progress_tick_kind(&p, 0, 0.25);
  cr_expect_eq(p.done, 4);
  cr_expect(p.kind_done[0] == 1 && p.kind_done[1] == 1, "%ld %ld", p.kind_done[0], p.kind_done[1]);
  cr_expect(p.kind_time[0] == 0.25 && p.kind_time[1] == 0.5, "%g %g", p.kind_time[0], p.kind_time[1]);
  nh_progress_end(&p);
  cr_expect(p.nkinds == 0 && p.kind_total == NULL && p.kind_done == NULL && p.kind_time == NULL);
}

/* Each of the three allocations failing in turn: -1, no kinds, nothing left allocated. */
Test(progress, kinds_out_of_memory) {
  for (long n = 1; n <= 3; n++) {
    nh_progress p;
    nh_progress_start(&p, "oom", 5);
    const long totals[2] = {2, 3};
    test_fail_allocation = n;
    cr_expect_eq(nh_progress_kinds(&p, 2, totals), -1, "allocation %ld failing", n);
    test_fail_allocation = 0;
    cr_expect(p.nkinds == 0 && p.kind_total == NULL && p.kind_done == NULL && p.kind_time == NULL, "allocation %ld", n);
    cr_expect_eq(nh_progress_eta(&p, p.start + 1), 0, "no kinds, nothing done");
  }
}

/* nh_run_tasks with kinds: 7 tasks of kinds 0, 1, 2, 0, 1, 2, 0 (task % 3), tasks 1 and 3 done
 * already. prog learns the tasks of each kind still to run, {2, 1, 2}, and each task run ticks its
 * own kind (not run: not ticked); so with a single kind (every task kind 0), 5 to run; without
 * kind(), or with nkinds 0, prog gets no kinds. Each kind's time is that of its tasks, each of at
 * least a millisecond: no less than that, no more than the run's wall time on all threads. */
static int ran[7];
static void run_one(void *ctx, long task, double *record) {
  (void)ctx;
  const struct timespec ms = {0, 1000000};
  nanosleep(&ms, NULL); /* a task of at least a millisecond: its time is measured */
  ran[task]++;
  record[0] = (double)task;
}
static int take_one(void *ctx, long task, const double *record, int remote) {
  (void)ctx, (void)remote;
  return record[0] == (double)task ? 0 : -1;
}
static int nkinds_of_test;
static int kind_of(void *ctx, long task) {
  (void)ctx;
  return (int)(task % nkinds_of_test);
}

Test(progress, run_tasks_gives_the_kinds_left) {
  static const char done[7] = {0, 1, 0, 1, 0, 0, 0};
  for (int with_kinds = 0; with_kinds < 4; with_kinds++) {
    memset(ran, 0, sizeof ran);
    nh_progress p;
    nh_progress_start(&p, "kinds", 5);
    nkinds_of_test = with_kinds == 3 ? 1 : 3;
    const int nkinds = with_kinds >= 2 ? nkinds_of_test : 0;
    const nh_task_set ts = {7, done, 1, run_one, take_one, with_kinds ? kind_of : NULL, nkinds, NULL, NULL, NULL};
    const double start = omp_get_wtime();
    cr_assert_eq(nh_run_tasks(&ts, &p), 0);
    const double most = (omp_get_wtime() - start) * omp_get_max_threads();
    for (int i = 0; i < 7; i++) cr_expect_eq(ran[i], !done[i], "task %d ran %d times", i, ran[i]);
    cr_expect_eq(p.done, 5);
    if (with_kinds < 2) {
      cr_expect(p.nkinds == 0 && p.kind_total == NULL, "case %d: kinds given", with_kinds);
    } else {
      cr_assert_eq(p.nkinds, nkinds);
      const long left[3] = {nkinds == 1 ? 5 : 2, 1, 2};
      for (int k = 0; k < nkinds; k++) {
        cr_expect_eq(p.kind_total[k], left[k], "kind %d: %ld to run", k, p.kind_total[k]);
        cr_expect_eq(p.kind_done[k], left[k], "kind %d: %ld ticked", k, p.kind_done[k]);
        cr_expect(p.kind_time[k] >= 1e-3 * left[k] && p.kind_time[k] <= most, "kind %d: %g s, the run %g s", k,
                  p.kind_time[k], most);
      }
    }
    nh_progress_end(&p);
  }
}
