/* What every nhbench command shares (bench/cli/cli.h), apart from the dispatcher in bench/cli/nhbench.c,
 * so that the commands can be called without nhbench's main (tests/fuzz/fuzz_results.c). */
#include <stdio.h>
#include <string.h>

#include "bench/cli/cli.h"
#include "core/text.h"
#include "studies/study.h" /* nh_study_rank, nh_ranks_agree */

#ifdef NHBENCH_MPI
#include <mpi.h>
#endif

void nh_cli_mpi_begin(int *argc NH_UNUSED, char ***argv NH_UNUSED) {
#ifdef NHBENCH_MPI
  int provided;
  /* A worker's threads call MPI one at a time (studies/distribute.c); with less, one thread works. */
  MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, &provided);
  if (nh_study_rank() != 0) {
    if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr)) return;
  }
#endif
}

int nh_cli_mpi_end(int rc) {
#ifdef NHBENCH_MPI
  /* Called once, at the end of nhbench's main or of a failed run (which then _exits); a command
   * called in-process (tests/fuzz) may never have started MPI. */
  int init = 0;
  MPI_Initialized(&init);
  if (!init) return rc;
  rc = nh_ranks_agree(rc);
  fflush(NULL);
  MPI_Finalize();
#endif
  return rc;
}

/* getopt prints no messages of its own: every optstring starts with ':' (after nhbench's '+'), so
 * nh_cli_bad_option words them. */
void nh_cli_getopt_reset(void) {
  optind = 0; /* glibc (nhbench builds on Debian): a full re-initialisation, including the scan order */
}

int nh_cli_bad_option(const char *prog, const char *usage_, int c, char **argv) {
  const char *arg = argv[optind - 1];
  char shortopt[3] = {'-', (char)optopt, '\0'};
  /* A long option names itself in argv; a short one (perhaps in a cluster like -xo) by optopt. */
  const char *name = strncmp(arg, "--", 2) == 0 || !optopt ? arg : shortopt;
  char shown[NH_TEXT_NAME];
  snprintf(shown, sizeof shown, "%.*s", (int)strcspn(name, "="), name);
  if (c == ':') fprintf(stderr, "%s: option '%s' needs an argument\n", prog, shown);
  else fprintf(stderr, "%s: unknown option '%s'\n", prog, shown);
  fputs(usage_, stderr);
  return NH_EXIT_USAGE;
}

int nh_cli_bad_argument(const char *prog, const char *usage_, const char *arg) {
  fprintf(stderr, "%s: unexpected argument '%s'\n%s", prog, arg, usage_);
  return NH_EXIT_USAGE;
}

int nh_cli_out_of_memory(const char *prog) {
  fprintf(stderr, "%s: out of memory\n", prog);
  return NH_EXIT_FAILED;
}
