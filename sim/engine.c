#include "engine.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* Events scheduled for the current instant (the cloud's zero-delay kicks,
 * about one event in nine) skip the heap: they go to a FIFO ring, in seq
 * order, where pushing and popping cost a few instructions instead of a
 * sift to the root and back (such an event is the earliest-to-be, so it
 * climbs every level). Every FIFO event has time == now: the clock cannot
 * advance past them while the ring holds any, since they precede every
 * later time. The next event is the earlier, by (time, seq), of the heap's
 * top and the ring's head, so events run in exactly the order one heap
 * gives. */
struct engine {
    struct engine_clock clock;   /* first: engine_now() reads it inline */
    engine_event_t *heap;   /* heap[0] is the earliest */
    size_t n, cap;
    engine_event_t *ring;   /* events at now: ring[head], ... (mask + 1 slots) */
    size_t rhead, rn, rmask;
    uint64_t seq;
    uint64_t events;
    engine_fn fn[ENGINE_MAX_TYPES];
    void *ctx[ENGINE_MAX_TYPES];
    engine_hint_fn hint[ENGINE_MAX_TYPES];
    int hints;              /* some type has a hint: look ahead */
};

#define ENGINE_RING_START 16   /* a power of two */

_Static_assert(offsetof(struct engine, clock) == 0,
               "engine_now() (sim/engine.h) reads the clock at the start");

engine_t *engine_create(size_t capacity, err_t *err)
{
    engine_t *e = calloc(1, sizeof *e);
    if (!e) {
        err_set(err, ERR_RUNTIME, "engine: out of memory");
        return NULL;
    }
    e->cap = capacity < 16 ? 16 : capacity;
    e->heap = malloc(e->cap * sizeof *e->heap);
    e->rmask = ENGINE_RING_START - 1;
    e->ring = malloc(ENGINE_RING_START * sizeof *e->ring);
    if (!e->heap || !e->ring) {
        free(e->heap);
        free(e->ring);
        free(e);
        err_set(err, ERR_RUNTIME, "engine: out of memory");
        return NULL;
    }
    return e;
}

void engine_free(engine_t *e)
{
    if (!e) return;
    free(e->heap);
    free(e->ring);
    free(e);
}

int engine_on(engine_t *e, uint32_t type, engine_fn fn, void *ctx)
{
    if (type >= ENGINE_MAX_TYPES) return -1;
    e->fn[type] = fn;
    e->ctx[type] = ctx;
    return 0;
}

int engine_on_hint(engine_t *e, uint32_t type, engine_hint_fn hint)
{
    if (type >= ENGINE_MAX_TYPES) return -1;
    e->hint[type] = hint;
    if (hint) e->hints = 1;
    return 0;
}

/* x runs before y: earlier time, or the same time and scheduled first.
 * Times are never negative (engine_schedule normalises -0 to +0), and the
 * bits of a non-negative double order as the double does, so (time, seq)
 * compares as one 128-bit unsigned number: no branch on the tie test,
 * which is what makes the heap's comparisons cheap to predict. */
#ifdef __SIZEOF_INT128__
static inline unsigned __int128 key_of(const engine_event_t *x)
{
    uint64_t t;
    memcpy(&t, &x->time, sizeof t);
    return ((unsigned __int128)t << 64) | x->seq;
}
static inline int before(const engine_event_t *x, const engine_event_t *y)
{
    return key_of(x) < key_of(y);
}
#else
static inline int before(const engine_event_t *x, const engine_event_t *y)
{
    return x->time < y->time || (x->time == y->time && x->seq < y->seq);
}
#endif

/* Doubles the ring, unrolling it to start at slot 0. */
static int ring_grow(engine_t *e)
{
    size_t cap = e->rmask + 1;
    engine_event_t *r = malloc(2 * cap * sizeof *r);
    if (!r) return -1;
    for (size_t k = 0; k < e->rn; k++) r[k] = e->ring[(e->rhead + k) & e->rmask];
    free(e->ring);
    e->ring = r;
    e->rhead = 0;
    e->rmask = 2 * cap - 1;
    return 0;
}

