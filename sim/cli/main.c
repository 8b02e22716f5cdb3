/* specsim — command line: dispatches the subcommands and runs run, check,
 * analytic and compare (sweep and merge: cli_sweep.c, roofline: cli_roofline.c,
 * optimize: cli_optimize.c, step: cli_step.c;
 * every option is parsed by cli_opt.c). Holds no simulation logic of its
 * own; with the cli_*.c files it is the only code that prints or exits
 * (Makefile: they are not in libspecsim.a).
 *
 * Exit status: 0 ok, 1 runtime failure, 2 bad usage or bad scenario.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gsl/gsl_errno.h>

#include "specsim.h"
#include "cli/cli_opt.h"
#include "cli/cli_optimize.h"
#include "cli/cli_roofline.h"
#include "cli/cli_step.h"
#include "cli/cli_sweep.h"

/* scenarios/default.yaml, embedded by the Makefile (build/gen/default_scenario.c)
 * so `specsim run` works from any directory. */
extern const char specsim_default_scenario[];

typedef struct cli {
    const char *scenario;      /* NULL = the embedded default */
    cli_opt_sets_t sets;       /* --set, --seed, --reps */
    cli_opt_sets_t a, b;       /* compare: --a, --b */
    const char *out;
    const char *trace;
    long trace_rep;            /* -1 = not given (0) */
    const char *per_tenant;    /* --per-tenant FILE.csv */
    int json, quiet, help, version;
    int force;                 /* --force: may replace a sweep's CSV */
    long jobs;                 /* -j: replication threads; 0 = the cores */
    const char *cmd;           /* the subcommand, for messages */
} cli_t;

static const char usage_main[] =
    "usage: specsim COMMAND [ARGS]\n"
    "\n"
    "Discrete-event simulator of multi-tenant edge-cloud LLM serving with\n"
    "speculative decoding (edge drafts, cloud verifies in batches, WAN between).\n"
    "\n"
    "commands:\n"
    "  run SCENARIO       simulate and print the metrics (docs/metrics.md)\n"
    "  sweep SCENARIO     run the scenario's sweep: section, one CSV row per point\n"
    "  merge OUT PARTS... merge the CSV parts of a sharded sweep\n"
    "  optimize SCENARIO  search the optimize: section's knobs for the best point\n"
    "  check SCENARIO     validate and print the fully resolved scenario as YAML\n"
    "  analytic SCENARIO  closed-form predictions for the same scenario\n"
    "  compare SCENARIO   two variants on common random numbers: differences\n"
    "                     with paired confidence intervals\n"
    "  roofline SCENARIO  verify iteration time vs batch tokens M (CSV)\n"
    "  step MODE          a decode step, prefill or static batch on given cards\n"
    "\n"
    "`specsim COMMAND --help` describes each command; `specsim --version`\n"
    "prints the version and git commit. SCENARIO may be omitted\n"
    "(run, check, analytic, compare): the built-in scenarios/default.yaml is used.\n"
    "Every command accepts --quiet: run and sweep then show no progress line;\n"
    "the others show none anyway, so for them it has nothing to silence.\n"
    "Exit status: 0 ok, 1 runtime failure, 2 bad usage or bad scenario.\n";

