/* systems/defined.c: the paths tests/systems/test_defined.c leaves out: every refusal of a
 * definition (sizes, names, what a quantity may read, an unsymmetric mass), each with its message and
 * the origin handed back; which optional parts of the built table are present (forces, affine,
 * kernels, the acceleration kernel, mass_jacobian, invariants) and which functions the generated C
 * holds; the modes without a compiler (NH_DEFINED_COMPILED refused, NH_DEFINED_AUTO interpreted with
 * a note); a cached object without the functions the source should define; and out-of-memory at
 * every allocation of a build. Each test has its own cache directory (NHBENCH_CACHE_DIR, a fresh
 * mkdtemp directory removed afterwards) and gives back the environment it changes. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, setenv, strdup */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/native.h"
#include "systems/defined.h"
#include "tests/compile_cache.h"
#include "tests/heap_guard.h"
#include "tests/helpers.h"

static char cache[64]; /* this test's NHBENCH_CACHE_DIR */
static char *saved_cc, *saved_cache;

static void setup(void) {
  const char *cc = getenv("NHBENCH_CC"), *dir = getenv("NHBENCH_CACHE_DIR");
  saved_cc = cc ? strdup(cc) : NULL, saved_cache = dir ? strdup(dir) : NULL;
  snprintf(cache, sizeof cache, "/tmp/nh-defined-paths-XXXXXX");
  cr_assert(mkdtemp(cache), "mkdtemp: %s", strerror(errno));
  setenv("NHBENCH_CACHE_DIR", cache, 1);
  unsetenv("NHBENCH_CC");
}

static void restore(const char *name, char *value) {
  if (value)
    setenv(name, value, 1);
  else
    unsetenv(name);
  free(value);
}

static void teardown(void) {
  test_remove_tree(cache);
  restore("NHBENCH_CC", saved_cc);
  restore("NHBENCH_CACHE_DIR", saved_cache);
}

TestSuite(defined_paths, .init = setup, .fini = teardown);

/* Origins: distinct addresses the refusals must hand back. */
static const char whole, name_at, coords_at, constraints_at, mass_at, box_at, param_at[2], potential_at, damping_at,
    forcing_at[3], affine_at[2], invariant_at[2], mass_entry_at[9];

/* A small definition: (x, y, z) with one constraint row (1, 0, y), M = I, V = ½c|q|², one parameter c, every text with
 * its origin. */
static nh_system_definition base(void) {
  static const char *const coords[] = {"x", "y", "z"};
  static const char *const row[] = {"1", "0", "y"};
  nh_system_definition def = {.name = "dp_base",
                              .origin = &whole,
                              .name_origin = &name_at,
                              .constraints_origin = &constraints_at,
                              .mass_origin = &mass_at,
                              .sample_box_origin = &box_at,
                              .coords_origin = &coords_at,
                              .n = 3,
                              .k = 1,
                              .nparams = 1,
                              .mass_identity = 1,
                              .sample_box = 1};
  for (int i = 0; i < 3; i++) def.coords[i] = coords[i], def.constraints[i].text = row[i];
  def.param_names[0] = "c", def.param_values[0] = 2, def.param_origins[0] = &param_at[0];
  def.potential = (nh_defined_text){"0.5*c*(x^2 + y^2 + z^2)", &potential_at};
  def.q0[0] = 1;
  return def;
}

/* The build refused: NULL, a message holding want, and origin. */
static void expect_refused(const nh_system_definition *def, const char *want, const void *origin, const char *what) {
  const void *at = (const void *)"unset";
  char err[1024] = "", note[256] = "x";
  nh_defined_system *d = nh_defined_system_build(def, NH_DEFINED_INTERPRETED, &at, err, sizeof err, note, sizeof note);
  cr_expect_null(d, "%s: built", what);
  nh_defined_system_free(d);
  cr_expect(strstr(err, want), "%s: '%s', expected '%s'", what, err, want);
  cr_expect_eq(at, origin, "%s: origin %p, expected %p ('%s')", what, at, origin, err);
  cr_expect_str_eq(note, "", "%s: note", what);
}

