/* A system compiled outside the tree (issue 50 item 5): a shared object built against the
 * installed headers (include/nhbench/, `cmake --install`), loaded by path from a spec,
 * system = "plugin:./mysystem.so". The object defines its nh_system_type as a system file of the
 * tree does and names it once with NH_SYSTEM_PLUGIN(type) (systems/system.h), which also records
 * the interface version it was built against; a plugin of another version is refused, since the
 * table's layout may differ. */
#ifndef NH_SYSTEMS_PLUGIN_H
#define NH_SYSTEMS_PLUGIN_H

#include <stddef.h>

#include "systems/system.h"

typedef struct nh_system_plugin nh_system_plugin;

/* Loads the plugin at path. NULL with the reason in err: the file does not load (dlerror's
 * text), it is not an nhbench system plugin (no NH_SYSTEM_PLUGIN), its interface version is not
 * NH_SYSTEM_ABI, or its table is unusable (no name, n or k out of range, a required function
 * missing). */
nh_system_plugin *nh_system_plugin_open(const char *path, char *err, size_t errlen);
/* Its table, valid until nh_system_plugin_close. */
const nh_system_type *nh_system_plugin_type(const nh_system_plugin *pl);
void nh_system_plugin_close(nh_system_plugin *pl);

#endif
