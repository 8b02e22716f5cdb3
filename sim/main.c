/* specsim — command line. Parses arguments and calls the library; holds no
 * simulation logic of its own.
 *
 * Exit status: 0 ok, 1 runtime failure, 2 bad usage or bad scenario.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analytic.h"
#include "err.h"
#include "output.h"
#include "roofline.h"
#include "scenario.h"
#include "sim.h"
#include "sweep.h"
#include "sweepspec.h"

#define MAX_OVERRIDES 256

/* scenarios/default.yaml, embedded by the Makefile (build/gen/default_scenario.c)
 * so `specsim run` works from any directory. */
extern const char specsim_default_scenario[];

typedef struct cli {
    const char *scenario;      /* NULL = the embedded default */
    scenario_override_t ov[MAX_OVERRIDES];
    int nov;
    char seed_buf[32], reps_buf[32];
    const char *out;
    const char *trace;
    int json, quiet, help;
} cli_t;

static const char usage_main[] =
    "usage: specsim COMMAND [ARGS]\n"
    "\n"
    "Discrete-event simulator of multi-tenant edge-cloud LLM serving with\n"
    "speculative decoding (edge drafts, cloud verifies in batches, WAN between).\n"
    "\n"
    "commands:\n"
    "  run SCENARIO       simulate and print the metrics (DESIGN §5)\n"
    "  sweep SCENARIO     run the scenario's sweep: section, one CSV row per point\n"
    "  merge OUT PARTS... merge the CSV parts of a sharded sweep\n"
    "  check SCENARIO     validate and print the fully resolved scenario as YAML\n"
    "  analytic SCENARIO  closed-form predictions for the same scenario\n"
    "  roofline SCENARIO  verify iteration time vs batch tokens M (CSV)\n"
    "\n"
    "`specsim COMMAND --help` describes each command. SCENARIO may be omitted\n"
    "(run, check, analytic): the built-in scenarios/default.yaml is used.\n"
    "Exit status: 0 ok, 1 runtime failure, 2 bad usage or bad scenario.\n";

static const char usage_run[] =
    "usage: specsim run [SCENARIO] [--set PATH=VALUE]... [--seed N] [--reps R]\n"
    "                   [--out FILE.csv|FILE.json] [--json] [--trace FILE] [--quiet]\n"
    "\n"
    "Simulates SCENARIO (default: the built-in scenarios/default.yaml) and prints\n"
    "a summary of every metric with 95% confidence half-widths over replications.\n"
    "\n"
    "  --set PATH=VALUE  override any scenario key by its dotted path, e.g.\n"
    "                    --set protocol.gamma=6 --set tenants.network.rtt=80ms\n"
    "  --seed N          base seed (same as --set seed=N)\n"
    "  --reps R          replications (same as --set replications=R)\n"
    "  --json            print exactly one JSON object instead of the summary\n"
    "  --out FILE        also write results to FILE (.csv or .json) and the\n"
    "                    resolved scenario beside it (FILE without its\n"
    "                    extension + .scenario.yaml); written atomically\n"
    "  --trace FILE      per-event timeline of replication 0 (CSV:\n"
    "                    time,tenant,event,block,tokens); - for stdout (not\n"
    "                    with --json)\n"
    "  --quiet           no progress messages on stderr\n";

static const char usage_check[] =
    "usage: specsim check [SCENARIO] [--set PATH=VALUE]...\n"
    "\n"
    "Validates SCENARIO as `specsim run` does before it simulates (cards,\n"
    "calibration tables, model limits) and prints it fully resolved (every\n"
    "default filled in, cards inlined) as YAML that `specsim run` accepts. A\n"
    "sweep: section is validated as `specsim sweep` does before running and\n"
    "printed after the scenario. Errors name FILE:LINE:COLUMN and the dotted\n"
    "key, and exit with status 2.\n";

