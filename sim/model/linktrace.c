#include "model/linktrace.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/infile.h"

/* A file's lines, walked in place: the text is the reader's copy. Error
 * columns count from the line's first byte. */
typedef struct lines {
    const char *path, *key;
    char *text, *p, *end;
    long line;           /* 1-based number of the line last taken */
    int lead;            /* the blanks lines_next dropped from its start */
    err_t *err;
} lines_t;

__attribute__((format(printf, 4, 5)))
static int lt_err(const lines_t *L, long line, int col, const char *fmt, ...)
{
    char what[ERR_MSG_MAX / 2];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return err_set(L->err, ERR_INPUT, "%s:%ld:%d: %s: %s", L->path, line, col + L->lead,
                   L->key, what);
}

static int lines_open(lines_t *L, struct infiles *files, const char *path, const char *key,
                      err_t *err)
{
    size_t len;
    *L = (lines_t){.path = path, .key = key, .err = err};
    if (infiles_read(files, path, LINKTRACE_MAX_BYTES, &L->text, &len, err) != 0) return -1;
    int line, col;
    if (infile_find_nul(L->text, len, &line, &col)) {
        lt_err(L, line, col, "%s", INFILE_NUL_WHY);
        free(L->text);
        return -1;
    }
    L->p = L->text;
    L->end = L->text + len;
    return 0;
}

/* The next line that is not blank or a `#` comment, NUL-terminated without
 * its line break; NULL at the end. */
static char *lines_next(lines_t *L)
{
    while (L->p < L->end) {
        char *s = L->p, *nl = memchr(s, '\n', (size_t)(L->end - s));
        L->p = nl ? nl + 1 : L->end;
        if (nl) *nl = 0;
        else *L->end = 0;   /* the NUL infile_read keeps after the text */
        L->line++;
        size_t n = strlen(s);
        while (n && (s[n - 1] == '\r' || s[n - 1] == ' ' || s[n - 1] == '\t')) s[--n] = 0;
        L->lead = (int)strspn(s, " \t");
        s += L->lead;
        if (*s && *s != '#') return s;
    }
    return NULL;
}

/* Reads path into a new zeroed object of `size` bytes with parse (which
 * takes the file's lines and the object); free releases it on failure.
 * The object, or NULL with err set. */
static void *read_trace(struct infiles *files, const char *path, const char *key, err_t *err,
                        size_t size, int (*parse)(lines_t *, void *), void (*free_fn)(void *))
{
    lines_t L;
    if (lines_open(&L, files, path, key, err) != 0) return NULL;
    void *obj = calloc(1, size);
    if (!obj) err_set(err, ERR_RUNTIME, "%s: out of memory", path);
    if (!obj || parse(&L, obj) != 0) {
        free_fn(obj);
        obj = NULL;
    }
    free(L.text);
    return obj;
}

/* A plain decimal number (no hex, nan, or leading sign but '-', which the
 * range checks then refuse by name); `inf` when inf_ok. 0 or -1. */
static int number(const char *s, int inf_ok, double *v)
{
    if (inf_ok && !strcmp(s, "inf")) {
        *v = INFINITY;
        return 0;
    }
    if (!(*s == '-' || *s == '.' || (*s >= '0' && *s <= '9'))) return -1;
    if (strpbrk(s, "xXnNiI")) return -1;
    char *e;
    *v = strtod(s, &e);
    return *e || e == s || !isfinite(*v) ? -1 : 0;
}

/* ---- CSV ---------------------------------------------------------------- */

enum { C_T, C_RTT, C_UP_MBPS, C_DOWN_MBPS, C_UP, NCOL };
static const char *const COLS[NCOL] = {"t_s", "rtt_ms", "up_mbps", "down_mbps", "up"};
#define CSV_HEADER "t_s,rtt_ms,up_mbps,down_mbps,up"

/* Splits s at commas into at most NCOL fields with their columns (1-based
 * bytes); returns the count, NCOL + 1 for too many. */
