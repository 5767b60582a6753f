/* The allocator of nhbench's own code under test (tests/helpers.h): the test binary and
 * nhbench_checked, the nhbench the tests run, are linked with --wrap=malloc/calloc/realloc/free
 * (and the GSL objects nhbench allocates), so every block of nhbench's code goes through here:
 * counted (tests/contracts/test_no_alloc.c: steps allocate nothing), failed on request (the out-of-memory
 * paths), guarded by a pattern past its end, and tracked until freed (tests/faults/test_leaks.c; and
 * tests/leak_at_exit.c, which nhbench_checked ends with, with a check of its descriptors). */
#include <errno.h>
#include <gsl/gsl_integration.h>
#include <gsl/gsl_odeiv2.h>
#include <gsl/gsl_rng.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/heap_guard.h"

void *__real_malloc(size_t size);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t size);
void __real_free(void *p);

/* While test_counting is set, every allocation of nhbench's code adds 1 to test_allocations. */
int test_counting;
long test_allocations;

/* Fault injection for the out-of-memory paths (tests/faults/test_study_failures.c): while it is > 0,
 * each allocation counts it down, and the one that brings it to 0 fails (returns NULL). Atomic:
 * the runners allocate from OpenMP threads too. */
long test_fail_allocation;
int *test_fail_fired; /* if set, becomes 1 when the allocation fails (memory shared with a parent) */
static int fail_now(void) {
  if (__atomic_load_n(&test_fail_allocation, __ATOMIC_SEQ_CST) > 0 &&
      __atomic_sub_fetch(&test_fail_allocation, 1, __ATOMIC_SEQ_CST) == 0) {
    if (test_fail_fired) *test_fail_fired = 1;
    errno = ENOMEM; /* as malloc does (POSIX) */
    return 1;
  }
  return 0;
}

/* Guard bytes. A block one element too small (a size off by one, a 2n written as n) usually
 * leaves every result intact and corrupts a neighbour silently; only make asan would see it.
 * So each block of nhbench's own code carries a header (its size and a magic word) and GUARD
 * bytes of a known pattern after its end, checked when it is freed or reallocated: a write past
 * the end aborts the test in the ordinary build too. Blocks from elsewhere (libc, HDF5) have no
 * magic word and go to the real free. Off under AddressSanitizer, which checks every access. */
#if defined(__SANITIZE_ADDRESS__)
#define NH_HEAP_GUARD 0
#else
#define NH_HEAP_GUARD 1
#endif
enum { HEAD = 16, GUARD = 16, PATTERN = 0xa5 };
static const uint64_t MAGIC = 0x6e68626e63686b31u, FREED = 0x6e68626e63686b30u;

static unsigned char *guard_of(unsigned char *head) {
  return head + HEAD + ((uint64_t *)head)[0];
}
/* Blocks of ours allocated and not yet freed (tests/faults/test_leaks.c); -1 without the guard. */
static long live_blocks;
long test_live_blocks(void) { return NH_HEAP_GUARD ? __atomic_load_n(&live_blocks, __ATOMIC_SEQ_CST) : -1; }

static void *guarded(unsigned char *head, size_t size) {
  if (!head) return NULL;
  ((uint64_t *)head)[0] = size, ((uint64_t *)head)[1] = MAGIC;
  memset(guard_of(head), PATTERN, GUARD);
  return head + HEAD;
}
/* The block's header if it is one of ours (checked), NULL if it came from elsewhere. */
static unsigned char *head_of(void *p) {
  unsigned char *head = (unsigned char *)p - HEAD;
  const uint64_t magic = ((uint64_t *)head)[1];
  if (magic == FREED) {
    fprintf(stderr, "heap guard: block at %p freed twice\n", p);
    abort();
  }
  if (magic != MAGIC) return NULL;
  const unsigned char *g = guard_of(head);
  for (int i = 0; i < GUARD; i++)
    if (g[i] != PATTERN) {
      fprintf(stderr, "heap guard: block of %llu bytes at %p written past its end (byte %d)\n",
              (unsigned long long)((uint64_t *)head)[0], p, i);
      abort();
    }
  return head;
}

