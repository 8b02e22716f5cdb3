/* outpath — which results files `run` can write, decided by the name's
 * suffix (.json or .csv). On its own so the scenario loader can refuse an
 * output.file at its line before anything runs, without depending on the
 * writers in sim/run/output.c (which use it too).
 */
#ifndef SPECSIM_OUTPATH_H
#define SPECSIM_OUTPATH_H

#include "base/err.h"

/* 0 when path names a format the writers know; else -1 with err
 * (ERR_INPUT "PATH: unknown output format ..." or "output file: empty
 * path"). */
int outpath_check(const char *path, err_t *err);

#endif
