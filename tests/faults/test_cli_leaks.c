/* The nhbench commands leak nothing: each command line below is called in-process, as nhbench's
 * main calls it (bench/cli/cli.h), once to warm up and then again; the second call must leave the
 * count of live blocks of nhbench's own code (tests/contracts/test_no_alloc.c's allocation wrapper) and of
 * open HDF5 identifiers (tests/helpers.h) unchanged. Success paths and refusals (exit 2) both: a free left out on an
 * early return, a dataset id not closed after an error, grow a count. Each call's exit status is
 * checked too (the commands' contract, bench/cli/cli.h). Output goes to /dev/null. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <hdf5_hl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/cli/cli.h"
#include "tests/helpers.h"

#define DATA NHBENCH_SOURCE_DIR "/tests/data/"
#define MAX_ARGS 24

static char dir[128];

/* The command line `line` ("export FILE series --ic 1"; @ stands for the test's directory), split
 * at spaces, called in-process with stdout and stderr sent to the files out_path and err_path
 * (NULL: /dev/null); its exit status. */
static int call_to(const char *line, const char *out_path, const char *err_path) {
  char text[1024], expanded[1024] = "", *argv[MAX_ARGS + 1];
  for (const char *p = line; *p; p++) {
    size_t len = strlen(expanded);
    if (*p == '@') snprintf(expanded + len, sizeof expanded - len, "%s", dir);
    else if (len + 1 < sizeof expanded) expanded[len] = *p, expanded[len + 1] = '\0';
  }
  snprintf(text, sizeof text, "%s", expanded);
  int argc = 0;
  for (char *tok = strtok(text, " "); tok && argc < MAX_ARGS; tok = strtok(NULL, " ")) argv[argc++] = tok;
  argv[argc] = NULL;
  static const struct {
    const char *name;
    int (*fn)(int, char **);
  } commands[] = {{"run", nh_cli_run},
                  {"list", nh_cli_list},
                  {"info", nh_cli_info},
                  {"export", nh_cli_export},
                  {"report", nh_cli_report}};
  int (*fn)(int, char **) = NULL;
  for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
    if (strcmp(argv[0], commands[i].name) == 0) fn = commands[i].fn;
  cr_assert(fn != NULL, "%s: no such command", line);
  fflush(stdout), fflush(stderr);
  const int out = dup(1), err = dup(2), null = open("/dev/null", O_WRONLY);
  const int to = out_path ? open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644) : dup(null);
  const int to_err = err_path ? open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644) : dup(null);
  cr_assert(to >= 0 && to_err >= 0, "cannot create %s or %s", out_path, err_path);
  dup2(to, 1), dup2(to_err, 2);
  nh_cli_getopt_reset();
  const int rc = fn(argc, argv);
  fflush(stdout), fflush(stderr);
  dup2(out, 1), dup2(err, 2);
  close(out), close(err), close(null), close(to), close(to_err);
  return rc;
}

static int call(const char *line) { return call_to(line, NULL, NULL); }

/* Each line twice: the exit status both times, and nothing left behind by the second call. */
static void no_leak(const char *const *lines, const int *status, int n) {
  for (int i = 0; i < n; i++) {
    cr_expect_eq(call(lines[i]), status[i], "%s: exit status (warm-up)", lines[i]);
    const long blocks = test_live_blocks(), objects = test_open_hdf5_ids();
    cr_expect_eq(call(lines[i]), status[i], "%s: exit status", lines[i]);
    cr_expect_eq(test_live_blocks(), blocks, "nhbench %s: %ld blocks of nhbench's own code leaked", lines[i],
                 test_live_blocks() - blocks);
    cr_expect_eq(test_open_hdf5_ids(), objects, "nhbench %s: %ld HDF5 identifiers left open", lines[i],
                 test_open_hdf5_ids() - objects);
  }
}

static void make_test_dir(void) {
  snprintf(dir, sizeof dir, "/tmp/nhbench-cli-leaks-%d", (int)getpid());
  mkdir(dir, 0777);
}

static void make_dir(void) {
  if (test_live_blocks() < 0) cr_skip_test("AddressSanitizer build: LeakSanitizer checks leaks there");
  make_test_dir();
}

