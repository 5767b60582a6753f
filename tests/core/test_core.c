/* core/: the small dense linear algebra, the random streams and the parameter descriptors, against
 * hand-computed answers. */
#include <criterion/criterion.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_integration.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/hash.h"
#include "core/linalg.h"
#include "core/param.h"
#include "core/quadrature.h"
#include "core/rng.h"
#include "core/text.h"

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

/* Against GSL's LU and Cholesky (an independent implementation) on random systems of every size
 * up to NH_LU_MAX_DIM: nonsymmetric matrices with no dominant diagonal (pivoting matters) for LU,
 * BᵀB + I for the SPD solves and the inverse. Answers agree to 1e-12 relative; the residual
 * |Jx − b| is at round-off; a NaN or a zero column is refused; the inverse is exactly symmetric. */
Test(core, lu_and_cholesky_agree_with_gsl) {
  gsl_set_error_handler_off();
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, 31);
  enum { D = NH_LU_MAX_DIM };
  double worst = 0;
  for (int m = 1; m <= D; m++)
    for (int rep = 0; rep < 5; rep++) {
      double J[D * D], J0[D * D], G[D * D], b[D], b0[D], x[D], S[D * D], Sinv[D * D], T[D * D];
      for (int i = 0; i < m * m; i++) J0[i] = J[i] = G[i] = gsl_rng_uniform(r) - 0.5;
      for (int i = 0; i < m; i++) b0[i] = b[i] = x[i] = gsl_rng_uniform(r) - 0.5;
      cr_assert_eq(nh_lu_solve(m, J, b), 0, "m = %d", m);
      size_t pd[D];
      gsl_permutation perm = {(size_t)m, pd};
      gsl_matrix_view Gv = gsl_matrix_view_array(G, (size_t)m, (size_t)m);
      gsl_vector_view xv = gsl_vector_view_array(x, (size_t)m);
      int sgn;
      gsl_linalg_LU_decomp(&Gv.matrix, &perm, &sgn);
      gsl_linalg_LU_svx(&Gv.matrix, &perm, &xv.vector);
      double xmax = 0, diff = 0, res = 0;
      for (int i = 0; i < m; i++) xmax = fmax(xmax, fabs(x[i])), diff = fmax(diff, fabs(b[i] - x[i]));
      for (int i = 0; i < m; i++) {
        double s = -b0[i];
        for (int j = 0; j < m; j++) s += J0[i * m + j] * b[j];
        res = fmax(res, fabs(s));
      }
      cr_expect(diff <= 1e-12 * xmax, "LU m = %d: differs from GSL by %.3e (|x| %.3g)", m, diff, xmax);
      cr_expect(res <= 1e-13 * (1 + xmax), "LU m = %d: residual %.3e", m, res);
      worst = fmax(worst, diff / xmax);
      /* SPD: S = BᵀB + I with B = J0. */
      for (int i = 0; i < m; i++)
        for (int j = 0; j < m; j++) {
          double s = i == j;
          for (int p = 0; p < m; p++) s += J0[p * m + i] * J0[p * m + j];
          S[i * m + j] = Sinv[i * m + j] = T[i * m + j] = s;
        }
      for (int i = 0; i < m; i++) b[i] = x[i] = b0[i];
      cr_assert_eq(nh_spd_solve(m, S, b), 0, "SPD m = %d", m);
      gsl_matrix_view Tv = gsl_matrix_view_array(T, (size_t)m, (size_t)m);
      gsl_linalg_cholesky_decomp1(&Tv.matrix);
      gsl_linalg_cholesky_svx(&Tv.matrix, &xv.vector);
      diff = xmax = 0;
      for (int i = 0; i < m; i++) xmax = fmax(xmax, fabs(x[i])), diff = fmax(diff, fabs(b[i] - x[i]));
      cr_expect(diff <= 1e-12 * xmax, "SPD m = %d: differs from GSL by %.3e", m, diff);
      cr_assert_eq(nh_spd_invert(m, Sinv), 0);
      gsl_linalg_cholesky_invert(&Tv.matrix);
      for (int i = 0; i < m; i++)
        for (int j = 0; j < m; j++) {
          cr_expect(fabs(Sinv[i * m + j] - T[i * m + j]) <= 1e-12 * fabs(T[i * m + i]), "inverse m = %d (%d, %d)", m, i, j);
          cr_expect(Sinv[i * m + j] == Sinv[j * m + i], "inverse m = %d not symmetric at (%d, %d)", m, i, j);
        }
    }
  cr_log_info("LU: largest relative difference from GSL %.2e", worst);
  double Z[9] = {1, 0, 2, 3, 0, 1, 4, 0, 5}, z[3] = {1, 1, 1}; /* a zero column: singular */
  cr_expect_eq(nh_lu_solve(3, Z, z), -1);
  double W[4] = {1, NAN, 2, 1}, w[2] = {1, 1};
  cr_expect_eq(nh_lu_solve(2, W, w), -1, "a NaN pivot is refused");
  double P[4] = {1, 0, 0, 0}, p[2] = {1, 1}; /* semidefinite */
  cr_expect_eq(nh_spd_solve(2, P, p), -1);
  double Q[4] = {1, 0, 0, 0};
  cr_expect_eq(nh_spd_invert(2, Q), -1);
  gsl_rng_free(r);
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

