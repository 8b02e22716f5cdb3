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
 * γ = 2, 4, 8, run lengths, each model's fit and goodness of fit). NAME is
 * the draft spec with ':' as '-L' (w4a16:8 → w4a16-L8), MODE greedy or
 * sampled. With `--ranks K` (greedy) also, from one pass of each draft:
 *   NAME-MODE.ranks      the rank of the target's token among the draft's
 *                        at every position (kernels/llm/accrank.h)
 *   NAME-MODE.tree       the tree acceptance profile estimated from it, per
 *                        depth and rank, that a scenario names
 *                        (`acceptance: {model: tree, profile: PATH}`)
 * and the per-depth, per-rank table with counts and standard errors in the
 * report. `--refit TRACE.txt...` measures nothing: it reads traces back
 * (accstat_read_trace) and prints the same report and writes the same .fit
 * and .dat, so a change to the fits costs no measurement. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "accfit.h"
#include "accrank.h"
#include "accstat.h"
#include "cli_args.h"
#include "cli_cmds.h"
#include "prompts.h"
#include "tforce.h"
#include "model/tree.h"
#include "base/wallclock.h"

#define CMD "llm accept"
/* Bytes of --drafts, its NUL included. */
#define DRAFTS_MAX 512
/* Trace files one --refit reads. */
#define ACC_TRACES_MAX 256

typedef struct acc_args {
    const char *model, *prompts, *drafts, *target, *out, *label;
    int tokens, batch, limit, threads, help;
    double temp, seed;
    int no_eos;   /* generate past the end-of-sequence token, as the testbed does */
    int refit;    /* --refit: fit the traces given, measure nothing */
    int quiet;    /* --quiet: no timing lines on stderr */
    int ranks;    /* --ranks K: rank streams and tree profiles (0: none) */
    int tree_width, tree_depth;   /* the tree the profile's blocks are cut for */
    const char *branching;        /* --refit --tree-branching: a tree to replay */
    const char *traces[ACC_TRACES_MAX];
    int ntraces;
} acc_args_t;

static void usage(FILE *f)
{
    fprintf(f, "usage: " CMD " --model GGUF --prompts FILE --out DIR [--drafts SPEC,...]\n"
               "       [--target fp16] [--tokens N] [--temp T] [--seed S] [--batch B]\n"
               "       [--limit N] [--threads N] [--label TEXT] [--no-eos] [--quiet]\n"
               "       [--ranks K [--tree-width W] [--tree-depth D]]\n"
               "       " CMD " --refit [--out DIR] [--tree-width W] [--tree-depth D]\n"
               "             [--tree-branching B1,B2,...] TRACE.txt|NAME.ranks...\n"
               "  --no-eos  each text runs to --tokens past the end-of-sequence token (as\n"
               "            build/testbed run --real-model decodes); else it ends there\n"
               "  --refit   measure nothing: read traces this command wrote (per-position\n"
               "            format, '# request' lines between texts), print the same report\n"
               "            and write NAME.fit and NAME.dat (NAME: the file name without\n"
               "            .txt) beside each trace, or into --out; a NAME.ranks file gives\n"
               "            the tree table and NAME[-wW][-dD].tree for --tree-width W (default\n"
               "            its K) and --tree-depth D (default 8); --tree-branching B1,B2,..\n"
               "            replays the ranks against that tree and prints its measured mean\n"
               "            accepted length beside the profile's closed form\n"
               "  --quiet   no timing lines (target and drafts) on stderr\n"
               "  --ranks K greedy: also the rank of the target's token among the draft's\n"
               "            (capped at K, 1..32) at every position, NAME.ranks, and the\n"
               "            tree acceptance profile per depth and rank, NAME.tree, cut in\n"
               "            blocks of a tree W wide (default K, 1..K) and D deep\n"
               "            (default 8, 1..16)\n");
}

/* --ranks and the tree it is cut for. Greedy only: a sampled tree's
 * verification (multi-draft rejection sampling) is not rank-wise. */
