#include "edge.h"

#include <math.h>
#include <stdlib.h>

#include "world.h"

/* Messages travel as the 64-bit event payload:
 * bits 0-2 kind, 3-16 x, 17-30 y, 32-63 epoch. A block id uses x and y
 * together (28 bits, only ever compared for tracing). */
enum msg_kind { MSG_PROMPT = 0, MSG_BLOCK, MSG_FIRST, MSG_VERDICT, MSG_TOKEN };

static inline uint64_t msg_pack(int kind, uint32_t x, uint32_t y, uint32_t epoch)
{
    return (uint64_t)kind | ((uint64_t)(x & 0x3FFFu) << 3) |
           ((uint64_t)(y & 0x3FFFu) << 17) | ((uint64_t)epoch << 32);
}
static inline int msg_kind(uint64_t m) { return (int)(m & 7u); }
static inline uint32_t msg_x(uint64_t m) { return (uint32_t)(m >> 3) & 0x3FFFu; }
static inline uint32_t msg_y(uint64_t m) { return (uint32_t)(m >> 17) & 0x3FFFu; }
static inline uint32_t msg_epoch(uint64_t m) { return (uint32_t)(m >> 32); }

static int fail(world_t *w, const char *what)
{
    return err_set(w->err, ERR_RUNTIME, "simulation: %s", what);
}

static void trace(world_t *w, int i, const char *ev, long block, long tokens)
{
    if (w->trace) trace_event(w->trace, engine_now(w->eng), i, ev, block, tokens);
}

static const world_group_t *grp(const world_t *w, const tenant_t *T)
{
    return &w->sh->groups[T->group];
}

static const tenant_group_t *cfg(const world_t *w, const tenant_t *T)
{
    return &w->s->groups[T->group];
}

/* ---- set-up ----------------------------------------------------------- */

int edge_tenant_init(world_t *w, int i, err_t *err)
{
    tenant_t *T = &w->t[i];
    const scenario_t *s = w->s;
    int g = 0;
    for (int base = 0; g < s->ngroups; g++) {
        if (i < base + s->groups[g].count) break;
        base += s->groups[g].count;
    }
    T->group = g;
    T->replica = -1;
    T->stall_since = -1;
    T->cum = w->cum + (size_t)i * (size_t)w->gamma;
    const tenant_group_t *G = &s->groups[g];
    const network_cfg_t *net = &G->network;
    uint64_t seed = s->seed;
    if (workload_init(&T->wl, &G->workload, seed, w->rep, i, err)) return -1;
    if (w->mode != MODE_EDGE_ONLY) {
        if (network_link_init(&T->up, net->rtt, net->uplink_bps, &net->jitter, seed,
                              w->rep, (uint64_t)i, RNG_UPLINK, err) ||
            network_link_init(&T->down, net->rtt, net->downlink_bps, &net->jitter,
                              seed, w->rep, (uint64_t)i, RNG_DOWNLINK, err))
            return -1;
    }
    if (w->mode == MODE_SYNC || w->mode == MODE_ASYNC) {
        if (accept_init(&T->acc, &s->acceptance, seed, w->rep, i, err)) return -1;
    }
    if (w->mode != MODE_CLOUD_ONLY) {
        if (G->edge.has_draft_time && G->edge.draft_time.kind != DIST_CONST) {
            T->draft_rng = rng_stream(seed, (uint64_t)w->rep, (uint64_t)i, RNG_DRAFT_TIME);
            if (!T->draft_rng) return err_set(err, ERR_RUNTIME, "edge: out of memory");
        }
        if (G->edge.has_prefill_time && G->edge.prefill_time.kind != DIST_CONST) {
            T->prefill_rng = rng_stream(seed, (uint64_t)w->rep, (uint64_t)i,
                                        RNG_PREFILL_TIME);
            if (!T->prefill_rng) return err_set(err, ERR_RUNTIME, "edge: out of memory");
        }
    }
    return 0;
}

void edge_tenant_free(tenant_t *T)
{
    workload_free(&T->wl);
    network_link_free(&T->up);
    network_link_free(&T->down);
    accept_fini(&T->acc);
    if (T->draft_rng) gsl_rng_free(T->draft_rng);
    if (T->prefill_rng) gsl_rng_free(T->prefill_rng);
    T->draft_rng = T->prefill_rng = NULL;
}

/* ---- small helpers ------------------------------------------------------ */

static int idx(const world_t *w, const tenant_t *T) { return (int)(T - w->t); }

