/* fuzz_reqtrace — the request-trace CSV reader (sim/model/workload_trace.h,
 * `tenants.workload.arrival: trace`).
 *
 * The input is a trace file, optionally followed by a line `#--scale` and a
 * time_scale on the next line (default 1; a value outside the scenario key's
 * range (0, 1e12] skips the input, as the loader refuses it first). The
 * file is read for a fixed fleet of six tenants: group a (tenants 0-2) and
 * group b (3-4) replay the trace, group c (5) does not, so GROUP:K names,
 * plain indices and a tenant that takes no trace are all reachable.
 *
 * A file holding a NUL byte must be refused at the first one's LINE:COL (a
 * NUL used to cut the text short, issue 28 item 7). A trace that loads must
 * keep the header's promises: every non-blank line after the header is one
 * request; requests are split by tenant (first[] from 0 to n, non-decreasing)
 * and only tenants that replay get any; within a tenant times do not
 * decrease and are finite and >= 0 after time_scale; lengths lie in
 * [1, WORKLOAD_TRACE_TOKENS_MAX]. Its requests, written back as a plain
 * `time_s,prompt_tokens,output_tokens,tenant` file in time order, must read
 * back (at scale 1) as the same trace.
 *
 * Hostile dates: when the first column is Azure's TIMESTAMP, a trace that
 * loads holds only real dates and times. Each row's first field that has
 * the shape YYYY-MM-DD hh:mm:ss[.frac] is checked here by timegm's round
 * trip (2023-02-31 comes back as March 3rd) and a second below 60 (no leap
 * second): the reader once carried such dates into the next month without
 * a word (issue 28 item 16).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "fuzz.h"
#include "model/workload_trace.h"

enum { NTENANTS = 6 };

static const int TAKES[NTENANTS] = {1, 1, 1, 1, 1, 0};
static const char *const GROUP_NAME[] = {"a", "b", "c"};
static const int GROUP_FIRST[] = {0, 3, 5}, GROUP_COUNT[] = {3, 2, 1};
static const workload_trace_fleet_t FLEET = {NTENANTS, TAKES, 3, GROUP_NAME,
                                             GROUP_FIRST, GROUP_COUNT};

/* The lines of t[0..n) that hold something besides white space, the header
 * among them (the reader skips the others). */
static long nonblank_lines(const char *t, size_t n)
{
    long count = 0;
    int seen = 0;
    for (size_t i = 0; i < n; i++) {
        if (t[i] == '\n') {
            count += seen;
            seen = 0;
        } else if (!isspace((unsigned char)t[i])) {
            seen = 1;
        }
    }
    return count + seen;
}

/* The first property tr breaks, or NULL. */
static const char *broken(const workload_trace_t *tr, long want_n)
{
    if (tr->ntenants != NTENANTS) return "ntenants is not the fleet's";
    if (tr->n != want_n) return "not one request per non-blank line after the header";
    if (tr->first[0] != 0 || tr->first[NTENANTS] != tr->n) return "first[] does not span the requests";
    for (int i = 0; i < NTENANTS; i++) {
        long a = tr->first[i], b = tr->first[i + 1];
        if (b < a) return "first[] decreases";
        if (!TAKES[i] && b > a) return "a tenant that takes no trace got requests";
        for (long k = a; k < b; k++) {
            const workload_req_t *r = &tr->req[k];
            if (!isfinite(r->t) || !(r->t >= 0)) return "a time is not finite and >= 0";
            if (k > a && r->t < tr->req[k - 1].t) return "a tenant's times decrease";
            if (r->prompt < 1 || r->prompt > WORKLOAD_TRACE_TOKENS_MAX ||
                r->output < 1 || r->output > WORKLOAD_TRACE_TOKENS_MAX)
                return "a length outside [1, WORKLOAD_TRACE_TOKENS_MAX]";
        }
    }
    return NULL;
}

/* NULL when the field f[0..n) (blanks trimmed) is not shaped like a
 * date-time or is a real one; else why not. Checked apart from the reader:
 * the day by timegm's round trip, which normalises what does not exist. */
static const char *bad_date(const char *f, size_t n)
{
    while (n && isspace((unsigned char)*f)) f++, n--;
    while (n && isspace((unsigned char)f[n - 1])) n--;
    char buf[64];
    if (n < 19 || n >= sizeof buf) return NULL;
    memcpy(buf, f, n);
    buf[n] = 0;
    static const char shape[] = "dddd-dd-dd?dd:dd:dd";
    for (int i = 0; i < 19; i++)
        if (shape[i] == 'd' ? !isdigit((unsigned char)buf[i])
                            : shape[i] != '?' && buf[i] != shape[i])
            return NULL;
    struct tm tm = {0};
    tm.tm_year = atoi(buf) - 1900;
    tm.tm_mon = atoi(buf + 5) - 1;
    tm.tm_mday = atoi(buf + 8);
    tm.tm_hour = atoi(buf + 11);
    tm.tm_min = atoi(buf + 14);
    int sec = atoi(buf + 17);
    struct tm t = tm;
    errno = 0;
    if (timegm(&t) == (time_t)-1 && errno) return NULL;   /* out of time_t's range */
    if (t.tm_year != tm.tm_year || t.tm_mon != tm.tm_mon || t.tm_mday != tm.tm_mday ||
        t.tm_hour != tm.tm_hour || t.tm_min != tm.tm_min)
        return "a date-time that does not exist loads";
    if (sec >= 60) return "a second of 60 or more (a leap second) loads";
    return NULL;
}

