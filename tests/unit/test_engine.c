/* Engine: ordering by time, insertion order on ties, a stress run against a
 * sorted reference, no heap growth once the backlog has peaked, and a fleet
 * starting at one instant in time linear in its size. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "check.h"
#include "engine/engine.h"

typedef struct rec {
    double t[4096];
    uint64_t b[4096];
    int n;
    engine_t *e;
    int reschedule;   /* each event schedules one successor */
    uint64_t lcg;
} rec_t;

static int record(void *ctx, const engine_event_t *ev)
{
    rec_t *r = ctx;
    if (r->n < 4096) {
        r->t[r->n] = ev->time;
        r->b[r->n] = ev->b;
    }
    r->n++;
    if (r->reschedule) {
        r->lcg = r->lcg * 6364136223846793005ULL + 1442695040888963407ULL;
        double dt = (double)(r->lcg >> 40) / (double)(1 << 24);
        if (engine_schedule(r->e, ev->time + dt, 0, 0, ev->b) != 0) return -1;
    }
    return 0;
}

static void order_and_ties_at(size_t capacity)
{
    err_t err;
    engine_t *e = engine_create(capacity, &err);
    rec_t *r = calloc(1, sizeof *r);
    CHECK(e && r);
    engine_on(e, 0, record, r);
    /* Times 3,1,2,1,1,2: expect 1(b=1),1(b=3),1(b=4),2(b=2),2(b=5),3(b=0). */
    double ts[] = {3, 1, 2, 1, 1, 2};
    for (int i = 0; i < 6; i++) CHECK(engine_schedule(e, ts[i], 0, 0, (uint64_t)i) == 0);
    CHECK(engine_run(e, 10) == 0);
    uint64_t want[] = {1, 3, 4, 2, 5, 0};
    CHECK(r->n == 6);
    for (int i = 0; i < 6; i++) CHECK(r->b[i] == want[i]);
    CHECK(engine_events(e) == 6);
    CHECK(engine_now(e) == 3);
    /* Scheduling in the past is refused. */
    CHECK(engine_schedule(e, 2.5, 0, 0, 0) == -1);
    engine_free(e);
    free(r);
}

static void test_order_and_ties(void)
{
    order_and_ties_at(2);
    order_and_ties_at(ENGINE_RADIX_MIN);
}

static void test_until_is_strict(void)
{
    err_t err;
    engine_t *e = engine_create(4, &err);
    rec_t *r = calloc(1, sizeof *r);
    engine_on(e, 0, record, r);
    engine_schedule(e, 1, 0, 0, 0);
    engine_schedule(e, 2, 0, 0, 1);
    CHECK(engine_run(e, 2) == 0);
    CHECK(r->n == 1);
    CHECK(engine_pending(e) == 1);
    engine_free(e);
    free(r);
}

/* engine_run_until stops after exactly max_events events and resumes where
 * it stopped: the same order as one engine_run. */
static void test_run_until_events(void)
{
    err_t err;
    engine_t *e = engine_create(4, &err);
    rec_t *r = calloc(1, sizeof *r);
    CHECK(e && r);
    engine_on(e, 0, record, r);
    double ts[] = {3, 1, 2, 1, 1, 2};
    for (int i = 0; i < 6; i++) CHECK(engine_schedule(e, ts[i], 0, 0, (uint64_t)i) == 0);
    CHECK(engine_run_until(e, 10, 4) == 1);
    CHECK(r->n == 4 && engine_events(e) == 4 && engine_now(e) == 2);
    CHECK(engine_run_until(e, 10, 4) == 1);   /* already there: runs nothing */
    CHECK(r->n == 4);
    CHECK(engine_run_until(e, 10, 100) == 0);
    uint64_t want[] = {1, 3, 4, 2, 5, 0};
    CHECK(r->n == 6);
    for (int i = 0; i < 6; i++) CHECK(r->b[i] == want[i]);
    engine_free(e);
    free(r);
}

static int cmp_pair(const void *x, const void *y)
{
    const double *a = x, *b = y;
    if (a[0] != b[0]) return a[0] < b[0] ? -1 : 1;
    return a[1] < b[1] ? -1 : a[1] > b[1];
}

