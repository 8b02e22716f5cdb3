#include "run/sim.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "config/build.h"
#include "stat/mser.h"
#include "model/gamma.h"
#include "entity/proto.h"
#include "stat/tally.h"
#include "io/trace.h"
#include "base/thread.h"
#include "base/wallclock.h"
#include "run/world.h"

/* s's build (sim/config/build.h): the loader's, else one made here for a
 * scenario made in code, in *own (the caller frees it with build_free). */
static const build_t *build_of(const scenario_t *s, build_t **own, err_t *err)
{
    *own = NULL;
    if (s->built) return s->built;
    return *own = build_create(s, NULL, NULL, err);
}

/* Replica group k's fixed verify time, where it lives in s (the view's
 * copy would not outlive the call), or NULL. */
static const dist_t *group_verify_time(const scenario_t *s, int k)
{
    if (!s->cloud.rgroups) return s->cloud.has_verify_time ? &s->cloud.verify_time : NULL;
    const replica_group_t *g = &s->cloud.rgroups[k];
    return g->has_verify_time ? &g->verify_time : NULL;
}

static void shared_fini(repl_shared_t *sh)
{
    free(sh->groups);
    free(sh->cgroups);
    build_free(sh->own);
    memset(sh, 0, sizeof *sh);
}

/* A loaded scenario changed in code so that its build no longer fits it
 * (other group counts, a service model it now needs). */
static int stale(err_t *err)
{
    return err_set(err, ERR_INPUT, "simulation: the scenario does not match what was "
                   "built when it was loaded (changed in code afterwards? call "
                   "scenario_rebuild)");
}

/* Replica group k as the cloud runs it, from its build r. */
static int shared_replica_group(const scenario_t *s, int k, const build_replica_t *r,
                                cloud_group_t *g, err_t *err)
{
    cloud_cfg_t c;
    scenario_replica_group_view(s, k, &c);
    if (!r->sv && (!c.has_verify_time || c.kv_capacity_bytes > 0)) return stale(err);
    const dist_t *vt = group_verify_time(s, k);
    *g = (cloud_group_t){.count = c.replicas, .verify_time = vt, .sv = r->sv,
                         .kv_capacity = r->kv_capacity,
                         .kv_bytes_per_token = r->kv_bytes_per_token,
                         .order = c.batching.order, .noise_cv = s->drift.cloud_cv};
    if (proto_any_cloud_drafts(s)) {
        /* cloud-spec's draft steps (the loader refused a scenario that
         * gives neither) */
        if (c.has_draft_time) g->draft_time = &s->cloud.draft_time;
        else if (r->has_heads) g->dheads = &r->heads;
        else if (!(g->dsv = r->dsv)) return stale(err);
    }
    g->ref_time = cloud_ref_time(g->sv, vt);
    if (!(g->ref_time > 0) || !isfinite(g->ref_time)) g->ref_time = 1;
    return 0;
}

/* The run's view of s and its build: each group's settings and service,
 * each replica group's. Builds nothing but this view (and the build, for a
 * scenario made in code). */
static int shared_build(const scenario_t *s, repl_shared_t *sh, err_t *err)
{
    memset(sh, 0, sizeof *sh);
    sh->s = s;
    const build_t *b = build_of(s, &sh->own, err);
    if (!b) return -1;
    if (b->ngroups != s->ngroups || b->nreplica != scenario_replica_groups(s))
        return stale(err);
    sh->arrivals = b->arrivals;
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
        if (b->link) {
            wg->link_trace = b->link[gi].trace;
            wg->link_opp[0] = b->link[gi].opp[0];
            wg->link_opp[1] = b->link[gi].opp[1];
        }
        if (wg->protocol->proto->drafts &&
            (!g->edge.has_draft_time || !g->edge.has_prefill_time) &&
            !(wg->edge_sv = b->edge[gi]))
            return stale(err);
        if (g->edge.has_draft_time) {
            wg->draft_kind = g->edge.draft_time.kind == DIST_CONST ? 0 : 1;
            wg->draft_const = g->edge.draft_time.a;
        } else {
            wg->draft_kind = 2;
        }
    }
    if (!proto_any_cloud(s)) return 0;
    int n = scenario_replica_groups(s);
    sh->cgroups = calloc((size_t)n, sizeof *sh->cgroups);
    if (!sh->cgroups) return err_set(err, ERR_RUNTIME, "simulation: out of memory");
    sh->ncgroups = n;
    for (int k = 0; k < n; k++)
        if (shared_replica_group(s, k, &b->replica[k], &sh->cgroups[k], err) != 0) return -1;
    return 0;
}

