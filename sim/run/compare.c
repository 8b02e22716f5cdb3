/* compare — paired runs of two sides of a scenario (see compare.h).
 *
 * Ownership: compare_load's merged override list is freed before it
 * returns; compare_run's per-replication records are its own, freed before
 * it returns; the reports borrow everything they are given and allocate
 * only the "PATH=VALUE" text of one override at a time.
 */
#include "run/compare.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

#include "base/thread.h"
#include "base/version.h"
#include "run/output.h"
#include "run/pool.h"
#include "run/sim.h"

/* ---- statistics ----------------------------------------------------------- */

/* A standard deviation within rounding of 0 next to values of size scale is
 * 0: replications that agree up to the last bits have no spread (as
 * metrics.c rules for a run's half-widths). */
static double denoise(double sd, double scale)
{
    return sd <= 1e-12 * scale ? 0.0 : sd;
}

/* t(0.975, df)·sd/√n, 0 when sd is. */
static double half_width(double sd, double df, int n)
{
    return sd > 0 ? gsl_cdf_tdist_Pinv(0.975, df) * sd / sqrt((double)n) : 0.0;
}

static int paired(double a, double b)
{
    return isfinite(a) && isfinite(b);
}

/* Welch's half-width of the difference of two means of n values each,
 * with sample variances va and vb. */
static double welch(double va, double vb, int n)
{
    double v = va + vb;
    if (!(v > 0)) return 0.0;
    double df = (n - 1) * v * v / (va * va + vb * vb);
    return gsl_cdf_tdist_Pinv(0.975, df) * sqrt(v / n);
}

void compare_stat(const double *a, const double *b, int n, compare_stat_t *o)
{
    int k = 0;
    double sa = 0, sb = 0;
    for (int r = 0; r < n; r++) {
        if (!paired(a[r], b[r])) continue;
        sa += a[r];
        sb += b[r];
        k++;
    }
    *o = (compare_stat_t){.pairs = k, .a = NAN, .a_ci95 = NAN, .b = NAN, .b_ci95 = NAN,
                          .diff = NAN, .diff_ci95 = NAN, .diff_ci95_unpaired = NAN,
                          .ratio = NAN, .ratio_ci95 = NAN, .corr = NAN};
    if (k == 0) return;
    double ma = sa / k, mb = sb / k;
    o->a = ma;
    o->b = mb;
    o->diff = mb - ma;
    o->ratio = ma != 0 ? mb / ma : NAN;
    o->a_ci95 = o->b_ci95 = o->diff_ci95 = o->diff_ci95_unpaired = 0.0;
    o->ratio_ci95 = ma != 0 ? 0.0 : NAN;
    if (k < 2) return;
    /* Second pass on deviations: replications of a stable metric agree to
     * many digits, and sums of squares would cancel them away. */
    double saa = 0, sbb = 0, sab = 0, sdd = 0, see = 0;
    for (int r = 0; r < n; r++) {
        if (!paired(a[r], b[r])) continue;
        double da = a[r] - ma, db = b[r] - mb;
        saa += da * da;
        sbb += db * db;
        sab += da * db;
        sdd += (db - da) * (db - da);
        if (ma != 0) see += (db - o->ratio * da) * (db - o->ratio * da);
    }
    double scale = fmax(fabs(ma), fabs(mb));
    double sd_a = denoise(sqrt(saa / (k - 1)), fabs(ma));
    double sd_b = denoise(sqrt(sbb / (k - 1)), fabs(mb));
    double sd_d = denoise(sqrt(sdd / (k - 1)), scale);
    o->a_ci95 = half_width(sd_a, k - 1, k);
    o->b_ci95 = half_width(sd_b, k - 1, k);
    o->diff_ci95 = half_width(sd_d, k - 1, k);
    o->diff_ci95_unpaired = welch(sd_a * sd_a, sd_b * sd_b, k);
    /* Delta method: b/a - R ≈ (mean(b) - R·mean(a))/a = mean(e)/a with
     * e_r = b_r - R·a_r, whose deviations are db - R·da. */
    if (ma != 0)
        o->ratio_ci95 = half_width(denoise(sqrt(see / (k - 1)), fabs(mb)), k - 1, k) /
                        fabs(ma);
    if (sd_a > 0 && sd_b > 0) o->corr = sab / sqrt(saa * sbb);
}

