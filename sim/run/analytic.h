/* analytic — closed-form predictions for a scenario (docs/metrics.md, `specsim
 * analytic`): single tenant, no queueing, mean service times; and, where it
 * is exact, the mean value analysis of several sync tenants sharing one
 * FCFS exponential server (analytic_mva).
 */
#ifndef SPECSIM_ANALYTIC_H
#define SPECSIM_ANALYTIC_H

#include "base/api.h"

#include <stdio.h>

#include "base/err.h"
#include "config/scenario.h"
#include "model/service.h"

/* The most figures the protocols' closed forms give together (each its
 * own figures and its throughput); more is refused, never cut. */
#define ANALYTIC_FIGS_MAX 32

typedef struct analytic_fig {
    char key[48];
    double v;
} analytic_fig_t;

typedef struct analytic {
    double alpha_mean;               /* mean acceptance probability of a draft */
    double accepted_len_expected;    /* E = (1 − α^(γ+1))/(1 − α) (sync) */
    double context_tokens;           /* context of the model-path times (mean prompt) */
    double draft_time_s;             /* per token (mean) */
    double verify_time_s;            /* one block of γ+1 tokens, batch of 1 */
    /* Every registered protocol's closed form (proto_ops_t.closed_form),
     * in registry order: its figures, then throughput_NAME_tok_s. Read one
     * with analytic_value. */
    int nfigs;
    analytic_fig_t figs[ANALYTIC_FIGS_MAX];
    /* Where the times came from and, when a table is used, the datasheet
     * value beside it. */
    char edge_source[32], cloud_source[32];
    double draft_time_datasheet_s, verify_time_datasheet_s;
    service_terms_t verify_terms;    /* roofline terms of one verify block */
    int tensor_parallel;             /* GPUs per replica the verify times are for */
    service_terms_t draft_terms;     /* roofline terms of one draft token */
    /* Several sync tenants on one FCFS server (analytic_mva): mva_tenants
     * = 0 when not computed; mva_why says why when a reader would expect
     * it (sync, N > 1) but it would not be exact ("" otherwise). */
    int mva_tenants;
    double mva_delay_s;              /* Z: a tenant's time away from the server per block */
    double mva_throughput_tok_s;     /* all tenants: X(N)·E */
    double mva_itl_s;                /* N / (X(N)·E) */
    double mva_queue_delay_s;        /* R(N) − S: wait before a verify starts */
    double mva_gpu_util;             /* X(N)·S */
    char mva_why[200];
} analytic_t;

/* Fills *out for s (first tenant group's edge and network). -1 with err on
 * failure (e.g. a calibration table that cannot be read).
 *
 * Model path (no fixed draft_time / verify_time): times at a context of the
 * mean prompt length. Network: rtt plus the mean jitter of each direction plus
 * serialisation of the messages at the link rates.
 * Acceptance: the model's own block law (accept_cfg_law), exact for every
 * model: a mixture (beta) averages the per-part figures with its weights; a
 * law with a hidden state (markov) is a Markov renewal over block (sync) or
 * rollback-cycle (async) start states. A trace's law is its empirical law,
 * so for async its blocks count as independent draws (the cyclic replay
 * gives the same rate when the pipeline never stalls).
 * Each protocol's figures come from its own closed form (sim/entity/proto_*.c):
 * async, for one, is renewal-reward over rollback cycles; the cycle time comes
 * from the deterministic pipeline at the mean times (window, cloud and link
 * queueing included), which reduces to γd/q + rtt + v when nothing stalls
 * (see sim/model/specrate.c). With random draft/verify times or jitter the
 * means are used: exact for sync, an approximation for async. */
SPECSIM_API int analytic_compute(const scenario_t *s, analytic_t *out, err_t *err);
/* Exact mean value analysis of the closed network of n customers that
 * alternate a delay station (infinite servers, mean z: any distribution) and
 * one FCFS server with exponential service of mean s. Arrival theorem:
 * R(k) = s·(1 + Q(k−1)), X(k) = k / (z + R(k)), Q(k) = X(k)·R(k). Fills
 * *x = X(n) (visits to the server per second) and *r = R(n) (time there per
 * visit, waiting included). */
void analytic_mva(int n, double z, double s, double *x, double *r);

/* Prints name: value lines (json = 0) or one JSON object (json = 1). */
SPECSIM_API int analytic_print(FILE *f, const analytic_t *a, int json);
/* The number analytic_print prints under key (e.g. "throughput_sync_tok_s"),
 * or NAN when it prints none. */
SPECSIM_API double analytic_value(const analytic_t *a, const char *key);

#endif