static void remove_dir(void) {
  char cmd[256];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  cr_expect_eq(system(cmd), 0);
}

/* One results file of each study kind, written by `run` (itself checked). */
static void write_results(void) {
  static const char *const runs[] = {
      "run " DATA "convergence_norms.cfg -o @/conv.h5 -j 1",
      "run " DATA "small_ensemble.cfg -o @/ens.h5 -j 1",
      "run " DATA "ensemble_observables.cfg -o @/ensobs.h5 -j 1",
      "run " DATA "trajectory_particle.cfg -o @/traj.h5 -j 1",
      "run " DATA "onestep_random.cfg -o @/onestep.h5 -j 1",
      "run " DATA "work_precision_small.cfg -o @/wp.h5 -j 1",
  };
  static const int ok[] = {0, 0, 0, 0, 0, 0};
  no_leak(runs, ok, 6);
}

Test(cli_leaks, run_its_options_and_refusals, .init = make_dir, .fini = remove_dir) {
  static const char *const lines[] = {
      "run " DATA "order_claim.cfg -o @/claim.h5 --check-orders", /* js_a claimed order 2: 1 */
      "run " DATA "order_claim.cfg -o @/claim.h5 --set T=1 -s h0=0.1",
      /* datasets past 4096 elements (t: 5001 samples; q: 3 methods x 4 ICs x 5001 samples x 2), stored chunked */
      "run " DATA "ensemble_observables.cfg -o @/big.h5 --set T=2000 -j 1",
      "run " DATA "order_claim.cfg -o @/j.h5 --resume",     /* no journal: 2 */
      "run " DATA "order_claim.cfg -o @/other.h5 --resume", /* not a journal: 2 */
      "run --help",
      "run",
      "run --no-such-option",
      "run " DATA "bad_unknown_method.cfg -o @/bad.h5",
      "run " DATA "bad_malformed.cfg -o @/bad.h5",
      "run " DATA "order_claim.cfg -o @/bad.h5 --set no_such_setting=1",
      "run " DATA "order_claim.cfg -o @/bad.h5 --set T",
      "run @/no_such_spec.cfg -o @/bad.h5",
      "run " DATA "order_claim.cfg -o @/no/such/../../bad.h5 -j 0",
      "run @/bad_q.cfg -o @/bad.h5", /* q's second entry not a number: refused after q's array is made */
  };
  static const int status[] = {1, 0, 0, 2, 2, 0, 2, 2, 2, 2, 2, 2, 2, 2, 2};
  char journal[256], bad_q[256];
  snprintf(journal, sizeof journal, "%s/other.h5.journal", dir);
  test_write_file(journal, "not a journal\n");
  snprintf(bad_q, sizeof bad_q, "%s/bad_q.cfg", dir);
  test_write_file(bad_q, "study = \"convergence\"; system = \"particle\"; T = 1.0; h0 = 0.1; halvings = 2;\n"
                         "methods = [\"rk4\"]; initial = { q = (1.0, \"x\", 0.0); v = [0.0, 0.0, 0.0]; };\n");
  no_leak(lines, status, sizeof status / sizeof *status);
}

Test(cli_leaks, list) {
  if (test_live_blocks() < 0) cr_skip_test("AddressSanitizer build: LeakSanitizer checks leaks there");
  static const char *const lines[] = {"list",
                                      "list systems",
                                      "list methods",
                                      "list observables",
                                      "list methods rk4",
                                      "list systems particle",
                                      "list methods no_such",
                                      "list no_such",
                                      "list --help",
                                      "list --bogus",
                                      "list systems a b",
                                      "list settings --markdown",
                                      "list settings convergence --markdown"};
  static const int status[] = {0, 0, 0, 0, 0, 0, 2, 2, 0, 2, 2, 0, 2};
  no_leak(lines, status, sizeof status / sizeof *status);
}

