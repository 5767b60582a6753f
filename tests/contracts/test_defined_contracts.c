/* The order matrix and constraint preservation on systems written as text (issue 50 item 4,
 * "Trust"; the finite-difference and no-allocation contracts are in tests/systems/test_defined.c).
 *
 * For each definition studies/systems/{particle,chaotic_particle,knife_edge,cvt}.sys, the order
 * matrix of tests/contracts/test_order_matrix.c (its `system` test) runs twice with the same spec:
 * once with `system = "NAME"` (the built-in system) and once with the definition included in its
 * place. The spec is written as test_order_matrix.c writes it: every base method of the registry
 * (no compositions, no tolerance-driven methods) with its default parameters that applies, T, h0 and
 * halvings from its settings table, expected orders the methods' claimed orders but for its
 * documented exceptions (write_spec follows that file's; the two tables are shared with it,
 * tests/contracts/order_matrix_specs.h). The composition matrix of that file (every table that
 * raises the order over every symmetric base, its steps, floor and tolerance 0.5) runs the same
 * way, a spec per table (the `*_compositions` tests). Then for every method:
 *  - the same expected order on both (the method's claim, nh_study's order_expected);
 *  - the definition's observed order meets test_order_matrix.c's rule: order_ok, i.e.
 *    |observed − expected| <= order_tolerance (the default 0.15);
 *  - the final states at T of every (method, h) agree to round-off (FINAL_TOL of the state's scale);
 *  - the definition's observed order equals the built-in's to within what the two references allow
 *    (ORDER_TOL = 1e-6, or the bound order_bound derives from the references' error estimates and
 *    FINAL_TOL where that is larger; see there);
 *  - if the method claims to keep the constraint (nh_method_preserves_constraint, as in
 *    test_order_matrix.c and test_order_table.c), the largest |mu(q).v + b| over every step of every
 *    step size (up to 160 steps at h = 0.00625) stays within 1e-12 on the definition, the bound of
 *    those tests.
 * The particle's and the knife edge's built-in runs measure errors against their exact solutions,
 * which a definition does not have: the definition's errors are against rk8pd. rk4's errors at the
 * finest steps come within a few hundred times the rk8pd reference's error, so its order may differ
 * by up to ~3e-4 (measured on the knife edge) and order_bound allows that (on the particle its bound
 * is infinite: an error there lies within the reference's error bound; rk4 is then held only to the
 * final states and to order_ok). Every other method agrees to 1e-9. Methods that apply to one side
 * only (the js_p* schemes on the particle: tests/systems/test_defined.c's verdict_differences) are
 * logged and left out of both runs.
 * Negative controls, tried on a scratch copy: the chaotic particle's potential 0.5 made
 * 0.5*(1 + 1e-9) fails the final-state check for every method and step; made 0.5*(1 + 1e-3) it fails
 * the order comparison (by 1.7e-5 beyond the tolerance; 1e-6 relative does not); the CVT's cos(xi)
 * times 1.001 likewise (3.6e-5); the residual check applied to the methods that do not claim
 * preservation (rk4, newmark, m11, nh_energy) fails with residuals 1e-10 to 4e-3.
 * The same perturbation 1e-9 of the chaotic particle fails the compositions' final states (423
 * failed checks). Where an error comes within the references' error (order 8 at the finest steps on
 * the particle and the knife edge, against their exact solutions and the definitions' rk8pd) the
 * bound is infinite: the logs show those differences (up to 2.7e-3) next to "tol inf".
 * The base methods (15 per system) and the 4 tables over 9 bases run on all four systems in about
 * 2.5 s. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, setenv */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "integrators/integrator.h"
#include "studies/study.h"
#include "tests/compile_cache.h"
#include "tests/helpers.h"

TEST_CACHE_SUITE(defined_contracts, "/tmp/nh-defcontracts");

#include "tests/contracts/order_matrix_specs.h"

