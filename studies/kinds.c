/* The registry of study kinds (studies/kinds.h): a line per kind, in nh_study_kind's order. */
#include <string.h>

#include "studies/kinds.h"

extern const nh_study_kind_type nh_convergence_kind, nh_ensemble_kind, nh_trajectory_kind, nh_onestep_kind,
    nh_work_precision_kind;

const nh_study_kind_type *const nh_study_kinds[NH_STUDY_KINDS] = {
    [NH_STUDY_CONVERGENCE] = &nh_convergence_kind,
    [NH_STUDY_ENSEMBLE] = &nh_ensemble_kind,
    [NH_STUDY_TRAJECTORY] = &nh_trajectory_kind,
    [NH_STUDY_ONESTEP] = &nh_onestep_kind,
    [NH_STUDY_WORK_PRECISION] = &nh_work_precision_kind,
};

const char *nh_study_kind_name(nh_study_kind kind) { return nh_study_kinds[kind]->name; }

const nh_study_kind_type *nh_study_kind_named(const char *name) {
  for (int k = 0; name && k < NH_STUDY_KINDS; k++)
    if (strcmp(nh_study_kinds[k]->name, name) == 0) return nh_study_kinds[k];
  return NULL;
}
