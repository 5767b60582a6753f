/* What the command line shows of a study of any kind, without knowing the kind (issue 48 items 2
 * and 4): `nhbench export FILE dataset NAME [--at DIM=VALUE]... [--field F]`, the generic slice of
 * any dataset (results/slice.c), and `nhbench info --datasets FILE`, every dataset as the file
 * describes it. Every printed row is checked against the dataset as the test reads it with the HDF5
 * API and indexes it itself, against what the spec fixes independently (the step sizes, T/h steps,
 * the sample times t = k·K·h, the sizes of the dimensions) and against the kind's column
 * descriptors (studies/columns.h), which the writer follows. */
#include <criterion/criterion.h>
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "studies/runs.h"
#include "tests/helpers.h"

static char out[1 << 18];

/* A data row of out: the numbers of its line `row` (0-based, comments and blank lines skipped);
 * their count, or -1 if there is no such row. */
static int data_row(const char *text, int row, double *v, int max) {
  for (const char *line = text; *line;) {
    const char *end = strchr(line, '\n');
    size_t len = end ? (size_t)(end - line) : strlen(line);
    if (len && line[0] != '#' && row-- == 0) {
      char buf[1024];
      snprintf(buf, sizeof buf, "%.*s", (int)len, line);
      int n = 0;
      for (char *p = buf, *q; n < max; p = q) {
        v[n] = strtod(p, &q);
        if (q == p) break;
        n++;
      }
      return n;
    }
    line = end ? end + 1 : line + len;
  }
  return -1;
}

static int data_rows(const char *text) {
  double v[16];
  int n = 0;
  while (data_row(text, n, v, 16) >= 0) n++;
  return n;
}

/* The whole dataset /GROUP/NAME as doubles (HDF5 converts integers), and its shape. */
static double *read_all(const char *path, const char *obj, hsize_t *shape, int *rank) {
  hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  hid_t ds = H5Dopen2(file, obj, H5P_DEFAULT);
  cr_assert(ds >= 0, "no dataset %s in %s", obj, path);
  hid_t space = H5Dget_space(ds);
  *rank = H5Sget_simple_extent_dims(space, shape, NULL);
  size_t n = (size_t)H5Sget_simple_extent_npoints(space);
  double *x = malloc(sizeof(double) * n);
  cr_assert(H5Dread(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, x) >= 0);
  H5Sclose(space), H5Dclose(ds), H5Fclose(file);
  return x;
}

static int export(const char *path, const char *args) {
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "export %s dataset %s", path, args);
  return test_run_nhbench(cmd, out, sizeof out);
}

/* A convergence file's err [method][h]: a block per method, a row `h err` per step size, h from the
 * spec (0.1, 0.05); by index, by the method's name as written, and across methods at one h. */
Test(export_dataset, convergence_err_by_method_and_h, .timeout = 60) {
  char path[256];
  test_results_file(path, sizeof path, "export-dataset", "conv", "convergence_norms.cfg", "");
  hsize_t shape[8];
  int rank;
  double *err = read_all(path, "/convergence/err", shape, &rank);
  cr_assert_eq(rank, 2);
  cr_assert_eq(shape[0], 2);
  cr_assert_eq(shape[1], 2);
  const double h[2] = {0.1, 0.05};

  cr_assert_eq(export(path, "err"), 0, "%s", out);
  cr_expect(strstr(out, "# method h err\n# method 0 rk4\n") != NULL, "%s", out);
  cr_expect(strstr(out, "\n\n\n# method 1 nh_newmark(beta=0.1,beta2=0.1,alpha=0.5") != NULL, "%s", out);
  cr_assert_eq(data_rows(out), 4, "%s", out);
  for (int m = 0; m < 2; m++)
    for (int i = 0; i < 2; i++) {
      double v[4];
      cr_assert_eq(data_row(out, 2 * m + i, v, 4), 3);
      cr_expect_eq(v[0], m);
      cr_expect_eq(v[1], h[i]);
      cr_expect_eq(v[2], err[m * 2 + i]);
    }

  const char *by[] = {"err --at method=1", "err --at method='nh_newmark(beta2=0.1,beta=0.1,alpha=0.5)'"};
  for (int k = 0; k < 2; k++) {
    cr_assert_eq(export(path, by[k]), 0, "%s", out);
    cr_expect(strstr(out, "# h err\n") != NULL, "%s", out);
    cr_assert_eq(data_rows(out), 2, "%s", out);
    for (int i = 0; i < 2; i++) {
      double v[4];
      cr_assert_eq(data_row(out, i, v, 4), 2);
      cr_expect_eq(v[0], h[i]);
      cr_expect_eq(v[1], err[2 + i]);
    }
  }

  cr_assert_eq(export(path, "err --at h=0.05"), 0, "%s", out);
  cr_expect(strstr(out, "# method err\n") != NULL, "%s", out);
  for (int m = 0; m < 2; m++) {
    double v[4];
    cr_assert_eq(data_row(out, m, v, 4), 2);
    cr_expect_eq(v[0], m);
    cr_expect_eq(v[1], err[m * 2 + 1]);
  }
  cr_assert_eq(export(path, "err --at h=0.05 --at method=0"), 0, "%s", out);
  double v[4];
  cr_assert_eq(data_rows(out), 1);
  cr_assert_eq(data_row(out, 0, v, 4), 1);
  cr_expect_eq(v[0], err[1]);
  free(err);

  /* a cost record's counter: T/h steps for every method (T = 0.4) */
  cr_assert_eq(export(path, "cost --field steps --at method=1"), 0, "%s", out);
  for (int i = 0; i < 2; i++) {
    cr_assert_eq(data_row(out, i, v, 4), 2);
    cr_expect_eq(v[0], h[i]);
    cr_expect_eq(v[1], round(0.4 / h[i]));
  }
  unlink(path);
}

