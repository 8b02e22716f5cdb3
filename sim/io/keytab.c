/* keytab — key tables: YAML sections into structs (see keytab.h). */
#include "io/keytab.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/datapath.h"
#include "io/infile.h"
#include "engine/rng.h"
#include "base/suggest.h"

#define FIELD(base, off, T) ((T *)(void *)((char *)(base) + (off)))
#define CFIELD(base, off, T) ((const T *)(const void *)((const char *)(base) + (off)))
#define MAX_LAYERS 8

/* Truncates silently: keys are short and the result is only a label. */
void keytab_join(char *out, const char *prefix, const char *name)
{
    size_t n = 0;
    if (prefix && *prefix) {
        size_t lp = strnlen(prefix, KEYTAB_KEY_MAX - 2);
        memcpy(out, prefix, lp);
        out[lp] = '.';
        n = lp + 1;
    }
    size_t ln = strnlen(name, KEYTAB_KEY_MAX - 1 - n);
    memcpy(out + n, name, ln);
    out[n + ln] = 0;
}

int keytab_err(keytab_ctx_t *c, const ynode_t *node, const char *key,
               const char *fmt, ...)
{
    char msg[ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (!node) node = c->where;
    char at[YNODE_WHERE_MAX];
    if (node) ynode_where(at, sizeof at, node->src, node->line, node->col);
    else snprintf(at, sizeof at, "?");
    return err_set(c->err, ERR_INPUT, "%s: %s: %s", at,
                   key && *key ? key : "(top level)", msg);
}

static int key_err(keytab_ctx_t *c, const ynode_pair_t *p, const char *key,
                   const char *fmt, const char *a, const char *b)
{
    char msg[600];
    snprintf(msg, sizeof msg, fmt, a, b);
    char at[YNODE_WHERE_MAX];
    ynode_where(at, sizeof at, p->ksrc, p->kline, p->kcol);
    return err_set(c->err, ERR_INPUT, "%s: %s: %s", at, key, msg);
}

static size_t tab_names(const keytab_key_t *tab, const char **names, size_t max)
{
    size_t n = 0;
    for (; tab->name && n < max; tab++) names[n++] = tab->name;
    return n;
}

void keytab_names(const keytab_key_t *tab, char *buf, size_t bufsz)
{
    const char *names[64];
    suggest_join(buf, bufsz, names, tab_names(tab, names, 64));
}

int keytab_check_keys(keytab_ctx_t *c, const keytab_key_t *tab,
                      const ynode_t *map, const char *prefix)
{
    if (!map || map->kind != YNODE_MAP) return 0;
    const char *names[64];
    size_t n = tab_names(tab, names, 64);
    for (size_t i = 0; i < map->n; i++) {
        const ynode_pair_t *p = &map->pairs[i];
        size_t j;
        for (j = 0; j < n && strcmp(names[j], p->key) != 0; j++) {}
        if (j < n) continue;
        char key[KEYTAB_KEY_MAX];
        keytab_join(key, prefix, p->key);
        char msg[500];
        suggest_unknown_key(msg, sizeof msg, p->key, names, n);
        return key_err(c, p, key, "%s%s", msg, "");
    }
    return 0;
}

static int want_scalar(keytab_ctx_t *c, const ynode_t *n, const char *key,
                       const char *what)
{
    if (n->kind == YNODE_SCALAR) return 0;
    return keytab_err(c, n, key, "expected %s, got %s", what, ynode_kind_name(n));
}

/* A value in a message, in the fewest digits that read back as v: %g alone
 * printed 1000001 as 1e+06, so "must be in [1, 1e+06], got 1e+06" hid
 * which value was refused. */
static void fmt_value(char *buf, size_t n, double v, enum unit_kind u)
{
    if (u != UNIT_NUMBER && units_format(v, u, buf, n) >= 0) return;
    for (int prec = 6; prec <= 17; prec++) {
        snprintf(buf, n, "%.*g", prec, v);
        if (strtod(buf, NULL) == v) break;
    }
}

static int check_range(keytab_ctx_t *c, const ynode_t *node, const char *key,
                       const keytab_key_t *k, double v)
{
    int lo_ok = (k->flags & KF_MIN_OPEN) ? v > k->min : v >= k->min;
    int hi_ok = (k->flags & KF_MAX_OPEN) ? v < k->max : v <= k->max;
    if (isinf(v) && v > 0 && (k->flags & KF_INF)) hi_ok = 1;
    if (lo_ok && hi_ok) return 0;
    char got[64], lo[64], hi[64];
    fmt_value(got, sizeof got, v, k->unit);
    fmt_value(lo, sizeof lo, k->min, k->unit);
    fmt_value(hi, sizeof hi, k->max, k->unit);
    if (!lo_ok && (k->max >= 1e300 || isinf(k->max)))
        return keytab_err(c, node, key, "must be %s %s, got %s",
                          (k->flags & KF_MIN_OPEN) ? ">" : ">=", lo, got);
    return keytab_err(c, node, key, "must be in %s%s, %s%s, got %s",
                      (k->flags & KF_MIN_OPEN) ? "(" : "[", lo, hi,
                      (k->flags & KF_MAX_OPEN) ? ")" : "]", got);
}

int keytab_parse_number(keytab_ctx_t *c, const ynode_t *node, const char *key,
                        const keytab_key_t *k, double *out)
{
    char what[80];
    snprintf(what, sizeof what, "a %s (e.g. %s)", units_kind_name(k->unit),
             units_example(k->unit));
    if (want_scalar(c, node, key, what) != 0) return -1;
    char why[400];
    /* Keys that took bare numbers before they took units keep doing so. */
    if ((k->flags & KF_BARE) && units_parse(node->str, UNIT_NUMBER, 0, out, NULL, 0) == 0)
        return check_range(c, node, key, k, *out);
    if (units_parse(node->str, k->unit, (k->flags & KF_INF) != 0, out, why,
                    sizeof why) != 0)
        return keytab_err(c, node, key, "%s", why);
    return check_range(c, node, key, k, *out);
}

static int parse_int(keytab_ctx_t *c, const ynode_t *node, const char *key,
                     const keytab_key_t *k, int *out)
{
    double v;
    if (want_scalar(c, node, key, "an integer") != 0) return -1;
    char why[400];
    if (units_parse(node->str, UNIT_NUMBER, 0, &v, why, sizeof why) != 0)
        return keytab_err(c, node, key, "expected an integer: %s", why);
    if (v != floor(v))
        return keytab_err(c, node, key, "must be an integer, got %s", node->str);
    if (check_range(c, node, key, k, v) != 0) return -1;
    if (v > INT32_MAX || v < INT32_MIN)
        return keytab_err(c, node, key, "%s is out of range", node->str);
    *out = (int)v;
    return 0;
}

static int parse_u64(keytab_ctx_t *c, const ynode_t *node, const char *key,
                     uint64_t *out)
{
    if (want_scalar(c, node, key, "a non-negative integer") != 0) return -1;
    const char *s = node->str;
    size_t i;
    for (i = 0; s[i] >= '0' && s[i] <= '9'; i++) {}
    if (i == 0 || s[i])
        return keytab_err(c, node, key, "expected a non-negative integer, got '%s'", s);
    errno = 0;
    unsigned long long v = strtoull(s, NULL, 10);
    if (errno == ERANGE || v > UINT64_MAX)
        return keytab_err(c, node, key, "'%s' does not fit in 64 bits", s);
    *out = (uint64_t)v;
    return 0;
}

static int parse_bool(keytab_ctx_t *c, const ynode_t *node, const char *key,
                      int *out)
{
    if (want_scalar(c, node, key, "true or false") != 0) return -1;
    const char *s = node->str;
    if (!strcmp(s, "true") || !strcmp(s, "True")) *out = 1;
    else if (!strcmp(s, "false") || !strcmp(s, "False")) *out = 0;
    else return keytab_err(c, node, key, "expected true or false, got '%s'", s);
    return 0;
}

int keytab_parse_choice(keytab_ctx_t *c, const ynode_t *node, const char *key,
                        const char *const *names, size_t n, size_t *at)
{
    char list[400];
    suggest_join(list, sizeof list, names, n);
    if (node->kind != YNODE_SCALAR)
        return keytab_err(c, node, key, "expected one of: %s; got %s", list,
                          ynode_kind_name(node));
    for (size_t i = 0; i < n; i++) {
        if (strcmp(node->str, names[i]) != 0) continue;
        *at = i;
        return 0;
    }
    const char *s = suggest_nearest(node->str, names, n);
    if (s)
        return keytab_err(c, node, key, "unknown value '%s' (did you mean '%s'? allowed: %s)",
                          node->str, s, list);
    return keytab_err(c, node, key, "unknown value '%s' (allowed: %s)", node->str,
                      list);
}

static int parse_enum(keytab_ctx_t *c, const ynode_t *node, const char *key,
                      const keytab_key_t *k, void *base)
{
    const char *const *names = k->sub;
    size_t n = 0, i;
    while (names[n]) n++;
    if (keytab_parse_choice(c, node, key, names, n, &i) != 0) return -1;
    if (k->flags & KF_ENUMSTR)
        snprintf(FIELD(base, k->off, char), k->size, "%s", names[i]);
    else
        *FIELD(base, k->off, int) = (int)i;
    return 0;
}

int keytab_find_file(const keytab_ctx_t *c, const char *ref, char *out,
                     size_t outsz)
{
    if (!*ref) return -1;
    return datapath_resolve(c->dir, ref, out, outsz);
}

static int parse_path(keytab_ctx_t *c, const ynode_t *node, const char *key,
                      char *out, size_t outsz)
{
    if (want_scalar(c, node, key, "a file path") != 0) return -1;
    if (keytab_find_file(c, node->str, out, outsz) != 0)
        return keytab_err(c, node, key,
                          "file '%s' not found (%s)", node->str,
                          datapath_where(c->dir));
    return 0;
}

/* --- distributions ------------------------------------------------------ */

static const char *const DIST_NAMES[] = {"uniform", "exponential", "normal",
                                         "lognormal", "pareto", "empirical",
                                         NULL};
static const enum dist_kind DIST_KINDS[] = {DIST_UNIFORM, DIST_EXPONENTIAL,
                                            DIST_NORMAL, DIST_LOGNORMAL,
                                            DIST_PARETO, DIST_EMPIRICAL};
/* Parameter names per kind, in the order they are written. */
static const char *const DIST_PARAMS[][3] = {
    {"min", "max", NULL}, {"mean", NULL, NULL}, {"mean", "sd", NULL},
    {"mean", "sd", NULL}, {"scale", "shape", NULL}, {"values", "file", NULL}};

static int dist_index(enum dist_kind kind)
{
    for (int i = 0; i < 6; i++)
        if (DIST_KINDS[i] == kind) return i;
    return -1;
}

/* One quantity of a distribution: a time with unit, or a plain count. */
static int parse_quantity(keytab_ctx_t *c, const ynode_t *node, const char *key,
                          enum unit_kind unit, double min, int open,
                          double *out)
{
    keytab_key_t k = {.unit = unit, .min = min, .max = INFINITY,
                      .flags = open ? KF_MIN_OPEN : 0};
    return keytab_parse_number(c, node, key, &k, out);
}

int keytab_read_data_file(keytab_ctx_t *c, const ynode_t *node, const char *key,
                          char *path, size_t n, char **text, size_t *len)
{
    if (parse_path(c, node, key, path, n) != 0) return -1;
    err_t rerr;
    if (infiles_read(c->files, path, INFILE_DATA_MAX, text, len, &rerr) != 0)
        return keytab_err(c, node, key, "cannot read: %s", rerr.msg);
    return 0;
}

/* Reads an empirical file: one value per line (with the unit of the key for
 * times), blank lines and #-comments skipped. */
static int read_values_file(keytab_ctx_t *c, const ynode_t *node,
                            const char *key, enum unit_kind unit,
                            double **vals, size_t *nvals)
{
    char path[KEYTAB_PATH_MAX];
    char *text;
    size_t len;
    if (keytab_read_data_file(c, node, key, path, sizeof path, &text, &len) != 0)
        return -1;
    size_t cap = 0, n = 0;
    double *v = NULL;
    int rc = 0, line = 0, col = 0;
    if (infile_find_nul(text, len, &line, &col)) {
        ynode_t at = {.kind = YNODE_SCALAR, .src = path, .line = line, .col = col};
        free(text);
        return keytab_err(c, &at, key, "%s", INFILE_NUL_WHY);
    }
    char *cursor = text, *p;
    while (rc == 0 && (p = ynode_next_data_line(&cursor, &line, &col))) {
        ynode_t fake = {.kind = YNODE_SCALAR, .src = path, .line = line,
                        .col = col, .str = p, .plain = 1};
        double x;
        rc = parse_quantity(c, &fake, key, unit, 0, 0, &x);
        if (rc == 0 && n == cap) {
            size_t nc = cap ? 2 * cap : 64;
            double *nv = realloc(v, nc * sizeof *nv);
            if (!nv) rc = err_set(c->err, ERR_RUNTIME, "%s: out of memory", path);
            else {
                v = nv;
                cap = nc;
            }
        }
        if (rc == 0) v[n++] = x;
    }
    free(text);
    if (rc == 0 && n == 0)
        rc = keytab_err(c, node, key, "file '%s' holds no values", path);
    if (rc != 0) {
        free(v);
        return -1;
    }
    *vals = v;
    *nvals = n;
    return 0;
}

static int parse_values_list(keytab_ctx_t *c, const ynode_t *node,
                             const char *key, enum unit_kind unit,
                             double **vals, size_t *nvals)
{
    if (node->kind != YNODE_SEQ)
        return keytab_err(c, node, key, "expected a list of values, got %s",
                          ynode_kind_name(node));
    if (node->n == 0) return keytab_err(c, node, key, "the list is empty");
    double *v = malloc(node->n * sizeof *v);
    if (!v) return err_set(c->err, ERR_RUNTIME, "out of memory");
    for (size_t i = 0; i < node->n; i++) {
        char k[KEYTAB_KEY_MAX];
        char idx[24];
        snprintf(idx, sizeof idx, "%zu", i);
        keytab_join(k, key, idx);
        if (parse_quantity(c, node->items[i], k, unit, 0, 0, &v[i]) != 0) {
            free(v);
            return -1;
        }
    }
    *vals = v;
    *nvals = node->n;
    return 0;
}

static int parse_dist_map(keytab_ctx_t *c, const ynode_t *node, const char *key,
                          enum unit_kind unit, dist_t *d)
{
    static const char *const ALL[] = {"dist", "min", "max", "mean", "sd",
                                      "scale", "shape", "values", "file"};
    char k[KEYTAB_KEY_MAX];
    const ynode_t *dn = ynode_get(node, "dist");
    keytab_join(k, key, "dist");
    char list[200];
    suggest_join(list, sizeof list, DIST_NAMES, 6);
    if (!dn) return keytab_err(c, node, k, "missing (one of: %s)", list);
    keytab_key_t ek = {.sub = DIST_NAMES};
    int idx = -1;
    if (parse_enum(c, dn, k, &ek, &idx) != 0) return -1;
    const char *const *params = DIST_PARAMS[idx];
    d->kind = DIST_KINDS[idx];
    /* Keys: `dist` and this kind's parameters only. */
    for (size_t i = 0; i < node->n; i++) {
        const ynode_pair_t *p = &node->pairs[i];
        if (!strcmp(p->key, "dist")) continue;
        int ok = 0;
        for (int j = 0; j < 3 && params[j]; j++) ok |= !strcmp(p->key, params[j]);
        if (ok) continue;
        keytab_join(k, key, p->key);
        char allowed[80];
        size_t np = 0;
        while (np < 3 && params[np]) np++;
        suggest_join(allowed, sizeof allowed, params, np);
        int known = 0;
        for (size_t j = 0; j < sizeof ALL / sizeof *ALL; j++) known |= !strcmp(p->key, ALL[j]);
        const char *s = known ? NULL : suggest_nearest(p->key, params, np);
        if (s)
            return key_err(c, p, k, "unknown key (did you mean '%s'?)%s", s, "");
        return key_err(c, p, k, "not a parameter of this distribution (%s takes: %s)",
                       DIST_NAMES[idx], allowed);
    }
    if (d->kind == DIST_EMPIRICAL) {
        const ynode_t *vn = ynode_get(node, "values"), *fn = ynode_get(node, "file");
        if (vn && fn) {
            keytab_join(k, key, "file");
            return keytab_err(c, fn, k, "give either values or file, not both");
        }
        if (vn) {
            keytab_join(k, key, "values");
            return parse_values_list(c, vn, k, unit, &d->values, &d->n);
        }
        if (fn) {
            keytab_join(k, key, "file");
            return read_values_file(c, fn, k, unit, &d->values, &d->n);
        }
        keytab_join(k, key, "values");
        return keytab_err(c, node, k, "missing (empirical needs values or file)");
    }
    double *slot[2] = {&d->a, &d->b};
    for (int j = 0; j < 2 && params[j]; j++) {
        const ynode_t *pn = ynode_get(node, params[j]);
        keytab_join(k, key, params[j]);
        if (!pn) return keytab_err(c, node, k, "missing (%s needs it)", DIST_NAMES[idx]);
        int is_shape = !strcmp(params[j], "shape");
        int positive = is_shape || !strcmp(params[j], "scale") ||
                       (!strcmp(params[j], "mean") &&
                        (d->kind == DIST_EXPONENTIAL || d->kind == DIST_LOGNORMAL));
        if (parse_quantity(c, pn, k, is_shape ? UNIT_NUMBER : unit, 0, positive,
                           slot[j]) != 0)
            return -1;
    }
    if (d->kind == DIST_UNIFORM && d->a > d->b) {
        keytab_join(k, key, "max");
        return keytab_err(c, ynode_get(node, "max"), k, "must be >= min");
    }
    return 0;
}

static int parse_dist(keytab_ctx_t *c, const ynode_t *node, const char *key,
                      const keytab_key_t *k, dist_t *d)
{
    memset(d, 0, sizeof *d);
    if (node->kind == YNODE_MAP) return parse_dist_map(c, node, key, k->unit, d);
    if (node->kind != YNODE_SCALAR)
        return keytab_err(c, node, key, "expected a value or {dist: ...}, got %s",
                          ynode_kind_name(node));
    if ((k->flags & KF_NONE) && strcmp(node->str, "none") == 0) {
        *d = dist_const(0);
        return 0;
    }
    double v;
    if (keytab_parse_number(c, node, key, k, &v) != 0) return -1;
    *d = dist_const(v);
    return 0;
}

static int parse_list(keytab_ctx_t *c, const ynode_t *node, const char *key,
                      const keytab_key_t *k, void *base)
{
    if (node->kind != YNODE_SEQ)
        return keytab_err(c, node, key, "expected a list, got %s",
                          ynode_kind_name(node));
    if (node->n == 0) return keytab_err(c, node, key, "the list is empty");
    if (node->n > 1u << 20) return keytab_err(c, node, key, "the list is too long");
    double *v = malloc(node->n * sizeof *v);
    if (!v) return err_set(c->err, ERR_RUNTIME, "out of memory");
    for (size_t i = 0; i < node->n; i++) {
        char ik[KEYTAB_KEY_MAX], idx[24];
        snprintf(idx, sizeof idx, "%zu", i);
        keytab_join(ik, key, idx);
        if (keytab_parse_number(c, node->items[i], ik, k, &v[i]) != 0) {
            free(v);
            return -1;
        }
    }
    free(*FIELD(base, k->off, double *));
    *FIELD(base, k->off, double *) = v;
    *FIELD(base, k->aux, int) = (int)node->n;
    return 0;
}

static int parse_value(keytab_ctx_t *c, const ynode_t *node, const char *key,
                       const keytab_key_t *k, void *base)
{
    switch (k->type) {
    case KT_STRING:
        if (want_scalar(c, node, key, "a string") != 0) return -1;
        if (strlen(node->str) >= k->size)
            return keytab_err(c, node, key, "too long (at most %zu characters)",
                              k->size - 1);
        memcpy(FIELD(base, k->off, char), node->str, strlen(node->str) + 1);
        return 0;
    case KT_PATH:
        return parse_path(c, node, key, FIELD(base, k->off, char), k->size);
    case KT_INT:
        return parse_int(c, node, key, k, FIELD(base, k->off, int));
    case KT_U64:
        return parse_u64(c, node, key, FIELD(base, k->off, uint64_t));
    case KT_NUM:
        return keytab_parse_number(c, node, key, k, FIELD(base, k->off, double));
    case KT_BOOL:
        return parse_bool(c, node, key, FIELD(base, k->off, int));
    case KT_ENUM:
        return parse_enum(c, node, key, k, base);
    case KT_DIST: {
        dist_t *d = FIELD(base, k->off, dist_t);
        dist_fini(d);
        return parse_dist(c, node, key, k, d);
    }
    case KT_LIST:
        return parse_list(c, node, key, k, base);
    case KT_CUSTOM:
        return k->parse(c, node, key, k, base);
    case KT_END: case KT_SECTION: case KT_SKIP:
        break;
    }
    return 0;
}

int keytab_resolve(keytab_ctx_t *c, const keytab_key_t *tab,
                   const keytab_layer_t *layers, int nl, void *base)
{
    if (nl > MAX_LAYERS) return err_set(c->err, ERR_RUNTIME, "too many layers");
    const ynode_t *mark = NULL;
    const char *last_prefix = nl ? layers[nl - 1].prefix : "";
    for (int l = 0; l < nl; l++) {
        const ynode_t *m = layers[l].map;
        if (!m || ynode_is_null(m)) continue;
        if (m->kind != YNODE_MAP)
            return keytab_err(c, m, layers[l].prefix, "expected a mapping, got %s",
                              ynode_kind_name(m));
        if (keytab_check_keys(c, tab, m, layers[l].prefix) != 0) return -1;
        mark = m;
    }
    for (const keytab_key_t *k = tab; k->name; k++) {
        char key[KEYTAB_KEY_MAX];
        if (k->type == KT_SKIP) continue;
        if (k->type == KT_SECTION) {
            keytab_layer_t sub[MAX_LAYERS];
            char prefixes[MAX_LAYERS][KEYTAB_KEY_MAX];
            for (int l = 0; l < nl; l++) {
                keytab_join(prefixes[l], layers[l].prefix, k->name);
                sub[l].map = ynode_get(layers[l].map, k->name);
                sub[l].prefix = prefixes[l];
            }
            if (keytab_resolve(c, k->sub, sub, nl, FIELD(base, k->off, char)) != 0)
                return -1;
            continue;
        }
        const ynode_t *v = NULL;
        int l;
        for (l = nl - 1; l >= 0; l--) {
            v = ynode_get(layers[l].map, k->name);
            if (v) break;
        }
        /* `seed:` with nothing after it is a value left out by mistake more
         * often than a request for the default: taking the default would
         * drop what the user meant without a word. */
        if (v && ynode_is_null(v)) {
            keytab_join(key, layers[l].prefix, k->name);
            return keytab_err(c, v, key, "no value (give one, or leave the key "
                              "out for its default)");
        }
        if (v) {
            keytab_join(key, layers[l].prefix, k->name);
            if (parse_value(c, v, key, k, base) != 0) return -1;
            if (k->flags & KF_HAS) *FIELD(base, k->aux, int) = 1;
            continue;
        }
        keytab_join(key, last_prefix, k->name);
        const ynode_t *at = mark ? mark : c->where;
        if (k->def) {
            ynode_t d = {.kind = YNODE_SCALAR, .src = at ? at->src : "default",
                         .line = at ? at->line : 0, .col = at ? at->col : 0,
                         .str = (char *)(uintptr_t)k->def, .plain = 1};
            if (parse_value(c, &d, key, k, base) != 0) return -1;
        } else if (k->flags & KF_REQUIRED) {
            return keytab_err(c, at, key, "required key is missing");
        }
    }
    return 0;
}

/* --- writing ---------------------------------------------------------- */

static int plain_safe(const char *s)
{
    static const char *const reserved[] = {"null", "Null", "NULL", "~", "true",
                                           "false", "True", "False", "yes", "no",
                                           "on", "off"};
    if (!*s || *s == '-' || *s == '.') return 0;
    for (size_t i = 0; i < sizeof reserved / sizeof *reserved; i++)
        if (!strcmp(s, reserved[i])) return 0;
    for (const char *p = s; *p; p++) {
        char ch = *p;
        int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                 (ch >= '0' && ch <= '9') || ch == '_' || ch == '.' || ch == '/' ||
                 ch == '-' || ch == '+';
        if (!ok) return 0;
    }
    return 1;
}

/* The escape for a character at p (UTF-8) that a YAML reader would not give
 * back as written, or NULL: the line breaks NEL, LS and PS (U+0085, U+2028,
 * U+2029), which it folds into a space, and the other C1 controls and
 * U+FFFE, U+FFFF, which it refuses. *len = the character's length in bytes;
 * buf (8 bytes) holds the escape when it is computed. */
static const char *unicode_escape(const unsigned char *p, char *buf, int *len)
{
    *len = p[0] == 0xc2 ? 2 : 3;
    if (p[0] == 0xc2 && p[1] == 0x85) return "\\N";
    if (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) {
        snprintf(buf, 8, "\\x%02x", p[1]);
        return buf;
    }
    if (p[0] == 0xe2 && p[1] == 0x80 && p[2] == 0xa8) return "\\L";
    if (p[0] == 0xe2 && p[1] == 0x80 && p[2] == 0xa9) return "\\P";
    if (p[0] == 0xef && p[1] == 0xbf && (p[2] == 0xbe || p[2] == 0xbf))
        return p[2] == 0xbe ? "\\uFFFE" : "\\uFFFF";
    return NULL;
}

int keytab_write_quoted(FILE *f, const char *s)
{
    if (fputc('"', f) == EOF) return -1;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        int rc, len;
        char buf[8];
        const char *esc = unicode_escape(p, buf, &len);
        if (esc) {
            rc = fputs(esc, f);
            p += len - 1;
        } else if (*p == '"' || *p == '\\') rc = fprintf(f, "\\%c", *p);
        else if (*p == '\n') rc = fputs("\\n", f);
        else if (*p == '\t') rc = fputs("\\t", f);
        else if (*p < 0x20 || *p == 0x7f) rc = fprintf(f, "\\x%02x", *p);
        else rc = fputc(*p, f);
        if (rc < 0) return -1;
    }
    return fputc('"', f) == EOF ? -1 : 0;
}