static const char usage_run[] =
    "usage: specsim run [SCENARIO] [--set PATH=VALUE]... [--seed N] [--reps R]\n"
    "                   [--precision P] [-j N] [--out FILE.csv|FILE.json] [--json]\n"
    "                   [--trace FILE]\n"
    "                   [--trace-rep N] [--per-tenant FILE.csv] [--quiet]\n"
    "                   [--force]\n"
    "\n"
    "Simulates SCENARIO (default: the built-in scenarios/default.yaml) and prints\n"
    "a summary of every metric with 95% confidence half-widths over replications.\n"
    "\n"
    "  --set PATH=VALUE  override any scenario key by its dotted path, e.g.\n"
    "                    --set protocol.gamma=6 --set tenants.network.rtt=80ms\n"
    "  --seed N          base seed (same as --set seed=N)\n"
    "  --reps R          replications (same as --set replications=R)\n"
    "  --precision P     add replications until every metric of precision.metrics\n"
    "                    (default itl_mean_s, throughput_tok_s) has a CI\n"
    "                    half-width within P of its mean, e.g. 1% (same as\n"
    "                    --set precision.relative=P; replications is then the\n"
    "                    first round, at least 10; the summary says whether\n"
    "                    it was met: docs/guide.md, \"Runs that stop at a\n"
    "                    precision\")\n"
    "  -j, --jobs N      run the replications on N threads, 1 to 4096 (default:\n"
    "                    the number of cores; at most one per replication).\n"
    "                    Every output is the same for any N, wall_s and\n"
    "                    events_per_s aside: with N > 1 wall_s is the elapsed\n"
    "                    time of the overlapping replications\n"
    "  --json            print exactly one JSON object instead of the summary\n"
    "  --out FILE        also write results to FILE (.csv or .json) and the\n"
    "                    resolved scenario beside it (FILE without its\n"
    "                    extension + .scenario.yaml); written atomically\n"
    "  --trace FILE      per-event timeline of one replication: FILE.json is\n"
    "                    Chrome trace-event JSON for ui.perfetto.dev (a track\n"
    "                    per tenant and per GPU); any other name is CSV\n"
    "                    (time,tenant,event,block,tokens); - for stdout (CSV,\n"
    "                    not with --json)\n"
    "  --trace-rep N     the replication --trace shows (default 0)\n"
    "  --quiet           no progress line on stderr (shown on a terminal only,\n"
    "                    one update per replication; never with --json)\n"
    "  --per-tenant FILE one CSV row per tenant per replication (tokens, decode\n"
    "                    rate, ITL mean/p99, TTFT mean, requests, SLO-met\n"
    "                    fraction; docs/formats.md); written atomically\n"
    "  --force           let an output replace a sweep's CSV (and --out its\n"
    "                    sidecar); refused without it\n"
    "\n"
    "Outputs may not be the scenario nor each other; a device or FIFO is\n"
    "written through (docs/formats.md, \"Output files\").\n"
    "\n"
    "With more than one tenant group the summary ends with a table per group\n"
    "and --json adds \"groups\": {NAME: {every metric}}.\n";

static const char usage_check[] =
    "usage: specsim check [SCENARIO] [--set PATH=VALUE]... [--quiet]\n"
    "\n"
    "Validates SCENARIO as `specsim run` does before it simulates (cards,\n"
    "calibration tables, model limits) and prints it fully resolved (every\n"
    "default filled in, cards inlined) as YAML that `specsim run` accepts. A\n"
    "sweep: section is validated as `specsim sweep` does before running and\n"
    "printed after the scenario; so is an optimize: section (as `specsim\n"
    "optimize` checks it before its first point; printed resolved: knobs as\n"
    "lists, bounds in the metric's unit, the search it runs). Comment lines\n"
    "at the top name every file read (cards, tables, traces: found next to\n"
    "the scenario, else in the specsim root). Errors name FILE:LINE:COLUMN and the dotted\n"
    "key, and exit with status 2.\n"
    "\n"
    "  --quiet  accepted as by every command; check shows no progress, so it\n"
    "           has nothing to silence\n";

static const char usage_analytic[] =
    "usage: specsim analytic [SCENARIO] [--set PATH=VALUE]... [--json] [--quiet]\n"
    "\n"
    "Closed-form predictions for SCENARIO's first tenant group: expected\n"
    "accepted length, draft and verify times (calibration table and datasheet\n"
    "side by side), sync block time, single-tenant token rates of the sync,\n"
    "async, cloud-only and edge-only modes, and the roofline terms.\n"
    "\n"
    "  --json   print one JSON object instead of the text\n"
    "  --quiet  accepted as by every command; analytic shows no progress, so it\n"
    "           has nothing to silence\n";

static const char usage_compare[] =
    "usage: specsim compare [SCENARIO] --a PATH=VALUE... --b PATH=VALUE...\n"
    "                       [--set PATH=VALUE]... [--seed N] [--reps R] [-j N]\n"
    "                       [--out FILE.csv|FILE.json] [--json] [--quiet] [--force]\n"
    "\n"
    "Runs two variants of SCENARIO, a and b, on common random numbers (the same\n"
    "seed: replication r of each side draws from the same streams) and prints,\n"
    "for every metric, each side's mean, the difference b-a with its paired 95%\n"
    "CI half-width (t on the per-replication differences) beside the unpaired\n"
    "one (Welch's: what independent runs would give), and the ratio b/a with\n"
    "its half-width by the delta method. Example:\n"
    "  specsim compare S.yaml --a protocol.gamma=4 --b protocol.gamma=6 --reps 10\n"
    "\n"
    "  --a PATH=VALUE    a key of side a, as --set writes it; repeat it for\n"
    "                    several (--a protocol.mode=sync --a protocol.gamma=2)\n"
    "  --b PATH=VALUE    the same for side b; both sides need at least one\n"
    "  --set PATH=VALUE  a key of both sides (--seed N, --reps R: seed=N,\n"
    "                    replications=R); each side's own options come after\n"
    "                    every --set, so they win\n"
    "  -j, --jobs N      threads, 1 to 4096 (default: the cores): with 2 or more\n"
    "                    both sides run at once and share them as sweep points\n"
    "                    do; the output is the same for any N, wall_s and\n"
    "                    events_per_s aside\n"
    "  --json            print one JSON object instead of the table\n"
    "  --out FILE        also write the comparison to FILE (.csv: a row per\n"
    "                    metric; .json) and the scenario before --a and --b\n"
    "                    beside it (FILE without its extension +\n"
    "                    .scenario.yaml, its comments giving --a and --b);\n"
    "                    default: the scenario's output.file\n"
    "  --force           let --out replace a sweep's CSV or sidecar\n"
    "  --quiet           accepted as by every command; compare shows no progress\n"
    "\n"
    "Errors in --a and --b read --a:N:COL: PATH: ... (N: which --a, COL: the\n"
    "column in its PATH=VALUE). The sides must run the same number of\n"
    "replications. Which random draws the sides share, and which changes lose\n"
    "the sharing: docs/guide.md, \"Compare\".\n";

