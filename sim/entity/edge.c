#include "entity/edge.h"

#include <math.h>
#include <stdlib.h>

#include "entity/msg.h"
#include "model/drift.h"
#include "model/thermal.h"
#include "stat/mser.h"

static const repl_group_t *grp(const repl_t *r, const edge_tenant_t *T)
{
    return &r->sh->groups[T->group];
}

static const tenant_group_t *cfg(const repl_t *r, const edge_tenant_t *T)
{
    return grp(r, T)->cfg;
}

/* ---- set-up ----------------------------------------------------------- */

/* The edge runs the tenant's speculation-length policy: its protocol
 * verifies drafts it makes itself (cloud-spec's policy runs on the cloud,
 * sim/entity/ctenant.h). */
static int runs_policy(const proto_ops_t *p)
{
    return p->verifies && !p->cloud_drafts;
}

int edge_cum_size(const repl_t *r, int i)
{
    const protocol_cfg_t *p = repl_protocol(r, i);
    if (!p->proto->drafts) return 0;
    return p->proto->verifies ? p->gamma_policy->limit(p->gamma) : 1;
}

/* A copy of tenant T's uplink (its index set: T->group). */
static int link_copy(repl_t *r, edge_tenant_t *T, network_link_t *l, err_t *err)
{
    const network_cfg_t *net = &cfg(r, T)->network;
    int i = edge_index(r, T);
    return network_link_init(l, net->rtt, net->uplink_bps, &net->jitter, r->s->seed,
                             r->rep, (uint64_t)i, RNG_UPLINK, err) ||
                   repl_link_vary(grp(r, T), r->s->seed, r->rep, i, 0, l, err)
               ? -1
               : 0;
}

/* The tenant's drift stream is needed for a start offset (closed loops
 * only: Poisson and trace arrivals are unrelated across tenants already) or
 * for the noise of the steps it runs on its device. */
static int drift_start_used(const scenario_t *s, const tenant_group_t *G)
{
    return s->drift.start > 0 && G->workload.arrival == ARRIVAL_CLOSED;
}

static int drift_used(const scenario_t *s, const tenant_group_t *G, const proto_ops_t *p)
{
    return drift_start_used(s, G) || (s->drift.edge_cv > 0 && p->drafts);
}

/* The factor of the tenant's next step on its device (drift.h); 1 without
 * drift. */
static double edge_drift(const repl_t *r, const edge_tenant_t *T)
{
    return T->drift_rng ? drift_factor(T->drift_rng, r->s->drift.edge_cv) : 1;
}

int edge_tenant_init(repl_t *r, int i, double *cum, err_t *err)
{
    edge_tenant_t *T = &r->et[i];
    const scenario_t *s = r->s;
    T->group = repl_group_of(r, i);
    const tenant_group_t *G = cfg(r, T);
    const protocol_cfg_t *pc = grp(r, T)->protocol;
    const proto_ops_t *p = pc->proto;
    uint64_t seed = s->seed;
    T->proto = p;
    T->gpol = pc->gamma_policy;
    T->window = pc->window;
    T->stall_since = -1;
    T->cum = cum;
    T->keep_sent = T->gpol->on_verdict != NULL;
    if (workload_init(&T->wl, &G->workload, r->sh->arrivals, seed, r->rep, i, err)) return -1;
    if (p->uses_cloud) {
        const network_cfg_t *net = &G->network;
        if (network_link_init(&T->up, net->rtt, net->uplink_bps, &net->jitter, seed,
                              r->rep, (uint64_t)i, RNG_UPLINK, err) ||
            repl_link_vary(grp(r, T), seed, r->rep, i, 0, &T->up, err))
            return -1;
        /* Copies of the uplink: their processes draw from the same streams
         * as the link's, so they follow its course without touching it. */
        int fb = pc->fallback.mode == FALLBACK_LOCAL, obs = network_cfg_varies(net);
        if ((fb || obs) && !(T->watch = calloc(1, sizeof *T->watch)))
            return err_set(err, ERR_RUNTIME, "edge: out of memory");
        if (fb) {
            T->fb = &pc->fallback;
            T->keep_sent |= T->fb->rtt_above > 0;
            if (link_copy(r, T, &T->watch->probe, err)) return -1;
        }
        if (obs) {
            if (link_copy(r, T, &T->watch->obs_stall, err) ||
                link_copy(r, T, &T->watch->obs_gap, err))
                return -1;
            T->has_obs = 1;
        }
    }
    gamma_env_t genv = {
        .alpha_prior = accept_cfg_mean(grp(r, T)->acceptance, pc->gamma),
        .rate = p->block_rate,
        .window = pc->window > 0 ? pc->window : 1,
    };
    if (runs_policy(p) && gamma_state_init_env(&T->gst, T->gpol, pc->gamma, i, &genv))
        return err_set(err, ERR_RUNTIME,
                       "edge: gamma policy '%s' failed to start for gamma %d "
                       "(its limit %d must be in [1, %d]%s)",
                       T->gpol->name, pc->gamma, T->gpol->limit(pc->gamma),
                       GAMMA_MAX, T->gpol->uses_rate && !p->block_rate
                           ? "; it needs the protocol's block_rate, which "
                             "this protocol does not give" : "");
    if (p->drafts && G->edge.device.has_thermal) {
        if (!r->thermal && !(r->thermal = calloc((size_t)r->n, sizeof *r->thermal)))
            return err_set(err, ERR_RUNTIME, "edge: out of memory");
        thermal_init(&r->thermal[i], &G->edge.device.thermal, G->edge.device.power_w,
                     G->edge.device.idle_power_w, r->tally->warmup, r->tally->end);
        T->th_traced = r->thermal[i].level;
    }
    if (drift_used(s, G, p)) {
        T->drift_rng = rngbox_init(&T->drift_box, seed, (uint64_t)r->rep, (uint64_t)i,
                                   RNG_DRIFT, err);
        if (!T->drift_rng) return -1;
    }
    if (p->drafts) {
        if (G->edge.has_draft_time && G->edge.draft_time.kind != DIST_CONST) {
            T->draft_rng = rng_stream(seed, (uint64_t)r->rep, (uint64_t)i, RNG_DRAFT_TIME);
            if (!T->draft_rng) return err_set(err, ERR_RUNTIME, "edge: out of memory");
        }
        if (G->edge.has_prefill_time && G->edge.prefill_time.kind != DIST_CONST) {
            T->prefill_rng = rng_stream(seed, (uint64_t)r->rep, (uint64_t)i,
                                        RNG_PREFILL_TIME);
            if (!T->prefill_rng) return err_set(err, ERR_RUNTIME, "edge: out of memory");
        }
    }
    return 0;
}

