/* llm — the LLaMA forward pass on the project's kernels (see llm.h). */
#include "llm.h"

#include <errno.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gemv.h"
#include "w4a16.h"

/* One linear layer: n outputs, k inputs. fp16 rows, or W4A16 in the
 * kernels' packed layout with kp ≥ k inputs (zero columns pad K to a
 * multiple of the group). */
typedef struct lin {
    int n, k, kp;
    uint16_t *h;          /* fp16 [n][k], or NULL */
    w4a16_packed_t q;     /* when h is NULL */
} lin_t;

typedef struct layer {
    float *attn_norm, *ffn_norm;   /* [hidden] */
    lin_t qkv, o, gu, down;        /* q, k, v rows fused; gate, up fused */
} layer_t;

struct llm_model {
    llm_config_t c;
    llm_opts_t o;
    int kvd, nqkv;
    uint16_t *embd;       /* fp16 [vocab][hidden]; head.h itself when tied
                             and fp16 (embd_shared) */
    int embd_shared;
    float *out_norm;      /* [hidden] */
    layer_t *layer;       /* [c.layers] */
    lin_t head;
    size_t wbytes;
    char name[32];
};

struct llm_kv {
    int len, cap, layers, kvd;
    uint16_t *k, *v;      /* [layers][cap][kvd] each */
};

/* Scratch grown to the largest batch seen (rows × widths). */
struct llm_run {
    gemv_ctx_t *ctx;
    size_t rows;          /* rows the buffers below hold */
    size_t wide;          /* the widest row of yf / yh (elements) */
    float *h, *yf;        /* residual [rows][hidden]; a layer's fp32 output */
    uint16_t *xh, *xp, *yh, *ah, *qh;
    float *cs;            /* RoPE cos/sin per row: [rows][head_dim] */
    float *rowf;          /* one fp32 row [wide]: a norm's output before fp16 */
    int *pos;             /* [rows] */
    int *rspan;           /* [rows]: the span each row belongs to */
};

/* ---- loading ------------------------------------------------------------ */

static int cfg_u32(const gguf_t *g, const char *key, int lo, int *out, err_t *err)
{
    uint32_t v;
    if (gguf_get_u32(g, key, &v, err) != 0) return -1;
    if (v < (uint32_t)lo || v > 1u << 24)
        return err_set(err, ERR_INPUT, "%s: %s = %u is out of range", gguf_path(g), key, v);
    *out = (int)v;
    return 0;
}

static int read_config(const gguf_t *g, llm_config_t *c, err_t *err)
{
    const char *arch;
    size_t alen;
    if (gguf_get_str(g, "general.architecture", &arch, &alen, err) != 0) return -1;
    char b[80];
    if (alen != 5 || memcmp(arch, "llama", 5) != 0)
        return err_set(err, ERR_INPUT, "%s: architecture '%s' is not supported (only llama)",
                       gguf_path(g), gguf_shown((const unsigned char *)arch, alen, b, sizeof b));
    memset(c, 0, sizeof *c);
    if (cfg_u32(g, "llama.block_count", 1, &c->file_layers, err) ||
        cfg_u32(g, "llama.embedding_length", 1, &c->hidden, err) ||
        cfg_u32(g, "llama.attention.head_count", 1, &c->heads, err) ||
        cfg_u32(g, "llama.feed_forward_length", 1, &c->ffn, err) ||
        cfg_u32(g, "llama.context_length", 1, &c->ctx_train, err))
        return -1;
    c->kv_heads = c->heads;
    if (gguf_has(g, "llama.attention.head_count_kv") &&
        cfg_u32(g, "llama.attention.head_count_kv", 1, &c->kv_heads, err))
        return -1;
    c->rope_base = 10000.0f;
    if (gguf_has(g, "llama.rope.freq_base") &&
        gguf_get_f32(g, "llama.rope.freq_base", &c->rope_base, err))
        return -1;
    if (gguf_get_f32(g, "llama.attention.layer_norm_rms_epsilon", &c->eps, err)) return -1;
    if (c->hidden % c->heads || c->heads % c->kv_heads || (c->hidden / c->heads) % 2)
        return err_set(err, ERR_INPUT, "%s: %d heads (%d key/value heads) do not divide "
                       "hidden %d into even head widths", gguf_path(g), c->heads, c->kv_heads,
                       c->hidden);
    c->head_dim = c->hidden / c->heads;
    if (gguf_has(g, "llama.rope.dimension_count")) {
        int rd = 0;
        if (cfg_u32(g, "llama.rope.dimension_count", 1, &rd, err)) return -1;
        if (rd != c->head_dim)
            return err_set(err, ERR_INPUT, "%s: llama.rope.dimension_count = %d; only RoPE "
                           "over the whole head (%d) is supported", gguf_path(g), rd,
                           c->head_dim);
    }
    if (!(c->rope_base > 0.0f) || !(c->eps > 0.0f) || !isfinite(c->rope_base))
        return err_set(err, ERR_INPUT, "%s: rope.freq_base %g and rms epsilon %g must be "
                       "positive", gguf_path(g), c->rope_base, c->eps);
    return 0;
}

/* The tensor `name` with the shape {k, n} (or {k} when n is 0); the
 * vocabulary comes from the embedding's rows when *vocab is 0. */
