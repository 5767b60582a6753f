/* nhbench_checked, the nhbench the tests run, is nhbench with tests/heap_guard.c's allocator, and
 * this check at exit: every block of nhbench's own code must have been freed by then, on every
 * path the tests take (success, refusal, failed run). A block left over, like a write past a
 * block's end (the guard aborts), fails whichever test ran the command: the process exits with
 * EX_SOFTWARE (70), never one of nhbench's own statuses (0, 1, 2), and says why on stderr. Off
 * under AddressSanitizer, whose LeakSanitizer checks the same at exit. */
#include <stdio.h>
#include <stdlib.h>
#include <sysexits.h>
#include <unistd.h>

#include "tests/heap_guard.h"

static void check_blocks_at_exit(void) {
  const long live = test_live_blocks();
  if (live > 0) {
    fprintf(stderr, "heap guard: %ld block%s of nhbench's code not freed at exit\n", live, live == 1 ? "" : "s");
    fflush(NULL);
    _exit(EX_SOFTWARE);
  }
}

/* Before main, so that the check runs after every handler registered later (HDF5's own). */
__attribute__((constructor)) static void arm_check_at_exit(void) { atexit(check_blocks_at_exit); }
