/* shapes — linear-layer shapes of a card (see shapes.h). */
#include "shapes.h"

#include <string.h>

int shapes_linear(const llm_card_t *c, shapes_linear_t out[SHAPES_NLINEAR])
{
    int hd = c->hidden / c->heads;
    const shapes_linear_t s[SHAPES_NLINEAR] = {
        {"qkv", (c->heads + 2 * c->kv_heads) * hd, c->hidden},
        {"o", c->hidden, c->hidden},
        {"gate_up", c->gated_mlp ? 2 * c->ffn : c->ffn, c->hidden},
        {"down", c->hidden, c->ffn},
        {"lm_head", c->vocab, c->hidden},
    };
    memcpy(out, s, sizeof s);
    return SHAPES_NLINEAR;
}
