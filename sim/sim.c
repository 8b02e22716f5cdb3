#include "sim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tally.h"
#include "trace.h"
#include "world.h"

/* Blocks carry their verdict's accepted count in 14 bits (edge.c). */
#define GAMMA_MAX 4096

static double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int needs_edge_model(const scenario_t *s, const tenant_group_t *g)
{
    return s->protocol.mode != MODE_CLOUD_ONLY &&
           (!g->edge.has_draft_time || !g->edge.has_prefill_time);
}

static service_t *edge_service(const tenant_group_t *g, err_t *err)
{
    return service_create(&g->edge.device, &g->edge.draft, g->edge.quant,
                          g->edge.calibration, g->edge.overhead, err);
}

static service_t *cloud_service(const cloud_cfg_t *c, err_t *err)
{
    return service_create(&c->gpu, &c->target, c->precision, c->calibration,
                          c->overhead, err);
}

static void shared_free(world_shared_t *sh)
{
    if (sh->groups) {
        for (int g = 0; g < sh->s->ngroups; g++) service_free(sh->groups[g].edge_sv);
        free(sh->groups);
    }
    service_free(sh->cloud_sv);
    memset(sh, 0, sizeof *sh);
}

static int validate(const scenario_t *s, err_t *err)
{
    const char *f = s->file[0] ? s->file : s->name;
    int spec = s->protocol.mode == MODE_SYNC || s->protocol.mode == MODE_ASYNC;
    if (s->ntenants < 1 || s->ngroups < 1 || !s->groups)
        return err_set(err, ERR_INPUT, "%s: tenants: no tenants", f);
    if (s->protocol.gamma < 1 || s->protocol.gamma > GAMMA_MAX)
        return err_set(err, ERR_INPUT, "%s: protocol.gamma: %d outside [1, %d]", f,
                       s->protocol.gamma, GAMMA_MAX);
    if (s->protocol.window < 1)
        return err_set(err, ERR_INPUT, "%s: protocol.window: must be >= 1", f);
    if (!(s->duration > s->warmup) || s->warmup < 0)
        return err_set(err, ERR_INPUT, "%s: warmup: must be in [0, duration)", f);
    if (s->replications < 1)
        return err_set(err, ERR_INPUT, "%s: replications: must be >= 1", f);
    if (s->protocol.mode != MODE_EDGE_ONLY) {
        const batching_cfg_t *b = &s->cloud.batching;
        if (s->cloud.replicas < 1)
            return err_set(err, ERR_INPUT, "%s: cloud.replicas: must be >= 1", f);
        if (b->max_batch < 1)
            return err_set(err, ERR_INPUT, "%s: cloud.batching.max_batch: must be >= 1", f);
        if (spec && b->max_tokens > 0 && b->max_tokens < s->protocol.gamma + 1)
            return err_set(err, ERR_INPUT,
                           "%s: cloud.batching.max_tokens: %d is below gamma + 1 = %d, "
                           "so no block could ever be verified", f, b->max_tokens,
                           s->protocol.gamma + 1);
    }
    return 0;
}

static int shared_build(const scenario_t *s, world_shared_t *sh, err_t *err)
{
    memset(sh, 0, sizeof *sh);
    sh->s = s;
    sh->kv_capacity = INFINITY;
    sh->groups = calloc((size_t)s->ngroups, sizeof *sh->groups);
    if (!sh->groups) return err_set(err, ERR_RUNTIME, "simulation: out of memory");
    for (int gi = 0; gi < s->ngroups; gi++) {
        const tenant_group_t *g = &s->groups[gi];
        world_group_t *wg = &sh->groups[gi];
        wg->bytes_per_token = g->network.bytes_per_token;
        wg->overhead_bytes = g->network.overhead_bytes;
        if (needs_edge_model(s, g)) {
            wg->edge_sv = edge_service(g, err);
            if (!wg->edge_sv) return -1;
        }
        if (g->edge.has_draft_time) {
            wg->draft_kind = g->edge.draft_time.kind == DIST_CONST ? 0 : 1;
            wg->draft_const = g->edge.draft_time.a;
        } else {
            wg->draft_kind = 2;
        }
    }
    const cloud_cfg_t *c = &s->cloud;
    if (s->protocol.mode == MODE_EDGE_ONLY) return 0;
    /* With a fixed verify time the GPU is abstracted away: KV is limited
     * only when a capacity is given explicitly. */
    if (!c->has_verify_time || c->kv_capacity_bytes > 0) {
        sh->cloud_sv = cloud_service(c, err);
        if (!sh->cloud_sv) return -1;
        sh->kv_bytes_per_token = service_kv_bytes_per_token(sh->cloud_sv);
        if (c->kv_capacity_bytes > 0) {
            sh->kv_capacity = c->kv_capacity_bytes;
        } else {
            sh->kv_capacity = c->gpu.mem_bytes - service_weight_bytes(sh->cloud_sv);
            if (!(sh->kv_capacity > 0))
                return err_set(err, ERR_INPUT,
                               "%s: cloud.target: %s weights (%.3g GB) do not fit in "
                               "cloud.gpu %s memory (%.3g GB)",
                               s->file[0] ? s->file : s->name, c->target.name,
                               service_weight_bytes(sh->cloud_sv) / 1e9, c->gpu.name,
                               c->gpu.mem_bytes / 1e9);
        }
    }
    return 0;
}

