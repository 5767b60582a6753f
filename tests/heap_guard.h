/* The allocation hooks of tests/heap_guard.c (the test binary and nhbench_checked wrap malloc,
 * calloc, realloc and free): while test_fail_allocation is > 0 each allocation of nhbench's own
 * code counts it down, and the one that brings it to 0 fails; test_fail_fired, if set, becomes 1
 * then. test_live_blocks: the blocks of ours not yet freed (-1 under AddressSanitizer, whose
 * LeakSanitizer checks leaks). While test_counting is set, each allocation adds 1 to
 * test_allocations. */
#ifndef NH_TEST_HEAP_GUARD_H
#define NH_TEST_HEAP_GUARD_H

extern long test_fail_allocation;
extern int *test_fail_fired;
long test_live_blocks(void);
extern int test_counting;
extern long test_allocations;

#endif
