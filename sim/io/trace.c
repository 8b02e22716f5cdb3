#include "io/trace.h"

#include <stdarg.h>
#include <string.h>
#include <strings.h>

/* The registry: X(NAME) for each sim/io/trace_NAME.c defining trace_NAME_ops.
 * CSV, the default, has no suffix. */
#define TRACE_SINKS X(perfetto) X(csv)

#define X(name) extern const trace_ops_t trace_##name##_ops;
TRACE_SINKS
#undef X

static const trace_ops_t *const SINKS[] = {
#define X(name) &trace_##name##_ops,
    TRACE_SINKS
#undef X
};

const trace_ops_t *trace_format_for(const char *path)
{
    size_t n = strlen(path);
    for (size_t i = 0; i < sizeof SINKS / sizeof *SINKS; i++) {
        size_t k = strlen(SINKS[i]->suffix);
        /* Any case, as --out takes FILE.JSON for JSON (sim/run/output.c):
         * the same name must not mean JSON there and CSV here. */
        if (k > 0 && n >= k && !strcasecmp(path + n - k, SINKS[i]->suffix)) return SINKS[i];
    }
    return &trace_csv_ops;
}

int trace_init(trace_t *tr, FILE *f, const trace_ops_t *ops, int ntenants,
               int nreplicas, err_t *err)
{
    tr->ops = ops ? ops : &trace_csv_ops;
    tr->f = f;
    tr->failed = 0;
    tr->bytes = 0;
    tr->impl = NULL;
    return tr->ops->init(tr, ntenants, nreplicas, err);
}

void trace_fini(trace_t *tr)
{
    if (tr->ops && tr->ops->fini) tr->ops->fini(tr);
    tr->impl = NULL;
}

void trace_event(trace_t *tr, double t, int tenant, const char *event,
                 long block, long tokens)
{
    tr->ops->event(tr, t, tenant, event, block, tokens);
}

void trace_batch(trace_t *tr, double t, int replica, double dur, int jobs,
                 long tokens)
{
    if (tr->ops->batch) tr->ops->batch(tr, t, replica, dur, jobs, tokens);
}

void trace_queue(trace_t *tr, double t, int replica, int n)
{
    if (tr->ops->queue) tr->ops->queue(tr, t, replica, n);
}

void trace_finish(trace_t *tr, double t)
{
    if (tr->ops->finish) tr->ops->finish(tr, t);
}

int trace_error(const trace_t *tr) { return tr->failed || ferror(tr->f); }

void trace_printf(trace_t *tr, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vfprintf(tr->f, fmt, ap);
    if (n < 0) tr->failed = 1;
    else tr->bytes += n;
    va_end(ap);
}
