/* sweepspec — parsing and expanding the `sweep:` section (see sweepspec.h). */
#include "config/sweepspec.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "io/infile.h"
#include "io/keytab.h"
#include "config/scenario.h"
#include "base/suggest.h"
#include "base/units.h"
#include "io/ynode.h"

/* Range expansions longer than this are refused: one axis of ten million
 * values is a typo (a step in the wrong unit), not a sweep. */
#define AXIS_MAX_VALUES SWEEPSPEC_MAX_VALUES

typedef struct ctx {
    const char *name;       /* file name for messages */
    sweepspec_t *sp;
    err_t *err;
    long nvalues;           /* in all axes so far (SWEEPSPEC_MAX_VALUES) */
} ctx_t;

/* ---- small growable string ------------------------------------------- */

typedef struct sbuf {
    char *s;
    size_t n, cap;
    int oom;
} sbuf_t;

static void sb_addn(sbuf_t *b, const char *s, size_t n)
{
    if (b->oom) return;
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < b->n + n + 1) cap *= 2;
        char *p = realloc(b->s, cap);
        if (!p) { b->oom = 1; return; }
        b->s = p;
        b->cap = cap;
    }
    memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = '\0';
}

static void sb_add(sbuf_t *b, const char *s) { sb_addn(b, s, strlen(s)); }

/* ---- errors ------------------------------------------------------------ */

static int fail_line(ctx_t *c, int line, int col, const char *fmt, va_list ap)
{
    char msg[ERR_MSG_MAX];
    vsnprintf(msg, sizeof msg, fmt, ap);
    return err_set(c->err, ERR_INPUT, "%s:%d:%d: %s", c->name, line, col, msg);
}

/* At a node (a value or mapping) as written. */
static int fail_at(ctx_t *c, const ynode_t *node, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail_at(ctx_t *c, const ynode_t *node, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = fail_line(c, node->line, node->col, fmt, ap);
    va_end(ap);
    return rc;
}

/* At a mapping key as written. */
static int fail_key(ctx_t *c, const ynode_pair_t *p, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail_key(ctx_t *c, const ynode_pair_t *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = fail_line(c, p->kline, p->kcol, fmt, ap);
    va_end(ap);
    return rc;
}

static int oom(ctx_t *c)
{
    return err_set(c->err, ERR_RUNTIME, "%s: out of memory", c->name);
}

/* ---- node helpers -------------------------------------------------------- */

static const char *scalar(const ynode_t *n)
{
    return n && n->kind == YNODE_SCALAR ? n->str : NULL;
}

static int parse_bool(const char *s, int *out)
{
    static const char *yes[] = {"true", "True", "TRUE", "yes", "on"};
    static const char *no[] = {"false", "False", "FALSE", "no", "off"};
    for (size_t i = 0; i < sizeof yes / sizeof *yes; i++)
        if (strcmp(s, yes[i]) == 0) { *out = 1; return 0; }
    for (size_t i = 0; i < sizeof no / sizeof *no; i++)
        if (strcmp(s, no[i]) == 0) { *out = 0; return 0; }
    return -1;
}

/* A scalar may go into flow YAML unquoted when it cannot be mistaken for
 * structure; otherwise it is double-quoted. */
/* Plain (unquoted) only when a YAML reader gives s back unchanged: no
 * indicator first, no flow or comment characters, and nothing but
 * printable ASCII (control characters and the Unicode line breaks need the
 * escapes keytab_write_quoted writes). */
static int plain_safe(const char *s)
{
    if (!*s || isspace((unsigned char)*s) || isspace((unsigned char)s[strlen(s) - 1]))
        return 0;
    if (strchr("-?&*!|>'\"%@`#", *s) &&
        !(*s == '-' && (isdigit((unsigned char)s[1]) || s[1] == '.')))
        return 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p < 0x20 || *p >= 0x7f) return 0;
    return strpbrk(s, ",[]{}:#\"'\\") == NULL;
}

static void sb_quoted(sbuf_t *b, const char *s)
{
    if (plain_safe(s)) { sb_add(b, s); return; }
    char *t = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&t, &n);
    if (!f) { b->oom = 1; return; }
    int rc = keytab_write_quoted(f, s);
    if (fclose(f) != 0 || rc != 0) b->oom = 1;
    else sb_addn(b, t, n);
    free(t);
}

