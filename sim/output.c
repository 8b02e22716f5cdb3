/* output — the human summary, the JSON object, CSV rows and atomic files.
 *
 * Machine formats print every number with "%.10g" so that one scenario and
 * seed give byte-identical files (wall_s and events_per_s aside); JSON has no
 * NaN or infinity, so both become null there, while CSV keeps "inf"/"-inf"
 * (spreadsheets and gnuplot read them) and leaves NaN empty.
 */
#include "output.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "outpath.h"
#include "proto.h"
#include "version.h"

/* ---- number and string formatting --------------------------------------- */

/* Writes x as a JSON value. Returns fprintf's result (< 0 on error). */
static int json_number(FILE *f, double x)
{
    if (!isfinite(x)) return fputs("null", f) == EOF ? -1 : 0;
    return fprintf(f, "%.10g", x);
}

/* One Unicode scalar encoded as UTF-8 at s (n bytes left): its length, or 0
 * when the bytes are not well-formed UTF-8 (overlong, surrogate, > U+10FFFF,
 * truncated). A strict JSON parser rejects such bytes, so they are replaced. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    size_t len;
    unsigned min;
    unsigned cp;
    if (c < 0x80) return 1;
    if ((c & 0xE0) == 0xC0) { len = 2; min = 0x80; cp = c & 0x1F; }
    else if ((c & 0xF0) == 0xE0) { len = 3; min = 0x800; cp = c & 0x0F; }
    else if ((c & 0xF8) == 0xF0) { len = 4; min = 0x10000; cp = c & 0x07; }
    else return 0;
    if (len > n) return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    return len;
}

static int json_string(FILE *f, const char *str)
{
    const unsigned char *s = (const unsigned char *)(str ? str : "");
    size_t n = strlen((const char *)s);
    if (fputc('"', f) == EOF) return -1;
    for (size_t i = 0; i < n;) {
        unsigned c = s[i];
        int rc = 0;
        if (c == '"') rc = fputs("\\\"", f);
        else if (c == '\\') rc = fputs("\\\\", f);
        else if (c == '\n') rc = fputs("\\n", f);
        else if (c == '\r') rc = fputs("\\r", f);
        else if (c == '\t') rc = fputs("\\t", f);
        else if (c < 0x20 || c == 0x7F) rc = fprintf(f, "\\u%04x", c);
        else if (c >= 0x80) {
            size_t len = utf8_len(s + i, n - i);
            if (len == 0) {
                rc = fputs("\\ufffd", f);
            } else {
                rc = fwrite(s + i, 1, len, f) == len ? 0 : EOF;
                i += len;
                if (rc == EOF) return -1;
                continue;
            }
        } else rc = fputc((int)c, f);
        if (rc == EOF || rc < 0) return -1;
        i++;
    }
    return fputc('"', f) == EOF ? -1 : 0;
}

static int csv_number(FILE *f, double x)
{
    if (isnan(x)) return 0;
    if (isinf(x)) return fputs(x > 0 ? "inf" : "-inf", f) == EOF ? -1 : 0;
    return fprintf(f, "%.10g", x) < 0 ? -1 : 0;
}

/* RFC 4180: a field with a comma, quote or line break is quoted, with
 * quotes doubled. */
static int csv_field(FILE *f, const char *s)
{
    if (!s) s = "";
    if (!strpbrk(s, ",\"\n\r")) return fputs(s, f) == EOF ? -1 : 0;
    if (fputc('"', f) == EOF) return -1;
    for (; *s; s++) {
        if (*s == '"' && fputc('"', f) == EOF) return -1;
        if (fputc(*s, f) == EOF) return -1;
    }
    return fputc('"', f) == EOF ? -1 : 0;
}

/* ---- human summary ------------------------------------------------------ */

enum summary_unit { U_TIME, U_TOKS, U_PLAIN, U_PCT, U_BYTES, U_COUNT, U_EVS };

typedef struct metric_view {
    int id;
    enum summary_unit unit;
    const char *label;  /* unit text for kinds with a fixed unit */
} metric_view_t;

typedef struct metric_group {
    const char *title;
    metric_view_t items[8];
    int n;
} metric_group_t;

