/* nhbench export FILE.h5 TABLE [options]: whitespace-separated tables for gnuplot (columns and
 * blocks documented in results/README.md, "Export tables"). Every number comes from the file as
 * the writer stored it; nothing is derived here. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/cli/cli.h"
#include "bench/cli/cli_table.h"
#include "core/text.h"
#include "integrators/integrator.h"
#include "results/results.h"

static const char usage[] =
    "usage: nhbench export FILE.h5 TABLE [options]\n"
    "  Writes a whitespace-separated table on stdout for gnuplot. Lines starting with '#' are\n"
    "  comments; the first names the columns. Tables with blocks (one per method or trajectory)\n"
    "  separate them by two blank lines, so gnuplot's `index N` selects block N; each block starts\n"
    "  with a comment naming it. Numbers are written in the shortest form that reads back exactly;\n"
    "  NaN marks a missing value. Details: results/README.md, \"Export tables\".\n"
    "\n"
    "tables, any study:\n"
    "  study                   the study kind: convergence, ensemble, trajectory, onestep or\n"
    "                          work_precision\n"
    "  attr NAME               the value of attribute NAME of the root or the study group (system, T,\n"
    "                          h, count, ...), or OBJ/NAME of an object in the study group\n"
    "                          (grid0/param0, err/units)\n"
    "  methods [--primary]     index name label, one method a line (label: what figures show, the spec's\n"
    "                          labels or the name without default parameters); --primary: only the\n"
    "                          default LIST\n"
    "  dims                    name size: every dimension of the study's datasets (method, h, ic,\n"
    "                          sample, ...), the range of the tables' indices\n"
    "  steps                   index h, one step size a line (an ensemble: its one h)\n"
    "  ics                     index q[0] ... v[n-1] name: the initial conditions (--ic K is line K),\n"
    "                          the name last (it may hold a blank: \"random 3\")\n"
    "  dataset NAME[,NAME...] [--at DIM=VALUE]... [--field FIELD]\n"
    "                          any dataset of the study group (nhbench info FILE lists them; a path\n"
    "                          such as summary/ok) with dimensions fixed by --at (DIM=VALUE: a method\n"
    "                          by index or name, h and t by value, an ic or a component by index or\n"
    "                          name, any other dimension by index); a row per value: the coordinates\n"
    "                          of the free dimensions (h, t by value, the others by index), then the\n"
    "                          value; with two or more free dimensions a block per index of the first.\n"
    "                          Several NAMEs: a column each, side by side; each takes the --at of its\n"
    "                          own dimensions, and their free dimensions must be the same.\n"
    "                          FIELD: a number member of a dataset of records: a cost counter (steps,\n"
    "                          rhs_evals, jacobian_evals, linear_solves, newton_iterations,\n"
    "                          constraint_evals) or a field of orders (observed, stderr, ...)\n"
    "convergence studies:\n"
    "  convergence [--methods LIST]\n"
    "                          a block per method (default all): h err err_q err_v\n"
    "                          constraint_residual status z err_max err_2 lambda_err discrete_residual\n"
    "  orders                  index claimed observed stderr fit_h_min fit_h_max expected ok name\n"
    "ensemble studies:\n"
    "  energy [--method I] [--ics A:B] [--relative]\n"
    "                          a block per initial condition (IC) A, ..., B-1 (default 0:5) of\n"
    "                          method I (default 0): t dE, with dE = E(t) - E0 (--relative: dE/E0)\n"
    "  energy-all-methods [--ic J] [--methods LIST] [--relative]\n"
    "                          a block per method, IC J (default 0): t dE\n"
    "  quantiles [--methods LIST]\n"
    "                          a block per method: t q10 median q90 count (the 10 %, 50 % and 90 %\n"
    "                          quantiles of dE over the ICs still running, and their number)\n"
    "  variance [--methods LIST]\n"
    "                          a block per method: t mean var count (mean and unbiased variance of\n"
    "                          dE over the count ICs still running at t)\n"
    "  grid [--grid G] [--stat STAT]\n"
    "                          grid G (default 0): value0 value1 stat method_index failed count\n"
    "                          lo0 hi0 lo1 hi1, a blank line after each value0 (gnuplot pm3d/image\n"
    "                          order); stat is NaN where skipped or every IC failed; lo/hi: cell edges\n"
    "                          halfway to the neighbouring values\n"
    "  STAT: median_max_abs_dE (default), max_max_abs_dE, mean_drift_slope, median_abs_drift_slope,\n"
    "        final_var; as the writer stored them in /ensemble/summary (over the ICs that ran to T)\n"
    "trajectory studies (and ensembles that sample observables):\n"
    "  observables             index name width units, one observable a line, then its component\n"
    "                          labels and the methods that do not define it as comments\n"
    "  series [--observable NAME] [--method I] [--h J] [--ic K]\n"
    "                          one block: t c0 c1 ..., the components of observable NAME (default:\n"
    "                          the first) along the run of method I (default 0) with step size h[J]\n"
    "                          (default 0; trajectory only) from IC K (default 0); the first comment\n"
    "                          names the columns by their labels\n"
    "onestep studies:\n"
    "  local_error [--methods LIST]\n"
    "                          a block per method: h max_local_err max_action_err (max over the start\n"
    "                          points, for slope plots); the block comment gives the fitted slope\n"
    "  slopes                  index claimed expected slope stderr fit_h_min fit_h_max action_slope\n"
    "                          max_adjoint_defect cond_min cond_max name\n"
    "work_precision studies:\n"
    "  work_precision [--methods LIST] [--norm NORM]\n"
    "                          a block per method: h work wall_time err pareto_work pareto_time status,\n"
    "                          err in NORM (default: the study's pareto_norm); pareto flags (1: on the\n"
    "                          front) are always those of pareto_norm\n"
    "  NORM: qv_max, qv_2, q_max, q_2, v_max, v_2\n"
    "\n"
    "  LIST: comma-separated method indices (a method may repeat; at most 4 entries per method of\n"
    "        the file), or all; default: the methods listed in the spec itself, not those added by a\n"
    "        grid (the file's `primary` dataset; all if it flags none)\n"
    "  --format FORMAT         text (the default, above), csv, tsv or json, for every table: a header\n"
    "                          row of the column names (with [units] where the file gives them), and\n"
    "                          a block's keys (method_index, method, ic, ...) as the first columns of\n"
    "                          each row instead of its '#' line; json: {\"table\", \"columns\", \"rows\",\n"
    "                          \"notes\"} with NaN as null. Details: results/README.md, \"Export tables\".\n"
    "Exit status 2 for bad usage, a table of another study kind, an index out of range, or a file\n"
    "that is not a readable results file of schema version 2 or 3.\n"
    "  -h, --help              this text\n";

enum {
  O_METHOD = 1, O_ICS = 2, O_RELATIVE = 4, O_IC = 8, O_METHODS = 16, O_GRID = 32, O_STAT = 64, O_PRIMARY = 128,
  O_H = 256, O_OBS = 512, O_NORM = 1024, O_AT = 2048, O_FIELD = 4096
};
static const char *const option_names[] = {"--method", "--ics",    "--relative", "--ic",         "--methods", "--grid",
                                           "--stat",   "--primary", "--h",       "--observable", "--norm",
                                           "--at",     "--field"};
#define NOPTIONS 13

typedef struct {
  int given; /* O_* flags of the options on the command line */
  int method, ic, grid, relative, primary, h;
  long ics_a, ics_b; /* -1: default */
  const char *methods, *stat, *name, *observable, *norm, *field; /* name: attr NAME or dataset NAME */
  int nat;                             /* --at selectors, in their order */
  nh_h5_select at[NH_H5_MAX_SELECT];
} opts;

static const char *prog = "nhbench export";

static int bad(const char *fmt, const char *arg) {
  fprintf(stderr, "%s: ", prog);
  fprintf(stderr, fmt, arg);
  fprintf(stderr, "\n(nhbench export --help lists the tables and their options)\n");
  return 2;
}

