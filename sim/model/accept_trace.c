/* accept_trace — acceptance replayed from a file, e.g. measured from a real
 * draft/target pair (`acceptance: {model: trace, file: PATH}`). Two formats
 * (docs/formats.md, "Acceptance trace files"); blank lines and #-comments
 * are skipped, except the directive comments `# format: positions` and
 * `# gamma: N`.
 *
 * Per-block lengths (the default): one non-negative integer per line, the
 * drafts the target accepted in one block. A length says nothing about the
 * drafts a longer block would have added, nor which of a shorter block's
 * drafts it covers, so such a file replays only at the gamma it was recorded
 * at: `# gamma: N` states it; without it the largest value is taken as the
 * recorded gamma (a real trace has fully accepted blocks). The loader
 * refuses any other gamma (accept_cfg_check_gamma). Each verdict takes the
 * next value, cyclically.
 *
 * Per position (`# format: positions`): one line per verified block, the
 * outcome of each of its drafts in order as a 0/1 string of any length
 * (`1101`). Only a line's drafts up to and including its first 0 were
 * evaluated (those after a rejection were discarded, whatever the log
 * says), so the file stands for the stream of evaluated outcomes: every
 * line cut after its first 0, the lines concatenated, cyclically. A block of
 * gamma drafts reads that stream on from where the tenant's previous block
 * stopped: it ends at the first 0 (consumed; a = the 1s read) or after gamma
 * 1s (a = gamma), continuing into the next line when a line runs out. At
 * the recorded gamma this gives back the recorded blocks; at another it is
 * what the same per-draft outcomes give in blocks of that length.
 *
 * Tenant t starts at entry (line) t mod n, so tenants do not replay in
 * lockstep.
 *
 * Per request (`per_request: true`, per-position files only): the file's
 * `# request` comment lines (build/llm accept writes one before each
 * prompt's outcomes) cut the stream into segments, one request's each;
 * request r of tenant t of T replays segment (t + r·T) mod S from its
 * start — the prompt a real run (build/testbed run --real-model) gives
 * that request — and reads on into the next segment if its blocks outrun
 * its own. Acceptance depends on the prompt, so a comparison with a real
 * run replays the prompts that run decoded, not a stretch of the file.
 *
 * Block law: the empirical law of the replay — per-block: min(v, gamma)
 * over the values; per position: a over the blocks of one pass through the
 * stream (every tenant's replay passes every 0 and starts a block right
 * after it, so all share that cycle).
 * Mean per-draft acceptance: per position, the 1s among the evaluated
 * outcomes; per block none (NAN): a block length is not a per-draft
 * probability, and any alpha fitted to it would be a model the trace does
 * not claim. */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "model/accept.h"
#include "io/infile.h"
#include "io/keytab.h"
#include "io/textline.h"
#include "io/ynode.h"

/* Digits of the largest accepted length a per-block line may hold, and the
 * characters of a per-position line. */
#define TRACE_DIGITS 6
#define TRACE_LINE_MAX 100000

typedef struct replay_par {
    char file[KEYTAB_PATH_MAX];  /* the path opened */
    int positions;               /* 1: per-position format */
    int gamma_recorded;          /* per block: `# gamma:` or the largest value */
    int gamma_line;              /* line of `# gamma:`; 0 = inferred */
    int *v;                      /* owned; per block: the values; per
                                    position: each line's start in bits */
    int n;                       /* values / lines */
    unsigned char *bits;         /* owned; per position: the evaluated
                                    outcomes, 0 or 1 */
    int nbits;
    int *seg;                    /* owned; each `# request` line's start in
                                    bits */
    int nseg;
    int per_request;             /* 1: replay segment by request */
} replay_par_t;

typedef struct replay_state {
    int pos;   /* next index into v (per block) or bits (per position) */
} replay_state_t;

_Static_assert(sizeof(replay_state_t) <= ACCEPT_STATE_BYTES, "trace state too large");

/* --- reading ------------------------------------------------------------- */

typedef struct reader {
    keytab_ctx_t *c;
    const char *key, *src;
    replay_par_t *t;
    int cap, bcap, scap;
} reader_t;

static int rd_err(reader_t *r, int line, int col, const char *what, const char *p)
{
    ynode_t at = {.src = r->src, .line = line, .col = col};
    return keytab_err(r->c, &at, r->key, what, p);
}