static const metric_group_t summary_groups[] = {
    {"latency", {{METRIC_ITL_MEAN, U_TIME, ""}, {METRIC_ITL_P50, U_TIME, ""},
                 {METRIC_ITL_P95, U_TIME, ""}, {METRIC_ITL_P99, U_TIME, ""},
                 {METRIC_COMMIT_GAP_P99, U_TIME, ""}, {METRIC_TTFT_MEAN, U_TIME, ""},
                 {METRIC_TTFT_P99, U_TIME, ""}, {METRIC_E2E_MEAN, U_TIME, ""}}, 8},
    {"throughput", {{METRIC_TOKENS_PER_S_TENANT, U_TOKS, "tok/s"},
                    {METRIC_THROUGHPUT, U_TOKS, "tok/s"}}, 2},
    {"speculation", {{METRIC_ACCEPTANCE_RATE, U_PLAIN, ""},
                     {METRIC_ACCEPTED_LEN_MEAN, U_PLAIN, "tok/verdict"},
                     {METRIC_DRAFT_WASTE_FRAC, U_PCT, "%"},
                     {METRIC_EDGE_STALL_FRAC, U_PCT, "%"}}, 4},
    {"cloud", {{METRIC_GPU_UTIL, U_PCT, "%"}, {METRIC_GPU_WASTE_FRAC, U_PCT, "%"},
               {METRIC_BATCH_MEAN, U_PLAIN, "jobs"}, {METRIC_BATCH_P99, U_PLAIN, "jobs"},
               {METRIC_QUEUE_DELAY_MEAN, U_TIME, ""},
               {METRIC_QUEUE_DELAY_P99, U_TIME, ""}}, 6},
    {"network", {{METRIC_NET_UP_BYTES_PER_TOK, U_BYTES, "B/tok"},
                 {METRIC_NET_DOWN_BYTES_PER_TOK, U_BYTES, "B/tok"}}, 2},
    {"cost", {{METRIC_GPU_S_PER_KTOK, U_PLAIN, "GPU-s/ktok"}}, 1},
    {"bookkeeping", {{METRIC_REQUESTS_DONE, U_COUNT, "requests"},
                     {METRIC_EVENTS, U_COUNT, "events"},
                     {METRIC_WALL_S, U_TIME, ""},
                     {METRIC_EVENTS_PER_S, U_EVS, "events/s"}}, 4},
};
enum { NGROUPS = (int)(sizeof summary_groups / sizeof summary_groups[0]) };

/* A time's display unit, chosen from the value so the CI shares it. */
static double time_scale(double v, const char **unit)
{
    double a = fabs(v);
    if (a >= 1.0 || a == 0.0 || !isfinite(a)) { *unit = "s"; return 1.0; }
    if (a >= 1e-3) { *unit = "ms"; return 1e3; }
    if (a >= 1e-6) { *unit = "us"; return 1e6; }
    *unit = "ns";
    return 1e9;
}

/* Four significant digits, but whole numbers above 10^4 in full (a
 * throughput of 12345 tok/s reads better than 1.234e+04). */
static void fmt_num(char *buf, size_t sz, double v)
{
    if (!isfinite(v)) snprintf(buf, sz, "%s", isnan(v) ? "n/a" : v > 0 ? "inf" : "-inf");
    else if (fabs(v) >= 1e4 && fabs(v) < 1e15) snprintf(buf, sz, "%.0f", v);
    else snprintf(buf, sz, "%.4g", v);
}

/* A half-width is itself an estimate good to a digit or two: two
 * significant digits, written out in full when large. */
static void fmt_ci(char *buf, size_t sz, double v)
{
    if (fabs(v) >= 1e4 && fabs(v) < 1e15) {
        double p = pow(10.0, floor(log10(fabs(v))) - 1.0);
        snprintf(buf, sz, "%.0f", round(v / p) * p);
    } else {
        snprintf(buf, sz, "%.2g", v);
    }
}

/* One metric line: name, value right-aligned, "± ci" (when there are
 * replications to disagree), unit; columns line up across all lines. */
