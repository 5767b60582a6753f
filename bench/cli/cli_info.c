/* nhbench info FILE.h5: a readable summary of a results file (schema: results/README.md). Every
 * statistic shown is read from the file, as the writer derived it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/cli/cli.h"
#include "core/alloc.h"
#include "core/text.h"
#include "results/results.h"
#include "studies/sampling.h"

#define WIDTH 120 /* terminal columns the tables fit in; longer method names are cut */

static const char usage[] =
    "usage: nhbench info [-h | --help] [--datasets] FILE.h5\n"
    "  A readable summary of a results file written by `nhbench run`: the study, its provenance,\n"
    "  and per method\n"
    "  - convergence: the expected and observed order (least-squares slope of log err against\n"
    "    log h over the finest step sizes, with its standard error), the error at the finest h,\n"
    "    failed runs, the constraint residual and the cost;\n"
    "  - ensemble: the energy error dE = E(t) - E0 over the initial conditions (ICs): failures,\n"
    "    largest and median max_t |dE|, mean drift slope, variance at T, the constraint residual and\n"
    "    the cost; each (beta, beta2) grid as a matrix of the median over the ICs of max_t |dE|;\n"
    "    which methods this nhbench steps 8 trajectories at a time in lanes (not in the file: the\n"
    "    results are the same bits either way);\n"
    "  - trajectory: per method, step size and IC the run's status and, for each sampled\n"
    "    observable, its first and last value and its largest magnitude;\n"
    "  - onestep: the local error slope against the expected p + 1, the action error slope, the\n"
    "    largest adjoint defect and the range of the Newton Jacobian's condition number;\n"
    "  - work_precision: error, counted work and wall time per method and h, Pareto fronts marked.\n"
    "  Statistics are those the writer stored (results/README.md). Full method names:\n"
    "  nhbench export FILE.h5 methods. Exit status 2 if FILE is not a readable results file of\n"
    "  schema version 2 or 3.\n"
    "  --datasets   instead of the summary: every dataset of the study, any kind, as the file\n"
    "               describes it (name, dimensions and sizes, units, description); nhbench export\n"
    "               FILE.h5 dataset NAME prints one\n"
    "  -h, --help   this text\n";

static const char prog[] = "nhbench info";

static int cut_names; /* a name was shortened in a table */

/* "%.2e", or "-" for NaN (a statistic over no values). */
static const char *num(char *buf, size_t len, double v) {
  if (isnan(v)) snprintf(buf, len, "-");
  else snprintf(buf, len, "%.2e", v);
  return buf;
}

/* Prints NAME in the room left after `used` columns (at most 96 in any table: 24 columns or more
 * left), and a newline. */
static void put_name(const char *name, int used) {
  const int room = WIDTH - used;
  if ((int)strlen(name) <= room) {
    printf("%s\n", name);
  } else {
    printf("%.*s...\n", room - 3, name);
    cut_names = 1;
  }
}

/* A run's status (0 ok, then the failures) by name; any other value is the last, unknown. */
static const char *const status_names[] = {"ok", "solver failed", "non-finite", "diverged", "timed out",
                                           "unknown status"};
enum { STATUS_UNKNOWN = sizeof status_names / sizeof *status_names - 1 };

static int status_index(int s) { return s >= 0 && s < STATUS_UNKNOWN ? s : STATUS_UNKNOWN; }

static const char *status_name(int s) { return status_names[status_index(s)]; }

/* Methods whose results are unreliable although they ran (e.g. nh_newmark at β + β' = ½). */
static void print_caveats(nh_h5 *f) {
  int n = 0;
  char **c = nh_h5_has(f, "caveats") ? nh_h5_strings(f, "caveats", "method", &n) : NULL;
  for (int m = 0; c && m < n; m++) /* n = nmethods: the reader checks the dimension */
    if (c[m][0]) printf("  CAVEAT       method %d %s: %s\n", m, f->methods[m], c[m]);
  if (c) nh_h5_free_strings(c, n);
}

/* An attribute read as NULL (absent, or unreadable in a damaged file) is printed as "?". */
static const char *known_or_not(const char *s) { return s ? s : "?"; }

static void print_header(nh_h5 *f) {
  static const char *const keys[] = {"system", "spec_file", "overrides", "date", "version", "compiler", "command"};
  char *v[7] = {0};
  int threads = 0, ranks = 1;
  double T = NAN;
  for (int i = 0; i < 7; i++)
    if (nh_h5_has_attr(f, "/", keys[i])) v[i] = nh_h5_attr_string(f, "/", keys[i]);
  if (nh_h5_has_attr(f, "/", "threads")) nh_h5_attr_int(f, "/", "threads", &threads);
  if (nh_h5_has_attr(f, "/", "ranks")) nh_h5_attr_int(f, "/", "ranks", &ranks); /* absent before MPI: 1 */
  if (nh_h5_has_attr(f, "/", "T")) nh_h5_attr_double(f, "/", "T", &T);
  printf("%s: %s study\n", f->path, f->kind_name);
  printf("  system       %s\n", known_or_not(v[0]));
  printf("  T            %g\n", T);
  printf("  spec         %s\n", known_or_not(v[1]));
  printf("  overrides    %s\n", v[2] && *v[2] ? v[2] : "(none)");
  printf("  written      %s by nhbench %s (%s), %d threads", known_or_not(v[3]), known_or_not(v[4]), known_or_not(v[5]),
         threads);
  if (ranks > 1) printf(" on each of %d MPI ranks", ranks);
  putchar('\n');
  printf("  command      %s\n", known_or_not(v[6]));
  for (int i = 0; i < 7; i++) free(v[i]);
  print_caveats(f);
}

