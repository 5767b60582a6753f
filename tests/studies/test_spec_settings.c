/* studies/spec.c (issue 16, round 2): every refusal of a study spec names the file, the line and
 * the value, exactly; every --set form changes what it names and nothing else. The expected
 * messages are the ones README.md ("Study specs") and the loader's contract promise; the line
 * numbers are counted in the spec texts written here. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "studies/study.h"
#include "tests/helpers.h"

/* The spec text written to a temporary file and loaded with the overrides ov (nov of them). */
static int load_spec(const char *text, const char *const *ov, int nov, nh_study *st, char *path, size_t pathlen,
                     char *err, size_t errlen) {
  snprintf(path, pathlen, "/tmp/nhbench-mut2-spec-%d.cfg", (int)getpid());
  test_write_file(path, text);
  err[0] = '\0';
  const int rc = nh_study_load(path, ov, nov, st, err, errlen);
  remove(path);
  return rc;
}

/* The spec is refused with exactly "PATH" + want (want starts with ':'), or, when want does not
 * start with ':', with a message that starts with PATH and contains want; and the refusal, with
 * nh_study_free after it, leaves no block of nhbench's code allocated (tests/heap_guard.c). */
static void refused(const char *text, const char *const *ov, int nov, const char *want) {
  nh_study st;
  char path[128], err[2048], exact[2048];
  const long blocks = test_live_blocks();
  const int rc = load_spec(text, ov, nov, &st, path, sizeof path, err, sizeof err);
  cr_expect_eq(rc, -1, "loaded, want the error %s:\n%s", want, text);
  if (want[0] == ':') {
    snprintf(exact, sizeof exact, "%s%s", path, want);
    cr_expect_str_eq(err, exact, "the message is\n%s\nnot\n%s", err, exact);
  } else {
    cr_expect(strncmp(err, path, strlen(path)) == 0 && strstr(err, want) != NULL, "message '%s' lacks '%s'", err, want);
  }
  nh_study_free(&st);
  cr_expect_eq(test_live_blocks(), blocks, "refused (%s), %ld blocks left allocated:\n%s", want,
               test_live_blocks() - blocks, text);
}

static void loads(const char *text, const char *const *ov, int nov, nh_study *st) {
  char path[128], err[2048];
  cr_assert_eq(load_spec(text, ov, nov, st, path, sizeof path, err, sizeof err), 0, "%s\n%s", err, text);
}

#define CONV3 "study = \"convergence\";\nsystem = \"particle\";\nT = 1.0;\n"
#define TRAJ3 "study = \"trajectory\";\nsystem = \"particle\";\nT = 1.0;\n"
#define ENS3 "study = \"ensemble\";\nsystem = \"chaotic_particle\";\nT = 2.0;\n"
#define ONE3 "study = \"onestep\";\nsystem = \"particle\";\nT = 1.0;\n"

/* Settings of the wrong shape: each refusal at its line with its own message. */
Test(spec_settings, settings_of_the_wrong_shape) {
  refused(CONV3 "methods = [\"rk4\"];\nh = [0.1, 0.05];\nsystem_params = 3;\n", NULL, 0,
          ":6: 'system_params' must be a group, e.g. { eps = 0.1; }");
  refused(CONV3 "h = [0.1, 0.05];\nmethods = \"rk4\";\n", NULL, 0,
          ":5: 'methods' must be a list of method strings, e.g. [\"rk4\"]");
  refused(CONV3 "h = [0.1, 0.05];\nmethods = (\"rk4\", 3);\n", NULL, 0,
          ":5: methods must be strings, e.g. \"nh_newmark(alpha=0.5)\"");
  refused(TRAJ3 "h = [0.1];\nmethods = [\"rk4\"];\nobservables = \"energy\";\n", NULL, 0,
          ":6: 'observables' must be a list of names, e.g. [\"energy\", \"error_q_2\"]");
  refused(TRAJ3 "h = [0.1];\nmethods = [\"rk4\"];\nobservables = [\"energy\", \"q\", \"energy\"];\n", NULL, 0,
          ":6: observable 'energy' is listed twice");
  refused(TRAJ3 "h = [0.1];\nmethods = [\"rk4\"];\nobservables = [\"energy\"];\ndivergence = 0.0;\n", NULL, 0,
          ":7: divergence must be a positive number (default 1e3)");
  refused(TRAJ3 "h = [0.1];\nmethods = [\"rk4\"];\nobservables = [\"energy\"];\ndivergence = -2.0;\n", NULL, 0,
          ":7: divergence must be a positive number (default 1e3)");
  refused(CONV3 "methods = [\"rk4\"];\nh = [0.1, 0.05];\nexpected_orders = { method = \"rk4\"; order = 4; reason = \"r\"; };\n",
          NULL, 0, ":6: 'expected_orders' must be a list ( { method = \"...\"; order = N; reason = \"...\"; } )");
  refused(CONV3 "methods = [\"rk4\"];\nh = [0.1, 0.05];\nexpected_orders = ( { method = \"rk4\"; order = 4; why = \"r\"; } );\n",
          NULL, 0, ":6: each expected order is a group { method; order; reason; }");
  refused(CONV3 "methods = [\"rk4\"];\nh = [0.1, 0.05];\nexpected_orders = ( { method = \"rk4\"; order = 4; reason = 1; } );\n",
          NULL, 0, ":6: method and reason must be strings");
  refused(CONV3 "methods = [\"rk4\"];\nh = [0.1, 0.05];\nexpected_orders = ( { method = \"js_a\"; order = 1; reason = \"r\"; } );\n",
          NULL, 0, ":6: expected order for 'js_a', which is not among the study's methods");
  refused(CONV3 "methods = [\"rk4\"];\nh = (0.1, \"a\");\n", NULL, 0, ":5: entry 2 of 'h' must be a number, not \"a\"");
  /* Step sizes from h0 and halvings: a message about them names h0's line. */
  refused(CONV3 "methods = [\"rk4\"];\n\nh0 = 1e-300;\nhalvings = 1;\n", NULL, 0,
          ":6: T = 1 makes more than 9e15 steps of h = 1e-300");
  refused(CONV3 "methods = [\"rk4\"];\nh = (0.1, 0.05, (0.2));\n", NULL, 0, ":5: entry 3 of 'h' must be a number");
  refused(ONE3 "methods = [\"rk4\"];\nh = [0.1, 0.05];\npoints = \"x\";\n", NULL, 0, ":6: 'points' must be a number, not \"x\"");
  refused("study = 3;\nsystem = \"particle\";\n", NULL, 0,
          ":1: study = '(not a string)': expected \"convergence\", \"ensemble\", \"trajectory\", \"onestep\" or "
          "\"work_precision\"");
  refused(CONV3 "methods = [\"rk4\"];\nh = [0.1, 0.05];\nnorm = 3;\n", NULL, 0,
          ":6: norm = '(not a string)': expected \"max\" or \"2\"");
  refused("study = \"convergence\";\nsystem = 5;\n", NULL, 0,
          ":2: 'system' must be a system's name, e.g. \"chaotic_particle\", or a definition { ... }");
}

/* An expected order replaces the claimed one of exactly the method it names (by canonical name),
 * with its reason; the others keep their claims (rk4: 4, js_b: 2). */
