/* accstat — acceptance statistics and traces (see accstat.h). */
#include "accstat.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Blocks of gamma over one stream: complete ones counted by accepted
 * drafts. */
static void blocks(const uint8_t *o, int n, int gamma, accstat_t *s)
{
    int at = 0;
    while (at < n) {
        int a = 0;
        while (at + a < n && a < gamma && o[at + a]) a++;
        if (a < gamma && at + a >= n) return;   /* cut short by the text's end */
        s->counts[gamma][a]++;
        at += a + (a < gamma);
    }
}

static void runs(const uint8_t *o, int n, accstat_t *s)
{
    for (int i = 0; i < n;) {
        int j = i;
        while (j < n && o[j] == o[i]) j++;
        int len = j - i > ACCSTAT_RUNMAX ? ACCSTAT_RUNMAX : j - i;
        if (o[i]) s->run1[len]++;
        else s->run0[len]++;
        i = j;
    }
}

void accstat_compute(const accstat_stream_t *st, int ns, accstat_t *s)
{
    memset(s, 0, sizeof *s);
    for (int k = 0; k < ns; k++) {
        for (int i = 0; i < st[k].n; i++) s->accepted += st[k].o[i];
        s->outcomes += st[k].n;
        for (int g = 1; g <= ACCSTAT_GMAX; g++) blocks(st[k].o, st[k].n, g, s);
        runs(st[k].o, st[k].n, s);
    }
}

int accstat_write_trace(FILE *f, const char *const *header, int nh, const accstat_stream_t *st,
                        int ns)
{
    fprintf(f, "# format: positions\n");
    for (int i = 0; i < nh; i++) fprintf(f, "# %s\n", header[i]);
    for (int k = 0; k < ns; k++) {
        /* Marks where the stream (one prompt's text) starts, for a replay
         * per request (sim/model/accept_trace.c, per_request). */
        fprintf(f, "# request%s%s\n", st[k].label ? ": " : "", st[k].label ? st[k].label : "");
        int open = 0;
        for (int i = 0; i < st[k].n; i++) {
            fputc(st[k].o[i] ? '1' : '0', f);
            open = 1;
            if (!st[k].o[i]) {
                fputc('\n', f);
                open = 0;
            }
        }
        if (open) fputc('\n', f);
    }
    return ferror(f) ? -1 : 0;
}

long accstat_blocks(const accstat_t *s, int gamma)
{
    long n = 0;
    for (int a = 0; a <= gamma; a++) n += s->counts[gamma][a];
    return n;
}

double accstat_position(const accstat_t *s, int gamma, int i)
{
    long reached = 0, kept = 0;
    for (int a = i - 1; a <= gamma; a++) reached += s->counts[gamma][a];
    for (int a = i; a <= gamma; a++) kept += s->counts[gamma][a];
    return reached ? (double)kept / (double)reached : NAN;
}

long accstat_reached(const accstat_t *s, int gamma, int i)
{
    long reached = 0;
    for (int a = i - 1; a <= gamma; a++) reached += s->counts[gamma][a];
    return reached;
}

/* ---- reading a trace back ------------------------------------------------- */

void accstat_trace_free(accstat_trace_t *t)
{
    for (int i = 0; i < t->ns; i++) free(t->label[i]);
    for (int i = 0; i < t->nh; i++) free(t->header[i]);
    free(t->st);
    free(t->bits);
    free(t->label);
    free(t->header);
    memset(t, 0, sizeof *t);
}

/* Appends p to the array *a of *n strings. 0, or -1 (out of memory). */
static int push_str(char ***a, int *n, const char *p)
{
    char **na = realloc(*a, (size_t)(*n + 1) * sizeof *na);
    if (!na) return -1;
    *a = na;
    if (!(na[*n] = strdup(p))) return -1;
    (*n)++;
    return 0;
}

/* Streams are kept as start offsets into bits until the end (bits moves as
 * it grows). */
typedef struct tread {
    accstat_trace_t *t;
    long nbits, bcap;
    long *start;
    int scap;
} tread_t;

static int new_stream(tread_t *r, const char *label)
{
    accstat_trace_t *t = r->t;
    if (t->ns >= r->scap) {
        int nc = r->scap ? 2 * r->scap : 64;
        long *ns = realloc(r->start, (size_t)nc * sizeof *ns);
        if (!ns) return -1;
        r->start = ns;
        r->scap = nc;
    }
    char **nl = realloc(t->label, (size_t)(t->ns + 1) * sizeof *nl);
    if (!nl) return -1;
    t->label = nl;
    if (!(nl[t->ns] = strdup(label))) return -1;
    r->start[t->ns++] = r->nbits;
    return 0;
}

