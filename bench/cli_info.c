/* nhbench info FILE.h5: a readable summary of a results file (schema: results/README.md). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/cli.h"
#include "bench/cli_h5read.h"

#define WIDTH 120 /* terminal columns the tables fit in; longer method names are cut */

static const char usage[] =
    "usage: nhbench info FILE.h5\n"
    "  A readable summary of a results file written by `nhbench run`: the study, its provenance,\n"
    "  and per method\n"
    "  - convergence studies: the observed order (least-squares slope of log err against log h over\n"
    "    the finest step sizes, with its standard error), the error at the finest h, the constraint\n"
    "    residual and the cost;\n"
    "  - ensemble studies: the energy error dE = E(t) - E0 over the initial conditions (ICs),\n"
    "    failures, the constraint residual and the cost, and each (beta, beta2) grid as a matrix\n"
    "    of the median over the ICs of max_t |dE|.\n"
    "  Statistics over ICs use the ICs that ran to T (status 0). Full method names:\n"
    "  nhbench export FILE.h5 methods. Exit status 2 if FILE is not a readable results file.\n";

/* "%.2e", or "-" for NaN (a statistic over no values). */
static const char *num(char *buf, size_t len, double v) {
  if (isnan(v)) snprintf(buf, len, "-");
  else snprintf(buf, len, "%.2e", v);
  return buf;
}

static int cut_names; /* a name was shortened in a table */

/* Prints NAME in the room left after `used` columns, and a newline. */
static void put_name(const char *name, int used) {
  int room = WIDTH - used;
  if (room < 12) room = 12;
  if ((int)strlen(name) <= room) {
    printf("%s\n", name);
  } else {
    printf("%.*s...\n", room - 3, name);
    cut_names = 1;
  }
}

static void print_header(const nh_h5 *f) {
  static const char *const keys[] = {"system", "spec_file", "overrides", "date", "version", "compiler", "command"};
  char *v[7] = {0};
  int threads = 0;
  double T = NAN;
  for (int i = 0; i < 7; i++)
    if (nh_h5_has_attr(f, "/", keys[i])) v[i] = nh_h5_attr_string(f, "/", keys[i]);
  if (nh_h5_has_attr(f, "/", "threads")) nh_h5_attr_int(f, "/", "threads", &threads);
  if (nh_h5_has_attr(f, "/", "T")) nh_h5_attr_double(f, "/", "T", &T);
  printf("%s: %s study\n", f->path, f->ensemble ? "ensemble" : "convergence");
  printf("  system       %s\n", v[0] ? v[0] : "?");
  printf("  T            %g\n", T);
  printf("  spec         %s\n", v[1] ? v[1] : "?");
  printf("  overrides    %s\n", v[2] && *v[2] ? v[2] : "(none)");
  printf("  written      %s by nhbench %s (%s), %d threads\n", v[3] ? v[3] : "?", v[4] ? v[4] : "?",
         v[5] ? v[5] : "?", threads);
  printf("  command      %s\n", v[6] ? v[6] : "?");
  for (int i = 0; i < 7; i++) free(v[i]);
}

static void print_vector(const nh_h5 *f, const char *label, const char *name) {
  int n = 0;
  double *x = nh_h5_has_attr(f, ".", name) ? nh_h5_attr_doubles(f, ".", name, &n) : NULL;
  if (!x) return;
  printf("  %-12s (", label);
  for (int i = 0; i < n; i++) printf("%s%.10g", i ? ", " : "", x[i]);
  printf(")\n");
  free(x);
}