static int rank_args(acc_args_t *a, err_t *err)
{
    if (a->branching)
        return err_set(err, ERR_INPUT, CMD ": --tree-branching goes with --refit of a .ranks file");
    if (!a->ranks) {
        if (a->tree_width || a->tree_depth)
            return err_set(err, ERR_INPUT, CMD ": --tree-width and --tree-depth go with --ranks");
        return 0;
    }
    if (a->temp > 0)
        return err_set(err, ERR_INPUT, CMD ": --ranks measures greedy trees only (--temp 0); "
                       "got --temp %g", a->temp);
    if (!a->tree_width) a->tree_width = a->ranks;
    if (!a->tree_depth) a->tree_depth = 8;
    if (a->tree_width > a->ranks)
        return err_set(err, ERR_INPUT, CMD ": --tree-width %d is wider than --ranks %d (a "
                       "rank past K is not told apart)", a->tree_width, a->ranks);
    return 0;
}

static int parse(int argc, char **argv, void *args, err_t *err)
{
    acc_args_t *a = args;
    *a = (acc_args_t){.drafts = "w4a16", .target = "fp16", .tokens = 256, .batch = 16,
                      .seed = 1.0};
    cli_opt_t o[] = {
        {"model", CLI_STR, &a->model, 0, 0, 0},     {"prompts", CLI_STR, &a->prompts, 0, 0, 0},
        {"drafts", CLI_STR, &a->drafts, 0, 0, 0},   {"target", CLI_STR, &a->target, 0, 0, 0},
        {"out", CLI_STR, &a->out, 0, 0, 0},         {"label", CLI_STR, &a->label, 0, 0, 0},
        {"tokens", CLI_INT, &a->tokens, 2, 1 << 16, 0},
        {"batch", CLI_INT, &a->batch, 1, 4096, 0},  {"limit", CLI_INT, &a->limit, 0, 1 << 20, 0},
        {"threads", CLI_INT, &a->threads, 0, 1024, 0},
        {"temp", CLI_NUM, &a->temp, 0, 100, 0},     {"seed", CLI_WHOLE, &a->seed, 0, 1e15, 0},
        {"help", CLI_FLAG, &a->help, 0, 0, 0},      {"no-eos", CLI_FLAG, &a->no_eos, 0, 0, 0},
        {"refit", CLI_FLAG, &a->refit, 0, 0, 0},    {"quiet", CLI_FLAG, &a->quiet, 0, 0, 0},
        {"ranks", CLI_INT, &a->ranks, 1, ACCRANK_K_MAX, 0},
        {"tree-width", CLI_INT, &a->tree_width, 1, ACCRANK_K_MAX, 0},
        {"tree-depth", CLI_INT, &a->tree_depth, 1, ACCRANK_D_MAX, 0},
        {"tree-branching", CLI_STR, &a->branching, 0, 0, 0},
    };
    const int no = (int)(sizeof o / sizeof o[0]);
    /* Trace files only with --refit: without it an argument that is not an
     * option is refused as before. */
    int refit = 0;
    for (int i = 2; i < argc; i++)
        if (!strcmp(argv[i], "--refit")) refit = 1;
    if (cli_args_parse(CMD, argc, argv, 2, o, no, a->traces, refit ? ACC_TRACES_MAX : 0,
                       &a->ntraces, err))
        return -1;
    if (a->help) return 0;
    if (a->refit) {
        /* What only a measurement reads. */
        for (int i = 0; i < no; i++)
            if (o[i].seen && strcmp(o[i].name, "refit") && strcmp(o[i].name, "out") &&
                strncmp(o[i].name, "tree-", 5))
                return err_set(err, ERR_INPUT, CMD ": --%s does not go with --refit (it fits "
                               "traces already measured)", o[i].name);
        if (a->ntraces < 1)
            return err_set(err, ERR_INPUT, CMD ": --refit needs at least one trace file");
        /* The tree options read rank streams only: with none given they
         * would do nothing. */
        int tree = 0, ranks = 0;
        for (int i = 0; i < no; i++) tree |= o[i].seen && !strncmp(o[i].name, "tree-", 5);
        for (int i = 0; i < a->ntraces; i++) {
            size_t n = strlen(a->traces[i]);
            ranks |= n >= 6 && !strcmp(a->traces[i] + n - 6, ".ranks");
        }
        if (tree && !ranks)
            return err_set(err, ERR_INPUT, CMD ": --tree-width, --tree-depth and "
                           "--tree-branching go with a rank stream (NAME.ranks), and "
                           "no file given is one");
        return 0;
    }
    if (!a->model || !a->prompts || !a->out)
        return err_set(err, ERR_INPUT, CMD ": --model, --prompts and --out are required");
    if (rank_args(a, err) != 0) return -1;
    /* The label goes into a trace's '#' header line: a line break would
     * end it and leave text the trace reader refuses. */
    for (const char *c = a->label; c && *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7F)
            return err_set(err, ERR_INPUT, CMD ": --label holds a control character (byte 0x%02x)",
                           (unsigned char)*c);
    if (strlen(a->drafts) >= DRAFTS_MAX)
        return err_set(err, ERR_INPUT, CMD ": --drafts is longer than %d bytes", DRAFTS_MAX - 1);
    /* Every spec before anything is read: a bad second one would otherwise
     * fail after the first one's files are written. */
    return cli_args_spec(CMD, "--target", a->target, err) ||
           cli_args_spec_list(CMD, "--drafts", a->drafts, err) ? -1 : 0;
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
    uint8_t **rk;          /* ranks per text (--ranks), likewise */
    char **label;
} meas_t;

