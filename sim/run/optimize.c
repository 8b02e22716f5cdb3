/* optimize — the optimize: section and its searches (see optimize.h). */
#include "run/optimize.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "io/infile.h"
#include "io/outfile.h"
#include "base/suggest.h"
#include "run/sweep.h"
#include "base/units.h"
#include "io/ynode.h"

/* ---- reading the section ---------------------------------------------------- */

typedef struct ctx {
    const char *name;
    optimize_spec_t *sp;
    err_t *err;
} ctx_t;

static int fail_at(ctx_t *c, int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail_at(ctx_t *c, int line, int col, const char *fmt, ...)
{
    char msg[ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    char at[YNODE_WHERE_MAX];
    ynode_where(at, sizeof at, c->name, line, col);
    return err_set(c->err, ERR_INPUT, "%s: optimize.%s", at, msg);
}

static const char *scalar(const ynode_t *n)
{
    return n && n->kind == YNODE_SCALAR ? n->str : NULL;
}

/* sweepspec names the axes sweep.PATH; here they are optimize.knobs.PATH.
 * Rewrites the first ": sweep" after the location in err's message. */
static void rename_sweep(err_t *err)
{
    static const char from[] = ": sweep", to[] = ": optimize.knobs";
    char *at = strstr(err->msg, from);
    size_t len = strlen(err->msg), grow = strlen(to) - strlen(from);
    if (!at || len + grow >= sizeof err->msg) return;
    char *tail = at + strlen(from);
    memmove(tail + grow, tail, strlen(tail) + 1);
    memcpy(at, to, strlen(to));
}

static int parse_knobs(ctx_t *c, const ynode_pair_t *p)
{
    if (sweepspec_from_node(c->name, p, &c->sp->knobs, c->err) != 0) {
        rename_sweep(c->err);
        return -1;
    }
    if (c->sp->knobs.zip)
        return fail_at(c, p->kline, p->kcol, "knobs: zip does not apply to a search "
                       "(every combination of knob values is a candidate)");
    return 0;
}

static int unknown_metric(ctx_t *c, const char *key, const ynode_t *n, const char *name)
{
    const char *names[METRIC_COUNT];
    for (int i = 0; i < METRIC_COUNT; i++) names[i] = metric_name(i);
    const char *near = suggest_nearest(name, names, METRIC_COUNT);
    char hint[96] = "";
    if (near) snprintf(hint, sizeof hint, " (did you mean '%s'?)", near);
    return fail_at(c, n->line, n->col, "%s: '%s' is not a metric of docs/metrics.md%s%s",
                   key, name, c->sp->knobs.naxes ? " or a knob" : "", hint);
}

static int parse_objective(ctx_t *c, const ynode_pair_t *p)
{
    optimize_spec_t *sp = c->sp;
    const char *v = scalar(p->val);
    if (sp->objective_name[0])
        return fail_at(c, p->kline, p->kcol, "%s: one objective only (max or min)", p->key);
    if (!v || !*v)
        return fail_at(c, p->val->line, p->val->col, "%s: expected a metric name", p->key);
    sp->maximize = strcmp(p->key, "max") == 0;
    snprintf(sp->objective_name, sizeof sp->objective_name, "%s", v);
    sp->objective = metric_find(v);
    sp->objective_knob = -1;
    for (int a = 0; sp->objective < 0 && a < sp->knobs.naxes; a++)
        if (strcmp(sp->knobs.axes[a].path, v) == 0) sp->objective_knob = a;
    if (sp->objective < 0 && sp->objective_knob < 0) return unknown_metric(c, p->key, p->val, v);
    return 0;
}

/* The bound's number in the metric's unit: a time metric takes any
 * duration (80ms), the others a plain number. The name alone cannot say
 * which: a rate per second (throughput_tok_s) ends in _s too. */
static int parse_bound(ctx_t *c, const ynode_t *n, int metric, const char *text,
                       double *out)
{
    double x;
    const char *unit;
    if (units_split(text, &x, &unit) != 0)
        return fail_at(c, n->line, n->col, "constraints: '%s': the bound is not a "
                       "number", n->str);
    const char *name = metric_name(metric);
    size_t len = strlen(name);
    int seconds = metric_is_duration(metric);
    int rate = !seconds && len > 2 && strcmp(name + len - 2, "_s") == 0;
    if (!*unit) { *out = x; return 0; }
    if (seconds && units_convert(x, unit, "s", out) == 0) return 0;
    return fail_at(c, n->line, n->col, "constraints: '%s': %s takes %s", n->str, name,
                   seconds ? "a duration (80ms, 0.08s) or a number of seconds"
                   : rate  ? "a plain number, not a duration (it is a rate per second)"
                           : "a plain number (no unit)");
}

/* "METRIC OP VALUE" with OP <= or >=. */
static int parse_constraint(ctx_t *c, const ynode_t *n, optimize_constraint_t *k)
{
    const char *s = scalar(n);
    if (!s)
        return fail_at(c, n->line, n->col, "constraints: expected 'METRIC <= VALUE' or "
                       "'METRIC >= VALUE', got %s", ynode_kind_name(n));
    snprintf(k->text, sizeof k->text, "%s", s);
    const char *le = strstr(s, "<="), *ge = strstr(s, ">=");
    const char *op = le ? le : ge;
    if (!op || (le && ge))
        return fail_at(c, n->line, n->col, "constraints: '%s': expected 'METRIC <= "
                       "VALUE' or 'METRIC >= VALUE'", s);
    k->op = le ? OPTIMIZE_LE : OPTIMIZE_GE;
    char name[128];
    size_t a = strspn(s, " "), b = (size_t)(op - s);
    while (b > a && s[b - 1] == ' ') b--;
    if (b - a >= sizeof name || b == a)
        return fail_at(c, n->line, n->col, "constraints: '%s': no metric before the "
                       "operator", s);
    memcpy(name, s + a, b - a);
    name[b - a] = '\0';
    if ((k->metric = metric_find(name)) < 0) return unknown_metric(c, "constraints", n, name);
    const char *val = op + 2;
    val += strspn(val, " ");
    return parse_bound(c, n, k->metric, val, &k->bound);
}

static int parse_constraints(ctx_t *c, const ynode_pair_t *p)
{
    optimize_spec_t *sp = c->sp;
    const ynode_t *n = p->val;
    sp->cons_line = p->kline;
    sp->cons_col = p->kcol;
    if (n->kind != YNODE_SEQ)
        return fail_at(c, n->line, n->col, "constraints: expected a list such as "
                       "[itl_p99_s <= 80ms, slo_attainment >= 0.99]");
    sp->cons = calloc(n->n ? n->n : 1, sizeof *sp->cons);
    if (!sp->cons) return err_set(c->err, ERR_RUNTIME, "out of memory");
    for (size_t i = 0; i < n->n; i++, sp->ncons++)
        if (parse_constraint(c, n->items[i], &sp->cons[i])) return -1;
    return 0;
}

static int parse_search(ctx_t *c, const ynode_pair_t *p, optimize_search_t *s)
{
    static const char *names[] = {"auto", "bisect", "coordinate", "grid"};
    const char *v = scalar(p->val);
    for (int i = 0; v && i < 4; i++)
        if (strcmp(v, names[i]) == 0) { *s = (optimize_search_t)i; return 0; }
    return fail_at(c, p->val->line, p->val->col, "search: '%s' (expected auto, bisect, "
                   "coordinate or grid)", v ? v : ynode_kind_name(p->val));
}

static int parse_monotone(ctx_t *c, const ynode_pair_t *p, int *monotone)
{
    const char *v = scalar(p->val);
    if (v && strcmp(v, "true") == 0) { *monotone = 1; return 0; }
    if (v && strcmp(v, "false") == 0) { *monotone = 0; return 0; }
    return fail_at(c, p->val->line, p->val->col, "monotone: expected true or false");
}

/* The search actually run, from search: and monotone:; its errors at
 * line:col of c's source (0: an option, which has no line). */
static int resolve_search(ctx_t *c, int line, int col, optimize_search_t s, int monotone)
{
    optimize_spec_t *sp = c->sp;
    if (s == OPTIMIZE_AUTO) s = monotone ? OPTIMIZE_BISECT : OPTIMIZE_COORDINATE;
    if (s == OPTIMIZE_BISECT && sp->knobs.naxes != 1)
        return fail_at(c, line, col, "search: bisection (monotone: true) takes "
                       "exactly one knob, the section has %d", sp->knobs.naxes);
    if (s == OPTIMIZE_GRID && sp->knobs.npoints > OPTIMIZE_MAX_GRID)
        return fail_at(c, line, col, "search: grid of %llu points (at most %llu)",
                       (unsigned long long)sp->knobs.npoints,
                       (unsigned long long)OPTIMIZE_MAX_GRID);
    /* A round of coordinate search evaluates every value of every knob (and
     * keeps each summary), so the grid's cap bounds their sum. */
    uint64_t nvalues = 0;
    for (int a = 0; a < sp->knobs.naxes; a++) nvalues += (uint64_t)sp->knobs.axes[a].nvalues;
    if (s == OPTIMIZE_COORDINATE && nvalues > OPTIMIZE_MAX_GRID)
        return fail_at(c, line, col, "search: coordinate over %llu knob values (at "
                       "most %llu in all knobs)", (unsigned long long)nvalues,
                       (unsigned long long)OPTIMIZE_MAX_GRID);
    sp->search = s;
    return 0;
}

/* Which parts of the section the command line replaces (see
 * optimize_flags_t). */
static int overridden(const optimize_flags_t *fl, const char *key)
{
    if (!fl) return 0;
    if (strcmp(key, "knobs") == 0) return fl->nknobs > 0;
    if (strcmp(key, "max") == 0 || strcmp(key, "min") == 0) return fl->objective != NULL;
    if (strcmp(key, "constraints") == 0) return fl->ncons > 0;
    if (strcmp(key, "search") == 0) return fl->search != NULL;
    return 0;
}

static int parse_key(ctx_t *c, const ynode_pair_t *p, const optimize_flags_t *fl,
                     optimize_search_t *s, int *monotone)
{
    static const char *keys[] = {"knobs", "max", "min", "constraints", "search",
                                 "monotone"};
    int known = 0;
    for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) known |= !strcmp(p->key, keys[k]);
    if (known && overridden(fl, p->key)) return 0;
    if (strcmp(p->key, "max") == 0 || strcmp(p->key, "min") == 0)
        return parse_objective(c, p);
    if (strcmp(p->key, "constraints") == 0) return parse_constraints(c, p);
    if (strcmp(p->key, "search") == 0) return parse_search(c, p, s);
    if (strcmp(p->key, "monotone") == 0) return parse_monotone(c, p, monotone);
    if (strcmp(p->key, "knobs") == 0) return 0;   /* read first, see parse_all */
    const char *near = suggest_nearest(p->key, keys, sizeof keys / sizeof *keys);
    char hint[64] = "";
    if (near) snprintf(hint, sizeof hint, "did you mean '%s'? ", near);
    return fail_at(c, p->kline, p->kcol, "%s: unknown key (%sthe section has knobs, "
                   "max or min, constraints, search, monotone)", p->key, hint);
}

/* ---- the command line's parts (optimize_flags_t) --------------------------- */

/* A --knob value A..B[:STEP] as the range {from: A, to: B, step: STEP} (step
 * 1 when not given), each scalar marked at its column of the argument. */
static ynode_t *knob_range(ctx_t *c, int n, int col0, const char *v, const char *dots)
{
    const char *to = dots + 2, *colon = strchr(to, ':');
    const char *step = colon ? colon + 1 : "1";
    size_t la = (size_t)(dots - v), lb = colon ? (size_t)(colon - to) : strlen(to);
    if (la == 0 || lb == 0 || !*step || la >= 64 || lb >= 64 || strlen(step) >= 64 ||
        strpbrk(v, "[]{},#\"'")) {
        fail_at(c, n, col0 + 1, "knobs: '%s': expected FROM..TO or FROM..TO:STEP "
                "(e.g. 1..64, 10ms..100ms:10ms)", v);
        return NULL;
    }
    char from[64], upto[64];
    memcpy(from, v, la);
    from[la] = '\0';
    memcpy(upto, to, lb);
    upto[lb] = '\0';
    int cs = colon ? col0 + 1 + (int)(step - v) : col0 + 1 + (int)(dots - v);
    ynode_t *m = ynode_create_map(c->name, n, col0 + 1);
    ynode_t *f = ynode_create_scalar(c->name, n, col0 + 1, from);
    ynode_t *t = ynode_create_scalar(c->name, n, col0 + 1 + (int)(to - v), upto);
    ynode_t *st = ynode_create_scalar(c->name, n, cs, step);
    int rc = !m || !f || !t || !st;
    /* ynode_map_put takes its value even when it fails: each node is owned
     * by the map or freed, once. */
    if (!rc) {
        rc = ynode_map_put(m, "from", c->name, n, col0 + 1, f);
        f = NULL;
    }
    if (!rc) {
        rc = ynode_map_put(m, "to", c->name, n, col0 + 1 + (int)(to - v), t);
        t = NULL;
    }
    if (!rc) {
        rc = ynode_map_put(m, "step", c->name, n, cs, st);
        st = NULL;
    }
    ynode_free(f);
    ynode_free(t);
    ynode_free(st);
    if (rc) {
        ynode_free(m);
        err_set(c->err, ERR_RUNTIME, "out of memory");
        return NULL;
    }
    return m;
}

/* The value of --knob number n (its PATH=VALUE split at col0, the column of
 * '='): a YAML list or mapping as the section takes it, FROM..TO[:STEP], or
 * values separated by commas. */
static ynode_t *knob_value(ctx_t *c, int n, int col0, const char *path, const char *v)
{
    ynode_t *node = NULL;
    const char *dots = strstr(v, "..");
    if (v[0] == '[' || v[0] == '{') {
        if (ynode_parse(c->name, path, v, strlen(v), n, col0, &node, c->err)) return NULL;
    } else if (dots) {
        return knob_range(c, n, col0, v, dots);
    } else {
        /* "[" + v + "]": the bracket sits on the '=', so every value keeps
         * its own column. */
        size_t len = strlen(v);
        char *t = malloc(len + 3);
        if (!t) { err_set(c->err, ERR_RUNTIME, "out of memory"); return NULL; }
        t[0] = '[';
        memcpy(t + 1, v, len);
        memcpy(t + 1 + len, "]", 2);
        int rc = ynode_parse(c->name, path, t, len + 2, n, col0 - 1, &node, c->err);
        free(t);
        if (rc) return NULL;
    }
    if (!node) fail_at(c, n, col0 + 1, "knobs.%s: no values", path);
    return node;
}

/* The --knob options as the mapping a section's knobs: holds. */
static ynode_t *knobs_node(ctx_t *c, const optimize_flags_t *fl)
{
    ynode_t *map = ynode_create_map(c->name, 1, 1);
    if (!map) { err_set(c->err, ERR_RUNTIME, "out of memory"); return NULL; }
    for (int i = 0; i < fl->nknobs; i++) {
        const char *arg = fl->knobs[i], *eq = strchr(arg, '=');
        int n = i + 1;
        char path[256];
        if (!eq || eq == arg || !eq[1] || strchr(arg, '\n') || (size_t)(eq - arg) >= sizeof path) {
            fail_at(c, n, 1, "knobs: '%s': expected PATH=VALUES (a list such as "
                    "1,2,4 or [1, 2, 4], a range FROM..TO[:STEP] or {from: ..., to: "
                    "..., step: ...})", arg);
            break;
        }
        memcpy(path, arg, (size_t)(eq - arg));
        path[eq - arg] = '\0';
        if (ynode_find(map, path)) {
            fail_at(c, n, 1, "knobs.%s: given twice", path);
            break;
        }
        ynode_t *v = knob_value(c, n, (int)(eq - arg) + 1, path, eq + 1);
        if (!v) break;
        if (ynode_map_put(map, path, c->name, n, 1, v)) {
            err_set(c->err, ERR_RUNTIME, "out of memory");
            break;
        }
        if (i + 1 == fl->nknobs) return map;
    }
    ynode_free(map);
    return NULL;
}

static int flag_knobs(ctx_t *c, const optimize_flags_t *fl)
{
    ctx_t k = {"--knob", c->sp, c->err};
    ynode_t *map = knobs_node(&k, fl);
    if (!map) return -1;
    ynode_pair_t p = {.key = "knobs", .ksrc = k.name, .kline = 0, .kcol = 0, .val = map};
    int rc = parse_knobs(&k, &p);
    ynode_free(map);
    return rc;
}

/* A scalar option (--max, --min, --search) as the pair key: value. */
static int flag_scalar(ctx_t *c, const char *opt, const char *key, const char *v,
                       int (*parse)(ctx_t *, const ynode_pair_t *, void *), void *arg)
{
    ctx_t k = {opt, c->sp, c->err};
    ynode_t *n = ynode_create_scalar(opt, 0, 0, v);
    if (!n) return err_set(c->err, ERR_RUNTIME, "out of memory");
    ynode_pair_t p = {.key = (char *)key, .ksrc = opt, .kline = 0, .kcol = 0, .val = n};
    int rc = parse(&k, &p, arg);
    ynode_free(n);
    return rc;
}

static int objective_cb(ctx_t *c, const ynode_pair_t *p, void *arg)
{
    (void)arg;
    return parse_objective(c, p);
}

static int search_cb(ctx_t *c, const ynode_pair_t *p, void *arg)
{
    return parse_search(c, p, arg);
}

static int flag_constraints(ctx_t *c, const optimize_flags_t *fl)
{
    ctx_t k = {"--constraint", c->sp, c->err};
    optimize_spec_t *sp = c->sp;
    sp->cons = calloc((size_t)fl->ncons, sizeof *sp->cons);
    if (!sp->cons) return err_set(c->err, ERR_RUNTIME, "out of memory");
    snprintf(sp->cons_src, sizeof sp->cons_src, "%s", k.name);
    sp->cons_line = sp->cons_col = 1;
    for (int i = 0; i < fl->ncons; i++, sp->ncons++) {
        ynode_t *n = ynode_create_scalar(k.name, i + 1, 1, fl->cons[i]);
        if (!n) return err_set(c->err, ERR_RUNTIME, "out of memory");
        int rc = parse_constraint(&k, n, &sp->cons[i]);
        ynode_free(n);
        if (rc) return -1;
    }
    return 0;
}

/* ---- the whole specification ------------------------------------------------- */

/* The section (sec, NULL when the file has none) with the parts fl gives
 * replaced. */
static int parse_all(ctx_t *c, const ynode_pair_t *sec, const optimize_flags_t *fl)
{
    optimize_spec_t *sp = c->sp;
    sp->objective = sp->objective_knob = -1;
    const ynode_t *n = sec ? sec->val : NULL;
    if (sec) {
        sp->line = sec->kline;
        sp->col = sec->kcol;
        if (n->kind != YNODE_MAP)
            return fail_at(c, n->line, n->col, "expected a mapping with knobs, max or "
                           "min, constraints");
    }
    int flags = fl && (fl->nknobs || fl->objective || fl->ncons || fl->search);
    if (!sec && !flags)
        return err_set(c->err, ERR_INPUT, "%s:1:1: optimize: no optimize: section (add "
                       "one with knobs and an objective, or give --knob and --max or "
                       "--min)", c->name);
    /* Knobs first: the objective may name one. */
    const ynode_pair_t *knobs = n ? ynode_find(n, "knobs") : NULL;
    if (fl && fl->nknobs) {
        if (flag_knobs(c, fl)) return -1;
    } else if (knobs) {
        if (parse_knobs(c, knobs)) return -1;
    } else if (sec) {
        return fail_at(c, sec->kline, sec->kcol, "knobs: missing (the axes to search, "
                       "written as a sweep: section's, or --knob PATH=VALUES)");
    } else {
        return err_set(c->err, ERR_INPUT, "--knob: optimize.knobs: missing (give "
                       "--knob PATH=VALUES, or an optimize: section in %s)", c->name);
    }
    optimize_search_t s = OPTIMIZE_AUTO;
    int monotone = 0;
    for (size_t i = 0; n && i < n->n; i++)
        if (parse_key(c, &n->pairs[i], fl, &s, &monotone)) return -1;
    if (fl && fl->objective &&
        flag_scalar(c, fl->maximize ? "--max" : "--min", fl->maximize ? "max" : "min",
                    fl->objective, objective_cb, NULL))
        return -1;
    if (fl && fl->ncons && flag_constraints(c, fl)) return -1;
    if (fl && fl->search && flag_scalar(c, "--search", "search", fl->search, search_cb, &s))
        return -1;
    if (!sp->objective_name[0]) {
        if (sec)
            return fail_at(c, sec->kline, sec->kcol, "max or min: missing (the "
                           "objective, e.g. max: goodput_tok_s, or --max/--min METRIC)");
        return err_set(c->err, ERR_INPUT, "--max: optimize.max or min: missing (give "
                       "--max METRIC or --min METRIC)");
    }
    if (fl && fl->search) {
        ctx_t k = {"--search", sp, c->err};
        return resolve_search(&k, 0, 0, s, monotone);
    }
    return resolve_search(c, sp->line, sp->col, s, monotone);
}

/* Reads the text (the file when text is NULL); *found says whether it has
 * an optimize: section. */
static int load_spec(const char *path, const char *text, const optimize_flags_t *fl,
                     int need, int *found, optimize_spec_t *out, err_t *err)
{
    memset(out, 0, sizeof *out);
    out->objective = out->objective_knob = -1;
    const char *name = strcmp(path, "-") == 0 ? "<stdin>" : path;
    snprintf(out->cons_src, sizeof out->cons_src, "%s", name);
    char *own = NULL;
    size_t len;
    if (!text) {
        if (infile_read(path, INFILE_YAML_MAX, &own, &len, err) != 0) return -1;
        text = own;
    }
    ynode_t *root = NULL;
    int rc = ynode_parse(name, NULL, text, strlen(text), 1, 0, &root, err);
    ctx_t c = {name, out, err};
    const ynode_pair_t *sec = rc == 0 ? ynode_find(root, "optimize") : NULL;
    *found = sec != NULL;
    if (rc == 0 && (sec || need)) rc = parse_all(&c, sec, fl);
    ynode_free(root);
    free(own);
    return rc;
}

int optimize_spec_load_flags(const char *path, const char *text,
                             const optimize_flags_t *fl, optimize_spec_t *out,
                             err_t *err)
{
    int found;
    return load_spec(path, text, fl, 1, &found, out, err);
}

int optimize_spec_load(const char *path, const char *text, optimize_spec_t *out,
                       err_t *err)
{
    return optimize_spec_load_flags(path, text, NULL, out, err);
}

void optimize_spec_fini(optimize_spec_t *sp)
{
    if (!sp) return;
    sweepspec_fini(&sp->knobs);
    free(sp->cons);
    sp->cons = NULL;
    sp->ncons = 0;
}

const char *optimize_search_name(optimize_search_t s)
{
    static const char *names[] = {"auto", "bisect", "coordinate", "grid"};
    return (unsigned)s < 4 ? names[s] : "?";
}

/* ---- judging points ------------------------------------------------------------ */

optimize_verdict_t optimize_constraint_judge(const optimize_constraint_t *c,
                                             const metrics_summary_t *m)
{
    double v = m->value[c->metric], ci = m->ci95[c->metric];
    /* One replication's value has a half-width of 0 (metrics.h), which
     * would pass any bound it meets: a CI needs two values. */
    if (!isfinite(v) || m->valued[c->metric] < 2) return OPTIMIZE_UNJUDGED;
    if (!isfinite(ci)) ci = 0;
    int met = c->op == OPTIMIZE_LE ? v + ci <= c->bound : v - ci >= c->bound;
    return met ? OPTIMIZE_MET : OPTIMIZE_NOT_MET;
}

int optimize_constraint_met(const optimize_constraint_t *c, const metrics_summary_t *m)
{
    return optimize_constraint_judge(c, m) == OPTIMIZE_MET;
}

/* How far the CI-side of the value is past the bound, relative to it; an
 * unjudged constraint is as far as one without a value (infinitely), so
 * that no search walks towards a point it cannot judge. */
static double violation(const optimize_constraint_t *c, const metrics_summary_t *m)
{
    optimize_verdict_t v = optimize_constraint_judge(c, m);
    if (v == OPTIMIZE_MET) return 0;
    if (v == OPTIMIZE_UNJUDGED) return INFINITY;
    double x = m->value[c->metric], ci = m->ci95[c->metric];
    if (!isfinite(ci)) ci = 0;
    double past = c->op == OPTIMIZE_LE ? x + ci - c->bound : c->bound - (x - ci);
    return past / fmax(fabs(c->bound), 1e-12);
}

static void judge(const optimize_spec_t *sp, optimize_eval_t *e)
{
    e->feasible = 1;
    e->unjudged = 0;
    e->violation = 0;
    for (int k = 0; k < sp->ncons; k++) {
        optimize_verdict_t v = optimize_constraint_judge(&sp->cons[k], &e->m);
        if (v == OPTIMIZE_MET) continue;
        e->feasible = 0;
        e->unjudged += v == OPTIMIZE_UNJUDGED;
        e->violation += violation(&sp->cons[k], &e->m);
    }
}

/* Index of knob a's value at point (sweepspec's numbering, last knob
 * fastest). */
static int knob_index(const sweepspec_t *k, uint64_t point, int a)
{
    for (int b = k->naxes - 1; b > a; b--) point /= (uint64_t)k->axes[b].nvalues;
    return (int)(point % (uint64_t)k->axes[a].nvalues);
}

double optimize_objective(const optimize_spec_t *sp, const optimize_eval_t *e)
{
    if (sp->objective >= 0) return e->m.value[sp->objective];
    const sweep_axis_t *ax = &sp->knobs.axes[sp->objective_knob];
    const char *unit;
    double x;
    int i = knob_index(&sp->knobs, e->point, sp->objective_knob);
    return units_split(ax->values[i], &x, &unit) == 0 ? x : NAN;
}

/* > 0 when a ranks above b, < 0 below, 0 when they tie (point aside). */
static int rank_cmp(const optimize_spec_t *sp, const optimize_eval_t *a,
                    const optimize_eval_t *b)
{
    if (a->feasible != b->feasible) return a->feasible ? 1 : -1;
    if (!a->feasible) return a->violation < b->violation ? 1 : a->violation > b->violation ? -1 : 0;
    double x = optimize_objective(sp, a), y = optimize_objective(sp, b);
    if (isnan(x) || isnan(y)) return isnan(x) == isnan(y) ? 0 : isnan(x) ? -1 : 1;
    if (!sp->maximize) { double t = x; x = y; y = t; }
    return x > y ? 1 : x < y ? -1 : 0;
}

/* Whether a is strictly better than b, the lower point winning ties. */
static int better(const optimize_spec_t *sp, const optimize_eval_t *a,
                  const optimize_eval_t *b)
{
    int r = rank_cmp(sp, a, b);
    return r > 0 || (r == 0 && a->point < b->point);
}

/* ---- the evaluation cache ------------------------------------------------------ */

typedef struct search {
    const optimize_opts_t *o;
    const scenario_src_t *src;   /* the scenario, read once for the search */
    const optimize_spec_t *sp;
    optimize_result_t *res;
    size_t cap;
} search_t;

static long find_eval(const search_t *s, uint64_t point)
{
    for (size_t k = 0; k < s->res->nevals; k++)
        if (s->res->evals[k].point == point) return (long)k;
    return -1;
}

/* Evaluates those of points[0..n) not evaluated yet, in parallel. */
static int eval_points(search_t *s, const uint64_t *points, size_t n, err_t *err)
{
    uint64_t *todo = malloc((n ? n : 1) * sizeof *todo);
    if (!todo) return err_set(err, ERR_RUNTIME, "out of memory");
    size_t m = 0;
    for (size_t k = 0; k < n; k++) {
        int dup = find_eval(s, points[k]) >= 0;
        for (size_t j = 0; !dup && j < m; j++) dup = todo[j] == points[k];
        if (!dup) todo[m++] = points[k];
    }
    optimize_result_t *r = s->res;
    if (r->nevals + m > s->cap) {
        size_t cap = (r->nevals + m) * 2;
        optimize_eval_t *e = realloc(r->evals, cap * sizeof *e);
        if (!e) { free(todo); return err_set(err, ERR_RUNTIME, "out of memory"); }
        r->evals = e;
        s->cap = cap;
    }
    metrics_summary_t *ms = calloc(m ? m : 1, sizeof *ms);
    /* With precision:, a point settles every constraint's bound too: one
     * near a bound needs more replications than one far from it. */
    sim_bound_t *b = malloc((size_t)(s->sp->ncons ? s->sp->ncons : 1) * sizeof *b);
    int rc = ms && b ? 0 : err_set(err, ERR_RUNTIME, "out of memory");
    for (int k = 0; rc == 0 && k < s->sp->ncons; k++)
        b[k] = (sim_bound_t){s->sp->cons[k].metric, s->sp->cons[k].bound};
    if (rc == 0)
        rc = sweep_eval_src(s->src, &s->sp->knobs, s->o->sets, s->o->nsets, todo, m,
                            s->o->jobs, b, s->sp->ncons, ms, err);
    free(b);
    for (size_t k = 0; rc == 0 && k < m; k++) {
        optimize_eval_t *e = &r->evals[r->nevals++];
        e->point = todo[k];
        e->m = ms[k];
        judge(s->sp, e);
    }
    free(ms);
    free(todo);
    return rc;
}

static const optimize_eval_t *at(const search_t *s, uint64_t point)
{
    long k = find_eval(s, point);
    return k >= 0 ? &s->res->evals[k] : NULL;
}

/* ---- the searches ------------------------------------------------------------------ */

static int search_grid(search_t *s, err_t *err)
{
    uint64_t n = s->sp->knobs.npoints;
    uint64_t *all = malloc((size_t)n * sizeof *all);
    if (!all) return err_set(err, ERR_RUNTIME, "out of memory");
    for (uint64_t q = 0; q < n; q++) all[q] = q;
    int rc = eval_points(s, all, (size_t)n, err);
    free(all);
    return rc;
}

/* One knob, feasibility monotone along it: the ends, then halving the
 * interval between a feasible and an infeasible point. */
static int search_bisect(search_t *s, err_t *err)
{
    uint64_t n = s->sp->knobs.npoints, ends[2] = {0, n - 1};
    if (eval_points(s, ends, n > 1 ? 2 : 1, err)) return -1;
    int f0 = at(s, 0)->feasible, f1 = at(s, n - 1)->feasible;
    if (f0 == f1) return 0;   /* all feasible or none: nothing between */
    uint64_t lo = 0, hi = n - 1;   /* lo and hi differ in feasibility */
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (eval_points(s, &mid, 1, err)) return -1;
        if (at(s, mid)->feasible == f0) lo = mid;
        else hi = mid;
    }
    return 0;
}

