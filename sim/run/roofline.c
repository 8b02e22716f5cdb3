/* roofline — verify iteration time vs batch tokens (see roofline.h). */
#include "run/roofline.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/caltable.h"
#include "model/cards.h"
#include "base/err.h"
#include "config/scenario.h"
#include "model/service.h"

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

int roofline_measured(FILE *f, const char *path, const char *model_ref, err_t *err)
{
    caltable_t t;
    service_t *sv = NULL;
    if (caltable_load(path, &t, err) != 0) return -1;
    char ref[600], card_path[1024];
    llm_card_t card;
    hw_card_t hw;
    if (model_ref) snprintf(ref, sizeof ref, "%s", model_ref);
    else snprintf(ref, sizeof ref, "models/llm/%s.yaml", t.model);
    if (cards_resolve_path(ref, card_path, sizeof card_path) != 0) {
        err_set(err, ERR_INPUT, "%s:%d:%d: model: no model card '%s' for '%s' (name "
                "one with --model CARD)", path, t.model_line, t.model_column, ref, t.model);
    } else if (cards_load_llm_file(card_path, &card, err) == 0) {
        table_hw(&t, &hw);
        sv = service_create(&hw, &card, precision_parse(t.quant), path, 0.0, err);
    }
    int rc = -1;
    if (!sv) goto out;
    fprintf(f, "m,context,time_s,composed_s,composed_ratio,step_factor,in_table\n");
    for (int i = 0; i < t.nrows; i++) {
        const caltable_row_t *r = &t.rows[i];
        if (r->op != CAL_TOKEN) continue;
        service_job_t jobs[SERVICE_ROW_JOBS_MAX];
        int nj = service_row_jobs(r, jobs, SERVICE_ROW_JOBS_MAX);
        if (nj == 0) {
            fprintf(f, "%d,%d,%.10g,,,,0\n", r->m, r->context, r->time_s);
            continue;
        }
        double c = service_composed_time(sv, jobs, nj);
        fprintf(f, "%d,%d,%.10g,%.10g,%.6f,%.6f,%d\n", r->m, r->context, r->time_s, c,
               c / r->time_s, service_step_factor(sv, r->m), service_in_table(sv, jobs, nj));
    }
    rc = fflush(f) == 0 && !ferror(f) ? 0 : err_set(err, ERR_RUNTIME, "write failed: %s", strerror(errno));
out:
    service_free(sv);
    caltable_fini(&t);
    return rc;
}

int roofline_curve(FILE *f, const scenario_t *s, int bmax, int context, int points,
                   err_t *err)
{
    /* One curve is one card: a cloud of several replica groups has none. */
    int n = scenario_replica_groups(s);
    if (n > 1)
        return err_set(err, ERR_INPUT, "cloud.replica_groups: %d replica groups "
                       "(a heterogeneous cloud); a roofline curve is one card's: "
                       "give a scenario with one group or none", n);
    cloud_cfg_t view;
    scenario_replica_group_view(s, 0, &view);
    const cloud_cfg_t *c = &view;
    /* A tensor-parallel replica's curve: one GPU's share of the work plus
     * the all-reduces, as the simulation times its iterations. */
    service_t *sv = service_create_serving_kv(
        &c->gpu, c->engine - 1, c->precision,
        service_kv_precision_bytes_at(c->kv_precision), &c->target,
        c->calibration, c->overhead, c->tensor_parallel > 1 ? c->tensor_parallel : 1, NULL,
        err);
    if (!sv) return -1;
    int q = s->protocol.gamma + 1;
    service_job_t *jobs = malloc((size_t)bmax * sizeof *jobs);
    if (!jobs) {
        service_free(sv);
        return err_set(err, ERR_RUNTIME, "out of memory");
    }
    for (int j = 0; j < bmax; j++) {
        jobs[j].tokens = q;
        jobs[j].context = context;
        jobs[j].nohead = 0;   /* a verify block: every row's logits */
    }
    fprintf(f, "batch,m,context,time_s,memory_s,compute_s,overhead_s,datasheet_s\n");
    int last = 0;
    for (int i = 0; i < points; i++) {
        double x = points == 1 ? 0.0 : (double)i / (points - 1);
        int b = (int)lround(pow((double)bmax, x));
        if (b <= last) continue;   /* small B repeat after rounding */
        last = b;
        service_terms_t t;
        service_terms(sv, jobs, b, &t);
        fprintf(f, "%d,%d,%d,%.10g,%.10g,%.10g,%.10g,%.10g\n", b, b * q, context,
                service_iter_time(sv, jobs, b),
                t.overhead_s + t.linear_mem_s + t.attn_mem_s,
                t.overhead_s + t.linear_compute_s + t.attn_compute_s, t.overhead_s,
                service_iter_time_datasheet(sv, jobs, b));
    }
    free(jobs);
    service_free(sv);
    return fflush(f) == 0 && !ferror(f) ? 0 : err_set(err, ERR_RUNTIME, "write failed: %s", strerror(errno));
}
