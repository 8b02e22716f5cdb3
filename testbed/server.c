/* accept4: Linux's, for close-on-exec sockets in one call. */
#define _GNU_SOURCE
#include "server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "conn.h"
#include "entity/ctenant.h"
#include "entity/msg.h"
#include "entity/proto.h"
#include "realverify.h"
#include "entity/route.h"
#include "rt.h"
#include "run/sim.h"
#include "tallyio.h"
#include "worker.h"
#include "xio.h"

/* Real verification runs on a worker thread (testbed/worker.h), so that
 * the event loop goes on sending verdicts when the downlink delivers them
 * and reading blocks while a batch computes: the iteration is handed over
 * with its jobs, and the worker's eventfd says when it is done
 * (testbed/realverify.h). */
typedef struct real_worker {
    realverify_t *v;
    worker_t w;
    /* Guarded by w's lock. */
    service_job_t *jobs;    /* [max_batch], the iteration's jobs */
    int njobs;
    double dt;              /* its time; < 0: failed (msg in err) */
    err_t err;
} real_worker_t;

typedef struct server {
    repl_t r;
    conn_t **conn;          /* [n], NULL for tenants without the cloud */
    unsigned char *bye;     /* [n]: the tenant said BYE (its run ended) */
    rt_t rt;
    int lfd;
    double start;           /* wallclock_s seconds of time 0, from HELLO */
    real_worker_t *real;    /* NULL: emulated iteration times */
    double *real_n, *real_s, *model_s; /* per M: iterations, measured and
                              predicted seconds (real verification) */
    int real_maxm;
} server_t;

/* The worker's eventfd in the epoll set; tenants use their index. */
#define SERVER_REAL_TAG (UINT32_MAX - 1)
/* The engine event that ends a real iteration (after the simulator's). */
#define EV_REAL_DONE 16

/* The context lengths real verification keeps room for (longer ones are
 * clamped; see testbed/realverify.h). */
#define SERVER_REAL_CONTEXT 2048

/* ---- real verification --------------------------------------------------- */

const char *server_real_refusal(const scenario_t *s)
{
    if (s->cloud.batching.max_tokens <= 0)
        return "--real-verify needs cloud.batching.max_tokens (the buffers of the "
               "real forward pass are sized by an iteration's tokens)";
    if (s->cloud.replicas != 1)
        return "--real-verify runs one replica (one core): cloud.replicas must be 1";
    return NULL;
}

/* realverify_create's arguments for s's real verifier: the target at
 * fp16, an iteration's token limit, a batch's job limit and
 * SERVER_REAL_CONTEXT. One place for real_init and server_real_bytes, so
 * that the memory check weighs what is built. */
typedef struct real_args {
    int quant, tokens, jobs, context;
} real_args_t;

static real_args_t real_args(const scenario_t *s)
{
    return (real_args_t){PREC_FP16, s->cloud.batching.max_tokens, s->cloud.batching.max_batch,
                         SERVER_REAL_CONTEXT};
}

realverify_size_t server_real_bytes(const scenario_t *s, int *quant, int *jobs, int *context)
{
    real_args_t a = real_args(s);
    *quant = a.quant;
    *jobs = a.jobs;
    *context = a.context;
    return realverify_bytes(&s->cloud.target, a.quant, a.tokens, a.jobs, a.context);
}

/* The service model of the one replica real verification runs
 * (server_real_refusal); NULL with a given verify time. */
static const service_t *real_model(const server_t *sv)
{
    return sv->r.sh->cgroups ? sv->r.sh->cgroups[0].sv : NULL;
}

/* worker_fn: the handed-over iteration. The event loop leaves jobs, njobs
 * and err alone until the eventfd says it is done, so they are used
 * unlocked. */
static int real_job(void *arg)
{
    real_worker_t *w = arg;
    worker_unlock(&w->w);
    double dt = realverify_run(w->v, w->jobs, w->njobs, &w->err);
    worker_lock(&w->w);
    w->dt = dt;
    return 1;
}

/* cloud_cb_t.iter_time: the batch is handed to the worker; the iteration
 * ends when it is done (real_done). */
