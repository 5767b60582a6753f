/* Lockstep lanes (issue 51): NH_LANES trajectories of one method on one system stepped together,
 * their states in structure-of-arrays layout (component i of lane l at q[i][l]), so that one
 * component of every lane is one contiguous run that a vector instruction loads and stores.
 *
 * Every lane computes exactly the numbers the scalar path computes for its trajectory: the lane
 * loops perform the same IEEE operations in the same order on each lane (no -ffast-math, no
 * contraction into FMAs: the project compiles with -std=c11 -ffp-contract=off, and no lane code
 * reassociates a sum), so results are the same bits with lanes or without, whatever the width of
 * the vectors. The loops are written once (an always-inline body over the lanes, `#pragma omp simd`)
 * and compiled for three instruction sets, chosen at run time (NH_LANES_ISA_VARIANTS below). */
#ifndef NH_CORE_LANES_H
#define NH_CORE_LANES_H

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "core/state.h"

/* Lanes per group: 8 doubles are one AVX-512 vector, two AVX2 ones, four SSE2 ones. */
#define NH_LANES 8

/* Arrays in lane layout, entry i of lane l at x[i · NH_LANES + l]: entry i's run of lanes, and entry
 * i of lane l. */
#define NH_LANE_ROW(x, i) (&(x)[(i)*NH_LANES])
#define NH_LANE_AT(x, i, l) ((x)[(i)*NH_LANES + (l)])

/* For a lane array that one function declares and others' lane loops read: each entry's run of
 * lanes then starts a 64-byte line, so that no AVX-512 load of it spans two (the stack itself is
 * aligned to 16 bytes only). */
#define NH_LANES_ALIGNED _Alignas(64)

/* Zeros into `rows` runs of lanes from x, as the lane loops' stores: in the lane variants
 * (NH_LANES_ISA_VARIANTS: no memset made of zero stores) GCC writes them with vectors of the
 * variant's width, where a memset of a run was 16-byte stores at AVX2. */
static inline void nh_lanes_zero_rows(double *x, int rows) {
  for (int r = 0; r < rows; r++)
    for (int l = 0; l < NH_LANES; l++) NH_LANE_AT(x, r, l) = 0;
}

/* All ones where on is nonzero, else zero: a mask for nh_lanes_pick. */
static inline uint64_t nh_lanes_mask(int on) { return on ? ~(uint64_t)0 : 0; }

/* a where mask is all ones, b where it is zero, chosen bit by bit: a select in a lane loop that GCC
 * vectorizes for AVX2 and SSE2, whose vectors have no mask registers. Written as `mask ? a : b`
 * where a is arithmetic that only that branch uses, GCC computes a under the condition, and under
 * -ftrapping-math it may not then compute it on every lane: the loop stays scalar. Here a and b are
 * computed on every lane, and the result is one of the two, bit for bit. */
static inline double nh_lanes_pick(uint64_t mask, double a, double b) {
  uint64_t ua, ub;
  memcpy(&ua, &a, sizeof ua), memcpy(&ub, &b, sizeof ub);
  const uint64_t r = (ua & mask) | (ub & ~mask);
  double out;
  memcpy(&out, &r, sizeof out);
  return out;
}

/* NH_LANES states (nh_state's fields, lane by lane). */
typedef struct {
  _Alignas(64) double t[NH_LANES];
  _Alignas(64) double q[NH_MAX_N][NH_LANES];
  _Alignas(64) double v[NH_MAX_N][NH_LANES];
  _Alignas(64) double z[NH_LANES];
  _Alignas(64) double lambda[NH_MAX_K][NH_LANES];
  _Alignas(64) double carry[NH_MAX_CARRY][NH_LANES];
} nh_lanes;

/* Lane l of X from x, and back. */
void nh_lanes_put(nh_lanes *X, int l, const nh_state *x);
void nh_lanes_get(const nh_lanes *X, int l, nh_state *x);

/* The instruction sets the lane loops are compiled for, in increasing width. */
typedef enum { NH_ISA_SSE2, NH_ISA_AVX2, NH_ISA_AVX512, NH_ISA_COUNT } nh_isa;
/* The one the lane loops use: the widest this CPU has, or the one NHBENCH_ISA names (sse2, avx2,
 * avx512) when the CPU has it; decided at the first call. Inline: every lane pass asks it. */
extern _Atomic int nh_lanes_isa_chosen; /* -1 until decided; then the nh_isa in use */
nh_isa nh_lanes_isa_decide(void);
static inline nh_isa nh_lanes_isa(void) {
  const int isa = atomic_load_explicit(&nh_lanes_isa_chosen, memory_order_relaxed);
  return isa >= 0 ? (nh_isa)isa : nh_lanes_isa_decide();
}
/* Makes the lane loops use isa from now on (the tests and the benchmarks compare them): 0, or -1
 * when this CPU does not have it. */