static int run_reps(const scenario_t *s, const sim_options_t *opt,
                    metrics_summary_t *out, sim_totals_t *tot, err_t *err)
{
    world_shared_t sh;
    if (validate(s, err)) return -1;
    if (shared_build(s, &sh, err)) {
        shared_free(&sh);
        return -1;
    }
    int R = s->replications, rc = 0;
    metrics_rep_t *reps = calloc((size_t)R, sizeof *reps);
    tally_t *tl = tally_create(s->warmup, s->duration);
    if (!reps || !tl) {
        rc = err_set(err, ERR_RUNTIME, "simulation: out of memory");
        goto done;
    }
    int mode = s->protocol.mode;
    int drafts = mode != MODE_CLOUD_ONLY;
    int verify = mode == MODE_SYNC || mode == MODE_ASYNC;
    int nrep = mode == MODE_EDGE_ONLY ? 0 : s->cloud.replicas;
    double events = 0, wall = 0;
    for (int r = 0; r < R && rc == 0; r++) {
        trace_t tr, *trp = NULL;
        if (r == 0 && opt && opt->trace) {
            trace_init(&tr, opt->trace);
            trp = &tr;
        }
        tally_reset(tl);
        double t0 = wall_now();
        world_t *w = world_create(&sh, r, tl, trp, err);
        if (!w || world_run(w)) {
            world_free(w);
            rc = -1;
            break;
        }
        double ev = (double)world_events(w);
        world_free(w);
        double dt = wall_now() - t0;
        events += ev;
        wall += dt;
        tally_finish(tl, drafts, verify, nrep, ev, dt, &reps[r]);
        if (r == 0 && tot) *tot = tl->raw;
        if (trp && trace_error(trp))
            rc = err_set(err, ERR_RUNTIME, "trace: write error");
    }
    if (rc == 0) {
        metrics_summarize(reps, R, out);
        out->value[METRIC_EVENTS] = events;
        out->value[METRIC_WALL_S] = wall;
        out->value[METRIC_EVENTS_PER_S] = wall > 0 ? events / wall : NAN;
        out->ci95[METRIC_EVENTS] = out->ci95[METRIC_WALL_S] = 0;
        out->ci95[METRIC_EVENTS_PER_S] = 0;
    }
done:
    tally_free(tl);
    free(reps);
    shared_free(&sh);
    return rc;
}

int sim_run_detailed(const scenario_t *s, const sim_options_t *opt,
                     metrics_summary_t *out, sim_totals_t *tot, err_t *err)
{
    /* A private record: world code clears and tests its message, and the
     * caller's err may be NULL. */
    err_t e;
    e.code = 0;
    e.msg[0] = '\0';
    if (tot) memset(tot, 0, sizeof *tot);
    int rc = run_reps(s, opt, out, tot, &e);
    if (rc && err) *err = e;
    return rc;
}

int sim_run(const scenario_t *s, const sim_options_t *opt,
            metrics_summary_t *out, err_t *err)
{
    return sim_run_detailed(s, opt, out, NULL, err);
}

static void copy_name(char *dst, const char *src)
{
    snprintf(dst, 32, "%s", src);
}

int sim_service_sources(const scenario_t *s, sim_sources_t *out, err_t *err)
{
    memset(out, 0, sizeof *out);
    if (s->ngroups < 1) return err_set(err, ERR_INPUT, "no tenant groups");
    const tenant_group_t *g = &s->groups[0];
    if (g->edge.has_draft_time) {
        copy_name(out->edge, g->edge.draft_time.kind == DIST_CONST ? "fixed" : "distribution");
    } else {
        service_t *sv = edge_service(g, err);
        if (!sv) return -1;
        copy_name(out->edge, service_draft_source(sv));
        service_free(sv);
    }
    const cloud_cfg_t *c = &s->cloud;
    if (c->has_verify_time) {
        copy_name(out->cloud, c->verify_time.kind == DIST_CONST ? "fixed" : "distribution");
    } else {
        service_t *sv = cloud_service(c, err);
        if (!sv) return -1;
        copy_name(out->cloud, service_source(sv));
        service_free(sv);
    }
    return 0;
}
