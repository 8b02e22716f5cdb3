/* PLACEHOLDER — replaced by the scenario module's owner. */
#include "cards.h"
#include <string.h>
int precision_parse(const char *s)
{
    static const char *n[] = {"fp32", "fp16", "w8a16", "w4a16", "w4a4"};
    for (int i = 0; i < PREC_COUNT; i++) if (strcmp(s, n[i]) == 0) return i;
    return -1;
}
const char *precision_name(int p)
{
    static const char *n[] = {"fp32", "fp16", "w8a16", "w4a16", "w4a4"};
    return (unsigned)p < PREC_COUNT ? n[p] : "?";
}
double precision_weight_bytes(int p) { (void)p; return 2.0; }
int cards_resolve_path(const char *ref, char *out, size_t outsz)
{
    strncpy(out, ref, outsz - 1); out[outsz - 1] = 0; return -1;
}