static int summary_line(FILE *f, int namew, const metric_view_t *mv,
                        const metrics_summary_t *m)
{
    double v = m->value[mv->id], ci = m->ci95[mv->id];
    double scale = 1.0;
    const char *unit = mv->label;
    char num[64], cis[80] = "", line[256];
    if (mv->unit == U_TIME) scale = time_scale(v, &unit);
    else if (mv->unit == U_PCT) scale = 100.0;
    if (mv->unit == U_COUNT && isfinite(v) && v == floor(v) && fabs(v) < 1e15)
        snprintf(num, sizeof num, "%.0f", v);
    else
        fmt_num(num, sizeof num, v * scale);
    if (isnan(v)) unit = "";
    if (m->reps > 1 && isfinite(v) && !isnan(ci)) {
        char c[64];
        fmt_ci(c, sizeof c, ci * scale);
        snprintf(cis, sizeof cis, "\u00b1 %s", c);
    }
    if (m->reps > 1)
        /* "±" is two bytes and one column: pad the field by one more */
        snprintf(line, sizeof line, "  %-*s %12s  %-*s %s", namew,
                 metric_name(mv->id), num, cis[0] ? 13 : 12, cis, unit);
    else
        snprintf(line, sizeof line, "  %-*s %12s %s", namew, metric_name(mv->id),
                 num, unit);
    size_t n = strlen(line);
    while (n > 0 && line[n - 1] == ' ') line[--n] = '\0';
    return fprintf(f, "%s\n", line) < 0 ? -1 : 0;
}

/* Each group's source when they differ, 1 when they do not or are not
 * known (src->edge says it all then). */
static int groups_differ(const scenario_t *s, const output_sources_t *src)
{
    return src && src->ngroups > 0 && src->ngroups == s->ngroups && s->groups &&
           strcmp(src->edge, "mixed") == 0;
}

/* "table (laptops), datasheet (phones, jetsons)": each source once, in the
 * order of the first group using it, with the groups that use it. */
static int summary_edge(FILE *f, const scenario_t *s, const output_sources_t *src)
{
    if (!src || !src->edge[0]) return fputs("unknown", f) == EOF ? -1 : 0;
    if (!groups_differ(s, src)) return fputs(src->edge, f) == EOF ? -1 : 0;
    enum { MAX_SOURCES = 8 };   /* sim.h names five */
    const char *seen[MAX_SOURCES];
    int nseen = 0, rc = 0;
    for (int g = 0; g < src->ngroups; g++) {
        const char *name = src->edge_group[g];
        int k = 0;
        while (k < nseen && strcmp(seen[k], name) != 0) k++;
        if (k < nseen || nseen == MAX_SOURCES) continue;
        seen[nseen++] = name;
        rc |= fprintf(f, "%s%s (", nseen > 1 ? ", " : "", name) < 0;
        for (int h = g, n = 0; h < src->ngroups; h++)
            if (strcmp(src->edge_group[h], name) == 0)
                rc |= fprintf(f, "%s%s", n++ ? ", " : "", s->groups[h].name) < 0;
        rc |= fputc(')', f) == EOF;
    }
    return rc ? -1 : 0;
}

static int summary_header(FILE *f, const scenario_t *s, const output_sources_t *src,
                          int reps)
{
    int rc = 0;
    rc |= fprintf(f, "scenario     %s%s%s%s\n", s->name[0] ? s->name : "(unnamed)",
                  s->file[0] ? "  (" : "", s->file, s->file[0] ? ")" : "") < 0;
    const proto_ops_t *p = s->protocol.proto;
    rc |= fprintf(f, "protocol     %s", p->name) < 0;
    if (p->verifies) rc |= fprintf(f, ", gamma %d", s->protocol.gamma) < 0;
    if (p->uses_window)
        rc |= fprintf(f, ", window %d", s->protocol.window) < 0;
    rc |= fprintf(f, "\ntenants      %d", s->ntenants) < 0;
    if (s->ngroups > 1 && s->groups) {
        rc |= fputs(" in groups", f) == EOF;
        for (int g = 0; g < s->ngroups; g++)
            rc |= fprintf(f, "%s %s: %d", g ? "," : "", s->groups[g].name,
                          s->groups[g].count) < 0;
    }
    rc |= fprintf(f, "\ncloud        %d replica%s\n", s->cloud.replicas,
                  s->cloud.replicas == 1 ? "" : "s") < 0;
    rc |= fprintf(f, "run          %.10g s (warm-up %.10g s), seed %" PRIu64
                  ", %d replication%s%s\n", s->duration, s->warmup, s->seed, reps,
                  reps == 1 ? "" : "s", reps > 1 ? " (± = 95% CI half-width)" : "") < 0;
    rc |= fputs("service time edge: ", f) == EOF;
    rc |= summary_edge(f, s, src) < 0;
    rc |= fprintf(f, ", cloud: %s\n", src && src->cloud[0] ? src->cloud : "unknown") < 0;
    return rc ? -1 : 0;
}