static const gguf_tensor_t *tensor_of(const gguf_t *g, const char *name, int k, int n,
                                      err_t *err)
{
    const gguf_tensor_t *t = gguf_tensor(g, name);
    if (!t) {
        err_set(err, ERR_INPUT, "%s: tensor '%s' is missing", gguf_path(g), name);
        return NULL;
    }
    int ndim = n ? 2 : 1;
    if (t->ndim != ndim || t->ne[0] != (uint64_t)k || (n && t->ne[1] != (uint64_t)n)) {
        char want[48];
        if (n) snprintf(want, sizeof want, "%d x %d", k, n);
        else snprintf(want, sizeof want, "%d", k);
        err_set(err, ERR_INPUT, "%s: tensor '%s' has shape %llu x %llu (%d dims); the "
                "metadata gives %s", gguf_path(g), name, (unsigned long long)t->ne[0],
                (unsigned long long)(t->ndim > 1 ? t->ne[1] : 1), t->ndim, want);
        return NULL;
    }
    if (!gguf_type_dequant_ok(t->type)) {
        err_set(err, ERR_INPUT, "%s: tensor '%s' is of type %s, which this reader cannot "
                "dequantise", gguf_path(g), name, gguf_type_name(t->type));
        return NULL;
    }
    return t;
}

/* Prefixes the file's name to the message gguf_dequant left in err (it
 * names only the tensor). */
static int file_err(const gguf_t *g, err_t *err)
{
    if (!err) return -1;
    char msg[ERR_MSG_MAX];
    snprintf(msg, sizeof msg, "%s", err->msg);
    return err_set(err, ERR_INPUT, "%s: %s", gguf_path(g), msg);
}

/* Rows [r0, r1) of t dequantised into out as fp16 [r1 − r0][k] (fp32
 * rounded to nearest even, as numpy's astype does). */
static int rows_f16(const gguf_t *g, const gguf_tensor_t *t, int r0, int r1, uint16_t *out,
                    float *buf, err_t *err)
{
    uint64_t k = t->ne[0];
    for (int r = r0; r < r1; r++) {
        if (gguf_dequant(t, (uint64_t)r * k, k, buf, err) != 0) return file_err(g, err);
        for (uint64_t i = 0; i < k; i++) out[(size_t)(r - r0) * k + i] = f32_to_fp16(buf[i]);
    }
    return 0;
}

static float *vec_f32(const gguf_t *g, const char *name, int d, err_t *err)
{
    const gguf_tensor_t *t = tensor_of(g, name, d, 0, err);
    if (!t) return NULL;
    float *v = malloc((size_t)d * sizeof *v);
    if (!v) {
        err_set(err, ERR_RUNTIME, "%s: out of memory", gguf_path(g));
        return NULL;
    }
    if (gguf_dequant(t, 0, (uint64_t)d, v, err) != 0) {
        file_err(g, err);
        free(v);
        return NULL;
    }
    return v;
}

static void lin_fini(lin_t *l)
{
    if (l->h) free(l->h);
    else w4a16_packed_fini(&l->q);
    memset(l, 0, sizeof *l);
}

static size_t lin_bytes(const lin_t *l)
{
    if (l->h) return (size_t)l->n * (size_t)l->k * sizeof(uint16_t);
    return (size_t)w4a16_bytes(l->n, l->kp, l->q.group);
}

/* One group of g weights quantised as w4a16_quantize_fp16 does
 * (asymmetric: kernels/w4a16.c, quantize_group), the same operations in the
 * same order, into q[0..g), *scale and *zero; only lrintf of w/s is done by
 * adding and subtracting 1.5·2^23 (round to nearest even, as lrintf in the
 * default rounding mode, for |w/s| < 2^22: always, for finite weights,
 * since |w| ≤ 15·scale; anything else still goes to lrintf). */
static void quant_group_asym(const float *w, int g, uint8_t *q, uint16_t *scale16,
                             uint8_t *zero8)
{
    float lo = 0.0f, hi = 0.0f;
    for (int i = 0; i < g; i++) {
        lo = fminf(lo, w[i]);
        hi = fmaxf(hi, w[i]);
    }
    float scale = (hi - lo) / 15.0f;
    int zero = 0;
    if (scale > 0.0f) {
        float s16 = fp16_to_f32(f32_to_fp16(scale));
        zero = (int)lrintf(-lo / s16);
        zero = zero < 0 ? 0 : zero > 15 ? 15 : zero;
    }
    uint16_t s16 = f32_to_fp16(scale);
    float s = fp16_to_f32(s16);
    *scale16 = s16;
    *zero8 = (uint8_t)zero;
    for (int i = 0; i < g; i++) {
        long v = zero;
        if (s > 0.0f) {
            float x = w[i] / s;
            v = (fabsf(x) < 4194304.0f ? (long)((x + 12582912.0f) - 12582912.0f) : lrintf(x)) + zero;
        }
        q[i] = (uint8_t)(v < 0 ? 0 : v > 15 ? 15 : v);
    }
}

/* fp16 [n][k] → W4A16 with K padded to kp (zero columns), the packed
 * layout (and the int8 kernel's interleaved copy): the bytes that
 * w4a16_quantize_fp16 (asymmetric) then w4a16_repack give, made row by row
 * without the reference format in between (the reference's per-nibble
 * accessors and libm rounding made loading the W4A16 model 3 s of a
 * `llm bench` run; now a few tenths). */
