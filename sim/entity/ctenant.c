#include "entity/ctenant.h"

#include "entity/msg.h"

static const repl_group_t *grp(const repl_t *r, const ctenant_t *C)
{
    return &r->sh->groups[C->group];
}

int ctenant_init(repl_t *r, int i, err_t *err)
{
    ctenant_t *C = &r->ct[i];
    const scenario_t *s = r->s;
    C->group = repl_group_of(r, i);
    const repl_group_t *g = grp(r, C);
    const protocol_cfg_t *p = g->protocol;
    const network_cfg_t *net = &g->cfg->network;
    C->proto = p->proto;
    C->replica = -1;
    C->kv_extra = p->proto->verifies ? p->gamma_policy->limit(p->gamma) + 1 : 0;
    if (network_link_init(&C->down, net->rtt, net->downlink_bps, &net->jitter,
                          s->seed, r->rep, (uint64_t)i, RNG_DOWNLINK, err) ||
        repl_link_vary(g, s->seed, r->rep, i, 1, &C->down, err))
        return -1;
    if (p->proto->verifies &&
        accept_init(&C->acc, g->acceptance, s->seed,
                    r->rep, i, err))
        return -1;
    if (p->proto->cloud_drafts) {
        /* The policy observes the cloud's own drafting and verification
         * (ctenant_spec_*), as an edge's observes its device and link. */
        gamma_env_t genv = {.alpha_prior = accept_cfg_mean(g->acceptance, p->gamma),
                            .rate = p->proto->block_rate, .window = 1};
        if (gamma_state_init_env(&C->gst, p->gamma_policy, p->gamma, i, &genv))
            return err_set(err, ERR_RUNTIME, "cloud: gamma policy '%s' failed to start "
                           "for gamma %d", p->gamma_policy->name, p->gamma);
        C->gpol = p->gamma_policy;
    }
    return 0;
}

void ctenant_fini(ctenant_t *C)
{
    network_link_fini(&C->down);
    accept_fini(&C->acc);
    if (C->gpol) gamma_state_fini(&C->gst, C->gpol);
    C->gpol = NULL;
}

static int send_down(repl_t *r, ctenant_t *C, int i, uint64_t m, double bytes)
{
    double now = engine_now(r->eng);
    double at = network_send(&C->down, now, bytes);
    tally_down_bytes(r->tally, i, now, bytes);
    if (engine_schedule(r->eng, at, EV_DOWN, (uint32_t)i, m))
        return repl_fail(r, REPL_SCHED_FAIL);
    return 0;
}

/* The SLO deadline of a job of C's request (cloud_job_t.deadline, 0 =
 * none), read by the deadline orderings (sim/model/order.h). A prefill is due
 * when the TTFT bound ends: the request's start (the edge's timestamp, sent
 * with the prompt, C->t0) + ttft. A verify or decode job is due when the TPOT SLO's
 * schedule wants the next token: the n-th token after the first by
 * t_first + n * tpot, t_first being when the cloud produced the first one,
 * so the next is due at t_first + committed * tpot. This is the bound the
 * SLO states on average ((e2e - TTFT) / (tokens - 1) <= tpot): a request
 * that fell behind becomes urgent, one ahead can wait. */
static double deadline(const repl_t *r, const ctenant_t *C, int kind)
{
    const slo_cfg_t *slo = &grp(r, C)->cfg->slo;
    if (kind == CLOUD_PREFILL)
        return slo->ttft > 0 ? C->t0 + slo->ttft : 0;
    return slo->tpot > 0 ? C->t_first + C->committed * slo->tpot : 0;
}

static int submit(repl_t *r, ctenant_t *C, cloud_job_t *j, double now)
{
    j->deadline = deadline(r, C, j->kind);
    j->priority = grp(r, C)->cfg->priority;
    if (cloud_submit(r->cloud, C->replica, j, now)) return repl_fail(r, "out of memory");
    return 0;
}

static int submit_prefill(repl_t *r, int i, double now)
{
    ctenant_t *C = &r->ct[i];
    cloud_job_t j = {0};
    j.tenant = i;
    j.kind = CLOUD_PREFILL;
    j.tokens = C->syncing ? C->sync_tokens : C->prompt - C->cached;
    j.context = C->syncing ? C->sync_context : C->cached;
    return submit(r, C, &j, now);
}

int ctenant_admitted(void *ctx, int tenant, int replica, double now)
{
    repl_t *r = ctx;
    (void)replica;
    repl_trace(r, tenant, "kv_admit", -1, 0);
    tally_admitted(r->tally, tenant, now, now - r->ct[tenant].t_prompt);
    return submit_prefill(r, tenant, now);
}