/* A string attribute of the study group (malloc'd), or NULL if it is absent or cannot be read:
 * printed as known_or_not(s). */
static char *group_str(nh_h5 *f, const char *name) {
  return nh_h5_has_attr(f, ".", name) ? nh_h5_attr_string(f, ".", name) : NULL;
}

/* The initial conditions: names and (q0, v0). */
static int print_ics(nh_h5 *f) {
  int nic = 0;
  char **names = nh_h5_strings(f, "ic_names", "ic", &nic);
  double *q = names ? nh_h5_doubles(f, "q0", "ic,dof", NULL) : NULL;
  double *v = q ? nh_h5_doubles(f, "v0", "ic,dof", NULL) : NULL;
  const long long n = v ? nh_h5_dim(f, "dof") : 0;
  for (int i = 0; v && i < nic && i < 10; i++) {
    printf("  IC %-9d %s: q0 = (", i, names[i]);
    for (long long j = 0; j < n; j++) printf("%s%.10g", j ? ", " : "", q[i * n + j]);
    printf("), v0 = (");
    for (long long j = 0; j < n; j++) printf("%s%.10g", j ? ", " : "", v[i * n + j]);
    printf(")\n");
  }
  if (v && nic > 10)
    printf("  ...          %d initial conditions in all (nhbench export or h5dump for the rest)\n", nic);
  nh_h5_free_strings(names, nic);
  int ok = v != NULL;
  free(q), free(v);
  return ok ? 0 : -1;
}

/* The step sizes by increasing h, as the fits walk them; the finest is byh[0]. NULL (said) if out
 * of memory. */
static int *by_h(const double *h, int nh) {
  int *byh = nh_malloc_array((size_t)nh, sizeof(int));
  if (!byh) return nh_cli_out_of_memory(prog), NULL;
  for (int i = 0; i < nh; i++) byh[i] = i;
  for (int i = 1; i < nh; i++)
    for (int j = i; j > 0 && h[byh[j]] < h[byh[j - 1]]; j--) {
      int t = byh[j];
      byh[j] = byh[j - 1];
      byh[j - 1] = t;
    }
  return byh;
}

static void print_cost_header(void) {
  printf("%4s %10s %12s %12s %12s %12s %9s  %s\n", "#", "max resid", "steps", "rhs evals", "Newton its",
         "constr evals", "wall[s]", "method");
}

static void print_cost_row(int m, const char *name, double resid, const nh_cost *c, double wall) {
  char a[NH_TEXT_NUMBER];
  printf("%4d %10s %12llu %12llu %12llu %12llu %9.3g  ", m, num(a, sizeof a, resid), c->steps, c->rhs_evals,
         c->newton_iterations, c->constraint_evals, wall);
  put_name(name, 4 + 11 + 4 * 13 + 10 + 2);
}

/* ---- convergence --------------------------------------------------------------------------- */

static void print_order_row(const nh_h5 *f, int m, const nh_order_row *o, double err_fin, int failed) {
  char exp_[NH_TEXT_NUMBER], obs[2 * NH_TEXT_NUMBER], range[2 * NH_TEXT_NUMBER], e[NH_TEXT_NUMBER];
  snprintf(exp_, sizeof exp_, "%d%s", o->expected, o->expected != o->claimed ? "*" : " ");
  if (isnan(o->observed)) snprintf(obs, sizeof obs, "no fit");
  else if (isnan(o->stderr_)) snprintf(obs, sizeof obs, "%.3f +- n/a    ", o->observed);
  else snprintf(obs, sizeof obs, "%.3f +- %.1e", o->observed, o->stderr_);
  if (isnan(o->fit_h_min)) snprintf(range, sizeof range, "-");
  else if (o->fit_count == 1) snprintf(range, sizeof range, "%.3g only", o->fit_h_min);
  else snprintf(range, sizeof range, "%.3g .. %.3g", o->fit_h_min, o->fit_h_max);
  printf("%4d %8s %17s %3s %16s %10s %6d  ", m, exp_, obs, o->ok ? "ok" : "NO", range, num(e, sizeof e, err_fin),
         failed);
  put_name(f->methods[m], 4 + 9 + 18 + 4 + 17 + 11 + 7 + 2);
}

static void print_orders(nh_h5 *f, const nh_order_row *o, const double *err, const int *failures, int nh, int fin) {
  double otol = NAN;
  if (nh_h5_has_attr(f, ".", "order_tolerance")) nh_h5_attr_double(f, ".", "order_tolerance", &otol);
  char *norm = group_str(f, "norm");
  printf("Observed order of the error at T, %s-norm over (q, v) against the reference (expected: the claimed\n"
         "order, * a documented exception; ok: |observed - expected| <= %g):\n", known_or_not(norm), otol);
  free(norm);
  printf("%4s %8s %17s %3s %16s %10s %6s  %s\n", "#", "expected", "observed +- se", "ok", "fit h range", "err(h_min)",
         "failed", "method");
  int exceptions = 0;
  for (int m = 0; m < f->nmethods; m++) {
    print_order_row(f, m, &o[m], err[(size_t)m * nh + fin], failures[m]);
    exceptions += o[m].expected != o[m].claimed;
  }
  if (exceptions) printf("* expected order differs from the claimed one:\n");
  for (int m = 0; exceptions && m < f->nmethods; m++)
    if (o[m].expected != o[m].claimed)
      printf("%4d claimed %d, expected %d: %s\n", m, o[m].claimed, o[m].expected,
             o[m].reason[0] ? o[m].reason : "(no reason recorded)");
}

