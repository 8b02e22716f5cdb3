/* units — quantities with units (see units.h). */
#include "base/units.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct unit {
    const char *name;
    double mul, div;   /* value = x * mul, or x / div when div != 1 */
    int fmt;           /* used when formatting (synonyms are not) */
} unit_t;

/* Formatting tries units in table order and keeps the shortest exact text,
 * so the preferred spelling of a tie comes first. */
static const unit_t DURATION_UNITS[] = {
    {"s", 1, 1, 1},      {"ms", 1, 1e3, 1},  {"us", 1, 1e6, 1},
    {"ns", 1, 1e9, 1},   {"min", 60, 1, 1},  {"h", 3600, 1, 1},
    {NULL, 0, 0, 0}};
static const unit_t RATE_UNITS[] = {
    {"Mbps", 1e6, 1, 1},  {"Gbps", 1e9, 1, 1},  {"kbps", 1e3, 1, 1},
    {"bps", 1, 1, 1},     {"Tbps", 1e12, 1, 1}, {"Kbps", 1e3, 1, 0},
    {"B/s", 8, 1, 0},     {"KB/s", 8e3, 1, 0},  {"kB/s", 8e3, 1, 0},
    {"MB/s", 8e6, 1, 0},  {"GB/s", 8e9, 1, 0},  {"TB/s", 8e12, 1, 0},
    {NULL, 0, 0, 0}};
static const unit_t BANDWIDTH_UNITS[] = {
    {"GB/s", 1e9, 1, 1},  {"TB/s", 1e12, 1, 1}, {"MB/s", 1e6, 1, 1},
    {"KB/s", 1e3, 1, 1},  {"B/s", 1, 1, 1},     {"kB/s", 1e3, 1, 0},
    {"KiB/s", 1024.0, 1, 1}, {"MiB/s", 1048576.0, 1, 1},
    {"GiB/s", 1073741824.0, 1, 1}, {"TiB/s", 1099511627776.0, 1, 1},
    {NULL, 0, 0, 0}};
static const unit_t SIZE_UNITS[] = {
    {"GiB", 1073741824.0, 1, 1}, {"MiB", 1048576.0, 1, 1},
    {"KiB", 1024.0, 1, 1},       {"TiB", 1099511627776.0, 1, 1},
    {"GB", 1e9, 1, 1},  {"MB", 1e6, 1, 1}, {"KB", 1e3, 1, 1},
    {"TB", 1e12, 1, 1}, {"B", 1, 1, 1},    {"kB", 1e3, 1, 0},
    {NULL, 0, 0, 0}};
static const unit_t FLOPS_UNITS[] = {
    {"TFLOPS", 1e12, 1, 1}, {"GFLOPS", 1e9, 1, 1}, {"PFLOPS", 1e15, 1, 1},
    {"MFLOPS", 1e6, 1, 1},  {"FLOPS", 1, 1, 1},    {"TOPS", 1e12, 1, 0},
    {"GOPS", 1e9, 1, 0},    {"POPS", 1e15, 1, 0},  {"OPS", 1, 1, 0},
    {NULL, 0, 0, 0}};
/* Events per unit of time: "120/min" is 120/60 per second. */
static const unit_t FREQUENCY_UNITS[] = {
    {"/s", 1, 1, 1}, {"/min", 1, 60, 1}, {"/h", 1, 3600, 1}, {NULL, 0, 0, 0}};
static const unit_t NO_UNITS[] = {{"", 1, 1, 1}, {NULL, 0, 0, 0}};

static const unit_t *table(enum unit_kind k)
{
    switch (k) {
    case UNIT_DURATION: return DURATION_UNITS;
    case UNIT_RATE: return RATE_UNITS;
    case UNIT_BANDWIDTH: return BANDWIDTH_UNITS;
    case UNIT_SIZE: return SIZE_UNITS;
    case UNIT_FLOPS: return FLOPS_UNITS;
    case UNIT_FREQUENCY: return FREQUENCY_UNITS;
    case UNIT_NUMBER: break;
    }
    return NO_UNITS;
}

const char *units_kind_name(enum unit_kind k)
{
    static const char *n[] = {"number", "duration", "rate", "bandwidth", "size",
                              "FLOP rate", "frequency"};
    return (unsigned)k <= UNIT_FREQUENCY ? n[k] : "?";
}

