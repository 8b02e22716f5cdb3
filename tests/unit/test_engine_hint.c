/* engine_on_hint: the hint sees exactly the event that runs next (when the
 * handler schedules nothing earlier), only for types that have one, and the
 * run order is the same with and without hints. A large queue (the radix
 * heap) also hints an event a few places further on: every event hinted
 * runs later, some of them several events later. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "engine/engine.h"

typedef struct st {
    engine_t *e;
    uint64_t lcg;   /* same seed in both runs: same types */
    int n, hints, mismatch;
    /* The hint for event k comes while event k-1 is being popped, before
     * its handler runs: keep it by index until event k runs. */
    engine_event_t hinted[2001];
    unsigned char have_hint[2001];
    uint64_t order[2000];
} st_t;

static int step(void *ctx, const engine_event_t *ev)
{
    st_t *s = ctx;
    if (s->n < 2000 && s->have_hint[s->n]) {
        const engine_event_t *h = &s->hinted[s->n];
        if (h->time != ev->time || h->seq != ev->seq || h->b != ev->b || h->type != ev->type)
            s->mismatch++;
    }
    if (s->n < 2000) s->order[s->n] = ev->b;
    s->n++;
    /* Every pending event was scheduled at or before an earlier event's
     * time + 7, so a successor at time + 7 is never earlier than the hinted
     * one (and on a tie its later seq puts it after): the hint stays right.
     * The random type mixes hinted and unhinted events. */
    s->lcg = s->lcg * 6364136223846793005ULL + 1442695040888963407ULL;
    return engine_schedule(s->e, ev->time + 7.0, (uint32_t)(s->lcg >> 63), 0,
                           ev->b + 1000);
}

static void hint(void *ctx, const engine_event_t *next)
{
    st_t *s = ctx;
    /* Called while event n runs (its handler not yet called): next is n+1. */
    if (s->n + 1 < 2001) {
        s->hinted[s->n + 1] = *next;
        s->have_hint[s->n + 1] = 1;
    }
    s->hints++;
}

static void run(st_t *s, int with_hint)
{
    err_t err;
    s->e = engine_create(4, &err);
    CHECK(s->e != NULL);
    if (!s->e) return;
    engine_on(s->e, 0, step, s);
    engine_on(s->e, 1, step, s);
    if (with_hint) CHECK(engine_on_hint(s->e, 0, hint) == 0);
    CHECK(engine_on_hint(s->e, 99, hint) == -1);
    for (uint64_t i = 0; i < 100; i++)
        engine_schedule(s->e, (double)(i % 7), (uint32_t)(i % 2), 0, i);
    CHECK(engine_run(s->e, 100.0) == 0);
    engine_free(s->e);
}

static void test_hint(void)
{
    st_t *a = calloc(1, sizeof *a), *b = calloc(1, sizeof *b);
    CHECK(a && b);
    if (!a || !b) return;
    a->lcg = b->lcg = 3;
    run(a, 1);
    run(b, 0);
    CHECK(a->n == b->n && a->n > 100);
    CHECK(a->mismatch == 0);
    CHECK(a->hints > 0 && a->hints < a->n);   /* type 1 events get none */
    CHECK(b->hints == 0);
    int same = 1;
    for (int i = 0; i < a->n && i < 2000; i++) same &= a->order[i] == b->order[i];
    CHECK(same);
    free(a);
    free(b);
}

/* The radix heap: per event (by seq), the event count at its first hint
 * and, when it runs, how many events after that hint it ran. */
typedef struct far {
    engine_t *e;
    uint64_t lcg;
    int n, bad, ahead_max, hints;
    int hinted_at[4096];       /* by seq: event count at its first hint, -1 */
} far_t;

static int far_step(void *ctx, const engine_event_t *ev)
{
    far_t *f = ctx;
    if (ev->seq < 4096 && f->hinted_at[ev->seq] >= 0) {
        int ahead = f->n - f->hinted_at[ev->seq];
        if (ahead < 0) f->bad++;
        if (ahead > f->ahead_max) f->ahead_max = ahead;
    }
    f->n++;
    f->lcg = f->lcg * 6364136223846793005ULL + 1442695040888963407ULL;
    if (f->n > 3000) return 0;
    return engine_schedule(f->e, ev->time + 1.0 + (double)(f->lcg >> 54) / 1024.0, 0, 0, 0);
}

static void far_hint(void *ctx, const engine_event_t *ev)
{
    far_t *f = ctx;
    if (ev->seq < 4096 && f->hinted_at[ev->seq] < 0) f->hinted_at[ev->seq] = f->n;
    f->hints++;
}

static void test_hint_ahead(void)
{
    far_t *f = calloc(1, sizeof *f);
    err_t err;
    CHECK(f != NULL);
    if (!f) return;
    for (int k = 0; k < 4096; k++) f->hinted_at[k] = -1;
    f->e = engine_create(ENGINE_RADIX_MIN, &err);
    CHECK(f->e != NULL);
    if (!f->e) { free(f); return; }
    f->lcg = 7;
    engine_on(f->e, 0, far_step, f);
    engine_on_hint(f->e, 0, far_hint);
    for (int i = 0; i < 64; i++) engine_schedule(f->e, i / 64.0, 0, 0, 0);
    CHECK(engine_run(f->e, INFINITY) == 0);
    printf("  %d events, %d hints, an event ran up to %d events after its first hint\n",
           f->n, f->hints, f->ahead_max);
    CHECK(f->bad == 0 && f->hints > f->n && f->ahead_max >= 4);
    engine_free(f->e);
    free(f);
}

int main(void)
{
    RUN(test_hint);
    RUN(test_hint_ahead);
    return check_done();
}
