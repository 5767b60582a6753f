#define _POSIX_C_SOURCE 200809L /* mkstemp, popen */
/* make bench in miniature (nhbench_bench --quick): every table runs, the harness's own LU solves
 * the same systems as GSL's LU to round-off, the hand-written floors (bench/performance/floors.c) compute the
 * harness's states with as many Newton iterations, the SIMD-lockstep kernels (bench/performance/lockstep.c)
 * compute the floors' states to the bit, and the cost counters it prints agree with what each
 * method's formula costs (RK4: 4 right-hand sides per step; nh_rattle: one gradient,
 * spec/rattle.md 2.5; a triple jump: three base steps). The timings: tests/performance/test_bench_clock.c, under
 * a clock it sets. */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_odeiv2.h>

#include "bench/performance/floors.h"
#include "bench/performance/lockstep.h"
#include "core/lanes.h"
#include "core/linalg.h"
#include "studies/study.h"
#include "tests/helpers.h"

static char output[1 << 16];

static void run_bench(void) {
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "%s --quick %s/studies/chaotic_ensemble.cfg 2>/dev/null", NHBENCH_BENCH_EXE,
           NHBENCH_SOURCE_DIR);
  FILE *p = popen(cmd, "r");
  cr_assert(p, "cannot run %s", cmd);
  size_t len = fread(output, 1, sizeof output - 1, p);
  output[len] = '\0';
  cr_assert_eq(pclose(p), 0, "nhbench_bench --quick failed:\n%s", output);
}

/* The "rhs/step" column of METHOD's row in the step-cost table. */
static double rhs_per_step(const char *method) {
  char tail[256];
  snprintf(tail, sizeof tail, "  %s\n", method);
  for (const char *line = output; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
    const char *end = strchr(line, '\n');
    size_t len = end ? (size_t)(end - line) + 1 : strlen(line);
    if (len > strlen(tail) && strncmp(line + len - strlen(tail), tail, strlen(tail)) == 0) {
      double ns, ratio, newton, rhs;
      cr_assert_eq(sscanf(line, "%lf %lf %lf %lf", &ns, &ratio, &newton, &rhs), 4, "row of %s: %.*s", method,
                   (int)len, line);
      return rhs;
    }
  }
  cr_assert_fail("no row for %s in:\n%s", method, output);
  return 0;
}

/* The LU table's two figures for size m, by hand: the --quick run's 50 systems (its generator,
 * bench/performance/bench.c bench_lu: Knuth's MMIX LCG from seed 12345, carried from one size to the next,
 * entries in [-0.5, 0.5] plus m on the diagonal; b_i = sin i over the size's right-hand sides)
 * solved by GSL and by core/linalg.c; the largest relative difference between the two and the
 * largest backward error |A x - b| / (|A| |x| + |b|) of the harness's solutions, max norms. */
static void lu_figures_by_hand(int m, unsigned long long *seed, double *diff, double *backward) {
  enum { COUNT = 50 };
  double *A = malloc(sizeof(double) * COUNT * m * m), J[NH_LU_MAX_DIM * NH_LU_MAX_DIM], x[NH_LU_MAX_DIM];
  cr_assert(A);
  for (long i = 0; i < (long)COUNT * m * m; i++) {
    *seed = *seed * 6364136223846793005ULL + 1442695040888963407ULL;
    const long r = (i % (m * m)) / m, c = (i % (m * m)) % m;
    A[i] = (double)(*seed >> 11) / 9007199254740992.0 - 0.5 + (r == c ? m : 0);
  }
  *diff = *backward = 0;
  for (int k = 0; k < COUNT; k++) {
    const double *a = A + (size_t)k * m * m;
    double b[NH_LU_MAX_DIM];
    for (int i = 0; i < m; i++) b[i] = sin((double)(k * m + i));
    gsl_matrix_const_view Av = gsl_matrix_const_view_array(a, (size_t)m, (size_t)m);
    gsl_matrix *lu = gsl_matrix_alloc((size_t)m, (size_t)m);
    gsl_permutation *perm = gsl_permutation_alloc((size_t)m);
    gsl_vector *gx = gsl_vector_alloc((size_t)m);
    gsl_vector_const_view bv = gsl_vector_const_view_array(b, (size_t)m);
    int sign;
    gsl_matrix_memcpy(lu, &Av.matrix);
    cr_assert_eq(gsl_linalg_LU_decomp(lu, perm, &sign), 0);
    cr_assert_eq(gsl_linalg_LU_solve(lu, perm, &bv.vector, gx), 0);
    memcpy(J, a, sizeof(double) * m * m), memcpy(x, b, sizeof(double) * m);
    cr_assert_eq(nh_lu_solve(m, J, x), 0);
    double res = 0, norm_a = 0, norm_x = 0, norm_b = 0;
    for (int i = 0; i < m; i++) {
      const double g = gsl_vector_get(gx, (size_t)i);
      *diff = fmax(*diff, fabs(g - x[i]) / fmax(fabs(g), 1e-300));
      double ri = -b[i], row = 0;
      for (int j = 0; j < m; j++) ri += a[i * m + j] * x[j], row += fabs(a[i * m + j]);
      res = fmax(res, fabs(ri)), norm_a = fmax(norm_a, row), norm_x = fmax(norm_x, fabs(x[i]));
      norm_b = fmax(norm_b, fabs(b[i]));
    }
    *backward = fmax(*backward, res / (norm_a * norm_x + norm_b));
    gsl_matrix_free(lu), gsl_permutation_free(perm), gsl_vector_free(gx);
  }
  free(A);
}

