/* The testbed's wall-clock event loop (testbed/rt.h): engine_step's
 * contract, and delay injection on a real socket — messages sent through
 * the simulator's link model (sim/model/network.c) leave when it delivers them,
 * arrive in send order, never early, and late only by the loop's wake-up
 * latency. */
#include <math.h>
#include <stdint.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "check.h"
#include "conn.h"
#include "tcplisten.h"
#include "model/network.h"
#include "rt.h"
#include "base/wallclock.h"

/* ---- engine_step ------------------------------------------------------- */

typedef struct seen {
    double t[8], clock[8];
    uint64_t b[8];
    int n;
    engine_t *e;
} seen_t;

static int note(void *ctx, const engine_event_t *ev)
{
    seen_t *s = ctx;
    s->t[s->n] = ev->time;
    s->clock[s->n] = engine_now(s->e);
    s->b[s->n++] = ev->b;
    return 0;
}

static void test_engine_step(void)
{
    err_t err;
    seen_t s = {0};
    s.e = engine_create(4, &err);
    CHECK(s.e != NULL);
    if (!s.e) return;
    engine_on(s.e, 0, note, &s);
    CHECK(engine_next_time(s.e) == INFINITY);
    CHECK(engine_step(s.e, 1.0) == 0);          /* nothing pending */
    engine_schedule(s.e, 0.5, 0, 0, 1);
    engine_schedule(s.e, 0.2, 0, 0, 2);
    engine_schedule(s.e, 0.5, 0, 0, 3);
    CHECK(engine_next_time(s.e) == 0.2);
    CHECK(engine_step(s.e, 0.1) == 0);          /* not due yet */
    CHECK(s.n == 0);
    CHECK(engine_step(s.e, 0.25) == 1);         /* runs at 0.25, not 0.2 */
    CHECK(s.n == 1 && s.b[0] == 2 && s.t[0] == 0.25 && s.clock[0] == 0.25);
    CHECK(engine_step(s.e, 0.7) == 1 && engine_step(s.e, 0.8) == 1);
    CHECK(s.n == 3 && s.b[1] == 1 && s.b[2] == 3);   /* ties in schedule order */
    CHECK(s.t[1] == 0.7 && s.t[2] == 0.8);
    CHECK(engine_step(s.e, 0.9) == 0);
    /* Scheduling before the clock is refused as always. */
    CHECK(engine_schedule(s.e, 0.75, 0, 0, 4) != 0);
    engine_free(s.e);
}

/* ---- delay injection --------------------------------------------------- */

#define NMSG 40

typedef struct delay {
    engine_t *e;
    rt_t rt;
    network_link_t link;
    conn_t *out, *in;
    double sent[NMSG], due[NMSG], arrived[NMSG];
    int order[NMSG], got;
    err_t err;
} delay_t;

/* type 0: tenant-side send of message b now; the link says when it is
 * delivered, and type 1 fires then (as sim/entity/edge.c's EV_UP). */
static int on_send(void *ctx, const engine_event_t *ev)
{
    delay_t *d = ctx;
    int k = (int)ev->b;
    d->sent[k] = ev->time;
    d->due[k] = network_send(&d->link, ev->time, 200 + 50.0 * (k % 7));
    return engine_schedule(d->e, d->due[k], 1, 0, (uint64_t)k);
}

static int on_deliver(void *ctx, const engine_event_t *ev)
{
    delay_t *d = ctx;
    wire_msg_t m = {.kind = WIRE_BLOCK, .gamma = 1, .epoch = (uint32_t)ev->b};
    return conn_send(d->out, &m, &d->err);
}

static int on_input(void *ctx, uint32_t tag, err_t *err)
{
    delay_t *d = ctx;
    (void)tag;
    if (conn_fill(d->in, err)) return -1;
    wire_msg_t m = {0};
    int rc;
    while ((rc = conn_next(d->in, &m, err)) > 0 && d->got < NMSG) {
        d->order[d->got] = (int)m.epoch;
        d->arrived[m.epoch % NMSG] = rt_now(&d->rt);
        d->got++;
    }
    return rc < 0 ? -1 : 0;
}

/* A connected pair of TCP sockets on 127.0.0.1 (the testbed's transport). */
static int tcp_pair(int sp[2])
{
    struct sockaddr_in a;
    int l = tcp_listen(1, &a);
    if (l < 0) return -1;
    sp[0] = socket(AF_INET, SOCK_STREAM, 0);
    if (sp[0] < 0 || connect(sp[0], (struct sockaddr *)&a, sizeof a)) return -1;
    sp[1] = accept(l, NULL, NULL);
    close(l);
    return sp[1] < 0 ? -1 : 0;
}

static void test_delay_injection(void)
{
    static delay_t d;
    memset(&d, 0, sizeof d);
    int sp[2] = {-1, -1};
    CHECK(tcp_pair(sp) == 0);
    d.out = malloc(sizeof *d.out);
    d.in = malloc(sizeof *d.in);
    d.e = engine_create(16, &d.err);
    /* 10 ms round trip, 1 Mbit/s (200-500 B: 1.6-4 ms each, so messages
     * queue behind each other), exponential jitter of mean 8 ms: later
     * messages would overtake earlier ones without the in-order rule. */
    dist_t jit = {DIST_EXPONENTIAL, 0.008, 0, NULL, 0};
    CHECK(d.e && d.out && d.in &&
          network_link_init(&d.link, 0.010, 1e6, &jit, 5, 0, 1, RNG_UPLINK, &d.err) == 0);
    CHECK(conn_init(d.out, sp[0], &d.err) == 0 && conn_init(d.in, sp[1], &d.err) == 0);
    CHECK(rt_init(&d.rt, wallclock_s() + 0.005, NULL, &d.err) == 0);
    CHECK(rt_watch(&d.rt, sp[1], 0, &d.err) == 0);
    engine_on(d.e, 0, on_send, &d);
    engine_on(d.e, 1, on_deliver, &d);
    for (int k = 0; k < NMSG; k++) engine_schedule(d.e, 0.001 * k, 0, 0, (uint64_t)k);
    int rc = rt_run(&d.rt, d.e, 0.5, on_input, &d, &d.err);
    CHECK(rc == 0);
    if (rc) printf("  %s\n", d.err.msg);
    CHECK(d.got == NMSG);
    double worst = 0;
    for (int k = 0; k < d.got; k++) {
        CHECK(d.order[k] == k);   /* in send order */
        /* The model: at least the serialisation and half the round trip
         * after it was sent, never before the previous one. */
        CHECK(d.due[k] >= d.sent[k] + 0.005 + 8 * 200 / 1e6 - 1e-12);
        if (k > 0) CHECK(d.due[k] >= d.due[k - 1]);
        /* Never early; late by the wake-up latency only. */
        CHECK(d.arrived[k] >= d.due[k]);
        if (d.arrived[k] - d.due[k] > worst) worst = d.arrived[k] - d.due[k];
    }
    /* 20 ms: far above the tens of microseconds measured (docs/testbed.md),
     * so that a loaded test machine does not fail it; a message held for
     * the wrong time would miss it by a jitter draw (8 ms mean) or more. */
    CHECK(worst < 0.020);
    printf("  worst lateness %.1f us\n", 1e6 * worst);
    rt_fini(&d.rt);
    conn_close(d.out);
    conn_close(d.in);
    free(d.out);
    free(d.in);
    network_link_fini(&d.link);
    engine_free(d.e);
}

int main(void)
{
    RUN(test_engine_step);
    RUN(test_delay_injection);
    return check_done();
}
