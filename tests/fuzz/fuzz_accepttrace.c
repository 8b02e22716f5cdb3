/* fuzz_accepttrace — the acceptance-trace reader (sim/model/accept_trace.c,
 * `acceptance: {model: trace, file: PATH}`), through accept_cfg_parse.
 *
 * The input is the trace file. A file holding a NUL byte must be refused at
 * the first one's LINE:COL (issue 28 item 7: a NUL cut the text short). A
 * trace that loads is read again here, by the format's rules alone (blank
 * lines and comments skipped; `# format: positions`, `# gamma: N` and
 * `# request` lines), and must replay as accept_trace.c's header promises:
 *   - per-block lengths: no mean per-draft acceptance (NaN); accepted at its
 *     recorded gamma (`# gamma:`, else the largest value) and at no other;
 *     tenant t's k-th block at gamma g is min(v[(t + k) mod n], g); the
 *     block law at g is that of min(v, g) over the values; per_request is
 *     refused;
 *   - per position: any gamma accepted; the mean is the 1s among the
 *     evaluated outcomes (each line cut after its first 0); a block of g
 *     reads the stream on from the tenant's line until a 0 or g 1s; the law
 *     is that of the blocks of one pass from just after the last 0;
 *     per_request loads exactly when there is a `# request` line, and then
 *     request r of tenant t of T starts at segment (t + r T) mod S.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "model/accept.h"

/* Blocks drawn per tenant and gamma: enough to go round a small trace
 * twice, bounded so that a large input stays quick. */
enum { MAX_DRAWS = 2000 };

/* The trace as the format defines it. */
typedef struct ref {
    int positions;
    int gamma_stated;     /* 0: no `# gamma:` line */
    long *v;              /* per block: the values; per position: each
                             data line's start in bits */
    long n;
    unsigned char *bits;  /* per position: the evaluated outcomes */
    long nbits;
    long *seg;            /* each `# request` line's start in bits */
    long nseg;
} ref_t;

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p) fuzz_fail("out of memory", NULL);
    return p;
}

/* Reads t[0..len) (no NUL: it loaded) by the format's rules; the file is
 * known to be valid, so only what a valid one holds is looked at. */
static void ref_read(ref_t *r, const char *t, size_t len)
{
    memset(r, 0, sizeof *r);
    r->v = xcalloc(len + 1, sizeof *r->v);
    r->seg = xcalloc(len + 1, sizeof *r->seg);
    r->bits = xcalloc(len + 1, 1);
    char *copy = xcalloc(len + 1, 1);
    memcpy(copy, t, len);
    for (char *p = copy, *nl; p; p = nl) {
        nl = strchr(p, '\n');
        if (nl) *nl++ = 0;
        char *q = p + strspn(p, " \t");
        size_t l = strlen(q);
        while (l && (q[l - 1] == ' ' || q[l - 1] == '\t' || q[l - 1] == '\r')) q[--l] = 0;
        if (!*q) continue;
        if (*q == '#') {
            const char *b = q + 1 + strspn(q + 1, " \t");
            if (!strncmp(b, "request", 7)) r->seg[r->nseg++] = r->nbits;
            else if (!strncmp(b, "format:", 7)) r->positions = 1;
            else if (!strncmp(b, "gamma:", 6)) r->gamma_stated = atoi(b + 6 + strspn(b + 6, " \t"));
            continue;
        }
        if (!r->positions) {
            r->v[r->n++] = atol(q);
            continue;
        }
        r->v[r->n++] = r->nbits;
        for (const char *c = q; *c; c++) {
            r->bits[r->nbits++] = *c == '1';
            if (*c == '0') break;
        }
    }
    free(copy);
}

static void ref_free(ref_t *r)
{
    free(r->v);
    free(r->seg);
    free(r->bits);
}

/* The recorded gamma of a per-block trace. */
static long ref_gamma(const ref_t *r)
{
    if (r->gamma_stated) return r->gamma_stated;
    long g = 0;
    for (long i = 0; i < r->n; i++)
        if (r->v[i] > g) g = r->v[i];
    return g;
}

/* A per-position block of g read from *pos on; *read (may be NULL) grows
 * by the outcomes it consumed. */
