/* The study groups of the five study kinds (schema: results/README.md). */
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/text.h"
#include "results/schema.h"
#include "results/writer.h"
#include "studies/settings.h"

static const char *norm_name(nh_norm n) { return n == NH_NORM_2 ? "2" : "max"; }

/* The spec's settings the kind's file keeps as attributes of its group, as the settings table says
 * (studies/settings.c, nh_setting.stored), each from its field of the study. */
static void stored_settings(nh_writer *w, hid_t g) {
  const nh_study *st = w->st;
  for (const nh_setting *s = nh_settings; s->name; s++)
    for (const nh_setting_attr *a = s->stored; a && a->attr; a++) {
      if (!nh_setting_stored_by(a, w->kind)) continue;
      const void *field = (const char *)st + a->field;
      switch (a->type) {
      case NH_STORED_I32: nh_w_attr_i32(w, g, a->attr, *(const int *)field); break;
      case NH_STORED_I64: nh_w_attr_i64(w, g, a->attr, (long long)*(const uint64_t *)field); break;
      case NH_STORED_F64: nh_w_attr_f64(w, g, a->attr, *(const double *)field); break;
      case NH_STORED_TEXT: nh_w_attr_str(w, g, a->attr, *(char *const *)field); break;
      case NH_STORED_NORM: nh_w_attr_str(w, g, a->attr, norm_name(*(const nh_norm *)field)); break;
      }
    }
}

/* A result field a derivation reads: 1 if there, else the write fails naming it. */
static int have(nh_writer *w, const void *field, const char *name) {
  if (!field) nh_w_fail(w, "no data for %s (a result field left unset)", name);
  return !w->failed;
}

/* States as [count][n] rows of q (or v); NULL (the write failed) if out of memory. */
static double *state_rows(nh_writer *w, const nh_state *x, int count, int n, int velocities) {
  double *out = nh_w_array(w, (size_t)count * (size_t)n, sizeof(double));
  for (int i = 0; out && i < count; i++)
    memcpy(out + (size_t)i * n, velocities ? x[i].v : x[i].q, sizeof(double) * (size_t)n);
  return out;
}

/* The given initial conditions st->ics, [ic][dof]. */
static void common_given(nh_writer *w, hid_t g, int nic) {
  const nh_study *st = w->st;
  if (!st->ics && nic > 1) nh_w_fail(w, "%s", "no initial conditions (study field ics unset)");
  if (w->failed) return;
  double *q = state_rows(w, st->ics ? st->ics : &st->x0, nic, st->sys.n, 0);
  double *v = state_rows(w, st->ics ? st->ics : &st->x0, nic, st->sys.n, 1);
  char *const first[1] = {st->initial};
  nh_w_common(w, g, nic, q, v, st->ic_names ? st->ic_names : first);
  free(q), free(v);
}

static void step_sizes(nh_writer *w, hid_t g) {
  nh_w_dim(w, "h", w->st->nh);
  nh_w_scale_f64(w, g, "h", "h", w->st->h, "time", "step sizes, in the spec's order");
}

static void reference_state(nh_writer *w, hid_t g, const nh_state *ref, const char *kind, const char *what) {
  const int n = w->st->sys.n;
  double x[2 * NH_MAX_N];
  memcpy(x, ref->q, sizeof(double) * (size_t)n);
  memcpy(x + n, ref->v, sizeof(double) * (size_t)n);
  nh_w_f64(w, g, "reference_state", "state", x, "as q, v", what);
  nh_w_attr_str(w, g, "reference", kind);
}

/* How accurate the reference is (studies/reference.c): the tolerance it was computed at, after
 * "auto" tightened it, and its estimated error against a run at check_tol. */
static void reference_accuracy(nh_writer *w, hid_t g, const nh_study_reference *ref) {
  nh_w_attr_f64(w, g, "reference_tol", ref->tol);
  nh_w_attr_f64(w, g, "reference_check_tol", ref->check_tol);
  nh_w_attr_f64(w, g, "reference_error", ref->error);
  nh_w_attr_str(w, g, "reference_tol_rule", w->st->reference_tol_auto ? NH_REFERENCE_TOL_AUTO : "given");
}

