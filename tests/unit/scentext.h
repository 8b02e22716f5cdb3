/* scentext — a scenario as the text `specsim check` prints
 * (scenario_write_yaml), for the tests that look for a key in it or load it
 * back (the write/load round trip). Header-only. */
#ifndef SCENTEXT_H
#define SCENTEXT_H

#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "config/scenario.h"

/* s written as YAML into a new string (caller frees), or NULL with the
 * current test failed when it cannot be written: a partial text would only
 * make the checks after it fail for the wrong reason. */
static inline char *scentext_yaml(const scenario_t *s)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    int rc = f ? scenario_write_yaml(s, f) : -1;
    if (f && fclose(f) != 0) rc = -1;
    CHECK(rc == 0);
    if (rc == 0) return buf;
    free(buf);
    return NULL;
}

#endif
