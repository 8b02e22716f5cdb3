/* tally — one replication's metric accumulators (docs/metrics.md, after warm-up).
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

/* Whole-replication totals, not clipped to the warm-up, for conservation
 * and Little's-law checks (tests) — replication 0 of a sim_run_detailed (sim.h). */
typedef struct tally_totals {
    double end;               /* simulated time covered (duration) */
    /* tokens */
    double drafted;           /* draft tokens completed (+ partial ones discarded) */
    double discarded;         /* drafted then thrown away */
    double draft_committed;   /* drafted tokens that were committed */
    double extra_committed;   /* corrections, bonus tokens, cloud-only tokens */
    double first_tokens;      /* first tokens (from prefill) committed */
    double committed;         /* every token committed at the edges */
    double pending_drafts;    /* drafted, undecided at the end (blocks in flight) */
    /* cloud queue: jobs waiting to enter their first iteration */
    double queue_area;        /* integral of the number waiting over [0, end] */
    double queue_arrivals;    /* jobs that entered a queue */
    double queue_started;     /* jobs that entered an iteration */
    double queue_purged;      /* jobs purged (stale) before starting */
    double queue_delay_sum;   /* sum of arrival -> first iteration, started jobs */
    double queue_purged_sojourn; /* sum of arrival -> purge, purged jobs */
    double queue_open_sojourn;   /* sum of arrival -> end, jobs still waiting */
    double queue_waiting_end; /* jobs waiting at the end */
    /* verification */
    double verdicts;          /* verify jobs decided (non-stale) */
    double verified_tokens;   /* (gamma+1) per verify job computed */
    double stale_tokens;      /* of which in stale blocks */
    double blocks_dropped;    /* stale blocks dropped on arrival */
    double busy_s;            /* GPU busy seconds, all replicas */
    double iterations;
    double requests_done;
} tally_totals_t;

typedef struct tally {
    double warmup, end;
    hist_t *itl, *gap, *ttft, *batch, *qdelay;
    double committed, decode_tokens, decode_time, stall;
    double e2e_sum, e2e_n, requests_done;
    double accepted, verified_drafts, verdicts, verdict_tokens;
    double drafted, discarded;
    double busy, verified_tokens, stale_tokens;
    double up_bytes, down_bytes;
    tally_totals_t raw;
    struct mser_series *series; /* borrowed, or NULL: committed tokens per
                                   time bin from 0 (sim/mser.h); kept by
                                   tally_reset */
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
