/* tally — one replication's metric accumulators (DESIGN §5 after warm-up).
 *
 * Entities report what happened as it happens; only events at
 * t >= warmup count towards the metrics, and intervals (decode time, stall
 * time, GPU busy time) are clipped to [warmup, end]. Percentiles use bounded
 * hist_t histograms, so memory does not grow with simulated time. The `raw`
 * totals are whole-replication, unclipped, for conservation checks.
 */
#ifndef SPECSIM_TALLY_H
#define SPECSIM_TALLY_H

#include "metrics.h"
#include "sim.h"

typedef struct tally {
    double warmup, end;
    hist_t *itl, *gap, *ttft, *batch, *qdelay;
    double committed, decode_tokens, decode_time, stall;
    double e2e_sum, e2e_n, requests_done;
    double accepted, verified_drafts, verdicts, verdict_tokens;
    double drafted, discarded;
    double busy, verified_tokens, stale_tokens;
    double up_bytes, down_bytes;
    sim_totals_t raw;
} tally_t;

/* Returns a new tally for [warmup, end]; the caller frees it with
 * tally_free(). NULL on allocation failure. */
tally_t *tally_create(double warmup, double end);
void tally_free(tally_t *t);
/* Zeroes every accumulator (histograms kept allocated) for a new
 * replication. */
void tally_reset(tally_t *t);

/* Length of [a, b] inside [warmup, end]. */
static inline double tally_clip(const tally_t *t, double a, double b)
{
    if (a < t->warmup) a = t->warmup;
    if (b > t->end) b = t->end;
    return b > a ? b - a : 0;
}

/* Fills one replication's metrics. has_drafts: the mode drafts at the edge;
 * has_verify: the cloud verifies blocks. replicas: for gpu_util (0 = no
 * cloud: gpu_util and gpu_s_per_ktok are 0). Metrics a mode does not have
 * (acceptance in cloud-only, say) are NAN. */
void tally_finish(const tally_t *t, int has_drafts, int has_verify,
                  int replicas, double events, double wall,
                  metrics_rep_t *out);

#endif