/* The reference and its accuracy: "exact", or "rk8pd, tolerance T (rule), estimated error E". */
static void print_reference(nh_h5 *f) {
  char *ref = group_str(f, "reference"), *rule = group_str(f, "reference_tol_rule");
  double tol = NAN, error = NAN;
  if (nh_h5_has_attr(f, ".", "reference_tol")) nh_h5_attr_double(f, ".", "reference_tol", &tol);
  if (nh_h5_has_attr(f, ".", "reference_error")) nh_h5_attr_double(f, ".", "reference_error", &error);
  if (ref && strcmp(ref, "exact") == 0) printf("  reference    exact\n");
  else
    printf("  reference    %s, tolerance %.3g (%s), estimated error %.3g\n", known_or_not(ref), tol,
           rule && strncmp(rule, "auto", 4) == 0 ? "auto" : "given", error);
  free(ref), free(rule);
}

/* The order fit's floor: the range of its values per run (fit_floor), or the one error_floor of an
 * older file. */
static void print_fit_floor(nh_h5 *f, int fit_points, int nh) {
  double *floor_ = nh_h5_has(f, "fit_floor") ? nh_h5_doubles(f, "fit_floor", "method,h", NULL) : NULL;
  char *rule = group_str(f, "error_floor_rule");
  double lo = INFINITY, hi = -INFINITY;
  for (int i = 0; floor_ && i < nh * f->nmethods; i++) lo = fmin(lo, floor_[i]), hi = fmax(hi, floor_[i]);
  if (!floor_ && nh_h5_has_attr(f, ".", "error_floor")) nh_h5_attr_double(f, ".", "error_floor", &lo), hi = lo;
  printf("  order fit    the %d finest consecutive h whose error is finite and above ", fit_points);
  if (lo == hi) printf("%.3g (%s)\n", lo, known_or_not(rule));
  else printf("the floor of its run, %.3g .. %.3g (%s)\n", lo, hi, known_or_not(rule));
  free(floor_), free(rule);
}

static void print_convergence_setup(nh_h5 *f, const double *h, int nh, const int *byh) {
  int fit_points = 0;
  if (nh_h5_has_attr(f, ".", "fit_points")) nh_h5_attr_int(f, ".", "fit_points", &fit_points);
  printf("  h            %d values, %g .. %g\n", nh, h[byh[nh - 1]], h[byh[0]]);
  print_reference(f);
  print_fit_floor(f, fit_points, nh);
}

/* What the convergence summary reads from the file. */
typedef struct {
  int nh;
  double *h, *err, *resid, *wall;
  nh_cost *cost;
  int *failures;
  nh_order_row *orders;
} conv_data;

static void free_conv(const nh_h5 *f, conv_data *d) {
  nh_h5_free_orders(d->orders, f->nmethods);
  free(d->h), free(d->err), free(d->cost), free(d->failures), free(d->resid), free(d->wall);
}

/* 0, or -1 with a message (free_conv either way). */
static int read_conv(nh_h5 *f, conv_data *d) {
  memset(d, 0, sizeof *d);
  if (!(d->h = nh_h5_doubles(f, "h", "h", NULL)) || !(d->err = nh_h5_doubles(f, "err", "method,h", NULL)) ||
      !(d->cost = nh_h5_costs(f, "cost", "method,h", NULL)) ||
      !(d->failures = nh_h5_ints(f, "summary/failures", "method", NULL)) ||
      !(d->resid = nh_h5_doubles(f, "summary/max_constraint_residual", "method", NULL)) ||
      !(d->wall = nh_h5_doubles(f, "summary/wall_time", "method", NULL)) || !(d->orders = nh_h5_read_orders(f)))
    return -1;
  d->nh = (int)nh_h5_dim(f, "h");
  if (d->nh > 0) return 0;
  fprintf(stderr, "%s: %s: no step sizes in /convergence/h\n", prog, f->path);
  return -1;
}

static void print_conv_cost(const nh_h5 *f, const conv_data *d, int fin) {
  printf("\nCost at the finest h = %g; max resid: max over all h of max_t |mu(q).v|; wall: all h:\n", d->h[fin]);
  print_cost_header();
  for (int m = 0; m < f->nmethods; m++)
    print_cost_row(m, f->methods[m], d->resid[m], &d->cost[(size_t)m * d->nh + fin], d->wall[m]);
}

static int info_convergence(nh_h5 *f) {
  conv_data d;
  int rc = 2, *byh = NULL;
  if (read_conv(f, &d) >= 0 && (byh = by_h(d.h, d.nh))) {
    print_header(f);
    print_convergence_setup(f, d.h, d.nh, byh);
    rc = print_ics(f) != 0 ? 2 : 0;
    printf("  methods      %d\n\n", f->nmethods);
    if (rc == 0) print_orders(f, d.orders, d.err, d.failures, d.nh, byh[0]);
    if (rc == 0) print_conv_cost(f, &d, byh[0]);
    free(byh);
  }
  free_conv(f, &d);
  return rc;
}

