/* cubench — see cubench.cuh. */
#include "cubench.cuh"

#include <stdlib.h>
#include <string.h>

#include "cucheck.cuh"

int cubench_init(cubench_t *b, size_t flush_bytes, err_t *err)
{
    memset(b, 0, sizeof *b);
    b->flush_bytes = flush_bytes;
    CU_TRY(cudaStreamCreateWithFlags(&b->st, cudaStreamNonBlocking));
    CU_TRY(cudaEventCreate(&b->ev[0]));
    CU_TRY(cudaEventCreate(&b->ev[1]));
    if (flush_bytes) CU_TRY(cudaMalloc(&b->flush, flush_bytes));
    return 0;
}

void cubench_fini(cubench_t *b)
{
    if (b->flush) CU_IGNORE(cudaFree(b->flush));
    if (b->ev[0]) CU_IGNORE(cudaEventDestroy(b->ev[0]));
    if (b->ev[1]) CU_IGNORE(cudaEventDestroy(b->ev[1]));
    if (b->st) CU_IGNORE(cudaStreamDestroy(b->st));
    memset(b, 0, sizeof *b);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int cubench_median(cubench_t *b, cubench_fn fn, void *ctx, int warmup, int reps,
                   int flush, double *median_s, double *min_s, err_t *err)
{
    double t[CUBENCH_MAX_REPS];
    if (reps < 1 || reps > CUBENCH_MAX_REPS)
        return err_set(err, ERR_INPUT, "cubench_median: reps=%d outside 1..%d", reps,
                       CUBENCH_MAX_REPS);
    for (int i = 0; i < warmup; i++)
        if (fn(ctx, b->st, err)) return -1;
    for (int i = 0; i < reps; i++) {
        if (flush && b->flush) {
            /* Alternate the byte so the writes are never elided. */
            b->flush_toggle ^= 1;
            CU_TRY(cudaMemsetAsync(b->flush, b->flush_toggle ? 0x5a : 0xa5,
                                   b->flush_bytes, b->st));
        }
        CU_TRY(cudaEventRecord(b->ev[0], b->st));
        if (fn(ctx, b->st, err)) return -1;
        CU_TRY(cudaEventRecord(b->ev[1], b->st));
        CU_TRY(cudaEventSynchronize(b->ev[1]));
        float ms = 0;
        CU_TRY(cudaEventElapsedTime(&ms, b->ev[0], b->ev[1]));
        t[i] = ms * 1e-3;
    }
    qsort(t, (size_t)reps, sizeof t[0], cmp_double);
    *median_s = reps % 2 ? t[reps / 2] : 0.5 * (t[reps / 2 - 1] + t[reps / 2]);
    if (min_s) *min_s = t[0];
    return 0;
}

typedef struct copy_ctx { void *dst; const void *src; size_t bytes; } copy_ctx_t;

static int copy_fn(void *ctx, cudaStream_t st, err_t *err)
{
    copy_ctx_t *c = (copy_ctx_t *)ctx;
    CU_TRY(cudaMemcpyAsync(c->dst, c->src, c->bytes, cudaMemcpyDeviceToDevice, st));
    return 0;
}

int cubench_copy_gbs(cubench_t *b, size_t bytes, double *gbs, err_t *err)
{
    copy_ctx_t c = {NULL, NULL, bytes};
    void *src = NULL;
    double med = 0;
    int rc = -1;
    CU_TRY(cudaMalloc(&src, bytes));
    if (cudaMalloc(&c.dst, bytes) != cudaSuccess) {
        CU_IGNORE(cudaFree(src));
        return err_set(err, ERR_RUNTIME, "%s:%d: cudaMalloc(%zu) failed", __FILE__,
                       __LINE__, bytes);
    }
    c.src = src;
    if (cufill_u32((uint32_t *)src, bytes / 4, 7, b->st, err) == 0 &&
        cubench_median(b, copy_fn, &c, 3, 21, 0, &med, NULL, err) == 0) {
        *gbs = 2.0 * (double)bytes / med / 1e9;
        rc = 0;
    }
    CU_IGNORE(cudaFree(src));
    CU_IGNORE(cudaFree(c.dst));
    return rc;
}

/* Grid-stride read of 16-byte words; the xor of everything is written per
 * block so the loads cannot be removed. */
__global__ void read_kernel(const uint4 *__restrict__ p, size_t n, uint32_t *out)
{
    uint32_t acc = 0;
    size_t stride = (size_t)gridDim.x * blockDim.x;
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    for (; i + 3 * stride < n; i += 4 * stride) {
        uint4 a = __ldcs(p + i), b = __ldcs(p + i + stride);
        uint4 c = __ldcs(p + i + 2 * stride), d = __ldcs(p + i + 3 * stride);
        acc ^= a.x ^ a.y ^ a.z ^ a.w ^ b.x ^ b.y ^ b.z ^ b.w ^ c.x ^ c.y ^ c.z ^
               c.w ^ d.x ^ d.y ^ d.z ^ d.w;
    }
    for (; i < n; i += stride) {
        uint4 a = __ldcs(p + i);
        acc ^= a.x ^ a.y ^ a.z ^ a.w;
    }
    for (int o = 16; o > 0; o >>= 1) acc ^= __shfl_xor_sync(0xffffffffu, acc, o);
    if ((threadIdx.x & 31) == 0) atomicXor(out + blockIdx.x, acc);
}

typedef struct read_ctx { const uint4 *p; size_t n; uint32_t *out; int blocks; } read_ctx_t;

static int read_fn(void *ctx, cudaStream_t st, err_t *err)
{
    read_ctx_t *c = (read_ctx_t *)ctx;
    read_kernel<<<c->blocks, 512, 0, st>>>(c->p, c->n, c->out);
    CU_LAUNCH_CHECK();
    return 0;
}

int cubench_read_gbs(cubench_t *b, size_t bytes, double *gbs, err_t *err)
{
    int dev = 0, sms = 0;
    CU_TRY(cudaGetDevice(&dev));
    CU_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    read_ctx_t c = {NULL, bytes / 16, NULL, sms * 4};
    void *p = NULL;
    double med = 0;
    int rc = -1;
    CU_TRY(cudaMalloc(&p, bytes));
    if (cudaMalloc((void **)&c.out, (size_t)c.blocks * 4) != cudaSuccess) {
        CU_IGNORE(cudaFree(p));
        return err_set(err, ERR_RUNTIME, "%s:%d: cudaMalloc failed", __FILE__, __LINE__);
    }
    c.p = (const uint4 *)p;
    if (cufill_u32((uint32_t *)p, bytes / 4, 11, b->st, err) == 0 &&
        cubench_median(b, read_fn, &c, 3, 21, 1, &med, NULL, err) == 0) {
        *gbs = (double)(c.n * 16) / med / 1e9;
        rc = 0;
    }
    CU_IGNORE(cudaFree(p));
    CU_IGNORE(cudaFree(c.out));
    return rc;
}

/* splitmix64 of (seed, index): independent values per element. */
__device__ __forceinline__ uint64_t mix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

__global__ void fill_half_kernel(__half *p, size_t n, uint64_t seed, float lo, float hi)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        float u = (float)(mix64(seed * 0x100000001b3ull + i) >> 40) * (1.0f / 16777216.0f);
        p[i] = __float2half_rn(lo + (hi - lo) * u);
    }
}