static int grow(reader_t *r, void **a, int *cap, int need, size_t elem)
{
    if (need <= *cap) return 0;
    int nc = *cap ? 2 * *cap : 256;
    while (nc < need) nc *= 2;
    void *na = realloc(*a, (size_t)nc * elem);
    if (!na) return err_set(r->c->err, ERR_RUNTIME, "out of memory");
    *a = na;
    *cap = nc;
    return 0;
}

/* `# format: positions` / `# gamma: N` in comment line p (after '#');
 * `# request...` marks a segment; other comments are left alone. */
static int directive(reader_t *r, const char *p, int line, int col)
{
    p += strspn(p, " \t");
    if (!strncmp(p, "request", 7)) {
        replay_par_t *t = r->t;
        if (grow(r, (void **)&t->seg, &r->scap, t->nseg + 1, sizeof *t->seg)) return -1;
        t->seg[t->nseg++] = t->nbits;
        return 0;
    }
    if (!strncmp(p, "format:", 7)) {
        const char *v = p + 7 + strspn(p + 7, " \t");
        if (strncmp(v, "positions", 9) != 0 || v[9 + strspn(v + 9, " \t\r")])
            return rd_err(r, line, col, "'# format: %.40s': the only format "
                          "directive is '# format: positions'", v);
        r->t->positions = 1;
        return 0;
    }
    if (strncmp(p, "gamma:", 6) != 0) return 0;
    const char *v = p + 6 + strspn(p + 6, " \t");
    size_t d = strspn(v, "0123456789");
    if (d == 0 || d > TRACE_DIGITS || v[d + strspn(v + d, " \t\r")] || atoi(v) < 1)
        return rd_err(r, line, col, "'# gamma: %.40s': expected an integer >= 1 "
                      "(the gamma the trace was recorded at)", v);
    /* A second statement would silently override the first: refuse it,
     * naming both, as the file contradicts itself. */
    if (r->t->gamma_line) {
        char msg[120];
        snprintf(msg, sizeof msg, "a second '# gamma:' line (the first is line %d): "
                 "a trace is recorded at one gamma", r->t->gamma_line);
        return rd_err(r, line, col, "%s", msg);
    }
    r->t->gamma_recorded = atoi(v);
    r->t->gamma_line = line;
    return 0;
}

/* One per-block data line. */
static int add_value(reader_t *r, const char *p, int line, int col)
{
    size_t d = strspn(p, "0123456789");
    if (d == 0 || p[d] || d > TRACE_DIGITS)
        return rd_err(r, line, col, "'%.60s' is not a non-negative integer "
                      "(an accepted length)", p);
    replay_par_t *t = r->t;
    if (grow(r, (void **)&t->v, &r->cap, t->n + 1, sizeof *t->v)) return -1;
    int v = atoi(p);
    if (t->gamma_line && v > t->gamma_recorded) {
        char msg[160];
        snprintf(msg, sizeof msg, "%d accepted drafts exceed the recorded "
                 "'# gamma: %d' (line %d)", v, t->gamma_recorded, t->gamma_line);
        return rd_err(r, line, col, "%s", msg);
    }
    t->v[t->n++] = v;
    return 0;
}

/* One per-position data line: its outcomes up to its first 0. */
static int add_positions(reader_t *r, const char *p, int line, int col)
{
    size_t len = strspn(p, "01");
    if (len == 0 || p[len] || len > TRACE_LINE_MAX)
        return rd_err(r, line, col, "'%.60s' is not a string of 0s and 1s "
                      "(one per draft position)", p);
    replay_par_t *t = r->t;
    size_t used = strspn(p, "1");
    if (used < len) used++;   /* the rejecting 0 */
    if (grow(r, (void **)&t->v, &r->cap, t->n + 1, sizeof *t->v) ||
        grow(r, (void **)&t->bits, &r->bcap, t->nbits + (int)used, 1))
        return -1;
    t->v[t->n++] = t->nbits;
    for (size_t i = 0; i < used; i++) t->bits[t->nbits++] = p[i] == '1';
    return 0;
}

/* The whole file text into r->t. A directive must come before the first
 * data line, so that every line is read in one format. */
