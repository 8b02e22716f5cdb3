#include "fleet.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conn.h"
#include "entity/edge.h"
#include "lmedge.h"
#include "entity/msg.h"
#include "entity/proto.h"
#include "realdraft.h"
#include "entity/route.h"
#include "rt.h"
#include "w4a16.h"
#include "base/wallclock.h"

/* Time between the last HELLO and the run's start: the verifier must have
 * read every HELLO by then (it needs a few microseconds per tenant). */
#define FLEET_LEAD_S 0.05

/* The real draft worker's eventfd in the epoll set, and the real model's
 * drafter's; tenants use their index. */
#define FLEET_DRAFT_TAG (UINT32_MAX - 1)
#define FLEET_LM_TAG (UINT32_MAX - 2)
/* The contexts real drafting keeps KV room for (longer ones are clamped,
 * as testbed/realverify.h says). */
#define FLEET_DRAFT_CONTEXT 4096

typedef struct fleet {
    repl_t r;
    conn_t **conn;          /* [n], NULL for tenants without the cloud */
    rt_t rt;
    realdraft_t *rd;        /* NULL: every draft emulated */
    int rd_tenant;
    uint64_t rd_gen;        /* the draft last handed to the worker */
    double rd_model;        /* ... and the model's time for it */
    lmedge_t *lm;           /* a real model's tokens (--real-model), or NULL */
    fleet_stats_t *st;
    xio_watch_t verifier;   /* what a send blocked on the verifier watches */
} fleet_t;

/* ---- real drafting ------------------------------------------------------ */

const char *fleet_real_draft_refusal(const scenario_t *s, int tenant)
{
    if (tenant < 0 || tenant >= s->ntenants)
        return "--real-draft: no such tenant (tenants are numbered from 0 to "
               "tenants.count - 1)";
    const tenant_group_t *G = scenario_tenant_group(s, tenant);
    if (!scenario_group_protocol(s, (int)(G - s->groups))->proto->drafts)
        return "--real-draft: that tenant's protocol does not draft";
    if (G->edge.quant != PREC_W4A16 && G->edge.quant != PREC_FP16)
        return "--real-draft runs the draft model at tenants.edge.quant w4a16 or fp16";
    /* realdraft_create would refuse the card too, but only once the run
     * (and a real verifier beside it) had started. */
    _Static_assert(W4A16_GROUP_DEFAULT == 128, "the message below says 128");
    if (G->edge.quant == PREC_W4A16 && (G->edge.draft.hidden % W4A16_GROUP_DEFAULT ||
                                        G->edge.draft.ffn % W4A16_GROUP_DEFAULT))
        return "--real-draft at tenants.edge.quant w4a16: the tenants.edge.draft card's "
               "hidden and ffn must be multiples of 128, the quantisation group (or use "
               "edge.quant: fp16)";
    return NULL;
}

realverify_size_t fleet_real_draft_bytes(const scenario_t *s, int tenant, int *context)
{
    const tenant_group_t *G = scenario_tenant_group(s, tenant);
    *context = FLEET_DRAFT_CONTEXT;
    return realdraft_bytes(&G->edge.draft, G->edge.quant, FLEET_DRAFT_CONTEXT);
}

/* repl_t.draft_time: the real tenant's draft goes to the worker and ends
 * when it is done (on_draft_done); the others keep the model's time. */
static double draft_hook(void *ctx, int tenant, int context, int n, double model_s)
{
    fleet_t *f = ctx;
    if (tenant != f->rd_tenant) return model_s;
    f->rd_gen = f->r.et[tenant].draft_gen;
    f->rd_model = model_s;
    realdraft_start(f->rd, context, n, f->rd_gen);
    return INFINITY;
}

/* The worker finished a draft: it ends now (an engine event, so that the
 * clock is the instant it runs; an abandoned one is ignored there). */
