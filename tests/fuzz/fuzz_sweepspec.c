/* fuzz_sweepspec — the sweep: section reader of `specsim sweep` and
 * `specsim check` (sim/config/sweepspec.h).
 *
 * The input is a scenario file. Its sweep: section is read as `specsim
 * sweep` reads it (sweepspec_load of the file). A spec that loads must:
 *   - have as many points as its axes say (their product, or with zip
 *     their common length), and hold what its YAML says (a list's items,
 *     scalars as written; a range's values in from's unit);
 *   - come back the same through sweepspec_write_yaml (zip,
 *     independent_seeds, every axis path and value, the point count), with
 *     sweepspec_write_axes writing the same axes, and read the same through
 *     sweepspec_from_node;
 *   - at every point (a spread sample of MAX_POINT_CHECKS of a larger grid)
 *     give values and indexes that agree with each other, with
 *     sweepspec_override, and with the point number read in mixed radix;
 *   - validate against scenarios/default.yaml (sweepspec_validate_src)
 *     with either an error or one scenario load per axis value (per point
 *     with zip); and `specsim check` of the input itself
 *     (sweepspec_check_src) must read the same axes.
 * Writing back and validating are skipped above MAX_VALUES values and
 * MAX_LOADS loads: each value is a line of YAML and each load a whole
 * scenario load, and the loader's limits allow millions of either. Inputs
 * whose ranges would expand to more than MAX_RANGE_VALUES values are not
 * loaded at all: ten million values (SWEEPSPEC_MAX_VALUES) take seconds
 * under the sanitizers, which libFuzzer would report as a hang, and the
 * unit tests (tests/unit/test_sweepspec.c) check that limit.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "io/infile.h"
#include "config/scenario.h"
#include "config/sweepspec.h"
#include "base/units.h"
#include "io/ynode.h"

enum {
    MAX_POINT_CHECKS = 4096,
    MAX_VALUES = 20000,
    MAX_LOADS = 24,
    MAX_RANGE_VALUES = 200000
};

/* The values range r of an axis expands to, as the loader counts them (an
 * upper bound for integer ranges, which drop repeats); 0 when it is not a
 * range the loader would expand. */
static double range_size(const ynode_t *r)
{
    const ynode_t *count = ynode_get(r, "count"), *from = ynode_get(r, "from"),
                  *to = ynode_get(r, "to"), *step = ynode_get(r, "step");
    if (count && count->kind == YNODE_SCALAR) {
        double c = strtod(count->str, NULL);
        return isfinite(c) ? fabs(c) : 0;
    }
    double f, t, s;
    const char *fu, *tu, *su;
    if (!from || !to || !step || from->kind != YNODE_SCALAR ||
        to->kind != YNODE_SCALAR || step->kind != YNODE_SCALAR ||
        units_split(from->str, &f, &fu) || units_split(to->str, &t, &tu) ||
        units_split(step->str, &s, &su) || units_convert(t, tu, fu, &t) ||
        units_convert(s, su, fu, &s) || s == 0)
        return 0;
    double n = fabs((t - f) / s) + 1;
    return isfinite(n) ? n : 0; /* the loader refuses it unexpanded */
}

/* 1 when the ranges of text's sweep: section expand to more than
 * MAX_RANGE_VALUES values in all. */
static int too_big(const char *text)
{
    ynode_t *root = NULL;
    err_t err;
    if (ynode_parse("in.yaml", NULL, text, strlen(text), 1, 0, &root, &err) != 0)
        return 0;
    const ynode_t *sw = ynode_get(root, "sweep");
    double n = 0;
    for (size_t i = 0; sw && sw->kind == YNODE_MAP && i < sw->n; i++)
        if (sw->pairs[i].val->kind == YNODE_MAP) n += range_size(sw->pairs[i].val);
    ynode_free(root);
    return n > MAX_RANGE_VALUES;
}

/* Values in all and scenario loads validation makes (one per value; with
 * zip, one per point). */
