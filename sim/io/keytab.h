/* keytab — resolution of YAML mappings into C structs through key tables.
 *
 * A key table is a static array of keytab_key_t (ended by a {NULL} entry)
 * describing each key of a section: name, type, unit, range, default (as
 * YAML text, parsed by the same code as user input, so defaults and input
 * can never disagree), and where the value goes (a byte offset into the
 * struct being filled). Resolution checks every key the user wrote (unknown
 * key -> error with a "did you mean"), parses and range-checks every value,
 * fills the defaults, and recurses into sub-sections.
 *
 * Layers: a section may be given by several mappings, later ones overriding
 * earlier ones key by key (tenant groups over the tenants-level settings, an
 * inline card over its `base:` file). A value is taken whole from the last
 * layer that gives it; only KT_SECTION keys merge deeper.
 *
 * Errors are ERR_INPUT "SRC:LINE:COL: dotted.key: problem", the location
 * being the offending key or value as written.
 */
#ifndef SPECSIM_KEYTAB_H
#define SPECSIM_KEYTAB_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/err.h"
#include "base/units.h"
#include "io/ynode.h"

#define KEYTAB_KEY_MAX 256   /* longest dotted key in messages */
#define KEYTAB_PATH_MAX 512  /* resolved data-file paths */

enum keytab_type {
    KT_END = 0,
    KT_SECTION,  /* sub-mapping: sub = const keytab_key_t *, off = struct */
    KT_SKIP,     /* accepted and ignored here (handled by the caller) */
    KT_STRING,   /* char[size] */
    KT_PATH,     /* char[size]: a data file, resolved (see keytab_find_file)
                    and stored as the path to open */
    KT_INT,      /* int, integral number */
    KT_U64,      /* uint64_t, decimal digits */
    KT_NUM,      /* double with `unit` (UNIT_NUMBER: plain) */
    KT_BOOL,     /* int 0/1: true | false */
    KT_ENUM,     /* int index into names (sub = const char *const[], NULL-
                    terminated); KF_ENUMSTR stores the name in char[size] */
    KT_DIST,     /* dist_t; unit UNIT_DURATION (time) or UNIT_NUMBER (tokens) */
    KT_LIST,     /* double *, count in the int at aux (owned, malloc) */
    KT_CUSTOM    /* parse/write callbacks */
};

enum {
    KF_MIN_OPEN = 1u << 0, /* value > min (else >= min) */
    KF_MAX_OPEN = 1u << 1, /* value < max (else <= max) */
    KF_INF = 1u << 2,      /* `inf` accepted */
    KF_REQUIRED = 1u << 3, /* missing -> error (no default) */
    KF_HAS = 1u << 4,      /* int at aux set to 1 when the user gave it */
    KF_NONE = 1u << 5,     /* KT_DIST: `none` = constant 0 */
    KF_ENUMSTR = 1u << 6,  /* KT_ENUM stores the name, not the index */
    KF_NOWRITE = 1u << 7,  /* keytab_write skips it (the caller writes it) */
    KF_SKIPEMPTY = 1u << 8,/* keytab_write skips it when empty / zero (a
                              KT_CUSTOM key: when the string at aux, a
                              card's reference, is empty; a KT_SECTION:
                              when it would write none of its keys) */
    KF_BARE = 1u << 9      /* KT_NUM with a unit: a bare number is accepted
                              too, in the unit's base (bytes, per second) */
};

/* Typed fields. A key table entry names its field with one of these
 * instead of `.type = KT_..., .off = offsetof(T, f)`: each sets .type and
 * .off (strings and paths also .size) and fails to compile, with "negative
 * width in bit-field 'field_type_differs_from_key_kind'", when field f of
 * struct T does not have the C type that the key kind reads and writes
 * through .off (keytab.c). tests/cli/layers.sh checks that no table in sim/
 * uses a bare offsetof. */
#define KEYTAB_OFF(T, f, ctype)                                               \
    (offsetof(T, f) + 0 * sizeof(struct {                                     \
         int field_type_differs_from_key_kind                                 \
             : _Generic(((T *)0)->f, ctype: 1, default: -1);                  \
     }))
