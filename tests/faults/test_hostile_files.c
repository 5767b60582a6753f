/* Results files from someone else (issue 47, README "Security"): a name that would be code in the
 * plot scripts' shell commands or gnuplot strings is refused by the reader (exit 2, the name shown
 * harmlessly), and plots/make_plots.sh neither runs it nor accepts a path that could end its
 * quoting. Each hostile name is one that ran a command before: the marker file must not appear. */
#include <criterion/criterion.h>
#include <hdf5.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tests/helpers.h"

/* Names that end a quoting level of the scripts (shell single quotes, gnuplot strings, awk
 * strings) or run a command substitution; %s is the marker file's path. */
static const char *const hostile[] = {
    "energy;touch${IFS}%s;true", "energy$(touch${IFS}%s)", "energy`touch${IFS}%s`", "rk4';touch${IFS}%s;'",
    "rk4\");system(\"touch${IFS}%s\");(\"", "energy;touch %s;true", "energy\ntouch %s",
};

/* The type nhbench writes its strings with: variable length, UTF-8. */
static hid_t utf8_strings(void) {
  hid_t t = H5Tcopy(H5T_C_S1);
  H5Tset_size(t, H5T_VARIABLE);
  H5Tset_cset(t, H5T_CSET_UTF8);
  return t;
}

/* Overwrites element 0 of the string dataset OBJ (variable length) by value. */
static void put_string_elem0(const char *path, const char *obj, const char *value) {
  hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  cr_assert_geq(f, 0, "%s", path);
  hid_t ds = H5Dopen2(f, obj, H5P_DEFAULT), sp = H5Dget_space(ds);
  cr_assert_geq(ds, 0, "%s", obj);
  const hssize_t n = H5Sget_simple_extent_npoints(sp);
  cr_assert(n >= 1 && n <= 16);
  hid_t t = utf8_strings();
  char *v[16];
  cr_assert_geq(H5Dread(ds, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, v), 0);
  char *keep = v[0];
  v[0] = (char *)value;
  cr_assert_geq(H5Dwrite(ds, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, v), 0);
  v[0] = keep;
  H5Dvlen_reclaim(t, sp, H5P_DEFAULT, v);
  H5Tclose(t), H5Sclose(sp), H5Dclose(ds), H5Fclose(f);
}

/* Renames the first observable of /trajectory/observables to value: its entry in the `order`
 * attribute (the observables' names) and its dataset, as a file made to look consistent would. */
static void rename_observable0(const char *path, const char *value) {
  hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  hid_t g = H5Gopen2(f, "/trajectory/observables", H5P_DEFAULT);
  cr_assert_geq(g, 0);
  hid_t a = H5Aopen(g, "order", H5P_DEFAULT), sp = H5Aget_space(a), t = utf8_strings();
  const hssize_t n = H5Sget_simple_extent_npoints(sp);
  cr_assert(n >= 1 && n <= 16);
  char *v[16];
  cr_assert_geq(H5Aread(a, t, v), 0);
  cr_assert_geq(H5Lmove(g, v[0], g, value, H5P_DEFAULT, H5P_DEFAULT), 0, "rename %s", v[0]);
  for (int i = 0; i < 2; i++) { /* its summaries */
    const char *summary = i ? "/trajectory/observables_max_abs" : "/trajectory/observables_last";
    hid_t sg = H5Gopen2(f, summary, H5P_DEFAULT);
    if (sg >= 0 && H5Lexists(sg, v[0], H5P_DEFAULT) > 0) H5Lmove(sg, v[0], sg, value, H5P_DEFAULT, H5P_DEFAULT);
    if (sg >= 0) H5Gclose(sg);
  }
  char *keep = v[0];
  v[0] = (char *)value;
  cr_assert_geq(H5Awrite(a, t, v), 0);
  v[0] = keep;
  H5Dvlen_reclaim(t, sp, H5P_DEFAULT, v);
  H5Tclose(t), H5Sclose(sp), H5Aclose(a), H5Gclose(g), H5Fclose(f);
}