/* ---- ensemble ------------------------------------------------------------------------------ */

static void print_grid(const nh_h5_grid *g, int k, const nh_ensemble_summary *sum) {
  printf("\nGrid %d: %s over (%s, %s): median over the ICs of max_t |dE|\n", k, g->method, g->param[0], g->param[1]);
  printf("(fail: every IC failed; skip: not run, an invalid combination; *: some ICs failed, median of the rest)\n");
  char corner[NH_TEXT_NAME];
  snprintf(corner, sizeof corner, "%s \\ %s", g->param[0], g->param[1]);
  int w0 = (int)strlen(corner) > 10 ? (int)strlen(corner) : 10;
  printf("  %*s", w0, corner);
  for (int j = 0; j < g->n[1]; j++) printf(" %9.4g", g->values[1][j]);
  printf("\n");
  for (int i = 0; i < g->n[0]; i++) {
    char row[NH_TEXT_LONG] = "";
    nh_text_append(row, sizeof row, "", "  %*.4g", w0, g->values[0][i]);
    for (int j = 0; j < g->n[1]; j++) {
      int m = g->method_index[i * g->n[1] + j];
      char cell[NH_TEXT_NUMBER];
      if (m < 0) snprintf(cell, sizeof cell, "skip ");
      else if (sum[m].ok == 0) snprintf(cell, sizeof cell, "fail ");
      else snprintf(cell, sizeof cell, "%.2e%s", sum[m].median_max_abs_dE, sum[m].failures ? "*" : " ");
      nh_text_append(row, sizeof row, "", " %9s", cell);
    }
    size_t len = strlen(row);
    while (len > 0 && row[len - 1] == ' ') row[--len] = '\0';
    printf("%s\n", row);
  }
}

static int count_primary(const nh_h5 *f) {
  int n = 0;
  for (int m = 0; m < f->nmethods; m++) n += f->primary[m];
  return n;
}

/* The methods in two passes: those the spec lists, then those only grids added. */
static void print_energy_table(const nh_h5 *f, const nh_ensemble_summary *sum) {
  const int np = count_primary(f);
  printf("Energy error dE = E(t) - E0, over the ICs that ran to T (max|dE|: largest max_t |dE|; median\n"
         "max|dE|: median over the ICs; slope: least-squares slope of dE against t; var: ensemble variance at T):\n");
  printf("%4s %7s %10s %14s %11s %10s  %s\n", "#", "failed", "max|dE|", "median max|dE|", "mean slope", "var(dE,T)",
         "method");
  for (int pass = 0; pass < 2; pass++) {
    if (pass == 1 && np < f->nmethods && np > 0) printf("  grid methods not listed in the spec:\n");
    for (int m = 0; m < f->nmethods; m++) {
      if (f->primary[m] != !pass) continue;
      const nh_ensemble_summary *s = &sum[m];
      char a[NH_TEXT_NUMBER], b[NH_TEXT_NUMBER], c[NH_TEXT_NUMBER], d[NH_TEXT_NUMBER], fl[NH_TEXT_NUMBER];
      snprintf(fl, sizeof fl, "%d/%d", s->failures, s->ok + s->failures);
      printf("%4d %7s %10s %14s %11s %10s  ", m, fl, num(a, sizeof a, s->max_max_abs_dE),
             num(b, sizeof b, s->median_max_abs_dE), num(c, sizeof c, s->mean_drift_slope),
             num(d, sizeof d, s->final_var));
      put_name(f->methods[m], 4 + 8 + 11 + 15 + 12 + 11 + 2);
    }
  }
}

/* Why the failed runs failed: per method with a failure, the count of each status over its ICs
 * (issue 13: "fail" alone does not say whether Newton failed or the energy diverged). */
static void print_failure_reasons(nh_h5 *f) {
  int *status = nh_h5_ints(f, "status", "method,ic", NULL);
  if (!status) return;
  const long long nic = nh_h5_dim(f, "ic");
  int header = 0;
  for (int m = 0; m < f->nmethods; m++) {
    int count[STATUS_UNKNOWN + 1] = {0}; /* of each status_index */
    for (long long i = 0; i < nic; i++) count[status_index(status[m * nic + i])]++;
    if (count[0] == nic) continue;
    if (!header) printf("\nFailed runs by cause (status of each IC that did not reach T):\n");
    header = 1;
    char why[NH_TEXT_MESSAGE] = "";
    for (int st = 1; st <= STATUS_UNKNOWN; st++)
      if (count[st]) nh_text_append(why, sizeof why, ", ", "%d %s", count[st], status_names[st]);
    printf("%4d  %-28s  ", m, why);
    put_name(f->methods[m], 4 + 2 + 28 + 2);
  }
  free(status);
}

static void print_ensemble_cost(const nh_h5 *f, const nh_ensemble_summary *sum, const nh_cost *cost,
                                const double *wall) {
  const int np = count_primary(f);
  printf("\nCost, summed over the ICs (steps: calls of a base method's step); max resid: max_t |mu(q).v| over the\n"
         "ICs that ran to T:\n");
  print_cost_header();
  for (int pass = 0; pass < 2; pass++) {
    if (pass == 1 && np < f->nmethods && np > 0) printf("  grid methods not listed in the spec:\n");
    for (int m = 0; m < f->nmethods; m++)
      if (f->primary[m] == !pass) print_cost_row(m, f->methods[m], sum[m].max_residual, &cost[m], wall[m]);
  }
}