Test(defined_paths, sizes_refused) {
  nh_system_definition def = base();
  def.name = NULL;
  expect_refused(&def, "name '' is not a name", &name_at, "no name");
  def.name = "2fast";
  expect_refused(&def, "name '2fast' is not a name", &name_at, "a digit first");
  def.name = "a-b";
  expect_refused(&def, "name 'a-b' is not a name", &name_at, "a '-'");
  def.name = "particle";
  expect_refused(&def, "name 'particle' is a built-in system's", &name_at, "a built-in name");
  def = base(), def.n = 0, def.k = 0;
  expect_refused(&def, "0 coordinates: between 1 and 8", &coords_at, "n = 0");
  def.n = NH_MAX_N + 1;
  expect_refused(&def, "9 coordinates: between 1 and 8", &coords_at, "n = 9");
  def = base(), def.k = -1;
  expect_refused(&def, "-1 constraints for 3 coordinates", &constraints_at, "k = -1");
  def.k = 3;
  expect_refused(&def, "3 constraints for 3 coordinates: between 0 and min(4, n - 1)", &constraints_at, "k = n");
  def.n = NH_MAX_N, def.k = NH_MAX_K + 1;
  expect_refused(&def, "5 constraints for 8 coordinates", &constraints_at, "k = 5");
  def = base(), def.nparams = -1;
  expect_refused(&def, "-1 parameters: at most", &whole, "nparams = -1");
  def.nparams = NH_MAX_PARAMS + 1;
  expect_refused(&def, "parameters: at most", &whole, "too many parameters");
  def = base(), def.ninvariants = -1;
  expect_refused(&def, "-1 invariants: at most", &whole, "ninvariants = -1");
  def.ninvariants = NH_MAX_INVARIANTS + 1;
  expect_refused(&def, "invariants: at most", &whole, "too many invariants");
  def = base(), def.sample_box = 0;
  expect_refused(&def, "sample_box 0: must be positive", &box_at, "sample_box 0");
  def.sample_box = NAN;
  expect_refused(&def, "must be positive", &box_at, "sample_box NaN");
}

Test(defined_paths, names_refused) {
  nh_system_definition def = base();
  def.ninvariants = 2;
  def.invariant_names[0] = "E", def.invariants[0] = (nh_defined_text){"x", &invariant_at[0]};
  def.invariant_names[1] = "L 2", def.invariants[1] = (nh_defined_text){"y", &invariant_at[1]};
  expect_refused(&def, "invariant name 'L 2' is not a name", &invariant_at[1], "an invariant name with a space");
  def = base();
  def.affine[1] = (nh_defined_text){"x", &affine_at[1]};
  expect_refused(&def, "affine[1]: the definition has 1 constraint rows", &affine_at[1], "affine past k");
  def = base(), def.coords[2] = "x";
  expect_refused(&def, "coordinate 'x' is named twice", &coords_at, "a coordinate twice");
  def = base(), def.coords[1] = "t";
  expect_refused(&def, "coordinate 't': t is the time; choose another name", &coords_at, "a coordinate t");
  def = base(), def.param_names[0] = "t";
  expect_refused(&def, "parameter 't': t is the time", &param_at[0], "a parameter t");
  def = base(), def.param_names[0] = "vz";
  expect_refused(&def, "parameter 'vz': vz is the velocity of coordinate 'z'; choose another name", &param_at[0],
                 "a parameter named as a velocity");
  def = base(), def.coords[0] = "vy";
  expect_refused(&def, "coordinate 'vy': vy is the velocity of coordinate 'y'", &coords_at,
                 "a coordinate named as another's velocity");
  def = base(), def.coords[1] = "1y";
  expect_refused(&def, "coordinate '1y' is not a name", &coords_at, "a coordinate not a name");
  def = base(), def.coords[1] = NULL;
  expect_refused(&def, "coordinate '' is not a name", &coords_at, "a coordinate without a name");
  def = base(), def.param_names[0] = "c-1";
  expect_refused(&def, "parameter 'c-1' is not a name", &param_at[0], "a parameter not a name");
}

