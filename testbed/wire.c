#include "wire.h"

#include <string.h>

#include "entity/msg.h"

/* ---- little-endian fields ---------------------------------------------- */

typedef struct put {
    uint8_t *p;
    size_t n, cap;
} put_t;

static void put_u(put_t *w, uint64_t v, int bytes)
{
    if (w->n + (size_t)bytes > w->cap) {
        w->n = w->cap + 1;   /* overflow: reported by the caller */
        return;
    }
    for (int k = 0; k < bytes; k++) w->p[w->n++] = (uint8_t)(v >> (8 * k));
}

static void put_f64(put_t *w, double x)
{
    uint64_t v;
    memcpy(&v, &x, sizeof v);
    put_u(w, v, 8);
}

typedef struct get {
    const uint8_t *p;
    size_t n, len;
    int bad;
} get_t;

static uint64_t get_u(get_t *r, int bytes)
{
    if (r->n + (size_t)bytes > r->len) {
        r->bad = 1;
        return 0;
    }
    uint64_t v = 0;
    for (int k = 0; k < bytes; k++) v |= (uint64_t)r->p[r->n++] << (8 * k);
    return v;
}

static double get_f64(get_t *r)
{
    uint64_t v = get_u(r, 8);
    double x;
    memcpy(&x, &v, sizeof x);
    return x;
}

/* ---- frames --------------------------------------------------------------- */

#define TOKENS_MAX 2047

static void put_tokens(put_t *w, const uint32_t *ids, int n)
{
    for (int k = 0; k < n; k++) put_u(w, ids ? ids[k] : 0, 4);
}

/* n ids into m->ids when the caller gave room for them, else skipped. */
static void get_tokens(get_t *r, wire_msg_t *m, int n)
{
    if (n < 0 || n > TOKENS_MAX || r->n + 4 * (size_t)n > r->len) {
        r->bad = 1;
        return;
    }
    m->nids = n;
    if (!m->ids) {
        r->n += 4 * (size_t)n;
        return;
    }
    for (int k = 0; k < n; k++) m->ids[k] = (uint32_t)get_u(r, 4);
}

size_t wire_encode(const wire_msg_t *m, uint8_t *buf, size_t cap)
{
    put_t w = {buf, 0, cap};
    put_u(&w, 0, 4);   /* the length, filled below */
    put_u(&w, (uint64_t)m->kind, 1);
    switch (m->kind) {
    case WIRE_HELLO:
        put_u(&w, m->tenant, 4);
        put_u(&w, m->rep, 4);
        put_u(&w, m->start_ns, 8);
        break;
    case WIRE_PROMPT:
        put_u(&w, m->epoch, 4);
        put_u(&w, m->prompt, 4);
        put_u(&w, m->output, 4);
        put_f64(&w, m->t0);
        if (m->ids && (m->nids < 0 || m->nids > TOKENS_MAX)) return 0;
        if (m->ids) put_tokens(&w, m->ids, m->nids);
        break;
    case WIRE_BLOCK:
        /* gamma 0 is a block of no drafts, plain remote decoding, which an
         * adaptive policy may pick (sim/model/gamma.h). */
        if (m->gamma < 0 || m->gamma > TOKENS_MAX) return 0;
        put_u(&w, m->epoch, 4);
        put_u(&w, (uint64_t)m->gamma, 2);
        put_tokens(&w, m->ids, m->gamma);
        break;
    case WIRE_FIRST:
    case WIRE_TOKEN:
        put_u(&w, m->epoch, 4);
        put_u(&w, m->ids ? m->ids[0] : 0, 4);
        break;
    case WIRE_VERDICT:
        if (m->gamma < 0 || m->gamma > TOKENS_MAX || m->accepted < 0 ||
            m->accepted > m->gamma || m->n < 0 || m->n > TOKENS_MAX)
            return 0;
        put_u(&w, m->epoch, 4);
        put_u(&w, (uint64_t)m->gamma, 2);
        put_u(&w, (uint64_t)m->accepted, 2);
        put_u(&w, (uint64_t)m->n, 2);
        put_tokens(&w, m->ids, m->n);
        break;
    case WIRE_BYE:
        break;
    default:
        return 0;
    }
    if (w.n > cap) return 0;
    size_t body = w.n - 4;
    for (int k = 0; k < 4; k++) buf[k] = (uint8_t)(body >> (8 * k));
    return w.n;
}