static void cli_fini(cli_t *c)
{
    cli_opt_sets_fini(&c->sets);
    cli_opt_sets_fini(&c->a);
    cli_opt_sets_fini(&c->b);
}

/* --a or --b PATH=VALUE: the next override of that side. 0, or an exit
 * status with the message printed. */
static int take_side(cli_t *c, const cli_opt_arg_t *o)
{
    cli_opt_sets_t *side = o->id == OPT_A ? &c->a : &c->b;
    err_t err = {0};
    if (overrides_add_opt(side, cli_opt_name(o->id), side->n + 1, o->value, &err) == 0)
        return 0;
    if (err.code == ERR_INPUT) return cli_opt_usage_error(c->cmd, "%s", err.msg);
    fprintf(stderr, "specsim %s: %s\n", c->cmd, err.msg);
    return 1;
}

/* One option of run, check, analytic or compare (cli_opt's table says
 * which each takes); 0 or an exit status. */
static int take(void *ctx, const cli_opt_arg_t *o)
{
    cli_t *c = ctx;
    switch (o->id) {
    case OPT_SET:
    case OPT_SEED:
    case OPT_REPS:
    case OPT_PRECISION: return cli_opt_sets_add(&c->sets, c->cmd, o);
    case OPT_OUT: c->out = o->value; return 0;
    case OPT_TRACE: c->trace = o->value; return 0;
    case OPT_TRACE_REP: {
        uint64_t v;
        if (cli_opt_u64(o->value, &v) != 0 || v > 999999999)
            return cli_opt_usage_error(c->cmd, "--trace-rep wants a replication "
                                       "number (0, 1, ...), got '%.100s'", o->value);
        c->trace_rep = (long)v;
        return 0;
    }
    case OPT_PER_TENANT:
        /* "-" is standard output for --trace; here it would be a file named
         * "-", which nobody means. */
        if (strcmp(o->value, "-") == 0)
            return cli_opt_usage_error(c->cmd, "--per-tenant needs a file name ('-' is "
                                       "not standard output here: give /dev/stdout)");
        c->per_tenant = o->value;
        return 0;
    case OPT_JSON: c->json = 1; return 0;
    case OPT_QUIET: c->quiet = 1; return 0;
    case OPT_JOBS: return cli_opt_jobs(c->cmd, o->value, &c->jobs);
    case OPT_FORCE: c->force = 1; return 0;
    case OPT_A:
    case OPT_B: return take_side(c, o);
    default: return 0;   /* --help, --version: read by cli_opt_read */
    }
}

/* Parses the options of run, check, analytic and compare. Returns 0, or an
 * exit status. */
static int parse_args(cli_t *c, cli_cmd_t id, const char *cmd, int argc, char **argv)
{
    cli_opt_common_t com;
    c->cmd = cmd;
    int rc = cli_opt_read(id, cmd, argc, argv, take, c, &com);
    c->help = com.help;
    c->version = com.version;
    c->scenario = com.scenario;
    return rc;
}

/* --help or --version: printed, and *rc set; 1 when the command is done. */
static int help_or_version(const cli_t *c, const char *usage, int *rc)
{
    if (*rc != 0) return 1;
    if (c->help) *rc = fputs(usage, stdout) == EOF ? 1 : 0;
    else if (c->version) *rc = cli_opt_print_version();
    else return 0;
    return 1;
}

#define DEFAULT_NAME "scenarios/default.yaml (built in)"

