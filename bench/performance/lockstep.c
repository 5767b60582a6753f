/* SIMD-lockstep versions of two floors of bench/performance/floors.c on the chaotic particle, rk4 (explicit)
 * and herglotz2 (Newton): the stretch item of the performance issue, ensembles stepped L
 * trajectories at a time. The lanes' state is kept in structure-of-arrays layout (lockstep.h); a
 * step is a loop over the lanes whose body is the floor's computation for one lane, marked
 * `#pragma omp simd` (the project compiles with -fopenmp) so that GCC vectorizes it at -O2 with no
 * -march flag and no intrinsics: on the default x86-64 target a vector holds two doubles, so L = 4
 * and L = 8 are two and four vectors per operation.
 *
 * Every lane computes exactly the scalar floor's numbers, so that bench.c's `lockstep` table can
 * require the final states to be equal, not close: the same IEEE operations in the same order (no
 * -ffast-math, and no contraction into FMAs: -std=c11 turns it off, so even -mavx2 -mfma leaves
 * the lanes bit-identical, where -std=gnu11 -mfma moves them 1e-13 off the floor), the divisions
 * where the floor divides, and μ's constant entries 1, 0, 0 multiplied in where the floor
 * multiplies them (0·x is −0 for negative x, and x + 0 turns −0 into +0: dropping a "zero" term
 * can flip a zero's sign, and the default state has y1 = 0). herglotz2's Newton iterations run
 * masked: all lanes iterate until every lane has met the floor's stopping rule (newton_update),
 * and a lane that has met it is frozen, its unknowns no longer updated and its iterations no
 * longer counted, so each lane takes the floor's iterations, step by step.
 *
 * What -fopt-info-vec reports for this file at the project's flags (-O2 -fopenmp, GCC 12.2):
 * "optimized: loop vectorized using 16 byte vectors" for each of the four lane loops (rk4's;
 * herglotz2's predictor, Newton iteration and step's end) at L = 4 and at L = 8 (at L = 1 there
 * is no loop left to vectorize), and nothing for the outer loops over steps and iterations or for
 * pack/unpack (strided loads from the floors' structs, outside the timed loops). Each of these
 * forms made it report "couldn't vectorize loop" on the way, hence the style here:
 *   - loops over the five components inside a lane loop ("loop nest containing two or more
 *     consecutive inner loops"): the components are written out, as a struct's fields;
 *   - a call not inlined ("statement clobbers memory"; a step helper called from every L's
 *     kernel was not) or an out-parameter (the local becomes an array in memory): the lane
 *     loops' bodies hold the step, the helpers are small and return by value;
 *   - arithmetic that only one arm of a lane's select needs ("control flow in loop": GCC moves it
 *     into a branch, and under the default -ftrapping-math does not execute a branch's arithmetic
 *     for every lane): every value is computed on every lane, then selected;
 *   - a frozen lane's unknowns written back unchanged (GCC drops that store and is left with a
 *     conditional one) and comparisons turned into 64-bit integers ("relevant stmt not
 *     supported"): herglotz2 writes its unknowns to a second buffer and keeps its lane flags and
 *     counts in doubles.
 *
 * The kernels are written once for L lanes: this file includes itself with L = 1, 4 and 8, so
 * that L is a compile-time constant in every lane loop. L = 1, one trajectory at a time through
 * the same code, separates what lockstep gains (the vectors, and the loop overhead shared by the
 * lanes) from what this code gains on its own: the floors keep their vectors in arrays and call
 * functions that GCC does not inline, these kernels keep a lane's numbers in registers, which
 * makes them faster even on one lane. Nothing here allocates. */

#ifndef L /* ---- once: one lane's computations, then the kernels for L = 1, 4 and 8 ---------- */

#include "bench/performance/lockstep.h"

#include <float.h>
#include <math.h>
#include <string.h>

double nh_lockstep_gap(double a, double b) {
  if (memcmp(&a, &b, sizeof a) == 0) return 0;
  const double d = fabs(a - b);
  return isnan(d) ? INFINITY : d > 0 ? d : DBL_TRUE_MIN;
}

enum { X, Y1, Y2, Z1, Z2, DIM }; /* the components, and their number */

/* One lane's q, v or any 5-vector, components by name: a lane loop reads a lane's numbers into
 * these and computes as the floor does on its arrays. */
typedef struct {
  double x, y1, y2, z1, z2;
} vec5;

