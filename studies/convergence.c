/* Convergence study: per method and h, one run to T from the study's initial condition, its error
 * at T against the exact solution or the reference, and the observed orders. Runs [method][h] are
 * independent tasks (OpenMP, dynamic schedule), each writing only its own slots, and the fits
 * come afterwards in a fixed order: results are bit-identical whatever the number of threads. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/text.h"
#include "studies/columns.h"
#include "studies/kinds.h"
#include "studies/sampling.h" /* nh_truth_failure */
#include "studies/spec_load.h"

/* The largest |entry| of the method's own discrete constraint for the step x → y; NaN if none. */
static double discrete_residual(const nh_method *m, const nh_system *sys, const nh_state *x, const nh_state *y,
                                double h) {
  double d[NH_MAX_K];
  return nh_method_own_discrete_constraint(m, sys, x, y, h, d) == 0 ? nh_norm_max(sys->k, d) : NAN;
}

/* max_a |λ_N − λ(t*)| of the run `task`, t* the time the method's last multiplier approximates,
 * into r->lambda_err (NaN if none or the true solution fails); NH_REFERENCE_NO_MEMORY if it ran
 * out of memory. */
static int multiplier_error(const nh_study *st, nh_convergence_result *r, long task, double tol) {
  const nh_system *sys = &st->sys;
  const nh_method *m = st->methods[task / st->nh];
  const double h = st->h[task % st->nh];
  const long N = lround(st->T / h); /* the step times as the run had them */
  const double t = nh_method_multiplier_time(m, st->x0.t + (double)(N - 1) * h, st->x0.t + (double)N * h);
  const double *lam_N = r->final_lambda + (size_t)task * NH_MAX_K;
  r->lambda_err[task] = NAN;
  if (isnan(t) || sys->k == 0 || isnan(lam_N[0])) return 0;
  nh_state ref;
  double lam[NH_MAX_K], d[NH_MAX_K];
  const int rc = nh_true_solution(sys, &st->x0, t, tol, &ref, NULL);
  if (rc < 0 || nh_multiplier(sys, t, ref.q, ref.v, lam) != 0) return rc == NH_REFERENCE_NO_MEMORY ? rc : 0;
  for (int a = 0; a < sys->k; a++) d[a] = lam_N[a] - lam[a];
  r->lambda_err[task] = nh_norm_max(sys->k, d);
  return 0;
}

/* The errors at T of the run `task` against r->reference, from its final state. */
static void state_errors(const nh_study *st, nh_convergence_result *r, long task) {
  const int n = st->sys.n;
  const double *fin = r->final_state + (size_t)task * 2 * n;
  double *d = r->err_coord + (size_t)task * 2 * n;
  nh_study_reference_difference(st, fin, &r->reference, d);
  if (r->status[task] != NH_STEP_OK)
    for (int i = 0; i < 2 * n; i++) d[i] = NAN;
  r->err_max[task] = nh_norm_max(2 * n, d);
  r->err_2[task] = nh_norm_2(2 * n, d);
  r->err[task] = nh_state_norm(st->norm, 2 * n, d);
  r->err_q[task] = nh_state_norm(st->norm, n, d);
  r->err_v[task] = nh_state_norm(st->norm, n, d + n);
}

/* What a convergence run keeps of its steps: the largest constraint residual and the largest
 * entry of the method's own discrete constraint over every step (task-local: per-step writes to
 * shared arrays would false-share cache lines). */
typedef struct {
  double residual, discrete;
} step_maxima;

static int convergence_step(void *ctx, const nh_evolve *e) {
  step_maxima *mx = ctx;
  nh_evolve_track_residual(&mx->residual, e);
  mx->discrete = fmax(mx->discrete, discrete_residual(e->m, e->sys, e->prev, e->x, e->h)); /* fmax drops the NaN */
  return NH_STEP_OK;
}