#define KEYTAB_INT(T, f)  .type = KT_INT, .off = KEYTAB_OFF(T, f, int)
#define KEYTAB_U64(T, f)  .type = KT_U64, .off = KEYTAB_OFF(T, f, uint64_t)
#define KEYTAB_BOOL(T, f) .type = KT_BOOL, .off = KEYTAB_OFF(T, f, int)
#define KEYTAB_NUM(T, f)  .type = KT_NUM, .off = KEYTAB_OFF(T, f, double)
#define KEYTAB_DIST(T, f) .type = KT_DIST, .off = KEYTAB_OFF(T, f, dist_t)
/* An enum stored as an int: ctype is int or the field's enum type, which
 * must have an int's size (keytab.c writes an int). */
#define KEYTAB_ENUM(T, f, ctype)                                              \
    .type = KT_ENUM,                                                          \
    .off = KEYTAB_OFF(T, f, ctype) +                                          \
           0 * sizeof(struct { int enum_is_not_int_sized : sizeof(ctype) == sizeof(int) ? 1 : -1; })
/* A char array, as strings and paths are stored (.size is its size): the
 * field's address must be a pointer to such an array, which a char *
 * field (whose sizeof is a pointer's) is not. */
#define KEYTAB_CHARS(T, f)                                                    \
    (offsetof(T, f) + 0 * sizeof(struct {                                     \
         int field_type_differs_from_key_kind                                 \
             : _Generic(&((T *)0)->f, char(*)[sizeof(((T *)0)->f)]: 1,         \
                        default: -1);                                         \
     }))
/* KF_ENUMSTR: the name in a char array. */
#define KEYTAB_ENUMSTR(T, f)                                                  \
    .type = KT_ENUM, .off = KEYTAB_CHARS(T, f), .size = sizeof(((T *)0)->f)
#define KEYTAB_STRING(T, f)                                                   \
    .type = KT_STRING, .off = KEYTAB_CHARS(T, f), .size = sizeof(((T *)0)->f)
#define KEYTAB_PATH(T, f)                                                     \
    .type = KT_PATH, .off = KEYTAB_CHARS(T, f), .size = sizeof(((T *)0)->f)
/* A list of doubles and its count. */
#define KEYTAB_LIST(T, f, n)                                                  \
    .type = KT_LIST, .off = KEYTAB_OFF(T, f, double *), .aux = KEYTAB_OFF(T, n, int)
/* A sub-table over the field's struct (an array field: its element
 * pointer type). */
#define KEYTAB_SECTION(T, f, ctype) .type = KT_SECTION, .off = KEYTAB_OFF(T, f, ctype)
/* A custom parser's field, of the type its parse and write callbacks use. */
#define KEYTAB_CUSTOM(T, f, ctype) .type = KT_CUSTOM, .off = KEYTAB_OFF(T, f, ctype)

typedef struct keytab_ctx keytab_ctx_t;
typedef struct keytab_key keytab_key_t;

/* Custom parser: node is the value (or a default scalar), key the dotted
 * key, base the struct being filled. Returns 0 or -1 with c->err set. */
typedef int (*keytab_parse_fn)(keytab_ctx_t *c, const ynode_t *node,
                               const char *key, const keytab_key_t *k,
                               void *base);
/* Custom writer: called after "name:" is printed (no space); prints the
 * rest, ending with a newline (a block value: newline, then lines indented
 * by indent + 2). */
typedef int (*keytab_write_fn)(FILE *f, const keytab_key_t *k,
                               const void *base, int indent);

struct keytab_key {
    const char *name;
    enum keytab_type type;
    size_t off;            /* offset of the field in the struct */
    size_t aux;            /* offset of a second field (KF_HAS, KT_LIST) */
    enum unit_kind unit;
    double min, max;       /* range (both inclusive unless KF_*_OPEN) */
    unsigned flags;
    const char *def;       /* default as YAML scalar text; NULL = none */
    const void *sub;       /* section table / enum names */
    size_t size;           /* KT_STRING, KT_PATH, KF_ENUMSTR: buffer size */
    keytab_parse_fn parse; /* KT_CUSTOM */
    keytab_write_fn write; /* KT_CUSTOM */
    const char *zero_means; /* NULL, or what a 0 value stands for: written as
                               a comment after it ("max_tokens: 0  # no
                               limit") so resolved output is not misread */
};

