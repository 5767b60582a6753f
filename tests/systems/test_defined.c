/* Systems written as text (issue 50 item 4, "Trust"; systems/defined.h, studies/spec_system.c):
 *  - the definitions studies/systems/{particle,chaotic_particle,knife_edge,cvt}.sys reproduce the
 *    built-in systems: the same parameters, initial state and invariants, the same verdict of
 *    nh_method_applies for every method (but the differences listed below), and the same final
 *    state after 40 steps of every method that applies, to round-off;
 *  - the compiled and the interpreted evaluation of one definition agree to the bit, function by
 *    function and along 100-step trajectories;
 *  - the registry's contracts hold for definitions: finite-difference derivatives (∇V, ∇²V, ∂A/∂q,
 *    ∂M/∂q, ∂b/∂q), the curvature and derivative kernels against the contraction of
 *    constraints_jacobian written out here, the flags of time-dependent damping and of a forcing
 *    that is 0, and no allocation in steps;
 *  - the interpreter's 8 slots.
 * Each test has its own cache of compiled objects (NHBENCH_CACHE_DIR, a fresh mkdtemp directory
 * removed afterwards), since the tests run in parallel processes. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, setenv */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <gsl/gsl_randist.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "integrators/integrator.h"
#include "studies/study.h"
#include "systems/defined.h"
#include "tests/checks.h"
#include "tests/compile_cache.h"
#include "tests/heap_guard.h"
#include "tests/helpers.h"

TEST_CACHE_SUITE(defined, "/tmp/nh-defined");

/* ---- loading a .sys file ------------------------------------------------------------------------- */

/* ---- the methods --------------------------------------------------------------------------------- */

/* Every method of the registry the way tests/contracts/test_no_alloc.c names them (a composition
 * over nh_newmark(alpha=0.5)), and instances the registry loop misses: the paper's Ψ_h, the general
 * Newton path of nh_newmark, spark's largest stage system, compositions over nh_rattle and over the
 * explicit contact2, and herglotz2's composition. */
static const char *const extra_methods[] = {
    "adjoint_pair(nh_newmark(beta=0.1,beta2=0.1,alpha=0))",
    "nh_newmark(beta=0.1,beta2=0.1,alpha=0.5)",
    "spark(s=4)",
    "triple_jump(nh_rattle)",
    "yoshida6(contact2)",
    "suzuki5(herglotz2)",
};
#define MAX_METHODS 64

static int method_texts(char texts[MAX_METHODS][256]) {
  int count = 0;
  for (int i = 0; nh_integrator_types[i] && count < MAX_METHODS; i++)
    snprintf(texts[count++], 256, nh_integrator_types[i]->takes_base ? "%s(nh_newmark(alpha=0.5))" : "%s",
             nh_integrator_types[i]->name);
  for (size_t i = 0; i < sizeof extra_methods / sizeof *extra_methods && count < MAX_METHODS; i++)
    snprintf(texts[count++], 256, "%s", extra_methods[i]);
  return count;
}

static nh_method *parse_method(const char *text) {
  char err[512];
  nh_method *m = nh_method_parse(text, err, sizeof err);
  cr_assert(m, "%s: %s", text, err);
  return m;
}

/* ---- 1. the definitions reproduce the built-in systems ----------------------------------------- */

/* max_i |a_i − b_i|. */
static double max_diff(int n, const double *a, const double *b) {
  double d = 0;
  for (int i = 0; i < n; i++) d = fmax(d, fabs(a[i] - b[i]));
  return d;
}

/* The largest difference between the two final states, relative to the state's scale
 * max(1, |q|_∞, |v|_∞, |λ|_∞, |z|): q, v, and the multiplier where the method defines one, z where
 * it updates it. */
static double state_difference(const nh_method *m, const nh_system *sys, const nh_state *a, const nh_state *b) {
  double scale = fmax(1, fmax(test_max_abs(sys->n, a->q), test_max_abs(sys->n, a->v)));
  double d = fmax(max_diff(sys->n, a->q, b->q), max_diff(sys->n, a->v, b->v));
  if (sys->k > 0 && !nh_method_lacks_multiplier(m)) {
    scale = fmax(scale, test_max_abs(sys->k, a->lambda));
    d = fmax(d, max_diff(sys->k, a->lambda, b->lambda));
  }
  if (!nh_method_lacks_action(m)) scale = fmax(scale, fabs(a->z)), d = fmax(d, fabs(a->z - b->z));
  return d / scale;
}

/* steps steps of m of size h from the system's default state; the last state. */
static nh_state run_from_default(const nh_method *m, const nh_system *sys, double h, int steps) {
  nh_state x;
  nh_system_default_state(sys, &x);
  nh_cost cost = {0};
  test_init_ok(m, sys, &x, h, &cost);
  for (int s = 0; s < steps; s++) {
    nh_state y;
    test_step_ok(m, sys, &x, &y, h, &cost);
    x = y;
  }
  return x;
}

#define EQUIVALENCE_H 0.05
#define EQUIVALENCE_STEPS 40
/* The tolerance of "to round-off". The definition evaluates the same functions as the system file,
 * with other roundings where the symbolic derivatives associate the products otherwise (the
 * chaotic particle's ∂V/∂z1 holds (2·z1)·(z2·z2) here, times the exact ½, and (z1·z2)·z2 there) and
 * with nh_acceleration's generic elimination in place of the chaotic particle's closed-form kernel:
 * a few ulps (~1e-15 relative) per evaluation. 40 steps of h = 0.05 (T = 2, where the Lyapunov
 * growth of these systems is at most e^{2·2} ~ 50) let such differences grow to ~1e-13; Newton
 * solves stop at the same iterate where the residual is far below their tolerance and differ by
 * one quadratically converged correction otherwise, below 1e-14. So 1e-12 of the state's scale is
 * round-off with a margin of 10, and a wrong term (a coefficient off by 1e-9: the negative control
 * below) is far above it. Measured: particle, knife_edge bit for bit for every method; cvt 3.3e-17;
 * chaotic_particle 1.4e-14 (nh_energy; the compositions 1e-15). */