static int fields(char *s, char *f[NCOL], int col[NCOL])
{
    int n = 0;
    char *base = s;
    for (char *p = s;; p++) {
        char *c = strchr(p, ',');
        if (c) *c = 0;
        if (n == NCOL) return NCOL + 1;
        p += strspn(p, " \t");
        size_t len = strlen(p);
        while (len && (p[len - 1] == ' ' || p[len - 1] == '\t')) p[--len] = 0;
        col[n] = (int)(p - base) + 1;
        f[n++] = p;
        if (!c) break;
        p = c;
    }
    return n;
}

static int grow(lines_t *L, linktrace_t *t, int *cap)
{
    if (t->n + 1 < *cap) return 0;
    int nc = *cap ? 2 * *cap : 64;
    double *a = realloc(t->t, (size_t)nc * sizeof *a);
    if (a) t->t = a;
    double *b = realloc(t->rtt, (size_t)nc * sizeof *b);
    if (b) t->rtt = b;
    double *c = realloc(t->bps[0], (size_t)nc * sizeof *c);
    if (c) t->bps[0] = c;
    double *d = realloc(t->bps[1], (size_t)nc * sizeof *d);
    if (d) t->bps[1] = d;
    unsigned char *u = realloc(t->up, (size_t)nc);
    if (u) t->up = u;
    if (!a || !b || !c || !d || !u)
        return err_set(L->err, ERR_RUNTIME, "%s: out of memory", L->path);
    *cap = nc;
    return 0;
}

/* One data row into segment t->n. */
static int csv_row(lines_t *L, linktrace_t *t, char *f[NCOL], const int col[NCOL])
{
    double v[NCOL];
    for (int c = C_RTT; c < NCOL; c++) {
        int rate = c == C_UP_MBPS || c == C_DOWN_MBPS;
        if (!*f[c])
            return lt_err(L, L->line, col[c], "%s: empty (only the last row, the "
                          "trace's end, gives t_s alone)", COLS[c]);
        if (number(f[c], rate, &v[c]) != 0)
            return lt_err(L, L->line, col[c], "%s: not a number (got '%.60s')", COLS[c], f[c]);
        if (rate && !(v[c] > 0))
            return lt_err(L, L->line, col[c], "%s: must be > 0 Mbit/s or inf "
                          "(a link that carries nothing is a row with up 0) (got '%.60s')",
                          COLS[c], f[c]);
    }
    if (!(v[C_RTT] >= 0 && v[C_RTT] <= 1e9))
        return lt_err(L, L->line, col[C_RTT], "rtt_ms: must be in [0, 1e9] (got '%.60s')",
                      f[C_RTT]);
    if (strcmp(f[C_UP], "0") != 0 && strcmp(f[C_UP], "1") != 0)
        return lt_err(L, L->line, col[C_UP], "up: must be 1 (up) or 0 (down) (got '%.60s')",
                      f[C_UP]);
    int k = t->n++;
    t->rtt[k] = v[C_RTT] / 1e3;
    t->bps[0][k] = v[C_UP_MBPS] * 1e6;
    t->bps[1][k] = v[C_DOWN_MBPS] * 1e6;
    t->up[k] = f[C_UP][0] == '1';
    return 0;
}