static void stress_vs_sorted_at(size_t capacity)
{
    enum { N = 4000 };
    err_t err;
    engine_t *e = engine_create(capacity, &err);
    rec_t *r = calloc(1, sizeof *r);
    engine_on(e, 0, record, r);
    double (*ref)[2] = malloc(sizeof(double[2]) * N);
    uint64_t x = 12345;
    for (int i = 0; i < N; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        /* Few distinct times so ties are frequent. */
        double t = (double)((x >> 33) % 97);
        ref[i][0] = t;
        ref[i][1] = i;
        CHECK(engine_schedule(e, t, 0, 0, (uint64_t)i) == 0);
    }
    qsort(ref, N, sizeof ref[0], cmp_pair);   /* by (time, insertion index) */
    CHECK(engine_run(e, 1e9) == 0);
    CHECK(r->n == N);
    int bad = 0;
    for (int i = 0; i < N; i++)
        if (r->t[i] != ref[i][0] || r->b[i] != (uint64_t)ref[i][1]) bad++;
    CHECK(bad == 0);
    free(ref);
    free(r);
    engine_free(e);
}

static void test_stress_vs_sorted(void)
{
    stress_vs_sorted_at(1);
    stress_vs_sorted_at(ENGINE_RADIX_MIN);
}

/* Memory follows the backlog, not the run's length nor how the pending
 * times spread over the radix heap's buckets (sim/engine/engine.c): a steady
 * backlog of 1000 events over 2000 simulated seconds (times crossing
 * eleven powers of two, each reshuffling the buckets) stays within twice
 * the backlog. Per-bucket arrays, each keeping its own peak, reached 55
 * times the backlog here. */
static void memory_follows_backlog(size_t capacity)
{
    err_t err;
    engine_t *e = engine_create(capacity, &err);
    rec_t *r = calloc(1, sizeof *r);
    r->e = e;
    r->reschedule = 1;
    r->lcg = 7;
    engine_on(e, 0, record, r);
    /* A steady backlog of 1000 events: each event schedules one successor. */
    for (int i = 0; i < 1000; i++) engine_schedule(e, i * 1e-3, 0, 0, (uint64_t)i);
    CHECK(engine_run(e, 5.0) == 0);
    uint64_t ev0 = engine_events(e);
    CHECK(engine_run(e, 2000.0) == 0);
    CHECK(engine_events(e) > ev0 + 1000000);
    CHECK(engine_pending(e) == 1000);
    CHECK(engine_capacity(e) >= 1000);
    CHECK(engine_capacity(e) <= 2 * 1000);
    engine_free(e);
    free(r);
}

/* Both queues: the binary heap (small capacity) and the radix heap. */
static void test_memory_follows_backlog(void)
{
    memory_follows_backlog(16);
    memory_follows_backlog(ENGINE_RADIX_MIN);
}

/* Random workloads against the definition of the order, with the
 * look-ahead hint on (it reorders the radix heap before the running
 * handler schedules, so events earlier than the one found must still run
 * first): delays of 0 (the FIFO), one ulp, a coarse grid (ties among
 * queued events), and up to 10^4 s (buckets far apart). Each event must be
 * the least pending by (time, scheduling order), which the test knows
 * independently: engine_next_time() before the handler's own schedules,
 * against the least of what the handler then scheduled. */
typedef struct rnd {
    engine_t *e;
    uint64_t lcg, made, ran;
    double want_t;       /* the time the next event must have */
    double last_t;
    uint64_t last_b;
    int bad, hinted;
} rnd_t;

static int rnd_handler(void *ctx, const engine_event_t *ev)
{
    rnd_t *m = ctx;
    if (m->ran > 0 && (ev->time != m->want_t || ev->time < m->last_t ||
                       (ev->time == m->last_t && ev->b < m->last_b)))
        m->bad++;
    m->last_t = ev->time;
    m->last_b = ev->b;
    m->want_t = engine_next_time(m->e);
    if (++m->ran > 300000) return 0;
    for (int k = 0; k < 3; k++) {
        m->lcg = m->lcg * 6364136223846793005ULL + 1442695040888963407ULL;
        unsigned r = (unsigned)(m->lcg >> 59);   /* 0..31 */
        if (k > 0 && r >= 11) break;             /* about 1.4 children each */
        double u = (double)((m->lcg >> 20) & 0xfffff) / 1048576.0, t;
        switch (r % 5) {
        case 0: t = ev->time; break;
        case 1: t = nextafter(ev->time, INFINITY); break;
        case 2: t = ev->time + 0.25 * (1 + (int)(u * 4)); break;
        case 3: t = ev->time + u * 1e-3; break;
        default: t = ev->time + (r % 2 ? u * 1e4 : u); break;
        }
        if (engine_schedule(m->e, t, 0, 0, m->made++) != 0) return -1;
        if (t < m->want_t) m->want_t = t;
    }
    return 0;
}

static void rnd_hint(void *ctx, const engine_event_t *next)
{
    (void)next;
    ((rnd_t *)ctx)->hinted++;
}

