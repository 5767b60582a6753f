/* Claims reports (bench/claims/report.h): expectations and reductions against hand-computed answers, the
 * claims loader's errors, and the verdicts of a small claims file against a results file written
 * here (the particle's exact solution decides what each row must say). */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <hdf5.h>
#include <hdf5_hl.h>

#include "bench/claims/report.h"
#include "tests/helpers.h"

static nh_expect parsed(const char *text) {
  nh_expect e;
  char err[512];
  cr_assert_eq(nh_expect_parse(text, &e, err, sizeof err), 0, "'%s': %s", text, err);
  return e;
}

Test(report, expectations_hold_exactly_at_their_bounds) {
  nh_expect in = parsed("in [1, 2]");
  cr_expect(nh_expect_holds(&in, 0, 1) && nh_expect_holds(&in, 0, 2) && nh_expect_holds(&in, 0, 1.5));
  cr_expect(!nh_expect_holds(&in, 0, nextafter(1, 0)) && !nh_expect_holds(&in, 0, nextafter(2, 3)));
  nh_expect lt = parsed("< 3"), le = parsed("<= 3"), gt = parsed("> 3"), ge = parsed(">= 3");
  cr_expect_eq(lt.op, NH_EXPECT_LT);
  cr_expect_eq(lt.a, 3);
  cr_expect(!nh_expect_holds(&lt, 3, 3) && nh_expect_holds(&lt, 3, nextafter(3, 0)));
  cr_expect(nh_expect_holds(&le, 3, 3) && !nh_expect_holds(&le, 3, nextafter(3, 4)));
  cr_expect(!nh_expect_holds(&gt, 3, 3) && nh_expect_holds(&gt, 3, nextafter(3, 4)));
  cr_expect(nh_expect_holds(&ge, 3, 3) && !nh_expect_holds(&ge, 3, nextafter(3, 0)));
  nh_expect rel = parsed("~ 10 rel 0.1"), ab = parsed("~ 10 abs 0.5");
  cr_expect_eq(rel.op, NH_EXPECT_REL);
  cr_expect_eq(rel.b, 0.1);
  cr_expect(nh_expect_holds(&rel, 10, 11) && nh_expect_holds(&rel, 10, 9) && !nh_expect_holds(&rel, 10, 11.01));
  cr_expect(nh_expect_holds(&ab, 10, 10.5) && nh_expect_holds(&ab, 10, 9.5) && !nh_expect_holds(&ab, 10, 10.51));
  cr_expect(!nh_expect_holds(&ab, 10, -10), "a sign error is not within the tolerance");
  cr_expect(!nh_expect_holds(&in, 0, NAN) && !nh_expect_holds(&lt, NAN, 1), "NaN never holds");
}

Test(report, expectation_references) {
  nh_expect e = parsed("< 0.5 * @other_row");
  cr_expect_str_eq(e.ref, "other_row");
  cr_expect_eq(e.factor, 0.5);
  cr_expect(nh_expect_holds(&e, e.factor * 4, 1.9) && !nh_expect_holds(&e, e.factor * 4, 2));
  nh_expect r = parsed(">= @C14.nm-01");
  cr_expect_str_eq(r.ref, "C14.nm-01");
  cr_expect_eq(r.factor, 1);
  nh_expect x = parsed("~ @a rel 0.01");
  cr_expect_str_eq(x.ref, "a");
  cr_expect_eq(x.op, NH_EXPECT_REL);
}

Test(report, malformed_expectations_are_refused_with_the_text) {
  const char *bad[] = {"in [2, 1]", "<", "~ 1", "~ 1 rel -1", "=> 3", "< 3 x", "in [1, 2", "in 1, 2]",
                       "about 3", "< 2 *", "< @", "", "~ 1 rel"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    nh_expect e;
    char err[512] = "";
    cr_expect_eq(nh_expect_parse(bad[i], &e, err, sizeof err), -1, "'%s' accepted", bad[i]);
    char quoted[64];
    snprintf(quoted, sizeof quoted, "'%s'", bad[i]);
    cr_expect(strstr(err, quoted), "message '%s' does not quote %s", err, quoted);
  }
}

static double reduce(const char *name, int n, const double *c, const double *x) {
  int r = nh_reduce_find(name);
  cr_assert(r >= 0, "no reduction %s", name);
  return nh_reduce_apply((nh_reduce)r, n, c, x, 0);
}

Test(report, reductions_by_hand) {
  const double c[5] = {0, 1, 2, 3, 4}, x[5] = {1, -7, 3, NAN, 2};
  cr_expect_eq(reduce("max_abs", 5, c, x), 7, "the extreme is negative");
  cr_expect_eq(reduce("max", 5, c, x), 3);
  cr_expect_eq(reduce("min", 5, c, x), -7);
  cr_expect_eq(reduce("mean", 5, c, x), (1 - 7 + 3 + 2) / 4.0, "NaN skipped, four values");
  cr_expect_eq(reduce("mean_abs", 5, c, x), (1 + 7 + 3 + 2) / 4.0);
  cr_expect_eq(reduce("first", 5, c, x), 1);
  cr_expect_eq(reduce("last", 5, c, x), 2);
  cr_expect_eq(reduce("argmax_abs", 5, c, x), 1, "the coordinate of -7");
  const double c2[3] = {10, 20, 30}, x2[3] = {0, 5, -1};
  cr_expect_eq(reduce("argmax_abs", 3, c2, x2), 20, "a coordinate, not an index");
  cr_expect_eq(reduce("value", 1, c, x), 1);
  cr_expect(isnan(reduce("value", 2, c, x)), "value needs a single entry");
  const double neg[1] = {-4};
  cr_expect_eq(reduce("abs", 1, c, neg), 4);
  /* Nothing to reduce: NaN from every reduction, and no entry read (there are none). */
  for (int r = 0; r < NH_REDUCE_COUNT; r++)
    cr_expect(isnan(nh_reduce_apply((nh_reduce)r, 0, NULL, NULL, 0)), "%s of nothing", nh_reduce_names[r]);
}

Test(report, slopes_growth_and_orders_by_hand) {
  const double t[5] = {0, 0.5, 1, 1.5, 2}, line[5] = {1, 2, 3, 4, 5}, flat[5] = {3, 3, 3, 3, 3};
  cr_expect(fabs(reduce("slope", 5, t, line) - 2) < 1e-14);
  const double y[5] = {0, 0.5, 1, 1.5, 2}; /* y = t on [0, 2]: slope 1 · span 2 / mean 1 = 2 */
  cr_expect(fabs(reduce("rel_growth", 5, t, y) - 2) < 1e-14, "%g", reduce("rel_growth", 5, t, y));
  cr_expect(fabs(reduce("rel_growth", 5, t, flat)) < 1e-14);
  const double down[5] = {2, 1.5, 1, 0.5, 0}; /* the mirror: slope −1, mean 1 */
  cr_expect(fabs(reduce("rel_growth", 5, t, down) + 2) < 1e-14);
  /* Over t in [1, 3] (the span is max − min, not max): y = t has slope 1 · span 2 / mean 2 = 1. */
  const double t1[5] = {1, 1.5, 2, 2.5, 3};
  cr_expect(fabs(reduce("rel_growth", 5, t1, t1) - 1) < 1e-14, "%g", reduce("rel_growth", 5, t1, t1));
  /* x = 3 h² over h = 0.4, 0.1, 0.2, 0.05 (not sorted): the order is 2 by either fit. */
  const double h[4] = {0.4, 0.1, 0.2, 0.05};
  double e[4];
  for (int i = 0; i < 4; i++) e[i] = 3 * h[i] * h[i];
  cr_expect(fabs(reduce("loglog_slope", 4, h, e) - 2) < 1e-12);
  cr_expect(fabs(reduce("finest_order", 4, h, e) - 2) < 1e-12);
  /* finest_order uses the two smallest h only: spoil the coarsest point and it does not move,
   * spoil the finest and it does. */
  e[0] = 1;
  cr_expect(fabs(reduce("finest_order", 4, h, e) - 2) < 1e-12);
  e[0] = 3 * h[0] * h[0];
  e[3] *= 4; /* x(0.05) four times larger: slope log(3·0.01 / (12·0.0025)) / log 2 = 0 */
  cr_expect(fabs(reduce("finest_order", 4, h, e)) < 1e-12, "%g", reduce("finest_order", 4, h, e));
  /* Points without a logarithm are left out of both fits: h = 0 and h < 0 (with a value), x = 0,
   * NaN and infinite x (at the finest h, where finest_order would take them); a negative x counts
   * by its size. Around them, x = ±3 h² again: order 2. */
  const double hs[9] = {0.4, 0, 0.1, -0.1, 0.2, 0.3, 0.05, 0.025, 0.0125};
  const double es[9] = {3 * 0.16, 1, -3 * 0.01, 0.5, 3 * 0.04, 0, 3 * 0.0025, NAN, INFINITY};
  cr_expect(fabs(reduce("loglog_slope", 9, hs, es) - 2) < 1e-12, "%g", reduce("loglog_slope", 9, hs, es));
  cr_expect(fabs(reduce("finest_order", 9, hs, es) - 2) < 1e-12, "%g", reduce("finest_order", 9, hs, es));
  /* The negative x at h = 0.1, one of the two finest, made 4 times larger: log2(0.12 / 0.0075) = 4. */
  double es4[9];
  memcpy(es4, es, sizeof es);
  es4[2] = -0.12;
  cr_expect(fabs(reduce("finest_order", 9, hs, es4) - 4) < 1e-12, "%g", reduce("finest_order", 9, hs, es4));
}

Test(report, max_step_and_its_period) {
  const double c[4] = {0, 1, 2, 3}, x[4] = {0, 0.1, -0.3, -0.25};
  cr_expect(fabs(nh_reduce_apply(NH_REDUCE_MAX_STEP, 4, c, x, 0) - 0.4) < 1e-15);
  /* an angle crossing its branch cut at π: 3.1 → −3.1 is a step of 0.083, not 6.2 */
  const double a[3] = {3.05, 3.1, -3.1};
  double step = nh_reduce_apply(NH_REDUCE_MAX_STEP, 3, c, a, 6.283185307179586);
  cr_expect(fabs(step - (6.283185307179586 - 6.2)) < 1e-12, "%g", step);
  cr_expect(fabs(nh_reduce_apply(NH_REDUCE_MAX_STEP, 3, c, a, 0) - 6.2) < 1e-12, "no period: the raw step");
}

/* A step is wrapped into [-period/2, period/2): with period 10, ±4.8 stays 4.8 long, ±5.2 wraps to
 * 4.8, 14.9 (more than a period) to 4.9 and 25 to 5. */
Test(report, max_step_wraps_at_half_a_period) {
  const double c[2] = {0, 1}, steps[] = {4.8, -4.8, 5.2, -5.2, 14.9, -14.9, 25}, want[] = {4.8, 4.8, 4.8, 4.8, 4.9, 4.9, 5};
  for (int i = 0; i < 7; i++) {
    const double x[2] = {1, 1 + steps[i]};
    double got = nh_reduce_apply(NH_REDUCE_MAX_STEP, 2, c, x, 10);
    cr_expect(fabs(got - want[i]) < 1e-12, "step %g: %.15g, want %g", steps[i], got, want[i]);
  }
}

