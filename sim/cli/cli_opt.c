/* cli_opt — the option table and its parser (see cli_opt.h). */
#include "cli/cli_opt.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "specsim.h"

typedef struct cli_opt_spec {
    const char *name;      /* "--set" */
    char alias;            /* 'o' for -o, or 0 */
    int takes_value;
    int repeatable;
    unsigned cmds;         /* cli_cmd_t bits */
} cli_opt_spec_t;

#define ALL (CLI_RUN | CLI_CHECK | CLI_ANALYTIC | CLI_SWEEP | CLI_MERGE | CLI_ROOFLINE | \
             CLI_OPTIMIZE | CLI_STEP | CLI_COMPARE)
#define SCENARIO_CMDS (CLI_RUN | CLI_CHECK | CLI_ANALYTIC | CLI_SWEEP | CLI_ROOFLINE | \
                       CLI_OPTIMIZE | CLI_COMPARE)
/* The commands that simulate the scenario and write its results. */
#define RESULT_CMDS (CLI_RUN | CLI_SWEEP | CLI_OPTIMIZE | CLI_COMPARE)

/* Indexed by cli_opt_id_t. Flags may be repeated (saying it twice means
 * the same); an option with a value may not, unless it accumulates
 * (--set): `--out a --out b` is a mistake, not a choice. */
static const cli_opt_spec_t specs[OPT_COUNT] = {
    [OPT_HELP] = {"--help", 'h', 0, 1, ALL},
    [OPT_VERSION] = {"--version", 0, 0, 1, ALL},
    [OPT_SET] = {"--set", 0, 1, 1, SCENARIO_CMDS},
    [OPT_SEED] = {"--seed", 0, 1, 0, RESULT_CMDS},
    [OPT_REPS] = {"--reps", 0, 1, 0, RESULT_CMDS},
    [OPT_OUT] = {"--out", 'o', 1, 0, RESULT_CMDS},
    [OPT_JSON] = {"--json", 0, 0, 1, CLI_RUN | CLI_ANALYTIC | CLI_OPTIMIZE | CLI_COMPARE},
    [OPT_TRACE] = {"--trace", 0, 1, 0, CLI_RUN},
    [OPT_TRACE_REP] = {"--trace-rep", 0, 1, 0, CLI_RUN},
    /* Every command takes --quiet, so that a script can pass it to any of
     * them; run and sweep have a progress line to silence, the others none. */
    [OPT_QUIET] = {"--quiet", 'q', 0, 1, ALL},
    [OPT_PER_TENANT] = {"--per-tenant", 0, 1, 0, CLI_RUN},
    [OPT_PER_GROUP] = {"--per-group", 0, 0, 1, CLI_SWEEP},
    [OPT_JOBS] = {"--jobs", 'j', 1, 0, RESULT_CMDS},
    [OPT_SHARD] = {"--shard", 0, 1, 0, CLI_SWEEP},
    [OPT_RESUME] = {"--resume", 0, 0, 1, CLI_SWEEP},
    [OPT_FORCE] = {"--force", 0, 0, 1, RESULT_CMDS},
    [OPT_INDEPENDENT_SEEDS] = {"--independent-seeds", 0, 0, 1, CLI_SWEEP},
    [OPT_EXPLAIN] = {"--explain", 0, 1, 0, CLI_SWEEP},
    [OPT_B_MAX] = {"--b-max", 0, 1, 0, CLI_ROOFLINE},
    [OPT_CONTEXT] = {"--context", 0, 1, 0, CLI_ROOFLINE | CLI_STEP},
    [OPT_POINTS] = {"--points", 0, 1, 0, CLI_ROOFLINE},
    [OPT_MEASURED] = {"--measured", 0, 1, 0, CLI_ROOFLINE},
    [OPT_MODEL] = {"--model", 0, 1, 0, CLI_ROOFLINE | CLI_STEP},
    [OPT_KNOB] = {"--knob", 0, 1, 1, CLI_OPTIMIZE},
    [OPT_MAX] = {"--max", 0, 1, 0, CLI_OPTIMIZE},
    [OPT_MIN] = {"--min", 0, 1, 0, CLI_OPTIMIZE},
    [OPT_CONSTRAINT] = {"--constraint", 0, 1, 1, CLI_OPTIMIZE},
    [OPT_SEARCH] = {"--search", 0, 1, 0, CLI_OPTIMIZE},
    [OPT_HARDWARE] = {"--hardware", 0, 1, 0, CLI_STEP},
    /* step: the weights' number format; run, sweep, optimize: the
     * statistical precision to stop at (precision.relative). */
    [OPT_PRECISION] = {"--precision", 0, 1, 0, CLI_STEP | CLI_RUN | CLI_SWEEP | CLI_OPTIMIZE},
    [OPT_TP] = {"--tp", 0, 1, 0, CLI_STEP},
    [OPT_BATCH] = {"--batch", 0, 1, 0, CLI_STEP},
    [OPT_PROMPT] = {"--prompt", 0, 1, 0, CLI_STEP},
    [OPT_GENERATE] = {"--generate", 0, 1, 0, CLI_STEP},
    [OPT_OVERHEAD] = {"--overhead", 0, 1, 0, CLI_STEP},
    [OPT_TOKENS] = {"--tokens", 0, 1, 0, CLI_STEP},
    [OPT_OP] = {"--op", 0, 1, 0, CLI_STEP},
    [OPT_ENGINE] = {"--engine", 0, 1, 0, CLI_STEP},
    [OPT_KV_PRECISION] = {"--kv-precision", 0, 1, 0, CLI_STEP},
    [OPT_A] = {"--a", 0, 1, 1, CLI_COMPARE},
    [OPT_B] = {"--b", 0, 1, 1, CLI_COMPARE},
};