static int ref_block(const ref_t *r, long *pos, int g, long *read)
{
    int a = 0;
    while (a < g) {
        int ok = r->bits[*pos];
        *pos = (*pos + 1) % r->nbits;
        if (read) ++*read;
        if (!ok) break;
        a++;
    }
    return a;
}

static void fail_draw(const char *what, int tenant, int gamma, long k, int got, int want)
{
    char d[160];
    snprintf(d, sizeof d, "tenant %d, gamma %d, block %ld: %d, expected %d", tenant,
             gamma, k, got, want);
    fuzz_fail(what, d);
}

static long draws(const ref_t *r)
{
    long m = 2 * r->n + 3;
    return m < MAX_DRAWS ? m : MAX_DRAWS;
}

/* Tenant t's blocks at gamma g against the reference. */
static void check_replay(const accept_cfg_t *c, const ref_t *r, int t, int g)
{
    accept_t a;
    err_t err = {0, {0}};
    if (accept_init(&a, c, 1, 0, t, &err) != 0)
        fuzz_fail("a loaded trace does not initialise a tenant", err.msg);
    long pos = r->positions ? r->v[t % r->n] : 0;
    for (long k = 0, m = draws(r); k < m; k++) {
        int got = accept_draw(&a, g), want;
        if (r->positions) {
            want = ref_block(r, &pos, g, NULL);
        } else {
            long v = r->v[(t % r->n + k) % r->n];
            want = v < g ? (int)v : g;
        }
        if (got != want) fail_draw("a trace replays other blocks than it holds", t, g, k, got, want);
    }
    accept_fini(&a);
}

/* The block law at g against the reference's counts. */
static void check_law(const accept_cfg_t *c, const ref_t *r, int g)
{
    double *p = xcalloc((size_t)g + 1, sizeof *p);
    long blocks = 0;
    if (r->positions) {
        long start = 0, read = 0;
        for (long i = 0; i < r->nbits; i++)
            if (!r->bits[i]) start = (i + 1) % r->nbits;
        long pos = start;
        do {
            p[ref_block(r, &pos, g, &read)] += 1;
            blocks++;
        } while (read < r->nbits);
    } else {
        for (long i = 0; i < r->n; i++) p[r->v[i] < g ? r->v[i] : g] += 1;
        blocks = r->n;
    }
    accept_law_t L;
    err_t err = {0, {0}};
    if (accept_cfg_law(c, g, &L, &err) != 0) fuzz_fail("a loaded trace has no block law", err.msg);
    for (int k = 0; k <= g; k++) {
        double got = accept_law_p(&L, 0, k), want = p[k] / (double)blocks;
        if (!(fabs(got - want) <= 1e-9)) {
            char d[160];
            snprintf(d, sizeof d, "gamma %d: P(a = %d) = %.17g, expected %.17g", g, k, got, want);
            fuzz_fail("a trace's block law is not its blocks'", d);
        }
    }
    accept_law_fini(&L);
    free(p);
}

/* Request req of tenant t of nt, replayed per request, against the
 * reference: its blocks start at its segment. */
static void check_request(const accept_cfg_t *c, const ref_t *r, int t, int nt, long req, int g)
{
    accept_t a;
    err_t err = {0, {0}};
    if (accept_init(&a, c, 1, 0, t, &err) != 0)
        fuzz_fail("a per-request trace does not initialise a tenant", err.msg);
    accept_request(&a, t, nt, req);
    long pos = r->seg[((long)t + req * nt) % r->nseg] % r->nbits;
    for (long k = 0, m = draws(r); k < m; k++) {
        int got = accept_draw(&a, g), want = ref_block(r, &pos, g, NULL);
        if (got != want) fail_draw("a request replays another segment", t, g, k, got, want);
    }
    accept_fini(&a);
}