int accstat_read_trace(const char *path, accstat_trace_t *t, err_t *err)
{
    memset(t, 0, sizeof *t);
    FILE *f = fopen(path, "r");
    if (!f) return err_set(err, ERR_INPUT, "%s: cannot open: %s", path, strerror(errno));
    tread_t r = {t, 0, 0, NULL, 0};
    int positions = 0, data = 0, line = 0, rc = 0, c = 0;
    size_t cap = 0, len = 0;
    char *buf = NULL;
    while (rc == 0 && c != EOF) {
        /* One line, whatever its length. */
        len = 0;
        while ((c = fgetc(f)) != EOF && c != '\n') {
            if (len + 1 >= cap) {
                size_t nc = cap ? 2 * cap : 256;
                char *nb = realloc(buf, nc);
                if (!nb) {
                    rc = err_set(err, ERR_RUNTIME, "%s: out of memory", path);
                    break;
                }
                buf = nb;
                cap = nc;
            }
            buf[len++] = (char)c;
        }
        if (rc != 0) break;
        if (c == EOF && len == 0) break;
        line++;
        if (!buf) continue;   /* an empty line before any text */
        buf[len] = 0;
        while (len && (buf[len - 1] == ' ' || buf[len - 1] == '\t' || buf[len - 1] == '\r'))
            buf[--len] = 0;
        char *q = buf + strspn(buf, " \t");
        if (!*q) continue;
        if (*q == '#') {
            const char *b = q + 1 + strspn(q + 1, " \t");
            if (!strncmp(b, "format:", 7)) {
                const char *v = b + 7 + strspn(b + 7, " \t");
                if (strcmp(v, "positions") != 0)
                    rc = err_set(err, ERR_INPUT, "%s:%d: '# format: %.40s': only per-position "
                                 "traces ('# format: positions') can be fitted", path, line, v);
                positions = 1;
            } else if (!strncmp(b, "request", 7)) {
                const char *v = b + 7;
                v += strspn(v, " \t");
                if (*v == ':') v += 1 + strspn(v + 1, " \t");
                if (new_stream(&r, v) != 0) rc = err_set(err, ERR_RUNTIME, "%s: out of memory",
                                                         path);
                data = 1;   /* the header ends here */
            } else if (!data && push_str(&t->header, &t->nh, b) != 0) {
                rc = err_set(err, ERR_RUNTIME, "%s: out of memory", path);
            }
            continue;
        }
        if (!positions) {
            rc = err_set(err, ERR_INPUT, "%s:%d: not a per-position trace (no '# format: "
                         "positions' line before the data): accepted lengths per block hold "
                         "no per-draft outcomes to fit", path, line);
            break;
        }
        size_t n01 = strspn(q, "01");
        if (n01 == 0 || q[n01]) {
            rc = err_set(err, ERR_INPUT, "%s:%d: '%.60s' is not a string of 0s and 1s", path,
                         line, q);
            break;
        }
        if (t->ns == 0 && new_stream(&r, "") != 0) {
            rc = err_set(err, ERR_RUNTIME, "%s: out of memory", path);
            break;
        }
        data = 1;
        /* Only the drafts up to the first 0 were evaluated. */
        size_t used = strspn(q, "1");
        if (used < n01) used++;
        if (r.nbits + (long)used > r.bcap) {
            long nc = r.bcap ? 2 * r.bcap : 4096;
            while (nc < r.nbits + (long)used) nc *= 2;
            uint8_t *nb = realloc(t->bits, (size_t)nc);
            if (!nb) {
                rc = err_set(err, ERR_RUNTIME, "%s: out of memory", path);
                break;
            }
            t->bits = nb;
            r.bcap = nc;
        }
        for (size_t i = 0; i < used; i++) t->bits[r.nbits++] = q[i] == '1';
        if (r.nbits > INT_MAX / 2) {
            rc = err_set(err, ERR_INPUT, "%s:%d: too many outcomes", path, line);
            break;
        }
    }
    if (rc == 0 && ferror(f)) rc = err_set(err, ERR_RUNTIME, "%s: read error", path);
    fclose(f);
    free(buf);
    if (rc == 0 && r.nbits == 0)
        rc = err_set(err, ERR_INPUT, "%s: no draft outcome in the file", path);
    if (rc == 0 && !(t->st = calloc((size_t)t->ns, sizeof *t->st)))
        rc = err_set(err, ERR_RUNTIME, "%s: out of memory", path);
    for (int k = 0; rc == 0 && k < t->ns; k++) {
        long end = k + 1 < t->ns ? r.start[k + 1] : r.nbits;
        t->st[k] = (accstat_stream_t){t->bits + r.start[k], (int)(end - r.start[k]), t->label[k]};
    }
    free(r.start);
    if (rc != 0) accstat_trace_free(t);
    return rc;
}
