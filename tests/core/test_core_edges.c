/* core/: the LU tie rule and size limits, the parameter refusals and range ends, parameter text
 * that does not fit its buffer, and the empty-able arrays, each against a value worked out by
 * hand. Issue 16: mutation robustness. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/linalg.h"
#include "core/param.h"

/* Partial pivoting takes the largest |pivot| and the first row on ties (core/linalg.c): for
 * [[1, 3], [1, 1]] no rows are swapped, so J becomes L\U = [[1, 3], [1, 3 - 1·3 - … ]]: l = 1,
 * u11 = 1 - 1·3 = -2. Solving with b = (0.1, 0.7) along these factors, written out here, differs
 * in the last bit from the swapped elimination's answer (x0 = 1 exactly there). */
Test(core_edges, lu_first_row_on_ties) {
  double J[4] = {1, 3, 1, 1}, b[2] = {0.1, 0.7};
  cr_assert_eq(nh_lu_solve(2, J, b), 0);
  cr_expect(J[0] == 1 && J[1] == 3 && J[2] == 1 && J[3] == -2, "factors [[%g, %g], [%g, %g]]", J[0], J[1], J[2],
            J[3]);
  const double y1 = 0.7 - 1 * 0.1, x1 = y1 / -2.0, x0 = (0.1 - 3 * x1) / 1.0;
  cr_expect(b[0] == x0 && b[1] == x1, "x = (%.17g, %.17g), want (%.17g, %.17g)", b[0], b[1], x0, x1);
  /* The swapped elimination gives x0 = (0.7 - (0.1 - 0.7)/2) = 1: a different number. */
  cr_assert(x0 != 0.7 - (0.1 - 0.7) / 2.0, "precondition: the tie rule shows in the answer");
  /* A strictly larger pivot below is taken: [[1, 3], [2, 1]] swaps, U = [[2, 1], [., 3 - 0.5]]. */
  double K[4] = {1, 3, 2, 1}, c[2] = {5, 4};
  cr_assert_eq(nh_lu_solve(2, K, c), 0);
  cr_expect(K[0] == 2 && K[1] == 1 && K[2] == 0.5 && K[3] == 2.5, "factors [[%g, %g], [%g, %g]]", K[0], K[1], K[2],
            K[3]);
  cr_expect(c[0] == 1.4 && c[1] == 1.2, "x = (%.17g, %.17g)", c[0], c[1]);
}

/* Sizes: NH_LU_MAX_DIM is solved and inverted (4I: x = b/4, inverse I/4), one more is refused with
 * the matrix and the right-hand side left alone. */
Test(core_edges, size_limits) {
  enum { D = NH_LU_MAX_DIM, E = NH_LU_MAX_DIM + 1 };
  static double J[E * E], S[E * E], b[E];
  for (int m = D; m <= E; m++) {
    memset(J, 0, sizeof J), memset(S, 0, sizeof S);
    for (int i = 0; i < m; i++) J[i * m + i] = S[i * m + i] = 4, b[i] = i + 1;
    const int want = m == D ? 0 : -1;
    cr_expect_eq(nh_lu_solve(m, J, b), want, "LU m = %d", m);
    cr_expect_eq(nh_spd_invert(m, S), want, "inverse m = %d", m);
    for (int i = 0; i < m; i++) {
      cr_expect_eq(b[i], (m == D ? (i + 1) / 4.0 : i + 1), "m = %d: x[%d] = %g", m, i, b[i]);
      for (int j = 0; j < m; j++)
        cr_expect_eq(S[i * m + j], (i == j ? (m == D ? 0.25 : 4) : 0), "m = %d: S[%d][%d] = %g", m, i, j, S[i * m + j]);
    }
  }
}

/* Cholesky solves with several columns in a 3×3 (stride > 1 in both substitutions): S = L Lᵀ with
 * L = [[2, 0, 0], [1, 1, 0], [0, 2, 1]], S = [[4, 2, 0], [2, 2, 2], [0, 2, 5]]; the columns of B
 * are S·(1, 0, 0), S·(0, 1, 0), S·(1, -1, 2): the solutions come out exactly. */