/* Each quantity reads what its place passes only; a missing text; a parse error; an unsymmetric mass. */
Test(defined_paths, texts_refused) {
  nh_system_definition def = base();
  def.potential.text = "x*vy";
  expect_refused(&def, "potential may read the coordinates and the parameters only, not 'vy' (in 'x*vy')",
                 &potential_at, "V reads a velocity");
  def.potential.text = "x*t";
  expect_refused(&def, "potential may read the coordinates and the parameters only, not 't'", &potential_at,
                 "V reads t");
  def.potential.text = NULL;
  expect_refused(&def, "potential: missing", &potential_at, "no V");
  def.potential.text = "x +* y";
  expect_refused(&def, "potential: ", &potential_at, "V does not parse");
  def = base(), def.damping = (nh_defined_text){"c*x", &damping_at};
  expect_refused(&def, "damping may read t and the parameters only, not 'x'", &damping_at, "alpha reads q");
  def = base(), def.has_forcing = 1;
  def.forcing[0] = (nh_defined_text){"0", &forcing_at[0]};
  def.forcing[1] = (nh_defined_text){"sin(t)*vz", &forcing_at[1]};
  def.forcing[2] = (nh_defined_text){"0", &forcing_at[2]};
  expect_refused(&def, "forcing[1] may read t and the parameters only, not 'vz'", &forcing_at[1], "F reads v");
  def = base(), def.ninvariants = 1;
  def.invariant_names[0] = "E", def.invariants[0] = (nh_defined_text){"vx^2 + t", &invariant_at[0]};
  expect_refused(&def, "invariants[0] may read the coordinates, the velocities and the parameters only, not 't'",
                 &invariant_at[0], "an invariant reads t");
  def = base(), def.constraints[1] = (nh_defined_text){"vx", &constraints_at};
  expect_refused(&def, "constraints[0][1] may read the coordinates and the parameters only, not 'vx'", &constraints_at,
                 "A reads v");
  def = base(), def.affine[0] = (nh_defined_text){"t", &affine_at[0]};
  expect_refused(&def, "affine[0] may read the coordinates and the parameters only, not 't'", &affine_at[0],
                 "b reads t");
  def = base(), def.mass_identity = 0;
  static const char *const mass[9] = {"1", "0.1", "0", "0", "1", "0", "0", "0", "1"};
  for (int i = 0; i < 9; i++) def.mass[i] = (nh_defined_text){mass[i], &mass_entry_at[i]};
  expect_refused(&def, "mass is not symmetric: mass[0][1] = '0.1' but mass[1][0] = '0'", &mass_entry_at[3],
                 "M not symmetric");
  def.mass[1].text = "0", def.mass[4].text = "1 + vx^2";
  expect_refused(&def, "mass[1][1] may read the coordinates and the parameters only, not 'vx'", &mass_entry_at[4],
                 "M reads v");
}

/* Builds def in mode, asserting success. */
static nh_defined_system *build(const nh_system_definition *def, nh_defined_mode mode, char *note, size_t notelen) {
  const void *origin;
  char err[1024];
  nh_defined_system *d = nh_defined_system_build(def, mode, &origin, err, sizeof err, note, notelen);
  cr_assert(d, "%s: %s", def->name, err);
  return d;
}

/* The parts of the table: present exactly where the definition has them, in both evaluations;
 * the generated C holds the functions for them and no others. */
