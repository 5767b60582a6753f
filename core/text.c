#include "core/text.h"

#include <ctype.h>
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

/* name lowercased without '_' and '-', at most len − 1 characters; returns its length. */
static int normalized(const char *name, char *out, int len) {
  int k = 0;
  for (; *name && k < len - 1; name++)
    if (*name != '_' && *name != '-') out[k++] = (char)tolower((unsigned char)*name);
  out[k] = '\0';
  return k;
}

int nh_text_distance(const char *a, const char *b) {
  enum { MAX = 64 };
  char x[MAX], y[MAX];
  const int m = normalized(a, x, MAX), n = normalized(b, y, MAX);
  int d[MAX][MAX]; /* d[i][j]: distance of x[0 .. i) and y[0 .. j) */
  for (int i = 0; i <= m; i++) d[i][0] = i;
  for (int j = 0; j <= n; j++) d[0][j] = j;
  for (int i = 1; i <= m; i++)
    for (int j = 1; j <= n; j++) {
      const int sub = d[i - 1][j - 1] + (x[i - 1] != y[j - 1]);
      const int del = d[i - 1][j] + 1, ins = d[i][j - 1] + 1;
      int best = sub < del ? sub : del;
      best = best < ins ? best : ins;
      if (i > 1 && j > 1 && x[i - 1] == y[j - 2] && x[i - 2] == y[j - 1] && d[i - 2][j - 2] + 1 < best)
        best = d[i - 2][j - 2] + 1;
      d[i][j] = best;
    }
  return d[m][n];
}

int nh_text_suggest(const char *name, const char *const *candidates, int n, char *buf, size_t len) {
  const int limit = (int)strlen(name) / 3 > 2 ? (int)strlen(name) / 3 : 2;
  int count = 0;
  for (int dist = 0; dist <= limit && count < 3; dist++)
    for (int i = 0; i < n && count < 3; i++)
      if (nh_text_distance(name, candidates[i]) == dist) {
        nh_text_append(buf, len, ", ", "%s", candidates[i]);
        count++;
      }
  return count;
}