static int read_text(reader_t *r, char *text)
{
    int data = 0, col;
    textline_t it;
    textline_init(&it, text);
    for (char *q; (q = textline_next(&it, &col)) != NULL;) {
        int line = it.line;
        if (!*q) continue;
        if (*q == '#') {
            const char *b = q + 1 + strspn(q + 1, " \t");
            int is_dir = !strncmp(b, "format:", 7) || !strncmp(b, "gamma:", 6);
            if (is_dir && data)
                return rd_err(r, line, col, "'%.60s': directives come before the "
                              "first data line", q);
            if (directive(r, q + 1, line, col) != 0) return -1;
            continue;
        }
        data = 1;
        if ((r->t->positions ? add_positions : add_value)(r, q, line, col) != 0)
            return -1;
    }
    return 0;
}

static void replay_par_fini(void *par)
{
    replay_par_t *t = par;
    free(t->v);
    free(t->bits);
    free(t->seg);
    t->v = NULL;
    t->bits = NULL;
    t->seg = NULL;
}

static int parse_file(keytab_ctx_t *c, const ynode_t *node, const char *key,
                      const keytab_key_t *k, void *base)
{
    (void)k;
    replay_par_t *t = base;
    char *text;
    size_t len;
    if (keytab_read_data_file(c, node, key, t->file, sizeof t->file, &text, &len) != 0)
        return -1;
    replay_par_fini(t);
    t->n = t->nbits = t->positions = t->gamma_recorded = t->gamma_line = t->nseg = 0;
    reader_t r = {c, key, t->file, t, 0, 0, 0};
    int nl, nc, rc;
    if (infile_find_nul(text, len, &nl, &nc))
        rc = rd_err(&r, nl, nc, "%s", INFILE_NUL_WHY);
    else
        rc = read_text(&r, text);
    free(text);
    if (rc == 0 && t->n == 0)
        rc = keytab_err(c, node, key, "trace file '%s' holds no %s", t->file,
                        t->positions ? "draft outcomes" : "accepted lengths");
    for (int i = 0; rc == 0 && !t->positions && !t->gamma_line && i < t->n; i++)
        if (t->v[i] > t->gamma_recorded) t->gamma_recorded = t->v[i];
    if (rc != 0) replay_par_fini(t);
    return rc;
}

static int write_file(FILE *f, const keytab_key_t *k, const void *base, int indent)
{
    (void)k;
    (void)indent;
    const replay_par_t *t = base;
    if (fputc(' ', f) == EOF || keytab_write_path(f, t->file) != 0) return -1;
    return fputc('\n', f) == EOF ? -1 : 0;
}

static const keytab_key_t TRACE_KEYS[] = {
    {.name = "file", .type = KT_CUSTOM, .parse = parse_file, .write = write_file,
     .flags = KF_REQUIRED},
    {.name = "per_request", KEYTAB_BOOL(replay_par_t, per_request), },
    {.name = NULL}};

/* --- the model ----------------------------------------------------------- */

static int replay_check(const void *par, err_t *err)
{
    const replay_par_t *t = par;
    if (t->n < 1 || !t->v || (t->positions && (t->nbits < 1 || !t->bits)))
        return err_set(err, ERR_INPUT, "acceptance.file: trace '%s' holds no "
                       "accepted lengths", t->file);
    for (int i = 0; !t->positions && i < t->n; i++)
        if (t->v[i] < 0)
            return err_set(err, ERR_INPUT, "acceptance.file: trace '%s' entry %d "
                           "is negative (%d)", t->file, i + 1, t->v[i]);
    if (t->per_request && (!t->positions || t->nseg < 1))
        return err_set(err, ERR_INPUT, "acceptance.per_request: trace '%s' %s", t->file,
                       !t->positions ? "is not per position ('# format: positions'): "
                       "requests are cut from a stream of outcomes"
                       : "has no '# request' line: nothing marks where a request's "
                       "outcomes start");
    return 0;
}

static int replay_check_gamma(const void *par, int gamma, err_t *err)
{
    const replay_par_t *t = par;
    if (t->positions || gamma == t->gamma_recorded) return 0;
    /* Only 0s and no '# gamma:': the largest value, 0, is no gamma (it is
     * at least 1), so "give the gamma it was recorded at" could not be
     * followed; the file has to say it. */
    if (t->gamma_recorded == 0)
        return err_set(err, ERR_INPUT, "file: trace '%s' holds only 0s and no '# gamma:' "
                       "line, so the gamma its blocks were recorded at is unknown: state "
                       "it with a line '# gamma: N' before the first value", t->file);
    char how[96];
    if (t->gamma_line)
        snprintf(how, sizeof how, "'# gamma: %d' at line %d", t->gamma_recorded,
                 t->gamma_line);
    else
        snprintf(how, sizeof how, "no '# gamma:' line, largest value %d",
                 t->gamma_recorded);
    return err_set(err, ERR_INPUT, "file: trace '%s' holds accepted lengths of blocks "
                   "of %d drafts (%s) but blocks here have gamma = %d: a length "
                   "recorded at one gamma says nothing about another; give the "
                   "gamma it was recorded at, or record the trace per position "
                   "('# format: positions', scripts/accept-trace-convert.sh)",
                   t->file, t->gamma_recorded, how, gamma);
}