Test(bench, quick_tables_and_the_lu_against_gsl, .timeout = 120) {
  run_bench();
  const char *lu = strstr(output, "max rel diff   nhb backward\n");
  cr_assert(lu, "no LU table:\n%s", output);
  int rows = 0, differ = 0, m;
  double g, h, ratio, diff, backward;
  unsigned long long seed = 12345;
  for (const char *line = lu + strlen("max rel diff   nhb backward\n");
       sscanf(line, "%d %lf %lf %lf %lf %lf", &m, &g, &h, &ratio, &diff, &backward) == 6; line = strchr(line, '\n') + 1) {
    rows++;
    /* Both figures as computed here, to the 3 digits printed (a difference of 0 printed as 0). */
    double diff_by_hand, backward_by_hand;
    lu_figures_by_hand(m, &seed, &diff_by_hand, &backward_by_hand);
    cr_expect(fabs(diff - diff_by_hand) <= 0.0051 * diff_by_hand, "m = %d: max rel diff %.2e, by hand %.3e", m, diff,
              diff_by_hand);
    cr_expect(fabs(backward - backward_by_hand) <= 0.0051 * backward_by_hand,
              "m = %d: backward error %.2e, by hand %.3e", m, backward, backward_by_hand);
    cr_expect(diff < 1e-12, "m = %d: the harness's LU differs from GSL's by %g", m, diff);
    differ += diff > 0;
    /* LU with partial pivoting is backward stable: a backward error of a few m·u on these
     * diagonally dominant matrices (no growth). NaN: the right-hand sides were all zero. Not 0
     * either: over 50 systems of random entries, some residual shows the round-off. */
    cr_expect(backward > 0 && backward < 4 * m * DBL_EPSILON,
              "m = %d: the harness's solutions solve their systems to %g", m, backward);
    cr_expect(g > 0 && h > 0, "m = %d: timings %g %g", m, g, h);
  }
  cr_expect_eq(rows, 7, "LU sizes 2, 4, 7, 8, 12, 16, 24");
  /* The two LUs order their operations differently: over 50 random systems of a size, the
   * solutions differ in their last bits somewhere (a comparison that sees only zeros compared
   * nothing). */
  cr_expect_gt(differ, 0, "the harness's and GSL's solutions agree to the bit for every size");
  cr_expect(!strstr(output, "failed"), "a method failed:\n%s", output);
  cr_expect_eq(rhs_per_step("rk4"), 4.0);
  cr_expect_eq(rhs_per_step("nh_rattle"), 1.0);
  cr_expect_eq(rhs_per_step("triple_jump(nh_newmark(alpha=0.5))"), 3 * rhs_per_step("nh_newmark(alpha=0.5)"));
  /* The floors compute the harness's numbers: the same state to round-off after 20 steps from the
   * same start, the same Newton iterations; GSL's drivers ran. */
  const char *fl = strstr(output, "state diff  method\n");
  cr_assert(fl, "no floor table:\n%s", output);
  int floors = 0;
  double ns, fns, its, fits, control;
  char name[128];
  for (const char *line = fl + strlen("state diff  method\n");
       sscanf(line, "%lf %lf %lf %lf %lf %lf %lf %127s", &ns, &fns, &ratio, &its, &fits, &control, &diff, name) == 8;
       line = strchr(line, '\n') + 1) {
    floors++;
    cr_expect(diff < 1e-12, "%s: the floor's state differs from the harness's by %g", name, diff);
    /* The control: a step of h = 0.2 moves the particle by about 0.2 |v|, so the comparison,
     * which must see it, prints far more than round-off. */
    cr_expect(control > 1e-3, "%s: the floor one step later differs by only %g", name, control);
    cr_expect(its == fits, "%s: Newton iterations %g (harness) and %g (floor)", name, its, fits);
    /* The times are printed rounded to 1 ns, the ratio to 0.01. */
    cr_expect(ns > 0 && fns > 0 && fabs(ratio - ns / fns) <= ratio * (0.5 / ns + 0.5 / fns) * 1.01 + 0.005,
              "%s: ratio %g of %g / %g", name, ratio, ns, fns);
    /* Units, not speed: a step of the 3-dof chaotic particle costs nanoseconds to microseconds
     * (lockstep_kernels_match_the_floors_bit_for_bit has the same bounds). */
    cr_expect(ns > 1 && ns < 1e6 && fns > 1 && fns < 1e6, "%s: %g and %g ns per step", name, ns, fns);
  }
  cr_expect_eq(floors, 4, "floors of rk4, nh_newmark, nh_rattle, herglotz2:\n%s", output);
  cr_expect(strstr(output, "GSL odeiv2 rk4 driver (") && strstr(output, "GSL odeiv2 rk8pd driver ("), "GSL rows");
  cr_expect(strstr(output, "observables sampling"), "sampling table");
  /* The memory table: both child runs finished. (Which keeps less shows at make bench's scale;
   * at --quick's the process's own baseline dominates, and under ASan its shadow memory.) */
  const char *mem = strstr(output, "peak resident:\n");
  double kept = -1, streamed = -1;
  cr_assert(mem, "no memory table:\n%s", output);
  cr_expect(sscanf(mem + strlen("peak resident:\n"), "%lf MiB kept in memory (library, no journal; its sampled "
                                                      "arrays alone: %*f MiB) %lf MiB streamed",
                   &kept, &streamed) == 2,
            "memory rows:\n%s", mem);
  cr_expect(kept > 0 && streamed > 0, "kept %g MiB, streamed %g MiB", kept, streamed);
  /* The ensemble line: the spec's methods, and the speed-up the ratio of the two times (each
   * printed to 0.005 s, the ratio to 0.005). */
  const char *ens = strstr(output, "(8 ICs, T = 20, ");
  cr_assert(ens, "ensemble line with the quick T:\n%s", output);
  int nmethods = 0;
  double t1, t2, speedup;
  cr_assert_eq(sscanf(ens, "(8 ICs, T = 20, %d methods): 1 thread %lf s, 2 threads %lf s, speed-up %lf", &nmethods, &t1,
                      &t2, &speedup),
               4, "%.200s", ens);
  nh_study st;
  char err[1024], path[512];
  snprintf(path, sizeof path, "%s/studies/chaotic_ensemble.cfg", NHBENCH_SOURCE_DIR);
  cr_assert_eq(nh_study_load(path, NULL, 0, &st, err, sizeof err), 0, "%s", err);
  cr_expect_eq(nmethods, st.nmethods);
  nh_study_free(&st);
  cr_expect(t2 > 0.005 && speedup >= (t1 - 0.005) / (t2 + 0.005) - 0.005 && speedup <= (t1 + 0.005) / (t2 - 0.005) + 0.005,
            "speed-up %g of %g s / %g s", speedup, t1, t2);
}

/* Runs nhbench_bench with ARGS and argv[0] ARGV0 (NULL: its path); its exit status, stdout in out,
 * stderr in err. */
