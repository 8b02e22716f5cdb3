/* Time-varying links (sim/model/network.h network_link_vary, the traces of
 * sim/model/linktrace.h), against times counted by hand: a Mahimahi
 * trace's opportunity spacing gives the serialisation time, an outage of
 * known length delays exactly the messages sent within it by the down
 * time left, a CSV trace's rate and round trip apply from their row's time
 * on; the random processes give their stationary means; bad traces give
 * one FILE:LINE:COL line naming the key. */
#include <math.h>
#include <string.h>

#include "check.h"
#include "model/linktrace.h"
#include "model/network.h"
#include "tmpdir.h"

static const dist_t NONE = {DIST_CONST, 0, 0, NULL, 0};

static linktrace_t *csv(const char *name, const char *text)
{
    err_t err;
    put(name, text);
    linktrace_t *t = linktrace_read_csv(NULL, path(name), "tenants.network.trace", &err);
    if (!t) printf("  %s\n", err.msg);
    CHECK(t != NULL);
    return t;
}

static linkopp_t *mahimahi(const char *name, const char *text)
{
    err_t err;
    put(name, text);
    linkopp_t *o = linktrace_read_mahimahi(NULL, path(name), "tenants.network.uplink_trace",
                                           &err);
    if (!o) printf("  %s\n", err.msg);
    CHECK(o != NULL);
    return o;
}

/* A link of round trip rtt and rate bps varied by v (offset: entity 0 ×
 * any stride = the trace's start). */
static void open_link(network_link_t *l, double rtt, double bps, const network_vary_t *v,
                      uint64_t entity)
{
    err_t err;
    CHECK(network_link_init(l, rtt, bps, &NONE, 1, 0, entity, RNG_UPLINK, &err) == 0);
    CHECK(network_link_vary(l, v, 1, 0, entity, &err) == 0);
}

/* Opportunities every 2 ms (the file: 2, 4, 6, 8, 10 ms, repeating every
 * 10 ms, so 12, 14, ... next): an MTU leaves at each. rtt 20 ms: 10 ms one
 * way. */
static void test_mahimahi_spacing(void)
{
    linkopp_t *o = mahimahi("mm2", "2\n4\n6\n8\n10\n");
    if (!o) return;
    CHECK(o->n == 5 && o->period == 0.010);
    network_vary_t v = {.dir = 0, .opp = o};
    network_link_t l;
    open_link(&l, 0.020, INFINITY, &v, 0);
    /* 4500 B = 3 MTUs sent at 0: the opportunities at 2, 4 and 6 ms. */
    CHECK_ABS(network_send(&l, 0.0, 4500), 0.006 + 0.010, 1e-12);
    /* 100 B at 6.5 ms: the next opportunity is at 8 ms. */
    CHECK_ABS(network_send(&l, 0.0065, 100), 0.008 + 0.010, 1e-12);
    /* 100 B handed over at 7 ms, before that opportunity came: it leaves
     * in the same one (1400 B were left of it). */
    CHECK_ABS(network_send(&l, 0.007, 100), 0.008 + 0.010, 1e-12);
    /* After it: the one at 10 ms; then, past the file's end, 12 ms. */
    CHECK_ABS(network_send(&l, 0.0081, 100), 0.010 + 0.010, 1e-12);
    CHECK_ABS(network_send(&l, 0.0105, 100), 0.012 + 0.010, 1e-12);
    /* A long message: 1000 MTUs from 100.001 s take 1000 opportunities 2
     * ms apart, the first at 100.002 s: it leaves at 100.002 + 999 × 2 ms.
     * (6 Mbit/s: 1500 B every 2 ms.) */
    CHECK_ABS(network_send(&l, 100.001, 1500.0 * 1000), 100.002 + 0.999 * 2 + 0.010, 1e-9);
    network_link_fini(&l);
    /* Tenant 3 with a stride of 3 ms starts 9 ms into the file: its first
     * opportunity is the file's 10 ms, 1 ms from its start. */
    v.random_offset = 0;
    v.stride = 0.003;
    open_link(&l, 0.020, INFINITY, &v, 3);
    CHECK_ABS(network_send(&l, 0.0, 100), 0.001 + 0.010, 1e-12);
    network_link_fini(&l);
    linkopp_free(o);
}