static uint64_t total_values(const sweepspec_t *sp)
{
    uint64_t n = 0;
    for (int a = 0; a < sp->naxes; a++) n += (uint64_t)sp->axes[a].nvalues;
    return n;
}

static uint64_t loads_expected(const sweepspec_t *sp)
{
    return sp->zip ? sp->npoints : total_values(sp);
}

/* The first way a and b differ as sweeps (marks and file aside), or NULL. */
static const char *differs(const sweepspec_t *a, const sweepspec_t *b)
{
    if (a->zip != b->zip) return "zip";
    if (a->independent_seeds != b->independent_seeds) return "independent_seeds";
    if (a->naxes != b->naxes) return "naxes";
    if (a->npoints != b->npoints) return "npoints";
    for (int i = 0; i < a->naxes; i++) {
        const sweep_axis_t *x = &a->axes[i], *y = &b->axes[i];
        if (strcmp(x->path, y->path) != 0) return "an axis path";
        if (x->nvalues != y->nvalues) return "an axis's number of values";
        for (int k = 0; k < x->nvalues; k++)
            if (strcmp(x->values[k], y->values[k]) != 0) return "an axis value";
            else if (x->vflow[k] != y->vflow[k]) return "a value's kind (flow or scalar)";
    }
    return NULL;
}

/* What the header promises of any loaded spec. */
static void check_shape(const sweepspec_t *sp)
{
    if (sp->naxes < 1) fuzz_fail("a loaded sweep has no axes", NULL);
    uint64_t np = sp->zip ? (uint64_t)sp->axes[0].nvalues : 1;
    for (int a = 0; a < sp->naxes; a++) {
        const sweep_axis_t *ax = &sp->axes[a];
        if (ax->nvalues < 1) fuzz_fail("an axis without values", ax->path);
        if (ax->line < 1 || ax->col < 1) fuzz_fail("an axis key without a mark", ax->path);
        for (int i = 0; i < ax->nvalues; i++)
            if (!ax->values[i] || ax->vline[i] < 1 || ax->vcol[i] < 1)
                fuzz_fail("an axis value without a string or mark", ax->path);
        if (sp->zip && (uint64_t)ax->nvalues != np)
            fuzz_fail("zipped axes of different lengths", ax->path);
        if (!sp->zip) np *= (uint64_t)ax->nvalues;
    }
    if (np != sp->npoints) fuzz_fail("npoints is not what the axes make", NULL);
    if (np > SWEEPSPEC_MAX_POINTS) fuzz_fail("more points than the limit", NULL);
}

/* Point p: indexes in range, values those of the indexes, overrides those
 * values at their marks, and the indexes the digits of p (the last axis
 * fastest), or p itself for every axis with zip. */
static void check_point(const sweepspec_t *sp, uint64_t p, int *idx,
                        const char **val)
{
    sweepspec_point_index(sp, p, idx);
    sweepspec_point(sp, p, val);
    uint64_t back = 0;
    for (int a = 0; a < sp->naxes; a++) {
        const sweep_axis_t *ax = &sp->axes[a];
        if (idx[a] < 0 || idx[a] >= ax->nvalues)
            fuzz_fail("a point index out of range", ax->path);
        if (val[a] != ax->values[idx[a]])
            fuzz_fail("sweepspec_point and sweepspec_point_index disagree", ax->path);
        if (sp->zip && (uint64_t)idx[a] != p) fuzz_fail("a zipped index is not the point", ax->path);
        back = back * (uint64_t)ax->nvalues + (uint64_t)idx[a];
        scenario_override_t o = sweepspec_override(sp, a, idx[a]);
        if (o.path != ax->path || o.value != val[a] || o.src != sp->file ||
            o.line != ax->line || o.col != ax->col || o.vline != ax->vline[idx[a]] ||
            o.vcol != ax->vcol[idx[a]])
            fuzz_fail("sweepspec_override is not the point's value", ax->path);
    }
    if (!sp->zip && back != p) fuzz_fail("the indexes are not the point's digits", NULL);
}

