/* attn_cuda — see attn_cuda.cuh. Shared-memory plan per block (D = 128):
 * 32 query rows as fp32 (16 KiB, pre-scaled), one 32-key K tile with rows
 * padded by 4 halves (66 words ≡ 2 mod 32: the 8-byte reads of 16 lanes on
 * 16 different keys hit distinct banks), one V tile, a 32×32 score tile. */
#include "attn_cuda.cuh"

#include <math.h>
#include <string.h>

#include "cucheck.cuh"

#define AT_ROWS 32     /* query rows per block */
#define AT_KEYS 32     /* keys per tile */
#define AT_THREADS 128
#define AT_SSTRIDE 36  /* score row stride (floats): 16-byte aligned rows */

template <int D>
__global__ void __launch_bounds__(AT_THREADS)
attn_split_kernel(attn_cuda_args_t a, int splits, int chunk, int rowtiles,
                  float *__restrict__ po, float2 *__restrict__ pml)
{
    constexpr int KST = D + 4;            /* K tile row stride (halves) */
    constexpr int PAIRS = D / 2;          /* d pairs */
    constexpr int RPT = AT_ROWS * PAIRS / AT_THREADS;  /* rows per thread in PV */
    __shared__ __align__(16) float qs[AT_ROWS][D];
    __shared__ __align__(16) __half ks[AT_KEYS * KST];
    __shared__ __align__(16) __half vs[AT_KEYS][D];
    __shared__ __align__(16) float ss[AT_ROWS][AT_SSTRIDE];
    __shared__ float m_s[AT_ROWS], l_s[AT_ROWS], al_s[AT_ROWS];

    const int split = blockIdx.x;
    const int kvh = blockIdx.y / rowtiles, rt = blockIdx.y % rowtiles;
    const int b = blockIdx.z;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int G = a.heads / a.kv_heads, R = a.q * G;
    const int ctx = a.ctx[b], L = ctx + a.q;
    const int kbeg = split * chunk, kend = min(kbeg + chunk, L);
    const float scale = rsqrtf((float)D);

    for (int e = tid; e < AT_ROWS * D; e += AT_THREADS) {
        int r = e / D, d = e % D, gr = rt * AT_ROWS + r;
        float v = 0.f;
        if (gr < R) {
            int i = gr / G, h = kvh * G + gr % G;
            v = __half2float(a.qp[(long)(b * a.q + i) * a.q_ld + (long)h * D + d]) * scale;
        }
        qs[r][d] = v;
    }
    if (tid < AT_ROWS) { m_s[tid] = -INFINITY; l_s[tid] = 0.f; }

    float2 acc[RPT];
#pragma unroll
    for (int r = 0; r < RPT; r++) acc[r] = make_float2(0.f, 0.f);

    const size_t base = ((size_t)b * a.kv_heads + kvh) * (size_t)a.cap * D;
    const __half *kg = a.kc + base, *vg = a.vc + base;
    const int sj = tid & 31, srow0 = (tid >> 5) * 8;        /* score mapping */
    const int pp = tid % PAIRS, prow0 = (tid / PAIRS) * RPT; /* PV mapping */

    for (int kt = kbeg; kt < kend; kt += AT_KEYS) {
        __syncthreads();   /* previous tile fully consumed; qs/m_s written */
        for (int e = tid; e < AT_KEYS * D / 8; e += AT_THREADS) {
            int j = e / (D / 8), c = e % (D / 8);
            uint4 kv = make_uint4(0, 0, 0, 0), vv = make_uint4(0, 0, 0, 0);
            if (kt + j < kend) {
                kv = __ldg((const uint4 *)(kg + (size_t)(kt + j) * D) + c);
                vv = __ldg((const uint4 *)(vg + (size_t)(kt + j) * D) + c);
            }
            uint2 *kd = (uint2 *)(ks + j * KST + c * 8);
            kd[0] = make_uint2(kv.x, kv.y);
            kd[1] = make_uint2(kv.z, kv.w);
            *(uint4 *)(&vs[j][c * 8]) = vv;
        }
        __syncthreads();

        /* Scores: thread (key sj, rows srow0..srow0+7). */
        {
            float dot[8];
#pragma unroll
            for (int r = 0; r < 8; r++) dot[r] = 0.f;
#pragma unroll 4
            for (int d = 0; d < D; d += 4) {
                uint2 kraw = *(const uint2 *)(ks + sj * KST + d);
                __half2 k01, k23;
                memcpy(&k01, &kraw.x, 4);
                memcpy(&k23, &kraw.y, 4);
                float2 f01 = __half22float2(k01), f23 = __half22float2(k23);
#pragma unroll
                for (int r = 0; r < 8; r++) {
                    float4 qv = *(const float4 *)(&qs[srow0 + r][d]);
                    dot[r] = fmaf(qv.x, f01.x, dot[r]);
                    dot[r] = fmaf(qv.y, f01.y, dot[r]);
                    dot[r] = fmaf(qv.z, f23.x, dot[r]);
                    dot[r] = fmaf(qv.w, f23.y, dot[r]);
                }
            }
            const int p = kt + sj;
#pragma unroll
            for (int r = 0; r < 8; r++) {
                int gr = rt * AT_ROWS + srow0 + r;
                bool ok = gr < R && p < kend && p <= ctx + gr / G;
                ss[srow0 + r][sj] = ok ? dot[r] : -INFINITY;
            }
        }
        __syncthreads();

        /* Online softmax: warp w owns rows 8w..8w+7. */
        for (int r = warp * 8; r < warp * 8 + 8; r++) {
            float s = ss[r][lane], mt = s;
#pragma unroll
            for (int o = 16; o > 0; o >>= 1) mt = fmaxf(mt, __shfl_xor_sync(0xffffffffu, mt, o));
            float mo = m_s[r], mn = fmaxf(mo, mt);
            float pv = (s == -INFINITY) ? 0.f : __expf(s - mn);
            float sum = pv;
#pragma unroll
            for (int o = 16; o > 0; o >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o);
            ss[r][lane] = pv;
            __syncwarp();
            if (lane == 0) {
                float al = (mo == -INFINITY) ? 0.f : __expf(mo - mn);
                al_s[r] = al;
                l_s[r] = l_s[r] * al + sum;
                m_s[r] = mn;
            }
        }
        __syncthreads();

        /* P·V: thread (d pair pp, rows prow0..prow0+RPT−1). */
#pragma unroll
        for (int r = 0; r < RPT; r++) {
            float al = al_s[prow0 + r];
            acc[r].x *= al;
            acc[r].y *= al;
        }
#pragma unroll 2
        for (int j = 0; j < AT_KEYS; j += 4) {
            float2 v[4];
#pragma unroll
            for (int u = 0; u < 4; u++)
                v[u] = __half22float2(*(const __half2 *)(&vs[j + u][2 * pp]));
#pragma unroll
            for (int r = 0; r < RPT; r++) {
                float4 p4 = *(const float4 *)(&ss[prow0 + r][j]);
                acc[r].x = fmaf(p4.x, v[0].x, acc[r].x);
                acc[r].y = fmaf(p4.x, v[0].y, acc[r].y);
                acc[r].x = fmaf(p4.y, v[1].x, acc[r].x);
                acc[r].y = fmaf(p4.y, v[1].y, acc[r].y);
                acc[r].x = fmaf(p4.z, v[2].x, acc[r].x);
                acc[r].y = fmaf(p4.z, v[2].y, acc[r].y);
                acc[r].x = fmaf(p4.w, v[3].x, acc[r].x);
                acc[r].y = fmaf(p4.w, v[3].y, acc[r].y);
            }
        }
    }
    __syncthreads();

    /* Partials: row (b, i, h), split -> po[((row)·splits + split)·D + d]. */
#pragma unroll
    for (int r = 0; r < RPT; r++) {
        int lr = prow0 + r, gr = rt * AT_ROWS + lr;
        if (gr >= R) continue;
        int i = gr / G, h = kvh * G + gr % G;
        size_t row = ((size_t)b * a.q + i) * a.heads + h;
        size_t idx = row * splits + split;
        *(float2 *)(po + idx * D + 2 * pp) = acc[r];
        if (pp == 0) pml[idx] = make_float2(m_s[lr], l_s[lr]);
    }
}

