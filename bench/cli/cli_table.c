/* export's four table formats (bench/cli/cli_table.h). Text is written as the tables have always
 * been, byte for byte; csv, tsv and json carry the same cells, with the block's keys as columns. */
#include "bench/cli/cli_table.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/text.h"
#include "results/results.h"

#define NOTES_ROOM (1 << 16) /* json's notes, kept until the end (a table has a few lines of them) */
#define NOTES_CUT "further notes left out (over 64 KiB of them)"

static struct {
  nh_table_format fmt;
  char table[NH_TEXT_NAME];
  int n, nkey, cell; /* columns, key columns, cells written in the current row */
  long long rows;    /* rows written (json: a comma before every row but the first) */
  int failed;        /* nh_table_fail: nothing more is written */
  char name[NH_TABLE_MAX_COLUMNS][NH_TEXT_NAME];
  char units[NH_TABLE_MAX_COLUMNS][NH_TEXT_NAME];
  char key[NH_TABLE_MAX_COLUMNS][NH_TEXT_NAME]; /* the key cells as written (quoted, escaped) */
  char notes[NOTES_ROOM];
  size_t notes_len;
  int notes_cut; /* a note was left out for want of room */
} t;

int nh_table_format_parse(const char *name, nh_table_format *fmt) {
  static const char *const names[] = {"text", "csv", "tsv", "json"};
  for (int i = 0; i < 4; i++)
    if (strcmp(name, names[i]) == 0) return *fmt = (nh_table_format)i, 0;
  return -1;
}

void nh_table_begin(nh_table_format fmt, const char *table) {
  memset(&t, 0, sizeof t);
  t.fmt = fmt;
  snprintf(t.table, sizeof t.table, "%s", table);
}

nh_table_format nh_table_format_of(void) { return t.fmt; }

void nh_table_fail(void) { t.failed = 1; }

/* ---- cells as each format writes them ----------------------------------------------------- */

/* s as a json string (quotes, backslash and control characters escaped) into buf. */
static void json_string(char *buf, size_t len, const char *s) {
  size_t k = 0;
  if (len < 8) return;
  buf[k++] = '"';
  for (; *s && k + 8 < len; s++) {
    const unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      buf[k++] = '\\', buf[k++] = (char)c;
    else if (c < 0x20)
      k += (size_t)snprintf(buf + k, len - k, "\\u%04x", c);
    else
      buf[k++] = (char)c;
  }
  buf[k++] = '"';
  buf[k] = '\0';
}

/* s as a csv field (RFC 4180: quoted when it holds a comma, a quote or a line break, quotes
 * doubled) or a tsv field (tabs and line breaks as blanks) into buf. */
static void delimited_string(char *buf, size_t len, const char *s) {
  size_t k = 0;
  const int quote = t.fmt == NH_TABLE_CSV && strpbrk(s, ",\"\r\n") != NULL;
  if (quote) buf[k++] = '"';
  for (; *s && k + 4 < len; s++) {
    if (quote && *s == '"') buf[k++] = '"';
    buf[k++] = t.fmt == NH_TABLE_TSV && strchr("\t\r\n", *s) ? ' ' : *s;
  }
  if (quote) buf[k++] = '"';
  buf[k] = '\0';
}

static void string_cell(char *buf, size_t len, const char *s) {
  if (t.fmt == NH_TABLE_JSON)
    json_string(buf, len, s);
  else if (t.fmt == NH_TABLE_TEXT)
    snprintf(buf, len, "%s", s);
  else
    delimited_string(buf, len, s);
}

/* A number: the shortest form that reads back exactly; json has no NaN or infinity (null). */
static void number_cell(char *buf, size_t len, double v) {
  if (t.fmt == NH_TABLE_JSON && !isfinite(v))
    snprintf(buf, len, "null");
  else
    nh_h5_fmt(buf, len, v);
}

static char separator(void) {
  return t.fmt == NH_TABLE_CSV ? ',' : t.fmt == NH_TABLE_TSV ? '\t' : t.fmt == NH_TABLE_JSON ? ',' : ' ';
}

/* One cell of the current row, the key cells first (not in text: its block line has them). */
static void cell(const char *text) {
  if (t.failed) return;
  if (t.cell == 0) {
    if (t.fmt == NH_TABLE_JSON) fputs(t.rows ? ",\n    [" : "\n    [", stdout);
    for (int i = 0; i < t.nkey && t.fmt != NH_TABLE_TEXT; i++)
      printf("%s%s", i ? (char[]){separator(), 0} : "", t.key[i]);
    if (t.nkey && t.fmt != NH_TABLE_TEXT) putchar(separator());
  } else {
    putchar(separator());
  }
  fputs(text, stdout);
  t.cell++;
}

/* ---- the table ---------------------------------------------------------------------------- */

static void header_row(void) {
  for (int i = 0; i < t.n; i++) {
    char label[2 * NH_TEXT_NAME + 4], shown[4 * NH_TEXT_NAME];
    snprintf(label, sizeof label, t.units[i][0] ? "%s [%s]" : "%s", t.name[i], t.units[i]);
    string_cell(shown, sizeof shown, label);
    printf("%s%s", i ? (char[]){separator(), 0} : "", shown);
  }
  putchar('\n');
}