/* Overwrites element 0 of the string attribute ATTR of object OBJ (variable length, scalar or a
 * list) by value. */
static void put_attr_elem0(const char *path, const char *obj, const char *attr, const char *value) {
  hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  cr_assert_geq(f, 0, "%s", path);
  hid_t o = H5Oopen(f, obj, H5P_DEFAULT);
  cr_assert_geq(o, 0, "%s", obj);
  hid_t a = H5Aopen(o, attr, H5P_DEFAULT), sp = H5Aget_space(a), t = utf8_strings();
  cr_assert_geq(a, 0, "%s of %s", attr, obj);
  const hssize_t n = H5Sget_simple_extent_npoints(sp);
  cr_assert(n >= 1 && n <= 16);
  char *v[16];
  cr_assert_geq(H5Aread(a, t, v), 0);
  char *keep = v[0];
  v[0] = (char *)value;
  cr_assert_geq(H5Awrite(a, t, v), 0);
  v[0] = keep;
  H5Dvlen_reclaim(t, sp, H5P_DEFAULT, v);
  H5Tclose(t), H5Sclose(sp), H5Aclose(a), H5Oclose(o), H5Fclose(f);
}

/* make_plots.sh on path: no command in it ran; skipped = 1: it skips the file (exit 1: the reader
 * refused something it reads), 0: it may also plot it (exit 0: it reads nothing refused). */
static void expect_no_command_ran(const char *path, const char *marker, int skipped) {
  static char out[1 << 16];
  char cmd[1024];
  snprintf(cmd, sizeof cmd,
           "cd /tmp && NHBENCH=%s PLOTS_DIR=/tmp/nhbench-hostile-%d-plots sh %s/plots/make_plots.sh %s 2>&1",
           NHBENCH_EXE, (int)getpid(), NHBENCH_SOURCE_DIR, path);
  const int rc = test_run_command(cmd, out, sizeof out);
  cr_expect(rc == 1 || (!skipped && rc == 0), "make_plots.sh: exit %d: %s", rc, out);
  cr_expect_neq(access(marker, F_OK), 0, "%s appeared: a name from the file ran as a command", marker);
  remove(marker);
}

/* A name that would be code: refused as no name (or, a line break in it, as no text). */
static void expect_refused(const char *path, const char *marker, const char *what) {
  static char out[1 << 16];
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "info %s", path);
  cr_expect_eq(test_run_nhbench(cmd, out, sizeof out), 2, "info: %s", out);
  cr_expect((strstr(out, what) && strstr(out, "not a name nhbench writes")) || strstr(out, "holds a control character"),
            "info's message: %s", out);
  snprintf(cmd, sizeof cmd, "export %s observables", path);
  cr_expect_eq(test_run_nhbench(cmd, out, sizeof out), 2, "export: %s", out);
  expect_no_command_ran(path, marker, 1);
}

/* The commands would run in /tmp (the script's directory here): the marker is named relative to it,
 * since an HDF5 name cannot hold a '/'. */
Test(hostile_files, names_that_would_be_code_are_refused, .timeout = 120) {
  char path[128], marker[128], relative[64], name[256];
  snprintf(relative, sizeof relative, "nhbench-hostile-%d-marker", (int)getpid());
  snprintf(marker, sizeof marker, "/tmp/%s", relative);
  for (size_t i = 0; i < sizeof hostile / sizeof *hostile; i++) {
    snprintf(name, sizeof name, hostile[i], relative);
    test_results_file(path, sizeof path, "hostile", "method", "trajectory_particle.cfg", "");
    put_string_elem0(path, "/trajectory/methods", name);
    expect_refused(path, marker, "method 0 is");
    test_results_file(path, sizeof path, "hostile", "observable", "trajectory_particle.cfg", "");
    rename_observable0(path, name);
    expect_refused(path, marker, "observable 0 is");
  }
  remove(path);
  char cmd[512];
  snprintf(cmd, sizeof cmd, "rm -rf /tmp/nhbench-hostile-%d-plots", (int)getpid());
  cr_assert_eq(system(cmd), 0);
}