static void test_random_order_with_hint(void)
{
    for (int v = 0; v < 4; v++) {
        int hint = v & 1;
        err_t err;
        /* v < 2: the binary heap; else the radix heap. */
        engine_t *e = engine_create(v < 2 ? 4 : ENGINE_RADIX_MIN, &err);
        rnd_t *m = calloc(1, sizeof *m);
        CHECK(e && m);
        if (!e || !m) return;
        m->e = e;
        m->lcg = 12345 + (uint64_t)v;
        engine_on(e, 0, rnd_handler, m);
        if (hint) engine_on_hint(e, 0, rnd_hint);
        for (int i = 0; i < 64; i++)
            CHECK(engine_schedule(e, (i % 4) * 0.5, 0, 0, m->made++) == 0);
        CHECK(engine_run(e, INFINITY) == 0);
        CHECK(m->ran > 300000);
        CHECK(m->bad == 0);
        CHECK(hint == 0 || m->hinted > 0);
        CHECK(engine_pending(e) == 0);
        CHECK(engine_events(e) == m->ran);
        engine_free(e);
        free(m);
    }
}

/* Handlers that schedule at the current instant (the engine's FIFO of
 * events due now) mixed with events already queued for the same instant
 * and later ones: every event must run in (time, scheduling order), the
 * scheduling order being a counter carried in b. */
typedef struct mix {
    engine_t *e;
    uint64_t lcg, made, ran;
    double last_t;
    uint64_t last_b;
    int bad;
} mix_t;

static int mix_handler(void *ctx, const engine_event_t *ev)
{
    mix_t *m = ctx;
    if (m->ran > 0 && (ev->time < m->last_t || (ev->time == m->last_t && ev->b < m->last_b)))
        m->bad++;
    m->last_t = ev->time;
    m->last_b = ev->b;
    if (++m->ran > 200000) return 0;
    for (int k = 0; k < 2; k++) {
        m->lcg = m->lcg * 6364136223846793005ULL + 1442695040888963407ULL;
        unsigned r = (unsigned)(m->lcg >> 60);   /* 0..15 */
        if (r >= 10 && k == 1) break;            /* about 1.4 children each */
        /* 5 in 16 at now (fewer than one per event, so time moves on),
         * the rest 1 to 3 later: many ties between the heap and the FIFO. */
        double t = r < 5 ? ev->time : ev->time + 1 + (double)(r % 3);
        if (engine_schedule(m->e, t, 0, 0, m->made++) != 0) return -1;
    }
    return 0;
}

static void now_events_keep_order_at(size_t capacity)
{
    err_t err;
    engine_t *e = engine_create(capacity, &err);
    mix_t *m = calloc(1, sizeof *m);
    CHECK(e && m);
    m->e = e;
    m->lcg = 99;
    engine_on(e, 0, mix_handler, m);
    for (int i = 0; i < 8; i++) CHECK(engine_schedule(e, i % 3, 0, 0, m->made++) == 0);
    CHECK(engine_run(e, 1e9) == 0);
    CHECK(m->ran > 200000);
    CHECK(engine_now(e) >= 10);   /* the clock moved: not all at one instant */
    CHECK(m->bad == 0);
    CHECK(engine_pending(e) == 0);
    CHECK(engine_events(e) == m->ran);
    engine_free(e);
    free(m);
}

static void test_now_events_keep_order(void)
{
    now_events_keep_order_at(4);
    now_events_keep_order_at(ENGINE_RADIX_MIN);
}

static int fail_handler(void *ctx, const engine_event_t *ev)
{
    (void)ctx; (void)ev;
    return -1;
}

static void test_handler_failure_and_missing(void)
{
    err_t err;
    engine_t *e = engine_create(4, &err);
    engine_on(e, 1, fail_handler, NULL);
    engine_schedule(e, 1, 1, 0, 0);
    CHECK(engine_run(e, 10) == -1);
    engine_schedule(e, 2, 2, 0, 0);  /* type 2 has no handler */
    CHECK(engine_run(e, 10) == -1);
    CHECK(engine_on(e, ENGINE_MAX_TYPES, fail_handler, NULL) == -1);
    engine_free(e);
}

/* A fleet starting at one instant (issue 28): n start events at time 0 run
 * from the engine's FIFO, each scheduling its tenant's first event at a
 * time on a coarse grid (ties among them), the first of them late. The
 * radix heap refilled bucket 0 while the FIFO still ran, its least event
 * becoming `last`, and every later start that scheduled before it went into
 * bucket 0 by insertion: quadratic in n. The starts must run in scheduling
 * order, then the first events by (time, scheduling order), and 4n tenants
 * must take about 4 times as long as n, not 16: timed side by side, CPU
 * time, the best of five each. */