static int run_bench_as(const char *argv0, const char *args, char *out, size_t outlen, char *err, size_t errlen) {
  char cmd[1024], errfile[] = "/tmp/nhbench_bench_err_XXXXXX";
  int fd = mkstemp(errfile);
  cr_assert(fd >= 0);
  close(fd);
  if (argv0)
    snprintf(cmd, sizeof cmd, "cd %s && bash -c 'exec -a %s %s %s' 2>%s", NHBENCH_SOURCE_DIR, argv0, NHBENCH_BENCH_EXE,
             args, errfile);
  else
    snprintf(cmd, sizeof cmd, "cd %s && %s %s 2>%s", NHBENCH_SOURCE_DIR, NHBENCH_BENCH_EXE, args, errfile);
  FILE *p = popen(cmd, "r");
  cr_assert(p, "cannot run %s", cmd);
  size_t len = fread(out, 1, outlen - 1, p);
  out[len] = '\0';
  const int status = pclose(p);
  FILE *e = fopen(errfile, "r");
  len = e ? fread(err, 1, errlen - 1, e) : 0;
  err[len] = '\0';
  if (e) fclose(e);
  unlink(errfile);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int run_bench_args(const char *args, char *out, size_t outlen, char *err, size_t errlen) {
  return run_bench_as(NULL, args, out, outlen, err, errlen);
}

/* The study table runs the main job's ensemble in lanes and one trajectory at a time and says
 * whether the two gave the same bits: it does (a lane that changed a result would print DIFFER),
 * with both times and their ratio. */
Test(bench, study_in_lanes_and_alone_the_same_bits, .timeout = 120) {
  static char out[1 << 14], err[1 << 14];
  cr_assert_eq(run_bench_args("--quick --only study", out, sizeof out, err, sizeof err), 0, "%s", err);
  const char *row =
      strstr(out, "studies/chaotic_ensemble.cfg at a small scale (--quick) (47 methods x 16 ICs, T = 200, "
                  "2 threads, each way twice): one trajectory at a time ");
  cr_assert(row, "the study row:\n%s", out);
  double alone = 0, lanes = 0, ratio = 0;
  cr_assert_eq(sscanf(strstr(row, "at a time ") + 10, "%lf s, in lanes %lf s, speed-up %lf", &alone, &lanes, &ratio), 3,
               "%s", row);
  cr_expect(alone > 0 && lanes > 0 && fabs(ratio - alone / lanes) <= 0.05 * ratio, "%s", row); /* times to 0.01 s */
  cr_expect(strstr(row, "results the same bits\n"), "%s", row);
}

/* The memory table runs its ensembles in fresh copies of argv[0]: a copy that cannot start shows
 * as "(failed)" with the reason on stderr, never as a figure (the child's exit status is read). */
Test(bench, memory_child_that_fails_is_reported, .timeout = 120) {
  static char out[1 << 14], err[1 << 14];
  cr_expect_eq(run_bench_as("/nonexistent/nhbench_bench", "--quick --only memory", out, sizeof out, err, sizeof err), 0,
               "%s", err);
  const char *mem = strstr(out, "peak resident:\n");
  cr_assert(mem, "no memory table:\n%s", out);
  cr_expect(strstr(mem, "\n      (failed) kept in memory (library, no journal; its sampled arrays alone: ") &&
                strstr(mem, "\n      (failed) streamed through the journal (as nhbench run)\n"),
            "both rows failed:\n%s", mem);
  cr_expect(!strstr(mem, "MiB kept") && !strstr(mem, "MiB streamed"), "no figure of a failed run:\n%s", mem);
  const char *why = "nhbench_bench: memory: cannot run /nonexistent/nhbench_bench: No such file or directory\n";
  cr_expect(strstr(err, why) && strstr(strstr(err, why) + 1, why), "the reason, once per child:\n%s", err);
}

/* The bench loads its ensemble spec once per table and holds the spec's notes back (its tables are
 * the output): a grid whose points on beta + beta2 = 1/2 are skipped, which `nhbench run` notes,
 * notes nothing here; the ensemble runs rk4 and the two points left. With stdin closed (stderr's
 * copy then takes fd 0) likewise, and stderr is back after each load: the memory table's children,
 * that cannot start, are still reported. */
Test(bench, spec_notes_held_back, .timeout = 120) {
  static char out[1 << 14], err[1 << 14];
  char spec[128], args[256];
  snprintf(spec, sizeof spec, "/tmp/nhbench-bench-notes-%d.cfg", (int)getpid());
  test_write_file(spec, "study = \"ensemble\"; system = \"chaotic_particle\"; T = 1.0; h = 0.2;\n"
                        "ensemble = { count = 1; energy = 1.535; seed = 7; };\nmethods = [\"rk4\"];\n"
                        "grids = ( { method = \"nh_newmark(alpha=0.5)\"; beta = [0.1, 0.2]; beta2 = [0.3, 0.4]; } );\n");
  for (int closed = 0; closed <= 1; closed++) {
    const char *stdin_is = closed ? "closed" : "open";
    snprintf(args, sizeof args, "--quick --only ensemble,memory %s%s", spec, closed ? " <&-" : "");
    cr_expect_eq(run_bench_as("/nonexistent/nhbench_bench", args, out, sizeof out, err, sizeof err), 0, "%s", err);
    cr_expect(strstr(out, "(8 ICs, T = 20, 3 methods)"), "stdin %s: no ensemble of 3 methods:\n%s", stdin_is, out);
    cr_expect(!strstr(err, "note:"), "stdin %s: a note:\n%s", stdin_is, err);
    cr_expect(strstr(err, "memory: cannot run /nonexistent/nhbench_bench"), "stdin %s: stderr lost after a load:\n%s",
              stdin_is, err);
  }
  remove(spec);
}

/* The memory table's child (--memory-child SPEC JOURNAL|- T): SPEC's ensemble to T, streamed
 * through JOURNAL, which it removes when done (here made beforehand: removed, not just left
 * unwritten), or kept in memory ("-"); exit 0, and 1 when the spec does not load (a bad T). */
Test(bench, memory_child_removes_its_journal, .timeout = 120) {
  static char out[1 << 12], err[1 << 14];
  char journal[128], args[512];
  snprintf(journal, sizeof journal, "/tmp/nhbench-bench-%d.journal", (int)getpid());
  FILE *j = fopen(journal, "w");
  cr_assert(j);
  fclose(j);
  snprintf(args, sizeof args, "--memory-child studies/chaotic_ensemble.cfg %s 0.4", journal);
  cr_expect_eq(run_bench_args(args, out, sizeof out, err, sizeof err), 0, "%s", err);
  cr_expect_neq(access(journal, F_OK), 0, "the journal %s is left", journal);
  unlink(journal);
  cr_expect_eq(run_bench_args("--memory-child studies/chaotic_ensemble.cfg - 0.4", out, sizeof out, err, sizeof err), 0,
               "%s", err);
  cr_expect_eq(run_bench_args("--memory-child studies/chaotic_ensemble.cfg - never", out, sizeof out, err, sizeof err), 1);
  cr_expect(strstr(err, "--set T: 'T' must be a number, not \"never\""), "the bad T named: %s", err);
}

/* --help lists every table; --only runs just the named ones (in the fixed order); an unknown
 * table, a missing list or an unknown option is refused with exit 2 and a message naming it. */
Test(bench, help_and_only, .timeout = 120) {
  static char out[1 << 16], err[1 << 14];
  cr_expect_eq(run_bench_args("--help", out, sizeof out, err, sizeof err), 0);
  const char *tables[] = {"lu",    "steps",    "floors", "own",      "lockstep",
                          "lanes", "sampling", "study",  "ensemble", "memory"};
  for (size_t i = 0; i < sizeof tables / sizeof *tables; i++) {
    char row[64];
    snprintf(row, sizeof row, "\n              %-9s ", tables[i]);
    cr_expect(strstr(out, row), "--help does not list '%s':\n%s", tables[i], out);
  }
  cr_expect(strncmp(out, "usage: nhbench_bench [--quick] [--only SECTION[,SECTION...]] [ENSEMBLE_SPEC]\n", 77) == 0 &&
                strstr(out, "\n  ENSEMBLE_SPEC  the ensemble of the last three tables (default "
                            "studies/chaotic_ensemble.cfg)\n"),
            "--help's synopsis and its ENSEMBLE_SPEC line:\n%s", out);
  cr_expect_eq(run_bench_args("--quick --only lu,floors", out, sizeof out, err, sizeof err), 0, "%s", err);
  const char *lu = strstr(out, "small dense LU solves"), *fl = strstr(out, "hand-written kernels");
  cr_expect(lu && fl && lu < fl, "LU table then the floors:\n%s", out);
  cr_expect(!strstr(out, "step cost,") && !strstr(out, "observables sampling") && !strstr(out, "speed-up") &&
                !strstr(out, "peak resident"),
            "tables that were not asked for:\n%s", out);
  cr_expect_eq(run_bench_args("--only lu,bogus", out, sizeof out, err, sizeof err), 2);
  cr_expect(strstr(err, "--only lu,bogus: unknown table 'bogus'"), "message: %s", err);
  cr_expect_eq(out[0], '\0', "nothing runs after a refused option:\n%s", out);
  cr_expect_eq(run_bench_args("--only", out, sizeof out, err, sizeof err), 2);
  cr_expect(strstr(err, "--only needs"), "message: %s", err);
  cr_expect_eq(run_bench_args("--fast", out, sizeof out, err, sizeof err), 2);
  cr_expect(strstr(err, "unknown option '--fast'"), "message: %s", err);
}

/* The masked Newton check's figures recomputed: the 64 starts bench/performance/bench.c documents (near
 * s0 = 0, v1 = -22.1 - 0.00625 j, v0 on the constraint), 4 steps of h = 0.2 each through the
 * scalar herglotz2 floor; a lane set counts when in some step one of its lanes took other
 * iterations than its first; lo and hi over every trajectory and step. */
static void masked_figures_by_hand(int lanes, int *sets, long *lo, long *hi) {
  nh_floor_state s[64];
  for (int j = 0; j < 64; j++) {
    s[j] = (nh_floor_state){.q = {0.3, 1, 0.5, 0.2, -0.1}, .v = {0, -22.1 - 0.00625 * j, 0.2, 0.3, 0.1}};
    s[j].v[0] = -(s[j].q[1] * s[j].v[3] + s[j].q[2] * s[j].v[4]);
  }
  int differed[16] = {0};
  *lo = 1000, *hi = 0, *sets = 0;
  for (int k = 0; k < 4; k++) {
    long its[64];
    for (int j = 0; j < 64; j++) {
      its[j] = nh_floor_herglotz2(&s[j], 0.2, 1);
      cr_assert_geq(its[j], 0, "trajectory %d, step %d failed", j, k);
      *lo = its[j] < *lo ? its[j] : *lo, *hi = its[j] > *hi ? its[j] : *hi;
    }
    for (int j = 0; j < 64; j++) differed[j / lanes] |= its[j] != its[j - j % lanes];
  }
  for (int set = 0; set < 64 / lanes; set++) *sets += differed[set];
}

/* A harness state as the floors carry it: q, v, its λ and z (no carried force). */
static nh_floor_state floor_state_from(const nh_state *x) {
  nh_floor_state s = {.lambda = x->lambda[0], .z = x->z};
  memcpy(s.q, x->q, sizeof s.q);
  memcpy(s.v, x->v, sizeof s.v);
  return s;
}

/* The lockstep table's methods, in its order (the floors'). */
enum { LS_RK4, LS_NEWMARK, LS_RATTLE, LS_HERGLOTZ2, LS_METHODS };
static const char *const ls_names[LS_METHODS] = {"rk4", "nh_newmark(beta=0.1,beta2=0.1,alpha=0.5)", "nh_rattle",
                                                 "herglotz2"};

/* The largest nh_lockstep_gap between two floor states of method m: q, v, the multiplier λ (not
 * rk4's), nh_rattle's carried force and herglotz2's z. */
static double floor_state_gap(int m, const nh_floor_state *a, const nh_floor_state *b) {
  double d = 0;
  for (int i = 0; i < 5; i++) d = fmax(d, fmax(nh_lockstep_gap(a->q[i], b->q[i]), nh_lockstep_gap(a->v[i], b->v[i])));
  for (int i = 0; m == LS_RATTLE && i < 5; i++) d = fmax(d, nh_lockstep_gap(a->force[i], b->force[i]));
  if (m != LS_RK4) d = fmax(d, nh_lockstep_gap(a->lambda, b->lambda));
  if (m == LS_HERGLOTZ2) d = fmax(d, nh_lockstep_gap(a->z, b->z));
  return d;
}

/* `steps` steps of h of method m's scalar floor from s (nh_rattle's force set first): its Newton
 * iterations, or -1. */
static long ls_floor(int m, nh_floor_state *s, double h, long steps) {
  switch (m) {
  case LS_RK4:
    nh_floor_rk4(s, h, steps);
    return 0;
  case LS_NEWMARK:
    return nh_floor_nh_newmark(s, 0.1, 0.1, h, steps);
  case LS_RATTLE:
    nh_floor_rattle_init(s), nh_floor_nh_rattle(s, h, steps);
    return 0;
  default:
    return nh_floor_herglotz2(s, h, steps);
  }
}

/* The same through method m's lockstep kernel on L = 1, 4 or 8 lanes, from the L states s (packed,
 * stepped, unpacked), each lane's Newton iterations into its: 0, or -1 where the kernel fails. */
#define LS_KERNEL(L)                                                                                                   \
  static int ls_kernel##L(int m, nh_floor_state *s, double h, long steps, long *its) {                                 \
    nh_lockstep##L p;                                                                                                  \
    int rc = 0;                                                                                                        \
    for (int l = 0; l < L; l++) {                                                                                      \
      its[l] = 0;                                                                                                      \
      if (m == LS_RATTLE) nh_floor_rattle_init(&s[l]);                                                                 \
    }                                                                                                                  \
    nh_lockstep##L##_pack(&p, s);                                                                                      \
    switch (m) {                                                                                                       \
    case LS_RK4:                                                                                                       \
      nh_lockstep##L##_rk4(&p, h, steps);                                                                              \
      break;                                                                                                           \
    case LS_NEWMARK:                                                                                                   \
      rc = nh_lockstep##L##_nh_newmark(&p, 0.1, 0.1, h, steps, its);                                                   \
      break;                                                                                                           \
    case LS_RATTLE:                                                                                                    \
      nh_lockstep##L##_nh_rattle(&p, h, steps);                                                                        \
      break;                                                                                                           \
    default:                                                                                                           \
      rc = nh_lockstep##L##_herglotz2(&p, h, steps, its);                                                              \
    }                                                                                                                  \
    nh_lockstep##L##_unpack(&p, s);                                                                                    \
    return rc;                                                                                                         \
  }
