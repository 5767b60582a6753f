/* Journaled runs of every kind but the ensemble (studies/task_journal.c and each kind's slots,
 * issue 16 round 2): a run resumed from its complete journal runs nothing again and gives every
 * per-task result of the run that wrote it, bit for bit, failed and timed-out tasks included
 * (their status, NaN errors and partial counters). The wall times are journaled too, so a task
 * that ran again would show in them. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "studies/study.h"
#include "tests/helpers.h"

static void load_text(const char *text, nh_study *st, char *journal, size_t len) {
  char path[128], err[1024];
  snprintf(path, sizeof path, "/tmp/nhbench-mut2-resume-%d.cfg", (int)getpid());
  snprintf(journal, len, "/tmp/nhbench-mut2-resume-%d.journal", (int)getpid());
  remove(journal);
  test_write_file(path, text);
  cr_assert_eq(nh_study_load(path, NULL, 0, st, err, sizeof err), 0, "%s", err);
  remove(path);
  st->checkpoint = journal, st->checkpoint_key = "mut2 key";
}

#define SAME(a, b, count, what)                                                                              \
  cr_expect(memcmp((a), (b), sizeof *(a) * (size_t)(count)) == 0, "%s: the resumed run differs", what)

/* Some entry of x (count of them) is neither 0 nor NaN: a slot left out of the journal would come
 * back as calloc's zeros, so the comparison means something only for such arrays. */
static int has_value(const double *x, size_t count) {
  for (size_t i = 0; i < count; i++)
    if (x[i] != 0 && !isnan(x[i])) return 1;
  return 0;
}

Test(resume_every_kind, convergence_resumes_bit_for_bit, .timeout = 120) {
  nh_study st;
  char journal[128], err[1024];
  /* nh_newmark with beta2 > beta gains energy and fails long before T = 400 (spec/newmark.md 2.2);
   * herglotz2 tracks the action z; nh_newmark(0.1, 0.1, 1/2) has a discrete constraint. */
  load_text("study = \"convergence\";\nsystem = \"chaotic_particle\";\nT = 400.0;\nh = [0.2, 0.1];\n"
            "methods = [\"rk4\", \"nh_newmark(beta=0,beta2=0.3,alpha=0.5)\", \"nh_newmark(beta=0.1,beta2=0.1,alpha=0.5)\", "
            "\"herglotz2\"];\n",
            &st, journal, sizeof journal);
  nh_convergence_result a, b;
  cr_assert_eq(nh_run_convergence(&st, &a, err, sizeof err), 0, "%s", err);
  st.resume = 1;
  cr_assert_eq(nh_run_convergence(&st, &b, err, sizeof err), 0, "%s", err);
  const size_t cells = (size_t)st.nmethods * st.nh, n2 = 2 * (size_t)st.sys.n;
  cr_expect(a.status[2] != 0 && a.status[3] != 0, "the anti-damped method failed: %d %d", a.status[2], a.status[3]);
  cr_expect(a.cost[2].steps > 0 && a.cost[2].steps < 2000, "it stopped part-way: %llu steps", a.cost[2].steps);
  const struct {
    const double *a, *b;
    size_t count;
    const char *what;
  } d[] = {{a.err, b.err, cells, "err"},
           {a.err_q, b.err_q, cells, "err_q"},
           {a.err_v, b.err_v, cells, "err_v"},
           {a.err_max, b.err_max, cells, "err_max"},
           {a.err_2, b.err_2, cells, "err_2"},
           {a.residual, b.residual, cells, "residual"},
           {a.wall_time, b.wall_time, cells, "wall_time"},
           {a.z, b.z, cells, "z"},
           {a.lambda_err, b.lambda_err, cells, "lambda_err"},
           {a.discrete_residual, b.discrete_residual, cells, "discrete_residual"},
           {a.err_coord, b.err_coord, cells * n2, "err_coord"},
           {a.final_state, b.final_state, cells * n2, "final_state"}};
  for (size_t i = 0; i < sizeof d / sizeof *d; i++) {
    cr_expect(has_value(d[i].a, d[i].count), "%s: all 0 or NaN", d[i].what);
    SAME(d[i].a, d[i].b, d[i].count, d[i].what);
  }
  SAME(a.status, b.status, cells, "status");
  SAME(a.cost, b.cost, cells, "cost");
  SAME(a.order, b.order, st.nmethods, "order");
  nh_convergence_result_free(&a), nh_convergence_result_free(&b);
  nh_study_free(&st);
  remove(journal);
}

