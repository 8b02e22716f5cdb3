/* calibrate — CPU calibration driver and kernel benchmark (see calibrate.h).
 *
 * Method. Every timed call reads operands that are not in any cache: each
 * shape gets enough distinct copies of its weights to exceed 4× the LLC and
 * the calls rotate through them. A measurement is the median of repeated
 * calls after a warm-up pass over every copy. The read ceiling is STREAM's
 * (best pass, all threads). A "token" is a real forward step of the draft
 * model on random weights: per layer RMSNorm, fused qkv GEMV, KV append,
 * attention over the cache, o GEMV + residual, RMSNorm, gate_up GEMV,
 * SiLU·up, down GEMV + residual; then RMSNorm and lm_head and an argmax.
 * Layer weights rotate over as many distinct sets as needed to exceed 4× LLC
 * (so every layer streams from DRAM as in the real model) and every layer has
 * its own KV cache. RoPE is left out (elementwise, negligible).
 */
#include "calibrate.h"
#include "calibrate_cuda.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attn.h"
#include "model/caltable.h"
#include "calprov.h"
#include "model/cards.h"
#include "cpuid.h"
#include "gemv.h"
#include "membw.h"
#include "shapes.h"
#include "base/wallclock.h"

#define MAX_SAMPLES 201

/* ---- arguments -------------------------------------------------------- */

void calibrate_usage(FILE *f)
{
    fputs("usage: calibrate --device cpu|cuda --model CARD [--quant w4a16|fp16] [--out FILE]\n"
          "                 [--quick] [--threads N] [--isa auto|scalar|avx2|avx512|neon]\n"
          "                 [--kernel exact|int8] [--quiet]\n"
          "       calibrate --bench [--threads N] [--isa ...] [--quick] [--quiet]\n"
          "Measures this machine's kernels for the LLM card CARD and writes a calibration\n"
          "table (results/calibration/, format in sim/model/caltable.h) to FILE or stdout.\n"
          "--kernel: the W4A16 kernel measured: exact (fp16 activations, the default) or\n"
          "int8 (activations quantised to int8 per group on the fly); the table records it.\n"
          "--bench prints W4A16 (both kernels, M = 1 and 8) vs fp16 vs fp32 GEMV rates and\n"
          "the read ceilings (1 and several streams per thread) side by side instead; it\n"
          "writes no table, so --model, --out, --quant and --device cuda are refused.\n"
          "With --device cuda also: [--log FILE.csv] (every timed variant; default\n"
          "FILE.csv beside --out), [--reps N] (timed repetitions, default 15),\n"
          "[--warmup N] (default 3), [--max-context N] (attention, default 32768),\n"
          "[--no-token] (skip whole-step rows).\n"
          "--quiet: no progress line on stderr (--bench shows none, so there it has\n"
          "nothing to silence).\n"
          "calibrate --version prints the version and git commit.\n",
          f);
}

/* The options that take a value: the one list, so that the --version scan
 * and the parser below cannot disagree about what is a value. */
static const char *const VALUED[] = {"--device", "--model", "--quant", "--out",
                                     "--isa", "--kernel", "--log", "--reps", "--warmup",
                                     "--max-context", "--threads"};

#define NVALUED (sizeof VALUED / sizeof VALUED[0])

/* opt's index in VALUED, or -1 when it takes no value. */
static int valued_index(const char *opt)
{
    for (size_t k = 0; k < NVALUED; k++)
        if (!strcmp(opt, VALUED[k])) return (int)k;
    return -1;
}

int calibrate_takes_value(const char *opt)
{
    return valued_index(opt) >= 0;
}

static int copy_arg(char *dst, size_t n, const char *opt, const char *val, err_t *err)
{
    if (!val) return err_set(err, ERR_INPUT, "calibrate: %s needs a value", opt);
    /* An empty --out would be standard output, an empty --model no card. */
    if (!*val) return err_set(err, ERR_INPUT, "calibrate: %s needs a non-empty value", opt);
    if (strlen(val) >= n) return err_set(err, ERR_INPUT, "calibrate: %s value too long", opt);
    memcpy(dst, val, strlen(val) + 1);
    return 0;
}

