/* ynode — YAML text into a marked node tree (see ynode.h). */
#include "io/ynode.h"

#include "io/textline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

/* Deeper nesting than this is never a scenario; refusing it keeps the
 * recursive descent's stack bounded on hostile input. */
#define YNODE_MAX_DEPTH 64
/* Alias expansion copies nodes; this caps a document's total. */
#define YNODE_MAX_NODES 1000000

typedef struct anchor {
    char *name;
    const ynode_t *node;
} anchor_t;

typedef struct pctx {
    yaml_parser_t parser;
    const char *src, *key;
    char path[256];      /* dotted path of the node being parsed */
    int line_base, col_base;
    anchor_t *anchors;
    size_t nanchors, capanchors;
    size_t nodes;
    err_t *err;
} pctx_t;

/* With col_base > 0 the text is one command-line argument: every mark is
 * on line line_base, at column col_base + character offset + 1. */
static int mark_line(const pctx_t *p, yaml_mark_t m)
{
    return p->col_base > 0 ? p->line_base : p->line_base + (int)m.line;
}

static int mark_col(const pctx_t *p, yaml_mark_t m)
{
    if (p->col_base > 0) return p->col_base + (int)m.index + 1;
    return (int)m.column + 1;
}

/* Messages name the caller's key (a --set path) or else the dotted path of
 * the innermost node being parsed. */
static int perr(pctx_t *p, yaml_mark_t m, const char *msg)
{
    const char *key = p->key ? p->key : p->path[0] ? p->path : "(top level)";
    char at[YNODE_WHERE_MAX];
    ynode_where(at, sizeof at, p->src, mark_line(p, m), mark_col(p, m));
    return err_set(p->err, ERR_INPUT, "%s: %s: %s", at, key, msg);
}

const char *ynode_where(char *buf, size_t n, const char *src, int line, int col)
{
    if (line > 0) snprintf(buf, n, "%s:%d:%d", src, line, col);
    else snprintf(buf, n, "%s", src);
    return buf;
}

/* Appends ".seg" to the path; returns the old length to restore. */
static size_t path_push(pctx_t *p, const char *seg)
{
    size_t old = strlen(p->path);
    snprintf(p->path + old, sizeof p->path - old, "%s%s", old ? "." : "", seg);
    return old;
}

static int oom(pctx_t *p)
{
    return err_set(p->err, ERR_RUNTIME, "%s: out of memory", p->src);
}

static int next_event(pctx_t *p, yaml_event_t *ev)
{
    if (yaml_parser_parse(&p->parser, ev)) return 0;
    const char *problem = p->parser.problem ? p->parser.problem : "unknown error";
    char msg[512];
    if (p->parser.context)
        snprintf(msg, sizeof msg, "syntax error: %s %s", problem,
                 p->parser.context);
    else
        snprintf(msg, sizeof msg, "syntax error: %s", problem);
    if (p->parser.error == YAML_MEMORY_ERROR) return oom(p);
    return perr(p, p->parser.problem_mark, msg);
}

static ynode_t *node_create(ynode_kind_t kind, const char *src, int line, int col)
{
    ynode_t *n = calloc(1, sizeof *n);
    if (!n) return NULL;
    n->kind = kind;
    n->src = src;
    n->line = line;
    n->col = col;
    return n;
}

ynode_t *ynode_create_map(const char *src, int line, int col)
{
    return node_create(YNODE_MAP, src, line, col);
}

ynode_t *ynode_create_scalar(const char *src, int line, int col, const char *s)
{
    ynode_t *n = node_create(YNODE_SCALAR, src, line, col);
    if (!n) return NULL;
    n->plain = 1;
    n->str = strdup(s);
    if (!n->str) {
        free(n);
        return NULL;
    }
    return n;
}

void ynode_free(ynode_t *n)
{
    if (!n) return;
    free(n->str);
    for (size_t i = 0; n->kind == YNODE_SEQ && i < n->n; i++)
        ynode_free(n->items[i]);
    for (size_t i = 0; n->kind == YNODE_MAP && i < n->n; i++) {
        free(n->pairs[i].key);
        ynode_free(n->pairs[i].val);
    }
    free(n->items);
    free(n->pairs);
    free(n);
}

