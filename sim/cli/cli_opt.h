/* cli_opt — the one option parser of every `specsim` subcommand (command
 * line only: linked into build/specsim, not libspecsim.a).
 *
 * A table lists every option once: its long name, an optional one-letter
 * alias, whether it takes a value, whether it may be given more than once,
 * and which subcommands accept it. cli_opt_parse checks the syntax against
 * that table (unknown option, option of another subcommand, missing value,
 * repeated option, too many positional arguments) and hands the subcommand
 * the options in command-line order; what a value means (a number, PATH=VALUE)
 * is the subcommand's to check. A value follows its option as the next
 * argument or after '=' (`--out r.csv`, `--out=r.csv`); a one-letter alias
 * may carry it attached (`-j4`). "-" alone is a positional argument
 * (standard input). --help / -h, --version and --quiet / -q are accepted
 * everywhere.
 */
#ifndef SPECSIM_CLI_OPT_H
#define SPECSIM_CLI_OPT_H

#include <stddef.h>
#include <stdint.h>

#include "specsim.h"

/* The subcommands, as bits of cli_opt_spec_t.cmds. */
typedef enum cli_cmd {
    CLI_RUN = 1u << 0,
    CLI_CHECK = 1u << 1,
    CLI_ANALYTIC = 1u << 2,
    CLI_SWEEP = 1u << 3,
    CLI_MERGE = 1u << 4,
    CLI_ROOFLINE = 1u << 5,
    CLI_OPTIMIZE = 1u << 6,
    CLI_STEP = 1u << 7,
    CLI_COMPARE = 1u << 8,
} cli_cmd_t;

/* Every option, for cli_opt_arg_t.id. */
typedef enum cli_opt_id {
    OPT_HELP, OPT_VERSION,
    OPT_SET, OPT_SEED, OPT_REPS, OPT_OUT, OPT_JSON, OPT_TRACE, OPT_QUIET,
    OPT_PER_TENANT, OPT_PER_GROUP,
    OPT_JOBS, OPT_SHARD, OPT_RESUME, OPT_FORCE, OPT_INDEPENDENT_SEEDS,
    OPT_EXPLAIN, OPT_TRACE_REP,
    OPT_B_MAX, OPT_CONTEXT, OPT_POINTS, OPT_MEASURED, OPT_MODEL,
    OPT_KNOB, OPT_MAX, OPT_MIN, OPT_CONSTRAINT, OPT_SEARCH,
    OPT_HARDWARE, OPT_PRECISION, OPT_TP, OPT_BATCH, OPT_PROMPT, OPT_GENERATE,
    OPT_OVERHEAD, OPT_TOKENS, OPT_OP, OPT_ENGINE, OPT_KV_PRECISION,
    OPT_A, OPT_B,
    OPT_COUNT
} cli_opt_id_t;

typedef struct cli_opt_arg {
    cli_opt_id_t id;
    const char *value;     /* points into argv; NULL for a flag */
} cli_opt_arg_t;

#define CLI_OPT_MAX_ARGS 512

typedef struct cli_opt_args {
    cli_opt_arg_t opt[CLI_OPT_MAX_ARGS];   /* in command-line order */
    int nopt;
    /* The positional arguments, in command-line order: argv + 1, which the
     * parser permutes so that they come first (no limit of its own). */
    const char *const *pos;
    int npos;
    int help, version;                     /* --help/-h, --version seen */
} cli_opt_args_t;

/* Parses argv[1..argc-1] (argv[0] is the subcommand's name) for subcommand
 * `cmd`, which takes at most `max_pos` positional arguments (INT_MAX: any
 * number). Fills *out (a caller-owned record; nothing is allocated) and
 * reorders argv[1..] so that the positional arguments come first, in their
 * order; out->pos points there. An empty value (`--out=`, `--trace ""`) is
 * refused. Returns 0, or -1 with a
 * one-line message in msg (without the "specsim CMD: " prefix). Stops at
 * --help or --version, so that they work whatever follows. */
int cli_opt_parse(cli_cmd_t cmd, int max_pos, int argc, char **argv,
                  cli_opt_args_t *out, char *msg, size_t msgsz);

/* The option's long name ("--set"). */
const char *cli_opt_name(cli_opt_id_t id);

/* Prints "specsim CMD: MSG" and the pointer to --help on stderr; returns 2,
 * the exit status of bad usage. */
int cli_opt_usage_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Prints version_string() and a newline on stdout; returns the exit status. */
int cli_opt_print_version(void);

/* --- what every subcommand reads the same way ----------------------------- */

/* A non-negative decimal integer: digits only (no sign, no spaces), no
 * overflow. 0, or -1. */
int cli_opt_u64(const char *s, uint64_t *out);

/* The value of -j / --jobs: a thread count from 1 to POOL_JOBS_MAX
 * (sim/run/pool.h) into *jobs. 0, or the exit status of bad usage with
 * "specsim CMD: -j needs a thread count ..." printed. One reader, so that
 * run, sweep and optimize accept and refuse the same values. */
int cli_opt_jobs(const char *cmd, const char *value, long *jobs);

/* The scenario overrides of a command line, in command-line order
 * (sim/config/overrides.h). */
typedef overrides_t cli_opt_sets_t;

/* Adds option a to *s when it is --set PATH=VALUE, --seed N or --reps R
 * (the override seed=N / replications=R, marked with the option typed so
 * that messages name it and --set:N counts only the --set options); any
 * other option is left alone. No limit on their number. Returns 0, or an
 * exit status with "specsim CMD: ..." printed. Free with
 * cli_opt_sets_fini. */
int cli_opt_sets_add(cli_opt_sets_t *s, const char *cmd, const cli_opt_arg_t *a);
void cli_opt_sets_fini(cli_opt_sets_t *s);

/* The parts every subcommand reads the same way. */
typedef struct cli_opt_common {
    const char *scenario;   /* the one positional argument (argv), or NULL:
                               the scenario (step: the mode) */
    int help, version;
} cli_opt_common_t;

/* One option of a subcommand: 0, or an exit status with the message
 * printed. */
typedef int (*cli_opt_take_fn)(void *ctx, const cli_opt_arg_t *a);

/* Parses argv for subcommand cmd (named `name` in messages, one positional
 * argument: the scenario, or step's mode), hands every option to take(ctx, ...) in
 * command-line order and fills *common. Returns 0, or an exit status with
 * the message printed. */
int cli_opt_read(cli_cmd_t cmd, const char *name, int argc, char **argv,
                 cli_opt_take_fn take, void *ctx, cli_opt_common_t *common);

#endif
