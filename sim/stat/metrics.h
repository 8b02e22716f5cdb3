/* metrics — the metric names users rely on (docs/metrics.md), bounded-memory
 * percentiles and the across-replication summary with Student-t CIs.
 *
 * A run produces one value per metric per replication (metrics_rep_t); the
 * summary is their mean with a 95% half-width t(0.975, R-1)·sd/√R (0 when
 * R = 1). Percentiles come from log-bucketed histograms whose relative error
 * is at most 0.5% and whose memory does not depend on how much is recorded.
 */
#ifndef SPECSIM_METRICS_H
#define SPECSIM_METRICS_H

#include "base/api.h"

#include <stddef.h>
#include <stdint.h>

/* X-macro so the enum, names and descriptions stay in one place and in the
 * contract's order. Names are contract: never rename, only append. */
#define METRICS_LIST(X)                                                      \
    X(ITL_MEAN, "itl_mean_s", "per-token inter-token latency, mean (s)")     \
    X(ITL_P50, "itl_p50_s", "per-token inter-token latency, median (s)")     \
    X(ITL_P95, "itl_p95_s", "per-token inter-token latency, p95 (s)")        \
    X(ITL_P99, "itl_p99_s", "per-token inter-token latency, p99 (s)")        \
    X(COMMIT_GAP_P99, "commit_gap_p99_s", "p99 of raw gaps between commits (s)") \
    X(TTFT_MEAN, "ttft_mean_s", "request start -> first token at the edge, mean (s)") \
    X(TTFT_P99, "ttft_p99_s", "request start -> first token at the edge, p99 (s)") \
    X(E2E_MEAN, "e2e_mean_s", "request start -> last token, mean (s)")       \
    X(TOKENS_PER_S_TENANT, "tokens_per_s_tenant", "decode rate of one tenant while decoding (tok/s)") \
    X(THROUGHPUT, "throughput_tok_s", "committed tokens per second, all tenants") \
    X(ACCEPTANCE_RATE, "acceptance_rate", "accepted drafts / verified non-stale drafts") \
    X(ACCEPTED_LEN_MEAN, "accepted_len_mean", "tokens committed per verdict") \
    X(DRAFT_WASTE_FRAC, "draft_waste_frac", "drafted tokens discarded / drafted") \
    X(GPU_UTIL, "gpu_util", "GPU busy time / time, mean over replicas")      \
    X(GPU_WASTE_FRAC, "gpu_waste_frac", "stale verified tokens / verified tokens") \
    X(BATCH_MEAN, "batch_mean", "jobs per iteration, mean")                  \
    X(BATCH_P99, "batch_p99", "jobs per iteration, p99")                     \
    X(QUEUE_DELAY_MEAN, "queue_delay_mean_s", "job arrival at cloud -> iteration start, mean (s)") \
    X(QUEUE_DELAY_P99, "queue_delay_p99_s", "job arrival at cloud -> iteration start, p99 (s)") \
    X(EDGE_STALL_FRAC, "edge_stall_frac", "edge waiting time / decode time") \
    X(NET_UP_BYTES_PER_TOK, "net_up_bytes_per_tok", "uplink bytes per committed token") \
    X(NET_DOWN_BYTES_PER_TOK, "net_down_bytes_per_tok", "downlink bytes per committed token") \
    X(GPU_S_PER_KTOK, "gpu_s_per_ktok", "GPU busy seconds per 1000 committed tokens") \
    X(REQUESTS_DONE, "requests_done", "requests finished after warm-up")     \
    X(EVENTS, "events", "events processed")                                  \
    X(WALL_S, "wall_s", "wall-clock seconds of the run")                     \
    X(EVENTS_PER_S, "events_per_s", "events processed per wall-clock second") \
    X(SLO_ATTAINMENT, "slo_attainment", "finished requests meeting every SLO / finished requests") \
    X(TTFT_SLO_FRAC, "ttft_slo_frac", "finished requests meeting the TTFT SLO / finished requests") \
    X(TPOT_SLO_FRAC, "tpot_slo_frac", "finished requests meeting the TPOT SLO / finished requests") \
    X(GOODPUT_REQ_S, "goodput_req_s", "SLO-meeting requests finished per second") \
    X(GOODPUT_TOK_S, "goodput_tok_s", "output tokens of SLO-meeting requests per second") \
    X(FAIRNESS_JAIN, "fairness_jain", "Jain's index of the tenants' decode rates") \
    X(TOKENS_PER_S_TENANT_P5, "tokens_per_s_tenant_p5", "5th percentile of the tenants' decode rates (tok/s)") \
    X(ADMISSION_WAIT_MEAN, "admission_wait_mean_s", "prompt at the cloud -> KV admitted, mean (s)") \
    X(ADMISSION_WAIT_P99, "admission_wait_p99_s", "prompt at the cloud -> KV admitted, p99 (s)") \
    X(KV_UTIL_MEAN, "kv_util_mean", "reserved KV / KV capacity, time-average, mean over replicas") \
    X(GPU_ROOFLINE_UTIL, "gpu_roofline_util", "roofline time of the work done / GPU busy time") \
    X(EDGE_J_PER_TOK, "edge_j_per_tok", "edge energy (drafting + prefill) per committed token (J)") \
    X(GPU_J_PER_TOK, "gpu_j_per_tok", "GPU energy, all GPUs of all replicas, per committed token (J)") \
    X(USD_PER_MTOK, "usd_per_mtok", "GPU rental per million committed tokens (USD)") \
    X(EDGE_J_PER_REQ, "edge_j_per_req", "edge energy (busy + idle) per finished request (J)") \
    X(BATTERY_PCT_PER_H, "battery_pct_per_h", "edge battery drawn per hour, mean over devices (%/h)") \
    X(EDGE_THROTTLED_FRAC, "edge_throttled_frac", "time below full speed / time, devices with a thermal model") \
    X(EDGE_DRAFT_SPEED_MEAN, "edge_draft_speed_mean", "time-average speed level (1 = full), devices with a thermal model") \
    X(FALLBACK_FRAC, "fallback_frac", "time in fallback / time, tenants with protocol.fallback") \
    X(LOCAL_TOK_FRAC, "local_tok_frac", "tokens decoded locally in fallback / committed tokens, tenants with protocol.fallback") \
    X(LINK_STALL_S, "link_stall_s", "seconds stalled while the link was down, per tenant whose link varies") \
    X(ITL_OUTAGE_MEAN, "itl_outage_mean_s", "inter-token latency of tokens whose wait spans link-down time, mean (s)") \
    X(ITL_OUTAGE_P99, "itl_outage_p99_s", "inter-token latency of tokens whose wait spans link-down time, p99 (s)") \
    X(PREFIX_HIT_RATE, "prefix_hit_rate", "session turns whose prefix was resident in the cloud's prefix cache / turns with a prefix") \
    X(REPREFILL_TOK_PER_TURN, "reprefill_tok_per_turn", "prefix tokens the cloud prefilled again, per session turn with a prefix")