int compare_pairs(const metrics_rep_t *a, const metrics_rep_t *b, int R,
                  compare_result_t *out)
{
    double *x = malloc(2 * (size_t)(R > 0 ? R : 1) * sizeof *x);
    if (!x) return -1;
    out->reps = R;
    for (int m = 0; m < METRIC_COUNT; m++) {
        for (int r = 0; r < R; r++) {
            x[r] = a[r].v[m];
            x[R + r] = b[r].v[m];
        }
        compare_stat(x, x + R, R, &out->m[m]);
    }
    free(x);
    return 0;
}

/* ---- loading and running -------------------------------------------------- */

int compare_load(const scenario_src_t *src, const overrides_t *common,
                 const overrides_t *side, scenario_t *out, err_t *err)
{
    int n = common->n + side->n;
    scenario_override_t *ov = malloc((size_t)(n > 0 ? n : 1) * sizeof *ov);
    if (!ov) {
        memset(out, 0, sizeof *out);
        return err_set(err, ERR_RUNTIME, "out of memory");
    }
    if (common->n) memcpy(ov, common->ov, (size_t)common->n * sizeof *ov);
    if (side->n) memcpy(ov + common->n, side->ov, (size_t)side->n * sizeof *ov);
    int rc = scenario_src_load(src, ov, n, out, err);
    free(ov);
    return rc;
}

/* One side's run: its replications' values into reps (R records). */
typedef struct side_run {
    const scenario_t *s;
    const char *name;     /* "a" or "b", for messages */
    int jobs;
    metrics_rep_t *reps;
    int rc;
    err_t err;
} side_run_t;

static void run_side(side_run_t *j)
{
    metrics_summary_t m;
    sim_options_t opt = {.jobs = j->jobs, .rep_values = j->reps};
    j->rc = sim_run(j->s, &opt, &m, &j->err);
}

static void *side_thread(void *arg)
{
    run_side(arg);
    return NULL;
}

/* Side a's error before b's, each named. */
static int side_error(const side_run_t *j, err_t *err)
{
    return err_set(err, j->err.code ? j->err.code : ERR_RUNTIME, "side %s: %s", j->name,
                   j->err.msg);
}

int compare_run(const scenario_t *sa, const scenario_t *sb, long jobs,
                compare_result_t *out, err_t *err)
{
    int R = sa->replications;
    if (R < 1)
        return err_set(err, ERR_INPUT, "replications: must be >= 1, got %d", R);
    /* Each side would stop at its own count, and the pairs would not match. */
    if (sa->precision.relative > 0 || sb->precision.relative > 0)
        return err_set(err, ERR_INPUT, "precision: compare runs a fixed number of "
                       "replications a side (give replications, not precision:)");
    if (sb->replications != R)
        return err_set(err, ERR_INPUT, "the sides run different numbers of replications "
                       "(a: %d, b: %d); pairs need the same", R, sb->replications);
    if (sa->seed != sb->seed)
        err_warn("compare: the sides have different seeds (a: %" PRIu64 ", b: %" PRIu64
                 "): they share no random draw, and the pairs are independent",
                 sa->seed, sb->seed);
    long n = pool_jobs(jobs);
    side_run_t s[2] = {{.s = sa, .name = "a"}, {.s = sb, .name = "b"}};
    metrics_rep_t *reps = calloc(2 * (size_t)R, sizeof *reps);
    if (!reps) return err_set(err, ERR_RUNTIME, "out of memory");
    for (int k = 0; k < 2; k++) {
        long share = n >= 2 ? pool_share(n, 2, (size_t)k) : 1;
        s[k].jobs = share < POOL_JOBS_MAX ? (int)share : POOL_JOBS_MAX;
        s[k].reps = reps + (size_t)k * R;
    }
    pthread_t th;
    int threaded = n >= 2 && thread_create(&th, side_thread, &s[1]) == 0;
    run_side(&s[0]);
    if (threaded) pthread_join(th, NULL);
    else run_side(&s[1]);
    int rc = 0;
    if (s[0].rc != 0) rc = side_error(&s[0], err);
    else if (s[1].rc != 0) rc = side_error(&s[1], err);
    else if (compare_pairs(reps, reps + R, R, out) != 0)
        rc = err_set(err, ERR_RUNTIME, "out of memory");
    free(reps);
    return rc;
}