/* The fields of one frame body (after the kind byte). */
static void decode_body(get_t *r, wire_msg_t *m)
{
    switch (m->kind) {
    case WIRE_HELLO:
        m->tenant = (uint32_t)get_u(r, 4);
        m->rep = (uint32_t)get_u(r, 4);
        m->start_ns = get_u(r, 8);
        break;
    case WIRE_PROMPT:
        m->epoch = (uint32_t)get_u(r, 4);
        m->prompt = (uint32_t)get_u(r, 4);
        m->output = (uint32_t)get_u(r, 4);
        m->t0 = get_f64(r);
        if (!r->bad && (r->len - r->n) % 4) r->bad = 1;
        else if (!r->bad) get_tokens(r, m, (int)((r->len - r->n) / 4));
        break;
    case WIRE_BLOCK:
        m->epoch = (uint32_t)get_u(r, 4);
        m->gamma = (int)get_u(r, 2);
        if (m->gamma > TOKENS_MAX) r->bad = 1;
        else get_tokens(r, m, m->gamma);
        break;
    case WIRE_FIRST:
    case WIRE_TOKEN:
        m->epoch = (uint32_t)get_u(r, 4);
        get_tokens(r, m, 1);
        break;
    case WIRE_VERDICT:
        m->epoch = (uint32_t)get_u(r, 4);
        m->gamma = (int)get_u(r, 2);
        m->accepted = (int)get_u(r, 2);
        m->n = (int)get_u(r, 2);
        if (m->gamma > TOKENS_MAX || m->accepted > m->gamma || m->n > TOKENS_MAX)
            r->bad = 1;
        else get_tokens(r, m, m->n);
        break;
    case WIRE_BYE:
        break;
    default:
        r->bad = 1;
    }
}

int wire_decode(const uint8_t *buf, size_t len, wire_msg_t *m, size_t *used)
{
    if (len < 4) return 0;
    size_t body = (size_t)buf[0] | (size_t)buf[1] << 8 | (size_t)buf[2] << 16 |
                  (size_t)buf[3] << 24;
    if (body < 1 || body > WIRE_FRAME_MAX - 4) return -1;
    if (len < 4 + body) return 0;
    uint32_t *ids = m->ids;   /* the caller's room, kept */
    memset(m, 0, sizeof *m);
    m->ids = ids;
    get_t r = {buf + 4, 0, body, 0};
    m->kind = (int)get_u(&r, 1);
    decode_body(&r, m);
    if (r.bad || r.n != body) return -1;
    *used = 4 + body;
    return 1;
}

/* ---- the simulator's messages -------------------------------------------- */

uint64_t wire_to_msg(const wire_msg_t *m)
{
    switch (m->kind) {
    case WIRE_PROMPT: return msg_pack(MSG_PROMPT, 0, 0, 0, m->epoch);
    case WIRE_BLOCK: return msg_pack(MSG_BLOCK, 0, 0, (uint32_t)m->gamma, m->epoch);
    case WIRE_FIRST: return msg_pack(MSG_FIRST, 0, 0, 0, m->epoch);
    case WIRE_TOKEN: return msg_pack(MSG_TOKEN, 1, 1, 0, m->epoch);
    default:
        return msg_pack(MSG_VERDICT, (uint32_t)m->accepted, (uint32_t)m->n,
                        (uint32_t)m->gamma, m->epoch);
    }
}

void wire_from_msg(uint64_t msg, wire_msg_t *m)
{
    static const int kinds[] = {[MSG_PROMPT] = WIRE_PROMPT, [MSG_BLOCK] = WIRE_BLOCK,
                                [MSG_FIRST] = WIRE_FIRST, [MSG_VERDICT] = WIRE_VERDICT,
                                [MSG_TOKEN] = WIRE_TOKEN};
    int k = msg_kind(msg);
    m->kind = k <= MSG_TOKEN ? kinds[k] : 0;
    m->epoch = msg_epoch(msg);
    m->gamma = msg_gamma(msg);
    m->accepted = msg_x(msg);
    m->n = msg_y(msg);
}
