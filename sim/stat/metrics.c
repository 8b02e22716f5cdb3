/* metrics — metric names, the across-replication summary, and the bounded
 * memory log histogram behind every percentile.
 *
 * Histogram layout (one block of doubles, sized at creation):
 *   cell 0           negative values (only reachable by misuse; reported as
 *                    the smallest value seen)
 *   cell 1           exact zeros (gaps of 0 are common: commits at one time)
 *   cell 2           0 < x < min   (reported as the smallest such value)
 *   cells 3..nb+2    [min·r^i, min·r^(i+1)), r = 1 + 2e
 *   cell nb+3        x > max       (reported as the largest value seen)
 * The cells are in increasing value order, so a quantile is one prefix scan.
 */
#include "stat/metrics.h"

#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const metric_names[METRIC_COUNT] = {
#define METRICS_NAME(id, name, desc) name,
    METRICS_LIST(METRICS_NAME)
#undef METRICS_NAME
};

static const char *const metric_descs[METRIC_COUNT] = {
#define METRICS_DESC(id, name, desc) desc,
    METRICS_LIST(METRICS_DESC)
#undef METRICS_DESC
};

const char *metric_name(int id)
{
    return (id >= 0 && id < METRIC_COUNT) ? metric_names[id] : "?";
}

const char *metric_desc(int id)
{
    return (id >= 0 && id < METRIC_COUNT) ? metric_descs[id] : "?";
}

int metric_find(const char *name)
{
    if (!name) return -1;
    for (int i = 0; i < METRIC_COUNT; i++)
        if (strcmp(metric_names[i], name) == 0) return i;
    return -1;
}

int metric_is_duration(int id)
{
    switch (id) {
    case METRIC_ITL_MEAN: case METRIC_ITL_P50: case METRIC_ITL_P95: case METRIC_ITL_P99:
    case METRIC_COMMIT_GAP_P99: case METRIC_TTFT_MEAN: case METRIC_TTFT_P99:
    case METRIC_E2E_MEAN: case METRIC_QUEUE_DELAY_MEAN: case METRIC_QUEUE_DELAY_P99:
    case METRIC_ADMISSION_WAIT_MEAN: case METRIC_ADMISSION_WAIT_P99: case METRIC_WALL_S:
    case METRIC_LINK_STALL_S: case METRIC_ITL_OUTAGE_MEAN: case METRIC_ITL_OUTAGE_P99:
        return 1;
    default:
        return 0;
    }
}

int metric_is_timing(int id)
{
    return id == METRIC_WALL_S || id == METRIC_EVENTS_PER_S;
}

int metrics_is_shared(int id)
{
    switch (id) {
    case METRIC_GPU_UTIL: case METRIC_BATCH_MEAN: case METRIC_BATCH_P99:
    case METRIC_GPU_S_PER_KTOK: case METRIC_KV_UTIL_MEAN:
    case METRIC_GPU_ROOFLINE_UTIL: case METRIC_EVENTS: case METRIC_WALL_S:
    case METRIC_GPU_J_PER_TOK: case METRIC_USD_PER_MTOK:
    case METRIC_EVENTS_PER_S:
        return 1;
    default:
        return 0;
    }
}

/* ---- summary over replications ----------------------------------------- */

/* Mean and 95% half-width of the non-NaN values of one metric. Two passes
 * (mean, then squared deviations) because replications of a stable metric
 * agree to many digits and the one-pass formula would cancel them away. */
static void summarize_one(const metrics_rep_t *reps, int n, int stride, int m,
                          double *value, double *ci95, int *valued)
{
    int k = 0;
    double sum = 0.0;
    for (int r = 0; r < n; r++) {
        double x = reps[(size_t)r * stride].v[m];
        if (isnan(x)) continue;
        sum += x;
        k++;
    }
    *valued = k;
    if (k == 0) {
        *value = NAN;
        *ci95 = NAN;
        return;
    }
    double mean = sum / k;
    *value = mean;
    if (k < 2) {
        *ci95 = 0.0;
        return;
    }
    double ss = 0.0;
    for (int r = 0; r < n; r++) {
        double x = reps[(size_t)r * stride].v[m];
        if (isnan(x)) continue;
        ss += (x - mean) * (x - mean);
    }
    double sd = sqrt(ss / (k - 1));
    /* Replications that agree up to rounding (a percentile falling in the
     * same histogram bucket every time) would otherwise show a half-width
     * of 1e-16 relative: that is arithmetic noise, not spread. */
    if (sd <= 1e-12 * fabs(mean)) sd = 0.0;
    *ci95 = metrics_halfwidth(sd, k, 0.975);
}

double metrics_halfwidth(double sd, int k, double q)
{
    return gsl_cdf_tdist_Pinv(q, (double)(k - 1)) * sd / sqrt((double)k);
}

