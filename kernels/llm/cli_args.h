/* cli_args — option parsing and model loading shared by build/llm's
 * commands (kernels/llm/main.c). Options are `--name VALUE` or
 * `--name=VALUE` (flags take no value); an unknown option, one given twice,
 * a missing or malformed value is an error naming it (exit status 2).
 * Numbers are written plainly: INT and WHOLE values are decimal digits
 * with an optional '-', NUM values also take a fraction and an exponent;
 * leading blanks, '+', hex and words (inf, nan) are refused.
 */
#ifndef SPECSIM_CLI_ARGS_H
#define SPECSIM_CLI_ARGS_H

#include <stdint.h>
#include <stdio.h>

#include "base/err.h"
#include "gguf.h"
#include "llm.h"
#include "tok.h"

/* CLI_WHOLE: a whole number too large for an int (a seed), held in a
 * double; a fraction is refused, not dropped. */
enum cli_kind { CLI_FLAG, CLI_STR, CLI_INT, CLI_NUM, CLI_WHOLE };

typedef struct cli_opt {
    const char *name;    /* without the dashes */
    int kind;            /* enum cli_kind */
    void *dest;          /* int* (FLAG: set to 1; INT), const char** (STR), double* (NUM,
                            WHOLE) */
    double lo, hi;       /* INT, NUM and WHOLE: the allowed range */
    int seen;
} cli_opt_t;

/* Parses argv[first..argc) against opts[n]. Arguments that are not
 * options are collected in pos (at most maxpos; more is an error). 0, or
 * -1 with err naming the command. */
int cli_args_parse(const char *cmd, int argc, char **argv, int first, cli_opt_t *opts, int n,
                   const char **pos, int maxpos, int *npos, err_t *err);

/* A command's life: parse(argc, argv, args) (its error: the message, exit
 * 2); *help set by parse: usage on stdout, exit 0; else run(args) (its
 * error: the message, exit err.code or 1); then standard output flushed
 * (a write error: exit 1). args is the command's own options. */
typedef int (*cli_parse_fn)(int argc, char **argv, void *args, err_t *err);
typedef int (*cli_run_fn)(const void *args, err_t *err);
int cli_args_main(int argc, char **argv, void *args, const int *help, cli_parse_fn parse,
                  cli_run_fn run, void (*usage)(FILE *f));

/* Everything a command needs of one GGUF file: the file, its tokenizer,
 * and models loaded from it. Owned by the caller: cli_args_close. */
typedef struct cli_model {
    gguf_t *g;
    tok_t *tok;
} cli_model_t;

/* A model spec given as option `opt` ("--draft") of cmd: llm_opts_parse's
 * forms, with ":LAYERS" in plain digits. Checked before any file is read,
 * so a typo costs no model load. 0, or -1 with err "CMD: OPT: ...". */
int cli_args_spec(const char *cmd, const char *opt, const char *spec, err_t *err);
/* A comma-separated list of specs: each valid, none empty, none twice (the
 * second would overwrite the first's output). 0, or -1 with err. */
int cli_args_spec_list(const char *cmd, const char *opt, const char *list, err_t *err);

/* A regular file opened for reading ("rb"); a directory or a device is
 * refused by name rather than failing at its first read. NULL with err
 * "PATH: ...". */
FILE *cli_args_fopen_in(const char *path, err_t *err);
/* dir is an existing directory this process may create files in: checked
 * before a long measurement, not when its results are written. 0, or -1
 * with err "CMD: OPT 'DIR': ...". */
int cli_args_out_dir(const char *cmd, const char *opt, const char *dir, err_t *err);

int cli_args_open(const char *path, cli_model_t *cm, err_t *err);
void cli_args_close(cli_model_t *cm);
/* The model of spec from cm's file. The file's tokenizer must have as many
 * tokens as the model's vocabulary (token_embd.weight's rows), or its ids
 * could index past the embedding. NULL with err. */
llm_model_t *cli_args_load(const cli_model_t *cm, const char *spec, err_t *err);

/* The ids of a prompt: the text as it is (chat 0) or as the user turn of
 * the model's chat template (prompts.h), special tokens parsed. *ids is
 * malloc'd (the caller frees it). 0, or -1 with err. cli_args_prompt_at
 * names the prompt in its messages ("FILE:LINE:1: prompt 'CATEGORY'",
 * "--chat"); cli_args_prompt calls it "the prompt". */
int cli_args_prompt(const cli_model_t *cm, const char *text, int chat, int32_t **ids, int *n,
                    err_t *err);
int cli_args_prompt_at(const cli_model_t *cm, const char *what, const char *text, int chat,
                       int32_t **ids, int *n, err_t *err);
/* A prompt of plen tokens followed by `more` tokens fits m's context
 * (llama.context_length): past it the model reads positions it was never
 * trained on. 0, or -1 with err naming what (as above) and the file. */
int cli_args_fit(const cli_model_t *cm, const llm_model_t *m, const char *what, int plen,
                 int more, err_t *err);
/* Writes the text of ids[0..n) to f (control tokens left out). 0, or -1 on
 * a write error. */
int cli_args_print_text(const cli_model_t *cm, const int32_t *ids, int n, FILE *f);

#endif
