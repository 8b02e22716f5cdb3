/* sweep — run a sweep's points (see sweep.h).
 *
 * Points run on a pool of threads; the calling thread is the only writer and
 * appends rows strictly in point order through a bounded reorder ring, so the
 * file is the same for any -j and a crash loses at most unfinished points.
 * Each point is a load of the scenario parsed once (scenario_src_load: the
 * file and the cards it names are read once per sweep) + sim_run, both
 * re-entrant.
 */
#include "run/sweep.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/datapath.h"
#include "base/err.h"
#include "io/infile.h"
#include "stat/metrics.h"
#include "io/outfile.h"
#include "engine/rng.h"
#include "config/scenario.h"
#include "run/pool.h"
#include "run/sim.h"
#include "run/sweepfile.h"
#include "config/sweepspec.h"
#include "base/thread.h"
#include "base/wallclock.h"

/* Points a worker may run ahead of the writer, per thread: bounds memory
 * while one slow point holds back the rows after it. */
#define RING_PER_THREAD 32

/* ---- running points ------------------------------------------------------- */

typedef struct slot {
    int done;                 /* guarded by pool.mu */
    int rc;
    metrics_summary_t m;
    metrics_summary_t *g;     /* [pool.ngroups] with --per-group, else NULL */
    err_t err;
} slot_t;

typedef struct pool {
    const scenario_src_t *src; /* the scenario, parsed and read once */
    const sweepspec_t *sp;
    const scenario_override_t *sets;
    int nsets;
    int independent;
    uint64_t base_seed;
    const scenario_t *base;   /* --per-group: its groups name the columns */
    int ngroups;              /* 0 without --per-group */
    const char *out;          /* the output's name, for I/O errors */
    const sim_bound_t *bounds; /* with precision: bounds each point settles */
    int nbounds;
    int precision;            /* points may stop at a precision: rows say
                                 their replications */

    const uint64_t *todo;     /* points to run, ascending */
    size_t ntodo;
    long jobs;                /* the thread budget (pool.h): points and their
                                 replications together */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    size_t next_claim;        /* index into todo */
    size_t next_write;
    size_t window;
    slot_t *ring;             /* [window], slot of todo[k] is k % window */
    int stop;
} pool_t;

/* The seed of a point with --independent-seeds. 31 bits, so that every
 * loader and shell takes it as a plain integer. */
static uint64_t point_seed(uint64_t base, uint64_t point)
{
    return rng_hash(base, point, 0, 0x5eedULL) >> 33;
}

/* Overrides for one point: base --set options, then the axes, then the
 * per-point seed. ov must hold nsets + naxes + 1 entries, idx naxes;
 * seedbuf >= 32. */
static int point_overrides(const pool_t *p, uint64_t point,
                           scenario_override_t *ov, int *idx, char *seedbuf)
{
    int n = 0;
    for (int k = 0; k < p->nsets; k++) ov[n++] = p->sets[k];
    sweepspec_point_index(p->sp, point, idx);
    for (int a = 0; a < p->sp->naxes; a++) ov[n++] = sweepspec_override(p->sp, a, idx[a]);
    if (p->independent) {
        snprintf(seedbuf, 32, "%" PRIu64, point_seed(p->base_seed, point));
        ov[n++] = (scenario_override_t){.path = "seed", .value = seedbuf,
                                        .src = "--independent-seeds"};
    }
    return n;
}

/* --per-group columns are named after the base scenario's groups: a point
 * whose axes change them would fill columns of other groups. The message
 * names no point: write_in_order prefixes every point's error with it. */
static int same_groups(const pool_t *p, const scenario_t *s, err_t *err)
{
    int same = s->ngroups == p->ngroups;
    for (int g = 0; same && g < s->ngroups; g++)
        same = strcmp(s->groups[g].name, p->base->groups[g].name) == 0;
    if (same) return 0;
    return err_set(err, ERR_INPUT, "--per-group needs the base scenario's tenant "
                   "groups at every point, and its axes change them");
}

/* Wall-clock metrics differ between runs; leaving them empty keeps sweep
 * files byte-identical across -j, shards and resumes. */
