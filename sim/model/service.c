/* service — roofline service model, optionally calibrated by a table.
 *
 * Shapes (per layer; head_dim = hidden / heads):
 *   qkv     N = (heads + 2·kv_heads)·head_dim, K = hidden
 *   o       N = hidden,                        K = hidden
 *   gate_up N = 2·ffn (gated MLP) or ffn,      K = hidden
 *   down    N = hidden,                        K = ffn
 *   lm_head N = vocab, K = hidden, once per iteration over the H rows whose
 *           logits are computed: every token of a verify block or decode
 *           step, only the prompt's last token of a prefill (H ≤ M). Not
 *           a rounding matter: the head is 2% of a LLaMA-2-7B token but
 *           21% of a SmolLM2-135M one, whose prefills it overpriced by that
 *           much when all M rows were counted.
 * A linear op over M tokens: flops 2·M·N·K, bytes = weights (bytes/weight of
 * the precision, lm_head included) + activations in and out 2·M·(K+N) (4 for
 * fp32). Attention of a job with q new tokens over c cached, per layer:
 * KV bytes 2·(c+q)·kv_heads·head_dim·e, e the K,V cache's bytes per element
 * (2 for fp16, the default at every precision; 1 for an fp8 cache, which
 * FP8 engines such as TensorRT-LLM with --fp8_kv_cache keep), flops
 * 4·q·(c+q)·hidden (QK^T and PV, no causal halving); one fused kernel per
 * iteration, so the datasheet time is max(Σflops/rate, Σbytes/bw) over the
 * batch.
 *
 * With a table, each linear op's time is piecewise linear in M between the
 * measured Ms. Outside them it is scaled from the nearest measured point by a
 * roofline fitted to that op's rows — t(M) = t(Mc)·fit(M)/fit(Mc) — which
 * keeps the curve continuous. The fit: bandwidth = bytes/time of the
 * smallest-M row (most memory-bound); FLOP rate = flops/time of the
 * largest-M row when that row is compute-bound (its time exceeds the fitted
 * memory time by > 25%), else the row only bounds the rate from below and
 * the larger of that bound and the datasheet rate is taken. Attention rows
 * are interpolated the same way in (q, context), per job (time_s / batch).
 * Operators with no rows use the fit over all rows of the table.
 *
 * The operators do not make a whole step: norms, activations, residual adds,
 * RoPE and the gaps between kernels are not in any row (on the CPU tables
 * they are 15-19% of a draft token). When the table also has whole-step rows
 * (op: token: `batch` jobs of q tokens over a context), the step factor
 * f(M) = measured step / operators composed for that step is computed at
 * create, averaged per M, piecewise linear in M and clamped outside the
 * measured Ms; a table-based iteration costs overhead + f(M)·(operators).
 * Without whole-step rows f = 1.
 *
 * On the datasheet path two card parameters refine the plain roofline
 * (both fitted to results/validation/published.csv in docs/validation.md):
 * roofline_p > 0 replaces max(memory, compute) of every operator by the
 * smooth maximum (m^p + c^p)^(1/p), and kernel_floor > 0 makes every kernel
 * cost at least that floor and adds the element-wise operators and
 * sampling (eltwise_t) as kernels of their own. A table's rows already hold
 * both effects, so the table path uses neither.
 *
 * Tensor parallelism over tp GPUs (Megatron-style): qkv and gate_up are
 * split by columns, o and down by rows, lm_head and the embedding by vocab,
 * attention by heads (kv_heads too), so each GPU holds 1/tp of every weight
 * and does 1/tp of every FLOP; the ops above are one GPU's share and the
 * iteration is one GPU's time (all run in lockstep). Each layer then adds two
 * all-reduces (after o and after down) of the M×hidden activations, each a
 * ring all-reduce: 2(tp−1)/tp × M·hidden·2 B / interconnect_bw + the card's
 * interconnect_latency (per call) + 2(tp−1) × interconnect_step_latency (the
 * ring's steps, each a small message's latency). The weight footprint and KV bytes per token are the
 * replica's (all tp GPUs). A table measures one GPU's unsplit shapes, so
 * tp > 1 runs on the datasheet roofline only.
 *
 * Everything that does not depend on the batch is computed at create; an
 * iteration costs O(5 + njobs) with at most a few short binary searches.
 */
#include "model/service.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { OP_QKV, OP_O, OP_GATE_UP, OP_DOWN, OP_LM_HEAD, OP_N };
static const char *const op_names[OP_N] = {"qkv", "o", "gate_up", "down", "lm_head"};

/* A curve: y at sorted distinct x, piecewise linear between. */
typedef struct curve {
    int n;
    double *x, *y;
} curve_t;

typedef struct linop {
    int n, k;
    double mult;          /* layers, or 1 for lm_head */
    double wbytes;        /* weight bytes of one instance */
    double act_per_m;     /* activation bytes per token */
    double flops_per_m;   /* 2·N·K */
    curve_t cv;           /* table: time of one instance vs M (n = 0: no rows) */
    double fit_bw, fit_rate;
} linop_t;

typedef struct attn_table {
    int nq;
    double *qv;           /* distinct q values, ascending */
    curve_t *cv;          /* per q: per-layer time of one job vs context */
    double fit_bw, fit_rate;
} attn_table_t;

/* The operators outside the matrix products, each one kernel reading and
 * writing fp16 activations (docs/design.md, "The service model"). Per token,
 * per layer: an RMSNorm reads and writes hidden values (2 FLOPs per element
 * for the sum of squares, 2 to scale); RoPE rotates the q and k heads in
 * place (6 FLOPs per pair); SiLU·mul reads gate and up and writes their
 * product (about 5 FLOPs per element: exp, add, divide, two multiplies);
 * a residual add reads two hidden vectors and writes one. Sampling reads one
 * fp32 logit row per token whose logits are computed (a softmax's 5 FLOPs
 * per logit). Only with kernel_floor > 0 (hw_card_t). */
enum { ELT_NORM, ELT_ROPE, ELT_ACT, ELT_RESID, ELT_SAMPLE, ELT_N };
static const int elt_count[ELT_N] = {2, 1, 1, 2, 1};

typedef struct eltwise { double bytes_per_m, flops_per_m; } eltwise_t;

/* Whole-token batches up to 255 tokens (32 blocks of γ + 1 = 8) cover
 * nearly every decode iteration; 2 KiB per service, filled at creation. */
enum { LIN_MEMO_N = 256 };

