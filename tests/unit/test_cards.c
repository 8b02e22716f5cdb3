/* Cards (sim/model/cards.c): every shipped card loads; LLM cards reproduce the
 * published parameter counts; precision byte counts; inline cards, bases,
 * defaults; errors in card files name the card file's line:column. */
#include <stdio.h>
#include <stdlib.h>

#include "model/cards.h"
#include "check.h"
#include "io/ynode.h"

#define ROOT SPECSIM_ROOT "/"

/* Parameters of a LLaMA-style decoder: embeddings + lm_head (one matrix
 * when tied), per layer q/o (hidden^2 each), k/v (hidden * kv_dim each),
 * gated MLP (3 * hidden * ffn); norms are negligible (< 0.01%). */
static double llm_params(const llm_card_t *m)
{
    double h = m->hidden, kv = (double)m->hidden / m->heads * m->kv_heads;
    double layer = 2 * h * h + 2 * h * kv + (m->gated_mlp ? 3 : 2) * h * m->ffn;
    return m->layers * layer + (m->tied_embeddings ? 1.0 : 2.0) * m->vocab * h;
}

static void test_llm_cards(void)
{
    /* Published sizes: Llama 2 paper / model cards (6.74B, 13.02B, 68.98B),
     * Meta Llama 3 8B (8.03B), TinyLlama (1.10B), and the Hugging Face
     * counts of Llama-3-70B (70.55B), Llama-3.2-1B (1.24B: 1,235,814,400)
     * and Llama-3.2-3B (3.21B), the last two with tied embeddings (tied
     * tells which: counted twice they would be 21% and 12% over). */
    static const struct { const char *file; double params; int tied; } cards[] = {
        {"llama-2-7b", 6.74e9, 0}, {"llama-2-13b", 13.02e9, 0},
        {"llama-2-70b", 68.98e9, 0}, {"llama-3-8b", 8.03e9, 0},
        {"tinyllama-1.1b", 1.10e9, 0}, {"llama-3-70b", 70.55e9, 0},
        {"llama-3.2-1b", 1.236e9, 1}, {"llama-3.2-3b", 3.21e9, 1}};
    for (size_t i = 0; i < sizeof cards / sizeof *cards; i++) {
        char path[512];
        snprintf(path, sizeof path, ROOT "models/llm/%s.yaml", cards[i].file);
        llm_card_t m;
        err_t err = {0};
        int rc = cards_load_llm_file(path, &m, &err);
        if (rc != 0) printf("  %s\n", err.msg);
        CHECK(rc == 0);
        CHECK_STR(m.name, cards[i].file);
        CHECK(m.gated_mlp == 1);
        CHECK(m.tied_embeddings == cards[i].tied);
        CHECK(m.source[0] != 0);
        CHECK_REL(llm_params(&m), cards[i].params, 0.01);
    }
}

static void test_hw_cards(void)
{
    static const char *const files[] = {"h200", "h100-sxm", "a100-80g", "l4",
                                        "jetson-orin-agx", "snapdragon-8-gen-3",
                                        "apple-m2", "raspberry-pi-5",
                                        /* the cards the published points of
                                         * docs/validation.md need */
                                        "a100-40g", "a100-80g-pcie", "h100-pcie",
                                        "rtx-4090", "apple-m1", "apple-m1-max",
                                        "apple-m3-max", "jetson-orin-nano",
                                        "jetson-orin-nano-super",
                                        "snapdragon-8-gen-2", "snapdragon-8-elite"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        char path[512];
        snprintf(path, sizeof path, ROOT "models/hardware/%s.yaml", files[i]);
        hw_card_t h;
        err_t err = {0};
        int rc = cards_load_hw_file(path, &h, &err);
        if (rc != 0) printf("  %s\n", err.msg);
        CHECK(rc == 0);
        CHECK_STR(h.name, files[i]);
        CHECK(h.source[0] != 0);
        CHECK(h.mem_bw > 1e9 && h.mem_bytes > 1e9);
        /* fp16 is never slower than fp32 on these devices; w*a16 compute in
         * fp16 so they run at the fp16 rate. */
        CHECK(h.flops[PREC_FP16] >= h.flops[PREC_FP32] && h.flops[PREC_FP32] > 0);
        CHECK(h.flops[PREC_W8A16] == h.flops[PREC_FP16]);
        CHECK(h.flops[PREC_W4A16] == h.flops[PREC_FP16]);
        CHECK(h.bw_eff > 0 && h.bw_eff <= 1 && h.flops_eff > 0 && h.flops_eff <= 1);
    }
    hw_card_t h;
    err_t err = {0};
    CHECK(cards_load_hw_file(ROOT "models/hardware/h200.yaml", &h, &err) == 0);
    CHECK_STR(h.kind, "gpu");
    CHECK_REL(h.mem_bw, 4.8e12, 1e-15);
    CHECK(h.mem_bytes == 141e9);
    CHECK(h.flops[PREC_FP16] == 989.5e12);
}