static void flow(const ynode_t *n, sbuf_t *b)
{
    switch (n->kind) {
    case YNODE_SCALAR:
        sb_quoted(b, n->str);
        break;
    case YNODE_SEQ:
        sb_add(b, "[");
        for (size_t i = 0; i < n->n; i++) {
            if (i) sb_add(b, ", ");
            flow(n->items[i], b);
        }
        sb_add(b, "]");
        break;
    case YNODE_MAP:
        sb_add(b, "{");
        for (size_t i = 0; i < n->n; i++) {
            if (i) sb_add(b, ", ");
            sb_quoted(b, n->pairs[i].key);
            sb_add(b, ": ");
            flow(n->pairs[i].val, b);
        }
        sb_add(b, "}");
        break;
    }
}

/* ---- axis values --------------------------------------------------------- */

/* The three per-value arrays hold room for the next power of two of values:
 * growing them by one value at a time copies them once per value, which
 * makes a long range quadratic wherever realloc cannot grow in place. */
static int axis_grow(sweep_axis_t *ax)
{
    int n = ax->nvalues;
    if (n != 0 && (n & (n - 1)) != 0) return 0; /* room left */
    size_t cap = n ? 2 * (size_t)n : 1;
    char **v = realloc(ax->values, cap * sizeof *v);
    if (v) ax->values = v;
    int *l = realloc(ax->vline, cap * sizeof *l);
    if (l) ax->vline = l;
    int *k = realloc(ax->vcol, cap * sizeof *k);
    if (k) ax->vcol = k;
    unsigned char *f = realloc(ax->vflow, cap * sizeof *f);
    if (f) ax->vflow = f;
    return v && l && k && f ? 0 : -1;
}

/* Takes n more values out of the sweep's SWEEPSPEC_MAX_VALUES, before they
 * are made: a list's items, or every step of a range (also the repeats an
 * integer range drops, which cost the same time to step through). */
static int reserve_values(ctx_t *c, const sweep_axis_t *ax, double n,
                          const ynode_t *mark)
{
    if (!((double)c->nvalues + n <= (double)SWEEPSPEC_MAX_VALUES))
        return fail_at(c, mark, "sweep.%s: more than %ld values in all axes "
                       "together (check the ranges' steps and counts)", ax->path,
                       SWEEPSPEC_MAX_VALUES);
    c->nvalues += (long)n;
    return 0;
}

/* Takes value (malloc'ed; freed on failure). */
static int axis_push(ctx_t *c, sweep_axis_t *ax, char *value, int is_flow,
                     const ynode_t *mark)
{
    if (axis_grow(ax) != 0) { free(value); return oom(c); }
    ax->values[ax->nvalues] = value;
    ax->vline[ax->nvalues] = mark->line;
    ax->vcol[ax->nvalues] = mark->col;
    ax->vflow[ax->nvalues] = (unsigned char)is_flow;
    ax->nvalues++;
    return 0;
}

static int axis_list(ctx_t *c, sweep_axis_t *ax, const ynode_t *n)
{
    if (n->n == 0)
        return fail_at(c, n, "sweep.%s: empty list (an axis needs at least one value)",
                       ax->path);
    if (reserve_values(c, ax, (double)n->n, n)) return -1;
    for (size_t i = 0; i < n->n; i++) {
        const ynode_t *item = n->items[i];
        sbuf_t b = {0};
        if (item->kind == YNODE_SCALAR) {
            if (!*item->str) return fail_at(c, item, "sweep.%s: empty value", ax->path);
            sb_add(&b, item->str);
        } else {
            flow(item, &b);
        }
        if (b.oom) { free(b.s); return oom(c); }
        if (axis_push(c, ax, b.s, item->kind != YNODE_SCALAR, item)) return -1;
    }
    return 0;
}

/* A range bound or step: its number and the unit written after it. */
typedef struct qty {
    double v;
    const char *unit;   /* points into the node's text; "" = none */
} qty_t;

/* The number and the unit as written after from (a unit is not checked
 * here, only where the value is used: any length, never cut short).
 * Malloc'ed; NULL when out of memory. */
static char *fmt_value(double v, const char *unit)
{
    char num[32];
    if (v == 0) v = 0; /* no "-0" */
    int n = snprintf(num, sizeof num, "%.10g", v);
    size_t ul = strlen(unit);
    char *s = n > 0 && n < (int)sizeof num ? malloc((size_t)n + ul + 1) : NULL;
    if (!s) return NULL;
    memcpy(s, num, (size_t)n);
    memcpy(s + n, unit, ul + 1);
    return s;
}

