/* cli_step — the `specsim step` subcommand: usage, options (cli_opt.h) and
 * errors; the times come from step.h.
 */
#include "cli/cli_step.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli_opt.h"
#include "specsim.h"

static const char usage[] =
    "usage: specsim step decode  --hardware CARD --model CARD [--batch B]\n"
    "                            [--tokens Q] [--context C] [OPTIONS]\n"
    "       specsim step prefill --hardware CARD --model CARD [--batch B]\n"
    "                            --prompt N [OPTIONS]\n"
    "       specsim step batch   --hardware CARD --model CARD [--batch B|max]\n"
    "                            --prompt N --generate G [OPTIONS]\n"
    "       specsim step linear  --hardware CARD --model CARD --op NAME\n"
    "                            --tokens M [OPTIONS]\n"
    "OPTIONS: [--precision P] [--kv-precision K] [--engine E] [--tp T]\n"
    "         [--overhead TIME] [--quiet]\n"
    "\n"
    "The service model's time (docs/design.md, \"The service model\") for one\n"
    "decode step, one prefill, a static batch run or one linear layer, on a\n"
    "hardware card and a model card: the cards' datasheet peaks times their\n"
    "default efficiencies, as the simulator times an iteration without a\n"
    "calibration table; no scenario. docs/validation.md sets these beside\n"
    "published measurements.\n"
    "Prints CSV on stdout, a header and one row:\n"
    "  decode   one decode step of B jobs of Q new tokens each (default 1; Q > 1\n"
    "           is a verification iteration, every token with its logits), each\n"
    "           over C cached tokens (default B 1, C 0):\n"
    "             batch,tokens,context,time_s,tok_s,memory_s,compute_s,\n"
    "             allreduce_s,weight_bytes,kv_bytes,flops,fits\n"
    "  prefill  the prefill of B prompts of N tokens in one iteration, each\n"
    "           from an empty cache, the logits of its last token only: the\n"
    "           same columns (tokens N, context 0)\n"
    "  batch    a static batch run: that prefill, which gives each job its\n"
    "           first token, then G - 1 decode steps of the B jobs, step k\n"
    "           over N + k - 1 cached tokens:\n"
    "             batch,prompt,generate,prefill_s,decode_s,total_s,itl_s,\n"
    "             output_tok_s,seq_tok_s,fits\n"
    "  linear   one layer's linear operator NAME (qkv, o, gate_up, down or\n"
    "           lm_head) over M token rows as one kernel, one GPU's share:\n"
    "             op,tokens,n,k,time_s,memory_s,compute_s,bytes,flops\n"
    "           memory_s = bytes / achieved bandwidth, compute_s = flops /\n"
    "           achieved FLOP rate; time_s joins them as every kernel of the\n"
    "           service model (the card's roofline_p and kernel_floor), no\n"
    "           overhead; bytes: the weights, the activations in and out\n"
    "time_s is the iteration's time, overhead included, and tok_s = B x tokens\n"
    "/ time_s; memory_s and compute_s are the overhead plus the memory-bound\n"
    "and the compute-bound times of the linear layers and attention (as\n"
    "`specsim roofline` prints them); allreduce_s is tensor parallelism's\n"
    "all-reduces; weight_bytes, kv_bytes and flops are one GPU's weights and\n"
    "K,V read and FLOPs done. prefill_s is the time to first token; decode_s\n"
    "the decode steps'; total_s their sum; itl_s = decode_s / (G - 1), the\n"
    "mean time between output tokens (0 when G = 1); output_tok_s = B x G /\n"
    "total_s, the batch's generated tokens per second; seq_tok_s = G / total_s,\n"
    "one job's. fits is 1 when the weights and the K,V of the tokens cached at\n"
    "the end fit T x the card's memory, else 0 (the time is printed anyway).\n"
    "\n"
    "  --hardware CARD  hardware card: a file, or NAME for\n"
    "                   models/hardware/NAME.yaml\n"
    "  --model CARD     LLM card: a file, or NAME for models/llm/NAME.yaml\n"
    "  --precision P    fp16 (default), fp32, w8a16, w4a16, w4a4 or fp8; or a\n"
    "                   weight format, computed at w4a16 or w8a16 and read at\n"
    "                   its own bits per weight: q4_0 (4.5), q4_1 (5), q8_0\n"
    "                   (8.5), q4_K_M (4.85), q4f16_1 (4.5), int4-g32 (5),\n"
    "                   int4-g128 (4.16, = w4a16), int8-ch (8)\n"
    "  --kv-precision K the K,V cache's elements: fp16 (default, at every\n"
    "                   precision, fp8 included) or fp8 (1 byte, as engines\n"
    "                   with an FP8 KV cache keep it): halves the K,V bytes\n"
    "                   attention reads and each cached token holds (not\n"
    "                   with linear, which reads no K,V)\n"
    "  --engine E       the hardware card's efficiency set for engine E\n"
    "                   (`engines.E:`: llamacpp_cpu, llamacpp_gpu, mlc or qnn)\n"
    "                   instead of its own bw_eff, flops_eff,\n"
    "                   bw_eff_by_precision and flops (the peak rates of the\n"
    "                   unit the engine runs on), where the set gives them\n"
    "  --tp T           T GPUs in tensor parallelism (default 1): every time is\n"
    "                   one GPU's share of the work plus two all-reduces a layer\n"
    "  --batch B        jobs (default 1), 1 to 1048576; batch also takes max:\n"
    "                   the largest B whose K,V of N + G tokens a job fits in\n"
    "                   the memory the weights leave (at most 1048576, with a\n"
    "                   warning when more would fit)\n"
    "  --context C      decode: cached tokens per job (default 0)\n"
    "  --tokens Q       decode: new tokens per job (default 1); linear: rows M\n"
    "  --op NAME        linear: qkv, o, gate_up, down or lm_head\n"
    "  --prompt N       prefill, batch: prompt tokens per job\n"
    "  --generate G     batch: tokens generated per job\n"
    "  --overhead TIME  fixed time added to every iteration (default 0s;\n"
    "                   scenarios default cloud.overhead to 0.5ms and\n"
    "                   edge.overhead to 0s)\n"
    "  --quiet          accepted as by every command; step shows no progress,\n"
    "                   so it has nothing to silence\n";

