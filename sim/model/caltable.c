/* caltable — reading and writing calibration tables (format: caltable.h).
 *
 * The reader walks the marked node tree of sim/io/ynode.c (the one YAML reader,
 * which also refuses duplicate keys) and checks every key against a small
 * table per mapping, so unknown keys, missing required keys and malformed
 * values are all reported the same way: FILE:LINE:COLUMN of the offending
 * node, the dotted key, the problem. Numbers are written in the
 * shortest form that parses back to the same double, so a table survives a
 * write/read cycle bit for bit.
 */
#include "model/caltable.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/cards.h"
#include "io/keytab.h"
#include "io/outfile.h"
#include "base/suggest.h"
#include "base/version.h"
#include "io/infile.h"
#include "io/ynode.h"

#define CALTABLE_FORMAT "specsim-calibration/1"

/* Parsing context: where messages point and what they name. */
typedef struct ctx {
    const char *path;
    err_t *err;
} ctx_t;

static int fail_line(const ctx_t *c, int line, int col, const char *key,
                     const char *problem)
{
    return err_set(c->err, ERR_INPUT, "%s:%d:%d: %s: %s", c->path, line, col, key,
                   problem);
}

/* At a value (or mapping) node. */
static int fail_at(const ctx_t *c, const ynode_t *n, const char *key,
                   const char *problem)
{
    return fail_line(c, n ? n->line : 1, n ? n->col : 1, key, problem);
}

/* At a key as written. */
static int fail_key(const ctx_t *c, const ynode_pair_t *p, const char *key,
                    const char *problem)
{
    return fail_line(c, p->kline, p->kcol, key, problem);
}

static const char *scalar(const ynode_t *n)
{
    return n && n->kind == YNODE_SCALAR ? n->str : NULL;
}

static int fail_unknown(const ctx_t *c, const ynode_pair_t *p, const char *dotted,
                        const char *const *allowed, int nallowed)
{
    char msg[500];
    suggest_unknown_key(msg, sizeof msg, p->key, allowed, (size_t)nallowed);
    return fail_key(c, p, dotted, msg);
}

/* Optional text may be empty (""), required text may not. */
static int get_text(const ctx_t *c, const ynode_t *v, const char *key,
                    char *out, size_t outsz, int allow_empty)
{
    const char *s = scalar(v);
    if (!s) return fail_at(c, v, key, "expected a string");
    size_t len = strlen(s);
    if (len == 0 && !allow_empty) return fail_at(c, v, key, "empty string");
    if (len >= outsz) {
        char msg[64];
        snprintf(msg, sizeof msg, "too long (at most %zu characters)", outsz - 1);
        return fail_at(c, v, key, msg);
    }
    memcpy(out, s, len + 1);
    return 0;
}

static int get_string(const ctx_t *c, const ynode_t *v, const char *key,
                      char *out, size_t outsz)
{
    return get_text(c, v, key, out, outsz, 0);
}

/* A finite number >= lo (strictly > lo when strict). */
static int get_double(const ctx_t *c, const ynode_t *v, const char *key,
                      double lo, int strict, double *out)
{
    const char *s = scalar(v);
    if (!s || !*s) return fail_at(c, v, key, "expected a number");
    char *end;
    errno = 0;
    double x = strtod(s, &end);
    /* ERANGE on underflow still yields the nearest (denormal) value. */
    if (end == s || *end || !isfinite(x))
        return fail_at(c, v, key, "expected a finite number");
    if (strict ? !(x > lo) : !(x >= lo))
        return fail_at(c, v, key, strict ? (lo == 0 ? "must be > 0" : "out of range")
                                         : (lo == 0 ? "must be >= 0" : "out of range"));
    *out = x;
    return 0;
}

static int get_int(const ctx_t *c, const ynode_t *v, const char *key,
                   long lo, int *out)
{
    const char *s = scalar(v);
    if (!s || !*s) return fail_at(c, v, key, "expected an integer");
    char *end;
    errno = 0;
    long x = strtol(s, &end, 10);
    if (end == s || *end || errno == ERANGE || x > INT32_MAX)
        return fail_at(c, v, key, "expected an integer");
    if (x < lo) return fail_at(c, v, key, lo == 1 ? "must be >= 1" : "must be >= 0");
    *out = (int)x;
    return 0;
}

