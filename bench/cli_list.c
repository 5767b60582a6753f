/* nhbench list [systems|methods]: generated from the descriptor tables, so it never drifts. */
#include <stdio.h>
#include <string.h>

#include "bench/cli.h"
#include "integrators/integrator.h"

static void print_params(const nh_param_desc *d, int n) {
  for (int i = 0; i < n; i++) {
    char def[32], lo[32], hi[32];
    nh_format_double(def, sizeof def, d[i].def);
    nh_format_double(lo, sizeof lo, d[i].min);
    nh_format_double(hi, sizeof hi, d[i].max);
    printf("      %-8s %-4s default %s, in [%s, %s]: %s\n", d[i].name, d[i].kind == NH_PARAM_INT ? "int," : "real,",
           def, lo, hi, d[i].help);
  }
}

static void list_systems(void) {
  printf("systems:\n");
  for (int i = 0; nh_system_types[i]; i++) {
    const nh_system_type *t = nh_system_types[i];
    printf("  %s  (n = %d, k = %d%s)\n    %s\n    default initial condition: %s\n", t->name, t->n, t->k,
           t->exact ? ", exact solution" : "", t->doc, t->ic_doc);
    if (t->nparams) printf("    parameters:\n");
    print_params(t->params, t->nparams);
    if (t->ninvariants) {
      printf("    invariants:");
      for (int j = 0; j < t->ninvariants; j++) printf("%s %s", j ? "," : "", t->invariant_names[j]);
      printf("\n");
    }
    if (t->npresets) printf("    presets (initial = \"NAME\" in a convergence spec):\n");
    for (int j = 0; j < t->npresets; j++)
      printf("      %-14s %s%s%s%s\n", t->presets[j].name, t->presets[j].doc,
             t->presets[j].params && t->presets[j].params[0] ? " [" : "",
             t->presets[j].params ? t->presets[j].params : "",
             t->presets[j].params && t->presets[j].params[0] ? "]" : "");
  }
}

static void list_methods(void) {
  printf("methods:\n");
  for (int i = 0; nh_integrator_types[i]; i++) {
    const nh_integrator_type *t = nh_integrator_types[i];
    char example[256];
    snprintf(example, sizeof example, "%s%s", t->name, t->takes_base ? "(METHOD)" : "");
    nh_method *m = t->takes_base ? NULL : nh_method_parse(t->name, example, sizeof example);
    if (m) {
      printf("  %s  (order %d with defaults%s)\n", t->name, nh_method_order(m),
             nh_method_is_symmetric(m) ? ", symmetric" : "");
      nh_method_free(m);
    } else {
      printf("  %s(METHOD)\n", t->name);
    }
    printf("    %s\n", t->doc);
    if (t->takes_base) {
      printf("    applies where its base method applies\n");
    } else {
      printf("    %s%s%s", t->properties & NH_PRESERVES_CONSTRAINT ? "preserves the constraint; " : "",
             t->properties & NH_HISTORY ? "two-step (no compositions); " : "",
             t->properties & NH_TRACKS_ACTION ? "tracks the Herglotz action z; " : "");
      printf("handles:%s%s%s%s%s\n", t->handles & NH_SYS_VARIABLE_MASS ? " M(q)" : "",
             t->handles & NH_SYS_AFFINE_CONSTRAINTS ? " affine-constraints" : "",
             t->handles & NH_SYS_DAMPING ? " damping" : "", t->handles & NH_SYS_FORCING ? " forcing" : "",
             t->handles ? "" : " constant M, linear constraints, conservative systems only");
    }
    if (t->nparams) printf("    parameters:\n");
    print_params(t->params, t->nparams);
  }
}

int nh_cli_list(int argc, char **argv) {
  const char *what = argc > 1 ? argv[1] : "all";
  if (strcmp(what, "systems") == 0) list_systems();
  else if (strcmp(what, "methods") == 0) list_methods();
  else if (strcmp(what, "all") == 0) list_systems(), printf("\n"), list_methods();
  else {
    fprintf(stderr, "usage: nhbench list [systems|methods]\n");
    return 2;
  }
  return 0;
}