/* One block per query row (b, i, h), one thread per d. */
__global__ void attn_combine_kernel(attn_cuda_args_t a, int splits,
                                    const float *__restrict__ po,
                                    const float2 *__restrict__ pml)
{
    const int D = a.head_dim, d = threadIdx.x;
    const size_t row = blockIdx.x;
    const int h = (int)(row % a.heads);
    const size_t t = row / a.heads;   /* token b·q + i */
    float M = -INFINITY;
    for (int s = 0; s < splits; s++) M = fmaxf(M, pml[row * splits + s].x);
    float num = 0.f, den = 0.f;
    if (M != -INFINITY)
        for (int s = 0; s < splits; s++) {
            float2 ml = pml[row * splits + s];
            if (ml.x == -INFINITY) continue;
            float w = __expf(ml.x - M);
            num = fmaf(w, po[(row * splits + s) * D + d], num);
            den = fmaf(w, ml.y, den);
        }
    a.out[(long)t * a.out_ld + (long)h * D + d] = __float2half_rn(den > 0.f ? num / den : 0.f);
}

int attn_cuda_ws_init(attn_cuda_ws_t *ws, long rows, int head_dim, err_t *err)
{
    memset(ws, 0, sizeof *ws);
    int dev = 0;
    CU_TRY(cudaGetDevice(&dev));
    CU_TRY(cudaDeviceGetAttribute(&ws->sms, cudaDevAttrMultiProcessorCount, dev));
    ws->rows_splits_cap = (size_t)rows * ATTN_CUDA_MAX_SPLITS;
    ws->head_dim_cap = head_dim;
    CU_TRY(cudaMalloc((void **)&ws->o, ws->rows_splits_cap * head_dim * sizeof(float)));
    CU_TRY(cudaMalloc((void **)&ws->ml, ws->rows_splits_cap * sizeof(float2)));
    return 0;
}

