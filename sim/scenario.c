/* PLACEHOLDER — replaced by the scenario module's owner. */
#include "scenario.h"

#include <string.h>

int scenario_load(const char *path, const scenario_override_t *ov, int nov,
                  scenario_t *out, err_t *err)
{
    (void)ov; (void)nov;
    memset(out, 0, sizeof *out);
    return err_set(err, ERR_INPUT, "%s: scenario loading not implemented yet", path);
}
int scenario_load_string(const char *name, const char *yaml,
                         const scenario_override_t *ov, int nov,
                         scenario_t *out, err_t *err)
{
    (void)yaml; (void)ov; (void)nov;
    memset(out, 0, sizeof *out);
    return err_set(err, ERR_INPUT, "%s: scenario loading not implemented yet", name);
}
void scenario_free(scenario_t *s) { (void)s; }
int scenario_write_yaml(const scenario_t *s, FILE *f) { (void)s; (void)f; return -1; }
const tenant_group_t *scenario_tenant_group(const scenario_t *s, int tenant)
{
    int base = 0;
    for (int g = 0; g < s->ngroups; g++) {
        if (tenant < base + s->groups[g].count) return &s->groups[g];
        base += s->groups[g].count;
    }
    return NULL;
}
const char *scenario_mode_name(enum proto_mode m)
{
    static const char *names[] = {"sync", "async", "cloud-only", "edge-only"};
    return (unsigned)m < 4 ? names[m] : "?";
}