int output_summary(FILE *f, const scenario_t *s, const output_sources_t *src,
                   const metrics_summary_t *m)
{
    int namew = 0;
    int listed[METRIC_COUNT] = {0};
    for (int i = 0; i < METRIC_COUNT; i++) {
        int len = (int)strlen(metric_name(i));
        if (len > namew) namew = len;
    }
    if (summary_header(f, s, src, m->reps) < 0) return -1;
    for (int g = 0; g < NGROUPS; g++) {
        if (fprintf(f, "\n%s\n", summary_groups[g].title) < 0) return -1;
        for (int i = 0; i < summary_groups[g].n; i++) {
            const metric_view_t *mv = &summary_groups[g].items[i];
            listed[mv->id] = 1;
            if (summary_line(f, namew, mv, m) < 0) return -1;
        }
    }
    /* Metrics appended to the contract after this table was written still
     * show up, unformatted, rather than silently vanish. */
    int other = 0;
    for (int i = 0; i < METRIC_COUNT; i++) {
        if (listed[i]) continue;
        if (!other++ && fputs("\nother\n", f) == EOF) return -1;
        metric_view_t mv = {i, U_PLAIN, ""};
        if (summary_line(f, namew, &mv, m) < 0) return -1;
    }
    return ferror(f) ? -1 : 0;
}

void output_sources_fini(output_sources_t *src)
{
    if (!src) return;
    free(src->edge_group);
    src->edge_group = NULL;
    src->ngroups = 0;
}

/* ---- JSON --------------------------------------------------------------- */

static int json_key(FILE *f, const char *key)
{
    if (fputs(",\n  ", f) == EOF || json_string(f, key) < 0) return -1;
    return fputs(": ", f) == EOF ? -1 : 0;
}

/* {"phones": "datasheet", "laptops": "table"}, or null when not known. */
static int json_group_sources(FILE *f, const scenario_t *s, const output_sources_t *src)
{
    if (!src || src->ngroups < 1 || src->ngroups != s->ngroups || !s->groups)
        return fputs("null", f) == EOF ? -1 : 0;
    int rc = fputc('{', f) == EOF;
    for (int g = 0; g < src->ngroups; g++) {
        rc |= (g && fputs(", ", f) == EOF);
        rc |= json_string(f, s->groups[g].name) < 0;
        rc |= fputs(": ", f) == EOF;
        rc |= json_string(f, src->edge_group[g]) < 0;
    }
    rc |= fputc('}', f) == EOF;
    return rc ? -1 : 0;
}

int output_json(FILE *f, const scenario_t *s, const output_sources_t *src,
                const metrics_summary_t *m)
{
    char key[128];
    int rc = 0;
    rc |= fputs("{\n  \"scenario\": ", f) == EOF;
    rc |= json_string(f, s->name) < 0;
    rc |= json_key(f, "version") < 0;
    rc |= json_string(f, version_string()) < 0;
    rc |= json_key(f, "mode") < 0;
    rc |= json_string(f, s->protocol.proto->name) < 0;
    rc |= json_key(f, "seed") < 0;
    rc |= fprintf(f, "%" PRIu64, s->seed) < 0;
    rc |= json_key(f, "replications") < 0;
    rc |= fprintf(f, "%d", m->reps) < 0;
    rc |= json_key(f, "tenants") < 0;
    rc |= fprintf(f, "%d", s->ntenants) < 0;
    rc |= json_key(f, "edge_service_source") < 0;
    rc |= (src ? json_string(f, src->edge) : fputs("null", f)) < 0;
    rc |= json_key(f, "edge_service_sources") < 0;
    rc |= json_group_sources(f, s, src) < 0;
    rc |= json_key(f, "cloud_service_source") < 0;
    rc |= (src ? json_string(f, src->cloud) : fputs("null", f)) < 0;
    for (int i = 0; i < METRIC_COUNT && !rc; i++) {
        rc |= json_key(f, metric_name(i)) < 0;
        rc |= json_number(f, m->value[i]) < 0;
        if (m->reps > 1) {
            snprintf(key, sizeof key, "%s_ci95", metric_name(i));
            rc |= json_key(f, key) < 0;
            rc |= json_number(f, m->ci95[i]) < 0;
        }
    }
    rc |= fputs("\n}\n", f) == EOF;
    return rc || ferror(f) ? -1 : 0;
}

