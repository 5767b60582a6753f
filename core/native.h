/* Generated C compiled once and loaded (issue 50, item 3): a translation unit of C text becomes a
 * shared object in a per-user cache, named by a hash of what made it, and is loaded with dlopen.
 * The systems written in a spec evaluate through it; where it fails (no compiler, say) they fall
 * back to the expression interpreter (core/expr.h), whose results agree to the bit because the
 * object is built with -ffp-contract=off and without -ffast-math.
 *
 * The compiler: $NHBENCH_CC if set (a path, or a name looked up in PATH; empty or "none": no
 * compiler), else the C compiler CMake found when nhbench was built. Its arguments are fixed:
 *   CC -std=c11 -O2 -ffp-contract=off -fPIC -shared -o OUT SOURCE.c -lm
 * It is run with posix_spawn and an argument array, never through a shell, so no character of the
 * source text or of a path is ever read as a command. (posix_spawn, unlike fork, is also safe in an
 * MPI rank whose interconnect pins memory: glibc spawns with vfork semantics.)
 *
 * The cache directory: $NHBENCH_CACHE_DIR if set, else $XDG_CACHE_HOME/nhbench (an absolute
 * XDG_CACHE_HOME), else $HOME/.cache/nhbench, else /tmp/nhbench-UID; created with mode 0700. Since
 * what is in it is loaded as code, a directory not owned by the user or writable by group or others
 * is refused. An object is nhbench-HHHHHHHHHHHHHHHH.so, H the 64-bit FNV-1a hash (core/hash.h) of
 * the source, the compiler as named, the flags, NH_NATIVE_ABI and the machine (uname -m): the same
 * source compiled by another compiler or for another ABI is another file, and a home directory
 * shared by nodes of two architectures keeps an object for each.
 *
 * Each compilation happens in a private directory made by mkdtemp inside the cache directory; the
 * object is renamed from there onto its final name (atomic) and loaded, and the private directory
 * is removed on every path. Two processes (MPI ranks, parallel tests) compiling the same source at
 * once both succeed: each rename puts a complete object for the same hash in place. A cached
 * object that does not load (truncated, from another compiler's runtime) is compiled again and
 * replaced, once per call. Every failure (allocation, system call, compiler, loader) is
 * returned with a message, never a crash. Thread-safe but for the message text of strerror. */
#ifndef NH_CORE_NATIVE_H
#define NH_CORE_NATIVE_H

#include <stddef.h>

/* Part of every object's hash: raise it when what the generated code expects of its caller (the
 * signature of its functions, the layout of what they are passed) changes, so that no object built
 * for the old convention is loaded again. */
#define NH_NATIVE_ABI 1

/* The flags every object is compiled with (the compiler, "-o OUT SOURCE.c" and "-lm" around them). */
#define NH_NATIVE_FLAGS "-std=c11 -O2 -ffp-contract=off -fPIC -shared"

typedef struct nh_native nh_native;

/* The shared object for the C text source (one translation unit), compiled now or taken from the
 * cache, and loaded with dlopen(RTLD_NOW | RTLD_LOCAL). *compiled (compiled may be NULL) is 1 if
 * this call ran the compiler, 0 for a cache hit. NULL with a message in err (len errlen) when
 * there is no compiler (the message then begins "no C compiler"), the cache directory cannot be
 * made or is unsafe, the compiler fails (its first lines of output in the message, the file named
 * source.c), the object does not load, or memory runs out. */
nh_native *nh_native_load(const char *source, int *compiled, char *err, size_t errlen);

/* The address of the object's symbol name (dlsym); NULL if it has none. */
void *nh_native_symbol(const nh_native *lib, const char *name);

/* The path of the cached object lib was loaded for (for notes). */
const char *nh_native_path(const nh_native *lib);

/* Unloads the object (dlclose) and frees lib; NULL is allowed. The cached file stays. */
void nh_native_close(nh_native *lib);

/* The compiler nh_native_load would run, as named ($NHBENCH_CC or the build's); NULL if there is
 * none ($NHBENCH_CC empty or "none", or a build without one). Whether it exists is not checked. */
const char *nh_native_compiler(void);

/* The cache directory's path, by the rules above, into buf (len bytes), without creating it.
 * Returns buf; NULL if the path does not fit or no rule gives one. */
const char *nh_native_cache_dir(char *buf, size_t len);

#endif
