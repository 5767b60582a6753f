/* export's table writer (bench/cli/cli_table.c) in each of its four formats, byte for byte: the
 * writer called in-process with its stdout captured, so that cells no results file can hold (tabs,
 * line breaks, control characters) reach csv's quoting, tsv's blanks and json's escapes; tables
 * without rows, notes, missing units, out-of-range indices, truncated cells and a failed table.
 * Then `nhbench export --format` on a results file the test edits: numeric and string attributes
 * as rows, a dataset without units or none at all, a units attribute that cannot be read (exit 2,
 * nothing on stdout), and --format refusals. */
#include <criterion/criterion.h>
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/cli/cli_table.h"
#include "core/text.h"
#include "tests/helpers.h"

static const nh_table_format formats[] = {NH_TABLE_TEXT, NH_TABLE_CSV, NH_TABLE_TSV, NH_TABLE_JSON};
static const char *const format_names[] = {"text", "csv", "tsv", "json"};

static int starts_with(const char *s, const char *prefix) { return strncmp(s, prefix, strlen(prefix)) == 0; }

/* ---- the writer in-process ------------------------------------------------------------------ */

/* What write() prints on stdout for a table named `name` in format fmt (begun here; write ends
 * it), into a static buffer; write's nh_table_end result in *end (NULL: not wanted). */
static const char *written(nh_table_format fmt, const char *name, int (*write)(void), int *end) {
  static char buf[1 << 17];
  fflush(stdout);
  FILE *tmp = tmpfile();
  cr_assert(tmp, "no temporary file for stdout");
  const int saved = dup(1);
  cr_assert_geq(saved, 0);
  dup2(fileno(tmp), 1);
  nh_table_begin(fmt, name);
  const int rc = write();
  fflush(stdout);
  dup2(saved, 1);
  close(saved);
  rewind(tmp);
  buf[fread(buf, 1, sizeof buf - 1, tmp)] = '\0';
  fclose(tmp);
  if (end)
    *end = rc;
  else
    cr_assert_eq(rc, 0, "nh_table_end failed for a table that did not fail");
  return buf;
}

/* write() in each format against want[format] (text, csv, tsv, json). */
static void expect_formats(const char *name, int (*write)(void), const char *const want[4]) {
  for (int i = 0; i < 4; i++) {
    const char *got = written(formats[i], name, write, NULL);
    cr_expect_str_eq(got, want[i], "%s in %s:\n--- got ---\n%s\n--- want ---\n%s", name, format_names[i], got, want[i]);
  }
}

Test(table_formats, format_names_parse_exactly) {
  for (int i = 0; i < 4; i++) {
    nh_table_format f = (nh_table_format)-1;
    cr_expect_eq(nh_table_format_parse(format_names[i], &f), 0, "%s", format_names[i]);
    cr_expect_eq(f, formats[i], "%s", format_names[i]);
  }
  /* Case and blanks matter, and a refused name leaves *fmt as it was. */
  static const char *const refused[] = {"", "CSV", "Json", "json ", "tex", "xml"};
  for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
    nh_table_format f = NH_TABLE_TSV;
    cr_expect_eq(nh_table_format_parse(refused[i], &f), -1, "'%s' accepted", refused[i]);
    cr_expect_eq(f, NH_TABLE_TSV, "'%s' changed the format", refused[i]);
  }
  for (int i = 0; i < 4; i++) {
    nh_table_begin(formats[i], "t");
    cr_expect_eq(nh_table_format_of(), formats[i], "%s", format_names[i]);
  }
}

/* Two blocks keyed by method (an int and a string key with commas), units on one column only,
 * a note, NaN and infinities, an int and a string cell: the shape of export's block tables. */
static int keyed_table(void) {
  static const char *const cols[] = {"method_index", "method", "h", "err", "failed", "label"};
  static const char *const methods[] = {"nh_newmark(beta=0.1,alpha=0.5)", "rk4"};
  nh_table_columns(6, cols, 2, 1, " (err: q_2)");
  nh_table_units(2, "time");
  nh_table_units(3, NULL); /* none: the name alone */
  nh_table_units(5, "");
  nh_table_note("  fit over h in [0.05, 0.1]"); /* text keeps the indentation, json does not */
  for (long k = 0; k < 2; k++) {
    nh_table_key_int(0, k), nh_table_key_str(1, methods[k]);
    nh_table_block(k, "method %ld %s", k, methods[k]);
    nh_table_num(0.1), nh_table_num(k ? NAN : 0.0025), nh_table_int(0), nh_table_str("a \"b\""), nh_table_end_row();
    nh_table_num(0.05), nh_table_num(k ? -INFINITY : INFINITY), nh_table_int(-3), nh_table_str("x"), nh_table_end_row();
  }
  return nh_table_end();
}

