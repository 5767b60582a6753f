/* nhbench export --format csv|tsv|json (bench/cli/cli_table.c): every table of every study kind
 * read back by parsers written here (RFC 4180 csv, tab-separated, a strict json parser) and held
 * cell by cell to the same table in text, the format gnuplot reads and the other tests check
 * against the files: the same column names (the block's keys first, [units] after a name), the
 * same cells in the same order (numbers to the bit, NaN as json's null), each row's keys those of
 * its text block's '#' line. */
#include <criterion/criterion.h>
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/helpers.h"

#define MAX_CELLS 40000
#define CELL_LEN 160

/* A parsed table: its column names and its rows' cells, in order; per row, the block line text
 * had before it ("" in the other formats). */
typedef struct {
  int ncols, nrows, nkey;
  char cols[64][CELL_LEN];
  int row_start[4096], row_len[4096];
  int ncells;
  char (*cell)[CELL_LEN];
  int is_null[MAX_CELLS]; /* json's null */
  char block[4096][CELL_LEN];
} table;

static table *new_table(void) {
  table *t = calloc(1, sizeof *t);
  cr_assert(t);
  t->cell = calloc(MAX_CELLS, CELL_LEN);
  cr_assert(t->cell);
  return t;
}

static void free_table(table *t) { free(t->cell), free(t); }

static void add_cell(table *t, const char *s, size_t len, int null) {
  cr_assert_lt(t->ncells, MAX_CELLS);
  snprintf(t->cell[t->ncells], CELL_LEN, "%.*s", (int)len, s);
  t->is_null[t->ncells++] = null;
  t->row_len[t->nrows]++;
}

static void end_row(table *t) {
  cr_assert_lt(t->nrows + 1, 4096);
  t->row_start[++t->nrows] = t->ncells;
}

/* A name without its " [units]". */
static const char *bare(const char *name, char *buf) {
  snprintf(buf, CELL_LEN, "%s", name);
  char *u = strstr(buf, " [");
  if (u) *u = '\0';
  return buf;
}

/* ---- the parsers ------------------------------------------------------------------------------ */

/* Text: the '#' line whose words are the names json gives (cut at " (", a suffix such as work
 * precision's norm) names the columns, and the '#' lines before it are notes; after it a '#' line
 * is the block line of the rows that follow. A row's cells are its blank-separated words, the
 * last column's cell "name" the rest of the line. header: whether the table has a header line
 * (names: json's, without the keys); without one (study, attr) a row of words that are not all
 * numbers is one cell. */
static void parse_text(table *t, const char *text, int header, const table *json) {
  char line[8192], block[CELL_LEN] = "", names[8192] = "", b[CELL_LEN];
  for (int i = json->nkey; i < json->ncols; i++)
    snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i > json->nkey ? " " : "",
             bare(json->cols[i], b));
  int named = !header;
  for (const char *p = text; *p;) {
    const size_t len = strcspn(p, "\n");
    snprintf(line, sizeof line, "%.*s", (int)len, p);
    p += len + (p[len] == '\n');
    if (!*line) continue;
    if (line[0] == '#') {
      char *cut = strstr(line, " (");
      if (!named && cut) *cut = '\0';
      if (!named && strcmp(line + 1 + (line[1] == ' '), names) == 0) {
        named = 1;
        for (char *w = strtok(line + 1, " "); w; w = strtok(NULL, " "))
          snprintf(t->cols[t->ncols++], CELL_LEN, "%s", w);
      } else if (named) {
        snprintf(block, sizeof block, "%.*s", (int)sizeof block - 1, line + 2);
      }
      continue;
    }
    cr_assert(named, "a row before the header line '# %s':\n%s", names, text);
    snprintf(t->block[t->nrows], CELL_LEN, "%s", block);
    const int rest_is_name =
        header && t->ncols &&
        (strcmp(t->cols[t->ncols - 1], "name") == 0 || strcmp(t->cols[t->ncols - 1], "units") == 0 ||
         strcmp(t->cols[t->ncols - 1], "label") == 0);
    const int one_cell = !header && strchr(line, ' ') && !isdigit((unsigned char)line[0]) && line[0] != '-';
    const char *q = line;
    for (int k = 0; *q; k++) {
      size_t w = one_cell || (rest_is_name && k == t->ncols - 1) ? strlen(q) : strcspn(q, " ");
      add_cell(t, q, w, 0);
      q += w + (q[w] == ' ');
    }
    end_row(t);
  }
  cr_assert(named, "no header line '# %s' in:\n%s", names, text);
}