/* The error floor of the order fits: the spec's (NaN: "auto") and its rule (the floor itself is the
 * kind's column fit_floor). */
static void fit_floor_rule(nh_writer *w, hid_t g) {
  const nh_study *st = w->st;
  nh_w_attr_f64(w, g, "error_floor", st->error_floor_auto ? NAN : st->error_floor);
  nh_w_attr_str(w, g, "error_floor_rule",
                st->error_floor_auto ? NH_ERROR_FLOOR_AUTO : "given: max(error_floor, 10 reference_error)");
}

/* Per method over h: runs that failed, the largest residual (NaN values left out), total wall time. */
static void run_summary(nh_writer *w, hid_t g, const int *status, const double *residual, const double *wall) {
  const int nm = w->st->nmethods, nh = w->st->nh;
  int *failures = nh_w_array(w, (size_t)nm, sizeof(int));
  double *rmax = nh_w_array(w, (size_t)nm, sizeof(double)), *wsum = nh_w_array(w, (size_t)nm, sizeof(double));
  for (int m = 0; wsum && m < nm; m++) { /* wsum allocated: so were the others (nh_w_array) */
    rmax[m] = NAN;
    for (int i = 0; i < nh; i++) {
      size_t c = (size_t)m * nh + i;
      failures[m] += status[c] != 0;
      if (!isnan(residual[c]) && (isnan(rmax[m]) || residual[c] > rmax[m])) rmax[m] = residual[c];
      wsum[m] += wall[c];
    }
  }
  hid_t s = nh_w_group(w, g, "summary", "per method, over the step sizes");
  nh_w_i32(w, s, "failures", "method", failures, "1", "runs (step sizes) with status != 0");
  nh_w_f64(w, s, "max_constraint_residual", "method", rmax, "as v",
           "max over h of constraint_residual (NaN values left out; NaN if none)");
  nh_w_f64(w, s, "wall_time", "method", wsum, "s", "wall time summed over h");
  H5Gclose(s); /* -1 after a failure: a no-op */
  free(failures), free(rmax), free(wsum);
}

/* ---- convergence --------------------------------------------------------------------------- */

static void orders_table(nh_writer *w, hid_t g, const nh_convergence_result *r) {
  const nh_study *st = w->st;
  const int nm = st->nmethods;
  if (!have(w, r->order, "order") || !have(w, r->order_stderr, "order_stderr") || !have(w, r->fit_first, "fit_first") ||
      !have(w, r->fit_count, "fit_count") || !have(w, r->order_ok, "order_ok") ||
      !have(w, st->order_expected, "order_expected"))
    return;
  nh_order_row *rows = nh_w_array(w, (size_t)nm, sizeof *rows);
  for (int m = 0; rows && m < nm; m++) {
    nh_order_row *o = &rows[m];
    o->method = st->method_names[m];
    o->claimed = nh_method_order_on(st->methods[m], &st->sys);
    o->expected = st->order_expected[m];
    o->observed = r->order[m], o->stderr_ = r->order_stderr[m];
    o->fit_first = r->fit_first[m], o->fit_count = r->fit_count[m];
    nh_fit_h_range(st->h, st->nh, o->fit_first, o->fit_count, &o->fit_h_min, &o->fit_h_max);
    o->ok = r->order_ok[m];
    o->reason = st->order_reason[m] ? st->order_reason[m] : "";
  }
  hid_t ft = nh_schema_orders_type(1), mt = nh_schema_orders_type(0);
  nh_w_compound(w, g, "orders", "method", ft, mt, rows, nh_schema_orders_units,
                "per method: claimed order; expected (the claim or a documented exception, reason); observed "
                "order (least-squares slope of log err against log h) and its standard error; the fit's "
                "step sizes (fit_count consecutive h by increasing size from h[fit_first], fit_h_min .. "
                "fit_h_max); ok: |observed - expected| <= order_tolerance");
  H5Tclose(ft), H5Tclose(mt);
  free(rows);
}

