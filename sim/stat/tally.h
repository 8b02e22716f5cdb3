/* tally — one replication's metric accumulators (docs/metrics.md, after warm-up).
 *
 * Entities report what happened as it happens, through the tally_* calls
 * below; only events at t >= warmup count towards the metrics, and
 * intervals (decode time, stall time, GPU busy time) are clipped to
 * [warmup, end]. Every tenant-side quantity is kept twice: fleet-wide
 * (`all`) and for the tenant's group (`group[g]`), each summed in event
 * order, so the fleet's numbers do not depend on how tenants are grouped.
 * Per tenant it keeps a few sums (O(tenants) memory) for fairness and
 * `run --per-tenant`; a per-tenant ITL histogram only when asked. The
 * cloud's shared resources (batches, busy time, KV, roofline work) are
 * fleet-wide only. Percentiles use bounded hist_t histograms, so memory
 * does not grow with simulated time. The `raw` totals are whole-
 * replication, unclipped, for conservation checks.
 */
#ifndef SPECSIM_TALLY_H
#define SPECSIM_TALLY_H

#include "stat/metrics.h"

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

/* What is kept for the fleet and for each tenant group, after warm-up. */
typedef struct tally_part {
    hist_t *itl, *gap, *ttft, *qdelay, *admit;
    hist_t *itl_out;          /* ITL of tokens whose wait spans link-down time */
    double committed, decode_tokens, decode_time, stall;
    double e2e_sum, e2e_n, requests_done;
    double accepted, verified_drafts, verdicts, verdict_tokens;
    double drafted, discarded;
    double verified_tokens, stale_tokens;
    double up_bytes, down_bytes;
    /* finished requests of SLO-bound groups: judged, meeting TTFT, TPOT,
     * both, and the output tokens of those meeting both */
    double slo_n, slo_ttft_ok, slo_tpot_ok, slo_ok, slo_ok_tokens;
    double edge_busy, edge_j;  /* edge drafting + prefill seconds, and joules */
    double edge_open, edge_open_j; /* the same of drafts still running at the
                                      end (battery metrics only) */
    /* devices with a thermal model: how many, their seconds below full
     * speed and their speed integrated over time (tally_thermal) */
    double th_n, th_throttled, th_speed;
    /* protocol.fallback: tenants with one, their seconds in fallback and
     * tokens decoded locally; tenants whose link varies, their seconds
     * stalled while it was down */
    double fb_n, fb_time, local_tokens;
    double obs_n, link_stall;
    /* sessions: turns whose prompt had a prefix from earlier turns, those
     * whose prefix was resident in the cloud's prefix cache, and the prefix
     * tokens the cloud prefilled again (the misses' prefixes) */
    double pfx_turns, pfx_hits, pfx_reprefill;
} tally_part_t;

/* One tenant, after warm-up (`run --per-tenant`, fairness). */
typedef struct tally_tenant {
    double tokens;            /* committed (first tokens included) */
    double decode_tokens;     /* committed after the first token */
    double decode_time;       /* first token -> last, clipped */
    double gap_sum;           /* the ITL sum of those tokens */
    double ttft_sum, ttft_n;
    double requests, slo_met;
    hist_t *itl;              /* NULL unless tenant histograms were asked */
} tally_tenant_t;

/* A tenant group's settings: what its protocol has (metrics it lacks are
 * NaN for the group) and its SLO (0 = no bound; none at all = no SLO). */
typedef struct tally_group_cfg {
    int has_drafts, has_verify;
    double slo_ttft, slo_tpot;
    double edge_power_w;      /* the edge device's power while busy; 0 = unknown */
    double edge_idle_power_w; /* ... while idle; 0 = not counted */
    double battery_wh;        /* its battery's capacity; 0 = unknown */
} tally_group_cfg_t;

/* A replica group's power and price (energy and cost metrics): per-GPU
 * power while busy and idle (0 = unknown / not counted), GPUs per replica,
 * price of one GPU-hour (0 = none), and its replicas (with one group, 0 =
 * every replica of the run). */
typedef struct tally_cloud_cfg {
    double gpu_power_w, gpu_idle_power_w;
    int gpus_per_replica;
    double gpu_hour_usd;
    int replicas;
} tally_cloud_cfg_t;

typedef struct tally {
    double warmup, end;
    int ngroups, ntenants;
    tally_part_t all;
    tally_part_t *group;      /* [ngroups] */
    tally_group_cfg_t *gcfg;  /* [ngroups]; kept by tally_reset */
    tally_cloud_cfg_t *ccfg;  /* [nccfg] per replica group; kept by tally_reset */
    int nccfg;
    int *group_of;            /* [ntenants] */
    int *gsize;               /* [ngroups]: tenants of each group */
    tally_tenant_t *ten;      /* [ntenants] */
    double *scratch;          /* [ntenants], for tenant percentiles */
    /* fleet-wide: the shared cloud */
    hist_t *batch;
    double busy;
    double *rbusy;            /* [nccfg]: busy time of each replica group */
    int kv_replicas;          /* replicas whose KV capacity is finite */
    double kv_area;           /* integral of reserved KV bytes / capacity */
    double roof_s;            /* roofline time of the busy time's work */
    int roof_known;           /* the iterations' roofline time is known */
    int kv_known;             /* KV capacity is finite */
    tally_totals_t raw;
    struct mser_series *series; /* borrowed, or NULL: committed tokens per
                                   time bin from 0 (sim/stat/mser.h); kept by
                                   tally_reset */
} tally_t;

