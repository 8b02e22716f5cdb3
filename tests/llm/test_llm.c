/* The forward pass (kernels/llm/llm.h) on tiny random LLaMA models written
 * by tests/llm/ggufw.h:
 *   - against a scalar reference written here from the architecture's
 *     definition (double precision, no fp16 rounding of activations), within
 *     a tolerance the fp16 roundings explain;
 *   - batch invariance: a token's logits are bit for bit the same alone, in
 *     a prefill, and beside other sequences;
 *   - KV rollback, early exit, W4A16 (close to fp16, not equal to it);
 *   - files that are not such a model, refused with the file and the
 *     tensor or key named.
 * The real model against llama.cpp: tests/cli/llm_agree.sh. */
#include <stdint.h>

#include "check.h"
#include "gemv.h"
#include "ggufw.h"
#include "llm.h"

static char dir[] = "/tmp/test_llm.XXXXXX";
static char path[512];
static const tiny_spec_t SPEC = {2, 64, 4, 2, 96, 300, 0.12f, 7, 1};

/* ---- the scalar reference ------------------------------------------------ */

typedef struct ref {
    tiny_spec_t t;
    int hd, kvd, layers;
    float *embd, *onorm, *an[8], *fn[8], *wq[8], *wk[8], *wv[8], *wo[8], *wg[8], *wu[8], *wd[8];
    double *kc[8], *vc[8];   /* [pos][kvd] */
    int len;
} ref_t;

static float *tensor_f32(const gguf_t *g, const char *name)
{
    const gguf_tensor_t *t = gguf_tensor(g, name);
    float *v = t ? malloc(t->nelem * sizeof *v) : NULL;
    if (!v || gguf_dequant(t, 0, t->nelem, v, NULL) != 0) abort();
    return v;
}

static void ref_load(ref_t *r, const gguf_t *g, int layers)
{
    memset(r, 0, sizeof *r);
    r->t = SPEC;
    r->layers = layers;
    r->hd = SPEC.hidden / SPEC.heads;
    r->kvd = r->hd * SPEC.kv_heads;
    r->embd = tensor_f32(g, "token_embd.weight");
    r->onorm = tensor_f32(g, "output_norm.weight");
    for (int L = 0; L < layers; L++) {
        char n[64];
#define GET(F, S) snprintf(n, sizeof n, "blk.%d." S ".weight", L), r->F[L] = tensor_f32(g, n)
        GET(an, "attn_norm"); GET(fn, "ffn_norm"); GET(wq, "attn_q"); GET(wk, "attn_k");
        GET(wv, "attn_v"); GET(wo, "attn_output"); GET(wg, "ffn_gate"); GET(wu, "ffn_up");
        GET(wd, "ffn_down");
#undef GET
        r->kc[L] = calloc(64 * (size_t)r->kvd, sizeof(double));
        r->vc[L] = calloc(64 * (size_t)r->kvd, sizeof(double));
    }
}

static void ref_free(ref_t *r)
{
    free(r->embd);
    free(r->onorm);
    for (int L = 0; L < r->layers; L++) {
        free(r->an[L]); free(r->fn[L]); free(r->wq[L]); free(r->wk[L]); free(r->wv[L]);
        free(r->wo[L]); free(r->wg[L]); free(r->wu[L]); free(r->wd[L]);
        free(r->kc[L]); free(r->vc[L]);
    }
}

static void matvec(const float *w, int n, int k, const double *x, double *y)
{
    for (int i = 0; i < n; i++) {
        double s = 0;
        for (int e = 0; e < k; e++) s += (double)w[(size_t)i * k + e] * x[e];
        y[i] = s;
    }
}

static void rmsnorm(const double *h, const float *w, int d, double *x)
{
    double ss = 0;
    for (int e = 0; e < d; e++) ss += h[e] * h[e];
    double inv = 1.0 / sqrt(ss / d + 1e-5);
    for (int e = 0; e < d; e++) x[e] = h[e] * inv * w[e];
}

static void rope(double *v, int nh, int hd, int pos)
{
    for (int h = 0; h < nh; h++)
        for (int j = 0; j < hd / 2; j++) {
            double th = pos * pow(10000.0, -2.0 * j / hd), c = cos(th), s = sin(th);
            double a = v[h * hd + 2 * j], b = v[h * hd + 2 * j + 1];
            v[h * hd + 2 * j] = a * c - b * s;
            v[h * hd + 2 * j + 1] = a * s + b * c;
        }
}

