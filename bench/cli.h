/* The nhbench subcommands (bench/cli_*.c), dispatched by bench/nhbench.c. Each returns the
 * process exit status: 0 success, 1 a failed run, 2 bad usage or bad input. */
#ifndef NH_CLI_H
#define NH_CLI_H

int nh_cli_run(int argc, char **argv);
int nh_cli_list(int argc, char **argv);
int nh_cli_info(int argc, char **argv);
int nh_cli_export(int argc, char **argv);

#endif
