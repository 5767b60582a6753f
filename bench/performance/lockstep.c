/* SIMD-lockstep versions of the four floors of bench/performance/floors.c on the chaotic particle, rk4
 * and nh_rattle (explicit), nh_newmark and herglotz2 (Newton): the stretch item of the performance
 * issue, ensembles stepped L trajectories at a time. The lanes' state is kept in structure-of-arrays
 * layout (lockstep.h); a
 * step is a loop over the lanes whose body is the floor's computation for one lane, marked
 * `#pragma omp simd` (the project compiles with -fopenmp) so that GCC vectorizes it at -O2 with no
 * -march flag and no intrinsics: on the default x86-64 target a vector holds two doubles, so L = 4
 * and L = 8 are two and four vectors per operation. The kernels are compiled again for AVX2 and
 * AVX-512 (GCC's target pragmas) and run at the instruction set the harness's lanes run at
 * (nh_lanes_isa(): the CPU's widest, or NHBENCH_ISA), so that `make bench` compares the harness's
 * lanes with a floor of the same vector width.
 *
 * Every lane computes exactly the scalar floor's numbers, so that bench.c's `lockstep` table can
 * require the final states to be equal, not close: the same IEEE operations in the same order (no
 * -ffast-math, and no contraction into FMAs: -std=c11 turns it off, so even -mavx2 -mfma leaves
 * the lanes bit-identical, where -std=gnu11 -mfma moves them 1e-13 off the floor), the divisions
 * where the floor divides, and μ's constant entries 1, 0, 0 multiplied in where the floor
 * multiplies them (0·x is −0 for negative x, and x + 0 turns −0 into +0: dropping a "zero" term
 * can flip a zero's sign, and the default state has y1 = 0). The Newton iterations of nh_newmark and
 * herglotz2 run masked: all lanes iterate until every lane has met the floor's stopping rule
 * (newton_update), and a lane that has met it is frozen, its unknowns no longer updated and its
 * iterations no longer counted, so each lane takes the floor's iterations, step by step.
 * nh_newmark solves its 7x7 Newton system as the floor does, by Gaussian elimination with partial
 * pivoting, on every lane at once (lu_solve): each lane chooses its own pivot rows by the floor's
 * rule (the largest |entry|, the first on ties) and eliminates with the floor's operations, so the
 * lanes of a set may exchange different rows; the rows are reached through pointers, exchanged
 * where every lane chose the same row (on the bench's ensemble, nearly always) and selected into
 * spare rows where the lanes differ.
 *
 * What -fopt-info-vec reports for this file at the project's flags (-O2 -fopenmp, GCC 12.2):
 * "optimized: loop vectorized using 16 byte vectors" for every lane loop of the steps at L = 4 and
 * at L = 8 (at L = 1 there is no loop left to vectorize): rk4's; nh_rattle's; herglotz2's
 * predictor, Newton iteration and step's end; nh_newmark's predictor, Newton system, update and
 * step's end, and lu_solve's lane loops (pivot search, zero-pivot count, the count of lanes choosing
 * a row, the row selects, the multipliers, the elimination, the back substitution). Nothing is
 * reported for the loops over steps, iterations, rows and columns around them, nor for pack/unpack
 * (strided loads from the floors' structs, outside the timed loops) or the iteration counts' copy
 * out. Each of these forms made it report "couldn't vectorize loop" on the way, hence the style
 * here:
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
 *     supported"): the Newton kernels write their unknowns to a second buffer and keep their lane
 *     flags and counts in doubles; lu_solve does the same with its pivot search's running
 *     choice, and writes a row exchange that only some lanes make into spare rows;
 *   - two selects on one comparison, one of them the larger of the compared values (`a > b ? i :
 *     r` beside `a > b ? a : b`: "control flow in loop"): lu_solve's pivot search takes the
 *     larger |entry| through `larger`, apart from the row's select.
 *
 * The kernels are written once for L lanes: this file includes itself with L = 1, 4 and 8, so
 * that L is a compile-time constant in every lane loop. L = 1, one trajectory at a time through
 * the same code, separates what lockstep gains (the vectors, and the loop overhead shared by the
 * lanes) from what this code gains on its own: the floors keep their vectors in arrays and call
 * functions that GCC does not inline, these kernels keep a lane's numbers in registers, which
 * makes them faster even on one lane. Nothing here allocates. */

