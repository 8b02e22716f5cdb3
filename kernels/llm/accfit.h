/* accfit — the simulator's acceptance models (docs/design.md, "Acceptance
 * models") fitted to measured outcome streams, their block laws, and how
 * well each law matches the measured accepted lengths.
 *
 *   iid         α = accepted / evaluated outcomes (maximum likelihood).
 *   positional  α_i = P(accepted at draft position i | reached it) in blocks
 *               of ACCFIT_POS drafts (maximum likelihood of the block
 *               counts). A position no block reached carries the value
 *               before it (it changes no block law of the fitted values:
 *               a position after an α of 0 is never reached either), so
 *               every value lies in [0, 1] as the simulator requires.
 *   beta        each text's α ~ Beta(a, b), then iid: maximum likelihood of
 *               the beta-binomial counts (accepted of evaluated) of the
 *               texts (Nelder–Mead on log a, log b). The simulator draws
 *               one α per tenant, which then holds for all its requests.
 *   markov      a hidden good/bad state emitting accept with α_good or
 *               α_bad and switching after every evaluated draft — the
 *               simulator's markov model (sim/model/accept_markov.c), whose
 *               tenant starts in the chain's stationary law and carries
 *               its state from block to block and from request to request,
 *               never reset. So the texts are read as one tenant's
 *               requests one after another: one chain through all of them
 *               (in the order given), started in the stationary law.
 *               Maximum likelihood by EM (Baum–Welch) whose M-step keeps
 *               the initial law tied to the stationary law of the
 *               transitions (the transition step maximised numerically:
 *               generalised EM, the likelihood never falls), from
 *               ACCFIT_EM_STARTS starting points, the best few run to
 *               convergence; the best likelihood is kept. The state called
 *               good is the one with the larger α.
 * The block law of a model for γ is the distribution of a block's accepted
 * drafts a (0..γ). For markov it is the law at a block's start state in the
 * chain of block starts' stationary regime, which is what blocks read one
 * after another see.
 */
#ifndef SPECSIM_ACCFIT_H
#define SPECSIM_ACCFIT_H

#include <stddef.h>

#include "accstat.h"
#include "base/err.h"

#define ACCFIT_POS 8
#define ACCFIT_EM_STARTS 12

enum accfit_model { ACCFIT_IID, ACCFIT_POSITIONAL, ACCFIT_BETA, ACCFIT_MARKOV, ACCFIT_MODELS };

typedef struct accfit {
    double alpha;                    /* iid */
    double pos[ACCFIT_POS];          /* positional α_1 .. α_8 */
    long pos_reached[ACCFIT_POS];    /* blocks of 8 that reached position i (0: carried) */
    double a, b;                     /* beta */
    double good, bad, p_gb, p_bg;    /* markov */
    double loglik_iid, loglik_markov;   /* of the streams (natural log) */
    int em_iterations;               /* of the start kept */
} accfit_t;

const char *accfit_name(int model);
/* Parameters of the model, as the simulator's scenario keys take them. */
int accfit_params(int model);

/* Fits every model to the streams (and their per-stream counts for beta).
 * 0, or -1 with err (no outcome). */
int accfit_fit(const accstat_stream_t *st, int ns, const accstat_t *s, accfit_t *f, err_t *err);

/* The markov fit alone: the streams as given, each a stretch of the chain
 * started in its stationary law (accfit_fit passes the texts joined into
 * one stream). Fills good, bad, p_gb, p_bg, loglik_markov and
 * em_iterations. 0, or -1 with err. */
int accfit_markov(const accstat_stream_t *st, int ns, accfit_t *f, err_t *err);
/* The log-likelihood of the streams under the markov model of f, each
 * stream starting in the chain's stationary law (a frozen chain: 1/2
 * each, as the simulator). */
double accfit_markov_loglik(const accfit_t *f, const accstat_stream_t *st, int ns);

/* law[0..gamma] of the model for blocks of gamma (≤ ACCSTAT_GMAX). */
void accfit_law(const accfit_t *f, int model, int gamma, double *law);
/* P(accepted at position i | reached i) under law[0..gamma] (NAN when
 * the law never reaches i). */
double accfit_law_position(const double *law, int gamma, int i);

/* Pearson's χ² of the measured complete blocks of gamma against the law.
 * Bins: a = 0, 1, ..., gamma, each closed once its expected count reaches
 * 5 (a bin still under 5 at the end joins the one before), *bins of them;
 * df = *bins − 1 − params. *p is the χ² tail probability (NAN when df < 1);
 * *tv the total variation distance between the measured and the model's
 * law (unpooled). Returns the statistic (0 without blocks). */
double accfit_chi2(const accstat_t *s, int gamma, const double *law, int params, int *bins,
                   int *df, double *p, double *tv);

/* One model's fit at one gamma. */
typedef struct accfit_gof {
    double law[ACCSTAT_GMAX + 1];
    long blocks;
    double chi2, p, tv;   /* chi2 and p NAN when there is no test */
    int bins, df;
    int exact;            /* positional at γ = ACCFIT_POS, or at a smaller γ whose
                             blocks are the blocks of ACCFIT_POS (no block of 8
                             accepted γ or more): fitted to these very block
                             counts, equal by construction, not a test */
} accfit_gof_t;

/* The parameters the law of the model at gamma depends on (positional:
 * min(γ, ACCFIT_POS); the others all of theirs), which the test's degrees
 * of freedom lose. */
int accfit_params_at(int model, int gamma);
void accfit_gof(const accstat_t *s, const accfit_t *f, int model, int gamma, accfit_gof_t *g);

/* The `--set` overrides that put the fitted model into a scenario, e.g.
 * "--set acceptance.model=iid --set acceptance.alpha=0.61". 0, or -1 when
 * buf is too small. */
int accfit_overrides(const accfit_t *f, int model, char *buf, size_t size);

#endif