/* With TIMESTAMP the header's first column: the first field of every line
 * after the header through bad_date. NULL, or the first failure. */
static const char *bad_dates(const char *t, size_t n)
{
    const char *end = t + n, *nl = memchr(t, '\n', n);
    size_t h = strcspn(t, ",\r\n");
    while (h && isspace((unsigned char)t[h - 1])) h--;
    const char *p = t;
    while (p < t + h && isspace((unsigned char)*p)) p++;
    if ((size_t)(t + h - p) != 9 || strncasecmp(p, "TIMESTAMP", 9) != 0 || !nl)
        return NULL;
    for (p = nl + 1; p < end;) {
        const char *e = memchr(p, '\n', (size_t)(end - p));
        size_t len = e ? (size_t)(e - p) : (size_t)(end - p);
        size_t f = 0;
        while (f < len && p[f] != ',' && p[f] != '\r') f++;
        const char *why = bad_date(p, f);
        if (why) return why;
        p += len + 1;
    }
    return NULL;
}

/* tr as a plain trace with a tenant column, rows merged across tenants in
 * time order (ties: lower tenant first, which keeps each tenant's own order).
 * Malloc'ed text; *len its length. */
static char *write_back(const workload_trace_t *tr, size_t *len)
{
    char *text = NULL;
    FILE *m = open_memstream(&text, len);
    long next[NTENANTS];
    if (!m) fuzz_fail("out of memory", NULL);
    fputs("time_s,prompt_tokens,output_tokens,tenant\n", m);
    for (int i = 0; i < NTENANTS; i++) next[i] = tr->first[i];
    for (;;) {
        int best = -1;
        for (int i = 0; i < NTENANTS; i++)
            if (next[i] < tr->first[i + 1] &&
                (best < 0 || tr->req[next[i]].t < tr->req[next[best]].t))
                best = i;
        if (best < 0) break;
        const workload_req_t *r = &tr->req[next[best]++];
        fprintf(m, "%.17g,%d,%d,%d\n", r->t, r->prompt, r->output, best);
    }
    if (fclose(m) != 0) fuzz_fail("cannot write a trace back", NULL);
    return text;
}

static int same_trace(const workload_trace_t *a, const workload_trace_t *b)
{
    if (a->n != b->n || a->ntenants != b->ntenants) return 0;
    for (int i = 0; i <= a->ntenants; i++)
        if (a->first[i] != b->first[i]) return 0;
    for (long k = 0; k < a->n; k++)
        if (a->req[k].t != b->req[k].t || a->req[k].prompt != b->req[k].prompt ||
            a->req[k].output != b->req[k].output)
            return 0;
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_reset();
    const char *text = (const char *)data, *tail;
    size_t head, tail_len;
    fuzz_split(text, size, "#--scale", &head, &tail, &tail_len);
    double scale = 1;
    if (tail) {
        char buf[64];
        size_t l = tail_len < sizeof buf - 1 ? tail_len : sizeof buf - 1;
        memcpy(buf, tail, l);
        buf[l] = 0;
        char *end;
        scale = strtod(buf, &end);
        if (end == buf || !(scale > 0 && scale <= 1e12)) return 0;
    }
    char path[4096];
    fuzz_write_file("trace.csv", text, head, path, sizeof path);
    err_t err = {0, {0}};
    workload_trace_t *tr = workload_trace_create_in(NULL, path, path, scale, &FLEET, &err);
    /* What the reader sees: sim/io/infile.c drops a leading UTF-8
     * byte-order mark, so lines and columns count from after it. */
    const char *seen = text;
    size_t seen_len = head;
    if (head >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) {
        seen += 3;
        seen_len -= 3;
    }
    if (memchr(seen, 0, seen_len)) {
        if (tr) fuzz_fail("a trace with a NUL byte loads", NULL);
        fuzz_check_nul(seen, seen_len, path, err.msg);
        return 0;
    }
    if (!tr) {
        if (err.code != ERR_INPUT || !err.msg[0])
            fuzz_fail("a refused trace is not an input error with a message", err.msg);
        return 0;
    }
    const char *why = broken(tr, nonblank_lines(seen, seen_len) - 1);
    if (why) fuzz_fail("a loaded request trace breaks its promise:", why);
    if ((why = bad_dates(seen, seen_len)) != NULL) fuzz_fail(why, NULL);

    size_t len;
    char *back = write_back(tr, &len);
    char bpath[4096];
    fuzz_write_file("back.csv", back, len, bpath, sizeof bpath);
    workload_trace_t *tr2 = workload_trace_create_in(NULL, bpath, bpath, 1, &FLEET, &err);
    if (!tr2) {
        fprintf(stderr, "written back:\n%s\n", back);
        fuzz_fail("a request trace written back does not load", err.msg);
    }
    if (!same_trace(tr, tr2)) {
        fprintf(stderr, "written back:\n%s\n", back);
        fuzz_fail("a request trace written back reads differently", NULL);
    }
    free(back);
    workload_trace_free(tr2);
    workload_trace_free(tr);
    return 0;
}