/* An item is as bad as its worst row: fail over not-verified over pass, whatever the order. */
Test(report, item_verdict_is_its_worst_row) {
  nh_claim_row rows[3];
  nh_claim_item it = {.nrows = 3, .rows = rows};
  const nh_verdict cases[][4] = {/* three rows, then the item */
                                 {NH_PASS, NH_PASS, NH_PASS, NH_PASS},
                                 {NH_PASS, NH_NOT_VERIFIED, NH_PASS, NH_NOT_VERIFIED},
                                 {NH_NOT_VERIFIED, NH_FAIL, NH_PASS, NH_FAIL},
                                 {NH_FAIL, NH_NOT_VERIFIED, NH_PASS, NH_FAIL},
                                 {NH_PASS, NH_PASS, NH_FAIL, NH_FAIL},
                                 /* shown rows aside: never a pass, never hiding a worse row */
                                 {NH_SHOWN, NH_PASS, NH_SHOWN, NH_PASS},
                                 {NH_SHOWN, NH_SHOWN, NH_NOT_VERIFIED, NH_NOT_VERIFIED},
                                 {NH_FAIL, NH_SHOWN, NH_SHOWN, NH_FAIL},
                                 {NH_SHOWN, NH_SHOWN, NH_SHOWN, NH_SHOWN},
                                 {NH_NOT_VERIFIED, NH_SHOWN, NH_PASS, NH_NOT_VERIFIED}};
  for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
    for (int j = 0; j < 3; j++) rows[j].verdict = cases[k][j];
    cr_expect_eq(nh_item_verdict(&it), cases[k][3], "case %zu", k);
  }
}

/* integral: the trapezoidal rule, exact for a line and for the chords of a parabola; growth: the
 * late third's mean |x| over the early third's. */
Test(report, integral_and_growth_by_hand) {
  const double t[5] = {0, 0.5, 1, 2, 3}, line[5] = {1, 2, 3, 5, 7}; /* x = 1 + 2t on an uneven grid */
  cr_expect_eq(reduce("integral", 5, t, line), 3 + 9.0, "int_0^3 (1 + 2t) dt = 12");
  const double sq[3] = {0, 1, 4}, u[3] = {0, 1, 2}; /* x = t^2: chords 0.5 + 2.5 = 3 (exact 8/3) */
  cr_expect_eq(reduce("integral", 3, u, sq), 3);
  const double neg[2] = {-1, -3}, c2[2] = {1, 2};
  cr_expect_eq(reduce("integral", 2, c2, neg), -2, "a negative integrand integrates to a negative value");
  const double hole[3] = {1, NAN, 1};
  cr_expect(isnan(reduce("integral", 3, u, hole)), "a hole makes no integral");
  cr_expect(isnan(reduce("integral", 1, u, line)), "one point makes no integral");
  /* growth over t in [0, 3], thirds [0, 1] and [2, 3]: x = 1 + 2t, |x| means 2 (t = 0, 0.5, 1) and 6 */
  cr_expect_eq(reduce("growth", 5, t, line), 6.0 / 2.0);
  const double flat[5] = {-2, 2, -2, 2, -2};
  cr_expect_eq(reduce("growth", 5, t, flat), 1, "a stationary signal of either sign: 1");
  const double down[5] = {7, 5, 3, 2, 1}; /* early (7, 5, 3) mean 5, late (2, 1) mean 1.5 */
  cr_expect_eq(reduce("growth", 5, t, down), 1.5 / 5);
  /* a linear growth from 0 on a fine grid: 5 (means at 5/6 and 1/6 of the span) */
  double tt[601], xx[601];
  for (int i = 0; i <= 600; i++) tt[i] = i / 600.0, xx[i] = tt[i];
  cr_expect(fabs(reduce("growth", 601, tt, xx) - 5) < 0.02, "%g", reduce("growth", 601, tt, xx));
  const double nan_late[5] = {1, 1, 1, NAN, NAN};
  cr_expect(isnan(reduce("growth", 5, t, nan_late)), "no value in the last third");
  /* alternation: the fraction of neighbouring differences that change sign */
  const double zig[6] = {2.5e-3, 0, 2.5e-3, 0, 2.5e-3, 0}, ramp[5] = {1, 2, 3, 4, 5};
  cr_expect_eq(reduce("alternation", 6, t, zig), 1, "a period-2 sequence between a value and 0");
  cr_expect_eq(reduce("alternation", 5, t, ramp), 0, "a monotone sequence");
  const double once[5] = {0, 1, 2, 1, 0}; /* differences +, +, −, −: one change in three pairs */
  cr_expect_eq(reduce("alternation", 5, t, once), 1.0 / 3);
  const double flat3[4] = {1, 1, 2, 1}; /* 0, +, −: the zero difference alternates with nothing */
  cr_expect_eq(reduce("alternation", 4, t, flat3), 0.5);
  cr_expect(isnan(reduce("alternation", 2, t, zig)), "two values have no pair of differences");
  const double hole2[4] = {0, 1, NAN, 1};
  cr_expect(isnan(reduce("alternation", 4, t, hole2)));
  /* max_increase: the largest signed step up; a decreasing sequence gives its smallest step down */
  const double dec[4] = {5, 4, 3.5, 1}, bump[5] = {5, 4, 4.25, 3, 2};
  cr_expect_eq(reduce("max_increase", 4, t, dec), -0.5, "never increases: the smallest decrease, negative");
  cr_expect_eq(reduce("max_increase", 5, t, bump), 0.25, "one rise of 0.25");
  cr_expect_eq(reduce("max_increase", 4, t, (double[]){1, 1, 1, 1}), 0, "flat: 0");
  cr_expect(isnan(reduce("max_increase", 1, t, dec)), "one value: no step");
  /* last_defined: the coordinate of the last value that is not NaN */
  const double stop[5] = {1, 2, 3, NAN, NAN};
  cr_expect_eq(reduce("last_defined", 5, t, stop), 1, "the run stopped at t = 1 (the third coordinate)");
  cr_expect_eq(reduce("last_defined", 5, t, line), 3, "ran to the end");
  const double none[2] = {NAN, NAN};
  cr_expect(isnan(reduce("last_defined", 2, t, none)));
  cr_expect(nh_reduce_is_pointwise(NH_REDUCE_MAX_ABS) && nh_reduce_is_pointwise(NH_REDUCE_MEAN) &&
            !nh_reduce_is_pointwise(NH_REDUCE_GROWTH) && !nh_reduce_is_pointwise(NH_REDUCE_INTEGRAL) &&
            !nh_reduce_is_pointwise(NH_REDUCE_ARGMAX_ABS) && !nh_reduce_is_pointwise(NH_REDUCE_VALUE));
}

/* ---- claims files ------------------------------------------------------------------------------ */

static char tmpdir[64];

static void write_file(const char *name, const char *text) {
  char path[256];
  snprintf(path, sizeof path, "%s/%s", tmpdir, name);
  test_write_file(path, text);
}

static void make_tmpdir(void) {
  snprintf(tmpdir, sizeof tmpdir, "/tmp/nhbench-report-XXXXXX");
  cr_assert(mkdtemp(tmpdir));
}

static void remove_tmpdir(void) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
  cr_expect_eq(system(cmd), 0);
}

/* Loads TEXT as a claims file; returns nh_claims_load's status and its message in err. */
static int load_text(const char *text, nh_claims *c, char *err, size_t errlen) {
  write_file("t.claims", text);
  char path[256];
  snprintf(path, sizeof path, "%s/t.claims", tmpdir);
  return nh_claims_load(path, c, err, errlen);
}

