/* Reading libconfig settings, shared by the two loaders of text nhbench reads: the study spec
 * (studies/spec.c) and the claims files (bench/claims/report.c). What both check alike lives here,
 * each refusal as a reason; where the reason is placed (file, line, --set, an include) is each
 * loader's own. */
#ifndef NH_STUDIES_CONFIG_READ_H
#define NH_STUDIES_CONFIG_READ_H

#include <libconfig.h>
#include <stdarg.h>
#include <stddef.h>

/* Whole numbers up to 2^53 in magnitude are exact as doubles; beyond, a number would be read
 * otherwise than written (2^53 + 1 as 2^53). */
#define NH_EXACT_INTEGER (1LL << 53) /* compared as an integer with integers: exact */

/* The name of s for a message: "'name'", or "entry N of 'list'" (N from 1, as people count). */
const char *nh_config_label(const config_setting_t *s, char *buf, size_t len);

/* Setting s as a number, read as written: finite (a literal 1e400 reads as inf, --set takes nan)
 * and, for an integer, within 2^53. 0, or -1 with why not in why ("'T' must be a number, not
 * \"x\"", "entry 2 of 'h' must be a number", "'T' = inf must be a finite number", ...). */
int nh_config_number(const config_setting_t *s, double *out, char *why, size_t len);

/* The first member of group g whose name is not among the NULL-terminated known, or NULL. */
const config_setting_t *nh_config_unknown_member(const config_setting_t *g, const char *const *known);

/* A refusal's message "AT: message" into err (AT where the loader places it: "FILE:LINE", "FILE:
 * --set PATH", ...; message from fmt and ap). Returns -1, what the loaders return for a refusal. */
int nh_config_refuse(char *err, size_t errlen, const char *at, const char *fmt, va_list ap);

#endif
