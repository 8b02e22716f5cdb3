/* edge — a tenant's device and the speculative-decoding protocols
 * (DESIGN §2, /work/notes/semantics.md): request life cycle, drafting, the
 * sync and async (window, epochs, rollback) protocols, the cloud-only and
 * edge-only baselines, and the cloud-side half of each protocol (verdicts,
 * staleness, purges), which the cloud module reaches through its callbacks.
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

#include "accept.h"
#include "cloud.h"
#include "err.h"
#include "network.h"
#include "workload.h"

struct world;

typedef struct tenant {
    int group;
    workload_t wl;
    network_link_t up, down;
    accept_t acc;         /* in place: one draw per verdict */
    gsl_rng *draft_rng, *prefill_rng;   /* NULL when constant / model */
    double *cum;          /* gamma cumulative draft times of the block drafted */
    /* edge view of the current request */
    int busy, pending;    /* pending: 1 edge prefill, 2 first token */
    int prompt, output, committed;
    int unverified;       /* blocks sent, verdict not received */
    int drafting;
    uint32_t epoch, draft_gen, next_block;
    double t0, t_first, t_last, draft_start, stall_since;
    /* cloud view */
    int replica, c_committed, c_pending, c_prompt, c_output;
    uint32_t c_epoch;
    double kv_bytes;
} tenant_t;

/* Initialises tenant i of world w (its streams, links and acceptance
 * state). Returns 0, or -1 with err. Free with edge_tenant_free(). */
int edge_tenant_init(struct world *w, int i, err_t *err);
void edge_tenant_free(tenant_t *t);

/* Registers the protocol's event handlers and schedules every tenant's
 * first request. Returns 0 or -1 (w->err filled). */
int edge_start(struct world *w);
/* Closes open intervals (decode, stalls) at the end of the run. */
void edge_finish(struct world *w, double end);

/* cloud_cb_t callbacks; ctx is the world. */
int edge_job_done(void *ctx, const cloud_job_t *job, int done, double now);
int edge_admitted(void *ctx, int tenant, int replica, double now);

#endif
