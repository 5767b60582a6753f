/* results/slice.c and results/read_list.c through their API: the slice of a dataset of every type
 * (reals, integers, cost records, strings) against the dataset as the test reads it with the HDF5
 * API, selectors of every form, each refusal with its message; the list of datasets against the
 * file's own count (H5Ovisit). */
#include <criterion/criterion.h>
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "results/results.h"
#include "tests/helpers.h"

static nh_h5_select by_index(const char *dim, double value) {
  nh_h5_select s = {.value = value};
  snprintf(s.dim, sizeof s.dim, "%s", dim);
  return s;
}

static nh_h5_select by_name(const char *dim, const char *name) {
  nh_h5_select s = {.by_name = 1};
  snprintf(s.dim, sizeof s.dim, "%s", dim);
  snprintf(s.name, sizeof s.name, "%s", name);
  return s;
}

/* Dataset /GROUP/NAME as the HDF5 library converts it into memtype, n elements. */
static void *read_as(const char *path, const char *obj, hid_t memtype, size_t size, size_t *n) {
  hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT), ds = H5Dopen2(file, obj, H5P_DEFAULT);
  cr_assert(ds >= 0, "no %s", obj);
  hid_t space = H5Dget_space(ds);
  *n = (size_t)H5Sget_simple_extent_npoints(space);
  void *x = malloc(size * *n);
  cr_assert(H5Dread(ds, memtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, x) >= 0);
  H5Sclose(space), H5Dclose(ds), H5Fclose(file);
  return x;
}

static void open_file(nh_h5 *f, char *path, size_t len, const char *tag, const char *spec, const char *set) {
  test_results_file(path, len, "slice", tag, spec, set);
  cr_assert_eq(nh_h5_open(f, "test", path), 0);
}

/* An ensemble (small_ensemble.cfg: 2 listed methods and a grid's 5, 5 ICs, T = 20, h = 0.2, K = 2:
 * 51 samples at t = 0.4 k): a sample by its time and by index, a method by its name as written, the
 * integers, each counter of the cost records, the caveats as 0 or 1. */
Test(slice, every_type_and_selector, .timeout = 60) {
  char path[256], why[1024];
  nh_h5 f;
  open_file(&f, path, sizeof path, "ens", "small_ensemble.cfg", "");
  size_t n;
  double *dE = read_as(path, "/ensemble/dE", H5T_NATIVE_DOUBLE, sizeof(double), &n);
  const long long nm = f.nmethods, nic = 5, ns = 51;
  cr_assert_eq((long long)n, nm * nic * ns);
  nh_h5_slice s;
  /* method rk4 (index 1) by name, ic 3, t = 8 (sample 20): one value */
  const nh_h5_select at_t[] = {by_name("method", "rk4"), by_index("ic", 3), by_index("t", 8.0)};
  cr_assert_eq(nh_h5_slice_read(&f, "dE", NULL, at_t, 3, &s, why, sizeof why), 0, "%s", why);
  cr_expect_eq(s.nfree, 0);
  cr_expect_eq(s.count, 1);
  cr_expect_eq(s.x[0], dE[(1 * nic + 3) * ns + 20]);
  nh_h5_slice_free(&s);
  /* t = 8.1 is the same sample (within half an interval); sample 20 by index likewise */
  const nh_h5_select near[] = {by_index("method", 1), by_index("ic", 3), by_index("t", 8.1)};
  cr_assert_eq(nh_h5_slice_read(&f, "dE", NULL, near, 3, &s, why, sizeof why), 0, "%s", why);
  cr_expect_eq(s.x[0], dE[(1 * nic + 3) * ns + 20]);
  nh_h5_slice_free(&s);
  /* ic free: its coordinates are indices, named "ic" */
  const nh_h5_select ics[] = {by_index("method", 0), by_index("t", 20.0)};
  cr_assert_eq(nh_h5_slice_read(&f, "dE", NULL, ics, 2, &s, why, sizeof why), 0, "%s", why);
  cr_assert_eq(s.nfree, 1);
  cr_expect_str_eq(s.coord_name[0], "ic");
  for (long long i = 0; i < nic; i++) {
    cr_expect_eq(s.coord[0][i], i);
    cr_expect_eq(s.x[i], dE[(0 * nic + i) * ns + 50]);
  }
  nh_h5_slice_free(&s);
  free(dE);
  /* integers: status [method][ic] */
  int *status = read_as(path, "/ensemble/status", H5T_NATIVE_INT, sizeof(int), &n);
  cr_assert_eq(nh_h5_slice_read(&f, "status", NULL, NULL, 0, &s, why, sizeof why), 0, "%s", why);
  cr_assert_eq(s.count, nm * nic);
  for (long long i = 0; i < s.count; i++) cr_expect_eq(s.x[i], status[i]);
  nh_h5_slice_free(&s);
  free(status);
  /* every counter of the cost records [method] */
  nh_cost *cost = nh_h5_costs(&f, "cost", "method", NULL);
  cr_assert(cost);
  static const char *const fields[] = {"steps",        "rhs_evals",         "jacobian_evals",
                                       "linear_solves", "newton_iterations", "constraint_evals"};
  for (int k = 0; k < 6; k++) {
    cr_assert_eq(nh_h5_slice_read(&f, "cost", fields[k], NULL, 0, &s, why, sizeof why), 0, "%s", why);
    for (long long m = 0; m < nm; m++) {
      const unsigned long long c[6] = {cost[m].steps,         cost[m].rhs_evals,         cost[m].jacobian_evals,
                                       cost[m].linear_solves, cost[m].newton_iterations, cost[m].constraint_evals};
      cr_expect_eq(s.x[m], (double)c[k], "%s of method %lld", fields[k], m);
    }
    nh_h5_slice_free(&s);
  }
  /* a field the records lack, or none: refused, naming the members that are numbers */
  const char *const wrong[] = {"no_such_counter", ""};
  for (int k = 0; k < 2; k++) {
    cr_expect_eq(nh_h5_slice_read(&f, "cost", wrong[k], NULL, 0, &s, why, sizeof why), -1, "%s", wrong[k]);
    char want[512];
    snprintf(want, sizeof want,
             "dataset 'cost' holds records: --field names a number of them (steps, rhs_evals, jacobian_evals, "
             "linear_solves, newton_iterations, constraint_evals), not '%s'",
             wrong[k]);
    cr_expect(strstr(why, want) != NULL, "%s", why);
    cr_expect(s.x == NULL && s.count == 0);
  }
  free(cost);
  /* strings: a method's caveat, 1 where there is one (the grid's beta + beta2 = 1/2 point is skipped,
   * none of the others has one) */
  int count = 0;
  char **caveats = nh_h5_strings(&f, "caveats", "method", &count);
  cr_assert_eq(nh_h5_slice_read(&f, "caveats", NULL, NULL, 0, &s, why, sizeof why), 0, "%s", why);
  cr_assert_eq(s.count, count);
  for (int m = 0; m < count; m++) cr_expect_eq(s.x[m], caveats[m][0] != '\0');
  nh_h5_slice_free(&s);
  nh_h5_free_strings(caveats, count);
  nh_h5_close(&f);
  unlink(path);
}