/* The scenario's text, parsed: the file, or the built-in default. */
static int open_src(const cli_t *c, scenario_src_t **src, err_t *err)
{
    return c->scenario ? scenario_src_open(c->scenario, src, err)
                       : scenario_src_string(DEFAULT_NAME, specsim_default_scenario, src,
                                             err);
}

/* Loads the scenario, keeping the source (*src, freed by the caller) so
 * that run can check its outputs against every file the load read. 0, or
 * the exit status with the error printed (*src NULL). */
static int load_src(const cli_t *c, scenario_t *s, scenario_src_t **src)
{
    err_t err = {0};
    int rc = open_src(c, src, &err);
    if (rc == 0 && scenario_src_load(*src, c->sets.ov, c->sets.n, s, &err) != 0) {
        scenario_src_free(*src);
        rc = -1;
    }
    if (rc == 0) return 0;
    *src = NULL;
    fprintf(stderr, "specsim: %s\n", err.msg);
    return err.code ? err.code : 2;
}

/* load_src for the commands that need only the scenario. */
static int load(const cli_t *c, scenario_t *s)
{
    scenario_src_t *src;
    int rc = load_src(c, s, &src);
    scenario_src_free(src);
    return rc;
}

/* check: loads the scenario and makes every check `run` makes before it
 * simulates; a file's sweep: section, when it has one, is read into *sp and
 * validated as `sweep` validates it before running (sp->naxes 0 when none).
 * The text is read once: standard input cannot be read twice. Returns 0 or
 * the exit status, the error printed. */
static int load_checked(const cli_t *c, scenario_t *s, sweepspec_t *sp,
                        optimize_spec_t *op, scenario_src_t **src)
{
    err_t err = {0};
    int rc = open_src(c, src, &err);
    if (rc == 0) rc = scenario_src_load(*src, c->sets.ov, c->sets.n, s, &err);
    int loaded = rc == 0;
    if (rc == 0 && c->scenario)
        rc = sweepspec_check_src(*src, c->sets.ov, c->sets.n, sp, &err);
    if (rc == 0 && c->scenario)
        rc = optimize_check(*src, c->sets.ov, c->sets.n, op, &err);
    if (rc == 0) return 0;
    if (loaded) scenario_fini(s);
    sweepspec_fini(sp);
    optimize_spec_fini(op);
    scenario_src_free(*src);
    *src = NULL;
    fprintf(stderr, "specsim: %s\n", err.msg);
    return err.code ? err.code : 2;
}

/* "# read PATH sha256 HEX" for every file the loads read: which card and
 * data were used, so that the output rerun from anywhere can tell. */
static int print_inputs(FILE *f, infiles_t *files)
{
    return infiles_write_reads(files, f);
}

static int cmd_check(int argc, char **argv)
{
    cli_t c = {0};
    int rc = parse_args(&c, CLI_CHECK, "check", argc, argv);
    if (help_or_version(&c, usage_check, &rc)) { cli_fini(&c); return rc; }
    scenario_t s;
    sweepspec_t sp = {0};
    optimize_spec_t op = {0};
    scenario_src_t *src = NULL;
    if (rc == 0) rc = load_checked(&c, &s, &sp, &op, &src);
    if (rc == 0) {
        /* The sweep section after the scenario, so that the output is itself
         * the sweep scenario (as a sweep's sidecar is). */
        if (print_inputs(stdout, scenario_src_files(src)) != 0 ||
            scenario_write_yaml(&s, stdout) != 0 ||
            (sp.naxes > 0 && sweepspec_write_yaml(&sp, stdout) != 0) ||
            optimize_write_yaml(&op, stdout) != 0 || fflush(stdout) != 0) {
            fprintf(stderr, "specsim check: standard output: cannot write the scenario: %s\n",
                    strerror(errno));
            rc = 1;
        }
        scenario_fini(&s);
        sweepspec_fini(&sp);
        optimize_spec_fini(&op);
        scenario_src_free(src);
    }
    cli_fini(&c);
    return rc;
}

static int cmd_analytic(int argc, char **argv)
{
    cli_t c = {0};
    int rc = parse_args(&c, CLI_ANALYTIC, "analytic", argc, argv);
    if (help_or_version(&c, usage_analytic, &rc)) { cli_fini(&c); return rc; }
    scenario_t s;
    if (rc == 0) rc = load(&c, &s);
    if (rc == 0) {
        analytic_t a;
        err_t err = {0};
        if (analytic_compute(&s, &a, &err) != 0) {
            /* What the closed forms cannot cover is a setting of the file. */
            if (err.code == ERR_INPUT && s.file[0])
                fprintf(stderr, "specsim analytic: %s: %s\n", s.file, err.msg);
            else
                fprintf(stderr, "specsim analytic: %s\n", err.msg);
            rc = err.code ? err.code : 1;
        } else if (analytic_print(stdout, &a, c.json) != 0 || fflush(stdout) != 0) {
            fprintf(stderr, "specsim analytic: standard output: write failed: %s\n",
                    strerror(errno));
            rc = 1;
        }
        scenario_fini(&s);
    }
    cli_fini(&c);
    return rc;
}

