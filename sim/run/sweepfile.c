/* sweepfile — sweep CSV + sidecar: create, resume, append, merge (see
 * sweepfile.h). */
#include "run/sweepfile.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/infile.h"
#include "io/outfile.h"
#include "run/output.h"
#include "base/version.h"

/* Room for a command-line path plus the suffixes we add. */
enum { PATH_ROOM = 4096 + 64 };

int sweepfile_sidecar_path(const char *csv, char *out, size_t n)
{
    size_t len = strlen(csv);
    int w;
    if (len > 4 && strcmp(csv + len - 4, ".csv") == 0)
        w = snprintf(out, n, "%.*s.scenario.yaml", (int)(len - 4), csv);
    else
        w = snprintf(out, n, "%s.scenario.yaml", csv);
    return w < 0 || (size_t)w >= n ? -1 : 0;
}

/* Runs fn(f, arg) into a memory stream and returns the text (malloc'ed). */
static char *capture(int (*fn)(FILE *, const void *), const void *arg,
                     size_t *len, err_t *err)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    if (!f) {
        err_set(err, ERR_RUNTIME, "open_memstream: %s", strerror(errno));
        return NULL;
    }
    int rc = fn(f, arg);
    if (fclose(f) != 0 || rc != 0) {
        free(buf);
        err_set(err, ERR_RUNTIME, "formatting sweep output failed");
        return NULL;
    }
    if (len) *len = n;
    return buf;
}

typedef struct header_arg {
    const sweepspec_t *sp;
    const scenario_t *groups;
    int precision;
} header_arg_t;

static int header_fn(FILE *f, const void *arg)
{
    const header_arg_t *h = arg;
    const sweepspec_t *sp = h->sp;
    int ng = h->groups ? h->groups->ngroups : 0, nkeys = sp->naxes + 1 + h->precision;
    const char **keys = malloc((size_t)(nkeys + ng) * sizeof *keys);
    if (!keys) return -1;
    keys[0] = "point";
    for (int a = 0; a < sp->naxes; a++) keys[a + 1] = sp->axes[a].path;
    if (h->precision) keys[sp->naxes + 1] = "replications";
    const char **names = keys + nkeys;
    for (int g = 0; g < ng; g++) names[g] = h->groups->groups[g].name;
    int rc = output_csv_header_groups(f, keys, nkeys, names, ng);
    free(keys);
    return rc;
}

char *sweepfile_header(const sweepspec_t *sp, const scenario_t *groups, int precision,
                       err_t *err)
{
    header_arg_t h = {sp, groups, precision != 0};
    return capture(header_fn, &h, NULL, err);
}

typedef struct sidecar_arg {
    const scenario_t *base;
    const sweepspec_t *sp;
} sidecar_arg_t;

static int sidecar_body_fn(FILE *f, const void *arg)
{
    const sidecar_arg_t *a = arg;
    if (scenario_write_yaml(a->base, f) != 0) return -1;
    return sweepspec_write_yaml(a->sp, f);
}

/* The next line of text that is not a whole-line comment, or NULL at the
 * end; *len gets its length (without the newline). Comments (such as "fully
 * resolved from PATH") may differ between shards run from different
 * directories without the sweep being different. */
static const char *next_line(const char *s, size_t *len)
{
    while (*s) {
        const char *e = strchr(s, '\n');
        size_t n = e ? (size_t)(e - s) : strlen(s);
        const char *t = s + strspn(s, " \t");
        if (*t != '#' || t >= s + n) {
            *len = n;
            return s;
        }
        s += n + (e != NULL);
    }
    return NULL;
}

/* Length of a line without the "  # FILE" the scenario writer puts after a
 * card's key ("gpu:  # models/hardware/h200.yaml"): a sweep run from a
 * sidecar, whose cards are inline, must match the sweep that wrote it. Only
 * a comment right after "key:" is dropped, so no value is ever cut. */
