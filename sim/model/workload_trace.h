/* workload_trace — a request trace replayed as arrivals
 * (`tenants.workload.arrival: trace`, docs/formats.md "Request trace CSV").
 *
 * A CSV file with a header line naming its columns, in any order (others
 * are ignored): the public Azure LLM inference trace
 * (TIMESTAMP, ContextTokens, GeneratedTokens; TIMESTAMP a date-time
 * `2023-11-16 18:15:46.6805900`, made relative to the first row) or plain
 * `time_s,prompt_tokens,output_tokens` (seconds as given). An optional
 * `tenant` column names the tenant: a fleet-wide 0-based index, or
 * GROUP:K (the K-th tenant, 0-based, of the group named GROUP); without it
 * requests go to the tenants round-robin in file order. Times must not
 * decrease; token counts are integers >= 0 (0 is served as 1 token, as
 * every drawn length is at least 1). Files are capped at
 * WORKLOAD_TRACE_MAX_BYTES.
 *
 * The trace is split per tenant at load time, so a tenant's arrivals are a
 * plain array walked in order.
 */
#ifndef SPECSIM_WORKLOAD_TRACE_H
#define SPECSIM_WORKLOAD_TRACE_H

#include "base/err.h"

#define WORKLOAD_TRACE_MAX_BYTES (256L * 1024 * 1024)
/* The longest prompt, and the longest output, of one request in tokens,
 * drawn (workload.c) or in a trace: 2^29, so that a prompt, its output and
 * a block of drafts (at most GAMMA_MAX + 1 more) sum within an int, which
 * is how contexts and KV sizes are added up. */
#define WORKLOAD_TRACE_TOKENS_MAX 536870912

/* One request of the trace. */
typedef struct workload_req {
    double t;            /* arrival, s (time_scale applied) */
    int prompt, output;  /* >= 1 */
} workload_req_t;

typedef struct workload_trace {
    workload_req_t *req; /* [n], grouped by tenant, file order within one */
    long *first;         /* [ntenants + 1]: tenant i's requests are
                            req[first[i] .. first[i+1]) */
    long n;
    int ntenants;
    long most_at_once;   /* the most rows sharing one arrival time: the
                            run-budget guard (sim/run/guard.h) lets that
                            many arrivals happen at one instant */
} workload_trace_t;

/* Tenants the trace may name: tenant[k] is the fleet index of the k-th
 * tenant that takes trace arrivals (round-robin goes over these, in
 * order); group names resolve GROUP:K. */
typedef struct workload_trace_fleet {
    int ntenants;             /* the whole fleet */
    const int *takes;         /* [ntenants]: 1 when the tenant replays */
    int ngroups;
    const char *const *group_name;
    const int *group_first;   /* [ngroups]: fleet index of a group's first */
    const int *group_count;
} workload_trace_fleet_t;

/* Reads path (shown as `shown` in messages) through the command's set of
 * files (sim/io/infile.h; NULL: directly) with times multiplied by scale.
 * Returns a trace the caller frees with workload_trace_free, or NULL with
 * err filled: ERR_INPUT "FILE:LINE: column: what" for a bad row,
 * ERR_RUNTIME when memory runs out. */
struct infiles;
workload_trace_t *workload_trace_create_in(struct infiles *files, const char *path,
                                         const char *shown, double scale,
                                         const workload_trace_fleet_t *fleet,
                                         err_t *err);
void workload_trace_free(workload_trace_t *tr);

#endif