static const char usage_analytic[] =
    "usage: specsim analytic [SCENARIO] [--set PATH=VALUE]... [--json]\n"
    "\n"
    "Closed-form predictions for SCENARIO's first tenant group: expected\n"
    "accepted length, draft and verify times (calibration table and datasheet\n"
    "side by side), sync block time, single-tenant token rates of the sync,\n"
    "async, cloud-only and edge-only modes, and the roofline terms.\n";

static int usage_error(const char *cmd, const char *fmt, const char *arg)
{
    fprintf(stderr, "specsim %s: ", cmd);
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n(see `specsim %s --help`)\n", cmd);
    return 2;
}

static int add_override(cli_t *c, const char *cmd, const char *arg)
{
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg)
        return usage_error(cmd, "--set wants PATH=VALUE, got '%s'", arg);
    if (c->nov >= MAX_OVERRIDES)
        return usage_error(cmd, "too many --set options (at most %s)", "256");
    /* Split in place on a private copy: argv strings are not ours to edit. */
    char *copy = strdup(arg);
    if (!copy) {
        fprintf(stderr, "specsim: out of memory\n");
        return 1;
    }
    copy[eq - arg] = '\0';
    c->ov[c->nov].path = copy;
    c->ov[c->nov].value = copy + (eq - arg) + 1;
    c->nov++;
    return 0;
}

static void cli_free(cli_t *c)
{
    for (int i = 0; i < c->nov; i++)
        if (c->ov[i].path != c->seed_buf && c->ov[i].path != c->reps_buf)
            free((char *)c->ov[i].path);
}

static int is_uint(const char *s)
{
    if (!*s) return 0;
    for (; *s; s++)
        if (*s < '0' || *s > '9') return 0;
    return 1;
}

/* 1 when `opt` is one of the space-separated words of `allowed`. */
static int option_allowed(const char *allowed, const char *opt)
{
    size_t n = strlen(opt);
    for (const char *p = strstr(allowed, opt); p; p = strstr(p + 1, opt))
        if ((p == allowed || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
            return 1;
    return 0;
}

/* Parses the options shared by run, check and analytic. `allowed` lists the
 * long options this command takes. Returns 0, or an exit status. */
static int parse_args(cli_t *c, const char *cmd, int argc, char **argv,
                      const char *allowed)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *val = (i + 1 < argc) ? argv[i + 1] : NULL;
        if (a[0] != '-' || strcmp(a, "-") == 0) {
            if (c->scenario)
                return usage_error(cmd, "more than one scenario given ('%s')", a);
            c->scenario = a;
            continue;
        }
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            c->help = 1;
            return 0;
        }
        if (!option_allowed(allowed, a))
            return usage_error(cmd, "unknown option '%s'", a);
        if (strcmp(a, "--json") == 0) { c->json = 1; continue; }
        if (strcmp(a, "--quiet") == 0) { c->quiet = 1; continue; }
        if (!val) return usage_error(cmd, "option '%s' needs a value", a);
        i++;
        int rc = 0;
        if (strcmp(a, "--set") == 0) {
            rc = add_override(c, cmd, val);
        } else if (strcmp(a, "--seed") == 0 || strcmp(a, "--reps") == 0) {
            if (!is_uint(val)) {
                char what[160];
                snprintf(what, sizeof what, "%s wants a non-negative integer, got '%.100s'", a,
                         val);
                return usage_error(cmd, "%s", what);
            }
            int seed = strcmp(a, "--seed") == 0;
            char *buf = seed ? c->seed_buf : c->reps_buf;
            snprintf(buf, sizeof c->seed_buf, "%s", seed ? "seed" : "replications");
            if (c->nov >= MAX_OVERRIDES) return usage_error(cmd, "too many options%s", "");
            /* Marked with the option typed, so that messages name it (and
             * --set:N keeps counting only the --set options). */
            c->ov[c->nov] = (scenario_override_t){.path = buf, .value = val, .src = a};
            c->nov++;
        } else if (strcmp(a, "--out") == 0) {
            c->out = val;
        } else if (strcmp(a, "--trace") == 0) {
            c->trace = val;
        }
        if (rc) return rc;
    }
    return 0;
}