typedef struct range_nodes {
    const ynode_t *from, *to, *step, *count, *scale, *integer;
} range_nodes_t;

static int range_field(ctx_t *c, const sweep_axis_t *ax, const ynode_pair_t *p,
                       range_nodes_t *r)
{
    static const char *names[] = {"from", "to", "step", "count", "scale", "integer"};
    const ynode_t **slots[] = {&r->from, &r->to, &r->step, &r->count,
                               &r->scale, &r->integer};
    size_t nn = sizeof names / sizeof *names;
    for (size_t i = 0; i < nn; i++) {
        if (strcmp(p->key, names[i]) != 0) continue;
        if (!scalar(p->val) || !*scalar(p->val))
            return fail_at(c, p->val, "sweep.%s.%s: expected a scalar", ax->path, p->key);
        *slots[i] = p->val;
        return 0;
    }
    const char *near = suggest_nearest(p->key, names, nn);
    char hint[64] = "";
    if (near) snprintf(hint, sizeof hint, "did you mean '%s'? ", near);
    return fail_key(c, p, "sweep.%s.%s: unknown key (%sa range has from, to, "
                    "step, count, scale, integer)", ax->path, p->key, hint);
}

/* from: its number and unit, any unit that --set accepts (sim/base/units.c). */
static int range_from(ctx_t *c, const sweep_axis_t *ax, const ynode_t *n, qty_t *q)
{
    if (units_split(n->str, &q->v, &q->unit) != 0)
        return fail_at(c, n, "sweep.%s.from: '%s' is not a number (with an "
                       "optional unit)", ax->path, n->str);
    return 0;
}

/* to or step, expressed in the unit of from (another unit of the same
 * quantity is converted, e.g. 0.1s into ms). */
static int range_qty(ctx_t *c, const sweep_axis_t *ax, const char *field,
                     const ynode_t *n, const qty_t *ref, double *out)
{
    qty_t q;
    if (units_split(n->str, &q.v, &q.unit) != 0)
        return fail_at(c, n, "sweep.%s.%s: '%s' is not a number (with an "
                       "optional unit)", ax->path, field, n->str);
    if (units_convert(q.v, q.unit, ref->unit, out) != 0)
        return fail_at(c, n, "sweep.%s.%s: unit '%s' does not match the unit "
                       "'%s' of from", ax->path, field, q.unit, ref->unit);
    return 0;
}

static int push_num(ctx_t *c, sweep_axis_t *ax, double v, const char *unit,
                    int integer, double *last, const ynode_t *mark)
{
    if (integer) {
        v = round(v);
        /* Rounding a log range of small integers repeats values (1, 1, 2,
         * ...); a repeated point is wasted work, so keep each value once. */
        if (ax->nvalues > 0 && *last == v) return 0;
    }
    *last = v;
    char *s = fmt_value(v, unit);
    if (!s) return oom(c);
    return axis_push(c, ax, s, 0, mark);
}

static int range_step(ctx_t *c, sweep_axis_t *ax, const range_nodes_t *r,
                      const qty_t *from, double to, int integer)
{
    if (r->scale)
        return fail_at(c, r->scale, "sweep.%s.scale: a scale goes with count, "
                       "not step", ax->path);
    double step, last = 0;
    if (range_qty(c, ax, "step", r->step, from, &step)) return -1;
    if (step == 0) return fail_at(c, r->step, "sweep.%s.step: step is 0", ax->path);
    double span = (to - from->v) / step;
    if (span < -1e-9)
        return fail_at(c, r->step, "sweep.%s.step: from %s to %s never gets "
                       "there with step %s", ax->path, r->from->str, r->to->str,
                       r->step->str);
    /* The tolerance lets 10ms..100ms step 10ms include 100ms despite
     * binary rounding of the quotient. */
    double cnt = floor(span + 1e-9 * fmax(1.0, span)) + 1;
    if (cnt > AXIS_MAX_VALUES)
        return fail_at(c, r->step, "sweep.%s.step: %.0f values on one axis "
                       "(check the step's unit)", ax->path, cnt);
    if (reserve_values(c, ax, cnt, r->step)) return -1;
    for (long i = 0; i < (long)cnt; i++) {
        double v = from->v + (double)i * step;
        if (fabs(v) < 1e-12 * fabs(step)) v = 0;
        if (push_num(c, ax, v, from->unit, integer, &last, r->step)) return -1;
    }
    return 0;
}

