/* Every integrator nhbench knows: the list is integrators/integrators.def, one NH_INTEGRATOR(name)
 * line per method, read twice here (X-macro), once for the declarations and once for the
 * NULL-terminated table. */
#include <string.h>

#include "integrators/integrator.h"

#define NH_INTEGRATOR(name) extern const nh_integrator_type nh_integrator_##name;
#include "integrators/integrators.def"
#undef NH_INTEGRATOR

const nh_integrator_type *const nh_integrator_types[] = {
#define NH_INTEGRATOR(name) &nh_integrator_##name,
#include "integrators/integrators.def"
#undef NH_INTEGRATOR
    NULL,
};

const nh_integrator_type *nh_integrator_type_find(const char *name) {
  for (int i = 0; nh_integrator_types[i]; i++)
    if (strcmp(nh_integrator_types[i]->name, name) == 0) return nh_integrator_types[i];
  return NULL;
}
