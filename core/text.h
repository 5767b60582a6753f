/* Messages built a piece at a time ("unknown system 'x' (systems: a, b, c)"), in fixed arrays:
 * the one place that does the arithmetic of what still fits. */
#ifndef NH_CORE_TEXT_H
#define NH_CORE_TEXT_H

#include <stddef.h>

/* Appends the printf-style text to the string in buf, an array of len bytes, after sep unless buf
 * is still empty. What does not fit is cut; buf stays a string. */
#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
void nh_text_append(char *buf, size_t len, const char *sep, const char *fmt, ...);

#endif
