/* Malformed systems written in a spec (issue 50, studies/spec_system.c, systems/defined.c,
 * core/expr.c): each definition below is refused at load by the nhbench the tests run, with exit
 * status 2, the file and line of the offending setting (or the --set argument that gave it) and the
 * offending text in the message, nothing written to the output path, and no crash, leak or
 * sanitizer report ("Done when" of issue 50: 30 malformed definitions; make asan runs them too).
 *
 * Each case is the body of `system = { ... }` in a minimal trajectory study; the spec's lines are
 *   1  study = "trajectory";
 *   2  system = {
 *   3  (the body's first line) ...
 *      };  T, h, methods, observables
 * so that a body's line i is the spec's line 2 + i. Most bodies start with the three lines of
 * HEAD (name on line 3, q = [x, y] on line 4, potential on line 5), and a sixth line holds the
 * setting a case breaks. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, setenv */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/helpers.h"

#define HEAD                                                                                                           \
  "  name = \"mine\";\n"                                                                                               \
  "  q = [\"x\", \"y\"];\n"
#define HEAD_V HEAD "  potential = \"x^2 + y^2\";\n"

/* 250 nested parentheses around x: past the parser's NH_EXPR_MAX_NESTING (200). */
#define OPEN10 "(((((((((("
#define OPEN50 OPEN10 OPEN10 OPEN10 OPEN10 OPEN10
#define CLOSE10 "))))))))))"
#define CLOSE50 CLOSE10 CLOSE10 CLOSE10 CLOSE10 CLOSE10
#define DEEP OPEN50 OPEN50 OPEN50 OPEN50 OPEN50 "x" CLOSE50 CLOSE50 CLOSE50 CLOSE50 CLOSE50

typedef struct {
  const char *name;  /* the case, in every message */
  const char *body;  /* inside system = { ... }, from the spec's line 3 */
  const char *sys;   /* NULL, or the text of bad.sys, next to the spec (the body includes it) */
  const char *set;   /* NULL, or a --set argument */
  const char *where; /* expected after the directory: "spec.cfg:5:", "bad.sys:4:", "spec.cfg: --set system.q:" */
  const char *text;  /* expected in the message: the offending text */
  const char *also;  /* NULL, or a second expected part (the reason) */
} bad_definition;