int nh_lanes_use_isa(nh_isa isa);
int nh_isa_supported(nh_isa isa);
const char *nh_isa_name(nh_isa isa);

/* Defines `static void NAME PARAMS`, which runs NAME##_lanes ARGS (a `static inline
 * NH_LANES_INLINE void` function: the lane loops' body) compiled for the instruction set
 * nh_lanes_isa() chose. The body is inlined into one copy per instruction set, where GCC
 * vectorizes its `#pragma omp simd` loops for that set. */
#define NH_LANES_INLINE __attribute__((always_inline))
/* The AVX-512 variants' target: with VL, 256-bit code has the 32 vector registers of AVX-512 (with F
 * alone, 16: a lane loop that GCC lays out in 256-bit vectors spilled to the stack). nh_isa_supported
 * asks the CPU for both. */
#define NH_LANES_AVX512 "avx512f,avx512vl"
/* The AVX2 and SSE2 variants' loop unrolling. There a lane loop is two or four vectors long, and
 * GCC's -O2 keeps it a loop of that many iterations: a sum over rows in a lane array (s[l] += …)
 * then goes through memory, each term waiting for the last term's store. -fpeel-loops lets GCC
 * unroll such loops whole, the array in registers; the same operations. Paired runs of 64-trajectory
 * ensembles on the chaotic particle: nh_newmark(0.1, 0.1, ½) 0.69 of the time at AVX2 and 0.72 at
 * SSE2, rk4 0.91 and 0.93, herglotz2 0.92 and 0.88. Not for AVX-512, where a lane loop is one vector
 * and rk4 took 1.11 of the time with it.
 * Every variant (NH_LANES_STORES): no memset or memcpy made of a lane loop's stores. GCC's
 * -ftree-loop-distribute-patterns turned the zero entries that a kernel writes lane by lane (the
 * chaotic particle's constraint Jacobian, nh_newmark's Newton matrix) into `rep stos`, whose
 * start-up cost more than the kernel's other work; without it they are vector stores. Paired runs
 * at AVX2: nh_newmark(0.1, 0.1, ½) 0.90 of the time, herglotz2 0.88, rk4 and nh_rattle unchanged.
 * GCC only (clang has no optimize attribute). */
#if defined(__GNUC__) && !defined(__clang__)
#define NH_LANES_STORES __attribute__((optimize("no-tree-loop-distribute-patterns")))
#define NH_LANES_UNROLLED __attribute__((optimize("peel-loops", "no-tree-loop-distribute-patterns")))
#else
#define NH_LANES_STORES
#define NH_LANES_UNROLLED
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#define NH_LANES_ISA_VARIANTS(NAME, PARAMS, ARGS)                                                                      \
  __attribute__((target(NH_LANES_AVX512))) NH_LANES_STORES static void NAME##_avx512 PARAMS { NAME##_lanes ARGS; }     \
  __attribute__((target("avx2"))) NH_LANES_UNROLLED static void NAME##_avx2 PARAMS { NAME##_lanes ARGS; }              \
  NH_LANES_UNROLLED static void NAME##_sse2 PARAMS { NAME##_lanes ARGS; }                                              \
  static void NAME PARAMS {                                                                                            \
    switch (nh_lanes_isa()) {                                                                                          \
    case NH_ISA_AVX512:                                                                                                \
      NAME##_avx512 ARGS;                                                                                              \
      return;                                                                                                          \
    case NH_ISA_AVX2:                                                                                                  \
      NAME##_avx2 ARGS;                                                                                                \
      return;                                                                                                          \
    default:                                                                                                           \
      NAME##_sse2 ARGS;                                                                                                \
    }                                                                                                                  \
  }
#else
#define NH_LANES_ISA_VARIANTS(NAME, PARAMS, ARGS)                                                                      \
  static void NAME PARAMS { NAME##_lanes ARGS; }
#endif

/* Runs F(ARGS..., n, k) (F an NH_LANES_INLINE function whose last parameters are `const int n, const
 * int k`) with n and k constants for the shapes of most systems with lane kernels here (5 coordinates
 * and 1 constraint: the chaotic particle; 3 and 1: the particle, the CVT, the knife edge), so that GCC
 * lays out the lane loops for them (about 6 % less time per nh_newmark step on the chaotic
 * particle); other shapes run with n and k as they are. The same operations either way. */
#define NH_LANES_SHAPED(n, k, F, ...)                                                                                  \
  do {                                                                                                                 \
    if ((n) == 5 && (k) == 1) F(__VA_ARGS__, 5, 1);                                                                    \
    else if ((n) == 3 && (k) == 1) F(__VA_ARGS__, 3, 1);                                                               \
    else F(__VA_ARGS__, (n), (k));                                                                                     \
  } while (0)

#endif
