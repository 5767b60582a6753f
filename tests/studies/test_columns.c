/* The study kinds' result columns (studies/columns.h) and the kinds' registry (studies/kinds.h):
 * dimension sizes and counts, allocation, journal slots, and, for every kind, that its file holds
 * each column its table declares, with the descriptor's dimensions, units and description. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "results/results.h"
#include "studies/kinds.h"
#include "studies/settings.h"
#include "tests/hand_study.h"
#include "tests/helpers.h"

/* ---- dimensions ---------------------------------------------------------------------------- */

static nh_column_dims three_dims(void) {
  nh_column_dims d = {0};
  nh_column_dims_set(&d, "method", 3);
  nh_column_dims_set(&d, "h", 4);
  nh_column_dims_set(&d, "state", 6);
  return d;
}

Test(columns, counts_from_a_dimension_on) {
  const nh_column_dims d = three_dims();
  const nh_result_column c = {"x", "method,h,state", NH_COLUMN_F64, 0, 0, NULL, "1", "x"};
  cr_expect_eq(nh_column_count(&c, &d, 0), 72);
  cr_expect_eq(nh_column_count(&c, &d, 1), 24);
  cr_expect_eq(nh_column_count(&c, &d, 2), 6);
  cr_expect_eq(nh_column_count(&c, &d, 3), 1, "past the last dimension: one element per task");
  const nh_result_column one = {"y", "h", NH_COLUMN_F64, 0, 0, NULL, "1", "y"};
  cr_expect_eq(nh_column_count(&one, &d, 0), 4);
  const nh_result_column unknown = {"z", "method,hh", NH_COLUMN_F64, 0, 0, NULL, "1", "z"};
  cr_expect_eq(nh_column_count(&unknown, &d, 0), -1, "a dimension named by a prefix of another's name is unknown");
  const nh_result_column prefix = {"w", "metho", NH_COLUMN_F64, 0, 0, NULL, "1", "w"};
  cr_expect_eq(nh_column_count(&prefix, &d, 0), -1);
}

Test(columns, dimensions_set_replace_and_fill) {
  nh_column_dims d = three_dims();
  cr_expect_eq(nh_column_dims_set(&d, "h", 9), 0);
  cr_expect_eq(d.n, 3, "setting a known dimension replaces its size");
  cr_expect_eq(nh_column_dim(&d, "h"), 9);
  cr_expect_eq(nh_column_dim(&d, "sample"), -1);
  char names[NH_COLUMN_MAX_DIMS][16];
  for (int i = d.n; i < NH_COLUMN_MAX_DIMS; i++) {
    snprintf(names[i], sizeof names[i], "d%d", i);
    cr_assert_eq(nh_column_dims_set(&d, names[i], i), 0);
  }
  cr_expect_eq(nh_column_dims_set(&d, "one_more", 1), -1, "the table is full");
  cr_expect_eq(nh_column_dim(&d, names[NH_COLUMN_MAX_DIMS - 1]), NH_COLUMN_MAX_DIMS - 1);
}

Test(columns, dimensions_of_a_study) {
  const char *methods[] = {"rk4", "nh_rattle"};
  nh_study st = test_hand_study(NH_STUDY_TRAJECTORY, "hand", "knife_edge", NULL, methods, 2, NULL, 1);
  st.nh = 5, st.repeats = 7, st.count = 11;
  nh_column_dims d;
  nh_column_dims_of_study(&st, &d);
  cr_expect_eq(nh_column_dim(&d, "method"), 2);
  cr_expect_eq(nh_column_dim(&d, "h"), 5);
  cr_expect_eq(nh_column_dim(&d, "ic"), 1, "a trajectory's initial conditions");
  cr_expect_eq(nh_column_dim(&d, "dof"), st.sys.n);
  cr_expect_eq(nh_column_dim(&d, "state"), 2 * st.sys.n);
  cr_expect_eq(nh_column_dim(&d, "multiplier"), st.sys.k);
  cr_expect_eq(nh_column_dim(&d, "repeat"), 7);
  cr_expect_eq(nh_column_dim(&d, "norm"), NH_WP_NORMS);
  cr_expect_eq(nh_column_dim(&d, "lambda_slot"), NH_MAX_K);
  st.kind = NH_STUDY_ENSEMBLE, st.nsamples = 13;
  nh_kind_dims(nh_study_kinds[NH_STUDY_ENSEMBLE], &st, NULL, &d);
  cr_expect_eq(nh_column_dim(&d, "ic"), 11, "an ensemble's count (its own dimension)");
  cr_expect_eq(nh_column_dim(&d, "sample"), 13);
  cr_expect_eq(nh_column_dim(&d, "method"), 2);
  test_hand_study_release(&st);
}

/* ---- allocation and journal slots ---------------------------------------------------------- */