#define EQUIVALENCE_TOL 1e-12

/* The definition in studies/systems/FILE against the built-in system NAME. */
static void check_equivalence(const char *name, const char *file) {
  nh_study st;
  test_load_definition(cache, NHBENCH_SOURCE_DIR "/studies/systems", file, &st);
  const nh_system *def = &st.sys;
  nh_system sys = test_system(name, NULL);
  const nh_system_type *B = sys.type, *D = def->type;

  /* The same system: dimensions, parameters by name, initial state, mass, energy and invariants. */
  cr_assert(def->n == sys.n && def->k == sys.k, "%s: n, k = %d, %d; built-in %d, %d", file, def->n, def->k, sys.n,
            sys.k);
  cr_assert_eq(D->nparams, B->nparams, "%s: %d parameters, built-in %d", file, D->nparams, B->nparams);
  for (int j = 0; j < B->nparams; j++) {
    const int i = nh_system_param_index(def, B->params[j].name);
    cr_assert_eq(i, j, "%s: parameter %s at %d, built-in %d", file, B->params[j].name, i, j);
    cr_expect_eq(def->p[i], sys.p[j], "%s: %s = %.17g, built-in %.17g", file, B->params[j].name, def->p[i], sys.p[j]);
  }
  nh_state x0, y0;
  nh_system_default_state(&sys, &x0);
  nh_system_default_state(def, &y0);
  cr_expect(!memcmp(x0.q, y0.q, sizeof x0.q) && !memcmp(x0.v, y0.v, sizeof x0.v), "%s: default state differs", file);
  cr_expect_eq(def->constant_mass, sys.constant_mass, "%s: constant mass", file);
  cr_expect_eq(def->unit_mass, sys.unit_mass, "%s: unit mass", file);
  cr_expect_eq(nh_system_features(def), nh_system_features(&sys), "%s: features", file);
  cr_expect_eq(nh_energy(def, x0.q, x0.v), nh_energy(&sys, x0.q, x0.v), "%s: energy", file);
  cr_expect_eq(B->knowledge->sample_box, D->knowledge->sample_box, "%s: sample box", file);
  cr_assert_eq(nh_invariant_count(def), nh_invariant_count(&sys), "%s: invariants", file);
  if (nh_invariant_count(&sys)) {
    double a[NH_MAX_INVARIANTS], b[NH_MAX_INVARIANTS];
    nh_invariants(&sys, x0.q, x0.v, a);
    nh_invariants(def, x0.q, x0.v, b);
    for (int i = 0; i < nh_invariant_count(&sys); i++) {
      cr_expect_str_eq(nh_invariant_name(def, i), nh_invariant_name(&sys, i), "%s: invariant %d", file, i);
      cr_expect(fabs(a[i] - b[i]) <= 1e-15 * fmax(1, fabs(a[i])), "%s: %s = %.17g, built-in %.17g", file,
                nh_invariant_name(&sys, i), b[i], a[i]);
    }
  }

  /* Every method: the same verdict, and the same trajectory where it applies. */
  char texts[MAX_METHODS][256];
  const int count = method_texts(texts);
  double worst = 0;
  const char *worst_method = "";
  int compared = 0;
  for (int i = 0; i < count; i++) {
    char why_builtin[512] = "", why_defined[512] = "";
    nh_method *m = parse_method(texts[i]);
    const int on_builtin = nh_method_applies(m, &sys, why_builtin, sizeof why_builtin) == 0;
    const int on_defined = nh_method_applies(m, def, why_defined, sizeof why_defined) == 0;
    cr_expect_eq(on_defined, on_builtin, "%s: applies to %s: %d (%s), to %s: %d (%s)", texts[i], name, on_builtin,
                 why_builtin, file, on_defined, why_defined);
    /* A tolerance-driven method's step control is discontinuous in round-off (an accepted step or
     * a rejected one): only its verdict is compared. */
    if (on_builtin && on_defined && !(m->type->properties & NH_TOLERANCE_DRIVEN)) {
      const nh_state a = run_from_default(m, &sys, EQUIVALENCE_H, EQUIVALENCE_STEPS);
      const nh_state b = run_from_default(m, def, EQUIVALENCE_H, EQUIVALENCE_STEPS);
      const double d = state_difference(m, &sys, &a, &b);
      cr_expect_leq(d, EQUIVALENCE_TOL, "%s: %s on %s and on %s differ by %.3e of the state's scale", file, texts[i],
                    name, D->name, d);
      if (d >= worst) worst = d, worst_method = texts[i];
      compared++;
    }
    nh_method_free(m);
  }
  cr_expect_geq(compared, 10, "%s: only %d methods compared", file, compared);
  cr_log_info("%s: %d methods, largest difference %.3e of the state's scale (%s)", file, compared, worst, worst_method);
  nh_study_free(&st);
}

Test(defined, particle_reproduces_the_builtin) { check_equivalence("particle", "particle.sys"); }
Test(defined, chaotic_particle_reproduces_the_builtin) {
  check_equivalence("chaotic_particle", "chaotic_particle.sys");
}
Test(defined, knife_edge_reproduces_the_builtin) { check_equivalence("knife_edge", "knife_edge.sys"); }
Test(defined, cvt_reproduces_the_builtin) { check_equivalence("cvt", "cvt.sys"); }

/* The harmonic particle (omega2 = 1) and the perturbed CVT (eps = 0.1), where the potentials'
 * parameters are not 0: the same comparison on a few methods with the parameter set in both. */