static size_t content_len(const char *s, size_t n)
{
    const char *c = memchr(s, '#', n);
    if (!c) return n;
    size_t k = (size_t)(c - s);
    while (k > 0 && (s[k - 1] == ' ' || s[k - 1] == '\t')) k--;
    if (k == 0 || s[k - 1] != ':' || k == (size_t)(c - s) || memchr(s, '"', k) ||
        memchr(s, '\'', k))
        return n;
    return k;
}

/* Sidecars describe the same sweep: equal but for comment lines. */
static int sidecar_same(const char *a, const char *b)
{
    size_t na, nb;
    for (;;) {
        a = next_line(a, &na);
        b = next_line(b, &nb);
        if (!a || !b) return !a && !b;
        size_t ca = content_len(a, na), cb = content_len(b, nb);
        if (ca != cb || memcmp(a, b, ca) != 0) return 0;
        a += na + (a[na] == '\n');
        b += nb + (b[nb] == '\n');
    }
}

/* FNV-1a's loop, 64 bit, over the non-comment lines (card-origin comments
 * dropped, see content_len): a short fingerprint for humans comparing
 * sidecars; the checks compare the text itself. The offset is one digit
 * short of FNV's basis (14695981039346656037); the ids of sidecars already
 * written depend on it, so it stays. */
static uint64_t fnv1a(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    size_t n;
    while ((s = next_line(s, &n)) != NULL) {
        size_t c = content_len(s, n);
        for (size_t i = 0; i <= c; i++) {
            h ^= i < c ? (unsigned char)s[i] : (unsigned char)'\n';
            h *= 1099511628211ULL;
        }
        s += n + (s[n] == '\n');
    }
    return h;
}

/* "# read FILE sha256 HEX" for each file the sweep's loads read
 * (infiles_write_reads), so the sidecar says which card (of those next to
 * the scenario or in the specsim root) and which data were used, and a
 * rerun of it can tell when a file changed. Comment lines: shards run where
 * the root lies elsewhere still describe the same sweep. */
static char *inputs_text(infiles_t *files)
{
    if (infiles_count(files) == 0) return strdup("");
    return infiles_reads_text(files);
}

char *sweepfile_sidecar_inputs(const scenario_t *base, const sweepspec_t *sp,
                               infiles_t *files, err_t *err)
{
    sidecar_arg_t a = {base, sp};
    size_t n;
    char *body = capture(sidecar_body_fn, &a, &n, err);
    if (!body) return NULL;
    /* The version line is a comment: resume and merge compare sidecars
     * without comments, so a sweep may be continued by another build. */
    char head[256];
    int h = snprintf(head, sizeof head,
                     "# specsim sweep: points %" PRIu64 ", id %016" PRIx64 "\n"
                     "# written by %.160s\n",
                     sp->npoints, fnv1a(body), version_string());
    char *inputs = inputs_text(files);
    size_t ni = inputs ? strlen(inputs) : 0;
    char *out = inputs ? malloc((size_t)h + ni + n + 1) : NULL;
    if (!out) {
        free(body);
        free(inputs);
        err_set(err, ERR_RUNTIME, "out of memory");
        return NULL;
    }
    memcpy(out, head, (size_t)h);
    memcpy(out + h, inputs, ni);
    memcpy(out + h + ni, body, n + 1);
    free(body);
    free(inputs);
    return out;
}

int sweepfile_sidecar_points(const char *text, uint64_t *npoints)
{
    return sscanf(text, "# specsim sweep: points %" SCNu64, npoints) == 1 ? 0 : -1;
}

int sweepfile_row(FILE *f, const sweepspec_t *sp, uint64_t point,
                  const metrics_summary_t *m, int precision)
{
    enum { MAX_INLINE = 16 };
    const char *inl[MAX_INLINE + 2];
    const char **vals = sp->naxes < MAX_INLINE
                            ? inl : malloc((size_t)(sp->naxes + 2) * sizeof *vals);
    if (!vals) return -1;
    char idx[32], reps[32];
    snprintf(idx, sizeof idx, "%" PRIu64, point);
    snprintf(reps, sizeof reps, "%d", m->reps);
    vals[0] = idx;
    sweepspec_point(sp, point, vals + 1);
    vals[sp->naxes + 1] = reps;
    int rc = output_csv_row(f, vals, sp->naxes + 1 + (precision != 0), m);
    if (vals != inl) free(vals);
    return rc;
}

