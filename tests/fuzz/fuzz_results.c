/* libFuzzer target: the results reader (results/read*.c) on arbitrary files (fuzz_read.h). Most
 * mutants of a results file stop in HDF5's own parser; fuzz_results_edit.c keeps the files valid
 * HDF5 and changes their contents instead. */
#define _POSIX_C_SOURCE 200809L /* getpid */
#include <hdf5.h>

#include "tests/fuzz/fuzz_common.h"
#include "tests/fuzz/fuzz_read.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  fuzz_init(".h5");
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL); /* the reader reports errors itself */
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_write(data, size);
  fuzz_read_results(fuzz_path);
  return 0;
}