/* Returns a new tally for [warmup, end] of ngroups groups of size[g]
 * tenants (in tenant order); tenant_hists: keep a per-tenant ITL histogram
 * (relative error TALLY_TENANT_REL_ERR). Every group starts drafting and
 * verifying with no SLO (tally_group_setup changes that). The caller frees
 * it with tally_free(). NULL on allocation failure or bad sizes. */
tally_t *tally_create(double warmup, double end, int ngroups, const int *size,
                      int tenant_hists);
void tally_free(tally_t *t);
/* Zeroes every accumulator (histograms kept allocated, group settings
 * kept) for a new replication. */
void tally_reset(tally_t *t);
/* 1 when some histogram dropped a value for lack of memory since the last
 * reset (hist_failed): the replication's metrics are then short of it and
 * the run must fail rather than report them. */
int tally_failed(tally_t *t);
void tally_group_setup(tally_t *t, int g, const tally_group_cfg_t *cfg);
/* The cloud's power and price, one entry per replica group (n >= 1, in
 * the cloud's group order); before it, both are unknown (energy and cost
 * NaN) with one group of one GPU per replica. Energy and cost are NaN when
 * some group's figure is unknown. 0, or -1 when out of memory (the old
 * settings are kept). */
int tally_cloud_setup(tally_t *t, const tally_cloud_cfg_t *cfg, int n);

/* The per-tenant ITL histograms' relative error: coarser than the fleet's
 * (HIST_REL_ERR) to keep them small (at most about 4 KiB per tenant, less
 * when its gaps span less than the whole range). */
#define TALLY_TENANT_REL_ERR 0.02

/* Length of [a, b] inside [warmup, end]. */
static inline double tally_clip(const tally_t *t, double a, double b)
{
    if (a < t->warmup) a = t->warmup;
    if (b > t->end) b = t->end;
    return b > a ? b - a : 0;
}

/* ---- events of tenant i at time now ------------------------------------ */

/* The parts tenant i's events count in: the fleet's, and its group's when
 * there are several groups (one group's part would only repeat the fleet's
 * every add: tally_finish reads the fleet's part for it). Returns how many.
 * The per-event calls below are inline: they run on every commit, draft,
 * verdict and message (out of line they cost 1.6% more instructions on
 * the default scenario, measured with cachegrind). */
static inline int tally_parts(tally_t *t, int i, tally_part_t **p)
{
    p[0] = &t->all;
    if (t->ngroups < 2) return 1;
    p[1] = &t->group[t->group_of[i]];
    return 2;
}

static inline void tally_part_commit(tally_part_t *p, double gap, int n)
{
    p->committed += n;
    p->decode_tokens += n;
    hist_add(p->itl, gap / n, n);
    hist_add(p->gap, gap, 1);
}

static inline void tally_up_bytes(tally_t *t, int i, double now, double bytes)
{
    if (now < t->warmup) return;
    tally_part_t *p[2];
    for (int k = tally_parts(t, i, p); k-- > 0;) p[k]->up_bytes += bytes;
}

static inline void tally_down_bytes(tally_t *t, int i, double now, double bytes)
{
    if (now < t->warmup) return;
    tally_part_t *p[2];
    for (int k = tally_parts(t, i, p); k-- > 0;) p[k]->down_bytes += bytes;
}

/* An interval of tenant i waiting (stall) / decoding, clipped. */
void tally_stall(tally_t *t, int i, double from, double to);
/* protocol.fallback: tenant i was in fallback over [from, to] (clipped). */
void tally_fallback(tally_t *t, int i, double from, double to);
/* n tokens tenant i decoded locally in fallback were committed at now. */
void tally_local(tally_t *t, int i, double now, int n);
/* At the end, once per tenant: whether its link varies (its link-down
 * time is observed) and whether it has a fallback policy. */
void tally_link_observed(tally_t *t, int i, int observed, int fallback);
/* Tenant i stalled `down` seconds of [from, to] while its link was down
 * (counted when to is past the warm-up: `down` is already clipped). */
void tally_link_stall(tally_t *t, int i, double down);
/* n tokens committed at now after a wait of gap that spans down time. */
void tally_outage_commit(tally_t *t, int i, double now, double gap, int n);
void tally_decode_time(tally_t *t, int i, double from, double to);
/* Tenant i's edge device computed (drafting or prefilling) over [from, to],
 * clipped: the busy time edge_j_per_tok charges at the group's power. */
