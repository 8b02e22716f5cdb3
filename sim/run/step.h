/* step — the service model's times for the questions published serving
 * benchmarks answer, asked of a hardware card and a model card directly (no
 * scenario): one decode step of B one-token jobs over a context, a prefill
 * of B prompts of N tokens, and a static batch run (B prompts of N tokens
 * prefilled in one iteration, then G - 1 decode steps of the B jobs at a
 * growing context), on one GPU or TP of them in tensor parallelism. Every
 * time comes from the service model (sim/model/service.h) at the cards'
 * datasheet peaks times their default efficiencies, as the simulator times a
 * cloud or edge iteration without a calibration table. `specsim step`
 * (sim/cli/cli_step.c) prints them; docs/validation.md compares them with
 * published measurements (scripts/validate-published.sh).
 *
 * Library code: results come back in the records below, errors through
 * err_t; nothing is printed.
 */
#ifndef SPECSIM_STEP_H
#define SPECSIM_STEP_H

#include "base/api.h"

#include "base/err.h"

/* What step_create was given. A card is a path (looked up as
 * cards_resolve_path does: the working directory, $SPECSIM_ROOT, the source
 * tree) or a bare NAME, which means models/hardware/NAME.yaml or
 * models/llm/NAME.yaml. */
typedef struct step_setup {
    const char *hardware;   /* hardware card (models/hardware/) */
    const char *model;      /* LLM card (models/llm/) */
    const char *precision;  /* fp16, fp32, w8a16, w4a16, w4a4, fp8, or a weight
                               format (cards.h cards_weight_formats); NULL: fp16 */
    int tp;                 /* GPUs in tensor parallelism, >= 1 */
    const char *overhead;   /* fixed time of every iteration, a duration
                               ("0.5ms"); NULL: 0 */
    const char *engine;     /* an engine whose efficiencies the hardware card
                               gives (cards.h cards_engine_names); NULL: the card's */
    const char *kv_precision; /* the K,V cache's elements: fp16 or fp8
                                 (service_kv_precision_bytes); NULL: fp16 */
} step_setup_t;

/* The input an ERR_INPUT error of step_create is about. */
typedef enum step_input {
    STEP_IN_NONE = 0,
    STEP_IN_HARDWARE,
    STEP_IN_MODEL,
    STEP_IN_PRECISION,
    STEP_IN_TP,
    STEP_IN_OVERHEAD,
    STEP_IN_ENGINE,
    STEP_IN_KV_PRECISION
} step_input_t;

typedef struct step step_t;

/* The largest batch, and the largest prompt, generate and context, the
 * functions below take. */
#define STEP_BATCH_MAX (1 << 20)
#define STEP_TOKENS_MAX (1 << 24)

/* Loads the cards and creates the service model. Returns NULL with err
 * filled (and *bad naming the input at fault when it is ERR_INPUT); the
 * caller frees with step_free. */
SPECSIM_API step_t *step_create(const step_setup_t *in, step_input_t *bad, err_t *err);
SPECSIM_API void step_free(step_t *st);

/* One iteration: `batch` jobs of `tokens` new tokens each over `context`
 * cached tokens. time_s is the service model's time, overhead included;
 * tok_s = batch·tokens / time_s; memory_s and compute_s are the overhead plus
 * the memory-bound and the compute-bound times of the linear layers and
 * attention (as `specsim roofline` prints them); allreduce_s the
 * all-reduces of tensor parallelism (0 at tp = 1). weight_bytes, kv_bytes
 * and flops are one GPU's: weights and K,V read, FLOPs done. fits: 1 when
 * the replica's weights and the K,V of the batch after the iteration fit
 * its memory (tp × the card's), else 0. */
typedef struct step_iter {
    int batch, tokens, context;
    double time_s, tok_s, memory_s, compute_s, allreduce_s;
    double weight_bytes, kv_bytes, flops;
    int fits;
} step_iter_t;

/* One decode step: batch one-token jobs over context cached tokens each.
 * batch >= 1, context >= 0. 0, or -1 with err. */
SPECSIM_API int step_decode(const step_t *st, int batch, int context, step_iter_t *out,
                            err_t *err);

/* The same with `tokens` new tokens per job, each with its logits: a
 * verification iteration of blocks of that many tokens (tokens 1 is
 * step_decode). tokens >= 1. 0, or -1 with err. */
SPECSIM_API int step_verify(const step_t *st, int batch, int tokens, int context,
                            step_iter_t *out, err_t *err);

/* One linear layer over `tokens` rows as one kernel: the operator op (qkv,
 * o, gate_up, down or lm_head) of one layer, one GPU's share of it (n x k
 * weights), as sim/model/service.h's service_linear_op times it. */
typedef struct step_linear {
    int tokens;
    double n, k;   /* one GPU's share, as the bytes and flops count it */
    double time_s, memory_s, compute_s, bytes, flops;
} step_linear_t;

/* tokens >= 1; op as above (else ERR_INPUT). 0, or -1 with err. */
SPECSIM_API int step_linear(const step_t *st, const char *op, int tokens, step_linear_t *out,
                            err_t *err);

/* The prefill of batch prompts of `prompt` tokens in one iteration (each
 * from an empty cache; the logits of each prompt's last token only).
 * batch, prompt >= 1. 0, or -1 with err. */
SPECSIM_API int step_prefill(const step_t *st, int batch, int prompt, step_iter_t *out,
                             err_t *err);

/* A static batch run: the prefill of batch prompts of `prompt` tokens
 * (which gives each job its first token: prefill_s is the time to first
 * token), then generate - 1 decode steps of the batch, step k over
 * prompt + k - 1 cached tokens. total_s = prefill_s + decode_s; itl_s =
 * decode_s / (generate - 1), the mean time between output tokens (0 when
 * generate = 1); output_tok_s = batch·generate / total_s, all jobs'
 * generated tokens; seq_tok_s = generate / total_s, one job's. fits: the
 * weights and the K,V of batch·(prompt + generate) tokens fit the replica's
 * memory. batch, prompt, generate >= 1. 0, or -1 with err. */
typedef struct step_run {
    int batch, prompt, generate;
    double prefill_s, decode_s, total_s, itl_s;
    double output_tok_s, seq_tok_s;
    int fits;
} step_run_t;

SPECSIM_API int step_batch(const step_t *st, int batch, int prompt, int generate,
                           step_run_t *out, err_t *err);

/* The largest batch whose K,V of prompt + generate tokens per job fits the
 * memory the weights leave (tp × the card's memory less the weights, the
 * KV capacity the simulator gives a replica), at most STEP_BATCH_MAX; 0
 * when not even one job fits (or the weights alone do not). */
SPECSIM_API int step_batch_max(const step_t *st, int prompt, int generate);

#endif
