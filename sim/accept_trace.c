/* accept_trace — accepted lengths replayed cyclically from a file (one
 * non-negative integer per line, blank lines and #-comments skipped), e.g.
 * measured from a real draft/target pair; a value above gamma counts as
 * gamma. Tenant t starts at entry t mod n.
 *
 * Block law: the empirical law of min(v, gamma) over the entries.
 * Mean per-draft acceptance: none (NAN). A trace gives block lengths, not a
 * per-draft probability; any alpha fitted to it would be a model the trace
 * does not claim. */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "accept.h"
#include "keytab.h"
#include "ynode.h"

typedef struct trace_par {
    char file[KEYTAB_PATH_MAX];  /* the path opened */
    int *v;                      /* owned */
    int n;
} trace_par_t;

typedef struct trace_state {
    int pos;   /* next index into v */
} trace_state_t;

_Static_assert(sizeof(trace_state_t) <= ACCEPT_STATE_BYTES, "trace state too large");

/* The accepted lengths in text (the file src) into *out, *nout (owned). */
static int read_values(keytab_ctx_t *c, const char *key, const char *src, char *text,
                       int **out, int *nout)
{
    int *v = NULL, n = 0, cap = 0, line = 0, col = 0, rc = 0;
    char *cursor = text, *p;
    while ((p = ynode_next_data_line(&cursor, &line, &col))) {
        size_t d = strspn(p, "0123456789");
        if (d == 0 || p[d] || d > 6) {
            ynode_t at = {.src = src, .line = line, .col = col};
            rc = keytab_err(c, &at, key, "'%.60s' is not a non-negative integer "
                            "(an accepted length)", p);
            break;
        }
        if (n == cap) {
            int nc = cap ? 2 * cap : 256;
            int *nv = realloc(v, (size_t)nc * sizeof *nv);
            if (!nv) {
                rc = err_set(c->err, ERR_RUNTIME, "out of memory");
                break;
            }
            v = nv;
            cap = nc;
        }
        v[n++] = atoi(p);
    }
    if (rc != 0) {
        free(v);
        return -1;
    }
    *out = v;
    *nout = n;
    return 0;
}

static int parse_file(keytab_ctx_t *c, const ynode_t *node, const char *key,
                      const keytab_key_t *k, void *base)
{
    (void)k;
    trace_par_t *t = base;
    if (node->kind != YNODE_SCALAR)
        return keytab_err(c, node, key, "expected a file path, got %s",
                          ynode_kind_name(node));
    if (keytab_find_file(c, node->str, t->file, sizeof t->file) != 0)
        return keytab_err(c, node, key,
                          "file '%s' not found (looked next to the scenario, in "
                          "the working directory and the specsim root)",
                          node->str);
    char *text;
    size_t len;
    err_t rerr;
    if (ynode_read_file(t->file, &text, &len, &rerr) != 0)
        return keytab_err(c, node, key, "cannot read: %s", rerr.msg);
    int *v = NULL, n = 0;
    int rc = read_values(c, key, t->file, text, &v, &n);
    free(text);
    if (rc != 0) return -1;
    if (n == 0) {
        free(v);
        return keytab_err(c, node, key, "trace file '%s' holds no accepted lengths",
                          t->file);
    }
    free(t->v);
    t->v = v;
    t->n = n;
    return 0;
}

static int write_file(FILE *f, const keytab_key_t *k, const void *base, int indent)
{
    (void)k;
    (void)indent;
    const trace_par_t *t = base;
    if (fputc(' ', f) == EOF || keytab_write_string(f, t->file) != 0) return -1;
    return fputc('\n', f) == EOF ? -1 : 0;
}

static const keytab_key_t TRACE_KEYS[] = {
    {.name = "file", .type = KT_CUSTOM, .parse = parse_file, .write = write_file,
     .flags = KF_REQUIRED},
    {.name = NULL}};

static void trace_par_fini(void *par)
{
    free(((trace_par_t *)par)->v);
}

static int trace_check(const void *par, err_t *err)
{
    const trace_par_t *t = par;
    if (t->n < 1 || !t->v)
        return err_set(err, ERR_INPUT, "acceptance.file: trace '%s' holds no "
                       "accepted lengths", t->file);
    for (int i = 0; i < t->n; i++)
        if (t->v[i] < 0)
            return err_set(err, ERR_INPUT, "acceptance.file: trace '%s' entry %d "
                           "is negative (%d)", t->file, i + 1, t->v[i]);
    return 0;
}

static int trace_init(void *st, const void *par, const accept_seat_t *seat, err_t *err)
{
    (void)err;
    ((trace_state_t *)st)->pos = seat->tenant % ((const trace_par_t *)par)->n;
    return 0;
}

static int trace_draw(void *st, const void *par, gsl_rng *r, int gamma)
{
    (void)r;
    const trace_par_t *t = par;
    trace_state_t *s = st;
    int v = t->v[s->pos];
    s->pos = (s->pos + 1) % t->n;
    return v < gamma ? v : gamma;
}

static double trace_mean(const void *par, int gamma)
{
    (void)par;
    (void)gamma;
    return NAN;
}

static int trace_law(const void *par, int gamma, accept_law_t *L, err_t *err)
{
    const trace_par_t *t = par;
    if (accept_law_init(L, 1, 1, gamma, err) != 0) return -1;
    for (int i = 0; i < t->n; i++) {   /* counts first, then shares */
        if (t->v[i] < gamma) *accept_law_rej(L, 0, 0, t->v[i], 0) += 1;
        else L->part[0].full[0][0] += 1;
    }
    for (int a = 0; a < gamma; a++) *accept_law_rej(L, 0, 0, a, 0) /= t->n;
    L->part[0].full[0][0] /= t->n;
    return 0;
}

const accept_model_t accept_trace_model = {
    .name = "trace",
    .keys = TRACE_KEYS,
    .par_size = sizeof(trace_par_t),
    .par_fini = trace_par_fini,
    .check = trace_check,
    .init = trace_init,
    .draw = trace_draw,
    .mean = trace_mean,
    .law = trace_law,
};