/* The point with knob a at value i and the other knobs as in idx. */
static uint64_t point_of(const sweepspec_t *k, const int *idx, int a, int i)
{
    uint64_t p = 0;
    for (int b = 0; b < k->naxes; b++)
        p = p * (uint64_t)k->axes[b].nvalues + (uint64_t)(b == a ? i : idx[b]);
    return p;
}

/* A line search along knob a from cur; moves cur on a strict improvement.
 * *moved is set then. */
static int line_search(search_t *s, int a, uint64_t *cur, int *idx, int *moved,
                       err_t *err)
{
    const sweepspec_t *k = &s->sp->knobs;
    int nv = k->axes[a].nvalues;
    uint64_t *line = malloc((size_t)nv * sizeof *line);
    if (!line) return err_set(err, ERR_RUNTIME, "out of memory");
    for (int i = 0; i < nv; i++) line[i] = point_of(k, idx, a, i);
    int rc = eval_points(s, line, (size_t)nv, err);
    for (int i = 0; rc == 0 && i < nv; i++) {
        if (rank_cmp(s->sp, at(s, line[i]), at(s, *cur)) <= 0) continue;
        *cur = line[i];
        idx[a] = i;
        *moved = 1;
    }
    free(line);
    return rc;
}

static int search_coordinate(search_t *s, err_t *err)
{
    const sweepspec_t *k = &s->sp->knobs;
    int *idx = calloc((size_t)k->naxes, sizeof *idx);
    if (!idx) return err_set(err, ERR_RUNTIME, "out of memory");
    uint64_t cur = 0;
    int rc = eval_points(s, &cur, 1, err), moved = 1;
    while (rc == 0 && moved) {
        moved = 0;
        for (int a = 0; rc == 0 && a < k->naxes; a++)
            rc = line_search(s, a, &cur, idx, &moved, err);
    }
    free(idx);
    return rc;
}