Test(spec_settings, expected_order_replaces_the_named_method_only) {
  nh_study st;
  loads(CONV3 "methods = [\"rk4\", \"js_a\", \"js_b\"];\nh = [0.1, 0.05];\n"
              "expected_orders = ( { method = \"js_a\"; order = 3; reason = \"why\"; } );\n",
        NULL, 0, &st);
  cr_assert_eq(st.nmethods, 3);
  cr_expect_eq(st.order_expected[0], 4);
  cr_expect_eq(st.order_expected[1], 3);
  cr_expect_eq(st.order_expected[2], 2);
  cr_expect_str_eq(st.order_reason[0], "");
  cr_expect_str_eq(st.order_reason[1], "why");
  cr_expect_str_eq(st.order_reason[2], "");
  nh_study_free(&st);
}

/* `labels` (issue 49 item 5): each pair's method found by its canonical name (parameters in any
 * order, defaults written or not), its label kept as given; the methods without one NULL; a spec
 * without labels none at all. */
Test(spec_settings, labels_name_methods_by_their_canonical_name) {
  nh_study st;
  loads(CONV3 "methods = [\"rk4\", \"js_a\", \"nh_newmark(beta=0.1,beta2=0.1)\"];\nh = [0.1, 0.05];\n"
              "labels = ( [\"nh_newmark(beta2=0.1, beta=0.1, alpha=0.5)\", \"Ψ^{0.1}_h 'a'\"], (\"rk4\", \"RK4\") );\n",
        NULL, 0, &st);
  cr_assert_eq(st.nmethods, 3);
  cr_assert_not_null(st.method_labels);
  cr_expect_str_eq(st.method_labels[0], "RK4");
  cr_expect_null(st.method_labels[1]);
  cr_expect_str_eq(st.method_labels[2], "Ψ^{0.1}_h 'a'");
  nh_study_free(&st);
  loads(CONV3 "methods = [\"rk4\"];\nh = [0.1, 0.05];\n", NULL, 0, &st);
  cr_expect_null(st.method_labels);
  nh_study_free(&st);
}

/* Refused labels: not a list of pairs, a method not among the study's (or not a method), a second
 * label for one method, and labels that are empty, longer than 200 bytes, or hold '"' or a control
 * character (the plots read labels as double-quoted words); each at the pair's line. */
Test(spec_settings, malformed_labels) {
  static const char *const shape =
      "'labels' must be a list of [\"method\", \"label\"] pairs, e.g. ( [\"rk4\", \"RK4\"] )";
  static const char *const rule = "a label is 1 to 200 characters, without '\"' or control characters";
  char long_label[300], spec[600];
  memset(long_label, 'x', 201), long_label[201] = '\0';
  const struct {
    const char *labels, *want;
  } cases[] = {
      {"labels = \"rk4\";", shape},
      {"labels = [\"rk4\", \"RK4\"];", shape},
      {"labels = ( [\"rk4\"] );", shape},
      {"labels = ( [\"rk4\", \"a\", \"b\"] );", shape},
      {"labels = ( [1, 2] );", shape},
      {"labels = ( { method = \"rk4\"; } );", shape},
      {"labels = ( [\"js_b\", \"B\"] );", ":5: a label for 'js_b', which is not among the study's methods"},
      {"labels = ( [\"rk5\", \"B\"] );",
       "cfg:5: a label for 'rk5': unknown method 'rk5' in 'rk5': did you mean rk4? (methods: "},
      {"labels = ( [\"rk4\", \"A\"], [\"rk4\", \"B\"] );", ":5: a second label for 'rk4'"},
      {"labels = ( [\"rk4\", \"\"] );", rule},
      {"labels = ( [\"rk4\", \"a\\\"b\"] );", rule},
      {"labels = ( [\"rk4\", \"a\\tb\"] );", rule},
      {"labels = ( [\"rk4\", \"a\\nb\"] );", rule},
      {"labels = ( [\"rk4\", \"a\\x7fb\"] );", rule},
      {"labels = ( [\"rk4\", \"a\\x1fb\"] );", rule},
      {NULL, rule},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char line[400];
    if (cases[i].labels)
      snprintf(line, sizeof line, "%s", cases[i].labels);
    else
      snprintf(line, sizeof line, "labels = ( [\"rk4\", \"%s\"] );", long_label);
    snprintf(spec, sizeof spec, CONV3 "methods = [\"rk4\", \"js_a\"];\n%s\nh = [0.1, 0.05];\n", line);
    refused(spec, NULL, 0, cases[i].want);
  }
  /* 200 bytes are allowed. */
  nh_study st;
  long_label[200] = '\0';
  snprintf(spec, sizeof spec, CONV3 "methods = [\"rk4\"];\nlabels = ( [\"rk4\", \"%s\"] );\nh = [0.1, 0.05];\n",
           long_label);
  loads(spec, NULL, 0, &st);
  cr_expect_eq(strlen(st.method_labels[0]), 200);
  nh_study_free(&st);
}

/* A method listed twice is one method; a grid point equal to a listed method reuses its index. */
Test(spec_settings, duplicate_methods_are_one) {
  nh_study st;
  loads(ENS3 "h = 0.5;\nmethods = [\"rk4\", \"nh_newmark(beta=0.1,beta2=0.1,alpha=0.5)\", \"rk4\"];\n"
             "ensemble = { count = 1; energy = 1.535; seed = 0; };\n"
             "grids = ( { method = \"nh_newmark(alpha=0.5)\"; beta = [0.0, 0.1]; beta2 = [0.1, 0.3]; } );\n",
        NULL, 0, &st);
  /* Methods: rk4, nh_newmark(0.1,0.1); the grid (beta, beta2): (0, 0.1) new, (0, 0.3) new,
   * (0.1, 0.1) = method 1, (0.1, 0.3) new. */
  cr_expect_eq(st.nprimary, 2);
  cr_expect_eq(st.nmethods, 5);
  cr_assert_eq(st.ngrids, 1);
  const int *mi = st.grids[0].method_index;
  cr_expect(mi[0] == 2 && mi[1] == 3 && mi[2] == 1 && mi[3] == 4, "grid indices %d %d %d %d", mi[0], mi[1], mi[2], mi[3]);
  cr_expect_eq(st.grids[0].nvalues[0], 2);
  cr_expect_eq(st.grids[0].nvalues[1], 2);
  cr_expect_str_eq(st.grids[0].param[0], "beta");
  cr_expect_str_eq(st.grids[0].param[1], "beta2");
  cr_expect(st.grids[0].values[1][1] == 0.3);
  nh_study_free(&st);
}

