#define _POSIX_C_SOURCE 200809L /* mkdtemp, popen, setenv */
/* make bench's "own" table (bench/performance/bench.c, issue 50): the built-in chaotic_particle
 * against the same system written in a spec (studies/examples/own_system.cfg, which includes
 * studies/systems/chaotic_particle.sys), side by side. Not a timed test: the table is produced, says
 * whether the defined system ran compiled or interpreted, has a row per method whose figures parse
 * (the ratio column is the defined ns over the built-in ns), and its state differences are
 * round-off (defined against built-in) and zero (the interpreter against the compiled code, which
 * agree to the bit). Each run has a fresh cache directory of its own for the compiled object. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench/performance/bench.h"
#include "tests/heap_guard.h"
#include "tests/helpers.h"

static char cache[64]; /* this test's NHBENCH_CACHE_DIR */

/* Removes the cache directory and the objects in it (it holds no directories once a run is over). */
static void remove_cache(void) {
  DIR *d = opendir(cache);
  for (struct dirent *e; d && (e = readdir(d));) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", cache, e->d_name);
    unlink(path);
  }
  if (d) closedir(d);
  rmdir(cache);
}

static void setup(void) {
  snprintf(cache, sizeof cache, "/tmp/nh-bench-own-XXXXXX");
  cr_assert(mkdtemp(cache), "mkdtemp: %s", strerror(errno));
}

TestSuite(bench_own, .init = setup, .fini = remove_cache);

static const char *const own_methods[] = {"rk4", "nh_newmark(beta=0.1,beta2=0.1,alpha=0.5)", "nh_rattle", "herglotz2"};
enum { OWN_METHODS = sizeof own_methods / sizeof *own_methods };

/* One row: built-in ns, defined ns, ratio, interpreted ns, interpreted / defined, the two state
 * differences. */
typedef struct {
  double builtin, defined, ratio, interp, int_def, diff, interp_diff;
} own_row;

/* The table in out: its heading says `mode` ("compiled (generated C)" or "interpreted (no C
 * compiler)"), then the column headings, then a row per method, in order, each parsed into rows. */
static void parse_table(const char *out, const char *mode, own_row *rows) {
  const char *head = strstr(out, "\nown system: chaotic_particle built in against my_chaotic_particle defined in ");
  cr_assert(head, "no own-system table:\n%s", out);
  char want[128];
  snprintf(want, sizeof want, "defined system: %s;", mode);
  cr_expect(strstr(head, want), "the table does not say '%s':\n%s", want, out);
  cr_expect(strstr(head, "/systems/chaotic_particle.sys), h = 0.2, 2000 steps\n(interpreted: 200), median of 5;"),
            "heading:\n%s", out);
  const char *at = strstr(head, "built-in ns defined ns   ratio interp ns  int/def state diff interp diff  method\n");
  cr_assert(at, "no column headings:\n%s", out);
  at = strchr(at, '\n') + 1;
  for (int i = 0; i < OWN_METHODS; i++) {
    own_row *r = &rows[i];
    int used = 0;
    cr_assert_eq(sscanf(at, "%lf %lf %lf %lf %lf %lf %lf  %n", &r->builtin, &r->defined, &r->ratio, &r->interp,
                        &r->int_def, &r->diff, &r->interp_diff, &used),
                 7, "row %d does not parse: %.*s", i, (int)strcspn(at, "\n"), at);
    const size_t len = strcspn(at + used, "\n");
    cr_expect(len == strlen(own_methods[i]) && strncmp(at + used, own_methods[i], len) == 0,
              "row %d is of %.*s, not %s", i, (int)len, at + used, own_methods[i]);
    at += used + len + (at[used + len] == '\n');
  }
}

/* The figures of each row hang together (no speed asserted): positive times, the ratio the
 * defined time over the built-in one (both printed rounded to whole ns: the ratio of the printed
 * figures within their rounding), the interpreter's factor likewise, the states the same numbers
 * to round-off and the interpreter's the compiled code's to the bit. */
