/* Studies built by hand, without a spec file, for the runner tests (tests/studies/test_onestep.c,
 * tests/studies/test_work_precision.c): the part every kind shares. The caller sets the step sizes and
 * the kind's own fields, and frees the study with test_hand_study_release. */
#ifndef NH_TEST_HAND_STUDY_H
#define NH_TEST_HAND_STUDY_H

#include <stdlib.h>
#include <string.h>

#include "studies/study.h"
#include "tests/helpers.h"

/* A study of `kind` on the system `system` (parameters params, NULL for the defaults) with the nm
 * methods parsed from their names, all primary, and the nic initial states ics (ics NULL: one, the
 * system's default state); x0 is the first of them. */
static inline nh_study test_hand_study(nh_study_kind kind, char *spec_file, const char *system,
                                       const char *params, const char *const *methods, int nm, const nh_state *ics,
                                       int nic) {
  nh_study st;
  memset(&st, 0, sizeof st);
  st.kind = kind;
  st.spec_file = spec_file;
  st.sys = test_system(system, params);
  st.nmethods = st.nprimary = nm;
  st.methods = calloc((size_t)nm, sizeof *st.methods);
  st.method_names = calloc((size_t)nm, sizeof *st.method_names);
  for (int i = 0; i < nm; i++) {
    st.methods[i] = test_method(methods[i]);
    st.method_names[i] = (char *)methods[i];
  }
  st.nic = ics ? nic : 1;
  st.ics = calloc((size_t)st.nic, sizeof *st.ics);
  if (ics)
    memcpy(st.ics, ics, sizeof *st.ics * (size_t)st.nic);
  else
    nh_system_default_state(&st.sys, &st.ics[0]);
  st.x0 = st.ics[0];
  return st;
}

/* Frees what test_hand_study and the caller allocated (methods, names, ICs, step sizes). */
static inline void test_hand_study_release(nh_study *st) {
  for (int i = 0; i < st->nmethods; i++) nh_method_free(st->methods[i]);
  free(st->methods), free(st->method_names), free(st->ics), free(st->h);
}

#endif
