/* worker — a thread that does one piece of work at a time for the
 * testbed's event loop (testbed/rt.h), so that the loop goes on with its
 * sockets and timers while the work computes: real verification
 * (testbed/server.c) and real drafting (testbed/realdraft.c).
 *
 * The loop hands work over by filling its own fields under the worker's
 * lock and calling worker_post; the thread runs the work function, and
 * when that says the work is done the worker's eventfd becomes readable
 * (watched with rt_watch; worker_drain after each wake-up). Work posted
 * while the previous one runs replaces it: the function can see that
 * (worker_pending) and drop what it was doing. A function that reads its
 * inputs after unlocking must copy them first, or its owner must not post
 * again before the done signal: the verifier (testbed/server.c) relies on
 * the latter, as the cloud starts no iteration before the last one ended;
 * real drafting copies its job (context, tokens, generation).
 */
#ifndef TESTBED_WORKER_H
#define TESTBED_WORKER_H

#include <pthread.h>

#include "base/err.h"

/* Runs posted work; called on the worker's thread with its lock held and
 * must return with it held, releasing it (worker_unlock / worker_lock)
 * while it computes. Returns 1 to signal the eventfd (the work is done, its
 * results stored under the lock), 0 when it dropped the work (replaced by
 * newer work, which runs next). */
typedef int (*worker_fn)(void *ctx);

typedef struct worker {
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int efd;
    int started;        /* worker_start succeeded; worker_stop undoes it */
    int have, quit;     /* guarded by mu: work posted / leave */
    worker_fn fn;
    void *ctx;
} worker_t;

/* Starts the thread (and its eventfd) in w, to run fn(ctx) for each post.
 * 0, or -1 with err ("testbed: WHO: ...") and nothing held. Undo with
 * worker_stop, which does nothing on a w that failed to start or is all
 * zeros (so an owner allocated with calloc can always call it). */
int worker_start(worker_t *w, worker_fn fn, void *ctx, const char *who, err_t *err);
/* Stops and joins the thread after the work in progress, and releases all
 * that worker_start took. */
void worker_stop(worker_t *w);

void worker_lock(worker_t *w);
void worker_unlock(worker_t *w);
/* With the lock held, after filling in the work: wakes the thread. */
void worker_post(worker_t *w);
/* With the lock held: newer work was posted, or the worker is stopping
 * (the work in progress may stop early). */
int worker_pending(const worker_t *w);

/* The eventfd that becomes readable when work is done. */
int worker_fd(const worker_t *w);
/* Quietens the eventfd after it was readable, before the results are read. */
void worker_drain(worker_t *w);

#endif
