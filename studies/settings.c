/* The spec's top-level settings (studies/settings.h), in the order messages list them. Where a
 * setting has a numeric default and range the loader takes them from here (studies/spec.c). */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "studies/settings.h"

#define CONV NH_KIND(NH_STUDY_CONVERGENCE)
#define ENS NH_KIND(NH_STUDY_ENSEMBLE)
#define TRAJ NH_KIND(NH_STUDY_TRAJECTORY)
#define ONE NH_KIND(NH_STUDY_ONESTEP)
#define WP NH_KIND(NH_STUDY_WORK_PRECISION)
#define STEPS (CONV | TRAJ | ONE | WP) /* the kinds with several step sizes */
#define NONE NAN, NAN, NAN             /* no numeric default or range */
/* The attributes a setting is stored as: {name, kinds, type, field}, ended by {NULL}. */
#define STORED(...) ((const nh_setting_attr[]){__VA_ARGS__, {NULL}})
#define FIELD(f) offsetof(nh_study, f)

const nh_setting nh_settings[] = {
    {"study", NH_ALL_KINDS, "text", NONE, NULL,
     "the study kind: \"convergence\", \"ensemble\", \"trajectory\", \"onestep\" or \"work_precision\" "
     "(nhbench list kinds)", NULL},
    {"system", NH_ALL_KINDS, "text", NONE, NULL, "a system name (nhbench list systems)", NULL},
    {"system_params", NH_ALL_KINDS, "group", NONE, "the system's defaults",
     "system parameters, e.g. { eps = 0.1; }; over those a preset sets", NULL},
    {"initial", NH_ALL_KINDS, "text, group or list", NONE, "\"default\"",
     "a preset name, \"default\" (the system's documented initial condition) or { q = [...]; v = [...]; } on D; "
     "trajectory, one-step and ensemble studies also take a list of these",
     STORED({"initial", CONV | WP, NH_STORED_TEXT, FIELD(initial)})},
    {"T", NH_ALL_KINDS, "real", NONE, NULL,
     "final time (one-step studies: the span over which the start points are spread)", NULL},
    {"h", NH_ALL_KINDS, "real or list of reals", NONE, NULL,
     "the step size, or a list of them (or h0 and halvings); T/h a whole number", NULL},
    {"h0", STEPS, "real", NONE, NULL, "with halvings, instead of h: the step sizes h0, h0/2, ..., h0/2^halvings", NULL},
    {"halvings", STEPS, "whole number", NAN, 1, 30, NULL, "with h0: how many times h0 is halved", NULL},
    {"methods", NH_ALL_KINDS, "list of texts", NONE, NULL, "the methods, in the method syntax (nhbench list methods)", NULL},
    {"grids", NH_ALL_KINDS, "list of groups", NONE, "none",
     "parameter-pair grids ( { method = \"...\"; beta = [...]; beta2 = [...]; } ): every pair a method",
     STORED({"grids", ENS, NH_STORED_I32, FIELD(ngrids)})},
    {"fit_points", CONV | ONE, "whole number", 3, 2, 100, NULL,
     "the most step sizes an order fit uses: the finest above the error floor",
     STORED({"fit_points", CONV, NH_STORED_I32, FIELD(fit_points)})},
    {"error_floor", CONV | ONE, "real or \"auto\"", NONE, "\"auto\"",
     "errors at or below it are left out of the order fit (\"auto\": the reference's error and round-off)", NULL},
    {"reference_tol", NH_ALL_KINDS, "real or \"auto\"", NONE, "\"auto\"",
     "tolerance of the rk8pd reference in [1e-16, 1e-3] where there is no exact solution (\"auto\": from 1e-13)",
     STORED({"reference_tol", TRAJ | ONE, NH_STORED_F64, FIELD(reference_tol)})},
    {"order_tolerance", CONV, "real", 0.15, NAN, NAN, NULL,
     "--check-orders fails an observed order off the expected one by more (>= 0)",
     STORED({"order_tolerance", CONV, NH_STORED_F64, FIELD(order_tolerance)})},
    {"expected_orders", CONV, "list of groups", NONE, "the claimed orders",
     "exceptions to the claimed orders, each with its reason ( { method = \"...\"; order = N; reason = \"...\"; } )", NULL},
    {"norm", CONV | ONE | WP, "text", NONE, "\"max\"", "the error norm of order fits and Pareto fronts: \"max\" or \"2\"",
     STORED({"norm", CONV | ONE | WP, NH_STORED_NORM, FIELD(norm)})},
    {"observables", ENS | TRAJ, "list of texts", NONE, "none",
     "quantities sampled every sample_every steps (nhbench list observables)", NULL},
    {"sample_every", ENS | TRAJ, "whole number", 1, 1, 1 << 30, NULL,
     "K: E(t) - E0 and the observables are stored every K steps",
     STORED({"sample_every", ENS | TRAJ, NH_STORED_I32, FIELD(sample_every)})},
    {"divergence", ENS | TRAJ, "real", 1e3, NAN, NAN, NULL,
     "a run stops as diverged (status 3) when |E(t) - E0| exceeds divergence * max(1, |E0|) (> 0)",
     STORED({"divergence", ENS | TRAJ, NH_STORED_F64, FIELD(divergence)})},
    {"round_trip", TRAJ, "true or false", NONE, "false", "also step back from each end state with -h", NULL},
    {"ensemble", ENS | ONE, "group", NONE, NULL,
     "{ count = N; energy = E; seed = S; }: N random initial conditions on D at energy E, instead of initial",
     STORED({"count", ENS, NH_STORED_I32, FIELD(count)}, {"random_ics", ENS, NH_STORED_I32, FIELD(random_ics)},
            {"energy", ENS, NH_STORED_F64, FIELD(energy)}, {"seed", ENS, NH_STORED_I64, FIELD(seed)})},
    {"points", ONE, "whole number", 8, 1, 100000, NULL, "start points along the true solution of each initial condition",
     STORED({"npoints", ONE, NH_STORED_I32, FIELD(npoints)})},
    {"repeats", WP, "whole number", 3, 1, 1000, NULL, "the wall time is the median of this many runs",
     STORED({"repeats", WP, NH_STORED_I32, FIELD(repeats)})},
    {"time_limit", WP, "real", 60, NAN, NAN, NULL,
     "seconds a run may take before it is stopped as timed out (status 4; > 0)",
     STORED({"time_limit", WP, NH_STORED_F64, FIELD(time_limit)})},
    {NULL}};

const nh_setting *nh_setting_named(const char *name) {
  for (const nh_setting *s = nh_settings; name && s->name; s++)
    if (strcmp(s->name, name) == 0) return s;
  return NULL;
}

int nh_setting_of_kind(const nh_setting *s, nh_study_kind kind) { return (s->kinds & NH_KIND(kind)) != 0; }