static void convergence_derived(nh_writer *w, hid_t g, const void *vr) {
  const nh_convergence_result *r = vr;
  orders_table(w, g, r);
  reference_state(w, g, &r->reference.x, r->reference.kind, "the solution at T the errors are measured against");
  reference_accuracy(w, g, &r->reference);
  run_summary(w, g, r->status, r->residual, r->wall_time);
  fit_floor_rule(w, g);
}

/* ---- ensemble ------------------------------------------------------------------------------ */

/* The real-valued statistics of nh_ensemble_summary, from max_max_abs_dE to final_var. */
#define SUMMARY_REALS 6

static void ensemble_summary(nh_writer *w, hid_t g, const nh_ensemble_result *r) {
  const int nm = w->st->nmethods;
  int *ok = nh_w_array(w, (size_t)nm, sizeof(int)), *failures = nh_w_array(w, (size_t)nm, sizeof(int));
  double *v = nh_w_array(w, (size_t)nm, SUMMARY_REALS * sizeof(double));
  for (int m = 0; v && m < nm; m++) { /* v allocated: so were the others */
    nh_ensemble_summary s;
    if (nh_ensemble_summarize(w->st, r, m, &s) < 0) {
      nh_w_out_of_memory(w);
      break;
    }
    ok[m] = s.ok, failures[m] = s.failures;
    const double x[SUMMARY_REALS] = {s.max_max_abs_dE,         s.median_max_abs_dE, s.mean_drift_slope,
                                     s.median_abs_drift_slope, s.max_residual,      s.final_var};
    for (int k = 0; k < SUMMARY_REALS; k++) v[k * nm + m] = x[k];
  }
  hid_t s = nh_w_group(w, g, "summary",
                       "per method over the initial conditions: each statistic over the runs with status 0 whose "
                       "value is not NaN (NaN if there is none)");
  nh_w_i32(w, s, "ok", "method", ok, "1", "runs that reached T (status 0)");
  nh_w_i32(w, s, "failures", "method", failures, "1", "runs with status != 0");
  nh_w_f64(w, s, "max_max_abs_dE", "method", v, "energy", "max over the runs of max_abs_dE");
  nh_w_f64(w, s, "median_max_abs_dE", "method", v + nm, "energy", "median over the runs of max_abs_dE");
  nh_w_f64(w, s, "mean_drift_slope", "method", v + 2 * nm, "energy/time", "mean over the runs of drift_slope");
  nh_w_f64(w, s, "median_abs_drift_slope", "method", v + 3 * nm, "energy/time",
           "median over the runs of |drift_slope|");
  nh_w_f64(w, s, "max_constraint_residual", "method", v + 4 * nm, "as v",
           "max over the runs of max_constraint_residual");
  nh_w_f64(w, s, "final_var", "method", v + 5 * nm, "energy^2",
           "dE_var at the last sample (every IC counted that is still running); NaN if dE_count < 2 there");
  H5Gclose(s); /* -1 after a failure: a no-op */
  free(ok), free(failures), free(v);
}

static void grid_group(nh_writer *w, hid_t parent, const nh_grid *grid, int index) {
  char name[NH_TEXT_NAME];
  snprintf(name, sizeof name, "grid%d", index);
  hid_t g =
      nh_w_group(w, parent, name, "a template method run at every pair (values0[i], values1[j]) of two parameters");
  nh_w_undim(w, "value0");
  nh_w_undim(w, "value1");
  nh_w_dim(w, "value0", grid->nvalues[0]);
  nh_w_dim(w, "value1", grid->nvalues[1]);
  nh_w_scale_f64(w, g, "values0", "value0", grid->values[0], "1", "values of param0 (rows)");
  nh_w_scale_f64(w, g, "values1", "value1", grid->values[1], "1", "values of param1 (columns)");
  nh_w_i32(w, g, "method_index", "value0,value1", grid->method_index, "1",
           "index into methods of the method run at (values0[i], values1[j]); -1: skipped (the method refuses "
           "the pair)");
  nh_w_attr_str(w, g, "method", grid->template_name); /* no-ops after a failure (g is -1 then) */
  nh_w_attr_str(w, g, "param0", grid->param[0]);
  nh_w_attr_str(w, g, "param1", grid->param[1]);
  H5Gclose(g);
}

