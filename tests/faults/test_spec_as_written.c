/* Specs are read as written (issue 47 items 4 and 5, README "Security"): `@include`d files are
 * part of the spec's text (spec_text, the journal's key, their own integer checks and line
 * numbers in messages); integer literals of every base are checked against what libconfig would
 * read before it reads them; non-finite numbers, NUL bytes and strings too long to keep are
 * refused, never cut or wrapped. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "results/results.h"
#include "studies/study.h"
#include "tests/helpers.h"

/* A directory of this test's own (under /tmp) for specs and their includes. */
static void test_dir(char *dir, size_t len, const char *tag) {
  snprintf(dir, len, "/tmp/nhbench-aswritten-%d-%s", (int)getpid(), tag);
  mkdir(dir, 0755);
}

static void write_in(const char *dir, const char *name, const char *text) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  test_write_file(path, text);
}

#define HEAD "study = \"ensemble\";\nsystem = \"chaotic_particle\";\n"
#define TAIL "h = 0.2;\nsample_every = 2;\nmethods = [ \"rk4\" ];\n"
#define ENSEMBLE(seed) "T = 2.0;\nensemble = { count = 2; energy = 1.535; seed = " seed "; };\n"

/* nh_study_load of dir/main.cfg with the overrides: its return, the message in err. */
static int load(const char *dir, const char *const *ov, int nov, nh_study *st, char *err, size_t len) {
  char path[512];
  snprintf(path, sizeof path, "%s/main.cfg", dir);
  return nh_study_load(path, ov, nov, st, err, len);
}

Test(spec_as_written, an_include_is_part_of_the_spec_text) {
  char dir[256], err[1024], sub[300];
  test_dir(dir, sizeof dir, "include");
  snprintf(sub, sizeof sub, "%s/parts", dir);
  mkdir(sub, 0755);
  /* parts/ensemble.cfg includes parts/seed.cfg by a name relative to its own directory. */
  write_in(dir, "main.cfg", HEAD "  @include \"parts/ensemble.cfg\"  # the ensemble\n" TAIL);
  write_in(sub, "ensemble.cfg", "T = 2.0;\n@include \"seed.cfg\"\n");
  write_in(sub, "seed.cfg", "ensemble = { count = 2; energy = 1.535; seed = 11; };");
  nh_study st;
  cr_assert_eq(load(dir, NULL, 0, &st, err, sizeof err), 0, "%s", err);
  cr_expect_str_eq(st.spec_text, HEAD "T = 2.0;\nensemble = { count = 2; energy = 1.535; seed = 11; };\n" TAIL);
  cr_expect_eq(st.seed, 11);
  cr_assert_eq(st.nspec_inputs, 3);
  cr_expect(strstr(st.spec_inputs[1], "parts/ensemble.cfg") && strstr(st.spec_inputs[2], "parts/seed.cfg"));
  nh_study_free(&st);
  /* A message about a setting of an included file names that file and its line. */
  write_in(sub, "seed.cfg", "\n\nensemble = { count = 2; energy = 1.535; seed = -3; };\n");
  cr_expect_eq(load(dir, NULL, 0, &st, err, sizeof err), -1);
  cr_expect(strstr(err, "parts/seed.cfg:3: seed = -3"), "%s", err);
  nh_study_free(&st);
  /* A syntax error in an included file: that file and line; after the include, the main file's. */
  write_in(sub, "seed.cfg", "ensemble = { count = 2; energy = 1.535; seed = 11; };\nX = = 3;\n");
  cr_expect_eq(load(dir, NULL, 0, &st, err, sizeof err), -1);
  cr_expect(strstr(err, "parts/seed.cfg:2: syntax error"), "%s", err);
  nh_study_free(&st);
  write_in(sub, "seed.cfg", "ensemble = { count = 2; energy = 1.535; seed = 11; };\n");
  write_in(dir, "main.cfg", HEAD "@include \"parts/ensemble.cfg\"\nh = 0.2;\nbogus = 1;\nsample_every = 2;\n");
  cr_expect_eq(load(dir, NULL, 0, &st, err, sizeof err), -1);
  cr_expect(strstr(err, "main.cfg:5: unknown setting 'bogus'"), "%s", err);
  nh_study_free(&st);
}