/* The service model's draft time, kept per context: a block asks for gamma
 * of them and the answers never change. Returns -1 when the memo cannot
 * hold ctx (the caller then asks the model). */
static double memo_draft(world_t *w, int gi, int ctx)
{
    if (ctx < 0 || ctx >= WORLD_MEMO_MAX) return -1;
    if (ctx >= w->draft_memo_n[gi]) {
        int n = w->draft_memo_n[gi] ? w->draft_memo_n[gi] : 1024;
        while (n <= ctx) n *= 2;
        if (n > WORLD_MEMO_MAX) n = WORLD_MEMO_MAX;
        double *m = realloc(w->draft_memo[gi], (size_t)n * sizeof *m);
        if (!m) return -1;
        for (int k = w->draft_memo_n[gi]; k < n; k++) m[k] = -1;
        w->draft_memo[gi] = m;
        w->draft_memo_n[gi] = n;
    }
    double *v = &w->draft_memo[gi][ctx];
    if (*v < 0) *v = service_draft_time(w->sh->groups[gi].edge_sv, ctx);
    return *v;
}

static double draft_time(world_t *w, tenant_t *T, int ctx)
{
    const world_group_t *g = grp(w, T);
    if (g->draft_kind == 0) return g->draft_const;
    if (g->draft_kind == 1) return dist_sample(&cfg(w, T)->edge.draft_time, T->draft_rng);
    double v = memo_draft(w, T->group, ctx);
    return v >= 0 ? v : service_draft_time(g->edge_sv, ctx);
}

static int send_up(world_t *w, tenant_t *T, uint64_t m, double bytes)
{
    double now = engine_now(w->eng);
    double at = network_send(&T->up, now, bytes);
    if (now >= w->tally->warmup) w->tally->up_bytes += bytes;
    return engine_schedule(w->eng, at, EV_UP, (uint32_t)idx(w, T), m);
}

static int send_down(world_t *w, tenant_t *T, uint64_t m, double bytes)
{
    double now = engine_now(w->eng);
    double at = network_send(&T->down, now, bytes);
    if (now >= w->tally->warmup) w->tally->down_bytes += bytes;
    return engine_schedule(w->eng, at, EV_DOWN, (uint32_t)idx(w, T), m);
}

static void stall_begin(world_t *w, tenant_t *T)
{
    if (T->stall_since >= 0) return;
    T->stall_since = engine_now(w->eng);
    trace(w, idx(w, T), "stall_start", -1, 0);
}

static void stall_end(world_t *w, tenant_t *T)
{
    if (T->stall_since < 0) return;
    w->tally->stall += tally_clip(w->tally, T->stall_since, engine_now(w->eng));
    T->stall_since = -1;
    trace(w, idx(w, T), "stall_end", -1, 0);
}

/* Tokens of the block in progress finished by now (its partial draft). */
static int drafted_so_far(const world_t *w, const tenant_t *T, double now)
{
    if (!T->drafting) return 0;
    int n = 0;
    double el = now - T->draft_start;
    while (n < w->gamma && T->cum[n] <= el) n++;
    return n;
}

/* Throws away the drafts in flight and in progress (rollback, request end). */
static void discard_pending(world_t *w, tenant_t *T)
{
    tally_t *tl = w->tally;
    double now = engine_now(w->eng);
    int partial = drafted_so_far(w, T, now);
    double gone = (double)T->unverified * w->gamma + partial;
    tl->raw.drafted += partial;
    tl->raw.discarded += gone;
    if (now >= tl->warmup) {
        tl->drafted += partial;
        tl->discarded += gone;
    }
    T->unverified = 0;
    T->drafting = 0;
    T->draft_gen++;   /* the pending draft event is now moot */
}

/* ---- request life cycle ------------------------------------------------- */

static int start_draft(world_t *w, tenant_t *T);
static int end_request(world_t *w, tenant_t *T);

