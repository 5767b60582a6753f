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
