/* Shared by the libFuzzer targets of tests/fuzz/ (built with -DNHBENCH_FUZZ=ON, run by make fuzz):
 * the loaders under test read files, so each input is written to a temporary file first. */
#ifndef NH_FUZZ_COMMON_H
#define NH_FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* libFuzzer's hooks (compiler-rt's FuzzerInterface.h, which C cannot include). */
int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* $TMPDIR/nhbench_fuzz_<pid><suffix>: one name per process, so that parallel jobs (-jobs=N) do
 * not write each other's inputs. Set once, by fuzz_init. */
static char fuzz_path[4096];

static inline void fuzz_remove(void) { remove(fuzz_path); }

/* The loaders report every bad input on stderr: make fuzz runs the targets with -close_fd_mask=3,
 * which closes the targets' stdout and stderr but keeps libFuzzer's and the sanitizers' reports. */
static inline void fuzz_init(const char *suffix) {
  const char *dir = getenv("TMPDIR");
  snprintf(fuzz_path, sizeof fuzz_path, "%s/nhbench_fuzz_%ld%s", dir && *dir ? dir : "/tmp", (long)getpid(), suffix);
  atexit(fuzz_remove); /* a crash keeps the file, but libFuzzer has saved the input anyway */
}

/* Writes the input to fuzz_path; aborts if it cannot (a broken setup, not a finding to minimise). */
static inline void fuzz_write(const uint8_t *data, size_t size) {
  FILE *f = fopen(fuzz_path, "wb");
  if (!f || fwrite(data, 1, size, f) != size || fclose(f)) {
    perror(fuzz_path);
    abort();
  }
}

#endif