/* One run to T. */
static int convergence_task(void *ctx, long task) {
  const nh_study *st = ((nh_study_tasks *)ctx)->st;
  nh_convergence_result *r = ((nh_study_tasks *)ctx)->result;
  const nh_system *sys = &st->sys;
  const int nh = st->nh, n = sys->n, mi = (int)(task / nh), hi = (int)(task % nh);
  const long nsteps = lround(st->T / st->h[hi]);
  nh_evolve e;
  nh_evolve_start(&e, st->methods[mi], sys, &st->x0, st->h[hi], 1);
  step_maxima mx = {nh_constraint_residual(sys, st->x0.q, st->x0.v), NAN};
  const double t0 = omp_get_wtime();
  int status = nh_evolve_init(&e);
  if (status == NH_STEP_OK) status = nh_evolve_steps(&e, nsteps, convergence_step, &mx);
  const nh_state *x = e.x;
  r->wall_time[task] = omp_get_wtime() - t0;
  r->status[task] = status;
  r->cost[task] = e.cost;
  r->residual[task] = mx.residual;
  r->discrete_residual[task] = mx.discrete;
  r->z[task] = x->z;
  double *fin = r->final_state + (size_t)task * 2 * n, *lam = r->final_lambda + (size_t)task * NH_MAX_K;
  for (int i = 0; i < n; i++) fin[i] = x->q[i], fin[n + i] = x->v[i];
  for (int a = 0; a < NH_MAX_K; a++) lam[a] = status == NH_STEP_OK && nsteps > 0 && a < sys->k ? x->lambda[a] : NAN;
  return 0;
}

/* The smallest error at T of a run that ended (NaN if none). */
static double smallest_error(long cells, const double *err) {
  double e = NAN;
  for (long c = 0; c < cells; c++)
    if (err[c] > 0 && isfinite(err[c])) e = fmin(e, err[c]);
  return e;
}

/* After the runs: the reference tightened to the smallest error (reference_tol = "auto"), the
 * errors against it, the multiplier errors, and the order fits above each h's error floor. */
static int convergence_measure(const nh_study *st, nh_convergence_result *r, char *err, size_t errlen) {
  const int nm = st->nmethods, nh = st->nh;
  const long cells = (long)nm * nh;
  for (long c = 0; c < cells; c++) state_errors(st, r, c);
  const double tol = r->reference.tol;
  int rc = nh_study_reference_refine(st, &st->x0, st->x0.t + st->T, smallest_error(cells, r->err), &r->reference);
  if (rc < 0) return snprintf(err, errlen, "%s: %s", st->spec_file, nh_truth_failure(rc)), -1;
  if (r->reference.tol != tol)
    for (long c = 0; c < cells; c++) state_errors(st, r, c);
  int failed = 0;
#pragma omp parallel for schedule(dynamic) reduction(| : failed)
  for (long c = 0; c < cells; c++) failed |= multiplier_error(st, r, c, r->reference.tol) < 0;
  if (failed) return snprintf(err, errlen, "%s: out of memory for the reference", st->spec_file), -1;
  /* Round-off adds up over every base step, a composition's sub-steps included (cost.steps). */
  const double size = nh_study_reference_norm(st, &r->reference.x);
  for (long c = 0; c < cells; c++)
    r->fit_floor[c] = nh_error_floor(st, r->reference.error, size, (double)r->cost[c].steps);
  for (int mi = 0; mi < nm; mi++) {
    if (nh_fit_order_floors(nh, st->h, r->err + (size_t)mi * nh, st->fit_points, r->fit_floor + (size_t)mi * nh,
                            &r->order[mi],
                            &r->order_stderr[mi], &r->fit_first[mi], &r->fit_count[mi]) == -2)
      return snprintf(err, errlen, "%s: out of memory for the order fit", st->spec_file), -1;
    r->order_ok[mi] = fabs(r->order[mi] - st->order_expected[mi]) <= st->order_tolerance;
  }
  return 0;
}

