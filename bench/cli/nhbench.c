/* nhbench: run studies of nonholonomic integrators, inspect and export their results. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/cli/cli.h"
#include "core/text.h"

#ifdef NHBENCH_VERSION_FILE
#include NHBENCH_VERSION_FILE /* generated at build time: scripts/version.cmake */
#endif
#ifndef NHBENCH_VERSION
#define NHBENCH_VERSION "unknown" /* the build defines it (CMakeLists.txt, git describe) */
#endif

/* The commands, in the order `nhbench --help` lists them: the usage is made from this table, so a
 * command cannot be dispatched without being documented. */
static const struct {
  const char *name, *synopsis, *summary;
  int (*fn)(int argc, char **argv);
} commands[] = {
    {"run", "run SPEC.cfg [--output OUT.h5] [--threads N] [--set PATH=VALUE ...] [--check-orders]",
     "run a study spec (see README.md, \"Study specs\") into an HDF5 file", nh_cli_run},
    {"list", "list [systems|methods|observables|kinds|settings] [NAME]",
     "every system, method, observable, study kind and spec setting with its documentation", nh_cli_list},
    {"info", "info FILE.h5", "readable summary of a results file (orders, drift, cost)", nh_cli_info},
    {"export", "export FILE.h5 TABLE [options]", "whitespace-separated table for gnuplot (nhbench export --help)",
     nh_cli_export},
    {"report", "report CLAIMS... [--results DIR] [--output DIR] [--strict]",
     "measure claims from results files into REPORT.md, claims.csv (studies/paper/README.md)", nh_cli_report},
    {"check-system", "check-system SYSTEM [--points N] [--set PATH=VALUE ...]",
     "check a system's derivatives and kernels (a spec's, a plugin's, a registered one's)", nh_cli_check_system},
};
#define NCOMMANDS (int)(sizeof commands / sizeof commands[0])

static int find_command(const char *name) {
  for (int i = 0; i < NCOMMANDS; i++)
    if (strcmp(name, commands[i].name) == 0) return i;
  return -1;
}

/* The usage text, made once from the table (a static buffer: main runs one command and exits). */
static const char *usage(void) {
  static char text[NH_TEXT_LONG];
  if (text[0]) return text;
  nh_text_append(text, sizeof text, "", "usage: nhbench [--help | --version] COMMAND [ARGS]\n\ncommands:\n");
  for (int i = 0; i < NCOMMANDS; i++)
    /* A long synopsis puts the summary on a line of its own, under the short ones' column. */
    if (strlen(commands[i].synopsis) < 22)
      nh_text_append(text, sizeof text, "", "  %-22s%s\n", commands[i].synopsis, commands[i].summary);
    else
      nh_text_append(text, sizeof text, "", "  %s\n  %22s%s\n", commands[i].synopsis, "", commands[i].summary);
  nh_text_append(text, sizeof text, "", "%s",
                 "  help [COMMAND]        this text, or the usage of COMMAND (= nhbench COMMAND --help)\n"
                 "\n"
                 "options:\n"
                 "  -h, --help            this text\n"
                 "  -V, --version         the version of nhbench\n"
                 "\n"
                 "Every command takes --help. Exit status: 0 success, 1 a failed run (or a failed\n"
                 "--check-orders), 2 bad usage or bad input.\n"
                 "\n"
                 "Methods are named as in rk4, nh_newmark(beta=0.1,beta2=0.1,alpha=0.5,constraint=point),\n"
                 "adjoint_pair(nh_newmark(alpha=0)), triple_jump(nh_newmark(alpha=0.5)), herglotz2(forcing=midpoint).\n"
                 "Old spellings (disc=14|15, force=0|1) are still read, with a deprecation note.\n");
  return text;
}

static int unknown_command(const char *name) {
  fprintf(stderr, "nhbench: unknown command '%s'\n\n%s", name, usage());
  return NH_EXIT_USAGE;
}

/* nhbench help [COMMAND]: the usage, or COMMAND --help. */
static int help(int argc, char **argv) {
  if (argc < 2) return fputs(usage(), stdout), NH_EXIT_OK;
  if (argc > 2) return nh_cli_bad_argument("nhbench help", usage(), argv[2]);
  int c = find_command(argv[1]);
  if (c < 0) return unknown_command(argv[1]);
  char *args[] = {argv[1], "--help", NULL};
  nh_cli_getopt_reset();
  return commands[c].fn(2, args);
}

/* OMP_NUM_THREADS checked as --threads is (1..1024 per level, comma-separated): the OpenMP runtime
 * would try to start 100000 threads and crash. 0, or NH_EXIT_USAGE with a message. */
static int check_thread_environment(void) {
  const char *env = getenv("OMP_NUM_THREADS");
  if (!env || !*env) return 0; /* set empty: unset, as the OpenMP runtime reads it */
  for (const char *p = env;;) {
    char *end;
    errno = 0;
    const long t = strtol(p, &end, 10);
    if (end == p || errno || t < 1 || t > 1024 || (*end && *end != ',')) {
      fprintf(stderr, "nhbench: OMP_NUM_THREADS='%.40s' is not a whole number in 1..1024 (or a list of them)\n", env);
      return NH_EXIT_USAGE;
    }
    if (!*end) return 0;
    p = end + 1; /* a comma: another level's count must follow */
  }
}

int main(int argc, char **argv) {
  if (check_thread_environment()) return NH_EXIT_USAGE;
  /* Past a file-size limit (ulimit -f) a write should fail with EFBIG, which the results writer
   * reports (exit 1, the temporary file removed, an older file kept), not kill the process. */
  signal(SIGXFSZ, SIG_IGN);
  static const struct option longopts[] = {
      {"help", no_argument, NULL, 'h'}, {"version", no_argument, NULL, 'V'}, {0}};
  int c;
  /* '+': stop at the command; its options are its own. ':': no messages from getopt itself. */
  while ((c = getopt_long(argc, argv, "+:hV", longopts, NULL)) != -1) {
    switch (c) {
    case 'h': return fputs(usage(), stdout), NH_EXIT_OK;
    case 'V': return printf("nhbench %s\n", NHBENCH_VERSION), NH_EXIT_OK;
    default: return nh_cli_bad_option("nhbench", usage(), c, argv);
    }
  }
  if (optind >= argc) return fputs(usage(), stderr), NH_EXIT_USAGE;
  const char *cmd = argv[optind];
  if (strcmp(cmd, "help") == 0) return help(argc - optind, argv + optind);
  int k = find_command(cmd);
  if (k < 0) return unknown_command(cmd);
  /* Under mpirun (the cluster build) `run` spreads its tasks over the ranks. */
  const int mpi = strcmp(cmd, "run") == 0;
  if (mpi) nh_cli_mpi_begin(&argc, &argv);
  int sub_argc = argc - optind;
  char **sub_argv = argv + optind;
  nh_cli_getopt_reset();
  const int rc = commands[k].fn(sub_argc, sub_argv);
  return mpi ? nh_cli_mpi_end(rc) : rc;
}
