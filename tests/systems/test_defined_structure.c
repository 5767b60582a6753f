/* systems/defined.c: the structure a definition is given from its expressions, as the built-in
 * systems declare it (systems/system.h): constraints_solved_first where A = [I_k | B(q)] as numbers,
 * and NH_CAP_PARTICLE_STRUCTURE where M = I, μ = (−y, 0, 1), ∇V = ω²(x, y, 0) with ω² free of q,
 * no affine part, damping or forcing. Each case changes one thing of the particle or the chaotic
 * particle; a form the simplifier cannot prove (y, 0, −1: the same constraint) is declined, as the
 * built-in declaration would be wrong for it. And the particle schemes decline a definition whose
 * ω² is negative at its parameters. Interpreted builds: no compiler or cache is needed. */
#include <criterion/criterion.h>
#include <string.h>

#include "integrators/integrator.h"
#include "systems/defined.h"

/* ---- the particle structure --------------------------------------------------------------------- */

typedef struct {
  const char *what;
  const char *potential, *row[3], *mass_diagonal, *damping, *affine, *forcing_x;
  int particle; /* the expected verdict */
} particle_case;

static const particle_case particle_cases[] = {
    {"the particle of studies/systems/particle.sys", NULL, {NULL}, NULL, NULL, NULL, NULL, 1},
    {"the free particle", "0", {NULL}, NULL, NULL, NULL, NULL, 1},
    {"V written as two terms", "0.5*omega2*x^2 + 0.5*omega2*y^2", {NULL}, NULL, NULL, NULL, NULL, 1},
    {"a row the rewrites reduce to (-y, 0, 1)", NULL, {"1 - y - 1", "0*x", "1 + 0*z"}, NULL, NULL, NULL, NULL, 1},
    {"two frequencies", "0.5*(x^2 + 2*y^2)", {NULL}, NULL, NULL, NULL, NULL, 0},
    {"a linear term: grad V(0) != 0", "0.5*omega2*(x^2 + y^2) + x", {NULL}, NULL, NULL, NULL, NULL, 0},
    {"a linear term in a parameter", "0.5*omega2*(x^2 + y^2) + omega2*y", {NULL}, NULL, NULL, NULL, NULL, 0},
    {"V reads z", "0.5*omega2*(x^2 + y^2) + 0.5*z^2", {NULL}, NULL, NULL, NULL, NULL, 0},
    {"a mixed term", "0.5*omega2*(x^2 + y^2) + 0.1*x*y", {NULL}, NULL, NULL, NULL, NULL, 0},
    {"a quartic V: its Hessian reads q", "0.5*(x^2 + y^2)^2", {NULL}, NULL, NULL, NULL, NULL, 0},
    {"a row 2y", NULL, {"-2*y", "0", "1"}, NULL, NULL, NULL, NULL, 0},
    {"the same constraint with the opposite sign", NULL, {"y", "0", "-1"}, NULL, NULL, NULL, NULL, 0},
    {"a row with mu_x(0) != 0", NULL, {"0.1 - y", "0", "1"}, NULL, NULL, NULL, NULL, 0},
    {"a row reading x", NULL, {"-y", "x", "1"}, NULL, NULL, NULL, NULL, 0},
    {"a row with mu_z = 2", NULL, {"-y", "0", "2"}, NULL, NULL, NULL, NULL, 0},
    {"a mass 2 for z", NULL, {NULL}, "2", NULL, NULL, NULL, 0},
    {"damping", NULL, {NULL}, NULL, "0.1", NULL, NULL, 0},
    {"an affine part", NULL, {NULL}, NULL, NULL, "0.1", NULL, 0},
    {"a forcing", NULL, {NULL}, NULL, NULL, NULL, "cos(t)", 0},
    {"a forcing that is 0", NULL, {NULL}, NULL, NULL, NULL, "0", 1},
};

/* The particle of studies/systems/particle.sys with the case's changes. */
static nh_system_definition particle_definition(const particle_case *c, double omega2) {
  static const char *const coords[] = {"x", "y", "z"}, *const row[] = {"-y", "0", "1"};
  static const char *const mass[9] = {"1", "0", "0", "0", "1", "0", "0", "0", "1"};
  static const char *const mass_z[9] = {"1", "0", "0", "0", "1", "0", "0", "0", "2"};
  static const char *const forcing[3] = {NULL, "0", "0"};
  nh_system_definition def = {.name = "structure_particle", .n = 3, .k = 1, .mass_identity = 1, .sample_box = 1};
  def.nparams = 1, def.param_names[0] = "omega2", def.param_values[0] = omega2;
  def.potential.text = c->potential ? c->potential : "0.5*omega2*(x^2 + y^2)";
  for (int i = 0; i < 3; i++) {
    def.coords[i] = coords[i];
    def.constraints[i].text = c->row[0] ? c->row[i] : row[i];
    def.q0[i] = 0, def.v0[i] = 0;
  }
  if (c->mass_diagonal) {
    def.mass_identity = 0;
    for (int i = 0; i < 9; i++) def.mass[i].text = (strcmp(c->mass_diagonal, "2") == 0 ? mass_z : mass)[i];
  }
  def.damping.text = c->damping;
  def.affine[0].text = c->affine;
  if (c->forcing_x) {
    def.has_forcing = 1;
    for (int i = 0; i < 3; i++) def.forcing[i].text = i ? forcing[i] : c->forcing_x;
  }
  return def;
}

static nh_defined_system *build(const nh_system_definition *def, const char *what) {
  const void *origin;
  char err[1024], note[256];
  nh_defined_system *d =
      nh_defined_system_build(def, NH_DEFINED_INTERPRETED, &origin, err, sizeof err, note, sizeof note);
  cr_assert(d, "%s: %s", what, err);
  return d;
}