Test(defined_paths, optional_parts_of_the_table) {
  for (int mode = 0; mode < 2; mode++) {
    const nh_defined_mode m = mode ? NH_DEFINED_INTERPRETED : NH_DEFINED_COMPILED;
    /* k = 0, M = I, nothing else: no forces, affine, kernels, invariants, mass_jacobian */
    nh_system_definition def = base();
    def.k = 0, def.name = "dp_free";
    nh_defined_system *d = build(&def, m, NULL, 0);
    cr_expect_eq(nh_defined_system_compiled(d), !mode);
    const nh_system_type *T = nh_defined_system_type(d);
    cr_expect_str_eq(T->name, "dp_free");
    cr_expect_eq(T->n, 3);
    cr_expect_eq(T->k, 0);
    cr_expect_eq(T->nparams, 1);
    cr_expect_str_eq(T->params[0].name, "c");
    cr_expect_eq(T->params[0].def, 2.0);
    cr_expect_null(T->forces);
    cr_expect_null(T->affine);
    cr_expect_null(T->kernels);
    cr_expect_null(T->mass_jacobian);
    cr_expect_null(T->knowledge->invariants);
    cr_expect_eq(T->constraints, nh_no_constraints);
    cr_expect_eq(T->constraints_jacobian, nh_no_constraints);
    cr_expect(strstr(T->doc, "3 coordinates, 0 constraints, V = "), "%s", T->doc);
    cr_expect(strstr(T->knowledge->sampler_doc, "generic"), "%s", T->knowledge->sampler_doc);
    const double q[] = {1, 2, 3};
    cr_expect_eq(T->potential((const double[]){2}, q), 14.0);
    const char *src = nh_defined_system_source(d);
    const char *present[] = {"nhs_mass(", "nhs_potential(", "nhs_grad_potential(", "nhs_hess_potential("};
    const char *absent[] = {"nhs_mass_jacobian", "nhs_constraints", "nhs_affine",
                            "nhs_curvature",     "nhs_derivative",  "nhs_damping",
                            "nhs_forcing",       "nhs_invariants",  "nhs_acceleration"};
    for (size_t i = 0; i < sizeof present / sizeof *present; i++)
      cr_expect(strstr(src, present[i]), "k = 0: no %s in\n%s", present[i], src);
    for (size_t i = 0; i < sizeof absent / sizeof *absent; i++)
      cr_expect_null(strstr(src, absent[i]), "k = 0: %s in\n%s", absent[i], src);
    cr_expect(strstr(src, "system 'dp_free'"), "%s", src);
    nh_defined_system_free(d);

    /* k = 1, M = I, linear: the kernels and the acceleration kernel, no affine part */
    def = base(), def.name = "dp_unit";
    d = build(&def, m, NULL, 0);
    T = nh_defined_system_type(d);
    cr_assert(T->kernels);
    cr_expect(T->kernels->constraint_curvature && T->kernels->constraint_derivative && T->kernels->acceleration);
    cr_expect_null(T->affine);
    cr_expect_null(T->forces);
    cr_expect_null(T->mass_jacobian);
    src = nh_defined_system_source(d);
    cr_expect(strstr(src, "nhs_constraints(") && strstr(src, "nhs_constraints_jacobian(") &&
                  strstr(src, "nhs_curvature(") && strstr(src, "nhs_derivative(") && strstr(src, "nhs_acceleration("),
              "%s", src);
    cr_expect_null(strstr(src, "nhs_affine"));
    double a[3] = {0}, lambda[1] = {0};
    const double p[] = {2}, qq[] = {1, 2, 3}, v[] = {0, 1, 0};
    cr_expect_eq(T->kernels->acceleration(p, 0, qq, v, a, lambda), 0);
    /* f = −c q = (−2, −4, −6), A = (1, 0, y) = (1, 0, 2), curvature v_y v_z = 0: λ = −A f / |A|² = 14/5,
     * a = f + Aᵀλ */
    cr_expect(fabs(lambda[0] - 14.0 / 5) < 1e-15, "lambda = %.17g", lambda[0]);
    cr_expect(fabs(a[0] - (-2 + 14.0 / 5)) < 1e-15 && a[1] == -4 && fabs(a[2] - (-6 + 28.0 / 5)) < 1e-15,
              "a = (%g, %g, %g)", a[0], a[1], a[2]);
    nh_defined_system_free(d);

    /* an affine part, constant damping (no time dependence), a forcing: the acceleration kernel
     * goes, forces and affine come, and the sampler says it does not draw */
    def = base(), def.name = "dp_forced";
    def.affine[0].text = "c*x";
    def.damping.text = "0.5*c";
    def.has_forcing = 1;
    def.forcing[0].text = "sin(t)", def.forcing[1].text = "0", def.forcing[2].text = "c";
    d = build(&def, m, NULL, 0);
    T = nh_defined_system_type(d);
    cr_assert(T->forces && T->affine && T->kernels);
    cr_expect_null(T->kernels->acceleration, "damping and forcing: no acceleration kernel");
    cr_expect(T->forces->damping && T->forces->forcing);
    cr_expect_null(T->forces->time_dependence, "a constant alpha");
    cr_expect_eq(T->forces->damping(p, 5), 1.0);
    double F[3];
    cr_expect_eq(T->forces->forcing(p, 0.5, F), 1);
    cr_expect(F[0] == sin(0.5) && F[1] == 0 && F[2] == 2, "F = (%g, %g, %g)", F[0], F[1], F[2]);
    cr_expect(strstr(T->knowledge->sampler_doc, "none"), "%s", T->knowledge->sampler_doc);
    src = nh_defined_system_source(d);
    cr_expect(strstr(src, "nhs_affine(") && strstr(src, "nhs_affine_jacobian(") && strstr(src, "nhs_damping(") &&
                  strstr(src, "nhs_forcing("),
              "%s", src);
    cr_expect_null(strstr(src, "nhs_acceleration"));
    nh_defined_system_free(d);

    /* damping only: forces without forcing; forcing only (zeros): forces without damping, and the
     * acceleration kernel stays (F ≡ 0 is conservative) */
    def = base(), def.name = "dp_damped", def.damping.text = "c*exp(-t)";
    d = build(&def, m, NULL, 0);
    T = nh_defined_system_type(d);
    cr_assert(T->forces);
    cr_expect(T->forces->damping && !T->forces->forcing && T->forces->time_dependence);
    cr_expect_eq(T->forces->time_dependence(p), NH_SYS_TIME_DAMPING);
    nh_defined_system_free(d);
    def = base(), def.name = "dp_zero_force", def.has_forcing = 1;
    for (int i = 0; i < 3; i++) def.forcing[i].text = "0*c";
    d = build(&def, m, NULL, 0);
    T = nh_defined_system_type(d);
    cr_assert(T->forces && T->forces->forcing);
    cr_expect_null(T->forces->damping);
    cr_expect_eq(T->forces->forcing(p, 1, F), 0, "F = 0 returns 0");
    cr_expect(T->kernels && T->kernels->acceleration, "F = 0: the acceleration kernel stays");
    nh_defined_system_free(d);

    /* a constant mass other than I written out: no mass_jacobian, no acceleration kernel; the
     * identity written out: the acceleration kernel */
    for (int identity = 0; identity < 2; identity++) {
      def = base(), def.name = "dp_constant_mass", def.mass_identity = 0;
      const char *diag = identity ? "1" : "2*c";
      for (int i = 0; i < 9; i++) def.mass[i].text = i % 4 == 0 ? diag : "0";
      d = build(&def, m, NULL, 0);
      T = nh_defined_system_type(d);
      cr_expect_null(T->mass_jacobian, "a constant mass");
      cr_expect_null(strstr(nh_defined_system_source(d), "nhs_mass_jacobian"));
      cr_expect_eq(!!T->kernels->acceleration, identity, "mass %s: acceleration kernel", diag);
      double M[9];
      T->mass(p, qq, M);
      cr_expect(M[0] == (identity ? 1 : 4) && M[1] == 0 && M[8] == M[0], "M00 = %g", M[0]);
      nh_defined_system_free(d);
    }
    /* a q-dependent mass: mass_jacobian present */
    def = base(), def.name = "dp_variable_mass", def.mass_identity = 0;
    for (int i = 0; i < 9; i++) def.mass[i].text = i == 0 ? "1 + z^2" : i % 4 == 0 ? "1" : "0";
    d = build(&def, m, NULL, 0);
    T = nh_defined_system_type(d);
    cr_assert(T->mass_jacobian);
    cr_expect_null(T->kernels->acceleration);
    double dM[27];
    T->mass_jacobian(p, qq, dM);
    cr_expect_eq(dM[2], 6.0, "dM00/dz at z = 3");
    cr_expect_eq(dM[0], 0.0);
    cr_expect(strstr(nh_defined_system_source(d), "nhs_mass_jacobian("));
    nh_defined_system_free(d);

    /* invariants: the names copied, the values read q and v */
    def = base(), def.name = "dp_invariants", def.ninvariants = 2;
    char name0[] = "energy_y";
    def.invariant_names[0] = name0, def.invariants[0].text = "0.5*(vy^2 + c*y^2)";
    def.invariant_names[1] = "p", def.invariants[1].text = "vx";
    d = build(&def, m, NULL, 0);
    name0[0] = 'X'; /* borrowed for the build only */
    T = nh_defined_system_type(d);
    cr_assert(T->knowledge->invariants);
    cr_expect_eq(T->knowledge->invariants->count, 2);
    cr_expect_str_eq(T->knowledge->invariants->names[0], "energy_y");
    cr_expect_str_eq(T->knowledge->invariants->names[1], "p");
    double I[2];
    const double vv[] = {7, 3, 0};
    T->knowledge->invariants->values(p, qq, vv, I);
    cr_expect(I[0] == 0.5 * (9 + 8) && I[1] == 7, "I = (%g, %g)", I[0], I[1]);
    cr_expect(strstr(nh_defined_system_source(d), "nhs_invariants("));
    nh_defined_system_free(d);
  }
}