/* ---- the result ---------------------------------------------------------------------- */

static int by_point(const void *x, const void *y)
{
    const optimize_eval_t *a = x, *b = y;
    return a->point < b->point ? -1 : a->point > b->point;
}

/* A point placed on the frontier's plane: x the first constraint's metric
 * and y the objective, both turned so that smaller x and larger y are
 * better. */
typedef struct fpoint {
    double x, y, metric;
    size_t idx;
} fpoint_t;

/* Ascending x; for equal x the best y first, then the lower point. */
static int by_x(const void *p, const void *q)
{
    const fpoint_t *a = p, *b = q;
    if (a->x != b->x) return a->x < b->x ? -1 : 1;
    if (a->y != b->y) return a->y > b->y ? -1 : 1;
    return a->idx < b->idx ? -1 : a->idx > b->idx;
}

/* The non-dominated points in one pass over them sorted by x: a point is
 * kept when its y beats every point before it (equal x and y: kept too,
 * neither dominates the other). The list ends ascending in the metric
 * itself (for `>=` the turned order is reversed). */
static int frontier_build(const optimize_spec_t *sp, optimize_result_t *r, err_t *err)
{
    if (sp->ncons == 0 || r->nevals == 0) return 0;
    const optimize_constraint_t *c = &sp->cons[0];
    fpoint_t *f = malloc(r->nevals * sizeof *f);
    r->frontier = malloc(r->nevals * sizeof *r->frontier);
    if (!f || !r->frontier) {
        free(f);
        return err_set(err, ERR_RUNTIME, "out of memory");
    }
    size_t n = 0;
    for (size_t i = 0; i < r->nevals; i++) {
        double m = r->evals[i].m.value[c->metric], y = optimize_objective(sp, &r->evals[i]);
        if (!isfinite(m) || !isfinite(y)) continue;
        f[n++] = (fpoint_t){.x = c->op == OPTIMIZE_GE ? -m : m,
                            .y = sp->maximize ? y : -y, .metric = m, .idx = i};
    }
    qsort(f, n, sizeof *f, by_x);
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
        const fpoint_t *last = kept ? &f[kept - 1] : NULL;
        if (last && !(f[i].y > last->y || (f[i].y == last->y && f[i].x == last->x)))
            continue;
        f[kept++] = f[i];
    }
    if (c->op == OPTIMIZE_GE)   /* ascending in the metric itself */
        for (size_t i = 0; i < kept / 2; i++) {
            fpoint_t t = f[i];
            f[i] = f[kept - 1 - i];
            f[kept - 1 - i] = t;
        }
    for (size_t i = 0; i < kept; i++) r->frontier[i] = f[i].idx;
    r->nfrontier = kept;
    free(f);
    return 0;
}

