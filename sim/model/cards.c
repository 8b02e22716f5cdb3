/* cards — LLM and hardware cards (see cards.h). */
#include "model/cards.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/datapath.h"
#include "io/infile.h"
#include "io/keytab.h"
#include "io/ynode.h"

const char *const precision_names[PREC_COUNT + 1] = {"fp32", "fp16", "w8a16", "w4a16",
                                                     "w4a4", "fp8", NULL};

int precision_parse(const char *s)
{
    for (int i = 0; i < PREC_COUNT; i++)
        if (strcmp(s, precision_names[i]) == 0) return i;
    return -1;
}

const char *precision_name(int p)
{
    return (unsigned)p < PREC_COUNT ? precision_names[p] : "?";
}

/* Group size 128 along K. w8a16: int8 weight + one fp16 scale per group.
 * w4a16/w4a4: 4-bit weight + fp16 scale (2 B) + 4-bit zero (0.5 B) per
 * group — the reference format of docs/design.md. */
double precision_weight_bytes(int p)
{
    switch (p) {
    case PREC_FP32: return 4.0;
    case PREC_FP16: return 2.0;
    case PREC_W8A16: return 1.0 + 2.0 / 128.0;
    case PREC_W4A16:
    case PREC_W4A4: return 0.5 + (2.0 + 0.5) / 128.0;
    case PREC_FP8: return 1.0;
    default: return 0.0;
    }
}

/* Bits per weight of the layouts the published points of docs/validation.md
 * use, from each format's block layout (a block of B weights at b bits plus
 * its metadata, per weight):
 *   q4_0     GGUF: 32 4-bit weights + one fp16 scale: (32*4 + 16) / 32
 *   q4_1     GGUF: 32 4-bit weights + fp16 scale and fp16 min: (128 + 32) / 32
 *   q8_0     GGUF: 32 int8 weights + one fp16 scale: (32*8 + 16) / 32
 *   q4_K_M   GGUF mix: Q4_K super-blocks (4.5 bits) for most tensors, Q6_K
 *            (6.5625 bits) for the output matrix and part of attn_v and
 *            ffn_down; llama.cpp's quantize tool lists 4.58 GiB for
 *            Llama-3-8B (8.03e9 weights: 4.90 bits) and 3.80 GiB for
 *            LLaMA-7B (6.74e9: 4.84 bits); 4.85, the 7B-class figure
 *   q4f16_1  MLC: group 32, fp16 scale, symmetric (no zero): 4 + 16/32
 *   int4-g32 gpt-fast int4 weight-only: group 32, bf16 scale and bf16
 *            zero per group: 4 + 32/32
 *   int4-g128  AWQ / GPTQ: group 128, fp16 scale + 4-bit zero: 4 + 20/128,
 *            the w4a16 reference layout
 *   int8-ch  gpt-fast int8 weight-only: one scale per output row, 16/K
 *            bits (< 0.004 at K = 4096), left out: 8 */
const weight_format_t cards_weight_formats[] = {
    {"q4_0", PREC_W4A16, 4.5},
    {"q4_1", PREC_W4A16, 5.0},
    {"q8_0", PREC_W8A16, 8.5},
    {"q4_K_M", PREC_W4A16, 4.85},
    {"q4f16_1", PREC_W4A16, 4.5},
    {"int4-g32", PREC_W4A16, 5.0},
    {"int4-g128", PREC_W4A16, 4.0 + 20.0 / 128.0},
    {"int8-ch", PREC_W8A16, 8.0},
    {NULL, 0, 0},
};

int cards_weight_format_parse(const char *s, int *prec, double *bytes)
{
    int p = precision_parse(s);
    if (p >= 0) {
        *prec = p;
        *bytes = precision_weight_bytes(p);
        return 0;
    }
    for (const weight_format_t *f = cards_weight_formats; f->name; f++)
        if (strcmp(s, f->name) == 0) {
            *prec = f->prec;
            *bytes = f->bits / 8.0;
            return 0;
        }
    return -1;
}

/* Written out (a static initializer cannot read precision_names and
 * cards_weight_formats); tests/unit/test_cards.c checks that it lists
 * exactly those, in that order. */
const char *const cards_weight_format_names[] = {
    "fp32", "fp16", "w8a16", "w4a16", "w4a4", "fp8",
    "q4_0", "q4_1", "q8_0", "q4_K_M", "q4f16_1", "int4-g32", "int4-g128", "int8-ch",
    NULL};

int cards_weight_format_index(const char *s)
{
    for (int i = 0; cards_weight_format_names[i]; i++)
        if (strcmp(s, cards_weight_format_names[i]) == 0) return i;
    return -1;
}