int calibrate_parse_args(int argc, char **argv, calibrate_args_t *a, err_t *err)
{
    memset(a, 0, sizeof *a);
    strcpy(a->device, "cpu");
    strcpy(a->quant, "w4a16");
    strcpy(a->isa, "auto");
    strcpy(a->kernel, "exact");
    calprov_command(argc, argv, a->command, sizeof a->command);
    /* --version wins over everything else, even a bad option, so that it
     * works with any command line (a value that reads "--version" is a
     * value: `--out --version` names a file). */
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--version")) {
            a->version = 1;
            return 0;
        }
        i += calibrate_takes_value(argv[i]);
    }
    int seen[NVALUED] = {0};   /* a value is given once; flags may repeat */
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int rc = 0, vi = valued_index(o), takes = vi >= 0;
        if (takes && seen[vi]++)
            return err_set(err, ERR_INPUT, "calibrate: %s given more than once", o);
        if (!a->table_opt && (!strcmp(o, "--model") || !strcmp(o, "--out") ||
                              !strcmp(o, "--quant")))
            a->table_opt = o;
        if (!strcmp(o, "--device")) rc = copy_arg(a->device, sizeof a->device, o, v, err);
        else if (!strcmp(o, "--model")) rc = copy_arg(a->model, sizeof a->model, o, v, err);
        else if (!strcmp(o, "--quant")) rc = copy_arg(a->quant, sizeof a->quant, o, v, err);
        else if (!strcmp(o, "--out")) rc = copy_arg(a->out, sizeof a->out, o, v, err);
        else if (!strcmp(o, "--isa")) rc = copy_arg(a->isa, sizeof a->isa, o, v, err);
        else if (!strcmp(o, "--kernel")) rc = copy_arg(a->kernel, sizeof a->kernel, o, v, err);
        else if (!strcmp(o, "--log") || !strcmp(o, "--reps") || !strcmp(o, "--warmup") ||
                 !strcmp(o, "--max-context")) {
            if (!v || !*v)
                return err_set(err, ERR_INPUT, "calibrate: %s needs a%s value", o,
                               v ? " non-empty" : "");
            if (!a->cuda_opt) a->cuda_opt = o;
            /* Kept so that the log is checked against the card and the
             * table before the CUDA side starts (calibrate_main.c). */
            if (!strcmp(o, "--log")) rc = copy_arg(a->log, sizeof a->log, o, v, err);
        }
        else if (!strcmp(o, "--threads")) {
            char *end;
            long t = v ? strtol(v, &end, 10) : 0;
            if (!v || *end || t < 1 || t > 1024)
                return err_set(err, ERR_INPUT, "calibrate: --threads needs an integer 1..1024");
            a->threads = (int)t;
        } else {
            if (!strcmp(o, "--quick")) a->quick = 1;
            else if (!strcmp(o, "--bench")) a->bench = 1;
            else if (!strcmp(o, "--quiet")) a->quiet = 1;
            else if (!strcmp(o, "--no-token")) { if (!a->cuda_opt) a->cuda_opt = o; }
            else if (!strcmp(o, "--help") || !strcmp(o, "-h")) a->help = 1;
            else return err_set(err, ERR_INPUT, "calibrate: unknown option '%s' (see --help)", o);
        }
        if (rc) return -1;
        i += takes;
    }
    if (a->help) return 0;
    if (strcmp(a->device, "cpu") && strcmp(a->device, "cuda"))
        return err_set(err, ERR_INPUT, "calibrate: --device must be cpu or cuda, not '%s'", a->device);
    if (a->cuda_opt && strcmp(a->device, "cuda"))
        return err_set(err, ERR_INPUT, "calibrate: %s is an option of --device cuda", a->cuda_opt);
    if (gemv_w4_kernel_from_name(a->kernel) < 0)
        return err_set(err, ERR_INPUT, "calibrate: --kernel must be exact or int8, not '%s'",
                       a->kernel);
    if (strcmp(a->kernel, "exact") && strcmp(a->device, "cpu"))
        return err_set(err, ERR_INPUT, "calibrate: --kernel %s is an option of --device cpu",
                       a->kernel);
    if (strcmp(a->kernel, "exact") && a->bench)
        return err_set(err, ERR_INPUT, "calibrate: --bench measures both kernels; drop --kernel");
    /* --bench times its own shapes on the CPU and prints a report: what
     * would shape a table is refused, not ignored. */
    if (a->bench && a->table_opt)
        return err_set(err, ERR_INPUT, "calibrate: --bench writes no table: %s does not apply "
                       "(see --help)", a->table_opt);
    if (a->bench && strcmp(a->device, "cpu"))
        return err_set(err, ERR_INPUT, "calibrate: --bench measures the CPU kernels, not "
                       "--device %s", a->device);
    if (!a->bench && !a->model[0])
        return err_set(err, ERR_INPUT, "calibrate: --model CARD is required (see --help)");
    return 0;
}

int calibrate_cuda_log_path(const char *out, char *buf, size_t n)
{
    size_t len = strlen(out);
    if (len > 5 && !strcmp(out + len - 5, ".yaml")) len -= 5;
    if (len + 5 > n) return -1;
    memcpy(buf, out, len);
    strcpy(buf + len, ".csv");
    return 0;
}

static int isa_from_name(const char *s)
{
    if (!strcmp(s, "auto")) return GEMV_ISA_AUTO;
    for (int i = 0; i < GEMV_ISA_COUNT; i++)
        if (!strcmp(s, gemv_isa_name(i))) return i;
    return -2;
}

static gemv_ctx_t *make_ctx(const calibrate_args_t *a, err_t *err)
{
    int isa = isa_from_name(a->isa);
    if (isa == -2) {
        err_set(err, ERR_INPUT, "calibrate: unknown --isa '%s'", a->isa);
        return NULL;
    }
    gemv_ctx_t *c = gemv_ctx_create(a->threads, isa, err);
    if (c && gemv_ctx_set_w4_kernel(c, gemv_w4_kernel_from_name(a->kernel), err) != 0) {
        gemv_ctx_free(c);
        return NULL;
    }
    return c;
}

/* ---- random operands -------------------------------------------------- */

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* fp16 uniform in [-amp, amp): the values only need to be finite and
 * normal so timing sees no special cases. */
static uint16_t rand_h(uint64_t *s, float amp)
{
    return f32_to_fp16(amp * ((float)(rng_next(s) >> 40) / 8388608.0f - 1.0f));
}

static void fill_h(uint16_t *h, size_t n, float amp, uint64_t *s)
{
    for (size_t i = 0; i < n; i++) h[i] = rand_h(s, amp);
}

static void fill_packed(w4a16_packed_t *w, uint64_t *s)
{
    size_t qb = (size_t)w->n * (size_t)w->k / 2, groups = (size_t)w->n * (size_t)(w->k / w->group);
    for (size_t i = 0; i < qb; i += 8) {
        uint64_t r = rng_next(s);
        memcpy(w->q + i, &r, qb - i < 8 ? qb - i : 8);
    }
    for (size_t g = 0; g < groups; g++) {
        uint64_t r = rng_next(s);
        w->scales[g] = f32_to_fp16(0.002f + 0.002f * (float)(r & 0xFFFF) / 65536.0f);
        w->zeros[g] = (uint8_t)((r >> 16) & 15);
    }
}

/* ---- timing ----------------------------------------------------------- */

int calibrate_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef int (*timed_fn)(void *arg, int copy);

/* Median seconds of fn over rotating copies: one warm-up call per copy
 * (at least two), then samples until both a minimum count and a minimum
 * total time are reached. -1 if fn fails. */
