/* The lane kernels of compiled definitions (systems/defined.c): the generated NAME_lanes functions
 * evaluate the scalar functions' expression texts at NH_LANES points, so that every lane's numbers
 * are the scalar path's bits. Checked through the public entries (nh_lanes_grad_potential, ...,
 * nh_lanes_acceleration) against the scalar functions lane by lane, bit for bit but for a NaN's
 * sign and payload (same() below), at groups of random points and at groups holding NaN,
 * infinities, values whose squares overflow, zeros of both signs and subnormals, on the four .sys
 * files and on two definitions written here that reach the parts those lack (an affine part, two
 * constraint rows, a variable mass, the functions of the grammar). Interpreted definitions have no
 * lane kernels (the fallbacks call the interpreted functions); a cached object without a lane
 * function is refused, naming it. Each test has its own cache of compiled objects
 * (NHBENCH_CACHE_DIR, a fresh mkdtemp directory removed afterwards). */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, setenv */
#include <criterion/criterion.h>
#include <errno.h>
#include <gsl/gsl_randist.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/native.h"
#include "studies/study.h"
#include "systems/defined.h"
#include "tests/compile_cache.h"
#include "tests/helpers.h"

TEST_CACHE_SUITE(defined_lanes, "/tmp/nh-defined-lanes");

/* ---- the definitions ----------------------------------------------------------------------------- */

static const char *const sys_files[] = {"particle.sys", "chaotic_particle.sys", "knife_edge.sys", "cvt.sys"};
#define NFILES (sizeof sys_files / sizeof *sys_files)

/* Unit mass, two constraint rows with an affine part, a potential reading every function of the
 * grammar: the acceleration lane kernel with a 2×2 Cholesky and the curvature's Db[v], the residual
 * with b. */
static nh_system_definition affine_definition(void) {
  static const char *const coords[] = {"x", "y", "z", "u"};
  static const char *const rows[] = {"1", "0", "y", "sin(u)", "0", "1", "-x*z", "sqrt(1 + x^2)"};
  nh_system_definition def = {.name = "dl_affine", .n = 4, .k = 2, .mass_identity = 1, .sample_box = 1};
  def.nparams = 1, def.param_names[0] = "eps", def.param_values[0] = 0.3;
  def.potential.text = "0.5*(x^2 + y^2 + z^2 + u^2) + eps*x^3*y + exp(-0.1*z^2)*cos(u) + log(2 + y^2) + "
                       "atan(x*u) + tanh(z)*sinh(0.2*y) + cosh(0.1*u) + asin(0.5*sin(x)) + acos(0.5*cos(y)) + "
                       "tan(0.3*z) + (1 + u^2)^1.5 + pi*(2 + x^2)^-2";
  for (int i = 0; i < 4; i++) def.coords[i] = coords[i];
  for (int i = 0; i < 8; i++) def.constraints[i].text = rows[i];
  def.affine[0].text = "eps*sin(x)*z";
  def.affine[1].text = "0.5*u^2";
  return def;
}

/* A variable mass and damping: no acceleration kernel, so nh_lanes_acceleration falls back while
 * the other lane kernels stay. */
static nh_system_definition variable_mass_definition(void) {
  nh_system_definition def = affine_definition();
  static const char *const mass[16] = {"1 + 0.1*y^2", "0",          "0", "0", "0", "2", "0.1*sin(x)", "0",
                                       "0",           "0.1*sin(x)", "1", "0", "0", "0", "0",          "exp(-0.1*z^2)"};
  def.name = "dl_variable_mass", def.mass_identity = 0;
  for (int i = 0; i < 16; i++) def.mass[i].text = mass[i];
  def.damping.text = "0.2";
  return def;
}

/* ---- the comparison ------------------------------------------------------------------------------ */

/* What the lane points are made of beyond uniform draws: NaN, infinities, values whose squares
 * and products overflow, zeros of both signs, subnormals. */
static const double specials[] = {NAN, -NAN, INFINITY, -INFINITY, 1e200, -1e300, 1.7e308, 0.0, -0.0, 4.9e-324, -1e-310};
#define NSPECIALS (sizeof specials / sizeof *specials)

