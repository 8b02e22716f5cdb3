/* accfit — the simulator's acceptance models (docs/design.md, "Acceptance
 * models") fitted to measured outcome streams, their block laws, and how
 * well each law matches the measured accepted lengths.
 *
 *   iid         α = accepted / evaluated outcomes (maximum likelihood).
 *   positional  α_i = P(accepted at draft position i | reached it) in blocks
 *               of ACCFIT_POS drafts (maximum likelihood of the block
 *               counts; the last value repeats for longer blocks).
 *   beta        each text's α ~ Beta(a, b), then iid: maximum likelihood of
 *               the beta-binomial counts of the texts (Nelder–Mead on
 *               log a, log b).
 *   markov      a hidden good/bad state emitting accept with α_good or
 *               α_bad and switching after every evaluated draft: the hidden
 *               Markov model fitted by Baum–Welch (EM) on the streams, the
 *               state called good the one with the larger α.
 * The block law of a model for γ is the distribution of a block's accepted
 * drafts a (0..γ). For markov it is the law at a block's start state in the
 * chain of block starts' stationary regime, which is what blocks read one
 * after another see.
 */
#ifndef SPECSIM_ACCFIT_H
#define SPECSIM_ACCFIT_H

#include "accstat.h"
#include "err.h"

#define ACCFIT_POS 8

enum accfit_model { ACCFIT_IID, ACCFIT_POSITIONAL, ACCFIT_BETA, ACCFIT_MARKOV, ACCFIT_MODELS };

typedef struct accfit {
    double alpha;                    /* iid */
    double pos[ACCFIT_POS];          /* positional α_1 .. α_8 */
    double a, b;                     /* beta */
    double good, bad, p_gb, p_bg;    /* markov */
    double loglik_markov;
    int em_iterations;
} accfit_t;

const char *accfit_name(int model);
/* Parameters of the model, as the simulator's scenario keys take them. */
int accfit_params(int model);

/* Fits every model to the streams (and their per-stream counts for beta).
 * 0, or -1 with err (no outcome, a degenerate stream set). */
int accfit_fit(const accstat_stream_t *st, int ns, const accstat_t *s, accfit_t *f, err_t *err);

/* law[0..gamma] of the model for blocks of gamma (≤ ACCSTAT_GMAX). */
void accfit_law(const accfit_t *f, int model, int gamma, double *law);

/* Pearson's χ² of the measured complete blocks of gamma against the law,
 * bins with an expected count under 5 merged into their neighbour; df =
 * bins − 1 − the model's parameters. *p is the χ² tail probability (NAN
 * when df < 1); *tv the total variation distance between the measured and
 * the model's law. Returns the statistic. */
double accfit_chi2(const accstat_t *s, int gamma, const double *law, int params, int *df,
                   double *p, double *tv);

/* The `--set` overrides that put the fitted model into a scenario, e.g.
 * "--set acceptance.model=iid --set acceptance.alpha=0.61". */
int accfit_overrides(const accfit_t *f, int model, char *buf, size_t size);

#endif