/* One csv or tsv record from *p into fields: RFC 4180 for csv (quotes doubled inside quotes). */
static void parse_record(const char **p, char sep, table *t, int into_cols) {
  char field[8192];
  for (;;) {
    size_t k = 0;
    if (**p == '"' && sep == ',') {
      for ((*p)++; **p && !(**p == '"' && (*p)[1] != '"'); (*p)++) {
        if (**p == '"') (*p)++; /* a doubled quote */
        field[k++] = **p;
      }
      cr_assert_eq(**p, '"', "an unterminated quoted field");
      (*p)++;
    } else {
      while (**p && **p != sep && **p != '\n') field[k++] = *(*p)++;
    }
    field[k] = '\0';
    cr_assert(!k || sep != '\t' || !strchr(field, '\t'));
    if (into_cols)
      snprintf(t->cols[t->ncols++], CELL_LEN, "%.*s", CELL_LEN - 1, field); /* a name: cut to its cell */
    else
      add_cell(t, field, k, 0);
    if (**p == sep) {
      (*p)++;
      continue;
    }
    cr_assert_eq(**p, '\n', "a record not ended by a line break (at '%.20s')", *p);
    (*p)++;
    return;
  }
}

static void parse_delimited(table *t, const char *text, char sep) {
  const char *p = text;
  cr_assert(*p, "no header row");
  parse_record(&p, sep, t, 1);
  while (*p) parse_record(&p, sep, t, 0), end_row(t);
}

/* A strict json parser for what export writes: the object's table, columns and rows, notes. */
static void ws(const char **p) {
  while (**p == ' ' || **p == '\n' || **p == '\t' || **p == '\r') (*p)++;
}

static void expect_char(const char **p, char c) {
  ws(p);
  cr_assert_eq(**p, c, "json: expected '%c' at '%.30s'", c, *p);
  (*p)++;
}

static size_t json_str(const char **p, char *out, size_t len) {
  expect_char(p, '"');
  size_t k = 0;
  for (; **p != '"'; (*p)++) {
    cr_assert(**p && (unsigned char)**p >= 0x20, "json: a raw control character or the end in a string");
    char c = **p;
    if (c == '\\') {
      (*p)++;
      c = **p == 'n' ? '\n' : **p == 't' ? '\t' : **p;
      if (**p == 'u')
        c = (char)strtol((char[]){(*p)[1], (*p)[2], (*p)[3], (*p)[4], 0}, NULL, 16), *p += 4;
      else
        cr_assert(strchr("\"\\/bfnrt", **p), "json: a bad escape");
    }
    if (k + 1 < len) out[k++] = c;
  }
  (*p)++;
  out[k] = '\0';
  return k;
}

static void json_value(const char **p, table *t) {
  ws(p);
  if (**p == '"') {
    char s[8192];
    size_t k = json_str(p, s, sizeof s);
    add_cell(t, s, k, 0);
  } else if (strncmp(*p, "null", 4) == 0) {
    add_cell(t, "", 0, 1), *p += 4;
  } else {
    char *end;
    strtod(*p, &end);
    cr_assert(end > *p && strspn(*p, "-0123456789.eE+") == (size_t)(end - *p), "json: not a number at '%.20s'", *p);
    add_cell(t, *p, (size_t)(end - *p), 0);
    *p = end;
  }
}

static void parse_json(table *t, const char *text, const char *name) {
  const char *p = text;
  char key[64], s[8192];
  expect_char(&p, '{');
  json_str(&p, key, sizeof key), expect_char(&p, ':');
  cr_assert_str_eq(key, "table");
  json_str(&p, s, sizeof s);
  cr_expect_str_eq(s, name);
  expect_char(&p, ','), json_str(&p, key, sizeof key), expect_char(&p, ':');
  cr_assert_str_eq(key, "columns");
  expect_char(&p, '[');
  for (ws(&p); *p != ']';) {
    char units[CELL_LEN], flag[8], named[2 * CELL_LEN + 4];
    expect_char(&p, '{');
    json_str(&p, key, sizeof key), expect_char(&p, ':'), json_str(&p, t->cols[t->ncols], CELL_LEN);
    cr_assert_str_eq(key, "name");
    expect_char(&p, ','), json_str(&p, key, sizeof key), expect_char(&p, ':'), json_str(&p, units, sizeof units);
    cr_assert_str_eq(key, "units");
    if (*units) /* as csv names it */
      snprintf(named, sizeof named, "%s [%s]", t->cols[t->ncols], units),
          snprintf(t->cols[t->ncols], CELL_LEN, "%.*s", CELL_LEN - 1, named);
    expect_char(&p, ','), json_str(&p, key, sizeof key), expect_char(&p, ':'), ws(&p);
    cr_assert_str_eq(key, "key");
    snprintf(flag, sizeof flag, "%.4s", p);
    t->nkey += strcmp(flag, "true") == 0;
    p += strcmp(flag, "true") == 0 ? 4 : 5;
    expect_char(&p, '}');
    t->ncols++;
    ws(&p);
    if (*p == ',') p++, ws(&p);
  }
  p++;
  expect_char(&p, ','), json_str(&p, key, sizeof key), expect_char(&p, ':');
  cr_assert_str_eq(key, "rows");
  expect_char(&p, '[');
  for (ws(&p); *p != ']';) {
    expect_char(&p, '[');
    for (ws(&p); *p != ']';) {
      json_value(&p, t), ws(&p);
      if (*p == ',') p++, ws(&p);
    }
    p++, end_row(t), ws(&p);
    if (*p == ',') p++, ws(&p);
  }
  p++;
  expect_char(&p, ','), json_str(&p, key, sizeof key), expect_char(&p, ':');
  cr_assert_str_eq(key, "notes");
  expect_char(&p, '[');
  for (ws(&p); *p != ']';) {
    json_str(&p, s, sizeof s), ws(&p);
    if (*p == ',') p++, ws(&p);
  }
  p++, expect_char(&p, '}'), ws(&p);
  cr_assert_eq(*p, '\0', "json: text after the object");
}