static int read_bytes(const char *path, char **out, size_t *len, err_t *err);

/* Reads a whole file. 0 ok, 1 when it does not exist, -1 on error. A NUL
 * byte is refused: no sweep file holds one, and the text is a C string. */
static int read_text(const char *path, char **out, err_t *err)
{
    size_t n;
    int rc = read_bytes(path, out, &n, err);
    if (rc == 0 && memchr(*out, 0, n)) {
        free(*out);
        *out = NULL;
        return err_set(err, ERR_INPUT, "%s: holds a NUL byte: not a sweep file", path);
    }
    return rc;
}

static int read_bytes(const char *path, char **out, size_t *len, err_t *err)
{
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f) {
        if (errno == ENOENT) return 1;
        return err_set(err, ERR_RUNTIME, "%s: %s", path, strerror(errno));
    }
    char *buf = NULL;
    size_t n = 0;
    FILE *m = open_memstream(&buf, &n);
    int bad = !m;
    char chunk[8192];
    size_t r;
    while (!bad && (r = fread(chunk, 1, sizeof chunk, f)) > 0)
        bad = fwrite(chunk, 1, r, m) != r;
    bad |= ferror(f);
    fclose(f);
    if (m && fclose(m) != 0) bad = 1;
    if (bad) {
        free(buf);
        return err_set(err, ERR_RUNTIME, "%s: read failed", path);
    }
    *out = buf;
    *len = n;
    return 0;
}

/* What goes into a file: fn(f, arg) writes it, 0 or -1. */
typedef int (*body_fn)(FILE *f, const void *arg);

static int body_text(FILE *f, const void *text)
{
    return fputs(text, f) == EOF ? -1 : 0;
}

/* Opens path (outfile.h) and writes the body into it, leaving the commit
 * to the caller. 0, or -1 with err and nothing left behind. */
static int write_body(outfile_t *o, const char *path, body_fn body, const void *arg,
                      err_t *err)
{
    if (outfile_open(o, path, err) != 0) return -1;
    errno = 0;
    if (body(o->f, arg) == 0) return 0;
    int e = errno;
    outfile_abort(o);
    return err_set(err, ERR_RUNTIME, "%s: write failed: %s", path,
                   e ? strerror(e) : "I/O error");
}

/* path, atomically, and sidecar_text into its sidecar: both are written
 * and synced before either is renamed, so that a full disk leaves neither
 * (not a sidecar without its CSV); the sidecar is renamed first, as a CSV
 * whose scenario is missing cannot be resumed. A CSV written through to a
 * device or FIFO gets no sidecar. */
static int write_with_sidecar(const char *path, body_fn body, const void *arg,
                              const char *sidecar_text, err_t *err)
{
    char side[PATH_ROOM];
    if (sweepfile_sidecar_path(path, side, sizeof side))
        return err_set(err, ERR_INPUT, "%s: path too long", path);
    outfile_t f, sf;
    if (write_body(&f, path, body, arg, err) != 0) return -1;
    if (f.stream) return outfile_commit(&f, err);
    if (write_body(&sf, side, body_text, sidecar_text, err) != 0) {
        outfile_abort(&f);
        return -1;
    }
    if (outfile_close(&sf, err) != 0 || outfile_close(&f, err) != 0 ||
        outfile_publish(&sf, err) != 0) {
        outfile_abort(&sf);
        outfile_abort(&f);
        return -1;
    }
    if (outfile_publish(&f, err) != 0) {
        unlink(sf.dest);   /* no sidecar for a CSV that was not written */
        return -1;
    }
    return 0;
}

int sweepfile_create(const char *csv, const char *sidecar, const char *header,
                     err_t *err)
{
    return write_with_sidecar(csv, body_text, header, sidecar, err);
}

/* 1 when the file at path begins as a sweep's sidecar does (its CSV is
 * then a sweep's): what `run` will not overwrite without --force. */