/* ---- rows ---------------------------------------------------------------- */

enum ftype { F_STR, F_INT1, F_INT0, F_POS, F_NONNEG };
#define OPBIT(o) (1u << (o))
#define ALLOPS (OPBIT(CAL_LINEAR) | OPBIT(CAL_ATTENTION) | OPBIT(CAL_TOKEN))

typedef struct field {
    const char *key;
    enum ftype type;
    size_t off, size;     /* offset in caltable_row_t; size for strings */
    unsigned allowed;     /* ops that may give it */
    unsigned required;    /* ops that must give it */
} field_t;

#define ROWF(k, t, member, al, rq) \
    {k, t, offsetof(caltable_row_t, member), sizeof(((caltable_row_t *)0)->member), al, rq}

static const field_t row_fields[] = {
    ROWF("name", F_STR, name, OPBIT(CAL_LINEAR), OPBIT(CAL_LINEAR)),
    ROWF("quant", F_STR, quant, OPBIT(CAL_LINEAR), 0),
    ROWF("kernel", F_STR, kernel, OPBIT(CAL_LINEAR), 0),
    ROWF("m", F_INT1, m, OPBIT(CAL_LINEAR) | OPBIT(CAL_TOKEN),
         OPBIT(CAL_LINEAR) | OPBIT(CAL_TOKEN)),
    ROWF("n", F_INT1, n, OPBIT(CAL_LINEAR), OPBIT(CAL_LINEAR)),
    ROWF("k", F_INT1, k, OPBIT(CAL_LINEAR), OPBIT(CAL_LINEAR)),
    ROWF("q", F_INT1, q, OPBIT(CAL_ATTENTION) | OPBIT(CAL_TOKEN), OPBIT(CAL_ATTENTION)),
    ROWF("context", F_INT0, context, OPBIT(CAL_ATTENTION) | OPBIT(CAL_TOKEN),
         OPBIT(CAL_ATTENTION) | OPBIT(CAL_TOKEN)),
    ROWF("heads", F_INT1, heads, OPBIT(CAL_ATTENTION), OPBIT(CAL_ATTENTION)),
    ROWF("kv_heads", F_INT1, kv_heads, OPBIT(CAL_ATTENTION), OPBIT(CAL_ATTENTION)),
    ROWF("head_dim", F_INT1, head_dim, OPBIT(CAL_ATTENTION), OPBIT(CAL_ATTENTION)),
    ROWF("batch", F_INT1, batch, OPBIT(CAL_ATTENTION) | OPBIT(CAL_TOKEN), 0),
    ROWF("logits", F_INT0, logits, OPBIT(CAL_TOKEN), 0),
    ROWF("time_s", F_POS, time_s, ALLOPS, ALLOPS),
    ROWF("gbs", F_NONNEG, gbs, ALLOPS, 0),
    ROWF("gflops", F_NONNEG, gflops, ALLOPS, 0),
    ROWF("ceiling_frac", F_NONNEG, ceiling_frac, ALLOPS, 0),
};
#define NROWF ((int)(sizeof row_fields / sizeof row_fields[0]))

static const char *const op_names[] = {"linear", "attention", "token"};
static const char *const linear_names[] = {"qkv", "o", "gate_up", "down", "lm_head"};

static int set_field(const ctx_t *c, const field_t *f, const ynode_t *v,
                     const char *key, caltable_row_t *row)
{
    char *p = (char *)row + f->off;
    switch (f->type) {
    case F_STR: return get_text(c, v, key, p, f->size, !f->required);
    case F_INT1: return get_int(c, v, key, 1, (int *)(void *)p);
    case F_INT0: return get_int(c, v, key, 0, (int *)(void *)p);
    case F_POS: return get_double(c, v, key, 0, 1, (double *)(void *)p);
    case F_NONNEG: return get_double(c, v, key, 0, 0, (double *)(void *)p);
    }
    return fail_at(c, v, key, "internal: bad field type");
}

/* A bad value of a key the row is known to hold (it was parsed): the
 * message points at that value and names ops.IDX.KEY. */
static int fail_row_value(const ctx_t *c, const ynode_t *rn, int idx,
                          const char *key, const char *problem)
{
    const ynode_t *v = ynode_get(rn, key);
    char dotted[96];
    snprintf(dotted, sizeof dotted, "ops.%d.%s", idx, key);
    return fail_at(c, v ? v : rn, dotted, problem);
}

