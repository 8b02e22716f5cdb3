/* specrate — closed-form tokens per second of one tenant's speculation, sync
 * and async, without queueing behind others: what `specsim analytic`
 * (sim/run/analytic.c) prints and what the adaptive speculation-length
 * policies (sim/model/gamma_obs.c) evaluate per block. It sits in the model
 * layer so that those policies need nothing above it.
 *
 * Sync: a block takes γd + rtt + v and commits a+1 tokens, so by
 * renewal-reward the rate is E[a+1]/block with E[a+1] = (1−α^(γ+1))/(1−α)
 * for iid acceptance.
 *
 * Async (derivation; docs/metrics.md, "The closed forms", states the result): call a cycle the
 * time from the edge starting to draft after a rollback to the arrival of the
 * next rejecting verdict. Blocks are drafted back to back; block j finishes
 * drafting at s_j and its verdict reaches the edge at r_j. The first block
 * with a rejection is J ~ Geometric(q), q = 1 − P(a = γ) (1 − α^γ for iid);
 * blocks before it commit γ tokens each, block J commits a+1 with a < γ.
 *   E[tokens] = (1/q − 1)·γ + Σ_{i<γ} (i+1)·P(a = i)/q   (= 1/(1−α) for iid:
 *               every token until the first rejection, plus the correction)
 *   E[cycle]  = Σ_j q(1−q)^(j−1) · r_j.
 * When nothing stalls (window W with rtt + v ≤ (W−1)·γd, v ≤ γd, each link's
 * serialisation ≤ γd), s_j = jγd and r_j = jγd + rtt + v, so
 * E[cycle] = γd/q + rtt + v, and rate = E[tokens]/E[cycle]:
 * α → 1 gives 1/d, α = 0 gives 1/(γd + rtt + v). Otherwise r_j comes from
 * the deterministic recursion (edge waits for the verdict of block j−W, the
 * cloud and each link serve one block at a time); for α = 1 the rate is
 * γ/P with P = max(γd, v, link times, (γd + rtt + v)/W), the throughput of a
 * closed cyclic pipeline of W blocks.
 */
#include "model/specrate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/gamma.h"

/* ---- acceptance ---------------------------------------------------------- */

/* One part of the model's block law (accept.h): a block's accepted length a,
 * modulated by a hidden state that carries over from block to block (markov:
 * 2 states; otherwise 1): rej[(s·γ + a)·ns + s2] = P(a < γ accepted, next
 * block starts in s2 | this block starts in s), full[s][s2] the same for
 * a = γ; start the law of the first block's state. */
typedef struct blaw {
    int ns, gamma;
    int full_len;          /* tokens a full acceptance commits before its
                              bonus (accept_law_t.full_len) */
    const double *rej;
    double full[2][2];
    double start[2];
} blaw_t;

static blaw_t blaw_part(const accept_law_t *L, int p)
{
    blaw_t b = {.ns = L->ns, .gamma = L->gamma, .full_len = L->full_len,
                .rej = L->part[p].rej};
    memcpy(b.full, L->part[p].full, sizeof b.full);
    memcpy(b.start, L->part[p].start, sizeof b.start);
    return b;
}

static const double *rej_at(const blaw_t *L, int s, int a, int s2)
{
    return &L->rej[((size_t)s * L->gamma + a) * L->ns + s2];
}

/* Long-run law of a 2-state chain with off-diagonal probabilities p01, p10.
 * A chain that never switches keeps its start law (the model's stated
 * choice for a frozen chain). */
static void stationary2(double p01, double p10, const double *start, double *nu)
{
    double s = p01 + p10;
    nu[0] = s > 0 ? p10 / s : start[0];
    nu[1] = 1 - nu[0];
}

/* E[a+1] per block in the long run (sync commits a+1, γ+1 on full accept;
 * a tree: its rank-1 chain and the bonus). */
static double blaw_sync_len(const blaw_t *L)
{
    double nu[2] = {1, 0};
    if (L->ns == 2) {
        double m01 = L->full[0][1], m10 = L->full[1][0];
        for (int a = 0; a < L->gamma; a++) {
            m01 += *rej_at(L, 0, a, 1);
            m10 += *rej_at(L, 1, a, 0);
        }
        stationary2(m01, m10, L->start, nu);
    }
    double e = 0;
    for (int s = 0; s < L->ns; s++) {
        double es = 0;
        for (int s2 = 0; s2 < L->ns; s2++) {
            for (int a = 0; a < L->gamma; a++) es += (a + 1) * *rej_at(L, s, a, s2);
            es += (L->full_len + 1) * L->full[s][s2];
        }
        e += nu[s] * es;
    }
    return e;
}