static int lin_quantize(lin_t *l, const uint16_t *h, int int8)
{
    int G = W4A16_GROUP_DEFAULT, groups = l->kp / G;
    float *row = malloc((size_t)l->kp * sizeof *row);
    uint8_t *qv = malloc((size_t)l->kp);
    if (!row || !qv || w4a16_packed_init(&l->q, l->n, l->kp, G) != 0) {
        free(row);
        free(qv);
        return -1;
    }
    for (int r = 0; r < l->n; r++) {
        const uint16_t *hr = h + (size_t)r * l->k;
        for (int c = 0; c < l->k; c++) row[c] = fp16_to_f32(hr[c]);
        for (int c = l->k; c < l->kp; c++) row[c] = 0.0f;
        size_t gi = (size_t)r * (size_t)groups;
        for (int g = 0; g < groups; g++)
            quant_group_asym(row + (size_t)g * G, G, qv + (size_t)g * G, &l->q.scales[gi + g],
                             &l->q.zeros[gi + g]);
        uint8_t *out = l->q.q + (size_t)r * (size_t)l->kp / 2;
        for (int b = 0; b < l->kp / 32; b++)
            for (int j = 0; j < 16; j++)
                out[16 * b + j] = (uint8_t)(qv[32 * b + j] | qv[32 * b + 16 + j] << 4);
    }
    free(row);
    free(qv);
    return int8 && w4a16_packed_interleave(&l->q) != 0 ? -1 : 0;
}

/* Stacks the tensors names[0..nt) (each {k, rows_i}) into one linear
 * layer of Σ rows_i outputs. */
static int lin_load(const gguf_t *g, const llm_model_t *m, const char *const *names,
                    const int *rows, int nt, int k, lin_t *l, err_t *err)
{
    int n = 0;
    const gguf_tensor_t *t[3];
    for (int i = 0; i < nt; i++) {
        if (!(t[i] = tensor_of(g, names[i], k, rows[i], err))) return -1;
        n += rows[i];
    }
    uint16_t *h = malloc((size_t)n * (size_t)k * sizeof *h);
    float *buf = malloc((size_t)k * sizeof *buf);
    if (!h || !buf) {
        free(h);
        free(buf);
        return err_set(err, ERR_RUNTIME, "%s: out of memory", gguf_path(g));
    }
    for (int i = 0, r0 = 0; i < nt; r0 += rows[i], i++)
        if (rows_f16(g, t[i], 0, rows[i], h + (size_t)r0 * k, buf, err) != 0) {
            free(h);
            free(buf);
            return -1;
        }
    free(buf);
    l->n = n;
    l->k = k;
    l->kp = k;
    if (m->o.weights == LLM_FP16) {
        l->h = h;
        return 0;
    }
    l->kp = (k + W4A16_GROUP_DEFAULT - 1) / W4A16_GROUP_DEFAULT * W4A16_GROUP_DEFAULT;
    int rc = lin_quantize(l, h, m->o.w4_kernel == GEMV_W4_INT8);
    free(h);
    return rc ? err_set(err, ERR_RUNTIME, "%s: out of memory quantising '%s'", gguf_path(g),
                        names[0])
              : 0;
}

static int layer_load(const gguf_t *g, llm_model_t *m, int L, err_t *err)
{
    const llm_config_t *c = &m->c;
    layer_t *ly = &m->layer[L];
    char a[5][64];
    static const char *const sfx[5] = {"attn_q", "attn_k", "attn_v", "ffn_gate", "ffn_up"};
    for (int i = 0; i < 5; i++) snprintf(a[i], sizeof a[i], "blk.%d.%s.weight", L, sfx[i]);
    const char *qkv[3] = {a[0], a[1], a[2]}, *gu[2] = {a[3], a[4]};
    int qkv_rows[3] = {c->hidden, m->kvd, m->kvd}, gu_rows[2] = {c->ffn, c->ffn};
    char o[64], down[64], an[64], fn[64];
    snprintf(o, sizeof o, "blk.%d.attn_output.weight", L);
    snprintf(down, sizeof down, "blk.%d.ffn_down.weight", L);
    snprintf(an, sizeof an, "blk.%d.attn_norm.weight", L);
    snprintf(fn, sizeof fn, "blk.%d.ffn_norm.weight", L);
    const char *on[1] = {o}, *dn[1] = {down};
    int orows[1] = {c->hidden};
    if (!(ly->attn_norm = vec_f32(g, an, c->hidden, err)) ||
        !(ly->ffn_norm = vec_f32(g, fn, c->hidden, err)) ||
        lin_load(g, m, qkv, qkv_rows, 3, c->hidden, &ly->qkv, err) ||
        lin_load(g, m, on, orows, 1, c->hidden, &ly->o, err) ||
        lin_load(g, m, gu, gu_rows, 2, c->hidden, &ly->gu, err) ||
        lin_load(g, m, dn, orows, 1, c->ffn, &ly->down, err))
        return -1;
    m->wbytes += lin_bytes(&ly->qkv) + lin_bytes(&ly->o) + lin_bytes(&ly->gu) +
                 lin_bytes(&ly->down) + 2 * (size_t)c->hidden * sizeof(float);
    return 0;
}