/* Which methods this nhbench steps NH_LANES trajectories at a time in an ensemble (issue 51). The file
 * does not record it (the results are the same bits either way); it tells what its timings mean. */
static void print_lanes_note(nh_h5 *f) {
  char *name = nh_h5_has_attr(f, "/", "system") ? nh_h5_attr_string(f, "/", "system") : NULL;
  if (name) name[strcspn(name, "(")] = '\0'; /* "chaotic_particle(...)": the parameters do not matter here */
  const nh_system_type *type = name ? nh_system_type_find(name) : NULL;
  nh_system sys;
  free(name);
  if (!type || nh_system_init(&sys, type) != 0) return; /* a definition's or a plugin's system: not known here */
  int in = 0, shown = 0;
  char alone[WIDTH + 1] = "";
  for (int m = 0; m < f->nmethods; m++) {
    char err[NH_TEXT_MESSAGE];
    nh_method *method = nh_method_parse(f->methods[m], err, sizeof err);
    if (method && nh_method_has_lanes(method, &sys)) {
      in++;
    } else if (strlen(alone) + strlen(f->methods[m]) + 2 < WIDTH - 17) {
      snprintf(alone + strlen(alone), sizeof alone - strlen(alone), "%s%s", shown++ ? ", " : "", f->methods[m]);
    }
    nh_method_free(method);
  }
  printf("  lanes        this nhbench steps %d of the %d methods' ensembles %d trajectories at a time (%s)%s\n", in,
         f->nmethods, NH_LANES, nh_isa_name(nh_lanes_isa()), nh_lanes_enabled() ? "" : ", but NHBENCH_LANES is off");
  if (in < f->nmethods) printf("               one at a time: %s%s\n", alone, shown < f->nmethods - in ? ", ..." : "");
}

static int print_ensemble_setup(nh_h5 *f, int ngrids) {
  double energy = NAN, T = NAN;
  int every, count, random; /* read below, each read checked */
  long long seed, nh;
  double *steps = nh_h5_steps(f, &nh), h = steps && nh > 0 ? steps[0] : NAN;
  free(steps);
  if (!steps || nh_h5_attr_double(f, ".", "energy", &energy) != 0 ||
      nh_h5_attr_int(f, ".", "sample_every", &every) != 0 || nh_h5_attr_int(f, ".", "count", &count) != 0 ||
      nh_h5_attr_ll(f, ".", "seed", &seed) != 0 || nh_h5_attr_int(f, ".", "random_ics", &random) != 0)
    return -1;
  nh_h5_attr_double(f, "/", "T", &T);
  const int np = count_primary(f);
  print_header(f);
  printf("  h            %g (%.0f steps); dE sampled every %d steps, %lld samples\n", h, T / h, every,
         nh_h5_dim(f, "sample"));
  if (random) printf("  ensemble     %d random initial conditions on D at energy %g, seed %lld\n", count, energy, seed);
  else if (print_ics(f) != 0) return -1;
  printf("  methods      %d: %d listed in the spec, %d more from %d grid%s\n", f->nmethods, np, f->nmethods - np,
         ngrids, ngrids == 1 ? "" : "s");
  print_lanes_note(f);
  putchar('\n');
  return 0;
}

static void print_observable_names(nh_h5 *f) {
  int nobs = 0;
  nh_h5_observable *obs = NULL;
  if (nh_h5_read_observables(f, &nobs, &obs) != 0 || nobs == 0) return;
  printf("\nSampled observables (nhbench export %s series --observable NAME):", f->path);
  for (int i = 0; i < nobs; i++) printf(" %s", obs[i].name);
  printf("\n");
  nh_h5_free_observables(nobs, obs);
}

static int info_ensemble(nh_h5 *f) {
  int ngrids = 0, rc = 2;
  nh_h5_grid *grids = NULL;
  nh_ensemble_summary *sum = nh_h5_read_ensemble_summary(f);
  nh_cost *cost = sum ? nh_h5_costs(f, "cost", "method", NULL) : NULL;
  double *wall = cost ? nh_h5_doubles(f, "wall_time", "method", NULL) : NULL;
  double *t = wall ? nh_h5_doubles(f, "t", "sample", NULL) : NULL;
  if (t && nh_h5_read_grids(f, &ngrids, &grids) == 0 && print_ensemble_setup(f, ngrids) >= 0) {
    print_energy_table(f, sum);
    print_failure_reasons(f);
    print_ensemble_cost(f, sum, cost, wall);
    for (int k = 0; k < ngrids; k++) print_grid(&grids[k], k, sum);
    print_observable_names(f);
    rc = 0;
  }
  nh_h5_free_grids(ngrids, grids);
  free(sum), free(cost), free(wall), free(t);
  return rc;
}

/* ---- trajectory ---------------------------------------------------------------------------- */

typedef struct {
  int nobs;
  nh_h5_observable *obs;
  double **max_abs, **last; /* [obs]: [method][h][ic][component] */
} traj_obs;

