/* calwrite — what build/calibrate (CPU here, CUDA in kernels/cuda/) needs to
 * emit a calibration table in the format of sim/caltable.h: the model's
 * linear-layer shapes, provenance strings, and the YAML writer itself. Kept
 * apart from the measurement driver so it has no dependencies beyond the
 * headers (usable from C++ / nvcc code too).
 */
#ifndef SPECSIM_CALWRITE_H
#define SPECSIM_CALWRITE_H

#include <stddef.h>
#include <stdio.h>

#include "caltable.h"
#include "cards.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct calwrite_prov {
    char command[1024];   /* exact command line */
    char date[32];        /* UTC, 2026-11-29T15:02:11Z */
    char host[256];
    char device[256];     /* CPU model or GPU name */
    char compiler[512];   /* compiler version and flags (and CUDA versions) */
    char notes[1024];     /* threads, ISA path, method, machine load */
} calwrite_prov_t;

typedef struct calwrite_shape {
    char name[16];        /* qkv, o, gate_up, down, lm_head */
    int n, k;
} calwrite_shape_t;

#define CALWRITE_NSHAPES 5

/* The per-layer linear shapes of a model, in the order above (caltable.h
 * names): qkv n = (heads + 2·kv_heads)·head_dim, head_dim = hidden / heads;
 * o n = k = hidden; gate_up n = 2·ffn (ffn when not gated); down n = hidden,
 * k = ffn; lm_head n = vocab, k = hidden. Returns CALWRITE_NSHAPES. */
int calwrite_linear_shapes(const llm_card_t *c, calwrite_shape_t out[CALWRITE_NSHAPES]);

/* Provenance helpers: the command line joined and shell-quoted where needed,
 * the current UTC date, the host name. */
void calwrite_command(int argc, char **argv, char *buf, size_t n);
void calwrite_date_utc(char *buf, size_t n);
void calwrite_host(char *buf, size_t n);

/* Writes the table: provenance from *p; device_kind, model, quant,
 * ceilings and rows from *t (t's own device/command/date are not used).
 * 0, or -1 on a write error. */
int calwrite_table(FILE *f, const calwrite_prov_t *p, const caltable_t *t);

#ifdef __cplusplus
}
#endif

#endif
