/* llm — the forward pass of a LLaMA-architecture GGUF model on the
 * project's kernels: the real-model runtime's target and draft
 * (docs/llm.md).
 *
 * A model is loaded from a GGUF file at one of two precisions:
 *   LLM_FP16   every weight dequantised from the file and held in fp16; the
 *              linear layers run gemv_f16_f32 (kernels/gemv.h), which is
 *              batch-invariant, so a token's logits are bit for bit the same
 *              whether it is computed alone, in a block of drafts or beside
 *              other sequences: verification in any batch gives exactly the
 *              target's own greedy choice;
 *   LLM_W4A16  the same fp16 weights quantised to the project's W4A16
 *              format (kernels/w4a16.h: asymmetric, round to nearest, groups
 *              of 128 along K; K padded with zero columns to a multiple of
 *              the group) and run by gemv_w4a16; the draft of the studied
 *              design in miniature.
 * Norms, RoPE, attention, the residual stream and logits are fp32; the KV
 * cache and the activations entering a linear layer are fp16 (as llama.cpp
 * does with an F16 model). `layers` below the file's count gives an
 * early-exit model: the first L layers, then the final norm and the head.
 *
 * Three objects: llm_model_t (the weights; read-only after llm_load, so
 * several threads may share one), llm_kv_t (one sequence's KV cache) and
 * llm_run_t (a kernel context with its threads and the scratch one forward
 * pass needs; one per thread that runs forward passes).
 */
#ifndef SPECSIM_LLM_H
#define SPECSIM_LLM_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "gguf.h"

typedef struct llm_config {
    int layers;        /* layers this model runs */
    int file_layers;   /* layers in the file */
    int hidden, heads, kv_heads, head_dim, ffn, vocab;
    int ctx_train;     /* the file's context length */
    float rope_base, eps;
} llm_config_t;

enum llm_weights { LLM_FP16 = 0, LLM_W4A16 = 1 };

typedef struct llm_opts {
    int weights;       /* enum llm_weights */
    int layers;        /* 0: all of the file's; else 1 .. file layers */
    int w4_kernel;     /* LLM_W4A16: GEMV_W4_EXACT or GEMV_W4_INT8 (gemv.h) */
} llm_opts_t;

/* A model spec: "fp16", "w4a16", "w4a16-int8", each optionally ":L" (the
 * first L layers: an early-exit model). 0, or -1 with err (ERR_INPUT). */
int llm_opts_parse(const char *spec, llm_opts_t *o, err_t *err);

typedef struct llm_model llm_model_t;

/* Loads the model of g (general.architecture "llama"; every tensor's shape
 * checked against the metadata). NULL with err ("FILE: what") on a file
 * that is not such a model or when out of memory. The caller owns it:
 * llm_free. g may be closed afterwards. */
llm_model_t *llm_load(const gguf_t *g, const llm_opts_t *o, err_t *err);
void llm_free(llm_model_t *m);
/* 0 when a tokenizer of tok_vocab tokens fits m (one embedding row per
 * token), else -1 with err (ERR_INPUT naming g's file). */
int llm_check_vocab(const llm_model_t *m, const gguf_t *g, int tok_vocab, err_t *err);
const llm_config_t *llm_config(const llm_model_t *m);
const llm_opts_t *llm_opts(const llm_model_t *m);
/* Bytes of weights one forward pass reads (the layers run and the head;
 * the embedding table is read one row per token and not counted). */
size_t llm_weight_bytes(const llm_model_t *m);
/* "fp16", "w4a16" or "w4a16-int8", with ":L" for an early-exit model. */
const char *llm_name(const llm_model_t *m);

/* ---- one sequence's KV cache ---------------------------------------------- */

typedef struct llm_kv llm_kv_t;

/* Room for `capacity` positions (fp16 K and V of every layer run). NULL with
 * err when out of memory. The caller owns it: llm_kv_free. */
llm_kv_t *llm_kv_create(const llm_model_t *m, int capacity, err_t *err);
void llm_kv_free(llm_kv_t *kv);
int llm_kv_len(const llm_kv_t *kv);
int llm_kv_capacity(const llm_kv_t *kv);
/* Forgets every position from len on (a rejected draft's keys and values);
 * len above the current length changes nothing. */
void llm_kv_truncate(llm_kv_t *kv, int len);

/* ---- running ---------------------------------------------------------------- */

typedef struct llm_run llm_run_t;

/* threads ≤ 0: one per online CPU. NULL with err on failure. The caller
 * owns it: llm_run_free. */
llm_run_t *llm_run_create(int threads, err_t *err);
void llm_run_free(llm_run_t *r);

typedef struct llm_span {
    llm_kv_t *kv;          /* the sequence; its tokens are appended */
    const int32_t *tokens;
    int n;                 /* ≥ 1 */
    int logits_from;       /* rows [logits_from, n) get logits; n: none */
} llm_span_t;

/* One forward pass over every span's tokens as one batch of M = Σ n rows:
 * span s's tokens take positions len(kv) .. len(kv) + n − 1 of its own
 * sequence, attend causally to it alone, and are appended to its cache.
 * logits receives, span after span, the rows asked for, [rows][vocab]
 * fp32. A span's cache must not appear twice. 0, or -1 with err (a cache
 * too small, a token outside the vocabulary, out of memory); on error the
 * caches may hold part of the tokens: truncate them to their old lengths. */
int llm_forward(llm_run_t *r, const llm_model_t *m, const llm_span_t *spans, int nspans,
                float *logits, err_t *err);

#endif