/* ---- reports ---------------------------------------------------------------- */

/* "PATH=VALUE" of override i, as a string the caller frees; NULL when out
 * of memory. */
static char *override_text(const overrides_t *o, int i)
{
    const scenario_override_t *v = &o->ov[i];
    size_t n = strlen(v->path) + strlen(v->value) + 2;
    char *t = malloc(n);
    if (t) snprintf(t, n, "%s=%s", v->path, v->value);
    return t;
}

/* s, with every ' written '\'' when quoted (inside '...' for a shell). */
static int put_text(FILE *f, const char *s, int quote)
{
    if (!quote) return fputs(s, f) == EOF ? -1 : 0;
    for (; *s; s++)
        if ((*s == '\'' ? fputs("'\\''", f) : fputc(*s, f)) == EOF) return -1;
    return 0;
}

/* The side's overrides after `lead`, each as its option would be typed:
 * "--a PATH=VALUE", or "--a 'PATH=VALUE'" for a shell when quote is set. */
static int side_words(FILE *f, const char *lead, const char *opt, const overrides_t *o,
                      int quote)
{
    const char *q = quote ? "'" : "";
    int rc = fputs(lead, f) == EOF;
    for (int i = 0; i < o->n && !rc; i++) {
        rc |= fprintf(f, "%s%s %s", i ? " " : "", opt, q) < 0;
        rc |= put_text(f, o->ov[i].path, quote) < 0 || fputc('=', f) == EOF;
        rc |= put_text(f, o->ov[i].value, quote) < 0 || fputs(q, f) == EOF;
    }
    return rc ? -1 : 0;
}

static void warmup_words(char *buf, size_t n, const scenario_t *s)
{
    if (s->warmup_auto) snprintf(buf, n, "warm-up auto");
    else snprintf(buf, n, "warm-up %.10g s", s->warmup);
}

static int print_header(FILE *f, const compare_report_t *rep)
{
    const scenario_t *a = rep->a, *b = rep->b;
    char wa[64], wb[64];
    warmup_words(wa, sizeof wa, a);
    warmup_words(wb, sizeof wb, b);
    int rc = fprintf(f, "scenario     %s%s%s%s\n", a->name[0] ? a->name : "(unnamed)",
                     a->file[0] ? "  (" : "", a->file, a->file[0] ? ")" : "") < 0;
    rc |= side_words(f, "a            ", "--a", rep->ova, 0) < 0;
    rc |= side_words(f, "\nb            ", "--b", rep->ovb, 0) < 0;
    if (a->duration == b->duration && strcmp(wa, wb) == 0)
        rc |= fprintf(f, "\nrun          %.10g s (%s)", a->duration, wa) < 0;
    else
        rc |= fprintf(f, "\nrun          a: %.10g s (%s), b: %.10g s (%s)", a->duration, wa,
                      b->duration, wb) < 0;
    if (a->seed == b->seed)
        rc |= fprintf(f, ", seed %" PRIu64 ", %d replications a side, common random "
                      "numbers\n", a->seed, rep->r->reps) < 0;
    else
        rc |= fprintf(f, ", seeds a: %" PRIu64 ", b: %" PRIu64 " (nothing shared), %d "
                      "replications a side\n", a->seed, b->seed, rep->r->reps) < 0;
    rc |= fputs("± = 95% CI half-width: paired t on the replications' b-a; unpaired:\n"
                "Welch's, as independent runs would give it; b/a by the delta method\n",
                f) == EOF;
    return rc ? -1 : 0;
}

