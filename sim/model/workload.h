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
#include "config/scenario.h"
#include "model/workload_trace.h"

typedef struct workload {
    const workload_cfg_t *cfg;   /* borrowed */
    gsl_rng *think, *prompt, *output;
    double *fifo;                /* waiting arrival times (ring) */
    int head, count, cap;
    const workload_req_t *req;   /* trace: this tenant's requests (borrowed) */
    long nreq, next_arrival, next_served;
} workload_t;

/* Initialises the tenant's workload; returns 0 or -1 with err (allocation).
 * Free with workload_fini(). */
int workload_init(workload_t *w, const workload_cfg_t *cfg, uint64_t seed,
                  int rep, int tenant, err_t *err);
void workload_fini(workload_t *w);

/* When the next request arrives, for a tenant at time now: now + the gap
 * (closed: think time after the previous request; poisson: an exponential
 * inter-arrival gap, INFINITY for a rate of 0); the next trace row's time
 * for a trace (INFINITY after the last). */
double workload_next(workload_t *w, double now);
/* Prompt and output lengths of the next request served. */
void workload_lengths(workload_t *w, int *prompt, int *output);

/* FIFO of waiting poisson arrivals. push returns -1 on allocation failure;
 * pop returns 0 when empty. */
int workload_push(workload_t *w, double t);
int workload_pop(workload_t *w, double *t);

#endif