const char *const cards_engine_key_names[ENGINE_COUNT + 2] = {
    "none", "llamacpp_cpu", "llamacpp_gpu", "mlc", "qnn", NULL};

int cards_serving_setup(hw_card_t *hw, int engine, int format, int *prec, double *bytes,
                        err_t *err)
{
    if (engine >= 0 && cards_hw_apply_engine(hw, engine, err) != 0) return -1;
    int n = 0;
    while (cards_weight_format_names[n]) n++;
    if (format < 0 || format >= n)
        return err_set(err, ERR_INPUT, "unknown weight format %d", format);
    if (cards_weight_format_parse(cards_weight_format_names[format], prec, bytes) != 0)
        return err_set(err, ERR_INPUT, "weight format '%s' is not known to "
                       "cards_weight_format_parse", cards_weight_format_names[format]);
    return 0;
}

const char *const cards_engine_names[ENGINE_COUNT + 1] = {"llamacpp_cpu", "llamacpp_gpu",
                                                    "mlc", "qnn", NULL};

int cards_engine_parse(const char *s)
{
    for (int i = 0; i < ENGINE_COUNT; i++)
        if (strcmp(s, cards_engine_names[i]) == 0) return i;
    return -1;
}

/* Whether a set gives any efficiency (0 in every key: none). */
static int engine_set_given(const engine_eff_t *e)
{
    int given = e->bw_eff > 0 || e->flops_eff > 0;
    for (int p = 0; p < PREC_COUNT; p++) given |= e->bw_eff_prec[p] > 0 || e->flops[p] > 0;
    return given;
}

int cards_hw_apply_engine(hw_card_t *hw, int engine, err_t *err)
{
    if ((unsigned)engine >= ENGINE_COUNT)
        return err_set(err, ERR_INPUT, "unknown engine %d", engine);
    const engine_eff_t *e = &hw->engines[engine];
    if (!engine_set_given(e))
        return err_set(err, ERR_INPUT, "hardware card '%s' gives no engines.%s "
                       "(efficiencies for that engine)", hw->name, cards_engine_names[engine]);
    /* The set replaces the card's as a whole: an engine's bw_eff (flops_eff)
     * stands for every format it does not name itself, so the card's own
     * per-format entries, which would otherwise take precedence
     * (service_bw_eff, service_flops_eff), go with it. */
    if (e->bw_eff > 0) {
        hw->bw_eff = e->bw_eff;
        memset(hw->bw_eff_prec, 0, sizeof hw->bw_eff_prec);
    }
    if (e->flops_eff > 0) {
        hw->flops_eff = e->flops_eff;
        memset(hw->flops_eff_prec, 0, sizeof hw->flops_eff_prec);
    }
    /* w8a16 and w4a16 are timed at the fp16 rate (service.c, compute_prec),
     * so the set's fp16 rate serves them too. */
    for (int p = 0; p < PREC_COUNT; p++) {
        if (e->bw_eff_prec[p] > 0) hw->bw_eff_prec[p] = e->bw_eff_prec[p];
        if (e->flops[p] > 0) hw->flops[p] = e->flops[p];
    }
    return 0;
}

int cards_resolve_path(const char *ref, char *out, size_t outsz)
{
    return datapath_resolve(".", ref, out, outsz);
}

/* --- key tables ---------------------------------------------------------- */

#define LLM_INT(n, f, req)                                                    \
    {.name = n, KEYTAB_INT(llm_card_t, f), .min = 1, .max = 1e7, .flags = req}

static const keytab_key_t LLM_KEYS[] = {
    {.name = "name", KEYTAB_STRING(llm_card_t, name), .flags = KF_SKIPEMPTY},
    LLM_INT("layers", layers, KF_REQUIRED),
    LLM_INT("hidden", hidden, KF_REQUIRED),
    LLM_INT("heads", heads, KF_REQUIRED),
    LLM_INT("kv_heads", kv_heads, 0),
    LLM_INT("ffn", ffn, KF_REQUIRED),
    LLM_INT("vocab", vocab, KF_REQUIRED),
    {.name = "gated_mlp", KEYTAB_BOOL(llm_card_t, gated_mlp), .def = "true"},
    /* Written back only when true, so that the cards and scenarios written
     * before the key read back as they were. */
    {.name = "tied_embeddings", KEYTAB_BOOL(llm_card_t, tied_embeddings), .def = "false",
     .flags = KF_SKIPEMPTY},
    {.name = "source", KEYTAB_STRING(llm_card_t, source)},
    {.name = "base", .type = KT_SKIP},
    {.name = NULL, .type = KT_END}};