Test(resume_every_kind, trajectory_resumes_bit_for_bit, .timeout = 120) {
  nh_study st;
  char journal[128], err[1024];
  load_text("study = \"trajectory\";\nsystem = \"chaotic_particle\";\nT = 2.0;\nh = [0.2, 0.1];\nsample_every = 2;\n"
            "methods = [\"rk4\", \"nh_newmark(beta=0.1,beta2=0.1,alpha=0.5)\", \"nh_newmark(beta=0,beta2=0.3,alpha=0.5)\"];\n"
            "divergence = 1e-3;\nobservables = [\"energy_error\", \"error\", \"multiplier\"];\n",
            &st, journal, sizeof journal);
  nh_trajectory_result a, b;
  cr_assert_eq(nh_run_trajectory(&st, &a, err, sizeof err), 0, "%s", err);
  st.resume = 1;
  cr_assert_eq(nh_run_trajectory(&st, &b, err, sizeof err), 0, "%s", err);
  const size_t runs = (size_t)st.nmethods * st.nh * st.nic;
  int stopped = 0;
  for (size_t i = 0; i < runs; i++) stopped += a.status[i] == NH_RUN_DIVERGED;
  cr_expect_gt(stopped, 0, "no run stopped at divergence = 1e-3");
  SAME(a.status, b.status, runs, "status");
  SAME(a.cost, b.cost, runs, "cost");
  cr_expect(has_value(a.wall_time, runs) && has_value(a.final_state, runs * 2 * st.sys.n));
  SAME(a.wall_time, b.wall_time, runs, "wall_time");
  SAME(a.final_state, b.final_state, runs * 2 * st.sys.n, "final_state");
  const size_t values = runs * (size_t)a.nsamples * a.samples.row;
  cr_expect(has_value(a.samples.values, values));
  SAME(a.samples.values, b.samples.values, values, "samples");
  nh_trajectory_result_free(&a), nh_trajectory_result_free(&b);
  nh_study_free(&st);
  remove(journal);
}

Test(resume_every_kind, onestep_resumes_bit_for_bit, .timeout = 120) {
  nh_study st;
  char journal[128], err[1024];
  load_text("study = \"onestep\";\nsystem = \"particle\";\nT = 1.0;\nh = [0.2, 0.1];\npoints = 3;\n"
            "methods = [\"nh_newmark(beta=0.1,beta2=0.1,alpha=0.5)\", \"dla(alpha=0.5)\", \"rk4\", \"js_b\"];\n",
            &st, journal, sizeof journal);
  nh_onestep_result a, b;
  cr_assert_eq(nh_run_onestep(&st, &a, err, sizeof err), 0, "%s", err);
  st.resume = 1;
  cr_assert_eq(nh_run_onestep(&st, &b, err, sizeof err), 0, "%s", err);
  const size_t cells = (size_t)st.nmethods * st.nh * a.npoints, n2 = 2 * (size_t)st.sys.n;
  const struct {
    const double *a, *b;
    size_t count;
    const char *what;
  } d[] = {{a.local_err, b.local_err, cells, "local_err"},
           {a.local_err_q, b.local_err_q, cells, "local_err_q"},
           {a.local_err_v, b.local_err_v, cells, "local_err_v"},
           {a.lambda_err, b.lambda_err, cells, "lambda_err"},
           {a.adjoint_defect, b.adjoint_defect, cells, "adjoint_defect"},
           {a.cond, b.cond, cells, "cond"},
           {a.action_err, b.action_err, cells, "action_err"},
           {a.stepped, b.stepped, cells * n2, "stepped"},
           {a.backward, b.backward, cells * n2, "backward"},
           {a.lambda, b.lambda, cells * (size_t)st.sys.k, "lambda"}};
  for (size_t i = 0; i < sizeof d / sizeof *d; i++) {
    cr_expect(has_value(d[i].a, d[i].count), "%s: all 0 or NaN", d[i].what);
    SAME(d[i].a, d[i].b, d[i].count, d[i].what);
  }
  SAME(a.status, b.status, cells, "status");
  SAME(a.slope, b.slope, st.nmethods, "slope");
  nh_onestep_result_free(&a), nh_onestep_result_free(&b);
  nh_study_free(&st);
  remove(journal);
}

Test(resume_every_kind, work_precision_resumes_bit_for_bit, .timeout = 120) {
  nh_study st;
  char journal[128], err[1024];
  /* h = 1e-6: 10⁶ steps, stopped by the 2 ms time limit (status 4, partial cost). */
  load_text("study = \"work_precision\";\nsystem = \"particle\";\nT = 1.0;\nh = [0.1, 0.05, 1e-6];\nrepeats = 2;\n"
            "time_limit = 2e-3;\nmethods = [\"rk4\", \"js_b\"];\n",
            &st, journal, sizeof journal);
  nh_work_precision_result a, b;
  cr_assert_eq(nh_run_work_precision(&st, &a, err, sizeof err), 0, "%s", err);
  st.resume = 1;
  cr_assert_eq(nh_run_work_precision(&st, &b, err, sizeof err), 0, "%s", err);
  const size_t cells = (size_t)st.nmethods * st.nh;
  cr_expect(a.status[2] == NH_RUN_TIMED_OUT && a.status[5] == NH_RUN_TIMED_OUT, "%d %d", a.status[2], a.status[5]);
  cr_expect(has_value(a.err, cells * NH_WP_NORMS) && has_value(a.work, cells) && has_value(a.wall_times, cells * 2));
  SAME(a.err, b.err, cells * NH_WP_NORMS, "err");
  SAME(a.cost, b.cost, cells, "cost");
  SAME(a.work, b.work, cells, "work");
  SAME(a.wall_time, b.wall_time, cells, "wall_time");
  SAME(a.wall_times, b.wall_times, cells * 2, "wall_times");
  SAME(a.status, b.status, cells, "status");
  SAME(a.pareto_work, b.pareto_work, cells, "pareto_work");
  nh_work_precision_result_free(&a), nh_work_precision_result_free(&b);
  nh_study_free(&st);
  remove(journal);
}
