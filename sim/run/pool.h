/* pool — how many threads a command runs on, and how one budget of threads
 * is shared between the points of a sweep and the replications of a point.
 *
 * One policy for `run -j`, `sweep -j` and `optimize -j` (docs/design.md,
 * "Threads"): a budget of N threads runs at most N simulations at once,
 * whether they are points or replications of a point, so the cores are
 * never oversubscribed. Points come first: with P points to run and P >= N,
 * N threads take points one at a time and each point runs its replications
 * one after another on its thread; with P < N, all P points run at once and
 * point k (in the order given) runs its replications on pool_share(N, P, k)
 * threads: N / P each, the first N % P points one more. The split depends
 * on N, P and k alone, and the results on none of them: every replication
 * draws from its own streams (seed, replication) and is summarised in
 * replication order (sim/run/sim.c).
 *
 * The testbed does not use it: its replications run in real time, one after
 * another (docs/testbed.md).
 */
#ifndef SPECSIM_POOL_H
#define SPECSIM_POOL_H

#include <stddef.h>

#include "base/api.h"

/* The largest thread count a command accepts (-j). */
enum { POOL_JOBS_MAX = 4096 };

/* The CPUs this process may run on (its affinity mask: a Slurm job or a
 * container may grant fewer than are online), at least 1: the default -j. */
long pool_cores(void);

/* jobs itself, or pool_cores() when jobs <= 0. */
SPECSIM_API long pool_jobs(long jobs);

/* Threads for the replications of unit k of n units (points) run on a
 * budget of jobs threads: 1 when n >= jobs, else jobs / n, plus one for the
 * first jobs % n units. jobs >= 1, k < n. */
long pool_share(long jobs, size_t n, size_t k);

#endif