LS_KERNEL(1)
LS_KERNEL(4)
LS_KERNEL(8)

static int ls_kernel(int lanes, int m, nh_floor_state *s, double h, long steps, long *its) {
  if (lanes == 1) return ls_kernel1(m, s, h, steps, its);
  return lanes == 4 ? ls_kernel4(m, s, h, steps, its) : ls_kernel8(m, s, h, steps, its);
}

/* One lane count's sets of the 8 starts s through method m's lockstep kernel at the current
 * instruction set, against the floor's final states `scalar` and iterations floor_its; the number of
 * sets on which the floor failed. */
static int lanes_against_floor_at(int m, const nh_floor_state s[8], const nh_floor_state scalar[8],
                                  const long floor_its[8], int lanes, double h, long steps) {
  nh_floor_state locked[8];
  long its[8];
  int failed_sets = 0;
  const char *isa = nh_isa_name(nh_lanes_isa());
  memcpy(locked, s, sizeof locked);
  for (int set = 0; set < 8; set += lanes) {
    int floor_failed = 0;
    for (int l = 0; l < lanes; l++) floor_failed |= floor_its[set + l] < 0;
    const int rc = ls_kernel(lanes, m, locked + set, h, steps, its + set);
    failed_sets += floor_failed;
    cr_expect_eq(rc, floor_failed ? -1 : 0, "%s, %s, %d lanes, set %d: kernel %d, floor %s", ls_names[m], isa, lanes,
                 set / lanes, rc, floor_failed ? "failed" : "succeeded");
    for (int l = 0; !floor_failed && l < lanes; l++) {
      const int j = set + l;
      cr_expect_eq(floor_state_gap(m, &locked[j], &scalar[j]), 0,
                   "%s, %s, %d lanes, lane %d: %g from the floor's state", ls_names[m], isa, lanes, j,
                   floor_state_gap(m, &locked[j], &scalar[j]));
      cr_expect_eq(its[j], floor_its[j], "%s, %s, %d lanes, lane %d: %ld Newton iterations, the floor %ld", ls_names[m],
                   isa, lanes, j, its[j], floor_its[j]);
    }
  }
  return failed_sets;
}

