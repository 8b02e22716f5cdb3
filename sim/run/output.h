/* output — results as a readable summary, one JSON object, or CSV rows.
 *
 * Numbers are printed with "%.10g" so that the same run gives byte-identical
 * files; NaN is written as `null` in JSON and as an empty field in CSV. A
 * metric's 95% half-width is the column/key `<name>_ci95`.
 */
#ifndef SPECSIM_OUTPUT_H
#define SPECSIM_OUTPUT_H

#include "base/api.h"

#include <stdio.h>

#include "base/err.h"
#include "stat/metrics.h"
#include "config/scenario.h"
#include "stat/tally.h"

/* Where the service times came from, for the run report:
 * "fixed", "distribution", "table", "fitted" or "datasheet". `edge` is the
 * source every tenant group shares, or "mixed" when they differ;
 * edge_group[g] is group g's own. sim_service_sources (sim.h) fills it all
 * (release with output_sources_fini); a record filled by hand may leave
 * ngroups 0. */
typedef struct output_sources {
    char edge[32];
    char cloud[32];
    int ngroups;              /* entries of edge_group; 0 = not known */
    const char **edge_group;  /* owned array of static strings, in the
                                 scenario's group order */
} output_sources_t;
SPECSIM_API void output_sources_fini(output_sources_t *src);

/* The human summary `specsim run` prints: scenario line, service-time
 * sources (tenant groups with different edge sources listed as "table
 * (laptops), datasheet (phones, jetsons)"), then metrics grouped (latency,
 * throughput, speculation, cloud, network, cost, bookkeeping) with ± CI
 * where replications > 1. */
SPECSIM_API int output_summary(FILE *f, const scenario_t *s, const output_sources_t *src,
                   const metrics_summary_t *m);

/* Exactly one JSON object (with "groups": {NAME: {every metric}} at the
 * end when m->groups is set): "scenario", "version" (version_string(),
 * version.h: the build that wrote it), "mode", "seed", "replications",
 * "tenants", "edge_service_source" (common to every tenant group, or
 * "mixed"), "edge_service_sources" ({group name: source}, null when src
 * does not list them), "cloud_service_source", then every
 * metric of METRICS_LIST in order, each followed by "<name>_ci95" when
 * replications > 1. Ends with a newline. */
SPECSIM_API int output_json(FILE *f, const scenario_t *s, const output_sources_t *src,
                const metrics_summary_t *m);

/* A key a caller adds to the JSON object after the metrics (and before
 * "groups"): a string when text is set, else the number. */
typedef struct output_extra {
    const char *key;
    const char *text;
    double value;
} output_extra_t;

/* output_json with the nx keys of x as well (the testbed's lateness). */
SPECSIM_API int output_json_extra(FILE *f, const scenario_t *s, const output_sources_t *src,
                      const metrics_summary_t *m, const output_extra_t *x, int nx);

/* ---- for the outputs of other commands (compare, sim/run/compare.h) ----
 * The pieces every output above is made of, so that another report reads
 * as these do. The primitives: a JSON string (escaped, bad UTF-8 replaced)
 * or number ("%.10g"; NaN and infinity: null), a CSV field (RFC 4180
 * quoting) or number (NaN: empty; "inf", "-inf"). 0, or -1 on a write
 * error. */
int output_json_string(FILE *f, const char *s);
int output_json_number(FILE *f, double x);
int output_csv_field(FILE *f, const char *s);
int output_csv_number(FILE *f, double x);

/* The summary's table of metrics for another command's rows: each section
 * (latency, throughput, ...) as a line "\nTITLE\n", then row(f, namew, id,
 * ctx) for each of its metrics in the summary's order; metrics no section
 * lists come last, under "other". namew is the longest metric name. 0, or
 * -1 when a write or a row fails. */
typedef int (*output_row_fn)(FILE *f, int namew, int id, void *ctx);
/* has(id, ctx): 1 when metric id has a value to show. A section of
 * metrics that exist only with some inputs (link: outages, fallback) is
 * left out when none of them has one; has NULL shows every section. */