/* The op of a row, which decides the keys it may give: -1 with err set. */
static int row_op(const ctx_t *c, const ynode_t *rn, int idx)
{
    char key[96];
    snprintf(key, sizeof key, "ops.%d.op", idx);
    const ynode_t *opv = ynode_get(rn, "op");
    if (!opv) return fail_at(c, rn, key, "missing required key (linear, attention or token)");
    const char *ops = scalar(opv);
    for (int i = 0; ops && i < 3; i++)
        if (strcmp(ops, op_names[i]) == 0) return i;
    return fail_at(c, opv, key, "expected linear, attention or token");
}

/* Every key of the row against the fields its op allows; *seen gets a bit
 * per field given. */
static int row_keys(const ctx_t *c, const ynode_t *rn, int idx, int op,
                    unsigned *seen, caltable_row_t *row)
{
    const char *allowed[NROWF + 1];
    int nallowed = 0;
    allowed[nallowed++] = "op";
    for (int i = 0; i < NROWF; i++)
        if (row_fields[i].allowed & OPBIT(op)) allowed[nallowed++] = row_fields[i].key;
    for (size_t pi = 0; pi < rn->n; pi++) {
        const ynode_pair_t *pr = &rn->pairs[pi];
        char dotted[160];
        snprintf(dotted, sizeof dotted, "ops.%d.%s", idx, pr->key);
        if (strcmp(pr->key, "op") == 0) continue;
        int fi = -1;
        for (int i = 0; i < NROWF; i++)
            if (strcmp(pr->key, row_fields[i].key) == 0) fi = i;
        if (fi < 0) return fail_unknown(c, pr, dotted, allowed, nallowed);
        if (!(row_fields[fi].allowed & OPBIT(op))) {
            char msg[96];
            snprintf(msg, sizeof msg, "not a key of a %s row", op_names[op]);
            return fail_key(c, pr, dotted, msg);
        }
        *seen |= 1u << fi;
        if (set_field(c, &row_fields[fi], pr->val, dotted, row) != 0) return -1;
    }
    return 0;
}

/* What the row's keys mean together: token rows' q x batch = m, linear
 * rows' names and precisions. */
static int row_consistent(const ctx_t *c, const ynode_t *rn, int idx,
                          caltable_row_t *row)
{
    if (row->op == CAL_TOKEN) {
        /* A step of `batch` jobs of q new tokens each; one job by default. */
        if (!row->batch) row->batch = row->q ? row->m / row->q : 1;
        if (!row->q) row->q = row->m / row->batch;
        if ((long)row->q * row->batch != row->m)
            return fail_row_value(c, rn, idx, "m", "must equal q x batch (jobs in the "
                                  "step x new tokens per job)");
        if (row->logits > row->q)
            return fail_row_value(c, rn, idx, "logits", "must be at most q (the new tokens "
                                  "per job, whose rows the lm_head may compute)");
        row->nohead = row->logits < 0 ? 0 : row->q - row->logits;
    }
    if (row->op == CAL_LINEAR) {
        int ok = 0;
        for (int i = 0; i < 5; i++) ok |= strcmp(row->name, linear_names[i]) == 0;
        if (!ok)
            return fail_row_value(c, rn, idx, "name",
                                  "expected qkv, o, gate_up, down or lm_head");
        if (row->quant[0] && precision_parse(row->quant) < 0)
            return fail_row_value(c, rn, idx, "quant",
                                  "expected fp32, fp16, w8a16, w4a16, w4a4 or fp8");
        if (row->kernel[0] && strcmp(row->kernel, "exact") != 0 && strcmp(row->kernel, "int8") != 0)
            return fail_row_value(c, rn, idx, "kernel", "expected exact or int8");
    }
    return 0;
}

