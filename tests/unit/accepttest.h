/* accepttest — acceptance configurations for tests that build a scenario or
 * an acceptance state in code. They are parsed from YAML text by the
 * loader's own path (accept_cfg_parse), so a test names a model's
 * parameters exactly as a scenario file does. Header-only. */
#ifndef ACCEPTTEST_H
#define ACCEPTTEST_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "model/accept.h"
#include "check.h"

/* *c from text such as "{model: iid, alpha: 0.7}"; a text the loader
 * refuses is a broken test: abort. Release with accept_cfg_fini(). */
static inline void accepttest_cfg(accept_cfg_t *c, const char *yaml)
{
    err_t e;
    if (accept_cfg_parse(c, yaml, &e) != 0) {
        printf("  accepttest: '%s' refused: %s\n", yaml, e.msg);
        fflush(stdout);
        abort();
    }
}

/* Writes v[0..n) one per line to a new temporary file (check_tmp_open);
 * its path in path (size >= 32). 0, or -1 (the current test failed) when
 * the file cannot be written. */
static inline int accepttest_trace_file(const int *v, int n, char *path)
{
    FILE *f = check_tmp_open(path, 32, "w");
    if (!f) return -1;
    for (int i = 0; i < n; i++) fprintf(f, "%d\n", v[i]);
    return fclose(f) == 0 ? 0 : -1;
}

/* A trace model reading the trace file at path, which is removed once read
 * (a temporary the caller wrote). Returns what accept_cfg_parse returns,
 * err filled on failure. */
static inline int accepttest_trace_at(accept_cfg_t *c, const char *path, err_t *err)
{
    char yaml[96];
    snprintf(yaml, sizeof yaml, "{model: trace, file: %s}", path);
    int rc = accept_cfg_parse(c, yaml, err);
    unlink(path);
    return rc;
}

/* A trace model replaying v[0..n) (accepttest_trace_at on a temporary
 * file). */
static inline int accepttest_trace(accept_cfg_t *c, const int *v, int n, err_t *err)
{
    char path[32];
    if (accepttest_trace_file(v, n, path) != 0) {
        printf("  accepttest: cannot write a temporary trace\n");
        abort();
    }
    return accepttest_trace_at(c, path, err);
}

#endif