enum metric_id {
#define METRICS_ENUM(id, name, desc) METRIC_##id,
    METRICS_LIST(METRICS_ENUM)
#undef METRICS_ENUM
    METRIC_COUNT
};

SPECSIM_API const char *metric_name(int id);
const char *metric_desc(int id);
/* Index of a metric by name, or -1. */
int metric_find(const char *name);
/* 1 for the metrics that are durations in seconds (itl_*_s, wall_s, ...);
 * 0 for the rest, rates per second (throughput_tok_s) included, whose
 * names end in _s too. */
int metric_is_duration(int id);
/* 1 for wall_s and events_per_s: the only metrics that differ between two
 * runs of the same scenario and seed. */
SPECSIM_API int metric_is_timing(int id);
/* 1 for the metrics of the shared cloud (GPU, batches, KV) and of the run
 * (events, wall clock): every tenant group reports the fleet's value. */
int metrics_is_shared(int id);

/* One replication's values, NAN where undefined (e.g. no commits). */
typedef struct metrics_rep {
    double v[METRIC_COUNT];
} metrics_rep_t;

/* Across replications: mean and 95% half-width per metric. NAN-valued
 * replications are left out of that metric's mean; ci95 is 0 when fewer than
 * two replications have a value. `valued` says how many had one, so that a
 * caller judging the CI (optimize's constraints) can tell a half-width of 0
 * from one replication apart from replications that agree. */