static void free_traj_obs(traj_obs *o) {
  for (int i = 0; i < o->nobs; i++) free(o->max_abs ? o->max_abs[i] : NULL), free(o->last ? o->last[i] : NULL);
  free(o->max_abs), free(o->last);
  nh_h5_free_observables(o->nobs, o->obs);
}

static int read_traj_obs(nh_h5 *f, traj_obs *o) {
  memset(o, 0, sizeof *o);
  if (nh_h5_read_observables(f, &o->nobs, &o->obs) != 0) return -1;
  o->max_abs = nh_calloc_array((size_t)o->nobs, sizeof(double *));
  o->last = nh_calloc_array((size_t)o->nobs, sizeof(double *));
  if (!o->max_abs || !o->last) return nh_cli_out_of_memory(prog), -1;
  for (int i = 0; i < o->nobs; i++) {
    char a[NH_TEXT_NAME], b[NH_TEXT_NAME];
    snprintf(a, sizeof a, "observables_max_abs/%s", o->obs[i].name);
    snprintf(b, sizeof b, "observables_last/%s", o->obs[i].name);
    if (!(o->max_abs[i] = nh_h5_doubles(f, a, "method,h,ic,component", NULL)) ||
        !(o->last[i] = nh_h5_doubles(f, b, "method,h,ic,component", NULL)))
      return -1;
  }
  return 0;
}

/* One run's observables: first value (sample 0), last value, max |.|, per component. */
static int print_run_observables(nh_h5 *f, const traj_obs *o, int m, long long run) {
  const long long nh = nh_h5_dim(f, "h"), nic = nh_h5_dim(f, "ic");
  long long idx[] = {run / (nh * nic), run / nic % nh, run % nic};
  for (int i = 0; i < o->nobs; i++) {
    const nh_h5_observable *ob = &o->obs[i];
    if (ob->absent[m][0]) {
      printf("      %-24s absent: %s\n", ob->name, ob->absent[m]);
      continue;
    }
    char name[NH_TEXT_NAME];
    snprintf(name, sizeof name, "observables/%s", ob->name);
    double *x = nh_h5_doubles_at(f, name, "method,h,ic,sample,component", 3, idx, NULL);
    if (!x) return -1;
    for (int c = 0; c < ob->width; c++) {
      char a[NH_TEXT_NUMBER], b[NH_TEXT_NUMBER], d[NH_TEXT_NUMBER], label[2 * NH_TEXT_NAME];
      snprintf(label, sizeof label, "%s%s%s", ob->name, ob->width > 1 ? " " : "", ob->width > 1 ? ob->labels[c] : "");
      printf("      %-24s first %10s  last %10s  max|.| %10s  [%s]\n", label, num(a, sizeof a, x[c]),
             num(b, sizeof b, o->last[i][run * ob->width + c]), num(d, sizeof d, o->max_abs[i][run * ob->width + c]),
             ob->units);
    }
    free(x);
  }
  return 0;
}

static int print_trajectory_runs(nh_h5 *f, const traj_obs *o, const double *h, const int *status, const int *nsh) {
  const long long nh = nh_h5_dim(f, "h"), nic = nh_h5_dim(f, "ic");
  int nnames = 0;
  char **ics = nh_h5_strings(f, "ic_names", "ic", &nnames);
  if (!ics) return -1;
  printf("Runs: status, and for each sampled observable its value at t = 0 (first), at the end of the run\n"
         "(last) and its largest magnitude over the samples (max|.|):\n");
  int rc = 0;
  for (int m = 0; m < f->nmethods && rc == 0; m++) {
    printf("%4d ", m);
    put_name(f->methods[m], 5);
    for (long long j = 0; j < nh && rc == 0; j++)
      for (long long i = 0; i < nic && rc == 0; i++) {
        long long run = ((long long)m * nh + j) * nic + i;
        printf("    h = %g, IC %lld (%s): %s, %d samples\n", h[j], i, ics[i], status_name(status[run]), nsh[j]);
        rc = print_run_observables(f, o, m, run);
      }
  }
  nh_h5_free_strings(ics, nnames);
  return rc;
}

static int info_trajectory(nh_h5 *f) {
  traj_obs o;
  int rc = 2;
  double *h = nh_h5_doubles(f, "h", "h", NULL);
  int *status = h ? nh_h5_ints(f, "status", "method,h,ic", NULL) : NULL;
  int *nsh = status ? nh_h5_ints(f, "nsamples_h", "h", NULL) : NULL;
  int ok = nsh && read_traj_obs(f, &o) >= 0;
  if (ok) {
    char *ref = group_str(f, "reference");
    print_header(f);
    printf("  h           ");
    for (long long j = 0; j < nh_h5_dim(f, "h"); j++) printf(" %g", h[j]);
    printf("\n  reference    %s\n", known_or_not(ref));
    free(ref);
    if (print_ics(f) == 0) {
      printf("  methods      %d; observables %d\n\n", f->nmethods, o.nobs);
      rc = print_trajectory_runs(f, &o, h, status, nsh) != 0 ? 2 : 0;
    }
  }
  if (nsh) free_traj_obs(&o);
  free(h), free(status), free(nsh);
  return rc;
}

/* ---- onestep ------------------------------------------------------------------------------- */

static const char *const onestep_columns[] = {"slope", "slope_stderr", "fit_h_min", "fit_h_max", "action_slope",
                                              "summary/max_adjoint_defect", "summary/cond_min", "summary/cond_max"};