Test(report, bad_claims_files_name_the_line, .init = make_tmpdir, .fini = remove_tmpdir) {
  static const struct {
    const char *text, *message;
  } cases[] = {
      {"spec = \"s\";\nitems = (\n { item = \"1\"; claim = \"c\";\n   colour = 3;\n   rows = ( { quantity = \"q\"; verdict = \"not-verified\"; reason = \"r\"; } ); }\n);\n",
       "t.claims:4: unknown setting 'colour'"},
      {"spec = \"s\";\nitems = (\n { item = \"1\"; claim = \"c\";\n   rows = ( { quantity = \"q\"; file = \"f\"; data = \"d\";\n     expect = \"in [2, 1]\"; } ); }\n);\n",
       "t.claims:5: bad expectation 'in [2, 1]'"},
      {"spec = \"s\";\nitems = (\n { item = \"1\"; claim = \"c\";\n   rows = ( { quantity = \"q\"; verdict = \"pass\"; reason = \"r\"; } ); }\n);\n",
       "only \"not-verified\" or \"shown\" may be declared"},
      /* a shown row shows a value: no expectation; a measured row without one must say it is shown */
      {"spec = \"s\";\nitems = (\n { item = \"1\"; claim = \"c\";\n   rows = ( { quantity = \"q\"; file = \"f\"; data = \"d\";\n     verdict = \"shown\"; expect = \"< 1\"; } ); }\n);\n",
       "t.claims:5: a shown row has no expectation"},
      {"spec = \"s\";\nitems = (\n { item = \"1\"; claim = \"c\";\n   rows = ( { quantity = \"q\"; file = \"f\"; data = \"d\"; reason = \"r\"; } ); }\n);\n",
       "t.claims:4: a measured row needs 'expect', or verdict = \"shown\""},
      {"spec = \"s\";\nitems = (\n { item = \"1\"; claim = \"c\"; verdict = \"shown\";\n   rows = ( { quantity = \"q\"; verdict = \"shown\"; } ); }\n);\n",
       "t.claims:3: unknown setting 'verdict'"},
      {"spec = \"s\";\nitems = (\n { item = \"1\"; claim = \"c\";\n   rows = ( { quantity = \"q\"; verdict = \"shown\"; } ); }\n);\n",
       "t.claims:4: missing setting 'file'"},
      /* minus: a dataset or a list of two */
      {"spec = \"s\";\nitems = (\n { item = \"1\"; claim = \"c\";\n   rows = ( { quantity = \"q\"; file = \"f\"; data = \"d\";\n     minus = [\"a\"]; expect = \"< 1\"; } ); }\n);\n",
       "t.claims:5: 'minus' must be a dataset or a list of two"},
      {"spec = \"s\";\nitems = (\n { item = \"1\"; claim = \"c\";\n   rows = ( { quantity = \"q\"; file = \"f\"; data = \"d\";\n     minus = [\"a\", \"b\", \"c\"]; expect = \"< 1\"; } ); }\n);\n",
       "t.claims:5: 'minus' must be a dataset or a list of two"},
      {"spec = \"s\";\nitems = (\n { item = \"1\"; claim = \"c\";\n   rows = ( { quantity = \"q\"; file = \"f\"; data = \"d\";\n     minus = 3; expect = \"< 1\"; } ); }\n);\n",
       "t.claims:5: 'minus' must be a dataset or a list of two"},
      /* cause: claim or harness, always with its summary, and a summary only with a cause */
      {"spec = \"s\";\nitems = (\n { item = \"1\"; claim = \"c\"; cause = \"paper\"; summary = \"x\";\n   rows = ( { quantity = \"q\"; verdict = \"not-verified\"; reason = \"r\"; } ); }\n);\n",
       "t.claims:3: cause 'paper': \"claim\" or \"harness\""},
      {"spec = \"s\";\nitems = (\n { item = \"1\"; claim = \"c\"; cause = \"claim\";\n   rows = ( { quantity = \"q\"; verdict = \"not-verified\"; reason = \"r\"; } ); }\n);\n",
       "t.claims:3: item 1: cause = \"claim\" needs a one-line summary"},
      {"spec = \"s\";\nitems = (\n { item = \"1\"; claim = \"c\"; summary = \"s\";\n   rows = ( { quantity = \"q\"; verdict = \"not-verified\"; reason = \"r\"; } ); }\n);\n",
       "t.claims:3: item 1: a summary needs its cause"},
      {"spec = \"s\";\nitems = (\n { item = \"1\"; claim = \"c\";\n   rows = ( { quantity = \"q\"; file = \"f\"; data = \"d\"; reduce = \"median\"; expect = \"< 1\"; } ); }\n);\n",
       "unknown reduce 'median'"},
      {"spec = \"s\";\nitems = (\n { item = \"1\"; claim = \"c\";\n   rows = ( { id = \"a\"; quantity = \"q\"; file = \"f\"; data = \"d\"; expect = \"< 1\"; },\n            { id = \"a\"; quantity = \"q\"; file = \"f\"; data = \"d\"; expect = \"< 1\"; } ); }\n);\n",
       "row id 'a' is used twice"},
      {"spec = \"s\";\nitems = (\n { item = \"1\"; claim = \"c\";\n   rows = ( { quantity = \"q\"; file = \"f\"; data = \"d\"; expect = \"< @nowhere\"; } ); }\n);\n",
       "names no row 'nowhere'"},
      {"spec = \"s\";\nitems = (\n { item = \"1\"; claim = \"c\";\n   rows = ( { quantity = \"q\"; file = \"f\"; data = \"d\"; } ); }\n);\n",
       "needs 'expect'"},
      /* a one-character expectation is one, not an absent one (with or without a reason) */
      {"spec = \"s\";\nitems = (\n { item = \"1\"; claim = \"c\";\n   rows = ( { quantity = \"q\"; file = \"f\"; data = \"d\"; expect = \"5\"; } ); }\n);\n",
       "t.claims:4: bad expectation '5'"},
      {"spec = \"s\";\nitems = (\n { item = \"1\"; claim = \"c\";\n   rows = ( { quantity = \"q\"; file = \"f\"; data = \"d\"; reason = \"r\"; expect = \"5\"; } ); }\n);\n",
       "t.claims:4: bad expectation '5'"},
      {"spec = \"s\";\nitems = (\n { item = \"1\"; claim = \"c\"; rows = (); }\n);\n", "needs a non-empty list rows"},
      /* a group of one row's settings is not a list of rows */
      {"spec = \"s\";\nitems = (\n { item = \"1\"; claim = \"c\";\n   rows = { quantity = \"q\"; file = \"f\"; data = \"d\"; expect = \"< 1\"; }; }\n);\n",
       "t.claims:3: item 1 needs a non-empty list rows"},
      {"items = ();\n", "missing setting 'spec'"},
      {"colour = 1;\nspec = \"s\";\nitems = ();\n", "t.claims:1: unknown setting 'colour'"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    nh_claims c;
    char err[1024] = "";
    cr_expect_eq(load_text(cases[i].text, &c, err, sizeof err), -1, "case %zu accepted", i);
    cr_expect(strstr(err, cases[i].message), "case %zu: '%s' lacks '%s'", i, err, cases[i].message);
  }
}

/* A trajectory and a convergence study of the free particle (exact solution), then a claims file
 * whose rows each have a verdict fixed by the mathematics: rk4 is order 4 (not 2), nh_newmark keeps
 * the constraint to round-off, E(0) = |v0|²/2 = 3/2, the Newmark steps of rk4 are T/h. */
Test(report, verdicts_from_a_results_file, .init = make_tmpdir, .fini = remove_tmpdir, .timeout = 60) {
  write_file("traj.cfg", "study = \"trajectory\"; system = \"particle\"; initial = \"newmark\"; T = 1.0; h = 0.1;\n"
                         "observables = [\"energy\", \"energy_error\", \"constraint_residual\"];\n"
                         "methods = [\"rk4\", \"nh_newmark(alpha=0.5)\"];\n");
  write_file("conv.cfg", "study = \"convergence\"; system = \"particle\"; initial = \"newmark\"; T = 1.0; h0 = 0.1;\n"
                         "halvings = 3; methods = [\"rk4\", \"nh_newmark(alpha=0.5)\"];\n");
  char args[1024], out[8192];
  snprintf(args, sizeof args, "run %s/traj.cfg -o %s/traj.h5", tmpdir, tmpdir);
  cr_assert_eq(test_run_nhbench(args, out, sizeof out), 0, "%s", out);
  snprintf(args, sizeof args, "run %s/conv.cfg -o %s/conv.h5", tmpdir, tmpdir);
  cr_assert_eq(test_run_nhbench(args, out, sizeof out), 0, "%s", out);
  const char *claims =
      "spec = \"quick\";\nitems = (\n"
      " { item = \"Q1\"; claim = \"orders\"; rows = (\n"
      "   { id = \"o\"; quantity = \"rk4 order\"; file = \"conv\"; data = \"orders\"; at = { method = \"rk4\"; }; expect = \"in [3.85, 4.15]\"; },\n"
      "   { quantity = \"rk4 order as 2 (a wrong claim)\"; file = \"conv\"; data = \"err\"; reduce = \"loglog_slope\"; at = { method = \"rk4\"; }; expect = \"in [1.85, 2.15]\"; reason = \"W\"; },\n"
      "   { quantity = \"nh_newmark finest order\"; file = \"conv\"; data = \"err\"; at = { method = \"nh_newmark(beta=0,beta2=0,alpha=0.5)\"; }; reduce = \"finest_order\"; expect = \"< 0.6 * @o\"; } ); },\n"
      " { item = \"Q2\"; claim = \"trajectory\"; rows = (\n"
      "   { quantity = \"E(0)\"; file = \"traj\"; data = \"observables/energy\"; at = { method = \"rk4\"; t = 0.0; }; expect = \"~ 1.5 rel 1e-15\"; },\n"
      "   { quantity = \"E(1) - E(0) by minus\"; file = \"traj\"; data = \"observables/energy\"; minus = \"observables/energy_error\"; at = { method = \"rk4\"; t = 1.0; }; expect = \"~ 1.5 rel 1e-14\"; },\n"
      "   { quantity = \"the time at t = 0.7 (one step size: its sample times, not the indices)\"; file = \"traj\"; data = \"t\"; at = { t = 0.7; }; expect = \"~ 0.7 rel 1e-14\"; },\n"
      "   { quantity = \"constraint\"; file = \"traj\"; data = \"observables/constraint_residual\"; at = { method = \"nh_newmark(alpha=0.5)\"; }; reduce = \"max_abs\"; expect = \"<= 1e-13\"; },\n"
      "   { id = \"n\"; quantity = \"rk4 steps\"; file = \"traj\"; data = \"cost\"; field = \"steps\"; at = { method = \"rk4\"; }; expect = \"~ 10 abs 0\"; },\n"
      "   { quantity = \"newmark over rk4 steps\"; file = \"traj\"; data = \"cost\"; field = \"steps\"; at = { method = \"nh_newmark(alpha=0.5)\"; }; per = \"n\"; expect = \"~ 1 abs 0\"; },\n"
      "   { quantity = \"measured only\"; verdict = \"shown\"; file = \"traj\"; data = \"observables/energy\"; at = { method = \"rk4\"; t = 1.0; }; reason = \"no claim\"; },\n"
      "   { quantity = \"declared\"; verdict = \"not-verified\"; reason = \"by hand\"; },\n"
      "   { quantity = \"missing file\"; file = \"nowhere\"; data = \"x\"; expect = \"< 1\"; },\n"
      "   { quantity = \"unknown method\"; file = \"traj\"; data = \"observables/energy\"; at = { method = \"js_b\"; t = 0.0; }; expect = \"< 1\"; } ); }\n"
      ");\n";
  write_file("q.claims", claims);
  snprintf(args, sizeof args, "report %s/q.claims -r %s -o %s", tmpdir, tmpdir, tmpdir);
  cr_assert_eq(test_run_nhbench(args, out, sizeof out), 0, "%s", out);
  cr_expect(strstr(out, "8 pass, 1 fail, 3 not-verified, 1 shown"), "%s", out);
  snprintf(args, sizeof args, "report --strict %s/q.claims -r %s -o %s", tmpdir, tmpdir, tmpdir);
  cr_expect_eq(test_run_nhbench(args, out, sizeof out), 1, "--strict with a failing row: %s", out);

  char path[256];
  snprintf(path, sizeof path, "%s/claims.csv", tmpdir);
  FILE *f = fopen(path, "r");
  cr_assert(f);
  static const char *const verdicts[] = {"pass", "fail", "pass", "pass", "pass", "pass", "pass", "pass", "pass",
                                         "shown", "not-verified", "not-verified", "not-verified"};
  char line[2048];
  cr_assert(fgets(line, sizeof line, f));
  cr_expect_str_eq(line, "spec,item,quantity,expected,measured,verdict\n");
  double rk4_order = NAN;
  for (int i = 0; i < 13; i++) {
    cr_assert(fgets(line, sizeof line, f), "row %d missing", i);
    line[strcspn(line, "\n")] = '\0';
    char *v = strrchr(line, ',');
    cr_expect_str_eq(v + 1, verdicts[i], "row %d: %s", i, line);
    *v = '\0';
    if (i == 0) rk4_order = strtod(strrchr(line, ',') + 1, NULL);
  }
  cr_expect(!fgets(line, sizeof line, f), "no more rows");
  fclose(f);
  /* The row that refers to another shows the value referred to, by its id (one letter here: the
   * report tells an id from none by its first character only). */
  cr_expect(fabs(rk4_order - 4) < 0.15, "rk4's order %g", rk4_order);
  static char md[1 << 15];
  char remark[64], md_path[256];
  snprintf(md_path, sizeof md_path, "%s/REPORT.md", tmpdir);
  test_read_file(md_path, md, sizeof md);
  snprintf(remark, sizeof remark, "| pass | @o = %.4g |", rk4_order);
  cr_expect(strstr(md, remark), "'%s' not in:\n%s", remark, md);
  cr_expect(strstr(md, "| **fail** | W |"), "a failing row's reason (one letter) is its remark:\n%s", md);
  /* A bad claims file leaves the good report as it was. */
  write_file("bad.claims", "spec = \"x\";\nitems = ( { item = \"1\"; claim = \"c\"; rows = (); } );\n");
  snprintf(args, sizeof args, "report %s/bad.claims -r %s -o %s", tmpdir, tmpdir, tmpdir);
  cr_expect_eq(test_run_nhbench(args, out, sizeof out), 2, "%s", out);
  cr_expect(strstr(out, "bad.claims:2:"), "%s", out);
  f = fopen(path, "r");
  cr_assert(f);
  cr_assert(fgets(line, sizeof line, f) && fgets(line, sizeof line, f));
  cr_expect(strstr(line, "quick,Q1,rk4 order,"), "the old csv is intact: %s", line);
  fclose(f);
  snprintf(args, sizeof args, "report %s/q.claims -r %s -o %s/no/such/dir", tmpdir, tmpdir, tmpdir);
  cr_expect_eq(test_run_nhbench(args, out, sizeof out), 2, "an output directory that does not exist: %s", out);
}

/* ---- measures: a slice of a results file, by hand -------------------------------------------- */

static nh_measure measure_of(const char *data, nh_reduce reduce) {
  nh_measure ms;
  memset(&ms, 0, sizeof ms);
  snprintf(ms.file, sizeof ms.file, "traj");
  snprintf(ms.data, sizeof ms.data, "%s", data);
  ms.reduce = reduce;
  ms.from = -INFINITY, ms.to = INFINITY;
  return ms;
}

/* Adds `at = { dim = "name"; }` (name not NULL) or `at = { dim = value; }`. */
static void select_at(nh_measure *ms, const char *dim, const char *name, double value) {
  nh_select *s = &ms->select[ms->nselect++];
  snprintf(s->dim, sizeof s->dim, "%s", dim);
  s->by_name = name != NULL;
  snprintf(s->name, sizeof s->name, "%s", name ? name : "");
  s->value = value;
}

static double measured_ok(const nh_measure *ms) {
  double m = NAN;
  char why[1024] = "";
  cr_assert_eq(nh_measure_eval(ms, tmpdir, &m, why, sizeof why), 0, "%s: %s", ms->data, why);
  return m;
}

static void measured_fails(const nh_measure *ms, const char *needle) {
  double m = 0;
  char why[1024] = "";
  cr_expect_eq(nh_measure_eval(ms, tmpdir, &m, why, sizeof why), -1, "%s: no error, want '%s'", ms->data, needle);
  cr_expect(strstr(why, needle) != NULL, "'%s' lacks '%s'", why, needle);
  cr_expect(isnan(m), "%s: failed, yet measured %g", ms->data, m);
}

/* A trajectory study of the particle in tmpdir/traj.h5 (2 methods × h = 0.25, 0.125 × 2 ICs, 9
 * samples of the finer h, q with 3 components); q and t read back here with the HDF5 API. */
static void traj_study(double *q, double *t) {
  write_file("traj.cfg", "study = \"trajectory\"; system = \"particle\"; initial = [\"discretization\", \"newmark\"];\n"
                         "T = 1.0; h = [0.25, 0.125]; observables = [\"energy\", \"q\"];\n"
                         "methods = [\"rk4\", \"nh_newmark(alpha=0.5)\"];\n");
  char args[1024], out[8192], path[256];
  snprintf(args, sizeof args, "run %s/traj.cfg -o %s/traj.h5", tmpdir, tmpdir);
  cr_assert_eq(test_run_nhbench(args, out, sizeof out), 0, "%s", out);
  snprintf(path, sizeof path, "%s/traj.h5", tmpdir);
  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  cr_assert(f >= 0);
  cr_assert(H5LTread_dataset_double(f, "/trajectory/observables/q", q) >= 0);
  cr_assert(H5LTread_dataset_double(f, "/trajectory/t", t) >= 0);
  H5Fclose(f);
}

/* Components labelled with a unit ("forward_speed [m/s]", the Chaplygin sleigh's derived
 * observables) are selected by the bare name or the whole label; a prefix of the name, or of the
 * label, selects nothing. Each value is the one read here with the HDF5 API. */
Test(report, components_by_name_with_or_without_their_unit, .init = make_tmpdir, .fini = remove_tmpdir,
     .timeout = 60) {
  write_file("traj.cfg", "study = \"trajectory\"; system = \"chaplygin_sleigh\"; initial = \"ic1\";\n"
                         "T = 0.5; h = 0.25; observables = [\"derived\"]; methods = [\"rk4\"];\n");
  char args[1024], out[8192], path[256];
  snprintf(args, sizeof args, "run %s/traj.cfg -o %s/traj.h5", tmpdir, tmpdir);
  cr_assert_eq(test_run_nhbench(args, out, sizeof out), 0, "%s", out);
  snprintf(path, sizeof path, "%s/traj.h5", tmpdir);
  double d[3 * 2]; /* sample × component */
  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  cr_assert(f >= 0);
  cr_assert(H5LTread_dataset_double(f, "/trajectory/observables/derived", d) >= 0);
  H5Fclose(f);
  cr_assert(d[2 * 2 + 0] != d[2 * 2 + 1], "the two components differ at T: %g", d[4]);
  static const struct {
    const char *name;
    int component; /* -1: none */
  } cases[] = {{"forward_speed", 0},         {"angular_velocity", 1},         {"forward_speed [m/s]", 0},
               {"angular_velocity [rad/s]", 1}, {"forward", -1},              {"angular_velocity [", -1},
               {"forward_speed [m", -1},     {"angular_velocity [rad/s] ", -1}};
  for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
    nh_measure ms = measure_of("observables/derived", NH_REDUCE_LAST);
    select_at(&ms, "method", "rk4", 0);
    select_at(&ms, "h", NULL, 0.25);
    select_at(&ms, "ic", NULL, 0);
    select_at(&ms, "component", cases[k].name, 0);
    if (cases[k].component < 0) {
      char why[300];
      snprintf(why, sizeof why, "no component named '%s'", cases[k].name);
      measured_fails(&ms, why);
    } else {
      cr_expect_eq(measured_ok(&ms), d[2 * 2 + cases[k].component], "'%s'", cases[k].name);
    }
  }
}