/* A results file of schema version 1 (refused, with the spec to re-run named): conv.h5 relabelled. */
static void write_version_1(void) {
  char path[3 * sizeof dir];
  snprintf(path, sizeof path, "cp %s/conv.h5 %s/v1.h5", dir, dir);
  cr_assert_eq(system(path), 0);
  snprintf(path, sizeof path, "%s/v1.h5", dir);
  hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  const int one = 1;
  cr_assert(f >= 0 && H5LTset_attribute_int(f, "/", "schema_version", &one, 1) >= 0);
  H5Fclose(f);
}

Test(cli_leaks, info_of_every_study_kind, .init = make_dir, .fini = remove_dir) {
  write_results();
  write_version_1();
  static const char *const lines[] = {"info @/conv.h5",
                                      "info @/ens.h5",
                                      "info @/ensobs.h5",
                                      "info @/traj.h5",
                                      "info @/onestep.h5",
                                      "info @/wp.h5",
                                      "info --help",
                                      "info",
                                      "info @/no_such.h5",
                                      "info " DATA "order_claim.cfg" /* not HDF5 */,
                                      "info @/conv.h5 @/ens.h5", "info @/v1.h5"};
  static const int status[] = {0, 0, 0, 0, 0, 0, 0, 2, 2, 2, 2, 2};
  no_leak(lines, status, sizeof status / sizeof *status);
}

Test(cli_leaks, export_every_table, .init = make_dir, .fini = remove_dir) {
  write_results();
  static const char *const lines[] = {
      "export @/conv.h5 study",
      "export @/conv.h5 attr T",
      "export @/conv.h5 attr no_such",
      "export @/conv.h5 methods --primary",
      "export @/conv.h5 convergence --methods all",
      "export @/conv.h5 convergence --methods 0,9",
      "export @/conv.h5 orders",
      "export @/conv.h5 energy",
      "export @/ens.h5 energy --method 1 --ics 0:2 --relative",
      "export @/ens.h5 energy --ics 2:1",
      "export @/ens.h5 energy-all-methods --ic 1 --methods all",
      "export @/ens.h5 quantiles",
      "export @/ens.h5 variance --methods 0",
      "export @/ens.h5 grid --grid 0 --stat final_var",
      "export @/ens.h5 grid --grid 3",
      "export @/ens.h5 grid --stat no_such",
      "export @/ens.h5 attr grid0/param0",
      "export @/ensobs.h5 observables",
      "export @/ensobs.h5 series --observable q --ic 1",
      "export @/traj.h5 observables",
      "export @/traj.h5 series --observable energy_error --method 0 --h 0 --ic "
      "0",
      "export @/traj.h5 series --observable no_such",
      "export @/traj.h5 series --h 7",
      "export @/onestep.h5 local_error --methods all",
      "export @/onestep.h5 slopes",
      "export @/wp.h5 work_precision",
      "export @/wp.h5 work_precision --norm q_2",
      "export @/wp.h5 work_precision --norm no_such",
      "export @/wp.h5 no_such_table",
      "export @/traj.h5 dataset observables/q --at method=1 --at component=q[2]",
      "export @/conv.h5 dataset cost --field steps --at h=7",
      "info --datasets @/ens.h5",
      "export @/no_such.h5 study",
      "export @/wp.h5",
      "export --help",
      /* several datasets side by side: read, refused at the second or at a selector none has */
      "export @/wp.h5 dataset work,err,pareto_work --at method=1 --at norm=q_2",
      "export @/wp.h5 dataset work,err --at method=1",
      "export @/wp.h5 dataset work,nope --at method=1",
      "export @/wp.h5 dataset work,status --at ic=0",
      "export @/conv.h5 dataset orders --field observed",
      "export @/conv.h5 dataset orders --field reason",
      /* the other formats: units read from the datasets, keys, notes */
      "export @/conv.h5 convergence --format json",
      "export @/ens.h5 energy --ics 0:2 --format csv",
      "export @/traj.h5 dataset observables/q --at method=1 --format tsv",
      "export @/ensobs.h5 observables --format json",
      "export @/conv.h5 methods --format xml",
  };
  static const int status[] = {0, 0, 2, 0, 0, 2, 0, 2, 0, 2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 0, 2,
                               2, 0, 0, 0, 0, 2, 2, 0, 2, 0, 2, 2, 0, 0, 2, 2, 2, 0, 2, 0, 0, 0, 0, 2};
  cr_assert_eq(sizeof status / sizeof *status, sizeof lines / sizeof *lines);
  no_leak(lines, status, sizeof status / sizeof *status);
}