/* Grids: each malformed grid refused at its line. */
Test(spec_settings, malformed_grids) {
  const char *head = ENS3 "h = 0.5;\nmethods = [\"rk4\"];\nensemble = { count = 1; energy = 1.535; seed = 0; };\n";
  char text[1024];
  const struct {
    const char *grids, *want;
  } cases[] = {
      {"grids = { method = \"nh_newmark(alpha=0.5)\"; beta = [0.0]; beta2 = [0.1]; };\n",
       ":7: 'grids' must be a list of groups: ( { method = \"...\"; beta = [...]; beta2 = [...]; } )"},
      {"grids = ( 1 );\n", ":7: each grid must be a group { method = ...; ... }"},
      {"grids = ( { beta = [0.0]; beta2 = [0.1]; } );\n", ":7: missing setting 'method'"},
      {"grids = ( { method = 1; beta = [0.0]; beta2 = [0.1]; } );\n", ":7: grid 'method' must be a string"},
      {"grids = ( { method = \"nh_newmark(alpha=0.5)\"; beta = [0.0]; gamma = [0.1]; } );\n",
       "cfg:7: grid: method 'nh_newmark("},
      {"grids = ( { method = \"nh_newmark(alpha=0.5)\"; beta = [0.0]; beta2 = [0.1]; alpha = [0.5]; } );\n",
       ":7: grid: at most two parameters (a parameter-pair grid); 'alpha' is a third"},
      {"grids = ( { method = \"nh_newmark(alpha=0.5)\"; beta = [0.0]; } );\n", "cfg:7: grid over 'nh_newmark("},
      {"grids = ( { method = \"nh_newmark(alpha=0.5)\"; beta = 0.1; beta2 = [0.1]; } );\n",
       ":7: 'beta' must be a list of numbers, e.g. [0.0, 0.1]"},
      {"grids = ( { method = \"nh_newmark(alpha=0.5)\"; beta = []; beta2 = [0.1]; } );\n", ":7: 'beta' is empty"},
      {"grids = ( { method = \"no_such\"; beta = [0.0]; beta2 = [0.1]; } );\n", "cfg:7: "},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    snprintf(text, sizeof text, "%s%s", head, cases[i].grids);
    refused(text, NULL, 0, cases[i].want);
  }
  snprintf(text, sizeof text, "%s%s", head, cases[4].grids);
  refused(text, NULL, 0, "' has no parameter 'gamma'");
  snprintf(text, sizeof text, "%s%s", head, cases[6].grids);
  refused(text, NULL, 0, "' needs two parameter lists, e.g. beta = [0.0, 0.1]; beta2 = [0.0, 0.1];");
}

/* Initial conditions: the shape of `initial`, the length of q and v, and presets of one list that
 * set different system parameters. */
Test(spec_settings, malformed_initial_conditions) {
  refused(CONV3 "methods = [\"rk4\"];\nh = [0.1, 0.05];\ninitial = 3;\n", NULL, 0,
          ":6: 'initial' must be a preset name or a group { q = [...]; v = [...]; }");
  refused(CONV3 "methods = [\"rk4\"];\nh = [0.1, 0.05];\ninitial = { q = [1.0]; v = [0.0, 0.0, 0.0]; };\n", NULL, 0,
          ":6: initial q has 1 entries; system particle has n = 3");
  refused(CONV3 "methods = [\"rk4\"];\nh = [0.1, 0.05];\ninitial = { q = [0.0, 0.0, 0.0]; v = [0.0, 0.0, 0.0, 0.0]; };\n",
          NULL, 0, ":6: initial v has 4 entries; system particle has n = 3");
  refused(CONV3 "methods = [\"rk4\"];\nh = [0.1, 0.05];\ninitial = { q = 1.0; v = [0.0, 0.0, 0.0]; };\n", NULL, 0,
          ":6: 'q' must be a list of numbers, e.g. [0.0, 0.1]");
  refused(CONV3 "methods = [\"rk4\"];\nh = [0.1, 0.05];\ninitial = { q = [0.0, 0.0, 0.0]; };\n", NULL, 0,
          ":6: missing setting 'v'");
  /* An entry that is not a number, in q and in v (a libconfig list may mix types; each list is
   * read into a block first). */
  refused(CONV3 "methods = [\"rk4\"];\nh = [0.1, 0.05];\ninitial = { q = (0.0, \"x\", 0.0); v = [0.0, 0.0, 0.0]; };\n",
          NULL, 0, ":6: entry 2 of 'q' must be a number, not \"x\"");
  refused(CONV3 "methods = [\"rk4\"];\nh = [0.1, 0.05];\ninitial = { q = [0.0, 0.0, 0.0]; v = (0.0, 0.0, \"x\"); };\n",
          NULL, 0, ":6: entry 3 of 'v' must be a number, not \"x\"");
  refused(CONV3 "methods = [\"rk4\"];\nh = [0.1, 0.05];\ninitial = { q = [0.0, 0.0, 0.0]; v = [0.0, 0.0, 0.0]; w = 1; };\n",
          NULL, 0, ":6: unknown setting 'w' (known here: q, v)");
  /* The first setting of a group (and of the file) is checked too. */
  refused(CONV3 "methods = [\"rk4\"];\nh = [0.1, 0.05];\ninitial = { w = 1; q = [0.0, 0.0, 0.0]; v = [0.0, 0.0, 0.0]; };\n",
          NULL, 0, ":6: unknown setting 'w' (known here: q, v)");
  refused("colour = 1;\n" CONV3 "methods = [\"rk4\"];\nh = [0.1, 0.05];\n", NULL, 0,
          ":1: unknown setting 'colour' (known here: study, system, system_params, initial, T, h, h0, halvings, "
          "methods, labels, grids, fit_points, error_floor, reference_tol, order_tolerance, expected_orders, norm)");
  refused(CONV3 "methods = [\"rk4\"];\nh = [0.1, 0.05];\ninitial = [];\n", NULL, 0, ":6: 'initial' is an empty list");
  /* particle: D is z' = y x'; q = (0, 1, 0), v = (1, 0, 1) is on D, v = (1, 0, 0) is 1 off it. */
  nh_study st;
  loads(CONV3 "methods = [\"rk4\"];\nh = [0.1, 0.05];\ninitial = { q = [0.0, 1.0, 0.0]; v = [1.0, 0.0, 1.0]; };\n",
        NULL, 0, &st);
  cr_expect(st.x0.q[1] == 1.0 && st.x0.v[0] == 1.0 && st.x0.v[2] == 1.0 && st.x0.v[1] == 0.0, "given state");
  cr_expect_str_eq(st.initial, "given");
  nh_study_free(&st);
  refused(CONV3 "methods = [\"rk4\"];\nh = [0.1, 0.05];\ninitial = { q = [0.0, 1.0, 0.0]; v = [1.0, 0.0, 0.0]; };\n",
          NULL, 0, ":6: initial state is not on the constraint distribution D: |A(q)v + b| = 1");
  /* cvt: eps0 sets eps = 0, eps01 eps = 0.1: one study cannot hold both. */
  refused("study = \"trajectory\";\nsystem = \"cvt\";\nT = 1.0;\nh = [0.1];\nmethods = [\"rk4\"];\n"
          "observables = [\"energy\"];\ninitial = [\"eps0\",\n  \"eps01\"];\n",
          NULL, 0,
          ":8: initial condition 'eps01' sets other system parameters than 'eps0'; run them as separate studies");
  /* Two presets with the same parameters make one study of two initial conditions. */
  loads("study = \"trajectory\";\nsystem = \"cvt\";\nT = 1.0;\nh = [0.1];\nmethods = [\"rk4\"];\n"
        "observables = [\"energy\"];\ninitial = [\"eps0\", \"default\"];\n",
        NULL, 0, &st);
  cr_expect_eq(st.nic, 2);
  cr_expect_str_eq(st.ic_names[0], "eps0");
  cr_expect_str_eq(st.ic_names[1], "default");
  nh_study_free(&st);
}