int engine_schedule(engine_t *e, double t, uint32_t type, uint32_t a,
                    uint64_t b)
{
    if (!(t >= e->clock.now) || type >= ENGINE_MAX_TYPES) return -1;
    if (t == e->clock.now) {
        if (e->rn > e->rmask && ring_grow(e)) return -1;
        e->ring[(e->rhead + e->rn++) & e->rmask] =
            (engine_event_t){e->clock.now, e->seq++, type, a, b};
        return 0;
    }
    if (e->n == e->cap) {
        /* Doubling keeps growth amortised: after the peak backlog is reached
         * no schedule call allocates again. */
        size_t ncap = e->cap * 2;
        engine_event_t *h = realloc(e->heap, ncap * sizeof *h);
        if (!h) return -1;
        e->heap = h;
        e->cap = ncap;
    }
    engine_event_t ev = {t + 0.0, e->seq++, type, a, b};   /* -0 -> +0 */
    /* Sift the hole up rather than swapping: one copy per level. */
    size_t i = e->n++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!before(&ev, &e->heap[p])) break;
        e->heap[i] = e->heap[p];
        i = p;
    }
    e->heap[i] = ev;
    return 0;
}

/* Removes heap[0] into *out. */
static void pop(engine_t *e, engine_event_t *out)
{
    *out = e->heap[0];
    engine_event_t last = e->heap[--e->n];
    size_t n = e->n, i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && before(&e->heap[c + 1], &e->heap[c])) c++;
        if (!before(&e->heap[c], &last)) break;
        e->heap[i] = e->heap[c];
        i = c;
    }
    if (n > 0) e->heap[i] = last;
}

/* The next event (see struct engine), or NULL when none is pending. */
static inline const engine_event_t *peek(const engine_t *e)
{
    if (e->rn == 0) return e->n > 0 ? &e->heap[0] : NULL;
    const engine_event_t *r = &e->ring[e->rhead];
    return e->n > 0 && before(&e->heap[0], r) ? &e->heap[0] : r;
}

/* Removes next, what peek() returned, into *out. The ring is sorted by
 * (time, seq) as the heap is (its times are the clock's when scheduled,
 * which never decreases), so its head is its earliest. */
static void take(engine_t *e, const engine_event_t *next, engine_event_t *out)
{
    if (next == &e->heap[0]) {
        pop(e, out);
        return;
    }
    *out = *next;
    e->rhead = (e->rhead + 1) & e->rmask;
    e->rn--;
}

int engine_run(engine_t *e, double until)
{
    return engine_run_until(e, until, UINT64_MAX) < 0 ? -1 : 0;
}

int engine_run_until(engine_t *e, double until, uint64_t max_events)
{
    const engine_event_t *next;
    while ((next = peek(e)) != NULL && next->time < until) {
        if (e->events >= max_events) return 1;
        engine_event_t ev;
        take(e, next, &ev);
        e->clock.now = ev.time;
        e->events++;
        /* The next event as things stand (unless this handler schedules an
         * earlier one, when the hint is merely wasted). */
        if (e->hints) {
            next = peek(e);
            if (next && e->hint[next->type]) e->hint[next->type](e->ctx[next->type], next);
        }
        engine_fn fn = e->fn[ev.type];
        if (!fn || fn(e->ctx[ev.type], &ev) != 0) return -1;
    }
    return 0;
}

double engine_next_time(const engine_t *e)
{
    const engine_event_t *next = peek(e);
    return next ? next->time : INFINITY;
}

int engine_step(engine_t *e, double now)
{
    const engine_event_t *next = peek(e);
    if (!next || !(next->time <= now) || !(now >= e->clock.now)) return 0;
    engine_event_t ev;
    take(e, next, &ev);
    /* Handlers read the event's time as their now (sim/cloud.c does). */
    ev.time = e->clock.now = now;
    e->events++;
    engine_fn fn = e->fn[ev.type];
    return fn && fn(e->ctx[ev.type], &ev) == 0 ? 1 : -1;
}

uint64_t engine_events(const engine_t *e) { return e->events; }
size_t engine_pending(const engine_t *e) { return e->n + e->rn; }
size_t engine_capacity(const engine_t *e) { return e->cap + e->rmask + 1; }