Test(table_formats, keyed_blocks_in_every_format) {
  const char *const want[4] = {
      "# h err failed label (err: q_2)\n"
      "#   fit over h in [0.05, 0.1]\n"
      "# method 0 nh_newmark(beta=0.1,alpha=0.5)\n"
      "0.1 0.0025 0 a \"b\"\n"
      "0.05 Inf -3 x\n"
      "\n\n"
      "# method 1 rk4\n"
      "0.1 NaN 0 a \"b\"\n"
      "0.05 -Inf -3 x\n",
      /* csv: keys first, a key or cell with a comma or a quote quoted (quotes doubled); no notes */
      "method_index,method,h [time],err,failed,label\n"
      "0,\"nh_newmark(beta=0.1,alpha=0.5)\",0.1,0.0025,0,\"a \"\"b\"\"\"\n"
      "0,\"nh_newmark(beta=0.1,alpha=0.5)\",0.05,Inf,-3,x\n"
      "1,rk4,0.1,NaN,0,\"a \"\"b\"\"\"\n"
      "1,rk4,0.05,-Inf,-3,x\n",
      /* tsv: nothing quoted, commas and quotes as they are */
      "method_index\tmethod\th [time]\terr\tfailed\tlabel\n"
      "0\tnh_newmark(beta=0.1,alpha=0.5)\t0.1\t0.0025\t0\ta \"b\"\n"
      "0\tnh_newmark(beta=0.1,alpha=0.5)\t0.05\tInf\t-3\tx\n"
      "1\trk4\t0.1\tNaN\t0\ta \"b\"\n"
      "1\trk4\t0.05\t-Inf\t-3\tx\n",
      /* json: NaN and infinities null; the header's suffix and the note as notes, unindented */
      "{\n"
      "  \"table\": \"keyed\",\n"
      "  \"columns\": [\n"
      "    {\"name\": \"method_index\", \"units\": \"\", \"key\": true},\n"
      "    {\"name\": \"method\", \"units\": \"\", \"key\": true},\n"
      "    {\"name\": \"h\", \"units\": \"time\", \"key\": false},\n"
      "    {\"name\": \"err\", \"units\": \"\", \"key\": false},\n"
      "    {\"name\": \"failed\", \"units\": \"\", \"key\": false},\n"
      "    {\"name\": \"label\", \"units\": \"\", \"key\": false}\n"
      "  ],\n"
      "  \"rows\": [\n"
      "    [0,\"nh_newmark(beta=0.1,alpha=0.5)\",0.1,0.0025,0,\"a \\\"b\\\"\"],\n"
      "    [0,\"nh_newmark(beta=0.1,alpha=0.5)\",0.05,null,-3,\"x\"],\n"
      "    [1,\"rk4\",0.1,null,0,\"a \\\"b\\\"\"],\n"
      "    [1,\"rk4\",0.05,null,-3,\"x\"]\n"
      "  ],\n"
      "  \"notes\": [\n"
      "    \"(err: q_2)\",\n"
      "    \"fit over h in [0.05, 0.1]\"\n"
      "  ]\n"
      "}\n"};
  expect_formats("keyed", keyed_table, want);
}

/* Strings no results file holds (its reader refuses control characters) but the writer must still
 * keep in one cell: a tab, LF, CR, other control characters, a quote, a backslash, a comma; in a
 * key, in cells and in the column names. Each of CR and LF is alone in some cell, so that csv's
 * quoting is seen to answer to each. */
static int hostile_table(void) {
  static const char *const cols[] = {"key,1", "a\tb", "say \"x\""};
  nh_table_columns(3, cols, 1, 1, NULL);
  nh_table_units(1, "m\ts");
  nh_table_units(2, "\"q\"");
  nh_table_key_str(0, "k\\\"\n");
  nh_table_str("tab\there"), nh_table_str("two\nlines"), nh_table_end_row();
  nh_table_str("cr\ronly"), nh_table_str("bell\a us\x1f del\x7f"), nh_table_end_row();
  nh_table_str("q\"b\\c,d"), nh_table_str(""), nh_table_end_row();
  return nh_table_end();
}