typedef struct {
  double *a;
  int *b;
  nh_cost *c;
  double *d;
  double *absent;
} toy_result;

static int never(const nh_study *st) { return st == NULL; }
static const nh_column_condition never_held = {never, "never"};

#define TOY(field) offsetof(toy_result, field)
static const nh_result_column toy_columns[] = {
    {"a", "method,h", NH_COLUMN_F64, TOY(a), NH_COLUMN_JOURNALED, NULL, "1", "a"},
    {"b", "method", NH_COLUMN_I32, TOY(b), 0, NULL, "1", "b"},
    {"c", "method,h", NH_COLUMN_COST, TOY(c), NH_COLUMN_JOURNALED, NULL, NULL, "c"},
    {"d", "method,h,state", NH_COLUMN_F64, TOY(d), NH_COLUMN_JOURNALED, NULL, "1", "d"},
    {"absent", "method,h", NH_COLUMN_F64, TOY(absent), NH_COLUMN_JOURNALED, &never_held, "1", "absent"},
    {NULL}};

Test(columns, allocation_zeroes_present_columns_and_free_clears_them) {
  const nh_study st = {0};
  const nh_column_dims d = three_dims();
  toy_result r = {0};
  cr_assert_eq(nh_result_columns_alloc(toy_columns, &st, &d, &r), 0);
  cr_assert(r.a && r.b && r.c && r.d);
  cr_expect_null(r.absent, "a column the study does not have is not allocated");
  for (int i = 0; i < 12; i++) cr_expect_eq(r.a[i], 0.0);
  for (int i = 0; i < 3; i++) cr_expect_eq(r.b[i], 0);
  for (int i = 0; i < 72; i++) cr_expect_eq(r.d[i], 0.0);
  cr_expect_eq(r.c[11].steps, 0);
  cr_expect_eq(nh_column_data(&toy_columns[3], &r), (void *)r.d);
  nh_result_columns_free(toy_columns, &r);
  cr_expect(!r.a && !r.b && !r.c && !r.d && !r.absent);
}

Test(columns, a_dimension_of_size_zero_still_allocates) {
  const nh_study st = {0};
  nh_column_dims d = three_dims();
  nh_column_dims_set(&d, "state", 0); /* a system without constraints has no multiplier */
  toy_result r = {0};
  cr_assert_eq(nh_result_columns_alloc(toy_columns, &st, &d, &r), 0);
  cr_expect_not_null(r.d);
  nh_result_columns_free(toy_columns, &r);
}

Test(columns, an_unknown_dimension_fails_the_allocation) {
  const nh_study st = {0};
  nh_column_dims d = {0};
  nh_column_dims_set(&d, "method", 3); /* no h */
  toy_result r = {0};
  cr_expect_eq(nh_result_columns_alloc(toy_columns, &st, &d, &r), -1);
  nh_result_columns_free(toy_columns, &r);
}

Test(columns, journal_slots_of_the_journaled_columns) {
  const nh_study st = {0};
  const nh_column_dims d = three_dims();
  toy_result r = {0};
  cr_assert_eq(nh_result_columns_alloc(toy_columns, &st, &d, &r), 0);
  nh_task_slot slots[8];
  const int n = nh_result_columns_slots(toy_columns, &st, &d, 2, &r, slots, 8);
  cr_assert_eq(n, 3, "a, c and d: b is not journaled, absent not held");
  cr_expect_eq(slots[0].base, (void *)r.a);
  cr_expect_eq(slots[0].type, NH_SLOT_DOUBLE);
  cr_expect_eq(slots[0].per, 1);
  cr_expect_eq(slots[1].base, (void *)r.c);
  cr_expect_eq(slots[1].type, NH_SLOT_COST);
  cr_expect_eq(slots[1].per, 1);
  cr_expect_eq(slots[2].base, (void *)r.d);
  cr_expect_eq(slots[2].per, 6, "a task's state");
  cr_expect_eq(nh_result_columns_slots(toy_columns, &st, &d, 1, &r, slots, 8), 3);
  cr_expect_eq(slots[2].per, 24, "tasks over methods only: a method's h × state");
  cr_expect_eq(nh_result_columns_slots(toy_columns, &st, &d, 2, &r, slots, 2), -1, "no room for the third");
  nh_result_columns_free(toy_columns, &r);
}

/* ---- the registry ------------------------------------------------------------------------- */