static void ref_attention(const ref_t *r, int L, const double *q, double *out)
{
    int hd = r->hd, per = SPEC.heads / SPEC.kv_heads;
    double sc[64];
    for (int h = 0; h < SPEC.heads; h++) {
        const int kh = h / per;
        double mx = -INFINITY, sum = 0;
        for (int p = 0; p <= r->len; p++) {
            double s = 0;
            for (int e = 0; e < hd; e++) s += q[h * hd + e] * r->kc[L][(size_t)p * r->kvd + kh * hd + e];
            sc[p] = s / sqrt((double)hd);
            mx = sc[p] > mx ? sc[p] : mx;
        }
        for (int p = 0; p <= r->len; p++) sum += (sc[p] = exp(sc[p] - mx));
        for (int e = 0; e < hd; e++) {
            double a = 0;
            for (int p = 0; p <= r->len; p++) a += sc[p] * r->vc[L][(size_t)p * r->kvd + kh * hd + e];
            out[h * hd + e] = a / sum;
        }
    }
}

/* Appends one token; logits[vocab]. */
static void ref_step(ref_t *r, int tok, double *logits)
{
    int d = SPEC.hidden, f = SPEC.ffn;
    double h[64], x[64], q[64], k[64], v[64], a[64], o[64], g[96], u[96];
    for (int e = 0; e < d; e++) h[e] = r->embd[(size_t)tok * d + e];
    for (int L = 0; L < r->layers; L++) {
        rmsnorm(h, r->an[L], d, x);
        matvec(r->wq[L], d, d, x, q);
        matvec(r->wk[L], r->kvd, d, x, k);
        matvec(r->wv[L], r->kvd, d, x, v);
        rope(q, SPEC.heads, r->hd, r->len);
        rope(k, SPEC.kv_heads, r->hd, r->len);
        memcpy(r->kc[L] + (size_t)r->len * r->kvd, k, (size_t)r->kvd * sizeof *k);
        memcpy(r->vc[L] + (size_t)r->len * r->kvd, v, (size_t)r->kvd * sizeof *v);
        ref_attention(r, L, q, a);
        matvec(r->wo[L], d, d, a, o);
        for (int e = 0; e < d; e++) h[e] += o[e];
        rmsnorm(h, r->fn[L], d, x);
        matvec(r->wg[L], f, d, x, g);
        matvec(r->wu[L], f, d, x, u);
        for (int e = 0; e < f; e++) g[e] = g[e] / (1 + exp(-g[e])) * u[e];
        matvec(r->wd[L], d, f, g, o);
        for (int e = 0; e < d; e++) h[e] += o[e];
    }
    rmsnorm(h, r->onorm, d, x);
    matvec(r->embd, SPEC.vocab, d, x, logits);
    r->len++;
}

/* ---- helpers ----------------------------------------------------------- */

static llm_model_t *load(const char *p, int weights, int layers, err_t *err)
{
    gguf_t *g = gguf_open(p, err);
    if (!g) return NULL;
    llm_opts_t o = {weights, layers, GEMV_W4_EXACT};
    llm_model_t *m = llm_load(g, &o, err);
    gguf_close(g);
    return m;
}

static const int32_t toks[12] = {5, 17, 250, 3, 99, 42, 7, 7, 180, 1, 64, 299};

/* logits [12][vocab] of toks fed one at a time. */
static void one_by_one(const llm_model_t *m, llm_run_t *r, float *lg)
{
    llm_kv_t *kv = llm_kv_create(m, 64, NULL);
    for (int i = 0; i < 12; i++) {
        llm_span_t sp = {kv, &toks[i], 1, 0};
        CHECK(llm_forward(r, m, &sp, 1, lg + (size_t)i * SPEC.vocab, NULL) == 0);
    }
    llm_kv_free(kv);
}

/* ---- tests ------------------------------------------------------------- */