Test(spec_as_written, bad_includes_are_refused) {
  char dir[256], err[1024];
  test_dir(dir, sizeof dir, "badinclude");
  nh_study st;
  static const struct {
    const char *main, *expect;
  } cases[] = {
      {HEAD "@include \"missing.cfg\"\n", "main.cfg:3: @include: "},
      {HEAD "@include \"main.cfg\"\n", "nested more than 10 deep"},
      {HEAD "@include missing.cfg\n", "main.cfg:3: an include is"},
      {HEAD "@include \"a.cfg\" T = 1;\n", "main.cfg:3: an include is"},
      {HEAD "@include \"\"\n", "main.cfg:3: an include is"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    write_in(dir, "main.cfg", cases[i].main);
    cr_expect_eq(load(dir, NULL, 0, &st, err, sizeof err), -1, "case %zu", i);
    cr_expect(strstr(err, cases[i].expect), "case %zu: %s", i, err);
    nh_study_free(&st);
  }
  /* A chain of 10 includes is fine, 11 is not. */
  for (int depth = 10; depth <= 11; depth++) {
    char name[32], text[64];
    for (int k = 1; k <= depth; k++) {
      snprintf(name, sizeof name, "c%d.cfg", k);
      if (k < depth) snprintf(text, sizeof text, "@include \"c%d.cfg\"\n", k + 1);
      else snprintf(text, sizeof text, ENSEMBLE("5"));
      write_in(dir, name, text);
    }
    write_in(dir, "main.cfg", HEAD "@include \"c1.cfg\"\n" TAIL);
    const int rc = load(dir, NULL, 0, &st, err, sizeof err);
    cr_expect_eq(rc, depth <= 10 ? 0 : -1, "depth %d: %s", depth, err);
    nh_study_free(&st);
  }
}

/* Integer literals: each one read by libconfig otherwise than written is refused, naming its file
 * and line; the largest that read as written pass, in the main file and in an included one. */
Test(spec_as_written, integer_literals_are_checked_in_every_base) {
  static const struct {
    const char *literal;
    int ok;
  } cases[] = {
      {"2147483647", 1},          {"2147483648", 0},          {"-2147483648", 1},
      {"-2147483649", 0},         {"0x7fffffff", 1},          {"0x80000000", 0},
      {"0xFFFFFFFF", 0},          {"0x100000001", 0},         {"0x7FFFFFFFFFFFFFFFL", 1},
      {"0x8000000000000000L", 0}, {"0x10000000000000001L", 0}, {"9223372036854775807L", 1},
      {"9223372036854775808L", 0}, {"-9223372036854775808L", 1}, {"-9223372036854775809L", 0},
      {"99999999999999999999L", 0}, {"4294967297L", 1},        {"0x100000001L", 1},
  };
  char err[1024];
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char text[256];
    snprintf(text, sizeof text, "# an integer\nx = 1.5e3;\ny = %s;\n", cases[i].literal);
    const int rc = nh_config_check_integers("f.cfg", text, err, sizeof err);
    cr_expect_eq(rc, cases[i].ok ? 0 : -1, "%s: %s", cases[i].literal, err);
    if (!cases[i].ok) cr_expect(strstr(err, "f.cfg:3: the integer") && strstr(err, cases[i].literal), "%s", err);
  }
  char dir[256];
  test_dir(dir, sizeof dir, "literals");
  write_in(dir, "main.cfg", HEAD "@include \"e.cfg\"\n" TAIL);
  write_in(dir, "e.cfg", "\n" ENSEMBLE("0x100000001"));
  nh_study st;
  cr_expect_eq(load(dir, NULL, 0, &st, err, sizeof err), -1);
  cr_expect(strstr(err, "e.cfg:3: the integer 0x100000001"), "%s", err);
  nh_study_free(&st);
}