static int parse_index(const char *s, long *v) {
  char *end;
  if (!*s) return -1;
  *v = strtol(s, &end, 10);
  return *end || *v < 0 || *v > 100000000 ? -1 : 0;
}

/* Column i's units from dataset NAME's units attribute, for the formats that show them (text does not). */
static void units_from(nh_h5 *f, int i, const char *name) {
  if (nh_table_format_of() == NH_TABLE_TEXT || !nh_h5_has(f, name) || !nh_h5_has_attr(f, name, "units")) return;
  char *units = nh_h5_attr_string(f, name, "units");
  if (!units) nh_table_fail(); /* its reader said why */
  nh_table_units(i, units);
  free(units);
}

/* The units of columns first.. from the datasets names (NULL: none). */
static void units_from_all(nh_h5 *f, int first, int n, const char *const *names) {
  for (int i = 0; i < n; i++)
    if (names[i]) units_from(f, first + i, names[i]);
}

/* Block k of method m, in a table whose key columns 0 and 1 are method_index and method. */
static void method_block(const nh_h5 *f, long k, int m) {
  nh_table_key_int(0, m), nh_table_key_str(1, f->methods[m]);
  nh_table_block(k, "method %d %s", m, f->methods[m]);
}

/* A string in the text of a note or block line: a number as the tables write it. */
static const char *shown(char *buf, size_t len, double v) { return nh_h5_fmt(buf, len, v); }

static int out_of_range(const nh_h5 *f, const char *option, long v, long long n, const char *what) {
  if (v < n) return 0;
  fprintf(stderr, "%s: %s %ld: %s has %s 0..%lld\n", prog, option, v, f->path, what, n - 1);
  return 1;
}

/* The method list of --methods (or the default); returns the count, or 0 with a message (none to export). */
static int method_list(const nh_h5 *f, const char *spec, int **out) {
  int *list = malloc(sizeof(int) * (size_t)f->nmethods * 4 + sizeof(int)), n = 0, nprimary = 0;
  *out = list;
  if (!list) return nh_cli_out_of_memory(prog), 0;
  for (int m = 0; m < f->nmethods; m++) nprimary += f->primary[m] != 0;
  if (!spec || strcmp(spec, "all") == 0) {
    for (int m = 0; m < f->nmethods; m++)
      if (spec || f->primary[m] || !nprimary) list[n++] = m;
    return n;
  }
  for (const char *p = spec; *p;) {
    char *end;
    long v = strtol(p, &end, 10);
    if (end == p || (*end && *end != ',') || v < 0 || v >= f->nmethods) {
      fprintf(stderr, "%s: --methods '%s': expected comma-separated method indices 0..%d, or all\n", prog, spec,
              f->nmethods - 1);
      return 0;
    }
    if (n == f->nmethods * 4) { /* the list's room: each method 4 times */
      fprintf(stderr, "%s: --methods '%s': more than %d entries (4 per method of the file)\n", prog, spec, n);
      return 0;
    }
    list[n++] = (int)v;
    p = *end ? end + 1 : end;
  }
  if (n == 0) fprintf(stderr, "%s: --methods '%s': no methods\n", prog, spec);
  return n;
}

/* ---- any study ----------------------------------------------------------------------------- */

static int t_study(nh_h5 *f, const opts *o NH_UNUSED) {
  static const char *const cols[] = {"study"};
  nh_table_columns(1, cols, 0, 0, NULL);
  nh_table_str(f->kind_name), nh_table_end_row();
  return 0;
}

static int t_attr(nh_h5 *f, const opts *o) {
  /* NAME on the root or the study group, or OBJ/NAME on an object inside the study group. */
  char objbuf[NH_TEXT_NAME];
  const char *arg = o->name, *name = arg, *obj = NULL, *slash = strrchr(arg, '/');
  if (slash) {
    snprintf(objbuf, sizeof objbuf, "%.*s", (int)(slash - arg), arg);
    name = slash + 1;
    obj = nh_h5_has_attr(f, objbuf, name) ? objbuf : NULL;
  } else {
    obj = nh_h5_has_attr(f, "/", name) ? "/" : nh_h5_has_attr(f, ".", name) ? "." : NULL;
  }
  if (!obj) {
    if (slash) fprintf(stderr, "%s: %s: no attribute '%s' on %s in the study group\n", prog, f->path, name, objbuf);
    else fprintf(stderr, "%s: %s: no attribute '%s' on / or on the study group\n", prog, f->path, name);
    return 2;
  }
  int n = 0;
  const char *cols[] = {arg};
  nh_table_columns(1, cols, 0, 0, NULL);
  if (nh_h5_attr_is_string(f, obj, name)) {
    char **s = nh_h5_attr_strings(f, obj, name, &n);
    for (int i = 0; s && i < n; i++) nh_table_str(s[i]), nh_table_end_row();
    nh_h5_free_strings(s, n);
    return s ? 0 : 2;
  }
  /* Numbers: text writes them on one line, the other formats a row each. */
  double *v = nh_h5_attr_doubles(f, obj, name, &n);
  const int text = nh_table_format_of() == NH_TABLE_TEXT;
  for (int i = 0; v && i < n; i++) {
    nh_table_num(v[i]);
    if (!text || i == n - 1) nh_table_end_row();
  }
  if (v && text && n == 0) nh_table_end_row();
  free(v);
  return v ? 0 : 2;
}

/* plain as enhanced text shows it: '\\' before each of enhanced text's special characters. */
static void enhanced_text(const char *plain, char *buf, size_t len) {
  size_t k = 0;
  for (const char *c = plain; *c && k + 2 < len; c++) {
    if (strchr("_^{}@&~\\", *c)) buf[k++] = '\\';
    buf[k++] = *c;
  }
  buf[k] = '\0';
}

/* What a figure shows for method m, in gnuplot's enhanced text: the spec's label kept in the
 * file (given: its method_labels, or NULL), else the method's automatic label (nh_method_label)
 * with enhanced text's special characters escaped, so that nh_newmark keeps its underscore; a
 * method this build does not read, by its name. 0, or -1 out of memory (said). */
static int display_label(const nh_h5 *f, char *const *given, int m, char *buf, size_t len) {
  if (given && given[m][0]) {
    snprintf(buf, len, "%s", given[m]);
    return 0;
  }
  char plain[NH_TEXT_CANONICAL], msg[NH_TEXT_MESSAGE];
  errno = 0;
  nh_method *method = nh_method_parse(f->methods[m], msg, sizeof msg);
  if (!method && errno == ENOMEM) {
    fprintf(stderr, "%s: %s: %s\n", f->prog, f->path, msg);
    return -1;
  }
  if (method)
    nh_method_label(method, plain, sizeof plain), nh_method_free(method);
  else
    snprintf(plain, sizeof plain, "%s", f->methods[m]);
  enhanced_text(plain, buf, len);
  return 0;
}

static int t_methods(nh_h5 *f, const opts *o) {
  static const char *const cols[] = {"index", "name", "label"};
  int nlabels = 0, *list = NULL;
  char **given = nh_h5_has(f, "method_labels") ? nh_h5_strings(f, "method_labels", "method", &nlabels) : NULL;
  if (nh_h5_has(f, "method_labels") && !given) return 2; /* said by the reader */
  /* The plots read the labels as double-quoted words: a '"' (in a file nhbench did not write: the
   * spec refuses it, as the reader refuses control characters) is refused. */
  for (int m = 0; given && m < nlabels; m++)
    if (strchr(given[m], '"')) {
      fprintf(stderr, "%s: %s: method_labels[%d] holds a '\"': not a label nhbench writes\n", f->prog, f->path, m);
      nh_h5_free_strings(given, nlabels);
      return 2;
    }
  const int n = method_list(f, o->primary ? NULL : "all", &list);
  nh_table_columns(3, cols, 0, 1, " (label: to the end of the line)");
  int rc = n ? 0 : 2;
  for (int k = 0; k < n && rc == 0; k++) {
    char label[NH_TEXT_CANONICAL];
    if (display_label(f, given, list[k], label, sizeof label) < 0)
      rc = 1;
    else
      nh_table_int(list[k]), nh_table_str(f->methods[list[k]]), nh_table_str(label), nh_table_end_row();
  }
  free(list);
  if (given) nh_h5_free_strings(given, nlabels);
  return rc;
}