static void check_rows(const own_row *rows) {
  for (int i = 0; i < OWN_METHODS; i++) {
    const own_row *r = &rows[i];
    cr_expect(r->builtin > 0 && r->defined > 0 && r->interp > 0 && isfinite(r->ratio) && r->ratio > 0,
              "%s: figures %g %g %g, ratio %g", own_methods[i], r->builtin, r->defined, r->interp, r->ratio);
    const double slack = 0.005 + r->ratio * (0.5 / r->builtin + 0.5 / r->defined);
    cr_expect(fabs(r->ratio - r->defined / r->builtin) <= slack, "%s: ratio %g, but %g / %g = %g", own_methods[i],
              r->ratio, r->defined, r->builtin, r->defined / r->builtin);
    cr_expect(fabs(r->int_def - r->interp / r->defined) <= 0.05 + r->int_def * (0.5 / r->interp + 0.5 / r->defined),
              "%s: interpreted / defined %g, but %g / %g", own_methods[i], r->int_def, r->interp, r->defined);
    cr_expect(r->diff <= 1e-13, "%s: the defined system's state %g from the built-in's", own_methods[i], r->diff);
    cr_expect_eq(r->interp_diff, 0, "%s: the interpreter's state %g from the compiled code's", own_methods[i],
                 r->interp_diff);
  }
}

static char out[1 << 16];

/* The spec named by its full path from another directory (the example found beside it), with the
 * C compiler nhbench was built with: compiled. */
Test(bench_own, compiled_table_from_the_spec_path, .timeout = 120) {
  char cmd[2048];
  snprintf(cmd, sizeof cmd,
           "cd / && env -u NHBENCH_CC NHBENCH_CACHE_DIR=%s %s --quick --only own %s/studies/chaotic_ensemble.cfg 2>&1",
           cache, NHBENCH_BENCH_EXE, NHBENCH_SOURCE_DIR);
  cr_assert_eq(test_run_command(cmd, out, sizeof out), 0, "%s:\n%s", cmd, out);
  cr_expect(!strstr(out, "bench:"), "messages:\n%s", out);
  own_row rows[OWN_METHODS];
  parse_table(out, "compiled (generated C)", rows);
  check_rows(rows);
}

/* No C compiler (NHBENCH_CC=none), the default spec below the working directory: both columns on
 * the interpreter, said so. */
Test(bench_own, interpreted_table_without_a_compiler, .timeout = 120) {
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "cd %s && NHBENCH_CC=none NHBENCH_CACHE_DIR=%s %s --quick --only own 2>&1",
           NHBENCH_SOURCE_DIR, cache, NHBENCH_BENCH_EXE);
  cr_assert_eq(test_run_command(cmd, out, sizeof out), 0, "%s:\n%s", cmd, out);
  own_row rows[OWN_METHODS];
  parse_table(out, "interpreted (no C compiler)", rows);
  check_rows(rows);
}

/* No example spec beside the ensemble spec nor below the working directory: a message, no table,
 * and the other tables still run. */
Test(bench_own, no_example_spec, .timeout = 120) {
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "cd / && %s --quick --only own,lu /nonexistent/chaotic_ensemble.cfg 2>&1",
           NHBENCH_BENCH_EXE);
  cr_assert_eq(test_run_command(cmd, out, sizeof out), 0, "%s:\n%s", cmd, out);
  cr_expect(
      strstr(out, "bench: own system: no studies/examples/own_system.cfg beside /nonexistent/chaotic_ensemble.cfg"),
      "message:\n%s", out);
  cr_expect(!strstr(out, "own system: chaotic_particle") && strstr(out, "small dense LU solves"), "tables:\n%s", out);
}

/* In-process, twice: the second run leaves the live blocks of nhbench's code as it found them (the
 * two studies, the systems built from the definition and the compiled object all freed), and
 * NHBENCH_CC as it was. */
Test(bench_own, table_frees_what_it_allocates, .timeout = 120) {
  if (test_live_blocks() < 0) cr_skip_test("AddressSanitizer build: LeakSanitizer checks leaks there");
  cr_assert_eq(chdir(NHBENCH_SOURCE_DIR), 0);
  setenv("NHBENCH_CACHE_DIR", cache, 1);
  setenv("NHBENCH_CC", "cc", 1);
  char *argv[] = {NHBENCH_BENCH_EXE, "--quick", "--only", "own", NULL};
  long blocks = 0;
  for (int run = 0; run < 2; run++) {
    fflush(stdout);
    const int saved = dup(1);
    FILE *sink = tmpfile();
    cr_assert(sink);
    dup2(fileno(sink), 1);
    if (run == 1) blocks = test_live_blocks();
    const int rc = nh_bench_main(4, argv);
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    rewind(sink);
    out[fread(out, 1, sizeof out - 1, sink)] = '\0';
    fclose(sink);
    cr_assert_eq(rc, 0);
    cr_expect(strstr(out, "defined system: compiled (generated C);"), "run %d:\n%s", run, out);
  }
  cr_expect_eq(test_live_blocks(), blocks, "the own table leaked %ld blocks", test_live_blocks() - blocks);
  cr_expect_str_eq(getenv("NHBENCH_CC"), "cc", "NHBENCH_CC not put back");
}