/* A new tally for s (tally_create), with each group's protocol and SLO. */
static tally_t *new_tally(const scenario_t *s, int tenant_hists)
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
                               .edge_power_w = s->groups[g].edge.device.power_w,
                               .edge_idle_power_w = s->groups[g].edge.device.idle_power_w,
                               .battery_wh = s->groups[g].edge.device.battery_wh};
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

/* ---- replications ---------------------------------------------------------
 *
 * Replication r draws only from its own streams (seed, r), so it gives the
 * same values on any thread and in any order. With opt->jobs > 1 the
 * replications run on that many threads (at most R): each thread has its own
 * tally and warm-up series and takes the next replication not yet taken;
 * the calling thread waits for them in replication order and does, in that
 * order, what the sequential loop does after each one: it writes the
 * per-tenant rows and reports progress. The summary folds the per-
 * replication values in replication order after the last one, so the
 * floating-point sums, and so the bytes of every output, are those of one
 * thread. */

/* What one thread needs besides the shared state to run a replication. */
typedef struct rep_worker {
    tally_t *tl;
    mser_series_t series;
} rep_worker_t;

/* What replication r leaves for the summary and the calling thread. */
typedef struct rep_result {
    double events, wall;  /* engine events; wall-clock seconds of its run */
    double setup;         /* the part of wall spent building its world */
    double pick, used;    /* MSER-5's pick and the warm-up deleted (s) */
    char *rows;           /* its per-tenant rows, waiting for their turn */
    size_t nrows;
    int done, rc;         /* done: guarded by run_ctx_t.mu */
} rep_result_t;

/* ---- runs that stop at a stated precision -----------------------------
 *
 * Law and Kelton's sequential procedure for a relative precision γ
 * (Simulation Modeling and Analysis, 3rd ed., §9.4.1): after a first round
 * of n0 replications, replications are taken one at a time, in order, and
 * the run stops at the first n at which, for every named metric,
 *     δ(n) / |X̄(n)| <= γ' = γ / (1 + γ),
 * δ(n) the half-width of the t interval at the stated confidence. The
 * adjusted γ' is what makes the event |X̄(n) − μ| / |μ| <= γ hold with about
 * the stated probability, despite the stop depending on the data: stopping
 * at a fixed-width rule is valid as γ → 0 (Chow and Robbins, 1965), and a
 * first round of at least PRECISION_N0 replications, each metric judged on
 * at least that many values, keeps an early, lucky stop rare (below 10,
 * coverage falls to about 92% for a 95% target).
 * tests/unit/test_precision.c measures the coverage on a closed form.
 *
 * The rule is checked after every replication in replication order, so the
 * stopping count, and every result, is the same at any thread count; with
 * threads, a round runs ahead and what it ran past the stop is dropped. */

#define PRECISION_N0 10

/* The first round with precision: replications, at least PRECISION_N0,
 * at most the cap. */
static int precision_first(const precision_cfg_t *p, int replications)
{
    int n0 = replications > PRECISION_N0 ? replications : PRECISION_N0;
    return n0 < p->max_replications ? n0 : p->max_replications;
}

/* γ' = γ / (1 + γ): the half-width over |mean| that meets γ. */
static double precision_target(const precision_cfg_t *p)
{
    return p->relative / (1 + p->relative);
}

typedef struct precision_acc {
    int k;                     /* replications with a value */
    double mean, m2;           /* Welford's running moments */
} precision_acc_t;

static void acc_add(precision_acc_t *a, double x)
{
    if (isnan(x)) return;
    a->k++;
    double d = x - a->mean;
    a->mean += d / a->k;
    a->m2 += d * (x - a->mean);
}

/* The interval's half-width over |mean| at confidence conf: 0 when the
 * values agree (a constant, 0 included: nothing left to narrow); INFINITY
 * while it cannot be judged (fewer than two values, a mean of 0 with a
 * spread). */
static double acc_rel_halfwidth(const precision_acc_t *a, double conf)
{
    if (a->k < 2) return INFINITY;
    double sd = sqrt(a->m2 / (a->k - 1));
    if (sd <= 1e-12 * fabs(a->mean)) return 0.0;   /* as metrics.c: rounding */
    if (!(fabs(a->mean) > 0)) return INFINITY;
    return metrics_halfwidth(sd, a->k, 1 - (1 - conf) / 2) / fabs(a->mean);
}

/* The interval's half-width at confidence conf (INFINITY under two
 * values). */
static double acc_halfwidth(const precision_acc_t *a, double conf)
{
    if (a->k < 2) return INFINITY;
    return metrics_halfwidth(sqrt(a->m2 / (a->k - 1)), a->k, 1 - (1 - conf) / 2);
}

