/* xio — whole reads and writes on a pipe between the testbed's processes
 * (the verifier's port and tally to the edge fleet). */
#ifndef TESTBED_XIO_H
#define TESTBED_XIO_H

#include <signal.h>
#include <stddef.h>
#include <sys/types.h>

#include "base/err.h"

/* What a read that meets the end of the pipe early leaves in err->msg. */
#define XIO_EOF_MSG "testbed: the verifier stopped early"
/* ... and the fleet, when a connection to the verifier ends (closed or
 * reset) during the run (testbed/fleet.c, testbed/conn.c with the fleet's
 * watch, whose who is "the verifier"). Both are completed by the parent
 * with how the verifier ended (xio_describe_exit). */
#define XIO_HUNG_UP_MSG "testbed: the verifier hung up"

/* How long a wait on the verifier lasts while it sends nothing and uses
 * no CPU: a stopped verifier (SIGSTOP, a debugger) or a hung one would
 * otherwise be waited on forever. A verifier at work (loading a model,
 * checking texts) uses CPU, so a long wait on it is not cut short. */
#define XIO_STALL_S 10

/* A process waited on: what it is, what is awaited, and how long it may
 * stall. xio_watch_start before the wait, xio_watch_check whenever the
 * wait has seen nothing for a while. */
typedef struct xio_watch {
    pid_t pid;              /* <= 0: none known: stalled = silent */
    const char *who;        /* "the verifier" */
    const char *what;       /* "its tally", "it to take a frame" */
    double stall_s;         /* given up after this long stalled */
    double since;           /* (internal) the last sign of life */
    unsigned long long cpu; /* (internal) its CPU ticks then */
} xio_watch_t;

/* A sign of life now (before the wait, and after each byte). */
void xio_watch_start(xio_watch_t *w);
/* How long to wait (ms) before the next xio_watch_check: a quarter of the
 * stall time, at most a second. */
int xio_watch_ms(const xio_watch_t *w);
/* 0 while w's process is alive to the wait, or -1 with err when it has
 * moved no data and used no CPU for w->stall_s: "testbed: WHO (pid N,
 * state T: stopped) did nothing for S s (no data, no CPU) while the fleet
 * waited for WHAT: given up". */
int xio_watch_check(xio_watch_t *w, err_t *err);

/* Writes / reads exactly n bytes, retrying after signals (a read stops
 * when *stop is set, stop may be NULL: "testbed: stopped by signal N
 * (NAME)"; and when watch, not NULL, says the writer has stalled). 0, or
 * -1 with err (a read that meets the end of the pipe early says
 * XIO_EOF_MSG, which the caller completes with what it knows of the
 * writer: xio_describe_exit). */
int xio_write(int fd, const void *buf, size_t n, err_t *err);
int xio_read(int fd, void *buf, size_t n, const volatile sig_atomic_t *stop,
             xio_watch_t *watch, err_t *err);

/* Appends to err->msg how a child process ended, from its waitpid status:
 * ": it exited with status N (its message is above)" (an error it
 * reported itself), ": it exited normally", or ": it was killed by signal
 * N (NAME)" (no message of its own: the OOM killer, a kill -9). */
void xio_describe_exit(err_t *err, int status);

#endif