static double median_time(timed_fn fn, void *arg, int ncopies, int quick)
{
    int min_reps = quick ? 5 : 15;
    double min_total = quick ? 0.02 : 0.25;
    int warm = ncopies < 2 ? 2 : ncopies;
    for (int i = 0; i < warm; i++)
        if (fn(arg, i % ncopies) != 0) return -1.0;
    double t[MAX_SAMPLES], total = 0.0;
    int n = 0;
    while (n < MAX_SAMPLES && (n < min_reps || total < min_total)) {
        double t0 = wallclock_s();
        if (fn(arg, n % ncopies) != 0) return -1.0;
        t[n] = wallclock_s() - t0;
        total += t[n++];
    }
    qsort(t, (size_t)n, sizeof t[0], calibrate_cmp_double);
    return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

int calibrate_copies_for(double bytes, size_t llc)
{
    double c = ceil(4.0 * (double)llc / bytes);
    return c < 1 ? 1 : c > 4096 ? 4096 : (int)c;
}

/* ---- linear layers ---------------------------------------------------- */

struct lin {
    gemv_ctx_t *ctx;
    int quant_fp16;          /* 0: w4a16 */
    int interleave;          /* w4a16: also build the int8 kernel's copy */
    int n, k, m, ncopies;
    w4a16_packed_t *w4;      /* [ncopies] */
    uint16_t *wh;            /* [ncopies][n][k] */
    const uint16_t *x;
    uint16_t *y;
};

static int lin_call(void *arg, int copy)
{
    struct lin *l = arg;
    if (l->quant_fp16)
        return gemv_f16(l->ctx, l->wh + (size_t)copy * (size_t)l->n * (size_t)l->k, l->n, l->k,
                        l->x, l->m, l->y);
    return gemv_w4a16(l->ctx, &l->w4[copy], l->x, l->m, l->y);
}

static void lin_fini(struct lin *l)
{
    if (l->w4)
        for (int i = 0; i < l->ncopies; i++) w4a16_packed_fini(&l->w4[i]);
    free(l->w4);
    free(l->wh);
    l->w4 = NULL;
    l->wh = NULL;
}

static double weight_bytes(int fp16, int n, int k)
{
    return fp16 ? 2.0 * (double)n * (double)k : w4a16_bytes(n, k, W4A16_GROUP_DEFAULT);
}

static int lin_init(struct lin *l, int n, int k, size_t llc, uint64_t *seed)
{
    l->n = n;
    l->k = k;
    l->ncopies = calibrate_copies_for(weight_bytes(l->quant_fp16, n, k), llc);
    if (l->quant_fp16) {
        l->wh = malloc((size_t)l->ncopies * (size_t)n * (size_t)k * sizeof *l->wh);
        if (!l->wh) return -1;
        fill_h(l->wh, (size_t)l->ncopies * (size_t)n * (size_t)k, 0.02f, seed);
        return 0;
    }
    l->w4 = calloc((size_t)l->ncopies, sizeof *l->w4);
    if (!l->w4) return -1;
    /* The int8 kernel reads the interleaved copy, which doubles the bytes
     * held (not those read per call). */
    int il = l->interleave || gemv_ctx_w4_kernel(l->ctx) == GEMV_W4_INT8;
    for (int i = 0; i < l->ncopies; i++) {
        if (w4a16_packed_init(&l->w4[i], n, k, W4A16_GROUP_DEFAULT) != 0) return -1;
        fill_packed(&l->w4[i], seed);
        if (il && w4a16_packed_interleave(&l->w4[i]) != 0) return -1;
    }
    return 0;
}

/* ---- table rows ------------------------------------------------------- */

struct rows {
    caltable_row_t *r;
    int n, cap;
};

static caltable_row_t *row_add(struct rows *rs)
{
    if (rs->n == rs->cap) {
        int cap = rs->cap ? 2 * rs->cap : 64;
        caltable_row_t *nr = realloc(rs->r, (size_t)cap * sizeof *nr);
        if (!nr) return NULL;
        rs->r = nr;
        rs->cap = cap;
    }
    caltable_row_t *r = &rs->r[rs->n++];
    memset(r, 0, sizeof *r);
    return r;
}

static void progress(FILE *f, int step, int total, const char *what)
{
    if (!f) return;
    fprintf(f, "\rcalibrate: [%2d/%2d] %-52s", step, total, what);
    fflush(f);
}

/* ---- attention -------------------------------------------------------- */

struct att {
    gemv_ctx_t *ctx;
    const llm_card_t *c;
    int ctxlen, ncopies;
    uint16_t *kv;            /* [ncopies][2][ctxlen+1][kv_heads][hd] */
    uint16_t *q, *out;
};

static size_t att_cache_elems(const llm_card_t *c, int ctxlen)
{
    return (size_t)(ctxlen + 1) * (size_t)c->kv_heads * (size_t)(c->hidden / c->heads);
}

static int att_call(void *arg, int copy)
{
    struct att *a = arg;
    size_t e = att_cache_elems(a->c, a->ctxlen);
    const uint16_t *kc = a->kv + (size_t)copy * 2 * e;
    return attn_run(a->ctx, a->q, kc, kc + e, 1, a->ctxlen, a->c->heads, a->c->kv_heads,
                    a->c->hidden / a->c->heads, a->out);
}

/* ---- one draft token -------------------------------------------------- */

struct layer_w {
    struct lin qkv, o, gu, down;   /* ncopies = 1 each; the token rotates layers */
};

struct tok {
    gemv_ctx_t *ctx;
    const llm_card_t *c;
    int fp16, nsets, ctxlen, maxctx;
    struct layer_w *sets;
    struct lin head;
    uint16_t *kv;            /* [layers][2][maxctx+1][kv_heads][hd] */
    float *h, *tmp;
    uint16_t *xh, *yh, *ah;
};

static void rmsnorm_to_h(const gemv_ctx_t *ctx, const float *h, int d, uint16_t *out)
{
    (void)ctx;
    double ss = 0.0;
    for (int i = 0; i < d; i++) ss += (double)h[i] * h[i];
    float inv = (float)(1.0 / sqrt(ss / d + 1e-6));
    for (int i = 0; i < d; i++) out[i] = f32_to_fp16(h[i] * inv);
}

static int lin_run(struct lin *l, const uint16_t *x, uint16_t *y)
{
    l->x = x;
    l->y = y;
    l->m = 1;
    return lin_call(l, 0);
}

static int tok_call(void *arg, int copy)
{
    (void)copy;
    struct tok *t = arg;
    const llm_card_t *c = t->c;
    int d = c->hidden, hd = d / c->heads, kvd = c->kv_heads * hd;
    size_t e = (size_t)(t->maxctx + 1) * (size_t)kvd;
    for (int L = 0; L < c->layers; L++) {
        struct layer_w *w = &t->sets[L % t->nsets];
        uint16_t *kc = t->kv + (size_t)L * 2 * e, *vc = kc + e;
        rmsnorm_to_h(t->ctx, t->h, d, t->xh);
        if (lin_run(&w->qkv, t->xh, t->yh) != 0) return -1;
        memcpy(kc + (size_t)t->ctxlen * (size_t)kvd, t->yh + d, (size_t)kvd * sizeof *kc);
        memcpy(vc + (size_t)t->ctxlen * (size_t)kvd, t->yh + d + kvd, (size_t)kvd * sizeof *vc);
        if (attn_run(t->ctx, t->yh, kc, vc, 1, t->ctxlen, c->heads, c->kv_heads, hd, t->ah) != 0)
            return -1;
        if (lin_run(&w->o, t->ah, t->yh) != 0) return -1;
        gemv_h2f(t->ctx, t->yh, t->tmp, (size_t)d);
        for (int i = 0; i < d; i++) t->h[i] += t->tmp[i];
        rmsnorm_to_h(t->ctx, t->h, d, t->xh);
        if (lin_run(&w->gu, t->xh, t->yh) != 0) return -1;
        int f = c->ffn;
        gemv_h2f(t->ctx, t->yh, t->tmp, (size_t)(c->gated_mlp ? 2 * f : f));
        for (int i = 0; i < f; i++) {
            float g = t->tmp[i], act = g / (1.0f + expf(-g));
            t->ah[i] = f32_to_fp16(c->gated_mlp ? act * t->tmp[f + i] : act);
        }
        if (lin_run(&w->down, t->ah, t->yh) != 0) return -1;
        gemv_h2f(t->ctx, t->yh, t->tmp, (size_t)d);
        for (int i = 0; i < d; i++) t->h[i] += t->tmp[i];
    }
    rmsnorm_to_h(t->ctx, t->h, d, t->xh);
    if (lin_run(&t->head, t->xh, t->yh) != 0) return -1;
    /* Greedy sampling; NaN-safe comparison keeps the argmax well defined. */
    int best = 0;
    for (int i = 1; i < c->vocab; i++)
        if (fp16_to_f32(t->yh[i]) > fp16_to_f32(t->yh[best])) best = i;
    /* Reset the residual stream so every token sees the same magnitudes. */
    for (int i = 0; i < d; i++) t->h[i] = (float)((i * 7 + best) % 13) / 13.0f - 0.5f;
    return 0;
}

static void tok_fini(struct tok *t)
{
    if (t->sets)
        for (int i = 0; i < t->nsets; i++) {
            lin_fini(&t->sets[i].qkv);
            lin_fini(&t->sets[i].o);
            lin_fini(&t->sets[i].gu);
            lin_fini(&t->sets[i].down);
        }
    free(t->sets);
    lin_fini(&t->head);
    free(t->kv);
    free(t->h);
    free(t->tmp);
    free(t->xh);
    free(t->yh);
    free(t->ah);
}

static int tok_init(struct tok *t, const shapes_linear_t *sh, size_t llc, uint64_t *seed)
{
    const llm_card_t *c = t->c;
    double layer_bytes = 0;
    for (int i = 0; i < 4; i++) layer_bytes += weight_bytes(t->fp16, sh[i].n, sh[i].k);
    t->nsets = calibrate_copies_for(layer_bytes, llc);
    if (t->nsets < 2) t->nsets = 2;
    if (t->nsets > c->layers) t->nsets = c->layers;
    t->sets = calloc((size_t)t->nsets, sizeof *t->sets);
    if (!t->sets) return -1;
    /* A lin with ncopies forced to 1: calibrate_copies_for against an LLC of 0. */
    for (int s = 0; s < t->nsets; s++) {
        struct lin *ls[4] = {&t->sets[s].qkv, &t->sets[s].o, &t->sets[s].gu, &t->sets[s].down};
        for (int i = 0; i < 4; i++) {
            ls[i]->ctx = t->ctx;
            ls[i]->quant_fp16 = t->fp16;
            if (lin_init(ls[i], sh[i].n, sh[i].k, 0, seed) != 0) return -1;
        }
    }
    t->head.ctx = t->ctx;
    t->head.quant_fp16 = t->fp16;
    if (lin_init(&t->head, sh[4].n, sh[4].k, 0, seed) != 0) return -1;
    int hd = c->hidden / c->heads;
    size_t kv = (size_t)c->layers * 2 * (size_t)(t->maxctx + 1) * (size_t)c->kv_heads * (size_t)hd;
    size_t wide = (size_t)c->vocab;
    for (int i = 0; i < 5; i++)
        if ((size_t)sh[i].n > wide) wide = (size_t)sh[i].n;
    if ((size_t)c->ffn > wide) wide = (size_t)c->ffn;
    t->kv = malloc(kv * sizeof *t->kv);
    t->h = calloc((size_t)c->hidden, sizeof *t->h);
    t->tmp = calloc(wide, sizeof *t->tmp);
    t->xh = calloc(wide, sizeof *t->xh);
    t->yh = calloc(wide, sizeof *t->yh);
    t->ah = calloc(wide, sizeof *t->ah);
    if (!t->kv || !t->h || !t->tmp || !t->xh || !t->yh || !t->ah) return -1;
    fill_h(t->kv, kv, 1.0f, seed);
    for (int i = 0; i < c->hidden; i++) t->h[i] = (float)(i % 13) / 13.0f - 0.5f;
    return 0;
}

/* ---- provenance ------------------------------------------------------- */

static void load_average(char *buf, size_t n)
{
    snprintf(buf, n, "unknown");
    FILE *f = fopen("/proc/loadavg", "r");
    if (!f) return;
    double a, b, c;
    if (fscanf(f, "%lf %lf %lf", &a, &b, &c) == 3) snprintf(buf, n, "%.2f %.2f %.2f", a, b, c);
    fclose(f);
}

/* The table's provenance fields (command, date, host, device, compiler,
 * notes). */
static void fill_prov(caltable_t *p, const calibrate_args_t *a, const gemv_ctx_t *ctx,
                      size_t llc, const char *extra)
{
    char model[200], load[64];
    snprintf(p->command, sizeof p->command, "%s", a->command);
    calprov_date_utc(p->date, sizeof p->date);
    calprov_host(p->host, sizeof p->host);
    cpu_model_name(model, sizeof model);
    snprintf(p->device, sizeof p->device, "%s (%d logical CPUs, LLC %zu MiB)", model, cpu_count(),
             llc >> 20);
    snprintf(p->compiler, sizeof p->compiler,
#if defined(__clang__)
             "clang "
#elif defined(__GNUC__)
             "gcc "
#endif
             "%s; kernels -std=c11 -O3 (Makefile KCFLAGS), gemv_avx2.c -mavx2 -mfma -mf16c, "
             "gemv_avx512.c -mavx512f -mavx512bw -mavx512vl -mfma -mf16c"
#if defined(__SANITIZE_ADDRESS__)
             "; ASan build (timings not representative)"
#endif
             , __VERSION__);
    load_average(load, sizeof load);
    snprintf(p->notes, sizeof p->notes,
             "threads %d, ISA path %s, weights %s%s; every timed call reads weight "
             "copies rotated to exceed 4x LLC; time_s = median after warm-up%s; load average "
             "at start %s%s%s",
             gemv_ctx_threads(ctx), gemv_isa_name(gemv_ctx_isa(ctx)), a->quant,
             strcmp(a->quant, "w4a16") ? "" : " g128 asymmetric (random nibbles, scales, zeros)",
             a->quick ? " (--quick: few samples)" : "", load, extra[0] ? "; " : "", extra);
}

/* ---- the calibration -------------------------------------------------- */

static const int calib_m[] = {1, 2, 4, 8, 16};
#define N_M (int)(sizeof calib_m / sizeof calib_m[0])

int calibrate_cpu(const calibrate_args_t *a, FILE *prog, err_t *err)
{
    int fp16 = !strcmp(a->quant, "fp16");
    if (!fp16 && strcmp(a->quant, "w4a16"))
        return err_set(err, ERR_INPUT, "calibrate: --quant %s: the CPU path measures w4a16 or fp16",
                       a->quant);
    if (fp16 && strcmp(a->kernel, "exact"))
        return err_set(err, ERR_INPUT, "calibrate: --kernel %s applies to --quant w4a16 only",
                       a->kernel);
    char path[1024];
    if (cards_resolve_path(a->model, path, sizeof path) != 0)
        return err_set(err, ERR_INPUT, "%s: no such LLM card", a->model);
    llm_card_t card;
    if (cards_load_llm_file(path, &card, err) != 0) return -1;
    /* The group constrains W4A16 weights only: an fp16 card need not
     * (SmolLM2-135M's hidden is 576, models/llm/smollm2-135m.yaml). */
    if (card.hidden % card.heads != 0 || (card.hidden / card.heads) % 2 != 0)
        return err_set(err, ERR_INPUT, "%s: hidden must be a multiple of heads with an even "
                       "head_dim", path);
    if (!fp16 && (card.hidden % W4A16_GROUP_DEFAULT != 0 || card.ffn % W4A16_GROUP_DEFAULT != 0))
        return err_set(err, ERR_INPUT, "%s: hidden and ffn must be multiples of %d (the W4A16 "
                       "group) for --quant w4a16", path, W4A16_GROUP_DEFAULT);

    gemv_ctx_t *ctx = make_ctx(a, err);
    if (!ctx) return -1;
    size_t llc = a->llc_bytes ? a->llc_bytes : cpu_llc_bytes();
    uint64_t seed = 0x9E3779B97F4A7C15ull;
    shapes_linear_t sh[SHAPES_NLINEAR];
    shapes_linear(&card, sh);
    static const int ctx_full[] = {0, 512, 2048}, ctx_quick[] = {0, 512};
    const int *ctxs = a->quick ? ctx_quick : ctx_full;
    int nctx = a->quick ? 2 : 3;
    int total = 1 + SHAPES_NLINEAR * N_M + (nctx - 1) + nctx, step = 0;
    struct rows rs = {0};
    struct lin l = {0};
    struct att at = {0};
    struct tok tk = {0};
    int rc = -1;
    uint16_t *x = NULL, *y = NULL;
    char what[96];
    caltable_t t;
    memset(&t, 0, sizeof t);

    progress(prog, ++step, total, "read bandwidth ceiling");
    size_t bw_bytes = a->llc_bytes ? 8 * llc : 8 * llc < ((size_t)256 << 20) ? (size_t)256 << 20 : 8 * llc;
    t.read_gbs = membw_read_gbs(ctx, bw_bytes, a->quick ? 3 : 10, err);
    if (t.read_gbs <= 0) goto out;
    t.read_multi_gbs = membw_read_streams_gbs(ctx, bw_bytes, MEMBW_STREAMS, a->quick ? 3 : 10, err);
    if (t.read_multi_gbs <= 0) goto out;
    t.read_streams = MEMBW_STREAMS;

    int maxk = 0, maxn = 0;
    for (int i = 0; i < SHAPES_NLINEAR; i++) {
        if (sh[i].k > maxk) maxk = sh[i].k;
        if (sh[i].n > maxn) maxn = sh[i].n;
    }
    /* `what` names the step in progress for the out-of-memory message, so it
     * is set before every step that can fail, allocations included. */
    snprintf(what, sizeof what, "activation buffers");
    x = malloc((size_t)16 * (size_t)maxk * sizeof *x);
    y = malloc((size_t)16 * (size_t)maxn * sizeof *y);
    if (!x || !y) goto oom;
    fill_h(x, (size_t)16 * (size_t)maxk, 1.0f, &seed);

    for (int s = 0; s < SHAPES_NLINEAR; s++) {
        memset(&l, 0, sizeof l);
        l.ctx = ctx;
        l.quant_fp16 = fp16;
        l.x = x;
        l.y = y;
        snprintf(what, sizeof what, "linear %.15s weights (%dx%d)", sh[s].name, sh[s].n,
                 sh[s].k);
        if (lin_init(&l, sh[s].n, sh[s].k, llc, &seed) != 0) goto oom;
        for (int mi = 0; mi < N_M; mi++) {
            l.m = calib_m[mi];
            snprintf(what, sizeof what, "linear %.15s m=%d (%dx%d, %d copies)", sh[s].name, l.m,
                     sh[s].n, sh[s].k, l.ncopies);
            progress(prog, ++step, total, what);
            double tm = median_time(lin_call, &l, l.ncopies, a->quick);
            if (tm <= 0) goto oom;
            caltable_row_t *r = row_add(&rs);
            if (!r) goto oom;
            r->op = CAL_LINEAR;
            snprintf(r->name, sizeof r->name, "%.15s", sh[s].name);
            snprintf(r->quant, sizeof r->quant, "%.15s", a->quant);
            if (!fp16) snprintf(r->kernel, sizeof r->kernel, "%.15s", a->kernel);
            r->m = l.m;
            r->n = sh[s].n;
            r->k = sh[s].k;
            r->time_s = tm;
            double bytes = weight_bytes(fp16, l.n, l.k) + 2.0 * l.m * ((double)l.k + l.n);
            r->gbs = bytes / tm / 1e9;
            r->gflops = 2.0 * l.m * (double)l.n * (double)l.k / tm / 1e9;
        }
        lin_fini(&l);
    }

    for (int ci = 1; ci < nctx; ci++) {
        int hd = card.hidden / card.heads;
        size_t e = att_cache_elems(&card, ctxs[ci]);
        at = (struct att){ctx, &card, ctxs[ci],
                          calibrate_copies_for(2.0 * 2.0 * (double)e, llc), NULL, NULL, NULL};
        snprintf(what, sizeof what, "attention q=1 context=%d (%d copies)", ctxs[ci], at.ncopies);
        progress(prog, ++step, total, what);
        at.kv = malloc((size_t)at.ncopies * 2 * e * sizeof *at.kv);
        at.q = malloc((size_t)card.heads * (size_t)hd * sizeof *at.q);
        at.out = malloc((size_t)card.heads * (size_t)hd * sizeof *at.out);
        if (!at.kv || !at.q || !at.out) goto oom;
        fill_h(at.kv, (size_t)at.ncopies * 2 * e, 1.0f, &seed);
        fill_h(at.q, (size_t)card.heads * (size_t)hd, 1.0f, &seed);
        double tm = median_time(att_call, &at, at.ncopies, a->quick);
        if (tm <= 0) goto oom;
        caltable_row_t *r = row_add(&rs);
        if (!r) goto oom;
        r->op = CAL_ATTENTION;
        r->q = 1;
        r->context = ctxs[ci];
        r->heads = card.heads;
        r->kv_heads = card.kv_heads;
        r->head_dim = hd;
        r->batch = 1;
        r->time_s = tm;
        r->gbs = attn_bytes(1, ctxs[ci], card.kv_heads, hd) / tm / 1e9;
        r->gflops = attn_flops(1, ctxs[ci], card.heads, hd) / tm / 1e9;
        free(at.kv);
        free(at.q);
        free(at.out);
        at.kv = at.q = at.out = NULL;
    }

    /* The machine's read rate drifts (shared host): measure the ceiling
     * again after the kernels and keep the higher, so no row's fraction
     * rests on a momentarily low ceiling. */
    progress(prog, step, total, "read bandwidth ceiling (again)");
    double again = membw_read_gbs(ctx, bw_bytes, a->quick ? 3 : 10, err);
    if (again <= 0) goto out;
    double again_m = membw_read_streams_gbs(ctx, bw_bytes, MEMBW_STREAMS, a->quick ? 3 : 10, err);
    if (again_m <= 0) goto out;
    double before = t.read_gbs, before_m = t.read_multi_gbs;
    if (again > t.read_gbs) t.read_gbs = again;
    if (again_m > t.read_multi_gbs) t.read_multi_gbs = again_m;
    /* Fractions of the higher ceiling: the one a kernel can actually reach. */
    double top = t.read_multi_gbs > t.read_gbs ? t.read_multi_gbs : t.read_gbs;
    for (int i = 0; i < rs.n; i++) rs.r[i].ceiling_frac = rs.r[i].gbs / top;

    tk.ctx = ctx;
    tk.c = &card;
    tk.fp16 = fp16;
    tk.maxctx = ctxs[nctx - 1];
    snprintf(what, sizeof what, "token: allocating %d layers", card.layers);
    progress(prog, step, total, what);
    if (tok_init(&tk, sh, llc, &seed) != 0) goto oom;
    for (int ci = 0; ci < nctx; ci++) {
        tk.ctxlen = ctxs[ci];
        snprintf(what, sizeof what, "token context=%d (%d layer sets)", ctxs[ci], tk.nsets);
        progress(prog, ++step, total, what);
        /* A whole token is long (≈0.1–1 s): a few samples suffice. */
        double samples[9];
        int ns = a->quick ? 3 : 7;
        if (tok_call(&tk, 0) != 0) goto oom;
        for (int i = 0; i < ns; i++) {
            double t0 = wallclock_s();
            if (tok_call(&tk, 0) != 0) goto oom;
            samples[i] = wallclock_s() - t0;
        }
        qsort(samples, (size_t)ns, sizeof samples[0], calibrate_cmp_double);
        caltable_row_t *r = row_add(&rs);
        if (!r) goto oom;
        r->op = CAL_TOKEN;
        r->m = 1;
        r->context = ctxs[ci];
        r->time_s = samples[ns / 2];
    }
    if (prog) fprintf(prog, "\n");

    {
        char extra[512];
        snprintf(extra, sizeof extra, "read ceilings before/after the kernels: 1 stream per "
                 "thread %.2f/%.2f GB/s, %d streams per thread %.2f/%.2f GB/s (max of each "
                 "recorded; ceiling_frac against the higher); W4A16 kernel %s; token: %d "
                 "distinct layer weight sets rotated, KV cache per layer, RoPE omitted",
                 before, again, MEMBW_STREAMS, before_m, again_m, a->kernel, tk.nsets);
        fill_prov(&t, a, ctx, llc, extra);
        snprintf(t.device_kind, sizeof t.device_kind, "cpu");
        snprintf(t.model, sizeof t.model, "%s", card.name);
        snprintf(t.quant, sizeof t.quant, "%s", a->quant);
        t.rows = rs.r;
        t.nrows = rs.n;
        rc = caltable_save(&t, a->out, stdout, err);
    }
    goto out;
oom:
    if (prog) fprintf(prog, "\n");
    err_set(err, ERR_RUNTIME, "calibrate: out of memory or kernel failure (%s)", what);
out:
    lin_fini(&l);
    free(at.kv);
    free(at.q);
    free(at.out);
    tok_fini(&tk);
    free(x);
    free(y);
    free(rs.r);
    gemv_ctx_free(ctx);
    return rc;
}

/* ---- the benchmark ---------------------------------------------------- */

struct dense {
    gemv_ctx_t *ctx;
    int n, k, ncopies, f32;
    void *w;
    const void *x;
    void *y;
};

static int dense_call(void *arg, int copy)
{
    struct dense *d = arg;
    size_t off = (size_t)copy * (size_t)d->n * (size_t)d->k;
    if (d->f32) return gemv_f32(d->ctx, (const float *)d->w + off, d->n, d->k, d->x, 1, d->y);
    return gemv_f16(d->ctx, (const uint16_t *)d->w + off, d->n, d->k, d->x, 1, d->y);
}

static double bench_dense(gemv_ctx_t *ctx, int f32, int n, int k, size_t llc, const void *x,
                          void *y, int quick, uint64_t *seed)
{
    size_t es = f32 ? 4 : 2;
    struct dense d = {ctx, n, k, calibrate_copies_for((double)es * n * k, llc), f32, NULL, x, y};
    size_t count = (size_t)d.ncopies * (size_t)n * (size_t)k;
    d.w = malloc(count * es);
    if (!d.w) return -1;
    if (f32)
        for (size_t i = 0; i < count; i++) ((float *)d.w)[i] = (float)(rng_next(seed) >> 40) * 1e-9f;
    else
        fill_h(d.w, count, 0.02f, seed);
    double t = median_time(dense_call, &d, d.ncopies, quick);
    free(d.w);
    return t;
}

/* Several timed variants measured side by side: every round calls each
 * variant once, so a change of machine load hits all of them alike; the
 * result is each variant's median. Rounds continue until every variant has
 * min_reps samples and the round total exceeds min_total. 0, or -1 if a
 * call fails. */
struct variant {
    timed_fn fn;
    void *arg;
    double t[MAX_SAMPLES];
    double median;
};

static int interleaved_medians(struct variant *v, int nv, int warm, int quick)
{
    int min_reps = quick ? 5 : 15;
    double min_total = quick ? 0.05 : 0.5, total = 0.0;
    for (int w = 0; w < warm; w++)
        for (int i = 0; i < nv; i++)
            if (v[i].fn(v[i].arg, 0) != 0) return -1;
    int n = 0;
    while (n < MAX_SAMPLES && (n < min_reps || total < min_total)) {
        for (int i = 0; i < nv; i++) {
            double t0 = wallclock_s();
            if (v[i].fn(v[i].arg, 0) != 0) return -1;
            v[i].t[n] = wallclock_s() - t0;
            total += v[i].t[n];
        }
        n++;
    }
    for (int i = 0; i < nv; i++) {
        qsort(v[i].t, (size_t)n, sizeof v[i].t[0], calibrate_cmp_double);
        v[i].median = n % 2 ? v[i].t[n / 2] : 0.5 * (v[i].t[n / 2 - 1] + v[i].t[n / 2]);
    }
    return 0;
}

/* One W4A16 variant of the bench: M rows, a kernel; all variants of a
 * shape share one set of weight copies and one rotation, so consecutive
 * calls never find their weights in cache. */
struct w4v {
    struct lin *l;
    int *next;           /* shared rotation */
    int m, kern;
};

static int w4v_call(void *arg, int copy)
{
    struct w4v *v = arg;
    (void)copy;
    err_t e;
    if (gemv_ctx_set_w4_kernel(v->l->ctx, v->kern, &e) != 0) return -1;
    v->l->m = v->m;
    int c = (*v->next)++ % v->l->ncopies;
    return lin_call(v->l, c);
}

/* The two read ceilings side by side (see membw.h), best of `rounds`
 * alternations. */
static int bench_ceilings(gemv_ctx_t *ctx, size_t bytes, int quick, double *one, double *multi,
                          err_t *err)
{
    *one = *multi = 0;
    for (int r = 0; r < 2; r++) {
        double a = membw_read_gbs(ctx, bytes, quick ? 3 : 5, err);
        double b = membw_read_streams_gbs(ctx, bytes, MEMBW_STREAMS, quick ? 3 : 5, err);
        if (a <= 0 || b <= 0) return -1;
        if (a > *one) *one = a;
        if (b > *multi) *multi = b;
    }
    return 0;
}

#define BENCH_M8 8

/* A pure read of the next copy's packed nibbles (MEMBW_STREAMS streams per
 * chunk), interleaved with the kernels: the ceiling measured the same way
 * (median of short calls on the same bytes, same moment) as they are. */
static int readv_call(void *arg, int copy)
{
    struct w4v *v = arg;
    (void)copy;
    int c = (*v->next)++ % v->l->ncopies;
    membw_read_pass(v->l->ctx, v->l->w4[c].q, (size_t)v->l->n * (size_t)v->l->k / 2, MEMBW_STREAMS);
    return 0;
}

const calibrate_shape_t calibrate_bench_shapes[CALIBRATE_BENCH_NSHAPES] = {
    {"7B q/o  4096x4096", 4096, 4096},
    {"7B up   11008x4096", 11008, 4096},
    {"7B down 4096x11008", 4096, 11008},
    {"7B head 32000x4096", 32000, 4096},
    {"1.1B gate_up 11264x2048", 11264, 2048},
};

int calibrate_bench(const calibrate_args_t *a, FILE *out, err_t *err)
{
    const calibrate_shape_t *shapes = calibrate_bench_shapes;
    gemv_ctx_t *ctx = make_ctx(a, err);
    if (!ctx) return -1;
    size_t llc = cpu_llc_bytes();
    uint64_t seed = 12345;
    int rc = -1;
    char model[200], load[64];
    cpu_model_name(model, sizeof model);
    load_average(load, sizeof load);
    size_t bw_bytes = 8 * llc < ((size_t)256 << 20) ? (size_t)256 << 20 : 8 * llc;
    double c1, cm;
    if (bench_ceilings(ctx, bw_bytes, a->quick, &c1, &cm, err) != 0) goto out;
    enum { NSH = CALIBRATE_BENCH_NSHAPES, NV = 5 };
    double tw[NSH][NV], t16[NSH], t32[NSH];
    size_t maxk = 11008, maxn = 32000;
    float *xf = malloc(maxk * sizeof *xf), *yf = malloc(maxn * sizeof *yf);
    uint16_t *xh = malloc(BENCH_M8 * maxk * sizeof *xh), *yh = malloc(BENCH_M8 * maxn * sizeof *yh);
    if (!xf || !yf || !xh || !yh) {
        err_set(err, ERR_RUNTIME, "out of memory");
        goto done;
    }
    fill_h(xh, BENCH_M8 * maxk, 1.0f, &seed);
    for (size_t i = 0; i < maxk; i++) xf[i] = fp16_to_f32(xh[i]);
    for (size_t s = 0; s < NSH; s++) {
        int n = shapes[s].n, k = shapes[s].k;
        struct lin l = {0};
        l.ctx = ctx;
        l.x = xh;
        l.y = yh;
        l.interleave = 1;
        if (lin_init(&l, n, k, llc, &seed) != 0) {
            lin_fini(&l);
            err_set(err, ERR_RUNTIME, "out of memory");
            goto done;
        }
        int next = 0;
        struct w4v wv[NV] = {{&l, &next, 1, GEMV_W4_EXACT}, {&l, &next, 1, GEMV_W4_INT8},
                             {&l, &next, BENCH_M8, GEMV_W4_EXACT},
                             {&l, &next, BENCH_M8, GEMV_W4_INT8}, {&l, &next, 1, 0}};
        struct variant v[NV];
        for (int i = 0; i < NV; i++)
            v[i] = (struct variant){i == NV - 1 ? readv_call : w4v_call, &wv[i], {0}, 0};
        int warm = (l.ncopies + NV - 1) / NV + 1;
        int bad = interleaved_medians(v, NV, warm, a->quick);
        lin_fini(&l);
        if (bad) {
            err_set(err, ERR_RUNTIME, "kernel failure");
            goto done;
        }
        for (int i = 0; i < NV; i++) tw[s][i] = v[i].median;
        t16[s] = bench_dense(ctx, 0, n, k, llc, xh, yh, a->quick, &seed);
        t32[s] = bench_dense(ctx, 1, n, k, llc, xf, yf, a->quick, &seed);
        if (t16[s] <= 0 || t32[s] <= 0) {
            err_set(err, ERR_RUNTIME, "out of memory");
            goto done;
        }
    }
    /* The host's read rate drifts: measure again and keep the higher. */
    double c1b, cmb;
    if (bench_ceilings(ctx, bw_bytes, a->quick, &c1b, &cmb, err) != 0) goto done;
    fprintf(out, "== kernels: %s, %d threads, ISA %s (int8 dot product %s at M=1..%d, %s at "
                 "M=16), LLC %zu MiB, load average at start %s\n",
            model, gemv_ctx_threads(ctx), gemv_isa_name(gemv_ctx_isa(ctx)),
            gemv_ctx_int8_dot_name(ctx, 1), BENCH_M8, gemv_ctx_int8_dot_name(ctx, 16), llc >> 20,
            load);
    fprintf(out, "read ceiling (STREAM-style, all threads, best pass, before/after): 1 stream "
                 "per thread %.2f / %.2f GB/s; %d streams per thread %.2f / %.2f GB/s\n",
            c1, c1b, MEMBW_STREAMS, cm, cmb);
    double ceil_gbs = c1;
    if (c1b > ceil_gbs) ceil_gbs = c1b;
    if (cm > ceil_gbs) ceil_gbs = cm;
    if (cmb > ceil_gbs) ceil_gbs = cmb;
    fprintf(out, "GEMV, weights rotated beyond 4x LLC, median time (W4A16 variants interleaved "
                 "call by call); GB/s counts weight bytes (g128: 0.5 B + 2.5 B per 128); %%ceil "
                 "of the highest ceiling (%.2f GB/s); exact = fp16 activations, int8 = "
                 "activations quantised per group; x M1 = time at M=%d / time at M=1; read us = "
                 "a %d-stream read of the same nibbles interleaved with the kernels, %%rd = read "
                 "time / kernel time at M=1 (the ceiling measured like the kernels)\n",
            ceil_gbs, BENCH_M8, MEMBW_STREAMS);
    fprintf(out, "%-24s %9s %7s %6s %9s %7s %6s %10s %5s %10s %5s %8s %5s %5s %9s %9s %7s %7s\n",
            "shape", "exact us", "GB/s", "%ceil", "int8 us", "GB/s", "%ceil", "M8 ex us", "x M1",
            "M8 i8 us", "x M1", "read us", "%rd ex", "%rd i8", "f16 us", "f32 us", "vs f16", "vs f32");
    for (size_t s = 0; s < NSH; s++) {
        int n = shapes[s].n, k = shapes[s].k;
        double b = w4a16_bytes(n, k, W4A16_GROUP_DEFAULT);
        double ge = b / tw[s][0] / 1e9, gi = b / tw[s][1] / 1e9;
        fprintf(out, "%-24s %9.1f %7.2f %5.1f%% %9.1f %7.2f %5.1f%% %10.1f %5.2f %10.1f %5.2f "
                     "%8.1f %5.0f%% %5.0f%% %9.1f %9.1f %6.2fx %6.2fx\n",
                shapes[s].what, tw[s][0] * 1e6, ge, 100.0 * ge / ceil_gbs, tw[s][1] * 1e6, gi,
                100.0 * gi / ceil_gbs, tw[s][2] * 1e6, tw[s][2] / tw[s][0], tw[s][3] * 1e6,
                tw[s][3] / tw[s][1], tw[s][4] * 1e6, 100.0 * tw[s][4] / tw[s][0],
                100.0 * tw[s][4] / tw[s][1], t16[s] * 1e6, t32[s] * 1e6, t16[s] / tw[s][0],
                t32[s] / tw[s][0]);
    }
    fflush(out);
    rc = 0;
done:
    free(xf);
    free(yf);
    free(xh);
    free(yh);
out:
    gemv_ctx_free(ctx);
    return rc;
}