#define FLOPS_KEY(n, p, req, dflt)                                                  \
    {.name = n, .type = KT_NUM, .off = (p) * sizeof(double), .unit = UNIT_FLOPS,   \
     .max = 1e21, .flags = req, .def = dflt}

/* w8a16 and w4a16 have no default here: they default to the fp16 rate
 * (hw_post), since both compute in fp16 after dequantising. */
static const keytab_key_t FLOPS_KEYS[] = {
    FLOPS_KEY("fp32", PREC_FP32, KF_REQUIRED | KF_MIN_OPEN, NULL),
    FLOPS_KEY("fp16", PREC_FP16, KF_REQUIRED | KF_MIN_OPEN, NULL),
    FLOPS_KEY("w8a16", PREC_W8A16, 0, NULL),
    FLOPS_KEY("w4a16", PREC_W4A16, 0, NULL),
    FLOPS_KEY("w4a4", PREC_W4A4, 0, "0"),
    FLOPS_KEY("fp8", PREC_FP8, KF_SKIPEMPTY, "0"),
    {.name = NULL, .type = KT_END}};

#define BWEFF_KEY(n, p)                                                           \
    {.name = n, .type = KT_NUM, .off = (p) * sizeof(double), .max = 1,             \
     .flags = KF_SKIPEMPTY, .def = "0", .zero_means = "0: bw_eff"}

/* bw_eff_by_precision: the formats whose kernels differ from fp16's GEMV. */
static const keytab_key_t BWEFF_KEYS[] = {
    BWEFF_KEY("fp32", PREC_FP32),
    BWEFF_KEY("fp16", PREC_FP16),
    BWEFF_KEY("w8a16", PREC_W8A16),
    BWEFF_KEY("w4a16", PREC_W4A16),
    BWEFF_KEY("w4a4", PREC_W4A4),
    BWEFF_KEY("fp8", PREC_FP8),
    {.name = NULL, .type = KT_END}};

#define FLOPSEFF_KEY(n, p)                                                        \
    {.name = n, .type = KT_NUM, .off = (p) * sizeof(double), .max = 1,             \
     .flags = KF_SKIPEMPTY, .def = "0", .zero_means = "0: flops_eff"}

/* flops_eff_by_precision: the formats whose GEMMs reach another fraction of
 * their own peak than fp16's (FP8's on Hopper, docs/validation.md). */
static const keytab_key_t FLOPSEFF_KEYS[] = {
    FLOPSEFF_KEY("fp32", PREC_FP32),
    FLOPSEFF_KEY("fp16", PREC_FP16),
    FLOPSEFF_KEY("w8a16", PREC_W8A16),
    FLOPSEFF_KEY("w4a16", PREC_W4A16),
    FLOPSEFF_KEY("w4a4", PREC_W4A4),
    FLOPSEFF_KEY("fp8", PREC_FP8),
    {.name = NULL, .type = KT_END}};

#define ENGINE_FLOPS_KEY(n, p)                                                    \
    {.name = n, .type = KT_NUM, .off = (p) * sizeof(double), .unit = UNIT_FLOPS,   \
     .max = 1e21, .flags = KF_SKIPEMPTY, .def = "0", .zero_means = "0: the card's"}

/* w8a16 and w4a16 compute at the fp16 rate after dequantising (service.c,
 * compute_prec): a rate of their own would be ignored, so it is refused,
 * saying why (as an unknown key it would be taken for a misspelling). */
static int refuse_weight_only_rate(keytab_ctx_t *c, const ynode_t *node, const char *key,
                                   const keytab_key_t *k, void *base)
{
    (void)k;
    (void)base;
    return keytab_err(c, node, key, "w8a16 and w4a16 compute at the fp16 rate after "
                      "dequantising: give the unit's fp16");
}

#define ENGINE_FLOPS_REFUSED(n)                                                       {.name = n, .type = KT_CUSTOM, .parse = refuse_weight_only_rate, .flags = KF_NOWRITE}

/* engines.NAME.flops: the engine's own compute unit (engine_eff_t), by
 * the precisions the service model computes at. */
static const keytab_key_t ENGINE_FLOPS_KEYS[] = {
    ENGINE_FLOPS_KEY("fp32", PREC_FP32),
    ENGINE_FLOPS_KEY("fp16", PREC_FP16),
    ENGINE_FLOPS_KEY("w4a4", PREC_W4A4),
    ENGINE_FLOPS_KEY("fp8", PREC_FP8),
    ENGINE_FLOPS_REFUSED("w8a16"),
    ENGINE_FLOPS_REFUSED("w4a16"),
    {.name = NULL, .type = KT_END}};

