/* attn_cuda — attention of q new tokens per sequence over each sequence's KV
 * cache (what verifying γ+1 drafted tokens computes), flash-decoding style.
 *
 * Query token i of sequence b sits at position ctx[b] + i and sees cache
 * positions 0..ctx[b]+i (causal); its K and V are already in the cache
 * (attn_cuda_append). Query head h reads KV head h / (heads / kv_heads) (GQA);
 * scores are scaled by 1/sqrt(head_dim). The context of every sequence is
 * split into `splits` chunks, one block per (chunk, KV head, 32 query rows,
 * sequence): each block reads its K/V chunk once for all query heads of its
 * KV head and all q tokens, keeps an online softmax in fp32 and writes a
 * partial (max, sum, unnormalised output); a second kernel combines the
 * partials. Dot products and the softmax are fp32 on CUDA cores.
 *
 * Layouts (fp16): queries of token t = b·q + i, head h at qp[t·q_ld + h·D];
 * cache kc, vc [batch][kv_heads][cap][D]; output out[t·out_ld + h·D].
 * head_dim D ∈ {64, 128}.
 */
#ifndef SPECSIM_ATTN_CUDA_CUH
#define SPECSIM_ATTN_CUDA_CUH

#include <cuda_fp16.h>
#include <cuda_runtime.h>

extern "C" {
#include "base/err.h"
}

#define ATTN_CUDA_MAX_SPLITS 64

typedef struct attn_cuda_args {
    int batch, q, heads, kv_heads, head_dim;
    const __half *qp;
    long q_ld;
    const __half *kc, *vc;
    int cap;               /* cache capacity per (sequence, KV head) */
    const int *ctx;        /* device, [batch]: cached tokens before the new ones */
    int max_ctx;           /* host copy of max(ctx): sizes the splits */
    __half *out;
    long out_ld;
} attn_cuda_args_t;

/* Partial results; sized once for the largest call. Owned: attn_cuda_ws_fini. */
typedef struct attn_cuda_ws {
    float *o;              /* [rows][splits][D] */
    float2 *ml;            /* [rows][splits] (max, sum) */
    size_t rows_splits_cap;
    int head_dim_cap;
    int sms;               /* multiprocessors, for choosing splits */
} attn_cuda_ws_t;

/* Workspace for up to `rows` = batch·q·heads query rows, head_dim ≤ D. */
int attn_cuda_ws_init(attn_cuda_ws_t *ws, long rows, int head_dim, err_t *err);
void attn_cuda_ws_fini(attn_cuda_ws_t *ws);

/* Splits chosen when attn_cuda_run gets splits = 0: enough blocks to fill the
 * device twice over, at least 256 keys per split, at most
 * ATTN_CUDA_MAX_SPLITS. */
int attn_cuda_auto_splits(const attn_cuda_args_t *a, int sms);

/* Runs attention on st; splits 0 = automatic. 0 or -1 with err set. */
int attn_cuda_run(const attn_cuda_args_t *a, attn_cuda_ws_t *ws, int splits,
                  cudaStream_t st, err_t *err);

/* Copies the new tokens' K and V (from a fused qkv activation: per token,
 * heads·D queries, then kv_heads·D keys, then kv_heads·D values, row stride
 * qkv_ld) into the cache at positions ctx[b]..ctx[b]+q−1. 0 or -1. */
int attn_cuda_append(const __half *qkv, long qkv_ld, int batch, int q, int heads,
                     int kv_heads, int head_dim, __half *kc, __half *vc, int cap,
                     const int *ctx, cudaStream_t st, err_t *err);

#endif