Test(kinds, registry_in_the_order_of_the_enum) {
  for (int k = 0; k < NH_STUDY_KINDS; k++) {
    const nh_study_kind_type *t = nh_study_kinds[k];
    cr_assert_not_null(t);
    cr_expect_eq((int)t->kind, k);
    cr_expect_str_eq(nh_study_kind_name((nh_study_kind)k), t->name);
    cr_expect_eq(nh_study_kind_named(t->name), t);
    cr_expect(t->doc && t->doc[0] && t->run && t->free_result && t->columns && t->result_size > 0);
  }
  cr_expect_null(nh_study_kind_named("convergenc"));
  cr_expect_null(nh_study_kind_named(NULL));
  cr_expect_str_eq(nh_study_kind_name(NH_STUDY_WORK_PRECISION), "work_precision");
}

/* The dimensions a task of each kind spans: the leading dimensions of its journaled columns. */
static const char *const task_dims[NH_STUDY_KINDS] = {
    [NH_STUDY_CONVERGENCE] = "method,h,",   [NH_STUDY_ENSEMBLE] = NULL, /* its own journal */
    [NH_STUDY_TRAJECTORY] = "method,h,ic,", [NH_STUDY_ONESTEP] = "method,h,point,",
    [NH_STUDY_WORK_PRECISION] = "method,h,"};

Test(kinds, columns_are_well_formed) {
  for (int k = 0; k < NH_STUDY_KINDS; k++) {
    const nh_study_kind_type *t = nh_study_kinds[k];
    nh_column_dims d = {0};
    const char *dims[] = {"method", "h", "ic", "dof", "state", "multiplier", "repeat", "norm", "lambda_slot",
                          "point", "sample"};
    for (size_t i = 0; i < sizeof dims / sizeof *dims; i++) nh_column_dims_set(&d, dims[i], 2);
    for (const nh_result_column *c = t->columns; c->name; c++) {
      cr_expect_gt(nh_column_count(c, &d, 0), 0, "%s/%s: dimensions '%s'", t->name, c->name, c->dims);
      cr_expect(c->doc && c->doc[0], "%s/%s has no description", t->name, c->name);
      cr_expect(c->type == NH_COLUMN_COST || (c->units && c->units[0]), "%s/%s has no units", t->name, c->name);
      cr_expect_leq(c->field + sizeof(void *), t->result_size, "%s/%s", t->name, c->name);
      cr_expect(!(c->flags & NH_COLUMN_SCALE) || !strchr(c->dims, ','), "%s/%s: a scale is 1-D", t->name, c->name);
      for (const nh_result_column *o = t->columns; o < c; o++) {
        cr_expect_str_neq(o->name, c->name, "%s: two columns named %s", t->name, c->name);
        cr_expect_neq(o->field, c->field, "%s: %s and %s share a field", t->name, o->name, c->name);
      }
      if (c->flags & NH_COLUMN_JOURNALED) {
        char with_comma[64];
        snprintf(with_comma, sizeof with_comma, "%s,", c->dims);
        cr_expect(task_dims[k] && strncmp(with_comma, task_dims[k], strlen(task_dims[k])) == 0,
                  "%s/%s is journaled but its dimensions '%s' do not start with a task's", t->name, c->name, c->dims);
      }
    }
  }
}

/* ---- each kind's file holds its columns --------------------------------------------------- */

/* Every column of the kind that is written, in the file at path with its descriptor's attributes;
 * those a setting leaves out (present->setting) are there exactly when `with_settings`. */
static void expect_columns_in_file(const char *path, nh_study_kind kind, int with_settings) {
  nh_h5 f;
  cr_assert_eq(nh_h5_open(&f, "test", path), 0);
  cr_assert_eq(f.kind, kind);
  int checked = 0;
  for (const nh_result_column *c = nh_study_kinds[kind]->columns; c->name; c++) {
    if (c->flags & NH_COLUMN_SCRATCH) {
      cr_expect_not(nh_h5_has(&f, c->name), "%s: scratch column %s was written", path, c->name);
      continue;
    }
    const int expected = !(c->present && c->present->setting) || with_settings;
    cr_expect_eq(nh_h5_has(&f, c->name), expected, "%s: column %s", path, c->name);
    if (!expected || !nh_h5_has(&f, c->name)) continue;
    char *dims = nh_h5_attr_string(&f, c->name, "dimensions"), *desc = nh_h5_attr_string(&f, c->name, "description");
    cr_expect_str_eq(dims, c->dims, "%s: %s", path, c->name);
    cr_expect_str_eq(desc, c->doc, "%s: %s", path, c->name);
    if (c->type != NH_COLUMN_COST) {
      char *units = nh_h5_attr_string(&f, c->name, "units");
      cr_expect_str_eq(units, c->units, "%s: %s", path, c->name);
      free(units);
    }
    free(dims), free(desc);
    checked++;
  }
  cr_expect_gt(checked, 2);
  nh_h5_close(&f);
}

static void kind_file(nh_study_kind kind, const char *tag, const char *spec, const char *set, int with_settings) {
  char path[256];
  test_results_file(path, sizeof path, "columns", tag, spec, set);
  expect_columns_in_file(path, kind, with_settings);
  unlink(path);
}

