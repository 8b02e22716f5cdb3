/* ref — scalar references for the dense kernels: fp16 and fp32 GEMV/GEMM and
 * attention of q query tokens over a KV cache (what verifying γ+1 drafted
 * tokens computes). Ground truth for the SIMD kernels in kernels/gemv*.c and
 * kernels/attn*.c; plain loops, fp32 accumulation in index order.
 */
#ifndef SPECSIM_REF_H
#define SPECSIM_REF_H

#include <stdint.h>

/* y[m][n] = Σ_k x[m][k]·w[n][k]; w is [n][k] row-major, x [m][k], y [m][n]. */
void ref_gemm_f32(const float *w, int n, int k, const float *x, int m, float *y);
/* The same with fp16 weights, activations and output (fp32 accumulation). */
void ref_gemm_f16(const uint16_t *w, int n, int k, const uint16_t *x, int m, uint16_t *y);

/* Attention for one sequence, fp16 in/out, fp32 softmax and accumulation.
 *   q    [nq][heads][head_dim]        the new tokens' queries
 *   kc,vc [ctx + nq][kv_heads][head_dim] the KV cache, new tokens' keys and
 *                                      values already appended at ctx..ctx+nq−1
 *   out  [nq][heads][head_dim]
 * Query i sits at position ctx + i and sees positions 0..ctx+i (causal).
 * Query head h reads KV head h / (heads / kv_heads) (GQA); scores are scaled
 * by 1/sqrt(head_dim). heads % kv_heads must be 0. 0, or -1 when out of
 * memory (a score buffer of ctx + nq floats). */
int ref_attention(const uint16_t *q, const uint16_t *kc, const uint16_t *vc, int nq,
                  int ctx, int heads, int kv_heads, int head_dim, uint16_t *out);

#endif