static void check_points(const sweepspec_t *sp)
{
    int *idx = malloc((size_t)sp->naxes * sizeof *idx);
    const char **val = malloc((size_t)sp->naxes * sizeof *val);
    if (!idx || !val) fuzz_fail("out of memory", NULL);
    uint64_t n = sp->npoints;
    if (n <= MAX_POINT_CHECKS) {
        for (uint64_t p = 0; p < n; p++) check_point(sp, p, idx, val);
    } else {
        /* Both ends, and points spread over the rest by an odd stride. */
        for (uint64_t k = 0; k < MAX_POINT_CHECKS / 4; k++) {
            check_point(sp, k, idx, val);
            check_point(sp, n - 1 - k, idx, val);
            check_point(sp, (k * 2654435761u) % n, idx, val);
            check_point(sp, k * (n / (MAX_POINT_CHECKS / 4)), idx, val);
        }
    }
    free(idx);
    free(val);
}

static char *written(const sweepspec_t *sp, int axes_only)
{
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    if (!m) fuzz_fail("out of memory", NULL);
    int rc = axes_only ? sweepspec_write_axes(sp, "  ", m) : sweepspec_write_yaml(sp, m);
    if (fclose(m) != 0 || rc != 0) fuzz_fail("cannot write a sweep spec", NULL);
    return text;
}

static void round_trip(const sweepspec_t *sp)
{
    char *text = written(sp, 0);
    sweepspec_t back;
    err_t err = {0};
    if (sweepspec_load_string("back.yaml", text, &back, &err) != 0) {
        fprintf(stderr, "written:\n%s\n", text);
        fuzz_fail("a sweep written by sweepspec_write_yaml does not load", err.msg);
    }
    const char *d = differs(sp, &back);
    if (d) {
        fprintf(stderr, "written:\n%s\n", text);
        fuzz_fail("a sweep written back reads differently in", d);
    }
    /* write_axes is write_yaml without its first three lines. */
    char *axes = written(sp, 1);
    const char *after = text;
    for (int i = 0; i < 3 && after; i++) {
        after = strchr(after, '\n');
        if (after) after++;
    }
    if (!after || strcmp(after, axes) != 0) {
        fprintf(stderr, "write_yaml:\n%s\nwrite_axes:\n%s\n", text, axes);
        fuzz_fail("sweepspec_write_axes differs from sweepspec_write_yaml", NULL);
    }
    free(axes);
    free(text);
    sweepspec_fini(&back);
}

/* 1 when s ends with tail. */
static int ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), t = strlen(tail);
    return n >= t && strcmp(s + n - t, tail) == 0;
}

/* Each axis against its node: a list gives its items in order, a scalar
 * item as its own text and anything else as a flow node; every value of a
 * range ends with from's unit as written. */
static void check_nodes(const sweepspec_t *sp, const ynode_t *sw)
{
    int a = 0;
    for (size_t i = 0; i < sw->n; i++) {
        const ynode_pair_t *p = &sw->pairs[i];
        if (!strcmp(p->key, "zip") || !strcmp(p->key, "independent_seeds")) continue;
        if (a >= sp->naxes) fuzz_fail("more axis keys than axes", p->key);
        const sweep_axis_t *ax = &sp->axes[a++];
        if (strcmp(ax->path, p->key) != 0) fuzz_fail("an axis out of order", p->key);
        const ynode_t *v = p->val;
        if (v->kind == YNODE_SEQ) {
            if ((size_t)ax->nvalues != v->n) fuzz_fail("a list axis lost items", p->key);
            for (size_t k = 0; k < v->n; k++) {
                int scalar = v->items[k]->kind == YNODE_SCALAR;
                if (ax->vflow[k] == scalar ||
                    (scalar && strcmp(ax->values[k], v->items[k]->str) != 0))
                    fuzz_fail("a list item is not its value", ax->values[k]);
            }
        } else {
            const ynode_t *from = ynode_get(v, "from");
            double x;
            const char *unit;
            if (!from || from->kind != YNODE_SCALAR || units_split(from->str, &x, &unit))
                fuzz_fail("a range loaded without a from", p->key);
            for (int k = 0; k < ax->nvalues; k++)
                if (ax->vflow[k] || !ends_with(ax->values[k], unit))
                    fuzz_fail("a range value lost from's unit", ax->values[k]);
        }
    }
    if (a != sp->naxes) fuzz_fail("fewer axis keys than axes", NULL);
}

