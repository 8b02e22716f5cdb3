/* proto_edge_only — the baseline without a cloud: the edge's draft model
 * generates every token itself, one at a time, unverified. */
#include "entity/edge.h"
#include "entity/proto.h"

static int edgeonly_first_token(repl_t *r, int i)
{
    return edge_token_start(r, &r->et[i]);
}

static int edgeonly_draft_done(repl_t *r, int i)
{
    edge_tenant_t *T = &r->et[i];
    edge_commit_own(r, T);
    int rc = edge_maybe_end(r, T);
    return rc <= 0 ? rc : edge_token_start(r, T);
}

/* One draft step per token, nothing sent. */
static int edgeonly_closed_form(const proto_form_in_t *in, proto_form_t *out)
{
    out->tok_s = 1 / in->draft_s;
    return 0;
}

const proto_ops_t proto_edge_only = {
    .name = "edge-only",
    .drafts = 1,
    .verifies = 0,
    .uses_cloud = 0,
    .uses_window = 0,
    .closed_form = edgeonly_closed_form,
    .first_token = edgeonly_first_token,
    .draft_done = edgeonly_draft_done,
};