static int parse_row(const ctx_t *c, const ynode_t *rn, int idx, caltable_row_t *row)
{
    char key[96];
    snprintf(key, sizeof key, "ops.%d", idx);
    if (rn->kind != YNODE_MAP)
        return fail_at(c, rn, key, "expected a mapping {op: ..., ...}");
    memset(row, 0, sizeof *row);
    row->line = rn->line;
    row->column = rn->col;
    int op = row_op(c, rn, idx);
    if (op < 0) return -1;
    row->op = (enum caltable_op)op;
    if (op == CAL_ATTENTION) row->batch = 1;   /* optional, one sequence */
    if (op == CAL_TOKEN) row->logits = -1;     /* optional: every row's */
    unsigned seen = 0;
    if (row_keys(c, rn, idx, op, &seen, row) != 0) return -1;
    for (int i = 0; i < NROWF; i++) {
        if ((row_fields[i].required & OPBIT(op)) && !(seen & (1u << i))) {
            char dotted[160];
            snprintf(dotted, sizeof dotted, "ops.%d.%s", idx, row_fields[i].key);
            return fail_at(c, rn, dotted, "missing required key");
        }
    }
    return row_consistent(c, rn, idx, row);
}

/* ---- top level ----------------------------------------------------------- */

/* A mapping of named scalar fields (provenance, ceilings). */
typedef struct sfield {
    const char *key;
    int is_num;       /* 0 string, 1 non-negative number */
    void *dst;
    size_t size;
    int required;
} sfield_t;

static int parse_fields(const ctx_t *c, const ynode_t *m, const char *prefix,
                        sfield_t *fs, int nf)
{
    if (m->kind != YNODE_MAP) return fail_at(c, m, prefix, "expected a mapping");
    const char *allowed[16];
    for (int i = 0; i < nf; i++) allowed[i] = fs[i].key;
    unsigned seen = 0;
    for (size_t pi = 0; pi < m->n; pi++) {
        const ynode_pair_t *pr = &m->pairs[pi];
        char dotted[160];
        snprintf(dotted, sizeof dotted, "%s.%s", prefix, pr->key);
        int fi = -1;
        for (int i = 0; i < nf; i++)
            if (strcmp(pr->key, fs[i].key) == 0) fi = i;
        if (fi < 0) return fail_unknown(c, pr, dotted, allowed, nf);
        seen |= 1u << fi;
        int rc = fs[fi].is_num ? get_double(c, pr->val, dotted, 0, 0, fs[fi].dst)
                               : get_text(c, pr->val, dotted, fs[fi].dst, fs[fi].size,
                                          !fs[fi].required);
        if (rc != 0) return -1;
    }
    for (int i = 0; i < nf; i++) {
        if (fs[i].required && !(seen & (1u << i))) {
            char dotted[160];
            snprintf(dotted, sizeof dotted, "%s.%s", prefix, fs[i].key);
            return fail_at(c, m, dotted, "missing required key");
        }
    }
    return 0;
}

static int parse_ops(const ctx_t *c, const ynode_t *v, caltable_t *t)
{
    if (v->kind != YNODE_SEQ) return fail_at(c, v, "ops", "expected a list of rows");
    if (v->n == 0) return fail_at(c, v, "ops", "empty: a table needs measured rows");
    if (v->n > 10000000) return fail_at(c, v, "ops", "too many rows");
    t->rows = calloc(v->n, sizeof *t->rows);
    if (!t->rows) return err_set(c->err, ERR_RUNTIME, "%s: out of memory", c->path);
    for (size_t i = 0; i < v->n; i++) {
        if (parse_row(c, v->items[i], (int)i, &t->rows[i]) != 0) return -1;
        t->nrows = (int)i + 1;
    }
    return 0;
}

/* ---- rows against each other and against the ceilings --------------------- */
/* A table comes from one measurement: no shape twice (a second time for the
 * same shape silently replaced the first), and no time faster than the
 * table's own ceilings allow for the bytes (and, with fp16_tflops, the
 * flops) the operator cannot avoid. */

/* The same shape: every field but the measurement. */
static int same_shape(const caltable_row_t *a, const caltable_row_t *b)
{
    return a->op == b->op && strcmp(a->name, b->name) == 0 &&
           strcmp(a->quant, b->quant) == 0 && a->m == b->m && a->n == b->n &&
           a->k == b->k && a->q == b->q && a->context == b->context &&
           a->heads == b->heads && a->kv_heads == b->kv_heads &&
           a->head_dim == b->head_dim && a->batch == b->batch && a->nohead == b->nohead;
}

