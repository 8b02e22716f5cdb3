/* prompts — prompt files and the chat wrapper (see prompts.h). */
#include "prompts.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A whole text file, NUL-terminated (at most 16 MiB: prompts, not data). */
static char *slurp(const char *path, size_t *len, err_t *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        err_set(err, ERR_INPUT, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - 1 - n, f);
        if (n < cap - 1) break;
        if (cap >= (16u << 20)) {
            free(buf);
            fclose(f);
            err_set(err, ERR_INPUT, "%s: larger than 16 MiB", path);
            return NULL;
        }
        char *nb = realloc(buf, cap * 2);
        if (!nb) free(buf);
        buf = nb;
        cap *= 2;
    }
    int bad = ferror(f);
    fclose(f);
    if (!buf || bad) {
        free(buf);
        err_set(err, bad ? ERR_INPUT : ERR_RUNTIME, bad ? "%s: read error" : "%s: out of memory",
                path);
        return NULL;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

void prompts_free(prompts_t *ps)
{
    if (!ps) return;
    for (int i = 0; i < ps->n; i++) {
        free(ps->p[i].category);
        free(ps->p[i].text);
    }
    free(ps->p);
    free(ps);
}

static char *dup_range(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

static int blank(const char *s, const char *e)
{
    for (; s < e; s++)
        if (*s != ' ' && *s != '\t' && *s != '\r') return 0;
    return 1;
}

/* The category of a `###` line [s, e), or -1 with err. */
static int category_of(const char *path, int line, const char *s, const char *e, char **out,
                       err_t *err)
{
    const char *c = s + 3;
    while (c < e && *c == ' ') c++;
    const char *ce = c;
    while (ce < e && ((*ce >= 'a' && *ce <= 'z') || (*ce >= 'A' && *ce <= 'Z') ||
                      (*ce >= '0' && *ce <= '9') || *ce == '-' || *ce == '_'))
        ce++;
    if (ce == c || !blank(ce, e))
        return err_set(err, ERR_INPUT, "%s:%d:%d: a prompt's '###' line needs one category "
                       "word (letters, digits, '-', '_')", path, line, (int)(c - s) + 1);
    return (*out = dup_range(c, (size_t)(ce - c))) ? 0
                                                   : err_set(err, ERR_RUNTIME, "out of memory");
}

/* Closes the prompt whose text is [ts, te): blank lines at its ends go. */
static int prompt_close(const char *path, prompt_t *p, const char *ts, const char *te,
                        err_t *err)
{
    while (ts < te) {
        const char *nl = memchr(ts, '\n', (size_t)(te - ts));
        const char *le = nl ? nl : te;
        if (!blank(ts, le)) break;
        ts = nl ? nl + 1 : te;
    }
    while (te > ts && (te[-1] == '\n' || te[-1] == '\r' || te[-1] == ' ' || te[-1] == '\t')) te--;
    if (te == ts)
        return err_set(err, ERR_INPUT, "%s:%d:1: prompt '%s' has no text", path, p->line,
                       p->category);
    return (p->text = dup_range(ts, (size_t)(te - ts))) ? 0
                                                        : err_set(err, ERR_RUNTIME, "out of memory");
}

static int parse(const char *path, const char *buf, size_t len, prompts_t *ps, err_t *err)
{
    const char *s = buf, *end = buf + len, *ts = NULL;
    int line = 1, cap = 0;
    for (; s < end; line++) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        const char *e = nl ? nl : end;
        if (e - s >= 3 && !memcmp(s, "###", 3)) {
            if (ps->n > 0 && prompt_close(path, &ps->p[ps->n - 1], ts, s, err)) return -1;
            if (ps->n == cap) {
                cap = cap ? 2 * cap : 64;
                prompt_t *np = realloc(ps->p, (size_t)cap * sizeof *np);
                if (!np) return err_set(err, ERR_RUNTIME, "out of memory");
                ps->p = np;
            }
            prompt_t *p = &ps->p[ps->n++];
            memset(p, 0, sizeof *p);
            p->line = line;
            if (category_of(path, line, s, e, &p->category, err)) return -1;
            ts = nl ? nl + 1 : end;
        } else if (ps->n == 0 && !blank(s, e) && *s != '#') {
            return err_set(err, ERR_INPUT, "%s:%d:1: text before the first '### CATEGORY' "
                           "line (comments there start with '#')", path, line);
        }
        s = nl ? nl + 1 : end;
    }
    if (ps->n == 0) return err_set(err, ERR_INPUT, "%s: no prompt ('### CATEGORY' lines)", path);
    return prompt_close(path, &ps->p[ps->n - 1], ts, end, err);
}

prompts_t *prompts_load(const char *path, err_t *err)
{
    size_t len;
    char *buf = slurp(path, &len, err);
    if (!buf) return NULL;
    prompts_t *ps = calloc(1, sizeof *ps);
    if (!ps) err_set(err, ERR_RUNTIME, "out of memory");
    else if (memchr(buf, '\0', len)) {
        err_set(err, ERR_INPUT, "%s: holds a NUL byte (not text)", path);
        prompts_free(ps);
        ps = NULL;
    } else if (parse(path, buf, len, ps, err) != 0) {
        prompts_free(ps);
        ps = NULL;
    }
    free(buf);
    return ps;
}

char *prompts_chat(const gguf_t *g, const char *user, err_t *err)
{
    static const char sys_open[] = "<|im_start|>system\n", end_tag[] = "<|im_end|>";
    const char *tpl;
    size_t tlen;
    if (gguf_get_str(g, "tokenizer.chat_template", &tpl, &tlen, err) != 0) return NULL;
    char *t = dup_range(tpl, tlen);
    if (!t) {
        err_set(err, ERR_RUNTIME, "out of memory");
        return NULL;
    }
    const char *so = strstr(t, sys_open);
    const char *se = so ? strstr(so, end_tag) : NULL;
    if (!so || !se) {
        err_set(err, ERR_INPUT, "%s: tokenizer.chat_template is not a ChatML template with a "
                "default system message", gguf_path(g));
        free(t);
        return NULL;
    }
    so += strlen(sys_open);
    const char *fmt = "<|im_start|>system\n%.*s<|im_end|>\n<|im_start|>user\n%s<|im_end|>\n"
                      "<|im_start|>assistant\n";
    int n = snprintf(NULL, 0, fmt, (int)(se - so), so, user);
    char *out = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (out) snprintf(out, (size_t)n + 1, fmt, (int)(se - so), so, user);
    else err_set(err, ERR_RUNTIME, "out of memory");
    free(t);
    return out;
}
