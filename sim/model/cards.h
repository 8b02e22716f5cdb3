/* cards — LLM architecture cards and hardware cards (models/llm, models/hardware).
 *
 * A card is YAML; a scenario names one by path (next to the scenario, else
 * relative to the repository root: sim/base/datapath.h) or inlines its keys. Values are datasheet
 * values; every card file carries a `source:` naming where they come from.
 */
#ifndef SPECSIM_CARDS_H
#define SPECSIM_CARDS_H

#include <stddef.h>
#include <stdio.h>

#include "base/err.h"
#include "model/thermal.h"

struct ynode;

#define CARD_NAME_MAX 64
#define CARD_TEXT_MAX 640

typedef struct llm_card {
    char name[CARD_NAME_MAX];
    int layers;
    int hidden;     /* model width d */
    int heads;      /* attention (query) heads */
    int kv_heads;   /* KV heads (GQA when < heads) */
    int ffn;        /* MLP inner width */
    int vocab;
    int gated_mlp;  /* 1: SwiGLU (gate, up, down); 0: (up, down) */
    int tied_embeddings; /* 1: the lm_head is the token embedding table
                          * (stored once); 0: two matrices */
    char source[CARD_TEXT_MAX];
} llm_card_t;

/* Precisions a hardware card gives peak rates for. */
enum precision {
    PREC_FP32 = 0,
    PREC_FP16,
    PREC_W8A16,
    PREC_W4A16,
    PREC_W4A4,
    PREC_FP8,     /* e4m3 weights and activations, fp16 KV cache */
    PREC_COUNT
};

/* Serving engines whose kernels reach different shares of a device's peaks
 * (docs/validation.md, "Engine profiles"): a card may give each a set of
 * efficiencies (`engines:`), used when a caller names the engine
 * (`specsim step --engine`). */
enum serving_engine {
    ENGINE_LLAMACPP_CPU = 0,
    ENGINE_LLAMACPP_GPU,
    ENGINE_MLC,
    ENGINE_QNN,
    ENGINE_COUNT
};

/* One engine's efficiencies on a card; 0 = not given: the card's own.
 * flops: the peak FLOP/s of the unit the engine computes on, where that
 * is not the one the card's own `flops:` describe (QNN runs prompts on a
 * phone's NPU, the card gives its GPU); w8a16 and w4a16 are timed at its
 * fp16 rate, as everywhere (service.c, compute_prec). */
typedef struct engine_eff {
    double bw_eff, flops_eff;
    double bw_eff_prec[PREC_COUNT];
    double flops[PREC_COUNT];
} engine_eff_t;

typedef struct hw_card {
    char name[CARD_NAME_MAX];
    char kind[16];              /* "gpu" or "cpu" (SoC) */
    double mem_bw;              /* bytes/s, datasheet peak */
    double mem_bytes;           /* device memory in bytes */
    double flops[PREC_COUNT];   /* peak FLOP/s (dense) by compute precision:
                                   W8A16 and W4A16 compute in fp16; W4A4 in int4;
                                   FP8 on fp8 tensor cores (0 where the device
                                   has no such path) */
    double bw_eff;              /* default achieved fraction of mem_bw */
    double flops_eff;           /* default achieved fraction of peak */
    /* Optional, 0 = not given: the achieved fraction of mem_bw by weight
     * format (`bw_eff_by_precision:`, indexed by enum precision); a format
     * not given uses bw_eff. Quantized GEMV kernels dequantise while they
     * read and reach less of the peak than fp16 ones (docs/validation.md). */
    double bw_eff_prec[PREC_COUNT];
    /* Optional, 0 = not given: the achieved fraction of the precision's
     * peak FLOP/s (`flops_eff_by_precision:`); a format not given uses
     * flops_eff. */
    double flops_eff_prec[PREC_COUNT];
    /* Optional, 0 = not modelled: kernel_floor, the least time one kernel
     * costs (launch and tail, seconds); when given, every operator costs at
     * least that, and the per-layer element-wise operators (two RMSNorms,
     * RoPE, SiLU·mul, two residual adds) and sampling are modelled as
     * kernels of their own. roofline_p: the exponent of the smooth maximum
     * (m^p + c^p)^(1/p) of an operator's memory and compute times (0: the
     * plain maximum). Both are fitted in docs/validation.md. */
    double kernel_floor, roofline_p;
    /* Optional, 0 = not given. interconnect_*: one GPU's link to its
     * tensor-parallel peers (bytes/s per direction, per-call latency in s);
     * power_w: board power under load (GPU TDP, SoC sustained); idle_power_w:
     * power while idle. */
    double interconnect_bw, interconnect_latency;
    /* Optional, 0 = not given: the latency of one step of a ring
     * all-reduce (2(n-1) steps over n GPUs), paid on top of
     * interconnect_latency, the per-call part. */
    double interconnect_step_latency;
    double power_w, idle_power_w;
    /* Optional, all 0 = none: efficiency sets by engine (enum serving_engine). */
    engine_eff_t engines[ENGINE_COUNT];
    /* Optional: battery capacity in Wh (0 = unknown: battery metrics NaN),
     * and the `thermal:` section (has_thermal 0 = none: full speed always;
     * model/thermal.h). */
    double battery_wh;
    int has_thermal;
    thermal_cfg_t thermal;
    char source[CARD_TEXT_MAX];
} hw_card_t;

/* The names, in enum precision's order, NULL-terminated (the .sub of a
 * key that takes one). */