void edge_tenant_fini(edge_tenant_t *T)
{
    workload_fini(&T->wl);
    network_link_fini(&T->up);
    if (T->watch) {
        network_link_fini(&T->watch->probe);
        network_link_fini(&T->watch->obs_stall);
        network_link_fini(&T->watch->obs_gap);
        free(T->watch);
        T->watch = NULL;
    }
    if (T->proto && runs_policy(T->proto)) gamma_state_fini(&T->gst, T->gpol);
    if (T->draft_rng) gsl_rng_free(T->draft_rng);
    if (T->prefill_rng) gsl_rng_free(T->prefill_rng);
    T->draft_rng = T->prefill_rng = T->drift_rng = NULL;
    free(T->sent);
    T->sent = NULL;
    T->sent_cap = T->sent_head = 0;
}

/* ---- small helpers ------------------------------------------------------ */

/* Makes group gi's draft-time memo cover contexts [0, last]. Returns 0, or
 * -1 when it cannot (beyond REPL_MEMO_MAX, or out of memory: the caller
 * then asks the model). */
static int memo_cover(repl_t *r, int gi, int last)
{
    if (last < r->draft_memo_n[gi]) return 0;
    if (last >= REPL_MEMO_MAX) return -1;
    int n = r->draft_memo_n[gi] ? r->draft_memo_n[gi] : 1024;
    while (n <= last) n *= 2;
    if (n > REPL_MEMO_MAX) n = REPL_MEMO_MAX;
    double *m = realloc(r->draft_memo[gi], (size_t)n * sizeof *m);
    if (!m) return -1;
    for (int k = r->draft_memo_n[gi]; k < n; k++) m[k] = -1;
    r->draft_memo[gi] = m;
    r->draft_memo_n[gi] = n;
    return 0;
}

/* One draft step at context ctx: the group's fixed time, a sample of its
 * distribution, or the service model's (memoised per context). */
static double draft_step(repl_t *r, edge_tenant_t *T, int ctx)
{
    const repl_group_t *g = grp(r, T);
    if (g->draft_kind == 0) return g->draft_const;
    if (g->draft_kind == 1) return dist_sample(&cfg(r, T)->edge.draft_time, T->draft_rng);
    if (ctx >= 0 && memo_cover(r, T->group, ctx) == 0) {
        double *m = r->draft_memo[T->group] + ctx;
        if (*m < 0) *m = service_draft_time(g->edge_sv, ctx);
        return *m;
    }
    return service_draft_time(g->edge_sv, ctx);
}

/* A token tree's block (sim/model/tree.h, docs/design.md "Token trees"):
 * one draft step per level, its nodes drafted together, each attending to
 * the context and its ancestors (level d at context ctx + d, as the chain's
 * d-th token). With the service model a level of w nodes costs its step
 * of w tokens (service_draft_width_time; one node: the chain's memoised
 * step, the same value); a fixed or sampled draft_time is one step per
 * level whatever its width.
 * cum[k] of node k (level order) is the end of its level. */
static double tree_draft_times(repl_t *r, edge_tenant_t *T, const tree_t *t, int ctx)
{
    const repl_group_t *g = grp(r, T);
    double s = 0, *cum = T->cum;
    for (int d = 0, k = 0; d < t->depth; d++) {
        int w = t->width[d];
        s += g->draft_kind == 2 && w > 1 ? service_draft_width_time(g->edge_sv, ctx + d, w)
                                         : draft_step(r, T, ctx + d);
        for (int j = 0; j < w; j++) cum[k++] = s;
    }
    return s;
}