static int prefix_cache_on(const repl_t *r)
{
    return r->s->cloud.prefix_cache.policy == PREFIX_CACHE_LRU;
}

/* Pins the request whose body is b to a replica and takes its session's
 * prefix from the prefix cache when it is resident there: C->cached
 * tokens. A session's first turn (no prefix) drops what the tenant's last
 * session left, which no later turn can use. Counts the turn (hit or
 * miss). 0, or -1 when a release's admission failed. */
static int request_pin(repl_t *r, int i, const msg_prompt_t *b, double now)
{
    ctenant_t *C = &r->ct[i];
    C->cached = 0;
    int at = cloud_cache_replica(r->cloud, i);
    if (at >= 0 && b->prefix > 0) {
        cloud_cache_take(r->cloud, i);
        C->cached = b->prefix;
        C->replica = at;
        cloud_pin_to(r->cloud, at);
    } else {
        if (at >= 0 && cloud_cache_drop(r->cloud, i, now)) return -1;
        C->replica = cloud_pin(r->cloud);
    }
    tally_prefix(r->tally, i, now, b->prefix, C->cached > 0);
    return 0;
}

/* A request whose body reached the cloud at now: KV, then its prefill. */
static int request_begin(repl_t *r, int i, const msg_prompt_t *b, double now)
{
    ctenant_t *C = &r->ct[i];
    msg_prompt_t body = *b;
    if (C->proto->verifies) accept_request(&C->acc, i, r->s->ntenants, C->requests);
    C->requests++;
    C->prompt = body.prompt;
    C->output = body.output;
    C->t0 = body.t0;
    C->committed = 0;
    C->pending_drafts = 0;
    if (request_pin(r, i, &body, now)) return -1;
    double bpt = cloud_kv_bytes_per_token(r->cloud, C->replica);
    C->kv_bytes = ((double)C->prompt + C->output + C->kv_extra) * bpt;
    C->t_prompt = now;
    /* A request the whole cache cannot hold would over-commit it (see
     * sim/entity/cloud.h); lengths the loader could bound were checked there. */
    double cap = cloud_kv_capacity(r->cloud, C->replica);
    if (C->kv_bytes > cap)
        return err_set(r->err, ERR_INPUT,
                       "cloud.kv_capacity: a request of %d prompt + %d output tokens "
                       "(+ %d for a block) needs %.6g bytes of KV (%.6g per token), more "
                       "than replica %d's whole KV cache of %.6g bytes (at t=%g s)",
                       C->prompt, C->output, C->kv_extra, C->kv_bytes,
                       bpt, C->replica, cap, now);
    /* A hit's prefix is reserved already (it was cached): the request
     * reserves the rest, and holds kv_bytes in all. */
    double rest = ((double)C->prompt - C->cached + C->output + C->kv_extra) * bpt;
    if (C->cached > 0) C->kv_bytes = (double)C->cached * bpt + rest;
    if (cloud_reserve(r->cloud, C->replica, i, rest)) {
        tally_admitted(r->tally, i, now, 0);
        return submit_prefill(r, i, now);
    }
    repl_trace(r, i, "kv_wait", -1, 0);
    return 0;
}

int ctenant_prompt(repl_t *r, int i, double now)
{
    msg_prompt_t body;
    if (msg_prompt_take(&r->prompt_box[i], &body))
        return repl_fail(r, "a prompt message reached the cloud without its body");
    return request_begin(r, i, &body, now);
}

/* The request is over at the cloud. With the prefix cache, a session's
 * turn that ran to its end (`keep`) leaves its prompt and output cached as
 * the next turn's prefix; everything else is released. */
static int complete(repl_t *r, ctenant_t *C, int keep, double now)
{
    int rep = C->replica, i = (int)(C - r->ct);
    C->replica = -1;
    cloud_unpin(r->cloud, rep);
    double bytes = C->kv_bytes;
    if (keep && prefix_cache_on(r) && grp(r, C)->cfg->workload.session.has_turns) {
        double kept = ((double)C->prompt + C->output) *
                      cloud_kv_bytes_per_token(r->cloud, rep);
        cloud_cache_put(r->cloud, rep, i, kept);
        bytes -= kept;
    }
    return cloud_release(r->cloud, rep, bytes, now) ? -1 : 0;
}