static void drop_timing(metrics_summary_t *m)
{
    m->value[METRIC_WALL_S] = m->ci95[METRIC_WALL_S] = NAN;
    m->value[METRIC_EVENTS_PER_S] = m->ci95[METRIC_EVENTS_PER_S] = NAN;
}

/* "path=value, path=value" of a point, truncated to fit. */
static void point_label(const sweepspec_t *sp, uint64_t point, char *buf, size_t n)
{
    enum { MAX_SHOWN = 16 };
    const char *vals[MAX_SHOWN];
    size_t used = 0;
    buf[0] = '\0';
    if (sp->naxes > MAX_SHOWN) return;
    sweepspec_point(sp, point, vals);
    for (int a = 0; a < sp->naxes && used < n; a++) {
        int w = snprintf(buf + used, n - used, "%s%s=%s", a ? ", " : "",
                         sp->axes[a].path, vals[a]);
        if (w < 0) break;
        used += (size_t)w;
    }
}

/* Runs one point, its replications on `jobs` threads (pool_share). */
static int run_point(const pool_t *p, uint64_t point, metrics_summary_t *m,
                     metrics_summary_t *groups, long jobs, err_t *err)
{
    int cap = p->nsets + p->sp->naxes + 1;
    scenario_override_t *ov = malloc((size_t)cap * sizeof *ov);
    int *idx = malloc((size_t)p->sp->naxes * sizeof *idx);
    char seedbuf[32];
    int rc = -1;
    if (!ov || !idx) {
        err_set(err, ERR_RUNTIME, "out of memory");
        goto out;
    }
    int nov = point_overrides(p, point, ov, idx, seedbuf);
    scenario_t s;
    if (scenario_src_load(p->src, ov, nov, &s, err) != 0) goto out;
    sim_precision_t prec;
    sim_options_t opt = {.trace = NULL, .progress = NULL, .groups = groups,
                         .jobs = (int)jobs, .precision = &prec, .bounds = p->bounds,
                         .nbounds = p->nbounds};
    memset(m, 0, sizeof *m);
    rc = groups ? same_groups(p, &s, err) : 0;
    if (rc == 0) rc = sim_run(&s, &opt, m, err);
    /* A point short of its target is said (its CSV row holds its values). */
    if (rc == 0 && s.precision.relative > 0 && !prec.met) {
        char text[1024], label[256];
        sim_precision_text(&s, &prec, text, sizeof text);
        point_label(p->sp, point, label, sizeof label);
        err_warn("point %llu (%s): precision %s", (unsigned long long)point, label, text);
    }
    scenario_fini(&s);
    drop_timing(m);
    for (int g = 0; groups && g < p->ngroups; g++) drop_timing(&groups[g]);
    if (groups) {
        m->groups = groups;
        m->ngroups = p->ngroups;
    }
out:
    free(ov);
    free(idx);
    return rc;
}

static void *worker(void *arg)
{
    pool_t *p = arg;
    for (;;) {
        pthread_mutex_lock(&p->mu);
        while (!p->stop && p->next_claim < p->ntodo &&
               p->next_claim >= p->next_write + p->window)
            pthread_cond_wait(&p->cv, &p->mu);
        if (p->stop || p->next_claim >= p->ntodo) {
            pthread_mutex_unlock(&p->mu);
            return NULL;
        }
        size_t k = p->next_claim++;
        pthread_mutex_unlock(&p->mu);
        /* Slot k % window is ours alone until done is set: the writer reads it
         * only after, and no other claim maps to it within the window. */
        slot_t *s = &p->ring[k % p->window];
        s->err.code = 0;
        s->err.msg[0] = '\0';
        s->rc = run_point(p, p->todo[k], &s->m, s->g, pool_share(p->jobs, p->ntodo, k),
                          &s->err);
        pthread_mutex_lock(&p->mu);
        s->done = 1;
        pthread_cond_broadcast(&p->cv);
        pthread_mutex_unlock(&p->mu);
    }
}

