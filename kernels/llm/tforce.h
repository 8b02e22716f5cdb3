/* tforce — acceptance measured by teacher forcing: the target generates
 * each prompt's text once, then a draft reads that text and, at every
 * position, says whether speculative decoding would have accepted its
 * draft there.
 *
 * Why this is speculative decoding's acceptance, not an approximation:
 *   greedy: a draft at position j is accepted exactly when the draft's
 *     argmax after the committed text equals the target's argmax, and the
 *     committed text is the target's greedy text whatever was accepted
 *     before (lossless). So outcome j = [argmax q_j = t_j] along the
 *     target's text t.
 *   sampling (temperature T): the draft proposes x ~ q_j and keeps it with
 *     probability min(1, p_j(x)/q_j(x)), else the target's token comes from
 *     the residual; the committed token t_j has law p_j either way, and
 *     P(accepted | t_j = t) = min(p_j(t), q_j(t)) / p_j(t). Drawing t_j ~ p_j
 *     (the target sampling alone) and then the outcome with that
 *     probability gives the same joint law of text and outcomes.
 * The stream of outcomes j = 1 .. n−1 (token 0 is the target's first
 * token, from the prefill) is the one the async protocol evaluates: after
 * an acceptance the next draft is for the next position (a block accepted
 * whole has its bonus position checked by the next block's first draft),
 * after a rejection the next draft follows the correction. Blocks of any γ
 * read it as the acceptance-trace replay does (docs/formats.md,
 * "Acceptance trace files"). kernels/llm/specloop.h runs the protocol for
 * real; tests/llm/test_spec.c checks that its blocks equal this stream's.
 */
#ifndef SPECSIM_TFORCE_H
#define SPECSIM_TFORCE_H

#include <stdint.h>

#include "base/err.h"
#include "llm.h"

/* One prompt's text as the target wrote it. */
typedef struct tforce_text {
    const int32_t *prompt;
    int plen;
    int32_t *tok;        /* the generated tokens, n of them (malloc'd) */
    float *ptok;         /* p_j(t_j) at temperature T (sampling; else NULL) */
    int n;
} tforce_text_t;

/* Generates up to n tokens for each of np prompts with the target, batch
 * prompts per forward pass, greedy (temp 0) or sampled (prompt i from
 * rng_stream(seed, 0, i, ...)), stopping a text after the token eos (kept;
 * −1: never). texts[i].prompt/plen must be set; tok and ptok are
 * allocated here (tforce_text_free). The texts do not depend on `batch`
 * (the target is batch-invariant). 0, or -1 with err. */
int tforce_generate(const llm_model_t *target, llm_run_t *r, tforce_text_t *texts, int np,
                    int n, float temp, uint64_t seed, int eos, int batch, err_t *err);
void tforce_text_free(tforce_text_t *t);

/* The outcomes of draft along one text: out[j − 1] for j = 1 .. n−1 (n−1
 * values, 0 or 1). Sampling draws outcome j with rng_stream(seed, 1,
 * text_id, ...). 0, or -1 with err. */
int tforce_outcomes(const llm_model_t *draft, llm_run_t *r, const tforce_text_t *t,
                    int text_id, float temp, uint64_t seed, uint8_t *out, err_t *err);

/* Greedy texts only (t->ptok unused): out[j − 1] = the rank of the
 * target's token t_j among the draft's after the text before it
 * (accrank_rank, capped at cap, 1 .. 255), j = 1 .. n−1; out[j − 1] == 0
 * exactly where tforce_outcomes gives 1 at temperature 0. One forward pass
 * of the draft, as tforce_outcomes. 0, or -1 with err. */
int tforce_ranks(const llm_model_t *draft, llm_run_t *r, const tforce_text_t *t, int cap,
                 uint8_t *out, err_t *err);

#endif
