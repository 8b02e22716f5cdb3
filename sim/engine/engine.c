#include "engine/engine.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* Small queues (capacity below ENGINE_RADIX_MIN, sim/engine/engine.h) are a
 * binary min-heap; large ones a radix heap, below. Both give the same
 * order, exactly (time, seq).
 *
 * The radix heap (Ahuja, Mehlhorn, Orlin and
 * Tarjan's monotone priority queue) keyed on (time, seq) as one 128-bit
 * number: a simulation never schedules before the event it is running, so
 * every key pushed exceeds the last one popped. Buckets 1.. hold the keys
 * by the highest hexadecimal digit where they differ from `last` and
 * their value there (bucket_of); pushing is one xor, a count of leading
 * zeros and an append. (With one bucket per bit, events moved so often
 * that a run took as many instructions as with the binary heap.) When
 * bucket 0 is empty
 * the first non-empty bucket is emptied: its least key becomes `last` and
 * goes to bucket 0, the rest fall into lower buckets, so each event is
 * copied a few times in sequential sweeps instead of sifted through
 * log2(n) random levels of a binary heap on every pop (the heap's pop was
 * a third of all instructions at 10^4 tenants).
 *
 * Bucket 0 holds keys <= last, sorted with the least at the end. A small
 * bucket (SORT_MAX) is emptied into it whole, its greatest key becoming
 * `last`; and after a look-ahead (engine_on_hint) has emptied a bucket,
 * the running handler may still schedule before the event found. Events
 * scheduled before `last` go there, in order (a short insertion: bucket 0
 * is small and they precede everything else pending).
 *
 * Events scheduled for the current instant (the cloud's zero-delay kicks,
 * about one event in nine) skip the buckets: they go to a FIFO ring, in seq
 * order. Every FIFO event has time == now: the clock cannot advance past
 * them while the ring holds any, since they precede every later time. The
 * next event is the earlier, by (time, seq), of the radix heap's least and
 * the ring's head, so events run in exactly (time, seq) order. */
enum { NBUCKET = 1 + 32 * 16 };   /* bucket 0, then 32 hex digits x 16 values */
enum { CHUNK = 14 };                /* events per chunk: 464-byte chunks */
/* A bucket of at most SORT_MAX events is emptied into bucket 0 sorted
 * rather than spread over the lower buckets (see sort_into_first): most
 * buckets emptied are that small, and sorting a few events costs fewer
 * instructions than moving each down a digit at a time. With 1,024
 * tenants and more, 1.03-1.05x against redistributing every bucket; 28
 * (two chunks) sorted more and ran no faster, its comparisons
 * mispredicted. */
enum { SORT_MAX = 8, FIRST_START = 16 /* bucket 0's first room */ };
_Static_assert(SORT_MAX <= FIRST_START, "refill sorts into bucket 0 without growing it");

/* Buckets 1.. are lists of chunks from one pool, so that memory follows
 * the number of pending events, not how they spread over the buckets
 * (per-bucket arrays each kept their own peak: 70 times the backlog after
 * 10^4 simulated seconds in tests/unit/test_engine.c's steady state). */
typedef struct chunk {
    struct chunk *next;
    int n;
    engine_event_t v[CHUNK];
} chunk_t;

struct engine {
    struct engine_clock clock;   /* first: engine_now() reads it inline */
    int radix;                   /* the radix heap, else the binary heap */
    engine_event_t *heap;        /* binary heap: heap[0] is the earliest */
    size_t hn, hcap;
    uint64_t last_hi, last_lo;   /* `last`: time bits, seq */
    uint64_t nonempty[8];        /* bit k - 1: bucket k (1..512) has events */
    size_t n;                    /* events in the buckets */
    int broken;                  /* a redistribution could not allocate */
    engine_event_t *first;       /* bucket 0, least last */
    size_t nfirst, capfirst;
    chunk_t *free_chunks;
    chunk_t *limbo;              /* chunks a failed refill could not empty */
    size_t nchunks;              /* allocated */
    engine_event_t *ring;   /* events at now: ring[head], ... (mask + 1 slots) */
    size_t rhead, rn, rmask;
    uint64_t seq;
    uint64_t events;
    engine_fn fn[ENGINE_MAX_TYPES];
    void *ctx[ENGINE_MAX_TYPES];
    engine_hint_fn hint[ENGINE_MAX_TYPES];
    int hints;              /* some type has a hint: look ahead */
    /* Timers (engine_timers): a binary heap of at most one event per slot,
     * tpos[slot] its place there (TIMER_NONE: none pending). */
    engine_event_t *tq;
    uint32_t *tpos;
    size_t tn, tslots;
    uint32_t ttype;
    chunk_t *b[NBUCKET];    /* [0] unused: bucket 0 is `first` */
};

#define ENGINE_RING_START 16   /* a power of two */

_Static_assert(offsetof(struct engine, clock) == 0,
               "engine_now() (sim/engine/engine.h) reads the clock at the start");

engine_t *engine_create(size_t capacity, err_t *err)
{
    engine_t *e = calloc(1, sizeof *e);
    if (!e) {
        err_set(err, ERR_RUNTIME, "engine: out of memory");
        return NULL;
    }
    e->radix = capacity >= ENGINE_RADIX_MIN;
    e->capfirst = FIRST_START;
    e->first = malloc(e->capfirst * sizeof *e->first);
    e->hcap = e->radix || capacity < 16 ? 16 : capacity;
    e->heap = malloc(e->hcap * sizeof *e->heap);
    e->rmask = ENGINE_RING_START - 1;
    e->ring = malloc(ENGINE_RING_START * sizeof *e->ring);
    int bad = !e->first || !e->ring || !e->heap;
    /* The capacity hint: chunks for that many events, in the pool. */
    for (size_t k = 0; !bad && e->radix && k < (capacity + CHUNK - 1) / CHUNK; k++) {
        chunk_t *c = malloc(sizeof *c);
        bad = !c;
        if (c) {
            c->next = e->free_chunks;
            e->free_chunks = c;
            e->nchunks++;
        }
    }
    if (bad) {
        engine_free(e);
        err_set(err, ERR_RUNTIME, "engine: out of memory");
        return NULL;
    }
    return e;
}

static void chunks_free(chunk_t *c)
{
    while (c) {
        chunk_t *next = c->next;
        free(c);
        c = next;
    }
}

void engine_free(engine_t *e)
{
    if (!e) return;
    for (int k = 1; k < NBUCKET; k++) chunks_free(e->b[k]);
    chunks_free(e->free_chunks);
    chunks_free(e->limbo);
    free(e->first);
    free(e->heap);
    free(e->ring);
    free(e->tq);
    free(e->tpos);
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

/* Times are never negative (engine_schedule normalises -0 to +0), and the
 * bits of a non-negative double order as the double does, so (time, seq)
 * orders as the pair (time bits, seq) of unsigned integers. */
static inline uint64_t hi_of(const engine_event_t *x)
{
    uint64_t t;
    memcpy(&t, &x->time, sizeof t);
    return t;
}

/* x runs before y: earlier time, or the same time and scheduled first. */
#ifdef __SIZEOF_INT128__
static inline unsigned __int128 key_of(const engine_event_t *x)
{
    return ((unsigned __int128)hi_of(x) << 64) | x->seq;
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

/* x's bucket relative to `last`: with p the highest hexadecimal digit
 * where x and last differ (0..31) and d x's digit there, 1 + 16 p + d;
 * 0 when equal. Buckets in index order hold ever larger keys. */
static inline int bucket_of(const engine_t *e, const engine_event_t *x)
{
    uint64_t v = hi_of(x), h = v ^ e->last_hi;
    int base = 16 * 16;
    if (!h) {
        v = x->seq;
        h = v ^ e->last_lo;
        if (!h) return 0;
        base = 0;
    }
    int b = (63 - __builtin_clzll(h)) & ~3;
    return 1 + base + 4 * b + (int)((v >> b) & 15);
}

/* Appends x to bucket k >= 1. */
static inline int bucket_push(engine_t *e, int k, const engine_event_t *x)
{
    chunk_t *c = e->b[k];
    if (!c || c->n == CHUNK) {
        chunk_t *f = e->free_chunks;
        if (f) {
            e->free_chunks = f->next;
        } else {
            f = malloc(sizeof *f);
            if (!f) return -1;
            e->nchunks++;
        }
        f->next = c;
        f->n = 0;
        e->b[k] = c = f;
        e->nonempty[(k - 1) >> 6] |= 1ull << ((k - 1) & 63);
    }
    c->v[c->n++] = *x;
    return 0;
}

/* Inserts x, which precedes `last`, into bucket 0 in order. */
static int first_insert(engine_t *e, const engine_event_t *x)
{
    if (e->nfirst == e->capfirst) {
        engine_event_t *v = realloc(e->first, 2 * e->capfirst * sizeof *v);
        if (!v) return -1;
        e->first = v;
        e->capfirst *= 2;
    }
    size_t j = e->nfirst++;
    while (j > 0 && before(&e->first[j - 1], x)) {
        e->first[j] = e->first[j - 1];
        j--;
    }
    e->first[j] = *x;
    return 0;
}

/* The first non-empty bucket >= 1; the caller knows there is one. */
static inline int first_nonempty(const engine_t *e)
{
    int w = 0;
    while (!e->nonempty[w]) w++;
    return 1 + 64 * w + __builtin_ctzll(e->nonempty[w]);
}

/* The least event of a bucket's chunks (not empty). The running least is
 * kept as a key in registers, not re-read through a pointer, so that the
 * scan's loop-carried chain is a compare and a conditional move instead of
 * a load as well (a fifth of all the time at 10^4 tenants was this scan
 * and the redistribution after it). */
static const engine_event_t *least_of(const chunk_t *list)
{
    const engine_event_t *best = &list->v[0];
#ifdef __SIZEOF_INT128__
    unsigned __int128 bk = key_of(best);
    for (const chunk_t *c = list; c; c = c->next)
        for (int j = 0; j < c->n; j++) {
            unsigned __int128 k = key_of(&c->v[j]);
            int lt = k < bk;
            bk = lt ? k : bk;
            best = lt ? &c->v[j] : best;
        }
#else
    for (const chunk_t *c = list; c; c = c->next)
        for (int j = 0; j < c->n; j++)
            if (before(&c->v[j], best)) best = &c->v[j];
#endif
    return best;
}

/* Bucket 0 is empty; list, a small bucket just taken out (at most
 * SORT_MAX events), goes there whole, sorted, the least last, and its
 * greatest key becomes `last`. Any key of the bucket may serve as `last`:
 * the keys of the other buckets differ from all of them at the same digit
 * as from the old `last`, so they stay where they are. */
static void sort_into_first(engine_t *e, chunk_t *list)
{
    size_t m = 0;
    while (list) {
        chunk_t *c = list;
        for (int j = 0; j < c->n; j++) {
            size_t i = m++;
            while (i > 0 && before(&e->first[i - 1], &c->v[j])) {
                e->first[i] = e->first[i - 1];
                i--;
            }
            e->first[i] = c->v[j];
        }
        list = c->next;
        c->next = e->free_chunks;
        e->free_chunks = c;
    }
    e->nfirst = m;
    e->last_hi = hi_of(&e->first[0]);
    e->last_lo = e->first[0].seq;
}

/* Bucket 0 is empty and events are pending: empties the first non-empty
 * bucket, its least event becoming `last` (bucket 0's only event). Returns
 * 0, or -1 when a bucket could not grow (the engine is then only fit to be
 * freed: engine_run fails from there on). */
static int refill(engine_t *e)
{
    int k = first_nonempty(e);
    chunk_t *list = e->b[k];
    e->b[k] = NULL;
    e->nonempty[(k - 1) >> 6] &= ~(1ull << ((k - 1) & 63));
    if (!list->next && list->n <= SORT_MAX) {
        sort_into_first(e, list);
        return 0;
    }
    const engine_event_t *best = least_of(list);
    e->last_hi = hi_of(best);
    e->last_lo = best->seq;
    e->first[e->nfirst++] = *best;   /* bucket 0 is empty, cap >= 16 */
    while (list) {
        chunk_t *c = list;
        for (int j = 0; j < c->n; j++) {
            if (&c->v[j] == best) continue;
            /* Every other key differs from the new last in a lower digit. */
            if (bucket_push(e, bucket_of(e, &c->v[j]), &c->v[j])) {
                /* Keep what was not moved, so that engine_free frees it. */
                e->limbo = list;
                e->broken = 1;
                return -1;
            }
        }
        list = c->next;
        c->next = e->free_chunks;
        e->free_chunks = c;
    }
    return 0;
}

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

/* The binary heap, for small queues (see ENGINE_RADIX_MIN): pushes ev,
 * sifting the hole up (one copy per level). */
static int heap_push(engine_t *e, const engine_event_t *ev)
{
    if (e->hn == e->hcap) {
        /* Doubling keeps growth amortised: after the peak backlog is reached
         * no schedule call allocates again. */
        engine_event_t *h = realloc(e->heap, 2 * e->hcap * sizeof *h);
        if (!h) return -1;
        e->heap = h;
        e->hcap *= 2;
    }
    size_t i = e->hn++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!before(ev, &e->heap[p])) break;
        e->heap[i] = e->heap[p];
        i = p;
    }
    e->heap[i] = *ev;
    return 0;
}

/* Removes heap[0], bottom-up (Wegener's BOTTOM-UP-HEAPSORT, Theor.
 * Comput. Sci. 118, 1993): the hole goes down to a leaf along the lesser
 * children, one comparison a level, then the last event rises from there,
 * usually a level or none, as it came from the bottom. The classic pop
 * compares each child with it too, two comparisons a level. Keys (time,
 * seq) are distinct, so the pops come in the same order. */
static void heap_pop(engine_t *e)
{
    size_t n = --e->hn, i = 0;
    if (n == 0) return;
    engine_event_t *h = e->heap;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && before(&h[c + 1], &h[c])) c++;
        h[i] = h[c];
        i = c;
    }
    engine_event_t last = h[n];
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!before(&last, &h[p])) break;
        h[i] = h[p];
        i = p;
    }
    h[i] = last;
}

