/* caltable — calibration tables (results/calibration/NAME.yaml): reading them
 * for the service model, writing them for build/calibrate.
 *
 * A table is only ever written by a real measurement (build/calibrate). Format
 * (YAML, one document):
 *
 *   format: specsim-calibration/1
 *   provenance:
 *     command: "build/calibrate --device cpu --model models/llm/llama-2-7b.yaml"
 *     specsim_version: "specsim 0.3.0 (commit 1a2b3c4)"   # the build that
 *                                      # measured (optional: older tables lack it)
 *     date: 2026-11-29T15:02:11Z
 *     host: hostname
 *     device: "AMD EPYC ... (2 cores)"   # CPU model or GPU name
 *     compiler: "gcc 12.2.0 -O3 ..."      # and for CUDA: nvcc, driver, runtime
 *     notes: free text (clocks, threads, ISA path chosen)
 *   device_kind: cpu | cuda
 *   model: llama-2-7b                     # the LLM card's name
 *   quant: w4a16 | fp16 | fp32 | w8a16
 *   ceilings:
 *     read_gbs: 21.3        # measured read bandwidth, GB/s (1e9 B/s)
 *     copy_gbs: 18.0        # optional (GPU: device-to-device copy)
 *     fp16_tflops: 0.0      # optional (GPU: large FP16 GEMM)
 *     read_multi_gbs: 31.5  # optional (CPU): read bandwidth with read_streams
 *     read_streams: 4       # sequential streams per thread; older tables
 *                           # lack both (read_gbs is one stream per thread)
 *   ops:                    # one flow mapping per measured shape
 *     - {op: linear, name: qkv, quant: w4a16, m: 1, n: 12288, k: 4096,
 *        time_s: 1.23e-4, gbs: 20.1, gflops: 0.82, ceiling_frac: 0.94,
 *        kernel: exact}     # optional: the CPU W4A16 kernel measured, exact
 *                           # (fp16 activations) or int8 (activations
 *                           # quantised to int8 per group); absent = exact
 *     - {op: attention, q: 5, context: 1024, heads: 32, kv_heads: 32,
 *        head_dim: 128, batch: 1, time_s: ..., gbs: ..., gflops: ...}
 *     - {op: token, m: 1, context: 0, time_s: ...}   # one whole forward step
 *                                                      # of the model (all layers
 *                                                      # + lm_head), M tokens
 *     - {op: token, m: 20, context: 1024, q: 5, batch: 4, time_s: ...}
 *                             # a step of `batch` sequences of q new tokens
 *                             # each (m = q·batch); q and batch are optional,
 *                             # default one sequence of m tokens
 *     - {op: token, m: 56, context: 0, logits: 1, time_s: ...}
 *                             # logits: rows per sequence the lm_head
 *                             # computed (0..q; default q, every row): 1 for
 *                             # a prefill, which needs its last row's only
 *
 * Linear `name`s: qkv (fused q,k,v projections, n = (heads+2·kv_heads)·head_dim),
 * o (n = k = hidden), gate_up (fused gate+up, n = 2·ffn; up only when not
 * gated: n = ffn), down (n = hidden, k = ffn), lm_head (n = vocab, k = hidden).
 * Shapes are per layer; time_s is the median of repeated runs in seconds.
 *
 * The reader refuses (ERR_INPUT at the row's FILE:LINE:COL) a shape given
 * twice, and a time_s below what the table's own ceilings allow for the
 * bytes and flops the operator cannot avoid, by more than CALTABLE_SLACK:
 * linear n·k weights at its quant; attention K and V (fp16) of context
 * tokens; token one layer's weights and the lm_head (the largest linear row
 * of each name). Without ceilings, no time below CALTABLE_MIN_TIME_S.
 */
#ifndef SPECSIM_CALTABLE_H
#define SPECSIM_CALTABLE_H

#include <stdio.h>

#include "base/err.h"

enum caltable_op { CAL_LINEAR = 0, CAL_ATTENTION, CAL_TOKEN };

