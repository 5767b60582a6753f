/* The nhbench command line (bench/cli/nhbench.c, bench/cli/cli_*.c): every command's --help, its errors
 * and exit codes (0 success, 1 a failed run or order check, 2 bad usage or input), and `info` and
 * `export` numbers checked against values this file computes itself: an RK4 run of the free
 * nonholonomic particle stepped here through the library, against the closed-form solution
 * written out below (spec/discretization.md §3.2), not against the tool's earlier output. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <hdf5.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>


#include "bench/claims/report.h"
#include "core/param.h"
#include "integrators/integrator.h"
#include "systems/system.h"
#include "tests/helpers.h"

#define DATA NHBENCH_SOURCE_DIR "/tests/data/"

/* ---- running nhbench ------------------------------------------------------------------------ */

typedef struct {
  int rc;    /* exit status, -1 if it did not exit */
  char *out; /* stdout, whole */
  char *err; /* stderr, whole */
} cli_result;

/* The whole of the file at path into *buf (grown as needed, never truncated), then removes it. */
static void slurp(const char *path, char **buf) {
  FILE *f = fopen(path, "r");
  size_t n = 0, cap = 4096;
  *buf = realloc(*buf, cap);
  cr_assert(*buf);
  for (size_t got; f && (got = fread(*buf + n, 1, cap - 1 - n, f)) > 0;) {
    n += got;
    if (n + 1 == cap) {
      *buf = realloc(*buf, cap *= 2);
      cr_assert(*buf);
    }
  }
  (*buf)[n] = '\0';
  if (f) fclose(f);
  remove(path);
}