static void check_with_params(const char *name, const char *file, const char *params) {
  nh_study st;
  test_load_definition(cache, NHBENCH_SOURCE_DIR "/studies/systems", file, &st);
  char err[256];
  cr_assert_eq(nh_system_set_params_text(&st.sys, params, err, sizeof err), 0, "%s", err);
  nh_system sys = test_system(name, params);
  const char *methods[] = {"rk4", "nh_newmark(beta=0.1,beta2=0.1,alpha=0.5)", "nh_rattle", "spark"};
  for (size_t i = 0; i < sizeof methods / sizeof *methods; i++) {
    nh_method *m = parse_method(methods[i]);
    const nh_state a = run_from_default(m, &sys, EQUIVALENCE_H, EQUIVALENCE_STEPS);
    const nh_state b = run_from_default(m, &st.sys, EQUIVALENCE_H, EQUIVALENCE_STEPS);
    const double d = state_difference(m, &sys, &a, &b);
    cr_expect_leq(d, EQUIVALENCE_TOL, "%s(%s): %s differs by %.3e", file, params, methods[i], d);
    cr_log_info("%s(%s): %s %.3e", file, params, methods[i], d);
    nh_method_free(m);
  }
  nh_study_free(&st);
}

Test(defined, nonzero_parameters_reproduce_the_builtin) {
  check_with_params("particle", "particle.sys", "omega2=1");
  check_with_params("cvt", "cvt.sys", "eps=0.1");
  check_with_params("knife_edge", "knife_edge.sys", "m=2,J=0.5,g=9.81,alpha=0.3");
}

/* Negative control: the chaotic particle with its potential's 0.5 made 0.5·(1 + 1e-9), a copy in the
 * cache directory, is told apart from the built-in system by the same comparison. */
Test(defined, equivalence_sees_a_wrong_coefficient) {
  char text[4096], path[256];
  test_read_file(NHBENCH_SOURCE_DIR "/studies/systems/chaotic_particle.sys", text, sizeof text);
  char *at = strstr(text, "potential = \"0.5*(");
  cr_assert(at, "chaotic_particle.sys: potential not found");
  char changed[4096 + 64];
  snprintf(changed, sizeof changed, "%.*spotential = \"0.5000000005*(%s", (int)(at - text), text,
           at + strlen("potential = \"0.5*("));
  snprintf(path, sizeof path, "%s/perturbed.sys", cache);
  test_write_file(path, changed);
  nh_study st;
  test_load_definition(cache, cache, "perturbed.sys", &st);
  nh_system sys = test_system("chaotic_particle", NULL);
  nh_method *m = parse_method("rk4");
  const nh_state a = run_from_default(m, &sys, EQUIVALENCE_H, EQUIVALENCE_STEPS);
  const nh_state b = run_from_default(m, &st.sys, EQUIVALENCE_H, EQUIVALENCE_STEPS);
  const double d = state_difference(m, &sys, &a, &b);
  cr_expect_gt(d, 10 * EQUIVALENCE_TOL, "a coefficient off by 1e-9 moves the state by %.3e only", d);
  nh_method_free(m);
  nh_study_free(&st);
}

/* ---- 2. compiled and interpreted agree to the bit ---------------------------------------------- */

/* The chaotic particle (systems/chaotic_particle.c, studies/systems/chaotic_particle.sys) written
 * in C as a definition. */
static nh_system_definition chaotic_definition(void) {
  static const char *const coords[] = {"x", "y1", "y2", "z1", "z2"};
  static const char *const row[] = {"1", "0", "0", "y1", "y2"};
  static const double q0[] = {1, 0, 1, -1, -1}, v0[] = {0.05, 0.5, -0.5, -0.1, -0.05};
  nh_system_definition def = {.name = "c_chaotic_particle", .n = 5, .k = 1, .mass_identity = 1, .sample_box = 1};
  def.potential.text = "0.5*(x^2 + y1^2 + y2^2 + z1^2 + z2^2 + z1^2*z2^2 + y1^2*z1^2 + y2^2*z2^2)";
  for (int i = 0; i < 5; i++) {
    def.coords[i] = coords[i];
    def.constraints[i].text = row[i];
    def.q0[i] = q0[i], def.v0[i] = v0[i];
  }
  return def;
}

/* The chaotic particle with every optional part a definition can have, so that each interface
 * function has something to evaluate: parameters, a q-dependent mass matrix, a second constraint
 * with an affine part, time-dependent damping, forcing and three invariants (one reading every
 * function of the grammar). */
static nh_system_definition chaotic_definition_full(void) {
  nh_system_definition def = chaotic_definition();
  static const char *const names[] = {"eps", "alpha", "f"};
  static const double values[] = {0.3, 0.2, 0.7};
  static const char *const mass[5][5] = {
      {"1 + eps*y1^2", "0.1*sin(x)", "0", "0", "0"},
      {"0.1*sin(x)", "2", "0", "0", "0"},
      {"0", "0", "1 + 0.5*cos(z1)^2", "0", "eps*z2/(1 + z2^2)"},
      {"0", "0", "0", "exp(-0.1*x^2)", "0"},
      {"0", "0", "eps*z2/(1 + z2^2)", "0", "1"},
  };
  static const char *const row2[] = {"0", "cos(z2)", "1", "0", "sqrt(1 + x^2)"};
  static const char *const forcing[] = {"f*cos(t)", "0", "eps*t", "0", "-f*sin(2*t)"};
  def.name = "c_chaotic_full";
  def.nparams = 3;
  for (int j = 0; j < 3; j++) def.param_names[j] = names[j], def.param_values[j] = values[j];
  def.mass_identity = 0;
  for (int i = 0; i < 25; i++) def.mass[i].text = mass[i / 5][i % 5];
  /* with the powers the printer writes as products, as sqrt and as pow */
  def.potential.text = "0.5*(x^2 + y1^2 + y2^2 + z1^2 + z2^2 + z1^2*z2^2 + y1^2*z1^2 + y2^2*z2^2) + eps*x^3/3 + "
                       "0.01*(1 + z1^2)^1.5 + 0.1*(2 + y2^2)^-2 + 0.05*(3 + x^2)^0.5";
  def.k = 2;
  for (int i = 0; i < 5; i++) def.constraints[5 + i].text = row2[i];
  def.affine[0].text = "eps*sin(x)*z1";
  def.affine[1].text = "0.5*y2^2";
  def.damping.text = "alpha*(1 + 0.5*sin(t))";
  def.has_forcing = 1;
  for (int i = 0; i < 5; i++) def.forcing[i].text = forcing[i];
  def.ninvariants = 3;
  def.invariant_names[0] = "E_y1", def.invariants[0].text = "0.5*(vy1^2 + y1^2)";
  def.invariant_names[1] = "L", def.invariants[1].text = "x*vz1 - z1*vx + f";
  /* every function of the grammar */
  def.invariant_names[2] = "F";
  def.invariants[2].text = "log(2 + x^2) + atan(y1) + tanh(z2)*sinh(vx) + cosh(vz1) + asin(0.5*sin(y2)) + "
                           "acos(0.5*cos(z1)) + tan(0.3*x) + exp(-vy1^2) + sqrt(1 + vz2^4) + pi";
  /* v0 on D for the second row too: vy2 = −(cos(z2) vy1 + sqrt(1 + x²) vz2 + b2) at q0 */
  def.v0[2] = -(cos(-1.0) * 0.5 + sqrt(2.0) * -0.05 + 0.5 * 1);
  /* and vx = −(y1 vz1 + y2 vz2 + b1) for the first: */
  def.v0[0] = -(0.0 * -0.1 + 1.0 * -0.05 + 0.3 * sin(1.0) * -1.0);
  return def;
}

