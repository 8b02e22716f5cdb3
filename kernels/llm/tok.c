/* tok — the byte-level BPE tokenizer of GGUF models (see tok.h).
 *
 * What llama.cpp does, and so what is done here (facts read in its
 * src/llama-vocab.cpp and src/unicode.cpp, llama-cpp-python 0.3.36):
 *   - special tokens: control, unknown and user-defined tokens are cut out
 *     of the text first, longest text first, each one's occurrences left to
 *     right in the fragments still raw; control and unknown tokens only
 *     with parse_special, user-defined ones always;
 *   - each raw fragment is split into pieces by the pre-tokenizer, then each
 *     piece's bytes, one symbol each (the GPT-2 byte alphabet), are merged
 *     pair by pair: always the pair of lowest merge rank, the leftmost of
 *     equal ones, until no adjacent pair is a listed merge;
 *   - a symbol that is no token (only a byte whose symbol the vocabulary
 *     lacks, since merges must name tokens here) becomes the tokens whose
 *     text is one byte of its UTF-8 form, when there are any, as llama.cpp
 *     does; usually nothing.
 * Pieces are the bytes of the text: llama.cpp decodes the text to code
 * points, replacing each byte that starts no UTF-8 sequence with U+FFFD,
 * and pre-tokenizes those; here such a byte is classed as U+FFFD is (a
 * symbol) but kept as it is, so the pieces cut at the same places and
 * decode(encode(x)) == x for any bytes whose symbols are tokens.
 */
#include "tok.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tok_unicode.h"

/* tokenizer.ggml.token_type values (llama.cpp's llama_token_type). */
enum { TT_UNDEFINED = 0, TT_NORMAL = 1, TT_UNKNOWN = 2, TT_CONTROL = 3, TT_USER = 4,
       TT_UNUSED = 5, TT_BYTE = 6 };

/* A symbol of the merge loop that was merged into its left neighbour. */
#define DEAD (-2)
/* "No such class": a position past the end of the text being split. */
#define CLASS_NONE (-1)

typedef struct merge_slot {
    uint64_t key;     /* left id << 32 | right id */
    int32_t rank;     /* -1: empty slot */
    int32_t result;   /* the id of the merged text */
} merge_slot_t;

struct tok {
    int n;
    char *text;             /* every token's text, each followed by a NUL */
    size_t *text_off;       /* n + 1: token i is text[text_off[i] .. text_off[i+1] - 1) */
    unsigned char *type;    /* TT_*, after llama.cpp's adjustments by name */
    char *piece;            /* what each token decodes to with special = 1 */
    size_t *piece_off;      /* n + 1, as text_off without the NUL */
    int32_t *id_tab;        /* text -> id, open addressing; -1 empty */
    size_t id_mask;
    merge_slot_t *merge_tab; /* (left id, right id) -> rank and result */
    size_t merge_mask;
    int32_t byte_id[256];   /* the token of byte b's symbol, or -1 */
    int32_t byte_fb[256][2]; /* when byte_id[b] is -1: llama.cpp's fallback
                                tokens (one per byte of the symbol's UTF-8),
                                -1 for none */
    int32_t *special;       /* control, unknown and user-defined tokens, longest first */
    int nspecial;
    int digits;             /* the pre-tokenizer isolates each \p{N} first */
    int bos, eos;
};

/* ---- small helpers ---------------------------------------------------------- */

static uint64_t hash_bytes(const void *p, size_t n)
{
    const unsigned char *s = p;
    uint64_t h = 1469598103934665603ull;   /* FNV-1a */
    for (size_t i = 0; i < n; i++) h = (h ^ s[i]) * 1099511628211ull;
    return h;
}

static uint64_t hash_u64(uint64_t x)
{
    x ^= x >> 33;   /* the finaliser of MurmurHash3: ids are small and dense */
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    return x ^ (x >> 33);
}

/* The smallest power of two >= 2 * n (a table at most half full). */
static size_t table_size(size_t n)
{
    size_t s = 16;
    while (s < 2 * n) s *= 2;
    return s;
}

static const char *tok_text(const tok_t *t, int id, size_t *len)
{
    *len = t->text_off[id + 1] - t->text_off[id] - 1;
    return t->text + t->text_off[id];
}

static int lookup(const tok_t *t, const char *s, size_t len)
{
    for (size_t h = hash_bytes(s, len) & t->id_mask;; h = (h + 1) & t->id_mask) {
        int32_t id = t->id_tab[h];
        if (id < 0) return -1;
        size_t l;
        const char *x = tok_text(t, id, &l);
        if (l == len && memcmp(x, s, len) == 0) return id;
    }
}

/* The rank of merging tokens a and b (and the result in *result), or -1. */
static int merge_rank(const tok_t *t, int32_t a, int32_t b, int32_t *result)
{
    uint64_t key = (uint64_t)(uint32_t)a << 32 | (uint32_t)b;
    for (size_t h = hash_u64(key) & t->merge_mask;; h = (h + 1) & t->merge_mask) {
        const merge_slot_t *m = &t->merge_tab[h];
        if (m->rank < 0) return -1;
        if (m->key == key) {
            *result = m->result;
            return m->rank;
        }
    }
}

/* GPT-2's byte alphabet: bytes that print as themselves in Latin-1 (! to ~,
 * ¡ to ¬, ® to ÿ) are their own code point; the 68 others are U+0100
 * onwards in byte order. */
static uint32_t byte_to_cp(unsigned b)
{
    if (b <= 0x20) return 0x100 + b;
    if (b >= 0x7F && b <= 0xA0) return 0x100 + 33 + (b - 0x7F);
    if (b == 0xAD) return 0x100 + 67;
    return b;
}

