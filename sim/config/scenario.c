/* scenario — YAML scenario files into resolved structs (see scenario.h).
 *
 * Pipeline: text -> ynode tree (parsed once per source, here) -> `--set`
 * overrides edit a copy of the tree (scenario_set.c) -> the key tables
 * (scenario_keys.c) resolve it section by section into scenario_t
 * (scenario_resolve.c) -> the checks of the whole scenario and its build
 * (scenario_check.c, sim/config/build.h), the tree still at hand for their
 * messages. scenario_write.c writes a scenario back as YAML. This file holds
 * the sources, the loads and the scenario's end.
 */
#include "config/scenario_int.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base/sha256.h"
#include "config/build.h"
#include "io/infile.h"

/* The directory relative data files are looked up in first: the
 * scenario's ("." for a file in the working directory). */
static void dir_of(const char *path, char *out, size_t outsz)
{
    const char *slash = strrchr(path, '/');
    size_t n = slash ? (size_t)(slash - path) : 0;
    if (slash && n == 0) n = 1; /* "/x.yaml" -> "/" */
    if (n >= outsz) n = 0;
    memcpy(out, path, n);
    out[n] = 0;
    if (n == 0) snprintf(out, outsz, ".");
}

/* A scenario's text parsed once: each load resolves a copy of the tree with
 * its overrides, and reads the files it names through one set, so every
 * load of a command sees the same inputs (a sweep's points, its
 * validation). */
struct scenario_src {
    char *name;          /* in messages: the path, "<stdin>" or the name */
    char *path;          /* as given (scenario_t.file), NULL for a string */
    char dir[SCEN_PATH_MAX]; /* "" for a string: the specsim root only */
    char *text;          /* the whole text */
    size_t len;
    ynode_t *root;       /* the tree without its sweep: and optimize:
                            sections (their own readers parse them), NULL =
                            every default */
    infiles_t *files;    /* owned */
    atomic_size_t cloned;/* nodes copied by loads so far */
    /* The text's "# read PATH sha256 HEX" lines (a sidecar's, or `check`
     * output's): what the files held when it was written. */
    struct src_read {
        char *path;
        uint8_t sha[SHA256_BYTES];
        int line, col;       /* where PATH starts */
        atomic_int warned;   /* a load found other bytes and said so */
    } *recorded;
    size_t nrecorded;
};

/* The 1-based column where s starts in the line p[0..len), 1 if nowhere. */
static int column_of(const char *p, size_t len, const char *s)
{
    size_t n = strlen(s);
    for (size_t i = 0; n <= len && i <= len - n; i++)
        if (memcmp(p + i, s, n) == 0) return (int)i + 1;
    return 1;
}

/* Collects the text's "# read" lines (scenario_src_t.recorded). Lines that
 * are not one are ignored: they are comments. 0, or -1 out of memory. */
static int src_recorded(scenario_src_t *sc)
{
    const char *p = sc->text, *end = sc->text + sc->len;
    for (int line = 1; p < end; line++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
        char path[SCEN_PATH_MAX];
        uint8_t sha[SHA256_BYTES];
        if (len && p[len - 1] == '\r') len--;
        if (infiles_reads_parse(p, len, path, sizeof path, sha) == 0) {
            struct src_read *r = realloc(sc->recorded, (sc->nrecorded + 1) * sizeof *r);
            if (!r) return -1;
            sc->recorded = r;
            r += sc->nrecorded;
            if (!(r->path = strdup(path))) return -1;
            sc->nrecorded++;
            memcpy(r->sha, sha, sizeof sha);
            r->line = line;
            r->col = column_of(p, len, path);
            atomic_init(&r->warned, 0);
        }
        p = nl ? nl + 1 : end;
    }
    return 0;
}

/* After a load: a file the text recorded that this command read again at
 * the same path with other bytes is not the experiment the sidecar
 * describes. Said once per file (a sweep loads many times, on many
 * threads); a file not read again is not compared (cards are written
 * inline, so a rerun does not read them). */
static void src_check_recorded(const scenario_src_t *sc)
{
    for (size_t i = 0; i < sc->nrecorded; i++) {
        struct src_read *r = &sc->recorded[i];
        uint8_t now[SHA256_BYTES];
        if (atomic_load(&r->warned) || !infiles_find_abs(sc->files, r->path, now) ||
            memcmp(now, r->sha, sizeof now) == 0 || atomic_exchange(&r->warned, 1))
            continue;
        char was[SHA256_HEX], is[SHA256_HEX];
        sha256_hex(r->sha, was);
        sha256_hex(now, is);
        err_warn("%s:%d:%d: %s: the file holds other bytes than when this was written "
                 "(sha256 %s then, %s now): the rerun is not the same experiment",
                 sc->name, r->line, r->col, r->path, was, is);
    }
}