static double real_iter(void *ctx, int replica, const service_job_t *jobs, int njobs)
{
    server_t *sv = ctx;
    real_worker_t *w = sv->real;
    (void)replica;   /* one replica (server_real_refusal) */
    worker_lock(&w->w);
    memcpy(w->jobs, jobs, (size_t)njobs * sizeof *jobs);
    w->njobs = njobs;
    worker_post(&w->w);
    worker_unlock(&w->w);
    return INFINITY;
}

/* The worker finished: the iteration ends now (an engine event, so that
 * the clock is the instant it runs). */
static int real_signal(server_t *sv, err_t *err)
{
    worker_drain(&sv->real->w);
    if (engine_schedule(sv->r.eng, rt_now(&sv->rt), EV_REAL_DONE, 0, 0))
        return err_set(err, ERR_RUNTIME, "testbed: verifier: event queue");
    return 0;
}

static int on_real_done(void *ctx, const engine_event_t *ev)
{
    server_t *sv = ctx;
    real_worker_t *w = sv->real;
    worker_lock(&w->w);
    double dt = w->dt;
    int n = w->njobs;
    worker_unlock(&w->w);
    if (dt < 0) {
        *sv->r.err = w->err;
        return -1;
    }
    int m = 0;
    for (int j = 0; j < n; j++) m += w->jobs[j].tokens;
    if (m >= 1 && m <= sv->real_maxm) {
        sv->real_n[m]++;
        sv->real_s[m] += dt;
        if (real_model(sv)) sv->model_s[m] += service_iter_time(real_model(sv), w->jobs, n);
    }
    return cloud_iteration_end(sv->r.cloud, 0, ev->time);
}

static void real_fini(server_t *sv)
{
    real_worker_t *w = sv->real;
    if (!w) return;
    worker_stop(&w->w);
    realverify_free(w->v);
    free(w->jobs);
    free(w);
    sv->real = NULL;
}

static int real_init(server_t *sv, err_t *err)
{
    const scenario_t *s = sv->r.s;
    real_args_t a = real_args(s);
    sv->real_maxm = a.tokens;
    sv->real_n = calloc((size_t)sv->real_maxm + 1, sizeof *sv->real_n);
    sv->real_s = calloc((size_t)sv->real_maxm + 1, sizeof *sv->real_s);
    sv->model_s = calloc((size_t)sv->real_maxm + 1, sizeof *sv->model_s);
    real_worker_t *w = sv->real = calloc(1, sizeof *w);
    if (!sv->real_n || !sv->real_s || !sv->model_s || !w)
        return err_set(err, ERR_RUNTIME, "testbed: verifier: out of memory");
    w->jobs = calloc((size_t)a.jobs, sizeof *w->jobs);
    if (!w->jobs) return err_set(err, ERR_RUNTIME, "testbed: verifier: out of memory");
    w->v = realverify_create(&s->cloud.target, a.quant, a.tokens, a.jobs, a.context, 1, err);
    if (!w->v) return -1;
    if (worker_start(&w->w, real_job, w, "verifier", err)) return -1;
    if (engine_on(sv->r.eng, EV_REAL_DONE, on_real_done, sv))
        return err_set(err, ERR_RUNTIME, "testbed: verifier: event types");
    return 0;
}

/* Per M: iterations, measured mean and the service model's mean (ms). */
static void real_report(const server_t *sv, int rep)
{
    fprintf(stderr, "testbed: replication %d, real verification of %s on one core, "
            "per batch tokens M: iterations, measured ms, service model ms\n", rep,
            sv->r.s->cloud.target.name);
    for (int m = 1; m <= sv->real_maxm; m++) {
        if (sv->real_n[m] == 0) continue;
        double n = sv->real_n[m];
        if (real_model(sv))
            fprintf(stderr, "  M=%-3d %6.0f  %8.3f  %8.3f  (%+.1f%%)\n", m, n,
                    1e3 * sv->real_s[m] / n, 1e3 * sv->model_s[m] / n,
                    100 * (sv->model_s[m] - sv->real_s[m]) / sv->real_s[m]);
        else
            fprintf(stderr, "  M=%-3d %6.0f  %8.3f\n", m, n, 1e3 * sv->real_s[m] / n);
    }
}

/* ---- events ------------------------------------------------------------ */

/* A verdict or token leaves when the downlink delivers it (sim/entity/ctenant.c
 * scheduled this event at that time). */
