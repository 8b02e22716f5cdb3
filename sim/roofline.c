/* roofline — verify iteration time vs batch tokens (see roofline.h). */
#include "roofline.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "caltable.h"
#include "cards.h"
#include "err.h"
#include "scenario.h"
#include "service.h"

#define MAX_SETS 64

static const char usage[] =
    "usage: specsim roofline SCENARIO [--set PATH=VALUE]... [--b-max N]\n"
    "                        [--context C] [--points K]\n"
    "       specsim roofline --measured TABLE.yaml [--model CARD]\n"
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
    "composed, averaged over the rows of each m, see sim/service.c); in_table is 1\n"
    "when every lookup stayed inside the measured range (else the fitted\n"
    "roofline extrapolated). The model card is models/llm/<table model>.yaml\n"
    "unless --model names one; the rates outside the table come from the\n"
    "table's own measured ceilings (or, where it records none, its rows'\n"
    "fits alone), not a datasheet.\n";

static int bad(const char *fmt, const char *arg)
{
    fputs("specsim roofline: ", stderr);
    fprintf(stderr, fmt, arg);
    fputs("\n(specsim roofline --help for usage)\n", stderr);
    return ERR_INPUT;
}

/* A hardware card made of the table's own measured ceilings, so that the
 * composed time depends on nothing but the table (the rates only matter for
 * lookups outside its range). */
#define UNBOUNDED 1e30

static void table_hw(const caltable_t *t, hw_card_t *hw)
{
    memset(hw, 0, sizeof *hw);
    snprintf(hw->name, sizeof hw->name, "ceilings of %s", t->device_kind);
    snprintf(hw->kind, sizeof hw->kind, "%s", strcmp(t->device_kind, "cpu") ? "gpu" : "cpu");
    double bw = t->read_gbs > 0 ? t->read_gbs : t->copy_gbs;
    double peak = t->fp16_tflops * 1e12;
    for (int i = 0; i < t->nrows; i++) {
        double gbs = t->rows[i].gbs, gf = t->rows[i].gflops * 1e9;
        if (gbs > bw) bw = gbs;
        if (t->fp16_tflops <= 0 && gf > peak) peak = gf;
    }
    /* A table that records no ceiling at all (they are optional) leaves the
     * rates outside it to the fits of its own rows: no bound from here. */
    hw->mem_bw = bw > 0 ? bw * 1e9 : UNBOUNDED;
    hw->mem_bytes = 1e15;
    for (int p = 0; p < PREC_COUNT; p++) hw->flops[p] = peak > 0 ? peak : UNBOUNDED;
    hw->bw_eff = hw->flops_eff = 1.0;
}

static int measured(const char *path, const char *model_ref)
{
    caltable_t t;
    err_t err = {0};
    service_t *sv = NULL;
    if (caltable_load(path, &t, &err) != 0) {
        fprintf(stderr, "specsim roofline: %s\n", err.msg);
        return err.code ? err.code : ERR_RUNTIME;
    }
    char ref[600], card_path[1024];
    llm_card_t card;
    hw_card_t hw;
    if (model_ref) snprintf(ref, sizeof ref, "%s", model_ref);
    else snprintf(ref, sizeof ref, "models/llm/%s.yaml", t.model);
    if (cards_resolve_path(ref, card_path, sizeof card_path) != 0) {
        err_set(&err, ERR_INPUT, "%s:%d:%d: model: no model card '%s' for '%s' (name "
                "one with --model CARD)", path, t.model_line, t.model_column, ref, t.model);
    } else if (cards_load_llm_file(card_path, &card, &err) == 0) {
        table_hw(&t, &hw);
        sv = service_create(&hw, &card, precision_parse(t.quant), path, 0.0, &err);
    }
    int rc = 0;
    if (!sv) {
        fprintf(stderr, "specsim roofline: %s\n", err.msg);
        rc = err.code ? err.code : ERR_RUNTIME;
        goto out;
    }
    printf("m,context,time_s,composed_s,composed_ratio,step_factor,in_table\n");
    for (int i = 0; i < t.nrows; i++) {
        const caltable_row_t *r = &t.rows[i];
        if (r->op != CAL_TOKEN) continue;
        service_job_t jobs[SERVICE_ROW_JOBS_MAX];
        int nj = service_row_jobs(r, jobs, SERVICE_ROW_JOBS_MAX);
        if (nj == 0) {
            printf("%d,%d,%.10g,,,,0\n", r->m, r->context, r->time_s);
            continue;
        }
        double c = service_composed_time(sv, jobs, nj);
        printf("%d,%d,%.10g,%.10g,%.6f,%.6f,%d\n", r->m, r->context, r->time_s, c,
               c / r->time_s, service_step_factor(sv, r->m), service_in_table(sv, jobs, nj));
    }
    rc = fflush(stdout) == 0 ? 0 : ERR_RUNTIME;
out:
    service_free(sv);
    caltable_fini(&t);
    return rc;
}

