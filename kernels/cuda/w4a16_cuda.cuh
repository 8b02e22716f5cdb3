/* w4a16_cuda — W4A16 GEMV / small-M GEMM (M = 1..16) on CUDA cores.
 *
 * Weights keep the reference arrays of docs/design.md ("The W4A16 reference format") (qweight [n][k/8], fp16 scales and 4-bit
 * zeros per (row, group)) with ONE explicit change made by
 * w4a16_cuda_repack(): inside every 32-bit word of 8 consecutive inputs
 * e = 0..7, nibble slot (e>>1) + 4·(e&1) holds element e, i.e. the slots hold
 * e0 e2 e4 e6 e1 e3 e5 e7. With that order one lop3 against 0x000f000f
 * (and shifts by 4, 8, 12) turns a word into four fp16 pairs (e0,e1),
 * (e2,e3), (e4,e5), (e6,e7) by the magic-number trick (0x6400 | q is the fp16
 * value 1024 + q), which line up with the activations' natural half2 pairs.
 * Rows stay contiguous along K, so a warp reading a row reads 512 contiguous
 * bytes with one 128-bit load per lane.
 *
 * Arithmetic: (q − z) is formed exactly in fp16 (1024+q − (1024+z)); the
 * products with x are summed in fp16 over the 4 pairs of one word (8 inputs),
 * converted to fp32, multiplied by the group scale and accumulated in fp32;
 * lanes are combined by a warp shuffle reduction. Error bound used by the
 * tests: |y − ref| ≤ 2⁻⁸·Σ_k |x_k·w_k| + 2⁻¹⁰·|ref| (fp16 rounding of each
 * product and of ≤ 3 partial sums within a word, then the fp16 output).
 *
 * Requirements: k % 32 == 0, group % 32 == 0, k % group == 0 (one 128-bit
 * load = 32 inputs lies in one group), n ≥ 1, 1 ≤ m ≤ 16, x and y 16-byte
 * aligned (cudaMalloc'd). Every real model shape satisfies them.
 */
#ifndef SPECSIM_W4A16_CUDA_CUH
#define SPECSIM_W4A16_CUDA_CUH

#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

extern "C" {
#include "base/err.h"
#include "w4a16.h"
}

#define W4A16_CUDA_MAX_M 16

/* Device-resident repacked weights. Owned: release with w4a16_cuda_fini. */
typedef struct w4a16_cuda {
    int n, k, group;
    uint32_t *q;      /* [n][k/8], repacked nibble order */
    __half *scales;   /* [n][k/group] */
    uint8_t *zeros;   /* [n][k/group], 0..15 */
} w4a16_cuda_t;

/* 0 when (n, k, group) is a shape the kernel takes, else -1 with err set. */
int w4a16_cuda_check_shape(int n, int k, int group, err_t *err);

/* Host-side repack of w->qweight ([n][k/8] words) into out (same size, caller
 * allocated): the nibble permutation described above. Pure function. */
void w4a16_cuda_repack(const w4a16_t *w, uint32_t *out);
/* The slot (0..7) that element e (0..7) of a word occupies after repacking. */
static inline int w4a16_cuda_slot(int e) { return (e >> 1) + 4 * (e & 1); }

/* Allocates device arrays for (n, k, group) (contents undefined). 0 or -1. */
int w4a16_cuda_init(w4a16_cuda_t *d, int n, int k, int group, err_t *err);
/* Repacks w on the host and copies it into a freshly allocated *d. 0 or -1. */
int w4a16_cuda_upload(const w4a16_t *w, w4a16_cuda_t *d, err_t *err);
/* Fills *d with random valid data on the device (random nibbles, zeros 0..15,
 * scales in [0.002, 0.02)): what timing needs, never zeros. 0 or -1. */
int w4a16_cuda_fill_random(w4a16_cuda_t *d, uint64_t seed, cudaStream_t st,
                           err_t *err);
void w4a16_cuda_fini(w4a16_cuda_t *d);

/* y[m][n] = x[m][k]·Wᵀ on stream st (asynchronous). x, y device pointers.
 * 0, or -1 with err set (bad m, launch failure). */
int w4a16_cuda_gemm(const w4a16_cuda_t *w, const __half *x, int m, __half *y,
                    cudaStream_t st, err_t *err);

#endif
