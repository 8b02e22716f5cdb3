/* llm generate — one model decoding alone: the reference text speculative
 * decoding must reproduce, and a quick look at a draft's output. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_args.h"
#include "cli_cmds.h"
#include "engine/rng.h"
#include "specloop.h"
#include "base/wallclock.h"

#define CMD "llm generate"

typedef struct gen_args {
    const char *model, *weights, *prompt, *chat;
    int tokens, threads, ids, help;
    double temp, seed;
    int quiet;   /* --quiet: no timing line on stderr */
} gen_args_t;

static void usage(FILE *f)
{
    fprintf(f, "usage: " CMD " --model GGUF (--prompt TEXT | --chat TEXT) [--weights SPEC]\n"
               "       [--tokens N] [--temp T] [--seed S] [--threads N] [--ids] [--quiet]\n"
               "  SPEC: fp16 (default), w4a16, w4a16-int8, each optionally :LAYERS\n"
               "  --quiet: no timing line on stderr\n");
}

static int parse(int argc, char **argv, void *args, err_t *err)
{
    gen_args_t *a = args;
    *a = (gen_args_t){NULL, "fp16", NULL, NULL, 32, 0, 0, 0, 0.0, 1.0, 0};
    cli_opt_t o[] = {
        {"model", CLI_STR, &a->model, 0, 0, 0},     {"weights", CLI_STR, &a->weights, 0, 0, 0},
        {"prompt", CLI_STR, &a->prompt, 0, 0, 0},   {"chat", CLI_STR, &a->chat, 0, 0, 0},
        {"tokens", CLI_INT, &a->tokens, 1, 1 << 16, 0},
        {"temp", CLI_NUM, &a->temp, 0, 100, 0},     {"seed", CLI_WHOLE, &a->seed, 0, 1e15, 0},
        {"threads", CLI_INT, &a->threads, 0, 1024, 0},
        {"ids", CLI_FLAG, &a->ids, 0, 0, 0},        {"help", CLI_FLAG, &a->help, 0, 0, 0},
        {"quiet", CLI_FLAG, &a->quiet, 0, 0, 0},
    };
    int np;
    if (cli_args_parse(CMD, argc, argv, 2, o, (int)(sizeof o / sizeof o[0]), NULL, 0, &np, err))
        return -1;
    if (a->help) return 0;
    if (!a->model) return err_set(err, ERR_INPUT, CMD ": --model is required");
    if (!a->prompt == !a->chat)
        return err_set(err, ERR_INPUT, CMD ": give one of --prompt and --chat");
    return cli_args_spec(CMD, "--weights", a->weights, err);
}

static int print_ids(const int32_t *ids, int n)
{
    for (int i = 0; i < n; i++)
        if (printf("%d\n", (int)ids[i]) < 0) return -1;
    return 0;
}

static int run(const void *args, err_t *err)
{
    const gen_args_t *a = args;
    cli_model_t cm;
    if (cli_args_open(a->model, &cm, err) != 0) return -1;
    llm_model_t *m = cli_args_load(&cm, a->weights, err);
    llm_run_t *r = m ? llm_run_create(a->threads, err) : NULL;
    int32_t *prompt = NULL, *out = malloc((size_t)a->tokens * sizeof *out);
    gsl_rng *g = rng_stream((uint64_t)a->seed, 0, 0, 1);
    int n = 0, rc = -1;
    const char *what = a->prompt ? CMD ": --prompt" : CMD ": --chat";
    if (r && out && g &&
        cli_args_prompt_at(&cm, what, a->prompt ? a->prompt : a->chat, !a->prompt, &prompt, &n,
                           err) == 0 &&
        cli_args_fit(&cm, m, what, n, a->tokens, err) == 0) {
        double t0 = wallclock_s();
        rc = specloop_generate(m, r, prompt, n, a->tokens, (float)a->temp, g, out, err);
        double dt = wallclock_s() - t0;
        if (rc == 0) {
            rc = a->ids ? print_ids(out, a->tokens) : cli_args_print_text(&cm, out, a->tokens, stdout);
            if (!a->ids && rc == 0) rc = putchar('\n') == EOF ? -1 : 0;
            if (rc != 0) err_set(err, ERR_RUNTIME, CMD ": cannot write the output");
            if (!a->quiet)
                fprintf(stderr, CMD ": %s, %d prompt tokens, %d generated in %.3f s\n",
                        llm_name(m), n, a->tokens, dt);
        }
    } else if (!out || !g) {
        err_set(err, ERR_RUNTIME, CMD ": out of memory");
    }
    free(prompt);
    free(out);
    if (g) gsl_rng_free(g);
    llm_run_free(r);
    llm_free(m);
    cli_args_close(&cm);
    return rc;
}

int cli_generate(int argc, char **argv)
{
    gen_args_t a = {0};
    return cli_args_main(argc, argv, &a, &a.help, parse, run, usage);
}