/* ---- coordinates: what the other tables' indices stand for ------------------------------- */

/* Every dimension of the study group and its size, learned from the datasets themselves. */
static int t_dims(nh_h5 *f, const opts *o NH_UNUSED) {
  static const char *const cols[] = {"name", "size"};
  if (nh_h5_learn_dims(f) < 0) return 2;
  nh_table_columns(2, cols, 0, 1, NULL);
  for (int i = 0; i < f->ndims; i++) nh_table_str(f->dim_name[i]), nh_table_int(f->dim_size[i]), nh_table_end_row();
  return 0;
}

/* The step sizes (an ensemble's one; schema 2: the group's attribute h). */
static int t_steps(nh_h5 *f, const opts *o NH_UNUSED) {
  long long n = 0;
  double *h = nh_h5_steps(f, &n);
  if (!h) return 2;
  static const char *const cols[] = {"index", "h"};
  nh_table_columns(2, cols, 0, 1, NULL);
  units_from(f, 1, "h");
  for (long long i = 0; i < n; i++) nh_table_int(i), nh_table_num(h[i]), nh_table_end_row();
  free(h);
  return 0;
}

/* The initial conditions: index, (q0, v0) by the state's labels, and the name (which may hold a
 * blank, "random 3": the rest of the line). */
static int t_ics(nh_h5 *f, const opts *o NH_UNUSED) {
  int nic = 0, nlabels = 0, rc = 2;
  hsize_t shape[2] = {0, 0};
  char **names = nh_h5_strings(f, "ic_names", "ic", &nic), **labels = NULL;
  double *q0 = names ? nh_h5_doubles(f, "q0", "ic,dof", shape) : NULL;
  double *v0 = q0 ? nh_h5_doubles(f, "v0", "ic,dof", NULL) : NULL;
  if (v0 && (labels = nh_h5_strings(f, "state_labels", "state", &nlabels)) && nlabels == 2 * (int)shape[1]) {
    const size_t n = (size_t)shape[1];
    const char *cols[NH_TABLE_MAX_COLUMNS] = {"index"};
    for (int i = 0; i < nlabels && i + 2 < NH_TABLE_MAX_COLUMNS; i++) cols[i + 1] = labels[i];
    cols[nlabels + 1] = "name";
    nh_table_columns(nlabels + 2, cols, 0, 1, NULL);
    for (int k = 0; k < nic; k++) {
      nh_table_int(k);
      for (size_t i = 0; i < 2 * n; i++) nh_table_num(i < n ? q0[k * n + i] : v0[k * n + i - n]);
      nh_table_str(names[k]), nh_table_end_row();
    }
    rc = 0;
  } else if (labels) {
    fprintf(stderr, "%s: %s: %d state labels for %llu degrees of freedom\n", prog, f->path, nlabels,
            (unsigned long long)shape[1]);
  }
  nh_h5_free_strings(names, nic), nh_h5_free_strings(labels, nlabels);
  free(q0), free(v0);
  return rc;
}

/* ---- any dataset, by dimension names (results.h, nh_h5_slice_read) ------------------------- */

/* The header line of one dataset: what it is. 0, or -1 (said) if an attribute it has cannot be
 * read. */
static int dataset_header(nh_h5 *f, const char *name, const nh_h5_slice *s) {
  const int has_desc = nh_h5_has_attr(f, name, "description"), has_units = nh_h5_has_attr(f, name, "units");
  char *desc = has_desc ? nh_h5_attr_string(f, name, "description") : NULL;
  char *units = has_units ? nh_h5_attr_string(f, name, "units") : NULL;
  if ((has_desc && !desc) || (has_units && !units)) return free(desc), free(units), -1;
  char dims[NH_TEXT_LONG] = "";
  for (int d = 0; d < s->rank; d++) nh_text_append(dims, sizeof dims, ",", "%s", s->dims[d]);
  nh_table_note("%s [%s], units %s: %s", name, dims, units ? units : "?", desc ? desc : "");
  free(desc), free(units);
  return 0;
}

/* Whether dataset name has dimension dim: 1 or 0; 1 too if it has no dimensions attribute (the
 * slice then says what is wrong with it); -1 if the attribute cannot be read (said). */
static int has_dim(nh_h5 *f, const char *name, const char *dim) {
  if (!nh_h5_has(f, name) || !nh_h5_has_attr(f, name, "dimensions")) return 1;
  char *dims = nh_h5_attr_string(f, name, "dimensions");
  if (!dims) return -1;
  int found = 0;
  for (const char *p = dims; *p && !found; p += strcspn(p, ","), p += *p == ',') {
    const size_t len = strcspn(p, ",");
    found = len == strlen(dim) && strncmp(p, dim, len) == 0;
  }
  free(dims);
  return found;
}

/* The same free dimensions, of the same sizes, in the same order: rows that line up. */
static int same_free(const nh_h5_slice *a, const nh_h5_slice *b) {
  if (a->nfree != b->nfree) return 0;
  for (int k = 0; k < a->nfree; k++)
    if (strcmp(a->dims[a->free_dim[k]], b->dims[b->free_dim[k]]) != 0 ||
        a->shape[a->free_dim[k]] != b->shape[b->free_dim[k]])
      return 0;
  return 1;
}

#define MAX_DATASETS 8

static void free_slices(nh_h5_slice *s, int n) {
  for (int i = 0; i < n; i++) nh_h5_slice_free(&s[i]);
}

/* Datasets NAME[,NAME...] sliced alike into s (one name: every selector; several: each gets the
 * selectors of its own dimensions, and each selector must fit one of them); their number, or -1
 * (said; nothing left to free). */
static int read_slices(nh_h5 *f, const opts *o, char names[MAX_DATASETS][NH_TEXT_NAME], nh_h5_slice *s) {
  int n = 0, used[NH_H5_MAX_SELECT] = {0};
  for (const char *p = o->name; *p && n < MAX_DATASETS; p += strcspn(p, ","), p += *p == ',')
    snprintf(names[n++], NH_TEXT_NAME, "%.*s", (int)strcspn(p, ","), p);
  const size_t len = strlen(o->name);
  if (n == 0 || n == MAX_DATASETS || o->name[0] == ',' || o->name[len - 1] == ',' || strstr(o->name, ",,"))
    return bad("dataset '%s': one to 7 names, separated by commas", o->name), -1;
  char why[NH_TEXT_MESSAGE] = "";
  for (int i = 0; i < n; i++) {
    nh_h5_select sel[NH_H5_MAX_SELECT];
    int nsel = 0;
    for (int j = 0; j < o->nat; j++) {
      const int has = n == 1 ? 1 : has_dim(f, names[i], o->at[j].dim);
      if (has < 0) return free_slices(s, i), -1;
      if (has) sel[nsel++] = o->at[j], used[j] = 1;
    }
    if (nh_h5_slice_read(f, names[i], o->field, sel, nsel, &s[i], why, sizeof why) < 0) {
      free_slices(s, i);
      fprintf(stderr, "%s: %s\n", prog, why);
      return -1;
    }
    if (!same_free(&s[0], &s[i])) {
      free_slices(s, i + 1);
      fprintf(stderr, "%s: %s: datasets %s and %s do not line up: their free dimensions differ\n", prog, f->path,
              names[0], names[i]);
      return -1;
    }
  }
  for (int j = 0; j < o->nat; j++)
    if (!used[j]) {
      free_slices(s, n);
      fprintf(stderr, "%s: --at %s=...: none of %s has that dimension\n", prog, o->at[j].dim, o->name);
      return -1;
    }
  return n;
}

