/* A spec's top-level settings as descriptors (issue 48 item 3): one table (studies/settings.c)
 * says for each setting the study kinds that read it, its type, its default and range where it
 * has numeric ones, and what it means. The spec loader refuses a setting its kind does not read
 * from it and takes the numeric defaults and ranges from it; `nhbench list settings` prints it;
 * a test holds README's settings tables to it. */
#ifndef NH_STUDIES_SETTINGS_H
#define NH_STUDIES_SETTINGS_H

#include "studies/spec.h"

/* The kinds' bits of nh_setting.kinds. */
#define NH_KIND(k) (1u << (k))
#define NH_ALL_KINDS ((1u << NH_STUDY_KINDS) - 1)

typedef struct {
  const char *name;
  unsigned kinds;       /* NH_KIND(NH_STUDY_...) | ...: the kinds whose specs take it */
  const char *type;     /* in words: "real", "whole number", "text", "list of reals", ... */
  /* def: a numeric setting's default (NAN: none, or required); min, max: a whole number's range
   * (NAN for the others, whose bounds the loader checks and help states). */
  double def, min, max;
  const char *def_text; /* the default in words where it is not def (NULL: def, or required) */
  const char *help;     /* one line */
} nh_setting;

/* Every setting, the table ending with a NULL name. */
extern const nh_setting nh_settings[];
/* The setting called name, or NULL. */
const nh_setting *nh_setting_named(const char *name);
/* Whether a spec of the kind takes the setting. */
int nh_setting_of_kind(const nh_setting *s, nh_study_kind kind);

#endif
