/* thread — creating worker threads that leave the process's termination
 * signals to the thread that handles them.
 *
 * A signal sent to the process (Ctrl-C's SIGINT, kill's SIGTERM, a hang-up,
 * a write to a closed pipe) is delivered to any one thread that does not
 * block it. outfile (sim/io/outfile.h) catches these signals to remove its
 * temporaries, and blocks them in the thread that calls it only for the
 * few calls that create a temporary and list it (or rename it and forget
 * it) as one step. A worker thread with them unblocked could take the
 * signal inside that step, from the side, and the handler would miss the
 * temporary; the testbed's main loop would likewise miss the EINTR that
 * ends it. So every thread the code creates (sweep points, replications,
 * the testbed's helpers, the kernels' pools) starts with them blocked,
 * through thread_create, and they reach the thread that writes the outputs.
 *
 * In libspecsim.a's lowest layer, with no dependency, so that the kernels
 * (libkernels.a, cross-built with only sim/base/) can use it too.
 */
#ifndef SPECSIM_THREAD_H
#define SPECSIM_THREAD_H

#include <pthread.h>

/* The signals above: SIGINT, SIGTERM, SIGHUP, SIGPIPE. outfile installs its
 * handler on exactly these. */
enum { THREAD_NSIGNALS = 4 };
extern const int thread_signals[THREAD_NSIGNALS];

/* pthread_create(th, NULL, fn, arg) with thread_signals blocked in the new
 * thread (it inherits the creator's mask, so the creator blocks them for
 * the call and restores its own mask after). Returns 0 or an error number,
 * as pthread_create does. */
int thread_create(pthread_t *th, void *(*fn)(void *), void *arg);

#endif