struct service {
    int prec;
    double wbytes;              /* bytes per weight (the precision's or a format's) */
    double overhead;
    double bw, rate;            /* datasheet achieved rates */
    double peak_bw, peak_rate;  /* datasheet peaks (no efficiencies) */
    double layers;
    double kv_elem;             /* bytes per K or V element (2 fp16, 1 fp8) */
    double attn_bytes_coef;     /* per layer, per (c+q) token */
    double attn_flops_coef;     /* per layer, per q·(c+q) */
    double weight_footprint;
    linop_t op[OP_N];
    int have_table, all_ops;    /* table used; every op has rows */
    int tp;                     /* GPUs per replica (tensor parallel) */
    double ar_bytes_per_m;      /* one all-reduce's bytes per token (M·hidden·2) */
    double ar_bw, ar_lat;       /* interconnect bytes/s, latency per call */
    double ar_step;             /* latency per ring step */
    double floor;               /* kernel_floor: least time of one kernel, s */
    double p;                   /* roofline_p: smooth-maximum exponent (0: max) */
    double vec_rate;            /* element-wise FLOP/s (fp32 peak × flops_eff) */
    eltwise_t elt[ELT_N];       /* per layer (sampling: per logit row) */
    attn_table_t att;
    curve_t tok;                /* whole-token rows (m = 1) vs context */
    curve_t step;               /* step factor vs M (n = 0: f = 1) */
    int step_rows;              /* whole-step rows it was computed from */
    const char *source, *draft_source;
    /* iter_datasheet's M-only part (overhead, all-reduces, linear ops) for
     * M = 0 .. LIN_MEMO_N - 1, summed in iter_datasheet's order so that
     * a lookup returns the very bits it would compute. */
    double lin_memo[LIN_MEMO_N];
};

/* ---- curves -------------------------------------------------------------- */

typedef struct pt { double x, y; } pt_t;

static int pt_cmp(const void *a, const void *b)
{
    double d = ((const pt_t *)a)->x - ((const pt_t *)b)->x;
    return (d > 0) - (d < 0);
}

/* Sorts pts (n >= 1) in place and builds a curve, averaging repeated x. */
static int curve_build(curve_t *cv, pt_t *pts, int n)
{
    qsort(pts, (size_t)n, sizeof *pts, pt_cmp);
    cv->x = malloc(sizeof(double) * (size_t)n);
    cv->y = malloc(sizeof(double) * (size_t)n);
    if (!cv->x || !cv->y) return -1;
    int m = 0;
    for (int i = 0; i < n;) {
        int j = i;
        double s = 0;
        while (j < n && pts[j].x == pts[i].x) s += pts[j++].y;
        cv->x[m] = pts[i].x;
        cv->y[m++] = s / (j - i);
        i = j;
    }
    cv->n = m;
    return 0;
}

static void curve_fini(curve_t *cv)
{
    free(cv->x);
    free(cv->y);
    cv->x = cv->y = NULL;
    cv->n = 0;
}

/* Value at x clamped to the curve's range; *xc = the clamped x; returns
 * whether x was inside. */
static double curve_at(const curve_t *cv, double x, double *xc, int *inside)
{
    int n = cv->n;
    if (x <= cv->x[0]) {
        *xc = cv->x[0];
        *inside = x == cv->x[0];
        return cv->y[0];
    }
    if (x >= cv->x[n - 1]) {
        *xc = cv->x[n - 1];
        *inside = x == cv->x[n - 1];
        return cv->y[n - 1];
    }
    int lo = 0, hi = n - 1;   /* x[lo] < x < x[hi] */
    while (hi - lo > 1) {
        int mid = (lo + hi) / 2;
        if (cv->x[mid] <= x) lo = mid; else hi = mid;
    }
    *xc = x;
    *inside = 1;
    double f = (x - cv->x[lo]) / (cv->x[hi] - cv->x[lo]);
    return cv->y[lo] + f * (cv->y[hi] - cv->y[lo]);
}

/* ---- roofline pieces ----------------------------------------------------- */

/* fmax() without a library call (GCC inlines it only with -ffast-math),
 * for the roofline terms every iteration evaluates: the larger; b when they
 * are equal and the number when one is NaN, as glibc's fmax. Written so it
 * compiles to maxsd and a conditional move: a branch on which term bounds
 * the op mispredicts often. */
static inline double max2(double a, double b)
{
    double m = a > b ? a : b;
    return b != b ? a : m;
}

static double lin_bytes(const linop_t *o, double m) { return o->wbytes + m * o->act_per_m; }

/* One kernel of memory time a and compute time b at the datasheet rates:
 * the smooth maximum (a^p + b^p)^(1/p) — measured GEMMs bend from the
 * memory to the compute roof gradually, slowest near the ridge — or the
 * plain maximum at p = 0; then at least the kernel floor. */
static double kernel_time(const service_t *sv, double a, double b)
{
    double t;
    if (sv->p > 0) {
        double hi = max2(a, b), lo = a + b - hi, r = hi > 0 ? lo / hi : 0;
        /* p = 2, the fitted value, without two pow() calls: they were 4% of
         * the default scenario's instructions. */
        t = sv->p == 2 ? hi * sqrt(1.0 + r * r) : hi * pow(1.0 + pow(r, sv->p), 1.0 / sv->p);
    } else {
        t = max2(a, b);
    }
    return max2(t, sv->floor);
}

/* The element-wise operators and sampling of m tokens, `head` of them with
 * logits; 0 without a kernel floor. */
static double eltwise_time(const service_t *sv, double m, double head)
{
    if (!(sv->floor > 0)) return 0;
    double t = 0;
    for (int i = 0; i < ELT_N; i++) {
        double rows = i == ELT_SAMPLE ? head : m;
        double per = i == ELT_SAMPLE ? 1 : sv->layers;
        if (rows <= 0) continue;
        const eltwise_t *e = &sv->elt[i];
        t += per * elt_count[i] *
             kernel_time(sv, rows * e->bytes_per_m / sv->bw, rows * e->flops_per_m / sv->vec_rate);
    }
    return t;
}

static double lin_roof(const linop_t *o, double m, double bw, double rate)
{
    return max2(m * o->flops_per_m / rate, lin_bytes(o, m) / bw);
}

/* One instance of op o at M tokens, from the table (or its fit). */
static double lin_table(const linop_t *o, double m, int *inside)
{
    if (o->cv.n == 0) {
        *inside = 0;
        return lin_roof(o, m, o->fit_bw, o->fit_rate);
    }
    double mc;
    double t = curve_at(&o->cv, m, &mc, inside);
    if (!*inside) t *= lin_roof(o, m, o->fit_bw, o->fit_rate) /
                       lin_roof(o, mc, o->fit_bw, o->fit_rate);
    return t;
}

static double att_roof(const service_t *sv, double q, double c, double bw, double rate)
{
    return max2(sv->attn_flops_coef * q * (c + q / 2.0) / rate,
                sv->attn_bytes_coef * (c + q) / bw);
}

/* Per-layer time of one job at the i-th measured q, any context. */
static double att_at_q(const service_t *sv, int i, double c, int *inside)
{
    const attn_table_t *a = &sv->att;
    double cc;
    double t = curve_at(&a->cv[i], c, &cc, inside);
    if (!*inside)
        t *= att_roof(sv, a->qv[i], c, a->fit_bw, a->fit_rate) /
             att_roof(sv, a->qv[i], cc, a->fit_bw, a->fit_rate);
    return t;
}