/* The final states at T of each (method, h) on the definition and on the built-in system agree to
 * FINAL_TOL of the state's scale max(1, |(q, v)|_inf): tests/systems/test_defined.c's
 * EQUIVALENCE_TOL, "to round-off" (measured there: at most 1.4e-14 after 40 steps). */
#define FINAL_TOL 1e-12
/* The observed orders then differ only through the errors' perturbations: each error moves by at
 * most delta = |final-state difference| + the errors of the two references (0 for an exact
 * solution; rk8pd's adaptive steps follow round-off, so the two rk8pd references differ by up to
 * their estimated errors, which the bound doubles as a margin), and a least-squares slope of
 * log err over log h moves by at most sum_i |x_i - mean x| / sum_i (x_i - mean x)^2 times
 * max_i |log(1 ± delta_i/err_i)| (order_bound). ORDER_TOL is the least tolerance. */
#define ORDER_TOL 1e-6
#define REFERENCE_MARGIN 2.0
#define RESIDUAL_BOUND 1e-12

/* ---- specs ----------------------------------------------------------------------------------- */

/* The `system = ...` line of a spec: the built-in NAME, or the definition at path. */
static void system_line(char *out, size_t len, const char *name, const char *definition) {
  if (definition)
    snprintf(out, len, "system = {\n  @include \"%s\"\n};\n", definition);
  else
    snprintf(out, len, "system = \"%s\";\n", name);
}

/* The base matrix (table NULL) or the composition matrix of `table`, on the methods that apply to
 * both sys and also. */
static int write_matrix_spec(const char *path, const char *name, const char *system, const char *table,
                             const nh_system *sys, const nh_system *also) {
  return table ? write_composition_spec(path, name, system, table, sys, also)
               : write_base_spec(path, name, system, sys, also);
}

/* The definition at path, as a spec loads it (st->sys). */
static void load_definition(const char *path, nh_study *st) {
  char spec[256], text[1024], err[1024];
  snprintf(spec, sizeof spec, "%s/load.cfg", cache);
  snprintf(text, sizeof text,
           "study = \"trajectory\";\nsystem = {\n  @include \"%s\"\n};\nT = 1.0;\nh = [0.1];\n"
           "observables = [\"energy_error\"];\nmethods = [\"rk4\"];\n",
           path);
  test_write_file(spec, text);
  cr_assert_eq(nh_study_load(spec, NULL, 0, st, err, sizeof err), 0, "%s: %s", path, err);
  cr_assert(st->defined, "%s: not read as a definition", path);
  remove(spec);
}

typedef struct {
  nh_study st;
  nh_convergence_result r;
} matrix_run;

static void run_matrix(const char *spec, matrix_run *run) {
  char err[1024];
  cr_assert_eq(nh_study_load(spec, NULL, 0, &run->st, err, sizeof err), 0, "%s", err);
  cr_assert_eq(nh_run_convergence(&run->st, &run->r, err, sizeof err), 0, "%s", err);
}

static void free_matrix(matrix_run *run) {
  nh_convergence_result_free(&run->r);
  nh_study_free(&run->st);
}

/* max(1, |x|_inf) and |x - y|_2 over the 2n entries of a final (q, v). */
static double state_scale(int n2, const double *x) {
  double s = 1;
  for (int i = 0; i < n2; i++) s = fmax(s, fabs(x[i]));
  return s;
}

static double distance_2(int n2, const double *x, const double *y) {
  double s = 0;
  for (int i = 0; i < n2; i++) s += (x[i] - y[i]) * (x[i] - y[i]);
  return sqrt(s);
}

/* The largest change of method m's fitted order (run r, step sizes st->h) when each error err_i moves
 * by at most delta[i]: the fitted points are those nh_fit_order took (from fit_first, fit_count
 * consecutive in h); INFINITY where a delta reaches its error. */
