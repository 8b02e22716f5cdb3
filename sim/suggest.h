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

#endif
