/* scenario — the loader: YAML scenario files into validated, fully
 * resolved descriptions (scenario_t, sim/desc/scenario.h).
 *
 * Loading goes: YAML file -> node tree (with line:column marks) -> `--set`
 * overrides applied to the tree by dotted path -> resolution through the key
 * table (type, unit, range, default) into scenario_t. Tenant groups inherit
 * every key of the `tenants:` section and override what they give; the
 * top-level `slo:` section is resolved per group the same way (a group's own
 * `slo:` overrides it key by key: tenant_group_t.slo). Replica groups
 * (cloud.replica_groups) inherit the `cloud:` keys they may set the same
 * way; cloud.replicas beside them is refused. Errors
 * name FILE:LINE:COLUMN and the dotted key; unknown keys get a "did you mean".
 *
 * `--set` errors read "--set:N:COL: path: problem": N = which `--set`
 * (1-based, counting only those), COL = 1-based column inside its
 * "PATH=VALUE" text. Other overrides name their own origin (--reps, a sweep
 * axis in its file: see scenario_override_t). Every check is made while
 * the YAML nodes are at hand — also those that need the whole scenario (a
 * batch token limit against gamma, the target's weights against the GPU
 * memory, cards against calibration tables, the output file's format) — so
 * every error points at the key as written. Those that need a built model
 * run in the build step (sim/config/build.h), which the loader calls with
 * the nodes at hand and whose result it keeps in scenario_t.built, so a
 * command builds each service model and the request trace once.
 *
 * A path may address list items by index or by their `name:`
 * (tenants.groups.phones), index = length appends; missing mappings are
 * created; a path that enters a card given as a file (cloud.gpu.mem_bw)
 * turns it into {base: FILE, ...}. An empty VALUE, a null value (here or in
 * the file) for a key that takes a value, and a path into the sweep: or
 * optimize: sections (read from the file by their own commands) are errors:
 * nothing given is silently dropped.
 *
 * Inputs are read once per command (sim/io/infile.h): a scenario_src_t holds
 * the scenario's text parsed once and the set of files its loads read
 * (cards, calibration tables, traces), so every load of a command — a
 * sweep's points, the checks of its axes — sees the same bytes even when a
 * file changes meanwhile, and pays for no disk reads after the first.
 * Relative paths in a scenario are looked up next to it, then in the
 * specsim root (sim/base/datapath.h), never in the working directory.
 *
 * Units: durations `40ms`, `150us`, `2s`, `1min` (stored in seconds); rates
 * `100Mbps`, `1Gbps`, `inf` (stored in bits/s, INFINITY for inf); sizes `4GiB`,
 * `512MB`, `64B`, `1KiB`, `1kB` (stored in bytes); arrival rates `2/s`,
 * `120/min`, `7200/h` (stored per second). A bare number is accepted where
 * the key has no unit (counts, probabilities) and, for files written before
 * they took units, in tenants.workload.rate (per second) and
 * tenants.network.overhead_bytes / bytes_per_token (bytes). `check` prints
 * every quantity with its unit.
 */
#ifndef SPECSIM_SCENARIO_H
#define SPECSIM_SCENARIO_H

#include "base/api.h"

#include <stdint.h>
#include <stdio.h>

#include "base/err.h"
#include "desc/scenario.h"

/* A `--set PATH=VALUE` override; value is parsed as a YAML scalar or flow
 * node ("{dist: exponential, mean: 6ms}", "[1, 2]").
 *
 * `src` says where it was written, for messages. NULL: a `--set` option,
 * "--set:N:COL" with N counting only the overrides whose src is NULL, in
 * order. Otherwise src names it: with line 0 it has no position (an option
 * such as --reps: "--reps: replications: ..."); else the path was written at
 * line:col of src and the value starts at vline:vcol (a sweep axis in its
 * scenario file). */
typedef struct scenario_override {
    const char *path;
    const char *value;
    const char *src;
    int line, col;
    int vline, vcol;
} scenario_override_t;

/* Loads, applies the overrides in order, validates and resolves into *out
 * (every default filled in, cards loaded). path "-" reads stdin. A file
 * without a document (empty, or only comments) is an ERR_INPUT error
 * "FILE: empty scenario". On error
 * returns -1 with err filled (code ERR_INPUT, message FILE:LINE:COL: key: ...)
 * and *out left empty. The caller owns *out and frees it with
 * scenario_fini(). */