static void test_against_reference(void)
{
    err_t err = {0, ""};
    for (int layers = 1; layers <= 2; layers++) {
        llm_model_t *m = load(path, LLM_FP16, layers, &err);
        llm_run_t *r = llm_run_create(2, &err);
        CHECK(m && r);
        if (!m || !r) return;
        gguf_t *g = gguf_open(path, NULL);
        ref_t ref;
        ref_load(&ref, g, layers);
        gguf_close(g);
        float *lg = malloc(12 * (size_t)SPEC.vocab * sizeof *lg);
        double want[300], worst = 0, spread = 0;
        one_by_one(m, r, lg);
        for (int i = 0; i < 12; i++) {
            ref_step(&ref, toks[i], want);
            for (int v = 0; v < SPEC.vocab; v++) {
                double dlt = fabs(lg[(size_t)i * SPEC.vocab + v] - want[v]);
                worst = dlt > worst ? dlt : worst;
                spread = fabs(want[v]) > spread ? fabs(want[v]) : spread;
            }
        }
        /* fp16 activations (2^-11 relative) through at most 2 layers stay
         * well under 0.2% of the logits' range; a RoPE over the wrong pairs
         * gives about 3%. */
        printf("  %d layers: largest logit difference %.2e (logits up to %.2f)\n", layers,
               worst, spread);
        CHECK(spread > 1.0);
        CHECK(worst < 0.002 * spread);
        free(lg);
        ref_free(&ref);
        llm_run_free(r);
        llm_free(m);
    }
}

static void test_batch_invariant(void)
{
    err_t err = {0, ""};
    llm_model_t *m = load(path, LLM_FP16, 0, &err);
    llm_run_t *r = llm_run_create(2, &err);
    CHECK(m && r);
    if (!m || !r) return;
    size_t V = (size_t)SPEC.vocab;
    float *alone = malloc(12 * V * sizeof(float)), *got = malloc(40 * V * sizeof(float));
    one_by_one(m, r, alone);
    /* All 12 as one prefill. */
    llm_kv_t *kv = llm_kv_create(m, 64, NULL), *kb = llm_kv_create(m, 64, NULL),
             *kc = llm_kv_create(m, 64, NULL);
    llm_span_t sp = {kv, toks, 12, 0};
    CHECK(llm_forward(r, m, &sp, 1, got, NULL) == 0);
    CHECK(memcmp(got, alone, 12 * V * sizeof(float)) == 0);
    /* 5 then 7 tokens, beside two other sequences in the same passes. */
    llm_kv_truncate(kv, 0);
    static const int32_t other[9] = {11, 12, 13, 14, 15, 16, 17, 18, 19};
    llm_span_t b1[3] = {{kb, other, 3, 0}, {kv, toks, 5, 2}, {kc, other + 3, 6, 6}};
    CHECK(llm_forward(r, m, b1, 3, got, NULL) == 0);
    CHECK(memcmp(got + 3 * V, alone + 2 * V, 3 * V * sizeof(float)) == 0);
    llm_span_t b2[2] = {{kc, other, 2, 0}, {kv, toks + 5, 7, 0}};
    CHECK(llm_forward(r, m, b2, 2, got, NULL) == 0);
    CHECK(memcmp(got + 2 * V, alone + 5 * V, 7 * V * sizeof(float)) == 0);
    /* Rollback: forget the last 4 and feed them again. */
    llm_kv_truncate(kv, 8);
    CHECK(llm_kv_len(kv) == 8);
    llm_span_t again = {kv, toks + 8, 4, 0};
    CHECK(llm_forward(r, m, &again, 1, got, NULL) == 0);
    CHECK(memcmp(got, alone + 8 * V, 4 * V * sizeof(float)) == 0);
    llm_kv_free(kv);
    llm_kv_free(kb);
    llm_kv_free(kc);
    free(alone);
    free(got);
    llm_run_free(r);
    llm_free(m);
}

static void test_w4a16(void)
{
    err_t err = {0, ""};
    llm_model_t *m = load(path, LLM_FP16, 0, &err), *q = load(path, LLM_W4A16, 0, &err);
    llm_run_t *r = llm_run_create(1, &err);
    CHECK(m && q && r);
    if (!m || !q || !r) return;
    CHECK(!strcmp(llm_name(q), "w4a16"));
    size_t V = (size_t)SPEC.vocab;
    float *a = malloc(12 * V * sizeof(float)), *b = malloc(12 * V * sizeof(float));
    one_by_one(m, r, a);
    one_by_one(q, r, b);
    double worst = 0, spread = 0;
    int same_top = 0;
    for (int i = 0; i < 12; i++) {
        for (size_t v = 0; v < V; v++) {
            double d = fabs(a[i * V + v] - b[i * V + v]);
            worst = d > worst ? d : worst;
            spread = fabs(a[i * V + v]) > spread ? fabs(a[i * V + v]) : spread;
        }
        int ta = 0, tb = 0;
        for (size_t v = 1; v < V; v++) {
            ta = a[i * V + v] > a[i * V + ta] ? (int)v : ta;
            tb = b[i * V + v] > b[i * V + tb] ? (int)v : tb;
        }
        same_top += ta == tb;
    }
    /* 4-bit weights: visibly different logits, mostly the same choice. */
    printf("  w4a16 vs fp16: largest logit difference %.3f (logits up to %.2f), same top-1 at "
           "%d of 12\n", worst, spread, same_top);
    CHECK(worst > 1e-3 && worst < 0.25 * spread);
    CHECK(same_top >= 6);
    CHECK(llm_weight_bytes(q) < llm_weight_bytes(m) / 2);
    free(a);
    free(b);
    llm_run_free(r);
    llm_free(m);
    llm_free(q);
}