/* A given state may lie off D by round-off, 1e-12 at most: particle at q = 0 has |A(q)v + b| = |v_z|,
 * so v_z = 1e-12 is taken (the bound itself) and v_z = 1.05e-12 refused. */
Test(spec_settings, initial_state_off_d_by_at_most_1e_12) {
  nh_study st;
  loads(CONV3 "methods = [\"rk4\"];\nh = [0.1, 0.05];\n"
              "initial = { q = [0.0, 0.0, 0.0]; v = [1.0, 0.0, 1e-12]; };\n",
        NULL, 0, &st);
  cr_expect_eq(st.x0.v[2], 1e-12);
  nh_study_free(&st);
  refused(CONV3 "methods = [\"rk4\"];\nh = [0.1, 0.05];\n"
                "initial = { q = [0.0, 0.0, 0.0]; v = [1.0, 0.0, 1.05e-12]; };\n",
          NULL, 0, ":6: initial state is not on the constraint distribution D: |A(q)v + b| = 1.05e-12");
}

/* A one-step study starts from `initial` or from `ensemble`, not both; an ensemble likewise. */
Test(spec_settings, initial_and_ensemble_exclude_each_other) {
  refused(ONE3 "methods = [\"rk4\"];\nh = [0.1, 0.05];\ninitial = \"default\";\n"
               "ensemble = { count = 2; energy = 1.0; seed = 1; };\n",
          NULL, 0, ":7: one-step points start from either 'initial' or 'ensemble' (random states), not both");
  refused(ENS3 "h = 0.5;\nmethods = [\"rk4\"];\nensemble = { count = 2; energy = 1.535; seed = 1; };\n"
               "initial = \"default\";\n",
          NULL, 0, ":7: an ensemble takes either 'ensemble' (random states) or 'initial', not both");
  refused(ENS3 "h = 0.5;\nmethods = [\"rk4\"];\nensemble = 3;\n", NULL, 0,
          ":6: 'ensemble' must be a group { count = ...; energy = ...; seed = ...; }");
  refused(ENS3 "h = 0.5;\nmethods = [\"rk4\"];\nensemble = { count = 2; energy = 1.535; seed = 1; size = 3; };\n", NULL, 0,
          ":6: unknown setting 'size' (known here: count, energy, seed)");
  refused(ENS3 "h = 0.5;\nmethods = [\"rk4\"];\nensemble = { size = 3; count = 2; energy = 1.535; seed = 1; };\n", NULL, 0,
          ":6: unknown setting 'size' (known here: count, energy, seed)");
  refused(ENS3 "h = -0.5;\nmethods = [\"rk4\"];\nensemble = { count = 2; energy = 1.535; seed = 1; };\n", NULL, 0,
          ":4: h = -0.5 must be positive");
  refused(ENS3 "h = 0.5;\nmethods = [\"rk4\"];\nensemble = { count = 2; energy = 1.535; seed = \"s\"; };\n", NULL, 0,
          ":6: 'seed' must be a number, not \"s\"");
  refused(ENS3 "h = 0.5;\nmethods = [\"rk4\"];\nensemble = { count = 2; energy = \"e\"; seed = 1; };\n", NULL, 0,
          ":6: 'energy' must be a number, not \"e\"");
  /* Below the potential's minimum (V >= 0 on the chaotic particle) no state exists. */
  refused(ENS3 "h = 0.5;\nmethods = [\"rk4\"];\nensemble = { count = 2;\n energy = -1.0; seed = 1; };\n", NULL, 0,
          ":7: no state of chaotic_particle on D at energy -1 in the sample box (the energy must exceed the "
          "potential's minimum there by the kinetic margin; spec/newmark.md 6 A10)");
  /* The one-step study's random states: count of them, named "random i", each at the energy. */
  nh_study st;
  loads("study = \"onestep\";\nsystem = \"chaotic_particle\";\nT = 1.0;\nmethods = [\"rk4\"];\nh = [0.1, 0.05];\n"
        "ensemble = { count = 3; energy = 1.535; seed = 4; };\n",
        NULL, 0, &st);
  cr_assert_eq(st.nic, 3);
  cr_expect_str_eq(st.ic_names[0], "random 0");
  cr_expect_str_eq(st.ic_names[2], "random 2");
  cr_expect_str_eq(st.initial, "random 0");
  cr_expect_eq(memcmp(&st.x0, &st.ics[0], sizeof st.x0), 0);
  for (int i = 0; i < 3; i++)
    cr_expect(fabs(nh_energy(&st.sys, st.ics[i].q, st.ics[i].v) - 1.535) < 1e-12, "state %d: E = %.17g", i,
              nh_energy(&st.sys, st.ics[i].q, st.ics[i].v));
  nh_study_free(&st);
}

/* system_params: a bad value names the system and the parameter at its line; a value that replaces
 * a preset's renames the initial condition "PRESET (param=value)" and sets the parameter. */
Test(spec_settings, system_params_refusals_and_preset_override) {
  refused("study = \"convergence\";\nsystem = \"cvt\";\nT = 1.0;\nmethods = [\"rk4\"];\nh = [0.1, 0.05];\n"
          "system_params = { eps = 20.0; };\n",
          NULL, 0, ":6: system cvt: parameter eps=20 is out of range [-10, 10]");
  refused("study = \"convergence\";\nsystem = \"cvt\";\nT = 1.0;\nmethods = [\"rk4\"];\nh = [0.1, 0.05];\n"
          "system_params = { eps = \"big\"; };\n",
          NULL, 0, ":6: 'eps' must be a number, not \"big\"");
  nh_study st;
  loads("study = \"convergence\";\nsystem = \"cvt\";\nT = 1.0;\nmethods = [\"rk4\"];\nh = [0.1, 0.05];\n"
        "initial = \"eps01\";\nsystem_params = { eps = 0.25; };\n",
        NULL, 0, &st);
  cr_expect_str_eq(st.initial, "eps01 (eps=0.25)");
  cr_expect_str_eq(st.ic_names[0], "eps01 (eps=0.25)");
  cr_expect_eq(st.sys.p[0], 0.25);
  /* eps01: q0 = (1, 1, 0), v0 = (0, 0, 2 sqrt 2) (nhbench list systems cvt) */
  cr_expect(st.x0.q[0] == 1 && st.x0.q[1] == 1 && st.x0.q[2] == 0 && st.x0.v[2] == 2 * sqrt(2.0), "preset state kept");
  nh_study_free(&st);
  /* The preset's own value again is no override: the name stays. */
  loads("study = \"convergence\";\nsystem = \"cvt\";\nT = 1.0;\nmethods = [\"rk4\"];\nh = [0.1, 0.05];\n"
        "initial = \"eps01\";\nsystem_params = { eps = 0.1; };\n",
        NULL, 0, &st);
  cr_expect_str_eq(st.initial, "eps01");
  cr_expect_eq(st.sys.p[0], 0.1);
  nh_study_free(&st);
  /* Through --set, every initial condition of a list is renamed. */
  const char *ov[] = {"system_params.eps=0.5"};
  loads("study = \"trajectory\";\nsystem = \"cvt\";\nT = 1.0;\nh = [0.1];\nmethods = [\"rk4\"];\n"
        "observables = [\"energy\"];\ninitial = [\"eps01\", \"eps01\"];\nsystem_params = { eps = 0.1; };\n",
        ov, 1, &st);
  cr_assert_eq(st.nic, 2);
  cr_expect_str_eq(st.ic_names[0], "eps01 (eps=0.5)");
  cr_expect_str_eq(st.ic_names[1], "eps01 (eps=0.5)");
  cr_expect_str_eq(st.initial, "eps01 (eps=0.5)");
  cr_expect_eq(st.sys.p[0], 0.5);
  nh_study_free(&st);
}

