/* outpath — results file formats by suffix (see outpath.h). Suffixes are
 * matched without regard to case, and a bare ".json" is no name. */
#include "io/outpath.h"

#include <string.h>
#include <strings.h>

static int has_suffix(const char *s, const char *suf)
{
    size_t n = strlen(s), m = strlen(suf);
    return n > m && strcasecmp(s + n - m, suf) == 0;
}

int outpath_check(const char *path, err_t *err)
{
    if (!path || !path[0])
        return err_set(err, ERR_INPUT, "output file: empty path");
    if (has_suffix(path, ".json") || has_suffix(path, ".csv")) return 0;
    return err_set(err, ERR_INPUT,
                   "%s: unknown output format (the file name must end in .csv or .json)",
                   path);
}
