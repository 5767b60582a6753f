/* bench/: the nhbench command line through the real binary, each printed figure compared with what
 * the test reads itself from the results file (the HDF5 datasets and attributes, through the
 * results/ reader or the HDF5 API) or computes by hand; exit codes and messages of the error paths
 * (issue 16, a second round of mutation robustness). */
#include <criterion/criterion.h>
#include <hdf5.h>
#include <hdf5_hl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/claims/report.h"
#include "core/lanes.h"
#include "results/results.h"
#include "studies/kinds.h"
#include "studies/observables.h"
#include "studies/settings.h"
#include "studies/study.h"
#include "tests/helpers.h"

#define DATA NHBENCH_SOURCE_DIR "/tests/data/"

static char out[1 << 18];

static void expect_has(const char *text, const char *needle) {
  cr_expect(strstr(text, needle) != NULL, "'%s' not in:\n%.4000s", needle, text);
}

/* test_results_file (tests/helpers.h) with this file's prefix. */
static void results_file(char *path, size_t len, const char *tag, const char *spec, const char *set) {
  test_results_file(path, len, "cli-output", tag, spec, set);
}

/* `nhbench FMT` with FMT's one %s the path; the exit status, the output in out. */
static int nhb_on(const char *fmt, const char *path) {
  char args[1024];
  snprintf(args, sizeof args, fmt, path);
  return test_run_nhbench(args, out, sizeof out);
}

/* The shortest "%.17g"-or-shorter form of v that reads back exactly (as the export promises). */
static void shortest(char *buf, size_t len, double v) {
  if (isnan(v)) {
    snprintf(buf, len, "NaN");
    return;
  }
  for (int p = 1; p <= 17; p++) {
    snprintf(buf, len, "%.*g", p, v);
    if (strtod(buf, NULL) == v) return;
  }
}

/* ---- nhbench info: its arguments ------------------------------------------------------------ */

/* info takes exactly one FILE: a second argument is refused with exit 2, naming it (before the
 * file is even opened), no FILE is refused too, and -h prints the usage on stdout with exit 0. */
Test(cli_output, info_takes_exactly_one_file) {
  cr_expect_eq(test_run_nhbench("info /nonexistent/a.h5 extra", out, sizeof out), 2);
  const char *msg = "nhbench info: unexpected argument 'extra'\nusage: nhbench info [-h | --help] [--datasets] FILE.h5\n";
  cr_expect(strncmp(out, msg, strlen(msg)) == 0, "%s", out);
  cr_expect_eq(test_run_nhbench("info a.h5 b.h5 c.h5", out, sizeof out), 2);
  cr_expect(strncmp(out, "nhbench info: unexpected argument 'b.h5'\n", 41) == 0, "%s", out);
  cr_expect_eq(test_run_nhbench("info", out, sizeof out), 2);
  cr_expect(strncmp(out, "nhbench info: no FILE.h5 given\nusage: nhbench info", 50) == 0, "%s", out);
  cr_expect_eq(test_run_nhbench("info --bogus x.h5", out, sizeof out), 2);
  cr_expect(strncmp(out, "nhbench info: unknown option '--bogus'\n", 39) == 0, "%s", out);
  cr_expect_eq(test_run_nhbench("info -h 2>/dev/null", out, sizeof out), 0);
  cr_expect(strncmp(out, "usage: nhbench info [-h | --help] [--datasets] FILE.h5\n", 55) == 0, "%s", out);
  cr_expect_eq(test_run_nhbench("info x.h5 --help", out, sizeof out), 0);
  cr_expect(strncmp(out, "usage: nhbench info", 19) == 0, "%s", out);
}

/* ---- observables and series: labels put into the file by the test ---------------------------- */

/* Opens dataset OBJ of the results file at PATH for writing; the file's id in *file. */
static hid_t open_to_write(const char *path, const char *obj, hid_t *file) {
  *file = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  cr_assert_geq(*file, 0, "%s", path);
  hid_t ds = H5Dopen2(*file, obj, H5P_DEFAULT);
  cr_assert_geq(ds, 0, "%s", obj);
  return ds;
}

/* Overwrites the int dataset OBJ of the results file at PATH by the first of the N values of v
 * (it must hold no more). */
static void overwrite_ints(const char *path, const char *obj, const int *v, int n) {
  hid_t f, ds = open_to_write(path, obj, &f);
  hid_t sp = H5Dget_space(ds);
  const hssize_t size = H5Sget_simple_extent_npoints(sp);
  cr_assert(size > 0 && size <= n, "%s: %lld values", obj, (long long)size);
  cr_assert_geq(H5Dwrite(ds, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v), 0);
  H5Sclose(sp), H5Dclose(ds), H5Fclose(f);
}

/* Replaces the `labels` attribute of /trajectory/observables/NAME by "lab 0", "lab 1", ... (one
 * per component, blanks included) and returns the width. */
static int relabel(const char *path, const char *name) {
  char obj[256];
  snprintf(obj, sizeof obj, "/trajectory/observables/%s", name);
  hid_t f, ds = open_to_write(path, obj, &f);
  hid_t sp = H5Dget_space(ds);
  hsize_t dims[8];
  const int rank = H5Sget_simple_extent_dims(sp, dims, NULL);
  H5Sclose(sp);
  const int width = (int)dims[rank - 1];
  cr_assert(width >= 1 && width <= 8);
  char text[8][16];
  const char *labels[8];
  for (int c = 0; c < width; c++) snprintf(text[c], sizeof text[c], "lab %d", c), labels[c] = text[c];
  cr_assert_geq(H5Adelete(ds, "labels"), 0);
  hid_t t = H5Tcopy(H5T_C_S1);
  H5Tset_size(t, H5T_VARIABLE);
  hsize_t n = (hsize_t)width;
  hid_t as = H5Screate_simple(1, &n, NULL);
  hid_t a = H5Acreate2(ds, "labels", t, as, H5P_DEFAULT, H5P_DEFAULT);
  cr_assert_geq(H5Awrite(a, t, labels), 0);
  H5Aclose(a), H5Sclose(as), H5Tclose(t), H5Dclose(ds), H5Fclose(f);
  return width;
}

/* export observables' axis label: the file's `symbol` where it has one (here rewritten), else (a
 * file from before symbols were kept) the observables registry's. */
Test(cli_output, export_observables_symbol_from_the_file_else_the_registry) {
  char path[128];
  results_file(path, sizeof path, "sym", "trajectory_particle.cfg", "--set T=0.4");
  hid_t f, ds = open_to_write(path, "/trajectory/observables/q", &f);
  cr_assert_geq(H5Adelete(ds, "symbol"), 0);
  hid_t t = H5Tcopy(H5T_C_S1);
  H5Tset_size(t, H5T_VARIABLE);
  hid_t as = H5Screate(H5S_SCALAR);
  hid_t a = H5Acreate2(ds, "symbol", t, as, H5P_DEFAULT, H5P_DEFAULT);
  const char *mine = "S_{file}";
  cr_assert_geq(H5Awrite(a, t, &mine), 0);
  H5Aclose(a), H5Sclose(as), H5Tclose(t), H5Dclose(ds), H5Fclose(f);
  ds = open_to_write(path, "/trajectory/observables/energy_error", &f);
  cr_assert_geq(H5Adelete(ds, "symbol"), 0);
  H5Dclose(ds), H5Fclose(f);
  cr_assert_eq(nhb_on("export %s observables", path), 0, "%s", out);
  expect_has(out, "\n0 q 3 as q\n#   components: q[0], q[1], q[2]\n#   scale: linear\n#   symbol: S_{file}\n");
  expect_has(out, "\n2 energy_error 1 energy\n#   components: value\n#   scale: log (|value|)\n#   symbol: E − E_0\n");
  remove(path);
}

/* A spec's `labels` (issue 49 item 5) are kept in the file, `method_labels` [method], "" where the
 * spec gave none, and `export methods` shows them in its label column; the other methods get their
 * automatic labels, '_' escaped for enhanced text, in every format. A spec without labels writes no
 * method_labels (the files of the studies before stay as they were). */
Test(cli_output, spec_labels_kept_and_exported) {
  char spec[128], path[128], args[512];
  snprintf(spec, sizeof spec, "/tmp/nhbench-cli-output-%d-labels.cfg", (int)getpid());
  snprintf(path, sizeof path, "/tmp/nhbench-cli-output-%d-labels.h5", (int)getpid());
  const char *common =
      "study = \"convergence\";\nsystem = \"particle\";\nT = 0.4;\nh = [0.1, 0.05, 0.025];\n"
      "methods = [\"rk4\", \"nh_newmark(beta=0.1,beta2=0.1)\", \"nh_newmark(alpha=0.5235987755982988)\"];\n";
  char text[1024];
  snprintf(text, sizeof text, "%slabels = ( [\"nh_newmark(beta2=0.1,beta=0.1)\", \"Ψ^{0.1}_h 'a'\"] );\n", common);
  test_write_file(spec, text);
  snprintf(args, sizeof args, "run %s -o %s", spec, path);
  cr_assert_eq(test_run_nhbench(args, out, sizeof out), 0, "%s", out);
  nh_h5 f;
  cr_assert_eq(nh_h5_open(&f, "test", path), 0);
  int n = 0;
  char **labels = nh_h5_strings(&f, "method_labels", "method", &n);
  cr_assert_not_null(labels);
  cr_assert_eq(n, 3);
  cr_expect_str_eq(labels[0], "");
  cr_expect_str_eq(labels[1], "Ψ^{0.1}_h 'a'");
  cr_expect_str_eq(labels[2], "");
  nh_h5_free_strings(labels, n);
  nh_h5_close(&f);
  cr_expect_eq(nhb_on("export %s methods", path), 0, "%s", out);
  cr_expect_str_eq(out,
                   "# index name label (label: to the end of the line)\n0 rk4 rk4\n"
                   "1 nh_newmark(beta=0.1,beta2=0.1,alpha=0.5,constraint=point) Ψ^{0.1}_h 'a'\n"
                   "2 nh_newmark(beta=0,beta2=0,alpha=0.5235987755982988,constraint=point) nh\\_newmark(alpha=π/6)\n");
  cr_expect_eq(nhb_on("export %s methods --format tsv", path), 0, "%s", out);
  cr_expect_str_eq(
      out, "index\tname\tlabel\n0\trk4\trk4\n"
           "1\tnh_newmark(beta=0.1,beta2=0.1,alpha=0.5,constraint=point)\tΨ^{0.1}_h 'a'\n"
           "2\tnh_newmark(beta=0,beta2=0,alpha=0.5235987755982988,constraint=point)\tnh\\_newmark(alpha=π/6)\n");
  cr_expect_eq(nhb_on("export %s methods --primary --format csv", path), 0, "%s", out);
  expect_has(out, "\n1,\"nh_newmark(beta=0.1,beta2=0.1,alpha=0.5,constraint=point)\",Ψ^{0.1}_h 'a'\n");
  /* A label with '"' (a file nhbench did not write) would split the plots' word lists: refused. */
  hid_t file, ds = open_to_write(path, "/convergence/method_labels", &file);
  hid_t type = H5Dget_type(ds);
  cr_assert_gt(H5Tis_variable_str(type), 0);
  const char *quoted[] = {"", "say \"hi\"", ""};
  cr_assert_geq(H5Dwrite(ds, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, quoted), 0);
  H5Tclose(type), H5Dclose(ds), H5Fclose(file);
  cr_expect_eq(nhb_on("export %s methods", path), 2, "%s", out);
  expect_has(out, "method_labels[1] holds a '\"': not a label nhbench writes\n");
  /* Without labels: no method_labels, the automatic labels alone. */
  test_write_file(spec, common);
  cr_assert_eq(test_run_nhbench(args, out, sizeof out), 0, "%s", out);
  cr_assert_eq(nh_h5_open(&f, "test", path), 0);
  cr_expect_eq(nh_h5_has(&f, "method_labels"), 0);
  nh_h5_close(&f);
  cr_expect_eq(nhb_on("export %s methods", path), 0, "%s", out);
  expect_has(out, "\n1 nh_newmark(beta=0.1,beta2=0.1,alpha=0.5,constraint=point) nh\\_newmark(beta=0.1,beta2=0.1)\n");
  remove(spec), remove(path);
}

/* Overwrites the `status` dataset of the study's group (/GROUP/status) by 0, 1, 2, ...: every run's
 * status then names its cell, so a header that shows another run's status is seen. */
