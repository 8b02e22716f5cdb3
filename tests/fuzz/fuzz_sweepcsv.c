/* fuzz_sweepcsv — the sweep-CSV reader of resume and merge
 * (sim/run/sweepfile.h).
 *
 * The input is a sidecar text, then up to three CSV parts, each after a line
 * `#--part`. Every part gets that sidecar beside it and the parts are merged
 * (sweepfile_merge); then the first part is resumed as shard 0 of as many
 * shards as there are parts, against the sidecar and the part's own first
 * line as the header (so that the rows are what gets checked). A merge that
 * succeeds must leave a complete file: resuming it finds every point done.
 * A sidecar claiming more than MAX_POINTS points is skipped: merge then
 * allocates and scans a table that large, which takes seconds under the
 * sanitizers for no new path (libFuzzer would report a hang).
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "run/sweepfile.h"
#include "config/sweepspec.h"

enum { MAX_PARTS = 3, MAX_POINTS = 1 << 20 };

/* The first line of text with its newline ("" when it has none), malloc'ed. */
static char *first_line(const char *text, size_t n)
{
    const char *nl = memchr(text, '\n', n);
    size_t l = nl ? (size_t)(nl - text) + 1 : 0;
    char *s = malloc(l + 1);
    if (!s) fuzz_fail("out of memory", NULL);
    memcpy(s, text, l);
    s[l] = 0;
    return s;
}

/* Resumes csv (shard si of sn) against sidecar and header; returns the rc
 * and sets *ndone and *fresh. */
static int resume(const char *csv, const char *sidecar, const char *header,
                  uint64_t si, uint64_t sn, uint64_t *ndone, int *fresh,
                  err_t *err)
{
    uint64_t total;
    if (sweepfile_sidecar_points(sidecar, &total) != 0 || total == 0 ||
        total > MAX_POINTS)
        return -2;
    unsigned char *done = calloc((size_t)total, 1);
    if (!done) fuzz_fail("out of memory", NULL);
    int rc = sweepfile_resume(csv, sidecar, header, total, si, sn, done, ndone,
                              fresh, err);
    free(done);
    return rc;
}

static char *read_all(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t n = 0;
    FILE *m = open_memstream(&buf, &n);
    if (!f || !m) fuzz_fail("cannot read back", path);
    int c;
    while ((c = fgetc(f)) != EOF) fputc(c, m);
    fclose(f);
    if (fclose(m) != 0) fuzz_fail("cannot read back", path);
    return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_reset();
    const char *seg[MAX_PARTS + 1];
    size_t len[MAX_PARTS + 1];
    int nseg = 0;
    const char *rest = (const char *)data;
    size_t rest_len = size;
    while (rest && nseg <= MAX_PARTS) {
        const char *tail;
        size_t tail_len;
        fuzz_split(rest, rest_len, "#--part", &len[nseg], &tail, &tail_len);
        seg[nseg++] = rest;
        rest = tail;
        rest_len = tail_len;
    }
    if (nseg < 2) return 0;
    /* The sidecar as text (the reader takes C strings from files; a NUL in
     * the input cuts it there alike). */
    char *sidecar = malloc(len[0] + 1);
    if (!sidecar) fuzz_fail("out of memory", NULL);
    memcpy(sidecar, seg[0], len[0]);
    sidecar[len[0]] = 0;
    uint64_t total = 0;
    if (sweepfile_sidecar_points(sidecar, &total) == 0 && total > MAX_POINTS) {
        free(sidecar);
        return 0;
    }

    char paths[MAX_PARTS][4096], scratch[4096];
    const char *parts[MAX_PARTS];
    int nparts = nseg - 1;
    for (int i = 0; i < nparts; i++) {
        char name[64];
        snprintf(name, sizeof name, "part%d.scenario.yaml", i);
        fuzz_write_file(name, seg[0], len[0], scratch, sizeof scratch);
        snprintf(name, sizeof name, "part%d.csv", i);
        fuzz_write_file(name, seg[i + 1], len[i + 1], paths[i], sizeof paths[i]);
        parts[i] = paths[i];
    }
    char out[4096];
    snprintf(out, sizeof out, "%s/merged.csv", fuzz_tmpdir());
    err_t err;
    uint64_t ndone;
    int fresh;
    if (sweepfile_merge(out, parts, nparts, &err) == 0) {
        /* Every point, each once: resuming the merged file has nothing to do. */
        char *merged = read_all(out);
        char *header = first_line(merged, strlen(merged));
        int rc = resume(out, sidecar, header, 0, 1, &ndone, &fresh, &err);
        if (rc != 0 || fresh || ndone != total) {
            fprintf(stderr, "merged:\n%s\n", merged);
            fuzz_fail("a merged sweep file does not resume as complete",
                      rc ? err.msg : "");
        }
        free(header);
        free(merged);
    }
    char *header = first_line(seg[1], len[1]);
    resume(parts[0], sidecar, header, 0, (uint64_t)nparts, &ndone, &fresh, &err);
    free(header);
    free(sidecar);
    return 0;
}