/* Per-layer time of one job (q, c) from the attention rows. */
static double att_table(const service_t *sv, double q, double c, int *inside)
{
    const attn_table_t *a = &sv->att;
    int nq = a->nq, i0, i1;
    double qc = q;
    if (q <= a->qv[0]) { i0 = i1 = 0; qc = a->qv[0]; }
    else if (q >= a->qv[nq - 1]) { i0 = i1 = nq - 1; qc = a->qv[nq - 1]; }
    else {
        i0 = 0; i1 = nq - 1;
        while (i1 - i0 > 1) {
            int mid = (i0 + i1) / 2;
            if (a->qv[mid] <= q) i0 = mid; else i1 = mid;
        }
    }
    int in0, in1 = 1;
    double t = att_at_q(sv, i0, c, &in0);
    if (i1 != i0) {
        double t1 = att_at_q(sv, i1, c, &in1);
        t += (qc - a->qv[i0]) / (a->qv[i1] - a->qv[i0]) * (t1 - t);
    }
    *inside = in0 && in1 && qc == q;
    if (qc != q)
        t *= att_roof(sv, q, c, a->fit_bw, a->fit_rate) /
             att_roof(sv, qc, c, a->fit_bw, a->fit_rate);
    return t;
}

/* ---- iteration ----------------------------------------------------------- */

typedef struct sums {
    double m, ctx, qctx;   /* Σq, Σ(c+q), Σq·(c+q/2) (causal: see below) */
    double head;           /* Σ(q − nohead): the lm_head's rows */
} sums_t;

static sums_t job_sums(const service_job_t *jobs, int njobs)
{
    sums_t s = {0, 0, 0, 0};
    for (int j = 0; j < njobs; j++) {
        double q = jobs[j].tokens, cq = (double)jobs[j].context + q;
        int skip = jobs[j].nohead;
        s.m += q;
        s.ctx += cq;
        /* A prompt's tokens attend causally to one another: q·c over the
         * cache plus half the q×q square. */
        s.qctx += q * (jobs[j].context + q / 2.0);
        s.head += skip <= 0 ? q : skip >= jobs[j].tokens ? 0 : q - skip;
    }
    return s;
}

/* The two ring all-reduces per layer of an M-token iteration; 0 at tp = 1.
 * Latency-bandwidth: a call's fixed cost, 2(tp-1) ring steps of a small
 * message's latency each, and 2(tp-1)/tp of the bytes at the link rate. */
static double allreduce_time(const service_t *sv, double m)
{
    if (sv->tp <= 1) return 0;
    double ring = 2.0 * (sv->tp - 1) / sv->tp;
    double steps = 2.0 * (sv->tp - 1);
    return sv->layers * 2.0 * (ring * m * sv->ar_bytes_per_m / sv->ar_bw + sv->ar_lat +
                               steps * sv->ar_step);
}

/* The linear layers of m tokens, the lm_head over `head` rows of them
 * (none: 0 s). */
static double lin_datasheet(const service_t *sv, double m, double head)
{
    double t = sv->overhead + allreduce_time(sv, m) + eltwise_time(sv, m, head);
    for (int i = 0; i < OP_N; i++) {
        double rows = i == OP_LM_HEAD ? head : m;
        const linop_t *o = &sv->op[i];
        if (rows > 0)
            t += o->mult * kernel_time(sv, lin_bytes(o, rows) / sv->bw,
                                       rows * o->flops_per_m / sv->rate);
    }
    return t;
}

/* Memoised for steps whose every row needs logits (verify, decode). */
static void lin_memo_fill(service_t *sv)
{
    for (int k = 0; k < LIN_MEMO_N; k++) sv->lin_memo[k] = lin_datasheet(sv, k, k);
}

/* The per-iteration cost on a decode batch was 4% of all instructions of
 * the default scenario before the memo (callgrind). */
static double iter_datasheet(const service_t *sv, const sums_t *s)
{
    int k = s->m < LIN_MEMO_N && s->head == s->m ? (int)s->m : -1;
    double t = k >= 0 && k == s->m ? sv->lin_memo[k] : lin_datasheet(sv, s->m, s->head);
    return t + sv->layers * kernel_time(sv, sv->attn_bytes_coef * s->ctx / sv->bw,
                                        sv->attn_flops_coef * s->qctx / sv->rate);
}

/* Attention time of the whole batch (all layers) with a table in use. */
static double att_batch_table(const service_t *sv, const service_job_t *jobs,
                              int njobs, const sums_t *s, int *inside)
{
    if (sv->att.nq == 0) {
        *inside = 0;
        return sv->layers * fmax(sv->attn_flops_coef * s->qctx / sv->att.fit_rate,
                                 sv->attn_bytes_coef * s->ctx / sv->att.fit_bw);
    }
    double t = 0;
    *inside = 1;
    for (int j = 0; j < njobs; j++) {
        if (jobs[j].tokens <= 0) continue;
        int in;
        t += att_table(sv, jobs[j].tokens, jobs[j].context, &in);
        *inside &= in;
    }
    return sv->layers * t;
}

static double step_factor(const service_t *sv, double m)
{
    double mc;
    int in;
    return sv->step.n > 0 ? curve_at(&sv->step, m, &mc, &in) : 1.0;
}

/* The operators of one iteration composed from the table, no overhead and
 * no step factor. */
static double ops_table(const service_t *sv, const service_job_t *jobs, int njobs,
                        const sums_t *s, int *inside)
{
    double t = 0;
    int all = 1, in;
    for (int i = 0; i < OP_N; i++) {
        double rows = i == OP_LM_HEAD ? s->head : s->m;
        if (rows <= 0) continue;
        t += sv->op[i].mult * lin_table(&sv->op[i], rows, &in);
        all &= in;
    }
    t += att_batch_table(sv, jobs, njobs, s, &in);
    *inside = all && in;
    return t;
}

static double iter_table(const service_t *sv, const service_job_t *jobs, int njobs,
                         const sums_t *s, int *inside)
{
    return sv->overhead + step_factor(sv, s->m) * ops_table(sv, jobs, njobs, s, inside);
}

double service_iter_time(const service_t *sv, const service_job_t *jobs, int njobs)
{
    sums_t s = job_sums(jobs, njobs);
    if (s.m <= 0) return 0;
    int in;
    return sv->have_table ? iter_table(sv, jobs, njobs, &s, &in) : iter_datasheet(sv, &s);
}

double service_composed_time(const service_t *sv, const service_job_t *jobs, int njobs)
{
    sums_t s = job_sums(jobs, njobs);
    if (s.m <= 0) return 0;
    int in;
    if (sv->have_table) return ops_table(sv, jobs, njobs, &s, &in);
    return iter_datasheet(sv, &s) - sv->overhead;
}

