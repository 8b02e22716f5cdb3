/* proto_cloud_only — the baseline without an edge model: the cloud
 * prefills the prompt and decodes one token per iteration, streaming each
 * token down. */
#include "entity/ctenant.h"
#include "entity/proto.h"

static int cloud_first_token(repl_t *r, int i)
{
    (void)r;
    (void)i;
    return 0;   /* the cloud streams the rest */
}

static int cloud_job_done(repl_t *r, const cloud_job_t *job, double now)
{
    int rc = ctenant_stream_done(r, job, now);
    return rc <= 0 ? rc : ctenant_decode(r, job->tenant, now);
}

const proto_ops_t proto_cloud_only = {
    .name = "cloud-only",
    .drafts = 0,
    .verifies = 0,
    .uses_cloud = 1,
    .uses_window = 0,
    .first_token = cloud_first_token,
    .job_done = cloud_job_done,
};