static int shape_cmp(const caltable_row_t *a, const caltable_row_t *b)
{
    int x[] = {a->op, a->m, a->n, a->k, a->q, a->context, a->heads, a->kv_heads,
               a->head_dim, a->batch, a->nohead};
    int y[] = {b->op, b->m, b->n, b->k, b->q, b->context, b->heads, b->kv_heads,
               b->head_dim, b->batch, b->nohead};
    for (size_t i = 0; i < sizeof x / sizeof *x; i++)
        if (x[i] != y[i]) return x[i] < y[i] ? -1 : 1;
    int s = strcmp(a->name, b->name);
    return s ? s : strcmp(a->quant, b->quant);
}

/* Sorts row pointers by shape, the earlier row first among equals. */
static int by_shape(const void *p, const void *q)
{
    const caltable_row_t *a = *(const caltable_row_t *const *)p;
    const caltable_row_t *b = *(const caltable_row_t *const *)q;
    int s = shape_cmp(a, b);
    return s ? s : (a < b ? -1 : a > b);
}

static int check_duplicates(const ctx_t *c, const caltable_t *t)
{
    const caltable_row_t **v = malloc((size_t)t->nrows * sizeof *v);
    if (!v) return err_set(c->err, ERR_RUNTIME, "%s: out of memory", c->path);
    for (int i = 0; i < t->nrows; i++) v[i] = &t->rows[i];
    qsort(v, (size_t)t->nrows, sizeof *v, by_shape);
    const caltable_row_t *dup = NULL, *first = NULL;
    for (int i = 1; i < t->nrows && !dup; i++)
        if (same_shape(v[i - 1], v[i])) {
            first = v[i - 1];
            dup = v[i];
        }
    free(v);
    if (!dup) return 0;
    /* The later of the pair is the one to blame (qsort kept the earlier
     * row first among equals, by address = by index). */
    char key[32], msg[256];
    snprintf(key, sizeof key, "ops.%d", (int)(dup - t->rows));
    snprintf(msg, sizeof msg, "the same %s shape as ops.%d (line %d), measured again "
             "(%.6g s against %.6g s): a table holds one time per shape",
             op_names[dup->op], (int)(first - t->rows), first->line, dup->time_s,
             first->time_s);
    return fail_line(c, dup->line, dup->column, key, msg);
}

/* Bytes per weight at precision name q (a lower bound: scales left out). */
static double weight_bpe(const char *q)
{
    switch (precision_parse(q)) {
    case PREC_FP32: return 4;
    case PREC_FP16: return 2;
    case PREC_W8A16: return 1;
    default: return 0.5;
    }
}

/* The bytes and flops row r cannot do without. A token step reads at least
 * one layer's weights and the lm_head: the largest linear row of each name
 * (shapes are per layer). */
static void row_floor(const caltable_t *t, const caltable_row_t *r, double *bytes,
                      double *flops)
{
    *bytes = *flops = 0;
    if (r->op == CAL_LINEAR) {
        *bytes = (double)r->n * r->k * weight_bpe(r->quant[0] ? r->quant : t->quant);
        *flops = 2.0 * r->m * (double)r->n * r->k;
    } else if (r->op == CAL_ATTENTION) {
        double kv = (double)r->context * r->kv_heads * r->head_dim * r->batch;
        *bytes = 2.0 * 2.0 * kv;   /* K and V, fp16 */
        *flops = 4.0 * r->q * (double)r->context * r->heads * r->head_dim * r->batch;
    } else {
        for (int l = 0; l < 5; l++) {
            double nk = 0;
            for (int i = 0; i < t->nrows; i++) {
                const caltable_row_t *x = &t->rows[i];
                if (x->op == CAL_LINEAR && strcmp(x->name, linear_names[l]) == 0)
                    nk = fmax(nk, (double)x->n * x->k);
            }
            *bytes += nk * weight_bpe(t->quant);
            *flops += 2.0 * r->m * nk;
        }
    }
}