/* Fills T->cum with the cumulative draft times of n tokens from context
 * ctx and returns the total. The service model's answers never change, so
 * they are kept per context: a block reads gamma of them from one span. */
static double draft_times(repl_t *r, edge_tenant_t *T, int ctx, int n)
{
    const repl_group_t *g = grp(r, T);
    double s = 0, *cum = T->cum;
    if (g->protocol->tree.n > 0 && n == g->protocol->tree.n)
        return tree_draft_times(r, T, &g->protocol->tree, ctx);
    if (g->draft_kind == 0) {
        for (int k = 0; k < n; k++) cum[k] = s += g->draft_const;
    } else if (g->draft_kind == 1) {
        const dist_t *d = &cfg(r, T)->edge.draft_time;
        for (int k = 0; k < n; k++) cum[k] = s += dist_sample(d, T->draft_rng);
    } else if (ctx >= 0 && memo_cover(r, T->group, ctx + n - 1) == 0) {
        double *m = r->draft_memo[T->group] + ctx;
        for (int k = 0; k < n; k++) {
            if (m[k] < 0) m[k] = service_draft_time(g->edge_sv, ctx + k);
            cum[k] = s += m[k];
        }
    } else {
        for (int k = 0; k < n; k++)
            cum[k] = s += service_draft_time(g->edge_sv, ctx + k);
    }
    return s;
}

static int send_up(repl_t *r, edge_tenant_t *T, uint64_t m, double bytes)
{
    double now = engine_now(r->eng);
    double at = network_send(&T->up, now, bytes);
    tally_up_bytes(r->tally, edge_index(r, T), now, bytes);
    if (engine_schedule(r->eng, at, EV_UP, (uint32_t)edge_index(r, T), m))
        return repl_fail(r, REPL_SCHED_FAIL);
    return 0;
}

/* Seconds of [a, b] link l was down; l is walked forward, so a must be at
 * or after the b of the call before. */
static double down_within(network_link_t *l, double a, double b)
{
    double d = 0, t = a;
    while (t < b) {
        double rtt, until;
        int up = network_state_at(l, t, &rtt, &until);
        double e = until < b ? until : b;
        if (!up) d += e - t;
        if (!(e > t)) break;
        t = e;
    }
    return d;
}

static int link_check(repl_t *r, edge_tenant_t *T);

int edge_stall_begin(repl_t *r, edge_tenant_t *T)
{
    if (T->stall_since >= 0) return 0;
    T->stall_since = engine_now(r->eng);
    repl_trace(r, edge_index(r, T), "stall_start", -1, 0);
    return T->fb && T->fb_state == 0 ? link_check(r, T) : 0;
}

/* The stall [from, to] of a tenant whose link varies: its part while the
 * link was down, over the measured span. */
static void stall_observe(repl_t *r, edge_tenant_t *T, double from, double to)
{
    const tally_t *tl = r->tally;
    double a = from > tl->warmup ? from : tl->warmup, b = to < tl->end ? to : tl->end;
    if (b > a)
        tally_link_stall(r->tally, edge_index(r, T), down_within(&T->watch->obs_stall, a, b));
}

static void stall_close(repl_t *r, edge_tenant_t *T)
{
    double now = engine_now(r->eng);
    tally_stall(r->tally, edge_index(r, T), T->stall_since, now);
    if (T->has_obs) stall_observe(r, T, T->stall_since, now);
    T->stall_since = -1;
    T->link_gen++;   /* a pending EV_LINK is moot */
    repl_trace(r, edge_index(r, T), "stall_end", -1, 0);
}

/* Inline test, out-of-line close: every draft and verdict asks, few stall. */
static inline void stall_end(repl_t *r, edge_tenant_t *T)
{
    if (T->stall_since >= 0) stall_close(r, T);
}

/* Tokens of the draft in progress finished by now (its partial draft). */
static int drafted_so_far(const edge_tenant_t *T, double now)
{
    if (!T->drafting) return 0;
    int n = 0;
    double el = now - T->draft_start;
    while (n < T->draft_n && T->cum[n] <= el) n++;
    return n;
}

/* Tenant T's device's thermal state, or NULL when it has no thermal model. */
static inline thermal_t *thermal_of(const repl_t *r, const edge_tenant_t *T)
{
    thermal_t *th = r->thermal ? &r->thermal[edge_index(r, T)] : NULL;
    return th && th->cfg ? th : NULL;
}

/* The device computed over [from, to]: its energy (edge_j_per_tok), and
 * its temperature, idle until from. */
static void edge_busy(repl_t *r, edge_tenant_t *T, double from, double to)
{
    tally_edge_busy(r->tally, edge_index(r, T), from, to);
    thermal_t *th = thermal_of(r, T);
    if (!th) return;
    thermal_advance(th, from, 0);
    thermal_advance(th, to, 1);
}

