/* lmedge — the edge fleet's real tokens (build/testbed run --real-model):
 * each tenant's text and drafts beside the simulator's edge code that
 * decides when to draft, send and roll back (testbed/fleet.c runs both).
 *
 * A tenant's text es is its request's prompt (a prompt of the prompt file,
 * as the model's chat template wraps it: request r of tenant i takes
 * prompt (i + r·tenants) mod count), the tokens the verifier committed,
 * then the drafts of the blocks in flight and of the draft in progress.
 * The fleet calls in at the simulator's events:
 *   PROMPT leaving         lmedge_prompt: a new request and its ids;
 *   a draft starting       lmedge_draft_start: its k drafts are computed
 *                          by the real draft model (testbed/lmdraft.h),
 *                          batched with the other tenants'; the draft ends
 *                          when they are done and not before the draft
 *                          time the scenario gives (the device's pace);
 *   the draft ending       lmedge_draft_end: the drafts join the text;
 *   BLOCK leaving          lmedge_block: the block's ids;
 *   FIRST or VERDICT       lmedge_arrived when its frame is read, then
 *                          lmedge_down when the simulator's edge takes it:
 *                          the committed ids replace the drafts from the
 *                          block's start on (a rejection: the later drafts
 *                          go), a block accepted whole under async keeps
 *                          its drafts.
 * Blocks carry the epoch they were sent in; a verdict takes the oldest
 * block in flight of its epoch, those of older epochs being stale. A
 * verdict whose accepted ids are not the block's drafts is counted (it
 * would mean the two sides disagree on the text).
 */
#ifndef TESTBED_LMEDGE_H
#define TESTBED_LMEDGE_H

#include <stdint.h>

#include "base/err.h"
#include "wire.h"

typedef struct lmedge_opts {
    const char *model;      /* GGUF file */
    const char *draft;      /* draft spec (kernels/llm/cli_args.h): w4a16, ... */
    const char *prompts;    /* prompt file (kernels/llm/prompts.h) */
    int threads;            /* the draft model's kernel threads */
    double warmup;          /* run time before which lateness is counted apart */
} lmedge_opts_t;

typedef struct lmedge lmedge_t;

/* Loads the model, its draft and the prompts for n tenants. NULL with err
 * (ERR_INPUT for a bad file or spec). Free with lmedge_free. */
lmedge_t *lmedge_create(const lmedge_opts_t *o, int n, err_t *err);
void lmedge_free(lmedge_t *e);
/* The drafter's eventfd, for the fleet's epoll set. */
int lmedge_fd(const lmedge_t *e);

/* Tenant i's next request: fills m's prompt count and ids (pointing into
 * e, valid until the next call) and starts reading the prompt into the
 * draft model's cache. 0, or -1 with err. */
int lmedge_prompt(lmedge_t *e, int i, wire_msg_t *m, err_t *err);
/* Tenant i starts drafting k tokens, generation gen, at now; model_s is
 * the draft's time by the scenario. 0, or -1 with err. */
int lmedge_draft_start(lmedge_t *e, int i, uint64_t gen, int k, double now, double model_s,
                       err_t *err);
/* Drafts the drafter finished: for each current one, *tenant, *gen and *at
 * (when the draft ends: now, or later when the scenario's draft time has
 * not passed yet). Returns 1 per draft (call again), 0 when none is left,
 * -1 with err. */
int lmedge_ready(lmedge_t *e, double now, int *tenant, uint64_t *gen, double *at, err_t *err);
/* The draft of generation gen ended at the simulator's edge: its tokens
 * join tenant i's text. */
void lmedge_draft_end(lmedge_t *e, int i, uint64_t gen);
/* Tenant i's block of gamma drafts leaves in epoch `epoch`: m->ids. 0, or
 * -1 with err (no such drafts: a bug). */
int lmedge_block(lmedge_t *e, int i, wire_msg_t *m, err_t *err);
/* A FIRST or VERDICT frame for tenant i was read (its ids are kept until
 * lmedge_down). 0, or -1 with err. */
int lmedge_arrived(lmedge_t *e, int i, const wire_msg_t *m, err_t *err);
/* The simulator's edge takes tenant i's oldest arrived frame now. 0, or -1
 * with err. */
int lmedge_down(lmedge_t *e, int i, err_t *err);

/* What the run measured: drafts and tokens made, the drafter's seconds
 * and the scenario's for them, verdicts whose accepted ids disagreed with
 * the drafts (0 unless the sides disagree), and the drafts that ended
 * after the scenario's draft time (the drafter fell behind) with their
 * summed lateness: all of them, and those that ended after the warm-up
 * (the measured part; requests starting together at time 0 make the
 * drafter fall behind for a while, which the warm-up is there to hide),
 * with the drafts made after the warm-up to hold them against. */
typedef struct lmedge_stats {
    double drafts, tokens, real_s, model_s, mismatches, requests;
    double late, late_s, late_measured, late_measured_s, drafts_measured;
} lmedge_stats_t;
void lmedge_stats(const lmedge_t *e, lmedge_stats_t *st);
/* A name for reports: "w4a16 draft of FILE". */
const char *lmedge_name(const lmedge_t *e);

#endif
