/* libFuzzer target: the method syntax (integrators/method.c) on arbitrary text. A method that
 * parses must format to a name that parses back to the same name (integrator.h: "parse(format(m))
 * is m"); a difference aborts, as a finding. */
#define _POSIX_C_SOURCE 200809L /* getpid, strdup */
#include <stdlib.h>
#include <string.h>

#include "integrators/integrator.h"
#include "tests/fuzz/fuzz_common.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  return 0;
}

/* The canonical name of text's method, malloc'd; NULL if it does not parse, or if its name is too
 * long to round-trip here (not a finding: the buffer is this target's). */
static char *canonical(const char *text) {
  char err[512], name[8192];
  nh_method *m = nh_method_parse(text, err, sizeof err);
  if (!m) return NULL;
  const size_t len = nh_method_format(m, name, sizeof name);
  nh_method_free(m);
  return len < sizeof name ? strdup(name) : NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  memcpy(text, data, size);
  text[size] = '\0';
  char *name = canonical(text);
  if (name) {
    char *again = canonical(name);
    if (!again || strcmp(name, again) != 0) {
      fprintf(stderr, "fuzz_method: '%s' formats as '%s', which reads back as '%s'\n", text, name,
              again ? again : "(an error)");
      abort();
    }
    free(again);
  }
  free(name), free(text);
  return 0;
}