static int curve(const scenario_t *s, int bmax, int context, int points)
{
    err_t err = {0};
    const cloud_cfg_t *c = &s->cloud;
    service_t *sv = service_create(&c->gpu, &c->target, c->precision,
                                   c->calibration, c->overhead, &err);
    if (!sv) {
        fprintf(stderr, "specsim roofline: %s\n", err.msg);
        return err.code ? err.code : ERR_RUNTIME;
    }
    int q = s->protocol.gamma + 1;
    service_job_t *jobs = malloc((size_t)bmax * sizeof *jobs);
    if (!jobs) {
        service_free(sv);
        fprintf(stderr, "specsim roofline: out of memory\n");
        return ERR_RUNTIME;
    }
    for (int j = 0; j < bmax; j++) {
        jobs[j].tokens = q;
        jobs[j].context = context;
    }
    printf("batch,m,context,time_s,memory_s,compute_s,overhead_s,datasheet_s\n");
    int last = 0;
    for (int i = 0; i < points; i++) {
        double f = points == 1 ? 0.0 : (double)i / (points - 1);
        int b = (int)lround(pow((double)bmax, f));
        if (b <= last) continue;   /* small B repeat after rounding */
        last = b;
        service_terms_t t;
        service_terms(sv, jobs, b, &t);
        printf("%d,%d,%d,%.10g,%.10g,%.10g,%.10g,%.10g\n", b, b * q, context,
               service_iter_time(sv, jobs, b),
               t.overhead_s + t.linear_mem_s + t.attn_mem_s,
               t.overhead_s + t.linear_compute_s + t.attn_compute_s, t.overhead_s,
               service_iter_time_datasheet(sv, jobs, b));
    }
    free(jobs);
    service_free(sv);
    return fflush(stdout) == 0 ? 0 : ERR_RUNTIME;
}

static int parse_int(const char *v, int lo, int hi, int *out)
{
    char *end;
    long x = v ? strtol(v, &end, 10) : 0;
    if (!v || end == v || *end || x < lo || x > hi) return -1;
    *out = (int)x;
    return 0;
}

int roofline_cli(int argc, char **argv)
{
    scenario_override_t ov[MAX_SETS];
    char *owned[MAX_SETS];
    int nov = 0, rc = 0;
    int bmax = 512, context = 512, points = 40;
    const char *scen = NULL, *table = NULL, *model = NULL;
    for (int i = 1; rc == 0 && i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            fputs(usage, stdout);
            goto out;
        } else if (strcmp(a, "--set") == 0) {
            const char *eq = v ? strchr(v, '=') : NULL;
            if (!eq || eq == v) rc = bad("--set needs PATH=VALUE, got '%s'", v ? v : "");
            else if (nov == MAX_SETS) rc = bad("%s", "too many --set options");
            else if (!(owned[nov] = strdup(v))) rc = ERR_RUNTIME;
            else {
                owned[nov][eq - v] = '\0';
                ov[nov] = (scenario_override_t){.path = owned[nov],
                                                .value = owned[nov] + (eq - v) + 1};
                nov++;
            }
            i++;
        } else if (strcmp(a, "--b-max") == 0) {
            if (parse_int(v, 1, 1 << 20, &bmax)) rc = bad("--b-max needs an integer >= 1, got '%s'", v ? v : "");
            i++;
        } else if (strcmp(a, "--context") == 0) {
            if (parse_int(v, 0, 1 << 24, &context)) rc = bad("--context needs an integer >= 0, got '%s'", v ? v : "");
            i++;
        } else if (strcmp(a, "--points") == 0) {
            if (parse_int(v, 1, 100000, &points)) rc = bad("--points needs an integer >= 1, got '%s'", v ? v : "");
            i++;
        } else if (strcmp(a, "--measured") == 0) {
            if (!v) rc = bad("%s", "--measured needs a table");
            table = v;
            i++;
        } else if (strcmp(a, "--model") == 0) {
            if (!v) rc = bad("%s", "--model needs a card");
            model = v;
            i++;
        } else if (a[0] == '-' && a[1]) {
            rc = bad("unknown option '%s'", a);
        } else if (scen) {
            rc = bad("one scenario only (extra argument '%s')", a);
        } else {
            scen = a;
        }
    }
    if (rc) goto out;
    if (model && !table) { rc = bad("%s", "--model goes with --measured"); goto out; }
    if (table) {
        if (scen) rc = bad("--measured takes no scenario (got '%s')", scen);
        else rc = measured(table, model);
        goto out;
    }
    if (!scen) { rc = bad("%s", "no SCENARIO given"); goto out; }
    scenario_t s;
    err_t err = {0};
    if (scenario_load(scen, ov, nov, &s, &err) != 0) {
        fprintf(stderr, "specsim roofline: %s\n", err.msg);
        rc = err.code ? err.code : ERR_RUNTIME;
        goto out;
    }
    rc = curve(&s, bmax, context, points);
    scenario_fini(&s);
out:
    for (int k = 0; k < nov; k++) free(owned[k]);
    return rc;
}
