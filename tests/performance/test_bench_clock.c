#define _POSIX_C_SOURCE 200809L /* fileno, strtok_r */
/* make bench's figures from a clock the test sets (bench/performance/bench.c, run in-process through
 * nh_bench_main with --quick). The bench reads omp_get_wtime in pairs, a start and a stop around
 * each timed run; here (--wrap=omp_get_wtime) pair n lasts d(n) = 1 + 7n mod 13 ticks of 1/128 s
 * (exact in binary, and out of order so that a median must sort), with a tick between pairs.
 * Knowing which pairs make which figure — the warm-up left out, the repetitions and their
 * median, the division by steps, trajectories or systems, the ratio to the right row — the test
 * recomputes every printed time and ratio. And the tables free what they allocate: each run twice
 * in-process, the second leaving the count of live blocks unchanged. */
#include <criterion/criterion.h>
#include <gsl/gsl_linalg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/performance/bench.h"
#include "core/linalg.h"
#include "studies/study.h"
#include "tests/helpers.h"

double __real_omp_get_wtime(void);
double __wrap_omp_get_wtime(void);

static int fake_clock;  /* 0: the real clock */
static long readings;   /* of the fake clock since it was set */
static double fake_now; /* seconds */

static double pair_seconds(long n) { return (double)(1 + 7 * n % 13) / 128; }

double __wrap_omp_get_wtime(void) {
  if (!fake_clock) return __real_omp_get_wtime();
  const long i = readings++;
  fake_now += i % 2 ? pair_seconds(i / 2) : 1.0 / 128;
  return fake_now;
}

/* The median of the durations of pairs first, first + stride, ... (count of them, count odd). */
static double median_of_pairs(long first, long stride, int count) {
  double t[16];
  cr_assert(count <= 16 && count % 2 == 1);
  for (int k = 0; k < count; k++) t[k] = pair_seconds(first + k * stride);
  for (int i = 1; i < count; i++) /* insertion sort: the test's own, not the bench's qsort */
    for (int j = i; j > 0 && t[j] < t[j - 1]; j--) {
      const double s = t[j];
      t[j] = t[j - 1], t[j - 1] = s;
    }
  return t[count / 2];
}

static char out[1 << 17], err_out[1 << 14];

/* nh_bench_main(ARGS) in-process (ARGS split at spaces; argv[0] the nhbench_bench program, which
 * the memory table runs), stdout into out, stderr into err_out; its exit status. fake: on the fake
 * clock, from zero. */
static int bench(const char *args, int fake) {
  char text[512], *argv[16] = {NHBENCH_BENCH_EXE};
  int argc = 1;
  snprintf(text, sizeof text, "%s", args);
  for (char *save = NULL, *tok = strtok_r(text, " ", &save); tok && argc < 15; tok = strtok_r(NULL, " ", &save))
    argv[argc++] = tok;
  argv[argc] = NULL;
  FILE *tmp = tmpfile(), *tmp_err = tmpfile();
  cr_assert(tmp && tmp_err);
  fflush(stdout), fflush(stderr);
  const int saved = dup(1), saved_err = dup(2);
  dup2(fileno(tmp), 1), dup2(fileno(tmp_err), 2);
  fake_clock = fake, readings = 0, fake_now = 0;
  const int rc = nh_bench_main(argc, argv);
  fake_clock = 0;
  fflush(stdout), fflush(stderr);
  dup2(saved, 1), dup2(saved_err, 2);
  close(saved), close(saved_err);
  rewind(tmp), rewind(tmp_err);
  out[fread(out, 1, sizeof out - 1, tmp)] = '\0';
  err_out[fread(err_out, 1, sizeof err_out - 1, tmp_err)] = '\0';
  fclose(tmp), fclose(tmp_err);
  /* The timed tables say nothing on stderr when nothing fails (a GSL driver, a floor). */
  if (fake) cr_expect_str_empty(err_out, "%s: stderr:\n%s", args, err_out);
  return rc;
}

/* The next line of the output from *at that contains `contains`, or NULL; *at moves past it. */
static const char *next_line(const char **at, const char *contains) {
  const char *line = *at;
  while (line && *line) {
    const char *end = strchr(line, '\n');
    const size_t len = end ? (size_t)(end - line) : strlen(line);
    const char *hit = strstr(line, contains);
    if (hit && hit < line + len) {
      *at = end ? end + 1 : line + len;
      return line;
    }
    line = end ? end + 1 : NULL;
  }
  *at = line;
  return NULL;
}

/* The line at *at (NULL at the end of the output); *at moves to the next. */
static const char *next_row(const char **at) {
  const char *line = *at;
  if (!*line) return NULL;
  const size_t len = strcspn(line, "\n");
  *at = line + len + (line[len] != '\0');
  return line;
}