/* engines.NAME: one engine's efficiencies; 0 or absent: the card's. */
static const keytab_key_t ENGINE_KEYS[] = {
    {.name = "bw_eff", KEYTAB_NUM(engine_eff_t, bw_eff), .max = 1, .flags = KF_SKIPEMPTY,
     .def = "0", .zero_means = "0: the card's"},
    {.name = "flops_eff", KEYTAB_NUM(engine_eff_t, flops_eff), .max = 1,
     .flags = KF_SKIPEMPTY, .def = "0", .zero_means = "0: the card's"},
    {.name = "bw_eff_by_precision", KEYTAB_SECTION(engine_eff_t, bw_eff_prec, double *),
     .sub = BWEFF_KEYS, .flags = KF_SKIPEMPTY},
    {.name = "flops", KEYTAB_SECTION(engine_eff_t, flops, double *),
     .sub = ENGINE_FLOPS_KEYS, .flags = KF_SKIPEMPTY},
    {.name = NULL, .type = KT_END}};

#define ENGINE_KEY(n, e)                                                          \
    {.name = n, .type = KT_SECTION, .off = (e) * sizeof(engine_eff_t),             \
     .sub = ENGINE_KEYS, .flags = KF_SKIPEMPTY}

static const keytab_key_t ENGINES_KEYS[] = {
    ENGINE_KEY("llamacpp_cpu", ENGINE_LLAMACPP_CPU),
    ENGINE_KEY("llamacpp_gpu", ENGINE_LLAMACPP_GPU),
    ENGINE_KEY("mlc", ENGINE_MLC),
    ENGINE_KEY("qnn", ENGINE_QNN),
    {.name = NULL, .type = KT_END}};

/* --- the thermal section (model/thermal.h) ------------------------------ */

static const keytab_key_t LEVEL_KEYS[] = {
    {.name = "above", KEYTAB_NUM(thermal_level_t, above), .min = -273.15, .max = 1e4,
     .flags = KF_REQUIRED},
    {.name = "speed", KEYTAB_NUM(thermal_level_t, speed), .max = 1,
     .flags = KF_REQUIRED | KF_MIN_OPEN},
    {.name = NULL, .type = KT_END}};

/* levels: a list of {above, speed} mappings, temperatures rising. */
static int parse_levels(keytab_ctx_t *c, const ynode_t *node, const char *key,
                        const keytab_key_t *k, void *base)
{
    (void)k;
    thermal_cfg_t *t = base;   /* THERMAL_KEYS fill a thermal_cfg_t */
    if (node->kind != YNODE_SEQ)
        return keytab_err(c, node, key, "expected a list of {above, speed} mappings, got %s",
                          ynode_kind_name(node));
    if (node->n < 1 || node->n > THERMAL_LEVELS_MAX)
        return keytab_err(c, node, key, "give 1 to %d levels (got %zu)",
                          THERMAL_LEVELS_MAX, node->n);
    for (size_t i = 0; i < node->n; i++) {
        char ik[KEYTAB_KEY_MAX], idx[24], sub[KEYTAB_KEY_MAX];
        snprintf(idx, sizeof idx, "%zu", i);
        keytab_join(ik, key, idx);
        const ynode_t *item = node->items[i];
        if (item->kind != YNODE_MAP)
            return keytab_err(c, item, ik, "expected a mapping {above, speed}, got %s",
                              ynode_kind_name(item));
        keytab_layer_t l = {item, ik};
        thermal_level_t *v = &t->level[i];
        if (keytab_resolve(c, LEVEL_KEYS, &l, 1, v) != 0) return -1;
        if (i > 0 && !(v->above > v[-1].above)) {
            keytab_join(sub, ik, "above");
            return keytab_err(c, ynode_get(item, "above"), sub,
                              "must be above the previous level's (%g)", v[-1].above);
        }
        if (i > 0 && v->speed > v[-1].speed) {
            keytab_join(sub, ik, "speed");
            return keytab_err(c, ynode_get(item, "speed"), sub,
                              "must not exceed the previous level's (%g): a hotter "
                              "level runs slower", v[-1].speed);
        }
    }
    t->nlevels = (int)node->n;
    return 0;
}

static int write_levels(FILE *f, const keytab_key_t *k, const void *base, int indent)
{
    (void)k;
    const thermal_cfg_t *t = base;
    if (fputc('\n', f) == EOF) return -1;
    for (int i = 0; i < t->nlevels; i++) {
        char a[64], sp[64];
        if (units_format(t->level[i].above, UNIT_NUMBER, a, sizeof a) < 0 ||
            units_format(t->level[i].speed, UNIT_NUMBER, sp, sizeof sp) < 0 ||
            fprintf(f, "%*s- {above: %s, speed: %s}\n", indent + 2, "", a, sp) < 0)
            return -1;
    }
    return 0;
}

