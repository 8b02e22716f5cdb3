/* guard — bounds on a run that could never end (see guard.h). */
#include "run/guard.h"

#include <stdio.h>
#include <string.h>

#include "entity/proto.h"
#include "engine/rng.h"
#include "model/workload_trace.h"

/* Tenant i's trace requests that arrive before end (times do not decrease
 * within a tenant: a binary search). */
static long rows_before(const workload_trace_t *tr, int i, double end)
{
    long lo = tr->first[i], hi = tr->first[i + 1];
    while (lo < hi) {
        long mid = lo + (hi - lo) / 2;
        if (tr->req[mid].t < end) lo = mid + 1;
        else hi = mid;
    }
    return lo - tr->first[i];
}

void guard_init(guard_t *g, const scenario_t *s, const workload_trace_t *tr)
{
    memset(g, 0, sizeof *g);
    g->s = s;
    g->next = GUARD_CHECK_EVENTS;
    g->look_next = UINT64_MAX;
    uint64_t per = (uint64_t)(s->ntenants > 0 ? s->ntenants : 1) * GUARD_STALL_PER_TENANT;
    if (tr) per += (uint64_t)tr->most_at_once * GUARD_STALL_PER_ROW;
    g->stall_limit = per > GUARD_STALL_EVENTS ? per : GUARD_STALL_EVENTS;
    g->trace_only = tr != NULL;
    for (int k = 0; k < s->ngroups; k++)
        g->trace_only &= s->groups[k].workload.arrival == ARRIVAL_TRACE;
    for (int i = 0; g->trace_only && i < tr->ntenants; i++)
        g->trace_rows += (double)rows_before(tr, i, s->duration);
}

void guard_watch_trace(guard_t *g, const trace_t *tr)
{
    uint64_t from = (uint64_t)(g->s->ntenants > 0 ? g->s->ntenants : 1) *
                    GUARD_STALL_PER_TENANT;
    g->trace = tr;
    g->look_next = from > GUARD_TRACE_LOOK ? from : GUARD_TRACE_LOOK;
}

/* The events of the whole run, projected from `events` at simulated time
 * now: at `rate` events per simulated second over the rest of `end`;
 * when every tenant replays the request trace, whose arrivals end, at the
 * events per finished request over the requests not yet finished, if
 * fewer. */
static double projected(const guard_t *g, double now, uint64_t events, double rate,
                        uint64_t done, double end)
{
    double total = (double)events + rate * (end - now);
    /* At the rate of the finished requests (whose events so far include
     * the unfinished ones' share, so this leans high) the rest cost that
     * much more. The rate alone once refused a short trace in a long
     * duration. */
    if (g->trace_only && done > 0) {
        double left = g->trace_rows > (double)done ? g->trace_rows - (double)done : 0;
        double by_request = (double)events + (double)events / (double)done * left;
        if (by_request < total) total = by_request;
    }
    return total;
}

/* Warns, once, when the trace would pass GUARD_TRACE_WARN_BYTES by the
 * end: `total` events in all, each of those to come taking the bytes an
 * event took since the window's start (ev0 events, b0 bytes written). */
static void trace_size(guard_t *g, uint64_t ev0, double b0, uint64_t events, double total)
{
    if (g->warned || events <= ev0) return;
    double per = (g->trace->bytes - b0) / (double)(events - ev0);
    double size = g->trace->bytes + per * (total - (double)events);
    if (!(size > GUARD_TRACE_WARN_BYTES)) return;
    g->warned = 1;
    err_warn("trace: about %.3g GB projected for the trace (%.3g events, %.0f bytes each "
             "so far); a trace past %.0f GB is slow to write and to open (docs/formats.md, "
             "\"Run budget\"): a shorter duration or fewer tenants make it smaller",
             size / 1e9, total, per, GUARD_TRACE_WARN_BYTES / 1e9);
}

/* The early look at the trace: the first call starts its window, the
 * second projects from it. */
static void trace_look(guard_t *g, double now, uint64_t events, uint64_t done, double end)
{
    if (g->look_ev == 0) {
        g->look_t = now;
        g->look_ev = events;
        g->look_bytes = g->trace->bytes;
        g->look_next = 4 * events;
        return;
    }
    g->look_next = UINT64_MAX;
    /* All of it at one instant: no rate yet; the regular checks will tell. */
    if (!(now > g->look_t)) return;
    double rate = (double)(events - g->look_ev) / (now - g->look_t);
    trace_size(g, g->look_ev, g->look_bytes, events,
               projected(g, now, events, rate, done, end));
}

/* The key that sets the arrivals that pile up: the first Poisson group's
 * rate, else (every tenant replays the trace) the trace's key. 1 when it
 * is a rate. */
static int pileup_key(const scenario_t *s, char *buf, size_t n)
{
    int rate;
    int k = scenario_arrivals_group(s, &rate);
    const char *leaf = rate ? "rate" : "trace";
    if (s->ngroups > 1)
        snprintf(buf, n, "tenants.groups.%s.workload.%s", s->groups[k].name, leaf);
    else
        snprintf(buf, n, "tenants.workload.%s", leaf);
    return rate;
}