static void number_statuses(const char *path, const char *group) {
  char obj[256];
  snprintf(obj, sizeof obj, "/%s/status", group);
  int v[64];
  for (int i = 0; i < 64; i++) v[i] = i;
  overwrite_ints(path, obj, v, 64);
}

/* export observables: per observable (in the file's order) its index, name, width and units, then
 * "#   components: L0, L1, ..., Lw-1" (commas between, none after the last) and a comment per
 * method that does not define it; all as the file holds them (read here through results/). */
Test(cli_output, export_observables_lists_labels_and_absences) {
  char path[128];
  results_file(path, sizeof path, "obs", "trajectory_particle.cfg", "--set T=0.4");
  const int wq = relabel(path, "q");
  cr_assert_gt(wq, 1, "q has several components");
  nh_h5 f;
  cr_assert_eq(nh_h5_open(&f, "test", path), 0);
  int nobs = 0;
  nh_h5_observable *obs = NULL;
  cr_assert_eq(nh_h5_read_observables(&f, &nobs, &obs), 0);
  cr_assert_eq(nobs, 4, "q, error_q_max, energy_error, multiplier");
  static const char *const names[] = {"q", "error_q_max", "energy_error", "multiplier"};
  for (int i = 0; i < nobs; i++) cr_assert_str_eq(obs[i].name, names[i], "in the spec's order");
  char want[1 << 14];
  size_t len = (size_t)snprintf(want, sizeof want, "# index name width units\n");
  int absences = 0;
  for (int i = 0; i < nobs; i++) {
    len += (size_t)snprintf(want + len, sizeof want - len, "%d %s %d %s\n#   components:", i, obs[i].name,
                            obs[i].width, obs[i].units);
    for (int c = 0; c < obs[i].width; c++)
      len += (size_t)snprintf(want + len, sizeof want - len, " %s%s", obs[i].labels[c], c < obs[i].width - 1 ? "," : "");
    /* The plots' scale: |value| on a log scale for the error and the energy drift (README, "Plots"). */
    static const char *const scale[] = {"linear", "log (|value|)", "log (|value|)", "linear"};
    /* The axis label: the file's symbol, the observables registry's. */
    static const char *const symbol[] = {"q", "‖q − q_{ref}‖_∞", "E − E_0", "λ"};
    cr_expect_str_eq(obs[i].symbol, symbol[i]);
    len += (size_t)snprintf(want + len, sizeof want - len, "\n#   scale: %s\n#   symbol: %s\n", scale[i], symbol[i]);
    for (int m = 0; m < f.nmethods; m++)
      if (obs[i].absent[m][0]) {
        len += (size_t)snprintf(want + len, sizeof want - len, "#   absent for method %d: %s\n", m, obs[i].absent[m]);
        absences++;
      }
  }
  cr_expect_gt(absences, 0, "rk4 defines no multiplier");
  cr_expect(strstr(want, "#   components: lab 0, lab 1"), "the relabelled q:\n%s", want);
  cr_expect_eq(nhb_on("export %s observables", path), 0, "%s", out);
  cr_expect_str_eq(out, want);
  nh_h5_free_observables(nobs, obs);
  nh_h5_close(&f);
  remove(path);
}

/* export series of a trajectory run other than the first (method 1, h[1], IC 1): the header names
 * the columns by their labels with blanks as '_', the observable, its units, the method, the h
 * index, the IC and the run's status; then nsamples_h[1] rows of t and the components, each
 * number the file's to the bit. At divergence = 1e-5 nh_newmark's runs stop as diverged and
 * rk4's do not, so the status shown is that run's and no other method's. */
/* export dims, steps and ics: the coordinates the other tables index, against the spec's settings
 * and the presets' documented states (systems/particle.c: spec/discretization.md 3.2,
 * spec/newmark.md 3.1). */
Test(cli_output, export_coordinates_of_a_trajectory_and_an_ensemble) {
  static char out[1 << 16];
  char path[128], args[256];
  results_file(path, sizeof path, "coords", "trajectory_particle.cfg", "");
  snprintf(args, sizeof args, "export %s steps", path);
  cr_assert_eq(test_run_nhbench(args, out, sizeof out), 0, "%s", out);
  cr_expect_str_eq(out, "# index h\n0 0.1\n1 0.05\n");
  snprintf(args, sizeof args, "export %s ics", path);
  cr_assert_eq(test_run_nhbench(args, out, sizeof out), 0, "%s", out);
  cr_expect_str_eq(out, "# index q[0] q[1] q[2] v[0] v[1] v[2] name\n"
                        "0 0 0.3 0 1 0.8 0.3 discretization\n"
                        "1 1 1 -1 1 -1 1 newmark\n");
  snprintf(args, sizeof args, "export %s dims", path);
  cr_assert_eq(test_run_nhbench(args, out, sizeof out), 0, "%s", out);
  cr_expect(strncmp(out, "# name size\n", 12) == 0, "%s", out);
  /* T = 2, a sample every 2 steps: 11 samples of h = 0.1, 21 of h = 0.05. */
  const char *const dims[] = {"\nmethod 2\n", "\nh 2\n", "\nic 2\n", "\nsample 21\n", "\nstate 6\n", "\ndof 3\n"};
  for (size_t i = 0; i < sizeof dims / sizeof *dims; i++) expect_has(out, dims[i]);
  cr_expect_null(strstr(out, "\ncomponent "), "an observable's components differ from dataset to dataset");
  unlink(path);

  results_file(path, sizeof path, "coords-ens", "small_ensemble.cfg", "");
  snprintf(args, sizeof args, "export %s steps", path);
  cr_assert_eq(test_run_nhbench(args, out, sizeof out), 0, "%s", out);
  cr_expect_str_eq(out, "# index h\n0 0.2\n", "an ensemble's one h");
  snprintf(args, sizeof args, "export %s dims", path);
  cr_assert_eq(test_run_nhbench(args, out, sizeof out), 0, "%s", out);
  /* T = 20, h = 0.2, a sample every 2 steps: 51 samples; a grid's values are the grid's own. */
  const char *const ens_dims[] = {"\nic 5\n", "\nsample 51\n"};
  for (size_t i = 0; i < sizeof ens_dims / sizeof *ens_dims; i++) expect_has(out, ens_dims[i]);
  cr_expect_null(strstr(out, "\nvalue0 "), "%s", out);
  snprintf(args, sizeof args, "export %s ics", path);
  cr_assert_eq(test_run_nhbench(args, out, sizeof out), 0, "%s", out);
  int lines = 0;
  for (const char *p = out; (p = strchr(p, '\n')); p++) lines++;
  cr_expect_eq(lines, 6, "a header and 5 initial conditions:\n%s", out);
  expect_has(out, " random 4\n");
  cr_expect(strstr(out, "\n4 ") != NULL, "%s", out);
  unlink(path);
}

Test(cli_output, export_series_of_one_run_to_the_bit) {
  char path[128];
  results_file(path, sizeof path, "series", "trajectory_particle.cfg", "--set T=0.4 --set divergence=1e-5");
  const int w = relabel(path, "q");
  nh_h5 f;
  cr_assert_eq(nh_h5_open(&f, "test", path), 0);
  const long long nh = nh_h5_dim(&f, "h"), nic = nh_h5_dim(&f, "ic");
  cr_assert(nh == 2 && nic == 2 && f.nmethods == 2, "%lld h, %lld ICs, %d methods", nh, nic, f.nmethods);
  int *nsh = nh_h5_ints(&f, "nsamples_h", "h", NULL);
  int *status = nh_h5_ints(&f, "status", "method,h,ic", NULL);
  long long one = 1;
  double *t = nh_h5_doubles_at(&f, "t", "h,sample", 1, &one, NULL);
  const long long idx[3] = {1, 1, 1};
  double *x = nh_h5_doubles_at(&f, "observables/q", "method,h,ic,sample,component", 3, idx, NULL);
  char *units = nh_h5_attr_string(&f, "observables/q", "units");
  cr_assert(nsh && status && t && x && units);
  const long long run = (1 * nh + 1) * nic + 1, rk4_run = (0 * nh + 1) * nic + 1; /* [method][h][ic] */
  cr_assert(status[run] == NH_RUN_DIVERGED && status[rk4_run] == 0);
  /* T = 0.4, h = 0.05, a sample every 2 steps: t = 0, 0.1, 0.2, 0.3, 0.4. */
  cr_expect_eq(nsh[1], 5);
  char want[1 << 14];
  size_t len = (size_t)snprintf(want, sizeof want, "# t");
  for (int c = 0; c < w; c++) len += (size_t)snprintf(want + len, sizeof want - len, " lab_%d", c);
  len += (size_t)snprintf(want + len, sizeof want - len, "\n# q [%s] of method 1 %s, h index 1, IC 1, status %d\n", units,
                          f.methods[1], status[run]);
  for (int s = 0; s < nsh[1]; s++) {
    char num[40];
    shortest(num, sizeof num, t[s]);
    len += (size_t)snprintf(want + len, sizeof want - len, "%s", num);
    for (int c = 0; c < w; c++) {
      shortest(num, sizeof num, x[s * w + c]);
      len += (size_t)snprintf(want + len, sizeof want - len, " %s", num);
    }
    len += (size_t)snprintf(want + len, sizeof want - len, "\n");
  }
  cr_expect_eq(nhb_on("export %s series --method 1 --h 1 --ic 1", path), 0, "%s", out);
  cr_expect_str_eq(out, want);
  /* The multiplier of rk4 (method 0): NaN throughout, and the comment says why. */
  cr_expect_eq(nhb_on("export %s series --observable multiplier --method 0 --h 0 --ic 1", path), 0, "%s", out);
  expect_has(out, "\n# absent for this method: ");
  expect_has(out, ", h index 0, IC 1, status 0\n");
  free(nsh), free(status), free(t), free(x), free(units);
  nh_h5_close(&f);
  remove(path);
}

/* ---- nhbench info: its tables read back and checked against the file ---------------------- */

/* The printed figure `text` against the value `want` it stands for, whatever format printed it:
 * "-" for NaN, else a number within half a unit of its last printed digit of want ("6.24e-04":
 * 5e-7; "0.000128": 5e-7; "160": 0.5). */
static int printed_agrees(const char *text, double want) {
  if (strcmp(text, "-") == 0) return isnan(want);
  if (isnan(want)) return 0;
  char *end;
  const double v = strtod(text, &end);
  if (end == text || *end != '\0') return 0;
  const char *e = strpbrk(text, "eE"), *dot = strchr(text, '.');
  const char *mantissa_end = e ? e : text + strlen(text);
  const int decimals = dot && dot < mantissa_end ? (int)(mantissa_end - dot - 1) : 0;
  const double unit = pow(10, (e ? atoi(e + 1) : 0) - decimals);
  return fabs(v - want) <= 0.5 * unit + 4e-16 * fabs(want);
}

/* A method name as a table shows it: whole, or cut and ended by "..." (a proper prefix of it). */
static int name_shown_as(const char *shown, const char *full) {
  const size_t n = strlen(shown);
  if (strcmp(shown, full) == 0) return 1;
  return n > 3 && strcmp(shown + n - 3, "...") == 0 && strlen(full) > n - 3 && strncmp(shown, full, n - 3) == 0;
}

/* The line at *p (without its newline) into buf; *p moves past it. 0 at the end of the text. */
static int next_line(const char **p, char *buf, size_t len) {
  if (**p == '\0') return 0;
  const size_t n = strcspn(*p, "\n");
  snprintf(buf, len, "%.*s", (int)n, *p);
  *p += n + ((*p)[n] == '\n');
  return 1;
}

/* The words of `line` are `words` in order, blanks of any width between them. */
static int heading_is(const char *line, const char *const *words, int n) {
  const char *p = line;
  for (int i = 0; i < n; i++) {
    while (*p == ' ') p++;
    const size_t k = strlen(words[i]);
    if (strncmp(p, words[i], k) != 0 || (p[k] != ' ' && p[k] != '\0')) return 0;
    p += k;
  }
  while (*p == ' ') p++;
  return *p == '\0';
}

/* The line of `text` that follows the first line containing `needle` (its heading), or NULL. */
static const char *after_line_with(const char *text, const char *needle) {
  const char *at = strstr(text, needle);
  if (!at) return NULL;
  at = strchr(at, '\n');
  return at ? at + 1 : NULL;
}

/* The results file's first grid made one over parameters named p0 and p1 (variable-length strings,
 * as the writer stores them) whose first takes the values 0.25 and 0.375. */