static void test_precision(void)
{
    CHECK(precision_weight_bytes(PREC_FP32) == 4.0);
    CHECK(precision_weight_bytes(PREC_FP16) == 2.0);
    /* A 4096x4096 W4A16 matrix: 4096*4096/2 B of nibbles, plus per row and
     * 128-group an fp16 scale (2 B) and a 4-bit zero (0.5 B): 4096*32*2.5. */
    double w4 = (4096.0 * 4096 / 2 + 4096.0 * 32 * 2.5) / (4096.0 * 4096);
    CHECK(precision_weight_bytes(PREC_W4A16) == w4);
    CHECK(precision_weight_bytes(PREC_W4A4) == w4);
    CHECK(precision_weight_bytes(PREC_W8A16) == (4096.0 * 4096 + 4096.0 * 32 * 2) / (4096.0 * 4096));
    CHECK(precision_weight_bytes(PREC_FP8) == 1.0);   /* one e4m3 byte a weight */
    CHECK(precision_parse("fp8") == PREC_FP8 && strcmp(precision_name(PREC_FP8), "fp8") == 0);
    CHECK(precision_parse("w4a16") == PREC_W4A16);
    CHECK(precision_parse("int4") == -1);
    CHECK_STR(precision_name(PREC_W8A16), "w8a16");
}

/* Named weight formats: their precision and their own bytes per weight; a
 * precision name is its own format. */
static void test_weight_formats(void)
{
    int p = -1;
    double b = 0;
    /* GGUF Q4_0: a block of 32 4-bit weights and one fp16 scale = 18 bytes */
    CHECK(cards_weight_format_parse("q4_0", &p, &b) == 0 && p == PREC_W4A16 && b == 18.0 / 32);
    /* Q8_0: 32 int8 weights and one fp16 scale = 34 bytes */
    CHECK(cards_weight_format_parse("q8_0", &p, &b) == 0 && p == PREC_W8A16 && b == 34.0 / 32);
    CHECK(cards_weight_format_parse("q4_K_M", &p, &b) == 0 && p == PREC_W4A16 && b == 4.85 / 8);
    /* gpt-fast int4: group 32 with a bf16 scale and zero, 4 + 32/32 bits */
    CHECK(cards_weight_format_parse("int4-g32", &p, &b) == 0 && b == 5.0 / 8);
    /* AWQ's g128 layout is the w4a16 reference one */
    CHECK(cards_weight_format_parse("int4-g128", &p, &b) == 0 &&
          b == precision_weight_bytes(PREC_W4A16));
    CHECK(cards_weight_format_parse("w8a16", &p, &b) == 0 && p == PREC_W8A16 &&
          b == precision_weight_bytes(PREC_W8A16));
    CHECK(cards_weight_format_parse("q4_k_m", &p, &b) == -1);   /* names are exact */
    CHECK(cards_weight_format_parse("int4", &p, &b) == -1);
    for (const weight_format_t *f = cards_weight_formats; f->name; f++)
        CHECK(f->prec == PREC_W4A16 || f->prec == PREC_W8A16);
}

/* The names a scenario's weight-format keys take are exactly the
 * precisions, in enum order (an index below PREC_COUNT is that precision),
 * then the formats; the engine keys' names are none then the engines. */