/* Column widths of the table: values, half-widths. */
enum { WV = 11, WC = 10 };

/* A half-width, or nothing where it says nothing (one pair, no value). */
static void ci_text(char *buf, size_t n, const compare_stat_t *st, double ci, double k)
{
    if (st->pairs < 2 || !isfinite(ci)) snprintf(buf, n, "%s", "");
    else output_fmt_ci(buf, n, ci * k);
}

/* Metric id has a value on either side. */
static int table_has(int id, void *ctx)
{
    const compare_stat_t *st = &((const compare_report_t *)ctx)->r->m[id];
    return !isnan(st->a) || !isnan(st->b);
}

static int table_row(FILE *f, int namew, int id, void *ctx)
{
    const compare_stat_t *st = &((const compare_report_t *)ctx)->r->m[id];
    const char *unit;
    double k = output_unit(id, fmax(fabs(st->a), fabs(st->b)), &unit);
    char a[40], b[40], d[48], dci[40], uci[40], q[40], qci[40], line[400];
    output_fmt_value(a, sizeof a, st->a * k);
    output_fmt_value(b, sizeof b, st->b * k);
    output_fmt_value(d + 1, sizeof d - 1, st->diff * k);
    d[0] = st->diff > 0 ? '+' : ' ';
    output_fmt_value(q, sizeof q, st->ratio);
    ci_text(dci, sizeof dci, st, st->diff_ci95, k);
    ci_text(uci, sizeof uci, st, st->diff_ci95_unpaired, k);
    ci_text(qci, sizeof qci, st, st->ratio_ci95, 1.0);
    if (st->pairs == 0) unit = "";
    snprintf(line, sizeof line, "  %-*s %*s %*s %*s %*s %*s %*s %*s  %s", namew,
             metric_name(id), WV, a, WV, b, WV, d[0] == ' ' ? d + 1 : d, WC, dci, WC,
             uci, WV, q, WC, qci, unit);
    size_t n = strlen(line);
    while (n > 0 && line[n - 1] == ' ') line[--n] = '\0';
    return fprintf(f, "%s\n", line) < 0 ? -1 : 0;
}

int compare_print(FILE *f, const compare_report_t *rep)
{
    int namew = output_name_width();
    if (print_header(f, rep) < 0 ||
        fprintf(f, "\n  %-*s %*s %*s %*s %*s %*s %*s %*s\n", namew, "", WV, "a", WV, "b",
                WV, "b-a", WC + 1, "± paired", WC + 1, "± unpaired", WV, "b/a", WC + 1,
                "±") < 0 ||
        output_sections(f, table_row, table_has, (void *)rep) < 0)
        return -1;
    return ferror(f) ? -1 : 0;
}

/* ["PATH=VALUE", ...] */
static int json_sets(FILE *f, const overrides_t *o)
{
    int rc = fputc('[', f) == EOF;
    for (int i = 0; i < o->n && !rc; i++) {
        char *t = override_text(o, i);
        rc |= !t || (i && fputs(", ", f) == EOF) || output_json_string(f, t) < 0;
        free(t);
    }
    rc |= fputc(']', f) == EOF;
    return rc ? -1 : 0;
}

/* A statistic's fields, by name, in the order of the JSON and the CSV. */
static double field(const compare_stat_t *st, int i)
{
    const double v[] = {st->a, st->a_ci95, st->b, st->b_ci95, st->diff, st->diff_ci95,
                        st->diff_ci95_unpaired, st->ratio, st->ratio_ci95, st->corr};
    return v[i];
}
static const char *const field_names[] = {"a", "a_ci95", "b", "b_ci95", "diff",
                                          "diff_ci95", "diff_ci95_unpaired", "ratio",
                                          "ratio_ci95", "corr"};
