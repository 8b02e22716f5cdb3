/* calibrate_cuda — `build/calibrate --device cuda --model CARD [--quant fp16|w4a16]
 * [--out FILE] [--log FILE.csv] [--reps N] [--warmup N] [--max-context N]
 * [--quick] [--no-token]`.
 *
 * Writes the calibration table of sim/model/caltable.h (docs/formats.md) for the GPU it
 * runs on (device_kind: cuda), every number measured here:
 *   ceilings   device-to-device copy GB/s (read + write), streaming read
 *              GB/s, large FP16 GEMM TFLOP/s (cuBLAS, fp32 accumulation)
 *   fp16       every linear shape of the card at M = 1, 2, 4, …, 1024 tokens:
 *              cublasGemmEx and each cublasLt heuristic candidate timed, the
 *              fastest kept; attention for q = 1..9 new tokens at contexts
 *              128 … 32k, batch 1 and 8; whole forward steps (all layers +
 *              lm_head) when the model fits in device memory
 *   w4a16      every linear shape at M = 1..16 with the W4A16 kernel, the
 *              cuBLAS FP16 GEMV at M = 1 beside it (log only), attention for
 *              q = 1, one whole W4A16 draft token when it fits
 * Timing: cubench (events, warm-up, 256 MiB L2 flush before every rep,
 * median). gbs counts the fewest bytes (weights once, activations in and
 * out); ceiling_frac = roofline time from the measured ceilings / measured
 * time. Every row, every candidate, goes to the --log CSV as well (default:
 * the --out path with .csv for .yaml).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "attn_cuda.cuh"
#include "cubench.cuh"
#include "cucheck.cuh"
#include "cugemm.cuh"
#include "layer_cuda.cuh"
#include "w4a16_cuda.cuh"

extern "C" {
#include "calibrate_cuda.h"
#include "calprov.h"
#include "model/caltable.h"
#include "model/cards.h"
#include "shapes.h"
}

typedef struct cal_opts {
    const char *model, *out, *log;
    int quant_w4, reps, warmup, max_context, quick, no_token;
    int quiet;          /* --quiet: no progress line */
    char log_buf[1024];
} cal_opts_t;

typedef struct cal {
    cal_opts_t o;
    llm_card_t card;
    cubench_t bench;
    cugemm_t gemm;
    caltable_t table;
    int rows_cap;
    FILE *log;
    FILE *say;          /* human summary: stdout, or stderr when the table goes there */
    double copy_gbs, read_gbs, tflops, sm_mhz;
    int sms;
    size_t l2;
} cal_t;

/* ---- options ---------------------------------------------------------- */

/* Messages from run() carry no "calibrate: ": calibrate_cuda_run adds it
 * (they read "calibrate: calibrate --device cuda: ..." when both did). */
static int usage(err_t *err, const char *what)
{
    return err_set(err, ERR_INPUT,
                   "--device cuda: %s\nusage: calibrate --device cuda --model CARD "
                   "[--quant fp16|w4a16] [--out FILE] [--log FILE.csv] [--reps N] "
                   "[--warmup N] [--max-context N] [--quick] [--no-token] [--quiet]", what);
}

static int parse_int(const char *s, int lo, int hi, int *out)
{
    char *end = NULL;
    long v = strtol(s, &end, 10);
    if (!s[0] || *end || v < lo || v > hi) return -1;
    *out = (int)v;
    return 0;
}

static int parse_opts(int argc, char **argv, cal_opts_t *o, err_t *err)
{
    memset(o, 0, sizeof *o);
    o->reps = 15; o->warmup = 3; o->max_context = 32768;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--quick")) { o->quick = 1; continue; }
        if (!strcmp(a, "--no-token")) { o->no_token = 1; continue; }
        if (!strcmp(a, "--quiet")) { o->quiet = 1; continue; }
        if (!v) return usage(err, "option without value");
        i++;
        if (!strcmp(a, "--device")) {
            if (strcmp(v, "cuda")) return usage(err, "--device must be cuda here");
        } else if (!strcmp(a, "--model")) o->model = v;
        else if (!strcmp(a, "--out")) o->out = v;
        else if (!strcmp(a, "--log")) o->log = v;
        else if (!strcmp(a, "--quant")) {
            if (!strcmp(v, "w4a16")) o->quant_w4 = 1;
            else if (strcmp(v, "fp16")) return usage(err, "--quant must be fp16 or w4a16");
        } else if (!strcmp(a, "--reps")) {
            if (parse_int(v, 1, CUBENCH_MAX_REPS, &o->reps)) return usage(err, "bad --reps");
        } else if (!strcmp(a, "--warmup")) {
            if (parse_int(v, 0, 100, &o->warmup)) return usage(err, "bad --warmup");
        } else if (!strcmp(a, "--max-context")) {
            if (parse_int(v, 128, 1 << 20, &o->max_context)) return usage(err, "bad --max-context");
        } else {
            return usage(err, a);
        }
    }
    if (!o->model) return usage(err, "--model is required");
    /* The log goes beside the table by default (FILE.yaml -> FILE.csv), so
     * it needs no option the shared CLI parser might not know; the one
     * definition of that name is calibrate_main.c's too, which checks it
     * against the card and the table. */
    if (!o->log && o->out) {
        if (calibrate_cuda_log_path(o->out, o->log_buf, sizeof o->log_buf) != 0)
            return usage(err, "--out path too long");
        o->log = o->log_buf;
    }
    if (o->quick) {
        o->reps = o->reps < 5 ? o->reps : 5;
        o->warmup = 1;
        if (o->max_context > 1024) o->max_context = 1024;
    }
    return 0;
}

/* ---- rows and log ----------------------------------------------------- */