/* ---- timers ------------------------------------------------------------ */

#define TIMER_NONE UINT32_MAX

int engine_timers(engine_t *e, uint32_t type, size_t slots)
{
    if (type >= ENGINE_MAX_TYPES || e->tslots || slots == 0 || slots >= TIMER_NONE) return -1;
    if (e->radix) return 1;
    e->tq = malloc(slots * sizeof *e->tq);
    e->tpos = malloc(slots * sizeof *e->tpos);
    if (!e->tq || !e->tpos) {
        free(e->tq);
        free(e->tpos);
        e->tq = NULL;
        e->tpos = NULL;
        return -1;
    }
    for (size_t k = 0; k < slots; k++) e->tpos[k] = TIMER_NONE;
    e->tslots = slots;
    e->ttype = type;
    return 0;
}

/* Places ev at hole i of the timer heap, moving it up or down as its key
 * asks; every event moved has its place recorded. */
static void timer_place(engine_t *e, size_t i, const engine_event_t *ev)
{
    engine_event_t *h = e->tq;
    uint32_t *pos = e->tpos;
    size_t n = e->tn;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!before(ev, &h[p])) break;
        h[i] = h[p];
        pos[h[i].a] = (uint32_t)i;
        i = p;
    }
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && before(&h[c + 1], &h[c])) c++;
        if (!before(&h[c], ev)) break;
        h[i] = h[c];
        pos[h[i].a] = (uint32_t)i;
        i = c;
    }
    h[i] = *ev;
    pos[ev->a] = (uint32_t)i;
}

