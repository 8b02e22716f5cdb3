/* service — one roofline service model for edge drafting and cloud
 * verification (docs/design.md, "The service model").
 *
 * An iteration processing jobs (each q new tokens over a KV context of c
 * tokens) costs a fixed overhead plus, per operator, max(flops / rate,
 * bytes / bandwidth): the linear layers as an M×K·K×N product with
 * M = Σq (weights read once per iteration), attention of each job over its
 * own context, and lm_head. Rates come, in order, from a calibration table
 * (interpolated in M and context), a roofline fitted to the table outside its
 * range, or the hardware card's datasheet peak times default efficiencies.
 * With a table that also has whole-step rows, the composed operators are
 * scaled by a step factor measured from those rows (service_step_factor).
 * A replica may be tp GPUs in tensor parallelism (service_create_tp): one
 * GPU's share of every operator plus two ring all-reduces per layer.
 * On the datasheet path the card may refine the roofline (service.c):
 * bandwidth by weight format, a smooth maximum of the two times instead of
 * max, and a per-kernel floor that also brings in the element-wise
 * operators and sampling.
 */
#ifndef SPECSIM_SERVICE_H
#define SPECSIM_SERVICE_H

#include "model/cards.h"
#include "model/caltable.h"
#include "base/err.h"

typedef struct service service_t;

typedef struct service_job {
    int tokens;    /* new tokens processed for this job (q) */
    int context;   /* KV tokens already cached for this job */
    int nohead;    /* of them, those whose logits are not computed (they skip
                      the lm_head): a prefill chunk's all but the prompt's
                      last token; 0 for verify blocks and decode steps, which
                      need every position's */
} service_job_t;

/* The roofline decomposition of one iteration (seconds). The memory and
 * compute parts use the rates in use: datasheet rates, or with a table the
 * rates fitted to it (so with a table total_s, the interpolated time, need not
 * equal the sum of the parts' maxima). lm_head_s is lm_head's actual time.
 * weight_bytes: weights read (linear + lm_head); kv_bytes: K,V read by all
 * jobs, all layers; flops: linear + lm_head + attention; step_factor: the
 * factor total_s applies to the composed operators (1 without whole-step
 * rows, see service_step_factor). With tensor parallelism every term is one
 * GPU's share (weights, KV and FLOPs / tp) and allreduce_s is added. */
typedef struct service_terms {
    double linear_mem_s, linear_compute_s;   /* all layers' linear ops */
    double attn_mem_s, attn_compute_s;
    double lm_head_s;
    double overhead_s;
    double allreduce_s;   /* tensor parallelism's all-reduces (0 at tp = 1) */
    double total_s;
    double weight_bytes, kv_bytes, flops;
    double step_factor;
} service_terms_t;

/* Creates the model. calibration: path of a table or NULL/"" for datasheet
 * only; a table for another model or quantisation is an ERR_INPUT error.
 * Checks the cards first (service_check_model, service_check_hardware), so
 * a caller that wants to say which input is at fault calls those itself
 * first: an ERR_INPUT error left to service_create is then about the table.
 * Returns NULL with err filled on failure; the caller frees with
 * service_free(). */
service_t *service_create(const hw_card_t *hw, const llm_card_t *model,
                          int precision, const char *calibration,
                          double overhead_s, err_t *err);
/* The same on a replica of tp GPUs in tensor parallelism (service.c): every
 * time is one GPU's share plus two ring all-reduces per layer over the
 * card's interconnect; tp = 1 is service_create. Checks
 * service_check_parallel first. Caller frees with service_free(). */
service_t *service_create_tp(const hw_card_t *hw, const llm_card_t *model,
                             int precision, const char *calibration,
                             double overhead_s, int tp, err_t *err);
/* The same, the calibration table read through the command's set of files
 * (sim/io/infile.h; NULL: from disk). */
struct infiles;
service_t *service_create_in(const hw_card_t *hw, const llm_card_t *model,
                             int precision, const char *calibration,
                             double overhead_s, int tp, struct infiles *files,
                             err_t *err);
/* The same with the weights read at weight_bytes per weight (a named
 * weight format's, cards.h cards_weight_format_parse) instead of the precision's
 * own; 0: the precision's. */
