/* PLACEHOLDER — replaced by the metrics module's owner. */
#include "metrics.h"
#include <math.h>
#include <string.h>
static const char *names[] = {
#define X(id, name, desc) name,
    METRICS_LIST(X)
#undef X
};
static const char *descs[] = {
#define X(id, name, desc) desc,
    METRICS_LIST(X)
#undef X
};
const char *metric_name(int id) { return (unsigned)id < METRIC_COUNT ? names[id] : "?"; }
const char *metric_desc(int id) { return (unsigned)id < METRIC_COUNT ? descs[id] : "?"; }
int metric_find(const char *name)
{
    for (int i = 0; i < METRIC_COUNT; i++) if (strcmp(names[i], name) == 0) return i;
    return -1;
}
int metric_is_timing(int id) { return id == METRIC_WALL_S || id == METRIC_EVENTS_PER_S; }
void metrics_summarize(const metrics_rep_t *reps, int n, metrics_summary_t *out)
{
    memset(out, 0, sizeof *out);
    out->reps = n;
    for (int m = 0; m < METRIC_COUNT; m++) out->value[m] = n ? reps[0].v[m] : NAN;
}
hist_t *hist_create(double min, double max, double rel_err) { (void)min; (void)max; (void)rel_err; return NULL; }
void hist_free(hist_t *h) { (void)h; }
void hist_reset(hist_t *h) { (void)h; }
void hist_add(hist_t *h, double x, double w) { (void)h; (void)x; (void)w; }
double hist_count(const hist_t *h) { (void)h; return 0; }
double hist_mean(const hist_t *h) { (void)h; return NAN; }
double hist_quantile(const hist_t *h, double q) { (void)h; (void)q; return NAN; }
size_t hist_bytes(const hist_t *h) { (void)h; return 0; }
