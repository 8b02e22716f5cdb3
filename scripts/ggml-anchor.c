/* ggml-anchor — the project's CPU W4A16 GEMV beside llama.cpp's q4_0
 * matrix-vector product (ggml_mul_mat) on the shapes of `calibrate --bench`,
 * in one process, call by call interleaved, same thread count.
 *
 * Built only by scripts/bench-ggml-anchor.sh against a ggml that the user
 * has checked out and built (llama.cpp's ggml/ or the ggml repository); no
 * ggml code is part of this repository. ggml paths measured: the plain CPU
 * buffer (q4_0 as stored; the activation is quantised to q8_0 per call) and
 * every "extra" buffer type the CPU backend offers on this machine — on x86
 * CPU_REPACK (rows interleaved for the AVX2/AVX-512 kernels) and, where
 * built with AMX, AMX (the type llama.cpp prefers there). Our side: the
 * exact (fp16 activations) and int8 kernels. Every variant's weights are
 * rotated over copies exceeding 4x the LLC, as in calibrate. Prints one
 * table: median µs per variant at M = 1 and M = 8, and our time over the
 * best ggml path's (< 1: ours faster).
 *
 * usage: ggml-anchor [--threads N] [--quick]
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "ggml.h"

#include "calibrate.h"
#include "cpuid.h"
#include "gemv.h"
#include "membw.h"
#include "w4a16.h"
#include "base/wallclock.h"

#define MAXV 16
#define MAXS 201
#define M8 8

#define NSH CALIBRATE_BENCH_NSHAPES

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static void die(const char *m)
{
    fprintf(stderr, "ggml-anchor: %s\n", m);
    exit(1);
}

/* ---- our kernels -------------------------------------------------------- */

struct ours {
    gemv_ctx_t *ctx;
    w4a16_packed_t *w;
    int ncopies, next;
    const uint16_t *x;
    uint16_t *y;
};

static void ours_init(struct ours *o, gemv_ctx_t *ctx, int n, int k, size_t llc,
                      const uint16_t *x, uint16_t *y)
{
    o->ctx = ctx;
    o->ncopies = calibrate_copies_for(w4a16_bytes(n, k, 128), llc);
    o->next = 0;
    o->x = x;
    o->y = y;
    o->w = calloc((size_t)o->ncopies, sizeof *o->w);
    if (!o->w) die("out of memory");
    for (int c = 0; c < o->ncopies; c++) {
        w4a16_packed_t *p = &o->w[c];
        if (w4a16_packed_init(p, n, k, 128) != 0) die("out of memory");
        size_t qb = (size_t)n * (size_t)k / 2, g = (size_t)n * (size_t)(k / 128);
        for (size_t i = 0; i < qb; i += 8) {
            uint64_t r = rnd();
            memcpy(p->q + i, &r, 8);
        }
        for (size_t i = 0; i < g; i++) {
            uint64_t r = rnd();
            p->scales[i] = f32_to_fp16(0.002f + 0.002f * (float)(r & 0xFFFF) / 65536.0f);
            p->zeros[i] = (uint8_t)((r >> 16) & 15);
        }
        if (w4a16_packed_interleave(p) != 0) die("out of memory");
    }
}

static void ours_fini(struct ours *o)
{
    for (int c = 0; c < o->ncopies; c++) w4a16_packed_fini(&o->w[c]);
    free(o->w);
}

/* ---- ggml --------------------------------------------------------------- */

/* One ggml buffer type's copies of the weights and a graph per copy and M. */
struct gg {
    const char *name;
    struct ggml_context *wctx, *actx;
    ggml_backend_buffer_t wbuf, abuf;
    struct ggml_cgraph **gf[2];   /* [M=1, M=8][copy] */
    int ncopies, next;
};