const char *units_example(enum unit_kind k)
{
    static const char *e[] = {"4", "40ms", "100Mbps", "4.8TB/s", "4GiB",
                              "989TFLOPS", "2/s"};
    return (unsigned)k <= UNIT_FREQUENCY ? e[k] : "?";
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* Length of the decimal number at the start of s, 0 if there is none. An
 * exponent marker without digits makes the whole thing invalid ("1e"). */
static size_t scan_number(const char *s)
{
    size_t i = 0, digits = 0;
    if (s[i] == '-') i++;
    while (is_digit(s[i])) i++, digits++;
    if (s[i] == '.') {
        i++;
        while (is_digit(s[i])) i++, digits++;
    }
    if (!digits) return 0;
    if (s[i] == 'e' || s[i] == 'E') {
        size_t j = i + 1;
        if (s[j] == '+' || s[j] == '-') j++;
        if (!is_digit(s[j])) return 0;
        while (is_digit(s[j])) j++;
        i = j;
    }
    return i;
}

static void allowed_list(const unit_t *t, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = 0;
    for (; t->name; t++) {
        int w = snprintf(buf + used, n - used, "%s%s", used ? ", " : "", t->name);
        if (w < 0 || (size_t)w >= n - used) return;
        used += (size_t)w;
    }
}

static int fail(char *why, size_t whysz, const char *fmt, const char *a,
                const char *b)
{
    if (why && whysz) snprintf(why, whysz, fmt, a, b);
    return -1;
}

int units_parse(const char *s, enum unit_kind kind, int allow_inf, double *out,
                char *why, size_t whysz)
{
    if (!*s) return fail(why, whysz, "empty value%s%s", "", "");
    if (strcmp(s, "inf") == 0) {
        if (!allow_inf || kind == UNIT_NUMBER)
            return fail(why, whysz, "'inf' is not allowed here%s%s", "", "");
        *out = INFINITY;
        return 0;
    }
    size_t len = scan_number(s);
    char num[64];
    if (len == 0 || len >= sizeof num) {
        if (kind == UNIT_NUMBER)
            return fail(why, whysz, "'%.100s' is not a number%s", s, "");
        return fail(why, whysz, "'%.100s' is not a %s", s, units_kind_name(kind));
    }
    memcpy(num, s, len);
    num[len] = 0;
    double x = strtod(num, NULL);
    const char *u = s + len;
    while (*u == ' ') u++;
    if (kind == UNIT_NUMBER) {
        if (*u) return fail(why, whysz, "'%.100s' is not a number%s", s, "");
        *out = x;
        return isfinite(x) ? 0 : fail(why, whysz, "'%.100s' is too large%s", s, "");
    }
    if (s[0] == '-')
        return fail(why, whysz, "'%.100s': a %s cannot be negative", s,
                    units_kind_name(kind));
    const unit_t *t = table(kind);
    if (!*u) {
        if (x == 0) {
            *out = 0;
            return 0;
        }
        char ex[80];
        snprintf(ex, sizeof ex, "%s (e.g. %s)", units_kind_name(kind),
                 units_example(kind));
        return fail(why, whysz, "'%.100s' needs a unit: a %s", s, ex);
    }
    for (; t->name; t++) {
        if (strcmp(u, t->name) != 0) continue;
        double v = t->div != 1 ? x / t->div : x * t->mul;
        if (!isfinite(v)) return fail(why, whysz, "'%.100s' is too large%s", s, "");
        *out = v;
        return 0;
    }
    char list[300];
    allowed_list(table(kind), list, sizeof list);
    char bad[64];
    snprintf(bad, sizeof bad, "%.40s", u);
    return fail(why, whysz, "unknown unit '%s' (allowed: %s)", bad, list);
}

/* Shortest "%.Pg" + unit that parses back to exactly v, or -1. */
static int format_in(double v, enum unit_kind kind, const unit_t *t, char *buf,
                     size_t n)
{
    double x = t->div != 1 ? v * t->div : v / t->mul;
    if (!isfinite(x)) return -1;
    /* A low precision can print in exponent form ("4e+01"), longer than a
     * higher one ("40"), so every precision is tried. */
    int best = -1;
    char cand[96];
    for (int prec = 1; prec <= 17; prec++) {
        int w = snprintf(cand, sizeof cand, "%.*g%s", prec, x, t->name);
        if (w < 0 || (size_t)w >= sizeof cand || (size_t)w >= n) continue;
        double back;
        if (units_parse(cand, kind, 0, &back, NULL, 0) != 0 || back != v) continue;
        if (best < 0 || w < best) {
            best = w;
            memcpy(buf, cand, (size_t)w + 1);
        }
    }
    return best;
}

int units_format(double v, enum unit_kind kind, char *buf, size_t n)
{
    if (isinf(v) && v > 0) {
        int w = snprintf(buf, n, "inf");
        return w < 0 || (size_t)w >= n ? -1 : w;
    }
    const unit_t *t = table(kind);
    if (v == 0) {
        int w = snprintf(buf, n, "0%s", t->name);
        return w < 0 || (size_t)w >= n ? -1 : w;
    }
    char best[96], cand[96];
    int bestw = -1;
    for (; t->name; t++) {
        if (!t->fmt) continue;
        int w = format_in(v, kind, t, cand, sizeof cand);
        if (w > 0 && (bestw < 0 || w < bestw)) {
            bestw = w;
            memcpy(best, cand, (size_t)w + 1);
        }
    }
    if (bestw < 0 || (size_t)bestw >= n) return -1;
    memcpy(buf, best, (size_t)bestw + 1);
    return bestw;
}

int units_split(const char *s, double *x, const char **unit)
{
    size_t len = scan_number(s);
    char num[64];
    if (len == 0 || len >= sizeof num) return -1;
    memcpy(num, s, len);
    num[len] = 0;
    *x = strtod(num, NULL);
    if (!isfinite(*x)) return -1;
    const char *u = s + len;
    while (*u == ' ') u++;
    *unit = u;
    return 0;
}

static const unit_t *find_unit(const unit_t *t, const char *name)
{
    for (; t->name; t++)
        if (strcmp(t->name, name) == 0) return t;
    return NULL;
}

int units_convert(double x, const char *from, const char *to, double *out)
{
    if (strcmp(from, to) == 0) {
        *out = x;
        return 0;
    }
    for (int k = UNIT_DURATION; k <= UNIT_FREQUENCY; k++) {
        const unit_t *a = find_unit(table((enum unit_kind)k), from);
        const unit_t *b = find_unit(table((enum unit_kind)k), to);
        if (!a || !b) continue;
        double base = a->div != 1 ? x / a->div : x * a->mul;
        *out = b->div != 1 ? base * b->div : base / b->mul;
        return 0;
    }
    return -1;
}