struct keytab_ctx {
    err_t *err;
    const char *dir;       /* directory of the scenario file ("" = none):
                              relative data files are looked up there first */
    const ynode_t *where;  /* mark used when no layer gives one */
    void *user;            /* for custom parsers */
    struct infiles *files; /* the command's files read so far (sim/io/infile.h):
                              data files are read through it; NULL = read
                              each from disk */
};

typedef struct keytab_layer {
    const ynode_t *map;    /* NULL or null scalar = absent */
    const char *prefix;    /* dotted key of this mapping ("" = top level) */
} keytab_layer_t;

/* Resolves the section given by layers[0..nl) into base. */
int keytab_resolve(keytab_ctx_t *c, const keytab_key_t *tab,
                   const keytab_layer_t *layers, int nl, void *base);

/* Checks that every key written in map (a mapping, or absent) is in tab; the
 * error names prefix.key and suggests the nearest known key. */
int keytab_check_keys(keytab_ctx_t *c, const keytab_key_t *tab,
                      const ynode_t *map, const char *prefix);

/* Writes the section's keys as block YAML at the given indent. 0 or -1. */
int keytab_write(FILE *f, const keytab_key_t *tab, const void *base,
                 int indent);

/* Writes one key ("name: value" or "name:" + block), honouring KF_HAS and
 * KF_SKIPEMPTY but not KF_NOWRITE. 0 or -1. */
int keytab_write_key(FILE *f, const keytab_key_t *k, const void *base,
                     int indent);

/* Error at node (or c->where when NULL): "SRC:LINE:COL: key: <fmt>". */
int keytab_err(keytab_ctx_t *c, const ynode_t *node, const char *key,
               const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Joins prefix and name with a dot into out (KEYTAB_KEY_MAX). */
void keytab_join(char *out, const char *prefix, const char *name);

/* tab's key names, "a, b, c", into buf (whole names only). */
void keytab_names(const keytab_key_t *tab, char *buf, size_t bufsz);

/* Parses a scalar value with unit and range of k (KT_NUM semantics). */
int keytab_parse_number(keytab_ctx_t *c, const ynode_t *node, const char *key,
                        const keytab_key_t *k, double *out);

/* Finds node's value among the n names and sets *at to its index: 0, or -1
 * with the messages of a KT_ENUM key (the allowed names, and the nearest
 * one when the value looks like a misspelling). For keys whose names are
 * not a fixed list, such as the registries. (sim/config/scenario_keys.c). */
int keytab_parse_choice(keytab_ctx_t *c, const ynode_t *node, const char *key,
                        const char *const *names, size_t n, size_t *at);

/* Finds a data file: datapath_resolve from c->dir (next to the scenario,
 * then the specsim root). Returns 0 with the path to open in out, or -1 (no
 * err set). */
int keytab_find_file(const keytab_ctx_t *c, const char *ref, char *out,
                     size_t outsz);

/* A data file named by node (a scalar path, found as keytab_find_file
 * finds it): its path in path (n bytes) and its whole text, read through
 * c->files, in *text (malloc'ed, the caller frees) and *len. 0, or -1 with
 * the error at node and key. */
int keytab_read_data_file(keytab_ctx_t *c, const ynode_t *node, const char *key,
                          char *path, size_t n, char **text, size_t *len);

/* YAML text for a string: plain when safe, else double-quoted. */
int keytab_write_string(FILE *f, const char *s);
/* A data file's path as keytab_write_string writes it, made absolute
 * (datapath_absolute): a sidecar or `check` output read from another
 * directory must find the file that was read, not look next to itself or
 * in the specsim root (where one of the same name may lie). -1 when it
 * cannot be named absolutely (a write error for the caller), never the
 * relative path. */
int keytab_write_path(FILE *f, const char *path);
/* s double-quoted, escaped so that a YAML reader gives s back: quotes,
 * backslashes, C0 and C1 control characters, U+FFFE and U+FFFF (which a
 * reader refuses raw) and the Unicode line breaks NEL, LS and PS (which it
 * would fold into a space). 0 or -1. */
int keytab_write_quoted(FILE *f, const char *s);

#endif