static void edit_grid(const char *path, const char *p0, const char *p1) {
  hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  cr_assert_geq(f, 0, "%s", path);
  const char *value[2] = {p0, p1}, *name[2] = {"param0", "param1"};
  hid_t t = H5Tcopy(H5T_C_S1), sp = H5Screate(H5S_SCALAR);
  H5Tset_size(t, H5T_VARIABLE);
  for (int k = 0; k < 2; k++) {
    cr_assert_geq(H5Adelete_by_name(f, "/ensemble/grid0", name[k], H5P_DEFAULT), 0);
    hid_t a = H5Acreate_by_name(f, "/ensemble/grid0", name[k], t, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    cr_assert_geq(H5Awrite(a, t, &value[k]), 0);
    H5Aclose(a);
  }
  const double values0[2] = {0.25, 0.375};
  hid_t ds = H5Dopen2(f, "/ensemble/grid0/values0", H5P_DEFAULT);
  cr_assert_geq(H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values0), 0);
  H5Dclose(ds), H5Sclose(sp), H5Tclose(t), H5Fclose(f);
}

/* The grid's table of an ensemble (2 x 3 over its two parameters) in the info output `text`,
 * read back: the corner "P0 \\ P1" right-aligned in a first column as wide as the corner but at
 * least 10 (with its two leading blanks), the second parameter's values after it; a row per value
 * of the first, labelled by it in that column, then per cell "skip" where no method ran, "fail" where
 * no IC ran to T, else the median over the ICs of max_t |dE| of the cell's method, "*" after it when
 * some IC failed. Each value against the file's at its printed precision. */
static void expect_grid_table(const char *text, const nh_h5_grid *g, const nh_ensemble_summary *sum,
                              const char *corner) {
  const char *p = after_line_with(text, "(fail: every IC failed; skip: ");
  cr_assert_not_null(p, "no grid table in:\n%s", text);
  const int w = (int)strlen(corner) < 10 ? 10 : (int)strlen(corner);
  char line[512], field[64];
  cr_assert(next_line(&p, line, sizeof line));
  const size_t lead = strspn(line + 2, " ");
  cr_expect(strncmp(line, "  ", 2) == 0 && (int)(lead + strlen(corner)) == w &&
                strncmp(line + 2 + lead, corner, strlen(corner)) == 0,
            "corner '%s' right-aligned in %d columns: '%s'", corner, w, line);
  const char *q = line + 2 + w;
  for (int j = 0; j < 3; j++) {
    int used = 0;
    cr_assert_eq(sscanf(q, "%63s%n", field, &used), 1, "column %d in '%s'", j, line);
    cr_expect(printed_agrees(field, g->values[1][j]), "column %d: %s, file %.17g", j, field, g->values[1][j]);
    q += used;
  }
  cr_expect(*q == '\0', "after the columns: '%s'", q);
  for (int i = 0; i < 2; i++) {
    cr_assert(next_line(&p, line, sizeof line), "row %d missing", i);
    char label[64];
    snprintf(label, sizeof label, "%.*s", w, line + 2);
    cr_expect(label[strlen(label) - 1] != ' ' && printed_agrees(label + strspn(label, " "), g->values[0][i]),
              "row %d: label '%s' (right-aligned in %d columns), file %.17g", i, label, w, g->values[0][i]);
    q = line + 2 + w;
    for (int j = 0; j < 3; j++) {
      int used = 0;
      cr_assert_eq(sscanf(q, "%63s%n", field, &used), 1, "cell (%d, %d) in '%s'", i, j, line);
      q += used;
      const int m = g->method_index[i * 3 + j];
      if (m < 0) {
        cr_expect_str_eq(field, "skip", "cell (%d, %d)", i, j);
        continue;
      }
      if (sum[m].ok == 0) {
        cr_expect_str_eq(field, "fail", "cell (%d, %d)", i, j);
        continue;
      }
      const size_t n = strlen(field);
      const int star = n > 0 && field[n - 1] == '*';
      if (star) field[n - 1] = '\0';
      cr_expect_eq(star, sum[m].failures > 0, "cell (%d, %d): '*' iff some IC failed (%d)", i, j, sum[m].failures);
      cr_expect(printed_agrees(field, sum[m].median_max_abs_dE), "cell (%d, %d): %s, file %.17g", i, j, field,
                sum[m].median_max_abs_dE);
    }
    cr_expect(*q == '\0', "row %d ends with blanks: '%s'", i, line);
  }
}

/* The rows of the info table whose column heading is `heading` (n words), read back up to its
 * blank line: the spec's methods in order, then under "  grid methods not listed in the spec:" the
 * grid's; check(m, line after the index) checks a row. Every method has its row. */
static void expect_method_rows(const char *text, const char *const *heading, int n, const nh_h5 *f,
                               void (*check)(int m, const char *row, void *data), void *data) {
  const char *p = text;
  char line[1024];
  int found = 0;
  while (!found && next_line(&p, line, sizeof line)) found = heading_is(line, heading, n);
  cr_assert(found, "no table headed %s ... %s in:\n%s", heading[0], heading[n - 1], text);
  int pass = 0, seen = 0, next = 0;
  while (next_line(&p, line, sizeof line) && line[0]) {
    if (strcmp(line, "  grid methods not listed in the spec:") == 0) {
      cr_expect_eq(pass, 0, "one grid heading");
      pass = 1;
      continue;
    }
    int m = -1, used = 0;
    cr_assert_eq(sscanf(line, "%d%n", &m, &used), 1, "row: '%s'", line);
    cr_assert(m >= 0 && m < f->nmethods, "row of method %d", m);
    cr_expect_eq(f->primary[m], !pass, "method %d in the %s part", m, pass ? "grid's" : "spec's");
    cr_expect_geq(m, next, "method %d after %d", m, next - 1);
    next = m + 1;
    check(m, line + used, data);
    seen++;
  }
  cr_expect_eq(seen, f->nmethods, "%d rows for %d methods", seen, f->nmethods);
}

typedef struct {
  const nh_h5 *f;
  const nh_ensemble_summary *sum;
  const nh_cost *cost;
  const double *wall;
} ens_tables;

/* An energy-table row: failed/all ICs, the largest and median max_t |dE|, the mean drift slope and
 * the variance at T, the name. */
static void check_energy_row(int m, const char *row, void *data) {
  const ens_tables *e = data;
  const nh_ensemble_summary *s = &e->sum[m];
  int failed = -1, all = -1, used = 0;
  char a[32], b[32], c[32], d[32];
  cr_assert_eq(sscanf(row, " %d/%d %31s %31s %31s %31s %n", &failed, &all, a, b, c, d, &used), 6, "'%s'", row);
  cr_expect(failed == s->failures && all == s->ok + s->failures && all == 5, "method %d: %d/%d", m, failed, all);
  cr_expect(printed_agrees(a, s->max_max_abs_dE), "method %d: max|dE| %s, file %.17g", m, a, s->max_max_abs_dE);
  cr_expect(printed_agrees(b, s->median_max_abs_dE), "method %d: median %s, file %.17g", m, b, s->median_max_abs_dE);
  cr_expect(printed_agrees(c, s->mean_drift_slope), "method %d: slope %s, file %.17g", m, c, s->mean_drift_slope);
  cr_expect(printed_agrees(d, s->final_var), "method %d: var %s, file %.17g", m, d, s->final_var);
  cr_expect(name_shown_as(row + used, e->f->methods[m]), "method %d: '%s' for %s", m, row + used, e->f->methods[m]);
}

/* A cost-table row: the largest constraint residual, the step, rhs, Newton and constraint counts
 * (exact), the wall time, the name. */
static void check_cost_row(int m, const char *row, void *data) {
  const ens_tables *e = data;
  const nh_cost *c = &e->cost[m];
  unsigned long long steps, rhs, newton, constr;
  char resid[32], wall[32];
  int used = 0;
  cr_assert_eq(sscanf(row, " %31s %llu %llu %llu %llu %31s %n", resid, &steps, &rhs, &newton, &constr, wall, &used), 6,
               "'%s'", row);
  cr_expect(printed_agrees(resid, e->sum[m].max_residual), "method %d: resid %s, file %.17g", m, resid,
            e->sum[m].max_residual);
  cr_expect(steps == c->steps && rhs == c->rhs_evals && newton == c->newton_iterations && constr == c->constraint_evals,
            "method %d: counts %llu %llu %llu %llu, file %llu %llu %llu %llu", m, steps, rhs, newton, constr, c->steps,
            c->rhs_evals, c->newton_iterations, c->constraint_evals);
  cr_expect(printed_agrees(wall, e->wall[m]), "method %d: wall %s, file %.17g", m, wall, e->wall[m]);
  cr_expect(name_shown_as(row + used, e->f->methods[m]), "method %d: '%s' for %s", m, row + used, e->f->methods[m]);
}

/* nhbench info on an ensemble with a grid (small_ensemble.cfg, T = 0.4, one thread): the setup
 * lines (h and T/h steps, the sampling and the number of samples, the random ensemble's count,
 * energy and seed, how many methods the spec lists and the grid adds), the energy table and the
 * cost table, the spec's methods first, then under a heading the grid's: every row read back and
 * its figures checked against the summary, cost and wall_time datasets of the file at the precision
 * printed, the long names cut to fit; then the grid's table, the same way. */
