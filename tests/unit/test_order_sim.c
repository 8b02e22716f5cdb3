/* order, end to end: on the overloaded example scenarios the orderings do
 * what they are for, beyond the 95% confidence intervals of both runs
 * (5 replications each): edf raises slo_attainment over fcfs when tight and
 * loose SLOs share a replica (scenarios/examples/order-edf.yaml), fair
 * raises fairness_jain over fcfs when heavy tenants sit beside light ones
 * (order-fair.yaml), and priority gives the higher-priority group the
 * higher decode rate where fcfs gives both groups the same one
 * (order-priority.yaml). */
#include "check.h"
#include "stat/metrics.h"
#include "config/scenario.h"
#include "run/sim.h"

#define ROOT SPECSIM_ROOT "/"

/* Runs the example `file` with cloud.batching.order=order; fleet in *m,
 * groups in g[0..1]. */
static int run_with(const char *file, const char *order, metrics_summary_t *m,
                    metrics_summary_t *g)
{
    char path[512], val[32];
    snprintf(path, sizeof path, ROOT "scenarios/examples/%s", file);
    snprintf(val, sizeof val, "%s", order);
    scenario_override_t ov = {.path = "cloud.batching.order", .value = val};
    scenario_t s;
    err_t e;
    if (scenario_load(path, &ov, 1, &s, &e) != 0) {
        printf("  load: %s\n", e.msg);
        check_failed_now = 1;
        return -1;
    }
    sim_options_t opt = {.groups = g};
    int rc = sim_run(&s, &opt, m, &e);
    if (rc != 0) {
        printf("  sim_run: %s\n", e.msg);
        check_failed_now = 1;
    }
    scenario_fini(&s);
    return rc;
}

/* a's mean is above b's with both intervals apart. */
static int above(const metrics_summary_t *a, const metrics_summary_t *b, int k)
{
    double lo = a->value[k] - a->ci95[k], hi = b->value[k] + b->ci95[k];
    return lo > hi;
}

static void test_edf_slo(void)
{
    metrics_summary_t f, e, gf[2], ge[2];
    if (run_with("order-edf.yaml", "fcfs", &f, gf) || run_with("order-edf.yaml", "edf", &e, ge))
        return;
    CHECK(f.reps == 5 && e.reps == 5);
    CHECK(above(&e, &f, METRIC_SLO_ATTAINMENT));
    CHECK(above(&ge[0], &gf[0], METRIC_SLO_ATTAINMENT));   /* the interactive group's */
}

static void test_fair_jain(void)
{
    metrics_summary_t f, v, gf[2], gv[2];
    if (run_with("order-fair.yaml", "fcfs", &f, gf) ||
        run_with("order-fair.yaml", "fair", &v, gv))
        return;
    CHECK(above(&v, &f, METRIC_FAIRNESS_JAIN));
    /* fcfs favours the heavy group; fair brings the groups' rates closer. */
    double df = gf[0].value[METRIC_TOKENS_PER_S_TENANT] - gf[1].value[METRIC_TOKENS_PER_S_TENANT];
    double dv = gv[0].value[METRIC_TOKENS_PER_S_TENANT] - gv[1].value[METRIC_TOKENS_PER_S_TENANT];
    CHECK(df > 0 && fabs(dv) < df);
}

static void test_priority_rate(void)
{
    metrics_summary_t f, p, gf[2], gp[2];
    if (run_with("order-priority.yaml", "fcfs", &f, gf) ||
        run_with("order-priority.yaml", "priority", &p, gp))
        return;
    CHECK(above(&gp[0], &gp[1], METRIC_TOKENS_PER_S_TENANT));
    CHECK(!above(&gf[0], &gf[1], METRIC_TOKENS_PER_S_TENANT));
}

int main(void)
{
    RUN(test_edf_slo);
    RUN(test_fair_jain);
    RUN(test_priority_rate);
    return check_done();
}
