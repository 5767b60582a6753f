/* core/: the small dense linear algebra and the random streams, against hand-computed answers. */
#include <criterion/criterion.h>
#include <gsl/gsl_errno.h>
#include <math.h>

#include "core/linalg.h"
#include "core/rng.h"

/* A = [[4, 2], [2, 3]] (SPD, det 8): A⁻¹ = [[3, −2], [−2, 4]]/8; A x = (2, 1) at x = (1/2, 0). */
Test(core, spd_solve_invert_by_hand) {
  gsl_set_error_handler_off(); /* failures are return values (core/linalg.h) */
  double S[4] = {4, 2, 2, 3}, b[2] = {2, 1};
  cr_assert_eq(nh_spd_solve(2, S, b), 0);
  cr_expect(fabs(b[0] - 0.5) < 1e-15 && fabs(b[1]) < 1e-15, "x = (%g, %g)", b[0], b[1]);
  double T[4] = {4, 2, 2, 3};
  cr_assert_eq(nh_spd_invert(2, T), 0);
  const double inv[4] = {3.0 / 8, -2.0 / 8, -2.0 / 8, 4.0 / 8};
  for (int i = 0; i < 4; i++) cr_expect(fabs(T[i] - inv[i]) < 1e-15, "inverse[%d] = %g", i, T[i]);
  /* Two right-hand sides as columns of B: (2, 1) and (4, 2)·… → (½, 0) and (0, 1) for (2, 3). */
  double U[4] = {4, 2, 2, 3}, B[4] = {2, 2, 1, 3};
  cr_assert_eq(nh_spd_solve_many(2, U, B, 2), 0);
  cr_expect(fabs(B[0] - 0.5) < 1e-15 && fabs(B[2]) < 1e-15, "first column");
  cr_expect(fabs(B[1]) < 1e-15 && fabs(B[3] - 1) < 1e-15, "second column");
  double N[4] = {1, 2, 2, 1}, c[2] = {1, 1}; /* indefinite */
  cr_expect_eq(nh_spd_solve(2, N, c), -1);
}

/* LU with partial pivoting needs the pivot swap here: [[0, 1], [2, 1]] x = (1, 3) → x = (1, 1);
 * a singular matrix is refused. */
Test(core, lu_solve_with_pivoting_by_hand) {
  double J[4] = {0, 1, 2, 1}, b[2] = {1, 3};
  cr_assert_eq(nh_lu_solve(2, J, b), 0);
  cr_expect(fabs(b[0] - 1) < 1e-15 && fabs(b[1] - 1) < 1e-15, "x = (%g, %g)", b[0], b[1]);
  double K[9] = {1, 2, 3, 2, 4, 6, 0, 1, 1}, r[3] = {1, 2, 3};
  cr_expect_eq(nh_lu_solve(3, K, r), -1, "rows 0 and 1 are parallel");
}

Test(core, matvec_by_hand) {
  const double A[9] = {1, 2, 3, 0, -1, 0, 4, 0, 1}, x[3] = {1, 1, 2};
  double out[3];
  nh_matvec(3, A, x, out);
  cr_expect(out[0] == 9 && out[1] == -1 && out[2] == 6, "(%g, %g, %g)", out[0], out[1], out[2]);
}

/* SplitMix64 of (seed, index): a known value (z = seed + φ·(index + 1), then the finaliser,
 * computed by hand here) and different streams per index and per seed. */
Test(core, stream_seed_splitmix_by_hand) {
  uint64_t z = 7 + 0x9E3779B97F4A7C15ull * 4;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  cr_expect_eq(nh_stream_seed(7, 3), z);
  cr_expect_neq(nh_stream_seed(7, 3), nh_stream_seed(7, 4));
  cr_expect_neq(nh_stream_seed(7, 3), nh_stream_seed(8, 3));
}