typedef struct fleet {
    engine_t *e;
    uint64_t lcg;
    uint32_t n, starts, firsts;
    uint32_t *slot;          /* tenant i's first event's grid slot */
    uint32_t *order;         /* tenants in the order their first events ran */
    int bad;
} fleet_t;

enum { FLEET_GRID = 64 };

static int fleet_start(void *ctx, const engine_event_t *ev)
{
    fleet_t *f = ctx;
    if (ev->time != 0 || ev->a != f->starts) f->bad++;   /* FIFO among ties */
    f->starts++;
    f->lcg = f->lcg * 6364136223846793005ULL + 1442695040888963407ULL;
    /* Tenant 0 last on the grid, so that most others precede it. */
    uint32_t s = ev->a == 0 ? FLEET_GRID : 1 + (uint32_t)(f->lcg >> 58);
    f->slot[ev->a] = s;
    return engine_schedule(f->e, s / (double)FLEET_GRID, 1, ev->a, 0);
}

static int fleet_first(void *ctx, const engine_event_t *ev)
{
    fleet_t *f = ctx;
    if (ev->time != f->slot[ev->a] / (double)FLEET_GRID) f->bad++;
    if (f->firsts < f->n) f->order[f->firsts] = ev->a;
    f->firsts++;
    return 0;
}

static void fleet_hint(void *ctx, const engine_event_t *next)
{
    (void)ctx;
    (void)next;
}