Test(table_formats, control_characters_quotes_and_backslashes_stay_in_their_cell) {
  const char *const want[4] = {
      /* text writes strings as they are (its tables hold none of these) */
      "# a\tb say \"x\"\n"
      "tab\there two\nlines\n"
      "cr\ronly bell\a us\x1f del\x7f\n"
      "q\"b\\c,d \n",
      /* csv: a comma, quote, CR or LF quotes the field, quotes doubled; a tab or BEL does not */
      "\"key,1\",a\tb [m\ts],\"say \"\"x\"\" [\"\"q\"\"]\"\n"
      "\"k\\\"\"\n\",tab\there,\"two\nlines\"\n"
      "\"k\\\"\"\n\",\"cr\ronly\",bell\a us\x1f del\x7f\n"
      "\"k\\\"\"\n\",\"q\"\"b\\c,d\",\n",
      /* tsv: a tab, CR or LF becomes a blank, in names, units, keys and cells alike */
      "key,1\ta b [m s]\tsay \"x\" [\"q\"]\n"
      "k\\\" \ttab here\ttwo lines\n"
      "k\\\" \tcr only\tbell\a us\x1f del\x7f\n"
      "k\\\" \tq\"b\\c,d\t\n",
      /* json: quote and backslash escaped, every byte below 0x20 as \u00XX, DEL as it is */
      "{\n"
      "  \"table\": \"hostile\",\n"
      "  \"columns\": [\n"
      "    {\"name\": \"key,1\", \"units\": \"\", \"key\": true},\n"
      "    {\"name\": \"a\\u0009b\", \"units\": \"m\\u0009s\", \"key\": false},\n"
      "    {\"name\": \"say \\\"x\\\"\", \"units\": \"\\\"q\\\"\", \"key\": false}\n"
      "  ],\n"
      "  \"rows\": [\n"
      "    [\"k\\\\\\\"\\u000a\",\"tab\\u0009here\",\"two\\u000alines\"],\n"
      "    [\"k\\\\\\\"\\u000a\",\"cr\\u000donly\",\"bell\\u0007 us\\u001f del\x7f\"],\n"
      "    [\"k\\\\\\\"\\u000a\",\"q\\\"b\\\\c,d\",\"\"]\n"
      "  ],\n"
      "  \"notes\": []\n"
      "}\n"};
  expect_formats("hostile", hostile_table, want);
}

/* A table without rows still names its columns (csv, tsv: the header row; json: columns and an
 * empty rows array), and keeps its notes where the format has them. */
static int empty_table(void) {
  static const char *const cols[] = {"index", "h"};
  nh_table_columns(2, cols, 0, 1, NULL);
  nh_table_units(1, "time");
  nh_table_note("no step sizes");
  return nh_table_end();
}

/* The same without a text header line (as attr and study write) and without notes. */
static int empty_headerless_table(void) {
  static const char *const cols[] = {"T"};
  nh_table_columns(1, cols, 0, 0, NULL);
  return nh_table_end();
}

Test(table_formats, tables_without_rows_name_their_columns) {
  const char *const want[4] = {"# index h\n# no step sizes\n", "index,h [time]\n", "index\th [time]\n",
                               "{\n"
                               "  \"table\": \"empty\",\n"
                               "  \"columns\": [\n"
                               "    {\"name\": \"index\", \"units\": \"\", \"key\": false},\n"
                               "    {\"name\": \"h\", \"units\": \"time\", \"key\": false}\n"
                               "  ],\n"
                               "  \"rows\": [],\n"
                               "  \"notes\": [\n"
                               "    \"no step sizes\"\n"
                               "  ]\n"
                               "}\n"};
  expect_formats("empty", empty_table, want);
  const char *const headerless[4] = {"", "T\n", "T\n",
                                     "{\n"
                                     "  \"table\": \"attr\",\n"
                                     "  \"columns\": [\n"
                                     "    {\"name\": \"T\", \"units\": \"\", \"key\": false}\n"
                                     "  ],\n"
                                     "  \"rows\": [],\n"
                                     "  \"notes\": []\n"
                                     "}\n"};
  expect_formats("attr", empty_headerless_table, headerless);
}

/* Text's own lines: the blank line between rows of one value0 (grid), a header suffix without a
 * leading blank, a block's title; none of them in the other formats. A key number NaN. */
