/* suggest — the one "did you mean" of every input reader (scenario keys and
 * names, cards, calibration tables, sweep specs), so a typo is answered the
 * same way wherever it is made.
 *
 * Depends on nothing else in sim/, so any module may use it.
 */
#ifndef SPECSIM_SUGGEST_H
#define SPECSIM_SUGGEST_H

#include <stddef.h>

/* The nearest of cands (n strings) to s by edit distance (Levenshtein plus
 * adjacent transpositions), or NULL when none is close enough to be a
 * plausible typo: at most 1 edit for words of up to 3 characters, 2 up to
 * 6, 3 beyond. Ties go to the earliest candidate. */
const char *suggest_nearest(const char *s, const char *const *cands, size_t n);

/* names[0..n) joined by ", " into buf; the names that do not fit are left
 * out whole. */
void suggest_join(char *buf, size_t bufsz, const char *const *names, size_t n);

/* The problem text for a key that is not one of allowed[0..n): "unknown
 * key (did you mean 'x'?)" when one is close, else "unknown key (allowed
 * here: a, b, ...)". */
void suggest_unknown_key(char *buf, size_t bufsz, const char *key,
                         const char *const *allowed, size_t n);

#endif
