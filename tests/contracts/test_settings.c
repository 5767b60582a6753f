/* The spec settings' table (studies/settings.c) against README.md's "Study specs", which documents
 * them: every setting there is in the table and every setting of the table there; and the table
 * itself is well formed (a kind each, defaults within their ranges, names unique). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "studies/settings.h"
#include "tests/helpers.h"

/* README.md's "## Study specs" section, up to its "### Observables" (malloc'd). */
static char *study_specs_section(void) {
  char path[512];
  snprintf(path, sizeof path, "%s/README.md", NHBENCH_SOURCE_DIR);
  size_t len;
  char *text = test_file_bytes(path, &len);
  cr_assert_not_null(text);
  text[len] = '\0'; /* test_file_bytes leaves room for it */
  char *from = strstr(text, "\n## Study specs\n"), *to = from ? strstr(from, "\n### Observables\n") : NULL;
  cr_assert(from && to, "README.md has no section \"Study specs\" followed by \"Observables\"");
  *to = '\0';
  memmove(text, from, strlen(from) + 1);
  return text;
}

Test(settings, readme_documents_every_setting_and_no_other) {
  char *readme = study_specs_section();
  for (const nh_setting *s = nh_settings; s->name; s++) {
    char quoted[64];
    snprintf(quoted, sizeof quoted, "`%s`", s->name);
    cr_expect(strstr(readme, quoted) != NULL, "README.md's Study specs never names the setting %s", quoted);
  }
  int rows = 0;
  for (const char *p = readme; (p = strstr(p, "\n| `")); p++) {
    char name[64];
    if (sscanf(p, "\n| `%63[^`]`", name) != 1 || strcmp(name, "setting") == 0) continue;
    rows++;
    cr_expect_not_null(nh_setting_named(name), "README.md documents a setting '%s' the table lacks", name);
  }
  cr_expect_geq(rows, 15, "the settings tables' rows");
  free(readme);
}

Test(settings, table_is_well_formed) {
  int count = 0;
  for (const nh_setting *s = nh_settings; s->name; s++, count++) {
    int kinds = 0;
    for (int k = 0; k < NH_STUDY_KINDS; k++) kinds += nh_setting_of_kind(s, nh_study_kinds[k]);
    cr_expect(kinds > 0, "%s: no kind takes it", s->name);
    cr_expect(s->type && s->type[0] && s->help && s->help[0], "%s: type and help", s->name);
    cr_expect_eq(nh_setting_named(s->name), s, "%s is named twice", s->name);
    if (!isnan(s->min)) {
      cr_expect_leq(s->min, s->max, "%s", s->name);
      cr_expect(isnan(s->def) || (s->def >= s->min && s->def <= s->max && s->def == floor(s->def)),
                "%s: default %g outside [%g, %g]", s->name, s->def, s->min, s->max);
    }
    cr_expect(isnan(s->def) || !s->def_text, "%s: a default in numbers and in words", s->name);
  }
  cr_expect_null(nh_setting_named("colour"));
  cr_expect_null(nh_setting_named(NULL));
  /* Every kind takes the settings every spec has. */
  const char *const common[] = {"study", "system", "T", "h", "methods"};
  for (int k = 0; k < NH_STUDY_KINDS; k++)
    for (size_t i = 0; i < sizeof common / sizeof *common; i++)
      cr_expect(nh_setting_of_kind(nh_setting_named(common[i]), nh_study_kinds[k]), "%s", common[i]);
  cr_expect_gt(count, 20);
}

/* Each word of a kind's settings and stores (studies/kinds.h) names what the table has: a setting
 * not every kind takes already, and an attribute of a setting the kind takes; a misspelt name
 * would leave a setting refused or an attribute unwritten without a word. */
static int words(const char *list, char out[][32], int max) {
  int n = 0;
  for (const char *p = list; *p && n < max;) {
    p += strspn(p, " ");
    const size_t len = strcspn(p, " ");
    if (len) snprintf(out[n++], 32, "%.*s", (int)len, p);
    p += len;
  }
  return n;
}

static const nh_setting *setting_storing(const char *attr) {
  for (const nh_setting *s = nh_settings; s->name; s++)
    for (const nh_setting_attr *a = s->stored; a && a->attr; a++)
      if (strcmp(a->attr, attr) == 0) return s;
  return NULL;
}

