/* PLACEHOLDER — replaced by the kernels owner. */
#include "w4a16.h"
#include <stdlib.h>
int w4a16_alloc(w4a16_t *w, int n, int k, int group) { (void)w; (void)n; (void)k; (void)group; return -1; }
void w4a16_free(w4a16_t *w) { (void)w; }