/* The optimize: section's reader (sweepspec_from_node) on the same key. */
static void from_node(const sweepspec_t *sp, const char *path, const char *text)
{
    ynode_t *root = NULL;
    err_t err = {0};
    if (ynode_parse(path, NULL, text, strlen(text), 1, 0, &root, &err) != 0)
        fuzz_fail("a file whose sweep loaded does not parse", err.msg);
    sweepspec_t n;
    const ynode_pair_t *key = ynode_find(root, "sweep");
    if (!key || sweepspec_from_node(path, key, &n, &err) != 0)
        fuzz_fail("sweepspec_from_node refuses what sweepspec_load read", err.msg);
    const char *d = differs(sp, &n);
    if (d) fuzz_fail("sweepspec_from_node reads differently in", d);
    check_nodes(sp, key->val);
    sweepspec_fini(&n);
    ynode_free(root);
}

/* An error must say something and be an input or runtime error. */
static void check_err(const err_t *err, const char *what)
{
    if (!err->msg[0] || (err->code != ERR_INPUT && err->code != ERR_RUNTIME))
        fuzz_fail(what, "failed without a message");
}

static void validate(const sweepspec_t *sp, const char *path)
{
    char def[4096];
    snprintf(def, sizeof def, "%s/scenarios/default.yaml", SPECSIM_ROOT);
    scenario_src_t *src;
    err_t err = {0};
    if (scenario_src_open(def, &src, &err) != 0)
        fuzz_fail("cannot read scenarios/default.yaml", err.msg);
    int loads = sweepspec_validate_src(sp, src, NULL, 0, &err);
    if (loads < 0) check_err(&err, "sweepspec_validate_src");
    else if ((uint64_t)loads != loads_expected(sp))
        fuzz_fail("sweepspec_validate_src made another number of loads", NULL);
    scenario_src_free(src);

    /* specsim check of the input itself. */
    if (scenario_src_open(path, &src, &err) != 0) return;
    sweepspec_t chk;
    memset(&err, 0, sizeof err);
    if (sweepspec_check_src(src, NULL, 0, &chk, &err) != 0) check_err(&err, "sweepspec_check_src");
    const char *d = chk.naxes ? differs(sp, &chk) : NULL;
    if (d) fuzz_fail("sweepspec_check_src reads differently in", d);
    sweepspec_fini(&chk);
    scenario_src_free(src);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_reset();
    char path[4096];
    fuzz_write_file("sweep.yaml", data, size, path, sizeof path);
    sweepspec_t sp;
    err_t err = {0};
    char *in;
    size_t in_len;
    if (infile_read(path, INFILE_YAML_MAX, &in, &in_len, &err) == 0) {
        int skip = too_big(in);
        free(in);
        if (skip) return 0;
    }
    if (sweepspec_load(path, &sp, &err) != 0) {
        check_err(&err, "sweepspec_load");
        sweepspec_fini(&sp);
        return 0;
    }
    check_shape(&sp);
    check_points(&sp);
    if (total_values(&sp) <= MAX_VALUES) {
        round_trip(&sp);
        /* The text as the loader had it (a byte-order mark dropped). */
        char *text;
        size_t len;
        if (infile_read(path, INFILE_YAML_MAX, &text, &len, &err) != 0)
            fuzz_fail("cannot read back a file that loaded", err.msg);
        from_node(&sp, path, text);
        free(text);
    }
    if (loads_expected(&sp) <= MAX_LOADS) validate(&sp, path);
    sweepspec_fini(&sp);
    return 0;
}
