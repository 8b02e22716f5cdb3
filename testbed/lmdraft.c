/* lmdraft — batched real drafting for the edge fleet (see lmdraft.h). */
#include "lmdraft.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "base/thread.h"
#include "spec.h"
#include "base/wallclock.h"

typedef struct slot {
    /* handed over, under the lock */
    int pending, n, k;
    uint64_t gen, seq;      /* seq: its place in the line for bulk reading */
    int32_t *text;
    /* running, the thread's */
    int running, rn, rk, made;
    uint64_t rgen;
    int32_t *rtext, out[LMDRAFT_K_MAX];
    double t0;
    /* the cache and the tokens it holds, the thread's */
    llm_kv_t *kv;
    int32_t *held;
    int hlen;
} slot_t;

struct lmdraft {
    const llm_model_t *m;
    llm_run_t *run;
    int n, cap, vocab;
    slot_t *s;
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int efd, started, quit, failed;
    uint64_t seq;           /* jobs handed over to idle slots */
    err_t err;
    lmdraft_done_t *done;   /* ring of n entries (one job per tenant at most) */
    int dhead, dn;
    llm_span_t *sp;
    int *who, *rows, *order;
    float *logits;
};

/* ---- the thread ----------------------------------------------------------- */

/* Jobs handed over become the running ones (under the lock). */
static int adopt(lmdraft_t *d)
{
    int running = 0;
    for (int i = 0; i < d->n; i++) {
        slot_t *s = &d->s[i];
        if (s->pending) {
            int32_t *t = s->rtext;
            s->rtext = s->text;
            s->text = t;
            s->rn = s->n;
            s->rk = s->k;
            s->rgen = s->gen;
            s->made = 0;
            s->running = 1;
            s->pending = 0;
            s->t0 = wallclock_s();
        }
        running += s->running;
    }
    return running;
}

/* A text longer than this is read over several passes, so that one
 * tenant's prompt does not hold up the other tenants' decode steps that
 * share its passes (a pass costs about the same per token at any size).
 * One such chunk goes into a pass, taken from the tenants in the order
 * their jobs came: when many requests start together (closed loops
 * without think time) every prompt read round-robin would end together,
 * late for all, where a device of each tenant's own reads its prompt
 * alone; in order, the first prompts are ready in about the time the
 * verifier's prefills of the same prompts take, in the same order. */
#define LMDRAFT_CHUNK 16

/* Slot s's span for the next pass; 0 when it has nothing to read (a
 * prefill whose text the cache already holds). *rows: 1 when the span's
 * last row drafts, 0 when it only reads, -1 when it reads a chunk and more
 * is left. */
static int span_of(slot_t *s, llm_span_t *sp, int *rows)
{
    if (s->made > 0) {
        *sp = (llm_span_t){s->kv, &s->out[s->made - 1], 1, 0};
        *rows = 1;
        return 1;
    }
    int c = 0;
    while (c < s->hlen && c < s->rn && s->held[c] == s->rtext[c]) c++;
    if (c == s->rn && s->rk == 0) return 0;
    if (c == s->rn) c--;   /* the last token again: its row drafts the first */
    llm_kv_truncate(s->kv, c);
    s->hlen = c;
    int len = s->rn - c;
    if (len > LMDRAFT_CHUNK) {
        *sp = (llm_span_t){s->kv, s->rtext + c, LMDRAFT_CHUNK, LMDRAFT_CHUNK};
        *rows = -1;
        return 1;
    }
    *sp = (llm_span_t){s->kv, s->rtext + c, len, s->rk > 0 ? len - 1 : len};
    *rows = s->rk > 0;
    return 1;
}

/* The running slots in the order their jobs came (d->order; their count). */
static int in_order(lmdraft_t *d)
{
    int n = 0;
    for (int i = 0; i < d->n; i++) {
        if (!d->s[i].running) continue;
        int k = n++;
        for (; k > 0 && d->s[d->order[k - 1]].seq > d->s[i].seq; k--)
            d->order[k] = d->order[k - 1];
        d->order[k] = i;
    }
    return n;
}

/* One forward pass over every running job: each one's decode step, and
 * one chunk of a long text (the oldest job's that has one). */
