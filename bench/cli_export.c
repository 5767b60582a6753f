/* nhbench export FILE.h5 TABLE [options]: whitespace-separated tables for gnuplot (columns and
 * blocks documented in results/README.md, "Export tables"). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/cli.h"
#include "bench/cli_h5read.h"

static const char usage[] =
    "usage: nhbench export FILE.h5 TABLE [options]\n"
    "  Writes a whitespace-separated table on stdout for gnuplot. Lines starting with '#' are\n"
    "  comments; the first names the columns. Tables with blocks (one per method or trajectory)\n"
    "  separate them by two blank lines, so gnuplot's `index N` selects block N. Numbers are\n"
    "  written in the shortest form that reads back exactly; NaN marks a missing value.\n"
    "\n"
    "tables, any study:\n"
    "  study                   prints \"convergence\" or \"ensemble\"\n"
    "  attr NAME               the value of attribute NAME of the root or the study group\n"
    "                          (system, T, h, count, energy, seed, ...)\n"
    "  methods [--primary]     index name, one method a line; --primary: only the default LIST\n"
    "convergence studies:\n"
    "  convergence [--methods LIST]\n"
    "                          a block per method: h err err_q err_v constraint_residual status\n"
    "  orders                  index claimed observed stderr fit_h_min fit_h_max name\n"
    "ensemble studies:\n"
    "  energy [--method I] [--ics A:B] [--relative]\n"
    "                          a block per initial condition (IC) A, ..., B-1 (default 0:5) of\n"
    "                          method I (default 0): t dE, with dE = E(t) - E0 (--relative: dE/E0)\n"
    "  energy-all-methods [--ic J] [--methods LIST] [--relative]\n"
    "                          a block per method, IC J (default 0): t dE\n"
    "  variance [--methods LIST]\n"
    "                          a block per method: t mean var count (mean and unbiased variance of\n"
    "                          dE over the count ICs still running at t)\n"
    "  grid [--grid G] [--stat STAT]\n"
    "                          grid G (default 0): value0 value1 stat method_index failed count\n"
    "                          lo0 hi0 lo1 hi1, a blank line after each value0 (gnuplot pm3d/image\n"
    "                          order); stat is NaN where skipped or every IC failed; lo/hi: cell edges\n"
    "                          halfway to the neighbouring values\n"
    "  STAT: median_max_abs_dE (default), max_max_abs_dE, mean_drift_slope, median_abs_drift_slope,\n"
    "        final_var; over the ICs that ran to T (status 0)\n"
    "  LIST: comma-separated method indices, or all; default: the methods listed in the spec itself,\n"
    "        not those added by a grid (all methods if the spec lists none)\n";

enum { O_METHOD = 1, O_ICS = 2, O_RELATIVE = 4, O_IC = 8, O_METHODS = 16, O_GRID = 32, O_STAT = 64, O_PRIMARY = 128 };

typedef struct {
  int given; /* O_* flags of the options on the command line */
  int method, ic, grid, relative, primary;
  long ics_a, ics_b; /* -1: default */
  const char *methods, *stat, *attr;
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

static void put(double v) {
  char buf[40];
  fputs(nh_h5_fmt(buf, sizeof buf, v), stdout);
}

static void block_sep(int *first) {
  if (!*first) fputs("\n\n", stdout);
  *first = 0;
}

/* The method list of --methods (or the default); returns the count, or -1 with a message. */
static int method_list(const nh_h5 *f, const char *spec, int **out) {
  int *list = malloc(sizeof(int) * (size_t)f->nmethods * 4 + sizeof(int)), n = 0, nprimary = 0;
  *out = list;
  for (int m = 0; m < f->nmethods; m++) nprimary += f->primary[m];
  if (!spec) {
    for (int m = 0; m < f->nmethods; m++)
      if (f->primary[m] || !nprimary) list[n++] = m;
    return n;
  }
  if (strcmp(spec, "all") == 0) {
    for (int m = 0; m < f->nmethods; m++) list[n++] = m;
    return n;
  }
  const char *p = spec;
  while (*p) {
    char *end;
    long v = strtol(p, &end, 10);
    if (end == p || (*end && *end != ',') || v < 0 || v >= f->nmethods || n >= f->nmethods * 4) {
      fprintf(stderr, "%s: --methods '%s': expected comma-separated method indices 0..%d, or all\n", prog, spec,
              f->nmethods - 1);
      return -1;
    }
    list[n++] = (int)v;
    p = *end ? end + 1 : end;
  }
  if (n == 0) {
    fprintf(stderr, "%s: --methods '%s': no methods\n", prog, spec);
    return -1;
  }
  return n;
}

