/* worker — one worker thread with an eventfd (see worker.h). */
#include "worker.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "base/thread.h"

static void *worker_main(void *arg)
{
    worker_t *w = arg;
    pthread_mutex_lock(&w->mu);
    for (;;) {
        while (!w->have && !w->quit) pthread_cond_wait(&w->cv, &w->mu);
        if (w->quit) break;
        /* Cleared before the work runs, so that a post meanwhile shows. */
        w->have = 0;
        if (w->fn(w->ctx)) {
            uint64_t one = 1;
            /* Cannot fail short of a counter overflow: the loop drains it
             * after every wake-up. */
            (void)!write(w->efd, &one, sizeof one);
        }
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

int worker_start(worker_t *w, worker_fn fn, void *ctx, const char *who, err_t *err)
{
    memset(w, 0, sizeof *w);
    w->fn = fn;
    w->ctx = ctx;
    w->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (w->efd < 0)
        return err_set(err, ERR_RUNTIME, "testbed: %s: eventfd: %s", who, strerror(errno));
    if (pthread_mutex_init(&w->mu, NULL)) {
        close(w->efd);
        return err_set(err, ERR_RUNTIME, "testbed: %s: thread set-up failed", who);
    }
    if (pthread_cond_init(&w->cv, NULL)) {
        pthread_mutex_destroy(&w->mu);
        close(w->efd);
        return err_set(err, ERR_RUNTIME, "testbed: %s: thread set-up failed", who);
    }
    /* thread_create: SIGINT and SIGTERM must reach the event loop's thread
     * (base/thread.h), whose blocking calls they interrupt. */
    if (thread_create(&w->th, worker_main, w)) {
        pthread_cond_destroy(&w->cv);
        pthread_mutex_destroy(&w->mu);
        close(w->efd);
        return err_set(err, ERR_RUNTIME, "testbed: %s: cannot start a thread", who);
    }
    w->started = 1;
    return 0;
}

void worker_stop(worker_t *w)
{
    if (!w->started) return;
    pthread_mutex_lock(&w->mu);
    w->quit = 1;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->th, NULL);
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->cv);
    close(w->efd);
    w->started = 0;
}

void worker_lock(worker_t *w) { pthread_mutex_lock(&w->mu); }

void worker_unlock(worker_t *w) { pthread_mutex_unlock(&w->mu); }

void worker_post(worker_t *w)
{
    w->have = 1;
    pthread_cond_signal(&w->cv);
}

int worker_pending(const worker_t *w) { return w->have || w->quit; }

int worker_fd(const worker_t *w) { return w->efd; }

void worker_drain(worker_t *w)
{
    uint64_t x;
    /* A spurious wake-up finds it empty (EAGAIN): nothing to drain. */
    (void)!read(w->efd, &x, sizeof x);
}
