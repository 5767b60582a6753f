/* A spec's source (studies/spec_source.h): the spec file with its includes expanded, each line
 * traced to its file and line. libconfig 1.5 would read an `@include` itself, relative to the
 * working directory, and the text nhbench keeps (journal key, spec_text) would then not be what
 * the run was made from: a changed included file would resume another run's journal. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/text.h"
#include "studies/spec_source.h"
#include "studies/study.h"

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
