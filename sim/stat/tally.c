#include "stat/tally.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Times from 100 ns to 3 hours; values outside are still counted exactly
 * at the extremes by hist_t. */
#define T_MIN 1e-7
#define T_MAX 1e4
#define REL HIST_REL_ERR
/* Per-tenant ITL: 1 us to 1000 s. */
#define TT_MIN 1e-6
#define TT_MAX 1e3

enum { PART_HISTS = 6 };

static hist_t **part_hist(tally_part_t *p, int k)
{
    hist_t **h[PART_HISTS] = {&p->itl, &p->gap, &p->ttft, &p->qdelay, &p->admit,
                              &p->itl_out};
    return h[k];
}

static int part_init(tally_part_t *p)
{
    memset(p, 0, sizeof *p);
    for (int k = 0; k < PART_HISTS; k++) {
        *part_hist(p, k) = hist_create(T_MIN, T_MAX, REL);
        if (!*part_hist(p, k)) return -1;
    }
    return 0;
}

static void part_fini(tally_part_t *p)
{
    for (int k = 0; k < PART_HISTS; k++) hist_free(*part_hist(p, k));
}

/* Zeroes the sums, keeps (and empties) the histograms. */
static void part_reset(tally_part_t *p)
{
    hist_t *h[PART_HISTS];
    for (int k = 0; k < PART_HISTS; k++) {
        h[k] = *part_hist(p, k);
        hist_reset(h[k]);
    }
    memset(p, 0, sizeof *p);
    for (int k = 0; k < PART_HISTS; k++) *part_hist(p, k) = h[k];
}

static int tenants_init(tally_t *t, const int *size, int hists)
{
    t->group_of = malloc((size_t)t->ntenants * sizeof *t->group_of);
    t->ten = calloc((size_t)t->ntenants, sizeof *t->ten);
    t->scratch = malloc((size_t)t->ntenants * sizeof *t->scratch);
    t->gsize = malloc((size_t)t->ngroups * sizeof *t->gsize);
    if (!t->group_of || !t->ten || !t->scratch || !t->gsize) return -1;
    memcpy(t->gsize, size, (size_t)t->ngroups * sizeof *t->gsize);
    for (int g = 0, i = 0; g < t->ngroups; g++)
        for (int k = 0; k < size[g]; k++) t->group_of[i++] = g;
    for (int i = 0; hists && i < t->ntenants; i++) {
        t->ten[i].itl = hist_create(TT_MIN, TT_MAX, TALLY_TENANT_REL_ERR);
        if (!t->ten[i].itl) return -1;
    }
    return 0;
}