/* Group g's points (n components per lane, lane layout): uniform in [-2, 2]; from the fourth group
 * on, each lane with one or two components replaced by specials. */
static void fill_group(int n, int g, gsl_rng *r, double *x) {
  for (int i = 0; i < n * NH_LANES; i++) x[i] = gsl_ran_flat(r, -2, 2);
  if (g < 3) return;
  for (int l = 0; l < NH_LANES; l++)
    for (int c = 0; c < 1 + (g + l) % 2; c++)
      x[gsl_rng_uniform_int(r, (unsigned long)n) * NH_LANES + l] = specials[gsl_rng_uniform_int(r, NSPECIALS)];
}

enum { BIG = NH_MAX_K * NH_MAX_N * NH_MAX_N * NH_LANES };

/* The same bits, or both NaN. A NaN's sign and payload are not the scalar path's to the bit: where
 * two different NaNs meet in a commutative operation (−nan from inf/inf, +nan from −sin(inf)), x86
 * returns the first operand's, and GCC orders the operands of the vectorized lane loop otherwise
 * than those of the scalar function (dl_variable_mass's ∂V/∂y at y = inf: nan in lanes, −nan alone).
 * IEEE 754 leaves both unspecified; every other number, infinities and zeros' signs included, is
 * compared bit for bit. */
static int same(double a, double b) { return !memcmp(&a, &b, sizeof a) || (isnan(a) && isnan(b)); }

typedef void (*of_q_lanes)(const nh_system *sys, const double *q, double *out);
typedef void (*of_q)(const double *p, const double *q, double *out);

/* The lane entry against the scalar function f at every lane's point (count values each), to the
 * bit; the first differing entry named. */
static void compare_of_q(const nh_system *sys, const char *what, of_q_lanes lanes, of_q f, int count, const double *q,
                         int g) {
  static double got[BIG], want[BIG];
  memset(got, 0x5a, sizeof got), memset(want, 0x5a, sizeof want);
  lanes(sys, q, got);
  for (int l = 0; l < NH_LANES; l++) {
    double ql[NH_MAX_N], out[NH_MAX_K * NH_MAX_N * NH_MAX_N];
    for (int i = 0; i < sys->n; i++) ql[i] = q[i * NH_LANES + l];
    f(sys->p, ql, out);
    for (int i = 0; i < count; i++) want[i * NH_LANES + l] = out[i];
  }
  for (int i = 0; i < count * NH_LANES; i++)
    if (!same(got[i], want[i])) {
      cr_expect(0, "%s: %s[%d] of lane %d is %a, the scalar function's %a (group %d)", sys->type->name, what,
                i / NH_LANES, i % NH_LANES, got[i], want[i], g);
      return;
    }
}

