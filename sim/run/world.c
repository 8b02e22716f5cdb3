#include "run/world.h"

#include <stdlib.h>
#include <string.h>

#include "entity/ctenant.h"
#include "entity/edge.h"
#include "entity/msg.h"
#include "run/guard.h"
#include "entity/route.h"
#include "entity/proto.h"

struct world {
    repl_t r;
};

/* ---- event routing ---------------------------------------------------- */

/* Tenant state above which the hints are used: half a typical L2. */
#define WORLD_HINT_MIN_BYTES ((size_t)512 * 1024)

/* Pulls [p, p + n) into cache; the arrays are not line-aligned, so the
 * line of the last byte too. */
static void prefetch(const char *p, size_t n)
{
    for (size_t off = 0; off < n; off += 64) __builtin_prefetch(p + off);
    __builtin_prefetch(p + n - 1);
}

/* engine_on_hint: pulls the next event's tenant into cache while the
 * current event runs. Tenants are visited in no useful order and 10^4 of
 * them outgrow L2, so otherwise each event began with a few L3 misses. */
static void hint_edge(void *ctx, const engine_event_t *next)
{
    const repl_t *r = ctx;
    prefetch((const char *)&r->et[next->a], sizeof(edge_tenant_t));
    /* Its tally row (72 bytes), which a commit adds to. */
    prefetch((const char *)&r->tally->ten[next->a], sizeof *r->tally->ten);
}

/* A message up reaches the cloud's view of the tenant (and, for a prompt,
 * reads its body from the tenant's prompt slot). */
static void hint_up(void *ctx, const engine_event_t *next)
{
    const repl_t *r = ctx;
    prefetch((const char *)&r->ct[next->a], sizeof(ctenant_t));
    if (msg_kind(next->b) == MSG_PROMPT)
        prefetch((const char *)&r->prompt_box[next->a], sizeof(msg_prompt_t));
}

static int handle_events(repl_t *r)
{
    engine_t *e = r->eng;
    if (engine_on(e, EV_ARRIVE, route_arrive, r) ||
        engine_on(e, EV_EDGE_PREFILL, route_edge_prefill, r) ||
        engine_on(e, EV_DRAFT, route_draft, r) || engine_on(e, EV_UP, route_up, r) ||
        engine_on(e, EV_DOWN, route_down, r) || engine_on(e, EV_LINK, route_link, r))
        return repl_fail(r, "event types");
    /* A draft's end is a timer, so that one abandoned (a verdict rejected
     * the block it built on) is cancelled, not run as a no-op. */
    if (!r->draft_time) {
        int rc = engine_timers(e, EV_DRAFT, (size_t)r->n);
        if (rc < 0) return repl_fail(r, "out of memory");
        r->draft_timers = rc == 0;
    }
    /* Prefetching only pays once the tenants outgrow the caches; for a few
     * dozen tenants it is pure overhead (measured ~2% on the default). */
    static const uint32_t edge_events[] = {EV_ARRIVE, EV_EDGE_PREFILL, EV_DRAFT,
                                           EV_DOWN};
    if ((size_t)r->n * (sizeof(edge_tenant_t) + sizeof(ctenant_t)) < WORLD_HINT_MIN_BYTES)
        return 0;
    for (size_t k = 0; k < sizeof edge_events / sizeof *edge_events; k++)
        if (engine_on_hint(e, edge_events[k], hint_edge)) return repl_fail(r, "event types");
    if (engine_on_hint(e, EV_UP, hint_up)) return repl_fail(r, "event types");
    return 0;
}

/* ---- set-up ----------------------------------------------------------- */

static int tenants_init(repl_t *r, err_t *err)
{
    size_t *off = NULL;
    if (route_alloc_cum(r, &off)) {
        free(off);
        return err_set(err, ERR_RUNTIME, "simulation: out of memory");
    }
    int rc = 0;
    for (int i = 0; i < r->n && !rc; i++) {
        rc = edge_tenant_init(r, i, r->cum + off[i], err);
        if (!rc && r->et[i].proto->uses_cloud) rc = ctenant_init(r, i, err);
    }
    free(off);
    return rc;
}

static int any_uses_cloud(const repl_t *r)
{
    for (int i = 0; i < r->n; i++)
        if (r->et[i].proto->uses_cloud) return 1;
    return 0;
}

world_t *world_create(const repl_shared_t *sh, int rep, tally_t *tally,
                      trace_t *trace, err_t *err)
{
    const scenario_t *s = sh->s;
    world_t *w = calloc(1, sizeof *w);
    if (!w) {
        err_set(err, ERR_RUNTIME, "simulation: out of memory");
        return NULL;
    }
    repl_t *r = &w->r;
    if (route_setup(r, sh, rep, ROUTE_BOTH, tally, trace, err)) {
        world_free(w);
        err_set(err, ERR_RUNTIME, "simulation: out of memory");
        return NULL;
    }
    if (tenants_init(r, err)) {
        world_free(w);
        return NULL;
    }
    if (any_uses_cloud(r)) {
        cloud_cb_t cb = {r, route_job_done, ctenant_admitted, NULL};
        r->cloud = cloud_create_groups(&s->cloud, r->n, sh->cgroups, sh->ncgroups,
                                       r->eng, EV_ITER_END, EV_KICK, &cb, tally, trace,
                                       s->seed, rep, err);
        if (!r->cloud) {
            world_free(w);
            return NULL;
        }
    }
    return w;
}

int world_run(world_t *w)
{
    repl_t *r = &w->r;
    double end = r->s->duration;
    r->err->msg[0] = '\0';
    if (handle_events(r) || edge_start(r)) return -1;
    guard_t g;
    guard_init(&g, r->s, r->sh->arrivals);
    if (r->trace) guard_watch_trace(&g, r->trace);
    int rc;
    while ((rc = engine_run_until(r->eng, end, guard_next(&g))) == 1)
        if (guard_check(&g, engine_now(r->eng), engine_events(r->eng), r->waiting,
                        (uint64_t)r->tally->raw.requests_done, end, r->err))
            return -1;
    if (rc != 0) {
        if (!r->err->msg[0])
            err_set(r->err, ERR_RUNTIME, "simulation: event queue failure at t=%g s",
                    engine_now(r->eng));
        return -1;
    }
    if (r->cloud) cloud_finish(r->cloud, end);
    edge_finish(r, end);
    /* A histogram that could not grow dropped a value (hist_add cannot
     * fail): the metrics would be short of it. */
    if (tally_failed(r->tally))
        return err_set(r->err, ERR_RUNTIME, "simulation: out of memory (histogram)");
    r->tally->raw.end = end;
    return 0;
}

uint64_t world_events(const world_t *w) { return engine_events(w->r.eng); }

void world_free(world_t *w)
{
    if (!w) return;
    route_teardown(&w->r);
    free(w);
}