static const keytab_key_t THERMAL_KEYS[] = {
    {.name = "ambient", KEYTAB_NUM(thermal_cfg_t, ambient), .min = -273.15, .max = 1e4,
     .def = "25"},
    {.name = "r_th", KEYTAB_NUM(thermal_cfg_t, r_th), .max = 1e6,
     .flags = KF_REQUIRED | KF_MIN_OPEN},
    {.name = "tau", KEYTAB_NUM(thermal_cfg_t, tau), .unit = UNIT_DURATION, .max = 1e9,
     .flags = KF_REQUIRED | KF_MIN_OPEN},
    {.name = "start", KEYTAB_NUM(thermal_cfg_t, start), .min = -273.15, .max = 1e4,
     .aux = KEYTAB_OFF(thermal_cfg_t, has_start, int), .flags = KF_HAS},
    {.name = "hysteresis", KEYTAB_NUM(thermal_cfg_t, hysteresis), .max = 1e4,
     .def = "0"},
    {.name = "levels", KEYTAB_CUSTOM(thermal_cfg_t, level, thermal_level_t *),
     .parse = parse_levels, .write = write_levels, .flags = KF_REQUIRED},
    {.name = NULL, .type = KT_END}};

static int parse_thermal(keytab_ctx_t *c, const ynode_t *node, const char *key,
                         const keytab_key_t *k, void *base)
{
    thermal_cfg_t *t = (thermal_cfg_t *)((char *)base + k->off);
    if (node->kind != YNODE_MAP)
        return keytab_err(c, node, key, "expected a mapping (ambient, r_th, tau, "
                          "levels, ...), got %s", ynode_kind_name(node));
    memset(t, 0, sizeof *t);
    keytab_layer_t l = {node, key};
    return keytab_resolve(c, THERMAL_KEYS, &l, 1, t);
}

static int write_thermal(FILE *f, const keytab_key_t *k, const void *base, int indent)
{
    if (fputc('\n', f) == EOF) return -1;
    return keytab_write(f, THERMAL_KEYS, (const char *)base + k->off, indent + 2);
}

static const char *const HW_KINDS[] = {"gpu", "cpu", NULL};

static const keytab_key_t HW_KEYS[] = {
    {.name = "name", KEYTAB_STRING(hw_card_t, name), .flags = KF_SKIPEMPTY},
    {.name = "kind", KEYTAB_ENUMSTR(hw_card_t, kind), .flags = KF_REQUIRED | KF_ENUMSTR,
     .sub = HW_KINDS},
    {.name = "mem_bw", KEYTAB_NUM(hw_card_t, mem_bw), .unit = UNIT_BANDWIDTH,
     .max = 1e18, .flags = KF_REQUIRED | KF_MIN_OPEN},
    {.name = "mem", KEYTAB_NUM(hw_card_t, mem_bytes), .unit = UNIT_SIZE, .max = 1e18,
     .flags = KF_REQUIRED | KF_MIN_OPEN},
    {.name = "flops", KEYTAB_SECTION(hw_card_t, flops, double *), .sub = FLOPS_KEYS},
    {.name = "bw_eff", KEYTAB_NUM(hw_card_t, bw_eff), .max = 1,
     .flags = KF_MIN_OPEN, .def = "0.8"},
    {.name = "flops_eff", KEYTAB_NUM(hw_card_t, flops_eff), .max = 1,
     .flags = KF_MIN_OPEN, .def = "0.6"},
    {.name = "bw_eff_by_precision", KEYTAB_SECTION(hw_card_t, bw_eff_prec, double *),
     .sub = BWEFF_KEYS},
    {.name = "flops_eff_by_precision", KEYTAB_SECTION(hw_card_t, flops_eff_prec, double *),
     .sub = FLOPSEFF_KEYS, .flags = KF_SKIPEMPTY},
    {.name = "engines", KEYTAB_SECTION(hw_card_t, engines, engine_eff_t *),
     .sub = ENGINES_KEYS, .flags = KF_SKIPEMPTY},
    {.name = "kernel_floor", KEYTAB_NUM(hw_card_t, kernel_floor), .unit = UNIT_DURATION,
     .max = 1, .flags = KF_SKIPEMPTY, .def = "0",
     .zero_means = "0: no floor, element-wise operators not modelled"},
    {.name = "roofline_p", KEYTAB_NUM(hw_card_t, roofline_p), .max = 64,
     .flags = KF_SKIPEMPTY, .def = "0", .zero_means = "0: max(memory, compute)"},
    /* Optional; 0 = not given (no tensor parallelism, no energy figure). */
    {.name = "interconnect_bw", KEYTAB_NUM(hw_card_t, interconnect_bw),
     .unit = UNIT_BANDWIDTH, .max = 1e18, .flags = KF_SKIPEMPTY, .def = "0",
     .zero_means = "0: none (tensor_parallel must be 1)"},
    {.name = "interconnect_latency", KEYTAB_NUM(hw_card_t, interconnect_latency),
     .unit = UNIT_DURATION, .max = 1,
     .flags = KF_SKIPEMPTY, .def = "0"},
    {.name = "interconnect_step_latency", KEYTAB_NUM(hw_card_t, interconnect_step_latency),
     .unit = UNIT_DURATION, .max = 1, .flags = KF_SKIPEMPTY, .def = "0"},
    {.name = "power_w", KEYTAB_NUM(hw_card_t, power_w), .max = 1e6,
     .flags = KF_SKIPEMPTY, .def = "0", .zero_means = "0: unknown (energy metrics NaN)"},
    {.name = "idle_power_w", KEYTAB_NUM(hw_card_t, idle_power_w), .max = 1e6,
     .flags = KF_SKIPEMPTY, .def = "0", .zero_means = "0: not counted"},
    {.name = "battery_wh", KEYTAB_NUM(hw_card_t, battery_wh), .max = 1e6,
     .flags = KF_SKIPEMPTY, .def = "0", .zero_means = "0: unknown (battery metrics NaN)"},
    {.name = "thermal", KEYTAB_CUSTOM(hw_card_t, thermal, thermal_cfg_t),
     .aux = KEYTAB_OFF(hw_card_t, has_thermal, int), .flags = KF_HAS,
     .parse = parse_thermal, .write = write_thermal},
    {.name = "source", KEYTAB_STRING(hw_card_t, source)},
    {.name = "base", .type = KT_SKIP},
    {.name = NULL, .type = KT_END}};