static int t_dataset(nh_h5 *f, const opts *o) {
  char names[MAX_DATASETS][NH_TEXT_NAME];
  nh_h5_slice s[MAX_DATASETS];
  const int n = read_slices(f, o, names, s);
  if (n < 0) return 2;
  int rc = 0;
  for (int i = 0; i < n && rc == 0; i++) rc = dataset_header(f, names[i], &s[i]) != 0 ? 2 : 0;
  const nh_h5_slice *a = &s[0];
  if (rc == 0) {
    const char *cols[NH_TABLE_MAX_COLUMNS];
    for (int k = 0; k < a->nfree; k++) cols[k] = a->coord_name[k];
    for (int i = 0; i < n; i++) cols[a->nfree + i] = names[i];
    nh_table_columns(a->nfree + n, cols, 0, 1, NULL);
    for (int k = 0; k < a->nfree; k++)
      if (strcmp(a->coord_name[k], "h") == 0 || strcmp(a->coord_name[k], "t") == 0) units_from(f, k, a->coord_name[k]);
    for (int i = 0; i < n; i++) units_from(f, a->nfree + i, names[i]);
  }
  const long long per_block = a->nfree > 1 ? a->count / a->shape[a->free_dim[0]] : a->count;
  for (long long i = 0; rc == 0 && i < a->count; i++) {
    if (a->nfree > 1 && i % per_block == 0) {
      const long long b = i / per_block;
      char what[NH_TEXT_LONG] = "", num[NH_TEXT_NUMBER];
      if (strcmp(a->dims[a->free_dim[0]], "method") == 0 && b < f->nmethods)
        snprintf(what, sizeof what, " %s", f->methods[b]);
      else if (strcmp(a->coord_name[0], "h") == 0 || strcmp(a->coord_name[0], "t") == 0)
        snprintf(what, sizeof what, " %s = %s", a->coord_name[0], shown(num, sizeof num, a->coord[0][b]));
      nh_table_block(b, "%s %lld%s", a->dims[a->free_dim[0]], b, what);
    }
    for (int k = 0; k < a->nfree; k++) nh_table_num(a->coord[k][nh_h5_slice_index(a, i, k)]);
    for (int d = 0; d < n; d++) nh_table_num(s[d].x[i]);
    nh_table_end_row();
  }
  free_slices(s, n);
  return rc;
}

/* ---- convergence --------------------------------------------------------------------------- */

static int t_convergence(nh_h5 *f, const opts *o) {
  static const char *const names[] = {"err", "err_q", "err_v", "constraint_residual", "z",
                                      "err_max", "err_2", "lambda_err", "discrete_residual"};
  enum { NCOLS = sizeof names / sizeof *names };
  double *h = nh_h5_doubles(f, "h", "h", NULL), *col[NCOLS] = {0};
  int *status = h ? nh_h5_ints(f, "status", "method,h", NULL) : NULL, *list = NULL, rc = 2, good = status != NULL;
  for (int k = 0; k < NCOLS && good; k++) good = (col[k] = nh_h5_doubles(f, names[k], "method,h", NULL)) != NULL;
  int n = good ? method_list(f, o->methods ? o->methods : "all", &list) : 0;
  if (n) {
    static const char *const cols[] = {"method_index",        "method", "h", "err",     "err_q", "err_v",
                                       "constraint_residual", "status", "z", "err_max", "err_2", "lambda_err",
                                       "discrete_residual"};
    const long long nh = nh_h5_dim(f, "h");
    nh_table_columns(13, cols, 2, 1, NULL);
    units_from(f, 2, "h");
    units_from_all(f, 3, 4, names), units_from_all(f, 8, NCOLS - 4, names + 4);
    for (int k = 0; k < n; k++) {
      method_block(f, k, list[k]);
      for (long long i = 0; i < nh; i++) {
        size_t c = (size_t)list[k] * (size_t)nh + (size_t)i;
        nh_table_num(h[i]);
        for (int j = 0; j < NCOLS; j++) {
          if (j == 4) nh_table_int(status[c]); /* status comes before z */
          nh_table_num(col[j][c]);
        }
        nh_table_end_row();
      }
    }
    rc = 0;
  }
  free(h), free(status), free(list);
  for (int k = 0; k < NCOLS; k++) free(col[k]);
  return rc;
}

static int t_orders(nh_h5 *f, const opts *o NH_UNUSED) {
  nh_order_row *r = nh_h5_read_orders(f);
  if (!r) return 2;
  static const char *const cols[] = {"index",     "claimed",  "observed", "stderr", "fit_h_min",
                                     "fit_h_max", "expected", "ok",       "name"};
  nh_table_columns(9, cols, 0, 1, NULL);
  units_from(f, 4, "h"), units_from(f, 5, "h");
  for (int m = 0; m < f->nmethods; m++) {
    nh_table_int(m), nh_table_int(r[m].claimed);
    nh_table_num(r[m].observed), nh_table_num(r[m].stderr_), nh_table_num(r[m].fit_h_min), nh_table_num(r[m].fit_h_max);
    nh_table_int(r[m].expected), nh_table_int(r[m].ok), nh_table_str(r[m].method), nh_table_end_row();
  }
  nh_h5_free_orders(r, f->nmethods);
  return 0;
}

/* ---- ensemble ------------------------------------------------------------------------------ */

/* t, E0 and the statuses shared by the energy tables. */
typedef struct {
  long long nic, ns;
  double *t, *E0;
  int *status;
} ens_base;

static int read_base(nh_h5 *f, ens_base *b) {
  memset(b, 0, sizeof *b);
  b->t = nh_h5_doubles(f, "t", "sample", NULL);
  b->E0 = b->t ? nh_h5_doubles(f, "E0", "ic", NULL) : NULL;
  b->status = b->E0 ? nh_h5_ints(f, "status", "method,ic", NULL) : NULL;
  if (!b->status) {
    free(b->t), free(b->E0);
    return -1;
  }
  b->ns = nh_h5_dim(f, "sample");
  b->nic = nh_h5_dim(f, "ic");
  return 0;
}

static void free_base(ens_base *b) { free(b->t), free(b->E0), free(b->status); }

/* The energy tables' columns: the trajectory's keys, then t dE (or dE/E0). */
static void energy_columns(nh_h5 *f, int relative) {
  const char *cols[] = {"method_index", "method", "ic", "E0", "status", "t", relative ? "dE/E0" : "dE"};
  nh_table_columns(7, cols, 5, 1, NULL);
  units_from(f, 3, "E0"), units_from(f, 5, "t");
  if (relative)
    nh_table_units(6, "1");
  else
    units_from(f, 6, "dE");
}

/* Block k: one trajectory of method m, IC ic: its keys, its comment and t dE (or dE/E0). */
static void energy_block(const nh_h5 *f, const ens_base *b, const double *dE, long k, int m, long ic, int relative) {
  const double *r = dE + (size_t)ic * (size_t)b->ns;
  const int status = b->status[(size_t)m * (size_t)b->nic + (size_t)ic];
  char e0[NH_TEXT_NUMBER];
  nh_table_key_int(0, m), nh_table_key_str(1, f->methods[m]), nh_table_key_int(2, ic);
  nh_table_key_num(3, b->E0[ic]), nh_table_key_int(4, status);
  nh_table_block(k, "method %d %s, IC %ld, E0 %s, status %d", m, f->methods[m], ic, shown(e0, sizeof e0, b->E0[ic]),
                 status);
  for (long long s = 0; s < b->ns; s++)
    nh_table_num(b->t[s]), nh_table_num(relative ? r[s] / b->E0[ic] : r[s]), nh_table_end_row();
}

static int t_energy(nh_h5 *f, const opts *o) {
  ens_base b;
  if (read_base(f, &b) != 0) return 2;
  int rc = 2;
  long a = o->ics_a < 0 ? 0 : o->ics_a, z = o->ics_b < 0 ? (b.nic < 5 ? (long)b.nic : 5) : o->ics_b;
  if (o->ics_b == -2) z = (long)b.nic;            /* "A:" to the end */
  if (o->ics_a >= 0 && o->ics_b == -1) z = a + 1; /* a single index */
  if (out_of_range(f, "--method", o->method, f->nmethods, "methods")) {
  } else if (z > b.nic || a >= z) { /* a >= nic fails one or the other */
    fprintf(stderr, "%s: --ics %ld:%ld: %s has initial conditions 0..%lld (A:B selects A, ..., B-1)\n", prog, a, z,
            f->path, b.nic - 1);
  } else {
    long long m = o->method;
    double *dE = nh_h5_doubles_at(f, "dE", "method,ic,sample", 1, &m, NULL);
    if (dE) energy_columns(f, o->relative);
    for (long ic = a; dE && ic < z; ic++) energy_block(f, &b, dE, ic - a, o->method, ic, o->relative);
    rc = dE ? 0 : 2;
    free(dE);
  }
  free_base(&b);
  return rc;
}