/* The speed of the device's level now, idle since its last computation
 * (1 without a thermal model); a change of level is traced as `throttle`
 * (block: the level, tokens: the speed in thousandths). */
static double edge_speed(repl_t *r, edge_tenant_t *T, double now)
{
    thermal_t *th = thermal_of(r, T);
    if (!th) return 1;
    thermal_advance(th, now, 0);
    double v = thermal_speed(th);
    if (th->level != T->th_traced) {
        T->th_traced = th->level;
        repl_trace(r, edge_index(r, T), "throttle", th->level, lround(v * 1000));
    }
    return v;
}

/* The draft in progress stops now (done or abandoned): the device was busy
 * from its start (edge_j_per_tok). */
static void draft_busy_end(repl_t *r, edge_tenant_t *T, double now)
{
    if (T->drafting) edge_busy(r, T, T->draft_start, now);
}

/* Throws away the drafts in flight and in progress (rollback, request end). */
static void discard_pending(repl_t *r, edge_tenant_t *T)
{
    tally_t *tl = r->tally;
    double now = engine_now(r->eng);
    draft_busy_end(r, T, now);
    int partial = drafted_so_far(T, now);
    double gone = (double)T->inflight + partial;
    tl->raw.drafted += partial;
    tl->raw.discarded += gone;
    tally_drafted(tl, edge_index(r, T), now, partial);
    tally_discarded(tl, edge_index(r, T), now, gone);
    T->unverified = 0;
    T->sent_head = 0;
    T->inflight = 0;
    T->zeros = 0;
    T->drafting = 0;
    T->draft_gen++;   /* the pending draft event is now moot */
    if (r->draft_timers) engine_timer_cancel(r->eng, (uint32_t)edge_index(r, T));
}

/* protocol.fallback, below. */
static int link_usable(edge_tenant_t *T, double now);
static void fb_begin(repl_t *r, edge_tenant_t *T, double now);
static int fb_next(repl_t *r, edge_tenant_t *T);
static int fb_end_idle(repl_t *r, edge_tenant_t *T);

/* ---- request life cycle ------------------------------------------------- */

static int start_request(repl_t *r, edge_tenant_t *T, double t0)
{
    double now = engine_now(r->eng);
    int i = edge_index(r, T);
    const tenant_group_t *G = cfg(r, T);
    const repl_group_t *g = grp(r, T);
    workload_lengths(&T->wl, &T->prompt, &T->output);
    T->busy = 1;
    T->t0 = t0;
    T->committed = 0;
    T->unverified = 0;
    T->sent_head = 0;
    T->inflight = 0;
    T->zeros = 0;
    T->drafting = 0;
    T->pending = 0;
    repl_trace(r, i, "request_start", -1, T->prompt);
    if (T->proto->drafts) {
        /* A session's later turn: the device kept its own KV of the
         * earlier turns (docs/design.md "Sessions"), so it prefills only
         * the new tokens. */
        double p = G->edge.has_prefill_time
                       ? dist_sample(&G->edge.prefill_time, T->prefill_rng)
                       : service_prefill_time(g->edge_sv,
                                              T->prompt - workload_prefix(&T->wl));
        if (r->thermal) p /= edge_speed(r, T, now);
        p *= edge_drift(r, T);
        /* A prefill is never abandoned: its whole time is busy time. */
        edge_busy(r, T, now, now + p);
        T->pending |= 1;
        if (engine_schedule(r->eng, now + p, EV_EDGE_PREFILL, (uint32_t)i, 0))
            return repl_fail(r, REPL_SCHED_FAIL);
    }
    /* A request that starts while the link is unusable starts in
     * fallback; one that starts during a fallback stays there: the cloud
     * hears of it when the fallback ends. */
    if (T->fb && T->fb_state == 0 && !link_usable(T, now)) fb_begin(r, T, now);
    if (T->fb_state) T->fb_fresh = 1;
    if (T->proto->uses_cloud && !T->fb_state) {
        T->pending |= 2;
        /* The prompt's lengths and the request's start do not fit the
         * payload: they travel in the tenant's prompt slot, which the cloud
         * empties when the message arrives (sim/entity/msg.h). */
        if (msg_prompt_post_turn(&r->prompt_box[i], T->prompt, workload_prefix(&T->wl),
                                 T->output, T->t0))
            return repl_fail(r, "a prompt was sent while the previous one was "
                             "on the uplink");
        if (send_up(r, T, msg_pack(MSG_PROMPT, 0, 0, 0, T->epoch),
                    T->prompt * g->bytes_per_token + g->overhead_bytes))
            return -1;
    }
    return 0;
}

/* Commits n tokens at the edge: ITL (g/n for each token) and gaps. */
static void commit(repl_t *r, edge_tenant_t *T, int n)
{
    tally_t *tl = r->tally;
    double now = engine_now(r->eng);
    double gap = now - T->t_last;
    T->committed += n;
    tl->raw.committed += n;
    if (tl->series) mser_series_add(tl->series, now, n);
    tally_commit(tl, edge_index(r, T), now, gap, n);
    if (T->has_obs && down_within(&T->watch->obs_gap, T->t_last, now) > 0)
        tally_outage_commit(tl, edge_index(r, T), now, gap, n);
    T->t_last = now;
    repl_trace(r, edge_index(r, T), "commit", -1, n);
}