/* --- loading ------------------------------------------------------------- */

enum card_kind { CARD_LLM, CARD_HW };

typedef struct card_load {
    keytab_ctx_t c;
    keytab_layer_t layers[2];
    int nl;
    ynode_t *file_root;       /* owned when owns_root, else the set's */
    int owns_root, read_failed;
    char path[KEYTAB_PATH_MAX];/* resolved card file: node src, keep alive */
} card_load_t;

/* The node giving `name` in the last layer that has it (for messages). */
static const ynode_t *layer_node(const card_load_t *L, const char *name)
{
    for (int l = L->nl - 1; l >= 0; l--) {
        const ynode_t *v = ynode_get(L->layers[l].map, name);
        if (v) return v;
    }
    return L->layers[L->nl - 1].map;
}

static const char *layer_prefix(const card_load_t *L, const char *name)
{
    for (int l = L->nl - 1; l >= 0; l--)
        if (ynode_get(L->layers[l].map, name)) return L->layers[l].prefix;
    return L->layers[L->nl - 1].prefix;
}

static int layer_err(card_load_t *L, const char *name, const char *msg)
{
    char key[KEYTAB_KEY_MAX];
    keytab_join(key, layer_prefix(L, name), name);
    return keytab_err(&L->c, layer_node(L, name), key, "%s", msg);
}

/* Reads and parses L->path: through the command's set of files when there
 * is one (each card parsed once per command, the tree shared), else from
 * disk. 0, or -1 with L->c.err set and L->read_failed telling a read error
 * from a syntax error. */
static int read_card(card_load_t *L)
{
    if (L->c.files) {
        const ynode_t *tree;
        int rc = infiles_yaml(L->c.files, L->path, INFILE_YAML_MAX, &tree, L->c.err);
        L->read_failed = rc == -1;
        L->file_root = (ynode_t *)(uintptr_t)tree;
        L->owns_root = 0;
        return rc ? -1 : 0;
    }
    char *text;
    size_t len;
    if (infile_read(L->path, INFILE_YAML_MAX, &text, &len, L->c.err) != 0) {
        L->read_failed = 1;
        return -1;
    }
    int rc = ynode_parse(L->path, NULL, text, len, 1, 0, &L->file_root, L->c.err);
    L->owns_root = 1;
    free(text);
    return rc;
}