static double order_bound(const nh_study *st, const nh_convergence_result *r, int m, const double *delta) {
  const int nh = st->nh, first = r->fit_first[m], count = r->fit_count[m];
  int idx[64], fitted[64];
  cr_assert(nh <= 64 && count >= 2 && first >= 0, "%s: fit of %d points", st->method_names[m], count);
  for (int i = 0; i < nh; i++) idx[i] = i;
  for (int i = 1; i < nh; i++)
    for (int j = i; j > 0 && st->h[idx[j]] < st->h[idx[j - 1]]; j--) {
      const int t = idx[j];
      idx[j] = idx[j - 1], idx[j - 1] = t;
    }
  int a = 0;
  while (idx[a] != first) a++;
  cr_assert(a + count <= nh);
  double mean = 0, sxx = 0, sabs = 0, dy = 0;
  for (int c = 0; c < count; c++) fitted[c] = idx[a + c], mean += log(st->h[fitted[c]]) / count;
  for (int c = 0; c < count; c++) {
    const int i = fitted[c];
    const double x = log(st->h[i]) - mean, e = r->err[(size_t)m * nh + i];
    sxx += x * x, sabs += fabs(x);
    if (!(delta[i] < e)) return INFINITY;
    dy = fmax(dy, -log1p(-delta[i] / e));
  }
  return sabs / sxx * dy;
}

/* Runs the matrix on the built-in NAME and on the definition at path, and checks every contract
 * above when `check`; returns the largest |observed order on the definition − on the built-in| over
 * the methods less its allowed tolerance (> 0: some order differs by more than it may), for the
 * negative control. */
static double compare_matrices(const char *name, const char *definition, const char *table, int check) {
  nh_study def;
  load_definition(definition, &def);
  nh_system builtin;
  cr_assert_eq(nh_system_init(&builtin, nh_system_type_find(name)), 0, "%s", name);
  char line[512], spec_b[256], spec_d[256];
  snprintf(spec_b, sizeof spec_b, "%s/builtin.cfg", cache);
  snprintf(spec_d, sizeof spec_d, "%s/defined.cfg", cache);
  system_line(line, sizeof line, name, NULL);
  const int count = write_matrix_spec(spec_b, name, line, table, &builtin, &def.sys);
  system_line(line, sizeof line, name, definition);
  cr_assert_eq(write_matrix_spec(spec_d, name, line, table, &def.sys, &builtin), count);
  cr_assert_geq(count, table ? 1 : 2, "%s: only %d methods apply", name, count);
  nh_study_free(&def);

  matrix_run b, d;
  run_matrix(spec_b, &b);
  run_matrix(spec_d, &d);
  cr_assert(d.st.defined, "%s: the matrix did not run on the definition", definition);
  cr_assert_eq(d.st.nmethods, b.st.nmethods);
  cr_assert_eq(d.st.nh, b.st.nh);
  const int nh = b.st.nh, n2 = 2 * b.st.sys.n;
  const double ref_err = REFERENCE_MARGIN * (b.r.reference.error + d.r.reference.error);
  if (check) cr_expect_str_eq(d.r.reference.kind, "rk8pd", "%s: reference %s", definition, d.r.reference.kind);
  double worst = -INFINITY, worst_diff = 0, worst_final = 0;
  int preserving = 0;
  for (int m = 0; m < b.st.nmethods; m++) {
    const char *method = b.st.method_names[m];
    double delta[64];
    cr_assert(nh <= 64);
    for (int i = 0; i < nh; i++) {
      const double *xb = b.r.final_state + ((size_t)m * nh + i) * n2, *xd = d.r.final_state + ((size_t)m * nh + i) * n2;
      const double scale = state_scale(n2, xb), dist = distance_2(n2, xb, xd);
      worst_final = fmax(worst_final, dist / scale);
      if (check)
        cr_expect_leq(dist, FINAL_TOL * scale, "%s: %s at h = %g: final states differ by %.3e of the state's scale",
                      name, method, b.st.h[i], dist / scale);
      delta[i] = FINAL_TOL * scale * sqrt(n2) + ref_err;
    }
    const double diff = fabs(d.r.order[m] - b.r.order[m]);
    const double tol = fmax(ORDER_TOL, order_bound(&b.st, &b.r, m, delta));
    worst = fmax(worst, isnan(diff) ? INFINITY : diff - tol);
    worst_diff = fmax(worst_diff, diff);
    if (!check) continue;
    cr_expect_str_eq(d.st.method_names[m], method);
    cr_expect_eq(d.st.order_expected[m], b.st.order_expected[m], "%s: %s expected %d, built-in %d", name, method,
                 d.st.order_expected[m], b.st.order_expected[m]);
    cr_expect(b.r.order_ok[m], "%s (built-in): %s observed order %.3f, expected %d", name, method, b.r.order[m],
              b.st.order_expected[m]);
    cr_expect(d.r.order_ok[m], "%s (defined): %s observed order %.3f, expected %d", name, method, d.r.order[m],
              d.st.order_expected[m]);
    cr_expect(d.r.fit_first[m] == b.r.fit_first[m] && d.r.fit_count[m] == b.r.fit_count[m],
              "%s: %s fits other step sizes", name, method);
    cr_expect(diff <= tol, "%s: %s observed order %.9f on the definition, %.9f on the built-in (|diff| %.3e > %.3e)",
              name, method, d.r.order[m], b.r.order[m], diff, tol);
    cr_log_info("%s: %-12s order %.6f, diff %.2e, tol %.2e", name, method, d.r.order[m], diff, tol);
    if (nh_method_preserves_constraint(d.st.methods[m])) {
      preserving++;
      for (int i = 0; i < nh; i++)
        cr_expect_leq(d.r.residual[(size_t)m * nh + i], RESIDUAL_BOUND,
                      "%s (defined): %s claims to preserve the constraint, residual %g at h = %g", name, method,
                      d.r.residual[(size_t)m * nh + i], d.st.h[i]);
    }
  }
  if (check) {
    cr_expect_gt(preserving, 0, "%s: no method claims to preserve the constraint", name);
    cr_log_info("%s: %d methods (%d preserving the constraint), reference %s / %s (errors %.1e / %.1e), largest "
                "order difference %.3e, final states %.3e",
                name, count, preserving, b.r.reference.kind, d.r.reference.kind, b.r.reference.error,
                d.r.reference.error, worst_diff, worst_final);
  }
  free_matrix(&b);
  free_matrix(&d);
  remove(spec_b);
  remove(spec_d);
  return worst;
}