#define DEFAULT_NAME "scenarios/default.yaml (built in)"

static int load(const cli_t *c, scenario_t *s)
{
    err_t err = {0};
    int rc = c->scenario
                 ? scenario_load(c->scenario, c->ov, c->nov, s, &err)
                 : scenario_load_string(DEFAULT_NAME, specsim_default_scenario,
                                        c->ov, c->nov, s, &err);
    if (rc == 0) return 0;
    fprintf(stderr, "specsim: %s\n", err.msg);
    return err.code ? err.code : 2;
}

/* check: loads the scenario and makes every check `run` makes before it
 * simulates; a file's sweep: section, when it has one, is read into *sp and
 * validated as `sweep` validates it before running (sp->naxes 0 when none).
 * The text is read once: standard input cannot be read twice. Returns 0 or
 * the exit status, the error printed. */
static int load_checked(const cli_t *c, scenario_t *s, sweepspec_t *sp)
{
    err_t err = {0};
    char *text = NULL;
    size_t len = 0;
    int rc;
    if (!c->scenario)
        rc = scenario_load_string(DEFAULT_NAME, specsim_default_scenario, c->ov,
                                  c->nov, s, &err);
    else if ((rc = scenario_read(c->scenario, &text, &len, &err)) == 0)
        rc = scenario_load_text(c->scenario, text, len, c->ov, c->nov, s, &err);
    int loaded = rc == 0;
    if (rc == 0 && text) rc = sweepspec_check(c->scenario, text, c->ov, c->nov, sp, &err);
    free(text);
    if (rc == 0) return 0;
    if (loaded) scenario_fini(s);
    sweepspec_fini(sp);
    fprintf(stderr, "specsim: %s\n", err.msg);
    return err.code ? err.code : 2;
}

static int cmd_check(int argc, char **argv)
{
    cli_t c = {0};
    int rc = parse_args(&c, "check", argc, argv, "--set");
    if (rc == 0 && c.help) { fputs(usage_check, stdout); cli_free(&c); return 0; }
    scenario_t s;
    sweepspec_t sp = {0};
    if (rc == 0) rc = load_checked(&c, &s, &sp);
    if (rc == 0) {
        /* The sweep section after the scenario, so that the output is itself
         * the sweep scenario (as a sweep's sidecar is). */
        if (scenario_write_yaml(&s, stdout) != 0 ||
            (sp.naxes > 0 && sweepspec_write_yaml(&sp, stdout) != 0) ||
            fflush(stdout) != 0) {
            fprintf(stderr, "specsim check: cannot write the scenario: %s\n",
                    strerror(errno));
            rc = 1;
        }
        scenario_fini(&s);
        sweepspec_fini(&sp);
    }
    cli_free(&c);
    return rc;
}

static int cmd_analytic(int argc, char **argv)
{
    cli_t c = {0};
    int rc = parse_args(&c, "analytic", argc, argv, "--set --json");
    if (rc == 0 && c.help) { fputs(usage_analytic, stdout); cli_free(&c); return 0; }
    scenario_t s;
    if (rc == 0) rc = load(&c, &s);
    if (rc == 0) {
        analytic_t a;
        err_t err = {0};
        if (analytic_compute(&s, &a, &err) != 0) {
            fprintf(stderr, "specsim analytic: %s\n", err.msg);
            rc = err.code ? err.code : 1;
        } else if (analytic_print(stdout, &a, c.json) != 0 || fflush(stdout) != 0) {
            rc = 1;
        }
        scenario_fini(&s);
    }
    cli_free(&c);
    return rc;
}