Test(cli_output, info_ensemble_tables_from_the_file) {
  char path[128];
  results_file(path, sizeof path, "ens", "small_ensemble.cfg", "--set T=0.4 -j 1");
  nh_h5 f;
  cr_assert_eq(nh_h5_open(&f, "test", path), 0);
  nh_ensemble_summary *sum = nh_h5_read_ensemble_summary(&f);
  nh_cost *cost = nh_h5_costs(&f, "cost", "method", NULL);
  double *wall = nh_h5_doubles(&f, "wall_time", "method", NULL);
  cr_assert(sum && cost && wall);
  const long long ns = nh_h5_dim(&f, "sample");
  int np = 0;
  for (int m = 0; m < f.nmethods; m++) np += f.primary[m];
  cr_assert(np == 2 && f.nmethods == 2 + 5, "2 listed, 2 x 3 grid points less (0.1, 0.4): %d of %d", np, f.nmethods);
  cr_expect_eq(ns, 2, "t = 0 and 0.4");
  cr_expect_eq(cost[1].steps, 10, "rk4: 5 ICs x 2 steps");
  cr_expect_eq(cost[1].rhs_evals, 40, "rk4: 4 right-hand sides a step");
  for (int m = 0; m < f.nmethods; m++) cr_expect_geq(cost[m].steps, 10, "method %d: 5 ICs of T/h = 2 steps", m);
  cr_expect_eq(nhb_on("info %s", path), 0, "%s", out);
  char lanes[256];
  snprintf(lanes, sizeof lanes,
           "  methods      7: 2 listed in the spec, 5 more from 1 grid\n"
           "  lanes        this nhbench steps 7 of the 7 methods' ensembles %d trajectories at a time (%s)\n\n",
           NH_LANES, nh_isa_name(nh_lanes_isa())); /* the same machine and environment as nhbench's */
  expect_has(out, "  h            0.2 (2 steps); dE sampled every 2 steps, 2 samples\n"
                  "  ensemble     5 random initial conditions on D at energy 1.535, seed 7\n");
  expect_has(out, lanes);
  expect_has(out, "\n\nEnergy error dE = E(t) - E0, over the ICs that ran to T (max|dE|: largest max_t |dE|; "
                  "median\nmax|dE|: median over the ICs; slope: least-squares slope of dE against t; var: "
                  "ensemble variance at T):\n");
  expect_has(out, "\nCost, summed over the ICs (steps: calls of a base method's step); max resid: max_t "
                  "|mu(q).v| over the\nICs that ran to T:\n");
  ens_tables e = {&f, sum, cost, wall};
  static const char *const energy[] = {"#", "failed", "max|dE|", "median", "max|dE|", "mean", "slope", "var(dE,T)",
                                       "method"};
  expect_method_rows(out, energy, 9, &f, check_energy_row, &e);
  static const char *const costs[] = {"#", "max", "resid", "steps", "rhs", "evals", "Newton", "its", "constr", "evals",
                                      "wall[s]", "method"};
  expect_method_rows(out, costs, 12, &f, check_cost_row, &e);
  /* The cost table ends there: the grids' tables follow. */
  const char *grid = strstr(out, "\n\nGrid 0: ");
  cr_expect(grid && strstr(out, "\nCost, summed") < grid, "the grids after the cost table:\n%s", out);
  /* The header: the provenance attributes as the file holds them. */
  char *date = nh_h5_attr_string(&f, "/", "date"), *version = nh_h5_attr_string(&f, "/", "version");
  char *compiler = nh_h5_attr_string(&f, "/", "compiler"), *command = nh_h5_attr_string(&f, "/", "command");
  cr_assert(date && version && compiler && command);
  char head[4096];
  snprintf(head, sizeof head,
           "%s: ensemble study\n  system       chaotic_particle()\n  T            0.4\n  spec         " DATA
           "small_ensemble.cfg\n  overrides    T=0.4\n  written      %s by nhbench %s (%s), 1 threads\n"
           "  command      %s\n  h            0.2 (",
           path, date, version, compiler, command);
  cr_expect(strncmp(out, head, strlen(head)) == 0, "header:\n%s\nwanted:\n%s", out, head);
  expect_has(command, "nhbench run " DATA "small_ensemble.cfg -o ");
  free(date), free(version), free(compiler), free(command);
  /* The grid: a row per beta, a cell per beta2 with the median over the ICs of max_t |dE| of the
   * cell's method (no IC failed here), "skip" where not run. */
  int ngrids = 0;
  nh_h5_grid *g = NULL;
  cr_assert_eq(nh_h5_read_grids(&f, &ngrids, &g), 0);
  cr_assert_eq(ngrids, 1);
  char want[1024];
  snprintf(want, sizeof want,
           "\nGrid 0: %s over (beta, beta2): median over the ICs of max_t |dE|\n(fail: every IC failed; skip: not "
           "run, an invalid combination; *: some ICs failed, median of the rest)\n",
           g->method);
  expect_has(out, want);
  int skipped = 0;
  for (int c = 0; c < 6; c++) {
    const int m = g->method_index[c];
    if (m < 0) skipped++;
    else cr_expect_eq(sum[m].failures, 0, "cell %d: no IC failed", c);
  }
  cr_expect_eq(skipped, 1);
  expect_grid_table(out, g, sum, "beta \\ beta2");
  /* Then, as some name was cut to fit (in the cost table: longer than 41 characters), the note ends
   * the output, after the grid's table and a blank line. */
  int cut = 0;
  for (int m = 0; m < f.nmethods; m++) cut |= strlen(f.methods[m]) > 41;
  cr_expect(cut, "adjoint_pair(nh_newmark(...)) is long");
  snprintf(want, sizeof want, "\n\n(names cut to 120 columns; full names: nhbench export %s methods)\n", path);
  const size_t nout = strlen(out), nwant = strlen(want);
  cr_expect(nout > nwant && strcmp(out + nout - nwant, want) == 0, "the note ends the output:\n%s", out);
  const char *rows = after_line_with(out, "(fail: every IC failed; skip: ");
  cr_expect(rows && strstr(rows, want) == strchr(strchr(strchr(rows, '\n') + 1, '\n') + 1, '\n'),
            "the note right after the grid's 3 lines:\n%s", rows ? rows : out);
  const int nm = f.nmethods;
  nh_h5_close(&f);
  /* Failures, put into the summary: the first cell run by no IC to T ("fail"), the next by one
   * ("*": the median of that one), the others by all 5. */
  int ok[16], failed[16], edited = 0;
  cr_assert_leq(nm, 16);
  for (int m = 0; m < nm; m++) ok[m] = sum[m].ok, failed[m] = sum[m].failures;
  for (int c = 0; c < 6 && edited < 2; c++) {
    const int m = g->method_index[c];
    if (m < 0) continue;
    sum[m].ok = ok[m] = edited, sum[m].failures = failed[m] = 5 - edited;
    edited++;
  }
  overwrite_ints(path, "/ensemble/summary/ok", ok, nm);
  overwrite_ints(path, "/ensemble/summary/failures", failed, nm);
  cr_expect_eq(nhb_on("info %s", path), 0, "%s", out);
  cr_expect(strstr(out, " fail ") || strstr(out, " fail\n"), "a cell that failed:\n%s", out);
  cr_expect(strstr(strstr(out, "beta \\ beta2"), "*"), "a cell with some ICs failed:\n%s", out);
  expect_grid_table(out, g, sum, "beta \\ beta2");
  /* Parameters of short names: the first column is as wide as the corner but at least 10 ("a \\ b",
   * 5 characters: 10; "beta \\ fast", 11: 11); each row labelled by its value of the first (edit_grid
   * makes them 0.25 and 0.375). */
  for (int k = 0; k < 2; k++) {
    edit_grid(path, k ? "beta" : "a", k ? "fast" : "b");
    g->values[0][0] = 0.25, g->values[0][1] = 0.375;
    cr_expect_eq(nhb_on("info %s", path), 0, "%s", out);
    expect_has(out, k ? "(beta, fast): median" : "(a, b): median");
    expect_grid_table(out, g, sum, k ? "beta \\ fast" : "a \\ b");
  }
  nh_h5_free_grids(ngrids, g);
  free(sum), free(cost), free(wall);
  remove(path);
}

/* A one-step study from its given initial condition (the example's) draws nothing, and info says
 * nothing of drawing. */
Test(cli_output, info_onestep_from_a_given_state_draws_nothing) {
  char path[128];
  results_file(path, sizeof path, "one-given", "../../studies/examples/onestep.cfg",
               "--set methods=[\\\"rk4\\\"] --set points=1 --set halvings=1");
  cr_expect_eq(nhb_on("info %s", path), 0, "%s", out);
  expect_has(out, "\n  points       1 per IC, 1 in all; 2 step sizes\n  IC 0         ");
  cr_expect(strstr(out, "drawn") == NULL, "%s", out);
  remove(path);
}

/* nhbench info on a one-step study (onestep_random.cfg: 3 random ICs, 2 points along each, h =
 * 0.1 and 0.05, with nh_newmark added beside rk4): the points line, and every row of the slope
 * table read back and checked against the file's datasets (a NaN as "-"). nh_newmark solves a
 * Newton system, so its condition-number range is a figure; rk4 has none, so its column is "-". */
Test(cli_output, info_onestep_rows_from_the_file) {
  char path[128];
  results_file(path, sizeof path, "one", "onestep_random.cfg", "--set methods=[\\\"rk4\\\",\\\"nh_newmark\\\"]");
  nh_h5 f;
  cr_assert_eq(nh_h5_open(&f, "test", path), 0);
  cr_assert_eq(f.nmethods, 2);
  static const char *const cols[] = {"slope", "slope_stderr", "fit_h_min", "fit_h_max", "action_slope",
                                     "summary/max_adjoint_defect", "summary/cond_min", "summary/cond_max"};
  double *d[8];
  for (int k = 0; k < 8; k++) cr_assert_not_null(d[k] = nh_h5_doubles(&f, cols[k], "method", NULL));
  int *expected = nh_h5_ints(&f, "slope_expected", "method", NULL), *failures = nh_h5_ints(&f, "summary/failures", "method", NULL);
  cr_assert(expected && failures);
  cr_expect_eq(expected[0], 5, "rk4: local error O(h^5)");
  cr_expect(isnan(d[6][0]) && d[6][1] >= 1 && d[7][1] >= d[6][1], "a condition-number range for nh_newmark only");
  cr_expect_eq(nhb_on("info %s", path), 0, "%s", out);
  expect_has(out, "\n  points       2 per IC, 6 in all; 2 step sizes\n"
                  "  drawn        the initial conditions at random on D at energy 1.535, seed 5\n"
                  "  IC 0         random 0: ");
  for (int m = 0; m < 2; m++) {
    /* Method m's row, read back: each figure against its dataset at the precision printed (slope and
     * action slope to 3 decimals, standard error to 2 digits, defect and condition numbers to 3), a
     * NaN as "-" ("nan" for the standard error of a 2-point fit), the name whole or cut with "...". */
    char prefix[32], action[32], defect[32], cond[64], name[256];
    snprintf(prefix, sizeof prefix, "\n%4d %8d ", m, expected[m]);
    const char *row = strstr(out, prefix);
    cr_assert_not_null(row, "no row for method %d in:\n%s", m, out);
    double slope, se, h_lo, h_hi, c0, c1;
    int fails;
    cr_assert_eq(sscanf(row, "%*d %*d %lf +- %lf %lf .. %lf %31s %31s %63s %d %255s", &slope, &se, &h_lo, &h_hi,
                        action, defect, cond, &fails, name),
                 9, "row of method %d:%.200s", m, row);
    cr_expect_leq(fabs(slope - d[0][m]), 5e-4, "method %d: slope %g, file %g", m, slope, d[0][m]);
    cr_expect(isnan(d[1][m]) ? isnan(se) : fabs(se - d[1][m]) <= 0.05 * fabs(d[1][m]),
              "method %d: stderr %g, file %g (NaN with 2 points)", m, se, d[1][m]);
    cr_expect(h_lo == 0.05 && h_hi == 0.1 && d[2][m] == 0.05 && d[3][m] == 0.1, "method %d: a fit over both h", m);
    if (isnan(d[4][m])) cr_expect_str_eq(action, "-");
    else cr_expect_leq(fabs(atof(action) - d[4][m]), 5e-4, "method %d: action slope %s, file %g", m, action, d[4][m]);
    if (isnan(d[5][m])) cr_expect_str_eq(defect, "-", "method %d", m);
    else cr_expect_leq(fabs(atof(defect) - d[5][m]), 5e-3 * fabs(d[5][m]), "method %d: defect %s, file %g", m, defect,
                       d[5][m]);
    if (isnan(d[6][m])) {
      cr_expect_str_eq(cond, "-", "method %d", m);
    } else {
      cr_assert_eq(sscanf(cond, "%lf..%lf", &c0, &c1), 2, "%s", cond);
      cr_expect(fabs(c0 - d[6][m]) <= 5e-3 * d[6][m] && fabs(c1 - d[7][m]) <= 5e-3 * d[7][m], "method %d: %s", m,
                cond);
    }
    cr_expect_eq(fails, failures[m]);
    const size_t shown = strlen(name), cut = shown > 3 && strcmp(name + shown - 3, "...") == 0;
    if (cut) cr_expect(strncmp(name, f.methods[m], shown - 3) == 0 && strlen(f.methods[m]) > shown - 3, "%s", name);
    else cr_expect_str_eq(name, f.methods[m]);
  }
  for (int k = 0; k < 8; k++) free(d[k]);
  free(expected), free(failures);
  nh_h5_close(&f);
  remove(path);
}

/* nhbench info on a work-precision study (work_precision_small.cfg: 3 methods, h = 0.1, 0.05,
 * 0.025, wall time the median of 2 runs, norm "2" so that the error printed is not the first of
 * the file's norms): the IC's q0 and v0, and every row of the table read back and checked against
 * the file's datasets at the precision printed, the error in the study's pareto_norm, W and T where
 * the file flags the fronts, the status by name. */