static int text_lines_table(void) {
  static const char *const cols[] = {"E0", "v0", "v1"};
  nh_table_columns(3, cols, 1, 1, "; by v0");
  nh_table_key_num(0, NAN);
  nh_table_block(0, "E0 %s", "NaN");
  nh_table_num(1), nh_table_num(2), nh_table_end_row();
  nh_table_text_gap();
  nh_table_num(3), nh_table_num(4), nh_table_end_row();
  return nh_table_end();
}

Test(table_formats, text_gaps_blocks_and_suffixes_are_text_only) {
  const char *const want[4] = {"# v0 v1; by v0\n# E0 NaN\n1 2\n\n3 4\n", "E0,v0,v1\nNaN,1,2\nNaN,3,4\n",
                               "E0\tv0\tv1\nNaN\t1\t2\nNaN\t3\t4\n",
                               "{\n"
                               "  \"table\": \"gaps\",\n"
                               "  \"columns\": [\n"
                               "    {\"name\": \"E0\", \"units\": \"\", \"key\": true},\n"
                               "    {\"name\": \"v0\", \"units\": \"\", \"key\": false},\n"
                               "    {\"name\": \"v1\", \"units\": \"\", \"key\": false}\n"
                               "  ],\n"
                               "  \"rows\": [\n"
                               "    [null,1,2],\n"
                               "    [null,3,4]\n"
                               "  ],\n"
                               "  \"notes\": [\n"
                               "    \"; by v0\"\n"
                               "  ]\n"
                               "}\n"};
  expect_formats("gaps", text_lines_table, want);
}

/* Units and keys of columns the table does not have are ignored: they change nothing written. */
static int out_of_range_table(void) {
  static const char *const cols[] = {"ic", "t"};
  nh_table_columns(2, cols, 1, 1, NULL);
  nh_table_units(-1, "bad"), nh_table_units(2, "bad"), nh_table_units(64, "bad");
  nh_table_key_int(0, 7);
  nh_table_key_int(-1, 1), nh_table_key_int(1, 1); /* 1: a cell column, not a key */
  nh_table_key_num(-1, 2.5), nh_table_key_num(1, 2.5);
  nh_table_key_str(-1, "bad"), nh_table_key_str(1, "bad");
  nh_table_num(0.5), nh_table_end_row();
  return nh_table_end();
}

Test(table_formats, units_and_keys_out_of_range_are_ignored) {
  const char *const want[4] = {"# t\n0.5\n", "ic,t\n7,0.5\n", "ic\tt\n7\t0.5\n",
                               "{\n"
                               "  \"table\": \"range\",\n"
                               "  \"columns\": [\n"
                               "    {\"name\": \"ic\", \"units\": \"\", \"key\": true},\n"
                               "    {\"name\": \"t\", \"units\": \"\", \"key\": false}\n"
                               "  ],\n"
                               "  \"rows\": [\n"
                               "    [7,0.5]\n"
                               "  ],\n"
                               "  \"notes\": []\n"
                               "}\n"};
  expect_formats("range", out_of_range_table, want);
}

/* nh_table_fail before the first row (export: a units attribute it could not read): nothing at all
 * is written, in any format, and nh_table_end says -1. */
static int failed_before_rows(void) {
  static const char *const cols[] = {"index", "h"};
  nh_table_columns(2, cols, 1, 0, " (suffix)");
  nh_table_fail();
  nh_table_units(1, "time"), nh_table_key_int(0, 1), nh_table_note("a note");
  nh_table_block(0, "block"), nh_table_text_gap();
  nh_table_num(1), nh_table_int(2), nh_table_str("s"), nh_table_end_row();
  return nh_table_end();
}

/* nh_table_fail after a row: what was written stays, nothing more comes (json is left open: the
 * exit status says the table is incomplete). */
static int failed_after_a_row(void) {
  static const char *const cols[] = {"index"};
  nh_table_columns(1, cols, 0, 1, NULL);
  nh_table_int(1), nh_table_end_row();
  nh_table_fail();
  nh_table_block(1, "block"), nh_table_text_gap(), nh_table_note("a note");
  nh_table_int(2), nh_table_end_row();
  return nh_table_end();
}

Test(table_formats, a_failed_table_writes_nothing_more_and_ends_with_minus_one) {
  static const char *const after[4] = {"# index\n1\n", "index\n1\n", "index\n1\n",
                                       "{\n"
                                       "  \"table\": \"failed\",\n"
                                       "  \"columns\": [\n"
                                       "    {\"name\": \"index\", \"units\": \"\", \"key\": false}\n"
                                       "  ],\n"
                                       "  \"rows\": [\n"
                                       "    [1]"};
  for (int i = 0; i < 4; i++) {
    int end = 0;
    const char *got = written(formats[i], "failed", failed_before_rows, &end);
    cr_expect_eq(end, -1, "%s", format_names[i]);
    cr_expect_str_eq(got, "", "%s: written after nh_table_fail:\n%s", format_names[i], got);
    got = written(formats[i], "failed", failed_after_a_row, &end);
    cr_expect_eq(end, -1, "%s", format_names[i]);
    cr_expect_str_eq(got, after[i], "%s:\n%s", format_names[i], got);
  }
}

