/* Every system nhbench knows. Adding a system: its own file and one line here. */
#include <string.h>

#include "systems/system.h"

extern const nh_system_type nh_system_particle;
extern const nh_system_type nh_system_chaotic_particle;
extern const nh_system_type nh_system_cvt;
extern const nh_system_type nh_system_knife_edge;
extern const nh_system_type nh_system_chaplygin_sleigh;
extern const nh_system_type nh_system_vertical_disk;
extern const nh_system_type nh_system_falling_disk;
extern const nh_system_type nh_system_foucault_pendulum;
extern const nh_system_type nh_system_pendulum;
extern const nh_system_type nh_system_oscillator;
extern const nh_system_type nh_system_rotational_symmetry;

const nh_system_type *const nh_system_types[] = {
    &nh_system_particle,
    &nh_system_chaotic_particle,
    &nh_system_cvt,
    &nh_system_knife_edge,
    &nh_system_chaplygin_sleigh,
    &nh_system_vertical_disk,
    &nh_system_falling_disk,
    &nh_system_foucault_pendulum,
    &nh_system_pendulum,
    &nh_system_oscillator,
    &nh_system_rotational_symmetry,
    NULL,
};

const nh_system_type *nh_system_type_find(const char *name) {
  for (int i = 0; nh_system_types[i]; i++)
    if (strcmp(nh_system_types[i]->name, name) == 0) return nh_system_types[i];
  return NULL;
}
