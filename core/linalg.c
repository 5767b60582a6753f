#include "core/linalg.h"

#include "core/lanes.h"

#include <math.h>
#include <string.h>

/* Written out rather than called from GSL: at these sizes (m ≤ 24, mostly 1 to 12) GSL's LU and
 * Cholesky spend most of their time in views, BLAS dispatch and permutation objects; `make bench`
 * measures both ("small dense LU solves") and tests/core/test_core.c compares the answers with GSL's. */

/* Cholesky S = L Lᵀ in place (L in the lower triangle, the upper one left as it was); -1 unless
 * every pivot is positive and finite. */
static int cholesky(int m, double *S) {
  for (int j = 0; j < m; j++) {
    double d = S[j * m + j];
    for (int p = 0; p < j; p++) d -= S[j * m + p] * S[j * m + p];
    if (!(d > 0) || !isfinite(d)) return -1;
    const double ljj = sqrt(d);
    S[j * m + j] = ljj;
    for (int i = j + 1; i < m; i++) {
      double s = S[i * m + j];
      for (int p = 0; p < j; p++) s -= S[i * m + p] * S[j * m + p];
      S[i * m + j] = s / ljj;
    }
  }
  return 0;
}

/* L Lᵀ x = b for the factor of cholesky(), b (stride `stride`) overwritten by x. */
static void cholesky_solve(int m, const double *L, double *b, int stride) {
  for (int i = 0; i < m; i++) {
    double s = b[i * stride];
    for (int p = 0; p < i; p++) s -= L[i * m + p] * b[p * stride];
    b[i * stride] = s / L[i * m + i];
  }
  for (int i = m - 1; i >= 0; i--) {
    double s = b[i * stride];
    for (int p = i + 1; p < m; p++) s -= L[p * m + i] * b[p * stride];
    b[i * stride] = s / L[i * m + i];
  }
}

int nh_spd_solve_many(int m, double *S, double *B, int cols) {
  if (m == 1) return nh_spd_solve_scalar(S, B, cols);
  if (cholesky(m, S) != 0) return -1;
  for (int c = 0; c < cols; c++) cholesky_solve(m, S, B + c, cols);
  return 0;
}


int nh_spd_invert(int m, double *S) {
  double L[NH_LU_MAX_DIM * NH_LU_MAX_DIM];
  if (m > NH_LU_MAX_DIM) return -1;
  for (int i = 0; i < m * m; i++) L[i] = S[i];
  if (cholesky(m, L) != 0) return -1;
  for (int i = 0; i < m; i++)
    for (int j = 0; j < m; j++) S[i * m + j] = i == j;
  for (int c = 0; c < m; c++) cholesky_solve(m, L, S + c, m);
  /* The inverse of a symmetric matrix is symmetric; make it so to the last bit. */
  for (int i = 0; i < m; i++)
    for (int j = 0; j < i; j++) S[j * m + i] = S[i * m + j];
  return 0;
}

void nh_matvec(int n, const double *A, const double *x, double *out) {
  for (int i = 0; i < n; i++) {
    double s = 0;
    for (int j = 0; j < n; j++) s += A[i * n + j] * x[j];
    out[i] = s;
  }
}

/* Doolittle elimination with row pivoting (the largest |pivot|, the first on ties), applied to b
 * as it goes, then back substitution. */
int nh_lu_solve(int m, double *J, double *b) {
  if (m > NH_LU_MAX_DIM) return -1;
  if (m == 1) { /* one constraint's Schur complement: the elimination below reduces to this */
    if (J[0] == 0 || !isfinite(J[0])) return -1;
    b[0] /= J[0];
    return 0;
  }
  for (int k = 0; k < m; k++) {
    int p = k;
    for (int i = k + 1; i < m; i++)
      if (fabs(J[i * m + k]) > fabs(J[p * m + k])) p = i;
    const double pivot = J[p * m + k];
    if (pivot == 0 || !isfinite(pivot)) return -1;
    if (p != k) {
      for (int j = k; j < m; j++) {
        const double t = J[k * m + j];
        J[k * m + j] = J[p * m + j];
        J[p * m + j] = t;
      }
      const double t = b[k];
      b[k] = b[p];
      b[p] = t;
    }
    for (int i = k + 1; i < m; i++) {
      const double l = J[i * m + k] / pivot;
      J[i * m + k] = l;
      for (int j = k + 1; j < m; j++) J[i * m + j] -= l * J[k * m + j];
      b[i] -= l * b[k];
    }
  }
  for (int i = m - 1; i >= 0; i--) {
    double s = b[i];
    for (int j = i + 1; j < m; j++) s -= J[i * m + j] * b[j];
    b[i] = s / J[i * m + i];
  }
  return 0;
}

