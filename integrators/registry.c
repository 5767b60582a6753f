/* Every integrator nhbench knows. Adding a method: its own file and one line here. */
#include <string.h>

#include "integrators/integrator.h"

extern const nh_integrator_type nh_integrator_rk4;
extern const nh_integrator_type nh_integrator_nh_newmark;
extern const nh_integrator_type nh_integrator_adjoint_pair;
extern const nh_integrator_type nh_integrator_triple_jump;

const nh_integrator_type *const nh_integrator_types[] = {
    &nh_integrator_rk4,
    &nh_integrator_nh_newmark,
    &nh_integrator_adjoint_pair,
    &nh_integrator_triple_jump,
    NULL,
};

const nh_integrator_type *nh_integrator_type_find(const char *name) {
  for (int i = 0; nh_integrator_types[i]; i++)
    if (strcmp(nh_integrator_types[i]->name, name) == 0) return nh_integrator_types[i];
  return NULL;
}