static int end_request(repl_t *r, edge_tenant_t *T)
{
    tally_t *tl = r->tally;
    double now = engine_now(r->eng);
    int i = edge_index(r, T);
    tally_request_end(tl, i, now, T->t0, T->t_first, T->output);
    tl->raw.requests_done++;
    tally_decode_time(tl, i, T->t_first, now);
    stall_end(r, T);
    discard_pending(r, T);
    T->epoch++;   /* the cloud bumped its epoch on the last verdict */
    T->busy = 0;
    repl_trace(r, i, "request_end", -1, T->committed);
    /* A fallback with no request left to decode ends here (the cloud is
     * told to drop what it holds once the link carries it). */
    if (T->fb_state && !(T->wl.cfg->arrival != ARRIVAL_CLOSED && T->wl.count > 0) &&
        fb_end_idle(r, T))
        return -1;
    if (T->wl.cfg->arrival == ARRIVAL_CLOSED) {
        double next = workload_next(&T->wl, now);
        if (isfinite(next) &&
            engine_schedule(r->eng, next, EV_ARRIVE, (uint32_t)i, 0))
            return repl_fail(r, REPL_SCHED_FAIL);
        return 0;
    }
    double t0;
    if (workload_pop(&T->wl, &t0)) {
        r->waiting--;
        return start_request(r, T, t0);
    }
    return 0;
}

int edge_maybe_end(repl_t *r, edge_tenant_t *T)
{
    return T->committed >= T->output ? end_request(r, T) : 1;
}

static int first_token(repl_t *r, edge_tenant_t *T)
{
    tally_t *tl = r->tally;
    double now = engine_now(r->eng);
    T->committed = 1;
    T->t_first = T->t_last = now;
    tl->raw.committed++;
    tl->raw.first_tokens++;
    if (tl->series) mser_series_add(tl->series, now, 1);
    int i = edge_index(r, T);
    tally_first_token(tl, i, now, now - T->t0);
    repl_trace(r, i, "first_token", -1, 1);
    int rc = edge_maybe_end(r, T);
    if (rc <= 0) return rc;
    return T->fb_state ? fb_next(r, T) : T->proto->first_token(r, i);
}

int edge_arrive(repl_t *r, int i, double now)
{
    edge_tenant_t *T = &r->et[i];
    if (T->wl.cfg->arrival != ARRIVAL_CLOSED) {
        double next = workload_next(&T->wl, now);
        if (isfinite(next) &&
            engine_schedule(r->eng, next, EV_ARRIVE, (uint32_t)i, 0))
            return repl_fail(r, REPL_SCHED_FAIL);
        if (T->busy) {
            if (workload_push(&T->wl, now)) return repl_fail(r, "out of memory");
            r->waiting++;
            return 0;
        }
    }
    return start_request(r, T, now);
}

int edge_prefill_done(repl_t *r, int i)
{
    edge_tenant_t *T = &r->et[i];
    T->pending &= ~1;
    repl_trace(r, i, "edge_prefill_done", -1, T->prompt);
    return T->pending ? 0 : first_token(r, T);
}

int edge_first_msg(repl_t *r, int i)
{
    edge_tenant_t *T = &r->et[i];
    T->pending &= ~2;
    return T->pending ? 0 : first_token(r, T);
}

int edge_token_msg(repl_t *r, int i)
{
    edge_tenant_t *T = &r->et[i];
    r->tally->raw.extra_committed++;
    commit(r, T, 1);
    int rc = edge_maybe_end(r, T);
    return rc < 0 ? rc : 0;
}

/* ---- drafting ----------------------------------------------------------- */

/* Drafts n tokens (n <= the tenant's draft buffer) after what is committed
 * and in flight; traced as a block when `block`. */
static int draft_begin(repl_t *r, edge_tenant_t *T, int n, int block)
{
    double now = engine_now(r->eng);
    int ctx = T->prompt + T->committed + T->inflight;
    stall_end(r, T);
    draft_busy_end(r, T, now);
    double s = draft_times(r, T, ctx, n);
    if (r->thermal) {
        double v = edge_speed(r, T, now);
        if (v != 1) {
            for (int k = 0; k < n; k++) T->cum[k] /= v;
            s /= v;
        }
    }
    /* One drift factor a block: a device's speed wanders over milliseconds,
     * not token by token. */
    double f = edge_drift(r, T);
    if (f != 1) {
        for (int k = 0; k < n; k++) T->cum[k] *= f;
        s *= f;
    }
    T->drafting = 1;
    T->draft_n = n;
    T->draft_start = now;
    T->draft_gen++;
    if (block) repl_trace(r, edge_index(r, T), "draft_start", (long)T->next_block, n);
    if (r->draft_time) {
        s = r->draft_time(r->draft_ctx, edge_index(r, T), ctx, n, s);
        if (isinf(s)) return 0;   /* its runner ends it */
    }
    if (r->draft_timers) {
        /* Replaces the event of a draft abandoned, if still pending. */
        if (engine_timer_set(r->eng, (uint32_t)edge_index(r, T), now + s, T->draft_gen))
            return repl_fail(r, REPL_SCHED_FAIL);
        return 0;
    }
    if (engine_schedule(r->eng, now + s, EV_DRAFT, (uint32_t)edge_index(r, T),
                        T->draft_gen))
        return repl_fail(r, REPL_SCHED_FAIL);
    return 0;
}