/* ---- truncation: a string longer than its cell still makes a well-formed cell ---------------- */

static char long_text[3000];
/* cli_table.c's room for a key (the cell as written) and a string cell, their terminating NUL included */
enum { KEY_ROOM = NH_TEXT_NAME, CELL_ROOM = 4 * NH_TEXT_NAME };

static int long_cell_table(void) {
  static const char *const cols[] = {"method", "name"};
  nh_table_columns(2, cols, 1, 1, NULL);
  nh_table_key_str(0, long_text);
  nh_table_str(long_text), nh_table_end_row();
  return nh_table_end();
}

/* The cell at *p: csv's quoted field (quotes doubled) or json's string (\", \\ and \u00XX escapes)
 * holding a prefix of long_text, cut where its room (bytes, with the NUL) is full: it fits, and holds
 * at least what fits when every character takes json's longest escape (6 bytes). *p moved past it. */
static void quoted_prefix(const char **p, int json, size_t room) {
  const char *s = *p;
  cr_assert_eq(*s, '"', "not a quoted cell: %.40s", s);
  size_t n = 0;
  for (s++;; n++) {
    char c = *s;
    cr_assert(!json || (unsigned char)c >= 0x20, "a raw control character 0x%02x in a json string", c);
    if (json && *s == '\\') {
      if (*++s == 'u')
        c = (char)strtol((char[]){s[1], s[2], s[3], s[4], 0}, NULL, 16), s += 4;
      else
        c = *s; /* \" or \\ */
    } else if (!json && *s == '"' && s[1] == '"') {
      c = *++s; /* a doubled quote */
    } else if (*s == '"') {
      break; /* the closing quote */
    }
    cr_assert_eq(c, long_text[n], "cell character %zu: 0x%02x, not 0x%02x", n, c, long_text[n]);
    s++;
  }
  const size_t bytes = (size_t)(s + 1 - *p);
  cr_expect_leq(bytes + 1, room, "a cell of %zu bytes and its NUL in a room of %zu", bytes, room);
  cr_expect_geq(n, (room - 8) / 6, "a cell of %zu characters cut early (room %zu)", n, room);
  *p = s + 1;
}

/* json's notes are kept until the end in 64 KiB: notes past that are left out whole, and a last
 * note says so, so that the text stays valid json (a note's start was left in it before). */
static int many_long_notes(void) {
  static const char *const cols[] = {"c"};
  nh_table_columns(1, cols, 0, 1, NULL);
  char x[4001];
  memset(x, 'x', 4000), x[4000] = '\0';
  for (int i = 0; i < 17; i++) nh_table_note("%d%s", i, x);
  return nh_table_end();
}

Test(table_formats, json_notes_past_their_room_are_left_out_whole) {
  const char *got = written(NH_TABLE_JSON, "n", many_long_notes, NULL);
  const char *notes = strstr(got, "\"notes\": [");
  cr_assert_not_null(notes, "%.200s", got);
  int whole = 0;
  for (int i = 0; i < 17; i++) {
    char head[16];
    snprintf(head, sizeof head, "\n    \"%dxxx", i);
    const char *at = strstr(notes, head);
    if (!at) continue;
    whole++;
    cr_expect(strncmp(at + strlen(head) + 3997, "\"", 1) == 0, "note %d cut short", i);
  }
  cr_expect_eq(whole, 16, "the notes that fit in 64 KiB (about 4 KB each) with room for the last one");
  const char *end = "\n    \"further notes left out (over 64 KiB of them)\"\n  ]\n}\n";
  cr_expect(strlen(got) > strlen(end) && strcmp(got + strlen(got) - strlen(end), end) == 0, "ends %s",
            got + strlen(got) - 120);
  for (const char *c = notes; *c; c++) cr_expect((unsigned char)*c >= 0x20 || *c == '\n', "a control character");
}

