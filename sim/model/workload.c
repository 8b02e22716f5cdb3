#include "model/workload.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_randist.h>

/* A stream only for random distributions: constants need no draws, and each
 * mt19937 state costs 5 KB per tenant. */
static int stream_for(const dist_t *d, uint64_t seed, int rep, int tenant,
                      int purpose, gsl_rng **out)
{
    *out = NULL;
    if (d->kind == DIST_CONST) return 0;
    *out = rng_stream(seed, (uint64_t)rep, (uint64_t)tenant, (uint64_t)purpose);
    return *out ? 0 : -1;
}

double workload_time_scale(const workload_cfg_t *w)
{
    return w->time_scale > 0 ? w->time_scale : 1;
}

int workload_init(workload_t *w, const workload_cfg_t *cfg,
                  const workload_trace_t *trace, uint64_t seed, int rep, int tenant,
                  err_t *err)
{
    w->cfg = cfg;
    w->think = w->prompt = w->output = NULL;
    w->fifo = NULL;
    w->head = w->count = w->cap = 0;
    w->req = NULL;
    w->nreq = w->next_arrival = w->next_served = 0;
    w->session = NULL;
    w->turns_left = w->context = w->prefix = 0;
    if (cfg->arrival == ARRIVAL_TRACE) {
        const workload_trace_t *tr = trace;
        if (!tr || tenant >= tr->ntenants)
            return err_set(err, ERR_RUNTIME, "workload: no request trace loaded");
        w->req = tr->req + tr->first[tenant];
        w->nreq = tr->first[tenant + 1] - tr->first[tenant];
        return 0;
    }
    int rc = 0;
    if (cfg->arrival == ARRIVAL_POISSON) {
        if (cfg->rate > 0) {
            w->think = rng_stream(seed, (uint64_t)rep, (uint64_t)tenant, RNG_THINK);
            if (!w->think) rc = -1;
        }
    } else {
        rc |= stream_for(&cfg->think, seed, rep, tenant, RNG_THINK, &w->think);
    }
    rc |= stream_for(&cfg->prompt_tokens, seed, rep, tenant, RNG_PROMPT, &w->prompt);
    rc |= stream_for(&cfg->output_tokens, seed, rep, tenant, RNG_OUTPUT, &w->output);
    const session_cfg_t *ss = &cfg->session;
    if (ss->has_turns && (ss->turns.kind != DIST_CONST ||
                          (ss->has_gap && ss->gap.kind != DIST_CONST))) {
        w->session = rng_stream(seed, (uint64_t)rep, (uint64_t)tenant, RNG_SESSION);
        if (!w->session) rc = -1;
    }
    if (rc) {
        workload_fini(w);
        return err_set(err, ERR_RUNTIME, "workload: out of memory");
    }
    return 0;
}

void workload_fini(workload_t *w)
{
    if (w->think) gsl_rng_free(w->think);
    if (w->prompt) gsl_rng_free(w->prompt);
    if (w->output) gsl_rng_free(w->output);
    if (w->session) gsl_rng_free(w->session);
    free(w->fifo);
    w->session = NULL;
    w->think = w->prompt = w->output = NULL;
    w->fifo = NULL;
}

/* Time from now until the next request arrives (workload_next). */
static double workload_gap(workload_t *w)
{
    if (w->cfg->arrival == ARRIVAL_POISSON) {
        if (!(w->cfg->rate > 0)) return INFINITY;
        return gsl_ran_exponential(w->think, 1.0 / w->cfg->rate);
    }
    return dist_sample(&w->cfg->think, w->think);
}

/* A session's last turn has ended (and one has begun: the first arrival
 * comes a think time after the start, as without sessions). */
static int session_over(const workload_t *w)
{
    return w->cfg->session.has_turns && w->turns_left == 0 && w->context > 0;
}

double workload_next(workload_t *w, double now)
{
    if (session_over(w)) {
        const session_cfg_t *ss = &w->cfg->session;
        double gap = ss->has_gap ? dist_sample(&ss->gap, w->session) : 0;
        return now + (gap > 0 ? gap : 0);
    }
    if (w->cfg->arrival != ARRIVAL_TRACE) return now + workload_gap(w);
    return w->next_arrival < w->nreq ? w->req[w->next_arrival++].t : INFINITY;
}

static int tokens(const dist_t *d, gsl_rng *r)
{
    double x = nearbyint(dist_sample(d, r));
    /* A draw beyond the cap (a long-tailed distribution's tail; constants
     * and parameters beyond it are refused by the loader) is clamped to it,
     * so that sums of lengths stay within an int. */
    if (!(x >= 1)) return 1;
    if (x > WORKLOAD_TRACE_TOKENS_MAX) return WORKLOAD_TRACE_TOKENS_MAX;
    return (int)x;
}

/* The next turn of the tenant's session, whose new part is *prompt tokens:
 * a new session first when the last one is over (its turns drawn, its
 * context empty), or when this turn would take the context past the
 * token cap (so that sums stay within an int). *prompt becomes the whole
 * prompt. */
static void session_turn(workload_t *w, int *prompt, int output)
{
    if (w->turns_left <= 0 ||
        (long)w->context + *prompt + output > WORKLOAD_TRACE_TOKENS_MAX) {
        w->turns_left = tokens(&w->cfg->session.turns, w->session);
        w->context = 0;
    }
    w->turns_left--;
    w->prefix = w->context;
    *prompt += w->context;
    w->context = *prompt + output;
}

void workload_lengths(workload_t *w, int *prompt, int *output)
{
    if (w->cfg->arrival == ARRIVAL_TRACE) {
        /* Requests are served in arrival order, so the k-th served is the
         * k-th row; none is served before it arrived. */
        const workload_req_t *q = &w->req[w->next_served++];
        *prompt = q->prompt;
        *output = q->output;
        return;
    }
    *prompt = tokens(&w->cfg->prompt_tokens, w->prompt);
    *output = tokens(&w->cfg->output_tokens, w->output);
    if (w->cfg->session.has_turns) session_turn(w, prompt, *output);
}

int workload_push(workload_t *w, double t)
{
    if (w->count == w->cap) {
        if (w->cap > INT_MAX / 2) return -1;
        int ncap = w->cap ? 2 * w->cap : 4;
        double *f = malloc((size_t)ncap * sizeof *f);
        if (!f) return -1;
        for (int i = 0; i < w->count; i++) f[i] = w->fifo[(w->head + i) % w->cap];
        free(w->fifo);
        w->fifo = f;
        w->head = 0;
        w->cap = ncap;
    }
    w->fifo[(w->head + w->count) % w->cap] = t;
    w->count++;
    return 0;
}

int workload_pop(workload_t *w, double *t)
{
    if (w->count == 0) return 0;
    *t = w->fifo[w->head];
    w->head = (w->head + 1) % w->cap;
    w->count--;
    return 1;
}
