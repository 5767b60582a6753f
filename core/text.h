/* Messages built a piece at a time ("unknown system 'x' (systems: a, b, c)"), in fixed arrays:
 * the one place that does the arithmetic of what still fits. */
#ifndef NH_CORE_TEXT_H
#define NH_CORE_TEXT_H

#include <stddef.h>

/* The sizes of those arrays, one per role: a buffer's size says what it holds. One that holds
 * several pieces adds theirs (a path and a suffix: NH_TEXT_PATH + NH_TEXT_NAME). */
#define NH_TEXT_NUMBER 32      /* a number as printf writes it (%.17g: at most 24 characters) */
#define NH_TEXT_NAME 256       /* a name or short label: a setting, dataset, observable, keyword */
#define NH_TEXT_CANONICAL 1024 /* a method's or system's canonical name, every parameter written out */
#define NH_TEXT_MESSAGE 1024   /* a message, or a line */
#define NH_TEXT_LONG 4096      /* a long list or table row, the usage text */
#define NH_TEXT_PATH 4096      /* a file's path (PATH_MAX on Linux) */

/* Appends the printf-style text to the string in buf, an array of len bytes, after sep unless buf
 * is still empty. What does not fit is cut; buf stays a string. */
#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
void nh_text_append(char *buf, size_t len, const char *sep, const char *fmt, ...);

/* The edit distance between two names as a user means them: case, '_' and '-' ignored, an adjacent
 * transposition one edit (optimal string alignment); names longer than 63 characters compare by
 * their first 63. "McLachlan" and "mclachlan8" are 1 apart, "ContactOscillator" and
 * "contact_oscillator" 0. */
int nh_text_distance(const char *a, const char *b);

/* "did you mean" for an unknown `name`: appends to buf (nh_text_append, separator ", ") the
 * candidates[0 .. n) within nh_text_distance max(2, |name|/3) of it, closest first, at most 3.
 * Returns how many it appended. */
int nh_text_suggest(const char *name, const char *const *candidates, int n, char *buf, size_t len);

#endif