/* take_option keeps the options seen as bits of one word. */
_Static_assert(OPT_COUNT <= 64, "more options than bits in cli_opt_parse's seen set");

const char *cli_opt_name(cli_opt_id_t id)
{
    return (unsigned)id < OPT_COUNT ? specs[id].name : "?";
}

/* The option `a` names, or -1. *inline_val gets the value written in the
 * same argument ("--out=x", "-j4"), or NULL; *len the name's length. */
static int lookup(const char *a, const char **inline_val, size_t *len)
{
    *inline_val = NULL;
    if (a[0] == '-' && a[1] != '-') {
        for (int i = 0; i < OPT_COUNT; i++) {
            if (!specs[i].alias || a[1] != specs[i].alias) continue;
            if (a[2] && !specs[i].takes_value) return -1;
            if (a[2]) *inline_val = a + 2;
            *len = 2;
            return i;
        }
        return -1;
    }
    const char *eq = strchr(a, '=');
    size_t n = eq ? (size_t)(eq - a) : strlen(a);
    for (int i = 0; i < OPT_COUNT; i++) {
        if (strlen(specs[i].name) != n || strncmp(a, specs[i].name, n) != 0) continue;
        if (eq) *inline_val = eq + 1;
        *len = n;
        return i;
    }
    return -1;
}

static int fail(char *msg, size_t msgsz, const char *fmt, const char *arg)
{
    snprintf(msg, msgsz, fmt, arg);
    return -1;
}

/* Takes the option at argv[*i] (and its value); 0 or -1 with msg. */
static int take_option(cli_cmd_t cmd, int argc, char **argv, int *i,
                       cli_opt_args_t *out, uint64_t *seen, char *msg, size_t msgsz)
{
    const char *a = argv[*i], *val;
    size_t len;
    int id = lookup(a, &val, &len);
    if (id < 0 || !(specs[id].cmds & (unsigned)cmd))
        return fail(msg, msgsz, "unknown option '%s'", a);
    char spelled[64];
    snprintf(spelled, sizeof spelled, "%.*s", (int)len, a);
    if (!specs[id].takes_value && val)
        return fail(msg, msgsz, "option '%s' takes no value", spelled);
    if (specs[id].takes_value && !val) {
        if (*i + 1 >= argc) return fail(msg, msgsz, "option '%s' needs a value", spelled);
        val = argv[++*i];
    }
    /* No option means "nothing" by an empty value: `--trace=` would run the
     * whole simulation and then fail to open "". */
    if (specs[id].takes_value && !*val)
        return fail(msg, msgsz, "option '%s' needs a non-empty value", spelled);
    if (!specs[id].repeatable && (*seen & ((uint64_t)1 << id)))
        return fail(msg, msgsz, "option '%s' given more than once", specs[id].name);
    *seen |= (uint64_t)1 << id;
    if (id == OPT_HELP) out->help = 1;
    if (id == OPT_VERSION) out->version = 1;
    if (out->nopt >= CLI_OPT_MAX_ARGS) return fail(msg, msgsz, "%s", "too many options");
    out->opt[out->nopt++] = (cli_opt_arg_t){.id = (cli_opt_id_t)id, .value = val};
    return 0;
}

