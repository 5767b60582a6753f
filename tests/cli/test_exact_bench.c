/* bench/: error paths of nhbench export, info and report, of claims files and of nhbench_bench
 * that no other test reached, each with its exact status and message (issue 16: a failure
 * mutated from -1 to +1 on the way must show). */
#include <criterion/criterion.h>
#include <hdf5.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench/claims/report.h"
#include "tests/helpers.h"

/* `nhbench ARGS`: its exit status, stdout into out and stderr into err. */
static int run_split(const char *args, char *out, size_t outlen, char *err, size_t errlen) {
  char cmd[2048], errf[128];
  snprintf(errf, sizeof errf, "/tmp/nhbench-exact-bench-%d.err", (int)getpid());
  snprintf(cmd, sizeof cmd, "%s %s 2>%s", NHBENCH_EXE, args, errf);
  const int status = test_run_command(cmd, out, outlen);
  FILE *f = fopen(errf, "r");
  cr_assert(f, "no %s", errf);
  size_t n = fread(err, 1, errlen - 1, f);
  err[n] = '\0';
  fclose(f);
  remove(errf);
  return status;
}

/* An index option given as the empty string is no index (parse_index), nor an empty --ics A: each
 * is refused with exit 2 before the file is read, although the file would take index 0. */
Test(exact_bench, export_refuses_empty_indices) {
  char path[128], args[512], out[4096], err[4096];
  test_results_file(path, sizeof path, "exact-bench", "empty", "ensemble_fixed.cfg", "--set T=0.4");
  static const struct {
    const char *args, *msg;
  } cases[] = {
      {"energy --method ''", "nhbench export: --method needs a whole number >= 0, not ''\n"},
      {"energy-all-methods --ic=", "nhbench export: --ic needs a whole number >= 0, not ''\n"},
      {"energy --ics :2", "nhbench export: --ics ':2': expected A:B (initial conditions A, ..., B-1), A: or A\n"},
  };
  for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
    snprintf(args, sizeof args, "export %s %s", path, cases[k].args);
    cr_expect_eq(run_split(args, out, sizeof out, err, sizeof err), 2, "%s: %s", cases[k].args, err);
    cr_expect_str_eq(out, "", "%s: stdout", cases[k].args);
    cr_expect(strncmp(err, cases[k].msg, strlen(cases[k].msg)) == 0, "%s:\n%s\nwanted:\n%s", cases[k].args, err,
              cases[k].msg);
  }
  snprintf(args, sizeof args, "export %s energy --method 0", path);
  cr_expect_eq(run_split(args, out, sizeof out, err, sizeof err), 0, "index 0 itself is taken: %s", err);
  remove(path);
}

/* The energy tables of an ensemble whose E0 is gone (read_base): exit 2, nothing on stdout, the
 * missing dataset named; the same file with E0 exports. */
Test(exact_bench, export_energy_without_E0) {
  char path[128], args[512], out[1 << 14], err[4096];
  test_results_file(path, sizeof path, "exact-bench", "noE0", "ensemble_fixed.cfg", "--set T=0.4");
  static const char *const tables[] = {"energy", "energy-all-methods"};
  for (int k = 0; k < 2; k++) {
    snprintf(args, sizeof args, "export %s %s", path, tables[k]);
    cr_expect_eq(run_split(args, out, sizeof out, err, sizeof err), 0, "%s before deleting E0: %s", tables[k], err);
  }
  hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  cr_assert_geq(f, 0);
  cr_assert_geq(H5Ldelete(f, "/ensemble/E0", H5P_DEFAULT), 0);
  H5Fclose(f);
  for (int k = 0; k < 2; k++) {
    snprintf(args, sizeof args, "export %s %s", path, tables[k]);
    cr_expect_eq(run_split(args, out, sizeof out, err, sizeof err), 2, "%s: %s", tables[k], err);
    cr_expect_str_eq(out, "", "%s: stdout", tables[k]);
    cr_expect(strstr(err, "E0") != NULL, "%s: the message does not name E0:\n%s", tables[k], err);
  }
  remove(path);
}

/* Runs `nhbench run tests/data/SPEC -o FILE SET`, checks that `nhbench COMMAND` (its "%s" the
 * file) succeeds, deletes OBJECT (a dataset or group; with ATTR the attribute ATTR of OBJECT) and
 * runs COMMAND again: its exit status, its stderr in err (the file removed). */