/* A hand table of the three parameter kinds: a choice in the middle, its default not the first
 * choice, so an index off by one, or a name for the wrong index, shows. */
static const char *const colours[] = {"red", "green", "blue", NULL};
static const nh_param_desc table[] = {
    {"x", NH_PARAM_REAL, 0.5, 0, 1, "a real", 0, NULL},
    {"colour", NH_PARAM_CHOICE, 1, 0, 2, "a choice", 0, colours},
    {"n", NH_PARAM_INT, 3, 0, 9, "an integer", 1, NULL},
};

static void expect_format(const double *vals, const char *expect) {
  char buf[128];
  size_t len = nh_params_format(table, 3, vals, buf, sizeof buf);
  cr_expect_str_eq(buf, expect);
  cr_expect_eq(len, strlen(expect), "length of '%s'", buf);
}

static void expect_refused(double *vals, const char *name, const char *text, const char *message) {
  char err[256] = "";
  double before[3] = {vals[0], vals[1], vals[2]};
  cr_expect_eq(nh_param_set(table, 3, vals, name, text, err, sizeof err), -1, "%s=%s accepted", name, text);
  cr_expect_str_eq(err, message);
  for (int i = 0; i < 3; i++) cr_expect_eq(vals[i], before[i], "a refused value changed parameter %d", i);
}

Test(core, param_choice_by_name) {
  double vals[3];
  char err[256] = "";
  nh_param_defaults(table, 3, vals);
  cr_expect(vals[0] == 0.5 && vals[1] == 1 && vals[2] == 3, "defaults (%g, %g, %g)", vals[0], vals[1], vals[2]);
  expect_format(vals, "x=0.5,colour=green");
  cr_expect_eq(nh_param_nchoices(&table[1]), 3);
  cr_expect_eq(nh_param_nchoices(&table[0]), 0);
  char names[64];
  nh_param_choices_text(&table[1], "|", names, sizeof names);
  cr_expect_str_eq(names, "red|green|blue");
  static const char *const names_in_order[] = {"red", "green", "blue"};
  for (int c = 2; c >= 0; c--) {
    cr_assert_eq(nh_param_set(table, 3, vals, "colour", names_in_order[c], err, sizeof err), 0, "%s", err);
    cr_expect_eq(vals[1], c, "colour=%s stored as %g", names_in_order[c], vals[1]);
    char expect[64];
    snprintf(expect, sizeof expect, "x=0.5,colour=%s", names_in_order[c]);
    expect_format(vals, expect);
  }
  /* Names only: an index, a near miss and an empty text are refused, quoting the text. */
  expect_refused(vals, "colour", "purple", "parameter colour='purple' is not one of red, green, blue");
  expect_refused(vals, "colour", "1", "parameter colour='1' is not one of red, green, blue");
  expect_refused(vals, "colour", "Red", "parameter colour='Red' is not one of red, green, blue");
  expect_refused(vals, "colour", "", "parameter colour='' is not one of red, green, blue");
  /* By index (parameter grids): integers 0..2 only. */
  cr_assert_eq(nh_param_set_value(table, 3, vals, "colour", 2, err, sizeof err), 0, "%s", err);
  expect_format(vals, "x=0.5,colour=blue");
  cr_expect_eq(nh_param_set_value(table, 3, vals, "colour", 3, err, sizeof err), -1);
  cr_expect_str_eq(err, "parameter colour=3 is not a choice index (0 to 2: red, green, blue)");
  cr_expect_eq(nh_param_set_value(table, 3, vals, "colour", -1, err, sizeof err), -1);
  cr_expect_eq(nh_param_set_value(table, 3, vals, "colour", 0.5, err, sizeof err), -1);
  cr_expect_str_eq(err, "parameter colour=0.5 must be an integer");
  cr_expect_eq(vals[1], 2, "refused indices left the value alone");
}