/* Runs a fleet of n; returns its CPU seconds, checking the order. */
static double fleet_run(uint32_t n, int hint)
{
    err_t err;
    fleet_t f = {0};
    f.n = n;
    f.lcg = 2024 + n;
    f.slot = calloc(n, sizeof *f.slot);
    f.order = calloc(n, sizeof *f.order);
    /* world.c's capacity, 4 per tenant + 64: the radix heap. */
    f.e = engine_create((size_t)n * 4 + 64, &err);
    CHECK(f.e && f.slot && f.order);
    if (!f.e || !f.slot || !f.order) return 0;
    engine_on(f.e, 0, fleet_start, &f);
    engine_on(f.e, 1, fleet_first, &f);
    if (hint) {
        engine_on_hint(f.e, 0, fleet_hint);
        engine_on_hint(f.e, 1, fleet_hint);
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
    for (uint32_t i = 0; i < n; i++) CHECK(engine_schedule(f.e, 0, 0, i, 0) == 0);
    CHECK(engine_run(f.e, INFINITY) == 0);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
    CHECK(f.starts == n && f.firsts == n && f.bad == 0);
    /* By (time, scheduling order): slots ascending, tenants ascending
     * within a slot (tenant i's first event was scheduled i-th). */
    int unordered = 0;
    for (uint32_t k = 1; k < n; k++) {
        uint32_t p = f.order[k - 1], q = f.order[k];
        if (f.slot[p] > f.slot[q] || (f.slot[p] == f.slot[q] && p >= q)) unordered++;
    }
    CHECK(unordered == 0);
    engine_free(f.e);
    free(f.slot);
    free(f.order);
    return (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
}

static void test_fleet_start_linear(void)
{
    enum { N = 10000 };
    for (int hint = 0; hint < 2; hint++) {
        double t1 = INFINITY, t4 = INFINITY;
        for (int k = 0; k < 5; k++) {
            t1 = fmin(t1, fleet_run(N, hint));
            t4 = fmin(t4, fleet_run(4 * N, hint));
        }
        double ratio = t4 / fmax(t1, 1e-6);
        printf("  fleet start (hint %d): %d tenants %.2f ms, %d: %.2f ms, ratio %.1f\n",
               hint, N, 1e3 * t1, 4 * N, 1e3 * t4, ratio);
        CHECK(ratio < 8);
    }
}


/* Timers (engine_timers) against the same model with plain events and a
 * generation number that the handler checks: the same events run, in the
 * same order, ties and zero delays included, the timer engine without the
 * superseded ones. */
enum { TSLOTS = 12, TLOG = 20000 };
typedef struct tdrive {
    engine_t *e;
    int timers;                 /* slots are engine timers */
    uint64_t gen[TSLOTS];
    int live[TSLOTS];
    uint64_t lcg;
    long n, stale;
    double lt[TLOG];
    uint64_t lb[TLOG];
    uint32_t la[TLOG], ltype[TLOG];
} tdrive_t;

static uint64_t tnext(tdrive_t *d)
{
    d->lcg = d->lcg * 6364136223846793005ULL + 1442695040888963407ULL;
    return d->lcg >> 33;
}

/* A timer set (2 in 3) or cancelled. */
static int tdrive_act(tdrive_t *d)
{
    double now = engine_now(d->e);
    int k = (int)(tnext(d) % 3);
    uint32_t slot = (uint32_t)(tnext(d) % TSLOTS);
    double dt = (double)(tnext(d) % 8) * 0.25;   /* ties and zero delays */
    if (k == 2) {   /* cancel */
        d->gen[slot]++;
        d->live[slot] = 0;
        if (d->timers) engine_timer_cancel(d->e, slot);
        return 0;
    }
    d->gen[slot]++;
    d->live[slot] = 1;
    return d->timers ? engine_timer_set(d->e, slot, now + dt, d->gen[slot])
                     : engine_schedule(d->e, now + dt, 1, slot, d->gen[slot]);
}

static int tdrive_handler(void *ctx, const engine_event_t *ev)
{
    tdrive_t *d = ctx;
    if (ev->type == 1) {
        if (!d->live[ev->a] || ev->b != d->gen[ev->a]) {
            d->stale++;
            return 0;
        }
        d->live[ev->a] = 0;
    }
    if (d->n < TLOG) {
        d->lt[d->n] = ev->time;
        d->lb[d->n] = ev->b;
        d->la[d->n] = ev->a;
        d->ltype[d->n] = ev->type;
    }
    d->n++;
    /* A plain event goes on as a chain (its successor up to 1.75 later,
     * zero delays and ties included) and acts on a timer; a timer acts on
     * one every other time. */
    if (ev->type == 0 &&
        engine_schedule(d->e, ev->time + (double)(tnext(d) % 8) * 0.25, 0, ev->a, tnext(d)))
        return -1;
    if ((ev->type == 0 || tnext(d) % 2) && tdrive_act(d)) return -1;
    return 0;
}

static void timers_vs_generations_at(size_t capacity, int timers, tdrive_t *d)
{
    err_t err;
    d->e = engine_create(capacity, &err);
    CHECK(d->e != NULL);
    d->timers = timers;
    d->lcg = 42;
    engine_on(d->e, 0, tdrive_handler, d);
    engine_on(d->e, 1, tdrive_handler, d);
    if (timers) CHECK(engine_timers(d->e, 1, TSLOTS) == 0);
    for (uint32_t j = 0; j < 20; j++) CHECK(engine_schedule(d->e, 0.5 * (j % 3), 0, j, j) == 0);
    CHECK(engine_run(d->e, 1000) == 0);
}

static void test_timers_vs_generations(void)
{
    tdrive_t *a = calloc(1, sizeof *a), *b = calloc(1, sizeof *b);
    CHECK(a && b);
    timers_vs_generations_at(64, 0, a);
    timers_vs_generations_at(64, 1, b);
    printf("  timers: %ld events run, %ld superseded (%ld with timers); %ld\n", a->n, a->stale, b->stale, b->n);
    CHECK(a->n > 5000 && a->n == b->n);
    CHECK(a->stale > 1000 && b->stale == 0);
    CHECK(engine_events(a->e) == engine_events(b->e) + (uint64_t)a->stale);
    long same = 0, n = a->n < TLOG ? a->n : TLOG;
    for (long k = 0; k < n; k++)
        same += a->lt[k] == b->lt[k] && a->lb[k] == b->lb[k] && a->la[k] == b->la[k] &&
                a->ltype[k] == b->ltype[k];
    CHECK(same == n);
    CHECK(engine_pending(b->e) <= engine_pending(a->e));
    /* A radix-heap engine declines timers (they cost more than they save
     * on large queues); a second call is refused. */
    err_t err;
    engine_t *e = engine_create(ENGINE_RADIX_MIN, &err);
    CHECK(e && engine_timers(e, 1, 8) == 1);
    engine_free(e);
    CHECK(engine_timers(b->e, 1, 8) == -1);
    CHECK(engine_timer_set(b->e, TSLOTS, engine_now(b->e) + 1, 0) == -1);
    CHECK(engine_timer_set(b->e, 0, engine_now(b->e) - 1, 0) == -1);
    engine_free(a->e);
    engine_free(b->e);
    free(a);
    free(b);
}

int main(void)
{
    RUN(test_order_and_ties);
    RUN(test_until_is_strict);
    RUN(test_run_until_events);
    RUN(test_stress_vs_sorted);
    RUN(test_memory_follows_backlog);
    RUN(test_random_order_with_hint);
    RUN(test_now_events_keep_order);
    RUN(test_handler_failure_and_missing);
    RUN(test_fleet_start_linear);
    RUN(test_timers_vs_generations);
    return check_done();
}
