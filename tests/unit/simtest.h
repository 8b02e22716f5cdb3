/* Reference laws and scenarios shared by the unit tests (test_accept,
 * test_closed_form, test_scenario): derived here by hand, independently of
 * sim/, so that two tests checking the same law use one derivation.
 * Header-only, all static inline: a test includes what it needs. */
#ifndef SIMTEST_H
#define SIMTEST_H

#include <math.h>

/* The hook scenario (sync, γ = 4, α = 0.7, d = 10 ms, rtt = 40 ms,
 * v = 5 ms): test_closed_form checks its metrics, test_scenario its
 * loading and overrides. */
#define SIMTEST_SYNC_HOOK_YAML                                                   \
    "name: sync-closed-form\n"                                                   \
    "seed: 7\n"                                                                  \
    "duration: 300s\n"                                                           \
    "warmup: 10s\n"                                                              \
    "replications: 4\n"                                                          \
    "protocol: {mode: sync, gamma: 4}\n"                                         \
    "acceptance: {model: iid, alpha: 0.7}\n"                                     \
    "tenants:\n"                                                                 \
    "  count: 1\n"                                                               \
    "  edge: {draft_time: 10ms}\n"                                               \
    "  network: {rtt: 40ms, jitter: none, uplink: inf, downlink: inf}\n"         \
    "  workload: {arrival: closed, think: 0s, prompt_tokens: 1, output_tokens: " \
    "100000000}\n"                                                               \
    "cloud:\n"                                                                   \
    "  replicas: 1\n"                                                            \
    "  verify_time: 5ms\n"                                                       \
    "  batching: {policy: continuous, max_batch: 1}\n"

/* Law of a (leading accepted drafts) under iid alpha, block of gamma:
 * P(a >= k) = alpha^k, so P(a = k) = alpha^k (1 - alpha) (k < gamma) and
 * P(a = gamma) = alpha^gamma. pk has gamma + 1 entries. */
static inline void simtest_law_iid(double alpha, int gamma, double *pk)
{
    for (int k = 0; k < gamma; k++) pk[k] = pow(alpha, k) * (1 - alpha);
    pk[gamma] = pow(alpha, gamma);
}

/* E[a] per block for the two-state markov model (good ag, bad ab; switch
 * probabilities pgb, pbg per evaluated draft) in a long run. The state
 * advances once per evaluated draft (accepted ones and the first rejected
 * one), so the state at the start of a block is a Markov chain of its own
 * (not the per-token stationary law: a block ends on a rejection, which is
 * likelier in the bad state). From start state s, propagate the
 * unnormalised mass v over states through the block: at each position the
 * accepted part v.*alpha contributes P(a >= i) and switches
 * (v <- (v.*alpha) P); the rejected part (v.*(1 - alpha)) P ends the block
 * and is the next block's start law Q[s][.]. E[a] = rho . E[a|s] with rho
 * stationary for Q. */
static inline double simtest_markov_Ea(double ag, double ab, double pgb, double pbg,
                                       int gamma)
{
    double P[2][2] = {{1 - pgb, pgb}, {pbg, 1 - pbg}}; /* 0 = good */
    double al[2] = {ag, ab};
    double Ea[2], Q[2][2];
    for (int s = 0; s < 2; s++) {
        double v[2] = {s == 0, s == 1};
        Ea[s] = 0;
        Q[s][0] = Q[s][1] = 0;
        for (int i = 0; i < gamma; i++) {
            double acc[2] = {v[0] * al[0], v[1] * al[1]};
            double rej[2] = {v[0] - acc[0], v[1] - acc[1]};
            for (int j = 0; j < 2; j++) Q[s][j] += rej[0] * P[0][j] + rej[1] * P[1][j];
            Ea[s] += acc[0] + acc[1];
            v[0] = acc[0] * P[0][0] + acc[1] * P[1][0];
            v[1] = acc[0] * P[0][1] + acc[1] * P[1][1];
        }
        Q[s][0] += v[0];
        Q[s][1] += v[1];
    }
    double rho_g = Q[1][0] / (Q[0][1] + Q[1][0]);
    return rho_g * Ea[0] + (1 - rho_g) * Ea[1];
}

#endif
