/* llm spec — real speculative decoding of several tenants in one process
 * (kernels/llm/specloop.h); --check holds its greedy text to the target's
 * own, token for token. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_args.h"
#include "cli_cmds.h"
#include "prompts.h"
#include "specloop.h"
#include "base/wallclock.h"

#define CMD "llm spec"

typedef struct spec_args {
    const char *model, *target, *draft, *mode, *prompts, *prompt, *chat, *batch;
    int gamma, window, tenants, tokens, threads, check, verbose, help;
    double temp, seed;
    int quiet;   /* --quiet: accepted; spec has no progress to silence */
} spec_args_t;

static void usage(FILE *f)
{
    fprintf(f, "usage: " CMD " --model GGUF (--prompts FILE | --chat TEXT | --prompt TEXT)\n"
               "       [--target fp16] [--draft w4a16] [--mode sync|async] [--gamma G]\n"
               "       [--window W (async)] [--tenants N] [--tokens N] [--batch all|random|N]\n"
               "       [--temp T] [--seed S] [--threads N] [--check] [--verbose] [--quiet]\n"
               "  --quiet: accepted as by every command; spec shows no progress, so it\n"
               "           has nothing to silence\n");
}

static int batch_cfg(const char *b, specloop_cfg_t *c, err_t *err)
{
    if (!strcmp(b, "all")) return 0;
    if (!strcmp(b, "random")) {
        c->random_batches = 1;
        return 0;
    }
    /* Plain digits: strtol alone would take " 2" and "+2". */
    size_t len = strspn(b, "0123456789");
    long n = len && !b[len] && len < 9 ? strtol(b, NULL, 10) : 0;
    if (n < 1 || n > 1 << 20)
        return err_set(err, ERR_INPUT, CMD ": --batch '%s': expected all, random or a "
                       "positive count", b);
    c->max_batch = (int)n;
    return 0;
}

static int parse(int argc, char **argv, void *args, err_t *err)
{
    spec_args_t *a = args;
    /* window 0: not given (3 in async mode) */
    *a = (spec_args_t){NULL, "fp16", "w4a16", "sync", NULL, NULL, NULL, "all",
                       4, 0, 2, 64, 0, 0, 0, 0, 0.0, 1.0, 0};
    cli_opt_t o[] = {
        {"model", CLI_STR, &a->model, 0, 0, 0},     {"target", CLI_STR, &a->target, 0, 0, 0},
        {"draft", CLI_STR, &a->draft, 0, 0, 0},     {"mode", CLI_STR, &a->mode, 0, 0, 0},
        {"prompts", CLI_STR, &a->prompts, 0, 0, 0}, {"prompt", CLI_STR, &a->prompt, 0, 0, 0},
        {"chat", CLI_STR, &a->chat, 0, 0, 0},       {"batch", CLI_STR, &a->batch, 0, 0, 0},
        {"gamma", CLI_INT, &a->gamma, 1, 64, 0},    {"window", CLI_INT, &a->window, 1, 64, 0},
        {"tenants", CLI_INT, &a->tenants, 1, 4096, 0},
        {"tokens", CLI_INT, &a->tokens, 1, 1 << 16, 0},
        {"threads", CLI_INT, &a->threads, 0, 1024, 0},
        {"temp", CLI_NUM, &a->temp, 0, 100, 0},     {"seed", CLI_WHOLE, &a->seed, 0, 1e15, 0},
        {"check", CLI_FLAG, &a->check, 0, 0, 0},    {"verbose", CLI_FLAG, &a->verbose, 0, 0, 0},
        {"help", CLI_FLAG, &a->help, 0, 0, 0},      {"quiet", CLI_FLAG, &a->quiet, 0, 0, 0},
    };
    int np;
    if (cli_args_parse(CMD, argc, argv, 2, o, (int)(sizeof o / sizeof o[0]), NULL, 0, &np, err))
        return -1;
    if (a->help) return 0;
    if (!a->model) return err_set(err, ERR_INPUT, CMD ": --model is required");
    if ((a->prompts != NULL) + (a->prompt != NULL) + (a->chat != NULL) != 1)
        return err_set(err, ERR_INPUT, CMD ": give one of --prompts, --chat and --prompt");
    if (strcmp(a->mode, "sync") && strcmp(a->mode, "async"))
        return err_set(err, ERR_INPUT, CMD ": --mode '%s': expected sync or async", a->mode);
    if (a->check && a->temp > 0)
        return err_set(err, ERR_INPUT, CMD ": --check compares greedy texts; it needs --temp 0");
    /* sync mode keeps one block in flight: a window would be ignored. */
    if (a->window && strcmp(a->mode, "async"))
        return err_set(err, ERR_INPUT, CMD ": --window is the async mode's; give --mode async "
                       "or no --window");
    if (!a->window) a->window = 3;
    specloop_cfg_t c = {0};
    /* Everything checked before a model file is read. */
    return cli_args_spec(CMD, "--target", a->target, err) ||
           cli_args_spec(CMD, "--draft", a->draft, err) || batch_cfg(a->batch, &c, err) ? -1 : 0;
}

