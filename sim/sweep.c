/* sweep — `specsim sweep` / `specsim merge` (see sweep.h).
 *
 * Points run on a pool of threads; the calling thread is the only writer and
 * appends rows strictly in point order through a bounded reorder ring, so the
 * file is the same for any -j and a crash loses at most unfinished points.
 * Each point is an independent scenario_load + sim_run (both re-entrant).
 */
#include "sweep.h"

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

#include "err.h"
#include "metrics.h"
#include "rng.h"
#include "scenario.h"
#include "sim.h"
#include "sweepfile.h"
#include "sweepspec.h"

/* Points a worker may run ahead of the writer, per thread: bounds memory
 * while one slow point holds back the rows after it. */
#define RING_PER_THREAD 32

static const char usage_sweep[] =
    "usage: specsim sweep SCENARIO [-j N] [--shard I/N] [--resume] [--force]\n"
    "                     [--out FILE.csv] [--set PATH=VALUE]... [--seed N]\n"
    "                     [--reps R] [--independent-seeds] [--quiet]\n"
    "       specsim sweep --explain ROW SCENARIO [--set PATH=VALUE]...\n"
    "\n"
    "Runs every point of the scenario's sweep: section and writes one CSV row\n"
    "per point, in point order: point,<axis paths>,<metrics and _ci95>, plus\n"
    "the sidecar FILE.scenario.yaml (resolved base scenario and the axes).\n"
    "\n"
    "  -j, --jobs N         threads (default: number of cores)\n"
    "  --shard I/N          run only points I, I+N, I+2N, ... (0 <= I < N)\n"
    "  --resume             continue FILE.csv: skip the points already in it\n"
    "  --force              overwrite an existing FILE.csv\n"
    "  --out FILE.csv       output (default: the scenario's output.file, else\n"
    "                       stdout)\n"
    "  --set PATH=VALUE     override a key of the base scenario (repeatable)\n"
    "  --seed N, --reps R   same as --set seed=N, --set replications=R\n"
    "  --independent-seeds  seed each point from (seed, point) instead of\n"
    "                       common random numbers\n"
    "  --explain ROW        print the `specsim run` command for point ROW\n"
    "  --quiet              no progress line\n"
    "\n"
    "wall_s and events_per_s columns are left empty: they are the only\n"
    "metrics that differ between runs, and sweep files are byte-reproducible.\n"
    "Exit status: 0 ok, 1 runtime failure, 2 bad usage or bad scenario.\n";

static const char usage_merge[] =
    "usage: specsim merge OUT.csv PART.csv...\n"
    "\n"
    "Merges the CSVs of a sharded sweep (specsim sweep --shard I/N) into the\n"
    "file an unsharded run writes. The parts must come from one sweep (equal\n"
    "sidecars) and together hold every point.\n"
    "Exit status: 0 ok, 1 points missing or I/O failure, 2 bad usage or parts\n"
    "of different sweeps.\n";

typedef struct sweep_opts {
    const char *scenario;
    const char *out;
    long jobs;
    uint64_t shard_i, shard_n;
    int resume, force, quiet, independent_seeds, help;
    int has_explain;
    uint64_t explain;
    scenario_override_t *sets;   /* owned array; strings point into argv or */
    char **owned;                /* ... into these owned copies */
    int nsets, nowned;
} sweep_opts_t;

static void opts_free(sweep_opts_t *o)
{
    for (int i = 0; i < o->nowned; i++) free(o->owned[i]);
    free(o->owned);
    free(o->sets);
}

static int usage_error(const char *fmt, const char *arg)
{
    fputs("specsim sweep: ", stderr);
    fprintf(stderr, fmt, arg);
    fputs("\n(specsim sweep --help for usage)\n", stderr);
    return ERR_INPUT;
}

static int parse_u64(const char *s, uint64_t *out)
{
    char *end;
    if (!s || *s < '0' || *s > '9') return -1;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end || errno) return -1;
    *out = v;
    return 0;
}

/* Adds an override; `own` is a malloc'ed "PATH\0VALUE" block or NULL; `src`
 * is the option that gave it (NULL for --set: see scenario_override_t). */
