/* Every system nhbench knows: the list is systems/systems.def, one NH_SYSTEM(name) line per system,
 * read twice here (X-macro), once for the declarations and once for the NULL-terminated table. */
#include <string.h>

#include "core/text.h"
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

void nh_system_suggest(const char *name, char *hint, size_t len) {
  const char *names[64]; /* more than the registry holds */
  int n = 0;
  hint[0] = '\0';
  for (int i = 0; nh_system_types[i] && n < (int)(sizeof names / sizeof *names); i++) names[n++] = nh_system_types[i]->name;
  nh_text_suggest(name, names, n, hint, len);
}
