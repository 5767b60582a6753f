/* What every study group holds, and the sampled observables (results/writer.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/text.h"
#include "results/writer.h"

/* Lengths of the label texts: a state component "q[7]", a random IC "random 12", an observable's
 * component label. */
#define STATE_LABEL_LEN 16
#define IC_NAME_LEN 32
#define OBS_LABEL_LEN 128

/* COUNT empty texts of LEN bytes in one block, freed by free(): the pointers, then the texts;
 * NULL (the write failed) if out of memory. */
static char **text_table(nh_writer *w, int count, size_t len) {
  char **s = nh_w_array(w, (size_t)count, sizeof(char *) + len);
  for (int i = 0; s && i < count; i++) s[i] = (char *)(s + count) + (size_t)i * len;
  return s;
}

static char **labels_state(nh_writer *w, int n) {
  char **s = text_table(w, 2 * n, STATE_LABEL_LEN);
  for (int i = 0; s && i < 2 * n; i++) snprintf(s[i], STATE_LABEL_LEN, "%c[%d]", i < n ? 'q' : 'v', i < n ? i : i - n);
  return s;
}

static void methods_part(nh_writer *w, hid_t g) {
  const nh_study *st = w->st;
  const int nm = st->nmethods;
  int *primary = nh_w_array(w, (size_t)nm, sizeof(int)), *claimed = nh_w_array(w, (size_t)nm, sizeof(int));
  const char **caveats = nh_w_array(w, (size_t)nm, sizeof(char *));
  if (!caveats) {
    free(primary), free(claimed);
    return;
  }
  nh_primary_methods(st, primary);
  for (int m = 0; m < nm; m++) claimed[m] = nh_method_order_on(st->methods[m], &st->sys);
  nh_w_dim(w, "method", nm);
  nh_w_scale_strings(w, g, "methods", "method", (const char *const *)st->method_names,
                     "canonical method names (nhbench list methods): the spec's `methods` in order, then "
                     "the methods its grids add, each once");
  nh_w_i32(w, g, "primary", "method", primary, "1",
           "1: the method is listed in the spec's `methods`; 0: only a parameter grid added it");
  nh_w_i32(w, g, "order_claimed", "method", claimed, "1", "the method's theoretical global order");
  for (int m = 0; m < nm; m++) caveats[m] = nh_method_caveat(st->methods[m]) ? nh_method_caveat(st->methods[m]) : "";
  nh_w_strings(w, g, "caveats", "method", caveats,
               "\"\", or why the method's results are unreliable although it ran (e.g. nh_newmark at beta + "
               "beta2 = 1/2 with allow_ill_conditioned=1, spec/newmark.md 2.5)");
  /* The spec's display labels, "" where it gave none (issue 49 item 5): only when it gave some. */
  for (int m = 0; st->method_labels && m < nm; m++) caveats[m] = st->method_labels[m] ? st->method_labels[m] : "";
  if (st->method_labels)
    nh_w_strings(w, g, "method_labels", "method", caveats,
                 "the spec's `labels`: what figures show for the method (gnuplot enhanced text), \"\" where the "
                 "spec gave none (figures then show its name without default parameters)");
  free(caveats), free(primary), free(claimed);
}

void nh_w_common(nh_writer *w, hid_t g, int nic, const double *q0, const double *v0, char *const *names) {
  const nh_study *st = w->st;
  const int n = st->sys.n;
  methods_part(w, g);
  nh_w_dim(w, "ic", nic);
  nh_w_dim(w, "dof", n);
  nh_w_dim(w, "state", 2 * n);
  nh_w_dim(w, "multiplier", st->sys.k);
  char **ic = names ? NULL : text_table(w, nic, IC_NAME_LEN);
  for (int i = 0; ic && i < nic; i++) snprintf(ic[i], IC_NAME_LEN, "random %d", i);
  nh_w_scale_strings(w, g, "ic_names", "ic", (const char *const *)(names ? names : ic),
                     "the initial conditions: a preset name, \"default\" (the system's documented one), "
                     "\"given\" (q, v in the spec) or \"random I\" (drawn on D from stream (seed, I))");
  free(ic);
  char **labels = labels_state(w, n);
  nh_w_scale_strings(w, g, "state_labels", "state", (const char *const *)labels,
                     "the components of a state (q, v): q[0], ..., q[n-1], v[0], ..., v[n-1]");
  free(labels);
  nh_w_f64(w, g, "q0", "ic,dof", q0, "as q", "initial positions");
  nh_w_f64(w, g, "v0", "ic,dof", v0, "as v", "initial velocities");
}