/* After each replication: how many are done, on one terminal line. */
static void run_progress(void *ctx, int done, int total)
{
    (void)ctx;
    fprintf(stderr, "\rrun: replication %d/%d done\033[K%s", done, total,
            done == total ? "\n" : "");
    fflush(stderr);
}

/* The keys `run` adds to its JSON (--json and --out F.json): "setup_s",
 * the part of wall_s that built the replications (a large fleet spends
 * seconds on it before its first event), and with precision: what it came
 * to ("precision_met", "precision_<metric>": the interval's half-width
 * over the mean at the stated confidence). Returns their count; key holds
 * the names. */
typedef struct run_extras {
    output_extra_t x[2 + PRECISION_METRICS_MAX];
    char key[PRECISION_METRICS_MAX][64];
    int n;
} run_extras_t;

static void run_extras(const scenario_t *s, const sim_precision_t *p, double setup,
                       run_extras_t *e)
{
    const precision_cfg_t *c = &s->precision;
    e->n = 0;
    e->x[e->n++] = (output_extra_t){.key = "setup_s", .value = setup};
    if (!(c->relative > 0)) return;
    e->x[e->n++] = (output_extra_t){.key = "precision_met", .value = p->met};
    for (int i = 0; i < c->nmetrics; i++) {
        snprintf(e->key[i], sizeof e->key[i], "precision_%s", metric_name(c->metrics[i]));
        e->x[e->n++] = (output_extra_t){.key = e->key[i], .value = p->relative[i]};
    }
}

/* --out, with the extras: 0, or -1 with err. */
static int write_out(const cli_t *c, const scenario_t *s, const output_sources_t *src,
                     const metrics_summary_t *m, const run_extras_t *e, err_t *err)
{
    return c->out ? output_write_file_extra(c->out, s, src, m, e->x, e->n, err) : 0;
}

/* Runs the simulation with the trace and per-tenant rows (if asked for)
 * written to temporaries beside their targets: on success they are durable
 * but not yet in place (*trace, *per hold them), so that the caller
 * publishes them only once the results are written too — a failed run
 * leaves none of its outputs. On failure nothing is left. Progress goes to
 * a terminal only (a log or a pipe gets none), and never with --quiet or
 * --json. *ex gets the JSON's extra keys (run_extras). */
static int run_with_trace(const cli_t *c, const scenario_t *s,
                          metrics_summary_t *m, metrics_summary_t *groups,
                          sim_warmup_diag_t *diag, sim_precision_t *prec,
                          run_extras_t *ex, outfile_t *trace, outfile_t *per, err_t *err)
{
    double setup = 0;
    int show = !c->quiet && !c->json && isatty(STDERR_FILENO);
    sim_options_t opt = {.trace = NULL, .progress = show ? run_progress : NULL,
                         .trace_rep = c->trace_rep > 0 ? (int)c->trace_rep : 0,
                         .warmup = diag, .groups = groups, .precision = prec,
                         .setup_s = &setup};
    long jobs = pool_jobs(c->jobs);
    opt.jobs = jobs < POOL_JOBS_MAX ? (int)jobs : POOL_JOBS_MAX;
    if (c->trace) opt.trace_format = trace_format_for(c->trace);
    int to_stdout = c->trace && strcmp(c->trace, "-") == 0;
    /* Standard output: for piping into a plotter; nothing to commit. */
    if (to_stdout) opt.trace = stdout;
    else if (c->trace && outfile_open(trace, c->trace, err) != 0)
        return -1;
    if (c->per_tenant && outfile_open(per, c->per_tenant, err) != 0) {
        outfile_abort(trace);
        return -1;
    }
    if (!to_stdout) opt.trace = trace->f;
    opt.per_tenant = per->f;
    int rc = sim_run(s, &opt, m, err);
    if (rc == 0) rc = outfile_close(per, err);
    if (rc == 0) rc = outfile_close(trace, err);
    if (rc != 0) {
        outfile_abort(per);
        outfile_abort(trace);
        return -1;
    }
    m->groups = groups;
    m->ngroups = s->ngroups;
    run_extras(s, prec, setup, ex);
    return 0;
}

