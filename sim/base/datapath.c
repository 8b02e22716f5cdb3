/* datapath — data file lookup (see datapath.h). */
#include "base/datapath.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef SPECSIM_ROOT
#define SPECSIM_ROOT "."
#endif

static int try_path(const char *dir, const char *ref, char *out, size_t outsz)
{
    int w = snprintf(out, outsz, "%s/%s", dir, ref);
    return w > 0 && (size_t)w < outsz && access(out, R_OK) == 0 ? 0 : -1;
}

int datapath_resolve(const char *dir, const char *ref, char *out, size_t outsz)
{
    if (ref[0] == '/') {
        snprintf(out, outsz, "%s", ref);
        return strlen(ref) < outsz && access(ref, R_OK) == 0 ? 0 : -1;
    }
    /* "." is the working directory itself: paths stay as the user wrote
     * them in messages. */
    if (dir && !strcmp(dir, ".") && strlen(ref) < outsz && access(ref, R_OK) == 0) {
        snprintf(out, outsz, "%s", ref);
        return 0;
    }
    if (dir && *dir && strcmp(dir, ".") && try_path(dir, ref, out, outsz) == 0)
        return 0;
    const char *env = getenv("SPECSIM_ROOT");
    if (env && *env && try_path(env, ref, out, outsz) == 0) return 0;
    if (try_path(SPECSIM_ROOT, ref, out, outsz) == 0) return 0;
    snprintf(out, outsz, "%s", ref);
    return -1;
}

int datapath_absolute(const char *path, char *out, size_t outsz)
{
    char *real = realpath(path, NULL);
    int w;
    if (real) {
        w = snprintf(out, outsz, "%s", real);
        free(real);
    } else if (path[0] == '/') {
        w = snprintf(out, outsz, "%s", path);
    } else {
        char cwd[4096];
        if (!getcwd(cwd, sizeof cwd)) {
            snprintf(out, outsz, "%s", path);
            return -1;
        }
        /* "./x" reads better as "x" after the directory. */
        while (path[0] == '.' && path[1] == '/') path += 2;
        w = snprintf(out, outsz, "%s/%s", strcmp(cwd, "/") ? cwd : "", path);
    }
    if (w < 0 || (size_t)w >= outsz) {
        snprintf(out, outsz, "%s", path);
        return -1;
    }
    return 0;
}

const char *datapath_where(const char *dir)
{
    if (dir && *dir)
        return "looked next to the scenario, then under $SPECSIM_ROOT and the "
               "source tree specsim was built from";
    return "looked under $SPECSIM_ROOT and the source tree specsim was built from";
}
