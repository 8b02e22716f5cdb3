#include "tally.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Times from 100 ns to 3 hours; values outside are still counted exactly
 * at the extremes by hist_t. */
#define T_MIN 1e-7
#define T_MAX 1e4
#define REL HIST_REL_ERR

tally_t *tally_create(double warmup, double end)
{
    tally_t *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->itl = hist_create(T_MIN, T_MAX, REL);
    t->gap = hist_create(T_MIN, T_MAX, REL);
    t->ttft = hist_create(T_MIN, T_MAX, REL);
    t->qdelay = hist_create(T_MIN, T_MAX, REL);
    t->batch = hist_create(0.5, 1e7, REL);
    if (!t->itl || !t->gap || !t->ttft || !t->qdelay || !t->batch) {
        tally_free(t);
        return NULL;
    }
    t->warmup = warmup;
    t->end = end;
    return t;
}

void tally_free(tally_t *t)
{
    if (!t) return;
    hist_free(t->itl);
    hist_free(t->gap);
    hist_free(t->ttft);
    hist_free(t->qdelay);
    hist_free(t->batch);
    free(t);
}

void tally_reset(tally_t *t)
{
    hist_t *h[5] = {t->itl, t->gap, t->ttft, t->batch, t->qdelay};
    double warmup = t->warmup, end = t->end;
    struct mser_series *series = t->series;
    for (int i = 0; i < 5; i++) hist_reset(h[i]);
    memset(t, 0, sizeof *t);
    t->series = series;
    t->itl = h[0];
    t->gap = h[1];
    t->ttft = h[2];
    t->batch = h[3];
    t->qdelay = h[4];
    t->warmup = warmup;
    t->end = end;
}

static double ratio(double a, double b) { return b > 0 ? a / b : NAN; }

static double quant(const hist_t *h, double q)
{
    return hist_count(h) > 0 ? hist_quantile(h, q) : NAN;
}

/* Batch sizes are whole jobs: while a histogram cell is narrower than one
 * job (value · 2·rel_err < 1), the nearest integer is the exact quantile, not
 * the cell's centre (3, not 3.0128); larger values keep the stated relative
 * error. */
static double quant_int(const hist_t *h, double q)
{
    double x = quant(h, q);
    return x * 2 * HIST_REL_ERR < 1 ? round(x) : x;
}

static double mean(const hist_t *h)
{
    return hist_count(h) > 0 ? hist_mean(h) : NAN;
}

void tally_finish(const tally_t *t, int has_drafts, int has_verify,
                  int replicas, double events, double wall,
                  metrics_rep_t *out)
{
    double span = t->end - t->warmup;
    double *v = out->v;
    v[METRIC_ITL_MEAN] = mean(t->itl);
    v[METRIC_ITL_P50] = quant(t->itl, 0.50);
    v[METRIC_ITL_P95] = quant(t->itl, 0.95);
    v[METRIC_ITL_P99] = quant(t->itl, 0.99);
    v[METRIC_COMMIT_GAP_P99] = quant(t->gap, 0.99);
    v[METRIC_TTFT_MEAN] = mean(t->ttft);
    v[METRIC_TTFT_P99] = quant(t->ttft, 0.99);
    v[METRIC_E2E_MEAN] = ratio(t->e2e_sum, t->e2e_n);
    v[METRIC_TOKENS_PER_S_TENANT] = ratio(t->decode_tokens, t->decode_time);
    v[METRIC_THROUGHPUT] = ratio(t->committed, span);
    v[METRIC_ACCEPTANCE_RATE] = has_verify ? ratio(t->accepted, t->verified_drafts) : NAN;
    v[METRIC_ACCEPTED_LEN_MEAN] = has_verify ? ratio(t->verdict_tokens, t->verdicts) : NAN;
    v[METRIC_DRAFT_WASTE_FRAC] = has_drafts ? ratio(t->discarded, t->drafted) : NAN;
    /* No cloud (edge-only): no GPU time is used at all. */
    v[METRIC_GPU_UTIL] = replicas > 0 ? ratio(t->busy, replicas * span) : 0;
    v[METRIC_GPU_WASTE_FRAC] = has_verify ? ratio(t->stale_tokens, t->verified_tokens) : NAN;
    v[METRIC_BATCH_MEAN] = mean(t->batch);
    v[METRIC_BATCH_P99] = quant_int(t->batch, 0.99);
    v[METRIC_QUEUE_DELAY_MEAN] = mean(t->qdelay);
    v[METRIC_QUEUE_DELAY_P99] = quant(t->qdelay, 0.99);
    v[METRIC_EDGE_STALL_FRAC] = has_drafts ? ratio(t->stall, t->decode_time) : NAN;
    v[METRIC_NET_UP_BYTES_PER_TOK] = ratio(t->up_bytes, t->committed);
    v[METRIC_NET_DOWN_BYTES_PER_TOK] = ratio(t->down_bytes, t->committed);
    v[METRIC_GPU_S_PER_KTOK] = replicas > 0 ? ratio(t->busy * 1000, t->committed) : 0;
    v[METRIC_REQUESTS_DONE] = t->requests_done;
    v[METRIC_EVENTS] = events;
    v[METRIC_WALL_S] = wall;
    v[METRIC_EVENTS_PER_S] = ratio(events, wall);
}