/* How much faster than its ceilings allow a row may be (measurement noise,
 * a ceiling measured low), and the least time of any row. */
#define CALTABLE_SLACK 2.0
#define CALTABLE_MIN_TIME_S 1e-9

typedef struct caltable_row {
    enum caltable_op op;
    char name[32];      /* linear: qkv, o, gate_up, down, lm_head */
    char quant[16];     /* linear: precision of the weights */
    char kernel[16];    /* linear: CPU W4A16 kernel, "exact" or "int8" ("" = not recorded) */
    int m, n, k;        /* linear: tokens, output rows, input width; token: m */
    int q, context;     /* attention, token: new tokens per sequence, KV
                           length (token rows: the reader sets q = m / batch) */
    int heads, kv_heads, head_dim, batch;
    int logits;         /* token: the `logits` key as read (-1: absent) */
    int nohead;         /* token: rows per sequence that skipped the lm_head,
                           q − logits (0: none; rows built in code leave it) */
    double time_s;
    double gbs, gflops, ceiling_frac;   /* 0 where not recorded */
    int line;           /* source line, for messages (1-based; 0 = not read) */
    int column;         /* source column (1-based) */
} caltable_row_t;

typedef struct caltable {
    char path[512];
    char device_kind[16];
    char device[256];
    char model[64];
    char quant[16];
    char command[1024];
    char date[64];
    char host[128];         /* provenance.host (optional) */
    char compiler[512];     /* provenance.compiler (optional) */
    char notes[1024];       /* provenance.notes (optional) */
    char specsim_version[128]; /* provenance.specsim_version (optional) */
    double read_gbs, copy_gbs, fp16_tflops;
    double read_multi_gbs;  /* ceilings.read_multi_gbs (optional; 0 = absent) */
    double read_streams;    /* ceilings.read_streams: streams per thread (0 = absent) */
    int model_line, model_column;  /* where model and quant were read */
    int quant_line, quant_column;  /* (1-based; 0 = not read), for messages */
    caltable_row_t *rows;   /* owned */
    int nrows;
} caltable_t;

/* Reads a table. Malformed input: -1, err code ERR_INPUT, message
 * "FILE:LINE:COLUMN: key: problem" (key dotted, e.g. ops.3.time_s). Required:
 * format (exactly "specsim-calibration/1"), provenance.command, model, quant,
 * a non-empty ops list, and per row op, time_s and the op's shape keys
 * (linear: name m n k; attention: q context heads kv_heads head_dim; token: m
 * context). Optional text may be "" (e.g. provenance.notes, row quant).
 * Unknown keys anywhere are errors (with a "did you mean"). On
 * success the caller owns *out (caltable_fini); on failure *out is empty. */
int caltable_load(const char *path, caltable_t *out, err_t *err);
/* The same, read through the command's set of files (sim/io/infile.h). */
struct infiles;
int caltable_load_in(struct infiles *files, const char *path, caltable_t *out,
                     err_t *err);
void caltable_fini(caltable_t *t);

/* Writes a table in the format above (used by build/calibrate): every double
 * in the shortest form that reads back to the same value, strings
 * double-quoted, empty strings and zero optional numbers omitted, so
 * caltable_load(caltable_write(t)) == t (path, line and column aside, and
 * provenance.specsim_version: the writer stamps its own build, which measured).
 * Flushes f. Returns 0, or -1 on a write error. */
int caltable_write(const caltable_t *t, FILE *f);

/* caltable_write to path by outfile.h's rules (a new PATH.tmp.PID renamed
 * into place, so a failed run leaves no half table; a device or FIFO
 * written through; a directory refused), or to `dflt` (the caller's choice,
 * standard output for build/calibrate) when path is NULL or "". 0, or -1
 * with err "PATH: ..." (no temporary left behind). */
int caltable_save(const caltable_t *t, const char *path, FILE *dflt, err_t *err);

#endif
