/* Hand-written kernels of rk4, nh_newmark, nh_rattle and herglotz2 on the chaotic particle, the
 * floors of `make bench` (bench/performance/floors.c). */
#ifndef NH_BENCH_FLOORS_H
#define NH_BENCH_FLOORS_H

/* The chaotic particle's state as the floors carry it: q, v, the step's multiplier (+μᵀλ sign, as
 * the harness stores it), nh_rattle's carried force and herglotz2's action z. */
typedef struct {
  double q[5], v[5], lambda, force[5], z;
} nh_floor_state;

/* s put on the constraint μ(q)·v = 0 by its x-velocity (the bench's starts). */
void nh_floor_onto_constraint(nh_floor_state *s);

/* The index-reduced acceleration a(q, v) = −∇V + μλ(q, v) (the ODE of rk4 and GSL's drivers). */
void nh_floor_acceleration(const double *q, const double *v, double *a);

void nh_floor_rk4(nh_floor_state *s, double h, long steps);
/* nh_newmark(beta, beta2, alpha=0.5) with constraint (14); returns the Newton iterations, or -1. */
long nh_floor_nh_newmark(nh_floor_state *s, double beta, double beta2, double h, long steps);
/* nh_rattle with λ0 from the continuous multiplier: nh_floor_rattle_init first. */
void nh_floor_rattle_init(nh_floor_state *s);
void nh_floor_nh_rattle(nh_floor_state *s, double h, long steps);
/* herglotz2 (no damping, no forcing on this system); returns the Newton iterations, or -1. */
long nh_floor_herglotz2(nh_floor_state *s, double h, long steps);

#endif
