/* gemv — dispatch, thread pool, repacking and the portable path (gemv.h). */
#include "gemv.h"

#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base/thread.h"
#include "cpuid.h"
#include "gemv_impl.h"

/* ---- packed layout ---------------------------------------------------- */

static void *alloc64(size_t bytes)
{
    void *p = NULL;
    if (posix_memalign(&p, 64, bytes ? bytes : 64) != 0) return NULL;
    return p;
}

int w4a16_packed_init(w4a16_packed_t *p, int n, int k, int group)
{
    memset(p, 0, sizeof *p);
    if (n <= 0 || k <= 0 || group <= 0 || group % 32 != 0 || k % group != 0) return -1;
    size_t groups = (size_t)n * (size_t)(k / group);
    p->q = alloc64((size_t)n * (size_t)k / 2);
    p->scales = alloc64(groups * sizeof *p->scales);
    p->zeros = alloc64(groups);
    if (!p->q || !p->scales || !p->zeros) {
        w4a16_packed_fini(p);
        return -1;
    }
    p->n = n;
    p->k = k;
    p->group = group;
    return 0;
}

int w4a16_packed_interleave(w4a16_packed_t *p)
{
    if (p->group != 128) return -1;
    int nb = p->n / 16, groups = p->k / 128;
    if (nb == 0 || p->qi) return 0;
    uint8_t *qi = alloc64((size_t)nb * 16 * (size_t)p->k / 2);
    uint8_t *mi = alloc64((size_t)nb * (size_t)groups * W4I8_META_BYTES);
    if (!qi || !mi) {
        free(qi);
        free(mi);
        return -1;
    }
    for (int b = 0; b < nb; b++)
        for (int j = 0; j < 16; j++) {
            int r = 16 * b + j;
            const uint8_t *row = p->q + (size_t)r * (size_t)p->k / 2;
            for (int g = 0; g < groups; g++) {
                size_t bg = (size_t)b * (size_t)groups + (size_t)g;
                uint8_t *meta = mi + bg * W4I8_META_BYTES;
                uint16_t s = p->scales[(size_t)r * (size_t)groups + (size_t)g];
                memcpy(meta + 2 * j, &s, 2);
                unsigned z = p->zeros[(size_t)r * (size_t)groups + (size_t)g] & 15u;
                if (j < 8) meta[32 + j] = (uint8_t)z;
                else meta[32 + j - 8] = (uint8_t)(meta[32 + j - 8] | z << 4);
                for (int i = 0; i < 16; i++)
                    for (int e = 0; e < 4; e++) {
                        /* q of input c in the packed row (q4_0 order, gemv.h). */
                        int c0 = 128 * g + 8 * i + e, c1 = c0 + 4;
                        unsigned q0 = (row[16 * (c0 / 32) + c0 % 16] >> (c0 % 32 < 16 ? 0 : 4)) & 15;
                        unsigned q1 = (row[16 * (c1 / 32) + c1 % 16] >> (c1 % 32 < 16 ? 0 : 4)) & 15;
                        qi[(bg * 16 + (size_t)i) * 64 + 4 * (size_t)j + (size_t)e] = (uint8_t)(q0 | q1 << 4);
                    }
            }
        }
    p->qi = qi;
    p->mi = mi;
    return 0;
}

void w4a16_packed_fini(w4a16_packed_t *p)
{
    if (!p) return;
    free(p->qi);
    free(p->mi);
    free(p->q);
    free(p->scales);
    free(p->zeros);
    memset(p, 0, sizeof *p);
}