void tally_edge_busy(tally_t *t, int i, double from, double to);
/* Tenant i's draft still running at the end covered [from, to] (clipped):
 * busy time for the battery metrics, not for edge_j_per_tok. */
void tally_edge_busy_open(tally_t *t, int i, double from, double to);
/* Tenant i's device, which has a thermal model, spent `throttled` seconds
 * of [warmup, end] below full speed, and ran at `speed_s` full-speed
 * seconds over it (the integral of its speed): once, at the end. */
void tally_thermal(tally_t *t, int i, double throttled, double speed_s);
/* n drafted tokens completed; of the drafts, `gone` thrown away. */
static inline void tally_drafted(tally_t *t, int i, double now, double n)
{
    if (now < t->warmup) return;
    tally_part_t *p[2];
    for (int k = tally_parts(t, i, p); k-- > 0;) p[k]->drafted += n;
}

void tally_discarded(tally_t *t, int i, double now, double gone);
/* n tokens committed together, `gap` after the previous commit. */
static inline void tally_commit(tally_t *t, int i, double now, double gap, int n)
{
    if (now < t->warmup) return;
    tally_part_t *p[2];
    for (int k = tally_parts(t, i, p); k-- > 0;) tally_part_commit(p[k], gap, n);
    tally_tenant_t *T = &t->ten[i];
    T->tokens += n;
    T->decode_tokens += n;
    T->gap_sum += gap;
    if (T->itl) hist_add(T->itl, gap / n, n);
}

void tally_first_token(tally_t *t, int i, double now, double ttft);
/* A request ended: started at t0, first token at t_first, `output` tokens. */
void tally_request_end(tally_t *t, int i, double now, double t0, double t_first,
                       int output);
/* A verdict reached the edge: n tokens committed for it, `gone` of its
 * drafts discarded. */
static inline void tally_verdict(tally_t *t, int i, double now, int n, int gone)
{
    if (now < t->warmup) return;
    tally_part_t *p[2];
    for (int k = tally_parts(t, i, p); k-- > 0;) {
        p[k]->discarded += gone;
        p[k]->verdicts++;
        p[k]->verdict_tokens += n;
    }
}

/* The cloud decided a block: a drafts of gamma accepted. */
static inline void tally_accepted(tally_t *t, int i, double now, int a, int gamma)
{
    if (now < t->warmup) return;
    tally_part_t *p[2];
    for (int k = tally_parts(t, i, p); k-- > 0;) {
        p[k]->accepted += a;
        p[k]->verified_drafts += gamma;
    }
}

/* A verify job of `tokens` computed; stale: its verdict is meaningless. */
static inline void tally_verified(tally_t *t, int i, double now, int tokens, int stale)
{
    t->raw.verified_tokens += tokens;
    if (stale) t->raw.stale_tokens += tokens;
    if (now < t->warmup) return;
    tally_part_t *p[2];
    for (int k = tally_parts(t, i, p); k-- > 0;) {
        p[k]->verified_tokens += tokens;
        if (stale) p[k]->stale_tokens += tokens;
    }
}

/* A job of tenant i waited d before its first iteration, counted when it
 * started at or after the warm-up. */
static inline void tally_queue_delay(tally_t *t, int i, double now, double d)
{
    if (now < t->warmup) return;
    tally_part_t *p[2];
    for (int k = tally_parts(t, i, p); k-- > 0;) hist_add(p[k]->qdelay, d, 1);
}

/* Tenant i's request got its KV reservation after waiting d. */
void tally_admitted(tally_t *t, int i, double now, double d);
/* A session turn of tenant i whose prompt carries `prefix` tokens of
 * earlier turns reached the cloud at now: hit when they were resident
 * (cloud.prefix_cache), else the cloud prefills them again. */
void tally_prefix(tally_t *t, int i, double now, int prefix, int hit);

/* ---- the shared cloud --------------------------------------------------- */
/* `util` (KV reserved / capacity) held over [from, to]. */
void tally_kv(tally_t *t, double util, double from, double to);
/* An iteration [start, end] whose pure roofline time is `roof` (s): the
 * part of it in the measured window counts, pro rata. */
void tally_roofline(tally_t *t, double start, double end, double roof);

/* One tenant's row for `run --per-tenant`. */
typedef struct tally_tenant_row {
    int group;
    double tokens, rate, itl_mean, itl_p99, ttft_mean, requests, slo_met_frac;
} tally_tenant_row_t;
void tally_tenant_row(const tally_t *t, int i, tally_tenant_row_t *row);

/* Fills one replication's metrics: the fleet's in *out and group g's in
 * groups[g] (groups may be NULL). replicas: for gpu_util (0 = no cloud:
 * gpu_util and gpu_s_per_ktok are 0). Metrics a group's protocol does not
 * have (acceptance in cloud-only, say) are NaN for it; the fleet's are over
 * the groups that have them. The shared cloud's metrics and the run's
 * (events, wall clock) are the fleet's in every group. */
void tally_finish(tally_t *t, int replicas, double events, double wall,
                  metrics_rep_t *out, metrics_rep_t *groups);

#endif