static int start_request(world_t *w, tenant_t *T, double t0)
{
    double now = engine_now(w->eng);
    int i = idx(w, T);
    const tenant_group_t *G = cfg(w, T);
    const world_group_t *g = grp(w, T);
    workload_lengths(&T->wl, &T->prompt, &T->output);
    T->busy = 1;
    T->t0 = t0;
    T->committed = 0;
    T->unverified = 0;
    T->drafting = 0;
    T->pending = 0;
    trace(w, i, "request_start", -1, T->prompt);
    if (w->mode != MODE_CLOUD_ONLY) {
        double p = G->edge.has_prefill_time
                       ? dist_sample(&G->edge.prefill_time, T->prefill_rng)
                       : service_prefill_time(g->edge_sv, T->prompt);
        T->pending |= 1;
        if (engine_schedule(w->eng, now + p, EV_EDGE_PREFILL, (uint32_t)i, 0))
            return fail(w, "event queue: out of memory or a non-finite time");
    }
    if (w->mode != MODE_EDGE_ONLY) {
        T->pending |= 2;
        if (send_up(w, T, msg_pack(MSG_PROMPT, 0, 0, T->epoch),
                    T->prompt * g->bytes_per_token + g->overhead_bytes))
            return fail(w, "event queue: out of memory or a non-finite time");
    }
    return 0;
}

/* Commits n tokens at the edge: ITL (g/n for each token) and gaps. */
static void commit(world_t *w, tenant_t *T, int n)
{
    tally_t *tl = w->tally;
    double now = engine_now(w->eng);
    double gap = now - T->t_last;
    T->committed += n;
    tl->raw.committed += n;
    if (now >= tl->warmup) {
        tl->committed += n;
        tl->decode_tokens += n;
        hist_add(tl->itl, gap / n, n);
        hist_add(tl->gap, gap, 1);
    }
    T->t_last = now;
    trace(w, idx(w, T), "commit", -1, n);
}

static int first_token(world_t *w, tenant_t *T)
{
    tally_t *tl = w->tally;
    double now = engine_now(w->eng);
    T->committed = 1;
    T->t_first = T->t_last = now;
    tl->raw.committed++;
    tl->raw.first_tokens++;
    if (now >= tl->warmup) {
        tl->committed++;
        hist_add(tl->ttft, now - T->t0, 1);
    }
    trace(w, idx(w, T), "first_token", -1, 1);
    if (T->committed >= T->output) return end_request(w, T);
    if (w->mode == MODE_CLOUD_ONLY) return 0;   /* the cloud streams */
    return start_draft(w, T);
}

static int end_request(world_t *w, tenant_t *T)
{
    tally_t *tl = w->tally;
    double now = engine_now(w->eng);
    int i = idx(w, T);
    if (now >= tl->warmup) {
        tl->e2e_sum += now - T->t0;
        tl->e2e_n++;
        tl->requests_done++;
    }
    tl->raw.requests_done++;
    tl->decode_time += tally_clip(tl, T->t_first, now);
    stall_end(w, T);
    discard_pending(w, T);
    T->epoch++;   /* the cloud bumped its epoch on the last verdict */
    T->busy = 0;
    trace(w, i, "request_end", -1, T->committed);
    if (T->wl.cfg->arrival == ARRIVAL_CLOSED) {
        double gap = workload_gap(&T->wl);
        if (isfinite(gap) &&
            engine_schedule(w->eng, now + gap, EV_ARRIVE, (uint32_t)i, 0))
            return fail(w, "event queue: out of memory or a non-finite time");
        return 0;
    }
    double t0;
    if (workload_pop(&T->wl, &t0)) return start_request(w, T, t0);
    return 0;
}

/* ---- drafting ----------------------------------------------------------- */

static int start_draft(world_t *w, tenant_t *T)
{
    double now = engine_now(w->eng);
    int n = w->mode == MODE_EDGE_ONLY ? 1 : w->gamma;
    int ctx = T->prompt + T->committed + w->gamma * T->unverified;
    double s = 0;
    stall_end(w, T);
    for (int k = 0; k < n; k++) {
        s += draft_time(w, T, ctx + k);
        T->cum[k] = s;
    }
    T->drafting = 1;
    T->draft_start = now;
    T->draft_gen++;
    if (w->trace && w->mode != MODE_EDGE_ONLY)
        trace(w, idx(w, T), "draft_start", (long)T->next_block, n);
    if (engine_schedule(w->eng, now + s, EV_DRAFT, (uint32_t)idx(w, T), T->draft_gen))
        return fail(w, "event queue: out of memory or a non-finite time");
    return 0;
}

/* Async may keep drafting while the window has room and the request could
 * still need more tokens than the blocks in flight would give if all were
 * accepted (drafting past that can only be thrown away). */
static int may_draft_more(const world_t *w, const tenant_t *T)
{
    return w->mode == MODE_ASYNC && T->unverified < w->window &&
           T->committed + (long)w->gamma * T->unverified < T->output;
}

