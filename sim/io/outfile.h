/* outfile — where a command's output files go, and how they get there whole.
 *
 * Every file a command writes (run --out, --trace, --per-tenant, sweep and
 * merge CSVs and their sidecars, calibration tables) goes through here, so
 * that one set of rules holds for all of them (docs/formats.md, "Output
 * files"):
 *
 * - A path that does not exist or names a regular file is written
 *   atomically: a temporary PATH.tmp.PID beside it, flushed and fsynced,
 *   then renamed onto PATH. A symbolic link to a regular file keeps its
 *   link: the file it points to is the one replaced.
 * - A character device or a FIFO (/dev/null, a terminal, a named pipe) is
 *   written through: opened for writing as it is, never created, truncated,
 *   renamed over or given a sidecar.
 * - Anything else (a directory, a block device, a socket, a link to nothing)
 *   is refused before anything is written.
 *
 * Temporaries are listed in a process-wide registry while they exist; on
 * SIGINT, SIGTERM or SIGHUP the handler installed with the first one
 * removes them and then ends the process as the signal would have (a signal
 * the process ignores, as under nohup, stays ignored). The signals are
 * base/thread.h's, which every thread the code creates blocks, so that they
 * reach the thread that calls outfile.
 *
 * outfile_distinct refuses outputs that are one of the command's inputs or
 * each other, compared by device and inode when both exist, else by their
 * absolute paths with the directories' symbolic links resolved;
 * outfile_not_read refuses outputs that are a file the scenario reads.
 */
#ifndef SPECSIM_OUTFILE_H
#define SPECSIM_OUTFILE_H

#include "base/api.h"

#include <stdio.h>

#include "base/err.h"

/* Room for a command-line path (PATH_MAX on Linux) plus the suffixes. */
enum { OUTFILE_PATH_MAX = 4096 + 64 };

typedef enum outfile_kind {
    OUTFILE_NEW,       /* does not exist yet: created atomically */
    OUTFILE_REGULAR,   /* a regular file (maybe through a link): replaced atomically */
    OUTFILE_STREAM     /* a character device or a FIFO: written through */
} outfile_kind_t;

/* What writing to path would do. 0, or -1 with ERR_INPUT ("PATH: is a
 * directory: ...") for a target that is refused. */
SPECSIM_API int outfile_kind(const char *path, outfile_kind_t *kind, err_t *err);

/* One output being written. Fill it with outfile_open; it owns its FILE
 * and its temporary until outfile_commit or outfile_abort. */
typedef struct outfile {
    FILE *f;
    int stream;                      /* written through: no temporary */
    const char *name;                /* the caller's path, for messages (not owned) */
    char dest[OUTFILE_PATH_MAX];     /* what the temporary is renamed onto */
    char tmp[OUTFILE_PATH_MAX + 32]; /* "" when there is none */
    int slot;                        /* its registry slot + 1; 0 = none */
} outfile_t;

/* Opens path for writing by the rules above. 0, or -1 with err (ERR_INPUT
 * for a refused target, ERR_RUNTIME when it cannot be created) and nothing
 * left behind. */
SPECSIM_API int outfile_open(outfile_t *o, const char *path, err_t *err);

/* Flushes, fsyncs (files only) and closes o->f, then renames the temporary
 * onto its destination. -1 with err naming o->name on failure; the
 * temporary is removed either way. */
SPECSIM_API int outfile_commit(outfile_t *o, err_t *err);

/* Two halves of outfile_commit, for outputs that must appear together
 * (results and their sidecar): outfile_close makes the bytes durable (on
 * failure the temporary is removed), outfile_publish renames. After a
 * successful close, outfile_abort still removes the temporary. */
SPECSIM_API int outfile_close(outfile_t *o, err_t *err);
SPECSIM_API int outfile_publish(outfile_t *o, err_t *err);

/* Closes o->f if open and removes the temporary if any; safe to call twice
 * and on a zeroed outfile_t. */
SPECSIM_API void outfile_abort(outfile_t *o);

/* For a command that can fail late (calibrate measures for minutes): 0 when
 * path is a target outfile_open would accept and, for a file, its temporary
 * can be created (it is removed again). -1 with err otherwise. */
SPECSIM_API int outfile_probe(const char *path, err_t *err);

/* One path a command reads or writes, for outfile_distinct. */
typedef struct outfile_role {
    const char *path;   /* NULL or "-" (standard input or output): skipped */
    const char *what;   /* "the scenario", "--trace", "--out's sidecar", ... */
    int output;         /* 1: written by the command */
} outfile_role_t;

/* 1 when a and b name the same file (see above), else 0. */
int outfile_same(const char *a, const char *b);

/* Refuses (ERR_INPUT, naming both paths) any output that is the same file
 * as another role, input or output. Character devices are exempt: writing
 * /dev/null twice clobbers nothing. 0 or -1. */
SPECSIM_API int outfile_distinct(const outfile_role_t *r, int n, err_t *err);

/* Refuses (ERR_INPUT, naming both) any output of r that is one of the files
 * in fs, the set a command's scenario loads read (cards, calibration tables,
 * request and acceptance traces, empirical value files: sim/io/infile.h), by
 * outfile_same. Call it after every load the command checks before it runs
 * (a sweep's axes may name more files). 0 or -1. */
struct infiles;
SPECSIM_API int outfile_not_read(const outfile_role_t *r, int n, struct infiles *fs, err_t *err);

#endif
