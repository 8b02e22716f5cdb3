/* Tenant groups scale linearly (issue 28 item 11): loading and checking a
 * scenario costs CPU time linear in the number of groups. The old code
 * compared every group's name with every earlier one and asked whether the
 * scenario was mixed (a walk over every group) once per group, so `check`
 * took 1.3 s for 10^4 groups and 142 s for 10^5.
 *
 * Timing ratios in one run, as test_engine's test_fleet_start_linear does:
 * 4x the groups must take less than 6x the CPU time, the best of three
 * (quadratic would be 16x). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "config/scenario.h"
#include "run/sim.h"
#include "stat/metrics.h"

static double cpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* A scenario of n groups of one tenant each, every group named. */
static char *groups_yaml(int n)
{
    size_t cap = 256 + (size_t)n * 40;
    char *y = malloc(cap);
    CHECK(y != NULL);
    if (!y) return NULL;
    size_t len = (size_t)snprintf(y, cap, "duration: 1ms\nwarmup: 0s\nreplications: 1\n"
                                  "protocol: {mode: sync, gamma: 4}\ntenants:\n  groups:\n");
    for (int i = 0; i < n; i++)
        len += (size_t)snprintf(y + len, cap - len, "    - {name: g%d, count: 1}\n", i);
    return y;
}

/* CPU seconds to load the n-group scenario (and, with run, to run it
 * asking for every group's results). */
static double time_groups(int n, int run)
{
    char *y = groups_yaml(n);
    if (!y) return NAN;
    scenario_t s;
    err_t err = {0};
    metrics_summary_t *g = calloc((size_t)n, sizeof *g);
    CHECK(g != NULL);
    double t0 = cpu_now();
    int rc = scenario_load_string("groups", y, NULL, 0, &s, &err);
    CHECK(rc == 0);
    if (rc) printf("  %s\n", err.msg);
    if (rc == 0 && run && g) {
        sim_options_t opt = {.groups = g};
        metrics_summary_t m;
        CHECK(sim_run(&s, &opt, &m, &err) == 0);
        if (err.code) printf("  %s\n", err.msg);
    }
    double t1 = cpu_now();
    if (rc == 0) scenario_fini(&s);
    free(g);
    free(y);
    return t1 - t0;
}

static void ratio_check(const char *what, int n, int run)
{
    double t1 = INFINITY, t4 = INFINITY;
    for (int k = 0; k < 3; k++) {
        t1 = fmin(t1, time_groups(n, run));
        t4 = fmin(t4, time_groups(4 * n, run));
    }
    double ratio = t4 / fmax(t1, 1e-6);
    printf("  %s: %d groups %.1f ms, %d: %.1f ms, ratio %.1f\n", what, n, 1e3 * t1,
           4 * n, 1e3 * t4, ratio);
    CHECK(ratio < 6);
}

static void test_load_linear(void)
{
    ratio_check("load", 2500, 0);
}

/* The hash set that replaced the pairwise comparison reports the same
 * group: the first whose name an earlier one has, at its name (also among
 * thousands, and for a default name group<i> that a later name repeats). */
static void test_duplicate_names(void)
{
    static const struct { const char *groups, *want; } cases[] = {
        {"    - {name: a, count: 1}\n    - {name: b, count: 1}\n"
         "    - {name: b, count: 1}\n    - {name: a, count: 1}\n",
         "test:9:14: tenants.groups.2.name: duplicate group name 'b'"},
        {"    - {count: 1}\n    - {name: group0, count: 1}\n",
         "test:8:14: tenants.groups.1.name: duplicate group name 'group0'"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        char y[1024];
        snprintf(y, sizeof y, "duration: 1ms\nwarmup: 0s\nreplications: 1\n"
                 "protocol: {mode: sync, gamma: 4}\ntenants:\n  groups:\n%s",
                 cases[k].groups);
        scenario_t s;
        err_t err = {0};
        CHECK(scenario_load_string("test", y, NULL, 0, &s, &err) != 0);
        CHECK(strcmp(err.msg, cases[k].want) == 0);
        if (strcmp(err.msg, cases[k].want)) printf("  got '%s'\n", err.msg);
    }
    /* 5,000 distinct names, then the 3,000th again. */
    char *y = groups_yaml(5000);
    if (!y) return;
    size_t len = strlen(y);
    char *z = realloc(y, len + 64);
    CHECK(z != NULL);
    if (!z) { free(y); return; }
    snprintf(z + len, 64, "    - {name: g2999, count: 1}\n");
    scenario_t s;
    err_t err = {0};
    CHECK(scenario_load_string("test", z, NULL, 0, &s, &err) != 0);
    CHECK(strstr(err.msg, "tenants.groups.5000.name: duplicate group name 'g2999'") != NULL);
    free(z);
}

int main(void)
{
    RUN(test_load_linear);
    RUN(test_duplicate_names);
    return check_done();
}