/* Runs `nhbench ARGS` with stdout and stderr captured apart. */
static cli_result *nhb(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static cli_result *nhb(const char *fmt, ...) {
  static cli_result r;
  char args[2048], cmd[4096], o[128], e[128];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(args, sizeof args, fmt, ap);
  va_end(ap);
  snprintf(o, sizeof o, "/tmp/nhbench-cli-%d.out", (int)getpid());
  snprintf(e, sizeof e, "/tmp/nhbench-cli-%d.err", (int)getpid());
  snprintf(cmd, sizeof cmd, "%s %s >%s 2>%s", NHBENCH_EXE, args, o, e);
  int status = system(cmd);
  r.rc = status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  slurp(o, &r.out);
  slurp(e, &r.err);
  return &r;
}

#define expect_has(text, needle) cr_expect(strstr((text), (needle)) != NULL, "lacks '%s':\n%s", (needle), (text))

/* A scratch path for this test process. */
static const char *scratch(char *buf, size_t len, const char *name) {
  snprintf(buf, len, "/tmp/nhbench-cli-%d-%s", (int)getpid(), name);
  return buf;
}

/* A scratch spec file NAME holding text; its path in buf. */
static const char *scratch_spec(char *buf, size_t len, const char *name, const char *text) {
  scratch(buf, len, name);
  FILE *s = fopen(buf, "w");
  cr_assert(s, "cannot write %s", buf);
  fputs(text, s);
  fclose(s);
  return buf;
}

/* ---- help, version, usage errors ------------------------------------------------------------ */

Test(cli, help_of_every_command) {
  static const char *const cmds[] = {"run", "list", "info", "export", "report"};
  cli_result *r = nhb("--help");
  cr_expect_eq(r->rc, 0);
  expect_has(r->out, "usage: nhbench");
  cr_expect_str_empty(r->err);
  /* Every command is listed in the top-level usage, in the table's order. */
  const char *at = r->out;
  for (int i = 0; i < 5; i++) {
    char line[32];
    snprintf(line, sizeof line, "\n  %s ", cmds[i]);
    const char *found = strstr(at, line);
    cr_expect(found != NULL, "'%s' is not listed (in order) in nhbench --help:\n%s", cmds[i], r->out);
    if (found) at = found;
  }
  for (int i = 0; i < 5; i++) {
    char want[64];
    snprintf(want, sizeof want, "usage: nhbench %s", cmds[i]);
    for (int form = 0; form < 3; form++) {
      r = form == 0 ? nhb("%s --help", cmds[i]) : form == 1 ? nhb("%s -h", cmds[i]) : nhb("help %s", cmds[i]);
      cr_expect_eq(r->rc, 0, "%s form %d: exit %d", cmds[i], form, r->rc);
      cr_expect(strncmp(r->out, want, strlen(want)) == 0, "%s form %d: stdout is\n%s", cmds[i], form, r->out);
      cr_expect_str_empty(r->err, "%s form %d wrote on stderr:\n%s", cmds[i], form, r->err);
    }
  }
}

Test(cli, version) {
  cli_result *r = nhb("--version");
  cr_expect_eq(r->rc, 0);
  cr_expect(strncmp(r->out, "nhbench ", 8) == 0 && strlen(r->out) > 9 && r->out[8] != '\n', "stdout: '%s'", r->out);
  r = nhb("-V");
  cr_expect_eq(r->rc, 0);
  expect_has(r->out, "nhbench ");
}

Test(cli, no_command_and_unknown_command) {
  cli_result *r = nhb("%s", "");
  cr_expect_eq(r->rc, 2);
  expect_has(r->err, "usage: nhbench");
  r = nhb("frobnicate");
  cr_expect_eq(r->rc, 2);
  expect_has(r->err, "nhbench: unknown command 'frobnicate'");
  r = nhb("help frobnicate");
  cr_expect_eq(r->rc, 2);
  expect_has(r->err, "unknown command 'frobnicate'");
  r = nhb("--frobnicate");
  cr_expect_eq(r->rc, 2);
  expect_has(r->err, "nhbench: unknown option '--frobnicate'");
}

/* `nhbench help` alone is the usage on stdout (exit 0); a second argument is refused by name. */
Test(cli, help_alone_and_with_two_commands) {
  cli_result *r = nhb("help");
  cr_expect_eq(r->rc, 0, "%s", r->err);
  expect_has(r->out, "usage: nhbench [--help | --version] COMMAND");
  cr_expect_str_empty(r->err);
  r = nhb("help run export");
  cr_expect_eq(r->rc, 2);
  expect_has(r->err, "'export'");
  expect_has(r->err, "usage: nhbench");
  cr_expect_str_empty(r->out);
}

/* An unknown option: exit 2, "nhbench CMD: unknown option", the usage on stderr, nothing on stdout. */
Test(cli, unknown_option_of_every_command) {
  static const char *const cmds[] = {"run " DATA "trajectory_particle.cfg", "list", "info x.h5", "export x.h5 study"};
  static const char *const names[] = {"run", "list", "info", "export"};
  for (int i = 0; i < 4; i++) {
    cli_result *r = nhb("%s --bogus", cmds[i]);
    char want[64], usage[64];
    snprintf(want, sizeof want, "nhbench %s: unknown option '--bogus'", names[i]);
    snprintf(usage, sizeof usage, "usage: nhbench %s", names[i]);
    cr_expect_eq(r->rc, 2, "%s: exit %d", names[i], r->rc);
    expect_has(r->err, want);
    expect_has(r->err, usage);
    cr_expect_str_empty(r->out);
  }
  cli_result *r = nhb("run -x " DATA "trajectory_particle.cfg");
  cr_expect_eq(r->rc, 2);
  expect_has(r->err, "nhbench run: unknown option '-x'");
}

Test(cli, missing_arguments) {
  char out[256];
  scratch(out, sizeof out, "never.h5");
  cli_result *r = nhb("run");
  cr_expect_eq(r->rc, 2);
  expect_has(r->err, "no SPEC.cfg");
  r = nhb("run " DATA "trajectory_particle.cfg -o");
  cr_expect_eq(r->rc, 2);
  expect_has(r->err, "nhbench run: option '-o' needs an argument");
  r = nhb("run " DATA "trajectory_particle.cfg --output=%s --set", out);
  cr_expect_eq(r->rc, 2);
  expect_has(r->err, "option '--set' needs an argument");
  r = nhb("run " DATA "trajectory_particle.cfg -o %s --threads 0", out);
  cr_expect_eq(r->rc, 2);
  expect_has(r->err, "--threads '0'");
  r = nhb("run " DATA "trajectory_particle.cfg -o %s --threads=", out);
  cr_expect_eq(r->rc, 2, "an empty thread count: %s", r->err);
  expect_has(r->err, "--threads ''");
  r = nhb("run a.cfg b.cfg");
  cr_expect_eq(r->rc, 2);
  expect_has(r->err, "unexpected argument 'b.cfg'");
  cr_expect(access(out, F_OK) != 0, "a bad command line wrote %s", out);
  r = nhb("info");
  cr_expect_eq(r->rc, 2);
  expect_has(r->err, "no FILE.h5");
  r = nhb("export x.h5");
  cr_expect_eq(r->rc, 2);
  expect_has(r->err, "no TABLE");
  r = nhb("export x.h5 convergence --methods");
  cr_expect_eq(r->rc, 2);
  expect_has(r->err, "option '--methods' needs an argument");
  r = nhb("export x.h5 series --method x");
  cr_expect_eq(r->rc, 2);
  expect_has(r->err, "--method needs a whole number");
  r = nhb("export x.h5 no_such_table");
  cr_expect_eq(r->rc, 2);
  expect_has(r->err, "unknown table 'no_such_table'");
  r = nhb("export x.h5 orders --relative");
  cr_expect_eq(r->rc, 2);
  expect_has(r->err, "table 'orders' takes no option --relative");
}

/* ---- list ----------------------------------------------------------------------------------- */

Test(cli, list) {
  cli_result *r = nhb("list systems");
  cr_expect_eq(r->rc, 0);
  for (int i = 0; nh_system_types[i]; i++) expect_has(r->out, nh_system_types[i]->name);
  r = nhb("list methods");
  cr_expect_eq(r->rc, 0);
  for (int i = 0; nh_integrator_types[i]; i++) expect_has(r->out, nh_integrator_types[i]->name);
  r = nhb("list observables");
  cr_expect_eq(r->rc, 0);
  expect_has(r->out, "energy_error");
  r = nhb("list");
  cr_expect_eq(r->rc, 0);
  /* the three lists in order, a blank line between */
  const char *m = strstr(r->out, "\n\nmethods:\n"), *o = strstr(r->out, "\n\nobservables (study setting");
  cr_expect(strncmp(r->out, "systems:\n", 9) == 0 && m && o && m < o, "%.300s", r->out);
  r = nhb("list systems particle");
  cr_expect_eq(r->rc, 0);
  expect_has(r->out, "  particle  (n = 3, k = 1, exact solution)");
  cr_expect(strstr(r->out, "chaotic_particle") == NULL, "NAME did not filter:\n%s", r->out);
  r = nhb("list planets");
  cr_expect_eq(r->rc, 2);
  expect_has(r->err, "nhbench list: unknown list 'planets'");
  r = nhb("list methods rk5");
  cr_expect_eq(r->rc, 2);
  expect_has(r->err, "no methods named 'rk5'");
  r = nhb("list systems a b");
  cr_expect_eq(r->rc, 2);
}

/* Named choices are listed by name with their default, and the deprecated spellings with theirs
 * (issue 9). */
Test(cli, list_choices_and_deprecated_spellings) {
  static const char *const expect[][2] = {
      {"nh_newmark", "constraint one of point|average, default point: discrete constraint: point = mu at "
                     "(1-alpha) q_k + alpha q_{k+1}, spec/newmark.md (14)"},
      {"nh_newmark", "allow_ill_conditioned int, default 0, in [0, 1]"},
      {"nh_newmark", "deprecated: disc=15, read as constraint=average\n"},
      {"nh_newmark", "deprecated: force=1, read as allow_ill_conditioned=1\n"},
      {"dla", "deprecated: disc=14, read as constraint=point\n"},
      {"la1", "forcing  one of ends|midpoint, default ends: "},
      {"la1", "deprecated: force=1, read as forcing=midpoint\n"},
  };
  for (size_t i = 0; i < sizeof expect / sizeof expect[0]; i++) {
    cli_result *r = nhb("list methods %s", expect[i][0]);
    cr_expect_eq(r->rc, 0, "list methods %s: %s", expect[i][0], r->err);
    expect_has(r->out, expect[i][1]);
  }
  cli_result *r = nhb("list methods rk4");
  cr_expect(strstr(r->out, "deprecated") == NULL, "rk4 has no old spellings:\n%s", r->out);
}

/* ---- run, info, export on files ------------------------------------------------------------- */

/* The free particle's closed form (spec/discretization.md §3.2), written out here apart from
 * systems/particle.c: y = y0 + w t, ẋ = c/√(1+y²) with c = ẋ0 √(1+y0²), x = x0 + (c/w)(asinh y −
 * asinh y0), z = z0 + (c/w)(√(1+y²) − √(1+y0²)), ż = y ẋ. */
static void particle_exact(const double q0[3], const double v0[3], double t, double q[3], double v[3]) {
  const double w = v0[1], y = q0[1] + w * t, c = v0[0] * sqrt(1 + q0[1] * q0[1]);
  q[1] = y, v[1] = w;
  v[0] = c / sqrt(1 + y * y), v[2] = y * v[0];
  q[0] = q0[0] + (c / w) * (asinh(y) - asinh(q0[1]));
  q[2] = q0[2] + (c / w) * (sqrt(1 + y * y) - sqrt(1 + q0[1] * q0[1]));
}

/* Max-norm error over (q, v) at T of rk4 from the "discretization" preset, stepped here. */
static double rk4_error(double T, double h) {
  static const double q0[3] = {0, 0.3, 0}, v0[3] = {1, 0.8, 0.3}; /* the preset, spec §3.2 */
  nh_system sys = test_system("particle", "omega2=0");
  nh_method *m = test_method("rk4");
  nh_state x = {0}, y;
  memcpy(x.q, q0, sizeof q0), memcpy(x.v, v0, sizeof v0);
  nh_cost cost = {0};
  const long n = lround(T / h);
  for (long k = 0; k < n; k++) {
    cr_assert_eq(nh_method_step(m, &sys, &x, &y, h, &cost), NH_STEP_OK);
    x = y;
  }
  nh_method_free(m);
  double q[3], v[3], e = 0;
  particle_exact(q0, v0, T, q, v);
  for (int i = 0; i < 3; i++) e = fmax(e, fmax(fabs(x.q[i] - q[i]), fabs(x.v[i] - v[i])));
  return e;
}

/* Least-squares slope of log e against log h. */
static double ls_slope(int n, const double *h, const double *e) {
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (int i = 0; i < n; i++) {
    const double a = log(h[i]), b = log(e[i]);
    sx += a, sy += b, sxx += a * a, sxy += a * b;
  }
  return (n * sxy - sx * sy) / (n * sxx - sx * sx);
}

static const double conv_h[3] = {0.2, 0.1, 0.05};

/* A three-step-size rk4 convergence study of the free particle, T = 2. */
static void write_conv_spec(const char *path) {
  FILE *f = fopen(path, "w");
  cr_assert(f, "cannot write %s", path);
  fprintf(f, "study = \"convergence\";\nsystem = \"particle\";\ninitial = \"discretization\";\nT = 2.0;\n"
             "h = [0.2, 0.1, 0.05];\nmethods = [\"rk4\"];\n");
  fclose(f);
}

/* The err column of `export FILE convergence` for method 0, by h. */
static void exported_errors(const char *file, double err[3]) {
  cli_result *r = nhb("export %s convergence", file);
  cr_assert_eq(r->rc, 0, "export failed: %s", r->err);
  int found = 0;
  for (char *line = strtok(r->out, "\n"); line; line = strtok(NULL, "\n")) {
    double h, e;
    if (line[0] == '#' || sscanf(line, "%lf %lf", &h, &e) != 2) continue;
    for (int i = 0; i < 3; i++)
      if (h == conv_h[i]) err[i] = e, found++;
  }
  cr_assert_eq(found, 3, "expected 3 rows for h = 0.2, 0.1, 0.05");
}

static void expect_close(double got, double want, double rel, const char *what) {
  cr_expect(fabs(got - want) <= rel * fabs(want), "%s: %.17g, computed independently %.17g", what, got, want);
}

/* run, then export and info against RK4 errors stepped here; --set T=1 changes them to T = 1's. */
Test(cli, run_export_info_against_independent_errors, .timeout = 30) {
  char spec[256], file[256], file1[256];
  scratch(spec, sizeof spec, "conv.cfg");
  scratch(file, sizeof file, "conv.h5");
  scratch(file1, sizeof file1, "conv_T1.h5");
  write_conv_spec(spec);
  cli_result *r = nhb("run %s --output %s --threads 1", spec, file);
  cr_assert_eq(r->rc, 0, "run failed:\n%s", r->err);
  cr_assert(access(file, F_OK) == 0);

  double e2[3], mine2[3], e1[3], mine1[3];
  exported_errors(file, e2);
  for (int i = 0; i < 3; i++) {
    mine2[i] = rk4_error(2.0, conv_h[i]);
    /* Same steps, two codes for the exact solution: agreement to round-off of a ~1e-6 error. */
    expect_close(e2[i], mine2[i], 1e-8, "err at T = 2");
  }
  const double slope = ls_slope(3, conv_h, mine2);
  cr_expect(fabs(slope - 4) < 0.3, "negative control: rk4's slope here is %g, not near 4", slope);

  r = nhb("export %s orders", file);
  cr_assert_eq(r->rc, 0);
  int index, claimed;
  double observed;
  char *row = strchr(r->out, '\n');
  cr_assert(row && sscanf(row + 1, "%d %d %lf", &index, &claimed, &observed) == 3, "orders:\n%s", r->out);
  cr_expect_eq(claimed, 4);
  expect_close(observed, slope, 1e-8, "observed order");

  r = nhb("info %s", file);
  cr_assert_eq(r->rc, 0, "%s", r->err);
  expect_has(r->out, "convergence study");
  char want[64];
  snprintf(want, sizeof want, "%.3f +- ", slope);
  expect_has(r->out, want); /* the observed order, to the 3 decimals info prints */
  snprintf(want, sizeof want, " %.2e ", mine2[2]);
  expect_has(r->out, want); /* err(h_min) at h = 0.05 */

  /* --set T=1: the file says T = 1 and its errors are those of T = 1, not of T = 2. */
  r = nhb("run %s -o %s --set T=1", spec, file1);
  cr_assert_eq(r->rc, 0, "run --set failed:\n%s", r->err);
  r = nhb("export %s attr T", file1);
  cr_expect_eq(r->rc, 0);
  cr_expect_str_eq(r->out, "1\n");
  exported_errors(file1, e1);
  for (int i = 0; i < 3; i++) {
    mine1[i] = rk4_error(1.0, conv_h[i]);
    expect_close(e1[i], mine1[i], 1e-8, "err at T = 1");
    cr_expect(fabs(mine1[i] - mine2[i]) > 1e-3 * mine2[i], "T = 1 and T = 2 errors do not differ");
  }
  remove(spec), remove(file), remove(file1);
}

Test(cli, run_bad_set_and_failed_run) {
  char file[256];
  scratch(file, sizeof file, "traj.h5");
  cli_result *r = nhb("run " DATA "trajectory_particle.cfg -o %s --set no_such_setting=3", file);
  cr_expect_eq(r->rc, 2, "%s", r->err);
  expect_has(r->err, "no_such_setting");
  r = nhb("run " DATA "trajectory_particle.cfg -o %s --set T=abc", file);
  cr_expect_eq(r->rc, 2, "%s", r->err);
  expect_has(r->err, "--set T: 'T' must be a number, not \"abc\"\n");
  r = nhb("run " DATA "trajectory_particle.cfg -o %s --set T", file);
  cr_expect_eq(r->rc, 2, "%s", r->err);
  expect_has(r->err, "--set 'T': expected PATH=VALUE");
  cr_expect(access(file, F_OK) != 0, "a refused --set wrote %s", file);
  /* An output that cannot be written is bad input, refused with 2 before computing: a directory
   * that cannot be created, one that takes no files (/proc), and a directory as the output. */
  r = nhb("run " DATA "trajectory_particle.cfg -o /proc/nonexistent-dir/x.h5");
  cr_expect_eq(r->rc, 2, "%s", r->err);
  expect_has(r->err, "cannot create the output directory /proc/nonexistent-dir");
  cr_expect(strstr(r->err, "trajectory study of") == NULL, "nothing was computed: %s", r->err);
  r = nhb("run " DATA "trajectory_particle.cfg -o /proc/x.h5");
  cr_expect_eq(r->rc, 2, "%s", r->err);
  expect_has(r->err, "cannot create files in the output directory /proc: ");
  cr_expect(strstr(r->err, "trajectory study of") == NULL, "nothing was computed: %s", r->err);
  r = nhb("run " DATA "trajectory_particle.cfg -o /tmp");
  cr_expect_eq(r->rc, 2, "%s", r->err);
  expect_has(r->err, "the output /tmp is a directory");
  /* A pipe (like /dev/null, which as root the rename onto it would replace) is refused and stays. */
  scratch(file, sizeof file, "pipe");
  cr_assert_eq(mkfifo(file, 0600), 0, "mkfifo %s", file);
  r = nhb("run " DATA "trajectory_particle.cfg -o %s", file);
  cr_expect_eq(r->rc, 2, "%s", r->err);
  expect_has(r->err, "is not a regular file (a device, pipe or socket); give a file name");
  cr_expect(strstr(r->err, "trajectory study of") == NULL, "nothing was computed: %s", r->err);
  struct stat sb;
  cr_expect(stat(file, &sb) == 0 && S_ISFIFO(sb.st_mode), "%s is no longer the pipe", file);
  remove(file);
}

/* Output directories are created as needed; `run -` reads the spec from standard input; an
 * endless input (/dev/zero) is refused instead of read until memory runs out (issues 12, 13). The
 * spec spells a parameter the old way (issue 9): it runs, says once on stderr what the new spelling
 * is, and the results file names the method the new way. */
Test(cli, run_creates_directories_reads_stdin_and_refuses_endless_input) {
  char dir[256], file[320];
  scratch(dir, sizeof dir, "made/deeper");
  snprintf(file, sizeof file, "%s/x.h5", dir);
  cli_result *r = nhb("run - -o %s < " DATA "deprecated_spelling.cfg", file);
  cr_expect_eq(r->rc, 0, "%s", r->err);
  expect_has(r->err, "nhbench: deprecated: nh_newmark(disc=15) is now constraint=average\n");
  const char *note = strstr(r->err, "deprecated:");
  cr_expect(note && !strstr(note + 1, "deprecated:"), "the note is printed once:\n%s", r->err);
  cr_expect_eq(access(file, F_OK), 0, "%s was not written", file);
  r = nhb("export %s study", file);
  cr_expect_eq(r->rc, 0, "%s", r->err);
  expect_has(r->out, "trajectory");
  r = nhb("export %s methods", file);
  cr_expect_str_eq(r->out,
                   "# index name label (label: to the end of the line)\n0 "
                   "nh_newmark(beta=0,beta2=0,alpha=0.5,constraint=average) nh\\_newmark(constraint=average)\n");
  remove(file), rmdir(dir);
  scratch(dir, sizeof dir, "made");
  rmdir(dir);
  r = nhb("run /dev/zero -o %s", file);
  cr_expect_eq(r->rc, 2, "%s", r->err);
  expect_has(r->err, "/dev/zero: cannot read: File too large");
}

/* Large datasets are stored chunked with shuffle + deflate, small ones contiguous (issue 13), and
 * a compressed dataset reads back through export: every sample of the row, finite and of the
 * size an energy error of nh_newmark at h = 0.2 has (the filters are lossless; the round-trip
 * tests of tests/results/test_results.c compare values bit for bit). */
static int dataset_filters(const char *file, const char *path, H5D_layout_t *layout) {
  hid_t f = H5Fopen(file, H5F_ACC_RDONLY, H5P_DEFAULT);
  hid_t d = f < 0 ? -1 : H5Dopen2(f, path, H5P_DEFAULT);
  hid_t p = d < 0 ? -1 : H5Dget_create_plist(d);
  int n = p < 0 ? -1 : H5Pget_nfilters(p);
  *layout = p < 0 ? H5D_LAYOUT_ERROR : H5Pget_layout(p);
  if (p >= 0) H5Pclose(p);
  if (d >= 0) H5Dclose(d);
  if (f >= 0) H5Fclose(f);
  return n;
}

Test(cli, large_datasets_compressed_small_ones_contiguous) {
  char spec[256], file[256];
  scratch(file, sizeof file, "big.h5");
  /* 2 methods x 3 ICs x 2001 samples = 12006 values of dE: compressed; t (2001) is not. */
  scratch_spec(spec, sizeof spec, "big.cfg",
               "study = \"ensemble\"; system = \"chaotic_particle\"; T = 400.0; h = 0.2; sample_every = 1;\n"
        "ensemble = { count = 3; energy = 1.535; seed = 7; };\n"
        "methods = [\"rk4\", \"nh_newmark(alpha=0.5)\"];\n");
  cli_result *r = nhb("run %s -o %s", spec, file);
  cr_assert_eq(r->rc, 0, "%s", r->err);
  H5D_layout_t layout;
  cr_expect_eq(dataset_filters(file, "/ensemble/dE", &layout), 2, "dE: shuffle + deflate");
  cr_expect_eq(layout, H5D_CHUNKED);
  cr_expect_eq(dataset_filters(file, "/ensemble/t", &layout), 0, "t: no filter");
  cr_expect_eq(layout, H5D_CONTIGUOUS);
  /* Read back through the filters: E(t) − E0 of each exported row equals dE's row. */
  r = nhb("export %s energy --method 1 --ics 2:3", file);
  cr_expect_eq(r->rc, 0, "%s", r->err);
  int rows = 0;
  for (const char *line = r->out; *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : line + strlen(line)) {
    double t, dE;
    if (*line != '#' && sscanf(line, "%lf %lf", &t, &dE) == 2) {
      rows++;
      cr_expect(isfinite(dE) && fabs(dE) < 0.1, "t = %g: dE = %g", t, dE);
    }
  }
  cr_expect_eq(rows, 2001, "one row per sample of IC 2");
  remove(spec), remove(file);
}

/* Grid points skipped for the same reason make one note, listing them (issue 13: no wall of
 * repeated notes); the run goes on with the others. */
Test(cli, skipped_grid_points_noted_once) {
  char spec[256], file[256];
  scratch(file, sizeof file, "grid.h5");
  scratch_spec(spec, sizeof spec, "grid.cfg",
               "study = \"ensemble\"; system = \"chaotic_particle\"; T = 1.0; h = 0.2;\n"
        "ensemble = { count = 1; energy = 1.535; seed = 7; };\nmethods = [\"rk4\"];\n"
        "grids = ( { method = \"nh_newmark(alpha=0.5)\";\n"
        "  beta = [0.1, 0.2, 0.3]; beta2 = [0.2, 0.3, 0.4, 0.45]; } );\n");
  cli_result *r = nhb("run %s -o %s", spec, file);
  cr_assert_eq(r->rc, 0, "%s", r->err);
  expect_has(r->err, ":4: note: 3 grid points (beta, beta2) skipped: (0.1, 0.4), (0.2, 0.3), (0.3, 0.2): "
                     "nh_newmark: beta + beta2 = 1/2 makes the Newton system ill-conditioned");
  int notes = 0;
  for (const char *p = r->err; (p = strstr(p, "note:")); p++) notes++;
  cr_expect_eq(notes, 1, "one note for the three points:\n%s", r->err);
  r = nhb("export %s methods", file);
  int lines = 0;
  for (const char *p = r->out; (p = strchr(p, '\n')); p++) lines++;
  cr_expect_eq(lines, 1 + 1 + 9, "header, rk4 and the 9 of the 3 x 4 grid points that run:\n%s", r->out);
  /* One point: "1 grid point", singular. */
  scratch_spec(spec, sizeof spec, "grid.cfg",
               "study = \"ensemble\"; system = \"chaotic_particle\"; T = 1.0; h = 0.2;\n"
               "ensemble = { count = 1; energy = 1.535; seed = 7; };\nmethods = [\"rk4\"];\n"
               "grids = ( { method = \"nh_newmark(alpha=0.5)\";\n  beta = [0.1, 0.2]; beta2 = [0.4]; } );\n");
  r = nhb("run %s -o %s", spec, file);
  cr_assert_eq(r->rc, 0, "%s", r->err);
  expect_has(r->err, ":4: note: 1 grid point (beta, beta2) skipped: (0.1, 0.4): nh_newmark: beta + beta2 = 1/2");
  remove(spec), remove(file);
}

/* Pre-flight wiring: a trajectory study of 2·10^9 samples per run, whose results could not fit in
 * any machine's memory (hundreds of GiB), is refused with 2 before computing; one of 5·10^9 samples
 * per run, more than a run can count, is refused at its sample_every line; an ensemble of tens of
 * TiB, for the free disk where its output goes (statvfs). The room check's
 * boundaries, the disk for ensembles included, are tested in tests/studies/test_statistics.c; a refusal
 * that failed here would only make the run's allocation fail, not start a run that fills a disk. */
Test(cli, refuses_a_study_too_large_for_its_room) {
  char file[256];
  scratch(file, sizeof file, "huge.h5");
  cli_result *r = nhb("run " DATA "trajectory_particle.cfg -o %s --set T=400000000 --set 'h=[0.1]'", file);
  cr_expect_eq(r->rc, 2, "%s", r->err);
  expect_has(r->err, "GiB of memory, more than the ");
  cr_expect(strstr(r->err, "trajectory study of") == NULL, "nothing was computed: %s", r->err);
  r = nhb("run " DATA "trajectory_particle.cfg -o %s --set T=10000000 --set 'h=[0.001]'", file);
  cr_expect_eq(r->rc, 2, "%s", r->err);
  expect_has(r->err, "trajectory_particle.cfg:7: 10000000000 steps sampled every 2 make more than 2147483646 samples");
  /* An ensemble streams its samples to the journal: tens of TiB are refused for the disk's room. */
  r = nhb("run " DATA "small_ensemble.cfg -o %s --set ensemble.count=1000000 --set T=200000", file);
  cr_expect_eq(r->rc, 2, "%s", r->err);
  expect_has(r->err, "GiB free where the output goes");
  cr_expect(strstr(r->err, "ensemble study of") == NULL && access(file, F_OK) != 0, "nothing was computed: %s", r->err);
  cr_expect(access(file, F_OK) != 0);
}

/* An ensemble energy that no state reaches (below the potential's minimum) is a bad spec, found
 * before computing: exit 2 naming the line, or the --set argument by its path. */
Test(cli, unreachable_ensemble_energy_refused_before_computing) {
  char spec[256], file[256];
  scratch(file, sizeof file, "energy.h5");
  scratch_spec(spec, sizeof spec, "energy.cfg",
               "study = \"ensemble\"; system = \"chaotic_particle\"; T = 1.0; h = 0.2;\n"
               "ensemble = { count = 2;\n  energy = -5.0; seed = 1; };\nmethods = [\"rk4\"];\n");
  cli_result *r = nhb("run %s -o %s", spec, file);
  cr_expect_eq(r->rc, 2, "%s", r->err);
  expect_has(r->err, "energy.cfg:3: no state of chaotic_particle on D at energy -5");
  cr_expect(strstr(r->err, "ensemble study of") == NULL, "nothing was computed: %s", r->err);
  r = nhb("run %s/studies/chaotic_ensemble.cfg -o %s --set ensemble.energy=-5", NHBENCH_SOURCE_DIR, file);
  cr_expect_eq(r->rc, 2, "%s", r->err);
  expect_has(r->err, "chaotic_ensemble.cfg: --set ensemble.energy: no state of chaotic_particle on D at energy -5");
  cr_expect(access(file, F_OK) != 0);
  remove(spec);
}

/* info lists the first 10 initial conditions and says how many there are beyond: 10 are all
 * shown, 11 show 10 and the count. */
Test(cli, info_lists_ten_initial_conditions) {
  char spec[256], file[256], text[1024];
  scratch(file, sizeof file, "ics.h5");
  for (int nic = 10; nic <= 11; nic++) {
    int used = snprintf(text, sizeof text, "study = \"trajectory\"; system = \"particle\"; T = 0.2; h = 0.1;\n"
                                           "observables = [\"energy\"]; methods = [\"rk4\"];\ninitial = [");
    for (int i = 0; i < nic; i++) used += snprintf(text + used, sizeof text - (size_t)used, "%s\"default\"", i ? ", " : "");
    snprintf(text + used, sizeof text - (size_t)used, "];\n");
    scratch_spec(spec, sizeof spec, "ics.cfg", text);
    cli_result *r = nhb("run %s -o %s", spec, file);
    cr_assert_eq(r->rc, 0, "%s", r->err);
    r = nhb("info %s", file);
    cr_expect(strstr(r->out, "  IC 9 ") != NULL && strstr(r->out, "  IC 10 ") == NULL, "%d ICs:\n%s", nic, r->out);
    if (nic == 10) cr_expect(strstr(r->out, "initial conditions in all") == NULL, "10 ICs are all shown");
    else expect_has(r->out, "  ...          11 initial conditions in all");
  }
  remove(spec), remove(file);
}

/* --set with lists, and the two forms of step sizes: h replaces h0/halvings and the reverse; a
 * spec with both is refused at its line; a malformed list exits 2 naming the argument. */
Test(cli, set_lists_and_step_size_forms) {
  char spec[256], file[256];
  scratch(file, sizeof file, "steps.h5");
  scratch_spec(spec, sizeof spec, "steps.cfg",
               "study = \"convergence\"; system = \"particle\"; T = 1.0;\nh0 = 0.2; halvings = 3;\nmethods = [\"rk4\"];\n");
  cli_result *r = nhb("run %s -o %s --set 'h=[0.1,0.05]' --set 'methods=[\"rk4\", \"js_a\"]'", spec, file);
  cr_assert_eq(r->rc, 0, "%s", r->err);
  r = nhb("export %s convergence --methods 1", file);
  int rows = 0;
  double h[4];
  for (const char *line = r->out; *line && rows < 4; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : "")
    if (*line != '#' && sscanf(line, "%lf", &h[rows]) == 1) rows++;
  cr_expect(rows == 2 && h[0] == 0.1 && h[1] == 0.05, "h from --set: %d rows, %g %g\n%s", rows, h[0], h[1], r->out);
  r = nhb("run %s -o %s --set h0=0.5 --set halvings=1", spec, file);
  cr_expect_eq(r->rc, 0, "%s", r->err);
  r = nhb("run %s -o %s --set 'h=[0.1,x]'", spec, file);
  cr_expect_eq(r->rc, 2);
  expect_has(r->err, "--set 'h=[0.1,x]': a list holds numbers or \"strings\"");
  r = nhb("run %s -o %s --set 'h=[0.1,0.05'", spec, file);
  cr_expect_eq(r->rc, 2);
  expect_has(r->err, "closed by ']'");
  scratch_spec(spec, sizeof spec, "steps.cfg",
               "study = \"convergence\"; system = \"particle\"; T = 1.0;\nh = [0.2, 0.1];\nhalvings = 3;\nmethods = [\"rk4\"];\n");
  r = nhb("run %s -o %s", spec, file);
  cr_expect_eq(r->rc, 2);
  expect_has(r->err, "steps.cfg:3: 'halvings' and 'h' both give the step sizes");
  remove(spec), remove(file);
}

/* A write that hits the file-size limit (ulimit -f, as a full disk would): exit 1 with the OS's
 * reason, the earlier file unchanged, no temporary file left, no crash at exit (the HDF5 library
 * used to segfault closing the failed file: 139). An ensemble reaches the limit in its journal
 * (its trajectories stream through it), a trajectory study in the results file itself. The
 * message is nhbench's alone: the HDF5 library's error stack is not printed. */
Test(cli, write_past_the_file_size_limit) {
  static const char *const specs[2][2] = {
      {"study = \"ensemble\"; system = \"chaotic_particle\"; T = 200.0; h = 0.2; sample_every = 1;\n"
       "ensemble = { count = 40; energy = 1.535; seed = 3; };\nmethods = [\"rk4\", \"nh_rattle\"];\n",
       "cannot append to "},
      {"study = \"trajectory\"; system = \"chaotic_particle\"; T = 400.0; h = 0.05; sample_every = 1;\n"
       "observables = [\"q\", \"v\"];\nmethods = [\"rk4\", \"nh_rattle\"];\n",
       "writing the results failed: cannot "}};
  for (int k = 0; k < 2; k++) {
    char spec[256], file[256], cmd[1024], side[300];
    scratch(spec, sizeof spec, "fsize.cfg");
    scratch(file, sizeof file, "fsize.h5");
    FILE *s = fopen(spec, "w");
    cr_assert(s);
    fputs(specs[k][0], s);
    fclose(s);
    s = fopen(file, "w");
    fputs("the earlier file", s);
    fclose(s);
    snprintf(cmd, sizeof cmd, "sh -c 'ulimit -f 64; exec %s run %s -o %s' 2>&1", NHBENCH_EXE, spec, file);
    FILE *p = popen(cmd, "r");
    char out[4096];
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = '\0';
    int status = pclose(p);
    cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 1, "spec %d: status %d:\n%s", k, status, out);
    expect_has(out, specs[k][1]);
    expect_has(out, ": File too large");
    cr_expect(strstr(out, "HDF5-DIAG") == NULL, "spec %d: HDF5's own error stack printed:\n%s", k, out);
    char kept[64] = "";
    s = fopen(file, "r");
    cr_assert(s);
    cr_expect(fgets(kept, sizeof kept, s) && strcmp(kept, "the earlier file") == 0, "the earlier file became '%s'", kept);
    fclose(s);
    snprintf(side, sizeof side, "ls %s.tmp-* 2>/dev/null | wc -l", file);
    p = popen(side, "r");
    int left = -1;
    cr_expect(fscanf(p, "%d", &left) == 1 && left == 0, "spec %d: %d temporary files left", k, left);
    pclose(p);
    /* The tasks that finished are in the journal, which stays for --resume, and the message says so. */
    snprintf(side, sizeof side, "%s.journal", file);
    char kept_in[400];
    snprintf(kept_in, sizeof kept_in, "nhbench: the finished tasks are kept in %s: rerun with --resume to continue\n",
             side);
    expect_has(out, kept_in);
    cr_expect(access(side, F_OK) == 0, "spec %d: the journal %s is gone", k, side);
    remove(spec), remove(file), remove(side);
  }
}

