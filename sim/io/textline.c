#include "io/textline.h"

#include <string.h>

void textline_init(textline_t *it, char *text)
{
    it->next = text;
    it->line = 0;
}

char *textline_next(textline_t *it, int *col)
{
    char *p = it->next;
    if (!p) return NULL;
    char *nl = strchr(p, '\n');
    if (nl) *nl++ = 0;
    it->next = nl;
    it->line++;
    char *q = p + strspn(p, " \t");
    *col = (int)(q - p) + 1;
    size_t l = strlen(q);
    while (l && (q[l - 1] == ' ' || q[l - 1] == '\t' || q[l - 1] == '\r')) q[--l] = 0;
    return q;
}