static void meas_free(meas_t *m)
{
    for (int i = 0; i < m->np; i++) {
        if (m->ids) free(m->ids[i]);
        if (m->tx) tforce_text_free(&m->tx[i]);
        if (m->oc) free(m->oc[i]);
        if (m->rk) free(m->rk[i]);
        if (m->label) free(m->label[i]);
    }
    free(m->ids);
    free(m->tx);
    free(m->oc);
    free(m->rk);
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
    m->rk = calloc((size_t)m->np, sizeof *m->rk);
    m->label = calloc((size_t)m->np, sizeof *m->label);
    if (!m->ids || !m->tx || !m->oc || !m->rk || !m->label)
        return err_set(err, ERR_RUNTIME, CMD ": out of memory");
    llm_model_t *t = cli_args_load(&m->cm, a->target, err);
    if (!t) return -1;
    for (int i = 0; i < m->np; i++) {
        const prompt_t *p = &m->ps->p[i];
        char what[4200];
        snprintf(what, sizeof what, "%s:%d:1: prompt '%s'", a->prompts, p->line, p->category);
        if (cli_args_prompt_at(&m->cm, what, p->text, 1, &m->ids[i], &m->tx[i].plen, err) ||
            cli_args_fit(&m->cm, t, what, m->tx[i].plen, a->tokens, err)) {
            llm_free(t);
            return -1;
        }
        m->tx[i].prompt = m->ids[i];
        char buf[128];
        snprintf(buf, sizeof buf, "prompt %d (%s, line %d)", i, p->category, p->line);
        if (!(m->label[i] = strdup(buf)) || !(m->oc[i] = malloc((size_t)a->tokens)) ||
            (a->ranks && !(m->rk[i] = malloc((size_t)a->tokens)))) {
            llm_free(t);
            return err_set(err, ERR_RUNTIME, CMD ": out of memory");
        }
    }
    double t0 = wallclock_s();
    int rc = tforce_generate(t, m->run, m->tx, m->np, a->tokens, (float)a->temp,
                             (uint64_t)a->seed, a->no_eos ? -1 : tok_eos(m->cm.tok), a->batch,
                             err);
    long n = 0;
    for (int i = 0; rc == 0 && i < m->np; i++) n += m->tx[i].n;
    if (rc == 0 && !a->quiet)
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

/* An output file, written under a temporary name beside its own and
 * renamed into place once complete: a failed or interrupted run leaves no
 * half-written file, and an earlier run's file stays whole until then. */
typedef struct outf {
    FILE *f;
    char path[4096], tmp[4128];
} outf_t;

static int out_open(outf_t *o, const char *dir, const char *name, const char *ext, err_t *err)
{
    o->f = NULL;
    if (snprintf(o->path, sizeof o->path, "%s/%s%s", dir, name, ext) >= (int)sizeof o->path)
        return err_set(err, ERR_INPUT, CMD ": --out '%s': too long a path", dir);
    snprintf(o->tmp, sizeof o->tmp, "%s.tmp.%ld", o->path, (long)getpid());
    if (!(o->f = fopen(o->tmp, "w")))
        return err_set(err, ERR_RUNTIME, CMD ": cannot write %s: %s", o->tmp, strerror(errno));
    return 0;
}

/* ok: everything was written (else err already says why). Renames the
 * file into place, or removes it. */
static int out_close(outf_t *o, int ok, err_t *err)
{
    int bad = ferror(o->f), rc = ok ? 0 : -1;
    if ((fclose(o->f) != 0 || bad) && rc == 0)
        rc = err_set(err, ERR_RUNTIME, CMD ": error writing %s", o->tmp);
    if (rc == 0 && rename(o->tmp, o->path) != 0)
        rc = err_set(err, ERR_RUNTIME, CMD ": cannot rename %s to %s: %s", o->tmp, o->path,
                     strerror(errno));
    if (rc != 0) remove(o->tmp);
    o->f = NULL;
    return rc;
}

/* A probability, or "-" where it is undefined (a position no block
 * reached). */
static void print_p(FILE *f, const char *fmt, double v)
{
    if (isnan(v)) fprintf(f, " -");
    else fprintf(f, fmt, v);
}

/* Runs of one kind (of `total` outcomes of that kind, each in one run):
 * how many, their mean length, and their share by length 1..8 and 9+,
 * beside what an iid stream of the same α gives (runs cut by a text's end
 * counted as they are). */
static void print_runs(const char *what, const long *run, long total, double p_same)
{
    long n = 0, tail = 0;
    for (int l = 1; l <= ACCSTAT_RUNMAX; l++) {
        n += run[l];
        if (l > 8) tail += run[l];
    }
    printf("runs of %s: %ld, mean %.2f (iid %.2f); by length 1..8, 9+:", what, n,
           n ? (double)total / (double)n : 0.0, p_same < 1 ? 1.0 / (1.0 - p_same) : INFINITY);
    for (int l = 1; l <= 8; l++) printf(" %.3f", n ? (double)run[l] / (double)n : 0.0);
    printf(" %.3f\n  iid:", n ? (double)tail / (double)n : 0.0);
    for (int l = 1; l <= 8; l++) printf(" %.3f", pow(p_same, l - 1) * (1 - p_same));
    printf(" %.3f\n", pow(p_same, 8));
}

static void print_stats(const accstat_t *s, const char *name, int ns, const char *const *hdr,
                        int nh)
{
    double al = s->outcomes ? (double)s->accepted / (double)s->outcomes : 0.0;
    printf("== %s: %ld outcomes in %d texts, alpha %.4f\n", name, s->outcomes, ns, al);
    for (int i = 0; i < nh; i++) printf("# %s\n", hdr[i]);
    printf("acceptance at draft position 1..8 (blocks of 8; -: no block reached it):");
    for (int i = 1; i <= 8; i++) print_p(stdout, " %.3f", accstat_position(s, 8, i));
    printf("\n  blocks of 8 reaching each position:");
    for (int i = 1; i <= 8; i++) printf(" %ld", accstat_reached(s, 8, i));
    printf("\n");
    for (int g = 2; g <= 8; g *= 2) {
        long n = accstat_blocks(s, g);
        printf("accepted length 0..%d, gamma %d (%ld blocks):", g, g, n);
        for (int k = 0; k <= g; k++) printf(" %.3f", n ? (double)s->counts[g][k] / (double)n : 0.0);
        printf("\n");
    }
    print_runs("accepts", s->run1, s->accepted, al);
    print_runs("rejects", s->run0, s->outcomes - s->accepted, 1 - al);
}

/* The fit lines and the figure's data for one draft. */
static int write_fits(const char *dir, const accstat_t *s, const accfit_t *f, const char *name,
                      err_t *err)
{
    char ov[512];
    outf_t of, od;
    if (out_open(&of, dir, name, ".fit", err)) return -1;
    for (int m = 0; m < ACCFIT_MODELS; m++)
        if (accfit_overrides(f, m, ov, sizeof ov) == 0)
            fprintf(of.f, "%s %s\n", accfit_name(m), ov);
    if (out_close(&of, 1, err) || out_open(&od, dir, name, ".dat", err)) return -1;
    FILE *fd = od.f;
    fprintf(fd, "# %s: acceptance per draft position in blocks of 8 (-: no block reached it)\n"
                "# position measured iid positional beta markov\n", name);
    double law[ACCFIT_MODELS][ACCSTAT_GMAX + 1];
    for (int m = 0; m < ACCFIT_MODELS; m++) accfit_law(f, m, 8, law[m]);
    for (int i = 1; i <= 8; i++) {
        fprintf(fd, "%d", i);
        print_p(fd, " %.6f", accstat_position(s, 8, i));
        for (int m = 0; m < ACCFIT_MODELS; m++)
            print_p(fd, " %.6f", accfit_law_position(law[m], 8, i));
        fprintf(fd, "\n");
    }
    for (int g = 2; g <= 8; g *= 2) {
        long n = accstat_blocks(s, g);
        fprintf(fd, "\n\n# gamma %d (%ld blocks): accepted measured iid positional beta markov\n",
                g, n);
        for (int m = 0; m < ACCFIT_MODELS; m++) accfit_law(f, m, g, law[m]);
        for (int k = 0; k <= g; k++) {
            fprintf(fd, "%d %.6f", k, n ? (double)s->counts[g][k] / (double)n : 0.0);
            for (int m = 0; m < ACCFIT_MODELS; m++) fprintf(fd, " %.6f", law[m][k]);
            fprintf(fd, "\n");
        }
    }
    return out_close(&od, 1, err);
}

static void print_fits(const accstat_t *s, const accfit_t *f)
{
    double pg = f->p_gb + f->p_bg > 0 ? f->p_bg / (f->p_gb + f->p_bg) : 0.5;
    printf("fits: iid alpha %.4f; positional", f->alpha);
    int carried = 0;
    for (int i = 0; i < ACCFIT_POS; i++) {
        printf(" %.3f%s", f->pos[i], f->pos_reached[i] ? "" : "*");
        carried |= !f->pos_reached[i];
    }
    printf("%s; beta a %.3f b %.3f (mean %.4f); markov good %.3f bad %.3f p_gb %.3g p_bg %.3g "
           "(stationary good %.3f, mean %.4f; %d EM iterations, best of %d starts)\n",
           carried ? " (*: never reached, the value before)" : "", f->a, f->b,
           f->a / (f->a + f->b), f->good, f->bad, f->p_gb, f->p_bg, pg,
           pg * f->good + (1 - pg) * f->bad, f->em_iterations, ACCFIT_EM_STARTS);
    printf("log-likelihood of the outcomes: iid %.1f, markov %.1f (%+.1f with 3 more "
           "parameters)\n", f->loglik_iid, f->loglik_markov, f->loglik_markov - f->loglik_iid);
    printf("goodness of fit of the accepted lengths: Pearson's chi2 (bins expected under 5 "
           "pooled; df = bins - 1 - the parameters the law depends on; -: none left) and TV, "
           "the total variation distance\n");
    printf("%-11s %5s %7s %10s %4s %10s %8s\n", "model", "gamma", "blocks", "chi2", "df", "p",
           "TV");
    double best[ACCSTAT_GMAX + 1];
    int bm[ACCSTAT_GMAX + 1];
    for (int g = 2; g <= 8; g *= 2) best[g] = INFINITY, bm[g] = -1;
    for (int m = 0; m < ACCFIT_MODELS; m++)
        for (int g = 2; g <= 8; g *= 2) {
            accfit_gof_t r;
            accfit_gof(s, f, m, g, &r);
            printf("%-11s %5d %7ld ", accfit_name(m), g, r.blocks);
            if (r.exact) printf("%26s", "exact: fitted to these");   /* accfit_gof_t.exact */
            else if (isnan(r.chi2)) printf("%10s %4s %10s", "-", "-", "-");
            else printf("%10.1f %4d %10.3g", r.chi2, r.df, r.p);
            printf(" %8.4f\n", r.tv);
            if (!r.exact && r.tv < best[g]) best[g] = r.tv, bm[g] = m;
        }
    printf("best by TV (exact fits left out):");
    for (int g = 2; g <= 8; g *= 2)
        if (bm[g] >= 0) printf(" gamma %d %s %.4f%s", g, accfit_name(bm[g]), best[g], g < 8 ? ";" : "");
    printf("\n");
}

/* Everything one set of streams gives: the report on standard output, the
 * trace (when trace is set), the .fit and .dat files, into dir. */
static int report(const char *dir, const char *name, const accstat_stream_t *st, int ns,
                  const char *const *hdr, int nh, int trace, err_t *err)
{
    accstat_t *s = malloc(sizeof *s);
    accfit_t f;
    if (!s) return err_set(err, ERR_RUNTIME, CMD ": out of memory");
    accstat_compute(st, ns, s);
    print_stats(s, name, ns, hdr, nh);
    int rc = accfit_fit(st, ns, s, &f, err);
    if (rc == 0) print_fits(s, &f);
    fflush(stdout);
    if (rc == 0 && trace) {
        outf_t ot;
        rc = out_open(&ot, dir, name, ".txt", err);
        if (rc == 0) {
            int w = accstat_write_trace(ot.f, hdr, nh, st, ns);
            if (w != 0) err_set(err, ERR_RUNTIME, CMD ": error writing %s", ot.tmp);
            rc = out_close(&ot, w == 0, err);
        }
    }
    if (rc == 0) rc = write_fits(dir, s, &f, name, err);
    free(s);
    return rc;
}

/* Text i's ranks, and its chain outcomes from them (rank 0: the draft's
 * argmax is the target's token), from one pass of the draft. */
static int draft_ranks(const llm_model_t *d, meas_t *m, int i, err_t *err)
{
    if (tforce_ranks(d, m->run, &m->tx[i], m->a->ranks, m->rk[i], err) != 0) return -1;
    for (int j = 0; j + 1 < m->tx[i].n; j++) m->oc[i][j] = m->rk[i][j] == 0;
    return 0;
}

/* The per-depth, per-rank table on standard output. */
static void print_ranks(const accrank_est_t *e, const char *name)
{
    printf("tree acceptance of %s: %ld complete blocks of a tree %d wide, %d deep; mean "
           "accepted %.4f\n  p_k(d) = P(the target's token is the draft's k-th | the block "
           "reached depth d), +- its standard error\n  depth reached", name, e->blocks,
           e->width, e->depth, e->blocks ? (double)e->accepted / (double)e->blocks : 0.0);
    for (int r = 0; r < e->k; r++) printf("  p_%d", r + 1);
    printf("  none\n");
    for (int d = 0; d < e->depth; d++) {
        printf("  %5d %7ld", d + 1, e->reached[d]);
        for (int r = 0; r <= e->k; r++) {
            if (!e->reached[d]) printf(" -");
            else printf(" %.4f+-%.4f", accrank_p(e, d, r), accrank_se(e, d, r));
        }
        printf("\n");
    }
}

/* --ranks: the rank stream, the profile and the table for one draft. */
static int rank_report(const meas_t *m, const char *name, const char *const *hdr, err_t *err)
{
    const acc_args_t *a = m->a;
    accrank_stream_t *st = calloc((size_t)m->np, sizeof *st);
    if (!st) return err_set(err, ERR_RUNTIME, CMD ": out of memory");
    for (int i = 0; i < m->np; i++)
        st[i] = (accrank_stream_t){m->rk[i], m->tx[i].n > 1 ? m->tx[i].n - 1 : 0, m->label[i]};
    accrank_est_t e;
    accrank_estimate(st, m->np, a->ranks, a->tree_width, a->tree_depth, &e);
    print_ranks(&e, name);
    fflush(stdout);
    /* Headers 0, 1 and 3 of the trace's (the draft, the texts, the
     * command); 2 holds the chain's alpha. */
    const char *h[3] = {hdr[0], hdr[1], hdr[3]};
    outf_t o;
    int rc = out_open(&o, a->out, name, ".ranks", err), w;
    if (rc == 0) {
        if ((w = accrank_write_ranks(o.f, h, 3, a->ranks, st, m->np)) != 0)
            err_set(err, ERR_RUNTIME, CMD ": error writing %s", o.tmp);
        rc = out_close(&o, w == 0, err);
    }
    if (rc == 0 && (rc = out_open(&o, a->out, name, ".tree", err)) == 0) {
        if ((w = accrank_write_profile(o.f, h, 3, &e)) != 0)
            err_set(err, ERR_RUNTIME, CMD ": error writing %s", o.tmp);
        rc = out_close(&o, w == 0, err);
    }
    free(st);
    return rc;
}

static int one_draft(meas_t *m, const char *spec, err_t *err)
{
    const acc_args_t *a = m->a;
    llm_model_t *d = cli_args_load(&m->cm, spec, err);
    if (!d) return -1;
    double t0 = wallclock_s();
    int rc = 0;
    for (int i = 0; rc == 0 && i < m->np; i++)
        rc = a->ranks ? draft_ranks(d, m, i, err)
                      : tforce_outcomes(d, m->run, &m->tx[i], i, (float)a->temp,
                                        (uint64_t)a->seed, m->oc[i], err);
    accstat_stream_t *st = calloc((size_t)m->np, sizeof *st);
    if (rc == 0 && !st) rc = err_set(err, ERR_RUNTIME, CMD ": out of memory");
    long n = 0, acc = 0;
    for (int i = 0; rc == 0 && i < m->np; i++) {
        st[i] = (accstat_stream_t){m->oc[i], m->tx[i].n > 1 ? m->tx[i].n - 1 : 0, m->label[i]};
        n += st[i].n;
        for (int j = 0; j < st[i].n; j++) acc += st[i].o[j];
    }
    if (rc == 0 && !a->quiet)
        fprintf(stderr, CMD ": draft %s read %d texts in %.1f s\n", llm_name(d), m->np,
                wallclock_s() - t0);
    char name[128], hdr[4][512];
    name_of(spec, a->temp > 0 ? "sampled" : "greedy", name, sizeof name);
    if (rc == 0) {
        const char *h[4] = {hdr[0], hdr[1], hdr[2], hdr[3]};
        snprintf(hdr[0], sizeof hdr[0], "acceptance of the draft %s against the target %s%s%s",
                 llm_name(d), a->target, a->label ? ", " : "", a->label ? a->label : "");
        snprintf(hdr[1], sizeof hdr[1], "%s, %d prompts of %s, %s %d tokens each, seed %.0f",
                 a->temp > 0 ? "sampling" : "greedy", m->np, a->prompts,
                 a->no_eos ? "past the end of sequence," : "up to", a->tokens, a->seed);
        snprintf(hdr[2], sizeof hdr[2], "%ld outcomes, alpha %.4f; measured by teacher forcing "
                 "(kernels/llm/tforce.h)", n, n ? (double)acc / (double)n : 0.0);
        snprintf(hdr[3], sizeof hdr[3], "written by build/llm accept (docs/llm.md)");
        /* One line each whatever a path holds: a line break would end the
         * '#' header line. */
        for (int k = 0; k < 4; k++)
            for (char *c = hdr[k]; *c; c++)
                if ((unsigned char)*c < 0x20 || *c == 0x7F) *c = '?';
        rc = report(a->out, name, st, m->np, h, 4, 1, err);
        if (rc == 0 && a->ranks) rc = rank_report(m, name, h, err);
    }
    free(st);
    llm_free(d);
    return rc;
}

/* --tree-branching: the tree replayed on the ranks (its truth on these
 * texts) beside the closed form of the profile e estimates (Sequoia's
 * model: ranks at successive depths independent given the block reached
 * them). */
static int replay_branching(const acc_args_t *a, const accrank_file_t *f,
                            const accrank_est_t *e, err_t *err)
{
    int b[TREE_NODES_MAX], nb = 0;
    const char *p = a->branching;
    while (*p) {
        char *end;
        long v = strtol(p, &end, 10);
        /* A factor each time, no empty one (a trailing comma), and no more
         * levels than a tree can have nodes. */
        if (end == p || v < 1 || v > f->k || (*end && (*end != ',' || !end[1])) ||
            nb == TREE_NODES_MAX)
            return err_set(err, ERR_INPUT, CMD ": --tree-branching '%s': give at most %d "
                           "factors 1 .. %d (the ranks kept apart) separated by commas",
                           a->branching, TREE_NODES_MAX, f->k);
        b[nb++] = (int)v;
        p = *end ? end + 1 : end;
    }
    tree_t t;
    if (tree_from_branching(&t, b, nb, err) != 0) return -1;
    tree_probs_t pr = {0};
    for (int d = 0; d < e->depth && d < TREE_ROWS_MAX && e->reached[d] > 0; d++) {
        pr.np[d] = e->k;
        for (int r = 0; r < e->k; r++) pr.p[d][r] = accrank_p(e, d, r);
        pr.nrows++;
    }
    accrank_replay_t rp;
    accrank_replay_tree(f->st, f->ns, &t, &rp);
    printf("tree branching [%s] (%d nodes, depth %d): replayed mean accepted %.4f +- %.4f "
           "(%ld blocks); the profile's closed form %.4f\n", a->branching, t.n, t.depth,
           rp.mean, rp.se, rp.blocks, pr.nrows ? tree_expected_depth(&t, &pr, NULL) : NAN);
    return 0;
}

/* --refit of a rank stream: the tree table and profile re-estimated for
 * --tree-width/--tree-depth (default: the file's K, 8), written as NAME.tree
 * with -wW and -dD before .tree where they differ from the default. */
static int refit_ranks(const acc_args_t *a, const char *path, const char *dir,
                       const char *name, err_t *err)
{
    accrank_file_t f;
    if (accrank_read(path, &f, err) != 0) return -1;
    int w = a->tree_width ? a->tree_width : f.k, d = a->tree_depth ? a->tree_depth : 8, rc = 0;
    if (w > f.k)
        rc = err_set(err, ERR_INPUT, CMD ": --tree-width %d is wider than %s's ranks (K = %d)",
                     w, path, f.k);
    char full[300], from[600];
    int n = snprintf(full, sizeof full, "%s", name);
    if (w != f.k) n += snprintf(full + n, sizeof full - (size_t)n, "-w%d", w);
    if (d != 8) snprintf(full + n, sizeof full - (size_t)n, "-d%d", d);
    snprintf(from, sizeof from, "re-estimated from %s by " CMD " --refit", path);
    for (char *c = from; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7F) *c = '?';
    const char *h[ACC_TRACES_MAX];
    int nh = 0;
    for (int i = 0; i < f.nh && nh < ACC_TRACES_MAX - 1; i++) h[nh++] = f.header[i];
    h[nh++] = from;
    if (rc == 0) {
        accrank_est_t e;
        accrank_estimate(f.st, f.ns, f.k, w, d, &e);
        print_ranks(&e, full);
        if (a->branching) rc = replay_branching(a, &f, &e, err);
        fflush(stdout);
        outf_t o;
        if (rc == 0 && (rc = out_open(&o, dir, full, ".tree", err)) == 0) {
            int bad = accrank_write_profile(o.f, h, nh, &e);
            if (bad) err_set(err, ERR_RUNTIME, CMD ": error writing %s", o.tmp);
            rc = out_close(&o, bad == 0, err);
        }
    }
    accrank_file_free(&f);
    return rc;
}

/* --refit: each trace read back and reported on as if just measured; its
 * .fit and .dat written beside it (or into --out). */
static int refit(const acc_args_t *a, err_t *err)
{
    if (a->out && cli_args_out_dir(CMD, "--out", a->out, err)) return -1;
    for (int i = 0; i < a->ntraces; i++) {
        const char *path = a->traces[i];
        char dir[4096], name[256];
        const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
        if (a->out) snprintf(dir, sizeof dir, "%s", a->out);
        else if (slash == path) snprintf(dir, sizeof dir, "/");
        else if (slash) snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
        else snprintf(dir, sizeof dir, ".");
        size_t bl = strlen(base);
        if (bl > 6 && !strcmp(base + bl - 6, ".ranks")) {
            snprintf(name, sizeof name, "%.*s", (int)bl - 6, base);
            if (refit_ranks(a, path, dir, name, err) != 0) return -1;
            continue;
        }
        if (bl > 4 && !strcmp(base + bl - 4, ".txt")) bl -= 4;
        snprintf(name, sizeof name, "%.*s", (int)bl, base);
        accstat_trace_t t;
        if (accstat_read_trace(path, &t, err) != 0) return -1;
        int rc = report(dir, name, t.st, t.ns, (const char *const *)t.header, t.nh, 0, err);
        accstat_trace_free(&t);
        if (rc != 0) return -1;
    }
    return 0;
}

static int run(const void *args, err_t *err)
{
    const acc_args_t *a = args;
    if (a->refit) return refit(a, err);
    meas_t m = {a, {NULL, NULL}, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL};
    /* The output directory and the prompt file before the model: a mistake
     * in either costs no model load and no measurement. */
    int rc = cli_args_out_dir(CMD, "--out", a->out, err);
    if (rc == 0 && !(m.ps = prompts_load(a->prompts, err))) rc = -1;
    if (rc == 0) rc = cli_args_open(a->model, &m.cm, err);
    if (rc == 0 && !(m.run = llm_run_create(a->threads, err))) rc = -1;
    if (rc == 0) rc = meas_texts(&m, err);
    char buf[DRAFTS_MAX];
    snprintf(buf, sizeof buf, "%s", a->drafts);   /* fits: parse checked it */
    for (char *s = buf, *save = NULL, *tk; rc == 0 && (tk = strtok_r(s, ",", &save)); s = NULL)
        rc = one_draft(&m, tk, err);
    meas_free(&m);
    return rc;
}

int cli_accept(int argc, char **argv)
{
    acc_args_t a = {0};
    return cli_args_main(argc, argv, &a, &a.help, parse, run, usage);
}
