/* accepttest — acceptance configurations for tests that build a scenario or
 * an acceptance state in code. They are parsed from YAML text by the
 * loader's own path (accept_cfg_parse), so a test names a model's
 * parameters exactly as a scenario file does. Header-only. */
#ifndef ACCEPTTEST_H
#define ACCEPTTEST_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "accept.h"

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

/* Writes v[0..n) one per line to a new temporary file; its path in path
 * (size >= 32). 0, or -1 when the file cannot be written. */
static inline int accepttest_trace_file(const int *v, int n, char *path)
{
    snprintf(path, 32, "/tmp/specsim-trace-XXXXXX");
    int fd = mkstemp(path);
    if (fd < 0) return -1;
    FILE *f = fdopen(fd, "w");
    if (!f) {
        close(fd);
        return -1;
    }
    for (int i = 0; i < n; i++) fprintf(f, "%d\n", v[i]);
    return fclose(f) == 0 ? 0 : -1;
}

/* A trace model replaying v[0..n) (read from a temporary file, removed once
 * read). Returns what accept_cfg_parse returns, err filled on failure. */
static inline int accepttest_trace(accept_cfg_t *c, const int *v, int n, err_t *err)
{
    char path[32], yaml[96];
    if (accepttest_trace_file(v, n, path) != 0) {
        printf("  accepttest: cannot write a temporary trace\n");
        abort();
    }
    snprintf(yaml, sizeof yaml, "{model: trace, file: %s}", path);
    int rc = accept_cfg_parse(c, yaml, err);
    unlink(path);
    return rc;
}

#endif
