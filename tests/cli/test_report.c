/* `nhbench report` (bench/claims/report*.c, bench/cli/cli_report.c): the expectation grammar at its
 * boundaries, every reduction on inputs small enough to reduce by hand, and the command end to end
 * on results files written here from the free nonholonomic particle, whose verdicts follow from
 * the mathematics (rk4 order 4, nh_newmark(alpha=0.5) order 2 and on D to round-off,
 * E(0) = |v0|^2/2 = 3/2) and are listed row by row below, never taken from an earlier run.
 * (tests/cli/test_report_unit.c, same suite, covers the loader's messages and the item verdict.) */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include <criterion/criterion.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/claims/report.h"
#include "tests/helpers.h"

#define QUICK NHBENCH_SOURCE_DIR "/tests/data/report/quick.claims"

/* ---- expectations ------------------------------------------------------------------------------ */

static nh_expect parse_ok(const char *text) {
  nh_expect e;
  char err[512] = "";
  cr_assert_eq(nh_expect_parse(text, &e, err, sizeof err), 0, "'%s' refused: %s", text, err);
  return e;
}

/* X of a parsed expectation as the report resolves it (refs to a value given here). */
static int holds(const nh_expect *e, double ref_value, double m) {
  return nh_expect_holds(e, e->ref[0] ? e->factor * ref_value : e->a, m);
}

Test(report, expect_in_is_inclusive_at_both_ends) {
  nh_expect e = parse_ok("in [-1, 2.5]");
  cr_expect_eq(e.op, NH_EXPECT_IN);
  cr_expect_eq(e.a, -1);
  cr_expect_eq(e.b, 2.5);
  cr_expect(holds(&e, 0, -1) && holds(&e, 0, 2.5) && holds(&e, 0, 0));
  cr_expect(!holds(&e, 0, nextafter(-1, -2)) && !holds(&e, 0, nextafter(2.5, 3)));
  cr_expect(holds(&e, 0, 1) && !holds(&e, 0, -2) && !holds(&e, 0, 3), "inside, and outside either side");
  nh_expect tight = parse_ok("in[2,2]");
  cr_expect(holds(&tight, 0, 2) && !holds(&tight, 0, nextafter(2, 3)) && !holds(&tight, 0, nextafter(2, 1)));
}

/* A zeroed expectation (a row that only measures) is met by nothing, not read as "in [0, 0]". */
Test(report, expect_zeroed_is_met_by_nothing) {
  const nh_expect none = {0};
  cr_expect_eq(none.op, NH_EXPECT_NONE);
  cr_expect(!nh_expect_holds(&none, 0, 0) && !nh_expect_holds(&none, 1, 1));
}

Test(report, expect_strict_and_loose_comparisons_at_the_bound) {
  static const struct {
    const char *text;
    nh_expect_op op;
    int below, at, above; /* holds for m = 3 - ulp, 3, 3 + ulp */
  } cases[] = {{"< 3", NH_EXPECT_LT, 1, 0, 0},
               {"<= 3", NH_EXPECT_LE, 1, 1, 0},
               {"> 3", NH_EXPECT_GT, 0, 0, 1},
               {">= 3", NH_EXPECT_GE, 0, 1, 1},
               {"  <=3  ", NH_EXPECT_LE, 1, 1, 0}};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    nh_expect e = parse_ok(cases[i].text);
    cr_expect_eq(e.op, cases[i].op, "'%s'", cases[i].text);
    cr_expect_eq(e.a, 3, "'%s'", cases[i].text);
    cr_expect_eq(holds(&e, 0, nextafter(3, 0)), cases[i].below, "'%s' below", cases[i].text);
    cr_expect_eq(holds(&e, 0, 3), cases[i].at, "'%s' at", cases[i].text);
    cr_expect_eq(holds(&e, 0, nextafter(3, 4)), cases[i].above, "'%s' above", cases[i].text);
  }
  nh_expect neg = parse_ok("< -1e-3"); /* the sign of X is read */
  cr_expect(holds(&neg, 0, -0.002) && !holds(&neg, 0, 0.0005));
}

Test(report, expect_approximately_rel_and_abs) {
  nh_expect r = parse_ok("~ -4 rel 0.25"); /* |m + 4| <= 1: m in [-5, -3] */
  cr_expect_eq(r.op, NH_EXPECT_REL);
  cr_expect_eq(r.a, -4);
  cr_expect_eq(r.b, 0.25);
  cr_expect(holds(&r, 0, -5) && holds(&r, 0, -3) && holds(&r, 0, -4));
  cr_expect(!holds(&r, 0, -5.0001) && !holds(&r, 0, -2.9999) && !holds(&r, 0, 4), "sign or bound off");
  nh_expect a = parse_ok("~ 2 abs 0.5"); /* m in [1.5, 2.5] */
  cr_expect_eq(a.op, NH_EXPECT_ABS);
  cr_expect(holds(&a, 0, 1.5) && holds(&a, 0, 2.5));
  cr_expect(!holds(&a, 0, 1.4999) && !holds(&a, 0, 2.5001) && !holds(&a, 0, -2));
  nh_expect exact = parse_ok("~ 10 abs 0");
  cr_expect(holds(&exact, 0, 10) && !holds(&exact, 0, nextafter(10, 11)));
  nh_expect zero = parse_ok("~ 0 rel 0.1"); /* a relative tolerance about 0 admits only 0 */
  cr_expect(holds(&zero, 0, 0) && !holds(&zero, 0, 1e-300));
}