/* The line starts with `want` (what the bench's format makes of the recomputed figures). */
static void expect_starts(const char *line, const char *want, const char *what) {
  cr_assert(line, "%s: no row", what);
  cr_expect(strncmp(line, want, strlen(want)) == 0, "%s:\n%.*s\nwanted:\n%s", what, (int)strcspn(line, "\n"), line,
            want);
}

/* Step cost (1000 steps in --quick): each row that ran is one pair, in print order over the four
 * systems; ns/step = 1e9 t / steps; "x rk4" against the system's first row; n/a rows read no clock. */
Test(bench_clock, step_cost_figures) {
  cr_assert_eq(bench("--quick --only steps", 1), 0);
  const char *at = out;
  long pair = 0;
  int systems = 0, rows = 0;
  for (const char *head; (head = next_line(&at, "step cost, ")); systems++) {
    cr_assert(strstr(head, "1000 steps each"));
    next_line(&at, "ns/step");
    double rk4 = 0;
    for (int i = 0; *at && *at != '\n'; i++) { /* the rows, to the blank line */
      const char *line = next_row(&at);
      if (strncmp(line, "       n/a ", 11) == 0) continue;
      const double t = pair_seconds(pair++);
      if (i == 0) rk4 = t;
      char want[64];
      snprintf(want, sizeof want, "%10.0f %8.2f ", 1e9 * t / 1000, t / rk4);
      expect_starts(line, want, "step cost row");
      rows++;
    }
  }
  cr_expect_eq(systems, 4);
  cr_expect_eq(rows, 45, "rows timed: %d (all but the falling disk's 11 n/a rows)", rows);
  cr_expect_eq(readings, 2 * pair);
}

/* The floors table (2000 steps): per method, one warm-up then 5 repetitions, each the harness's
 * pair then the floor's; the medians over 2000 steps, their ratio. Then GSL's two drivers, 5
 * pairs each, no warm-up, against the rk4 row's two figures. */
Test(bench_clock, floors_figures) {
  cr_assert_eq(bench("--quick --only floors", 1), 0);
  const char *at = out;
  next_line(&at, "nhbench ns");
  static const char *const names[] = {"rk4", "nh_newmark(beta=0.1,beta2=0.1,alpha=0.5)", "nh_rattle", "herglotz2"};
  double rk4[2] = {0};
  for (int f = 0; f < 4; f++) {
    const double ns = 1e9 * median_of_pairs(12 * f + 2, 2, 5) / 2000,
                 fns = 1e9 * median_of_pairs(12 * f + 3, 2, 5) / 2000;
    if (f == 0) rk4[0] = ns, rk4[1] = fns;
    char want[64];
    snprintf(want, sizeof want, "%10.0f %10.0f %7.2f ", ns, fns, ns / fns);
    const char *line = next_line(&at, names[f]);
    expect_starts(line, want, names[f]);
  }
  for (int g = 0; g < 2; g++) {
    const double ns = 1e9 * median_of_pairs(48 + 5 * g, 1, 5) / 2000;
    char want[64], tail[96];
    snprintf(want, sizeof want, "%10.0f ", ns);
    snprintf(tail, sizeof tail, "driver (%.2f x nhbench's rk4, %.2f x the rk4 floor)\n", ns / rk4[0], ns / rk4[1]);
    const char *line = next_line(&at, "GSL odeiv2");
    expect_starts(line, want, "GSL driver");
    char row[512];
    snprintf(row, sizeof row, "%.*s\n", (int)strcspn(line, "\n"), line);
    cr_expect(strlen(row) > strlen(tail) && strcmp(row + strlen(row) - strlen(tail), tail) == 0,
              "%s wanted the end %s", row, tail);
  }
  cr_expect_eq(readings, 2 * 58);
}

/* The lockstep table (64 trajectories x 100 steps): per method, a warm-up then 5 repetitions, each
 * the scalar floor's pair then those of 1, 4 and 8 lanes; ns per trajectory-step of the medians,
 * scalar / lockstep; then one pair for the control run with h one ulp larger. */