typedef struct metrics_summary {
    int reps;
    double value[METRIC_COUNT];
    double ci95[METRIC_COUNT];
    int valued[METRIC_COUNT];   /* replications with a value of the metric */
    /* Per tenant group, in the scenario's order: borrowed, set by the
     * caller that asked sim_run for them (sim.h); NULL/0 otherwise
     * (metrics_summarize clears them). */
    const struct metrics_summary *groups;
    int ngroups;
} metrics_summary_t;

void metrics_summarize(const metrics_rep_t *reps, int n, metrics_summary_t *out);
/* The t interval's half-width of a mean of k >= 2 values with standard
 * deviation sd: its quantile q of Student's t with k - 1 degrees (0.975
 * for a two-sided 95% interval). */
double metrics_halfwidth(double sd, int k, double q);
/* Same for metric m of group g of each replication: reps[r·ngroups + g]. */
void metrics_summarize_group(const metrics_rep_t *reps, int n, int ngroups, int g,
                             metrics_summary_t *out);

/* ---- bounded-memory log histogram --------------------------------------
 * Buckets grow geometrically by (1+2e) so any value in a bucket is within
 * relative error e of the bucket's geometric centre; e = 0.005 by default.
 * Values below `min` are counted in an underflow bucket reported as the exact
 * smallest value seen; above `max`, in an overflow bucket reported as the
 * largest value seen; exact zeros are kept separately. Memory does not
 * depend on how many values are recorded, only on the range they span:
 * the buckets are kept over the span seen so far (a window grown on
 * demand), never more than all of [min, max]. */
typedef struct hist hist_t;

/* Returns a new histogram (caller frees with hist_free), NULL on allocation
 * failure or bad arguments (min <= 0, max <= min, rel_err <= 0). */
hist_t *hist_create(double min, double max, double rel_err);
void hist_free(hist_t *h);
void hist_reset(hist_t *h);
/* Records x with weight w (w copies of x; w may be fractional). */
void hist_add(hist_t *h, double x, double w);
double hist_count(const hist_t *h);
double hist_mean(const hist_t *h);   /* exact: from the running sum */
/* q in [0,1]; NAN when empty. */
double hist_quantile(const hist_t *h, double q);
size_t hist_bytes(const hist_t *h);
/* 1 when a value since the last reset was dropped because its bucket's
 * window could not grow (out of memory): the histogram is then short of
 * it, and its owner must report the failure (hist_add cannot). */
int hist_failed(const hist_t *h);

/* ---- additions by the metrics module ------------------------------------
 * The relative error every caller should pass to hist_create. */
#define HIST_REL_ERR 0.005

/* Quantile definition used by hist_quantile: the smallest recorded value x
 * such that the weight of values <= x is >= q·total (q = 0 gives the
 * smallest value). The histogram finds the cell holding that x exactly and
 * reports the cell's geometric centre clamped to [smallest, largest value
 * seen], so the answer is within relative error rel_err of it for values in
 * [min, max]; zeros are exact, under/overflow as described above.
 *
 * summary: a metric no replication has a value for gets value and ci95 NAN
 * (not 0: the half-width of an undefined mean is undefined). */

/* Adds src's counts into dst; both must come from hist_create with the same
 * min, max and rel_err. Returns 0, or -1 (dst unchanged) when they differ
 * or memory runs out. */
int hist_merge(hist_t *dst, const hist_t *src);
/* A histogram's whole state as hist_state_len(h) doubles, so that one
 * process can hand its counts to another (the testbed's verifier to its edge
 * fleet, testbed/tallyio.h). hist_state_merge adds such a state's counts
 * into h as hist_merge would; h must come from hist_create with the same
 * arguments: 0, or -1 (h unchanged) when n or the shape differs or memory
 * runs out. */
size_t hist_state_len(const hist_t *h);
void hist_state_get(const hist_t *h, double *out);
int hist_state_merge(hist_t *h, const double *in, size_t n);
/* Exact smallest / largest value recorded; NAN when empty. */
double hist_min(const hist_t *h);
double hist_max(const hist_t *h);

#endif