static int check_floors(const ctx_t *c, const caltable_t *t)
{
    for (int i = 0; i < t->nrows; i++) {
        const caltable_row_t *r = &t->rows[i];
        double bytes, flops, floor = CALTABLE_MIN_TIME_S;
        char why[256];
        snprintf(why, sizeof why, "no operator runs in under %g s", CALTABLE_MIN_TIME_S);
        row_floor(t, r, &bytes, &flops);
        /* The faster of the two read ceilings: a kernel that streams
         * several rows at once may beat the one-stream read. */
        int multi = t->read_multi_gbs > t->read_gbs;
        double bw = multi ? t->read_multi_gbs : t->read_gbs;
        double tb = bw > 0 ? bytes / (bw * 1e9) : 0;
        double tf = t->fp16_tflops > 0 ? flops / (t->fp16_tflops * 1e12) : 0;
        if (tb / CALTABLE_SLACK > floor) {
            floor = tb / CALTABLE_SLACK;
            snprintf(why, sizeof why, "its %.6g bytes at ceilings.%s %.6g GB/s "
                     "take %.6g s", bytes, multi ? "read_multi_gbs" : "read_gbs", bw, tb);
        }
        if (tf / CALTABLE_SLACK > floor) {
            floor = tf / CALTABLE_SLACK;
            snprintf(why, sizeof why, "its %.6g flops at ceilings.fp16_tflops %.6g "
                     "take %.6g s", flops, t->fp16_tflops, tf);
        }
        if (r->time_s >= floor) continue;
        char key[48], msg[512];
        snprintf(key, sizeof key, "ops.%d.time_s", i);
        snprintf(msg, sizeof msg, "%.6g s is faster than the table's own ceilings allow: "
                 "%s (a measurement beats its ceiling by noise, not by %gx)", r->time_s,
                 why, CALTABLE_SLACK);
        return fail_line(c, r->line, r->column, key, msg);
    }
    return 0;
}

static const char *const top_keys[] = {"format", "provenance", "device_kind", "model",
                                       "quant", "ceilings", "ops"};
enum { K_FORMAT, K_PROV, K_KIND, K_MODEL, K_QUANT, K_CEIL, K_OPS, K_N };

/* The top-level values by key (NULL where absent); unknown keys and missing
 * required ones are errors. */
static int top_values(const ctx_t *c, const ynode_t *root, const ynode_t **val)
{
    for (size_t pi = 0; pi < root->n; pi++) {
        const ynode_pair_t *pr = &root->pairs[pi];
        int ki = -1;
        for (int i = 0; i < K_N; i++)
            if (strcmp(pr->key, top_keys[i]) == 0) ki = i;
        if (ki < 0) return fail_unknown(c, pr, pr->key, top_keys, K_N);
        val[ki] = pr->val;
    }
    static const int required[] = {K_FORMAT, K_PROV, K_MODEL, K_QUANT, K_OPS};
    for (size_t i = 0; i < sizeof required / sizeof required[0]; i++)
        if (!val[required[i]])
            return fail_at(c, root, top_keys[required[i]], "missing required key");
    return 0;
}

static int parse_identity(const ctx_t *c, const ynode_t *const *val, caltable_t *t)
{
    if (val[K_KIND]) {
        if (get_text(c, val[K_KIND], "device_kind", t->device_kind,
                     sizeof t->device_kind, 1) != 0)
            return -1;
        if (t->device_kind[0] && strcmp(t->device_kind, "cpu") != 0 &&
            strcmp(t->device_kind, "cuda") != 0)
            return fail_at(c, val[K_KIND], "device_kind", "expected cpu or cuda");
    }
    if (get_string(c, val[K_MODEL], "model", t->model, sizeof t->model) != 0) return -1;
    t->model_line = val[K_MODEL]->line;
    t->model_column = val[K_MODEL]->col;
    t->quant_line = val[K_QUANT]->line;
    t->quant_column = val[K_QUANT]->col;
    if (get_string(c, val[K_QUANT], "quant", t->quant, sizeof t->quant) != 0) return -1;
    if (precision_parse(t->quant) < 0)
        return fail_at(c, val[K_QUANT], "quant",
                       "expected fp32, fp16, w8a16, w4a16, w4a4 or fp8");
    return 0;
}