static int on_draft(void *ctx, const engine_event_t *ev)
{
    world_t *w = ctx;
    tenant_t *T = &w->t[ev->a];
    if (!T->drafting || ev->b != T->draft_gen) return 0;   /* abandoned */
    T->drafting = 0;
    tally_t *tl = w->tally;
    double now = ev->time;
    int cnt = now >= tl->warmup;
    if (w->mode == MODE_EDGE_ONLY) {
        tl->raw.drafted++;
        tl->raw.draft_committed++;
        if (cnt) tl->drafted++;
        commit(w, T, 1);
        if (T->committed >= T->output) return end_request(w, T);
        return start_draft(w, T);
    }
    const world_group_t *g = grp(w, T);
    tl->raw.drafted += w->gamma;
    if (cnt) tl->drafted += w->gamma;
    uint32_t b = T->next_block++;
    T->unverified++;
    trace(w, (int)ev->a, "block_sent", (long)b, w->gamma);
    if (send_up(w, T, msg_pack(MSG_BLOCK, b, b >> 14, T->epoch),
                w->gamma * g->bytes_per_token + g->overhead_bytes))
        return fail(w, "event queue: out of memory or a non-finite time");
    if (may_draft_more(w, T)) return start_draft(w, T);
    stall_begin(w, T);
    return 0;
}

static int on_edge_prefill(void *ctx, const engine_event_t *ev)
{
    world_t *w = ctx;
    tenant_t *T = &w->t[ev->a];
    T->pending &= ~1;
    trace(w, (int)ev->a, "edge_prefill_done", -1, T->prompt);
    return T->pending ? 0 : first_token(w, T);
}

static int on_arrive(void *ctx, const engine_event_t *ev)
{
    world_t *w = ctx;
    tenant_t *T = &w->t[ev->a];
    double now = ev->time;
    if (T->wl.cfg->arrival == ARRIVAL_POISSON) {
        double gap = workload_gap(&T->wl);
        if (isfinite(gap) && engine_schedule(w->eng, now + gap, EV_ARRIVE, ev->a, 0))
            return fail(w, "event queue: out of memory or a non-finite time");
        if (T->busy) {
            if (workload_push(&T->wl, now)) return fail(w, "out of memory");
            return 0;
        }
    }
    return start_request(w, T, now);
}

/* ---- the cloud's half ---------------------------------------------------- */

static int submit_prefill(world_t *w, tenant_t *T, double now)
{
    cloud_job_t j = {0};
    j.tenant = idx(w, T);
    j.kind = CLOUD_PREFILL;
    j.tokens = T->c_prompt;
    j.context = 0;
    if (cloud_submit(w->cloud, T->replica, &j, now)) return fail(w, "out of memory");
    return 0;
}

int edge_admitted(void *ctx, int tenant, int replica, double now)
{
    world_t *w = ctx;
    (void)replica;
    trace(w, tenant, "kv_admit", -1, 0);
    return submit_prefill(w, &w->t[tenant], now);
}

static int cloud_complete(world_t *w, tenant_t *T, double now)
{
    int r = T->replica;
    T->replica = -1;
    cloud_unpin(w->cloud, r);
    if (cloud_release(w->cloud, r, T->kv_bytes, now)) return -1;
    return 0;
}

static int on_up(void *ctx, const engine_event_t *ev)
{
    world_t *w = ctx;
    tenant_t *T = &w->t[ev->a];
    double now = ev->time;
    uint64_t m = ev->b;
    if (msg_kind(m) == MSG_PROMPT) {
        T->c_prompt = T->prompt;
        T->c_output = T->output;
        T->c_committed = 0;
        T->c_pending = 0;
        T->replica = cloud_pin(w->cloud);
        int extra = w->mode == MODE_CLOUD_ONLY ? 0 : w->gamma + 1;
        T->kv_bytes = ((double)T->c_prompt + T->c_output + extra) * w->sh->kv_bytes_per_token;
        if (cloud_reserve(w->cloud, T->replica, (int)ev->a, T->kv_bytes))
            return submit_prefill(w, T, now);
        trace(w, (int)ev->a, "kv_wait", -1, 0);
        return 0;
    }
    /* A block. */
    long block = (long)(msg_x(m) | (msg_y(m) << 14));
    if (msg_epoch(m) != T->c_epoch) {
        w->tally->raw.blocks_dropped++;
        trace(w, (int)ev->a, "block_drop", block, w->gamma);
        return 0;
    }
    trace(w, (int)ev->a, "block_arrive", block, w->gamma);
    cloud_job_t j = {0};
    j.tenant = (int)ev->a;
    j.kind = CLOUD_VERIFY;
    j.tokens = w->gamma + 1;
    /* The last committed token plus the gamma drafts, over what is cached:
     * the prompt, the committed tokens but the last, and the drafts of
     * earlier blocks still undecided (they are cached if accepted, and if
     * not this block is stale anyway). */
    j.context = T->c_prompt + T->c_committed - 1 + w->gamma * T->c_pending;
    j.epoch = T->c_epoch;
    j.block = (uint32_t)block;
    T->c_pending++;
    if (cloud_submit(w->cloud, T->replica, &j, now)) return fail(w, "out of memory");
    return 0;
}

