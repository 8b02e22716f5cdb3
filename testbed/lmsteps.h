/* lmsteps — whole forward steps of the real-model verifier
 * (testbed/lmserver.h) timed as calibration-table rows (`op: token`,
 * sim/model/caltable.h), so that the simulator that predicts a --real-model run
 * prices its iterations from the steps that server really takes
 * (build/testbed steps --real-model; docs/testbed.md).
 *
 * A verify row is what one of the server's iterations does for `batch`
 * blocks: one llm_forward of batch spans of q = γ + 1 tokens, each over
 * `context` cached positions of its own sequence and with logits for all
 * q rows, then the greedy verdict of each block (kernels/llm/spec.h). A
 * prefill row is one span of P prompt tokens over an empty cache with the
 * logits of its last row and its argmax, as the server's last prefill
 * chunk. The time of a row is its median over reps rounds, each round
 * running every row once (after a warm-up round), so that a slow spell of
 * the machine falls on one round of every row rather than on one row;
 * measured on the calling thread at its own scheduling policy (the
 * server's forward passes run at SCHED_OTHER).
 */
#ifndef TESTBED_LMSTEPS_H
#define TESTBED_LMSTEPS_H

#include <stdio.h>

#include "base/err.h"

typedef struct lmsteps_opts {
    const char *model;   /* the GGUF file (its fp16 target is timed) */
    int gamma;           /* blocks of gamma + 1 tokens */
    int max_tokens;      /* batches of 1, 2, ... blocks while they fit */
    int context;         /* cached positions per sequence */
    int reps;            /* runs per row (median), ≥ 1 */
    const int *prefill;  /* prompt lengths to time, nprefill of them */
    int nprefill;
    int threads;         /* the forward pass's threads */
} lmsteps_opts_t;

/* Writes one comment line and one row per batch size, then one per prefill
 * length, to out. 0, or -1 with err (a bad model: ERR_INPUT; out of memory
 * or a write error: ERR_RUNTIME). */
int lmsteps_print(FILE *out, const lmsteps_opts_t *o, err_t *err);

#endif