__global__ void fill_u32_kernel(uint32_t *p, size_t n, uint64_t seed)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        p[i] = (uint32_t)(mix64(seed * 0x100000001b3ull + i) >> 32);
}

__global__ void fill_nibble_kernel(uint8_t *p, size_t n, uint64_t seed)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        p[i] = (uint8_t)(mix64(seed * 0x100000001b3ull + i) >> 60);
}

static unsigned fill_blocks(size_t n)
{
    size_t b = (n + 255) / 256;
    return (unsigned)(b < 65536 ? (b ? b : 1) : 65536);
}

int cufill_half(__half *p, size_t count, uint64_t seed, float lo, float hi,
                cudaStream_t st, err_t *err)
{
    fill_half_kernel<<<fill_blocks(count), 256, 0, st>>>(p, count, seed, lo, hi);
    CU_LAUNCH_CHECK();
    return 0;
}

int cufill_u32(uint32_t *p, size_t count, uint64_t seed, cudaStream_t st, err_t *err)
{
    fill_u32_kernel<<<fill_blocks(count), 256, 0, st>>>(p, count, seed);
    CU_LAUNCH_CHECK();
    return 0;
}

int cufill_nibble(uint8_t *p, size_t count, uint64_t seed, cudaStream_t st, err_t *err)
{
    fill_nibble_kernel<<<fill_blocks(count), 256, 0, st>>>(p, count, seed);
    CU_LAUNCH_CHECK();
    return 0;
}