static void gg_init(struct gg *g, ggml_backend_buffer_type_t buft, const char *name, int n, int k,
                    size_t llc, const float *x)
{
    memset(g, 0, sizeof *g);
    g->name = name;
    size_t row = ggml_row_size(GGML_TYPE_Q4_0, k);
    g->ncopies = calibrate_copies_for((double)row * n, llc);
    struct ggml_init_params wp = {ggml_tensor_overhead() * (size_t)(g->ncopies + 1), NULL, true};
    g->wctx = ggml_init(wp);
    size_t am = ggml_tensor_overhead() * (size_t)(2 + 2 * g->ncopies) +
                2 * (size_t)g->ncopies * (ggml_graph_overhead() + ggml_tensor_overhead()) + 4096;
    struct ggml_init_params ap = {am, NULL, true};
    g->actx = ggml_init(ap);
    if (!g->wctx || !g->actx) die("ggml_init failed");
    struct ggml_tensor **w = malloc((size_t)g->ncopies * sizeof *w);
    if (!w) die("out of memory");
    for (int c = 0; c < g->ncopies; c++) w[c] = ggml_new_tensor_2d(g->wctx, GGML_TYPE_Q4_0, k, n);
    g->wbuf = ggml_backend_alloc_ctx_tensors_from_buft(g->wctx, buft);
    if (!g->wbuf) die("cannot allocate the weights in that buffer type");
    /* q4_0 blocks: fp16 scale, 16 bytes of nibbles; scales 0.002..0.004 as
     * ours, nibbles random. */
    size_t bytes = row * (size_t)n;
    uint8_t *src = malloc(bytes);
    if (!src) die("out of memory");
    for (size_t b = 0; b < bytes; b += 18) {
        uint16_t d = f32_to_fp16(0.002f + 0.002f * (float)(rnd() & 0xFFFF) / 65536.0f);
        memcpy(src + b, &d, 2);
        for (int i = 0; i < 16; i += 8) {
            uint64_t r = rnd();
            memcpy(src + b + 2 + i, &r, 8);
        }
    }
    for (int c = 0; c < g->ncopies; c++) ggml_backend_tensor_set(w[c], src, 0, bytes);
    free(src);
    struct ggml_tensor *xt[2] = {ggml_new_tensor_2d(g->actx, GGML_TYPE_F32, k, 1),
                                 ggml_new_tensor_2d(g->actx, GGML_TYPE_F32, k, M8)};
    for (int mi = 0; mi < 2; mi++) {
        g->gf[mi] = malloc((size_t)g->ncopies * sizeof *g->gf[mi]);
        if (!g->gf[mi]) die("out of memory");
        for (int c = 0; c < g->ncopies; c++) {
            struct ggml_tensor *y = ggml_mul_mat(g->actx, w[c], xt[mi]);
            g->gf[mi][c] = ggml_new_graph_custom(g->actx, 4, false);
            ggml_build_forward_expand(g->gf[mi][c], y);
        }
    }
    g->abuf = ggml_backend_alloc_ctx_tensors_from_buft(g->actx, ggml_backend_cpu_buffer_type());
    if (!g->abuf) die("cannot allocate activations");
    ggml_backend_tensor_set(xt[0], x, 0, (size_t)k * sizeof(float));
    ggml_backend_tensor_set(xt[1], x, 0, (size_t)k * M8 * sizeof(float));
    free(w);
}

static void gg_fini(struct gg *g)
{
    ggml_backend_buffer_free(g->wbuf);
    ggml_backend_buffer_free(g->abuf);
    ggml_free(g->wctx);
    ggml_free(g->actx);
    free(g->gf[0]);
    free(g->gf[1]);
}

/* 1 when ggml computes M = mi (0: 1, 1: 8) with weights in buft without
 * dying: run in a child process on a small matrix, because an extra buffer
 * type can be offered where its instructions fault (AMX tiles under a
 * hypervisor that lists AMX but does not enable its state: SIGILL). Called
 * before this process starts ggml's threads, so fork is safe. */
static int gg_works(ggml_backend_t be, ggml_backend_buffer_type_t buft, int mi, const float *x)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) return 0;
    if (pid == 0) {
        struct gg g;
        gg_init(&g, buft, "probe", 64, 256, 0, x);
        g.ncopies = 1;
        _exit(ggml_backend_graph_compute(be, g.gf[mi][0]) == GGML_STATUS_SUCCESS ? 0 : 1);
    }
    int st = 0;
    if (waitpid(pid, &st, 0) != pid) return 0;
    return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

