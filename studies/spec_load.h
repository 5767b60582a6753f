/* What a study kind's loader reads its settings with (the `load` and `load_with_methods` of its
 * table, studies/kinds.h): the spec loader's readers (studies/spec.c). Each returns 0, or -1 with
 * its refusal written, placed at the setting ("FILE:LINE: ...", "FILE: --set PATH: ..."); a
 * loader returns at the first -1. Numeric defaults and ranges come from the settings' descriptors
 * (studies/settings.c). */
#ifndef NH_STUDIES_SPEC_LOAD_H
#define NH_STUDIES_SPEC_LOAD_H

#include <libconfig.h>

#include "studies/spec.h"

/* The load in progress: the spec's text and files, where refusals go. */
typedef struct nh_spec_ctx nh_spec_ctx;

/* The refusal "where: message" at setting s (NULL, or the root: the spec as a whole); -1. */
int nh_spec_fail(const nh_spec_ctx *c, const config_setting_t *s, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int nh_spec_out_of_memory(const nh_spec_ctx *c);
/* A copy of s (malloc'd), NULL if out of memory. */
char *nh_spec_dup(const char *s);
/* Member name of group, or NULL with "missing setting 'name'". */
const config_setting_t *nh_spec_require(const nh_spec_ctx *c, const config_setting_t *group, const char *name);
/* Every member of group among the NULL-terminated known, else refused by name with the list. */
int nh_spec_members(const nh_spec_ctx *c, const config_setting_t *group, const char *const *known);
/* The index of the study's method that text names (in the method syntax, parameters in any order,
 * defaults written or not), or -1 refused at s: "WHAT 'TEXT': why" (no method), "WHAT '...' is not among
 * the study's methods". */
int nh_spec_method_index(const nh_spec_ctx *c, const config_setting_t *s, const nh_study *st, const char *text,
                         const char *what);

/* A whole number in [min, max]; def when absent, or NH_SPEC_REQUIRED. */
#define NH_SPEC_REQUIRED (-1)
int nh_spec_whole(const nh_spec_ctx *c, const config_setting_t *group, const char *name, int min, int max, int def,
                  int *out);
/* A top-level whole-number or real setting with its descriptor's range and default. */
int nh_spec_count(const nh_spec_ctx *c, const config_setting_t *root, const char *name, int *out);
int nh_spec_real(const nh_spec_ctx *c, const config_setting_t *root, const char *name, double *out);
/* A switch, true or false; def when absent. */
int nh_spec_flag(const nh_spec_ctx *c, const config_setting_t *group, const char *name, int def, int *out);

/* `system = { ... }`: the definition in group g read, built into st->defined and st->sys. */
int nh_spec_defined_system(const nh_spec_ctx *c, const config_setting_t *g, nh_study *st);
/* `system = "plugin:PATH"` at s: the plugin at PATH (relative to spec_file's directory) loaded
 * into st->plugin and st->sys. */
int nh_spec_plugin_system(const nh_spec_ctx *c, const config_setting_t *s, const char *spec_file, const char *path,
                          nh_study *st);

/* The settings several kinds share, into st (the names in studies/settings.c). */
/* `initial` (one or a list), then `system_params` over what a preset set. */
int nh_spec_initial(const nh_spec_ctx *c, const config_setting_t *root, nh_study *st);
/* `h = [...]` or `h0` and `halvings`: at least min_count step sizes, positive and distinct. */
int nh_spec_steps(const nh_spec_ctx *c, const config_setting_t *root, nh_study *st, int min_count);
/* `h = H`: one step size (h[0], nh = 1), T a whole number of steps of it. */
int nh_spec_one_step(const nh_spec_ctx *c, const config_setting_t *root, nh_study *st);
/* T a whole number of steps of every h (at most 9e15 of them). */
int nh_spec_whole_steps(const nh_spec_ctx *c, const config_setting_t *root, const nh_study *st);
/* steps sampled every `every` make at most INT_MAX − 1 samples. */
int nh_spec_sample_count(const nh_spec_ctx *c, const config_setting_t *root, long steps, int every);
int nh_spec_fit(const nh_spec_ctx *c, const config_setting_t *root, nh_study *st); /* fit_points, error_floor */
int nh_spec_reference_tol(const nh_spec_ctx *c, const config_setting_t *root, nh_study *st); /* or "auto" */
int nh_spec_norm(const nh_spec_ctx *c, const config_setting_t *root, nh_study *st);          /* "max" or "2" */
int nh_spec_divergence(const nh_spec_ctx *c, const config_setting_t *root, nh_study *st);
int nh_spec_observables(const nh_spec_ctx *c, const config_setting_t *root, nh_study *st);
/* `ensemble = { count; energy; seed; }`: count, energy and seed into st, the first state drawn as
 * a check; nh_spec_random_initials also draws them all as st's initial conditions. */
int nh_spec_random_states(const nh_spec_ctx *c, const config_setting_t *ens, nh_study *st);
int nh_spec_random_initials(const nh_spec_ctx *c, const config_setting_t *ens, nh_study *st);

#endif
