/* calwrite — calibration table emission (see calwrite.h, sim/caltable.h). */
#include "calwrite.h"

#include <string.h>
#include <time.h>
#include <unistd.h>

int calwrite_linear_shapes(const llm_card_t *c, calwrite_shape_t out[CALWRITE_NSHAPES])
{
    int hd = c->hidden / c->heads;
    const calwrite_shape_t s[CALWRITE_NSHAPES] = {
        {"qkv", (c->heads + 2 * c->kv_heads) * hd, c->hidden},
        {"o", c->hidden, c->hidden},
        {"gate_up", c->gated_mlp ? 2 * c->ffn : c->ffn, c->hidden},
        {"down", c->hidden, c->ffn},
        {"lm_head", c->vocab, c->hidden},
    };
    memcpy(out, s, sizeof s);
    return CALWRITE_NSHAPES;
}

/* Shell-safe words pass as they are; others go in single quotes. */
static int shell_plain(const char *s)
{
    if (!*s) return 0;
    for (; *s; s++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%", *s))
            return 0;
    return 1;
}

void calwrite_command(int argc, char **argv, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < argc && len + 1 < n; i++) {
        const char *a = argv[i];
        if (i) buf[len++] = ' ';
        if (shell_plain(a)) {
            len += (size_t)snprintf(buf + len, n - len, "%s", a);
        } else {
            buf[len++] = '\'';
            for (; *a && len + 5 < n; a++) {
                if (*a == '\'') len += (size_t)snprintf(buf + len, n - len, "'\\''");
                else buf[len++] = *a;
            }
            buf[len++] = '\'';
        }
        if (len >= n) len = n - 1;
        buf[len] = '\0';
    }
}

void calwrite_date_utc(char *buf, size_t n)
{
    time_t t = time(NULL);
    struct tm tm;
    if (!gmtime_r(&t, &tm) || !strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm))
        snprintf(buf, n, "unknown");
}

void calwrite_host(char *buf, size_t n)
{
    if (gethostname(buf, n) != 0) snprintf(buf, n, "unknown");
    buf[n - 1] = '\0';
}

/* A YAML double-quoted scalar: only \ and " need escaping; control
 * characters become spaces (they have no business in provenance). */
static void put_quoted(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') fputc('\\', f);
        fputc((unsigned char)*s < 0x20 ? ' ' : *s, f);
    }
    fputc('"', f);
}

/* Names made of [A-Za-z0-9._-] go out plain (as in the format's example),
 * anything else quoted. */
static void put_name(FILE *f, const char *s)
{
    int plain = *s != '\0';
    for (const char *p = s; *p; p++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-", *p))
            plain = 0;
    if (plain) fputs(s, f);
    else put_quoted(f, s);
}

static void put_row(FILE *f, const caltable_row_t *r)
{
    switch (r->op) {
    case CAL_LINEAR:
        fputs("  - {op: linear, name: ", f);
        put_name(f, r->name);
        fputs(", quant: ", f);
        put_name(f, r->quant);
        fprintf(f, ", m: %d, n: %d, k: %d, time_s: %.6e, gbs: %.6g, gflops: %.6g, ceiling_frac: %.6g}\n",
                r->m, r->n, r->k, r->time_s, r->gbs, r->gflops, r->ceiling_frac);
        break;
    case CAL_ATTENTION:
        fprintf(f, "  - {op: attention, q: %d, context: %d, heads: %d, kv_heads: %d, head_dim: %d, "
                   "batch: %d, time_s: %.6e, gbs: %.6g, gflops: %.6g, ceiling_frac: %.6g}\n",
                r->q, r->context, r->heads, r->kv_heads, r->head_dim, r->batch, r->time_s, r->gbs,
                r->gflops, r->ceiling_frac);
        break;
    case CAL_TOKEN:
        fprintf(f, "  - {op: token, m: %d, context: %d, time_s: %.6e}\n", r->m, r->context, r->time_s);
        break;
    }
}

int calwrite_table(FILE *f, const calwrite_prov_t *p, const caltable_t *t)
{
    fputs("format: specsim-calibration/1\nprovenance:\n  command: ", f);
    put_quoted(f, p->command);
    fprintf(f, "\n  date: %s\n  host: ", p->date);
    put_quoted(f, p->host);
    fputs("\n  device: ", f);
    put_quoted(f, p->device);
    fputs("\n  compiler: ", f);
    put_quoted(f, p->compiler);
    fputs("\n  notes: ", f);
    put_quoted(f, p->notes);
    fputs("\ndevice_kind: ", f);
    put_name(f, t->device_kind);
    fputs("\nmodel: ", f);
    put_name(f, t->model);
    fputs("\nquant: ", f);
    put_name(f, t->quant);
    fprintf(f, "\nceilings:\n  read_gbs: %.6g\n", t->read_gbs);
    if (t->copy_gbs > 0) fprintf(f, "  copy_gbs: %.6g\n", t->copy_gbs);
    if (t->fp16_tflops > 0) fprintf(f, "  fp16_tflops: %.6g\n", t->fp16_tflops);
    fputs("ops:\n", f);
    for (int i = 0; i < t->nrows; i++) put_row(f, &t->rows[i]);
    fflush(f);
    return ferror(f) ? -1 : 0;
}
