/* proto_cloud_spec — speculation on the cloud: the draft (cloud.draft, a
 * model card run on the replica's GPU, or cloud.draft_time) drafts next to
 * the target, as cloud jobs batched with every tenant's other work. After
 * the prefill, each block is gamma draft steps (one token each, one
 * iteration each) and one verify job of gamma + 1 tokens; its verdict
 * commits the accepted drafts plus the target's token (the correction, or
 * the bonus), and the committed tokens go down in one message. No block
 * crosses the WAN: the edge only sends the prompt and takes the first
 * token and one message per block, as cloud-only streams its tokens. The
 * tenant's speculation-length policy runs on the cloud
 * (sim/entity/ctenant.h, ctenant_spec_*). A token tree's block drafts one
 * level per step, its nodes together (docs/design.md "Token trees"). */
#include "entity/ctenant.h"
#include "entity/edge.h"
#include "entity/proto.h"
#include "model/specrate.h"

static int cloudspec_first_token(repl_t *r, int i)
{
    (void)r;
    (void)i;
    return 0;   /* the cloud drafts, verifies and sends the rest */
}

static int cloudspec_block_at_edge(repl_t *r, int i, uint64_t msg)
{
    int rc = edge_cloud_block(r, &r->et[i], msg);
    return rc < 0 ? rc : 0;
}

static int cloudspec_job_done(repl_t *r, const cloud_job_t *job, double now)
{
    int i = job->tenant, a, rc;
    switch (job->kind) {
    case CLOUD_DRAFT:
        return ctenant_spec_drafted(r, job, now);
    case CLOUD_PREFILL:   /* the first token goes down; drafting starts */
        rc = ctenant_stream_done(r, job, now);
        return rc <= 0 ? rc : ctenant_spec_block(r, i, now);
    default:
        rc = ctenant_job_begin(r, job, now, &a);
        if (rc <= 0) return rc;
        ctenant_spec_verified(r, job, a, now);
        if (ctenant_verdict(r, job, a, a + 1, 0, now) != 0) return -1;
        return r->ct[i].committed < r->ct[i].output ? ctenant_spec_block(r, i, now) : 0;
    }
}

/* One tenant alone: each block takes γ iterations of one draft step
 * (cloud_draft_s each; a token tree: one step per level, of its width:
 * cloud_block_draft_s in all) and one verify iteration of γ + 1 tokens
 * (verify_s), back to back on its replica, and commits E[a+1] tokens; the
 * links only delay the stream (a message per block, in order), so by
 * renewal-reward the rate is E[a+1] per block time. */
static int cloudspec_closed_form(const proto_form_in_t *in, proto_form_t *out)
{
    if (!(in->cloud_draft_s >= 0)) return 1;   /* no cloud draft described */
    double E = specrate_law_sync_len(in->law);
    proto_form_blocks(out, E, in->cloud_block_draft_s + in->verify_s,
                      "block_time_cloud_spec_s", "itl_cloud_spec_s");
    out->figs[out->nfigs].key = "cloud_draft_time_s";
    out->figs[out->nfigs++].v = in->cloud_draft_s;
    return 0;
}

const proto_ops_t proto_cloud_spec = {
    .name = "cloud-spec",
    .drafts = 0,
    .verifies = 1,
    .uses_cloud = 1,
    .uses_window = 0,
    .cloud_drafts = 1,
    .trees = 1,
    /* a block is γ draft steps of d and a verify, one after the other at
     * the cloud, and commits E[a+1]: sync's rate with the round trip R
     * standing for what follows the drafting (queueing and verification) */
    .block_rate = specrate_sync_rate,
    .closed_form = cloudspec_closed_form,
    .first_token = cloudspec_first_token,
    .verdict_at_edge = cloudspec_block_at_edge,
    .job_done = cloudspec_job_done,
};
