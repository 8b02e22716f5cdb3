/* sweepspec — parsing and expanding the `sweep:` section (see sweepspec.h). */
#include "sweepspec.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "sim.h"

/* Range expansions longer than this are refused: one axis of ten million
 * values is a typo (a step in the wrong unit), not a sweep. */
#define AXIS_MAX_VALUES 10000000L

typedef struct ctx {
    const char *name;       /* file name for messages */
    yaml_document_t *doc;
    sweepspec_t *sp;
    err_t *err;
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

static int fail_at(ctx_t *c, const yaml_node_t *node, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail_at(ctx_t *c, const yaml_node_t *node, const char *fmt, ...)
{
    char msg[ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    int line = node ? (int)node->start_mark.line + 1 : 1;
    int col = node ? (int)node->start_mark.column + 1 : 1;
    return err_set(c->err, ERR_INPUT, "%s:%d:%d: %s", c->name, line, col, msg);
}

static int oom(ctx_t *c)
{
    return err_set(c->err, ERR_RUNTIME, "%s: out of memory", c->name);
}

/* ---- node helpers -------------------------------------------------------- */

static const char *scalar(const yaml_node_t *n)
{
    return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value
                                            : NULL;
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
static int plain_safe(const char *s)
{
    if (!*s || isspace((unsigned char)*s) || isspace((unsigned char)s[strlen(s) - 1]))
        return 0;
    if (strchr("-?&*!|>'\"%@`#", *s) &&
        !(*s == '-' && (isdigit((unsigned char)s[1]) || s[1] == '.')))
        return 0;
    return strpbrk(s, ",[]{}:#\"'\n\t\\") == NULL;
}

static void sb_quoted(sbuf_t *b, const char *s)
{
    if (plain_safe(s)) { sb_add(b, s); return; }
    sb_add(b, "\"");
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') sb_addn(b, "\\", 1);
        if (*s == '\n') { sb_add(b, "\\n"); continue; }
        sb_addn(b, s, 1);
    }
    sb_add(b, "\"");
}

static void flow(ctx_t *c, const yaml_node_t *n, sbuf_t *b)
{
    if (!n) { sb_add(b, "null"); return; }
    switch (n->type) {
    case YAML_SCALAR_NODE:
        sb_quoted(b, scalar(n));
        break;
    case YAML_SEQUENCE_NODE:
        sb_add(b, "[");
        for (yaml_node_item_t *i = n->data.sequence.items.start;
             i < n->data.sequence.items.top; i++) {
            if (i != n->data.sequence.items.start) sb_add(b, ", ");
            flow(c, yaml_document_get_node(c->doc, *i), b);
        }
        sb_add(b, "]");
        break;
    case YAML_MAPPING_NODE:
        sb_add(b, "{");
        for (yaml_node_pair_t *p = n->data.mapping.pairs.start;
             p < n->data.mapping.pairs.top; p++) {
            if (p != n->data.mapping.pairs.start) sb_add(b, ", ");
            flow(c, yaml_document_get_node(c->doc, p->key), b);
            sb_add(b, ": ");
            flow(c, yaml_document_get_node(c->doc, p->value), b);
        }
        sb_add(b, "}");
        break;
    default:
        sb_add(b, "null");
    }
}

/* ---- axis values --------------------------------------------------------- */

static int axis_push(ctx_t *c, sweep_axis_t *ax, char *value,
                     const yaml_node_t *mark)
{
    int n = ax->nvalues + 1;
    char **v = realloc(ax->values, (size_t)n * sizeof *v);
    if (v) ax->values = v;
    int *l = realloc(ax->vline, (size_t)n * sizeof *l);
    if (l) ax->vline = l;
    int *k = realloc(ax->vcol, (size_t)n * sizeof *k);
    if (k) ax->vcol = k;
    if (!v || !l || !k) { free(value); return oom(c); }
    ax->values[ax->nvalues] = value;
    ax->vline[ax->nvalues] = (int)mark->start_mark.line + 1;
    ax->vcol[ax->nvalues] = (int)mark->start_mark.column + 1;
    ax->nvalues = n;
    return 0;
}

static int axis_list(ctx_t *c, sweep_axis_t *ax, const yaml_node_t *n)
{
    if (n->data.sequence.items.start == n->data.sequence.items.top)
        return fail_at(c, n, "sweep.%s: empty list (an axis needs at least one value)",
                       ax->path);
    for (yaml_node_item_t *i = n->data.sequence.items.start;
         i < n->data.sequence.items.top; i++) {
        const yaml_node_t *item = yaml_document_get_node(c->doc, *i);
        sbuf_t b = {0};
        if (item->type == YAML_SCALAR_NODE) {
            if (!*scalar(item)) {
                free(b.s);
                return fail_at(c, item, "sweep.%s: empty value", ax->path);
            }
            sb_add(&b, scalar(item));
        } else {
            flow(c, item, &b);
        }
        if (b.oom) { free(b.s); return oom(c); }
        if (axis_push(c, ax, b.s, item)) return -1;
    }
    return 0;
}

/* Units a range may be written in, by dimension, with their factor to the
 * dimension's base unit (s, bit/s, byte, per second). */
static const struct unit {
    const char *name;
    int dim;
    double factor;
} units[] = {
    {"ns", 1, 1e-9}, {"us", 1, 1e-6}, {"ms", 1, 1e-3}, {"s", 1, 1.0},
    {"min", 1, 60.0}, {"h", 1, 3600.0},
    {"bps", 2, 1.0}, {"kbps", 2, 1e3}, {"Kbps", 2, 1e3}, {"Mbps", 2, 1e6},
    {"Gbps", 2, 1e9},
    {"B", 3, 1.0}, {"KB", 3, 1e3}, {"kB", 3, 1e3}, {"MB", 3, 1e6},
    {"GB", 3, 1e9}, {"TB", 3, 1e12}, {"KiB", 3, 1024.0},
    {"MiB", 3, 1048576.0}, {"GiB", 3, 1073741824.0},
    {"TiB", 3, 1099511627776.0},
    {"/s", 4, 1.0}, {"/min", 4, 1.0 / 60}, {"/h", 4, 1.0 / 3600},
};

static const struct unit *unit_find(const char *u)
{
    for (size_t i = 0; i < sizeof units / sizeof *units; i++)
        if (strcmp(units[i].name, u) == 0) return &units[i];
    return NULL;
}

typedef struct qty {
    double v;
    char unit[16];
} qty_t;

/* "10ms" -> {10, "ms"}; "-0.5" -> {-0.5, ""}; "2/min" -> {2, "/min"}. */
static int parse_qty(const char *s, qty_t *q)
{
    char *end;
    errno = 0;
    q->v = strtod(s, &end);
    if (end == s || errno == ERANGE || !isfinite(q->v)) return -1;
    while (isspace((unsigned char)*end)) end++;
    size_t n = strlen(end);
    if (n >= sizeof q->unit) return -1;
    for (size_t i = 0; i < n; i++)
        if (!isalpha((unsigned char)end[i]) && !(i == 0 && end[i] == '/')) return -1;
    memcpy(q->unit, end, n + 1);
    return 0;
}

/* Expresses q in the unit of `ref`; -1 when the units are incompatible. */
static int to_unit(const qty_t *q, const qty_t *ref, double *out)
{
    if (strcmp(q->unit, ref->unit) == 0) { *out = q->v; return 0; }
    const struct unit *a = unit_find(q->unit), *b = unit_find(ref->unit);
    if (!a || !b || a->dim != b->dim) return -1;
    *out = q->v * a->factor / b->factor;
    return 0;
}

static char *fmt_value(double v, const char *unit)
{
    char buf[64];
    if (v == 0) v = 0; /* no "-0" */
    snprintf(buf, sizeof buf, "%.10g%s", v, unit);
    return strdup(buf);
}

typedef struct range_nodes {
    const yaml_node_t *from, *to, *step, *count, *scale, *integer;
} range_nodes_t;

static int range_field(ctx_t *c, const sweep_axis_t *ax, const yaml_node_t *key,
                       const yaml_node_t *val, range_nodes_t *r)
{
    static const char *names[] = {"from", "to", "step", "count", "scale", "integer"};
    const yaml_node_t **slots[] = {&r->from, &r->to, &r->step, &r->count,
                                   &r->scale, &r->integer};
    const char *k = scalar(key);
    for (size_t i = 0; k && i < sizeof names / sizeof *names; i++) {
        if (strcmp(k, names[i]) != 0) continue;
        if (*slots[i])
            return fail_at(c, key, "sweep.%s.%s: given twice", ax->path, k);
        if (!scalar(val) || !*scalar(val))
            return fail_at(c, val, "sweep.%s.%s: expected a scalar", ax->path, k);
        *slots[i] = val;
        return 0;
    }
    return fail_at(c, key, "sweep.%s.%s: unknown key (a range has from, to, "
                   "step, count, scale, integer)", ax->path, k ? k : "?");
}

static int range_qty(ctx_t *c, const sweep_axis_t *ax, const char *field,
                     const yaml_node_t *n, const qty_t *ref, double *out)
{
    qty_t q;
    if (parse_qty(scalar(n), &q))
        return fail_at(c, n, "sweep.%s.%s: '%s' is not a number (with an "
                       "optional unit)", ax->path, field, scalar(n));
    if (!ref) { *out = q.v; return 0; }
    if (to_unit(&q, ref, out))
        return fail_at(c, n, "sweep.%s.%s: unit '%s' does not match the unit "
                       "'%s' of from", ax->path, field, q.unit, ref->unit);
    return 0;
}

static int push_num(ctx_t *c, sweep_axis_t *ax, double v, const char *unit,
                    int integer, const yaml_node_t *mark)
{
    if (integer) {
        v = round(v);
        /* Rounding a log range of small integers repeats values (1, 1, 2,
         * ...); a repeated point is wasted work, so keep each value once. */
        if (ax->nvalues > 0) {
            qty_t last;
            if (parse_qty(ax->values[ax->nvalues - 1], &last) == 0 && last.v == v)
                return 0;
        }
    }
    char *s = fmt_value(v, unit);
    if (!s) return oom(c);
    return axis_push(c, ax, s, mark);
}

static int axis_range(ctx_t *c, sweep_axis_t *ax, const yaml_node_t *n)
{
    range_nodes_t r = {0};
    for (yaml_node_pair_t *p = n->data.mapping.pairs.start;
         p < n->data.mapping.pairs.top; p++)
        if (range_field(c, ax, yaml_document_get_node(c->doc, p->key),
                        yaml_document_get_node(c->doc, p->value), &r))
            return -1;
    if (!r.from || !r.to)
        return fail_at(c, n, "sweep.%s: a range needs from and to", ax->path);
    if (!!r.step == !!r.count)
        return fail_at(c, n, "sweep.%s: a range needs exactly one of step and count",
                       ax->path);
    qty_t from;
    if (parse_qty(scalar(r.from), &from))
        return fail_at(c, r.from, "sweep.%s.from: '%s' is not a number (with an "
                       "optional unit)", ax->path, scalar(r.from));
    double to;
    if (range_qty(c, ax, "to", r.to, &from, &to)) return -1;
    int integer = 0;
    if (r.integer && parse_bool(scalar(r.integer), &integer))
        return fail_at(c, r.integer, "sweep.%s.integer: expected true or false",
                       ax->path);
    if (r.step) {
        if (r.scale)
            return fail_at(c, r.scale, "sweep.%s.scale: a scale goes with count, "
                           "not step", ax->path);
        double step;
        if (range_qty(c, ax, "step", r.step, &from, &step)) return -1;
        if (step == 0)
            return fail_at(c, r.step, "sweep.%s.step: step is 0", ax->path);
        double span = (to - from.v) / step;
        if (span < -1e-9)
            return fail_at(c, r.step, "sweep.%s.step: from %s to %s never gets "
                           "there with step %s", ax->path, scalar(r.from),
                           scalar(r.to), scalar(r.step));
        /* The tolerance lets 10ms..100ms step 10ms include 100ms despite
         * binary rounding of the quotient. */
        double cnt = floor(span + 1e-9 * fmax(1.0, span)) + 1;
        if (cnt > AXIS_MAX_VALUES)
            return fail_at(c, r.step, "sweep.%s.step: %.0f values on one axis "
                           "(check the step's unit)", ax->path, cnt);
        for (long i = 0; i < (long)cnt; i++) {
            double v = from.v + (double)i * step;
            if (fabs(v) < 1e-12 * fabs(step)) v = 0;
            if (push_num(c, ax, v, from.unit, integer, r.step)) return -1;
        }
        return 0;
    }
    const char *cs = scalar(r.count);
    char *end;
    errno = 0;
    long count = strtol(cs, &end, 10);
    if (end == cs || *end || errno)
        return fail_at(c, r.count, "sweep.%s.count: '%s' is not an integer",
                       ax->path, cs);
    if (count < 1)
        return fail_at(c, r.count, "sweep.%s.count: count is %ld, must be >= 1",
                       ax->path, count);
    if (count > AXIS_MAX_VALUES)
        return fail_at(c, r.count, "sweep.%s.count: too many values", ax->path);
    int logscale = 0;
    if (r.scale) {
        const char *s = scalar(r.scale);
        if (strcmp(s, "log") == 0) logscale = 1;
        else if (strcmp(s, "lin") != 0 && strcmp(s, "linear") != 0)
            return fail_at(c, r.scale, "sweep.%s.scale: '%s' (expected lin or log)",
                           ax->path, s);
    }
    if (logscale && (from.v <= 0 || to <= 0))
        return fail_at(c, r.scale, "sweep.%s.scale: log scale through 0 (from "
                       "and to must both be > 0)", ax->path);
    for (long i = 0; i < count; i++) {
        double t = count == 1 ? 0.0 : (double)i / (double)(count - 1);
        double v = logscale ? from.v * pow(to / from.v, t)
                            : from.v + (to - from.v) * t;
        if (i == count - 1 && count > 1) v = to; /* exact end point */
        if (push_num(c, ax, v, from.unit, integer, r.count)) return -1;
    }
    return 0;
}

static int parse_axis(ctx_t *c, const yaml_node_t *key, const yaml_node_t *val)
{
    sweepspec_t *sp = c->sp;
    const char *path = scalar(key);
    if (!path || !*path)
        return fail_at(c, key, "sweep: an axis key must be a dotted path");
    for (int a = 0; a < sp->naxes; a++)
        if (strcmp(sp->axes[a].path, path) == 0)
            return fail_at(c, key, "sweep.%s: axis given twice", path);
    sweep_axis_t *axes = realloc(sp->axes, (size_t)(sp->naxes + 1) * sizeof *axes);
    if (!axes) return oom(c);
    sp->axes = axes;
    sweep_axis_t *ax = &axes[sp->naxes];
    memset(ax, 0, sizeof *ax);
    ax->path = strdup(path);
    if (!ax->path) return oom(c);
    ax->line = (int)key->start_mark.line + 1;
    ax->col = (int)key->start_mark.column + 1;
    sp->naxes++;
    switch (val->type) {
    case YAML_SEQUENCE_NODE: return axis_list(c, ax, val);
    case YAML_MAPPING_NODE: return axis_range(c, ax, val);
    default:
        return fail_at(c, val, "sweep.%s: expected a list or a range {from, to, "
                       "step} / {from, to, count, scale: log}", path);
    }
}

static int parse_sweep(ctx_t *c, const yaml_node_t *key, const yaml_node_t *n)
{
    sweepspec_t *sp = c->sp;
    sp->line = (int)key->start_mark.line + 1;
    sp->col = (int)key->start_mark.column + 1;
    if (n->type != YAML_MAPPING_NODE)
        return fail_at(c, n, "sweep: expected a mapping of axes (dotted path: "
                       "list or range)");
    for (yaml_node_pair_t *p = n->data.mapping.pairs.start;
         p < n->data.mapping.pairs.top; p++) {
        const yaml_node_t *k = yaml_document_get_node(c->doc, p->key);
        const yaml_node_t *v = yaml_document_get_node(c->doc, p->value);
        const char *ks = scalar(k);
        int *flag = NULL;
        if (ks && strcmp(ks, "zip") == 0) flag = &sp->zip;
        else if (ks && strcmp(ks, "independent_seeds") == 0)
            flag = &sp->independent_seeds;
        if (flag) {
            if (!scalar(v) || parse_bool(scalar(v), flag))
                return fail_at(c, v, "sweep.%s: expected true or false", ks);
            continue;
        }
        if (parse_axis(c, k, v)) return -1;
    }
    if (sp->naxes == 0)
        return fail_at(c, n, "sweep: no axes");
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
            return fail_at(c, key, "sweep: more than %llu points",
                           (unsigned long long)SWEEPSPEC_MAX_POINTS);
    }
    sp->npoints = np;
    return 0;
}

static void parse_output(ctx_t *c, const yaml_node_t *n)
{
    if (n->type != YAML_MAPPING_NODE) return; /* the loader reports it */
    for (yaml_node_pair_t *p = n->data.mapping.pairs.start;
         p < n->data.mapping.pairs.top; p++) {
        const char *k = scalar(yaml_document_get_node(c->doc, p->key));
        const char *v = scalar(yaml_document_get_node(c->doc, p->value));
        if (k && v && strcmp(k, "file") == 0)
            snprintf(c->sp->out_file, sizeof c->sp->out_file, "%s", v);
    }
}

/* Reads the sweep: section of yaml; without one, an error when `required`,
 * else 0 with out->naxes = 0. */
static int load_section(const char *name, const char *yaml, int required,
                        sweepspec_t *out, err_t *err)
{
    memset(out, 0, sizeof *out);
    snprintf(out->file, sizeof out->file, "%s", name);
    yaml_parser_t parser;
    yaml_document_t doc;
    if (!yaml_parser_initialize(&parser))
        return err_set(err, ERR_RUNTIME, "%s: out of memory", name);
    yaml_parser_set_input_string(&parser, (const unsigned char *)yaml, strlen(yaml));
    if (!yaml_parser_load(&parser, &doc)) {
        err_set(err, ERR_INPUT, "%s:%d:%d: %s", name,
                (int)parser.problem_mark.line + 1,
                (int)parser.problem_mark.column + 1,
                parser.problem ? parser.problem : "YAML syntax error");
        yaml_parser_delete(&parser);
        return -1;
    }
    yaml_parser_delete(&parser);
    ctx_t c = {name, &doc, out, err};
    const yaml_node_t *root = yaml_document_get_root_node(&doc);
    const yaml_node_t *sweep_key = NULL, *sweep = NULL;
    if (root && root->type == YAML_MAPPING_NODE) {
        for (yaml_node_pair_t *p = root->data.mapping.pairs.start;
             p < root->data.mapping.pairs.top; p++) {
            const yaml_node_t *k = yaml_document_get_node(&doc, p->key);
            const yaml_node_t *v = yaml_document_get_node(&doc, p->value);
            const char *ks = scalar(k);
            if (ks && strcmp(ks, "sweep") == 0) { sweep_key = k; sweep = v; }
            else if (ks && strcmp(ks, "output") == 0) parse_output(&c, v);
        }
    }
    int rc = 0;
    if (sweep)
        rc = parse_sweep(&c, sweep_key, sweep);
    else if (required)
        rc = err_set(err, ERR_INPUT, "%s:1:1: sweep: no sweep: section (add one "
                     "with at least one axis)", name);
    yaml_document_delete(&doc);
    return rc;
}

int sweepspec_load_string(const char *name, const char *yaml, sweepspec_t *out,
                          err_t *err)
{
    return load_section(name, yaml, 1, out, err);
}

int sweepspec_load(const char *path, sweepspec_t *out, err_t *err)
{
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "rb");
    if (!f) return err_set(err, ERR_INPUT, "%s: %s", path, strerror(errno));
    sbuf_t b = {0};
    char chunk[8192];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) sb_addn(&b, chunk, n);
    int bad = ferror(f);
    fclose(f);
    if (bad || b.oom) {
        free(b.s);
        return err_set(err, ERR_RUNTIME, "%s: %s", path,
                       bad ? "read error" : "out of memory");
    }
    int rc = sweepspec_load_string(path, b.s ? b.s : "", out, err);
    free(b.s);
    return rc;
}