/* Takes the event at place i out of the timer heap. */
static void timer_remove(engine_t *e, size_t i)
{
    e->tpos[e->tq[i].a] = TIMER_NONE;
    size_t n = --e->tn;
    if (i == n) return;
    engine_event_t last = e->tq[n];
    timer_place(e, i, &last);
}

int engine_timer_set(engine_t *e, uint32_t slot, double t, uint64_t b)
{
    if (!(t >= e->clock.now) || slot >= e->tslots) return -1;
    engine_event_t ev = {t + 0.0, e->seq++, e->ttype, slot, b};
    uint32_t p = e->tpos[slot];
    if (p == TIMER_NONE) p = (uint32_t)e->tn++;
    timer_place(e, p, &ev);
    return 0;
}

void engine_timer_cancel(engine_t *e, uint32_t slot)
{
    if (slot < e->tslots && e->tpos[slot] != TIMER_NONE) timer_remove(e, e->tpos[slot]);
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
    engine_event_t ev = {t + 0.0, e->seq++, type, a, b};   /* -0 -> +0 */
    if (!e->radix) return heap_push(e, &ev);
    /* Keys below `last` exist only while bucket 0 holds `last` (see the
     * comment at the top); ev's seq is new, so it never equals last. */
    int rc;
    if (e->nfirst && (hi_of(&ev) < e->last_hi ||
                      (hi_of(&ev) == e->last_hi && ev.seq < e->last_lo)))
        rc = first_insert(e, &ev);
    else
        rc = bucket_push(e, bucket_of(e, &ev), &ev);
    if (rc) return -1;
    e->n++;
    return 0;
}

