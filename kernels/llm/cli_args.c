/* cli_args — option parsing for build/llm (see cli_args.h). */
#include "cli_args.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gemv.h"
#include "prompts.h"

static cli_opt_t *find(cli_opt_t *opts, int n, const char *name, size_t len)
{
    for (int i = 0; i < n; i++)
        if (strlen(opts[i].name) == len && !strncmp(opts[i].name, name, len)) return &opts[i];
    return NULL;
}

static int set_value(const char *cmd, cli_opt_t *o, const char *v, err_t *err)
{
    if (o->kind == CLI_STR) {
        if (!*v) return err_set(err, ERR_INPUT, "%s: --%s needs a value", cmd, o->name);
        *(const char **)o->dest = v;
        return 0;
    }
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (!*v || *end || errno || !isfinite(x) || x < o->lo || x > o->hi ||
        (o->kind == CLI_INT && x != floor(x)))
        return err_set(err, ERR_INPUT, "%s: --%s '%s': expected %s from %g to %g", cmd, o->name,
                       v, o->kind == CLI_INT ? "an integer" : "a number", o->lo, o->hi);
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
    return llm_load(cm->g, &o, err);
}

int cli_args_prompt(const cli_model_t *cm, const char *text, int chat, int32_t **ids, int *n,
                    err_t *err)
{
    char *wrapped = chat ? prompts_chat(cm->g, text, err) : NULL;
    if (chat && !wrapped) return -1;
    const char *t = chat ? wrapped : text;
    size_t cnt = 0, cap = 0;
    *ids = NULL;
    int rc = tok_encode(cm->tok, t, strlen(t), 1, ids, &cnt, &cap, err);
    free(wrapped);
    if (rc == 0 && cnt == 0) rc = err_set(err, ERR_INPUT, "the prompt has no tokens");
    if (rc == 0 && cnt > (1u << 20)) rc = err_set(err, ERR_INPUT, "the prompt has %zu tokens", cnt);
    if (rc != 0) {
        free(*ids);
        *ids = NULL;
        return -1;
    }
    *n = (int)cnt;
    return 0;
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
