/* What the results targets do with a file (tests/fuzz/fuzz_results*.c): read it as the plot
 * scripts do (plots/make_plots.sh and the gnuplot scripts beside it). `nhbench info FILE` (each
 * study kind's summary), then `nhbench export FILE TABLE` for every table of the file's study kind,
 * with its default options and with those the scripts pass (the last method's index, --ics A:,
 * --relative, --methods lists, --norm, --stat, --grid, --h and --ic, every observable by
 * --observable NAME, attributes by NAME and OBJ/NAME), and one table of another kind (refused). A
 * file whose `export study` fails fails every export at the same check (nh_h5_open), so nothing
 * more is read from it.
 * Each export's output is read as the scripts read it, and the names in it must hold only what
 * nhbench writes there (README.md, "Security"): method names NH_H5_METHOD_CHARS (the `methods`
 * rows "INDEX NAME LABEL", whose LABEL holds no '"' or control character, the NAME of block comments "# method INDEX
 * NAME", the last field of `orders` and `slopes` rows), observable names NH_H5_NAME_CHARS (field 2 of `observables`
 * rows, which make_plots.sh passes to gnuplot as code). A line break in another string of the file (units, labels)
 * would make a row of its own: its fields are checked as a row's. A name outside the characters aborts, a finding. */
#ifndef NH_FUZZ_READ_H
#define NH_FUZZ_READ_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/cli/cli.h"
#include "results/results.h"

static inline void fuzz_bad_name(const char *table, const char *what, const char *s, size_t n) {
  fprintf(stderr, "fuzz_read: export %s printed the %s name \"%.*s\": not the characters nhbench writes\n", table,
          what, (int)n, s);
  abort();
}

static inline void fuzz_name(const char *table, const char *what, const char *s, size_t n, const char *allowed) {
  if (n == 0) fuzz_bad_name(table, what, s, n);
  for (size_t i = 0; i < n; i++)
    if (s[i] == '\0' || !strchr(allowed, s[i])) fuzz_bad_name(table, what, s, n);
}

/* Field k (from 1; 0: the last) of the line [s, s + n), split at blanks and tabs as awk splits;
 * its length in *len (0 if there is no such field). */
static inline const char *fuzz_field(const char *s, size_t n, int k, size_t *len) {
  const char *found = s;
  *len = 0;
  for (size_t i = 0, field = 0; i < n;) {
    while (i < n && (s[i] == ' ' || s[i] == '\t')) i++;
    if (i == n) break;
    const size_t start = i;
    while (i < n && s[i] != ' ' && s[i] != '\t') i++;
    if (++field == (size_t)k || k == 0) found = s + start, *len = i - start;
    if (field == (size_t)k) break;
  }
  return found;
}

/* The names in one export's output (see the top). */
static inline void fuzz_check_output(const char *table, const char *text, size_t len) {
  static const char comment[] = "# method ";
  const int methods = strcmp(table, "methods") == 0, observables = strcmp(table, "observables") == 0;
  const int named_rows = strcmp(table, "orders") == 0 || strcmp(table, "slopes") == 0;
  for (const char *p = text, *end = text + len; p < end;) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    const size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
    size_t fl;
    const char *f;
    if (n > 0 && p[0] != '#') {
      if (methods) { /* "INDEX NAME LABEL": the name field 2, the label the rest (no '"': the plots'
                        word lists; the line's end: no control character, checked below) */
        f = fuzz_field(p, n, 2, &fl);
        fuzz_name(table, "method", f, fl, NH_H5_METHOD_CHARS);
        const size_t skip = fl ? (size_t)(f - p) + fl + 1 : n;
        if (skip >= n || memchr(p + skip, '"', n - skip)) fuzz_bad_name(table, "label", p, n);
      }
      for (size_t i = 0; methods && i < n; i++)
        if ((unsigned char)p[i] < 0x20 || p[i] == 0x7f) fuzz_bad_name(table, "label", p, n);
      if (observables) f = fuzz_field(p, n, 2, &fl), fuzz_name(table, "observable", f, fl, NH_H5_NAME_CHARS);
      if (named_rows) f = fuzz_field(p, n, 0, &fl), fuzz_name(table, "method", f, fl, NH_H5_METHOD_CHARS);
    } else if (n >= sizeof comment - 1 && memcmp(p, comment, sizeof comment - 1) == 0) {
      f = fuzz_field(p, n, 4, &fl); /* "# method INDEX NAME" or "... NAME, more" */
      if (fl && f[fl - 1] == ',') fl--;
      fuzz_name(table, "method", f, fl, NH_H5_METHOD_CHARS);
    }
    p += n + 1;
  }
}

typedef struct {
  char *text; /* stdout, NUL-terminated */
  size_t len;
  int rc; /* the exit status */
} fuzz_out;