/* The notes on stderr: a replaced preset parameter (from the file: FILE:LINE; from --set: FILE:
 * --set system_params.NAME), and a preset off D with its residual |ẏ + sin ξ ẋ| (cvt's constraint)
 * computed here from the printed v0 = (-0.4481, -0.4075, 0.1), q0 = (1, 0, -2). */
Test(spec_settings, notes_on_stderr) {
  char spec[128], out[16384], args[512], want[512], res[128];
  snprintf(spec, sizeof spec, "/tmp/nhbench-mut2-notes-%d.cfg", (int)getpid());
  snprintf(res, sizeof res, "/tmp/nhbench-mut2-notes-%d.h5", (int)getpid());
  test_write_file(spec, "study = \"convergence\";\nsystem = \"cvt\";\nT = 0.2;\nmethods = [\"rk4\"];\nh = [0.1, 0.05];\n"
                        "initial = \"eps01\";\nsystem_params = { eps = 0.25; };\n");
  snprintf(args, sizeof args, "run %s -o %s", spec, res);
  cr_expect_eq(test_run_nhbench(args, out, sizeof out), 0, "%s", out);
  snprintf(want, sizeof want,
           "%s:7: note: system_params eps = 0.25 replaces the preset's eps = 0.1 (initial condition 'eps01' kept)\n", spec);
  cr_expect(strstr(out, want) != NULL, "'%s' lacks '%s'", out, want);
  snprintf(args, sizeof args, "run %s -o %s --set system_params.eps=-0.5", spec, res);
  cr_expect_eq(test_run_nhbench(args, out, sizeof out), 0, "%s", out);
  snprintf(want, sizeof want,
           "%s: --set system_params.eps: note: system_params eps = -0.5 replaces the preset's eps = 0.1 (initial "
           "condition 'eps01' kept)\n",
           spec);
  cr_expect(strstr(out, want) != NULL, "'%s' lacks '%s'", out, want);
  test_write_file(spec, "study = \"convergence\";\nsystem = \"cvt\";\nT = 0.2;\nmethods = [\"rk4\"];\nh = [0.1, 0.05];\n"
                        "\ninitial = \"eps0_printed\";\n");
  snprintf(args, sizeof args, "run %s -o %s", spec, res);
  cr_expect_eq(test_run_nhbench(args, out, sizeof out), 0, "%s", out);
  const double r = fabs(-0.4075 + sin(-2.0) * -0.4481);
  snprintf(want, sizeof want, "%s:7: note: preset 'eps0_printed' is off the constraint distribution: |A(q)v + b| = %.3g\n",
           spec, r);
  cr_expect(strstr(out, want) != NULL, "'%s' lacks '%s'", out, want);
  /* A preset on D has no note. */
  test_write_file(spec, "study = \"convergence\";\nsystem = \"cvt\";\nT = 0.2;\nmethods = [\"rk4\"];\nh = [0.1, 0.05];\n"
                        "initial = \"eps0\";\n");
  cr_expect_eq(test_run_nhbench(args, out, sizeof out), 0, "%s", out);
  cr_expect(strstr(out, "note:") == NULL, "%s", out);
  remove(spec), remove(res);
}

/* A string element of a list is dated by its own line, not by the token after it. */
Test(spec_settings, string_elements_at_their_own_line) {
  refused(CONV3 "h = [0.1, 0.05];\nmethods = [\n  \"rk4\",\n  \"no_such_method\"\n\n];\n", NULL, 0,
          "cfg:7: ");
  /* The same text earlier in a comment does not move it. */
  refused(CONV3 "# \"no_such_method\"\nh = [0.1, 0.05];\nmethods = [\n  \"rk4\",\n  \"no_such_method\"\n\n];\n", NULL, 0,
          "cfg:8: ");
  /* Nor does it later: the search stops at the line libconfig reported. */
  refused(CONV3 "h = [0.1, 0.05];\nmethods = [\n  \"rk4\",\n  \"no_such_method\"\n\n];\n# \"no_such_method\"\n", NULL, 0,
          "cfg:7: ");
  refused(TRAJ3 "h = [0.1];\nmethods = [\"rk4\"];\nobservables = [\"energy\",\n \"nope\"\n];\n", NULL, 0,
          "cfg:7: unknown observable 'nope' (observables: ");
}

/* nh_config_check_integers: lines counted through block comments; numbers inside comments and
 * strings, and reals, are no integer literals. */
Test(spec_settings, integer_literals_after_block_comments) {
  refused(ENS3 "/* a comment\n over 4294967297 three\n lines */ h = 0.5;\nmethods = [\"rk4\"];\n"
               "ensemble = { count = 2; energy = 1.535; seed = 4294967297; };\n",
          NULL, 0,
          ":8: the integer 4294967297 does not fit in 32 bits, and libconfig would read it wrapped; write it with an L "
          "suffix (4294967297L) or as a real (4294967297.0, exact up to 2^53)");
  refused(ENS3 "// 99999999999\nh = 0.5;\nmethods = [\"rk4\"];\n"
               "ensemble = { count = 2; energy = 1.535;\n seed = -4294967297; };\n",
          NULL, 0,
          ":8: the integer -4294967297 does not fit in 32 bits, and libconfig would read it wrapped; write it with an "
          "L suffix (-4294967297L) or as a real (-4294967297.0, exact up to 2^53)");
  nh_study st;
  loads(ENS3 "h = 0.5; /* 99999999999 */\nmethods = [\"rk4\"]; # \"4294967297\n"
             "ensemble = { count = 2; energy = 1.535e0; seed = 4294967296.0; }; // 88888888888\n",
        NULL, 0, &st);
  cr_expect(st.seed == 4294967296ull && st.count == 2);
  nh_study_free(&st);
  /* An escaped quote does not end a string. */
  loads(CONV3 "h = [0.1, 0.05];\nmethods = [\"rk4\"];\nexpected_orders = ( { method = \"rk4\"; order = 4; "
              "reason = \"a \\\" 99999999999\"; } );\n",
        NULL, 0, &st);
  cr_expect_str_eq(st.order_reason[0], "a \" 99999999999");
  nh_study_free(&st);
  /* An unterminated block comment runs to the end: the number in it is no literal (libconfig
   * reads the spec up to the comment). */
  loads(CONV3 "h = [0.1, 0.05];\nmethods = [\"rk4\"];\n/* 99999999999\n", NULL, 0, &st);
  cr_expect_eq(st.nmethods, 1);
  nh_study_free(&st);
}

