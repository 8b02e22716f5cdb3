/* cli_sweep — `specsim sweep` and `specsim merge` on the command line: usage,
 * options (cli_opt.h), the progress line and the error messages. The work is
 * the library's: sweep_run, sweep_explain (sweep.h) and sweepfile_merge
 * (sweepfile.h).
 */
#include "cli/cli_sweep.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli_opt.h"
#include "specsim.h"

static const char usage_sweep[] =
    "usage: specsim sweep SCENARIO [-j N] [--shard I/N] [--resume] [--force]\n"
    "                     [--out FILE.csv] [--set PATH=VALUE]... [--seed N]\n"
    "                     [--reps R] [--precision P] [--independent-seeds]\n"
    "                     [--per-group] [--quiet]\n"
    "       specsim sweep --explain ROW SCENARIO [--set PATH=VALUE]... [--seed N]\n"
    "                     [--reps R] [--independent-seeds]\n"
    "\n"
    "Runs every point of the scenario's sweep: section and writes one CSV row\n"
    "per point, in point order: point,<axis paths>,<metrics and _ci95>, plus\n"
    "the sidecar FILE.scenario.yaml (resolved base scenario and the axes).\n"
    "\n"
    "  -j, --jobs N         threads, 1 to 4096 (default: number of cores): N\n"
    "                       points at once; with fewer points than N, their\n"
    "                       replications share the N threads (docs/formats.md)\n"
    "  --shard I/N          run only points I, I+N, I+2N, ... (0 <= I < N)\n"
    "  --resume             continue FILE.csv: skip the points already in it\n"
    "  --force              overwrite an existing FILE.csv\n"
    "  --out FILE.csv       output (default: the scenario's output.file, else\n"
    "                       stdout); CSV only, so a .json name is refused; a\n"
    "                       device or FIFO gets the rows and no sidecar\n"
    "  --set PATH=VALUE     override a key of the base scenario (repeatable)\n"
    "  --seed N, --reps R   same as --set seed=N, --set replications=R\n"
    "  --precision P        same as --set precision.relative=P: each point adds\n"
    "                       replications until its CIs are within P of its means\n"
    "  --independent-seeds  seed each point from (seed, point) instead of\n"
    "                       common random numbers\n"
    "  --per-group          also every metric per tenant group, in columns\n"
    "                       GROUP.metric, GROUP.metric_ci95 (docs/formats.md)\n"
    "  --explain ROW        print the `specsim run` command for point ROW (it\n"
    "                       runs nothing: -j, --shard, --resume, --force,\n"
    "                       --out and --per-group are refused with it)\n"
    "  --quiet              no progress line\n"
    "\n"
    "wall_s and events_per_s columns are left empty: they are the only\n"
    "metrics that differ between runs, and sweep files are byte-reproducible.\n"
    "Exit status: 0 ok, 1 runtime failure, 2 bad usage or bad scenario.\n";

static const char usage_merge[] =
    "usage: specsim merge OUT.csv PART.csv... [--quiet]\n"
    "\n"
    "Merges the CSVs of a sharded sweep (specsim sweep --shard I/N) into the\n"
    "file an unsharded run writes. The parts must come from one sweep (equal\n"
    "sidecars) and together hold every point. OUT may not be one of the parts\n"
    "(nor their sidecars), nor another sweep's CSV or sidecar.\n"
    "--quiet is accepted as by every command; merge shows no progress, so it\n"
    "has nothing to silence.\n"
    "Exit status: 0 ok, 1 points missing or I/O failure, 2 bad usage or parts\n"
    "of different sweeps.\n";

/* The parsed command: the library's options plus what only the CLI uses. */
typedef struct sweep_cmd {
    sweep_opts_t o;
    int quiet, help, version;
    int has_explain;
    uint64_t explain;
    const char *run_opt;         /* the first option only a run uses (--out,
                                    -j, ...), for refusing it with --explain */
    cli_opt_sets_t sets;         /* --set, --seed, --reps */
} sweep_cmd_t;

static void cmd_fini(sweep_cmd_t *c)
{
    cli_opt_sets_fini(&c->sets);
}

static int parse_shard(const char *v, sweep_opts_t *o)
{
    const char *slash = strchr(v, '/');
    char ibuf[32];
    if (!slash || (size_t)(slash - v) >= sizeof ibuf)
        return cli_opt_usage_error("sweep", "--shard needs I/N, got '%s'", v);
    memcpy(ibuf, v, (size_t)(slash - v));
    ibuf[slash - v] = '\0';
    if (cli_opt_u64(ibuf, &o->shard_i) || cli_opt_u64(slash + 1, &o->shard_n) ||
        o->shard_n < 1 || o->shard_i >= o->shard_n)
        return cli_opt_usage_error("sweep", "--shard needs I/N with 0 <= I < N, got '%s'", v);
    return 0;
}