static int need(const nh_h5 *f, int ensemble, const char *table) {
  if (f->ensemble == ensemble) return 0;
  fprintf(stderr, "%s: %s is a%s study; table '%s' needs a%s study\n", prog, f->path,
          f->ensemble ? "n ensemble" : " convergence", table, ensemble ? "n ensemble" : " convergence");
  return 2;
}

static int t_attr(const nh_h5 *f, const char *arg) {
  /* NAME on the root or the study group, or OBJ/NAME on an object inside the study group. */
  char objbuf[256];
  const char *name = arg, *obj = NULL, *slash = strrchr(arg, '/');
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
  char *s = NULL;
  int n = 0;
  double *v = NULL;
  /* Strings as they are, numbers in the shortest exact form. */
  hid_t loc = obj[0] == '/' ? f->file : f->group;
  hid_t a = H5Aopen_by_name(loc, obj, name, H5P_DEFAULT, H5P_DEFAULT);
  hid_t type = a < 0 ? -1 : H5Aget_type(a);
  int is_string = type >= 0 && H5Tget_class(type) == H5T_STRING;
  if (type >= 0) H5Tclose(type);
  if (a >= 0) H5Aclose(a);
  if (is_string) s = nh_h5_attr_string(f, obj, name);
  else v = nh_h5_attr_doubles(f, obj, name, &n);
  if (!s && !v) return 2;
  if (s) {
    printf("%s\n", s);
  } else {
    for (int i = 0; i < n; i++) {
      if (i) putchar(' ');
      put(v[i]);
    }
    putchar('\n');
  }
  free(s);
  free(v);
  return 0;
}

static int t_methods(const nh_h5 *f, const opts *o) {
  int *list, n = method_list(f, NULL, &list);
  printf("# index name\n");
  if (o->primary)
    for (int k = 0; k < n; k++) printf("%d %s\n", list[k], f->methods[list[k]]);
  else
    for (int m = 0; m < f->nmethods; m++) printf("%d %s\n", m, f->methods[m]);
  free(list);
  return 0;
}

static int t_convergence(const nh_h5 *f, const opts *o) {
  const int nm = f->nmethods;
  int *list, n = o->methods ? method_list(f, o->methods, &list) : method_list(f, "all", &list);
  hsize_t dh[1];
  double *h = n < 0 ? NULL : nh_h5_doubles(f, "h", 1, NULL, dh);
  hsize_t dmh[2] = {(hsize_t)nm, h ? dh[0] : 0};
  double *err = h ? nh_h5_doubles(f, "err", 2, dmh, NULL) : NULL;
  double *eq = err ? nh_h5_doubles(f, "err_q", 2, dmh, NULL) : NULL;
  double *ev = eq ? nh_h5_doubles(f, "err_v", 2, dmh, NULL) : NULL;
  double *res = ev ? nh_h5_doubles(f, "constraint_residual", 2, dmh, NULL) : NULL;
  int *status = res ? nh_h5_ints(f, "status", 2, dmh, NULL) : NULL;
  double *z = status && nh_h5_has_dataset(f, "z") ? nh_h5_doubles(f, "z", 2, dmh, NULL) : NULL; /* newer files */
  int rc = 2;
  if (status) {
    const int nh = (int)dh[0];
    int first = 1;
    printf("# h err err_q err_v constraint_residual status z\n");
    for (int k = 0; k < n; k++) {
      int m = list[k];
      block_sep(&first);
      printf("# method %d %s\n", m, f->methods[m]);
      for (int i = 0; i < nh; i++) {
        size_t c = (size_t)m * (size_t)nh + (size_t)i;
        put(h[i]), putchar(' '), put(err[c]), putchar(' '), put(eq[c]), putchar(' '), put(ev[c]);
        putchar(' '), put(res[c]), printf(" %d ", status[c]), put(z ? z[c] : NAN), putchar('\n');
      }
    }
    rc = 0;
  }
  free(list);
  free(h);
  free(err);
  free(eq);
  free(ev);
  free(res);
  free(status);
  free(z);
  return rc;
}

