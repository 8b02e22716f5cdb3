/* llm accept — acceptance measured on a prompt set (kernels/llm/tforce.h),
 * written as acceptance traces the simulator replays, with the simulator's
 * acceptance models fitted to them (kernels/llm/accfit.h).
 *
 * For each draft spec it writes into --out:
 *   NAME-MODE.txt        the trace (positions format, docs/formats.md)
 *   NAME-MODE.fit        the fitted models as `--set` overrides, one per line
 *                        ("MODEL OVERRIDES")
 *   NAME-MODE.dat        per-position acceptance and accepted-length laws,
 *                        measured and per model, for the figure
 * and prints a report (α, acceptance per position, accepted lengths at
 * γ = 2, 4, 8, run lengths, each model's fit). NAME is the draft spec with
 * ':' as '-L' (w4a16:8 → w4a16-L8), MODE greedy or sampled. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "accfit.h"
#include "accstat.h"
#include "cli_args.h"
#include "cli_cmds.h"
#include "prompts.h"
#include "tforce.h"
#include "wallclock.h"

#define CMD "llm accept"

typedef struct acc_args {
    const char *model, *prompts, *drafts, *target, *out, *label;
    int tokens, batch, limit, threads, help;
    double temp, seed;
} acc_args_t;

static void usage(FILE *f)
{
    fprintf(f, "usage: " CMD " --model GGUF --prompts FILE --out DIR [--drafts SPEC,...]\n"
               "       [--target fp16] [--tokens N] [--temp T] [--seed S] [--batch B]\n"
               "       [--limit N] [--threads N] [--label TEXT]\n");
}

static int parse(int argc, char **argv, acc_args_t *a, err_t *err)
{
    *a = (acc_args_t){NULL, NULL, "w4a16", "fp16", NULL, NULL, 256, 16, 0, 0, 0, 0.0, 1.0};
    cli_opt_t o[] = {
        {"model", CLI_STR, &a->model, 0, 0, 0},     {"prompts", CLI_STR, &a->prompts, 0, 0, 0},
        {"drafts", CLI_STR, &a->drafts, 0, 0, 0},   {"target", CLI_STR, &a->target, 0, 0, 0},
        {"out", CLI_STR, &a->out, 0, 0, 0},         {"label", CLI_STR, &a->label, 0, 0, 0},
        {"tokens", CLI_INT, &a->tokens, 2, 1 << 16, 0},
        {"batch", CLI_INT, &a->batch, 1, 4096, 0},  {"limit", CLI_INT, &a->limit, 0, 1 << 20, 0},
        {"threads", CLI_INT, &a->threads, 0, 1024, 0},
        {"temp", CLI_NUM, &a->temp, 0, 100, 0},     {"seed", CLI_NUM, &a->seed, 0, 1e15, 0},
        {"help", CLI_FLAG, &a->help, 0, 0, 0},
    };
    int np;
    if (cli_args_parse(CMD, argc, argv, 2, o, (int)(sizeof o / sizeof o[0]), NULL, 0, &np, err))
        return -1;
    if (a->help) return 0;
    if (!a->model || !a->prompts || !a->out)
        return err_set(err, ERR_INPUT, CMD ": --model, --prompts and --out are required");
    return 0;
}

/* What the measurement shares between drafts. */
typedef struct meas {
    const acc_args_t *a;
    cli_model_t cm;
    prompts_t *ps;
    int np;
    int32_t **ids;
    tforce_text_t *tx;
    llm_run_t *run;
    uint8_t **oc;          /* outcomes per text, for the draft at hand */
    char **label;
} meas_t;

static void meas_free(meas_t *m)
{
    for (int i = 0; i < m->np; i++) {
        if (m->ids) free(m->ids[i]);
        if (m->tx) tforce_text_free(&m->tx[i]);
        if (m->oc) free(m->oc[i]);
        if (m->label) free(m->label[i]);
    }
    free(m->ids);
    free(m->tx);
    free(m->oc);
    free(m->label);
    prompts_free(m->ps);
    llm_run_free(m->run);
    cli_args_close(&m->cm);
}

