/* The registry of study kinds (studies/kinds.h): the list is studies/kinds.def, one
 * NH_STUDY_KIND(name, NAME) line per kind, read twice here (X-macro), once for the declarations and
 * once for the table in nh_study_kind's order. */
#include <string.h>

#include "studies/kinds.h"

#define NH_STUDY_KIND(name, NAME) extern const nh_study_kind_type nh_##name##_kind;
#include "studies/kinds.def"
#undef NH_STUDY_KIND

const nh_study_kind_type *const nh_study_kinds[NH_STUDY_KINDS] = {
#define NH_STUDY_KIND(name, NAME) [NH_STUDY_##NAME] = &nh_##name##_kind,
#include "studies/kinds.def"
#undef NH_STUDY_KIND
};

const char *nh_study_kind_name(nh_study_kind kind) { return nh_study_kinds[kind]->name; }

const nh_study_kind_type *nh_study_kind_named(const char *name) {
  for (int k = 0; name && k < NH_STUDY_KINDS; k++)
    if (strcmp(nh_study_kinds[k]->name, name) == 0) return nh_study_kinds[k];
  return NULL;
}