static int range_count(ctx_t *c, sweep_axis_t *ax, const range_nodes_t *r,
                       const qty_t *from, double to, int integer)
{
    const char *cs = r->count->str;
    char *end;
    errno = 0;
    long count = strtol(cs, &end, 10);
    if (end == cs || *end || errno)
        return fail_at(c, r->count, "sweep.%s.count: '%s' is not an integer",
                       ax->path, cs);
    if (count < 1)
        return fail_at(c, r->count, "sweep.%s.count: count is %ld, must be >= 1",
                       ax->path, count);
    if (count > AXIS_MAX_VALUES)
        return fail_at(c, r->count, "sweep.%s.count: too many values", ax->path);
    if (reserve_values(c, ax, (double)count, r->count)) return -1;
    int logscale = 0;
    if (r->scale) {
        const char *s = r->scale->str;
        if (strcmp(s, "log") == 0) logscale = 1;
        else if (strcmp(s, "lin") != 0 && strcmp(s, "linear") != 0)
            return fail_at(c, r->scale, "sweep.%s.scale: '%s' (expected lin or log)",
                           ax->path, s);
    }
    if (logscale && (from->v <= 0 || to <= 0))
        return fail_at(c, r->scale, "sweep.%s.scale: log scale through 0 (from "
                       "and to must both be > 0)", ax->path);
    /* The log range steps by powers of to / from, which must be a number
     * (1e-300 to 1e300 is 1e600: inf; 1e300 to 1e-300 is 1e-600: 0). */
    if (logscale && !(isfinite(to / from->v) && to / from->v > 0))
        return fail_at(c, r->to, "sweep.%s.to: from %s to %s is a ratio %s than a "
                       "number can hold (%s) for a log scale", ax->path, r->from->str,
                       r->to->str, to > from->v ? "larger" : "smaller",
                       to > from->v ? "about 1.8e308" : "about 2.2e-308");
    double last = 0;
    for (long i = 0; i < count; i++) {
        double t = count == 1 ? 0.0 : (double)i / (double)(count - 1);
        double v = logscale ? from->v * pow(to / from->v, t)
                            : from->v + (to - from->v) * t;
        if (i == count - 1 && count > 1) v = to; /* exact end point */
        if (push_num(c, ax, v, from->unit, integer, &last, r->count)) return -1;
    }
    return 0;
}

static int axis_range(ctx_t *c, sweep_axis_t *ax, const ynode_t *n)
{
    range_nodes_t r = {0};
    for (size_t i = 0; i < n->n; i++)
        if (range_field(c, ax, &n->pairs[i], &r)) return -1;
    if (!r.from || !r.to)
        return fail_at(c, n, "sweep.%s: a range needs from and to", ax->path);
    if (!!r.step == !!r.count)
        return fail_at(c, n, "sweep.%s: a range needs exactly one of step and count",
                       ax->path);
    qty_t from;
    double to;
    if (range_from(c, ax, r.from, &from) || range_qty(c, ax, "to", r.to, &from, &to))
        return -1;
    /* Each bound is finite, but their distance can overflow (-1e308 to
     * 1e308), and every value would then come out inf or NaN. */
    if (!isfinite(to - from.v))
        return fail_at(c, r.to, "sweep.%s.to: from %s to %s spans more than a "
                       "number can hold (about 1.8e308)", ax->path, r.from->str, r.to->str);
    int integer = 0;
    if (r.integer && parse_bool(r.integer->str, &integer))
        return fail_at(c, r.integer, "sweep.%s.integer: expected true or false",
                       ax->path);
    return r.step ? range_step(c, ax, &r, &from, to, integer)
                  : range_count(c, ax, &r, &from, to, integer);
}