Test(report, expect_references_and_factors) {
  nh_expect r = parse_ok("> @row_1"); /* X = @id; a bare "@id" has no comparison and is refused below */
  cr_expect_str_eq(r.ref, "row_1");
  cr_expect_eq(r.factor, 1);
  cr_expect(holds(&r, 5, nextafter(5, 6)) && !holds(&r, 5, 5));
  nh_expect k = parse_ok("< 0.5 * @C3.a-b");
  cr_expect_eq(k.op, NH_EXPECT_LT);
  cr_expect_str_eq(k.ref, "C3.a-b");
  cr_expect_eq(k.factor, 0.5);
  /* ref = 4: X = 2 */
  cr_expect(holds(&k, 4, 1.999) && !holds(&k, 4, 2) && !holds(&k, 4, 3.9), "X is 0.5 * 4, not 4");
  nh_expect g = parse_ok(">= 2 * @a");
  cr_expect(holds(&g, -3, -6) && holds(&g, -3, -3.5) && !holds(&g, -3, -6.5), "X = 2 * -3 = -6");
  nh_expect rel = parse_ok("~ 3 * @base rel 0.1"); /* X = 3 * 2 = 6, |m - 6| <= 0.6 */
  cr_expect_eq(rel.op, NH_EXPECT_REL);
  cr_expect_eq(rel.factor, 3);
  cr_expect_eq(rel.b, 0.1);
  cr_expect(holds(&rel, 2, 6.6) && holds(&rel, 2, 5.4) && !holds(&rel, 2, 6.61) && !holds(&rel, 2, 2.1));
  nh_expect plain = parse_ok("<= @a");
  cr_expect_eq(plain.factor, 1);
  cr_expect(holds(&plain, 7, 7) && !holds(&plain, 7, nextafter(7, 8)));
}

Test(report, expect_nan_never_holds) {
  const char *texts[] = {"in [-1e300, 1e300]", "< 1e300", "<= 1e300", "> -1e300", ">= -1e300", "~ 0 abs 1e300",
                         "~ 1 rel 1e300"};
  for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
    nh_expect e = parse_ok(texts[i]);
    cr_expect(holds(&e, 0, 0), "'%s': control, 0 holds", texts[i]);
    cr_expect(!holds(&e, 0, NAN), "'%s' holds for NaN", texts[i]);
    cr_expect(!nh_expect_holds(&e, NAN, 0), "'%s' holds against X = NaN", texts[i]);
  }
}

Test(report, expect_malformed_is_refused_quoting_the_text) {
  const char *bad[] = {"in [2, 1]", "<", "~ 1", "~ 1 rel -1", "=> 3", "< 3 junk", "in [1, 2] junk", "~ 1 abs 0.1 x",
                       "in [1, 2", "in 1, 2", "in [1 2]", "", "   ", "3", "== 3", "< 2 *", "< 2 * 3", "< @",
                       "~ 1 rel", "~ 1 abs -0.5", "~ 1 relative 0.1", "@", "@row_1", "about 3",
                       /* '~' with no operand it can read */
                       "~", "~ x rel 0.1", "~ @ abs 1", "~ 2 * rel 0.1"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    nh_expect e;
    char err[512] = "", quoted[128];
    cr_expect_eq(nh_expect_parse(bad[i], &e, err, sizeof err), -1, "'%s' accepted", bad[i]);
    snprintf(quoted, sizeof quoted, "'%s'", bad[i]);
    cr_expect(strstr(err, quoted) != NULL, "message for %s does not quote it: %s", quoted, err);
  }
  /* the control: the same shapes, well formed */
  const char *good[] = {"in [1, 1]", "< 3", "~ 1 rel 0", "~ 1 abs 0.1", ">= 3", "< 2 * @x"};
  for (size_t i = 0; i < sizeof good / sizeof *good; i++) parse_ok(good[i]);
}

/* ---- reductions ---------------------------------------------------------------------------------- */

static double reduce(const char *name, int n, const double *c, const double *x) {
  int r = nh_reduce_find(name);
  cr_assert(r >= 0, "reduce '%s' not found", name);
  return nh_reduce_apply((nh_reduce)r, n, c, x, 0);
}

Test(report, reduce_names_are_found_and_unknown_ones_not) {
  static const char *const names[] = {"value", "abs", "max_abs", "max", "min", "mean", "mean_abs", "first", "last",
                                      "slope", "rel_growth", "loglog_slope", "finest_order", "argmax_abs", "max_step"};
  for (int i = 0; i < (int)(sizeof names / sizeof *names); i++) cr_expect_eq(nh_reduce_find(names[i]), i, "%s", names[i]);
  cr_expect_eq(nh_reduce_find("median"), -1);
  cr_expect_eq(nh_reduce_find("MAX"), -1);
}

