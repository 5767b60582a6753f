/* bench/: the nhbench command line through the real binary, each printed figure compared with what
 * the test reads itself from the results file (the HDF5 datasets and attributes, through the
 * results/ reader or the HDF5 API) or computes by hand; exit codes and messages of the error paths
 * (issue 16, a second round of mutation robustness). */
#include <criterion/criterion.h>
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "results/results.h"
#include "tests/helpers.h"

#define DATA NHBENCH_SOURCE_DIR "/tests/data/"

static char out[1 << 18];

static void expect_has(const char *text, const char *needle) {
  cr_expect(strstr(text, needle) != NULL, "'%s' not in:\n%.4000s", needle, text);
}

/* `nhbench run DATA/SPEC -o PATH SET` into a temporary PATH named by tag. */
static void results_file(char *path, size_t len, const char *tag, const char *spec, const char *set) {
  char args[1024];
  snprintf(path, len, "/tmp/nhbench-mut2-bench-%d-%s.h5", (int)getpid(), tag);
  snprintf(args, sizeof args, "run " DATA "%s -o %s %s", spec, path, set);
  cr_assert_eq(test_run_nhbench(args, out, sizeof out), 0, "%s", out);
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
Test(mut2_bench, info_takes_exactly_one_file) {
  cr_expect_eq(test_run_nhbench("info /nonexistent/a.h5 extra", out, sizeof out), 2);
  const char *msg = "nhbench info: unexpected argument 'extra'\nusage: nhbench info [-h | --help] FILE.h5\n";
  cr_expect(strncmp(out, msg, strlen(msg)) == 0, "%s", out);
  cr_expect_eq(test_run_nhbench("info a.h5 b.h5 c.h5", out, sizeof out), 2);
  cr_expect(strncmp(out, "nhbench info: unexpected argument 'b.h5'\n", 41) == 0, "%s", out);
  cr_expect_eq(test_run_nhbench("info", out, sizeof out), 2);
  cr_expect(strncmp(out, "nhbench info: no FILE.h5 given\nusage: nhbench info", 50) == 0, "%s", out);
  cr_expect_eq(test_run_nhbench("info --bogus x.h5", out, sizeof out), 2);
  cr_expect(strncmp(out, "nhbench info: unknown option '--bogus'\n", 39) == 0, "%s", out);
  cr_expect_eq(test_run_nhbench("info -h 2>/dev/null", out, sizeof out), 0);
  cr_expect(strncmp(out, "usage: nhbench info [-h | --help] FILE.h5\n", 42) == 0, "%s", out);
  cr_expect_eq(test_run_nhbench("info x.h5 --help", out, sizeof out), 0);
  cr_expect(strncmp(out, "usage: nhbench info", 19) == 0, "%s", out);
}

/* ---- observables and series: labels put into the file by the test ---------------------------- */

/* Replaces the `labels` attribute of /trajectory/observables/NAME by "lab 0", "lab 1", ... (one
 * per component, blanks included) and returns the width. */
static int relabel(const char *path, const char *name) {
  char obj[256];
  snprintf(obj, sizeof obj, "/trajectory/observables/%s", name);
  hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  cr_assert_geq(f, 0);
  hid_t ds = H5Dopen2(f, obj, H5P_DEFAULT);
  cr_assert_geq(ds, 0, "%s", obj);
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

/* export observables: per observable (in the file's order) its index, name, width and units, then
 * "#   components: L0, L1, ..., Lw-1" (commas between, none after the last) and a comment per
 * method that does not define it; all as the file holds them (read here through results/). */
Test(mut2_bench, export_observables_lists_labels_and_absences) {
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
  char want[1 << 14];
  size_t len = (size_t)snprintf(want, sizeof want, "# index name width units\n");
  int absences = 0;
  for (int i = 0; i < nobs; i++) {
    len += (size_t)snprintf(want + len, sizeof want - len, "%d %s %d %s\n#   components:", i, obs[i].name,
                            obs[i].width, obs[i].units);
    for (int c = 0; c < obs[i].width; c++)
      len += (size_t)snprintf(want + len, sizeof want - len, " %s%s", obs[i].labels[c], c < obs[i].width - 1 ? "," : "");
    len += (size_t)snprintf(want + len, sizeof want - len, "\n");
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
 * number the file's to the bit. */
Test(mut2_bench, export_series_of_one_run_to_the_bit) {
  char path[128];
  results_file(path, sizeof path, "series", "trajectory_particle.cfg", "--set T=0.4");
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
  /* T = 0.4, h = 0.05, a sample every 2 steps: t = 0, 0.1, 0.2, 0.3, 0.4. */
  cr_expect_eq(nsh[1], 5);
  char want[1 << 14];
  size_t len = (size_t)snprintf(want, sizeof want, "# t");
  for (int c = 0; c < w; c++) len += (size_t)snprintf(want + len, sizeof want - len, " lab_%d", c);
  len += (size_t)snprintf(want + len, sizeof want - len, "\n# q [%s] of method 1 %s, h index 1, IC 1, status %d\n", units,
                          f.methods[1], status[(1 * nh + 1) * nic + 1]);
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