/* The tables with a block per method (or per IC) lay them out as gnuplot's `index` reads them:
 * the header comment, then the blocks, each from its "# method" line, two blank lines between two
 * blocks and nowhere else (none before the first, none after the last). */
Test(cli_leaks, export_blocks_two_blank_lines_apart, .init = make_test_dir, .fini = remove_dir) {
  write_results();
  static const struct {
    const char *line;
    int blocks;
  } tables[] = {
      {"export @/conv.h5 convergence --methods all", 0},
      {"export @/ens.h5 energy --method 1 --ics 1:4", 3},
      {"export @/ens.h5 energy-all-methods --ic 1 --methods 2,0", 2},
      {"export @/ens.h5 quantiles --methods all", 0},
      {"export @/onestep2.h5 local_error --methods all", 2},
      {"export @/wp.h5 work_precision --methods all", 0},
  };
  cr_assert_eq(call("run " DATA "onestep_random.cfg -o @/onestep2.h5 -j 1 --set methods=[\"rk4\",\"nh_rattle\"]"), 0);
  char path[256];
  snprintf(path, sizeof path, "%s/table.txt", dir);
  for (size_t t = 0; t < sizeof tables / sizeof *tables; t++) {
    cr_assert_eq(call_to(tables[t].line, path, NULL), 0, "%s", tables[t].line);
    static char out[1 << 20];
    test_read_file(path, out, sizeof out);
    cr_assert(strlen(out) < sizeof out - 1, "%s: output past the buffer", tables[t].line);
    int blocks = 0, seps = 0;
    for (const char *p = out; (p = strstr(p, "# method ")); p++) blocks += p == out || p[-1] == '\n';
    for (const char *p = out; (p = strstr(p, "\n\n\n")); p += 3, seps++)
      cr_expect(strncmp(p + 3, "# method ", 9) == 0 && p > out && strstr(out, "# method ") < p,
                "%s: two blank lines at byte %ld, not between two blocks", tables[t].line, (long)(p - out));
    if (tables[t].blocks) cr_expect_eq(blocks, tables[t].blocks, "%s: %d blocks", tables[t].line, blocks);
    cr_expect(blocks >= 2, "%s: %d blocks, too few to show the separators", tables[t].line, blocks);
    cr_expect_eq(seps, blocks - 1, "%s: %d separators for %d blocks", tables[t].line, seps, blocks);
    cr_expect(out[0] == '#' && !strstr(out, "\n\n\n\n") && out[strlen(out) - 1] == '\n' &&
                  (strlen(out) < 2 || out[strlen(out) - 2] != '\n'),
              "%s: a header first, no longer gap, no blank line at the end:\n%s", tables[t].line, out);
  }
}

/* The claims of tests/data/report/quick.claims measured from the results they name (conv, traj),
 * and a claims file of our own with every reduction. */