static int t_energy_all(nh_h5 *f, const opts *o) {
  ens_base b;
  if (read_base(f, &b) != 0) return 2;
  int *list = NULL, n = method_list(f, o->methods, &list), rc = n ? 0 : 2;
  if (n && out_of_range(f, "--ic", o->ic, b.nic, "initial conditions")) rc = 2;
  if (rc == 0) energy_columns(f, o->relative);
  for (int k = 0; k < n && rc == 0; k++) {
    long long m = list[k];
    double *dE = nh_h5_doubles_at(f, "dE", "method,ic,sample", 1, &m, NULL);
    if (!dE) {
      rc = 2;
      break;
    }
    energy_block(f, &b, dE, k, list[k], o->ic, o->relative);
    free(dE);
  }
  free(list);
  free_base(&b);
  return rc;
}

/* A block per listed method with one row per sample: t, the [method][sample] datasets `cols`
 * (NULL-terminated) and dE_count, under the column names t, `names` and count. */
static int sample_table(nh_h5 *f, const opts *o, const char *const *names, const char *const *cols) {
  enum { MAXCOLS = 4 };
  int *list = NULL, n = method_list(f, o->methods, &list), rc = 2, ncols = 0, ok = n != 0;
  double *t = ok ? nh_h5_doubles(f, "t", "sample", NULL) : NULL, *col[MAXCOLS] = {NULL};
  ok = ok && t;
  for (; ok && cols[ncols] && ncols < MAXCOLS; ncols++)
    ok = (col[ncols] = nh_h5_doubles(f, cols[ncols], "method,sample", NULL)) != NULL;
  int *count = ok ? nh_h5_ints(f, "dE_count", "method,sample", NULL) : NULL;
  if (count) {
    const long long ns = nh_h5_dim(f, "sample");
    const char *shown_cols[MAXCOLS + 4] = {"method_index", "method", "t"};
    for (int j = 0; j < ncols; j++) shown_cols[3 + j] = names[j];
    shown_cols[3 + ncols] = "count";
    nh_table_columns(ncols + 4, shown_cols, 2, 1, NULL);
    units_from(f, 2, "t"), units_from_all(f, 3, ncols, cols);
    for (int k = 0; k < n; k++) {
      method_block(f, k, list[k]);
      for (long long s = 0; s < ns; s++) {
        size_t c = (size_t)list[k] * (size_t)ns + (size_t)s;
        nh_table_num(t[s]);
        for (int j = 0; j < ncols; j++) nh_table_num(col[j][c]);
        nh_table_int(count[c]), nh_table_end_row();
      }
    }
    rc = 0;
  }
  for (int j = 0; j < ncols; j++) free(col[j]);
  free(list), free(t), free(count);
  return rc;
}

static int t_variance(nh_h5 *f, const opts *o) {
  static const char *const cols[] = {"dE_mean", "dE_var", NULL}, *const names[] = {"mean", "var"};
  return sample_table(f, o, names, cols);
}

static int t_quantiles(nh_h5 *f, const opts *o) {
  static const char *const cols[] = {"dE_q10", "dE_q50", "dE_q90", NULL}, *const names[] = {"q10", "median", "q90"};
  return sample_table(f, o, names, cols);
}

/* Cell edges halfway to the neighbours (mirrored at the ends). */
static void edges(const double *v, int n, int i, double *lo, double *hi) {
  if (n == 1) {
    double w = v[0] != 0 ? 0.5 * fabs(v[0]) : 0.5;
    *lo = v[0] - w, *hi = v[0] + w;
    return;
  }
  double left = i > 0 ? 0.5 * (v[i] - v[i - 1]) : 0.5 * (v[1] - v[0]);
  double right = i < n - 1 ? 0.5 * (v[i + 1] - v[i]) : 0.5 * (v[n - 1] - v[n - 2]);
  *lo = v[i] - left, *hi = v[i] + right;
}

static const char *const grid_stats[] = {"median_max_abs_dE", "max_max_abs_dE", "mean_drift_slope",
                                         "median_abs_drift_slope", "final_var"};

static double stat_of(const nh_ensemble_summary *s, int which) {
  const double all[] = {s->median_max_abs_dE, s->max_max_abs_dE, s->mean_drift_slope, s->median_abs_drift_slope,
                         s->final_var};
  return s->ok > 0 ? all[which] : NAN;
}

static void grid_rows(const nh_h5_grid *g, const nh_ensemble_summary *sum, int which) {
  for (int i = 0; i < g->n[0]; i++) {
    if (i) nh_table_text_gap();
    double lo0, hi0, lo1, hi1;
    edges(g->values[0], g->n[0], i, &lo0, &hi0);
    for (int j = 0; j < g->n[1]; j++) {
      int m = g->method_index[i * g->n[1] + j];
      edges(g->values[1], g->n[1], j, &lo1, &hi1);
      nh_table_num(g->values[0][i]), nh_table_num(g->values[1][j]),
          nh_table_num(m >= 0 ? stat_of(&sum[m], which) : NAN);
      nh_table_int(m), nh_table_int(m >= 0 ? sum[m].failures : 0),
          nh_table_int(m >= 0 ? sum[m].ok + sum[m].failures : 0);
      nh_table_num(lo0), nh_table_num(hi0), nh_table_num(lo1), nh_table_num(hi1), nh_table_end_row();
    }
  }
}

static int t_grid(nh_h5 *f, const opts *o) {
  int which = -1, ngrids = 0;
  const char *stat = o->stat ? o->stat : grid_stats[0];
  for (int i = 0; i < 5; i++)
    if (strcmp(stat, grid_stats[i]) == 0) which = i;
  if (which < 0)
    return bad("--stat '%s': expected median_max_abs_dE, max_max_abs_dE, mean_drift_slope, "
               "median_abs_drift_slope or final_var",
               stat);
  nh_h5_grid *grids = NULL;
  if (nh_h5_read_grids(f, &ngrids, &grids) != 0) return 2;
  nh_ensemble_summary *sum = NULL;
  int rc = 2;
  if (ngrids == 0) fprintf(stderr, "%s: %s has no parameter grids\n", prog, f->path);
  else if (!out_of_range(f, "--grid", o->grid, ngrids, "grids") && (sum = nh_h5_read_ensemble_summary(f))) {
    const nh_h5_grid *g = &grids[o->grid];
    static const char *const cols[] = {"value0", "value1", "stat", "method_index", "failed",
                                       "count",  "lo0",    "hi0",  "lo1",          "hi1"};
    nh_table_columns(10, cols, 0, 1, NULL);
    nh_table_note("grid %d: %s, value0 = %s, value1 = %s, stat = %s over the ICs that ran to T", o->grid, g->method,
                  g->param[0], g->param[1], stat);
    grid_rows(g, sum, which);
    rc = 0;
  }
  free(sum);
  nh_h5_free_grids(ngrids, grids);
  return rc;
}

/* ---- observables (trajectory, ensemble) ---------------------------------------------------- */