static int t_orders(const nh_h5 *f) {
  const int nm = f->nmethods;
  hsize_t dm[1] = {(hsize_t)nm}, dh[1];
  double *h = nh_h5_doubles(f, "h", 1, NULL, dh);
  int *claimed = h ? nh_h5_ints(f, "order_claimed", 1, dm, NULL) : NULL;
  double *order = claimed ? nh_h5_doubles(f, "order", 1, dm, NULL) : NULL;
  double *se = order ? nh_h5_doubles(f, "order_stderr", 1, dm, NULL) : NULL;
  int *first = se ? nh_h5_ints(f, "fit_first", 1, dm, NULL) : NULL;
  int *count = first ? nh_h5_ints(f, "fit_count", 1, dm, NULL) : NULL;
  /* Newer files only. */
  int *expected = count && nh_h5_has_dataset(f, "order_expected") ? nh_h5_ints(f, "order_expected", 1, dm, NULL) : NULL;
  int *ok = count && nh_h5_has_dataset(f, "order_ok") ? nh_h5_ints(f, "order_ok", 1, dm, NULL) : NULL;
  int rc = 2;
  if (count) {
    const int nh = (int)dh[0];
    printf("# index claimed observed stderr fit_h_min fit_h_max expected ok name\n");
    for (int m = 0; m < nm; m++) {
      double lo, hi;
      nh_h5_fit_range(h, nh, first[m], count[m], &lo, &hi);
      printf("%d %d ", m, claimed[m]);
      put(order[m]), putchar(' '), put(se[m]), putchar(' '), put(lo), putchar(' '), put(hi);
      printf(" %d %d %s\n", expected ? expected[m] : claimed[m], ok ? ok[m] : -1, f->methods[m]);
    }
    rc = 0;
  }
  free(h);
  free(claimed);
  free(order);
  free(se);
  free(first);
  free(count);
  free(expected);
  free(ok);
  return rc;
}

/* t, E0 and the ensemble sizes shared by the energy tables. */
typedef struct {
  int nic, ns;
  double *t, *E0;
  int *status;
} ens_base;

static int read_base(const nh_h5 *f, ens_base *b) {
  hsize_t ds[1], dic[1], d[2];
  memset(b, 0, sizeof *b);
  b->t = nh_h5_doubles(f, "t", 1, NULL, ds);
  b->E0 = b->t ? nh_h5_doubles(f, "E0", 1, NULL, dic) : NULL;
  hsize_t dm[2] = {(hsize_t)f->nmethods, b->E0 ? dic[0] : 0};
  b->status = b->E0 ? nh_h5_ints(f, "status", 2, dm, d) : NULL;
  if (!b->status) {
    free(b->t);
    free(b->E0);
    return -1;
  }
  b->ns = (int)ds[0];
  b->nic = (int)dic[0];
  return 0;
}

static void free_base(ens_base *b) {
  free(b->t);
  free(b->E0);
  free(b->status);
}

/* One trajectory: t dE (or dE/E0). */
static void energy_block(const ens_base *b, const double *dE, int ic, int relative) {
  const double *row = dE + (size_t)ic * (size_t)b->ns;
  for (int s = 0; s < b->ns; s++) {
    put(b->t[s]);
    putchar(' ');
    put(relative ? row[s] / b->E0[ic] : row[s]);
    putchar('\n');
  }
}