/* No compiler (NHBENCH_CC=none): NH_DEFINED_COMPILED refused with the reason; NH_DEFINED_AUTO falls
 * back to the interpreter with a note giving it; the generated source exists all the same. With a
 * compiler, AUTO compiles and notes nothing. */
Test(defined_paths, modes_without_a_compiler) {
  nh_system_definition def = base();
  char err[1024] = "", note[1024] = "x";
  const void *origin = NULL;
  nh_defined_system *d = build(&def, NH_DEFINED_AUTO, note, sizeof note);
  cr_expect_eq(nh_defined_system_compiled(d), 1);
  cr_expect_str_eq(note, "");
  nh_defined_system_free(d);
  setenv("NHBENCH_CC", "none", 1);
  cr_expect_null(nh_defined_system_build(&def, NH_DEFINED_COMPILED, &origin, err, sizeof err, note, sizeof note));
  cr_expect_str_eq(err, "system 'dp_base' could not be compiled: no C compiler: NHBENCH_CC is 'none'");
  cr_expect_eq(origin, &whole);
  d = build(&def, NH_DEFINED_AUTO, note, sizeof note);
  cr_expect_eq(nh_defined_system_compiled(d), 0);
  cr_expect_str_eq(note, "system 'dp_base' runs on the expression interpreter, several times slower than compiled: "
                         "no C compiler: NHBENCH_CC is 'none'");
  cr_expect(strstr(nh_defined_system_source(d), "nhs_potential("));
  const double p[] = {2}, q[] = {1, 1, 1};
  cr_expect_eq(nh_defined_system_type(d)->potential(p, q), 3.0);
  nh_defined_system_free(d);
  d = build(&def, NH_DEFINED_AUTO, NULL, 0); /* no note asked for */
  cr_expect_eq(nh_defined_system_compiled(d), 0);
  nh_defined_system_free(d);
  setenv("NHBENCH_CC", "", 1); /* empty: the same, said so */
  note[0] = '\0';
  d = build(&def, NH_DEFINED_AUTO, note, sizeof note);
  cr_expect(strstr(note, "NHBENCH_CC is empty"), "%s", note);
  nh_defined_system_free(d);
}

