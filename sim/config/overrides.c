#include "config/overrides.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int overrides_u64(const char *s, uint64_t *out)
{
    char *end;
    if (!s || *s < '0' || *s > '9') return -1;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end || errno) return -1;
    *out = v;
    return 0;
}

/* Appends one override; own (a malloc'ed "PATH\0VALUE" or NULL) becomes
 * s's. 0, or -1 (own freed) when memory runs out. */
static int push(overrides_t *s, scenario_override_t ov, char *own)
{
    scenario_override_t *o = realloc(s->ov, (size_t)(s->n + 1) * sizeof *o);
    if (!o) { free(own); return -1; }
    s->ov = o;
    if (own) {
        char **w = realloc(s->owned, (size_t)(s->nowned + 1) * sizeof *w);
        if (!w) { free(own); return -1; }
        s->owned = w;
        s->owned[s->nowned++] = own;
    }
    s->ov[s->n++] = ov;
    return 0;
}

static int out_of_memory(err_t *err)
{
    return err_set(err, ERR_RUNTIME, "out of memory");
}

/* PATH=VALUE split on a private copy (argv strings are not ours to edit)
 * and appended; opt NULL: a --set, else the n-th of option opt, its path
 * at column 1 of line n and its value just after the '='. */
static int add_split(overrides_t *s, const char *v, const char *opt, int n, err_t *err)
{
    const char *name = opt ? opt : "--set";
    const char *eq = strchr(v, '=');
    if (!eq || eq == v)
        return err_set(err, ERR_INPUT, "%s needs PATH=VALUE, got '%s'", name, v);
    /* A --set without a value is refused where it is applied, with its
     * position; so is this one, here. */
    if (opt && !eq[1])
        return err_set(err, ERR_INPUT, "%s:%d:%d: %.*s: no value after '=' (give one; "
                       "a key left out of the scenario takes its default)", opt, n,
                       (int)(eq - v) + 1, (int)(eq - v), v);
    char *own = strdup(v);
    if (!own) return out_of_memory(err);
    own[eq - v] = '\0';
    /* (The marks of a --set, src NULL, are the loader's to set.) */
    scenario_override_t ov = {.path = own, .value = own + (eq - v) + 1, .src = opt,
                              .line = n, .col = 1, .vline = n, .vcol = (int)(eq - v) + 2};
    return push(s, ov, own) ? out_of_memory(err) : 0;
}

int overrides_add(overrides_t *s, overrides_kind_t kind, const char *value,
                  err_t *err)
{
    const char *v = value;
    if (kind == OVERRIDES_SEED || kind == OVERRIDES_REPS) {
        const char *name = kind == OVERRIDES_SEED ? "--seed" : "--reps";
        uint64_t x;
        if (overrides_u64(v, &x))
            return err_set(err, ERR_INPUT, "%s needs a non-negative integer, got '%.100s'",
                           name, v);
        scenario_override_t ov = {.path = kind == OVERRIDES_SEED ? "seed" : "replications",
                                  .value = v, .src = name};
        return push(s, ov, NULL) ? out_of_memory(err) : 0;
    }
    if (kind == OVERRIDES_PRECISION) {   /* the loader checks the value */
        scenario_override_t ov = {.path = "precision.relative", .value = v,
                                  .src = "--precision"};
        return push(s, ov, NULL) ? out_of_memory(err) : 0;
    }
    return add_split(s, v, NULL, 0, err);
}

int overrides_add_opt(overrides_t *s, const char *opt, int n, const char *value,
                      err_t *err)
{
    return add_split(s, value, opt, n, err);
}

void overrides_fini(overrides_t *s)
{
    for (int i = 0; i < s->nowned; i++) free(s->owned[i]);
    free(s->owned);
    free(s->ov);
    memset(s, 0, sizeof *s);
}