/* ---- the comparison --------------------------------------------------------------------------- */

/* Two cells alike: the same number to the bit (NaN and json's null alike) or the same string. */
static int same_cell(const char *a, int a_null, const char *b, int b_null) {
  char *ea, *eb;
  const double x = a_null ? NAN : strtod(a, &ea), y = b_null ? NAN : strtod(b, &eb);
  const int xnum = a_null || (*a && !*ea), ynum = b_null || (*b && !*eb);
  if (xnum && ynum) return (isnan(x) && isnan(y)) || memcmp(&x, &y, sizeof x) == 0;
  return !a_null && !b_null && strcmp(a, b) == 0;
}

/* The csv (or tsv, json) table f against the text table x: names, keys, cells. */
static void expect_like_text(const table *f, const table *x, int nkey, const char *what) {
  char b1[CELL_LEN];
  if (x->ncols) { /* a table with a header line */
    cr_expect_eq(f->ncols, nkey + x->ncols, "%s: %d columns, text has %d and %d keys", what, f->ncols, x->ncols, nkey);
    for (int i = 0; i < x->ncols && nkey + i < f->ncols; i++)
      cr_expect_str_eq(bare(f->cols[nkey + i], b1), x->cols[i], "%s: column %d", what, nkey + i);
  }
  int k = 0; /* text's cells, in order */
  for (int r = 0; r < f->nrows; r++) {
    const int s = f->row_start[r];
    for (int i = 0; i < nkey; i++) { /* a key cell is in the text's block line */
      const int row = r < x->nrows ? r : x->nrows - 1;
      cr_expect(strstr(x->block[row], f->cell[s + i]) != NULL, "%s: row %d key '%s' not in block line '%s'", what, r,
                f->cell[s + i], x->block[row]);
    }
    for (int i = nkey; i < f->row_len[r]; i++, k++) {
      cr_assert_lt(k, x->ncells, "%s: more cells than text's %d", what, x->ncells);
      cr_expect(same_cell(f->cell[s + i], f->is_null[s + i], x->cell[k], 0), "%s: row %d cell %d '%s', text '%s'", what,
                r, i, f->cell[s + i], x->cell[k]);
    }
  }
  cr_expect_eq(k, x->ncells, "%s: %d cells, text has %d", what, k, x->ncells);
}

/* Every format of `export FILE ARGS` against its text. */
static void round_trip(const char *file, const char *args, const char *name, int header) {
  static char text[1 << 20];
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "export %s %s", file, args);
  cr_assert_eq(test_run_nhbench(cmd, text, sizeof text), 0, "%s: %s", args, text);
  table *j = new_table(), *x = new_table();
  static char json[1 << 20];
  snprintf(cmd, sizeof cmd, "export %s %s --format json", file, args);
  cr_assert_eq(test_run_nhbench(cmd, json, sizeof json), 0, "%s: %s", args, json);
  parse_json(j, json, name);
  parse_text(x, text, header, j);
  cr_assert_gt(x->ncells, 0, "%s: an empty table", args);
  expect_like_text(j, x, j->nkey, args);
  static const char *const formats[] = {"csv", "tsv"};
  for (int fi = 0; fi < 2; fi++) {
    table *d = new_table();
    snprintf(cmd, sizeof cmd, "export %s %s --format %s", file, args, formats[fi]);
    cr_assert_eq(test_run_nhbench(cmd, text, sizeof text), 0, "%s: %s", args, text);
    parse_delimited(d, text, fi == 0 ? ',' : '\t');
    cr_expect_eq(d->ncols, j->ncols, "%s %s", args, formats[fi]);
    for (int i = 0; i < d->ncols && i < j->ncols; i++)
      cr_expect_str_eq(d->cols[i], j->cols[i], "%s %s: column %d (json's name and units)", args, formats[fi], i);
    expect_like_text(d, x, j->nkey, args);
    free_table(d);
  }
  free_table(x), free_table(j);
}