static int t_observables(nh_h5 *f, const opts *o NH_UNUSED) {
  int nobs;
  nh_h5_observable *obs;
  if (nh_h5_read_observables(f, &nobs, &obs) != 0) return 2;
  static const char *const cols[] = {"index", "name", "width", "units"};
  nh_table_columns(4, cols, 0, 1, NULL);
  for (int i = 0; i < nobs; i++) {
    nh_table_int(i), nh_table_str(obs[i].name), nh_table_int(obs[i].width), nh_table_str(obs[i].units);
    nh_table_end_row();
    char components[NH_TEXT_LONG] = "";
    for (int c = 0; c < obs[i].width; c++)
      nh_text_append(components, sizeof components, "", " %s%s", obs[i].labels[c], c + 1 < obs[i].width ? "," : "");
    nh_table_note("  components:%s", components);
    /* The scale its plots take (the observables registry; an observable this nhbench does not know:
     * linear). */
    const nh_observable *known = nh_observable_find(obs[i].name);
    nh_table_note("  scale: %s", known && known->log_scale ? "log (|value|)" : "linear");
    /* The axis label: the file's, else (a file from before it was kept) the registry's, else the name. */
    char name[NH_TEXT_NAME];
    enhanced_text(obs[i].name, name, sizeof name);
    nh_table_note("  symbol: %s", obs[i].symbol ? obs[i].symbol : known && known->symbol ? known->symbol : name);
    for (int m = 0; m < f->nmethods; m++)
      if (obs[i].absent[m][0]) nh_table_note("  absent for method %d: %s", m, obs[i].absent[m]);
  }
  nh_h5_free_observables(nobs, obs);
  return 0;
}

/* The run of --method, --h, --ic: its index into the run dimensions and its comment. */
static int series_run(nh_h5 *f, const opts *o, long long *idx, int *nidx) {
  const int traj = f->kind == NH_STUDY_TRAJECTORY;
  if (!traj && (o->given & O_H)) {
    fprintf(stderr, "%s: --h: %s is an ensemble study, with one step size\n", prog, f->path);
    return -1;
  }
  long long nh = traj ? nh_h5_dim(f, "h") : 1, nic = nh_h5_dim(f, "ic");
  if (nh < 0 || nic < 0 || out_of_range(f, "--method", o->method, f->nmethods, "methods") ||
      out_of_range(f, "--h", o->h, nh, "step sizes") || out_of_range(f, "--ic", o->ic, nic, "initial conditions"))
    return -1;
  *nidx = 0;
  idx[(*nidx)++] = o->method;
  if (traj) idx[(*nidx)++] = o->h;
  idx[(*nidx)++] = o->ic;
  return 0;
}

static int find_observable(const nh_h5 *f, const opts *o, int nobs, const nh_h5_observable *obs) {
  if (nobs == 0) {
    fprintf(stderr, "%s: %s has no sampled observables\n", prog, f->path);
    return -1;
  }
  for (int i = 0; i < nobs; i++)
    if (!o->observable || strcmp(obs[i].name, o->observable) == 0) return i;
  fprintf(stderr, "%s: --observable '%s': %s has", prog, o->observable, f->path);
  for (int i = 0; i < nobs; i++) fprintf(stderr, " %s", obs[i].name);
  fprintf(stderr, "\n");
  return -1;
}

/* The sample times of the run and how many there are (*ns set only when they are read). */
static double *series_times(nh_h5 *f, const opts *o, long long *ns) {
  if (f->kind != NH_STUDY_TRAJECTORY) {
    *ns = nh_h5_dim(f, "sample");
    return nh_h5_doubles(f, "t", "sample", NULL);
  }
  long long h = o->h;
  int *nsh = nh_h5_ints(f, "nsamples_h", "h", NULL);
  double *t = nsh ? nh_h5_doubles_at(f, "t", "h,sample", 1, &h, NULL) : NULL;
  if (t) *ns = nsh[h] < 0 || nsh[h] > nh_h5_dim(f, "sample") ? nh_h5_dim(f, "sample") : nsh[h];
  free(nsh);
  return t;
}

/* The columns t and the observable's components (named by their labels, blanks as '_'), and the
 * notes naming the run. */
static void series_header(nh_h5 *f, const opts *o, const nh_h5_observable *ob, const long long *idx, int status) {
  static char labels[NH_TABLE_MAX_COLUMNS][NH_TEXT_NAME];
  const char *cols[NH_TABLE_MAX_COLUMNS] = {"t"};
  const int w = ob->width + 1 < NH_TABLE_MAX_COLUMNS ? ob->width : NH_TABLE_MAX_COLUMNS - 1;
  for (int c = 0; c < w; c++) {
    snprintf(labels[c], sizeof labels[c], "%s", ob->labels[c]);
    for (char *p = labels[c]; *p; p++) *p = *p == ' ' ? '_' : *p;
    cols[c + 1] = labels[c];
  }
  nh_table_columns(w + 1, cols, 0, 1, NULL);
  units_from(f, 0, "t");
  for (int c = 0; c < w; c++) nh_table_units(c + 1, ob->units);
  char step[NH_TEXT_NAME] = "";
  if (f->kind == NH_STUDY_TRAJECTORY) snprintf(step, sizeof step, "h index %d, ", o->h);
  nh_table_note("%s [%s] of method %d %s, %sIC %lld, status %d", ob->name, ob->units, o->method, f->methods[o->method],
                step, idx[f->kind == NH_STUDY_TRAJECTORY ? 2 : 1], status);
  if (ob->absent[o->method][0]) nh_table_note("absent for this method: %s", ob->absent[o->method]);
}

static int t_series(nh_h5 *f, const opts *o) {
  int nobs = 0, nidx, rc = 2;
  nh_h5_observable *obs = NULL;
  long long idx[4], ns = 0;
  if (series_run(f, o, idx, &nidx) != 0 || nh_h5_read_observables(f, &nobs, &obs) != 0) return 2;
  int which = find_observable(f, o, nobs, obs);
  char name[NH_TEXT_NAME], dims[NH_TEXT_NAME];
  snprintf(dims, sizeof dims, "%s,sample,component", nidx == 3 ? "method,h,ic" : "method,ic");
  double *t = which < 0 ? NULL : series_times(f, o, &ns);
  if (which >= 0) snprintf(name, sizeof name, "observables/%s", obs[which].name);
  double *x = t ? nh_h5_doubles_at(f, name, dims, nidx, idx, NULL) : NULL;
  int *status = x ? nh_h5_ints(f, "status", nidx == 3 ? "method,h,ic" : "method,ic", NULL) : NULL;
  if (status) {
    long long cell = nidx == 3 ? (idx[0] * nh_h5_dim(f, "h") + idx[1]) * nh_h5_dim(f, "ic") + idx[2]
                               : idx[0] * nh_h5_dim(f, "ic") + idx[1];
    series_header(f, o, &obs[which], idx, status[cell]);
    const int w = obs[which].width;
    for (long long s = 0; s < ns; s++) {
      nh_table_num(t[s]);
      for (int c = 0; c < w; c++) nh_table_num(x[s * w + c]);
      nh_table_end_row();
    }
    rc = 0;
  }
  free(t), free(x), free(status);
  nh_h5_free_observables(nobs, obs);
  return rc;
}

/* ---- onestep ------------------------------------------------------------------------------- */

/* A dataset a table reads whole: into *f64 as doubles, or into *i32 as ints (the other NULL). */
typedef struct {
  const char *name, *dims;
  double **f64;
  int **i32;
} wanted;

/* Reads the n datasets wanted in turn, stopping at the first that fails (its reader says why): 1 if
 * every one was read. The pointers start NULL, and the caller frees them with free_wanted either way. */
static int read_wanted(nh_h5 *f, const wanted *w, int n) {
  for (int i = 0; i < n; i++)
    if (w[i].f64 ? !(*w[i].f64 = nh_h5_doubles(f, w[i].name, w[i].dims, NULL))
                 : !(*w[i].i32 = nh_h5_ints(f, w[i].name, w[i].dims, NULL)))
      return 0;
  return 1;
}

static void free_wanted(const wanted *w, int n) {
  for (int i = 0; i < n; i++) free(w[i].f64 ? (void *)*w[i].f64 : (void *)*w[i].i32);
}
#define NWANTED(w) (int)(sizeof w / sizeof *w)

