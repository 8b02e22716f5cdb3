#include "engine.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>

struct engine {
    struct engine_clock clock;   /* first: engine_now() reads it inline */
    engine_event_t *heap;   /* heap[0] is the earliest */
    size_t n, cap;
    uint64_t seq;
    uint64_t events;
    engine_fn fn[ENGINE_MAX_TYPES];
    void *ctx[ENGINE_MAX_TYPES];
    engine_hint_fn hint[ENGINE_MAX_TYPES];
};

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
    if (!e->heap) {
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
    return 0;
}

static inline int before(const engine_event_t *x, const engine_event_t *y)
{
    return x->time < y->time || (x->time == y->time && x->seq < y->seq);
}

int engine_schedule(engine_t *e, double t, uint32_t type, uint32_t a,
                    uint64_t b)
{
    if (!(t >= e->clock.now) || type >= ENGINE_MAX_TYPES) return -1;
    if (e->n == e->cap) {
        /* Doubling keeps growth amortised: after the peak backlog is reached
         * no schedule call allocates again. */
        size_t ncap = e->cap * 2;
        engine_event_t *h = realloc(e->heap, ncap * sizeof *h);
        if (!h) return -1;
        e->heap = h;
        e->cap = ncap;
    }
    engine_event_t ev = {t, e->seq++, type, a, b};
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

int engine_run(engine_t *e, double until)
{
    return engine_run_until(e, until, UINT64_MAX) < 0 ? -1 : 0;
}

int engine_run_until(engine_t *e, double until, uint64_t max_events)
{
    while (e->n > 0 && e->heap[0].time < until) {
        if (e->events >= max_events) return 1;
        engine_event_t ev;
        pop(e, &ev);
        e->clock.now = ev.time;
        e->events++;
        /* heap[0] is now the next event (unless this handler schedules an
         * earlier one, when the hint is merely wasted). */
        if (e->n > 0 && e->hint[e->heap[0].type])
            e->hint[e->heap[0].type](e->ctx[e->heap[0].type], &e->heap[0]);
        engine_fn fn = e->fn[ev.type];
        if (!fn || fn(e->ctx[ev.type], &ev) != 0) return -1;
    }
    return 0;
}

double engine_next_time(const engine_t *e)
{
    return e->n > 0 ? e->heap[0].time : INFINITY;
}

int engine_step(engine_t *e, double now)
{
    if (e->n == 0 || !(e->heap[0].time <= now) || !(now >= e->clock.now)) return 0;
    engine_event_t ev;
    pop(e, &ev);
    /* Handlers read the event's time as their now (sim/cloud.c does). */
    ev.time = e->clock.now = now;
    e->events++;
    engine_fn fn = e->fn[ev.type];
    return fn && fn(e->ctx[ev.type], &ev) == 0 ? 1 : -1;
}

uint64_t engine_events(const engine_t *e) { return e->events; }
size_t engine_pending(const engine_t *e) { return e->n; }
size_t engine_capacity(const engine_t *e) { return e->cap; }