static void finish(const optimize_spec_t *sp, optimize_result_t *r)
{
    qsort(r->evals, r->nevals, sizeof *r->evals, by_point);
    r->best = -1;
    r->nunjudged = 0;
    for (size_t k = 0; k < r->nevals; k++) {
        r->nunjudged += r->evals[k].unjudged > 0;
        /* A point without the objective's value has nothing to be best at
         * (an objective NaN everywhere once made the first point "best"). */
        if (!r->evals[k].feasible || isnan(optimize_objective(sp, &r->evals[k]))) continue;
        if (r->best < 0 || better(sp, &r->evals[k], &r->evals[r->best])) r->best = (long)k;
    }
}

/* Whether metric m is one of those an slo: section defines (NaN without
 * one, docs/metrics.md). */
static int is_slo_metric(int m)
{
    return m == METRIC_SLO_ATTAINMENT || m == METRIC_TTFT_SLO_FRAC ||
           m == METRIC_TPOT_SLO_FRAC || m == METRIC_GOODPUT_REQ_S ||
           m == METRIC_GOODPUT_TOK_S;
}

/* The most replications any evaluated point has a value of metric m for. */
static int most_valued(const optimize_result_t *r, int m)
{
    int most = 0;
    for (size_t k = 0; k < r->nevals; k++)
        if (r->evals[k].m.valued[m] > most) most = r->evals[k].m.valued[m];
    return most;
}

