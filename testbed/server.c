/* accept4: Linux's, for close-on-exec sockets in one call. */
#define _GNU_SOURCE
#include "server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "conn.h"
#include "ctenant.h"
#include "edge.h"
#include "msg.h"
#include "proto.h"
#include "rt.h"
#include "sim.h"
#include "tallyio.h"
#include "xio.h"

typedef struct server {
    repl_t r;
    conn_t **conn;          /* [n], NULL for tenants without the cloud */
    unsigned char *bye;     /* [n]: the tenant said BYE (its run ended) */
    rt_t rt;
    int lfd;
    double start;           /* rt_clock seconds of time 0, from HELLO */
} server_t;

/* ---- events ------------------------------------------------------------ */

static int on_up(void *ctx, const engine_event_t *ev)
{
    repl_t *r = ctx;
    int i = (int)ev->a;
    double now = engine_now(r->eng);
    if (msg_kind(ev->b) == MSG_PROMPT)
        return ctenant_prompt(r, i, r->et[i].prompt, r->et[i].output, now);
    return r->ct[i].proto->block_at_cloud(r, i, ev->b, now);
}

/* A verdict or token leaves when the downlink delivers it (sim/ctenant.c
 * scheduled this event at that time). */
static int on_down(void *ctx, const engine_event_t *ev)
{
    server_t *sv = ctx;
    wire_msg_t m = {0};
    wire_from_msg(ev->b, &m);
    return conn_send(sv->conn[ev->a], &m, sv->r.err);
}

static int on_job_done(void *ctx, const cloud_job_t *job, double now)
{
    repl_t *r = ctx;
    return r->ct[job->tenant].proto->job_done(r, job, now);
}

/* Frames from tenant `tag`: each enters the engine at the instant read. */
static int on_input(void *ctx, uint32_t tag, err_t *err)
{
    server_t *sv = ctx;
    repl_t *r = &sv->r;
    conn_t *c = sv->conn[tag];
    if (conn_fill(c, err)) return -1;
    wire_msg_t m;
    int rc = 0;
    while (!sv->bye[tag] && (rc = conn_next(c, &m, err)) > 0) {
        if (m.kind == WIRE_BYE) {
            /* The fleet's clock reached the end first: nothing follows. */
            sv->bye[tag] = 1;
            break;
        }
        if (m.kind == WIRE_PROMPT) {
            edge_tenant_t *T = &r->et[tag];
            T->prompt = (int)m.prompt;
            T->output = (int)m.output;
            T->t0 = m.t0;
        } else if (m.kind != WIRE_BLOCK) {
            return err_set(err, ERR_RUNTIME, "testbed: verifier: unexpected frame "
                           "kind %d from tenant %u", m.kind, tag);
        }
        if (engine_schedule(r->eng, rt_now(&sv->rt), EV_UP, tag, wire_to_msg(&m)))
            return err_set(err, ERR_RUNTIME, "testbed: verifier: event queue");
    }
    if (rc < 0) return -1;
    if (c->eof && !sv->bye[tag])
        return err_set(err, ERR_RUNTIME, "testbed: verifier: tenant %u hung up", tag);
    return 0;
}

/* ---- set-up ------------------------------------------------------------- */

static int listen_any(server_t *sv, int ctl_fd, err_t *err)
{
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK), .sin_port = 0};
    socklen_t len = sizeof a;
    sv->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (sv->lfd < 0 || bind(sv->lfd, (struct sockaddr *)&a, sizeof a) != 0 ||
        listen(sv->lfd, 1024) != 0 || getsockname(sv->lfd, (struct sockaddr *)&a, &len) != 0)
        return err_set(err, ERR_RUNTIME, "testbed: verifier: listen: %s", strerror(errno));
    uint32_t port = ntohs(a.sin_port);
    return xio_write(ctl_fd, &port, sizeof port, err);
}

/* Accepts every cloud tenant's connection and reads its HELLO. */
static int accept_all(server_t *sv, int rep, err_t *err)
{
    repl_t *r = &sv->r;
    int want = 0;
    for (int i = 0; i < r->n; i++) want += r->ct[i].proto != NULL;
    for (int k = 0; k < want; k++) {
        int fd = accept4(sv->lfd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0) return err_set(err, ERR_RUNTIME, "testbed: verifier: accept: %s",
                                   strerror(errno));
        conn_t *c = malloc(sizeof *c);
        if (!c) {
            close(fd);
            return err_set(err, ERR_RUNTIME, "testbed: verifier: out of memory");
        }
        wire_msg_t m;
        if (conn_init(c, fd, err) || conn_recv(c, &m, err)) {
            conn_close(c);
            free(c);
            return -1;
        }
        if (m.kind != WIRE_HELLO || m.tenant >= (uint32_t)r->n || !r->ct[m.tenant].proto ||
            sv->conn[m.tenant] || m.rep != (uint32_t)rep) {
            conn_close(c);
            free(c);
            return err_set(err, ERR_RUNTIME, "testbed: verifier: bad HELLO (kind %d, "
                           "tenant %u, replication %u)", m.kind, m.tenant, m.rep);
        }
        sv->conn[m.tenant] = c;
        sv->start = 1e-9 * (double)m.start_ns;
    }
    return 0;
}

