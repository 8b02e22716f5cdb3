/* trace — the per-event timeline of `--trace FILE` (replication 0): CSV
 * lines `time,tenant,event,block,tokens` after a header line, in simulated
 * time order. block is -1 where no block applies. Events and their tokens:
 *   request_start (prompt), edge_prefill_done (prompt), kv_wait, kv_admit,
 *   prefill_start (chunk), prefill_done (prompt), first_token (1),
 *   draft_start (gamma; 1 for edge-only is not traced), block_sent (gamma),
 *   block_arrive (gamma), block_drop (gamma: stale on arrival),
 *   verify_start (gamma+1), verify_end (accepted a), decode_start (1),
 *   verdict_arrive (a), commit (tokens committed), rollback (drafts in
 *   flight discarded), stall_start, stall_end, request_end (committed).
 * Writing is best effort: the first write error is remembered and reported
 * by trace_error(). */
#ifndef SPECSIM_TRACE_H
#define SPECSIM_TRACE_H

#include <stdio.h>

typedef struct trace {
    FILE *f;       /* borrowed */
    int failed;
} trace_t;

/* Starts a trace on f (writes the header). */
void trace_init(trace_t *tr, FILE *f);
void trace_event(trace_t *tr, double t, int tenant, const char *event,
                 long block, long tokens);
int trace_error(const trace_t *tr);

#endif
