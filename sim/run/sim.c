#include "run/sim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stat/mser.h"
#include "model/gamma.h"
#include "entity/proto.h"
#include "stat/tally.h"
#include "io/trace.h"
#include "base/wallclock.h"
#include "run/world.h"

static int needs_edge_model(const scenario_t *s, int gi)
{
    const tenant_group_t *g = &s->groups[gi];
    return scenario_group_protocol(s, gi)->proto->drafts &&
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

/* c: the cloud or a replica group's view of it (scenario.h). */
static service_t *cloud_service(const cloud_cfg_t *c, err_t *err)
{
    if (c->service) return c->service;
    return service_create_tp(&c->gpu, &c->target, c->precision, c->calibration,
                             c->overhead, c->tensor_parallel > 1 ? c->tensor_parallel : 1,
                             err);
}

/* Replica group k's fixed verify time, where it lives in s (the view's
 * copy would not outlive the call), or NULL. */
static const dist_t *group_verify_time(const scenario_t *s, int k)
{
    if (!s->cloud.rgroups) return s->cloud.has_verify_time ? &s->cloud.verify_time : NULL;
    const replica_group_t *g = &s->cloud.rgroups[k];
    return g->has_verify_time ? &g->verify_time : NULL;
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
    for (int k = 0; sh->cloud_sv && k < sh->ncgroups; k++) {
        cloud_cfg_t v;
        scenario_replica_group_view(sh->s, k, &v);
        service_release(sh->cloud_sv[k], v.service);
    }
    free(sh->cloud_sv);
    free(sh->cgroups);
    memset(sh, 0, sizeof *sh);
}

/* Replica group k as the cloud runs it, *sv its service (or NULL). */
static int cloud_group_build(const scenario_t *s, int k, cloud_group_t *g, service_t **sv,
                             err_t *err)
{
    cloud_cfg_t c;
    scenario_replica_group_view(s, k, &c);
    const dist_t *vt = group_verify_time(s, k);
    *g = (cloud_group_t){.count = c.replicas, .verify_time = vt, .kv_capacity = INFINITY,
                         .order = c.batching.order};
    /* With a fixed verify time the GPU is abstracted away: KV is limited
     * only when a capacity is given explicitly. */
    if (!c.has_verify_time || c.kv_capacity_bytes > 0) {
        *sv = cloud_service(&c, err);
        if (!*sv) return -1;
        g->sv = *sv;
        g->kv_bytes_per_token = service_kv_bytes_per_token(*sv);
        /* The loader refused weights that leave no room for KV. */
        int tp = c.tensor_parallel > 1 ? c.tensor_parallel : 1;
        g->kv_capacity = c.kv_capacity_bytes > 0
                             ? c.kv_capacity_bytes
                             : tp * c.gpu.mem_bytes - service_weight_bytes(*sv);
        /* None left would admit nothing, and the run would idle to its end. */
        if (!(g->kv_capacity > 0))
            return err_set(err, ERR_INPUT, "cloud: no GPU memory left for the KV "
                           "cache (%.6g bytes)", g->kv_capacity);
    }
    g->ref_time = cloud_ref_time(g->sv, vt);
    if (!(g->ref_time > 0) || !isfinite(g->ref_time)) g->ref_time = 1;
    return 0;
}

static int shared_build(const scenario_t *s, repl_shared_t *sh, err_t *err)
{
    memset(sh, 0, sizeof *sh);
    sh->s = s;
    sh->groups = calloc((size_t)s->ngroups, sizeof *sh->groups);
    if (!sh->groups) return err_set(err, ERR_RUNTIME, "simulation: out of memory");
    int first = 0;
    for (int gi = 0; gi < s->ngroups; gi++) {
        const tenant_group_t *g = &s->groups[gi];
        repl_group_t *wg = &sh->groups[gi];
        wg->cfg = g;
        wg->protocol = scenario_group_protocol(s, gi);
        wg->acceptance = scenario_group_acceptance(s, gi);
        wg->first = first;
        first += g->count;
        wg->bytes_per_token = g->network.bytes_per_token;
        wg->overhead_bytes = g->network.overhead_bytes;
        if (needs_edge_model(s, gi)) {
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
    if (!scenario_uses_cloud(s)) return 0;
    int n = scenario_replica_groups(s);
    sh->cgroups = calloc((size_t)n, sizeof *sh->cgroups);
    sh->cloud_sv = calloc((size_t)n, sizeof *sh->cloud_sv);
    if (!sh->cgroups || !sh->cloud_sv)
        return err_set(err, ERR_RUNTIME, "simulation: out of memory");
    sh->ncgroups = n;
    for (int k = 0; k < n; k++)
        if (cloud_group_build(s, k, &sh->cgroups[k], &sh->cloud_sv[k], err) != 0) return -1;
    return 0;
}

/* A new tally for s (tally_create), with each group's protocol and SLO. */
static tally_t *tally_for(const scenario_t *s, int tenant_hists)
{
    int *size = malloc((size_t)s->ngroups * sizeof *size);
    if (!size) return NULL;
    for (int g = 0; g < s->ngroups; g++) size[g] = s->groups[g].count;
    tally_t *tl = tally_create(s->warmup, s->duration, s->ngroups, size, tenant_hists);
    free(size);
    for (int g = 0; tl && g < s->ngroups; g++) {
        const proto_ops_t *p = scenario_group_protocol(s, g)->proto;
        tally_group_cfg_t c = {.has_drafts = p->drafts, .has_verify = p->verifies,
                               .slo_ttft = s->groups[g].slo.ttft,
                               .slo_tpot = s->groups[g].slo.tpot,
                               .edge_power_w = s->groups[g].edge.device.power_w};
        tally_group_setup(tl, g, &c);
    }
    int n = scenario_replica_groups(s);
    tally_cloud_cfg_t *cc = tl ? calloc((size_t)n, sizeof *cc) : NULL;
    for (int k = 0; cc && k < n; k++) {
        cloud_cfg_t cl;
        scenario_replica_group_view(s, k, &cl);
        cc[k] = (tally_cloud_cfg_t){.gpu_power_w = cl.gpu.power_w,
                                    .gpu_idle_power_w = cl.gpu.idle_power_w,
                                    .gpus_per_replica = cl.tensor_parallel > 1
                                                            ? cl.tensor_parallel : 1,
                                    .gpu_hour_usd = cl.gpu_hour_usd,
                                    .replicas = cl.replicas};
    }
    if (tl && (!cc || tally_cloud_setup(tl, cc, n) != 0)) {
        tally_free(tl);
        tl = NULL;
    }
    free(cc);
    return tl;
}

/* Replication r's rows of the per-tenant CSV. */
static int tenant_rows(const scenario_t *s, const tally_t *tl, int r, FILE *f)
{
    for (int i = 0; i < s->ntenants; i++) {
        tally_tenant_row_t row;
        tally_tenant_row(tl, i, &row);
        if (output_tenant_row(f, r, i, s->groups[row.group].name, &row) != 0) return -1;
    }
    return 0;
}

/* The run's totals (events, wall clock) are the fleet's in every group. */
static void summarize_groups(const scenario_t *s, const metrics_rep_t *greps, int R,
                             const metrics_summary_t *fleet, metrics_summary_t *groups)
{
    static const int run_wide[] = {METRIC_EVENTS, METRIC_WALL_S, METRIC_EVENTS_PER_S};
    for (int g = 0; g < s->ngroups; g++) {
        metrics_summarize_group(greps, R, s->ngroups, g, &groups[g]);
        for (size_t k = 0; k < sizeof run_wide / sizeof *run_wide; k++) {
            groups[g].value[run_wide[k]] = fleet->value[run_wide[k]];
            groups[g].ci95[run_wide[k]] = fleet->ci95[run_wide[k]];
        }
    }
}

/* What one replication needs besides the shared state. */
typedef struct rep_ctx {
    const scenario_t *s;
    const sim_options_t *opt;
    repl_shared_t *sh;
    tally_t *tl;
    mser_series_t series;
    int nrep;
    FILE *per_tenant;          /* NULL = not asked */
    metrics_rep_t *greps;      /* [R][ngroups], NULL = not asked */
    double events, wall;
} rep_ctx_t;

/* Runs replication r with the given warm-up into *out; traced when trace. */
static int run_one(rep_ctx_t *c, int r, double warmup, int trace,
                   metrics_rep_t *out, err_t *err)
{
    const scenario_t *s = c->s;
    trace_t tr, *trp = NULL;
    if (trace) {
        int nrep = c->nrep;
        if (trace_init(&tr, c->opt->trace, c->opt->trace_format, s->ntenants, nrep, err))
            return -1;
        trp = &tr;
    }
    tally_reset(c->tl);
    c->tl->warmup = warmup;
    mser_series_reset(&c->series);
    double t0 = wallclock_s();
    world_t *w = world_create(c->sh, r, c->tl, trp, err);
    int rc = 0;
    if (!w || world_run(w)) {
        world_free(w);
        if (trp) trace_fini(trp);
        return -1;
    }
    double ev = (double)world_events(w);
    world_free(w);
    double dt = wallclock_s() - t0;
    c->events += ev;
    c->wall += dt;
    tally_finish(c->tl, c->nrep, ev, dt, out,
                 c->greps ? &c->greps[(size_t)r * s->ngroups] : NULL);
    if (trp) {
        trace_finish(trp, s->duration);
        if (trace_error(trp)) rc = err_set(err, ERR_RUNTIME, "trace: write error");
        trace_fini(trp);
    }
    return rc;
}

/* MSER-5's pick on the replication just run, in seconds. */
static double mser_seconds(const rep_ctx_t *c)
{
    return mser_pick(c->series.x, c->series.n, MSER_BATCH) * c->series.bin_s;
}

static void diag_add(sim_warmup_diag_t *d, int r, double pick, double used, int R)
{
    if (r == 0 || pick > d->pick_max_s) {
        d->pick_max_s = pick;
        d->rep_of_max = r;
    }
    d->pick_mean_s += pick / R;
    d->used_s += used / R;
}

/* Replication r, with `warmup: auto` run twice: once to find MSER-5's pick
 * (the tallies are online, so the warm-up must be known before the run),
 * then again — the same draws, so the same trajectory — deleting it. */
static int run_rep(rep_ctx_t *c, int r, metrics_rep_t *out, sim_warmup_diag_t *d,
                   err_t *err)
{
    const scenario_t *s = c->s;
    int trace = c->opt && c->opt->trace && r == c->opt->trace_rep;
    double used = s->warmup;
    if (run_one(c, r, used, trace && !s->warmup_auto, out, err)) return -1;
    double pick = mser_seconds(c);
    if (s->warmup_auto) {
        used = pick;
        if (run_one(c, r, used, trace, out, err)) return -1;
    }
    diag_add(d, r, pick, used, s->replications);
    if (c->per_tenant && tenant_rows(s, c->tl, r, c->per_tenant) != 0)
        return err_set(err, ERR_RUNTIME, "per-tenant file: write error");
    return 0;
}

static int run_reps(const scenario_t *s, const sim_options_t *opt,
                    metrics_summary_t *out, tally_totals_t *tot, err_t *err)
{
    int R = s->replications, rc = 0;
    if (opt && opt->trace && (opt->trace_rep < 0 || opt->trace_rep >= R))
        return err_set(err, ERR_INPUT, "--trace-rep: %d is not a replication "
                       "(0 .. %d)", opt ? opt->trace_rep : 0, R - 1);
    repl_shared_t sh;
    if (shared_build(s, &sh, err)) {
        shared_fini(&sh);
        return -1;
    }
    FILE *pt = opt ? opt->per_tenant : NULL;
    metrics_summary_t *groups = opt ? opt->groups : NULL;
    rep_ctx_t c = {.s = s, .opt = opt, .sh = &sh, .per_tenant = pt,
                   .nrep = scenario_uses_cloud(s) ? s->cloud.replicas : 0};
    sim_warmup_diag_t diag;
    memset(&diag, 0, sizeof diag);
    metrics_rep_t *reps = calloc((size_t)R, sizeof *reps);
    if (groups) c.greps = calloc((size_t)R * s->ngroups, sizeof *c.greps);
    c.tl = tally_for(s, pt != NULL);
    if (!reps || !c.tl || (groups && !c.greps))
        rc = err_set(err, ERR_RUNTIME, "simulation: out of memory");
    if (rc == 0 && pt && output_tenant_header(pt) != 0)
        rc = err_set(err, ERR_RUNTIME, "per-tenant file: write error");
    if (rc == 0) rc = mser_series_init(&c.series, MSER_BINS, s->duration, err);
    if (rc == 0) c.tl->series = &c.series;
    for (int r = 0; r < R && rc == 0; r++) {
        rc = run_rep(&c, r, &reps[r], &diag, err);
        if (rc == 0 && r == 0 && tot) *tot = c.tl->raw;
        if (rc == 0 && opt && opt->progress) opt->progress(opt->progress_ctx, r + 1, R);
    }
    if (rc == 0) {
        metrics_summarize(reps, R, out);
        out->value[METRIC_EVENTS] = c.events;
        out->value[METRIC_WALL_S] = c.wall;
        out->value[METRIC_EVENTS_PER_S] = c.wall > 0 ? c.events / c.wall : NAN;
        out->ci95[METRIC_EVENTS] = out->ci95[METRIC_WALL_S] = 0;
        out->ci95[METRIC_EVENTS_PER_S] = 0;
        diag.bin_s = c.series.bin_s;
        if (opt && opt->warmup) *opt->warmup = diag;
        if (groups) summarize_groups(s, c.greps, R, out, groups);
    }
    mser_series_fini(&c.series);
    tally_free(c.tl);
    free(reps);
    free(c.greps);
    shared_fini(&sh);
    return rc;
}

/* What the loader refuses and a scenario built in code could still hold,
 * where the run would crash or never end. Cheap: nothing is built. The
 * protocol's part; *lim gets the gamma policy's limit. */
static int sanity_protocol(const protocol_cfg_t *p, int *lim, err_t *err)
{
    if (p->gamma < 1 || p->gamma > GAMMA_MAX)
        return err_set(err, ERR_INPUT, "protocol.gamma: must be in [1, %d], got %d",
                       GAMMA_MAX, p->gamma);
    *lim = p->gamma_policy->limit(p->gamma);
    if (p->proto->verifies && (*lim < 1 || *lim > GAMMA_MAX))
        return err_set(err, ERR_INPUT,
                       "protocol.gamma_policy: '%s' allows gamma up to %d; must be "
                       "within [1, %d]", p->gamma_policy->name, *lim, GAMMA_MAX);
    if (p->window < 1)
        return err_set(err, ERR_INPUT, "protocol.window: must be >= 1, got %d", p->window);
    return 0;
}

/* The cloud's part, for blocks of up to lim drafts. */
static int sanity_cloud(const cloud_cfg_t *c, int verifies, int lim, err_t *err)
{
    if (c->replicas < 1 || c->batching.max_batch < 1 || c->batching.max_tokens < 0)
        return err_set(err, ERR_INPUT, "cloud: replicas and batching.max_batch must "
                       "be >= 1, batching.max_tokens >= 0");
    if (verifies && c->batching.max_tokens > 0 && c->batching.max_tokens < lim + 1)
        return err_set(err, ERR_INPUT,
                       "cloud.batching.max_tokens: %d is below gamma + 1 = %d, so a "
                       "block might never be verified", c->batching.max_tokens, lim + 1);
    if (c->kv_capacity_bytes < 0)
        return err_set(err, ERR_INPUT, "cloud.kv_capacity: must be >= 0");
    /* The cloud numbers its replicas from the groups, the metrics count
     * cloud.replicas: they must agree. */
    long total = 0;
    for (int k = 0; c->rgroups && k < c->nrgroups; k++) {
        if (c->rgroups[k].count < 1)
            return err_set(err, ERR_INPUT, "cloud.replica_groups.%d.count: must be >= 1", k);
        total += c->rgroups[k].count;
    }
    if (c->rgroups && total != c->replicas)
        return err_set(err, ERR_INPUT, "cloud.replicas: %d, but the replica groups "
                       "count %ld", c->replicas, total);
    return 0;
}

static int sanity(const scenario_t *s, err_t *err)
{
    if (s->ngroups < 1 || !s->groups) return err_set(err, ERR_INPUT, "tenants: no tenant groups");
    for (int g = 0; g < s->ngroups; g++)
        if (s->groups[g].count < 1)
            return err_set(err, ERR_INPUT, "tenants.count: must be >= 1, got %d",
                           s->groups[g].count);
    if (s->replications < 1)
        return err_set(err, ERR_INPUT, "replications: must be >= 1, got %d",
                       s->replications);
    if (!(s->duration > 0) || !(s->warmup >= 0) || !(s->warmup < s->duration))
        return err_set(err, ERR_INPUT, "duration: must be > warmup >= 0");
    const proto_ops_t *p = s->protocol.proto;
    int lim = 0;
    if (sanity_protocol(&s->protocol, &lim, err) != 0) return -1;
    return p->uses_cloud ? sanity_cloud(&s->cloud, p->verifies, lim, err) : 0;
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
    /* A registry pointer left NULL (a scenario built in code) means that
     * registry's default, as cloud.batching.policy does. */
    scenario_t d = *s;
    if (!d.protocol.proto) d.protocol.proto = proto_default();
    if (!d.protocol.gamma_policy) d.protocol.gamma_policy = gamma_default();
    int rc = sanity(&d, &e);
    if (rc == 0) rc = run_reps(&d, opt, out, tot, &e);
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
    /* Replica groups: each group's source, "mixed" when they differ. */
    for (int k = 0; k < scenario_replica_groups(s); k++) {
        cloud_cfg_t v;
        scenario_replica_group_view(s, k, &v);
        const char *src = v.has_verify_time
                              ? (v.verify_time.kind == DIST_CONST ? "fixed" : "distribution")
                              : NULL;
        service_t *sv = NULL;
        if (!src) {
            sv = cloud_service(&v, err);
            if (!sv) return -1;
            src = service_source(sv);
        }
        if (k == 0) copy_name(out->cloud, src);
        else if (strcmp(out->cloud, src) != 0) copy_name(out->cloud, "mixed");
        if (sv) service_release(sv, v.service);
    }
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

/* ---- for a run driven by a wall clock (testbed/) ------------------------ */

int sim_shared_init(const scenario_t *s, repl_shared_t *sh, err_t *err)
{
    if (shared_build(s, sh, err) == 0) return 0;
    shared_fini(sh);
    return -1;
}

void sim_shared_fini(repl_shared_t *sh)
{
    shared_fini(sh);
}

tally_t *sim_tally_create(const scenario_t *s)
{
    return tally_for(s, 0);
}