static int parse_axis(ctx_t *c, const ynode_pair_t *p)
{
    sweepspec_t *sp = c->sp;
    if (!*p->key) return fail_key(c, p, "sweep: an axis key must be a dotted path");
    sweep_axis_t *axes = realloc(sp->axes, (size_t)(sp->naxes + 1) * sizeof *axes);
    if (!axes) return oom(c);
    sp->axes = axes;
    sweep_axis_t *ax = &axes[sp->naxes];
    memset(ax, 0, sizeof *ax);
    ax->path = strdup(p->key);
    if (!ax->path) return oom(c);
    ax->line = p->kline;
    ax->col = p->kcol;
    sp->naxes++;
    switch (p->val->kind) {
    case YNODE_SEQ: return axis_list(c, ax, p->val);
    case YNODE_MAP: return axis_range(c, ax, p->val);
    case YNODE_SCALAR: break;
    }
    return fail_at(c, p->val, "sweep.%s: expected a list or a range {from, to, "
                   "step} / {from, to, count, scale: log}", p->key);
}

/* Points in all: the axes' common length with zip, else their product. */
static int count_points(ctx_t *c, const ynode_pair_t *key)
{
    sweepspec_t *sp = c->sp;
    if (sp->zip) {
        for (int a = 1; a < sp->naxes; a++)
            if (sp->axes[a].nvalues != sp->axes[0].nvalues)
                return err_set(c->err, ERR_INPUT, "%s:%d:%d: sweep.%s: zip pairs "
                               "axes of equal length, this one has %d values and "
                               "%s has %d", c->name, sp->axes[a].line,
                               sp->axes[a].col, sp->axes[a].path,
                               sp->axes[a].nvalues, sp->axes[0].path,
                               sp->axes[0].nvalues);
        sp->npoints = (uint64_t)sp->axes[0].nvalues;
        return 0;
    }
    uint64_t np = 1;
    for (int a = 0; a < sp->naxes; a++) {
        np *= (uint64_t)sp->axes[a].nvalues;
        if (np > SWEEPSPEC_MAX_POINTS)
            return fail_key(c, key, "sweep: more than %llu points",
                            (unsigned long long)SWEEPSPEC_MAX_POINTS);
    }
    sp->npoints = np;
    return 0;
}

static int parse_sweep(ctx_t *c, const ynode_pair_t *key)
{
    sweepspec_t *sp = c->sp;
    const ynode_t *n = key->val;
    sp->line = key->kline;
    sp->col = key->kcol;
    if (n->kind != YNODE_MAP)
        return fail_at(c, n, "sweep: expected a mapping of axes (dotted path: "
                       "list or range)");
    for (size_t i = 0; i < n->n; i++) {
        const ynode_pair_t *p = &n->pairs[i];
        int *flag = NULL;
        if (strcmp(p->key, "zip") == 0) flag = &sp->zip;
        else if (strcmp(p->key, "independent_seeds") == 0) flag = &sp->independent_seeds;
        if (flag) {
            if (!scalar(p->val) || parse_bool(p->val->str, flag))
                return fail_at(c, p->val, "sweep.%s: expected true or false", p->key);
            continue;
        }
        if (parse_axis(c, p)) return -1;
    }
    if (sp->naxes == 0) return fail_at(c, n, "sweep: no axes");
    return count_points(c, key);
}

/* Reads the sweep: section of yaml; without one, an error when `required`,
 * else 0 with out->naxes = 0. */
static int load_section(const char *name, const char *yaml, int required,
                        sweepspec_t *out, err_t *err)
{
    memset(out, 0, sizeof *out);
    snprintf(out->file, sizeof out->file, "%s", name);
    ynode_t *root = NULL;
    if (ynode_parse(name, NULL, yaml, strlen(yaml), 1, 0, &root, err) != 0) return -1;
    ctx_t c = {name, out, err, 0};
    const ynode_pair_t *sweep = ynode_find(root, "sweep");
    int rc = 0;
    if (sweep)
        rc = parse_sweep(&c, sweep);
    else if (required && (!root || ynode_is_null(root)))
        rc = err_set(err, ERR_INPUT, "%s: empty scenario", name);
    else if (required)
        rc = err_set(err, ERR_INPUT, "%s:1:1: sweep: no sweep: section (add one "
                     "with at least one axis)", name);
    ynode_free(root);
    return rc;
}

int sweepspec_from_node(const char *name, const struct ynode_pair *key,
                        sweepspec_t *out, err_t *err)
{
    memset(out, 0, sizeof *out);
    snprintf(out->file, sizeof out->file, "%s", name);
    ctx_t c = {name, out, err, 0};
    return parse_sweep(&c, key);
}

int sweepspec_load_string(const char *name, const char *yaml, sweepspec_t *out,
                          err_t *err)
{
    return load_section(name, yaml, 1, out, err);
}