static nh_defined_system *build(const nh_system_definition *def, nh_defined_mode mode) {
  nh_defined_system *d = test_build_definition(def, mode);
  cr_assert_eq(nh_defined_system_compiled(d), mode == NH_DEFINED_COMPILED, "%s: compiled %d", def->name,
               nh_defined_system_compiled(d));
  return d;
}

#define SAME_BITS(what, a, b, count)                                                                                   \
  cr_expect(!memcmp(a, b, (size_t)(count) * sizeof *(a)), "%s: %s differs between compiled and interpreted", name, what)

/* Every function of the two tables at a random point. */
static void compare_functions(const nh_system *c, const nh_system *i, gsl_rng *r) {
  const nh_system_type *C = c->type, *I = i->type;
  const char *name = C->name;
  const int n = c->n, k = c->k;
  double q[NH_MAX_N], v[NH_MAX_N], w[NH_MAX_N], t = gsl_ran_flat(r, -3, 3);
  for (int j = 0; j < n; j++)
    q[j] = gsl_ran_flat(r, -2, 2), v[j] = gsl_ran_flat(r, -2, 2), w[j] = gsl_ran_flat(r, -2, 2);
  enum { BIG = NH_MAX_N * NH_MAX_N * NH_MAX_N };
  double a[BIG], b[BIG];
#define COMPARE(what, count, call)                                                                                     \
  do {                                                                                                                 \
    memset(a, 0, sizeof a), memset(b, 0, sizeof b);                                                                    \
    for (int side = 0; side < 2; side++) {                                                                             \
      const nh_system *S = side ? i : c;                                                                               \
      const nh_system_type *T = S->type;                                                                               \
      const double *p = S->p;                                                                                          \
      double *o = side ? b : a;                                                                                        \
      (void)T, (void)p;                                                                                                \
      call;                                                                                                            \
    }                                                                                                                  \
    SAME_BITS(what, a, b, count);                                                                                      \
  } while (0)
  COMPARE("mass", n * n, T->mass(p, q, o));
  if (C->mass_jacobian) COMPARE("mass_jacobian", n * n * n, T->mass_jacobian(p, q, o));
  COMPARE("potential", 1, o[0] = T->potential(p, q));
  COMPARE("grad_potential", n, T->grad_potential(p, q, o));
  COMPARE("hess_potential", n * n, T->hess_potential(p, q, o));
  COMPARE("constraints", k * n, T->constraints(p, q, o));
  COMPARE("constraints_jacobian", k * n * n, T->constraints_jacobian(p, q, o));
  COMPARE("constraint_curvature", k, T->kernels->constraint_curvature(p, q, v, o));
  COMPARE("constraint_derivative", k * n, T->kernels->constraint_derivative(p, q, w, o));
  if (C->affine) {
    COMPARE("affine values", k, T->affine->values(p, q, o));
    COMPARE("affine jacobian", k * n, T->affine->jacobian(p, q, o));
  }
  if (C->forces && C->forces->damping) COMPARE("damping", 1, o[0] = T->forces->damping(p, t));
  if (C->forces && C->forces->forcing) COMPARE("forcing", n + 1, o[n] = T->forces->forcing(p, t, o));
  if (C->knowledge->invariants)
    COMPARE("invariants", C->knowledge->invariants->count, T->knowledge->invariants->values(p, q, v, o));
  /* The generic quantities built on them. */
  COMPARE("free force", n, nh_free_force(S, t, q, v, o));
  COMPARE("acceleration", n, nh_acceleration(S, t, q, v, o));
#undef COMPARE
  cr_expect_eq(!C->mass_jacobian, !I->mass_jacobian, "%s: mass_jacobian", name);
  cr_expect_eq(!C->affine, !I->affine, "%s: affine", name);
  cr_expect_eq(nh_system_features(c), nh_system_features(i), "%s: features", name);
  cr_expect_eq(C->constraints_solved_first, I->constraints_solved_first, "%s: constraints_solved_first", name);
}

