/* SIMD-lockstep versions of the four floors of bench/performance/floors.c on the chaotic particle
 * (rk4, nh_newmark, nh_rattle, herglotz2): L = 4 or 8 trajectories stepped together, each lane
 * computing exactly the numbers of the scalar floor; L = 1, one trajectory at a time through the
 * same code, is the reference that tells lockstep's gain from the code's own
 * (bench/performance/lockstep.c). */
#ifndef NH_BENCH_LOCKSTEP_H
#define NH_BENCH_LOCKSTEP_H

#include "bench/performance/floors.h"

/* For L lanes: the lanes' state nh_lockstepL in structure-of-arrays layout, component i of lane l
 * at q[i][l], so that one component of every lane is one contiguous run (vector loads and
 * stores); nh_rattle's carried force, λ and z as in nh_floor_state (a method leaves alone what it
 * does not define).
 *   nh_lockstepL_pack, _unpack: the lanes from L floor states (q, v, force, λ, z) and back.
 *   nh_lockstepL_rk4: nh_floor_rk4 on every lane.
 *   nh_lockstepL_nh_newmark: nh_floor_nh_newmark(beta, beta2) on every lane, its Newton
 *     iterations added to iterations[l]; 0, or -1 where the floor on some lane would return -1.
 *   nh_lockstepL_nh_rattle: nh_floor_nh_rattle on every lane, from the force that
 *     nh_floor_rattle_init set in the packed states.
 *   nh_lockstepL_herglotz2: nh_floor_herglotz2 on every lane, adding each lane's Newton iterations
 *     to iterations[l]; 0, or -1 where the floor on some lane would return -1. */
#define NH_LOCKSTEP_DECLARE(L)                                                                                         \
  typedef struct {                                                                                                     \
    _Alignas(64) double q[5][L];                                                                                       \
    double v[5][L], force[5][L], lambda[L], z[L];                                                                      \
  } nh_lockstep##L;                                                                                                    \
  void nh_lockstep##L##_pack(nh_lockstep##L *p, const nh_floor_state *s);                                              \
  void nh_lockstep##L##_unpack(const nh_lockstep##L *p, nh_floor_state *s);                                            \
  void nh_lockstep##L##_rk4(nh_lockstep##L *p, double h, long steps);                                                  \
  int nh_lockstep##L##_nh_newmark(nh_lockstep##L *p, double beta, double beta2, double h, long steps,                  \
                                  long iterations[L]);                                                                 \
  void nh_lockstep##L##_nh_rattle(nh_lockstep##L *p, double h, long steps);                                            \
  int nh_lockstep##L##_herglotz2(nh_lockstep##L *p, double h, long steps, long iterations[L]);

NH_LOCKSTEP_DECLARE(1)
NH_LOCKSTEP_DECLARE(4)
NH_LOCKSTEP_DECLARE(8)

/* The difference the lockstep comparisons take: |a − b|, 0 only when a and b are the same bits; a
 * NaN against anything but its own bits is infinitely far, +0 against −0 the smallest difference
 * there is (DBL_TRUE_MIN). */
double nh_lockstep_gap(double a, double b);

#endif