/* Down from 1 s to 1.5 s (the CSV's third row up again), rtt 20 ms. */
static const char *const OUTAGE =
    "t_s,rtt_ms,up_mbps,down_mbps,up\n"
    "0,20,8,inf,1\n"
    "1,20,8,inf,0\n"
    "1.5,20,8,inf,1\n"
    "10\n";

/* An outage delays exactly the messages sent within it, each by the down
 * time left when it was sent; the others not at all. */
static void test_outage_delay(void)
{
    linktrace_t *t = csv("outage.csv", OUTAGE);
    if (!t) return;
    CHECK(t->n == 3 && t->period == 10);
    /* The downlink is unlimited: a message leaves the moment it may. */
    network_vary_t v = {.dir = 1, .trace = t};
    network_link_t l;
    open_link(&l, 0.020, INFINITY, &v, 0);
    CHECK_ABS(network_send(&l, 0.5, 100), 0.510, 1e-12);     /* before: none */
    CHECK_ABS(network_send(&l, 1.0, 100), 1.510, 1e-12);     /* waits 0.5 s */
    CHECK_ABS(network_send(&l, 1.2, 100), 1.510, 1e-12);     /* waits 0.3 s */
    CHECK_ABS(network_send(&l, 1.49, 100), 1.510, 1e-12);    /* waits 0.01 s */
    CHECK_ABS(network_send(&l, 1.6, 100), 1.610, 1e-12);     /* after: none */
    /* The trace repeats: the outage is back at 11 s. */
    CHECK_ABS(network_send(&l, 11.25, 100), 11.510, 1e-12);
    network_link_fini(&l);
    /* The uplink at 8 Mbit/s (one byte a microsecond): 1000 B from 0.9995
     * s send 500 B before the outage and the rest once it ends. */
    v.dir = 0;
    open_link(&l, 0.020, INFINITY, &v, 0);
    CHECK_ABS(network_send(&l, 0.9995, 1000), 1.5005 + 0.010, 1e-9);
    network_link_fini(&l);
    linktrace_free(t);
}

/* A rate and a round trip hold from their row on: 8 then 16 Mbit/s up,
 * 20 then 100 ms. */
static void test_csv_rate_and_rtt(void)
{
    linktrace_t *t = csv("steps.csv", "t_s,rtt_ms,up_mbps,down_mbps,up\n"
                                      "# a comment, and a blank line, are skipped\n\n"
                                      "0,20,8,1,1\n"
                                      "1, 100, 16, 1, 1\n"
                                      "2,,,,\n");
    if (!t) return;
    network_vary_t v = {.dir = 0, .trace = t};
    network_link_t l;
    open_link(&l, 0.040, INFINITY, &v, 0);
    /* 1000 B from 0.9995: 500 B at 1 B/µs, 500 B at 2 B/µs = 250 µs; it
     * leaves in the second row, so 50 ms one way. */
    CHECK_ABS(network_send(&l, 0.9995, 1000), 1.00025 + 0.050, 1e-9);
    network_link_fini(&l);
    /* Offsets: tenant 3 with a stride of 0.5 s starts 1.5 s in (row 2),
     * tenant 5 at 2.5 s = 0.5 s in (row 1). */
    v.stride = 0.5;
    open_link(&l, 0.040, INFINITY, &v, 3);
    CHECK_ABS(network_send(&l, 0, 0), 0.050, 1e-12);
    CHECK_ABS(network_send(&l, 0.6, 0), 0.6 + 0.010, 1e-12);  /* trace time 2.1 */
    network_link_fini(&l);
    open_link(&l, 0.040, INFINITY, &v, 5);
    CHECK_ABS(network_send(&l, 0, 0), 0.010, 1e-12);
    CHECK_ABS(network_send(&l, 0.6, 0), 0.6 + 0.050, 1e-12);
    network_link_fini(&l);
    /* A random offset: the same for both directions of a tenant (the same
     * stream), different between tenants. */
    v.random_offset = 1;
    network_link_t up, down;
    int same = 1, differ = 0;
    double first = 0;
    for (uint64_t e = 0; e < 20; e++) {
        v.dir = 0;
        open_link(&up, 0.040, INFINITY, &v, e);
        v.dir = 1;
        open_link(&down, 0.040, INFINITY, &v, e);
        double a = network_send(&up, 0, 0), b = network_send(&down, 0, 0);
        same &= a == b;
        if (e == 0) first = a;
        differ |= a != first;
        network_link_fini(&up);
        network_link_fini(&down);
    }
    CHECK(same);
    CHECK(differ);
    linktrace_free(t);
}