int optimize_why_none(const optimize_spec_t *sp, const optimize_result_t *r, char *buf,
                      size_t n)
{
    if (r->best >= 0) return 0;
    /* A constraint no point has a value for explains everything else. */
    for (int k = 0; k < sp->ncons; k++) {
        const optimize_constraint_t *c = &sp->cons[k];
        if (most_valued(r, c->metric) > 0) continue;
        if (is_slo_metric(c->metric) && !r->has_slo)
            snprintf(buf, n, "constraint '%s': %s has no value without an slo: section "
                     "(ttft or tpot), which the scenario does not have", c->text,
                     metric_name(c->metric));
        else
            snprintf(buf, n, "constraint '%s': %s has no value at any evaluated point",
                     c->text, metric_name(c->metric));
        return 1;
    }
    size_t feasible = 0;
    for (size_t k = 0; k < r->nevals; k++) feasible += r->evals[k].feasible != 0;
    if (feasible > 0) {
        if (sp->objective >= 0 && is_slo_metric(sp->objective) && !r->has_slo)
            snprintf(buf, n, "the objective %s has no value without an slo: section "
                     "(ttft or tpot), which the scenario does not have", sp->objective_name);
        else
            snprintf(buf, n, "the objective %s has no value at any point that meets "
                     "the constraints", sp->objective_name);
        return 1;
    }
    if (r->nunjudged > 0) {
        /* Name the first constraint left unjudged somewhere. */
        const optimize_constraint_t *c = NULL;
        for (size_t k = 0; !c && k < r->nevals; k++)
            for (int i = 0; !c && i < sp->ncons; i++)
                if (optimize_constraint_judge(&sp->cons[i], &r->evals[k].m) ==
                    OPTIMIZE_UNJUDGED)
                    c = &sp->cons[i];
        const char *name = c ? metric_name(c->metric) : "a constraint's metric";
        if (r->nunjudged == r->nevals)
            snprintf(buf, n, "no evaluated point could be judged: at each, fewer than "
                     "two replications have a value of %s, so it has no confidence "
                     "interval; more replications or a longer duration may give one",
                     name);
        else
            snprintf(buf, n, "no evaluated point meets the constraints, and %zu of %zu "
                     "could not be judged: fewer than two replications have a value of "
                     "%s there, so it has no confidence interval", r->nunjudged,
                     r->nevals, name);
        return 1;
    }
    snprintf(buf, n, "no evaluated point meets the constraints");
    return 1;
}