Test(core_edges, cholesky_columns_by_hand) {
  double S[9] = {4, 2, 0, 2, 2, 2, 0, 2, 5};
  double B[9] = {4, 2, 2, 2, 2, 4, 0, 2, 8};
  cr_assert_eq(nh_spd_solve_many(3, S, B, 3), 0);
  const double want[9] = {1, 0, 1, 0, 1, -1, 0, 0, 2};
  for (int i = 0; i < 9; i++) cr_expect_eq(B[i], want[i], "X[%d][%d] = %.17g", i / 3, i % 3, B[i]);
  cr_expect(S[0] == 2 && S[3] == 1 && S[4] == 1 && S[6] == 0 && S[7] == 2 && S[8] == 1, "the factor L");
  /* Singular at the last pivot: [[1, 1], [1, 1]] has d = 1 - 1 = 0 there, exactly. */
  double P[4] = {1, 1, 1, 1}, p[2] = {1, 1};
  cr_expect_eq(nh_spd_solve_many(2, P, p, 1), -1);
  cr_expect(p[0] == 1 && p[1] == 1, "b untouched");
}

static const char *const sizes[] = {"small", "large", NULL};
static const nh_param_desc table[] = {
    {"x", NH_PARAM_REAL, 0.5, -1, 1, "a real", 0, NULL},
    {"n", NH_PARAM_INT, 3, 2, 9, "an integer", 1, NULL},
    {"size", NH_PARAM_CHOICE, 0, 0, 1, "a choice", 1, sizes},
};

static void expect_refused(const char *name, const char *text, const char *message) {
  double vals[3] = {0.25, 4, 1};
  char err[256] = "";
  cr_expect_eq(nh_param_set(table, 3, vals, name, text, err, sizeof err), -1, "%s=%s accepted", name, text);
  cr_expect_str_eq(err, message);
  cr_expect(vals[0] == 0.25 && vals[1] == 4 && vals[2] == 1, "a refusal changed a value");
}

static void expect_set(const char *name, const char *text, int index, double want) {
  double vals[3] = {0.25, 4, 1};
  char err[256] = "";
  cr_expect_eq(nh_param_set(table, 3, vals, name, text, err, sizeof err), 0, "%s=%s: %s", name, text, err);
  cr_expect_eq(vals[index], want, "%s=%s stored as %g", name, text, vals[index]);
}

/* Range ends are inside; just outside, not finite, overflowing or trailing text is refused. */
Test(core_edges, parameter_ranges_and_refusals) {
  expect_set("x", "-1", 0, -1);
  expect_set("x", "1", 0, 1);
  expect_set("n", "2", 1, 2);
  expect_set("n", "9", 1, 9);
  expect_set("size", "small", 2, 0);
  expect_refused("x", "1.0000000000000002", "parameter x=1.0000000000000002 is out of range [-1, 1]");
  expect_refused("x", "-1.0000000000000002", "parameter x=-1.0000000000000002 is out of range [-1, 1]");
  expect_refused("n", "1", "parameter n=1 is out of range [2, 9]");
  expect_refused("n", "10", "parameter n=10 is out of range [2, 9]");
  expect_refused("x", "inf", "parameter x=inf is not a finite number");
  expect_refused("x", "-inf", "parameter x=-inf is not a finite number");
  expect_refused("x", "nan", "parameter x=nan is not a finite number");
  expect_refused("x", "1e999", "parameter x='1e999' is not a number");
  expect_refused("x", "0.5abc", "parameter x='0.5abc' is not a number");
  expect_refused("x", "", "parameter x='' is not a number");
  expect_refused("n", "2.5", "parameter n=2.5 must be an integer");
  expect_refused("size", "medium", "parameter size='medium' is not one of small, large");
  double vals[3] = {0.25, 4, 1};
  char err[256] = "";
  cr_expect_eq(nh_param_set_value(table, 3, vals, "size", -1, err, sizeof err), -1);
  cr_expect_str_eq(err, "parameter size=-1 is not a choice index (0 to 1: small, large)");
  cr_expect_eq(nh_param_set_value(table, 3, vals, "size", 2, err, sizeof err), -1);
  cr_expect_str_eq(err, "parameter size=2 is not a choice index (0 to 1: small, large)");
  cr_expect_eq(nh_param_set_value(table, 3, vals, "size", 0, err, sizeof err), 0);
  cr_expect_eq(vals[2], 0);
  cr_expect_eq(nh_param_set_value(table, 0, vals, "x", 0, err, sizeof err), -1);
  cr_expect_str_eq(err, "unknown parameter 'x' (parameters: none)");
  cr_expect_eq(nh_param_index(table, 3, "size"), 2);
  cr_expect_eq(nh_param_index(table, 2, "size"), -1, "only the first n are searched");
  cr_expect_eq(nh_param_index(table, 3, "siz"), -1);
}

/* A display label (issue 49 item 5): only the parameters off their defaults, quiet or not; reals at
 * 4 significant digits, or as pπ/q (q ≤ 12) within 1e-12 relative and not otherwise; whole numbers
 * whole however large; choices by name; the length as snprintf's. */
