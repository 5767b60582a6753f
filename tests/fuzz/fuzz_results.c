/* libFuzzer target: the results reader (results/read*.c) on arbitrary files, through the two
 * commands that read every dataset of a results file: `nhbench info FILE` (each study kind's
 * summary) and `nhbench export FILE TABLE` for every table with its default options, also when
 * info failed (export reads datasets on their own; a table of another study kind, or a file that
 * is not HDF5, is refused early, which is cheap). */
#define _POSIX_C_SOURCE 200809L /* getpid */
#include <hdf5.h>

#include "bench/cli.h"
#include "tests/fuzz/fuzz_common.h"

int LLVMFuzzerInitialize(int *argc, char **argv[]) {
  (void)argc, (void)argv;
  fuzz_init(".h5");
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL); /* the reader reports errors itself */
  return 0;
}

static const char *const tables[] = {
    "study",     "methods",  "convergence", "orders", "energy",      "energy-all-methods", "quantiles",
    "variance",  "grid",     "observables", "series", "local_error", "slopes",             "work_precision"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_write(data, size);
  char *info[] = {"info", fuzz_path, NULL};
  nh_cli_getopt_reset();
  nh_cli_info(2, info);
  for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++) {
    char *argv[] = {"export", fuzz_path, (char *)tables[i], NULL};
    nh_cli_getopt_reset();
    nh_cli_export(3, argv);
  }
  return 0;
}