static int csv_parse(lines_t *L, void *obj)
{
    linktrace_t *t = obj;
    char *s = lines_next(L);
    if (!s || strcmp(s, CSV_HEADER) != 0)
        return lt_err(L, s ? L->line : 1, 1, "the first line must be the header '"
                      CSV_HEADER "' (got '%.60s')", s ? s : "");
    int cap = 0, ended = 0, any_up = 0;
    long end_line = 0;
    while ((s = lines_next(L))) {
        char *f[NCOL];
        int col[NCOL];
        int n = fields(s, f, col);
        if (ended)
            return lt_err(L, L->line, 1, "a row after the end row of line %ld (the "
                          "row that gives t_s alone ends the trace)", end_line);
        if (n != NCOL && n != 1)
            return lt_err(L, L->line, 1, "%s%d fields; a row has the %d of the header "
                          "(" CSV_HEADER "), or t_s alone to end the trace",
                          n > NCOL ? "more than " : "", n > NCOL ? NCOL : n, NCOL);
        double ts;
        if (number(f[C_T], 0, &ts) != 0)
            return lt_err(L, L->line, col[C_T], "t_s: not a number (got '%.60s')", f[C_T]);
        if (t->n == 0 && ts != 0)
            return lt_err(L, L->line, col[C_T], "t_s: the first row is at 0 (got '%.60s')",
                          f[C_T]);
        if (t->n > 0 && !(ts > t->t[t->n - 1]))
            return lt_err(L, L->line, col[C_T], "t_s: times must increase (%.17g after "
                          "%.17g)", ts, t->t[t->n - 1]);
        if (!(ts <= 1e12))
            return lt_err(L, L->line, col[C_T], "t_s: beyond 1e12 s (got '%.60s')", f[C_T]);
        int empty = 1;
        for (int c = 1; c < n; c++) empty &= !*f[c];
        if (grow(L, t, &cap) != 0) return -1;
        t->t[t->n] = ts;
        if (empty) {
            if (t->n == 0)
                return lt_err(L, L->line, 1, "the trace ends before its first row "
                              "(give the rows, then the end row)");
            ended = 1;
            end_line = L->line;
            continue;
        }
        if (csv_row(L, t, f, col) != 0) return -1;
        any_up |= t->up[t->n - 1];
    }
    if (!ended)
        return lt_err(L, L->line ? L->line : 1, 1, "no end row: the last row gives t_s "
                      "alone, the trace's length, after which it repeats");
    if (!any_up)
        return lt_err(L, end_line, 1, "every row is down (up 0): no message could ever "
                      "be sent");
    t->period = t->t[t->n];
    return 0;
}

static void csv_free(void *t) { linktrace_free(t); }

linktrace_t *linktrace_read_csv(struct infiles *files, const char *path, const char *key,
                                err_t *err)
{
    return read_trace(files, path, key, err, sizeof(linktrace_t), csv_parse, csv_free);
}

void linktrace_free(linktrace_t *t)
{
    if (!t) return;
    free(t->t);
    free(t->rtt);
    free(t->bps[0]);
    free(t->bps[1]);
    free(t->up);
    free(t);
}

/* ---- Mahimahi ------------------------------------------------------------ */

static int mm_parse(lines_t *L, void *obj)
{
    linkopp_t *o = obj;
    long cap = 0;
    char *s;
    long prev = -1;
    while ((s = lines_next(L))) {
        size_t d = strspn(s, "0123456789");
        if (d == 0 || s[d] || d > 12)
            return lt_err(L, L->line, 1, "not a timestamp: one whole number of "
                          "milliseconds per line (got '%.60s')", s);
        long ms = strtol(s, NULL, 10);
        if (ms < prev)
            return lt_err(L, L->line, 1, "timestamps must not decrease (%ld ms after "
                          "%ld ms)", ms, prev);
        prev = ms;
        if (o->n == cap) {
            long nc = cap ? 2 * cap : 1024;
            double *a = realloc(o->t, (size_t)nc * sizeof *a);
            if (!a) return err_set(L->err, ERR_RUNTIME, "%s: out of memory", L->path);
            o->t = a;
            cap = nc;
        }
        o->t[o->n++] = (double)ms / 1e3;
    }
    if (o->n == 0)
        return lt_err(L, L->line ? L->line : 1, 1, "no timestamps: a Mahimahi trace "
                      "holds one millisecond timestamp per delivery opportunity");
    if (prev == 0)
        return lt_err(L, L->line, 1, "the last timestamp is the trace's period and "
                      "must be > 0 ms");
    o->period = (double)prev / 1e3;
    return 0;
}

static void mm_free(void *o) { linkopp_free(o); }

linkopp_t *linktrace_read_mahimahi(struct infiles *files, const char *path,
                                   const char *key, err_t *err)
{
    return read_trace(files, path, key, err, sizeof(linkopp_t), mm_parse, mm_free);
}

void linkopp_free(linkopp_t *o)
{
    if (!o) return;
    free(o->t);
    free(o);
}
