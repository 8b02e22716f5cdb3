/* edge — a tenant's device: its state and the mechanics every protocol
 * uses on it (docs/design.md, "Protocols"): the request life cycle (arrival,
 * edge prefill, first token, end), drafting a block or a token, sending a
 * block up, taking a verdict, rollback, commits and stalls. What follows
 * each step is the tenant's protocol's decision (sim/entity/proto.h).
 *
 * Epochs: the cloud bumps a tenant's epoch when it finds a rejection (async)
 * or finishes the request; the edge bumps its own when the verdict saying so
 * arrives. Blocks carry the edge's epoch; the cloud drops blocks whose epoch
 * is not its current one, so stale work is recognised on both sides.
 */
#ifndef SPECSIM_EDGE_H
#define SPECSIM_EDGE_H

#include <stdint.h>

#include <gsl/gsl_rng.h>

#include "base/err.h"
#include "engine/rngbox.h"
#include "model/gamma.h"
#include "model/network.h"
#include "entity/proto.h"
#include "entity/repl.h"
#include "model/workload.h"

/* Copies of a tenant's uplink processes, each walked forward on its own
 * (network_state_at): protocol.fallback's view of the link (probe), and
 * the link-down time over stalls and commit gaps (obs_*, when the link
 * varies). On the heap: most tenants have none, and a tenant's state
 * stays small for fleets of millions. */
typedef struct edge_watch {
    network_link_t probe, obs_stall, obs_gap;
} edge_watch_t;

typedef struct edge_tenant {
    const proto_ops_t *proto;   /* this tenant's protocol */
    const gamma_ops_t *gpol;    /* its speculation-length policy */
    int window;                 /* its protocol.window */
    int group;
    workload_t wl;
    network_link_t up;
    gsl_rng *draft_rng, *prefill_rng;   /* NULL when constant / model */
    /* drift: the start offset, then the device's step factors; NULL when
     * the tenant has no drift, else &drift_box.r (in place: one draw a
     * block must not cost a cache miss on a heap block of its own). */
    gsl_rng *drift_rng;
    rngbox_t drift_box;
    double *cum;          /* cumulative draft times of the draft in progress
                             (room for the policy's limit; in r->cum) */
    gamma_state_t gst;    /* the policy's state */
    /* Send times of the unverified blocks, oldest first: a ring of sent_cap
     * entries from sent_head, `unverified` of them in use. Kept only when
     * the policy observes verdicts (gpol->on_verdict); owned. */
    double *sent;
    int sent_cap, sent_head;
    /* the current request */
    int busy, pending;    /* pending: 1 edge prefill, 2 first token */
    int prompt, output, committed;
    int unverified;       /* blocks sent, verdict not received */
    int inflight;         /* their drafts (the sum of their gammas) */
    int zeros;            /* those of gamma 0 (plain remote decoding): the
                             next draft needs their token first */
    int drafting, draft_n;/* a draft in progress, of draft_n tokens */
    uint32_t epoch, draft_gen, next_block;
    int th_traced;        /* the throttling level last traced (r->thermal) */
    double t0, t_first, t_last, draft_start, stall_since;
    int keep_sent;        /* the ring `sent` is kept (a policy observes
                             verdicts, or fallback.rtt_above counts them) */
    /* protocol.fallback (docs/design.md "Fallback"); fb NULL: off */
    const fallback_cfg_t *fb;
    int fb_state;         /* 0 speculating, 1 decoding locally, 2 reconciling */
    int fb_base;          /* committed when the fallback began */
    int fb_fresh;         /* the request began during it: none at the cloud */
    int fb_cloud;         /* the cloud holds a request not reconciled */
    int fb_seen;          /* a fallback happened: moot messages may arrive */
    int rtt_over;         /* blocks in a row whose round trip > rtt_above */
    uint64_t link_gen;    /* EV_LINK generation: a stall's end makes it moot */
    double fb_since;      /* when the fallback began */
    struct edge_watch *watch; /* owned; NULL without fallback or a varying link */
    int has_obs;          /* watch's observers are kept (the link varies) */
} edge_tenant_t;

/* Draft-buffer entries tenant i needs (its policy's limit, 1 when it
 * drafts single tokens, 0 when it never drafts). */