#define CELL(field) offsetof(nh_convergence_result, field)
#define SCRATCH NH_COLUMN_SCRATCH
#define TASK NH_COLUMN_JOURNALED
/* The result's columns (studies/columns.h): runs [method][h]. */
const nh_result_column nh_convergence_columns[] = {
    {"err", "method,h", NH_COLUMN_F64, CELL(err), 0, NULL, "as q, v",
     "error at T over (q, v) in the study norm (attribute norm) against the reference; NaN if the run failed"},
    {"err_q", "method,h", NH_COLUMN_F64, CELL(err_q), 0, NULL, "as q", "error at T over q in the study norm"},
    {"err_v", "method,h", NH_COLUMN_F64, CELL(err_v), 0, NULL, "as v", "error at T over v in the study norm"},
    {"err_max", "method,h", NH_COLUMN_F64, CELL(err_max), 0, NULL, "as q, v", "error at T over (q, v), max-norm"},
    {"err_2", "method,h", NH_COLUMN_F64, CELL(err_2), 0, NULL, "as q, v", "error at T over (q, v), 2-norm"},
    {"err_coord", "method,h,state", NH_COLUMN_F64, CELL(err_coord), 0, NULL, "as q, v",
     "(q, v)(T) - reference, per component (state_labels)"},
    {"final_state", "method,h,state", NH_COLUMN_F64, CELL(final_state), TASK, NULL, "as q, v", "(q, v) at T"},
    {"lambda_err", "method,h", NH_COLUMN_F64, CELL(lambda_err), 0, NULL, "as lambda",
     "max_a |lambda_N - lambda(t*)| of the last step, t* the time its multiplier approximates; NaN: the method "
     "defines no multiplier"},
    {"discrete_residual", "method,h", NH_COLUMN_F64, CELL(discrete_residual), TASK, NULL, "as v",
     "max over the run of the method's own discrete constraint; NaN: the method defines none"},
    {"constraint_residual", "method,h", NH_COLUMN_F64, CELL(residual), TASK, NULL, "as v",
     "max over the run (every step, t = 0 included) of max_a |A_a(q) v + b_a(q)|"},
    {"status", "method,h", NH_COLUMN_I32, CELL(status), TASK, NULL, "1",
     "status code of the run (README: Status codes)"},
    {"z", "method,h", NH_COLUMN_F64, CELL(z), TASK, NULL, "action",
     "the Herglotz action z at T (0 for methods that do not track it)"},
    {"cost", "method,h", NH_COLUMN_COST, CELL(cost), TASK, NULL, NULL, "cost counters of the run"},
    {"wall_time", "method,h", NH_COLUMN_F64, CELL(wall_time), TASK, NULL, "s", "wall time of the run"},
    {"fit_floor", "method,h", NH_COLUMN_F64, CELL(fit_floor), 0, NULL, "as q, v", NH_FIT_FLOOR_DOC},
    {"final_lambda", "method,h,lambda_slot", NH_COLUMN_F64, CELL(final_lambda), TASK | SCRATCH, NULL, "as lambda",
     "lambda of the last step (NaN: none), for lambda_err"},
    /* The order fit per method: written as the table `orders` (results/write_kinds.c). */
    {"order", "method", NH_COLUMN_F64, CELL(order), SCRATCH, NULL, "1", "least-squares slope of log err vs log h"},
    {"order_stderr", "method", NH_COLUMN_F64, CELL(order_stderr), SCRATCH, NULL, "1", "its standard error"},
    {"fit_first", "method", NH_COLUMN_I32, CELL(fit_first), SCRATCH, NULL, "1", "the h index the fit starts at"},
    {"fit_count", "method", NH_COLUMN_I32, CELL(fit_count), SCRATCH, NULL, "1", "the step sizes of the fit"},
    {"order_ok", "method", NH_COLUMN_I32, CELL(order_ok), SCRATCH, NULL, "1", "|order - expected| <= order_tolerance"},
    {NULL}};
#undef CELL

int nh_run_convergence(const nh_study *st, nh_convergence_result *r, char *err, size_t errlen) {
  const size_t cells = (size_t)st->nmethods * (size_t)st->nh;
  memset(r, 0, sizeof *r);
  nh_column_dims dims;
  nh_kind_dims(&nh_convergence_kind, st, r, &dims);
  if (nh_result_columns_alloc(nh_convergence_columns, st, &dims, r) < 0) { /* the caller frees r */
    snprintf(err, errlen, "%s: out of memory for %zu convergence runs", st->spec_file, cells);
    return -1;
  }

  const int truth = nh_study_reference_at(st, &st->x0, st->x0.t + st->T, &r->reference);
  if (truth < 0) return snprintf(err, errlen, "%s: %s", st->spec_file, nh_truth_failure(truth)), -1;

  nh_study_tasks ctx = {st, r};
  nh_task_slot slots[NH_COLUMN_MAX_SLOTS];
  const int nslots = nh_result_columns_slots(nh_convergence_columns, st, &dims, 2, r, slots, NH_COLUMN_MAX_SLOTS);
  if (nh_journaled_tasks(st, "convergence", (long)cells, convergence_task, &ctx, slots, nslots, err, errlen) < 0)
    return -1;
  return convergence_measure(st, r, err, errlen);
}