service_t *service_create_wb(const hw_card_t *hw, const llm_card_t *model,
                             int precision, double weight_bytes,
                             const char *calibration, double overhead_s, int tp,
                             struct infiles *files, err_t *err);
/* Every setting of a service model in one record, for the caller that
 * sets more than the functions above take (a scenario key adds a field
 * here, not another service_create_* argument). Zeroed fields mean the
 * defaults of service_create_wb. */
typedef struct service_opts {
    int precision;            /* PREC_* of the weights and the compute */
    double weight_bytes;      /* bytes per weight; 0: the precision's */
    double kv_bytes;          /* bytes per cached K or V element: 2 (fp16) or
                                 1 (fp8, e4m3); 0: 2. Every precision's cache
                                 is fp16 unless this says fp8. */
    const char *calibration;  /* table path; NULL or "": datasheet only */
    double overhead_s;        /* fixed time per iteration, >= 0 */
    int tp;                   /* GPUs in tensor parallelism, >= 1 */
    struct infiles *files;    /* as service_create_in; NULL: from disk */
} service_opts_t;
/* service_create_wb with everything from o. An fp8 cache (kv_bytes 1)
 * halves the K,V bytes attention reads and each cached token holds; it
 * refuses a calibration table (ERR_INPUT), whose attention rows were timed
 * over an fp16 cache. service_create_wb is this with kv_bytes 0. */
service_t *service_create_opts(const hw_card_t *hw, const llm_card_t *model,
                               const service_opts_t *o, err_t *err);
/* Bytes per K or V element of a KV-cache precision named as `specsim step
 * --kv-precision` takes it: "fp16" 2, "fp8" 1; 0 for any other name. */
double service_kv_precision_bytes(const char *name);
/* The names service_kv_precision_bytes takes, in the order a scenario key
 * indexes them (cloud.kv_precision), NULL-terminated. */
extern const char *const service_kv_precision_names[3];
/* Bytes per K or V element of the i-th of those names (a scenario's
 * cloud.kv_precision); 0 out of range. */
double service_kv_precision_bytes_at(int i);
/* The same with hw under an engine's efficiency set and the weights in a
 * named format, as cards_serving_setup applies them (engine < 0: the
 * card's own; format: an index into cards_weight_format_names): what
 * `specsim step --engine E --precision NAME` builds and what a scenario's
 * engine and quant/precision keys build. hw is not changed. */
service_t *service_create_serving(const hw_card_t *hw, int engine, int format,
                                  const llm_card_t *model, const char *calibration,
                                  double overhead_s, int tp, struct infiles *files,
                                  err_t *err);
/* The same with the K,V cache's bytes per element (service_opts_t). */
service_t *service_create_serving_kv(const hw_card_t *hw, int engine, int format,
                                     double kv_bytes, const llm_card_t *model,
                                     const char *calibration, double overhead_s, int tp,
                                     struct infiles *files, err_t *err);
/* tp >= 1; for tp > 1: tp divides heads and kv_heads, the card has an
 * interconnect_bw, and no calibration table is given. 0, or -1 with err
 * (ERR_INPUT, the message names the card at fault). */
int service_check_parallel(const hw_card_t *hw, const llm_card_t *model, int tp,
                           const char *calibration, err_t *err);
/* GPUs per replica the model was created for. */
int service_tensor_parallel(const service_t *sv);
/* The LLM card's shape: every size >= 1, heads dividing hidden, kv_heads
 * dividing heads. 0, or -1 with err (ERR_INPUT "model card 'NAME': ..."). */
int service_check_model(const llm_card_t *model, err_t *err);
/* The hardware card for a precision: memory bandwidth > 0, efficiencies in
 * (0, 1], a peak FLOP/s for the precision's compute type. 0, or -1 with err
 * (ERR_INPUT "hardware card 'NAME': ..."). */
int service_check_hardware(const hw_card_t *hw, int precision, err_t *err);
/* The card's achieved fraction of mem_bw for a precision's weight format:
 * bw_eff_by_precision's entry when given, else bw_eff. */
double service_bw_eff(const hw_card_t *hw, int precision);
/* The same for the FLOP rate: flops_eff_by_precision's entry, else
 * flops_eff. */