Test(table_formats, long_strings_are_cut_into_well_formed_cells) {
  /* quotes, backslashes and line breaks throughout, so that a cut inside an escape would show; each
   * of six shifts of the pattern puts another character at the edge of the room */
  static const char pattern[] = "ab\"c\\\n";
  static const char *const rows = "\"rows\": [\n    [";
  for (size_t shift = 0; shift < 6; shift++) {
    for (size_t i = 0; i < sizeof long_text - 1; i++) long_text[i] = pattern[(i + shift) % 6];
    const char *csv = written(NH_TABLE_CSV, "long", long_cell_table, NULL);
    const char *p = csv + strlen("method,name\n");
    cr_assert(starts_with(csv, "method,name\n"), "%s", csv);
    quoted_prefix(&p, 0, KEY_ROOM);
    cr_assert_eq(*p, ',', "after the key: %.20s", p);
    p++;
    quoted_prefix(&p, 0, CELL_ROOM);
    cr_expect_str_eq(p, "\n");
    const char *json = written(NH_TABLE_JSON, "long", long_cell_table, NULL);
    p = strstr(json, rows);
    cr_assert(p, "%s", json);
    p += strlen(rows);
    quoted_prefix(&p, 1, KEY_ROOM);
    cr_assert_eq(*p, ',', "after the key: %.20s", p);
    p++;
    quoted_prefix(&p, 1, CELL_ROOM);
    cr_expect_str_eq(p, "]\n  ],\n  \"notes\": []\n}\n");
  }
}

/* ---- nhbench export --format on a results file the test edits -------------------------------- */

/* Runs `nhbench export PATH ARGS`, its stdout alone into out (stderr into err when err is not NULL,
 * else dropped); the exit status. */
static int export_run(const char *path, const char *args, char *out, size_t outlen, char *err, size_t errlen) {
  char cmd[2048], errpath[64] = "/dev/null";
  if (err) snprintf(errpath, sizeof errpath, "/tmp/nhbench-table-formats-%d.err", (int)getpid());
  snprintf(cmd, sizeof cmd, "%s export %s %s 2>%s", NHBENCH_EXE, path, args, errpath);
  const int rc = test_run_command(cmd, out, outlen);
  if (err) test_read_file(errpath, err, errlen), unlink(errpath);
  return rc;
}

static hid_t open_rw(const char *path) {
  hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  cr_assert_geq(f, 0, "cannot open %s to write", path);
  return f;
}

/* Attribute NAME of object OBJ of the file at PATH replaced by n doubles (n < 0: a null dataspace,
 * no values at all). */