#define LOAD(a, l) ((vec5){(a)[X][l], (a)[Y1][l], (a)[Y2][l], (a)[Z1][l], (a)[Z2][l]})
#define STORE(a, l, w)                                                                                               \
  ((a)[X][l] = (w).x, (a)[Y1][l] = (w).y1, (a)[Y2][l] = (w).y2, (a)[Z1][l] = (w).z1, (a)[Z2][l] = (w).z2)

static inline vec5 add(vec5 a, vec5 b) {
  return (vec5){a.x + b.x, a.y1 + b.y1, a.y2 + b.y2, a.z1 + b.z1, a.z2 + b.z2};
}

static inline vec5 sub(vec5 a, vec5 b) {
  return (vec5){a.x - b.x, a.y1 - b.y1, a.y2 - b.y2, a.z1 - b.z1, a.z2 - b.z2};
}

/* a + c b, as the floor's a[i] + c * b[i]. */
static inline vec5 axpy(vec5 a, double c, vec5 b) {
  return (vec5){a.x + c * b.x, a.y1 + c * b.y1, a.y2 + c * b.y2, a.z1 + c * b.z1, a.z2 + c * b.z2};
}

static inline vec5 neg(vec5 a) {
  return (vec5){-a.x, -a.y1, -a.y2, -a.z1, -a.z2};
}

static inline vec5 scale(double c, vec5 a) {
  return (vec5){c * a.x, c * a.y1, c * a.y2, c * a.z1, c * a.z2};
}

static inline double dot(vec5 a, vec5 b) {
  return a.x * b.x + a.y1 * b.y1 + a.y2 * b.y2 + a.z1 * b.z1 + a.z2 * b.z2;
}

/* on ? a : b componentwise, a and b already computed (see the top on selects). */
static inline vec5 pick(int on, vec5 a, vec5 b) {
  return (vec5){on ? a.x : b.x, on ? a.y1 : b.y1, on ? a.y2 : b.y2, on ? a.z1 : b.z1, on ? a.z2 : b.z2};
}

/* ---- the system for one lane, as floors.c writes it ----------------------------------------- */

static inline double potential(vec5 q) {
  const double x = q.x, y1 = q.y1, y2 = q.y2, z1 = q.z1, z2 = q.z2;
  return 0.5 * (x * x + y1 * y1 + y2 * y2 + z1 * z1 + z2 * z2 + z1 * z1 * z2 * z2 + y1 * y1 * z1 * z1 +
                y2 * y2 * z2 * z2);
}

static inline vec5 gradient(vec5 q) {
  const double x = q.x, y1 = q.y1, y2 = q.y2, z1 = q.z1, z2 = q.z2;
  return (vec5){x, y1 + y1 * z1 * z1, y2 + y2 * z2 * z2, z1 + z1 * z2 * z2 + y1 * y1 * z1,
                z2 + z1 * z1 * z2 + y2 * y2 * z2};
}

/* μ(q) = (1, 0, 0, y1, y2) enters only through these three, each the floor's arithmetic with μ's
 * entries written in (1·a is a exactly; 0·a is kept, see the top). μ(q)·a: */
static inline double mu_dot(double y1, double y2, vec5 a) {
  return a.x + 0 * a.y1 + 0 * a.y2 + y1 * a.z1 + y2 * a.z2;
}

/* μ(q)·μ(q) = 1·1 + 0·0 + 0·0 + y1² + y2², its constant part exactly 1. */
static inline double mu_norm2(double y1, double y2) {
  return 1 + y1 * y1 + y2 * y2;
}

/* μ(q) c. */
static inline vec5 mu_times(double y1, double y2, double c) {
  return (vec5){c, 0 * c, 0 * c, y1 * c, y2 * c};
}

/* −g + μλ with the index-reduced multiplier λ at (q, v), g = ∇V(q): nh_floor_acceleration. */
static inline vec5 acceleration(vec5 q, vec5 v, vec5 g) {
  const double lambda = (mu_dot(q.y1, q.y2, g) - (v.y1 * v.z1 + v.y2 * v.z2)) / mu_norm2(q.y1, q.y2);
  const vec5 m = mu_times(q.y1, q.y2, lambda);
  return (vec5){-g.x + m.x, -g.y1 + m.y1, -g.y2 + m.y2, -g.z1 + m.z1, -g.z2 + m.z2};
}

/* ---- herglotz2 for one lane (nh_floor_herglotz2): X = (q1, Λ = h²λ) -------------------------- */

/* fmax(m, t) for m not NaN (t NaN keeps m, as fmax does), in a form GCC vectorizes. */
static inline double larger(double m, double t) {
  return t > m ? t : m;
}

