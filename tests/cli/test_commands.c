/* The shell commands the tests run (popen, system) read no input. Criterion gives each test a pipe
 * as its standard input, which nobody writes: a command that read it (a defect that takes the spec
 * from standard input, say) would wait for ever, and its test would end only at its timeout,
 * leaving the command behind. The test binary is linked with --wrap=popen --wrap=system, so every
 * command starts with its standard input on /dev/null; a command's own redirection (`run - < spec`,
 * `<&-`) still comes after and wins. Nor does a command outlive its test by long when it loops (a
 * defect in a step loop, say): Criterion's timeout ends the test, not the command, so each process
 * a command starts may use COMMAND_CPU_SECONDS of CPU time, more than any test's whole timeout on
 * two threads. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/helpers.h"

FILE *__real_popen(const char *command, const char *type);
int __real_system(const char *command);

enum { NO_INPUT_MAX = 1 << 14 };
#define COMMAND_CPU_SECONDS "600"
static const char no_input[] = "exec </dev/null; ulimit -t " COMMAND_CPU_SECONDS "; ";

/* command after no_input in buf; NULL if it does not fit. */
static const char *without_input(char *buf, const char *command) {
  if (strlen(command) + sizeof no_input > NO_INPUT_MAX) return NULL;
  return strcat(strcpy(buf, no_input), command);
}

FILE *__wrap_popen(const char *command, const char *type) {
  char buf[NO_INPUT_MAX];
  const char *c = without_input(buf, command);
  return c ? __real_popen(c, type) : NULL;
}

int __wrap_system(const char *command) {
  char buf[NO_INPUT_MAX];
  if (!command) return __real_system(NULL); /* "is there a shell?" */
  const char *c = without_input(buf, command);
  return c ? __real_system(c) : -1;
}

/* A command that reads its standard input gets end-of-file at once (cat prints nothing and ends),
 * through popen and system alike; its own redirection still applies. */
Test(commands, read_no_input, .timeout = 30) {
  char out[256];
  cr_expect_eq(test_run_command("cat; echo done", out, sizeof out), 0);
  cr_expect_str_eq(out, "done\n");
  cr_expect_eq(system("cat >/dev/null"), 0);
  cr_expect_eq(test_run_command("echo given | cat", out, sizeof out), 0);
  cr_expect_str_eq(out, "given\n");
  cr_expect_eq(test_run_command("cat < /dev/zero | head -c 3 | wc -c", out, sizeof out), 0);
  cr_expect_str_eq(out, "3\n");
}

/* Each process a command starts has a CPU-time limit: a command that loops for ever is killed. */
Test(commands, have_a_cpu_time_limit, .timeout = 30) {
  char out[256];
  cr_expect_eq(test_run_command("ulimit -t", out, sizeof out), 0);
  cr_expect_str_eq(out, COMMAND_CPU_SECONDS "\n");
  cr_expect_eq(test_run_command("sh -c 'ulimit -t'", out, sizeof out), 0);
  cr_expect_str_eq(out, COMMAND_CPU_SECONDS "\n", "a child of the command");
  cr_expect_neq(system("exec 2>/dev/null; sh -c 'ulimit -t 1; while :; do :; done'"), 0, "the loop was not stopped");
}
