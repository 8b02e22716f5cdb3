/* err — the error record every fallible function fills instead of printing.
 *
 * Library code never prints or exits: it fills an err_t and returns -1 (or
 * NULL). The CLI prints err.msg and exits with err.code. Messages about input
 * start with "FILE:LINE:COLUMN: " and name the dotted key.
 */
#ifndef SPECSIM_ERR_H
#define SPECSIM_ERR_H

#include "base/api.h"

#define ERR_MSG_MAX 1024

enum { ERR_RUNTIME = 1, ERR_INPUT = 2 };

typedef struct err {
    int code;              /* ERR_INPUT (bad usage/scenario) or ERR_RUNTIME */
    char msg[ERR_MSG_MAX];
} err_t;

/* Sets code and a printf-formatted message; a NULL err is allowed (ignored).
 * Always returns -1 so callers can `return err_set(...)`. */
SPECSIM_API int err_set(err_t *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Warnings: what the library notices but need not stop for (a rerun of a
 * sidecar whose data file has changed since). It prints nothing itself:
 * the program installs a handler (build/specsim's prints "specsim:
 * warning: MSG"); without one warnings are dropped. The handler may be
 * called from any thread the library runs on (a sweep's workers), so it
 * must be thread-safe; err_warn formats into a buffer of ERR_MSG_MAX. */
typedef void (*err_warn_fn)(void *ctx, const char *msg);
SPECSIM_API void err_set_warn_handler(err_warn_fn fn, void *ctx);
void err_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