static void summarize(const metrics_rep_t *reps, int n, int stride,
                      metrics_summary_t *out)
{
    out->reps = n > 0 ? n : 0;
    out->groups = NULL;
    out->ngroups = 0;
    for (int m = 0; m < METRIC_COUNT; m++) {
        if (!reps || n <= 0) {
            out->value[m] = NAN;
            out->ci95[m] = NAN;
            out->valued[m] = 0;
            continue;
        }
        summarize_one(reps, n, stride, m, &out->value[m], &out->ci95[m], &out->valued[m]);
    }
}

void metrics_summarize(const metrics_rep_t *reps, int n, metrics_summary_t *out)
{
    summarize(reps, n, 1, out);
}

void metrics_summarize_group(const metrics_rep_t *reps, int n, int ngroups, int g,
                             metrics_summary_t *out)
{
    summarize(reps ? reps + g : NULL, n, ngroups, out);
}

/* ---- histogram ---------------------------------------------------------- */

enum { CELL_NEG = 0, CELL_ZERO = 1, CELL_UNDER = 2, CELL_FIRST = 3 };

enum { HIST_MEMO = 8 };   /* a power of two */
#define HIST_MEMO_EMPTY 0x7ff8000000000001ull   /* a quiet NaN's bits */
/* The first window holds this many geometric cells (512 bytes): a few
 * percent of a decade either side of the first value. */
enum { HIST_WIN_MIN = 64 };

/* Cells are numbered 0 (negative), 1 (zero), 2 (underflow), then the nb
 * geometric buckets from CELL_FIRST, then the overflow cell ncell - 1.
 * The four edge cells are always kept (edge[0..2], edge[3] the overflow);
 * the geometric ones only over the window [lo, hi) that values have fallen
 * in, grown on demand up to all of them, and 0 outside it. A histogram
 * spans many decades (11 for the tally's times: 2,545 cells, 20 KiB) while
 * its values mostly span one or two, and a scenario with 10^4 tenant
 * groups keeps five per group: 110 KB a group when every cell was kept. */
struct hist {
    double min, max;      /* range of the geometric buckets */
    double log_min;       /* log(min) */
    double log_r;         /* log(1 + 2e): width of a bucket in log space */
    double inv_log_r;
    int nb;               /* geometric buckets */
    int ncell;            /* nb + 4 */
    double total;         /* sum of weights */
    double sum;           /* sum of weight·x: the exact mean */
    double seen_min;      /* smallest value recorded */
    double seen_max;      /* largest value recorded */
    double under_min;     /* smallest value in the (0, min) cell */
    int failed;           /* a value was dropped: its window could not grow */
    /* The cells of the last few values seen, by the value's bits: a cell
     * depends on the value alone, and many values recur exactly (batch
     * sizes; inter-token gaps when service and network times are fixed),
     * where one comparison replaces a log. Keys start as a NaN, which
     * hist_add never looks up. */
    uint64_t memo_x[HIST_MEMO];
    int memo_cell[HIST_MEMO];
    double edge[4];       /* cells 0, 1, 2 and ncell - 1 */
    int lo, hi;           /* the window of geometric cells kept */
    double *win;          /* [hi - lo] weights; NULL while empty */
};

hist_t *hist_create(double min, double max, double rel_err)
{
    if (!(min > 0.0) || !(max > min) || !(rel_err > 0.0) || !(rel_err < 0.5) ||
        !isfinite(max))
        return NULL;
    double log_r = log1p(2.0 * rel_err);
    double nbf = ceil((log(max) - log(min)) / log_r);
    /* A bound on memory keeps a typo (rel_err 1e-9) from asking for
     * gigabytes; 2^24 buckets is 128 MiB, far beyond any sane request. */
    if (!(nbf >= 1.0) || nbf > (double)(1 << 24)) return NULL;
    int nb = (int)nbf;
    int ncell = nb + 4;
    hist_t *h = calloc(1, sizeof *h);
    if (!h) return NULL;
    h->min = min;
    h->max = max;
    h->log_min = log(min);
    h->log_r = log_r;
    h->inv_log_r = 1.0 / log_r;
    h->nb = nb;
    h->ncell = ncell;
    for (int k = 0; k < HIST_MEMO; k++) h->memo_x[k] = HIST_MEMO_EMPTY;
    hist_reset(h);
    return h;
}

void hist_free(hist_t *h)
{
    if (!h) return;
    free(h->win);
    free(h);
}

