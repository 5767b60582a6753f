/* Every system nhbench knows: the list is systems/systems.def, one NH_SYSTEM(name) line per system,
 * read twice here (X-macro), once for the declarations and once for the NULL-terminated table. */
#include <string.h>

#include "systems/system.h"

#define NH_SYSTEM(name) extern const nh_system_type nh_system_##name;
#include "systems/systems.def"
#undef NH_SYSTEM

const nh_system_type *const nh_system_types[] = {
#define NH_SYSTEM(name) &nh_system_##name,
#include "systems/systems.def"
#undef NH_SYSTEM
    NULL,
};

const nh_system_type *nh_system_type_find(const char *name) {
  for (int i = 0; nh_system_types[i]; i++)
    if (strcmp(nh_system_types[i]->name, name) == 0) return nh_system_types[i];
  return NULL;
}
