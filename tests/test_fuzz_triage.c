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

static const char *nhbench_frame = "    #0 0x55d1 in nh_results_read " SRC "/results/read.c:120:9\n";
static const char *hdf5_frame = "    #0 0x7f01 in H5HG_read (/usr/lib/x86_64-linux-gnu/libhdf5_serial.so.103+0x1b2)\n";
static const char *runtime_frame = "    #1 0x4a10 in __asan_memcpy (/work/build-fuzz/fuzz_results+0x4a10)\n";
static const char *other_frame = "    #2 0x7f02 in frobnicate (/usr/lib/libfoo.so.1+0x10)\n";

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

static char report[4096], out[4096];

Test(fuzz_triage, a_memory_error_in_nhbench_fails) {
  snprintf(report, sizeof report, "==1==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x6\n%s%s",
           runtime_frame, nhbench_frame);
  cr_assert_eq(triage(report, 1, out, sizeof out), 1, "%s", out);
  cr_assert(strstr(out, "fuzz: crash-a: nhbench: ERROR: AddressSanitizer: heap-buffer-overflow\n"), "%s", out);
}

Test(fuzz_triage, a_crash_in_hdf5_is_listed_and_passes) {
  snprintf(report, sizeof report, "==1==ERROR: AddressSanitizer: SEGV on unknown address\n%s%s", runtime_frame,
           hdf5_frame);
  cr_assert_eq(triage(report, 1, out, sizeof out), 0, "%s", out);
  cr_assert(strstr(out, "fuzz: crash-a: HDF5: ERROR: AddressSanitizer: SEGV\n"), "%s", out);
}

Test(fuzz_triage, a_block_nhbench_allocated_makes_it_nhbench_s) {
  snprintf(report, sizeof report,
           "==1==ERROR: AddressSanitizer: heap-use-after-free on address 0x6\n%s"
           "0x6 is located 0 bytes inside of 8-byte region\nfreed by thread T0 here:\n%s",
           hdf5_frame, nhbench_frame);
  cr_assert_eq(triage(report, 1, out, sizeof out), 1, "%s", out);
  cr_assert(strstr(out, "fuzz: crash-a: nhbench: "), "%s", out);
}

Test(fuzz_triage, a_report_of_no_known_code_fails) {
  snprintf(report, sizeof report, "==1==ERROR: AddressSanitizer: SEGV on unknown address\n%s%s", runtime_frame,
           other_frame);
  cr_assert_eq(triage(report, 1, out, sizeof out), 1, "%s", out);
  cr_assert(strstr(out, "fuzz: crash-a: unknown: "), "%s", out);
}

Test(fuzz_triage, undefined_behaviour_in_nhbench_fails) {
  snprintf(report, sizeof report, "%s/results/read.c:88:5: runtime error: signed integer overflow\n%s", SRC,
           nhbench_frame);
  cr_assert_eq(triage(report, 1, out, sizeof out), 1, "%s", out);
  cr_assert(strstr(out, "fuzz: crash-a: nhbench: runtime error: signed integer overflow\n"), "%s", out);
}

/* The fourth replay is the last: a report then still places the finding; none by then lists it. */
Test(fuzz_triage, a_finding_is_replayed_up_to_four_times) {
  snprintf(report, sizeof report, "==1==ERROR: AddressSanitizer: SEGV on unknown address\n%s", nhbench_frame);
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