static int on_draft_done(fleet_t *f, err_t *err)
{
    uint64_t gen;
    int n;
    double dt;
    int got = realdraft_take(f->rd, &gen, &n, &dt, err);
    if (got <= 0) return got;
    if (gen == f->rd_gen) {
        f->st->rd_drafts++;
        f->st->rd_tokens += n;
        f->st->rd_real_s += dt;
        f->st->rd_model_s += f->rd_model;
    }
    if (engine_schedule(f->r.eng, rt_now(&f->rt), EV_DRAFT, (uint32_t)f->rd_tenant, gen))
        return err_set(err, ERR_RUNTIME, "testbed: edge: event queue");
    return 0;
}

/* ---- events: as sim/run/world.c routes them (sim/entity/repl.h), at wall-clock
 * times, but for EV_UP, which goes over the wire ---------------------------- */

/* A message up leaves when the uplink delivers it (sim/entity/edge.c scheduled
 * this event at that time). */
static int on_up(void *ctx, const engine_event_t *ev)
{
    fleet_t *f = ctx;
    int i = (int)ev->a;
    wire_msg_t m = {0};
    wire_from_msg(ev->b, &m);
    if (m.kind == WIRE_PROMPT) {
        /* The frame carries the message's body, taken from the slot the
         * edge filled (sim/entity/msg.h); the verifier posts it again. */
        msg_prompt_t body;
        if (msg_prompt_take(&f->r.prompt_box[i], &body))
            return err_set(f->r.err, ERR_RUNTIME, "testbed: edge: a prompt without its body");
        m.prompt = (uint32_t)body.prompt;
        m.output = (uint32_t)body.output;
        m.t0 = body.t0;
        if (f->lm && lmedge_prompt(f->lm, i, &m, f->r.err)) return -1;
    } else if (m.kind == WIRE_BLOCK && f->lm && lmedge_block(f->lm, i, &m, f->r.err)) {
        return -1;
    }
    return conn_send(f->conn[i], &m, f->r.err);
}

/* ---- a real model (--real-model): testbed/lmedge.h --------------------- */

/* repl_t.draft_time: every draft is computed by the real draft model and
 * ends when it is done, not before the scenario's draft time. */
static double lm_draft_hook(void *ctx, int tenant, int context, int n, double model_s)
{
    fleet_t *f = ctx;
    (void)context;
    const edge_tenant_t *T = &f->r.et[tenant];
    if (lmedge_draft_start(f->lm, tenant, T->draft_gen, n, engine_now(f->r.eng), model_s,
                           f->r.err))
        return NAN;   /* the edge then fails with its own message */
    return INFINITY;
}

/* The drafter finished drafts: each ends at its time (an engine event). */
static int on_lm_ready(fleet_t *f, err_t *err)
{
    int i, got;
    uint64_t gen;
    double at;
    while ((got = lmedge_ready(f->lm, rt_now(&f->rt), &i, &gen, &at, err)) > 0)
        if (engine_schedule(f->r.eng, at, EV_DRAFT, (uint32_t)i, gen))
            return err_set(err, ERR_RUNTIME, "testbed: edge: event queue");
    return got;
}

/* EV_DRAFT: the drafts join the text just before the edge sends them. */
static int on_lm_draft(void *ctx, const engine_event_t *ev)
{
    fleet_t *f = ctx;
    const edge_tenant_t *T = &f->r.et[ev->a];
    if (T->drafting && ev->b == T->draft_gen) lmedge_draft_end(f->lm, (int)ev->a, ev->b);
    return route_draft(&f->r, ev);
}

/* EV_DOWN: the frame's ids are applied as the edge takes it. */
static int on_lm_down(void *ctx, const engine_event_t *ev)
{
    fleet_t *f = ctx;
    if (msg_kind(ev->b) != MSG_TOKEN && lmedge_down(f->lm, (int)ev->a, f->r.err)) return -1;
    return route_down(&f->r, ev);
}

