/* Reading libconfig settings (studies/config_read.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/text.h"
#include "studies/config_read.h"

const char *nh_config_label(const config_setting_t *s, char *buf, size_t len) {
  const config_setting_t *list = config_setting_parent(s);
  if (config_setting_name(s)) snprintf(buf, len, "'%s'", config_setting_name(s));
  else snprintf(buf, len, "entry %d of '%s'", config_setting_index(s) + 1,
                list && config_setting_name(list) ? config_setting_name(list) : "a list");
  return buf;
}

/* An entry of a list that is not a number, named by its list and position, with the string it
 * holds if it is one. */
static int not_a_number_entry(const config_setting_t *s, char *why, size_t len) {
  const config_setting_t *list = config_setting_parent(s);
  const char *name = list ? config_setting_name(list) : NULL, *text = config_setting_get_string(s);
  char what[NH_TEXT_NAME] = "", list_name[NH_TEXT_NAME] = "a list";
  if (text) snprintf(what, sizeof what, ", not \"%.60s\"", text);
  if (name) snprintf(list_name, sizeof list_name, "'%.80s'", name);
  snprintf(why, len, "entry %d of %s must be a number%s", config_setting_index(s) + 1, list_name, what);
  return -1;
}

int nh_config_number(const config_setting_t *s, double *out, char *why, size_t len) {
  const int t = config_setting_type(s);
  char label[NH_TEXT_NAME];
  if (t == CONFIG_TYPE_FLOAT) *out = config_setting_get_float(s);
  else if (t == CONFIG_TYPE_INT) *out = config_setting_get_int(s);
  else if (t == CONFIG_TYPE_INT64) {
    const long long v = config_setting_get_int64(s);
    if (v > NH_EXACT_INTEGER || v < -NH_EXACT_INTEGER)
      return snprintf(why, len, "%s = %lld is beyond 2^53, where a number is not read exactly",
                      nh_config_label(s, label, sizeof label), v),
             -1;
    *out = (double)v;
  }
  else if (!config_setting_name(s)) return not_a_number_entry(s, why, len);
  else if (t == CONFIG_TYPE_STRING) /* the text it holds, as --set puts what is no number */
    return snprintf(why, len, "'%s' must be a number, not \"%.60s\"", config_setting_name(s),
                    config_setting_get_string(s)),
           -1;
  else return snprintf(why, len, "'%s' must be a number", config_setting_name(s)), -1;
  if (!isfinite(*out))
    return snprintf(why, len, "%s = %g must be a finite number", nh_config_label(s, label, sizeof label), *out), -1;
  return 0;
}

const config_setting_t *nh_config_unknown_member(const config_setting_t *g, const char *const *known) {
  for (int i = 0; i < config_setting_length(g); i++) {
    const config_setting_t *s = config_setting_get_elem(g, (unsigned)i);
    int ok = 0;
    for (const char *const *k = known; *k && !ok; k++) ok = strcmp(*k, config_setting_name(s)) == 0;
    if (!ok) return s;
  }
  return NULL;
}

int nh_config_refuse(char *err, size_t errlen, const char *at, const char *fmt, va_list ap) {
  char msg[NH_TEXT_MESSAGE];
  vsnprintf(msg, sizeof msg, fmt, ap);
  snprintf(err, errlen, "%s: %s", at, msg);
  return -1;
}
