#include "core/param.h"
#include "core/text.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void nh_param_defaults(const nh_param_desc *d, int n, double *vals) {
  for (int i = 0; i < n; i++) vals[i] = d[i].def;
}

int nh_param_index(const nh_param_desc *d, int n, const char *name) {
  for (int i = 0; i < n; i++)
    if (strcmp(d[i].name, name) == 0) return i;
  return -1;
}

static void known_names(const nh_param_desc *d, int n, char *buf, size_t len) {
  buf[0] = '\0';
  for (int i = 0; i < n; i++) nh_text_append(buf, len, ", ", "%s", d[i].name);
  if (n == 0) snprintf(buf, len, "none");
}

int nh_param_nchoices(const nh_param_desc *d) {
  int n = 0;
  while (d->choices && d->choices[n]) n++;
  return n;
}

void nh_param_choices_text(const nh_param_desc *d, const char *sep, char *buf, size_t len) {
  buf[0] = '\0';
  for (int i = 0; i < nh_param_nchoices(d); i++) nh_text_append(buf, len, sep, "%s", d->choices[i]);
}

int nh_param_set_value(const nh_param_desc *d, int n, double *vals, const char *name, double value,
                       char *err, size_t errlen) {
  int i = nh_param_index(d, n, name);
  if (i < 0) {
    char names[256];
    known_names(d, n, names, sizeof names);
    snprintf(err, errlen, "unknown parameter '%s' (parameters: %s)", name, names);
    return -1;
  }
  char txt[32];
  nh_format_double(txt, sizeof txt, value);
  if (!isfinite(value)) {
    snprintf(err, errlen, "parameter %s=%s is not a finite number", name, txt);
    return -1;
  }
  if (d[i].kind != NH_PARAM_REAL && value != floor(value)) {
    snprintf(err, errlen, "parameter %s=%s must be an integer", name, txt);
    return -1;
  }
  if (d[i].kind == NH_PARAM_CHOICE && (value < 0 || value >= nh_param_nchoices(&d[i]))) {
    char names[256];
    nh_param_choices_text(&d[i], ", ", names, sizeof names);
    snprintf(err, errlen, "parameter %s=%s is not a choice index (0 to %d: %s)", name, txt,
             nh_param_nchoices(&d[i]) - 1, names);
    return -1;
  }
  if (value < d[i].min || value > d[i].max) {
    char lo[32], hi[32];
    nh_format_double(lo, sizeof lo, d[i].min);
    nh_format_double(hi, sizeof hi, d[i].max);
    snprintf(err, errlen, "parameter %s=%s is out of range [%s, %s]", name, txt, lo, hi);
    return -1;
  }
  vals[i] = value;
  return 0;
}

int nh_param_set(const nh_param_desc *d, int n, double *vals, const char *name, const char *text,
                 char *err, size_t errlen) {
  int i = nh_param_index(d, n, name);
  if (i >= 0 && d[i].kind == NH_PARAM_CHOICE) {
    for (int c = 0; c < nh_param_nchoices(&d[i]); c++)
      if (strcmp(text, d[i].choices[c]) == 0) return nh_param_set_value(d, n, vals, name, c, err, errlen);
    char names[256];
    nh_param_choices_text(&d[i], ", ", names, sizeof names);
    snprintf(err, errlen, "parameter %s='%s' is not one of %s", name, text, names);
    return -1;
  }
  char *end;
  errno = 0;
  double value = strtod(text, &end);
  if (end == text || *end != '\0' || errno == ERANGE) {
    snprintf(err, errlen, "parameter %s='%s' is not a number", name, text);
    return -1;
  }
  return nh_param_set_value(d, n, vals, name, value, err, errlen);
}

void nh_format_double(char *buf, size_t len, double x) {
  for (int prec = 1; prec <= 17; prec++) {
    snprintf(buf, len, "%.*g", prec, x);
    if (strtod(buf, NULL) == x) break;
  }
  /* %g writes an exponent once it reaches the precision: 10 at one digit is "1e+01". Such a value
   * is a whole number; below 1e15 (%g's own fixed range at 15 digits) it reads better in full. */
  if (strstr(buf, "e+") && fabs(x) < 1e15) snprintf(buf, len, "%.0f", x);
}

size_t nh_params_format(const nh_param_desc *d, int n, const double *vals, char *buf, size_t len) {
  size_t used = 0;
  buf[0] = '\0';
  for (int i = 0; i < n; i++) {
    if (d[i].quiet && vals[i] == d[i].def) continue;
    char num[32];
    nh_format_double(num, sizeof num, vals[i]);
    const char *text = d[i].kind == NH_PARAM_CHOICE ? d[i].choices[(int)vals[i]] : num;
    int w = snprintf(buf + used, used < len ? len - used : 0, "%s%s=%s", used ? "," : "", d[i].name, text);
    used += (size_t)w;
  }
  return used;
}

/* x as a display label shows it: pπ/q for a multiple of π with q ≤ 12 (exact to 1e-12 relative:
 * α = π/6 is stored as 0.5235987755982988), else 4 significant digits. */
static void label_number(char *buf, size_t len, double x) {
  const double pi = 3.14159265358979323846; /* M_PI is POSIX, not C11 */
  for (int q = 1; x != 0 && isfinite(x) && q <= 12; q++) {
    const double p = round(x * q / pi);
    if (p != 0 && fabs(p) <= 99 && fabs(x - p * pi / q) <= 1e-12 * fabs(x)) {
      const char *sign = p < 0 ? "-" : "";
      const int ap = (int)fabs(p);
      char whole[16] = "";
      if (ap != 1) snprintf(whole, sizeof whole, "%d", ap);
      if (q == 1)
        snprintf(buf, len, "%s%sπ", sign, whole);
      else
        snprintf(buf, len, "%s%sπ/%d", sign, whole, q);
      return;
    }
  }
  snprintf(buf, len, "%.4g", x);
}

size_t nh_params_label(const nh_param_desc *d, int n, const double *vals, char *buf, size_t len) {
  size_t used = 0;
  if (len) buf[0] = '\0';
  for (int i = 0; i < n; i++) {
    if (vals[i] == d[i].def) continue;
    char num[32];
    if (d[i].kind == NH_PARAM_REAL)
      label_number(num, sizeof num, vals[i]);
    else
      snprintf(num, sizeof num, "%.0f", vals[i]);
    const char *text = d[i].kind == NH_PARAM_CHOICE ? d[i].choices[(int)vals[i]] : num;
    used += (size_t)snprintf(buf + used, used < len ? len - used : 0, "%s%s=%s", used ? "," : "", d[i].name, text);
  }
  return used;
}
