/* sweepfile — sweep CSV + sidecar: create, resume, append, merge (see
 * sweepfile.h). */
#include "sweepfile.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "output.h"
#include "version.h"

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
} header_arg_t;

static int header_fn(FILE *f, const void *arg)
{
    const header_arg_t *h = arg;
    const sweepspec_t *sp = h->sp;
    int ng = h->groups ? h->groups->ngroups : 0;
    const char **keys = malloc((size_t)(sp->naxes + 1 + ng) * sizeof *keys);
    if (!keys) return -1;
    keys[0] = "point";
    for (int a = 0; a < sp->naxes; a++) keys[a + 1] = sp->axes[a].path;
    const char **names = keys + sp->naxes + 1;
    for (int g = 0; g < ng; g++) names[g] = h->groups->groups[g].name;
    int rc = output_csv_header_groups(f, keys, sp->naxes + 1, names, ng);
    free(keys);
    return rc;
}

char *sweepfile_header(const sweepspec_t *sp, const scenario_t *groups, err_t *err)
{
    header_arg_t h = {sp, groups};
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

/* FNV-1a, 64 bit, over the non-comment lines (card-origin comments dropped,
 * see content_len): a short fingerprint for
 * humans comparing sidecars; the checks compare the text itself. */
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

char *sweepfile_sidecar(const scenario_t *base, const sweepspec_t *sp, err_t *err)
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
    char *out = malloc((size_t)h + n + 1);
    if (!out) {
        free(body);
        err_set(err, ERR_RUNTIME, "out of memory");
        return NULL;
    }
    memcpy(out, head, (size_t)h);
    memcpy(out + h, body, n + 1);
    free(body);
    return out;
}

int sweepfile_sidecar_points(const char *text, uint64_t *npoints)
{
    return sscanf(text, "# specsim sweep: points %" SCNu64, npoints) == 1 ? 0 : -1;
}

int sweepfile_row(FILE *f, const sweepspec_t *sp, uint64_t point,
                  const metrics_summary_t *m)
{
    enum { MAX_INLINE = 16 };
    const char *inl[MAX_INLINE + 1];
    const char **vals = sp->naxes < MAX_INLINE
                            ? inl : malloc((size_t)(sp->naxes + 1) * sizeof *vals);
    if (!vals) return -1;
    char idx[32];
    snprintf(idx, sizeof idx, "%" PRIu64, point);
    vals[0] = idx;
    sweepspec_point(sp, point, vals + 1);
    int rc = output_csv_row(f, vals, sp->naxes + 1, m);
    if (vals != inl) free(vals);
    return rc;
}

/* Reads a whole file. 0 ok, 1 when it does not exist, -1 on error. */
static int read_text(const char *path, char **out, err_t *err)
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
    return 0;
}

static int write_atomic(const char *path, const char *text, err_t *err)
{
    char tmp[PATH_ROOM];
    FILE *f = output_open_atomic(path, tmp, sizeof tmp, err);
    if (!f) return -1;
    if (fputs(text, f) == EOF) {
        output_abort(f, tmp);
        return err_set(err, ERR_RUNTIME, "%s: write failed: %s", path,
                       strerror(errno));
    }
    return output_commit(f, tmp, path, err);
}

