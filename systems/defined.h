/* A system written as text in a spec (issue 50): coordinates, parameters, the mass matrix, the
 * potential, the constraint rows and the optional forces as expressions, from which every
 * derivative the interface asks for (∇V, ∇²V, ∂M/∂q, ∂A/∂q, ∂b/∂q, the curvature term) is taken
 * symbolically (core/expr.h). The result is an nh_system_type like a system file's, evaluated
 * through C generated from the printed expressions and compiled once (core/native.h), or, where no
 * compiler is found, through the expression interpreter, with a note.
 *
 * Names inside the expressions: the coordinates q (as named), their velocities (v followed by the
 * coordinate's name: vx for x), the time t, the parameters, and the constant pi. Each quantity may
 * read only what its place in the interface passes: the mass, the potential and the constraints
 * q and the parameters; damping and forcing t and the parameters; invariants q, v and the
 * parameters.
 *
 * The structure some methods ask of a system is proved on the expressions, for every parameter
 * value: constraints_solved_first where A's first k columns are the identity's numbers,
 * NH_CAP_PARTICLE_STRUCTURE where the definition is the particle's (systems/system.h). */
#ifndef NH_SYSTEMS_DEFINED_H
#define NH_SYSTEMS_DEFINED_H

#include <stddef.h>

#include "systems/system.h"

/* An expression's text and where it was written: the caller's handle (a spec setting), handed back
 * with a refusal so that the caller can place it ("FILE:LINE", "--set PATH"). */
typedef struct {
  const char *text;
  const void *origin;
} nh_defined_text;

/* What a spec writes, as text: every pointer is borrowed for the build only. */
typedef struct {
  const char *name;
  const void *origin; /* of the definition as a whole, for what belongs to no one text */
  /* Of the name, the constraint rows, the mass matrix and sample_box, where a refusal of theirs
   * goes (NULL: the definition's). */
  const void *name_origin, *constraints_origin, *mass_origin, *sample_box_origin;
  int n;
  const char *coords[NH_MAX_N];
  const void *coords_origin;
  int nparams;
  const char *param_names[NH_MAX_PARAMS];
  double param_values[NH_MAX_PARAMS];
  const void *param_origins[NH_MAX_PARAMS];
  int mass_identity;                         /* 1: M = I and mass[] unread */
  nh_defined_text mass[NH_MAX_N * NH_MAX_N]; /* row-major n×n */
  nh_defined_text potential;
  int k;
  nh_defined_text constraints[NH_MAX_K * NH_MAX_N]; /* rows of A(q), row-major k×n */
  nh_defined_text affine[NH_MAX_K];                 /* b(q) per row; text NULL: 0 (all NULL: linear) */
  nh_defined_text damping;                          /* α(t); text NULL: none */
  int has_forcing;
  nh_defined_text forcing[NH_MAX_N]; /* F(t) */
  int ninvariants;
  const char *invariant_names[NH_MAX_INVARIANTS];
  nh_defined_text invariants[NH_MAX_INVARIANTS];
  double q0[NH_MAX_N], v0[NH_MAX_N]; /* the default initial condition */
  double sample_box;                 /* the generic sampler's box, > 0 */
} nh_system_definition;

typedef enum {
  NH_DEFINED_AUTO,        /* compiled where a compiler is found, else interpreted (with a note) */
  NH_DEFINED_COMPILED,    /* compiled, or refused */
  NH_DEFINED_INTERPRETED, /* the interpreter, always (the tests compare the two) */
} nh_defined_mode;

typedef struct nh_defined_system nh_defined_system;

/* Builds the system. Returns NULL on a refusal, with the message in err ("potential: unknown name
 * 'zz' in '0.5*zz^2' (at 'zz^2')") and in *origin the origin of the text it concerns (the
 * definition's own where it concerns no one text). note (may be NULL) receives a remark for the
 * user, "" if none (the interpreter's slowness). */
nh_defined_system *nh_defined_system_build(const nh_system_definition *def, nh_defined_mode mode, const void **origin,
                                           char *err, size_t errlen, char *note, size_t notelen);
/* Its table, valid until nh_defined_system_free. */
const nh_system_type *nh_defined_system_type(const nh_defined_system *d);
/* 1 if it runs on generated C, 0 on the interpreter. */
int nh_defined_system_compiled(const nh_defined_system *d);
/* The generated C source (also when interpreted: what would have been compiled). */
const char *nh_defined_system_source(const nh_defined_system *d);
void nh_defined_system_free(nh_defined_system *d);

#endif
