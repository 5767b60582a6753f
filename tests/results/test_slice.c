/* results/slice.c and results/read_list.c through their API: the slice of a dataset of every type
 * (reals, integers, cost records, strings) against the dataset as the test reads it with the HDF5
 * API, selectors of every form, each refusal with its message; the list of datasets against the
 * file's own count (H5Ovisit); the hyperslab a slice reads, on a hand-made file whose values encode
 * their indices. */
#include <criterion/criterion.h>
#include <hdf5.h>
#include <hdf5_hl.h>
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
  static const char *const fields[] = {"steps",         "rhs_evals",         "jacobian_evals",
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

/* ---- hyperslabs: a hand-made file whose values encode their indices ------------------------ */

/* The value at index idx[0..rank) of the hand-made datasets: its digits are the indices, the first
 * dimension's the highest (sizes stay below 10). */
static long long encoded(int rank, const long long *idx) {
  long long v = 0;
  for (int d = 0; d < rank; d++) v = 10 * v + idx[d];
  return v;
}

static void put_dims_attr(hid_t ds, const char *dims) {
  hid_t t = H5Tcopy(H5T_C_S1), sp = H5Screate(H5S_SCALAR);
  H5Tset_size(t, strlen(dims) + 1);
  hid_t a = H5Acreate2(ds, "dimensions", t, sp, H5P_DEFAULT, H5P_DEFAULT);
  cr_assert(a >= 0 && H5Awrite(a, t, dims) >= 0);
  H5Aclose(a), H5Sclose(sp), H5Tclose(t);
}

/* Dataset NAME [dims] of the given shape, of file type ftype, written from data as memtype; chunked
 * by chunk (NULL: contiguous), deflated where the filter is there. */
static void put(hid_t g, const char *name, const char *dims, int rank, const hsize_t *shape, const hsize_t *chunk,
                hid_t ftype, hid_t memtype, const void *data) {
  hid_t sp = H5Screate_simple(rank, shape, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE);
  if (chunk) H5Pset_chunk(dcpl, rank, chunk);
  if (chunk && H5Zfilter_avail(H5Z_FILTER_DEFLATE)) H5Pset_deflate(dcpl, 4);
  hid_t ds = H5Dcreate2(g, name, ftype, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  cr_assert(ds >= 0 && H5Dwrite(ds, memtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) >= 0, "%s", name);
  put_dims_attr(ds, dims);
  H5Dclose(ds), H5Pclose(dcpl), H5Sclose(sp);
}

typedef struct {
  double x;
  int n;
} record;

/* A readable ensemble-kind file of two methods whose datasets hold their own indices, encoded:
 * f3 [method 2, point 3, state 5] (doubles + 0.5, chunked 1 x 2 x 3 so that slices cross chunks),
 * i3 (integers) and r3 (records: x as f3, n the code times 2) alike, f4 [method 2, point 3, norm
 * 4, state 5] (contiguous), g5 [method 2, point 3, one 1, norm 4, state 5] (a dimension of size 1
 * between free ones), and x [method 2, h 3, sample 4] with h (0.4, 0.2, 0.1) and t [h, sample]
 * = sample * h. */
static void slab_file(const char *path) {
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  cr_assert(f >= 0);
  const int version = 2;
  H5LTset_attribute_int(f, "/", "schema_version", &version, 1);
  H5LTset_attribute_string(f, "/", "study", "ensemble");
  hid_t g = H5Gcreate2(f, "ensemble", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  hid_t vlen = H5Tcopy(H5T_C_S1);
  H5Tset_size(vlen, H5T_VARIABLE);
  const char *methods[2] = {"m0", "m1"};
  const int primary[2] = {1, 1};
  const hsize_t two = 2, three = 3;
  put(g, "methods", "method", 1, &two, NULL, vlen, vlen, methods);
  put(g, "primary", "method", 1, &two, NULL, H5T_STD_I32LE, H5T_NATIVE_INT, primary);
  H5Tclose(vlen);
  double f3[2 * 3 * 5], f4[2 * 3 * 4 * 5], g5[2 * 3 * 1 * 4 * 5], x[2 * 3 * 4], t[3 * 4];
  int i3[2 * 3 * 5];
  record r3[2 * 3 * 5];
  for (long long i = 0; i < 2 * 3 * 5; i++) {
    const long long idx[3] = {i / 15, i / 5 % 3, i % 5}, v = encoded(3, idx);
    f3[i] = (double)v + 0.5, i3[i] = (int)v, r3[i] = (record){(double)v + 0.5, (int)(2 * v)};
  }
  for (long long i = 0; i < 2 * 3 * 4 * 5; i++) {
    const long long idx[4] = {i / 60, i / 20 % 3, i / 5 % 4, i % 5}, idx5[5] = {idx[0], idx[1], 0, idx[2], idx[3]};
    f4[i] = (double)encoded(4, idx) + 0.5, g5[i] = (double)encoded(5, idx5) + 0.5;
  }
  for (long long i = 0; i < 2 * 3 * 4; i++)
    x[i] = (double)encoded(3, (const long long[]){i / 12, i / 4 % 3, i % 4}) + 0.5;
  const double h[3] = {0.4, 0.2, 0.1};
  for (int i = 0; i < 3 * 4; i++) t[i] = (i % 4) * h[i / 4];
  const hsize_t s3[3] = {2, 3, 5}, c3[3] = {1, 2, 3}, s4[4] = {2, 3, 4, 5}, s5[5] = {2, 3, 1, 4, 5}, sx[3] = {2, 3, 4},
                st[2] = {3, 4};
  put(g, "f3", "method,point,state", 3, s3, c3, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, f3);
  put(g, "i3", "method,point,state", 3, s3, c3, H5T_STD_I32LE, H5T_NATIVE_INT, i3);
  hid_t rt = H5Tcreate(H5T_COMPOUND, sizeof(record));
  H5Tinsert(rt, "x", HOFFSET(record, x), H5T_NATIVE_DOUBLE);
  H5Tinsert(rt, "n", HOFFSET(record, n), H5T_NATIVE_INT);
  put(g, "r3", "method,point,state", 3, s3, c3, rt, rt, r3);
  H5Tclose(rt);
  put(g, "f4", "method,point,norm,state", 4, s4, NULL, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, f4);
  put(g, "g5", "method,point,one,norm,state", 5, s5, NULL, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, g5);
  put(g, "h", "h", 1, &three, NULL, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, h);
  put(g, "t", "h,sample", 2, st, NULL, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, t);
  put(g, "x", "method,h,sample", 3, sx, NULL, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, x);
  H5Gclose(g), H5Fclose(f);
}

/* Every way of slicing dataset name [dims, of rank dimensions of the given sizes]: each dimension
 * free or fixed at each of its indices (by --at DIM=INDEX), so that every dimension is fixed alone,
 * with every other and in every position; each value of each slice against the one its index
 * encodes (as value = scale * code + offset), its free dimensions in the dataset's order, their
 * coordinates 0, 1, ... The number of slices read. */
static int every_slice(nh_h5 *f, const char *name, const char *field, int rank, const char *const *dims,
                       const long long *size, double scale, double offset) {
  long long choice[8]; /* per dimension: -1 free, else its fixed index */
  for (int d = 0; d < rank; d++) choice[d] = -1;
  int slices = 0;
  for (;;) {
    nh_h5_select sel[8];
    int nsel = 0, nfree = 0, free_dim[8];
    long long count = 1;
    for (int d = 0; d < rank; d++) {
      if (choice[d] >= 0)
        sel[nsel++] = by_index(dims[d], (double)choice[d]);
      else if (size[d] != 1)
        free_dim[nfree++] = d, count *= size[d];
    }
    char why[1024], what[256] = "";
    for (int d = 0; d < rank; d++)
      snprintf(what + strlen(what), sizeof what - strlen(what), "%s%s=%lld", d ? "," : "", dims[d], choice[d]);
    nh_h5_slice s;
    cr_assert_eq(nh_h5_slice_read(f, name, field, sel, nsel, &s, why, sizeof why), 0, "%s %s: %s", name, what, why);
    cr_assert_eq(s.rank, rank, "%s %s", name, what);
    cr_assert_eq(s.nfree, nfree, "%s %s: free dimensions", name, what);
    cr_assert_eq(s.count, count, "%s %s: values", name, what);
    for (int k = 0; k < nfree; k++) {
      cr_assert_eq(s.free_dim[k], free_dim[k], "%s %s: free dimension %d", name, what, k);
      cr_expect_str_eq(s.coord_name[k], dims[free_dim[k]], "%s %s", name, what);
      for (long long i = 0; i < size[free_dim[k]]; i++) cr_expect_eq(s.coord[k][i], (double)i, "%s %s", name, what);
    }
    for (long long i = 0; i < s.count; i++) {
      long long idx[8];
      for (int d = 0; d < rank; d++) idx[d] = choice[d] >= 0 ? choice[d] : 0;
      for (int k = 0; k < nfree; k++) idx[free_dim[k]] = nh_h5_slice_index(&s, i, k);
      const double want = scale * (double)encoded(rank, idx) + offset;
      cr_expect_eq(s.x[i], want, "%s %s: value %lld is %.17g, want %.17g", name, what, i, s.x[i], want);
    }
    nh_h5_slice_free(&s);
    slices++;
    int d = rank - 1; /* the next combination, the last dimension fastest */
    while (d >= 0 && ++choice[d] == size[d]) choice[d--] = -1;
    if (d < 0) return slices;
  }
}

/* The slice reads the part of the dataset its selectors fix: any dimension fixed (first, middle,
 * last), several at once (adjacent or not), none or all, a dimension of size 1 between free ones;
 * doubles, integers and each number member of records; every value checked against its indices. */
Test(slice_hyperslab, every_dimension_fixed_at_every_index, .timeout = 60) {
  char path[256];
  snprintf(path, sizeof path, "/tmp/nhbench-slice-slab-%d.h5", (int)getpid());
  slab_file(path);
  nh_h5 f;
  cr_assert_eq(nh_h5_open(&f, "test", path), 0);
  static const char *const d3[] = {"method", "point", "state"}, *const d4[] = {"method", "point", "norm", "state"},
                           *const d5[] = {"method", "point", "one", "norm", "state"};
  static const long long s3[] = {2, 3, 5}, s4[] = {2, 3, 4, 5}, s5[] = {2, 3, 1, 4, 5};
  const int n3 = 3 * 4 * 6, n4 = 3 * 4 * 5 * 6, n5 = 3 * 4 * 2 * 5 * 6;
  cr_expect_eq(every_slice(&f, "f3", NULL, 3, d3, s3, 1, 0.5), n3);
  cr_expect_eq(every_slice(&f, "i3", NULL, 3, d3, s3, 1, 0), n3);
  cr_expect_eq(every_slice(&f, "r3", "x", 3, d3, s3, 1, 0.5), n3);
  cr_expect_eq(every_slice(&f, "r3", "n", 3, d3, s3, 2, 0), n3);
  cr_expect_eq(every_slice(&f, "f4", NULL, 4, d4, s4, 1, 0.5), n4);
  cr_expect_eq(every_slice(&f, "g5", NULL, 5, d5, s5, 1, 0.5), n5);
  nh_h5_close(&f);
  unlink(path);
}

/* h fixed by its value in the middle dimension and t by its time at that h: the one value there;
 * t free: the times at the selected h as its coordinates, the values along sample; h free as well
 * (a block per h, its step sizes as coordinates). */
Test(slice_hyperslab, h_in_the_middle_and_t_at_that_h, .timeout = 60) {
  char path[256], why[1024];
  snprintf(path, sizeof path, "/tmp/nhbench-slice-slab-h-%d.h5", (int)getpid());
  slab_file(path);
  nh_h5 f;
  cr_assert_eq(nh_h5_open(&f, "test", path), 0);
  nh_h5_slice s;
  const nh_h5_select one[] = {by_index("method", 1), by_index("h", 0.2), by_index("t", 0.4)};
  cr_assert_eq(nh_h5_slice_read(&f, "x", NULL, one, 3, &s, why, sizeof why), 0, "%s", why);
  cr_assert_eq(s.count, 1);
  cr_expect_eq(s.x[0], 112.5, "method 1, h 0.2 (index 1), t = 0.4 (sample 2)");
  nh_h5_slice_free(&s);
  const nh_h5_select at_h[] = {by_index("method", 0), by_index("h", 0.1)};
  cr_assert_eq(nh_h5_slice_read(&f, "x", NULL, at_h, 2, &s, why, sizeof why), 0, "%s", why);
  cr_assert_eq(s.nfree, 1);
  cr_assert_eq(s.count, 4);
  cr_expect_str_eq(s.coord_name[0], "t");
  for (int i = 0; i < 4; i++) {
    cr_expect_eq(s.coord[0][i], i * 0.1, "t of sample %d at h = 0.1", i);
    cr_expect_eq(s.x[i], 20 + i + 0.5, "sample %d", i);
  }
  nh_h5_slice_free(&s);
  const nh_h5_select at_m[] = {by_index("method", 1)};
  cr_assert_eq(nh_h5_slice_read(&f, "x", NULL, at_m, 1, &s, why, sizeof why), 0, "%s", why);
  cr_assert_eq(s.nfree, 2);
  cr_assert_eq(s.count, 12);
  cr_expect_str_eq(s.coord_name[0], "h");
  cr_expect_str_eq(s.coord_name[1], "sample", "several h: samples by index");
  for (int i = 0; i < 12; i++) cr_expect_eq(s.x[i], 100 + 10 * (i / 4) + i % 4 + 0.5, "value %d", i);
  static const double h[3] = {0.4, 0.2, 0.1};
  for (int i = 0; i < 3; i++) cr_expect_eq(s.coord[0][i], h[i]);
  nh_h5_slice_free(&s);
  nh_h5_close(&f);
  unlink(path);
}