static int add_row(cal_t *c, const caltable_row_t *r, err_t *err)
{
    if (c->table.nrows == c->rows_cap) {
        int cap = c->rows_cap ? 2 * c->rows_cap : 256;
        caltable_row_t *n = (caltable_row_t *)realloc(c->table.rows, (size_t)cap * sizeof *n);
        if (!n) return err_set(err, ERR_RUNTIME, "out of memory");
        c->table.rows = n;
        c->rows_cap = cap;
    }
    c->table.rows[c->table.nrows++] = *r;
    return 0;
}

static void log_row(cal_t *c, const char *variant, const caltable_row_t *r)
{
    static const char *ops[] = {"linear", "attention", "token"};
    if (!c->log) return;
    fprintf(c->log, "%s,%s,%s,%s,%s,%d,%d,%d,%d,%d,%d,%d,%d,%d,%.6e,%.4f,%.4f,%.4f\n",
            c->card.name, c->o.quant_w4 ? "w4a16" : "fp16", ops[r->op], variant, r->name,
            r->m, r->n, r->k, r->q, r->context, r->heads, r->kv_heads, r->head_dim, r->batch,
            r->time_s, r->gbs, r->gflops, r->ceiling_frac);
}

/* Roofline fraction: the time the measured ceilings allow over the time seen. */
static double roof_frac(const cal_t *c, double bytes, double flops, double t)
{
    double tb = bytes / (c->copy_gbs * 1e9), tf = flops / (c->tflops * 1e12);
    return (tb > tf ? tb : tf) / t;
}

/* A progress line, redrawn in place; only on a terminal, so logs stay clean,
 * and not with --quiet. */
/* 1 once a progress line is on stderr: a final error then starts on a line
 * of its own (without one, a leading newline would be a blank line). */
static int progress_drawn;

