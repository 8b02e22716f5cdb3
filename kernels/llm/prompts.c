/* prompts — prompt files and the chat wrapper (see prompts.h). */
#include "prompts.h"
#include "io/infile.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Larger prompt files are refused: prompts, not data. */
#define PROMPTS_MAX ((size_t)16 << 20)

/* The whole of an open file, NUL-terminated, at most PROMPTS_MAX bytes: one
 * byte more is read to tell a file of exactly the cap from a larger one. */
static char *read_all(FILE *f, const char *path, size_t *len, err_t *err)
{
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - 1 - n, f);
        if (n < cap - 1 || n > PROMPTS_MAX) break;
        char *nb = realloc(buf, cap * 2);
        if (!nb) free(buf);
        buf = nb;
        cap *= 2;
    }
    if (!buf) {
        err_set(err, ERR_RUNTIME, "%s: out of memory", path);
        return NULL;
    }
    if (ferror(f) || n > PROMPTS_MAX) {
        if (ferror(f)) err_set(err, ERR_INPUT, "%s: read error: %s", path, strerror(errno));
        else err_set(err, ERR_INPUT, "%s: larger than 16 MiB (%zu bytes); prompt files are "
                     "capped there", path, PROMPTS_MAX);
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

/* A whole text file, NUL-terminated. A path that is not a regular file (a
 * directory would fail only at the first read, with a vaguer message) is
 * refused by name; fstat after fopen, since the path may change between. */
static char *slurp(const char *path, size_t *len, err_t *err)
{
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        err_set(err, ERR_INPUT, "%s: not a regular file (%s)", path, infile_kind_name(st.st_mode));
        return NULL;
    }
    FILE *f = fopen(path, "rb");
    if (!f) {
        err_set(err, ERR_INPUT, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    char *buf = NULL;
    if (fstat(fileno(f), &st) != 0)
        err_set(err, ERR_INPUT, "%s: cannot stat: %s", path, strerror(errno));
    else if (!S_ISREG(st.st_mode))
        err_set(err, ERR_INPUT, "%s: not a regular file (%s)", path, infile_kind_name(st.st_mode));
    else if ((uint64_t)st.st_size > PROMPTS_MAX)   /* refused before any of it is read */
        err_set(err, ERR_INPUT, "%s: larger than 16 MiB (%zu bytes); prompt files are capped "
                "there", path, PROMPTS_MAX);
    else
        buf = read_all(f, path, len, err);
    fclose(f);   /* read only: nothing to lose */
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
    *out = dup_range(c, (size_t)(ce - c));
    return *out ? 0 : err_set(err, ERR_RUNTIME, "%s: out of memory", path);
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
    p->text = dup_range(ts, (size_t)(te - ts));
    return p->text ? 0 : err_set(err, ERR_RUNTIME, "%s: out of memory", path);
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
                if (!np) return err_set(err, ERR_RUNTIME, "%s: out of memory", path);
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

/* Bytes in a UTF-8 sequence starting at s[0] (n bytes left), or 0 when
 * none starts there: RFC 3629's well-formed sequences only (no overlong
 * forms, surrogates or code points past U+10FFFF). */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    unsigned char c = s[0], lo = 0x80, hi = 0xBF;
    size_t k;
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) k = 2;
    else if (c >= 0xE0 && c <= 0xEF) k = 3;
    else if (c >= 0xF0 && c <= 0xF4) k = 4;
    else return 0;
    if (c == 0xE0) lo = 0xA0;
    else if (c == 0xED) hi = 0x9F;
    else if (c == 0xF0) lo = 0x90;
    else if (c == 0xF4) hi = 0x8F;
    if (n < k || s[1] < lo || s[1] > hi) return 0;
    for (size_t i = 2; i < k; i++)
        if (s[i] < 0x80 || s[i] > 0xBF) return 0;
    return k;
}

/* The file is UTF-8 text: no NUL byte, no byte outside a well-formed
 * sequence (the tokenizer would take such bytes as they are, where
 * llama.cpp replaces them, so the two would read different prompts).
 * Errors at FILE:LINE:COL, COL in bytes. */
static int check_text(const char *path, const char *buf, size_t len, err_t *err)
{
    const unsigned char *s = (const unsigned char *)buf;
    int line = 1;
    size_t bol = 0;
    for (size_t i = 0; i < len;) {
        size_t k = s[i] ? utf8_len(s + i, len - i) : 0;
        if (k == 0 && !s[i])
            return err_set(err, ERR_INPUT, "%s:%d:%zu: a NUL byte; a prompt file is UTF-8 text",
                           path, line, i - bol + 1);
        if (k == 0)
            return err_set(err, ERR_INPUT, "%s:%d:%zu: byte 0x%02x is not UTF-8; a prompt file "
                           "is UTF-8 text", path, line, i - bol + 1, s[i]);
        if (s[i] == '\n') {
            line++;
            bol = i + 1;
        }
        i += k;
    }
    return 0;
}

prompts_t *prompts_load(const char *path, err_t *err)
{
    size_t len;
    char *buf = slurp(path, &len, err);
    if (!buf) return NULL;
    /* A byte order mark is an encoding's signature, not text. */
    size_t bom = len >= 3 && !memcmp(buf, "\xEF\xBB\xBF", 3) ? 3 : 0;
    prompts_t *ps = calloc(1, sizeof *ps);
    if (!ps) err_set(err, ERR_RUNTIME, "%s: out of memory", path);
    if (ps && (check_text(path, buf, len, err) != 0 ||
               parse(path, buf + bom, len - bom, ps, err) != 0)) {
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
        err_set(err, ERR_RUNTIME, "%s: out of memory", gguf_path(g));
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
    else err_set(err, ERR_RUNTIME, "%s: out of memory", gguf_path(g));
    free(t);
    return out;
}