static int grow(void **arr, size_t *cap, size_t need, size_t elsize)
{
    if (need <= *cap) return 0;
    size_t nc = *cap ? *cap * 2 : 4;
    while (nc < need) nc *= 2;
    void *a = realloc(*arr, nc * elsize);
    if (!a) return -1;
    *arr = a;
    *cap = nc;
    return 0;
}

int ynode_seq_append(ynode_t *s, ynode_t *val)
{
    if (grow((void **)&s->items, &s->cap, s->n + 1, sizeof *s->items) != 0) {
        ynode_free(val);
        return -1;
    }
    s->items[s->n++] = val;
    return 0;
}

ynode_pair_t *ynode_find(const ynode_t *m, const char *key)
{
    if (!m || m->kind != YNODE_MAP) return NULL;
    for (size_t i = 0; i < m->n; i++)
        if (strcmp(m->pairs[i].key, key) == 0) return &m->pairs[i];
    return NULL;
}

ynode_t *ynode_get(const ynode_t *m, const char *key)
{
    ynode_pair_t *p = ynode_find(m, key);
    return p ? p->val : NULL;
}

int ynode_map_put(ynode_t *m, const char *key, const char *ksrc, int kline,
                  int kcol, ynode_t *val)
{
    ynode_pair_t *p = ynode_find(m, key);
    if (p) {
        ynode_free(p->val);
        p->val = val;
        return 0;
    }
    if (grow((void **)&m->pairs, &m->cap, m->n + 1, sizeof *m->pairs) != 0) {
        ynode_free(val);
        return -1;
    }
    char *k = strdup(key);
    if (!k) {
        ynode_free(val);
        return -1;
    }
    m->pairs[m->n++] = (ynode_pair_t){k, ksrc, kline, kcol, val};
    return 0;
}

ynode_t *ynode_clone(const ynode_t *n)
{
    ynode_t *c = node_create(n->kind, n->src, n->line, n->col);
    if (!c) return NULL;
    c->plain = n->plain;
    if (n->str && !(c->str = strdup(n->str))) goto fail;
    for (size_t i = 0; n->kind == YNODE_SEQ && i < n->n; i++) {
        ynode_t *k = ynode_clone(n->items[i]);
        if (!k || ynode_seq_append(c, k) != 0) goto fail;
    }
    for (size_t i = 0; n->kind == YNODE_MAP && i < n->n; i++) {
        const ynode_pair_t *p = &n->pairs[i];
        ynode_t *k = ynode_clone(p->val);
        if (!k || ynode_map_put(c, p->key, p->ksrc, p->kline, p->kcol, k) != 0)
            goto fail;
    }
    return c;
fail:
    ynode_free(c);
    return NULL;
}

size_t ynode_count(const ynode_t *n)
{
    size_t c = 1;
    for (size_t i = 0; n->kind == YNODE_SEQ && i < n->n; i++)
        c += ynode_count(n->items[i]);
    for (size_t i = 0; n->kind == YNODE_MAP && i < n->n; i++)
        c += ynode_count(n->pairs[i].val);
    return c;
}

int ynode_is_null(const ynode_t *n)
{
    if (!n || n->kind != YNODE_SCALAR || !n->plain) return 0;
    const char *s = n->str;
    return !*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") ||
           !strcmp(s, "NULL");
}

const char *ynode_kind_name(const ynode_t *n)
{
    if (!n) return "nothing";
    switch (n->kind) {
    case YNODE_SCALAR: return "a scalar";
    case YNODE_SEQ: return "a sequence";
    case YNODE_MAP: return "a mapping";
    }
    return "?";
}

static int add_anchor(pctx_t *p, const unsigned char *name, const ynode_t *n)
{
    if (!name) return 0;
    if (grow((void **)&p->anchors, &p->capanchors, p->nanchors + 1,
             sizeof *p->anchors) != 0)
        return oom(p);
    char *s = strdup((const char *)name);
    if (!s) return oom(p);
    /* A later anchor of the same name shadows the earlier one (YAML 1.2). */
    p->anchors[p->nanchors++] = (anchor_t){s, n};
    return 0;
}