static int add_set(sweep_opts_t *o, const char *path, const char *value,
                   const char *src, char *own)
{
    scenario_override_t *s = realloc(o->sets, (size_t)(o->nsets + 1) * sizeof *s);
    if (!s) { free(own); return -1; }
    o->sets = s;
    if (own) {
        char **w = realloc(o->owned, (size_t)(o->nowned + 1) * sizeof *w);
        if (!w) { free(own); return -1; }
        o->owned = w;
        o->owned[o->nowned++] = own;
    }
    o->sets[o->nsets] = (scenario_override_t){.path = path, .value = value,
                                              .src = src};
    o->nsets++;
    return 0;
}

static int add_set_arg(sweep_opts_t *o, const char *arg)
{
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg) return usage_error("--set needs PATH=VALUE, got '%s'", arg);
    char *own = strdup(arg);
    if (!own) return ERR_RUNTIME;
    own[eq - arg] = '\0';
    return add_set(o, own, own + (eq - arg) + 1, NULL, own) ? ERR_RUNTIME : 0;
}

/* `--opt VALUE` or `--opt=VALUE`; advances *i past a separate value. */
static const char *opt_value(int argc, char **argv, int *i, const char *name)
{
    const char *a = argv[*i];
    size_t n = strlen(name);
    if (strncmp(a, name, n) == 0 && a[n] == '=') return a + n + 1;
    if (strcmp(a, name) == 0 && *i + 1 < argc) return argv[++*i];
    return NULL;
}

static int is_opt(const char *a, const char *name)
{
    size_t n = strlen(name);
    return strncmp(a, name, n) == 0 && (a[n] == '\0' || a[n] == '=');
}

static int parse_opts(sweep_opts_t *o, int argc, char **argv)
{
    memset(o, 0, sizeof *o);
    o->shard_n = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        int rc = 0;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            o->help = 1;
        } else if (strcmp(a, "--resume") == 0) {
            o->resume = 1;
        } else if (strcmp(a, "--force") == 0) {
            o->force = 1;
        } else if (strcmp(a, "--quiet") == 0 || strcmp(a, "-q") == 0) {
            o->quiet = 1;
        } else if (strcmp(a, "--independent-seeds") == 0) {
            o->independent_seeds = 1;
        } else if (strncmp(a, "-j", 2) == 0 && a[2] && a[2] != '-') {
            uint64_t j;
            if (parse_u64(a + 2, &j) || j < 1 || j > 4096)
                return usage_error("-j needs a thread count >= 1, got '%s'", a + 2);
            o->jobs = (long)j;
        } else if (strcmp(a, "-j") == 0 || is_opt(a, "--jobs")) {
            uint64_t j;
            v = opt_value(argc, argv, &i, strcmp(a, "-j") == 0 ? "-j" : "--jobs");
            if (parse_u64(v, &j) || j < 1 || j > 4096)
                return usage_error("-j needs a thread count >= 1, got '%s'",
                                   v ? v : "nothing");
            o->jobs = (long)j;
        } else if (is_opt(a, "--shard")) {
            v = opt_value(argc, argv, &i, "--shard");
            const char *slash = v ? strchr(v, '/') : NULL;
            char ibuf[32];
            if (!slash || (size_t)(slash - v) >= sizeof ibuf)
                return usage_error("--shard needs I/N, got '%s'", v ? v : "nothing");
            memcpy(ibuf, v, (size_t)(slash - v));
            ibuf[slash - v] = '\0';
            if (parse_u64(ibuf, &o->shard_i) || parse_u64(slash + 1, &o->shard_n) ||
                o->shard_n < 1 || o->shard_i >= o->shard_n)
                return usage_error("--shard needs I/N with 0 <= I < N, got '%s'", v);
        } else if (is_opt(a, "--out") || strcmp(a, "-o") == 0) {
            v = opt_value(argc, argv, &i, strcmp(a, "-o") == 0 ? "-o" : "--out");
            if (!v || !*v) return usage_error("%s needs a file name", a);
            o->out = v;
        } else if (is_opt(a, "--set")) {
            v = opt_value(argc, argv, &i, "--set");
            if (!v) return usage_error("%s needs PATH=VALUE", a);
            rc = add_set_arg(o, v);
        } else if (is_opt(a, "--seed") || is_opt(a, "--reps")) {
            int seed = is_opt(a, "--seed");
            v = opt_value(argc, argv, &i, seed ? "--seed" : "--reps");
            uint64_t x;
            if (parse_u64(v, &x))
                return usage_error("%s needs a non-negative integer", a);
            /* Messages name the option typed, not a --set the user never gave. */
            rc = add_set(o, seed ? "seed" : "replications", v,
                         seed ? "--seed" : "--reps", NULL) ? ERR_RUNTIME : 0;
        } else if (is_opt(a, "--explain")) {
            v = opt_value(argc, argv, &i, "--explain");
            if (parse_u64(v, &o->explain))
                return usage_error("--explain needs a row (point) number, got '%s'",
                                   v ? v : "nothing");
            o->has_explain = 1;
        } else if (a[0] == '-' && a[1]) {
            return usage_error("unknown option '%s'", a);
        } else if (o->scenario) {
            return usage_error("one scenario only (extra argument '%s')", a);
        } else {
            o->scenario = a;
        }
        if (rc) return rc;
    }
    if (o->help) return 0;
    if (!o->scenario) return usage_error("%s", "no SCENARIO given");
    if (o->resume && o->force)
        return usage_error("%s", "--resume and --force exclude each other");
    return 0;
}