extern const char *const precision_names[PREC_COUNT + 1];
/* Parses "fp16", "w8a16", "w4a16", "w4a4", "fp32", "fp8"; -1 when unknown. */
int precision_parse(const char *s);
const char *precision_name(int prec);
/* Bytes per weight including quantisation metadata (g128 fp16 scale + 4-bit
 * zero per group for the w4 formats; fp16 scale per row-group for w8; fp8:
 * one byte, its per-tensor or per-channel scale negligible). */
double precision_weight_bytes(int prec);

/* A named weight format (docs/formats.md, "Weight formats"): a quantized
 * layout as an engine stores it. It computes at `prec` (that precision's
 * peak FLOP rate and its bw_eff_by_precision entry) but is read at its own
 * bits per weight, block scales, zeros and mixed tensors included, where
 * the precision's bytes are one reference layout (g128 with a scale and a
 * zero per group) for every format of its width. */
typedef struct weight_format {
    const char *name;
    int prec;       /* enum precision it computes at */
    double bits;    /* bits per weight, metadata included */
} weight_format_t;
/* The formats, NULL-name-terminated. */
extern const weight_format_t cards_weight_formats[];
/* A precision name ("w4a16": its own bytes) or a format name ("q4_0"): 0
 * with *prec and *bytes (per weight) set, or -1 when neither. */
int cards_weight_format_parse(const char *s, int *prec, double *bytes);
/* Every name cards_weight_format_parse takes, NULL-terminated: the
 * precisions in enum precision's order (so an index below PREC_COUNT is
 * that precision), then the formats in cards_weight_formats' order. The
 * names of a scenario key that takes a weight format (tenants.edge.quant,
 * cloud.precision, cloud.draft_precision), which stores the index. */
extern const char *const cards_weight_format_names[];
/* The index of s in cards_weight_format_names, or -1. */
int cards_weight_format_index(const char *s);

/* Engine names in enum serving_engine's order, NULL-terminated ("llamacpp_cpu",
 * "llamacpp_gpu", "mlc", "qnn"); cards_engine_parse: the index, -1 if unknown. */
extern const char *const cards_engine_names[ENGINE_COUNT + 1];
int cards_engine_parse(const char *s);
/* Replaces hw's efficiencies by the engine's set where it gives them
 * (bw_eff, flops_eff, each bw_eff_by_precision entry; the rest stay the
 * card's). 0, or -1 with err (ERR_INPUT) when the card gives no set for
 * the engine. */
int cards_hw_apply_engine(hw_card_t *hw, int engine, err_t *err);
/* "none", then cards_engine_names, NULL-terminated: the names of a scenario
 * key that names an engine (tenants.edge.engine, cloud.engine), which
 * stores the index: 0 none, i engine i - 1. */
extern const char *const cards_engine_key_names[ENGINE_COUNT + 2];

/* What a service model is built from when a caller names an engine and a
 * weight format: `specsim step --engine E --precision NAME` and a
 * scenario's engine and quant/precision keys alike. hw (changed in place)
 * takes the engine's efficiency set (engine < 0: none, hw stays the
 * card's; cards_hw_apply_engine), *prec and *bytes are the format's
 * (format: an index into cards_weight_format_names;
 * cards_weight_format_parse). 0, or -1 with err (ERR_INPUT): the card gives
 * no set for the engine, or format is out of range. */
int cards_serving_setup(hw_card_t *hw, int engine, int format, int *prec, double *bytes,
                        err_t *err);

/* Writes into out (size outsz) the path to open for a card reference
 * given on the command line: datapath_resolve from the working directory
 * (as given if absolute or if it exists relative to the working directory,
 * else relative to $SPECSIM_ROOT, else relative to the build-time source
 * root). Returns 0, or
 * -1 when no candidate exists (out then holds the name). */
int cards_resolve_path(const char *ref, char *out, size_t outsz);

/* Loads a card file into *out (zeroed first). Errors are ERR_INPUT
 * "CARDFILE:LINE:COL: key: problem" (a file must carry `source:`). */
int cards_load_llm_file(const char *path, llm_card_t *out, err_t *err);
int cards_load_hw_file(const char *path, hw_card_t *out, err_t *err);

/* A card from a scenario value: a path scalar (see cards_resolve_path) or an
 * inline mapping of the card's keys, optionally with `base: PATH`, a card
 * file whose keys the mapping then overrides. `key` is the dotted key used in
 * messages about the reference and the inline keys (errors inside a card
 * file name that file and the card key). `ref` (size refsz) receives the path
 * as written, or "inline" / "inline (base PATH)". Defaults: kv_heads = heads,
 * gated_mlp true; w8a16 and w4a16 rates = the fp16 rate, w4a4 0, bw_eff 0.8,
 * flops_eff 0.6; name = file stem (or "inline"). */
int cards_llm_from_node(const struct ynode *node, const char *key,
                        llm_card_t *out, char *ref, size_t refsz, err_t *err);
int cards_hw_from_node(const struct ynode *node, const char *key,
                       hw_card_t *out, char *ref, size_t refsz, err_t *err);

/* The same with a scenario's context (sim/io/keytab.h): a relative path is
 * looked up from c->dir (sim/base/datapath.h) and read through c->files; errors
 * go to c->err. */
struct keytab_ctx;
int cards_llm_from_ctx(const struct keytab_ctx *c, const struct ynode *node,
                       const char *key, llm_card_t *out, char *ref, size_t refsz);
int cards_hw_from_ctx(const struct keytab_ctx *c, const struct ynode *node,
                      const char *key, hw_card_t *out, char *ref, size_t refsz);

/* Write every key of a card as a block mapping at `indent`, in a form
 * cards_*_from_node reads back to the same card. 0 or -1 on write error. */
int cards_write_llm(FILE *f, const llm_card_t *c, int indent);
int cards_write_hw(FILE *f, const hw_card_t *c, int indent);

#endif