/* Steps of every method that applies, from the default state: the same bits. */
static void compare_trajectories(const nh_system *c, const nh_system *i, int steps, int min_methods) {
  char texts[MAX_METHODS][256], err[512];
  const int count = method_texts(texts);
  int compared = 0;
  for (int j = 0; j < count; j++) {
    nh_method *m = parse_method(texts[j]);
    const int applies = nh_method_applies(m, c, err, sizeof err) == 0;
    cr_expect_eq(nh_method_applies(m, i, err, sizeof err) == 0, applies, "%s on %s: verdicts differ", texts[j],
                 c->type->name);
    if (applies) {
      const nh_state a = run_from_default(m, c, 0.02, steps), b = run_from_default(m, i, 0.02, steps);
      /* The first n (k) entries: past them a state holds what the steps leave there (the stack's
       * bits after compositions over nh_rattle), which no one reads. */
      const size_t n = (size_t)c->n * sizeof(double), k = (size_t)c->k * sizeof(double);
      cr_expect(a.t == b.t && !memcmp(a.q, b.q, n) && !memcmp(a.v, b.v, n) && !memcmp(a.lambda, b.lambda, k) &&
                    !memcmp(&a.z, &b.z, sizeof a.z),
                "%s on %s: compiled and interpreted differ after %d steps by %.3e", texts[j], c->type->name, steps,
                fmax(max_diff(c->n, a.q, b.q), max_diff(c->n, a.v, b.v)));
      compared++;
    }
    nh_method_free(m);
  }
  cr_expect_geq(compared, min_methods, "%s: only %d methods", c->type->name, compared);
}

static void check_compiled_against_interpreted(const nh_system_definition *def, int min_methods) {
  nh_defined_system *dc = build(def, NH_DEFINED_COMPILED), *di = build(def, NH_DEFINED_INTERPRETED);
  cr_expect_str_eq(nh_defined_system_source(dc), nh_defined_system_source(di), "one generated source");
  nh_system c = test_defined_system(dc), i = test_defined_system(di);
  gsl_rng *r = test_rng(50);
  for (int s = 0; s < 20; s++) compare_functions(&c, &i, r);
  gsl_rng_free(r);
  compare_trajectories(&c, &i, 100, min_methods);
  nh_defined_system_free(dc);
  nh_defined_system_free(di);
}

Test(defined, compiled_and_interpreted_agree_to_the_bit) {
  const nh_system_definition def = chaotic_definition();
  check_compiled_against_interpreted(&def, 20);
}

Test(defined, compiled_and_interpreted_agree_to_the_bit_with_every_part) {
  const nh_system_definition def = chaotic_definition_full();
  check_compiled_against_interpreted(&def, 2); /* rk4, nh_newmark: variable mass, time-dependent α */
}

/* Negative control: the comparison tells two definitions apart whose potentials differ in one
 * coefficient's last bit. */
Test(defined, bit_comparison_sees_one_ulp) {
  nh_system_definition def = chaotic_definition(), other = chaotic_definition();
  other.potential.text = "0.50000000000000011*(x^2 + y1^2 + y2^2 + z1^2 + z2^2 + z1^2*z2^2 + y1^2*z1^2 + y2^2*z2^2)";
  nh_defined_system *dc = build(&def, NH_DEFINED_COMPILED), *di = build(&other, NH_DEFINED_INTERPRETED);
  nh_system c = test_defined_system(dc), i = test_defined_system(di);
  const double q[] = {0.3, -0.7, 1.1, 0.4, -1.3};
  const double a = c.type->potential(c.p, q), b = i.type->potential(i.p, q);
  cr_expect_neq(memcmp(&a, &b, sizeof a), 0, "0.5 and its next double give the same V");
  nh_method *m = parse_method("rk4");
  const nh_state x = run_from_default(m, &c, 0.02, 100), y = run_from_default(m, &i, 0.02, 100);
  cr_expect_neq(memcmp(x.q, y.q, sizeof x.q), 0, "an ulp in V leaves 100 steps of rk4 unchanged");
  nh_method_free(m);
  nh_defined_system_free(dc);
  nh_defined_system_free(di);
}

/* ---- 3. the contracts on definitions ---------------------------------------------------------- */

/* A particle in cylindrical coordinates (r, φ, z) with a q-dependent mass matrix, an affine
 * constraint and time-dependent damping; its forcing is written out as zeros. */
static nh_system_definition polar_definition(void) {
  static const char *const coords[] = {"r", "phi", "z"};
  static const char *const mass[9] = {"1 + 0.2*z^2", "0", "0.1*sin(phi)", "0", "r^2", "0", "0.1*sin(phi)", "0", "1"};
  static const char *const row[] = {"sin(phi)", "-r*cos(phi)", "1"};
  nh_system_definition def = {.name = "c_polar", .n = 3, .k = 1, .sample_box = 1};
  for (int i = 0; i < 3; i++) def.coords[i] = coords[i], def.constraints[i].text = row[i], def.forcing[i].text = "0";
  for (int i = 0; i < 9; i++) def.mass[i].text = mass[i];
  def.nparams = 2;
  def.param_names[0] = "k", def.param_values[0] = 1.5;
  def.param_names[1] = "alpha", def.param_values[1] = 0.1;
  def.potential.text = "0.5*k*(r - 1)^2 + cos(phi)*r + z^4/4 + exp(-r)*sin(2*phi)*z";
  def.affine[0].text = "0.3*r*z + sin(phi)^2";
  def.damping.text = "alpha*exp(-t)";
  def.has_forcing = 1;
  const double q0[] = {1.2, 0.4, -0.3};
  for (int i = 0; i < 3; i++) def.q0[i] = q0[i];
  def.v0[0] = 0.5, def.v0[1] = -0.2; /* v0[2] from the constraint */
  def.v0[2] = -(sin(0.4) * 0.5 + -1.2 * cos(0.4) * -0.2 + 0.3 * 1.2 * -0.3 + sin(0.4) * sin(0.4));
  return def;
}

#define FD_STEP 1e-5
/* Central differences with step δ = 1e-5: truncation δ²|f'''|/6 ~ 2e-11 and round-off ε|f|/δ ~ 2e-11
 * for the values (|f|, |f'''| ≲ 10) of these systems near the points below, so 1e-8 (1 + |f'|) is
 * above both by 100 and a wrong derivative (a sign, a factor, a missing term: O(1)) far above it. */
#define FD_TOL 1e-8