static void progress(const cal_t *c, const char *fmt, ...)
{
    va_list ap;
    if (c->o.quiet || !isatty(fileno(stderr))) return;
    progress_drawn = 1;
    va_start(ap, fmt);
    fprintf(stderr, "\rcalibrate[%s %s] ", c->card.name, c->o.quant_w4 ? "w4a16" : "fp16");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\033[K");
    va_end(ap);
}

/* ---- timed closures --------------------------------------------------- */

typedef struct gemm_ctx {
    cugemm_t *g;
    const cugemm_plan_t *p;
    int which;                   /* −1: cublasGemmEx */
    const __half *w, *x;
    __half *y;
    int t, n, k;
} gemm_ctx_t;

static int gemm_fn(void *ctx, cudaStream_t st, err_t *err)
{
    gemm_ctx_t *c = (gemm_ctx_t *)ctx;
    if (c->which < 0) return cugemm_ex(c->g, c->w, c->x, c->y, c->t, c->n, c->k, st, err);
    return cugemm_plan_run(c->g, c->p, c->which, c->w, c->x, c->y, st, err);
}

typedef struct w4_ctx { const w4a16_cuda_t *w; const __half *x; __half *y; int m; } w4_ctx_t;

static int w4_fn(void *ctx, cudaStream_t st, err_t *err)
{
    w4_ctx_t *c = (w4_ctx_t *)ctx;
    return w4a16_cuda_gemm(c->w, c->x, c->m, c->y, st, err);
}

typedef struct attn_ctx { attn_cuda_args_t a; attn_cuda_ws_t *ws; } attn_ctx_t;

static int attn_fn(void *ctx, cudaStream_t st, err_t *err)
{
    attn_ctx_t *c = (attn_ctx_t *)ctx;
    return attn_cuda_run(&c->a, c->ws, 0, st, err);
}

/* ---- ceilings and provenance ------------------------------------------ */

__global__ void spin_kernel(long long cycles, long long *out)
{
    long long t0 = clock64(), t = t0;
    while (t - t0 < cycles) t = clock64();
    if (threadIdx.x == 0) *out = t - t0;
}

typedef struct spin_ctx { long long cycles, *out; } spin_ctx_t;

static int spin_fn(void *ctx, cudaStream_t st, err_t *err)
{
    spin_ctx_t *c = (spin_ctx_t *)ctx;
    spin_kernel<<<1, 32, 0, st>>>(c->cycles, c->out);
    CU_LAUNCH_CHECK();
    return 0;
}

/* SM clock actually seen: clock64 cycles over event time, right after the
 * GEMM ceiling (the clocks are then at their loaded state). */
static int measure_clock(cal_t *c, err_t *err)
{
    spin_ctx_t s = {20000000, NULL};
    long long seen = 0;
    double t = 0;
    CU_TRY(cudaMalloc((void **)&s.out, sizeof(long long)));
    int rc = cubench_median(&c->bench, spin_fn, &s, 1, 5, 0, &t, NULL, err);
    if (rc == 0 && cudaMemcpy(&seen, s.out, sizeof seen, cudaMemcpyDeviceToHost) == cudaSuccess)
        c->sm_mhz = (double)seen / t / 1e6;
    CU_IGNORE(cudaFree(s.out));
    return rc;
}

static int measure_ceilings(cal_t *c, err_t *err)
{
    size_t bytes = c->o.quick ? ((size_t)256 << 20) : ((size_t)1 << 30);
    progress(c, "ceilings: copy");
    if (cubench_copy_gbs(&c->bench, bytes, &c->copy_gbs, err)) return -1;
    progress(c, "ceilings: read");
    if (cubench_read_gbs(&c->bench, bytes, &c->read_gbs, err)) return -1;
    progress(c, "ceilings: fp16 gemm");
    int n = c->o.quick ? 2048 : 8192;
    size_t e = (size_t)n * n;
    __half *w = NULL, *x = NULL, *y = NULL;
    double t = 0;
    int rc = -1;
    if (cudaMalloc((void **)&w, e * 2) == cudaSuccess &&
        cudaMalloc((void **)&x, e * 2) == cudaSuccess &&
        cudaMalloc((void **)&y, e * 2) == cudaSuccess &&
        cufill_half(w, e, 21, -1.f, 1.f, c->bench.st, err) == 0 &&
        cufill_half(x, e, 22, -1.f, 1.f, c->bench.st, err) == 0) {
        gemm_ctx_t g = {&c->gemm, NULL, -1, w, x, y, n, n, n};
        if (cubench_median(&c->bench, gemm_fn, &g, 3, c->o.quick ? 3 : 10, 0, &t, NULL, err) == 0) {
            c->tflops = 2.0 * n * (double)n * n / t / 1e12;
            rc = 0;
        }
    } else if (!err->msg[0]) {
        err_set(err, ERR_RUNTIME, "%s:%d: cudaMalloc for the GEMM ceiling failed", __FILE__,
                __LINE__);
    }
    CU_IGNORE(cudaFree(w));
    CU_IGNORE(cudaFree(x));
    CU_IGNORE(cudaFree(y));
    if (rc) return -1;
    progress(c, "clock");
    return measure_clock(c, err);
}

static int provenance(cal_t *c, int argc, char **argv, err_t *err)
{
    caltable_t *t = &c->table;
    int dev = 0, drv = 0, rt = 0, clk = 0, mclk = 0, blas = 0;
    cudaDeviceProp p;
    CU_TRY(cudaGetDevice(&dev));
    CU_TRY(cudaGetDeviceProperties(&p, dev));
    CU_TRY(cudaDriverGetVersion(&drv));
    CU_TRY(cudaRuntimeGetVersion(&rt));
    CU_TRY(cudaDeviceGetAttribute(&clk, cudaDevAttrClockRate, dev));
    CU_TRY(cudaDeviceGetAttribute(&mclk, cudaDevAttrMemoryClockRate, dev));
    CUBLAS_TRY(cublasGetVersion(c->gemm.h, &blas));
    c->sms = p.multiProcessorCount;
    c->l2 = (size_t)p.l2CacheSize;
    strcpy(t->device_kind, "cuda");
    snprintf(t->device, sizeof t->device, "%.180s (sm_%d%d, %d SMs, %.1f GiB, L2 %.0f MB)", p.name,
             p.major, p.minor, p.multiProcessorCount, p.totalGlobalMem / 1073741824.0,
             p.l2CacheSize / 1e6);
    snprintf(t->model, sizeof t->model, "%s", c->card.name);
    strcpy(t->quant, c->o.quant_w4 ? "w4a16" : "fp16");
    calprov_command(argc, argv, t->command, sizeof t->command);
    calprov_date_utc(t->date, sizeof t->date);
    calprov_host(t->host, sizeof t->host);
    snprintf(t->compiler, sizeof t->compiler,
             "nvcc %d.%d (-O3, sm_90 and sm_80 code); CUDA driver %d.%d, runtime %d.%d; "
             "cuBLAS %d", __CUDACC_VER_MAJOR__, __CUDACC_VER_MINOR__, drv / 1000,
             (drv % 1000) / 10, rt / 1000, (rt % 1000) / 10, blas);
    snprintf(t->notes, sizeof t->notes,
             "SM clock seen %.0f MHz (clock64 over event time after the GEMM ceiling); "
             "max SM clock %d MHz, memory clock %d MHz (device attributes); "
             "median of %d reps after %d warm-ups, L2 flushed by a %zu MiB write before "
             "every rep; gbs counts weights once plus activations in and out; "
             "ceiling_frac = roofline time (copy_gbs, fp16_tflops) / time; fp16 linear: "
             "fastest of cublasGemmEx and up to %d cublasLt heuristic algorithms, fp32 "
             "accumulation; w4a16: CUDA-core lop3 GEMV, group 128; attention: "
             "flash-decoding split-K, fp32 softmax on CUDA cores; token rows: one forward "
             "step of all layers + lm_head replayed from a CUDA graph, fp16: m = batch x q new tokens (m = 1: one "
             "sequence, 1 token), w4a16: m = 1, each sequence over context 1024",
             c->sm_mhz, clk / 1000, mclk / 1000, c->o.reps, c->o.warmup,
             CUBENCH_FLUSH_BYTES >> 20, CUGEMM_MAX_ALGOS);
    t->copy_gbs = c->copy_gbs;
    t->read_gbs = c->read_gbs;
    t->fp16_tflops = c->tflops;
    return 0;
}

/* ---- linear rows ------------------------------------------------------ */

typedef shapes_linear_t shape_t;

/* Fewest bytes of a linear layer at m tokens: the weights once, the fp16
 * activations in and out. */
static double fp16_linear_bytes(const shape_t *s, int m)
{
    return 2.0 * ((double)s->n * s->k + (double)m * s->k + (double)m * s->n);
}

static double w4_linear_bytes(const shape_t *s, int m)
{
    return w4a16_bytes(s->n, s->k, 128) + 2.0 * m * ((double)s->k + s->n);
}

/* The rates of a row from its measured time t: GB/s over the fewest bytes,
 * GFLOP/s, and the roofline fraction. */
static void set_rates(const cal_t *c, caltable_row_t *r, double bytes, double flops, double t)
{
    r->time_s = t;
    r->gbs = bytes / t / 1e9;
    r->gflops = flops / t / 1e9;
    r->ceiling_frac = roof_frac(c, bytes, flops, t);
}

/* A linear row of shape s at m tokens timed at t seconds. */
static void set_linear(const cal_t *c, caltable_row_t *r, const shape_t *s, const char *quant,
                       int m, double bytes, double t)
{
    memset(r, 0, sizeof *r);
    r->op = CAL_LINEAR;
    snprintf(r->name, sizeof r->name, "%.15s", s->name);
    snprintf(r->quant, sizeof r->quant, "%s", quant);
    r->m = m; r->n = s->n; r->k = s->k;
    set_rates(c, r, bytes, 2.0 * m * (double)s->n * s->k, t);
}

/* Times one fp16 linear shape at t tokens: GemmEx and every Lt candidate.
 * *best_s gets the fastest; every candidate is logged. */
static int time_fp16_linear(cal_t *c, const shape_t *s, int t, const __half *w,
                            const __half *x, __half *y, double *best_s, err_t *err)
{
    gemm_ctx_t g = {&c->gemm, NULL, -1, w, x, y, t, s->n, s->k};
    cugemm_plan_t plan;
    double med = 0, bytes = fp16_linear_bytes(s, t);
    caltable_row_t r;
    char variant[32];
    if (cubench_median(&c->bench, gemm_fn, &g, c->o.warmup, c->o.reps, 1, &med, NULL, err))
        return -1;
    *best_s = med;
    set_linear(c, &r, s, "fp16", t, bytes, med);
    log_row(c, "gemmex", &r);
    if (cugemm_plan_init(&c->gemm, &plan, t, s->n, s->k, err)) {
        fprintf(stderr, "\ncalibrate: %s (cublasLt skipped for this shape)\n", err->msg);
        err->msg[0] = 0;
        err->code = 0;
        /* A failed runtime call inside the library would otherwise be
         * reported by the next CU_LAUNCH_CHECK as that launch's error. */
        CU_IGNORE(cudaGetLastError());
        return 0;
    }
    g.p = &plan;
    for (int a = 0; a < plan.nalgo; a++) {
        g.which = a;
        err_t e2 = {0, {0}};
        if (cubench_median(&c->bench, gemm_fn, &g, c->o.warmup, c->o.reps, 1, &med, NULL, &e2)) {
            fprintf(stderr, "\ncalibrate: lt algo %d: %s (skipped)\n", a, e2.msg);
            CU_IGNORE(cudaGetLastError());   /* see above */
            continue;
        }
        set_linear(c, &r, s, "fp16", t, bytes, med);
        snprintf(variant, sizeof variant, "lt%d", a);
        log_row(c, variant, &r);
        if (med < *best_s) *best_s = med;
    }
    cugemm_plan_fini(&plan);
    return 0;
}

static int fp16_linears(cal_t *c, err_t *err)
{
    shape_t sh[SHAPES_NLINEAR];
    int ns = shapes_linear(&c->card, sh), maxm = c->o.quick ? 16 : 1024;
    for (int i = 0; i < ns; i++) {
        const shape_t *s = &sh[i];
        __half *w = NULL, *x = NULL, *y = NULL;
        size_t we = (size_t)s->n * s->k;
        int rc = -1;
        if (cudaMalloc((void **)&w, we * 2) != cudaSuccess ||
            cudaMalloc((void **)&x, (size_t)maxm * s->k * 2) != cudaSuccess ||
            cudaMalloc((void **)&y, (size_t)maxm * s->n * 2) != cudaSuccess) {
            err_set(err, ERR_RUNTIME, "%s:%d: cudaMalloc for %s failed", __FILE__, __LINE__,
                    s->name);
        } else if (cufill_half(w, we, 100 + i, -0.05f, 0.05f, c->bench.st, err) == 0 &&
                   cufill_half(x, (size_t)maxm * s->k, 200 + i, -1.f, 1.f, c->bench.st, err) == 0) {
            rc = 0;
            for (int m = 1; m <= maxm && rc == 0; m *= 2) {
                progress(c, "linear %s m=%d", s->name, m);
                double best = 0;
                rc = time_fp16_linear(c, s, m, w, x, y, &best, err);
                if (rc) break;
                caltable_row_t r;
                set_linear(c, &r, s, "fp16", m, fp16_linear_bytes(s, m), best);
                log_row(c, "best", &r);
                rc = add_row(c, &r, err);
            }
        }
        CU_IGNORE(cudaFree(w));
        CU_IGNORE(cudaFree(x));
        CU_IGNORE(cudaFree(y));
        if (rc) return -1;
    }
    return 0;
}

/* W4A16 at M = 1..16 and, at M = 1, the cuBLAS FP16 GEMV on the same shape
 * (logged as fp16_baseline; the summary prints the speedup). */
static int w4_linears(cal_t *c, err_t *err)
{
    shape_t sh[SHAPES_NLINEAR];
    int ns = shapes_linear(&c->card, sh);
    fprintf(c->say, "W4A16 GEMV vs cuBLAS FP16 at M=1 (%s; copy ceiling %.0f GB/s):\n", c->card.name,
           c->copy_gbs);
    fprintf(c->say, "  %-8s %6s %6s %10s %8s %6s %10s %8s\n", "shape", "n", "k", "w4_us", "w4_GB/s",
           "frac", "fp16_us", "speedup");
    for (int i = 0; i < ns; i++) {
        const shape_t *s = &sh[i];
        w4a16_cuda_t w;
        __half *x = NULL, *y = NULL, *wh = NULL;
        int rc = -1;
        double t1 = 0, tf = 0;
        if (w4a16_cuda_init(&w, s->n, s->k, 128, err)) { w4a16_cuda_fini(&w); return -1; }
        if (cudaMalloc((void **)&x, (size_t)W4A16_CUDA_MAX_M * s->k * 2) != cudaSuccess ||
            cudaMalloc((void **)&y, (size_t)W4A16_CUDA_MAX_M * s->n * 2) != cudaSuccess ||
            cudaMalloc((void **)&wh, (size_t)s->n * s->k * 2) != cudaSuccess) {
            err_set(err, ERR_RUNTIME, "%s:%d: cudaMalloc for %s failed", __FILE__, __LINE__,
                    s->name);
        } else if (w4a16_cuda_fill_random(&w, 300 + i, c->bench.st, err) == 0 &&
                   cufill_half(x, (size_t)W4A16_CUDA_MAX_M * s->k, 400 + i, -1.f, 1.f,
                               c->bench.st, err) == 0 &&
                   cufill_half(wh, (size_t)s->n * s->k, 500 + i, -0.05f, 0.05f, c->bench.st,
                               err) == 0) {
            rc = 0;
            for (int m = 1; m <= W4A16_CUDA_MAX_M && rc == 0; m++) {
                progress(c, "w4a16 %s m=%d", s->name, m);
                w4_ctx_t wc = {&w, x, y, m};
                double med = 0;
                rc = cubench_median(&c->bench, w4_fn, &wc, c->o.warmup, c->o.reps, 1, &med,
                                    NULL, err);
                if (rc) break;
                caltable_row_t r;
                set_linear(c, &r, s, "w4a16", m, w4_linear_bytes(s, m), med);
                log_row(c, "w4simt", &r);
                rc = add_row(c, &r, err);
                if (m == 1) t1 = med;
            }
            if (rc == 0)
                rc = time_fp16_linear(c, s, 1, wh, x, y, &tf, err);
            if (rc == 0) {
                caltable_row_t r;
                set_linear(c, &r, s, "fp16", 1, fp16_linear_bytes(s, 1), tf);
                log_row(c, "fp16_baseline", &r);
                double b4 = w4_linear_bytes(s, 1);
                fprintf(c->say, "  %-8s %6d %6d %10.2f %8.0f %6.3f %10.2f %8.2f\n", s->name, s->n, s->k,
                       t1 * 1e6, b4 / t1 / 1e9, b4 / t1 / 1e9 / c->copy_gbs, tf * 1e6, tf / t1);
            }
        }
        w4a16_cuda_fini(&w);
        CU_IGNORE(cudaFree(x));
        CU_IGNORE(cudaFree(y));
        CU_IGNORE(cudaFree(wh));
        if (rc) return -1;
    }
    return 0;
}

/* ---- attention -------------------------------------------------------- */

static int attention(cal_t *c, err_t *err)
{
    const llm_card_t *m = &c->card;
    const int D = m->hidden / m->heads;
    const int qmax = c->o.quant_w4 ? 1 : 9, bmax = c->o.quant_w4 ? 1 : 8;
    const int cap = c->o.max_context + qmax;
    const size_t cache = (size_t)bmax * m->kv_heads * (size_t)cap * D;
    const size_t qe = (size_t)bmax * qmax * m->heads * D;
    __half *kc = NULL, *vc = NULL, *qp = NULL, *out = NULL;
    int *ctx = NULL, rc = -1;
    attn_cuda_ws_t ws;
    memset(&ws, 0, sizeof ws);
    if (cudaMalloc((void **)&kc, cache * 2) != cudaSuccess ||
        cudaMalloc((void **)&vc, cache * 2) != cudaSuccess ||
        cudaMalloc((void **)&qp, qe * 2) != cudaSuccess ||
        cudaMalloc((void **)&out, qe * 2) != cudaSuccess ||
        cudaMalloc((void **)&ctx, (size_t)bmax * sizeof(int)) != cudaSuccess) {
        err_set(err, ERR_RUNTIME, "%s:%d: cudaMalloc for attention failed", __FILE__, __LINE__);
        goto done;
    }
    if (attn_cuda_ws_init(&ws, (long)bmax * qmax * m->heads, D, err) ||
        cufill_half(kc, cache, 600, -1.f, 1.f, c->bench.st, err) ||
        cufill_half(vc, cache, 601, -1.f, 1.f, c->bench.st, err) ||
        cufill_half(qp, qe, 602, -1.f, 1.f, c->bench.st, err))
        goto done;
    for (int b = 1; b <= bmax; b *= 8) {
        for (int ctxlen = 128; ctxlen <= c->o.max_context; ctxlen *= 2) {
            int hc[8];
            for (int i = 0; i < b; i++) hc[i] = ctxlen;
            /* cudaMemcpy from pageable memory may return before the DMA
             * lands and is ordered only on the legacy stream, not on the
             * non-blocking bench stream the kernels run on: wait for it, or
             * the first launches could read stale (or, at first, never
             * written) lengths and index past the cache. */
            if (cudaMemcpy(ctx, hc, (size_t)b * sizeof(int), cudaMemcpyHostToDevice) != cudaSuccess ||
                cudaDeviceSynchronize() != cudaSuccess) {
                err_set(err, ERR_RUNTIME, "%s:%d: cudaMemcpy of the context lengths failed",
                        __FILE__, __LINE__);
                goto done;
            }
            for (int q = 1; q <= qmax; q++) {
                progress(c, "attention batch=%d context=%d q=%d", b, ctxlen, q);
                attn_ctx_t a;
                memset(&a, 0, sizeof a);
                a.ws = &ws;
                a.a.batch = b; a.a.q = q; a.a.heads = m->heads; a.a.kv_heads = m->kv_heads;
                a.a.head_dim = D; a.a.qp = qp; a.a.q_ld = (long)m->heads * D;
                a.a.kc = kc; a.a.vc = vc; a.a.cap = cap; a.a.ctx = ctx; a.a.max_ctx = ctxlen;
                a.a.out = out; a.a.out_ld = (long)m->heads * D;
                double med = 0;
                if (cubench_median(&c->bench, attn_fn, &a, c->o.warmup, c->o.reps, 1, &med,
                                   NULL, err))
                    goto done;
                double L = ctxlen + q;
                double bytes = (double)b * (2.0 * L * m->kv_heads * D * 2 + 2.0 * 2 * q * m->heads * D);
                double flops = (double)b * 4.0 * q * m->heads * L * D;
                caltable_row_t r;
                memset(&r, 0, sizeof r);
                r.op = CAL_ATTENTION;
                r.q = q; r.context = ctxlen; r.heads = m->heads; r.kv_heads = m->kv_heads;
                r.head_dim = D; r.batch = b;
                set_rates(c, &r, bytes, flops, med);
                char v[32];
                snprintf(v, sizeof v, "splits%d", attn_cuda_auto_splits(&a.a, ws.sms));
                log_row(c, v, &r);
                if (add_row(c, &r, err)) goto done;
            }
        }
    }
    rc = 0;
done:
    attn_cuda_ws_fini(&ws);
    CU_IGNORE(cudaFree(kc));
    CU_IGNORE(cudaFree(vc));
    CU_IGNORE(cudaFree(qp));
    CU_IGNORE(cudaFree(out));
    CU_IGNORE(cudaFree(ctx));
    return rc;
}

/* ---- whole forward steps ---------------------------------------------- */

typedef struct model_gpu {
    layer_cuda_t *layers;
    int nlayers;
    __half *lm_w, *xa, *xb, *xn, *logits;
    w4a16_cuda_t lm_q;
    int w4;
    int batch, q;
    cugemm_t *g;
} model_gpu_t;

static int model_fn(void *ctx, cudaStream_t st, err_t *err)
{
    model_gpu_t *mg = (model_gpu_t *)ctx;
    const int T = mg->batch * mg->q, H = mg->layers[0].d.hidden;
    __half *in = mg->xa, *out = mg->xb;
    for (int i = 0; i < mg->nlayers; i++) {
        if (layer_cuda_forward(&mg->layers[i], mg->g, in, out, mg->batch, mg->q, st, err))
            return -1;
        __half *t = in; in = out; out = t;
    }
    if (layer_cuda_rmsnorm(in, mg->xn, T, H, st, err)) return -1;
    if (mg->w4) return w4a16_cuda_gemm(&mg->lm_q, mg->xn, T, mg->logits, st, err);
    return cugemm_ex(mg->g, mg->lm_w, mg->xn, mg->logits, T, mg->lm_q.n, H, st, err);
}

/* The same step replayed from a CUDA graph: how a serving engine runs it,
 * without the host's ~400 launches per step inside the timed interval. */
typedef struct graph_ctx { cudaGraphExec_t exec; } graph_ctx_t;

static int graph_fn(void *ctx, cudaStream_t st, err_t *err)
{
    CU_TRY(cudaGraphLaunch(((graph_ctx_t *)ctx)->exec, st));
    return 0;
}

/* Captures model_fn on st into *exec. 0, or -1 with err set (the caller
 * then falls back to direct launches). */
static int capture_model(model_gpu_t *mg, cudaStream_t st, cudaGraphExec_t *exec, err_t *err)
{
    cudaGraph_t g = NULL;
    CU_TRY(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
    int rc = model_fn(mg, st, err);
    cudaError_t e = cudaStreamEndCapture(st, &g);
    if (rc) {
        if (g) CU_IGNORE(cudaGraphDestroy(g));
        return -1;
    }
    if (e != cudaSuccess)
        return err_set(err, ERR_RUNTIME, "%s:%d: cudaStreamEndCapture: %s", __FILE__, __LINE__,
                       cudaGetErrorString(e));
    e = cudaGraphInstantiate(exec, g, 0);
    CU_IGNORE(cudaGraphDestroy(g));
    if (e != cudaSuccess)
        return err_set(err, ERR_RUNTIME, "%s:%d: cudaGraphInstantiate: %s", __FILE__, __LINE__,
                       cudaGetErrorString(e));
    return 0;
}

static void model_free(model_gpu_t *mg)
{
    if (mg->layers)
        for (int i = 0; i < mg->nlayers; i++) layer_cuda_fini(&mg->layers[i]);
    free(mg->layers);
    CU_IGNORE(cudaFree(mg->lm_w));
    CU_IGNORE(cudaFree(mg->xa));
    CU_IGNORE(cudaFree(mg->xb));
    CU_IGNORE(cudaFree(mg->xn));
    CU_IGNORE(cudaFree(mg->logits));
    if (mg->w4) w4a16_cuda_fini(&mg->lm_q);
}

static int tokens(cal_t *c, err_t *err)
{
    const llm_card_t *m = &c->card;
    const int ctxlen = 1024;
    /* (batch, q): decode, one sequence's verify, and verify iterations up to
     * 160 tokens (the default scenario's typical batch) and 256, where real
     * GEMMs pass from the memory to the compute bound (docs/validation.md). */
    static const int fp16_cfg[][2] = {{1, 1}, {1, 5}, {4, 5}, {16, 5}, {32, 5}, {64, 4}};
    static const int w4_cfg[][2] = {{1, 1}};
    enum { MAXB = 64 };
    const int (*cfg)[2] = c->o.quant_w4 ? w4_cfg : fp16_cfg;
    const int ncfg = c->o.quant_w4 ? 1 : (int)(sizeof fp16_cfg / sizeof fp16_cfg[0]);
    const int maxb = c->o.quant_w4 ? 1 : MAXB, maxt = c->o.quant_w4 ? 1 : 256;
    layer_cuda_dims_t d = {m->hidden, m->heads, m->kv_heads, m->hidden / m->heads, m->ffn,
                           m->gated_mlp};
    const int cap = ctxlen + 16;
    double wbytes = layer_cuda_weight_bytes(&d) * (c->o.quant_w4 ? 0.27 : 1.0);
    double cache = 2.0 * 2 * maxb * (double)m->kv_heads * cap * d.head_dim;
    double ws = (double)maxt * m->heads * ATTN_CUDA_MAX_SPLITS * d.head_dim * 4.5;
    double need = m->layers * (wbytes + cache + ws) + 2.0 * m->vocab * (double)m->hidden;
    size_t fre = 0, tot = 0;
    CU_TRY(cudaMemGetInfo(&fre, &tot));
    if (c->o.no_token || need > 0.85 * (double)fre) {
        fprintf(c->say, "token rows skipped for %s: %s (%.1f GB needed, %.1f GB free)\n", m->name,
               c->o.no_token ? "--no-token" : "model does not fit", need / 1e9, fre / 1e9);
        return 0;
    }
    model_gpu_t mg;
    memset(&mg, 0, sizeof mg);
    mg.g = &c->gemm;
    mg.w4 = c->o.quant_w4;
    mg.layers = (layer_cuda_t *)calloc((size_t)m->layers, sizeof *mg.layers);
    if (!mg.layers) return err_set(err, ERR_RUNTIME, "out of memory");
    mg.nlayers = m->layers;
    int rc = -1;
    for (int i = 0; i < m->layers; i++) {
        progress(c, "token: allocating layer %d", i);
        if (layer_cuda_init(&mg.layers[i], &d, maxt, maxb, cap,
                            mg.w4 ? LAYER_W4A16 : LAYER_FP16, err) ||
            layer_cuda_fill_random(&mg.layers[i], 1000 + 10 * i, c->bench.st, err))
            goto done;
    }
    if (cudaMalloc((void **)&mg.xa, (size_t)maxt * m->hidden * 2) != cudaSuccess ||
        cudaMalloc((void **)&mg.xb, (size_t)maxt * m->hidden * 2) != cudaSuccess ||
        cudaMalloc((void **)&mg.xn, (size_t)maxt * m->hidden * 2) != cudaSuccess ||
        cudaMalloc((void **)&mg.logits, (size_t)maxt * m->vocab * 2) != cudaSuccess) {
        err_set(err, ERR_RUNTIME, "%s:%d: cudaMalloc for the model failed", __FILE__, __LINE__);
        goto done;
    }
    if (mg.w4) {
        if (w4a16_cuda_init(&mg.lm_q, m->vocab, m->hidden, 128, err) ||
            w4a16_cuda_fill_random(&mg.lm_q, 77, c->bench.st, err))
            goto done;
    } else {
        mg.lm_q.n = m->vocab;
        if (cudaMalloc((void **)&mg.lm_w, (size_t)m->vocab * m->hidden * 2) != cudaSuccess) {
            err_set(err, ERR_RUNTIME, "%s:%d: cudaMalloc for lm_head failed", __FILE__, __LINE__);
            goto done;
        }
        if (cufill_half(mg.lm_w, (size_t)m->vocab * m->hidden, 78, -0.05f, 0.05f, c->bench.st, err))
            goto done;
    }
    if (cufill_half(mg.xa, (size_t)maxt * m->hidden, 79, -1.f, 1.f, c->bench.st, err)) goto done;
    for (int i = 0; i < ncfg; i++) {
        mg.batch = cfg[i][0];
        mg.q = cfg[i][1];
        int hc[MAXB];
        for (int b = 0; b < mg.batch; b++) hc[b] = ctxlen;
        for (int l = 0; l < m->layers; l++)
            if (layer_cuda_set_ctx(&mg.layers[l], hc, mg.batch, err)) goto done;
        progress(c, "token batch=%d q=%d", mg.batch, mg.q);
        double med = 0, gmed = 0;
        const int reps = c->o.quick ? 2 : 5;
        /* The values flowing through do not change the cost, so the input is
         * not refreshed between repetitions. */
        if (cubench_median(&c->bench, model_fn, &mg, 1, reps, 1, &med, NULL, err))
            goto done;
        caltable_row_t r;
        memset(&r, 0, sizeof r);
        r.op = CAL_TOKEN;
        r.m = mg.batch * mg.q; r.context = ctxlen; r.q = mg.q; r.batch = mg.batch;
        r.time_s = med;
        log_row(c, "direct", &r);
        graph_ctx_t gc = {NULL};
        err_t ge = {0, {0}};
        if (capture_model(&mg, c->bench.st, &gc.exec, &ge) == 0 &&
            cubench_median(&c->bench, graph_fn, &gc, 1, reps, 1, &gmed, NULL, &ge) == 0) {
            r.time_s = gmed;
            log_row(c, "graph", &r);
        } else {
            fprintf(stderr, "calibrate: graph replay unavailable (%s); direct launches kept\n",
                    ge.msg);
            /* A failed capture leaves its error as the runtime's last error,
             * which the next CU_LAUNCH_CHECK would report as its own. */
            CU_IGNORE(cudaGetLastError());
            gmed = 0;
        }
        if (gc.exec) CU_IGNORE(cudaGraphExecDestroy(gc.exec));
        r.time_s = gmed > 0 ? gmed : med;
        if (add_row(c, &r, err)) goto done;
        fprintf(c->say, "token %s: batch %d x q %d (M=%d) over context %d: %.3f ms "
                "(graph replay; direct launches %.3f ms)\n", m->name, mg.batch, mg.q,
                mg.batch * mg.q, ctxlen, r.time_s * 1e3, med * 1e3);
    }
    rc = 0;
done:
    model_free(&mg);
    return rc;
}

/* ---- summary ---------------------------------------------------------- */

static void summary_fp16(const cal_t *c)
{
    fprintf(c->say, "FP16 verify GEMMs (%s): time / roofline (copy %.0f GB/s, GEMM %.0f TFLOP/s)\n",
           c->card.name, c->copy_gbs, c->tflops);
    fprintf(c->say, "  %-8s %6s %12s %12s %8s\n", "shape", "M", "time_us", "roofline_us", "frac");
    for (int i = 0; i < c->table.nrows; i++) {
        const caltable_row_t *r = &c->table.rows[i];
        if (r->op != CAL_LINEAR) continue;
        fprintf(c->say, "  %-8s %6d %12.2f %12.2f %8.3f\n", r->name, r->m, r->time_s * 1e6,
               r->time_s * r->ceiling_frac * 1e6, r->ceiling_frac);
    }
}

/* ---- entry ------------------------------------------------------------ */

/* A phase failed after some rows were measured: say so in the table's
 * provenance, so a partial table can never pass for a whole one. */
static void note_partial(cal_t *c, const char *phase, const err_t *err)
{
    char *n = c->table.notes;
    size_t used = strlen(n), cap = sizeof c->table.notes;
    if (used + 1 < cap)
        snprintf(n + used, cap - used, "; PARTIAL TABLE: %s failed (%.200s), later phases "
                 "not run", phase, err->msg);
}

static int run(cal_t *c, int argc, char **argv, err_t *err)
{
    char path[1024];
    int ndev = 0;
    if (parse_opts(argc, argv, &c->o, err)) return -1;
    c->say = c->o.out ? stdout : stderr;
    if (cards_resolve_path(c->o.model, path, sizeof path))
        return err_set(err, ERR_INPUT, "%s: no such card", c->o.model);
    if (cards_load_llm_file(path, &c->card, err)) return -1;
    if (c->card.hidden % c->card.heads || c->card.heads % c->card.kv_heads)
        return err_set(err, ERR_INPUT, "%s: hidden %% heads or heads %% kv_heads is not 0",
                       path);
    cudaError_t e = cudaGetDeviceCount(&ndev);
    if (e != cudaSuccess || ndev < 1)
        return err_set(err, ERR_RUNTIME, "--device cuda: no CUDA device (%s)",
                       e != cudaSuccess ? cudaGetErrorString(e) : "count is 0");
    if (c->o.log) {
        int fresh = access(c->o.log, F_OK) != 0;
        c->log = fopen(c->o.log, "a");
        if (!c->log) return err_set(err, ERR_RUNTIME, "%s: cannot open", c->o.log);
        if (fresh)
            fprintf(c->log, "model,quant,op,variant,name,m,n,k,q,context,heads,kv_heads,"
                            "head_dim,batch,time_s,gbs,gflops,ceiling_frac\n");
    }
    if (cubench_init(&c->bench, CUBENCH_FLUSH_BYTES, err) || cugemm_init(&c->gemm, err))
        return -1;
    if (measure_ceilings(c, err) || provenance(c, argc, argv, err)) return -1;
    /* Phases in order; the first failure stops the run, but the rows
     * measured before it are still written, marked partial (the one GPU
     * run must not lose its linear rows to a later phase). */
    const char *failed = NULL;
    if (c->o.quant_w4 ? w4_linears(c, err) : fp16_linears(c, err)) failed = "linear rows";
    else if (attention(c, err)) failed = "attention rows";
    else if (tokens(c, err)) failed = "token rows";
    cudaError_t se = failed ? cudaSuccess : cudaDeviceSynchronize();
    if (se != cudaSuccess) {
        err_set(err, ERR_RUNTIME, "%s:%d: cudaDeviceSynchronize: %s", __FILE__, __LINE__,
                cudaGetErrorString(se));
        failed = "final synchronisation";
    }
    progress(c, "done: %d rows\n", c->table.nrows);
    if (!c->o.quant_w4) summary_fp16(c);
    fprintf(c->say, "ceilings: copy %.1f GB/s, read %.1f GB/s, fp16 GEMM %.1f TFLOP/s, SM clock seen "
           "%.0f MHz\n", c->copy_gbs, c->read_gbs, c->tflops, c->sm_mhz);
    if (!failed) return caltable_save(&c->table, c->o.out, stdout, err);

    fprintf(c->say, "calibrate: %s FAILED: %s\n", failed, err->msg);
    if (c->table.nrows > 0) {
        note_partial(c, failed, err);
        err_t e2 = {0, {0}};
        if (caltable_save(&c->table, c->o.out, stdout, &e2) == 0)
            fprintf(c->say, "calibrate: PARTIAL table (%d rows before the failure) written%s%s\n",
                    c->table.nrows, c->o.out ? " to " : "", c->o.out ? c->o.out : "");
        else
            fprintf(stderr, "calibrate: %s\n", e2.msg);
    }
    return -1;
}

extern "C" int calibrate_cuda_run(int argc, char **argv)
{
    cal_t c;
    err_t err;
    memset(&c, 0, sizeof c);
    memset(&err, 0, sizeof err);
    int rc = run(&c, argc, argv, &err);
    if (rc) fprintf(stderr, "%scalibrate: %s\n", progress_drawn ? "\n" : "", err.msg);
    if (c.log) fclose(c.log);
    cugemm_fini(&c.gemm);
    cubench_fini(&c.bench);
    caltable_fini(&c.table);
    return rc ? (err.code == ERR_INPUT ? 2 : 1) : 0;
}
