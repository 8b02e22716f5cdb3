/* w4a16_cuda — see w4a16_cuda.cuh. How it reaches memory bandwidth (ideas
 * from the AWQ GEMV, llama.cpp's MMVQ and Marlin's dequantisation, no code
 * taken): each lane keeps U independent 128-bit weight loads per row in flight
 * (ROWS rows per warp, so ROWS·U loads before the first use), weights are read
 * with the streaming hint so the small activation vector stays in L1, the
 * nibbles become fp16 with one lop3 per pair, and the scale is applied once
 * per 8 inputs in fp32. */
#include "w4a16_cuda.cuh"

#include <stdlib.h>
#include <string.h>

#include "cubench.cuh"
#include "cucheck.cuh"

#define W4_WARPS 4   /* warps per block */

int w4a16_cuda_check_shape(int n, int k, int group, err_t *err)
{
    if (n < 1 || k < 32 || group < 32 || k % 32 || group % 32 || k % group)
        return err_set(err, ERR_INPUT,
                       "w4a16_cuda: shape n=%d k=%d group=%d unsupported "
                       "(need k %% 32 == 0, group %% 32 == 0, k %% group == 0)",
                       n, k, group);
    return 0;
}

void w4a16_cuda_repack(const w4a16_t *w, uint32_t *out)
{
    size_t words = (size_t)w->n * (size_t)(w->k / 8);
    for (size_t i = 0; i < words; i++) {
        uint32_t in = w->qweight[i], o = 0;
        for (int e = 0; e < 8; e++)
            o |= ((in >> (4 * e)) & 0xfu) << (4 * w4a16_cuda_slot(e));
        out[i] = o;
    }
}

int w4a16_cuda_init(w4a16_cuda_t *d, int n, int k, int group, err_t *err)
{
    memset(d, 0, sizeof *d);
    if (w4a16_cuda_check_shape(n, k, group, err)) return -1;
    size_t ng = (size_t)n * (size_t)(k / group);
    d->n = n; d->k = k; d->group = group;
    CU_TRY(cudaMalloc((void **)&d->q, (size_t)n * (size_t)(k / 8) * 4));
    CU_TRY(cudaMalloc((void **)&d->scales, ng * sizeof(__half)));
    CU_TRY(cudaMalloc((void **)&d->zeros, ng));
    return 0;
}

void w4a16_cuda_fini(w4a16_cuda_t *d)
{
    CU_IGNORE(cudaFree(d->q));
    CU_IGNORE(cudaFree(d->scales));
    CU_IGNORE(cudaFree(d->zeros));
    memset(d, 0, sizeof *d);
}

int w4a16_cuda_upload(const w4a16_t *w, w4a16_cuda_t *d, err_t *err)
{
    if (w4a16_cuda_init(d, w->n, w->k, w->group, err)) {
        w4a16_cuda_fini(d);
        return -1;
    }
    size_t words = (size_t)w->n * (size_t)(w->k / 8);
    size_t ng = (size_t)w->n * (size_t)(w->k / w->group);
    uint32_t *rq = (uint32_t *)malloc(words * 4);
    if (!rq) {
        w4a16_cuda_fini(d);
        return err_set(err, ERR_RUNTIME, "w4a16_cuda_upload: out of memory");
    }
    w4a16_cuda_repack(w, rq);
    cudaError_t e = cudaMemcpy(d->q, rq, words * 4, cudaMemcpyHostToDevice);
    free(rq);
    if (e == cudaSuccess)
        e = cudaMemcpy(d->scales, w->scales, ng * 2, cudaMemcpyHostToDevice);
    if (e == cudaSuccess)
        e = cudaMemcpy(d->zeros, w->zeros, ng, cudaMemcpyHostToDevice);
    /* Pageable copies may return before their DMA lands (legacy stream):
     * complete them, so a kernel on any stream sees the weights. */
    if (e == cudaSuccess) e = cudaDeviceSynchronize();
    if (e != cudaSuccess) {
        w4a16_cuda_fini(d);
        return err_set(err, ERR_RUNTIME, "%s:%d: cudaMemcpy: %s", __FILE__,
                       __LINE__, cudaGetErrorString(e));
    }
    return 0;
}

