/* Engine: ordering by time, insertion order on ties, a stress run against a
 * sorted reference, and no heap growth once the backlog has peaked. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "engine.h"

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
 * times spread over the radix heap's buckets (sim/engine.c): a steady
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
    return check_done();
}