/* The seed is read exactly up to 2^63 − 1 as an integer; a real only below 2^53 (2^53 + 1 as a
 * real already reads as 2^53); other numbers beyond 2^53 are refused. */
Test(spec_as_written, seeds_and_large_integers_read_exactly) {
  char dir[256], err[1024];
  test_dir(dir, sizeof dir, "seed");
  nh_study st;
  static const struct {
    const char *seed;
    unsigned long long value; /* 0: refused */
  } cases[] = {{"9007199254740993L", 9007199254740993ull},
               {"9223372036854775807L", 9223372036854775807ull},
               {"9007199254740991.0", 9007199254740991ull},
               {"9007199254740993.0", 0},
               {"9007199254740992.0", 0},
               {"-1L", 0},
               {"1.5", 0}};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char text[512];
    snprintf(text, sizeof text, HEAD "T = 2.0;\nensemble = { count = 2; energy = 1.535; seed = %s; };\n" TAIL,
             cases[i].seed);
    write_in(dir, "main.cfg", text);
    const int rc = load(dir, NULL, 0, &st, err, sizeof err);
    cr_expect_eq(rc, cases[i].value ? 0 : -1, "seed %s: %s", cases[i].seed, err);
    if (cases[i].value) cr_expect_eq(st.seed, cases[i].value, "seed %s read as %llu", cases[i].seed,
                                     (unsigned long long)st.seed);
    else cr_expect(strstr(err, "main.cfg:4: "), "%s", err);
    nh_study_free(&st);
  }
  /* By --set too. */
  write_in(dir, "main.cfg", HEAD ENSEMBLE("7.0") TAIL);
  const char *big[] = {"ensemble.seed=9007199254740993"};
  cr_expect_eq(load(dir, big, 1, &st, err, sizeof err), 0, "%s", err);
  cr_expect_eq(st.seed, 9007199254740993ull);
  nh_study_free(&st);
  /* A number other than the seed beyond 2^53 is refused, not rounded. */
  const char *T[] = {"T=9007199254740993"};
  cr_expect_eq(load(dir, T, 1, &st, err, sizeof err), -1);
  cr_expect(strstr(err, "--set T: 'T' = 9007199254740993 is beyond 2^53"), "%s", err);
  nh_study_free(&st);
}

/* NaN and inf are refused wherever a finite number is meant: the ensemble's energy, an initial
 * state, a step, by file (1e400 reads as inf) or by --set. */