Test(cli, run_trajectory_then_info_and_export) {
  char file[256];
  scratch(file, sizeof file, "traj.h5");
  cli_result *r = nhb("run " DATA "trajectory_particle.cfg --threads=2 --output=%s", file);
  cr_assert_eq(r->rc, 0, "%s", r->err);
  r = nhb("export %s study", file);
  cr_expect_eq(r->rc, 0);
  cr_expect_str_eq(r->out, "trajectory\n");
  r = nhb("export %s methods", file);
  cr_expect_eq(r->rc, 0);
  /* The labels: the names without default parameters, '_' escaped for enhanced text. */
  cr_expect_str_eq(r->out, "# index name label (label: to the end of the line)\n0 rk4 rk4\n1 "
                           "nh_newmark(beta=0,beta2=0,alpha=0.5,constraint=point) nh\\_newmark\n");
  /* Options before the positional arguments work too. */
  r = nhb("export --observable q --method 0 --h 1 --ic 0 %s series", file);
  cr_expect_eq(r->rc, 0, "%s", r->err);
  expect_has(r->out, "# q [");
  r = nhb("export %s convergence", file);
  cr_expect_eq(r->rc, 2);
  expect_has(r->err, "is a trajectory study");
  r = nhb("info %s", file);
  cr_expect_eq(r->rc, 0, "%s", r->err);
  expect_has(r->out, "trajectory study");
  remove(file);
}

