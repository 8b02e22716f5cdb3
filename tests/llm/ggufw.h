/* ggufw.h — a small GGUF writer for the tests of kernels/llm (header only,
 * static functions): metadata of the common types and F32/F16 tensors,
 * laid out as the format says (docs/llm.md, "GGUF"), written to a file.
 * Also tiny random LLaMA models for the forward-pass and speculation
 * tests. */
#ifndef TESTS_LLM_GGUFW_H
#define TESTS_LLM_GGUFW_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "w4a16.h"

typedef struct ggufw {
    unsigned char *kv, *ti, *data;   /* metadata, tensor infos, tensor data */
    size_t nkv_b, nti_b, ndata_b;
    uint64_t nkv, nt;
} ggufw_t;

static inline void ggufw_put(unsigned char **buf, size_t *len, const void *p, size_t n)
{
    if (n == 0) return;
    unsigned char *nb = realloc(*buf, *len + n);
    if (!nb) abort();
    memcpy(nb + *len, p, n);
    *buf = nb;
    *len += n;
}

static inline void ggufw_u32(unsigned char **b, size_t *l, uint32_t v) { ggufw_put(b, l, &v, 4); }
static inline void ggufw_u64(unsigned char **b, size_t *l, uint64_t v) { ggufw_put(b, l, &v, 8); }

static inline void ggufw_str(unsigned char **b, size_t *l, const char *s)
{
    ggufw_u64(b, l, strlen(s));
    ggufw_put(b, l, s, strlen(s));
}

static inline void ggufw_kv_u32(ggufw_t *w, const char *key, uint32_t v)
{
    ggufw_str(&w->kv, &w->nkv_b, key);
    ggufw_u32(&w->kv, &w->nkv_b, 4);
    ggufw_u32(&w->kv, &w->nkv_b, v);
    w->nkv++;
}

static inline void ggufw_kv_f32(ggufw_t *w, const char *key, float v)
{
    ggufw_str(&w->kv, &w->nkv_b, key);
    ggufw_u32(&w->kv, &w->nkv_b, 6);
    ggufw_put(&w->kv, &w->nkv_b, &v, 4);
    w->nkv++;
}

static inline void ggufw_kv_str(ggufw_t *w, const char *key, const char *v)
{
    ggufw_str(&w->kv, &w->nkv_b, key);
    ggufw_u32(&w->kv, &w->nkv_b, 8);
    ggufw_str(&w->kv, &w->nkv_b, v);
    w->nkv++;
}

/* A tensor of ne0 × ne1 (ne1 = 0: one dimension), F32 (type 0) or F16
 * (type 1) from fp32 values. */
static inline void ggufw_tensor(ggufw_t *w, const char *name, int type, uint64_t ne0, uint64_t ne1,
                         const float *v)
{
    while (w->ndata_b % 32) ggufw_put(&w->data, &w->ndata_b, "", 1);
    ggufw_str(&w->ti, &w->nti_b, name);
    ggufw_u32(&w->ti, &w->nti_b, ne1 ? 2 : 1);
    ggufw_u64(&w->ti, &w->nti_b, ne0);
    if (ne1) ggufw_u64(&w->ti, &w->nti_b, ne1);
    ggufw_u32(&w->ti, &w->nti_b, (uint32_t)type);
    ggufw_u64(&w->ti, &w->nti_b, w->ndata_b);
    uint64_t n = ne0 * (ne1 ? ne1 : 1);
    for (uint64_t i = 0; i < n; i++) {
        if (type == 0) ggufw_put(&w->data, &w->ndata_b, &v[i], 4);
        else {
            uint16_t h = f32_to_fp16(v[i]);
            ggufw_put(&w->data, &w->ndata_b, &h, 2);
        }
    }
    w->nt++;
}

/* Writes the file and frees the writer. 0, or -1. */
static inline int ggufw_save(ggufw_t *w, const char *path)
{
    unsigned char *h = NULL;
    size_t hl = 0;
    ggufw_put(&h, &hl, "GGUF", 4);
    ggufw_u32(&h, &hl, 3);
    ggufw_u64(&h, &hl, w->nt);
    ggufw_u64(&h, &hl, w->nkv);
    ggufw_put(&h, &hl, w->kv, w->nkv_b);
    ggufw_put(&h, &hl, w->ti, w->nti_b);
    while (hl % 32) ggufw_put(&h, &hl, "", 1);
    FILE *f = fopen(path, "wb");
    int rc = f && fwrite(h, 1, hl, f) == hl &&
             (w->ndata_b == 0 || fwrite(w->data, 1, w->ndata_b, f) == w->ndata_b) ? 0 : -1;
    if (f && fclose(f) != 0) rc = -1;
    free(h);
    free(w->kv);
    free(w->ti);
    free(w->data);
    memset(w, 0, sizeof *w);
    return rc;
}