typedef void (*vector_fn)(const nh_system *sys, const double *q, double *out);
static void potential_fn(const nh_system *s, const double *q, double *o) { o[0] = s->type->potential(s->p, q); }
static void grad_fn(const nh_system *s, const double *q, double *o) { s->type->grad_potential(s->p, q, o); }
static void constraints_fn(const nh_system *s, const double *q, double *o) { s->type->constraints(s->p, q, o); }
static void mass_fn(const nh_system *s, const double *q, double *o) { s->type->mass(s->p, q, o); }
static void affine_fn(const nh_system *s, const double *q, double *o) { s->type->affine->values(s->p, q, o); }

/* The largest error of analytic[i*n + j] (the m entries of f, each differentiated in q_j, as
 * every Jacobian of the interface lays them out) against central differences of f, relative to
 * 1 + |difference|. */
static double fd_error(const nh_system *sys, vector_fn f, int m, const double *q, const double *analytic) {
  const int n = sys->n;
  double worst = 0;
  for (int j = 0; j < n; j++) {
    double qp[NH_MAX_N], qm[NH_MAX_N], fp[NH_MAX_N * NH_MAX_N * NH_MAX_N], fm[NH_MAX_N * NH_MAX_N * NH_MAX_N];
    memcpy(qp, q, sizeof(double) * (size_t)n), memcpy(qm, q, sizeof(double) * (size_t)n); /* q holds n */
    qp[j] += FD_STEP, qm[j] -= FD_STEP;
    f(sys, qp, fp), f(sys, qm, fm);
    for (int i = 0; i < m; i++) {
      const double d = (fp[i] - fm[i]) / (2 * FD_STEP);
      worst = fmax(worst, fabs(analytic[i * n + j] - d) / (1 + fabs(d)));
    }
  }
  return worst;
}

/* Every derivative of sys against finite differences at q. */
static void check_derivatives(const nh_system *sys, const double *q) {
  const nh_system_type *T = sys->type;
  const int n = sys->n, k = sys->k;
  double g[NH_MAX_N], H[NH_MAX_N * NH_MAX_N], dA[NH_MAX_K * NH_MAX_N * NH_MAX_N], e;
  T->grad_potential(sys->p, q, g);
  T->hess_potential(sys->p, q, H);
  T->constraints_jacobian(sys->p, q, dA);
  cr_expect_leq(e = fd_error(sys, potential_fn, 1, q, g), FD_TOL, "%s: grad V off by %.3e", T->name, e);
  cr_expect_leq(e = fd_error(sys, grad_fn, n, q, H), FD_TOL, "%s: Hessian off by %.3e", T->name, e);
  cr_expect_leq(e = fd_error(sys, constraints_fn, k * n, q, dA), FD_TOL, "%s: dA off by %.3e", T->name, e);
  if (T->mass_jacobian) {
    double dM[NH_MAX_N * NH_MAX_N * NH_MAX_N];
    T->mass_jacobian(sys->p, q, dM);
    cr_expect_leq(e = fd_error(sys, mass_fn, n * n, q, dM), FD_TOL, "%s: dM off by %.3e", T->name, e);
  }
  if (T->affine) {
    double db[NH_MAX_K * NH_MAX_N];
    T->affine->jacobian(sys->p, q, db);
    cr_expect_leq(e = fd_error(sys, affine_fn, k, q, db), FD_TOL, "%s: db off by %.3e", T->name, e);
  }
}

/* The kernels against the contraction of constraints_jacobian (and, with_affine, of
 * affine->jacobian) written out: out[a] = Σ_ij ∂_j μ^a_i v_i v_j + Σ_j ∂_j b^a v_j,
 * D[a*n + l] = Σ_i ∂_l μ^a_i w_i. Both sum the same products in other orders, so they agree to a
 * few ulps of the sum of the terms' magnitudes: the largest difference relative to 1 + that sum. */
static double kernel_error(const nh_system *sys, const double *q, const double *v, const double *w, int with_affine) {
  const nh_system_type *T = sys->type;
  const int n = sys->n, k = sys->k;
  double dA[NH_MAX_K * NH_MAX_N * NH_MAX_N], db[NH_MAX_K * NH_MAX_N] = {0}, curv[NH_MAX_K], D[NH_MAX_K * NH_MAX_N];
  double worst = 0;
  cr_assert(T->kernels && T->kernels->constraint_curvature && T->kernels->constraint_derivative, "%s: kernels",
            T->name);
  T->constraints_jacobian(sys->p, q, dA);
  if (T->affine && with_affine) T->affine->jacobian(sys->p, q, db);
  T->kernels->constraint_curvature(sys->p, q, v, curv);
  T->kernels->constraint_derivative(sys->p, q, w, D);
  for (int a = 0; a < k; a++) {
    double sum = 0, mag = 0;
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++)
        sum += dA[(a * n + i) * n + j] * v[i] * v[j], mag += fabs(dA[(a * n + i) * n + j] * v[i] * v[j]);
    for (int j = 0; j < n; j++) sum += db[a * n + j] * v[j], mag += fabs(db[a * n + j] * v[j]);
    worst = fmax(worst, fabs(curv[a] - sum) / (1 + mag));
    for (int l = 0; l < n; l++) {
      double s = 0, m = 0;
      for (int i = 0; i < n; i++) s += dA[(a * n + i) * n + l] * w[i], m += fabs(dA[(a * n + i) * n + l] * w[i]);
      worst = fmax(worst, fabs(D[a * n + l] - s) / (1 + m));
    }
  }
  return worst;
}

#define KERNEL_TOL 1e-14

