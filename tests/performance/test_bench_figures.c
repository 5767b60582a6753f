/* The figures nhbench_bench --quick prints (bench/performance/bench.c), recomputed here: the step-cost tables'
 * rows against where each method applies and the work of 1000 steps this test takes itself, every
 * printed ratio against what the printed timings allow, and the LU, sampling and GSL driver rows
 * (issue 16). */
#include <criterion/criterion.h>
#include <hdf5.h>
#include <hdf5_hl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/claims/report.h"
#include "results/results.h"
#include "studies/observables.h"
#include "studies/study.h"
#include "tests/helpers.h"

static char out[1 << 18];

/* ---- nhbench_bench --quick: the printed figures recomputed ---------------------------------- */


/* nhbench_bench ARGS (from the source directory), stdout into out; its exit status. */
static int run_bench(const char *args) {
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "cd %s && %s %s 2>/dev/null", NHBENCH_SOURCE_DIR, NHBENCH_BENCH_EXE, args);
  return test_run_command(cmd, out, sizeof out);
}

/* The line after the one that ends with `tail` (NULL if none). */
static const char *after_line(const char *text, const char *tail) {
  const char *p = strstr(text, tail);
  return p ? p + strlen(tail) : NULL;
}

/* Two figures printed rounded (a to ra, b to rb, absolute half-units) and their printed ratio
 * (rounded to rr): is the ratio a/b as far as the rounding lets one tell? */
static int ratio_agrees(double ratio, double rr, double a, double ra, double b, double rb) {
  if (!(a > 0 && b > rb && ratio >= 0)) return 0; /* 0.00 when a preempted run made b large */
  const double lo = (a - ra) / (b + rb), hi = (a + ra) / (b - rb);
  return ratio >= lo * (1 - 1e-12) - rr && ratio <= hi * (1 + 1e-12) + rr;
}

/* The step-cost tables of nhbench_bench --quick: the four systems at their step sizes (the
 * header says so), one row per method, "n/a" exactly where nh_method_applies refuses the method,
 * and the Newton iterations, right-hand sides and Jacobians per step what 1000 steps of the method
 * from the system's default state cost when this test steps them itself (with the method's init,
 * as the bench times it); "x rk4" the ratio of each row's ns/step to rk4's (1.00 for rk4). The
 * LU table lists the sizes 2, 4, 7, 8, 12, 16, 24 with GSL/nhb the ratio of the two timings; the
 * sampling table its five variants, each ratio against the first, the rows of observables each
 * wrote (1000/K + 1) and one end state for all (dE); the GSL driver rows their
 * ratios to the rk4 rows of the floors table. */