tally_t *tally_create(double warmup, double end, int ngroups, const int *size,
                      int tenant_hists)
{
    if (ngroups < 1 || !size) return NULL;
    long n = 0;
    for (int g = 0; g < ngroups; g++) {
        if (size[g] < 0) return NULL;
        n += size[g];
    }
    if (n < 1 || n > 0x7fffffffL) return NULL;
    tally_t *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->ngroups = ngroups;
    t->ntenants = (int)n;
    t->group = calloc((size_t)ngroups, sizeof *t->group);
    t->gcfg = calloc((size_t)ngroups, sizeof *t->gcfg);
    int bad = !t->group || !t->gcfg || part_init(&t->all) != 0;
    for (int g = 0; !bad && g < ngroups; g++) {
        bad = part_init(&t->group[g]) != 0;
        t->gcfg[g].has_drafts = t->gcfg[g].has_verify = 1;
    }
    t->ccfg = calloc(1, sizeof *t->ccfg);
    t->rbusy = calloc(1, sizeof *t->rbusy);
    if (t->ccfg) t->ccfg->gpus_per_replica = 1;
    t->nccfg = 1;
    t->batch = hist_create(0.5, 1e7, REL);
    if (bad || !t->ccfg || !t->rbusy || !t->batch || tenants_init(t, size, tenant_hists) != 0) {
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
    part_fini(&t->all);
    for (int g = 0; t->group && g < t->ngroups; g++) part_fini(&t->group[g]);
    for (int i = 0; t->ten && i < t->ntenants; i++) hist_free(t->ten[i].itl);
    hist_free(t->batch);
    free(t->group);
    free(t->gcfg);
    free(t->ccfg);
    free(t->rbusy);
    free(t->group_of);
    free(t->gsize);
    free(t->ten);
    free(t->scratch);
    free(t);
}

static int part_failed(tally_part_t *p)
{
    int f = 0;
    for (int k = 0; k < PART_HISTS; k++) f |= hist_failed(*part_hist(p, k));
    return f;
}

int tally_failed(tally_t *t)
{
    int f = part_failed(&t->all) || hist_failed(t->batch);
    for (int g = 0; !f && g < t->ngroups; g++) f = part_failed(&t->group[g]);
    for (int i = 0; !f && i < t->ntenants; i++) f = hist_failed(t->ten[i].itl);
    return f;
}

void tally_reset(tally_t *t)
{
    part_reset(&t->all);
    for (int g = 0; g < t->ngroups; g++) part_reset(&t->group[g]);
    for (int i = 0; i < t->ntenants; i++) {
        hist_t *h = t->ten[i].itl;
        hist_reset(h);
        memset(&t->ten[i], 0, sizeof t->ten[i]);
        t->ten[i].itl = h;
    }
    hist_reset(t->batch);
    t->busy = t->kv_area = t->roof_s = 0;
    for (int k = 0; k < t->nccfg; k++) t->rbusy[k] = 0;
    t->roof_known = t->kv_known = t->kv_replicas = 0;
    memset(&t->raw, 0, sizeof t->raw);
}

void tally_group_setup(tally_t *t, int g, const tally_group_cfg_t *cfg)
{
    t->gcfg[g] = *cfg;
}

int tally_cloud_setup(tally_t *t, const tally_cloud_cfg_t *cfg, int n)
{
    if (n < 1) return -1;
    tally_cloud_cfg_t *c = malloc((size_t)n * sizeof *c);
    double *b = calloc((size_t)n, sizeof *b);
    if (!c || !b) {
        free(c);
        free(b);
        return -1;
    }
    memcpy(c, cfg, (size_t)n * sizeof *c);
    free(t->ccfg);
    free(t->rbusy);
    t->ccfg = c;
    t->rbusy = b;
    t->nccfg = n;
    return 0;
}

/* ---- events --------------------------------------------------------------
 * Each updates the fleet's part, then the group's, with the same
 * operations, so the fleet's sums are those of one fleet-wide tally. */


/* Group g's part: the fleet's when it is the only group. */
static tally_part_t *group_part(tally_t *t, int g)
{
    return t->ngroups < 2 ? &t->all : &t->group[g];
}



void tally_stall(tally_t *t, int i, double from, double to)
{
    double d = tally_clip(t, from, to);
    tally_part_t *p[2];
    for (int k = tally_parts(t, i, p); k-- > 0;) p[k]->stall += d;
}

void tally_fallback(tally_t *t, int i, double from, double to)
{
    double d = tally_clip(t, from, to);
    tally_part_t *p[2];
    for (int k = tally_parts(t, i, p); k-- > 0;) p[k]->fb_time += d;
}

void tally_local(tally_t *t, int i, double now, int n)
{
    if (now < t->warmup) return;
    tally_part_t *p[2];
    for (int k = tally_parts(t, i, p); k-- > 0;) p[k]->local_tokens += n;
}

void tally_link_observed(tally_t *t, int i, int observed, int fallback)
{
    tally_part_t *p[2];
    for (int k = tally_parts(t, i, p); k-- > 0;) {
        p[k]->obs_n += observed;
        p[k]->fb_n += fallback;
    }
}

void tally_link_stall(tally_t *t, int i, double down)
{
    tally_part_t *p[2];
    for (int k = tally_parts(t, i, p); k-- > 0;) p[k]->link_stall += down;
}

void tally_outage_commit(tally_t *t, int i, double now, double gap, int n)
{
    if (now < t->warmup) return;
    tally_part_t *p[2];
    for (int k = tally_parts(t, i, p); k-- > 0;) hist_add(p[k]->itl_out, gap / n, n);
}

void tally_decode_time(tally_t *t, int i, double from, double to)
{
    double d = tally_clip(t, from, to);
    tally_part_t *p[2];
    for (int k = tally_parts(t, i, p); k-- > 0;) p[k]->decode_time += d;
    t->ten[i].decode_time += d;
}

/* Busy time of tenant i's device and its energy: into edge_busy / edge_j,
 * or (open) into edge_open / edge_open_j. */
static void edge_busy_add(tally_t *t, int i, double from, double to, int open)
{
    double d = tally_clip(t, from, to);
    double j = d * t->gcfg[t->group_of[i]].edge_power_w;
    tally_part_t *p[2];
    for (int k = tally_parts(t, i, p); k-- > 0;) {
        *(open ? &p[k]->edge_open : &p[k]->edge_busy) += d;
        *(open ? &p[k]->edge_open_j : &p[k]->edge_j) += j;
    }
}

void tally_edge_busy(tally_t *t, int i, double from, double to)
{
    edge_busy_add(t, i, from, to, 0);
}

void tally_edge_busy_open(tally_t *t, int i, double from, double to)
{
    edge_busy_add(t, i, from, to, 1);
}

void tally_thermal(tally_t *t, int i, double throttled, double speed_s)
{
    tally_part_t *p[2];
    for (int k = tally_parts(t, i, p); k-- > 0;) {
        p[k]->th_n++;
        p[k]->th_throttled += throttled;
        p[k]->th_speed += speed_s;
    }
}

void tally_discarded(tally_t *t, int i, double now, double gone)
{
    if (now < t->warmup) return;
    tally_part_t *p[2];
    for (int k = tally_parts(t, i, p); k-- > 0;) p[k]->discarded += gone;
}



void tally_first_token(tally_t *t, int i, double now, double ttft)
{
    if (now < t->warmup) return;
    tally_part_t *p[2];
    for (int k = tally_parts(t, i, p); k-- > 0;) {
        p[k]->committed++;
        hist_add(p[k]->ttft, ttft, 1);
    }
    t->ten[i].tokens++;
    t->ten[i].ttft_sum += ttft;
    t->ten[i].ttft_n++;
}

static void part_slo(tally_part_t *p, int ttft_ok, int tpot_ok, int output)
{
    p->slo_n++;
    p->slo_ttft_ok += ttft_ok;
    p->slo_tpot_ok += tpot_ok;
    if (ttft_ok && tpot_ok) {
        p->slo_ok++;
        p->slo_ok_tokens += output;
    }
}

/* DistServe's TPOT: the decode phase's time per token after the first. */
static void judge_slo(tally_t *t, int i, double e2e, double ttft, int output)
{
    const tally_group_cfg_t *c = &t->gcfg[t->group_of[i]];
    if (!(c->slo_ttft > 0) && !(c->slo_tpot > 0)) return;
    int ttft_ok = !(c->slo_ttft > 0) || ttft <= c->slo_ttft;
    int tpot_ok = !(c->slo_tpot > 0) || output <= 1 ||
                  (e2e - ttft) / (output - 1) <= c->slo_tpot;
    tally_part_t *p[2];
    for (int k = tally_parts(t, i, p); k-- > 0;) part_slo(p[k], ttft_ok, tpot_ok, output);
    t->ten[i].slo_met += ttft_ok && tpot_ok;
}

void tally_request_end(tally_t *t, int i, double now, double t0, double t_first,
                       int output)
{
    if (now < t->warmup) return;
    tally_part_t *p[2];
    for (int k = tally_parts(t, i, p); k-- > 0;) {
        p[k]->e2e_sum += now - t0;
        p[k]->e2e_n++;
        p[k]->requests_done++;
    }
    t->ten[i].requests++;
    judge_slo(t, i, now - t0, t_first - t0, output);
}





void tally_admitted(tally_t *t, int i, double now, double d)
{
    if (now < t->warmup) return;
    tally_part_t *p[2];
    for (int k = tally_parts(t, i, p); k-- > 0;) hist_add(p[k]->admit, d, 1);
}

void tally_prefix(tally_t *t, int i, double now, int prefix, int hit)
{
    if (now < t->warmup || prefix <= 0) return;
    tally_part_t *p[2];
    for (int k = tally_parts(t, i, p); k-- > 0;) {
        p[k]->pfx_turns++;
        p[k]->pfx_hits += hit != 0;
        p[k]->pfx_reprefill += hit ? 0 : prefix;
    }
}

void tally_kv(tally_t *t, double util, double from, double to)
{
    t->kv_area += util * tally_clip(t, from, to);
}

void tally_roofline(tally_t *t, double start, double end, double roof)
{
    double d = tally_clip(t, start, end);
    if (d > 0 && end > start) t->roof_s += roof * (d / (end - start));
}

/* ---- results ------------------------------------------------------------ */

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

void tally_tenant_row(const tally_t *t, int i, tally_tenant_row_t *row)
{
    const tally_tenant_t *T = &t->ten[i];
    const tally_group_cfg_t *c = &t->gcfg[t->group_of[i]];
    row->group = t->group_of[i];
    row->tokens = T->tokens;
    row->rate = ratio(T->decode_tokens, T->decode_time);
    row->itl_mean = ratio(T->gap_sum, T->decode_tokens);
    row->itl_p99 = T->itl ? quant(T->itl, 0.99) : NAN;
    row->ttft_mean = ratio(T->ttft_sum, T->ttft_n);
    row->requests = T->requests;
    row->slo_met_frac = c->slo_ttft > 0 || c->slo_tpot > 0
                            ? ratio(T->slo_met, T->requests) : NAN;
}

static int dbl_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Jain's index and the 5th percentile (smallest rate with at least 5% of
 * the tenants at or below it) of the decode rates of tenants [first, end)
 * (a group's: groups hold consecutive tenants; or every tenant) that
 * decoded after the warm-up. A range, not a filter over every tenant per
 * group, which made 10^4 groups cost 10^8 steps. */
static void tenant_rates(tally_t *t, int first, int end, double *jain, double *p5)
{
    int n = 0;
    double sum = 0, sq = 0;
    for (int i = first; i < end; i++) {
        const tally_tenant_t *T = &t->ten[i];
        if (!(T->decode_time > 0)) continue;
        double x = T->decode_tokens / T->decode_time;
        t->scratch[n++] = x;
        sum += x;
        sq += x * x;
    }
    *jain = n > 0 && sq > 0 ? sum * sum / (n * sq) : NAN;
    if (n == 0) {
        *p5 = NAN;
        return;
    }
    qsort(t->scratch, (size_t)n, sizeof *t->scratch, dbl_cmp);
    int k = (int)ceil(0.05 * n) - 1;
    *p5 = t->scratch[k < 0 ? 0 : k];
}

/* The metrics of one part; has_*: some tenant of it drafts / verifies;
 * has_slo: some tenant of it has an SLO. */
/* Energy per committed token of the part's edge devices: NaN when some
 * drafting group's device has no power figure (edge_known = 0); a part
 * that never drafts computes nothing at the edge (0 J). */
static double j_per_tok_edge(const tally_part_t *p, int has_drafts, int edge_known)
{
    if (!has_drafts) return p->committed > 0 ? 0 : NAN;
    return edge_known ? ratio(p->edge_j, p->committed) : NAN;
}

static void part_finish(const tally_t *t, const tally_part_t *p, int has_drafts,
                        int has_verify, int has_slo, int edge_known, double *v)
{
    double span = t->end - t->warmup;
    v[METRIC_ITL_MEAN] = mean(p->itl);
    v[METRIC_ITL_P50] = quant(p->itl, 0.50);
    v[METRIC_ITL_P95] = quant(p->itl, 0.95);
    v[METRIC_ITL_P99] = quant(p->itl, 0.99);
    v[METRIC_COMMIT_GAP_P99] = quant(p->gap, 0.99);
    v[METRIC_TTFT_MEAN] = mean(p->ttft);
    v[METRIC_TTFT_P99] = quant(p->ttft, 0.99);
    v[METRIC_E2E_MEAN] = ratio(p->e2e_sum, p->e2e_n);
    v[METRIC_TOKENS_PER_S_TENANT] = ratio(p->decode_tokens, p->decode_time);
    v[METRIC_THROUGHPUT] = ratio(p->committed, span);
    v[METRIC_ACCEPTANCE_RATE] = has_verify ? ratio(p->accepted, p->verified_drafts) : NAN;
    v[METRIC_ACCEPTED_LEN_MEAN] = has_verify ? ratio(p->verdict_tokens, p->verdicts) : NAN;
    v[METRIC_DRAFT_WASTE_FRAC] = has_drafts ? ratio(p->discarded, p->drafted) : NAN;
    v[METRIC_GPU_WASTE_FRAC] = has_verify ? ratio(p->stale_tokens, p->verified_tokens) : NAN;
    v[METRIC_QUEUE_DELAY_MEAN] = mean(p->qdelay);
    v[METRIC_QUEUE_DELAY_P99] = quant(p->qdelay, 0.99);
    v[METRIC_EDGE_STALL_FRAC] = has_drafts ? ratio(p->stall, p->decode_time) : NAN;
    v[METRIC_NET_UP_BYTES_PER_TOK] = ratio(p->up_bytes, p->committed);
    v[METRIC_NET_DOWN_BYTES_PER_TOK] = ratio(p->down_bytes, p->committed);
    v[METRIC_REQUESTS_DONE] = p->requests_done;
    v[METRIC_SLO_ATTAINMENT] = has_slo ? ratio(p->slo_ok, p->slo_n) : NAN;
    v[METRIC_TTFT_SLO_FRAC] = has_slo ? ratio(p->slo_ttft_ok, p->slo_n) : NAN;
    v[METRIC_TPOT_SLO_FRAC] = has_slo ? ratio(p->slo_tpot_ok, p->slo_n) : NAN;
    v[METRIC_GOODPUT_REQ_S] = has_slo ? ratio(p->slo_ok, span) : NAN;
    v[METRIC_GOODPUT_TOK_S] = has_slo ? ratio(p->slo_ok_tokens, span) : NAN;
    v[METRIC_ADMISSION_WAIT_MEAN] = mean(p->admit);
    v[METRIC_ADMISSION_WAIT_P99] = quant(p->admit, 0.99);
    v[METRIC_EDGE_J_PER_TOK] = j_per_tok_edge(p, has_drafts, edge_known);
    v[METRIC_EDGE_THROTTLED_FRAC] = ratio(p->th_throttled, p->th_n * span);
    v[METRIC_EDGE_DRAFT_SPEED_MEAN] = ratio(p->th_speed, p->th_n * span);
    v[METRIC_FALLBACK_FRAC] = ratio(p->fb_time, p->fb_n * span);
    v[METRIC_LOCAL_TOK_FRAC] = p->fb_n > 0 ? ratio(p->local_tokens, p->committed) : NAN;
    v[METRIC_LINK_STALL_S] = ratio(p->link_stall, p->obs_n);
    v[METRIC_ITL_OUTAGE_MEAN] = mean(p->itl_out);
    v[METRIC_ITL_OUTAGE_P99] = quant(p->itl_out, 0.99);
    v[METRIC_PREFIX_HIT_RATE] = ratio(p->pfx_hits, p->pfx_turns);
    v[METRIC_REPREFILL_TOK_PER_TURN] = ratio(p->pfx_reprefill, p->pfx_turns);
}

/* Energy of groups [g0, g1)'s edge devices over the measured span: each
 * draws power_w while it computes and idle_power_w the rest of the span
 * (docs/metrics.md, edge_j_per_req). Sets edge_j_per_req (over the part's
 * finished requests) and battery_pct_per_h (100 · mean power / battery
 * capacity, the mean over the devices); NaN where a drafting group's power
 * or capacity is unknown, or no group drafts. */
static void edge_battery(tally_t *t, int g0, int g1, const tally_part_t *part,
                         double *v)
{
    double span = t->end - t->warmup, j = 0, pct = 0, n = 0;
    int known = 1, cap = 1;
    for (int g = g0; g < g1; g++) {
        const tally_group_cfg_t *c = &t->gcfg[g];
        if (!c->has_drafts) continue;
        const tally_part_t *p = group_part(t, g);
        double idle = t->gsize[g] * span - p->edge_busy - p->edge_open;
        double e = p->edge_j + p->edge_open_j + (idle > 0 ? idle : 0) * c->edge_idle_power_w;
        known &= c->edge_power_w > 0;
        cap &= c->battery_wh > 0;
        j += e;
        if (c->battery_wh > 0) pct += 100 * e / span / c->battery_wh;
        n += t->gsize[g];
    }
    v[METRIC_EDGE_J_PER_REQ] = n > 0 && known ? ratio(j, part->requests_done) : NAN;
    v[METRIC_BATTERY_PCT_PER_H] = n > 0 && known && cap ? ratio(pct, n) : NAN;
}

/* Replica group k's replicas: with one group, all of the run's. */
static int group_replicas(const tally_t *t, int k, int replicas)
{
    return t->nccfg == 1 || t->ccfg[k].replicas <= 0 ? replicas : t->ccfg[k].replicas;
}

/* GPU energy: every GPU of every replica draws its card's power_w while
 * its replica is busy and idle_power_w (when given) the rest of the
 * measured span; summed over the replica groups. */
static double gpu_j_per_tok(const tally_t *t, int replicas, double span)
{
    if (replicas <= 0) return 0;
    double j = 0;
    for (int k = 0; k < t->nccfg; k++) {
        const tally_cloud_cfg_t *c = &t->ccfg[k];
        if (!(c->gpu_power_w > 0)) return NAN;
        double busy = t->rbusy[k];
        double idle = group_replicas(t, k, replicas) * span - busy;
        j += (busy * c->gpu_power_w + (idle > 0 ? idle : 0) * c->gpu_idle_power_w) *
             c->gpus_per_replica;
    }
    return ratio(j, t->all.committed);
}

/* Every GPU is rented for the whole measured span, busy or not, at its
 * group's price. */
static double usd_per_mtok(const tally_t *t, int replicas, double span)
{
    double usd = 0;
    for (int k = 0; k < t->nccfg; k++) {
        const tally_cloud_cfg_t *c = &t->ccfg[k];
        if (!(c->gpu_hour_usd > 0)) return NAN;
        double gpu_hours =
            (double)group_replicas(t, k, replicas) * c->gpus_per_replica * span / 3600.0;
        usd += c->gpu_hour_usd * gpu_hours;
    }
    return ratio(usd * 1e6, t->all.committed);
}

/* The shared cloud's metrics and the run's: the fleet's, in every part. */
static void finish_cloud(const tally_t *t, int replicas, double events, double wall,
                         double *v)
{
    double span = t->end - t->warmup;
    /* No cloud (edge-only): no GPU time is used at all. */
    v[METRIC_GPU_UTIL] = replicas > 0 ? ratio(t->busy, replicas * span) : 0;
    v[METRIC_BATCH_MEAN] = mean(t->batch);
    v[METRIC_BATCH_P99] = quant_int(t->batch, 0.99);
    v[METRIC_GPU_S_PER_KTOK] = replicas > 0 ? ratio(t->busy * 1000, t->all.committed) : 0;
    v[METRIC_KV_UTIL_MEAN] = replicas > 0 && t->kv_known
                                 ? ratio(t->kv_area, t->kv_replicas * span) : NAN;
    v[METRIC_GPU_ROOFLINE_UTIL] = replicas > 0 && t->roof_known
                                      ? ratio(t->roof_s, t->busy) : NAN;
    v[METRIC_GPU_J_PER_TOK] = gpu_j_per_tok(t, replicas, span);
    v[METRIC_USD_PER_MTOK] = usd_per_mtok(t, replicas, span);
    v[METRIC_EVENTS] = events;
    v[METRIC_WALL_S] = wall;
    v[METRIC_EVENTS_PER_S] = ratio(events, wall);
}

static void group_flags(const tally_t *t, int g, int *d, int *v, int *slo, int *ek)
{
    const tally_group_cfg_t *c = &t->gcfg[g];
    *ek = !c->has_drafts || c->edge_power_w > 0;
    *d = c->has_drafts;
    *v = c->has_verify;
    *slo = c->slo_ttft > 0 || c->slo_tpot > 0;
}

void tally_finish(tally_t *t, int replicas, double events, double wall,
                  metrics_rep_t *out, metrics_rep_t *groups)
{
    int fd = 0, fv = 0, fs = 0, fk = 1;
    for (int g = 0; g < t->ngroups; g++) {
        int d, v, s, k;
        group_flags(t, g, &d, &v, &s, &k);
        fd |= d;
        fv |= v;
        fs |= s;
        fk &= k;
    }
    part_finish(t, &t->all, fd, fv, fs, fk, out->v);
    edge_battery(t, 0, t->ngroups, &t->all, out->v);
    finish_cloud(t, replicas, events, wall, out->v);
    tenant_rates(t, 0, t->ntenants, &out->v[METRIC_FAIRNESS_JAIN],
                 &out->v[METRIC_TOKENS_PER_S_TENANT_P5]);
    for (int g = 0, first = 0; groups && g < t->ngroups; g++) {
        int d, v, s, k;
        group_flags(t, g, &d, &v, &s, &k);
        double *gv = groups[g].v;
        part_finish(t, group_part(t, g), d, v, s, k, gv);
        edge_battery(t, g, g + 1, group_part(t, g), gv);
        finish_cloud(t, replicas, events, wall, gv);
        int end = first;
        while (end < t->ntenants && t->group_of[end] == g) end++;
        tenant_rates(t, first, end, &gv[METRIC_FAIRNESS_JAIN],
                     &gv[METRIC_TOKENS_PER_S_TENANT_P5]);
        first = end;
    }
}
