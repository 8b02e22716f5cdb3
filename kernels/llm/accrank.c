/* accrank — tree acceptance from ranks (see accrank.h). */
#include "accrank.h"

#include "io/textline.h"
#include "model/tree.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int accrank_rank(const float *row, int vocab, int32_t tok, int cap)
{
    const float x = row[tok];
    int before = 0;
    for (int32_t v = 0; v < vocab && before < cap; v++) {
        if (v == tok) continue;
        if (isnan(x)) before += !isnan(row[v]) || v < tok;
        else before += row[v] > x || (row[v] == x && v < tok);
    }
    return before;
}

/* Counts one complete block of `len` outcomes starting at r (its last one
 * the rejection when len <= depth and r[len − 1] >= width). */
static void count_block(accrank_est_t *e, const uint8_t *r, int len)
{
    e->blocks++;
    for (int d = 0; d < len; d++) {
        e->reached[d]++;
        e->n[d][r[d]]++;
        e->accepted += r[d] < e->width;
    }
}

void accrank_estimate(const accrank_stream_t *st, int ns, int k, int width, int depth,
                      accrank_est_t *e)
{
    *e = (accrank_est_t){.k = k, .width = width, .depth = depth};
    for (int s = 0; s < ns; s++) {
        const uint8_t *r = st[s].r;
        int i = 0, n = st[s].n;
        for (;;) {
            int a = 0;
            while (a < depth && i + a < n && r[i + a] < width) a++;
            /* Whole (a = depth), rejected at depth a + 1, or cut short by
             * the text's end (not counted: its law is not a block's). */
            int len = a == depth ? depth : a + 1;
            if (i + len > n) break;
            count_block(e, r + i, len);
            i += len;
        }
    }
}

/* Accepted drafts of the block of t starting at r[0] (n ranks left), and
 * its length in positions; -1 when the text ends inside it. */
static int replay_block(const tree_t *t, const uint8_t *r, int n, int *len)
{
    int v = -1, a = 0;
    for (;;) {
        int nc = v < 0 ? t->root_children : t->nchild[v];
        if (nc == 0) {
            *len = a;   /* a leaf: the block is whole */
            return a;
        }
        if (a >= n) return -1;
        if (r[a] >= nc) {
            *len = a + 1;
            return a;
        }
        v = (v < 0 ? 0 : t->child0[v]) + r[a];
        a++;
    }
}

void accrank_replay_tree(const accrank_stream_t *st, int ns, const tree_t *t,
                         accrank_replay_t *out)
{
    double s1 = 0, s2 = 0;
    long n = 0;
    for (int s = 0; t->n > 0 && s < ns; s++)
        for (int i = 0, len, a; (a = replay_block(t, st[s].r + i, st[s].n - i, &len)) >= 0;
             i += len) {
            n++;
            s1 += a;
            s2 += (double)a * a;
        }
    out->blocks = n;
    out->mean = n ? s1 / (double)n : NAN;
    out->se = n > 1 ? sqrt((s2 - s1 * s1 / (double)n) / (double)(n - 1) / (double)n) : NAN;
}

double accrank_p(const accrank_est_t *e, int d, int r)
{
    return e->reached[d] ? (double)e->n[d][r] / (double)e->reached[d] : NAN;
}

double accrank_se(const accrank_est_t *e, int d, int r)
{
    double p = accrank_p(e, d, r);
    return isnan(p) ? NAN : sqrt(p * (1 - p) / (double)e->reached[d]);
}

int accrank_write_ranks(FILE *f, const char *const *header, int nh, int k,
                        const accrank_stream_t *st, int ns)
{
    for (int i = 0; i < nh; i++) fprintf(f, "# %s\n", header[i]);
    fprintf(f, "# format: ranks %d\n# each outcome: the rank of the target's token among the "
               "draft's (0: its argmax; %d: not among the first %d)\n", k, k, k);
    for (int s = 0; s < ns; s++) {
        fprintf(f, "# request: %s\n", st[s].label ? st[s].label : "");
        for (int j = 0; j < st[s].n; j++)
            fprintf(f, "%d%c", st[s].r[j], j % 32 == 31 || j == st[s].n - 1 ? '\n' : ' ');
    }
    return ferror(f) ? -1 : 0;
}

