/* The registry of study kinds (studies/kinds.h): the list is studies/kinds.def, one
 * NH_STUDY_KIND(name, NAME) line per kind, read here (X-macro) for the table in nh_study_kind's order
 * (and in kinds.h for the tables' declarations). */
#include <string.h>

#include "studies/kinds.h"

const nh_study_kind_type *const nh_study_kinds[NH_STUDY_KINDS] = {
#define NH_STUDY_KIND(name, NAME) [NH_STUDY_##NAME] = &nh_##name##_kind,
#include "studies/kinds.def"
#undef NH_STUDY_KIND
};

void nh_kind_dims(const nh_study_kind_type *k, const nh_study *st, const void *r, nh_column_dims *d) {
  nh_column_dims_of_study(st, d);
  if (k->file.own_dims) k->file.own_dims(st, r, d);
}

const char *nh_study_kind_name(nh_study_kind kind) { return nh_study_kinds[kind]->name; }

const nh_study_kind_type *nh_study_kind_named(const char *name) {
  for (int k = 0; name && k < NH_STUDY_KINDS; k++)
    if (strcmp(nh_study_kinds[k]->name, name) == 0) return nh_study_kinds[k];
  return NULL;
}
