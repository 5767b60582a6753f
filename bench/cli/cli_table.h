/* The tables of nhbench export, written in one of four formats (export --format):
 *   text  the whitespace-separated tables for gnuplot: a '#' line naming the columns, blocks
 *         separated by two blank lines, each named by a '#' line, notes as '#' lines;
 *   csv   RFC 4180: a header row of names (with [units] where the file gives them), a row per
 *         line; a string with a comma, a quote or a line break quoted; NaN as NaN;
 *   tsv   the same with tabs (a tab or line break in a string becomes a blank);
 *   json  one object: {"table", "columns": [{"name", "units"}], "rows": [[...]], "notes"}; NaN
 *         and infinities as null.
 * A block's identity (a method, an initial condition) is in key columns, the first columns of
 * every row in csv, tsv and json; in text it is the block's '#' line instead. A table opens
 * with nh_table_begin and nh_table_columns, writes its blocks and rows, and ends with
 * nh_table_end. One table at a time (the state is static: export writes one table). */
#ifndef NH_CLI_TABLE_H
#define NH_CLI_TABLE_H

typedef enum { NH_TABLE_TEXT, NH_TABLE_CSV, NH_TABLE_TSV, NH_TABLE_JSON } nh_table_format;

/* "text", "csv", "tsv" or "json" into *fmt: 0, or -1 for another name. */
int nh_table_format_parse(const char *name, nh_table_format *fmt);

void nh_table_begin(nh_table_format fmt, const char *table);
nh_table_format nh_table_format_of(void);

/* The columns: the first nkey are key columns (set per block), the rest a row's cells. header:
 * whether text has a '#' line naming the row columns (then followed by suffix, or nothing). */
#define NH_TABLE_MAX_COLUMNS 64
void nh_table_columns(int n, const char *const *names, int nkey, int header, const char *suffix);
/* Units of column i (copied; NULL or "" for none): "name [units]" in the csv and tsv headers. */
void nh_table_units(int i, const char *units);

/* A note: text "# NOTE"; json an entry of "notes"; csv and tsv nothing. */
void nh_table_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Block k (from 0): text the two blank lines before every block but the first, then "# TITLE". */
void nh_table_block(long k, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The value of key column i for the rows that follow. */
void nh_table_key_int(int i, long long v);
void nh_table_key_num(int i, double v);
void nh_table_key_str(int i, const char *s);
/* A row's cells in order, then nh_table_end_row. */
void nh_table_num(double v);
void nh_table_int(long long v);
void nh_table_str(const char *s);
void nh_table_end_row(void);
/* A blank line in text only (the grid table's line between rows of one value0). */
void nh_table_text_gap(void);
/* After a failure the table cannot recover from (a units attribute that could not be read, said
 * by its reader): nothing more is written, and nh_table_end returns -1. */
void nh_table_fail(void);
/* json's closing (and the header row of a table without rows); 0, or -1 after nh_table_fail. */
int nh_table_end(void);

#endif