typedef enum mode { MODE_DECODE, MODE_PREFILL, MODE_BATCH, MODE_LINEAR, MODE_N } mode_kind_t;

static const char *const mode_names[MODE_N] = {"decode", "prefill", "batch", "linear"};

typedef struct step_cmd {
    step_setup_t setup;
    int batch, batch_max, context, prompt, generate, tokens;
    const char *op;
    int has_batch, has_context, has_prompt, has_generate, has_tokens;   /* given */
    cli_opt_common_t com;   /* --help, --version; the mode as com.scenario */
    mode_kind_t mode;
} step_cmd_t;

/* An integer from lo to hi (lo >= 0): 0, or the exit status of bad usage.
 * Digits only, as every command reads its counts (cli_opt_u64): strtol would
 * take ' 2' and '+2', which --reps and -j refuse. */
static int int_opt(const cli_opt_arg_t *a, long lo, long hi, int *out)
{
    uint64_t x;
    if (cli_opt_u64(a->value, &x) == 0 && x >= (uint64_t)lo && x <= (uint64_t)hi) {
        *out = (int)x;
        return 0;
    }
    return cli_opt_usage_error("step", "%s needs an integer from %ld to %ld, got '%s'",
                               cli_opt_name(a->id), lo, hi, a->value);
}