Test(core_edges, parameter_labels) {
  const double pi = 3.14159265358979323846;
  double vals[3] = {0.5, 3, 0};
  char buf[64];
  cr_expect_eq(nh_params_label(table, 3, vals, buf, sizeof buf), 0);
  cr_expect_str_eq(buf, "", "every parameter at its default");
  const struct {
    double x;
    const char *text;
  } reals[] = {
      {0.1, "x=0.1"},
      {0.123456, "x=0.1235"},
      {1.0 / 3, "x=0.3333"},
      {-1e-5, "x=-1e-05"},
      {0, "x=0"},
      {123456.0, "x=1.235e+05"},
      {pi / 6, "x=π/6"},
      {-pi / 12, "x=-π/12"},
      {pi, "x=π"},
      {-pi, "x=-π"},
      {2 * pi / 3, "x=2π/3"},
      {5 * pi / 12, "x=5π/12"},
      {pi / 13, "x=0.2417"},
      {0.5236, "x=0.5236"},
      {pi / 6 * (1 + 1e-11), "x=0.5236"},
      {pi / 6 * (1 + 1e-13), "x=π/6"},
      {4 * pi / 8, "x=π/2"},
      {99 * pi, "x=99π"},
      {100 * pi, "x=314.2"},
  };
  for (size_t i = 0; i < sizeof reals / sizeof *reals; i++) {
    vals[0] = reals[i].x;
    cr_expect_eq(nh_params_label(table, 3, vals, buf, sizeof buf), strlen(reals[i].text));
    cr_expect_str_eq(buf, reals[i].text, "x = %.17g", reals[i].x);
  }
  vals[0] = 0.5, vals[1] = 123456, vals[2] = 1;
  cr_expect_eq(nh_params_label(table, 3, vals, buf, sizeof buf), strlen("n=123456,size=large"));
  cr_expect_str_eq(buf, "n=123456,size=large");
  vals[0] = 0.25;
  const char *full = "x=0.25,n=123456,size=large";
  cr_expect_eq(nh_params_label(table, 3, vals, buf, 5), strlen(full), "the whole length from a short buffer");
  cr_expect_str_eq(buf, "x=0.");
  cr_expect_eq(nh_params_label(table, 3, vals, NULL, 0), strlen(full), "nothing written to a length-0 buffer");
}

/* The formatted name: quiet parameters only when not at their default; the length returned is the
 * whole text's, also when the buffer is too small (which holds its start, terminated). */
Test(core_edges, parameter_text_and_short_buffers) {
  double vals[3] = {0.5, 3, 0};
  char buf[64];
  cr_expect_eq(nh_params_format(table, 3, vals, buf, sizeof buf), 5);
  cr_expect_str_eq(buf, "x=0.5");
  vals[1] = 7, vals[2] = 1;
  const char *full = "x=0.5,n=7,size=large";
  cr_expect_eq(nh_params_format(table, 3, vals, buf, sizeof buf), strlen(full));
  cr_expect_str_eq(buf, full);
  for (size_t len = 1; len <= strlen(full) + 1; len++) {
    char small[32];
    memset(small, 'z', sizeof small);
    cr_expect_eq(nh_params_format(table, 3, vals, small, len), strlen(full), "length with a buffer of %zu", len);
    cr_expect_eq(strlen(small), len - 1, "buffer of %zu holds '%s'", len, small);
    cr_expect_eq(strncmp(small, full, len - 1), 0, "buffer of %zu holds '%s'", len, small);
    cr_expect_eq(small[len], 'z', "buffer of %zu: written past its end", len);
  }
  char names[8];
  nh_param_choices_text(&table[2], ", ", names, sizeof names);
  cr_expect_str_eq(names, "small, ", "cut at the buffer");
  nh_param_choices_text(&table[2], "/", names, sizeof names);
  cr_expect_str_eq(names, "small/l");
}

/* Arrays whose length may be 0: never NULL then; a size product that overflows is refused; a
 * calloc'd array is zero. */
Test(core_edges, empty_able_arrays) {
  void *p = nh_malloc_array(0, 8), *q = nh_calloc_array(0, 8), *r = nh_calloc_array(8, 0);
  cr_expect(p && q && r);
  free(p), free(q), free(r);
  cr_expect_null(nh_malloc_array(SIZE_MAX / 8 + 1, 8));
  int *z = nh_calloc_array(5, sizeof(int));
  cr_assert_not_null(z);
  for (int i = 0; i < 5; i++) cr_expect_eq(z[i], 0);
  free(z);
}