static void put_doubles(const char *path, const char *obj, const char *name, const double *v, int n) {
  hid_t f = open_rw(path);
  if (H5Aexists_by_name(f, obj, name, H5P_DEFAULT) > 0) cr_assert_geq(H5Adelete_by_name(f, obj, name, H5P_DEFAULT), 0);
  hsize_t dim = (hsize_t)(n < 0 ? 0 : n);
  hid_t sp = n < 0 ? H5Screate(H5S_NULL) : H5Screate_simple(1, &dim, NULL);
  hid_t a = H5Acreate_by_name(f, obj, name, H5T_NATIVE_DOUBLE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  cr_assert_geq(a, 0, "cannot create %s/%s", obj, name);
  if (n > 0) cr_assert_geq(H5Awrite(a, H5T_NATIVE_DOUBLE, v), 0);
  H5Aclose(a), H5Sclose(sp), H5Fclose(f);
}

/* Attribute NAME of the root replaced by n variable-length strings. */
static void put_strings(const char *path, const char *name, const char *const *s, int n) {
  hid_t f = open_rw(path);
  if (H5Aexists(f, name) > 0) cr_assert_geq(H5Adelete(f, name), 0);
  hid_t t = H5Tcopy(H5T_C_S1);
  H5Tset_size(t, H5T_VARIABLE);
  hsize_t dim = (hsize_t)n;
  hid_t sp = H5Screate_simple(1, &dim, NULL);
  hid_t a = H5Acreate2(f, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
  cr_assert_geq(a, 0, "cannot create /%s", name);
  cr_assert_geq(H5Awrite(a, t, s), 0);
  H5Aclose(a), H5Sclose(sp), H5Tclose(t), H5Fclose(f);
}

static void delete_attr(const char *path, const char *obj, const char *name) {
  hid_t f = open_rw(path);
  cr_assert_geq(H5Adelete_by_name(f, obj, name, H5P_DEFAULT), 0, "%s/%s", obj, name);
  H5Fclose(f);
}

static char out[1 << 16], err[1 << 16];

/* `export FILE TABLE --format F` exits 0 and writes want[F] exactly, in each format. */
static void expect_exports(const char *path, const char *table, const char *const want[4]) {
  for (int i = 0; i < 4; i++) {
    char args[128];
    snprintf(args, sizeof args, "%s --format %s", table, format_names[i]);
    cr_expect_eq(export_run(path, args, out, sizeof out, NULL, 0), 0, "%s", args);
    cr_expect_str_eq(out, want[i], "%s:\n%s", args, out);
  }
}

/* A numeric attribute: one line in text, a row per value in the other formats; an attribute of no
 * values: an empty line in text, the header alone in csv and tsv, no rows in json. */
Test(table_formats, export_numeric_attributes_one_row_per_value, .timeout = 60) {
  char path[256];
  test_results_file(path, sizeof path, "table-formats", "nums", "convergence_norms.cfg", "");
  put_doubles(path, "/", "three", (const double[]){0.5, -2, 1e-300}, 3);
  put_doubles(path, "/", "none", NULL, -1);
  static const char *const three[4] = {
      "0.5 -2 1e-300\n", "three\n0.5\n-2\n1e-300\n", "three\n0.5\n-2\n1e-300\n",
      "{\n  \"table\": \"attr\",\n  \"columns\": [\n    {\"name\": \"three\", \"units\": \"\", \"key\": false}\n  ],\n"
      "  \"rows\": [\n    [0.5],\n    [-2],\n    [1e-300]\n  ],\n  \"notes\": []\n}\n"};
  static const char *const none[4] = {
      "\n", "none\n", "none\n",
      "{\n  \"table\": \"attr\",\n  \"columns\": [\n    {\"name\": \"none\", \"units\": \"\", \"key\": false}\n  ],\n"
      "  \"rows\": [],\n  \"notes\": []\n}\n"};
  expect_exports(path, "attr three", three);
  expect_exports(path, "attr none", none);
  unlink(path);
}

/* Strings a results file may hold (quotes, backslashes, commas; no control characters): csv quotes
 * the attribute's name and values, tsv leaves them, json escapes them. */
Test(table_formats, export_string_attribute_with_quotes_commas_and_backslashes, .timeout = 60) {
  char path[256];
  test_results_file(path, sizeof path, "table-formats", "strs", "convergence_norms.cfg", "");
  put_strings(path, "a,b", (const char *const[]){"say \"hi\", C:\\dir", "plain"}, 2);
  static const char *const want[4] = {
      "say \"hi\", C:\\dir\nplain\n", "\"a,b\"\n\"say \"\"hi\"\", C:\\dir\"\nplain\n",
      "a,b\nsay \"hi\", C:\\dir\nplain\n",
      "{\n  \"table\": \"attr\",\n  \"columns\": [\n    {\"name\": \"a,b\", \"units\": \"\", \"key\": false}\n  ],\n"
      "  \"rows\": [\n    [\"say \\\"hi\\\", C:\\\\dir\"],\n    [\"plain\"]\n  ],\n  \"notes\": []\n}\n"};
  expect_exports(path, "attr 'a,b'", want);
  unlink(path);
}

/* A dataset without a units attribute: its column is named alone (json: units ""). */
Test(table_formats, export_column_without_units_is_named_alone, .timeout = 60) {
  char path[256];
  test_results_file(path, sizeof path, "table-formats", "nounits", "convergence_norms.cfg", "");
  cr_assert_eq(export_run(path, "steps --format csv", out, sizeof out, NULL, 0), 0);
  cr_assert_str_eq(out, "index,h [time]\n0,0.1\n1,0.05\n", "the file as written: %s", out);
  delete_attr(path, "/convergence/h", "units");
  cr_expect_eq(export_run(path, "steps --format csv", out, sizeof out, NULL, 0), 0);
  cr_expect_str_eq(out, "index,h\n0,0.1\n1,0.05\n");
  cr_expect_eq(export_run(path, "steps --format tsv", out, sizeof out, NULL, 0), 0);
  cr_expect_str_eq(out, "index\th\n0\t0.1\n1\t0.05\n");
  cr_expect_eq(export_run(path, "steps --format json", out, sizeof out, NULL, 0), 0);
  cr_expect(strstr(out, "{\"name\": \"h\", \"units\": \"\", \"key\": false}") != NULL, "%s", out);
  unlink(path);
}

/* A column whose units come from a dataset the file lacks (orders' fit_h_min and fit_h_max take h's
 * units; h deleted here): the column is named alone and the table is still written. */
Test(table_formats, export_units_of_an_absent_dataset_are_left_out, .timeout = 60) {
  char path[256];
  test_results_file(path, sizeof path, "table-formats", "noh", "convergence_norms.cfg", "");
  static const char *const head = "index,claimed,observed,stderr,fit_h_min,fit_h_max,expected,ok,name\n";
  cr_assert_eq(export_run(path, "orders --format csv", out, sizeof out, NULL, 0), 0);
  cr_assert(starts_with(out, "index,claimed,observed,stderr,fit_h_min [time],fit_h_max [time],"),
            "the file as written: %s", out);
  hid_t f = open_rw(path);
  cr_assert_geq(H5Ldelete(f, "/convergence/h", H5P_DEFAULT), 0);
  H5Fclose(f);
  cr_expect_eq(export_run(path, "orders --format csv", out, sizeof out, err, sizeof err), 0, "%s", err);
  cr_expect(starts_with(out, head), "%s", out);
  cr_expect(strstr(out, "\n0,4,") && strstr(out, "\n1,2,"), "the rows of rk4 and nh_newmark: %s", out);
  unlink(path);
}

/* A units attribute that is not text: csv, tsv and json, which show units, stop with exit status 2,
 * the reader's message and nothing on stdout (no header row of a table that is not there); text,
 * which shows none, writes the table. */
Test(table_formats, export_unreadable_units_fails_with_nothing_written, .timeout = 60) {
  char path[256];
  test_results_file(path, sizeof path, "table-formats", "badunits", "convergence_norms.cfg", "");
  put_doubles(path, "/convergence/h", "units", (const double[]){1}, 1);
  for (int i = 1; i < 4; i++) {
    char args[64];
    snprintf(args, sizeof args, "steps --format %s", format_names[i]);
    cr_expect_eq(export_run(path, args, out, sizeof out, err, sizeof err), 2, "%s", args);
    cr_expect_str_eq(out, "", "%s: stdout has\n%s", args, out);
    cr_expect(strstr(err, "attribute 'units' of /convergence/h is not text") != NULL, "%s: %s", args, err);
  }
  cr_expect_eq(export_run(path, "steps", out, sizeof out, err, sizeof err), 0, "%s", err);
  cr_expect_str_eq(out, "# index h\n0 0.1\n1 0.05\n");
  cr_expect_str_eq(err, "");
  unlink(path);
}

/* --format's refusals: no argument, a name in another case; the arguments around it (none, one too
 * many); and it may come before FILE. */
Test(table_formats, export_format_option_refusals_and_position, .timeout = 60) {
  char path[256];
  test_results_file(path, sizeof path, "table-formats", "opt", "convergence_norms.cfg", "");
  cr_expect_eq(export_run(path, "steps --format", out, sizeof out, err, sizeof err), 2);
  cr_expect_str_eq(out, "");
  cr_expect(starts_with(err, "nhbench export: option '--format' needs an argument\nusage: nhbench export"), "%s", err);
  cr_expect_eq(export_run(path, "steps --format CSV", out, sizeof out, err, sizeof err), 2);
  cr_expect_str_eq(out, "");
  cr_expect_str_eq(err, "nhbench export: --format 'CSV': expected text, csv, tsv or json\n"
                        "(nhbench export --help lists the tables and their options)\n");
  /* options first: no FILE and TABLE is still the message, with the usage */
  cr_expect_eq(export_run("", "--format csv", out, sizeof out, err, sizeof err), 2);
  cr_expect(starts_with(err, "nhbench export: no FILE.h5 and TABLE given\nusage: nhbench export"), "%s", err);
  /* a word after TABLE (after attr's NAME) is refused whatever the format */
  static const char *const extra[] = {"steps extra --format csv", "attr T extra --format json"};
  for (int i = 0; i < 2; i++) {
    cr_expect_eq(export_run(path, extra[i], out, sizeof out, err, sizeof err), 2, "%s", extra[i]);
    cr_expect_str_eq(out, "", "%s", extra[i]);
    cr_expect(starts_with(err, "nhbench export: unexpected argument 'extra'\n"), "%s: %s", extra[i], err);
  }
  char args[512];
  snprintf(args, sizeof args, "--format=tsv %s steps", path);
  cr_expect_eq(export_run("", args, out, sizeof out, NULL, 0), 0);
  cr_expect_str_eq(out, "index\th [time]\n0\t0.1\n1\t0.05\n");
  unlink(path);
}