static void check_kernels(const nh_system *sys, const double *q, const double *v, const double *w) {
  double e, through[NH_MAX_K], curv[NH_MAX_K], D[NH_MAX_K * NH_MAX_N], Dt[NH_MAX_K * NH_MAX_N];
  cr_expect_leq(e = kernel_error(sys, q, v, w, 1), KERNEL_TOL, "%s: kernels off the contraction by %.3e",
                sys->type->name, e);
  /* and the generic functions take them */
  sys->type->kernels->constraint_curvature(sys->p, q, v, curv);
  sys->type->kernels->constraint_derivative(sys->p, q, w, D);
  nh_curvature_term(sys, q, v, through);
  nh_constraint_derivative(sys, q, w, Dt);
  cr_expect(!memcmp(through, curv, (size_t)sys->k * sizeof *curv), "%s: nh_curvature_term without the kernel",
            sys->type->name);
  cr_expect(!memcmp(Dt, D, (size_t)(sys->k * sys->n) * sizeof *D), "%s: nh_constraint_derivative without the kernel",
            sys->type->name);
}

/* Points near the default state, off its symmetries. */
static void check_contracts_at_random_points(const nh_system *sys, unsigned long seed) {
  gsl_rng *r = test_rng(seed);
  nh_state x0;
  nh_system_default_state(sys, &x0);
  for (int s = 0; s < 5; s++) {
    double q[NH_MAX_N], v[NH_MAX_N], w[NH_MAX_N];
    for (int i = 0; i < sys->n; i++)
      q[i] = x0.q[i] + gsl_ran_flat(r, -0.3, 0.3), v[i] = gsl_ran_flat(r, -1, 1), w[i] = gsl_ran_flat(r, -1, 1);
    check_derivatives(sys, q);
    check_kernels(sys, q, v, w);
  }
  gsl_rng_free(r);
}

Test(defined, derivatives_agree_with_finite_differences) {
  const nh_system_definition defs[] = {chaotic_definition(), chaotic_definition_full(), polar_definition()};
  for (size_t i = 0; i < sizeof defs / sizeof *defs; i++) {
    nh_defined_system *d = build(&defs[i], NH_DEFINED_COMPILED);
    nh_system sys = test_defined_system(d);
    check_contracts_at_random_points(&sys, 7 + i);
    nh_defined_system_free(d);
  }
}

/* The same on the four .sys files as a spec loads them. */
Test(defined, sys_files_agree_with_finite_differences) {
  const char *files[] = {"particle.sys", "chaotic_particle.sys", "knife_edge.sys", "cvt.sys"};
  for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
    nh_study st;
    test_load_definition(cache, NHBENCH_SOURCE_DIR "/studies/systems", files[i], &st);
    check_contracts_at_random_points(&st.sys, 3 + i);
    nh_study_free(&st);
  }
}

/* Negative control: the checks see a derivative off by a sign in one entry, one off by 1e-6, and a
 * curvature term without its affine part. */
Test(defined, finite_differences_see_a_wrong_entry) {
  const nh_system_definition def = polar_definition();
  nh_defined_system *d = build(&def, NH_DEFINED_COMPILED);
  nh_system sys = test_defined_system(d);
  const double q[] = {1.1, 0.5, -0.2};
  double g[NH_MAX_N], dM[NH_MAX_N * NH_MAX_N * NH_MAX_N];
  sys.type->grad_potential(sys.p, q, g);
  cr_expect_leq(fd_error(&sys, potential_fn, 1, q, g), FD_TOL);
  g[1] = -g[1];
  cr_expect_gt(fd_error(&sys, potential_fn, 1, q, g), FD_TOL, "a sign error in dV/dphi passes");
  sys.type->mass_jacobian(sys.p, q, dM);
  cr_expect_leq(fd_error(&sys, mass_fn, 9, q, dM), FD_TOL);
  dM[(1 * 3 + 1) * 3 + 0] *= 1 + 1e-6; /* ∂M_φφ/∂r = 2r */
  cr_expect_gt(fd_error(&sys, mass_fn, 9, q, dM), FD_TOL, "dM off by 1e-6 passes");
  /* The kernels' check sees the curvature without its affine part Db[v]. */
  const double v[] = {0.3, -0.8, 0.5}, w[] = {-0.4, 0.2, 0.9};
  cr_expect_leq(kernel_error(&sys, q, v, w, 1), KERNEL_TOL);
  cr_expect_gt(kernel_error(&sys, q, v, w, 0), 1e-3, "the curvature without Db[v] passes");
  nh_defined_system_free(d);
}

/* α(t) = alpha·e^{−t} is flagged time-dependent, so that a method written for a constant α (spark)
 * declines it; a constant α is damping only, and spark takes it. A forcing written as zeros is no
 * forcing (the interface's 0); one that is not is. On the chaotic particle with both. */
Test(defined, damping_and_forcing_flags) {
  nh_system_definition def = chaotic_definition();
  def.nparams = 1, def.param_names[0] = "alpha", def.param_values[0] = 0.1;
  def.damping.text = "alpha*exp(-t)";
  def.has_forcing = 1;
  for (int i = 0; i < 5; i++) def.forcing[i].text = "0";
  char err[512];
  double F[NH_MAX_N];
  nh_method *spark = parse_method("spark");
  for (int constant = 0; constant < 2; constant++) {
    if (constant) def.damping.text = "alpha", def.forcing[2].text = "0.5*sin(t)";
    nh_defined_system *d = build(&def, NH_DEFINED_COMPILED);
    nh_system sys = test_defined_system(d);
    const unsigned f = nh_system_features(&sys);
    cr_expect(f & NH_SYS_DAMPING, "%s: not flagged NH_SYS_DAMPING", def.damping.text);
    cr_expect_eq(!!(f & NH_SYS_TIME_DAMPING), !constant, "%s: NH_SYS_TIME_DAMPING %d", def.damping.text,
                 !!(f & NH_SYS_TIME_DAMPING));
    cr_expect_eq(nh_method_applies(spark, &sys, err, sizeof err) == 0, constant, "spark on %s: %s", def.damping.text,
                 err);
    cr_expect_eq(nh_damping(&sys, 1), constant ? 0.1 : 0.1 * exp(-1.0));
    cr_assert(sys.type->forces && sys.type->forces->forcing);
    if (!constant) {
      cr_expect(!(f & NH_SYS_FORCING), "forcing [0, 0, 0, 0, 0] is flagged NH_SYS_FORCING");
      cr_expect_eq(sys.type->forces->forcing(sys.p, 0.7, F), 0, "forcing [0, 0, 0, 0, 0] returns 1");
      cr_expect_eq(nh_forcing(&sys, 2.5, F), 0);
    } else {
      cr_expect(f & NH_SYS_FORCING, "forcing [0, 0, 0.5 sin t, 0, 0] is not flagged NH_SYS_FORCING");
      cr_expect_eq(nh_forcing(&sys, 1, F), 1);
      cr_expect(F[0] == 0 && F[2] == 0.5 * sin(1.0) && F[4] == 0, "F(1) = (%g, ., %g, ., %g)", F[0], F[2], F[4]);
    }
    nh_defined_system_free(d);
  }
  nh_method_free(spark);
}