static int info_convergence(const nh_h5 *f) {
  const int nm = f->nmethods;
  hsize_t dh[1], dm[1] = {(hsize_t)nm};
  int rc = 2;
  double *h = nh_h5_doubles(f, "h", 1, NULL, dh);
  if (!h) return 2;
  const int nh = (int)dh[0];
  hsize_t dmh[2] = {(hsize_t)nm, (hsize_t)nh}, dcost[3] = {(hsize_t)nm, (hsize_t)nh, 5};
  double *err = nh_h5_doubles(f, "err", 2, dmh, NULL);
  double *res = err ? nh_h5_doubles(f, "constraint_residual", 2, dmh, NULL) : NULL;
  double *wall = res ? nh_h5_doubles(f, "wall_time", 2, dmh, NULL) : NULL;
  int *status = wall ? nh_h5_ints(f, "status", 2, dmh, NULL) : NULL;
  unsigned long long *cost = status ? nh_h5_u64(f, "cost", 3, dcost, NULL) : NULL;
  int *claimed = cost ? nh_h5_ints(f, "order_claimed", 1, dm, NULL) : NULL;
  double *order = claimed ? nh_h5_doubles(f, "order", 1, dm, NULL) : NULL;
  double *se = order ? nh_h5_doubles(f, "order_stderr", 1, dm, NULL) : NULL;
  int *first = se ? nh_h5_ints(f, "fit_first", 1, dm, NULL) : NULL;
  int *count = first ? nh_h5_ints(f, "fit_count", 1, dm, NULL) : NULL;
  if (!count || nh == 0) {
    if (count) fprintf(stderr, "%s: %s: no step sizes in /convergence/h\n", f->prog, f->path);
    goto done;
  }
  /* h indices by increasing h, as the fit (studies/fit.c) walks them. */
  int *byh = malloc(sizeof(int) * (size_t)nh);
  for (int i = 0; i < nh; i++) byh[i] = i;
  for (int i = 1; i < nh; i++)
    for (int j = i; j > 0 && h[byh[j]] < h[byh[j - 1]]; j--) {
      int t = byh[j];
      byh[j] = byh[j - 1];
      byh[j - 1] = t;
    }
  const int fin = byh[0];

  print_header(f);
  char *ref = nh_h5_has_attr(f, ".", "reference") ? nh_h5_attr_string(f, ".", "reference") : NULL;
  double tol = NAN, floor_ = NAN;
  int fit_points = 0;
  if (nh_h5_has_attr(f, ".", "reference_tol")) nh_h5_attr_double(f, ".", "reference_tol", &tol);
  if (nh_h5_has_attr(f, ".", "error_floor")) nh_h5_attr_double(f, ".", "error_floor", &floor_);
  if (nh_h5_has_attr(f, ".", "fit_points")) nh_h5_attr_int(f, ".", "fit_points", &fit_points);
  printf("  h            %d values, %g .. %g\n", nh, h[byh[nh - 1]], h[fin]);
  printf("  reference    %s, tolerance %g\n", ref ? ref : "?", tol);
  printf("  order fit    the %d finest consecutive h whose error is finite and above %g\n", fit_points, floor_);
  free(ref);
  char *initial = nh_h5_has_attr(f, ".", "initial") ? nh_h5_attr_string(f, ".", "initial") : NULL;
  if (initial) printf("  initial      %s\n", initial);
  free(initial);
  print_vector(f, "q0", "q0");
  print_vector(f, "v0", "v0");
  printf("  methods      %d\n\n", nm);

  /* Newer files: the expected order (the claim or a documented exception) and the check. */
  int *expected = nh_h5_has_dataset(f, "order_expected") ? nh_h5_ints(f, "order_expected", 1, dm, NULL) : NULL;
  int *ok = nh_h5_has_dataset(f, "order_ok") ? nh_h5_ints(f, "order_ok", 1, dm, NULL) : NULL;
  int nreason = 0;
  char **reason = nh_h5_has_dataset(f, "order_reason") ? nh_h5_strings(f, "order_reason", &nreason) : NULL;
  double otol = NAN;
  if (nh_h5_has_attr(f, ".", "order_tolerance")) nh_h5_attr_double(f, ".", "order_tolerance", &otol);

  printf("Observed order of the error at T, max-norm over (q, v) against the reference (expected: the\n"
         "claimed order, * a documented exception");
  if (ok) printf("; ok: |observed - expected| <= %g", otol);
  printf("):\n");
  printf("%4s %8s %17s %3s %16s %10s %6s  %s\n", "#", "expected", "observed +- se", "ok", "fit h range",
         "err(h_min)", "failed", "method");
  int exceptions = 0;
  for (int m = 0; m < nm; m++) {
    char exp_[24], obs[48], range[48], e[24];
    const int p = expected ? expected[m] : claimed[m];
    exceptions += p != claimed[m];
    snprintf(exp_, sizeof exp_, "%d%s", p, p != claimed[m] ? "*" : " ");
    if (isnan(order[m])) snprintf(obs, sizeof obs, "no fit");
    else if (isnan(se[m])) snprintf(obs, sizeof obs, "%.3f +- n/a    ", order[m]);
    else snprintf(obs, sizeof obs, "%.3f +- %.1e", order[m], se[m]);
    double lo, hi;
    nh_h5_fit_range(h, nh, first[m], count[m], &lo, &hi);
    if (isnan(lo)) snprintf(range, sizeof range, "-");
    else if (count[m] == 1) snprintf(range, sizeof range, "%.3g only", lo);
    else snprintf(range, sizeof range, "%.3g .. %.3g", lo, hi);
    int failed = 0;
    for (int i = 0; i < nh; i++) failed += status[m * nh + i] != 0;
    printf("%4d %8s %17s %3s %16s %10s %6d  ", m, exp_, obs, ok ? (ok[m] ? "ok" : "NO") : "-", range,
           num(e, sizeof e, err[m * nh + fin]), failed);
    put_name(f->methods[m], 4 + 9 + 18 + 4 + 17 + 11 + 7 + 2);
  }
  if (exceptions) {
    printf("* expected order differs from the claimed one:\n");
    for (int m = 0; m < nm; m++) {
      const int p = expected ? expected[m] : claimed[m];
      if (p != claimed[m])
        printf("%4d claimed %d, expected %d: %s\n", m, claimed[m], p,
               reason && m < nreason && reason[m][0] ? reason[m] : "(no reason recorded)");
    }
  }
  free(expected);
  free(ok);
  nh_h5_free_strings(reason, nreason);
  printf("\nCost at the finest h = %g; max resid: max over all h of max_t |mu(q).v|; wall: all h:\n", h[fin]);
  printf("%4s %10s %10s %10s %10s %10s  %s\n", "#", "max resid", "steps", "rhs evals", "Newton its", "wall[s]",
         "method");
  for (int m = 0; m < nm; m++) {
    double rmax = 0, w = 0;
    for (int i = 0; i < nh; i++) {
      double r = res[m * nh + i];
      if (!(r <= rmax)) rmax = r;
      w += wall[m * nh + i];
    }
    const unsigned long long *c = cost + ((size_t)m * (size_t)nh + (size_t)fin) * 5;
    char e[24];
    printf("%4d %10s %10llu %10llu %10llu %10.3g  ", m, num(e, sizeof e, rmax), c[0], c[1], c[4], w);
    put_name(f->methods[m], 4 + 5 * 11 + 2);
  }
  free(byh);
  rc = 0;
done:
  free(h);
  free(err);
  free(res);
  free(wall);
  free(status);
  free(cost);
  free(claimed);
  free(order);
  free(se);
  free(first);
  free(count);
  return rc;
}