/* Drops `key` from the top-level mapping: the loader skips it, and a long
 * sweep list would make every load copy it. */
static void drop_section(ynode_t *root, const char *key)
{
    for (size_t i = 0; root && root->kind == YNODE_MAP && i < root->n; i++) {
        if (strcmp(root->pairs[i].key, key) != 0) continue;
        free(root->pairs[i].key);
        ynode_free(root->pairs[i].val);
        memmove(&root->pairs[i], &root->pairs[i + 1],
                (root->n - i - 1) * sizeof *root->pairs);
        root->n--;
        return;
    }
}

/* A file with no document (empty, or comments only) is refused: running
 * every default instead would hide a wrong or truncated file. A string may
 * be empty (callers build the scenario from overrides). */
static int src_parse(scenario_src_t *sc, int is_file, err_t *err)
{
    if (ynode_parse(sc->name, NULL, sc->text, sc->len, 1, 0, &sc->root, err) != 0)
        return -1;
    if (!sc->root || ynode_is_null(sc->root)) {
        ynode_free(sc->root);
        sc->root = NULL;
        if (is_file) return err_set(err, ERR_INPUT, "%s: empty scenario", sc->name);
        return 0;
    }
    if (sc->root->kind != YNODE_MAP)
        return err_set(err, ERR_INPUT, "%s:%d:%d: (top level): a scenario is a "
                       "mapping of sections, got %s", sc->name, sc->root->line,
                       sc->root->col, ynode_kind_name(sc->root));
    drop_section(sc->root, "sweep");
    drop_section(sc->root, "optimize");
    return 0;
}

static int src_new(const char *name, const char *path, const char *text,
                   size_t len, scenario_src_t **out, err_t *err)
{
    scenario_src_t *sc = calloc(1, sizeof *sc);
    *out = sc;
    if (!sc) return err_set(err, ERR_RUNTIME, "out of memory");
    atomic_init(&sc->cloned, 0);
    sc->name = strdup(name);
    sc->path = path ? strdup(path) : NULL;
    sc->files = infiles_create();
    sc->text = malloc(len + 1);
    if (!sc->name || (path && !sc->path) || !sc->files || !sc->text)
        return err_set(err, ERR_RUNTIME, "out of memory");
    memcpy(sc->text, text, len);
    sc->text[len] = 0;
    sc->len = len;
    if (src_recorded(sc) != 0) return err_set(err, ERR_RUNTIME, "out of memory");
    return 0;
}

int scenario_src_text(const char *path, const char *text, size_t len,
                      scenario_src_t **out, err_t *err)
{
    *out = NULL;
    if (strlen(path) >= SCEN_PATH_MAX)
        return err_set(err, ERR_INPUT, "%s: path too long", path);
    int is_stdin = strcmp(path, "-") == 0;
    if (src_new(is_stdin ? "<stdin>" : path, path, text, len, out, err) != 0 ||
        (dir_of(is_stdin ? "" : path, (*out)->dir, sizeof (*out)->dir),
         src_parse(*out, 1, err) != 0)) {
        scenario_src_free(*out);
        *out = NULL;
        return -1;
    }
    return 0;
}

int scenario_src_open(const char *path, scenario_src_t **out, err_t *err)
{
    *out = NULL;
    char *text;
    size_t len;
    if (scenario_read(path, &text, &len, err) != 0) return -1;
    int rc = scenario_src_text(path, text, len, out, err);
    free(text);
    return rc;
}

int scenario_src_string(const char *name, const char *yaml, scenario_src_t **out,
                        err_t *err)
{
    if (src_new(name, NULL, yaml, strlen(yaml), out, err) != 0 ||
        src_parse(*out, 0, err) != 0) {
        scenario_src_free(*out);
        *out = NULL;
        return -1;
    }
    return 0;
}

void scenario_src_free(scenario_src_t *sc)
{
    if (!sc) return;
    free(sc->name);
    free(sc->path);
    free(sc->text);
    ynode_free(sc->root);
    infiles_free(sc->files);
    for (size_t i = 0; i < sc->nrecorded; i++) free(sc->recorded[i].path);
    free(sc->recorded);
    free(sc);
}

const char *scenario_src_body(const scenario_src_t *sc, size_t *len)
{
    if (len) *len = sc->len;
    return sc->text;
}

