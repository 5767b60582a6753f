/* A system plugin (systems/plugin.h): dlopen, the interface version, the table's required
 * entries. */
#include "systems/plugin.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct nh_system_plugin {
  void *handle;
  const nh_system_type *type;
};

/* What every system supplies (systems/system.h, the core): a table without it would crash the
 * first step, so it is refused at load. */
static const char *missing_core(const nh_system_type *t) {
  if (!t->name || !t->name[0]) return "name";
  if (!t->mass) return "mass";
  if (!t->potential) return "potential";
  if (!t->grad_potential) return "grad_potential";
  if (!t->hess_potential) return "hess_potential";
  if (!t->constraints) return "constraints";
  if (!t->constraints_jacobian) return "constraints_jacobian";
  if (!t->q0 || !t->v0) return "q0 and v0";
  return NULL;
}

static int check_table(const nh_system_type *t, const char *path, char *err, size_t errlen) {
  const char *missing = missing_core(t);
  if (missing) {
    snprintf(err, errlen, "system plugin %s: its table has no %s", path, missing);
    return -1;
  }
  if (t->n < 1 || t->n > NH_MAX_N || t->k < 0 || t->k > NH_MAX_K || t->k >= t->n || t->nparams < 0 ||
      t->nparams > NH_MAX_PARAMS || (t->nparams > 0 && !t->params)) {
    snprintf(err, errlen,
             "system plugin %s: n = %d, k = %d, %d parameters: nhbench takes 1 <= n <= %d, 0 <= k < n, "
             "k <= %d, at most %d parameters",
             path, t->n, t->k, t->nparams, NH_MAX_N, NH_MAX_K, NH_MAX_PARAMS);
    return -1;
  }
  if (nh_system_type_find(t->name)) { /* its results would pass for the built-in system's */
    snprintf(err, errlen, "system plugin %s: its name '%s' is a built-in system's: choose another", path, t->name);
    return -1;
  }
  return 0;
}

nh_system_plugin *nh_system_plugin_open(const char *path, char *err, size_t errlen) {
  nh_system_plugin *pl = calloc(1, sizeof *pl);
  if (!pl) {
    snprintf(err, errlen, "system plugin %s: out of memory", path);
    return NULL;
  }
  /* dlopen looks a name without '/' up on the library path, never here: a plugin is a file. */
  char file[4096];
  snprintf(file, sizeof file, "%s%s", strchr(path, '/') ? "" : "./", path);
  if (!(pl->handle = dlopen(file, RTLD_NOW | RTLD_LOCAL))) {
    const char *why = dlerror();
    snprintf(err, errlen, "system plugin %s does not load: %s", path, why ? why : "unknown reason");
    free(pl);
    return NULL;
  }
  const int *abi = dlsym(pl->handle, "nhbench_system_abi");
  const nh_system_type *(*type)(void) = (const nh_system_type *(*)(void))dlsym(pl->handle, "nhbench_system_type");
  if (!abi || !type)
    snprintf(err, errlen, "%s is not an nhbench system plugin: it has no NH_SYSTEM_PLUGIN(type) (systems/system.h)",
             path);
  else if (*abi != NH_SYSTEM_ABI)
    snprintf(err, errlen,
             "system plugin %s was built against the system interface version %d; this nhbench has "
             "version %d: rebuild it against this nhbench's headers",
             path, *abi, NH_SYSTEM_ABI);
  else if (!(pl->type = type()))
    snprintf(err, errlen, "system plugin %s: nhbench_system_type() returned no table", path);
  if (pl->type && check_table(pl->type, path, err, errlen) == 0) return pl;
  nh_system_plugin_close(pl);
  return NULL;
}

const nh_system_type *nh_system_plugin_type(const nh_system_plugin *pl) { return pl->type; }

void nh_system_plugin_close(nh_system_plugin *pl) {
  if (!pl) return;
  dlclose(pl->handle);
  free(pl);
}
