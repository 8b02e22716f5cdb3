/* trace_perfetto — the Chrome trace-event JSON sink of sim/io/trace.h, for
 * ui.perfetto.dev and chrome://tracing (docs/formats.md "Perfetto
 * timeline").
 *
 * Streamed: each span is written when it ends ("X" events with ts and dur
 * in microseconds), so memory is a small record per tenant, not the run.
 * Process 1 is the cloud: a thread per GPU replica with its batches as
 * spans, and counters of each replica's queue length and batch size.
 * Process 2 + i is tenant i: a thread per phase (request, drafting, uplink,
 * queued, verifying, downlink, rollback, kv wait, prefill, stall). Spans of
 * one phase may overlap (blocks in flight in async mode), and trace viewers
 * draw only nested spans on one thread, so overlapping spans go to extra
 * lanes: "uplink", "uplink 2", ... (a span takes the first lane free at its
 * start; a phase has as many lanes as its spans ever overlap, as deep as
 * the async window). Lane l of phase ph is thread 1 + ph + NPHASE·l, named
 * and sorted (thread_sort_index) so that a phase's lanes sit together.
 */
#include "io/trace.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum phase { PH_REQUEST, PH_DRAFT, PH_UP, PH_QUEUED, PH_VERIFY, PH_DOWN,
             PH_ROLLBACK, PH_KV, PH_PREFILL, PH_STALL, NPHASE };

static const char *const PHASE_NAME[NPHASE] = {
    "request", "drafting", "uplink", "queued", "verifying", "downlink",
    "rollback", "kv wait", "prefill", "stall"};

#define NSLOT0 16  /* first room for blocks in flight per tenant (doubles) */
#define NDOWN0 16  /* first room for verdicts in flight per tenant (doubles) */

typedef struct block_slot {
    long block;            /* -1 = empty */
    double sent, arrive, vstart;
} block_slot_t;

/* One tenant's open spans. */
typedef struct tstate {
    double *lane_end[NPHASE];   /* each lane's last span's end */
    int nlane[NPHASE], lane_cap[NPHASE];
    double req, draft, kv, prefill, stall;  /* start times; < 0 = none */
    long draft_block;
    /* The blocks in flight, each at slot[block mod nslot] (nslot a power of
     * 2, doubled when a block in flight holds the slot a new one needs). A
     * block leaves at verify_end, at block_drop, or, purged from the queue
     * or verified stale in its batch, at the rollback or request end that
     * follows; so the table stays about as large as the window. */
    block_slot_t *slot;
    int nslot;
    double *down;   /* ring of verdicts' departures, in the order they left */
    int ndown, dhead, dn;
} tstate_t;

typedef struct pf {
    tstate_t **ten;        /* [ntenants], made on a tenant's first event */
    int ntenants;
    int nevents;           /* events written (for the comma) */
} pf_t;

/* Times are written as integer nanoseconds (in microseconds with three
 * decimals), the start and the end each rounded once: a span that starts
 * where another ends then starts exactly there, as viewers need to nest
 * them. */
static long long ns(double t) { return llround(t * 1e9); }

static void print_us(trace_t *tr, const char *key, long long v)
{
    trace_printf(tr, "\"%s\":%s%lld.%03lld", key, v < 0 ? "-" : "",
                 llabs(v) / 1000, llabs(v) % 1000);
}

/* ,"ts":..,"dur":.. of [t0, t1]. */
static void print_span(trace_t *tr, double t0, double t1)
{
    long long a = ns(t0);
    trace_printf(tr, ",");
    print_us(tr, "ts", a);
    trace_printf(tr, ",");
    print_us(tr, "dur", ns(t1) - a);
}

static void emit_open(trace_t *tr)
{
    pf_t *p = tr->impl;
    trace_printf(tr, p->nevents++ ? ",\n" : "\n");
}

static void meta(trace_t *tr, int pid, int tid, const char *what, const char *name,
                 int index)
{
    emit_open(tr);
    if (index > 1)
        trace_printf(tr, "{\"name\":\"%s\",\"ph\":\"M\",\"ts\":0,\"pid\":%d,"
                     "\"tid\":%d,\"args\":{\"name\":\"%s %d\"}}",
                     what, pid, tid, name, index);
    else
        trace_printf(tr, "{\"name\":\"%s\",\"ph\":\"M\",\"ts\":0,\"pid\":%d,"
                     "\"tid\":%d,\"args\":{\"name\":\"%s\"}}",
                     what, pid, tid, name);
}

