/* proto_cloud_only — the baseline without an edge model: the cloud
 * prefills the prompt and decodes one token per iteration, streaming each
 * token down. */
#include "entity/ctenant.h"
#include "entity/proto.h"

static int cloudonly_first_token(repl_t *r, int i)
{
    (void)r;
    (void)i;
    return 0;   /* the cloud streams the rest */
}

static int cloudonly_job_done(repl_t *r, const cloud_job_t *job, double now)
{
    int rc = ctenant_stream_done(r, job, now);
    return rc <= 0 ? rc : ctenant_decode(r, job->tenant, now);
}

/* Tokens stream down as the cloud decodes them: one decode iteration
 * each (the link's delay shifts them all alike). */
static int cloudonly_closed_form(const proto_form_in_t *in, proto_form_t *out)
{
    out->tok_s = 1 / in->decode_s;
    out->nfigs = 1;
    out->figs[0].key = "cloud_iter_time_s";
    out->figs[0].v = in->decode_s;
    return 0;
}

const proto_ops_t proto_cloud_only = {
    .name = "cloud-only",
    .drafts = 0,
    .verifies = 0,
    .uses_cloud = 1,
    .uses_window = 0,
    .closed_form = cloudonly_closed_form,
    .first_token = cloudonly_first_token,
    .job_done = cloudonly_job_done,
};