/* ---- async --------------------------------------------------------------- */

/* The steady block period of the pipeline with no rejection: the slowest
 * single server, or the window's W blocks around the whole loop. */
static double pipe_period(const specrate_pipe_t *pp)
{
    double gd = pp->block_d;
    double loop = gd + pp->up_ser + pp->up_prop + pp->v + pp->down_ser + pp->down_prop;
    double per = fmax(fmax(gd, pp->v), fmax(pp->up_ser, pp->down_ser));
    return fmax(per, loop / pp->window);
}

static double pipe_delay(const specrate_pipe_t *pp)
{
    return pp->up_ser + pp->up_prop + pp->v + pp->down_ser + pp->down_prop;
}

/* Nothing waits: every server keeps up with a block per γd and the verdict
 * of block j−W is back before block j is due. Then r_j = jγd + delay. */
static int pipe_stall_free(const specrate_pipe_t *pp)
{
    double gd = pp->block_d;
    return pp->v <= gd && pp->up_ser <= gd && pp->down_ser <= gd &&
           pipe_delay(pp) <= (pp->window - 1) * gd;
}

/* r_1, r_2, ...: when the verdict of the j-th block of a cycle reaches the
 * edge, if no block so far was rejected. */
typedef struct pipe_iter {
    const specrate_pipe_t *pp;
    int free_run, w, j;
    double *ring;                      /* r of the last w blocks */
    double s, ufree, cloud, dfree;
} pipe_iter_t;

static int pipe_iter_init(pipe_iter_t *it, const specrate_pipe_t *pp, int maxj)
{
    memset(it, 0, sizeof *it);
    it->pp = pp;
    it->free_run = pipe_stall_free(pp);
    it->cloud = -INFINITY;
    if (it->free_run) return 0;
    it->w = pp->window < maxj ? pp->window : maxj;
    it->ring = malloc(sizeof(double) * (size_t)it->w);
    return it->ring ? 0 : -1;
}

static double pipe_next(pipe_iter_t *it)
{
    const specrate_pipe_t *pp = it->pp;
    double gd = pp->block_d;
    int j = ++it->j;
    if (it->free_run) return j * gd + pipe_delay(pp);
    double start = it->s;
    if (j > pp->window) start = fmax(start, it->ring[(j - 1) % it->w]);
    it->s = start + gd;
    it->ufree = fmax(it->s, it->ufree) + pp->up_ser;
    it->cloud = fmax(it->ufree + pp->up_prop, it->cloud) + pp->v;
    it->dfree = fmax(it->cloud, it->dfree) + pp->down_ser;
    double r = it->dfree + pp->down_prop;
    it->ring[(j - 1) % it->w] = r;
    return r;
}

#define ASYNC_MAX_BLOCKS 200000

/* Long-run tokens per second of one tenant (Markov renewal-reward over
 * rollback cycles: per cycle start state, expected tokens and time, weighted
 * by the stationary law of the cycle-start chain). Beyond ASYNC_MAX_BLOCKS
 * blocks in one cycle the verdict times grow by the steady period and the
 * block law is frozen at its last state mix (exact for one state). */