/* p rounded down to 6 decimals: a row of them never sums above 1. */
static double down6(double p)
{
    return floor(p * 1e6 + 1e-9) / 1e6;
}

int accrank_write_profile(FILE *f, const char *const *header, int nh, const accrank_est_t *e)
{
    for (int i = 0; i < nh; i++) fprintf(f, "# %s\n", header[i]);
    fprintf(f, "# format: tree-profile\n"
               "# one line per depth d = 1, 2, ... (the last repeats deeper): p_1 .. p_%d, "
               "p_k the probability that an accepted node's child of rank k (the draft's "
               "k-th most likely token) is the accepted one\n"
               "# %ld complete blocks of a tree %d wide at every depth, %d deep; "
               "mean accepted length %.4f\n",
            e->k, e->blocks, e->width, e->depth,
            e->blocks ? (double)e->accepted / (double)e->blocks : 0.0);
    for (int d = 0; d < e->depth && e->reached[d] > 0; d++) {
        fprintf(f, "# depth %d: %ld blocks reached it; counts by rank 1..%d, none:", d + 1,
                e->reached[d], e->k);
        for (int r = 0; r <= e->k; r++) fprintf(f, " %ld", e->n[d][r]);
        fprintf(f, "; standard errors:");
        for (int r = 0; r < e->k; r++) fprintf(f, " %.4f", accrank_se(e, d, r));
        fprintf(f, "\n");
        for (int r = 0; r < e->k; r++)
            fprintf(f, "%.6f%c", down6(accrank_p(e, d, r)), r == e->k - 1 ? '\n' : ' ');
    }
    return ferror(f) ? -1 : 0;
}

/* --- reading a rank stream back ---------------------------------------- */

/* Growing arrays of the reader; the streams' r pointers are set at the
 * end (the rank buffer moves while it grows), from start offsets. */
typedef struct rd {
    accrank_file_t *f;
    long n, cap;       /* ranks */
    long *start;       /* per stream */
    int scap, lcap, hcap;   /* of start and st, of label, of header */
} rd_t;

static int grow(void **a, long *cap, long need, size_t elem)
{
    if (need <= *cap) return 0;
    long nc = *cap ? 2 * *cap : 256;
    while (nc < need) nc *= 2;
    void *na = realloc(*a, (size_t)nc * elem);
    if (!na) return -1;
    *a = na;
    *cap = nc;
    return 0;
}

static int push_text(char ***v, int *n, int *cap, const char *s)
{
    long c = *cap;
    char *d = strdup(s);
    if (!d || grow((void **)v, &c, *n + 1, sizeof **v)) {
        free(d);
        return -1;
    }
    *cap = (int)c;
    (*v)[(*n)++] = d;
    return 0;
}

static int new_stream(rd_t *r, const char *label)
{
    accrank_file_t *f = r->f;
    long c = r->scap, c2 = r->scap;
    if (grow((void **)&r->start, &c, f->ns + 1, sizeof *r->start) ||
        grow((void **)&f->st, &c2, f->ns + 1, sizeof *f->st))
        return -1;
    r->scap = (int)c;
    int nl = f->ns;
    if (push_text(&f->label, &nl, &r->lcap, label)) return -1;
    r->start[f->ns++] = r->n;
    return 0;
}

/* One comment line (b: after '#' and blanks). */
static int comment(rd_t *r, const char *b, const char *path, int line, err_t *err)
{
    accrank_file_t *f = r->f;
    if (!strncmp(b, "format:", 7)) {
        const char *v = b + 7 + strspn(b + 7, " \t");
        char *end;
        long k = strncmp(v, "ranks", 5) ? -1 : strtol(v + 5, &end, 10);
        if (k < 1 || k > ACCRANK_K_MAX || *end)
            return err_set(err, ERR_INPUT, "%s:%d: '# format: %.40s': a rank stream says "
                           "'# format: ranks K', K 1 .. %d", path, line, v, ACCRANK_K_MAX);
        /* Every rank of a file is read against one K. */
        if (r->n > 0 && k != f->k)
            return err_set(err, ERR_INPUT, "%s:%d: '# format: ranks %ld' after ranks read "
                           "as ranks %d", path, line, k, f->k);
        f->k = (int)k;
        return 0;
    }
    if (!strncmp(b, "request", 7)) {
        const char *v = b + 7 + strspn(b + 7, " \t");
        if (*v == ':') v += 1 + strspn(v + 1, " \t");
        return new_stream(r, v) ? err_set(err, ERR_RUNTIME, "%s: out of memory", path) : 0;
    }
    if (f->ns > 0 || !strncmp(b, "each outcome:", 13)) return 0;
    return push_text(&f->header, &f->nh, &r->hcap, b)
               ? err_set(err, ERR_RUNTIME, "%s: out of memory", path) : 0;
}

