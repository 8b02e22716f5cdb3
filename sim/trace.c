#include "trace.h"

void trace_init(trace_t *tr, FILE *f)
{
    tr->f = f;
    tr->failed = fputs("time,tenant,event,block,tokens\n", f) < 0;
}

void trace_event(trace_t *tr, double t, int tenant, const char *event,
                 long block, long tokens)
{
    /* %.9f: nanosecond resolution, fixed format so traces diff cleanly. */
    if (fprintf(tr->f, "%.9f,%d,%s,%ld,%ld\n", t, tenant, event, block,
                tokens) < 0)
        tr->failed = 1;
}

int trace_error(const trace_t *tr) { return tr->failed || ferror(tr->f); }
