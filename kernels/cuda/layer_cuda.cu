/* layer_cuda — see layer_cuda.cuh. */
#include "layer_cuda.cuh"

#include <math.h>
#include <string.h>

#include "cubench.cuh"
#include "cucheck.cuh"

static size_t wcount_qkv(const layer_cuda_t *l) { return (size_t)l->qkv_n * l->d.hidden; }
static size_t wcount_o(const layer_cuda_t *l) { return (size_t)l->d.hidden * l->att_n; }
static size_t wcount_gu(const layer_cuda_t *l) { return (size_t)l->gu_n * l->d.hidden; }
static size_t wcount_down(const layer_cuda_t *l) { return (size_t)l->d.hidden * l->d.ffn; }

double layer_cuda_weight_bytes(const layer_cuda_dims_t *d)
{
    double qkv = (double)(d->heads + 2 * d->kv_heads) * d->head_dim * d->hidden;
    double o = (double)d->hidden * d->heads * d->head_dim;
    double gu = (double)(d->gated ? 2 : 1) * d->ffn * d->hidden;
    double down = (double)d->hidden * d->ffn;
    return 2.0 * (qkv + o + gu + down);
}

#define ALLOC_H(p, count) CU_TRY(cudaMalloc((void **)&(p), (size_t)(count) * sizeof(__half)))

int layer_cuda_init(layer_cuda_t *l, const layer_cuda_dims_t *d, int max_tokens,
                    int max_batch, int cap, int weights, err_t *err)
{
    memset(l, 0, sizeof *l);
    if (d->hidden < 1 || d->heads < 1 || d->kv_heads < 1 || d->heads % d->kv_heads ||
        d->ffn < 1 || max_tokens < 1 || max_batch < 1 || cap < 1)
        return err_set(err, ERR_INPUT, "layer_cuda_init: bad dimensions");
    l->d = *d;
    l->qkv_n = (d->heads + 2 * d->kv_heads) * d->head_dim;
    l->gu_n = d->gated ? 2 * d->ffn : d->ffn;
    l->att_n = d->heads * d->head_dim;
    l->max_tokens = max_tokens; l->max_batch = max_batch; l->cap = cap;
    size_t T = (size_t)max_tokens;
    if (weights == LAYER_W4A16) {
        if (max_tokens > W4A16_CUDA_MAX_M)
            return err_set(err, ERR_INPUT, "layer_cuda_init: w4a16 layers take at most %d "
                           "tokens", W4A16_CUDA_MAX_M);
        l->quant_w4 = 1;
        if (w4a16_cuda_init(&l->q_qkv, l->qkv_n, d->hidden, 128, err) ||
            w4a16_cuda_init(&l->q_o, d->hidden, l->att_n, 128, err) ||
            w4a16_cuda_init(&l->q_gu, l->gu_n, d->hidden, 128, err) ||
            w4a16_cuda_init(&l->q_down, d->hidden, d->ffn, 128, err))
            return -1;
    } else if (weights == LAYER_FP16) {
        l->owns_weights = 1;
        ALLOC_H(l->w_qkv, wcount_qkv(l));
        ALLOC_H(l->w_o, wcount_o(l));
        ALLOC_H(l->w_gu, wcount_gu(l));
        ALLOC_H(l->w_down, wcount_down(l));
    }
    size_t cache = (size_t)max_batch * d->kv_heads * (size_t)cap * d->head_dim;
    ALLOC_H(l->kc, cache);
    ALLOC_H(l->vc, cache);
    ALLOC_H(l->xn, T * d->hidden);
    ALLOC_H(l->qkv, T * l->qkv_n);
    ALLOC_H(l->att, T * l->att_n);
    ALLOC_H(l->o, T * d->hidden);
    ALLOC_H(l->h, T * d->hidden);
    ALLOC_H(l->hn, T * d->hidden);
    ALLOC_H(l->gu, T * l->gu_n);
    ALLOC_H(l->act, T * d->ffn);
    ALLOC_H(l->down, T * d->hidden);
    CU_TRY(cudaMalloc((void **)&l->ctx, (size_t)max_batch * sizeof(int)));
    CU_TRY(cudaMemset(l->ctx, 0, (size_t)max_batch * sizeof(int)));
    if (attn_cuda_ws_init(&l->ws, (long)T * d->heads, d->head_dim, err)) return -1;
    /* The memset runs on the legacy stream; callers may use another. */
    CU_TRY(cudaDeviceSynchronize());
    return 0;
}

