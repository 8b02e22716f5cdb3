/* workload — one tenant's requests (docs/design.md, "Workload").
 *
 * Closed loop: a request starts a think-time draw after the previous one
 * ended (the first after one draw from time 0). Poisson: arrivals of a
 * per-tenant Poisson process; the tenant serves them one at a time, FIFO, so
 * arrivals while it is busy wait here with their arrival times (TTFT and e2e
 * count from arrival). Prompt and output lengths are drawn per request,
 * rounded, and at least 1. Each quantity has its own stream
 * (RNG_THINK, RNG_PROMPT, RNG_OUTPUT), created only when its distribution is
 * random. Trace: the tenant's requests of the request trace
 * (sim/model/workload_trace.h), arriving at their times and queueing like
 * Poisson arrivals; lengths come from the trace, so no stream is made.
 */
#ifndef SPECSIM_WORKLOAD_H
#define SPECSIM_WORKLOAD_H

#include <gsl/gsl_rng.h>

#include "base/err.h"
#include "engine/rng.h"
#include "model/workload_trace.h"

/* Must equal SCEN_PATH_MAX (sim/desc/scenario.h checks it). */
#define WORKLOAD_PATH_MAX 512

enum arrival_kind { ARRIVAL_CLOSED = 0, ARRIVAL_POISSON, ARRIVAL_TRACE };

/* A tenant group's workload as the scenario describes it (tenants.workload). */
/* tenants.workload.session (docs/design.md "Sessions"): a tenant's
 * requests come in sessions of `turns` turns; turn k's prompt is the
 * previous turns' prompts and outputs plus prompt_tokens new ones. Closed
 * loop only: between turns the think time, between sessions `gap` (the
 * tenant is away). has_turns 0: no sessions (every request stands alone). */
typedef struct session_cfg {
    dist_t turns;            /* turns per session, rounded, >= 1 */
    dist_t gap;              /* s between a session's end and the next */
    int has_turns, has_gap;  /* given */
} session_cfg_t;

typedef struct workload_cfg {
    enum arrival_kind arrival;
    dist_t think;            /* closed: think time between requests (s) */
    double rate;             /* poisson: requests per second per tenant */
    dist_t prompt_tokens;    /* rounded to >= 1 */
    dist_t output_tokens;    /* rounded to >= 1 */
    char trace[WORKLOAD_PATH_MAX];/* trace: the request trace file ("" = none) */
    double time_scale;       /* trace: times are multiplied by it; 0 = not
                                given (1) */
    session_cfg_t session;   /* closed loop only (scenario_check) */
} workload_cfg_t;

/* w's time_scale as applied: 0 stands for the default, 1 (kept 0 so that
 * scenarios without a trace are written back without the key), so an
 * explicit 1 is the default. */
double workload_time_scale(const workload_cfg_t *w);

typedef struct workload {
    const workload_cfg_t *cfg;   /* borrowed */
    gsl_rng *think, *prompt, *output;
    double *fifo;                /* waiting arrival times (ring) */
    int head, count, cap;
    const workload_req_t *req;   /* trace: this tenant's requests (borrowed) */
    long nreq, next_arrival, next_served;
    /* Sessions (cfg->session.has_turns): one stream (RNG_SESSION) for the
     * turns and gap draws, NULL when both are constant; the turns left in
     * the current session (0: between sessions), the session's context so
     * far (prompts and outputs of its turns) and the current turn's prefix
     * (the context it started with). A few integers per tenant. */
    gsl_rng *session;
    int turns_left, context, prefix;
} workload_t;

/* Initialises the tenant's workload; trace: the request trace (borrowed)
 * when cfg->arrival is ARRIVAL_TRACE, else unused (NULL). Returns 0 or -1
 * with err (allocation). Free with workload_fini(). */
int workload_init(workload_t *w, const workload_cfg_t *cfg,
                  const workload_trace_t *trace, uint64_t seed, int rep, int tenant,
                  err_t *err);
void workload_fini(workload_t *w);

/* When the next request arrives, for a tenant at time now: now + the gap
 * (closed: think time after the previous request; poisson: an exponential
 * inter-arrival gap, INFINITY for a rate of 0); the next trace row's time
 * for a trace (INFINITY after the last). With sessions, after a session's
 * last turn the gap draw replaces the think time. */
double workload_next(workload_t *w, double now);
/* Prompt and output lengths of the next request served. With sessions,
 * *prompt is the whole prompt (the session's context + the new tokens) and
 * workload_prefix() the context part; a session that would grow past
 * WORKLOAD_TRACE_TOKENS_MAX ends early and a new one starts. */
void workload_lengths(workload_t *w, int *prompt, int *output);
/* The tokens of the last request's prompt that earlier turns of its session
 * produced (0: the session's first turn, or no sessions). */
static inline int workload_prefix(const workload_t *w) { return w->prefix; }

/* FIFO of waiting poisson arrivals. push returns -1 on allocation failure;
 * pop returns 0 when empty. */
int workload_push(workload_t *w, double t);
int workload_pop(workload_t *w, double *t);

#endif