/* dE's rows, from memory or a streamed run's journal (nh_ensemble_dE_row). */
typedef struct {
  const nh_study *st;
  const nh_ensemble_result *r;
} ensemble_rows;

static int dE_row(const void *ctx, long long i, double *out) {
  const ensemble_rows *e = ctx;
  return nh_ensemble_dE_row(e->st, e->r, (long)i, out);
}

/* The statistics per sample of one kind (NH_STAT_*) for every method: a streamed run's rows. */
typedef struct {
  const nh_study *st;
  const nh_ensemble_result *r;
  int which;
} stat_rows;

static int stat_row(const void *ctx, long long m, double *out) {
  const stat_rows *c = ctx;
  return nh_ensemble_stat_row(c->st, c->r, (int)m, c->which, out);
}

/* dE_mean, dE_var, dE_count, dE_q10/q50/q90 [method][sample], row by row from memory or a streamed
 * run's journal (nh_ensemble_stat_row). */
static void ensemble_statistics(nh_writer *w, hid_t g, const nh_ensemble_result *r) {
  static const struct {
    const char *name;
    int which;
  } stats[] = {{"dE_mean", NH_STAT_MEAN}, {"dE_var", NH_STAT_VAR}, {"dE_count", NH_STAT_COUNT},
               {"dE_q10", NH_STAT_Q10},   {"dE_q50", NH_STAT_Q50}, {"dE_q90", NH_STAT_Q90}};
  for (size_t k = 0; k < sizeof stats / sizeof *stats; k++) {
    const stat_rows c = {w->st, r, stats[k].which};
    nh_w_column_rows(w, g, nh_ensemble_columns, stats[k].name, 1, stat_row, &c);
  }
}

/* The ensemble's own part: dE and the statistics per
 * sample (from memory or a streamed run's journal), the summary and the parameter grids. */
static void ensemble_derived(nh_writer *w, hid_t g, const void *vr) {
  const nh_ensemble_result *r = vr;
  const nh_study *st = w->st;
  const ensemble_rows rows = {w->st, r};
  nh_w_column_rows(w, g, nh_ensemble_columns, "dE", 1, dE_row, &rows);
  ensemble_statistics(w, g, r);
  ensemble_summary(w, g, r);
  for (int i = 0; i < st->ngrids; i++) grid_group(w, g, &st->grids[i], i);
}

/* ---- trajectory ---------------------------------------------------------------------------- */

static void trajectory_derived(nh_writer *w, hid_t g, const void *vr) {
  const nh_trajectory_result *r = vr;
  nh_w_attr_str(w, g, "reference", r->reference_kind);
}

/* ---- one-step ------------------------------------------------------------------------------ */

/* min and max over h and points of x per method, NaN values left out. */
static void range_per_method(const double *x, int nm, int per, double *lo, double *hi) {
  for (int m = 0; m < nm; m++) {
    lo[m] = hi[m] = NAN;
    for (int i = 0; i < per; i++) {
      double v = x[(size_t)m * per + i];
      if (isnan(v)) continue;
      if (isnan(lo[m]) || v < lo[m]) lo[m] = v;
      if (isnan(hi[m]) || v > hi[m]) hi[m] = v;
    }
  }
}

static void onestep_summary(nh_writer *w, hid_t g, const nh_onestep_result *r) {
  const nh_study *st = w->st;
  const int nm = st->nmethods, per = st->nh * r->npoints;
  double *cond_min = nh_w_array(w, (size_t)nm, sizeof(double)), *cond_max = nh_w_array(w, (size_t)nm, sizeof(double));
  double *defect_min = nh_w_array(w, (size_t)nm, sizeof(double)),
         *defect_max = nh_w_array(w, (size_t)nm, sizeof(double));
  int *failures = nh_w_array(w, (size_t)nm, sizeof(int));
  if (!failures) { /* the last allocation: nh_w_array returned NULL to the rest once one failed */
    free(cond_min), free(cond_max), free(defect_min), free(defect_max);
    return;
  }
  for (int m = 0; m < nm; m++)
    for (int i = 0; i < per; i++) failures[m] += r->status[(size_t)m * per + i] != 0;
  range_per_method(r->cond, nm, per, cond_min, cond_max);
  range_per_method(r->adjoint_defect, nm, per, defect_min, defect_max);
  hid_t s = nh_w_group(w, g, "summary", "per method over h and the points (NaN values left out; NaN if none)");
  nh_w_i32(w, s, "failures", "method", failures, "1", "steps with status != 0");
  nh_w_f64(w, s, "cond_min", "method", cond_min, "1", "min of cond");
  nh_w_f64(w, s, "cond_max", "method", cond_max, "1", "max of cond");
  nh_w_f64(w, s, "max_adjoint_defect", "method", defect_max, "as q, v", "max of adjoint_defect");
  H5Gclose(s); /* -1 after a failure: a no-op */
  free(cond_min), free(cond_max), free(defect_min), free(defect_max), free(failures);
}

