/* results/ writer (write.c): the building blocks driven directly and read back with the HDF5 API.
 * Issue 16: mutation robustness. */
#include <criterion/criterion.h>
#include <errno.h>
#include <hdf5.h>
#include <hdf5_hl.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "results/writer.h"

static hid_t new_file(char *path, size_t len, const char *tag, nh_writer *w) {
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  snprintf(path, len, "/tmp/nhbench-mut2-writer-%d-%s.h5", (int)getpid(), tag);
  hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  cr_assert_geq(f, 0);
  memset(w, 0, sizeof *w);
  w->file = f;
  return f;
}

static void close_file(hid_t f, nh_writer *w, const char *path) {
  for (int i = 0; i < w->ndims; i++)
    if (w->dim[i].scale >= 0) H5Dclose(w->dim[i].scale);
  H5Fclose(f);
  remove(path);
}

/* Sizes: 0 is a size (an empty dataset, written and read back with its shape), a negative one is
 * refused by name (a count never set), and so the dataset after it is not written. */
Test(mut2_results_writer, dimension_sizes_zero_and_negative) {
  char path[128];
  nh_writer w;
  hid_t f = new_file(path, sizeof path, "sizes", &w);
  nh_w_dim(&w, "empty", 0);
  nh_w_dim(&w, "three", 3);
  const double v[3] = {0.5, 1.5, 2.5};
  nh_w_f64(&w, f, "nothing", "three,empty", v, "1", "no values");
  nh_w_f64(&w, f, "some", "three", v, "1", "three values");
  cr_assert_eq(w.failed, 0, "%s", w.err);
  int rank = 0;
  hsize_t dims[2] = {9, 9};
  cr_assert_eq(H5LTget_dataset_ndims(f, "nothing", &rank), 0);
  H5LTget_dataset_info(f, "nothing", dims, NULL, NULL);
  cr_expect(rank == 2 && dims[0] == 3 && dims[1] == 0, "shape (%llu, %llu)", (unsigned long long)dims[0],
            (unsigned long long)dims[1]);
  double back[3] = {0};
  cr_assert_eq(H5LTread_dataset_double(f, "some", back), 0);
  cr_expect(back[0] == 0.5 && back[1] == 1.5 && back[2] == 2.5);
  nh_w_dim(&w, "minus", -1);
  cr_expect_eq(w.failed, 1);
  cr_expect_str_eq(w.err, "dimension minus has a negative size");
  nh_w_f64(&w, f, "after", "three", v, "1", "not written");
  cr_expect_eq(H5Lexists(f, "after", H5P_DEFAULT), 0);
  close_file(f, &w, path);
  /* The same for a dimension already declared. */
  f = new_file(path, sizeof path, "sizes2", &w);
  nh_w_dim(&w, "n", 2);
  nh_w_dim(&w, "n", -3);
  cr_expect_str_eq(w.err, "dimension n has a negative size");
  cr_expect_eq(w.dim[0].size, 2, "the declared size is kept");
  close_file(f, &w, path);
}

/* The dimension table's own refusals carry no system error text, whatever errno held before. */
Test(mut2_results_writer, dimension_refusals_without_os_reason) {
  char path[128];
  nh_writer w;
  hid_t f = new_file(path, sizeof path, "full", &w);
  char name[32];
  for (int i = 0; i < NH_W_DIMS; i++) snprintf(name, sizeof name, "d%d", i), nh_w_dim(&w, name, 1);
  errno = ENOENT;
  nh_w_dim(&w, "d32", 1);
  cr_expect_str_eq(w.err, "too many dimensions (d32)");
  close_file(f, &w, path);
  f = new_file(path, sizeof path, "scale", &w);
  nh_w_dim(&w, "h", 2);
  nh_w_scale_f64(&w, f, "h", "h", (const double[]){0.5, 0.25}, "time", "step sizes");
  errno = ENOSPC;
  nh_w_dim(&w, "h", 3);
  cr_expect_str_eq(w.err, "dimension h has a coordinate dataset and cannot change size");
  close_file(f, &w, path);
}

/* An ensemble summary without samples: no last sample, so no variance at T (NaN), and nothing read
 * from the per-sample arrays; the per-run statistics as usual (one run, status 0). */
Test(mut2_results_writer, ensemble_summary_without_samples) {
  nh_study st;
  memset(&st, 0, sizeof st);
  st.count = 1, st.nsamples = 0, st.nmethods = 1;
  int status[1] = {0}, count[1] = {5};
  double maxdE[1] = {0.5}, slope[1] = {-0.25}, resid[1] = {1e-3}, var[1] = {2};
  nh_ensemble_result r;
  memset(&r, 0, sizeof r);
  r.status = status, r.max_abs_dE = maxdE, r.drift_slope = slope, r.max_residual = resid;
  r.dE_count = count + 1, r.dE_var = var + 1; /* one past the end: must not be read */
  nh_ensemble_summary s;
  nh_ensemble_summarize(&st, &r, 0, &s);
  cr_expect(s.ok == 1 && s.failures == 0 && s.max_max_abs_dE == 0.5 && s.median_abs_drift_slope == 0.25 &&
            s.mean_drift_slope == -0.25 && s.max_residual == 1e-3);
  cr_expect(isnan(s.final_var), "final_var %g without samples", s.final_var);
}

/* A dataset of rank 0 (dims ""): one value, written whole by nh_w_f64 and as its single row by
 * nh_w_f64_rows, read back as a scalar. */
static int row_of_seven(const void *ctx, long long i, double *out) {
  (void)ctx;
  out[0] = 7.25 + (double)i; /* row 0 only: 7.25 */
  return 0;
}
Test(mut2_results_writer, rank_zero_datasets_hold_one_value) {
  char path[128];
  nh_writer w;
  hid_t f = new_file(path, sizeof path, "rank0", &w);
  const double one = -3.5;
  nh_w_f64(&w, f, "whole", "", &one, "1", "one value");
  nh_w_f64_rows(&w, f, "by_rows", "", 0, row_of_seven, NULL, "1", "one row");
  cr_assert_eq(w.failed, 0, "%s", w.err);
  int rank = -1;
  double back = 0;
  cr_assert_eq(H5LTget_dataset_ndims(f, "by_rows", &rank), 0, "by_rows was not written");
  cr_expect_eq(rank, 0);
  cr_assert_eq(H5LTread_dataset_double(f, "by_rows", &back), 0);
  cr_expect_eq(back, 7.25);
  cr_assert_eq(H5LTread_dataset_double(f, "whole", &back), 0);
  cr_expect_eq(back, -3.5);
  close_file(f, &w, path);
}

/* HDF5's own refusal (a dataset name taken) is reported by the dataset's name alone: no system
 * error text, whatever errno held before the call. */
Test(mut2_results_writer, dataset_refused_by_hdf5_without_os_reason) {
  char path[128];
  nh_writer w;
  hid_t f = new_file(path, sizeof path, "twice", &w);
  nh_w_dim(&w, "two", 2);
  const double v[2] = {1, 2};
  nh_w_f64(&w, f, "x", "two", v, "1", "first");
  cr_assert_eq(w.failed, 0, "%s", w.err);
  errno = EACCES;
  nh_w_f64(&w, f, "x", "two", v, "1", "again");
  cr_expect_eq(w.failed, 1);
  cr_expect_str_eq(w.err, "cannot write dataset x");
  close_file(f, &w, path);
}