void nh_convergence_result_free(nh_convergence_result *r) {
  nh_result_columns_free(nh_convergence_columns, r);
  memset(r, 0, sizeof *r);
}

/* ---- its spec: the settings it takes (studies/settings.c) -------------------------------------- */

static int load_convergence(const nh_spec_ctx *c, const config_setting_t *root, nh_study *st) {
  if (nh_spec_initial(c, root, st) < 0) return -1;
  if (st->nic != 1)
    return nh_spec_fail(c, config_setting_get_member(root, "initial"),
                        "a convergence study takes one initial condition");
  if (nh_spec_steps(c, root, st, 2) < 0 || nh_spec_whole_steps(c, root, st) < 0) return -1;
  if (nh_spec_fit(c, root, st) < 0 || nh_spec_reference_tol(c, root, st) < 0 || nh_spec_norm(c, root, st) < 0)
    return -1;
  if (nh_spec_real(c, root, "order_tolerance", &st->order_tolerance) < 0) return -1;
  if (st->order_tolerance >= 0) return 0; /* finite: get_number */
  return nh_spec_fail(c, config_setting_get_member(root, "order_tolerance"),
                      "order_tolerance = %g must be a number >= 0", st->order_tolerance);
}

/* The expected order of each method: its claimed order unless `expected_orders` documents an
 * exception: ( { method = "..."; order = 1; reason = "..."; } ). */
static int load_expected_orders(const nh_spec_ctx *c, const config_setting_t *root, nh_study *st) {
  st->order_expected = malloc(sizeof(int) * (size_t)st->nmethods);
  st->order_reason = calloc((size_t)st->nmethods, sizeof(char *));
  if (!st->order_expected || !st->order_reason) return nh_spec_out_of_memory(c);
  for (int i = 0; i < st->nmethods; i++) {
    st->order_expected[i] = nh_method_order_on(st->methods[i], &st->sys);
    if (!(st->order_reason[i] = nh_spec_dup(""))) return nh_spec_out_of_memory(c);
  }
  const config_setting_t *list = config_setting_get_member(root, "expected_orders");
  if (!list) return 0;
  static const char *const known[] = {"method", "order", "reason", NULL};
  if (!config_setting_is_list(list))
    return nh_spec_fail(c, list,
                        "'expected_orders' must be a list ( { method = \"...\"; order = N; reason = \"...\"; } )");
  for (int e = 0; e < config_setting_length(list); e++) {
    const config_setting_t *g = config_setting_get_elem(list, (unsigned)e);
    if (!config_setting_is_group(g) || nh_spec_members(c, g, known) < 0)
      return nh_spec_fail(c, g, "each expected order is a group { method; order; reason; }");
    const config_setting_t *ms = nh_spec_require(c, g, "method"), *rs = nh_spec_require(c, g, "reason");
    int order;
    if (!ms || !rs || nh_spec_whole(c, g, "order", 0, 20, NH_SPEC_REQUIRED, &order) < 0) return -1;
    const char *text = config_setting_get_string(ms), *reason = config_setting_get_string(rs);
    if (!text || !reason) return nh_spec_fail(c, g, "method and reason must be strings");
    const int found = nh_spec_method_index(c, ms, st, text, "expected order for");
    if (found < 0) return -1;
    st->order_expected[found] = order;
    free(st->order_reason[found]);
    if (!(st->order_reason[found] = nh_spec_dup(reason))) return nh_spec_out_of_memory(c);
  }
  return 0;
}

/* The kind's table (studies/kinds.h). */
NH_STUDY_KIND_ENTRIES(convergence)
const nh_study_kind_type nh_convergence_kind = {
    .kind = NH_STUDY_CONVERGENCE,
    .name = "convergence",
    .doc = "error at T against h from one initial condition, and the observed orders",
    .settings = "h0 halvings fit_points error_floor order_tolerance expected_orders norm",
    .stores = "initial fit_points order_tolerance norm",
    .result_size = sizeof(nh_convergence_result),
    .columns = nh_convergence_columns,
    .load = load_convergence,
    .load_with_methods = load_expected_orders,
    .run = run_kind,
    .free_result = free_kind,
    .file = {NH_KIND_ICS_FIRST, NULL, NULL, NULL, 0},
};
