/* A spec's source (studies/spec_source.h): the text of a spec or claims file as read (at most
 * 1 MiB), its integer literals checked as libconfig 1.5 would read them, and the spec file with its
 * includes expanded, each line traced to its file and line. libconfig 1.5 would read an `@include` itself, relative to the
 * working directory, and the text nhbench keeps (journal key, spec_text) would then not be what
 * the run was made from: a changed included file would resume another run's journal. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/text.h"
#include "studies/spec_source.h"
#include "studies/study.h"

/* A spec is text of at most 1 MiB ("-": standard input); a larger input (e.g. /dev/zero) is
 * refused with errno EFBIG instead of being read until memory runs out. */
#define NH_SPEC_MAX_BYTES (1u << 20)

char *nh_read_text_len(const char *path, size_t *length) {
  FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 4096, len = 0;
  char *buf = malloc(cap);
  size_t got;
  while (buf && (got = fread(buf + len, 1, cap - len - 1, f)) > 0) {
    len += got;
    if (len > NH_SPEC_MAX_BYTES) {
      free(buf);
      if (f != stdin) fclose(f);
      errno = EFBIG;
      return NULL;
    }
    if (len + 1 == cap) {
      char *bigger = realloc(buf, cap *= 2);
      if (!bigger) free(buf);
      buf = bigger;
    }
  }
  if (f != stdin) fclose(f);
  if (buf) buf[len] = '\0';
  if (length) *length = len;
  return buf;
}

char *nh_read_text(const char *path) { return nh_read_text_len(path, NULL); }

/* The integer literal at p (its first digit; neg: a '-' before it) of path's line: its length into
 * *n; 0 if libconfig 1.5 reads it as written, else -1 with the message. libconfig reads a literal
 * without the L suffix into an int without an overflow check (decimal wraps; hex from 0x80000000
 * on reads negative), and one with L into 64 bits (decimal beyond clamped, hex beyond wrapped). */
static int integer_literal(const char *p, int neg, size_t *n, const char *path, int line, char *err, size_t errlen) {
  const int hex = p[0] == '0' && (p[1] == 'x' || p[1] == 'X') && isxdigit((unsigned char)p[2]);
  const char *digits = hex ? p + 2 : p;
  const char *end = digits + strspn(digits, hex ? "0123456789abcdefABCDEF" : "0123456789");
  const int wide = end[0] == 'L', suffix = wide + (wide && end[1] == 'L');
  const int len = (int)(end - p);
  *n = (size_t)(end + suffix - p);
  /* '.', '_' or a letter or digit after it: a real (1.5, 1e3) or part of a name, no integer. */
  const char next = end[suffix];
  if (next == '.' || next == '_' || isalnum((unsigned char)next)) return 0;
  errno = 0;
  const unsigned long long magnitude = strtoull(digits, NULL, hex ? 16 : 10);
  const int range = errno == ERANGE;
  if (!wide && !hex && (range || magnitude > (unsigned long long)INT_MAX + (unsigned)neg)) {
    snprintf(err, errlen,
             "%s:%d: the integer %s%.*s does not fit in 32 bits, and libconfig would read it wrapped; "
             "write it with an L suffix (%s%.*sL) or as a real (%s%.*s.0, exact up to 2^53)",
             path, line, neg ? "-" : "", len, p, neg ? "-" : "", len, p, neg ? "-" : "", len, p);
    return -1;
  }
  if (!wide && hex && (range || magnitude > INT_MAX)) {
    snprintf(err, errlen, "%s:%d: the integer %.*s does not fit in a signed 32-bit int, and libconfig would read it "
             "wrapped; write it with an L suffix (%.*sL)", path, line, len, p, len, p);
    return -1;
  }
  if (wide && (range || magnitude > (unsigned long long)LLONG_MAX + (unsigned)(neg && !hex))) {
    snprintf(err, errlen, "%s:%d: the integer %s%.*sL does not fit in a signed 64-bit integer, and libconfig would "
             "read it as another", path, line, neg ? "-" : "", len, p);
    return -1;
  }
  return 0;
}

/* libconfig 1.5 reads an integer literal without an overflow check: `seed = 4294967297;` and
 * `seed = 0x100000001;` silently become 1. Such a literal (integer_literal) is refused here,
 * before libconfig sees it, naming file, line and value. Returns 0 or -1. */