/* ---- running points ------------------------------------------------------- */

typedef struct slot {
    int done;                 /* guarded by pool.mu */
    int rc;
    metrics_summary_t m;
    err_t err;
} slot_t;

typedef struct pool {
    const char *scenario;
    const sweepspec_t *sp;
    const scenario_override_t *sets;
    int nsets;
    int independent;
    uint64_t base_seed;

    const uint64_t *todo;     /* points to run, ascending */
    size_t ntodo;
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

static int run_point(const pool_t *p, uint64_t point, metrics_summary_t *m,
                     err_t *err)
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
    if (scenario_load(p->scenario, ov, nov, &s, err) != 0) goto out;
    sim_options_t opt = {.trace = NULL, .quiet = 1};
    memset(m, 0, sizeof *m);
    rc = sim_run(&s, &opt, m, err);
    scenario_fini(&s);
    /* Wall-clock metrics differ between runs; leaving them empty keeps sweep
     * files byte-identical across -j, shards and resumes. */
    m->value[METRIC_WALL_S] = m->ci95[METRIC_WALL_S] = NAN;
    m->value[METRIC_EVENTS_PER_S] = m->ci95[METRIC_EVENTS_PER_S] = NAN;
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
        s->rc = run_point(p, p->todo[k], &s->m, &s->err);
        pthread_mutex_lock(&p->mu);
        s->done = 1;
        pthread_cond_broadcast(&p->cv);
        pthread_mutex_unlock(&p->mu);
    }
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

typedef struct progress {
    int on;
    uint64_t total, done0, done;
    double t0, last;
} progress_t;