enum { NFIELDS = (int)(sizeof field_names / sizeof *field_names) };

int compare_json(FILE *f, const compare_report_t *rep)
{
    int rc = fputs("{\n  \"scenario\": ", f) == EOF || output_json_string(f, rep->a->name) < 0;
    rc |= fputs(",\n  \"version\": ", f) == EOF || output_json_string(f, version_string()) < 0;
    rc |= fprintf(f, ",\n  \"seed\": %" PRIu64 ",\n  \"common_random_numbers\": %s"
                  ",\n  \"replications\": %d,\n  \"a\": ", rep->a->seed,
                  rep->a->seed == rep->b->seed ? "true" : "false", rep->r->reps) < 0;
    rc |= json_sets(f, rep->ova) < 0 || fputs(",\n  \"b\": ", f) == EOF;
    rc |= json_sets(f, rep->ovb) < 0;
    rc |= fputs(",\n  \"ratio_ci\": \"delta\",\n  \"unpaired_ci\": \"welch\",\n"
                "  \"metrics\": {", f) == EOF;
    for (int m = 0; m < METRIC_COUNT && !rc; m++) {
        const compare_stat_t *st = &rep->r->m[m];
        rc |= fputs(m ? ",\n    " : "\n    ", f) == EOF;
        rc |= output_json_string(f, metric_name(m)) < 0;
        rc |= fprintf(f, ": {\"pairs\": %d", st->pairs) < 0;
        for (int i = 0; i < NFIELDS; i++)
            rc |= fprintf(f, ", \"%s\": ", field_names[i]) < 0 ||
                  output_json_number(f, field(st, i)) < 0;
        rc |= fputc('}', f) == EOF;
    }
    rc |= fputs("\n  }\n}\n", f) == EOF;
    return rc || ferror(f) ? -1 : 0;
}

int compare_csv(FILE *f, const compare_report_t *rep)
{
    int rc = fputs("metric,pairs", f) == EOF;
    for (int i = 0; i < NFIELDS; i++) rc |= fprintf(f, ",%s", field_names[i]) < 0;
    rc |= fputc('\n', f) == EOF;
    for (int m = 0; m < METRIC_COUNT && !rc; m++) {
        const compare_stat_t *st = &rep->r->m[m];
        rc |= output_csv_field(f, metric_name(m)) < 0 || fprintf(f, ",%d", st->pairs) < 0;
        for (int i = 0; i < NFIELDS; i++)
            rc |= fputc(',', f) == EOF || output_csv_number(f, field(st, i)) < 0;
        rc |= fputc('\n', f) == EOF;
    }
    return rc || ferror(f) ? -1 : 0;
}

static int body_json(FILE *f, const void *ctx)
{
    return compare_json(f, ctx);
}

static int body_csv(FILE *f, const void *ctx)
{
    return compare_csv(f, ctx);
}

/* "# compare: a = this scenario with --a ...\n" and b's line, for the
 * sidecar; the caller frees it. NULL when out of memory. */
static char *sidecar_note(const compare_report_t *rep)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return NULL;
    int rc = side_words(f, "# compare: side a is this scenario with ", "--a", rep->ova, 1);
    rc |= side_words(f, "\n# compare: side b is this scenario with ", "--b", rep->ovb, 1);
    rc |= fputc('\n', f) == EOF;
    if (fclose(f) != 0 || rc) {
        free(buf);
        return NULL;
    }
    return buf;
}

int compare_write_file(const char *path, const scenario_t *base,
                       const compare_report_t *rep, err_t *err)
{
    char *note = sidecar_note(rep);
    if (!note) return err_set(err, ERR_RUNTIME, "out of memory");
    int rc = output_write_with(path, base, note, body_json, body_csv, rep, err);
    free(note);
    return rc;
}