/* The lanes of every lane count (1, 4, 8), compiled for every instruction set this CPU has (the
 * kernels follow nh_lanes_isa(), as the harness's lanes do), from the 8 starts s against method m's
 * scalar floor: each lane's final state and Newton iterations the floor's to the bit, where the
 * floor succeeds on every start of the lane set; where it fails on one, the kernel fails (-1) on
 * that set. Returns the number of lane sets (of the 8 + 2 + 1) on which the floor failed, at the
 * last instruction set (the same at each: the floor's). */
static int lanes_against_floor(int m, const nh_floor_state s[8], double h, long steps) {
  nh_floor_state scalar[8];
  long floor_its[8];
  memcpy(scalar, s, sizeof scalar);
  for (int j = 0; j < 8; j++) floor_its[j] = ls_floor(m, &scalar[j], h, steps);
  const nh_isa chosen = nh_lanes_isa();
  int failed_sets = 0;
  for (nh_isa isa = 0; isa < NH_ISA_COUNT; isa++) {
    if (nh_lanes_use_isa(isa) < 0) continue;
    failed_sets = 0;
    for (int lanes = 1; lanes <= 8; lanes *= lanes == 1 ? 4 : 2)
      failed_sets += lanes_against_floor_at(m, s, scalar, floor_its, lanes, h, steps);
  }
  nh_lanes_use_isa(chosen);
  return failed_sets;
}

/* The lockstep table's negative controls recomputed (--quick: 100 steps of h = 0.2): the 64 starts
 * bench/performance/bench.c documents (the default state with q_i moved by 0.05 sin(1 + j + 0.7 i) and v_i by
 * 0.05 cos(2 + 1.3 j + i), then v_0 put back on the constraint), each through the scalar floor of
 * method m at h and at h one ulp larger; control[0] the largest gap between the two ends,
 * control[1] between trajectories j and j + 1 (lane j is trajectory j to the bit, checked by the
 * test), over floor_state_gap's numbers; *per_step the Newton iterations per trajectory-step at h. */
static void lockstep_controls_by_hand(int m, double control[2], double *per_step) {
  nh_system sys;
  nh_state x0;
  cr_assert_eq(nh_system_init(&sys, nh_system_type_find("chaotic_particle")), 0);
  nh_system_default_state(&sys, &x0);
  static nh_floor_state at_h[64], nudged[64];
  long its = 0;
  for (int j = 0; j < 64; j++) {
    nh_floor_state s = floor_state_from(&x0);
    for (int i = 0; i < 5; i++) {
      s.q[i] += 0.05 * sin(1.0 + j + 0.7 * i);
      s.v[i] += 0.05 * cos(2.0 + 1.3 * j + i);
    }
    s.v[0] = -(s.q[1] * s.v[3] + s.q[2] * s.v[4]);
    at_h[j] = nudged[j] = s;
    const long at = ls_floor(m, &at_h[j], 0.2, 100), off = ls_floor(m, &nudged[j], nextafter(0.2, 1), 100);
    cr_assert(at >= 0 && off >= 0, "%s, start %d failed", ls_names[m], j);
    its += at;
  }
  control[0] = control[1] = 0;
  for (int j = 0; j < 64; j++) {
    control[0] = fmax(control[0], floor_state_gap(m, &at_h[j], &nudged[j]));
    control[1] = fmax(control[1], floor_state_gap(m, &at_h[j], &at_h[(j + 1) % 64]));
  }
  *per_step = (double)its / (64.0 * 100);
}

/* From the floors' start, the default state, where y1 = 0: μ's constant entries then meet zeros of
 * the state (0·0 in the floor, where a kernel that divided would make 0/0). Three steps of each
 * method on 1, 4 and 8 lanes give the scalar floor's states to the bit, and its Newton
 * iterations. */
Test(bench, lockstep_from_the_default_state_bit_for_bit) {
  nh_system sys;
  nh_state x0;
  cr_assert_eq(nh_system_init(&sys, nh_system_type_find("chaotic_particle")), 0);
  nh_system_default_state(&sys, &x0);
  cr_assert_eq(x0.q[1], 0, "the default state has y1 = 0");
  nh_floor_state start[8];
  for (int l = 0; l < 8; l++) start[l] = floor_state_from(&x0);
  for (int m = 0; m < LS_METHODS; m++) cr_expect_eq(lanes_against_floor(m, start, 0.2, 3), 0, "%s", ls_names[m]);
}

/* nh_newmark's lanes where they part: starts with y1 from -1.5 to 1.3, so that the lanes of a set
 * choose different pivot rows in the 7x7 LU (lu_solve's selects, not its exchanged pointers) and
 * take different Newton iterations (the mask), each lane the floor's numbers to the bit (the other
 * methods from the same starts too); then one lane where the floor fails in the first step (ẏ1 =
 * 1e6: no convergence in 50 iterations), which fails its lane set and no other. */