static int pf_init(trace_t *tr, int ntenants, int nreplicas, err_t *err)
{
    pf_t *p = calloc(1, sizeof *p);
    if (p) p->ten = calloc((size_t)(ntenants > 0 ? ntenants : 1), sizeof *p->ten);
    if (!p || !p->ten) {
        free(p);
        return err_set(err, ERR_RUNTIME, "trace: out of memory");
    }
    p->ntenants = ntenants;
    tr->impl = p;
    trace_printf(tr, "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[");
    meta(tr, 1, 0, "process_name", "cloud", 0);
    for (int r = 0; r < nreplicas; r++) {
        char name[32];
        snprintf(name, sizeof name, "GPU %d", r);
        meta(tr, 1, r + 1, "thread_name", name, 0);
    }
    return 0;
}

static void pf_fini(trace_t *tr)
{
    pf_t *p = tr->impl;
    if (!p) return;
    for (int i = 0; i < p->ntenants; i++) {
        if (!p->ten[i]) continue;
        for (int ph = 0; ph < NPHASE; ph++) free(p->ten[i]->lane_end[ph]);
        free(p->ten[i]->slot);
        free(p->ten[i]->down);
        free(p->ten[i]);
    }
    free(p->ten);
    free(p);
}

static tstate_t *tenant(trace_t *tr, int i)
{
    pf_t *p = tr->impl;
    if (i < 0 || i >= p->ntenants) return NULL;
    if (p->ten[i]) return p->ten[i];
    tstate_t *s = malloc(sizeof *s);
    if (s) {
        s->slot = malloc(NSLOT0 * sizeof *s->slot);
        s->down = malloc(NDOWN0 * sizeof *s->down);
    }
    if (!s || !s->slot || !s->down) {
        if (s) free(s->slot), free(s->down);
        free(s);
        tr->failed = 1;
        return NULL;
    }
    s->nslot = NSLOT0;
    s->ndown = NDOWN0;
    for (int ph = 0; ph < NPHASE; ph++) {
        s->lane_end[ph] = NULL;
        s->nlane[ph] = s->lane_cap[ph] = 0;
    }
    s->req = s->draft = s->kv = s->prefill = s->stall = -1;
    s->draft_block = -1;
    for (int k = 0; k < NSLOT0; k++) s->slot[k].block = -1;
    s->dhead = s->dn = 0;
    p->ten[i] = s;
    char name[32];
    snprintf(name, sizeof name, "tenant %d", i);
    meta(tr, 2 + i, 0, "process_name", name, 0);
    return s;
}

/* A new lane of phase ph for tenant i, named and placed after the
 * phase's others; its index, or -1 when memory runs out. */
static int lane_add(trace_t *tr, tstate_t *s, int i, int ph)
{
    if (s->nlane[ph] == s->lane_cap[ph]) {
        int cap = s->lane_cap[ph] ? 2 * s->lane_cap[ph] : 2;
        double *e = realloc(s->lane_end[ph], (size_t)cap * sizeof *e);
        if (!e) return -1;
        s->lane_end[ph] = e;
        s->lane_cap[ph] = cap;
    }
    int l = s->nlane[ph]++, tid = 1 + ph + NPHASE * l;
    meta(tr, 2 + i, tid, "thread_name", PHASE_NAME[ph], l + 1);
    emit_open(tr);
    trace_printf(tr, "{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"ts\":0,\"pid\":%d,"
                 "\"tid\":%d,\"args\":{\"sort_index\":%ld}}", 2 + i, tid,
                 (long)ph * (1L << 24) + l);
    return l;
}

/* The thread a span [t0, t1] of phase ph goes to: the first lane free at
 * t0 (spans are written in end order, so a lane's last end is its latest),
 * else a new one; -1 when memory runs out. */
static int lane_for(trace_t *tr, tstate_t *s, int i, int ph, double t0, double t1)
{
    int l = 0;
    while (l < s->nlane[ph] && s->lane_end[ph][l] > t0) l++;
    if (l == s->nlane[ph] && lane_add(tr, s, i, ph) < 0) return -1;
    s->lane_end[ph][l] = t1;
    return 1 + ph + NPHASE * l;
}