int ctenant_resync(repl_t *r, int i, double now)
{
    ctenant_t *C = &r->ct[i];
    msg_resync_t b;
    if (msg_resync_take(&r->resync_box[i], &b)) return 0;   /* applied already */
    repl_trace(r, i, "resync_arrive", -1, b.committed);
    C->epoch = b.epoch;
    /* A request the cloud finished while the edge was away is not held:
     * the edge's must then start afresh as well. */
    int fresh = b.fresh || C->replica < 0;
    if (C->replica >= 0) {
        cloud_purge(r->cloud, C->replica, i, now);
        C->pending_drafts = 0;
        if ((fresh || !b.active) && complete(r, C, 0, now)) return -1;
    }
    if (!b.active) return 0;
    /* The KV holds the prompt and every committed token but the last
     * (the next verify feeds that one): afresh, all of them; else the
     * tokens committed since the fallback began. */
    C->syncing = 1;
    C->sync_fresh = fresh;
    C->sync_committed = b.committed;
    if (fresh) {
        C->sync_tokens = b.prompt + b.committed - 1;
        C->sync_context = 0;
        msg_prompt_t body = {.prompt = b.prompt, .output = b.output, .t0 = b.t0};
        return request_begin(r, i, &body, now);
    }
    C->sync_tokens = b.committed - b.base;
    C->sync_context = C->prompt + b.base - 1;
    return submit_prefill(r, i, now);
}

int ctenant_block(repl_t *r, int i, uint64_t m, double now)
{
    ctenant_t *C = &r->ct[i];
    int gamma = msg_gamma(m);
    long block = (long)C->blocks_in++;
    if (msg_epoch(m) != msg_epoch_of(C->epoch)) {
        r->tally->raw.blocks_dropped++;
        repl_trace(r, i, "block_drop", block, gamma);
        return 0;
    }
    repl_trace(r, i, "block_arrive", block, gamma);
    cloud_job_t j = {0};
    j.tenant = i;
    j.kind = CLOUD_VERIFY;
    j.tokens = gamma + 1;
    /* The last committed token plus the gamma drafts, over what is cached:
     * the prompt, the committed tokens but the last, and the drafts of
     * earlier blocks still undecided (they are cached if accepted, and if
     * not this block is stale anyway). */
    j.context = C->prompt + C->committed - 1 + C->pending_drafts;
    j.epoch = C->epoch;
    j.block = (uint32_t)block;
    C->pending_drafts += gamma;
    return submit(r, C, &j, now);
}

/* A verify job finished: counts its tokens; returns 1 with *a drafts
 * accepted (drawn from the acceptance model), or 0 when the job was stale
 * (its epoch ended while it ran). */
static int verify_begin(repl_t *r, const cloud_job_t *job, double now, int *a)
{
    tally_t *tl = r->tally;
    ctenant_t *C = &r->ct[job->tenant];
    int tokens = job->tokens, gamma = tokens - 1;
    /* An earlier block of this tenant in the same iteration (multi_block)
     * was rejected, or finished the request, after this one had started:
     * its compute is spent, its verdict meaningless. */
    int stale = job->epoch != C->epoch;
    tally_verified(tl, job->tenant, now, tokens, stale);
    if (stale) return 0;
    C->pending_drafts -= gamma;
    /* A block of no drafts has nothing to judge (and draws nothing, so the
     * acceptance stream of the other blocks is as without it). */
    const tree_t *t = &grp(r, C)->protocol->tree;
    int tw = 0;
    int d = t->n > 0 && gamma == t->n ? accept_draw_tree(&C->acc, t, &tw)
            : gamma > 0               ? accept_draw(&C->acc, gamma)
                                      : 0;
    *a = d < 0 ? 0 : d > gamma ? gamma : d;
    C->whole = t->n > 0 ? tw : *a == gamma;
    return 1;
}

int ctenant_job_begin(repl_t *r, const cloud_job_t *job, double now, int *a)
{
    if (job->kind != CLOUD_VERIFY) return ctenant_stream_done(r, job, now) < 0 ? -1 : 0;
    return verify_begin(r, job, now, a);
}

int ctenant_verdict(repl_t *r, const cloud_job_t *job, int a, int want,
                    int reject, double now)
{
    tally_t *tl = r->tally;
    int i = job->tenant, gamma = job->tokens - 1;
    ctenant_t *C = &r->ct[i];
    int left = C->output - C->committed;
    int n = want < left ? want : left;
    C->committed += n;
    /* Positions committed past those the block judged (its accepted
     * drafts and the rejected one): a sync verdict's bonus token, or the
     * one token of a block of no drafts. */
    accept_skip(&C->acc, n - (a < gamma ? a + 1 : gamma));
    tl->raw.verdicts++;
    tally_accepted(tl, i, now, a, gamma);
    int done = C->committed >= C->output;
    repl_trace(r, i, "verify_end", (long)job->block, a);
    if (reject || done) {
        C->epoch++;
        cloud_purge(r->cloud, C->replica, i, now);
        C->pending_drafts = 0;
    }
    const repl_group_t *g = grp(r, C);
    if (send_down(r, C, i, msg_pack(MSG_VERDICT, (uint32_t)a, (uint32_t)n,
                                    (uint32_t)gamma, job->epoch),
                  g->overhead_bytes + (a + 1) * g->bytes_per_token))
        return -1;
    return done ? complete(r, C, 1, now) : 0;
}

