/* trace_csv — the CSV sink of sim/io/trace.h: one line per tenant event. */
#include "io/trace.h"

static int csv_init(trace_t *tr, int ntenants, int nreplicas, err_t *err)
{
    (void)ntenants;
    (void)nreplicas;
    (void)err;
    trace_printf(tr, "time,tenant,event,block,tokens\n");
    return 0;
}

static void csv_event(trace_t *tr, double t, int tenant, const char *event,
                      long block, long tokens)
{
    /* %.9f: nanosecond resolution, fixed format so traces diff cleanly. */
    trace_printf(tr, "%.9f,%d,%s,%ld,%ld\n", t, tenant, event, block, tokens);
}

const trace_ops_t trace_csv_ops = {
    .name = "csv",
    .suffix = "",
    .init = csv_init,
    .event = csv_event,
};
