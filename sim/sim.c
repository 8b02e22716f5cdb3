#include "sim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "proto.h"
#include "tally.h"
#include "trace.h"
#include "world.h"

static double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int needs_edge_model(const scenario_t *s, const tenant_group_t *g)
{
    return s->protocol.proto->drafts &&
           (!g->edge.has_draft_time || !g->edge.has_prefill_time);
}

/* The services come from the loader, which built (and checked) every one
 * the scenario needs. A scenario built in code has none: sim_run then makes
 * its own, freed with the run's shared state. */
static service_t *edge_service(const scenario_t *s, int gi, err_t *err)
{
    const edge_cfg_t *e = &s->groups[gi].edge;
    if (e->service) return e->service;
    return service_create(&e->device, &e->draft, e->quant, e->calibration,
                          e->overhead, err);
}

static service_t *cloud_service(const scenario_t *s, err_t *err)
{
    const cloud_cfg_t *c = &s->cloud;
    if (c->service) return c->service;
    return service_create(&c->gpu, &c->target, c->precision, c->calibration,
                          c->overhead, err);
}

/* Frees sv unless the scenario owns it. */
static void service_release(service_t *sv, const struct service *owned)
{
    if (sv != owned) service_free(sv);
}

static void shared_fini(repl_shared_t *sh)
{
    if (sh->groups) {
        for (int g = 0; g < sh->s->ngroups; g++)
            service_release(sh->groups[g].edge_sv, sh->s->groups[g].edge.service);
        free(sh->groups);
    }
    if (sh->s) service_release(sh->cloud_sv, sh->s->cloud.service);
    memset(sh, 0, sizeof *sh);
}

static int shared_build(const scenario_t *s, repl_shared_t *sh, err_t *err)
{
    memset(sh, 0, sizeof *sh);
    sh->s = s;
    sh->kv_capacity = INFINITY;
    sh->groups = calloc((size_t)s->ngroups, sizeof *sh->groups);
    if (!sh->groups) return err_set(err, ERR_RUNTIME, "simulation: out of memory");
    for (int gi = 0; gi < s->ngroups; gi++) {
        const tenant_group_t *g = &s->groups[gi];
        repl_group_t *wg = &sh->groups[gi];
        wg->bytes_per_token = g->network.bytes_per_token;
        wg->overhead_bytes = g->network.overhead_bytes;
        if (needs_edge_model(s, g)) {
            wg->edge_sv = edge_service(s, gi, err);
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
    if (!s->protocol.proto->uses_cloud) return 0;
    /* With a fixed verify time the GPU is abstracted away: KV is limited
     * only when a capacity is given explicitly. */
    if (!c->has_verify_time || c->kv_capacity_bytes > 0) {
        sh->cloud_sv = cloud_service(s, err);
        if (!sh->cloud_sv) return -1;
        sh->kv_bytes_per_token = service_kv_bytes_per_token(sh->cloud_sv);
        /* The loader refused weights that leave no room for KV. */
        sh->kv_capacity = c->kv_capacity_bytes > 0
                              ? c->kv_capacity_bytes
                              : c->gpu.mem_bytes - service_weight_bytes(sh->cloud_sv);
    }
    return 0;
}

static int run_reps(const scenario_t *s, const sim_options_t *opt,
                    metrics_summary_t *out, tally_totals_t *tot, err_t *err)
{
    repl_shared_t sh;
    if (shared_build(s, &sh, err)) {
        shared_fini(&sh);
        return -1;
    }
    int R = s->replications, rc = 0;
    metrics_rep_t *reps = calloc((size_t)R, sizeof *reps);
    tally_t *tl = tally_create(s->warmup, s->duration);
    if (!reps || !tl) {
        rc = err_set(err, ERR_RUNTIME, "simulation: out of memory");
        goto done;
    }
    const proto_ops_t *p = s->protocol.proto;
    int drafts = p->drafts, verify = p->verifies;
    int nrep = p->uses_cloud ? s->cloud.replicas : 0;
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
        if (rc == 0 && opt && opt->progress) opt->progress(opt->progress_ctx, r + 1, R);
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
    shared_fini(&sh);
    return rc;
}

int sim_run_detailed(const scenario_t *s, const sim_options_t *opt,
                     metrics_summary_t *out, tally_totals_t *tot, err_t *err)
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

const char *sim_edge_source(const scenario_t *s, int g, err_t *err)
{
    const edge_cfg_t *e = &s->groups[g].edge;
    if (e->has_draft_time)
        return e->draft_time.kind == DIST_CONST ? "fixed" : "distribution";
    service_t *sv = edge_service(s, g, err);
    if (!sv) return NULL;
    /* A literal inside service.c, so it outlives sv. */
    const char *src = service_draft_source(sv);
    service_release(sv, e->service);
    return src;
}

/* Every group's source counts: one group's would misreport the rest. */
static int edge_sources(const scenario_t *s, output_sources_t *out, err_t *err)
{
    out->edge_group = calloc((size_t)s->ngroups, sizeof *out->edge_group);
    if (!out->edge_group) return err_set(err, ERR_RUNTIME, "out of memory");
    out->ngroups = s->ngroups;
    for (int g = 0; g < s->ngroups; g++) {
        const char *src = sim_edge_source(s, g, err);
        if (!src) return -1;
        out->edge_group[g] = src;
        if (g == 0) copy_name(out->edge, src);
        else if (strcmp(out->edge, src) != 0) copy_name(out->edge, "mixed");
    }
    return 0;
}

static int cloud_source(const scenario_t *s, output_sources_t *out, err_t *err)
{
    const cloud_cfg_t *c = &s->cloud;
    if (c->has_verify_time) {
        copy_name(out->cloud, c->verify_time.kind == DIST_CONST ? "fixed" : "distribution");
        return 0;
    }
    service_t *sv = cloud_service(s, err);
    if (!sv) return -1;
    copy_name(out->cloud, service_source(sv));
    service_release(sv, c->service);
    return 0;
}

int sim_service_sources(const scenario_t *s, output_sources_t *out, err_t *err)
{
    memset(out, 0, sizeof *out);
    if (s->ngroups < 1) return err_set(err, ERR_INPUT, "no tenant groups");
    if (edge_sources(s, out, err) != 0 || cloud_source(s, out, err) != 0) {
        output_sources_fini(out);
        return -1;
    }
    return 0;
}