/* A span of tenant i's phase ph; args is a JSON object body or "". */
static void span(trace_t *tr, tstate_t *s, int i, int ph, double t0, double t1,
                 const char *k1, long v1, const char *k2, long v2)
{
    if (t0 < 0 || t1 < t0) return;
    int tid = lane_for(tr, s, i, ph, t0, t1);
    if (tid < 0) {
        tr->failed = 1;
        return;
    }
    emit_open(tr);
    trace_printf(tr, "{\"name\":\"%s\",\"ph\":\"X\"", PHASE_NAME[ph]);
    print_span(tr, t0, t1);
    trace_printf(tr, ",\"pid\":%d,\"tid\":%d,\"args\":{", 2 + i, tid);
    if (k1) trace_printf(tr, "\"%s\":%ld", k1, v1);
    if (k2) trace_printf(tr, ",\"%s\":%ld", k2, v2);
    trace_printf(tr, "}}");
}

static block_slot_t *slot_of(tstate_t *s, long b)
{
    block_slot_t *k = &s->slot[(unsigned long)b & (unsigned long)(s->nslot - 1)];
    return k->block == b ? k : NULL;
}

/* The slot for a new block b: free, or made free by doubling the table
 * (again while two blocks in flight share a slot). NULL when memory runs
 * out. */
static block_slot_t *slot_new(tstate_t *s, long b)
{
    for (;;) {
        block_slot_t *k = &s->slot[(unsigned long)b & (unsigned long)(s->nslot - 1)];
        if (k->block < 0) return k;
        int n = s->nslot, ok = 0;
        block_slot_t *t = NULL;
        while (!ok && n < (1 << 24)) {
            n *= 2;
            free(t);
            if (!(t = malloc((size_t)n * sizeof *t))) return NULL;
            for (int j = 0; j < n; j++) t[j].block = -1;
            ok = 1;
            for (int j = 0; j < s->nslot && ok; j++) {
                if (s->slot[j].block < 0) continue;
                block_slot_t *d = &t[(unsigned long)s->slot[j].block & (unsigned long)(n - 1)];
                if (d->block >= 0) ok = 0;
                else *d = s->slot[j];
            }
        }
        if (!ok) {
            free(t);
            return NULL;
        }
        free(s->slot);
        s->slot = t;
        s->nslot = n;
    }
}

/* At a rollback or a request's end every block that reached the cloud and
 * is still here was purged from its queue or verified stale: it gets no
 * more events. Blocks still on the uplink are dropped on arrival. */
static void forget_arrived(tstate_t *s)
{
    for (int j = 0; j < s->nslot; j++)
        if (s->slot[j].block >= 0 && s->slot[j].arrive >= 0) s->slot[j].block = -1;
}

/* Appends a verdict's departure time to the ring, doubling it when full.
 * -1 when memory runs out. */
static int down_push(tstate_t *s, double t)
{
    if (s->dn == s->ndown) {
        double *d = malloc(2 * (size_t)s->ndown * sizeof *d);
        if (!d) return -1;
        for (int j = 0; j < s->dn; j++) d[j] = s->down[(s->dhead + j) % s->ndown];
        free(s->down);
        s->down = d;
        s->dhead = 0;
        s->ndown *= 2;
    }
    s->down[(s->dhead + s->dn++) % s->ndown] = t;
    return 0;
}

/* Blocks: sent -> arrive (uplink) -> verify_start (queued) -> verify_end
 * (verifying) -> verdict_arrive (downlink, in the order verdicts left). */
static int block_event(trace_t *tr, tstate_t *s, int i, double t, const char *ev,
                       long b, long n)
{
    block_slot_t *k = b >= 0 ? slot_of(s, b) : NULL;
    if (!strcmp(ev, "draft_start")) {
        /* A draft still open was abandoned (a rollback restarts it). */
        if (s->draft >= 0)
            span(tr, s, i, PH_DRAFT, s->draft, t, "block", s->draft_block, "abandoned", 1);
        s->draft = t;
        s->draft_block = b;
    } else if (!strcmp(ev, "block_sent")) {
        if (s->draft_block == b) span(tr, s, i, PH_DRAFT, s->draft, t, "block", b, "tokens", n);
        s->draft = -1;
        block_slot_t *nk = slot_new(s, b);
        if (nk) *nk = (block_slot_t){b, t, -1, -1};
        else tr->failed = 1;
    } else if (!strcmp(ev, "block_arrive") || !strcmp(ev, "block_drop")) {
        if (k) span(tr, s, i, PH_UP, k->sent, t, "block", b, "tokens", n);
        if (k) k->arrive = t;
        if (k && !strcmp(ev, "block_drop")) k->block = -1;   /* nothing follows */
    } else if (!strcmp(ev, "verify_start")) {
        if (k) span(tr, s, i, PH_QUEUED, k->arrive, t, "block", b, NULL, 0);
        if (k) k->vstart = t;
    } else if (!strcmp(ev, "verify_end")) {
        if (k) span(tr, s, i, PH_VERIFY, k->vstart, t, "block", b, "accepted", n);
        if (k) k->block = -1;
        if (down_push(s, t) != 0) tr->failed = 1;
    } else if (!strcmp(ev, "verdict_arrive")) {
        if (s->dn > 0) {
            span(tr, s, i, PH_DOWN, s->down[s->dhead], t, "accepted", n, NULL, 0);
            s->dhead = (s->dhead + 1) % s->ndown;
            s->dn--;
        }
    } else {
        return 0;
    }
    return 1;
}

