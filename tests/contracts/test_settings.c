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
    cr_expect(s->kinds != 0 && (s->kinds & ~NH_ALL_KINDS) == 0, "%s: kinds %#x", s->name, s->kinds);
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
      cr_expect(nh_setting_of_kind(nh_setting_named(common[i]), (nh_study_kind)k), "%s", common[i]);
  cr_expect_gt(count, 20);
}