/* Progress reports: the callback (if any) and the counts it is given. */
typedef struct progress {
    void (*fn)(void *ctx, const sweep_progress_t *p);
    void *ctx;
    sweep_progress_t p;
} progress_t;

static void progress_show(progress_t *pr, int final)
{
    pr->p.final = final;
    if (pr->fn) pr->fn(pr->ctx, &pr->p);
}


static int format_batch(const pool_t *p, size_t k0, size_t k1, char **buf,
                        size_t *len)
{
    FILE *f = open_memstream(buf, len);
    if (!f) return -1;
    int rc = 0;
    for (size_t k = k0; rc == 0 && k < k1; k++)
        rc = sweepfile_row(f, p->sp, p->todo[k], &p->ring[k % p->window].m, p->precision);
    if (fclose(f) != 0) rc = -1;
    if (rc) { free(*buf); *buf = NULL; }
    return rc;
}

/* The writer: waits for todo[k] in order, appends runs of finished points
 * with one write each. Returns 0 or -1 with err (a failed point or I/O). */
/* Rows written but not yet fdatasync'ed wait at most SWEEPFILE_SYNC_S: the
 * writer syncs once that much time has passed, whether the next batch is
 * ready or it is still waiting for one, at the end, and before it gives up
 * on an error. */
typedef struct syncer {
    int fd;
    const char *name;
    int dirty;        /* rows written since the last sync */
    double synced;    /* wallclock_s() of the last sync */
} syncer_t;

static int sync_now(syncer_t *y, err_t *err)
{
    if (!y->dirty) return 0;
    y->dirty = 0;
    y->synced = wallclock_s();
    return sweepfile_append(y->fd, y->name, "", 0, 1, err);
}

/* With p->mu held: waits until slot k is done, syncing rows that have
 * waited long enough meanwhile. 0, or -1 (sync failed; p->mu still held). */
static int wait_done(pool_t *p, size_t k, syncer_t *y, err_t *err)
{
    while (!p->ring[k % p->window].done) {
        double left = y->synced + SWEEPFILE_SYNC_S - wallclock_s();
        if (!y->dirty) {
            pthread_cond_wait(&p->cv, &p->mu);
        } else if (left > 0) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            double ns = (double)ts.tv_nsec + left * 1e9;
            ts.tv_sec += (time_t)(ns / 1e9);
            ts.tv_nsec = (long)fmod(ns, 1e9);
            pthread_cond_timedwait(&p->cv, &p->mu, &ts);
        } else {
            pthread_mutex_unlock(&p->mu);
            int rc = sync_now(y, err);
            pthread_mutex_lock(&p->mu);
            if (rc) return -1;
        }
    }
    return 0;
}

static int write_in_order(pool_t *p, int fd, progress_t *pr, err_t *err)
{
    size_t k = 0;
    syncer_t y = {fd, p->out, 0, wallclock_s()};
    err_t ignored = {0, {0}};
    while (k < p->ntodo) {
        pthread_mutex_lock(&p->mu);
        if (wait_done(p, k, &y, err) != 0) {
            pthread_mutex_unlock(&p->mu);
            return -1;
        }
        size_t k1 = k;
        while (k1 < p->ntodo && k1 < k + p->window && p->ring[k1 % p->window].done &&
               p->ring[k1 % p->window].rc == 0)
            k1++;
        pthread_mutex_unlock(&p->mu);
        if (k1 == k) {   /* todo[k] failed: keep what is written, then report */
            sync_now(&y, &ignored);
            const slot_t *s = &p->ring[k % p->window];
            char label[256];
            point_label(p->sp, p->todo[k], label, sizeof label);
            return err_set(err, s->err.code ? s->err.code : ERR_RUNTIME,
                           "point %" PRIu64 " (%s): %s", p->todo[k], label,
                           s->err.msg);
        }
        char *buf = NULL;
        size_t len = 0;
        if (format_batch(p, k, k1, &buf, &len) != 0) {
            sync_now(&y, &ignored);
            return err_set(err, ERR_RUNTIME, "formatting rows failed");
        }
        int rc = sweepfile_append(fd, p->out, buf, len, 0, err);
        free(buf);
        if (rc) return -1;
        y.dirty = 1;
        if ((k1 == p->ntodo || wallclock_s() - y.synced >= SWEEPFILE_SYNC_S) && sync_now(&y, err))
            return -1;
        pthread_mutex_lock(&p->mu);
        for (size_t j = k; j < k1; j++) p->ring[j % p->window].done = 0;
        p->next_write = k1;
        pthread_cond_broadcast(&p->cv);
        pthread_mutex_unlock(&p->mu);
        pr->p.done += k1 - k;
        progress_show(pr, 0);
        k = k1;
    }
    return 0;
}