static const bad_definition cases[] = {
    /* ---- expressions that do not parse ---- */
    {"unbalanced_open", HEAD "  potential = \"(x + 1\";\n", NULL, NULL, "spec.cfg:5:", "'(x + 1'", "expected ')'"},
    {"unbalanced_close", HEAD "  potential = \"x^2)\";\n", NULL, NULL, "spec.cfg:5:", "'x^2)'", "')'"},
    {"trailing_operator", HEAD "  potential = \"x^2 +\";\n", NULL, NULL, "spec.cfg:5:", "'x^2 +'", NULL},
    {"implicit_product", HEAD "  potential = \"2x\";\n", NULL, NULL, "spec.cfg:5:", "'2x'", NULL},
    {"double_star_power", HEAD "  potential = \"x**2\";\n", NULL, NULL, "spec.cfg:5:", "'x**2'", "'*'"},
    {"empty_expression", HEAD "  potential = \"\";\n", NULL, NULL, "spec.cfg:5:", "potential", "empty"},
    {"too_deep_nesting", HEAD "  potential = \"" DEEP "\";\n", NULL, NULL, "spec.cfg:5:", "'" OPEN10, "deeper"},
    {"number_out_of_range", HEAD "  potential = \"1e400*x^2\";\n", NULL, NULL, "spec.cfg:5:", "1e400", "range"},
    /* ---- names an expression may not read ---- */
    {"coordinate_typo", HEAD "  potential = \"xx^2 + y^2\";\n", NULL, NULL, "spec.cfg:5:", "'xx'", "unknown name"},
    {"velocity_in_potential", HEAD "  potential = \"x^2 + vx^2\";\n", NULL, NULL, "spec.cfg:5:", "'vx'", "potential"},
    {"time_in_potential", HEAD "  potential = \"x^2*t\";\n", NULL, NULL, "spec.cfg:5:", "'t'", "potential"},
    {"coordinate_in_damping", HEAD_V "  damping = \"0.1*y\";\n", NULL, NULL, "spec.cfg:6:", "'y'", "damping"},
    {"coordinate_in_forcing", HEAD_V "  forcing = [\"0\", \"sin(t)*x\"];\n", NULL, NULL, "spec.cfg:6:", "'x'",
     "forcing[1]"},
    {"time_in_invariant", HEAD_V "  invariants = { E = \"x + t\"; };\n", NULL, NULL, "spec.cfg:6:", "'t'",
     "invariants"},
    {"unknown_name_in_invariant", HEAD_V "  invariants = { E = \"x + vz\"; };\n", NULL, NULL, "spec.cfg:6:", "'vz'",
     NULL},
    {"velocity_in_affine", HEAD_V "  constraints = ( [\"1\", \"y\"] );\n  affine = [\"vx\"];\n", NULL, NULL,
     "spec.cfg:7:", "'vx'", "affine"},
    /* ---- functions ---- */
    {"abs", HEAD "  potential = \"abs(x) + y^2\";\n", NULL, NULL, "spec.cfg:5:", "abs", "not differentiable"},
    {"floor", HEAD "  potential = \"floor(x)\";\n", NULL, NULL, "spec.cfg:5:", "floor", "not differentiable"},
    {"min", HEAD "  potential = \"min(x, y)\";\n", NULL, NULL, "spec.cfg:5:", "min", "not differentiable"},
    {"sign", HEAD "  potential = \"sign(x)*x^2\";\n", NULL, NULL, "spec.cfg:5:", "sign", "not differentiable"},
    {"unknown_function", HEAD "  potential = \"foo(x)\";\n", NULL, NULL, "spec.cfg:5:", "'foo'", NULL},
    {"two_arguments", HEAD "  potential = \"atan(x, y)\";\n", NULL, NULL, "spec.cfg:5:", "'atan(x, y)'",
     "one argument"},
    /* ---- sizes ---- */
    {"constraint_row_too_long", HEAD_V "  constraints = ( [\"1\", \"0\", \"y\"] );\n", NULL, NULL,
     "spec.cfg:6:", "3 entries", "constraint row"},
    {"constraint_row_too_short", HEAD_V "  constraints = ( [\"1\", \"y\"],\n                  [\"0\"] );\n", NULL, NULL,
     "spec.cfg:7:", "1 entries", "constraint row"},
    {"constraint_row_not_a_list", HEAD_V "  constraints = ( \"1\", \"0\" );\n", NULL, NULL,
     "spec.cfg:6:", "constraint row", NULL},
    {"more_constraints_than_allowed",
     "  name = \"mine\";\n  q = [\"a\", \"b\", \"c\", \"d\", \"e\", \"f\"];\n  potential = \"a^2\";\n"
     "  constraints = ( [\"1\",\"0\",\"0\",\"0\",\"0\",\"0\"], [\"0\",\"1\",\"0\",\"0\",\"0\",\"0\"],"
     " [\"0\",\"0\",\"1\",\"0\",\"0\",\"0\"], [\"0\",\"0\",\"0\",\"1\",\"0\",\"0\"], "
     "[\"0\",\"0\",\"0\",\"0\",\"1\",\"0\"] );\n",
     NULL, NULL, "spec.cfg:6:", "constraints", "at most 4"},
    {"as_many_constraints_as_coordinates", HEAD_V "  constraints = ( [\"1\", \"0\"], [\"0\", \"1\"] );\n", NULL, NULL,
     "spec.cfg:6:", "2 constraints", NULL},
    {"mass_wrong_rows", HEAD_V "  mass = ( [\"1\", \"0\"] );\n", NULL, NULL, "spec.cfg:6:", "mass", "2 rows"},
    {"mass_wrong_columns", HEAD_V "  mass = ( [\"1\", \"0\"],\n           [\"0\"] );\n", NULL, NULL,
     "spec.cfg:7:", "mass row has 1 entries", NULL},
    {"forcing_wrong_length", HEAD_V "  forcing = [\"0\"];\n", NULL, NULL, "spec.cfg:6:", "forcing has 1 entries", NULL},
    {"q0_wrong_length", HEAD_V "  q0 = [1.0];\n", NULL, NULL, "spec.cfg:6:", "q0", "2 numbers"},
    {"v0_wrong_length", HEAD_V "  v0 = [1.0, 2.0, 3.0];\n", NULL, NULL, "spec.cfg:6:", "v0", "2 numbers"},
    {"affine_wrong_length", HEAD_V "  constraints = ( [\"1\", \"y\"] );\n  affine = [\"0\", \"1\"];\n", NULL, NULL,
     "spec.cfg:7:", "affine has 2 entries", NULL},
    {"affine_without_constraints", HEAD_V "  affine = [\"1\"];\n", NULL, NULL, "spec.cfg:6:", "affine", NULL},
    {"too_many_parameters",
     HEAD "  params = { a = 1.0; b = 1.0; c = 1.0; d = 1.0; e = 1.0; f = 1.0; g = 1.0; h = 1.0; i = 1.0; };\n"
          "  potential = \"x^2\";\n",
     NULL, NULL, "spec.cfg:5:", "9 params", "at most 8"},
    {"too_many_invariants", HEAD_V "  invariants = { a = \"x\"; b = \"x\"; c = \"x\"; d = \"x\"; e = \"x\"; };\n", NULL,
     NULL, "spec.cfg:6:", "invariants", "at most 4"},
    /* ---- the mass matrix ---- */
    {"mass_not_symmetric", HEAD_V "  mass = ( [\"1\", \"x\"],\n           [\"0\", \"1\"] );\n", NULL, NULL,
     "spec.cfg:7:", "'x'", "not symmetric"},
    {"mass_not_positive_definite", HEAD_V "  mass = ( [\"1\", \"0\"], [\"0\", \"-1\"] );\n", NULL, NULL,
     "spec.cfg:6:", "mass", "positive definite"},
    {"mass_unit", HEAD_V "  mass = \"unit\";\n", NULL, NULL, "spec.cfg:6:", "'unit'", "identity"},
    {"mass_entry_syntax", HEAD_V "  mass = ( [\"1\", \"0\"],\n           [\"0\", \"1 +\"] );\n", NULL, NULL,
     "spec.cfg:7:", "'1 +'", "mass[1][1]"},
    {"mass_entry_infinite", HEAD_V "  mass = ( [1.0, 0.0], [0.0, 1e400] );\n", NULL, NULL, "spec.cfg:6:", "finite",
     NULL},
    /* ---- coordinates and names ---- */
    {"q_not_a_list", "  name = \"mine\";\n  q = \"x\";\n  potential = \"x^2\";\n", NULL, NULL,
     "spec.cfg:4:", "q must be a list", NULL},
    {"q_empty", "  name = \"mine\";\n  q = [];\n  potential = \"1\";\n", NULL, NULL, "spec.cfg:4:", "q must be a list",
     NULL},
    {"q_too_many",
     "  name = \"mine\";\n  q = [\"a\", \"b\", \"c\", \"d\", \"e\", \"f\", \"g\", \"h\", \"i\"];\n  potential = "
     "\"a^2\";\n",
     NULL, NULL, "spec.cfg:4:", "q must be a list", "1 to 8"},
    {"coordinate_starts_with_digit", "  name = \"mine\";\n  q = [\"2x\", \"y\"];\n  potential = \"y^2\";\n", NULL, NULL,
     "spec.cfg:4:", "'2x'", "not a name"},
    {"coordinate_with_space", "  name = \"mine\";\n  q = [\"x y\", \"z\"];\n  potential = \"z^2\";\n", NULL, NULL,
     "spec.cfg:4:", "'x y'", "not a name"},
    {"coordinate_duplicated", "  name = \"mine\";\n  q = [\"x\", \"x\"];\n  potential = \"x^2\";\n", NULL, NULL,
     "spec.cfg:4:", "'x'", "named twice"},
    {"coordinate_named_t", "  name = \"mine\";\n  q = [\"t\", \"y\"];\n  potential = \"y^2\";\n", NULL, NULL,
     "spec.cfg:4:", "'t'", "time"},
    {"coordinate_named_pi", "  name = \"mine\";\n  q = [\"pi\", \"y\"];\n  potential = \"y^2\";\n", NULL, NULL,
     "spec.cfg:4:", "'pi'", "constant"},
    {"coordinate_named_sin", "  name = \"mine\";\n  q = [\"sin\", \"y\"];\n  potential = \"y^2\";\n", NULL, NULL,
     "spec.cfg:4:", "'sin'", "function"},
    {"parameter_named_as_coordinate", HEAD "  params = { x = 1.0; };\n  potential = \"y^2\";\n", NULL, NULL,
     "spec.cfg:5:", "'x'", "parameter"},
    {"coordinate_named_as_a_velocity", "  name = \"mine\";\n  q = [\"x\", \"vx\"];\n  potential = \"x^2\";\n", NULL,
     NULL, "spec.cfg:4:", "'vx'", "velocity"},
    {"name_of_a_builtin_system", "  name = \"chaotic_particle\";\n  q = [\"x\", \"y\"];\n  potential = \"x^2\";\n",
     NULL, NULL, "spec.cfg:3:", "'chaotic_particle'", "built-in"},
    {"name_not_a_name", "  name = \"my system\";\n  q = [\"x\", \"y\"];\n  potential = \"x^2\";\n", NULL, NULL,
     "spec.cfg:3:", "'my system'", "not a name"},
    {"name_not_a_string", "  name = 3;\n  q = [\"x\", \"y\"];\n  potential = \"x^2\";\n", NULL, NULL,
     "spec.cfg:3:", "name must be", NULL},
    /* ---- the group's settings ---- */
    {"member_typo", HEAD_V "  potental = \"x^2\";\n", NULL, NULL, "spec.cfg:6:", "'potental'", "potential"},
    {"missing_potential", HEAD, NULL, NULL, "spec.cfg:2:", "'potential'", "missing"},
    {"missing_name", "  q = [\"x\", \"y\"];\n  potential = \"x^2\";\n", NULL, NULL, "spec.cfg:2:", "'name'", "missing"},
    {"missing_q", "  name = \"mine\";\n  potential = \"x^2\";\n", NULL, NULL, "spec.cfg:2:", "'q'", "missing"},
    {"invariants_not_a_group", HEAD_V "  invariants = \"x\";\n", NULL, NULL,
     "spec.cfg:6:", "invariants must be a group", NULL},
    {"params_not_a_group", HEAD "  params = 3;\n  potential = \"x^2\";\n", NULL, NULL,
     "spec.cfg:5:", "params must be a group", NULL},
    {"parameter_is_a_string", HEAD "  params = { eps = \"a\"; };\n  potential = \"eps*x^2\";\n", NULL, NULL,
     "spec.cfg:5:", "\"a\"", "'eps'"},
    {"parameter_infinite", HEAD "  params = { eps = 1e400; };\n  potential = \"eps*x^2\";\n", NULL, NULL,
     "spec.cfg:5:", "'eps'", "finite"},
    {"q0_not_numbers", HEAD_V "  q0 = [\"a\", \"b\"];\n", NULL, NULL, "spec.cfg:6:", "\"a\"", "q0"},
    {"sample_box_negative", HEAD_V "  sample_box = -1.0;\n", NULL, NULL, "spec.cfg:6:", "sample_box", "positive"},
    /* ---- a definition in a file of its own ---- */
    {"included_unknown_name", "  @include \"bad.sys\"\n",
     "# a system\nname = \"included\";\nq = [\"x\", \"y\"];\n\npotential = \"x^2 + yy\";\n", NULL, "bad.sys:5:", "'yy'",
     "unknown name"},
    {"included_member_typo", "  @include \"bad.sys\"\n",
     "name = \"included\";\nq = [\"x\", \"y\"];\npotential = \"x^2\";\ndampin = \"0.1\";\n", NULL,
     "bad.sys:4:", "'dampin'", "damping"},
    {"included_mass_not_positive_definite", "  @include \"bad.sys\"\n",
     "name = \"included\";\nq = [\"x\", \"y\"];\npotential = \"x^2\";\nmass = ( [\"1\", \"0\"],\n         [\"0\", "
     "\"-1\"] );\n",
     NULL, "bad.sys:4:", "mass", "positive definite"},
    /* ---- --set over a definition ---- */
    {"set_potential", HEAD_V, NULL, "system.potential=x+", "spec.cfg: --set system.potential:", "'x+'", NULL},
    {"set_mass", HEAD_V, NULL, "system.mass=unit", "spec.cfg: --set system.mass:", "'unit'", NULL},
    {"set_q_duplicated", HEAD_V, NULL, "system.q=[\"x\",\"x\"]", "spec.cfg: --set system.q:", "'x'", NULL},
    {"set_q0_wrong_length", HEAD_V, NULL, "system.q0=[1]", "spec.cfg: --set system.q0:", "q0", "2 numbers"},
    {"set_name_of_a_builtin_system", HEAD_V, NULL, "system.name=chaotic_particle",
     "spec.cfg: --set system.name:", "'chaotic_particle'", NULL},
};