static int verify_done(world_t *w, tenant_t *T, const cloud_job_t *job, double now)
{
    tally_t *tl = w->tally;
    int gamma = w->gamma, cnt = now >= tl->warmup;
    tl->raw.verified_tokens += gamma + 1;
    if (cnt) tl->verified_tokens += gamma + 1;
    /* An earlier block of this tenant in the same iteration (multi_block)
     * was rejected, or finished the request, after this one had started:
     * its compute is spent, its verdict meaningless. */
    if (job->epoch != T->c_epoch) {
        tl->raw.stale_tokens += gamma + 1;
        if (cnt) tl->stale_tokens += gamma + 1;
        return 0;
    }
    T->c_pending--;
    int a = accept_draw(&T->acc, gamma);
    if (a < 0) a = 0;
    if (a > gamma) a = gamma;
    /* Async with every draft accepted: the bonus logit checks the next
     * block's first draft instead of adding a token. */
    int want = (w->mode == MODE_ASYNC && a == gamma) ? gamma : a + 1;
    int left = T->c_output - T->c_committed;
    int n = want < left ? want : left;
    T->c_committed += n;
    tl->raw.verdicts++;
    if (cnt) {
        tl->accepted += a;
        tl->verified_drafts += gamma;
    }
    int complete = T->c_committed >= T->c_output;
    trace(w, job->tenant, "verify_end", (long)job->block, a);
    if ((w->mode == MODE_ASYNC && a < gamma) || complete) {
        T->c_epoch++;
        cloud_purge(w->cloud, T->replica, job->tenant, now);
        T->c_pending = 0;
    }
    if (send_down(w, T, msg_pack(MSG_VERDICT, (uint32_t)a, (uint32_t)n, job->epoch),
                  grp(w, T)->overhead_bytes + (a + 1) * grp(w, T)->bytes_per_token))
        return fail(w, "event queue: out of memory or a non-finite time");
    return complete ? cloud_complete(w, T, now) : 0;
}

int edge_job_done(void *ctx, const cloud_job_t *job, int done, double now)
{
    world_t *w = ctx;
    tenant_t *T = &w->t[job->tenant];
    const world_group_t *g = grp(w, T);
    (void)done;
    switch (job->kind) {
    case CLOUD_VERIFY:
        return verify_done(w, T, job, now);
    case CLOUD_PREFILL:
        if (job->tokens > 0) return 0;   /* more chunks to come */
        T->c_committed = 1;
        trace(w, job->tenant, "prefill_done", -1, T->c_prompt);
        if (send_down(w, T, msg_pack(MSG_FIRST, 0, 0, T->c_epoch),
                      g->overhead_bytes + g->bytes_per_token))
            return fail(w, "event queue: out of memory or a non-finite time");
        break;
    case CLOUD_DECODE:
        T->c_committed++;
        if (send_down(w, T, msg_pack(MSG_TOKEN, 1, 1, T->c_epoch),
                      g->overhead_bytes + g->bytes_per_token))
            return fail(w, "event queue: out of memory or a non-finite time");
        break;
    }
    if (T->c_committed >= T->c_output) {
        T->c_epoch++;
        return cloud_complete(w, T, now);
    }
    if (w->mode == MODE_CLOUD_ONLY) {
        cloud_job_t j = {0};
        j.tenant = job->tenant;
        j.kind = CLOUD_DECODE;
        j.tokens = 1;
        j.context = T->c_prompt + T->c_committed - 1;
        if (cloud_submit(w->cloud, T->replica, &j, now)) return fail(w, "out of memory");
    }
    return 0;
}

/* ---- verdicts and tokens at the edge ------------------------------------ */