Test(bench_figures, bench_quick_figures_recomputed, .timeout = 240) {
  cr_assert_eq(run_bench("--quick --only lu,steps,floors,sampling"), 0, "%s", out);
  static const struct {
    const char *name;
    double h;
  } systems[] = {{"chaotic_particle", 0.2}, {"cvt", 0.05}, {"falling_disk", 0.01}, {"chaplygin_sleigh", 0.1}};
  const long steps = 1000;
  int applicable = 0, refused = 0;
  double sampled_method_ns = NAN; /* the sampling table's method and system, in the step-cost table */
  for (int s = 0; s < 4; s++) {
    char head[256];
    snprintf(head, sizeof head, "step cost, %s, h = %g, %ld steps each, one thread\n", systems[s].name, systems[s].h,
             steps);
    const char *line = after_line(out, head);
    cr_assert(line, "no table '%s':\n%s", head, out);
    line = strchr(line, '\n') + 1; /* the column names */
    nh_system sys = test_system(systems[s].name, NULL);
    int rows = 0;
    double rk4_ns = -1;
    for (; *line && *line != '\n'; line = strchr(line, '\n') + 1, rows++) {
      double ns, x, newton, rhs, jac;
      char name[128];
      int pos = 0;
      const int numeric = sscanf(line, "%lf %lf %lf %lf %lf %n", &ns, &x, &newton, &rhs, &jac, &pos) == 5;
      if (numeric) cr_assert_eq(sscanf(line + pos, "%127s", name), 1);
      else cr_assert_eq(sscanf(line, " n/a %127s", name), 1, "row: %.200s", line);
      nh_method *m = test_method(name);
      char err[512];
      const int applies = nh_method_applies(m, &sys, err, sizeof err) == 0;
      cr_expect_eq(numeric, applies, "%s on %s: %s", name, systems[s].name, numeric ? "applies not" : "refused");
      if (numeric && applies) {
        applicable++;
        nh_state st;
        nh_system_default_state(&sys, &st);
        nh_cost cost = {0};
        cr_assert_eq(nh_method_init(m, &sys, &st, systems[s].h, &cost), NH_STEP_OK);
        cr_assert_eq(nh_integrate(m, &sys, &st, steps, systems[s].h, &cost, NULL), NH_STEP_OK);
        const double want[3] = {(double)cost.newton_iterations / steps, (double)cost.rhs_evals / steps,
                                (double)cost.jacobian_evals / steps};
        const double got[3] = {newton, rhs, jac};
        for (int k = 0; k < 3; k++)
          cr_expect(fabs(got[k] - want[k]) <= 0.005 + 1e-12, "%s on %s, column %d: %g printed, %g by stepping", name,
                    systems[s].name, k, got[k], want[k]);
        if (s == 0 && strcmp(name, "nh_newmark(beta=0.1,beta2=0.1,alpha=0.5)") == 0) sampled_method_ns = ns;
        if (rows == 0) {
          cr_expect_str_eq(name, "rk4", "rk4 first: the ratio's base");
          cr_expect_eq(x, 1.0, "rk4 against itself");
          rk4_ns = ns;
        } else {
          cr_expect(ratio_agrees(x, 0.005, ns, 0.5, rk4_ns, 0.5), "%s on %s: x rk4 %g of %g / %g ns", name,
                    systems[s].name, x, ns, rk4_ns);
        }
      }
      refused += !applies;
      nh_method_free(m);
    }
    cr_expect_eq(rows, 14, "%s: %d methods", systems[s].name, rows);
  }
  cr_expect(applicable > 30 && refused > 5, "%d rows measured, %d refused", applicable, refused);
  /* LU */
  const char *lu = after_line(out, "max rel diff   nhb backward\n");
  cr_assert(lu, "no LU table:\n%s", out);
  static const int sizes[] = {2, 4, 7, 8, 12, 16, 24};
  for (int k = 0; k < 7; k++, lu = strchr(lu, '\n') + 1) {
    int m;
    double g, h, ratio, diff, backward;
    cr_assert_eq(sscanf(lu, "%d %lf %lf %lf %lf %lf", &m, &g, &h, &ratio, &diff, &backward), 6, "%.200s", lu);
    cr_expect_eq(m, sizes[k]);
    cr_expect(ratio_agrees(ratio, 0.005, g, 0.5, h, 0.5), "m = %d: GSL/nhb %g of %g / %g", m, ratio, g, h);
  }
  /* sampling */
  const char *sm = after_line(out, "observables sampling, nh_newmark(0.1,0.1,1/2) on chaotic_particle, h = 0.2, 1000 steps, "
                                   "median of 5 (samples: rows of observables written; dE: E - E0 at the end, the "
                                   "same for every variant):\n");
  cr_assert(sm, "no sampling table:\n%s", out);
  static const char *const variants[] = {"nh_integrate (no sampling)", "sampled run, no observables, K = 10",
                                         "energy_error every step", "energy_error every 10 steps",
                                         "4 observables every step"};
  /* 1000 steps sampled every K steps: 1000/K + 1 rows, t = 0 included; none without observables. */
  static const int rows[] = {0, 0, 1001, 101, 1001};
  double ns0 = -1, dE0 = NAN;
  for (int v = 0; v < 5; v++, sm = strchr(sm, '\n') + 1) {
    double ns, ratio, dE;
    int pos = 0, samples;
    cr_assert_eq(sscanf(sm, "%lf ns/step %lf x %d samples  dE %lf %n", &ns, &ratio, &samples, &dE, &pos), 4, "%.200s",
                 sm);
    cr_expect(strncmp(sm + pos, variants[v], strlen(variants[v])) == 0 && sm[pos + strlen(variants[v])] == '\n',
              "variant %d: %.100s", v, sm + pos);
    cr_expect_eq(samples, rows[v], "variant %d: %d rows", v, samples);
    if (v == 0) {
      ns0 = ns, dE0 = dE;
      cr_expect_eq(ratio, 1.0);
      /* The same 1000 steps as that row of the step-cost table, so the same unit: a units check
       * (seconds per step against per run is a factor 1000 either way), not a speed check, with
       * room for a loaded machine's noise in the two short timings. */
      cr_expect(ns / sampled_method_ns > 1.0 / 300 && ns / sampled_method_ns < 300,
                "ns/step %g here, %g in the step-cost table", ns, sampled_method_ns);
      cr_expect(dE != 0 && isfinite(dE), "the run's energy moved: %g", dE);
    } else {
      cr_expect(ratio_agrees(ratio, 0.0005, ns, 0.5, ns0, 0.5), "variant %d: %g x of %g / %g", v, ratio, ns, ns0);
      cr_expect_eq(dE, dE0, "variant %d ends at another state: dE %.17g, unsampled %.17g", v, dE, dE0);
    }
  }
  /* GSL drivers against the rk4 rows of the floors table */
  const char *fl = after_line(out, "state diff  method\n");
  cr_assert(fl);
  double hns, fns;
  cr_assert_eq(sscanf(fl, "%lf %lf", &hns, &fns), 2);
  for (int g = 0; g < 2; g++) {
    const char *name = g ? "GSL odeiv2 rk8pd driver (" : "GSL odeiv2 rk4 driver (";
    const char *row = strstr(out, name);
    cr_assert(row);
    while (row > out && row[-1] != '\n') row--;
    double ns, r1, r2;
    cr_assert_eq(sscanf(row, "%lf", &ns), 1);
    cr_assert_eq(sscanf(strstr(row, name) + strlen(name), "%lf x nhbench's rk4, %lf x the rk4 floor)", &r1, &r2), 2,
                 "%.200s", row);
    cr_expect(ratio_agrees(r1, 0.005, ns, 0.5, hns, 0.5), "%s: %g x of %g / %g", name, r1, ns, hns);
    cr_expect(ratio_agrees(r2, 0.005, ns, 0.5, fns, 0.5), "%s: %g x of %g / %g", name, r2, ns, fns);
  }
}