Test(report, reduce_extremes_and_means_by_hand) {
  const double c[] = {0, 0.5, 1, 1.5}, x[] = {1, -4, 3, 2};
  cr_expect_eq(reduce("max_abs", 4, c, x), 4, "the negative extreme -4 gives 4");
  cr_expect_eq(reduce("max", 4, c, x), 3);
  cr_expect_eq(reduce("min", 4, c, x), -4);
  cr_expect_eq(reduce("mean", 4, c, x), 0.5, "(1 - 4 + 3 + 2) / 4");
  cr_expect_eq(reduce("mean_abs", 4, c, x), 2.5, "(1 + 4 + 3 + 2) / 4");
  cr_expect_eq(reduce("first", 4, c, x), 1);
  cr_expect_eq(reduce("last", 4, c, x), 2);
  cr_expect_eq(reduce("argmax_abs", 4, c, x), 0.5, "the coordinate of -4, not its index 1");
  const double allneg[] = {-2, -7, -1};
  cr_expect_eq(reduce("max", 3, c, allneg), -1);
  cr_expect_eq(reduce("min", 3, c, allneg), -7);
  cr_expect_eq(reduce("max_abs", 3, c, allneg), 7);
}

Test(report, reduce_value_and_abs_need_one_entry) {
  const double c[] = {0, 1}, x[] = {-2.5, 3};
  cr_expect_eq(reduce("value", 1, c, x), -2.5);
  cr_expect_eq(reduce("abs", 1, c, x), 2.5);
  cr_expect(isnan(reduce("value", 2, c, x)), "two entries: no single value");
  cr_expect(isnan(reduce("abs", 2, c, x)));
  cr_expect(isnan(reduce("max", 0, c, x)) && isnan(reduce("mean", 0, c, x)), "no entries");
}

Test(report, reduce_slopes_by_hand) {
  const double c[] = {0, 1, 2, 3}, up[] = {1, 3, 5, 7}, down[] = {5, 2, -1, -4};
  cr_expect_float_eq(reduce("slope", 4, c, up), 2, 1e-14);
  cr_expect_float_eq(reduce("slope", 4, c, down), -3, 1e-14);
  const double t[] = {0, 0.5, 1, 1.5, 2}, y[] = {0, 0.5, 1, 1.5, 2}, k[] = {3, 3, 3, 3, 3};
  /* y = t on [0, 2]: slope 1 * span 2 / mean 1 */
  cr_expect_float_eq(reduce("rel_growth", 5, t, y), 2, 1e-14);
  cr_expect_float_eq(reduce("rel_growth", 5, t, k), 0, 1e-14);
  /* y = 1 + t on [0, 2]: slope 1 * span 2 / mean 2 = 1 */
  const double y1[] = {1, 1.5, 2, 2.5, 3};
  cr_expect_float_eq(reduce("rel_growth", 5, t, y1), 1, 1e-14);
}

Test(report, reduce_orders_over_h_by_hand) {
  const double h[] = {0.4, 0.2, 0.1, 0.05}, sq[] = {0.16, 0.04, 0.01, 0.0025};
  cr_expect_float_eq(reduce("loglog_slope", 4, h, sq), 2, 1e-12);
  const double negsq[] = {-0.16, 0.04, -0.01, 0.0025}; /* |x| is what counts */
  cr_expect_float_eq(reduce("loglog_slope", 4, h, negsq), 2, 1e-12);
  cr_expect_float_eq(reduce("finest_order", 4, h, sq), 2, 1e-12);
  /* the two finest (0.05, 0.1) give 4; the coarse ones are flat. Orders of the entries vary. */
  const double hs[][4] = {{0.05, 0.4, 0.1, 0.2}, {0.4, 0.2, 0.1, 0.05}, {0.1, 0.2, 0.4, 0.05}, {0.2, 0.05, 0.4, 0.1}};
  for (int p = 0; p < 4; p++) {
    double x[4];
    for (int i = 0; i < 4; i++) x[i] = hs[p][i] <= 0.1 ? pow(hs[p][i], 4) : 1;
    cr_expect_float_eq(reduce("finest_order", 4, hs[p], x), 4, 1e-12, "ordering %d", p);
    cr_expect(fabs(reduce("loglog_slope", 4, hs[p], x) - 4) > 0.5, "control: all four do not give 4 (ordering %d)", p);
  }
}

Test(report, reduce_skips_nan_entries) {
  const double c[] = {0, 1, 2, 3, 4}, x[] = {NAN, 2, -5, NAN, 1};
  cr_expect_eq(reduce("max_abs", 5, c, x), 5);
  cr_expect_eq(reduce("max", 5, c, x), 2);
  cr_expect_eq(reduce("min", 5, c, x), -5);
  cr_expect_eq(reduce("mean", 5, c, x), -2.0 / 3, "(2 - 5 + 1) / 3, not / 5");
  cr_expect_eq(reduce("mean_abs", 5, c, x), 8.0 / 3);
  cr_expect_eq(reduce("argmax_abs", 5, c, x), 2, "the coordinate of -5");
  const double line[] = {1, NAN, 5, 7, NAN}; /* 1 + 2c where defined */
  cr_expect_float_eq(reduce("slope", 5, c, line), 2, 1e-14);
  const double h[] = {0.4, 0.2, 0.1, 0.05}, sq[] = {0.16, NAN, 0.01, 0.0025};
  cr_expect_float_eq(reduce("loglog_slope", 4, h, sq), 2, 1e-12);
  const double fin[] = {0.16, 0.04, 0.01, NAN}; /* the finest left: 0.1 and 0.2 */
  cr_expect_float_eq(reduce("finest_order", 4, h, fin), 2, 1e-12);
  const double none[] = {NAN, NAN};
  cr_expect(isnan(reduce("max_abs", 2, c, none)) && isnan(reduce("mean", 2, c, none)) &&
            isnan(reduce("slope", 2, c, none)));
  cr_expect(isnan(reduce("first", 5, c, x)), "first does not skip: x[0] is NaN");
}