/* With precision: whether the run met its targets, after the summary:
 * "precision  met after N replications (target ±1% at 95%): itl_mean_s
 * ±0.62%, ...", or "NOT met at the cap of N replications". 0, or -1 on a
 * write error. */
static int run_precision(const scenario_t *s, const sim_precision_t *p)
{
    char text[1024];
    if (!(s->precision.relative > 0)) return 0;
    sim_precision_text(s, p, text, sizeof text);
    return printf("\nprecision    %s\n", text) < 0 ? -1 : 0;
}

/* MSER-5 on the committed-token series (sim/stat/mser.h): a warm-up shorter
 * than its pick (the mean over replications: one replication's pick is
 * noisy) leaves the start-up transient in the metrics. A transient that
 * outlasts the warm-up by under WARMUP_SLACK of the measured time moves a
 * mean by at most that share of the transient's own deviation, within the
 * noise of the pick itself (a bin or two): no warning then. */
#define WARMUP_SLACK 0.05
static void warn_warmup(const cli_t *c, const scenario_t *s,
                        const sim_warmup_diag_t *d)
{
    if (s->warmup_auto) {
        if (!c->quiet && !c->json)
            fprintf(stderr, "specsim run: warmup auto: MSER-5 deleted %.3g s per "
                    "replication on average (at most %.3g s, replication %d)\n",
                    d->used_s, d->pick_max_s, d->rep_of_max);
        return;
    }
    if (d->pick_mean_s - s->warmup <= WARMUP_SLACK * (s->duration - s->warmup)) return;
    fprintf(stderr, "specsim run: warning: warmup %.3g s is shorter than the "
            "start-up transient MSER-5 finds in the committed tokens: it would "
            "delete %.3g s (mean over replications; at most %.3g s, replication "
            "%d); set warmup to that, or warmup: auto\n",
            s->warmup, d->pick_mean_s, d->pick_max_s, d->rep_of_max);
}

/* An output that would replace a sweep's CSV or its sidecar, refused
 * without --force: a sweep takes hours, a run's file is one command away. */
static int run_check_sweep(const cli_t *c, const char *path, const char *what,
                           err_t *err)
{
    return c->force ? 0 : sweepfile_check_replace(path, what, err);
}

/* Every output: a target outfile.h accepts, no sweep's CSV, and none the
 * scenario, a file it reads (read) or another output (compared as files:
 * links, hard links and ./ spellings are caught). */
static int run_check_outputs(const cli_t *c, infiles_t *read, err_t *err)
{
    const char *trace = c->trace && strcmp(c->trace, "-") != 0 ? c->trace : NULL;
    char side[OUTFILE_PATH_MAX];
    const char *sidep = NULL;
    outfile_kind_t kind;
    if (c->out) {
        if (outfile_kind(c->out, &kind, err) != 0) return -1;
        if (kind != OUTFILE_STREAM && output_sidecar_path(c->out, side, sizeof side) == 0)
            sidep = side;
    }
    if ((trace && outfile_kind(trace, &kind, err) != 0) ||
        (c->per_tenant && outfile_kind(c->per_tenant, &kind, err) != 0))
        return -1;
    const outfile_role_t r[] = {
        {c->scenario, "the scenario", 0}, {c->out, "--out", 1},
        {sidep, "--out's sidecar", 1}, {trace, "--trace", 1},
        {c->per_tenant, "--per-tenant", 1}};
    if (outfile_distinct(r, 5, err) != 0 || outfile_not_read(r, 5, read, err) != 0)
        return -1;
    for (int i = 1; i < 5; i++)
        if (run_check_sweep(c, r[i].path, r[i].what, err) != 0) return -1;
    /* --trace and --per-tenant are opened before the run; the results and
     * their sidecar only after it, so a directory they cannot be created in
     * is found now, not once the run is over. */
    if ((c->out && outfile_probe(c->out, err) != 0) ||
        (sidep && outfile_probe(sidep, err) != 0))
        return -1;
    return 0;
}