static int sweepfile_is_sidecar(const char *path)
{
    char line[64] = "";
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    int got = fgets(line, sizeof line, f) != NULL;
    fclose(f);
    uint64_t n;
    return got && sweepfile_sidecar_points(line, &n) == 0;
}

int sweepfile_check_replace(const char *path, const char *what, err_t *err)
{
    char side[PATH_ROOM];
    struct stat st;
    if (!path || stat(path, &st) != 0 || !S_ISREG(st.st_mode)) return 0;
    if (sweepfile_is_sidecar(path))
        return err_set(err, ERR_INPUT, "%s %s is a sweep's sidecar: give --force to "
                       "replace it, or another name", what, path);
    if (sweepfile_sidecar_path(path, side, sizeof side) == 0 && sweepfile_is_sidecar(side))
        return err_set(err, ERR_INPUT, "%s %s is a sweep's CSV (its sidecar %s says "
                       "so): give --force to replace it, or another name", what, path,
                       side);
    return 0;
}

/* Parses the leading point index of a row: digits followed by a comma. */
static int row_point(const char *line, uint64_t *point)
{
    const char *p = line;
    uint64_t v = 0;
    if (*p < '0' || *p > '9') return -1;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (v > (UINT64_MAX - 9) / 10) return -1;
        v = v * 10 + (uint64_t)(*p - '0');
    }
    if (*p != ',') return -1;
    *point = v;
    return 0;
}

/* ---- reading rows back ------------------------------------------------------ */

/* A CSV file read record by record (RFC 4180: a quoted field may hold
 * commas, doubled quotes and line breaks, as output.c writes an axis value
 * that has them), streaming, so resuming a large sweep holds one row at a
 * time. */
typedef struct records {
    FILE *f;
    const char *path;
    char *line;
    size_t lcap;
    char *rec;             /* the record, newline included, NUL-terminated */
    size_t len, cap;
    long lines;            /* lines read so far (for messages) */
} records_t;

static int rec_append(records_t *r, const char *s, size_t n)
{
    if (r->len + n + 1 > r->cap) {
        size_t nc = r->cap ? r->cap : 256;
        while (nc < r->len + n + 1) nc *= 2;
        char *b = realloc(r->rec, nc);
        if (!b) return -1;
        r->rec = b;
        r->cap = nc;
    }
    memcpy(r->rec + r->len, s, n);
    r->len += n;
    r->rec[r->len] = 0;
    return 0;
}

/* The next complete record (one whose newline lies outside quotes): 1. At
 * the end: 0, r->len then the length of a torn tail (0 when none). -1 with
 * err on a read error or a NUL byte (no sweep file holds one). */
static int next_record(records_t *r, err_t *err)
{
    r->len = 0;
    int quoted = 0;
    ssize_t n;
    while ((n = getline(&r->line, &r->lcap, r->f)) > 0) {
        r->lines++;
        /* C string handling would cut the row there (losing its newline). */
        if (memchr(r->line, 0, (size_t)n))
            return err_set(err, ERR_INPUT, "%s:%ld: a NUL byte: not a sweep file",
                           r->path, r->lines);
        if (rec_append(r, r->line, (size_t)n) != 0)
            return err_set(err, ERR_RUNTIME, "out of memory");
        for (ssize_t i = 0; i < n; i++) quoted ^= r->line[i] == '"';
        if (!quoted && r->line[n - 1] == '\n') return 1;
    }
    if (ferror(r->f)) return err_set(err, ERR_RUNTIME, "%s: read failed", r->path);
    return 0;
}

static void records_close(records_t *r)
{
    if (r->f) fclose(r->f);
    free(r->line);
    free(r->rec);
}

/* The next field of a record (without its newline) at *p (< end), unquoted
 * into *buf (grown as needed); *p moves past it and its comma, to end + 1
 * after the last field. -1 on allocation failure or a malformed quote. */
