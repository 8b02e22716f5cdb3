#include "model/workload_trace.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "io/infile.h"

enum { COL_TIME, COL_PROMPT, COL_OUTPUT, COL_TENANT, NCOLS };

/* Accepted header names per column: Azure's first, then the plain one. */
static const char *const COL_NAMES[NCOLS][2] = {
    {"TIMESTAMP", "time_s"},
    {"ContextTokens", "prompt_tokens"},
    {"GeneratedTokens", "output_tokens"},
    {"tenant", "tenant"},
};

typedef struct reader {
    const char *shown;
    double scale;
    const workload_trace_fleet_t *fleet;
    int col[NCOLS];         /* field index of each column; -1 = absent */
    int azure;              /* TIMESTAMP is a date-time */
    long day0;              /* Azure: the first row's day and second */
    double sec0;
    int have0;
    int rr;                 /* next round-robin position among takers */
    int *takers;            /* fleet indices that replay, in order */
    int ntakers;
    char **f;               /* the current line's fields (owned array) */
    int fcap;
    err_t *err;
} reader_t;

typedef struct row {
    double t;
    int prompt, output, tenant;
} row_t;

static int row_err(const reader_t *r, long line, int col, const char *what,
                   const char *field)
{
    return err_set(r->err, ERR_INPUT, "%s:%ld: %s: %s (got '%.60s')", r->shown,
                   line, COL_NAMES[col][r->azure ? 0 : 1], what, field);
}

static char *trim(char *s)
{
    while (isspace((unsigned char)*s)) s++;
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1])) s[--n] = 0;
    return s;
}

/* Splits line in place at commas into r->f; returns the number of fields,
 * or -1 (out of memory). The array grows with the line: a fixed one would
 * lose the columns past its end, and a required column there would be
 * reported missing. */
static int split(reader_t *r, char *line)
{
    int n = 0;
    for (char *p = line;; p++) {
        char *c = strchr(p, ',');
        if (c) *c = 0;
        if (n == r->fcap) {
            int nc = r->fcap ? 2 * r->fcap : 16;
            char **nf = realloc(r->f, (size_t)nc * sizeof *nf);
            if (!nf) return err_set(r->err, ERR_RUNTIME, "%s: out of memory", r->shown);
            r->f = nf;
            r->fcap = nc;
        }
        r->f[n++] = trim(p);
        if (!c) break;
        p = c;
    }
    return n;
}

static int header(reader_t *r, char *line)
{
    int n = split(r, line);
    if (n < 0) return -1;
    char **f = r->f;
    for (int c = 0; c < NCOLS; c++) r->col[c] = -1;
    for (int i = 0; i < n; i++)
        for (int c = 0; c < NCOLS; c++)
            for (int k = 0; k < 2; k++) {
                if (strcasecmp(f[i], COL_NAMES[c][k]) != 0) continue;
                /* Two fields for one column: either choice would silently
                 * drop the other's values. */
                if (r->col[c] >= 0)
                    return err_set(r->err, ERR_INPUT, "%s:1: header: fields %d ('%s') "
                                   "and %d ('%.60s') are both the %s column; keep one",
                                   r->shown, r->col[c] + 1, f[r->col[c]], i + 1, f[i],
                                   COL_NAMES[c][1]);
                r->col[c] = i;
                if (c == COL_TIME) r->azure = k == 0;
                break;   /* (tenant's two names are one) */
            }
    for (int c = 0; c < COL_TENANT; c++)
        if (r->col[c] < 0)
            return err_set(r->err, ERR_INPUT,
                           "%s:1: header: no column '%s' or '%s' (the first line "
                           "names the columns: TIMESTAMP,ContextTokens,"
                           "GeneratedTokens or time_s,prompt_tokens,output_tokens)",
                           r->shown, COL_NAMES[c][0], COL_NAMES[c][1]);
    return 0;
}

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
 * days_from_civil). */