static int step(lmdraft_t *d)
{
    int ns = 0, chunk = 0, nrun = in_order(d);
    for (int o = 0; o < nrun; o++) {
        int i = d->order[o];
        slot_t *s = &d->s[i];
        if (!span_of(s, &d->sp[ns], &d->rows[ns])) {
            s->made = -1;   /* done: nothing to read */
            continue;
        }
        if (d->rows[ns] < 0 && chunk++) continue;   /* its chunk waits a pass */
        d->who[ns++] = i;
    }
    if (ns > 0 && llm_forward(d->run, d->m, d->sp, ns, d->logits, &d->err) != 0) return -1;
    const float *lg = d->logits;
    for (int k = 0; k < ns; k++) {
        slot_t *s = &d->s[d->who[k]];
        memcpy(s->held + s->hlen, d->sp[k].tokens, (size_t)d->sp[k].n * sizeof *s->held);
        s->hlen += d->sp[k].n;
        if (d->rows[k] < 0) continue;   /* more of its text next pass */
        if (!d->rows[k]) {
            s->made = -1;
            continue;
        }
        s->out[s->made++] = spec_argmax(lg, d->vocab);
        lg += d->vocab;
    }
    return 0;
}

/* Finished jobs to the ring (under the lock); superseded ones dropped. */
static void harvest(lmdraft_t *d)
{
    int signal = 0;
    for (int i = 0; i < d->n; i++) {
        slot_t *s = &d->s[i];
        /* Running on while drafts or text are left: a prompt read ahead
         * (k = 0) takes several passes when it is longer than a chunk, or
         * waits for its turn. */
        int left = s->made < s->rk || s->hlen < s->rn;
        if (!s->running || (s->made >= 0 && left && !s->pending)) continue;
        s->running = 0;
        if (s->pending) continue;   /* replaced: its drafts are not wanted */
        lmdraft_done_t *o = &d->done[(d->dhead + d->dn++) % d->n];
        o->tenant = i;
        o->gen = s->rgen;
        o->k = s->rk;
        memcpy(o->tok, s->out, (size_t)s->rk * sizeof *o->tok);
        o->secs = wallclock_s() - s->t0;
        signal = 1;
    }
    uint64_t one = 1;
    if (signal && write(d->efd, &one, sizeof one) != sizeof one) d->failed = 1;
}

static void *thread_main(void *arg)
{
    lmdraft_t *d = arg;
    /* Under the event loop's real-time priority (testbed/main.c asks for
     * SCHED_FIFO): a loop's wake-up must not wait for a forward pass. */
    struct sched_param sp = {.sched_priority = 0};
    pthread_setschedparam(pthread_self(), SCHED_OTHER, &sp);
    pthread_mutex_lock(&d->mu);
    while (!d->quit && !d->failed) {
        if (!adopt(d)) {
            pthread_cond_wait(&d->cv, &d->mu);
            continue;
        }
        pthread_mutex_unlock(&d->mu);
        int rc = step(d);
        pthread_mutex_lock(&d->mu);
        if (rc != 0) {
            uint64_t one = 1;
            d->failed = 1;
            if (write(d->efd, &one, sizeof one) != sizeof one) {}
            break;
        }
        harvest(d);
    }
    pthread_mutex_unlock(&d->mu);
    return NULL;
}

/* ---- the loop's side ------------------------------------------------------ */

static int slots_init(lmdraft_t *d, err_t *err)
{
    for (int i = 0; i < d->n; i++) {
        slot_t *s = &d->s[i];
        s->text = malloc((size_t)d->cap * sizeof *s->text);
        s->rtext = malloc((size_t)d->cap * sizeof *s->rtext);
        s->held = malloc((size_t)d->cap * sizeof *s->held);
        if (!s->text || !s->rtext || !s->held)
            return err_set(err, ERR_RUNTIME, "testbed: drafter: out of memory");
        if (!(s->kv = llm_kv_create(d->m, d->cap, err))) return -1;
    }
    return 0;
}

