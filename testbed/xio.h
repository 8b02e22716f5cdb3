/* xio — whole reads and writes on a pipe between the testbed's processes
 * (the verifier's port and tally to the edge fleet). */
#ifndef TESTBED_XIO_H
#define TESTBED_XIO_H

#include <signal.h>
#include <stddef.h>

#include "base/err.h"

/* What a read that meets the end of the pipe early leaves in err->msg. */
#define XIO_EOF_MSG "testbed: the verifier stopped early"

/* Writes / reads exactly n bytes, retrying after signals (a read stops
 * when *stop is set, stop may be NULL: "testbed: stopped by signal N
 * (NAME)"). 0, or -1 with err (a read that meets the end of the pipe early
 * says XIO_EOF_MSG, which the caller completes with what it knows of the
 * writer: xio_describe_exit). */
int xio_write(int fd, const void *buf, size_t n, err_t *err);
int xio_read(int fd, void *buf, size_t n, const volatile sig_atomic_t *stop,
             err_t *err);

/* Appends to err->msg how a child process ended, from its waitpid status:
 * ": it exited with status N (its message is above)" (an error it
 * reported itself), ": it exited normally", or ": it was killed by signal
 * N (NAME)" (no message of its own: the OOM killer, a kill -9). */
void xio_describe_exit(err_t *err, int status);

#endif
