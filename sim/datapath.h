/* datapath — where the input readers find the files a scenario names (cards,
 * calibration tables, acceptance traces) when the reference is relative.
 *
 * Looked up, in order: next to the scenario (when a directory is given), in
 * the working directory, under $SPECSIM_ROOT, under the source root the
 * binary was built from. An absolute reference is taken as it stands. Kept
 * apart from cards and keytab so both can use it without including each
 * other.
 */
#ifndef SPECSIM_DATAPATH_H
#define SPECSIM_DATAPATH_H

#include <stddef.h>

/* Finds ref; dir is the scenario's directory (NULL or "" for none). Returns
 * 0 with the path to open in out (size outsz), or -1 when no readable file
 * was found (out then holds ref, possibly truncated). */
int datapath_resolve(const char *dir, const char *ref, char *out, size_t outsz);

#endif
