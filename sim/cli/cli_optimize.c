/* cli_optimize — `specsim optimize` on the command line (see cli_optimize.h):
 * usage, options (cli_opt.h), the report and the CSV. */
#include "cli/cli_optimize.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli_opt.h"
#include "specsim.h"

static const char usage[] =
    "usage: specsim optimize SCENARIO [--json] [-j N] [--out FILE.csv] [--force]\n"
    "                        [--set PATH=VALUE]... [--seed N] [--reps R]\n"
    "                        [--precision P]\n"
    "                        [--knob PATH=VALUES]... [--max METRIC | --min METRIC]\n"
    "                        [--constraint 'METRIC<=VALUE']... [--search S] [--quiet]\n"
    "\n"
    "Searches the knobs of the scenario's optimize: section for the best point\n"
    "by its objective (max: or min:) among those meeting its constraints, each\n"
    "constraint met only when its 95% CI is on the right side of the bound.\n"
    "Prints the best point with every metric and its CI, and the Pareto\n"
    "frontier of the objective against the first constraint's metric over the\n"
    "evaluated points (docs/formats.md, \"Optimize\").\n"
    "\n"
    "  --json             one JSON object: best, evaluations, points, search,\n"
    "                     frontier\n"
    "  -j, --jobs N       threads, 1 to 4096 (default: number of cores): a\n"
    "                     step's points at once; with fewer points than N,\n"
    "                     their replications share the N threads\n"
    "  --out FILE.csv     every evaluated point as a sweep CSV (point order;\n"
    "                     default: the scenario's output.file, else none)\n"
    "  --force            let --out replace a sweep's CSV or sidecar; refused\n"
    "                     without it\n"
    "  --set PATH=VALUE   override a key of the base scenario (repeatable)\n"
    "  --seed N, --reps R same as --set seed=N, --set replications=R\n"
    "  --precision P      same as --set precision.relative=P: each point adds\n"
    "                     replications until its CIs are within P of its means\n"
    "  --quiet            accepted as by every command; optimize shows no\n"
    "                     progress, so it has nothing to silence\n"
    "\n"
    "The section's parts from the command line; each one given replaces that\n"
    "part of the section whole (all its knobs, all its constraints), the others\n"
    "stay; a scenario without the section needs --knob and --max or --min:\n"
    "  --knob PATH=VALUES knob (repeatable): 1,2,4 | FROM..TO[:STEP] (step 1\n"
    "                     by default; 10ms..100ms:10ms) | [1, 2, 4] |\n"
    "                     {from: 1, to: 64, count: 7, scale: log, integer: true}\n"
    "  --max METRIC, --min METRIC\n"
    "                     the objective: a metric or a knob's path\n"
    "  --constraint C     'itl_p99_s <= 80ms', 'slo_attainment >= 0.99'\n"
    "                     (repeatable)\n"
    "  --search S         auto, bisect, coordinate or grid\n"
    "Errors in them read --knob:N:COL, --constraint:N:1, --max, --search.\n"
    "\n"
    "Exit status: 0 ok, 1 runtime failure or no evaluated point meets the\n"
    "constraints, 2 bad usage or bad scenario.\n";

#define MAX_SETS 256

typedef struct cmd {
    optimize_opts_t o;
    scenario_override_t sets[MAX_SETS];
    char *owned[MAX_SETS];
    int nowned;
    const char *out;
    char out_file[SCEN_PATH_MAX];   /* the scenario's output.file, when --out
                                       is not given */
    int json, help, version;
    int force;                 /* --force: --out may replace a sweep's CSV */
    const char *knobs[MAX_SETS], *cons[MAX_SETS];
    optimize_flags_t fl;
} cmd_t;

static void cmd_fini(cmd_t *c)
{
    for (int i = 0; i < c->nowned; i++) free(c->owned[i]);
}

/* Out of memory, said (every failure prints its reason); the exit status. */
static int out_of_memory(void)
{
    fputs("specsim optimize: out of memory\n", stderr);
    return ERR_RUNTIME;
}