void nh_table_columns(int n, const char *const *names, int nkey, int header, const char *suffix) {
  t.n = n < NH_TABLE_MAX_COLUMNS ? n : NH_TABLE_MAX_COLUMNS;
  t.nkey = nkey;
  for (int i = 0; i < t.n; i++) snprintf(t.name[i], sizeof t.name[i], "%s", names[i]);
  if (t.fmt == NH_TABLE_TEXT && header) {
    putchar('#');
    for (int i = nkey; i < t.n; i++) printf(" %s", t.name[i]);
    printf("%s\n", suffix ? suffix : "");
  }
  if (suffix && t.fmt == NH_TABLE_JSON) nh_table_note("%s", suffix + (*suffix == ' '));
}

void nh_table_units(int i, const char *units) {
  if (i >= 0 && i < t.n) snprintf(t.units[i], sizeof t.units[i], "%s", units ? units : "");
}

/* csv and tsv write their header row, json its opening, before the first row (the units are all
 * known by then). */
static void opening(void) {
  if (t.failed || t.rows || t.cell || t.fmt == NH_TABLE_TEXT) return;
  if (t.fmt != NH_TABLE_JSON) return header_row();
  char s[4 * NH_TEXT_NAME];
  json_string(s, sizeof s, t.table);
  printf("{\n  \"table\": %s,\n  \"columns\": [", s);
  for (int i = 0; i < t.n; i++) {
    json_string(s, sizeof s, t.name[i]);
    printf("%s\n    {\"name\": %s, ", i ? "," : "", s);
    json_string(s, sizeof s, t.units[i]);
    printf("\"units\": %s, \"key\": %s}", s, i < t.nkey ? "true" : "false");
  }
  printf("\n  ],\n  \"rows\": [");
}

void nh_table_note(const char *fmt, ...) {
  char text[NH_TEXT_LONG];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  if (t.failed) return;
  if (t.fmt == NH_TABLE_TEXT) {
    printf("# %s\n", text);
  } else if (t.fmt == NH_TABLE_JSON) {
    char s[2 * NH_TEXT_LONG];
    json_string(s, sizeof s, text + strspn(text, " ")); /* text's indentation under a row: not data */
    const int wrote =
        snprintf(t.notes + t.notes_len, NOTES_ROOM - t.notes_len, "%s\n    %s", t.notes_len ? "," : "", s);
    /* A note that does not fit, with room kept for the one that says so, is left out whole: its
     * start, written already, is cut off again, so that the notes stay valid json. */
    if (wrote > 0 && t.notes_len + (size_t)wrote < NOTES_ROOM - sizeof NOTES_CUT - 8)
      t.notes_len += (size_t)wrote;
    else
      t.notes[t.notes_len] = '\0', t.notes_cut = 1;
  }
}

void nh_table_block(long k, const char *fmt, ...) {
  if (t.failed || t.fmt != NH_TABLE_TEXT) return;
  char text[NH_TEXT_LONG];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  if (k) fputs("\n\n", stdout);
  printf("# %s\n", text);
}

void nh_table_key_str(int i, const char *s) {
  if (i >= 0 && i < t.nkey) string_cell(t.key[i], sizeof t.key[i], s);
}

void nh_table_key_num(int i, double v) {
  if (i >= 0 && i < t.nkey) number_cell(t.key[i], sizeof t.key[i], v);
}

void nh_table_key_int(int i, long long v) {
  if (i >= 0 && i < t.nkey) snprintf(t.key[i], sizeof t.key[i], "%lld", v);
}

void nh_table_num(double v) {
  char buf[NH_TEXT_NUMBER];
  opening();
  number_cell(buf, sizeof buf, v);
  cell(buf);
}

void nh_table_int(long long v) {
  char buf[NH_TEXT_NUMBER];
  opening();
  snprintf(buf, sizeof buf, "%lld", v);
  cell(buf);
}

void nh_table_str(const char *s) {
  char buf[4 * NH_TEXT_NAME];
  opening();
  string_cell(buf, sizeof buf, s);
  cell(buf);
}

void nh_table_end_row(void) {
  if (t.failed) return;
  fputs(t.fmt == NH_TABLE_JSON ? "]" : "\n", stdout);
  t.cell = 0;
  t.rows++;
}

void nh_table_text_gap(void) {
  if (!t.failed && t.fmt == NH_TABLE_TEXT) putchar('\n');
}

int nh_table_end(void) {
  if (t.failed) return -1;
  if (t.fmt != NH_TABLE_JSON) {
    if (t.fmt != NH_TABLE_TEXT && t.rows == 0) header_row(); /* a table without rows still names its columns */
    return 0;
  }
  opening();
  if (t.notes_cut)
    t.notes_len += (size_t)snprintf(t.notes + t.notes_len, NOTES_ROOM - t.notes_len, "%s\n    \"%s\"",
                                    t.notes_len ? "," : "", NOTES_CUT);
  printf("%s],\n  \"notes\": [%s%s]\n}\n", t.rows ? "\n  " : "", t.notes, t.notes_len ? "\n  " : "");
  return 0;
}