/* Opens the card file `ref` (node gives the mark and key for messages). */
static int open_card(card_load_t *L, const ynode_t *node, const char *key)
{
    if (node->kind != YNODE_SCALAR)
        return keytab_err(&L->c, node, key, "expected a card file path, got %s",
                          ynode_kind_name(node));
    if (datapath_resolve(L->c.dir, node->str, L->path, sizeof L->path) != 0)
        return keytab_err(&L->c, node, key, "card file '%s' not found (%s: %s)",
                          node->str, datapath_where(L->c.dir), SPECSIM_ROOT);
    if (read_card(L) != 0) {
        if (L->c.err->code != ERR_INPUT || L->c.err->msg[0] == 0) return -1;
        if (!L->read_failed) return -1;
        char msg[ERR_MSG_MAX];
        snprintf(msg, sizeof msg, "%s", L->c.err->msg);
        return keytab_err(&L->c, node, key, "cannot read card file: %s", msg);
    }
    if (!L->file_root)
        return err_set(L->c.err, ERR_INPUT, "%s:1:1: (top level): the card file is empty",
                       L->path);
    L->c.where = L->file_root;
    const ynode_pair_t *b = ynode_find(L->file_root, "base");
    if (b)
        return err_set(L->c.err, ERR_INPUT, "%s:%d:%d: base: only an inline card may "
                       "name a base file", b->ksrc, b->kline, b->kcol);
    L->layers[L->nl++] = (keytab_layer_t){L->file_root, ""};
    return 0;
}

static void file_stem(const char *path, char *out, size_t outsz)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    size_t n = strcspn(b, ".");
    if (n >= outsz) n = outsz - 1;
    memcpy(out, b, n);
    out[n] = 0;
}

/* Sets up the layers for a card value: path, or inline mapping [+ base]. */
static int card_layers(card_load_t *L, const keytab_ctx_t *c,
                       const ynode_t *node, const char *key, char *ref,
                       size_t refsz)
{
    memset(L, 0, sizeof *L);
    L->c.err = c->err;
    L->c.dir = c->dir;
    L->c.files = c->files;
    L->c.where = node;
    if (node->kind == YNODE_SCALAR) {
        if (open_card(L, node, key) != 0) return -1;
        snprintf(ref, refsz, "%s", node->str);
        return 0;
    }
    if (node->kind != YNODE_MAP)
        return keytab_err(&L->c, node, key,
                          "expected a card file path or a mapping, got %s",
                          ynode_kind_name(node));
    const ynode_t *base = ynode_get(node, "base");
    snprintf(ref, refsz, "inline");
    if (base && !ynode_is_null(base)) {
        char bkey[KEYTAB_KEY_MAX];
        keytab_join(bkey, key, "base");
        if (open_card(L, base, bkey) != 0) return -1;
        snprintf(ref, refsz, "inline (base %s)", base->str);
    }
    L->layers[L->nl++] = (keytab_layer_t){node, key};
    return 0;
}

static void default_text(card_load_t *L, char *field, size_t size,
                         const char *def)
{
    if (*field) return;
    if (L->file_root) file_stem(L->path, field, size);
    else snprintf(field, size, "%s", def);
}

/* A card file must say where its numbers come from. Checked after the keys
 * are parsed, so that a misspelt key is reported first (it is the likelier
 * mistake, and may be the misspelt `source` itself). */
static int require_source(const card_load_t *L)
{
    if (!L->file_root || L->file_root->kind != YNODE_MAP ||
        ynode_get(L->file_root, "source"))
        return 0;
    return err_set(L->c.err, ERR_INPUT,
                   "%s:%d:%d: source: required in a card file (say where "
                   "the numbers come from)",
                   L->path, L->file_root->line, L->file_root->col);
}

static int llm_post(card_load_t *L, llm_card_t *m)
{
    if (require_source(L) != 0) return -1;
    default_text(L, m->name, sizeof m->name, "inline");
    default_text(L, m->source, sizeof m->source, "inline");
    if (m->kv_heads == 0) m->kv_heads = m->heads;
    if (m->hidden % m->heads != 0)
        return layer_err(L, "heads", "hidden must be a multiple of heads");
    if (m->heads % m->kv_heads != 0 || m->kv_heads > m->heads)
        return layer_err(L, "kv_heads", "heads must be a multiple of kv_heads");
    return 0;
}

/* An engine set written with no efficiency above 0 (`mlc: {}`) would be
 * taken for no set, and naming the engine would fail far from the card:
 * refused where it is written (the topmost layer that names it). */