/* The window is kept: a new replication records much the same values. */
void hist_reset(hist_t *h)
{
    if (!h) return;
    if (h->win) memset(h->win, 0, (size_t)(h->hi - h->lo) * sizeof *h->win);
    memset(h->edge, 0, sizeof h->edge);
    h->total = 0.0;
    h->sum = 0.0;
    h->seen_min = INFINITY;
    h->seen_max = -INFINITY;
    h->under_min = INFINITY;
    h->failed = 0;
}

/* Grows the window to hold geometric cells [a, b): at least doubling it
 * (towards the side that grew), so that values drifting over a range cost
 * O(log) reallocations. 0, or -1 out of memory (h unchanged). */
static int hist_cover(hist_t *h, int a, int b)
{
    int empty = h->hi == h->lo;
    if (!empty && a >= h->lo && b <= h->hi) return 0;
    int lo = empty || a < h->lo ? a : h->lo, hi = empty || b > h->hi ? b : h->hi;
    int want = empty ? HIST_WIN_MIN : 2 * (h->hi - h->lo);
    int extra = want - (hi - lo);
    if (extra > 0) {
        if (empty) {
            lo -= extra / 2;
            hi += extra - extra / 2;
        } else if (a < h->lo) {
            lo -= extra;
        } else {
            hi += extra;
        }
    }
    if (lo < CELL_FIRST) lo = CELL_FIRST;
    if (hi > h->ncell - 1) hi = h->ncell - 1;
    double *w = calloc((size_t)(hi - lo), sizeof *w);
    if (!w) return -1;
    if (!empty) memcpy(w + (h->lo - lo), h->win, (size_t)(h->hi - h->lo) * sizeof *w);
    free(h->win);
    h->win = w;
    h->lo = lo;
    h->hi = hi;
    return 0;
}

/* Cell c's weight, for reading. */
static double hist_cell_get(const hist_t *h, int c)
{
    if (c < CELL_FIRST) return h->edge[c];
    if (c == h->ncell - 1) return h->edge[3];
    return c >= h->lo && c < h->hi ? h->win[c - h->lo] : 0.0;
}

/* Cell c's weight, for adding to: an edge cell, or the window grown to
 * hold c; NULL out of memory. */
static double *hist_cell_at(hist_t *h, int c)
{
    if (c < CELL_FIRST) return &h->edge[c];
    if (c == h->ncell - 1) return &h->edge[3];
    if (hist_cover(h, c, c + 1) != 0) return NULL;
    return &h->win[c - h->lo];
}

static int hist_cell_of(const hist_t *h, double x)
{
    if (!(x >= h->min && x <= h->max)) {   /* the rare cases (min > 0) */
        if (x < 0.0) return CELL_NEG;
        if (x == 0.0) return CELL_ZERO;
        if (x < h->min) return CELL_UNDER;
        return h->ncell - 1;
    }
    int i = (int)((log(x) - h->log_min) * h->inv_log_r);
    /* Rounding in log() can push a value at the very top edge one bucket up
     * (or, for x == min, to -0.x); the error this costs is ~1e-16. */
    if (i < 0) i = 0;
    if (i >= h->nb) i = h->nb - 1;
    return CELL_FIRST + i;
}

/* hist_cell_of through the memo; x is not a NaN. */
static inline int hist_cell_memo(hist_t *h, double x)
{
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    unsigned k = (unsigned)((b >> 32) ^ (b >> 12) ^ b) & (HIST_MEMO - 1);
    if (h->memo_x[k] == b) return h->memo_cell[k];
    int c = hist_cell_of(h, x);
    h->memo_x[k] = b;
    h->memo_cell[k] = c;
    return c;
}

void hist_add(hist_t *h, double x, double w)
{
    /* w in (0, inf): one comparison pair instead of isfinite(), as this
     * runs a few times per event. */
    if (!h || isnan(x) || !(w > 0.0 && w < INFINITY)) return;
    int c = hist_cell_memo(h, x);
    double *cell = c >= h->lo && c < h->hi ? &h->win[c - h->lo] : hist_cell_at(h, c);
    /* hist_add cannot fail: the loss is kept for hist_failed to report. */
    if (!cell) {
        h->failed = 1;
        return;
    }
    *cell += w;
    h->total += w;
    h->sum += w * x;
    if (x < h->seen_min) h->seen_min = x;
    if (x > h->seen_max) h->seen_max = x;
    if (c == CELL_UNDER && x < h->under_min) h->under_min = x;
}

int hist_merge(hist_t *dst, const hist_t *src)
{
    if (!dst || !src || dst->ncell != src->ncell || dst->min != src->min ||
        dst->log_r != src->log_r)
        return -1;
    if (src->hi > src->lo && hist_cover(dst, src->lo, src->hi) != 0) return -1;
    for (int k = 0; k < 4; k++) dst->edge[k] += src->edge[k];
    for (int c = src->lo; c < src->hi; c++) dst->win[c - dst->lo] += src->win[c - src->lo];
    dst->failed |= src->failed;
    dst->total += src->total;
    dst->sum += src->sum;
    if (src->seen_min < dst->seen_min) dst->seen_min = src->seen_min;
    if (src->seen_max > dst->seen_max) dst->seen_max = src->seen_max;
    if (src->under_min < dst->under_min) dst->under_min = src->under_min;
    return 0;
}