static void print_grid(const nh_h5_grid *g, int k, const nh_h5_ensemble *e) {
  printf("\nGrid %d: %s over (%s, %s): median over the ICs of max_t |dE|\n", k, g->method, g->param[0],
         g->param[1]);
  printf("(fail: every IC failed; skip: not run, an invalid combination; *: some ICs failed, median of the rest)\n");
  char corner[64];
  snprintf(corner, sizeof corner, "%s \\ %s", g->param[0], g->param[1]);
  int w0 = (int)strlen(corner) > 10 ? (int)strlen(corner) : 10;
  printf("  %*s", w0, corner);
  for (int j = 0; j < g->n[1]; j++) printf(" %9.4g", g->values[1][j]);
  printf("\n");
  for (int i = 0; i < g->n[0]; i++) {
    char row[2048];
    size_t len = (size_t)snprintf(row, sizeof row, "  %*.4g", w0, g->values[0][i]);
    for (int j = 0; j < g->n[1] && len < sizeof row; j++) {
      int m = g->method_index[i * g->n[1] + j];
      char cell[32];
      if (m < 0) {
        snprintf(cell, sizeof cell, "skip ");
      } else {
        nh_h5_stats s;
        nh_h5_method_stats(e, m, &s);
        if (s.failures == s.count) snprintf(cell, sizeof cell, "fail ");
        else snprintf(cell, sizeof cell, "%.2e%s", s.median_max_abs_dE, s.failures ? "*" : " ");
      }
      len += (size_t)snprintf(row + len, sizeof row - len, " %9s", cell);
    }
    len = strlen(row);
    while (len > 0 && row[len - 1] == ' ') row[--len] = '\0';
    printf("%s\n", row);
  }
}

