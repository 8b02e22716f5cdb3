/* build/llm — the real-model runtime's command line (docs/llm.md):
 *
 *   llm generate  --model GGUF ...   the target (or a draft) decoding alone
 *   llm spec      --model GGUF ...   speculative decoding of several tenants
 *   llm agree     --model GGUF ...   teacher-forced logits against llama.cpp's
 *   llm accept    --model GGUF ...   acceptance measured on a prompt set
 *   llm bench     --model GGUF ...   decode speed at M = 1 and batch 8
 *   llm prompts   --model GGUF ...   a prompt file's prompts and their lengths
 *
 * Exit status: 0 ok, 1 a runtime failure or a failed check, 2 bad usage or
 * a bad input file (one line naming it).
 */
#include <stdio.h>
#include <string.h>

#include <gsl/gsl_errno.h>

#include "cli_cmds.h"

static const struct {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *what;
} cmds[] = {
    {"generate", cli_generate, "decode with one model alone"},
    {"spec", cli_spec, "speculative decoding of several tenants, checked against the target"},
    {"agree", cli_agree, "teacher-forced logits against a llama.cpp reference file"},
    {"accept", cli_accept, "measure acceptance on a prompt set and write traces"},
    {"bench", cli_bench, "decode speed of the target and the draft"},
    {"prompts", cli_prompts, "each prompt's category and token count"},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: llm COMMAND [OPTIONS]   (llm COMMAND --help for its options)\n");
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
        fprintf(f, "  %-9s %s\n", cmds[i].name, cmds[i].what);
}

int main(int argc, char **argv)
{
    gsl_set_error_handler_off();
    /* Bad usage is one line, as every other error (the list is --help's). */
    if (argc < 2) {
        fprintf(stderr, "llm: no command given (llm --help lists them)\n");
        return 2;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        usage(stdout);
        return 0;
    }
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
        if (!strcmp(argv[1], cmds[i].name)) return cmds[i].run(argc, argv);
    fprintf(stderr, "llm: unknown command '%s' (llm --help lists them)\n", argv[1]);
    return 2;
}