static void progress_show(progress_t *pr, int final)
{
    if (!pr->on) return;
    double t = now_s();
    if (!final && t - pr->last < 0.2) return;
    pr->last = t;
    double rate = (double)(pr->done - pr->done0) / fmax(t - pr->t0, 1e-9);
    char eta[32] = "?";
    if (rate > 0) {
        double s = (double)(pr->total - pr->done) / rate;
        if (s < 120) snprintf(eta, sizeof eta, "%.0fs", s);
        else if (s < 7200) snprintf(eta, sizeof eta, "%.0fmin", s / 60);
        else snprintf(eta, sizeof eta, "%.1fh", s / 3600);
    }
    /* \033[K clears what a longer previous line left behind. */
    fprintf(stderr, "\rsweep: %" PRIu64 "/%" PRIu64 " points  %.1f points/s  ETA %s\033[K%s",
            pr->done, pr->total, rate, eta, final ? "\n" : "");
    fflush(stderr);
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

static int format_batch(const pool_t *p, size_t k0, size_t k1, char **buf,
                        size_t *len)
{
    FILE *f = open_memstream(buf, len);
    if (!f) return -1;
    int rc = 0;
    for (size_t k = k0; rc == 0 && k < k1; k++)
        rc = sweepfile_row(f, p->sp, p->todo[k], &p->ring[k % p->window].m);
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
    int dirty;        /* rows written since the last sync */
    double synced;    /* now_s() of the last sync */
} syncer_t;

static int sync_now(syncer_t *y, err_t *err)
{
    if (!y->dirty) return 0;
    y->dirty = 0;
    y->synced = now_s();
    return sweepfile_append(y->fd, "", 0, 1, err);
}

/* With p->mu held: waits until slot k is done, syncing rows that have
 * waited long enough meanwhile. 0, or -1 (sync failed; p->mu still held). */
static int wait_done(pool_t *p, size_t k, syncer_t *y, err_t *err)
{
    while (!p->ring[k % p->window].done) {
        double left = y->synced + SWEEPFILE_SYNC_S - now_s();
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
    syncer_t y = {fd, 0, now_s()};
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
        int rc = sweepfile_append(fd, buf, len, 0, err);
        free(buf);
        if (rc) return -1;
        y.dirty = 1;
        if ((k1 == p->ntodo || now_s() - y.synced >= SWEEPFILE_SYNC_S) && sync_now(&y, err))
            return -1;
        pthread_mutex_lock(&p->mu);
        for (size_t j = k; j < k1; j++) p->ring[j % p->window].done = 0;
        p->next_write = k1;
        pthread_cond_broadcast(&p->cv);
        pthread_mutex_unlock(&p->mu);
        pr->done += k1 - k;
        progress_show(pr, 0);
        k = k1;
    }
    return 0;
}

static int run_pool(pool_t *p, long jobs, int fd, progress_t *pr, err_t *err)
{
    if (p->ntodo == 0) return 0;
    if ((size_t)jobs > p->ntodo) jobs = (long)p->ntodo;
    p->window = (size_t)jobs * RING_PER_THREAD;
    p->ring = calloc(p->window, sizeof *p->ring);
    pthread_t *th = calloc((size_t)jobs, sizeof *th);
    if (!p->ring || !th) {
        free(p->ring);
        free(th);
        return err_set(err, ERR_RUNTIME, "out of memory");
    }
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    long started = 0;
    int rc = 0;
    for (; started < jobs; started++) {
        int e = pthread_create(&th[started], NULL, worker, p);
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
    free(p->ring);
    p->ring = NULL;
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

static int explain(const sweep_opts_t *o, const pool_t *p, err_t *err)
{
    if (o->explain >= p->sp->npoints)
        return err_set(err, ERR_INPUT, "--explain %" PRIu64 ": the sweep has "
                       "points 0..%" PRIu64, o->explain, p->sp->npoints - 1);
    int cap = p->nsets + p->sp->naxes + 1;
    scenario_override_t *ov = malloc((size_t)cap * sizeof *ov);
    int *idx = malloc((size_t)p->sp->naxes * sizeof *idx);
    if (!ov || !idx) {
        free(ov);
        free(idx);
        return err_set(err, ERR_RUNTIME, "out of memory");
    }
    char seedbuf[32];
    int nov = point_overrides(p, o->explain, ov, idx, seedbuf);
    fputs("specsim run ", stdout);
    shell_word(stdout, o->scenario);
    for (int k = 0; k < nov; k++) {
        fputs(" --set ", stdout);
        char *kv = malloc(strlen(ov[k].path) + strlen(ov[k].value) + 2);
        if (!kv) break;
        sprintf(kv, "%s=%s", ov[k].path, ov[k].value);
        shell_word(stdout, kv);
        free(kv);
    }
    fputc('\n', stdout);
    free(ov);
    free(idx);
    return fflush(stdout) == 0 ? 0 : err_set(err, ERR_RUNTIME, "stdout: write failed");
}

/* Opens the output for appending, starting it or resuming it. Fills the
 * done[] marks of the points already there. Returns the fd or -1. */
static int open_output(const sweep_opts_t *o, const char *out, const char *sidecar,
                       const char *header, uint64_t total, unsigned char *done,
                       uint64_t *ndone, err_t *err)
{
    *ndone = 0;
    int fresh = 1;
    if (o->resume) {
        if (sweepfile_resume(out, sidecar, header, total, o->shard_i, o->shard_n,
                             done, ndone, &fresh, err) != 0)
            return -1;
    } else if (!o->force && access(out, F_OK) == 0) {
        return err_set(err, ERR_INPUT, "%s exists: --resume to continue that "
                       "sweep, --force to overwrite it", out);
    }
    if (fresh && sweepfile_create(out, sidecar, header, err) != 0) return -1;
    int fd = open(out, O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd < 0) return err_set(err, ERR_RUNTIME, "%s: %s", out, strerror(errno));
    return fd;
}

static int sweep_main(sweep_opts_t *o, err_t *err)
{
    sweepspec_t sp = {0};
    scenario_t base;
    int have_base = 0, fd = -1, rc = -1;
    const char *out = o->out;
    char *header = NULL, *sidecar = NULL;
    unsigned char *done = NULL;
    uint64_t *todo = NULL;
    if (strcmp(o->scenario, "-") == 0)
        return err_set(err, ERR_INPUT, "sweep needs a scenario file, not stdin");
    if (sweepspec_load(o->scenario, &sp, err) != 0) goto out;
    if (o->independent_seeds) sp.independent_seeds = 1;
    if (scenario_load(o->scenario, o->sets, o->nsets, &base, err) != 0) goto out;
    have_base = 1;
    pool_t p = {.scenario = o->scenario, .sp = &sp, .sets = o->sets,
                .nsets = o->nsets, .independent = sp.independent_seeds,
                .base_seed = base.seed};
    if (o->has_explain) { rc = explain(o, &p, err); goto out; }
    if (sweepspec_validate(&sp, o->scenario, NULL, o->sets, o->nsets, err) < 0) goto out;

    out = o->out ? o->out : (sp.out_file[0] ? sp.out_file : "-");
    int to_stdout = strcmp(out, "-") == 0;
    if (to_stdout && o->resume) {
        rc = err_set(err, ERR_INPUT, "--resume needs an output file (--out FILE.csv)");
        goto out;
    }
    if (!(header = sweepfile_header(&sp, err))) goto out;
    if (!(sidecar = sweepfile_sidecar(&base, &sp, err))) goto out;
    uint64_t total = sp.npoints, ndone = 0;
    done = calloc((size_t)total, 1);
    if (!done) { err_set(err, ERR_RUNTIME, "out of memory"); goto out; }
    if (to_stdout) {
        fd = STDOUT_FILENO;
        if (sweepfile_append(fd, header, strlen(header), 1, err)) goto out;
    } else if ((fd = open_output(o, out, sidecar, header, total, done, &ndone,
                                 err)) < 0) {
        goto out;
    }
    uint64_t in_shard = total / o->shard_n + (o->shard_i < total % o->shard_n);
    todo = malloc((size_t)(in_shard ? in_shard : 1) * sizeof *todo);
    if (!todo) { err_set(err, ERR_RUNTIME, "out of memory"); goto out; }
    size_t ntodo = 0;
    for (uint64_t q = o->shard_i; q < total; q += o->shard_n)
        if (!done[q]) todo[ntodo++] = q;
    p.todo = todo;
    p.ntodo = ntodo;
    long jobs = o->jobs;
    if (jobs <= 0) {
        long nc = sysconf(_SC_NPROCESSORS_ONLN);
        jobs = nc > 0 ? nc : 1;
    }
    progress_t pr = {.on = !o->quiet && isatty(STDERR_FILENO), .total = in_shard,
                     .done0 = ndone, .done = ndone, .t0 = now_s()};
    rc = run_pool(&p, jobs, fd, &pr, err);
    progress_show(&pr, 1);
out:
    if (fd > STDOUT_FILENO && close(fd) != 0 && rc == 0)
        rc = err_set(err, ERR_RUNTIME, "%s: close: %s", out, strerror(errno));
    if (have_base) scenario_fini(&base);
    sweepspec_fini(&sp);
    free(header);
    free(sidecar);
    free(done);
    free(todo);
    return rc;
}

int sweep_cli(int argc, char **argv)
{
    sweep_opts_t o;
    int rc = parse_opts(&o, argc, argv);
    if (rc == 0 && o.help) fputs(usage_sweep, stdout);
    if (rc == 0 && !o.help) {
        err_t err = {0};
        if (sweep_main(&o, &err) != 0) {
            fprintf(stderr, "specsim sweep: %s\n", err.msg);
            rc = err.code ? err.code : ERR_RUNTIME;
        }
    }
    opts_free(&o);
    return rc;
}

int merge_cli(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            fputs(usage_merge, stdout);
            return 0;
        }
        if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "specsim merge: unknown option '%s'\n%s", argv[i],
                    usage_merge);
            return ERR_INPUT;
        }
    }
    if (argc < 3) {
        fprintf(stderr, "specsim merge: needs OUT.csv and at least one part\n%s",
                usage_merge);
        return ERR_INPUT;
    }
    err_t err = {0};
    if (sweepfile_merge(argv[1], (const char *const *)argv + 2, argc - 2, &err)) {
        fprintf(stderr, "specsim merge: %s\n", err.msg);
        return err.code ? err.code : ERR_RUNTIME;
    }
    return 0;
}