/* A trajectory study of the particle (2 methods × h = 0.25, 0.125 × 2 ICs, 9 samples of the finer
 * h, q with 3 components), read here with the HDF5 API; each measure against the reduction of that
 * slice computed by hand, and each way of selecting wrongly refused with its reason. */
Test(report, measures_against_the_file_read_by_hand, .init = make_tmpdir, .fini = remove_tmpdir, .timeout = 60) {
  double q[2 * 2 * 2 * 9 * 3], t[2 * 9];
  traj_study(q, t);
#define Q(mi, hi, ic, s, c) q[((((mi) * 2 + (hi)) * 2 + (ic)) * 9 + (s)) * 3 + (c)]

  /* rk4, h = 0.125, IC "newmark", q[1] over the 9 samples. */
  double mx = -INFINITY, mn = INFINITY, sum = 0, big = -1, tbig = NAN, tm = 0, ym = 0, sty = 0, stt = 0;
  for (int s = 0; s < 9; s++) {
    const double v = Q(0, 1, 1, s, 1);
    mx = fmax(mx, v), mn = fmin(mn, v), sum += v, tm += t[9 + s] / 9, ym += v / 9;
    if (fabs(v) > big) big = fabs(v), tbig = t[9 + s];
  }
  for (int s = 0; s < 9; s++) sty += (t[9 + s] - tm) * (Q(0, 1, 1, s, 1) - ym), stt += (t[9 + s] - tm) * (t[9 + s] - tm);
  cr_assert(mx > mn, "q[1] moves: %g .. %g", mn, mx);
  const nh_reduce reds[] = {NH_REDUCE_MAX, NH_REDUCE_MIN, NH_REDUCE_MEAN, NH_REDUCE_FIRST, NH_REDUCE_LAST,
                            NH_REDUCE_ARGMAX_ABS, NH_REDUCE_SLOPE};
  const double want[] = {mx, mn, sum / 9, Q(0, 1, 1, 0, 1), Q(0, 1, 1, 8, 1), tbig, sty / stt};
  for (size_t k = 0; k < sizeof reds / sizeof *reds; k++) {
    nh_measure ms = measure_of("observables/q", reds[k]);
    select_at(&ms, "method", "rk4", 0);
    select_at(&ms, "h", NULL, 0.125);
    select_at(&ms, "ic", "newmark", 0);
    select_at(&ms, "component", "q[1]", 0);
    const double m = measured_ok(&ms);
    cr_expect(fabs(m - want[k]) <= 1e-14 * fabs(want[k]) + 1e-15, "%s: %.17g, by hand %.17g", nh_reduce_names[reds[k]],
              m, want[k]);
  }
  /* A window on t, both ends included: t = 0.25, 0.375, 0.5. */
  nh_measure ms = measure_of("observables/q", NH_REDUCE_MEAN);
  select_at(&ms, "method", "rk4", 0);
  select_at(&ms, "h", NULL, 0.125);
  select_at(&ms, "ic", NULL, 1);
  select_at(&ms, "component", NULL, 1);
  ms.from = 0.25, ms.to = 0.5;
  const double w = (Q(0, 1, 1, 2, 1) + Q(0, 1, 1, 3, 1) + Q(0, 1, 1, 4, 1)) / 3;
  cr_expect(fabs(measured_ok(&ms) - w) <= 1e-15 * fabs(w), "window [0.25, 0.5]: %.17g, by hand %.17g", measured_ok(&ms), w);

  /* h = 0.25 has 5 samples (t beyond them NaN): nh_newmark by its short name, IC 0, q[2]. */
  ms = measure_of("observables/q", NH_REDUCE_LAST);
  select_at(&ms, "method", "nh_newmark(alpha=0.5)", 0);
  select_at(&ms, "h", NULL, 0.25);
  select_at(&ms, "ic", NULL, 0);
  select_at(&ms, "component", NULL, 2);
  ms.reduce = NH_REDUCE_MEAN;
  const double m5 = (Q(1, 0, 0, 0, 2) + Q(1, 0, 0, 1, 2) + Q(1, 0, 0, 2, 2) + Q(1, 0, 0, 3, 2) + Q(1, 0, 0, 4, 2)) / 5;
  cr_expect(fabs(measured_ok(&ms) - m5) <= 1e-15 * fabs(m5) + 1e-300, "mean of 5 samples: %.17g vs %.17g",
            measured_ok(&ms), m5);

  /* A sample by its time, the nearest within half a sample interval (0.125 at h = 0.25); halfway
   * between two (0.625, both exactly 0.125 away), the earlier. */
  const double times[] = {0.6, 0.63, 1.12, 0.625};
  const int sample[] = {2, 3, 4, 2};
  for (int k = 0; k < 4; k++) {
    ms = measure_of("observables/q", NH_REDUCE_VALUE);
    select_at(&ms, "method", "rk4", 0);
    select_at(&ms, "h", NULL, 0.25);
    select_at(&ms, "ic", NULL, 1);
    select_at(&ms, "component", NULL, 0);
    select_at(&ms, "t", NULL, times[k]);
    cr_expect_eq(measured_ok(&ms), Q(0, 0, 1, sample[k], 0), "t = %g is sample %d", times[k], sample[k]);
  }
  ms.select[4].value = 1.2;
  measured_fails(&ms, "no sample at t = 1.2 in the file");

  /* The cost records by field: rk4 takes T/h steps, so log steps against log h has slope −1. */
  ms = measure_of("cost", NH_REDUCE_LOGLOG_SLOPE);
  snprintf(ms.field, sizeof ms.field, "steps");
  select_at(&ms, "method", "rk4", 0);
  select_at(&ms, "ic", NULL, 0);
  cr_expect(fabs(measured_ok(&ms) + 1) < 1e-12, "steps ~ 1/h: %g", measured_ok(&ms));
  ms.reduce = NH_REDUCE_MAX;
  cr_expect_eq(measured_ok(&ms), 8, "T / 0.125 steps");
  /* Every field of each method's records at IC 1, the larger over h, as the file holds it (read by
   * name with the HDF5 API). */
  static const char *const fields[6] = {"steps",         "rhs_evals",        "jacobian_evals",
                                        "linear_solves", "newton_iterations", "constraint_evals"};
  static const char *const methods[2] = {"rk4", "nh_newmark(alpha=0.5)"};
  unsigned long long counts[2 * 2 * 2];
  char h5[256];
  snprintf(h5, sizeof h5, "%s/traj.h5", tmpdir);
  hid_t file = H5Fopen(h5, H5F_ACC_RDONLY, H5P_DEFAULT), ds = H5Dopen2(file, "/trajectory/cost", H5P_DEFAULT);
  cr_assert(file >= 0 && ds >= 0);
  for (int k = 0; k < 6; k++) {
    hid_t one = H5Tcreate(H5T_COMPOUND, sizeof(unsigned long long));
    H5Tinsert(one, fields[k], 0, H5T_NATIVE_ULLONG);
    cr_assert_geq(H5Dread(ds, one, H5S_ALL, H5S_ALL, H5P_DEFAULT, counts), 0, "%s", fields[k]);
    H5Tclose(one);
    for (int m = 0; m < 2; m++) {
      ms = measure_of("cost", NH_REDUCE_MAX);
      snprintf(ms.field, sizeof ms.field, "%s", fields[k]);
      select_at(&ms, "method", methods[m], 0);
      select_at(&ms, "ic", NULL, 1);
      const unsigned long long a = counts[(m * 2 + 0) * 2 + 1], b = counts[(m * 2 + 1) * 2 + 1];
      cr_expect_eq(measured_ok(&ms), (double)(a > b ? a : b), "%s of %s", fields[k], methods[m]);
    }
  }
  H5Dclose(ds), H5Fclose(file);
  /* minus = [a, b]: x − x − x = −x, the last sample's value negated (the order of subtraction shows). */
  ms = measure_of("observables/q", NH_REDUCE_LAST);
  snprintf(ms.minus, sizeof ms.minus, "observables/q");
  snprintf(ms.minus2, sizeof ms.minus2, "observables/q");
  select_at(&ms, "method", "rk4", 0);
  select_at(&ms, "h", NULL, 0.125);
  select_at(&ms, "ic", NULL, 1);
  select_at(&ms, "component", NULL, 1);
  cr_expect_eq(measured_ok(&ms), -Q(0, 1, 1, 8, 1), "x - x - x");
  snprintf(ms.minus2, sizeof ms.minus2, "observables/nosuch");
  measured_fails(&ms, "cannot subtract 'observables/nosuch'");
  /* A dataset minus itself is 0 everywhere. */
  ms = measure_of("observables/q", NH_REDUCE_MAX_ABS);
  snprintf(ms.minus, sizeof ms.minus, "observables/q");
  select_at(&ms, "method", "rk4", 0);
  select_at(&ms, "h", NULL, 0.125);
  select_at(&ms, "ic", NULL, 0);
  select_at(&ms, "component", NULL, 1);
  cr_expect_eq(measured_ok(&ms), 0);

  /* Pointwise reductions over several free dimensions: rk4 at h = 0.125, every IC, sample and
   * component of q; and ic alone free with sample at t = 1 (the 9th sample). */
  double qmax = 0, qmin = INFINITY, qsum = 0;
  for (int ic = 0; ic < 2; ic++)
    for (int s2 = 0; s2 < 9; s2++)
      for (int c2 = 0; c2 < 3; c2++) {
        const double v = Q(0, 1, ic, s2, c2);
        qmax = fmax(qmax, fabs(v)), qmin = fmin(qmin, v), qsum += fabs(v);
      }
  ms = measure_of("observables/q", NH_REDUCE_MAX_ABS);
  select_at(&ms, "method", "rk4", 0);
  select_at(&ms, "h", NULL, 0.125);
  cr_expect_eq(measured_ok(&ms), qmax, "max |q| over ic, sample, component");
  ms.reduce = NH_REDUCE_MIN;
  cr_expect_eq(measured_ok(&ms), qmin);
  ms.reduce = NH_REDUCE_MEAN_ABS;
  cr_expect(fabs(measured_ok(&ms) - qsum / 54) <= 1e-15 * qsum / 54, "mean |q| of 54 values");
  ms.reduce = NH_REDUCE_LAST;
  measured_fails(&ms, "dimensions ic and sample are both free: select one (only max_abs, max, min, mean and mean_abs");
  /* The window applies to the first free dimension (sample: t in [0.5, 1]) with component free too. */
  ms = measure_of("observables/q", NH_REDUCE_MAX_ABS);
  select_at(&ms, "method", "rk4", 0);
  select_at(&ms, "h", NULL, 0.125);
  select_at(&ms, "ic", NULL, 1);
  ms.from = 0.5, ms.to = 1;
  double wmax = 0;
  for (int s2 = 4; s2 < 9; s2++)
    for (int c2 = 0; c2 < 3; c2++) wmax = fmax(wmax, fabs(Q(0, 1, 1, s2, c2)));
  cr_expect_eq(measured_ok(&ms), wmax, "window on t, component free");

  /* minus_at: q of rk4 minus q of nh_newmark (by any spelling) at the same h, IC and component, over
   * the samples; then minus_at moving h too is refused (h = 0.25 has its own 9 samples, 4 NaN: the
   * same free dimension, so it is subtracted, NaN where h = 0.25 has no sample). */
  double dmax = 0, dlast = 0;
  for (int s2 = 0; s2 < 9; s2++) dmax = fmax(dmax, fabs(Q(0, 1, 1, s2, 2) - Q(1, 1, 1, s2, 2)));
  dlast = Q(0, 1, 1, 8, 2) - Q(1, 1, 1, 8, 2);
  cr_assert(dmax > 0, "the two methods differ");
  ms = measure_of("observables/q", NH_REDUCE_MAX_ABS);
  select_at(&ms, "method", "rk4", 0);
  select_at(&ms, "h", NULL, 0.125);
  select_at(&ms, "ic", "newmark", 0);
  select_at(&ms, "component", NULL, 2);
  nh_select *o = &ms.minus_select[ms.nminus_select++];
  snprintf(o->dim, sizeof o->dim, "method");
  o->by_name = 1;
  snprintf(o->name, sizeof o->name, "nh_newmark(beta=0,alpha=0.5)");
  cr_expect_eq(measured_ok(&ms), dmax, "max |q_rk4 - q_newmark|");
  ms.reduce = NH_REDUCE_LAST;
  cr_expect_eq(measured_ok(&ms), dlast, "signed, rk4 minus newmark (not the reverse)");
  /* minus_at on a selector `at` does not have: ic = 0 in place of 1 */
  nh_select *o2 = &ms.minus_select[ms.nminus_select++];
  snprintf(o2->dim, sizeof o2->dim, "ic");
  o2->value = 0;
  cr_expect_eq(measured_ok(&ms), Q(0, 1, 1, 8, 2) - Q(1, 1, 0, 8, 2), "the subtracted slice at IC 0");
  /* a subtracted slice with no free dimension: the sample fixed at t = 0.5 (the fifth) is one value,
   * subtracted from every sample: the last minus it */
  nh_select *o3 = &ms.minus_select[ms.nminus_select++];
  snprintf(o3->dim, sizeof o3->dim, "t");
  o3->value = 0.5;
  cr_expect_eq(measured_ok(&ms), Q(0, 1, 1, 8, 2) - Q(1, 1, 0, 4, 2), "x(T) of rk4 minus one value of newmark's");
  /* with the component free too (max_abs over sample and component): the subtracted slice with the
   * same two free dimensions is taken element by element, one with only the component free is
   * refused */
  ms.nminus_select--;
  ms.reduce = NH_REDUCE_MAX_ABS;
  nh_measure two = ms;
  two.nselect = 3; /* method, h, ic: component and sample free */
  two.nminus_select = 2; /* method and ic of the subtracted slice: component and sample free, the same */
  cr_expect(isfinite(measured_ok(&two)), "two free dimensions each");
  two.minus_select[two.nminus_select] = (nh_select){.dim = "t", .value = 0.5};
  two.nminus_select++;
  measured_fails(&two, "cannot subtract 'observables/q': its selection is not of the free dimensions");
  ms.nminus_select = 1;
  snprintf(ms.minus_select[0].name, sizeof ms.minus_select[0].name, "js_b");
  measured_fails(&ms, "no method 'js_b' in the file");

  /* Wrong selections, each with its reason. */
  struct {
    const char *dim, *name;
    double value;
  } good[4] = {{"method", "rk4", 0}, {"h", NULL, 0.125}, {"ic", NULL, 0}, {"component", NULL, 1}};
  struct {
    int replace; /* which of good[] is replaced (-1: an extra selection first, 4: left out ic) */
    const char *dim, *name;
    double value;
    const char *why;
  } bad[] = {
      {-1, "nosuch", NULL, 1, "dataset 'observables/q' has no dimension 'nosuch'"},
      {0, "method", "js_b", 0, "no method 'js_b' in the file"},
      {1, "h", NULL, 0.3, "no h = 0.3 in the file"},
      {2, "ic", "zzz", 0, "no ic named 'zzz'"},
      {2, "ic", NULL, 2, "index out of range in dimension ic"},
      {2, "ic", NULL, -1, "index out of range in dimension ic"},
      {2, "ic", NULL, 0.5, "dimension ic takes an index"},
      {3, "component", "q[7]", 0, "no component named 'q[7]'"},
      {4, NULL, NULL, 0, "dimensions ic and sample are both free: select one"},
  };
  for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
    ms = measure_of("observables/q", NH_REDUCE_LAST); /* not pointwise: one free dimension only */
    if (bad[k].replace < 0) select_at(&ms, bad[k].dim, bad[k].name, bad[k].value);
    for (int g = 0; g < 4; g++) {
      if (g == bad[k].replace) select_at(&ms, bad[k].dim, bad[k].name, bad[k].value);
      else if (!(bad[k].replace == 4 && g == 2)) select_at(&ms, good[g].dim, good[g].name, good[g].value);
    }
    measured_fails(&ms, bad[k].why);
  }
  /* The first dimension free with another: both named. */
  ms = measure_of("observables/q", NH_REDUCE_SLOPE);
  for (int g = 1; g < 4; g++) select_at(&ms, good[g].dim, good[g].name, good[g].value);
  measured_fails(&ms, "dimensions method and sample are both free: select one");
  ms = measure_of("observables/q", NH_REDUCE_VALUE);
  for (int g = 0; g < 4; g++) select_at(&ms, good[g].dim, good[g].name, good[g].value);
  measured_fails(&ms, "reduce = \"value\" but dimension sample is free");
  snprintf(ms.minus, sizeof ms.minus, "observables/energy");
  measured_fails(&ms, "cannot subtract 'observables/energy'");
  ms = measure_of("observables/nosuch", NH_REDUCE_MAX);
  measured_fails(&ms, "no dataset 'observables/nosuch'");
  ms = measure_of("orders", NH_REDUCE_VALUE); /* the orders table needs its method */
  measured_fails(&ms, "'orders' needs at = { method = \"...\" }");
  select_at(&ms, "method", NULL, 0);
  measured_fails(&ms, "'orders' needs at = { method = \"...\" }");
  snprintf(ms.file, sizeof ms.file, "nofile");
  measured_fails(&ms, "nofile.h5 is missing");
  write_file("junk.h5", "not HDF5\n");
  snprintf(ms.file, sizeof ms.file, "junk");
  measured_fails(&ms, "junk.h5 is not a readable results file");