static int add_set(cmd_t *c, const char *path, const char *value, const char *src)
{
    if (c->o.nsets >= MAX_SETS)
        return cli_opt_usage_error("optimize", "too many --set options (at most %d)", MAX_SETS);
    c->sets[c->o.nsets++] = (scenario_override_t){.path = path, .value = value, .src = src};
    return 0;
}

static int add_set_arg(cmd_t *c, const char *arg)
{
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg)
        return cli_opt_usage_error("optimize", "--set needs PATH=VALUE, got '%s'", arg);
    if (c->nowned >= MAX_SETS)
        return cli_opt_usage_error("optimize", "too many --set options (at most %d)", MAX_SETS);
    char *own = strdup(arg);
    if (!own) return out_of_memory();
    c->owned[c->nowned++] = own;
    own[eq - arg] = '\0';
    return add_set(c, own, own + (eq - arg) + 1, NULL);
}

/* One option; 0 or an exit status. */
static int take(cmd_t *c, const cli_opt_arg_t *a)
{
    uint64_t u;
    switch (a->id) {
    case OPT_JSON: c->json = 1; return 0;
    case OPT_FORCE: c->force = 1; return 0;
    case OPT_JOBS: return cli_opt_jobs("optimize", a->value, &c->o.jobs);
    case OPT_OUT:
        if (!*a->value || strcmp(a->value, "-") == 0)
            return cli_opt_usage_error("optimize", "--out needs a file name");
        c->out = c->o.out = a->value;
        return 0;
    case OPT_SET: return add_set_arg(c, a->value);
    case OPT_KNOB:
    case OPT_CONSTRAINT: {
        int *n = a->id == OPT_KNOB ? &c->fl.nknobs : &c->fl.ncons;
        if (*n >= MAX_SETS)
            return cli_opt_usage_error("optimize", "too many %s options (at most %d)",
                                       cli_opt_name(a->id), MAX_SETS);
        (a->id == OPT_KNOB ? c->knobs : c->cons)[(*n)++] = a->value;
        return 0;
    }
    case OPT_MAX:
    case OPT_MIN:
        if (c->fl.objective)
            return cli_opt_usage_error("optimize", "one objective only: --max or --min");
        c->fl.objective = a->value;
        c->fl.maximize = a->id == OPT_MAX;
        return 0;
    case OPT_SEARCH: c->fl.search = a->value; return 0;
    case OPT_PRECISION: return add_set(c, "precision.relative", a->value, "--precision");
    case OPT_SEED:
    case OPT_REPS:
        /* Read as run, sweep and compare read them (cli_opt_u64): a seed is
         * any 64-bit value, and the loader bounds replications itself. */
        if (cli_opt_u64(a->value, &u))
            return cli_opt_usage_error("optimize", "%s needs a non-negative integer, got '%s'",
                                       cli_opt_name(a->id), a->value);
        return add_set(c, a->id == OPT_SEED ? "seed" : "replications", a->value,
                       cli_opt_name(a->id));
    default: return 0;   /* --help, --version: read by the caller */
    }
}

static int parse_cmd(cmd_t *c, int argc, char **argv)
{
    memset(c, 0, sizeof *c);
    c->o.sets = c->sets;
    c->fl.knobs = c->knobs;
    c->fl.cons = c->cons;
    cli_opt_args_t *a = malloc(sizeof *a);
    if (!a) return out_of_memory();
    char msg[256];
    int rc = 0;
    if (cli_opt_parse(CLI_OPTIMIZE, 1, argc, argv, a, msg, sizeof msg) != 0)
        rc = cli_opt_usage_error("optimize", "%s", msg);
    for (int i = 0; rc == 0 && i < a->nopt; i++) rc = take(c, &a->opt[i]);
    if (rc == 0) {
        c->help = a->help;
        c->version = a->version;
        c->o.scenario = a->npos ? a->pos[0] : NULL;
    }
    free(a);
    if (rc || c->help || c->version) return rc;
    if (!c->o.scenario) return cli_opt_usage_error("optimize", "no SCENARIO given");
    if (strcmp(c->o.scenario, "-") == 0)
        return cli_opt_usage_error("optimize", "needs a scenario file, not stdin");
    return 0;
}

