/* Running a scenario with its CSV event trace (docs/formats.md, "Event
 * trace CSV") and reading the rows back, for the unit tests that check
 * what happened when (test_workload_trace, test_thermal). Header-only. */
#ifndef TRACETEST_H
#define TRACETEST_H

#include <stdio.h>
#include <string.h>

#include "check.h"
#include "run/sim.h"

typedef struct tracetest_row {
    double t;
    int tenant;
    char ev[32];
    long block, tokens;
} tracetest_row_t;

/* 1 when ev is one of the NULL-terminated names. */
static inline int tracetest_is(const char *ev, const char *const *names)
{
    for (; *names; names++)
        if (!strcmp(ev, *names)) return 1;
    return 0;
}

/* Runs s (replication 0 traced) into *m and returns in rows the first `max`
 * rows of the events named in `events` (NULL-terminated); 0 (a failed
 * CHECK) when the run fails. */
static inline int tracetest_run(const scenario_t *s, metrics_summary_t *m,
                                const char *const *events, tracetest_row_t *rows,
                                int max)
{
    FILE *f = tmpfile();
    CHECK(f != NULL);
    if (!f) return 0;
    sim_options_t opt = {.trace = f};
    err_t err = {0};
    int rc = sim_run(s, &opt, m, &err);
    CHECK(rc == 0);
    if (rc) printf("  sim_run: %s\n", err.msg);
    rewind(f);
    char line[256];
    int n = 0;
    while (rc == 0 && n < max && fgets(line, sizeof line, f)) {
        tracetest_row_t *r = &rows[n];
        if (sscanf(line, "%lf,%d,%31[^,],%ld,%ld", &r->t, &r->tenant, r->ev, &r->block,
                   &r->tokens) == 5 && tracetest_is(r->ev, events))
            n++;
    }
    fclose(f);
    return n;
}

#endif