/* The checks before any simulation: the base scenario loads (first, so
 * that a bad --set is reported as itself, not as a knob value's error),
 * every knob value loads, and constraints have replications for a CI. */
static int precheck(const scenario_override_t *sets, int nsets, const scenario_src_t *src,
                    const optimize_spec_t *sp, int *has_slo, int *precision, err_t *err)
{
    scenario_t base;
    if (scenario_src_load(src, sets, nsets, &base, err) != 0) return -1;
    int reps = base.replications;
    *precision = base.precision.relative > 0 || sweepspec_sets_precision(&sp->knobs);
    if (*precision && sweepspec_refuse_replications_axis(&sp->knobs, "optimize.knobs", err)) {
        scenario_fini(&base);
        return -1;
    }
    /* Any group's SLO (the top-level slo: is every group's default), so
     * that an SLO metric without a value can be explained. */
    *has_slo = 0;
    for (int g = 0; g < base.ngroups; g++)
        *has_slo |= base.groups[g].slo.ttft > 0 || base.groups[g].slo.tpot > 0;
    scenario_fini(&base);
    if (sweepspec_validate_src(&sp->knobs, src, sets, nsets, err) < 0) {
        rename_sweep(err);
        return -1;
    }
    /* A knob over replications sets them point by point: each of its values
     * must allow a CI too (a point of 1 replication met every constraint
     * with a half-width of 0). */
    for (int a = 0; sp->ncons > 0 && a < sp->knobs.naxes; a++) {
        const sweep_axis_t *ax = &sp->knobs.axes[a];
        if (strcmp(ax->path, "replications") != 0) continue;
        for (int i = 0; i < ax->nvalues; i++) {
            if (strtod(ax->values[i], NULL) >= 2) continue;
            return err_set(err, ERR_INPUT, "%s:%d:%d: optimize.knobs.replications: value "
                           "'%s': a constraint is met only when its 95%% CI says so, which "
                           "needs replications >= 2", sp->knobs.file, ax->vline[i],
                           ax->vcol[i], ax->values[i]);
        }
    }
    /* With precision: at every point (the base's, or a knob over it) a
     * point's first round is at least 2 whatever the base's replications
     * (scenario_resolve refuses fewer, sim.c runs at least 10). */
    char at[YNODE_WHERE_MAX];
    if (sp->ncons > 0 && reps < 2 && !*precision)
        return err_set(err, ERR_INPUT, "%s: optimize.constraints: a constraint is "
                       "met only when its 95%% CI says so, which needs replications >= 2 "
                       "(the scenario has %d; set replications: or --reps)",
                       ynode_where(at, sizeof at, sp->cons_src, sp->cons_line, sp->cons_col),
                       reps);
    return 0;
}

