/* ctenant — the cloud's view of a tenant: its request as the cloud knows
 * it (lengths and start, copied from the prompt message; tokens committed,
 * drafts of blocks queued, epoch), its KV
 * reservation and replica, its downlink and its acceptance state, and the
 * mechanics every protocol uses on that side: admission and prefill, verify
 * jobs for arriving blocks, verdicts and streamed tokens sent down, and the
 * request's completion. The tenant's protocol (sim/entity/proto.h) decides what a
 * finished job means.
 */
#ifndef SPECSIM_CTENANT_H
#define SPECSIM_CTENANT_H

#include <stdint.h>

#include "model/accept.h"
#include "entity/cloud.h"
#include "base/err.h"
#include "model/gamma.h"
#include "model/network.h"
#include "entity/proto.h"
#include "entity/repl.h"

typedef struct ctenant {
    const proto_ops_t *proto;   /* this tenant's protocol */
    int group;
    int kv_extra;       /* tokens reserved beyond prompt + output: room for
                           one block and its bonus token when verifying */
    network_link_t down;
    accept_t acc;       /* in place: one draw per verdict */
    int replica;        /* -1 while no request holds one */
    int prompt, output, committed;   /* prompt, output: the prompt's */
    int pending_drafts; /* drafts of this epoch's blocks queued or running */
    int whole;          /* the last judged block was accepted whole: every
                           draft of a chain, the whole rank-1 chain of a
                           token tree (what async pipelines on) */
    int cached;         /* prompt tokens its KV held at admission: the
                           session's prefix, taken from the prefix cache
                           (docs/design.md "Sessions"; 0: a miss, or none) */
    uint32_t epoch;
    uint32_t blocks_in; /* blocks received: the next one's id */
    long requests;      /* requests whose prompt reached the cloud */
    double kv_bytes;
    double t0;            /* the request's start, as the prompt said (the
                             TTFT deadline counts from it) */
    double t_prompt;      /* when the prompt reached the cloud (admission wait) */
    double t_first;       /* when the cloud produced its first token (the
                             TPOT deadlines count from it) */
    /* Cloud-side speculation (proto_ops_t.cloud_drafts): the tenant's
     * speculation-length policy runs here, and the block being drafted. */
    const gamma_ops_t *gpol;
    gamma_state_t gst;    /* valid when gpol is set */
    int spec_gamma, spec_drafted;   /* the block's gamma, its drafts done */
    double spec_start;    /* when its first draft step was queued */
    double spec_sent;     /* when its verify job was queued */
    /* protocol.fallback's reconcile (ctenant_resync): the prefill under
     * way catches the KV up with sync_tokens tokens over sync_context
     * cached ones; when it ends the request has sync_committed tokens. */
    int syncing, sync_fresh, sync_tokens, sync_context, sync_committed;
} ctenant_t;

/* Initialises r->ct[i] (downlink, acceptance state). Returns 0, or -1 with
 * err. Undo with ctenant_fini(). */
int ctenant_init(repl_t *r, int i, err_t *err);
void ctenant_fini(ctenant_t *C);

/* The prompt message of tenant i's request reaches the cloud at now: its
 * body (lengths and start, r->prompt_box[i], sim/entity/msg.h) is copied
 * into the tenant; then pin a replica, reserve KV, and prefill once
 * admitted. Returns 0 or -1 (r->err). */
int ctenant_prompt(repl_t *r, int i, double now);
/* A reconcile message (protocol.fallback, msg_resync_t) reached the cloud
 * at now: takes the edge's epoch, drops the blocks queued, lets go of a
 * request the edge finished or replaced, and prefills what the KV lacks
 * of the edge's current one; its end answers as a prompt's does
 * (MSG_FIRST). 0, or -1 with r->err. */
int ctenant_resync(repl_t *r, int i, double now);
/* cloud_cb_t.admitted; ctx is the repl_t. */
int ctenant_admitted(void *ctx, int tenant, int replica, double now);

/* A block message reaches the cloud: queues its verify job (gamma + 1
 * tokens), or drops it when its epoch is over. Returns 0 or -1. */
int ctenant_block(repl_t *r, int i, uint64_t msg, double now);
/* The start of every verifying protocol's job_done: a prefill or decode job
 * is finished (ctenant_stream_done), a verify job counted and its accepted
 * drafts drawn from the acceptance model (0 when the job was stale: its
 * epoch ended while it ran). Returns 1 with *a when a verdict is due (the
 * protocol decides what it commits), 0 when nothing is left to do, -1 on
 * failure. */
int ctenant_job_begin(repl_t *r, const cloud_job_t *job, double now, int *a);
/* Sends the verdict for job: a drafts accepted, `want` tokens to commit
 * (fewer if the request ends first). Ends the epoch, purging the tenant's
 * queued blocks, when `reject` or when the request is complete; then
 * completes it. Returns 0 or -1. */
int ctenant_verdict(repl_t *r, const cloud_job_t *job, int a, int want,
                    int reject, double now);
/* A prefill or decode job finished: sends the first token or the decoded
 * one down, completing the request after its last token. Returns 1 when the
 * request goes on, 0 when it does not (or the prefill has chunks left),
 * -1 on failure. */
int ctenant_stream_done(repl_t *r, const cloud_job_t *job, double now);
/* Queues the next decode step of tenant i's request. Returns 0 or -1. */
int ctenant_decode(repl_t *r, int i, double now);

/* Cloud-side speculation (protocol cloud-spec). ctenant_spec_block starts
 * tenant i's next block: its gamma from the tenant's policy, then gamma
 * draft steps (CLOUD_DRAFT jobs of one token, one at a time) and the
 * block's verify job; a block of gamma 0 is its verify job alone (one
 * decode step). ctenant_spec_drafted takes a finished draft step: queues
 * the next one, or the verify job after the last. ctenant_spec_verified
 * tells the policy a verify job's outcome (a drafts accepted). Each
 * returns 0 or -1 (r->err). */
int ctenant_spec_block(repl_t *r, int i, double now);
int ctenant_spec_drafted(repl_t *r, const cloud_job_t *job, double now);
void ctenant_spec_verified(repl_t *r, const cloud_job_t *job, int a, double now);

#endif