static long days_from_civil(long y, long m, long d)
{
    y -= m <= 2;
    long era = (y >= 0 ? y : y - 399) / 400;
    long yoe = y - era * 400;
    long doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static int days_in_month(int y, int m)
{
    static const int days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return days[m - 1] + (m == 2 && leap);
}

#define DIGITS "0123456789"

/* digits[.digits], then with exponent [eE][+-]digits: strtod alone would
 * also take hex floats ("0x1p3"), "inf", "nan", and leading spaces, which
 * no trace writes and which would read as some other number. A leading
 * '-' is let through for the clearer "negative" message after it. */
static int decimal(const char *s, int exponent)
{
    const char *p = s + (*s == '-');
    size_t d = strspn(p, DIGITS);
    p += d;
    if (*p == '.') {
        size_t f = strspn(p + 1, DIGITS);
        d += f;
        p += 1 + f;
    }
    if (d == 0) return 0;
    if (exponent && (*p == 'e' || *p == 'E')) {
        p += 1 + (p[1] == '+' || p[1] == '-');
        size_t e = strspn(p, DIGITS);
        if (e == 0) return 0;
        p += e;
    }
    return *p == 0;
}

/* "YYYY-MM-DD hh:mm:ss[.frac]" (or a 'T' between) into a day and a second
 * of that day, kept apart so that differences keep sub-microsecond
 * precision. NULL, or why s is refused. */
static const char *parse_datetime(const char *s, long *day, double *sec)
{
    static const char *const shape = "not a date-time like 2023-11-16 18:15:46.6805900";
    int y, mo, d, h, mi, n = 0;
    char sep;
    if (strspn(s, DIGITS) != 4 ||
        sscanf(s, "%4d-%2d-%2d%c%2d:%2d:%n", &y, &mo, &d, &sep, &h, &mi, &n) != 6 ||
        n == 0 || (sep != ' ' && sep != 'T'))
        return shape;
    if (mo < 1 || mo > 12 || h > 23 || mi > 59 || h < 0 || mi < 0) return shape;
    /* days_from_civil would carry 2023-02-31 into March without a word. */
    if (d < 1 || d > days_in_month(y, mo)) return "no such day in that month";
    const char *p = s + n;
    size_t len = strlen(p);
    if (len && p[len - 1] == 'Z') len--;
    char buf[64];
    if (len == 0 || len >= sizeof buf) return shape;
    memcpy(buf, p, len);
    buf[len] = 0;
    if (*buf == '-' || !decimal(buf, 0)) return shape;
    double ss = strtod(buf, NULL);
    /* A leap second (:60) counted as an ordinary one would put it at the
     * next minute's :00, the same time as the row after it, or later. */
    if (!(ss < 60))
        return "second 60 or more (a leap second?): seconds are 0 to 59.999...";
    *day = days_from_civil(y, mo, d);
    *sec = h * 3600.0 + mi * 60.0 + ss;
    return NULL;
}

static int parse_time(reader_t *r, const char *s, long line, double *t)
{
    if (r->azure) {
        long day;
        double sec;
        const char *why = parse_datetime(s, &day, &sec);
        if (why) return row_err(r, line, COL_TIME, why, s);
        if (!r->have0) {
            r->day0 = day;
            r->sec0 = sec;
            r->have0 = 1;
        }
        *t = (double)(day - r->day0) * 86400.0 + (sec - r->sec0);
    } else {
        /* errno is not looked at: strtod sets ERANGE for a subnormal,
         * which is a number all the same (1e-310 s); an overflow is
         * caught by isfinite. */
        char *end;
        *t = strtod(s, &end);
        if (!decimal(s, 1) || end == s || *end || !isfinite(*t))
            return row_err(r, line, COL_TIME, "not a decimal number of seconds", s);
    }
    if (!(*t >= 0))
        return row_err(r, line, COL_TIME, "before the first row (or negative)", s);
    *t *= r->scale;
    /* time_scale goes up to 1e12: 1e300 s times that is infinite, a request
     * that would never arrive while the trace still counted it. */
    if (!isfinite(*t))
        return row_err(r, line, COL_TIME, "too large once multiplied by time_scale", s);
    return 0;
}

static int parse_tokens(const reader_t *r, const char *s, long line, int col,
                        int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || *end || errno || v < 0 || v > WORKLOAD_TRACE_TOKENS_MAX)
        return row_err(r, line, col, "not a token count in [0, 2^29]", s);
    /* A drawn length is at least 1 too: a request always yields a token. */
    *out = v < 1 ? 1 : (int)v;
    return 0;
}