void layer_cuda_fini(layer_cuda_t *l)
{
    void *p[] = {l->kc, l->vc, l->xn, l->qkv, l->att, l->o, l->h, l->hn, l->gu,
                 l->act, l->down, l->ctx};
    for (size_t i = 0; i < sizeof p / sizeof p[0]; i++)
        if (p[i]) CU_IGNORE(cudaFree(p[i]));
    if (l->owns_weights) {
        void *w[] = {l->w_qkv, l->w_o, l->w_gu, l->w_down};
        for (size_t i = 0; i < 4; i++)
            if (w[i]) CU_IGNORE(cudaFree(w[i]));
    }
    if (l->quant_w4) {
        w4a16_cuda_fini(&l->q_qkv);
        w4a16_cuda_fini(&l->q_o);
        w4a16_cuda_fini(&l->q_gu);
        w4a16_cuda_fini(&l->q_down);
    }
    if (l->ws.o || l->ws.ml) attn_cuda_ws_fini(&l->ws);
    memset(l, 0, sizeof *l);
}

int layer_cuda_fill_random(layer_cuda_t *l, uint64_t seed, cudaStream_t st, err_t *err)
{
    const layer_cuda_dims_t *d = &l->d;
    float a = 1.f / sqrtf((float)d->hidden), b = 1.f / sqrtf((float)l->att_n);
    float c = 1.f / sqrtf((float)d->ffn);
    if (l->w_qkv && cufill_half(l->w_qkv, wcount_qkv(l), seed, -a, a, st, err)) return -1;
    if (l->w_o && cufill_half(l->w_o, wcount_o(l), seed + 1, -b, b, st, err)) return -1;
    if (l->w_gu && cufill_half(l->w_gu, wcount_gu(l), seed + 2, -a, a, st, err)) return -1;
    if (l->w_down && cufill_half(l->w_down, wcount_down(l), seed + 3, -c, c, st, err)) return -1;
    if (l->quant_w4 && (w4a16_cuda_fill_random(&l->q_qkv, seed + 6, st, err) ||
                        w4a16_cuda_fill_random(&l->q_o, seed + 7, st, err) ||
                        w4a16_cuda_fill_random(&l->q_gu, seed + 8, st, err) ||
                        w4a16_cuda_fill_random(&l->q_down, seed + 9, st, err)))
        return -1;
    size_t cache = (size_t)l->max_batch * d->kv_heads * (size_t)l->cap * d->head_dim;
    if (cufill_half(l->kc, cache, seed + 4, -1.f, 1.f, st, err)) return -1;
    return cufill_half(l->vc, cache, seed + 5, -1.f, 1.f, st, err);
}

int layer_cuda_set_ctx(layer_cuda_t *l, const int *ctx, int batch, err_t *err)
{
    if (batch < 1 || batch > l->max_batch)
        return err_set(err, ERR_INPUT, "layer_cuda_set_ctx: batch %d", batch);
    int mx = 0;
    for (int b = 0; b < batch; b++) {
        if (ctx[b] < 0 || ctx[b] >= l->cap)
            return err_set(err, ERR_INPUT, "layer_cuda_set_ctx: ctx %d outside cache", ctx[b]);
        if (ctx[b] > mx) mx = ctx[b];
    }
    CU_TRY(cudaMemcpy(l->ctx, ctx, (size_t)batch * sizeof(int), cudaMemcpyHostToDevice));
    /* A pageable host-to-device cudaMemcpy may return before its DMA lands,
     * and it is ordered only on the legacy stream: kernels on a non-blocking
     * stream (calibration's) could read the old lengths. Wait for it. */
    CU_TRY(cudaDeviceSynchronize());
    l->ctx_max = mx;
    return 0;
}

/* One block per token; fp32 sum of squares; eps 1e-5. */
static __global__ void rmsnorm_kernel(const __half *__restrict__ x, __half *__restrict__ y, int n)
{
    __shared__ float part[32];
    const __half *xr = x + (size_t)blockIdx.x * n;
    __half *yr = y + (size_t)blockIdx.x * n;
    float s = 0.f;
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        float v = __half2float(xr[i]);
        s = fmaf(v, v, s);
    }
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
    if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = s;
    __syncthreads();
    if (threadIdx.x < 32) {
        s = threadIdx.x < (blockDim.x >> 5) ? part[threadIdx.x] : 0.f;
        for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
        if (threadIdx.x == 0) part[0] = rsqrtf(s / (float)n + 1e-5f);
    }
    __syncthreads();
    const float r = part[0];
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        yr[i] = __float2half_rn(__half2float(xr[i]) * r);
}