/* The embedding as fp16 rows, and the head: output.weight, or the
 * embedding again when the file ties them (no output.weight). */
static int embd_head_load(const gguf_t *g, llm_model_t *m, err_t *err)
{
    const gguf_tensor_t *e = gguf_tensor(g, "token_embd.weight");
    if (!e) return err_set(err, ERR_INPUT, "%s: tensor 'token_embd.weight' is missing",
                           gguf_path(g));
    if (e->ndim != 2 || e->ne[1] < 1 || e->ne[1] > (1u << 24))
        return err_set(err, ERR_INPUT, "%s: tensor 'token_embd.weight' has %d dims and %llu "
                       "rows", gguf_path(g), e->ndim,
                       (unsigned long long)(e->ndim > 1 ? e->ne[1] : 0));
    m->c.vocab = (int)e->ne[1];
    if (gguf_has(g, "llama.vocab_size")) {
        int v = 0;
        if (cfg_u32(g, "llama.vocab_size", 1, &v, err)) return -1;
        if (v != m->c.vocab)
            return err_set(err, ERR_INPUT, "%s: llama.vocab_size = %d but token_embd.weight "
                           "has %d rows", gguf_path(g), v, m->c.vocab);
    }
    if (!tensor_of(g, "token_embd.weight", m->c.hidden, m->c.vocab, err)) return -1;
    const char *hn[1] = {gguf_tensor(g, "output.weight") ? "output.weight" : "token_embd.weight"};
    int rows[1] = {m->c.vocab};
    if (lin_load(g, m, hn, rows, 1, m->c.hidden, &m->head, err) != 0) return -1;
    m->wbytes += lin_bytes(&m->head);
    if (m->head.h && !gguf_tensor(g, "output.weight")) {
        m->embd = m->head.h;   /* the same fp16 rows: keep one copy */
        m->embd_shared = 1;
        return 0;
    }
    size_t n = (size_t)m->c.vocab * (size_t)m->c.hidden;
    float *buf = malloc((size_t)m->c.hidden * sizeof *buf);
    m->embd = malloc(n * sizeof *m->embd);
    if (!m->embd || !buf) {
        free(buf);
        return err_set(err, ERR_RUNTIME, "%s: out of memory", gguf_path(g));
    }
    int rc = rows_f16(g, gguf_tensor(g, "token_embd.weight"), 0, m->c.vocab, m->embd, buf, err);
    free(buf);
    return rc;
}

void llm_free(llm_model_t *m)
{
    if (!m) return;
    for (int L = 0; m->layer && L < m->c.layers; L++) {
        layer_t *ly = &m->layer[L];
        free(ly->attn_norm);
        free(ly->ffn_norm);
        lin_fini(&ly->qkv);
        lin_fini(&ly->o);
        lin_fini(&ly->gu);
        lin_fini(&ly->down);
    }
    free(m->layer);
    if (!m->embd_shared) free(m->embd);
    lin_fini(&m->head);
    free(m->out_norm);
    free(m);
}

static int opts_check(const gguf_t *g, const llm_opts_t *o, const llm_config_t *c, err_t *err)
{
    if (o->weights != LLM_FP16 && o->weights != LLM_W4A16)
        return err_set(err, ERR_INPUT, "%s: unknown weight precision %d", gguf_path(g),
                       o->weights);
    if (o->layers < 0 || o->layers > c->file_layers)
        return err_set(err, ERR_INPUT, "%s: %d layers asked for; the model has %d",
                       gguf_path(g), o->layers, c->file_layers);
    if (o->weights == LLM_W4A16 && o->w4_kernel != GEMV_W4_EXACT && o->w4_kernel != GEMV_W4_INT8)
        return err_set(err, ERR_INPUT, "%s: unknown W4A16 kernel %d", gguf_path(g),
                       o->w4_kernel);
    return 0;
}

static void name_of(llm_model_t *m)
{
    const char *w = m->o.weights == LLM_FP16 ? "fp16"
                    : m->o.w4_kernel == GEMV_W4_INT8 ? "w4a16-int8" : "w4a16";
    if (m->c.layers < m->c.file_layers) snprintf(m->name, sizeof m->name, "%s:%d", w, m->c.layers);
    else snprintf(m->name, sizeof m->name, "%s", w);
}

llm_model_t *llm_load(const gguf_t *g, const llm_opts_t *o, err_t *err)
{
    llm_model_t *m = calloc(1, sizeof *m);
    if (!m) {
        err_set(err, ERR_RUNTIME, "%s: out of memory", gguf_path(g));
        return NULL;
    }
    if (read_config(g, &m->c, err) != 0 || opts_check(g, o, &m->c, err) != 0) goto fail;
    m->o = *o;
    m->c.layers = o->layers ? o->layers : m->c.file_layers;
    m->kvd = m->c.kv_heads * m->c.head_dim;
    m->nqkv = m->c.hidden + 2 * m->kvd;
    name_of(m);
    if (embd_head_load(g, m, err) != 0 ||
        !(m->out_norm = vec_f32(g, "output_norm.weight", m->c.hidden, err)))
        goto fail;
    if (!(m->layer = calloc((size_t)m->c.layers, sizeof *m->layer))) {
        err_set(err, ERR_RUNTIME, "%s: out of memory", gguf_path(g));
        goto fail;
    }
    for (int L = 0; L < m->c.layers; L++)
        if (layer_load(g, m, L, err) != 0) goto fail;
    m->wbytes += (size_t)m->c.hidden * sizeof(float);
    return m;
fail:
    llm_free(m);
    return NULL;
}