/* ---- lanes (core/lanes.h) ------------------------------------------------------------------------ */

/* nh_matvec's sums, lane by lane. */
static inline NH_LANES_INLINE void matvec_lanes(int n, const double *A, const double *x, double *out) {
  for (int i = 0; i < n; i++) {
    double s[NH_LANES] = {0};
    for (int j = 0; j < n; j++) {
      const double a = A[i * n + j];
#pragma omp simd
      for (int l = 0; l < NH_LANES; l++) s[l] += a * x[j * NH_LANES + l];
    }
    for (int l = 0; l < NH_LANES; l++) out[i * NH_LANES + l] = s[l];
  }
}
NH_LANES_ISA_VARIANTS(matvec, (int n, const double *A, const double *x, double *out), (n, A, x, out))

void nh_lanes_matvec(int n, const double *A, const double *x, double *out) { matvec(n, A, x, out); }

/* t where t > m, else m (NaN t keeps m): the select written apart from the row's, a form GCC
 * vectorizes for SSE2 (two selects on one comparison in one loop body it does not). */
static inline NH_LANES_INLINE double larger(double m, double t) { return t > m ? t : m; }

/* 1 where v is zero or not finite, else 0, as a double (a count GCC vectorizes for SSE2). */
static inline NH_LANES_INLINE double unusable(double v) { return ((v == 0) | (v - v != 0)) ? 1 : 0; }

/* Row `here`'s |entry| against the running search bin/rin, into bout/rout: nh_lu_solve's pivot
 * test (the largest |entry|, the first on ties), one row on every lane. The maximum and its row go
 * into the other of two buffers, not back in place (a select written back is a conditional store to
 * GCC, which SSE2 has not). */
static inline NH_LANES_INLINE void search_row_lanes(const double *entry, double here, const double *bin,
                                                    const double *rin, double *bout, double *rout) {
#pragma omp simd
  for (int l = 0; l < NH_LANES; l++) {
    const double a = fabs(entry[l]), b = bin[l], r = rin[l];
    const double most = larger(b, a); /* before the row's select on the same comparison */
    rout[l] = a > b ? here : r;
    bout[l] = most;
  }
}

/* The search's start at the pivot's own row: its |entry|, and -1 for "this row". */
static inline NH_LANES_INLINE void search_start_lanes(const double *entry, double *best, double *rows) {
#pragma omp simd
  for (int l = 0; l < NH_LANES; l++) best[l] = fabs(entry[l]), rows[l] = -1;
}

/* nh_lu_solve on every lane, the same operations in the same order on the same numbers, each lane
 * with its own pivots; a lane whose pivot is zero or not finite goes on with meaningless numbers (no
 * trap: IEEE arithmetic) and is reported failed. The rows are reached through pointers (row[i]:
 * row i's lanes, column j at row[i][j · NH_LANES + l], and its right-hand side rhs[i]): where every
 * lane picks the same pivot row, the exchange is of two pointers; where lanes differ, the entries
 * of the rows some lane picks are exchanged by selects, lane by lane (a lane's pivot row is a
 * double, -1 for row k itself, so that the selects vectorize). The search for column k + 1's pivot
 * runs row by row as column k is eliminated, each row's test right after its elimination: the same
 * tests on the same numbers in the same order as a search after the elimination, but between the
 * elimination's independent work instead of in one chain of its own. J is left in any order. */