int layer_cuda_rmsnorm(const __half *x, __half *y, int tokens, int n, cudaStream_t st,
                       err_t *err)
{
    rmsnorm_kernel<<<tokens, 256, 0, st>>>(x, y, n);
    CU_LAUNCH_CHECK();
    return 0;
}

__global__ void add_kernel(const __half *a, const __half *b, __half *y, size_t n)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        y[i] = __float2half_rn(__half2float(a[i]) + __half2float(b[i]));
}

/* s = silu(gate)·up with gate = gu[t][0..ffn), up = gu[t][ffn..2ffn); or
 * silu(up) when not gated. */
__global__ void act_kernel(const __half *gu, __half *s, int tokens, int ffn, int gated)
{
    size_t n = (size_t)tokens * ffn;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        size_t t = i / ffn, j = i % ffn;
        const __half *row = gu + t * (size_t)(gated ? 2 * ffn : ffn);
        float g = __half2float(row[j]);
        float v = g / (1.f + __expf(-g));
        if (gated) v *= __half2float(row[ffn + j]);
        s[i] = __float2half_rn(v);
    }
}

/* y[t][n] = x[t][k]·Wᵀ through the layer's weights of that kind. */
static int linear(layer_cuda_t *l, cugemm_t *g, const __half *w, const w4a16_cuda_t *q,
                  const __half *x, __half *y, int t, int n, int k, cudaStream_t st,
                  err_t *err)
{
    if (l->quant_w4) return w4a16_cuda_gemm(q, x, t, y, st, err);
    return cugemm_ex(g, w, x, y, t, n, k, st, err);
}

static unsigned ew_blocks(size_t n)
{
    size_t b = (n + 255) / 256;
    return (unsigned)(b < 8192 ? (b ? b : 1) : 8192);
}

int layer_cuda_forward(layer_cuda_t *l, cugemm_t *g, const __half *x, __half *y,
                       int batch, int q, cudaStream_t st, err_t *err)
{
    const layer_cuda_dims_t *d = &l->d;
    const int T = batch * q;
    if (batch < 1 || batch > l->max_batch || q < 1 || T > l->max_tokens ||
        l->ctx_max + q > l->cap)
        return err_set(err, ERR_INPUT, "layer_cuda_forward: batch %d q %d too large",
                       batch, q);
    const size_t th = (size_t)T * d->hidden;
    if (layer_cuda_rmsnorm(x, l->xn, T, d->hidden, st, err)) return -1;
    if (linear(l, g, l->w_qkv, &l->q_qkv, l->xn, l->qkv, T, l->qkv_n, d->hidden, st, err)) return -1;
    if (attn_cuda_append(l->qkv, l->qkv_n, batch, q, d->heads, d->kv_heads, d->head_dim,
                         l->kc, l->vc, l->cap, l->ctx, st, err))
        return -1;
    attn_cuda_args_t a;
    a.batch = batch; a.q = q; a.heads = d->heads; a.kv_heads = d->kv_heads;
    a.head_dim = d->head_dim; a.qp = l->qkv; a.q_ld = l->qkv_n;
    a.kc = l->kc; a.vc = l->vc; a.cap = l->cap; a.ctx = l->ctx; a.max_ctx = l->ctx_max;
    a.out = l->att; a.out_ld = l->att_n;
    if (attn_cuda_run(&a, &l->ws, 0, st, err)) return -1;
    if (linear(l, g, l->w_o, &l->q_o, l->att, l->o, T, d->hidden, l->att_n, st, err)) return -1;
    add_kernel<<<ew_blocks(th), 256, 0, st>>>(x, l->o, l->h, th);
    CU_LAUNCH_CHECK();
    if (layer_cuda_rmsnorm(l->h, l->hn, T, d->hidden, st, err)) return -1;
    if (linear(l, g, l->w_gu, &l->q_gu, l->hn, l->gu, T, l->gu_n, d->hidden, st, err)) return -1;
    act_kernel<<<ew_blocks((size_t)T * d->ffn), 256, 0, st>>>(l->gu, l->act, T, d->ffn,
                                                             d->gated);
    CU_LAUNCH_CHECK();
    if (linear(l, g, l->w_down, &l->q_down, l->act, l->down, T, d->hidden, d->ffn, st, err)) return -1;
    add_kernel<<<ew_blocks(th), 256, 0, st>>>(l->h, l->down, y, th);
    CU_LAUNCH_CHECK();
    return 0;
}
