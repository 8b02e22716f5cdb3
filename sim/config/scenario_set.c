/* scenario_set — `--set PATH=VALUE` overrides applied to the node tree
 * before it is resolved (the rules: sim/config/scenario.h). Private to the
 * loader (sim/config/scenario_int.h).
 */
#include "config/scenario_int.h"

#include <stdlib.h>
#include <string.h>

#define SET_SRC "--set"

/* --- overrides ----------------------------------------------------------- */

/* Where an override's text lies, for the marks of the nodes it creates:
 * path column c (1-based inside the path) is at kline:kcol0 + c, value
 * offset i at vline:vcol0 + 1 + i; line 0 = no position. */
typedef struct set_ctx {
    const scenario_override_t *o;
    const char *src;
    int kline, kcol0;
    int vline, vcol0;
    err_t *err;
} set_ctx_t;

/* A `--set` is line n of "--set", its value after "PATH="; an override with
 * its own src carries its own marks. */
static set_ctx_t set_ctx(const scenario_override_t *o, int n, err_t *err)
{
    set_ctx_t sc = {o, SET_SRC, n, 0, n, 0, err};
    if (!o->src) {
        sc.vcol0 = o->path ? (int)strlen(o->path) + 1 : 1;
        return sc;
    }
    sc.src = o->src;
    sc.kline = o->line > 0 ? o->line : 0;
    sc.kcol0 = o->col > 0 ? o->col - 1 : 0;
    sc.vline = o->line > 0 ? o->vline : 0;
    sc.vcol0 = o->vcol > 0 ? o->vcol - 1 : 0;
    return sc;
}

static int set_err(const set_ctx_t *s, int col, const char *path, size_t plen,
                   const char *fmt, const char *a, const char *b)
{
    char msg[600], at[YNODE_WHERE_MAX];
    snprintf(msg, sizeof msg, fmt, a, b);
    ynode_where(at, sizeof at, s->src, s->kline, s->kcol0 + col);
    return err_set(s->err, ERR_INPUT, "%s: %.*s: %s", at, (int)plen, path, msg);
}

int scenario_all_digits(const char *s)
{
    if (!*s) return 0;
    for (; *s; s++)
        if (*s < '0' || *s > '9') return 0;
    return 1;
}

/* Index of the item of seq addressed by seg: a number, or the value of the
 * items' `name:` key. -1 when none (n = append position). */
static long seq_index(const ynode_t *seq, const char *seg)
{
    if (scenario_all_digits(seg)) {
        if (strlen(seg) > 9) return -1;
        long i = atol(seg);
        return i <= (long)seq->n ? i : -1;
    }
    for (size_t i = 0; i < seq->n; i++) {
        const ynode_t *nm = ynode_get(seq->items[i], "name");
        if (nm && nm->kind == YNODE_SCALAR && !strcmp(nm->str, seg)) return (long)i;
    }
    return -1;
}

/* Makes *slot a mapping to descend into: null -> new map, card path ->
 * {base: path}; anything else that is not a mapping is an error. */
static int make_descendable(const set_ctx_t *s, ynode_t **slot, const char *seg,
                            int col, const char *path, size_t plen)
{
    ynode_t *v = *slot;
    if (v->kind == YNODE_MAP) return 0;
    if (ynode_is_null(v)) {
        ynode_t *m = ynode_create_map(s->src, s->kline, s->kcol0 + col);
        if (!m) return err_set(s->err, ERR_RUNTIME, "out of memory");
        ynode_free(v);
        *slot = m;
        return 0;
    }
    if (v->kind == YNODE_SCALAR && scenario_keys_is_card(seg)) {
        ynode_t *m = ynode_create_map(v->src, v->line, v->col);
        if (!m) return err_set(s->err, ERR_RUNTIME, "out of memory");
        *slot = m;
        if (ynode_map_put(m, "base", v->src, v->line, v->col, v) != 0)
            return err_set(s->err, ERR_RUNTIME, "out of memory");
        return 0;
    }
    if (v->kind == YNODE_SEQ) return 0;
    return set_err(s, col, path, plen, "is a value ('%.80s'), not a mapping%s",
                   v->str, "");
}