static inline NH_LANES_INLINE void lu_lanes(int m, double *J, double *b, int *failed) {
  double *row[NH_LU_MAX_DIM], *rhs[NH_LU_MAX_DIM], bad[NH_LANES] = {0};
  double best[2][NH_LANES], rows[2][NH_LANES]; /* the search: its buffers, `at` the current one */
  int at = 0;
  for (int i = 0; i < m; i++) row[i] = &J[i * m * NH_LANES], rhs[i] = &b[i * NH_LANES];
  search_start_lanes(row[0], best[0], rows[0]);
  for (int i = 1; i < m; i++, at ^= 1) search_row_lanes(row[i], i, best[at], rows[at], best[at ^ 1], rows[at ^ 1]);
  for (int k = 0; k < m; k++) {
    const double *const p = rows[at]; /* each lane's pivot row for column k */
    unsigned picked = 0;              /* bit i + 1: row i (bit 0: row k itself) */
    for (int l = 0; l < NH_LANES; l++) picked |= 1u << (int)(p[l] + 1);
    if ((picked & (picked - 1)) == 0) { /* one row for every lane */
      const int r = (int)p[0];
      if (r >= 0) {
        double *t = row[k];
        row[k] = row[r], row[r] = t, t = rhs[k], rhs[k] = rhs[r], rhs[r] = t;
      }
    } else {
      for (int i = k + 1; i < m; i++) {
        if (!(picked >> (i + 1) & 1u)) continue;
        const double here = i;
        for (int j = k; j <= m; j++) { /* j = m: the right-hand side */
          double *const top = j < m ? &row[k][j * NH_LANES] : rhs[k];
          double *const other = j < m ? &row[i][j * NH_LANES] : rhs[i];
#pragma omp simd
          for (int l = 0; l < NH_LANES; l++) {
            const double was = top[l];
            top[l] = p[l] == here ? other[l] : was;
            other[l] = p[l] == here ? was : other[l];
          }
        }
      }
    }
    const double *const pivot = &row[k][k * NH_LANES];
#pragma omp simd
    for (int l = 0; l < NH_LANES; l++) /* zero, or not finite */
      bad[l] += unusable(pivot[l]);
#pragma GCC unroll 8
    for (int i = k + 1; i < m; i++) {
      double f[NH_LANES];
      double *const ri = row[i];
      const double *const rk = row[k];
#pragma omp simd
      for (int l = 0; l < NH_LANES; l++) f[l] = ri[k * NH_LANES + l] / pivot[l], ri[k * NH_LANES + l] = f[l];
#pragma GCC unroll 8
      for (int j = k + 1; j < m; j++) {
#pragma omp simd
        for (int l = 0; l < NH_LANES; l++) ri[j * NH_LANES + l] -= f[l] * rk[j * NH_LANES + l];
      }
#pragma omp simd
      for (int l = 0; l < NH_LANES; l++) rhs[i][l] -= f[l] * rhs[k][l];
      const double *const next = &ri[(k + 1) * NH_LANES]; /* column k + 1 of row i, final now */
      if (i == k + 1) search_start_lanes(next, best[at = 0], rows[0]);
      else search_row_lanes(next, i, best[at], rows[at], best[at ^ 1], rows[at ^ 1]), at ^= 1;
    }
  }
  /* The solution, row by row, into b at the end. Unrolled whole for the constant sizes (lu_sized):
   * otherwise the row's sum s lives on the stack, each term waiting for the last one's store. */
  double x[NH_LU_MAX_DIM][NH_LANES];
#pragma GCC unroll 8
  for (int i = m - 1; i >= 0; i--) {
    double s[NH_LANES];
#pragma omp simd
    for (int l = 0; l < NH_LANES; l++) s[l] = rhs[i][l];
#pragma GCC unroll 8
    for (int j = i + 1; j < m; j++) {
#pragma omp simd
      for (int l = 0; l < NH_LANES; l++) s[l] -= row[i][j * NH_LANES + l] * x[j][l];
    }
#pragma omp simd
    for (int l = 0; l < NH_LANES; l++) x[i][l] = s[l] / row[i][i * NH_LANES + l];
  }
  /* A loop, not memcpy: a call (or `rep movs`) costs more than these few vector moves. */
  for (int i = 0; i < m; i++) {
#pragma omp simd
    for (int l = 0; l < NH_LANES; l++) NH_LANE_AT(b, i, l) = x[i][l];
  }
  for (int l = 0; l < NH_LANES; l++) failed[l] = bad[l] != 0;
}

/* lu_lanes with m a constant for the sizes of most Newton systems here (nh_newmark's n + 2k: 5 on
 * the particle and the knife edge, 7 on the chaotic particle, 8 on the vertical disk), whose loops
 * GCC then lays out for that size. With the search interleaved (lu_lanes), 14 % less time per 8-lane
 * 7×7 solve than before both, on matrices shaped as nh_newmark's; 4 % of it from the constant m. */
static inline NH_LANES_INLINE void lu_sized_lanes(int m, double *J, double *b, int *failed) {
  switch (m) {
  case 2:
    lu_lanes(2, J, b, failed);
    return;
  case 3:
    lu_lanes(3, J, b, failed);
    return;
  case 4:
    lu_lanes(4, J, b, failed);
    return;
  case 5:
    lu_lanes(5, J, b, failed);
    return;
  case 6:
    lu_lanes(6, J, b, failed);
    return;
  case 7:
    lu_lanes(7, J, b, failed);
    return;
  case 8:
    lu_lanes(8, J, b, failed);
    return;
  default:
    lu_lanes(m, J, b, failed);
  }
}
NH_LANES_ISA_VARIANTS(lu_sized, (int m, double *J, double *b, int *failed), (m, J, b, failed))

void nh_lanes_lu_solve(int m, double *J, double *b, int *failed) { lu_sized(m, J, b, failed); }