/* ---- CSV ---------------------------------------------------------------- */

int output_csv_header(FILE *f, const char *const *keys, int nkeys)
{
    int rc = 0;
    for (int k = 0; k < nkeys; k++) {
        rc |= (k && fputc(',', f) == EOF);
        rc |= csv_field(f, keys[k]) < 0;
    }
    for (int i = 0; i < METRIC_COUNT; i++) {
        rc |= fprintf(f, "%s%s,%s_ci95", (nkeys || i) ? "," : "", metric_name(i),
                      metric_name(i)) < 0;
    }
    rc |= fputc('\n', f) == EOF;
    return rc || ferror(f) ? -1 : 0;
}

int output_csv_row(FILE *f, const char *const *values, int nkeys,
                   const metrics_summary_t *m)
{
    int rc = 0;
    for (int k = 0; k < nkeys; k++) {
        rc |= (k && fputc(',', f) == EOF);
        rc |= csv_field(f, values[k]) < 0;
    }
    for (int i = 0; i < METRIC_COUNT; i++) {
        rc |= ((nkeys || i) && fputc(',', f) == EOF);
        rc |= csv_number(f, m->value[i]) < 0;
        rc |= fputc(',', f) == EOF;
        rc |= csv_number(f, m->ci95[i]) < 0;
    }
    rc |= fputc('\n', f) == EOF;
    return rc || ferror(f) ? -1 : 0;
}

/* ---- atomic files ------------------------------------------------------- */

/* Room for a command-line path (PATH_MAX on Linux) plus the suffixes. */
enum { OUT_PATH_MAX = 4096 + 64 };

FILE *output_open_atomic(const char *path, char *tmp, size_t tmpsz, err_t *err)
{
    int n = snprintf(tmp, tmpsz, "%s.tmp.%ld", path, (long)getpid());
    if (n < 0 || (size_t)n >= tmpsz) {
        err_set(err, ERR_RUNTIME, "%s: path too long", path);
        return NULL;
    }
    /* O_EXCL: never write through a link or over a file someone else is
     * writing; the name carries our pid, so a clash is a real conflict. */
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0) {
        err_set(err, ERR_RUNTIME, "%s: cannot create %s: %s", path, tmp,
                strerror(errno));
        return NULL;
    }
    FILE *f = fdopen(fd, "w");
    if (!f) {
        int e = errno;
        close(fd);
        unlink(tmp);
        err_set(err, ERR_RUNTIME, "%s: %s: %s", path, tmp, strerror(e));
        return NULL;
    }
    return f;
}

/* Flush, fsync and close: after this the bytes are on disk and f is gone,
 * whatever the result. On failure tmp is removed. */
static int atomic_finish(FILE *f, const char *tmp, const char *path, err_t *err)
{
    int e = 0;
    const char *what = NULL;
    if (fflush(f) == EOF || ferror(f)) { e = errno; what = "write"; }
    else if (fsync(fileno(f)) != 0) { e = errno; what = "fsync"; }
    if (fclose(f) == EOF && !what) { e = errno; what = "close"; }
    if (!what) return 0;
    unlink(tmp);
    return err_set(err, ERR_RUNTIME, "%s: %s failed: %s", path, what,
                   e ? strerror(e) : "I/O error");
}

/* The rename is what makes the file appear whole or not at all; the
 * directory is not fsynced, so a power cut may lose the new file but can
 * never expose a partial one. */
static int atomic_rename(const char *tmp, const char *path, err_t *err)
{
    if (rename(tmp, path) == 0) return 0;
    int e = errno;
    unlink(tmp);
    return err_set(err, ERR_RUNTIME, "%s: cannot rename %s onto it: %s", path,
                   tmp, strerror(e));
}

int output_commit(FILE *f, const char *tmp, const char *path, err_t *err)
{
    if (atomic_finish(f, tmp, path, err) < 0) return -1;
    return atomic_rename(tmp, path, err);
}