/* Gilbert-Elliott, mean up U = 1 s, mean down D = 0.25 s, unlimited rate:
 * a message sent at a time independent of the link is held with
 * probability D/(U+D), for the exponential remainder of the outage (mean
 * D): its mean extra delay is D·D/(U+D) = 0.05 s. Messages 1.37 s apart
 * (more than any hold-up's effect on the next, nearly always). */
static void test_gilbert_elliott_mean(void)
{
    network_vary_t v = {.dir = 0, .mean_up = 1.0, .mean_down = 0.25};
    network_link_t l;
    open_link(&l, 0.020, INFINITY, &v, 7);
    int n = 200000, held = 0;
    double sum = 0;
    for (int i = 0; i < n; i++) {
        double t = 1.37 * i, d = network_send(&l, t, 100) - t - 0.010;
        sum += d;
        held += d > 1e-9;
    }
    CHECK_REL(sum / n, 0.25 * 0.25 / 1.25, 0.03);
    CHECK_REL((double)held / n, 0.2, 0.02);
    network_link_fini(&l);
    /* The downlink of the same tenant sees the same outages. */
    network_link_t a, b;
    open_link(&a, 0.020, INFINITY, &v, 9);
    v.dir = 1;
    open_link(&b, 0.020, INFINITY, &v, 9);
    int same = 1;
    for (int i = 0; i < 10000; i++) same &= network_send(&a, 0.5 * i, 1) == network_send(&b, 0.5 * i, 1);
    CHECK(same);
    network_link_fini(&a);
    network_link_fini(&b);
}

/* Markov states: 20 ms for a mean 3 s, 100 ms for a mean 1 s; the link
 * spends 3/4 of its time in the first, so a message's mean one-way delay
 * is (3/4)·10 + (1/4)·50 = 20 ms. The second state's uplink is 8 Mbit/s:
 * a 1000 B message there takes 1 ms more (mean over time: 0.25 ms). */
static void test_markov_states_mean(void)
{
    network_state_t st[2] = {
        {.rtt = 0.020, .uplink_bps = INFINITY, .downlink_bps = INFINITY, .mean = 3, .up = 1},
        {.rtt = 0.100, .uplink_bps = 8e6, .downlink_bps = INFINITY, .mean = 1, .up = 1},
    };
    network_vary_t v = {.dir = 0, .states = st, .nstates = 2};
    network_link_t l;
    open_link(&l, 0.040, INFINITY, &v, 2);
    int n = 200000;
    double sum = 0;
    for (int i = 0; i < n; i++) {
        double t = 1.37 * i;
        sum += network_send(&l, t, 1000) - t;
    }
    CHECK_REL(sum / n, 0.020 + 0.00025, 0.03);
    network_link_fini(&l);
}