static void ring_free(pool_t *p)
{
    for (size_t k = 0; p->ring && k < p->window; k++) free(p->ring[k].g);
    free(p->ring);
    p->ring = NULL;
}

/* The reorder ring, each slot with room for the groups' summaries. */
static int ring_alloc(pool_t *p)
{
    p->ring = calloc(p->window, sizeof *p->ring);
    if (!p->ring) return -1;
    for (size_t k = 0; p->ngroups && k < p->window; k++)
        if (!(p->ring[k].g = calloc((size_t)p->ngroups, sizeof *p->ring[k].g))) return -1;
    return 0;
}

/* The points on a budget of `jobs` threads (pool.h): min(jobs, points)
 * point threads, and the rest of the budget to the points' replications
 * when there are fewer points than threads. */
static int run_pool(pool_t *p, long jobs, int fd, progress_t *pr, err_t *err)
{
    if (p->ntodo == 0) return 0;
    p->jobs = jobs;
    if ((size_t)jobs > p->ntodo) jobs = (long)p->ntodo;
    p->window = (size_t)jobs * RING_PER_THREAD;
    pthread_t *th = calloc((size_t)jobs, sizeof *th);
    if (ring_alloc(p) != 0 || !th) {
        ring_free(p);
        free(th);
        return err_set(err, ERR_RUNTIME, "out of memory");
    }
    int e = pthread_mutex_init(&p->mu, NULL);
    if (e == 0 && (e = pthread_cond_init(&p->cv, NULL)) != 0) pthread_mutex_destroy(&p->mu);
    if (e) {
        ring_free(p);
        free(th);
        return err_set(err, ERR_RUNTIME, "pthread set-up: %s", strerror(e));
    }
    long started = 0;
    int rc = 0;
    /* thread_create: with outfile's signals blocked, so that they reach
     * this thread, which writes the file (base/thread.h). */
    for (; started < jobs; started++) {
        e = thread_create(&th[started], worker, p);
        if (e) {
            rc = err_set(err, ERR_RUNTIME, "pthread_create: %s", strerror(e));
            break;
        }
    }
    if (rc == 0) rc = write_in_order(p, fd, pr, err);
    pthread_mutex_lock(&p->mu);
    p->stop = 1;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    for (long t = 0; t < started; t++) pthread_join(th[t], NULL);
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
    free(th);
    ring_free(p);
    return rc;
}

/* ---- evaluating a list of points (sweep_eval_src) ------------------------------ */

/* The shared state of sweep_eval_src's workers: the next index to claim, and
 * the first failure (by index, so the message does not depend on -j). */
typedef struct evalq {
    const pool_t *p;
    const uint64_t *points;
    size_t n;
    long jobs;                /* the thread budget (pool.h) */
    metrics_summary_t *out;
    pthread_mutex_t mu;
    size_t next;
    size_t failed;            /* n when none */
    err_t err;
} evalq_t;

static void *eval_worker(void *arg)
{
    evalq_t *q = arg;
    for (;;) {
        pthread_mutex_lock(&q->mu);
        size_t k = q->next < q->n && q->failed == q->n ? q->next++ : q->n;
        pthread_mutex_unlock(&q->mu);
        if (k == q->n) return NULL;
        err_t e = {0, {0}};
        if (run_point(q->p, q->points[k], &q->out[k], NULL, pool_share(q->jobs, q->n, k),
                      &e) == 0)
            continue;
        pthread_mutex_lock(&q->mu);
        if (k < q->failed) {
            char label[256];
            point_label(q->p->sp, q->points[k], label, sizeof label);
            q->failed = k;
            err_set(&q->err, e.code ? e.code : ERR_RUNTIME, "point %s: %s", label, e.msg);
        }
        pthread_mutex_unlock(&q->mu);
    }
}