/* The explicit tag of a node (`!!binary`, `!!python/object`, `!x`), or
 * NULL: no reader gives tags a meaning, so ignoring one would read a value
 * other than the one the user meant. */
static const unsigned char *node_tag(const yaml_event_t *ev)
{
    switch (ev->type) {
    case YAML_SCALAR_EVENT: return ev->data.scalar.tag;
    case YAML_SEQUENCE_START_EVENT: return ev->data.sequence_start.tag;
    case YAML_MAPPING_START_EVENT: return ev->data.mapping_start.tag;
    default: return NULL;
    }
}

static int parse_node(pctx_t *p, yaml_event_t *ev, ynode_t **out, int depth);

static int parse_seq(pctx_t *p, ynode_t *n, int depth)
{
    for (;;) {
        yaml_event_t ev;
        if (next_event(p, &ev) != 0) return -1;
        if (ev.type == YAML_SEQUENCE_END_EVENT) {
            yaml_event_delete(&ev);
            return 0;
        }
        ynode_t *c = NULL;
        char idx[24];
        snprintf(idx, sizeof idx, "%zu", n->n);
        size_t old = path_push(p, idx);
        int rc = parse_node(p, &ev, &c, depth + 1);
        p->path[old] = 0;
        yaml_event_delete(&ev);
        if (rc != 0) return -1;
        if (ynode_seq_append(n, c) != 0) return oom(p);
    }
}

static int parse_map(pctx_t *p, ynode_t *n, int depth)
{
    for (;;) {
        yaml_event_t kev;
        if (next_event(p, &kev) != 0) return -1;
        if (kev.type == YAML_MAPPING_END_EVENT) {
            yaml_event_delete(&kev);
            return 0;
        }
        if (kev.type != YAML_SCALAR_EVENT) {
            int rc = perr(p, kev.start_mark, "mapping keys must be plain scalars");
            yaml_event_delete(&kev);
            return rc;
        }
        if (node_tag(&kev)) {
            int rc = perr(p, kev.start_mark, "YAML tags (such as !!str) are not "
                          "supported: write the key plainly");
            yaml_event_delete(&kev);
            return rc;
        }
        const char *key = (const char *)kev.data.scalar.value;
        int kl = mark_line(p, kev.start_mark), kc = mark_col(p, kev.start_mark);
        size_t old = path_push(p, key);
        if (ynode_find(n, key)) {
            int rc = perr(p, kev.start_mark, "duplicate key");
            yaml_event_delete(&kev);
            return rc;
        }
        yaml_event_t vev;
        if (next_event(p, &vev) != 0) {
            yaml_event_delete(&kev);
            return -1;
        }
        ynode_t *v = NULL;
        int rc = parse_node(p, &vev, &v, depth + 1);
        p->path[old] = 0;
        yaml_event_delete(&vev);
        if (rc == 0 && ynode_map_put(n, key, p->src, kl, kc, v) != 0) rc = oom(p);
        yaml_event_delete(&kev);
        if (rc != 0) return -1;
    }
}

static int parse_alias(pctx_t *p, yaml_event_t *ev, ynode_t **out)
{
    const char *name = (const char *)ev->data.alias.anchor;
    for (size_t i = p->nanchors; i-- > 0;) {
        if (strcmp(p->anchors[i].name, name) != 0) continue;
        size_t cnt = ynode_count(p->anchors[i].node);
        if (p->nodes + cnt > YNODE_MAX_NODES)
            return perr(p, ev->start_mark, "document too large (alias expansion)");
        p->nodes += cnt;
        *out = ynode_clone(p->anchors[i].node);
        if (!*out) return oom(p);
        (*out)->line = mark_line(p, ev->start_mark);
        (*out)->col = mark_col(p, ev->start_mark);
        return 0;
    }
    char msg[300];
    snprintf(msg, sizeof msg, "unknown alias '*%.200s'", name);
    return perr(p, ev->start_mark, msg);
}