/* One option; 0 or an exit status. */
static int take(void *ctx, const cli_opt_arg_t *a)
{
    step_cmd_t *c = ctx;
    switch (a->id) {
    case OPT_HARDWARE: c->setup.hardware = a->value; return 0;
    case OPT_MODEL: c->setup.model = a->value; return 0;
    case OPT_PRECISION: c->setup.precision = a->value; return 0;
    case OPT_OVERHEAD: c->setup.overhead = a->value; return 0;
    case OPT_ENGINE: c->setup.engine = a->value; return 0;
    case OPT_KV_PRECISION: c->setup.kv_precision = a->value; return 0;
    case OPT_TP: return int_opt(a, 1, 4096, &c->setup.tp);
    case OPT_OP: c->op = a->value; return 0;
    case OPT_TOKENS:
        c->has_tokens = 1;
        return int_opt(a, 1, STEP_TOKENS_MAX, &c->tokens);
    case OPT_BATCH:
        c->has_batch = 1;
        if (strcmp(a->value, "max") == 0) {
            c->batch_max = 1;
            return 0;
        }
        return int_opt(a, 1, STEP_BATCH_MAX, &c->batch);
    case OPT_CONTEXT:
        c->has_context = 1;
        return int_opt(a, 0, STEP_TOKENS_MAX, &c->context);
    case OPT_PROMPT:
        c->has_prompt = 1;
        return int_opt(a, 1, STEP_TOKENS_MAX, &c->prompt);
    case OPT_GENERATE:
        c->has_generate = 1;
        return int_opt(a, 1, STEP_TOKENS_MAX, &c->generate);
    default: return 0;   /* --help, --version, --quiet */
    }
}

/* The options a mode needs and those it does not take. */
static int check_mode(const step_cmd_t *c)
{
    const char *m = mode_names[c->mode];
    const char *stray = NULL;
    int dec = c->mode == MODE_DECODE, lin = c->mode == MODE_LINEAR;
    if (!dec && c->has_context) stray = "--context";
    else if ((dec || lin) && c->has_prompt) stray = "--prompt";
    else if (c->mode != MODE_BATCH && c->has_generate) stray = "--generate";
    else if (!dec && !lin && c->has_tokens) stray = "--tokens";
    else if (!lin && c->op) stray = "--op";
    else if (lin && c->has_batch) stray = "--batch";
    else if (lin && c->setup.overhead) stray = "--overhead";   /* one kernel, no iteration */
    /* A linear operator reads weights and activations, no K,V: the cache's
     * precision would change nothing in its row. */
    else if (lin && c->setup.kv_precision) stray = "--kv-precision";
    if (stray)
        return cli_opt_usage_error("step", "%s does not go with %s (decode takes "
                                   "--tokens and --context; prefill --prompt; batch "
                                   "--prompt and --generate; linear --op and --tokens, "
                                   "no --batch, --overhead or --kv-precision)", stray, m);
    if (lin && (!c->op || !c->has_tokens))
        return cli_opt_usage_error("step", "linear needs --op NAME and --tokens M");
    if (c->batch_max && c->mode != MODE_BATCH)
        return cli_opt_usage_error("step", "--batch max goes with batch, not with %s "
                                   "(give a number)", m);
    if (!dec && !lin && !c->has_prompt)
        return cli_opt_usage_error("step", "%s needs --prompt N", m);
    if (c->mode == MODE_BATCH && !c->has_generate)
        return cli_opt_usage_error("step", "batch needs --generate G");
    if (!c->setup.hardware) return cli_opt_usage_error("step", "no --hardware CARD given");
    if (!c->setup.model) return cli_opt_usage_error("step", "no --model CARD given");
    return 0;
}

static int parse_cmd(step_cmd_t *c, int argc, char **argv)
{
    int rc = cli_opt_read(CLI_STEP, "step", argc, argv, take, c, &c->com);
    const char *mode = c->com.scenario;
    if (rc || c->com.help || c->com.version) return rc;
    if (!mode)
        return cli_opt_usage_error("step", "no mode given (decode, prefill, batch or linear)");
    int i = 0;
    while (i < MODE_N && strcmp(mode, mode_names[i]) != 0) i++;
    if (i == MODE_N)
        return cli_opt_usage_error("step", "unknown mode '%s' (decode, prefill, batch or "
                                   "linear)", mode);
    c->mode = (mode_kind_t)i;
    return check_mode(c);
}

/* The option an input error of step_create is about. */
static const char *input_option(step_input_t in)
{
    switch (in) {
    case STEP_IN_HARDWARE: return "--hardware";
    case STEP_IN_MODEL: return "--model";
    case STEP_IN_PRECISION: return "--precision";
    case STEP_IN_TP: return "--tp";
    case STEP_IN_OVERHEAD: return "--overhead";
    case STEP_IN_ENGINE: return "--engine";
    case STEP_IN_KV_PRECISION: return "--kv-precision";
    default: return NULL;
    }
}