int sweep_eval_src(const scenario_src_t *src, const sweepspec_t *sp,
                   const scenario_override_t *sets, int nsets,
                   const uint64_t *points, size_t n, long jobs,
                   const sim_bound_t *bounds, int nbounds,
                   metrics_summary_t *out, err_t *err)
{
    if (n == 0) return 0;
    pool_t p = {.src = src, .sp = sp, .sets = sets, .nsets = nsets, .bounds = bounds,
                .nbounds = nbounds};
    /* The budget as run_pool shares it: the points first, the rest to
     * their replications (pool.h). */
    jobs = pool_jobs(jobs);
    evalq_t q = {.p = &p, .points = points, .n = n, .jobs = jobs, .out = out, .failed = n};
    if ((size_t)jobs > n) jobs = (long)n;
    pthread_t *th = calloc((size_t)jobs, sizeof *th);
    if (!th) return err_set(err, ERR_RUNTIME, "out of memory");
    int e = pthread_mutex_init(&q.mu, NULL);
    if (e) {
        free(th);
        return err_set(err, ERR_RUNTIME, "pthread set-up: %s", strerror(e));
    }
    long started = 0;
    int rc = 0;
    for (; started < jobs; started++) {
        e = thread_create(&th[started], eval_worker, &q);
        if (e) {
            rc = err_set(err, ERR_RUNTIME, "pthread_create: %s", strerror(e));
            break;
        }
    }
    for (long t = 0; t < started; t++) pthread_join(th[t], NULL);
    pthread_mutex_destroy(&q.mu);
    free(th);
    if (rc == 0 && q.failed < n) rc = err_set(err, q.err.code, "%s", q.err.msg);
    return rc;
}

/* ---- the command ------------------------------------------------------------ */

static void shell_word(FILE *f, const char *s)
{
    if (*s && strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                        "0123456789._-/:=+,@%") == strlen(s)) {
        fputs(s, f);
        return;
    }
    fputc('\'', f);
    for (; *s; s++) {
        if (*s == '\'') fputs("'\\''", f);
        else fputc(*s, f);
    }
    fputc('\'', f);
}

/* The directory a scenario at path looks up its relative references in
 * first (sim/base/datapath.h): its own, "." for a bare name. */
static void scenario_dir(const char *path, char *out, size_t n)
{
    const char *slash = strrchr(path, '/');
    if (!slash) snprintf(out, n, ".");
    else snprintf(out, n, "%.*s", slash == path ? 1 : (int)(slash - path), path);
}

/* v as the command prints it: when it names a file the point read (looked
 * up as the loader looks it up, from the scenario's directory dir), that
 * file's absolute path (sim/base/datapath.h datapath_absolute), which reads
 * the same file from any directory; else v as given. */
static const char *value_as_read(const char *dir, const char *v, infiles_t *read,
                                 char *buf, size_t n)
{
    char found[4096], abs[4096];
    if (datapath_resolve(dir, v, found, sizeof found) != 0 ||
        datapath_absolute(found, buf, n) != 0)
        return v;
    for (size_t i = 0; i < infiles_count(read); i++)
        if (datapath_absolute(infiles_path(read, i), abs, sizeof abs) == 0 &&
            strcmp(abs, buf) == 0)
            return buf;
    return v;
}

/* value_as_read as a sweepspec_map_fn (sim/config/sweepspec.h), so that it
 * reaches the file names inside a flow value ({dist: empirical, file: F})
 * too. */
typedef struct as_read {
    const char *dir;
    infiles_t *read;
} as_read_t;

static const char *map_as_read(const char *v, void *ctx, char *buf, size_t n)
{
    const as_read_t *a = ctx;
    return value_as_read(a->dir, v, a->read, buf, n);
}