/* --set: every form. */
Test(spec_settings, set_forms) {
  nh_study st;
  const char *spec = CONV3 "methods = [\"rk4\"];\nh0 = 0.1;\nhalvings = 1;\n";
  /* h replaces h0 and halvings */
  const char *a[] = {"h=[0.2, 0.1 ,0.05]"};
  loads(spec, a, 1, &st);
  cr_expect(st.nh == 3 && st.h[0] == 0.2 && st.h[1] == 0.1 && st.h[2] == 0.05, "nh %d", st.nh);
  cr_expect_str_eq(st.overrides, "h=[0.2, 0.1 ,0.05]");
  nh_study_free(&st);
  const char *a1[] = {"h=0.25", "T=1"};
  refused(spec, a1, 2, ": --set h: this study needs at least 2 step sizes");
  /* h0 replaces h */
  const char *b[] = {"h0=0.2", "halvings=2"};
  loads(CONV3 "methods = [\"rk4\"];\nh = [0.5, 0.25];\n", b, 2, &st);
  cr_expect(st.nh == 3 && st.h[0] == 0.2 && st.h[1] == 0.1 && st.h[2] == 0.05, "nh %d", st.nh);
  cr_expect_str_eq(st.overrides, "h0=0.2 halvings=2");
  nh_study_free(&st);
  const char *b1[] = {"halvings=2"};
  refused(CONV3 "methods = [\"rk4\"];\nh = [0.5, 0.25];\n", b1, 1,
          ": missing setting 'h' (a list of step sizes) or 'h0' and 'halvings'");
  /* an int for a real setting stays a real; a big integer is read exactly */
  const char *c[] = {"T=2", "ensemble.seed=4294967297", "ensemble.energy=2"};
  loads(ENS3 "h = 0.5;\nmethods = [\"rk4\"];\nensemble = { count = 1; energy = 1.535; seed = 1; };\n", c, 3, &st);
  cr_expect(st.T == 2.0 && st.nsteps == 4 && st.seed == 4294967297ull && st.energy == 2.0, "T %g seed %llu", st.T,
            (unsigned long long)st.seed);
  nh_study_free(&st);
  /* norm: the number 2 and the strings */
  const char *n2[] = {"norm=2"}, *nmax[] = {"norm=max"}, *n3[] = {"norm=3"}, *ne[] = {"norm=euclid"};
  loads(CONV3 "methods = [\"rk4\"];\nh = [0.5, 0.25];\n", n2, 1, &st);
  cr_expect_eq(st.norm, NH_NORM_2);
  nh_study_free(&st);
  loads(CONV3 "methods = [\"rk4\"];\nh = [0.5, 0.25];\nnorm = \"2\";\n", nmax, 1, &st);
  cr_expect_eq(st.norm, NH_NORM_MAX);
  nh_study_free(&st);
  refused(CONV3 "methods = [\"rk4\"];\nh = [0.5, 0.25];\n", n3, 1, ": --set norm: norm = '(not a string)': expected \"max\" or \"2\"");
  refused(CONV3 "methods = [\"rk4\"];\nh = [0.5, 0.25];\n", ne, 1, ": --set norm: norm = 'euclid': expected \"max\" or \"2\"");
  /* a list of strings */
  const char *m[] = {"methods=[\"js_a\", \"rk4\",\"js_b\"]"};
  loads(CONV3 "methods = [\"rk4\"];\nh = [0.5, 0.25];\n", m, 1, &st);
  cr_expect(st.nmethods == 3 && strcmp(st.method_names[0], "js_a") == 0 && strcmp(st.method_names[1], "rk4") == 0 &&
                strcmp(st.method_names[2], "js_b") == 0,
            "methods %d", st.nmethods);
  nh_study_free(&st);
  /* a nested setting names its path in messages */
  const char *e[] = {"ensemble.count=0"};
  refused(ENS3 "h = 0.5;\nmethods = [\"rk4\"];\nensemble = { count = 1; energy = 1.535; seed = 1; };\n", e, 1,
          ": --set ensemble.count: count = 0 must be a whole number in [1, 1000000]");
  /* a new setting the kind does not know is refused like one in the file */
  const char *u[] = {"colour=3"};
  refused(CONV3 "methods = [\"rk4\"];\nh = [0.5, 0.25];\n", u, 1, "cfg: --set colour: unknown setting 'colour' (known here: ");
  /* a string value */
  const char *s[] = {"initial=eps01"};
  loads("study = \"convergence\";\nsystem = \"cvt\";\nT = 1.0;\nmethods = [\"rk4\"];\nh = [0.1, 0.05];\n", s, 1, &st);
  cr_expect_str_eq(st.initial, "eps01");
  cr_expect_eq(st.sys.p[0], 0.1);
  nh_study_free(&st);
  /* a string quoted as in a spec: its text, a string even where it reads as a number ("2") */
  const char *q[] = {"initial=\"eps01\"", "norm=\"2\""};
  loads("study = \"convergence\";\nsystem = \"cvt\";\nT = 1.0;\nmethods = [\"rk4\"];\nh = [0.1, 0.05];\n", q, 2, &st);
  cr_expect_str_eq(st.initial, "eps01");
  cr_expect_eq(st.sys.p[0], 0.1);
  cr_expect_eq(st.norm, NH_NORM_2);
  nh_study_free(&st);
  const char *qt[] = {"T=\"1\""}, *q1[] = {"initial=\""};
  refused(CONV3 "methods = [\"rk4\"];\nh = [0.5, 0.25];\n", qt, 1, ": --set T: 'T' must be a number, not \"1\"");
  refused(CONV3 "methods = [\"rk4\"];\nh = [0.5, 0.25];\n", q1, 1,
          ": --set initial: system particle has no preset '\"' (presets: newmark, discretization, harmonic, rattle)");
}