/* text as a CSV (mm 0) or Mahimahi (mm 1) trace is refused with exactly
 * one line starting FILE:want. */
static int bad(int mm, const char *text, const char *want)
{
    err_t err = {0};
    const char *f = path(mm ? "bad.mm" : "bad.csv");
    put(mm ? "bad.mm" : "bad.csv", text);
    void *t;
    if (mm) {
        t = linktrace_read_mahimahi(NULL, f, "tenants.network.uplink_trace", &err);
        linkopp_free(t);
    } else {
        t = linktrace_read_csv(NULL, f, "tenants.network.trace", &err);
        linktrace_free(t);
    }
    char w[512];
    snprintf(w, sizeof w, "%s:%s", f, want);
    int ok = !t && err.code == ERR_INPUT && !strncmp(err.msg, w, strlen(w)) &&
             !strchr(err.msg, '\n');
    if (!ok) printf("  want '%s'\n  got  '%s'\n", w, err.msg);
    return ok;
}

#define bad_csv(text, want) bad(0, text, want)
#define bad_mm(text, want) bad(1, text, want)

#define H "t_s,rtt_ms,up_mbps,down_mbps,up\n"

static void test_bad_traces(void)
{
    CHECK(bad_csv("t,rtt\n0,1\n", "1:1: tenants.network.trace: the first line must be"));
    CHECK(bad_csv(H "0,20,10,10,1\n1,x,10,10,1\n2\n", "3:3: tenants.network.trace: rtt_ms: "
                  "not a number (got 'x')"));
    CHECK(bad_csv(H "1,20,10,10,1\n2\n", "2:1: tenants.network.trace: t_s: the first row is at 0"));
    CHECK(bad_csv(H "0,20,10,10,1\n0,20,10,10,1\n2\n", "3:1: tenants.network.trace: t_s: "
                  "times must increase"));
    CHECK(bad_csv(H "0,20,0,10,1\n2\n", "2:6: tenants.network.trace: up_mbps: must be > 0"));
    CHECK(bad_csv(H "0,20,10,10,2\n2\n", "2:12: tenants.network.trace: up: must be 1"));
    CHECK(bad_csv(H "0,20,10,10,1\n", "2:1: tenants.network.trace: no end row"));
    CHECK(bad_csv(H "0,20,10,10,0\n2\n", "3:1: tenants.network.trace: every row is down"));
    CHECK(bad_csv(H "0,20,10,10,1\n2\n3,20,10,10,1\n", "4:1: tenants.network.trace: a row "
                  "after the end row"));
    CHECK(bad_csv(H "0,20,10,1\n2\n", "2:1: tenants.network.trace: 4 fields"));
    CHECK(bad_csv(H "0,-1,10,10,1\n2\n", "2:3: tenants.network.trace: rtt_ms: must be in"));
    CHECK(bad_csv(H "0,20,10,10,1\n  1, 20, 10, 1O, 1\n2\n", "3:14: tenants.network.trace: "
                  "down_mbps: not a number (got '1O')"));
    CHECK(bad_mm("5\n3\n", "2:1: tenants.network.uplink_trace: timestamps must not decrease"));
    CHECK(bad_mm("5\n1.5\n", "2:1: tenants.network.uplink_trace: not a timestamp"));
    CHECK(bad_mm("0\n0\n", "2:1: tenants.network.uplink_trace: the last timestamp"));
    CHECK(bad_mm("\n", "1:1: tenants.network.uplink_trace: no timestamps"));
}

int main(void)
{
    if (tmpdir_make("specsim_link_vary") != 0) return 1;
    RUN(test_mahimahi_spacing);
    RUN(test_outage_delay);
    RUN(test_csv_rate_and_rtt);
    RUN(test_gilbert_elliott_mean);
    RUN(test_markov_states_mean);
    RUN(test_bad_traces);
    tmpdir_remove();
    return check_done();
}
