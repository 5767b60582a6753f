/* Lockstep lanes (core/lanes.h): moving states in and out, and the instruction set the lane loops
 * run with. */
#include "core/lanes.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

void nh_lanes_put(nh_lanes *X, int l, const nh_state *x) {
  X->t[l] = x->t, X->z[l] = x->z;
  for (int i = 0; i < NH_MAX_N; i++) X->q[i][l] = x->q[i], X->v[i][l] = x->v[i];
  for (int a = 0; a < NH_MAX_K; a++) X->lambda[a][l] = x->lambda[a];
  for (int c = 0; c < NH_MAX_CARRY; c++) X->carry[c][l] = x->carry[c];
}

void nh_lanes_get(const nh_lanes *X, int l, nh_state *x) {
  x->t = X->t[l], x->z = X->z[l];
  for (int i = 0; i < NH_MAX_N; i++) x->q[i] = X->q[i][l], x->v[i] = X->v[i][l];
  for (int a = 0; a < NH_MAX_K; a++) x->lambda[a] = X->lambda[a][l];
  for (int c = 0; c < NH_MAX_CARRY; c++) x->carry[c] = X->carry[c][l];
}

static const char *const isa_names[NH_ISA_COUNT] = {"sse2", "avx2", "avx512"};

const char *nh_isa_name(nh_isa isa) { return isa >= 0 && isa < NH_ISA_COUNT ? isa_names[isa] : "?"; }

int nh_isa_supported(nh_isa isa) {
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  switch (isa) {
  case NH_ISA_SSE2:
    return 1;
  case NH_ISA_AVX2:
    return __builtin_cpu_supports("avx2");
  case NH_ISA_AVX512:
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl"); /* NH_LANES_AVX512 */
  default:
    return 0;
  }
#else
  return isa == NH_ISA_SSE2; /* one variant: the compiler's default */
#endif
}

/* Threads may decide at once: they decide alike. */
_Atomic int nh_lanes_isa_chosen = -1;

/* The widest the CPU has, or NHBENCH_ISA's when it has that one. */
static nh_isa decide(void) {
  const char *want = getenv("NHBENCH_ISA");
  for (int i = 0; want && i < NH_ISA_COUNT; i++)
    if (strcmp(want, isa_names[i]) == 0 && nh_isa_supported((nh_isa)i)) return (nh_isa)i;
  for (int i = NH_ISA_COUNT - 1; i > 0; i--)
    if (nh_isa_supported((nh_isa)i)) return (nh_isa)i;
  return NH_ISA_SSE2;
}

nh_isa nh_lanes_isa_decide(void) {
  const nh_isa isa = decide();
  atomic_store_explicit(&nh_lanes_isa_chosen, (int)isa, memory_order_relaxed);
  return isa;
}

int nh_lanes_use_isa(nh_isa isa) {
  if (!nh_isa_supported(isa)) return -1;
  atomic_store_explicit(&nh_lanes_isa_chosen, (int)isa, memory_order_relaxed);
  return 0;
}