static int on_down(void *ctx, const engine_event_t *ev)
{
    server_t *sv = ctx;
    wire_msg_t m = {0};
    wire_from_msg(ev->b, &m);
    return conn_send(sv->conn[ev->a], &m, sv->r.err);
}

/* Frames from tenant `tag`: each enters the engine at the instant read. */
static int on_input(void *ctx, uint32_t tag, err_t *err)
{
    server_t *sv = ctx;
    repl_t *r = &sv->r;
    if (tag == SERVER_REAL_TAG) return real_signal(sv, err);
    conn_t *c = sv->conn[tag];
    if (conn_fill(c, err)) return -1;
    wire_msg_t m = {0};
    int rc = 0;
    while (!sv->bye[tag] && (rc = conn_next(c, &m, err)) > 0) {
        if (m.kind == WIRE_BYE) {
            /* The fleet's clock reached the end first: nothing follows. */
            sv->bye[tag] = 1;
            break;
        }
        if (m.kind == WIRE_PROMPT) {
            /* The frame's lengths and start are the message's body: they
             * wait in the tenant's prompt slot until EV_UP delivers the
             * message to the cloud side (sim/entity/msg.h). */
            if (m.prompt > INT_MAX || m.output > INT_MAX)
                return err_set(err, ERR_RUNTIME, "testbed: verifier: tenant %u sent a "
                               "prompt of %u + %u tokens (more than an int holds)",
                               tag, m.prompt, m.output);
            if (msg_prompt_post(&r->prompt_box[tag], (int)m.prompt, (int)m.output, m.t0))
                return err_set(err, ERR_RUNTIME, "testbed: verifier: tenant %u sent a "
                               "prompt while its last one was still on its way", tag);
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

int server_listen(int *lfd, int ctl_fd, err_t *err)
{
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK), .sin_port = 0};
    socklen_t len = sizeof a;
    *lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (*lfd < 0 || bind(*lfd, (struct sockaddr *)&a, sizeof a) != 0 ||
        listen(*lfd, 1024) != 0 || getsockname(*lfd, (struct sockaddr *)&a, &len) != 0)
        return err_set(err, ERR_RUNTIME, "testbed: verifier: listen: %s", strerror(errno));
    uint32_t port = ntohs(a.sin_port);
    return xio_write(ctl_fd, &port, sizeof port, err);
}

/* Reads the HELLO on fd into conn[] (see server_accept); fd is owned by
 * the connection made of it, or closed. */
static int greet(int fd, int rep, int n, const unsigned char *expect, conn_t **conn,
                 double *start, err_t *err)
{
    conn_t *c = malloc(sizeof *c);
    if (!c) {
        close(fd);
        return err_set(err, ERR_RUNTIME, "testbed: verifier: out of memory");
    }
    wire_msg_t m = {0};
    int rc = conn_init(c, fd, err) || conn_recv(c, &m, err) ? -1 : 0;
    if (rc == 0 && (m.kind != WIRE_HELLO || m.tenant >= (uint32_t)n || !expect[m.tenant] ||
                    conn[m.tenant] || m.rep != (uint32_t)rep))
        rc = err_set(err, ERR_RUNTIME, "testbed: verifier: bad HELLO (kind %d, tenant %u, "
                     "replication %u)", m.kind, m.tenant, m.rep);
    if (rc) {
        conn_close(c);
        free(c);
        return -1;
    }
    conn[m.tenant] = c;
    *start = 1e-9 * (double)m.start_ns;
    return 0;
}

int server_accept(int lfd, int rep, int n, const unsigned char *expect, conn_t **conn,
                  double *start, err_t *err)
{
    int want = 0, got = 0, rc = 0;
    for (int i = 0; i < n; i++) want += expect[i] != 0;
    int *fd = malloc((size_t)(want > 0 ? want : 1) * sizeof *fd);
    if (!fd) return err_set(err, ERR_RUNTIME, "testbed: verifier: out of memory");
    for (; got < want && rc == 0; got++)
        if ((fd[got] = accept4(lfd, NULL, NULL, SOCK_CLOEXEC)) < 0)
            rc = err_set(err, ERR_RUNTIME, "testbed: verifier: accept: %s", strerror(errno));
    if (rc) got--;   /* the failed slot holds no descriptor */
    int k = 0;
    for (; k < got && rc == 0; k++) rc = greet(fd[k], rep, n, expect, conn, start, err);
    for (; k < got; k++) close(fd[k]);   /* not greeted after a failure */
    free(fd);
    return rc;
}

/* Accepts every cloud tenant's connection and reads its HELLO. */
static int accept_all(server_t *sv, int rep, err_t *err)
{
    repl_t *r = &sv->r;
    unsigned char *expect = malloc((size_t)r->n);
    if (!expect) return err_set(err, ERR_RUNTIME, "testbed: verifier: out of memory");
    for (int i = 0; i < r->n; i++) expect[i] = r->ct[i].proto != NULL;
    int rc = server_accept(sv->lfd, rep, r->n, expect, sv->conn, &sv->start, err);
    free(expect);
    return rc;
}

static int build(server_t *sv, const scenario_t *s, const repl_shared_t *sh, int rep,
                 const server_opts_t *opt, tally_t *tl, err_t *err)
{
    repl_t *r = &sv->r;
    sv->conn = calloc((size_t)s->ntenants, sizeof *sv->conn);
    sv->bye = calloc((size_t)s->ntenants, 1);
    /* The cloud side only: a prompt's lengths come in its frame. */
    if (route_setup(r, sh, rep, ROUTE_CLOUD, tl, NULL, err) || !sv->conn || !sv->bye)
        return err_set(err, ERR_RUNTIME, "testbed: verifier: out of memory");
    for (int i = 0; i < r->n; i++)
        if (repl_protocol(r, i)->proto->uses_cloud && ctenant_init(r, i, err)) return -1;
    if (opt->real_verify && real_init(sv, err)) return -1;
    /* r leads server_t, so the callbacks' ctx is the server too. */
    cloud_cb_t cb = {r, route_job_done, ctenant_admitted, sv->real ? real_iter : NULL};
    r->cloud = cloud_create_groups(&s->cloud, r->n, sh->cgroups, sh->ncgroups, r->eng,
                                   EV_ITER_END, EV_KICK, &cb, tl, NULL, s->seed, rep, err);
    if (!r->cloud) return -1;
    if (engine_on(r->eng, EV_UP, route_up, r) || engine_on(r->eng, EV_DOWN, on_down, sv))
        return err_set(err, ERR_RUNTIME, "testbed: verifier: event types");
    return 0;
}

static void teardown(server_t *sv)
{
    conn_free_all(sv->conn, sv->r.n);
    route_teardown(&sv->r);
    free(sv->bye);
    real_fini(sv);
    free(sv->real_n);
    free(sv->real_s);
    free(sv->model_s);
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

int server_run(const scenario_t *s, const repl_shared_t *sh, int rep,
               const server_opts_t *opt, int ctl_fd, const volatile sig_atomic_t *stop,
               err_t *err)
{
    server_t sv;
    memset(&sv, 0, sizeof sv);
    sv.lfd = -1;
    sv.rt.ep = sv.rt.tfd = -1;
    tally_t *tl = sim_tally_create(s);
    int rc = tl ? 0 : err_set(err, ERR_RUNTIME, "testbed: verifier: out of memory");
    if (rc == 0) rc = build(&sv, s, sh, rep, opt, tl, err);
    if (rc == 0) rc = server_listen(&sv.lfd, ctl_fd, err);
    if (rc == 0) rc = accept_all(&sv, rep, err);
    if (rc == 0) rc = rt_init(&sv.rt, sv.start, stop, err);
    for (int i = 0; rc == 0 && i < sv.r.n; i++)
        if (sv.conn[i]) rc = rt_watch(&sv.rt, sv.conn[i]->fd, (uint32_t)i, err);
    if (rc == 0 && sv.real) rc = rt_watch(&sv.rt, worker_fd(&sv.real->w), SERVER_REAL_TAG, err);
    if (rc == 0) rc = rt_run(&sv.rt, sv.r.eng, s->duration, on_input, &sv, err);
    if (rc == 0) {
        cloud_finish(sv.r.cloud, s->duration);
        tl->raw.end = s->duration;
        rc = await_bye(&sv, err);
    }
    if (rc == 0 && sv.real && !opt->quiet) real_report(&sv, rep);
    if (rc == 0) rc = send_tally(tl, (double)engine_events(sv.r.eng), &sv.rt, ctl_fd, err);
    teardown(&sv);
    tally_free(tl);
    return rc;
}