static int info_ensemble(const nh_h5 *f) {
  const int nm = f->nmethods;
  nh_h5_ensemble e;
  int ngrids = 0, rc = 2;
  nh_h5_grid *grids = NULL;
  hsize_t dm[1] = {(hsize_t)nm}, dc[2] = {(hsize_t)nm, 5};
  if (nh_h5_read_ensemble(f, &e)) return 2;
  unsigned long long *cost = nh_h5_u64(f, "cost", 2, dc, NULL);
  double *wall = cost ? nh_h5_doubles(f, "wall_time", 1, dm, NULL) : NULL;
  double h = NAN, energy = NAN, T = NAN;
  int every = 0, count = 0;
  long long seed = 0;
  if (!wall || nh_h5_attr_double(f, ".", "h", &h) || nh_h5_attr_double(f, ".", "energy", &energy) ||
      nh_h5_attr_int(f, ".", "sample_every", &every) || nh_h5_attr_int(f, ".", "count", &count) ||
      nh_h5_attr_ll(f, ".", "seed", &seed) || nh_h5_read_grids(f, &ngrids, &grids))
    goto done;
  if (nh_h5_has_attr(f, "/", "T")) nh_h5_attr_double(f, "/", "T", &T);
  int nprimary = 0;
  for (int m = 0; m < nm; m++) nprimary += f->primary[m];

  print_header(f);
  printf("  h            %g (%.0f steps); dE sampled every %d steps, %d samples\n", h, T / h, every, e.nsamples);
  printf("  ensemble     %d initial conditions at energy %g, seed %lld\n", count, energy, seed);
  printf("  methods      %d: %d listed in the spec, %d more from %d grid%s\n\n", nm, nprimary, nm - nprimary,
         ngrids, ngrids == 1 ? "" : "s");

  printf("Energy error dE = E(t) - E0, over the ICs that ran to T (max|dE|: largest max_t |dE|; median\n"
         "max|dE|: median over the ICs; slope: least-squares slope of dE against t; var: ensemble variance at T):\n");
  printf("%4s %7s %10s %14s %11s %10s  %s\n", "#", "failed", "max|dE|", "median max|dE|", "mean slope", "var(dE,T)",
         "method");
  for (int pass = 0; pass < 2; pass++) {
    if (pass == 1 && nprimary < nm && nprimary > 0) printf("  grid methods not listed in the spec:\n");
    for (int m = 0; m < nm; m++) {
      if (f->primary[m] != !pass) continue;
      nh_h5_stats s;
      nh_h5_method_stats(&e, m, &s);
      char a[24], b[24], c[24], d[24], fl[24];
      snprintf(fl, sizeof fl, "%d/%d", s.failures, s.count);
      printf("%4d %7s %10s %14s %11s %10s  ", m, fl, num(a, sizeof a, s.max_max_abs_dE),
             num(b, sizeof b, s.median_max_abs_dE), num(c, sizeof c, s.mean_drift_slope),
             num(d, sizeof d, s.final_var));
      put_name(f->methods[m], 4 + 8 + 11 + 15 + 12 + 11 + 2);
    }
  }
  printf("\nCost, summed over the ICs (steps: calls of a base method's step); max resid: max_t |mu(q).v| over the\n"
         "ICs that ran to T:\n");
  printf("%4s %10s %11s %11s %11s %9s  %s\n", "#", "max resid", "steps", "rhs evals", "Newton its", "wall[s]",
         "method");
  for (int pass = 0; pass < 2; pass++) {
    if (pass == 1 && nprimary < nm && nprimary > 0) printf("  grid methods not listed in the spec:\n");
    for (int m = 0; m < nm; m++) {
      if (f->primary[m] != !pass) continue;
      nh_h5_stats s;
      nh_h5_method_stats(&e, m, &s);
      const unsigned long long *c = cost + (size_t)m * 5;
      char a[24];
      printf("%4d %10s %11llu %11llu %11llu %9.3g  ", m, num(a, sizeof a, s.max_residual), c[0], c[1], c[4],
             wall[m]);
      put_name(f->methods[m], 4 + 11 + 3 * 12 + 10 + 2);
    }
  }
  for (int k = 0; k < ngrids; k++) print_grid(&grids[k], k, &e);
  rc = 0;
done:
  nh_h5_free_grids(ngrids, grids);
  nh_h5_free_ensemble(&e);
  free(cost);
  free(wall);
  return rc;
}

int nh_cli_info(int argc, char **argv) {
  const char *path = NULL;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      fputs(usage, stdout);
      return 0;
    }
    if (argv[i][0] == '-' || path) {
      fprintf(stderr, "nhbench info: unexpected argument '%s'\n%s", argv[i], usage);
      return 2;
    }
    path = argv[i];
  }
  if (!path) {
    fputs(usage, stderr);
    return 2;
  }
  nh_h5 f;
  if (nh_h5_open(&f, "nhbench info", path)) return 2;
  cut_names = 0;
  int rc = f.ensemble ? info_ensemble(&f) : info_convergence(&f);
  if (rc == 0 && cut_names) printf("\n(names cut to %d columns; full names: nhbench export %s methods)\n", WIDTH, path);
  nh_h5_close(&f);
  return rc;
}
