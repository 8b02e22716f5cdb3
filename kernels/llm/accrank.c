/* accrank — tree acceptance from ranks (see accrank.h). */
#include "accrank.h"

#include <math.h>

int accrank_rank(const float *row, int vocab, int32_t tok, int cap)
{
    const float x = row[tok];
    int before = 0;
    for (int32_t v = 0; v < vocab && before < cap; v++) {
        if (v == tok) continue;
        if (isnan(x)) before += !isnan(row[v]) || v < tok;
        else before += row[v] > x || (row[v] == x && v < tok);
    }
    return before;
}

/* Counts one complete block of `len` outcomes starting at r (its last one
 * the rejection when len <= depth and r[len − 1] >= width). */
static void count_block(accrank_est_t *e, const uint8_t *r, int len)
{
    e->blocks++;
    for (int d = 0; d < len; d++) {
        e->reached[d]++;
        e->n[d][r[d]]++;
        e->accepted += r[d] < e->width;
    }
}

void accrank_estimate(const accrank_stream_t *st, int ns, int k, int width, int depth,
                      accrank_est_t *e)
{
    *e = (accrank_est_t){.k = k, .width = width, .depth = depth};
    for (int s = 0; s < ns; s++) {
        const uint8_t *r = st[s].r;
        int i = 0, n = st[s].n;
        for (;;) {
            int a = 0;
            while (a < depth && i + a < n && r[i + a] < width) a++;
            /* Whole (a = depth), rejected at depth a + 1, or cut short by
             * the text's end (not counted: its law is not a block's). */
            int len = a == depth ? depth : a + 1;
            if (i + len > n) break;
            count_block(e, r + i, len);
            i += len;
        }
    }
}

double accrank_p(const accrank_est_t *e, int d, int r)
{
    return e->reached[d] ? (double)e->n[d][r] / (double)e->reached[d] : NAN;
}

double accrank_se(const accrank_est_t *e, int d, int r)
{
    double p = accrank_p(e, d, r);
    return isnan(p) ? NAN : sqrt(p * (1 - p) / (double)e->reached[d]);
}

int accrank_write_ranks(FILE *f, const char *const *header, int nh, int k,
                        const accrank_stream_t *st, int ns)
{
    for (int i = 0; i < nh; i++) fprintf(f, "# %s\n", header[i]);
    fprintf(f, "# format: ranks %d\n# each outcome: the rank of the target's token among the "
               "draft's (0: its argmax; %d: not among the first %d)\n", k, k, k);
    for (int s = 0; s < ns; s++) {
        fprintf(f, "# request: %s\n", st[s].label ? st[s].label : "");
        for (int j = 0; j < st[s].n; j++)
            fprintf(f, "%d%c", st[s].r[j], j % 32 == 31 || j == st[s].n - 1 ? '\n' : ' ');
    }
    return ferror(f) ? -1 : 0;
}

/* p rounded down to 6 decimals: a row of them never sums above 1. */
static double down6(double p)
{
    return floor(p * 1e6 + 1e-9) / 1e6;
}

int accrank_write_profile(FILE *f, const char *const *header, int nh, const accrank_est_t *e)
{
    for (int i = 0; i < nh; i++) fprintf(f, "# %s\n", header[i]);
    fprintf(f, "# format: tree-profile\n"
               "# one line per depth d = 1, 2, ... (the last repeats deeper): p_1 .. p_%d, "
               "p_k the probability that an accepted node's child of rank k (the draft's "
               "k-th most likely token) is the accepted one\n"
               "# %ld complete blocks of a tree %d wide at every depth, %d deep; "
               "mean accepted length %.4f\n",
            e->k, e->blocks, e->width, e->depth,
            e->blocks ? (double)e->accepted / (double)e->blocks : 0.0);
    for (int d = 0; d < e->depth && e->reached[d] > 0; d++) {
        fprintf(f, "# depth %d: %ld blocks reached it; counts by rank 1..%d, none:", d + 1,
                e->reached[d], e->k);
        for (int r = 0; r <= e->k; r++) fprintf(f, " %ld", e->n[d][r]);
        fprintf(f, "; standard errors:");
        for (int r = 0; r < e->k; r++) fprintf(f, " %.4f", accrank_se(e, d, r));
        fprintf(f, "\n");
        for (int r = 0; r < e->k; r++)
            fprintf(f, "%.6f%c", down6(accrank_p(e, d, r)), r == e->k - 1 ? '\n' : ' ');
    }
    return ferror(f) ? -1 : 0;
}