#undef Q
}

/* A claims file loaded field by field, then evaluated against the trajectory file: a ratio row
 * (per = "@id") is its value over its divisor's, both read here from the file; a row whose divisor
 * could not be measured is not measured either; a failing row's reason follows its outcome (a
 * passing row's does not); a measured-only row and a declared not-verified row keep their reasons. */
Test(report, claims_loaded_and_evaluated_by_hand, .init = make_tmpdir, .fini = remove_tmpdir, .timeout = 60) {
  double q[2 * 2 * 2 * 9 * 3], t[2 * 9];
  traj_study(q, t);
#define Q(mi, hi, ic, s, c) q[((((mi) * 2 + (hi)) * 2 + (ic)) * 9 + (s)) * 3 + (c)]
  const char *text =
      "spec = \"quick\";\ntitle = \"by hand\";\nitems = (\n"
      " { item = \"Q1\"; source = \"[src]\"; claim = \"the claim\"; note = \"a note\"; figures = [\"f1\", \"f2\"];\n"
      "   rows = (\n"
      "   { id = \"top\"; quantity = \"q1 at t = 1\"; file = \"traj\"; data = \"observables/q\";\n"
      "     at = { method = \"rk4\"; h = 0.125; ic = 1; component = \"q[1]\"; t = 1.0; }; expect = \"> -1e300\";\n"
      "     reason = \"said only on a failure\"; },\n"
      "   { quantity = \"ratio\"; file = \"traj\"; data = \"observables/q\"; per = \"@top\"; reduce = \"max\";\n"
      "     from = 0.25; to = 0.5;\n"
      "     at = { method = \"rk4\"; h = 0.125; ic = 1; component = \"q[1]\"; }; expect = \"< -1e300\"; reason = \"a wrong claim\"; },\n"
      "   { id = \"gone\"; quantity = \"missing\"; file = \"nowhere\"; data = \"x\"; expect = \"< 1\"; },\n"
      "   { quantity = \"over a missing one\"; file = \"traj\"; data = \"observables/q\"; per = \"gone\";\n"
      "     at = { method = \"rk4\"; h = 0.125; ic = 1; component = \"q[1]\"; t = 1.0; }; expect = \"< 1\"; },\n"
      "   { quantity = \"only measured\"; file = \"traj\"; data = \"observables/q\"; period = 6.5; verdict = \"shown\";\n"
      "     at = { method = \"rk4\"; h = 0.125; ic = 1; component = \"q[1]\"; t = 1.0; }; reason = \"no claim\"; },\n"
      "   { quantity = \"declared\"; verdict = \"not-verified\"; reason = \"by hand\"; } ); }\n"
      ");\n";
  write_file("c.claims", text);
  char path[256], err[1024] = "";
  snprintf(path, sizeof path, "%s/c.claims", tmpdir);
  nh_claims c;
  cr_assert_eq(nh_claims_load(path, &c, err, sizeof err), 0, "%s", err);
  cr_assert(c.nitems == 1 && c.items[0].nrows == 6);
  cr_expect_str_eq(c.spec, "quick");
  cr_expect_str_eq(c.title, "by hand");
  const nh_claim_item *it = &c.items[0];
  cr_expect(strcmp(it->item, "Q1") == 0 && strcmp(it->source, "[src]") == 0 && strcmp(it->claim, "the claim") == 0 &&
            strcmp(it->note, "a note") == 0 && it->nfigures == 2 && strcmp(it->figures[1], "f2") == 0);
  const nh_claim_row *r = it->rows;
  cr_expect(r[0].line == 6 && r[1].line == 9 && r[5].line == 17, "lines %d %d %d", r[0].line, r[1].line, r[5].line);
  cr_expect(r[0].measure.nselect == 5 && r[0].measure.select[0].by_name && !r[0].measure.select[1].by_name &&
            r[0].measure.select[1].value == 0.125 && strcmp(r[0].measure.select[2].name, "1") == 0);
  cr_expect(r[0].measure.from == -INFINITY && r[0].measure.to == INFINITY && r[0].measure.reduce == NH_REDUCE_VALUE);
  cr_expect(r[1].measure.from == 0.25 && r[1].measure.to == 0.5 && r[1].measure.reduce == NH_REDUCE_MAX);
  cr_expect_str_eq(r[1].per, "top", "the '@' of per is dropped");
  cr_expect(r[0].has_expect && r[0].expect.op == NH_EXPECT_GT && r[0].expect.a == -1e300);
  cr_expect(r[4].measure.period == 6.5 && !r[4].has_expect && r[4].has_measure && r[4].shown);
  cr_expect(r[5].static_verdict && !r[5].has_measure && strcmp(r[5].reason, "by hand") == 0);

  nh_claims_evaluate(&c, tmpdir);
  const double top = Q(0, 1, 1, 8, 1);
  const double ratio = fmax(fmax(Q(0, 1, 1, 2, 1), Q(0, 1, 1, 3, 1)), Q(0, 1, 1, 4, 1)) / top;
  cr_expect(r[0].measured == top && r[0].verdict == NH_PASS, "top %.17g vs %.17g", r[0].measured, top);
  cr_expect_str_eq(r[0].outcome, "", "a passing row's reason is not its outcome");
  cr_expect(r[1].measured == ratio, "ratio %.17g, by hand %.17g", r[1].measured, ratio);
  cr_expect_eq(r[1].verdict, NH_FAIL);
  cr_expect_str_eq(r[1].outcome, "a wrong claim");
  cr_expect(r[2].verdict == NH_NOT_VERIFIED && isnan(r[2].measured) && strstr(r[2].outcome, "not measured: results file"),
            "%s", r[2].outcome);
  cr_expect(r[3].verdict == NH_NOT_VERIFIED && isnan(r[3].measured), "%g", r[3].measured);
  cr_expect_str_eq(r[3].outcome, "not measured: its divisor gone was not");
  cr_expect(r[4].verdict == NH_SHOWN && r[4].measured == top, "a shown row: its value, never a pass");
  cr_expect_str_eq(r[4].outcome, "no claim");
  cr_expect(r[5].verdict == NH_NOT_VERIFIED && isnan(r[5].measured));
  cr_expect_str_eq(r[5].outcome, "by hand");
  cr_expect_eq(nh_item_verdict(it), NH_FAIL);
  nh_claims_free(&c);
#undef Q
}