/* Each refusal, with its message after the file's path. */
Test(slice, refusals_name_what_is_wrong, .timeout = 60) {
  char path[256], why[1024], want[1024];
  nh_h5 f;
  open_file(&f, path, sizeof path, "bad", "trajectory_particle.cfg", "");
  static const struct {
    const char *name, *message;
    int nsel;
    nh_h5_select sel[2];
  } bad[] = {
      {"summary", "no dataset 'summary'", 0, {{"", 0, "", 0}}},
      {"observables", "dataset 'observables' has no dimensions attribute", 0, {{"", 0, "", 0}}},
      {"observables/q", "no ic named 'nowhere'", 1, {{"ic", 1, "nowhere", 0}}},
      {"observables/q", "no component named 'p[0]'", 1, {{"component", 1, "p[0]", 0}}},
      {"observables/q", "dimension t takes a number, not 'x'", 1, {{"t", 1, "x", 0}}},
      {"observables/q", "dimension h takes a number, not 'x'", 1, {{"h", 1, "x", 0}}},
      {"final_state", "dimension state takes an index, not 1.5", 1, {{"state", 0, "", 1.5}}},
      {"final_state", "index out of range in dimension state", 1, {{"state", 0, "", 6}}},
      {"final_state",
       "dimension state has no name 'p[0]' (it takes an index, or a name of its coordinate)",
       1,
       {{"state", 1, "p[0]", 0}}},
      {"q0", "dimension dof has no name 'x' (it takes an index, or a name of its coordinate)", 1, {{"dof", 1, "x", 0}}},
      {"t", "no sample at t = 7 in the file", 2, {{"h", 0, "", 0.1}, {"t", 0, "", 7}}},
      {"t", "no h = 0.2 in the file", 1, {{"h", 0, "", 0.2}}},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    nh_h5_slice s;
    cr_expect_eq(nh_h5_slice_read(&f, bad[i].name, NULL, bad[i].sel, bad[i].nsel, &s, why, sizeof why), -1, "%s",
                 bad[i].message);
    snprintf(want, sizeof want, "%s: %s", path, bad[i].message);
    cr_expect_str_eq(why, want);
    cr_expect(s.x == NULL && s.count == 0, "%s: nothing to free", bad[i].message);
  }
  /* the component by its label, the ic by its name */
  nh_h5_slice s;
  const nh_h5_select ok[] = {by_name("component", "q[2]"), by_name("ic", "newmark"), by_index("method", 1),
                             by_index("h", 0.05)};
  cr_assert_eq(nh_h5_slice_read(&f, "observables/q", NULL, ok, 4, &s, why, sizeof why), 0, "%s", why);
  cr_expect_eq(s.nfree, 1);
  cr_expect_str_eq(s.coord_name[0], "t");
  cr_expect(fabs(s.coord[0][3] - 3 * 2 * 0.05) < 1e-12);
  nh_h5_slice_free(&s);
  /* any other dimension by a name of its coordinate (the strings of its dimension scale): the state
   * v[1] of the particle (q[0..2], v[0..2]) is index 4, as the test indexes final_state itself */
  const nh_h5_select v1[] = {by_name("state", "v[1]"), by_index("method", 1), by_index("h", 0.05)};
  cr_assert_eq(nh_h5_slice_read(&f, "final_state", NULL, v1, 3, &s, why, sizeof why), 0, "%s", why);
  hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT), ds = H5Dopen2(file, "/trajectory/final_state", H5P_DEFAULT);
  double all[2][2][2][6]; /* [method][h][ic][state] */
  cr_assert(H5Dread(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, all) >= 0);
  H5Dclose(ds), H5Fclose(file);
  cr_assert_eq(s.count, 2, "the free dimension ic");
  for (int ic = 0; ic < 2; ic++) cr_expect_eq(s.x[ic], all[1][1][ic][4], "ic %d", ic);
  nh_h5_slice_free(&s);
  nh_h5_close(&f);
  unlink(path);
}