Test(bench, lockstep_nh_newmark_lanes_part_bit_for_bit) {
  nh_floor_state s[8];
  for (int j = 0; j < 8; j++) {
    s[j] = (nh_floor_state){.q = {0.1, -1.5 + 0.4 * j, 0.2, 0.3, 0.4}, .v = {0, 0.3, -0.2, 0.5, -0.1 * j}};
    nh_floor_onto_constraint(&s[j]);
  }
  long its[8];
  int differ = 0;
  for (int j = 0; j < 8; j++) {
    nh_floor_state t = s[j];
    its[j] = nh_floor_nh_newmark(&t, 0.1, 0.1, 0.2, 30);
    differ |= its[j] != its[0];
  }
  cr_expect(its[0] > 0 && differ, "the lanes take different iterations (%ld, %ld, ...)", its[0], its[1]);
  for (int m = 0; m < LS_METHODS; m++)
    cr_expect_eq(lanes_against_floor(m, s, 0.2, 30), 0, "%s from spread starts", ls_names[m]);
  s[5] = (nh_floor_state){.q = {0.3, 1, 0.5, 0.2, -0.1}, .v = {0, 1e6, 0.2, 0.3, 0.1}};
  nh_floor_onto_constraint(&s[5]);
  cr_expect_eq(lanes_against_floor(LS_NEWMARK, s, 0.2, 30), 3, "lane 5 fails alone, at 1, 4 and 8 lanes");
  /* A NaN start does not fail the floor (newton_update's fmax passes NaNs over: |δ| = 0, done at
   * once): its lane ends in the floor's NaNs, bit for bit, beside the others'. */
  s[5].q[3] = NAN; /* z1 */
  cr_expect_eq(lanes_against_floor(LS_NEWMARK, s, 0.2, 30), 0, "a NaN lane");
}

/* nh_lockstep_gap, the difference the lockstep table takes: 0 only for the same bits. */
Test(bench, lockstep_gap_tells_bits_apart) {
  const double nan = NAN, other_nan = -NAN;
  cr_expect_eq(nh_lockstep_gap(1.5, 1.5), 0);
  cr_expect_eq(nh_lockstep_gap(nan, nan), 0, "a NaN against its own bits");
  cr_expect_eq(nh_lockstep_gap(1.25, 1), 0.25);
  cr_expect_eq(nh_lockstep_gap(1, 1.25), 0.25);
  cr_expect_eq(nh_lockstep_gap(0.0, -0.0), DBL_TRUE_MIN, "+0 against -0");
  cr_expect_eq(nh_lockstep_gap(-0.0, 0.0), DBL_TRUE_MIN);
  cr_expect_eq(nh_lockstep_gap(nan, 1), INFINITY);
  cr_expect_eq(nh_lockstep_gap(2, nan), INFINITY);
  cr_expect_eq(nh_lockstep_gap(nan, other_nan), INFINITY, "NaNs of other bits");
  cr_expect_eq(nh_lockstep_gap(DBL_TRUE_MIN, 0), DBL_TRUE_MIN);
}

/* The lockstep table (bench/performance/lockstep.c, nhbench_bench --only lockstep): the four floors'
 * methods at 1, 4 and 8 lanes, every trajectory's final state the scalar floor's to the bit (the
 * kernels do the floor's operations in the floor's order, so no last-bit difference has an excuse)
 * and its Newton iterations the floor's, also where the lanes of a set take different iterations
 * (nh_newmark's ensemble, herglotz2's masked Newton check). The negative controls: the same
 * comparison sees h moved by one ulp and a lane set against the wrong trajectories. */
Test(bench, lockstep_kernels_match_the_floors_bit_for_bit, .timeout = 120) {
  static char out[1 << 16], err[1 << 14];
  cr_assert_eq(run_bench_args("--quick --only lockstep", out, sizeof out, err, sizeof err), 0, "%s", err);
  const char *table = strstr(out, "iterations  method\n");
  cr_assert(table, "no lockstep table:\n%s", out);
  int rows = 0, seen[LS_METHODS][3] = {{0}}, lanes;
  double sns, lns, ratio, diff, per_step, controls[LS_METHODS][2], by_hand_per_step[LS_METHODS];
  char its[16], name[64];
  for (int m = 0; m < LS_METHODS; m++) lockstep_controls_by_hand(m, controls[m], &by_hand_per_step[m]);
  for (const char *line = table + strlen("iterations  method\n");
       sscanf(line, "%lf %lf %lf %d %lf %lf %15s %63s", &sns, &lns, &ratio, &lanes, &diff, &per_step, its, name) == 8;
       line = strchr(line, '\n') + 1) {
    int m = 0;
    while (m < LS_METHODS && strcmp(name, ls_names[m]) != 0) m++;
    const int c = lanes == 1 ? 0 : lanes == 4 ? 1 : lanes == 8 ? 2 : -1;
    cr_assert(c >= 0 && m < LS_METHODS, "unexpected row %s at %d lanes:\n%s", name, lanes, out);
    rows++, seen[m][c]++;
    cr_expect_eq(diff, 0, "%s, %d lanes: final states %g away from the floor's", name, lanes, diff);
    const int newton = m == LS_NEWMARK || m == LS_HERGLOTZ2;
    cr_expect_str_eq(its, newton ? "same" : "-", "%s, %d lanes: Newton iterations", name, lanes);
    /* rk4 and nh_rattle solve nothing; on the timed ensemble every herglotz2 step takes two
     * iterations (the predictor leaves the constraint linear in the rest: the first lands on the
     * solution), nh_newmark's the floors' count, recomputed. */
    char printed[32], want[32];
    snprintf(printed, sizeof printed, "%.2f", per_step);
    snprintf(want, sizeof want, "%.2f", by_hand_per_step[m]);
    cr_expect_str_eq(printed, want, "%s: Newton iterations per step", name);
    if (m == LS_HERGLOTZ2) cr_expect_eq(per_step, 2, "herglotz2: %g Newton iterations per step", per_step);
    if (m == LS_NEWMARK) cr_expect_gt(per_step, 2, "nh_newmark: %g Newton iterations per step", per_step);
    /* The times are printed rounded to 0.1 ns, the ratio to 0.01. */
    cr_expect(sns > 0 && lns > 0 && fabs(ratio - sns / lns) <= ratio * (0.05 / sns + 0.05 / lns) * 1.01 + 0.005,
              "%s, %d lanes: ratio %g of %g / %g", name, lanes, ratio, sns, lns);
    /* Units, not speed: a step of a 3-dof system costs nanoseconds to microseconds, whatever the
     * machine's load, and lockstep does the floor's work (a ratio far from 1 is another unit). */
    cr_expect(sns > 1 && sns < 1e6 && lns > 1 && lns < 1e6 && ratio > 0.02 && ratio < 50,
              "%s, %d lanes: %g and %g ns per trajectory-step, ratio %g", name, lanes, sns, lns, ratio);
  }
  cr_expect_eq(rows, 3 * LS_METHODS, "the four methods at 1, 4 and 8 lanes:\n%s", out);
  for (int m = 0; m < LS_METHODS; m++)
    for (int c = 0; c < 3; c++) cr_expect_eq(seen[m][c], 1, "%s, lane count %d: %d rows", ls_names[m], c, seen[m][c]);
  for (int m = 0; m < LS_METHODS; m++) {
    char head[64];
    double ulp = -1, shifted = -1;
    snprintf(head, sizeof head, "control, %s: ", ls_names[m]);
    const char *control = strstr(out, head);
    cr_assert(control, "no control line for %s:\n%s", ls_names[m], out);
    cr_expect_eq(sscanf(control + strlen(head),
                        "the scalar floor with h one ulp larger ends %lf away; lockstep lane j against scalar "
                        "trajectory j+1: %lf",
                        &ulp, &shifted),
                 2, "control line: %s", control);
    cr_expect(ulp > 0 && ulp < 1e-6, "%s: one ulp of h moved the final states by %g", ls_names[m], ulp);
    cr_expect(shifted > 1e-3, "%s: distinct trajectories only %g apart", ls_names[m], shifted);
    char printed[64], want[64];
    snprintf(printed, sizeof printed, "%.2e %.2e", ulp, shifted);
    snprintf(want, sizeof want, "%.2e %.2e", controls[m][0], controls[m][1]);
    cr_expect_str_eq(printed, want, "%s: the controls printed, and recomputed", ls_names[m]);
  }
  for (int l = 4; l <= 8; l += 4) {
    char head[64], same[16] = "";
    int differed = -1, sets = -1, steps = -1;
    long lo = -1, hi = -1;
    snprintf(head, sizeof head, "masked Newton, %d lanes: ", l);
    const char *check = strstr(out, head);
    cr_assert(check, "no masked Newton check at %d lanes:\n%s", l, out);
    cr_expect_eq(sscanf(check + strlen(head),
                        "%d of %d lane sets had lanes taking different iterations (%ld to %ld per step) in %d steps "
                        "near s0 = 0; state diff %lf, iterations %15s",
                        &differed, &sets, &lo, &hi, &steps, &diff, same),
                 7, "check line: %s", check);
    cr_expect(differed > 0 && differed <= sets && lo < hi, "%d lanes: no lane set exercised the mask: %s", l, check);
    int want_sets;
    long want_lo, want_hi;
    masked_figures_by_hand(l, &want_sets, &want_lo, &want_hi);
    cr_expect(differed == want_sets && sets == 64 / l && lo == want_lo && hi == want_hi,
              "%d lanes: %d of %d sets, %ld to %ld; by hand %d of %d, %ld to %ld", l, differed, sets, lo, hi, want_sets,
              64 / l, want_lo, want_hi);
    cr_expect_eq(diff, 0, "%d lanes, masked Newton: final states %g away from the floor's", l, diff);
    cr_expect_str_eq(same, "same", "%d lanes, masked Newton: iterations", l);
  }
}

