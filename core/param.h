/* Named real parameters with defaults, ranges and help: the one descriptor type that systems,
 * integrators, the method syntax, `nhbench list` and the HDF5 provenance all read (STYLE.md,
 * "REBOUND: self-describing integrators"). */
#ifndef NH_PARAM_H
#define NH_PARAM_H

#include <stddef.h>

#define NH_MAX_PARAMS 8

/* NH_PARAM_CHOICE: one of a few named choices, written and read by name ("constraint=average");
 * the value is the choice's index in `choices`, and min, max are 0 and the last index. */
typedef enum { NH_PARAM_REAL, NH_PARAM_INT, NH_PARAM_CHOICE } nh_param_kind;

typedef struct {
  const char *name;
  nh_param_kind kind;
  double def, min, max; /* allowed range, inclusive */
  const char *help;
  int quiet; /* written in a method's name only when it differs from the default */
  const char *const *choices; /* NH_PARAM_CHOICE: the names, NULL-terminated; else NULL */
} nh_param_desc;

void nh_param_defaults(const nh_param_desc *d, int n, double *vals);
int nh_param_index(const nh_param_desc *d, int n, const char *name);
/* Parses `text` as the value of parameter `name` (a number, or a choice's name) and checks kind
 * and range. Returns 0, or -1 with a message in err that quotes the offending text. */
int nh_param_set(const nh_param_desc *d, int n, double *vals, const char *name, const char *text,
                 char *err, size_t errlen);
/* As nh_param_set for a value that is already a number (a choice's index for NH_PARAM_CHOICE). */
int nh_param_set_value(const nh_param_desc *d, int n, double *vals, const char *name, double value,
                       char *err, size_t errlen);
/* "beta=0.1,beta2=0.1,alpha=0.5,constraint=point": every parameter, quiet ones only when not
 * default, choices by name. */
size_t nh_params_format(const nh_param_desc *d, int n, const double *vals, char *buf, size_t len);
/* "beta=0.1,alpha=π/6": the parameters that differ from their defaults, for a display label
 * (issue 49 item 5): reals at 4 significant digits, or as pπ/q (q ≤ 12) where they are; whole
 * numbers and choices as in nh_params_format. "" when every one is at its default. Returns the
 * length it needed, as snprintf. */
size_t nh_params_label(const nh_param_desc *d, int n, const double *vals, char *buf, size_t len);
/* Number of names in a NULL-terminated choice list. */
int nh_param_nchoices(const nh_param_desc *d);
/* "point, average": a choice parameter's names, as errors and `nhbench list` show them. */
void nh_param_choices_text(const nh_param_desc *d, const char *sep, char *buf, size_t len);
/* Shortest decimal text that reads back to exactly x. */
void nh_format_double(char *buf, size_t len, double x);

#endif