double service_iter_time_datasheet(const service_t *sv, const service_job_t *jobs,
                                   int njobs)
{
    sums_t s = job_sums(jobs, njobs);
    return s.m <= 0 ? 0 : iter_datasheet(sv, &s);
}

double service_roofline_linear(const service_t *sv, double m)
{
    double t = allreduce_time(sv, m);
    for (int i = 0; i < OP_N; i++)
        t += sv->op[i].mult * lin_roof(&sv->op[i], m, sv->peak_bw, sv->peak_rate);
    return t;
}

double service_roofline_attention(const service_t *sv, const service_job_t *jobs,
                                  int njobs)
{
    sums_t s = job_sums(jobs, njobs);
    return sv->layers * fmax(sv->attn_flops_coef * s.qctx / sv->peak_rate,
                             sv->attn_bytes_coef * s.ctx / sv->peak_bw);
}

int service_in_table(const service_t *sv, const service_job_t *jobs, int njobs)
{
    sums_t s = job_sums(jobs, njobs);
    if (!sv->have_table || s.m <= 0) return 0;
    int in;
    iter_table(sv, jobs, njobs, &s, &in);
    return in;
}

/* Attention time of one job, all layers, with whatever model is in use. */
static double att_job(const service_t *sv, double q, double c)
{
    service_job_t j = {(int)q, (int)c, 0};
    sums_t s = job_sums(&j, 1);
    int in;
    if (!sv->have_table)
        return sv->layers * kernel_time(sv, sv->attn_bytes_coef * s.ctx / sv->bw,
                                        sv->attn_flops_coef * s.qctx / sv->rate);
    return att_batch_table(sv, &j, 1, &s, &in);
}

static double draft_token_table(const service_t *sv, int context, int *inside)
{
    double cc;
    double t = curve_at(&sv->tok, context, &cc, inside);
    if (!*inside) t += step_factor(sv, 1) * (att_job(sv, 1, context) - att_job(sv, 1, cc));
    return t + sv->overhead;
}

double service_draft_time(const service_t *sv, int context)
{
    if (sv->tok.n > 0) {
        int in;
        return draft_token_table(sv, context, &in);
    }
    service_job_t j = {1, context, 0};
    return service_iter_time(sv, &j, 1);
}

double service_draft_width_time(const service_t *sv, int context, int width)
{
    service_job_t one = {1, context, 0}, all = {width, context, 0};
    double extra = service_iter_time(sv, &all, 1) - service_iter_time(sv, &one, 1);
    return service_draft_time(sv, context) + extra;
}

int service_draft_in_table(const service_t *sv, int context)
{
    if (sv->tok.n > 0) {
        int in;
        draft_token_table(sv, context, &in);
        return in;
    }
    service_job_t j = {1, context, 0};
    return service_in_table(sv, &j, 1);
}

double service_prefill_time(const service_t *sv, int n)
{
    service_job_t j = {n, 0, n - 1};   /* logits of the last token only */
    return service_iter_time(sv, &j, 1);
}

void service_terms(const service_t *sv, const service_job_t *jobs, int njobs,
                   service_terms_t *out)
{
    memset(out, 0, sizeof *out);
    out->step_factor = 1.0;
    sums_t s = job_sums(jobs, njobs);
    if (s.m <= 0) return;
    if (sv->have_table) out->step_factor = step_factor(sv, s.m);
    for (int i = 0; i < OP_N; i++) {
        const linop_t *o = &sv->op[i];
        double bw = sv->have_table ? o->fit_bw : sv->bw;
        double rate = sv->have_table ? o->fit_rate : sv->rate;
        double rows = i == OP_LM_HEAD ? s.head : s.m;
        if (rows <= 0) continue;
        double mem = o->mult * lin_bytes(o, rows) / bw;
        double comp = o->mult * rows * o->flops_per_m / rate;
        if (i == OP_LM_HEAD) {
            int in;
            out->lm_head_s = sv->have_table ? lin_table(o, rows, &in) : fmax(mem, comp);
        } else {
            out->linear_mem_s += mem;
            out->linear_compute_s += comp;
        }
        out->weight_bytes += o->mult * o->wbytes;
        out->flops += o->mult * rows * o->flops_per_m;
    }
    double abw = sv->have_table ? sv->att.fit_bw : sv->bw;
    double arate = sv->have_table ? sv->att.fit_rate : sv->rate;
    out->kv_bytes = sv->layers * sv->attn_bytes_coef * s.ctx;
    double aflops = sv->layers * sv->attn_flops_coef * s.qctx;
    out->attn_mem_s = out->kv_bytes / abw;
    out->attn_compute_s = aflops / arate;
    out->flops += aflops;
    out->overhead_s = sv->overhead;
    out->allreduce_s = allreduce_time(sv, s.m);
    out->total_s = service_iter_time(sv, jobs, njobs);
}

double service_ref_time(const service_t *sv)
{
    service_job_t jobs[SERVICE_REF_JOBS];
    for (int b = 0; b < SERVICE_REF_JOBS; b++)
        jobs[b] = (service_job_t){.tokens = SERVICE_REF_TOKENS,
                                  .context = SERVICE_REF_CONTEXT};
    return service_iter_time(sv, jobs, SERVICE_REF_JOBS);
}

double service_step_factor(const service_t *sv, double m) { return step_factor(sv, m); }
int service_step_rows(const service_t *sv) { return sv->step_rows; }

const char *service_source(const service_t *sv) { return sv->source; }
const char *service_draft_source(const service_t *sv) { return sv->draft_source; }
double service_weight_bytes(const service_t *sv) { return sv->weight_footprint; }

double service_kv_bytes_per_token(const service_t *sv)
{
    return sv->layers * sv->attn_bytes_coef * sv->tp;
}

int service_tensor_parallel(const service_t *sv) { return sv->tp; }

/* ---- creation ------------------------------------------------------------ */

int service_check_model(const llm_card_t *m, err_t *err)
{
    if (m->layers < 1 || m->hidden < 1 || m->heads < 1 || m->kv_heads < 1 ||
        m->ffn < 1 || m->vocab < 1)
        return err_set(err, ERR_INPUT,
                       "model card '%s': layers, hidden, heads, kv_heads, ffn and "
                       "vocab must all be >= 1", m->name);
    if (m->hidden % m->heads != 0)
        return err_set(err, ERR_INPUT, "model card '%s': hidden (%d) is not a "
                       "multiple of heads (%d)", m->name, m->hidden, m->heads);
    if (m->kv_heads > m->heads || m->heads % m->kv_heads != 0)
        return err_set(err, ERR_INPUT, "model card '%s': heads (%d) is not a "
                       "multiple of kv_heads (%d)", m->name, m->heads, m->kv_heads);
    return 0;
}