static int t_local_error(nh_h5 *f, const opts *o) {
  int *list = NULL, n = method_list(f, o->methods, &list), rc = 2, *expected = NULL;
  double *h = NULL, *le = NULL, *ae = NULL, *slope = NULL;
  const wanted w[] = {{"h", "h", &h, NULL},
                      {"max_local_err", "method,h", &le, NULL},
                      {"max_action_err", "method,h", &ae, NULL},
                      {"slope", "method", &slope, NULL},
                      {"slope_expected", "method", NULL, &expected}};
  if (n && read_wanted(f, w, NWANTED(w))) {
    static const char *const cols[] = {"method_index",  "method",        "slope", "slope_expected", "h",
                                       "max_local_err", "max_action_err"};
    const long long nh = nh_h5_dim(f, "h");
    nh_table_columns(7, cols, 4, 1, NULL);
    units_from(f, 4, "h"), units_from(f, 5, "max_local_err"), units_from(f, 6, "max_action_err");
    for (int k = 0; k < n; k++) {
      const int m = list[k];
      char num[NH_TEXT_NUMBER];
      nh_table_key_int(0, m), nh_table_key_str(1, f->methods[m]), nh_table_key_num(2, slope[m]);
      nh_table_key_int(3, expected[m]);
      nh_table_block(k, "method %d %s, slope %s (expected %d)", m, f->methods[m], shown(num, sizeof num, slope[m]),
                     expected[m]);
      for (long long i = 0; i < nh; i++)
        nh_table_num(h[i]), nh_table_num(le[(size_t)m * nh + i]), nh_table_num(ae[(size_t)m * nh + i]),
            nh_table_end_row();
    }
    rc = 0;
  }
  free(list);
  free_wanted(w, NWANTED(w));
  return rc;
}

static int t_slopes(nh_h5 *f, const opts *o NH_UNUSED) {
  static const char *const dn[] = {"slope", "slope_stderr", "fit_h_min", "fit_h_max", "action_slope",
                                   "summary/max_adjoint_defect", "summary/cond_min", "summary/cond_max"};
  enum { ND = sizeof dn / sizeof *dn };
  double *d[ND] = {0};
  int *claimed = nh_h5_ints(f, "order_claimed", "method", NULL), good = claimed != NULL;
  int *expected = good ? nh_h5_ints(f, "slope_expected", "method", NULL) : NULL;
  good = expected != NULL;
  for (int k = 0; k < ND && good; k++) good = (d[k] = nh_h5_doubles(f, dn[k], "method", NULL)) != NULL;
  if (good) {
    static const char *const cols[] = {
        "index",     "claimed",      "expected",           "slope",    "stderr",   "fit_h_min",
        "fit_h_max", "action_slope", "max_adjoint_defect", "cond_min", "cond_max", "name"};
    nh_table_columns(12, cols, 0, 1, NULL);
    units_from(f, 5, "fit_h_min"), units_from(f, 6, "fit_h_max");
    for (int m = 0; m < f->nmethods; m++) {
      nh_table_int(m), nh_table_int(claimed[m]), nh_table_int(expected[m]);
      for (int k = 0; k < ND; k++) nh_table_num(d[k][m]);
      nh_table_str(f->methods[m]), nh_table_end_row();
    }
  }
  free(claimed), free(expected);
  for (int k = 0; k < ND; k++) free(d[k]);
  return good ? 0 : 2;
}

/* ---- work-precision ------------------------------------------------------------------------ */

static int norm_index(nh_h5 *f, const opts *o) {
  char *pareto = o->norm ? NULL : nh_h5_attr_string(f, ".", "pareto_norm");
  const char *want = o->norm ? o->norm : pareto;
  int k = -1;
  for (int i = 0; want && i < NH_WP_NORMS; i++)
    if (strcmp(want, nh_wp_norm_names[i]) == 0) k = i;
  if (want && k < 0) fprintf(stderr, "%s: --norm '%s': expected qv_max, qv_2, q_max, q_2, v_max or v_2\n", prog, want);
  free(pareto);
  return k;
}

static int t_work_precision(nh_h5 *f, const opts *o) {
  int *list = NULL, n = method_list(f, o->methods, &list), k = n ? norm_index(f, o) : -1, rc = 2;
  double *h = NULL, *err = NULL, *work = NULL, *wall = NULL;
  int *pw = NULL, *pt = NULL, *status = NULL;
  const wanted w[] = {{"h", "h", &h, NULL},
                      {"err", "method,h,norm", &err, NULL},
                      {"work", "method,h", &work, NULL},
                      {"wall_time", "method,h", &wall, NULL},
                      {"pareto_work", "method,h", NULL, &pw},
                      {"pareto_time", "method,h", NULL, &pt},
                      {"status", "method,h", NULL, &status}};
  if (k >= 0 && read_wanted(f, w, NWANTED(w))) {
    static const char *const cols[] = {"method_index", "method",      "h",           "work",  "wall_time",
                                       "err",          "pareto_work", "pareto_time", "status"};
    const long long nh = nh_h5_dim(f, "h");
    char suffix[NH_TEXT_NAME];
    snprintf(suffix, sizeof suffix, " (err: %s)", nh_wp_norm_names[k]);
    nh_table_columns(9, cols, 2, 1, suffix);
    units_from(f, 2, "h"), units_from(f, 3, "work"), units_from(f, 4, "wall_time"), units_from(f, 5, "err");
    for (int j = 0; j < n; j++) {
      method_block(f, j, list[j]);
      for (long long i = 0; i < nh; i++) {
        size_t c = (size_t)list[j] * (size_t)nh + (size_t)i;
        nh_table_num(h[i]), nh_table_num(work[c]), nh_table_num(wall[c]),
            nh_table_num(err[c * NH_WP_NORMS + (size_t)k]);
        nh_table_int(pw[c]), nh_table_int(pt[c]), nh_table_int(status[c]), nh_table_end_row();
      }
    }
    rc = 0;
  }
  free(list);
  free_wanted(w, NWANTED(w));
  return rc;
}

/* ---- the command --------------------------------------------------------------------------- */

enum { K_ANY = 0, K_CONV = 1 << NH_STUDY_CONVERGENCE, K_ENS = 1 << NH_STUDY_ENSEMBLE,
       K_TRAJ = 1 << NH_STUDY_TRAJECTORY, K_ONE = 1 << NH_STUDY_ONESTEP, K_WP = 1 << NH_STUDY_WORK_PRECISION };

static const struct {
  const char *name;
  int options, kinds;
  int (*fn)(nh_h5 *f, const opts *o);
} tables[] = {
    {"study", 0, K_ANY, t_study},
    {"attr", 0, K_ANY, t_attr},
    {"methods", O_PRIMARY, K_ANY, t_methods},
    {"dims", 0, K_ANY, t_dims},
    {"steps", 0, K_ANY, t_steps},
    {"ics", 0, K_ANY, t_ics},
    {"dataset", O_AT | O_FIELD, K_ANY, t_dataset},
    {"convergence", O_METHODS, K_CONV, t_convergence},
    {"orders", 0, K_CONV, t_orders},
    {"energy", O_METHOD | O_ICS | O_RELATIVE, K_ENS, t_energy},
    {"energy-all-methods", O_IC | O_METHODS | O_RELATIVE, K_ENS, t_energy_all},
    {"variance", O_METHODS, K_ENS, t_variance},
    {"quantiles", O_METHODS, K_ENS, t_quantiles},
    {"grid", O_GRID | O_STAT, K_ENS, t_grid},
    {"observables", 0, K_TRAJ | K_ENS, t_observables},
    {"series", O_OBS | O_METHOD | O_H | O_IC, K_TRAJ | K_ENS, t_series},
    {"local_error", O_METHODS, K_ONE, t_local_error},
    {"slopes", 0, K_ONE, t_slopes},
    {"work_precision", O_METHODS | O_NORM, K_WP, t_work_precision},
};
#define NTABLES (int)(sizeof tables / sizeof tables[0])

/* Where an index option (--method, --ic, --grid, --h) keeps its value; NULL for the others. */
static int *index_slot(int flag, opts *o) {
  switch (flag) {
  case O_METHOD: return &o->method;
  case O_IC: return &o->ic;
  case O_GRID: return &o->grid;
  case O_H: return &o->h;
  default: return NULL;
  }
}

/* --at DIM=VALUE: a number (an index, or h and t by value), else a name (a method as written, an ic
 * or a component label); 0, or an exit status with a message. */