/* A trajectory's observable [method][h][ic][sample][component] at one run: `t value` rows with the
 * times of that h (t = k·K·h, K = sample_every = 2), NaN past the run's samples; the last free
 * dimension varies fastest over a 2-D slice. */
Test(export_dataset, trajectory_observable_over_its_samples, .timeout = 60) {
  char path[256];
  test_results_file(path, sizeof path, "export-dataset", "traj", "trajectory_particle.cfg", "");
  hsize_t shape[8];
  int rank;
  double *q = read_all(path, "/trajectory/observables/q", shape, &rank);
  cr_assert_eq(rank, 5);
  const long long ns = (long long)shape[3], nc = (long long)shape[4];
  cr_assert_eq(shape[0], 2);
  cr_assert_eq(shape[1], 2);
  cr_assert_eq(shape[2], 2);
  cr_assert_eq(nc, 3);
  /* method 1, h = 0.05 (index 1), ic "newmark" (index 1), component q[2] */
  const char *sel = "observables/q --at method=1 --at h=0.05 --at ic=newmark --at component=2";
  cr_assert_eq(export(path, sel), 0, "%s", out);
  cr_expect(strstr(out, "# t observables/q\n") != NULL, "%s", out);
  cr_assert_eq(data_rows(out), ns, "%s", out);
  for (long long k = 0; k < ns; k++) {
    double v[4];
    cr_assert_eq(data_row(out, (int)k, v, 4), 2);
    cr_expect(fabs(v[0] - k * 2 * 0.05) <= 1e-12, "t[%lld] = %g", k, v[0]);
    cr_expect_eq(v[1], q[(((1 * 2 + 1) * 2 + 1) * ns + k) * nc + 2], "sample %lld", k);
  }
  /* h = 0.1: 11 samples (T = 2, K = 2), then NaN in t and the values */
  cr_assert_eq(export(path, "observables/q --at method=0 --at h=0.1 --at ic=0 --at component=q[1]"), 0, "%s", out);
  for (long long k = 0; k < ns; k++) {
    double v[4];
    cr_assert_eq(data_row(out, (int)k, v, 4), 2);
    if (k <= 10) {
      cr_expect(fabs(v[0] - k * 2 * 0.1) <= 1e-12, "t[%lld] = %g", k, v[0]);
      cr_expect_eq(v[1], q[((0 * 2 + 0) * 2 + 0) * ns * nc + k * nc + 1]);
    } else {
      cr_expect(isnan(v[0]) && isnan(v[1]), "sample %lld past the run: %g %g", k, v[0], v[1]);
    }
  }
  /* two free dimensions (sample, component) at one run: a block per sample, the component fastest */
  cr_assert_eq(export(path, "observables/q --at method=1 --at h=0.1 --at ic=1"), 0, "%s", out);
  cr_expect(strstr(out, "# t component observables/q\n# sample 0 t = 0\n") != NULL, "%s", out);
  cr_expect(strstr(out, "\n\n\n# sample 1 t = 0.2\n") != NULL, "%s", out);
  cr_assert_eq(data_rows(out), ns * nc, "%s", out);
  for (long long k = 0; k < 3; k++)
    for (long long c = 0; c < nc; c++) {
      double v[4];
      cr_assert_eq(data_row(out, (int)(k * nc + c), v, 4), 3);
      cr_expect(fabs(v[0] - k * 2 * 0.1) <= 1e-12);
      cr_expect_eq(v[1], c);
      cr_expect_eq(v[2], q[(((1 * 2 + 0) * 2 + 1) * ns + k) * nc + c]);
    }
  /* t [h][sample] with h free: the samples by index (no one h's times), a block per h */
  cr_assert_eq(export(path, "t"), 0, "%s", out);
  cr_expect(strstr(out, "# h sample t\n# h 0 h = 0.1\n0.1 0 0\n0.1 1 0.2") != NULL, "%s", out);
  cr_expect(strstr(out, "\n\n\n# h 1 h = 0.05\n0.05 0 0\n0.05 1 0.1") != NULL, "%s", out);
  cr_expect_eq(data_rows(out), 2 * ns);
  free(q);
  unlink(path);
}