static int next_field(const char **p, const char *end, char **buf, size_t *cap)
{
    const char *s = *p;
    size_t n = 0;
    int quoted = s < end && *s == '"';
    if (quoted) s++;
    for (;; s++) {
        if (n + 2 > *cap) {
            size_t nc = *cap ? 2 * *cap : 64;
            char *b = realloc(*buf, nc);
            if (!b) return -1;
            *buf = b;
            *cap = nc;
        }
        if (s >= end) {
            if (quoted) return -1;
            break;
        }
        if (quoted && *s == '"') {
            if (s + 1 < end && s[1] == '"') {
                (*buf)[n++] = *s++;
                continue;
            }
            if (s + 1 < end && s[1] != ',') return -1;
            s++;
            break;
        }
        if (!quoted && *s == ',') break;
        (*buf)[n++] = *s;
    }
    (*buf)[n] = 0;
    *p = s + 1;
    return 0;
}

/* What a sweep file's rows are checked against: the sweep its sidecar
 * describes (axis values by point) and the header's field count. */
typedef struct rowcheck {
    sweepspec_t sp;
    size_t nfields;
    const char **vals;        /* [sp.naxes] */
    char *buf;
    size_t cap;
} rowcheck_t;

static void rowcheck_fini(rowcheck_t *rc)
{
    sweepspec_fini(&rc->sp);
    free(rc->vals);
    free(rc->buf);
}

/* From a sidecar's text (a runnable sweep scenario: its sweep: section lists
 * every axis value), the header line and the number of points the caller
 * holds rows for (the sidecar's first line says it; its sweep: section must
 * agree, or a row's point could lie past the caller's arrays). 0, or -1
 * with err. */
static int rowcheck_init(rowcheck_t *rc, const char *name, const char *sidecar,
                         const char *header, uint64_t total, err_t *err)
{
    memset(rc, 0, sizeof *rc);
    err_t e = {0};
    if (sweepspec_load_string(name, sidecar, &rc->sp, &e) != 0)
        return err_set(err, ERR_INPUT, "%s: not a sweep sidecar: %s", name, e.msg);
    if (rc->sp.npoints != total)
        return err_set(err, ERR_INPUT, "%s: not a sweep sidecar: its first line says "
                       "%" PRIu64 " points, its sweep: section has %" PRIu64, name, total,
                       rc->sp.npoints);
    const char *p = header, *end = header + strlen(header);
    if (end > p && end[-1] == '\n') end--;
    while (p <= end) {
        if (next_field(&p, end, &rc->buf, &rc->cap) != 0)
            return err_set(err, ERR_INPUT, "%s: malformed header", name);
        rc->nfields++;
    }
    rc->vals = malloc((size_t)(rc->sp.naxes + 1) * sizeof *rc->vals);
    if (!rc->vals) return err_set(err, ERR_RUNTIME, "out of memory");
    return 0;
}

/* Checks one record (rec[0..n), newline included) and reads its point: the
 * number, then every axis value as the sweep has it at that point, then as
 * many fields as the header. NULL when it is a row of the sweep, else why
 * not. */
static const char *row_check(rowcheck_t *rc, const char *rec, size_t n,
                             uint64_t *point)
{
    const char *p = rec, *end = rec + n - 1;
    if (row_point(rec, point) != 0) return "no point number";
    if (*point >= rc->sp.npoints) return "a point the sweep does not have";
    if (next_field(&p, end, &rc->buf, &rc->cap) != 0) return "malformed field";
    sweepspec_point(&rc->sp, *point, rc->vals);
    size_t k = 1;
    for (; p <= end; k++) {
        if (next_field(&p, end, &rc->buf, &rc->cap) != 0) return "malformed field";
        if (k <= (size_t)rc->sp.naxes && strcmp(rc->buf, rc->vals[k - 1]) != 0)
            return "axis values that are not those of its point";
    }
    if (k != rc->nfields) return k < rc->nfields ? "too few fields" : "too many fields";
    return NULL;
}

