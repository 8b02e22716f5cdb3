/* specrate — closed-form tokens per second of one tenant's speculation
 * (derivations in sim/model/specrate.c; docs/metrics.md, "The closed
 * forms"). Pure functions of their arguments. */
#ifndef SPECSIM_SPECRATE_H
#define SPECSIM_SPECRATE_H

#include "model/accept.h"

/* The per-block timing that the protocols share (seconds). */
typedef struct specrate_pipe {
    int gamma, window;
    double d, v;
    double block_d;              /* drafting one block: gamma·d for a chain,
                                    one step per level for a token tree */
    double up_ser, up_prop;      /* block upload: serialisation, propagation */
    double down_ser, down_prop;  /* verdict download */
} specrate_pipe_t;

/* Tokens per second of one tenant with iid acceptance alpha in [0, 1),
 * blocks of gamma >= 1 drafts at d seconds each, and a round trip of rtt
 * seconds from a block's send to its verdict (links, queueing and
 * verification all in it). Sync: E[a+1] / (gamma·d + rtt), E[a+1] =
 * (1 − α^(γ+1))/(1 − α). Async: the renewal formula with window blocks in
 * flight, the whole round trip as one delay. The adaptive
 * speculation-length policies evaluate them per block. */
double specrate_sync(double alpha, int gamma, double d, double rtt);
double specrate_async(double alpha, int gamma, double d, double rtt, int window);
/* specrate_sync as a gamma_rate_fn (sim/model/gamma.h): the window is
 * unused (one block at a time). */
double specrate_sync_rate(double alpha, int gamma, double d, double rtt, int window);

/* Seconds to serialise bytes at bps bits per second; 0 for an unlimited
 * (infinite) or unset (<= 0) rate. */
double specrate_link_s(double bytes, double bps);

/* For a block law L (accept_cfg_law; a mixture averages its parts with
 * their weights): the expected tokens a sync block commits, E[a+1], and the
 * async rate over the pipeline pp (NAN when out of memory). */
double specrate_law_sync_len(const accept_law_t *L);
double specrate_law_async(const specrate_pipe_t *pp, const accept_law_t *L);

#endif