Test(bench_clock, lockstep_figures) {
  cr_assert_eq(bench("--quick --only lockstep", 1), 0);
  const char *at = out;
  next_line(&at, "scalar ns");
  static const char *const names[] = {"rk4", "nh_newmark(beta=0.1,beta2=0.1,alpha=0.5)", "nh_rattle", "herglotz2"};
  static const int lanes[] = {1, 4, 8};
  for (int m = 0; m < 4; m++) {
    const long base = 25 * m;
    const double per = 1e9 / (64.0 * 100), sns = per * median_of_pairs(base + 4, 4, 5);
    for (int c = 0; c < 3; c++) {
      const double lns = per * median_of_pairs(base + 5 + c, 4, 5);
      char want[64];
      snprintf(want, sizeof want, "%10.1f %11.1f %7.2f %5d ", sns, lns, sns / lns, lanes[c]);
      expect_starts(next_line(&at, names[m]), want, names[m]);
    }
  }
}

/* The sampling table (1000 steps): 5 rounds of the 5 variants in turn, one pair each; the medians
 * per step and over the first variant's. */
Test(bench_clock, sampling_figures) {
  cr_assert_eq(bench("--quick --only sampling", 1), 0);
  const char *at = out;
  next_line(&at, "observables sampling");
  const double t0 = median_of_pairs(0, 5, 5);
  for (int v = 0; v < 5; v++) {
    const double t = median_of_pairs(v, 5, 5);
    char want[64];
    snprintf(want, sizeof want, "%10.0f ns/step %6.3f x ", 1e9 * t / 1000, t / t0);
    expect_starts(next_line(&at, "ns/step"), want, "sampling row");
  }
  cr_expect_eq(readings, 2 * 25);
}

/* The LU table's accuracy columns for size m, recomputed from the bench's systems (its LCG,
 * Knuth's MMIX, from seed 12345 across the sizes: entries (seed >> 11) / 2^53 − 0.5, plus m on
 * the diagonal; b_i = sin i): the largest |x_GSL − x_nhb| / |x_GSL| and the largest
 * |A x − b| / (|A| |x| + |b|) of nhbench's solutions (max norms, |A| the largest row sum). */
static void lu_accuracy(int m, int count, unsigned long long *seed, double *diff, double *backward) {
  double *A = malloc(sizeof(double) * (size_t)(count * m * m)), *B = malloc(sizeof(double) * (size_t)(count * m));
  cr_assert(A && B);
  for (long i = 0; i < (long)count * m * m; i++) {
    *seed = *seed * 6364136223846793005ULL + 1442695040888963407ULL;
    const long k = i % (m * m);
    A[i] = (double)(*seed >> 11) / 9007199254740992.0 - 0.5 + (k / m == k % m ? m : 0);
  }
  for (long i = 0; i < (long)count * m; i++) B[i] = sin((double)i);
  *diff = 0, *backward = 0;
  for (int c = 0; c < count; c++) {
    const double *a = A + (size_t)c * m * m, *b = B + (size_t)c * m;
    double J1[NH_LU_MAX_DIM * NH_LU_MAX_DIM], J2[NH_LU_MAX_DIM * NH_LU_MAX_DIM], x1[NH_LU_MAX_DIM], x2[NH_LU_MAX_DIM];
    memcpy(J1, a, sizeof(double) * (size_t)(m * m)), memcpy(J2, a, sizeof(double) * (size_t)(m * m));
    memcpy(x1, b, sizeof(double) * (size_t)m), memcpy(x2, b, sizeof(double) * (size_t)m);
    gsl_permutation *perm = gsl_permutation_alloc((size_t)m);
    gsl_matrix_view Jv = gsl_matrix_view_array(J1, (size_t)m, (size_t)m);
    gsl_vector_view xv = gsl_vector_view_array(x1, (size_t)m);
    int sign;
    cr_assert(perm && gsl_linalg_LU_decomp(&Jv.matrix, perm, &sign) == 0 && gsl_linalg_LU_svx(&Jv.matrix, perm, &xv.vector) == 0);
    gsl_permutation_free(perm);
    cr_assert_eq(nh_lu_solve(m, J2, x2), 0);
    double r = 0, na = 0, nx = 0, nb = 0;
    for (int i = 0; i < m; i++) {
      *diff = fmax(*diff, fabs(x1[i] - x2[i]) / fmax(fabs(x1[i]), 1e-300));
      double ri = -b[i], row = 0;
      for (int j = 0; j < m; j++) ri += a[i * m + j] * x2[j], row += fabs(a[i * m + j]);
      r = fmax(r, fabs(ri)), na = fmax(na, row), nx = fmax(nx, fabs(x2[i])), nb = fmax(nb, fabs(b[i]));
    }
    *backward = fmax(*backward, r / (na * nx + nb));
  }
  free(A), free(B);
}

/* The LU table (50 systems per size in --quick): per size GSL's 7 rounds then nhbench's 7, one
 * pair per round over the 50 solves; the medians per solve in ns and their ratio; then the
 * accuracy columns (lu_accuracy). */
