/* Claims reports (bench/report.h): expectations and reductions against hand-computed answers, the
 * claims loader's errors, and the verdicts of a small claims file against a results file written
 * here (the particle's exact solution decides what each row must say). */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/report.h"
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
  cr_expect(isnan(reduce("max", 0, c, x)), "nothing to reduce");
}

Test(report, slopes_growth_and_orders_by_hand) {
  const double t[5] = {0, 0.5, 1, 1.5, 2}, line[5] = {1, 2, 3, 4, 5}, flat[5] = {3, 3, 3, 3, 3};
  cr_expect(fabs(reduce("slope", 5, t, line) - 2) < 1e-14);
  const double y[5] = {0, 0.5, 1, 1.5, 2}; /* y = t on [0, 2]: slope 1 · span 2 / mean 1 = 2 */
  cr_expect(fabs(reduce("rel_growth", 5, t, y) - 2) < 1e-14, "%g", reduce("rel_growth", 5, t, y));
  cr_expect(fabs(reduce("rel_growth", 5, t, flat)) < 1e-14);
  const double down[5] = {2, 1.5, 1, 0.5, 0}; /* the mirror: slope −1, mean 1 */
  cr_expect(fabs(reduce("rel_growth", 5, t, down) + 2) < 1e-14);
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

/* An item is as bad as its worst row: fail over not-verified over pass, whatever the order. */
Test(report, item_verdict_is_its_worst_row) {
  nh_claim_row rows[3];
  nh_claim_item it = {.nrows = 3, .rows = rows};
  const nh_verdict cases[][4] = {/* three rows, then the item */
                                 {NH_PASS, NH_PASS, NH_PASS, NH_PASS},
                                 {NH_PASS, NH_NOT_VERIFIED, NH_PASS, NH_NOT_VERIFIED},
                                 {NH_NOT_VERIFIED, NH_FAIL, NH_PASS, NH_FAIL},
                                 {NH_FAIL, NH_NOT_VERIFIED, NH_PASS, NH_FAIL},
                                 {NH_PASS, NH_PASS, NH_FAIL, NH_FAIL}};
  for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
    for (int j = 0; j < 3; j++) rows[j].verdict = cases[k][j];
    cr_expect_eq(nh_item_verdict(&it), cases[k][3], "case %zu", k);
  }
}

/* ---- claims files ------------------------------------------------------------------------------ */

static char tmpdir[64];