/* Method m's row; d[k] the datasets onestep_columns[k]. */
static void print_slope_row(const nh_h5 *f, int m, int expected, int failures, double *const *d) {
  char s[2 * NH_TEXT_NUMBER], r[2 * NH_TEXT_NUMBER], cr[2 * NH_TEXT_NUMBER + sizeof ".."];
  char a[NH_TEXT_NUMBER], ad[NH_TEXT_NUMBER], c0[NH_TEXT_NUMBER], c1[NH_TEXT_NUMBER];
  if (isnan(d[0][m])) snprintf(s, sizeof s, "no fit");
  else snprintf(s, sizeof s, "%.3f +- %.1e", d[0][m], d[1][m]);
  if (isnan(d[2][m])) snprintf(r, sizeof r, "-");
  else snprintf(r, sizeof r, "%.3g .. %.3g", d[2][m], d[3][m]);
  if (isnan(d[4][m])) snprintf(a, sizeof a, "-");
  else snprintf(a, sizeof a, "%.3f", d[4][m]);
  if (isnan(d[6][m])) snprintf(cr, sizeof cr, "-");
  else snprintf(cr, sizeof cr, "%s..%s", num(c0, sizeof c0, d[6][m]), num(c1, sizeof c1, d[7][m]));
  printf("%4d %8d %17s %16s %7s %10s %19s %6d  ", m, expected, s, r, a, num(ad, sizeof ad, d[5][m]), cr, failures);
  put_name(f->methods[m], 4 + 9 + 18 + 17 + 8 + 11 + 20 + 7 + 2);
}

static int info_onestep(nh_h5 *f) {
  double *d[8] = {0};
  int *expected = nh_h5_ints(f, "slope_expected", "method", NULL), good = expected != NULL;
  int *failures = good ? nh_h5_ints(f, "summary/failures", "method", NULL) : NULL;
  good = failures != NULL;
  for (int k = 0; k < 8 && good; k++) good = (d[k] = nh_h5_doubles(f, onestep_columns[k], "method", NULL)) != NULL;
  int npoints;
  if (good && nh_h5_attr_int(f, ".", "npoints", &npoints) != 0) good = 0;
  if (good) {
    print_header(f);
    printf("  points       %d per IC, %lld in all; %lld step sizes\n", npoints, nh_h5_dim(f, "point"),
           nh_h5_dim(f, "h"));
    int random = 0; /* files written before one-step files kept it have neither */
    double energy;
    long long seed;
    if (nh_h5_attr_int(f, ".", "random_ics", &random) == 0 && random &&
        nh_h5_attr_double(f, ".", "energy", &energy) == 0 && nh_h5_attr_ll(f, ".", "seed", &seed) == 0)
      printf("  drawn        the initial conditions at random on D at energy %g, seed %lld\n", energy, seed);
    good = print_ics(f) == 0;
  }
  if (good) {
    printf("\nLocal error slope (max over the points of |F_h(x) - phi_h(x)| against h; expected p + 1), action\n"
           "error slope, largest adjoint defect |F*_{-h}(F_h(x)) - x|, range of cond(J) of the Newton system:\n");
    printf("%4s %8s %17s %16s %7s %10s %19s %6s  %s\n", "#", "expected", "slope +- se", "fit h range", "action",
           "adj defect", "cond(J)", "failed", "method");
    for (int m = 0; m < f->nmethods; m++) print_slope_row(f, m, expected[m], failures[m], d);
  }
  free(expected), free(failures);
  for (int k = 0; k < 8; k++) free(d[k]);
  return good ? 0 : 2;
}

/* ---- work-precision ------------------------------------------------------------------------ */

typedef struct {
  double *h, *err, *work, *wall;
  int *pw, *pt, *status, k;
} wp_data;

static int read_wp(nh_h5 *f, wp_data *w) {
  memset(w, 0, sizeof *w);
  char *pn = nh_h5_attr_string(f, ".", "pareto_norm");
  w->k = -1;
  for (int i = 0; pn && i < NH_WP_NORMS; i++)
    if (strcmp(pn, nh_wp_norm_names[i]) == 0) w->k = i;
  if (pn && w->k < 0) fprintf(stderr, "%s: %s: unknown pareto_norm '%s'\n", prog, f->path, pn);
  free(pn);
  return w->k < 0 || !(w->h = nh_h5_doubles(f, "h", "h", NULL)) ||
                 !(w->err = nh_h5_doubles(f, "err", "method,h,norm", NULL)) ||
                 !(w->work = nh_h5_doubles(f, "work", "method,h", NULL)) ||
                 !(w->wall = nh_h5_doubles(f, "wall_time", "method,h", NULL)) ||
                 !(w->pw = nh_h5_ints(f, "pareto_work", "method,h", NULL)) ||
                 !(w->pt = nh_h5_ints(f, "pareto_time", "method,h", NULL)) ||
                 !(w->status = nh_h5_ints(f, "status", "method,h", NULL))
             ? -1
             : 0;
}

static void free_wp(wp_data *w) {
  free(w->h), free(w->err), free(w->work), free(w->wall), free(w->pw), free(w->pt), free(w->status);
}