/* More refusals of the claims loader, each naming FILE:LINE: selectors, numbers, lengths, figures,
 * a declared row without its reason, ratio rows that name no measured row, an unreadable file. */
Test(report, claims_refusals_name_the_line, .init = make_tmpdir, .fini = remove_tmpdir) {
#define ROW(body) "spec = \"s\";\nitems = (\n { item = \"1\"; claim = \"c\";\n   rows = (\n" body " ); }\n);\n"
  static const struct {
    const char *text, *message;
  } cases[] = {
      {ROW("   { quantity = \"q\"; file = \"f\"; data = \"d\"; at = 3; expect = \"< 1\"; }"),
       "t.claims:5: 'at' must be a group { dim = value; ... }"},
      {ROW("   { quantity = \"q\"; file = \"f\"; data = \"d\"; expect = \"< 1\";\n"
           "     at = { a = 1; b = 2; c = 3; d = 4; e = 5; f = 6; g = 7; h = 8; i = 9; }; }"),
       "t.claims:6: at most 8 selectors"},
      {ROW("   { quantity = \"q\"; file = \"f\"; data = \"d\"; expect = \"< 1\";\n"
           "     at = { a = 1; b = 2; c = 3; d = 4; e = 5; f = 6; g = 7; h = 8; }; }"),
       NULL},
      {ROW("   { quantity = \"q\"; file = \"f\"; data = \"d\"; expect = \"< 1\";\n     period = \"x\"; }"),
       "t.claims:6: 'period' must be a number"},
      {ROW("   { quantity = \"q\"; file = \"f\"; data = \"d\"; expect = \"< 1\";\n     from = \"x\"; }"),
       "t.claims:6: 'from' must be a number"},
      {ROW("   { quantity = 3; file = \"f\"; data = \"d\"; expect = \"< 1\"; }"), "t.claims:5: 'quantity' must be a string"},
      {ROW("   { id = \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"; quantity = \"q\"; verdict = "
           "\"not-verified\"; reason = \"r\"; }"),
       NULL},
      {ROW("   { id = \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"; quantity = \"q\"; verdict = "
           "\"not-verified\"; reason = \"r\"; }"),
       "t.claims:5: 'id' is longer than 63 characters"},
      {ROW("   { quantity = \"q\"; verdict = \"not-verified\"; }"), "t.claims:5: a not-verified row needs its reason"},
      {ROW("   { file = \"f\"; data = \"d\"; expect = \"< 1\"; }"), "t.claims:5: missing setting 'quantity'"},
      {ROW("   { quantity = \"q\"; data = \"d\"; expect = \"< 1\"; }"), "t.claims:5: missing setting 'file'"},
      {ROW("   { id = \"a\"; quantity = \"q\"; file = \"f\"; data = \"d\"; expect = \"< 1\"; },\n"
           "   { id = \"b\"; quantity = \"q\"; file = \"f\"; data = \"d\"; per = \"a\"; expect = \"< 1\"; },\n"
           "   { quantity = \"q\"; file = \"f\"; data = \"d\"; per = \"b\"; expect = \"< 1\"; }"),
       "t.claims:7: item 1: per = 'b' must name a measured row that is not itself divided"},
      {ROW("   { id = \"a\"; quantity = \"q\"; verdict = \"not-verified\"; reason = \"r\"; },\n"
           "   { quantity = \"q\"; file = \"f\"; data = \"d\"; per = \"a\"; expect = \"< 1\"; }"),
       "t.claims:6: item 1: per = 'a' must name a measured row that is not itself divided"},
      {ROW("   { quantity = \"q\"; file = \"f\"; data = \"d\"; per = \"zz\"; expect = \"< 1\"; }"),
       "t.claims:5: item 1: per = 'zz' must name a measured row"},
      {"spec = \"s\";\nitems = (\n { item = \"1\"; claim = \"c\"; figures = [\"a\", \"b\", \"c\", \"d\", \"e\"];\n"
       "   rows = ( { quantity = \"q\"; verdict = \"not-verified\"; reason = \"r\"; } ); }\n);\n",
       "t.claims:3: figures: at most 4 names (strings)"},
      {"spec = \"s\";\nitems = { a = 1; };\n", "t.claims:2: needs a list items"},
      {"spec = \"s\";\ntitle = 5;\nitems = ();\n", "t.claims:2: 'title' must be a string"},
      /* Numbers read as written, as in a spec (studies/config_read.h). */
      {ROW("   { quantity = \"q\"; file = \"f\"; data = \"d\"; expect = \"< 1\";\n     period = 1e400; }"),
       "t.claims:6: 'period' = inf must be a finite number"},
      {ROW("   { quantity = \"q\"; file = \"f\"; data = \"d\"; expect = \"< 1\";\n     from = 9007199254740993L; }"),
       "t.claims:6: 'from' = 9007199254740993 is beyond 2^53, where a number is not read exactly"},
      {ROW("   { quantity = \"q\"; file = \"f\"; data = \"d\"; expect = \"< 1\";\n     from = 9007199254740992L; }"),
       NULL},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    nh_claims c;
    char err[1024] = "";
    const int rc = load_text(cases[i].text, &c, err, sizeof err);
    if (!cases[i].message) {
      cr_expect_eq(rc, 0, "case %zu refused: %s", i, err);
      if (rc == 0) nh_claims_free(&c);
      continue;
    }
    cr_expect_eq(rc, -1, "case %zu accepted", i);
    cr_expect(strstr(err, cases[i].message), "case %zu: '%s' lacks '%s'", i, err, cases[i].message);
  }
#undef ROW
  nh_claims c;
  char err[1024] = "", path[256];
  snprintf(path, sizeof path, "%s/none.claims", tmpdir);
  cr_expect_eq(nh_claims_load(path, &c, err, sizeof err), -1);
  cr_expect(strstr(err, "none.claims: cannot read the file: No such file or directory"), "%s", err);
}