int w4a16_cuda_fill_random(w4a16_cuda_t *d, uint64_t seed, cudaStream_t st,
                           err_t *err)
{
    size_t words = (size_t)d->n * (size_t)(d->k / 8);
    size_t ng = (size_t)d->n * (size_t)(d->k / d->group);
    if (cufill_u32(d->q, words, seed, st, err)) return -1;
    if (cufill_half(d->scales, ng, seed + 1, 0.002f, 0.02f, st, err)) return -1;
    return cufill_nibble(d->zeros, ng, seed + 2, st, err);
}

/* (a & b) | c in one instruction. */
__device__ __forceinline__ uint32_t lop3_and_or(uint32_t a, uint32_t b, uint32_t c)
{
    uint32_t r;
    asm("lop3.b32 %0, %1, %2, %3, 0xEA;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
    return r;
}

__device__ __forceinline__ __half2 u32_as_half2(uint32_t u)
{
    __half2 h;
    memcpy(&h, &u, 4);
    return h;
}

/* Word of 8 repacked nibbles -> four half2 (q − z) pairs, exact. */
__device__ __forceinline__ void dequant_word(uint32_t q, __half2 zz, __half2 d[4])
{
    d[0] = __hsub2(u32_as_half2(lop3_and_or(q, 0x000f000fu, 0x64006400u)), zz);
    d[1] = __hsub2(u32_as_half2(lop3_and_or(q >> 4, 0x000f000fu, 0x64006400u)), zz);
    d[2] = __hsub2(u32_as_half2(lop3_and_or(q >> 8, 0x000f000fu, 0x64006400u)), zz);
    d[3] = __hsub2(u32_as_half2(lop3_and_or(q >> 12, 0x000f000fu, 0x64006400u)), zz);
}

__device__ __forceinline__ uint32_t word_of(const uint4 &v, int j)
{
    return j == 0 ? v.x : j == 1 ? v.y : j == 2 ? v.z : v.w;
}

/* One warp: ROWS consecutive rows; lane l reads 128-bit chunks l, l+32, ...
 * of each row (32 inputs each), U chunks per row in flight. */
template <int M, int ROWS, int U>
__global__ void __launch_bounds__(32 * W4_WARPS)
w4a16_gemv_kernel(const uint4 *__restrict__ q, const __half *__restrict__ sc,
                  const uint8_t *__restrict__ zp, const __half *__restrict__ x,
                  __half *__restrict__ y, int n, int k, int group)
{
    const int lane = threadIdx.x & 31;
    const int row0 = (blockIdx.x * W4_WARPS + (threadIdx.x >> 5)) * ROWS;
    if (row0 >= n) return;
    const int chunks = k / 32, gpr = k / group;
    int row[ROWS];
#pragma unroll
    for (int r = 0; r < ROWS; r++) row[r] = min(row0 + r, n - 1);

    float acc[ROWS][M];
#pragma unroll
    for (int r = 0; r < ROWS; r++)
#pragma unroll
        for (int m = 0; m < M; m++) acc[r][m] = 0.f;

    for (int c0 = lane; c0 < chunks; c0 += 32 * U) {
        uint4 wv[U][ROWS];
#pragma unroll
        for (int u = 0; u < U; u++)
#pragma unroll
            for (int r = 0; r < ROWS; r++)
                if (c0 + 32 * u < chunks)
                    wv[u][r] = __ldcs(q + (size_t)row[r] * chunks + c0 + 32 * u);
#pragma unroll
        for (int u = 0; u < U; u++) {
            const int c = c0 + 32 * u;
            if (c >= chunks) break;
            const int g = (c * 32) / group;
            float s[ROWS];
            __half2 zz[ROWS];
#pragma unroll
            for (int r = 0; r < ROWS; r++) {
                size_t gi = (size_t)row[r] * gpr + g;
                s[r] = __half2float(sc[gi]);
                zz[r] = __half2half2(__ushort_as_half(
                    (unsigned short)(0x6400u | (unsigned)__ldg(zp + gi))));
            }
#pragma unroll
            for (int j = 0; j < 4; j++) {
                __half2 d[ROWS][4];
#pragma unroll
                for (int r = 0; r < ROWS; r++) dequant_word(word_of(wv[u][r], j), zz[r], d[r]);
#pragma unroll
                for (int m = 0; m < M; m++) {
                    const uint4 xv = __ldg((const uint4 *)(x + (size_t)m * k + c * 32 + 8 * j));
                    const __half2 x0 = u32_as_half2(xv.x), x1 = u32_as_half2(xv.y);
                    const __half2 x2 = u32_as_half2(xv.z), x3 = u32_as_half2(xv.w);
#pragma unroll
                    for (int r = 0; r < ROWS; r++) {
                        __half2 t = __hmul2(d[r][0], x0);
                        t = __hfma2(d[r][1], x1, t);
                        t = __hfma2(d[r][2], x2, t);
                        t = __hfma2(d[r][3], x3, t);
                        const float2 f = __half22float2(t);
                        acc[r][m] = fmaf(s[r], f.x + f.y, acc[r][m]);
                    }
                }
            }
        }
    }
#pragma unroll
    for (int r = 0; r < ROWS; r++)
#pragma unroll
        for (int m = 0; m < M; m++) {
            float v = acc[r][m];
#pragma unroll
            for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
            if (lane == ((r * M + m) & 31) && row0 + r < n)
                y[(size_t)m * n + row0 + r] = __float2half_rn(v);
        }
}

typedef void (*w4_kernel_t)(const uint4 *, const __half *, const uint8_t *,
                            const __half *, __half *, int, int, int);

/* Rows per warp and loads in flight: more rows share each activation load
 * when M is larger; fewer chunks in flight keep registers in check.
 * `if constexpr`, so only the variant used for each M is instantiated (a
 * plain `if` compiled both: twice the build time, and unused ROWS = 2
 * kernels for M > 4 that spill). tests/cli/cuda-static.sh fails on any
 * spilling kernel in kernels/cuda. */
template <int M>
static w4_kernel_t w4_pick(int *rows)
{
    if constexpr (M <= 4) {
        *rows = 2;
        return w4a16_gemv_kernel<M, 2, 4>;
    } else {
        *rows = 4;
        return w4a16_gemv_kernel<M, 4, 2>;
    }
}

int w4a16_cuda_gemm(const w4a16_cuda_t *w, const __half *x, int m, __half *y,
                    cudaStream_t st, err_t *err)
{
    if (m < 1 || m > W4A16_CUDA_MAX_M)
        return err_set(err, ERR_INPUT, "w4a16_cuda_gemm: m=%d outside 1..%d", m,
                       W4A16_CUDA_MAX_M);
    if (w4a16_cuda_check_shape(w->n, w->k, w->group, err)) return -1;
    int rows = 0;
    w4_kernel_t kern = NULL;
    switch (m) {
    case 1: kern = w4_pick<1>(&rows); break;
    case 2: kern = w4_pick<2>(&rows); break;
    case 3: kern = w4_pick<3>(&rows); break;
    case 4: kern = w4_pick<4>(&rows); break;
    case 5: kern = w4_pick<5>(&rows); break;
    case 6: kern = w4_pick<6>(&rows); break;
    case 7: kern = w4_pick<7>(&rows); break;
    case 8: kern = w4_pick<8>(&rows); break;
    case 9: kern = w4_pick<9>(&rows); break;
    case 10: kern = w4_pick<10>(&rows); break;
    case 11: kern = w4_pick<11>(&rows); break;
    case 12: kern = w4_pick<12>(&rows); break;
    case 13: kern = w4_pick<13>(&rows); break;
    case 14: kern = w4_pick<14>(&rows); break;
    case 15: kern = w4_pick<15>(&rows); break;
    default: kern = w4_pick<16>(&rows); break;
    }
    const int per_block = rows * W4_WARPS;
    const unsigned blocks = (unsigned)((w->n + per_block - 1) / per_block);
    kern<<<blocks, 32 * W4_WARPS, 0, st>>>((const uint4 *)w->q, w->scales, w->zeros,
                                           x, y, w->n, w->k, w->group);
    CU_LAUNCH_CHECK();
    return 0;
}