/* The state's header: the shape (min, log_r, cells), then the totals. */
#define HIST_STATE_HEAD 8

size_t hist_state_len(const hist_t *h)
{
    return HIST_STATE_HEAD + (size_t)h->ncell;
}

void hist_state_get(const hist_t *h, double *out)
{
    double head[HIST_STATE_HEAD] = {h->min, h->log_r, (double)h->ncell, h->total,
                                    h->sum, h->seen_min, h->seen_max, h->under_min};
    memcpy(out, head, sizeof head);
    for (int c = 0; c < h->ncell; c++) out[HIST_STATE_HEAD + c] = hist_cell_get(h, c);
}

int hist_state_merge(hist_t *h, const double *in, size_t n)
{
    if (n != hist_state_len(h) || in[0] != h->min || in[1] != h->log_r ||
        in[2] != (double)h->ncell)
        return -1;
    const double *cells = in + HIST_STATE_HEAD;
    int a = CELL_FIRST, b = h->ncell - 1;   /* the non-zero geometric cells */
    while (a < b && cells[a] == 0.0) a++;
    while (b > a && cells[b - 1] == 0.0) b--;
    if (a < b && hist_cover(h, a, b) != 0) return -1;
    h->total += in[3];
    h->sum += in[4];
    if (in[5] < h->seen_min) h->seen_min = in[5];
    if (in[6] > h->seen_max) h->seen_max = in[6];
    if (in[7] < h->under_min) h->under_min = in[7];
    for (int c = 0; c < CELL_FIRST; c++) h->edge[c] += cells[c];
    h->edge[3] += cells[h->ncell - 1];
    for (int c = a; c < b; c++) h->win[c - h->lo] += cells[c];
    return 0;
}

double hist_count(const hist_t *h)
{
    return h ? h->total : 0.0;
}

double hist_mean(const hist_t *h)
{
    if (!h || !(h->total > 0.0)) return NAN;
    return h->sum / h->total;
}

double hist_min(const hist_t *h)
{
    return (h && h->total > 0.0) ? h->seen_min : NAN;
}

double hist_max(const hist_t *h)
{
    return (h && h->total > 0.0) ? h->seen_max : NAN;
}

/* The value a cell stands for: its geometric centre, within e of anything in
 * it, clamped to what was seen (so the answer never leaves the data's range
 * and a one-valued histogram answers that value exactly). */
static double hist_cell_value(const hist_t *h, int c)
{
    double v;
    if (c == CELL_NEG) return h->seen_min;
    if (c == CELL_ZERO) return 0.0;
    if (c == CELL_UNDER) v = h->under_min;
    else if (c == h->ncell - 1) return h->seen_max;
    else v = exp(h->log_min + ((double)(c - CELL_FIRST) + 0.5) * h->log_r);
    if (v < h->seen_min) v = h->seen_min;
    if (v > h->seen_max) v = h->seen_max;
    return v;
}

double hist_quantile(const hist_t *h, double q)
{
    if (!h || !(h->total > 0.0) || isnan(q)) return NAN;
    if (q < 0.0) q = 0.0;
    if (q > 1.0) q = 1.0;
    /* The total is re-added in scan order so that q = 1 reaches the last
     * non-empty cell exactly, whatever order the weights came in. */
    /* The cells in order: the three low edge cells, the window, the
     * overflow cell; those outside the window are 0 and add nothing. */
    struct { const double *w; int c0, n; } seg[3] = {
        {h->edge, 0, CELL_FIRST}, {h->win, h->lo, h->hi - h->lo},
        {&h->edge[3], h->ncell - 1, 1}};
    double total = 0.0;
    for (int s = 0; s < 3; s++)
        for (int k = 0; k < seg[s].n; k++) total += seg[s].w[k];
    double target = q * total;
    double cum = 0.0;
    for (int s = 0; s < 3; s++)
        for (int k = 0; k < seg[s].n; k++) {
            if (seg[s].w[k] == 0.0) continue;
            cum += seg[s].w[k];
            if (cum >= target) return hist_cell_value(h, seg[s].c0 + k);
        }
    return h->seen_max;
}

size_t hist_bytes(const hist_t *h)
{
    return h ? sizeof *h + (size_t)(h->hi - h->lo) * sizeof *h->win : 0;
}

int hist_failed(const hist_t *h)
{
    return h && h->failed;
}
