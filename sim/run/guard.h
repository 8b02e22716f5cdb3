/* guard — bounds on a run that could never end: the checks world_run makes
 * every GUARD_CHECK_EVENTS events (sim/engine/engine.h engine_run_until), so the
 * engine's loop pays nothing per event for them.
 *
 *  - Simulated time that stops: when the clock has not moved over
 *    max(GUARD_STALL_EVENTS, GUARD_STALL_PER_TENANT × tenants +
 *    GUARD_STALL_PER_ROW × the most request-trace rows sharing one time)
 *    events (more than any burst of real work at one instant: a trace may
 *    hold millions of requests at one timestamp), the scenario has a cycle
 *    of zero-duration steps (e.g. cloud-only with a zero round trip, zero
 *    verify time and zero think time). The run stops with an input error
 *    (exit status 2) naming the scenario's zero durations.
 *  - Runs too long to finish: from the second check on, the events still to
 *    come are projected from the rate of the last window (events per
 *    simulated second) over what is left of `duration`; when every tenant
 *    replays the request trace, whose arrivals end, also from the events
 *    per finished request over the trace's requests not yet finished, and
 *    the smaller projection counts. Beyond GUARD_MAX_EVENTS in all, the run
 *    stops with an input error at `duration` that gives the estimate.
 *  - A backlog that cannot be served: requests waiting for their tenant
 *    (Poisson or trace arrivals faster than it serves them) are projected
 *    to the end at the growth since the start, but never past the trace's
 *    request count when every tenant replays it; beyond GUARD_MAX_WAITING
 *    (8 bytes each) the run stops with an input error at the first Poisson
 *    group's `workload.rate` (or the trace's key) that gives the numbers.
 *  - A trace too large to be of use (guard_watch_trace, the replication
 *    `--trace` writes): early in the run, after the start-up events, its
 *    bytes per event and the events per simulated second of a short window
 *    project its size at the end, as the events above are projected; past
 *    GUARD_TRACE_WARN_BYTES a warning (err_warn) says so while little is
 *    written, and the run goes on. The regular checks project it again,
 *    from their windows, until it has warned once.
 * docs/formats.md ("Run budget") states the same bounds.
 */
#ifndef SPECSIM_GUARD_H
#define SPECSIM_GUARD_H

#include <stdint.h>

#include "base/err.h"
#include "config/scenario.h"
#include "io/trace.h"

#define GUARD_CHECK_EVENTS ((uint64_t)1 << 22)
#define GUARD_STALL_EVENTS ((uint64_t)1 << 22)
#define GUARD_STALL_PER_TENANT 64
/* Events one trace row can cause at its arrival instant: its arrival (the
 * tenant's next one is scheduled then) and the start of its request. */
#define GUARD_STALL_PER_ROW 4
#define GUARD_MAX_EVENTS 1e12
#define GUARD_MAX_WAITING 1e8
/* A trace projected past this many bytes draws the warning (1 GB: at the
 * 100-250 bytes an event takes, some 5-10 million events; viewers load
 * such a file slowly or not at all). */
#define GUARD_TRACE_WARN_BYTES 1e9
/* The early look at a trace: its window runs from max(GUARD_TRACE_LOOK,
 * GUARD_STALL_PER_TENANT × tenants) events (the start-up burst behind)
 * to four times that. */
#define GUARD_TRACE_LOOK ((uint64_t)1 << 16)

typedef struct guard {
    const scenario_t *s;
    uint64_t stall_limit;
    int trace_only;       /* every tenant replays the request trace */
    double trace_rows;    /* then its requests that arrive before the end */
    uint64_t next;        /* the event count of the next regular check */
    double mark_t;        /* when the clock last moved, at a check */
    uint64_t mark_ev;     /* the event count then */
    double last_t;        /* the previous check */
    uint64_t last_ev;
    double last_bytes;    /* the trace's bytes then */
    int checks;
    const trace_t *trace; /* the trace written (guard_watch_trace), or NULL */
    uint64_t look_next;   /* the early look's next point, UINT64_MAX: done */
    double look_t, look_bytes;   /* its window's start */
    uint64_t look_ev;
    int warned;           /* the trace's size was warned of */
} guard_t;

/* s and trace (its request trace, NULL when none) are borrowed. */
void guard_init(guard_t *g, const scenario_t *s, const workload_trace_t *trace);
/* Projects tr's size too (the replication is traced into it). */
void guard_watch_trace(guard_t *g, const trace_t *tr);
/* The event count at which world_run should check next. */
static inline uint64_t guard_next(const guard_t *g)
{
    return g->next < g->look_next ? g->next : g->look_next;
}
/* One check at simulated time now after `events` events (guard_next's
 * count), with `waiting` arrivals waiting, `done` requests finished and
 * the run meant to end at `end` (the scenario's duration). 0, or -1 with
 * err (ERR_INPUT) when the run has to stop. */
int guard_check(guard_t *g, double now, uint64_t events, uint64_t waiting, uint64_t done,
                double end, err_t *err);

#endif