static int after_deleting(const char *spec, const char *set, const char *command, const char *object,
                          const char *attr, char *err, size_t errlen) {
  char path[128], args[512];
  static char out[1 << 16];
  test_results_file(path, sizeof path, "exact-bench", "damaged", spec, set);
  snprintf(args, sizeof args, command, path);
  cr_assert_eq(run_split(args, out, sizeof out, err, errlen), 0, "%s before deleting %s: %s", args, object, err);
  hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  cr_assert_geq(f, 0);
  if (attr) cr_assert_geq(H5Adelete_by_name(f, object, attr, H5P_DEFAULT), 0);
  else cr_assert_geq(H5Ldelete(f, object, H5P_DEFAULT), 0);
  H5Fclose(f);
  const int status = run_split(args, out, sizeof out, err, errlen);
  remove(path);
  return status;
}

/* nhbench info on a file that lacks what a section reads (a dataset, an attribute): exit 2 and
 * the missing object named, for each study kind's reader. */
Test(exact_bench, info_refuses_damaged_files) {
  static const struct {
    const char *spec, *set, *object, *attr, *needle;
  } cases[] = {
      {"order_claim.cfg", "", "/convergence/summary/wall_time", NULL, "summary/wall_time"},
      {"ensemble_fixed.cfg", "--set T=0.4", "/ensemble", "seed", "seed"},
      {"trajectory_particle.cfg", "--set T=0.4", "/trajectory/observables_last/q", NULL, "observables_last/q"},
      {"trajectory_particle.cfg", "--set T=0.4", "/trajectory/observables/q", NULL, "observables/q"},
      {"trajectory_particle.cfg", "--set T=0.4", "/trajectory/observables/q", "dimensions", "observables/q"},
      {"onestep_random.cfg", "", "/onestep", "npoints", "npoints"},
      {"work_precision_small.cfg", "", "/work_precision/pareto_time", NULL, "pareto_time"},
      {"work_precision_small.cfg", "", "/work_precision", "repeats", "repeats"},
  };
  for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
    char err[1 << 14];
    const int status =
        after_deleting(cases[k].spec, cases[k].set, "info %s", cases[k].object, cases[k].attr, err, sizeof err);
    cr_expect_eq(status, 2, "%s without %s %s: %s", cases[k].spec, cases[k].object, cases[k].attr ? cases[k].attr : "",
                 err);
    cr_expect(strstr(err, cases[k].needle) != NULL, "%s: the message does not name %s:\n%s", cases[k].spec,
              cases[k].needle, err);
  }
}

/* nhbench export on a file that lacks the dataset a table reads: exit 2 and the dataset named,
 * nothing printed after the header. */
Test(exact_bench, export_refuses_damaged_files) {
  static const struct {
    const char *command, *object, *needle;
  } cases[] = {
      {"export %s energy-all-methods --ic 0", "/ensemble/dE", "dE"},
      {"export %s energy --method 1", "/ensemble/dE", "dE"},
  };
  for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
    char err[1 << 14];
    const int status =
        after_deleting("ensemble_fixed.cfg", "--set T=0.4", cases[k].command, cases[k].object, NULL, err, sizeof err);
    cr_expect_eq(status, 2, "%s without %s: %s", cases[k].command, cases[k].object, err);
    cr_expect(strstr(err, cases[k].needle) != NULL, "%s: the message does not name %s:\n%s", cases[k].command,
              cases[k].needle, err);
  }
}

/* Descriptive attributes a file lacks (written by a tool of its own, or stripped) are shown as "?"
 * by info, which still succeeds: the root's system, spec, date, version, compiler and command, the
 * study's reference and norm. */
