/* layer_cuda — one transformer decoder layer in FP16 on the GPU: the batched
 * verify step for B sequences of q = γ+1 new tokens each (M = B·q tokens).
 *
 *   xn = rmsnorm(x); qkv = xn·Wqkvᵀ; K,V -> cache; a = attention(q over cache)
 *   h = x + a·Woᵀ; hn = rmsnorm(h); gu = hn·Wguᵀ; s = silu(gate)·up
 *   y = h + s·Wdownᵀ
 *
 * Simplifications that do not change the cost materially and are stated so:
 * RMSNorm without its learned weight vector, no rotary embedding, and a
 * non-gated MLP uses silu(up). Activations are [tokens][width] row-major fp16
 * with token t = b·q + i; every intermediate is stored as fp16 (the tests
 * mirror those rounding points). Linear layers: cugemm_ex (cuBLAS, fp32
 * accumulation), or, for a layer created with LAYER_W4A16 weights (the edge
 * drafting case), w4a16_cuda_gemm (group 128, at most 16 tokens). All buffers are owned by the layer; the weight pointers are
 * public so tests can load their own weights.
 */
#ifndef SPECSIM_LAYER_CUDA_CUH
#define SPECSIM_LAYER_CUDA_CUH

#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "attn_cuda.cuh"
#include "cugemm.cuh"
#include "w4a16_cuda.cuh"

extern "C" {
#include "base/err.h"
}

typedef struct layer_cuda_dims {
    int hidden, heads, kv_heads, head_dim, ffn, gated;
} layer_cuda_dims_t;

typedef struct layer_cuda {
    layer_cuda_dims_t d;
    int qkv_n, gu_n, att_n;        /* (heads+2kv)·D, 2·ffn or ffn, heads·D */
    int max_tokens, max_batch, cap;
    int owns_weights;              /* allocated by layer_cuda_init */
    __half *w_qkv, *w_o, *w_gu, *w_down;   /* [n][k] row-major */
    int quant_w4;                  /* 1: the w4 weights below are used */
    w4a16_cuda_t q_qkv, q_o, q_gu, q_down;
    __half *kc, *vc;               /* [max_batch][kv_heads][cap][D] */
    __half *xn, *qkv, *att, *o, *h, *hn, *gu, *act, *down;  /* intermediates */
    int *ctx;                      /* device [max_batch] */
    int ctx_max;                   /* host copy of max(ctx) */
    attn_cuda_ws_t ws;
} layer_cuda_t;

/* Weight bytes of one layer (fp16). */
double layer_cuda_weight_bytes(const layer_cuda_dims_t *d);

enum { LAYER_NO_WEIGHTS = 0, LAYER_FP16 = 1, LAYER_W4A16 = 2 };

/* Allocates weights, cache (cap tokens per sequence) and buffers for up to
 * max_tokens tokens in max_batch sequences. weights: LAYER_FP16 or
 * LAYER_W4A16 allocate that kind; LAYER_NO_WEIGHTS leaves the fp16 weight
 * pointers NULL for the caller to point at its own copies.
 * Release with layer_cuda_fini (which frees only what it allocated). */
int layer_cuda_init(layer_cuda_t *l, const layer_cuda_dims_t *d, int max_tokens,
                    int max_batch, int cap, int weights, err_t *err);
void layer_cuda_fini(layer_cuda_t *l);
/* Random weights (scaled ~1/sqrt(k)) and cache contents. 0 or -1. */
int layer_cuda_fill_random(layer_cuda_t *l, uint64_t seed, cudaStream_t st, err_t *err);
/* Sets the cached lengths of sequences 0..batch−1; complete on return (the
 * device is synchronised), so any stream may use them next. */
int layer_cuda_set_ctx(layer_cuda_t *l, const int *ctx, int batch, err_t *err);
/* y[t] = x[t] / rms(x[t]) for tokens rows of n (no weight vector, eps 1e-5,
 * fp32 sums): the layer's norm, also the model's final norm before lm_head.
 * Launched on st; 0, or -1 on a launch error. */
int layer_cuda_rmsnorm(const __half *x, __half *y, int tokens, int n, cudaStream_t st,
                       err_t *err);
/* y = layer(x) for batch sequences of q tokens (x, y [batch·q][hidden]). */
int layer_cuda_forward(layer_cuda_t *l, cugemm_t *g, const __half *x, __half *y,
                       int batch, int q, cudaStream_t st, err_t *err);

#endif