static void write_file(const char *name, const char *text) {
  char path[256];
  snprintf(path, sizeof path, "%s/%s", tmpdir, name);
  FILE *f = fopen(path, "w");
  cr_assert(f);
  fputs(text, f);
  fclose(f);
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
       "only \"not-verified\" may be declared"},
      {"spec = \"s\";\nitems = (\n { item = \"1\"; claim = \"c\";\n   rows = ( { quantity = \"q\"; file = \"f\"; data = \"d\"; reduce = \"median\"; expect = \"< 1\"; } ); }\n);\n",
       "unknown reduce 'median'"},
      {"spec = \"s\";\nitems = (\n { item = \"1\"; claim = \"c\";\n   rows = ( { id = \"a\"; quantity = \"q\"; file = \"f\"; data = \"d\"; expect = \"< 1\"; },\n            { id = \"a\"; quantity = \"q\"; file = \"f\"; data = \"d\"; expect = \"< 1\"; } ); }\n);\n",
       "row id 'a' is used twice"},
      {"spec = \"s\";\nitems = (\n { item = \"1\"; claim = \"c\";\n   rows = ( { quantity = \"q\"; file = \"f\"; data = \"d\"; expect = \"< @nowhere\"; } ); }\n);\n",
       "names no row 'nowhere'"},
      {"spec = \"s\";\nitems = (\n { item = \"1\"; claim = \"c\";\n   rows = ( { quantity = \"q\"; file = \"f\"; data = \"d\"; } ); }\n);\n",
       "needs 'expect'"},
      {"spec = \"s\";\nitems = (\n { item = \"1\"; claim = \"c\"; rows = (); }\n);\n", "needs a non-empty list rows"},
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
      "   { id = \"o4\"; quantity = \"rk4 order\"; file = \"conv\"; data = \"orders\"; at = { method = \"rk4\"; }; expect = \"in [3.85, 4.15]\"; },\n"
      "   { quantity = \"rk4 order as 2 (a wrong claim)\"; file = \"conv\"; data = \"orders\"; at = { method = \"rk4\"; }; expect = \"in [1.85, 2.15]\"; },\n"
      "   { quantity = \"nh_newmark finest order\"; file = \"conv\"; data = \"err\"; at = { method = \"nh_newmark(beta=0,beta2=0,alpha=0.5)\"; }; reduce = \"finest_order\"; expect = \"< 0.6 * @o4\"; } ); },\n"
      " { item = \"Q2\"; claim = \"trajectory\"; rows = (\n"
      "   { quantity = \"E(0)\"; file = \"traj\"; data = \"observables/energy\"; at = { method = \"rk4\"; t = 0.0; }; expect = \"~ 1.5 rel 1e-15\"; },\n"
      "   { quantity = \"E(1) - E(0) by minus\"; file = \"traj\"; data = \"observables/energy\"; minus = \"observables/energy_error\"; at = { method = \"rk4\"; t = 1.0; }; expect = \"~ 1.5 rel 1e-14\"; },\n"
      "   { quantity = \"constraint\"; file = \"traj\"; data = \"observables/constraint_residual\"; at = { method = \"nh_newmark(alpha=0.5)\"; }; reduce = \"max_abs\"; expect = \"<= 1e-13\"; },\n"
      "   { id = \"steps\"; quantity = \"rk4 steps\"; file = \"traj\"; data = \"cost\"; field = \"steps\"; at = { method = \"rk4\"; }; expect = \"~ 10 abs 0\"; },\n"
      "   { quantity = \"newmark over rk4 steps\"; file = \"traj\"; data = \"cost\"; field = \"steps\"; at = { method = \"nh_newmark(alpha=0.5)\"; }; per = \"steps\"; expect = \"~ 1 abs 0\"; },\n"
      "   { quantity = \"measured only\"; file = \"traj\"; data = \"observables/energy\"; at = { method = \"rk4\"; t = 1.0; }; reason = \"no claim\"; },\n"
      "   { quantity = \"declared\"; verdict = \"not-verified\"; reason = \"by hand\"; },\n"
      "   { quantity = \"missing file\"; file = \"nowhere\"; data = \"x\"; expect = \"< 1\"; },\n"
      "   { quantity = \"unknown method\"; file = \"traj\"; data = \"observables/energy\"; at = { method = \"js_b\"; t = 0.0; }; expect = \"< 1\"; } ); }\n"
      ");\n";
  write_file("q.claims", claims);
  snprintf(args, sizeof args, "report %s/q.claims -r %s -o %s", tmpdir, tmpdir, tmpdir);
  cr_assert_eq(test_run_nhbench(args, out, sizeof out), 0, "%s", out);
  cr_expect(strstr(out, "7 pass, 1 fail, 4 not-verified"), "%s", out);
  snprintf(args, sizeof args, "report --strict %s/q.claims -r %s -o %s", tmpdir, tmpdir, tmpdir);
  cr_expect_eq(test_run_nhbench(args, out, sizeof out), 1, "--strict with a failing row: %s", out);

  char path[256];
  snprintf(path, sizeof path, "%s/claims.csv", tmpdir);
  FILE *f = fopen(path, "r");
  cr_assert(f);
  static const char *const verdicts[] = {"pass", "fail", "pass", "pass", "pass", "pass", "pass", "pass",
                                         "not-verified", "not-verified", "not-verified", "not-verified"};
  char line[2048];
  cr_assert(fgets(line, sizeof line, f));
  cr_expect_str_eq(line, "spec,item,quantity,expected,measured,verdict\n");
  for (int i = 0; i < 12; i++) {
    cr_assert(fgets(line, sizeof line, f), "row %d missing", i);
    line[strcspn(line, "\n")] = '\0';
    const char *v = strrchr(line, ',') + 1;
    cr_expect_str_eq(v, verdicts[i], "row %d: %s", i, line);
  }
  cr_expect(!fgets(line, sizeof line, f), "no more rows");
  fclose(f);
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