#ifndef L /* ---- once: one lane's computations, then the kernels for L = 1, 4 and 8 ---------- */

#include "bench/performance/lockstep.h"
#include "core/lanes.h"

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

/* μ(q) itself, for nh_newmark's system, which multiplies it into more than these three forms: its
 * constant entries are compile-time constants there, which GCC folds only where the result is
 * exact whatever the other operand (1·a, never 0·a). */
static inline vec5 mu(vec5 q) { return (vec5){1, 0, 0, q.y1, q.y2}; }

/* a·b summed from 0, as the floors' `s = 0; s += a[i] * b[i]` loops (0 + −0 is +0). */
static inline double dot_from_0(vec5 a, vec5 b) {
  return 0 + a.x * b.x + a.y1 * b.y1 + a.y2 * b.y2 + a.z1 * b.z1 + a.z2 * b.z2;
}

/* The index-reduced multiplier λ at (q, v), g = ∇V(q): floors.c's multiplier. */
static inline double multiplier(vec5 q, vec5 v, vec5 g) {
  return (mu_dot(q.y1, q.y2, g) - (v.y1 * v.z1 + v.y2 * v.z2)) / mu_norm2(q.y1, q.y2);
}

/* −g + μλ with the index-reduced multiplier λ at (q, v), g = ∇V(q): nh_floor_acceleration. */
static inline vec5 acceleration(vec5 q, vec5 v, vec5 g) {
  const vec5 m = mu_times(q.y1, q.y2, multiplier(q, v, g));
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

/* ---- nh_newmark(β, β', α = ½) for one lane (nh_floor_nh_newmark): Y = (Δq, Λ0, Λ1) --------- */

enum { NM = 7 }; /* the unknowns, the rows of the Newton system */

/* The step's parameters: β, β', h and c = h²/2. */
typedef struct {
  double b, b2, h, c;
} newmark_par;

/* w = h v1 from the unknowns (newmark_system's w[i], the floor's arithmetic), g0 = ∇V(q0), g1 =
 * ∇V(q1), μ0 = μ(q0), μ1 = μ(q1). */
static inline vec5 newmark_w(newmark_par n, vec5 dq, vec5 g0, vec5 g1, vec5 m0, vec5 m1, double L0, double L1) {
  const double a = 2 * n.b2, b = 1 - 2 * n.b2;
  return sub(dq,
             sub(sub(scale(n.c, add(scale(a, g0), scale(b, g1))), scale(L0, scale(a, m0))), scale(L1, scale(b, m1))));
}

/* newton_update's |δ|∞ over the 7 unknowns, in their order. */
static inline double max_abs7(vec5 a, double a5, double a6) { return larger(max_abs(a, a5), fabs(a6)); }

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

#elif !defined(LS_ISA) /* ---- for L lanes (this file, included by itself with L defined) ---- */

#define LANES CAT(nh_lockstep, L)

void CAT(LANES, _pack)(LANES *p, const nh_floor_state *s) {
  for (int l = 0; l < L; l++) {
    const vec5 q = {s[l].q[X], s[l].q[Y1], s[l].q[Y2], s[l].q[Z1], s[l].q[Z2]};
    const vec5 v = {s[l].v[X], s[l].v[Y1], s[l].v[Y2], s[l].v[Z1], s[l].v[Z2]};
    STORE(p->q, l, q);
    const vec5 f = {s[l].force[X], s[l].force[Y1], s[l].force[Y2], s[l].force[Z1], s[l].force[Z2]};
    STORE(p->v, l, v);
    STORE(p->force, l, f);
    p->lambda[l] = s[l].lambda, p->z[l] = s[l].z;
  }
}

void CAT(LANES, _unpack)(const LANES *p, nh_floor_state *s) {
  for (int l = 0; l < L; l++) {
    const vec5 q = LOAD(p->q, l), v = LOAD(p->v, l), f = LOAD(p->force, l);
    s[l].q[X] = q.x, s[l].q[Y1] = q.y1, s[l].q[Y2] = q.y2, s[l].q[Z1] = q.z1, s[l].q[Z2] = q.z2;
    s[l].v[X] = v.x, s[l].v[Y1] = v.y1, s[l].v[Y2] = v.y2, s[l].v[Z1] = v.z1, s[l].v[Z2] = v.z2;
    s[l].force[X] = f.x, s[l].force[Y1] = f.y1, s[l].force[Y2] = f.y2, s[l].force[Z1] = f.z1, s[l].force[Z2] = f.z2;
    s[l].lambda = p->lambda[l], s[l].z = p->z[l];
  }
}

/* The kernels for each instruction set the harness's lanes are compiled for (core/lanes.h), so that
 * the lockstep floor runs at the one they run at (nh_lanes_isa(): the CPU's widest, or NHBENCH_ISA). */
#define LS_ISA _sse2
#include "bench/performance/lockstep.c"
#undef LS_ISA
#if defined(__x86_64__) && defined(__GNUC__)
#pragma GCC push_options
#pragma GCC target("avx2")
#define LS_ISA _avx2
#include "bench/performance/lockstep.c"
#undef LS_ISA
#pragma GCC pop_options
#pragma GCC push_options
#define LS_STRING_(x) #x
#define LS_STRING(x) LS_STRING_(x)
_Pragma(LS_STRING(GCC target(NH_LANES_AVX512))) /* the harness's lanes' (core/lanes.h) */
#define LS_ISA _avx512
#include "bench/performance/lockstep.c"
#undef LS_ISA
#pragma GCC pop_options
/* Kernel NAME of the instruction set nh_lanes_isa() chose. */
#define LS_KERNEL(NAME)                                                                                                \
  (nh_lanes_isa() == NH_ISA_AVX512 ? CAT(CAT(LANES, _avx512), NAME)                                                    \
   : nh_lanes_isa() == NH_ISA_AVX2 ? CAT(CAT(LANES, _avx2), NAME)                                                      \
                                   : CAT(CAT(LANES, _sse2), NAME))
#else
#define LS_KERNEL(NAME) CAT(CAT(LANES, _sse2), NAME)
#endif

void CAT(LANES, _rk4)(LANES *p, double h, long steps) { LS_KERNEL(_rk4)(p, h, steps); }
int CAT(LANES, _nh_newmark)(LANES *p, double beta, double beta2, double h, long steps, long iterations[L]) {
  return LS_KERNEL(_nh_newmark)(p, beta, beta2, h, steps, iterations);
}
void CAT(LANES, _nh_rattle)(LANES *p, double h, long steps) { LS_KERNEL(_nh_rattle)(p, h, steps); }
int CAT(LANES, _herglotz2)(LANES *p, double h, long steps, long iterations[L]) {
  return LS_KERNEL(_herglotz2)(p, h, steps, iterations);
}

#undef LS_KERNEL
#undef LANES

#else /* ---- the kernels for L lanes and one instruction set (LS_ISA: _sse2, _avx2, _avx512) ---- */

#define KERNEL(NAME) CAT(CAT(LANES, LS_ISA), NAME)

static void KERNEL(_rk4)(LANES *p, double h, long steps) {
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
static int KERNEL(_herglotz2)(LANES *p, double h, long steps, long iterations[L]) {
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

/* nh_floor_nh_rattle, the force carried in the lanes' state (nh_floor_rattle_init's, packed). */
static void KERNEL(_nh_rattle)(LANES *p, double h, long steps) {
  for (long k = 0; k < steps; k++) {
#pragma omp simd
    for (int l = 0; l < L; l++) { /* (9a), (9b), the half kick with ∇V(q1), the projection (9d)-(9e) */
      const vec5 v = sub(LOAD(p->v, l), scale(0.5 * h, LOAD(p->force, l))), q = axpy(LOAD(p->q, l), h, v);
      const vec5 g1 = gradient(q), vh = sub(v, scale(0.5 * h, g1));
      const double y = mu_dot(q.y1, q.y2, vh) / mu_norm2(q.y1, q.y2);
      STORE(p->q, l, q);
      STORE(p->v, l, sub(vh, mu_times(q.y1, q.y2, y)));
      STORE(p->force, l, add(g1, mu_times(q.y1, q.y2, 2 * y / h)));
      p->lambda[l] = -2 * y / h;
    }
  }
}

/* The rows a_out, b_out: b and a on the lanes whose pivot row is i, a and b elsewhere. Both are
 * written to other rows than they are read from: written back in place, a row that a lane keeps
 * would be a conditional store, which GCC does not vectorize (see the top). */
static inline void KERNEL(_exchange_where)(double *a_out, double *b_out, const double *a, const double *b,
                                           const double *row, double i) {
#pragma omp simd
  for (int l = 0; l < L; l++) {
    a_out[l] = row[l] == i ? b[l] : a[l];
    b_out[l] = row[l] == i ? a[l] : b[l];
  }
}

/* floors.c's solve(7, J, F) on every lane, J's rows in A[0..6] with F as their column NM, δ into
 * delta: each lane takes its own pivots (the largest |entry| of the column, the first on ties),
 * exchanges its own rows and eliminates with the floor's operations in the floor's order, so that
 * its δ is the floor's to the bit. The rows are reached through pointers: where every lane picks
 * the same pivot row the pointers are exchanged, where the lanes differ the two rows are selected
 * into A's two spare rows (A[7], A[8]), which take their place. The lane loops are innermost, each
 * one elementary operation of the floor's on every lane: a lane loop around the elimination would
 * hold loops (see the top). Returns the number of running lanes (on) that met a zero pivot, where
 * the floor fails; the others' zero pivots make infinities or NaNs that nobody keeps. */
static double KERNEL(_lu_solve)(double A[NM + 2][NM + 1][L], double delta[NM][L], const double on[L]) {
  double(*R[NM + 2])[L]; /* R[i]: row i after the exchanges so far; R[NM], R[NM + 1] spare */
  for (int i = 0; i < NM + 2; i++) R[i] = A[i];
  double failed = 0;
  for (int k = 0; k < NM; k++) {
    /* Each lane's pivot row so far (a double: see the top) and its |entry|, in two buffers as the
     * Newton unknowns are: updated in place, a lane's unchanged value would be a conditional store. */
    double rows[2][L], bigs[2][L], *row = rows[0], *big = bigs[0], *row_next = rows[1], *big_next = bigs[1];
#pragma omp simd
    for (int l = 0; l < L; l++) big[l] = fabs(R[k][k][l]), row[l] = k;
    for (int i = k + 1; i < NM; i++) {
      const double di = i;
#pragma omp simd
      for (int l = 0; l < L; l++) { /* the floor's fabs(J[i][k]) > fabs(J[p][k]): NaNs never chosen */
        const double a = fabs(R[i][k][l]), r = row[l], b = big[l];
        /* larger(b, a) apart: `a > b ? a : b` beside `a > b ? di : r` makes GCC branch (see the top). */
        const double most = larger(b, a);
        row_next[l] = a > b ? di : r;
        big_next[l] = most;
      }
      double *t = row;
      row = row_next, row_next = t, t = big, big = big_next, big_next = t;
    }
#pragma omp simd reduction(+ : failed)
    for (int l = 0; l < L; l++) failed += ((on[l] != 0) & (big[l] == 0)) ? 1 : 0;
    for (int i = k + 1; i < NM; i++) { /* row i exchanged with row k on the lanes that chose it */
      double chosen = 0;
#pragma omp simd reduction(+ : chosen)
      for (int l = 0; l < L; l++) chosen += row[l] == i ? 1 : 0;
      double(*t)[L] = R[k];
      if (chosen == L) R[k] = R[i], R[i] = t;
      if (chosen == 0 || chosen == L) continue;
      for (int j = k; j <= NM; j++) KERNEL(_exchange_where)(R[NM][j], R[NM + 1][j], R[k][j], R[i][j], row, i);
      R[k] = R[NM], R[NM] = t, t = R[i], R[i] = R[NM + 1], R[NM + 1] = t;
    }
    for (int i = k + 1; i < NM; i++) {
      double f[L];
#pragma omp simd
      for (int l = 0; l < L; l++) f[l] = R[i][k][l] / R[k][k][l];
      for (int j = k + 1; j <= NM; j++) { /* J's row, then F */
#pragma omp simd
        for (int l = 0; l < L; l++) R[i][j][l] -= f[l] * R[k][j][l];
      }
    }
  }
  for (int i = NM - 1; i >= 0; i--) { /* back substitution, j ascending as the floor sums */
    for (int j = i + 1; j < NM; j++) {
#pragma omp simd
      for (int l = 0; l < L; l++) R[i][NM][l] -= R[i][j][l] * delta[j][l];
    }
#pragma omp simd
    for (int l = 0; l < L; l++) delta[i][l] = R[i][NM][l] / R[i][i][l];
  }
  return failed;
}

/* J's row of one lane: five entries from a vec5 and the two multipliers' columns. */
#define STORE_ROW(a, l, w, a5, a6) (STORE(a, l, w), (a)[5][l] = (a5), (a)[6][l] = (a6))
/* F's seven entries into column NM of the rows of A. */
#define STORE_F(A, l, f, f5, f6)                                                                                       \
  ((A)[X][NM][l] = (f).x, (A)[Y1][NM][l] = (f).y1, (A)[Y2][NM][l] = (f).y2, (A)[Z1][NM][l] = (f).z1,                   \
   (A)[Z2][NM][l] = (f).z2, (A)[5][NM][l] = (f5), (A)[6][NM][l] = (f6))

/* nh_floor_nh_newmark, Y = (Δq, Λ0, Λ1), Newton masked per lane as herglotz2's. */
static int KERNEL(_nh_newmark)(LANES *p, double beta, double beta2, double h, long steps, long iterations[L]) {
  const newmark_par n = {beta, beta2, h, 0.5 * h * h};
  const double c = n.c, b1 = 1 - 2 * beta, b2 = 2 * beta, a1 = 2 * beta2, a2 = 1 - 2 * beta2;
  double count[L] = {0}; /* each lane's iterations, in a double as herglotz2's */
  for (long k = 0; k < steps; k++) {
    /* The unknowns in two buffers, read from one and written to the other (as herglotz2's q1),
     * ∇V(q0), the Newton system (J's rows with F, two spare rows: lu_solve) and its solution δ,
     * each lane's previous |δ| and whether it still iterates. */
    double Y[2][NM][L], G0[DIM][L], J[NM + 2][NM + 1][L], delta[NM][L], prev[L], on[L];
    double(*y_in)[L] = Y[0], (*y_out)[L] = Y[1];
#pragma omp simd
    for (int l = 0; l < L; l++) { /* the predictor: a Taylor step with the index-reduced multiplier */
      const vec5 q = LOAD(p->q, l), v = LOAD(p->v, l), g0 = gradient(q);
      STORE(G0, l, g0);
      STORE(y_in, l, axpy(scale(h, v), c, acceleration(q, v, g0)));
      y_in[5][l] = y_in[6][l] = c * multiplier(q, v, g0);
      prev[l] = INFINITY, on[l] = 1;
    }
    for (int it = 0;; it++) {
      if (it == 50) return -1; /* some lane has not converged: the floor fails there */
      double running = 0;
#pragma omp simd
      for (int l = 0; l < L; l++) { /* newmark_system: F and J at Y, the floor's arithmetic */
        const vec5 q0 = LOAD(p->q, l), v0 = LOAD(p->v, l), g0 = LOAD(G0, l), dq = LOAD(y_in, l);
        const double L0 = y_in[5][l], L1 = y_in[6][l];
        const vec5 q1 = add(q0, dq), g1 = gradient(q1), m0 = mu(q0), m1 = mu(q1), ma = mu(scale(0.5, add(q0, q1)));
        const double y1 = q1.y1, y2 = q1.y2, z1 = q1.z1, z2 = q1.z2;
        const double k13 = c * 2 * y1 * z1, k24 = c * 2 * y2 * z2, k34 = c * 2 * z1 * z2;
        /* K = c ∇²V(q1) − ∂(μ1ᵀΛ1)/∂q1 by rows, its zeros kept: J's (i == j) + 2β K[i][j] adds them. */
        const vec5 K0 = {c, 0, 0, 0, 0}, K1 = {0, c * (1 + z1 * z1), 0, k13, 0}, K2 = {0, 0, c * (1 + z2 * z2), 0, k24};
        const vec5 K3 = {0, k13 - L1, 0, c * (1 + z2 * z2 + y1 * y1), k34};
        const vec5 K4 = {0, 0, k24 - L1, k34, c * (1 + z1 * z1 + y2 * y2)};
        const vec5 w = newmark_w(n, dq, g0, g1, m0, m1, L0, L1);
        const vec5 f =
            sub(sub(add(sub(dq, scale(h, v0)), scale(c, add(scale(b1, g0), scale(b2, g1)))), scale(L0, scale(b1, m0))),
                scale(L1, scale(b2, m1)));
        STORE_F(J, l, f, dot(ma, dq), dot(m1, w));
        STORE_ROW(J[X], l, axpy((vec5){1, 0, 0, 0, 0}, b2, K0), -b1 * m0.x, -2 * beta * m1.x);
        STORE_ROW(J[Y1], l, axpy((vec5){0, 1, 0, 0, 0}, b2, K1), -b1 * m0.y1, -2 * beta * m1.y1);
        STORE_ROW(J[Y2], l, axpy((vec5){0, 0, 1, 0, 0}, b2, K2), -b1 * m0.y2, -2 * beta * m1.y2);
        STORE_ROW(J[Z1], l, axpy((vec5){0, 0, 0, 1, 0}, b2, K3), -b1 * m0.z1, -2 * beta * m1.z1);
        STORE_ROW(J[Z2], l, axpy((vec5){0, 0, 0, 0, 1}, b2, K4), -b1 * m0.z2, -2 * beta * m1.z2);
        /* (N3)·h's row μ(q_½) + ½(Dμ)ᵀΔq, (N4)·h's μ1 − (1 − 2β') μ1ᵀK + (Dμ)ᵀw. */
        const vec5 m1K =
            axpy(axpy(axpy(axpy(axpy((vec5){0, 0, 0, 0, 0}, m1.x, K0), m1.y1, K1), m1.y2, K2), m1.z1, K3), m1.z2, K4);
        const vec5 r6 = sub(m1, scale(a2, m1K));
        STORE_ROW(J[5], l, ((vec5){ma.x, ma.y1 + 0.5 * dq.z1, ma.y2 + 0.5 * dq.z2, ma.z1, ma.z2}), 0, 0);
        STORE_ROW(J[6], l, ((vec5){r6.x, r6.y1 + w.z1, r6.y2 + w.z2, r6.z1, r6.z2}), a1 * dot(m1, m0),
                  a2 * dot(m1, m1));
      }
      const double failed = KERNEL(_lu_solve)(J, delta, on);
#pragma omp simd reduction(+ : running)
      for (int l = 0; l < L; l++) { /* newton_update, kept for the running lanes (herglotz2's) */
        const vec5 y = LOAD(y_in, l), d = LOAD(delta, l), yn = sub(y, d);
        const double L0 = y_in[5][l] - delta[5][l], L1 = y_in[6][l] - delta[6][l], run = on[l];
        const double dx = max_abs7(d, delta[5][l], delta[6][l]);
        const double next = newton_done(dx, max_abs7(yn, L0, L1), prev[l]) ? 0 : run;
        STORE_ROW(y_out, l, pick(run != 0, yn, y), run != 0 ? L0 : y_in[5][l], run != 0 ? L1 : y_in[6][l]);
        prev[l] = next != 0 ? dx : prev[l];
        count[l] += run;
        on[l] = next;
        running += next;
      }
      double(*t)[L] = y_in;
      y_in = y_out, y_out = t;
      if (failed) return -1;
      if (!running) break;
    }
#pragma omp simd
    for (int l = 0; l < L; l++) { /* the step's end: v1 = w/h projected onto D at q1 (nh_project_onto), λ */
      const vec5 q0 = LOAD(p->q, l), dq = LOAD(y_in, l), q1 = add(q0, dq), m1 = mu(q1);
      const vec5 w = newmark_w(n, dq, LOAD(G0, l), gradient(q1), mu(q0), m1, y_in[5][l], y_in[6][l]);
      const vec5 v = {w.x / h, w.y1 / h, w.y2 / h, w.z1 / h, w.z2 / h};
      const double y = dot_from_0(m1, v) / dot_from_0(m1, m1);
      STORE(p->q, l, q1);
      STORE(p->v, l, sub(v, scale(y, m1)));
      p->lambda[l] = y_in[6][l] / c;
    }
  }
  for (int l = 0; l < L; l++) iterations[l] += (long)count[l];
  return 0;
}

#undef STORE_ROW
#undef STORE_F

#undef KERNEL
#endif