/* The real and integer kinds read and print as before the choice kind existed. */
Test(core, param_real_and_int_unchanged) {
  double vals[3];
  char err[256] = "";
  nh_param_defaults(table, 3, vals);
  cr_assert_eq(nh_param_set(table, 3, vals, "n", "4", err, sizeof err), 0, "%s", err);
  cr_assert_eq(nh_param_set(table, 3, vals, "x", "0.1", err, sizeof err), 0, "%s", err);
  expect_format(vals, "x=0.1,colour=green,n=4");
  expect_refused(vals, "n", "4.5", "parameter n=4.5 must be an integer");
  expect_refused(vals, "x", "2", "parameter x=2 is out of range [0, 1]");
  expect_refused(vals, "x", "abc", "parameter x='abc' is not a number");
  expect_refused(vals, "y", "1", "unknown parameter 'y' (parameters: x, colour, n)");
}

/* The 1×1 systems (one constraint: the Schur complements and Gram matrices of the hot paths) take
 * their own branch in both solvers: the quotient, and a zero, negative, infinite or NaN pivot
 * refused with the right-hand side left alone. */
Test(core, one_by_one_solves) {
  double J[1] = {-4}, b[1] = {2};
  cr_assert_eq(nh_lu_solve(1, J, b), 0);
  cr_expect_eq(b[0], -0.5);
  const double bad_lu[] = {0, -0.0, INFINITY, -INFINITY, NAN};
  for (size_t i = 0; i < sizeof bad_lu / sizeof *bad_lu; i++) {
    double K[1] = {bad_lu[i]}, c[1] = {3};
    cr_expect_eq(nh_lu_solve(1, K, c), -1, "LU pivot %g", bad_lu[i]);
    cr_expect_eq(c[0], 3, "LU pivot %g: b changed", bad_lu[i]);
  }
  double S[1] = {4}, s[1] = {2};
  cr_assert_eq(nh_spd_solve(1, S, s), 0);
  cr_expect_eq(s[0], 0.5);
  double U[1] = {8}, B[3] = {2, -4, 1};
  cr_assert_eq(nh_spd_solve_many(1, U, B, 3), 0);
  cr_expect(B[0] == 0.25 && B[1] == -0.5 && B[2] == 0.125, "columns %g %g %g", B[0], B[1], B[2]);
  const double bad_spd[] = {0, -1, INFINITY, NAN};
  for (size_t i = 0; i < sizeof bad_spd / sizeof *bad_spd; i++) {
    double T[1] = {bad_spd[i]}, t[1] = {3};
    cr_expect_eq(nh_spd_solve(1, T, t), -1, "SPD pivot %g", bad_spd[i]);
    cr_expect_eq(t[0], 3, "SPD pivot %g: b changed", bad_spd[i]);
  }
}

/* The 5-point Gauss–Legendre table against GSL's own rule on [0, 1] and the closed forms of A&S
 * 25.4.29, and its degree: exact for s^j, j <= 9, not for s^10. */
