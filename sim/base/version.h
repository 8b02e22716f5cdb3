/* version — which build of specsim wrote an output.
 *
 * The definition is generated at build time (scripts/version.sh writes
 * build/gen/version.c): the number comes from the VERSION file at the
 * repository root, the commit from `git describe --always --dirty`, "unknown"
 * when the tree is not a git checkout. Every output that must be
 * reproducible records this line (`specsim --version` prints it).
 */
#ifndef SPECSIM_VERSION_H
#define SPECSIM_VERSION_H

#include "base/api.h"

/* "VERSION (commit HASH)": a static string; each program prefixes its own
 * name (calibrate). */
const char *version_build(void);
/* "specsim VERSION (commit HASH)": a static string. */
SPECSIM_API const char *version_string(void);

#endif