Test(cli_leaks, report, .init = make_dir, .fini = remove_dir) {
  char path[256];
  snprintf(path, sizeof path, "%s/traj.cfg", dir);
  test_write_file(path, "study = \"trajectory\"; system = \"particle\"; initial = \"newmark\"; T "
                        "= 1.0; h = 0.1;\n"
                        "observables = [\"energy\", \"energy_error\", \"constraint_residual\", \"q\"];\n"
                        "methods = [\"rk4\", \"nh_newmark(alpha=0.5)\"];\n");
  snprintf(path, sizeof path, "%s/conv.cfg", dir);
  test_write_file(path, "study = \"convergence\"; system = \"particle\"; initial = "
                        "\"newmark\"; T = 1.0; h0 = 0.1;\n"
                        "halvings = 3; methods = [\"rk4\", \"nh_newmark(alpha=0.5)\"];\n");
  /* every reduction once, measured only: each has buffers of its own */
  static const char *const reductions[] = {"value",      "abs",        "max_abs", "max",  "min",
                                           "mean",       "mean_abs",   "first",   "last", "slope",
                                           "rel_growth", "argmax_abs", "max_step", "growth", "integral",
                                           "alternation", "max_increase"};
  char claims[8192];
  int len = snprintf(claims, sizeof claims,
                     "spec = \"leaks\"; title = \"every reduction\";\n"
                     "items = ( { item = \"R\"; source = \"[test]\"; claim = "
                     "\"r\"; rows = (\n");
  for (size_t i = 0; i < sizeof reductions / sizeof *reductions; i++)
    len += snprintf(claims + len, sizeof claims - (size_t)len,
                    "  { quantity = \"%s\"; file = \"traj\"; data = "
                    "\"observables/energy_error\"; "
                    "at = { method = \"rk4\"; }; reduce = \"%s\"; verdict = \"shown\"; reason = "
                    "\"measured only\"; },\n",
                    reductions[i], reductions[i]);
  /* a difference of two datasets (the subtrahend freed), and one of another shape (refused: q has
   * three components) */
  len += snprintf(claims + len, sizeof claims - (size_t)len,
                  "  { quantity = \"minus\"; file = \"traj\"; data = \"observables/energy_error\"; minus = "
                  "\"observables/energy\"; at = { method = \"rk4\"; }; reduce = \"max_abs\"; "
                  "verdict = \"shown\"; reason = \"measured only\"; },\n"
                  "  { quantity = \"minus other\"; file = \"traj\"; data = \"observables/energy_error\"; minus = "
                  "\"observables/q\"; at = { method = \"rk4\"; }; reduce = \"max_abs\"; "
                  "verdict = \"shown\"; reason = \"measured only\"; },\n");
  snprintf(claims + len, sizeof claims - (size_t)len,
           "  { quantity = \"loglog\"; file = \"conv\"; data = \"err\"; at = { "
           "method = \"rk4\"; }; "
           "reduce = \"loglog_slope\"; verdict = \"shown\"; reason = \"measured only\"; } ); } );\n");
  snprintf(path, sizeof path, "%s/every.claims", dir);
  test_write_file(path, claims);
  snprintf(path, sizeof path, "%s/broken.claims", dir); /* a syntax error: the message quotes its line */
  test_write_file(path, "items = ( { item = \"x\";\n  rows = ( { quantity = ; } ); } );\n");
  static const char *const lines[] = {
      "run @/traj.cfg -o @/traj.h5",
      "run @/conv.cfg -o @/conv.h5",
      "report -r @ -o @ " DATA "report/quick.claims",
      "report -r @ -o @ --strict " DATA "report/quick.claims", /* rows that must fail: 1 */
      "report -r @ -o @ @/every.claims " DATA "report/quick.claims",
      "report -r @/no_such -o @ " DATA "report/quick.claims", /* not verified, still written */
      "report -r @ -o @ @/no_such.claims",
      "report -r @ -o @ " DATA "order_claim.cfg",
      "report -r @ -o @ @/broken.claims",
      "report --help",
      "report",
  };
  static const int status[] = {0, 0, 0, 1, 0, 0, 2, 2, 2, 0, 2};
  no_leak(lines, status, sizeof status / sizeof *status);
}

/* A command line of the out-of-memory sweep; for a run, tables of its output @/oom.h5 ("orders":
 * `nhbench export @/oom.h5 orders`) that must read the same as an undisturbed run's whenever the
 * run succeeds although an allocation failed (the ones it may do without: a journal record that
 * cannot be appended, the progress display's per-method counts). */
#define OOM_TABLES 4
typedef struct {
  const char *line;
  const char *tables[OOM_TABLES];
} oom_case;

/* Where table t of @/oom.h5 is exported: @/ref-<i>-<t>.txt for the undisturbed run of case i,
 * @/got.txt for the run under test (reference 0). */
static const char *table_file(int i, int t, int reference, char *path, size_t len) {
  if (reference) snprintf(path, len, "%s/ref-%d-%d.txt", dir, i, t);
  else snprintf(path, len, "%s/got.txt", dir);
  return path;
}

static void export_table(const char *table, const char *path) {
  char line[256];
  snprintf(line, sizeof line, "export @/oom.h5 %s", table);
  cr_assert_eq(call_to(line, path, NULL), 0, "%s: exit status", line);
}