/* One quantity, one threshold: two rows of one quantity (methods in any spelling, selectors in any
 * order) held to two different bounds of one kind are refused with both places; bounds of different
 * kinds, "~" about different values, bounds on two different rows, or another selector, window,
 * reduction or divisor are different quantities or different claims. */
Test(report, one_quantity_one_threshold, .init = make_tmpdir, .fini = remove_tmpdir) {
#define TWO(a, b)                                                                                         \
  "spec = \"s\";\nitems = (\n { item = \"1\"; claim = \"c\";\n   rows = (\n"                              \
  "   { id = \"r\"; quantity = \"ref\"; file = \"g\"; data = \"z\"; expect = \"< 1\"; },\n"              \
  "   { id = \"r2\"; quantity = \"ref2\"; file = \"g\"; data = \"z2\"; expect = \"< 1\"; },\n"           \
  "   { quantity = \"first\"; file = \"f\"; data = \"d\"; " a " },\n"                                      \
  "   { quantity = \"second\"; file = \"f\"; data = \"d\"; " b " } ); }\n);\n"
#define AT "at = { method = \"nh_newmark(alpha=0.5)\"; h = 0.1; }; "
#define AT2 "at = { h = 0.1; method = \"nh_newmark(beta=0,beta2=0,alpha=0.5,constraint=point)\"; }; "
  static const struct {
    const char *text;
    int refused;
  } cases[] = {
      {TWO(AT "expect = \"< 1e-13\";", AT2 "expect = \"< 1e-11\";"), 1},
      {TWO(AT "expect = \"< 1e-13\";", AT2 "expect = \"<= 1e-13\";"), 1},
      {TWO(AT "expect = \"> 1e-13\";", AT2 "expect = \">= 1e-11\";"), 1},
      {TWO(AT "expect = \"in [1, 2]\";", AT2 "expect = \"in [1, 3]\";"), 1},
      {TWO(AT "expect = \"~ 1 rel 0.1\";", AT2 "expect = \"~ 1 rel 0.2\";"), 1},
      {TWO(AT "expect = \"~ 1 rel 0.1\";", AT2 "expect = \"~ 1 abs 0.1\";"), 1},
      {TWO(AT "expect = \"< 2 * @r\";", AT2 "expect = \"< 3 * @r\";"), 1},
      {TWO(AT "reduce = \"max_abs\"; expect = \"< 1e-13\";", AT2 "reduce = \"max_abs\"; expect = \"< 1e-12\";"), 1},
      {TWO(AT "expect = \"< 1e-13\";", AT2 "expect = \"< 1e-13\";"), 0}, /* the same bound twice */
      {TWO(AT "expect = \"< 1e-13\";", AT2 "expect = \"> 1e-20\";"), 0}, /* an upper and a lower bound */
      {TWO(AT "expect = \"~ 1 rel 0.1\";", AT2 "expect = \"~ 2 rel 0.1\";"), 0}, /* about two values */
      {TWO(AT "expect = \"< @r\";", AT2 "expect = \"< @r2\";"), 0},             /* against two rows */
      {TWO(AT "expect = \"< 1\";", AT2 "expect = \"< @r\";"), 0},               /* a number and a row */
      {TWO(AT "expect = \"< 1e-13\";", "at = { method = \"nh_newmark(alpha=0.5)\"; h = 0.2; }; expect = \"< 1e-11\";"), 0},
      {TWO(AT "expect = \"< 1e-13\";", "at = { method = \"nh_newmark(alpha=0)\"; h = 0.1; }; expect = \"< 1e-11\";"), 0},
      {TWO(AT "expect = \"< 1e-13\";", AT "from = 1.0; expect = \"< 1e-11\";"), 0},
      {TWO(AT "expect = \"< 1e-13\";", AT "reduce = \"max\"; expect = \"< 1e-11\";"), 0},
      {TWO(AT "expect = \"< 1e-13\";", AT "per = \"r\"; expect = \"< 1e-11\";"), 0},
      {TWO(AT "expect = \"< 1e-13\";", AT "minus = \"e\"; expect = \"< 1e-11\";"), 0},
      {TWO(AT "expect = \"< 1e-13\";", AT "minus_at = { h = 0.2; }; expect = \"< 1e-11\";"), 0},
      {TWO(AT "expect = \"< 1e-13\";", AT "field = \"steps\"; expect = \"< 1e-11\";"), 0},
      {TWO(AT "expect = \"< 1e-13\";", AT "verdict = \"shown\";"), 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    nh_claims c;
    char err[2048] = "";
    cr_assert_eq(load_text(cases[i].text, &c, err, sizeof err), 0, "case %zu: %s", i, err);
    const int rc = nh_claims_check_consistent(&c, 1, err, sizeof err);
    if (cases[i].refused) {
      cr_expect_eq(rc, -1, "case %zu accepted", i);
      cr_expect(strstr(err, "t.claims:8: item 1 checks 'second'") && strstr(err, "t.claims:7 (item 1)") &&
                    strstr(err, "one quantity, one threshold"),
                "case %zu: %s", i, err);
    } else {
      cr_expect_eq(rc, 0, "case %zu refused: %s", i, err);
    }
    nh_claims_free(&c);
  }
  /* Across files: the same rows in two claims files name both files. */
  nh_claims two[2];
  char err[2048] = "", path[256];
  write_file("a.claims", TWO(AT "expect = \"< 1e-13\";", "at = { h = 0.3; }; expect = \"< 1\";"));
  write_file("b.claims", TWO("at = { h = 0.3; }; expect = \"< 2\";", AT "expect = \"< 1e-12\";"));
  snprintf(path, sizeof path, "%s/a.claims", tmpdir);
  cr_assert_eq(nh_claims_load(path, &two[0], err, sizeof err), 0, "%s", err);
  snprintf(path, sizeof path, "%s/b.claims", tmpdir);
  cr_assert_eq(nh_claims_load(path, &two[1], err, sizeof err), 0, "%s", err);
  cr_expect_eq(nh_claims_check_consistent(two, 1, err, sizeof err), 0, "one file alone is consistent: %s", err);
  cr_expect_eq(nh_claims_check_consistent(two, 2, err, sizeof err), -1);
  cr_expect(strstr(err, "b.claims:8: item 1 checks 'second' against '< 1e-12'") && strstr(err, "a.claims:7 (item 1)"),
            "%s", err);
  nh_claims_free(&two[0]), nh_claims_free(&two[1]);
#undef TWO
#undef AT
#undef AT2
}

/* ---- the report's two outputs (bench/claims/report_write.c), from claims built here ----------------- */

static char *written(int csv, const nh_claims *c, int nfiles, int header) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  cr_assert(f);
  if (csv) nh_claims_write_csv(f, c, nfiles, header);
  else nh_claims_write_markdown(f, c, nfiles, "res", "figs");
  fclose(f);
  return buf;
}

/* claims.csv: quoted fields (a comma, a quote doubled, a line break), the measured value in %.10g
 * or empty for NaN, the header only when asked. REPORT.md: the summary counts (an item's verdict is
 * its worst row's), per item its head, the rows with '|' escaped and line breaks flattened, "—" for
 * what is missing, **fail**, the finding and every figure. */
Test(report, csv_and_markdown_written_by_hand) {
  nh_claim_row rows[4];
  memset(rows, 0, sizeof rows);
  snprintf(rows[0].quantity, sizeof rows[0].quantity, "say \"hi\", a|b\nc");
  snprintf(rows[0].expected, sizeof rows[0].expected, "< 2");
  rows[0].measured = 1.0 / 3, rows[0].verdict = NH_PASS;
  snprintf(rows[1].quantity, sizeof rows[1].quantity, "plain");
  rows[1].measured = NAN, rows[1].verdict = NH_NOT_VERIFIED;
  snprintf(rows[1].outcome, sizeof rows[1].outcome, "by hand");
  snprintf(rows[2].quantity, sizeof rows[2].quantity, "third");
  snprintf(rows[2].expected, sizeof rows[2].expected, "> 5");
  rows[2].measured = 4, rows[2].verdict = NH_FAIL;
  snprintf(rows[2].outcome, sizeof rows[2].outcome, "why");
  snprintf(rows[3].quantity, sizeof rows[3].quantity, "ctx");
  rows[3].measured = 2.5, rows[3].verdict = NH_SHOWN;
  snprintf(rows[3].outcome, sizeof rows[3].outcome, "for context");
  nh_claim_item items[3];
  memset(items, 0, sizeof items);
  snprintf(items[0].item, sizeof items[0].item, "A1");
  snprintf(items[0].source, sizeof items[0].source, "[src]");
  snprintf(items[0].claim, sizeof items[0].claim, "the claim");
  snprintf(items[0].note, sizeof items[0].note, "F"); /* one letter: still a finding */
  items[0].nfigures = 2;
  snprintf(items[0].figures[0], sizeof items[0].figures[0], "f1");
  snprintf(items[0].figures[1], sizeof items[0].figures[1], "f2");
  items[0].nrows = 2, items[0].rows = rows;
  snprintf(items[1].item, sizeof items[1].item, "A2");
  snprintf(items[1].claim, sizeof items[1].claim, "another");
  items[1].nrows = 1, items[1].rows = rows + 2;
  items[1].cause = NH_CAUSE_HARNESS;
  snprintf(items[1].summary, sizeof items[1].summary, "one line");
  snprintf(items[2].item, sizeof items[2].item, "A3");
  snprintf(items[2].claim, sizeof items[2].claim, "shown only");
  items[2].nrows = 1, items[2].rows = rows + 3;
  items[2].cause = NH_CAUSE_CLAIM; /* not failing: not in the list of failures */
  snprintf(items[2].summary, sizeof items[2].summary, "never listed");
  nh_claims c;
  memset(&c, 0, sizeof c);
  snprintf(c.spec, sizeof c.spec, "sp");
  snprintf(c.title, sizeof c.title, "T");
  c.nitems = 3, c.items = items;

  char *csv = written(1, &c, 1, 1);
  cr_expect_str_eq(csv, "spec,item,quantity,expected,measured,verdict\n"
                        "sp,A1,\"say \"\"hi\"\", a|b\nc\",< 2,0.3333333333,pass\n"
                        "sp,A1,plain,,,not-verified\n"
                        "sp,A2,third,> 5,4,fail\n"
                        "sp,A3,ctx,,2.5,shown\n");
  free(csv);
  csv = written(1, &c, 1, 0);
  cr_expect(strncmp(csv, "sp,A1,", 6) == 0, "no header: %s", csv);
  free(csv);

  char *md = written(0, &c, 1, 0);
  static const char *const parts[] = {
      "# Reproducing the papers: claims report\n\n",
      "results files in `res` (",
      "| spec | items | pass | fail | not-verified | shown | rows (pass / fail / not-verified / shown) |\n"
      "|---|---|---|---|---|---|---|\n"
      "| sp | 3 | 0 | 1 | 1 | 1 | 1 / 1 / 1 / 1 |\n",
      "\nFailing items of sp:\n\n- **A2** — the harness falls short: one line\n",
      "\n## sp — T\n\n",
      "### A1 [src] — not-verified\n\nthe claim\n\n| quantity | expected | measured | verdict | remark |\n"
      "|---|---|---|---|---|\n"
      "| say \"hi\", a\\|b c | < 2 | 0.3333333333 | pass |  |\n"
      "| plain | — | — | not-verified | by hand |\n\n"
      "**Finding.** F\n\n"
      "![f1](figs/f1.png) ([PDF](figs/f1.pdf))\n\n![f2](figs/f2.png) ([PDF](figs/f2.pdf))\n\n",
      "### A2  — fail\n\nanother\n\n",
      "| third | > 5 | 4 | **fail** | why |\n",
      "### A3  — shown\n\nshown only\n\n",
      "| ctx | — | 2.5 | shown | for context |\n",
  };
  const char *at = md;
  for (size_t i = 0; i < sizeof parts / sizeof *parts; i++) {
    const char *found = strstr(at, parts[i]);
    cr_expect(found != NULL, "REPORT.md lacks (in order):\n%s\n--- in:\n%s", parts[i], md);
    if (found) at = found + strlen(parts[i]);
  }
  free(md);
}

