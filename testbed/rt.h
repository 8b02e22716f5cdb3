/* rt — the simulator's event engine driven by the wall clock
 * (docs/testbed.md, "How it runs").
 *
 * Each testbed process runs the simulator's own entities (sim/entity/edge.c and
 * the protocols on the edge side; sim/entity/ctenant.c and sim/entity/cloud.c on the
 * verifier's) on an engine_t, but lets CLOCK_MONOTONIC decide when an event
 * runs: the loop sleeps in epoll until the earliest event is due (a
 * timerfd armed at its absolute time) or a socket has data, and runs due
 * events with the engine's clock set to the instant they really run
 * (engine_step), so every timestamp the tally sees is a measured one. Time
 * is in seconds since the run's start, which both processes share.
 */
#ifndef TESTBED_RT_H
#define TESTBED_RT_H

#include <signal.h>
#include <stdint.h>

#include "engine/engine.h"
#include "base/err.h"

typedef struct rt {
    int ep, tfd;            /* epoll set, its timerfd */
    double start;           /* CLOCK_MONOTONIC seconds of time 0 */
    const volatile sig_atomic_t *stop; /* set by a signal handler: leave */
    /* how late events ran behind their due time (s) */
    double late_sum, late_max;
    double steps;
} rt_t;

/* Sets up the epoll set and timer for a run that starts at `start`
 * (wallclock_s seconds, sim/base/wallclock.h). stop may be NULL. 0, or -1 with err. Release with
 * rt_fini. Also asks the kernel for 1 us timer slack: the default 50 us
 * would blur millisecond service times. */
int rt_init(rt_t *rt, double start, const volatile sig_atomic_t *stop, err_t *err);
void rt_fini(rt_t *rt);
/* Seconds since the start. */
double rt_now(const rt_t *rt);
/* Watches fd for input; its events come back with `tag`. 0, or -1. */
int rt_watch(rt_t *rt, int fd, uint32_t tag, err_t *err);

/* Called for input on a watched fd: 0, or -1 to stop with err filled. */
typedef int (*rt_input_fn)(void *ctx, uint32_t tag, err_t *err);

/* Runs the engine's events at their wall-clock times and hands socket
 * input to on_input, until `end`. Returns 0 at end, -1 with err on a
 * failure (a handler's, or a signal: "interrupted"). */
int rt_run(rt_t *rt, engine_t *e, double end, rt_input_fn on_input, void *ctx,
           err_t *err);

#endif