Test(report, reduce_max_step_wraps_by_the_period) {
  const double c[] = {0, 1, 2}, x[] = {3.0, -3.0, -2.5};
  cr_expect_float_eq(nh_reduce_apply(NH_REDUCE_MAX_STEP, 3, c, x, 0), 6, 1e-14);
  /* mod 2 pi: -3 - 3 = -6 is 2 pi - 6 = 0.2832; the next step is 0.5 */
  cr_expect_float_eq(nh_reduce_apply(NH_REDUCE_MAX_STEP, 3, c, x, 2 * 3.14159265358979323846), 0.5, 1e-14);
}

/* ---- end to end -------------------------------------------------------------------------------- */

static char dir[64];

static void make_dir(void) {
  snprintf(dir, sizeof dir, "/tmp/nhbench-rep-XXXXXX");
  cr_assert(mkdtemp(dir), "mkdtemp");
}

static void remove_dir(void) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  cr_expect_eq(system(cmd), 0);
}

static void put(const char *name, const char *text) {
  char path[256];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "w");
  cr_assert(f, "cannot write %s", path);
  fputs(text, f);
  fclose(f);
}

/* The whole of DIR/NAME (or of an absolute NAME) in buf; 0, or -1 if it cannot be read. */
static int slurp(const char *name, char *buf, size_t len) {
  char path[512];
  if (name[0] == '/') snprintf(path, sizeof path, "%s", name);
  else snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  size_t n = fread(buf, 1, len - 1, f);
  buf[n] = '\0';
  fclose(f);
  return 0;
}

static int exists(const char *name) {
  char path[512];
  struct stat st;
  snprintf(path, sizeof path, "%s/%s", dir, name);
  return stat(path, &st) == 0;
}

typedef struct {
  int rc;
  char out[16384], err[16384];
} run_result;