int cli_opt_parse(cli_cmd_t cmd, int max_pos, int argc, char **argv,
                  cli_opt_args_t *out, char *msg, size_t msgsz)
{
    memset(out, 0, sizeof *out);
    out->pos = (const char *const *)(argv + 1);
    uint64_t seen = 0;
    for (int i = 1; i < argc; i++) {
        char *a = argv[i];
        if (a[0] != '-' || strcmp(a, "-") == 0) {
            /* The one positional argument is a scenario, or step's mode. */
            if (out->npos >= max_pos)
                return fail(msg, msgsz, max_pos != 1 ? "too many arguments ('%s')"
                                        : cmd == CLI_STEP ? "more than one mode given ('%s')"
                                                          : "more than one scenario given ('%s')",
                            a);
            /* Every slot before i past the positionals held an option,
             * already taken: swap, so argv stays a permutation. */
            argv[i] = argv[1 + out->npos];
            argv[1 + out->npos++] = a;
            continue;
        }
        if (take_option(cmd, argc, argv, &i, out, &seen, msg, msgsz) != 0) return -1;
        if (out->help || out->version) return 0;
    }
    return 0;
}

int cli_opt_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "specsim %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n(see `specsim %s --help`)\n", cmd);
    va_end(ap);
    return 2;
}

int cli_opt_print_version(void)
{
    return printf("%s\n", version_string()) < 0 || fflush(stdout) != 0 ? 1 : 0;
}

/* ---- what every subcommand reads the same way --------------------------- */

int cli_opt_u64(const char *s, uint64_t *out)
{
    return overrides_u64(s, out);
}

int cli_opt_jobs(const char *cmd, const char *value, long *jobs)
{
    uint64_t x;
    if (cli_opt_u64(value, &x) || x < 1 || x > POOL_JOBS_MAX)
        return cli_opt_usage_error(cmd, "-j needs a thread count from 1 to %d, got '%s'",
                                   POOL_JOBS_MAX, value);
    *jobs = (long)x;
    return 0;
}

static int out_of_memory(void)
{
    fprintf(stderr, "specsim: out of memory\n");
    return 1;
}

int cli_opt_sets_add(cli_opt_sets_t *s, const char *cmd, const cli_opt_arg_t *a)
{
    overrides_kind_t kind = a->id == OPT_SEED ? OVERRIDES_SEED
                          : a->id == OPT_REPS ? OVERRIDES_REPS
                          : a->id == OPT_PRECISION ? OVERRIDES_PRECISION : OVERRIDES_SET;
    if (a->id != OPT_SET && a->id != OPT_SEED && a->id != OPT_REPS && a->id != OPT_PRECISION)
        return 0;
    err_t err = {0};
    if (overrides_add(s, kind, a->value, &err) == 0) return 0;
    return err.code == ERR_INPUT ? cli_opt_usage_error(cmd, "%s", err.msg)
                                 : out_of_memory();
}

void cli_opt_sets_fini(cli_opt_sets_t *s)
{
    overrides_fini(s);
}

int cli_opt_read(cli_cmd_t cmd, const char *name, int argc, char **argv,
                 cli_opt_take_fn take, void *ctx, cli_opt_common_t *common)
{
    memset(common, 0, sizeof *common);
    cli_opt_args_t *a = malloc(sizeof *a);
    if (!a) return out_of_memory();
    char msg[256];
    int rc = 0;
    if (cli_opt_parse(cmd, 1, argc, argv, a, msg, sizeof msg) != 0)
        rc = cli_opt_usage_error(name, "%s", msg);
    for (int i = 0; rc == 0 && i < a->nopt; i++) rc = take(ctx, &a->opt[i]);
    if (rc == 0) {
        common->help = a->help;
        common->version = a->version;
        common->scenario = a->npos ? a->pos[0] : NULL;
    }
    free(a);
    return rc;
}