int edge_block_start(repl_t *r, edge_tenant_t *T)
{
    int g = gamma_next(T->gpol, &T->gst, edge_index(r, T), engine_now(r->eng));
    /* Beyond its limit a block would overrun the draft buffer and the KV
     * reserved for it; clamping would hide the policy's bug. gamma 0 is a
     * block of no drafts: the cloud decodes one token for it. */
    if (g < 0 || g > T->gst.limit)
        return err_set(r->err, ERR_RUNTIME,
                       "simulation: gamma policy '%s' returned gamma %d outside "
                       "[0, %d]", T->gpol->name, g, T->gst.limit);
    return draft_begin(r, T, g, 1);
}

int edge_token_start(repl_t *r, edge_tenant_t *T)
{
    return draft_begin(r, T, 1, 0);
}

/* Appends now to the ring of send times, growing it (in order) when full.
 * Verdicts come back in send order (links deliver in order, the cloud
 * verifies a tenant's blocks in order, and a rollback or a request's end
 * drops every unverified block), so the oldest entry is the next verdict's. */
static int note_sent(repl_t *r, edge_tenant_t *T, double now)
{
    if (T->unverified == T->sent_cap) {
        int cap = T->sent_cap ? 2 * T->sent_cap : 8;
        double *v = malloc((size_t)cap * sizeof *v);
        if (!v) return repl_fail(r, "out of memory");
        for (int k = 0; k < T->unverified; k++)
            v[k] = T->sent[(T->sent_head + k) % T->sent_cap];
        free(T->sent);
        T->sent = v;
        T->sent_cap = cap;
        T->sent_head = 0;
    }
    T->sent[(T->sent_head + T->unverified) % T->sent_cap] = now;
    return 0;
}

/* The oldest unverified block's send time (NAN when none is recorded). */
static double take_sent(edge_tenant_t *T)
{
    if (T->unverified < 1 || T->sent_cap == 0) return NAN;
    double t = T->sent[T->sent_head];
    T->sent_head = (T->sent_head + 1) % T->sent_cap;
    return t;
}

int edge_draft_ended(repl_t *r, int i, uint64_t gen)
{
    edge_tenant_t *T = &r->et[i];
    if (!T->drafting || gen != T->draft_gen) return 0;   /* abandoned */
    draft_busy_end(r, T, engine_now(r->eng));
    T->drafting = 0;
    return 1;
}

int edge_block_send(repl_t *r, edge_tenant_t *T)
{
    tally_t *tl = r->tally;
    const repl_group_t *g = grp(r, T);
    int n = T->draft_n;
    if (T->keep_sent && note_sent(r, T, engine_now(r->eng))) return -1;
    if (T->gpol->on_sent)
        T->gpol->on_sent(&T->gst, edge_index(r, T), n, T->draft_start, engine_now(r->eng));
    tl->raw.drafted += n;
    tally_drafted(tl, edge_index(r, T), engine_now(r->eng), n);
    uint32_t b = T->next_block++;
    T->unverified++;
    T->inflight += n;
    T->zeros += n == 0;
    repl_trace(r, edge_index(r, T), "block_sent", (long)b, n);
    return send_up(r, T, msg_pack(MSG_BLOCK, 0, 0, (uint32_t)n, T->epoch),
                   n * g->bytes_per_token + g->overhead_bytes);
}

void edge_commit_own(repl_t *r, edge_tenant_t *T)
{
    tally_t *tl = r->tally;
    tl->raw.drafted++;
    tl->raw.draft_committed++;
    tally_drafted(tl, edge_index(r, T), engine_now(r->eng), 1);
    commit(r, T, 1);
}

/* ---- verdicts ----------------------------------------------------------- */

/* Commits verdict m's tokens and counts its drafts' fate: those among the
 * committed tokens, the others discarded. Returns as edge_maybe_end. */
static int verdict_commit(repl_t *r, edge_tenant_t *T, uint64_t m)
{
    tally_t *tl = r->tally;
    int i = edge_index(r, T);
    int g = msg_gamma(m), acc = msg_x(m), n = msg_y(m);
    int dc = acc < n ? acc : n;   /* drafts among the committed tokens */
    tl->raw.draft_committed += dc;
    tl->raw.extra_committed += n - dc;
    tl->raw.discarded += g - dc;
    tally_verdict(tl, i, engine_now(r->eng), n, g - dc);
    repl_trace(r, i, "verdict_arrive", -1, acc);
    stall_end(r, T);
    commit(r, T, n);
    return edge_maybe_end(r, T);
}