/* The compute precision whose peak applies: int4 for w4a4, fp32 for fp32,
 * fp8 for fp8 (e4m3 operands on fp8 tensor cores), fp16 for fp16 and the
 * a16 formats (weights are dequantised to fp16). */
static int compute_prec(int prec)
{
    return prec == PREC_W4A4 || prec == PREC_FP32 || prec == PREC_FP8 ? prec : PREC_FP16;
}

/* The element-wise operators' bytes and FLOPs per token (fp16 activations,
 * see elt_count). Under tensor parallelism the norms and residual adds run
 * on the whole hidden vector on every GPU; RoPE and SiLU·mul on its share
 * of the heads and ffn columns; sampling on the whole (gathered) logits. */
static void setup_eltwise(service_t *sv, const llm_card_t *m)
{
    double h = m->hidden, tp = sv->tp;
    double qk = (m->heads + m->kv_heads) * (double)(m->hidden / m->heads) / tp;
    double f = (double)m->ffn / tp;
    sv->elt[ELT_NORM] = (eltwise_t){2 * 2 * h, 4 * h};
    sv->elt[ELT_ROPE] = (eltwise_t){2 * 2 * qk, 3 * qk};
    sv->elt[ELT_ACT] = m->gated_mlp ? (eltwise_t){3 * 2 * f, 5 * f}
                                    : (eltwise_t){2 * 2 * f, 4 * f};
    sv->elt[ELT_RESID] = (eltwise_t){3 * 2 * h, h};
    sv->elt[ELT_SAMPLE] = (eltwise_t){4.0 * m->vocab, 5.0 * m->vocab};
}

/* Which dimension of each op tensor parallelism splits: 0 = N (columns),
 * 1 = K (rows). */
static const int split_dim[OP_N] = {0, 1, 0, 1, 0};

static void setup_ops(service_t *sv, const llm_card_t *m)
{
    int hd = m->hidden / m->heads;
    int shape[OP_N][2] = {
        {(m->heads + 2 * m->kv_heads) * hd, m->hidden},
        {m->hidden, m->hidden},
        {m->gated_mlp ? 2 * m->ffn : m->ffn, m->hidden},
        {m->hidden, m->ffn},
        {m->vocab, m->hidden},
    };
    double wb = sv->wbytes;
    double act = sv->prec == PREC_FP32 ? 4 : 2;
    double tp = sv->tp;
    for (int i = 0; i < OP_N; i++) {
        linop_t *o = &sv->op[i];
        o->n = shape[i][0];
        o->k = shape[i][1];
        o->mult = i == OP_LM_HEAD ? 1 : m->layers;
        sv->weight_footprint += o->mult * (wb * o->n * (double)o->k);
        /* One GPU's share; exact at tp = 1. */
        double n = split_dim[i] == 0 ? o->n / tp : o->n;
        double k = split_dim[i] == 1 ? o->k / tp : o->k;
        o->wbytes = wb * n * k;
        o->act_per_m = act * (k + n);
        o->flops_per_m = 2.0 * n * k;
    }
    /* The token embedding table, fp16, unless it is the lm_head's matrix
     * (tied embeddings, Llama-3.2-1B and 3B): then the lm_head above is
     * the one copy held. Either way a step reads the lm_head whole and
     * only the embedding rows of its tokens, so the step's time does not
     * depend on the tying, only the footprint (KV capacity, fit) does. */
    if (!m->tied_embeddings) sv->weight_footprint += 2.0 * m->vocab * (double)m->hidden;
    sv->layers = m->layers;
    sv->attn_bytes_coef = 2.0 * (m->kv_heads / tp) * hd * sv->kv_elem;
    sv->attn_flops_coef = 4.0 * (m->hidden / tp);
    sv->ar_bytes_per_m = act * m->hidden;
    setup_eltwise(sv, m);
}

static int op_index(const char *name)
{
    for (int i = 0; i < OP_N; i++)
        if (strcmp(name, op_names[i]) == 0) return i;
    return -1;
}

int service_linear_op(const service_t *sv, const char *name, double m, service_linop_t *out)
{
    int i = op_index(name);
    if (i < 0) return -1;
    const linop_t *o = &sv->op[i];
    double bytes = lin_bytes(o, m), flops = m * o->flops_per_m;
    *out = (service_linop_t){
        .n = split_dim[i] == 0 ? (double)o->n / sv->tp : o->n,
        .k = split_dim[i] == 1 ? (double)o->k / sv->tp : o->k,
        .bytes = bytes, .flops = flops,
        .memory_s = bytes / sv->bw, .compute_s = flops / sv->rate,
        .time_s = kernel_time(sv, bytes / sv->bw, flops / sv->rate),
    };
    return 0;
}

/* The table must describe this model at this precision. */
static int check_table(const caltable_t *t, const llm_card_t *m, int prec,
                       const service_t *sv, err_t *err)
{
    if (strcmp(t->quant, precision_name(prec)) != 0)
        return err_set(err, ERR_INPUT, "%s:%d:%d: quant: table measured %s, the "
                       "scenario uses %s", t->path, t->quant_line, t->quant_column,
                       t->quant, precision_name(prec));
    int nlinear = 0;
    for (int i = 0; i < t->nrows; i++) {
        const caltable_row_t *r = &t->rows[i];
        if (r->op == CAL_LINEAR) {
            int oi = op_index(r->name);
            if (oi < 0) continue;   /* the reader rejects these */
            const linop_t *o = &sv->op[oi];
            if (r->n != o->n || r->k != o->k)
                return err_set(err, ERR_INPUT, "%s:%d:%d: ops.%d: %s is %dx%d in the "
                               "table but %dx%d (n x k) in model '%s'", t->path,
                               r->line, r->column, i, r->name, r->n, r->k, o->n, o->k,
                               m->name);
            nlinear++;
        } else if (r->op == CAL_ATTENTION) {
            if (r->heads != m->heads || r->kv_heads != m->kv_heads ||
                r->head_dim != m->hidden / m->heads)
                return err_set(err, ERR_INPUT, "%s:%d:%d: ops.%d: attention heads/"
                               "kv_heads/head_dim %d/%d/%d do not match model '%s' "
                               "(%d/%d/%d)", t->path, r->line, r->column, i, r->heads,
                               r->kv_heads, r->head_dim, m->name, m->heads, m->kv_heads,
                               m->hidden / m->heads);
        }
    }
    /* Another name is accepted when the measured shapes prove the identity. */
    if (strcmp(t->model, m->name) != 0 && nlinear == 0)
        return err_set(err, ERR_INPUT, "%s:%d:%d: model: table is for '%s', the "
                       "scenario uses '%s'", t->path, t->model_line, t->model_column,
                       t->model, m->name);
    return 0;
}