/* --set refusals: each with its own message, exactly. */
Test(spec_settings, set_refusals) {
  const char *spec = CONV3 "methods = [\"rk4\"];\nh = [0.5, 0.25];\n";
  const struct {
    const char *ov, *want;
  } cases[] = {
      {"T", "--set 'T': expected PATH=VALUE, e.g. ensemble.count=100"},
      {"=3", "--set '=3': expected PATH=VALUE, e.g. ensemble.count=100"},
      {"nosuch.x=3", "--set 'nosuch.x=3': no group 'nosuch' in the spec"},
      {"T.x=3", "--set 'T.x=3': no group 'T' in the spec"},
      {"h=[0.1", "--set 'h=[0.1': a list is [a, b, ...], closed by ']'"},
      {"h=[", "--set 'h=[': a list is [a, b, ...], closed by ']'"},
      {"h=[]", "--set 'h=[]': a list holds numbers or \"strings\", separated by commas, e.g. h=[0.1,0.05]"},
      {"h=[0.1 0.05]", "--set 'h=[0.1 0.05]': a list holds numbers or \"strings\", separated by commas, e.g. h=[0.1,0.05]"},
      {"h=[0.1,]", "--set 'h=[0.1,]': a list holds numbers or \"strings\", separated by commas, e.g. h=[0.1,0.05]"},
      {"h=[0.1,\"a\"]", "--set 'h=[0.1,\"a\"]': a list holds numbers or \"strings\", separated by commas, e.g. h=[0.1,0.05]"},
      {"methods=[\"rk4\",0.1]", "--set 'methods=[\"rk4\",0.1]': a list holds numbers or \"strings\", separated by commas, e.g. h=[0.1,0.05]"},
      {"methods=[\"rk4]", "--set 'methods=[\"rk4]': a list holds numbers or \"strings\", separated by commas, e.g. h=[0.1,0.05]"},
      {"h=[0.1]x]", "--set 'h=[0.1]x]': a list holds numbers or \"strings\", separated by commas, e.g. h=[0.1,0.05]"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    nh_study st;
    char path[128], err[2048];
    const char *ov[] = {cases[i].ov};
    cr_expect_eq(load_spec(spec, ov, 1, &st, path, sizeof path, err, sizeof err), -1, "--set %s loaded", cases[i].ov);
    cr_expect_str_eq(err, cases[i].want, "--set %s", cases[i].ov);
    nh_study_free(&st);
  }
  /* one-element lists of either kind load */
  nh_study st;
  const char *one[] = {"h=[0.5]", "T=0.5"};
  char path[128], err[2048];
  cr_expect_eq(load_spec(TRAJ3 "methods = [\"rk4\"];\nh = [0.1];\nobservables = [\"energy\"];\n", one, 2, &st, path,
                         sizeof path, err, sizeof err),
               0, "%s", err);
  cr_expect(st.nh == 1 && st.h[0] == 0.5 && st.T == 0.5);
  nh_study_free(&st);
}

/* An unknown system is refused at its line, naming it and every system of the registry, in the
 * registry's order, ", " between. */
Test(spec_settings, unknown_system_lists_every_system) {
  char want[1024] = ":2: unknown system 'no_such' (systems: ";
  for (int i = 0; nh_system_types[i]; i++)
    snprintf(want + strlen(want), sizeof want - strlen(want), "%s%s", i ? ", " : "", nh_system_types[i]->name);
  cr_assert_lt(strlen(want), sizeof want - 2);
  strcat(want, ")");
  refused("study = \"convergence\";\nsystem = \"no_such\";\nT = 1.0;\nmethods = [\"rk4\"];\nh = [0.1, 0.05];\n", NULL,
          0, want);
}

/* An unknown system parameter is named once with its system (the message said "system cvt:
 * system cvt: ..." before). */
Test(spec_settings, unknown_system_parameter) {
  nh_study st;
  char path[128], err[2048];
  cr_expect_eq(load_spec("study = \"convergence\";\nsystem = \"cvt\";\nT = 1.0;\nmethods = [\"rk4\"];\nh = [0.1, 0.05];\n"
                         "system_params = { epsilon = 0.1; };\n",
                         NULL, 0, &st, path, sizeof path, err, sizeof err),
               -1);
  char want[256];
  snprintf(want, sizeof want, "%s:6: system cvt: ", path);
  cr_expect(strncmp(err, want, strlen(want)) == 0 && strstr(err, "epsilon") != NULL, "%s", err);
  cr_expect(strstr(err + strlen(want), "system cvt:") == NULL, "the system named twice: %s", err);
  nh_study_free(&st);
}

/* Every setting of every study kind is checked where that kind loads it: a bad value appended
 * as line 6 of an otherwise valid spec is refused at line 6, naming the setting (a kind that
 * skipped one of its checks, or ignored its failure, would load). */
Test(spec_settings, every_kind_refuses_each_bad_setting) {
#define CONV_OK CONV3 "h = [0.1, 0.05];\n"
#define TRAJ_OK TRAJ3 "h = [0.1];\n"
#define ONE_OK ONE3 "h = [0.1, 0.05];\n"
#define WP_OK "study = \"work_precision\";\nsystem = \"particle\";\nT = 1.0;\nh = [0.1];\n"
#define ENS_OK ENS3 "h = 0.5;\n"
#define RK4 "methods = [\"rk4\"];\n"
#define TRAJ_TAIL RK4 "observables = [\"energy\"];\n"
#define ENS_TAIL RK4 "ensemble = { count = 2; energy = 1.535; seed = 1; };\n"
  static const struct {
    const char *head, *tail, *bad, *names;
  } rows[] = {
      {CONV_OK, RK4, "bogus = 1;\n", "unknown setting 'bogus'"},
      {CONV_OK, RK4, "initial = \"no_such_preset\";\n", "no_such_preset"},
      {CONV_OK, RK4, "system_params = { no_such = 1.0; };\n", "no_such"},
      {CONV_OK, RK4, "fit_points = 1;\n", "fit_points = 1 "},
      {CONV_OK, RK4, "error_floor = \"x\";\n", "'error_floor' must be a number"},
      {CONV_OK, RK4, "reference_tol = 1.0;\n", "reference_tol = 1 must lie"},
      {CONV_OK, RK4, "norm = \"l1\";\n", "norm = 'l1'"},
      {CONV_OK, RK4, "order_tolerance = \"x\";\n", "'order_tolerance' must be a number"},
      {CONV3, RK4, "h = [0.3, 0.2];\n", "h = 0.3"},
      {TRAJ_OK, TRAJ_TAIL, "bogus = 1;\n", "unknown setting 'bogus'"},
      {TRAJ_OK, TRAJ_TAIL, "initial = \"no_such_preset\";\n", "no_such_preset"},
      {TRAJ_OK, TRAJ_TAIL, "system_params = { no_such = 1.0; };\n", "no_such"},
      {TRAJ_OK, TRAJ_TAIL, "sample_every = 0;\n", "sample_every = 0 "},
      {TRAJ_OK, TRAJ_TAIL, "divergence = -1.0;\n", "divergence must be"},
      {TRAJ_OK, TRAJ_TAIL, "reference_tol = 1.0;\n", "reference_tol = 1 must"},
      {TRAJ_OK, TRAJ_TAIL, "reference_tol = \"x\";\n", "'reference_tol' must be a number"},
      {TRAJ3, TRAJ_TAIL, "h = [0.3];\n", "h = 0.3"},
      {ONE_OK, RK4, "bogus = 1;\n", "unknown setting 'bogus'"},
      {ONE_OK, RK4, "initial = \"no_such_preset\";\n", "no_such_preset"},
      {ONE_OK, RK4, "system_params = { no_such = 1.0; };\n", "no_such"},
      {ONE_OK, RK4, "points = 0;\n", "points = 0 "},
      {ONE_OK, RK4, "fit_points = 1;\n", "fit_points = 1 "},
      {ONE_OK, RK4, "error_floor = \"x\";\n", "'error_floor' must be a number"},
      {ONE_OK, RK4, "reference_tol = 1.0;\n", "reference_tol = 1 must lie"},
      {ONE_OK, RK4, "norm = \"l1\";\n", "norm = 'l1'"},
      {ONE3, RK4, "h = [0.1];\n", "needs at least 2 step sizes"},
      {WP_OK, RK4, "bogus = 1;\n", "unknown setting 'bogus'"},
      {WP_OK, RK4, "initial = \"no_such_preset\";\n", "no_such_preset"},
      {WP_OK, RK4, "system_params = { no_such = 1.0; };\n", "no_such"},
      {WP_OK, RK4, "norm = \"l1\";\n", "norm = 'l1'"},
      {WP_OK, RK4, "repeats = 0;\n", "repeats = 0 "},
      {WP_OK, RK4, "time_limit = 0.0;\n", "time_limit must be"},
      {WP_OK, RK4, "reference_tol = \"x\";\n", "'reference_tol' must be a number"},
      {ENS_OK, ENS_TAIL, "bogus = 1;\n", "unknown setting 'bogus'"},
      {ENS_OK, ENS_TAIL, "sample_every = 0;\n", "sample_every = 0 "},
      {ENS_OK, ENS_TAIL, "divergence = 0.0;\n", "divergence must be"},
      {ENS_OK, ENS_TAIL, "reference_tol = \"x\";\n", "'reference_tol' must be a number"},
      {ENS_OK, ENS_TAIL, "observables = [\"nope\"];\n", "unknown observable 'nope'"},
      {ENS_OK, RK4, "ensemble = { count = 0; energy = 1.535; seed = 1; };\n", "count = 0 "},
      {ENS_OK, RK4, "initial = [\"no_such_preset\"];\n", "no_such_preset"},
  };
  for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
    char text[1024], where[160];
    snprintf(text, sizeof text, "%s%s%s", rows[i].head, rows[i].bad, rows[i].tail);
    int at = 1;
    for (const char *p = rows[i].head; *p; p++) at += *p == '\n';
    snprintf(where, sizeof where, "cfg:%d: ", at);
    nh_study st;
    char path[128], err[2048];
    const int rc = load_spec(text, NULL, 0, &st, path, sizeof path, err, sizeof err);
    cr_expect_eq(rc, -1, "row %zu loaded:\n%s", i, text);
    cr_expect(strstr(err, where) && strstr(err, rows[i].names), "row %zu: '%s' lacks '%s' or '%s'", i, err, where,
              rows[i].names);
    nh_study_free(&st);
  }
}