/* One option of `sweep`; 0 or an exit status. */
static int take(void *ctx, const cli_opt_arg_t *a)
{
    sweep_cmd_t *c = ctx;
    const char *v = a->value;
    if (!c->run_opt && (a->id == OPT_RESUME || a->id == OPT_FORCE || a->id == OPT_JOBS ||
                        a->id == OPT_SHARD || a->id == OPT_OUT || a->id == OPT_PER_GROUP))
        c->run_opt = cli_opt_name(a->id);
    switch (a->id) {
    case OPT_RESUME: c->o.resume = 1; return 0;
    case OPT_FORCE: c->o.force = 1; return 0;
    case OPT_QUIET: c->quiet = 1; return 0;
    case OPT_INDEPENDENT_SEEDS: c->o.independent_seeds = 1; return 0;
    case OPT_PER_GROUP: c->o.per_group = 1; return 0;
    case OPT_JOBS: return cli_opt_jobs("sweep", v, &c->o.jobs);
    case OPT_SHARD: return parse_shard(v, &c->o);
    case OPT_OUT:
        if (!*v) return cli_opt_usage_error("sweep", "--out needs a file name");
        c->o.out = v;
        return 0;
    case OPT_SET:
    case OPT_SEED:
    case OPT_REPS:
    case OPT_PRECISION: return cli_opt_sets_add(&c->sets, "sweep", a);
    case OPT_EXPLAIN:
        if (cli_opt_u64(v, &c->explain))
            return cli_opt_usage_error("sweep", "--explain needs a row (point) number, "
                                       "got '%s'", v);
        c->has_explain = 1;
        return 0;
    default: return 0;   /* --help, --version: read by the caller */
    }
}

static int parse_cmd(sweep_cmd_t *c, int argc, char **argv)
{
    memset(c, 0, sizeof *c);
    c->o.shard_n = 1;
    cli_opt_common_t com;
    int rc = cli_opt_read(CLI_SWEEP, "sweep", argc, argv, take, c, &com);
    c->help = com.help;
    c->version = com.version;
    c->o.scenario = com.scenario;
    if (rc || c->help || c->version) return rc;
    if (!c->o.scenario) return cli_opt_usage_error("sweep", "no SCENARIO given");
    if (c->o.resume && c->o.force)
        return cli_opt_usage_error("sweep", "--resume and --force exclude each other");
    /* --explain runs nothing: an option of the run would do nothing. */
    if (c->has_explain && c->run_opt)
        return cli_opt_usage_error("sweep", "%s does not go with --explain, which prints "
                                   "the run command of one point and runs nothing",
                                   c->run_opt);
    c->o.sets = c->sets.ov;
    c->o.nsets = c->sets.n;
    return 0;
}

/* The progress line's clock: when the sweep started, when last drawn. */
typedef struct progress_line {
    double t0, last;
} progress_line_t;

/* "sweep: D/T points  R points/s  ETA E", redrawn at most every 0.2 s. */
static void show_progress(void *ctx, const sweep_progress_t *p)
{
    progress_line_t *pl = ctx;
    double t = wallclock_s();
    if (!p->final && t - pl->last < 0.2) return;
    pl->last = t;
    double rate = (double)(p->done - p->done_at_start) / fmax(t - pl->t0, 1e-9);
    char eta[32] = "?";
    if (rate > 0) {
        double s = (double)(p->total - p->done) / rate;
        if (s < 120) snprintf(eta, sizeof eta, "%.0fs", s);
        else if (s < 7200) snprintf(eta, sizeof eta, "%.0fmin", s / 60);
        else snprintf(eta, sizeof eta, "%.1fh", s / 3600);
    }
    /* \033[K clears what a longer previous line left behind. */
    fprintf(stderr, "\rsweep: %" PRIu64 "/%" PRIu64 " points  %.1f points/s  ETA %s\033[K%s",
            p->done, p->total, rate, eta, p->final ? "\n" : "");
    fflush(stderr);
}

int cli_sweep(int argc, char **argv)
{
    sweep_cmd_t c;
    int rc = parse_cmd(&c, argc, argv);
    if (rc == 0 && c.help) {
        rc = fputs(usage_sweep, stdout) == EOF ? ERR_RUNTIME : 0;
    } else if (rc == 0 && c.version) {
        rc = cli_opt_print_version();
    } else if (rc == 0) {
        err_t err = {0};
        progress_line_t pl = {wallclock_s(), 0};
        /* On a terminal only: a log or a pipe gets no progress line. */
        if (!c.quiet && !c.has_explain && isatty(STDERR_FILENO)) {
            c.o.progress = show_progress;
            c.o.progress_ctx = &pl;
        }
        if ((c.has_explain ? sweep_explain(stdout, &c.o, c.explain, &err)
                           : sweep_run(&c.o, &err)) != 0) {
            fprintf(stderr, "specsim sweep: %s\n", err.msg);
            rc = err.code ? err.code : ERR_RUNTIME;
        }
    }
    cmd_fini(&c);
    return rc;
}

int cli_merge(int argc, char **argv)
{
    cli_opt_args_t *a = malloc(sizeof *a);
    if (!a) {
        fputs("specsim merge: out of memory\n", stderr);
        return ERR_RUNTIME;
    }
    char msg[256];
    int rc = -1;
    if (cli_opt_parse(CLI_MERGE, INT_MAX, argc, argv, a, msg, sizeof msg) != 0)
        rc = cli_opt_usage_error("merge", "%s", msg);
    else if (a->help)
        rc = fputs(usage_merge, stdout) == EOF ? ERR_RUNTIME : 0;
    else if (a->version)
        rc = cli_opt_print_version();
    else if (a->npos < 2)
        rc = cli_opt_usage_error("merge", "needs OUT.csv and at least one part");
    if (rc < 0) {
        err_t err = {0};
        rc = 0;
        if (sweepfile_merge(a->pos[0], a->pos + 1, a->npos - 1, &err)) {
            fprintf(stderr, "specsim merge: %s\n", err.msg);
            rc = err.code ? err.code : ERR_RUNTIME;
        }
    }
    free(a);
    return rc;
}