Test(settings, kinds_name_settings_and_attributes_of_the_table) {
  char w[32][32];
  for (int k = 0; k < NH_STUDY_KINDS; k++) {
    const nh_study_kind_type *kind = nh_study_kinds[k];
    const int ns = words(kind->settings, w, 32);
    cr_expect_gt(ns, 0, "%s takes no settings of its own", kind->name);
    for (int i = 0; i < ns; i++) {
      const nh_setting *s = nh_setting_named(w[i]);
      cr_expect(s && !s->every_kind, "%s: settings names '%s', not a setting of some kinds", kind->name, w[i]);
    }
    const int na = words(kind->stores, w, 32);
    for (int i = 0; i < na; i++) {
      const nh_setting *s = setting_storing(w[i]);
      cr_expect(s && nh_setting_of_kind(s, kind), "%s: stores '%s', no attribute of a setting it takes", kind->name,
                w[i]);
    }
  }
}

/* nh_setting_of_kind and nh_setting_stored_by match whole words of the lists, nothing less. */
Test(settings, kind_lists_match_whole_words) {
  const nh_study_kind_type kind = {.name = "test", .settings = " h0  norm", .stores = "norm"};
  cr_expect(nh_setting_of_kind(nh_setting_named("h0"), &kind));
  cr_expect(nh_setting_of_kind(nh_setting_named("norm"), &kind));
  cr_expect(nh_setting_of_kind(nh_setting_named("T"), &kind), "T: every kind takes it");
  cr_expect_not(nh_setting_of_kind(nh_setting_named("halvings"), &kind));
  const nh_setting_attr norm = {"norm", NH_STORED_NORM, 0}, nor = {"nor", NH_STORED_NORM, 0},
                        norms = {"norms", NH_STORED_NORM, 0};
  cr_expect(nh_setting_stored_by(&norm, &kind));
  cr_expect_not(nh_setting_stored_by(&nor, &kind), "a prefix of a word");
  cr_expect_not(nh_setting_stored_by(&norms, &kind), "a word's prefix");
  const nh_study_kind_type none = {.name = "none"};
  cr_expect_not(nh_setting_stored_by(&norm, &none), "no list");
}

/* README.md's table of every setting is what `nhbench list settings --markdown` prints from the
 * table and the kinds' lists, line for line (make readme-settings writes it): a setting, default,
 * range or kind changed without it, or the table edited by hand, fails. */
Test(settings, readme_table_is_the_listed_one, .timeout = 60) {
  static char listed[1 << 16];
  cr_assert_eq(test_run_nhbench("list settings --markdown", listed, sizeof listed), 0, "%s", listed);
  char *readme = study_specs_section();
  const char *begin = strstr(readme, "\n<!-- nhbench list settings --markdown");
  const char *end = begin ? strstr(begin, "\n<!-- end of nhbench list settings --markdown") : NULL;
  cr_assert(begin && end, "README.md's Study specs has no table between the markers of make readme-settings");
  begin = strchr(begin + 1, '\n') + 1; /* the line after the opening marker */
  const size_t len = (size_t)(end + 1 - begin);
  cr_expect(len == strlen(listed) && strncmp(begin, listed, len) == 0,
            "README.md's settings table differs from nhbench list settings --markdown: run make readme-settings\n"
            "README:\n%.*s\nlisted:\n%s",
            (int)len, begin, listed);
  free(readme);
}

/* --markdown lists every setting, its kinds from the kinds' tables and | escaped in a cell; it
 * takes no kind and no other list. */
Test(settings, markdown_rows, .timeout = 60) {
  static char out[1 << 16];
  cr_assert_eq(test_run_nhbench("list settings --markdown", out, sizeof out), 0, "%s", out);
  int rows = 0;
  for (const nh_setting *s = nh_settings; s->name; s++, rows++) {
    char start[64];
    snprintf(start, sizeof start, "\n| `%s` | ", s->name);
    cr_expect_not_null(strstr(out, start), "no row of %s", s->name);
  }
  int lines = 0;
  for (const char *p = out; (p = strchr(p, '\n')); p++) lines++;
  cr_expect_eq(lines, rows + 2, "a header, its rule and a row per setting");
  cr_expect_not_null(strstr(out, "| `fit_points` | whole number in [2, 100] | 3 | convergence, onestep | "));
  cr_expect_not_null(strstr(out, "| `T` | real | none | every | "));
  cr_expect_not_null(strstr(out, "exceeds divergence * max(1, \\|E0\\|)"), "| escaped");
  cr_expect_eq(test_run_nhbench("list settings convergence --markdown", out, sizeof out), 2);
  cr_expect_eq(test_run_nhbench("list methods --markdown", out, sizeof out), 2);
  cr_expect_not_null(strstr(out, "--markdown lists every setting"), "%s", out);
}