int w4a16_repack(const w4a16_t *w, w4a16_packed_t *out)
{
    if (w4a16_packed_init(out, w->n, w->k, w->group) != 0) return -1;
    size_t groups = (size_t)w->n * (size_t)(w->k / w->group);
    memcpy(out->scales, w->scales, groups * sizeof *w->scales);
    memcpy(out->zeros, w->zeros, groups);
    for (int r = 0; r < w->n; r++) {
        uint8_t *row = out->q + (size_t)r * (size_t)w->k / 2;
        for (int b = 0; b < w->k / 32; b++)
            for (int j = 0; j < 16; j++)
                row[16 * b + j] = (uint8_t)(w4a16_get_q(w, r, 32 * b + j) |
                                            w4a16_get_q(w, r, 32 * b + 16 + j) << 4);
    }
    return 0;
}

double w4a16_packed_bytes(const w4a16_packed_t *p)
{
    return (double)p->n * (double)p->k / 2.0 + (double)p->n * (double)(p->k / p->group) * 3.0;
}

/* ---- portable path ---------------------------------------------------- */

static void scalar_w4(const w4a16_packed_t *w, const float *x, const float *xsum, int m, int r0,
                      int r1, uint16_t *y)
{
    (void)xsum;
    int groups = w->k / w->group;
    for (int r = r0; r < r1; r++) {
        const uint8_t *q = w->q + (size_t)r * (size_t)w->k / 2;
        for (int i = 0; i < m; i++) {
            const float *xi = x + (size_t)i * (size_t)w->k;
            float acc = 0.0f;
            for (int g = 0; g < groups; g++) {
                float s = fp16_to_f32(w->scales[(size_t)r * (size_t)groups + (size_t)g]);
                int z = w->zeros[(size_t)r * (size_t)groups + (size_t)g];
                for (int c = g * w->group; c < (g + 1) * w->group; c += 32) {
                    const uint8_t *blk = q + c / 2;
                    for (int j = 0; j < 16; j++) {
                        acc += (float)((blk[j] & 15) - z) * s * xi[c + j];
                        acc += (float)((blk[j] >> 4) - z) * s * xi[c + 16 + j];
                    }
                }
            }
            y[(size_t)i * (size_t)w->n + (size_t)r] = f32_to_fp16(acc);
        }
    }
}

static void scalar_f16(const uint16_t *w, int n, int k, const float *x, int m, int r0, int r1,
                       uint16_t *y)
{
    for (int r = r0; r < r1; r++)
        for (int i = 0; i < m; i++) {
            float acc = 0.0f;
            for (int c = 0; c < k; c++)
                acc += fp16_to_f32(w[(size_t)r * (size_t)k + (size_t)c]) * x[(size_t)i * (size_t)k + (size_t)c];
            y[(size_t)i * (size_t)n + (size_t)r] = f32_to_fp16(acc);
        }
}

static void scalar_f16_f32(const uint16_t *w, int n, int k, const float *x, int m, int r0,
                           int r1, float *y)
{
    for (int r = r0; r < r1; r++)
        for (int i = 0; i < m; i++) {
            float acc = 0.0f;
            for (int c = 0; c < k; c++)
                acc += fp16_to_f32(w[(size_t)r * (size_t)k + (size_t)c]) * x[(size_t)i * (size_t)k + (size_t)c];
            y[(size_t)i * (size_t)n + (size_t)r] = acc;
        }
}

static void scalar_f32(const float *w, int n, int k, const float *x, int m, int r0, int r1,
                       float *y)
{
    for (int r = r0; r < r1; r++)
        for (int i = 0; i < m; i++) {
            float acc = 0.0f;
            for (int c = 0; c < k; c++)
                acc += w[(size_t)r * (size_t)k + (size_t)c] * x[(size_t)i * (size_t)k + (size_t)c];
            y[(size_t)i * (size_t)n + (size_t)r] = acc;
        }
}

static void scalar_h2f(const uint16_t *h, float *f, size_t n)
{
    for (size_t i = 0; i < n; i++) f[i] = fp16_to_f32(h[i]);
}

static float scalar_dot_f16(const float *q, const uint16_t *h, int d)
{
    float s = 0.0f;
    for (int i = 0; i < d; i++) s += q[i] * fp16_to_f32(h[i]);
    return s;
}

