#include "realdraft.h"

#include <stdlib.h>

#include "realverify.h"
#include "worker.h"

/* A draft step is one job of one token (realdraft.h). */
#define REALDRAFT_TOKENS 1
#define REALDRAFT_JOBS 1

struct realdraft {
    realverify_t *v;
    worker_t w;
    /* Guarded by w's lock. The job handed over (ctx, n, gen), and the last
     * finished one (done); failed: a step's error, in err. */
    int ctx, n;
    uint64_t gen;
    int done, done_n, failed;
    uint64_t done_gen;
    double done_dt;
    err_t err;
};

/* Runs the job taken under the lock (unlocked meanwhile); returns its time,
 * or -1 when a newer job superseded it, or -2 on failure (in d->err). */
static double run_job(realdraft_t *d, int ctx, int n)
{
    double t = 0;
    for (int k = 0; k < n; k++) {
        worker_lock(&d->w);
        int stop = worker_pending(&d->w);
        worker_unlock(&d->w);
        if (stop) return -1;
        service_job_t job = {.tokens = 1, .context = ctx + k};
        err_t e = {0, {0}};
        double dt = realverify_run(d->v, &job, 1, &e);
        if (dt < 0) {
            worker_lock(&d->w);
            d->err = e;
            worker_unlock(&d->w);
            return -2;
        }
        t += dt;
    }
    return t;
}

/* worker_fn: the posted draft, its result stored for realdraft_take. */
static int draft_job(void *arg)
{
    realdraft_t *d = arg;
    int ctx = d->ctx, n = d->n;
    uint64_t gen = d->gen;
    worker_unlock(&d->w);
    double t = run_job(d, ctx, n);
    worker_lock(&d->w);
    if (t == -1) return 0;   /* superseded: the next job is waiting */
    d->done = 1;
    d->failed = t < 0;
    d->done_gen = gen;
    d->done_n = n;
    d->done_dt = t;
    return 1;
}

void realdraft_free(realdraft_t *d)
{
    if (!d) return;
    worker_stop(&d->w);
    realverify_free(d->v);
    free(d);
}

realverify_size_t realdraft_bytes(const llm_card_t *card, int quant, int max_context)
{
    return realverify_bytes(card, quant, REALDRAFT_TOKENS, REALDRAFT_JOBS, max_context);
}

realdraft_t *realdraft_create(const llm_card_t *card, int quant, int max_context,
                              err_t *err)
{
    realdraft_t *d = calloc(1, sizeof *d);
    if (!d) {
        err_set(err, ERR_RUNTIME, "testbed: real drafting: out of memory");
        return NULL;
    }
    d->v = realverify_create(card, quant, REALDRAFT_TOKENS, REALDRAFT_JOBS, max_context, 1, err);
    if (!d->v || worker_start(&d->w, draft_job, d, "real drafting", err) != 0) {
        realdraft_free(d);
        return NULL;
    }
    return d;
}

int realdraft_fd(const realdraft_t *d)
{
    return worker_fd(&d->w);
}

void realdraft_start(realdraft_t *d, int context, int n, uint64_t gen)
{
    worker_lock(&d->w);
    d->ctx = context;
    d->n = n;
    d->gen = gen;
    worker_post(&d->w);
    worker_unlock(&d->w);
}

int realdraft_take(realdraft_t *d, uint64_t *gen, int *n, double *dt, err_t *err)
{
    worker_drain(&d->w);
    worker_lock(&d->w);
    int got = d->done, failed = d->failed;
    *gen = d->done_gen;
    *n = d->done_n;
    *dt = d->done_dt;
    d->done = 0;
    if (failed) *err = d->err;
    worker_unlock(&d->w);
    return failed ? -1 : got;
}
