/* The nhbench subcommands (bench/cli/cli_*.c), dispatched by bench/cli/nhbench.c. Each returns the
 * process exit status: 0 success, 1 a failed run, 2 bad usage or bad input. Each parses its
 * arguments with getopt_long; argv[0] is the command's name ("run"), argv[1..] its arguments. */
#ifndef NH_CLI_H
#define NH_CLI_H

#include <getopt.h>

enum { NH_EXIT_OK = 0, NH_EXIT_FAILED = 1, NH_EXIT_USAGE = 2 };

int nh_cli_run(int argc, char **argv);
int nh_cli_list(int argc, char **argv);
int nh_cli_info(int argc, char **argv);
int nh_cli_export(int argc, char **argv);
int nh_cli_report(int argc, char **argv);
int nh_cli_check_system(int argc, char **argv);

/* The cluster build (-DNHBENCH_MPI=ON): `run` starts MPI with nh_cli_mpi_begin, and ranks other
 * than 0 stay silent (rank 0 speaks for all, once); nh_cli_mpi_end gives every rank rank 0's exit
 * status, ends MPI and returns that status. Without MPI: nothing, and rc itself. */
void nh_cli_mpi_begin(int *argc, char ***argv);
int nh_cli_mpi_end(int rc);

/* Starts a fresh getopt_long scan (each command scans its own argv after nhbench's); also turns
 * getopt's own messages off: the commands report with nh_cli_bad_option. Optstrings start with
 * ':' so that a missing argument returns ':'. */
void nh_cli_getopt_reset(void);

/* For getopt_long's '?' (unknown option) or ':' (missing argument) at argv[optind - 1]: prints
 * "PROG: unknown option '--x'" or "PROG: option '--x' needs an argument" and the usage on
 * stderr; returns NH_EXIT_USAGE. */
int nh_cli_bad_option(const char *prog, const char *usage, int c, char **argv);

/* "PROG: unexpected argument 'ARG'" and the usage on stderr; returns NH_EXIT_USAGE. */
int nh_cli_bad_argument(const char *prog, const char *usage, const char *arg);

/* "PROG: out of memory" on stderr; returns NH_EXIT_FAILED. */
int nh_cli_out_of_memory(const char *prog);

#endif