typedef int (*output_has_fn)(int id, void *ctx);
int output_sections(FILE *f, output_row_fn row, output_has_fn has, void *ctx);
int output_name_width(void);   /* that namew */
/* The factor by which the summary multiplies metric id's values, and the
 * unit it then prints (*unit static, "" for none): times in s, ms, us or ns
 * as v's magnitude picks, fractions in %. */
double output_unit(int id, double v, const char **unit);
/* The summary's numbers: a value to four significant digits (whole above
 * 10^4; "n/a" for NaN), a half-width to two. */
void output_fmt_value(char *buf, size_t n, double v);
void output_fmt_ci(char *buf, size_t n, double v);

/* output_write_file for another command's results: json(f, ctx) or
 * csv(f, ctx), as path's suffix says, writes them to path, atomically, and
 * the sidecar gets s resolved, with note (comment lines, each "# ...\n", or
 * NULL) after its first line. Returns 0, or -1 with err (ERR_INPUT for a
 * name of neither format; ERR_RUNTIME when the body fails or a file cannot
 * be written). */
typedef int (*output_body_fn)(FILE *f, const void *ctx);
SPECSIM_API int output_write_with(const char *path, const scenario_t *s, const char *note,
                                  output_body_fn json, output_body_fn csv,
                                  const void *ctx, err_t *err);

/* CSV: `keys` are leading columns (sweep axes, by dotted path); then every
 * metric and its _ci95 column. Header and row are separate so sweeps can
 * append rows. Fields containing , " or newline are quoted. */
int output_csv_header(FILE *f, const char *const *keys, int nkeys);
int output_csv_row(FILE *f, const char *const *values, int nkeys,
                   const metrics_summary_t *m);
/* The header with, after the fleet's, every metric and its _ci95 of each
 * group, as "GROUP.metric" (`sweep --per-group`); output_csv_row writes
 * those columns from m->groups when m has them. */
int output_csv_header_groups(FILE *f, const char *const *keys, int nkeys,
                             const char *const *groups, int ngroups);

/* `run --per-tenant`: the header "rep,tenant,group,tokens,tokens_per_s,
 * itl_mean_s,itl_p99_s,ttft_mean_s,requests,slo_met_frac" and one row per
 * tenant per replication (docs/formats.md). */
int output_tenant_header(FILE *f);
int output_tenant_row(FILE *f, int rep, int tenant, const char *group,
                      const tally_tenant_row_t *r);

/* Writes the results to `path` atomically (temporary file in the same
 * directory, fsync, rename; a device or FIFO is written through and gets no
 * sidecar: sim/io/outfile.h), choosing the format by extension (.csv or
 * .json; anything else is an ERR_INPUT error). Either also gets the
 * resolved scenario as the sidecar PATH-without-extension + ".scenario.yaml",
 * so a result can always be reproduced; its first line is the comment
 * "# written by " + version_string(). Nothing is left behind on failure. */
SPECSIM_API int output_write_file(const char *path, const scenario_t *s,
                      const output_sources_t *src, const metrics_summary_t *m,
                      err_t *err);
/* Same, the JSON with the nx keys of x after the metrics (as
 * output_json_extra; a CSV leaves them out). */
SPECSIM_API int output_write_file_extra(const char *path, const scenario_t *s,
                                        const output_sources_t *src,
                                        const metrics_summary_t *m,
                                        const output_extra_t *x, int nx, err_t *err);
/* 0 when output_write_file would accept path's name (.csv or .json), else
 * -1 with ERR_INPUT: lets a command refuse a bad --out before running. */
SPECSIM_API int output_check_path(const char *path, err_t *err);

/* The sidecar of a results file: PATH without its .csv or .json, plus
 * ".scenario.yaml". -1 when it does not fit in n bytes. */
SPECSIM_API int output_sidecar_path(const char *path, char *out, size_t n);

#endif
