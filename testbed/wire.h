/* wire — the testbed's framed binary protocol between an edge fleet and a
 * verifier (docs/testbed.md, "Wire format").
 *
 * Every frame is a 32-bit length (the bytes after it), a one-byte kind and
 * the kind's fields, all little-endian:
 *
 *   HELLO    u32 tenant, u32 replication, u64 run start (CLOCK_MONOTONIC ns)
 *   PROMPT   u32 epoch, u32 prompt tokens, u32 output tokens, f64 request
 *            start (s since the run start), then the prompt's ids when a
 *            real model runs (any number up to 2047 u32; none otherwise)
 *   BLOCK    u32 epoch, u16 gamma, gamma × u32 draft token ids (gamma 0:
 *            a block of no drafts, sim/model/gamma.h)
 *   FIRST    u32 epoch, u32 token id
 *   VERDICT  u32 epoch, u16 gamma, u16 accepted, u16 n, n × u32 token ids
 *   TOKEN    u32 epoch, u32 token id
 *   BYE      (nothing)
 *
 * A frame maps one to one onto the simulator's message (sim/entity/msg.h): the
 * testbed hands the decoded fields to the simulator's own protocol code.
 * Token ids ride along so that a frame is as long as a real one; the
 * emulated devices have no vocabulary and send 0, a real model
 * (build/testbed run --real-model) its tokens.
 */
#ifndef TESTBED_WIRE_H
#define TESTBED_WIRE_H

#include <stddef.h>
#include <stdint.h>

enum wire_kind {
    WIRE_HELLO = 1, WIRE_PROMPT, WIRE_BLOCK, WIRE_FIRST, WIRE_VERDICT,
    WIRE_TOKEN, WIRE_BYE
};

/* The largest frame: a verdict or block of 2047 tokens (sim/entity/msg.h's field). */
#define WIRE_FRAME_MAX (4 + 1 + 10 + 4 * 2048)
/* Ids a frame may carry. */
#define WIRE_IDS_MAX 2047

typedef struct wire_msg {
    int kind;           /* enum wire_kind */
    uint32_t tenant, rep;
    uint64_t start_ns;  /* HELLO */
    uint32_t epoch;
    uint32_t prompt, output;
    double t0;          /* PROMPT */
    int gamma, accepted, n;
    /* Token ids. Encoding: the ids sent (BLOCK: gamma of them, VERDICT: n,
     * FIRST and TOKEN: one, PROMPT: nids after its fields), or NULL for
     * zeros (and a PROMPT without ids). Decoding: when the caller points
     * ids at room for WIRE_IDS_MAX ids, the frame's are copied there and
     * nids says how many; with NULL they are skipped. */
    uint32_t *ids;
    int nids;
} wire_msg_t;

/* Encodes m into buf (cap bytes); returns the frame's length, or 0 when
 * it does not fit or m is not a valid message (unknown kind, a count out
 * of range). */
size_t wire_encode(const wire_msg_t *m, uint8_t *buf, size_t cap);
/* Decodes the frame at the start of buf[0, len): 1 with *m and *used
 * (bytes taken) filled, 0 when the frame is not complete yet, -1 when the
 * bytes are not a valid frame (bad length or kind, fields that disagree
 * with the length). */
int wire_decode(const uint8_t *buf, size_t len, wire_msg_t *m, size_t *used);

/* The simulator's message (sim/entity/msg.h) a frame stands for, and back.
 * wire_from_msg fills kind and the fields the message holds. */
uint64_t wire_to_msg(const wire_msg_t *m);
void wire_from_msg(uint64_t msg, wire_msg_t *m);

#endif