int llm_opts_parse(const char *spec, llm_opts_t *o, err_t *err)
{
    memset(o, 0, sizeof *o);
    const char *colon = strchr(spec, ':');
    size_t len = colon ? (size_t)(colon - spec) : strlen(spec);
    if (len == 4 && !strncmp(spec, "fp16", 4)) o->weights = LLM_FP16;
    else if (len == 5 && !strncmp(spec, "w4a16", 5)) o->weights = LLM_W4A16;
    else if (len == 10 && !strncmp(spec, "w4a16-int8", 10)) {
        o->weights = LLM_W4A16;
        o->w4_kernel = GEMV_W4_INT8;
    } else {
        return err_set(err, ERR_INPUT, "model '%s': expected fp16, w4a16 or w4a16-int8, "
                       "optionally with ':LAYERS'", spec);
    }
    if (colon) {
        char *end;
        errno = 0;
        /* Plain digits only: strtol would take ":+1" and ": 1". */
        long L = colon[1] >= '0' && colon[1] <= '9' ? strtol(colon + 1, &end, 10) : 0;
        if (L == 0) end = (char *)colon;
        if (!colon[1] || *end || errno || L < 1 || L > 100000)
            return err_set(err, ERR_INPUT, "model '%s': ':LAYERS' must be a positive integer",
                           spec);
        o->layers = (int)L;
    }
    return 0;
}

int llm_check_vocab(const llm_model_t *m, const gguf_t *g, int tok_vocab, err_t *err)
{
    if (tok_vocab == m->c.vocab) return 0;
    return err_set(err, ERR_INPUT, "%s: the tokenizer has %d tokens but the model's vocabulary "
                   "(token_embd.weight) has %d", gguf_path(g), tok_vocab, m->c.vocab);
}

const llm_config_t *llm_config(const llm_model_t *m) { return &m->c; }
const llm_opts_t *llm_opts(const llm_model_t *m) { return &m->o; }
size_t llm_weight_bytes(const llm_model_t *m) { return m->wbytes; }
const char *llm_name(const llm_model_t *m) { return m->name; }

/* ---- KV caches ------------------------------------------------------------ */

llm_kv_t *llm_kv_create(const llm_model_t *m, int capacity, err_t *err)
{
    llm_kv_t *kv = calloc(1, sizeof *kv);
    if (!kv || capacity < 1) {
        free(kv);
        err_set(err, capacity < 1 ? ERR_INPUT : ERR_RUNTIME,
                capacity < 1 ? "llm: a KV cache needs room for at least one position"
                             : "llm: out of memory for a KV cache");
        return NULL;
    }
    kv->cap = capacity;
    kv->layers = m->c.layers;
    kv->kvd = m->kvd;
    size_t n = (size_t)kv->layers * (size_t)capacity * (size_t)kv->kvd;
    kv->k = malloc(n * sizeof *kv->k);
    kv->v = malloc(n * sizeof *kv->v);
    if (!kv->k || !kv->v) {
        llm_kv_free(kv);
        err_set(err, ERR_RUNTIME, "llm: out of memory for a KV cache of %d positions",
                capacity);
        return NULL;
    }
    return kv;
}

void llm_kv_free(llm_kv_t *kv)
{
    if (!kv) return;
    free(kv->k);
    free(kv->v);
    free(kv);
}

int llm_kv_len(const llm_kv_t *kv) { return kv->len; }
int llm_kv_capacity(const llm_kv_t *kv) { return kv->cap; }

void llm_kv_truncate(llm_kv_t *kv, int len)
{
    if (len >= 0 && len < kv->len) kv->len = len;
}

/* ---- the forward pass ------------------------------------------------------ */

llm_run_t *llm_run_create(int threads, err_t *err)
{
    llm_run_t *r = calloc(1, sizeof *r);
    if (!r) {
        err_set(err, ERR_RUNTIME, "llm: out of memory");
        return NULL;
    }
    if (!(r->ctx = gemv_ctx_create(threads, GEMV_ISA_AUTO, err))) {
        free(r);
        return NULL;
    }
    return r;
}

static void run_buffers_free(llm_run_t *r)
{
    free(r->h);
    free(r->yf);
    free(r->xh);
    free(r->xp);
    free(r->yh);
    free(r->ah);
    free(r->qh);
    free(r->cs);
    free(r->rowf);
    free(r->pos);
    free(r->rspan);
    r->h = r->yf = r->cs = r->rowf = NULL;
    r->xh = r->xp = r->yh = r->ah = r->qh = NULL;
    r->pos = r->rspan = NULL;
    r->rows = r->wide = 0;
}

void llm_run_free(llm_run_t *r)
{
    if (!r) return;
    run_buffers_free(r);
    gemv_ctx_free(r->ctx);
    free(r);
}

/* The widest row any buffer holds for model m: its layers' outputs and
 * padded inputs, and the head's. */