Test(cli_output, info_work_precision_rows_from_the_file) {
  char path[128];
  results_file(path, sizeof path, "wp", "work_precision_small.cfg", "--set norm=2");
  nh_h5 f;
  cr_assert_eq(nh_h5_open(&f, "test", path), 0);
  char *pn = nh_h5_attr_string(&f, ".", "pareto_norm");
  cr_assert_not_null(pn);
  int k = -1;
  for (int i = 0; i < NH_WP_NORMS; i++)
    if (strcmp(pn, nh_wp_norm_names[i]) == 0) k = i;
  cr_assert_geq(k, 0, "%s", pn);
  cr_expect_str_eq(pn, "qv_2", "norm = \"2\": the (q, v) 2-norm");
  double *h = nh_h5_doubles(&f, "h", "h", NULL), *err = nh_h5_doubles(&f, "err", "method,h,norm", NULL);
  double *work = nh_h5_doubles(&f, "work", "method,h", NULL), *wall = nh_h5_doubles(&f, "wall_time", "method,h", NULL);
  int *pw = nh_h5_ints(&f, "pareto_work", "method,h", NULL), *pt = nh_h5_ints(&f, "pareto_time", "method,h", NULL);
  int *status = nh_h5_ints(&f, "status", "method,h", NULL);
  cr_assert(h && err && work && wall && pw && pt && status);
  cr_assert_eq(f.nmethods, 3);
  /* The one IC with its q0 and v0, each component read back against the file's. */
  hsize_t shape[2];
  double *q0 = nh_h5_doubles(&f, "q0", "ic,dof", shape), *v0 = nh_h5_doubles(&f, "v0", "ic,dof", NULL);
  cr_assert(q0 && v0 && shape[0] == 1 && shape[1] >= 2, "one IC of several dof");
  cr_expect_eq(nhb_on("info %s", path), 0, "%s", out);
  expect_has(out, "  h            3 values; wall time: the median of 2 runs\n");
  const char *ic = strstr(out, "\n  IC 0         discretization: q0 = (");
  cr_assert_not_null(ic, "%s", out);
  ic = strchr(ic, '(');
  for (int v = 0; v < 2; v++) {
    const double *x = v ? v0 : q0;
    for (hsize_t j = 0; j < shape[1]; j++) {
      char num[32];
      ic++;
      ic += strspn(ic, " ");
      const size_t n = strcspn(ic, ",)");
      snprintf(num, sizeof num, "%.*s", (int)n, ic);
      cr_expect(printed_agrees(num, x[j]), "%s0[%d]: %s, file %.17g", v ? "v" : "q", (int)j, num, x[j]);
      ic += n;
      cr_expect_eq(*ic, j + 1 < shape[1] ? ',' : ')', "%s0: %llu components", v ? "v" : "q",
                   (unsigned long long)shape[1]);
    }
    if (v) {
      cr_expect(strncmp(ic, ")\n", 2) == 0, "%.40s", ic);
    } else {
      cr_assert(strncmp(ic, "), v0 = (", 9) == 0, "%.40s", ic);
      ic += 8;
    }
  }
  free(q0), free(v0);
  char want[1024];
  snprintf(want, sizeof want,
           "\nError at T in the %s norm against counted work (rhs + Jacobian + constraint evaluations) and\nwall "
           "time; pareto: W on the work front, T on the time front (no other run is better in both):\n",
           pn);
  expect_has(out, want);
  /* The table, read back: per method a line with its index and name, then a row per h: h, the error
   * in pareto_norm, the work, the wall time (each at its printed precision), W and T where the file
   * flags the fronts, the status by name. */
  const char *p = after_line_with(out, "wall time; pareto: W on the work front");
  cr_assert_not_null(p);
  char line[1024];
  static const char *const heading[] = {"#", "h", "err", "work", "wall[s]", "pareto", "status"};
  cr_assert(next_line(&p, line, sizeof line));
  cr_expect(heading_is(line, heading, 7), "heading: '%s'", line);
  int fronts = 0;
  for (int m = 0; m < 3; m++) {
    int index = -1, used = 0;
    cr_assert(next_line(&p, line, sizeof line), "method %d missing", m);
    cr_assert_eq(sscanf(line, "%d %n", &index, &used), 1, "'%s'", line);
    cr_expect_eq(index, m);
    cr_expect(name_shown_as(line + used, f.methods[m]), "method %d: '%s' for %s", m, line + used, f.methods[m]);
    for (int i = 0; i < 3; i++) {
      const int c = m * 3 + i;
      char words[6][32];
      cr_assert(next_line(&p, line, sizeof line), "method %d, h %d missing", m, i);
      const int nw = sscanf(line, "%31s %31s %31s %31s %31s %31s", words[0], words[1], words[2], words[3], words[4],
                            words[5]);
      char marks[4] = "";
      if (pw[c]) strcat(marks, "W");
      if (pt[c]) strcat(marks, "T");
      fronts += pw[c] + pt[c];
      cr_expect_eq(status[c], 0);
      cr_assert_eq(nw, marks[0] ? 6 : 5, "method %d, h %d: '%s' (fronts '%s')", m, i, line, marks);
      cr_expect(printed_agrees(words[0], h[i]), "method %d: h %s, file %.17g", m, words[0], h[i]);
      cr_expect(printed_agrees(words[1], err[c * NH_WP_NORMS + k]), "method %d, h %d: err %s, file %.17g", m, i,
                words[1], err[c * NH_WP_NORMS + k]);
      cr_expect(printed_agrees(words[2], work[c]), "method %d, h %d: work %s, file %.17g", m, i, words[2], work[c]);
      cr_expect(printed_agrees(words[3], wall[c]), "method %d, h %d: wall %s, file %.17g", m, i, words[3], wall[c]);
      if (marks[0]) cr_expect_str_eq(words[4], marks, "method %d, h %d: fronts", m, i);
      cr_expect_str_eq(words[nw - 1], "ok", "method %d, h %d: status", m, i);
    }
  }
  cr_expect(!next_line(&p, line, sizeof line), "after the table: '%s'", line);
  cr_expect_gt(fronts, 1, "some runs on the fronts");
  free(pn), free(h), free(err), free(work), free(wall), free(pw), free(pt), free(status);
  nh_h5_close(&f);
  /* pareto_norm picks the error column: a name no norm has, or no attribute at all, is refused
   * (exit 2, no table), not read as the first norm. */
  static const char *const bad_norm[] = {"qv_7", NULL};
  for (int b = 0; b < 2; b++) {
    hid_t file = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    cr_assert_geq(file, 0);
    cr_assert_geq(H5Adelete_by_name(file, "/work_precision", "pareto_norm", H5P_DEFAULT), 0);
    if (bad_norm[b]) cr_assert_geq(H5LTset_attribute_string(file, "/work_precision", "pareto_norm", bad_norm[b]), 0);
    H5Fclose(file);
    cr_expect_eq(nhb_on("info %s", path), 2, "pareto_norm %s: %s", bad_norm[b] ? bad_norm[b] : "missing", out);
    expect_has(out, bad_norm[b] ? "unknown pareto_norm 'qv_7'" : "'pareto_norm'");
    cr_expect(!strstr(out, "Error at T"), "no table without its norm:\n%s", out);
  }
  remove(path);
}

/* ---- export on an ensemble: the energy tables, exact ------------------------------------------ */

/* The ensemble datasets the energy tables print, read through results/. */
typedef struct {
  nh_h5 f;
  long long nic, ns;
  double *t, *E0, *dE; /* dE: [method][ic][sample] */
  int *status;         /* [method][ic] */
} ens_file;

static void ens_open(ens_file *e, const char *path) {
  cr_assert_eq(nh_h5_open(&e->f, "test", path), 0);
  e->t = nh_h5_doubles(&e->f, "t", "sample", NULL);
  e->E0 = nh_h5_doubles(&e->f, "E0", "ic", NULL);
  e->dE = nh_h5_doubles(&e->f, "dE", "method,ic,sample", NULL);
  e->status = nh_h5_ints(&e->f, "status", "method,ic", NULL);
  cr_assert(e->t && e->E0 && e->dE && e->status);
  e->nic = nh_h5_dim(&e->f, "ic"), e->ns = nh_h5_dim(&e->f, "sample");
}

static void ens_close(ens_file *e) {
  free(e->t), free(e->E0), free(e->dE), free(e->status);
  nh_h5_close(&e->f);
}

/* The block of method m, IC ic as `export energy` writes it: its comment, then t and dE (or dE/E0)
 * in the shortest exact form. */
static size_t energy_block_text(char *buf, size_t len, const ens_file *e, int m, long long ic, int relative) {
  char a[40], b[40];
  shortest(a, sizeof a, e->E0[ic]);
  size_t n = (size_t)snprintf(buf, len, "# method %d %s, IC %lld, E0 %s, status %d\n", m, e->f.methods[m], ic, a,
                              e->status[m * e->nic + ic]);
  for (long long s = 0; s < e->ns; s++) {
    const double d = e->dE[(m * e->nic + ic) * e->ns + s];
    shortest(a, sizeof a, e->t[s]);
    shortest(b, sizeof b, relative ? d / e->E0[ic] : d);
    n += (size_t)snprintf(buf + n, len - n, "%s %s\n", a, b);
  }
  return n;
}

/* `nhbench export PATH ARGS` prints the energy table of method `method`, ICs from..to-1, each
 * block recomputed from the file's dE (exit 0). */
static void expect_energy_export(const ens_file *e, const char *path, const char *args, int method, int relative,
                                 int from, int to) {
  static char want[1 << 16];
  size_t n = (size_t)snprintf(want, sizeof want, "# t %s\n", relative ? "dE/E0" : "dE");
  for (int ic = from; ic < to; ic++) {
    if (ic > from) n += (size_t)snprintf(want + n, sizeof want - n, "\n\n");
    n += energy_block_text(want + n, sizeof want - n, e, method, ic, relative);
  }
  char fmt[256];
  snprintf(fmt, sizeof fmt, "export %%s %s", args);
  cr_expect_eq(nhb_on(fmt, path), 0, "%s: %s", args, out);
  cr_expect_str_eq(out, want, "%s", args);
}

/* export energy and energy-all-methods on small_ensemble.cfg (T = 0.4, 5 ICs, 7 methods, samples
 * at t = 0, 0.4): the header says dE or dE/E0, one block per IC (or method) separated by two
 * blank lines, in the order asked for; --ics A:B is A..B-1, "A:" to the last IC, "A" the one IC,
 * none the first five; --relative divides by the IC's E0. */
Test(cli_output, export_energy_tables_exact) {
  char path[128];
  results_file(path, sizeof path, "energy", "small_ensemble.cfg", "--set T=0.4");
  ens_file e;
  ens_open(&e, path);
  cr_assert(e.nic == 5 && e.ns == 2 && e.f.nmethods == 7);
  static char want[1 << 16];
  const struct {
    const char *args;
    int method, relative, from, to; /* ICs from..to-1 */
  } cases[] = {{"energy --method 1 --ics 2:4", 1, 0, 2, 4}, {"energy --relative --method 3 --ics 3:", 3, 1, 3, 5},
               {"energy --ics 4 --method 6", 6, 0, 4, 5},    {"energy", 0, 0, 0, 5},
               {"energy --ics=1:2 --relative", 0, 1, 1, 2}};
  for (size_t k = 0; k < sizeof cases / sizeof *cases; k++)
    expect_energy_export(&e, path, cases[k].args, cases[k].method, cases[k].relative, cases[k].from, cases[k].to);
  /* energy-all-methods: the methods as listed (default: the spec's two), one IC. */
  const struct {
    const char *args;
    int ic, relative, n, methods[7];
  } all[] = {{"energy-all-methods --ic 2 --methods 5,1,5", 2, 0, 3, {5, 1, 5}},
             {"energy-all-methods --relative --ic 4", 4, 1, 2, {0, 1}},
             {"energy-all-methods --methods all", 0, 0, 7, {0, 1, 2, 3, 4, 5, 6}}};
  for (size_t k = 0; k < sizeof all / sizeof *all; k++) {
    size_t n = (size_t)snprintf(want, sizeof want, "# t %s\n", all[k].relative ? "dE/E0" : "dE");
    for (int j = 0; j < all[k].n; j++) {
      if (j) n += (size_t)snprintf(want + n, sizeof want - n, "\n\n");
      n += energy_block_text(want + n, sizeof want - n, &e, all[k].methods[j], all[k].ic, all[k].relative);
    }
    char fmt[256];
    snprintf(fmt, sizeof fmt, "export %%s %s", all[k].args);
    cr_expect_eq(nhb_on(fmt, path), 0, "%s: %s", all[k].args, out);
    cr_expect_str_eq(out, want, "%s", all[k].args);
  }
  /* --methods: a method may repeat, up to 4 entries per method of the file (28 here); a 29th is
   * refused. */
  char list[128];
  size_t len = 0, n = (size_t)snprintf(want, sizeof want, "# t dE\n");
  for (int k = 0; k < 28; k++) {
    len += (size_t)snprintf(list + len, sizeof list - len, "%s%d", k ? "," : "", 3 * k % 7);
    if (k) n += (size_t)snprintf(want + n, sizeof want - n, "\n\n");
    n += energy_block_text(want + n, sizeof want - n, &e, 3 * k % 7, 1, 0);
  }
  char args[256];
  snprintf(args, sizeof args, "export %%s energy-all-methods --ic 1 --methods %s", list);
  cr_expect_eq(nhb_on(args, path), 0, "%s", out);
  cr_expect_str_eq(out, want, "28 entries");
  snprintf(args, sizeof args, "export %%s energy-all-methods --ic 1 --methods %s,0", list);
  cr_expect_eq(nhb_on(args, path), 2, "%s", out);
  snprintf(want, sizeof want, "nhbench export: --methods '%s,0': more than 28 entries (4 per method of the file)\n",
           list);
  cr_expect_str_eq(out, want);
  /* Out of range: exit 2, the message giving the range, nothing on stdout. */
  const struct {
    const char *args, *msg;
  } bad[] = {
      {"energy --ics 5", "nhbench export: --ics 5:6: %s has initial conditions 0..4 (A:B selects A, ..., B-1)\n"},
      {"energy --ics 2:6", "nhbench export: --ics 2:6: %s has initial conditions 0..4 (A:B selects A, ..., B-1)\n"},
      {"energy --ics 3:3", "nhbench export: --ics 3:3: %s has initial conditions 0..4 (A:B selects A, ..., B-1)\n"},
      {"energy --ics 5:", "nhbench export: --ics 5:5: %s has initial conditions 0..4 (A:B selects A, ..., B-1)\n"},
      {"energy --method 7", "nhbench export: --method 7: %s has methods 0..6\n"},
      {"energy-all-methods --ic 5", "nhbench export: --ic 5: %s has initial conditions 0..4\n"},
      {"energy --grid 1", "nhbench export: table 'energy' takes no option --grid (its options: --method --ics "
                          "--relative)\n"},
      {"energy-all-methods --h 1", "nhbench export: table 'energy-all-methods' takes no option --h (its options: "
                                   "--relative --ic --methods)\n"},
      {"energy --ic x", "nhbench export: --ic needs a whole number >= 0, not 'x'\n"},
      {"grid --grid -1", "nhbench export: --grid needs a whole number >= 0, not '-1'\n"},
      {"series --h 1.5", "nhbench export: --h needs a whole number >= 0, not '1.5'\n"},
      {"energy --method 100000001", "nhbench export: --method needs a whole number >= 0, not '100000001'\n"},
      {"energy --ics 1:x", "nhbench export: --ics '1:x': expected A:B (initial conditions A, ..., B-1), A: or A\n"},
      {"grid --grid 1", "nhbench export: --grid 1: %s has grids 0..0\n"},
      {"energy-all-methods --methods 1,7", "nhbench export: --methods '1,7': expected comma-separated method indices "
                                           "0..6, or all\n"},
      {"energy-all-methods --methods 1,-1", "nhbench export: --methods '1,-1': expected comma-separated method "
                                            "indices 0..6, or all\n"},
  };
  for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
    char cmd[1024], msg[512], errf[160];
    snprintf(errf, sizeof errf, "/tmp/nhbench-mut2-bench-%d.err", (int)getpid());
    snprintf(cmd, sizeof cmd, "%s export %s %s 2>%s", NHBENCH_EXE, path, bad[k].args, errf);
    cr_expect_eq(test_run_command(cmd, out, sizeof out), 2, "%s", bad[k].args);
    cr_expect_str_eq(out, "", "%s: stdout", bad[k].args);
    FILE *fe = fopen(errf, "r");
    cr_assert(fe);
    char err[4096];
    size_t n = fread(err, 1, sizeof err - 1, fe);
    err[n] = '\0';
    fclose(fe);
    remove(errf);
    snprintf(msg, sizeof msg, bad[k].msg, path);
    cr_expect(strncmp(err, msg, strlen(msg)) == 0, "%s:\n%s\nwanted:\n%s", bad[k].args, err, msg);
  }
  ens_close(&e);
  remove(path);
}

