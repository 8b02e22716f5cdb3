#include "realdraft.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>


/* A draft step is one job of one token (realdraft.h). */
#define REALDRAFT_TOKENS 1
#define REALDRAFT_JOBS 1

struct realdraft {
    realverify_t *v;
    pthread_t th;
    int started, efd;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    /* Guarded by mu. The job handed over (have), and the last finished
     * one (done); failed: a step's error, in err. */
    int have, quit, ctx, n;
    uint64_t gen;
    int done, done_n, failed;
    uint64_t done_gen;
    double done_dt;
    err_t err;
};

/* Runs the job taken under mu (unlocked meanwhile); returns its time, or
 * -1 when a newer job superseded it, or -2 on failure (in d->err). */
static double run_job(realdraft_t *d, int ctx, int n)
{
    double t = 0;
    for (int k = 0; k < n; k++) {
        pthread_mutex_lock(&d->mu);
        int stop = d->have || d->quit;
        pthread_mutex_unlock(&d->mu);
        if (stop) return -1;
        service_job_t job = {.tokens = 1, .context = ctx + k};
        err_t e = {0, {0}};
        double dt = realverify_run(d->v, &job, 1, &e);
        if (dt < 0) {
            pthread_mutex_lock(&d->mu);
            d->err = e;
            pthread_mutex_unlock(&d->mu);
            return -2;
        }
        t += dt;
    }
    return t;
}

static void *worker_main(void *arg)
{
    realdraft_t *d = arg;
    pthread_mutex_lock(&d->mu);
    for (;;) {
        while (!d->have && !d->quit) pthread_cond_wait(&d->cv, &d->mu);
        if (d->quit) break;
        int ctx = d->ctx, n = d->n;
        uint64_t gen = d->gen;
        d->have = 0;
        pthread_mutex_unlock(&d->mu);
        double t = run_job(d, ctx, n);
        pthread_mutex_lock(&d->mu);
        if (t == -1) continue;   /* superseded: the next job is waiting */
        d->done = 1;
        d->failed = t < 0;
        d->done_gen = gen;
        d->done_n = n;
        d->done_dt = t;
        uint64_t one = 1;
        (void)!write(d->efd, &one, sizeof one);
    }
    pthread_mutex_unlock(&d->mu);
    return NULL;
}

void realdraft_free(realdraft_t *d)
{
    if (!d) return;
    if (d->started) {
        pthread_mutex_lock(&d->mu);
        d->quit = 1;
        pthread_cond_signal(&d->cv);
        pthread_mutex_unlock(&d->mu);
        pthread_join(d->th, NULL);
        pthread_mutex_destroy(&d->mu);
        pthread_cond_destroy(&d->cv);
    }
    if (d->efd >= 0) close(d->efd);
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
    d->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (d->efd < 0) {
        err_set(err, ERR_RUNTIME, "testbed: real drafting: eventfd: %s", strerror(errno));
        realdraft_free(d);
        return NULL;
    }
    d->v = realverify_create(card, quant, REALDRAFT_TOKENS, REALDRAFT_JOBS, max_context, 1, err);
    if (!d->v) {
        realdraft_free(d);
        return NULL;
    }
    if (pthread_mutex_init(&d->mu, NULL)) {
        err_set(err, ERR_RUNTIME, "testbed: real drafting: thread set-up failed");
        realdraft_free(d);
        return NULL;
    }
    if (pthread_cond_init(&d->cv, NULL)) {
        pthread_mutex_destroy(&d->mu);
        err_set(err, ERR_RUNTIME, "testbed: real drafting: thread set-up failed");
        realdraft_free(d);
        return NULL;
    }
    if (pthread_create(&d->th, NULL, worker_main, d)) {
        pthread_mutex_destroy(&d->mu);
        pthread_cond_destroy(&d->cv);
        err_set(err, ERR_RUNTIME, "testbed: real drafting: cannot start a thread");
        realdraft_free(d);
        return NULL;
    }
    d->started = 1;
    return d;
}

int realdraft_fd(const realdraft_t *d)
{
    return d->efd;
}

void realdraft_start(realdraft_t *d, int context, int n, uint64_t gen)
{
    pthread_mutex_lock(&d->mu);
    d->ctx = context;
    d->n = n;
    d->gen = gen;
    d->have = 1;
    pthread_cond_signal(&d->cv);
    pthread_mutex_unlock(&d->mu);
}

int realdraft_take(realdraft_t *d, uint64_t *gen, int *n, double *dt, err_t *err)
{
    uint64_t x;
    (void)!read(d->efd, &x, sizeof x);
    pthread_mutex_lock(&d->mu);
    int got = d->done, failed = d->failed;
    *gen = d->done_gen;
    *n = d->done_n;
    *dt = d->done_dt;
    d->done = 0;
    if (failed) *err = d->err;
    pthread_mutex_unlock(&d->mu);
    return failed ? -1 : got;
}
