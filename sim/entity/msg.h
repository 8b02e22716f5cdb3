/* msg — the messages between a tenant's edge and the cloud, packed into the
 * 64-bit event payload (no allocation per message).
 *
 * Bits 0-2 kind, 3-13 x, 14-24 y, 25-35 gamma, 36-63 epoch (its low 28
 * bits). A block carries its gamma; a verdict carries the accepted drafts
 * (x), the tokens committed (y) and the gamma of the block it judges. Three
 * 11-bit fields hold any value up to GAMMA_MAX + 1. Epochs are
 * compared through msg_epoch_of(): a message could only be taken for one of
 * another epoch after 2^28 epoch changes in its flight time. Blocks carry no
 * id: the cloud numbers them in arrival order, which is send order (links
 * deliver in order and never lose a message).
 *
 * A prompt carries more than 64 bits: its prompt and output lengths (any
 * int) and the request's start t0 (a double, from which the cloud counts
 * the TTFT deadline). Its payload holds only the kind and the epoch; the
 * rest, its body (msg_prompt_t), waits in the tenant's prompt slot
 * (repl_t.prompt_box[i]): the sender writes it when it sends the message
 * (msg_prompt_post) and the receiver copies it into its own state when the
 * message is delivered (msg_prompt_take), so neither side reads the other's
 * tenant. One slot per tenant is enough because a tenant has at most one
 * prompt on its uplink: it serves one request at a time, and a request
 * cannot end (and the next prompt be sent) before the cloud answered its
 * prompt. The slot says whether it is in use, so a protocol that broke
 * that rule would fail loudly rather than overwrite a prompt in flight (it
 * would need a queue of bodies per tenant instead). The payload stays one
 * word and the engine event small: a slot costs no allocation per message,
 * and a prompt is one message per request among many blocks.
 */
#ifndef SPECSIM_MSG_H
#define SPECSIM_MSG_H

#include <stdint.h>

#include "entity/proto.h"

enum msg_kind { MSG_PROMPT = 0, MSG_BLOCK, MSG_FIRST, MSG_VERDICT, MSG_TOKEN, MSG_RESYNC };

#define MSG_FIELD_MASK 0x7FFu
#define MSG_EPOCH_MASK 0xFFFFFFFu

_Static_assert(GAMMA_MAX + 1 <= MSG_FIELD_MASK,
               "a message field must hold gamma + 1");

static inline uint64_t msg_pack(int kind, uint32_t x, uint32_t y,
                                uint32_t gamma, uint32_t epoch)
{
    return (uint64_t)kind | ((uint64_t)(x & MSG_FIELD_MASK) << 3) |
           ((uint64_t)(y & MSG_FIELD_MASK) << 14) |
           ((uint64_t)(gamma & MSG_FIELD_MASK) << 25) |
           ((uint64_t)(epoch & MSG_EPOCH_MASK) << 36);
}
static inline int msg_kind(uint64_t m) { return (int)(m & 7u); }
static inline int msg_x(uint64_t m) { return (int)((m >> 3) & MSG_FIELD_MASK); }
static inline int msg_y(uint64_t m) { return (int)((m >> 14) & MSG_FIELD_MASK); }
static inline int msg_gamma(uint64_t m) { return (int)((m >> 25) & MSG_FIELD_MASK); }
static inline uint32_t msg_epoch(uint64_t m) { return (uint32_t)(m >> 36); }
/* An epoch as a message carries it. */
static inline uint32_t msg_epoch_of(uint32_t epoch) { return epoch & MSG_EPOCH_MASK; }

/* The body of a prompt message: what the cloud learns of a request. */
typedef struct msg_prompt {
    int prompt, output;   /* tokens */
    double t0;            /* the request's start (s), its TTFT's origin */
    int full;             /* the slot holds a body not yet delivered */
    int prefix;           /* of prompt, the tokens earlier turns of its
                             session produced (0: none; docs/design.md
                             "Sessions") */
} msg_prompt_t;

/* The sender fills slot with a prompt's body as it sends the message.
 * 0, or -1 when the slot still holds an undelivered prompt (a bug: see
 * above). */
static inline int msg_prompt_post_turn(msg_prompt_t *slot, int prompt, int prefix,
                                       int output, double t0)
{
    if (slot->full) return -1;
    *slot = (msg_prompt_t){.prompt = prompt, .output = output, .t0 = t0, .full = 1,
                           .prefix = prefix};
    return 0;
}

/* A request that is no session's later turn. */
static inline int msg_prompt_post(msg_prompt_t *slot, int prompt, int output, double t0)
{
    return msg_prompt_post_turn(slot, prompt, 0, output, t0);
}

/* The receiver copies the body out of slot at delivery and frees the slot.
 * 0, or -1 when no prompt was posted (a bug). */
static inline int msg_prompt_take(msg_prompt_t *slot, msg_prompt_t *body)
{
    if (!slot->full) return -1;
    *body = *slot;
    body->full = 0;
    slot->full = 0;
    return 0;
}

/* The body of a reconcile message (protocol.fallback, docs/design.md
 * "Fallback"): the edge's whole state of its current request, not a
 * change, so that a later body may overwrite one still on the uplink
 * (the link came back, went down and came back again): the first of the
 * messages to arrive applies the latest body, the others find the slot
 * empty and do nothing. It travels in the tenant's resync slot
 * (repl_t.resync_box[i]) as a prompt's body does in the prompt slot. */
typedef struct msg_resync {
    uint32_t epoch;       /* the edge's epoch: the cloud takes it as its own */
    int active;           /* the edge has a request under way */
    int fresh;            /* it began during the fallback: the cloud has none of it */
    int prompt, output;   /* its lengths */
    int committed;        /* tokens committed at the edge */
    int base;             /* of which the cloud's KV holds all but the last
                             (committed when the fallback began; fresh: 0) */
    double t0;            /* its start */
    int full;
} msg_resync_t;

static inline void msg_resync_post(msg_resync_t *slot, const msg_resync_t *body)
{
    *slot = *body;
    slot->full = 1;
}

/* 0 with *body, or -1 when the slot is empty (an earlier message of the
 * same fallback applied it). */
static inline int msg_resync_take(msg_resync_t *slot, msg_resync_t *body)
{
    if (!slot->full) return -1;
    *body = *slot;
    slot->full = 0;
    return 0;
}

#endif