Test(spec_as_written, non_finite_numbers_are_refused) {
  char dir[256], err[1024];
  test_dir(dir, sizeof dir, "finite");
  nh_study st;
  write_in(dir, "main.cfg", HEAD "T = 2.0;\nensemble = { count = 2; energy = 1e400; seed = 1; };\n" TAIL);
  cr_expect_eq(load(dir, NULL, 0, &st, err, sizeof err), -1);
  cr_expect(strstr(err, "main.cfg:4: 'energy' = inf must be a finite number"), "%s", err);
  nh_study_free(&st);
  write_in(dir, "main.cfg", HEAD ENSEMBLE("1") TAIL);
  static const char *const sets[][2] = {{"ensemble.energy=nan", "--set ensemble.energy: 'energy' = nan"},
                                        {"ensemble.energy=-inf", "'energy' = -inf must be a finite number"},
                                        {"ensemble.energy=1e999", "'energy' = inf must be a finite number"}};
  for (int i = 0; i < 3; i++) {
    cr_expect_eq(load(dir, &sets[i][0], 1, &st, err, sizeof err), -1, "%s", sets[i][0]);
    cr_expect(strstr(err, sets[i][1]), "%s: %s", sets[i][0], err);
    nh_study_free(&st);
  }
  write_in(dir, "main.cfg", "study = \"trajectory\";\nsystem = \"particle\";\nT = 1.0;\nh = [0.1];\n"
                            "sample_every = 1;\nmethods = [\"rk4\"];\n"
                            "initial = ( { q = [0.0, 0.0, 0.0]; v = [1.0, nan, 0.0]; } );\n");
  cr_expect_eq(load(dir, NULL, 0, &st, err, sizeof err), -1, "nan is no number in libconfig");
  nh_study_free(&st);
  write_in(dir, "main.cfg", "study = \"trajectory\";\nsystem = \"particle\";\nT = 1.0;\nh = [0.1];\n"
                            "sample_every = 1;\nmethods = [\"rk4\"];\n"
                            "initial = ( { q = [0.0, 0.0, 0.0]; v = [1.0, 1e999, 0.0]; } );\n");
  cr_expect_eq(load(dir, NULL, 0, &st, err, sizeof err), -1);
  cr_expect(strstr(err, "main.cfg:7: entry 2 of 'v' = inf must be a finite number"), "%s", err);
  nh_study_free(&st);
  write_in(dir, "main.cfg", "study = \"trajectory\";\nsystem = \"particle\";\nT = 1.0;\nh = [0.1];\n"
                            "sample_every = 1;\nmethods = [\"rk4\"];\ninitial = [\"newmark\"];\n");
  const char *h[] = {"h=[0.1, inf]"};
  cr_expect_eq(load(dir, h, 1, &st, err, sizeof err), -1);
  cr_expect(strstr(err, "--set h: entry 2 of 'h' = inf must be a finite number"), "%s", err);
  nh_study_free(&st);
}

/* A NUL byte in a spec or an included file is refused with its line (libconfig would stop reading
 * there and ignore the rest). */
Test(spec_as_written, nul_bytes_are_refused) {
  char dir[256], err[1024], path[512];
  test_dir(dir, sizeof dir, "nul");
  static const char text[] = HEAD "T = 2.0;\n# a comment\0T = 3.0;\n" ENSEMBLE("1") TAIL;
  for (int included = 0; included < 2; included++) {
    snprintf(path, sizeof path, "%s/%s", dir, included ? "part.cfg" : "main.cfg");
    FILE *f = fopen(path, "wb");
    cr_assert(f && fwrite(text, 1, sizeof text - 1, f) == sizeof text - 1 && fclose(f) == 0);
    if (included) write_in(dir, "main.cfg", "\n@include \"part.cfg\"\n");
    nh_study st;
    cr_expect_eq(load(dir, NULL, 0, &st, err, sizeof err), -1);
    cr_expect(strstr(err, included ? "part.cfg:4: a NUL byte" : "main.cfg:4: a NUL byte"), "%s", err);
    nh_study_free(&st);
  }
}

/* --set strings are kept whole: a list's string of 300 characters is not cut; a setting's path
 * longer than the limit is refused, naming the limit. */
Test(spec_as_written, set_strings_are_never_cut) {
  char dir[256], err[1024];
  test_dir(dir, sizeof dir, "long");
  write_in(dir, "main.cfg", HEAD ENSEMBLE("1") TAIL);
  /* A method of 300 characters (beta written with many zeros): whole, it is good; cut at 255
   * characters, it would lose its closing parenthesis. */
  char method[400] = "nh_newmark(beta=0.1", set[600], path[400];
  while (strlen(method) < 298) strcat(method, "0");
  strcat(method, "1)");
  snprintf(set, sizeof set, "methods=[\"%s\"]", method);
  const char *ov[] = {set};
  nh_study st;
  cr_expect_eq(load(dir, ov, 1, &st, err, sizeof err), 0, "%s", err);
  nh_study_free(&st);
  memset(path, 'a', 300);
  path[300] = '\0';
  snprintf(set, sizeof set, "%s=1", path);
  cr_expect_eq(load(dir, ov, 1, &st, err, sizeof err), -1);
  cr_expect(strstr(err, "longer than 255 characters"), "%s", err);
  nh_study_free(&st);
}
