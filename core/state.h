/* The state every layer passes around: fixed-size so steps allocate nothing. */
#ifndef NH_STATE_H
#define NH_STATE_H

#define NH_MAX_N 8    /* configuration dimension n */
#define NH_MAX_K 4    /* number of constraints k */
#define NH_MAX_CARRY 16 /* doubles a method carries from step to step */

#include <stddef.h>

/* Time, positions, velocities, the Herglotz action z, the step's multiplier, and what a method
 * carries from one step to the next (RATTLE's λ_k, a two-step method's previous position), which
 * only the method that set it (its init) reads. */
typedef struct {
  double t;
  double q[NH_MAX_N];
  double v[NH_MAX_N];
  double z;
  /* The multiplier of the step that produced this state, in the +Aᵀλ convention of nh_multiplier;
   * only meaningful for methods that declare one (nh_integrator_type.lambda_time). */
  double lambda[NH_MAX_K];
  /* A method's carried state. Each method declares its layout as a struct of double arrays in its
   * own file (e.g. struct { double lambda[NH_MAX_K]; double force[NH_MAX_N]; }) and reaches a field
   * with NH_CARRY(x, layout, field): the struct only supplies offsets into this array, so no object
   * is ever accessed through another type (no aliasing question), and NH_CARRY_FITS checks the size
   * at compile time. */
  double carry[NH_MAX_CARRY];
} nh_state;

/* The field FIELD of carry layout TYPE in state *X, as a pointer to its first double. */
#define NH_CARRY(x, type, field) ((x)->carry + offsetof(type, field) / sizeof(double))
#define NH_CARRY_FITS(type) \
  _Static_assert(sizeof(type) <= NH_MAX_CARRY * sizeof(double), #type " fits in nh_state.carry")

#endif
