/* thread — worker threads with the termination signals blocked (see
 * thread.h). */
#include "base/thread.h"

#include <signal.h>

/* SIGPIPE too: `specsim run --trace - --per-tenant F | head -1` ends the
 * process at a write to the closed pipe, and outfile removes F's temporary. */
const int thread_signals[THREAD_NSIGNALS] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};

int thread_create(pthread_t *th, void *(*fn)(void *), void *arg)
{
    sigset_t set, old;
    sigemptyset(&set);
    for (int i = 0; i < THREAD_NSIGNALS; i++) sigaddset(&set, thread_signals[i]);
    int e = pthread_sigmask(SIG_BLOCK, &set, &old);
    if (e) return e;
    e = pthread_create(th, NULL, fn, arg);
    /* Not checked: it fails only for a bad `how`, and old is the mask the
     * call above returned. Its result must not turn a thread that runs into
     * a failure the caller would not join. */
    (void)pthread_sigmask(SIG_SETMASK, &old, NULL);
    return e;
}