static herr_t count_dataset(hid_t obj, const char *name, const H5O_info_t *info, void *data) {
  (void)obj, (void)name;
  *(int *)data += info->type == H5O_TYPE_DATASET;
  return 0;
}

/* The list of datasets: as many as the file holds (more than the list's first room of 32 here), in
 * name order, subgroups' with their paths; their shapes as the file has them. */
Test(slice, the_list_of_datasets, .timeout = 60) {
  char path[256];
  nh_h5 f;
  open_file(&f, path, sizeof path, "list", "onestep_random.cfg", "");
  hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  int want = 0;
  H5Ovisit(file, H5_INDEX_NAME, H5_ITER_INC, count_dataset, &want);
  H5Fclose(file);
  int n = 0;
  nh_h5_dataset *d = NULL;
  cr_assert_eq(nh_h5_datasets(&f, &n, &d), 0);
  cr_expect_gt(n, 32);
  cr_expect_eq(n, want);
  for (int i = 1; i < n; i++) cr_expect_lt(strcmp(d[i - 1].name, d[i].name), 0, "%s, %s", d[i - 1].name, d[i].name);
  int summary = 0;
  for (int i = 0; i < n; i++) {
    summary += strncmp(d[i].name, "summary/", 8) == 0;
    if (strcmp(d[i].name, "stepped") == 0) {
      cr_expect_str_eq(d[i].dims, "method,h,point,state");
      cr_expect_eq(d[i].rank, 4);
      cr_expect_eq(d[i].shape[0], 1);
      cr_expect_eq(d[i].shape[1], 2);
      cr_expect_eq(d[i].shape[2], 3 * 2);
      cr_expect_eq(d[i].shape[3], 2 * 5);
    }
  }
  cr_expect_eq(summary, 4, "the summary group's datasets");
  nh_h5_free_datasets(n, d);
  /* point's coordinate (point_t) holds numbers, no names: a point by name is refused */
  char why[1024];
  nh_h5_slice s;
  const nh_h5_select by_point = by_name("point", "first");
  cr_expect_eq(nh_h5_slice_read(&f, "local_err", NULL, &by_point, 1, &s, why, sizeof why), -1);
  cr_expect(strstr(why, "dimension point has no name 'first' (it takes an index, or a name of its coordinate)") != NULL,
            "%s", why);
  nh_h5_close(&f);
  unlink(path);
}

/* Any dataset of records by a number member: the orders table's observed and fit_count per method,
 * as the test reads them with the HDF5 API (a one-member memory type); a text member refused. */
Test(slice, records_by_their_number_members, .timeout = 60) {
  char path[256], why[1024];
  nh_h5 f;
  open_file(&f, path, sizeof path, "orders", "convergence_norms.cfg", "");
  hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT), ds = H5Dopen2(file, "/convergence/orders", H5P_DEFAULT);
  cr_assert(file >= 0 && ds >= 0);
  const char *const members[] = {"observed", "fit_count"};
  for (int k = 0; k < 2; k++) {
    double want[2];
    hid_t one = H5Tcreate(H5T_COMPOUND, sizeof(double));
    H5Tinsert(one, members[k], 0, H5T_NATIVE_DOUBLE);
    cr_assert_geq(H5Dread(ds, one, H5S_ALL, H5S_ALL, H5P_DEFAULT, want), 0);
    H5Tclose(one);
    nh_h5_slice s;
    cr_assert_eq(nh_h5_slice_read(&f, "orders", members[k], NULL, 0, &s, why, sizeof why), 0, "%s", why);
    cr_assert_eq(s.count, 2);
    for (int m = 0; m < 2; m++) cr_expect_eq(s.x[m], want[m], "%s of method %d", members[k], m);
    nh_h5_slice_free(&s);
  }
  H5Dclose(ds), H5Fclose(file);
  nh_h5_slice s;
  cr_expect_eq(nh_h5_slice_read(&f, "orders", "reason", NULL, 0, &s, why, sizeof why), -1);
  cr_expect(strstr(why, "not 'reason'") != NULL && strstr(why, "(claimed, expected, observed,") != NULL, "%s", why);
  nh_h5_close(&f);
  unlink(path);
}
