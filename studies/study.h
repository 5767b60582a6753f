/* Studies: a declarative spec (a libconfig text file, format in README.md "Study specs") expands
 * into tasks that the runner executes in parallel with OpenMP; results go to one HDF5 file
 * (results/README.md). The runner sees systems and integrators only through their interfaces.
 * This header gathers the studies' rooms, each of which says what it holds:
 *   studies/spec.h         the spec (nh_study) and its loader; settings.h its settings' table
 *   studies/kinds.h        the study kinds' tables and registry (kinds.def); columns.h their results' columns
 *   studies/spec_source.h  a spec's text: reading it, its includes, its integer literals
 *   studies/reference.h    what errors are measured against, norms, error floors
 *   studies/statistics.h   drift slopes, statistics over ensembles, order fits
 *   studies/runs.h         each kind's result and runner
 *   studies/tasks.h        the task runtime: threads and MPI ranks, the journal, progress, room
 * and, below them, studies/observables.h and the one stepping loop (integrators/evolve.h). */
#ifndef NH_STUDY_H
#define NH_STUDY_H

#include "integrators/evolve.h"
#include "studies/columns.h"
#include "studies/kinds.h"
#include "studies/observables.h"
#include "studies/reference.h"
#include "studies/runs.h"
#include "studies/settings.h"
#include "studies/spec.h"
#include "studies/spec_source.h"
#include "studies/statistics.h"
#include "studies/tasks.h"

#endif