/* On an ensemble of 7 ICs, more than the default five: no --ics is ICs 0..4, "A:" runs to the
 * last IC (6), not to the fifth; "A" past the fifth is that one IC; "7:" is out of range. */
Test(cli_output, export_energy_ics_past_the_default_five) {
  char path[128];
  results_file(path, sizeof path, "energy7", "small_ensemble.cfg", "--set T=0.4 --set ensemble.count=7");
  ens_file e;
  ens_open(&e, path);
  cr_assert(e.nic == 7 && e.ns == 2 && e.f.nmethods == 7);
  expect_energy_export(&e, path, "energy --ics 3:", 0, 0, 3, 7);
  expect_energy_export(&e, path, "energy --method 2 --relative", 2, 1, 0, 5);
  expect_energy_export(&e, path, "energy --ics 6 --method 1", 1, 0, 6, 7);
  expect_energy_export(&e, path, "energy --ics 4:7", 0, 0, 4, 7);
  cr_expect_eq(nhb_on("export %s energy --ics 7:", path), 2, "%s", out);
  char msg[512];
  snprintf(msg, sizeof msg, "nhbench export: --ics 7:7: %s has initial conditions 0..6 (A:B selects A, ..., B-1)\n",
           path);
  cr_expect_str_eq(out, msg);
  ens_close(&e);
  remove(path);
}

/* export series on an ensemble (ensemble_observables.cfg at T = 0.8, 4 ICs, samples every 2 steps
 * of h = 0.2): the run is method I, IC K, no h index in the comment; every sample of the run, each
 * number the file's to the bit; --h is refused (one step size), an unknown observable names the
 * file's. */
Test(cli_output, export_series_of_an_ensemble_run) {
  char path[128];
  results_file(path, sizeof path, "ensobs", "ensemble_observables.cfg", "--set T=0.8");
  number_statuses(path, "ensemble");
  nh_h5 f;
  cr_assert_eq(nh_h5_open(&f, "test", path), 0);
  const long long ns = nh_h5_dim(&f, "sample"), nic = nh_h5_dim(&f, "ic");
  cr_assert(ns == 3 && nic == 4 && f.nmethods == 3, "%lld samples, %lld ICs, %d methods", ns, nic, f.nmethods);
  double *t = nh_h5_doubles(&f, "t", "sample", NULL);
  const long long idx[2] = {2, 3};
  hsize_t shape[4];
  double *x = nh_h5_doubles_at(&f, "observables/q", "method,ic,sample,component", 2, idx, shape);
  int *status = nh_h5_ints(&f, "status", "method,ic", NULL);
  char *units = nh_h5_attr_string(&f, "observables/q", "units");
  int wl = 0;
  char **labels = nh_h5_attr_strings(&f, "observables/q", "labels", &wl);
  cr_assert(t && x && status && units && labels);
  const int w = (int)shape[3];
  cr_assert_eq(wl, w);
  char want[1 << 14], num[40];
  size_t len = (size_t)snprintf(want, sizeof want, "# t");
  for (int c = 0; c < w; c++) {
    len += (size_t)snprintf(want + len, sizeof want - len, " ");
    for (const char *p = labels[c]; *p; p++) want[len++] = *p == ' ' ? '_' : *p;
    want[len] = '\0';
  }
  len += (size_t)snprintf(want + len, sizeof want - len, "\n# q [%s] of method 2 %s, IC 3, status %d\n", units,
                          f.methods[2], status[2 * nic + 3]);
  cr_assert_eq(status[2 * nic + 3], 11, "the statuses numbered by the test, [method][ic]");
  for (long long s = 0; s < ns; s++) {
    shortest(num, sizeof num, t[s]);
    len += (size_t)snprintf(want + len, sizeof want - len, "%s", num);
    for (int c = 0; c < w; c++) {
      shortest(num, sizeof num, x[s * w + c]);
      len += (size_t)snprintf(want + len, sizeof want - len, " %s", num);
    }
    len += (size_t)snprintf(want + len, sizeof want - len, "\n");
  }
  cr_expect_eq(nhb_on("export %s series --observable q --ic 3 --method 2", path), 0, "%s", out);
  cr_expect_str_eq(out, want);
  cr_expect_eq(nhb_on("export %s series --h 0", path), 2);
  char msg[512];
  snprintf(msg, sizeof msg, "nhbench export: --h: %s is an ensemble study, with one step size\n", path);
  cr_expect_str_eq(out, msg);
  cr_expect_eq(nhb_on("export %s series --observable energy", path), 2);
  snprintf(msg, sizeof msg, "nhbench export: --observable 'energy': %s has q energy_error constraint_residual\n", path);
  cr_expect_str_eq(out, msg);
  cr_expect_eq(nhb_on("export %s series --ic 4", path), 2);
  snprintf(msg, sizeof msg, "nhbench export: --ic 4: %s has initial conditions 0..3\n", path);
  cr_expect_str_eq(out, msg);
  /* A table of other kinds: the kinds it is for, in their order, joined by "and". */
  cr_expect_eq(nhb_on("export %s slopes", path), 2);
  snprintf(msg, sizeof msg, "nhbench export: %s is a ensemble study; table 'slopes' is for onestep studies\n", path);
  cr_expect_str_eq(out, msg);
  /* info names the sampled observables, in the file's order, and how to export them. */
  cr_expect_eq(nhb_on("info %s", path), 0, "%s", out);
  snprintf(msg, sizeof msg, "\nSampled observables (nhbench export %s series --observable NAME): q energy_error "
           "constraint_residual\n", path);
  expect_has(out, msg);
  nh_h5_free_strings(labels, wl);
  free(t), free(x), free(status), free(units);
  nh_h5_close(&f);
  remove(path);
}

/* ---- nhbench list: entries rebuilt from the registries -------------------------------------- */


/* The "parameters:" heading of a list entry, followed by the first parameter's line, if and only if
 * the table has parameters (the lines themselves: cli/list_systems_shows_every_parameter). */
static void expect_parameters_heading(const char *what, const nh_param_desc *params, int n) {
  char want[256];
  if (n) snprintf(want, sizeof want, "\n    parameters:\n      %s ", params[0].name);
  cr_expect(n ? strstr(out, want) != NULL : strstr(out, "parameters:") == NULL, "%s: %d parameters:\n%s", what, n, out);
}

/* nhbench list systems NAME, for every system: its heading line (n, k, whether it has an exact
 * solution), its documentation, default initial condition, invariants (comma-separated), presets
 * (with their parameters in brackets, if any), derived quantities and its ensemble sampler, as the
 * registry's table has them; an unknown name is refused with exit 2. */
Test(cli_output, list_each_system_from_its_table) {
  int presets = 0, invariants = 0, exact = 0;
  for (int i = 0; nh_system_types[i]; i++) {
    const nh_system_type *t = nh_system_types[i];
    const nh_system_knowledge *K = test_knowledge(t);
    const nh_system_invariants *I = test_invariants(t);
    const nh_system_derived *D = test_derived(t);
    char args[256], want[8192];
    snprintf(args, sizeof args, "list systems %s", t->name);
    cr_assert_eq(test_run_nhbench(args, out, sizeof out), 0, "%s", out);
    snprintf(want, sizeof want, "systems:\n  %s  (n = %d, k = %d%s)\n    %s\n    default initial condition: %s\n", t->name,
             t->n, t->k, K->exact ? ", exact solution" : "", t->doc, t->ic_doc);
    cr_expect(strncmp(out, want, strlen(want)) == 0, "%s:\n%s\nwanted:\n%s", t->name, out, want);
    exact += K->exact != NULL;
    if (I->count) {
      size_t n = (size_t)snprintf(want, sizeof want, "\n    invariants:");
      for (int j = 0; j < I->count; j++)
        n += (size_t)snprintf(want + n, sizeof want - n, "%s %s", j ? "," : "", I->names[j]);
      snprintf(want + n, sizeof want - n, "\n");
      expect_has(out, want);
      invariants++;
    } else {
      cr_expect(strstr(out, "invariants:") == NULL, "%s has none", t->name);
    }
    cr_expect_eq(strstr(out, "\n    presets (initial = \"NAME\" in a convergence spec):\n") != NULL, K->npresets > 0,
                 "%s: presets heading", t->name);
    for (int j = 0; j < K->npresets; j++) {
      const nh_preset *p = &K->presets[j];
      const int bracket = p->params && p->params[0];
      snprintf(want, sizeof want, "\n      %-14s %s%s%s%s\n", p->name, p->doc, bracket ? " [" : "", bracket ? p->params : "",
               bracket ? "]" : "");
      expect_has(out, want);
      presets++;
    }
    for (int j = 0; j < D->count; j++) {
      snprintf(want, sizeof want, "\n    derived: %s: %s\n", D->names[j], D->docs ? D->docs[j] : "");
      expect_has(out, want);
    }
    expect_parameters_heading(t->name, t->params, t->nparams);
    snprintf(want, sizeof want, "\n    random states for ensembles: %s\n",
             K->sampler_doc ? K->sampler_doc : "the generic sampler on D (spec/newmark.md §6 A10)");
    expect_has(out, want);
  }
  cr_expect(presets > 0 && invariants > 0 && exact > 0, "%d presets, %d systems with invariants, %d exact", presets,
            invariants, exact);
  cr_expect_eq(test_run_nhbench("list systems nosuch", out, sizeof out), 2);
  cr_expect_str_eq(out, "nhbench list: no systems named 'nosuch'\n", "the error alone, no heading");
  cr_expect_eq(test_run_nhbench("list observables energy extra", out, sizeof out), 2);
  cr_expect(strncmp(out, "nhbench list: unexpected argument 'extra'\nusage: nhbench list", 60) == 0, "%s", out);
  cr_expect_eq(test_run_nhbench("list bogus", out, sizeof out), 2);
  cr_expect(strstr(out, "nhbench list: unknown list 'bogus' (systems, methods, observables, kinds or settings)\n") ==
                out,
            "%s", out);
  cr_expect_eq(test_run_nhbench("list all energy", out, sizeof out), 2);
  cr_expect(strncmp(out, "nhbench list: unknown list 'all'", 32) == 0, "%s", out);
}

