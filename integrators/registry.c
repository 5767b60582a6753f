/* Every integrator nhbench knows. Adding a method: its own file and one line here. */
#include <string.h>

#include "integrators/integrator.h"

extern const nh_integrator_type nh_integrator_rk4;
extern const nh_integrator_type nh_integrator_nh_newmark;
extern const nh_integrator_type nh_integrator_adjoint_pair;
extern const nh_integrator_type nh_integrator_triple_jump;
extern const nh_integrator_type nh_integrator_suzuki5;
extern const nh_integrator_type nh_integrator_yoshida6;
extern const nh_integrator_type nh_integrator_mclachlan8;
extern const nh_integrator_type nh_integrator_newmark;
extern const nh_integrator_type nh_integrator_dla;
extern const nh_integrator_type nh_integrator_nh_shake;
extern const nh_integrator_type nh_integrator_nh_rattle;
extern const nh_integrator_type nh_integrator_shake;
extern const nh_integrator_type nh_integrator_rattle;
extern const nh_integrator_type nh_integrator_js_a;
extern const nh_integrator_type nh_integrator_js_b;
extern const nh_integrator_type nh_integrator_js_p1;
extern const nh_integrator_type nh_integrator_js_p2new;
extern const nh_integrator_type nh_integrator_js_p2orig;
extern const nh_integrator_type nh_integrator_herglotz1;
extern const nh_integrator_type nh_integrator_herglotz2;
extern const nh_integrator_type nh_integrator_la1;
extern const nh_integrator_type nh_integrator_m11;

const nh_integrator_type *const nh_integrator_types[] = {
    &nh_integrator_rk4,
    &nh_integrator_nh_newmark,
    &nh_integrator_adjoint_pair,
    &nh_integrator_triple_jump,
    &nh_integrator_suzuki5,
    &nh_integrator_yoshida6,
    &nh_integrator_mclachlan8,
    &nh_integrator_newmark,
    &nh_integrator_dla,
    &nh_integrator_nh_shake,
    &nh_integrator_nh_rattle,
    &nh_integrator_shake,
    &nh_integrator_rattle,
    &nh_integrator_js_a,
    &nh_integrator_js_b,
    &nh_integrator_js_p1,
    &nh_integrator_js_p2new,
    &nh_integrator_js_p2orig,
    &nh_integrator_herglotz1,
    &nh_integrator_herglotz2,
    &nh_integrator_la1,
    &nh_integrator_m11,
    NULL,
};

const nh_integrator_type *nh_integrator_type_find(const char *name) {
  for (int i = 0; nh_integrator_types[i]; i++)
    if (strcmp(nh_integrator_types[i]->name, name) == 0) return nh_integrator_types[i];
  return NULL;
}