/* The floor of `method` (a floors-table row), `steps` steps of h from the system's default state
 * x0 (q, v, its λ and z): its Newton iterations, or -1. */
static long floor_run(const char *method, const nh_state *x0, double h, long steps, nh_floor_state *s) {
  *s = floor_state_from(x0);
  if (strcmp(method, "rk4") == 0) return nh_floor_rk4(s, h, steps), 0;
  if (strcmp(method, "nh_rattle") == 0) return nh_floor_rattle_init(s), nh_floor_nh_rattle(s, h, steps), 0;
  if (strcmp(method, "herglotz2") == 0) return nh_floor_herglotz2(s, h, steps);
  return nh_floor_nh_newmark(s, 0.1, 0.1, h, steps);
}

/* The floors table's state difference: the largest |harness − floor| / max(1, |floor|) over q, v,
 * the multiplier (not rk4's) and z (herglotz2's), a NaN infinitely far. */
static double state_difference_by_hand(const char *method, const nh_state *x, const nh_floor_state *s) {
  double a[12], b[12], d = 0;
  int n = 0;
  for (int i = 0; i < 5; i++) a[n] = x->q[i], b[n++] = s->q[i], a[n] = x->v[i], b[n++] = s->v[i];
  if (strcmp(method, "rk4") != 0) a[n] = x->lambda[0], b[n++] = s->lambda;
  if (strcmp(method, "herglotz2") == 0) a[n] = x->z, b[n++] = s->z;
  for (int k = 0; k < n; k++) {
    const double r = fabs(a[k] - b[k]) / (fabs(b[k]) > 1 ? fabs(b[k]) : 1);
    d = isnan(r) || r > d ? (isnan(r) ? INFINITY : r) : d;
  }
  return d;
}

/* The bench's starts put on the constraint by their x-velocity: the harness's μ(q) (the system
 * file's, not the floor's) then annihilates v, and nothing else moved. */
Test(bench, floor_starts_onto_the_constraint) {
  nh_system sys;
  cr_assert_eq(nh_system_init(&sys, nh_system_type_find("chaotic_particle")), 0);
  for (int j = 0; j < 8; j++) {
    nh_floor_state s = {.lambda = 0.5, .z = 0.25};
    for (int i = 0; i < 5; i++) s.q[i] = sin(1.0 + j + 0.7 * i), s.v[i] = cos(2.0 + 1.3 * j + i);
    const nh_floor_state before = s;
    nh_floor_onto_constraint(&s);
    double mu[5], residual = 0;
    sys.type->constraints(sys.p, s.q, mu);
    for (int i = 0; i < 5; i++) residual += mu[i] * s.v[i];
    cr_expect_leq(fabs(residual), 1e-15, "start %d: mu(q).v = %g", j, residual);
    cr_expect(memcmp(s.q, before.q, sizeof s.q) == 0 && memcmp(s.v + 1, before.v + 1, 4 * sizeof *s.v) == 0 &&
                  s.lambda == 0.5 && s.z == 0.25,
              "start %d: more than v_x moved", j);
  }
}

/* The floors touch only what their method defines: z (herglotz2's action) stays as it was through
 * rk4, nh_newmark and nh_rattle; rk4 leaves the multiplier and the carried force alone too. */
Test(bench, floors_leave_z_alone) {
  nh_system sys;
  nh_state x0;
  cr_assert_eq(nh_system_init(&sys, nh_system_type_find("chaotic_particle")), 0);
  nh_system_default_state(&sys, &x0);
  static const char *const methods[] = {"rk4", "nh_newmark(beta=0.1,beta2=0.1,alpha=0.5)", "nh_rattle"};
  for (int k = 0; k < 3; k++) {
    nh_state x = x0;
    x.z = 0.375, x.lambda[0] = 0.625;
    nh_floor_state s;
    cr_assert_geq(floor_run(methods[k], &x, 0.2, 3, &s), 0, "%s", methods[k]);
    cr_expect_eq(s.z, 0.375, "%s: z %g", methods[k], s.z);
    if (k == 0) cr_expect(s.lambda == 0.625 && s.force[0] == 0 && s.force[4] == 0, "rk4: lambda %g", s.lambda);
  }
}

/* The chaotic particle's ODE for GSL (y = q, v) from the floor's acceleration, written here. */
static int particle_ode(double t, const double y[], double dydt[], void *params) {
  (void)t, (void)params;
  for (int i = 0; i < 5; i++) dydt[i] = y[5 + i];
  nh_floor_acceleration(y, y + 5, dydt + 5);
  return GSL_SUCCESS;
}

/* `steps` steps of h of GSL's stepper T from x0 (q, v) straight through gsl_odeiv2_step_apply, no
 * driver; the largest |y − s| / max(1, |s|) against the floor state s over q and v. */