static size_t widest(const llm_model_t *m)
{
    size_t w = (size_t)m->nqkv;
    size_t cand[4] = {2 * (size_t)m->c.ffn, (size_t)m->c.vocab, (size_t)m->head.kp,
                      (size_t)m->layer[0].down.kp};
    for (int i = 0; i < 4; i++)
        if (cand[i] > w) w = cand[i];
    return w;
}

static int run_reserve(llm_run_t *r, const llm_model_t *m, size_t rows)
{
    size_t wide = widest(m), d = (size_t)m->c.hidden;
    if (rows <= r->rows && wide <= r->wide && d <= r->wide) return 0;
    run_buffers_free(r);
    if (d > wide) wide = d;
    r->h = malloc(rows * d * sizeof *r->h);
    r->yf = malloc(rows * wide * sizeof *r->yf);
    r->xh = malloc(rows * wide * sizeof *r->xh);
    r->xp = malloc(rows * wide * sizeof *r->xp);
    r->yh = malloc(rows * wide * sizeof *r->yh);
    r->ah = malloc(rows * d * sizeof *r->ah);
    r->qh = malloc(rows * d * sizeof *r->qh);
    r->cs = malloc(rows * (size_t)m->c.head_dim * sizeof *r->cs);
    r->rowf = malloc(wide * sizeof *r->rowf);
    r->pos = malloc(rows * sizeof *r->pos);
    r->rspan = malloc(rows * sizeof *r->rspan);
    if (!r->h || !r->yf || !r->xh || !r->xp || !r->yh || !r->ah || !r->qh || !r->cs ||
        !r->rowf || !r->pos || !r->rspan) {
        run_buffers_free(r);
        return -1;
    }
    r->rows = rows;
    r->wide = wide;
    return 0;
}

/* y[m][n] (fp32) = x[m][k] (fp16) · Wᵀ. W4A16 layers read x padded with
 * zeros to kp columns and write fp16, converted here. */
static int lin_run(llm_run_t *r, const lin_t *l, const uint16_t *x, int m, float *y)
{
    if (l->h) return gemv_f16_f32(r->ctx, l->h, l->n, l->k, x, m, y);
    const uint16_t *xin = x;
    if (l->kp != l->k) {
        for (int i = 0; i < m; i++) {
            uint16_t *row = r->xp + (size_t)i * l->kp;
            memcpy(row, x + (size_t)i * l->k, (size_t)l->k * sizeof *row);
            memset(row + l->k, 0, (size_t)(l->kp - l->k) * sizeof *row);
        }
        xin = r->xp;
    }
    if (gemv_w4a16(r->ctx, &l->q, xin, m, r->yh) != 0) return -1;
    gemv_h2f(r->ctx, r->yh, y, (size_t)m * (size_t)l->n);
    return 0;
}

/* xh[i] = fp16(RMSNorm(h[i]) · w) for rows [0, m): the sum of squares in
 * double, as llama.cpp's. Each row in fp32 into r->rowf, then to fp16 with
 * the kernels' SIMD conversion (gemv_f2h: the bits of f32_to_fp16, 10× the
 * speed; the fp16 conversions of norms, SwiGLU and q/k/v were a sixth of
 * an M = 8 step at 1 thread). */
static void norm_rows(llm_run_t *r, const float *h, const float *w, int d, float eps, int m,
                      uint16_t *xh)
{
    for (int i = 0; i < m; i++) {
        const float *hi = h + (size_t)i * d;
        double ss = 0.0;
        for (int e = 0; e < d; e++) ss += (double)hi[e] * hi[e];
        float inv = (float)(1.0 / sqrt(ss / d + (double)eps));
        for (int e = 0; e < d; e++) r->rowf[e] = hi[e] * inv * w[e];
        gemv_f2h(r->ctx, r->rowf, xh + (size_t)i * d, (size_t)d);
    }
}

/* cos and sin of each row's rotation angles, pos·base^(−2j/head_dim) for
 * j < head_dim/2: cs[i][2j] = cos, cs[i][2j+1] = sin. */
static void rope_table(const llm_config_t *c, const int *pos, int m, float *cs)
{
    int hd = c->head_dim;
    for (int i = 0; i < m; i++)
        for (int j = 0; j < hd / 2; j++) {
            double th = (double)pos[i] * pow((double)c->rope_base, -2.0 * j / hd);
            cs[(size_t)i * hd + 2 * j] = (float)cos(th);
            cs[(size_t)i * hd + 2 * j + 1] = (float)sin(th);
        }
}

/* Rotates consecutive pairs (x[2j], x[2j+1]) of each of nh heads: the GGUF
 * llama layout, whose q and k rows the converter permuted for this
 * ("normal") RoPE. */
static void rope_apply(float *x, int nh, int hd, const float *cs)
{
    for (int h = 0; h < nh; h++) {
        float *v = x + (size_t)h * hd;
        for (int j = 0; j < hd / 2; j++) {
            float c = cs[2 * j], s = cs[2 * j + 1], a = v[2 * j], b = v[2 * j + 1];
            v[2 * j] = a * c - b * s;
            v[2 * j + 1] = a * s + b * c;
        }
    }
}

/* The attention of every row of the batch at layer L, all spans in one
 * parallel call (one call per span, as attn_run is, handed work to the
 * threads 240 times a step at M = 8 and a thread count of 2 spent more time
 * handing off than attending): chunk ci of nch takes a contiguous run of the
 * (row, query head) pairs. Each pair computes what attn_run (kernels/attn.c)
 * computes for it, in the same operations: its query over positions
 * 0 .. pos of its own sequence with the fused head kernel, or where the path
 * has none the composition below (attn.c's, verbatim). */