static int at_selector(const char *arg, opts *o) {
  const char *eq = strchr(arg, '=');
  if (!eq || eq == arg || !eq[1] || (size_t)(eq - arg) >= sizeof o->at[0].dim)
    return bad("--at '%s': expected DIM=VALUE, e.g. --at method=0 --at h=0.01", arg);
  if (o->nat == NH_H5_MAX_SELECT) return bad("--at '%s': more than 8 selectors", arg);
  nh_h5_select *s = &o->at[o->nat++];
  memset(s, 0, sizeof *s);
  snprintf(s->dim, sizeof s->dim, "%.*s", (int)(eq - arg), arg);
  char *end;
  errno = 0;
  s->value = strtod(eq + 1, &end);
  s->by_name = *end != '\0' || errno == ERANGE || isnan(s->value);
  if (s->by_name && snprintf(s->name, sizeof s->name, "%s", eq + 1) >= (int)sizeof s->name)
    return bad("--at '%s': the name is too long", arg);
  return 0;
}

/* The value of option flag (O_*) into o; 0, or an exit status with a message. */
static int set_option(int flag, const char *arg, opts *o) {
  int *index = index_slot(flag, o);
  if (index) {
    long v;
    if (parse_index(arg, &v) != 0) {
      int b = 0;
      while (!(flag & (1 << b))) b++;
      fprintf(stderr, "%s: %s needs a whole number >= 0, not '%s'\n", prog, option_names[b], arg);
      fputs("(nhbench export --help lists the tables and their options)\n", stderr);
      return NH_EXIT_USAGE;
    }
    *index = (int)v;
  }
  o->given |= flag;
  switch (flag) {
  case O_RELATIVE: o->relative = 1; break;
  case O_PRIMARY: o->primary = 1; break;
  case O_METHODS: o->methods = arg; break;
  case O_STAT: o->stat = arg; break;
  case O_OBS: o->observable = arg; break;
  case O_NORM: o->norm = arg; break;
  case O_FIELD: o->field = arg; break;
  case O_AT: return at_selector(arg, o);
  case O_ICS: {
    char buf[NH_TEXT_NAME];
    snprintf(buf, sizeof buf, "%s", arg);
    char *colon = strchr(buf, ':');
    if (colon) *colon = '\0';
    long x, y = -2;
    if (parse_index(buf, &x) != 0 || (colon && colon[1] && parse_index(colon + 1, &y) != 0))
      return bad("--ics '%s': expected A:B (initial conditions A, ..., B-1), A: or A", arg);
    o->ics_a = x, o->ics_b = colon ? y : -1;
    break;
  }
  }
  return 0;
}

/* The command line of export. */
typedef struct {
  const char *path, *table;
  int help;
  nh_table_format format;
  opts o;
} export_args;

/* Parses argv into a; 0, or an exit status. Options may come before or after FILE and TABLE. */
static int parse_export_args(int argc, char **argv, export_args *a) {
  /* clang-format off */
  static const struct option longopts[] = {
      {"method", required_argument, NULL, O_METHOD},   {"ics", required_argument, NULL, O_ICS},
      {"relative", no_argument, NULL, O_RELATIVE},     {"ic", required_argument, NULL, O_IC},
      {"methods", required_argument, NULL, O_METHODS}, {"grid", required_argument, NULL, O_GRID},
      {"stat", required_argument, NULL, O_STAT},       {"primary", no_argument, NULL, O_PRIMARY},
      {"h", required_argument, NULL, O_H},             {"observable", required_argument, NULL, O_OBS},
      {"norm", required_argument, NULL, O_NORM},       {"at", required_argument, NULL, O_AT},
      {"field", required_argument, NULL, O_FIELD},     {"format", required_argument, NULL, 'F'},
      {"help", no_argument, NULL, 'h'},                {0}};
  /* clang-format on */
  memset(a, 0, sizeof *a);
  a->o.ics_a = a->o.ics_b = -1;
  int c, rc;
  while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
    if (c == 'h') return a->help = 1, 0;
    if (c == '?' || c == ':') return nh_cli_bad_option(prog, usage, c, argv);
    if (c == 'F') {
      if (nh_table_format_parse(optarg, &a->format) != 0)
        return bad("--format '%s': expected text, csv, tsv or json", optarg);
      continue;
    }
    if ((rc = set_option(c, optarg, &a->o))) return rc;
  }
  for (int i = optind; i < argc; i++) {
    if (!a->path) a->path = argv[i];
    else if (!a->table) a->table = argv[i];
    else if ((strcmp(a->table, "attr") == 0 || strcmp(a->table, "dataset") == 0) && !a->o.name) a->o.name = argv[i];
    else return bad("unexpected argument '%s'", argv[i]);
  }
  if (!a->path || !a->table) {
    fprintf(stderr, "%s: %s\n%s", prog, a->path ? "no TABLE given" : "no FILE.h5 and TABLE given", usage);
    return NH_EXIT_USAGE;
  }
  return 0;
}

/* An option the table does not take: an exit status of 2 with a message, else 0. */
static int check_options(int t, const opts *o) {
  int extra = o->given & ~tables[t].options;
  if (!extra) return 0;
  char takes[NH_TEXT_MESSAGE] = "";
  for (int b = 0; b < NOPTIONS; b++)
    if (tables[t].options & (1 << b)) strcat(strcat(takes, " "), option_names[b]);
  for (int b = 0; b < NOPTIONS; b++)
    if (extra & (1 << b)) {
      fprintf(stderr, "%s: table '%s' takes no option %s (its options:%s)\n", prog, tables[t].name, option_names[b],
              *takes ? takes : " none");
      break;
    }
  return 2;
}

static int run_table(int t, const char *path, const opts *o, nh_table_format format) {
  nh_h5 f;
  if (nh_h5_open(&f, prog, path) != 0) return 2;
  int rc;
  if (tables[t].kinds && !(tables[t].kinds & (1 << f.kind))) {
    fprintf(stderr, "%s: %s is a %s study; table '%s' is for", prog, f.path, f.kind_name, tables[t].name);
    for (int k = 0, first = 1; k < NH_STUDY_KINDS; k++)
      if (tables[t].kinds & (1 << k))
        fprintf(stderr, "%s %s", first ? "" : " and", nh_study_kind_name((nh_study_kind)k)), first = 0;
    fprintf(stderr, " studies\n");
    rc = 2;
  } else {
    nh_table_begin(format, tables[t].name);
    rc = tables[t].fn(&f, o);
    if (rc == 0 && nh_table_end() != 0) rc = 2;
  }
  nh_h5_close(&f);
  return rc;
}

/* The index of the table named name and its options checked; -1 with a message if not. */
static int find_table(const char *name, const opts *o) {
  int t = -1;
  for (int i = 0; i < NTABLES; i++)
    if (strcmp(name, tables[i].name) == 0) t = i;
  if (t < 0) return bad("unknown table '%s'", name), -1;
  if (check_options(t, o)) return -1;
  if (strcmp(name, "attr") == 0 && !o->name)
    return bad("%s", "attr needs an attribute NAME, e.g. nhbench export FILE.h5 attr system"), -1;
  if (strcmp(name, "dataset") == 0 && !o->name)
    return bad("%s", "dataset needs a dataset NAME, e.g. nhbench export FILE.h5 dataset err --at method=0"), -1;
  return t;
}

int nh_cli_export(int argc, char **argv) {
  export_args a;
  int rc = parse_export_args(argc, argv, &a);
  if (rc || a.help) return a.help ? (fputs(usage, stdout), NH_EXIT_OK) : rc;
  int t = find_table(a.table, &a.o);
  if (t < 0) return NH_EXIT_USAGE;
  rc = run_table(t, a.path, &a.o, a.format);
  /* A reader that stops early (gnuplot's `index N` does) is no error: EPIPE passes quietly. */
  errno = 0;
  if ((fflush(stdout) != 0 || ferror(stdout)) && errno != EPIPE) {
    fprintf(stderr, "%s: writing the table failed: %s\n", prog, strerror(errno));
    return NH_EXIT_FAILED;
  }
  return rc;
}