/* nhbench list kinds NAME, for every study kind: its doc, then a line per column its files hold
 * (the scratch ones left out), with dimensions, units and description, and the setting a column
 * needs; an unknown kind is refused with exit 2. */
Test(cli_output, list_each_kind_from_its_columns) {
  static char out[1 << 16];
  char want[1024];
  for (int k = 0; k < NH_STUDY_KINDS; k++) {
    const nh_study_kind_type *t = nh_study_kinds[k];
    char args[64];
    snprintf(args, sizeof args, "list kinds %s", t->name);
    cr_assert_eq(test_run_nhbench(args, out, sizeof out), 0, "%s", out);
    snprintf(want, sizeof want, "study kinds (study = \"KIND\" in a spec):\n  %s\n    %s\n", t->name, t->doc);
    cr_expect(strstr(out, want) == out, "%s", out);
    for (const nh_result_column *c = t->columns; c->name; c++) {
      snprintf(want, sizeof want, "\n      %-24s [%s] ", c->name, c->dims);
      cr_expect_eq(strstr(out, want) != NULL, !(c->flags & NH_COLUMN_SCRATCH), "%s: %s in\n%s", t->name, c->name, out);
      if (c->flags & NH_COLUMN_SCRATCH) continue;
      const char *setting = c->present ? c->present->setting : NULL;
      snprintf(want, sizeof want, "%s: %s%s%s%s\n", c->units ? c->units : "cost counters", c->doc,
               setting ? " (only with " : "", setting ? setting : "", setting ? ")" : "");
      cr_expect(strstr(out, want) != NULL, "%s: %s", t->name, want);
    }
  }
  cr_expect_eq(test_run_nhbench("list kinds", out, sizeof out), 0);
  for (int k = 0; k < NH_STUDY_KINDS; k++) {
    snprintf(want, sizeof want, "\n  %s\n", nh_study_kinds[k]->name);
    cr_expect(strstr(out, want) != NULL, "%s", nh_study_kinds[k]->name);
  }
  cr_expect_eq(test_run_nhbench("list kinds ensembles", out, sizeof out), 2);
  cr_expect_str_eq(out, "nhbench list: no kinds named 'ensembles'\n");
}

/* nhbench list settings [KIND]: every setting of the table with its type and help, the kinds that
 * take it; with KIND only those (trajectory takes round_trip, not repeats); an unknown kind is
 * refused with exit 2. */
Test(cli_output, list_settings_from_their_table) {
  static char out[1 << 16];
  char want[1024];
  cr_assert_eq(test_run_nhbench("list settings", out, sizeof out), 0, "%s", out);
  for (const nh_setting *s = nh_settings; s->name; s++) {
    snprintf(want, sizeof want, "\n  %-16s %s", s->name, s->type);
    expect_has(out, want);
    snprintf(want, sizeof want, "\n    %s\n", s->help);
    expect_has(out, want);
  }
  expect_has(out, "\n  round_trip       true or false, default false; in trajectory\n");
  expect_has(out, "\n  sample_every     whole number in [1, 1073741824], default 1; in ensemble trajectory\n");
  expect_has(out, "\n  divergence       real, default 1000; in ensemble trajectory\n");
  cr_assert_eq(test_run_nhbench("list settings trajectory", out, sizeof out), 0, "%s", out);
  cr_expect(strncmp(out, "settings of trajectory studies", 30) == 0, "%s", out);
  expect_has(out, "\n  round_trip       true or false, default false\n");
  cr_expect_null(strstr(out, "\n  repeats "), "%s", out);
  cr_expect(strstr(out, "\n  h0 ") != NULL, "trajectories take h0:\n%s", out);
  cr_expect_eq(test_run_nhbench("list settings trajectories", out, sizeof out), 2);
  cr_expect_str_eq(out, "nhbench list: no study kind named 'trajectories' (nhbench list kinds)\n");
}

/* nhbench list observables NAME, for every observable: units (and "from the last step", "needs
 * the exact or reference solution" by its needs), its documentation, the systems that define it
 * when not all do, and the base methods that define it on chaotic_particle when not all do, each
 * list computed here from the observable's absent(). */
Test(cli_output, list_each_observable_from_the_registry) {
  int partial_systems = 0, partial_methods = 0;
  for (int i = 0; nh_observables[i]; i++) {
    const nh_observable *o = nh_observables[i];
    char args[256], want[8192];
    snprintf(args, sizeof args, "list observables %s", o->name);
    cr_assert_eq(test_run_nhbench(args, out, sizeof out), 0, "%s", out);
    size_t n = (size_t)snprintf(want, sizeof want, "observables (study setting `observables = [...]`):\n  %s  [units: %s%s%s]\n    %s\n",
                                o->name, o->units, o->needs & NH_OBS_STEP ? "; from the last step" : "",
                                o->needs & (NH_OBS_REFERENCE | NH_OBS_LAMBDA_REFERENCE) ? "; needs the exact or reference solution" : "",
                                o->doc);
    char systems[2048] = "";
    int all = 1;
    for (int s = 0; nh_system_types[s]; s++) {
      nh_system sys = test_system_of(nh_system_types[s], NULL);
      if (o->absent(NULL, &sys) == NULL) strcat(strcat(systems, " "), sys.type->name);
      else all = 0;
    }
    if (!all) n += (size_t)snprintf(want + n, sizeof want - n, "    systems:%s\n", systems), partial_systems++;
    nh_system cp = test_system("chaotic_particle", NULL);
    char methods[4096] = "";
    all = 1;
    for (int k = 0; nh_integrator_types[k]; k++) {
      if (nh_integrator_types[k]->takes_base) continue;
      nh_method *m = test_method(nh_integrator_types[k]->name);
      if (o->absent(m, &cp) == NULL) strcat(strcat(methods, " "), m->type->name);
      else all = 0;
      nh_method_free(m);
    }
    if (!all) n += (size_t)snprintf(want + n, sizeof want - n, "    methods that define it:%s\n", methods[0] ? methods : " none"), partial_methods++;
    cr_expect_str_eq(out, want, "%s", o->name);
  }
  cr_expect(partial_systems > 0 && partial_methods > 0, "%d observables some systems lack, %d some methods lack",
            partial_systems, partial_methods);
}

/* nhbench list methods NAME, for every method: the heading (order with the defaults, symmetric or
 * not; a composition's (METHOD) form), and for a method of its own the properties and the systems
 * it handles, from its table's flags. */
Test(cli_output, list_each_method_heading_and_handles) {
  int own = 0;
  for (int i = 0; nh_integrator_types[i]; i++) {
    const nh_integrator_type *t = nh_integrator_types[i];
    char args[256], want[4096];
    snprintf(args, sizeof args, "list methods %s", t->name);
    cr_assert_eq(test_run_nhbench(args, out, sizeof out), 0, "%s", out);
    if (t->takes_base) {
      snprintf(want, sizeof want, "methods:\n  %s(METHOD)\n    %s\n    applies where its base method applies\n", t->name,
               t->doc);
    } else {
      nh_method *m = test_method(t->name);
      char lanes[256] = "";
      if (t->step_lanes && t->lanes_doc)
        snprintf(lanes, sizeof lanes, "steps ensembles in lanes %s (README: Performance); ", t->lanes_doc);
      else if (t->step_lanes) snprintf(lanes, sizeof lanes, "steps ensembles in lanes (README: Performance); ");
      snprintf(want, sizeof want,
               "methods:\n  %s  (order %d with defaults%s)\n    %s\n    %s%s%s%s%s%s"
               "handles:%s%s%s%s%s%s%s\n",
               t->name, nh_method_order(m), nh_method_is_symmetric(m) ? ", symmetric" : "", t->doc,
               t->properties & NH_PRESERVES_CONSTRAINT ? "preserves the constraint; " : "",
               t->properties & NH_HISTORY ? "two-step (no compositions); " : "",
               t->properties & NH_READS_PREVIOUS_STEP ? "reads its previous step (compositions reach order 4 at most); "
                                                      : "",
               t->properties & NH_TRACKS_ACTION ? "tracks the Herglotz action z; " : "",
               t->properties & NH_MIDPOINT_TIME ? "takes alpha(t), W(q,t), F(t) at t_j + h/2 only; " : "", lanes,
               t->handles & NH_SYS_VARIABLE_MASS ? " M(q)" : "",
               t->handles & NH_SYS_AFFINE_CONSTRAINTS ? " affine-constraints" : "",
               t->handles & NH_SYS_DAMPING ? " damping" : "", t->handles & NH_SYS_FORCING ? " forcing" : "",
               t->handles & NH_SYS_TIME_DAMPING ? " alpha(t)" : "", t->handles & NH_SYS_TIME_POTENTIAL ? " W(q,t)" : "",
               t->handles ? "" : " constant M, linear constraints, conservative systems only");
      nh_method_free(m);
      own++;
    }
    cr_expect(strncmp(out, want, strlen(want)) == 0, "%s:\n%s\nwanted:\n%s", t->name, out, want);
    expect_parameters_heading(t->name, t->params, t->nparams);
  }
  cr_expect_gt(own, 10);
  cr_expect_eq(test_run_nhbench("list methods nosuch", out, sizeof out), 2);
  cr_expect_str_eq(out, "nhbench list: no methods named 'nosuch'\n", "the error alone, no heading");
  cr_expect_eq(test_run_nhbench("list observables nosuch", out, sizeof out), 2);
  cr_expect_str_eq(out, "nhbench list: no observables named 'nosuch'\n");
}

/* nhbench info on a trajectory study (trajectory_particle.cfg at T = 0.4: 2 methods x 2 h x 2 ICs,
 * 4 observables): the whole "Runs" section read back line by line against the file, per method,
 * h and IC the status and sample count, and per observable component the first sample of the run,
 * the stored last value and largest magnitude (at the precision printed) with the units, or why the
 * method does not define it. */