static int check_sidecar(const char *csv, const char *expect, err_t *err)
{
    char side[PATH_ROOM];
    if (sweepfile_sidecar_path(csv, side, sizeof side))
        return err_set(err, ERR_INPUT, "%s: path too long", csv);
    char *have;
    int rc = read_text(side, &have, err);
    if (rc < 0) return -1;
    if (rc == 1)
        return err_set(err, ERR_INPUT, "%s: cannot resume: its sidecar %s is "
                       "missing (use --force to start over)", csv, side);
    int same = sidecar_same(have, expect);
    free(have);
    if (!same)
        return err_set(err, ERR_INPUT, "%s: cannot resume: written by a "
                       "different sweep (the scenario, --set options or axes "
                       "differ from %s; use --force to start over)", csv, side);
    return 0;
}

int sweepfile_resume(const char *csv, const char *sidecar, const char *header,
                     uint64_t total, uint64_t si, uint64_t sn,
                     unsigned char *done, uint64_t *ndone, int *fresh,
                     err_t *err)
{
    *fresh = 0;
    *ndone = 0;
    records_t r = {.path = csv, .f = fopen(csv, "rb")};
    if (!r.f) {
        if (errno == ENOENT) { *fresh = 1; return 0; }
        return err_set(err, ERR_RUNTIME, "%s: %s", csv, strerror(errno));
    }
    rowcheck_t chk = {0};
    int rc = next_record(&r, err);
    if (rc == 0) {
        /* Not even a complete header: nothing was ever appended. Only an
         * empty file or a cut-off start of this sweep's header can be that;
         * a text without a final newline is someone's. */
        if (r.len == 0 || (r.len < strlen(header) && memcmp(r.rec, header, r.len) == 0))
            *fresh = 1;
        else
            rc = err_set(err, ERR_INPUT, "%s:1: cannot resume: not a sweep file (its "
                         "first line is not this sweep's header); use --force to "
                         "overwrite it", csv);
    }
    if (rc <= 0) goto out;
    if ((rc = check_sidecar(csv, sidecar, err)) != 0) goto out;
    if (r.len != strlen(header) || memcmp(r.rec, header, r.len) != 0) {
        rc = err_set(err, ERR_INPUT, "%s:1: cannot resume: the header differs "
                     "from this sweep's (use --force to start over)", csv);
        goto out;
    }
    if ((rc = rowcheck_init(&chk, csv, sidecar, header, total, err)) != 0) goto out;
    off_t good = (off_t)r.len;   /* end of the last complete record */
    long lineno = 2;
    /* Rows are appended in point order: a file this sweep (and shard) wrote
     * holds its first points, each once, in order. */
    uint64_t want = si;
    while ((rc = next_record(&r, err)) == 1) {
        uint64_t p = 0;
        const char *why = row_check(&chk, r.rec, r.len, &p);
        if (!why && (p >= total || p % sn != si))
            why = sn > 1 ? "a point of another shard" : "a point of another sweep";
        if (!why && p != want) why = "a point out of order (another --shard's file?)";
        if (why) {
            rc = err_set(err, ERR_INPUT, "%s:%ld: cannot resume: not a row of this "
                         "sweep%s: %s", csv, lineno, sn > 1 ? " and shard" : "", why);
            goto out;
        }
        done[p] = 1;
        (*ndone)++;
        want += sn;
        good += (off_t)r.len;
        for (size_t i = 0; i < r.len; i++) lineno += r.rec[i] == '\n';
    }
    if (rc < 0) goto out;
    if (r.len > 0 && truncate(csv, good) != 0)
        rc = err_set(err, ERR_RUNTIME, "%s: cannot truncate the torn last line: %s",
                     csv, strerror(errno));
out:
    rowcheck_fini(&chk);
    records_close(&r);
    return rc < 0 ? -1 : 0;
}

int sweepfile_append(int fd, const char *name, const char *buf, size_t n, int sync,
                     err_t *err)
{
    while (n > 0) {
        ssize_t w = write(fd, buf, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            return err_set(err, ERR_RUNTIME, "%s: write failed: %s", name, strerror(errno));
        }
        buf += w;
        n -= (size_t)w;
    }
    struct stat st;
    if (sync && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && fdatasync(fd) != 0)
        return err_set(err, ERR_RUNTIME, "%s: fdatasync failed: %s", name, strerror(errno));
    return 0;
}