int keytab_write_string(FILE *f, const char *s)
{
    if (plain_safe(s)) return fputs(s, f) < 0 ? -1 : 0;
    return keytab_write_quoted(f, s);
}

int keytab_write_path(FILE *f, const char *path)
{
    char abs[4096];
    if (!path[0]) return keytab_write_string(f, path);
    /* Not the relative path instead: written back, it would be looked up
     * elsewhere (docs/formats.md "Sidecars and the files they read"). */
    if (datapath_absolute(path, abs, sizeof abs) != 0) return -1;
    return keytab_write_string(f, abs);
}

static int write_quantity(FILE *f, double v, enum unit_kind unit)
{
    char buf[96];
    if (units_format(v, unit, buf, sizeof buf) < 0) return -1;
    return fputs(buf, f) < 0 ? -1 : 0;
}

/* A dist_t as YAML flow text (constant: the value with unit). */
static int keytab_write_dist(FILE *f, const void *dist, enum unit_kind unit,
                             int none_ok)
{
    const dist_t *d = dist;
    if (d->kind == DIST_CONST) {
        if (none_ok && d->a == 0) return fputs("none", f) < 0 ? -1 : 0;
        return write_quantity(f, d->a, unit);
    }
    int i = dist_index(d->kind);
    if (i < 0) return -1;
    if (fprintf(f, "{dist: %s", DIST_NAMES[i]) < 0) return -1;
    if (d->kind == DIST_EMPIRICAL) {
        if (fputs(", values: [", f) < 0) return -1;
        for (size_t j = 0; j < d->n; j++) {
            if (j && fputs(", ", f) < 0) return -1;
            if (write_quantity(f, d->values[j], unit) != 0) return -1;
        }
        return fputs("]}", f) < 0 ? -1 : 0;
    }
    const double vals[2] = {d->a, d->b};
    for (int j = 0; j < 2 && DIST_PARAMS[i][j]; j++) {
        if (fprintf(f, ", %s: ", DIST_PARAMS[i][j]) < 0) return -1;
        enum unit_kind u = strcmp(DIST_PARAMS[i][j], "shape") ? unit : UNIT_NUMBER;
        if (write_quantity(f, vals[j], u) != 0) return -1;
    }
    return fputc('}', f) == EOF ? -1 : 0;
}

