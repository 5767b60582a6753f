/* core/: checks added for mutation robustness (issue 16), each against a value worked out by hand. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "core/param.h"

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