/* ---- sampled observables ------------------------------------------------------------------- */

/* Observable o of every run: [run][sample][width] out of the samples' rows. */
static double *gather(nh_writer *w, const nh_samples *s, int o, long long runs, int nsamples) {
  const int wd = s->width[o];
  double *out = nh_w_array(w, (size_t)(runs * nsamples * wd), sizeof(double));
  for (long long r = 0; out && r < runs; r++)
    for (int k = 0; k < nsamples; k++)
      for (int c = 0; c < wd; c++)
        out[(r * nsamples + k) * wd + c] =
            s->values[(size_t)(r * nsamples + k) * (size_t)s->row + (size_t)(s->offset[o] + c)];
  return out;
}

/* Per run and component: max over the samples of |value| and the value at the last sample where
 * it is not NaN (NaN if there is none). */
static void summarize(const double *x, long long runs, int nsamples, int wd, double *max_abs, double *last) {
  for (long long r = 0; r < runs; r++)
    for (int c = 0; c < wd; c++) {
      double m = NAN, l = NAN;
      for (int k = 0; k < nsamples; k++) {
        double v = x[(r * nsamples + k) * wd + c];
        if (isnan(v)) continue;
        if (isnan(m) || fabs(v) > m) m = fabs(v);
        l = v;
      }
      max_abs[r * wd + c] = m;
      last[r * wd + c] = l;
    }
}

/* The component labels of observable o on dataset ds (the samples, and their summaries: a reader
 * selects a component by its label in either). */
static void observable_labels(nh_writer *w, hid_t ds, const nh_observable *o, int wd) {
  char **labels = text_table(w, wd, OBS_LABEL_LEN);
  if (!labels) return;
  for (int c = 0; c < wd; c++) o->label(&w->st->sys, c, labels[c], OBS_LABEL_LEN);
  nh_w_attr_strings(w, ds, "labels", wd, (const char *const *)labels);
  free(labels);
}

static void observable_attrs(nh_writer *w, hid_t ds, const nh_observable *o, int wd, const char *const *absent) {
  nh_w_attr_str(w, ds, "name", o->name);
  nh_w_attr_str(w, ds, "symbol", o->symbol ? o->symbol : o->name); /* the figures' axis label */
  observable_labels(w, ds, o, wd);
  nh_w_attr_strings(w, ds, "absent", w->st->nmethods, absent);
}

/* A summary dataset of observable o (max |.|, last) with its component labels. */
static void observable_summary(nh_writer *w, hid_t g, const nh_observable *o, const char *dims, const double *x,
                               int wd, const char *desc) {
  nh_w_f64(w, g, o->name, dims, x, o->units, desc);
  hid_t ds = H5Dopen2(g, o->name, H5P_DEFAULT); /* after a failure, the attribute is a no-op */
  observable_labels(w, ds, o, wd);
  H5Dclose(ds);
}

/* Observable o of one streamed run at a time, fetched from the run's storage, its maximum and
 * last value summarised as it goes (the rows of nh_w_f64_rows). */
typedef struct {
  const nh_samples *s;
  int o, nsamples;
  double *block, *max_abs, *last; /* [sample][row] scratch; [run][component] summaries */
} observable_rows;

