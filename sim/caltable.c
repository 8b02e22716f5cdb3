/* PLACEHOLDER — replaced by the service module's owner. */
#include "caltable.h"
#include <string.h>
int caltable_load(const char *path, caltable_t *out, err_t *err)
{
    memset(out, 0, sizeof *out);
    return err_set(err, ERR_INPUT, "%s: calibration tables not implemented yet", path);
}
void caltable_free(caltable_t *t) { (void)t; }
int caltable_write(const caltable_t *t, FILE *f) { (void)t; (void)f; return -1; }