Test(cli, run_check_orders_fails_with_1) {
  char file[256];
  scratch(file, sizeof file, "claim.h5");
  cli_result *r = nhb("run " DATA "order_claim.cfg -o %s --check-orders", file);
  cr_expect_eq(r->rc, 1, "%s", r->err);
  expect_has(r->out, "FAIL");
  expect_has(r->out, "js_a");
  expect_has(r->err, "1 of 2 observed orders off");
  cr_expect(access(file, F_OK) == 0, "the results are written even when the order check fails");
  r = nhb("export %s orders", file);
  cr_expect_eq(r->rc, 0);
  expect_has(r->out, " 2 0 js_a\n"); /* expected 2, ok 0 */
  remove(file);
}

/* --check-orders on methods of the orders the registry expects (rk4 4, nh_newmark(alpha=0.5) 2 on
 * the particle's exact solution): a table of "ok" rows, exit 0, nothing on stderr. */
Test(cli, run_check_orders_passes_with_0) {
  char spec[256], file[256];
  scratch_spec(spec, sizeof spec, "orders_ok.cfg",
               "study = \"convergence\";\nsystem = \"particle\";\nT = 1.0;\nh0 = 0.1;\nhalvings = 3;\n"
               "methods = [\"rk4\", \"nh_newmark(alpha=0.5)\"];\n");
  scratch(file, sizeof file, "orders_ok.h5");
  cli_result *r = nhb("run %s -o %s --check-orders", spec, file);
  cr_expect_eq(r->rc, 0, "%s%s", r->out, r->err);
  expect_has(r->out, "check  expected observed");
  expect_has(r->out, "ok            4 ");
  expect_has(r->out, "ok            2 ");
  cr_expect(!strstr(r->out, "FAIL"), "%s", r->out);
  cr_expect(!strstr(r->err, "off by"), "%s", r->err);
  remove(spec), remove(file);
}