/* Fits one op's roofline to its curve (rows at M = x, instance time y). */
static void fit_linop(linop_t *o, double ds_rate)
{
    const curve_t *cv = &o->cv;
    o->fit_bw = lin_bytes(o, cv->x[0]) / cv->y[0];
    double mt = cv->x[cv->n - 1], tt = cv->y[cv->n - 1];
    double r = mt * o->flops_per_m / tt;
    int compute_bound = tt > 1.25 * lin_bytes(o, mt) / o->fit_bw;
    o->fit_rate = compute_bound ? r : fmax(r, ds_rate);
}

static int build_linear(service_t *sv, const caltable_t *t)
{
    pt_t *pts = malloc(sizeof(pt_t) * (size_t)t->nrows);
    if (!pts) return -1;
    for (int i = 0; i < OP_N; i++) {
        int n = 0;
        for (int r = 0; r < t->nrows; r++)
            if (t->rows[r].op == CAL_LINEAR && op_index(t->rows[r].name) == i)
                pts[n++] = (pt_t){t->rows[r].m, t->rows[r].time_s};
        if (n > 0 && curve_build(&sv->op[i].cv, pts, n) != 0) {
            free(pts);
            return -1;
        }
    }
    free(pts);
    return 0;
}

/* Whole-table fit for operators that have no rows. Returns via bw/rate. */
static void fit_global(service_t *sv, const caltable_t *t, double *bw, double *rate)
{
    double bsum = 0, btime = 0, fsum = 0, ftime = 0, fall = 0, tall = 0;
    int any = 0, anyc = 0;
    for (int i = 0; i < OP_N; i++) {
        const linop_t *o = &sv->op[i];
        if (o->cv.n == 0) continue;
        any = 1;
        bsum += lin_bytes(o, o->cv.x[0]);
        btime += o->cv.y[0];
        double mt = o->cv.x[o->cv.n - 1], tt = o->cv.y[o->cv.n - 1];
        fall += mt * o->flops_per_m;
        tall += tt;
        if (tt > 1.25 * lin_bytes(o, mt) / o->fit_bw) {
            anyc = 1;
            fsum += mt * o->flops_per_m;
            ftime += tt;
        }
    }
    if (any) {
        *bw = bsum / btime;
        *rate = anyc ? fsum / ftime : fmax(fall / tall, sv->rate);
        return;
    }
    /* No linear rows: a whole token at its smallest measured context reads
     * every weight once; else the measured ceilings; else the datasheet. */
    if (sv->tok.n > 0) {
        double c = sv->tok.x[0], bytes = sv->layers * sv->attn_bytes_coef * (c + 1);
        for (int i = 0; i < OP_N; i++) bytes += sv->op[i].mult * lin_bytes(&sv->op[i], 1);
        *bw = bytes / (sv->tok.y[0]);
    } else {
        *bw = t->read_gbs > 0 ? t->read_gbs * 1e9 : sv->bw;
    }
    *rate = t->fp16_tflops > 0 ? t->fp16_tflops * 1e12 : sv->rate;
}

static int build_attention(service_t *sv, const caltable_t *t)
{
    attn_table_t *a = &sv->att;
    int n = 0;
    for (int r = 0; r < t->nrows; r++) n += t->rows[r].op == CAL_ATTENTION;
    if (n == 0) return 0;
    pt_t *pts = malloc(sizeof(pt_t) * (size_t)n);
    a->qv = malloc(sizeof(double) * (size_t)n);
    a->cv = calloc((size_t)n, sizeof *a->cv);
    if (!pts || !a->qv || !a->cv) { free(pts); return -1; }
    /* Distinct q values, ascending. */
    for (int r = 0; r < t->nrows; r++) {
        if (t->rows[r].op != CAL_ATTENTION) continue;
        double q = t->rows[r].q;
        int pos = 0;
        while (pos < a->nq && a->qv[pos] < q) pos++;
        if (pos < a->nq && a->qv[pos] == q) continue;
        memmove(a->qv + pos + 1, a->qv + pos, sizeof(double) * (size_t)(a->nq - pos));
        a->qv[pos] = q;
        a->nq++;
    }
    double bsum = 0, btime = 0, best_f = -1, best_t = 0, best_b = 0;
    for (int i = 0; i < a->nq; i++) {
        int m = 0;
        for (int r = 0; r < t->nrows; r++) {
            const caltable_row_t *row = &t->rows[r];
            if (row->op != CAL_ATTENTION || row->q != a->qv[i]) continue;
            double tj = row->time_s / row->batch;
            pts[m++] = (pt_t){row->context, tj};
            double cq = (double)row->context + row->q;
            double f = sv->attn_flops_coef * row->q * (row->context + row->q / 2.0);
            if (i == 0) { bsum += sv->attn_bytes_coef * cq; btime += tj; }
            if (f > best_f) { best_f = f; best_t = tj; best_b = sv->attn_bytes_coef * cq; }
        }
        if (curve_build(&a->cv[i], pts, m) != 0) { free(pts); return -1; }
    }
    free(pts);
    a->fit_bw = bsum / btime;
    double r = best_f / best_t;
    a->fit_rate = best_t > 1.25 * best_b / a->fit_bw ? r : fmax(r, sv->rate);
    return 0;
}

static int build_token(service_t *sv, const caltable_t *t)
{
    int n = 0;
    for (int r = 0; r < t->nrows; r++) n += t->rows[r].op == CAL_TOKEN && t->rows[r].m == 1;
    if (n == 0) return 0;
    pt_t *pts = malloc(sizeof(pt_t) * (size_t)n);
    if (!pts) return -1;
    n = 0;
    for (int r = 0; r < t->nrows; r++)
        if (t->rows[r].op == CAL_TOKEN && t->rows[r].m == 1)
            pts[n++] = (pt_t){t->rows[r].context, t->rows[r].time_s};
    int rc = curve_build(&sv->tok, pts, n);
    free(pts);
    return rc;
}

int service_row_jobs(const caltable_row_t *r, service_job_t *jobs, int cap)
{
    if (r->op != CAL_TOKEN || r->batch < 1 || r->batch > cap) return 0;
    for (int j = 0; j < r->batch; j++)
        jobs[j] = (service_job_t){r->q, r->context, r->nohead};
    return r->batch;
}

/* The step factor from the whole-step rows; needs every operator curve and
 * fit in place. */
static int build_step(service_t *sv, const caltable_t *t)
{
    pt_t *pts = malloc(sizeof(pt_t) * (size_t)t->nrows);
    if (!pts) return -1;
    int n = 0;
    for (int r = 0; r < t->nrows; r++) {
        service_job_t jobs[SERVICE_ROW_JOBS_MAX];
        int b = service_row_jobs(&t->rows[r], jobs, SERVICE_ROW_JOBS_MAX);
        if (b == 0) continue;
        sums_t s = job_sums(jobs, b);
        int in;
        double ops = ops_table(sv, jobs, b, &s, &in);
        if (ops > 0) pts[n++] = (pt_t){s.m, t->rows[r].time_s / ops};
    }
    int rc = n > 0 ? curve_build(&sv->step, pts, n) : 0;
    if (rc == 0) sv->step_rows = n;
    free(pts);
    return rc;
}