int optimize_check(const scenario_src_t *src, const scenario_override_t *sets, int nsets,
                   optimize_spec_t *out, err_t *err)
{
    int found = 0;
    if (load_spec(scenario_src_name(src), scenario_src_body(src, NULL), NULL, 0, &found, out,
                  err) != 0)
        return -1;
    if (!found) return 0;
    int has_slo, precision;
    return precheck(sets, nsets, src, out, &has_slo, &precision, err);
}

/* A bound as the shortest text that reads back as the same double. */
static void print_bound(FILE *f, double x)
{
    char buf[40];
    for (int prec = 6; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, x);
        if (strtod(buf, NULL) == x) break;
    }
    fputs(buf, f);
}

int optimize_write_yaml(const optimize_spec_t *sp, FILE *f)
{
    if (sp->knobs.naxes == 0) return 0;
    fputs("optimize:\n  knobs:\n", f);
    if (sweepspec_write_axes(&sp->knobs, "    ", f) != 0) return -1;
    fprintf(f, "  %s: %s\n", sp->maximize ? "max" : "min", sp->objective_name);
    if (sp->ncons > 0) fputs("  constraints:\n", f);
    for (int k = 0; k < sp->ncons; k++) {
        const optimize_constraint_t *c = &sp->cons[k];
        fprintf(f, "    - \"%s %s ", metric_name(c->metric), c->op == OPTIMIZE_LE ? "<=" : ">=");
        print_bound(f, c->bound);
        fputs("\"\n", f);
    }
    /* The search as resolved: auto is already bisect or coordinate. */
    fprintf(f, "  search: %s\n", optimize_search_name(sp->search));
    return ferror(f) ? -1 : 0;
}