void sweepspec_free(sweepspec_t *sp)
{
    if (!sp) return;
    for (int a = 0; a < sp->naxes; a++) {
        sweep_axis_t *ax = &sp->axes[a];
        for (int i = 0; i < ax->nvalues; i++) free(ax->values[i]);
        free(ax->values);
        free(ax->vline);
        free(ax->vcol);
        free(ax->path);
    }
    free(sp->axes);
    sp->axes = NULL;
    sp->naxes = 0;
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

/* Loads and checks (as `run` does before simulating) the scenario once with
 * base + the axes at the values idx. A failure names the axis key or value
 * the message points at, else axis `a` (the one being varied) — the
 * loader's own location dropped when it is that same axis. */
static int try_values(const sweepspec_t *sp, const char *scenario, const char *text,
                      const scenario_override_t *ov, int nov, const int *idx,
                      int a, err_t *err)
{
    scenario_t s;
    err_t e = {0};
    int rc = text ? scenario_load_text(scenario, text, strlen(text), ov, nov, &s, &e)
                  : scenario_load(scenario, ov, nov, &s, &e);
    if (rc == 0) {
        rc = sim_check(&s, &e);
        scenario_free(&s);
    }
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

int sweepspec_validate(const sweepspec_t *sp, const char *scenario,
                       const char *text, const scenario_override_t *base,
                       int nbase, err_t *err)
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
            rc = try_values(sp, scenario, text, ov, nov, idx, sp->naxes - 1, err);
            loads++;
        }
    } else {
        for (int a = 0; a < sp->naxes; a++) ov[nbase + a] = sweepspec_override(sp, a, 0);
        for (int a = 0; rc == 0 && a < sp->naxes; a++) {
            const sweep_axis_t *ax = &sp->axes[a];
            for (int i = 0; rc == 0 && i < ax->nvalues; i++) {
                idx[a] = i;
                ov[nbase + a] = sweepspec_override(sp, a, i);
                rc = try_values(sp, scenario, text, ov, nov, idx, a, err);
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
    const char *name = strcmp(scenario, "-") == 0 ? "<stdin>" : scenario;
    if (load_section(name, text, 0, out, err) != 0) return -1;
    if (out->naxes == 0) return 0;
    return sweepspec_validate(out, scenario, text, base, nbase, err) < 0 ? -1 : 0;
}

int sweepspec_write_yaml(const sweepspec_t *sp, FILE *f)
{
    sbuf_t b = {0};
    sb_add(&b, "sweep:\n");
    sb_add(&b, sp->zip ? "  zip: true\n" : "  zip: false\n");
    sb_add(&b, sp->independent_seeds ? "  independent_seeds: true\n"
                                     : "  independent_seeds: false\n");
    for (int a = 0; a < sp->naxes; a++) {
        const sweep_axis_t *ax = &sp->axes[a];
        sb_add(&b, "  ");
        sb_quoted(&b, ax->path);
        sb_add(&b, ":\n");
        for (int i = 0; i < ax->nvalues; i++) {
            const char *v = ax->values[i];
            sb_add(&b, "    - ");
            /* Flow nodes (distributions) were serialised by flow() and are
             * valid YAML as they stand; scalars may need quoting. */
            if (v[0] == '{' || v[0] == '[') sb_add(&b, v);
            else sb_quoted(&b, v);
            sb_add(&b, "\n");
        }
    }
    if (b.oom) { free(b.s); return -1; }
    int rc = fwrite(b.s, 1, b.n, f) == b.n ? 0 : -1;
    free(b.s);
    return rc;
}