/* The one object in the cache directory, into path. */
static void only_object(char *path, size_t len) {
  DIR *dir = opendir(cache);
  cr_assert(dir);
  int n = 0;
  for (struct dirent *e; (e = readdir(dir));)
    if (!strncmp(e->d_name, "nhbench-", 8)) snprintf(path, len, "%s/%s", cache, e->d_name), n++;
  closedir(dir);
  cr_assert_eq(n, 1, "%d objects", n);
}

/* A cached object that loads but lacks a function the definition needs: the build is refused, at
 * the definition's origin, with nothing left allocated, naming the function: nhs_mass first,
 * nhs_acceleration where only it is missing (the message was once lost: written from its own buffer). */
Test(defined_paths, cached_object_without_the_functions) {
  const nh_system_definition def = base();
  char path[4096], err[1024], note[256];
  const void *origin = NULL;
  nh_defined_system *d = build(&def, NH_DEFINED_COMPILED, NULL, 0);
  char *source = strdup(nh_defined_system_source(d));
  cr_assert(source);
  nh_defined_system_free(d);
  only_object(path, sizeof path);
  test_replace_object(path, "int nhbench_unrelated;\n");
  const long live = test_live_blocks();
  cr_expect_null(nh_defined_system_build(&def, NH_DEFINED_COMPILED, &origin, err, sizeof err, note, sizeof note));
  cr_expect_str_eq(err, "generated code has no nhs_mass");
  cr_expect_eq(origin, &whole);
  if (live >= 0) cr_expect_eq(test_live_blocks(), live, "the refused build left a block");
  /* every function but the acceleration kernel */
  char *cut = strstr(source, "static int nhs_unit_mass_acceleration");
  cr_assert(cut, "no acceleration kernel in\n%s", source);
  *cut = '\0';
  test_replace_object(path, source);
  cr_expect_null(nh_defined_system_build(&def, NH_DEFINED_COMPILED, &origin, err, sizeof err, note, sizeof note));
  cr_expect_str_eq(err, "generated code has no nhs_acceleration");
  cr_expect_eq(origin, &whole);
  /* The interpreter is not a fallback for a cached object that loads: AUTO refuses it too. */
  cr_expect_null(nh_defined_system_build(&def, NH_DEFINED_AUTO, &origin, err, sizeof err, note, sizeof note));
  free(source);
}

