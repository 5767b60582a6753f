#include "core/text.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void nh_text_append(char *buf, size_t len, const char *sep, const char *fmt, ...) {
  if (buf[0]) {
    const size_t used = strlen(buf);
    snprintf(buf + used, len - used, "%s", sep);
  }
  /* buf is a string of at most len - 1 characters whatever fitted of sep: if sep was cut, the
   * text's room is the one byte of its terminator. */
  const size_t used = strlen(buf);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf + used, len - used, fmt, ap);
  va_end(ap);
}