/* Bucket 0 is empty, events are in the buckets and the ring is not empty:
 * whether the ring's head surely runs before every bucketed event, so that
 * peek() need not refill. It does when the first non-empty bucket is one
 * of time digits (its times all exceed `last`'s) and `last`'s time is not
 * before the clock, which the ring's times never exceed. Refilling there
 * made `last` the least bucketed event while the ring still ran, and each
 * ring event that then scheduled before it went into bucket 0 by insertion
 * (first_insert): with a whole fleet starting at one instant, half the
 * fleet's first events, quadratic (issue 28). */
static inline int ring_first(const engine_t *e)
{
    uint64_t now;
    memcpy(&now, &e->clock.now, sizeof now);
    return first_nonempty(e) > 16 * 16 && e->last_hi >= now;   /* 257..: time digits */
}

/* The next event, or NULL when none is pending; *fail set when the queue
 * could not be reordered. */
static inline const engine_event_t *peek(engine_t *e, int *fail)
{
    const engine_event_t *h = NULL;
    if (!e->radix) {
        if (e->hn) h = &e->heap[0];
    } else if (e->n) {
        if (e->nfirst == 0 && e->rn && !e->broken && ring_first(e)) {
            h = &e->ring[e->rhead];
            goto timers;
        }
        if (e->nfirst == 0 && (e->broken || refill(e))) {
            *fail = 1;
            return NULL;
        }
        h = &e->first[e->nfirst - 1];
    }
    if (e->rn) {
        const engine_event_t *r = &e->ring[e->rhead];
        h = h && before(h, r) ? h : r;
    }
timers:
    if (e->tn && (!h || before(&e->tq[0], h))) h = &e->tq[0];
    return h;
}