#define NCASES (sizeof cases / sizeof *cases)

typedef struct {
  int index; /* into cases[] (an index: the parameter crosses into Criterion's test process) */
} case_ref;

ParameterizedTestParameters(defined_errors, refused) {
  static case_ref refs[NCASES];
  for (size_t i = 0; i < NCASES; i++) refs[i].index = (int)i;
  return cr_make_param_array(case_ref, refs, NCASES);
}

ParameterizedTest(case_ref *ref, defined_errors, refused, .timeout = 60) {
  const bad_definition *c = &cases[ref->index];
  char dir[64] = "/tmp/nhbench-deferr-XXXXXX", cache[64] = "/tmp/nhbench-deferr-cache-XXXXXX";
  cr_assert(mkdtemp(dir) && mkdtemp(cache), "%s: mkdtemp: %s", c->name, strerror(errno));
  setenv("NHBENCH_CACHE_DIR", cache, 1);

  char spec[128], out[128], errpath[128], cmd[4096];
  snprintf(spec, sizeof spec, "%s/spec.cfg", dir);
  snprintf(out, sizeof out, "%s/out.h5", dir);
  snprintf(errpath, sizeof errpath, "%s/stderr.txt", dir);
  FILE *f = fopen(spec, "w");
  cr_assert(f, "%s: cannot write %s", c->name, spec);
  fprintf(f,
          "study = \"trajectory\";\nsystem = {\n%s};\nT = 1.0;\nh = [0.1];\nmethods = [\"rk4\"];\n"
          "observables = [\"energy_error\"];\n",
          c->body);
  fclose(f);
  if (c->sys) {
    char sys[128];
    snprintf(sys, sizeof sys, "%s/bad.sys", dir);
    test_write_file(sys, c->sys);
  }
  snprintf(cmd, sizeof cmd, "%s run %s -o %s%s%s%s 2>%s", NHBENCH_EXE, spec, out, c->set ? " --set '" : "",
           c->set ? c->set : "", c->set ? "'" : "", errpath);
  char stdout_text[4096], err[16384];
  const int rc = test_run_command(cmd, stdout_text, sizeof stdout_text);
  test_read_file(errpath, err, sizeof err);
  const int written = access(out, F_OK) == 0;

  char where[256];
  snprintf(where, sizeof where, "%s/%s", dir, c->where);
  cr_expect_eq(rc, 2, "%s: exit status %d, not 2; stderr:\n%s", c->name, rc, err);
  cr_expect(!written, "%s: %s was written", c->name, out);
  cr_expect(strstr(err, where) != NULL, "%s: stderr does not place the error at '%s':\n%s", c->name, c->where, err);
  cr_expect(strstr(err, c->text) != NULL, "%s: stderr does not name '%s':\n%s", c->name, c->text, err);
  cr_expect(!c->also || strstr(err, c->also) != NULL, "%s: stderr lacks '%s':\n%s", c->name, c->also, err);
  cr_expect(strncmp(err, "nhbench: ", 9) == 0, "%s: stderr does not start with 'nhbench: ':\n%s", c->name, err);
  static const char *const crashes[] = {"Sanitizer", "runtime error", "leak", "Segmentation", "Aborted", NULL};
  for (int i = 0; crashes[i]; i++)
    cr_expect(strstr(err, crashes[i]) == NULL, "%s: stderr reports '%s':\n%s", c->name, crashes[i], err);

  test_remove_tree(dir);
  test_remove_tree(cache);
}

/* The table has the 30 cases at least, and every case a distinct name. */
Test(defined_errors, enough_cases) {
  cr_expect_geq(NCASES, 30);
  for (size_t i = 0; i < NCASES; i++)
    for (size_t j = i + 1; j < NCASES; j++)
      cr_expect_str_neq(cases[i].name, cases[j].name, "case %zu and %zu share a name", i, j);
}
