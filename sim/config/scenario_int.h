/* scenario_int — what the loader's files share (sim/config/scenario*.c),
 * and nothing outside sim/config/ includes: the key tables, the resolution
 * context, and each step's entry.
 */
#ifndef SPECSIM_SCENARIO_INT_H
#define SPECSIM_SCENARIO_INT_H

#include <stddef.h>

#include "config/scenario.h"
#include "io/keytab.h"
#include "io/ynode.h"

/* More tenants than this is certainly a mistake (and int sums overflow). */
#define MAX_TENANTS 100000000.0

/* ---- scenario_keys.c: the key tables ---- */
extern const keytab_key_t scenario_keys_top[];
extern const keytab_key_t scenario_keys_protocol[];
extern const keytab_key_t scenario_keys_slo[];
extern const keytab_key_t scenario_keys_precision[];
extern const keytab_key_t scenario_keys_cloud[];
extern const keytab_key_t scenario_keys_tenants[];
extern const keytab_key_t scenario_keys_group[];
/* A replica group's own keys, and the same with the cloud's other keys
 * skipped (for the `cloud:` layer under a group). */
extern const keytab_key_t scenario_keys_rgroup[];
extern const keytab_key_t scenario_keys_rgroup_layer[];

/* The three per-tenant sections (edge, network, workload), each resolved
 * over two layers. */
typedef struct scenario_section {
    const char *name;
    const keytab_key_t *keys;
    size_t off;               /* of the section in tenant_group_t */
} scenario_section_t;
#define SCENARIO_SECTIONS 3
extern const scenario_section_t scenario_keys_sections[SCENARIO_SECTIONS];

/* 1 for a dotted-path segment that names a card: a `--set` that descends
 * into a card given as a path turns it into {base: PATH} first. */
int scenario_keys_is_card(const char *seg);

/* ---- scenario_set.c: the overrides, applied to root in order ---- */
int scenario_set_apply(ynode_t *root, const scenario_override_t *ov, int nov, err_t *err);
/* 1 when s is all decimal digits (a list index in a dotted path). */
int scenario_all_digits(const char *s);

/* ---- scenario_resolve.c and scenario_check.c ---- */
typedef struct sctx {
    keytab_ctx_t kc;
    const ynode_t *root;
    scenario_t *s;
} sctx_t;

/* n unless it is missing or null. */
static inline const ynode_t *scenario_present(const ynode_t *n)
{
    return n && !ynode_is_null(n) ? n : NULL;
}

/* Frees what resolution allocated in g (its distributions, its own
 * acceptance), not g itself (scenario.c). */
void scenario_group_fini(tenant_group_t *g);

/* x->root into *x->s, every default filled in; stem_of names a scenario
 * that gives no name. 0, or -1 with the error at its key. */
int scenario_resolve(sctx_t *x, const char *stem_of);
/* The checks of the whole resolved scenario, then its build (x->s->built).
 * 0, or -1 with the error at its key. */
int scenario_check_whole(sctx_t *x);

#endif