Test(bench_clock, lu_figures) {
  cr_assert_eq(bench("--quick --only lu", 1), 0);
  const char *at = out;
  next_line(&at, "GSL ns");
  static const int sizes[] = {2, 4, 7, 8, 12, 16, 24};
  unsigned long long seed = 12345;
  for (int s = 0; s < 7; s++) {
    const double tg = median_of_pairs(14 * s, 1, 7) / 50, th = median_of_pairs(14 * s + 7, 1, 7) / 50;
    double diff, backward;
    lu_accuracy(sizes[s], 50, &seed, &diff, &backward);
    char want[128];
    snprintf(want, sizeof want, "%4d %12.0f %12.0f %8.2f %14.2e %14.2e\n", sizes[s], 1e9 * tg, 1e9 * th, tg / th, diff,
             backward);
    expect_starts(next_row(&at), want, "LU row");
  }
  cr_expect_eq(readings, 2 * 98);
}

/* The memory table's heading and its figure of the sampled arrays: the spec with the table's
 * overrides (100 ICs, T = 20 in --quick, every step sampled) is small_ensemble.cfg's 7 methods
 * (2 listed, 5 grid points), 100 ICs, 20 / 0.2 + 1 = 101 samples; the figure is the pre-flight's
 * estimate (tested by hand in tests/studies/test_statistics.c) in MiB. */
Test(bench_clock, memory_table_heading_and_estimate, .timeout = 120) {
  cr_assert_eq(chdir(NHBENCH_SOURCE_DIR), 0);
  cr_assert_eq(bench("--quick --only memory tests/data/small_ensemble.cfg", 0), 0);
  nh_study st;
  char err[1024], want[256];
  const char *ov[] = {"ensemble.count=100", "T=20", "sample_every=1"};
  cr_assert_eq(nh_study_load("tests/data/small_ensemble.cfg", ov, 3, &st, err, sizeof err), 0, "%s", err);
  const double mib = nh_study_memory_estimate(&st) / (1024.0 * 1024.0);
  nh_study_free(&st);
  cr_assert(mib > 0.05, "%g MiB: too small to show a wrong scale", mib);
  const char *at = out;
  expect_starts(next_line(&at, "memory, ensemble"),
                "memory, ensemble tests/data/small_ensemble.cfg (7 methods, 100 ICs, T = 20, every step: 101 samples), "
                "peak resident:\n",
                "memory heading");
  snprintf(want, sizeof want, " MiB kept in memory (library, no journal; its sampled arrays alone: %.1f MiB)\n", mib);
  const char *row = next_line(&at, "kept in memory"); /* "%10.1f MiB kept ..." */
  cr_assert(row, "no memory row:\n%s", out);
  cr_expect(strncmp(row + 10, want, strlen(want)) == 0, "%.*s\nwanted the end%s", (int)strcspn(row, "\n"), row, want);
  cr_expect(next_line(&at, "MiB streamed through the journal (as nhbench run)\n"), "no streamed row:\n%s", out);
}

/* Every table, and the memory table's child in both modes, frees what it allocates: run twice,
 * the second run leaves the live blocks of nhbench's code as it found them. */
Test(bench_clock, tables_free_what_they_allocate, .timeout = 120) {
  if (test_live_blocks() < 0) cr_skip_test("AddressSanitizer build: LeakSanitizer checks leaks there");
  char journal[64], child[256];
  snprintf(journal, sizeof journal, "/tmp/nhbench-bench-clock-%d.journal", (int)getpid());
  snprintf(child, sizeof child, "--memory-child %s/studies/chaotic_ensemble.cfg %s 0.4", NHBENCH_SOURCE_DIR, journal);
  const char *const runs[] = {"--quick --only lu",       "--quick --only steps",    "--quick --only floors",
                              "--quick --only lockstep", "--quick --only sampling", "--quick --only ensemble",
                              "--quick --only memory tests/data/small_ensemble.cfg",
                              child,
                              "--memory-child studies/chaotic_ensemble.cfg - 0.4"};
  cr_assert_eq(chdir(NHBENCH_SOURCE_DIR), 0);
  for (size_t i = 0; i < sizeof runs / sizeof *runs; i++) {
    cr_expect_eq(bench(runs[i], 0), 0, "%s (warm-up)", runs[i]);
    const long blocks = test_live_blocks();
    cr_expect_eq(bench(runs[i], 0), 0, "%s", runs[i]);
    cr_expect_eq(test_live_blocks(), blocks, "nhbench_bench %s: %ld blocks leaked", runs[i],
                 test_live_blocks() - blocks);
  }
  cr_expect_eq(access(journal, F_OK), -1, "the memory child left its journal %s", journal);
}
