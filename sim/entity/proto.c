#include "entity/proto.h"

#include <stddef.h>
#include <string.h>

/* The registry: one X(NAME) per protocol, NAME being the suffix of its file
 * sim/entity/proto_NAME.c and of its table proto_NAME. Order = order of names in
 * messages and of the closed forms in specsim analytic's output, which
 * users' scripts read: a new protocol goes last. */
#define PROTO_REGISTRY(X) X(sync) X(async) X(cloud_only) X(edge_only) X(cloud_spec)

#define PROTO_DECLARE(n) extern const proto_ops_t proto_##n;
PROTO_REGISTRY(PROTO_DECLARE)
#define PROTO_ENTRY(n) &proto_##n,
static const proto_ops_t *const REGISTRY[] = {PROTO_REGISTRY(PROTO_ENTRY)};

#define NREG (sizeof REGISTRY / sizeof *REGISTRY)

const proto_ops_t *proto_find(const char *name)
{
    for (size_t i = 0; i < NREG; i++)
        if (strcmp(REGISTRY[i]->name, name) == 0) return REGISTRY[i];
    return NULL;
}

const proto_ops_t *proto_at(size_t i) { return i < NREG ? REGISTRY[i] : NULL; }

const proto_ops_t *proto_default(void) { return &proto_async; }

size_t proto_names(const char **out, size_t max)
{
    for (size_t i = 0; i < NREG && i < max; i++) out[i] = REGISTRY[i]->name;
    return NREG;
}

void proto_form_blocks(proto_form_t *out, double E, double block, const char *block_key,
                       const char *itl_key)
{
    out->tok_s = E / block;
    out->nfigs = 2;
    out->figs[0].key = block_key;
    out->figs[0].v = block;
    out->figs[1].key = itl_key;
    out->figs[1].v = block / E;
}

/* 1 when some group's protocol has the flag at byte offset off of
 * proto_ops_t. */
static int any_flag(const scenario_t *s, size_t off)
{
    for (int g = 0; g < (s->groups ? s->ngroups : 1); g++) {
        const proto_ops_t *p = scenario_group_protocol(s, g)->proto;
        if (*(const int *)((const char *)p + off)) return 1;
    }
    return 0;
}

int proto_any_drafts(const scenario_t *s)
{
    return any_flag(s, offsetof(proto_ops_t, drafts));
}

int proto_any_verifies(const scenario_t *s)
{
    return any_flag(s, offsetof(proto_ops_t, verifies));
}

int proto_any_cloud(const scenario_t *s)
{
    return any_flag(s, offsetof(proto_ops_t, uses_cloud));
}

int proto_any_cloud_drafts(const scenario_t *s)
{
    return any_flag(s, offsetof(proto_ops_t, cloud_drafts));
}

const char *proto_mode_name(const scenario_t *s)
{
    return scenario_mixed(s) ? "mixed" : s->protocol.proto->name;
}
