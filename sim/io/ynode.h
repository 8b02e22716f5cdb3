/* ynode — a YAML document as a tree of scalars, sequences and mappings that
 * remembers the 1-based line:column of every key and value, so every later
 * error can point at the text the user wrote.
 *
 * The one YAML reader: scenarios, cards, calibration tables and sweep specs
 * all read through it (their files read by sim/io/infile.h), and no other module talks to libyaml, so syntax
 * errors, duplicate keys and positions read the same everywhere.
 *
 * Built with libyaml's event API. Anchors and aliases are supported (an alias
 * is a deep copy of its anchor, bounded by a node budget so "billion laughs"
 * documents fail instead of exhausting memory). Mapping keys must be scalars
 * and unique. Every node carries `src`, the name used in messages (a file
 * path, "--set", ...): it is NOT owned, the caller keeps it alive as long as
 * the tree.
 */
#ifndef SPECSIM_YNODE_H
#define SPECSIM_YNODE_H

#include <stddef.h>

#include "base/err.h"

/* Room for a ynode_where text: a path and the line and column. */
#define YNODE_WHERE_MAX 600

typedef enum ynode_kind { YNODE_SCALAR = 0, YNODE_SEQ, YNODE_MAP } ynode_kind_t;

typedef struct ynode ynode_t;

typedef struct ynode_pair {
    char *key;          /* owned */
    const char *ksrc;   /* where the key was written (not owned) */
    int kline, kcol;    /* 1-based mark of the key */
    ynode_t *val;       /* owned, never NULL */
} ynode_pair_t;

struct ynode {
    ynode_kind_t kind;
    const char *src;     /* name for messages (not owned) */
    int line, col;       /* 1-based mark of the node's first character */
    char *str;           /* scalar text, NUL-terminated, owned */
    int plain;           /* scalar written unquoted (so "", ~, null are null) */
    size_t n, cap;       /* items (seq) or pairs (map) */
    ynode_t **items;     /* seq: owned children */
    ynode_pair_t *pairs; /* map: in document order */
};

/* Parses one YAML document from text[0..len). Files use line_base 1 and
 * col_base 0: marks are the 1-based line and column. With col_base > 0 the
 * text is a `--set` value: every mark is on line line_base, at column
 * col_base + 1 + its character offset (its column inside the whole
 * PATH=VALUE argument when col_base = strlen(PATH) + 1). `key`, when
 * not NULL, is named in syntax-error messages after the location. An empty
 * document gives *out = NULL. On error returns -1 with err set (ERR_INPUT,
 * "SRC:LINE:COL: [KEY: ]syntax error: ..."); on success the caller owns *out
 * (ynode_free). */
int ynode_parse(const char *src, const char *key, const char *text, size_t len,
                int line_base, int col_base, ynode_t **out, err_t *err);

/* Walks the text of a data file (trace, empirical values) in place: returns
 * the next line that is neither blank nor a #-comment, trimmed of blanks,
 * with *line its 1-based number and *col the 1-based column where it starts;
 * NULL at the end. *cursor starts at the text; line ends become NULs. */
char *ynode_next_data_line(char **cursor, int *line, int *col);

void ynode_free(ynode_t *n);

/* New empty nodes (NULL on allocation failure); the caller owns them. */
ynode_t *ynode_create_map(const char *src, int line, int col);
ynode_t *ynode_create_scalar(const char *src, int line, int col, const char *s);
/* Deep copy (NULL on allocation failure); src pointers are shared. */
ynode_t *ynode_clone(const ynode_t *n);

/* Nodes in the tree (n itself included). */
size_t ynode_count(const ynode_t *n);

/* The pair with this key in a mapping, or NULL (also when m is not a map). */
ynode_pair_t *ynode_find(const ynode_t *m, const char *key);
/* The value for key in a mapping, or NULL. */
ynode_t *ynode_get(const ynode_t *m, const char *key);
/* Sets m[key] = val, taking ownership of val (freeing any value it
 * replaces; the key keeps its original mark then). Returns 0, or -1 on
 * allocation failure (val is freed then). */
int ynode_map_put(ynode_t *m, const char *key, const char *ksrc, int kline,
                  int kcol, ynode_t *val);
/* Appends val to a sequence, taking ownership; 0 or -1 (val freed). */
int ynode_seq_append(ynode_t *s, ynode_t *val);

/* Where a message points: "SRC:LINE:COL", or just "SRC" when line <= 0 (a
 * value from a command-line option such as --reps, which has no position).
 * Writes into buf (size n) and returns it. */
const char *ynode_where(char *buf, size_t n, const char *src, int line, int col);

/* A plain scalar "", "~", "null", "Null" or "NULL" (YAML's null). */
int ynode_is_null(const ynode_t *n);
/* "a scalar", "a sequence", "a mapping" — for messages. */
const char *ynode_kind_name(const ynode_t *n);

#endif