static int group_tenant(const reader_t *r, const char *s, long line, int *out)
{
    const workload_trace_fleet_t *fl = r->fleet;
    const char *colon = strrchr(s, ':');
    size_t gl = (size_t)(colon - s);
    for (int g = 0; g < fl->ngroups; g++) {
        if (strlen(fl->group_name[g]) != gl || strncmp(fl->group_name[g], s, gl))
            continue;
        char *end;
        long k = strtol(colon + 1, &end, 10);
        if (end == colon + 1 || *end || k < 0 || k >= fl->group_count[g])
            return row_err(r, line, COL_TENANT,
                           "tenant number out of the group's range", s);
        *out = fl->group_first[g] + (int)k;
        return 0;
    }
    return row_err(r, line, COL_TENANT, "no tenant group of that name", s);
}

static int parse_tenant(reader_t *r, const char *s, long line, int *out)
{
    if (r->col[COL_TENANT] < 0) {
        *out = r->takers[r->rr];
        r->rr = (r->rr + 1) % r->ntakers;
        return 0;
    }
    if (strchr(s, ':')) {
        if (group_tenant(r, s, line, out) != 0) return -1;
    } else {
        char *end;
        long k = strtol(s, &end, 10);
        if (end == s || *end || k < 0 || k >= r->fleet->ntenants)
            return row_err(r, line, COL_TENANT,
                           "not a tenant index in range or GROUP:K", s);
        *out = (int)k;
    }
    if (!r->fleet->takes[*out])
        return row_err(r, line, COL_TENANT,
                       "that tenant's group does not use arrival: trace", s);
    return 0;
}

static int parse_row(reader_t *r, char *line, long lno, row_t *out, double prev)
{
    int n = split(r, line);
    if (n < 0) return -1;
    char **f = r->f;
    for (int c = 0; c < NCOLS; c++)
        if (r->col[c] >= n)
            return err_set(r->err, ERR_INPUT, "%s:%ld: %s: missing (%d fields)",
                           r->shown, lno, COL_NAMES[c][r->azure ? 0 : 1], n);
    if (parse_time(r, f[r->col[COL_TIME]], lno, &out->t) != 0) return -1;
    if (out->t < prev)
        return row_err(r, lno, COL_TIME, "earlier than the row before "
                       "(rows must be in time order)", f[r->col[COL_TIME]]);
    if (parse_tokens(r, f[r->col[COL_PROMPT]], lno, COL_PROMPT, &out->prompt) != 0 ||
        parse_tokens(r, f[r->col[COL_OUTPUT]], lno, COL_OUTPUT, &out->output) != 0)
        return -1;
    const char *ten = r->col[COL_TENANT] >= 0 ? f[r->col[COL_TENANT]] : "";
    return parse_tenant(r, ten, lno, &out->tenant);
}

static int blank(const char *s)
{
    while (isspace((unsigned char)*s)) s++;
    return *s == 0;
}

/* Reads every row of f into *rows (grown as needed). */
static int read_rows(reader_t *r, FILE *f, row_t **rows, long *nrows)
{
    char *line = NULL;
    size_t cap = 0, rcap = 0;
    long lno = 0;
    int rc = 0, seen_header = 0;
    *rows = NULL;
    *nrows = 0;
    while (rc == 0 && getline(&line, &cap, f) >= 0) {
        lno++;
        if (blank(line)) continue;
        if (!seen_header) {
            seen_header = 1;
            rc = header(r, line);
            continue;
        }
        if ((size_t)*nrows == rcap) {
            size_t nc = rcap ? 2 * rcap : 1024;
            row_t *nr = realloc(*rows, nc * sizeof *nr);
            if (!nr) {
                rc = err_set(r->err, ERR_RUNTIME, "%s: out of memory", r->shown);
                break;
            }
            *rows = nr;
            rcap = nc;
        }
        double prev = *nrows ? (*rows)[*nrows - 1].t : 0;
        rc = parse_row(r, line, lno, &(*rows)[*nrows], prev);
        if (rc == 0) (*nrows)++;
    }
    free(line);
    if (rc == 0 && ferror(f))
        rc = err_set(r->err, ERR_INPUT, "%s: read error", r->shown);
    if (rc == 0 && *nrows == 0)
        rc = err_set(r->err, ERR_INPUT, "%s: no requests (a header line, then "
                     "one request per line)", r->shown);
    return rc;
}

