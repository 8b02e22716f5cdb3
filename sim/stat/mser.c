#include "stat/mser.h"

#include <stdlib.h>
#include <string.h>

int mser_series_init(mser_series_t *s, int n, double end, err_t *err)
{
    s->x = calloc((size_t)(n > 0 ? n : 1), sizeof *s->x);
    s->n = n;
    s->bin_s = n > 0 ? end / n : 0;
    if (!s->x) return err_set(err, ERR_RUNTIME, "simulation: out of memory");
    return 0;
}

void mser_series_fini(mser_series_t *s)
{
    free(s->x);
    s->x = NULL;
    s->n = 0;
}

void mser_series_reset(mser_series_t *s)
{
    memset(s->x, 0, (size_t)s->n * sizeof *s->x);
}

void mser_series_add(mser_series_t *s, double t, double v)
{
    if (!(t >= 0) || !(s->bin_s > 0)) return;
    double k = t / s->bin_s;
    if (k < s->n) s->x[(int)k] += v;
}

static double mean_of_batch(const double *x, int j, int batch)
{
    double sum = 0;
    for (int i = 0; i < batch; i++) sum += x[j * batch + i];
    return sum / batch;
}

int mser_pick(const double *x, int n, int batch)
{
    int k = batch > 0 ? n / batch : 0;
    if (k < 2) return 0;
    /* Two passes per d, no allocation (k is a few hundred): one-pass sums
     * would cancel and break the ties of a flat series. */
    double best = 0;
    int pick = 0;
    for (int d = 0; d <= k / 2; d++) {
        double m = k - d, mean = 0, ss = 0;
        for (int j = d; j < k; j++) mean += mean_of_batch(x, j, batch);
        mean /= m;
        for (int j = d; j < k; j++) {
            double e = mean_of_batch(x, j, batch) - mean;
            ss += e * e;
        }
        double v = ss / (m * m);
        if (d == 0 || v < best) {
            best = v;
            pick = d;
        }
    }
    return pick * batch;
}