static int use_table(service_t *sv, const llm_card_t *m, const char *path,
                     struct infiles *files, err_t *err)
{
    caltable_t t;
    if (caltable_load_in(files, path, &t, err) != 0) return -1;
    int rc = check_table(&t, m, sv->prec, sv, err);
    if (rc == 0 && (build_linear(sv, &t) != 0 || build_token(sv, &t) != 0))
        rc = err_set(err, ERR_RUNTIME, "%s: out of memory", path);
    if (rc == 0) {
        for (int i = 0; i < OP_N; i++)
            if (sv->op[i].cv.n > 0) fit_linop(&sv->op[i], sv->rate);
        double gbw, grate;
        fit_global(sv, &t, &gbw, &grate);
        sv->all_ops = 1;
        for (int i = 0; i < OP_N; i++) {
            if (sv->op[i].cv.n > 0) continue;
            sv->op[i].fit_bw = gbw;
            sv->op[i].fit_rate = grate;
            sv->all_ops = 0;
        }
        sv->att.fit_bw = gbw;
        sv->att.fit_rate = grate;
        if (build_attention(sv, &t) != 0 || build_step(sv, &t) != 0)
            rc = err_set(err, ERR_RUNTIME, "%s: out of memory", path);
    }
    caltable_fini(&t);
    if (rc != 0) return -1;
    sv->have_table = 1;
    sv->source = sv->all_ops && sv->att.nq > 0 ? "table" : "fitted";
    sv->draft_source = sv->tok.n > 0 ? "table" : sv->source;
    return 0;
}

double service_bw_eff(const hw_card_t *hw, int precision)
{
    double e = (unsigned)precision < PREC_COUNT ? hw->bw_eff_prec[precision] : 0;
    return e > 0 ? e : hw->bw_eff;
}

double service_flops_eff(const hw_card_t *hw, int precision)
{
    double e = (unsigned)precision < PREC_COUNT ? hw->flops_eff_prec[precision] : 0;
    return e > 0 ? e : hw->flops_eff;
}

int service_check_hardware(const hw_card_t *hw, int precision, err_t *err)
{
    if (!(hw->mem_bw > 0) || !isfinite(hw->mem_bw))
        return err_set(err, ERR_INPUT, "hardware card '%s': mem_bw must be > 0", hw->name);
    if (!(hw->bw_eff > 0 && hw->bw_eff <= 1) || !(hw->flops_eff > 0 && hw->flops_eff <= 1))
        return err_set(err, ERR_INPUT, "hardware card '%s': bw_eff and flops_eff "
                       "must be in (0, 1]", hw->name);
    int cp = compute_prec(precision);
    if (!(hw->flops[cp] > 0) || !isfinite(hw->flops[cp]))
        return err_set(err, ERR_INPUT, "hardware card '%s': no peak FLOP/s for %s "
                       "(needed by precision %s)", hw->name, precision_name(cp),
                       precision_name(precision));
    return 0;
}

int service_check_parallel(const hw_card_t *hw, const llm_card_t *m, int tp,
                           const char *calibration, err_t *err)
{
    if (tp < 1) return err_set(err, ERR_INPUT, "tensor_parallel must be >= 1 (got %d)", tp);
    if (tp == 1) return 0;
    if (m->heads % tp != 0 || m->kv_heads % tp != 0)
        return err_set(err, ERR_INPUT, "%d does not divide model card '%s' heads (%d) "
                       "and kv_heads (%d): attention is split by heads", tp, m->name,
                       m->heads, m->kv_heads);
    if (!(hw->interconnect_bw > 0) || !isfinite(hw->interconnect_bw))
        return err_set(err, ERR_INPUT, "%d GPUs need an interconnect, and hardware "
                       "card '%s' gives no interconnect_bw", tp, hw->name);
    if (calibration && calibration[0])
        return err_set(err, ERR_INPUT, "%d GPUs: a calibration table measures "
                       "unsplit operators; tensor parallelism uses the datasheet "
                       "roofline only", tp);
    return 0;
}

service_t *service_create(const hw_card_t *hw, const llm_card_t *model,
                          int precision, const char *calibration,
                          double overhead_s, err_t *err)
{
    return service_create_tp(hw, model, precision, calibration, overhead_s, 1, err);
}

service_t *service_create_tp(const hw_card_t *hw, const llm_card_t *model,
                             int precision, const char *calibration,
                             double overhead_s, int tp, err_t *err)
{
    return service_create_in(hw, model, precision, calibration, overhead_s, tp,
                             NULL, err);
}

service_t *service_create_in(const hw_card_t *hw, const llm_card_t *model,
                             int precision, const char *calibration,
                             double overhead_s, int tp, struct infiles *files,
                             err_t *err)
{
    return service_create_wb(hw, model, precision, 0, calibration, overhead_s, tp,
                             files, err);
}

service_t *service_create_serving(const hw_card_t *hw, int engine, int format,
                                  const llm_card_t *model, const char *calibration,
                                  double overhead_s, int tp, struct infiles *files,
                                  err_t *err)
{
    return service_create_serving_kv(hw, engine, format, 0, model, calibration, overhead_s,
                                     tp, files, err);
}

service_t *service_create_serving_kv(const hw_card_t *hw, int engine, int format,
                                     double kv_bytes, const llm_card_t *model,
                                     const char *calibration, double overhead_s, int tp,
                                     struct infiles *files, err_t *err)
{
    hw_card_t eff = *hw;
    service_opts_t o = {.kv_bytes = kv_bytes, .calibration = calibration,
                        .overhead_s = overhead_s, .tp = tp, .files = files};
    if (cards_serving_setup(&eff, engine, format, &o.precision, &o.weight_bytes, err) != 0)
        return NULL;
    return service_create_opts(&eff, model, &o, err);
}

const char *const service_kv_precision_names[3] = {"fp16", "fp8", NULL};

double service_kv_precision_bytes_at(int i)
{
    return i >= 0 && i < 2 ? service_kv_precision_bytes(service_kv_precision_names[i]) : 0;
}

service_t *service_create_wb(const hw_card_t *hw, const llm_card_t *model,
                             int precision, double weight_bytes,
                             const char *calibration, double overhead_s, int tp,
                             struct infiles *files, err_t *err)
{
    service_opts_t o = {.precision = precision, .weight_bytes = weight_bytes,
                        .calibration = calibration, .overhead_s = overhead_s,
                        .tp = tp, .files = files};
    return service_create_opts(hw, model, &o, err);
}

