/* Small dense linear algebra shared by every layer: matrices are row-major, sizes are at most a
 * few dozen (NH_LU_MAX_DIM), nothing allocates, failures are return values. */
#ifndef NH_LINALG_H
#define NH_LINALG_H

#include <math.h>

#include "core/state.h"

/* Largest system nh_lu_solve takes: a Newton system in (q, v, λ, μ). */
#define NH_LU_MAX_DIM (2 * NH_MAX_N + 2 * NH_MAX_K)

/* out = A x for the n×n matrix A (out must not alias x); sums run over j in increasing order. */
void nh_matvec(int n, const double *A, const double *x, double *out);
/* Solves J x = b (m×m, m ≤ NH_LU_MAX_DIM, LU with partial pivoting) in place: b becomes x, J its
 * LU factors. Returns 0, or -1 if a pivot is zero or not finite. */
int nh_lu_solve(int m, double *J, double *b);

/* The same at NH_LANES problems at once, in lane layout (core/lanes.h): x[j·NH_LANES + l],
 * A[(i·n + j)·NH_LANES + l] for lane l. Each lane's numbers are the scalar function's, bit for bit.
 *   nh_lanes_matvec: out = A x per lane for one n×n matrix A (not in lanes) shared by the lanes.
 *   nh_lanes_lu_solve: nh_lu_solve per lane, each with its own pivots; failed[l] = 1 where
 *   nh_lu_solve returns -1 (that lane's b is then meaningless), else 0. */
void nh_lanes_matvec(int n, const double *A, const double *x, double *out);
void nh_lanes_lu_solve(int m, double *J, double *b, int *failed);

/* Solves S X = B for `cols` right-hand sides stored as the columns of B (m×cols, row-major); S is
 * overwritten by its Cholesky factor. Returns 0, or -1 if S is not positive definite. */
int nh_spd_solve_many(int m, double *S, double *B, int cols);
/* nh_spd_solve_many for m = 1, one constraint, the common case: a division per column, not a
 * square root and two; -1 unless S[0] is positive and finite. */
static inline int nh_spd_solve_scalar(const double *S, double *B, int cols) {
  if (!(S[0] > 0) || !isfinite(S[0])) return -1;
  for (int c = 0; c < cols; c++) B[c] /= S[0];
  return 0;
}
/* Solves the SPD system S x = b of size m in place (b becomes x), as nh_spd_solve_many. Inline,
 * so that the projections the explicit methods make every step divide without a call. */
static inline int nh_spd_solve(int m, double *S, double *b) {
  return m == 1 ? nh_spd_solve_scalar(S, b, 1) : nh_spd_solve_many(m, S, b, 1);
}
/* Replaces the SPD m×m matrix S (m ≤ NH_LU_MAX_DIM) by its inverse, exactly symmetric (Cholesky
 * factorisation, then m solves). Returns 0, or -1 if S is not positive definite. */
int nh_spd_invert(int m, double *S);

#endif