static void onestep_slopes(nh_writer *w, hid_t g, const nh_onestep_result *r) {
  const nh_study *st = w->st;
  const int nm = st->nmethods;
  if (!have(w, r->fit_first, "fit_first") || !have(w, r->fit_count, "fit_count")) return;
  int *expected = nh_w_array(w, (size_t)nm, sizeof(int));
  double *h_min = nh_w_array(w, (size_t)nm, sizeof(double)), *h_max = nh_w_array(w, (size_t)nm, sizeof(double));
  for (int m = 0; h_max && m < nm; m++) { /* h_max allocated: so were the others */
    expected[m] = nh_method_order_on(st->methods[m], &st->sys) + 1;
    nh_fit_h_range(st->h, st->nh, r->fit_first[m], r->fit_count[m], &h_min[m], &h_max[m]);
  }
  fit_floor_rule(w, g);
  nh_w_i32(w, g, "slope_expected", "method", expected, "1", "order_claimed + 1, the local error order");
  nh_w_f64(w, g, "fit_h_min", "method", h_min, "time", "smallest h of the fit; NaN if none");
  nh_w_f64(w, g, "fit_h_max", "method", h_max, "time", "largest h of the fit; NaN if none");
  free(expected), free(h_min), free(h_max);
}

static void onestep_derived(nh_writer *w, hid_t g, const void *vr) {
  const nh_onestep_result *r = vr;
  const nh_study *st = w->st;
  int *pic = nh_w_array(w, (size_t)r->npoints, sizeof(int));
  for (int p = 0; pic && p < r->npoints; p++) pic[p] = p / st->npoints; /* points exist only if npoints > 0 */
  nh_w_i32(w, g, "point_ic", "point", pic, "1", "the initial condition (index into ic_names) of each point");
  free(pic);
  onestep_slopes(w, g, r);
  onestep_summary(w, g, r);
  nh_w_attr_i32(w, g, "embedding_grid", NH_EMBEDDING_GRID);
  nh_w_attr_str(w, g, "reference", r->reference_kind);
}

/* ---- work-precision ------------------------------------------------------------------------ */

static void work_precision_derived(nh_writer *w, hid_t g, const void *vr) {
  const nh_work_precision_result *r = vr;
  const nh_study *st = w->st;
  reference_state(w, g, &r->reference.x, r->reference.kind, "the solution at T the errors are measured against");
  reference_accuracy(w, g, &r->reference);
  /* The front used the study norm's (q,v) column, whose index is the norm's value (work_precision.c). */
  nh_w_attr_str(w, g, "pareto_norm", nh_wp_norm_names[st->norm]);
}

/* ---- any kind ------------------------------------------------------------------------------ */

/* What the writer derives for a kind beyond its table's descriptors (tables, summaries, reference
 * attributes), by the kind's name; a kind without an entry is written from its table alone. */
static const struct {
  const char *kind;
  nh_w_body part;
} derived_parts[] = {{"convergence", convergence_derived},
                     {"ensemble", ensemble_derived},
                     {"trajectory", trajectory_derived},
                     {"onestep", onestep_derived},
                     {"work_precision", work_precision_derived}};

static nh_w_body derived_part(const nh_study_kind_type *k) {
  for (size_t i = 0; i < sizeof derived_parts / sizeof *derived_parts; i++)
    if (strcmp(derived_parts[i].kind, k->name) == 0) return derived_parts[i].part;
  return NULL;
}