static void test_scenario_name_lists(void)
{
    int n = 0;
    for (; cards_weight_format_names[n]; n++) {
        const char *want = n < PREC_COUNT ? precision_names[n]
                                          : cards_weight_formats[n - PREC_COUNT].name;
        CHECK(want && strcmp(cards_weight_format_names[n], want) == 0);
        CHECK(cards_weight_format_index(cards_weight_format_names[n]) == n);
    }
    int nf = 0;
    while (cards_weight_formats[nf].name) nf++;
    CHECK(n == PREC_COUNT + nf);
    CHECK(cards_weight_format_index("q4_k_m") == -1);
    CHECK_STR(cards_engine_key_names[0], "none");
    for (int e = 0; e < ENGINE_COUNT; e++)
        CHECK_STR(cards_engine_key_names[e + 1], cards_engine_names[e]);
    CHECK(cards_engine_key_names[ENGINE_COUNT + 1] == NULL);
    /* cards_serving_setup: the format's precision and bytes, the engine's
     * set, and a card without the set refused. */
    hw_card_t hw;
    err_t err = {0};
    int prec = -1;
    double b = 0;
    CHECK(cards_load_hw_file(ROOT "models/hardware/jetson-orin-nano.yaml", &hw, &err) == 0);
    hw_card_t plain = hw;
    CHECK(cards_serving_setup(&hw, -1, cards_weight_format_index("q4_K_M"), &prec, &b,
                              &err) == 0);
    CHECK(prec == PREC_W4A16 && b == 4.85 / 8 && hw.bw_eff == plain.bw_eff);
    CHECK(cards_serving_setup(&hw, ENGINE_MLC, PREC_FP16, &prec, &b, &err) == 0);
    CHECK(prec == PREC_FP16 && b == 2.0);
    CHECK(cards_serving_setup(&hw, ENGINE_QNN, PREC_FP16, &prec, &b, &err) == -1);
    CHECK(cards_serving_setup(&plain, -1, n, &prec, &b, &err) == -1);
}

static ynode_t *parse(const char *text)
{
    ynode_t *n = NULL;
    err_t err = {0};
    if (ynode_parse("t", NULL, text, strlen(text), 1, 0, &n, &err) != 0)
        printf("  parse: %s\n", err.msg);
    return n;
}

static void test_inline_and_base(void)
{
    err_t err = {0};
    char ref[512];
    ynode_t *n = parse("{base: models/hardware/h200.yaml, mem_bw: 3TB/s, name: slow}");
    hw_card_t h;
    CHECK(n && cards_hw_from_node(n, "cloud.gpu", &h, ref, sizeof ref, &err) == 0);
    CHECK(h.mem_bw == 3e12);
    CHECK(h.flops[PREC_FP16] == 989.5e12);   /* from the base file */
    CHECK(h.flops[PREC_FP8] == 1979e12);     /* the datasheet's 3,958 sparse / 2 */
    CHECK_STR(h.name, "slow");
    CHECK_STR(ref, "inline (base models/hardware/h200.yaml)");
    ynode_free(n);

    /* Defaults: w8a16/w4a16 = fp16, w4a4 0, efficiencies 0.8/0.6. */
    n = parse("{kind: cpu, mem_bw: 10GB/s, mem: 1GB, flops: {fp32: 1TFLOPS, fp16: 2TFLOPS}}");
    CHECK(n && cards_hw_from_node(n, "k", &h, ref, sizeof ref, &err) == 0);
    CHECK(h.flops[PREC_W8A16] == 2e12 && h.flops[PREC_W4A16] == 2e12);
    CHECK(h.flops[PREC_W4A4] == 0 && h.flops[PREC_FP8] == 0);   /* fp8: none given */
    CHECK(h.bw_eff == 0.8 && h.flops_eff == 0.6);
    CHECK_STR(h.name, "inline");
    CHECK_STR(ref, "inline");
    ynode_free(n);

    llm_card_t m;
    n = parse("{layers: 2, hidden: 64, heads: 8, ffn: 128, vocab: 100}");
    CHECK(n && cards_llm_from_node(n, "k", &m, ref, sizeof ref, &err) == 0);
    CHECK(m.kv_heads == 8 && m.gated_mlp == 1);
    ynode_free(n);

    n = parse("{layers: 2, hidden: 64, heads: 8, ffn: 128}");
    CHECK(n && cards_llm_from_node(n, "cloud.target", &m, ref, sizeof ref, &err) == -1);
    CHECK(err.code == ERR_INPUT);
    CHECK(strncmp(err.msg, "t:1:1: cloud.target.vocab: required", 35) == 0);
    ynode_free(n);
}

static char *write_temp(const char *text)
{
    static char path[64];
    return check_tmp_file(path, sizeof path, text) == 0 ? path : NULL;
}

