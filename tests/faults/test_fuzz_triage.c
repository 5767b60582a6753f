/* scripts/fuzz_triage.sh, which decides whether `make fuzz` (and so CI) fails: it replays each
 * saved finding with the target and names whose code the report's first frame is in. Here the
 * target is a shell script that prints a made-up sanitizer report, so every verdict is known. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/helpers.h"

#define SRC NHBENCH_SOURCE_DIR

#define NHBENCH_FRAME "    #0 0x55d1 in nh_results_read " SRC "/results/read.c:120:9\n"
#define HDF5_FRAME "    #0 0x7f01 in H5HG_read (/usr/lib/x86_64-linux-gnu/libhdf5_serial.so.103+0x1b2)\n"
#define RUNTIME_FRAME "    #1 0x4a10 in __asan_memcpy (/work/build-fuzz/fuzz_results+0x4a10)\n"
#define OTHER_FRAME "    #2 0x7f02 in frobnicate (/usr/lib/libfoo.so.1+0x10)\n"

/* A fake target in a new directory DIR: on its k-th run (k = 1, 2, …) it prints REPORT if k ≥
 * FIRST_REPORT (0: never), nothing otherwise; one finding DIR/findings/crash-a. Runs the triage;
 * its exit status, its output into out. */
static int triage(const char *report, int first_report, char *out, size_t outlen) {
  char dir[] = "/tmp/nh-triage-XXXXXX";
  cr_assert(mkdtemp(dir));
  char path[256], text[4096], cmd[1024];
  snprintf(path, sizeof path, "%s/report", dir);
  test_write_file(path, report);
  snprintf(path, sizeof path, "%s/target", dir);
  snprintf(text, sizeof text,
           "#!/bin/sh\n"
           "d=%s; n=$(($(cat $d/runs 2>/dev/null || echo 0) + 1)); echo $n > $d/runs\n"
           "[ %d -gt 0 ] && [ $n -ge %d ] && cat $d/report >&2\n"
           "exit 0\n",
           dir, first_report, first_report);
  test_write_file(path, text);
  snprintf(cmd, sizeof cmd, "chmod +x %s/target && mkdir %s/findings && echo x > %s/findings/crash-a", dir, dir, dir);
  cr_assert_eq(system(cmd), 0);
  snprintf(cmd, sizeof cmd, "sh %s/scripts/fuzz_triage.sh %s/target %s/findings -timeout=10 2>&1", SRC, dir, dir);
  int status = test_run_command(cmd, out, outlen);
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  cr_assert_eq(system(cmd), 0);
  return status;
}

static char out[4096];

/* Each report (on the first replay) and the triage's verdict: its exit status and its line. */
static const struct {
  const char *what, *report;
  int status;
  const char *line;
} verdicts[] = {
    {"a memory error in nhbench fails",
     "==1==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x6\n" RUNTIME_FRAME NHBENCH_FRAME, 1,
     "fuzz: crash-a: nhbench: ERROR: AddressSanitizer: heap-buffer-overflow\n"},
    {"a crash in HDF5 is listed and passes",
     "==1==ERROR: AddressSanitizer: SEGV on unknown address\n" RUNTIME_FRAME HDF5_FRAME, 0,
     "fuzz: crash-a: HDF5: ERROR: AddressSanitizer: SEGV\n"},
    {"a block nhbench freed (or allocated) makes it nhbench's",
     "==1==ERROR: AddressSanitizer: heap-use-after-free on address 0x6\n" HDF5_FRAME
     "0x6 is located 0 bytes inside of 8-byte region\nfreed by thread T0 here:\n" NHBENCH_FRAME,
     1, "fuzz: crash-a: nhbench: ERROR: AddressSanitizer: heap-use-after-free\n"},
    {"a report of no known code fails",
     "==1==ERROR: AddressSanitizer: SEGV on unknown address\n" RUNTIME_FRAME OTHER_FRAME, 1,
     "fuzz: crash-a: unknown: ERROR: AddressSanitizer: SEGV\n"},
    {"undefined behaviour in nhbench fails",
     SRC "/results/read.c:88:5: runtime error: signed integer overflow\n" NHBENCH_FRAME, 1,
     "fuzz: crash-a: nhbench: runtime error: signed integer overflow\n"},
};

Test(fuzz_triage, each_verdict) {
  for (size_t i = 0; i < sizeof verdicts / sizeof *verdicts; i++) {
    cr_expect_eq(triage(verdicts[i].report, 1, out, sizeof out), verdicts[i].status, "%s:\n%s", verdicts[i].what, out);
    cr_expect(strstr(out, verdicts[i].line), "%s: no line %s in:\n%s", verdicts[i].what, verdicts[i].line, out);
  }
}

/* The fourth replay is the last: a report then still places the finding; none by then lists it. */
Test(fuzz_triage, a_finding_is_replayed_up_to_four_times) {
  const char *report = "==1==ERROR: AddressSanitizer: SEGV on unknown address\n" NHBENCH_FRAME;
  cr_assert_eq(triage(report, 4, out, sizeof out), 1, "%s", out);
  cr_assert(strstr(out, "fuzz: crash-a: nhbench: ERROR: AddressSanitizer: SEGV\n"), "%s", out);
  cr_assert_eq(triage(report, 5, out, sizeof out), 0, "%s", out);
  cr_assert(strstr(out, "fuzz: crash-a: not reproduced: no report in 4 replays (kept, not failing)\n"), "%s", out);
}

Test(fuzz_triage, no_findings_pass_silently) {
  char cmd[512];
  snprintf(cmd, sizeof cmd, "d=$(mktemp -d) && sh %s/scripts/fuzz_triage.sh /bin/false $d 2>&1; rc=$?; rm -rf $d; exit $rc",
           SRC);
  cr_assert_eq(test_run_command(cmd, out, sizeof out), 0, "%s", out);
  cr_assert_str_empty(out);
}