/* Removes next, what peek() returned, into *out. The ring is sorted by
 * (time, seq) (its times are the clock's when scheduled, which never
 * decreases), so its head is its earliest. */
static inline void take(engine_t *e, const engine_event_t *next, engine_event_t *out)
{
    *out = *next;
    if (next == e->tq) {
        timer_remove(e, 0);
        return;
    }
    if (e->rn && next == &e->ring[e->rhead]) {
        e->rhead = (e->rhead + 1) & e->rmask;
        e->rn--;
        return;
    }
    if (!e->radix) {
        heap_pop(e);
        return;
    }
    e->nfirst--;
    e->n--;
}

/* Hints, besides the next event, the one HINT_AHEAD places after it in
 * bucket 0 (sorted, least last), if no earlier one is scheduled before it
 * runs: with 10^6 tenants a tenant's state is a TLB miss and a DRAM miss
 * away, longer than one event takes, so a hint one event ahead arrives
 * late. 4 ahead: the run itself 1.08x (tenants-1m, alternating runs;
 * 8 ahead no better). */
enum { HINT_AHEAD = 4 };

static inline void hint_ahead(engine_t *e)
{
    if (!e->radix || e->nfirst <= HINT_AHEAD) return;
    const engine_event_t *far = &e->first[e->nfirst - 1 - HINT_AHEAD];
    if (e->hint[far->type]) e->hint[far->type](e->ctx[far->type], far);
}