int edge_verdict(repl_t *r, edge_tenant_t *T, uint64_t m, int *a, int *gamma)
{
    double now = engine_now(r->eng);
    int i = edge_index(r, T);
    /* The cloud sends verdicts of its current epoch only and bumps it with
     * the verdict that makes the edge roll back; links deliver in send
     * order (sim/model/network.h). A stale verdict is therefore a bug: fail
     * rather than drop it silently. */
    if (msg_epoch(m) != msg_epoch_of(T->epoch))
        return repl_fail(r, "verdict of an earlier epoch reached the edge");
    int g = msg_gamma(m), acc = msg_x(m);
    if (T->keep_sent) {
        double sent = take_sent(T);
        if (T->gpol->on_verdict) T->gpol->on_verdict(&T->gst, i, g, acc, sent, now);
        if (T->fb && T->fb->rtt_above > 0)
            T->rtt_over = now - sent > T->fb->rtt_above ? T->rtt_over + 1 : 0;
    }
    T->unverified--;
    T->inflight -= g;
    T->zeros -= g == 0;
    *a = acc;
    *gamma = g;
    return verdict_commit(r, T, m);
}

int edge_cloud_block(repl_t *r, edge_tenant_t *T, uint64_t m)
{
    if (msg_epoch(m) != msg_epoch_of(T->epoch))
        return repl_fail(r, "block of an earlier epoch reached the edge");
    /* Its drafts were made on the cloud: counted here, with their fate,
     * so that every drafted token is committed or discarded on arrival. */
    int g = msg_gamma(m);
    r->tally->raw.drafted += g;
    tally_drafted(r->tally, edge_index(r, T), engine_now(r->eng), g);
    return verdict_commit(r, T, m);
}

void edge_rollback(repl_t *r, edge_tenant_t *T)
{
    repl_trace(r, edge_index(r, T), "rollback", (long)T->next_block, T->inflight);
    discard_pending(r, T);
    T->epoch++;
}

/* ---- protocol.fallback -------------------------------------------------- */

/* The link as the device sees it at now: up and, with rtt_above, no
 * slower than that. */
static int link_usable(edge_tenant_t *T, double now)
{
    double rtt, until;
    int up = network_state_at(&T->watch->probe, now, &rtt, &until);
    return up && !(T->fb->rtt_above > 0 && rtt > T->fb->rtt_above);
}

static void fb_begin(repl_t *r, edge_tenant_t *T, double now)
{
    T->fb_state = 1;
    T->fb_since = now;
    T->fb_seen = 1;
    T->rtt_over = 0;
    repl_trace(r, edge_index(r, T), "fallback_start", -1, T->committed);
}

static void fb_close(repl_t *r, edge_tenant_t *T, double now)
{
    tally_fallback(r->tally, edge_index(r, T), T->fb_since, now);
    T->fb_state = 0;
    T->fb_fresh = 0;
    T->fb_cloud = 0;
    T->rtt_over = 0;
    repl_trace(r, edge_index(r, T), "fallback_end", -1, T->committed);
}

/* Speculation gives way to local decoding: the drafts in flight and in
 * progress are thrown away as at a rollback (their verdicts, if they
 * come, are moot), and the device decodes the next token itself. */
static int fb_enter(repl_t *r, edge_tenant_t *T)
{
    stall_end(r, T);
    discard_pending(r, T);
    T->epoch++;
    T->fb_base = T->committed;
    T->fb_cloud = 1;
    fb_begin(r, T, engine_now(r->eng));
    return edge_token_start(r, T);
}

/* Sends the cloud the edge's state (msg_resync_t) and waits for its
 * answer: the cloud prefills what it lacks of the request, then answers
 * as it answers a prompt. */
static int fb_reconcile(repl_t *r, edge_tenant_t *T)
{
    int i = edge_index(r, T);
    const repl_group_t *g = grp(r, T);
    msg_resync_t b = {.epoch = T->epoch, .active = 1, .fresh = T->fb_fresh,
                      .prompt = T->prompt, .output = T->output,
                      .committed = T->committed, .base = T->fb_fresh ? 0 : T->fb_base,
                      .t0 = T->t0};
    msg_resync_post(&r->resync_box[i], &b);
    T->fb_state = 2;
    int tokens = T->fb_fresh ? T->prompt + T->committed : T->committed - T->fb_base;
    repl_trace(r, i, "reconcile", -1, tokens);
    if (send_up(r, T, msg_pack(MSG_RESYNC, 0, 0, 0, T->epoch),
                tokens * g->bytes_per_token + g->overhead_bytes))
        return -1;
    return edge_stall_begin(r, T);
}

/* After a token decoded locally (or the first): reconcile when the link
 * is usable again, else decode the next. */
static int fb_next(repl_t *r, edge_tenant_t *T)
{
    if (link_usable(T, engine_now(r->eng))) return fb_reconcile(r, T);
    return edge_token_start(r, T);
}

