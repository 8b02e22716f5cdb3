/* lmdraft — the edge fleet's real draft model (build/testbed run
 * --real-model): one thread that drafts for every tenant, batching the
 * tenants' decode steps (one token of each drafting tenant per forward
 * pass), each tenant with its own KV cache (kernels/llm/llm.h).
 *
 * The event loop hands a tenant a job: its whole text so far and k tokens
 * to draft greedily after it (k = 0: only read the text, a prefill done
 * ahead of the first draft). The thread keeps, per tenant, the tokens its
 * cache holds, so a job reads only what is new: after a rejection it cuts
 * the cache back to the part the new text shares with it. A job handed
 * over while the tenant's previous one runs replaces it (the drafts of a
 * rolled-back block are not wanted). A finished job is queued for the
 * loop, whose epoll set watches lmdraft_fd.
 */
#ifndef TESTBED_LMDRAFT_H
#define TESTBED_LMDRAFT_H

#include <stdint.h>

#include "base/err.h"
#include "llm.h"

#define LMDRAFT_K_MAX 64

typedef struct lmdraft lmdraft_t;

/* A drafter over model (borrowed; it must outlive the drafter) for ntenants
 * tenants, texts up to capacity tokens, threads kernel threads. NULL with
 * err. Free with lmdraft_free (stops the thread). */
lmdraft_t *lmdraft_create(const llm_model_t *model, int ntenants, int capacity, int threads,
                          err_t *err);
void lmdraft_free(lmdraft_t *d);

/* Tenant i's job: text[0..n) then k (0..LMDRAFT_K_MAX) drafts, tagged gen.
 * 0, or -1 with err (a text too long). */
int lmdraft_submit(lmdraft_t *d, int i, uint64_t gen, const int32_t *text, int n, int k,
                   err_t *err);

/* The eventfd that becomes readable when jobs finish. */
int lmdraft_fd(const lmdraft_t *d);

typedef struct lmdraft_done {
    int tenant, k;
    uint64_t gen;
    int32_t tok[LMDRAFT_K_MAX];
    double secs;            /* from the job's start to its end */
} lmdraft_done_t;

/* Takes a finished job: 1 with *out, 0 when none is left, -1 with err when
 * the thread failed. */
int lmdraft_take(lmdraft_t *d, lmdraft_done_t *out, err_t *err);

/* The tokens tenant i's cache holds, read under the lock (a finished job's
 * text is all in it; for tests and reports). */
int lmdraft_held(lmdraft_t *d, int i);

#endif