/* Steps allocate nothing (tests/contracts/test_no_alloc.c) on definitions, compiled and
 * interpreted: every method that applies, 20 steps each. */
static int count_step_allocations(const nh_system *sys) {
  char texts[MAX_METHODS][256], err[512];
  const int count = method_texts(texts);
  int checked = 0;
  for (int i = 0; i < count; i++) {
    nh_method *m = parse_method(texts[i]);
    if (nh_method_applies(m, sys, err, sizeof err) == 0) {
      nh_state x, y;
      nh_cost cost = {0};
      nh_system_default_state(sys, &x);
      test_init_ok(m, sys, &x, 0.01, &cost);
      test_allocations = 0;
      test_counting = 1;
      for (int s = 0; s < 20; s++) {
        nh_method_step(m, sys, &x, &y, 0.01, &cost);
        x = y;
      }
      test_counting = 0;
      cr_expect_eq(test_allocations, 0, "%s on %s: %ld allocations in 20 steps", texts[i], sys->type->name,
                   test_allocations);
      checked++;
    }
    nh_method_free(m);
  }
  return checked;
}

Test(defined, steps_allocate_nothing) {
  const nh_system_definition defs[] = {chaotic_definition(), chaotic_definition_full(), polar_definition()};
  int checked = 0;
  for (size_t i = 0; i < sizeof defs / sizeof *defs; i++)
    for (int mode = 0; mode < 2; mode++) {
      nh_defined_system *d = build(&defs[i], mode ? NH_DEFINED_INTERPRETED : NH_DEFINED_COMPILED);
      nh_system sys = test_defined_system(d);
      checked += count_step_allocations(&sys);
      nh_defined_system_free(d);
    }
  cr_expect_geq(checked, 30, "only %d (method, system) pairs", checked);
  /* The counter counts here too: building a definition allocates. */
  const nh_system_definition def = chaotic_definition();
  test_allocations = 0;
  test_counting = 1;
  nh_defined_system *d = build(&def, NH_DEFINED_INTERPRETED);
  test_counting = 0;
  cr_expect_gt(test_allocations, 0);
  nh_defined_system_free(d);
}

/* ---- 4. the interpreter's slots ---------------------------------------------------------------- */

/* 8 interpreted systems at once; a 9th is refused with a message; freeing one makes room; compiled
 * systems take no slot; each slot evaluates its own system.
 * BUG (systems/defined.c, reported): the refused 9th build leaves d->slot = NH_DEFINED_SLOTS (attach's
 * search loop ends there), and nh_defined_system_free, called on the failure path, then writes
 * slots[8] = NULL, one past the static array (in this build onto the OpenMP lock pointer
 * .gomp_critical_user_nh_take that follows it). The ordinary build cannot see it; AddressSanitizer
 * reports a global-buffer-overflow at defined.c's slots[d->slot] = NULL (seen on a standalone build
 * of defined.c), so make asan fails here until it is fixed. */
Test(defined, eight_interpreter_slots) {
  nh_system_definition defs[9];
  char texts[9][128], names[9][32];
  nh_defined_system *d[9] = {0};
  for (int i = 0; i < 9; i++) {
    defs[i] = chaotic_definition();
    snprintf(names[i], sizeof names[i], "slot_%d", i);
    snprintf(texts[i], sizeof texts[i], "%d*(x^2 + y1^2) + z1^2 + z2^2 + y2^2", i + 1);
    defs[i].name = names[i], defs[i].potential.text = texts[i];
  }
  for (int i = 0; i < 8; i++) d[i] = build(&defs[i], NH_DEFINED_INTERPRETED);
  const void *origin;
  char err[512] = "", note[512];
  cr_expect_null(nh_defined_system_build(&defs[8], NH_DEFINED_INTERPRETED, &origin, err, sizeof err, note, sizeof note),
                 "a 9th interpreted system");
  cr_expect(strstr(err, "interpreted") && strstr(err, "8"), "refusal: '%s'", err);
  nh_defined_system *compiled = build(&defs[8], NH_DEFINED_COMPILED); /* takes no slot */
  nh_defined_system_free(d[3]);
  d[3] = build(&defs[8], NH_DEFINED_INTERPRETED);
  const double q[] = {1, 1, 0, 0, 0};
  for (int i = 0; i < 8; i++) {
    const nh_system_type *T = nh_defined_system_type(d[i]);
    const double expected = 2.0 * (i == 3 ? 9 : i + 1);
    cr_expect_eq(T->potential(NULL, q), expected, "slot %d: V = %g, expected %g", i, T->potential(NULL, q), expected);
  }
  cr_expect_eq(nh_defined_system_type(compiled)->potential(NULL, q), 18);
  for (int i = 0; i < 8; i++) nh_defined_system_free(d[i]);
  nh_defined_system_free(compiled);
  /* All free again. */
  for (int i = 0; i < 8; i++) d[i] = build(&defs[i], NH_DEFINED_INTERPRETED);
  for (int i = 0; i < 8; i++) nh_defined_system_free(d[i]);
}
