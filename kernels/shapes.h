/* shapes — the per-layer linear shapes of an LLM card, named and ordered as
 * in the calibration format (sim/model/caltable.h). The CPU driver (calibrate.c)
 * and the CUDA one (cuda/calibrate_cuda.cu) both measure exactly these, so
 * they come from one place; plain C, usable from nvcc code.
 */
#ifndef SPECSIM_SHAPES_H
#define SPECSIM_SHAPES_H

#include "model/cards.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct shapes_linear {
    char name[16];        /* qkv, o, gate_up, down, lm_head */
    int n, k;             /* output rows, input width */
} shapes_linear_t;

#define SHAPES_NLINEAR 5

/* Fills out in the order above: qkv n = (heads + 2·kv_heads)·head_dim,
 * head_dim = hidden / heads; o n = k = hidden; gate_up n = 2·ffn (ffn when
 * not gated); down n = hidden, k = ffn; lm_head n = vocab, k = hidden.
 * Returns SHAPES_NLINEAR. */
int shapes_linear(const llm_card_t *c, shapes_linear_t out[SHAPES_NLINEAR]);

#ifdef __cplusplus
}
#endif

#endif