int engine_run(engine_t *e, double until)
{
    return engine_run_until(e, until, UINT64_MAX) < 0 ? -1 : 0;
}

int engine_run_until(engine_t *e, double until, uint64_t max_events)
{
    const engine_event_t *next;
    int fail = 0;
    while ((next = peek(e, &fail)) != NULL && next->time < until) {
        if (e->events >= max_events) return 1;
        engine_event_t ev;
        take(e, next, &ev);
        e->clock.now = ev.time;
        e->events++;
        /* The next event as things stand (unless this handler schedules an
         * earlier one, when the hint is merely wasted). */
        if (e->hints) {
            next = peek(e, &fail);
            if (next && e->hint[next->type]) e->hint[next->type](e->ctx[next->type], next);
            hint_ahead(e);
        }
        engine_fn fn = e->fn[ev.type];
        if (!fn || fn(e->ctx[ev.type], &ev) != 0) return -1;
    }
    return fail ? -1 : 0;
}

double engine_next_time(const engine_t *e)
{
    /* Without reordering (e is const): bucket 0's last, else the least of
     * the first non-empty bucket, against the ring's head. */
    double t = INFINITY;
    if (!e->radix) {
        if (e->hn) t = e->heap[0].time;
    } else if (e->nfirst) {
        t = e->first[e->nfirst - 1].time;
    } else if (e->n) {
        for (const chunk_t *c = e->b[first_nonempty(e)]; c; c = c->next)
            for (int j = 0; j < c->n; j++)
                if (c->v[j].time < t) t = c->v[j].time;
    }
    if (e->rn && e->ring[e->rhead].time < t) t = e->ring[e->rhead].time;
    if (e->tn && e->tq[0].time < t) t = e->tq[0].time;
    return t;
}

int engine_step(engine_t *e, double now)
{
    int fail = 0;
    const engine_event_t *next = peek(e, &fail);
    if (fail) return -1;
    if (!next || !(next->time <= now) || !(now >= e->clock.now)) return 0;
    engine_event_t ev;
    take(e, next, &ev);
    /* Handlers read the event's time as their now (sim/entity/cloud.c does). */
    ev.time = e->clock.now = now;
    e->events++;
    engine_fn fn = e->fn[ev.type];
    return fn && fn(e->ctx[ev.type], &ev) == 0 ? 1 : -1;
}

uint64_t engine_events(const engine_t *e) { return e->events; }
size_t engine_pending(const engine_t *e) { return e->n + e->hn + e->rn + e->tn; }
size_t engine_capacity(const engine_t *e)
{
    return e->nchunks * CHUNK + e->capfirst + e->hcap + e->rmask + 1 + e->tslots;
}
