/* proto_sync — synchronous speculation: the edge drafts a block of gamma
 * tokens, sends it, and waits for its verdict; the verdict commits the
 * accepted drafts plus one target token (the correction, or the bonus when
 * all were accepted); then the next block starts. A block of gamma 0 (a
 * policy's choice, sim/model/gamma.h) is plain remote decoding: its verdict
 * commits the one token the cloud decoded. */
#include "entity/ctenant.h"
#include "entity/edge.h"
#include "entity/proto.h"
#include "model/specrate.h"

static int sync_first_token(repl_t *r, int i)
{
    return edge_block_start(r, &r->et[i]);
}

static int sync_draft_done(repl_t *r, int i)
{
    edge_tenant_t *T = &r->et[i];
    if (edge_block_send(r, T)) return -1;
    return edge_stall_begin(r, T);
}

static int sync_verdict_at_edge(repl_t *r, int i, uint64_t msg)
{
    edge_tenant_t *T = &r->et[i];
    int a, gamma;
    int rc = edge_verdict(r, T, msg, &a, &gamma);
    return rc <= 0 ? rc : edge_block_start(r, T);
}

static int sync_job_done(repl_t *r, const cloud_job_t *job, double now)
{
    int a;
    int rc = ctenant_job_begin(r, job, now, &a);
    if (rc <= 0) return rc;
    return ctenant_verdict(r, job, a, a + 1, 0, now);
}

/* A block is drafted (γd; a tree: its levels' steps), sent (its γ tokens
 * — a tree's nodes — serialised, then
 * propagated), verified (v) and its verdict of E[a+1] tokens comes back;
 * the next block starts only then, so by renewal-reward the rate is
 * E[a+1] per block time, and the tenant alternates that time less v away
 * from the cloud with one verify (the MVA's closed network). */
static int sync_closed_form(const proto_form_in_t *in, proto_form_t *out)
{
    double E = specrate_law_sync_len(in->law);
    double bpt = in->bytes_per_token, ovh = in->overhead_bytes;
    double block = in->block_draft_s +
                   specrate_link_s(in->gamma * bpt + ovh, in->up_bps) + in->up_prop_s +
                   in->verify_s + specrate_link_s(ovh + E * bpt, in->down_bps) +
                   in->down_prop_s;
    proto_form_blocks(out, E, block, "block_time_sync_s", "itl_sync_s");
    out->cycle_s = block;
    out->cycle_tokens = E;
    return 0;
}

const proto_ops_t proto_sync = {
    .name = "sync",
    .drafts = 1,
    .verifies = 1,
    .uses_cloud = 1,
    .uses_window = 0,
    .trees = 1,
    .block_rate = specrate_sync_rate,   /* a block takes γd + rtt, commits E[a+1] */
    .closed_form = sync_closed_form,
    .first_token = sync_first_token,
    .draft_done = sync_draft_done,
    .block_at_cloud = ctenant_block,
    .verdict_at_edge = sync_verdict_at_edge,
    .job_done = sync_job_done,
};
