/* infile — reading the files a command is given: bounded, regular files
 * only, and each read once per command.
 *
 * infile_read refuses what is not a regular file where a file is expected
 * (a directory, a device such as /dev/zero, a FIFO — opened non-blocking and
 * checked with fstat before any read, so a FIFO without a writer never
 * blocks) and any file larger than its cap; "-" reads standard input, which
 * is bounded by the same cap. A leading UTF-8 byte-order mark is dropped.
 * Errors are ERR_INPUT "PATH: cannot open: <strerror>" or "PATH: not a
 * regular file (...)" or "PATH: N bytes; ... capped at M MiB".
 *
 * infiles_t is the set of files one command has read: the first request
 * for a path reads it from disk, later ones get the same bytes from memory
 * (safe from several threads), so a sweep's points see the same inputs even
 * when a file is edited while it runs, and a tiny point does not pay for
 * disk reads. It also lists what was read, for `check` and the sweep
 * sidecar to say which file was used: by its absolute path and the
 * SHA-256 of its bytes, taken as it is read.
 */
#ifndef SPECSIM_INFILE_H
#define SPECSIM_INFILE_H

#include "base/api.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "base/err.h"

/* Caps (docs/formats.md, "Input limits"): YAML documents (scenarios, cards,
 * calibration tables) and data files (acceptance traces, empirical value
 * files). Request traces have their own (WORKLOAD_TRACE_MAX_BYTES). */
#define INFILE_YAML_MAX ((size_t)16 << 20)
#define INFILE_DATA_MAX ((size_t)256 << 20)

/* Reads path ("-": standard input) whole into a NUL-terminated buffer the
 * caller frees; *len excludes the NUL. 0, or -1 with err set. */
int infile_read(const char *path, size_t cap, char **text, size_t *len,
                err_t *err);

typedef struct infiles infiles_t;

/* An empty set (NULL on allocation failure); freed with infiles_free. */
infiles_t *infiles_create(void);
void infiles_free(infiles_t *fs);

/* infile_read through the set: a copy (the caller frees it) of the bytes
 * read the first time path, or another name of the same file (by
 * datapath_absolute: "dir/t.csv" and "/abs/dir/t.csv"), was asked for. fs
 * NULL: infile_read. Thread-safe.
 * A failed read is not remembered (the error is reported each time). */
int infiles_read(infiles_t *fs, const char *path, size_t cap, char **text,
                 size_t *len, err_t *err);

/* The file's text parsed as one YAML document (sim/io/ynode.h), parsed once
 * and kept: the tree is the set's (read-only, valid while fs lives; its
 * nodes name the path as their src). *tree NULL for an empty document.
 * 0, or with err: -1 when it cannot be read, -2 for a syntax error. fs must
 * not be NULL. */
struct ynode;
int infiles_yaml(infiles_t *fs, const char *path, size_t cap,
                 const struct ynode **tree, err_t *err);

/* How many distinct files the set holds, and the i-th path in the order
 * they were first read (valid while fs lives). */
SPECSIM_API size_t infiles_count(infiles_t *fs);
SPECSIM_API const char *infiles_path(infiles_t *fs, size_t i);
/* Reads from disk so far (each file once, however often it was asked). */
size_t infiles_disk_reads(infiles_t *fs);

/* One comment line per file, in the order read: "# read ABSPATH sha256
 * HEX" (docs/formats.md "Sidecars and the files they read"), for `check`
 * output and sidecars: each file's absolute canonical path (taken when it
 * was read, sim/base/datapath.h datapath_absolute; "-" for standard input)
 * and the SHA-256 of the bytes read (sim/base/sha256.h), so that a rerun
 * from anywhere reads the same file.
 * 0, or -1 on a write error. infiles_reads_text: the same as a string the
 * caller frees (NULL out of memory). */
SPECSIM_API int infiles_write_reads(infiles_t *fs, FILE *f);
char *infiles_reads_text(infiles_t *fs);
/* Reads one such line (line[0..len), without its '\n') back: 0 with the
 * path (NUL-terminated, pathsz bytes at most) and the digest, -1 when it
 * is not one. */
int infiles_reads_parse(const char *line, size_t len, char *path, size_t pathsz,
                        uint8_t sha[32]);
/* Whether the set read the file whose absolute path is abs; its digest in
 * sha then. */
int infiles_find_abs(infiles_t *fs, const char *abs, uint8_t sha[32]);

/* Text readers split a file's bytes at '\n' and stop a line at its first
 * NUL byte, so a NUL would silently drop the rest of its line and, with
 * strchr-based splitting, the rest of the file. 1 when text[0..len) holds
 * one, with the 1-based *line and *col (bytes) of the first; 0 when none.
 * Each reader refuses such a file in its own words, with INFILE_NUL_WHY. */
int infile_find_nul(const char *text, size_t len, int *line, int *col);
#define INFILE_NUL_WHY "a NUL byte (binary data, or a damaged file): " \
    "text would stop there and the rest of the file be dropped"

/* What a file of mode m is, for a message refusing it: "a directory", "a
 * FIFO", ..., or "not a plain file". */
const char *infile_kind_name(mode_t m);

#endif