/* How far bound b is from settled: the 95% half-width (the interval a
 * constraint is judged by, whatever precision.confidence says) over what
 * it must come down to (the distance from the mean to the bound, or the
 * target's share of |bound| when nearer); <1 when settled. A metric with
 * under two values cannot be judged against the bound and is left to the
 * caller (optimize calls that constraint unjudged): 0. */
static double bound_need(const precision_cfg_t *p, const precision_acc_t *a, double b)
{
    if (a->k < 2) return 0;
    double d = acc_halfwidth(a, 0.95);
    if (d <= 1e-12 * fabs(a->mean)) return 0;   /* values that agree */
    double gap = fabs(a->mean - b), floor = precision_target(p) * fabs(b);
    if (d < gap) return 0;                     /* the interval excludes b */
    return floor > 0 ? d / floor : INFINITY;   /* settled at d <= floor */
}

/* Every metric judged on at least n0 values and within the target. */
static int precision_met(const precision_cfg_t *p, const precision_acc_t *acc, int n0)
{
    for (int i = 0; i < p->nmetrics; i++)
        if (acc[i].k < n0 || !(acc_rel_halfwidth(&acc[i], p->confidence) <=
                               precision_target(p)))
            return 0;
    return 1;
}

/* A run's replications: their inputs, their results and, with threads,
 * the queue they are taken from. */
typedef struct run_ctx {
    const scenario_t *s;
    const sim_options_t *opt;
    const repl_shared_t *sh;
    int nrep;                  /* cloud replicas, for the metrics */
    int lo, R;                 /* this round's replications: [lo, R) */
    /* precision: (s->precision.relative > 0): the running moments of its
     * metrics over the replications taken in order, and the first count
     * that met the targets (0: not yet). */
    precision_acc_t *acc;
    const sim_bound_t *bounds; /* opt's, with their running moments */
    precision_acc_t *bacc;
    int nbounds;
    int met_at;
    int tenant_hists;          /* per-tenant rows asked for */
    metrics_rep_t *reps;       /* [R] */
    metrics_rep_t *greps;      /* [R][ngroups], NULL = not asked */
    rep_result_t *res;         /* [R] */
    tally_totals_t *tot;       /* replication 0's raw totals, or NULL */

    /* With threads; all guarded by mu. Locking, waiting and broadcasting
     * on an initialised default mutex and condition fail only for misuse
     * (POSIX), so those calls are not checked; their set-up is. */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int next_claim;            /* the next replication to take */
    int next_write;            /* the first one the calling thread has not
                                  taken in yet */
    int window;                /* a thread takes r only below next_write +
                                  window: bounds the rows held */
    int stop;                  /* a replication failed, or the caller quits */
    int failed;                /* the first replication that failed (R: none) */
    err_t err;                 /* its error */
} run_ctx_t;

static int worker_init(const run_ctx_t *c, rep_worker_t *w, err_t *err)
{
    memset(w, 0, sizeof *w);
    if (!(w->tl = new_tally(c->s, c->tenant_hists)))
        return err_set(err, ERR_RUNTIME, "simulation: out of memory");
    if (mser_series_init(&w->series, MSER_BINS, c->s->duration, err) != 0) return -1;
    w->tl->series = &w->series;
    return 0;
}

static void worker_fini(rep_worker_t *w)
{
    mser_series_fini(&w->series);
    tally_free(w->tl);
    memset(w, 0, sizeof *w);
}

/* Runs replication r with the given warm-up into *out; traced when trace. */
static int run_one(const run_ctx_t *c, rep_worker_t *w, int r, double warmup, int trace,
                   metrics_rep_t *out, err_t *err)
{
    const scenario_t *s = c->s;
    trace_t tr, *trp = NULL;
    if (trace) {
        if (trace_init(&tr, c->opt->trace, c->opt->trace_format, s->ntenants, c->nrep, err))
            return -1;
        trp = &tr;
    }
    tally_reset(w->tl);
    w->tl->warmup = warmup;
    mser_series_reset(&w->series);
    double t0 = wallclock_s();
    world_t *wd = world_create(c->sh, r, w->tl, trp, err);
    c->res[r].setup += wallclock_s() - t0;
    int rc = 0;
    if (!wd || world_run(wd)) {
        world_free(wd);
        if (trp) trace_fini(trp);
        return -1;
    }
    double ev = (double)world_events(wd);
    world_free(wd);
    double dt = wallclock_s() - t0;
    /* Both runs of `warmup: auto` count, as the engine ran both. */
    c->res[r].events += ev;
    c->res[r].wall += dt;
    tally_finish(w->tl, c->nrep, ev, dt, out,
                 c->greps ? &c->greps[(size_t)r * s->ngroups] : NULL);
    if (trp) {
        trace_finish(trp, s->duration);
        if (trace_error(trp)) rc = err_set(err, ERR_RUNTIME, "trace: write error");
        trace_fini(trp);
    }
    return rc;
}