static int replay_init(void *st, const void *par, const accept_seat_t *seat, err_t *err)
{
    (void)err;
    const replay_par_t *t = par;
    int line = seat->tenant % t->n;
    ((replay_state_t *)st)->pos = t->positions ? t->v[line] : line;
    return 0;
}

/* The accepted drafts of a block of gamma read from bits at *pos; *read
 * (may be NULL) grows by the outcomes consumed. */
static int positions_block(const replay_par_t *t, int *pos, int gamma, int *read)
{
    int a = 0;
    while (a < gamma) {
        int ok = t->bits[*pos];
        *pos = (*pos + 1) % t->nbits;
        if (read) ++*read;
        if (!ok) break;
        a++;
    }
    return a;
}

static void replay_request(void *st, const void *par, int tenant, int ntenants, long req)
{
    const replay_par_t *t = par;
    if (!t->per_request) return;
    long k = ((long)tenant + req % t->nseg * (long)ntenants) % t->nseg;
    ((replay_state_t *)st)->pos = t->seg[k] % t->nbits;
}

/* A request's segment is its text, every position judged by teacher
 * forcing (build/llm accept); a sync run never judges the position of a
 * bonus token, so its replay steps over it (without this a block after a
 * full one would read the bonus position as its first draft's outcome). */
static void replay_skip(void *st, const void *par, int n)
{
    const replay_par_t *t = par;
    replay_state_t *s = st;
    if (t->per_request) s->pos = (int)(((long)s->pos + n) % t->nbits);
}

static int replay_draw(void *st, const void *par, gsl_rng *r, int gamma)
{
    (void)r;
    const replay_par_t *t = par;
    replay_state_t *s = st;
    if (t->positions) return positions_block(t, &s->pos, gamma, NULL);
    int v = t->v[s->pos];
    s->pos = (s->pos + 1) % t->n;
    return v < gamma ? v : gamma;
}

static double replay_mean(const void *par, int gamma)
{
    (void)gamma;
    const replay_par_t *t = par;
    if (!t->positions) return NAN;
    int ones = 0;
    for (int i = 0; i < t->nbits; i++) ones += t->bits[i];
    return (double)ones / t->nbits;
}

static void law_add(accept_law_t *L, int a, int gamma)
{
    if (a < gamma) *accept_law_rej(L, 0, 0, a, 0) += 1;
    else L->part[0].full[0][0] += 1;
}

/* Counts of a over the blocks of one pass through the stream, from just
 * after its last 0 (from 0 when it has none: every block is then full). */
static int positions_law(const replay_par_t *t, int gamma, accept_law_t *L)
{
    int start = 0, blocks = 0;
    for (int i = 0; i < t->nbits; i++)
        if (!t->bits[i]) start = (i + 1) % t->nbits;
    int pos = start, read = 0;
    do {
        law_add(L, positions_block(t, &pos, gamma, &read), gamma);
        blocks++;
    } while (read < t->nbits);
    return blocks;
}

static int replay_law(const void *par, int gamma, accept_law_t *L, err_t *err)
{
    const replay_par_t *t = par;
    if (accept_law_init(L, 1, 1, gamma, err) != 0) return -1;
    int n = t->n;   /* counts first, then shares */
    if (t->positions) n = positions_law(t, gamma, L);
    else
        for (int i = 0; i < t->n; i++) law_add(L, t->v[i], gamma);
    for (int a = 0; a < gamma; a++) *accept_law_rej(L, 0, 0, a, 0) /= n;
    L->part[0].full[0][0] /= n;
    return 0;
}

const accept_model_t accept_trace_model = {
    .name = "trace",
    .keys = TRACE_KEYS,
    .par_size = sizeof(replay_par_t),
    .par_fini = replay_par_fini,
    .check = replay_check,
    .check_gamma = replay_check_gamma,
    .init = replay_init,
    .draw = replay_draw,
    .request = replay_request,
    .skip = replay_skip,
    .mean = replay_mean,
    .law = replay_law,
};