int sweepspec_load(const char *path, sweepspec_t *out, err_t *err)
{
    memset(out, 0, sizeof *out);
    char *text;
    size_t len;
    if (infile_read(path, INFILE_YAML_MAX, &text, &len, err) != 0) return -1;
    int rc = sweepspec_load_string(path, text, out, err);
    free(text);
    return rc;
}

void sweepspec_fini(sweepspec_t *sp)
{
    if (!sp) return;
    for (int a = 0; a < sp->naxes; a++) {
        sweep_axis_t *ax = &sp->axes[a];
        for (int i = 0; i < ax->nvalues; i++) free(ax->values[i]);
        free(ax->values);
        free(ax->vline);
        free(ax->vcol);
        free(ax->vflow);
        free(ax->path);
    }
    free(sp->axes);
    sp->axes = NULL;
    sp->naxes = 0;
}

int sweepspec_sets_precision(const sweepspec_t *sp)
{
    for (int a = 0; a < sp->naxes; a++) {
        const char *p = sp->axes[a].path;
        if (strncmp(p, "precision", 9) == 0 && (p[9] == '\0' || p[9] == '.')) return 1;
    }
    return 0;
}

int sweepspec_refuse_replications_axis(const sweepspec_t *sp, const char *section,
                                       err_t *err)
{
    for (int a = 0; a < sp->naxes; a++) {
        const sweep_axis_t *ax = &sp->axes[a];
        if (strcmp(ax->path, "replications") != 0) continue;
        return err_set(err, ERR_INPUT, "%s:%d:%d: %s.replications: with precision: "
                       "each point runs until its targets are met, and the CSV's "
                       "replications column says how many; an axis over replications "
                       "(only the first round) would write a second column of that "
                       "name: vary precision.relative or precision.max_replications",
                       sp->file, ax->line, ax->col, section);
    }
    return 0;
}

void sweepspec_point_index(const sweepspec_t *sp, uint64_t point, int *idx)
{
    if (sp->zip) {
        for (int a = 0; a < sp->naxes; a++) idx[a] = (int)point;
        return;
    }
    for (int a = sp->naxes - 1; a >= 0; a--) {
        uint64_t n = (uint64_t)sp->axes[a].nvalues;
        idx[a] = (int)(point % n);
        point /= n;
    }
}

void sweepspec_point(const sweepspec_t *sp, uint64_t point, const char **values)
{
    if (sp->zip) {
        for (int a = 0; a < sp->naxes; a++)
            values[a] = sp->axes[a].values[point];
        return;
    }
    for (int a = sp->naxes - 1; a >= 0; a--) {
        uint64_t n = (uint64_t)sp->axes[a].nvalues;
        values[a] = sp->axes[a].values[point % n];
        point /= n;
    }
}

scenario_override_t sweepspec_override(const sweepspec_t *sp, int a, int i)
{
    const sweep_axis_t *ax = &sp->axes[a];
    return (scenario_override_t){.path = ax->path, .value = ax->values[i],
                                 .src = sp->file, .line = ax->line, .col = ax->col,
                                 .vline = ax->vline[i], .vcol = ax->vcol[i]};
}

/* A message's leading "SRC:LINE:COL: " when SRC is the sweep's file:
 * fills *line, *col and returns the text after it, else NULL. */
static const char *own_mark(const sweepspec_t *sp, const char *msg, int *line,
                            int *col)
{
    size_t n = strlen(sp->file);
    if (strncmp(msg, sp->file, n) != 0 || msg[n] != ':') return NULL;
    char *end;
    long l = strtol(msg + n + 1, &end, 10);
    if (*end != ':') return NULL;
    long c = strtol(end + 1, &end, 10);
    if (strncmp(end, ": ", 2) != 0) return NULL;
    *line = (int)l;
    *col = (int)c;
    return end + 2;
}

/* The axis a load's message points into — its key, or the value it had in
 * that load (idx) — by the loader's mark: the rightmost start at or before
 * the column on that line. -1 when the mark is elsewhere. */
static int blamed_axis(const sweepspec_t *sp, const int *idx, int line, int col,
                       int *at_key)
{
    int best = -1, bestcol = 0;
    for (int b = 0; b < sp->naxes; b++) {
        const sweep_axis_t *ax = &sp->axes[b];
        int kc = ax->line == line && ax->col <= col ? ax->col : 0;
        int vc = ax->vline[idx[b]] == line && ax->vcol[idx[b]] <= col
                     ? ax->vcol[idx[b]] : 0;
        if (kc > bestcol) { best = b; bestcol = kc; *at_key = 1; }
        if (vc > bestcol) { best = b; bestcol = vc; *at_key = 0; }
    }
    return best;
}

