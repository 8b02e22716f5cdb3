/* cli_args — option parsing for build/llm (see cli_args.h). */
#include "cli_args.h"
#include "io/infile.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gemv.h"
#include "prompts.h"

static cli_opt_t *find(cli_opt_t *opts, int n, const char *name, size_t len)
{
    for (int i = 0; i < n; i++)
        if (strlen(opts[i].name) == len && !strncmp(opts[i].name, name, len)) return &opts[i];
    return NULL;
}

/* v is written plainly (cli_args.h): strtod alone would also take leading
 * blanks, '+', hex, "inf" and "nan". whole: digits only. */
static int plain_number(const char *v, int whole)
{
    const char *p = v + (*v == '-');
    size_t digits = strspn(p, "0123456789");
    p += digits;
    if (whole) return digits > 0 && !*p;
    if (*p == '.') {
        size_t frac = strspn(p + 1, "0123456789");
        digits += frac;
        p += 1 + frac;
    }
    if (!digits) return 0;
    if (*p == 'e' || *p == 'E') {
        p += 1 + (p[1] == '-' || p[1] == '+');
        size_t exp = strspn(p, "0123456789");
        if (!exp) return 0;
        p += exp;
    }
    return !*p;
}

static int set_value(const char *cmd, cli_opt_t *o, const char *v, err_t *err)
{
    if (o->kind == CLI_STR) {
        if (!*v) return err_set(err, ERR_INPUT, "%s: --%s needs a value", cmd, o->name);
        *(const char **)o->dest = v;
        return 0;
    }
    int whole = o->kind == CLI_INT || o->kind == CLI_WHOLE;
    char *end = NULL;
    errno = 0;
    double x = plain_number(v, whole) ? strtod(v, &end) : NAN;
    if (!isfinite(x) || *end || errno || x < o->lo || x > o->hi)
        return err_set(err, ERR_INPUT, "%s: --%s '%s': expected %s from %g to %g", cmd, o->name,
                       v, o->kind == CLI_INT ? "an integer" : whole ? "a whole number"
                                                                    : "a number", o->lo, o->hi);
    if (o->kind == CLI_INT) *(int *)o->dest = (int)x;
    else *(double *)o->dest = x;
    return 0;
}

int cli_args_parse(const char *cmd, int argc, char **argv, int first, cli_opt_t *opts, int n,
                   const char **pos, int maxpos, int *npos, err_t *err)
{
    *npos = 0;
    for (int i = first; i < argc; i++) {
        const char *a = argv[i];
        if (strncmp(a, "--", 2) != 0 || !a[2]) {
            if (*npos >= maxpos)
                return err_set(err, ERR_INPUT, "%s: unexpected argument '%s'", cmd, a);
            pos[(*npos)++] = a;
            continue;
        }
        const char *eq = strchr(a + 2, '=');
        size_t len = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
        cli_opt_t *o = find(opts, n, a + 2, len);
        if (!o) return err_set(err, ERR_INPUT, "%s: unknown option '%.*s'", cmd, (int)len + 2, a);
        if (o->seen++) return err_set(err, ERR_INPUT, "%s: --%s given twice", cmd, o->name);
        if (o->kind == CLI_FLAG) {
            if (eq) return err_set(err, ERR_INPUT, "%s: --%s takes no value", cmd, o->name);
            *(int *)o->dest = 1;
            continue;
        }
        const char *v = eq ? eq + 1 : (i + 1 < argc ? argv[++i] : NULL);
        if (!v) return err_set(err, ERR_INPUT, "%s: --%s needs a value", cmd, o->name);
        if (set_value(cmd, o, v, err) != 0) return -1;
    }
    return 0;
}

/* The spec's ':LAYERS' is plain digits (llm_opts_parse, through strtol,
 * would also take " 8" and "+8"). */
static int layers_plain(const char *spec)
{
    const char *c = strchr(spec, ':');
    return !c || (c[1] && strspn(c + 1, "0123456789") == strlen(c + 1));
}

int cli_args_spec(const char *cmd, const char *opt, const char *spec, err_t *err)
{
    llm_opts_t o;
    err_t e = {0, ""};
    if (llm_opts_parse(spec, &o, &e) != 0)
        return err_set(err, ERR_INPUT, "%s: %s: %s", cmd, opt, e.msg);
    if (!layers_plain(spec))
        return err_set(err, ERR_INPUT, "%s: %s: model '%s': ':LAYERS' must be a positive "
                       "integer", cmd, opt, spec);
    return 0;
}

int cli_args_spec_list(const char *cmd, const char *opt, const char *list, err_t *err)
{
    char *copy = strdup(list);
    if (!copy) return err_set(err, ERR_RUNTIME, "%s: out of memory", cmd);
    int rc = 0, n = 0;
    char *item[64];
    /* strtok would skip empty entries; every piece between commas counts. */
    for (char *p = copy, *next; rc == 0 && p; p = next) {
        next = strchr(p, ',');
        if (next) *next++ = '\0';
        if (!*p) rc = err_set(err, ERR_INPUT, "%s: %s '%s': an empty entry", cmd, opt, list);
        else if (n == (int)(sizeof item / sizeof item[0]))
            rc = err_set(err, ERR_INPUT, "%s: %s: more than %d specs", cmd, opt, n);
        else rc = cli_args_spec(cmd, opt, p, err);
        for (int i = 0; rc == 0 && i < n; i++)
            if (!strcmp(item[i], p))
                rc = err_set(err, ERR_INPUT, "%s: %s: '%s' given twice", cmd, opt, p);
        if (rc == 0) item[n++] = p;
    }
    free(copy);
    return rc;
}

