/* A spec's source: the text libconfig reads, made from the spec file with each `@include "FILE"`
 * line replaced by FILE's text, so that everything a run is made from is one text (the journal's
 * key, the results' spec_text), and each of its lines traced back to its file and line for
 * messages. Every file is checked as it is read: text (no NUL byte), its integers as libconfig
 * would read them (nh_config_check_integers). */
#ifndef NH_SPEC_SOURCE_H
#define NH_SPEC_SOURCE_H

#include <libconfig.h>
#include <stddef.h>

/* The whole text of a file ("-": standard input) of at most 1 MiB, NUL-terminated, malloc'd; NULL
 * with errno set when it cannot be read (EFBIG when larger). */
char *nh_read_text(const char *path);
/* nh_read_text, and its length in bytes into *len (the text may hold NUL bytes). */
char *nh_read_text_len(const char *path, size_t *len);
/* "FILE:LINE: syntax error in `the line` (hint)": libconfig's parse error of `text` (the file's
 * contents; NULL: no line shown) in cfg, for specs and claims files alike. */
void nh_config_syntax_error(const char *path, const char *text, const config_t *cfg, char *err, size_t errlen);
/* Refuses (-1, "FILE:LINE: the integer ... does not fit in 32 bits ...") a decimal integer literal of
 * text without the L suffix outside the int range, which libconfig 1.5 would silently wrap; strings
 * and comments are skipped. For specs and claims files alike. */
int nh_config_check_integers(const char *path, const char *text, char *err, size_t errlen);

/* Includes nest at most this deep (libconfig's own limit): deeper is a cycle or a mistake. */
#define NH_INCLUDE_DEPTH 10

typedef struct {
  char *text;            /* the expanded text, NUL-terminated */
  size_t len, cap;
  int nlines, lines_cap; /* lines of text, each ended by '\n' */
  int *line_file;        /* [line − 1]: index into files */
  int *line_number;      /* [line − 1]: its line in that file */
  char **files;          /* files[0]: the spec itself ("-": standard input); then every included file */
  int nfiles;
} nh_spec_source;

/* Reads the spec at path ("-": standard input) and its includes into src (zeroed first): 0, or -1
 * with "FILE:LINE: message" in err (src then holds what was read: free it). An included name is
 * taken relative to the directory of the file that includes it (absolute names as they are). */
int nh_spec_source_read(const char *path, nh_spec_source *src, char *err, size_t errlen);
/* "FILE:LINE" of line (1-based) of src's text, into buf; the spec's own name for a line it does
 * not have (0: a setting made by --set, or the whole spec). Returns buf. */
const char *nh_spec_source_where(const nh_spec_source *src, int line, char *buf, size_t len);
void nh_spec_source_free(nh_spec_source *src);

#endif
