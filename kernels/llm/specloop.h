/* specloop — real speculative decoding of several tenants in one process:
 * a draft model drafts blocks, a target model verifies them in batched
 * forward passes, by the rules of kernels/llm/spec.h and the protocols of
 * docs/design.md ("Protocols"), with tokens instead of timings.
 *
 * It runs in rounds: every tenant that may draft drafts one block (its γ
 * draft steps batched across tenants), then one verification pass takes the
 * oldest waiting block of some tenants (all of them, at most max_batch, or
 * a random subset: any batching) and applies the verdicts.
 *   sync   a tenant drafts only when it has no block waiting; a verdict
 *          commits the accepted drafts and the correction or bonus.
 *   async  a tenant drafts while fewer than `window` of its blocks wait and
 *          the request could still need their tokens; a block accepted
 *          whole commits its γ drafts (its bonus position is the next
 *          block's first draft); a rejection commits the accepted drafts and
 *          the correction and throws away the tenant's later blocks and
 *          drafts (the epoch ends).
 * Each side keeps its own sequence and KV cache: the verifier the committed
 * text, the edge the committed text and its drafts; both roll their caches
 * back on a rejection. The first token of a request is the target's
 * (prefill). With a batch-invariant target (llm.h, LLM_FP16) greedy
 * speculation commits exactly the target's own greedy text.
 */
#ifndef SPECSIM_SPECLOOP_H
#define SPECSIM_SPECLOOP_H

#include <gsl/gsl_rng.h>
#include <stdint.h>

#include "base/err.h"
#include "llm.h"

enum specloop_mode { SPECLOOP_SYNC = 0, SPECLOOP_ASYNC = 1 };

typedef struct specloop_cfg {
    int mode;            /* enum specloop_mode */
    int gamma;           /* drafts per block, ≥ 1 */
    int window;          /* async: blocks awaiting verdicts, ≥ 1 */
    int max_batch;       /* blocks per verification pass; 0: every waiting one */
    int random_batches;  /* 1: each pass takes a random non-empty subset */
    float temp;          /* 0: greedy; > 0: sampling at this temperature */
    uint64_t seed;       /* sampling and random batches */
    int out_tokens;      /* tokens each tenant's request generates, ≥ 1 */
} specloop_cfg_t;

/* What one tenant got. Owned by the caller once filled: specloop_out_free. */
typedef struct specloop_out {
    int32_t *tokens;     /* the committed output, first token included */
    int n;
    int *accepted;       /* a of each block verified, in order */
    int nblocks;
    long drafted;        /* draft tokens made (thrown away ones included) */
} specloop_out_t;

/* Runs the tenants' requests (prompt p of plens[p] ids each) to the end.
 * out[ntenants] is filled. The models must share a vocabulary. rt and rd
 * run the target and the draft (may be the same llm_run_t). 0, or -1 with
 * err (bad configuration, out of memory); nothing is left allocated in out
 * on error. */
int specloop_run(const specloop_cfg_t *cfg, const llm_model_t *target, llm_run_t *rt,
                 const llm_model_t *draft, llm_run_t *rd, int ntenants,
                 const int32_t *const *prompts, const int *plens, specloop_out_t *out,
                 err_t *err);
void specloop_out_free(specloop_out_t *o);

/* The target alone, one token per forward pass: n tokens after the prompt,
 * greedy (temp 0) or sampled with r. 0, or -1 with err. */
int specloop_generate(const llm_model_t *m, llm_run_t *run, const int32_t *prompt, int plen,
                      int n, float temp, gsl_rng *r, int32_t *out, err_t *err);

#endif