FILE *cli_args_fopen_in(const char *path, err_t *err)
{
    struct stat st;
    /* stat first: opening a FIFO without a writer would block. */
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        err_set(err, ERR_INPUT, "%s: not a regular file (%s)", path, infile_kind_name(st.st_mode));
        return NULL;
    }
    FILE *f = fopen(path, "rb");
    if (!f) err_set(err, ERR_INPUT, "%s: cannot open: %s", path, strerror(errno));
    return f;
}

int cli_args_out_dir(const char *cmd, const char *opt, const char *dir, err_t *err)
{
    struct stat st;
    if (stat(dir, &st) != 0)
        return err_set(err, ERR_INPUT, "%s: %s '%s': %s", cmd, opt, dir,
                       errno == ENOENT ? "no such directory" : strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return err_set(err, ERR_INPUT, "%s: %s '%s': not a directory", cmd, opt, dir);
    if (access(dir, W_OK | X_OK) != 0)
        return err_set(err, ERR_INPUT, "%s: %s '%s': cannot create files there: %s", cmd, opt,
                       dir, strerror(errno));
    return 0;
}

int cli_args_open(const char *path, cli_model_t *cm, err_t *err)
{
    memset(cm, 0, sizeof *cm);
    if (!(cm->g = gguf_open(path, err))) return -1;
    if (!(cm->tok = tok_create(cm->g, err))) {
        gguf_close(cm->g);
        cm->g = NULL;
        return -1;
    }
    return 0;
}

void cli_args_close(cli_model_t *cm)
{
    tok_free(cm->tok);
    gguf_close(cm->g);
    memset(cm, 0, sizeof *cm);
}

llm_model_t *cli_args_load(const cli_model_t *cm, const char *spec, err_t *err)
{
    llm_opts_t o;
    if (llm_opts_parse(spec, &o, err) != 0) return NULL;
    llm_model_t *m = llm_load(cm->g, &o, err);
    if (m && llm_check_vocab(m, cm->g, tok_vocab(cm->tok), err)) {
        llm_free(m);
        return NULL;
    }
    return m;
}

/* Prompts longer than this many tokens are refused before any KV cache is
 * sized for them. */
#define PROMPT_MAX_TOKENS (1 << 20)

int cli_args_prompt_at(const cli_model_t *cm, const char *what, const char *text, int chat,
                       int32_t **ids, int *n, err_t *err)
{
    char *wrapped = chat ? prompts_chat(cm->g, text, err) : NULL;
    if (chat && !wrapped) return -1;
    const char *t = chat ? wrapped : text;
    size_t cnt = 0, cap = 0;
    *ids = NULL;
    int rc = tok_encode(cm->tok, t, strlen(t), 1, ids, &cnt, &cap, err);
    free(wrapped);
    if (rc == 0 && cnt == 0) rc = err_set(err, ERR_INPUT, "%s has no tokens", what);
    if (rc == 0 && cnt > PROMPT_MAX_TOKENS)
        rc = err_set(err, ERR_INPUT, "%s has %zu tokens (at most %d)", what, cnt,
                     PROMPT_MAX_TOKENS);
    if (rc != 0) {
        free(*ids);
        *ids = NULL;
        return -1;
    }
    *n = (int)cnt;
    return 0;
}

int cli_args_prompt(const cli_model_t *cm, const char *text, int chat, int32_t **ids, int *n,
                    err_t *err)
{
    return cli_args_prompt_at(cm, "the prompt", text, chat, ids, n, err);
}

int cli_args_fit(const cli_model_t *cm, const llm_model_t *m, const char *what, int plen,
                 int more, err_t *err)
{
    int ctx = llm_config(m)->ctx_train;
    if ((long)plen + more <= ctx) return 0;
    return err_set(err, ERR_INPUT, "%s: %d prompt tokens and %d more exceed the model's context "
                   "of %d (llama.context_length of %s)", what, plen, more, ctx, gguf_path(cm->g));
}

int cli_args_print_text(const cli_model_t *cm, const int32_t *ids, int n, FILE *f)
{
    for (int i = 0; i < n; i++) {
        const char *s;
        size_t len;
        tok_piece(cm->tok, ids[i], 0, &s, &len);
        if (len && fwrite(s, 1, len, f) != len) return -1;
    }
    return ferror(f) ? -1 : 0;
}

int cli_args_main(int argc, char **argv, void *args, const int *help, cli_parse_fn parse,
                  cli_run_fn run, void (*usage)(FILE *f))
{
    err_t err = {0, ""};
    if (parse(argc, argv, args, &err) != 0) {
        fprintf(stderr, "%s\n", err.msg);
        return 2;
    }
    if (*help) {
        usage(stdout);
        return fflush(stdout) == 0 ? 0 : 1;
    }
    if (run(args, &err) != 0) {
        fprintf(stderr, "%s\n", err.msg);
        return err.code ? err.code : 1;
    }
    if (fflush(stdout) != 0) {
        fprintf(stderr, "%s: cannot write the output\n", argv[1]);
        return 1;
    }
    return 0;
}
