/* make bench: performance figures, printed, never asserted (machines here are shared and noisy).
 * Ratios are measured within one run. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_linalg.h>

#include "core/linalg.h"

#include "studies/sampling.h"
#include "studies/study.h"

/* --quick: the same tables from a few thousand steps, for the test that every table runs and that
 * the LU floor computes the harness's numbers (tests/test_bench.c); figures then mean little. */
static int quick;

static const char *const methods[] = {
    "rk4",
    "nh_newmark(alpha=0.5)",
    "nh_newmark(alpha=0.5,fast=0)",
    "nh_newmark(beta=0.1,beta2=0.1,alpha=0.5)",
    "adjoint_pair(nh_newmark(alpha=0))",
    "adjoint_pair(nh_newmark(beta=0.1,beta2=0.1,alpha=0))",
    "triple_jump(nh_newmark(alpha=0.5))",
    "newmark(beta=0.25,gamma=0.5)",
    "dla(alpha=0.5)",
    "nh_rattle",
    "nh_shake",
    "js_a",
    "js_b",
    "herglotz2",
};

/* Steps per second of one method on the chaotic particle, from the paper's Fig. 2 state. */
static double time_method(const nh_system *sys, const nh_method *m, long steps, nh_cost *cost) {
  nh_state x, y;
  nh_system_default_state(sys, &x);
  if (nh_method_init(m, sys, &x, 0.2, cost) != NH_STEP_OK) return -1;
  double t0 = omp_get_wtime();
  for (long s = 0; s < steps; s++) {
    if (nh_method_step(m, sys, &x, &y, 0.2, cost) != NH_STEP_OK) return -1;
    x = y;
  }
  return omp_get_wtime() - t0;
}

static void bench_steps(void) {
  nh_system sys;
  nh_system_init(&sys, nh_system_type_find("chaotic_particle"));
  const long steps = quick ? 2000 : 200000;
  double rk4_time = 0;
  printf("single-thread step cost, chaotic_particle, h = 0.2, %ld steps each\n", steps);
  printf("%10s %8s %10s %10s  %s\n", "ns/step", "x rk4", "newton/st", "rhs/step", "method");
  for (size_t i = 0; i < sizeof methods / sizeof *methods; i++) {
    char err[512];
    nh_method *m = nh_method_parse(methods[i], err, sizeof err);
    if (!m) {
      fprintf(stderr, "bench: %s\n", err);
      continue;
    }
    nh_cost cost = {0};
    double t = time_method(&sys, m, steps, &cost);
    if (t < 0) {
      printf("%10s %8s %10s %10s  %s\n", "failed", "", "", "", methods[i]);
      nh_method_free(m);
      continue;
    }
    if (i == 0) rk4_time = t;
    printf("%10.0f %8.2f %10.2f %10.2f  %s\n", 1e9 * t / steps, t / rk4_time,
           (double)cost.newton_iterations / steps, (double)cost.rhs_evals / steps, methods[i]);
    nh_method_free(m);
  }
}

/* Wall time of the default chaotic ensemble with 1 and 2 threads: the parallel speed-up. */
static void bench_ensemble(const char *spec) {
  nh_study st;
  char err[1024];
  const char *ov[] = {"ensemble.count=8", quick ? "T=20" : "T=400"};
  if (nh_study_load(spec, ov, 2, &st, err, sizeof err)) {
    fprintf(stderr, "bench: %s\n", err);
    return;
  }
  double t[2];
  for (int threads = 1; threads <= 2; threads++) {
    nh_ensemble_result r;
    omp_set_num_threads(threads);
    double t0 = omp_get_wtime();
    nh_run_ensemble(&st, &r, err, sizeof err);
    t[threads - 1] = omp_get_wtime() - t0;
    nh_ensemble_result_free(&r);
  }
  printf("\nensemble %s (8 ICs, T = %g, %d methods): 1 thread %.2f s, 2 threads %.2f s, speed-up %.2f\n",
         spec, st.T, st.nmethods, t[0], t[1], t[0] / t[1]);
  nh_study_free(&st);
}

/* The stepping loop with and without observables (issue 8: "sampling costs nothing when no
 * observable is asked for"): the same run through nh_integrate, through the sampled-run loop
 * with no observables, and with observables sampled every K steps. Median of 5 repetitions each,
 * interleaved so that machine noise hits every variant alike. */