/* At most 9e15 steps (below 2^53, where every whole number of steps is a double): 9e15 steps of
 * h = 1 pass that check (and meet the next, the sample count), one step more is refused with T as
 * typed, in an ensemble and a convergence study alike; a fraction of a step is refused as such. */
Test(spec_settings, at_most_9e15_steps) {
  const char *const ok[] = {"T=9.0e15", "sample_every=32768"}, *const over[] = {"T=9000000000000001.0"};
  refused(ENS3 "h = 1.0;\n" ENS_TAIL, ok, 2,
          "9000000000000000 steps sampled every 32768 make more than 2147483646 samples per run");
  refused(ENS3 "h = 1.0;\n" ENS_TAIL, over, 1, ":4: T = 9000000000000001 makes more than 9e15 steps of h = 1");
  refused(CONV3 "h = [0.5, 1.0];\n" RK4, over, 1, ":4: T = 9000000000000001 makes more than 9e15 steps of h = 0.5");
  refused(ENS3 "h = 0.3;\n" ENS_TAIL, NULL, 0, ":4: T = 2 is not a whole number of steps of h = 0.3");
}

/* Which kind takes which setting, as README.md ("Study specs") documents it (studies/settings.c
 * is the loader's table): a setting of another kind is refused by name, and the documented
 * defaults hold where the spec is silent. */
#define WP3 "study = \"work_precision\";\nsystem = \"particle\";\nT = 1.0;\n"
#define TWO_H "methods = [\"rk4\"];\nh = [0.1, 0.05];\n"
#define ENS_BODY "methods = [\"rk4\"];\nh = 0.2;\nensemble = { count = 2; energy = 1.535; seed = 1; };\n"
Test(spec_settings, each_kind_takes_its_documented_settings) {
  static const struct {
    const char *spec, *setting;
  } others[] = {
      {CONV3 TWO_H, "round_trip = true;"},  {CONV3 TWO_H, "sample_every = 2;"}, {CONV3 TWO_H, "repeats = 2;"},
      {CONV3 TWO_H, "points = 2;"},         {CONV3 TWO_H, "observables = [\"energy\"];"},
      {TRAJ3 TWO_H, "points = 2;"},         {TRAJ3 TWO_H, "norm = \"2\";"},     {TRAJ3 TWO_H, "fit_points = 2;"},
      {ENS3 ENS_BODY, "h0 = 0.2;"},         {ENS3 ENS_BODY, "halvings = 2;"},   {ENS3 ENS_BODY, "time_limit = 2;"},
      {ENS3 ENS_BODY, "round_trip = true;"}, {ONE3 TWO_H, "order_tolerance = 0.1;"},
      {ONE3 TWO_H, "expected_orders = ();"}, {ONE3 TWO_H, "divergence = 10;"}, {WP3 TWO_H, "fit_points = 2;"},
      {WP3 TWO_H, "ensemble = { count = 2; energy = 1.5; seed = 1; };"},    {WP3 TWO_H, "sample_every = 2;"},
  };
  for (size_t i = 0; i < sizeof others / sizeof *others; i++) {
    char text[1024], want[128], name[32];
    snprintf(text, sizeof text, "%s%s\n", others[i].spec, others[i].setting);
    sscanf(others[i].setting, "%31[a-z_0-9]", name);
    snprintf(want, sizeof want, "unknown setting '%s' (known here: study, system, ", name);
    refused(text, NULL, 0, want);
  }
  nh_study st;
  loads(TRAJ3 TWO_H "observables = [\"energy_error\"];\nround_trip = true;\n", NULL, 0, &st);
  cr_expect(st.round_trip == 1 && st.sample_every == 1 && st.divergence == 1e3, "trajectory defaults");
  nh_study_free(&st);
  loads(CONV3 TWO_H, NULL, 0, &st);
  cr_expect(st.fit_points == 3 && st.order_tolerance == 0.15 && st.norm == NH_NORM_MAX, "convergence defaults");
  nh_study_free(&st);
  loads(ONE3 TWO_H, NULL, 0, &st);
  cr_expect(st.npoints == 8 && st.fit_points == 3, "one-step defaults: %d points", st.npoints);
  nh_study_free(&st);
  loads(WP3 TWO_H, NULL, 0, &st);
  cr_expect(st.repeats == 3 && st.time_limit == 60, "work-precision defaults: %d repeats, %g s", st.repeats,
            st.time_limit);
  nh_study_free(&st);
  loads(ENS3 ENS_BODY, NULL, 0, &st);
  cr_expect(st.sample_every == 1 && st.divergence == 1e3 && st.nh == 1 && st.h[0] == 0.2, "ensemble defaults");
  nh_study_free(&st);
  /* The ranges of whole numbers: the bounds pass, one past them is refused. */
  loads(CONV3 "methods = [\"rk4\"];\nh0 = 0.5;\nhalvings = 30;\nfit_points = 100;\n", NULL, 0, &st);
  nh_study_free(&st);
  refused(CONV3 "methods = [\"rk4\"];\nh0 = 0.5;\nhalvings = 31;\n", NULL, 0,
          ":6: halvings = 31 must be a whole number in [1, 30]");
  refused(CONV3 TWO_H "fit_points = 1;\n", NULL, 0, ":6: fit_points = 1 must be a whole number in [2, 100]");
  refused(ONE3 TWO_H "points = 100001;\n", NULL, 0, ":6: points = 100001 must be a whole number in [1, 100000]");
  refused(WP3 TWO_H "repeats = 1001;\n", NULL, 0, ":6: repeats = 1001 must be a whole number in [1, 1000]");
  refused(TRAJ3 TWO_H "sample_every = 0;\n", NULL, 0, ":6: sample_every = 0 must be a whole number in [1, 1073741824]");
}