/* Loads the scenario (the loader makes every check `run` makes) once with
 * base + the axes at the values idx. A failure names the axis key or value
 * the message points at, else axis `a` (the one being varied) — the
 * loader's own location dropped when it is that same axis. */
static int try_values(const sweepspec_t *sp, const scenario_src_t *src,
                      const scenario_override_t *ov, int nov, const int *idx,
                      int a, err_t *err)
{
    scenario_t s;
    err_t e = {0};
    int rc = scenario_src_load(src, ov, nov, &s, &e);
    if (rc == 0) scenario_fini(&s);
    if (rc == 0) return 0;
    if (e.code == ERR_RUNTIME) return err_set(err, e.code, "%s", e.msg);
    int line = 0, col = 0, at_key = 0;
    const char *inner = own_mark(sp, e.msg, &line, &col);
    int b = inner ? blamed_axis(sp, idx, line, col, &at_key) : -1;
    if (b < 0) {
        inner = e.msg;
        b = a;
    }
    const sweep_axis_t *ax = &sp->axes[b];
    if (at_key)
        return err_set(err, ERR_INPUT, "%s:%d:%d: sweep.%s: not a scenario key: %s",
                       sp->file, ax->line, ax->col, ax->path, inner);
    return err_set(err, ERR_INPUT, "%s:%d:%d: sweep.%s: value '%s': %s", sp->file,
                   ax->vline[idx[b]], ax->vcol[idx[b]], ax->path,
                   ax->values[idx[b]], inner);
}

int sweepspec_validate_src(const sweepspec_t *sp, const scenario_src_t *src,
                           const scenario_override_t *base, int nbase, err_t *err)
{
    int nov = nbase + sp->naxes;
    scenario_override_t *ov = malloc((size_t)nov * sizeof *ov);
    int *idx = calloc((size_t)sp->naxes, sizeof *idx);
    if (!ov || !idx) {
        free(ov);
        free(idx);
        return err_set(err, ERR_RUNTIME, "out of memory");
    }
    for (int k = 0; k < nbase; k++) ov[k] = base[k];
    int loads = 0, rc = 0;
    if (sp->zip) {
        /* Zipped axes only ever meet at equal indices: check exactly those. */
        for (int i = 0; rc == 0 && i < sp->axes[0].nvalues; i++) {
            for (int a = 0; a < sp->naxes; a++) {
                idx[a] = i;
                ov[nbase + a] = sweepspec_override(sp, a, i);
            }
            rc = try_values(sp, src, ov, nov, idx, sp->naxes - 1, err);
            loads++;
        }
    } else {
        for (int a = 0; a < sp->naxes; a++) ov[nbase + a] = sweepspec_override(sp, a, 0);
        for (int a = 0; rc == 0 && a < sp->naxes; a++) {
            const sweep_axis_t *ax = &sp->axes[a];
            for (int i = 0; rc == 0 && i < ax->nvalues; i++) {
                idx[a] = i;
                ov[nbase + a] = sweepspec_override(sp, a, i);
                rc = try_values(sp, src, ov, nov, idx, a, err);
                loads++;
            }
            idx[a] = 0;
            ov[nbase + a] = sweepspec_override(sp, a, 0);
        }
    }
    free(ov);
    free(idx);
    return rc ? -1 : loads;
}

int sweepspec_check(const char *scenario, const char *text,
                    const scenario_override_t *base, int nbase, sweepspec_t *out,
                    err_t *err)
{
    memset(out, 0, sizeof *out);
    scenario_src_t *src;
    if (scenario_src_text(scenario, text, strlen(text), &src, err) != 0) return -1;
    int rc = sweepspec_check_src(src, base, nbase, out, err);
    scenario_src_free(src);
    return rc;
}

int sweepspec_check_src(const scenario_src_t *src, const scenario_override_t *base,
                        int nbase, sweepspec_t *out, err_t *err)
{
    if (load_section(scenario_src_name(src), scenario_src_body(src, NULL), 0, out,
                     err) != 0)
        return -1;
    if (out->naxes == 0) return 0;
    return sweepspec_validate_src(out, src, base, nbase, err) < 0 ? -1 : 0;
}