void attn_cuda_ws_fini(attn_cuda_ws_t *ws)
{
    if (ws->o) CU_IGNORE(cudaFree(ws->o));
    if (ws->ml) CU_IGNORE(cudaFree(ws->ml));
    memset(ws, 0, sizeof *ws);
}

static int rowtiles_of(const attn_cuda_args_t *a)
{
    int R = a->q * (a->heads / a->kv_heads);
    return (R + AT_ROWS - 1) / AT_ROWS;
}

int attn_cuda_auto_splits(const attn_cuda_args_t *a, int sms)
{
    long units = (long)a->batch * a->kv_heads * rowtiles_of(a);
    long want = (2L * (sms > 0 ? sms : 1) + units - 1) / units;
    long most = (a->max_ctx + a->q + 255) / 256;
    if (want > most) want = most;
    if (want > ATTN_CUDA_MAX_SPLITS) want = ATTN_CUDA_MAX_SPLITS;
    return want < 1 ? 1 : (int)want;
}

int attn_cuda_run(const attn_cuda_args_t *a, attn_cuda_ws_t *ws, int splits,
                  cudaStream_t st, err_t *err)
{
    if (a->batch < 1 || a->q < 1 || a->kv_heads < 1 || a->heads % a->kv_heads ||
        (a->head_dim != 64 && a->head_dim != 128) || a->head_dim > ws->head_dim_cap ||
        a->max_ctx < 0 || a->max_ctx + a->q > a->cap)
        return err_set(err, ERR_INPUT, "attn_cuda_run: bad shape (batch %d q %d heads %d "
                       "kv_heads %d head_dim %d max_ctx %d cap %d)", a->batch, a->q,
                       a->heads, a->kv_heads, a->head_dim, a->max_ctx, a->cap);
    if (splits <= 0) splits = attn_cuda_auto_splits(a, ws->sms);
    if (splits > ATTN_CUDA_MAX_SPLITS) splits = ATTN_CUDA_MAX_SPLITS;
    size_t rows = (size_t)a->batch * a->q * a->heads;
    if (rows * splits > ws->rows_splits_cap)
        return err_set(err, ERR_INPUT, "attn_cuda_run: workspace too small");
    int L = a->max_ctx + a->q;
    int chunk = (L + splits - 1) / splits;
    chunk = (chunk + AT_KEYS - 1) / AT_KEYS * AT_KEYS;
    int rt = rowtiles_of(a);
    dim3 grid((unsigned)splits, (unsigned)(a->kv_heads * rt), (unsigned)a->batch);
    if (a->head_dim == 128)
        attn_split_kernel<128><<<grid, AT_THREADS, 0, st>>>(*a, splits, chunk, rt, ws->o, ws->ml);
    else
        attn_split_kernel<64><<<grid, AT_THREADS, 0, st>>>(*a, splits, chunk, rt, ws->o, ws->ml);
    CU_LAUNCH_CHECK();
    attn_combine_kernel<<<(unsigned)rows, (unsigned)a->head_dim, 0, st>>>(*a, splits, ws->o, ws->ml);
    CU_LAUNCH_CHECK();
    return 0;
}

__global__ void attn_append_kernel(const __half *__restrict__ qkv, long ld, int q,
                                   int heads, int kv_heads, int D, __half *kc,
                                   __half *vc, int cap, const int *__restrict__ ctx)
{
    const int t = blockIdx.x, g = blockIdx.y, d = threadIdx.x;
    const int b = t / q, i = t % q;
    const __half *src = qkv + (long)t * ld;
    size_t dst = (((size_t)b * kv_heads + g) * cap + ctx[b] + i) * D + d;
    kc[dst] = src[(long)(heads + g) * D + d];
    vc[dst] = src[(long)(heads + kv_heads + g) * D + d];
}

int attn_cuda_append(const __half *qkv, long qkv_ld, int batch, int q, int heads,
                     int kv_heads, int head_dim, __half *kc, __half *vc, int cap,
                     const int *ctx, cudaStream_t st, err_t *err)
{
    dim3 grid((unsigned)(batch * q), (unsigned)kv_heads);
    attn_append_kernel<<<grid, (unsigned)head_dim, 0, st>>>(qkv, qkv_ld, q, heads, kv_heads,
                                                            head_dim, kc, vc, cap, ctx);
    CU_LAUNCH_CHECK();
    return 0;
}