/* Refuses what would fail only after the whole run. 0, or the exit status. */
static int run_preflight(const cli_t *c, const scenario_t *s, infiles_t *read)
{
    if (c->json && c->trace && strcmp(c->trace, "-") == 0)
        return cli_opt_usage_error("run", "--json and %s would both write to standard output",
                           c->trace == s->output.trace ? "the scenario's output.trace: -"
                                                       : "--trace -");
    if (c->trace_rep >= 0 && !c->trace)
        return cli_opt_usage_error("run", "--trace-rep picks the replication "
                                   "--trace shows; give --trace too");
    /* With precision: the run makes at least its first round (10), not
     * just the replications the scenario gives. */
    int first = sim_first_round(s);
    if (c->trace_rep >= first)
        return cli_opt_usage_error("run", "--trace-rep %ld: the run has %d "
                                   "replication%s (0 .. %d)%s", c->trace_rep, first,
                                   first == 1 ? "" : "s", first - 1,
                                   s->precision.relative > 0
                                       ? " before precision: may stop it" : "");
    /* (A scenario's own output.file is checked, at its line, with the rest
     * of the scenario.) */
    err_t err = {0, {0}};
    if ((c->out && c->out != s->output.file && output_check_path(c->out, &err) != 0) ||
        run_check_outputs(c, read, &err) != 0) {
        fprintf(stderr, "specsim run: %s\n", err.msg);
        return err.code ? err.code : ERR_INPUT;
    }
    return 0;
}

static int cmd_run(int argc, char **argv)
{
    cli_t c = {0};
    c.trace_rep = -1;
    int rc = parse_args(&c, CLI_RUN, "run", argc, argv);
    if (help_or_version(&c, usage_run, &rc)) { cli_fini(&c); return rc; }
    scenario_t s;
    scenario_src_t *ssrc = NULL;
    if (rc == 0) rc = load_src(&c, &s, &ssrc);
    if (rc != 0) { cli_fini(&c); return rc; }

    /* The scenario's output: section gives defaults; the command line wins. */
    if (!c.out && s.output.file[0]) c.out = s.output.file;
    if (!c.trace && s.output.trace[0]) c.trace = s.output.trace;

    metrics_summary_t m;
    sim_warmup_diag_t diag;
    sim_precision_t prec;
    run_extras_t ex;
    output_sources_t src = {0};
    err_t err = {0};
    rc = run_preflight(&c, &s, scenario_src_files(ssrc));
    scenario_src_free(ssrc);
    metrics_summary_t *groups = calloc((size_t)s.ngroups, sizeof *groups);
    if (rc == 0 && !groups) {
        fprintf(stderr, "specsim run: out of memory\n");
        rc = 1;
    }
    if (rc != 0) {
        free(groups);
        scenario_fini(&s);
        cli_fini(&c);
        return rc;
    }
    outfile_t trace = {0}, per = {0};
    if (sim_service_sources(&s, &src, &err) != 0 ||
        run_with_trace(&c, &s, &m, groups, &diag, &prec, &ex, &trace, &per, &err) != 0 ||
        write_out(&c, &s, &src, &m, &ex, &err) != 0 ||
        outfile_publish(&per, &err) != 0 || outfile_publish(&trace, &err) != 0) {
        outfile_abort(&per);
        outfile_abort(&trace);
        fprintf(stderr, "specsim run: %s\n", err.msg);
        rc = err.code ? err.code : 1;
    } else {
        warn_warmup(&c, &s, &diag);
        int w = c.json ? output_json_extra(stdout, &s, &src, &m, ex.x, ex.n)
                       : output_summary(stdout, &s, &src, &m) || run_precision(&s, &prec);
        if (w != 0 || fflush(stdout) != 0) {
            fprintf(stderr, "specsim run: standard output: cannot write results: %s\n",
                    strerror(errno));
            rc = 1;
        }
    }
    output_sources_fini(&src);
    free(groups);
    scenario_fini(&s);
    cli_fini(&c);
    return rc;
}

/* A side that fails to load where the scenario without --a and --b loaded:
 * its options made the error even when it is located elsewhere (a table in
 * --set refusing --b's fp8 K,V cache), so say which side, unless the error
 * is located at that side's option already; the message keeps its
 * location first. Returns -1. */
static int side_blame(err_t *err, const char *side)
{
    char opt[8], msg[sizeof err->msg];
    snprintf(opt, sizeof opt, "--%s:", side);
    if (strncmp(err->msg, opt, strlen(opt)) == 0) return -1;
    snprintf(msg, sizeof msg, "%s", err->msg);
    err_set(err, err->code, "%s (side %s, with its --%s options)", msg, side, side);
    return -1;
}

/* compare's two sides: the scenario src with the --set options, then each
 * side's own. 0, or -1 with err (*a and *b empty). */
static int load_sides(const cli_t *c, const scenario_src_t *src, scenario_t *a,
                      scenario_t *b, err_t *err)
{
    if (compare_load(src, &c->sets, &c->a, a, err) != 0) return side_blame(err, "a");
    if (compare_load(src, &c->sets, &c->b, b, err) == 0) return 0;
    scenario_fini(a);
    return side_blame(err, "b");
}

