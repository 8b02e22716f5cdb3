/* proto_async — pipelined speculation: the edge keeps drafting while up to
 * protocol.window blocks await their verdicts, assuming each will be
 * accepted whole. A block accepted whole commits its gamma drafts (its
 * bonus logit checks the next block's first draft instead of adding a
 * token). A rejection commits the accepted drafts plus the correction, ends
 * the epoch at the cloud (queued blocks purged, later arrivals dropped) and,
 * when its verdict arrives, at the edge (drafts in flight and in progress
 * discarded, drafting restarts after the correction). A block of gamma 0
 * (a policy's choice, sim/model/gamma.h) is plain remote decoding: its verdict
 * commits the one token the cloud decoded, and the edge drafts nothing
 * after it until that verdict is back. A token tree's block (protocol.tree)
 * is accepted whole when its whole rank-1 chain is, the path the next block
 * is drafted after (docs/design.md "Token trees"). */
#include <math.h>

#include "entity/ctenant.h"
#include "entity/edge.h"
#include "entity/msg.h"
#include "entity/proto.h"
#include "model/specrate.h"
#include "model/tree.h"

/* Drafting may go on while the window has room and the request could still
 * need more tokens than the blocks in flight would give if all were
 * accepted (drafting past that can only be thrown away), and no block of
 * gamma 0 is in flight: its token, decoded by the cloud, is not known to
 * the edge, so nothing after it can be drafted until its verdict. */
static int may_draft_more(const repl_t *r, const edge_tenant_t *T)
{
    /* A token tree's block gives at most its rank-1 chain (what the next
     * block is drafted after); a chain's, its drafts. */
    const tree_t *t = &r->sh->groups[T->group].protocol->tree;
    int ahead = t->n > 0 ? T->unverified * t->first_len : T->inflight;
    return T->unverified < T->window && T->committed + ahead < T->output &&
           T->zeros == 0;
}

static int async_first_token(repl_t *r, int i)
{
    return edge_block_start(r, &r->et[i]);
}

static int async_draft_done(repl_t *r, int i)
{
    edge_tenant_t *T = &r->et[i];
    if (edge_block_send(r, T)) return -1;
    if (may_draft_more(r, T)) return edge_block_start(r, T);
    return edge_stall_begin(r, T);
}

static int async_verdict_at_edge(repl_t *r, int i, uint64_t msg)
{
    edge_tenant_t *T = &r->et[i];
    int a, gamma;
    int rc = edge_verdict(r, T, msg, &a, &gamma);
    if (rc <= 0) return rc;
    /* Rejected unless accepted whole: a whole block commits its a drafts
     * and no bonus, any other commits a + 1 (async_job_done). A chain's
     * whole block has a = gamma; a tree's (a < its nodes) is told by its
     * committed count. */
    if (a < gamma && msg_y(msg) != a) {
        edge_rollback(r, T);
        return edge_block_start(r, T);
    }
    if (T->drafting) return 0;
    if (may_draft_more(r, T)) return edge_block_start(r, T);
    return edge_stall_begin(r, T);
}

static int async_job_done(repl_t *r, const cloud_job_t *job, double now)
{
    int a, gamma = job->tokens - 1;
    int rc = ctenant_job_begin(r, job, now, &a);
    if (rc <= 0) return rc;
    /* A block of no drafts is plain remote decoding: the cloud's token
     * commits (nothing was drafted after it, see may_draft_more). */
    if (gamma == 0) return ctenant_verdict(r, job, 0, 1, 0, now);
    int whole = r->ct[job->tenant].whole;
    return ctenant_verdict(r, job, a, whole ? a : a + 1, !whole, now);
}

/* Renewal-reward over rollback cycles through the pipeline of drafting,
 * both links and the cloud with the window (sim/model/specrate.c derives
 * it): a block's upload carries its γ drafts, a verdict γ + 1 tokens at
 * most. Several blocks in flight: no single-server cycle for the MVA. */
static int async_closed_form(const proto_form_in_t *in, proto_form_t *out)
{
    double bpt = in->bytes_per_token, ovh = in->overhead_bytes;
    int most = in->tree ? in->tree->depth : in->gamma;   /* drafts a verdict keeps */
    specrate_pipe_t pp = {
        .gamma = in->gamma, .window = in->window, .d = in->draft_s, .v = in->verify_s,
        .block_d = in->block_draft_s,
        .up_ser = specrate_link_s(in->gamma * bpt + ovh, in->up_bps),
        .up_prop = in->up_prop_s,
        .down_ser = specrate_link_s(ovh + (most + 1) * bpt, in->down_bps),
        .down_prop = in->down_prop_s,
    };
    out->tok_s = specrate_law_async(&pp, in->law);
    return isnan(out->tok_s) ? -1 : 0;
}

const proto_ops_t proto_async = {
    .name = "async",
    .drafts = 1,
    .verifies = 1,
    .uses_cloud = 1,
    .uses_window = 1,
    .trees = 1,
    .block_rate = specrate_async,   /* the renewal formula with the window */
    .closed_form = async_closed_form,
    .first_token = async_first_token,
    .draft_done = async_draft_done,
    .block_at_cloud = ctenant_block,
    .verdict_at_edge = async_verdict_at_edge,
    .job_done = async_job_done,
};
