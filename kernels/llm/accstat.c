/* accstat — acceptance statistics and traces (see accstat.h). */
#include "accstat.h"

#include <math.h>
#include <string.h>

/* Blocks of gamma over one stream: complete ones counted by accepted
 * drafts. */
static void blocks(const uint8_t *o, int n, int gamma, accstat_t *s)
{
    int at = 0;
    while (at < n) {
        int a = 0;
        while (at + a < n && a < gamma && o[at + a]) a++;
        if (a < gamma && at + a >= n) return;   /* cut short by the text's end */
        s->counts[gamma][a]++;
        at += a + (a < gamma);
    }
}

static void runs(const uint8_t *o, int n, accstat_t *s)
{
    for (int i = 0; i < n;) {
        int j = i;
        while (j < n && o[j] == o[i]) j++;
        int len = j - i > ACCSTAT_RUNMAX ? ACCSTAT_RUNMAX : j - i;
        if (o[i]) s->run1[len]++;
        else s->run0[len]++;
        i = j;
    }
}

void accstat_compute(const accstat_stream_t *st, int ns, accstat_t *s)
{
    memset(s, 0, sizeof *s);
    for (int k = 0; k < ns; k++) {
        for (int i = 0; i < st[k].n; i++) s->accepted += st[k].o[i];
        s->outcomes += st[k].n;
        for (int g = 1; g <= ACCSTAT_GMAX; g++) blocks(st[k].o, st[k].n, g, s);
        runs(st[k].o, st[k].n, s);
    }
}

int accstat_write_trace(FILE *f, const char *const *header, int nh, const accstat_stream_t *st,
                        int ns)
{
    fprintf(f, "# format: positions\n");
    for (int i = 0; i < nh; i++) fprintf(f, "# %s\n", header[i]);
    for (int k = 0; k < ns; k++) {
        if (st[k].label) fprintf(f, "# %s\n", st[k].label);
        int open = 0;
        for (int i = 0; i < st[k].n; i++) {
            fputc(st[k].o[i] ? '1' : '0', f);
            open = 1;
            if (!st[k].o[i]) {
                fputc('\n', f);
                open = 0;
            }
        }
        if (open) fputc('\n', f);
    }
    return ferror(f) ? -1 : 0;
}

long accstat_blocks(const accstat_t *s, int gamma)
{
    long n = 0;
    for (int a = 0; a <= gamma; a++) n += s->counts[gamma][a];
    return n;
}

double accstat_position(const accstat_t *s, int gamma, int i)
{
    long reached = 0, kept = 0;
    for (int a = i - 1; a <= gamma; a++) reached += s->counts[gamma][a];
    for (int a = i; a <= gamma; a++) kept += s->counts[gamma][a];
    return reached ? (double)kept / (double)reached : NAN;
}
