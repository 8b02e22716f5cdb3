/* trace — the per-event timeline of `--trace FILE` (one replication,
 * `--trace-rep`, default 0), written through a sink: the simulation reports
 * what happens (trace_event, trace_batch, trace_queue) and the sink chosen
 * for the file writes it in its format. Two sinks exist (docs/formats.md):
 *
 * CSV (sim/io/trace_csv.c): lines `time,tenant,event,block,tokens` after a
 * header line, in simulated time order. block is -1 where no block applies.
 * Events and their tokens:
 *   request_start (prompt), edge_prefill_done (prompt), kv_wait, kv_admit,
 *   prefill_start (chunk), prefill_done (prompt), first_token (1),
 *   draft_start (gamma; 1 for edge-only is not traced), block_sent (gamma),
 *   block_arrive (gamma), block_drop (gamma: stale on arrival),
 *   verify_start (gamma+1), verify_end (accepted a), decode_start (1),
 *   verdict_arrive (a), commit (tokens committed),
 *   rollback (drafts in flight discarded), stall_start, stall_end,
 *   request_end (committed).
 * Batches and queue lengths are not in the CSV.
 *
 * Perfetto (sim/io/trace_perfetto.c): Chrome trace-event JSON, streamed.
 *
 * A new format is one file sim/io/trace_NAME.c defining trace_NAME_ops and
 * X(NAME) in TRACE_SINKS in sim/io/trace.c. Writing is best effort: the first
 * write error is remembered and reported by trace_error().
 */
#ifndef SPECSIM_TRACE_H
#define SPECSIM_TRACE_H

#include "base/api.h"

#include <stdio.h>

#include "base/err.h"

typedef struct trace trace_t;

typedef struct trace_ops {
    const char *name;        /* "csv", "perfetto" */
    const char *suffix;      /* file names ending so pick it ("" = default) */
    /* Writes the head; state for ntenants tenants and nreplicas GPU
     * replicas goes in tr->impl (freed by fini). 0, or -1 with err. */
    int (*init)(trace_t *tr, int ntenants, int nreplicas, err_t *err);
    void (*event)(trace_t *tr, double t, int tenant, const char *ev,
                  long block, long tokens);
    /* An iteration of replica starts at t and runs for dur: jobs jobs,
     * tokens tokens in all (M). */
    void (*batch)(trace_t *tr, double t, int replica, double dur, int jobs,
                  long tokens);
    /* Replica's queue holds n jobs from t on. */
    void (*queue)(trace_t *tr, double t, int replica, int n);
    /* The replication ended at t: writes the tail. */
    void (*finish)(trace_t *tr, double t);
    void (*fini)(trace_t *tr);
} trace_ops_t;

struct trace {
    const trace_ops_t *ops;
    FILE *f;                 /* borrowed */
    int failed;
    double bytes;            /* written by trace_printf so far */
    void *impl;              /* the sink's state, owned */
};

/* The sink for a file name: the one whose suffix ends it, in any case
 * (t.json, T.JSON), else CSV. */
SPECSIM_API const trace_ops_t *trace_format_for(const char *path);

/* Starts a trace in the given format on f (writes its head). Returns 0, or
 * -1 with err (allocation); release with trace_fini. */
int trace_init(trace_t *tr, FILE *f, const trace_ops_t *ops, int ntenants,
               int nreplicas, err_t *err);
void trace_fini(trace_t *tr);

void trace_event(trace_t *tr, double t, int tenant, const char *event,
                 long block, long tokens);
void trace_batch(trace_t *tr, double t, int replica, double dur, int jobs,
                 long tokens);
void trace_queue(trace_t *tr, double t, int replica, int n);
void trace_finish(trace_t *tr, double t);
int trace_error(const trace_t *tr);

/* For the sinks: fprintf to the trace's file, remembering a failure and
 * counting the bytes (what sim/run/guard.h projects a trace's size from). */
void trace_printf(trace_t *tr, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