int optimize_run(const optimize_opts_t *o, const optimize_spec_t *sp,
                 optimize_result_t *res, err_t *err)
{
    memset(res, 0, sizeof *res);
    res->best = -1;
    /* Every evaluation loads this one reading of the scenario and of the
     * files it names: an edit during the search changes no result. */
    scenario_src_t *src;
    if (scenario_src_open(o->scenario, &src, err) != 0) return -1;
    search_t s = {.o = o, .src = src, .sp = sp, .res = res};
    int rc = precheck(o->sets, o->nsets, src, sp, &res->has_slo, &res->precision, err);
    const outfile_role_t out = {o->out, "--out", 1};
    if (rc == 0 && o->out) rc = outfile_not_read(&out, 1, scenario_src_files(src), err);
    if (rc == 0) {
        switch (sp->search) {
        case OPTIMIZE_BISECT: rc = search_bisect(&s, err); break;
        case OPTIMIZE_GRID: rc = search_grid(&s, err); break;
        default: rc = search_coordinate(&s, err); break;
        }
    }
    scenario_src_free(src);
    if (rc != 0) return -1;
    finish(sp, res);
    return frontier_build(sp, res, err);
}

void optimize_result_fini(optimize_result_t *res)
{
    if (!res) return;
    free(res->evals);
    free(res->frontier);
    memset(res, 0, sizeof *res);
    res->best = -1;
}