/* Runs `cd DIR && nhbench ARGS`, stdout and stderr apart. */
static run_result *nhb(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static run_result *nhb(const char *fmt, ...) {
  static run_result r;
  char args[2048], cmd[4096];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(args, sizeof args, fmt, ap);
  va_end(ap);
  snprintf(cmd, sizeof cmd, "cd '%s' && %s %s >.stdout 2>.stderr", dir, NHBENCH_EXE, args);
  int status = system(cmd);
  r.rc = status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (slurp(".stdout", r.out, sizeof r.out)) r.out[0] = '\0';
  if (slurp(".stderr", r.err, sizeof r.err)) r.err[0] = '\0';
  char p[256];
  snprintf(p, sizeof p, "%s/.stdout", dir);
  remove(p);
  snprintf(p, sizeof p, "%s/.stderr", dir);
  remove(p);
  return &r;
}

/* The particle (Fig. 1 IC of spec/newmark.md) as a trajectory and a convergence study, in DIR. */
static void write_results(void) {
  put("traj.cfg", "study = \"trajectory\"; system = \"particle\"; initial = \"newmark\"; T = 1.0; h = 0.1;\n"
                  "observables = [\"energy\", \"energy_error\", \"constraint_residual\"];\n"
                  "methods = [\"rk4\", \"nh_newmark(alpha=0.5)\"];\n");
  put("conv.cfg", "study = \"convergence\"; system = \"particle\"; initial = \"newmark\"; T = 1.0; h0 = 0.1;\n"
                  "halvings = 3; methods = [\"rk4\", \"nh_newmark(alpha=0.5)\"];\n");
  run_result *r = nhb("run traj.cfg -o traj.h5");
  cr_assert_eq(r->rc, 0, "nhbench run traj.cfg: %s", r->err);
  r = nhb("run conv.cfg -o conv.h5");
  cr_assert_eq(r->rc, 0, "nhbench run conv.cfg: %s", r->err);
}

static void setup_results(void) {
  make_dir();
  write_results();
}

#define MAXF TEST_CSV_MAX_FIELDS
#define csv_record test_csv_record

/* The rows of tests/data/report/quick.claims in order: verdict and measured value (NAN: empty;
 * INFINITY: a value, not known here to all digits). */
static const struct {
  const char *item, *quantity_start, *verdict;
  double measured;
} quick_rows[] = {
    {"Q1", "observed order of rk4", "pass", INFINITY},
    {"Q1", "order of rk4 over all h (loglog slope of err) claimed as 2", "fail", INFINITY},
    {"Q1", "observed order of nh_newmark", "pass", INFINITY},
    {"Q1", "err of nh_newmark at h = 0.1", "shown", INFINITY}, /* a value without a claim */
    {"Q1", "err of nh_newmark at h = 0.05, below 0.3", "pass", INFINITY},
    {"Q1", "|err| of nh_newmark at h = 0.05, below 0.2", "fail", INFINITY},
    {"Q1", "err(0.05) / err(0.1) of nh_newmark: 2^-2", "pass", INFINITY},
    {"Q1", "err(0.05) / err(0.1) of nh_newmark read as 2^-4", "fail", INFINITY},
    {"Q1", "finest order of rk4", "pass", INFINITY},
    {"Q2", "E(0), \"Fig. 1\" IC, rk4", "pass", 1.5},
    {"Q2", "E(0) > 3/2", "fail", 1.5},
    {"Q2", "E(0) of nh_newmark equals", "pass", 1.5},
    {"Q2", "max |mu(q).v| of nh_newmark", "pass", INFINITY},
    {"Q2", "max |energy error| of nh_newmark", "fail", INFINITY},
    {"Q2", "steps of rk4: T/h", "pass", 10},
    {"Q2", "steps of nh_newmark per steps of rk4", "pass", 1},
    {"Q2", "E(1) of rk4, measured only", "shown", INFINITY},
    {"Q2", "declared not verified", "not-verified", NAN},
    {"Q2", "a results file that is not there", "not-verified", NAN},
    {"Q2", "a method the file does not hold", "not-verified", NAN},
    {"Q2", "E(0) against a row that was not measured", "not-verified", 1.5},
};
#define NQUICK ((int)(sizeof quick_rows / sizeof *quick_rows))

Test(report, end_to_end_claims_csv_verdicts, .init = setup_results, .fini = remove_dir, .timeout = 60) {
  run_result *r = nhb("report %s -r . -o .", QUICK);
  cr_assert_eq(r->rc, 0, "exit %d: %s", r->rc, r->err);
  cr_expect(strstr(r->err, "10 pass, 5 fail, 4 not-verified, 2 shown"), "counts: %s", r->err);
  static char csv[65536];
  cr_assert_eq(slurp("claims.csv", csv, sizeof csv), 0, "no claims.csv");
  const char *p = csv;
  char f[MAXF][512];
  cr_assert_eq(strncmp(csv, "spec,item,quantity,expected,measured,verdict\n", 45), 0, "header: %.80s", csv);
  cr_assert_eq(csv_record(&p, f), 6);
  for (int i = 0; i < NQUICK; i++) {
    int n = csv_record(&p, f);
    cr_assert_eq(n, 6, "row %d has %d fields", i, n);
    cr_expect_str_eq(f[0], "quick", "row %d", i);
    cr_expect_str_eq(f[1], quick_rows[i].item, "row %d", i);
    cr_expect(strncmp(f[2], quick_rows[i].quantity_start, strlen(quick_rows[i].quantity_start)) == 0,
              "row %d quantity '%s'", i, f[2]);
    cr_expect_str_eq(f[5], quick_rows[i].verdict, "row %d (%s)", i, f[2]);
    double want = quick_rows[i].measured;
    if (isnan(want)) {
      cr_expect_str_empty(f[4], "row %d (%s): measured '%s' should be empty", i, f[2], f[4]);
      continue;
    }
    cr_expect_str_not_empty(f[4], "row %d (%s): no measured value", i, f[2]);
    char *end, again[64];
    double m = strtod(f[4], &end);
    snprintf(again, sizeof again, "%.10g", m);
    cr_expect(*end == '\0' && strcmp(again, f[4]) == 0, "row %d: '%s' is not in %%.10g form", i, f[4]);
    if (isfinite(want)) cr_expect_eq(m, want, "row %d (%s): measured %s, want %g", i, f[2], f[4], want);
  }
  cr_expect_eq(csv_record(&p, f), -1, "rows beyond the claims file: %s", p);
  /* quoting: a quantity with a comma and quotes, an expectation with a comma */
  cr_expect(strstr(csv, "\nquick,Q2,\"E(0), \"\"Fig. 1\"\" IC, rk4\",~ 1.5 rel 1e-15,1.5,pass\n"), "%s", csv);
  cr_expect(strstr(csv, "\nquick,Q1,observed order of rk4,\"in [3.85, 4.15]\","), "%s", csv);
}

/* The numbers behind the verdicts, each from its own argument. */
Test(report, end_to_end_measured_values, .init = setup_results, .fini = remove_dir, .timeout = 60) {
  run_result *r = nhb("report %s -r . -o .", QUICK);
  cr_assert_eq(r->rc, 0, "%s", r->err);
  static char csv[65536];
  cr_assert_eq(slurp("claims.csv", csv, sizeof csv), 0);
  const char *p = csv;
  char f[MAXF][512];
  double m[NQUICK];
  csv_record(&p, f);
  for (int i = 0; i < NQUICK; i++) {
    cr_assert_eq(csv_record(&p, f), 6);
    m[i] = f[4][0] ? strtod(f[4], NULL) : NAN;
  }
  cr_expect(fabs(m[0] - 4) < 0.15, "rk4 order %g", m[0]);
  cr_expect(fabs(m[2] - 2) < 0.05, "nh_newmark order %g", m[2]);
  cr_expect(m[3] > 1e-5 && m[3] < 1e-2, "nh_newmark err at h = 0.1: %g (order 2, C h^2)", m[3]);
  cr_expect(fabs(m[6] - 0.25) < 0.01, "err ratio 2^-2: %g", m[6]);
  cr_expect_float_eq(m[6], m[4] / m[3], 1e-9, "the per row is the quotient of the two err rows");
  cr_expect(m[12] <= 1e-14, "|mu.v| of nh_newmark %g", m[12]);
  cr_expect(m[13] > 1e-5, "energy error of nh_newmark at h = 0.1 is O(h^2): %g", m[13]);
  cr_expect(fabs(m[16] - 1.5) < 1e-4 && m[16] != 1.5, "rk4 E(1) near but not exactly 3/2: %.17g", m[16]);
}

Test(report, end_to_end_report_md, .init = setup_results, .fini = remove_dir, .timeout = 60) {
  run_result *r = nhb("report %s -r . -o .", QUICK);
  cr_assert_eq(r->rc, 0, "%s", r->err);
  static char md[131072];
  cr_assert_eq(slurp("REPORT.md", md, sizeof md), 0);
  cr_expect(strstr(md, "| spec | items | pass | fail | not-verified | shown | rows (pass / fail / not-verified / shown) |\n"),
            "%s", md);
  /* both items fail (each has a failing row); rows 10 / 5 / 4 / 2 */
  cr_expect(strstr(md, "| quick | 2 | 0 | 2 | 0 | 0 | 10 / 5 / 4 / 2 |\n"), "summary row:\n%.2000s", md);
  cr_expect(strstr(md, "- **Q1** — no cause given in the claims file\n"), "a failing item without a cause:\n%.3000s", md);
  cr_expect(strstr(md, "## quick — Quick claims for the report tests"), "spec heading");
  cr_expect(strstr(md, "### Q1 [test; orders] — fail\n"), "Q1 heading");
  cr_expect(strstr(md, "### Q2 [test; trajectory] — fail\n"), "Q2 heading");
  cr_expect(strstr(md, "**Finding.** Rows that cannot be verified say why."), "note");
  cr_expect(strstr(md, "| max \\|mu(q).v\\| of nh_newmark |"), "a '|' in a cell is escaped");
  cr_expect(strstr(md, "| not-verified | nothing measures it |"), "declared reason");
  cr_expect(strstr(md, "nowhere.h5 is missing"), "missing file reason");
  cr_expect(strstr(md, "no method 'nh_newmark(alpha=1)'"), "unknown method reason");
  cr_expect(strstr(md, "| **fail** |"), "a failing row is marked");
  cr_expect(strstr(md, "referenced value is NaN"), "a reference to an unmeasured row");
  cr_expect(strstr(md, "@nm_err_h1 = 0.0009244"), "the referenced value shown");
}

Test(report, end_to_end_strict_exit_status, .init = setup_results, .fini = remove_dir, .timeout = 60) {
  run_result *r = nhb("report --strict %s -r . -o .", QUICK);
  cr_expect_eq(r->rc, 1, "--strict with failing rows: exit %d", r->rc);
  cr_expect(exists("REPORT.md") && exists("claims.csv"), "--strict still writes the report");
  r = nhb("report -s %s -r . -o .", QUICK);
  cr_expect_eq(r->rc, 1);
  static char text[65536], pass_only[65536];
  cr_assert_eq(slurp(QUICK, text, sizeof text), 0);
  /* the control: the same claims with each failing expectation replaced by one that holds */
  snprintf(pass_only, sizeof pass_only, "%s", text);
  static const struct {
    const char *from, *to;
  } fixes[] = {{"reduce = \"loglog_slope\";\n        expect = \"in [1.9, 2.1]\"",
                "reduce = \"loglog_slope\";\n        expect = \"in [3.85, 4.15]\""},
               {"< 0.2 * @nm_err_h1", "< 0.26 * @nm_err_h1"},
               {"~ 0.0625 rel 0.05", "~ 0.25 rel 0.02"},
               {"expect = \"> 1.5\"", "expect = \">= 1.5\""},
               {"reduce = \"max_abs\"; expect = \"<= 1e-12\"; },\n      { id = \"steps\"",
                "reduce = \"max_abs\"; expect = \"<= 1e-2\"; },\n      { id = \"steps\""}};
  for (size_t i = 0; i < sizeof fixes / sizeof *fixes; i++) {
    char *at = strstr(pass_only, fixes[i].from);
    cr_assert(at, "fix %zu not found", i);
    static char tail[65536];
    snprintf(tail, sizeof tail, "%s", at + strlen(fixes[i].from));
    snprintf(at, sizeof pass_only - (size_t)(at - pass_only), "%s%s", fixes[i].to, tail);
  }
  put("pass.claims", pass_only);
  r = nhb("report --strict pass.claims -r . -o .");
  cr_expect_eq(r->rc, 0, "--strict, no failing row: exit %d: %s", r->rc, r->err);
  cr_expect(strstr(r->err, "15 pass, 0 fail, 4 not-verified, 2 shown"), "%s", r->err);
  r = nhb("report %s -r . -o .", QUICK);
  cr_expect_eq(r->rc, 0, "without --strict failing rows exit 0");
}

/* ---- errors -------------------------------------------------------------------------------------- */

static const char good_row[] = "{ quantity = \"q\"; verdict = \"not-verified\"; reason = \"r\"; }";

/* A claims file with BAD as line 5 (a row of item 1), rows of good_row around it. */
static void put_bad(const char *name, const char *bad) {
  char text[4096];
  snprintf(text, sizeof text,
           "spec = \"bad\";\n"                                    /* 1 */
           "items = (\n"                                          /* 2 */
           "  { item = \"B1\"; claim = \"c\"; rows = (\n"         /* 3 */
           "    { id = \"a\"; quantity = \"q\"; file = \"traj\"; data = \"d\"; expect = \"< 1\"; },\n" /* 4 */
           "    %s\n"                                             /* 5 */
           "  ); }\n"                                             /* 6 */
           ");\n",
           bad);
  put(name, text);
}

static const struct {
  const char *row, *message;
} bad_rows[] = {
    {"{ quantity = \"q\"; colour = \"red\"; verdict = \"not-verified\"; reason = \"r\"; }", "unknown setting 'colour'"},
    {"{ quantity = \"q\"; file = \"traj\"; data = \"d\"; expect = \"in [2, 1]\"; }", "'in [2, 1]'"},
    {"{ quantity = \"q\"; file = \"traj\"; data = \"d\"; expect = \"=> 3\"; }", "'=> 3'"},
    {"{ quantity = \"q\"; verdict = \"pass\"; reason = \"by hand\"; }", "verdict 'pass'"},
};

Test(report, bad_claims_exit_2_naming_file_and_line, .init = make_dir, .fini = remove_dir) {
  for (size_t i = 0; i < sizeof bad_rows / sizeof *bad_rows; i++) {
    put_bad("bad.claims", bad_rows[i].row);
    run_result *r = nhb("report bad.claims -r . -o .");
    cr_expect_eq(r->rc, 2, "case %zu: exit %d", i, r->rc);
    cr_expect(strstr(r->err, "bad.claims:5: "), "case %zu: no bad.claims:5: in '%s'", i, r->err);
    cr_expect(strstr(r->err, bad_rows[i].message), "case %zu: '%s' lacks '%s'", i, r->err, bad_rows[i].message);
    cr_expect(!exists("REPORT.md") && !exists("claims.csv"), "case %zu wrote a report", i);
  }
  /* the control: the same file with a good line 5 is accepted */
  put_bad("good.claims", good_row);
  run_result *r = nhb("report good.claims -r . -o .");
  cr_expect_eq(r->rc, 0, "%s", r->err);
  cr_expect(strstr(r->err, "0 pass, 0 fail, 2 not-verified, 0 shown"), "%s", r->err);
}

/* An item's figures are linked from REPORT.md in the folder --figures names (relative to the report),
 * "figures" when it is not given. */
Test(report, figures_linked_in_the_folder_given, .init = make_dir, .fini = remove_dir) {
  put("fig.claims", "spec = \"fig\";\nitems = (\n  { item = \"F1\"; claim = \"c\"; figures = [\"fig_a\"];\n"
                    "    rows = ( { quantity = \"q\"; verdict = \"not-verified\"; reason = \"r\"; } ); }\n);\n");
  run_result *r = nhb("report fig.claims -r . -o . --figures plots/paper");
  cr_assert_eq(r->rc, 0, "%s", r->err);
  char md[8192];
  cr_assert_eq(slurp("REPORT.md", md, sizeof md), 0);
  cr_expect(strstr(md, "![fig_a](plots/paper/fig_a.png) ([PDF](plots/paper/fig_a.pdf))"), "%s", md);
  r = nhb("report fig.claims -r . -o . -f shown");
  cr_assert_eq(r->rc, 0, "%s", r->err);
  cr_assert_eq(slurp("REPORT.md", md, sizeof md), 0);
  cr_expect(strstr(md, "![fig_a](shown/fig_a.png)"), "-f: %s", md);
  r = nhb("report fig.claims -r . -o .");
  cr_assert_eq(r->rc, 0, "%s", r->err);
  cr_assert_eq(slurp("REPORT.md", md, sizeof md), 0);
  cr_expect(strstr(md, "![fig_a](figures/fig_a.png) ([PDF](figures/fig_a.pdf))"), "the default: %s", md);
}

/* Duplicate ids and references to no row are found after loading: the message names the file and
 * the id, and exit is 2. */
Test(report, bad_ids_exit_2, .init = make_dir, .fini = remove_dir) {
  put_bad("dup.claims", "{ id = \"a\"; quantity = \"q2\"; file = \"traj\"; data = \"d\"; expect = \"< 1\"; }");
  run_result *r = nhb("report dup.claims -r . -o .");
  cr_expect_eq(r->rc, 2);
  cr_expect(strstr(r->err, "dup.claims") && strstr(r->err, "'a' is used twice"), "%s", r->err);
  put_bad("ref.claims", "{ id = \"b\"; quantity = \"q2\"; file = \"traj\"; data = \"d\"; expect = \"< 2 * @nobody\"; }");
  r = nhb("report ref.claims -r . -o .");
  cr_expect_eq(r->rc, 2);
  cr_expect(strstr(r->err, "ref.claims") && strstr(r->err, "'nobody'"), "%s", r->err);
  put_bad("ref1.claims", "{ id = \"b\"; quantity = \"q2\"; file = \"traj\"; data = \"d\"; expect = \"< 2 * @z\"; }");
  r = nhb("report ref1.claims -r . -o .");
  cr_expect_eq(r->rc, 2, "a one-letter id naming no row: %s", r->err);
  cr_expect(strstr(r->err, "ref1.claims") && strstr(r->err, "names no row 'z'"), "%s", r->err);
  /* the control: distinct ids and a reference to an existing row */
  put_bad("ok.claims", "{ id = \"b\"; quantity = \"q2\"; file = \"traj\"; data = \"d\"; expect = \"< 2 * @a\"; }");
  r = nhb("report ok.claims -r . -o .");
  cr_expect_eq(r->rc, 0, "%s", r->err);
}

/* A duplicate row id and an @id naming no row are reported at the row's line, as every load error. */
Test(report, bad_ids_name_the_line) {
  make_dir();
  put_bad("dup.claims", "{ id = \"a\"; quantity = \"q2\"; file = \"traj\"; data = \"d\"; expect = \"< 1\"; }");
  run_result *r = nhb("report dup.claims -r . -o .");
  cr_expect_eq(r->rc, 2);
  cr_expect(strstr(r->err, "dup.claims:5:"), "%s", r->err);
  put_bad("ref.claims", "{ id = \"b\"; quantity = \"q2\"; file = \"traj\"; data = \"d\"; expect = \"< 2 * @nobody\"; }");
  r = nhb("report ref.claims -r . -o .");
  cr_expect_eq(r->rc, 2);
  cr_expect(strstr(r->err, "ref.claims:5:"), "%s", r->err);
  remove_dir();
}

Test(report, missing_output_directory_exits_2_and_writes_nothing, .init = setup_results, .fini = remove_dir,
     .timeout = 60) {
  run_result *r = nhb("report %s -r . -o no/such/dir", QUICK);
  cr_expect_eq(r->rc, 2, "exit %d", r->rc);
  cr_expect(strstr(r->err, "nhbench report: cannot write no/such/dir/claims.csv: there is no directory no/such/dir\n"),
            "%s", r->err);
  cr_expect(!exists("REPORT.md") && !exists("claims.csv"), "written into the results or working directory");
  cr_expect(!exists("no"), "the output directory was created");
  static char ls[4096];
  char cmd[256];
  snprintf(cmd, sizeof cmd, "ls -A '%s' > '%s.ls'", dir, dir);
  cr_assert_eq(system(cmd), 0);
  snprintf(cmd, sizeof cmd, "%s.ls", dir);
  cr_assert_eq(slurp(cmd, ls, sizeof ls), 0);
  remove(cmd);
  cr_expect(!strstr(ls, "tmp-") && !strstr(ls, ".md"), "stray files: %s", ls);
  /* the control: an existing output directory */
  cr_assert_eq(mkdir(strcat(strcpy(cmd, dir), "/out"), 0755), 0);
  r = nhb("report %s -r . -o out", QUICK);
  cr_expect_eq(r->rc, 0, "%s", r->err);
  cr_expect(exists("out/REPORT.md") && exists("out/claims.csv"));
}

Test(report, bad_claims_leave_the_previous_report, .init = setup_results, .fini = remove_dir, .timeout = 60) {
  run_result *r = nhb("report %s -r . -o .", QUICK);
  cr_assert_eq(r->rc, 0, "%s", r->err);
  static char md0[131072], csv0[65536], md1[131072], csv1[65536];
  cr_assert_eq(slurp("REPORT.md", md0, sizeof md0), 0);
  cr_assert_eq(slurp("claims.csv", csv0, sizeof csv0), 0);
  put_bad("bad.claims", "{ quantity = \"q\"; file = \"traj\"; data = \"d\"; expect = \"~ 1 rel -1\"; }");
  /* alone, and after a good claims file in the same call */
  r = nhb("report bad.claims -r . -o .");
  cr_expect_eq(r->rc, 2);
  cr_expect(strstr(r->err, "bad.claims:5: "), "%s", r->err);
  r = nhb("report %s bad.claims -r . -o .", QUICK);
  cr_expect_eq(r->rc, 2);
  cr_assert_eq(slurp("REPORT.md", md1, sizeof md1), 0);
  cr_assert_eq(slurp("claims.csv", csv1, sizeof csv1), 0);
  cr_expect_str_eq(md1, md0, "REPORT.md changed");
  cr_expect_str_eq(csv1, csv0, "claims.csv changed");
  /* the control: a good claims file does replace it */
  put_bad("good.claims", good_row);
  r = nhb("report good.claims -r . -o .");
  cr_expect_eq(r->rc, 0, "%s", r->err);
  cr_assert_eq(slurp("claims.csv", csv1, sizeof csv1), 0);
  cr_expect(strcmp(csv1, csv0) != 0 && strstr(csv1, "\nbad,B1,"), "%s", csv1);
}