/* ---- writing ------------------------------------------------------------------- */

static int write_csv(const char *path, const optimize_spec_t *sp,
                     const optimize_result_t *r, err_t *err)
{
    char *header = sweepfile_header(&sp->knobs, NULL, r->precision, err);
    if (!header) return -1;
    outfile_t o;   /* atomically, or through to a device (sim/io/outfile.h) */
    if (outfile_open(&o, path, err) != 0) {
        free(header);
        return -1;
    }
    int rc = fputs(header, o.f) == EOF ? -1 : 0;
    for (size_t k = 0; rc == 0 && k < r->nevals; k++)
        rc = sweepfile_row(o.f, &sp->knobs, r->evals[k].point, &r->evals[k].m, r->precision);
    free(header);
    if (rc == 0) return outfile_commit(&o, err);
    int e = errno;
    outfile_abort(&o);
    return err_set(err, ERR_RUNTIME, "%s: write failed: %s", path, strerror(e));
}

/* The scenario's output: section, --set applied: its file is the default
 * --out, as for sweep; a trace optimize never writes is refused rather than
 * ignored. 0, or -1 with err. */
static int read_output_section(cmd_t *c, err_t *err)
{
    scenario_t s;
    if (scenario_load(c->o.scenario, c->o.sets, c->o.nsets, &s, err) != 0) return -1;
    int rc = scenario_refuse_trace(&s, "optimize", "give --trace to `specsim run` for "
                                   "one point", err);
    if (rc == 0 && !c->out && s.output.file[0]) {
        snprintf(c->out_file, sizeof c->out_file, "%s", s.output.file);
        /* optimize_run refuses it too where the scenario reads it. */
        c->out = c->o.out = c->out_file;
    }
    scenario_fini(&s);
    return rc;
}

/* --out is checked before the search, not after it: a target outfile.h
 * refuses, a .json name, the scenario itself, or a directory the file
 * cannot be created in (optimize_run refuses a file the scenario reads). */
static int check_out(const cmd_t *c, err_t *err)
{
    outfile_kind_t kind;
    const outfile_role_t r[] = {{c->o.scenario, "the scenario", 0}, {c->out, "--out", 1}};
    if (!c->out) return 0;
    if (outfile_kind(c->out, &kind, err) != 0 || sweepfile_check_out(c->out, err) != 0 ||
        outfile_distinct(r, 2, err) != 0 ||
        (!c->force && sweepfile_check_replace(c->out, "--out", err) != 0))
        return -1;
    return outfile_probe(c->out, err);
}

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') fputc('\\', f);
        if ((unsigned char)*s < 0x20) fprintf(f, "\\u%04x", *s);
        else fputc(*s, f);
    }
    fputc('"', f);
}

static void json_num(FILE *f, double x)
{
    if (isfinite(x)) fprintf(f, "%.10g", x);
    else fputs("null", f);
}

/* A knob value: a JSON number when it is a plain number, else a string. */
static void json_knob(FILE *f, const char *v)
{
    double x;
    const char *unit;
    if (units_split(v, &x, &unit) == 0 && !*unit) json_num(f, x);
    else json_str(f, v);
}

static void json_knobs(FILE *f, const optimize_spec_t *sp, uint64_t point)
{
    const char *vals[sp->knobs.naxes];
    sweepspec_point(&sp->knobs, point, vals);
    for (int a = 0; a < sp->knobs.naxes; a++) {
        json_str(f, sp->knobs.axes[a].path);
        fputs(": ", f);
        json_knob(f, vals[a]);
        fputs(", ", f);
    }
}