static int t_energy(const nh_h5 *f, const opts *o) {
  ens_base b;
  if (read_base(f, &b)) return 2;
  int rc = 2;
  long a = o->ics_a < 0 ? 0 : o->ics_a, z = o->ics_b < 0 ? (b.nic < 5 ? b.nic : 5) : o->ics_b;
  if (o->ics_b == -2) z = b.nic; /* "A:" to the end */
  if (o->ics_a >= 0 && o->ics_b == -1) z = a + 1; /* a single index */
  if (o->method >= f->nmethods) {
    fprintf(stderr, "%s: --method %d: %s has methods 0..%d\n", prog, o->method, f->path, f->nmethods - 1);
  } else if (a >= b.nic || z > b.nic || a >= z) {
    fprintf(stderr, "%s: --ics %ld:%ld: %s has initial conditions 0..%d (A:B selects A, ..., B-1)\n", prog, a, z,
            f->path, b.nic - 1);
  } else {
    hsize_t dims[3] = {(hsize_t)f->nmethods, (hsize_t)b.nic, (hsize_t)b.ns};
    double *dE = nh_h5_doubles_row(f, "dE", (hsize_t)o->method, 3, dims);
    if (dE) {
      int first = 1;
      printf("# t %s\n", o->relative ? "dE/E0" : "dE");
      for (long ic = a; ic < z; ic++) {
        block_sep(&first);
        printf("# method %d %s, IC %ld, E0 ", o->method, f->methods[o->method], ic);
        put(b.E0[ic]);
        printf(", status %d\n", b.status[(size_t)o->method * (size_t)b.nic + (size_t)ic]);
        energy_block(&b, dE, (int)ic, o->relative);
      }
      free(dE);
      rc = 0;
    }
  }
  free_base(&b);
  return rc;
}

static int t_energy_all(const nh_h5 *f, const opts *o) {
  ens_base b;
  if (read_base(f, &b)) return 2;
  int *list, n = method_list(f, o->methods, &list), rc = 2;
  if (n >= 0 && o->ic >= b.nic) {
    fprintf(stderr, "%s: --ic %d: %s has initial conditions 0..%d\n", prog, o->ic, f->path, b.nic - 1);
  } else if (n >= 0) {
    hsize_t dims[3] = {(hsize_t)f->nmethods, (hsize_t)b.nic, (hsize_t)b.ns};
    int first = 1;
    rc = 0;
    printf("# t %s\n", o->relative ? "dE/E0" : "dE");
    for (int k = 0; k < n && rc == 0; k++) {
      int m = list[k];
      double *dE = nh_h5_doubles_row(f, "dE", (hsize_t)m, 3, dims);
      if (!dE) {
        rc = 2;
        break;
      }
      block_sep(&first);
      printf("# method %d %s, IC %d, E0 ", m, f->methods[m], o->ic);
      put(b.E0[o->ic]);
      printf(", status %d\n", b.status[(size_t)m * (size_t)b.nic + (size_t)o->ic]);
      energy_block(&b, dE, o->ic, o->relative);
      free(dE);
    }
  }
  free(list);
  free_base(&b);
  return rc;
}