/* Runs the sides, writes --out and prints the comparison. 0, or the exit
 * status with the error printed. */
static int compare_sides(const cli_t *c, const scenario_t *base, const scenario_t *a,
                         const scenario_t *b)
{
    err_t err = {0};
    compare_result_t r;
    compare_report_t rep = {.a = a, .b = b, .ova = &c->a, .ovb = &c->b, .r = &r};
    if (compare_run(a, b, c->jobs, &r, &err) != 0 ||
        (c->out && compare_write_file(c->out, base, &rep, &err) != 0)) {
        fprintf(stderr, "specsim compare: %s\n", err.msg);
        return err.code ? err.code : 1;
    }
    int w = c->json ? compare_json(stdout, &rep) : compare_print(stdout, &rep);
    if (w != 0 || fflush(stdout) != 0) {
        fprintf(stderr, "specsim compare: standard output: cannot write results: %s\n",
                strerror(errno));
        return 1;
    }
    return 0;
}

static int cmd_compare(int argc, char **argv)
{
    cli_t c = {0};
    int rc = parse_args(&c, CLI_COMPARE, "compare", argc, argv);
    if (help_or_version(&c, usage_compare, &rc)) { cli_fini(&c); return rc; }
    if (rc == 0 && (c.a.n == 0 || c.b.n == 0))
        rc = cli_opt_usage_error("compare", "needs both sides: --a PATH=VALUE and --b "
                                 "PATH=VALUE (each may be repeated)%s",
                                 c.a.n ? "; no --b given" : c.b.n ? "; no --a given" : "");
    /* The scenario with --set alone: the sidecar of --out, and its
     * output: section; output.trace is run's, not written here. */
    scenario_t base, a, b;
    scenario_src_t *src = NULL;
    err_t err = {0};
    if (rc == 0) rc = load_src(&c, &base, &src);
    if (rc != 0) { cli_fini(&c); return rc; }
    if (!c.out && base.output.file[0]) c.out = base.output.file;
    if (scenario_refuse_trace(&base, "compare", "give --trace to `specsim run` for "
                              "one side", &err) != 0 ||
        (c.out && output_check_path(c.out, &err) != 0) ||
        run_check_outputs(&c, scenario_src_files(src), &err) != 0) {
        fprintf(stderr, "specsim compare: %s\n", err.msg);
        rc = err.code ? err.code : ERR_INPUT;
    } else if (load_sides(&c, src, &a, &b, &err) != 0) {
        fprintf(stderr, "specsim: %s\n", err.msg);
        rc = err.code ? err.code : ERR_INPUT;
    } else {
        rc = compare_sides(&c, &base, &a, &b);
        scenario_fini(&a);
        scenario_fini(&b);
    }
    scenario_src_free(src);
    scenario_fini(&base);
    cli_fini(&c);
    return rc;
}

/* The library's warnings (sim/base/err.h), on standard error. */
static void print_warning(void *ctx, const char *msg)
{
    (void)ctx;
    fprintf(stderr, "specsim: warning: %s\n", msg);
}

int main(int argc, char **argv)
{
    /* GSL's default handler prints and aborts; the library checks GSL's
     * return values and reports through err_t instead. */
    gsl_set_error_handler_off();
    err_set_warn_handler(print_warning, NULL);
    if (argc < 2) {
        fputs(usage_main, stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        fputs(usage_main, stdout);
        return 0;
    }
    if (strcmp(cmd, "--version") == 0) return cli_opt_print_version();
    if (strcmp(cmd, "run") == 0) return cmd_run(argc - 1, argv + 1);
    if (strcmp(cmd, "check") == 0) return cmd_check(argc - 1, argv + 1);
    if (strcmp(cmd, "analytic") == 0) return cmd_analytic(argc - 1, argv + 1);
    if (strcmp(cmd, "compare") == 0) return cmd_compare(argc - 1, argv + 1);
    if (strcmp(cmd, "sweep") == 0) return cli_sweep(argc - 1, argv + 1);
    if (strcmp(cmd, "merge") == 0) return cli_merge(argc - 1, argv + 1);
    if (strcmp(cmd, "roofline") == 0) return cli_roofline(argc - 1, argv + 1);
    if (strcmp(cmd, "optimize") == 0) return cli_optimize(argc - 1, argv + 1);
    if (strcmp(cmd, "step") == 0) return cli_step(argc - 1, argv + 1);
    fprintf(stderr, "specsim: unknown command '%s'\n\n%s", cmd, usage_main);
    return 2;
}
