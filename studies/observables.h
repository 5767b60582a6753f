/* Observables: the one registry of named quantities that any study samples along its runs
 * (STYLE.md, "Observables are data too"; issue 8). Each declares its components for a system and
 * whether a method defines it; a quantity a method does not define is recorded as absent (NaN,
 * with the reason in the results file), never as 0. `nhbench list observables` prints them. */
#ifndef NH_OBSERVABLES_H
#define NH_OBSERVABLES_H

#include <stddef.h>

#include "integrators/integrator.h"

/* What one evaluation sees. */
typedef struct {
  const nh_system *sys;
  const nh_method *m;
  double h;                   /* the run's step size */
  double E0;                  /* the energy of the run's initial state */
  const nh_state *prev;       /* the state before the last step; NULL at the first sample (t = t0) */
  const nh_state *cur;        /* the sampled state */
  const nh_state *ref;        /* the exact or reference solution at cur->t; NULL if none */
  const nh_state *ref_lambda; /* the same at the time the method's multiplier approximates */
  const nh_state *prev2;      /* the state two steps before the sampled one; NULL until two steps */
} nh_obs_ctx;

/* What an observable needs from the runner (bits of nh_observable.needs). */
enum {
  NH_OBS_STEP = 1 << 0,             /* the last step (prev): absent at the first sample */
  NH_OBS_REFERENCE = 1 << 1,        /* ref: the exact solution, or the rk8pd reference */
  NH_OBS_LAMBDA_REFERENCE = 1 << 2, /* ref_lambda */
  NH_OBS_TWO_STEPS = 1 << 3,        /* prev2 as well: central differences at the node one step back */
};

typedef struct nh_observable {
  const char *name;
  const char *symbol; /* what a figure's axis shows, in gnuplot's enhanced text: "E − E_0" */
  const char *doc;   /* what it is, with its source in the spec */
  const char *units; /* "energy", "as q", "as v", "time", "1" (dimensionless), "as lambda", ... */
  int log_scale;     /* 1: a size a good method keeps small (an error, a residual): plotted as |value| on a
                        log scale (export observables says so, plots/series.gp reads it); 0: linear */
  unsigned needs;
  /* Number of components for this system (e.g. 1, n, k); 0: the system has none (e.g. no
   * invariants), and the observable is absent with reason absent(). */
  int (*width)(const nh_system *sys);
  /* Label of component i, e.g. "q[2]" or "Foucault plane angle". */
  void (*label)(const nh_system *sys, int i, char *buf, size_t len);
  /* NULL when method m on system sys defines the observable; otherwise why it does not. m may be
   * NULL to ask about the system alone. */
  const char *(*absent)(const nh_method *m, const nh_system *sys);
  /* Writes width(sys) values. Called only when absent() is NULL and the needs are met. */
  void (*eval)(const nh_obs_ctx *c, double *out);
} nh_observable;

/* Registry (studies/observables.c), NULL-terminated. */
extern const nh_observable *const nh_observables[];
const nh_observable *nh_observable_find(const char *name);

/* The error norm of a difference vector: max |d_i|, or sqrt(Σ d_i²) without overflow or
 * underflow; NaN when any entry is NaN. */
double nh_norm_max(int n, const double *d);
double nh_norm_2(int n, const double *d);

/* Evaluates observable o for the context, honouring absence and needs: writes NaN to every
 * component when the method does not define it, a needed state is missing, or at the first
 * sample for step quantities. */
void nh_observable_sample(const nh_observable *o, const nh_obs_ctx *c, double *out);

#endif