Test(cli_output, info_trajectory_runs_from_the_file) {
  char path[128];
  results_file(path, sizeof path, "runs", "trajectory_particle.cfg", "--set T=0.4");
  nh_h5 f;
  cr_assert_eq(nh_h5_open(&f, "test", path), 0);
  int nobs = 0, nnames = 0;
  nh_h5_observable *obs = NULL;
  cr_assert_eq(nh_h5_read_observables(&f, &nobs, &obs), 0);
  const long long nh = nh_h5_dim(&f, "h"), nic = nh_h5_dim(&f, "ic");
  double *h = nh_h5_doubles(&f, "h", "h", NULL);
  int *status = nh_h5_ints(&f, "status", "method,h,ic", NULL), *nsh = nh_h5_ints(&f, "nsamples_h", "h", NULL);
  char **ics = nh_h5_strings(&f, "ic_names", "ic", &nnames);
  cr_assert(h && status && nsh && ics && nh == 2 && nic == 2 && nobs == 4);
  double *last[4], *maxabs[4];
  for (int i = 0; i < nobs; i++) {
    char a[256], b[256];
    snprintf(a, sizeof a, "observables_last/%s", obs[i].name);
    snprintf(b, sizeof b, "observables_max_abs/%s", obs[i].name);
    last[i] = nh_h5_doubles(&f, a, "method,h,ic,component", NULL);
    maxabs[i] = nh_h5_doubles(&f, b, "method,h,ic,component", NULL);
    cr_assert(last[i] && maxabs[i]);
  }
  cr_expect_eq(nhb_on("info %s", path), 0, "%s", out);
  const char *p = strstr(out, "\n  methods      2; observables 4\n\nRuns: status, and for each sampled observable its "
                              "value at t = 0 (first), at the end of the run\n(last) and its largest magnitude over "
                              "the samples (max|.|):\n");
  cr_assert_not_null(p, "%s", out);
  p = after_line_with(p, "(last) and its largest magnitude");
  /* The section, line by line to the end of the output. */
  char line[1024];
  int absent = 0;
  for (int m = 0; m < f.nmethods; m++) {
    int index = -1, used = 0;
    cr_assert(next_line(&p, line, sizeof line), "method %d missing", m);
    cr_assert_eq(sscanf(line, "%d %n", &index, &used), 1, "'%s'", line);
    cr_expect_eq(index, m);
    cr_expect(name_shown_as(line + used, f.methods[m]), "method %d: '%s' for %s", m, line + used, f.methods[m]);
    for (long long j = 0; j < nh; j++)
      for (long long i = 0; i < nic; i++) {
        const long long run = (m * nh + j) * nic + i;
        cr_expect_eq(status[run], 0);
        /* "    h = H, IC I (NAME): STATUS, N samples" */
        char hs[32], name[128], st[32];
        int icno = -1, samples = -1;
        cr_assert(next_line(&p, line, sizeof line), "run %lld missing", run);
        cr_assert_eq(
            sscanf(line, "    h = %31[^,], IC %d (%127[^)]): %31[^,], %d samples", hs, &icno, name, st, &samples), 5,
            "'%s'", line);
        cr_expect(printed_agrees(hs, h[j]) && icno == i && strcmp(name, ics[i]) == 0 && strcmp(st, "ok") == 0 &&
                      samples == nsh[j],
                  "run %lld: '%s' (h %.17g, IC %lld %s, %d samples)", run, line, h[j], i, ics[i], nsh[j]);
        for (int o = 0; o < nobs; o++) {
          const nh_h5_observable *ob = &obs[o];
          if (ob->absent[m][0]) {
            /* "      NAME   absent: REASON" */
            cr_assert(next_line(&p, line, sizeof line));
            const char *w = line + strspn(line, " ");
            const size_t k = strlen(ob->name);
            cr_expect(strncmp(w, ob->name, k) == 0 && w[k] == ' ', "run %lld: '%s' for %s", run, line, ob->name);
            const char *why = strstr(line, " absent: ");
            cr_expect(why && strcmp(why + 9, ob->absent[m]) == 0, "run %lld: '%s', file '%s'", run, line,
                      ob->absent[m]);
            absent++;
            continue;
          }
          char obj[256];
          snprintf(obj, sizeof obj, "observables/%s", ob->name);
          const long long idx[3] = {m, j, i};
          double *x = nh_h5_doubles_at(&f, obj, "method,h,ic,sample,component", 3, idx, NULL);
          cr_assert_not_null(x);
          for (int c = 0; c < ob->width; c++) {
            /* "      LABEL   first X  last Y  max|.| Z  [UNITS]", LABEL the name and the component's label */
            char label[300], a[32], b[32], d[32], units[64];
            snprintf(label, sizeof label, "%s%s%s", ob->name, ob->width > 1 ? " " : "", ob->width > 1 ? ob->labels[c] : "");
            cr_assert(next_line(&p, line, sizeof line));
            const char *w = line + strspn(line, " ");
            const size_t k = strlen(label);
            cr_expect(strncmp(w, label, k) == 0 && w[k] == ' ', "'%s' for %s", line, label);
            const char *fig = strstr(line, " first ");
            cr_assert_not_null(fig, "'%s'", line);
            cr_assert_eq(sscanf(fig, " first %31s last %31s max|.| %31s [%63[^]]]", a, b, d, units), 4, "'%s'", line);
            cr_expect(printed_agrees(a, x[c]), "%s, run %lld: first %s, file %.17g", label, run, a, x[c]);
            cr_expect(printed_agrees(b, last[o][run * ob->width + c]), "%s, run %lld: last %s, file %.17g", label, run,
                      b, last[o][run * ob->width + c]);
            cr_expect(printed_agrees(d, maxabs[o][run * ob->width + c]), "%s, run %lld: max %s, file %.17g", label, run,
                      d, maxabs[o][run * ob->width + c]);
            cr_expect_str_eq(units, ob->units, "%s", label);
          }
          free(x);
        }
      }
  }
  cr_expect(!next_line(&p, line, sizeof line), "after the runs: '%s'", line);
  cr_expect_eq(absent, 4, "rk4's multiplier at 2 h x 2 ICs");
  for (int i = 0; i < nobs; i++) free(last[i]), free(maxabs[i]);
  nh_h5_free_observables(nobs, obs);
  nh_h5_free_strings(ics, nnames);
  free(h), free(status), free(nsh);
  nh_h5_close(&f);
  remove(path);
}

/* nhbench report without -o writes REPORT.md and claims.csv into the results directory (-r), and
 * its summary counts each verdict: nsamples_h of trajectory_particle.cfg at T = 0.4 is 3 and 5
 * (h = 0.1, 0.05, a sample every 2 steps), so its max is 5: "> 4" and "~ 5 abs 0.1" pass, "< 1"
 * fails, and three rows on a file that does not exist are not verified (2, 1, 3: any two counts
 * swapped would show). --strict makes the failing row exit 1; no claims file is bad usage. */
Test(cli_output, report_counts_and_default_output) {
  char dir[128], path[256], args[1024];
  snprintf(dir, sizeof dir, "/tmp/nhbench-mut2-bench-%d-rep", (int)getpid());
  snprintf(args, sizeof args, "run " DATA "trajectory_particle.cfg -o %s/traj.h5 --set T=0.4", dir);
  cr_assert_eq(test_run_nhbench(args, out, sizeof out), 0, "%s", out);
  snprintf(path, sizeof path, "%s/c.claims", dir);
  test_write_file(path, "spec = \"mut\"; title = \"counts\";\nitems = ( { item = \"C1\"; source = \"[test]\"; claim = \"n\";\n"
                        "  rows = ( { quantity = \"a\"; file = \"traj\"; data = \"nsamples_h\"; reduce = \"max\"; expect = \"> 4\"; },\n"
                        "    { quantity = \"b\"; file = \"traj\"; data = \"nsamples_h\"; reduce = \"max\"; expect = \"~ 5 abs 0.1\"; },\n"
                        "    { quantity = \"c\"; file = \"traj\"; data = \"nsamples_h\"; reduce = \"max\"; expect = \"< 1\"; },\n"
                        "    { quantity = \"d\"; file = \"none\"; data = \"nsamples_h\"; reduce = \"max\"; expect = \"< 1\"; },\n"
                        "    { quantity = \"e\"; file = \"none\"; data = \"nsamples_h\"; reduce = \"max\"; expect = \"< 1\"; },\n"
                        "    { quantity = \"f\"; file = \"none\"; data = \"nsamples_h\"; reduce = \"max\"; expect = \"< 1\"; } ); } );\n");
  snprintf(args, sizeof args, "report %s -r %s", path, dir);
  cr_expect_eq(test_run_nhbench(args, out, sizeof out), 0, "%s", out);
  char want[512];
  snprintf(want, sizeof want, "nhbench report: 2 pass, 1 fail, 3 not-verified, 0 shown -> %s/REPORT.md, %s/claims.csv\n", dir, dir);
  cr_expect_str_eq(out, want);
  char file[300];
  snprintf(file, sizeof file, "%s/REPORT.md", dir);
  cr_expect_eq(access(file, F_OK), 0, "REPORT.md in the results directory");
  snprintf(file, sizeof file, "%s/claims.csv", dir);
  cr_expect_eq(access(file, F_OK), 0, "claims.csv in the results directory");
  snprintf(args, sizeof args, "report --strict %s -r %s", path, dir);
  cr_expect_eq(test_run_nhbench(args, out, sizeof out), 1, "%s", out);
  cr_expect_str_eq(out, want);
  cr_expect_eq(test_run_nhbench("report -s", out, sizeof out), 2);
  cr_expect(strncmp(out, "nhbench report: no claims file given\nusage: nhbench report", 58) == 0, "%s", out);
  snprintf(args, sizeof args, "rm -rf %s", dir);
  cr_expect_eq(system(args), 0);
}

/* nhbench run -o NAME without a directory: the output, its probe and the temporaries of killed
 * runs are in the working directory. Temporaries NAME.tmp-PID whose process is gone (or whose
 * suffix is no PID) are removed with a note naming them; one whose process is alive (this test's)
 * is left alone. --threads outside 1..1024 is refused before anything runs. */
Test(cli_output, run_in_the_working_directory_and_its_temporaries) {
  char dir[128], cmd[2048], live[64];
  snprintf(dir, sizeof dir, "/tmp/nhbench-mut2-bench-%d-cwd", (int)getpid());
  /* This program's temporaries are HDF5 files named by a pid: only those of a dead run are removed,
   * never a name no pid has (out.h5.tmp-12x, a pid above Linux's limit), another file by such a
   * name, or another output's. */
  const long dead = test_dead_pid();
  snprintf(cmd, sizeof cmd, "mkdir -p %s && cd %s && touch out.h5.tmp-99999999 out.h5.tmp-12x out.h5.tmp-%d other.h5.tmp-1",
           dir, dir, (int)getpid());
  cr_assert_eq(system(cmd), 0);
  char stale[256];
  snprintf(stale, sizeof stale, "%s/out.h5.tmp-%ld", dir, dead);
  hid_t h5 = H5Fcreate(stale, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  cr_assert_geq(h5, 0);
  H5Fclose(h5);
  snprintf(live, sizeof live, "out.h5.tmp-%d", (int)getpid());
  snprintf(cmd, sizeof cmd, "cd %s && %s run " DATA "trajectory_particle.cfg -o out.h5 --set T=0.2 -j 1025 2>&1", dir,
           NHBENCH_EXE);
  cr_expect_eq(test_run_command(cmd, out, sizeof out), 2);
  cr_expect_str_eq(out, "nhbench run: --threads '1025' is not a whole number in 1..1024\n");
  snprintf(cmd, sizeof cmd, "cd %s && %s run " DATA "trajectory_particle.cfg -o out.h5 --set T=0.2 --threads=2x 2>&1", dir,
           NHBENCH_EXE);
  cr_expect_eq(test_run_command(cmd, out, sizeof out), 2);
  cr_expect_str_eq(out, "nhbench run: --threads '2x' is not a whole number in 1..1024\n");
  snprintf(cmd, sizeof cmd, "cd %s && %s run " DATA "trajectory_particle.cfg -o out.h5 --set T=0.2 -j 1 2>&1 >/dev/null",
           dir, NHBENCH_EXE);
  cr_expect_eq(test_run_command(cmd, out, sizeof out), 0, "%s", out);
  char removed[128];
  snprintf(removed, sizeof removed, "nhbench: removed ./out.h5.tmp-%ld, left by a run that was killed\n", dead);
  expect_has(out, removed);
  cr_expect(strstr(out, "tmp-99999999") == NULL && strstr(out, "tmp-12x") == NULL, "%s", out);
  expect_has(out, "nhbench: trajectory study of particle, 2 methods, 1 threads -> out.h5\n");
  expect_has(out, "nhbench: wrote out.h5\n");
  cr_expect(strstr(out, live) == NULL, "the live run's temporary was removed:\n%s", out);
  char path[256];
  snprintf(path, sizeof path, "%s/%s", dir, live);
  cr_expect_eq(access(path, F_OK), 0, "%s is gone", live);
  snprintf(path, sizeof path, "%s/other.h5.tmp-1", dir);
  cr_expect_eq(access(path, F_OK), 0, "another output's temporary is gone");
  snprintf(path, sizeof path, "%s/out.h5", dir);
  cr_expect_eq(nhb_on("export %s study", path), 0);
  cr_expect_str_eq(out, "trajectory\n");
  snprintf(cmd, sizeof cmd, "ls -a %s | wc -l", dir);
  cr_expect_eq(test_run_command(cmd, out, sizeof out), 0);
  cr_expect_eq(atoi(out), 7, ". .. out.h5, the live temporary, other.h5.tmp-1, out.h5.tmp-99999999 and "
                             "out.h5.tmp-12x: no probe or journal left");
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  cr_expect_eq(system(cmd), 0);
}

/* info says which methods this nhbench steps in lanes (the file does not record it): a method
 * without lanes is named as one at a time, and NHBENCH_LANES=off is said. */
Test(cli_output, info_names_the_methods_in_lanes) {
  char path[256], cmd[1024], line[512];
  results_file(path, sizeof path, "lanes", "small_ensemble.cfg", "--set T=0.4 --set 'methods=[\"mp418\", \"rk4\"]'");
  snprintf(line, sizeof line,
           "  lanes        this nhbench steps 6 of the 7 methods' ensembles %d trajectories at a time (%s)\n"
           "               one at a time: mp418\n\n",
           NH_LANES, nh_isa_name(nh_lanes_isa()));
  cr_expect_eq(nhb_on("info %s", path), 0, "%s", out);
  expect_has(out, line);
  snprintf(cmd, sizeof cmd, "NHBENCH_LANES=off %s info %s 2>&1", NHBENCH_EXE, path);
  cr_expect_eq(test_run_command(cmd, out, sizeof out), 0, "%s", out);
  snprintf(line, sizeof line, "(%s), but NHBENCH_LANES is off\n               one at a time: mp418\n",
           nh_isa_name(nh_lanes_isa()));
  expect_has(out, line);
  unlink(path);
}