Test(exact_bench, info_shows_missing_descriptions_as_unknown) {
  char path[128], args[512], err[4096];
  static char out[1 << 16];
  test_results_file(path, sizeof path, "exact-bench", "unknown", "order_claim.cfg", "");
  hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  cr_assert_geq(f, 0);
  static const char *const root[] = {"system", "spec_file", "date", "version", "compiler", "command"};
  for (int i = 0; i < 6; i++) cr_assert_geq(H5Adelete_by_name(f, "/", root[i], H5P_DEFAULT), 0, "%s", root[i]);
  cr_assert_geq(H5Adelete_by_name(f, "/convergence", "reference", H5P_DEFAULT), 0);
  cr_assert_geq(H5Adelete_by_name(f, "/convergence", "norm", H5P_DEFAULT), 0);
  H5Fclose(f);
  snprintf(args, sizeof args, "info %s", path);
  cr_expect_eq(run_split(args, out, sizeof out, err, sizeof err), 0, "%s", err);
  const char *lines[] = {"\n  system       ?\n", "\n  spec         ?\n", "\n  written      ? by nhbench ? (?), ",
                         "\n  command      ?\n", "\n  reference    ?, tolerance 1e-13 (auto), estimated error 0\n",
                         "\nObserved order of the error at T, ?-norm over (q, v)"};
  for (int i = 0; i < 6; i++) cr_expect(strstr(out, lines[i]) != NULL, "no '%s' in:\n%s", lines[i], out);
  remove(path);
}

/* export observables of a trajectory file whose observable lost its component labels: exit 2, the
 * dataset named. */
Test(exact_bench, export_observables_refuses_a_damaged_file) {
  char err[1 << 14];
  const int status = after_deleting("trajectory_particle.cfg", "--set T=0.4", "export %s observables",
                                    "/trajectory/observables/q", "labels", err, sizeof err);
  cr_expect_eq(status, 2, "%s", err);
  cr_expect(strstr(err, "observables/q") != NULL, "the message does not name the dataset:\n%s", err);
}

/* Which options each export table takes, as `export --help` documents them: every table against
 * every option, on a file that does not exist (the options are checked first). An option the help
 * lists is accepted (the missing file is what fails); any other is refused by name. */
Test(exact_bench, export_tables_take_the_options_their_help_lists) {
  static const struct {
    const char *name, *value;
  } options[] = {{"--method", " 0"}, {"--ics", " 0:1"},        {"--relative", ""},  {"--ic", " 0"},
                 {"--methods", " 0"}, {"--grid", " 0"},        {"--stat", " final_var"}, {"--primary", ""},
                 {"--h", " 0"},       {"--observable", " q"}, {"--norm", " q_2"},    {"--at", " method=0"},
                 {"--field", " steps"}};
  static char help[1 << 14];
  char err[4096], args[256];
  cr_assert_eq(run_split("export --help", help, sizeof help, err, sizeof err), 0);
  int tables = 0, taken = 0;
  const char *first = strstr(help, "\ntables, any study:\n");
  cr_assert(first, "no table list in:\n%s", help);
  for (const char *line = first + 1; line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
    char name[32];
    /* a table's line: two spaces, a lower-case name, then its synopsis */
    if (line[0] != ' ' || line[1] != ' ' || !(line[2] >= 'a' && line[2] <= 'z') ||
        sscanf(line + 2, "%31[a-z_-]", name) != 1)
      continue;
    const char *end = strchr(line, '\n');
    tables++;
    for (size_t k = 0; k < sizeof options / sizeof *options; k++) {
      char bracket[32];
      snprintf(bracket, sizeof bracket, "[%s", options[k].name);
      const char *at = strstr(line, bracket);
      const int listed = at && at < end && (at[strlen(bracket)] == ' ' || at[strlen(bracket)] == ']');
      const char *operand = strcmp(name, "attr") == 0 ? " T" : strcmp(name, "dataset") == 0 ? " err" : "";
      snprintf(args, sizeof args, "export /nonexistent/x.h5 %s%s %s%s", name, operand, options[k].name,
               options[k].value);
      char out[256];
      cr_expect_eq(run_split(args, out, sizeof out, err, sizeof err), 2, "%s", args);
      char refusal[128];
      snprintf(refusal, sizeof refusal, "table '%s' takes no option %s", name, options[k].name);
      cr_expect_eq(strstr(err, refusal) == NULL, listed, "%s: %s", args, err);
      taken += listed;
    }
  }
  cr_expect_eq(tables, 19, "tables in the help:\n%s", help);
  cr_expect_eq(taken, 21, "options listed in the help");
}