static int observable_row(const void *ctx, long long run, double *out) {
  const observable_rows *c = ctx;
  const nh_samples *s = c->s;
  const int wd = s->width[c->o];
  if (s->fetch(s->fetch_ctx, run, c->block) < 0) return -1;
  for (int k = 0; k < c->nsamples; k++)
    for (int i = 0; i < wd; i++) out[k * wd + i] = c->block[(size_t)k * (size_t)s->row + (size_t)(s->offset[c->o] + i)];
  summarize(out, 1, c->nsamples, wd, c->max_abs + run * wd, c->last + run * wd);
  return 0;
}

static void one_observable(nh_writer *w, hid_t g, hid_t gmax, hid_t glast, const char *run_dims, long long runs,
                           int nsamples, const nh_samples *s, int o) {
  const nh_study *st = w->st;
  const nh_observable *obs = st->obs[o];
  const int wd = s->width[o];
  char dims[NH_TEXT_NAME], sdims[NH_TEXT_NAME], desc[NH_TEXT_MESSAGE];
  snprintf(dims, sizeof dims, "%s,sample,component", run_dims);
  snprintf(sdims, sizeof sdims, "%s,component", run_dims);
  nh_w_dim(w, "component", wd);
  double *mx = nh_w_array(w, (size_t)(runs * wd), sizeof(double));
  double *last = nh_w_array(w, (size_t)(runs * wd), sizeof(double));
  if (!last) {
    free(mx);
    return;
  }
  if (!s->fetch) {
    double *x = gather(w, s, o, runs, nsamples);
    if (x) summarize(x, runs, nsamples, wd, mx, last);
    nh_w_f64(w, g, obs->name, dims, x, obs->units, obs->doc); /* x NULL: the write failed, a no-op */
    free(x);
  } else {
    observable_rows c = {s, o, nsamples, nh_w_array(w, (size_t)nsamples, (size_t)s->row * sizeof(double)), mx, last};
    if (c.block) nh_w_f64_rows(w, g, obs->name, dims, 2, observable_row, &c, obs->units, obs->doc);
    free(c.block);
  }
  hid_t ds = H5Dopen2(g, obs->name, H5P_DEFAULT); /* after a failure, the attributes are no-ops */
  const char *const *absent = (const char *const *)(s->absent + (size_t)o * (size_t)st->nmethods);
  observable_attrs(w, ds, obs, wd, absent);
  H5Dclose(ds);
  snprintf(desc, sizeof desc, "max over the samples of |%s| (NaN samples left out; NaN if none)", obs->name);
  observable_summary(w, gmax, obs, sdims, mx, wd, desc);
  snprintf(desc, sizeof desc, "%s at the last sample where it is not NaN (the end of the run; NaN if none)",
           obs->name);
  observable_summary(w, glast, obs, sdims, last, wd, desc);
  free(mx), free(last);
}

void nh_w_observables(nh_writer *w, hid_t g, const char *run_dims, long long runs, int nsamples,
                      const nh_samples *s) {
  const nh_study *st = w->st;
  if (st->nobs == 0 || w->failed) return;
  if ((!s->values && !s->fetch) || !s->width || !s->offset || !s->absent) {
    nh_w_fail(w, "%s", "no data for the observables (result field samples left unset)");
    return;
  }
  hid_t go = nh_w_group(w, g, "observables",
                        "sampled observables, one dataset per observable [runs..., sample, component]; "
                        "attributes: description, units, labels [component], absent [method]");
  hid_t gm = nh_w_group(w, g, "observables_max_abs", "per run and component: max over the samples of |value|");
  hid_t gl = nh_w_group(w, g, "observables_last", "per run and component: the value at the last sample reached");
  const char **names = nh_w_array(w, (size_t)st->nobs, sizeof(char *));
  for (int o = 0; names && o < st->nobs; o++) names[o] = st->obs[o]->name;
  if (names) nh_w_attr_strings(w, go, "order", st->nobs, names); /* go is -1 only after a failure: a no-op */
  free(names);
  for (int o = 0; o < st->nobs && !w->failed; o++) one_observable(w, go, gm, gl, run_dims, runs, nsamples, s, o);
  H5Gclose(go), H5Gclose(gm), H5Gclose(gl); /* -1 after a failure: no-ops */
}