static int build(server_t *sv, const scenario_t *s, const repl_shared_t *sh, int rep,
                 tally_t *tl, err_t *err)
{
    repl_t *r = &sv->r;
    r->s = s;
    r->sh = sh;
    r->rep = rep;
    r->n = s->ntenants;
    r->tally = tl;
    r->err = err;
    r->eng = engine_create((size_t)r->n * 4 + 64, err);
    r->et = calloc((size_t)r->n, sizeof *r->et);
    r->ct = calloc((size_t)r->n, sizeof *r->ct);
    sv->conn = calloc((size_t)r->n, sizeof *sv->conn);
    sv->bye = calloc((size_t)r->n, 1);
    if (!r->eng || !r->et || !r->ct || !sv->conn || !sv->bye)
        return err_set(err, ERR_RUNTIME, "testbed: verifier: out of memory");
    for (int i = 0; i < r->n; i++)
        if (repl_protocol(r, i)->proto->uses_cloud && ctenant_init(r, i, err)) return -1;
    cloud_cb_t cb = {r, on_job_done, ctenant_admitted};
    r->cloud = cloud_create(&s->cloud, r->n, sh->cloud_sv, sh->kv_capacity, r->eng,
                            EV_ITER_END, EV_KICK, &cb, tl, NULL, s->seed, rep, err);
    if (!r->cloud) return -1;
    if (engine_on(r->eng, EV_UP, on_up, r) || engine_on(r->eng, EV_DOWN, on_down, sv))
        return err_set(err, ERR_RUNTIME, "testbed: verifier: event types");
    return 0;
}

static void teardown(server_t *sv)
{
    repl_t *r = &sv->r;
    for (int i = 0; sv->conn && i < r->n; i++) {
        if (sv->conn[i]) conn_close(sv->conn[i]);
        free(sv->conn[i]);
    }
    for (int i = 0; r->ct && i < r->n; i++) ctenant_fini(&r->ct[i]);
    cloud_free(r->cloud);
    engine_free(r->eng);
    free(r->et);
    free(r->ct);
    free(sv->conn);
    free(sv->bye);
    if (sv->lfd >= 0) close(sv->lfd);
    rt_fini(&sv->rt);
}

/* After the end: every tenant says BYE (anything before it is late). */
static int await_bye(server_t *sv, err_t *err)
{
    for (int i = 0; i < sv->r.n; i++) {
        if (!sv->conn[i] || sv->bye[i]) continue;
        wire_msg_t m = {0};
        do {
            if (conn_recv(sv->conn[i], &m, err)) return -1;
        } while (m.kind != WIRE_BYE);
    }
    return 0;
}

static int send_tally(const tally_t *tl, double events, const rt_t *rt, int fd,
                      err_t *err)
{
    uint64_t head[2] = {tallyio_len(tl), (uint64_t)events};
    double late[3] = {rt->late_sum, rt->late_max, rt->steps};
    double *v = malloc(head[0] * sizeof *v);
    if (!v) return err_set(err, ERR_RUNTIME, "testbed: verifier: out of memory");
    tallyio_pack(tl, v);
    int rc = xio_write(fd, head, sizeof head, err) || xio_write(fd, late, sizeof late, err) ||
             xio_write(fd, v, head[0] * sizeof *v, err);
    free(v);
    return rc ? -1 : 0;
}

int server_run(const scenario_t *s, const repl_shared_t *sh, int rep, int ctl_fd,
               const volatile sig_atomic_t *stop, err_t *err)
{
    server_t sv;
    memset(&sv, 0, sizeof sv);
    sv.lfd = -1;
    sv.rt.ep = sv.rt.tfd = -1;
    tally_t *tl = sim_tally_create(s);
    int rc = tl ? 0 : err_set(err, ERR_RUNTIME, "testbed: verifier: out of memory");
    if (rc == 0) rc = build(&sv, s, sh, rep, tl, err);
    if (rc == 0) rc = listen_any(&sv, ctl_fd, err);
    if (rc == 0) rc = accept_all(&sv, rep, err);
    if (rc == 0) rc = rt_init(&sv.rt, sv.start, stop, err);
    for (int i = 0; rc == 0 && i < sv.r.n; i++)
        if (sv.conn[i]) rc = rt_watch(&sv.rt, sv.conn[i]->fd, (uint32_t)i, err);
    if (rc == 0) rc = rt_run(&sv.rt, sv.r.eng, s->duration, on_input, &sv, err);
    if (rc == 0) {
        cloud_finish(sv.r.cloud, s->duration);
        tl->raw.end = s->duration;
        rc = await_bye(&sv, err);
    }
    if (rc == 0) rc = send_tally(tl, (double)engine_events(sv.r.eng), &sv.rt, ctl_fd, err);
    teardown(&sv);
    tally_free(tl);
    return rc;
}