static void json_best(FILE *f, const optimize_spec_t *sp, const optimize_eval_t *e,
                      int precision)
{
    fputs("{", f);
    json_knobs(f, sp, e->point);
    /* With precision: each point's own count (a point near a constraint's
     * bound runs more); otherwise every point runs the scenario's. */
    if (precision) fprintf(f, "\"replications\": %d, ", e->m.reps);
    int first = 1;
    for (int m = 0; m < METRIC_COUNT; m++) {
        if (metric_is_timing(m)) continue;
        fprintf(f, "%s\"%s\": ", first ? "" : ", ", metric_name(m));
        json_num(f, e->m.value[m]);
        fprintf(f, ", \"%s_ci95\": ", metric_name(m));
        json_num(f, e->m.ci95[m]);
        first = 0;
    }
    fputs("}", f);
}

static void json_frontier_point(FILE *f, const optimize_spec_t *sp, const optimize_eval_t *e,
                                int precision)
{
    fputs("{", f);
    json_knobs(f, sp, e->point);
    if (precision) fprintf(f, "\"replications\": %d, ", e->m.reps);
    int metric = sp->cons[0].metric;
    fprintf(f, "\"%s\": ", metric_name(metric));
    json_num(f, e->m.value[metric]);
    fprintf(f, ", \"%s_ci95\": ", metric_name(metric));
    json_num(f, e->m.ci95[metric]);
    if (sp->objective >= 0 && sp->objective != metric) {
        fprintf(f, ", \"%s\": ", metric_name(sp->objective));
        json_num(f, e->m.value[sp->objective]);
        fprintf(f, ", \"%s_ci95\": ", metric_name(sp->objective));
        json_num(f, e->m.ci95[sp->objective]);
    }
    fprintf(f, ", \"feasible\": %s", e->feasible ? "true" : "false");
    /* Only where it applies, so that results without such points keep
     * their bytes. */
    if (e->unjudged) fputs(", \"judged\": false", f);
    fputs("}", f);
}

static int print_json(FILE *f, const optimize_spec_t *sp, const optimize_result_t *r)
{
    fputs("{\"best\": ", f);
    if (r->best >= 0) json_best(f, sp, &r->evals[r->best], r->precision);
    else fputs("null", f);
    char why[512];
    if (optimize_why_none(sp, r, why, sizeof why)) {
        fputs(", \"why\": ", f);
        json_str(f, why);
    }
    if (r->nunjudged) fprintf(f, ", \"unjudged\": %zu", r->nunjudged);
    fprintf(f, ", \"evaluations\": %zu, \"points\": %llu, \"search\": \"%s\", \"frontier\": [",
            r->nevals, (unsigned long long)sp->knobs.npoints, optimize_search_name(sp->search));
    for (size_t k = 0; k < r->nfrontier; k++) {
        if (k) fputs(", ", f);
        json_frontier_point(f, sp, &r->evals[r->frontier[k]], r->precision);
    }
    fputs("]}\n", f);
    return ferror(f) ? -1 : 0;
}

/* ---- the text report --------------------------------------------------------------- */

static void print_knobs(FILE *f, const optimize_spec_t *sp, uint64_t point)
{
    const char *vals[sp->knobs.naxes];
    sweepspec_point(&sp->knobs, point, vals);
    for (int a = 0; a < sp->knobs.naxes; a++)
        fprintf(f, "%s%s=%s", a ? ", " : "", sp->knobs.axes[a].path, vals[a]);
}

static void print_best(FILE *f, const optimize_spec_t *sp, const optimize_eval_t *e,
                       int precision)
{
    fputs("best: ", f);
    print_knobs(f, sp, e->point);
    fputc('\n', f);
    if (precision) fprintf(f, "  replications %d\n", e->m.reps);
    fprintf(f, "  objective   %s %s = %.6g", sp->maximize ? "max" : "min",
            sp->objective_name, optimize_objective(sp, e));
    if (sp->objective >= 0) fprintf(f, " ± %.3g", e->m.ci95[sp->objective]);
    fputc('\n', f);
    for (int k = 0; k < sp->ncons; k++) {
        const optimize_constraint_t *c = &sp->cons[k];
        fprintf(f, "  constraint  %s: %.6g ± %.3g (met)\n", c->text,
                e->m.value[c->metric], e->m.ci95[c->metric]);
    }
    fputs("  metrics (value ± 95% CI):\n", f);
    for (int m = 0; m < METRIC_COUNT; m++) {
        if (metric_is_timing(m) || !isfinite(e->m.value[m])) continue;
        fprintf(f, "    %-26s %.6g ± %.3g\n", metric_name(m), e->m.value[m], e->m.ci95[m]);
    }
}