/* Every axis as an explicit list, each line started with indent. */
static void axes_yaml(sbuf_t *b, const sweepspec_t *sp, const char *indent)
{
    for (int a = 0; a < sp->naxes; a++) {
        const sweep_axis_t *ax = &sp->axes[a];
        sb_add(b, indent);
        sb_quoted(b, ax->path);
        sb_add(b, ":\n");
        for (int i = 0; i < ax->nvalues; i++) {
            const char *v = ax->values[i];
            sb_add(b, indent);
            sb_add(b, "  - ");
            /* Flow nodes (distributions) were serialised by flow() and are
             * valid YAML as they stand; scalars may need quoting — also one
             * that starts like a flow node ("[1" written bare does not
             * parse, and "[1,2]" would come back as "[1, 2]"). */
            if (ax->vflow[i]) sb_add(b, v);
            else sb_quoted(b, v);
            sb_add(b, "\n");
        }
    }
}

static int sb_write(sbuf_t *b, FILE *f)
{
    if (b->oom) { free(b->s); return -1; }
    int rc = fwrite(b->s, 1, b->n, f) == b->n ? 0 : -1;
    free(b->s);
    return rc;
}

int sweepspec_write_yaml(const sweepspec_t *sp, FILE *f)
{
    sbuf_t b = {0};
    sb_add(&b, "sweep:\n");
    sb_add(&b, sp->zip ? "  zip: true\n" : "  zip: false\n");
    sb_add(&b, sp->independent_seeds ? "  independent_seeds: true\n"
                                     : "  independent_seeds: false\n");
    axes_yaml(&b, sp, "  ");
    return sb_write(&b, f);
}

int sweepspec_write_axes(const sweepspec_t *sp, const char *indent, FILE *f)
{
    sbuf_t b = {0};
    axes_yaml(&b, sp, indent);
    return sb_write(&b, f);
}

/* ---- values that name files ---------------------------------------------- */

/* Puts every scalar of tree (mapping values and sequence items; never a
 * key) through fn; 1 when one changed, 0 when none did, -1 out of memory. */
static int map_scalars(ynode_t *n, sweepspec_map_fn fn, void *ctx)
{
    if (n->kind == YNODE_SCALAR) {
        char buf[4096];
        const char *v = fn(n->str, ctx, buf, sizeof buf);
        if (v == n->str || strcmp(v, n->str) == 0) return 0;
        char *c = strdup(v);
        if (!c) return -1;
        free(n->str);
        n->str = c;
        n->plain = 0;
        return 1;
    }
    int changed = 0;
    for (size_t i = 0; i < n->n; i++) {
        int r = map_scalars(n->kind == YNODE_SEQ ? n->items[i] : n->pairs[i].val, fn, ctx);
        if (r < 0) return -1;
        changed |= r;
    }
    return changed;
}

char *sweepspec_value_map(const char *v, int is_flow, sweepspec_map_fn fn, void *ctx)
{
    char buf[4096];
    if (!is_flow) return strdup(fn(v, ctx, buf, sizeof buf));
    /* Written by flow() (or a --set's text): parsed back, its scalars
     * mapped, written again by flow(); kept as it was when nothing changed
     * or it does not parse (the loader reports that). */
    ynode_t *tree = NULL;
    err_t e = {0};
    if (ynode_parse("sweep", NULL, v, strlen(v), 1, 0, &tree, &e) != 0 || !tree)
        return strdup(v);
    int r = map_scalars(tree, fn, ctx);
    char *out = NULL;
    if (r == 0) {
        out = strdup(v);
    } else if (r > 0) {
        sbuf_t b = {0};
        flow(tree, &b);
        if (!b.oom) out = b.s;
        else free(b.s);
    }
    ynode_free(tree);
    return out;
}

int sweepspec_map_values(sweepspec_t *sp, sweepspec_map_fn fn, void *ctx)
{
    for (int a = 0; a < sp->naxes; a++) {
        sweep_axis_t *ax = &sp->axes[a];
        for (int i = 0; i < ax->nvalues; i++) {
            char *v = sweepspec_value_map(ax->values[i], ax->vflow[i], fn, ctx);
            if (!v) return -1;
            free(ax->values[i]);
            ax->values[i] = v;
        }
    }
    return 0;
}