int ctenant_stream_done(repl_t *r, const cloud_job_t *job, double now)
{
    int i = job->tenant;
    ctenant_t *C = &r->ct[i];
    const repl_group_t *g = grp(r, C);
    double bytes = g->overhead_bytes + g->bytes_per_token;
    if (job->kind == CLOUD_PREFILL) {
        if (job->tokens > 0) return 0;   /* more chunks to come */
        if (!C->syncing || C->sync_fresh) C->t_first = now;
        C->committed = C->syncing ? C->sync_committed : 1;
        C->syncing = 0;
        repl_trace(r, i, "prefill_done", -1, C->prompt);
        if (send_down(r, C, i, msg_pack(MSG_FIRST, 0, 0, 0, C->epoch), bytes)) return -1;
    } else {
        C->committed++;
        if (send_down(r, C, i, msg_pack(MSG_TOKEN, 1, 1, 0, C->epoch), bytes)) return -1;
    }
    if (C->committed >= C->output) {
        C->epoch++;
        return complete(r, C, 1, now);
    }
    return 1;
}

int ctenant_decode(repl_t *r, int i, double now)
{
    ctenant_t *C = &r->ct[i];
    cloud_job_t j = {0};
    j.tenant = i;
    j.kind = CLOUD_DECODE;
    j.tokens = 1;
    j.context = C->prompt + C->committed - 1;
    return submit(r, C, &j, now);
}

/* ---- cloud-side speculation ------------------------------------------- */

/* Queues draft step k (0-based) of the block: one token of the draft over
 * the prompt, the committed tokens and the block's drafts so far; a token
 * tree's level k: its nodes together, each over that context and its k
 * ancestors (docs/design.md "Token trees"). */
static int submit_draft(repl_t *r, int i, double now)
{
    ctenant_t *C = &r->ct[i];
    const tree_t *t = &grp(r, C)->protocol->tree;
    cloud_job_t j = {0};
    j.tenant = i;
    j.kind = CLOUD_DRAFT;
    j.tokens = t->n > 0 ? t->width[C->spec_drafted] : 1;
    j.context = C->prompt + C->committed - 1 + C->spec_drafted;
    j.epoch = C->epoch;
    return submit(r, C, &j, now);
}

/* The block is drafted: its verify job is queued as an edge's block
 * would be on arrival (ctenant_block), with no link in between. */
static int spec_verify(repl_t *r, int i, double now)
{
    ctenant_t *C = &r->ct[i];
    int g = C->spec_gamma;
    C->spec_sent = now;
    if (C->gpol->on_sent) C->gpol->on_sent(&C->gst, i, g, C->spec_start, now);
    return ctenant_block(r, i, msg_pack(MSG_BLOCK, 0, 0, (uint32_t)g, C->epoch), now);
}

int ctenant_spec_block(repl_t *r, int i, double now)
{
    ctenant_t *C = &r->ct[i];
    int g = gamma_next(C->gpol, &C->gst, i, now);
    if (g < 0 || g > C->gst.limit)
        return err_set(r->err, ERR_RUNTIME,
                       "simulation: gamma policy '%s' returned gamma %d outside "
                       "[0, %d]", C->gpol->name, g, C->gst.limit);
    C->spec_gamma = g;
    C->spec_drafted = 0;
    C->spec_start = now;
    return g > 0 ? submit_draft(r, i, now) : spec_verify(r, i, now);
}

int ctenant_spec_drafted(repl_t *r, const cloud_job_t *job, double now)
{
    int i = job->tenant;
    ctenant_t *C = &r->ct[i];
    if (job->epoch != C->epoch) return 0;   /* its request is over */
    C->spec_drafted++;
    /* Draft steps per block: a tree's levels, a chain's gamma. */
    const tree_t *t = &grp(r, C)->protocol->tree;
    int steps = t->n > 0 ? t->depth : C->spec_gamma;
    return C->spec_drafted < steps ? submit_draft(r, i, now) : spec_verify(r, i, now);
}

void ctenant_spec_verified(repl_t *r, const cloud_job_t *job, int a, double now)
{
    ctenant_t *C = &r->ct[job->tenant];
    if (C->gpol->on_verdict)
        C->gpol->on_verdict(&C->gst, job->tenant, job->tokens - 1, a, C->spec_sent, now);
}
