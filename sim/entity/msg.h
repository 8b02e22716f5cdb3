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
 */
#ifndef SPECSIM_MSG_H
#define SPECSIM_MSG_H

#include <stdint.h>

#include "entity/proto.h"

enum msg_kind { MSG_PROMPT = 0, MSG_BLOCK, MSG_FIRST, MSG_VERDICT, MSG_TOKEN };

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

#endif