void output_abort(FILE *f, const char *tmp)
{
    if (f) fclose(f); /* result irrelevant: the file is being discarded */
    if (tmp && tmp[0]) unlink(tmp);
}

static int has_suffix(const char *s, const char *suf)
{
    size_t n = strlen(s), m = strlen(suf);
    return n > m && strcasecmp(s + n - m, suf) == 0;
}

/* The leading columns of a single run's CSV: what identifies the result. */
static int csv_single(FILE *f, const scenario_t *s, const output_sources_t *src,
                      const metrics_summary_t *m)
{
    static const char *const keys[] = {"scenario", "mode", "seed", "replications",
                                       "tenants", "edge_service_source",
                                       "cloud_service_source"};
    char seed[32], reps[16], ten[16];
    snprintf(seed, sizeof seed, "%" PRIu64, s->seed);
    snprintf(reps, sizeof reps, "%d", m->reps);
    snprintf(ten, sizeof ten, "%d", s->ntenants);
    const char *vals[] = {s->name, s->protocol.proto->name, seed,
                          reps, ten, src ? src->edge : "", src ? src->cloud : ""};
    if (output_csv_header(f, keys, 7) < 0) return -1;
    return output_csv_row(f, vals, 7, m);
}

typedef int (*body_fn)(FILE *f, const scenario_t *s, const output_sources_t *src,
                       const metrics_summary_t *m);

/* Results plus sidecar: both are written and synced to temporary files
 * before either is renamed, so a failure in writing leaves neither. The
 * sidecar is renamed first: results whose scenario is missing cannot be
 * reproduced. ext: the results' extension, replaced by ".scenario.yaml". */
static int write_with_sidecar(const char *path, size_t ext, body_fn body,
                              const scenario_t *s, const output_sources_t *src,
                              const metrics_summary_t *m, err_t *err)
{
    char side[OUT_PATH_MAX], tmp[OUT_PATH_MAX], stmp[OUT_PATH_MAX + 32];
    size_t stem = strlen(path) - ext;
    int n = snprintf(side, sizeof side, "%.*s.scenario.yaml", (int)stem, path);
    if (n < 0 || (size_t)n >= sizeof side)
        return err_set(err, ERR_RUNTIME, "%s: path too long", path);
    FILE *f = output_open_atomic(path, tmp, sizeof tmp, err);
    if (!f) return -1;
    errno = 0;
    if (body(f, s, src, m) < 0) {
        int e = errno;
        output_abort(f, tmp);
        return err_set(err, ERR_RUNTIME, "%s: write failed: %s", path,
                       e ? strerror(e) : "I/O error");
    }
    FILE *sf = output_open_atomic(side, stmp, sizeof stmp, err);
    if (!sf) {
        output_abort(f, tmp);
        return -1;
    }
    errno = 0;
    /* A comment, so that the sidecar still loads as a scenario. */
    if (fprintf(sf, "# written by %s\n", version_string()) < 0 ||
        scenario_write_yaml(s, sf) < 0) {
        int e = errno;
        output_abort(sf, stmp);
        output_abort(f, tmp);
        return err_set(err, ERR_RUNTIME, "%s: cannot write the scenario sidecar%s%s",
                       side, e ? ": " : "", e ? strerror(e) : "");
    }
    if (atomic_finish(sf, stmp, side, err) < 0) {
        output_abort(f, tmp);
        return -1;
    }
    if (atomic_finish(f, tmp, path, err) < 0) {
        unlink(stmp);
        return -1;
    }
    if (atomic_rename(stmp, side, err) < 0) {
        unlink(tmp);
        return -1;
    }
    if (atomic_rename(tmp, path, err) < 0) {
        unlink(side);   /* no sidecar for results that were not written */
        return -1;
    }
    return 0;
}

int output_check_path(const char *path, err_t *err)
{
    return outpath_check(path, err);
}

int output_write_file(const char *path, const scenario_t *s,
                      const output_sources_t *src, const metrics_summary_t *m,
                      err_t *err)
{
    if (output_check_path(path, err) != 0) return -1;
    if (has_suffix(path, ".json"))
        return write_with_sidecar(path, 5, output_json, s, src, m, err);
    return write_with_sidecar(path, 4, csv_single, s, src, m, err);
}