/* Several datasets side by side: a column each over the same free dimensions, each fixed by the
 * --at of its own dimensions (norm only in err; by the name of its coordinate, the norms scale),
 * the values as the test reads them with the HDF5 API; datasets that do not line up, and a --at
 * no dataset has, refused. */
Test(export_dataset, several_datasets_side_by_side, .timeout = 60) {
  char path[256];
  test_results_file(path, sizeof path, "export-dataset", "wp", "work_precision_small.cfg", "");
  hsize_t shape[8], wshape[8];
  int rank, wrank;
  double *err = read_all(path, "/work_precision/err", shape, &rank),
         *h = read_all(path, "/work_precision/h", wshape, &wrank);
  double *work = read_all(path, "/work_precision/work", wshape, &wrank);
  cr_assert_eq(rank, 3);
  const long long nh = (long long)shape[1], nn = (long long)shape[2];
  cr_assert_eq(nn, NH_WP_NORMS);
  cr_assert_geq(shape[0], 2);
  for (int by = 0; by < 2; by++) { /* the norm q_2 (index 3) by its name and by its index */
    cr_assert_eq(
        export(path, by ? "work,err,status --at method=1 --at norm=3" : "work,err,status --at method=1 --at norm=q_2"),
        0, "%s", out);
    cr_expect(strstr(out, "# h work err status\n") != NULL, "%s", out);
    cr_expect(strstr(out, "\n# err [method,h,norm], units ") != NULL, "a header line per dataset: %s", out);
    cr_assert_eq(data_rows(out), nh, "%s", out);
    for (long long i = 0; i < nh; i++) {
      double v[8];
      cr_assert_eq(data_row(out, (int)i, v, 8), 4, "%s", out);
      cr_expect_eq(v[0], h[i]);
      cr_expect_eq(v[1], work[1 * nh + i]);
      cr_expect_eq(v[2], err[(1 * nh + i) * nn + 3], "h %g", h[i]);
      cr_expect_eq(v[3], 0);
    }
  }
  static const struct {
    const char *args, *message;
  } bad[] = {
      {"work,err --at method=0", "datasets work and err do not line up: their free dimensions differ"},
      {"work,err --at method=0 --at norm=0 --at ic=0", "--at ic=...: none of work,err has that dimension"},
      {"work,nope", "no dataset 'nope'"},
      {"work,,err", "one to 7 names, separated by commas"},
      {"work,", "one to 7 names, separated by commas"},
      {",work", "one to 7 names, separated by commas"},
      {"work,norms --at method=0", "datasets work and norms do not line up: their free dimensions differ"},
      {"a,b,c,d,e,f,g,h", "one to 7 names, separated by commas"},
      {"work,err --at norm=q_3", "dimension norm has no name 'q_3'"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    cr_expect_eq(export(path, bad[i].args), 2, "%s: %s", bad[i].args, out);
    cr_expect(strstr(out, bad[i].message) != NULL, "%s: '%s' not in: %s", bad[i].args, bad[i].message, out);
  }
  /* two free dimensions (method, h) side by side: a block per method, named, the columns after the
   * method's index and h */
  cr_assert_eq(export(path, "work,status"), 0, "%s", out);
  cr_expect(strstr(out, "# method h work status\n# method 0 rk4\n") != NULL, "%s", out);
  cr_expect(strstr(out, "\n\n\n# method 1 nh_newmark(") != NULL, "%s", out);
  cr_assert_eq(data_rows(out), shape[0] * nh, "%s", out);
  for (long long m = 0; m < (long long)shape[0]; m++)
    for (long long i = 0; i < nh; i++) {
      double v[8];
      cr_assert_eq(data_row(out, (int)(m * nh + i), v, 8), 4);
      cr_expect(v[0] == m && v[1] == h[i] && v[2] == work[m * nh + i] && v[3] == 0, "method %lld, h %g", m, h[i]);
    }
  free(err), free(h), free(work);
  unlink(path);
}

/* A name of 300 letters, longer than any selector's name. */
#define LONG_NAME                                                                                                      \
  "n123456789n123456789n123456789n123456789n123456789n123456789n123456789n123456789n123456789n123456789"               \
  "n123456789n123456789n123456789n123456789n123456789n123456789n123456789n123456789n123456789n123456789"               \
  "n123456789n123456789n123456789n123456789n123456789n123456789n123456789n123456789n123456789n123456789"

/* Bad requests: exit 2 with a message naming the file and what is wrong; nothing on stdout. */
Test(export_dataset, bad_requests_are_refused, .timeout = 60) {
  char path[256];
  test_results_file(path, sizeof path, "export-dataset", "bad", "convergence_norms.cfg", "");
  static const struct {
    const char *args, *message;
  } bad[] = {
      {"nope", "no dataset 'nope'"},
      {"err --at foo=1", "dataset 'err' has no dimension 'foo'"},
      {"err --at method=2", "index out of range in dimension method"},
      {"err --at method=-1", "index out of range in dimension method"},
      {"err --at method=0.5", "dimension method takes an index, not 0.5"},
      {"err --at method=rk5", "no method 'rk5' in the file"},
      {"err --at h=0.07", "no h = 0.07 in the file"},
      {"err --at method", "--at 'method': expected DIM=VALUE"},
      {"err --at =1", "--at '=1': expected DIM=VALUE"},
      {"err --at h=", "--at 'h=': expected DIM=VALUE"},
      {"err --at abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklm=1", "expected DIM=VALUE"},
      {"err --at method=rk4 --at h=1 --at h=1 --at h=1 --at h=1 --at h=1 --at h=1 --at h=1 --at h=1",
       "--at 'h=1': more than 8 selectors"},
      {"err --at method=" LONG_NAME, "the name is too long"},
      {"", "dataset needs a dataset NAME"},
      {"err --relative", "table 'dataset' takes no option --relative (its options: --at --field)"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    cr_expect_eq(export(path, bad[i].args), 2, "%s: %s", bad[i].args, out);
    cr_expect(strstr(out, bad[i].message) != NULL, "%s: '%s' not in: %s", bad[i].args, bad[i].message, out);
  }
  unlink(path);
}

/* ---- nhbench info --datasets ------------------------------------------------------------------ */

static herr_t count_dataset(hid_t obj, const char *name, const H5O_info_t *info, void *data) {
  (void)obj, (void)name;
  *(int *)data += info->type == H5O_TYPE_DATASET;
  return 0;
}

/* Every dataset of a trajectory file, listed with its dimensions and their sizes as the spec makes
 * them (2 methods, 2 step sizes, 2 ICs, n = 3, T/(hK) + 1 = 21 samples at the finer h), its units
 * and description as the kind's column descriptors say; a description longer than the 120 columns
 * cut with "...". */
Test(info_datasets, every_dataset_of_a_trajectory, .timeout = 60) {
  char path[256], cmd[512], want[1024];
  test_results_file(path, sizeof path, "any-kind", "info", "trajectory_particle.cfg", "");
  hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  int ndatasets = 0;
  H5Ovisit(file, H5_INDEX_NAME, H5_ITER_INC, count_dataset, &ndatasets);
  H5Fclose(file);
  snprintf(cmd, sizeof cmd, "info --datasets %s", path);
  cr_assert_eq(test_run_nhbench(cmd, out, sizeof out), 0, "%s", out);
  snprintf(want, sizeof want, "\n%d datasets (nhbench export %s dataset NAME", ndatasets, path);
  cr_expect(strstr(out, want) != NULL, "'%s' not in:\n%s", want, out);
  cr_expect(strstr(out, ": trajectory study\n  system       particle()\n") != NULL, "%s", out);
  static const struct {
    const char *name, *shape;
  } expect[] = {{"final_state", "method 2, h 2, ic 2, state 6"}, {"t", "h 2, sample 21"},
                {"status", "method 2, h 2, ic 2"},                {"observables/q", "method 2, h 2, ic 2, sample 21, component 3"},
                {"q0", "ic 2, dof 3"},                            {"h", "h 2"}};
  for (size_t i = 0; i < sizeof expect / sizeof *expect; i++) {
    const nh_result_column *c = nh_column_find(nh_trajectory_columns, expect[i].name);
    if (c) {
      snprintf(want, sizeof want, "\n  %s [%s], units %s\n      %s\n", c->name, expect[i].shape, c->units, c->doc);
    } else { /* not the kind's own column: name and shape only */
      snprintf(want, sizeof want, "\n  %s [%s], units ", expect[i].name, expect[i].shape);
    }
    cr_expect(strstr(out, want) != NULL, "'%s' not in:\n%s", want, out);
  }
  /* cut: the description of caveats is longer than the line */
  const char *caveats = strstr(out, "\n  caveats [method 2], units -\n      ");
  cr_assert(caveats != NULL, "%s", out);
  const char *line = strchr(caveats + 1, '\n') + 1, *end = strchr(line, '\n');
  cr_expect_eq(end - line, 120, "%.*s", (int)(end - line), line);
  cr_expect(strncmp(end - 3, "...", 3) == 0);
  unlink(path);
}

Test(info_datasets, bad_arguments_are_refused) {
  cr_expect_eq(test_run_nhbench("info --datasets", out, sizeof out), 2);
  cr_expect(strstr(out, "no FILE.h5 given") != NULL, "%s", out);
  cr_expect_eq(test_run_nhbench("info --dataset-list /nonexistent.h5", out, sizeof out), 2, "%s", out);
  cr_expect_eq(test_run_nhbench("info --datasets /nonexistent/a.h5", out, sizeof out), 2, "%s", out);
}

/* A file whose datasets lack their attributes, or hold a line break in one: what is missing is
 * shown as "?" (dimension names) or left empty (description), and a line break, which would make a
 * row of its own, is refused naming the dataset (exit 2). */
Test(info_datasets, missing_and_hostile_attributes, .timeout = 60) {
  char path[256], cmd[512];
  test_results_file(path, sizeof path, "any-kind", "hostile", "trajectory_particle.cfg", "");
  hid_t file = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  cr_assert(H5Adelete_by_name(file, "/trajectory/q0", "units", H5P_DEFAULT) >= 0);
  cr_assert(H5Adelete_by_name(file, "/trajectory/q0", "description", H5P_DEFAULT) >= 0);
  cr_assert(H5Adelete_by_name(file, "/trajectory/v0", "dimensions", H5P_DEFAULT) >= 0);
  H5Fclose(file);
  snprintf(cmd, sizeof cmd, "info --datasets %s", path);
  cr_assert_eq(test_run_nhbench(cmd, out, sizeof out), 0, "%s", out);
  cr_expect(strstr(out, "\n  q0 [ic 2, dof 3], units ?\n      \n") != NULL, "%s", out);
  cr_expect(strstr(out, "\n  v0 [? 2, ? 3], units as v\n      initial velocities\n") != NULL, "%s", out);
  cr_assert_eq(export(path, "q0 --at ic=1"), 0, "%s", out);
  cr_expect(strstr(out, "# q0 [ic,dof], units ?: \n# dof q0\n0 ") != NULL, "%s", out);
  /* a line break in a description */
  file = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  hid_t ds = H5Dopen2(file, "/trajectory/t", H5P_DEFAULT);
  H5Adelete(ds, "description");
  hid_t type = H5Tcopy(H5T_C_S1), space = H5Screate(H5S_SCALAR);
  H5Tset_size(type, H5T_VARIABLE);
  hid_t attr = H5Acreate2(ds, "description", type, space, H5P_DEFAULT, H5P_DEFAULT);
  const char *text = "two\nlines";
  cr_assert(H5Awrite(attr, type, &text) >= 0);
  H5Aclose(attr), H5Sclose(space), H5Tclose(type), H5Dclose(ds), H5Fclose(file);
  cr_expect_eq(test_run_nhbench(cmd, out, sizeof out), 2, "%s", out);
  cr_expect(strstr(out, "t") != NULL && strstr(out, "two\nlines") == NULL, "%s", out);
  unlink(path);
}