static int meas_texts(meas_t *m, err_t *err)
{
    const acc_args_t *a = m->a;
    m->np = a->limit && a->limit < m->ps->n ? a->limit : m->ps->n;
    m->ids = calloc((size_t)m->np, sizeof *m->ids);
    m->tx = calloc((size_t)m->np, sizeof *m->tx);
    m->oc = calloc((size_t)m->np, sizeof *m->oc);
    m->label = calloc((size_t)m->np, sizeof *m->label);
    if (!m->ids || !m->tx || !m->oc || !m->label)
        return err_set(err, ERR_RUNTIME, CMD ": out of memory");
    for (int i = 0; i < m->np; i++) {
        if (cli_args_prompt(&m->cm, m->ps->p[i].text, 1, &m->ids[i], &m->tx[i].plen, err))
            return -1;
        m->tx[i].prompt = m->ids[i];
        char buf[128];
        snprintf(buf, sizeof buf, "prompt %d (%s, line %d)", i, m->ps->p[i].category,
                 m->ps->p[i].line);
        if (!(m->label[i] = strdup(buf)) ||
            !(m->oc[i] = malloc((size_t)a->tokens)))
            return err_set(err, ERR_RUNTIME, CMD ": out of memory");
    }
    llm_model_t *t = cli_args_load(&m->cm, a->target, err);
    if (!t) return -1;
    double t0 = wallclock_s();
    int rc = tforce_generate(t, m->run, m->tx, m->np, a->tokens, (float)a->temp,
                             (uint64_t)a->seed, tok_eos(m->cm.tok), a->batch, err);
    long n = 0;
    for (int i = 0; rc == 0 && i < m->np; i++) n += m->tx[i].n;
    if (rc == 0)
        fprintf(stderr, CMD ": target %s wrote %ld tokens for %d prompts in %.1f s\n",
                llm_name(t), n, m->np, wallclock_s() - t0);
    llm_free(t);
    return rc;
}

static void name_of(const char *spec, const char *mode, char *buf, size_t size)
{
    const char *c = strchr(spec, ':');
    if (c) snprintf(buf, size, "%.*s-L%s-%s", (int)(c - spec), spec, c + 1, mode);
    else snprintf(buf, size, "%s-%s", spec, mode);
}

static FILE *open_out(const char *dir, const char *name, const char *ext, char *path, size_t size,
                      err_t *err)
{
    snprintf(path, size, "%s/%s%s", dir, name, ext);
    FILE *f = fopen(path, "w");
    if (!f) err_set(err, ERR_RUNTIME, CMD ": cannot write %s: %s", path, strerror(errno));
    return f;
}

static int close_out(FILE *f, const char *path, err_t *err)
{
    int bad = ferror(f);
    if (fclose(f) != 0 || bad)
        return err_set(err, ERR_RUNTIME, CMD ": error writing %s", path);
    return 0;
}

static void print_stats(const accstat_t *s, const char *name)
{
    printf("== %s: %ld outcomes, alpha %.4f\n", name, s->outcomes,
           s->outcomes ? (double)s->accepted / s->outcomes : 0.0);
    printf("acceptance at draft position 1..8 (blocks of 8):");
    for (int i = 1; i <= 8; i++) printf(" %.3f", accstat_position(s, 8, i));
    printf("\n");
    for (int g = 2; g <= 8; g *= 2) {
        long n = accstat_blocks(s, g);
        printf("accepted length, gamma %d (%ld blocks):", g, n);
        for (int k = 0; k <= g; k++) printf(" %.3f", n ? (double)s->counts[g][k] / n : 0.0);
        printf("\n");
    }
    long n1 = 0, s1 = 0, n0 = 0, s0 = 0;
    for (int l = 1; l <= ACCSTAT_RUNMAX; l++) {
        n1 += s->run1[l];
        s1 += l * s->run1[l];
        n0 += s->run0[l];
        s0 += l * s->run0[l];
    }
    printf("runs: %ld of accepts (mean %.2f), %ld of rejects (mean %.2f; iid would give %.2f)\n",
           n1, n1 ? (double)s1 / n1 : 0.0, n0, n0 ? (double)s0 / n0 : 0.0,
           s->accepted < s->outcomes ? 1.0 / ((double)s->accepted / s->outcomes) : 0.0);
}