/* ---- tiny LLaMA models --------------------------------------------------- */

typedef struct tiny_spec {
    int layers, hidden, heads, kv_heads, ffn, vocab;
    float scale;          /* weight amplitude */
    uint64_t seed;
    int f16;              /* linear weights F16 (else F32) */
} tiny_spec_t;

static inline float tiny_rand(uint64_t *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (float)((double)(*s >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

static inline void tiny_tensor(ggufw_t *w, const char *name, int type, int ne0, int ne1, float amp,
                        float base, uint64_t *s)
{
    size_t n = (size_t)ne0 * (size_t)(ne1 ? ne1 : 1);
    float *v = malloc(n * sizeof *v);
    if (!v) abort();
    for (size_t i = 0; i < n; i++) v[i] = base + amp * tiny_rand(s);
    ggufw_tensor(w, name, type, (uint64_t)ne0, (uint64_t)ne1, v);
    free(v);
}

/* A random LLaMA model of spec written to path. 0, or -1. */
static inline int tiny_model(const char *path, const tiny_spec_t *t)
{
    ggufw_t w = {0};
    uint64_t s = t->seed;
    int kvd = t->hidden / t->heads * t->kv_heads, ty = t->f16 ? 1 : 0;
    ggufw_kv_str(&w, "general.architecture", "llama");
    ggufw_kv_u32(&w, "llama.block_count", (uint32_t)t->layers);
    ggufw_kv_u32(&w, "llama.context_length", 2048);
    ggufw_kv_u32(&w, "llama.embedding_length", (uint32_t)t->hidden);
    ggufw_kv_u32(&w, "llama.feed_forward_length", (uint32_t)t->ffn);
    ggufw_kv_u32(&w, "llama.attention.head_count", (uint32_t)t->heads);
    ggufw_kv_u32(&w, "llama.attention.head_count_kv", (uint32_t)t->kv_heads);
    ggufw_kv_f32(&w, "llama.rope.freq_base", 10000.0f);
    ggufw_kv_f32(&w, "llama.attention.layer_norm_rms_epsilon", 1e-5f);
    tiny_tensor(&w, "token_embd.weight", ty, t->hidden, t->vocab, 1.0f, 0.0f, &s);
    tiny_tensor(&w, "output_norm.weight", 0, t->hidden, 0, 0.2f, 1.0f, &s);
    for (int L = 0; L < t->layers; L++) {
        char n[64];
#define TINY(SUFFIX, NE0, NE1, AMP, BASE, TYPE)                                     \
        snprintf(n, sizeof n, "blk.%d." SUFFIX ".weight", L);                          \
        tiny_tensor(&w, n, TYPE, NE0, NE1, AMP, BASE, &s);
        TINY("attn_norm", t->hidden, 0, 0.2f, 1.0f, 0)
        TINY("attn_q", t->hidden, t->hidden, t->scale, 0.0f, ty)
        TINY("attn_k", t->hidden, kvd, t->scale, 0.0f, ty)
        TINY("attn_v", t->hidden, kvd, t->scale, 0.0f, ty)
        TINY("attn_output", t->hidden, t->hidden, t->scale, 0.0f, ty)
        TINY("ffn_norm", t->hidden, 0, 0.2f, 1.0f, 0)
        TINY("ffn_gate", t->hidden, t->ffn, t->scale, 0.0f, ty)
        TINY("ffn_up", t->hidden, t->ffn, t->scale, 0.0f, ty)
        TINY("ffn_down", t->ffn, t->hidden, t->scale, 0.0f, ty)
#undef TINY
    }
    return ggufw_save(&w, path);
}

/* A test's scratch directory made from tmpl (mkdtemp: rewritten in place)
 * with t's model in it as tiny.gguf, whose path goes to path (n bytes).
 * 0, or -1. tiny_dir_remove(tmpl) removes the directory and all in it. */
static inline int tiny_dir_model(char *tmpl, char *path, size_t n, const tiny_spec_t *t)
{
    if (!mkdtemp(tmpl)) return -1;
    snprintf(path, n, "%s/tiny.gguf", tmpl);
    return tiny_model(path, t);
}

static inline int tiny_dir_remove(const char *dir)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

#endif