/* MSER-5's pick on the replication just run, in seconds. */
static double warmup_cut_s(const rep_worker_t *w)
{
    return mser_pick(w->series.x, w->series.n, MSER_BATCH) * w->series.bin_s;
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

/* Replication r, with `warmup: auto` run twice: once to find MSER-5's pick
 * (the tallies are online, so the warm-up must be known before the run),
 * then again — the same draws, so the same trajectory — deleting it. Its
 * per-tenant rows go to rows (when asked for). */
static int run_rep(const run_ctx_t *c, rep_worker_t *w, int r, FILE *rows, err_t *err)
{
    const scenario_t *s = c->s;
    metrics_rep_t *out = &c->reps[r];
    int trace = c->opt && c->opt->trace && r == c->opt->trace_rep;
    double used = s->warmup;
    if (run_one(c, w, r, used, trace && !s->warmup_auto, out, err)) return -1;
    double pick = warmup_cut_s(w);
    if (s->warmup_auto) {
        used = pick;
        if (run_one(c, w, r, used, trace, out, err)) return -1;
    }
    c->res[r].pick = pick;
    c->res[r].used = used;
    if (r == 0 && c->tot) *c->tot = w->tl->raw;
    if (rows && tenant_rows(s, w->tl, r, rows) != 0)
        return err_set(err, ERR_RUNTIME, "per-tenant file: write error");
    return 0;
}

/* The bounds not yet settled. */
static int bounds_unsettled(const run_ctx_t *c)
{
    int n = 0;
    for (int j = 0; j < c->nbounds; j++)
        n += bound_need(&c->s->precision, &c->bacc[j], c->bounds[j].bound) >= 1;
    return n;
}

/* Replication r taken in order: 1 when it is the one at which the run
 * meets its precision targets (never before the first round ends), -1
 * with err when the first round leaves a metric that cannot be judged
 * (under two values: NaN in nearly every replication), which would run to
 * the cap for nothing; else 0. */
static int precision_stop(run_ctx_t *c, int r, err_t *err)
{
    const precision_cfg_t *p = &c->s->precision;
    if (!c->acc) return 0;
    for (int i = 0; i < p->nmetrics; i++) acc_add(&c->acc[i], c->reps[r].v[p->metrics[i]]);
    for (int j = 0; j < c->nbounds; j++)
        acc_add(&c->bacc[j], c->reps[r].v[c->bounds[j].metric]);
    int n0 = precision_first(p, c->s->replications);
    if (r + 1 < n0) return 0;
    for (int i = 0; r + 1 == n0 && i < p->nmetrics; i++)
        if (c->acc[i].k < 2)
            return err_set(err, ERR_INPUT, "precision.metrics: %s has a value in %d of "
                           "the first %d replications (NaN otherwise: an SLO metric "
                           "without slo:, a cloud metric without a cloud, ...): it "
                           "cannot be judged", metric_name(p->metrics[i]),
                           c->acc[i].k, n0);
    if (!precision_met(p, c->acc, n0) || bounds_unsettled(c) > 0) return 0;
    c->met_at = r + 1;
    return 1;
}

/* After replication r taken in order: reports progress (a met target ends
 * the count there) and applies the rule. 1 to stop, -1 with err, else 0. */
static int taken(run_ctx_t *c, int r, err_t *err)
{
    int stop = precision_stop(c, r, err);
    if (stop >= 0 && c->opt && c->opt->progress)
        c->opt->progress(c->opt->progress_ctx, r + 1, stop ? r + 1 : c->R);
    return stop;
}

/* What the run's precision came to (sim_precision_t, sim.h). */
static void precision_report(const run_ctx_t *c, sim_precision_t *out)
{
    const precision_cfg_t *p = &c->s->precision;
    memset(out, 0, sizeof *out);
    out->replications = c->R;
    out->met = c->met_at > 0;
    out->bounds = c->acc ? c->nbounds : 0;
    out->settled = out->bounds - (c->acc ? bounds_unsettled(c) : 0);
    for (int i = 0; c->acc && i < p->nmetrics; i++)
        out->relative[i] = acc_rel_halfwidth(&c->acc[i], p->confidence);
}

void sim_precision_text(const scenario_t *s, const sim_precision_t *p, char *buf, size_t n)
{
    const precision_cfg_t *c = &s->precision;
    size_t at = 0;
    at += (size_t)snprintf(buf, n, "%s %d replications (target ±%.3g%% at %.3g%%):",
                           p->met ? "met after" : "NOT met at the cap of", p->replications,
                           100 * c->relative, 100 * c->confidence);
    for (int i = 0; i < c->nmetrics && at < n; i++)
        at += (size_t)(isfinite(p->relative[i])
                           ? snprintf(buf + at, n - at, "%s %s ±%.3g%%", i ? "," : "",
                                      metric_name(c->metrics[i]), 100 * p->relative[i])
                           : snprintf(buf + at, n - at, "%s %s not judged (a mean of 0 "
                                      "with a spread)", i ? "," : "",
                                      metric_name(c->metrics[i])));
    if (p->bounds > 0 && at < n)
        snprintf(buf + at, n - at, "; %d of %d constraint bounds settled", p->settled,
                 p->bounds);
}

/* This round's replications in the calling thread, in order. */
static int reps_in_order(run_ctx_t *c, err_t *err)
{
    rep_worker_t w;
    int rc = worker_init(c, &w, err);
    FILE *pt = c->opt ? c->opt->per_tenant : NULL;
    for (int r = c->lo; r < c->R && rc == 0; r++) {
        rc = run_rep(c, &w, r, pt, err);
        int stop = rc == 0 ? taken(c, r, err) : 0;
        if (stop < 0) rc = -1;
        if (stop) break;
    }
    worker_fini(&w);
    return rc;
}

/* Replication r on a worker thread: its per-tenant rows are kept in memory
 * (res[r].rows) until the calling thread writes them in their turn. */
static int rep_threaded(run_ctx_t *c, rep_worker_t *w, int r, err_t *err)
{
    rep_result_t *res = &c->res[r];
    FILE *rows = NULL;
    if (c->tenant_hists && !(rows = open_memstream(&res->rows, &res->nrows)))
        return err_set(err, ERR_RUNTIME, "simulation: out of memory");
    int rc = run_rep(c, w, r, rows, err);
    if (rows && fclose(rows) != 0 && rc == 0)
        rc = err_set(err, ERR_RUNTIME, "simulation: out of memory");
    return rc;
}

static void *rep_thread(void *arg)
{
    run_ctx_t *c = arg;
    err_t err = {0, {0}};
    rep_worker_t w;
    int rc = worker_init(c, &w, &err);
    if (rc != 0) {
        /* No tally or series (out of memory): this thread runs nothing,
         * and the run stops. Its message stands unless a replication
         * fails (the calling thread reports that one when it comes to it). */
        pthread_mutex_lock(&c->mu);
        if (c->failed == c->R) c->err = err;
        c->stop = 1;
        pthread_cond_broadcast(&c->cv);
        pthread_mutex_unlock(&c->mu);
        worker_fini(&w);
        return NULL;
    }
    for (;;) {
        int r = -1;
        pthread_mutex_lock(&c->mu);
        while (!c->stop && c->next_claim < c->R && c->next_claim >= c->next_write + c->window)
            pthread_cond_wait(&c->cv, &c->mu);
        if (!c->stop && c->next_claim < c->R) r = c->next_claim++;
        pthread_mutex_unlock(&c->mu);
        if (r < 0) break;
        /* res[r] and reps[r] are this thread's alone until done is set: the
         * calling thread reads them only after. */
        rc = rep_threaded(c, &w, r, &err);
        pthread_mutex_lock(&c->mu);
        c->res[r].done = 1;
        c->res[r].rc = rc;
        /* The first failure in replication order is the one reported, as
         * the sequential loop would: any replication before r was taken
         * before it and runs to its end. */
        if (rc != 0 && r < c->failed) {
            c->failed = r;
            c->err = err;
        }
        if (rc != 0) c->stop = 1;
        pthread_cond_broadcast(&c->cv);
        pthread_mutex_unlock(&c->mu);
        if (rc != 0) break;
    }
    worker_fini(&w);
    return NULL;
}

/* The calling thread's part: takes the replications in order as they end,
 * writes their rows and reports progress. 0, or -1 with err. */
static int take_in_order(run_ctx_t *c, err_t *err)
{
    FILE *pt = c->opt ? c->opt->per_tenant : NULL;
    for (int r = c->lo; r < c->R; r++) {
        pthread_mutex_lock(&c->mu);
        /* A replication taken always ends; one not taken once the run
         * stops never starts. */
        while (!c->res[r].done && !(c->stop && r >= c->next_claim))
            pthread_cond_wait(&c->cv, &c->mu);
        if (!c->res[r].done || c->res[r].rc != 0) {
            /* r failed: every one before it succeeded, so it is the first
             * to fail, and c->err is its error. Or r was never taken: the
             * run stopped for a thread that could not set up, whose error
             * c->err holds (any failed replication is before r). */
            *err = c->err;
            pthread_mutex_unlock(&c->mu);
            return -1;
        }
        pthread_mutex_unlock(&c->mu);
        rep_result_t *res = &c->res[r];
        int wrc = 0;
        if (pt && res->nrows && fwrite(res->rows, 1, res->nrows, pt) != res->nrows)
            wrc = err_set(err, ERR_RUNTIME, "per-tenant file: write error");
        free(res->rows);
        res->rows = NULL;
        if (wrc) return -1;
        /* Met: the threads end the replications they hold (reps_threaded
         * stops them), and those are dropped. */
        int stop = taken(c, r, err);
        if (stop < 0) return -1;
        if (stop) break;
        pthread_mutex_lock(&c->mu);
        c->next_write = r + 1;
        pthread_cond_broadcast(&c->cv);
        pthread_mutex_unlock(&c->mu);
    }
    return 0;
}

/* The replications on jobs threads (2 <= jobs <= R). *wall gets the
 * elapsed time from the first start to the last end: they overlap. */
static int reps_threaded(run_ctx_t *c, int jobs, double *wall, err_t *err)
{
    pthread_t *th = calloc((size_t)jobs, sizeof *th);
    if (!th) return err_set(err, ERR_RUNTIME, "simulation: out of memory");
    int e = pthread_mutex_init(&c->mu, NULL);
    if (e) {
        free(th);
        return err_set(err, ERR_RUNTIME, "simulation: pthread_mutex_init: %s", strerror(e));
    }
    if ((e = pthread_cond_init(&c->cv, NULL)) != 0) {
        pthread_mutex_destroy(&c->mu);
        free(th);
        return err_set(err, ERR_RUNTIME, "simulation: pthread_cond_init: %s", strerror(e));
    }
    /* Each thread may run ahead of the one the calling thread waits for by
     * two replications: enough to keep busy when one is slow, few enough
     * that the per-tenant rows held stay a handful of replications'. */
    c->window = 2 * jobs;
    c->failed = c->R;
    c->stop = 0;
    c->next_claim = c->next_write = c->lo;
    double t0 = wallclock_s();
    int started = 0, rc = 0;
    /* thread_create: with outfile's signals blocked, so that they reach
     * the thread that commits the outputs (base/thread.h). */
    for (; started < jobs; started++) {
        if ((e = thread_create(&th[started], rep_thread, c)) != 0) {
            rc = err_set(err, ERR_RUNTIME, "simulation: pthread_create: %s", strerror(e));
            break;
        }
    }
    /* With no thread started nothing would ever be done. */
    if (rc == 0) rc = take_in_order(c, err);
    pthread_mutex_lock(&c->mu);
    c->stop = 1;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
    for (int t = 0; t < started; t++) {
        e = pthread_join(th[t], NULL);
        if (e && rc == 0) rc = err_set(err, ERR_RUNTIME, "simulation: pthread_join: %s",
                                       strerror(e));
    }
    *wall = wallclock_s() - t0;
    for (int r = c->lo; r < c->R; r++) {
        free(c->res[r].rows);
        c->res[r].rows = NULL;
    }
    pthread_cond_destroy(&c->cv);
    pthread_mutex_destroy(&c->mu);
    free(th);
    return rc;
}

/* Grows the per-replication arrays to n replications, the new ones zeroed. */
static int grow_reps(run_ctx_t *c, int from, int n, err_t *err)
{
    size_t ng = c->greps ? (size_t)c->s->ngroups : 0;
    metrics_rep_t *reps = realloc(c->reps, (size_t)n * sizeof *reps);
    if (reps) c->reps = reps;
    rep_result_t *res = reps ? realloc(c->res, (size_t)n * sizeof *res) : NULL;
    if (res) c->res = res;
    metrics_rep_t *greps = res && ng ? realloc(c->greps, (size_t)n * ng * sizeof *greps) : NULL;
    if (greps) c->greps = greps;
    if (!reps || !res || (ng && !greps))
        return err_set(err, ERR_RUNTIME, "simulation: out of memory");
    memset(c->reps + from, 0, (size_t)(n - from) * sizeof *c->reps);
    memset(c->res + from, 0, (size_t)(n - from) * sizeof *c->res);
    if (ng) memset(c->greps + from * ng, 0, (size_t)(n - from) * ng * sizeof *c->greps);
    return 0;
}

/* How far the next round goes after n replications fell short: to where
 * the widest interval would meet its target if its spread held (half-width
 * ~ 1/sqrt(n)), at least one replication per thread, at most twice as far,
 * never past the cap. Only how much is run ahead depends on it (and on
 * jobs), not where the run stops. */
static int next_round(const run_ctx_t *c, int n, int jobs)
{
    const precision_cfg_t *p = &c->s->precision;
    double worst = 0, target = precision_target(p);
    for (int i = 0; i < p->nmetrics; i++)
        worst = fmax(worst, acc_rel_halfwidth(&c->acc[i], p->confidence) / target);
    for (int j = 0; j < c->nbounds; j++)
        worst = fmax(worst, bound_need(p, &c->bacc[j], c->bounds[j].bound));
    double want = isfinite(worst) ? ceil(n * worst * worst) : 2.0 * n;
    double hi = fmin(fmax(want, n + jobs), 2.0 * n + jobs);
    return (int)fmin(hi, p->max_replications);
}

/* The replications, in rounds: one round of s->replications, or with
 * precision: rounds until the targets are met or the cap is reached. On
 * return c->R is the count the summary takes. */
static int run_rounds(run_ctx_t *c, int jobs_asked, double *wall, err_t *err)
{
    const scenario_t *s = c->s;
    int rc = 0;
    *wall = 0;
    for (;;) {
        int n = c->R - c->lo;
        int jobs = jobs_asked > 1 ? (jobs_asked < n ? jobs_asked : n) : 1;
        double w = 0;
        rc = jobs > 1 ? reps_threaded(c, jobs, &w, err) : reps_in_order(c, err);
        /* One thread: the replications' own times, as before threads.
         * Several: they overlap, and the elapsed time is the round's. */
        for (int r = c->lo; jobs == 1 && r < c->R; r++) w += c->res[r].wall;
        *wall += w;
        if (rc != 0 || !c->acc) return rc;
        if (c->met_at || c->R >= s->precision.max_replications) break;
        int hi = next_round(c, c->R, jobs_asked > 1 ? jobs_asked : 1);
        if (grow_reps(c, c->R, hi, err) != 0) return -1;
        c->lo = c->R;
        c->R = hi;
    }
    if (c->met_at) c->R = c->met_at;
    return 0;
}

int sim_first_round(const scenario_t *s)
{
    return s->precision.relative > 0 ? precision_first(&s->precision, s->replications)
                                     : s->replications;
}

static int run_reps(const scenario_t *s, const sim_options_t *opt,
                    metrics_summary_t *out, tally_totals_t *tot, err_t *err)
{
    int R = sim_first_round(s);
    int rc = 0;
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
    precision_acc_t acc[PRECISION_METRICS_MAX] = {{0, 0, 0}};
    run_ctx_t c = {.s = s, .opt = opt, .sh = &sh, .R = R, .tenant_hists = pt != NULL,
                   .tot = tot, .nrep = proto_any_cloud(s) ? s->cloud.replicas : 0,
                   .acc = s->precision.relative > 0 ? acc : NULL};
    if (c.acc && opt && opt->nbounds > 0) {
        c.bounds = opt->bounds;
        c.nbounds = opt->nbounds;
        c.bacc = calloc((size_t)c.nbounds, sizeof *c.bacc);
        if (!c.bacc) rc = err_set(err, ERR_RUNTIME, "simulation: out of memory");
    }
    c.reps = calloc((size_t)R, sizeof *c.reps);
    c.res = calloc((size_t)R, sizeof *c.res);
    if (groups) c.greps = calloc((size_t)R * s->ngroups, sizeof *c.greps);
    if (!c.reps || !c.res || (groups && !c.greps))
        rc = err_set(err, ERR_RUNTIME, "simulation: out of memory");
    if (rc == 0 && pt && output_tenant_header(pt) != 0)
        rc = err_set(err, ERR_RUNTIME, "per-tenant file: write error");
    int jobs = opt && opt->jobs > 1 ? opt->jobs : 1;
    double wall = 0;
    if (rc == 0) rc = run_rounds(&c, jobs, &wall, err);
    if (rc == 0) {
        R = c.R;
        sim_warmup_diag_t diag;
        memset(&diag, 0, sizeof diag);
        double events = 0, setup = 0, rep_wall = 0;
        for (int r = 0; r < R; r++) {
            events += c.res[r].events;
            setup += c.res[r].setup;
            rep_wall += c.res[r].wall;
            diag_add(&diag, r, c.res[r].pick, c.res[r].used, R);
        }
        metrics_summarize(c.reps, R, out);
        out->value[METRIC_EVENTS] = events;
        out->value[METRIC_WALL_S] = wall;
        out->value[METRIC_EVENTS_PER_S] = wall > 0 ? events / wall : NAN;
        out->ci95[METRIC_EVENTS] = out->ci95[METRIC_WALL_S] = 0;
        out->ci95[METRIC_EVENTS_PER_S] = 0;
        diag.bin_s = s->duration / MSER_BINS;   /* mser_series_init's bins */
        if (opt && opt->warmup) *opt->warmup = diag;
        if (groups) summarize_groups(s, c.greps, R, out, groups);
        if (opt && opt->rep_values)
            memcpy(opt->rep_values, c.reps, (size_t)R * sizeof *c.reps);
        if (opt && opt->precision) precision_report(&c, opt->precision);
        /* Set-up's share of the replications' own time, applied to wall_s:
         * with threads they overlap, and their summed set-up could exceed
         * the elapsed wall_s. */
        if (opt && opt->setup_s) *opt->setup_s = rep_wall > 0 ? wall * setup / rep_wall : 0;
    }
    free(c.reps);
    free(c.res);
    free(c.greps);
    free(c.bacc);
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

/* precision: as the loader leaves it: a target the rule can judge. */
static int sanity_precision(const scenario_t *s, err_t *err)
{
    const precision_cfg_t *p = &s->precision;
    if (!(p->relative > 0)) return 0;
    if (!(p->relative < 1) || !(p->confidence > 0 && p->confidence < 1))
        return err_set(err, ERR_INPUT, "precision: relative and confidence must be in "
                       "(0, 1), got %g and %g", p->relative, p->confidence);
    if (p->nmetrics < 1 || p->nmetrics > PRECISION_METRICS_MAX)
        return err_set(err, ERR_INPUT, "precision.metrics: 1 to %d metrics, got %d",
                       PRECISION_METRICS_MAX, p->nmetrics);
    for (int i = 0; i < p->nmetrics; i++)
        if (p->metrics[i] < 0 || p->metrics[i] >= METRIC_COUNT ||
            metric_is_timing(p->metrics[i]))
            return err_set(err, ERR_INPUT, "precision.metrics: %d is not a metric a stop "
                           "may depend on", p->metrics[i]);
    if (s->replications < 2 || p->max_replications < s->replications)
        return err_set(err, ERR_INPUT, "precision: needs 2 <= replications (%d) <= "
                       "max_replications (%d)", s->replications, p->max_replications);
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
    if (sanity_precision(s, err) != 0) return -1;
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

/* Group g's draft source from build b. */
static const char *edge_source(const scenario_t *s, const build_t *b, int g)
{
    const edge_cfg_t *e = &s->groups[g].edge;
    if (e->has_draft_time)
        return e->draft_time.kind == DIST_CONST ? "fixed" : "distribution";
    /* A literal inside service.c, so it outlives the build. */
    return service_draft_source(b->edge[g]);
}

const char *sim_edge_source(const scenario_t *s, int g, err_t *err)
{
    build_t *own;
    const build_t *b = build_of(s, &own, err);
    const char *src = b ? edge_source(s, b, g) : NULL;
    build_free(own);
    return src;
}

/* Every group's source counts: one group's would misreport the rest. */
static int sources_of_edge(const scenario_t *s, const build_t *b, output_sources_t *out,
                           err_t *err)
{
    out->edge_group = calloc((size_t)s->ngroups, sizeof *out->edge_group);
    if (!out->edge_group) return err_set(err, ERR_RUNTIME, "out of memory");
    out->ngroups = s->ngroups;
    for (int g = 0; g < s->ngroups; g++) {
        const char *src = edge_source(s, b, g);
        out->edge_group[g] = src;
        if (g == 0) copy_name(out->edge, src);
        else if (strcmp(out->edge, src) != 0) copy_name(out->edge, "mixed");
    }
    return 0;
}

static void source_of_cloud(const scenario_t *s, const build_t *b, output_sources_t *out)
{
    /* Replica groups: each group's source, "mixed" when they differ. */
    for (int k = 0; k < scenario_replica_groups(s); k++) {
        cloud_cfg_t v;
        scenario_replica_group_view(s, k, &v);
        const char *src = v.has_verify_time
                              ? (v.verify_time.kind == DIST_CONST ? "fixed" : "distribution")
                              : NULL;
        if (!src) src = service_source(b->replica[k].sv);
        if (k == 0) copy_name(out->cloud, src);
        else if (strcmp(out->cloud, src) != 0) copy_name(out->cloud, "mixed");
    }
}

int sim_service_sources(const scenario_t *s, output_sources_t *out, err_t *err)
{
    memset(out, 0, sizeof *out);
    if (s->ngroups < 1) return err_set(err, ERR_INPUT, "no tenant groups");
    build_t *own;
    const build_t *b = build_of(s, &own, err);
    int rc = b ? sources_of_edge(s, b, out, err) : -1;
    if (rc == 0) source_of_cloud(s, b, out);
    build_free(own);
    if (rc != 0) output_sources_fini(out);
    return rc;
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
    return new_tally(s, 0);
}
