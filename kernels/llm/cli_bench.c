/* llm bench — decode speed of the real model on the project's kernels:
 * tokens per second of one sequence decoding one token per step (M = 1)
 * and of `batch` sequences each decoding one token per step, after a
 * context of `context` tokens, for each model spec asked for. The side by
 * side comparison with llama.cpp is scripts/llm/bench.sh. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_args.h"
#include "cli_cmds.h"
#include "base/wallclock.h"

#define CMD "llm bench"

typedef struct bench_args {
    const char *model, *specs;
    int threads, context, steps, batch, help;
    int quiet;   /* --quiet: accepted; bench has no progress to silence */
} bench_args_t;

static void usage(FILE *f)
{
    fprintf(f, "usage: " CMD " --model GGUF [--weights SPEC,SPEC,...] [--threads N]\n"
               "       [--context C] [--steps S] [--batch B] [--quiet]\n"
               "  prints: spec, M, tokens/s, ms per step (median of S steps)\n"
               "  --quiet: accepted as by every command; bench shows no progress, so it\n"
               "           has nothing to silence\n");
}

static int parse(int argc, char **argv, void *args, err_t *err)
{
    bench_args_t *a = args;
    *a = (bench_args_t){NULL, "fp16,w4a16", 0, 128, 32, 8, 0, 0};
    cli_opt_t o[] = {
        {"model", CLI_STR, &a->model, 0, 0, 0},     {"weights", CLI_STR, &a->specs, 0, 0, 0},
        {"threads", CLI_INT, &a->threads, 0, 1024, 0},
        {"context", CLI_INT, &a->context, 1, 8192, 0},
        {"steps", CLI_INT, &a->steps, 3, 100000, 0}, {"batch", CLI_INT, &a->batch, 2, 512, 0},
        {"help", CLI_FLAG, &a->help, 0, 0, 0},      {"quiet", CLI_FLAG, &a->quiet, 0, 0, 0},
    };
    int np;
    if (cli_args_parse(CMD, argc, argv, 2, o, (int)(sizeof o / sizeof o[0]), NULL, 0, &np, err))
        return -1;
    if (!a->help && !a->model) return err_set(err, ERR_INPUT, CMD ": --model is required");
    /* Every spec checked before anything runs (a bad second one used to
     * fail after the first had been timed and printed). */
    return a->help ? 0 : cli_args_spec_list(CMD, "--weights", a->specs, err);
}

static int cmp_d(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* The median time of `steps` decode steps of nseq sequences (one token
 * each) after a prefill of `context` tokens per sequence. */
static int measure(const bench_args_t *a, const llm_model_t *m, llm_run_t *r, int nseq,
                   double *median, err_t *err)
{
    int vocab = llm_config(m)->vocab, rc = 0;
    llm_kv_t **kv = calloc((size_t)nseq, sizeof *kv);
    llm_span_t *sp = calloc((size_t)nseq, sizeof *sp);
    int32_t *tok = malloc((size_t)(a->context + 1) * (size_t)nseq * sizeof *tok);
    float *lg = malloc((size_t)nseq * vocab * sizeof *lg);
    double *t = malloc((size_t)a->steps * sizeof *t);
    if (!kv || !sp || !tok || !lg || !t) rc = err_set(err, ERR_RUNTIME, CMD ": out of memory");
    for (int s = 0; rc == 0 && s < nseq; s++) {
        if (!(kv[s] = llm_kv_create(m, a->context + a->steps + 1, err))) rc = -1;
        for (int i = 0; i < a->context; i++) tok[s * a->context + i] = (s * 7919 + i * 131) % vocab;
        sp[s] = (llm_span_t){kv[s], tok + s * a->context, a->context, a->context - 1};
    }
    if (rc == 0) rc = llm_forward(r, m, sp, nseq, lg, err);
    for (int k = 0; rc == 0 && k < a->steps; k++) {
        for (int s = 0; s < nseq; s++) sp[s] = (llm_span_t){kv[s], tok + s * a->context + k % a->context, 1, 0};
        double t0 = wallclock_s();
        rc = llm_forward(r, m, sp, nseq, lg, err);
        t[k] = wallclock_s() - t0;
    }
    if (rc == 0) {
        qsort(t, (size_t)a->steps, sizeof *t, cmp_d);
        *median = t[a->steps / 2];
    }
    for (int s = 0; kv && s < nseq; s++) llm_kv_free(kv[s]);
    free(kv);
    free(sp);
    free(tok);
    free(lg);
    free(t);
    return rc;
}

static int bench_spec(const bench_args_t *a, const cli_model_t *cm, const char *spec,
                      llm_run_t *r, err_t *err)
{
    llm_model_t *m = cli_args_load(cm, spec, err);
    if (!m) return -1;
    int sizes[2] = {1, a->batch}, rc = 0;
    for (int i = 0; rc == 0 && i < 2; i++) {
        double med = 0;
        rc = measure(a, m, r, sizes[i], &med, err);
        if (rc == 0)
            printf("%-12s M=%-4d %10.1f tok/s %9.3f ms/step  (%.1f MB of weights)\n",
                   llm_name(m), sizes[i], sizes[i] / med, 1e3 * med,
                   (double)llm_weight_bytes(m) / 1e6);
    }
    llm_free(m);
    return rc;
}

static int run(const void *args, err_t *err)
{
    const bench_args_t *a = args;
    cli_model_t cm;
    if (cli_args_open(a->model, &cm, err) != 0) return -1;
    llm_run_t *r = llm_run_create(a->threads, err);
    char buf[256];
    int rc = r ? 0 : -1;
    if (rc == 0 && snprintf(buf, sizeof buf, "%s", a->specs) >= (int)sizeof buf)
        rc = err_set(err, ERR_INPUT, CMD ": --weights is too long");
    for (char *s = buf, *save = NULL, *tk; rc == 0 && (tk = strtok_r(s, ",", &save)); s = NULL)
        rc = bench_spec(a, &cm, tk, r, err);
    llm_run_free(r);
    cli_args_close(&cm);
    return rc;
}

int cli_bench(int argc, char **argv)
{
    bench_args_t a = {0};
    return cli_args_main(argc, argv, &a, &a.help, parse, run, usage);
}