static void expect_same_file(const char *a, const char *b, const char *what) {
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "cmp -s %s %s", a, b);
  cr_expect_eq(system(cmd), 0, "%s", what);
}

/* Each line with its k-th allocation failing, for every k up to its last (each in a child process):
 * no crash on an unchecked NULL, a documented exit status, and never 0 from export, which prints data it must have read
 * whole (info shows a missing optional attribute as "?", and report a measure it cannot take as
 * not verified, so they may still succeed); a failure says it was out of memory (not, say, a bad
 * spec); a run that succeeds wrote the undisturbed results. */
static void out_of_memory_everywhere(const oom_case *cases, int n) {
  int *fired = mmap(NULL, sizeof *fired, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  cr_assert_neq(fired, MAP_FAILED);
  char output[256], path[256], got[256], messages[256];
  snprintf(output, sizeof output, "%s/oom.h5", dir);
  snprintf(messages, sizeof messages, "%s/stderr.txt", dir);
  for (int i = 0; i < n; i++) {
    const char *line = cases[i].line;
    const int strict = strncmp(line, "export ", 7) == 0;
    int failures = 0;
    if (cases[i].tables[0]) { /* the reference tables, of an undisturbed run */
      cr_assert_eq(call(line), 0, "%s: exit status", line);
      for (int t = 0; t < OOM_TABLES && cases[i].tables[t]; t++)
        export_table(cases[i].tables[t], table_file(i, t, 1, path, sizeof path));
    }
    for (long k = 1;; k++) {
      /* In a child, so that each k starts from the same process state whatever a failure left
       * behind (HDF5's tables after a failed close); whether allocation k was reached comes back
       * through shared memory. */
      *fired = 0;
      unlink(output);
      const pid_t child = test_fork();
      cr_assert_geq(child, 0);
      if (child == 0) {
        test_fail_allocation = k, test_fail_fired = fired;
        _exit(call_to(line, NULL, messages));
      }
      int status = 0;
      cr_assert_eq(waitpid(child, &status, 0), child);
      cr_assert(WIFEXITED(status), "%s: allocation %ld failed: killed by signal %d", line, k,
                WIFSIGNALED(status) ? WTERMSIG(status) : 0);
      const int rc = WEXITSTATUS(status), reached = *fired;
      if (!reached) {
        cr_expect_eq(rc, 0, "%s: without a failed allocation: exit status %d (k = %ld)", line, rc, k);
        break;
      }
      failures++;
      cr_expect(rc >= 0 && rc <= 2, "%s: allocation %ld failed: exit status %d", line, k, rc);
      if (strict) cr_expect_neq(rc, 0, "%s: allocation %ld failed, yet exit status 0", line, k);
      if (rc != 0) {
        char said[4096];
        test_read_file(messages, said, sizeof said);
        cr_expect(strstr(said, "out of memory") || strstr(said, strerror(ENOMEM)),
                  "%s: allocation %ld failed, exit status %d, and it said: %s", line, k, rc, said);
        /* Bad usage (2) only while the spec loads: out of memory once the run has its output
         * (the banner "... study of ...") or in the command itself is a failed run (1). */
        if (strstr(said, " study of ") || strstr(said, "nhbench run: out of memory"))
          cr_expect_eq(rc, 1, "%s: allocation %ld failed: exit status %d, and it said: %s", line, k, rc, said);
      }
      for (int t = 0; rc == 0 && t < OOM_TABLES && cases[i].tables[t]; t++) {
        char what[512];
        snprintf(what, sizeof what, "%s: allocation %ld failed, exit status 0, yet table %s differs", line, k,
                 cases[i].tables[t]);
        export_table(cases[i].tables[t], table_file(i, t, 0, got, sizeof got));
        expect_same_file(table_file(i, t, 1, path, sizeof path), got, what);
      }
    }
    cr_expect_gt(failures, 0, "%s allocates nothing?", line);
  }
  munmap(fired, sizeof *fired);
}

/* Not leaks: these run under AddressSanitizer too, which sees a failure path's bad access. Two
 * tests, info's and the others, each well within its time under AddressSanitizer on a loaded
 * machine (together they took 113 s alone, and over 300 s beside another build's tests). */
Test(cli_leaks, out_of_memory_in_info, .init = make_test_dir, .fini = remove_dir, .timeout = 300) {
  write_results();
  static const oom_case cases[] = {
      {"info @/conv.h5", {NULL}},
      {"info @/ens.h5", {NULL}},
      {"info @/traj.h5", {NULL}},
      {"info @/onestep.h5", {NULL}},
      {"info @/wp.h5", {NULL}},
  };
  out_of_memory_everywhere(cases, sizeof cases / sizeof *cases);
}

Test(cli_leaks, out_of_memory_in_export_and_report, .init = make_test_dir, .fini = remove_dir, .timeout = 300) {
  write_results();
  static const oom_case cases[] = {
      {"export @/conv.h5 convergence --methods all", {NULL}},
      {"export @/ens.h5 energy --method 1 --ics 0:2 --relative", {NULL}},
      {"export @/ens.h5 grid --grid 0 --stat final_var", {NULL}},
      {"export @/traj.h5 series --observable energy_error --method 0 --h 0 --ic 0", {NULL}},
      {"export @/onestep.h5 slopes", {NULL}},
      {"export @/wp.h5 work_precision", {NULL}},
      {"report -r @ -o @ " DATA "report/quick.claims", {NULL}},
  };
  out_of_memory_everywhere(cases, sizeof cases / sizeof *cases);
}

/* The tables that know no kind: a dataset's slice (results/slice.c) and the list of datasets. */
Test(cli_leaks, out_of_memory_in_the_generic_tables, .init = make_test_dir, .fini = remove_dir, .timeout = 300) {
  write_results();
  static const oom_case cases[] = {
      {"export @/traj.h5 dataset observables/q --at method=1 --at ic=1", {NULL}},
      {"export @/wp.h5 dataset work,err,pareto_work --at method=1 --at norm=q_2", {NULL}},
      {"export @/conv.h5 dataset orders --field observed", {NULL}},
      {"export @/conv.h5 methods --format tsv", {NULL}},
      {"export @/onestep.h5 local_error --format json", {NULL}},
      {"info --datasets @/onestep.h5", {NULL}},
  };
  out_of_memory_everywhere(cases, sizeof cases / sizeof *cases);
}

/* `run` of every study kind. */
Test(cli_leaks, out_of_memory_in_run, .init = make_test_dir, .fini = remove_dir, .timeout = 300) {
  static const oom_case cases[] = {
      {"run " DATA "order_claim.cfg -o @/oom.h5 --set T=1 -s h0=0.1 -j 1", {"orders", "convergence --methods all"}},
      {"run " DATA "small_ensemble.cfg -o @/oom.h5 -j 1",
       {"variance --methods all", "quantiles --methods all", "grid --stat final_var", "energy --method 1"}},
      {"run " DATA "ensemble_observables.cfg -o @/oom.h5 -j 1", {"series --observable q --ic 1", "observables"}},
      {"run " DATA "trajectory_particle.cfg -o @/oom.h5 -j 1", {"series --observable energy_error --method 1"}},
      /* nh_newmark has an adjoint (itself): the adjoint defects are measured */
      {"run " DATA "onestep_random.cfg -o @/oom.h5 -j 1 --set methods=[\"rk4\",\"nh_newmark(alpha=0.5)\"]",
       {"slopes", "local_error --methods all"}},
      {"run " DATA "work_precision_small.cfg -o @/oom.h5 -j 1", {"methods"}},
      /* the reference solution (rk8pd) in the tasks: along a trajectory, in an ensemble's runs, at
       * the last step of a convergence run (nh_rattle's multiplier error) */
      {"run " DATA "trajectory_multiplier.cfg -o @/oom.h5 -j 1 --set system=chaotic_particle --set initial=default",
       {"series --observable multiplier_error --method 1"}},
      {"run " DATA "ensemble_observables.cfg -o @/oom.h5 -j 1 --set T=2 --set observables=[\"multiplier_error\"]",
       {"series --observable multiplier_error --method 1 --ic 2"}},
      {"run " DATA "convergence_norms.cfg -o @/oom.h5 -j 1 --set methods=[\"rk4\",\"nh_rattle\"]",
       {"convergence --methods all"}},
  };
  out_of_memory_everywhere(cases, sizeof cases / sizeof *cases);
}

/* `run --resume` of an interrupted run (killed after `kill_after` journal records) with each
 * allocation failing in turn: it resumes, or says out of memory, and then the journal still holds
 * the interrupted run's records, unchanged (not refused as "another run's journal: remove it",
 * which would throw them away). A failure that returns (the spec's load, exit status 2) leaves
 * nothing allocated; a failed run leaves through _exit (bench/cli/cli_run.c), where a leak is moot. */
#define LEAKED 99 /* a child's exit status: its failed call left blocks allocated */
static void resume_out_of_memory(const char *kill_after) {
  static const char *const line = "run " DATA "small_ensemble.cfg -o @/oom.h5 -j 1";
  char resume[512], journal[256], messages[256];
  snprintf(resume, sizeof resume, "%s --resume", line);
  snprintf(journal, sizeof journal, "%s/oom.h5.journal", dir);
  snprintf(messages, sizeof messages, "%s/stderr.txt", dir);
  remove(journal);
  pid_t child = test_fork();
  cr_assert_geq(child, 0);
  if (child == 0) {
    setenv("NHBENCH_KILL_AFTER", kill_after, 1); /* studies/checkpoint.c */
    _exit(call(line));
  }
  int status = 0;
  cr_assert_eq(waitpid(child, &status, 0), child);
  cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "the run was to be killed after %s records",
            kill_after);
  size_t len = 0, now = 0;
  char *interrupted = test_file_bytes(journal, &len);
  cr_assert(interrupted, "no journal left by the interrupted run");
  int *fired = mmap(NULL, sizeof *fired, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  cr_assert_neq(fired, MAP_FAILED);
  int failures = 0;
  for (long k = 1;; k++) {
    FILE *f = fopen(journal, "wb");
    cr_assert(f && fwrite(interrupted, 1, len, f) == len && fclose(f) == 0, "cannot restore %s", journal);
    *fired = 0;
    if ((child = test_fork()) == 0) {
      const long blocks = test_live_blocks();
      test_fail_allocation = k, test_fail_fired = fired;
      const int rc = call_to(resume, NULL, messages);
      test_fail_allocation = 0;
      _exit(rc != 0 && blocks >= 0 && test_live_blocks() != blocks ? LEAKED : rc);
    }
    cr_assert_eq(waitpid(child, &status, 0), child);
    cr_assert(WIFEXITED(status), "allocation %ld failed: killed by signal %d", k, WTERMSIG(status));
    const int rc = WEXITSTATUS(status);
    cr_expect_neq(rc, LEAKED, "allocation %ld failed: the failed resume left blocks allocated", k);
    if (!*fired) {
      cr_expect_eq(rc, 0, "--resume without a failed allocation: exit status %d", rc);
      break;
    }
    failures++;
    if (rc == 0) continue;
    char said[4096];
    test_read_file(messages, said, sizeof said);
    cr_expect(strstr(said, "out of memory") || strstr(said, strerror(ENOMEM)),
              "allocation %ld failed, exit status %d, and it said: %s", k, rc, said);
    char *kept = test_file_bytes(journal, &now);
    cr_expect(kept && now >= len && memcmp(kept, interrupted, len) == 0,
              "allocation %ld failed (exit status %d): the interrupted run's journal is gone or changed", k, rc);
    free(kept);
  }
  cr_expect_gt(failures, 0);
  munmap(fired, sizeof *fired);
  free(interrupted);
}

/* Killed after 2 trajectories; and after all 35 (7 methods × 5 ICs) and the first method's
 * statistics record, longer than a trajectory's, so that the replay grows its buffer once more. */
Test(cli_leaks, out_of_memory_on_resume_keeps_the_journal, .init = make_test_dir, .fini = remove_dir,
     .timeout = 300) {
  resume_out_of_memory("2");
  resume_out_of_memory("36");
}
