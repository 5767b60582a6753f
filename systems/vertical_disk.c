/* STUB: placeholder so the registry links while this system is written. */
#include "systems/system.h"

const nh_system_type nh_system_vertical_disk = {.name = "vertical_disk", .doc = "not implemented yet", .ic_doc = ""};