static void scalar_axpy_f16(float a, const uint16_t *h, float *acc, int d)
{
    for (int i = 0; i < d; i++) acc[i] += a * fp16_to_f32(h[i]);
}

/* The portable int8 kernel (gemv.h), xq in natural order, any group: Σ q·xq
 * and Σ xq per group are exact integers (|Σ| ≤ 15·127·group < 2^31 for any
 * group under 2^20); the group's term s·d·(Σ q·xq − z·Σ xq) goes to fp32. */
static void portable_w4i8(const w4a16_packed_t *w, const int8_t *xq, const float *d,
                          const float *dsum, int m, int r0, int r1, uint16_t *y, int ext)
{
    (void)dsum;
    (void)ext;
    int groups = w->k / w->group;
    for (int r = r0; r < r1; r++) {
        const uint8_t *q = w->q + (size_t)r * (size_t)w->k / 2;
        for (int i = 0; i < m; i++) {
            const int8_t *xi = xq + (size_t)i * (size_t)w->k;
            float acc = 0.0f;
            for (int g = 0; g < groups; g++) {
                int32_t dot = 0, sx = 0;
                for (int c = g * w->group; c < (g + 1) * w->group; c += 32) {
                    const uint8_t *blk = q + c / 2;
                    for (int j = 0; j < 16; j++) {
                        dot += (blk[j] & 15) * xi[c + j] + (blk[j] >> 4) * xi[c + 16 + j];
                        sx += xi[c + j] + xi[c + 16 + j];
                    }
                }
                size_t gi = (size_t)r * (size_t)groups + (size_t)g;
                float s = fp16_to_f32(w->scales[gi]) * d[(size_t)i * (size_t)groups + (size_t)g];
                acc += s * (float)(dot - (int32_t)w->zeros[gi] * sx);
            }
            y[(size_t)i * (size_t)w->n + (size_t)r] = f32_to_fp16(acc);
        }
    }
}

const gemv_impl_t gemv_impl_scalar = {scalar_w4, scalar_f16, scalar_f32, scalar_h2f,
                                      scalar_dot_f16, scalar_axpy_f16, NULL, NULL, NULL, NULL, NULL,
                                      scalar_f16_f32, NULL};

/* ---- ISA selection ---------------------------------------------------- */

static const gemv_impl_t *impl_for(int isa)
{
    switch (isa) {
    case GEMV_ISA_SCALAR: return &gemv_impl_scalar;
#if defined(__x86_64__)
    case GEMV_ISA_AVX2: return (cpu_features() & CPU_AVX2) ? &gemv_impl_avx2 : NULL;
    case GEMV_ISA_AVX512: return (cpu_features() & CPU_AVX512) ? &gemv_impl_avx512 : NULL;
#endif
#if defined(__ARM_NEON) && defined(__aarch64__)
    case GEMV_ISA_NEON: return &gemv_impl_neon;
#endif
    default: return NULL;
    }
}

int gemv_isa_available(int isa)
{
    return impl_for(isa) != NULL;
}

const char *gemv_isa_name(int isa)
{
    static const char *const names[GEMV_ISA_COUNT] = {"scalar", "avx2", "avx512", "neon"};
    return isa >= 0 && isa < GEMV_ISA_COUNT ? names[isa] : "auto";
}

int gemv_isa_best(void)
{
    static const int order[] = {GEMV_ISA_AVX512, GEMV_ISA_AVX2, GEMV_ISA_NEON};
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++)
        if (gemv_isa_available(order[i])) return order[i];
    return GEMV_ISA_SCALAR;
}

/* ---- thread pool ------------------------------------------------------ */