/* Groups the rows by tenant, keeping file order within each. */
static workload_trace_t *split_by_tenant(const row_t *rows, long n, int nt)
{
    workload_trace_t *tr = calloc(1, sizeof *tr);
    if (!tr) return NULL;
    tr->req = malloc((size_t)n * sizeof *tr->req);
    tr->first = calloc((size_t)nt + 1, sizeof *tr->first);
    if (!tr->req || !tr->first) {
        workload_trace_free(tr);
        return NULL;
    }
    tr->n = n;
    tr->ntenants = nt;
    /* Rows are in time order, so equal times are adjacent. */
    for (long k = 0, run = 0; k < n; k++) {
        run = k > 0 && rows[k].t == rows[k - 1].t ? run + 1 : 1;
        if (run > tr->most_at_once) tr->most_at_once = run;
    }
    for (long k = 0; k < n; k++) tr->first[rows[k].tenant + 1]++;
    for (int i = 0; i < nt; i++) tr->first[i + 1] += tr->first[i];
    long *fill = calloc((size_t)nt, sizeof *fill);
    if (!fill) {
        workload_trace_free(tr);
        return NULL;
    }
    for (long k = 0; k < n; k++) {
        int i = rows[k].tenant;
        tr->req[tr->first[i] + fill[i]++] =
            (workload_req_t){rows[k].t, rows[k].prompt, rows[k].output};
    }
    free(fill);
    return tr;
}

/* The trace through the command's set of files (regular files only, capped
 * in size: sim/io/infile.h), as a stream over the bytes read. *text is the
 * buffer under it, freed by the caller after fclose. */
static FILE *open_capped(struct infiles *files, const char *path, const char *shown,
                         char **text, err_t *err)
{
    size_t len;
    err_t rerr;
    if (infiles_read(files, path, WORKLOAD_TRACE_MAX_BYTES, text, &len, &rerr) != 0) {
        if (strcmp(shown, path) == 0) err_set(err, rerr.code, "%s", rerr.msg);
        else err_set(err, rerr.code, "%s: %s", shown, rerr.msg);
        return NULL;
    }
    int line, col;
    if (infile_find_nul(*text, len, &line, &col)) {
        err_set(err, ERR_INPUT, "%s:%d:%d: %s", shown, line, col, INFILE_NUL_WHY);
        return NULL;
    }
    FILE *f = fmemopen(*text, len, "r");
    if (!f) err_set(err, ERR_RUNTIME, "%s: %s", shown, strerror(errno));
    return f;
}

static int *takers_of(const workload_trace_fleet_t *fl, int *n)
{
    int *t = malloc((size_t)(fl->ntenants > 0 ? fl->ntenants : 1) * sizeof *t);
    *n = 0;
    if (!t) return NULL;
    for (int i = 0; i < fl->ntenants; i++)
        if (fl->takes[i]) t[(*n)++] = i;
    return t;
}

workload_trace_t *workload_trace_create_in(struct infiles *files, const char *path,
                                         const char *shown, double scale,
                                         const workload_trace_fleet_t *fleet,
                                         err_t *err)
{
    reader_t r = {.shown = shown, .scale = scale, .fleet = fleet, .err = err};
    r.takers = takers_of(fleet, &r.ntakers);
    if (!r.takers) {
        err_set(err, ERR_RUNTIME, "%s: out of memory", shown);
        return NULL;
    }
    char *text = NULL;
    FILE *f = open_capped(files, path, shown, &text, err);
    row_t *rows = NULL;
    long n = 0;
    workload_trace_t *tr = NULL;
    if (f && r.ntakers == 0)
        err_set(err, ERR_INPUT, "%s: no tenant uses arrival: trace", shown);
    if (f && r.ntakers > 0 && read_rows(&r, f, &rows, &n) == 0) {
        tr = split_by_tenant(rows, n, fleet->ntenants);
        if (!tr) err_set(err, ERR_RUNTIME, "%s: out of memory", shown);
    }
    if (f) fclose(f);
    free(text);
    free(rows);
    free(r.takers);
    free(r.f);
    return tr;
}

void workload_trace_free(workload_trace_t *tr)
{
    if (!tr) return;
    free(tr->req);
    free(tr->first);
    free(tr);
}
