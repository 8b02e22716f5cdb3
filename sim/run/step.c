/* step — decode steps, prefills and static batch runs from the service
 * model (see step.h).
 */
#include "run/step.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/units.h"
#include "model/cards.h"
#include "model/service.h"

struct step {
    service_t *sv;      /* owned */
    double weights;     /* the replica's weight footprint (all tp GPUs) */
    double kv_token;    /* the replica's K,V bytes per cached token */
    double mem;         /* tp × the card's memory */
};

/* Where a card reference is found: as given (cards_resolve_path), else, for
 * a bare name, models/<dir>/NAME.yaml. 0, or -1 with err (ERR_INPUT). */
static int resolve_card(const char *ref, const char *dir, const char *what, char *path,
                        size_t pathsz, err_t *err)
{
    if (cards_resolve_path(ref, path, pathsz) == 0) return 0;
    if (!strchr(ref, '/')) {
        char named[512];
        snprintf(named, sizeof named, "models/%s/%s.yaml", dir, ref);
        if (cards_resolve_path(named, path, pathsz) == 0) return 0;
    }
    return err_set(err, ERR_INPUT, "no %s card '%s' (a file, or a name NAME for "
                   "models/%s/NAME.yaml; looked in the working directory, under "
                   "$SPECSIM_ROOT and the source tree specsim was built from)",
                   what, ref, dir);
}

/* The cards, the precision, the K,V cache's bytes per element and the
 * overhead; *bad names what is wrong. */
static int read_inputs(const step_setup_t *in, hw_card_t *hw, llm_card_t *m, int *prec,
                       double *wbytes, double *kvbytes, double *overhead,
                       step_input_t *bad, err_t *err)
{
    char path[1024];
    *bad = STEP_IN_HARDWARE;
    if (!in->hardware || !*in->hardware)
        return err_set(err, ERR_INPUT, "no hardware card given");
    if (resolve_card(in->hardware, "hardware", "hardware", path, sizeof path, err) != 0 ||
        cards_load_hw_file(path, hw, err) != 0)
        return -1;
    *bad = STEP_IN_MODEL;
    if (!in->model || !*in->model) return err_set(err, ERR_INPUT, "no model card given");
    if (resolve_card(in->model, "llm", "model", path, sizeof path, err) != 0 ||
        cards_load_llm_file(path, m, err) != 0 || service_check_model(m, err) != 0)
        return -1;
    /* The engine and the weight format by name; cards_serving_setup then
     * applies them exactly as a scenario's engine and quant/precision keys
     * are applied (sim/config/build.c). */
    int e = -1;
    if (in->engine) {
        *bad = STEP_IN_ENGINE;
        e = cards_engine_parse(in->engine);
        if (e < 0)
            return err_set(err, ERR_INPUT, "unknown engine '%s' (llamacpp_cpu, "
                           "llamacpp_gpu, mlc or qnn)", in->engine);
    }
    *bad = STEP_IN_PRECISION;
    const char *p = in->precision ? in->precision : "fp16";
    /* A named weight format (q4_0, q4_K_M, ...) computes at its precision
     * and is read at its own bytes per weight (cards.h). */
    int format = cards_weight_format_index(p);
    if (format < 0)
        return err_set(err, ERR_INPUT, "unknown precision '%s' (fp32, fp16, w8a16, "
                       "w4a16, w4a4, fp8, or a weight format: q4_0, q4_1, q8_0, "
                       "q4_K_M, q4f16_1, int4-g32, int4-g128, int8-ch)", p);
    /* The engine's efficiency set replaces the card's before anything is
     * checked or derived from them; only the engine can fail here. */
    *bad = STEP_IN_ENGINE;
    if (cards_serving_setup(hw, e, format, prec, wbytes, err) != 0) return -1;
    /* A card the model cannot use at any precision is the card's fault; one
     * that lacks this precision's peak, the precision's. */
    *bad = service_check_hardware(hw, PREC_FP16, err) != 0 ? STEP_IN_HARDWARE
                                                           : STEP_IN_PRECISION;
    if (service_check_hardware(hw, *prec, err) != 0) return -1;
    *bad = STEP_IN_KV_PRECISION;
    const char *kv = in->kv_precision ? in->kv_precision : "fp16";
    *kvbytes = service_kv_precision_bytes(kv);
    if (*kvbytes == 0)
        return err_set(err, ERR_INPUT, "unknown KV-cache precision '%s' (fp16 or fp8)", kv);
    *bad = STEP_IN_OVERHEAD;
    *overhead = 0;
    char why[200];
    if (in->overhead && units_parse(in->overhead, UNIT_DURATION, 0, overhead, why,
                                    sizeof why) != 0)
        return err_set(err, ERR_INPUT, "%s", why);
    *bad = STEP_IN_TP;
    if (service_check_parallel(hw, m, in->tp, NULL, err) != 0) return -1;
    *bad = STEP_IN_NONE;
    return 0;
}

step_t *step_create(const step_setup_t *in, step_input_t *bad, err_t *err)
{
    hw_card_t hw;
    llm_card_t m;
    int prec = PREC_FP16;
    double overhead = 0, wbytes = 0, kvbytes = 2;
    if (read_inputs(in, &hw, &m, &prec, &wbytes, &kvbytes, &overhead, bad, err) != 0)
        return NULL;
    step_t *st = calloc(1, sizeof *st);
    if (!st) {
        err_set(err, ERR_RUNTIME, "out of memory");
        return NULL;
    }
    service_opts_t o = {.precision = prec, .weight_bytes = wbytes, .kv_bytes = kvbytes,
                        .overhead_s = overhead, .tp = in->tp};
    st->sv = service_create_opts(&hw, &m, &o, err);
    if (!st->sv) {
        free(st);
        return NULL;
    }
    st->weights = service_weight_bytes(st->sv);
    st->kv_token = service_kv_bytes_per_token(st->sv);
    st->mem = in->tp * hw.mem_bytes;
    return st;
}

