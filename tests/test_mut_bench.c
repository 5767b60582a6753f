/* bench/: the nhbench command line, its output parsed and compared with the values put in (spec
 * settings given with --set), checks added for mutation robustness (issue 16). */
#include <criterion/criterion.h>
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/report.h"
#include "core/param.h"
#include "integrators/integrator.h"
#include "systems/system.h"
#include "tests/helpers.h"

#define DATA NHBENCH_SOURCE_DIR "/tests/data/"

static void expect_has(const char *out, const char *needle) {
  cr_expect(strstr(out, needle) != NULL, "'%s' not in:\n%s", needle, out);
}

/* test_results_file (tests/helpers.h) with this file's prefix. */
static void results_file(char *path, size_t len, const char *tag, const char *spec, const char *set) {
  test_results_file(path, len, "mut-bench", tag, spec, set);
}

/* `nhbench info PATH` into out; it must succeed. */
static void info_of(const char *path, char *out, size_t len) {
  char args[512];
  snprintf(args, sizeof args, "info %s", path);
  cr_assert_eq(test_run_nhbench(args, out, len), 0, "%s", out);
}

/* nhbench info on a convergence study shows the settings of the order fit as the spec set them:
 * the order tolerance, the reference tolerance, the fit points and the error floor, and the h
 * range from the largest to the smallest. */
Test(mut_bench, info_shows_the_fit_settings) {
  char path[128];
  static char out[1 << 16];
  results_file(path, sizeof path, "fit", "convergence_norms.cfg",
                   "--set order_tolerance=0.3 --set reference_tol=1e-12 --set fit_points=2 --set error_floor=1e-9 "
                   "--set 'h=[0.05, 0.1, 0.025]'");
  info_of(path, out, sizeof out);
  expect_has(out, "ok: |observed - expected| <= 0.3):");
  expect_has(out, "  reference    rk8pd, tolerance 1e-12 (given), estimated error ");
  expect_has(out, "  order fit    the 2 finest consecutive h whose error is finite and above 1e-09 (given: max(error_floor, "
                  "10 reference_error))\n");
  expect_has(out, "  h            3 values, 0.1 .. 0.025\n");
  remove(path);
}

/* An unknown table is refused with exit 2, the message and its hint and nothing else printed, on a file that has tables. */
Test(mut_bench, export_unknown_table_on_a_real_file) {
  char path[128], args[512];
  static char out[1 << 16];
  results_file(path, sizeof path, "table", "convergence_norms.cfg", "");
  snprintf(args, sizeof args, "export %s no_such_table", path);
  cr_expect_eq(test_run_nhbench(args, out, sizeof out), 2);
  const char *msg = "nhbench export: unknown table 'no_such_table'\n";
  int lines = 0;
  for (const char *p = out; *p; p++) lines += *p == '\n';
  cr_expect(strncmp(out, msg, strlen(msg)) == 0 && lines == 2, "output beyond the message and its hint:\n%s", out);
  remove(path);
}

/* nhbench list systems: every real or integer parameter of every system on its line, with its
 * default and range as the descriptor table has them. */
Test(mut_bench, list_systems_shows_every_parameter) {
  static char out[1 << 18];
  cr_assert_eq(test_run_nhbench("list systems", out, sizeof out), 0, "%s", out);
  int checked = 0;
  for (int i = 0; nh_system_types[i]; i++) {
    const nh_system_type *t = nh_system_types[i];
    for (int j = 0; j < t->nparams; j++) {
      const nh_param_desc *d = &t->params[j];
      if (d->kind == NH_PARAM_CHOICE) continue;
      char def[32], lo[32], hi[32], line[1024];
      nh_format_double(def, sizeof def, d->def);
      nh_format_double(lo, sizeof lo, d->min);
      nh_format_double(hi, sizeof hi, d->max);
      snprintf(line, sizeof line, "\n      %-8s %-4s default %s, in [%s, %s]: %s\n", d->name,
               d->kind == NH_PARAM_INT ? "int," : "real,", def, lo, hi, d->help);
      cr_expect(strstr(out, line) != NULL, "system %s: no line '%s'", t->name, line);
      checked++;
    }
  }
  cr_expect_gt(checked, 3, "only %d parameters", checked);
}

/* Runs `nhbench run DATA/SPEC -o FILE RUN_SET`, checks that `nhbench COMMAND FILE ...` (COMMAND's
 * "%s" is the file) succeeds, deletes the HDF5 object OBJECT and runs COMMAND again into out: the
 * damaged file's exit status (the file is removed). */