/* Appends ", KEY (what)" to buf. */
static void add(char *buf, size_t n, const char *pre, const char *key, const char *what)
{
    size_t len = strlen(buf);
    if (len + 1 < n)
        snprintf(buf + len, n - len, "%s%s%s (%s)", len ? ", " : "", pre, key, what);
}

static int zero(const dist_t *d) { return dist_mean(d) == 0; }

/* The durations the scenario makes zero: every step a zero-time cycle can
 * be made of. */
static void zero_keys(const scenario_t *s, char *buf, size_t n)
{
    buf[0] = '\0';
    for (int k = 0; k < s->ngroups; k++) {
        const tenant_group_t *G = &s->groups[k];
        char pre[96] = "tenants.";
        if (s->ngroups > 1) snprintf(pre, sizeof pre, "tenants.groups.%s.", G->name);
        const protocol_cfg_t *p = scenario_group_protocol(s, k);
        if (p->proto->uses_cloud && G->network.rtt == 0 && zero(&G->network.jitter))
            add(buf, n, pre, "network.rtt", "0 s, no jitter");
        if (p->proto->drafts && G->edge.has_draft_time && zero(&G->edge.draft_time))
            add(buf, n, pre, "edge.draft_time", "0 s");
        if (p->proto->drafts && G->edge.has_prefill_time && zero(&G->edge.prefill_time))
            add(buf, n, pre, "edge.prefill_time", "0 s");
        if (G->workload.arrival == ARRIVAL_CLOSED && zero(&G->workload.think))
            add(buf, n, pre, "workload.think", "0 s");
    }
    if (s->cloud.has_verify_time && zero(&s->cloud.verify_time))
        add(buf, n, "", "cloud.verify_time", "0 s");
    if (proto_any_cloud_drafts(s) && s->cloud.has_draft_time && zero(&s->cloud.draft_time))
        add(buf, n, "", "cloud.draft_time", "0 s");
}

static int stalled(const guard_t *g, double now, uint64_t events, err_t *err)
{
    char keys[1024];
    zero_keys(g->s, keys, sizeof keys);
    return err_set(err, ERR_INPUT,
                   "simulation: simulated time stopped at t=%g s: %llu events without "
                   "it advancing, a cycle of zero-duration steps (at most %llu events "
                   "may share one instant). Zero durations in the scenario: %s; give "
                   "one of them a positive value", now,
                   (unsigned long long)(events - g->mark_ev),
                   (unsigned long long)g->stall_limit,
                   keys[0] ? keys : "none found among the times the scenario gives");
}

int guard_check(guard_t *g, double now, uint64_t events, uint64_t waiting, uint64_t done,
                double end, err_t *err)
{
    if (g->trace && events >= g->look_next) trace_look(g, now, events, done, end);
    if (events < g->next) return 0;
    g->next = events + GUARD_CHECK_EVENTS;
    if (now > g->mark_t) {
        g->mark_t = now;
        g->mark_ev = events;
    } else if (events - g->mark_ev >= g->stall_limit) {
        return stalled(g, now, events, err);
    }
    int first = g->checks++ == 0;
    double dt = now - g->last_t, dev = (double)(events - g->last_ev);
    uint64_t ev0 = g->last_ev;
    double b0 = g->last_bytes;
    g->last_t = now;
    g->last_ev = events;
    g->last_bytes = g->trace ? g->trace->bytes : 0;
    /* The first window holds the start-up burst: no projection from it. */
    if (first || !(dt > 0) || !(now > 0)) return 0;
    /* A trace's arrivals end, and with them the events. */
    double total = projected(g, now, events, dev / dt, done, end);
    if (g->trace) trace_size(g, ev0, b0, events, total);
    const scenario_t *s = g->s;
    if (total > GUARD_MAX_EVENTS)
        return err_set(err, ERR_INPUT,
                       "%s%sduration: %g s would take about %.3g events (%llu in the first "
                       "%g simulated s, %.3g per simulated second lately); a run is "
                       "bounded at %.0e events (docs/formats.md, \"Run budget\"): shorten "
                       "duration", s->duration_at, s->duration_at[0] ? ": " : "", end,
                       total, (unsigned long long)events, now, dev / dt, GUARD_MAX_EVENTS);
    double ahead = (double)waiting * (end / now);
    /* No more can wait than the trace holds. */
    if (g->trace_only && ahead > g->trace_rows) ahead = g->trace_rows;
    if (ahead > GUARD_MAX_WAITING) {
        char key[128];
        int rate = pileup_key(g->s, key, sizeof key);
        return err_set(err, ERR_INPUT,
                       "%s%s%s: requests arrive faster than the tenants "
                       "serve them: %llu waiting at t=%g s, about %.3g by the end of "
                       "duration %g s; at most %.0e may wait (docs/formats.md, \"Run "
                       "budget\"): %s or shorten duration", s->arrivals_at,
                       s->arrivals_at[0] ? ": " : "", key,
                       (unsigned long long)waiting, now, ahead, end, GUARD_MAX_WAITING,
                       rate ? "lower the rate" : "replay fewer requests");
    }
    return 0;
}