void step_free(step_t *st)
{
    if (!st) return;
    service_free(st->sv);
    free(st);
}

/* The replica's weights and the K,V of `tokens` cached tokens fit. */
static int fits(const step_t *st, double tokens)
{
    return st->weights + tokens * st->kv_token <= st->mem;
}

/* `batch` identical jobs, in a new array (the caller frees it). */
static service_job_t *jobs_new(int batch, int tokens, int context, int nohead, err_t *err)
{
    service_job_t *jobs = malloc((size_t)batch * sizeof *jobs);
    if (!jobs) {
        err_set(err, ERR_RUNTIME, "out of memory (%d jobs)", batch);
        return NULL;
    }
    for (int j = 0; j < batch; j++)
        jobs[j] = (service_job_t){.tokens = tokens, .context = context, .nohead = nohead};
    return jobs;
}

/* One iteration of batch jobs of `tokens` tokens over `context`. */
static int iteration(const step_t *st, int batch, int tokens, int context, int nohead,
                     step_iter_t *out, err_t *err)
{
    memset(out, 0, sizeof *out);
    service_job_t *jobs = jobs_new(batch, tokens, context, nohead, err);
    if (!jobs) return -1;
    service_terms_t t;
    service_terms(st->sv, jobs, batch, &t);
    free(jobs);
    *out = (step_iter_t){
        .batch = batch,
        .tokens = tokens,
        .context = context,
        .time_s = t.total_s,
        .tok_s = (double)batch * tokens / t.total_s,
        .memory_s = t.overhead_s + t.linear_mem_s + t.attn_mem_s,
        .compute_s = t.overhead_s + t.linear_compute_s + t.attn_compute_s,
        .allreduce_s = t.allreduce_s,
        .weight_bytes = t.weight_bytes,
        .kv_bytes = t.kv_bytes,
        .flops = t.flops,
        .fits = fits(st, (double)batch * ((double)context + tokens)),
    };
    return 0;
}

static int check_range(const char *what, int v, int lo, int hi, err_t *err)
{
    if (v >= lo && v <= hi) return 0;
    return err_set(err, ERR_INPUT, "%s must be from %d to %d (got %d)", what, lo, hi, v);
}

#define BATCH_OK(b) check_range("batch", b, 1, STEP_BATCH_MAX, err)
#define TOKENS_OK(what, v, lo) check_range(what, v, lo, STEP_TOKENS_MAX, err)

int step_decode(const step_t *st, int batch, int context, step_iter_t *out, err_t *err)
{
    return step_verify(st, batch, 1, context, out, err);
}

int step_verify(const step_t *st, int batch, int tokens, int context, step_iter_t *out,
                err_t *err)
{
    if (BATCH_OK(batch) || TOKENS_OK("tokens", tokens, 1) ||
        TOKENS_OK("context", context, 0))
        return -1;
    return iteration(st, batch, tokens, context, 0, out, err);
}

int step_linear(const step_t *st, const char *op, int tokens, step_linear_t *out,
                err_t *err)
{
    memset(out, 0, sizeof *out);
    if (TOKENS_OK("tokens", tokens, 1)) return -1;
    service_linop_t l;
    if (service_linear_op(st->sv, op, tokens, &l) != 0)
        return err_set(err, ERR_INPUT, "unknown operator '%s' (qkv, o, gate_up, down or "
                       "lm_head)", op);
    *out = (step_linear_t){.tokens = tokens, .n = l.n, .k = l.k, .time_s = l.time_s,
                           .memory_s = l.memory_s, .compute_s = l.compute_s,
                           .bytes = l.bytes, .flops = l.flops};
    return 0;
}

int step_prefill(const step_t *st, int batch, int prompt, step_iter_t *out, err_t *err)
{
    if (BATCH_OK(batch) || TOKENS_OK("prompt", prompt, 1)) return -1;
    return iteration(st, batch, prompt, 0, prompt - 1, out, err);
}

int step_batch(const step_t *st, int batch, int prompt, int generate, step_run_t *out,
               err_t *err)
{
    memset(out, 0, sizeof *out);
    if (BATCH_OK(batch) || TOKENS_OK("prompt", prompt, 1) ||
        TOKENS_OK("generate", generate, 1))
        return -1;
    service_job_t *jobs = jobs_new(batch, prompt, 0, prompt - 1, err);
    if (!jobs) return -1;
    double prefill = service_iter_time(st->sv, jobs, batch), decode = 0;
    for (int k = 1; k < generate; k++) {
        for (int j = 0; j < batch; j++)
            jobs[j] = (service_job_t){.tokens = 1, .context = prompt + k - 1};
        decode += service_iter_time(st->sv, jobs, batch);
    }
    free(jobs);
    double total = prefill + decode;
    *out = (step_run_t){
        .batch = batch,
        .prompt = prompt,
        .generate = generate,
        .prefill_s = prefill,
        .decode_s = decode,
        .total_s = total,
        .itl_s = generate > 1 ? decode / (generate - 1) : 0,
        .output_tok_s = (double)batch * generate / total,
        .seq_tok_s = generate / total,
        .fits = fits(st, (double)batch * ((double)prompt + generate)),
    };
    return 0;
}

int step_batch_max(const step_t *st, int prompt, int generate)
{
    double per_job = ((double)prompt + generate) * st->kv_token;
    double b = floor((st->mem - st->weights) / per_job);
    if (!(b >= 1)) return 0;
    return b > STEP_BATCH_MAX ? STEP_BATCH_MAX : (int)b;
}