/* The point's command: its "# read PATH sha256 HEX" lines (the files its
 * load read, as a sidecar names them), then `specsim run` with the
 * scenario and every value that names a file by absolute path, so that it
 * runs the point from any directory. */
static int explain(FILE *f, const sweep_opts_t *o, const pool_t *p, uint64_t row,
                   err_t *err)
{
    if (row >= p->sp->npoints)
        return err_set(err, ERR_INPUT, "--explain %" PRIu64 ": the sweep has "
                       "points 0..%" PRIu64, row, p->sp->npoints - 1);
    int cap = p->nsets + p->sp->naxes + 1;
    scenario_override_t *ov = malloc((size_t)cap * sizeof *ov);
    int *idx = malloc((size_t)p->sp->naxes * sizeof *idx);
    if (!ov || !idx) {
        free(ov);
        free(idx);
        return err_set(err, ERR_RUNTIME, "out of memory");
    }
    char seedbuf[32], dir[4096], abs[4096];
    int nov = point_overrides(p, row, ov, idx, seedbuf);
    /* The point alone, from a source of its own: its set holds the files
     * this point reads and no other point's. */
    scenario_src_t *src = NULL;
    scenario_t s;
    int rc = scenario_src_open(o->scenario, &src, err);
    if (rc == 0 && (rc = scenario_src_load(src, ov, nov, &s, err)) == 0) {
        if (scenario_write_reads(&s, f) != 0) rc = err_set(err, ERR_RUNTIME, "write failed");
        scenario_fini(&s);
    }
    if (rc == 0 && datapath_absolute(o->scenario, abs, sizeof abs) != 0)
        rc = err_set(err, ERR_INPUT, "%s: path too long", o->scenario);
    scenario_dir(o->scenario, dir, sizeof dir);
    if (rc == 0) {
        fputs("specsim run ", f);
        shell_word(f, abs);
    }
    as_read_t ar = {dir, scenario_src_files(src)};
    for (int k = 0; k < nov && rc == 0; k++) {
        fputs(" --set ", f);
        /* A value that starts a flow node is YAML the loader parses: the
         * files named in it are mapped too. */
        const char *ov_v = ov[k].value;
        char *v = sweepspec_value_map(ov_v, ov_v[0] == '{' || ov_v[0] == '[',
                                      map_as_read, &ar);
        char *kv = v ? malloc(strlen(ov[k].path) + strlen(v) + 2) : NULL;
        if (!kv) {
            free(v);
            rc = err_set(err, ERR_RUNTIME, "out of memory");
            break;
        }
        sprintf(kv, "%s=%s", ov[k].path, v);
        shell_word(f, kv);
        free(kv);
        free(v);
    }
    if (rc == 0) fputc('\n', f);
    scenario_src_free(src);
    free(ov);
    free(idx);
    if (rc == 0 && (fflush(f) != 0 || ferror(f)))
        rc = err_set(err, ERR_RUNTIME, "write failed");
    return rc;
}

/* Neither the output nor, when it is to be written, its sidecar may be
 * the scenario file or one it reads (read: outfile.h compares them as
 * files, links and all). */
static int check_against_scenario(const sweep_opts_t *o, const char *out, int sidecar,
                                  infiles_t *read, err_t *err)
{
    char side[4096 + 64];
    if (sweepfile_sidecar_path(out, side, sizeof side))
        return err_set(err, ERR_INPUT, "%s: path too long", out);
    const outfile_role_t r[] = {{o->scenario, "the scenario", 0},
                                {out, "--out", 1},
                                {sidecar ? side : NULL, "--out's sidecar", 1}};
    return outfile_distinct(r, 3, err) != 0 || outfile_not_read(r, 3, read, err) != 0
               ? -1 : 0;
}

/* A character device or FIFO (outfile.h) is written through: no sidecar,
 * nothing to resume or overwrite. The fd, or -1. */