SPECSIM_API int scenario_load(const char *path, const scenario_override_t *ov, int nov,
                  scenario_t *out, err_t *err);
/* scenario_read: the whole file (path "-": standard input) as a
 * NUL-terminated buffer the caller frees. scenario_load_text: scenario_load
 * of a file whose text was read already, so that one text can be loaded more
 * than once — also from standard input, which cannot be read twice. */
int scenario_read(const char *path, char **text, size_t *len, err_t *err);
int scenario_load_text(const char *path, const char *text, size_t len,
                       const scenario_override_t *ov, int nov, scenario_t *out,
                       err_t *err);
/* Same, from a YAML string; `name` is used in messages in place of a file.
 * An empty string is every default (the overrides may give the rest). */
int scenario_load_string(const char *name, const char *yaml,
                         const scenario_override_t *ov, int nov,
                         scenario_t *out, err_t *err);
SPECSIM_API void scenario_fini(scenario_t *s);
/* For a loaded scenario changed in code (its cards, calibration, times, KV
 * capacity, protocols or workload), which a run would otherwise take from
 * the old build (it refuses only a build that no longer fits: other group
 * counts, a service model it now needs): frees what the loader built from it
 * (scenario_t.built) and builds again from what it says now, so that the
 * run sees the change; its files are read again, and errors name the key
 * without a position. 0, or -1 with err (s->built is then NULL, and a run
 * builds, and refuses, on its own). */
SPECSIM_API int scenario_rebuild(scenario_t *s, err_t *err);

/* A scenario parsed once (see the top of this file). scenario_src_open reads
 * the file (path "-": standard input) once; scenario_src_text takes text
 * already read from that path; scenario_src_string a YAML string named
 * `name` in messages (no directory: relative files come from the specsim
 * root). 0, or -1 with err (*out NULL). The caller frees *out with
 * scenario_src_free. */
typedef struct scenario_src scenario_src_t;
SPECSIM_API int scenario_src_open(const char *path, scenario_src_t **out, err_t *err);
int scenario_src_text(const char *path, const char *text, size_t len,
                      scenario_src_t **out, err_t *err);
SPECSIM_API int scenario_src_string(const char *name, const char *yaml,
                        scenario_src_t **out, err_t *err);
SPECSIM_API void scenario_src_free(scenario_src_t *sc);
/* scenario_load of the source: its tree copied, the overrides applied,
 * resolved; the files it names are read through the source's set. Safe to
 * call from several threads on one source. */
SPECSIM_API int scenario_src_load(const scenario_src_t *sc, const scenario_override_t *ov,
                      int nov, scenario_t *out, err_t *err);
/* The whole text as read (NUL-terminated; *len its length when len is not
 * NULL), for the readers of the sweep: and optimize: sections. */
const char *scenario_src_body(const scenario_src_t *sc, size_t *len);
/* The name messages give it: the path, "<stdin>", or the string's name. */
const char *scenario_src_name(const scenario_src_t *sc);
/* The set of files the loads read (sim/io/infile.h): what was used. */
SPECSIM_API struct infiles *scenario_src_files(const scenario_src_t *sc);
/* Tree nodes copied by all loads so far: each load copies the scenario
 * without its sweep: section, so the count per load does not grow with the
 * number of axis values (what makes validating a long axis linear). */
size_t scenario_src_cloned(const scenario_src_t *sc);

/* Prints the fully resolved scenario as YAML that scenario_load accepts and
 * that resolves to the same scenario (round trip), from any directory: data
 * files (request traces, acceptance files, calibration tables) are named
 * by their absolute paths (sim/base/datapath.h datapath_absolute). Returns
 * 0 or -1 on a write error. */
SPECSIM_API int scenario_write_yaml(const scenario_t *s, FILE *f);
/* The "# read PATH sha256 HEX" lines of the files s's load read (nothing
 * when none): a sidecar starts with them, and a rerun of it warns
 * (err_warn, sim/base/err.h) when a file it reads again at PATH holds other
 * bytes. 0, or -1 on a write error. */
SPECSIM_API int scenario_write_reads(const scenario_t *s, FILE *f);


#endif
