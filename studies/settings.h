/* A spec's top-level settings as descriptors (issue 48 item 3): one table (studies/settings.c)
 * says for each setting its type, its default and range where it has numeric ones, what it means
 * and how a results file keeps it; which kinds take it, and which keep it, their tables say
 * (studies/kinds.h, settings and stores), or the setting says every kind takes it. The spec loader refuses a setting its kind does not read
 * from it and takes the numeric defaults and ranges from it; `nhbench list settings` prints it;
 * a test holds README's settings tables to it. */
#ifndef NH_STUDIES_SETTINGS_H
#define NH_STUDIES_SETTINGS_H

#include "studies/kinds.h"

/* How a setting's value is kept in a results file: an attribute of the study group, read from a
 * field of nh_study (results/write_kinds.c writes every one the kind's table lists in stores). */
typedef enum {
  NH_STORED_I32,  /* int */
  NH_STORED_I64,  /* uint64_t, at most 2^63 - 1 (the seed: the loader checks) */
  NH_STORED_F64,  /* double */
  NH_STORED_TEXT, /* char * */
  NH_STORED_NORM  /* nh_norm, as its name: "max" or "2" */
} nh_stored_type;
typedef struct {
  const char *attr; /* the attribute's name; NULL ends a list */
  nh_stored_type type;
  size_t field; /* offsetof(nh_study, ...) */
} nh_setting_attr;

typedef struct {
  const char *name;
  int every_kind;       /* 1: a spec of any kind takes it; 0: of the kinds whose tables list it */
  const char *type;     /* in words: "real", "whole number", "text", "list of reals", ... */
  /* def: a numeric setting's default (NAN: none, or required); min, max: a whole number's range
   * (NAN for the others, whose bounds the loader checks and help states). */
  double def, min, max;
  const char *def_text; /* the default in words where it is not def (NULL: def, or required) */
  const char *help;     /* one line */
  const nh_setting_attr *stored; /* where the results file keeps it (NULL: nowhere of its own) */
} nh_setting;

/* Every setting, the table ending with a NULL name. */
extern const nh_setting nh_settings[];
/* The setting called name, or NULL. */
const nh_setting *nh_setting_named(const char *name);
/* Whether a spec of the kind takes the setting (every_kind, or listed in the kind's settings). */
int nh_setting_of_kind(const nh_setting *s, const nh_study_kind_type *kind);
/* Whether the kind's files keep the attribute (listed in the kind's stores). */
int nh_setting_stored_by(const nh_setting_attr *a, const nh_study_kind_type *kind);

#endif