static int t_variance(const nh_h5 *f, const opts *o) {
  hsize_t ds[1];
  int *list, n = method_list(f, o->methods, &list), rc = 2;
  double *t = n < 0 ? NULL : nh_h5_doubles(f, "t", 1, NULL, ds);
  hsize_t dms[2] = {(hsize_t)f->nmethods, t ? ds[0] : 0};
  double *mean = t ? nh_h5_doubles(f, "dE_mean", 2, dms, NULL) : NULL;
  double *var = mean ? nh_h5_doubles(f, "dE_var", 2, dms, NULL) : NULL;
  int *count = var ? nh_h5_ints(f, "dE_count", 2, dms, NULL) : NULL;
  if (count) {
    const int ns = (int)ds[0];
    int first = 1;
    printf("# t mean var count\n");
    for (int k = 0; k < n; k++) {
      int m = list[k];
      block_sep(&first);
      printf("# method %d %s\n", m, f->methods[m]);
      for (int s = 0; s < ns; s++) {
        size_t c = (size_t)m * (size_t)ns + (size_t)s;
        put(t[s]), putchar(' '), put(mean[c]), putchar(' '), put(var[c]), printf(" %d\n", count[c]);
      }
    }
    rc = 0;
  }
  free(list);
  free(t);
  free(mean);
  free(var);
  free(count);
  return rc;
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

static int t_grid(const nh_h5 *f, const opts *o) {
  static const char *const stats[] = {"median_max_abs_dE", "max_max_abs_dE", "mean_drift_slope",
                                      "median_abs_drift_slope", "final_var"};
  int which = -1;
  const char *stat = o->stat ? o->stat : stats[0];
  for (int i = 0; i < 5; i++)
    if (strcmp(stat, stats[i]) == 0) which = i;
  if (which < 0)
    return bad("--stat '%s': expected median_max_abs_dE, max_max_abs_dE, mean_drift_slope, "
               "median_abs_drift_slope or final_var",
               stat);
  int ngrids;
  nh_h5_grid *grids;
  if (nh_h5_read_grids(f, &ngrids, &grids)) return 2;
  if (o->grid >= ngrids) {
    if (ngrids == 0) fprintf(stderr, "%s: %s has no parameter grids\n", prog, f->path);
    else fprintf(stderr, "%s: --grid %d: %s has grids 0..%d\n", prog, o->grid, f->path, ngrids - 1);
    nh_h5_free_grids(ngrids, grids);
    return 2;
  }
  nh_h5_ensemble e;
  if (nh_h5_read_ensemble(f, &e)) {
    nh_h5_free_grids(ngrids, grids);
    return 2;
  }
  const nh_h5_grid *g = &grids[o->grid];
  printf("# value0 value1 stat method_index failed count lo0 hi0 lo1 hi1\n");
  printf("# grid %d: %s, value0 = %s, value1 = %s, stat = %s over the ICs that ran to T\n", o->grid, g->method,
         g->param[0], g->param[1], stat);
  for (int i = 0; i < g->n[0]; i++) {
    if (i) putchar('\n');
    double lo0, hi0;
    edges(g->values[0], g->n[0], i, &lo0, &hi0);
    for (int j = 0; j < g->n[1]; j++) {
      int m = g->method_index[i * g->n[1] + j];
      nh_h5_stats s = {0};
      double v = NAN;
      if (m >= 0) {
        nh_h5_method_stats(&e, m, &s);
        const double all[5] = {s.median_max_abs_dE, s.max_max_abs_dE, s.mean_drift_slope, s.median_abs_drift_slope,
                               s.final_var};
        v = s.failures < s.count ? all[which] : NAN;
      }
      double lo1, hi1;
      edges(g->values[1], g->n[1], j, &lo1, &hi1);
      put(g->values[0][i]), putchar(' '), put(g->values[1][j]), putchar(' '), put(v);
      printf(" %d %d %d ", m, m >= 0 ? s.failures : 0, m >= 0 ? s.count : 0);
      put(lo0), putchar(' '), put(hi0), putchar(' '), put(lo1), putchar(' '), put(hi1), putchar('\n');
    }
  }
  nh_h5_free_ensemble(&e);
  nh_h5_free_grids(ngrids, grids);
  return 0;
}

int nh_cli_export(int argc, char **argv) {
  const char *path = NULL, *table = NULL;
  opts o = {0};
  o.ics_a = o.ics_b = -1;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const int has = i + 1 < argc;
    long v;
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      fputs(usage, stdout);
      return 0;
    } else if (strcmp(a, "--relative") == 0) {
      o.given |= O_RELATIVE, o.relative = 1;
    } else if (strcmp(a, "--primary") == 0) {
      o.given |= O_PRIMARY, o.primary = 1;
    } else if (strcmp(a, "--method") == 0 || strcmp(a, "--ic") == 0 || strcmp(a, "--grid") == 0) {
      if (!has || parse_index(argv[i + 1], &v)) return bad("%s needs a whole number >= 0", a);
      i++;
      if (a[2] == 'm') o.given |= O_METHOD, o.method = (int)v;
      else if (a[2] == 'i') o.given |= O_IC, o.ic = (int)v;
      else o.given |= O_GRID, o.grid = (int)v;
    } else if (strcmp(a, "--ics") == 0) {
      if (!has) return bad("%s needs A:B (initial conditions A, ..., B-1), A: or A", a);
      char buf[64];
      snprintf(buf, sizeof buf, "%s", argv[++i]);
      char *colon = strchr(buf, ':');
      if (colon) *colon = '\0';
      long x, y = -2;
      if (parse_index(buf, &x) || (colon && colon[1] && parse_index(colon + 1, &y)))
        return bad("--ics '%s': expected A:B (initial conditions A, ..., B-1), A: or A", argv[i]);
      o.given |= O_ICS, o.ics_a = x, o.ics_b = colon ? y : -1;
    } else if (strcmp(a, "--methods") == 0 || strcmp(a, "--stat") == 0) {
      if (!has) return bad("%s needs a value", a);
      if (a[3] == 'e') o.given |= O_METHODS, o.methods = argv[++i];
      else o.given |= O_STAT, o.stat = argv[++i];
    } else if (a[0] == '-' && a[1]) {
      return bad("unknown option '%s'", a);
    } else if (!path) {
      path = a;
    } else if (!table) {
      table = a;
    } else if (strcmp(table, "attr") == 0 && !o.attr) {
      o.attr = a;
    } else {
      return bad("unexpected argument '%s'", a);
    }
  }
  if (!path || !table) {
    fputs(usage, stderr);
    return 2;
  }
  static const struct {
    const char *name;
    int options;
  } tables[] = {{"study", 0},
                {"attr", 0},
                {"methods", O_PRIMARY},
                {"convergence", O_METHODS},
                {"orders", 0},
                {"energy", O_METHOD | O_ICS | O_RELATIVE},
                {"energy-all-methods", O_IC | O_METHODS | O_RELATIVE},
                {"variance", O_METHODS},
                {"grid", O_GRID | O_STAT}};
  int t = -1;
  for (int i = 0; i < (int)(sizeof tables / sizeof tables[0]); i++)
    if (strcmp(table, tables[i].name) == 0) t = i;
  if (t < 0) return bad("unknown table '%s'", table);
  if (o.given & ~tables[t].options) {
    static const char *const names[] = {"--method", "--ics", "--relative", "--ic", "--methods", "--grid", "--stat",
                                        "--primary"};
    char takes[128] = "";
    for (int b = 0; b < 8; b++)
      if (tables[t].options & (1 << b)) strcat(strcat(takes, " "), names[b]);
    for (int b = 0; b < 8; b++)
      if ((o.given & ~tables[t].options) & (1 << b)) {
        fprintf(stderr, "%s: table '%s' takes no option %s (its options:%s)\n", prog, table, names[b],
                *takes ? takes : " none");
        break;
      }
    return 2;
  }
  if (t == 1 && !o.attr) return bad("%s", "attr needs an attribute NAME, e.g. nhbench export FILE.h5 attr system");
  nh_h5 f;
  if (nh_h5_open(&f, prog, path)) return 2;
  int rc;
  switch (t) {
  case 0: printf("%s\n", f.ensemble ? "ensemble" : "convergence"), rc = 0; break;
  case 1: rc = t_attr(&f, o.attr); break;
  case 2: rc = t_methods(&f, &o); break;
  case 3: rc = need(&f, 0, table) ? 2 : t_convergence(&f, &o); break;
  case 4: rc = need(&f, 0, table) ? 2 : t_orders(&f); break;
  case 5: rc = need(&f, 1, table) ? 2 : t_energy(&f, &o); break;
  case 6: rc = need(&f, 1, table) ? 2 : t_energy_all(&f, &o); break;
  case 7: rc = need(&f, 1, table) ? 2 : t_variance(&f, &o); break;
  default: rc = need(&f, 1, table) ? 2 : t_grid(&f, &o); break;
  }
  nh_h5_close(&f);
  /* A reader that stops early (gnuplot's `index N` does) is no error: EPIPE passes quietly. */
  errno = 0;
  if ((fflush(stdout) != 0 || ferror(stdout)) && errno != EPIPE) {
    fprintf(stderr, "%s: writing the table failed: %s\n", prog, strerror(errno));
    return 1;
  }
  return rc;
}