/* ---- merge --------------------------------------------------------------- */

typedef struct merge_state {
    char *sidecar;        /* of parts[0] */
    char *header;
    uint64_t total;
    char **rows;          /* [total], owned records (with newline) */
    rowcheck_t chk;       /* against the first part's sidecar */
} merge_state_t;

static int merge_part(merge_state_t *m, const char *part, const char *first,
                      err_t *err)
{
    char side[PATH_ROOM];
    if (sweepfile_sidecar_path(part, side, sizeof side))
        return err_set(err, ERR_INPUT, "%s: path too long", part);
    char *text;
    int rc = read_text(side, &text, err);
    if (rc < 0) return -1;
    if (rc == 1)
        return err_set(err, ERR_INPUT, "%s: its sidecar %s is missing", part, side);
    if (!m->sidecar) {
        uint64_t total;
        if (sweepfile_sidecar_points(text, &total) != 0 || total == 0 ||
            total > SWEEPSPEC_MAX_POINTS) {
            free(text);
            return err_set(err, ERR_INPUT, "%s:1:1: not a sweep sidecar", side);
        }
        m->rows = calloc((size_t)total, sizeof *m->rows);
        if (!m->rows) {
            free(text);
            return err_set(err, ERR_RUNTIME, "out of memory");
        }
        m->total = total;
        m->sidecar = text;
    } else {
        int same = sidecar_same(text, m->sidecar);
        free(text);
        if (!same)
            return err_set(err, ERR_INPUT, "%s: not part of the same sweep as %s "
                           "(their sidecars differ)", part, first);
    }
    records_t r = {.path = part, .f = fopen(part, "rb")};
    if (!r.f) return err_set(err, ERR_INPUT, "%s: %s", part, strerror(errno));
    rc = next_record(&r, err);
    if (rc == 0) {
        rc = err_set(err, ERR_INPUT, "%s:1: no header", part);
    } else if (rc > 0 && !m->header) {
        m->header = strdup(r.rec);
        rc = m->header ? rowcheck_init(&m->chk, first, m->sidecar, m->header,
                                         m->total, err)
                       : err_set(err, ERR_RUNTIME, "out of memory");
    } else if (rc > 0 && strcmp(r.rec, m->header) != 0) {
        rc = err_set(err, ERR_INPUT, "%s:1: header differs from %s's", part, first);
    } else if (rc > 0) {
        rc = 0;
    }
    /* A torn tail of a killed shard (no newline ends it) is left out. */
    long lineno = 2;
    while (rc == 0 && (rc = next_record(&r, err)) == 1) {
        uint64_t p = 0;
        const char *why = row_check(&m->chk, r.rec, r.len, &p);
        rc = 0;
        if (why) {
            rc = err_set(err, ERR_INPUT, "%s:%ld: not a row of this sweep: %s", part,
                         lineno, why);
        } else if (m->rows[p]) {
            if (strcmp(m->rows[p], r.rec) != 0)
                rc = err_set(err, ERR_INPUT, "%s:%ld: point %" PRIu64 " differs "
                             "from the same point in another part", part, lineno, p);
        } else if (!(m->rows[p] = strdup(r.rec))) {
            rc = err_set(err, ERR_RUNTIME, "out of memory");
        }
        for (size_t i = 0; i < r.len; i++) lineno += r.rec[i] == '\n';
    }
    records_close(&r);
    return rc < 0 ? -1 : 0;
}

static int merge_body(FILE *f, const void *arg)
{
    const merge_state_t *m = arg;
    if (fputs(m->header, f) == EOF) return -1;
    for (uint64_t p = 0; p < m->total; p++)
        if (fputs(m->rows[p], f) == EOF) return -1;
    return 0;
}

/* merge's output may replace a sweep's results only when they are the
 * same sweep's (a merge run again writes the same bytes): another sweep's
 * sidecar beside it says the file holds results merge would destroy. */
