/* core/: checks added for mutation robustness (issue 16), each against a value worked out by hand. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "core/param.h"
#include "core/text.h"

/* nh_format_double: the shortest text that reads back exactly, in fixed notation for ordinary
 * magnitudes (10 is "10", not %.1g's "1e+01"), %g's exponent form below 1e-4 and from 1e15 on. */
Test(mut_core, format_double_shortest_and_fixed) {
  static const struct {
    double x;
    const char *text;
  } cases[] = {{10, "10"},     {1500, "1500"},   {-2.5, "-2.5"}, {0.1, "0.1"},   {0, "0"},
               {1e-4, "0.0001"}, {1e-5, "1e-05"}, {1e15, "1e+15"}, {123.456, "123.456"},
               {100000, "100000"}, {9.5e14, "950000000000000"}, {-3e7, "-30000000"}, {2.5e-7, "2.5e-07"},
               {0.1 + 0.2, "0.30000000000000004"} /* 17 digits */};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char buf[32];
    nh_format_double(buf, sizeof buf, cases[i].x);
    cr_expect_str_eq(buf, cases[i].text, "%.17g printed as %s, expected %s", cases[i].x, buf, cases[i].text);
  }
  /* 1/3 needs all 17 significant digits to read back. */
  char buf[32];
  nh_format_double(buf, sizeof buf, 1.0 / 3);
  cr_expect(strtod(buf, NULL) == 1.0 / 3, "1/3 printed as %s", buf);
}

/* nh_text_append, each result worked out by hand: sep only between pieces (a one-character
 * string counts as begun), the text formatted, and a piece cut where the array ends, in its sep
 * or in its text, with nothing written past len bytes (the array lies in a larger one filled
 * with '#', which must stay so). */
Test(mut_core, text_append_pieces_and_cuts) {
  static const struct {
    const char *before;
    size_t len;
    const char *sep, *piece, *after;
  } cases[] = {
      {"", 16, ", ", "ab", "ab"},          /* no sep before the first piece */
      {"x", 16, ", ", "y", "x, y"},        /* one character already there */
      {"ab", 7, "-", "cde", "ab-cde"},     /* exactly fills the 7 bytes */
      {"ab", 6, "-", "cde", "ab-cd"},      /* the text cut */
      {"abc", 5, ", ", "d", "abc,"},       /* the sep cut: no text */
      {"abc", 6, ", ", "d", "abc, "},      /* the sep fits, no room for text */
      {"abc", 4, ", ", "d", "abc"},        /* already full */
      {"abc", 4, "", "d", "abc"},          /* full, no sep */
      {"", 1, ", ", "d", ""},              /* room for the terminator only */
      {"a", 16, "", "bc", "abc"},          /* an empty sep */
  };
  for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
    char area[32];
    memset(area, '#', sizeof area);
    memcpy(area, cases[k].before, strlen(cases[k].before) + 1);
    nh_text_append(area, cases[k].len, cases[k].sep, "%s", cases[k].piece);
    cr_expect_str_eq(area, cases[k].after, "case %zu", k);
    for (size_t i = cases[k].len; i < sizeof area; i++)
      cr_expect_eq(area[i], '#', "case %zu: byte %zu written, past the %zu bytes", k, i, cases[k].len);
  }
  char buf[32] = "";
  nh_text_append(buf, sizeof buf, ", ", "%d %s", 3, "failed");
  nh_text_append(buf, sizeof buf, ", ", "(%g, %g)", 0.5, -2.0);
  cr_expect_str_eq(buf, "3 failed, (0.5, -2)");
}