static int open_stream(const sweep_opts_t *o, const char *out, err_t *err)
{
    if (o->resume)
        return err_set(err, ERR_INPUT, "%s: --resume needs a regular file, not a "
                       "device or FIFO", out);
    int fd = open(out, O_WRONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) return err_set(err, ERR_RUNTIME, "%s: %s", out, strerror(errno));
    return fd;
}

/* Opens the output for appending, starting it or resuming it. Fills the
 * done[] marks of the points already there; *header_due is set when the
 * caller must write the header itself (a stream). Returns the fd or -1. */
static int open_output(const sweep_opts_t *o, const char *out, const char *sidecar,
                       const char *header, uint64_t total, unsigned char *done,
                       uint64_t *ndone, int *header_due, infiles_t *read, err_t *err)
{
    *ndone = 0;
    *header_due = 0;
    int fresh = 1;
    outfile_kind_t kind;
    if (sweepfile_check_out(out, err) != 0 || outfile_kind(out, &kind, err) != 0 ||
        check_against_scenario(o, out, 0, read, err) != 0)
        return -1;
    if (kind == OUTFILE_STREAM) {
        *header_due = 1;
        return open_stream(o, out, err);
    }
    if (o->resume) {
        if (sweepfile_resume(out, sidecar, header, total, o->shard_i, o->shard_n,
                             done, ndone, &fresh, err) != 0)
            return -1;
    } else if (!o->force && kind == OUTFILE_REGULAR) {
        return err_set(err, ERR_INPUT, "%s exists: --resume to continue that "
                       "sweep, --force to overwrite it", out);
    }
    if (fresh && (check_against_scenario(o, out, 1, read, err) != 0 ||
                  sweepfile_create(out, sidecar, header, err) != 0))
        return -1;
    int fd = open(out, O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd < 0) return err_set(err, ERR_RUNTIME, "%s: %s", out, strerror(errno));
    return fd;
}

/* The scenario file read and parsed once (*src), its sweep spec and base
 * scenario (with o's --set options), and a pool over them. 0, or -1 with
 * err (nothing to free). */
static int load_sweep(const sweep_opts_t *o, scenario_src_t **src, sweepspec_t *sp,
                      scenario_t *base, pool_t *p, err_t *err)
{
    memset(sp, 0, sizeof *sp);
    *src = NULL;
    if (strcmp(o->scenario, "-") == 0)
        return err_set(err, ERR_INPUT, "sweep needs a scenario file, not stdin");
    if (scenario_src_open(o->scenario, src, err) != 0) return -1;
    if (sweepspec_load_string(o->scenario, scenario_src_body(*src, NULL), sp, err) != 0)
        goto fail;
    if (o->independent_seeds) sp->independent_seeds = 1;
    if (scenario_src_load(*src, o->sets, o->nsets, base, err) != 0) goto fail;
    *p = (pool_t){.src = *src, .sp = sp, .sets = o->sets,
                  .nsets = o->nsets, .independent = sp->independent_seeds,
                  .base_seed = base->seed};
    return 0;
fail:
    sweepspec_fini(sp);
    scenario_src_free(*src);
    *src = NULL;
    return -1;
}

int sweep_explain(FILE *f, const sweep_opts_t *o, uint64_t row, err_t *err)
{
    sweepspec_t sp;
    scenario_t base;
    pool_t p;
    scenario_src_t *src;
    if (load_sweep(o, &src, &sp, &base, &p, err) != 0) return -1;
    int rc = explain(f, o, &p, row, err);
    scenario_fini(&base);
    sweepspec_fini(&sp);
    scenario_src_free(src);
    return rc;
}