static int on_input(void *ctx, uint32_t tag, err_t *err)
{
    fleet_t *f = ctx;
    if (tag == FLEET_DRAFT_TAG) return on_draft_done(f, err);
    if (tag == FLEET_LM_TAG) return on_lm_ready(f, err);
    conn_t *c = f->conn[tag];
    if (conn_fill(c, err)) return -1;
    uint32_t ids[WIRE_IDS_MAX];
    wire_msg_t m = {.ids = ids};
    int rc;
    while ((rc = conn_next(c, &m, err)) > 0) {
        if (m.kind != WIRE_FIRST && m.kind != WIRE_TOKEN && m.kind != WIRE_VERDICT)
            return err_set(err, ERR_RUNTIME, "testbed: edge: unexpected frame kind %d "
                           "for tenant %u", m.kind, tag);
        if (f->lm && m.kind != WIRE_TOKEN && lmedge_arrived(f->lm, (int)tag, &m, err)) return -1;
        m.ids = ids;
        if (engine_schedule(f->r.eng, rt_now(&f->rt), EV_DOWN, tag, wire_to_msg(&m)))
            return err_set(err, ERR_RUNTIME, "testbed: edge: event queue");
    }
    if (rc < 0) return -1;
    if (c->eof) return err_set(err, ERR_RUNTIME, "%s", XIO_HUNG_UP_MSG);
    return 0;
}

/* ---- set-up ------------------------------------------------------------- */

static int build(fleet_t *f, const scenario_t *s, const repl_shared_t *sh, int rep,
                 tally_t *tl, err_t *err)
{
    repl_t *r = &f->r;
    size_t *off = NULL;
    f->conn = calloc((size_t)s->ntenants, sizeof *f->conn);
    /* The edge side only: the verifier runs the cloud's. */
    if (route_setup(r, sh, rep, ROUTE_EDGE, tl, NULL, err) || !f->conn ||
        route_alloc_cum(r, &off)) {
        free(off);
        return err_set(err, ERR_RUNTIME, "testbed: edge: out of memory");
    }
    int rc = 0;
    for (int i = 0; i < r->n && rc == 0; i++)
        rc = edge_tenant_init(r, i, r->cum + off[i], err);
    free(off);
    if (rc) return -1;
    engine_t *e = r->eng;
    if (engine_on(e, EV_ARRIVE, route_arrive, r) ||
        engine_on(e, EV_EDGE_PREFILL, route_edge_prefill, r) ||
        engine_on(e, EV_DRAFT, f->lm ? on_lm_draft : route_draft, f->lm ? (void *)f : r) ||
        engine_on(e, EV_UP, on_up, f) ||
        engine_on(e, EV_DOWN, f->lm ? on_lm_down : route_down, f->lm ? (void *)f : r))
        return err_set(err, ERR_RUNTIME, "testbed: edge: event types");
    return 0;
}

static int connect_one(fleet_t *f, int i, int port, err_t *err)
{
    int fd = conn_dial(port, &f->verifier, err);
    if (fd < 0) return -1;
    f->conn[i] = malloc(sizeof *f->conn[i]);
    if (!f->conn[i]) {
        close(fd);
        return err_set(err, ERR_RUNTIME, "testbed: edge: out of memory");
    }
    if (conn_init(f->conn[i], fd, err) != 0) return -1;
    f->conn[i]->watch = &f->verifier;
    return 0;
}

/* Connects every cloud tenant, then greets with the run's start. */
static int connect_all(fleet_t *f, int rep, int port, double *start, err_t *err)
{
    repl_t *r = &f->r;
    f->verifier.what = "it to accept a connection";
    for (int i = 0; i < r->n; i++)
        if (r->et[i].proto->uses_cloud && connect_one(f, i, port, err)) return -1;
    f->verifier.what = "it to take a frame";
    *start = wallclock_s() + FLEET_LEAD_S;
    wire_msg_t h = {.kind = WIRE_HELLO, .rep = (uint32_t)rep,
                    .start_ns = (uint64_t)(*start * 1e9)};
    *start = 1e-9 * (double)h.start_ns;   /* what the verifier reads */
    for (int i = 0; i < r->n; i++) {
        if (!f->conn[i]) continue;
        h.tenant = (uint32_t)i;
        if (conn_send(f->conn[i], &h, err)) return -1;
    }
    return 0;
}

