/* nhbench_checked, the nhbench the tests run, is nhbench with tests/heap_guard.c's allocator, and
 * this check at exit: every block of nhbench's own code must have been freed by then, and every
 * file descriptor it opened closed, on every path the tests take (success, refusal, failed run).
 * A block or descriptor left over, like a write past a block's end (the guard aborts), fails
 * whichever test ran the command: the process exits with EX_SOFTWARE (70), never one of
 * nhbench's own statuses (0, 1, 2), and says why on stderr. The block check is off under
 * AddressSanitizer, whose LeakSanitizer checks the same at exit. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sysexits.h>
#include <unistd.h>

#include "tests/heap_guard.h"

enum { FDS = 1024 };
static char open_at_start[FDS];

static int is_open(int fd) { return fcntl(fd, F_GETFD) != -1; }

static void check_at_exit(void) {
  const long live = test_live_blocks();
  int bad = 0;
  if (live > 0) {
    fprintf(stderr, "heap guard: %ld block%s of nhbench's code not freed at exit\n", live, live == 1 ? "" : "s");
    bad = 1;
  }
  for (int fd = 0; fd < FDS; fd++)
    if (!open_at_start[fd] && is_open(fd)) {
      fprintf(stderr, "heap guard: file descriptor %d left open at exit\n", fd);
      bad = 1;
    }
  if (bad) {
    fflush(NULL);
    _exit(EX_SOFTWARE);
  }
}

/* Before main, so that the check runs after every handler registered later (HDF5's own). */
__attribute__((constructor)) static void arm_check_at_exit(void) {
  for (int fd = 0; fd < FDS; fd++) open_at_start[fd] = (char)is_open(fd);
  atexit(check_at_exit);
}