struct attn_job {
    llm_run_t *r;
    const llm_model_t *m;
    const llm_span_t *sp;
    int L, rows;
    atomic_int failed;
};

static void attn_chunk(void *arg, int ci, int nch)
{
    struct attn_job *j = arg;
    llm_run_t *r = j->r;
    const llm_config_t *c = &j->m->c;
    int d = c->hidden, hd = c->head_dim, kvd = j->m->kvd, per_kv = c->heads / c->kv_heads;
    int npairs = j->rows * c->heads;
    int p0 = (int)((long long)npairs * ci / nch), p1 = (int)((long long)npairs * (ci + 1) / nch);
    if (p0 >= p1) return;
    int npos = 0;
    for (int row = p0 / c->heads; row <= (p1 - 1) / c->heads; row++)
        if (r->pos[row] + 1 > npos) npos = r->pos[row] + 1;
    float *buf = malloc(((size_t)npos + 2 * (size_t)hd) * sizeof *buf);
    if (!buf) {
        atomic_store(&j->failed, 1);
        return;
    }
    float *qf = buf, *acc = buf + hd, *sc = buf + 2 * hd;
    float scale = 1.0f / sqrtf((float)hd);
    size_t stride = (size_t)kvd;
    for (int pair = p0; pair < p1; pair++) {
        int row = pair / c->heads, h = pair % c->heads, last = r->pos[row];
        const llm_kv_t *kv = j->sp[r->rspan[row]].kv;
        size_t base = (size_t)j->L * kv->cap * kvd + (size_t)(h / per_kv) * hd;
        const uint16_t *kc = kv->k + base, *vc = kv->v + base;
        size_t off = (size_t)row * d + (size_t)h * hd;
        gemv_h2f(r->ctx, r->qh + off, qf, (size_t)hd);
        if (gemv_attn_head(r->ctx, qf, kc, vc, stride, last + 1, hd, scale, sc, acc) == 0) {
            gemv_f2h(r->ctx, acc, r->ah + off, (size_t)hd);
            continue;
        }
        float mx = -INFINITY;
        for (int p = 0; p <= last; p++) {
            sc[p] = gemv_dot_f16(r->ctx, qf, kc + (size_t)p * stride, hd) * scale;
            mx = fmaxf(mx, sc[p]);
        }
        float sum = 0.0f;
        for (int p = 0; p <= last; p++) {
            sc[p] = expf(sc[p] - mx);
            sum += sc[p];
        }
        for (int e = 0; e < hd; e++) acc[e] = 0.0f;
        for (int p = 0; p <= last; p++)
            gemv_axpy_f16(r->ctx, sc[p], vc + (size_t)p * stride, acc, hd);
        for (int e = 0; e < hd; e++) r->ah[off + (size_t)e] = f32_to_fp16(acc[e] / sum);
    }
    free(buf);
}

/* RoPE on the qkv rows in yf, then each span's keys and values into its
 * cache at layer L, then every query's attention over its sequence into ah. */
static int attention(llm_run_t *r, const llm_model_t *m, int L, const llm_span_t *sp, int ns)
{
    const llm_config_t *c = &m->c;
    int d = c->hidden, kvd = m->kvd, hd = c->head_dim, row = 0;
    for (int s = 0; s < ns; s++) {
        llm_kv_t *kv = sp[s].kv;
        size_t base = (size_t)L * kv->cap * kvd;
        uint16_t *kc = kv->k + base, *vc = kv->v + base;
        for (int i = 0; i < sp[s].n; i++, row++) {
            float *y = r->yf + (size_t)row * m->nqkv;
            const float *cs = r->cs + (size_t)row * hd;
            rope_apply(y, c->heads, hd, cs);
            rope_apply(y + d, c->kv_heads, hd, cs);
            size_t at = (size_t)(kv->len + i) * kvd;
            gemv_f2h(r->ctx, y, r->qh + (size_t)row * d, (size_t)d);
            gemv_f2h(r->ctx, y + d, kc + at, (size_t)kvd);
            gemv_f2h(r->ctx, y + d + kvd, vc + at, (size_t)kvd);
        }
    }
    struct attn_job j = {r, m, sp, L, row, 0};
    int nch = 2 * gemv_ctx_threads(r->ctx);
    if (nch > row * c->heads) nch = row * c->heads;
    gemv_parallel(r->ctx, attn_chunk, &j, nch);
    return atomic_load(&j.failed) ? -1 : 0;
}

static void residual(float *h, const float *y, size_t n)
{
    for (size_t i = 0; i < n; i++) h[i] += y[i];
}

/* SwiGLU: silu(gate)·up of the fused gate_up rows into fp16 (computed in
 * place over the gate, then converted). */
static void swiglu(const gemv_ctx_t *ctx, float *gu, int f, int m, uint16_t *out)
{
    for (int i = 0; i < m; i++) {
        float *g = gu + (size_t)i * 2 * f;
        const float *u = g + f;
        for (int e = 0; e < f; e++) g[e] = g[e] / (1.0f + expf(-g[e])) * u[e];
        gemv_f2h(ctx, g, out + (size_t)i * f, (size_t)f);
    }
}