/* `nhbench export PATH ARGS...` (a NULL-terminated list), its stdout captured in out and checked. */
static inline void fuzz_export(fuzz_out *out, char *path, ...) {
  char *argv[16] = {"export", path};
  int argc = 2;
  va_list ap;
  va_start(ap, path);
  for (char *a; argc < 15 && (a = va_arg(ap, char *));) argv[argc++] = a;
  va_end(ap);
  const char *table = argv[2]; /* before getopt_long permutes argv */
  out->text = NULL, out->len = 0;
  FILE *saved = stdout, *mem = open_memstream(&out->text, &out->len);
  if (!mem) abort();
  fflush(stdout);
  stdout = mem;
  nh_cli_getopt_reset();
  out->rc = nh_cli_export(argc, argv);
  stdout = saved;
  if (fclose(mem) != 0 || !out->text) abort();
  fuzz_check_output(table, out->text, out->len);
}

/* An export whose output is not needed here. */
#define FUZZ_EXPORT(path, ...)                                                                                    \
  do {                                                                                                            \
    fuzz_out o_;                                                                                                  \
    fuzz_export(&o_, path, __VA_ARGS__, (char *)NULL);                                                           \
    free(o_.text);                                                                                                \
  } while (0)

/* The observables of a file (field 2 of `observables` rows, already checked): series of each, at
 * most 8, as series.gp asks for them (method, h and IC indices; --h for trajectories only). */
static inline void fuzz_series(char *path, const char *method, int traj) {
  fuzz_out obs;
  fuzz_export(&obs, path, "observables", (char *)NULL);
  int k = 0;
  for (char *p = obs.text, *nl; obs.rc == 0 && p && *p && k < 8; p = nl ? nl + 1 : NULL) {
    nl = strchr(p, '\n');
    if (*p == '#' || *p == '\n') continue;
    size_t fl;
    const char *f = fuzz_field(p, nl ? (size_t)(nl - p) : strlen(p), 2, &fl);
    char name[128];
    snprintf(name, sizeof name, "%.*s", (int)fl, f);
    if (traj) FUZZ_EXPORT(path, "series", "--observable", name, "--method", (char *)method, "--h", "1", "--ic", "0");
    else FUZZ_EXPORT(path, "series", "--observable", name, "--method", (char *)method, "--ic", "1");
    k++;
  }
  free(obs.text);
  FUZZ_EXPORT(path, "series"); /* the defaults: the first observable, method 0, h 0, IC 0 */
}

static inline void fuzz_read_results(char *path) {
  char *info[] = {"info", path, NULL};
  nh_cli_getopt_reset();
  nh_cli_info(2, info);
  fuzz_out study, methods;
  fuzz_export(&study, path, "study", (char *)NULL);
  if (study.rc != 0) return free(study.text);
  fuzz_export(&methods, path, "methods", (char *)NULL);
  FUZZ_EXPORT(path, "methods", "--primary");
  /* The last method's index (the `methods` rows), as the scripts' loops over methods end. */
  char last[32] = "0";
  for (char *p = methods.text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
    if (*p != '#') snprintf(last, sizeof last, "%.*s", (int)strcspn(p, " \n"), p);
  free(methods.text);
  FUZZ_EXPORT(path, "attr", "system");
  FUZZ_EXPORT(path, "attr", "T");
  const char *kind = study.text;
  if (strcmp(kind, "convergence\n") == 0) {
    FUZZ_EXPORT(path, "convergence");
    FUZZ_EXPORT(path, "convergence", "--methods", last);
    FUZZ_EXPORT(path, "orders");
    FUZZ_EXPORT(path, "attr", "reference");
    FUZZ_EXPORT(path, "attr", "norm");
  } else if (strcmp(kind, "ensemble\n") == 0) {
    FUZZ_EXPORT(path, "energy");
    FUZZ_EXPORT(path, "energy", "--method", last, "--ics", "0:", "--relative");
    FUZZ_EXPORT(path, "energy-all-methods", "--ic", "1", "--relative");
    FUZZ_EXPORT(path, "variance");
    FUZZ_EXPORT(path, "quantiles", "--methods", "all");
    FUZZ_EXPORT(path, "grid");
    FUZZ_EXPORT(path, "grid", "--grid", "1", "--stat", "mean_drift_slope");
    FUZZ_EXPORT(path, "attr", "grids");
    FUZZ_EXPORT(path, "attr", "grid0/method");
    FUZZ_EXPORT(path, "attr", "count");
    fuzz_series(path, last, 0);
  } else if (strcmp(kind, "trajectory\n") == 0) {
    FUZZ_EXPORT(path, "attr", "reference");
    fuzz_series(path, last, 1);
  } else if (strcmp(kind, "onestep\n") == 0) {
    FUZZ_EXPORT(path, "local_error");
    FUZZ_EXPORT(path, "local_error", "--methods", last);
    FUZZ_EXPORT(path, "slopes");
    FUZZ_EXPORT(path, "attr", "npoints");
  } else if (strcmp(kind, "work_precision\n") == 0) {
    FUZZ_EXPORT(path, "work_precision");
    FUZZ_EXPORT(path, "work_precision", "--methods", last, "--norm", "v_2");
    FUZZ_EXPORT(path, "attr", "pareto_norm");
    FUZZ_EXPORT(path, "attr", "repeats");
  }
  FUZZ_EXPORT(path, strcmp(kind, "onestep\n") == 0 ? "orders" : "slopes"); /* another kind's table */
  free(study.text);
}

#endif