#define DEFINITION(file) NHBENCH_SOURCE_DIR "/studies/systems/" file

/* The composition matrix: every table that raises the order, over every symmetric base. */
static void compare_compositions(const char *name, const char *definition) {
  int tables = 0;
  for (int i = 0; nh_integrator_types[i]; i++)
    if (nh_integrator_types[i]->takes_base && composition_order(nh_integrator_types[i]->name) > 2) {
      compare_matrices(name, definition, nh_integrator_types[i]->name, 1);
      tables++;
    }
  cr_assert_geq(tables, 4, "only %d composition tables", tables);
}

Test(defined_contracts, particle) { compare_matrices("particle", DEFINITION("particle.sys"), NULL, 1); }
Test(defined_contracts, chaotic_particle) {
  compare_matrices("chaotic_particle", DEFINITION("chaotic_particle.sys"), NULL, 1);
}
Test(defined_contracts, knife_edge) { compare_matrices("knife_edge", DEFINITION("knife_edge.sys"), NULL, 1); }
Test(defined_contracts, cvt) { compare_matrices("cvt", DEFINITION("cvt.sys"), NULL, 1); }

Test(defined_contracts, particle_compositions) { compare_compositions("particle", DEFINITION("particle.sys")); }
Test(defined_contracts, chaotic_particle_compositions) {
  compare_compositions("chaotic_particle", DEFINITION("chaotic_particle.sys"));
}
Test(defined_contracts, knife_edge_compositions) { compare_compositions("knife_edge", DEFINITION("knife_edge.sys")); }
Test(defined_contracts, cvt_compositions) { compare_compositions("cvt", DEFINITION("cvt.sys")); }