static void print_frontier(FILE *f, const optimize_spec_t *sp, const optimize_result_t *r)
{
    if (sp->ncons == 0) return;
    int metric = sp->cons[0].metric;
    fprintf(f, "frontier (%s against %s, non-dominated evaluated points):\n",
            sp->objective_name, metric_name(metric));
    for (size_t k = 0; k < r->nfrontier; k++) {
        const optimize_eval_t *e = &r->evals[r->frontier[k]];
        fprintf(f, "  %s = %.6g ± %.3g  %s = %.6g  %s  ", metric_name(metric),
                e->m.value[metric], e->m.ci95[metric], sp->objective_name,
                optimize_objective(sp, e),
                e->feasible ? "feasible  " : e->unjudged ? "unjudged  " : "infeasible");
        if (r->precision) fprintf(f, "%4d reps  ", e->m.reps);
        print_knobs(f, sp, e->point);
        fputc('\n', f);
    }
}

static int print_text(FILE *f, const optimize_spec_t *sp, const optimize_result_t *r)
{
    fprintf(f, "optimize: %s search, %zu of %llu points evaluated\n",
            optimize_search_name(sp->search), r->nevals,
            (unsigned long long)sp->knobs.npoints);
    char why[512];
    if (r->best >= 0) print_best(f, sp, &r->evals[r->best], r->precision);
    else if (optimize_why_none(sp, r, why, sizeof why)) fprintf(f, "best: none (%s)\n", why);
    if (r->best >= 0 && r->nunjudged)
        fprintf(f, "unjudged: %zu of %zu points (fewer than two replications have a value "
                "of a constraint's metric there; more replications or a longer duration "
                "may judge them)\n", r->nunjudged, r->nevals);
    print_frontier(f, sp, r);
    return ferror(f) ? -1 : 0;
}

static int run(cmd_t *c)
{
    optimize_spec_t sp;
    optimize_result_t r = {0};
    err_t err = {0};
    if (read_output_section(c, &err) != 0 || check_out(c, &err) != 0) {
        fprintf(stderr, "specsim optimize: %s\n", err.msg);
        return err.code ? err.code : ERR_INPUT;
    }
    int rc = optimize_spec_load_flags(c->o.scenario, NULL, &c->fl, &sp, &err);
    if (rc == 0) rc = optimize_run(&c->o, &sp, &r, &err);
    if (rc == 0 && c->out) rc = write_csv(c->out, &sp, &r, &err);
    if (rc != 0) {
        fprintf(stderr, "specsim optimize: %s\n", err.msg);
        rc = err.code ? err.code : ERR_RUNTIME;
    } else if ((c->json ? print_json(stdout, &sp, &r) : print_text(stdout, &sp, &r)) != 0 ||
               fflush(stdout) != 0) {
        fprintf(stderr, "specsim optimize: cannot write results: %s\n", strerror(errno));
        rc = ERR_RUNTIME;
    } else if (r.best < 0) {
        char why[512];
        optimize_why_none(&sp, &r, why, sizeof why);
        fprintf(stderr, "specsim optimize: no best point: %s\n", why);
        rc = ERR_RUNTIME;
    }
    optimize_result_fini(&r);
    optimize_spec_fini(&sp);
    return rc;
}

int cli_optimize(int argc, char **argv)
{
    cmd_t *c = malloc(sizeof *c);
    if (!c) return out_of_memory();
    int rc = parse_cmd(c, argc, argv);
    if (rc == 0 && c->help) rc = fputs(usage, stdout) == EOF ? ERR_RUNTIME : 0;
    else if (rc == 0 && c->version) rc = cli_opt_print_version();
    else if (rc == 0) rc = run(c);
    cmd_fini(c);
    free(c);
    return rc;
}