int nh_config_check_integers(const char *path, const char *text, char *err, size_t errlen) {
  int line = 1;
  for (const char *p = text; *p; p++) {
    if (*p == '\n') line++;
    else if (*p == '"') { /* a string, with its escapes */
      while (p[1] && p[1] != '"') p += p[1] == '\\' && p[2] ? 2 : 1;
      if (p[1]) p++;
    }
    else if (*p == '#' || (*p == '/' && p[1] == '/')) p += strcspn(p, "\n") - 1;
    else if (*p == '/' && p[1] == '*') {
      const char *e = strstr(p + 2, "*/");
      for (const char *q = p; q < (e ? e : p + strlen(p)); q++) line += *q == '\n';
      if (!e) break;
      p = e + 1;
    } else if (isdigit((unsigned char)*p) &&
               (p == text || !(isalnum((unsigned char)p[-1]) || p[-1] == '_' || p[-1] == '.'))) {
      size_t n;
      if (integer_literal(p, p > text && p[-1] == '-', &n, path, line, err, errlen) < 0) return -1;
      p += n - 1;
    }
  }
  return 0;
}

/* Appends line (len bytes, without its '\n') of file, its number there, to src: 0, or -1. */
static int append_line(nh_spec_source *src, const char *line, size_t len, int file, int number) {
  if (src->len + len + 2 > src->cap) {
    size_t cap = src->cap ? src->cap : 4096;
    while (src->len + len + 2 > cap) cap *= 2;
    char *bigger = realloc(src->text, cap);
    if (!bigger) return -1;
    src->text = bigger, src->cap = cap;
  }
  if (src->nlines == src->lines_cap) {
    const int cap = src->lines_cap ? 2 * src->lines_cap : 256;
    int *files = nh_realloc_array(src->line_file, (size_t)cap, sizeof *files);
    if (files) src->line_file = files;
    int *numbers = files ? nh_realloc_array(src->line_number, (size_t)cap, sizeof *numbers) : NULL;
    if (!numbers) return -1;
    src->line_number = numbers, src->lines_cap = cap;
  }
  memcpy(src->text + src->len, line, len);
  src->len += len;
  src->text[src->len++] = '\n';
  src->text[src->len] = '\0';
  src->line_file[src->nlines] = file, src->line_number[src->nlines] = number;
  src->nlines++;
  return 0;
}

/* The file an `@include "NAME"` of path names: NAME relative to path's directory (as is when
 * absolute, or when path is standard input). NULL if out of memory. */
static char *included_path(const char *path, const char *name, size_t len) {
  const char *slash = strcmp(path, "-") == 0 || name[0] == '/' ? NULL : strrchr(path, '/');
  const size_t dir = slash ? (size_t)(slash - path) + 1 : 0;
  char *full = malloc(dir + len + 1);
  if (full) snprintf(full, dir + len + 1, "%.*s%.*s", (int)dir, path, (int)len, name);
  return full;
}

/* If line is an `@include "NAME"` directive (libconfig's form: on a line of its own, spaces
 * around it, a comment after it): 1 with *name, *len the name's text; 0 if the line is none;
 * -1 if it starts as one but is not well formed. */
static int include_directive(const char *line, size_t n, const char **name, size_t *len) {
  const char *p = line, *end = line + n;
  while (p < end && (*p == ' ' || *p == '\t')) p++;
  if ((size_t)(end - p) < 8 || strncmp(p, "@include", 8) != 0) return 0;
  p += 8;
  while (p < end && (*p == ' ' || *p == '\t')) p++;
  if (p == end || *p != '"') return -1;
  *name = ++p;
  while (p < end && *p != '"' && *p != '\\') p++;
  if (p == end || *p != '"' || p == *name) return -1;
  *len = (size_t)(p - *name);
  for (p++; p < end && (*p == ' ' || *p == '\t' || *p == '\r'); p++) continue;
  return p == end || *p == '#' || (end - p >= 2 && p[0] == '/' && p[1] == '/') ? 1 : -1;
}

static int read_file(nh_spec_source *src, const char *path, const char *from, int from_line, int depth, char *err,
                     size_t errlen);