static int print_iter(const step_iter_t *r)
{
    return printf("batch,tokens,context,time_s,tok_s,memory_s,compute_s,allreduce_s,"
                  "weight_bytes,kv_bytes,flops,fits\n"
                  "%d,%d,%d,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%d\n",
                  r->batch, r->tokens, r->context, r->time_s, r->tok_s, r->memory_s,
                  r->compute_s, r->allreduce_s, r->weight_bytes, r->kv_bytes, r->flops,
                  r->fits) < 0 ? -1 : 0;
}

static int print_run(const step_run_t *r)
{
    return printf("batch,prompt,generate,prefill_s,decode_s,total_s,itl_s,output_tok_s,"
                  "seq_tok_s,fits\n"
                  "%d,%d,%d,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%d\n",
                  r->batch, r->prompt, r->generate, r->prefill_s, r->decode_s, r->total_s,
                  r->itl_s, r->output_tok_s, r->seq_tok_s, r->fits) < 0 ? -1 : 0;
}

static int print_linear(const char *op, const step_linear_t *r)
{
    return printf("op,tokens,n,k,time_s,memory_s,compute_s,bytes,flops\n"
                  "%s,%d,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g\n",
                  op, r->tokens, r->n, r->k, r->time_s, r->memory_s, r->compute_s,
                  r->bytes, r->flops) < 0 ? -1 : 0;
}

/* The mode's row on stdout. 0, or -1 with err. */
static int answer(const step_cmd_t *c, const step_t *st, err_t *err)
{
    step_iter_t it;
    step_run_t run;
    step_linear_t lin;
    int b = c->batch;
    if (c->batch_max) {
        b = step_batch_max(st, c->prompt, c->generate);
        if (b < 1)
            return err_set(err, ERR_INPUT, "--batch max: the K,V of one job of %d + %d "
                           "tokens does not fit in the memory the weights leave",
                           c->prompt, c->generate);
        /* The row would read as the largest batch that fits; it is the
         * largest step takes, so say so rather than print it as found. */
        if (b == STEP_BATCH_MAX)
            fprintf(stderr, "specsim step: warning: --batch max: %d jobs or more fit; "
                    "the batch is capped at %d, the most step takes\n", b, b);
    }
    int rc;
    switch (c->mode) {
    case MODE_DECODE:
        rc = step_verify(st, b, c->has_tokens ? c->tokens : 1, c->context, &it, err) ||
             print_iter(&it);
        break;
    case MODE_LINEAR:
        rc = step_linear(st, c->op, c->tokens, &lin, err) || print_linear(c->op, &lin);
        break;
    case MODE_PREFILL:
        rc = step_prefill(st, b, c->prompt, &it, err) || print_iter(&it);
        break;
    default:
        rc = step_batch(st, b, c->prompt, c->generate, &run, err) || print_run(&run);
        break;
    }
    if (rc == 0 && fflush(stdout) == 0 && !ferror(stdout)) return 0;
    if (err->code == 0) err_set(err, ERR_RUNTIME, "standard output: %s", strerror(errno));
    return -1;
}

int cli_step(int argc, char **argv)
{
    step_cmd_t c = {.setup = {.tp = 1}, .batch = 1};
    int rc = parse_cmd(&c, argc, argv);
    if (rc != 0) return rc;
    if (c.com.help) return fputs(usage, stdout) == EOF ? ERR_RUNTIME : 0;
    if (c.com.version) return cli_opt_print_version();
    err_t err = {0};
    step_input_t bad = STEP_IN_NONE;
    step_t *st = step_create(&c.setup, &bad, &err);
    if (!st) {
        const char *opt = err.code == ERR_INPUT ? input_option(bad) : NULL;
        fprintf(stderr, "specsim step: %s%s%s\n", opt ? opt : "", opt ? ": " : "", err.msg);
        return err.code ? err.code : ERR_RUNTIME;
    }
    if (answer(&c, st, &err) != 0) {
        fprintf(stderr, "specsim step: %s\n", err.msg);
        rc = err.code ? err.code : ERR_RUNTIME;
    }
    step_free(st);
    return rc;
}
