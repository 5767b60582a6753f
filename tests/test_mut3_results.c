/* results/: the writer's failures that come from a row callback (a streamed dataset whose rows
 * cannot be had), through the public nh_w_file: its exact -1 and its message. Issue 16: mutation
 * robustness (a callee's -1 turned into +1 must not pass for success). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "results/writer.h"
#include "studies/observables.h"
#include "tests/helpers.h"

/* A study with just what the provenance, the dimensions and the observables read: one method on
 * falling_disk, the energy observable. */
static void minimal_study(nh_study *st, const nh_observable **obs) {
  memset(st, 0, sizeof *st);
  st->kind = NH_STUDY_ENSEMBLE;
  st->sys = test_system("falling_disk", NULL);
  st->nmethods = 1;
  obs[0] = nh_observable_find("energy");
  cr_assert_not_null(obs[0]);
  st->nobs = 1;
  st->obs = obs;
}

static void file_path(char *path, size_t len, const char *tag) {
  snprintf(path, len, "/tmp/nhbench-mut3-results-%d-%s.h5", (int)getpid(), tag);
  remove(path);
}

/* nh_w_file fails with -1 and a message naming the path and (the start of) the writer's reason;
 * no file is left at path. */
static void expect_file_failed(int rc, const char *path, const char *err, const char *reason) {
  cr_expect_eq(rc, -1, "nh_w_file returned %d: %s", rc, err);
  char want[512];
  snprintf(want, sizeof want, "%s: writing the results failed: %s", path, reason);
  cr_expect(strncmp(err, want, strlen(want)) == 0, "err = '%s', want '%s...'", err, want);
  cr_expect_neq(access(path, F_OK), 0, "%s was written", path);
}

/* ---- a dataset written row by row --------------------------------------------------------- */

/* Row i is (i, i + 0.5); row `fail_at` cannot be had. */
static int rows_until(const void *ctx, long long i, double *out) {
  if (i == *(const long long *)ctx) return -1;
  out[0] = (double)i, out[1] = (double)i + 0.5;
  return 0;
}

static void rows_body(nh_writer *w, hid_t g, const void *ctx) {
  nh_w_dim(w, "row", 3);
  nh_w_dim(w, "col", 2);
  nh_w_f64_rows(w, g, "by_rows", "row,col", 1, rows_until, ctx, "1", "three rows");
}

/* The file written by body with its callback never failing (written), then failing on the second
 * row or run: no file, -1 and `message`. */
static void fails_on_the_second(void (*body)(nh_writer *, hid_t, const void *), const char *tag, const char *message) {
  nh_study st;
  const nh_observable *obs[1];
  minimal_study(&st, obs);
  char path[128], err[1024] = "";
  file_path(path, sizeof path, tag);
  const long long never = -1, second = 1;
  cr_assert_eq(nh_w_file(path, &st, body, &never, "test", err, sizeof err), 0, "%s", err);
  remove(path);
  const int rc = nh_w_file(path, &st, body, &second, "test", err, sizeof err);
  expect_file_failed(rc, path, err, message);
}

Test(mut3_results, row_callback_failure_fails_the_file) {
  fails_on_the_second(rows_body, "rows", "cannot read back the rows of dataset by_rows");
}

/* ---- a streamed run's observables ---------------------------------------------------------- */

enum { RUNS = 2, SAMPLES = 3 };

/* Run `run`'s [sample][row] block (one component per row); run `fail_at` cannot be read back. */
static int fetch_until(const void *ctx, long long run, double *out) {
  if (run == *(const long long *)ctx) return -1;
  for (int k = 0; k < SAMPLES; k++) out[k] = (double)(10 * run + k);
  return 0;
}

static void observables_body(nh_writer *w, hid_t g, const void *ctx) {
  int width[1] = {1}, offset[1] = {0};
  const char *absent[1] = {NULL};
  const nh_samples s = {.nobs = 1, .row = 1, .width = width, .offset = offset, .absent = absent,
                        .fetch = fetch_until, .fetch_ctx = ctx};
  nh_w_dim(w, "method", 1);
  nh_w_dim(w, "ic", RUNS);
  nh_w_dim(w, "sample", SAMPLES);
  nh_w_observables(w, g, "method,ic", RUNS, SAMPLES, &s);
}

Test(mut3_results, streamed_observable_fetch_failure_fails_the_file) {
  fails_on_the_second(observables_body, "fetch", "cannot read back the rows of dataset energy");
}