int sweepfile_create(const char *csv, const char *sidecar, const char *header,
                     err_t *err)
{
    char side[PATH_ROOM];
    if (sweepfile_sidecar_path(csv, side, sizeof side))
        return err_set(err, ERR_INPUT, "%s: path too long", csv);
    /* Sidecar first: a CSV whose scenario is missing cannot be resumed. */
    if (write_atomic(side, sidecar, err)) return -1;
    return write_atomic(csv, header, err);
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

/* 1 when the line just read (n bytes) holds a NUL byte: C string handling
 * would cut the row there (losing its newline), so such a file is refused. */
static int has_nul(const char *line, ssize_t n)
{
    return memchr(line, 0, (size_t)n) != NULL;
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
    FILE *f = fopen(csv, "rb");
    if (!f) {
        if (errno == ENOENT) { *fresh = 1; return 0; }
        return err_set(err, ERR_RUNTIME, "%s: %s", csv, strerror(errno));
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t n = getline(&line, &cap, f);
    int rc = 0;
    if (n <= 0 || line[n - 1] != '\n') {
        /* Not even a complete header: nothing was ever appended. */
        *fresh = 1;
        goto out;
    }
    if ((rc = check_sidecar(csv, sidecar, err)) != 0) goto out;
    if (strcmp(line, header) != 0) {
        rc = err_set(err, ERR_INPUT, "%s:1: cannot resume: the header differs "
                     "from this sweep's (use --force to start over)", csv);
        goto out;
    }
    off_t good = (off_t)n;   /* end of the last complete line */
    long lineno = 1;
    while ((n = getline(&line, &cap, f)) > 0) {
        lineno++;
        if (line[n - 1] != '\n') break;  /* torn tail: truncated below */
        uint64_t p;
        if (has_nul(line, n)) {
            rc = err_set(err, ERR_INPUT, "%s:%ld: cannot resume: a NUL byte in "
                         "the row", csv, lineno);
            goto out;
        }
        if (row_point(line, &p) != 0 || p >= total || p % sn != si) {
            rc = err_set(err, ERR_INPUT, "%s:%ld: cannot resume: not a row of "
                         "this sweep%s", csv, lineno,
                         sn > 1 ? " and shard" : "");
            goto out;
        }
        if (done[p]) {
            rc = err_set(err, ERR_INPUT, "%s:%ld: point %" PRIu64 " appears twice",
                         csv, lineno, p);
            goto out;
        }
        done[p] = 1;
        (*ndone)++;
        good += (off_t)n;
    }
    if (ferror(f)) {
        rc = err_set(err, ERR_RUNTIME, "%s: read failed", csv);
        goto out;
    }
    struct stat st;
    if (fstat(fileno(f), &st) != 0) {
        rc = err_set(err, ERR_RUNTIME, "%s: %s", csv, strerror(errno));
        goto out;
    }
    if (st.st_size > good && truncate(csv, good) != 0)
        rc = err_set(err, ERR_RUNTIME, "%s: cannot truncate the torn last line: %s",
                     csv, strerror(errno));
out:
    free(line);
    fclose(f);
    return rc;
}

int sweepfile_append(int fd, const char *buf, size_t n, int sync, err_t *err)
{
    while (n > 0) {
        ssize_t w = write(fd, buf, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            return err_set(err, ERR_RUNTIME, "write failed: %s", strerror(errno));
        }
        buf += w;
        n -= (size_t)w;
    }
    struct stat st;
    if (sync && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && fdatasync(fd) != 0)
        return err_set(err, ERR_RUNTIME, "fdatasync failed: %s", strerror(errno));
    return 0;
}

/* ---- merge --------------------------------------------------------------- */

typedef struct merge_state {
    char *sidecar;        /* of parts[0] */
    char *header;
    uint64_t total;
    char **rows;          /* [total], owned lines (with newline) */
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
    FILE *f = fopen(part, "rb");
    if (!f) return err_set(err, ERR_INPUT, "%s: %s", part, strerror(errno));
    char *line = NULL;
    size_t cap = 0;
    ssize_t n = getline(&line, &cap, f);
    rc = 0;
    if (n <= 0 || line[n - 1] != '\n') {
        rc = err_set(err, ERR_INPUT, "%s:1: no header", part);
    } else if (has_nul(line, n)) {
        rc = err_set(err, ERR_INPUT, "%s:1: a NUL byte in the header", part);
    } else if (!m->header) {
        m->header = strdup(line);
        if (!m->header) rc = err_set(err, ERR_RUNTIME, "out of memory");
    } else if (strcmp(line, m->header) != 0) {
        rc = err_set(err, ERR_INPUT, "%s:1: header differs from %s's", part, first);
    }
    long lineno = 1;
    while (rc == 0 && (n = getline(&line, &cap, f)) > 0) {
        lineno++;
        if (line[n - 1] != '\n') break;   /* torn tail of a killed shard */
        uint64_t p;
        if (has_nul(line, n)) {
            rc = err_set(err, ERR_INPUT, "%s:%ld: a NUL byte in the row", part,
                         lineno);
        } else if (row_point(line, &p) != 0 || p >= m->total) {
            rc = err_set(err, ERR_INPUT, "%s:%ld: not a row of this sweep", part,
                         lineno);
        } else if (m->rows[p]) {
            if (strcmp(m->rows[p], line) != 0)
                rc = err_set(err, ERR_INPUT, "%s:%ld: point %" PRIu64 " differs "
                             "from the same point in another part", part, lineno, p);
        } else if (!(m->rows[p] = strdup(line))) {
            rc = err_set(err, ERR_RUNTIME, "out of memory");
        }
    }
    if (rc == 0 && ferror(f)) rc = err_set(err, ERR_RUNTIME, "%s: read failed", part);
    free(line);
    fclose(f);
    return rc;
}

static int merge_write(const merge_state_t *m, const char *out, err_t *err)
{
    char side[PATH_ROOM], tmp[PATH_ROOM];
    if (sweepfile_sidecar_path(out, side, sizeof side))
        return err_set(err, ERR_INPUT, "%s: path too long", out);
    if (write_atomic(side, m->sidecar, err)) return -1;
    FILE *f = output_open_atomic(out, tmp, sizeof tmp, err);
    if (!f) return -1;
    int bad = fputs(m->header, f) == EOF;
    for (uint64_t p = 0; !bad && p < m->total; p++)
        bad = fputs(m->rows[p], f) == EOF;
    if (bad) {
        output_abort(f, tmp);
        return err_set(err, ERR_RUNTIME, "%s: write failed", out);
    }
    return output_commit(f, tmp, out, err);
}

int sweepfile_merge(const char *out, const char *const *parts, int nparts,
                    err_t *err)
{
    merge_state_t m = {0};
    int rc = 0;
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
    if (rc == 0) rc = merge_write(&m, out, err);
    for (uint64_t p = 0; m.rows && p < m.total; p++) free(m.rows[p]);
    free(m.rows);
    free(m.sidecar);
    free(m.header);
    return rc;
}
