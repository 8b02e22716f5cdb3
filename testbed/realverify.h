/* realverify — a real forward pass of a model on the CPU: the batched verify
 * step of the cloud model for the testbed's `--real-verify`, and the draft
 * model's one-token decode step for its `--real-draft` (docs/testbed.md,
 * "Real verification", "Real drafting").
 *
 * One iteration over jobs (each q new tokens over a KV context of c tokens,
 * M = Σq) runs the target's forward pass with the project's fp16 kernels
 * (kernels/gemv.h, kernels/attn.h) on random weights — fp16, or W4A16 in
 * the kernels' packed layout (random nibbles, scales and zeros, as
 * build/calibrate's) — per layer, RMSNorm of
 * every row, the qkv GEMM at M, each job's new K and V appended to its own
 * KV cache and attention of its q queries over that cache, the o GEMM and
 * residual, RMSNorm, gate_up GEMM, SiLU·up, down GEMM and residual; then
 * RMSNorm, lm_head at M and a greedy argmax per row — the same step
 * build/calibrate measures for its whole-token rows, batched. Every
 * layer has its own weights (a model small enough for one core: a
 * reduced-layer card, e.g. models/llm/tinyllama-1.1b-2l.yaml). RoPE is
 * left out, as in calibrate (elementwise, negligible).
 */
#ifndef TESTBED_REALVERIFY_H
#define TESTBED_REALVERIFY_H

#include "model/cards.h"
#include "base/err.h"
#include "model/service.h"

typedef struct realverify realverify_t;

/* Builds the model: weights of card at quant (PREC_FP16 or PREC_W4A16 of
 * sim/model/cards.h; anything else is an ERR_INPUT error), random, room for iterations of
 * up to max_tokens tokens and max_jobs jobs, contexts up to max_context
 * (longer ones are clamped: the cache's contents are random anyway),
 * threads kernel threads (1: one core). NULL with err on failure; free
 * with realverify_free. */
realverify_t *realverify_create(const llm_card_t *card, int quant, int max_tokens,
                                int max_jobs, int max_context, int threads, err_t *err);
/* What realverify_create allocates for the same arguments, in bytes, from
 * the sizes it allocates (one plan serves both): the weights (every
 * layer's and the LM head), the KV caches (max_jobs × layers × K and V ×
 * max_context × kv width, fp16) and the work buffers (max_tokens rows).
 * Not counted: its bookkeeping (the handle, one descriptor per layer and
 * matrix, the kernel context: well under a KiB per layer) and the
 * kernels' scratch at run time (under 10 bytes per token and width,
 * max_tokens × max(hidden, ffn)). A part, and total, is SIZE_MAX when it
 * does not fit a size_t (realverify_create refuses such a model); all
 * are 0 for arguments realverify_create refuses otherwise (a quant other
 * than fp16 and w4a16, W4A16 widths not multiples of its group, limits
 * below 1). */
typedef struct realverify_size {
    size_t weights, kv, work, total;
} realverify_size_t;
realverify_size_t realverify_bytes(const llm_card_t *card, int quant, int max_tokens,
                                   int max_jobs, int max_context);
void realverify_free(realverify_t *v);
/* Runs one iteration over jobs (a draft step: one job of one token over its
 * context) and returns its wall-clock time (s), or -1
 * with err (more tokens or jobs than created for, out of memory). */
double realverify_run(realverify_t *v, const service_job_t *jobs, int njobs, err_t *err);

#endif
