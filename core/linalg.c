#include "core/linalg.h"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_permutation.h>
#include <math.h>

int nh_spd_solve_many(int m, double *S, double *B, int cols) {
  gsl_matrix_view Sv = gsl_matrix_view_array(S, (size_t)m, (size_t)m);
  if (gsl_linalg_cholesky_decomp1(&Sv.matrix) != GSL_SUCCESS) return -1;
  for (int c = 0; c < cols; c++) {
    gsl_vector_view col = gsl_vector_view_array_with_stride(B + c, (size_t)cols, (size_t)m);
    if (gsl_linalg_cholesky_svx(&Sv.matrix, &col.vector) != GSL_SUCCESS) return -1;
  }
  return 0;
}

int nh_spd_solve(int m, double *S, double *b) { return nh_spd_solve_many(m, S, b, 1); }

int nh_spd_invert(int m, double *S) {
  gsl_matrix_view Sv = gsl_matrix_view_array(S, (size_t)m, (size_t)m);
  if (gsl_linalg_cholesky_decomp1(&Sv.matrix) != GSL_SUCCESS) return -1;
  return gsl_linalg_cholesky_invert(&Sv.matrix) == GSL_SUCCESS ? 0 : -1;
}

void nh_matvec(int n, const double *A, const double *x, double *out) {
  for (int i = 0; i < n; i++) {
    double s = 0;
    for (int j = 0; j < n; j++) s += A[i * n + j] * x[j];
    out[i] = s;
  }
}

int nh_lu_solve(int m, double *J, double *b) {
  size_t perm_data[NH_LU_MAX_DIM];
  if (m > NH_LU_MAX_DIM) return -1;
  gsl_permutation perm = {(size_t)m, perm_data};
  gsl_matrix_view Jv = gsl_matrix_view_array(J, (size_t)m, (size_t)m);
  gsl_vector_view bv = gsl_vector_view_array(b, (size_t)m);
  int signum;
  gsl_linalg_LU_decomp(&Jv.matrix, &perm, &signum);
  for (int i = 0; i < m; i++)
    if (J[i * m + i] == 0 || !isfinite(J[i * m + i])) return -1;
  return gsl_linalg_LU_svx(&Jv.matrix, &perm, &bv.vector) ? -1 : 0;
}