static int is_empty(const keytab_key_t *k, const void *base)
{
    switch (k->type) {
    case KT_STRING: case KT_PATH: return *CFIELD(base, k->off, char) == 0;
    case KT_INT: case KT_BOOL: return *CFIELD(base, k->off, int) == 0;   /* bool: false */
    case KT_ENUM:   /* its first name (an index; a stored name is never empty) */
        return !(k->flags & KF_ENUMSTR) && *CFIELD(base, k->off, int) == 0;
    case KT_NUM: return *CFIELD(base, k->off, double) == 0;
    case KT_LIST: return *CFIELD(base, k->aux, int) == 0;
    case KT_CUSTOM: return *CFIELD(base, k->aux, char) == 0;
    default: return 0;
    }
}

static int write_value(FILE *f, const keytab_key_t *k, const void *base,
                       int indent)
{
    switch (k->type) {
    case KT_STRING:
        if (fputc(' ', f) == EOF) return -1;
        if (keytab_write_string(f, CFIELD(base, k->off, char)) != 0) return -1;
        break;
    case KT_PATH:
        if (fputc(' ', f) == EOF) return -1;
        if (keytab_write_path(f, CFIELD(base, k->off, char)) != 0) return -1;
        break;
    case KT_INT:
        if (fprintf(f, " %d", *CFIELD(base, k->off, int)) < 0) return -1;
        break;
    case KT_U64:
        if (fprintf(f, " %" PRIu64, *CFIELD(base, k->off, uint64_t)) < 0) return -1;
        break;
    case KT_NUM:
        if (fputc(' ', f) == EOF) return -1;
        if (write_quantity(f, *CFIELD(base, k->off, double), k->unit) != 0) return -1;
        break;
    case KT_BOOL:
        if (fputs(*CFIELD(base, k->off, int) ? " true" : " false", f) < 0) return -1;
        break;
    case KT_ENUM: {
        const char *const *names = k->sub;
        const char *s = (k->flags & KF_ENUMSTR) ? CFIELD(base, k->off, char)
                                                : names[*CFIELD(base, k->off, int)];
        if (fprintf(f, " %s", s) < 0) return -1;
        break;
    }
    case KT_DIST:
        if (fputc(' ', f) == EOF) return -1;
        if (keytab_write_dist(f, CFIELD(base, k->off, dist_t), k->unit,
                              (k->flags & KF_NONE) != 0) != 0)
            return -1;
        break;
    case KT_LIST: {
        const double *v = *CFIELD(base, k->off, double *);
        int n = *CFIELD(base, k->aux, int);
        if (fputs(" [", f) < 0) return -1;
        for (int i = 0; i < n; i++) {
            if (i && fputs(", ", f) < 0) return -1;
            if (write_quantity(f, v[i], k->unit) != 0) return -1;
        }
        if (fputc(']', f) == EOF) return -1;
        break;
    }
    case KT_CUSTOM:
        return k->write(f, k, base, indent);
    case KT_END: case KT_SECTION: case KT_SKIP:
        return 0;
    }
    if (k->zero_means && is_empty(k, base) && fprintf(f, "  # %s", k->zero_means) < 0)
        return -1;
    return fputc('\n', f) == EOF ? -1 : 0;
}