Test(core, gauss_legendre5_matches_gsl_and_its_degree) {
  gsl_integration_glfixed_table *t = gsl_integration_glfixed_table_alloc(NH_GL5_POINTS);
  cr_assert(t);
  const double r = 2 * sqrt(10.0 / 7), x1 = sqrt(5 - r) / 3, x2 = sqrt(5 + r) / 3;
  const double closed_node[NH_GL5_POINTS] = {(1 - x2) / 2, (1 - x1) / 2, 0.5, (1 + x1) / 2, (1 + x2) / 2};
  const double closed_weight[NH_GL5_POINTS] = {(322 - 13 * sqrt(70)) / 1800, (322 + 13 * sqrt(70)) / 1800, 64.0 / 225,
                                               (322 + 13 * sqrt(70)) / 1800, (322 - 13 * sqrt(70)) / 1800};
  for (int p = 0; p < NH_GL5_POINTS; p++) {
    double xi, wi;
    gsl_integration_glfixed_point(0, 1, (size_t)p, &xi, &wi, t);
    cr_expect(fabs(nh_gl5_node[p] - xi) <= 2.3e-16 && fabs(nh_gl5_weight[p] - wi) <= 2.3e-16, /* GSL maps x to (1 + x)/2 rounded */
              "point %d: (%.17g, %.17g), GSL (%.17g, %.17g)", p, nh_gl5_node[p], nh_gl5_weight[p], xi, wi);
    cr_expect(fabs(nh_gl5_node[p] - closed_node[p]) <= 2e-16 && fabs(nh_gl5_weight[p] - closed_weight[p]) <= 2e-16,
              "point %d against the closed form", p);
  }
  gsl_integration_glfixed_table_free(t);
  for (int j = 0; j <= 10; j++) {
    double sum = 0;
    for (int p = 0; p < NH_GL5_POINTS; p++) sum += nh_gl5_weight[p] * pow(nh_gl5_node[p], j);
    const double err = fabs(sum - 1.0 / (j + 1));
    if (j <= 9) cr_expect(err <= 1e-16, "s^%d: %.17g, exact %.17g", j, sum, 1.0 / (j + 1));
    else cr_expect(err > 1e-8, "s^10 is beyond the rule's degree: error %.3e", err);
  }
}

/* The "did you mean" distance: case, '_' and '-' ignored, a transposition one edit, symmetric;
 * the suggestions closest first, at most 3, none beyond max(2, |name|/3). */
Test(core, text_distance_and_suggestions) {
  cr_expect_eq(nh_text_distance("McLachlan", "mclachlan8"), 1);
  cr_expect_eq(nh_text_distance("ContactOscillator", "contact_oscillator"), 0);
  cr_expect_eq(nh_text_distance("nh_rattel", "nh_rattle"), 1, "a transposition is one edit");
  cr_expect_eq(nh_text_distance("abc", ""), 3);
  cr_expect_eq(nh_text_distance("", "abcd"), 4);
  cr_expect_eq(nh_text_distance("kitten", "sitting"), 3);
  cr_expect_eq(nh_text_distance("sitting", "kitten"), 3);
  const char *names[] = {"rattle", "nh_rattle", "shake", "nh_shake", "particle"};
  char buf[256] = "";
  cr_expect_eq(nh_text_suggest("nhrattle", names, 5, buf, sizeof buf), 2, "distances 0 and 2");
  cr_expect_str_eq(buf, "nh_rattle, rattle");
  buf[0] = '\0';
  cr_expect_eq(nh_text_suggest("zzzzzz", names, 5, buf, sizeof buf), 0);
  cr_expect_str_eq(buf, "");
  const char *many[] = {"ab", "ac", "ad", "ae"};
  buf[0] = '\0';
  cr_expect_eq(nh_text_suggest("aa", many, 4, buf, sizeof buf), 3, "at most 3");
  cr_expect_str_eq(buf, "ab, ac, ad");
}

/* core/: checks added for mutation robustness (issue 16), each against a value worked out by hand. */

/* nh_format_double: the shortest text that reads back exactly, in fixed notation for ordinary
 * magnitudes (10 is "10", not %.1g's "1e+01"), %g's exponent form below 1e-4 and from 1e15 on. */