/* The lines of file (src->files[file], text of len bytes) into src, its includes expanded. */
static int expand(nh_spec_source *src, int file, const char *text, size_t len, int depth, char *err, size_t errlen) {
  const char *path = src->files[file];
  int number = 1;
  for (const char *p = text; p < text + len; number++) {
    const char *nl = memchr(p, '\n', (size_t)(text + len - p));
    const size_t n = nl ? (size_t)(nl - p) : (size_t)(text + len - p);
    const char *name;
    size_t name_len;
    const int directive = include_directive(p, n, &name, &name_len);
    if (directive < 0) {
      snprintf(err, errlen, "%s:%d: an include is `@include \"FILE\"` on a line of its own", path, number);
      return -1;
    }
    if (directive == 0 && append_line(src, p, n, file, number) < 0) {
      snprintf(err, errlen, "%s: out of memory", path);
      return -1;
    }
    if (directive == 1) {
      char *included = included_path(path, name, name_len);
      const int rc = included ? read_file(src, included, path, number, depth + 1, err, errlen) : -1;
      if (!included) snprintf(err, errlen, "%s: out of memory", path);
      free(included);
      if (rc < 0) return -1;
    }
    p += n + 1;
  }
  return 0;
}

/* Reads path (included by from at from_line; from NULL for the spec itself) into src. */
static int read_file(nh_spec_source *src, const char *path, const char *from, int from_line, int depth, char *err,
                     size_t errlen) {
  char where[NH_TEXT_PATH + 16] = "";
  if (from) snprintf(where, sizeof where, "%s:%d: @include: ", from, from_line);
  if (depth > NH_INCLUDE_DEPTH) {
    snprintf(err, errlen, "%s%s: includes nested more than %d deep (does a file include itself?)", where, path,
             NH_INCLUDE_DEPTH);
    return -1;
  }
  size_t len;
  char *text = nh_read_text_len(path, &len);
  if (!text) {
    snprintf(err, errlen, "%s%s: cannot read: %s", where, path, strerror(errno));
    return -1;
  }
  char **files = nh_realloc_array(src->files, (size_t)src->nfiles + 1, sizeof *files);
  char *copy = files ? malloc(strlen(path) + 1) : NULL;
  if (files) src->files = files;
  if (!copy) {
    free(text);
    snprintf(err, errlen, "%s: out of memory", path);
    return -1;
  }
  const int file = src->nfiles++;
  src->files[file] = strcpy(copy, path);
  int rc = -1;
  const char *nul = memchr(text, '\0', len);
  if (nul) {
    int line = 1;
    for (const char *p = text; p < nul; p++) line += *p == '\n';
    snprintf(err, errlen, "%s:%d: a NUL byte (byte %zu): a spec is text", path, line, (size_t)(nul - text) + 1);
  } else if (nh_config_check_integers(path, text, err, errlen) == 0) {
    rc = expand(src, file, text, len, depth, err, errlen);
  }
  free(text);
  return rc;
}

int nh_spec_source_read(const char *path, nh_spec_source *src, char *err, size_t errlen) {
  memset(src, 0, sizeof *src);
  if (read_file(src, path, NULL, 0, 0, err, errlen) < 0) return -1;
  if (!src->text && !(src->text = calloc(1, 1))) { /* an empty spec */
    snprintf(err, errlen, "%s: out of memory", path);
    return -1;
  }
  return 0;
}

const char *nh_spec_source_where(const nh_spec_source *src, int line, char *buf, size_t len) {
  const char *spec = src->nfiles ? src->files[0] : "-";
  if (line >= 1 && line <= src->nlines)
    snprintf(buf, len, "%s:%d", src->files[src->line_file[line - 1]], src->line_number[line - 1]);
  else if (line > src->nlines && src->nlines > 0) /* past the end (libconfig's "unexpected end"): the last file */
    snprintf(buf, len, "%s:%d", src->files[src->line_file[src->nlines - 1]],
             src->line_number[src->nlines - 1] + line - src->nlines);
  else snprintf(buf, len, "%s", spec);
  return buf;
}

void nh_spec_source_free(nh_spec_source *src) {
  for (int i = 0; i < src->nfiles; i++) free(src->files[i]);
  free(src->files), free(src->text), free(src->line_file), free(src->line_number);
  memset(src, 0, sizeof *src);
}
