/* mser — the warm-up diagnostic MSER-5 (White, "An effective truncation
 * heuristic for bias reduction in simulation output", Simulation 69(6),
 * 1997) on a series recorded in fixed time bins.
 *
 * The series is averaged in batches of 5 bins; for each truncation d (in
 * batches) over the first half of the batches, the standard error of the
 * mean of the remaining batches, sum((z_j - mean)^2) / (k - d)^2, is
 * computed, and the d that minimises it is MSER-5's pick (the smallest on
 * ties). A stationary series gives 0: deleting data only widens the
 * error; a transient at the start raises the error of every d that keeps
 * it, so the pick lands at its end.
 */
#ifndef SPECSIM_MSER_H
#define SPECSIM_MSER_H

#include "base/err.h"

#define MSER_BATCH 5
#define MSER_BINS 1000   /* bins per run: duration / 1000 each */

/* A series of per-bin sums over [0, end). */
typedef struct mser_series {
    double *x;           /* [n] owned */
    int n;
    double bin_s;
} mser_series_t;

/* Allocates n zeroed bins of end / n seconds each. 0, or -1 with err.
 * Release with mser_series_fini. */
int mser_series_init(mser_series_t *s, int n, double end, err_t *err);
void mser_series_fini(mser_series_t *s);
void mser_series_reset(mser_series_t *s);
/* Adds v to the bin holding time t (ignored outside [0, end)). */
void mser_series_add(mser_series_t *s, double t, double v);

/* MSER-b's truncation point: how many leading samples of x[0..n) to
 * delete, a multiple of batch (0 when there are fewer than 2 batches). */
int mser_pick(const double *x, int n, int batch);

#endif
