/* suggest — "did you mean" (see suggest.h). */
#include "base/suggest.h"

#include <stdio.h>
#include <string.h>

/* Optimal-string-alignment distance (Levenshtein plus adjacent
 * transpositions, the commonest typo). Strings longer than 63 are cut. */
static int edit_distance(const char *a, const char *b)
{
    enum { M = 64 };
    size_t la = strnlen(a, M - 1), lb = strnlen(b, M - 1);
    int d[M][M];
    for (size_t i = 0; i <= la; i++) d[i][0] = (int)i;
    for (size_t j = 0; j <= lb; j++) d[0][j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        for (size_t j = 1; j <= lb; j++) {
            int cost = a[i - 1] != b[j - 1];
            int v = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < v) v = d[i][j - 1] + 1;
            if (d[i - 1][j - 1] + cost < v) v = d[i - 1][j - 1] + cost;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < v)
                v = d[i - 2][j - 2] + 1;
            d[i][j] = v;
        }
    }
    return d[la][lb];
}

const char *suggest_nearest(const char *s, const char *const *cands, size_t n)
{
    size_t len = strlen(s);
    int limit = len <= 3 ? 1 : len <= 6 ? 2 : 3;
    const char *best = NULL;
    int bestd = limit + 1;
    for (size_t i = 0; i < n; i++) {
        int d = edit_distance(s, cands[i]);
        if (d < bestd) {
            bestd = d;
            best = cands[i];
        }
    }
    return best;
}

void suggest_join(char *buf, size_t bufsz, const char *const *names, size_t n)
{
    size_t used = 0;
    if (bufsz) buf[0] = 0;
    for (size_t i = 0; i < n; i++) {
        int w = snprintf(buf + used, bufsz - used, "%s%s", i ? ", " : "", names[i]);
        if (w < 0 || (size_t)w >= bufsz - used) {
            buf[used] = 0;   /* whole names only */
            return;
        }
        used += (size_t)w;
    }
}

void suggest_unknown_key(char *buf, size_t bufsz, const char *key,
                         const char *const *allowed, size_t n)
{
    const char *s = suggest_nearest(key, allowed, n);
    if (s) {
        snprintf(buf, bufsz, "unknown key (did you mean '%s'?)", s);
        return;
    }
    char list[400];
    suggest_join(list, sizeof list, allowed, n);
    snprintf(buf, bufsz, "unknown key (allowed here: %s)", list);
}