/* Tenant i's prompt ids: prompt i mod n of the file (each as a chat turn),
 * or the one --chat or --prompt text. */
typedef struct tenant_prompts {
    int32_t **ids;
    int *len, n;
} tenant_prompts_t;

static void tp_free(tenant_prompts_t *tp)
{
    for (int i = 0; tp->ids && i < tp->n; i++) free(tp->ids[i]);
    free(tp->ids);
    free(tp->len);
}

/* ps: the --prompts file, loaded before the model (NULL: --prompt or
 * --chat). Each prompt must leave room for --tokens in t's context. */
static int tp_load(const spec_args_t *a, const cli_model_t *cm, const prompts_t *ps,
                   const llm_model_t *t, tenant_prompts_t *tp, err_t *err)
{
    tp->n = a->tenants;
    tp->ids = calloc((size_t)tp->n, sizeof *tp->ids);
    tp->len = calloc((size_t)tp->n, sizeof *tp->len);
    int rc = tp->ids && tp->len ? 0 : err_set(err, ERR_RUNTIME, CMD ": out of memory");
    for (int i = 0; rc == 0 && i < tp->n; i++) {
        const prompt_t *p = ps ? &ps->p[i % ps->n] : NULL;
        char what[4200];
        if (p) snprintf(what, sizeof what, "%s:%d:1: prompt '%s'", a->prompts, p->line,
                        p->category);
        else snprintf(what, sizeof what, CMD ": %s", a->prompt ? "--prompt" : "--chat");
        const char *text = p ? p->text : a->prompt ? a->prompt : a->chat;
        rc = cli_args_prompt_at(cm, what, text, a->prompt == NULL, &tp->ids[i], &tp->len[i], err);
        if (rc == 0) rc = cli_args_fit(cm, t, what, tp->len[i], a->tokens, err);
    }
    return rc;
}

/* Greedy: each tenant's text against the target decoding alone. */
static int check(const spec_args_t *a, const llm_model_t *t, llm_run_t *r,
                 const tenant_prompts_t *tp, const specloop_out_t *out, err_t *err)
{
    int32_t *ref = malloc((size_t)a->tokens * sizeof *ref);
    if (!ref) return err_set(err, ERR_RUNTIME, CMD ": out of memory");
    int bad = 0;
    for (int i = 0; i < tp->n; i++) {
        if (specloop_generate(t, r, tp->ids[i], tp->len[i], a->tokens, 0.0f, NULL, ref, err)) {
            free(ref);
            return -1;
        }
        int at = 0;
        while (at < a->tokens && at < out[i].n && ref[at] == out[i].tokens[at]) at++;
        if (at < a->tokens) {
            bad++;
            printf("tenant %d: differs from the target's own greedy text at token %d "
                   "(%d against %d)\n", i, at, at < out[i].n ? (int)out[i].tokens[at] : -1,
                   (int)ref[at]);
        }
    }
    free(ref);
    printf("lossless: %s (%d tenants x %d tokens against the target alone)\n",
           bad ? "NO" : "yes", tp->n, a->tokens);
    return bad ? err_set(err, ERR_RUNTIME, CMD ": %d tenants differ from the target", bad) : 0;
}