lmdraft_t *lmdraft_create(const llm_model_t *model, int ntenants, int capacity, int threads,
                          err_t *err)
{
    lmdraft_t *d = calloc(1, sizeof *d);
    if (!d) {
        err_set(err, ERR_RUNTIME, "testbed: drafter: out of memory");
        return NULL;
    }
    d->m = model;
    d->n = ntenants;
    d->cap = capacity;
    d->vocab = llm_config(model)->vocab;
    d->efd = -1;
    d->s = calloc((size_t)ntenants, sizeof *d->s);
    d->done = calloc((size_t)ntenants, sizeof *d->done);
    d->sp = calloc((size_t)ntenants, sizeof *d->sp);
    d->who = calloc((size_t)ntenants, sizeof *d->who);
    d->rows = calloc((size_t)ntenants, sizeof *d->rows);
    d->order = calloc((size_t)ntenants, sizeof *d->order);
    d->logits = malloc((size_t)ntenants * d->vocab * sizeof *d->logits);
    int rc = d->s && d->done && d->sp && d->who && d->rows && d->order && d->logits
                 ? 0 : err_set(err, ERR_RUNTIME, "testbed: drafter: out of memory");
    if (rc == 0) rc = slots_init(d, err);
    if (rc == 0 && !(d->run = llm_run_create(threads, err))) rc = -1;
    if (rc == 0 && (d->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0)
        rc = err_set(err, ERR_RUNTIME, "testbed: drafter: eventfd: %s", strerror(errno));
    if (rc == 0) {
        pthread_mutex_init(&d->mu, NULL);
        pthread_cond_init(&d->cv, NULL);
        /* With the termination signals blocked (base/thread.h): they are
         * the event loop's thread's to take. */
        if (thread_create(&d->th, thread_main, d) != 0) {
            pthread_mutex_destroy(&d->mu);
            pthread_cond_destroy(&d->cv);
            rc = err_set(err, ERR_RUNTIME, "testbed: drafter: cannot start its thread");
        } else {
            d->started = 1;
        }
    }
    if (rc != 0) {
        lmdraft_free(d);
        return NULL;
    }
    return d;
}

void lmdraft_free(lmdraft_t *d)
{
    if (!d) return;
    if (d->started) {
        pthread_mutex_lock(&d->mu);
        d->quit = 1;
        pthread_cond_signal(&d->cv);
        pthread_mutex_unlock(&d->mu);
        pthread_join(d->th, NULL);
        pthread_mutex_destroy(&d->mu);
        pthread_cond_destroy(&d->cv);
    }
    for (int i = 0; d->s && i < d->n; i++) {
        free(d->s[i].text);
        free(d->s[i].rtext);
        free(d->s[i].held);
        llm_kv_free(d->s[i].kv);
    }
    if (d->efd >= 0) close(d->efd);
    llm_run_free(d->run);
    free(d->s);
    free(d->done);
    free(d->sp);
    free(d->who);
    free(d->rows);
    free(d->order);
    free(d->logits);
    free(d);
}

int lmdraft_submit(lmdraft_t *d, int i, uint64_t gen, const int32_t *text, int n, int k,
                   err_t *err)
{
    if (n < 1 || k < 0 || k > LMDRAFT_K_MAX || n + k > d->cap)
        return err_set(err, ERR_RUNTIME, "testbed: drafter: a text of %d tokens and %d drafts "
                       "(room for %d)", n, k, d->cap);
    pthread_mutex_lock(&d->mu);
    slot_t *s = &d->s[i];
    /* A job that replaces a running or waiting one keeps its place. */
    if (!s->pending && !s->running) s->seq = d->seq++;
    memcpy(s->text, text, (size_t)n * sizeof *text);
    s->n = n;
    s->k = k;
    s->gen = gen;
    s->pending = 1;
    pthread_cond_signal(&d->cv);
    pthread_mutex_unlock(&d->mu);
    return 0;
}

int lmdraft_fd(const lmdraft_t *d) { return d->efd; }

int lmdraft_held(lmdraft_t *d, int i)
{
    pthread_mutex_lock(&d->mu);
    int n = d->s[i].hlen;
    pthread_mutex_unlock(&d->mu);
    return n;
}

int lmdraft_take(lmdraft_t *d, lmdraft_done_t *out, err_t *err)
{
    uint64_t v;
    while (read(d->efd, &v, sizeof v) == sizeof v) {}
    pthread_mutex_lock(&d->mu);
    int got = 0;
    if (d->failed) {
        *err = d->err;
        if (!err->msg[0]) err_set(err, ERR_RUNTIME, "testbed: drafter failed");
        got = -1;
    } else if (d->dn > 0) {
        *out = d->done[d->dhead];
        d->dhead = (d->dhead + 1) % d->n;
        d->dn--;
        got = 1;
    }
    pthread_mutex_unlock(&d->mu);
    return got;
}
