/* realdraft — the real draft steps of one tenant for the testbed's
 * `--real-draft` (docs/testbed.md, "Real drafting").
 *
 * A draft of n tokens from context c runs n one-token decode steps of the
 * draft model (testbed/realverify.h with one job of one token over its
 * context c, c + 1, ...) on a worker thread with one kernel thread, so that
 * the fleet's event loop keeps running while it computes; an eventfd says
 * when a draft is done. A draft that the edge abandons (a rollback, the
 * request's end) is superseded by the next one: the worker drops it after
 * the token step in progress.
 */
#ifndef TESTBED_REALDRAFT_H
#define TESTBED_REALDRAFT_H

#include <stdint.h>

#include "model/cards.h"
#include "base/err.h"
#include "realverify.h"

typedef struct realdraft realdraft_t;

/* Builds card's weights at quant (PREC_W4A16 or PREC_FP16), room for
 * contexts up to max_context (longer ones are clamped, as realverify's),
 * and starts the worker. NULL with err on failure; free with
 * realdraft_free (stops and joins the worker). */
realdraft_t *realdraft_create(const llm_card_t *card, int quant, int max_context,
                              err_t *err);
void realdraft_free(realdraft_t *d);
/* What realdraft_create allocates for its model (realverify_bytes of one
 * job of one token over max_context, as it builds it). */
realverify_size_t realdraft_bytes(const llm_card_t *card, int quant, int max_context);
/* The eventfd that becomes readable when a draft is done. */
int realdraft_fd(const realdraft_t *d);
/* Starts drafting n >= 0 tokens after context tokens, as draft gen; a draft
 * still in progress is abandoned. */
void realdraft_start(realdraft_t *d, int context, int n, uint64_t gen);
/* After the eventfd was readable: 1 with the last finished draft's
 * generation, tokens and measured time (s), 0 when none is waiting (it
 * was taken already), -1 with err when a step failed. */
int realdraft_take(realdraft_t *d, uint64_t *gen, int *n, double *dt, err_t *err);

#endif