/* "model: trace\nfile: 'PATH'" (YAML single quotes: a quote is doubled). */
static void yaml_for(char *y, size_t n, const char *path, int per_request)
{
    size_t u = (size_t)snprintf(y, n, "model: trace\nper_request: %s\nfile: '",
                                per_request ? "true" : "false");
    for (const char *p = path; *p && u + 4 < n; p++) {
        if (*p == '\'') y[u++] = '\'';
        y[u++] = *p;
    }
    snprintf(y + u, n - u, "'\n");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_reset();
    const char *text = (const char *)data;
    char path[4096], yaml[8400];
    fuzz_write_file("trace.txt", text, size, path, sizeof path);
    yaml_for(yaml, sizeof yaml, path, 0);
    accept_cfg_t c;
    err_t err = {0, {0}};
    int rc = accept_cfg_parse(&c, yaml, &err);
    /* What the reader sees: sim/io/infile.c drops a leading UTF-8
     * byte-order mark, so lines and columns count from after it. */
    const char *seen = text;
    size_t seen_len = size;
    if (size >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) {
        seen += 3;
        seen_len -= 3;
    }
    if (memchr(seen, 0, seen_len)) {
        if (rc == 0) fuzz_fail("an acceptance trace with a NUL byte loads", NULL);
        fuzz_check_nul(seen, seen_len, path, err.msg);
        return 0;
    }
    if (rc != 0) {
        if (err.code != ERR_INPUT || !err.msg[0])
            fuzz_fail("a refused trace is not an input error with a message", err.msg);
        return 0;
    }
    if (c.model != accept_model_find("trace")) fuzz_fail("model: trace loads another model", NULL);
    ref_t r;
    ref_read(&r, seen, seen_len);
    if (r.n < 1 || (r.positions && r.nbits < 1))
        fuzz_fail("a trace without data loads", NULL);

    if (!r.positions) {
        long G = ref_gamma(&r);
        if (!isnan(accept_cfg_mean(&c, 4)))
            fuzz_fail("a per-block trace claims a mean per-draft acceptance", NULL);
        if (G >= 1 && accept_cfg_check_gamma(&c, (int)G, &err) != 0)
            fuzz_fail("a per-block trace is refused at its recorded gamma", err.msg);
        if (accept_cfg_check_gamma(&c, (int)G + 1, &err) == 0 ||
            (G > 1 && accept_cfg_check_gamma(&c, (int)G - 1, &err) == 0))
            fuzz_fail("a per-block trace is accepted at a gamma it was not recorded at", NULL);
        int g = G >= 1 && G <= 64 ? (int)G : 64;
        for (int t = 0; t < 3; t++) {
            check_replay(&c, &r, t * 5, g);
            check_replay(&c, &r, t * 5, 1);
        }
        check_law(&c, &r, g);
        check_law(&c, &r, 1);
    } else {
        long ones = 0;
        for (long i = 0; i < r.nbits; i++) ones += r.bits[i];
        double mean = accept_cfg_mean(&c, 4), want = (double)ones / (double)r.nbits;
        if (!(fabs(mean - want) <= 1e-12))
            fuzz_fail("a per-position trace's mean is not its 1s among the evaluated outcomes", NULL);
        if (accept_cfg_check_gamma(&c, 1, &err) != 0 || accept_cfg_check_gamma(&c, 7, &err) != 0)
            fuzz_fail("a per-position trace is refused at some gamma", err.msg);
        static const int G[] = {1, 2, 5};
        for (int gi = 0; gi < 3; gi++) {
            for (int t = 0; t < 3; t++) check_replay(&c, &r, t * 5, G[gi]);
            check_law(&c, &r, G[gi]);
        }
    }

    accept_cfg_t pr;
    yaml_for(yaml, sizeof yaml, path, 1);
    int prc = accept_cfg_parse(&pr, yaml, &err);
    if (prc == 0 && !(r.positions && r.nseg > 0))
        fuzz_fail("per_request loads without '# format: positions' and a '# request' line", NULL);
    if (prc != 0 && r.positions && r.nseg > 0)
        fuzz_fail("per_request is refused on a per-position trace with requests", err.msg);
    if (prc == 0) {
        for (int t = 0; t < 3; t++)
            for (long req = 0; req < 4; req++) check_request(&pr, &r, t, 3, req, 3);
        accept_cfg_fini(&pr);
    }
    ref_free(&r);
    accept_cfg_fini(&c);
    return 0;
}