/* A section writes nothing of its own when every key in it would be
 * skipped (for KF_SKIPEMPTY on a section). */
static int section_empty(const keytab_key_t *k, const void *base)
{
    const void *sub = CFIELD(base, k->off, char);
    for (const keytab_key_t *s = k->sub; s->name; s++) {
        if (s->type == KT_SKIP || (s->flags & KF_NOWRITE)) continue;
        if ((s->flags & KF_HAS) && !*CFIELD(sub, s->aux, int)) continue;
        if (s->type == KT_SECTION ? section_empty(s, sub)
                                  : (s->flags & KF_SKIPEMPTY) && is_empty(s, sub))
            continue;
        return 0;
    }
    return 1;
}

int keytab_write_key(FILE *f, const keytab_key_t *k, const void *base,
                     int indent)
{
    if (k->type == KT_SKIP) return 0;
    if ((k->flags & KF_HAS) && !*CFIELD(base, k->aux, int)) return 0;
    if ((k->flags & KF_SKIPEMPTY) &&
        (k->type == KT_SECTION ? section_empty(k, base) : is_empty(k, base)))
        return 0;
    if (fprintf(f, "%*s%s:", indent, "", k->name) < 0) return -1;
    if (k->type == KT_SECTION) {
        if (fputc('\n', f) == EOF) return -1;
        return keytab_write(f, k->sub, CFIELD(base, k->off, char), indent + 2);
    }
    return write_value(f, k, base, indent);
}

int keytab_write(FILE *f, const keytab_key_t *tab, const void *base, int indent)
{
    for (const keytab_key_t *k = tab; k->name; k++) {
        if (k->flags & KF_NOWRITE) continue;
        if (keytab_write_key(f, k, base, indent) != 0) return -1;
    }
    return ferror(f) ? -1 : 0;
}