static int parse_root(const ctx_t *c, const ynode_t *root, caltable_t *t)
{
    if (root->kind != YNODE_MAP)
        return fail_at(c, root, "(top level)", "expected a mapping");
    const ynode_t *val[K_N] = {0};
    if (top_values(c, root, val) != 0) return -1;
    char fmt[64];
    if (get_string(c, val[K_FORMAT], "format", fmt, sizeof fmt) != 0) return -1;
    if (strcmp(fmt, CALTABLE_FORMAT) != 0)
        return fail_at(c, val[K_FORMAT], "format",
                       "unsupported format (expected " CALTABLE_FORMAT ")");
    sfield_t prov[] = {
        {"command", 0, t->command, sizeof t->command, 1},
        {"date", 0, t->date, sizeof t->date, 0},
        {"host", 0, t->host, sizeof t->host, 0},
        {"device", 0, t->device, sizeof t->device, 0},
        {"compiler", 0, t->compiler, sizeof t->compiler, 0},
        {"notes", 0, t->notes, sizeof t->notes, 0},
        {"specsim_version", 0, t->specsim_version, sizeof t->specsim_version, 0},
    };
    if (parse_fields(c, val[K_PROV], "provenance", prov, 7) != 0) return -1;
    if (parse_identity(c, val, t) != 0) return -1;
    if (val[K_CEIL]) {
        sfield_t ceil[] = {
            {"read_gbs", 1, &t->read_gbs, 0, 0},
            {"copy_gbs", 1, &t->copy_gbs, 0, 0},
            {"fp16_tflops", 1, &t->fp16_tflops, 0, 0},
            {"read_multi_gbs", 1, &t->read_multi_gbs, 0, 0},
            {"read_streams", 1, &t->read_streams, 0, 0},
        };
        if (parse_fields(c, val[K_CEIL], "ceilings", ceil, 5) != 0) return -1;
    }
    if (parse_ops(c, val[K_OPS], t) != 0) return -1;
    return check_duplicates(c, t) != 0 || check_floors(c, t) != 0 ? -1 : 0;
}

int caltable_load(const char *path, caltable_t *out, err_t *err)
{
    return caltable_load_in(NULL, path, out, err);
}

int caltable_load_in(struct infiles *files, const char *path, caltable_t *out,
                     err_t *err)
{
    memset(out, 0, sizeof *out);
    ynode_t *own = NULL;
    const ynode_t *root = NULL;
    err_t rerr;
    int rc;
    if (files) {   /* parsed once per command, the tree shared */
        rc = infiles_yaml(files, path, INFILE_YAML_MAX, &root, &rerr);
        if (rc == -2) return err_set(err, rerr.code, "%s", rerr.msg);
    } else {
        char *text;
        size_t len;
        rc = infile_read(path, INFILE_YAML_MAX, &text, &len, &rerr);
        if (rc == 0) {
            rc = ynode_parse(path, NULL, text, len, 1, 0, &own, err);
            free(text);
            if (rc != 0) return -1;
            root = own;
        }
    }
    if (rc != 0)
        return err_set(err, rerr.code, "cannot read calibration table: %s", rerr.msg);
    ctx_t c = {path, err};
    if (!root) {
        rc = err_set(err, ERR_INPUT, "%s:1:1: (top level): empty calibration table", path);
    } else {
        snprintf(out->path, sizeof out->path, "%s", path);
        rc = parse_root(&c, root, out);
    }
    ynode_free(own);
    if (rc != 0) caltable_fini(out);
    return rc;
}

void caltable_fini(caltable_t *t)
{
    if (!t) return;
    free(t->rows);
    memset(t, 0, sizeof *t);
}

/* ---- writing ------------------------------------------------------------- */

/* Shortest %g form that reads back as exactly x. */
static void fmt_double(char *buf, size_t sz, double x)
{
    for (int p = 6; p <= 17; p++) {
        snprintf(buf, sz, "%.*g", p, x);
        if (strtod(buf, NULL) == x) return;
    }
}

static void put_kv_str(FILE *f, const char *indent, const char *k, const char *v)
{
    if (!v[0]) return;
    fprintf(f, "%s%s: ", indent, k);
    keytab_write_quoted(f, v);
    fputc('\n', f);
}

static void put_num(FILE *f, const char *sep, const char *k, double v)
{
    char b[40];
    fmt_double(b, sizeof b, v);
    fprintf(f, "%s%s: %s", sep, k, b);
}

