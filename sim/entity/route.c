#include "entity/route.h"

#include <stdlib.h>

#include "entity/ctenant.h"
#include "entity/edge.h"
#include "entity/msg.h"
#include "entity/proto.h"

int route_setup(repl_t *r, const repl_shared_t *sh, int rep, int sides, tally_t *tally,
                trace_t *trace, err_t *err)
{
    const scenario_t *s = sh->s;
    r->s = s;
    r->sh = sh;
    r->rep = rep;
    r->n = s->ntenants;
    r->tally = tally;
    r->trace = trace;
    r->err = err;
    /* A few pending events per tenant at most: sized so the heap rarely
     * grows even once. */
    r->eng = engine_create((size_t)r->n * 4 + 64, err);
    r->prompt_box = calloc((size_t)r->n, sizeof *r->prompt_box);
    r->resync_box = calloc((size_t)r->n, sizeof *r->resync_box);
    if (!r->eng || !r->prompt_box || !r->resync_box) return -1;
    if (sides & ROUTE_EDGE) {
        r->et = calloc((size_t)r->n, sizeof *r->et);
        r->draft_memo = calloc((size_t)s->ngroups, sizeof *r->draft_memo);
        r->draft_memo_n = calloc((size_t)s->ngroups, sizeof *r->draft_memo_n);
        if (!r->et || !r->draft_memo || !r->draft_memo_n) return -1;
    }
    if (sides & ROUTE_CLOUD) {
        r->ct = calloc((size_t)r->n, sizeof *r->ct);
        if (!r->ct) return -1;
    }
    return 0;
}

int route_alloc_cum(repl_t *r, size_t **off)
{
    size_t total = 0;
    *off = malloc(((size_t)r->n + 1) * sizeof **off);
    if (!*off) return -1;
    for (int i = 0; i < r->n; i++) {
        (*off)[i] = total;
        total += (size_t)edge_cum_size(r, i);
    }
    r->cum = calloc(total ? total : 1, sizeof *r->cum);
    return r->cum ? 0 : -1;
}

void route_teardown(repl_t *r)
{
    /* Both finis accept a zeroed tenant: a set-up that failed part way, or
     * a runner that leaves one side unused. */
    for (int i = 0; r->et && i < r->n; i++) edge_tenant_fini(&r->et[i]);
    for (int i = 0; r->ct && i < r->n; i++) ctenant_fini(&r->ct[i]);
    cloud_free(r->cloud);
    engine_free(r->eng);
    free(r->et);
    free(r->ct);
    free(r->prompt_box);
    free(r->resync_box);
    free(r->cum);
    free(r->thermal);
    if (r->draft_memo)
        for (int g = 0; g < r->s->ngroups; g++) free(r->draft_memo[g]);
    free(r->draft_memo);
    free(r->draft_memo_n);
}

/* ---- event routing ------------------------------------------------------ */

int route_arrive(void *ctx, const engine_event_t *ev)
{
    /* ev->time is the instant it ran (engine_step), not its due time. */
    return edge_arrive(ctx, (int)ev->a, ev->time);
}

int route_edge_prefill(void *ctx, const engine_event_t *ev)
{
    return edge_prefill_done(ctx, (int)ev->a);
}

int route_draft(void *ctx, const engine_event_t *ev)
{
    repl_t *r = ctx;
    int i = (int)ev->a;
    if (!edge_draft_ended(r, i, ev->b)) return 0;
    edge_tenant_t *T = &r->et[i];
    if (T->fb_state) return edge_local_done(r, i);
    if (T->proto->draft_done(r, i)) return -1;
    return T->fb ? edge_draft_check(r, T) : 0;
}

int route_link(void *ctx, const engine_event_t *ev)
{
    return edge_link_changed(ctx, (int)ev->a, ev->b);
}

int route_up(void *ctx, const engine_event_t *ev)
{
    repl_t *r = ctx;
    int i = (int)ev->a;
    if (msg_kind(ev->b) == MSG_PROMPT) return ctenant_prompt(r, i, ev->time);
    if (msg_kind(ev->b) == MSG_RESYNC) return ctenant_resync(r, i, ev->time);
    return r->ct[i].proto->block_at_cloud(r, i, ev->b, ev->time);
}

int route_down(void *ctx, const engine_event_t *ev)
{
    repl_t *r = ctx;
    int i = (int)ev->a;
    edge_tenant_t *T = &r->et[i];
    /* protocol.fallback: what the cloud sent before it learnt of the
     * fallback is moot (edge_fallback_down). */
    if (T->fb && edge_fallback_down(r, T, ev->b)) return 0;
    switch (msg_kind(ev->b)) {
    case MSG_FIRST:
        return T->fb_state == 2 ? edge_resumed(r, i) : edge_first_msg(r, i);
    case MSG_TOKEN:
        return edge_token_msg(r, i);
    default:
        if (T->proto->verdict_at_edge(r, i, ev->b)) return -1;
        return T->fb ? edge_rtt_check(r, T) : 0;
    }
}

int route_job_done(void *ctx, const cloud_job_t *job, double now)
{
    repl_t *r = ctx;
    return r->ct[job->tenant].proto->job_done(r, job, now);
}