int sweep_run(const sweep_opts_t *o, err_t *err)
{
    sweepspec_t sp;
    scenario_t base;
    pool_t p;
    int fd = -1, rc = -1;
    const char *out = o->out;
    char *header = NULL, *sidecar = NULL;
    unsigned char *done = NULL;
    uint64_t *todo = NULL;
    scenario_src_t *src = NULL;
    if (o->shard_n < 1 || o->shard_i >= o->shard_n)
        return err_set(err, ERR_INPUT, "--shard needs I/N with 0 <= I < N");
    if (o->resume && o->force)
        return err_set(err, ERR_INPUT, "--resume and --force exclude each other");
    if (load_sweep(o, &src, &sp, &base, &p, err) != 0) return -1;
    if (sweepspec_validate_src(&sp, src, o->sets, o->nsets, err) < 0) goto out;
    /* The checks loaded every axis value: a value that names a file they
     * read is that file's absolute path from here on, in the points' loads,
     * the rows and the sidecar, beside whose "# read" line (digest) it
     * stands. Written as given, a rerun of the sidecar from elsewhere read
     * another file of that name, or none (issue 28 item 1). The points read
     * the bytes the checks read (infiles_read: the same file by another
     * name), and a resume, which maps its axes the same way, compares equal
     * sidecars and rows. */
    {
        char dir[4096];
        scenario_dir(o->scenario, dir, sizeof dir);
        as_read_t ar = {dir, scenario_src_files(src)};
        if (sweepspec_map_values(&sp, map_as_read, &ar) != 0) {
            err_set(err, ERR_RUNTIME, "out of memory");
            goto out;
        }
    }

    /* The scenario's output: section as loaded, --set applied: its file is
     * the default output; a trace no sweep writes is refused, not ignored. */
    if (scenario_refuse_trace(&base, "a sweep", "give --trace to `specsim run` for one "
                              "point: --explain ROW prints its command", err) != 0)
        goto out;
    out = o->out ? o->out : (base.output.file[0] ? base.output.file : "-");
    int streamed = strcmp(out, "-") == 0;
    if (streamed && o->resume) {
        rc = err_set(err, ERR_INPUT, "--resume needs an output file (--out FILE.csv)");
        goto out;
    }
    if (o->per_group) {
        p.base = &base;
        p.ngroups = base.ngroups;
    }
    /* With precision: (the base's, or an axis over the section or its
     * keys) points stop at different counts: each row says its own. */
    p.precision = base.precision.relative > 0 || sweepspec_sets_precision(&sp);
    if (p.precision && sweepspec_refuse_replications_axis(&sp, "sweep", err) != 0) goto out;
    if (!(header = sweepfile_header(&sp, o->per_group ? &base : NULL, p.precision, err)))
        goto out;
    if (!(sidecar = sweepfile_sidecar_inputs(&base, &sp, scenario_src_files(src), err)))
        goto out;
    uint64_t total = sp.npoints, ndone = 0;
    done = calloc((size_t)total, 1);
    if (!done) { err_set(err, ERR_RUNTIME, "out of memory"); goto out; }
    int header_due = streamed;
    p.out = streamed ? "standard output" : out;
    if (streamed) fd = STDOUT_FILENO;
    else if ((fd = open_output(o, out, sidecar, header, total, done, &ndone,
                               &header_due, scenario_src_files(src), err)) < 0)
        goto out;
    if (header_due && sweepfile_append(fd, p.out, header, strlen(header), 1, err)) goto out;
    uint64_t in_shard = total / o->shard_n + (o->shard_i < total % o->shard_n);
    todo = malloc((size_t)(in_shard ? in_shard : 1) * sizeof *todo);
    if (!todo) { err_set(err, ERR_RUNTIME, "out of memory"); goto out; }
    size_t ntodo = 0;
    for (uint64_t q = o->shard_i; q < total; q += o->shard_n)
        if (!done[q]) todo[ntodo++] = q;
    p.todo = todo;
    p.ntodo = ntodo;
    long jobs = pool_jobs(o->jobs);
    progress_t pr = {.fn = o->progress, .ctx = o->progress_ctx,
                     .p = {.total = in_shard, .done_at_start = ndone, .done = ndone}};
    rc = run_pool(&p, jobs, fd, &pr, err);
    progress_show(&pr, 1);
out:
    if (fd > STDOUT_FILENO && close(fd) != 0 && rc == 0)
        rc = err_set(err, ERR_RUNTIME, "%s: close: %s", out, strerror(errno));
    scenario_fini(&base);
    sweepspec_fini(&sp);
    scenario_src_free(src);
    free(header);
    free(sidecar);
    free(done);
    free(todo);
    return rc;
}
