/* The state every layer passes around: fixed-size so steps allocate nothing. */
#ifndef NH_STATE_H
#define NH_STATE_H

#define NH_MAX_N 8    /* configuration dimension n */
#define NH_MAX_K 4    /* number of constraints k */
#define NH_MAX_AUX 16 /* per-method auxiliary state */

/* Time, positions, velocities, the Herglotz action z, and auxiliary per-method state (e.g.
 * RATTLE's multiplier λ_k, a two-step method's previous position), which only the method that set
 * it (its init) reads. */
typedef struct {
  double t;
  double q[NH_MAX_N];
  double v[NH_MAX_N];
  double z;
  /* The multiplier of the step that produced this state, in the +Aᵀλ convention of nh_multiplier;
   * only meaningful for methods that declare one (nh_integrator_type.lambda_time). */
  double lambda[NH_MAX_K];
  double aux[NH_MAX_AUX];
} nh_state;

#endif
