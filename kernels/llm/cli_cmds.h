/* cli_cmds — build/llm's commands (kernels/llm/main.c). Each takes the
 * whole argv (argv[1] is its name) and returns the exit status: 0, 1 (a
 * runtime failure or a failed check) or 2 (bad usage or input). */
#ifndef SPECSIM_CLI_CMDS_H
#define SPECSIM_CLI_CMDS_H

int cli_generate(int argc, char **argv);   /* cli_generate.c */
int cli_spec(int argc, char **argv);       /* cli_spec.c */
int cli_agree(int argc, char **argv);      /* cli_agree.c */
int cli_accept(int argc, char **argv);     /* cli_accept.c */
int cli_bench(int argc, char **argv);      /* cli_bench.c */
int cli_prompts(int argc, char **argv);    /* cli_prompts.c */

#endif