/* A line break in any other string export prints (units, component labels, the `absent` text, an
 * initial condition's or a state component's name) would add a row to export's tables, which
 * make_plots.sh reads as data and hands to gnuplot (found by tests/fuzz/fuzz_results_edit): every
 * string but the spec's text is one line, else the file is refused. */
Test(hostile_files, text_with_a_line_break_is_refused, .timeout = 120) {
  char path[128], marker[128], relative[64], text[256];
  snprintf(relative, sizeof relative, "nhbench-hostile-%d-marker", (int)getpid());
  snprintf(marker, sizeof marker, "/tmp/%s", relative);
  snprintf(text, sizeof text, "1\n0 a';system('touch${IFS}%s');b=' 1 x", relative);
  /* Each string, and the command that prints it: it refuses the file (exit 2). */
  static const struct {
    const char *obj, *attr, *command, *what;
  } places[] = {
      {"/trajectory/observables/energy_error", "units", "export %s observables",
       "attribute 'units' of /trajectory/observables/energy_error"},
      {"/trajectory/observables/q", "labels", "export %s observables",
       "attribute 'labels' of /trajectory/observables/q, entry 0"},
      {"/trajectory/observables/multiplier", "absent", "export %s observables",
       "attribute 'absent' of /trajectory/observables/multiplier"},
      {"/trajectory/observables/q", "description", "export %s attr observables/q/description",
       "attribute 'description' of /trajectory/observables/q"},
      {"/trajectory/ic_names", NULL, "info %s", "dataset /trajectory/ic_names, entry 0"},
      {"/trajectory/methods", NULL, "export %s methods", "dataset /trajectory/methods, entry 0"},
  };
  for (size_t i = 0; i < sizeof places / sizeof *places; i++) {
    static char out[1 << 16];
    char cmd[512];
    test_results_file(path, sizeof path, "hostile", "text", "trajectory_particle.cfg", "");
    if (places[i].attr) put_attr_elem0(path, places[i].obj, places[i].attr, text);
    else put_string_elem0(path, places[i].obj, text);
    snprintf(cmd, sizeof cmd, places[i].command, path);
    cr_expect_eq(test_run_nhbench(cmd, out, sizeof out), 2, "%s: %s", cmd, out);
    cr_expect(strstr(out, places[i].what) && strstr(out, "holds a control character (byte 2, 0x0a)"), "%s: %s", cmd,
              out);
    expect_no_command_ran(path, marker, 0);
  }
  remove(path);
  char cmd[512];
  snprintf(cmd, sizeof cmd, "rm -rf /tmp/nhbench-hostile-%d-plots", (int)getpid());
  cr_assert_eq(system(cmd), 0);
}

/* A PLOTS_DIR with a quote, backslash or line break is refused before anything is plotted (exit 2);
 * the directory is not made. (Every name nhbench writes passes the reader's check: the examples'
 * files are plotted by plots/make_plots_draws_every_study_kind.) */
Test(hostile_files, paths_that_could_end_the_quoting_are_refused) {
  static char out[1 << 16];
  const char *const bad[] = {"/tmp/nhbench-q'uote", "/tmp/nhbench-back\\slash", "/tmp/nhbench-d\"quote"};
  char cmd[1024];
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    snprintf(cmd, sizeof cmd, "NHBENCH=%s PLOTS_DIR='%s' sh %s/plots/make_plots.sh %s/tests/data 2>&1", NHBENCH_EXE,
             i == 0 ? "/tmp/nhbench-q'\\''uote" : bad[i], NHBENCH_SOURCE_DIR, NHBENCH_SOURCE_DIR);
    cr_expect_eq(test_run_command(cmd, out, sizeof out), 2, "PLOTS_DIR=%s: %s", bad[i], out);
    cr_expect(strstr(out, "a quote, backslash or line break in a path"), "%s", out);
    cr_expect_neq(access(bad[i], F_OK), 0, "%s was made", bad[i]);
  }
}
