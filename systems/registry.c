/* Every system nhbench knows. Adding a system: its own file and one line here. */
#include <string.h>

#include "systems/system.h"

extern const nh_system_type nh_system_particle;
extern const nh_system_type nh_system_chaotic_particle;

const nh_system_type *const nh_system_types[] = {
    &nh_system_particle,
    &nh_system_chaotic_particle,
    NULL,
};

const nh_system_type *nh_system_type_find(const char *name) {
  for (int i = 0; nh_system_types[i]; i++)
    if (strcmp(nh_system_types[i]->name, name) == 0) return nh_system_types[i];
  return NULL;
}
