/* Scratch directory for the unit tests that write their own input files
 * (test_inputs, test_sweepfile, test_guard): tmpdir_make creates a fresh one under
 * /tmp, path() names a file in it, put() writes one, tmpdir_remove deletes
 * the lot. Header-only, static inline (a test need not use them all): one
 * test includes it once. */
#ifndef TMPDIR_H
#define TMPDIR_H

#include <stdio.h>
#include <stdlib.h>

#include "check.h"

static char dir[64];

/* tag names the test in the directory's name. 0, or -1 when mkdtemp fails. */
static inline int tmpdir_make(const char *tag)
{
    snprintf(dir, sizeof dir, "/tmp/%s.XXXXXX", tag);
    return mkdtemp(dir) ? 0 : -1;
}

static inline int tmpdir_remove(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* Four results may be in use at once (a rotating set of buffers). */
static inline const char *path(const char *name)
{
    static char buf[4][256];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
    return buf[k];
}

static inline void put(const char *name, const char *text)
{
    FILE *f = fopen(path(name), "wb");
    if (!f) { CHECK(0); return; }
    fputs(text, f);
    fclose(f);
}

#endif