double service_flops_eff(const hw_card_t *hw, int precision);
void service_free(service_t *sv);

/* Where iteration times come from, decided at create:
 *   "datasheet"  no table: card peak × default efficiencies;
 *   "table"      a table with rows for every operator (qkv, o, gate_up, down,
 *                lm_head and attention): times interpolated from it;
 *   "fitted"     a table that lacks some operator: that operator's time comes
 *                from the roofline fitted to the table's rows.
 * Lookups outside the measured M / context range are extrapolated with the
 * fitted roofline even when the source is "table"; service_in_table() tells
 * whether particular lookups stayed inside the measured range. */
const char *service_source(const service_t *sv);
/* The step factor f(M) applied to table-based iterations of M tokens:
 * measured whole steps / the same steps composed from the table's operator
 * rows (see service.c), 1 when the table has no whole-step rows or there is
 * no table. service_step_rows: how many whole-step rows it came from. */
double service_step_factor(const service_t *sv, double m);
/* The iteration a whole-step table row (op: token) measured, as jobs:
 * `batch` jobs of q new tokens over its context. Returns how many were
 * written (0: not a token row, or more than cap jobs; rows of more than
 * SERVICE_ROW_JOBS_MAX are not used for the step factor). */
#define SERVICE_ROW_JOBS_MAX 256
int service_row_jobs(const caltable_row_t *r, service_job_t *jobs, int cap);
int service_step_rows(const service_t *sv);
/* Same for service_draft_time: "table" when the table has whole-token rows
 * (op: token, m: 1), else service_source(). */
const char *service_draft_source(const service_t *sv);
/* 1 when a table is used and every lookup of this iteration (each linear op
 * at M = Σq, attention of each job) lies inside the measured range; else 0. */
int service_in_table(const service_t *sv, const service_job_t *jobs, int njobs);
/* Same for service_draft_time(sv, context). */
int service_draft_in_table(const service_t *sv, int context);

/* Time of one iteration (seconds), overhead included; 0 when the jobs hold
 * no tokens. O(njobs), no allocation, safe to call from several threads. */
double service_iter_time(const service_t *sv, const service_job_t *jobs,
                         int njobs);
/* The iteration time of the reference batch that routing across replica
 * groups of different speeds weighs replicas by (sim/entity/cloud.h, cloud_pin):
 * SERVICE_REF_JOBS verify blocks of SERVICE_REF_TOKENS tokens (gamma 4),
 * each over SERVICE_REF_CONTEXT tokens of context — a mid-size
 * decode batch, where iteration time is mostly reading the weights, so the
 * ratio of two cards' times is close to their memory bandwidths'. */
#define SERVICE_REF_JOBS 8
#define SERVICE_REF_TOKENS 5
#define SERVICE_REF_CONTEXT 1024
double service_ref_time(const service_t *sv);
/* The operators of that iteration alone, as the table (or without one the
 * datasheet) gives them: no overhead, no step factor. What whole-step
 * measurements are compared against (`specsim roofline --measured`). */
double service_composed_time(const service_t *sv, const service_job_t *jobs, int njobs);
/* One drafted token (M = 1) over `context` cached tokens. With whole-token
 * table rows this is the measured token time interpolated in context (the
 * attention model adds the difference outside the measured contexts), plus
 * the overhead; else service_iter_time of one 1-token job. */
double service_draft_time(const service_t *sv, int context);
/* One draft step of a token tree's level: width >= 1 tokens drafted
 * together, each over `context` cached tokens plus its ancestors (the
 * dense width × (context + width) attention of service_iter_time, as a
 * verify block's). service_draft_time plus what the width - 1 further rows
 * add to one iteration (iteration time of `width` tokens minus that of 1),
 * so a level of one token costs exactly service_draft_time and a measured
 * token time stays the anchor. */
double service_draft_width_time(const service_t *sv, int context, int width);
/* Prefill of a prompt of n tokens (one job, context 0). */
double service_prefill_time(const service_t *sv, int n);
void service_terms(const service_t *sv, const service_job_t *jobs, int njobs,
                   service_terms_t *out);
/* Pure datasheet roofline, ignoring any table (for `analytic`'s side-by-side
 * view). */
double service_iter_time_datasheet(const service_t *sv,
                                   const service_job_t *jobs, int njobs);