/* A journal left beside the output by an earlier run, without --resume: a note that the run starts
 * over, the run done, and the journal gone with it. */
Test(cli, run_without_resume_replaces_an_old_journal) {
  char file[256], journal[300];
  scratch(file, sizeof file, "over.h5");
  snprintf(journal, sizeof journal, "%s.journal", file);
  FILE *j = fopen(journal, "w");
  cr_assert(j);
  fputs("an earlier run's journal\n", j);
  fclose(j);
  cli_result *r = nhb("run " DATA "trajectory_particle.cfg -o %s", file);
  cr_expect_eq(r->rc, 0, "%s", r->err);
  expect_has(r->err, "note: starting over; the journal");
  expect_has(r->err, journal);
  cr_expect(access(journal, F_OK) != 0, "the old journal %s is still there", journal);
  cr_expect(access(file, F_OK) == 0, "no results %s", file);
  remove(file);
}

/* A claimed order's reason, however short, follows the method in the --check-orders table (after
 * "  -- "; nothing after a method without one) and in info's list of exceptions. */
Test(cli, order_reason_of_one_letter_shown) {
  char spec[256], file[256];
  scratch_spec(spec, sizeof spec, "reason.cfg",
               "study = \"convergence\";\nsystem = \"particle\";\ninitial = \"discretization\";\nT = 2.0;\nh0 = 0.05;\n"
               "halvings = 3;\nmethods = [\"js_a\", \"js_b\"];\n"
               "expected_orders = ( { method = \"js_a\"; order = 2; reason = \"R\"; } );\n");
  scratch(file, sizeof file, "reason.h5");
  cli_result *r = nhb("run %s -o %s --check-orders", spec, file);
  cr_expect_eq(r->rc, 1, "js_a is order 1: %s", r->err);
  expect_has(r->out, "  js_a  -- R\n");
  expect_has(r->out, "  js_b\n");
  r = nhb("info %s", file);
  cr_expect_eq(r->rc, 0, "%s", r->err);
  expect_has(r->out, " claimed 1, expected 2: R\n");
  remove(spec), remove(file);
}

Test(cli, info_and_export_of_missing_or_foreign_files) {
  char text[256];
  scratch(text, sizeof text, "not.h5");
  FILE *f = fopen(text, "w");
  cr_assert(f);
  fputs("not an HDF5 file\n", f);
  fclose(f);
  const char *files[] = {"/nonexistent-dir/none.h5", text};
  for (int i = 0; i < 2; i++) {
    cli_result *r = nhb("info %s", files[i]);
    cr_expect_eq(r->rc, 2, "info %s: exit %d", files[i], r->rc);
    expect_has(r->err, files[i]);
    r = nhb("export %s study", files[i]);
    cr_expect_eq(r->rc, 2, "export %s: exit %d", files[i], r->rc);
    expect_has(r->err, files[i]);
  }
  remove(text);
}

/* ---- names cut to the table width ----------------------------------------------------------- */