static void teardown(fleet_t *f)
{
    conn_free_all(f->conn, f->r.n);
    route_teardown(&f->r);
    rt_fini(&f->rt);
    realdraft_free(f->rd);
    if (f->lm) {
        lmedge_stats_t ls;
        lmedge_stats(f->lm, &ls);
        f->st->lm_drafts = ls.drafts;
        f->st->lm_tokens = ls.tokens;
        f->st->lm_real_s = ls.real_s;
        f->st->lm_model_s = ls.model_s;
        f->st->lm_mismatches = ls.mismatches;
        f->st->lm_requests = ls.requests;
        f->st->lm_late = ls.late;
        f->st->lm_late_s = ls.late_s;
        f->st->lm_late_measured = ls.late_measured;
        f->st->lm_late_measured_s = ls.late_measured_s;
        f->st->lm_drafts_measured = ls.drafts_measured;
    }
    lmedge_free(f->lm);
}

/* The real draft worker for tenant i, built before the clock starts (its
 * weights take a while to fill). */
static int real_draft_init(fleet_t *f, int i, err_t *err)
{
    const tenant_group_t *G = scenario_tenant_group(f->r.s, i);
    f->rd = realdraft_create(&G->edge.draft, G->edge.quant, FLEET_DRAFT_CONTEXT, err);
    if (!f->rd) return -1;
    f->rd_tenant = i;
    f->r.draft_time = draft_hook;
    f->r.draft_ctx = f;
    return 0;
}

/* The real model's tokens and drafter, built before the clock starts. */
static int lm_init(fleet_t *f, const lmedge_opts_t *lo, int n, err_t *err)
{
    if (!(f->lm = lmedge_create(lo, n, err))) return -1;
    f->r.draft_time = lm_draft_hook;
    f->r.draft_ctx = f;
    return 0;
}

int fleet_run(const scenario_t *s, const repl_shared_t *sh, int rep, int port,
              pid_t verifier, int real_draft, const lmedge_opts_t *lm, tally_t *tl,
              fleet_stats_t *st, const volatile sig_atomic_t *stop, err_t *err)
{
    fleet_t f;
    memset(&f, 0, sizeof f);
    f.rt.ep = f.rt.tfd = -1;
    f.rd_tenant = -1;
    f.st = st;
    f.verifier = (xio_watch_t){.pid = verifier, .who = "the verifier",
                               .what = "it to take a frame", .stall_s = XIO_STALL_S};
    memset(st, 0, sizeof *st);
    double start = wallclock_s() + FLEET_LEAD_S;
    int rc = lm ? lm_init(&f, lm, s->ntenants, err) : 0;
    if (rc == 0) rc = build(&f, s, sh, rep, tl, err);
    if (rc == 0 && real_draft >= 0) rc = real_draft_init(&f, real_draft, err);
    start = wallclock_s() + FLEET_LEAD_S;   /* after the weights were filled */
    if (rc == 0 && port >= 0) rc = connect_all(&f, rep, port, &start, err);
    if (rc == 0) rc = rt_init(&f.rt, start, stop, err);
    for (int i = 0; rc == 0 && i < f.r.n; i++)
        if (f.conn[i]) rc = rt_watch(&f.rt, f.conn[i]->fd, (uint32_t)i, err);
    if (rc == 0 && f.rd) rc = rt_watch(&f.rt, realdraft_fd(f.rd), FLEET_DRAFT_TAG, err);
    if (rc == 0 && f.lm) rc = rt_watch(&f.rt, lmedge_fd(f.lm), FLEET_LM_TAG, err);
    if (rc == 0) rc = edge_start(&f.r);
    if (rc == 0) rc = rt_run(&f.rt, f.r.eng, s->duration, on_input, &f, err);
    if (rc == 0) {
        edge_finish(&f.r, s->duration);
        tl->raw.end = s->duration;
        wire_msg_t bye = {.kind = WIRE_BYE};
        for (int i = 0; rc == 0 && i < f.r.n; i++)
            if (f.conn[i]) rc = conn_send(f.conn[i], &bye, err);
        st->events = (double)engine_events(f.r.eng);
        st->late_mean = f.rt.steps > 0 ? f.rt.late_sum / f.rt.steps : 0;
        st->late_max = f.rt.late_max;
        st->steps = f.rt.steps;
    }
    teardown(&f);
    return rc;
}
