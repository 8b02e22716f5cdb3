/* cli_roofline — the `specsim roofline` subcommand: usage, options
 * (cli_opt.h) and errors; the CSV comes from roofline.h.
 */
#include "cli/cli_roofline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli_opt.h"
#include "specsim.h"


static const char usage[] =
    "usage: specsim roofline SCENARIO [--set PATH=VALUE]... [--b-max N]\n"
    "                        [--context C] [--points K] [--quiet]\n"
    "       specsim roofline --measured TABLE.yaml [--model CARD] [--quiet]\n"
    "\n"
    "Prints CSV on stdout. With a scenario: for K batch sizes B from 1 to N\n"
    "(log-spaced, default 1..512, 40 points), one cloud verify iteration of B\n"
    "blocks of gamma+1 tokens, each over C cached tokens (default 512), on the\n"
    "scenario's cloud (gpu, target, precision, calibration, overhead):\n"
    "  batch,m,context,time_s,memory_s,compute_s,overhead_s,datasheet_s\n"
    "m = B*(gamma+1); time_s is the service model (table when the scenario\n"
    "names one), datasheet_s the pure datasheet roofline; memory_s and\n"
    "compute_s are overhead plus the memory-bound and compute-bound times of\n"
    "the linear layers and attention (each a lower bound of datasheet_s).\n"
    "With --measured: the table's whole-step rows (op: token) beside the\n"
    "service model's time for the same step composed from the table's\n"
    "operator rows alone (linear, lm_head, attention; no overhead):\n"
    "  m,context,time_s,composed_s,composed_ratio,step_factor,in_table\n"
    "composed_ratio = composed_s / time_s shows what the per-operator model\n"
    "leaves out (norms, activations, residuals, launch gaps); step_factor is\n"
    "what the simulator multiplies composed steps of m tokens by (measured /\n"
    "composed, averaged over the rows of each m, see sim/model/service.c); in_table is 1\n"
    "when every lookup stayed inside the measured range (else the fitted\n"
    "roofline extrapolated). The model card is models/llm/<table model>.yaml\n"
    "unless --model names one; the rates outside the table come from the\n"
    "table's own measured ceilings (or, where it records none, its rows'\n"
    "fits alone), not a datasheet.\n"
    "--quiet is accepted as by every command; roofline shows no progress, so it\n"
    "has nothing to silence.\n";

typedef struct roofline_cmd {
    cli_opt_sets_t sets;     /* --set */
    int bmax, context, points;
    const char *scenario, *table, *model;
    const char *curve_opt;   /* the first option of a scenario's curve given
                                (--set, --b-max, ...), or NULL */
    int help, version;
} roofline_cmd_t;

/* Digits only, as every command reads its counts (cli_opt_u64): strtol
 * would take ' 8' and '+8', which --reps and -j refuse. lo >= 0. */
static int parse_int(const char *v, int lo, int hi, int *out)
{
    uint64_t x;
    if (cli_opt_u64(v, &x) != 0 || x < (uint64_t)lo || x > (uint64_t)hi) return -1;
    *out = (int)x;
    return 0;
}

/* One option; 0 or an exit status. */
static int take(void *ctx, const cli_opt_arg_t *a)
{
    roofline_cmd_t *c = ctx;
    const char *v = a->value;
    if (!c->curve_opt && (a->id == OPT_SET || a->id == OPT_B_MAX || a->id == OPT_CONTEXT ||
                          a->id == OPT_POINTS))
        c->curve_opt = cli_opt_name(a->id);
    switch (a->id) {
    case OPT_SET: return cli_opt_sets_add(&c->sets, "roofline", a);
    case OPT_B_MAX:
        if (parse_int(v, 1, 1 << 20, &c->bmax) == 0) return 0;
        return cli_opt_usage_error("roofline", "--b-max needs an integer from 1 to %d, "
                                   "got '%s'", 1 << 20, v);
    case OPT_CONTEXT:
        if (parse_int(v, 0, 1 << 24, &c->context) == 0) return 0;
        return cli_opt_usage_error("roofline", "--context needs an integer from 0 to %d, "
                                   "got '%s'", 1 << 24, v);
    case OPT_POINTS:
        if (parse_int(v, 1, 100000, &c->points) == 0) return 0;
        return cli_opt_usage_error("roofline", "--points needs an integer from 1 to "
                                   "100000, got '%s'", v);
    case OPT_MEASURED: c->table = v; return 0;
    case OPT_MODEL: c->model = v; return 0;
    default: return 0;   /* --help, --version: read by the caller */
    }
}

static int parse_cmd(roofline_cmd_t *c, int argc, char **argv)
{
    cli_opt_common_t com;
    int rc = cli_opt_read(CLI_ROOFLINE, "roofline", argc, argv, take, c, &com);
    c->help = com.help;
    c->version = com.version;
    c->scenario = com.scenario;
    if (rc || c->help || c->version) return rc;
    if (c->model && !c->table)
        return cli_opt_usage_error("roofline", "--model goes with --measured");
    if (c->table && c->scenario)
        return cli_opt_usage_error("roofline", "--measured takes no scenario (got '%s')",
                                   c->scenario);
    /* The table's own rows set its steps: a scenario's options would be
     * dropped without a word. */
    if (c->table && c->curve_opt)
        return cli_opt_usage_error("roofline", "%s goes with a scenario's curve, not "
                                   "with --measured (whose steps are the table's rows)",
                                   c->curve_opt);
    if (!c->table && !c->scenario) return cli_opt_usage_error("roofline", "no SCENARIO given");
    return 0;
}

/* The CSV of a scenario's curve or of a measured table. 0, or -1 with err. */
static int write_csv(const roofline_cmd_t *c, err_t *err)
{
    if (c->table) return roofline_measured(stdout, c->table, c->model, err);
    scenario_t s;
    if (scenario_load(c->scenario, c->sets.ov, c->sets.n, &s, err) != 0) return -1;
    int rc = roofline_curve(stdout, &s, c->bmax, c->context, c->points, err);
    scenario_fini(&s);
    return rc;
}

int cli_roofline(int argc, char **argv)
{
    roofline_cmd_t c = {.bmax = 512, .context = 512, .points = 40};
    int rc = parse_cmd(&c, argc, argv);
    if (rc == 0 && c.help) {
        rc = fputs(usage, stdout) == EOF ? ERR_RUNTIME : 0;
    } else if (rc == 0 && c.version) {
        rc = cli_opt_print_version();
    } else if (rc == 0) {
        err_t err = {0};
        if (write_csv(&c, &err) != 0) {
            /* The one file roofline writes is standard output: say so. */
            fprintf(stderr, "specsim roofline: %s%s\n",
                    ferror(stdout) ? "standard output: " : "", err.msg);
            rc = err.code ? err.code : ERR_RUNTIME;
        }
    }
    cli_opt_sets_fini(&c.sets);
    return rc;
}
