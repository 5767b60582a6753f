/* Compiler attributes, empty where the compiler has none. */
#ifndef NH_CORE_ATTRIBUTES_H
#define NH_CORE_ATTRIBUTES_H

/* A parameter the function's fixed signature passes but this implementation does not read (a
 * system's table entry that ignores the positions, a callback that ignores its context). */
#if defined(__GNUC__)
#define NH_UNUSED __attribute__((unused))
#else
#define NH_UNUSED
#endif

#endif