/* The study's initial conditions, [ic][dof], as the kind's table says (nh_kind_ics). */
static void initial_conditions(nh_writer *w, hid_t g, const nh_study_kind_type *k, const void *r, long long nic) {
  const nh_study *st = w->st;
  if (k->file.ics != NH_KIND_ICS_DRAWN) {
    common_given(w, g, k->file.ics == NH_KIND_ICS_FIRST ? 1 : st->nic);
    return;
  }
  if (!st->random_ics && st->nic != nic) nh_w_fail(w, "%s", "given initial conditions with count != nic");
  const nh_result_column *q0 = nh_column_find(k->columns, "q0"), *v0 = nh_column_find(k->columns, "v0");
  if (!q0 || !v0) nh_w_fail(w, "%s", "no columns q0 and v0 of drawn initial conditions");
  if (w->failed) return;
  nh_w_common(w, g, (int)nic, nh_column_data(q0, r), nh_column_data(v0, r), st->random_ics ? NULL : st->ic_names);
}

/* Any kind's group, from its table (studies/kinds.h): every dimension its result has, its initial
 * conditions, the step sizes, its columns, its sampled observables, what the writer derives for
 * it, and the settings it stores. */
static void kind_group(nh_writer *w, hid_t g, const void *r) {
  const nh_study_kind_type *k = w->kind;
  const nh_study *st = w->st;
  nh_column_dims d;
  nh_kind_dims(k, st, r, &d);
  for (int i = 0; i < d.n; i++) nh_w_dim(w, d.name[i], d.size[i]);
  initial_conditions(w, g, k, r, nh_column_dim(&d, "ic"));
  step_sizes(w, g);
  const nh_kind_labels *labels = k->file.labels;
  if (labels) nh_w_scale_strings(w, g, labels->dataset, labels->dim, labels->names, labels->doc);
  nh_w_columns(w, g, k->columns, r);
  if (k->file.sample_runs) {
    const nh_result_column runs = {.name = "runs", .dims = k->file.sample_runs};
    nh_w_observables(w, g, k->file.sample_runs, nh_column_count(&runs, &d, 0), (int)nh_column_dim(&d, "sample"),
                     (const nh_samples *)((const char *)r + k->file.samples));
  }
  const nh_w_body part = derived_part(k);
  if (part) part(w, g, r);
  stored_settings(w, g);
}

int nh_write_kind(const char *path, const nh_study *st, const nh_study_kind_type *kind, const void *r,
                  const char *command, char *err, size_t errlen) {
  return nh_w_kind_file(path, st, kind, kind_group, r, command, err, errlen);
}

int nh_write_study(const char *path, const nh_study *st, const void *r, const char *command, char *err,
                   size_t errlen) {
  return nh_write_kind(path, st, nh_study_kinds[st->kind], r, command, err, errlen);
}

/* One public writer per study kind (results.h), each over its table. */
int nh_write_convergence(const char *path, const nh_study *st, const nh_convergence_result *r, const char *command,
                         char *err, size_t errlen) {
  return nh_write_kind(path, st, &nh_convergence_kind, r, command, err, errlen);
}
int nh_write_ensemble(const char *path, const nh_study *st, const nh_ensemble_result *r, const char *command,
                      char *err, size_t errlen) {
  return nh_write_kind(path, st, &nh_ensemble_kind, r, command, err, errlen);
}
int nh_write_trajectory(const char *path, const nh_study *st, const nh_trajectory_result *r, const char *command,
                        char *err, size_t errlen) {
  return nh_write_kind(path, st, &nh_trajectory_kind, r, command, err, errlen);
}
int nh_write_onestep(const char *path, const nh_study *st, const nh_onestep_result *r, const char *command,
                     char *err, size_t errlen) {
  return nh_write_kind(path, st, &nh_onestep_kind, r, command, err, errlen);
}
int nh_write_work_precision(const char *path, const nh_study *st, const nh_work_precision_result *r,
                            const char *command, char *err, size_t errlen) {
  return nh_write_kind(path, st, &nh_work_precision_kind, r, command, err, errlen);
}