/* export series of an ensemble that samples no observables: exit 2, nothing on stdout. */
Test(exact_bench, export_series_without_observables) {
  char path[128], args[512], out[4096], err[4096];
  test_results_file(path, sizeof path, "exact-bench", "noobs", "small_ensemble.cfg", "--set T=0.4");
  snprintf(args, sizeof args, "export %s series", path);
  cr_expect_eq(run_split(args, out, sizeof out, err, sizeof err), 2, "%s", err);
  cr_expect_str_eq(out, "");
  char want[256];
  snprintf(want, sizeof want, "nhbench export: %s has no sampled observables\n", path);
  cr_expect_str_eq(err, want);
  remove(path);
}

static const char not_verified_claims[] =
    "spec = \"s\";\nitems = (\n { item = \"1\"; claim = \"c\";\n"
    "   rows = ( { quantity = \"q\"; verdict = \"not-verified\"; reason = \"r\"; } ); }\n);\n";

/* nhbench report whose claims.csv cannot replace the old one (a directory, not empty, is in its
 * place: the temporary file is written, the rename fails): exit 2, the temporary file removed,
 * no REPORT.md written. */
Test(exact_bench, report_output_that_cannot_be_renamed_onto) {
  char dir[128], path[256], args[1024], out[4096], err[4096];
  snprintf(dir, sizeof dir, "/tmp/nhbench-exact-bench-%d-report", (int)getpid());
  snprintf(path, sizeof path, "%s/claims.csv", dir);
  cr_assert_eq(mkdir(dir, 0777), 0);
  cr_assert_eq(mkdir(path, 0777), 0);
  snprintf(path, sizeof path, "%s/claims.csv/keep", dir);
  test_write_file(path, "a file that keeps the directory non-empty\n");
  snprintf(path, sizeof path, "%s/t.claims", dir);
  test_write_file(path, not_verified_claims);
  snprintf(args, sizeof args, "report --results %s %s", dir, path);
  cr_expect_eq(run_split(args, out, sizeof out, err, sizeof err), 2, "%s", err);
  char want[512];
  snprintf(want, sizeof want, "nhbench report: cannot write %s/claims.csv\n", dir);
  cr_expect_str_eq(err, want);
  snprintf(args, sizeof args, "ls -A %s", dir);
  cr_expect_eq(test_run_command(args, out, sizeof out), 0);
  cr_expect_str_eq(out, "claims.csv\nt.claims\n", "left in the output directory");
  snprintf(args, sizeof args, "rm -rf %s", dir);
  cr_expect_eq(system(args), 0);
}

/* A selector of `at` that is neither a string nor a number: nh_claims_load's -1, the line named. */
Test(exact_bench, claims_selector_must_be_a_number) {
  char path[128], err[1024] = "";
  snprintf(path, sizeof path, "/tmp/nhbench-exact-bench-%d.claims", (int)getpid());
  test_write_file(path, "spec = \"s\";\nitems = (\n { item = \"1\"; claim = \"c\";\n"
                        "   rows = ( { quantity = \"q\"; file = \"f\"; data = \"d\";\n"
                        "     at = { h = true; }; expect = \"< 1\"; } ); }\n);\n");
  nh_claims c;
  cr_expect_eq(nh_claims_load(path, &c, err, sizeof err), -1);
  char want[256];
  snprintf(want, sizeof want, "%s:5: 'h' must be a number", path);
  cr_expect_str_eq(err, want);
  nh_claims_free(&c);
  remove(path);
}

/* nhbench_bench with an ENSEMBLE_SPEC it cannot load: the ensemble table is left out with the
 * error on stderr (the bench's figures are never a failure: exit 0). */
Test(exact_bench, bench_ensemble_spec_that_does_not_load) {
  char cmd[1024], out[1 << 14];
  snprintf(cmd, sizeof cmd, "%s --quick --only ensemble /nonexistent/spec.cfg 2>&1", NHBENCH_BENCH_EXE);
  cr_expect_eq(test_run_command(cmd, out, sizeof out), 0, "%s", out);
  const char *want = "bench: /nonexistent/spec.cfg: ";
  cr_expect(strncmp(out, want, strlen(want)) == 0, "%s", out);
  cr_expect(strstr(out, "speed-up") == NULL, "a table from no spec:\n%s", out);
}