/* The byte whose symbol is cp, or -1. */
static int cp_to_byte(uint32_t cp)
{
    if ((cp >= 0x21 && cp <= 0x7E) || (cp >= 0xA1 && cp <= 0xAC) || (cp >= 0xAE && cp <= 0xFF))
        return (int)cp;
    if (cp >= 0x100 && cp <= 0x100 + 32) return (int)(cp - 0x100);
    if (cp >= 0x100 + 33 && cp <= 0x100 + 66) return (int)(0x7F + cp - (0x100 + 33));
    if (cp == 0x100 + 67) return 0xAD;
    return -1;
}

/* Writes cp (<= 0x10FFFF) as UTF-8 into out; its length. */
static size_t utf8_put(uint32_t cp, unsigned char out[4])
{
    if (cp < 0x80) {
        out[0] = (unsigned char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (unsigned char)(0xC0 | cp >> 6);
        out[1] = (unsigned char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (unsigned char)(0xE0 | cp >> 12);
        out[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
        out[2] = (unsigned char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (unsigned char)(0xF0 | cp >> 18);
    out[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3F));
    out[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
    out[3] = (unsigned char)(0x80 | (cp & 0x3F));
    return 4;
}

/* The code point at s[0..n) (n >= 1), its length in *adv. Sequences are
 * accepted as llama.cpp's unicode_cpt_from_utf8 accepts them, so that text
 * is cut where it cuts it: the lead byte gives the length, each
 * continuation byte must be 10xxxxxx, nothing else is checked (overlong
 * forms and surrogates pass). A byte that starts no such sequence is one
 * code point U+FFFD, as there. */
static uint32_t utf8_next(const unsigned char *s, size_t n, size_t *adv)
{
    unsigned char b = s[0];
    size_t need;
    uint32_t cp;
    *adv = 1;
    if (b < 0x80) return b;
    if (b < 0xC0) return 0xFFFD;
    if (b < 0xE0) need = 1, cp = b & 0x1F;
    else if (b < 0xF0) need = 2, cp = b & 0x0F;
    else if (b < 0xF8) need = 3, cp = b & 0x07;
    else return 0xFFFD;
    if (need >= n) return 0xFFFD;
    for (size_t i = 1; i <= need; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0xFFFD;
        cp = cp << 6 | (s[i] & 0x3Fu);
    }
    *adv = need + 1;
    return cp;
}

static int class_at(const unsigned char *s, size_t n, size_t *adv)
{
    if (s[0] < 0x80) {   /* the common case, without the decoder */
        *adv = 1;
        return tok_unicode_class(s[0]);
    }
    return tok_unicode_class(utf8_next(s, n, adv));
}

/* ---- construction ----------------------------------------------------------- */

/* Bytes of file text quoted in a message. */
#define SHOWN_MAX 60

/* s[0..n) fit for a one-line message: control bytes (a line break would
 * split it) and quotes become '?'; past SHOWN_MAX bytes it is cut at a
 * character boundary and "..." added. UTF-8 is kept. buf: SHOWN_MAX + 4. */
static const char *shown(const char *s, size_t n, char *buf)
{
    size_t k = n;
    if (k > SHOWN_MAX) {
        k = SHOWN_MAX;
        while (k > 0 && ((unsigned char)s[k] & 0xC0) == 0x80) k--;
    }
    for (size_t i = 0; i < k; i++) {
        unsigned char c = (unsigned char)s[i];
        buf[i] = c < 0x20 || c == 0x7F || c == '\'' ? '?' : (char)c;
    }
    memcpy(buf + k, k < n ? "..." : "", k < n ? 4 : 1);
    return buf;
}


/* The pre-tokenizers implemented: tokenizer.ggml.pre names that llama.cpp
 * (src/llama-vocab.cpp) maps to the GPT-2 expression alone
 * (LLAMA_VOCAB_PRE_TYPE_GPT2, MPT, OLMO, JAIS, TRILLION, GRANITE_DOCLING) or
 * to "\p{N}" then the GPT-2 expression (STARCODER, REFACT, COMMAND_R,
 * SMOLLM, CODESHELL, EXAONE, MINERVA, MELLUM2), none with ignore_merges.
 * Left out although they share the expression: jina-v2-de, jina-v2-es,
 * jina-v2-code and modern-bert, whose <mask>/[MASK] token llama.cpp gives
 * an lstrip attribute not implemented here. */
static const struct pre_name {
    const char *name;
    int digits;
} PRE_NAMES[] = {
    {"gpt-2", 0}, {"phi-2", 0}, {"jina-es", 0}, {"jina-de", 0}, {"gigachat", 0},
    {"a.x-4.0", 0}, {"mellum", 0}, {"jina-v1-en", 0}, {"roberta-bpe", 0}, {"exaone4", 0},
    {"mpt", 0}, {"olmo", 0}, {"jais", 0}, {"trillion", 0}, {"granite-docling", 0},
    {"starcoder", 1}, {"refact", 1}, {"command-r", 1}, {"smollm", 1}, {"codeshell", 1},
    {"exaone", 1}, {"minerva-7b", 1}, {"mellum2", 1},
};

/* Texts llama.cpp makes control tokens whatever the file says (its list of
 * end-of-generation tokens, llama_vocab::impl::load). */
static const char *const EOG_TEXTS[] = {
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>",
    "<|calls|>", "<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>",
    "_<EOT>", "[EOT]", "[EOS]", "<|end_of_text|>", "<end_of_utterance>", "<eos>",
    "<turn|>", "<|tool_response>",
    "<\357\275\234end\342\226\201of\342\226\201sentence\357\275\234>",
    "[e~[",
};

static int set_pre(tok_t *t, const char *pre, err_t *err)
{
    if (!pre) return err_set(err, ERR_INPUT, "tokenizer.ggml.pre is missing (llama.cpp's "
                                             "'default' pre-tokenizer is not implemented)");
    for (size_t i = 0; i < sizeof PRE_NAMES / sizeof PRE_NAMES[0]; i++)
        if (strcmp(pre, PRE_NAMES[i].name) == 0) {
            t->digits = PRE_NAMES[i].digits;
            return 0;
        }
    char b[SHOWN_MAX + 4];
    return err_set(err, ERR_INPUT,
                   "tokenizer.ggml.pre '%s': pre-tokenizer not implemented (docs/llm.md, "
                   "\"Tokenizer\", lists those that are)", shown(pre, strlen(pre), b));
}

/* Copies the texts; an empty one is named "[EMPTY_i]" as llama.cpp names it. */
static int copy_texts(tok_t *t, const char *const *tokens, const size_t *lens, err_t *err)
{
    size_t total = 0;
    for (int i = 0; i < t->n; i++) {
        if (!tokens[i] && lens[i]) return err_set(err, ERR_INPUT, "token %d has no text", i);
        total += (lens[i] ? lens[i] : 32) + 1;
    }
    t->text_off = malloc(((size_t)t->n + 1) * sizeof *t->text_off);
    t->text = malloc(total);
    if (!t->text_off || !t->text) return err_set(err, ERR_RUNTIME, "tokenizer: out of memory");
    size_t at = 0;
    for (int i = 0; i < t->n; i++) {
        t->text_off[i] = at;
        if (lens[i]) {
            memcpy(t->text + at, tokens[i], lens[i]);
            at += lens[i];
        } else {
            at += (size_t)snprintf(t->text + at, 32, "[EMPTY_%d]", i);
        }
        t->text[at++] = '\0';
    }
    t->text_off[t->n] = at;
    return 0;
}

static int build_ids(tok_t *t, err_t *err)
{
    size_t size = table_size((size_t)t->n);
    t->id_tab = malloc(size * sizeof *t->id_tab);
    if (!t->id_tab) return err_set(err, ERR_RUNTIME, "tokenizer: out of memory");
    memset(t->id_tab, 0xFF, size * sizeof *t->id_tab);   /* all -1 */
    t->id_mask = size - 1;
    for (int i = 0; i < t->n; i++) {
        size_t len;
        const char *s = tok_text(t, i, &len);
        int dup = lookup(t, s, len);
        char b[SHOWN_MAX + 4];
        if (dup >= 0)
            return err_set(err, ERR_INPUT, "token %d '%s' is token %d again", i,
                           shown(s, len, b), dup);
        size_t h = hash_bytes(s, len) & t->id_mask;
        while (t->id_tab[h] >= 0) h = (h + 1) & t->id_mask;
        t->id_tab[h] = i;
    }
    return 0;
}

static int copy_types(tok_t *t, const int *types, err_t *err)
{
    t->type = malloc((size_t)t->n);
    if (!t->type) return err_set(err, ERR_RUNTIME, "tokenizer: out of memory");
    for (int i = 0; i < t->n; i++) {
        int ty = types ? types[i] : TT_NORMAL;   /* no types: all normal, as llama.cpp */
        t->type[i] = (unsigned char)(ty >= TT_NORMAL && ty <= TT_BYTE ? ty : TT_UNDEFINED);
    }
    for (size_t k = 0; k < sizeof EOG_TEXTS / sizeof EOG_TEXTS[0]; k++) {
        int id = lookup(t, EOG_TEXTS[k], strlen(EOG_TEXTS[k]));
        if (id >= 0) t->type[id] = TT_CONTROL;
    }
    return 0;
}

/* Splits merge "A B" at its first space after the first byte, as llama.cpp
 * does, and looks both sides and their concatenation up. */
static int parse_merge(const tok_t *t, int i, const char *m, size_t len, int32_t ids[3],
                       err_t *err)
{
    const char *sp = len > 1 ? memchr(m + 1, ' ', len - 1) : NULL;
    char b[SHOWN_MAX + 4];
    if (!sp)
        return err_set(err, ERR_INPUT, "tokenizer.ggml.merges[%d] '%s' is not 'A B'", i,
                       shown(m, len, b));
    size_t la = (size_t)(sp - m), lb = len - la - 1;
    char *ab = malloc(la + lb + 1);
    if (!ab) return err_set(err, ERR_RUNTIME, "tokenizer: out of memory");
    memcpy(ab, m, la);
    memcpy(ab + la, sp + 1, lb);
    ids[0] = lookup(t, m, la);
    ids[1] = lookup(t, sp + 1, lb);
    ids[2] = lookup(t, ab, la + lb);
    free(ab);
    if (ids[0] < 0 || ids[1] < 0 || ids[2] < 0)
        return err_set(err, ERR_INPUT, "tokenizer.ggml.merges[%d] '%s': %s is not a token", i,
                       shown(m, len, b), ids[0] < 0 ? "its left side" : ids[1] < 0 ? "its right side"
                                                              : "the merged text");
    return 0;
}

static int build_merges(tok_t *t, const char *const *merges, const size_t *mlens, int nm,
                        err_t *err)
{
    size_t size = table_size((size_t)nm);
    t->merge_tab = malloc(size * sizeof *t->merge_tab);
    if (!t->merge_tab) return err_set(err, ERR_RUNTIME, "tokenizer: out of memory");
    for (size_t h = 0; h < size; h++) t->merge_tab[h].rank = -1;
    t->merge_mask = size - 1;
    for (int i = 0; i < nm; i++) {
        int32_t ids[3] = {-1, -1, -1}, res;
        if (!merges[i] && mlens[i]) return err_set(err, ERR_INPUT, "merge %d has no text", i);
        if (parse_merge(t, i, merges[i] ? merges[i] : "", mlens[i], ids, err) != 0) return -1;
        if (merge_rank(t, ids[0], ids[1], &res) >= 0) continue;   /* the first rank stays */
        uint64_t key = (uint64_t)(uint32_t)ids[0] << 32 | (uint32_t)ids[1];
        size_t h = hash_u64(key) & t->merge_mask;
        while (t->merge_tab[h].rank >= 0) h = (h + 1) & t->merge_mask;
        t->merge_tab[h] = (merge_slot_t){key, i, ids[2]};
    }
    return 0;
}

static void build_bytes(tok_t *t)
{
    for (unsigned b = 0; b < 256; b++) {
        unsigned char u[4];
        size_t n = utf8_put(byte_to_cp(b), u);
        t->byte_id[b] = lookup(t, (const char *)u, n);
        t->byte_fb[b][0] = t->byte_fb[b][1] = -1;
        if (t->byte_id[b] >= 0) continue;
        for (size_t k = 0, j = 0; k < n; k++) {
            int id = lookup(t, (const char *)&u[k], 1);
            if (id >= 0) t->byte_fb[b][j++] = id;
        }
    }
}

typedef struct special_key {
    size_t len;
    int32_t id;
} special_key_t;

static int special_cmp(const void *a, const void *b)
{
    const special_key_t *x = a, *y = b;
    if (x->len != y->len) return x->len > y->len ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* Longest first as llama.cpp sorts them; equal lengths (an order its sort
 * leaves unspecified) by id. */
static int build_special(tok_t *t, err_t *err)
{
    int ns = 0;
    for (int i = 0; i < t->n; i++)
        ns += t->type[i] == TT_CONTROL || t->type[i] == TT_USER || t->type[i] == TT_UNKNOWN;
    special_key_t *k = malloc(((size_t)ns + 1) * sizeof *k);
    t->special = malloc(((size_t)ns + 1) * sizeof *t->special);
    if (!k || !t->special) {
        free(k);
        return err_set(err, ERR_RUNTIME, "tokenizer: out of memory");
    }
    ns = 0;
    for (int i = 0; i < t->n; i++)
        if (t->type[i] == TT_CONTROL || t->type[i] == TT_USER || t->type[i] == TT_UNKNOWN) {
            size_t len;
            tok_text(t, i, &len);
            k[ns++] = (special_key_t){len, i};
        }
    qsort(k, (size_t)ns, sizeof *k, special_cmp);
    for (int i = 0; i < ns; i++) t->special[i] = k[i].id;
    t->nspecial = ns;
    free(k);
    return 0;
}

/* ---- what each token decodes to ---------------------------------------------- */

typedef struct buf {
    char *p;
    size_t n, cap;
} buf_t;

static int buf_put(buf_t *b, const void *s, size_t n)
{
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->n + n) cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) return -1;
        b->p = p;
        b->cap = cap;
    }
    if (n) memcpy(b->p + b->n, s, n);
    b->n += n;
    return 0;
}

/* A normal token's text through the inverse byte alphabet, as llama.cpp's
 * llama_decode_text: a code point outside the alphabet gives
 * "[UNK_BYTE_0x<its UTF-8 in hex><the whole text>]". */
static int decode_normal(buf_t *b, const char *text, size_t len)
{
    const unsigned char *s = (const unsigned char *)text;
    for (size_t i = 0; i < len;) {
        size_t adv;
        uint32_t cp = utf8_next(s + i, len - i, &adv);
        int byte = cp_to_byte(cp);
        if (byte >= 0) {
            unsigned char c = (unsigned char)byte;
            if (buf_put(b, &c, 1) != 0) return -1;
        } else {
            unsigned char u[4];
            size_t n = cp <= 0x10FFFF ? utf8_put(cp, u) : (memcpy(u, s + i, adv), adv);
            char hex[16];
            if (buf_put(b, "[UNK_BYTE_0x", 12) != 0) return -1;
            for (size_t k = 0; k < n; k++) {
                snprintf(hex, sizeof hex, "%02x", u[k]);
                if (buf_put(b, hex, 2) != 0) return -1;
            }
            if (buf_put(b, text, len) != 0 || buf_put(b, "]", 1) != 0) return -1;
        }
        i += adv;
    }
    return 0;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* A byte token's text is "<0xHH>" (llama.cpp reads the two hex digits). */
static int decode_byte(buf_t *b, int id, const char *s, size_t len, err_t *err)
{
    int hi = len == 6 ? hexval(s[3]) : -1, lo = len == 6 ? hexval(s[4]) : -1;
    char sb[SHOWN_MAX + 4];
    if (hi < 0 || lo < 0 || memcmp(s, "<0x", 3) != 0 || s[5] != '>')
        return err_set(err, ERR_INPUT, "byte token %d is '%s', not '<0xHH>'", id,
                       shown(s, len, sb));
    unsigned char c = (unsigned char)(hi * 16 + lo);
    if (buf_put(b, &c, 1) != 0) return err_set(err, ERR_RUNTIME, "tokenizer: out of memory");
    return 0;
}

/* llama_token_to_piece with special = 1 for every token: control, unknown
 * and user-defined tokens give their text, normal ones their bytes, byte
 * tokens their byte, unused and undefined ones nothing. */
static int build_pieces(tok_t *t, err_t *err)
{
    buf_t b = {NULL, 0, 0};
    t->piece_off = malloc(((size_t)t->n + 1) * sizeof *t->piece_off);
    if (!t->piece_off) return err_set(err, ERR_RUNTIME, "tokenizer: out of memory");
    for (int i = 0; i < t->n; i++) {
        size_t len;
        const char *s = tok_text(t, i, &len);
        int rc = 0;
        t->piece_off[i] = b.n;
        if (t->type[i] == TT_CONTROL || t->type[i] == TT_UNKNOWN || t->type[i] == TT_USER)
            rc = buf_put(&b, s, len);
        else if (t->type[i] == TT_NORMAL)
            rc = decode_normal(&b, s, len);
        else if (t->type[i] == TT_BYTE && decode_byte(&b, i, s, len, err) != 0) {
            free(b.p);
            return -1;
        }
        if (rc != 0) {
            free(b.p);
            return err_set(err, ERR_RUNTIME, "tokenizer: out of memory");
        }
    }
    t->piece_off[t->n] = b.n;
    t->piece = b.p ? b.p : malloc(1);   /* a vocabulary decoding to nothing */
    if (!t->piece) return err_set(err, ERR_RUNTIME, "tokenizer: out of memory");
    return 0;
}

static int check_id(int id, int n, const char *what, err_t *err)
{
    if (id < -1 || id >= n)
        return err_set(err, ERR_INPUT, "%s %d is not a token id (the vocabulary has %d)", what,
                       id, n);
    return 0;
}

tok_t *tok_create_from(const char *const *tokens, const size_t *lens, const int *types, int n,
                       const char *const *merges, const size_t *mlens, int nmerges,
                       const char *pre, int bos, int eos, err_t *err)
{
    if (n < 1 || nmerges < 0 || !tokens || !lens || (nmerges > 0 && (!merges || !mlens))) {
        err_set(err, ERR_INPUT, "tokenizer: %d tokens and %d merges", n, nmerges);
        return NULL;
    }
    tok_t *t = calloc(1, sizeof *t);
    if (!t) {
        err_set(err, ERR_RUNTIME, "tokenizer: out of memory");
        return NULL;
    }
    t->n = n;
    t->bos = bos;
    t->eos = eos;
    if (set_pre(t, pre, err) != 0 || check_id(bos, n, "tokenizer.ggml.bos_token_id", err) != 0 ||
        check_id(eos, n, "tokenizer.ggml.eos_token_id", err) != 0 ||
        copy_texts(t, tokens, lens, err) != 0 || build_ids(t, err) != 0 ||
        copy_types(t, types, err) != 0 || build_merges(t, merges, mlens, nmerges, err) != 0 ||
        build_special(t, err) != 0 || build_pieces(t, err) != 0) {
        tok_free(t);
        return NULL;
    }
    build_bytes(t);
    return t;
}

void tok_free(tok_t *t)
{
    if (!t) return;
    free(t->text);
    free(t->text_off);
    free(t->type);
    free(t->piece);
    free(t->piece_off);
    free(t->id_tab);
    free(t->merge_tab);
    free(t->special);
    free(t);
}

/* ---- from a GGUF file -------------------------------------------------------- */

/* The arrays tok_create_from takes, pointing into the file's image. */
typedef struct gathered {
    const char **tokens, **merges;
    size_t *lens, *mlens;
    int *types;
    int n, nmerges;
} gathered_t;

static void gathered_free(gathered_t *a)
{
    free(a->tokens);
    free(a->merges);
    free(a->lens);
    free(a->mlens);
    free(a->types);
}

/* A string array's elements; *count its length (at most INT32_MAX). */
static int gather_strings(const gguf_t *g, const char *key, const char ***s, size_t **len,
                          int *count, err_t *err)
{
    int et;
    uint64_t c;
    if (gguf_get_arr(g, key, &et, &c, err) != 0) return -1;
    if (et != GGUF_V_STR || c > 0x7FFFFFFF)
        return err_set(err, ERR_INPUT, "%s: key '%s' is not an array of at most 2^31 - 1 "
                       "strings", gguf_path(g), key);
    *s = malloc((c ? c : 1) * sizeof **s);
    *len = malloc((c ? c : 1) * sizeof **len);
    if (!*s || !*len) return err_set(err, ERR_RUNTIME, "%s: out of memory", gguf_path(g));
    for (uint64_t i = 0; i < c; i++)
        if (gguf_arr_str(g, key, i, &(*s)[i], &(*len)[i], err) != 0) return -1;
    *count = (int)c;
    return 0;
}

/* tokenizer.ggml.token_type, an int32 array at least as long as the
 * vocabulary (llama.cpp's requirement); absent: NULL (all normal). */
static int gather_types(const gguf_t *g, gathered_t *a, err_t *err)
{
    const char *key = "tokenizer.ggml.token_type";
    int et;
    uint64_t c;
    if (!gguf_has(g, key)) return 0;
    if (gguf_get_arr(g, key, &et, &c, err) != 0) return -1;
    if (et != GGUF_V_I32 || c < (uint64_t)a->n)
        return err_set(err, ERR_INPUT, "%s: key '%s' is not an int32 array of %d or more",
                       gguf_path(g), key, a->n);
    a->types = malloc((size_t)a->n * sizeof *a->types);
    if (!a->types) return err_set(err, ERR_RUNTIME, "%s: out of memory", gguf_path(g));
    for (int i = 0; i < a->n; i++) {
        double v;
        if (gguf_arr_num(g, key, (uint64_t)i, &v, err) != 0) return -1;
        a->types[i] = (int)v;
    }
    return 0;
}

/* An optional token id key: -1 when absent. */
static int get_id(const gguf_t *g, const char *key, int *id, err_t *err)
{
    uint32_t v;
    *id = -1;
    if (!gguf_has(g, key)) return 0;
    if (gguf_get_u32(g, key, &v, err) != 0) return -1;
    if (v > 0x7FFFFFFF)   /* no vocabulary is that large */
        return err_set(err, ERR_INPUT, "%s: %s %u is not a token id", gguf_path(g), key, v);
    *id = (int)v;
    return 0;
}

/* 1 when string key (optional) contains one of the words, lower-cased. */
static int key_contains(const gguf_t *g, const char *key, const char *const *words, int nw)
{
    const char *s;
    size_t len;
    if (!gguf_has(g, key) || gguf_get_str(g, key, &s, &len, NULL) != 0) return 0;
    char low[256];
    size_t n = len < sizeof low - 1 ? len : sizeof low - 1;
    for (size_t i = 0; i < n; i++)
        low[i] = (char)(s[i] >= 'A' && s[i] <= 'Z' ? s[i] - 'A' + 'a' : s[i]);
    low[n] = '\0';
    for (int i = 0; i < nw; i++)
        if (strstr(low, words[i])) return 1;
    return 0;
}

/* tokenizer.ggml.model must be "gpt2"; models llama.cpp gives token
 * attributes by name (lstrip/rstrip, not implemented) are refused. */
static int check_model(const gguf_t *g, err_t *err)
{
    static const char *const names[] = {"phi-3", "phi3", "modern-bert"};
    static const char *const archs[] = {"nomic-bert-moe", "jina-bert-v3"};
    const char *s;
    size_t len;
    char sb[SHOWN_MAX + 4];
    if (gguf_get_str(g, "tokenizer.ggml.model", &s, &len, err) != 0) return -1;
    if (len != 4 || memcmp(s, "gpt2", 4) != 0)
        return err_set(err, ERR_INPUT, "%s: tokenizer.ggml.model '%s': only 'gpt2' (byte-level "
                       "BPE) is implemented", gguf_path(g), shown(s, len, sb));
    if (key_contains(g, "general.name", names, 3) ||
        key_contains(g, "general.architecture", archs, 2))
        return err_set(err, ERR_INPUT, "%s: a model whose special tokens llama.cpp strips of "
                       "spaces by name (Phi-3, ModernBERT, Jina v3): not implemented",
                       gguf_path(g));
    return 0;
}

static int gather(const gguf_t *g, gathered_t *a, char **pre, int *bos, int *eos, err_t *err)
{
    const char *s;
    size_t len;
    if (check_model(g, err) != 0 ||
        gather_strings(g, "tokenizer.ggml.tokens", &a->tokens, &a->lens, &a->n, err) != 0 ||
        gather_types(g, a, err) != 0 ||
        gather_strings(g, "tokenizer.ggml.merges", &a->merges, &a->mlens, &a->nmerges, err) != 0 ||
        get_id(g, "tokenizer.ggml.bos_token_id", bos, err) != 0 ||
        get_id(g, "tokenizer.ggml.eos_token_id", eos, err) != 0)
        return -1;
    if (!gguf_has(g, "tokenizer.ggml.pre")) return 0;
    if (gguf_get_str(g, "tokenizer.ggml.pre", &s, &len, err) != 0) return -1;
    /* The name is matched as a C string: a NUL would cut it to a name
     * that may be known. */
    if (memchr(s, '\0', len))
        return err_set(err, ERR_INPUT, "%s: tokenizer.ggml.pre holds a NUL byte", gguf_path(g));
    *pre = malloc(len + 1);
    if (!*pre) return err_set(err, ERR_RUNTIME, "%s: out of memory", gguf_path(g));
    memcpy(*pre, s, len);
    (*pre)[len] = '\0';
    return 0;
}

tok_t *tok_create(const gguf_t *g, err_t *err)
{
    gathered_t a = {0};
    char *pre = NULL;
    int bos = -1, eos = -1;
    tok_t *t = NULL;
    if (gather(g, &a, &pre, &bos, &eos, err) == 0) {
        err_t e;
        t = tok_create_from(a.tokens, a.lens, a.types, a.n, a.merges, a.mlens, a.nmerges, pre,
                            bos, eos, &e);
        if (!t) err_set(err, e.code, "%s: %s", gguf_path(g), e.msg);
    }
    gathered_free(&a);
    free(pre);
    return t;
}

/* ---- queries ---------------------------------------------------------------- */

int tok_vocab(const tok_t *t) { return t->n; }
int tok_bos(const tok_t *t) { return t->bos; }
int tok_eos(const tok_t *t) { return t->eos; }
int tok_find(const tok_t *t, const char *s) { return lookup(t, s, strlen(s)); }

void tok_piece(const tok_t *t, int32_t id, int special, const char **s, size_t *len)
{
    *s = "";
    *len = 0;
    if (id < 0 || id >= t->n) return;
    if (!special && (t->type[id] == TT_CONTROL || t->type[id] == TT_UNKNOWN)) return;
    *s = t->piece + t->piece_off[id];
    *len = t->piece_off[id + 1] - t->piece_off[id];
}

/* ---- encoding: the state of one tok_encode call ------------------------------ */

typedef struct sym {
    int32_t id;          /* a token, -1 (a byte without one) or DEAD */
    int32_t prev, next;  /* neighbours in the piece, -1 at its ends */
} sym_t;

typedef struct cand {    /* a pair that may merge */
    int32_t rank, left, right;
    int32_t lid, rid;    /* the two ids when queued: changed ids mean a stale pair */
    int32_t result;
} cand_t;

typedef struct enc {
    const tok_t *t;
    int32_t **ids;
    size_t *n, *cap;
    sym_t *sym;
    size_t nsym_cap;
    cand_t *heap;
    size_t nheap, heap_cap;
} enc_t;

static int push_id(enc_t *e, int32_t id)
{
    if (*e->n == *e->cap) {
        size_t cap = *e->cap ? *e->cap * 2 : 64;
        int32_t *p = realloc(*e->ids, cap * sizeof *p);
        if (!p) return -1;
        *e->ids = p;
        *e->cap = cap;
    }
    (*e->ids)[(*e->n)++] = id;
    return 0;
}

/* Lowest rank first, then leftmost (llama.cpp's llm_bigram_bpe order). */
static int cand_before(const cand_t *a, const cand_t *b)
{
    return a->rank < b->rank || (a->rank == b->rank && a->left < b->left);
}

static int heap_push(enc_t *e, cand_t c)
{
    if (e->nheap == e->heap_cap) {
        size_t cap = e->heap_cap ? e->heap_cap * 2 : 64;
        cand_t *p = realloc(e->heap, cap * sizeof *p);
        if (!p) return -1;
        e->heap = p;
        e->heap_cap = cap;
    }
    size_t i = e->nheap++;
    while (i > 0 && cand_before(&c, &e->heap[(i - 1) / 2])) {
        e->heap[i] = e->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    e->heap[i] = c;
    return 0;
}

static cand_t heap_pop(enc_t *e)
{
    cand_t top = e->heap[0], last = e->heap[--e->nheap];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= e->nheap) break;
        if (c + 1 < e->nheap && cand_before(&e->heap[c + 1], &e->heap[c])) c++;
        if (!cand_before(&e->heap[c], &last)) break;
        e->heap[i] = e->heap[c];
        i = c;
    }
    if (e->nheap) e->heap[i] = last;
    return top;
}

/* Queues symbols l and r (neighbours, either may be -1) when a merge joins them. */
static int try_pair(enc_t *e, int32_t l, int32_t r)
{
    if (l < 0 || r < 0) return 0;
    int32_t a = e->sym[l].id, b = e->sym[r].id, res;
    if (a < 0 || b < 0) return 0;
    int rank = merge_rank(e->t, a, b, &res);
    if (rank < 0) return 0;
    return heap_push(e, (cand_t){rank, l, r, a, b, res});
}

static int grow_syms(enc_t *e, size_t n)
{
    if (n <= e->nsym_cap) return 0;
    size_t cap = e->nsym_cap ? e->nsym_cap : 64;
    while (cap < n) cap *= 2;
    sym_t *p = realloc(e->sym, cap * sizeof *p);
    if (!p) return -1;
    e->sym = p;
    e->nsym_cap = cap;
    return 0;
}

/* The merge loop over one piece's symbols. */
static int merge_all(enc_t *e)
{
    while (e->nheap) {
        cand_t c = heap_pop(e);
        sym_t *l = &e->sym[c.left], *r = &e->sym[c.right];
        if (l->id != c.lid || r->id != c.rid || l->next != c.right) continue;   /* stale */
        l->id = c.result;
        l->next = r->next;
        if (r->next >= 0) e->sym[r->next].prev = c.left;
        r->id = DEAD;
        if (try_pair(e, l->prev, c.left) != 0 || try_pair(e, c.left, l->next) != 0) return -1;
    }
    return 0;
}

static int push_byte(enc_t *e, unsigned char b)
{
    if (e->t->byte_id[b] >= 0) return push_id(e, e->t->byte_id[b]);
    for (int k = 0; k < 2; k++)
        if (e->t->byte_fb[b][k] >= 0 && push_id(e, e->t->byte_fb[b][k]) != 0) return -1;
    return 0;
}

/* BPE of one piece s[0..len) (len >= 1), its ids appended. */
static int encode_piece(enc_t *e, const unsigned char *s, size_t len)
{
    if (len == 1) return push_byte(e, s[0]);
    if (len > 0x7FFFFFFF || grow_syms(e, len) != 0) return -1;
    int32_t n = (int32_t)len;
    for (int32_t i = 0; i < n; i++)
        e->sym[i] = (sym_t){e->t->byte_id[s[i]], i - 1, i + 1 < n ? i + 1 : -1};
    e->nheap = 0;
    for (int32_t i = 0; i + 1 < n; i++)
        if (try_pair(e, i, i + 1) != 0) return -1;
    if (merge_all(e) != 0) return -1;
    for (int32_t i = 0; i >= 0; i = e->sym[i].next) {
        int rc = e->sym[i].id >= 0 ? push_id(e, e->sym[i].id) : push_byte(e, s[i]);
        if (rc != 0) return -1;
    }
    return 0;
}

/* ---- the pre-tokenizer -------------------------------------------------------- */

/* 's 't 're 've 'm 'll 'd (lower case only) at s[pos]: its length, or 0. */
static size_t contraction(const unsigned char *s, size_t len, size_t pos)
{
    if (s[pos] != '\'' || pos + 1 >= len) return 0;
    unsigned char a = s[pos + 1];
    if (a == 's' || a == 't' || a == 'm' || a == 'd') return 2;
    if (pos + 2 >= len) return 0;
    unsigned char b = s[pos + 2];
    if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return 3;
    return 0;
}

/* The end of the run of class k from pos. */
static size_t run_end(const unsigned char *s, size_t len, size_t pos, int k)
{
    size_t adv;
    while (pos < len && class_at(s + pos, len - pos, &adv) == k) pos += adv;
    return pos;
}

/* The end of the piece that starts at pos, by the GPT-2 expression
 *   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
 * taken as llama.cpp's unicode_regex_split_custom_gpt2 takes it, s[0..len)
 * being the whole text it sees (the lookahead stops at len). */
static size_t gpt2_end(const unsigned char *s, size_t len, size_t pos)
{
    size_t c = contraction(s, len, pos), adv;
    if (c) return pos + c;
    int k = class_at(s + pos, len - pos, &adv);
    if (s[pos] == ' ') k = pos + 1 < len ? class_at(s + pos + 1, len - pos - 1, &adv) : CLASS_NONE;
    if (k == TOK_UNICODE_LETTER || k == TOK_UNICODE_NUMBER || k == TOK_UNICODE_OTHER)
        return run_end(s, len, pos + (s[pos] == ' '), k);
    /* White space: all of it, except the last character when something
     * other than white space follows (\s+(?!\S) leaves that one to the
     * next piece, where " ?X" may take a space). */
    size_t end = pos, last = pos, count = 0;
    while (end < len && class_at(s + end, len - end, &adv) == TOK_UNICODE_SPACE) {
        last = end;
        end += adv;
        count++;
    }
    if (count > 1 && end < len) return last;
    return end > pos ? end : pos + 1;   /* end == pos cannot happen: s[pos] is space here */
}

static int split_gpt2(enc_t *e, const unsigned char *s, size_t len)
{
    for (size_t pos = 0; pos < len;) {
        size_t end = gpt2_end(s, len, pos);
        if (encode_piece(e, s + pos, end - pos) != 0) return -1;
        pos = end;
    }
    return 0;
}

/* One raw fragment: with `digits`, "\p{N}" first (each number character a
 * piece of its own, the text between them split by the GPT-2 expression
 * as a text of its own), else the GPT-2 expression alone. */
static int split_fragment(enc_t *e, const unsigned char *s, size_t len)
{
    if (!e->t->digits) return split_gpt2(e, s, len);
    size_t from = 0, adv;
    for (size_t pos = 0; pos < len; pos += adv) {
        if (class_at(s + pos, len - pos, &adv) != TOK_UNICODE_NUMBER) continue;
        if ((pos > from && split_gpt2(e, s + from, pos - from) != 0) ||
            encode_piece(e, s + pos, adv) != 0)
            return -1;
        from = pos + adv;
    }
    return from < len ? split_gpt2(e, s + from, len - from) : 0;
}

/* ---- special tokens ------------------------------------------------------------ */

typedef struct seg {
    size_t off, len;
    int32_t id;   /* a special token, or -1 for raw text */
} seg_t;

typedef struct segs {
    seg_t *v;
    size_t n, cap;
} segs_t;

static int seg_push(segs_t *s, size_t off, size_t len, int32_t id)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 16;
        seg_t *p = realloc(s->v, cap * sizeof *p);
        if (!p) return -1;
        s->v = p;
        s->cap = cap;
    }
    s->v[s->n++] = (seg_t){off, len, id};
    return 0;
}

/* The first occurrence of needle (nl >= 1 bytes) in hay[0..hl), or hl. */
static size_t find(const char *hay, size_t hl, const char *needle, size_t nl)
{
    for (size_t at = 0; hl - at >= nl;) {
        const char *p = memchr(hay + at, needle[0], hl - at - nl + 1);
        if (!p) break;
        at = (size_t)(p - hay);
        if (memcmp(p, needle, nl) == 0) return at;
        at++;
    }
    return hl;
}

/* Cuts token id's occurrences out of raw segment g of text into out. */
static int cut_one(const char *text, seg_t g, const char *tt, size_t tl, int32_t id, segs_t *out)
{
    size_t at = g.off, end = g.off + g.len;
    for (;;) {
        size_t m = at + find(text + at, end - at, tt, tl);
        if (m == end) break;
        if ((m > at && seg_push(out, at, m - at, -1) != 0) || seg_push(out, m, tl, id) != 0)
            return -1;
        at = m + tl;
    }
    return at < end ? seg_push(out, at, end - at, -1) : 0;
}

/* Cuts special token id out of every raw segment of *cur, into *next
 * (then swapped into *cur). */
static int cut_special(const tok_t *t, const char *text, int32_t id, segs_t *cur, segs_t *next)
{
    size_t tl;
    const char *tt = tok_text(t, id, &tl);
    next->n = 0;
    for (size_t i = 0; i < cur->n; i++) {
        seg_t g = cur->v[i];
        int rc = g.id >= 0 ? seg_push(next, g.off, g.len, g.id)
                           : cut_one(text, g, tt, tl, id, next);
        if (rc != 0) return -1;
    }
    segs_t tmp = *cur;
    *cur = *next;
    *next = tmp;
    return 0;
}

/* 1 when token id's text occurs in some raw segment (most do not: no copy then). */
static int occurs(const tok_t *t, const char *text, int32_t id, const segs_t *cur)
{
    size_t tl;
    const char *tt = tok_text(t, id, &tl);
    for (size_t i = 0; i < cur->n; i++)
        if (cur->v[i].id < 0 && find(text + cur->v[i].off, cur->v[i].len, tt, tl) < cur->v[i].len)
            return 1;
    return 0;
}

static int partition(const tok_t *t, const char *text, size_t len, int parse_special,
                     segs_t *cur)
{
    segs_t next = {NULL, 0, 0};
    int rc = seg_push(cur, 0, len, -1);
    for (int k = 0; rc == 0 && k < t->nspecial; k++) {
        int32_t id = t->special[k];
        if (!parse_special && t->type[id] != TT_USER) continue;
        if (occurs(t, text, id, cur)) rc = cut_special(t, text, id, cur, &next);
    }
    free(next.v);
    return rc;
}

int tok_encode(const tok_t *t, const char *text, size_t len, int parse_special, int32_t **ids,
               size_t *n, size_t *cap, err_t *err)
{
    if (len == 0) return 0;
    enc_t e = {t, ids, n, cap, NULL, 0, NULL, 0, 0};
    segs_t segs = {NULL, 0, 0};
    int rc = partition(t, text, len, parse_special, &segs);
    for (size_t i = 0; rc == 0 && i < segs.n; i++) {
        seg_t g = segs.v[i];
        rc = g.id >= 0 ? push_id(&e, g.id)
                       : split_fragment(&e, (const unsigned char *)text + g.off, g.len);
    }
    free(segs.v);
    free(e.sym);
    free(e.heap);
    if (rc != 0) return err_set(err, ERR_RUNTIME, "tokenizer: out of memory");
    return 0;
}