/* Every lane entry against the scalar path at group g's points. */
static void compare_group(const nh_system *sys, int g, gsl_rng *r) {
  const nh_system_type *T = sys->type;
  const int n = sys->n, k = sys->k;
  double q[NH_MAX_N * NH_LANES], v[NH_MAX_N * NH_LANES], t[NH_LANES];
  fill_group(n, g, r, q);
  fill_group(n, g + 1, r, v);
  for (int l = 0; l < NH_LANES; l++) t[l] = gsl_ran_flat(r, -3, 3);
  compare_of_q(sys, "grad_potential", nh_lanes_grad_potential, T->grad_potential, n, q, g);
  compare_of_q(sys, "hess_potential", nh_lanes_hess_potential, T->hess_potential, n * n, q, g);
  compare_of_q(sys, "constraints", nh_lanes_constraints, T->constraints, k * n, q, g);
  compare_of_q(sys, "constraints_jacobian", nh_lanes_constraints_jacobian, T->constraints_jacobian, k * n * n, q, g);
  double res[NH_LANES], acc[NH_MAX_N * NH_LANES], lambda[NH_MAX_K * NH_LANES];
  int status[NH_LANES];
  nh_lanes_constraint_residual(sys, q, v, res);
  nh_lanes_acceleration(sys, t, q, v, acc, lambda, status);
  for (int l = 0; l < NH_LANES; l++) {
    double ql[NH_MAX_N], vl[NH_MAX_N], al[NH_MAX_N];
    for (int i = 0; i < n; i++) ql[i] = q[i * NH_LANES + l], vl[i] = v[i * NH_LANES + l];
    const double want = nh_constraint_residual(sys, ql, vl);
    cr_expect(same(res[l], want), "%s: residual of lane %d is %a, the scalar path's %a (group %d)", T->name, l, res[l],
              want, g);
    const int st = nh_acceleration(sys, t[l], ql, vl, al);
    cr_expect_eq(status[l], st, "%s: acceleration status of lane %d (group %d)", T->name, l, g);
    /* where the scalar acceleration fails it leaves a unwritten: only a lane that succeeded has one */
    for (int i = 0; i < n && st == 0; i++)
      cr_expect(same(acc[i * NH_LANES + l], al[i]),
                "%s: acceleration[%d] of lane %d is %a, the scalar path's %a (group %d)", T->name, i, l,
                acc[i * NH_LANES + l], al[i], g);
    double mult[NH_MAX_K];
    if (st == 0) nh_multiplier(sys, t[l], ql, vl, mult);
    for (int a = 0; a < k && st == 0; a++)
      cr_expect(same(lambda[a * NH_LANES + l], mult[a]),
                "%s: multiplier[%d] of lane %d is %a, the scalar path's %a (group %d)", T->name, a, l,
                lambda[a * NH_LANES + l], mult[a], g);
  }
}

#define GROUPS 24

static void compare_lanes(const nh_system *sys, unsigned long seed) {
  gsl_rng *r = test_rng(seed);
  for (int g = 0; g < GROUPS; g++) compare_group(sys, g, r);
  gsl_rng_free(r);
}

/* The lane kernels a compiled definition's table holds: all but the acceleration where it has
 * constraints (an unconstrained one has no kernels group), the acceleration where it has the
 * scalar acceleration kernel; an interpreted one none. */
static void check_kernels(const nh_system *sys, int compiled) {
  const nh_system_kernels *K = test_kernels(sys->type);
  const char *name = sys->type->name;
  const int expect = compiled && sys->k > 0;
  cr_expect_eq(!!K->grad_potential_lanes, expect, "%s: grad_potential_lanes", name);
  cr_expect_eq(!!K->hess_potential_lanes, expect, "%s: hess_potential_lanes", name);
  cr_expect_eq(!!K->constraints_lanes, expect, "%s: constraints_lanes", name);
  cr_expect_eq(!!K->constraints_jacobian_lanes, expect, "%s: constraints_jacobian_lanes", name);
  cr_expect_eq(!!K->constraint_residual_lanes, expect, "%s: constraint_residual_lanes", name);
  cr_expect_eq(!!K->acceleration_lanes, compiled && K->acceleration, "%s: acceleration_lanes", name);
}

/* ---- the tests ----------------------------------------------------------------------------------- */

Test(defined_lanes, sys_files_lanes_are_the_scalar_bits) {
  for (size_t i = 0; i < NFILES; i++) {
    nh_study st;
    test_load_definition(cache, NHBENCH_SOURCE_DIR "/studies/systems", sys_files[i], &st);
    cr_assert(nh_defined_system_compiled(st.defined), "%s: not compiled", sys_files[i]);
    check_kernels(&st.sys, 1);
    compare_lanes(&st.sys, 51 + i);
    nh_study_free(&st);
  }
}

Test(defined_lanes, definitions_lanes_are_the_scalar_bits) {
  const nh_system_definition defs[] = {affine_definition(), variable_mass_definition()};
  for (size_t i = 0; i < sizeof defs / sizeof *defs; i++) {
    nh_defined_system *d = test_build_definition(&defs[i], NH_DEFINED_COMPILED);
    nh_system sys = test_defined_system(d);
    check_kernels(&sys, 1);
    cr_expect_eq(!!sys.type->kernels->acceleration, i == 0, "%s: acceleration kernel", defs[i].name);
    compare_lanes(&sys, 61 + i);
    nh_defined_system_free(d);
  }
}