void *__wrap_malloc(size_t size) {
  test_allocations += test_counting;
  if (fail_now()) return NULL;
  if (!NH_HEAP_GUARD) return __real_malloc(size);
  void *p = size > SIZE_MAX - HEAD - GUARD ? NULL : guarded(__real_malloc(HEAD + size + GUARD), size);
  if (p) __atomic_add_fetch(&live_blocks, 1, __ATOMIC_SEQ_CST);
  return p;
}
void *__wrap_calloc(size_t n, size_t size) {
  test_allocations += test_counting;
  if (fail_now()) return NULL;
  if (!NH_HEAP_GUARD) return __real_calloc(n, size);
  if (size && n > (SIZE_MAX - HEAD - GUARD) / size) return NULL;
  void *p = guarded(__real_calloc(1, HEAD + n * size + GUARD), n * size);
  if (p) __atomic_add_fetch(&live_blocks, 1, __ATOMIC_SEQ_CST);
  return p;
}
void *__wrap_realloc(void *p, size_t size) {
  test_allocations += test_counting;
  if (fail_now()) return NULL;
  unsigned char *head = NH_HEAP_GUARD && p ? head_of(p) : NULL;
  if (!NH_HEAP_GUARD || (p && !head)) return __real_realloc(p, size);
  if (size > SIZE_MAX - HEAD - GUARD) return NULL;
  void *q = guarded(__real_realloc(head ? head : p, HEAD + size + GUARD), size);
  if (q && !p) __atomic_add_fetch(&live_blocks, 1, __ATOMIC_SEQ_CST); /* realloc(NULL, n): a new block */
  return q;
}
void __wrap_free(void *p) {
  unsigned char *head = NH_HEAP_GUARD && p ? head_of(p) : NULL;
  if (head) ((uint64_t *)head)[1] = FREED, __atomic_sub_fetch(&live_blocks, 1, __ATOMIC_SEQ_CST);
  __real_free(head ? head : p);
}

/* The GSL objects nhbench's own code allocates fail on the same count as its mallocs: their
 * NULL paths (an ensemble's random stream, the reference solver's driver, one-step's quadrature
 * table) are out-of-memory paths like any other. Each one made counts as a live block until it is
 * freed (GSL's own mallocs happen in the shared library, out of the wrapper's sight): one never
 * freed is a leak like any other. */
static void *counted(void *object) {
  if (object) __atomic_add_fetch(&live_blocks, 1, __ATOMIC_SEQ_CST);
  return object;
}
static void uncounted(const void *object) {
  if (object) __atomic_sub_fetch(&live_blocks, 1, __ATOMIC_SEQ_CST);
}
gsl_rng *__real_gsl_rng_alloc(const gsl_rng_type *T);
gsl_rng *__wrap_gsl_rng_alloc(const gsl_rng_type *T) { return fail_now() ? NULL : counted(__real_gsl_rng_alloc(T)); }
void __real_gsl_rng_free(gsl_rng *r);
void __wrap_gsl_rng_free(gsl_rng *r) { uncounted(r), __real_gsl_rng_free(r); }
gsl_odeiv2_driver *__real_gsl_odeiv2_driver_alloc_y_new(const gsl_odeiv2_system *sys, const gsl_odeiv2_step_type *T,
                                                         double hstart, double epsabs, double epsrel);
gsl_odeiv2_driver *__wrap_gsl_odeiv2_driver_alloc_y_new(const gsl_odeiv2_system *sys, const gsl_odeiv2_step_type *T,
                                                         double hstart, double epsabs, double epsrel) {
  return fail_now() ? NULL : counted(__real_gsl_odeiv2_driver_alloc_y_new(sys, T, hstart, epsabs, epsrel));
}
void __real_gsl_odeiv2_driver_free(gsl_odeiv2_driver *d);
void __wrap_gsl_odeiv2_driver_free(gsl_odeiv2_driver *d) { uncounted(d), __real_gsl_odeiv2_driver_free(d); }
gsl_integration_glfixed_table *__real_gsl_integration_glfixed_table_alloc(size_t n);
gsl_integration_glfixed_table *__wrap_gsl_integration_glfixed_table_alloc(size_t n) {
  return fail_now() ? NULL : counted(__real_gsl_integration_glfixed_table_alloc(n));
}
void __real_gsl_integration_glfixed_table_free(gsl_integration_glfixed_table *t);
void __wrap_gsl_integration_glfixed_table_free(gsl_integration_glfixed_table *t) {
  uncounted(t), __real_gsl_integration_glfixed_table_free(t);
}