static int layer_run(llm_run_t *r, const llm_model_t *m, int L, const llm_span_t *sp, int ns,
                     int rows)
{
    const llm_config_t *c = &m->c;
    const layer_t *ly = &m->layer[L];
    size_t hd = (size_t)rows * c->hidden;
    norm_rows(r, r->h, ly->attn_norm, c->hidden, c->eps, rows, r->xh);
    if (lin_run(r, &ly->qkv, r->xh, rows, r->yf) != 0 || attention(r, m, L, sp, ns) != 0 ||
        lin_run(r, &ly->o, r->ah, rows, r->yf) != 0)
        return -1;
    residual(r->h, r->yf, hd);
    norm_rows(r, r->h, ly->ffn_norm, c->hidden, c->eps, rows, r->xh);
    if (lin_run(r, &ly->gu, r->xh, rows, r->yf) != 0) return -1;
    swiglu(r->ctx, r->yf, c->ffn, rows, r->xh);
    if (lin_run(r, &ly->down, r->xh, rows, r->yf) != 0) return -1;
    residual(r->h, r->yf, hd);
    return 0;
}

/* Checks the spans and lays out the rows: embeddings into h, positions. */
static int spans_begin(llm_run_t *r, const llm_model_t *m, const llm_span_t *sp, int ns,
                       int *rows, int *out_rows, err_t *err)
{
    size_t total = 0, nout = 0;
    for (int s = 0; s < ns; s++) {
        if (sp[s].n < 1 || sp[s].logits_from < 0 || sp[s].logits_from > sp[s].n)
            return err_set(err, ERR_INPUT, "llm: span %d: %d tokens, logits from %d", s,
                           sp[s].n, sp[s].logits_from);
        if (sp[s].kv->layers != m->c.layers || sp[s].kv->kvd != m->kvd)
            return err_set(err, ERR_INPUT, "llm: span %d: its cache belongs to another model",
                           s);
        if (sp[s].n > sp[s].kv->cap - sp[s].kv->len)
            return err_set(err, ERR_INPUT, "llm: span %d: %d tokens after %d do not fit its "
                           "cache of %d positions", s, sp[s].n, sp[s].kv->len, sp[s].kv->cap);
        for (int t = 0; t < s; t++)
            if (sp[t].kv == sp[s].kv)
                return err_set(err, ERR_INPUT, "llm: spans %d and %d share a cache", t, s);
        total += (size_t)sp[s].n;
        nout += (size_t)(sp[s].n - sp[s].logits_from);
    }
    if (total < 1 || total > (1u << 20))
        return err_set(err, ERR_INPUT, "llm: a batch of %zu tokens", total);
    if (run_reserve(r, m, total) != 0) return err_set(err, ERR_RUNTIME, "llm: out of memory");
    int d = m->c.hidden, row = 0;
    for (int s = 0; s < ns; s++)
        for (int i = 0; i < sp[s].n; i++, row++) {
            int32_t tok = sp[s].tokens[i];
            if (tok < 0 || tok >= m->c.vocab)
                return err_set(err, ERR_INPUT, "llm: token id %d is outside the vocabulary "
                               "(%d)", (int)tok, m->c.vocab);
            r->pos[row] = sp[s].kv->len + i;
            r->rspan[row] = s;
            gemv_h2f(r->ctx, m->embd + (size_t)tok * d, r->h + (size_t)row * d, (size_t)d);
        }
    *rows = (int)total;
    *out_rows = (int)nout;
    return 0;
}

/* The final norm of the rows that want logits, gathered, then the head. */
static int head_run(llm_run_t *r, const llm_model_t *m, const llm_span_t *sp, int ns,
                    float *logits)
{
    int d = m->c.hidden, row = 0, out = 0;
    for (int s = 0; s < ns; s++)
        for (int i = 0; i < sp[s].n; i++, row++)
            if (i >= sp[s].logits_from) {
                memcpy(r->yf + (size_t)out * d, r->h + (size_t)row * d, (size_t)d * sizeof *r->h);
                out++;
            }
    if (out == 0) return 0;
    norm_rows(r, r->yf, m->out_norm, d, m->c.eps, out, r->xh);
    /* Chunks of at most `rows` rows: yh (fp16 head output of W4A16) holds
     * rows × wide, and wide ≥ vocab. */
    return lin_run(r, &m->head, r->xh, out, logits);
}

int llm_forward(llm_run_t *r, const llm_model_t *m, const llm_span_t *spans, int nspans,
                float *logits, err_t *err)
{
    int rows = 0, nout = 0;
    if (nspans < 1) return err_set(err, ERR_INPUT, "llm: a forward pass of no span");
    if (spans_begin(r, m, spans, nspans, &rows, &nout, err) != 0) return -1;
    rope_table(&m->c, r->pos, rows, r->cs);
    for (int L = 0; L < m->c.layers; L++)
        if (layer_run(r, m, L, spans, nspans, rows) != 0)
            return err_set(err, ERR_RUNTIME, "llm: out of memory in a forward pass");
    for (int s = 0; s < nspans; s++) spans[s].kv->len += spans[s].n;
    if (head_run(r, m, spans, nspans, logits) != 0)
        return err_set(err, ERR_RUNTIME, "llm: out of memory in a forward pass");
    return 0;
}
