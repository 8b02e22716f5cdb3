/* cli_args — option parsing and model loading shared by build/llm's
 * commands (kernels/llm/main.c). Options are `--name VALUE` or
 * `--name=VALUE` (flags take no value); an unknown option, one given twice,
 * a missing or malformed value is an error naming it (exit status 2).
 */
#ifndef SPECSIM_CLI_ARGS_H
#define SPECSIM_CLI_ARGS_H

#include <stdint.h>
#include <stdio.h>

#include "err.h"
#include "gguf.h"
#include "llm.h"
#include "tok.h"

enum cli_kind { CLI_FLAG, CLI_STR, CLI_INT, CLI_NUM };

typedef struct cli_opt {
    const char *name;    /* without the dashes */
    int kind;            /* enum cli_kind */
    void *dest;          /* int* (FLAG: set to 1; INT), const char** (STR), double* (NUM) */
    double lo, hi;       /* INT and NUM: the allowed range */
    int seen;
} cli_opt_t;

/* Parses argv[first..argc) against opts[n]. Arguments that are not
 * options are collected in pos (at most maxpos; more is an error). 0, or
 * -1 with err naming the command. */
int cli_args_parse(const char *cmd, int argc, char **argv, int first, cli_opt_t *opts, int n,
                   const char **pos, int maxpos, int *npos, err_t *err);

/* Everything a command needs of one GGUF file: the file, its tokenizer,
 * and models loaded from it. Owned by the caller: cli_args_close. */
typedef struct cli_model {
    gguf_t *g;
    tok_t *tok;
} cli_model_t;

int cli_args_open(const char *path, cli_model_t *cm, err_t *err);
void cli_args_close(cli_model_t *cm);
/* The model of spec from cm's file. NULL with err. */
llm_model_t *cli_args_load(const cli_model_t *cm, const char *spec, err_t *err);

/* The ids of a prompt: the text as it is (chat 0) or as the user turn of
 * the model's chat template (prompts.h), special tokens parsed. *ids is
 * malloc'd (the caller frees it). 0, or -1 with err. */
int cli_args_prompt(const cli_model_t *cm, const char *text, int chat, int32_t **ids, int *n,
                    err_t *err);
/* Writes the text of ids[0..n) to f (control tokens left out). 0, or -1 on
 * a write error. */
int cli_args_print_text(const cli_model_t *cm, const int32_t *ids, int n, FILE *f);

#endif