/* Adds the child an override path creates under cur — at key seg of a
 * mapping, or at the end of a sequence: v itself for the last segment, a new
 * mapping to descend into otherwise. Returns the child, owned by the tree;
 * NULL on allocation failure, with v freed whichever node failed. */
static ynode_t *add_child(ynode_t *cur, const char *seg, const set_ctx_t *s,
                          int col, int last, ynode_t *v)
{
    int kcol = s->kcol0 + col;
    ynode_t *n = last ? v : ynode_create_map(s->src, s->kline, kcol);
    if (!n) {
        ynode_free(v);
        return NULL;
    }
    /* Both insertions free n when they fail; v is then still ours unless it
     * was n. */
    int rc = cur->kind == YNODE_MAP
                 ? ynode_map_put(cur, seg, s->src, s->kline, kcol, n)
                 : ynode_seq_append(cur, n);
    if (rc != 0) {
        if (!last) ynode_free(v);
        return NULL;
    }
    return n;
}

static int apply_override(ynode_t *root, const set_ctx_t *s)
{
    const char *path = s->o->path ? s->o->path : "";
    const char *value = s->o->value ? s->o->value : "";
    size_t plen = strlen(path);
    if (plen == 0 || plen >= KEYTAB_KEY_MAX)
        return set_err(s, 1, "(path)", 6, "%s%s",
                       plen ? "path too long" : "empty path", "");
    /* Read by their own commands from the file, never from the tree: an
     * override of them would be silently ignored. */
    size_t seg0 = strcspn(path, ".");
    if ((seg0 == 5 && !strncmp(path, "sweep", 5)) ||
        (seg0 == 8 && !strncmp(path, "optimize", 8)))
        return set_err(s, 1, path, plen, "the %s: section cannot be overridden "
                       "(edit it in the scenario file)%s", seg0 == 5 ? "sweep"
                       : "optimize", "");
    if (!s->o->src && !*value)
        return set_err(s, 1, path, plen, "no value after '=' (give one; a key "
                       "left out of the scenario takes its default)%s%s", "", "");
    ynode_t *v = NULL;
    if (ynode_parse(s->src, path, value, strlen(value), s->vline, s->vcol0, &v,
                    s->err) != 0)
        return -1;
    if (!v) v = ynode_create_scalar(s->src, s->vline, s->vcol0 + 1, "");
    if (!v) return err_set(s->err, ERR_RUNTIME, "out of memory");

    ynode_t *cur = root;
    size_t pos = 0;
    while (pos <= plen) {
        size_t seglen = strcspn(path + pos, ".");
        int col = (int)pos + 1;
        size_t upto = pos + seglen;
        char seg[KEYTAB_KEY_MAX];
        memcpy(seg, path + pos, seglen);
        seg[seglen] = 0;
        int last = upto == plen;
        if (seglen == 0) {
            ynode_free(v);
            return set_err(s, col, path, plen, "empty key in the path%s%s", "", "");
        }
        ynode_t **slot = NULL;   /* NULL: a new key or item, appended */
        if (cur->kind == YNODE_MAP) {
            ynode_pair_t *p = ynode_find(cur, seg);
            if (p) slot = &p->val;
        } else {
            long i = seq_index(cur, seg);
            if (i < 0) {
                ynode_free(v);
                return set_err(s, col, path, upto,
                               "no list item '%s' (give an index or an item's name)%s",
                               seg, "");
            }
            if ((size_t)i < cur->n) slot = &cur->items[i];
        }
        if (!slot) {
            ynode_t *n = add_child(cur, seg, s, col, last, v);
            if (!n) return err_set(s->err, ERR_RUNTIME, "out of memory");
            if (last) return 0;
            cur = n;
        } else if (last) {
            ynode_free(*slot);
            *slot = v;
            return 0;
        } else {
            if (make_descendable(s, slot, seg, col, path, upto) != 0) {
                ynode_free(v);
                return -1;
            }
            cur = *slot;
        }
        pos = upto + 1;
    }
    ynode_free(v);
    return 0;
}

int scenario_set_apply(ynode_t *root, const scenario_override_t *ov, int nov, err_t *err)
{
    for (int i = 0, nset = 0; i < nov; i++) {
        nset += !ov[i].src;
        set_ctx_t c = set_ctx(&ov[i], nset, err);
        if (apply_override(root, &c) != 0) return -1;
    }
    return 0;
}