/* The command line journals every run, so its ensemble streams dE and the statistics per sample
 * from the journal (the rows in memory: tests/results/test_results.c). */
Test(kinds, every_kind_writes_its_columns, .timeout = 120) {
  kind_file(NH_STUDY_CONVERGENCE, "convergence", "order_claim.cfg", "", 1);
  kind_file(NH_STUDY_ENSEMBLE, "ensemble", "small_ensemble.cfg", "", 1);
  kind_file(NH_STUDY_TRAJECTORY, "trajectory", "trajectory_particle.cfg", "", 0);
  kind_file(NH_STUDY_TRAJECTORY, "round-trip", "trajectory_particle.cfg", "--set round_trip=true", 1);
  kind_file(NH_STUDY_ONESTEP, "onestep", "onestep_random.cfg", "", 1);
  kind_file(NH_STUDY_WORK_PRECISION, "work-precision", "work_precision_small.cfg", "", 1);
}

/* ---- each kind's file keeps its settings ----------------------------------------------------- */

/* The settings the table says a kind stores (studies/settings.c, nh_setting.stored) are attributes of
 * its group, with the values the spec and --set gave (written here, not read from the study): a
 * field or a name mixed up, or a stored setting left out, fails. */
typedef struct {
  const char *attr, *value; /* a number as %.17g, or the text */
} stored_value;

static void expect_stored(nh_study_kind kind, const char *spec, const char *set, const stored_value *want) {
  char path[256];
  test_results_file(path, sizeof path, "columns", "stored", spec, set);
  nh_h5 f;
  cr_assert_eq(nh_h5_open(&f, "test", path), 0);
  int declared = 0, found = 0;
  for (const nh_setting *s = nh_settings; s->name; s++)
    for (const nh_setting_attr *a = s->stored; a && a->attr; a++) declared += nh_setting_stored_by(a, nh_study_kinds[kind]);
  for (const stored_value *v = want; v->attr; v++, found++) {
    char got[64] = "?";
    double x;
    if (nh_h5_attr_is_string(&f, ".", v->attr)) {
      char *text = nh_h5_attr_string(&f, ".", v->attr);
      snprintf(got, sizeof got, "%s", text ? text : "?");
      free(text);
    } else if (nh_h5_attr_double(&f, ".", v->attr, &x) == 0) {
      snprintf(got, sizeof got, "%.17g", x);
    }
    cr_expect_str_eq(got, v->value, "%s: attribute %s", nh_study_kind_name(kind), v->attr);
  }
  cr_expect_eq(found, declared, "%s: %d stored settings declared, %d checked", nh_study_kind_name(kind), declared,
               found);
  nh_h5_close(&f);
  unlink(path);
}

Test(kinds, every_kind_stores_its_settings, .timeout = 120) {
  expect_stored(NH_STUDY_CONVERGENCE, "order_claim.cfg", "--set fit_points=4 --set order_tolerance=0.25 --set norm=2",
                (const stored_value[]){{"initial", "discretization"},
                                       {"fit_points", "4"},
                                       {"order_tolerance", "0.25"},
                                       {"norm", "2"},
                                       {NULL}});
  expect_stored(NH_STUDY_ENSEMBLE, "small_ensemble.cfg", "--set divergence=500",
                (const stored_value[]){{"grids", "1"},
                                       {"sample_every", "2"},
                                       {"divergence", "500"},
                                       {"count", "5"},
                                       {"random_ics", "1"},
                                       {"energy", "1.5349999999999999"},
                                       {"seed", "7"},
                                       {NULL}});
  expect_stored(NH_STUDY_TRAJECTORY, "trajectory_particle.cfg",
                "--set sample_every=4 --set divergence=250 --set reference_tol=1e-12",
                (const stored_value[]){
                    {"reference_tol", "9.9999999999999998e-13"}, {"sample_every", "4"}, {"divergence", "250"}, {NULL}});
  expect_stored(NH_STUDY_ONESTEP, "onestep_random.cfg", "--set norm=2 --set reference_tol=1e-11 --set ensemble.seed=9",
                (const stored_value[]){{"reference_tol", "9.9999999999999994e-12"},
                                       {"norm", "2"},
                                       {"npoints", "2"},
                                       {"random_ics", "1"},
                                       {"energy", "1.5349999999999999"},
                                       {"seed", "9"},
                                       {NULL}});
  expect_stored(NH_STUDY_WORK_PRECISION, "work_precision_small.cfg", "--set time_limit=30 --set norm=2",
                (const stored_value[]){{"initial", "discretization"},
                                       {"norm", "2"},
                                       {"repeats", "2"},
                                       {"time_limit", "30"},
                                       {NULL}});
}