const char *scenario_src_name(const scenario_src_t *sc)
{
    return sc->name;
}

struct infiles *scenario_src_files(const scenario_src_t *sc)
{
    return sc->files;
}

size_t scenario_src_cloned(const scenario_src_t *sc)
{
    return atomic_load(&((scenario_src_t *)sc)->cloned);
}

int scenario_src_load(const scenario_src_t *sc, const scenario_override_t *ov,
                      int nov, scenario_t *out, err_t *err)
{
    memset(out, 0, sizeof *out);
    ynode_t *root = sc->root ? ynode_clone(sc->root) : ynode_create_map(sc->name, 1, 1);
    if (!root) return err_set(err, ERR_RUNTIME, "out of memory");
    if (sc->root)
        atomic_fetch_add(&((scenario_src_t *)sc)->cloned, ynode_count(sc->root));
    int rc = scenario_set_apply(root, ov, nov, err);
    if (rc == 0) {
        sctx_t x = {{err, sc->dir, root, NULL, sc->files}, root, out};
        rc = scenario_resolve(&x, sc->name);
        if (rc == 0) rc = scenario_check_whole(&x);
        out->given_known = 1;
    }
    ynode_free(root);
    if (rc != 0) {
        scenario_fini(out);
        return -1;
    }
    if (sc->path) {
        snprintf(out->file, sizeof out->file, "%s", sc->path);
        if (!strcmp(sc->path, "-") && !strcmp(out->name, "<stdin>"))
            snprintf(out->name, sizeof out->name, "stdin");
    }
    if (infiles_count(sc->files) > 0 && !(out->reads = infiles_reads_text(sc->files))) {
        scenario_fini(out);
        return err_set(err, ERR_RUNTIME, "out of memory");
    }
    src_check_recorded(sc);
    return 0;
}

int scenario_read(const char *path, char **text, size_t *len, err_t *err)
{
    return infile_read(path, INFILE_YAML_MAX, text, len, err);
}

int scenario_load_text(const char *path, const char *text, size_t len,
                       const scenario_override_t *ov, int nov, scenario_t *out,
                       err_t *err)
{
    memset(out, 0, sizeof *out);
    scenario_src_t *sc;
    if (scenario_src_text(path, text, len, &sc, err) != 0) return -1;
    int rc = scenario_src_load(sc, ov, nov, out, err);
    scenario_src_free(sc);
    return rc;
}

int scenario_load(const char *path, const scenario_override_t *ov, int nov,
                  scenario_t *out, err_t *err)
{
    memset(out, 0, sizeof *out);
    scenario_src_t *sc;
    if (scenario_src_open(path, &sc, err) != 0) return -1;
    int rc = scenario_src_load(sc, ov, nov, out, err);
    scenario_src_free(sc);
    return rc;
}

int scenario_load_string(const char *name, const char *yaml,
                         const scenario_override_t *ov, int nov,
                         scenario_t *out, err_t *err)
{
    memset(out, 0, sizeof *out);
    scenario_src_t *sc;
    if (scenario_src_string(name, yaml, &sc, err) != 0) return -1;
    int rc = scenario_src_load(sc, ov, nov, out, err);
    scenario_src_free(sc);
    return rc;
}

int scenario_rebuild(scenario_t *s, err_t *err)
{
    build_free(s->built);
    s->built = build_create(s, NULL, NULL, err);
    return s->built ? 0 : -1;
}

void scenario_group_fini(tenant_group_t *g)
{
    dist_fini(&g->edge.draft_time);
    dist_fini(&g->edge.prefill_time);
    dist_fini(&g->network.jitter);
    dist_fini(&g->workload.think);
    dist_fini(&g->workload.prompt_tokens);
    dist_fini(&g->workload.output_tokens);
    accept_cfg_fini(&g->acceptance);
}

void scenario_fini(scenario_t *s)
{
    if (!s) return;
    for (int i = 0; s->groups && i < s->ngroups; i++) scenario_group_fini(&s->groups[i]);
    free(s->groups);
    build_free(s->built);
    accept_cfg_fini(&s->acceptance);
    dist_fini(&s->cloud.verify_time);
    dist_fini(&s->cloud.draft_time);
    for (int i = 0; s->cloud.rgroups && i < s->cloud.nrgroups; i++)
        dist_fini(&s->cloud.rgroups[i].verify_time);
    free(s->cloud.rgroups);
    free(s->reads);
    memset(s, 0, sizeof *s);
}