static void test_card_file_errors(void)
{
    err_t err = {0};
    llm_card_t m;
    char *p = write_temp("name: x\nlayers: 2\nhidden: 64\nheads: 8\nffn: 128\nvocab: 100\n");
    CHECK(p != NULL);
    CHECK(cards_load_llm_file(p, &m, &err) == -1);
    char want[128];
    snprintf(want, sizeof want, "%s:1:1: source: required", p);
    CHECK(strncmp(err.msg, want, strlen(want)) == 0);
    remove(p);

    p = write_temp("name: x\nsource: s\nlayers: 2\nhidden: 64\nheads: 8\n"
                   "fnn: 128\nvocab: 100\n");
    CHECK(cards_load_llm_file(p, &m, &err) == -1);
    snprintf(want, sizeof want, "%s:6:1: fnn: unknown key (did you mean 'ffn'?)", p);
    CHECK_STR(err.msg, want);
    remove(p);

    /* A misspelt key comes first, even with `source` missing too: it is the
     * likelier mistake (here it is `source` itself). */
    p = write_temp("name: x\nsorce: s\nlayers: 2\nhidden: 64\nheads: 8\nffn: 128\nvocab: 100\n");
    CHECK(cards_load_llm_file(p, &m, &err) == -1);
    snprintf(want, sizeof want, "%s:2:1: sorce: unknown key (did you mean 'source'?)", p);
    CHECK_STR(err.msg, want);
    remove(p);
    hw_card_t h0;
    p = write_temp("kind: gpu\nmem_bww: 1GBps\n");
    CHECK(cards_load_hw_file(p, &h0, &err) == -1);
    snprintf(want, sizeof want, "%s:2:1: mem_bww: unknown key", p);
    CHECK(strncmp(err.msg, want, strlen(want)) == 0);
    remove(p);

    hw_card_t h;
    p = write_temp("kind: tpu\nsource: s\n");
    CHECK(cards_load_hw_file(p, &h, &err) == -1);
    snprintf(want, sizeof want, "%s:1:7: kind: unknown value 'tpu'", p);
    CHECK(strncmp(err.msg, want, strlen(want)) == 0);
    remove(p);
}

/* Writes a with cards_write_hw and reads it back into b. 0, or -1 after a
 * failed CHECK. */
static int hw_round_trip(const hw_card_t *a, hw_card_t *b)
{
    err_t err = {0};
    char ref[512];
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    CHECK(f && cards_write_hw(f, a, 0) == 0);
    if (f) fclose(f);
    ynode_t *n = buf ? parse(buf) : NULL;
    int rc = n && cards_hw_from_node(n, "k", b, ref, sizeof ref, &err) == 0 ? 0 : -1;
    CHECK(rc == 0);
    ynode_free(n);
    free(buf);
    return rc;
}

/* A card written by cards_write_* reads back to the same values. */
static void test_card_round_trip(void)
{
    hw_card_t a, b;
    err_t err = {0};
    CHECK(cards_load_hw_file(ROOT "models/hardware/raspberry-pi-5.yaml", &a, &err) == 0);
    if (hw_round_trip(&a, &b) != 0) return;
    CHECK_STR(a.name, b.name);
    CHECK_STR(a.kind, b.kind);
    CHECK_STR(a.source, b.source);
    CHECK(a.mem_bw == b.mem_bw && a.mem_bytes == b.mem_bytes);
    for (int i = 0; i < PREC_COUNT; i++) CHECK(a.flops[i] == b.flops[i]);
    CHECK(a.bw_eff == b.bw_eff && a.flops_eff == b.flops_eff);
}

/* tied_embeddings is written back when true and read back; an untied card
 * writes no such key (cards and scenarios written before it stay as they
 * were). */
static void test_llm_tied_round_trip(void)
{
    static const char *const files[] = {"llama-3.2-3b", "llama-3-70b"};
    for (int i = 0; i < 2; i++) {
        char path[512], ref[512];
        snprintf(path, sizeof path, ROOT "models/llm/%s.yaml", files[i]);
        llm_card_t a, b;
        err_t err = {0};
        CHECK(cards_load_llm_file(path, &a, &err) == 0);
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        CHECK(f && cards_write_llm(f, &a, 0) == 0);
        if (f) fclose(f);
        CHECK(buf && (strstr(buf, "tied_embeddings: true") != NULL) == (i == 0));
        CHECK(buf && (strstr(buf, "tied_embeddings") != NULL) == (i == 0));
        ynode_t *n = buf ? parse(buf) : NULL;
        CHECK(n && cards_llm_from_node(n, "k", &b, ref, sizeof ref, &err) == 0);
        if (n) CHECK(b.tied_embeddings == a.tied_embeddings && b.vocab == a.vocab);
        ynode_free(n);
        free(buf);
    }
}