/* The last request of a fallback ended and none waits: the fallback ends;
 * the cloud, if it holds that request, is told to let it go. */
static int fb_end_idle(repl_t *r, edge_tenant_t *T)
{
    if (T->fb_cloud) {
        int i = edge_index(r, T);
        msg_resync_t b = {.epoch = T->epoch};
        msg_resync_post(&r->resync_box[i], &b);
        if (send_up(r, T, msg_pack(MSG_RESYNC, 0, 0, 0, T->epoch),
                    grp(r, T)->overhead_bytes))
            return -1;
    }
    fb_close(r, T, engine_now(r->eng));
    return 0;
}

/* A stalled tenant's link: down, the fallback begins; up, it is looked
 * at again when it may change. */
static int link_check(repl_t *r, edge_tenant_t *T)
{
    double now = engine_now(r->eng), rtt, until;
    if (!T->busy || T->pending) return 0;
    if (!network_state_at(&T->watch->probe, now, &rtt, &until)) return fb_enter(r, T);
    if (isfinite(until) &&
        engine_schedule(r->eng, until, EV_LINK, (uint32_t)edge_index(r, T), T->link_gen))
        return repl_fail(r, REPL_SCHED_FAIL);
    return 0;
}

int edge_draft_check(repl_t *r, edge_tenant_t *T)
{
    double rtt, until;
    if (T->fb_state || !T->busy || T->pending ||
        network_state_at(&T->watch->probe, engine_now(r->eng), &rtt, &until))
        return 0;
    return fb_enter(r, T);
}

int edge_link_changed(repl_t *r, int i, uint64_t gen)
{
    edge_tenant_t *T = &r->et[i];
    if (gen != T->link_gen || T->stall_since < 0 || T->fb_state) return 0;
    return link_check(r, T);
}

int edge_local_done(repl_t *r, int i)
{
    edge_tenant_t *T = &r->et[i];
    edge_commit_own(r, T);
    tally_local(r->tally, i, engine_now(r->eng), 1);
    int rc = edge_maybe_end(r, T);
    return rc <= 0 ? rc : fb_next(r, T);
}

int edge_resumed(repl_t *r, int i)
{
    edge_tenant_t *T = &r->et[i];
    stall_end(r, T);
    fb_close(r, T, engine_now(r->eng));
    return T->proto->first_token(r, i);
}

int edge_fallback_down(repl_t *r, edge_tenant_t *T, uint64_t m)
{
    if (!T->fb_seen) return 0;
    if (T->fb_state != 1 && msg_epoch(m) == msg_epoch_of(T->epoch)) return 0;
    repl_trace(r, edge_index(r, T), "msg_moot", -1, msg_kind(m));
    return 1;
}

int edge_rtt_check(repl_t *r, edge_tenant_t *T)
{
    if (T->fb_state || !(T->fb->rtt_above > 0) || T->rtt_over < T->fb->after ||
        !T->busy || T->pending)
        return 0;
    return fb_enter(r, T);
}

/* ---- start and finish --------------------------------------------------- */

int edge_start(repl_t *r)
{
    for (int i = 0; i < r->n; i++) {
        edge_tenant_t *T = &r->et[i];
        /* drift.start: the first request of a closed loop comes after a
         * uniform offset (the stream's first draw), then its think time. */
        double t0 = drift_start_used(r->s, cfg(r, T))
                        ? gsl_rng_uniform(T->drift_rng) * r->s->drift.start
                        : 0.0;
        double t = workload_next(&T->wl, t0);
        if (isfinite(t) && engine_schedule(r->eng, t, EV_ARRIVE, (uint32_t)i, 0))
            return repl_fail(r, REPL_SCHED_FAIL);
    }
    return 0;
}

void edge_finish(repl_t *r, double end)
{
    tally_t *tl = r->tally;
    for (int i = 0; i < r->n; i++) {
        edge_tenant_t *T = &r->et[i];
        if (T->has_obs || T->fb) tally_link_observed(tl, i, T->has_obs, T->fb != NULL);
        if (T->fb_state) tally_fallback(tl, i, T->fb_since, end);
        if (T->has_obs && T->stall_since >= 0) stall_observe(r, T, T->stall_since, end);
        if (!T->busy) continue;
        if (T->pending == 0) tally_decode_time(tl, i, T->t_first, end);
        if (T->drafting) tally_edge_busy_open(tl, i, T->draft_start, end);
        if (T->stall_since >= 0) tally_stall(tl, i, T->stall_since, end);
        tl->raw.pending_drafts += T->inflight;
    }
    for (int i = 0; r->thermal && i < r->n; i++) {
        edge_tenant_t *T = &r->et[i];
        thermal_t *th = thermal_of(r, T);
        if (!th) continue;
        if (T->drafting) {
            thermal_advance(th, T->draft_start, 0);
            thermal_advance(th, end, 1);
        }
        thermal_advance(th, end, 0);
        tally_thermal(tl, i, th->throttled_s, th->speed_s);
    }
}