/* A method whose canonical name (130 characters) is longer than any table leaves room for. */
#define LONG_METHOD "adjoint_pair(triple_jump(adjoint_pair(nh_newmark(beta=0.1,beta2=0.1,alpha=0.25,fast=0,allow_ill_conditioned=1))))"
#define LONG_CANONICAL                                                                                            \
  "adjoint_pair(triple_jump(adjoint_pair(nh_newmark(beta=0.1,beta2=0.1,alpha=0.25,constraint=point,allow_ill_" \
  "conditioned=1,fast=0))))"

/* Runs the spec, then `nhbench info`: every line ending in "..." is exactly 120 columns and ends
 * in a prefix of the long name; their count; the note on cut names. */
static int cut_lines_of(const char *name, const char *spec) {
  char cfg[256], h5[256];
  scratch_spec(cfg, sizeof cfg, name, spec);
  scratch(h5, sizeof h5, "cut.h5");
  cli_result *r = nhb("run %s -o %s", cfg, h5);
  cr_assert(r->rc == 0 || r->rc == 1, "%s: exit %d\n%s", name, r->rc, r->err);
  r = nhb("info %s", h5);
  cr_assert_eq(r->rc, 0, "%s: info exit %d\n%s", name, r->rc, r->err);
  int cut = 0;
  for (const char *line = r->out; *line;) {
    const char *end = strchr(line, '\n');
    const size_t len = end ? (size_t)(end - line) : strlen(line);
    if (len >= 3 && strncmp(line + len - 3, "...", 3) == 0) {
      cut++;
      cr_expect_eq(len, 120, "%s: a cut line of %zu columns:\n%.*s", name, len, (int)len, line);
      const char *start = strstr(line, "adjoint_pair(");
      const size_t kept = start && start < line + len ? (size_t)(line + len - 3 - start) : 0;
      cr_expect(kept >= 12 && strncmp(start, LONG_CANONICAL, kept) == 0, "%s: not a cut of the long name:\n%.*s", name,
                (int)len, line);
    }
    line += len + (end != NULL);
  }
  char note[512];
  snprintf(note, sizeof note, "(names cut to 120 columns; full names: nhbench export %s methods)", h5);
  expect_has(r->out, note);
  remove(cfg), remove(h5);
  return cut;
}

/* Every table of every study kind cuts the long name at the same width: the convergence orders and
 * cost, the ensemble summary, cost and failure causes (every run diverges at divergence = 1e-300),
 * the trajectory and work-precision per-method heads, the one-step table (the rk4 rows are not cut). */
Test(cli, info_cuts_long_names_at_the_table_width, .timeout = 60) {
  const char *head = "methods = [\"" LONG_METHOD "\", \"rk4\"];\n";
  char spec[2048];
  snprintf(spec, sizeof spec, "%sstudy = \"convergence\"; system = \"particle\"; T = 0.4; h = [0.2, 0.1];\n", head);
  cr_expect_eq(cut_lines_of("cut-conv.cfg", spec), 2, "convergence: the orders and the cost table");
  snprintf(spec, sizeof spec,
           "%sstudy = \"ensemble\"; system = \"chaotic_particle\"; T = 0.4; h = 0.2; divergence = 1e-300;\n"
           "ensemble = { count = 1; energy = 1.535; seed = 1; };\n",
           head);
  cr_expect_eq(cut_lines_of("cut-ens.cfg", spec), 3, "ensemble: summary, cost, failure causes");
  snprintf(spec, sizeof spec, "%sstudy = \"trajectory\"; system = \"particle\"; T = 0.4; h = [0.2]; observables = [\"energy\"];\n",
           head);
  cr_expect_eq(cut_lines_of("cut-traj.cfg", spec), 1, "trajectory: the runs");
  snprintf(spec, sizeof spec, "%sstudy = \"onestep\"; system = \"particle\"; T = 0.4; h = [0.2, 0.1]; points = 1;\n", head);
  cr_expect_eq(cut_lines_of("cut-one.cfg", spec), 1, "onestep");
  snprintf(spec, sizeof spec, "%sstudy = \"work_precision\"; system = \"particle\"; T = 0.4; h = [0.2]; repeats = 1;\n", head);
  cr_expect_eq(cut_lines_of("cut-wp.cfg", spec), 1, "work-precision");
}

/* Step sizes listed in no order (the coarsest not first): info still finds the finest, h = 0.05,
 * for the error column (rk4's error there, stepped here) and the cost (T/h = 40 steps), and gives
 * the range from the coarsest. */
Test(cli, info_convergence_with_h_in_any_order, .timeout = 30) {
  char spec[256], file[256];
  scratch_spec(spec, sizeof spec, "unsorted.cfg",
               "study = \"convergence\";\nsystem = \"particle\";\ninitial = \"discretization\";\nT = 2.0;\n"
               "h = [0.1, 0.4, 0.2, 0.05];\nmethods = [\"rk4\"];\n");
  scratch(file, sizeof file, "unsorted.h5");
  cli_result *r = nhb("run %s -o %s", spec, file);
  cr_assert_eq(r->rc, 0, "%s", r->err);
  r = nhb("info %s", file);
  cr_assert_eq(r->rc, 0, "%s", r->err);
  expect_has(r->out, "  h            4 values, 0.4 .. 0.05\n");
  expect_has(r->out, "Cost at the finest h = 0.05;");
  char want[64];
  snprintf(want, sizeof want, " %.2e ", rk4_error(2.0, 0.05));
  expect_has(r->out, want);
  snprintf(want, sizeof want, " %12d ", 40);
  expect_has(r->out, want);
  cr_expect(!strstr(r->out, "expected order differs"), "rk4's order is no exception:\n%s", r->out);
  remove(spec), remove(file);
}

/* Without -o the file is results/<spec name up to its first dot>.h5 under the working directory
 * (the spec's own directory does not matter), results/stdin.h5 for a spec on standard input. */
Test(cli, run_default_output_name, .timeout = 30) {
  char dir[256], sub[320], spec[400], cmd[2048], h5[400];
  scratch(dir, sizeof dir, "dflt");
  snprintf(sub, sizeof sub, "%s/specs", dir);
  cr_assert_eq(mkdir(dir, 0755), 0);
  cr_assert_eq(mkdir(sub, 0755), 0);
  snprintf(spec, sizeof spec, "%s/my.small.cfg", sub);
  FILE *f = fopen(spec, "w");
  cr_assert(f);
  fputs("study = \"trajectory\"; system = \"particle\"; T = 0.2; h = [0.1]; observables = [\"energy\"];\n"
        "methods = [\"rk4\"];\n",
        f);
  fclose(f);
  snprintf(cmd, sizeof cmd, "cd %s && %s run %s >/dev/null 2>&1 && %s run - < %s >/dev/null 2>&1", dir, NHBENCH_EXE,
           spec, NHBENCH_EXE, spec);
  cr_assert_eq(system(cmd), 0, "%s", cmd);
  snprintf(h5, sizeof h5, "%s/results/my.h5", dir);
  cr_expect_eq(access(h5, F_OK), 0, "%s was not written", h5);
  cli_result *r = nhb("export %s study", h5);
  cr_expect_str_eq(r->out, "trajectory\n");
  remove(h5);
  snprintf(h5, sizeof h5, "%s/results/stdin.h5", dir);
  cr_expect_eq(access(h5, F_OK), 0, "%s was not written", h5);
  remove(h5);
  snprintf(h5, sizeof h5, "%s/results", dir);
  rmdir(h5), remove(spec), rmdir(sub), rmdir(dir);
}

/* ---- parameter grids of several shapes -------------------------------------------------------- */

/* Reads rows "v0 v1 stat m failed count lo0 hi0 lo1 hi1" of `export grid` into r (at most 16). */
static int grid_table(const char *out, double r[16][10]) {
  int n = 0;
  for (const char *line = out; *line && n < 16;) {
    const char *end = strchr(line, '\n');
    if (*line != '#' && *line != '\n') {
      cr_assert_eq(sscanf(line, "%lf %lf %lf %lf %lf %lf %lf %lf %lf %lf", &r[n][0], &r[n][1], &r[n][2], &r[n][3],
                          &r[n][4], &r[n][5], &r[n][6], &r[n][7], &r[n][8], &r[n][9]),
                   10, "grid row: %s", line);
      n++;
    }
    if (!end) break;
    line = end + 1;
  }
  return n;
}

/* Cell edges by hand: halfway to the neighbours, the end cells mirrored; one value v: v ± |v|/2,
 * or ± 1/2 at 0. */
static void edges_by_hand(const double *v, int n, int i, double *lo, double *hi) {
  if (n == 1) *lo = v[0] == 0 ? -0.5 : v[0] / 2, *hi = v[0] == 0 ? 0.5 : 1.5 * v[0];
  else if (i == 0) *lo = v[0] - (v[1] - v[0]) / 2, *hi = (v[0] + v[1]) / 2;
  else if (i == n - 1) *lo = (v[i - 1] + v[i]) / 2, *hi = v[i] + (v[i] - v[i - 1]) / 2;
  else *lo = (v[i - 1] + v[i]) / 2, *hi = (v[i] + v[i + 1]) / 2;
}