static double gsl_steps_against(const gsl_odeiv2_step_type *T, const nh_state *x0, double h, int steps,
                                const nh_floor_state *s) {
  gsl_odeiv2_system ode = {particle_ode, NULL, 10, NULL};
  gsl_odeiv2_step *step = gsl_odeiv2_step_alloc(T, 10);
  double y[10], err[10], t = 0, d = 0;
  for (int i = 0; i < 5; i++) y[i] = x0->q[i], y[5 + i] = x0->v[i];
  for (int n = 0; n < steps; n++, t += h) cr_assert_eq(gsl_odeiv2_step_apply(step, t, h, y, err, NULL, NULL, &ode), 0);
  gsl_odeiv2_step_free(step);
  for (int i = 0; i < 10; i++) {
    const double b = i < 5 ? s->q[i] : s->v[i - 5], r = fabs(y[i] - b) / (fabs(b) > 1 ? fabs(b) : 1);
    d = r > d ? r : d;
  }
  return d;
}

/* The floors table's GSL rows: their two differences, recomputed with GSL's steppers applied
 * here, 20 steps of h = 0.2, against the rk4 floor after 40 half steps ("state diff") and 41
 * ("1 step on"). GSL's rk4 returns two half steps for a step, so its difference is round-off;
 * rk8pd's is rk4's error at h/2, far above it and far below the control. */
static void expect_gsl_rows(const char *out, const nh_state *x0) {
  nh_floor_state half = floor_state_from(x0), half_on = floor_state_from(x0);
  nh_floor_rk4(&half, 0.1, 40);
  nh_floor_rk4(&half_on, 0.1, 41);
  const gsl_odeiv2_step_type *types[] = {gsl_odeiv2_step_rk4, gsl_odeiv2_step_rk8pd};
  const char *const rows[] = {" GSL odeiv2 rk4 driver (", " GSL odeiv2 rk8pd driver ("};
  for (int g = 0; g < 2; g++) {
    const char *row = strstr(out, rows[g]);
    cr_assert(row, "no row%s:\n%s", rows[g], out);
    while (row > out && row[-1] != '\n') row--;
    double ns, control, diff;
    cr_assert_eq(sscanf(row, "%lf %lf %lf GSL", &ns, &control, &diff), 3, "%.*s", (int)strcspn(row, "\n"), row);
    char printed[32], by_hand[32];
    snprintf(printed, sizeof printed, "%.2e %.2e", control, diff);
    snprintf(by_hand, sizeof by_hand, "%.2e %.2e", gsl_steps_against(types[g], x0, 0.2, 20, &half_on),
             gsl_steps_against(types[g], x0, 0.2, 20, &half));
    cr_expect_str_eq(printed, by_hand, "%s: 1 step on, state diff", rows[g]);
    cr_expect(control > 1e-3, "%s: control %g", rows[g], control);
    if (g == 0) cr_expect(diff < 1e-12, "GSL's rk4 against the rk4 floor at h/2: %g", diff);
    else cr_expect(diff > 1e-12 && diff < 1e-3, "rk8pd against rk4 at h/2: %g", diff);
  }
}

/* The floors table is of chaotic_particle at h = 0.2 (2000 steps with --quick), and its Newton
 * iterations per step are the harness's over 20 steps of that h from the default state: counted
 * here by stepping each method with nh_integrate. Its two differences, recomputed: the harness's
 * state after those 20 steps against the floor's after 20 ("state diff") and after 21 ("1 step
 * on", the control). Then GSL's rows (expect_gsl_rows). */
Test(bench, floors_table_at_its_stated_step_size, .timeout = 60) {
  static char out[1 << 16], err[1 << 14];
  cr_assert_eq(run_bench_args("--quick --only floors", out, sizeof out, err, sizeof err), 0, "%s", err);
  cr_expect(strstr(out, "chaotic_particle, h = 0.2, 2000 steps,\nmedian of 5;"), "header:\n%s", out);
  const char *fl = strstr(out, "state diff  method\n");
  cr_assert(fl, "no floor table:\n%s", out);
  nh_system sys;
  cr_assert_eq(nh_system_init(&sys, nh_system_type_find("chaotic_particle")), 0);
  nh_state x0;
  nh_system_default_state(&sys, &x0);
  int rows = 0, newton_rows = 0;
  double ns, fns, ratio, its, fits, control, diff;
  char name[128];
  for (const char *line = fl + strlen("state diff  method\n");
       sscanf(line, "%lf %lf %lf %lf %lf %lf %lf %127s", &ns, &fns, &ratio, &its, &fits, &control, &diff, name) == 8;
       line = strchr(line, '\n') + 1) {
    char msg[512];
    nh_method *m = nh_method_parse(name, msg, sizeof msg);
    cr_assert(m, "%s: %s", name, msg);
    nh_state x = x0;
    nh_cost cost = {0};
    cr_assert_eq(nh_method_init(m, &sys, &x, 0.2, &cost), NH_STEP_OK);
    cost = (nh_cost){0};
    cr_assert_eq(nh_integrate(m, &sys, &x, 20, 0.2, &cost, NULL), NH_STEP_OK, "%s", name);
    const double want = (double)cost.newton_iterations / 20;
    cr_expect(fabs(its - want) <= 0.005 + 1e-12, "%s: %g Newton iterations per step printed, %g stepped here", name,
              its, want);
    nh_floor_state at, on;
    const long floor_its = floor_run(name, &x0, 0.2, 20, &at);
    cr_assert_geq(floor_run(name, &x0, 0.2, 21, &on), 0, "%s: the floor failed", name);
    char printed[64], by_hand[64];
    snprintf(printed, sizeof printed, "%.2e %.2e %.2f", control, diff, fits);
    snprintf(by_hand, sizeof by_hand, "%.2e %.2e %.2f", state_difference_by_hand(name, &x, &on),
             state_difference_by_hand(name, &x, &at), (double)floor_its / 20);
    cr_expect_str_eq(printed, by_hand, "%s: 1 step on, state diff, floor n/st", name);
    rows++, newton_rows += want > 0;
    nh_method_free(m);
  }
  cr_expect_eq(rows, 4, "%s", out);
  cr_expect_geq(newton_rows, 2, "nh_newmark and herglotz2 iterate");
  expect_gsl_rows(out, &x0);
}

static void expect_has(const char *out, const char *needle) {
  cr_expect(strstr(out, needle) != NULL, "'%s' not in:\n%s", needle, out);
}

/* nhbench_bench without an ENSEMBLE_SPEC runs studies/chaotic_ensemble.cfg (its --help says so),
 * relative to the working directory: the program's own path is no spec. */
Test(bench, bench_default_ensemble_spec) {
  static char out[1 << 16];
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "cd %s && %s --quick --only ensemble", NHBENCH_SOURCE_DIR, NHBENCH_BENCH_EXE);
  FILE *p = popen(cmd, "r");
  cr_assert_not_null(p);
  size_t n = fread(out, 1, sizeof out - 1, p);
  out[n] = '\0';
  cr_expect_eq(pclose(p), 0, "%s", out);
  expect_has(out, "\nensemble studies/chaotic_ensemble.cfg (");
}
