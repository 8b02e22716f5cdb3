/* llm prompts — each prompt of a prompt file as the model reads it: its
 * category and its token count, raw or wrapped in the chat template as
 * the testbed's real-model tenants and `llm accept` send it. The counts
 * give a scenario the prompt lengths of a real run
 * (`prompt_tokens: {dist: empirical, file: ...}`; scripts/llm/real-validate.sh). */
#include <stdio.h>
#include <stdlib.h>

#include "cli_args.h"
#include "cli_cmds.h"
#include "prompts.h"

#define CMD "llm prompts"

typedef struct pr_args {
    const char *model, *prompts;
    int raw, help;
    int quiet;   /* --quiet: accepted; prompts has no progress to silence */
} pr_args_t;

static void usage(FILE *f)
{
    fprintf(f, "usage: " CMD " --model GGUF --prompts FILE [--raw] [--quiet]\n"
               "  prints one line per prompt: its number, category and tokens, wrapped\n"
               "  in the model's chat template (--raw: the text alone)\n"
               "  --quiet: accepted as by every command; prompts shows no progress, so it\n"
               "           has nothing to silence\n");
}

static int parse(int argc, char **argv, void *args, err_t *err)
{
    pr_args_t *a = args;
    *a = (pr_args_t){NULL, NULL, 0, 0, 0};
    cli_opt_t o[] = {
        {"model", CLI_STR, &a->model, 0, 0, 0}, {"prompts", CLI_STR, &a->prompts, 0, 0, 0},
        {"raw", CLI_FLAG, &a->raw, 0, 0, 0},    {"help", CLI_FLAG, &a->help, 0, 0, 0},
        {"quiet", CLI_FLAG, &a->quiet, 0, 0, 0},
    };
    int np;
    if (cli_args_parse(CMD, argc, argv, 2, o, (int)(sizeof o / sizeof o[0]), NULL, 0, &np, err))
        return -1;
    if (a->help) return 0;
    if (!a->model || !a->prompts)
        return err_set(err, ERR_INPUT, CMD ": --model and --prompts are required");
    return 0;
}

static int run(const void *args, err_t *err)
{
    const pr_args_t *a = args;
    cli_model_t cm;
    if (cli_args_open(a->model, &cm, err) != 0) return -1;
    prompts_t *ps = prompts_load(a->prompts, err);
    int rc = ps ? 0 : -1;
    for (int i = 0; rc == 0 && i < ps->n; i++) {
        int32_t *ids = NULL;
        int n = 0;
        rc = cli_args_prompt(&cm, ps->p[i].text, !a->raw, &ids, &n, err);
        free(ids);
        if (rc == 0 && printf("%d %s %d\n", i + 1, ps->p[i].category, n) < 0)
            rc = err_set(err, ERR_RUNTIME, CMD ": cannot write the output");
    }
    prompts_free(ps);
    cli_args_close(&cm);
    return rc;
}

int cli_prompts(int argc, char **argv)
{
    pr_args_t a = {0};
    return cli_args_main(argc, argv, &a, &a.help, parse, run, usage);
}