static int merge_check_replace(const char *out, const char *sidecar, err_t *err)
{
    char side[PATH_ROOM];
    outfile_kind_t kind;
    if (outfile_kind(out, &kind, err) != 0) return -1;
    if (kind == OUTFILE_STREAM) return 0;   /* written through, no sidecar */
    if (sweepfile_is_sidecar(out))
        return err_set(err, ERR_INPUT, "the output %s is a sweep's sidecar: refusing "
                       "to replace it; give the output another name", out);
    if (sweepfile_sidecar_path(out, side, sizeof side))
        return err_set(err, ERR_INPUT, "%s: path too long", out);
    if (!sweepfile_is_sidecar(side)) return 0;
    char *text;
    int rc = read_text(side, &text, err);
    if (rc != 0) return rc < 0 ? -1 : 0;
    int same = sidecar_same(text, sidecar);
    free(text);
    if (same) return 0;
    return err_set(err, ERR_INPUT, "the output %s is another sweep's (its sidecar %s "
                   "differs from the parts'): refusing to replace its results; give "
                   "the output another name", out, side);
}

/* merge's output may be none of its parts nor their sidecars: it is
 * written after they are read, and would replace one of them. */
static int merge_check_out(const char *out, const char *const *parts, int nparts,
                           err_t *err)
{
    outfile_kind_t kind;
    if (outfile_kind(out, &kind, err) != 0 || sweepfile_check_out(out, err) != 0)
        return -1;
    char side[PATH_ROOM];
    if (sweepfile_sidecar_path(out, side, sizeof side))
        return err_set(err, ERR_INPUT, "%s: path too long", out);
    int n = 0, cap = 2 * nparts + 2;
    outfile_role_t *r = malloc((size_t)cap * sizeof *r);
    char (*psides)[PATH_ROOM] = malloc((size_t)nparts * sizeof *psides);
    int rc = 0;
    if (!r || !psides) rc = err_set(err, ERR_RUNTIME, "out of memory");
    for (int i = 0; rc == 0 && i < nparts; i++) {
        if (sweepfile_sidecar_path(parts[i], psides[i], sizeof psides[i]))
            rc = err_set(err, ERR_INPUT, "%s: path too long", parts[i]);
        r[n++] = (outfile_role_t){parts[i], "the part", 0};
        r[n++] = (outfile_role_t){psides[i], "the part's sidecar", 0};
    }
    if (rc == 0) {
        r[n++] = (outfile_role_t){out, "the output", 1};
        if (kind != OUTFILE_STREAM) r[n++] = (outfile_role_t){side, "the output's sidecar", 1};
        rc = outfile_distinct(r, n, err);
    }
    free(r);
    free(psides);
    return rc;
}

int sweepfile_check_out(const char *csv, err_t *err)
{
    size_t n = strlen(csv);
    if (n > 5 && strcasecmp(csv + n - 5, ".json") == 0)
        return err_set(err, ERR_INPUT, "%s: sweep files are CSV: name the output "
                       "FILE.csv (or any name but .json)", csv);
    return 0;
}

int sweepfile_merge(const char *out, const char *const *parts, int nparts,
                    err_t *err)
{
    merge_state_t m = {0};
    int rc = merge_check_out(out, parts, nparts, err);
    for (int i = 0; rc == 0 && i < nparts; i++)
        rc = merge_part(&m, parts[i], parts[0], err);
    uint64_t missing = 0, first = 0;
    for (uint64_t p = 0; rc == 0 && p < m.total; p++)
        if (!m.rows[p] && missing++ == 0) first = p;
    if (rc == 0 && missing)
        rc = err_set(err, ERR_RUNTIME, "%" PRIu64 " of %" PRIu64 " points are "
                     "missing (the first is point %" PRIu64 "): finish the shards "
                     "(rerun them with --resume) and merge again", missing,
                     m.total, first);
    if (rc == 0) rc = merge_check_replace(out, m.sidecar, err);
    if (rc == 0) rc = write_with_sidecar(out, merge_body, &m, m.sidecar, err);
    for (uint64_t p = 0; m.rows && p < m.total; p++) free(m.rows[p]);
    free(m.rows);
    free(m.sidecar);
    free(m.header);
    rowcheck_fini(&m.chk);
    return rc;
}