double service_kv_precision_bytes(const char *name)
{
    if (!name) return 0;
    if (strcmp(name, "fp16") == 0) return 2;
    if (strcmp(name, "fp8") == 0) return 1;
    return 0;
}

service_t *service_create_opts(const hw_card_t *hw, const llm_card_t *model,
                               const service_opts_t *o, err_t *err)
{
    int precision = o->precision, tp = o->tp;
    double weight_bytes = o->weight_bytes, overhead_s = o->overhead_s;
    const char *calibration = o->calibration;
    double kv_elem = o->kv_bytes == 0 ? 2 : o->kv_bytes;   /* NaN and < 0 refused below */
    if (precision < 0 || precision >= PREC_COUNT) {
        err_set(err, ERR_INPUT, "service: unknown precision %d", precision);
        return NULL;
    }
    if (!(weight_bytes >= 0) || !isfinite(weight_bytes)) {
        err_set(err, ERR_INPUT, "service: bytes per weight must be finite and >= 0");
        return NULL;
    }
    if (kv_elem != 2 && kv_elem != 1) {
        err_set(err, ERR_INPUT, "service: a K,V element takes 2 bytes (fp16) or 1 "
                "(fp8), not %g", o->kv_bytes);
        return NULL;
    }
    /* A table's attention rows were timed over an fp16 cache; read as an fp8
     * one they would halve the bytes but not the measured time. */
    if (kv_elem != 2 && calibration && calibration[0]) {
        err_set(err, ERR_INPUT, "service: a calibration table measures attention over "
                "an fp16 K,V cache; an fp8 cache uses the datasheet roofline only");
        return NULL;
    }
    /* Likewise its linear rows were timed on the precision's reference
     * layout: a weight format of other bits per weight (q4_K_M, int4-g32)
     * would read its own bytes on the datasheet roofline but take the
     * table's times unchanged, its layout silently dropped. */
    double ref_bytes = precision_weight_bytes(precision);
    if (weight_bytes > 0 && weight_bytes != ref_bytes && calibration && calibration[0]) {
        err_set(err, ERR_INPUT, "service: a calibration table times %s weights at %.4g "
                "bits each; a weight format of %.4g bits uses the datasheet roofline "
                "only", precision_name(precision), ref_bytes * 8, weight_bytes * 8);
        return NULL;
    }
    if (service_check_model(model, err) != 0 ||
        service_check_hardware(hw, precision, err) != 0 ||
        service_check_parallel(hw, model, tp, calibration, err) != 0)
        return NULL;
    if (!(overhead_s >= 0) || !isfinite(overhead_s)) {
        err_set(err, ERR_INPUT, "service: overhead must be a finite time >= 0");
        return NULL;
    }
    service_t *sv = calloc(1, sizeof *sv);
    if (!sv) {
        err_set(err, ERR_RUNTIME, "service: out of memory");
        return NULL;
    }
    int cp = compute_prec(precision);
    sv->prec = precision;
    sv->wbytes = weight_bytes > 0 ? weight_bytes : precision_weight_bytes(precision);
    sv->kv_elem = kv_elem;
    sv->overhead = overhead_s;
    sv->bw = hw->mem_bw * service_bw_eff(hw, precision);
    sv->rate = hw->flops[cp] * service_flops_eff(hw, precision);
    sv->vec_rate = hw->flops[PREC_FP32] > 0 ? hw->flops[PREC_FP32] * hw->flops_eff : sv->rate;
    sv->floor = hw->kernel_floor;
    sv->p = hw->roofline_p;
    sv->peak_bw = hw->mem_bw;
    sv->peak_rate = hw->flops[cp];
    sv->source = sv->draft_source = "datasheet";
    sv->tp = tp;
    sv->ar_bw = hw->interconnect_bw;
    sv->ar_lat = hw->interconnect_latency;
    sv->ar_step = hw->interconnect_step_latency;
    setup_ops(sv, model);
    if (calibration && calibration[0] &&
        use_table(sv, model, calibration, o->files, err) != 0) {
        service_free(sv);
        return NULL;
    }
    lin_memo_fill(sv);
    return sv;
}

void service_free(service_t *sv)
{
    if (!sv) return;
    for (int i = 0; i < OP_N; i++) curve_fini(&sv->op[i].cv);
    if (sv->att.cv)
        for (int i = 0; i < sv->att.nq; i++) curve_fini(&sv->att.cv[i]);
    free(sv->att.cv);
    free(sv->att.qv);
    curve_fini(&sv->tok);
    curve_fini(&sv->step);
    free(sv);
}

/* ---- draft heads ---------------------------------------------------------- */

int service_heads_init(service_heads_t *h, const hw_card_t *hw, int precision,
                       double params, double flops_per_token, double overhead_s,
                       err_t *err)
{
    return service_heads_init_wb(h, hw, precision, 0, params, flops_per_token, overhead_s,
                                 err);
}

int service_heads_serving(service_heads_t *h, const hw_card_t *hw, int engine, int format,
                          double params, double flops_per_token, double overhead_s,
                          err_t *err)
{
    hw_card_t eff = *hw;
    int prec;
    double wb;
    if (cards_serving_setup(&eff, engine, format, &prec, &wb, err) != 0) return -1;
    return service_heads_init_wb(h, &eff, prec, wb, params, flops_per_token, overhead_s,
                                 err);
}

int service_heads_init_wb(service_heads_t *h, const hw_card_t *hw, int precision,
                          double weight_bytes, double params, double flops_per_token,
                          double overhead_s, err_t *err)
{
    if (!(weight_bytes >= 0) || !isfinite(weight_bytes))
        return err_set(err, ERR_INPUT, "draft heads: bytes per weight must be finite "
                       "and >= 0");
    if (!(params > 0) || !isfinite(params) || !(flops_per_token > 0) ||
        !isfinite(flops_per_token))
        return err_set(err, ERR_INPUT, "draft heads: params and flops_per_token must "
                       "both be positive and finite");
    if (service_check_hardware(hw, precision, err) != 0) return -1;
    int cp = compute_prec(precision);
    double wb = weight_bytes > 0 ? weight_bytes : precision_weight_bytes(precision);
    *h = (service_heads_t){.bytes = params * wb,
                           .flops_per_token = flops_per_token,
                           .bw = hw->mem_bw * service_bw_eff(hw, precision),
                           .rate = hw->flops[cp] * service_flops_eff(hw, precision),
                           .peak_bw = hw->mem_bw, .peak_rate = hw->flops[cp],
                           .overhead = overhead_s};
    return 0;
}

double service_heads_time(const service_heads_t *h, int m)
{
    if (m <= 0) return 0;
    return h->overhead + max2(h->bytes / h->bw, m * h->flops_per_token / h->rate);
}

double service_heads_roofline(const service_heads_t *h, int m)
{
    if (m <= 0) return 0;
    return max2(h->bytes / h->peak_bw, m * h->flops_per_token / h->peak_rate);
}
