/* sweepfile — the files a sweep writes: FILE.csv (one row per point, in point
 * order) and its sidecar FILE.scenario.yaml; resuming and merging them.
 *
 * CSV: header `point,<axis paths...>,<every metric and its _ci95>`, then one
 * row per point; `point` is the point's index in the whole sweep (so shards
 * and resumed runs can be merged and checked). Rows are appended with one
 * write() each batch, so a killed process leaves at most a torn last line,
 * which resuming truncates; the file is fdatasync'ed at most every
 * SWEEPFILE_SYNC_S seconds and at the end, so a power failure loses at most
 * that much finished work (resume recomputes it).
 *
 * Sidecar: a first line `# specsim sweep: points N, id HEX` (HEX = FNV-1a of
 * the rest), the resolved base scenario, then the `sweep:` section with every
 * axis written out. It is a runnable sweep scenario itself, identical for
 * every shard of one sweep (whole-line comments aside, which may name the
 * path the scenario was read from): that is how merge and resume recognise
 * a sweep.
 */
#ifndef SPECSIM_SWEEPFILE_H
#define SPECSIM_SWEEPFILE_H

#include "base/api.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/err.h"
#include "stat/metrics.h"
#include "config/scenario.h"
#include "config/sweepspec.h"

/* FILE.csv -> FILE.scenario.yaml (else FILE + ".scenario.yaml"). -1 if it
 * does not fit in n bytes. */
int sweepfile_sidecar_path(const char *csv, char *out, size_t n);

/* The CSV header line (with its newline); groups: NULL, or the scenario
 * whose tenant groups get GROUP.metric columns (`sweep --per-group`; rows
 * then come from summaries that carry those groups); precision: the sweep
 * runs with precision:, and a `replications` column after the axes says
 * how many each point took. Returns a malloc'ed string the caller frees,
 * or NULL with err filled. */
SPECSIM_API char *sweepfile_header(const sweepspec_t *sp, const scenario_t *groups,
                                   int precision, err_t *err);

/* The sidecar text for base + sp, after the comment lines "# specsim sweep:
 * points N, id H", "# written by " + version_string() (version.h) and
 * "# read PATH" for each file in `files` (the inputs the sweep's loads
 * read: sim/io/infile.h; NULL: none), before the scenario. malloc'ed
 * (caller frees), NULL on error. */
struct infiles;
char *sweepfile_sidecar_inputs(const scenario_t *base, const sweepspec_t *sp,
                               struct infiles *files, err_t *err);

/* Reads "points N" from a sidecar text's first line. 0 or -1. */
int sweepfile_sidecar_points(const char *text, uint64_t *npoints);

/* Appends the row of `point` (axis values from sp, then with precision
 * m->reps, then metrics m) to f. 0/-1. */
SPECSIM_API int sweepfile_row(FILE *f, const sweepspec_t *sp, uint64_t point,
                              const metrics_summary_t *m, int precision);

/* Starts a new output: the CSV holding only the header, and its sidecar,
 * both written in full before either is renamed into place (an existing
 * file is replaced; a full disk leaves neither). 0 or -1. */
int sweepfile_create(const char *csv, const char *sidecar, const char *header,
                     err_t *err);


/* An output `what` (the option, for the message) at path that would replace
 * a sweep's CSV (its sidecar beside it says so) or a sweep's sidecar:
 * ERR_INPUT, naming --force. 0 when path is none (or not a regular file). */
SPECSIM_API int sweepfile_check_replace(const char *path, const char *what, err_t *err);

/* Sweep files are CSV: a name ending in .json is refused (ERR_INPUT), any
 * other is taken as it is. 0 or -1. */
SPECSIM_API int sweepfile_check_out(const char *csv, err_t *err);

/* Prepares `csv` for resuming the sweep described by sidecar/header: the
 * existing sidecar must equal `sidecar` and the CSV's header `header`
 * (ERR_INPUT otherwise: the file belongs to another sweep). A torn last line
 * is truncated away. Every row's point must be < total and belong to shard
 * si/sn; done[point] is set to 1 for each. *fresh = 1 (and nothing is read)
 * when the CSV does not exist or holds no complete header yet, in which case
 * the caller starts over with sweepfile_create. 0 or -1. */
int sweepfile_resume(const char *csv, const char *sidecar, const char *header,
                     uint64_t total, uint64_t si, uint64_t sn,
                     unsigned char *done, uint64_t *ndone, int *fresh,
                     err_t *err);

/* Writes buf[0..n) to fd with as few write() calls as the kernel allows, then,
 * when sync is set, fdatasync's it if fd is a regular file. 0 or -1
 * (ERR_RUNTIME, naming the file `name`: a full disk says which file). */
int sweepfile_append(int fd, const char *name, const char *buf, size_t n, int sync,
                     err_t *err);

/* Longest time finished rows wait unsynced. Syncing every batch cost 10% of
 * a -j 2 sweep of 1,000 half-millisecond points on a virtio disk (measured:
 * 0.29 s vs 0.26 s on tmpfs, where fdatasync is free). */
#define SWEEPFILE_SYNC_S 0.25

/* `specsim merge`: checks the parts belong to one sweep (equal sidecars and
 * headers, rows consistent), that together they hold every point, and
 * writes `out` (+ its sidecar) exactly as an unsharded run would have.
 * Returns 0 or -1: ERR_INPUT for parts of different sweeps or conflicting
 * rows, ERR_RUNTIME for missing points or I/O failures. */
SPECSIM_API int sweepfile_merge(const char *out, const char *const *parts, int nparts,
                    err_t *err);

#endif