/* Three grids of shapes 2×1, 1×3 and 3×2 in one ensemble (reading one grid must not keep the
 * sizes of the one before): each exported cell's values, edges, method (its name carries the
 * cell's β, β'), and the median and maximum over the 2 ICs of max_t |dE| read here from
 * /ensemble/max_abs_dE. */
Test(cli, export_grids_of_several_shapes, .timeout = 60) {
  static const double b0[3][3] = {{0.0, 0.1}, {0.05}, {0.0, 0.1, 0.2}}, b1[3][3] = {{0.0}, {0.0, 0.1, 0.2}, {0.0, 0.1}};
  static const int n0[3] = {2, 1, 3}, n1[3] = {1, 3, 2};
  static const double alpha[3] = {0.5, 0.5, 0};
  char spec[256], file[256];
  scratch_spec(spec, sizeof spec, "grids.cfg",
               "study = \"ensemble\"; system = \"chaotic_particle\"; T = 0.4; h = 0.2;\n"
               "ensemble = { count = 2; energy = 1.535; seed = 3; };\nmethods = [\"rk4\"];\n"
               "grids = ( { method = \"nh_newmark(alpha=0.5)\"; beta = [0.0, 0.1]; beta2 = [0.0]; },\n"
               "          { method = \"nh_newmark(alpha=0.5)\"; beta = [0.05]; beta2 = [0.0, 0.1, 0.2]; },\n"
               "          { method = \"nh_newmark(alpha=0)\"; beta = [0.0, 0.1, 0.2]; beta2 = [0.0, 0.1]; } );\n");
  scratch(file, sizeof file, "grids.h5");
  cli_result *r = nhb("run %s -o %s", spec, file);
  cr_assert_eq(r->rc, 0, "%s", r->err);
  /* The methods and max_t |dE| per method and IC, straight from the file. */
  hid_t f = H5Fopen(file, H5F_ACC_RDONLY, H5P_DEFAULT);
  cr_assert(f >= 0);
  hid_t ds = H5Dopen2(f, "/ensemble/max_abs_dE", H5P_DEFAULT);
  hsize_t dims[2];
  hid_t sp = H5Dget_space(ds);
  cr_assert_eq(H5Sget_simple_extent_dims(sp, dims, NULL), 2);
  cr_assert(dims[1] == 2 && dims[0] <= 16, "%llu methods × %llu ICs", (unsigned long long)dims[0], (unsigned long long)dims[1]);
  double maxdE[16][2];
  cr_assert(H5Dread(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, maxdE) >= 0);
  H5Sclose(sp), H5Dclose(ds), H5Fclose(f);
  const int nm = (int)dims[0];
  r = nhb("export %s methods", file);
  char names[16][256];
  int index = 0;
  for (const char *line = strchr(r->out, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
    cr_assert(index < 16 && sscanf(line + 1, "%*d %255s", names[index]) == 1, "methods:\n%s", r->out);
    index++;
  }
  cr_assert_eq(index, nm);
  for (int g = 0; g < 3; g++) {
    /* which 0: no --stat, the default median_max_abs_dE (export --help); 1: the same asked for; 2: the max. */
    static const char *const stat_option[] = {"", " --stat median_max_abs_dE", " --stat max_max_abs_dE"};
    for (int which = 0; which < 3; which++) {
      r = nhb("export %s grid --grid %d%s", file, g, stat_option[which]);
      cr_assert_eq(r->rc, 0, "%s", r->err);
      static const char *const stat_name[] = {"median_max_abs_dE", "median_max_abs_dE", "max_max_abs_dE"};
      char head[256];
      /* the grid's template method: its own β and β' (the defaults), the cells' replaced */
      snprintf(head, sizeof head, "\n# grid %d: nh_newmark(beta=0,beta2=0,alpha=%g,", g, alpha[g]);
      expect_has(r->out, head);
      snprintf(head, sizeof head, "), value0 = beta, value1 = beta2, stat = %s over the ICs that ran to T\n",
               stat_name[which]);
      expect_has(r->out, head);
      double t[16][10];
      cr_assert_eq(grid_table(r->out, t), n0[g] * n1[g], "grid %d:\n%s", g, r->out);
      for (int i = 0; i < n0[g]; i++)
        for (int j = 0; j < n1[g]; j++) {
          const double *row = t[i * n1[g] + j];
          double lo0, hi0, lo1, hi1;
          edges_by_hand(b0[g], n0[g], i, &lo0, &hi0);
          edges_by_hand(b1[g], n1[g], j, &lo1, &hi1);
          cr_expect(row[0] == b0[g][i] && row[1] == b1[g][j], "grid %d cell (%d, %d): %g %g", g, i, j, row[0], row[1]);
          cr_expect(fabs(row[6] - lo0) < 1e-15 && fabs(row[7] - hi0) < 1e-15 && fabs(row[8] - lo1) < 1e-15 &&
                        fabs(row[9] - hi1) < 1e-15,
                    "grid %d cell (%d, %d) edges %g %g %g %g, by hand %g %g %g %g", g, i, j, row[6], row[7], row[8],
                    row[9], lo0, hi0, lo1, hi1);
          const int m = (int)row[3];
          cr_assert(m >= 0 && m < nm, "grid %d cell (%d, %d): method %d", g, i, j, m);
          char want[128];
          snprintf(want, sizeof want, "nh_newmark(beta=%g,beta2=%g,alpha=%g,", b0[g][i], b1[g][j], alpha[g]);
          cr_expect(strncmp(names[m], want, strlen(want)) == 0, "grid %d cell (%d, %d) is method %d %s, not %s...", g,
                    i, j, m, names[m], want);
          const double a = maxdE[m][0], b = maxdE[m][1];
          const double stat = which == 2 ? fmax(a, b) : (a + b) / 2;
          cr_expect(fabs(row[2] - stat) <= 1e-15 * stat, "grid %d cell (%d, %d): stat %d %.17g, by hand %.17g", g, i,
                    j, which, row[2], stat);
          cr_expect(row[4] == 0 && row[5] == 2, "failed %g of %g ICs", row[4], row[5]);
        }
    }
  }
  r = nhb("export %s grid --grid 3", file);
  cr_expect_eq(r->rc, 2);
  r = nhb("info %s", file);
  cr_expect_eq(r->rc, 0, "%s", r->err);
  expect_has(r->out, "Grid 2: nh_newmark(beta=0,beta2=0,alpha=0,");
  remove(spec), remove(file);
}

/* A two-IC ensemble of the chaotic particle at T = 0.4 with `methods` (may be "") and one
 * nh_newmark grid at β = 0.1 over β' = beta2, run into file (scratch files named after name); then
 * the output of `nhbench verb file args`, which must succeed. spec and file hold PATH_LEN bytes. */
enum { PATH_LEN = 256 };
static cli_result *small_grid_run(const char *name, const char *methods, const char *beta2, const char *verb,
                                  const char *args, char spec[PATH_LEN], char file[PATH_LEN]) {
  char text[1024], base[64];
  snprintf(text, sizeof text,
           "study = \"ensemble\"; system = \"chaotic_particle\"; T = 0.4; h = 0.2;\n"
           "ensemble = { count = 2; energy = 1.535; seed = 3; };\n%s"
           "grids = ( { method = \"nh_newmark(alpha=0.5)\"; beta = [0.1]; beta2 = %s; } );\n",
           methods, beta2);
  snprintf(base, sizeof base, "%s.cfg", name);
  scratch_spec(spec, PATH_LEN, base, text);
  snprintf(base, sizeof base, "%s.h5", name);
  scratch(file, PATH_LEN, base);
  cli_result *r = nhb("run %s -o %s", spec, file);
  cr_assert_eq(r->rc, 0, "%s", r->err);
  r = nhb("%s %s %s", verb, file, args);
  cr_assert_eq(r->rc, 0, "%s", r->err);
  return r;
}

/* Tables a file has not: an ensemble without parameter grids has no grid table, and a table of
 * two kinds names both when asked of a third. */
Test(cli, export_tables_the_file_has_not, .timeout = 60) {
  char ens[256], conv[256];
  scratch(ens, sizeof ens, "nogrid.h5");
  scratch(conv, sizeof conv, "noseries.h5");
  cli_result *r = nhb("run " DATA "ensemble_fixed.cfg -o %s", ens);
  cr_assert_eq(r->rc, 0, "%s", r->err);
  r = nhb("export %s grid", ens);
  cr_expect_eq(r->rc, 2);
  expect_has(r->err, "has no parameter grids");
  expect_has(r->err, ens);
  cr_expect_str_empty(r->out);
  r = nhb("run " DATA "order_claim.cfg -o %s", conv);
  cr_assert_eq(r->rc, 0, "%s", r->err);
  r = nhb("export %s series", conv);
  cr_expect_eq(r->rc, 2);
  expect_has(r->err, "is a convergence study; table 'series' is for ensemble and trajectory studies\n");
  r = nhb("export %s", conv);
  cr_expect_eq(r->rc, 2);
  expect_has(r->err, "no TABLE given");
  remove(ens), remove(conv);
}

/* A study whose methods all come from a grid: `info` lists them in both tables without the
 * "grid methods not listed in the spec" heading, which only separates them from listed ones. */
Test(cli, info_of_grid_methods_only, .timeout = 60) {
  char spec[PATH_LEN], file[PATH_LEN];
  cli_result *r = small_grid_run("gridonly", "", "[0.0, 0.1]", "info", "", spec, file);
  expect_has(r->out, "methods      2: 0 listed in the spec, 2 more from 1 grid\n");
  cr_expect(!strstr(r->out, "not listed in the spec"), "%s", r->out);
  /* Its cells are methods 0 and 1: method 0 is a method like any other, with its statistic and
   * its count of ICs (only -1 means no method). */
  r = nhb("export %s grid", file);
  cr_assert_eq(r->rc, 0, "%s", r->err);
  double t[16][10];
  cr_assert_eq(grid_table(r->out, t), 2, "%s", r->out);
  for (int m = 0; m < 2; m++)
    cr_expect(t[m][3] == m && isfinite(t[m][2]) && t[m][2] > 0 && t[m][4] == 0 && t[m][5] == 2, "cell %d: %s", m,
              r->out);
  remove(spec), remove(file);
}

/* A grid point the spec skipped (β + β' = ½, spec/newmark.md 2.5) has no method: its row says
 * stat NaN, method -1 and 0 failed of 0 ICs; the point beside it ran both ICs. */
Test(cli, export_grid_skipped_point, .timeout = 60) {
  char spec[PATH_LEN], file[PATH_LEN];
  cli_result *r = small_grid_run("skip", "methods = [\"rk4\"];\n", "[0.0, 0.4]", "export", "grid", spec, file);
  double t[16][10];
  cr_assert_eq(grid_table(r->out, t), 2, "%s", r->out);
  cr_expect(t[0][1] == 0 && isfinite(t[0][2]) && t[0][3] == 1 && t[0][4] == 0 && t[0][5] == 2, "ran: %s", r->out);
  cr_expect(t[1][1] == 0.4 && isnan(t[1][2]) && t[1][3] == -1 && t[1][4] == 0 && t[1][5] == 0, "skipped: %s", r->out);
  remove(spec), remove(file);
}

/* An ensemble over given initial conditions (presets, not random states) is written and read
 * back: the ICs by name with their states, and E0 of each the energy of its preset computed here. */
Test(cli, ensemble_of_given_initial_conditions, .timeout = 30) {
  char file[256];
  scratch(file, sizeof file, "fixed.h5");
  cli_result *r = nhb("run " DATA "ensemble_fixed.cfg -o %s", file);
  cr_assert_eq(r->rc, 0, "%s", r->err);
  r = nhb("info %s", file);
  cr_assert_eq(r->rc, 0, "%s", r->err);
  static char info[1 << 16];
  snprintf(info, sizeof info, "%s", r->out);
  const char *presets[2] = {"newmark", "discretization"};
  for (int ic = 0; ic < 2; ic++) {
    nh_system sys = test_system("particle", NULL);
    nh_state x = test_preset(&sys, presets[ic]);
    /* info's line of the IC: its preset's state, %.10g. */
    char line[512];
    size_t n = (size_t)snprintf(line, sizeof line, "  IC %-9d %s: q0 = (", ic, presets[ic]);
    for (int i = 0; i < sys.n; i++) n += (size_t)snprintf(line + n, sizeof line - n, "%s%.10g", i ? ", " : "", x.q[i]);
    n += (size_t)snprintf(line + n, sizeof line - n, "), v0 = (");
    for (int i = 0; i < sys.n; i++) n += (size_t)snprintf(line + n, sizeof line - n, "%s%.10g", i ? ", " : "", x.v[i]);
    snprintf(line + n, sizeof line - n, ")\n");
    expect_has(info, line);
    const double E0 = nh_energy(&sys, x.q, x.v);
    r = nhb("export %s energy --method 1 --ics %d", file, ic);
    cr_assert_eq(r->rc, 0, "%s", r->err);
    double e = NAN;
    const char *at = strstr(r->out, ", E0 ");
    cr_assert(at && sscanf(at + 5, "%lf", &e) == 1, "%s", r->out);
    cr_expect(fabs(e - E0) <= 1e-15 * fabs(E0), "IC %d (%s): E0 %.17g, by hand %.17g", ic, presets[ic], e, E0);
  }
  remove(file);
}

/* A table that cannot be written (stdout on a full device) is a failure: exit status 1 and the
 * reason, not a silently short table. */
Test(cli, export_to_a_full_device_fails) {
  char file[256], cmd[1024], errf[300];
  scratch(file, sizeof file, "full.h5");
  cli_result *r = nhb("run " DATA "trajectory_particle.cfg -o %s", file);
  cr_assert_eq(r->rc, 0, "%s", r->err);
  snprintf(errf, sizeof errf, "%s.err", file);
  snprintf(cmd, sizeof cmd, "%s export %s series > /dev/full 2> %s", NHBENCH_EXE, file, errf);
  const int status = system(cmd);
  cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 1, "exit status %d", WEXITSTATUS(status));
  char *err = NULL;
  slurp(errf, &err);
  expect_has(err, "nhbench export: writing the table failed: No space left on device");
  free(err);
  remove(file);
}