static void quiet_log(enum ggml_log_level level, const char *text, void *user)
{
    (void)user;
    if (level == GGML_LOG_LEVEL_ERROR || level == GGML_LOG_LEVEL_WARN) fputs(text, stderr);
}

/* ---- variants ----------------------------------------------------------- */

struct var {
    char label[40];
    int kind;        /* 0 ours, 1 ggml */
    int m, kern;
    struct ours *o;
    struct gg *g;
    ggml_backend_t be;
    double t[MAXS], med;
};

static void run_var(struct var *v)
{
    if (v->kind == 0) {
        err_t e;
        if (gemv_ctx_set_w4_kernel(v->o->ctx, v->kern, &e) != 0) die(e.msg);
        int c = v->o->next++ % v->o->ncopies;
        if (gemv_w4a16(v->o->ctx, &v->o->w[c], v->o->x, v->m, v->o->y) != 0) die("gemv failed");
    } else {
        int c = v->g->next++ % v->g->ncopies;
        if (ggml_backend_graph_compute(v->be, v->g->gf[v->m == 1 ? 0 : 1][c]) != GGML_STATUS_SUCCESS)
            die("ggml compute failed");
    }
}

int main(int argc, char **argv)
{
    int threads = 2, quick = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--quick")) quick = 1;
        else {
            fprintf(stderr, "usage: ggml-anchor [--threads N] [--quick]\n");
            return 2;
        }
    }
    if (threads < 1) die("--threads must be >= 1");
    size_t llc = cpu_llc_bytes();
    err_t e;
    gemv_ctx_t *ctx = gemv_ctx_create(threads, GEMV_ISA_AUTO, &e);
    if (!ctx) die(e.msg);
    ggml_log_set(quiet_log, NULL);
    ggml_backend_t be = ggml_backend_cpu_init();
    if (!be) die("ggml_backend_cpu_init failed");
    ggml_backend_cpu_set_n_threads(be, threads);
    struct ggml_threadpool_params tpp = ggml_threadpool_params_default(threads);
    struct ggml_threadpool *tp = ggml_threadpool_new(&tpp);
    if (tp) ggml_backend_cpu_set_threadpool(be, tp);

    /* The buffer types: plain CPU, then each extra one the device offers. */
    ggml_backend_buffer_type_t bufts[8];
    const char *bnames[8];
    int nb = 0;
    bufts[nb] = ggml_backend_cpu_buffer_type();
    bnames[nb++] = "plain";
    ggml_backend_dev_t dev = ggml_backend_get_device(be);
    ggml_backend_reg_t reg = ggml_backend_dev_backend_reg(dev);
    ggml_backend_dev_get_extra_bufts_t get_extra =
        (ggml_backend_dev_get_extra_bufts_t)ggml_backend_reg_get_proc_address(
            reg, "ggml_backend_dev_get_extra_bufts");
    if (get_extra)
        for (ggml_backend_buffer_type_t *b = get_extra(dev); b && *b && nb < 8; b++) {
            bufts[nb] = *b;
            bnames[nb++] = ggml_backend_buft_name(*b);
        }

    size_t maxk = 11008;
    uint16_t *xh = malloc(M8 * maxk * sizeof *xh), *yh = malloc(M8 * (size_t)32000 * sizeof *yh);
    float *xf = malloc(M8 * maxk * sizeof *xf);
    if (!xh || !yh || !xf) die("out of memory");
    for (size_t i = 0; i < M8 * maxk; i++) {
        xh[i] = f32_to_fp16((float)(rnd() >> 40) / 8388608.0f - 1.0f);
        xf[i] = fp16_to_f32(xh[i]);
    }
    int works[8][2];
    for (int b = 0; b < nb; b++)
        for (int mi = 0; mi < 2; mi++) works[b][mi] = gg_works(be, bufts[b], mi, xf);
    size_t bw = 8 * llc < ((size_t)256 << 20) ? (size_t)256 << 20 : 8 * llc;
    double ceil1 = membw_read_gbs(ctx, bw, 3, &e);
    double ceilm = membw_read_streams_gbs(ctx, bw, MEMBW_STREAMS, 3, &e);

    char model[200];
    cpu_model_name(model, sizeof model);
    printf("== ours vs ggml q4_0 mul_mat: %s, %d threads, ggml buffer types:", model, threads);
    for (int b = 0; b < nb; b++)
        printf(" %s%s", bnames[b], works[b][0] && works[b][1] ? "" : works[b][0] ? " (fails at M=8: left out there)" : works[b][1] ? " (fails at M=1: left out there)" : " (fails: left out)");
    printf("\nread ceiling: 1 stream per thread %.2f GB/s, %d streams per thread %.2f GB/s\n",
           ceil1, MEMBW_STREAMS, ceilm);
    printf("median us per call, all variants interleaved call by call; ratio = ours (best "
           "kernel) / best ggml path (< 1: ours faster)\n");
    for (int s = 0; s < NSH; s++) {
        int n = calibrate_bench_shapes[s].n, k = calibrate_bench_shapes[s].k;
        struct ours o;
        ours_init(&o, ctx, n, k, llc, xh, yh);
        struct gg g[8];
        for (int b = 0; b < nb; b++) gg_init(&g[b], bufts[b], bnames[b], n, k, llc, xf);
        struct var v[MAXV];
        int nv = 0, start[3];
        static const int ms[2] = {1, M8};
        for (int mi = 0; mi < 2; mi++) {
            start[mi] = nv;
            for (int kern = 0; kern < GEMV_W4_COUNT; kern++) {
                v[nv] = (struct var){{0}, 0, ms[mi], kern, &o, NULL, NULL, {0}, 0};
                snprintf(v[nv++].label, sizeof v[0].label, "ours %s", gemv_w4_kernel_name(kern));
            }
            for (int b = 0; b < nb; b++) {
                if (!works[b][mi]) continue;
                v[nv] = (struct var){{0}, 1, ms[mi], 0, NULL, &g[b], be, {0}, 0};
                snprintf(v[nv++].label, sizeof v[0].label, "ggml %s", bnames[b]);
            }
        }
        int warm = 2, reps = quick ? 7 : 21;
        for (int w = 0; w < warm; w++)
            for (int i = 0; i < nv; i++) run_var(&v[i]);
        for (int r = 0; r < reps; r++)
            for (int i = 0; i < nv; i++) {
                double t0 = wallclock_s();
                run_var(&v[i]);
                v[i].t[r] = wallclock_s() - t0;
            }
        for (int i = 0; i < nv; i++) {
            qsort(v[i].t, (size_t)reps, sizeof v[i].t[0], calibrate_cmp_double);
            v[i].med = v[i].t[reps / 2];
        }
        start[2] = nv;
        for (int mi = 0; mi < 2; mi++) {
            struct var *vm = v + start[mi];
            int per = start[mi + 1] - start[mi];
            double best_ours = 1e30, best_gg = 1e30;
            printf("%-24s M=%d:", calibrate_bench_shapes[s].what, ms[mi]);
            for (int i = 0; i < per; i++) {
                printf("  %s %.1f", vm[i].label, vm[i].med * 1e6);
                if (vm[i].kind == 0 && vm[i].med < best_ours) best_ours = vm[i].med;
                if (vm[i].kind == 1 && vm[i].med < best_gg) best_gg = vm[i].med;
            }
            printf("  | ours/best-ggml %.2f (exact/best-ggml %.2f)\n", best_ours / best_gg,
                   vm[0].med / best_gg);
        }
        fflush(stdout);
        ours_fini(&o);
        for (int b = 0; b < nb; b++) gg_fini(&g[b]);
    }
    free(xh);
    free(yh);
    free(xf);
    if (tp) ggml_threadpool_free(tp);
    ggml_backend_free(be);
    gemv_ctx_free(ctx);
    return 0;
}
