#include "base/err.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>

int err_set(err_t *err, int code, const char *fmt, ...)
{
    if (!err) return -1;
    va_list ap;
    va_start(ap, fmt);
    err->code = code;
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    return -1;
}

/* Set once by the program before it calls the library; read by any
 * thread. */
static _Atomic(err_warn_fn) err_warn_handler;
static void *_Atomic err_warn_ctx;

void err_set_warn_handler(err_warn_fn fn, void *ctx)
{
    atomic_store(&err_warn_ctx, ctx);
    atomic_store(&err_warn_handler, fn);
}

void err_warn(const char *fmt, ...)
{
    err_warn_fn fn = atomic_load(&err_warn_handler);
    if (!fn) return;
    char msg[ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fn(atomic_load(&err_warn_ctx), msg);
}