/* An engine's efficiency set is written back and read back; applying it
 * replaces only what it gives; a card without the set refuses it. */
static void test_engines(void)
{
    hw_card_t a, b;
    err_t err = {0};
    CHECK(cards_load_hw_file(ROOT "models/hardware/raspberry-pi-5.yaml", &a, &err) == 0);
    for (int e = 0; e < ENGINE_COUNT; e++)
        CHECK(cards_engine_parse(cards_engine_names[e]) == e);
    CHECK(cards_engine_parse("llama.cpp") == -1);
    hw_card_t plain = a;
    CHECK(cards_hw_apply_engine(&plain, ENGINE_MLC, &err) == -1 && err.code == ERR_INPUT);
    a.engines[ENGINE_MLC].bw_eff_prec[PREC_W4A16] = 0.75;
    a.engines[ENGINE_QNN].flops_eff = 0.9;
    if (hw_round_trip(&a, &b) != 0) return;
    CHECK(b.engines[ENGINE_MLC].bw_eff_prec[PREC_W4A16] == 0.75);
    CHECK(b.engines[ENGINE_QNN].flops_eff == 0.9 && b.engines[ENGINE_QNN].bw_eff == 0);
    hw_card_t m = b;
    CHECK(cards_hw_apply_engine(&m, ENGINE_MLC, &err) == 0);
    CHECK(m.bw_eff_prec[PREC_W4A16] == 0.75 && m.bw_eff == b.bw_eff &&
          m.flops_eff == b.flops_eff && m.bw_eff_prec[PREC_W8A16] == b.bw_eff_prec[PREC_W8A16]);
    /* engines.E.flops, an engine's own unit: round-trips, replaces only the
     * rates it gives (an fp8 rate on a card without one; fp16 kept), and a
     * set that gives only rates is a set. */
    a.engines[ENGINE_LLAMACPP_GPU].flops[PREC_FP8] = 7e12;
    if (hw_round_trip(&a, &b) != 0) return;
    CHECK(b.engines[ENGINE_LLAMACPP_GPU].flops[PREC_FP8] == 7e12 && b.flops[PREC_FP8] == 0);
    m = b;
    CHECK(cards_hw_apply_engine(&m, ENGINE_LLAMACPP_GPU, &err) == 0);
    CHECK(m.flops[PREC_FP8] == 7e12 && m.flops[PREC_FP16] == b.flops[PREC_FP16] &&
          m.flops_eff == b.flops_eff && m.bw_eff == b.bw_eff);
}

/* Text with YAML's Unicode line breaks NEL, LS and PS (U+0085, U+2028,
 * U+2029) reads back unchanged: unescaped, a reader folds each into a space
 * (found by tests/fuzz/fuzz_card); so does a C1 control (U+0080), which a
 * reader refuses unescaped (found by fuzz_caltable). */
static void test_card_round_trip_line_breaks(void)
{
    hw_card_t a, b;
    err_t err = {0};
    CHECK(cards_load_hw_file(ROOT "models/hardware/raspberry-pi-5.yaml", &a, &err) == 0);
    snprintf(a.source, sizeof a.source, "a\xc2\x85" "b\xe2\x80\xa8" "c\xe2\x80\xa9" "d");
    snprintf(a.name, sizeof a.name, "pi\xc2\x85" "5\xc2\x80");
    if (hw_round_trip(&a, &b) != 0) return;
    CHECK_STR(a.source, b.source);
    CHECK_STR(a.name, b.name);
}

int main(void)
{
    RUN(test_llm_cards);
    RUN(test_hw_cards);
    RUN(test_precision);
    RUN(test_weight_formats);
    RUN(test_scenario_name_lists);
    RUN(test_inline_and_base);
    RUN(test_card_file_errors);
    RUN(test_card_round_trip);
    RUN(test_llm_tied_round_trip);
    RUN(test_engines);
    RUN(test_card_round_trip_line_breaks);
    return check_done();
}