/* Without a compiler the table has no lane kernels: the entries call the interpreted functions lane
 * by lane, which the comparison then checks of the fallbacks. */
Test(defined_lanes, interpreted_definitions_have_no_lane_kernels) {
  setenv("NHBENCH_CC", "none", 1);
  for (size_t i = 0; i < NFILES; i++) {
    nh_study st;
    test_load_definition(cache, NHBENCH_SOURCE_DIR "/studies/systems", sys_files[i], &st);
    cr_assert(!nh_defined_system_compiled(st.defined), "%s: compiled without a compiler", sys_files[i]);
    check_kernels(&st.sys, 0);
    compare_lanes(&st.sys, 71 + i);
    nh_study_free(&st);
  }
  const nh_system_definition def = affine_definition();
  nh_defined_system *d = test_build_definition(&def, NH_DEFINED_INTERPRETED);
  nh_system sys = test_defined_system(d);
  check_kernels(&sys, 0);
  nh_defined_system_free(d);
}

/* An unconstrained definition has no kernels group (tests/systems/test_defined_paths.c), so neither
 * lane kernels nor lane functions in its source; its entries fall back. */
Test(defined_lanes, unconstrained_definition_falls_back) {
  nh_system_definition def = affine_definition();
  def.name = "dl_free", def.k = 0;
  for (int a = 0; a < NH_MAX_K; a++) def.affine[a].text = NULL;
  nh_defined_system *d = test_build_definition(&def, NH_DEFINED_COMPILED);
  nh_system sys = test_defined_system(d);
  cr_expect_null(sys.type->kernels);
  cr_expect_null(strstr(nh_defined_system_source(d), "_lanes"), "%s", nh_defined_system_source(d));
  compare_lanes(&sys, 81);
  nh_defined_system_free(d);
}

/* text with every "name(" renamed "name_gone(" (a new string). */
static char *rename_function(const char *text, const char *name) {
  char call[128];
  snprintf(call, sizeof call, "%s(", name);
  size_t count = 0;
  for (const char *s = text; (s = strstr(s, call)); s += strlen(call)) count++;
  cr_assert_gt(count, 0, "no %s in the source", call);
  char *out = malloc(strlen(text) + count * strlen("_gone") + 1), *o = out;
  cr_assert(out);
  const char *s = text;
  for (const char *hit; (hit = strstr(s, call)); s = hit + strlen(call)) {
    memcpy(o, s, (size_t)(hit - s)), o += hit - s;
    o += sprintf(o, "%s_gone(", name);
  }
  strcpy(o, s);
  return out;
}

/* A cached object that lacks one lane function is refused as one lacking a scalar function is,
 * naming the function; AUTO refuses it too (the interpreter is no fallback for an object that
 * loads). */
Test(defined_lanes, cached_object_without_a_lane_function) {
  static const char *const names[] = {"nhs_grad_potential_lanes",      "nhs_hess_potential_lanes",
                                      "nhs_constraints_lanes",         "nhs_constraints_jacobian_lanes",
                                      "nhs_constraint_residual_lanes", "nhs_acceleration_lanes"};
  const nh_system_definition def = affine_definition();
  nh_defined_system *d = test_build_definition(&def, NH_DEFINED_COMPILED);
  char *source = strdup(nh_defined_system_source(d)), path[4096], err[1024];
  cr_assert(source);
  nh_defined_system_free(d);
  nh_native *lib = nh_native_load(source, NULL, err, sizeof err); /* the cached object's path */
  cr_assert(lib, "%s", err);
  snprintf(path, sizeof path, "%s", nh_native_path(lib));
  nh_native_close(lib);
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
    char *broken = rename_function(source, names[i]), want[256];
    test_replace_object(path, broken);
    free(broken);
    snprintf(want, sizeof want, "generated code has no %s", names[i]);
    for (int mode = 0; mode < 2; mode++) {
      const void *origin = NULL;
      cr_expect_null(nh_defined_system_build(&def, mode ? NH_DEFINED_AUTO : NH_DEFINED_COMPILED, &origin, err,
                                             sizeof err, NULL, 0));
      cr_expect_str_eq(err, want);
    }
  }
  free(source);
}
