/* The lane linear algebra of core/linalg.h against the scalar functions it reproduces, bit for bit,
 * on every instruction set this CPU has: nh_lanes_lu_solve against nh_lu_solve lane by lane (its
 * pivots chosen per lane: lanes that pick the same row, different rows, ties, zero, NaN and infinite
 * pivots, every size from 1 to NH_LU_MAX_DIM) and nh_lanes_matvec against nh_matvec; and core/lanes.h's
 * bit select (nh_lanes_pick). */
#include <criterion/criterion.h>
#include <gsl/gsl_randist.h>
#include <math.h>
#include <string.h>

#include "core/lanes.h"
#include "core/linalg.h"
#include "tests/helpers.h"

#define AT(J, m, i, j, l) (J)[((i) * (m) + (j)) * NH_LANES + (l)]

/* How lane l's matrix is made: random (0), one row picked by every lane's pivot search (1: the
 * largest entries on a fixed row), with ties in the pivot column (2), singular (3: a zero column),
 * a NaN (4), an infinity (5), and a matrix whose pivots differ from lane 0's by a permutation (6, 7). */
static void fill(gsl_rng *r, int m, int kind, double *J, double *b, int l) {
  for (int i = 0; i < m; i++) {
    AT(b, 1, i, 0, l) = gsl_ran_flat(r, -2, 2);
    for (int j = 0; j < m; j++) AT(J, m, i, j, l) = gsl_ran_flat(r, -1, 1);
  }
  switch (kind) {
  case 1:
    for (int j = 0; j < m; j++) AT(J, m, m - 1, j, l) = 10 + j;
    break;
  case 2:
    for (int i = 0; i < m; i++) AT(J, m, i, 0, l) = i % 2 ? -0.5 : 0.5;
    break;
  case 3:
    for (int i = 0; i < m; i++) AT(J, m, i, m / 2, l) = 0;
    break;
  case 4:
    AT(J, m, m / 2, m - 1, l) = NAN;
    break;
  case 5:
    AT(J, m, 0, 0, l) = INFINITY;
    break;
  default:
    break;
  }
}