/* ---- claims measures: which sample a time selects ------------------------------------------- */


/* A measure of observables/q of rk4, IC 0, component 0 in DIR/traj.h5 at h = H and t = T. */
static int q_at(const char *dir, double h, double t, double *m, char *why, size_t len) {
  nh_measure ms;
  memset(&ms, 0, sizeof ms);
  snprintf(ms.file, sizeof ms.file, "traj");
  snprintf(ms.data, sizeof ms.data, "observables/q");
  ms.reduce = NH_REDUCE_VALUE;
  ms.from = -INFINITY, ms.to = INFINITY;
  const char *dims[] = {"method", "h", "ic", "component", "t"};
  const double values[] = {0, h, 0, 0, t};
  for (int k = 0; k < 5; k++) {
    nh_select *s = &ms.select[ms.nselect++];
    snprintf(s->dim, sizeof s->dim, "%s", dims[k]);
    s->value = values[k];
  }
  why[0] = '\0';
  return nh_measure_eval(&ms, dir, m, why, len);
}

/* trajectory_particle.cfg at T = 0.4, sampled every 2 steps: h = 0.1 has samples at t = 0, 0.2,
 * 0.4, h = 0.05 at t = 0, 0.1, ..., 0.4 (read here from /trajectory/t). A time selects the nearest
 * sample within half the sample interval (0.1 and 0.05): t = 0.49 is the last sample at h = 0.1,
 * t = 0.51 none (0.11 away), nor t = -0.11; at h = 0.05 t = 0.44 is the last sample and 0.46 none.
 * h must match to round-off: 0.05 * (1 + 1e-15) is h[1], 0.05 * (1 + 1e-6) no step size. */
Test(report, measure_time_within_half_a_sample_interval) {
  static char out[1 << 18];
  char dir[128], path[256], args[512], why[1024];
  snprintf(dir, sizeof dir, "/tmp/nhbench-mut2-bench-%d-meas", (int)getpid());
  snprintf(path, sizeof path, "%s/traj.h5", dir);
  snprintf(args, sizeof args, "run " NHBENCH_SOURCE_DIR "/tests/data/trajectory_particle.cfg -o %s --set T=0.4", path);
  cr_assert_eq(test_run_nhbench(args, out, sizeof out), 0, "%s", out);
  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  cr_assert_geq(f, 0);
  double t[2][5], q[2][2][2][5][3]; /* [h][sample]; [method][h][ic][sample][component] */
  hid_t ds = H5Dopen2(f, "/trajectory/t", H5P_DEFAULT);
  cr_assert_geq(H5Dread(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, t), 0);
  H5Dclose(ds);
  ds = H5Dopen2(f, "/trajectory/observables/q", H5P_DEFAULT);
  hid_t sp = H5Dget_space(ds);
  cr_assert_eq(H5Sget_simple_extent_npoints(sp), 2 * 2 * 2 * 5 * 3, "q: 2 methods, 2 h, 2 ICs, 5 samples, 3 components");
  H5Sclose(sp);
  cr_assert_geq(H5Dread(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, q), 0);
  H5Dclose(ds), H5Fclose(f);
  cr_assert(t[0][2] == 0.4 && t[1][4] == 0.4 && t[1][1] == 0.1, "sample times");
  double m;
  const struct {
    double h, t;
    int sample; /* -1: none */
  } cases[] = {{0.1, 0.49, 2}, {0.1, 0.51, -1}, {0.1, -0.09, 0}, {0.1, -0.11, -1}, {0.1, 0.29, 1},
               {0.1, 0.31, 2}, {0.05, 0.44, 4}, {0.05, 0.46, -1}, {0.05, 0.26, 3}, {0.05 * (1 + 1e-15), 0.1, 1}};
  for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
    const int hi = cases[k].h < 0.075;
    const int rc = q_at(dir, cases[k].h, cases[k].t, &m, why, sizeof why);
    if (cases[k].sample < 0) {
      cr_expect_eq(rc, -1, "h = %g, t = %g: picked %g", cases[k].h, cases[k].t, m);
      char want[64];
      snprintf(want, sizeof want, "no sample at t = %.10g in the file", cases[k].t);
      cr_expect(strstr(why, want), "%s", why);
    } else {
      cr_expect_eq(rc, 0, "h = %g, t = %g: %s", cases[k].h, cases[k].t, why);
      cr_expect_eq(m, q[0][hi][0][cases[k].sample][0], "h = %g, t = %g: sample %d", cases[k].h, cases[k].t,
                   cases[k].sample);
    }
  }
  cr_expect_eq(q_at(dir, 0.05 * (1 + 1e-6), 0.1, &m, why, sizeof why), -1);
  cr_expect(strstr(why, "no h = 0.05000005 in the file"), "%s", why);
  snprintf(args, sizeof args, "rm -rf %s", dir);
  cr_expect_eq(system(args), 0);
}

/* nh_expect_parse fills the expectation whatever the memory held before: "in [a, b]" has no
 * reference (ref ""), "< X" with a number neither (factor 1), the unused bound 0; "~ k * @id rel r" the
 * reference id, factor k and tolerance r. */
Test(report, expect_parse_fills_everything) {
  const struct {
    const char *text;
    nh_expect_op op;
    double a, b, factor;
    const char *ref;
  } cases[] = {{"in [1, 2]", NH_EXPECT_IN, 1, 2, NAN, ""}, /* factor: unused without a reference */
               {"< 3", NH_EXPECT_LT, 3, 0, 1, ""},
               {"~ 2.5 * @C1.x rel 0.1", NH_EXPECT_REL, 0, 0.1, 2.5, "C1.x"},
               {">= @y", NH_EXPECT_GE, 0, 0, 1, "y"}};
  for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
    nh_expect e;
    memset(&e, 0x5a, sizeof e); /* garbage: 'Z' in ref, a huge factor */
    char err[512] = "";
    cr_assert_eq(nh_expect_parse(cases[k].text, &e, err, sizeof err), 0, "%s: %s", cases[k].text, err);
    cr_expect_eq(e.op, cases[k].op, "%s", cases[k].text);
    cr_expect_eq(e.a, cases[k].a, "%s: a = %g", cases[k].text, e.a);
    cr_expect_eq(e.b, cases[k].b, "%s: b = %g", cases[k].text, e.b);
    if (!isnan(cases[k].factor)) cr_expect_eq(e.factor, cases[k].factor, "%s: factor = %g", cases[k].text, e.factor);
    cr_expect_str_eq(e.ref, cases[k].ref, "%s", cases[k].text);
  }
}

/* A claims file is read by libconfig too: an integer it would wrap to 32 bits is refused at its
 * line; the same file with the L suffix gets past that check (and fails later, on its missing
 * items). */
Test(report, claims_integer_beyond_32_bits) {
  char path[128], err[1024], want[512];
  snprintf(path, sizeof path, "/tmp/nhbench-mutclaims-%d.cfg", (int)getpid());
  for (int suffix = 0; suffix < 2; suffix++) {
    char text[128];
    snprintf(text, sizeof text, "spec = \"x.cfg\";\n\nextra = 4294967296%s;\n", suffix ? "L" : "");
    test_write_file(path, text);
    nh_claims c;
    err[0] = '\0';
    cr_expect_eq(nh_claims_load(path, &c, err, sizeof err), -1);
    snprintf(want, sizeof want, "%s:3: the integer 4294967296 does not fit in 32 bits", path);
    if (suffix) cr_expect(strstr(err, "does not fit") == NULL, "%s", err);
    else cr_expect(strncmp(err, want, strlen(want)) == 0, "%s", err);
    nh_claims_free(&c);
  }
  remove(path);
}

/* A claims file that fails after its items are allocated: nh_claims_load frees them itself, and
 * nh_claims_free may still be called on the result (as every caller does), again and again,
 * without freeing anything twice. */
Test(report, claims_free_after_a_failed_load) {
  char path[128], err[1024] = "";
  snprintf(path, sizeof path, "/tmp/nhbench-mutclaims2-%d.cfg", (int)getpid());
  test_write_file(path, "spec = \"s\";\nitems = (\n { item = \"1\"; claim = \"c\";\n   rows = ( { quantity = \"q\"; file = \"f\"; data = \"d\";\n"
        "     expect = \"in [2, 1]\"; } ); }\n);\n");
  nh_claims c;
  cr_expect_eq(nh_claims_load(path, &c, err, sizeof err), -1);
  cr_expect(strstr(err, ":5: bad expectation 'in [2, 1]'") != NULL, "%s", err);
  cr_expect(c.items == NULL && c.nitems == 0, "a failed load leaves %d items at %p", c.nitems, (void *)c.items);
  nh_claims_free(&c);
  nh_claims_free(&c);
  remove(path);
}