static void put_row(FILE *f, const caltable_row_t *r)
{
    int op = (unsigned)r->op < 3 ? (int)r->op : 0;
    fprintf(f, "  - {op: %s", op_names[op]);
    switch (r->op) {
    case CAL_LINEAR:
        fputs(", name: ", f);
        keytab_write_quoted(f, r->name);
        if (r->quant[0]) { fputs(", quant: ", f); keytab_write_quoted(f, r->quant); }
        if (r->kernel[0]) { fputs(", kernel: ", f); keytab_write_quoted(f, r->kernel); }
        fprintf(f, ", m: %d, n: %d, k: %d", r->m, r->n, r->k);
        break;
    case CAL_ATTENTION:
        fprintf(f, ", q: %d, context: %d, heads: %d, kv_heads: %d, head_dim: %d, batch: %d",
                r->q, r->context, r->heads, r->kv_heads, r->head_dim, r->batch);
        break;
    case CAL_TOKEN:
        fprintf(f, ", m: %d, context: %d", r->m, r->context);
        if (r->batch > 1) fprintf(f, ", q: %d, batch: %d", r->q, r->batch);
        if (r->nohead > 0) fprintf(f, ", logits: %d", r->q - r->nohead);
        break;
    }
    put_num(f, ", ", "time_s", r->time_s);
    if (r->gbs != 0) put_num(f, ", ", "gbs", r->gbs);
    if (r->gflops != 0) put_num(f, ", ", "gflops", r->gflops);
    if (r->ceiling_frac != 0) put_num(f, ", ", "ceiling_frac", r->ceiling_frac);
    fputs("}\n", f);
}

int caltable_write(const caltable_t *t, FILE *f)
{
    fputs("# specsim calibration table: written by a measurement (build/calibrate),\n"
          "# never edited by hand. Format: sim/model/caltable.h.\n", f);
    fputs("format: " CALTABLE_FORMAT "\n", f);
    fputs("provenance:\n", f);
    put_kv_str(f, "  ", "command", t->command);
    /* The build that measured: whatever table this writes is a new one. */
    put_kv_str(f, "  ", "specsim_version", version_string());
    put_kv_str(f, "  ", "date", t->date);
    put_kv_str(f, "  ", "host", t->host);
    put_kv_str(f, "  ", "device", t->device);
    put_kv_str(f, "  ", "compiler", t->compiler);
    put_kv_str(f, "  ", "notes", t->notes);
    put_kv_str(f, "", "device_kind", t->device_kind);
    put_kv_str(f, "", "model", t->model);
    put_kv_str(f, "", "quant", t->quant);
    if (t->read_gbs != 0 || t->copy_gbs != 0 || t->fp16_tflops != 0 || t->read_multi_gbs != 0 ||
        t->read_streams != 0) {
        fputs("ceilings:\n", f);
        if (t->read_gbs != 0) { put_num(f, "  ", "read_gbs", t->read_gbs); fputc('\n', f); }
        if (t->copy_gbs != 0) { put_num(f, "  ", "copy_gbs", t->copy_gbs); fputc('\n', f); }
        if (t->fp16_tflops != 0) {
            put_num(f, "  ", "fp16_tflops", t->fp16_tflops);
            fputc('\n', f);
        }
        if (t->read_multi_gbs != 0) {
            put_num(f, "  ", "read_multi_gbs", t->read_multi_gbs);
            fputc('\n', f);
        }
        if (t->read_streams != 0) {
            put_num(f, "  ", "read_streams", t->read_streams);
            fputc('\n', f);
        }
    }
    fputs("ops:\n", f);
    for (int i = 0; i < t->nrows; i++) put_row(f, &t->rows[i]);
    /* Flushed here so a full disk or a closed pipe shows up as an error. */
    return fflush(f) != 0 || ferror(f) ? -1 : 0;
}

int caltable_save(const caltable_t *t, const char *path, FILE *dflt, err_t *err)
{
    if (!path || !path[0]) {
        if (caltable_write(t, dflt) != 0)
            return err_set(err, ERR_RUNTIME, "calibration table: write error");
        return 0;
    }
    /* Atomically, or through to a device (sim/io/outfile.h). */
    outfile_t o;
    if (outfile_open(&o, path, err) != 0) return -1;
    if (caltable_write(t, o.f) != 0) {
        int e = errno;
        outfile_abort(&o);
        return err_set(err, ERR_RUNTIME, "%s: write failed: %s", path, strerror(e));
    }
    return outfile_commit(&o, err);
}