static int after_deleting(const char *spec, const char *run_set, const char *command, const char *object, char *out,
                          size_t len) {
  char path[128], args[512];
  results_file(path, sizeof path, "damaged", spec, run_set);
  snprintf(args, sizeof args, command, path);
  cr_assert_eq(test_run_nhbench(args, out, len), 0, "before deleting %s: %s", object, out);
  hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  cr_assert_geq(f, 0);
  cr_assert_geq(H5Ldelete(f, object, H5P_DEFAULT), 0);
  H5Fclose(f);
  const int status = test_run_nhbench(args, out, len);
  remove(path);
  return status;
}

/* An ensemble over given initial conditions whose q0 is gone: nhbench info says the file is bad
 * (exit 2) instead of printing a partial header. */
Test(mut_bench, info_refuses_an_ensemble_without_its_initial_conditions) {
  static char out[1 << 16];
  cr_expect_eq(after_deleting("ensemble_fixed.cfg", "--set T=0.4", "info %s", "/ensemble/q0", out, sizeof out), 2, "%s",
               out);
  expect_has(out, "q0");
}

/* nhbench_bench without an ENSEMBLE_SPEC runs studies/chaotic_ensemble.cfg (its --help says so),
 * relative to the working directory: the program's own path is no spec. */
Test(mut_bench, bench_default_ensemble_spec) {
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

/* A claims row on a string dataset (caveats: one note per method, "" for none) measures 1 where a
 * method has a note: caveat_forced.cfg runs nh_newmark at beta + beta2 = 1/2 (a caveat) and rk4
 * (none), so the mean over both methods is 1/2 and rk4's value 0; minus the claimed orders (2 and
 * 4) the mean is ((1 - 2) + (0 - 4))/2 = -5/2. */
Test(mut_bench, report_counts_caveats_per_method) {
  char dir[128], path[256], args[1024];
  static char out[1 << 16];
  snprintf(dir, sizeof dir, "/tmp/nhbench-mut-bench-%d-report", (int)getpid());
  mkdir(dir, 0777);
  snprintf(args, sizeof args, "run " DATA "caveat_forced.cfg -o %s/cav.h5", dir);
  cr_assert_eq(test_run_nhbench(args, out, sizeof out), 0, "%s", out);
  snprintf(path, sizeof path, "%s/c.claims", dir);
  test_write_file(path, "spec = \"mut\"; title = \"caveats\";\nitems = ( { item = \"C1\"; source = \"[test]\"; claim = \"caveats\";\n"
        "  rows = ( { quantity = \"mean\"; file = \"cav\"; data = \"caveats\"; reduce = \"mean\"; expect = \"~ 0.5 abs 0.01\"; },\n"
        "    { quantity = \"minus\"; file = \"cav\"; data = \"caveats\"; minus = \"order_claimed\"; reduce = \"mean\";"
        " expect = \"~ -2.5 abs 0.01\"; },\n"
        "    { quantity = \"rk4\"; file = \"cav\"; data = \"caveats\"; at = { method = \"rk4\"; }; expect = \"in [-0.1, 0.1]\"; } ); } );\n");
  snprintf(args, sizeof args, "report --strict -r %s -o %s %s", dir, dir, path);
  cr_expect_eq(test_run_nhbench(args, out, sizeof out), 0, "%s", out);
  expect_has(out, "3 pass, 0 fail, 0 not-verified");
  snprintf(args, sizeof args, "rm -rf %s", dir);
  cr_expect_eq(system(args), 0);
}

/* The text from "\n  NAME  (" (a composition: "\n  NAME(METHOD)") to the next entry of
 * `nhbench list methods` (NULL if absent). */
static const char *entry_of(const char *out, const char *name, int composition, size_t *len) {
  char head[128];
  snprintf(head, sizeof head, composition ? "\n  %s(METHOD)\n" : "\n  %s  (", name);
  const char *p = strstr(out, head);
  if (!p) return NULL;
  const char *next = strstr(p + strlen(head), "\n  ");
  while (next && next[3] == ' ') next = strstr(next + 1, "\n  "); /* deeper lines start with 4+ spaces */
  *len = next ? (size_t)(next - p) : strlen(p);
  return p;
}

/* nhbench list methods: each method's entry says what it defines for the observables exactly
 * when its table defines it (compositions over a base method say nothing of their own). */
Test(mut_bench, list_methods_shows_what_each_method_defines) {
  static char out[1 << 20];
  cr_assert_eq(test_run_nhbench("list methods", out, sizeof out), 0, "%s", out);
  int newton = 0;
  for (int i = 0; nh_integrator_types[i]; i++) {
    const nh_integrator_type *t = nh_integrator_types[i];
    size_t len = 0;
    const char *e = entry_of(out, t->name, t->takes_base, &len);
    cr_assert_not_null(e, "no entry for %s", t->name);
    char entry[16384];
    snprintf(entry, sizeof entry, "%.*s", (int)(len < sizeof entry ? len : sizeof entry - 1), e);
    const int own = !t->takes_base;
    cr_expect_eq(strstr(entry, "\n    Newton system: analytic Jacobian") != NULL, own && t->newton_size != NULL,
                 "%s: Newton system line", t->name);
    cr_expect_eq(strstr(entry, "\n    discrete action: defined") != NULL, own && t->discrete_action != NULL,
                 "%s: discrete action line", t->name);
    cr_expect_eq(strstr(entry, "\n    multiplier: approximates") != NULL, own && t->lambda_time != 0,
                 "%s: multiplier line", t->name);
    newton += own && t->newton_size != NULL;
  }
  cr_expect_gt(newton, 0, "no method exposes its Newton system");
}

/* The first line of out that starts with prefix (NULL if none). */
static const char *line_starting(const char *out, const char *prefix) {
  for (const char *l = out; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
    if (strncmp(l, prefix, strlen(prefix)) == 0) return l;
  return NULL;
}

/* nhbench info's header and cost table on caveat_forced.cfg run at T = 0.2: the values come from
 * the spec and the command (T, overrides, the spec's path, h = 0.1 and 0.05, 2 methods), the
 * caveat of nh_newmark at beta + beta2 = 1/2, and rk4's cost at the finest h: T/h = 4 steps of 4
 * right-hand sides each, no Newton iterations; the claimed orders are 2 and 4. */
Test(mut_bench, info_header_and_cost_by_hand) {
  char path[128];
  static char out[1 << 16];
  results_file(path, sizeof path, "cav", "caveat_forced.cfg", "--set T=0.2");
  info_of(path, out, sizeof out);
  expect_has(out, " convergence study\n  system       chaotic_particle()\n  T            0.2\n");
  expect_has(out, "\n  spec         " DATA "caveat_forced.cfg\n  overrides    T=0.2\n");
  expect_has(out, "\n  CAVEAT       method 0 nh_newmark(beta=0.25,beta2=0.25,alpha=0.5,");
  expect_has(out, "\n  h            2 values, 0.1 .. 0.05\n");
  expect_has(out, "\n  methods      2\n");
  expect_has(out, "\nCost at the finest h = 0.05; max resid: max over all h of max_t |mu(q).v|; wall: all h:\n"
                  "   #  max resid        steps    rhs evals   Newton its constr evals   wall[s]  method\n   0 ");
  const char *cost = strstr(out, "\nCost at the finest");
  cr_assert_not_null(cost);
  const char *rk4 = line_starting(cost, "   1 ");
  cr_assert_not_null(rk4, "no cost row of method 1:\n%s", cost);
  char resid[32], name[64];
  unsigned long long steps, rhs, newton, constr;
  double wall;
  cr_assert_eq(sscanf(rk4, "%*d %31s %llu %llu %llu %llu %lf %63s", resid, &steps, &rhs, &newton, &constr, &wall, name), 7,
               "%.200s", rk4);
  cr_expect(steps == 4 && rhs == 16 && newton == 0, "rk4: %llu steps, %llu rhs, %llu Newton", steps, rhs, newton);
  cr_expect_str_eq(name, "rk4");
  /* The order table: method 0 expected 2, method 1 expected 4. */
  const char *orders = strstr(out, "\nObserved order");
  cr_assert_not_null(orders);
  int m, expected;
  const char *row = line_starting(orders, "   0 ");
  cr_expect(row && sscanf(row, "%d %d", &m, &expected) == 2 && expected == 2, "row 0: %.80s", row ? row : "");
  row = line_starting(orders, "   1 ");
  cr_expect(row && sscanf(row, "%d %d", &m, &expected) == 2 && expected == 4, "row 1: %.80s", row ? row : "");
  remove(path);
}

/* nhbench info on a trajectory study lists exactly the spec's step sizes, h = [0.1, 0.05]. */
Test(mut_bench, info_trajectory_lists_its_h) {
  char path[128];
  static char out[1 << 16];
  results_file(path, sizeof path, "traj", "trajectory_particle.cfg", "");
  info_of(path, out, sizeof out);
  expect_has(out, "\n  h            0.1 0.05\n  reference    exact\n");
  remove(path);
}

/* nhbench info's grid of small_ensemble.cfg: the header lists beta2 = 0, 0.1, 0.4 and nothing
 * more; one row per beta (0, 0.1) with three cells, (0.1, 0.4) skipped (beta + beta2 = 1/2). */
Test(mut_bench, info_grid_rows_and_columns) {
  char path[128];
  static char out[1 << 16];
  results_file(path, sizeof path, "grid", "small_ensemble.cfg", "--set T=0.4");
  info_of(path, out, sizeof out);
  char want[256];
  snprintf(want, sizeof want, "\n  beta \\ beta2 %9.4g %9.4g %9.4g\n", 0.0, 0.1, 0.4);
  expect_has(out, want);
  const char *g = strstr(out, want);
  cr_assert_not_null(g);
  char row0[256], row1[256];
  cr_assert_eq(sscanf(g + strlen(want), "%255[^\n]\n%255[^\n]", row0, row1), 2);
  double b0, b1;
  char c[3][32];
  cr_expect(sscanf(row0, "%lf %31s %31s %31s", &b0, c[0], c[1], c[2]) == 4 && b0 == 0, "row 0: %s", row0);
  cr_expect(sscanf(row1, "%lf %31s %31s %31s", &b1, c[0], c[1], c[2]) == 4 && b1 == 0.1, "row 1: %s", row1);
  cr_expect_str_eq(c[2], "skip", "(0.1, 0.4) is not run");
  remove(path);
}

/* export slopes on a one-step file missing one of its columns (summary/cond_max) is a bad file:
 * exit 2, no table. */
Test(mut_bench, export_slopes_of_a_file_missing_a_column) {
  static char out[1 << 16];
  cr_expect_eq(after_deleting("onestep_random.cfg", "", "export %s slopes", "/onestep/summary/cond_max", out, sizeof out),
               2, "%s", out);
  cr_expect(strstr(out, "# index") == NULL, "a table was printed:\n%s", out);
}

/* A claims file is read by libconfig too: an integer it would wrap to 32 bits is refused at its
 * line; the same file with the L suffix gets past that check (and fails later, on its missing
 * items). */
Test(mut_bench, claims_integer_beyond_32_bits) {
  char path[128], err[1024], want[512];
  snprintf(path, sizeof path, "/tmp/nhbench-mutclaims-%d.cfg", (int)getpid());
  for (int suffix = 0; suffix < 2; suffix++) {
    char text[128];
    snprintf(text, sizeof text, "spec = \"x.cfg\";\n\nextra = 4294967296%s;\n", suffix ? "L" : "");
    test_write_file(path, text);
    nh_claims c;
    err[0] = '\0';
    cr_expect_eq(nh_claims_load(path, &c, err, sizeof err), -1);
    snprintf(want, sizeof want, "%s:3: the integer 4294967296 does not fit in 32 bits", path);
    if (suffix) cr_expect(strstr(err, "does not fit") == NULL, "%s", err);
    else cr_expect(strncmp(err, want, strlen(want)) == 0, "%s", err);
    nh_claims_free(&c);
  }
  remove(path);
}

/* A claims file that fails after its items are allocated: nh_claims_load frees them itself, and
 * nh_claims_free may still be called on the result (as every caller does), again and again,
 * without freeing anything twice. */
Test(mut_bench, claims_free_after_a_failed_load) {
  char path[128], err[1024] = "";
  snprintf(path, sizeof path, "/tmp/nhbench-mutclaims2-%d.cfg", (int)getpid());
  test_write_file(path, "spec = \"s\";\nitems = (\n { item = \"1\"; claim = \"c\";\n   rows = ( { quantity = \"q\"; file = \"f\"; data = \"d\";\n"
        "     expect = \"in [2, 1]\"; } ); }\n);\n");
  nh_claims c;
  cr_expect_eq(nh_claims_load(path, &c, err, sizeof err), -1);
  cr_expect(strstr(err, ":5: bad expectation 'in [2, 1]'") != NULL, "%s", err);
  cr_expect(c.items == NULL && c.nitems == 0, "a failed load leaves %d items at %p", c.nitems, (void *)c.items);
  nh_claims_free(&c);
  nh_claims_free(&c);
  remove(path);
}