static int same(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

Test(lanes_linalg, lu_solve_lane_by_lane_bit_for_bit) {
  gsl_rng *r = test_rng(7);
  const nh_isa chosen = nh_lanes_isa();
  int compared = 0, failed_lanes = 0;
  for (int isa = 0; isa < NH_ISA_COUNT; isa++) {
    if (nh_lanes_use_isa((nh_isa)isa) != 0) continue;
    for (int m = 1; m <= NH_LU_MAX_DIM; m++)
      for (int round = 0; round < 6; round++) {
        static double J[NH_LU_MAX_DIM * NH_LU_MAX_DIM * NH_LANES], b[NH_LU_MAX_DIM * NH_LANES];
        double Js[NH_LANES][NH_LU_MAX_DIM * NH_LU_MAX_DIM], bs[NH_LANES][NH_LU_MAX_DIM];
        int failed[NH_LANES];
        for (int l = 0; l < NH_LANES; l++) {
          fill(r, m, round == 0 ? 0 : (l + round) % 8, J, b, l);
          for (int i = 0; i < m; i++) {
            bs[l][i] = AT(b, 1, i, 0, l);
            for (int j = 0; j < m; j++) Js[l][i * m + j] = AT(J, m, i, j, l);
          }
        }
        nh_lanes_lu_solve(m, J, b, failed);
        for (int l = 0; l < NH_LANES; l++) {
          const int rc = nh_lu_solve(m, Js[l], bs[l]);
          cr_expect_eq(failed[l], rc != 0, "%s, m = %d, round %d, lane %d: failed %d, nh_lu_solve %d",
                       nh_isa_name((nh_isa)isa), m, round, l, failed[l], rc);
          failed_lanes += rc != 0;
          for (int i = 0; i < m && rc == 0; i++)
            cr_expect(same(AT(b, 1, i, 0, l), bs[l][i]), "%s, m = %d, round %d, lane %d: x[%d] = %a, nh_lu_solve %a",
                      nh_isa_name((nh_isa)isa), m, round, l, i, AT(b, 1, i, 0, l), bs[l][i]);
          compared += rc == 0;
        }
      }
  }
  nh_lanes_use_isa(chosen);
  cr_expect_gt(compared, 0);
  cr_expect_gt(failed_lanes, 0, "no lane met a singular or non-finite pivot");
  gsl_rng_free(r);
}

/* Where every lane has the same matrix but one, the lanes that agree exchange rows by pointers and
 * the odd one by selects: both give nh_lu_solve's answer. */
Test(lanes_linalg, lu_solve_one_lane_pivoting_otherwise) {
  enum { M = 4 };
  double J[M * M * NH_LANES], b[M * NH_LANES];
  const double A[M][M] = {{1, 2, 0, 1}, {3, 1, 1, 0}, {0, 4, 1, 2}, {1, 0, 5, 1}};
  const double rhs[M] = {1, -2, 3, 0.5};
  for (int l = 0; l < NH_LANES; l++)
    for (int i = 0; i < M; i++) {
      b[i * NH_LANES + l] = rhs[i];
      for (int j = 0; j < M; j++) AT(J, M, i, j, l) = A[l == 3 ? M - 1 - i : i][j]; /* lane 3: rows reversed */
    }
  for (int i = 0; i < M; i++) b[i * NH_LANES + 3] = rhs[M - 1 - i];
  int failed[NH_LANES];
  nh_lanes_lu_solve(M, J, b, failed);
  double Js[M * M], bs[M];
  memcpy(Js, A, sizeof Js), memcpy(bs, rhs, sizeof bs);
  cr_assert_eq(nh_lu_solve(M, Js, bs), 0);
  for (int l = 0; l < NH_LANES; l++) {
    cr_expect_eq(failed[l], 0);
    for (int i = 0; i < M; i++) /* the same system, its equations in another order: the same x to round-off */
      cr_expect(l == 3 ? fabs(b[i * NH_LANES + l] - bs[i]) < 1e-14 : same(b[i * NH_LANES + l], bs[i]),
                "lane %d, x[%d] = %a, nh_lu_solve %a", l, i, b[i * NH_LANES + l], bs[i]);
  }
}

Test(lanes_linalg, matvec_lane_by_lane_bit_for_bit) {
  gsl_rng *r = test_rng(8);
  const nh_isa chosen = nh_lanes_isa();
  for (int isa = 0; isa < NH_ISA_COUNT; isa++) {
    if (nh_lanes_use_isa((nh_isa)isa) != 0) continue;
    for (int n = 1; n <= NH_MAX_N; n++) {
      double A[NH_MAX_N * NH_MAX_N], x[NH_MAX_N * NH_LANES], y[NH_MAX_N * NH_LANES];
      for (int i = 0; i < n * n; i++) A[i] = i % 3 == 0 ? 0 : gsl_ran_flat(r, -1, 1);
      for (int i = 0; i < n * NH_LANES; i++) x[i] = i % 5 == 0 ? -0.0 : gsl_ran_flat(r, -1, 1);
      x[NH_LANES - 1] = INFINITY; /* 0 · inf: NaN, as nh_matvec makes it */
      nh_lanes_matvec(n, A, x, y);
      for (int l = 0; l < NH_LANES; l++) {
        double xl[NH_MAX_N], yl[NH_MAX_N];
        for (int i = 0; i < n; i++) xl[i] = x[i * NH_LANES + l];
        nh_matvec(n, A, xl, yl);
        for (int i = 0; i < n; i++)
          cr_expect(same(y[i * NH_LANES + l], yl[i]), "%s, n = %d, lane %d, entry %d: %a, nh_matvec %a",
                    nh_isa_name((nh_isa)isa), n, l, i, y[i * NH_LANES + l], yl[i]);
      }
    }
  }
  nh_lanes_use_isa(chosen);
  gsl_rng_free(r);
}

/* nh_lanes_pick gives the bits of the value its mask picks, whatever they are (−0, NaN payloads,
 * infinities, subnormals), and nh_lanes_mask makes the mask of a truth value. */
Test(lanes_linalg, pick_gives_the_bits_of_the_one_picked) {
  const double values[] = {-0.0, 0.0, NAN, -NAN, INFINITY, -INFINITY, 0x1p-1074, -1.5, 0x1.fffffffffffffp+1023};
  const int count = (int)(sizeof values / sizeof values[0]);
  cr_expect_eq(nh_lanes_mask(0), 0);
  cr_expect_eq(nh_lanes_mask(1), ~(uint64_t)0);
  cr_expect_eq(nh_lanes_mask(-7), ~(uint64_t)0, "any nonzero is true");
  for (int i = 0; i < count; i++)
    for (int j = 0; j < count; j++) {
      const double a = values[i], b = values[j];
      cr_expect(same(nh_lanes_pick(nh_lanes_mask(1), a, b), a), "pick(1, %a, %a)", a, b);
      cr_expect(same(nh_lanes_pick(nh_lanes_mask(0), a, b), b), "pick(0, %a, %a)", a, b);
    }
}