static double sampled_run_time(const nh_study *st, const char *const *names, int nobs, int K, double *values) {
  nh_study s = *st;
  const nh_observable *obs[4];
  for (int o = 0; o < nobs; o++) obs[o] = nh_observable_find(names[o]);
  s.obs = obs, s.nobs = nobs;
  nh_samples layout;
  nh_samples_init(&layout, &s, 1, 1);
  nh_sampled_run run = {.st = &s, .m = s.methods[0], .h = 0.2, .nsteps = s.nsteps, .K = K, .x0 = s.x0,
                        .layout = nobs ? &layout : NULL, .values = values};
  double t0 = omp_get_wtime();
  nh_sampled_run_go(&run);
  double t = omp_get_wtime() - t0;
  nh_samples_free(&layout);
  return t;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static void bench_sampling(void) {
  nh_study st = {0};
  char err[512];
  nh_system_init(&st.sys, nh_system_type_find("chaotic_particle"));
  nh_system_default_state(&st.sys, &st.x0);
  nh_method *m = nh_method_parse("nh_newmark(beta=0.1,beta2=0.1,alpha=0.5)", err, sizeof err);
  st.methods = &m, st.nmethods = 1, st.nsteps = quick ? 1000 : 50000, st.reference_tol = 1e-13;
  const char *const energy[] = {"energy_error"}, *const four[] = {"energy_error", "constraint_residual", "q", "multiplier"};
  double *values = malloc(sizeof(double) * (size_t)(st.nsteps + 1) * 16);
  enum { VARIANTS = 5, REPS = 5 };
  const char *label[VARIANTS] = {"nh_integrate (no sampling)", "sampled run, no observables, K = 10",
                                 "energy_error every step", "energy_error every 10 steps",
                                 "4 observables every step"};
  double t[VARIANTS][REPS];
  for (int r = 0; r < REPS; r++) {
    nh_state x = st.x0;
    nh_cost cost = {0};
    double t0 = omp_get_wtime();
    nh_integrate(m, &st.sys, &x, st.nsteps, 0.2, &cost, 0, NULL);
    t[0][r] = omp_get_wtime() - t0;
    t[1][r] = sampled_run_time(&st, energy, 0, 10, values);
    t[2][r] = sampled_run_time(&st, energy, 1, 1, values);
    t[3][r] = sampled_run_time(&st, energy, 1, 10, values);
    t[4][r] = sampled_run_time(&st, four, 4, 1, values);
  }
  printf("\nobservables sampling, %s on chaotic_particle, %ld steps, median of %d:\n", "nh_newmark(0.1,0.1,1/2)",
         st.nsteps, REPS);
  for (int v = 0; v < VARIANTS; v++) qsort(t[v], REPS, sizeof(double), cmp_double);
  for (int v = 0; v < VARIANTS; v++)
    printf("%10.0f ns/step %6.3f x  %s\n", 1e9 * t[v][REPS / 2] / st.nsteps, t[v][REPS / 2] / t[0][REPS / 2], label[v]);
  free(values);
  nh_method_free(m);
}

/* ---- small dense LU: the harness's own (core/linalg.c) against GSL's ------------------------ */

/* GSL's partial-pivoting LU solve of the m×m row-major J x = b in place, the library the harness
 * used before issue 11 measured this table. */
static int lu_solve_gsl(int m, double *J, double *b) {
  size_t pd[NH_LU_MAX_DIM];
  gsl_permutation perm = {(size_t)m, pd};
  gsl_matrix_view Jv = gsl_matrix_view_array(J, (size_t)m, (size_t)m);
  gsl_vector_view bv = gsl_vector_view_array(b, (size_t)m);
  int sgn;
  if (gsl_linalg_LU_decomp(&Jv.matrix, &perm, &sgn)) return -1;
  return gsl_linalg_LU_svx(&Jv.matrix, &perm, &bv.vector) ? -1 : 0;
}

/* Median seconds per solve over REPS rounds of `count` systems (copies of A, B solved in place). */
static double time_solves(int (*solve)(int, double *, double *), int m, int count, const double *A, const double *B,
                          double *X) {
  enum { REPS = 7 };
  double t[REPS], *J = malloc(sizeof(double) * (size_t)(m * m));
  for (int r = 0; r < REPS; r++) {
    double t0 = omp_get_wtime();
    for (int c = 0; c < count; c++) {
      memcpy(J, A + (size_t)c * m * m, sizeof(double) * (size_t)(m * m));
      memcpy(X + (size_t)c * m, B + (size_t)c * m, sizeof(double) * (size_t)m);
      solve(m, J, X + (size_t)c * m);
    }
    t[r] = (omp_get_wtime() - t0) / count;
  }
  free(J);
  qsort(t, REPS, sizeof(double), cmp_double);
  return t[REPS / 2];
}

static void bench_lu(void) {
  const int COUNT = quick ? 50 : 2000;
  static const int sizes[] = {2, 4, 7, 8, 12, 16, NH_LU_MAX_DIM};
  printf("\nsmall dense LU solves (random matrices: entries in [-0.5, 0.5] plus m on the diagonal), median of 7:\n");
  printf("%4s %12s %12s %8s %14s\n", "m", "GSL ns", "nhbench ns", "GSL/nhb", "max rel diff");
  unsigned long long seed = 12345;
  for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
    int m = sizes[s];
    double *A = malloc(sizeof(double) * (size_t)(COUNT * m * m)), *B = malloc(sizeof(double) * (size_t)(COUNT * m));
    double *X1 = malloc(sizeof(double) * (size_t)(COUNT * m)), *X2 = malloc(sizeof(double) * (size_t)(COUNT * m));
    for (long i = 0; i < (long)COUNT * m * m; i++) {
      seed = seed * 6364136223846793005ULL + 1442695040888963407ULL; /* Knuth's MMIX LCG */
      A[i] = (double)(seed >> 11) / 9007199254740992.0 - 0.5 + ((i % (m * m)) % (m + 1) == 0 ? m : 0);
    }
    for (long i = 0; i < (long)COUNT * m; i++) B[i] = sin((double)i);
    double tg = time_solves(lu_solve_gsl, m, COUNT, A, B, X1), th = time_solves(nh_lu_solve, m, COUNT, A, B, X2);
    double diff = 0;
    for (long i = 0; i < (long)COUNT * m; i++) diff = fmax(diff, fabs(X1[i] - X2[i]) / fmax(fabs(X1[i]), 1e-300));
    printf("%4d %12.0f %12.0f %8.2f %14.2e\n", m, 1e9 * tg, 1e9 * th, tg / th, diff);
    free(A), free(B), free(X1), free(X2);
  }
}

/* nhbench_bench [--quick] [ENSEMBLE_SPEC] */
int main(int argc, char **argv) {
  const char *spec = "studies/chaotic_ensemble.cfg";
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--quick") == 0) quick = 1;
    else spec = argv[i];
  }
  bench_lu();
  bench_steps();
  bench_sampling();
  bench_ensemble(spec);
  return 0;
}