/* The fit lines, the figure's data and the fits' report for one draft. */
static int write_fits(const acc_args_t *a, const accstat_t *s, const accfit_t *f,
                      const char *name, err_t *err)
{
    char path[4096], ov[512];
    FILE *ff = open_out(a->out, name, ".fit", path, sizeof path, err);
    if (!ff) return -1;
    for (int m = 0; m < ACCFIT_MODELS; m++)
        if (accfit_overrides(f, m, ov, sizeof ov) == 0) fprintf(ff, "%s %s\n", accfit_name(m), ov);
    if (close_out(ff, path, err)) return -1;
    FILE *fd = open_out(a->out, name, ".dat", path, sizeof path, err);
    if (!fd) return -1;
    fprintf(fd, "# position measured iid positional beta markov (blocks of 8)\n");
    double law[ACCFIT_MODELS][ACCSTAT_GMAX + 1];
    for (int m = 0; m < ACCFIT_MODELS; m++) accfit_law(f, m, 8, law[m]);
    for (int i = 1; i <= 8; i++) {
        fprintf(fd, "%d %.6f", i, accstat_position(s, 8, i));
        for (int m = 0; m < ACCFIT_MODELS; m++) {
            double reach = 0, kept = 0;
            for (int k = i - 1; k <= 8; k++) reach += law[m][k];
            for (int k = i; k <= 8; k++) kept += law[m][k];
            fprintf(fd, " %.6f", reach > 0 ? kept / reach : NAN);
        }
        fprintf(fd, "\n");
    }
    for (int g = 2; g <= 8; g *= 2) {
        fprintf(fd, "\n\n# gamma %d: accepted measured iid positional beta markov\n", g);
        long n = accstat_blocks(s, g);
        for (int m = 0; m < ACCFIT_MODELS; m++) accfit_law(f, m, g, law[m]);
        for (int k = 0; k <= g; k++) {
            fprintf(fd, "%d %.6f", k, n ? (double)s->counts[g][k] / n : 0.0);
            for (int m = 0; m < ACCFIT_MODELS; m++) fprintf(fd, " %.6f", law[m][k]);
            fprintf(fd, "\n");
        }
    }
    return close_out(fd, path, err);
}

static void print_fits(const accstat_t *s, const accfit_t *f)
{
    printf("fits: iid alpha %.4f; positional", f->alpha);
    for (int i = 0; i < ACCFIT_POS; i++) printf(" %.3f", f->pos[i]);
    printf("; beta a %.3f b %.3f; markov good %.3f bad %.3f p_gb %.4f p_bg %.4f (%d EM "
           "iterations)\n", f->a, f->b, f->good, f->bad, f->p_gb, f->p_bg, f->em_iterations);
    printf("%-11s %s\n", "model", "gamma: chi2 (df, p) TV ...");
    for (int m = 0; m < ACCFIT_MODELS; m++) {
        printf("%-11s", accfit_name(m));
        for (int g = 2; g <= 8; g *= 2) {
            double law[ACCSTAT_GMAX + 1], p, tv;
            int df;
            accfit_law(f, m, g, law);
            double chi = accfit_chi2(s, g, law, accfit_params(m), &df, &p, &tv);
            printf("  %d: %.1f (%d, %.3g) %.4f", g, chi, df, p, tv);
        }
        printf("\n");
    }
}

