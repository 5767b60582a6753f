/* A study's spec (README "Study specs"): the kinds of study, the settings a spec gives (nh_study)
 * and its loader (studies/spec.c), which checks every setting and expands grids into methods. */
#ifndef NH_STUDIES_SPEC_H
#define NH_STUDIES_SPEC_H

#include <stddef.h>
#include <stdint.h>

#include "core/rng.h" /* nh_stream_seed: the stream of initial condition i is (seed, i) */
#include "integrators/integrator.h"
#include "studies/observables.h"

/* The study kinds, as studies/kinds.def lists them (what each measures: its table's doc,
 * `nhbench list kinds`), and their number NH_STUDY_KINDS. */
typedef enum {
#define NH_STUDY_KIND(name, NAME) NH_STUDY_##NAME,
#include "studies/kinds.def"
#undef NH_STUDY_KIND
  NH_STUDY_KINDS
} nh_study_kind;
/* "convergence", "ensemble", ...: the kind's name in a spec (studies/kinds.h) */
const char *nh_study_kind_name(nh_study_kind kind);

/* Run status in result files: an nh_step_status (0 ok, 1 solver failed, 2 non-finite) or: */
#define NH_RUN_DIVERGED 3  /* |E(t) − E0| exceeded divergence · max(1, |E0|) */
#define NH_RUN_TIMED_OUT 4 /* work-precision: the task exceeded time_limit; the sweep went on */

/* Error norms over a vector of differences: max |d_i| or sqrt(Σ d_i²). */
typedef enum { NH_NORM_MAX = 0, NH_NORM_2 = 1 } nh_norm;

/* A parameter grid: every pair (values0[i], values1[j]) applied to a template method; at most
 * NH_MAX_GRID_POINTS pairs (the spec loader refuses more: each is a method of the study). */
#define NH_MAX_GRID_POINTS 10000
typedef struct {
  char *template_name;  /* canonical name of the template method */
  char *param[2];       /* parameter names, e.g. beta and beta2 */
  int nvalues[2];
  double *values[2];
  int *method_index;    /* [nvalues0 × nvalues1] into the study's methods; −1: skipped */
} nh_grid;

typedef struct {
  nh_study_kind kind;
  char *spec_file;
  char *spec_text;   /* the spec as read, its includes expanded (studies/spec_source.h) */
  char **spec_inputs; /* the files it was read from: the spec ("-": standard input), then each included one */
  int nspec_inputs;
  char *overrides;   /* "--set" overrides applied, "" if none */
  /* The checkpoint journal (studies/checkpoint.h) the run appends each finished task to, NULL for
   * none (an ensemble's also streams its rows; the other kinds go through nh_journaled_tasks); its
   * key (spec text, overrides, version); resume = 1 continues the journal's run. Set by the caller
   * after nh_study_load, not owned by the study. */
  const char *checkpoint, *checkpoint_key;
  int resume;
  nh_system sys;
  /* A system written in the spec (studies/spec_system.c), which sys's type is; NULL: a registered
   * system. Owned. */
  struct nh_defined_system *defined;
  /* A system plugin (system = "plugin:PATH", systems/plugin.h), which sys's type is; NULL: none.
   * Owned. */
  struct nh_system_plugin *plugin;
  double T;
  int nmethods;
  nh_method **methods;
  char **method_names; /* canonical names */
  char **method_labels; /* [method]: the spec's `labels` (NULL: none given for it); NULL: no `labels` */
  int nprimary;        /* methods[0 .. nprimary) are the spec's `methods`; the rest only grids added */

  /* Initial conditions: `initial` (a preset name, "default", or { q; v; }, or a list of these).
   * Convergence and work-precision use the first; trajectory and one-step studies, and ensembles
   * given `initial` instead of `ensemble`, use them all. */
  nh_state x0;        /* = ics[0] */
  char *initial;      /* = ic_names[0] */
  int nic;
  nh_state *ics;      /* [nic] */
  char **ic_names;    /* [nic]: preset name, "default" or "given" */

  /* Observables sampled every sample_every steps along each run (trajectory; ensemble when
   * `observables` is given), in the order the spec lists them. */
  int nobs;
  const nh_observable **obs;

  /* the step sizes, every kind alike (an ensemble has one: h[0], nh = 1) */
  int nh;
  double *h;
  nh_norm norm;       /* the error norm the order fit and the Pareto front use (default max) */
  int fit_points;
  double error_floor;      /* errors at or below it are left out of the order fit */
  int error_floor_auto;    /* error_floor not given (or "auto"): the floor is nh_error_floor's */
  double reference_tol;    /* rk8pd's tolerance; with reference_tol_auto, the one "auto" starts from */
  int reference_tol_auto;  /* reference_tol not given (or "auto"): tightened by nh_study_reference_refine */
  double order_tolerance;  /* |observed − expected| allowed by --check-orders (default 0.15) */
  int *order_expected;     /* [method]: the claimed order, or a documented exception */
  char **order_reason;     /* [method]: "" or why the expected order differs from the claim */

  /* one-step: points are `npoints` states along the exact (or reference) solution from each
   * initial condition at t = i·T/npoints, i = 0 … npoints−1; the initial conditions are
   * `initial`, or `ensemble` random states on D (random_ics) */
  int npoints;

  /* work-precision */
  int repeats;        /* wall time: the median of this many runs (default 3) */
  double time_limit;  /* seconds per task before it is stopped as timed out (> 0, default 60) */

  /* ensemble (and trajectory: sample_every, divergence) */
  long nsteps;       /* T / h[0] */
  int sample_every;  /* K: E(t) − E0 and the observables sampled every K steps */
  int round_trip;    /* trajectory: also integrate back from each end state (nh_trajectory_result) */
  double divergence; /* a trajectory stops as diverged when |E − E0| > divergence · max(1, |E0|) */
  int nsamples;      /* nsteps / K + 1, t = 0 included */
  int count;         /* number of initial conditions */
  double energy;
  uint64_t seed;
  int random_ics;    /* 1: `ensemble` draws count states on D; 0: the ensemble runs `initial` */
  int ngrids;
  nh_grid *grids;
} nh_study;

/* Reads and checks a spec. overrides: "path=value" strings (libconfig paths, e.g.
 * "ensemble.count=100"). On error returns -1 with "FILE:LINE: message" in err. Either way st
 * holds what was read and is freed with nh_study_free. */
int nh_study_load(const char *path, const char *const *overrides, int noverrides, nh_study *st,
                  char *err, size_t errlen);
void nh_study_free(nh_study *st);

/* count random states on D at the energy, state i drawn from the stream (seed, i) by the
 * system's sampler (nh_sample_on_D). Returns 0, nh_sample_on_D's failure code (-1, -2), or
 * NH_DRAW_NO_MEMORY (no memory for the random generator). */
#define NH_DRAW_NO_MEMORY (-3)
int nh_draw_states(const nh_system *sys, int count, double energy, uint64_t seed, nh_state *x);

#endif
