/* The spec's top-level settings (studies/settings.h), in the order messages list them. Where a
 * setting has a numeric default and range the loader takes them from here (studies/spec.c). */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "studies/settings.h"

#define EVERY 1        /* every kind takes it */
#define SOME 0         /* the kinds whose tables list it take it (studies/kinds.h, settings) */
#define NONE NAN, NAN, NAN /* no numeric default or range */
/* The attributes a setting is stored as: {name, type, field}, ended by {NULL}; the kinds whose
 * tables list an attribute (studies/kinds.h, stores) write it. */
#define STORED(...) ((const nh_setting_attr[]){__VA_ARGS__, {NULL}})
#define FIELD(f) offsetof(nh_study, f)

const nh_setting nh_settings[] = {
    {"study", EVERY, "text", NONE, NULL, "the study kind: its name in nhbench list kinds, e.g. \"convergence\"", NULL},
    {"system", EVERY, "text", NONE, NULL, "a system name (nhbench list systems)", NULL},
    {"system_params", EVERY, "group", NONE, "the system's defaults",
     "system parameters, e.g. { eps = 0.1; }; over those a preset sets", NULL},
    {"initial", EVERY, "text, group or list", NONE, "\"default\"",
     "a preset name, \"default\" (the system's documented initial condition) or { q = [...]; v = [...]; } on D; "
     "trajectory, one-step and ensemble studies also take a list of these",
     STORED({"initial", NH_STORED_TEXT, FIELD(initial)})},
    {"T", EVERY, "real", NONE, NULL, "final time (one-step studies: the span over which the start points are spread)",
     NULL},
    {"h", EVERY, "real or list of reals", NONE, NULL,
     "the step size, or a list of them (or h0 and halvings); T/h a whole number", NULL},
    {"h0", SOME, "real", NONE, NULL, "with halvings, instead of h: the step sizes h0, h0/2, ..., h0/2^halvings", NULL},
    {"halvings", SOME, "whole number", NAN, 1, 30, NULL, "with h0: how many times h0 is halved", NULL},
    {"methods", EVERY, "list of texts", NONE, NULL, "the methods, in the method syntax (nhbench list methods)", NULL},
    {"labels", EVERY, "list of pairs of texts", NONE, "automatic",
     "labels figures show ( [\"method\", \"label\"], ... ), gnuplot enhanced text such as \"Ψ^{0.1}_h\"; "
     "kept in the file (method_labels); other methods: their name without default parameters",
     NULL},
    {"grids", EVERY, "list of groups", NONE, "none",
     "parameter-pair grids ( { method = \"...\"; beta = [...]; beta2 = [...]; } ): every pair a method",
     STORED({"grids", NH_STORED_I32, FIELD(ngrids)})},
    {"fit_points", SOME, "whole number", 3, 2, 100, NULL,
     "the most step sizes an order fit uses: the finest above the error floor",
     STORED({"fit_points", NH_STORED_I32, FIELD(fit_points)})},
    {"error_floor", SOME, "real or \"auto\"", NONE, "\"auto\"",
     "errors at or below it are left out of the order fit (\"auto\": the reference's error and round-off)", NULL},
    {"reference_tol", EVERY, "real or \"auto\"", NONE, "\"auto\"",
     "tolerance of the rk8pd reference in [1e-16, 1e-3] where there is no exact solution (\"auto\": from 1e-13)",
     STORED({"reference_tol", NH_STORED_F64, FIELD(reference_tol)})},
    {"order_tolerance", SOME, "real", 0.15, NAN, NAN, NULL,
     "--check-orders fails an observed order off the expected one by more (>= 0)",
     STORED({"order_tolerance", NH_STORED_F64, FIELD(order_tolerance)})},
    {"expected_orders", SOME, "list of groups", NONE, "the claimed orders",
     "exceptions to the claimed orders, each with its reason ( { method = \"...\"; order = N; reason = \"...\"; } )",
     NULL},
    {"norm", SOME, "text", NONE, "\"max\"", "the error norm of order fits and Pareto fronts: \"max\" or \"2\"",
     STORED({"norm", NH_STORED_NORM, FIELD(norm)})},
    {"observables", SOME, "list of texts", NONE, "none",
     "quantities sampled every sample_every steps (nhbench list observables)", NULL},
    {"sample_every", SOME, "whole number", 1, 1, 1 << 30, NULL,
     "K: E(t) - E0 and the observables are stored every K steps",
     STORED({"sample_every", NH_STORED_I32, FIELD(sample_every)})},
    {"divergence", SOME, "real", 1e3, NAN, NAN, NULL,
     "a run stops as diverged (status 3) when |E(t) - E0| exceeds divergence * max(1, |E0|) (> 0)",
     STORED({"divergence", NH_STORED_F64, FIELD(divergence)})},
    {"round_trip", SOME, "true or false", NONE, "false", "also step back from each end state with -h", NULL},
    {"ensemble", SOME, "group", NONE, NULL,
     "{ count = N; energy = E; seed = S; }: N random initial conditions on D at energy E, instead of initial",
     STORED({"count", NH_STORED_I32, FIELD(count)}, {"random_ics", NH_STORED_I32, FIELD(random_ics)},
            {"energy", NH_STORED_F64, FIELD(energy)}, {"seed", NH_STORED_I64, FIELD(seed)})},
    {"points", SOME, "whole number", 8, 1, 100000, NULL,
     "start points along the true solution of each initial condition",
     STORED({"npoints", NH_STORED_I32, FIELD(npoints)})},
    {"repeats", SOME, "whole number", 3, 1, 1000, NULL, "the wall time is the median of this many runs",
     STORED({"repeats", NH_STORED_I32, FIELD(repeats)})},
    {"time_limit", SOME, "real", 60, NAN, NAN, NULL,
     "seconds a run may take before it is stopped as timed out (status 4; > 0)",
     STORED({"time_limit", NH_STORED_F64, FIELD(time_limit)})},
    {NULL}};

const nh_setting *nh_setting_named(const char *name) {
  for (const nh_setting *s = nh_settings; name && s->name; s++)
    if (strcmp(s->name, name) == 0) return s;
  return NULL;
}

/* Whether the space-separated words of list include word. */
static int listed(const char *list, const char *word) {
  const size_t len = strlen(word);
  for (const char *p = list; p && *p;) {
    p += strspn(p, " ");
    const size_t n = strcspn(p, " ");
    if (n == len && strncmp(p, word, len) == 0) return 1;
    p += n;
  }
  return 0;
}

int nh_setting_of_kind(const nh_setting *s, const nh_study_kind_type *kind) {
  return s->every_kind || listed(kind->settings, s->name);
}

int nh_setting_stored_by(const nh_setting_attr *a, const nh_study_kind_type *kind) {
  return listed(kind->stores, a->attr);
}