static int on_verdict(world_t *w, tenant_t *T, uint64_t m)
{
    tally_t *tl = w->tally;
    double now = engine_now(w->eng);
    int i = idx(w, T);
    if (msg_epoch(m) != T->epoch) {   /* cannot happen: the cloud purges */
        trace(w, i, "verdict_stale", -1, 0);
        return 0;
    }
    int gamma = w->gamma, a = (int)msg_x(m), n = (int)msg_y(m);
    int dc = a < n ? a : n;   /* drafts among the committed tokens */
    T->unverified--;
    tl->raw.draft_committed += dc;
    tl->raw.extra_committed += n - dc;
    tl->raw.discarded += gamma - dc;
    if (now >= tl->warmup) {
        tl->discarded += gamma - dc;
        tl->verdicts++;
        tl->verdict_tokens += n;
    }
    trace(w, i, "verdict_arrive", -1, a);
    stall_end(w, T);
    commit(w, T, n);
    if (T->committed >= T->output) return end_request(w, T);
    if (w->mode == MODE_SYNC) return start_draft(w, T);
    if (a < gamma) {
        trace(w, i, "rollback", (long)T->next_block, T->unverified * gamma);
        discard_pending(w, T);
        T->epoch++;
        return start_draft(w, T);
    }
    if (T->drafting) return 0;
    if (may_draft_more(w, T)) return start_draft(w, T);
    stall_begin(w, T);
    return 0;
}

static int on_down(void *ctx, const engine_event_t *ev)
{
    world_t *w = ctx;
    tenant_t *T = &w->t[ev->a];
    switch (msg_kind(ev->b)) {
    case MSG_FIRST:
        T->pending &= ~2;
        return T->pending ? 0 : first_token(w, T);
    case MSG_TOKEN:
        w->tally->raw.extra_committed++;
        commit(w, T, 1);
        return T->committed >= T->output ? end_request(w, T) : 0;
    default:
        return on_verdict(w, T, ev->b);
    }
}

/* ---- start and finish --------------------------------------------------- */

/* Tenant state above which hint_tenant is used: half a typical L2. */
#define EDGE_HINT_MIN_BYTES ((size_t)512 * 1024)

/* engine_on_hint: pulls the next event's tenant into cache while the
 * current event runs. Tenants are visited in no useful order and 10^4 of
 * them outgrow L2, so otherwise each event began with a few L3 misses. */
static void hint_tenant(void *ctx, const engine_event_t *next)
{
    const world_t *w = ctx;
    const char *p = (const char *)&w->t[next->a];
    /* The array is not line-aligned: also fetch the line of the last byte. */
    for (size_t off = 0; off < sizeof(tenant_t); off += 64)
        __builtin_prefetch(p + off);
    __builtin_prefetch(p + sizeof(tenant_t) - 1);
}

int edge_start(world_t *w)
{
    engine_t *e = w->eng;
    if (engine_on(e, EV_ARRIVE, on_arrive, w) || engine_on(e, EV_EDGE_PREFILL, on_edge_prefill, w) ||
        engine_on(e, EV_DRAFT, on_draft, w) || engine_on(e, EV_UP, on_up, w) ||
        engine_on(e, EV_DOWN, on_down, w))
        return fail(w, "event types");
    /* Prefetching only pays once the tenants outgrow the caches; for a few
     * dozen tenants it is pure overhead (measured ~2% on the default). */
    static const uint32_t tenant_events[] = {EV_ARRIVE, EV_EDGE_PREFILL, EV_DRAFT,
                                             EV_UP, EV_DOWN};
    if ((size_t)w->n * sizeof(tenant_t) >= EDGE_HINT_MIN_BYTES)
        for (size_t k = 0; k < sizeof tenant_events / sizeof *tenant_events; k++)
            if (engine_on_hint(e, tenant_events[k], hint_tenant))
                return fail(w, "event types");
    for (int i = 0; i < w->n; i++) {
        double t = workload_gap(&w->t[i].wl);
        if (isfinite(t) && engine_schedule(e, t, EV_ARRIVE, (uint32_t)i, 0))
            return fail(w, "event queue: out of memory or a non-finite time");
    }
    return 0;
}

void edge_finish(world_t *w, double end)
{
    tally_t *tl = w->tally;
    for (int i = 0; i < w->n; i++) {
        tenant_t *T = &w->t[i];
        if (!T->busy) continue;
        if (T->pending == 0) tl->decode_time += tally_clip(tl, T->t_first, end);
        if (T->stall_since >= 0) tl->stall += tally_clip(tl, T->stall_since, end);
        tl->raw.pending_drafts += (double)T->unverified * w->gamma;
    }
}