static int hw_check_engines(card_load_t *L, const hw_card_t *h)
{
    for (int e = 0; e < ENGINE_COUNT; e++) {
        if (engine_set_given(&h->engines[e])) continue;
        for (int l = L->nl - 1; l >= 0; l--) {
            const ynode_t *es = ynode_get(L->layers[l].map, "engines");
            const ynode_t *n = es && es->kind == YNODE_MAP
                                   ? ynode_get(es, cards_engine_names[e]) : NULL;
            if (!n) continue;
            char sec[KEYTAB_KEY_MAX], key[KEYTAB_KEY_MAX];
            keytab_join(sec, L->layers[l].prefix, "engines");
            keytab_join(key, sec, cards_engine_names[e]);
            return keytab_err(&L->c, n, key, "gives no value above 0 (bw_eff, "
                              "flops_eff, bw_eff_by_precision or flops); an empty set would "
                              "be taken for none: give one or drop the set");
        }
    }
    return 0;
}

static int hw_post(card_load_t *L, hw_card_t *h)
{
    if (require_source(L) != 0) return -1;
    default_text(L, h->name, sizeof h->name, "inline");
    default_text(L, h->source, sizeof h->source, "inline");
    if (h->flops[PREC_W8A16] < 0) h->flops[PREC_W8A16] = h->flops[PREC_FP16];
    if (h->flops[PREC_W4A16] < 0) h->flops[PREC_W4A16] = h->flops[PREC_FP16];
    if (h->has_thermal && !(h->power_w > 0))
        return layer_err(L, "thermal", "needs power_w, the power that heats the "
                         "device while it computes");
    return hw_check_engines(L, h);
}

static int card_from_node(enum card_kind kind, const keytab_ctx_t *c,
                          const ynode_t *node, const char *key, void *out,
                          char *ref, size_t refsz)
{
    card_load_t L;
    int rc = card_layers(&L, c, node, key, ref, refsz);
    if (rc == 0 && kind == CARD_LLM) {
        llm_card_t *m = out;
        memset(m, 0, sizeof *m);
        rc = keytab_resolve(&L.c, LLM_KEYS, L.layers, L.nl, m);
        if (rc == 0) rc = llm_post(&L, m);
    } else if (rc == 0) {
        hw_card_t *h = out;
        memset(h, 0, sizeof *h);
        h->flops[PREC_W8A16] = h->flops[PREC_W4A16] = -1;
        rc = keytab_resolve(&L.c, HW_KEYS, L.layers, L.nl, h);
        if (rc == 0) rc = hw_post(&L, h);
    }
    if (L.owns_root) ynode_free(L.file_root);
    return rc;
}

/* The command line's context: paths as given, from the working directory. */
static keytab_ctx_t cli_ctx(err_t *err)
{
    return (keytab_ctx_t){.err = err, .dir = "."};
}

int cards_llm_from_node(const struct ynode *node, const char *key,
                        llm_card_t *out, char *ref, size_t refsz, err_t *err)
{
    keytab_ctx_t c = cli_ctx(err);
    return card_from_node(CARD_LLM, &c, node, key, out, ref, refsz);
}

int cards_hw_from_node(const struct ynode *node, const char *key,
                       hw_card_t *out, char *ref, size_t refsz, err_t *err)
{
    keytab_ctx_t c = cli_ctx(err);
    return card_from_node(CARD_HW, &c, node, key, out, ref, refsz);
}

int cards_llm_from_ctx(const struct keytab_ctx *c, const struct ynode *node,
                       const char *key, llm_card_t *out, char *ref, size_t refsz)
{
    return card_from_node(CARD_LLM, c, node, key, out, ref, refsz);
}

int cards_hw_from_ctx(const struct keytab_ctx *c, const struct ynode *node,
                      const char *key, hw_card_t *out, char *ref, size_t refsz)
{
    return card_from_node(CARD_HW, c, node, key, out, ref, refsz);
}

static int load_file(enum card_kind kind, const char *path, void *out,
                     err_t *err)
{
    ynode_t n = {.kind = YNODE_SCALAR, .src = path, .line = 1, .col = 1,
                 .str = (char *)(uintptr_t)path, .plain = 1};
    char ref[KEYTAB_PATH_MAX];
    keytab_ctx_t c = cli_ctx(err);
    return card_from_node(kind, &c, &n, "card", out, ref, sizeof ref);
}

int cards_load_llm_file(const char *path, llm_card_t *out, err_t *err)
{
    return load_file(CARD_LLM, path, out, err);
}

int cards_load_hw_file(const char *path, hw_card_t *out, err_t *err)
{
    return load_file(CARD_HW, path, out, err);
}

int cards_write_llm(FILE *f, const llm_card_t *c, int indent)
{
    return keytab_write(f, LLM_KEYS, c, indent);
}

int cards_write_hw(FILE *f, const hw_card_t *c, int indent)
{
    return keytab_write(f, HW_KEYS, c, indent);
}