/* Starts and ends of the other phases. */
static void phase_event(trace_t *tr, tstate_t *s, int i, double t, const char *ev,
                        long b, long n)
{
    if (!strcmp(ev, "request_start")) {
        s->req = t;
    } else if (!strcmp(ev, "request_end")) {
        span(tr, s, i, PH_REQUEST, s->req, t, "tokens", n, NULL, 0);
        s->req = -1;
        forget_arrived(s);
    } else if (!strcmp(ev, "rollback")) {
        forget_arrived(s);
        span(tr, s, i, PH_ROLLBACK, t, t, "block", b, "discarded", n);
        if (s->draft >= 0)
            span(tr, s, i, PH_DRAFT, s->draft, t, "block", s->draft_block, "abandoned", 1);
        s->draft = -1;
    } else if (!strcmp(ev, "kv_wait")) {
        s->kv = t;
    } else if (!strcmp(ev, "kv_admit")) {
        if (s->kv >= 0) span(tr, s, i, PH_KV, s->kv, t, NULL, 0, NULL, 0);
        s->kv = -1;
    } else if (!strcmp(ev, "prefill_start")) {
        if (s->prefill < 0) s->prefill = t;
    } else if (!strcmp(ev, "prefill_done")) {
        span(tr, s, i, PH_PREFILL, s->prefill, t, "tokens", n, NULL, 0);
        s->prefill = -1;
    } else if (!strcmp(ev, "stall_start")) {
        s->stall = t;
    } else if (!strcmp(ev, "stall_end")) {
        span(tr, s, i, PH_STALL, s->stall, t, NULL, 0, NULL, 0);
        s->stall = -1;
    }
}

static void pf_event(trace_t *tr, double t, int i, const char *ev, long b, long n)
{
    tstate_t *s = tenant(tr, i);
    if (!s) return;
    if (!block_event(tr, s, i, t, ev, b, n)) phase_event(tr, s, i, t, ev, b, n);
}

static void counter(trace_t *tr, double t, int replica, const char *what, int v)
{
    emit_open(tr);
    trace_printf(tr, "{\"name\":\"%s GPU %d\",\"ph\":\"C\",", what, replica);
    print_us(tr, "ts", ns(t));
    trace_printf(tr, ",\"pid\":1,\"tid\":%d,\"args\":{\"%s\":%d}}",
                 replica + 1, what, v);
}

static void pf_batch(trace_t *tr, double t, int replica, double dur, int jobs,
                     long tokens)
{
    emit_open(tr);
    trace_printf(tr, "{\"name\":\"batch\",\"ph\":\"X\"");
    print_span(tr, t, t + dur);
    trace_printf(tr, ",\"pid\":1,\"tid\":%d,\"args\":{\"jobs\":%d,\"M\":%ld}}",
                 replica + 1, jobs, tokens);
    /* The batch size drops to 0 when the iteration ends; a next one starting
     * at that instant is written later, so viewers keep its value. */
    counter(tr, t, replica, "batch", jobs);
    counter(tr, t + dur, replica, "batch", 0);
}

static void pf_queue(trace_t *tr, double t, int replica, int n)
{
    counter(tr, t, replica, "queue", n);
}

static void pf_finish(trace_t *tr, double t)
{
    (void)t;
    trace_printf(tr, "\n]}\n");
}

const trace_ops_t trace_perfetto_ops = {
    .name = "perfetto",
    .suffix = ".json",
    .init = pf_init,
    .event = pf_event,
    .batch = pf_batch,
    .queue = pf_queue,
    .finish = pf_finish,
    .fini = pf_fini,
};