/* |(a, a5)|∞ in the order x, y1, y2, z1, z2, a5, from 0: newton_update's loop. */
static inline double max_abs(vec5 a, double a5) {
  double m = larger(0, fabs(a.x));
  m = larger(m, fabs(a.y1));
  m = larger(m, fabs(a.y2));
  m = larger(m, fabs(a.z1));
  m = larger(m, fabs(a.z2));
  return larger(m, fabs(a5));
}

/* newton_update's stopping rule: |δ|∞ = dx small against |x|∞ = xn, or stagnating (more than
 * half the previous |δ|) at a looser size. */
static inline int newton_done(double dx, double xn, double prev) {
  return (dx <= 1e-14 * (1 + xn)) | ((dx > 0.5 * prev) & (dx <= 1e-9 * (1 + xn)));
}

/* ---- the kernels, for L = 1, 4 and 8 --------------------------------------------------------- */

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)

#define L 1 /* the reference: one trajectory at a time, nothing to vectorize */
#include "bench/performance/lockstep.c"
#undef L
#define L 4
#include "bench/performance/lockstep.c"
#undef L
#define L 8
#include "bench/performance/lockstep.c"
#undef L

#else /* ---- the kernels for L lanes (this file, included by itself with L defined) ---------- */

#define LANES CAT(nh_lockstep, L)

void CAT(LANES, _pack)(LANES *p, const nh_floor_state *s) {
  for (int l = 0; l < L; l++) {
    const vec5 q = {s[l].q[X], s[l].q[Y1], s[l].q[Y2], s[l].q[Z1], s[l].q[Z2]};
    const vec5 v = {s[l].v[X], s[l].v[Y1], s[l].v[Y2], s[l].v[Z1], s[l].v[Z2]};
    STORE(p->q, l, q);
    STORE(p->v, l, v);
    p->lambda[l] = s[l].lambda, p->z[l] = s[l].z;
  }
}

void CAT(LANES, _unpack)(const LANES *p, nh_floor_state *s) {
  for (int l = 0; l < L; l++) {
    const vec5 q = LOAD(p->q, l), v = LOAD(p->v, l);
    s[l].q[X] = q.x, s[l].q[Y1] = q.y1, s[l].q[Y2] = q.y2, s[l].q[Z1] = q.z1, s[l].q[Z2] = q.z2;
    s[l].v[X] = v.x, s[l].v[Y1] = v.y1, s[l].v[Y2] = v.y2, s[l].v[Z1] = v.z1, s[l].v[Z2] = v.z2;
    s[l].lambda = p->lambda[l], s[l].z = p->z[l];
  }
}

void CAT(LANES, _rk4)(LANES *p, double h, long steps) {
  for (long k = 0; k < steps; k++) {
#pragma omp simd
    for (int l = 0; l < L; l++) { /* nh_floor_rk4's loop body */
      const vec5 q = LOAD(p->q, l), v = LOAD(p->v, l), k1v = acceleration(q, v, gradient(q));
      const vec5 qs2 = axpy(q, h / 2, v), k2q = axpy(v, h / 2, k1v), k2v = acceleration(qs2, k2q, gradient(qs2));
      const vec5 qs3 = axpy(q, h / 2, k2q), k3q = axpy(v, h / 2, k2v), k3v = acceleration(qs3, k3q, gradient(qs3));
      const vec5 qs4 = axpy(q, h, k3q), k4q = axpy(v, h, k3v), k4v = acceleration(qs4, k4q, gradient(qs4));
      STORE(p->q, l, axpy(q, h / 6, add(axpy(axpy(v, 2, k2q), 2, k3q), k4q)));
      STORE(p->v, l, axpy(v, h / 6, add(axpy(axpy(k1v, 2, k2v), 2, k3v), k4v)));
    }
  }
}