/* Work is handed out in chunks claimed with one compare-and-swap on
 * `work` = generation << 32 | next chunk << 16 | chunk count. The caller
 * claims chunks too, so a worker the OS has descheduled (2 cores shared by
 * many processes) costs at most the chunk it holds, never the whole call; a
 * worker that wakes after the job is over sees a new generation and claims
 * nothing. fn/arg are read only after a successful claim, and the caller
 * waits for every claimed chunk, so they stay valid while used. Workers spin
 * briefly before sleeping: a GEMV lasts 0.1–2 ms and a condition-variable
 * wake-up costs tens of µs. */
#define SPIN_LIMIT 20000
#define MAX_CHUNKS 0xFFFF

struct gemv_ctx {
    int nth, isa;
    const gemv_impl_t *impl;
    pthread_t *th;
    int started;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    _Atomic uint64_t work;
    atomic_int completed;
    atomic_int stop;
    void (*fn)(void *, int, int);
    void *arg;
    float *xbuf;
    size_t xcap;
    int w4k;              /* enum gemv_w4_kernel */
    int8_t *qbuf;         /* int8 kernel: quantised activations */
    int i8ext;            /* gemv_ctx_set_int8_dot_ext */
    size_t qcap;
};

static inline void cpu_relax(void)
{
#if defined(__x86_64__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* Claims and runs chunks of generation gen until none is left. */
static void run_chunks(gemv_ctx_t *c, uint32_t gen)
{
    uint64_t w = atomic_load_explicit(&c->work, memory_order_acquire);
    for (;;) {
        uint32_t next = (uint32_t)(w >> 16) & 0xFFFF, total = (uint32_t)w & 0xFFFF;
        if ((uint32_t)(w >> 32) != gen || next >= total) return;
        if (!atomic_compare_exchange_weak_explicit(&c->work, &w, w + (1u << 16),
                                                   memory_order_acq_rel, memory_order_acquire))
            continue;
        c->fn(c->arg, (int)next, (int)total);
        atomic_fetch_add_explicit(&c->completed, 1, memory_order_release);
        w = atomic_load_explicit(&c->work, memory_order_acquire);
    }
}

static void *worker_main(void *p)
{
    gemv_ctx_t *c = p;
    uint32_t seen = 0;
    for (;;) {
        uint32_t g;
        int spins = 0;
        while ((g = (uint32_t)(atomic_load_explicit(&c->work, memory_order_acquire) >> 32)) == seen &&
               !atomic_load(&c->stop)) {
            if (++spins < SPIN_LIMIT) {
                cpu_relax();
                continue;
            }
            pthread_mutex_lock(&c->mu);
            while ((uint32_t)(atomic_load(&c->work) >> 32) == seen && !atomic_load(&c->stop))
                pthread_cond_wait(&c->cv, &c->mu);
            pthread_mutex_unlock(&c->mu);
        }
        if (atomic_load(&c->stop)) return NULL;
        seen = g;
        run_chunks(c, g);
    }
}

gemv_ctx_t *gemv_ctx_create(int threads, int isa, err_t *err)
{
    if (isa == GEMV_ISA_AUTO) isa = gemv_isa_best();
    const gemv_impl_t *impl = impl_for(isa);
    if (!impl) {
        err_set(err, ERR_INPUT, "kernel path %s is not available on this CPU or build",
                gemv_isa_name(isa));
        return NULL;
    }
    gemv_ctx_t *c = calloc(1, sizeof *c);
    if (!c) {
        err_set(err, ERR_RUNTIME, "out of memory");
        return NULL;
    }
    c->nth = threads > 0 ? threads : cpu_count();
    c->i8ext = GEMV_I8_DOT_AMX;
    c->isa = isa;
    c->impl = impl;
    atomic_init(&c->work, 0);
    atomic_init(&c->completed, 0);
    atomic_init(&c->stop, 0);
    c->th = calloc((size_t)c->nth, sizeof *c->th);
    if (!c->th || pthread_mutex_init(&c->mu, NULL) != 0) {
        free(c->th);
        free(c);
        err_set(err, ERR_RUNTIME, "out of memory");
        return NULL;
    }
    if (pthread_cond_init(&c->cv, NULL) != 0) {
        pthread_mutex_destroy(&c->mu);
        free(c->th);
        free(c);
        err_set(err, ERR_RUNTIME, "pthread_cond_init failed");
        return NULL;
    }
    for (int t = 1; t < c->nth; t++) {
        /* With the termination signals blocked (base/thread.h): calibrate
         * writes its table through outfile while the pool lives. */
        if (thread_create(&c->th[t], worker_main, c) != 0) {
            err_set(err, ERR_RUNTIME, "pthread_create failed (thread %d of %d)", t, c->nth);
            gemv_ctx_free(c);
            return NULL;
        }
        c->started = t;
    }
    return c;
}

void gemv_ctx_free(gemv_ctx_t *c)
{
    if (!c) return;
    pthread_mutex_lock(&c->mu);
    atomic_store(&c->stop, 1);
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
    for (int t = 1; t <= c->started; t++) pthread_join(c->th[t], NULL);
    pthread_cond_destroy(&c->cv);
    pthread_mutex_destroy(&c->mu);
    free(c->th);
    free(c->xbuf);
    free(c->qbuf);
    free(c);
}

int gemv_ctx_isa(const gemv_ctx_t *c) { return c->isa; }
int gemv_ctx_threads(const gemv_ctx_t *c) { return c->nth; }

const char *gemv_w4_kernel_name(int kern)
{
    return kern == GEMV_W4_EXACT ? "exact" : kern == GEMV_W4_INT8 ? "int8" : "unknown";
}

int gemv_w4_kernel_from_name(const char *name)
{
    for (int k = 0; k < GEMV_W4_COUNT; k++)
        if (!strcmp(name, gemv_w4_kernel_name(k))) return k;
    return -1;
}

int gemv_ctx_set_w4_kernel(gemv_ctx_t *c, int kern, err_t *err)
{
    if (kern < 0 || kern >= GEMV_W4_COUNT)
        return err_set(err, ERR_INPUT, "unknown W4A16 kernel %d (exact or int8)", kern);
    c->w4k = kern;
    return 0;
}

int gemv_ctx_w4_kernel(const gemv_ctx_t *c) { return c->w4k; }

void gemv_ctx_set_int8_dot_ext(gemv_ctx_t *c, int level)
{
    c->i8ext = level < GEMV_I8_DOT_BASE ? GEMV_I8_DOT_BASE : level > GEMV_I8_DOT_AMX ? GEMV_I8_DOT_AMX : level;
}

const char *gemv_ctx_int8_dot_name(const gemv_ctx_t *c, int m)
{
    if (!c->impl->w4i8_r16) return "portable";
#if defined(__x86_64__)
    if (c->isa == GEMV_ISA_AVX512 && c->i8ext >= GEMV_I8_DOT_AMX && gemv_avx512_amx_ready(m))
        return "amx";
    if (c->i8ext >= GEMV_I8_DOT_VNNI && c->isa == GEMV_ISA_AVX512 && __builtin_cpu_supports("avx512vnni"))
        return "avx512-vnni";
    if (c->i8ext >= GEMV_I8_DOT_VNNI && c->isa == GEMV_ISA_AVX2 && __builtin_cpu_supports("avxvnni"))
        return "avx-vnni";
#endif
    (void)m;
    return "vpmaddubsw";
}

void gemv_parallel(gemv_ctx_t *c, void (*fn)(void *, int, int), void *arg, int nchunks)
{
    if (nchunks > MAX_CHUNKS) nchunks = MAX_CHUNKS;
    if (nchunks <= 0) return;
    if (c->nth == 1 || nchunks == 1) {
        for (int i = 0; i < nchunks; i++) fn(arg, i, nchunks);
        return;
    }
    c->fn = fn;
    c->arg = arg;
    atomic_store_explicit(&c->completed, 0, memory_order_relaxed);
    uint32_t gen = (uint32_t)(atomic_load(&c->work) >> 32) + 1u;
    pthread_mutex_lock(&c->mu);
    atomic_store_explicit(&c->work, (uint64_t)gen << 32 | (uint64_t)nchunks, memory_order_release);
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
    run_chunks(c, gen);
    int spins = 0;
    while (atomic_load_explicit(&c->completed, memory_order_acquire) < nchunks) {
        if (++spins < SPIN_LIMIT) cpu_relax();
        else sched_yield();
    }
}

/* ---- GEMV entry points ------------------------------------------------ */

enum { KIND_W4, KIND_F16, KIND_F32, KIND_W4I8, KIND_W4I8_R16, KIND_F16_F32 };

typedef void (*w4i8_fn)(const w4a16_packed_t *, const int8_t *, const float *, const float *,
                        int, int, int, uint16_t *, int);

struct gemv_job {
    const gemv_impl_t *impl;
    int kind, n, k, m;
    const void *w;
    const float *x, *xsum;
    void *y;
    w4i8_fn i8;           /* KIND_W4I8 */
    int ext;              /* KIND_W4I8*: integer dot-product extension allowed */
    const int8_t *xq;
};

/* Chunk i of nch: a contiguous slab of rows, streamed start to end. */
static void gemv_job_run(void *arg, int i, int nch)
{
    const struct gemv_job *j = arg;
    if (j->kind == KIND_W4I8_R16) {
        /* Row blocks of 16 in the interleaved copy; the last chunk also
         * takes the n mod 16 rows outside it, with the portable kernel. */
        const w4a16_packed_t *w = j->w;
        int nb = j->n / 16, b0 = (int)((long long)nb * i / nch), b1 = (int)((long long)nb * (i + 1) / nch);
        if (b0 < b1) j->impl->w4i8_r16(w, j->xq, j->x, j->xsum, j->m, b0, b1, j->y, j->ext);
        if (i == nch - 1 && 16 * nb < j->n)
            portable_w4i8(w, j->xq, j->x, j->xsum, j->m, 16 * nb, j->n, j->y, 0);
        return;
    }
    int r0 = (int)((long long)j->n * i / nch), r1 = (int)((long long)j->n * (i + 1) / nch);
    if (r0 >= r1) return;
    switch (j->kind) {
    case KIND_W4: j->impl->w4(j->w, j->x, j->xsum, j->m, r0, r1, j->y); break;
    case KIND_F16: j->impl->f16(j->w, j->n, j->k, j->x, j->m, r0, r1, j->y); break;
    case KIND_F16_F32: j->impl->f16_f32(j->w, j->n, j->k, j->x, j->m, r0, r1, j->y); break;
    case KIND_W4I8: j->i8(j->w, j->xq, j->x, j->xsum, j->m, r0, r1, j->y, j->ext); break;
    default: j->impl->f32(j->w, j->n, j->k, j->x, j->m, r0, r1, j->y); break;
    }
}

/* Four chunks per thread balance a straggler; chunks under 8 rows cost more
 * in hand-off than they save. */
static void run_job(gemv_ctx_t *c, struct gemv_job *j)
{
    int nch = 4 * c->nth;
    if (nch > j->n / 8) nch = j->n / 8;
    if (nch < 1) nch = 1;
    gemv_parallel(c, gemv_job_run, j, nch);
}

/* Converts x to fp32 in the context's scratch, which has room for `extra`
 * more floats after the count converted. */
static float *activations(gemv_ctx_t *c, const uint16_t *x, size_t count, size_t extra)
{
    if (count + extra > c->xcap) {
        float *nb = alloc64((count + extra) * sizeof *nb);
        if (!nb) return NULL;
        free(c->xbuf);
        c->xbuf = nb;
        c->xcap = count + extra;
    }
    c->impl->h2f(x, c->xbuf, count);
    return c->xbuf;
}

/* Quantises one group of g fp32 activations (gemv.h: d = max|x|/127, xq =
 * round(x/d), ties to even) into out, in natural or split order
 * (gemv_impl.h); returns d and Σ xq. Written as plain loops the compiler
 * vectorises (this runs on one thread before the parallel part: a scalar
 * version with lrintf cost more than the M = 8 product itself). Rounding:
 * adding and subtracting 1.5·2^23 rounds to an integer, ties to even, for
 * |v| < 2^22 (here |v| ≤ 127). */
static float quant_group(const float *x, int g, int split, int8_t *tmp, int8_t *out,
                         int32_t *sum)
{
    float amax = 0.0f;
    for (int e = 0; e < g; e++) {
        float a = x[e] < 0.0f ? -x[e] : x[e];
        amax = a > amax ? a : amax;
    }
    float d = amax / 127.0f, inv = amax > 0.0f ? 127.0f / amax : 0.0f;
    const float magic = 12582912.0f;
    int32_t s = 0;
    int8_t *dst = split ? tmp : out;
    for (int e = 0; e < g; e++) {
        float v = (x[e] * inv + magic) - magic;
        int iv = (int)v;
        s += iv;
        dst[e] = (int8_t)iv;
    }
    if (split)   /* 16-byte chunk c of each 128 holds inputs 16c..16c+15 */
        for (int b = 0; b < g; b += 128)
            for (int c = 0; c < 8; c++)
                memcpy(out + b + 16 * ((c % 2) * 4 + c / 2), tmp + b + 16 * c, 16);
    *sum = s;
    return d;
}

/* The int8 kernel: x to fp32, quantised per group, then the path's kernel. */
static int gemv_w4a16_int8(gemv_ctx_t *c, const w4a16_packed_t *w, const uint16_t *x, int m,
                           uint16_t *y)
{
    int groups = w->k / w->group;
    size_t count = (size_t)m * (size_t)w->k, ng = (size_t)m * (size_t)groups;
    size_t nsc = (ng + 15) & ~(size_t)15;
    int r16 = w->qi && c->impl->w4i8_r16;
    /* The path's quantiser reads fp16 x directly (no fp32 copy needed). */
    int fast = r16 && c->impl->w4i8_quant;
    float *xf = activations(c, x, fast ? 0 : count, fast ? count + 2 * nsc : 2 * nsc);
    if (!xf) return -1;
    if (count > c->qcap) {
        int8_t *nb = alloc64(count);
        if (!nb) return -1;
        free(c->qbuf);
        c->qbuf = nb;
        c->qcap = count;
    }
    float *d = xf + count, *dsum = d + nsc;
    w4i8_fn fn = c->impl->w4i8 && w->group == 128 ? c->impl->w4i8 : portable_w4i8;
    int split = !r16 && fn != portable_w4i8;
    int8_t tmp[128];
    if (fast)
        c->impl->w4i8_quant(x, ng, c->qbuf, d, dsum);
    else {
        if (fast) c->impl->h2f(x, xf, count);
        for (size_t gi = 0; gi < ng; gi++) {
            int32_t sum;
            d[gi] = quant_group(xf + gi * (size_t)w->group, w->group, split, tmp,
                                c->qbuf + gi * (size_t)w->group, &sum);
            dsum[gi] = d[gi] * (float)sum;
        }
    }
    struct gemv_job j = {c->impl, r16 ? KIND_W4I8_R16 : KIND_W4I8, w->n, w->k, m, w, d, dsum,
                         y, fn, c->i8ext, c->qbuf};
    if (r16) {
        /* Chunks of whole row blocks: two per thread (a block is 16 rows). */
        int nch = 2 * c->nth, nb = w->n / 16;
        if (nch > nb) nch = nb;
        gemv_parallel(c, gemv_job_run, &j, nch < 1 ? 1 : nch);
    } else {
        run_job(c, &j);
    }
    return 0;
}

int gemv_w4a16(gemv_ctx_t *c, const w4a16_packed_t *w, const uint16_t *x, int m, uint16_t *y)
{
    if (c->w4k == GEMV_W4_INT8) return gemv_w4a16_int8(c, w, x, m, y);
    int groups = w->k / w->group;
    size_t count = (size_t)m * (size_t)w->k;
    /* Scratch: x in fp32, Σx per group, and room for a path-specific
     * reordering of x (w4_xperm). */
    /* xp starts on a 64-byte boundary: a misaligned x made every 64-byte
     * load split two cache lines (K = 11008 ran at 60 % speed). */
    size_t nsum = ((size_t)m * (size_t)groups + 15) & ~(size_t)15;
    float *xf = activations(c, x, count, nsum + count);
    if (!xf) return -1;
    float *xsum = xf + count, *xp = xsum + nsum;
    for (size_t gi = 0; gi < (size_t)m * (size_t)groups; gi++) {
        float s = 0.0f;
        for (int e = 0; e < w->group; e++) s += xf[gi * (size_t)w->group + (size_t)e];
        xsum[gi] = s;
    }
    const float *xuse = xf;
    if (c->impl->w4_xperm && c->impl->w4_xperm(xf, m, w->k, w->group, xp)) xuse = xp;
    struct gemv_job j = {c->impl, KIND_W4, w->n, w->k, m, w, xuse, xsum, y, NULL, 0, NULL};
    run_job(c, &j);
    return 0;
}

int gemv_f16(gemv_ctx_t *c, const uint16_t *w, int n, int k, const uint16_t *x, int m,
             uint16_t *y)
{
    const float *xf = activations(c, x, (size_t)m * (size_t)k, 0);
    if (!xf) return -1;
    struct gemv_job j = {c->impl, KIND_F16, n, k, m, w, xf, NULL, y, NULL, 0, NULL};
    run_job(c, &j);
    return 0;
}

int gemv_f16_f32(gemv_ctx_t *c, const uint16_t *w, int n, int k, const uint16_t *x, int m,
                 float *y)
{
    const float *xf = activations(c, x, (size_t)m * (size_t)k, 0);
    if (!xf) return -1;
    struct gemv_job j = {c->impl, KIND_F16_F32, n, k, m, w, xf, NULL, y, NULL, 0, NULL};
    run_job(c, &j);
    return 0;
}

int gemv_f32(gemv_ctx_t *c, const float *w, int n, int k, const float *x, int m, float *y)
{
    struct gemv_job j = {c->impl, KIND_F32, n, k, m, w, x, NULL, y, NULL, 0, NULL};
    run_job(c, &j);
    return 0;
}

void gemv_h2f(const gemv_ctx_t *c, const uint16_t *h, float *f, size_t n)
{
    c->impl->h2f(h, f, n);
}

void gemv_f2h(const gemv_ctx_t *c, const float *f, uint16_t *h, size_t n)
{
    if (c->impl->f2h) {
        c->impl->f2h(f, h, n);
        return;
    }
    for (size_t i = 0; i < n; i++) h[i] = f32_to_fp16(f[i]);
}

float gemv_dot_f16(const gemv_ctx_t *c, const float *q, const uint16_t *h, int d)
{
    return c->impl->dot_f16(q, h, d);
}

void gemv_axpy_f16(const gemv_ctx_t *c, float a, const uint16_t *h, float *acc, int d)
{
    c->impl->axpy_f16(a, h, acc, d);
}

int gemv_attn_head(const gemv_ctx_t *c, const float *q, const uint16_t *k, const uint16_t *v,
                   size_t stride, int npos, int d, float scale, float *sc, float *out)
{
    if (!c->impl->attn_head) return -1;
    c->impl->attn_head(q, k, v, stride, npos, d, scale, sc, out);
    return 0;
}