/* With its standard input closed (a cron job), the first file nhbench opens gets descriptor 0:
 * still a valid file, and the run writes its results. */
Test(cli, run_with_standard_input_closed, .timeout = 30) {
  char file[256], cmd[1024];
  scratch(file, sizeof file, "nostdin.h5");
  snprintf(cmd, sizeof cmd, "%s run " DATA "trajectory_particle.cfg -o %s <&- 2>/dev/null", NHBENCH_EXE, file);
  const int status = system(cmd);
  cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "exit status %d", WEXITSTATUS(status));
  cr_expect_eq(access(file, F_OK), 0, "no results file");
  remove(file);
}

/* bench/: the nhbench command line, its output parsed and compared with the values put in (spec
 * settings given with --set), checks added for mutation robustness (issue 16). */

/* test_results_file (tests/helpers.h) with this file's prefix. */
static void results_file(char *path, size_t len, const char *tag, const char *spec, const char *set) {
  test_results_file(path, len, "cli-values", tag, spec, set);
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
Test(cli, info_shows_the_fit_settings) {
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
Test(cli, export_unknown_table_on_a_real_file) {
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
Test(cli, list_systems_shows_every_parameter) {
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
Test(cli, info_refuses_an_ensemble_without_its_initial_conditions) {
  static char out[1 << 16];
  cr_expect_eq(after_deleting("ensemble_fixed.cfg", "--set T=0.4", "info %s", "/ensemble/q0", out, sizeof out), 2, "%s",
               out);
  expect_has(out, "q0");
}

/* A claims row on a string dataset (caveats: one note per method, "" for none) measures 1 where a
 * method has a note: caveat_forced.cfg runs nh_newmark at beta + beta2 = 1/2 (a caveat) and rk4
 * (none), so the mean over both methods is 1/2 and rk4's value 0; minus the claimed orders (2 and
 * 4) the mean is ((1 - 2) + (0 - 4))/2 = -5/2. */
Test(cli, report_counts_caveats_per_method) {
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
Test(cli, list_methods_shows_what_each_method_defines) {
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
    cr_expect_eq(strstr(entry, "\n    Newton system: analytic Jacobian") != NULL, own && t->newton != NULL,
                 "%s: Newton system line", t->name);
    cr_expect_eq(strstr(entry, "\n    discrete action: defined") != NULL, own && t->discrete_action != NULL,
                 "%s: discrete action line", t->name);
    cr_expect_eq(strstr(entry, "\n    multiplier: approximates") != NULL, own && t->lambda_time != 0,
                 "%s: multiplier line", t->name);
    newton += own && t->newton != NULL;
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
Test(cli, info_header_and_cost_by_hand) {
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
Test(cli, info_trajectory_lists_its_h) {
  char path[128];
  static char out[1 << 16];
  results_file(path, sizeof path, "traj", "trajectory_particle.cfg", "");
  info_of(path, out, sizeof out);
  expect_has(out, "\n  h            0.1 0.05\n  reference    exact\n");
  remove(path);
}

/* nhbench info's grid of small_ensemble.cfg: the header lists beta2 = 0, 0.1, 0.4 and nothing
 * more; one row per beta (0, 0.1) with three cells, (0.1, 0.4) skipped (beta + beta2 = 1/2). */
Test(cli, info_grid_rows_and_columns) {
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
Test(cli, export_slopes_of_a_file_missing_a_column) {
  static char out[1 << 16];
  cr_expect_eq(after_deleting("onestep_random.cfg", "", "export %s slopes", "/onestep/summary/cond_max", out, sizeof out),
               2, "%s", out);
  cr_expect(strstr(out, "# index") == NULL, "a table was printed:\n%s", out);
}