/* The iteration's pure roofline time is the sum of these two terms: per
 * operator max(flops / peak FLOP/s, bytes / peak bandwidth) at the card's
 * datasheet peaks (no efficiencies, no table, no step factor, no overhead),
 * the least time any implementation could take; what gpu_roofline_util
 * compares busy time with (docs/metrics.md); 0 when the jobs hold no
 * tokens. The linear layers at m tokens are a function of m alone, so a
 * caller may keep them per m (the cloud does, as every iteration asks);
 * attention is over the jobs. */
double service_roofline_linear(const service_t *sv, double m);

/* One linear layer, one kernel, on the datasheet path: the operator `name`
 * (qkv, o, gate_up, down, lm_head) of one layer over m tokens, one GPU's
 * share under tensor parallelism. memory_s = bytes / achieved bandwidth,
 * compute_s = flops / achieved FLOP rate (the card's peaks times its
 * efficiencies for the precision); time_s combines them as every datasheet
 * kernel is (roofline_p's smooth maximum, at least kernel_floor), no
 * overhead. bytes count the weights once and the activations in and out.
 * 0, or -1 when name is no operator (out untouched). */
typedef struct service_linop {
    double n, k;   /* one GPU's share: fractional where tp does not divide */
    double time_s, memory_s, compute_s, bytes, flops;
} service_linop_t;
int service_linear_op(const service_t *sv, const char *name, double m, service_linop_t *out);
double service_roofline_attention(const service_t *sv, const service_job_t *jobs,
                                  int njobs);

/* Draft heads (Medusa/EAGLE-like) attached to the target, described by
 * their size alone: `params` weights at `precision` and `flops_per_token`
 * FLOPs per drafted token. A step over m drafted tokens (one per job of the
 * batch) costs overhead + max(weight bytes / achieved bandwidth,
 * m · flops_per_token / achieved FLOP rate) on the card (datasheet rates
 * times its efficiencies): the heads' weights are read once per
 * iteration, as a linear layer's are; attention over the context (an
 * EAGLE head's layer) is not modelled. */
typedef struct service_heads {
    double bytes, flops_per_token;   /* weight bytes; FLOPs per token */
    double bw, rate;                 /* achieved bytes/s, FLOP/s */
    double peak_bw, peak_rate;       /* datasheet peaks (roofline) */
    double overhead;                 /* s per iteration */
} service_heads_t;

/* Fills h for heads of params weights and flops_per_token FLOPs per token
 * on hw at precision. 0, or -1 with err (ERR_INPUT: the card lacks a rate
 * for the precision, or a size is not positive and finite). */
int service_heads_init(service_heads_t *h, const hw_card_t *hw, int precision,
                       double params, double flops_per_token, double overhead_s,
                       err_t *err);
/* The same with the weights at weight_bytes per weight (0: the precision's
 * own), and hw under an engine and a named format: service_heads_serving
 * (engine < 0: none; format: an index into cards_weight_format_names, as
 * service_create_serving). */
int service_heads_init_wb(service_heads_t *h, const hw_card_t *hw, int precision,
                          double weight_bytes, double params, double flops_per_token,
                          double overhead_s, err_t *err);
int service_heads_serving(service_heads_t *h, const hw_card_t *hw, int engine, int format,
                          double params, double flops_per_token, double overhead_s,
                          err_t *err);
/* A step of m drafted tokens (overhead included); 0 when m <= 0. */
double service_heads_time(const service_heads_t *h, int m);
/* Its pure roofline time at the datasheet peaks, no overhead. */
double service_heads_roofline(const service_heads_t *h, int m);

/* Weight footprint in bytes, of all tp GPUs together: every layer's linear weights and lm_head at the
 * model's precision (scales and zeros included) plus the token embedding
 * table, stored fp16 (vocab × hidden × 2), unless the card ties it to the
 * lm_head (tied_embeddings: one matrix). Norm weights are ignored. */
double service_weight_bytes(const service_t *sv);
/* K and V bytes per cached token (at the cache's bytes per element:
 * fp16 unless service_opts_t.kv_bytes says fp8; all layers, all tp GPUs). */
double service_kv_bytes_per_token(const service_t *sv);

#endif
