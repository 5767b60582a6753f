/* libFuzzer target: the spec loader (studies/spec.c) on arbitrary text. An input whose first line
 * is "#set PATH=VALUE" (a comment to libconfig) also passes PATH=VALUE as a --set override, so the
 * override parser is fuzzed along with the spec it applies to. */
#define _POSIX_C_SOURCE 200809L /* getpid */
#include <stdlib.h>
#include <string.h>

#include "studies/study.h"
#include "tests/fuzz/fuzz_common.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  fuzz_init(".cfg");
  /* A system written in the spec is built on the interpreter: the loader and the expressions are
   * what is fuzzed, not a compiler run per input. */
  setenv("NHBENCH_CC", "none", 1);
  return 0;
}

/* The override of the first line "#set ...", copied into buf; NULL if there is none. */
static const char *override_of(const uint8_t *data, size_t size, char *buf, size_t len) {
  static const char tag[] = "#set ";
  const size_t n = sizeof tag - 1;
  if (size < n || memcmp(data, tag, n) != 0) return NULL;
  size_t end = n;
  while (end < size && data[end] != '\n' && end - n + 1 < len) end++;
  memcpy(buf, data + n, end - n);
  buf[end - n] = '\0';
  return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char err[1024], set[512];
  const char *overrides[1] = {override_of(data, size, set, sizeof set)};
  nh_study st;
  fuzz_write(data, size);
  nh_study_load(fuzz_path, overrides, overrides[0] != NULL, &st, err, sizeof err);
  nh_study_free(&st); /* also after a failure, as `nhbench run` does: st holds what was read */
  return 0;
}