/* Out of memory at each allocation of a build in turn, interpreted and compiled: NULL, an "out of
 * memory" message (also where a derivative's node could not be built: it once came back with no
 * message at all), nothing left allocated; past the last, the build succeeds. */
Test(defined_paths, allocation_failures) {
  nh_system_definition def = base();
  def.name = "dp_everything", def.mass_identity = 0;
  for (int i = 0; i < 9; i++) def.mass[i].text = i == 0 ? "1 + z^2" : i % 4 == 0 ? "1" : "0";
  def.affine[0].text = "c*x", def.damping.text = "c*exp(-t)", def.has_forcing = 1;
  for (int i = 0; i < 3; i++) def.forcing[i].text = "sin(t)";
  def.ninvariants = 1, def.invariant_names[0] = "E", def.invariants[0].text = "vx*x";
  for (int mode = 0; mode < 2; mode++) {
    const nh_defined_mode m = mode ? NH_DEFINED_COMPILED : NH_DEFINED_INTERPRETED;
    nh_defined_system_free(build(&def, m, NULL, 0)); /* compiled once: the rest are cache hits */
    const long live = test_live_blocks();
    int fired = 0, failures = 0, silent = 0, at = 1;
    for (; at < 100000; at++) {
      char err[1024] = "", note[256];
      const void *origin = NULL;
      fired = 0;
      test_fail_fired = &fired;
      test_fail_allocation = at;
      nh_defined_system *d = nh_defined_system_build(&def, m, &origin, err, sizeof err, note, sizeof note);
      test_fail_allocation = 0;
      test_fail_fired = NULL;
      if (!fired) {
        cr_expect(d, "allocation %d did not fail, yet: %s", at, err);
        nh_defined_system_free(d);
        break;
      }
      if (d) { /* a failure the build can take: only where the interpreter is a fallback, not here */
        cr_expect_fail("mode %d: allocation %d failed and the build succeeded", mode, at);
        nh_defined_system_free(d);
        continue;
      }
      failures++;
      if (!err[0]) silent++;
      cr_expect(strstr(err, "out of memory"), "mode %d: allocation %d: '%s'", mode, at, err);
      if (live >= 0) cr_expect_eq(test_live_blocks(), live, "mode %d: allocation %d: a block not freed", mode, at);
    }
    cr_expect_gt(failures, 20, "mode %d: only %d allocations", mode, failures);
    cr_expect_eq(silent, 0, "mode %d: %d of %d failed allocations without a message", mode, silent, failures);
  }
}