Test(defined_structure, particle_structure_from_the_expressions) {
  int with = 0, without = 0;
  for (size_t i = 0; i < sizeof particle_cases / sizeof *particle_cases; i++) {
    const particle_case *c = &particle_cases[i];
    const nh_system_definition def = particle_definition(c, 1.5);
    nh_defined_system *d = build(&def, c->what);
    const nh_system_type *t = nh_defined_system_type(d);
    const int has = (t->capabilities & NH_CAP_PARTICLE_STRUCTURE) != 0;
    cr_expect_eq(has, c->particle, "%s: NH_CAP_PARTICLE_STRUCTURE %d, expected %d", c->what, has, c->particle);
    cr_expect_eq(t->capabilities & ~(unsigned)NH_CAP_PARTICLE_STRUCTURE, 0u, "%s: other capabilities", c->what);
    cr_expect_eq(t->constraints_solved_first, 0, "%s: mu_x is not 1", c->what);
    with += has, without += !has;
    nh_defined_system_free(d);
  }
  cr_expect(with >= 5 && without >= 10, "%d cases with the structure, %d without", with, without);
}

/* Where the structure is declared, the particle schemes apply, unless ω² < 0 at the parameters. */
Test(defined_structure, particle_schemes_need_a_nonnegative_omega2) {
  const char *const schemes[] = {"js_p1", "js_p2new", "js_p2orig"};
  const double omega2[] = {0, 1.5, -1};
  for (int s = 0; s < 3; s++)
    for (int w = 0; w < 3; w++) {
      const nh_system_definition def = particle_definition(&particle_cases[0], omega2[w]);
      nh_defined_system *d = build(&def, "the particle");
      nh_system sys;
      cr_assert_eq(nh_system_init(&sys, nh_defined_system_type(d)), 0);
      char err[512] = "", perr[256];
      nh_method *m = nh_method_parse(schemes[s], perr, sizeof perr);
      cr_assert(m, "%s", perr);
      const int rc = nh_method_applies(m, &sys, err, sizeof err);
      if (omega2[w] >= 0)
        cr_expect_eq(rc, 0, "%s at omega2 = %g: %s", schemes[s], omega2[w], err);
      else
        cr_expect(rc != 0 && strstr(err, "omega^2") && strstr(err, "-1"), "%s at omega2 = %g: %d '%s'", schemes[s],
                  omega2[w], rc, err);
      nh_method_free(m);
      nh_defined_system_free(d);
    }
}

/* ---- constraints solved for the first k velocities ---------------------------------------------- */

typedef struct {
  const char *what;
  int k;
  const char *rows[2][5];
  int solved_first;
} rows_case;

static const rows_case rows_cases[] = {
    {"the chaotic particle's row", 1, {{"1", "0", "0", "y1", "y2"}}, 1},
    {"a leading 1 the rewrites show", 1, {{"1 + 0*x", "0", "0", "y1", "y2"}}, 1},
    {"a leading 2", 1, {{"2", "0", "0", "y1", "y2"}}, 0},
    {"a leading x", 1, {{"x", "0", "0", "y1", "y2"}}, 0},
    {"a leading 1 in the second place", 1, {{"0", "1", "0", "y1", "y2"}}, 0},
    {"two rows [I | B]", 2, {{"1", "0", "0", "y1", "y2"}, {"0", "1", "sin(x)", "0", "1"}}, 1},
    {"two rows, swapped", 2, {{"0", "1", "sin(x)", "0", "1"}, {"1", "0", "0", "y1", "y2"}}, 0},
    {"two rows, an entry off the diagonal", 2, {{"1", "0.5", "0", "y1", "y2"}, {"0", "1", "sin(x)", "0", "1"}}, 0},
    {"two rows, a 1 below the diagonal", 2, {{"1", "0", "0", "y1", "y2"}, {"1", "1", "sin(x)", "0", "1"}}, 0},
    {"no constraints", 0, {{NULL}}, 0},
};

Test(defined_structure, constraints_solved_first_from_the_expressions) {
  static const char *const coords[] = {"x", "y1", "y2", "z1", "z2"};
  for (size_t i = 0; i < sizeof rows_cases / sizeof *rows_cases; i++) {
    const rows_case *c = &rows_cases[i];
    nh_system_definition def = {.name = "structure_rows", .n = 5, .k = c->k, .mass_identity = 1, .sample_box = 1};
    def.potential.text = "0.5*(x^2 + y1^2 + y2^2 + z1^2 + z2^2 + z1^2*z2^2)";
    for (int j = 0; j < 5; j++) def.coords[j] = coords[j];
    for (int a = 0; a < c->k; a++)
      for (int j = 0; j < 5; j++) def.constraints[a * 5 + j].text = c->rows[a][j];
    nh_defined_system *d = build(&def, c->what);
    const nh_system_type *t = nh_defined_system_type(d);
    cr_expect_eq(t->constraints_solved_first, c->solved_first, "%s: constraints_solved_first %d, expected %d", c->what,
                 t->constraints_solved_first, c->solved_first);
    cr_expect_eq(t->capabilities, 0u, "%s: not a particle", c->what);
    /* rk4_reduced follows the declaration */
    nh_system sys;
    char err[512], perr[256];
    cr_assert_eq(nh_system_init(&sys, t), 0);
    nh_method *m = nh_method_parse("rk4_reduced", perr, sizeof perr);
    cr_assert(m, "%s", perr);
    cr_expect_eq(nh_method_applies(m, &sys, err, sizeof err) == 0, c->solved_first, "%s: rk4_reduced", c->what);
    nh_method_free(m);
    nh_defined_system_free(d);
  }
}