static void test_early_exit_name(void)
{
    err_t err = {0, ""};
    llm_model_t *m = load(path, LLM_W4A16, 1, &err);
    CHECK(m && !strcmp(llm_name(m), "w4a16:1") && llm_config(m)->layers == 1);
    llm_free(m);
    CHECK(load(path, LLM_FP16, 3, &err) == NULL);
    CHECK(err.code == ERR_INPUT && strstr(err.msg, "3 layers asked for; the model has 2"));
}

/* A model file with one thing wrong: the message names the file and it. */
static void bad_model(const char *what, void (*edit)(ggufw_t *), const char *expect)
{
    char p[600];
    snprintf(p, sizeof p, "%s/bad.gguf", dir);
    ggufw_t w = {0};
    edit(&w);
    CHECK(ggufw_save(&w, p) == 0);
    err_t err = {0, ""};
    gguf_t *g = gguf_open(p, &err);
    llm_opts_t o = {LLM_FP16, 0, 0};
    llm_model_t *m = g ? llm_load(g, &o, &err) : NULL;
    if (m || !strstr(err.msg, expect) || !strstr(err.msg, "bad.gguf"))
        printf("  %s: got '%s', expected '%s'\n", what, err.msg, expect);
    CHECK(m == NULL && err.code == ERR_INPUT && strstr(err.msg, expect) && strstr(err.msg, "bad.gguf"));
    llm_free(m);
    gguf_close(g);
}

static void base_kv(ggufw_t *w, const char *arch)
{
    ggufw_kv_str(w, "general.architecture", arch);
    ggufw_kv_u32(w, "llama.block_count", 1);
    ggufw_kv_u32(w, "llama.context_length", 64);
    ggufw_kv_u32(w, "llama.embedding_length", 8);
    ggufw_kv_u32(w, "llama.feed_forward_length", 16);
    ggufw_kv_u32(w, "llama.attention.head_count", 2);
    ggufw_kv_f32(w, "llama.attention.layer_norm_rms_epsilon", 1e-5f);
}

static float zeros[4096];
static void ed_arch(ggufw_t *w) { base_kv(w, "gpt2"); }
static void ed_notensor(ggufw_t *w)
{
    base_kv(w, "llama");
    ggufw_tensor(w, "token_embd.weight", 0, 8, 10, zeros);
    ggufw_tensor(w, "output_norm.weight", 0, 8, 0, zeros);
}
static void ed_shape(ggufw_t *w)
{
    ed_notensor(w);
    ggufw_tensor(w, "blk.0.attn_norm.weight", 0, 8, 0, zeros);
    ggufw_tensor(w, "blk.0.ffn_norm.weight", 0, 8, 0, zeros);
    ggufw_tensor(w, "blk.0.attn_q.weight", 0, 8, 8, zeros);
    ggufw_tensor(w, "blk.0.attn_k.weight", 0, 8, 7, zeros);
}
static void ed_heads(ggufw_t *w)
{
    base_kv(w, "llama");
    ggufw_kv_u32(w, "llama.attention.head_count_kv", 3);
}

static void test_bad_models(void)
{
    bad_model("architecture", ed_arch, "architecture 'gpt2' is not supported");
    bad_model("missing tensor", ed_notensor, "tensor 'blk.0.attn_norm.weight' is missing");
    bad_model("shape", ed_shape, "tensor 'blk.0.attn_k.weight' has shape 8 x 7");
    bad_model("heads", ed_heads, "do not divide");
}

int main(void)
{
    if (tiny_dir_model(dir, path, sizeof path, &SPEC) != 0) return 1;
    RUN(test_against_reference);
    RUN(test_batch_invariant);
    RUN(test_w4a16);
    RUN(test_early_exit_name);
    RUN(test_bad_models);
    if (tiny_dir_remove(dir) != 0) return 1;
    return check_done();
}
