/* lmserver — the testbed's verifier for a real model (build/testbed run
 * --real-model; docs/testbed.md, "A real model end to end"): its own
 * process, one TCP connection per tenant, the target's real batched
 * forward passes (kernels/llm/llm.h), verdicts decided by comparing tokens.
 *
 * It is a second implementation of the cloud, written for this server and
 * not by running sim/entity/cloud.c or sim/entity/ctenant.c, so that comparing the
 * testbed with the simulator checks the simulator's cloud model instead of
 * re-running it:
 *   - a FIFO queue of jobs (a request's prefill, each block's
 *     verification);
 *   - continuous batching: whenever the model is idle and jobs wait, one
 *     forward pass takes them in arrival order, at most
 *     cloud.batching.max_batch jobs and max_tokens tokens, one job per
 *     tenant (a tenant's later block waits for the verdict of its earlier
 *     one); a prefill longer than the tokens left is split, as chunked
 *     prefill does;
 *   - KV admission: a request reserves its prompt, output and one block of
 *     KV (the simulator's capacity and bytes per token for the scenario's
 *     cards) and waits, in arrival order, while the cache is full;
 *   - per tenant the committed text and its KV cache; a block is verified
 *     over the last committed token and its drafts (γ + 1 rows), greedily
 *     (kernels/llm/spec.h); the cache keeps the accepted tokens;
 *   - epochs as docs/design.md says: a rejection or the request's end
 *     moves the tenant to a new epoch and drops its queued blocks, blocks
 *     of an old epoch are dropped on arrival; a block accepted whole
 *     commits its γ drafts under async (the next block checks the bonus
 *     position), its drafts and the bonus under sync.
 * The forward pass runs on a worker thread so that the event loop keeps
 * reading blocks and sending verdicts, each at the time the downlink model
 * (sim/model/network.h) delivers it. The metrics go to the tally that
 * sim/entity/cloud.c would fill (batch sizes, queue delays, busy time, KV use,
 * acceptance, downlink bytes) and are shipped like server.c's.
 */
#ifndef TESTBED_LMSERVER_H
#define TESTBED_LMSERVER_H

#include <signal.h>

#include "base/err.h"
#include "entity/repl.h"
#include "config/scenario.h"

typedef struct lmserver_opts {
    const char *model;      /* the GGUF file */
    int threads;            /* forward-pass threads */
    int check;              /* after the run: every finished request's text
                               against the target's own greedy text */
    int verbose;            /* print a finished request's text */
    int quiet;
} lmserver_opts_t;

/* Why s cannot run on the real-model verifier (a message for the user,
 * exit 2), or NULL. */
const char *lmserver_refusal(const scenario_t *s);

/* Serves replication rep of s as server_run does (testbed/server.h: the
 * port and then the tally on ctl_fd). 0, or -1 with err. */
int lmserver_run(const scenario_t *s, const repl_shared_t *sh, int rep,
                 const lmserver_opts_t *opt, int ctl_fd, const volatile sig_atomic_t *stop,
                 err_t *err);

#endif