/* Runs the simulation with the trace (if any) written atomically beside. */
static int run_with_trace(const cli_t *c, const scenario_t *s,
                          metrics_summary_t *m, err_t *err)
{
    sim_options_t opt = {.trace = NULL, .quiet = c->quiet || c->json};
    char tmp[4096];
    if (c->trace && strcmp(c->trace, "-") == 0) {
        /* Standard output: for piping into a plotter; nothing to commit. */
        opt.trace = stdout;
        return sim_run(s, &opt, m, err);
    }
    if (c->trace) {
        opt.trace = output_open_atomic(c->trace, tmp, sizeof tmp, err);
        if (!opt.trace) return -1;
    }
    if (sim_run(s, &opt, m, err) != 0) {
        if (opt.trace) output_abort(opt.trace, tmp);
        return -1;
    }
    if (opt.trace && output_commit(opt.trace, tmp, c->trace, err) != 0)
        return -1;
    return 0;
}

/* Refuses what would fail only after the whole run. 0, or the exit status. */
static int run_preflight(const cli_t *c, const scenario_t *s)
{
    if (c->json && c->trace && strcmp(c->trace, "-") == 0)
        return usage_error("run", "--json and %s would both write to standard output",
                           c->trace == s->output.trace ? "the scenario's output.trace: -"
                                                       : "--trace -");
    /* (A scenario's own output.file is checked, at its line, with the rest
     * of the scenario.) */
    err_t err = {0, {0}};
    if (c->out && c->out != s->output.file && output_check_path(c->out, &err) != 0) {
        fprintf(stderr, "specsim run: %s\n", err.msg);
        return ERR_INPUT;
    }
    return 0;
}

static int cmd_run(int argc, char **argv)
{
    cli_t c = {0};
    int rc = parse_args(&c, "run", argc, argv,
                        "--set --seed --reps --out --json --trace --quiet");
    if (rc == 0 && c.help) { fputs(usage_run, stdout); cli_free(&c); return 0; }
    scenario_t s;
    if (rc == 0) rc = load(&c, &s);
    if (rc != 0) { cli_free(&c); return rc; }

    /* The scenario's output: section gives defaults; the command line wins. */
    if (!c.out && s.output.file[0]) c.out = s.output.file;
    if (!c.trace && s.output.trace[0]) c.trace = s.output.trace;

    metrics_summary_t m;
    sim_sources_t src = {0};
    err_t err = {0};
    rc = run_preflight(&c, &s);
    if (rc != 0) {
        scenario_fini(&s);
        cli_free(&c);
        return rc;
    }
    if (sim_service_sources(&s, &src, &err) != 0 ||
        run_with_trace(&c, &s, &m, &err) != 0 ||
        (c.out && output_write_file(c.out, &s, &src, &m, &err) != 0)) {
        fprintf(stderr, "specsim run: %s\n", err.msg);
        rc = err.code ? err.code : 1;
    } else {
        int w = c.json ? output_json(stdout, &s, &src, &m)
                       : output_summary(stdout, &s, &src, &m);
        if (w != 0 || fflush(stdout) != 0) {
            fprintf(stderr, "specsim run: cannot write results: %s\n", strerror(errno));
            rc = 1;
        }
    }
    sim_sources_fini(&src);
    scenario_fini(&s);
    cli_free(&c);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fputs(usage_main, stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        fputs(usage_main, stdout);
        return 0;
    }
    if (strcmp(cmd, "run") == 0) return cmd_run(argc - 1, argv + 1);
    if (strcmp(cmd, "check") == 0) return cmd_check(argc - 1, argv + 1);
    if (strcmp(cmd, "analytic") == 0) return cmd_analytic(argc - 1, argv + 1);
    if (strcmp(cmd, "sweep") == 0) return sweep_cli(argc - 1, argv + 1);
    if (strcmp(cmd, "merge") == 0) return merge_cli(argc - 1, argv + 1);
    if (strcmp(cmd, "roofline") == 0) return roofline_cli(argc - 1, argv + 1);
    fprintf(stderr, "specsim: unknown command '%s'\n\n%s", cmd, usage_main);
    return 2;
}
