#include "tallyio.h"

#include <stddef.h>
#include <string.h>

/* A part's sums are every field from `committed` on, all doubles; a
 * tenant's every field before its histogram; the totals are all doubles. */
#define PART_FIRST offsetof(tally_part_t, committed)
#define PART_SUMS ((sizeof(tally_part_t) - PART_FIRST) / sizeof(double))
#define TEN_SUMS (offsetof(tally_tenant_t, itl) / sizeof(double))
#define RAW_SUMS (sizeof(tally_totals_t) / sizeof(double))
_Static_assert((sizeof(tally_part_t) - offsetof(tally_part_t, committed)) %
                   sizeof(double) == 0, "tally_part_t: sums are doubles");
_Static_assert(sizeof(tally_totals_t) % sizeof(double) == 0,
               "tally_totals_t: all doubles");

/* The shared cloud's scalars after the raw totals. */
#define CLOUD_SUMS 5

/* A part's histograms, in tally_part_t's order. */
enum { PART_HISTS = 6 };

static hist_t *part_hist(const tally_part_t *p, int k)
{
    hist_t *const h[PART_HISTS] = {p->itl, p->gap, p->ttft, p->qdelay, p->admit,
                                   p->itl_out};
    return h[k];
}

static size_t part_len(const tally_part_t *p)
{
    size_t n = PART_SUMS;
    for (int k = 0; k < PART_HISTS; k++) n += hist_state_len(part_hist(p, k));
    return n;
}

size_t tallyio_len(const tally_t *t)
{
    size_t n = part_len(&t->all) + RAW_SUMS + CLOUD_SUMS + hist_state_len(t->batch) +
               (size_t)t->ntenants * TEN_SUMS;
    for (int g = 0; g < t->ngroups; g++) n += part_len(&t->group[g]);
    return n;
}

static double *pack_part(const tally_part_t *p, double *o)
{
    memcpy(o, (const char *)p + PART_FIRST, PART_SUMS * sizeof *o);
    o += PART_SUMS;
    for (int k = 0; k < PART_HISTS; k++) {
        hist_state_get(part_hist(p, k), o);
        o += hist_state_len(part_hist(p, k));
    }
    return o;
}

void tallyio_pack(const tally_t *t, double *o)
{
    o = pack_part(&t->all, o);
    for (int g = 0; g < t->ngroups; g++) o = pack_part(&t->group[g], o);
    memcpy(o, &t->raw, RAW_SUMS * sizeof *o);
    o += RAW_SUMS;
    double cloud[CLOUD_SUMS] = {t->busy, t->kv_area, t->roof_s, t->roof_known,
                                t->kv_known};
    memcpy(o, cloud, sizeof cloud);
    o += CLOUD_SUMS;
    hist_state_get(t->batch, o);
    o += hist_state_len(t->batch);
    for (int i = 0; i < t->ntenants; i++, o += TEN_SUMS)
        memcpy(o, &t->ten[i], TEN_SUMS * sizeof *o);
}

static void add_sums(double *dst, const double *src, size_t n)
{
    for (size_t k = 0; k < n; k++) dst[k] += src[k];
}

static const double *add_part(tally_part_t *p, const double *in, const double *end)
{
    if (in == NULL || (size_t)(end - in) < part_len(p)) return NULL;
    add_sums((double *)(void *)((char *)p + PART_FIRST), in, PART_SUMS);
    in += PART_SUMS;
    for (int k = 0; k < PART_HISTS; k++) {
        hist_t *h = part_hist(p, k);
        if (hist_state_merge(h, in, hist_state_len(h))) return NULL;
        in += hist_state_len(h);
    }
    return in;
}

int tallyio_add(tally_t *t, const double *in, size_t n, err_t *err)
{
    if (n != tallyio_len(t))
        return err_set(err, ERR_RUNTIME, "testbed: the verifier's tally has %zu "
                       "values, expected %zu", n, tallyio_len(t));
    const double *end = in + n;
    in = add_part(&t->all, in, end);
    for (int g = 0; g < t->ngroups; g++) in = add_part(&t->group[g], in, end);
    if (!in) return err_set(err, ERR_RUNTIME, "testbed: the verifier's tally has "
                            "another shape");
    add_sums((double *)(void *)&t->raw, in, RAW_SUMS);
    in += RAW_SUMS;
    t->busy += in[0];
    t->kv_area += in[1];
    t->roof_s += in[2];
    /* Set by the cloud (sim/entity/cloud.c) on its side only. */
    t->roof_known |= in[3] != 0;
    t->kv_known |= in[4] != 0;
    in += CLOUD_SUMS;
    if (hist_state_merge(t->batch, in, hist_state_len(t->batch)))
        return err_set(err, ERR_RUNTIME, "testbed: the verifier's batch histogram "
                       "has another shape");
    in += hist_state_len(t->batch);
    for (int i = 0; i < t->ntenants; i++, in += TEN_SUMS)
        add_sums((double *)(void *)&t->ten[i], in, TEN_SUMS);
    return 0;
}
