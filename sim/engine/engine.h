/* engine — simulated clock and event queue; knows nothing of LLMs.
 *
 * Events are small values (time, insertion sequence, type, two integer
 * payloads) kept in a priority queue ordered by (time, seq), those due at
 * the current instant in a FIFO beside it: events with equal times run in
 * the order they were scheduled, so runs are deterministic. The queue is
 * a binary heap (one array, doubled when full) for engines created with a
 * capacity below ENGINE_RADIX_MIN, else a radix heap whose buckets draw
 * fixed-size chunks from one pool; either way memory follows the number of
 * pending events (within about twice it) and scheduling allocates only
 * when the storage runs dry, not per event once warm. Models
 * register one handler per event type;
 * cancellation is the model's business (a generation number in the payload,
 * checked by the handler), which keeps the heap free of deletions, except
 * for timers (engine_timers, below): one event per slot, kept in a small
 * indexed heap of their own, which a model reschedules or cancels.
 */
#ifndef SPECSIM_ENGINE_H
#define SPECSIM_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

#define ENGINE_MAX_TYPES 32

typedef struct engine_event {
    double time;
    uint64_t seq;      /* insertion order: tie-break for equal times */
    uint32_t type;     /* handler index, < ENGINE_MAX_TYPES */
    uint32_t a;        /* payloads, meaning defined by the model */
    uint64_t b;
} engine_event_t;

typedef struct engine engine_t;

/* A handler returns 0, or -1 to stop the run (the model keeps its own error
 * record). ev points into engine storage valid only during the call. */
typedef int (*engine_fn)(void *ctx, const engine_event_t *ev);

/* The radix heap pops in a few copies where the binary heap sifts through
 * log2(n) scattered levels, but it costs more per event on small queues:
 * user CPU per event, radix against binary heap for every queue, 1.26x as
 * fast with 10^4 tenants and 1.13x with 1,024, but 0.84-0.90x with 64
 * (scenarios/bench/simpy-64-*.yaml). sim/run/world.c asks for 4 per tenant +
 * 64, so the radix heap serves 240 tenants and more. */
#define ENGINE_RADIX_MIN 1024

/* Returns a new engine at time 0 with room for `capacity` pending events
 * (grown on demand); the caller frees it with engine_free(). NULL with err
 * filled on allocation failure. */
engine_t *engine_create(size_t capacity, err_t *err);
void engine_free(engine_t *e);

/* Registers fn(ctx, ev) for events of `type`. Returns 0, or -1 for a type
 * out of range. */
int engine_on(engine_t *e, uint32_t type, engine_fn fn, void *ctx);

/* Optional: hint(ctx, next) is called with the event that will run next,
 * just before the current one runs, for events of `type`; a large queue
 * (the radix heap) also calls it with an event a few places further on
 * (sim/engine/engine.c, hint_ahead), which may then be hinted twice. A
 * model uses it
 * to prefetch the state that event will touch, so the cache misses overlap
 * with the current handler instead of stalling the next one (with 10^4
 * tenants their state does not fit in L2). A hint must not change
 * anything the simulation reads nor call the engine; next points into
 * engine storage valid only during the call. Returns 0, or -1 for a type
 * out of range. */
typedef void (*engine_hint_fn)(void *ctx, const engine_event_t *next);
int engine_on_hint(engine_t *e, uint32_t type, engine_hint_fn hint);

/* Schedules an event at absolute time t >= now. Returns 0, or -1 when the
 * queue cannot grow (allocation failure) or t is before now / not a number. */
int engine_schedule(engine_t *e, double t, uint32_t type, uint32_t a,
                    uint64_t b);

/* Runs events in order while the earliest is before `until` (strictly);
 * the clock is left at the last event run. Returns 0 when the queue is empty
 * or the next event is at/after `until`, -1 when a handler failed, an
 * event has no handler or the queue could not allocate while reordering
 * (the engine is then only fit for engine_free). */
int engine_run(engine_t *e, double until);
/* The same, stopping also once engine_events() reaches max_events: returns 1
 * then (the caller checks what it needs and calls again), 0 or -1 as
 * engine_run. How sim/run/guard.h looks at a run every so many events without
 * a test per event beyond the loop's own. */
int engine_run_until(engine_t *e, double until, uint64_t max_events);

/* The clock leads struct engine, so that engine_now(), which models call a
 * few times per event, is a load instead of a call. Only the engine writes
 * it. */
struct engine_clock {
    double now;
};
static inline double engine_now(const engine_t *e)
{
    return ((const struct engine_clock *)(const void *)e)->now;
}
/* Real-time driving (testbed/, docs/testbed.md): a caller that paces the
 * events by a wall clock asks when the earliest one is due, and runs it when
 * the clock gets there. engine_next_time: the earliest pending event's time,
 * INFINITY when none. engine_step: runs the earliest pending event if it is
 * due at `now` (its time <= now), with the clock and the event's time as
 * its handler sees it set to now, not to its due time, so that handlers
 * read and schedule from the instant it really ran.
 * now must not be before the clock. Returns 1 when an event ran, 0 when
 * none was due, -1 when its handler failed or it has none. */
double engine_next_time(const engine_t *e);
int engine_step(engine_t *e, double now);

/* Timers: events of one type that a model reschedules or cancels, at most
 * one pending per slot (0 .. slots - 1, the event's a). engine_timers makes
 * `slots` of them for events of `type`, once: 0; 1 when the queue is a
 * radix heap, which declines them (a heap of thousands of slots misses the
 * cache: schedule those events with engine_schedule); -1 when out of
 * memory, called again, or given no slots or a type out of range.
 * engine_timer_set schedules slot's event at t >= now with payload b,
 * replacing the one pending if any; it takes the next seq as
 * engine_schedule would, so events run in the same (time, seq) order as
 * if the replaced one had stayed and been ignored by its handler. 0, or -1
 * for t before now or a slot out of range. engine_timer_cancel drops
 * slot's pending event, if any. */
int engine_timers(engine_t *e, uint32_t type, size_t slots);
int engine_timer_set(engine_t *e, uint32_t slot, double t, uint64_t b);
void engine_timer_cancel(engine_t *e, uint32_t slot);
uint64_t engine_events(const engine_t *e);   /* events run so far */
size_t engine_pending(const engine_t *e);
size_t engine_capacity(const engine_t *e);   /* allocated event slots */

#endif