/* nh_floor_herglotz2, X = (q1, Λ = h²λ), the lane loops' bodies its parts. */
int CAT(LANES, _herglotz2)(LANES *p, double h, long steps, long iterations[L]) {
  const double hh = 0.5 * h * h;
  /* Each lane's Newton iterations, counted in a double (exact up to 2^53): GCC does not vectorize
   * turning a lane's comparison into a 64-bit integer for SSE2. */
  double count[L] = {0};
  for (long k = 0; k < steps; k++) {
    /* The unknowns (X's q1 part, Λ), the residual's constant part h v − h²/2 ∇V(q), each lane's
     * previous |δ| and whether it still iterates (1, or 0 once frozen). */
    double Xq[2][DIM][L], Lambda[L], cst[DIM][L], prev[L], on[L];
    /* X's q1 part is read from one buffer and written to the other, the two swapped after each
     * iteration: written back in place, a frozen lane's unchanged value would let GCC drop its
     * store, and a conditional store is not vectorized for SSE2. */
    double(*x_in)[L] = Xq[0], (*x_out)[L] = Xq[1];
#pragma omp simd
    for (int l = 0; l < L; l++) { /* the predictor's Taylor step */
      const vec5 q = LOAD(p->q, l), v = LOAD(p->v, l), g0 = gradient(q);
      STORE(x_in, l, axpy(axpy(q, h, v), hh, acceleration(q, v, g0)));
      STORE(cst, l, sub(scale(h, v), scale(hh, g0)));
      Lambda[l] = 0, prev[l] = INFINITY, on[l] = 1;
    }
    for (int it = 0;; it++) {
      if (it == 50) return -1; /* some lane has not converged: the floor fails there */
      double running = 0, failed = 0;
#pragma omp simd reduction(+ : running, failed)
      for (int l = 0; l < L; l++) {
        /* floors.c's iteration: R = cst − Δq − μ0 Λ, G = μ(q̄)·Δq, δ from the Schur complement of
         * [−I −μ0; Jgᵀ 0] (Jg = μ(q̄) + ½(Dμ)ᵀΔq: μ(q̄)'s 0 entries plus ½Δz). */
        const vec5 q = LOAD(p->q, l), x = LOAD(x_in, l), dq = sub(x, q), qb = axpy(q, 0.5, dq);
        const vec5 R = sub(sub(LOAD(cst, l), dq), mu_times(q.y1, q.y2, Lambda[l]));
        const vec5 Jg = {1, 0 + 0.5 * dq.z1, 0 + 0.5 * dq.z2, qb.y1, qb.y2};
        const double G = mu_dot(qb.y1, qb.y2, dq), s0 = mu_dot(q.y1, q.y2, Jg), dL = -(G + dot(Jg, R)) / s0;
        const vec5 d = sub(neg(R), mu_times(q.y1, q.y2, dL));
        /* newton_update, computed for every lane and kept for the running ones: a lane that has
         * stopped keeps its unknowns and its count, what the extra iterations computed for it is
         * dropped. next = done ? 0 : run rather than run && !done: the latter would let GCC skip
         * the test on frozen lanes, moving its arithmetic into a branch (see the top). */
        const vec5 xn = sub(x, d);
        const double Ln = Lambda[l] - dL, dx = max_abs(d, dL), run = on[l];
        const double next = newton_done(dx, max_abs(xn, Ln), prev[l]) ? 0 : run;
        STORE(x_out, l, pick(run != 0, xn, x));
        Lambda[l] = run != 0 ? Ln : Lambda[l];
        prev[l] = next != 0 ? dx : prev[l];
        count[l] += run;
        failed += ((run != 0) & (s0 == 0)) ? 1 : 0;
        on[l] = next;
        running += next;
      }
      double(*t)[L] = x_in;
      x_in = x_out, x_out = t;
      if (failed) return -1;
      if (!running) break;
    }
#pragma omp simd
    for (int l = 0; l < L; l++) { /* the step's end: v1 projected with μ(q1), z by the discrete action, λ */
      const vec5 q = LOAD(p->q, l), x = LOAD(x_in, l), dq = sub(x, q), g1 = gradient(x);
      const vec5 w = {dq.x / h, dq.y1 / h, dq.y2 / h, dq.z1 / h, dq.z2 / h}; /* the floor's dq[i] / h */
      const vec5 p1 = sub(w, scale(0.5 * h, g1));
      double T = 0;
      T += 0.5 * w.x * w.x;
      T += 0.5 * w.y1 * w.y1;
      T += 0.5 * w.y2 * w.y2;
      T += 0.5 * w.z1 * w.z1;
      T += 0.5 * w.z2 * w.z2;
      const double y = mu_dot(x.y1, x.y2, p1) / mu_norm2(x.y1, x.y2);
      p->z[l] += h * (T - 0.5 * (potential(q) + potential(x)));
      STORE(p->q, l, x);
      STORE(p->v, l, sub(p1, mu_times(x.y1, x.y2, y)));
      p->lambda[l] = -Lambda[l] / (h * h) - y / h;
    }
  }
  for (int l = 0; l < L; l++) iterations[l] += (long)count[l];
  return 0;
}

#undef LANES
#endif