static void print_wp_rows(const nh_h5 *f, const wp_data *w, long long nh) {
  printf("\nError at T in the %s norm against counted work (rhs + Jacobian + constraint evaluations) and\n"
         "wall time; pareto: W on the work front, T on the time front (no other run is better in both):\n",
         nh_wp_norm_names[w->k]);
  printf("%4s %10s %10s %12s %10s %6s  %s\n", "#", "h", "err", "work", "wall[s]", "pareto", "status");
  for (int m = 0; m < f->nmethods; m++) {
    printf("%4d ", m);
    put_name(f->methods[m], 5);
    for (long long i = 0; i < nh; i++) {
      size_t c = (size_t)m * (size_t)nh + (size_t)i;
      char e[NH_TEXT_NUMBER], marks[sizeof "WT"] = "";
      if (w->pw[c]) strcat(marks, "W");
      if (w->pt[c]) strcat(marks, "T");
      printf("%4s %10.4g %10s %12.6g %10.3g %6s  %s\n", "", w->h[i],
             num(e, sizeof e, w->err[c * NH_WP_NORMS + (size_t)w->k]), w->work[c], w->wall[c], marks,
             status_name(w->status[c]));
    }
  }
}

static int info_work_precision(nh_h5 *f) {
  wp_data w;
  int rc = 2, repeats;
  if (read_wp(f, &w) == 0 && nh_h5_attr_int(f, ".", "repeats", &repeats) == 0) {
    const long long nh = nh_h5_dim(f, "h");
    print_header(f);
    printf("  h            %lld values; wall time: the median of %d runs\n", nh, repeats);
    if (print_ics(f) == 0) {
      print_wp_rows(f, &w, nh);
      rc = 0;
    }
  }
  free_wp(&w);
  return rc;
}

/* ---- any kind: the datasets as the file describes them ------------------------------------ */

/* "method 8, h 6" from a dataset's dimension names and shape ("?" where they disagree in number). */
static void shape_text(const nh_h5_dataset *d, char *buf, size_t len) {
  buf[0] = '\0';
  const char *p = d->dims ? d->dims : "";
  for (int i = 0; i < d->rank; i++) {
    size_t n = strcspn(p, ",");
    nh_text_append(buf, len, ", ", "%.*s %lld", n ? (int)n : 1, n ? p : "?", d->shape[i]);
    p += n + (p[n] == ',');
  }
  if (d->rank < 0) snprintf(buf, len, "(rank > %d)", NH_H5_MAX_DIMS);
}

/* Every dataset of the study group, two lines each: its name, dimensions and units, then its
 * description (cut to WIDTH columns: nhbench export FILE attr NAME/description gives it whole). */
static int info_datasets(nh_h5 *f) {
  int n = 0;
  nh_h5_dataset *d = NULL;
  if (nh_h5_datasets(f, &n, &d) != 0) return NH_EXIT_USAGE;
  printf("\n%d datasets (nhbench export %s dataset NAME [--at DIM=VALUE]... prints one):\n", n, f->path);
  for (int i = 0; i < n; i++) {
    char shape[NH_TEXT_LONG];
    shape_text(&d[i], shape, sizeof shape);
    const char *desc = d[i].description ? d[i].description : "";
    const int room = WIDTH - 6;
    printf("  %s [%s], units %s\n", d[i].name, shape, known_or_not(d[i].units));
    if ((int)strlen(desc) <= room) printf("      %s\n", desc);
    else printf("      %.*s...\n", room - 3, desc);
  }
  nh_h5_free_datasets(n, d);
  return 0;
}

/* The arguments of info; 0, or an exit status (NH_EXIT_OK after --help). */
static int parse_info_args(int argc, char **argv, const char **path, int *datasets) {
  static const struct option longopts[] = {{"help", no_argument, NULL, 'h'}, {"datasets", no_argument, NULL, 'd'}, {0}};
  int c;
  while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
    if (c == 'h') return fputs(usage, stdout), -1;
    if (c == 'd') {
      *datasets = 1;
      continue;
    }
    return nh_cli_bad_option(prog, usage, c, argv);
  }
  if (optind + 1 < argc) return nh_cli_bad_argument(prog, usage, argv[optind + 1]);
  if (optind >= argc) return fprintf(stderr, "%s: no FILE.h5 given\n%s", prog, usage), NH_EXIT_USAGE;
  *path = argv[optind];
  return 0;
}

int nh_cli_info(int argc, char **argv) {
  const char *path = NULL;
  int datasets = 0, rc = parse_info_args(argc, argv, &path, &datasets);
  if (rc) return rc < 0 ? NH_EXIT_OK : rc;
  nh_h5 f;
  if (nh_h5_open(&f, prog, path) != 0) return NH_EXIT_USAGE;
  static int (*const by_kind[NH_STUDY_KINDS])(nh_h5 *) = {
      [NH_STUDY_CONVERGENCE] = info_convergence, [NH_STUDY_ENSEMBLE] = info_ensemble,
      [NH_STUDY_TRAJECTORY] = info_trajectory,   [NH_STUDY_ONESTEP] = info_onestep,
      [NH_STUDY_WORK_PRECISION] = info_work_precision};
  cut_names = 0;
  if (datasets) print_header(&f);
  /* A kind without a summary of its own (a new one) is described by its datasets. */
  rc = datasets || !by_kind[f.kind] ? info_datasets(&f) : by_kind[f.kind](&f);
  if (rc == 0 && cut_names) printf("\n(names cut to %d columns; full names: nhbench export %s methods)\n", WIDTH, path);
  nh_h5_close(&f);
  return rc;
}