/* One data line of ranks, q starting at column col. */
static int data(rd_t *r, char *q, const char *path, int line, int col, err_t *err)
{
    accrank_file_t *f = r->f;
    if (!f->k)
        return err_set(err, ERR_INPUT, "%s:%d: ranks before a '# format: ranks K' line",
                       path, line);
    if (f->ns == 0 && new_stream(r, "") != 0)
        return err_set(err, ERR_RUNTIME, "%s: out of memory", path);
    for (char *p = q; *p; p += strspn(p, " \t")) {
        size_t nd = strspn(p, "0123456789");
        long v = nd && nd < 4 ? strtol(p, NULL, 10) : -1;
        if (v < 0 || v > f->k || (p[nd] && p[nd] != ' ' && p[nd] != '\t'))
            return err_set(err, ERR_INPUT, "%s:%d:%d: '%.*s' is not a rank 0 .. %d", path,
                           line, col + (int)(p - q),
                           (int)strcspn(p, " \t") < 40 ? (int)strcspn(p, " \t") : 40, p, f->k);
        if (grow((void **)&f->r, &r->cap, r->n + 1, 1))
            return err_set(err, ERR_RUNTIME, "%s: out of memory", path);
        f->r[r->n++] = (uint8_t)v;
        p += nd;
    }
    return 0;
}

static char *slurp(const char *path, err_t *err)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        err_set(err, ERR_INPUT, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    char *buf = NULL;
    long n = 0, cap = 0;
    size_t got;
    do {
        if (grow((void **)&buf, &cap, n + 65537, 1)) {
            free(buf);
            fclose(fp);
            err_set(err, ERR_RUNTIME, "%s: out of memory", path);
            return NULL;
        }
        got = fread(buf + n, 1, 65536, fp);
        n += (long)got;
    } while (got > 0);
    buf[n] = 0;
    int bad = ferror(fp) || memchr(buf, 0, (size_t)n) != NULL;
    fclose(fp);
    if (bad) {
        free(buf);
        err_set(err, ERR_INPUT, "%s: a read error or a NUL byte (not a rank stream)", path);
        return NULL;
    }
    return buf;
}

int accrank_read(const char *path, accrank_file_t *f, err_t *err)
{
    memset(f, 0, sizeof *f);
    char *text = slurp(path, err);
    if (!text) return -1;
    rd_t r = {f, 0, 0, NULL, 0, 0, 0};
    int rc = 0, col;
    textline_t it;
    textline_init(&it, text);
    for (char *q; rc == 0 && (q = textline_next(&it, &col)) != NULL;) {
        if (!*q) continue;
        rc = *q == '#' ? comment(&r, q + 1 + strspn(q + 1, " \t"), path, it.line, err)
                       : data(&r, q, path, it.line, col, err);
    }
    free(text);
    if (rc == 0 && r.n == 0) rc = err_set(err, ERR_INPUT, "%s: no rank", path);
    for (int i = 0; rc == 0 && i < f->ns; i++) {
        long end = i + 1 < f->ns ? r.start[i + 1] : r.n;
        f->st[i] = (accrank_stream_t){f->r + r.start[i], (int)(end - r.start[i]), f->label[i]};
    }
    free(r.start);
    if (rc != 0) accrank_file_free(f);
    return rc;
}

void accrank_file_free(accrank_file_t *f)
{
    for (int i = 0; i < f->ns; i++) free(f->label[i]);
    for (int i = 0; i < f->nh; i++) free(f->header[i]);
    free(f->label);
    free(f->header);
    free(f->st);
    free(f->r);
    memset(f, 0, sizeof *f);
}