static void report(const spec_args_t *a, const cli_model_t *cm, const specloop_out_t *out,
                   int n, double secs)
{
    long blocks = 0, acc = 0, eval = 0, drafted = 0, toks = 0;
    for (int i = 0; i < n; i++) {
        for (int b = 0; b < out[i].nblocks; b++) {
            acc += out[i].accepted[b];
            eval += out[i].accepted[b] + (out[i].accepted[b] < a->gamma);
        }
        blocks += out[i].nblocks;
        drafted += out[i].drafted;
        toks += out[i].n;
    }
    printf("%s, gamma %d%s, %d tenants, %ld tokens in %.2f s (%.1f tok/s)\n", a->mode, a->gamma,
           strcmp(a->mode, "async") ? "" : " (window)", n, toks, secs, secs > 0 ? toks / secs : 0);
    printf("blocks %ld, accepted drafts %ld of %ld evaluated (alpha %.4f), "
           "accepted_len_mean %.3f, drafted %ld\n", blocks, acc, eval,
           eval ? (double)acc / eval : 0.0, blocks ? (double)acc / blocks : 0.0, drafted);
    for (int i = 0; a->verbose && i < n; i++) {
        printf("--- tenant %d\n", i);
        cli_args_print_text(cm, out[i].tokens, out[i].n, stdout);
        printf("\n");
    }
}

static int run(const void *args, err_t *err)
{
    const spec_args_t *a = args;
    cli_model_t cm;
    /* The prompt file first: a mistake there costs no model load. */
    prompts_t *ps = a->prompts ? prompts_load(a->prompts, err) : NULL;
    if (a->prompts && !ps) return -1;
    if (cli_args_open(a->model, &cm, err) != 0) {
        prompts_free(ps);
        return -1;
    }
    specloop_cfg_t c = {strcmp(a->mode, "async") ? SPECLOOP_SYNC : SPECLOOP_ASYNC, a->gamma,
                        a->window, 0, 0, (float)a->temp, (uint64_t)a->seed, a->tokens};
    tenant_prompts_t tp = {NULL, NULL, 0};
    llm_model_t *t = NULL, *d = NULL;
    llm_run_t *r = NULL;
    specloop_out_t *out = calloc((size_t)a->tenants, sizeof *out);
    int rc = out ? batch_cfg(a->batch, &c, err) : err_set(err, ERR_RUNTIME, CMD ": out of memory");
    if (rc == 0 && (!(t = cli_args_load(&cm, a->target, err)) ||
                    !(d = cli_args_load(&cm, a->draft, err)) ||
                    !(r = llm_run_create(a->threads, err))))
        rc = -1;
    if (rc == 0) rc = tp_load(a, &cm, ps, t, &tp, err);
    if (rc == 0) {
        double t0 = wallclock_s();
        rc = specloop_run(&c, t, r, d, r, tp.n, (const int32_t *const *)tp.ids, tp.len, out, err);
        if (rc == 0) report(a, &cm, out, tp.n, wallclock_s() - t0);
        if (rc == 0 && a->check) rc = check(a, t, r, &tp, out, err);
        for (int i = 0; i < tp.n; i++) specloop_out_free(&out[i]);
    }
    free(out);
    tp_free(&tp);
    prompts_free(ps);
    llm_run_free(r);
    llm_free(t);
    llm_free(d);
    cli_args_close(&cm);
    return rc;
}

int cli_spec(int argc, char **argv)
{
    spec_args_t a = {0};
    return cli_args_main(argc, argv, &a, &a.help, parse, run, usage);
}