static double pipe_async_rate(const specrate_pipe_t *pp, const blaw_t *L)
{
    /* nr rejection outcomes a = 0 .. nr - 1 commit a + 1 each; a full
     * acceptance commits g (a chain: nr = g = γ; a tree: its depth + 1
     * outcomes, and its rank-1 chain's length). */
    int ns = L->ns, nr = L->gamma, g = L->full_len;
    double anyrej = 0;
    for (int s = 0; s < ns; s++)
        for (int a = 0; a < nr; a++)
            for (int s2 = 0; s2 < ns; s2++) anyrej += *rej_at(L, s, a, s2);
    double P = pipe_period(pp);
    if (anyrej <= 0) return g / P;
    if (ns == 1 && pipe_stall_free(pp)) {   /* the closed form of the header */
        double q = 1 - L->full[0][0], rt = 0;
        for (int a = 0; a < nr; a++) rt += (a + 1) * *rej_at(L, 0, a, 0);
        return ((1 / q - 1) * g + rt / q) / (pp->block_d / q + pipe_delay(pp));
    }

    pipe_iter_t it;
    if (pipe_iter_init(&it, pp, ASYNC_MAX_BLOCKS) != 0) return NAN;
    double tok[2] = {0, 0}, tim[2] = {0, 0}, C[2][2] = {{0, 0}, {0, 0}};
    double alive[2][2] = {{1, 0}, {0, 1}};   /* [cycle start][current state] */
    double r = 0, mass = 1;
    int j;
    for (j = 1; j <= ASYNC_MAX_BLOCKS; j++) {
        r = pipe_next(&it);
        double next[2][2] = {{0, 0}, {0, 0}};
        mass = 0;
        for (int s0 = 0; s0 < ns; s0++) {
            for (int s = 0; s < ns; s++) {
                double m = alive[s0][s];
                if (m == 0) continue;
                for (int a = 0; a < nr; a++)
                    for (int s2 = 0; s2 < ns; s2++) {
                        double w = m * *rej_at(L, s, a, s2);
                        tim[s0] += w * r;
                        tok[s0] += w * ((double)(j - 1) * g + a + 1);
                        C[s0][s2] += w;
                    }
                for (int s2 = 0; s2 < ns; s2++) next[s0][s2] += m * L->full[s][s2];
            }
            for (int s2 = 0; s2 < ns; s2++) mass = fmax(mass, next[s0][s2]);
        }
        memcpy(alive, next, sizeof alive);
        if (mass < 1e-18) break;
    }
    free(it.ring);
    if (j > ASYNC_MAX_BLOCKS) {
        /* Tail: each cycle start's surviving mix as one frozen state. */
        int N = ASYNC_MAX_BLOCKS;
        for (int s0 = 0; s0 < ns; s0++) {
            double m = 0, stay = 0, rt = 0, end[2] = {0, 0};
            for (int s = 0; s < ns; s++) {
                m += alive[s0][s];
                for (int s2 = 0; s2 < ns; s2++) {
                    stay += alive[s0][s] * L->full[s][s2];
                    for (int a = 0; a < nr; a++) {
                        double w = alive[s0][s] * *rej_at(L, s, a, s2);
                        rt += w * (a + 1);
                        end[s2] += w;
                    }
                }
            }
            if (m <= 0) continue;
            double q = 1 - stay / m;
            if (q <= 0) return g / P;
            double qm = m * q;   /* rejection mass per block */
            /* Σ_{k≥1} (1−q)^(k−1)·(qm)·(time at block N+k) etc. */
            tim[s0] += m * (r + P / q);
            tok[s0] += m * (N * (double)g + (1 / q - 1) * g) + rt / qm * m;
            for (int s2 = 0; s2 < ns; s2++) C[s0][s2] += end[s2] / qm * m;
        }
    }
    double nu[2] = {1, 0};
    if (ns == 2) stationary2(C[0][1], C[1][0], L->start, nu);
    double T = 0, K = 0;
    for (int s = 0; s < ns; s++) {
        T += nu[s] * tim[s];
        K += nu[s] * tok[s];
    }
    return K / T;
}

double specrate_link_s(double bytes, double bps)
{
    return isinf(bps) || !(bps > 0) ? 0 : 8 * bytes / bps;
}

double specrate_sync(double alpha, int gamma, double d, double rtt)
{
    double len = alpha < 1 ? (1 - pow(alpha, gamma + 1)) / (1 - alpha) : gamma + 1;
    return len / (gamma * d + rtt);
}

double specrate_sync_rate(double alpha, int gamma, double d, double rtt, int window)
{
    (void)window;
    return specrate_sync(alpha, gamma, d, rtt);
}

double specrate_async(double alpha, int gamma, double d, double rtt, int window)
{
    if (gamma < 1 || gamma > GAMMA_MAX) return NAN;
    double rej[GAMMA_MAX];
    for (int a = 0; a < gamma; a++) rej[a] = pow(alpha, a) * (1 - alpha);
    blaw_t L = {.ns = 1, .gamma = gamma, .full_len = gamma, .rej = rej, .start = {1, 0}};
    L.full[0][0] = pow(alpha, gamma);
    /* The round trip as the uplink's propagation: it delays the verdict
     * without occupying a server. */
    specrate_pipe_t pp = {.gamma = gamma, .window = window > 0 ? window : 1, .d = d,
                          .block_d = gamma * d, .up_prop = rtt};
    return pipe_async_rate(&pp, &L);
}

/* A mixture law (beta: one part per tenant alpha) averages the per-part
 * figure with the parts' weights. */
double specrate_law_sync_len(const accept_law_t *L)
{
    double num = 0, den = 0;
    for (int p = 0; p < L->nparts; p++) {
        blaw_t b = blaw_part(L, p);
        num += L->part[p].weight * blaw_sync_len(&b);
        den += L->part[p].weight;
    }
    return num / den;
}

double specrate_law_async(const specrate_pipe_t *pp, const accept_law_t *L)
{
    double num = 0, den = 0;
    for (int p = 0; p < L->nparts; p++) {
        blaw_t b = blaw_part(L, p);
        num += L->part[p].weight * pipe_async_rate(pp, &b);
        den += L->part[p].weight;
    }
    return num / den;
}

