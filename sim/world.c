#include "world.h"

#include <stdlib.h>
#include <string.h>

world_t *world_create(const world_shared_t *sh, int rep, tally_t *tally,
                      trace_t *trace, err_t *err)
{
    const scenario_t *s = sh->s;
    world_t *w = calloc(1, sizeof *w);
    if (!w) {
        err_set(err, ERR_RUNTIME, "simulation: out of memory");
        return NULL;
    }
    w->s = s;
    w->sh = sh;
    w->rep = rep;
    w->mode = s->protocol.mode;
    w->gamma = s->protocol.gamma;
    w->window = s->protocol.window;
    w->n = s->ntenants;
    w->tally = tally;
    w->trace = trace;
    w->err = err;
    /* A few pending events per tenant at most: sized so the heap rarely
     * grows even once. */
    w->eng = engine_create((size_t)w->n * 4 + 64, err);
    w->t = calloc((size_t)w->n, sizeof *w->t);
    w->cum = calloc((size_t)w->n * (size_t)w->gamma, sizeof *w->cum);
    w->draft_memo = calloc((size_t)s->ngroups, sizeof *w->draft_memo);
    w->draft_memo_n = calloc((size_t)s->ngroups, sizeof *w->draft_memo_n);
    if (!w->eng || !w->t || !w->cum || !w->draft_memo || !w->draft_memo_n) {
        world_free(w);
        err_set(err, ERR_RUNTIME, "simulation: out of memory");
        return NULL;
    }
    for (int i = 0; i < w->n; i++) {
        if (edge_tenant_init(w, i, err)) {
            world_free(w);
            return NULL;
        }
    }
    if (w->mode != MODE_EDGE_ONLY) {
        cloud_cb_t cb = {w, edge_job_done, edge_admitted};
        w->cloud = cloud_create(&s->cloud, w->n, sh->cloud_sv, sh->kv_capacity,
                                w->eng, EV_ITER_END, EV_KICK, &cb, tally, trace,
                                s->seed, rep, err);
        if (!w->cloud) {
            world_free(w);
            return NULL;
        }
    }
    return w;
}

int world_run(world_t *w)
{
    double end = w->s->duration;
    w->err->msg[0] = '\0';
    if (edge_start(w)) return -1;
    if (engine_run(w->eng, end)) {
        if (!w->err->msg[0])
            err_set(w->err, ERR_RUNTIME, "simulation: event queue failure at t=%g s",
                    engine_now(w->eng));
        return -1;
    }
    if (w->cloud) cloud_finish(w->cloud, end);
    edge_finish(w, end);
    w->tally->raw.end = end;
    return 0;
}

uint64_t world_events(const world_t *w) { return engine_events(w->eng); }

void world_free(world_t *w)
{
    if (!w) return;
    if (w->t)
        for (int i = 0; i < w->n; i++) edge_tenant_free(&w->t[i]);
    cloud_free(w->cloud);
    engine_free(w->eng);
    free(w->t);
    free(w->cum);
    if (w->draft_memo)
        for (int g = 0; g < w->s->ngroups; g++) free(w->draft_memo[g]);
    free(w->draft_memo);
    free(w->draft_memo_n);
    free(w);
}
