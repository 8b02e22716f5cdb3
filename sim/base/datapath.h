/* datapath — where the input readers find the files a scenario names (cards,
 * calibration tables, acceptance traces) when the reference is relative.
 *
 * Looked up, in order: next to the scenario (its directory; "." for a path
 * given on the command line or a scenario read from standard input), under
 * $SPECSIM_ROOT, under the source root the binary was built from — never in
 * the working directory for a scenario elsewhere, so that results do not
 * depend on where specsim is started. An absolute reference is taken as it
 * stands. Kept apart from cards and keytab so both can use it without
 * including each other.
 */
#ifndef SPECSIM_DATAPATH_H
#define SPECSIM_DATAPATH_H

#include <stddef.h>

/* Finds ref; dir is the scenario's directory (NULL or "" for none). Returns
 * 0 with the path to open in out (size outsz), or -1 when no readable file
 * was found (out then holds ref, possibly truncated). */
int datapath_resolve(const char *dir, const char *ref, char *out, size_t outsz);

/* The file at path (as opened, relative to the working directory) named
 * so that it is found from anywhere: its canonical absolute path
 * (realpath), or the working directory joined with it when it no longer
 * exists. What sidecars and `check` output write (docs/formats.md
 * "Sidecars and the files they read"): a relative path there was looked up next to the sidecar and then
 * in the specsim root, where another file of that name could be found.
 * 0, or -1 when the result does not fit in outsz (out then holds path). */
int datapath_absolute(const char *path, char *out, size_t outsz);

/* For "not found" messages: where datapath_resolve(dir, ...) looked. */
const char *datapath_where(const char *dir);

#endif