static int one_draft(meas_t *m, const char *spec, err_t *err)
{
    const acc_args_t *a = m->a;
    llm_model_t *d = cli_args_load(&m->cm, spec, err);
    if (!d) return -1;
    double t0 = wallclock_s();
    int rc = 0;
    for (int i = 0; rc == 0 && i < m->np; i++)
        rc = tforce_outcomes(d, m->run, &m->tx[i], i, (float)a->temp, (uint64_t)a->seed,
                             m->oc[i], err);
    accstat_stream_t *st = calloc((size_t)m->np, sizeof *st);
    if (rc == 0 && !st) rc = err_set(err, ERR_RUNTIME, CMD ": out of memory");
    for (int i = 0; rc == 0 && i < m->np; i++)
        st[i] = (accstat_stream_t){m->oc[i], m->tx[i].n > 1 ? m->tx[i].n - 1 : 0, m->label[i]};
    char name[128], path[4096], hdr[4][512];
    name_of(spec, a->temp > 0 ? "sampled" : "greedy", name, sizeof name);
    accstat_t s;
    accfit_t f;
    if (rc == 0) {
        accstat_compute(st, m->np, &s);
        print_stats(&s, name);
        fprintf(stderr, CMD ": draft %s read %d texts in %.1f s\n", llm_name(d), m->np,
                wallclock_s() - t0);
        rc = accfit_fit(st, m->np, &s, &f, err);
    }
    if (rc == 0) {
        print_fits(&s, &f);
        const char *h[4] = {hdr[0], hdr[1], hdr[2], hdr[3]};
        snprintf(hdr[0], sizeof hdr[0], "acceptance of the draft %s against the target %s%s%s",
                 llm_name(d), a->target, a->label ? ", " : "", a->label ? a->label : "");
        snprintf(hdr[1], sizeof hdr[1], "%s, %d prompts of %s, up to %d tokens each, seed %.0f",
                 a->temp > 0 ? "sampling" : "greedy", m->np, a->prompts, a->tokens, a->seed);
        snprintf(hdr[2], sizeof hdr[2], "%ld outcomes, alpha %.4f; measured by teacher forcing "
                 "(kernels/llm/tforce.h)", s.outcomes, (double)s.accepted / (double)s.outcomes);
        snprintf(hdr[3], sizeof hdr[3], "written by build/llm accept (docs/llm.md)");
        FILE *ft = open_out(a->out, name, ".txt", path, sizeof path, err);
        rc = ft ? accstat_write_trace(ft, h, 4, st, m->np) : -1;
        if (ft && (close_out(ft, path, err) || rc)) rc = -1;
        if (rc == 0) rc = write_fits(a, &s, &f, name, err);
    }
    free(st);
    llm_free(d);
    return rc;
}

static int run(const acc_args_t *a, err_t *err)
{
    meas_t m = {a, {NULL, NULL}, NULL, 0, NULL, NULL, NULL, NULL, NULL};
    int rc = cli_args_open(a->model, &m.cm, err);
    if (rc == 0 && !(m.ps = prompts_load(a->prompts, err))) rc = -1;
    if (rc == 0 && !(m.run = llm_run_create(a->threads, err))) rc = -1;
    if (rc == 0) rc = meas_texts(&m, err);
    char buf[512];
    if (rc == 0 && snprintf(buf, sizeof buf, "%s", a->drafts) >= (int)sizeof buf)
        rc = err_set(err, ERR_INPUT, CMD ": --drafts is too long");
    for (char *s = buf, *save = NULL, *tk; rc == 0 && (tk = strtok_r(s, ",", &save)); s = NULL)
        rc = one_draft(&m, tk, err);
    meas_free(&m);
    return rc;
}

int cli_accept(int argc, char **argv)
{
    acc_args_t a;
    err_t err = {0, ""};
    if (parse(argc, argv, &a, &err) != 0) {
        fprintf(stderr, "%s\n", err.msg);
        return 2;
    }
    if (a.help) {
        usage(stdout);
        return 0;
    }
    if (run(&a, &err) != 0) {
        fprintf(stderr, "%s\n", err.msg);
        return err.code ? err.code : 1;
    }
    return fflush(stdout) == 0 ? 0 : 1;
}
