/* calibrate — the CPU measurement driver behind build/calibrate: argument
 * parsing, the calibration run (read ceiling, every linear shape at M = 1..16,
 * attention, whole draft-model tokens) and the --bench comparison of W4A16
 * against fp16 / fp32 GEMV. Library code: fills an err_t, never exits;
 * progress goes to the FILE it is given (stderr from the CLI, NULL with
 * --quiet: none).
 */
#ifndef SPECSIM_CALIBRATE_H
#define SPECSIM_CALIBRATE_H

#include <stddef.h>
#include <stdio.h>

#include "base/err.h"

typedef struct calibrate_args {
    char device[16];      /* cpu (default) | cuda */
    char model[512];      /* LLM card path (required unless bench) */
    char quant[16];       /* w4a16 (default) | fp16 */
    char out[512];        /* table path; "" = stdout */
    char log[512];        /* --device cuda's --log as given; "" = its default
                             (calibrate_cuda_log_path) */
    char isa[16];         /* auto (default) | scalar | avx2 | avx512 | neon */
    char kernel[16];      /* W4A16 kernel: exact (default) | int8 (gemv.h) */
    int threads;          /* 0 = one per online CPU */
    int quick;            /* fewer repetitions and contexts (tests, smoke runs) */
    int bench;            /* --bench: W4A16 vs fp16 vs fp32 GEMV side by side */
    int quiet;            /* --quiet: no progress line on stderr */
    int help;
    int version;          /* --version: print it and do nothing else */
    size_t llc_bytes;     /* 0: detect; tests set a small value so the
                             rotated working sets (4× LLC) stay small */
    char command[1024];   /* the exact command line, for provenance */
    const char *cuda_opt; /* first option only --device cuda takes (NULL: none);
                             calibrate_cuda_run parses those itself */
    const char *table_opt; /* first of --model, --out, --quant given (NULL:
                              none): options of a table, refused with --bench */
} calibrate_args_t;

/* Parses argv into *a (defaults filled). With --version anywhere (not as a
 * value) only a->version is set. Usage errors: -1, ERR_INPUT. */
int calibrate_parse_args(int argc, char **argv, calibrate_args_t *a, err_t *err);
void calibrate_usage(FILE *f);
/* 1 when opt is an option that takes the next argument as its value. */
int calibrate_takes_value(const char *opt);

/* The CPU calibration: measures, then writes the table to a->out (through a
 * temporary file renamed into place) or stdout. 0 or -1. */
int calibrate_cpu(const calibrate_args_t *a, FILE *progress, err_t *err);

/* The benchmark: prints to out, per shape, W4A16 GEMV GB/s, its fraction of
 * the measured read ceiling, and its speedup over fp16 and fp32 GEMV run
 * with the same SIMD path on the same shapes. 0 or -1. */
int calibrate_bench(const calibrate_args_t *a, FILE *out, err_t *err);

/* The GEMV shapes of --bench (n x k weights), which scripts/ggml-anchor.c
 * runs too so that the two tables line up. */
typedef struct calibrate_shape {
    const char *what;
    int n, k;
} calibrate_shape_t;
#define CALIBRATE_BENCH_NSHAPES 5
extern const calibrate_shape_t calibrate_bench_shapes[CALIBRATE_BENCH_NSHAPES];

/* How calibrate times a kernel (on wallclock_s, sim/base/wallclock.h), shared
 * with scripts/ggml-anchor.c so that ggml's kernels are measured alike. */
/* qsort comparator for ascending doubles (medians of samples). */
int calibrate_cmp_double(const void *a, const void *b);
/* How many distinct copies of a working set of `bytes` to rotate through so
 * that all of them together exceed 4x the LLC (llc bytes; 1 to 4096). */
int calibrate_copies_for(double bytes, size_t llc);

#endif