static int parse_node(pctx_t *p, yaml_event_t *ev, ynode_t **out, int depth)
{
    *out = NULL;
    if (depth > YNODE_MAX_DEPTH)
        return perr(p, ev->start_mark, "nesting too deep");
    if (++p->nodes > YNODE_MAX_NODES)
        return perr(p, ev->start_mark, "document too large");
    if (ev->type == YAML_ALIAS_EVENT) return parse_alias(p, ev, out);
    if (node_tag(ev))
        return perr(p, ev->start_mark, "YAML tags (such as !!binary) are not "
                    "supported: write the value plainly");
    int line = mark_line(p, ev->start_mark), col = mark_col(p, ev->start_mark);
    const unsigned char *anchor = NULL;
    ynode_t *n = NULL;
    int rc = 0;
    switch (ev->type) {
    case YAML_SCALAR_EVENT:
        n = node_create(YNODE_SCALAR, p->src, line, col);
        if (!n) return oom(p);
        n->str = malloc(ev->data.scalar.length + 1);
        if (!n->str) {
            free(n);
            return oom(p);
        }
        memcpy(n->str, ev->data.scalar.value, ev->data.scalar.length);
        n->str[ev->data.scalar.length] = 0;
        n->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
        anchor = ev->data.scalar.anchor;
        break;
    case YAML_SEQUENCE_START_EVENT:
        n = node_create(YNODE_SEQ, p->src, line, col);
        if (!n) return oom(p);
        rc = parse_seq(p, n, depth);
        anchor = ev->data.sequence_start.anchor;
        break;
    case YAML_MAPPING_START_EVENT:
        n = node_create(YNODE_MAP, p->src, line, col);
        if (!n) return oom(p);
        rc = parse_map(p, n, depth);
        anchor = ev->data.mapping_start.anchor;
        break;
    default:
        return perr(p, ev->start_mark, "unexpected YAML event");
    }
    if (rc == 0) rc = add_anchor(p, anchor, n);
    if (rc != 0) {
        ynode_free(n);
        return -1;
    }
    *out = n;
    return 0;
}

/* Drives the stream: STREAM-START, at most one document, STREAM-END. */
static int parse_stream(pctx_t *p, ynode_t **out)
{
    yaml_event_t ev;
    int docs = 0;
    for (;;) {
        if (next_event(p, &ev) != 0) return -1;
        yaml_event_type_t t = ev.type;
        if (t == YAML_STREAM_END_EVENT) {
            yaml_event_delete(&ev);
            return 0;
        }
        if (t == YAML_DOCUMENT_START_EVENT && ++docs > 1) {
            int rc = perr(p, ev.start_mark, "only one YAML document is allowed");
            yaml_event_delete(&ev);
            return rc;
        }
        if (t == YAML_SCALAR_EVENT || t == YAML_SEQUENCE_START_EVENT ||
            t == YAML_MAPPING_START_EVENT || t == YAML_ALIAS_EVENT) {
            int rc = parse_node(p, &ev, out, 0);
            yaml_event_delete(&ev);
            if (rc != 0) return -1;
            continue;
        }
        yaml_event_delete(&ev);
    }
}

int ynode_parse(const char *src, const char *key, const char *text, size_t len,
                int line_base, int col_base, ynode_t **out, err_t *err)
{
    pctx_t p;
    memset(&p, 0, sizeof p);
    p.src = src;
    p.key = key;
    p.line_base = line_base;
    p.col_base = col_base;
    p.err = err;
    *out = NULL;
    if (!yaml_parser_initialize(&p.parser))
        return err_set(err, ERR_RUNTIME, "%s: cannot initialise YAML parser", src);
    yaml_parser_set_input_string(&p.parser, (const unsigned char *)text, len);
    yaml_parser_set_encoding(&p.parser, YAML_UTF8_ENCODING);
    ynode_t *root = NULL;
    int rc = parse_stream(&p, &root);
    yaml_parser_delete(&p.parser);
    for (size_t i = 0; i < p.nanchors; i++) free(p.anchors[i].name);
    free(p.anchors);
    if (rc != 0) {
        ynode_free(root);
        return -1;
    }
    *out = root;
    return 0;
}

char *ynode_next_data_line(char **cursor, int *line, int *col)
{
    textline_t it = {*cursor, *line};
    char *p;
    while ((p = textline_next(&it, col)) != NULL && (!*p || *p == '#')) {}
    *cursor = it.next;
    *line = it.line;
    return p;
}