Test(core, format_double_shortest_and_fixed) {
  static const struct {
    double x;
    const char *text;
  } cases[] = {{10, "10"},     {1500, "1500"},   {-2.5, "-2.5"}, {0.1, "0.1"},   {0, "0"},
               {1e-4, "0.0001"}, {1e-5, "1e-05"}, {1e15, "1e+15"}, {123.456, "123.456"},
               {100000, "100000"}, {9.5e14, "950000000000000"}, {-3e7, "-30000000"}, {2.5e-7, "2.5e-07"},
               {0.1 + 0.2, "0.30000000000000004"} /* 17 digits */};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char buf[32];
    nh_format_double(buf, sizeof buf, cases[i].x);
    cr_expect_str_eq(buf, cases[i].text, "%.17g printed as %s, expected %s", cases[i].x, buf, cases[i].text);
  }
  /* 1/3 needs all 17 significant digits to read back. */
  char buf[32];
  nh_format_double(buf, sizeof buf, 1.0 / 3);
  cr_expect(strtod(buf, NULL) == 1.0 / 3, "1/3 printed as %s", buf);
}

/* nh_text_append, each result worked out by hand: sep only between pieces (a one-character
 * string counts as begun), the text formatted, and a piece cut where the array ends, in its sep
 * or in its text, with nothing written past len bytes (the array lies in a larger one filled
 * with '#', which must stay so). */
Test(core, text_append_pieces_and_cuts) {
  static const struct {
    const char *before;
    size_t len;
    const char *sep, *piece, *after;
  } cases[] = {
      {"", 16, ", ", "ab", "ab"},          /* no sep before the first piece */
      {"x", 16, ", ", "y", "x, y"},        /* one character already there */
      {"ab", 7, "-", "cde", "ab-cde"},     /* exactly fills the 7 bytes */
      {"ab", 6, "-", "cde", "ab-cd"},      /* the text cut */
      {"abc", 5, ", ", "d", "abc,"},       /* the sep cut: no text */
      {"abc", 6, ", ", "d", "abc, "},      /* the sep fits, no room for text */
      {"abc", 4, ", ", "d", "abc"},        /* already full */
      {"abc", 4, "", "d", "abc"},          /* full, no sep */
      {"", 1, ", ", "d", ""},              /* room for the terminator only */
      {"a", 16, "", "bc", "abc"},          /* an empty sep */
  };
  for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
    char area[32];
    memset(area, '#', sizeof area);
    memcpy(area, cases[k].before, strlen(cases[k].before) + 1);
    nh_text_append(area, cases[k].len, cases[k].sep, "%s", cases[k].piece);
    cr_expect_str_eq(area, cases[k].after, "case %zu", k);
    for (size_t i = cases[k].len; i < sizeof area; i++)
      cr_expect_eq(area[i], '#', "case %zu: byte %zu written, past the %zu bytes", k, i, cases[k].len);
  }
  char buf[32] = "";
  nh_text_append(buf, sizeof buf, ", ", "%d %s", 3, "failed");
  nh_text_append(buf, sizeof buf, ", ", "(%g, %g)", 0.5, -2.0);
  cr_expect_str_eq(buf, "3 failed, (0.5, -2)");
}

/* FNV-1a 64 against the published test vectors (isthe.com/chongo/tech/comp/fnv, "FNV-1a 64"), and
 * continued hashing equal to hashing the whole at once. */
Test(core, fnv1a_published_vectors) {
  cr_expect_eq(nh_fnv1a(NH_FNV1A_BASIS, "", 0), 0xcbf29ce484222325ull);
  cr_expect_eq(nh_fnv1a(NH_FNV1A_BASIS, "a", 1), 0xaf63dc4c8601ec8cull);
  cr_expect_eq(nh_fnv1a(NH_FNV1A_BASIS, "foobar", 6), 0x85944171f73967e8ull);
  cr_expect_eq(nh_fnv1a(nh_fnv1a(NH_FNV1A_BASIS, "foo", 3), "bar", 3), 0x85944171f73967e8ull);
}