static const struct {
  const char *spec, *tag;
  const char *tables[12]; /* ARGS|NAME|HEADER */
} cases[] = {
    {"convergence_norms.cfg",
     "conv",
     {"convergence|convergence|1", "orders|orders|1", "dataset err,err_q --at method=0|dataset|1", "study|study|0",
      "attr system|attr|0", "attr T|attr|0", "methods|methods|1", "dims|dims|1", "steps|steps|1", "ics|ics|1",
      "dataset status|dataset|1"}},
    {"small_ensemble.cfg",
     "ens",
     {"energy|energy|1", "energy --relative --ics 1:3|energy|1", "energy-all-methods --ic 2|energy-all-methods|1",
      "variance|variance|1", "quantiles --methods 1,0|quantiles|1", "grid|grid|1", "grid --stat final_var|grid|1",
      "ics|ics|1"}},
    {"ensemble_fixed.cfg", "ensobs", {"observables|observables|1", "series --observable constraint_residual|series|1"}},
    {"trajectory_particle.cfg",
     "traj",
     {"observables|observables|1", "series|series|1", "series --method 1 --h 1 --ic 1|series|1",
      "dataset observables/energy_error --at method=0 --at ic=0|dataset|1"}},
    {"onestep_random.cfg", "one", {"local_error|local_error|1", "slopes|slopes|1", "ics|ics|1"}},
    {"work_precision_small.cfg",
     "wp",
     {"work_precision|work_precision|1", "work_precision --norm q_2 --methods 2,0|work_precision|1"}},
};

Test(export_formats, every_table_round_trips_in_csv_tsv_and_json, .timeout = 300) {
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    char path[256];
    test_results_file(path, sizeof path, "export-formats", cases[c].tag, cases[c].spec, "");
    for (int i = 0; cases[c].tables[i]; i++) {
      char args[256], name[64];
      int header = 0;
      const char *bar = strchr(cases[c].tables[i], '|');
      snprintf(args, sizeof args, "%.*s", (int)(bar - cases[c].tables[i]), cases[c].tables[i]);
      sscanf(bar + 1, "%63[^|]|%d", name, &header);
      round_trip(path, args, name, header);
    }
    unlink(path);
  }
}

/* The tables' shapes in csv: a header row of names with their units, a block's keys first, a
 * method's name with commas quoted; and refusals. */
Test(export_formats, csv_header_keys_and_quoting, .timeout = 60) {
  char path[256];
  static char out[1 << 16];
  test_results_file(path, sizeof path, "export-formats", "shape", "convergence_norms.cfg", "");
  char cmd[512];
  snprintf(cmd, sizeof cmd, "export %s convergence --format csv --methods 1", path);
  cr_assert_eq(test_run_nhbench(cmd, out, sizeof out), 0, "%s", out);
  const char *head = "method_index,method,h [time],\"err [as q, v]\",err_q [as q],";
  cr_expect(strncmp(out, head, strlen(head)) == 0, "%s", out);
  cr_expect(strstr(out, ",status,z [action],") != NULL, "%s", out);
  cr_expect(strstr(out, "\n1,\"nh_newmark(beta=0.1,beta2=0.1,alpha=0.5,constraint=point)\",0.1,") != NULL,
            "keys first, the name quoted, then h = 0.1: %s", out);
  snprintf(cmd, sizeof cmd, "export %s methods --format csv", path);
  cr_assert_eq(test_run_nhbench(cmd, out, sizeof out), 0, "%s", out);
  cr_expect(strncmp(out, "index,name,label\n0,", 19) == 0, "%s", out);
  cr_expect(
      strstr(
          out,
          "\n1,\"nh_newmark(beta=0.1,beta2=0.1,alpha=0.5,constraint=point)\",\"nh\\_newmark(beta=0.1,beta2=0.1)\"\n") !=
          NULL,
      "commas quoted: %s", out);
  snprintf(cmd, sizeof cmd, "export %s methods --format xml", path);
  cr_expect_eq(test_run_nhbench(cmd, out, sizeof out), 2);
  cr_expect(strstr(out, "--format 'xml': expected text, csv, tsv or json") != NULL, "%s", out);
  snprintf(cmd, sizeof cmd, "export %s methods --format=text", path);
  cr_assert_eq(test_run_nhbench(cmd, out, sizeof out), 0, "%s", out);
  cr_expect(strncmp(out, "# index name label (label: to the end of the line)\n0 ", 53) == 0,
            "text is the default's: %s", out);
  unlink(path);
}