int edge_cum_size(const repl_t *r, int i);
/* Initialises r->et[i] (streams, uplink, policy state); cum: its draft
 * buffer of edge_cum_size() entries. Returns 0, or -1 with err. Undo with
 * edge_tenant_fini(). */
int edge_tenant_init(repl_t *r, int i, double *cum, err_t *err);
void edge_tenant_fini(edge_tenant_t *T);

/* Schedules every tenant's first arrival. Returns 0 or -1 (r->err). */
int edge_start(repl_t *r);
/* Closes open intervals (decode, stalls) and counts drafts in flight. */
void edge_finish(repl_t *r, double end);

/* Event handlers for tenant i. Each returns 0 or -1 (r->err). */
int edge_arrive(repl_t *r, int i, double now);      /* EV_ARRIVE */
int edge_prefill_done(repl_t *r, int i);            /* EV_EDGE_PREFILL */
int edge_first_msg(repl_t *r, int i);               /* MSG_FIRST arrived */
int edge_token_msg(repl_t *r, int i);               /* MSG_TOKEN arrived */
/* EV_DRAFT of generation gen: 1 when it ends the draft in progress (the
 * protocol's draft_done follows; the edge's busy time is closed), 0 when
 * that draft was abandoned. */
int edge_draft_ended(repl_t *r, int i, uint64_t gen);

/* Starts drafting a block of the gamma the tenant's policy gives. */
int edge_block_start(repl_t *r, edge_tenant_t *T);
/* Starts drafting one token (no verification follows). */
int edge_token_start(repl_t *r, edge_tenant_t *T);
/* Sends the block just drafted to the cloud. */
int edge_block_send(repl_t *r, edge_tenant_t *T);
/* Commits the token just drafted, unverified. */
void edge_commit_own(repl_t *r, edge_tenant_t *T);
/* Takes a verdict: commits its tokens and counts its discarded drafts. Sets
 * *a (drafts accepted) and *gamma (the block's). Returns 1 when the request
 * goes on (the protocol decides how), 0 when it ended, -1 on failure (a
 * verdict of an earlier epoch included: links keep send order, so one is a
 * bug). */
int edge_verdict(repl_t *r, edge_tenant_t *T, uint64_t msg, int *a, int *gamma);
/* A block drafted and verified on the cloud (cloud-side speculation)
 * arrives as a verdict message: commits its tokens, counting its drafts as
 * drafted and, beyond those committed, discarded. Returns as edge_verdict. */
int edge_cloud_block(repl_t *r, edge_tenant_t *T, uint64_t msg);
/* After a rejection: discards the drafts in flight and in progress and
 * moves to the next epoch. */
void edge_rollback(repl_t *r, edge_tenant_t *T);
/* The tenant waits with nothing to do. With protocol.fallback it decodes
 * locally instead when its link is down (now, or when it goes down while
 * the wait lasts). 0, or -1 with r->err. */
int edge_stall_begin(repl_t *r, edge_tenant_t *T);

/* ---- protocol.fallback (docs/design.md "Fallback") --------------------- */
/* A token decoded locally is done (EV_DRAFT while fb_state != 0). */
int edge_local_done(repl_t *r, int i);
/* After a draft (the protocol has sent it): a link found down starts the
 * fallback at once, rather than when the window is spent. 0, or -1. */
int edge_draft_check(repl_t *r, edge_tenant_t *T);
/* EV_LINK of generation gen: the stalled tenant's link may have changed. */
int edge_link_changed(repl_t *r, int i, uint64_t gen);
/* The cloud's answer to the reconcile message arrived: speculation goes on. */
int edge_resumed(repl_t *r, int i);
/* 1 when message m reaching tenant T (which has a fallback policy) is moot:
 * sent by the cloud for an epoch the fallback ended. */
int edge_fallback_down(repl_t *r, edge_tenant_t *T, uint64_t m);
/* After a verdict: fallback.after blocks in a row over fallback.rtt_above
 * start the fallback. 0, or -1. */
int edge_rtt_check(repl_t *r, edge_tenant_t *T);
/* Ends the request when its last token is committed: returns 1 if it goes
 * on, 0 if it ended (and the next one may have started), -1 on failure. */
int edge_maybe_end(repl_t *r, edge_tenant_t *T);

static inline int edge_index(const repl_t *r, const edge_tenant_t *T)
{
    return (int)(T - r->et);
}

#endif
