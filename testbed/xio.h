/* xio — whole reads and writes on a pipe between the testbed's processes
 * (the verifier's port and tally to the edge fleet). */
#ifndef TESTBED_XIO_H
#define TESTBED_XIO_H

#include <signal.h>
#include <stddef.h>

#include "base/err.h"

/* Writes / reads exactly n bytes, retrying after signals (a read stops
 * when *stop is set; stop may be NULL). 0, or -1 with err (a read that
 * meets the end of the pipe early says so). */
int xio_write(int fd, const void *buf, size_t n, err_t *err);
int xio_read(int fd, void *buf, size_t n, const volatile sig_atomic_t *stop,
             err_t *err);

#endif
