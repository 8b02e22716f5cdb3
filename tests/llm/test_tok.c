/* The tokenizer (kernels/llm/tok.h) on vocabularies built by hand, whose
 * ids are counted here by hand: ids 0..255 are the 256 byte symbols (so a
 * byte's id is its value), the tokens after them are listed per test.
 *   - merge order by rank, ties to the leftmost pair, pieces no merge
 *     reduces, digits one by one (smollm) or in runs (gpt-2), contractions
 *     (lower case only), white space before a word and newlines, special
 *     tokens with parse_special on and off (user-defined ones always),
 *     longest special first, invalid UTF-8, the empty text;
 *   - decoding: byte alphabet, byte tokens, control tokens only when asked;
 *   - decode(encode(x)) == x on pseudo-random bytes;
 *   - the Unicode classes on code points whose category the standard gives;
 *   - tok_create on small GGUF files (metadata only, written here as the
 *     format lays it out: docs/llm.md, "GGUF"), and refusals.
 * The real model against llama.cpp: tests/cli/llm_tok.sh, which runs
 *   test_tok --ids MODEL TEXTFILE [DECODED]
 * (our ids of TEXTFILE, special tokens parsed, one per line on stdout; with
 * DECODED, the concatenation of their pieces written there). */
#include <stdint.h>

#include "check.h"
#include "gguf.h"
#include "tok.h"
#include "tok_unicode.h"

/* ---- hand-built vocabularies -------------------------------------------------- */

/* GPT-2's bytes_to_unicode as its published definition states it: the
 * printable Latin-1 bytes keep their code point, the others get 256, 257,
 * ... in byte order. Writes byte b's symbol as UTF-8 into out. */
static void byte_symbol(int b, char out[3])
{
    int cp = b, n = 0;
    int printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
    if (!printable) {
        cp = 256;
        for (int c = 0; c < b; c++)
            cp += !((c >= '!' && c <= '~') || (c >= 0xA1 && c <= 0xAC) || (c >= 0xAE && c <= 0xFF));
    }
    if (cp < 0x80) out[n++] = (char)cp;
    else {
        out[n++] = (char)(0xC0 | cp >> 6);
        out[n++] = (char)(0x80 | (cp & 0x3F));
    }
    out[n] = '\0';
}

typedef struct vocab {
    char sym[256][3];
    const char *text[300];
    size_t len[300];
    int type[300];
    int n;
} vocab_t;

/* Ids 0..255 the byte symbols, then extra[0..ne) with types (NULL: normal). */
static tok_t *build(const char *const *extra, const int *types, int ne, const char *const *merges,
                    int nm, const char *pre, err_t *err)
{
    static vocab_t v;
    size_t mlen[64];
    v.n = 256 + ne;
    for (int b = 0; b < 256; b++) {
        byte_symbol(b, v.sym[b]);
        v.text[b] = v.sym[b];
        v.len[b] = strlen(v.sym[b]);
        v.type[b] = 1;
    }
    for (int i = 0; i < ne; i++) {
        v.text[256 + i] = extra[i];
        v.len[256 + i] = strlen(extra[i]);
        v.type[256 + i] = types ? types[i] : 1;
    }
    for (int i = 0; i < nm; i++) mlen[i] = strlen(merges[i]);
    return tok_create_from(v.text, v.len, v.type, v.n, merges, mlen, nm, pre, -1, -1, err);
}

/* Encodes s and compares with want[0..nw). */
static int same_ids(const tok_t *t, const char *s, size_t len, int special, const int *want, int nw)
{
    int32_t *ids = NULL;
    size_t n = 0, cap = 0;
    err_t err;
    int ok = tok_encode(t, s, len, special, &ids, &n, &cap, &err) == 0 && n == (size_t)nw;
    for (int i = 0; ok && i < nw; i++) ok = ids[i] == want[i];
    if (!ok) {
        printf("  '%.*s': got", (int)len, s);
        for (size_t i = 0; i < n; i++) printf(" %d", ids[i]);
        printf(", expected");
        for (int i = 0; i < nw; i++) printf(" %d", want[i]);
        printf("\n");
    }
    free(ids);
    return ok;
}

#define IDS(t, s, special, ...)                                                         \
    do {                                                                              \
        const int want_[] = {__VA_ARGS__};                                            \
        CHECK(same_ids(t, s, sizeof(s) - 1, special, want_, sizeof want_ / sizeof want_[0])); \
    } while (0)

/* ---- BPE ------------------------------------------------------------------------ */

static void test_merge_order(void)
{
    /* "b c" ranks before "a b": "abc" becomes a + bc, then abc. */
    const char *extra[] = {"bc", "ab", "abc"};   /* 256, 257, 258 */
    const char *merges[] = {"b c", "a b", "a bc"};
    err_t err;
    tok_t *t = build(extra, NULL, 3, merges, 3, "gpt-2", &err);
    CHECK(t != NULL);
    if (!t) return;
    IDS(t, "abc", 0, 258);
    IDS(t, "ab", 0, 257);
    IDS(t, "abd", 0, 257, 'd');
    IDS(t, "cab", 0, 'c', 257);
    tok_free(t);
}

static void test_ties_leftmost(void)
{
    const char *extra[] = {"aa"};   /* 256 */
    const char *merges[] = {"a a"};
    err_t err;
    tok_t *t = build(extra, NULL, 1, merges, 1, "gpt-2", &err);
    CHECK(t != NULL);
    if (!t) return;
    IDS(t, "aaa", 0, 256, 'a');
    IDS(t, "aaaa", 0, 256, 256);
    IDS(t, "aaaaa", 0, 256, 256, 'a');
    tok_free(t);
}

static void test_no_merge(void)
{
    const char *extra[] = {"xy"};
    const char *merges[] = {"x y"};
    err_t err;
    tok_t *t = build(extra, NULL, 1, merges, 1, "gpt-2", &err);
    CHECK(t != NULL);
    if (!t) return;
    IDS(t, "yxz", 0, 'y', 'x', 'z');   /* "x z" is not a merge */
    IDS(t, "xyz", 0, 256, 'z');
    tok_free(t);
}

/* smollm: each digit a piece, so "1 2" never merges; gpt-2: runs. The
 * space before a number is its own piece under smollm, part of it under
 * gpt-2 (" ?\p{N}+"). */
static void test_digits(void)
{
    const char *extra[] = {"12", "\304\2401"};   /* 256 "12", 257 "Ġ1" */
    const char *merges[] = {"\xc4\xa0 1", "1 2"};
    err_t err;
    tok_t *s = build(extra, NULL, 2, merges, 2, "smollm", &err);
    tok_t *g = build(extra, NULL, 2, merges, 2, "gpt-2", &err);
    CHECK(s != NULL && g != NULL);
    if (s && g) {
        IDS(s, "12345", 0, '1', '2', '3', '4', '5');
        IDS(g, "12345", 0, 256, '3', '4', '5');
        IDS(s, "a 12", 0, 'a', ' ', '1', '2');
        IDS(g, "a 12", 0, 'a', 257, '2');
        IDS(s, "3.14", 0, '3', '.', '1', '4');
        IDS(g, "3.14", 0, '3', '.', '1', '4');
        /* U+00B2 SUPERSCRIPT TWO is a number (No): a piece of its own. */
        IDS(s, "x\xc2\xb2y", 0, 'x', 0xC2, 0xB2, 'y');
    }
    tok_free(s);
    tok_free(g);
}

static void test_contractions(void)
{
    /* 256 "we", 257 "'l", 258 "'ll", 259 "DO", 260 "DON", 261 "'T", 262 "'s" */
    const char *extra[] = {"we", "'l", "'ll", "DO", "DON", "'T", "'s"};
    const char *merges[] = {"w e", "' l", "'l l", "D O", "DO N", "' T", "' s"};
    err_t err;
    tok_t *t = build(extra, NULL, 7, merges, 7, "gpt-2", &err);
    CHECK(t != NULL);
    if (!t) return;
    IDS(t, "we'll", 0, 256, 258);
    /* Upper case is no contraction: "'" alone (punctuation), then "T". */
    IDS(t, "DON'T", 0, 260, '\'', 'T');
    /* "'lx": "'l" is no contraction, "'" is punctuation, "lx" letters. */
    IDS(t, "'lx", 0, '\'', 'l', 'x');
    IDS(t, "it's", 0, 'i', 't', 262);
    /* Punctuation before the apostrophe takes it: "?'" then "s". */
    IDS(t, "?'s", 0, '?', '\'', 's');
    tok_free(t);
}

/* Ġ is the symbol of ' ', Ċ of '\n'. */
static void test_whitespace(void)
{
    /* 256 "ĠĠ", 257 "Ġb", 258 "ĊĊ" */
    const char *extra[] = {"\xc4\xa0\xc4\xa0", "\304\240b", "\xc4\x8a\xc4\x8a"};
    const char *merges[] = {"\xc4\xa0 \xc4\xa0", "\xc4\xa0 b", "\xc4\x8a \xc4\x8a"};
    err_t err;
    tok_t *t = build(extra, NULL, 3, merges, 3, "gpt-2", &err);
    CHECK(t != NULL);
    if (!t) return;
    /* Three spaces before a word: "  " then " b". */
    IDS(t, "a   b", 0, 'a', 256, 257);
    /* At the end, all of them. */
    IDS(t, "a   ", 0, 'a', 256, ' ');
    /* Two newlines before a word: one each; at the end, one piece. */
    IDS(t, "a\n\nb", 0, 'a', '\n', '\n', 'b');
    IDS(t, "a\n\n", 0, 'a', 258);
    /* A newline then a space before a word: "\n", " b". */
    IDS(t, "\n b", 0, '\n', 257);
    /* Tabs: no " ?" for them. */
    IDS(t, "\t\tb", 0, '\t', '\t', 'b');
    /* U+3000 IDEOGRAPHIC SPACE is white space, but only ' ' joins a word. */
    IDS(t, "a\xe3\x80\x80\xe3\x80\x80" "b", 0, 'a', 0xE3, 0x80, 0x80, 0xE3, 0x80, 0x80, 'b');
    tok_free(t);
}

static void test_letters_and_others(void)
{
    /* 256 "Ã©" (the symbols of bytes C3 A9, "é" in UTF-8), 257 "Ġ!" */
    const char *extra[] = {"\xc3\x83\xc2\xa9", "\xc4\xa0!"};
    const char *merges[] = {"\xc3\x83 \xc2\xa9", "\xc4\xa0 !"};
    err_t err;
    tok_t *t = build(extra, NULL, 2, merges, 2, "gpt-2", &err);
    CHECK(t != NULL);
    if (!t) return;
    /* "é" is a letter: "héllo" is one piece; " ?" takes punctuation too. */
    IDS(t, "h\xc3\xa9llo !!?", 0, 'h', 256, 'l', 'l', 'o', 257, '!', '?');
    /* U+0301 COMBINING ACUTE (CC 81) is a mark, no letter: "e", "\u0301", "x". */
    IDS(t, "e\xcc\x81x", 0, 'e', 0xCC, 0x81, 'x');
    tok_free(t);
}

static void test_special(void)
{
    /* 256 "<|s|>" control, 257 "<u>" user-defined, 258 "<x>" control,
     * 259 "<x>y" control, 260 "<|" normal (a merge) */
    const char *extra[] = {"<|s|>", "<u>", "<x>", "<x>y", "<|"};
    const int types[] = {3, 4, 3, 3, 1};
    const char *merges[] = {"< |"};
    err_t err;
    tok_t *t = build(extra, types, 5, merges, 1, "gpt-2", &err);
    CHECK(t != NULL);
    if (!t) return;
    IDS(t, "a<|s|>b<u>c", 1, 'a', 256, 'b', 257, 'c');
    /* Without parse_special the control token is text; "<u>" is still cut. */
    IDS(t, "a<|s|>b<u>c", 0, 'a', 260, 's', '|', '>', 'b', 257, 'c');
    /* Longest first: "<x>y" before "<x>". */
    IDS(t, "<x>y<x>", 1, 259, 258);
    IDS(t, "<|s|><|s|>", 1, 256, 256);
    CHECK(tok_find(t, "<x>y") == 259);
    CHECK(tok_find(t, "<x>z") == -1);
    tok_free(t);
}

/* A byte that starts no UTF-8 sequence is cut as U+FFFD (a symbol) would
 * be, and stays itself. */
static void test_invalid_utf8(void)
{
    /* 256 "ÿ!" : bytes FF and '!' are both "other", one piece. */
    const char *extra[] = {"\xc3\xbf!"};
    const char *merges[] = {"\xc3\xbf !"};
    err_t err;
    tok_t *t = build(extra, NULL, 1, merges, 1, "gpt-2", &err);
    CHECK(t != NULL);
    if (!t) return;
    IDS(t, "\xff!", 0, 256);
    IDS(t, "\xff\xfe a\x80", 0, 0xFF, 0xFE, ' ', 'a', 0x80);
    /* A sequence cut short (two bytes of a three-byte character). */
    IDS(t, "a\xe4\xb8", 0, 'a', 0xE4, 0xB8);
    tok_free(t);
}

static void test_empty(void)
{
    err_t err;
    tok_t *t = build(NULL, NULL, 0, NULL, 0, "smollm", &err);
    CHECK(t != NULL);
    if (!t) return;
    int32_t *ids = NULL;
    size_t n = 0, cap = 0;
    CHECK(tok_encode(t, "", 0, 1, &ids, &n, &cap, &err) == 0);
    CHECK(n == 0 && ids == NULL);
    /* Appends to what is there. */
    CHECK(tok_encode(t, "ab", 2, 1, &ids, &n, &cap, &err) == 0);
    CHECK(tok_encode(t, "c", 1, 1, &ids, &n, &cap, &err) == 0);
    CHECK(n == 3 && ids[0] == 'a' && ids[1] == 'b' && ids[2] == 'c');
    free(ids);
    tok_free(t);
}

/* ---- decoding ------------------------------------------------------------------- */

static int piece_is(const tok_t *t, int id, int special, const char *want, size_t wl)
{
    const char *s;
    size_t len;
    tok_piece(t, id, special, &s, &len);
    return len == wl && memcmp(s, want, wl) == 0;
}

static void test_decode(void)
{
    /* 256 "Ġhi" normal, 257 "<c>" control, 258 "<0x41>" byte, 259 "<u u>"
     * user-defined, 260 "<unused>" unused, 261 "<unk>" unknown, 262 "x€"
     * normal but € is no byte symbol */
    const char *extra[] = {"\xc4\xa0hi", "<c>", "<0x41>", "<u u>", "<unused>", "<unk>",
                           "x\xe2\x82\xac"};
    const int types[] = {1, 3, 6, 4, 5, 2, 1};
    err_t err;
    tok_t *t = build(extra, types, 7, NULL, 0, "gpt-2", &err);
    CHECK(t != NULL);
    if (!t) return;
    CHECK(piece_is(t, 256, 0, " hi", 3));
    CHECK(piece_is(t, '\n', 0, "\n", 1));
    CHECK(piece_is(t, 0xAD, 0, "\xad", 1));
    CHECK(piece_is(t, 0, 0, "", 1));   /* byte 0: one NUL byte */
    CHECK(piece_is(t, 257, 0, "", 0));
    CHECK(piece_is(t, 257, 1, "<c>", 3));
    CHECK(piece_is(t, 258, 0, "A", 1));
    CHECK(piece_is(t, 259, 0, "<u u>", 5));
    CHECK(piece_is(t, 260, 1, "", 0));
    CHECK(piece_is(t, 261, 0, "", 0));
    CHECK(piece_is(t, 261, 1, "<unk>", 5));
    /* llama.cpp's llama_decode_text: "[UNK_BYTE_0x" hex, the text, "]". */
    const char unk[] = "x[UNK_BYTE_0xe282acx\xe2\x82\xac]";
    CHECK(piece_is(t, 262, 0, unk, sizeof unk - 1));
    CHECK(piece_is(t, -1, 1, "", 0));
    CHECK(piece_is(t, 263, 1, "", 0));
    tok_free(t);
}

static uint64_t lcg(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 33;
}

/* decode(encode(x)) == x for bytes of every kind, with merges and special
 * tokens that the text contains. */
static void test_round_trip(void)
{
    const char *extra[] = {"<|s|>", "<u>", "\xc4\xa0\xc4\xa0", "ab", "\304\240a", "12"};
    const int types[] = {3, 4, 1, 1, 1, 1};
    const char *merges[] = {"\xc4\xa0 \xc4\xa0", "a b", "\xc4\xa0 a", "1 2"};
    const char *pres[] = {"smollm", "gpt-2"};
    const char alphabet[] = "ab 12\n\t'sX<|>u\xc3\xa9\xe4\xb8\xad\xff\x80";
    err_t err;
    uint64_t seed = 42;
    for (int p = 0; p < 2; p++) {
        tok_t *t = build(extra, types, 6, merges, 4, pres[p], &err);
        CHECK(t != NULL);
        if (!t) return;
        for (int trial = 0; trial < 400; trial++) {
            char text[200], back[4000];
            size_t len = lcg(&seed) % sizeof text, bl = 0;
            for (size_t i = 0; i < len; i++)
                text[i] = trial % 2 ? (char)lcg(&seed)
                                    : alphabet[lcg(&seed) % (sizeof alphabet - 1)];
            int32_t *ids = NULL;
            size_t n = 0, cap = 0;
            CHECK(tok_encode(t, text, len, trial % 3 != 0, &ids, &n, &cap, &err) == 0);
            for (size_t i = 0; i < n; i++) {
                const char *s;
                size_t l;
                tok_piece(t, ids[i], 1, &s, &l);
                if (bl + l <= sizeof back) memcpy(back + bl, s, l);
                bl += l;
            }
            CHECK(bl == len && memcmp(back, text, len) == 0);
            free(ids);
        }
        tok_free(t);
    }
}

/* ---- Unicode classes -------------------------------------------------------------- */

static void test_unicode(void)
{
    CHECK(tok_unicode_class('a') == TOK_UNICODE_LETTER);
    CHECK(tok_unicode_class('Z') == TOK_UNICODE_LETTER);
    CHECK(tok_unicode_class('7') == TOK_UNICODE_NUMBER);
    CHECK(tok_unicode_class('_') == TOK_UNICODE_OTHER);
    CHECK(tok_unicode_class(' ') == TOK_UNICODE_SPACE);
    CHECK(tok_unicode_class('\v') == TOK_UNICODE_SPACE);
    CHECK(tok_unicode_class(0x1C) == TOK_UNICODE_OTHER);    /* not White_Space */
    CHECK(tok_unicode_class(0x85) == TOK_UNICODE_SPACE);    /* NEXT LINE */
    CHECK(tok_unicode_class(0xA0) == TOK_UNICODE_SPACE);    /* NO-BREAK SPACE */
    CHECK(tok_unicode_class(0xB2) == TOK_UNICODE_NUMBER);   /* SUPERSCRIPT TWO, No */
    CHECK(tok_unicode_class(0xAA) == TOK_UNICODE_LETTER);   /* FEMININE ORDINAL, Lo */
    CHECK(tok_unicode_class(0x301) == TOK_UNICODE_OTHER);   /* COMBINING ACUTE, Mn */
    CHECK(tok_unicode_class(0x3A9) == TOK_UNICODE_LETTER);  /* OMEGA */
    CHECK(tok_unicode_class(0x661) == TOK_UNICODE_NUMBER);  /* ARABIC-INDIC ONE, Nd */
    CHECK(tok_unicode_class(0x200B) == TOK_UNICODE_OTHER);  /* ZERO WIDTH SPACE, Cf */
    CHECK(tok_unicode_class(0x2028) == TOK_UNICODE_SPACE);  /* LINE SEPARATOR */
    CHECK(tok_unicode_class(0x2164) == TOK_UNICODE_NUMBER); /* ROMAN NUMERAL FIVE, Nl */
    CHECK(tok_unicode_class(0x3000) == TOK_UNICODE_SPACE);
    CHECK(tok_unicode_class(0x4E2D) == TOK_UNICODE_LETTER); /* 中 */
    CHECK(tok_unicode_class(0xFFFD) == TOK_UNICODE_OTHER);  /* So */
    CHECK(tok_unicode_class(0x1F600) == TOK_UNICODE_OTHER); /* 😀 */
    CHECK(tok_unicode_class(0x2EBF0) == TOK_UNICODE_LETTER); /* CJK Ext. I, Unicode 15.1 */
    CHECK(tok_unicode_class(0x10FFFF) == TOK_UNICODE_OTHER);
    CHECK(tok_unicode_class(0x110000) == TOK_UNICODE_OTHER);
    CHECK_STR(tok_unicode_version, "15.1.0");
}

/* ---- refusals --------------------------------------------------------------------- */

static int refused(tok_t *t, const err_t *err, const char *part)
{
    int ok = t == NULL && err->code == ERR_INPUT && strstr(err->msg, part) != NULL;
    if (!ok) printf("  wanted a refusal with '%s', got: %s\n", part, t ? "a tokenizer" : err->msg);
    tok_free(t);
    return ok;
}

static void test_refusals(void)
{
    err_t err;
    const char *dup[] = {"a"};   /* "a" is byte 'a' again */
    CHECK(refused(build(dup, NULL, 1, NULL, 0, "gpt-2", &err), &err, "token 256 'a' is token 97"));
    const char *m1[] = {"ab"};
    CHECK(refused(build(NULL, NULL, 0, m1, 1, "gpt-2", &err), &err, "is not 'A B'"));
    const char *m2[] = {"a b"};   /* "ab" is no token */
    CHECK(refused(build(NULL, NULL, 0, m2, 1, "gpt-2", &err), &err, "the merged text"));
    const char *m3[] = {"a zz"};
    CHECK(refused(build(NULL, NULL, 0, m3, 1, "gpt-2", &err), &err, "its right side"));
    CHECK(refused(build(NULL, NULL, 0, NULL, 0, "llama3", &err), &err, "'llama3'"));
    CHECK(refused(build(NULL, NULL, 0, NULL, 0, "jina-v2-de", &err), &err, "'jina-v2-de'"));
    CHECK(refused(build(NULL, NULL, 0, NULL, 0, NULL, &err), &err, "tokenizer.ggml.pre"));
    const char *b[] = {"<0x4G>"};
    const int bt[] = {6};
    CHECK(refused(build(b, bt, 1, NULL, 0, "gpt-2", &err), &err, "not '<0xHH>'"));
    const char *tx[] = {"a"};
    const size_t tl[] = {1};
    CHECK(refused(tok_create_from(tx, tl, NULL, 1, NULL, NULL, 0, "gpt-2", 1, -1, &err), &err,
                  "bos_token_id 1"));
}

/* ---- from GGUF files ------------------------------------------------------------- */

/* A GGUF file being written: its metadata, appended little-endian. */
typedef struct gw {
    unsigned char b[16384];
    size_t n;
    uint64_t nkv;
} gw_t;

static void gw_put(gw_t *w, const void *p, size_t n)
{
    if (w->n + n > sizeof w->b) abort();   /* the test's files are small */
    memcpy(w->b + w->n, p, n);
    w->n += n;
}

static void gw_u32(gw_t *w, uint32_t v)
{
    unsigned char b[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
                          (unsigned char)(v >> 24)};
    gw_put(w, b, 4);
}

static void gw_u64(gw_t *w, uint64_t v)
{
    gw_u32(w, (uint32_t)v);
    gw_u32(w, (uint32_t)(v >> 32));
}

static void gw_str(gw_t *w, const char *s)
{
    gw_u64(w, strlen(s));
    gw_put(w, s, strlen(s));
}

/* Value types: 4 uint32, 5 int32, 8 string, 9 array. */
static void kv_str(gw_t *w, const char *key, const char *v)
{
    gw_str(w, key);
    gw_u32(w, 8);
    gw_str(w, v);
    w->nkv++;
}

static void kv_u32(gw_t *w, const char *key, uint32_t v)
{
    gw_str(w, key);
    gw_u32(w, 4);
    gw_u32(w, v);
    w->nkv++;
}

static void kv_strs(gw_t *w, const char *key, const char *const *v, int n)
{
    gw_str(w, key);
    gw_u32(w, 9);
    gw_u32(w, 8);
    gw_u64(w, (uint64_t)n);
    for (int i = 0; i < n; i++) gw_str(w, v[i]);
    w->nkv++;
}

static void kv_i32s(gw_t *w, const char *key, const int *v, int n)
{
    gw_str(w, key);
    gw_u32(w, 9);
    gw_u32(w, 5);
    gw_u64(w, (uint64_t)n);
    for (int i = 0; i < n; i++) gw_u32(w, (uint32_t)v[i]);
    w->nkv++;
}

/* Header (magic, version 3, no tensors, the key count), then the keys. */
static int gw_save(const gw_t *w, const char *path)
{
    gw_t h = {.n = 0};
    gw_put(&h, "GGUF", 4);
    gw_u32(&h, 3);
    gw_u64(&h, 0);
    gw_u64(&h, w->nkv);
    FILE *f = fopen(path, "wb");
    int rc = f && fwrite(h.b, 1, h.n, f) == h.n && fwrite(w->b, 1, w->n, f) == w->n ? 0 : -1;
    if (f && fclose(f) != 0) rc = -1;
    return rc;
}

/* A file with the 256 byte symbols, "<|e|>" (256, control), "ab" (257)
 * and the merge "a b"; model and pre as given (NULL: key absent). */
static int write_tok_gguf(const char *path, const char *model, const char *pre)
{
    static vocab_t v;
    static gw_t w;
    const char *merges[] = {"a b"};
    w.n = 0;
    w.nkv = 0;
    for (int b = 0; b < 256; b++) {
        byte_symbol(b, v.sym[b]);
        v.text[b] = v.sym[b];
        v.type[b] = 1;
    }
    v.text[256] = "<|e|>", v.type[256] = 3;
    v.text[257] = "ab", v.type[257] = 1;
    kv_str(&w, "general.architecture", "llama");
    if (model) kv_str(&w, "tokenizer.ggml.model", model);
    if (pre) kv_str(&w, "tokenizer.ggml.pre", pre);
    kv_strs(&w, "tokenizer.ggml.tokens", v.text, 258);
    kv_i32s(&w, "tokenizer.ggml.token_type", v.type, 258);
    kv_strs(&w, "tokenizer.ggml.merges", merges, 1);
    kv_u32(&w, "tokenizer.ggml.eos_token_id", 256);
    return gw_save(&w, path);
}

static tok_t *open_tok(const char *path, err_t *err)
{
    gguf_t *g = gguf_open(path, err);
    if (!g) return NULL;
    tok_t *t = tok_create(g, err);
    gguf_close(g);
    return t;
}

static void test_gguf(void)
{
    char dir[] = "/tmp/test_tok.XXXXXX", path[600];
    err_t err;
    CHECK(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/t.gguf", dir);
    CHECK(write_tok_gguf(path, "gpt2", "smollm") == 0);
    tok_t *t = open_tok(path, &err);
    CHECK(t != NULL);
    if (t) {
        CHECK(tok_vocab(t) == 258);
        CHECK(tok_bos(t) == -1 && tok_eos(t) == 256);
        IDS(t, "xab<|e|>", 1, 'x', 257, 256);
        IDS(t, "xab<|e|>", 0, 'x', 257, '<', '|', 'e', '|', '>');
        tok_free(t);
    }
    CHECK(write_tok_gguf(path, "llama", "smollm") == 0);
    CHECK(refused(open_tok(path, &err), &err, "tokenizer.ggml.model 'llama'"));
    CHECK(strncmp(err.msg, path, strlen(path)) == 0);
    CHECK(write_tok_gguf(path, "gpt2", "qwen2") == 0);
    CHECK(refused(open_tok(path, &err), &err, ": tokenizer.ggml.pre 'qwen2'"));
    CHECK(strncmp(err.msg, path, strlen(path)) == 0);
    CHECK(write_tok_gguf(path, "gpt2", NULL) == 0);
    CHECK(refused(open_tok(path, &err), &err, "tokenizer.ggml.pre is missing"));
    CHECK(write_tok_gguf(path, NULL, "smollm") == 0);
    CHECK(refused(open_tok(path, &err), &err, "tokenizer.ggml.model"));
    unlink(path);
    rmdir(dir);
}

/* ---- --ids: the real model, for tests/cli/llm_tok.sh ------------------------------- */

static char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *s = NULL;
    size_t cap = 0;
    *len = 0;
    if (!f) return NULL;
    for (;;) {
        if (*len == cap) {
            char *p = realloc(s, cap = cap ? 2 * cap : 65536);
            if (!p) break;
            s = p;
        }
        size_t r = fread(s + *len, 1, cap - *len, f);
        *len += r;
        if (r == 0) break;
    }
    int bad = ferror(f) || *len == cap;   /* *len == cap only when realloc failed */
    fclose(f);
    if (bad) {
        free(s);
        return NULL;
    }
    return s;
}

static int ids_mode(const char *model, const char *textfile, const char *decoded)
{
    err_t err;
    size_t len;
    char *text = read_all(textfile, &len);
    if (!text) {
        fprintf(stderr, "test_tok: cannot read %s\n", textfile);
        return 1;
    }
    tok_t *t = open_tok(model, &err);
    int32_t *ids = NULL;
    size_t n = 0, cap = 0;
    int rc = !t || tok_encode(t, text, len, 1, &ids, &n, &cap, &err) != 0;
    if (rc) fprintf(stderr, "test_tok: %s\n", err.msg);
    for (size_t i = 0; !rc && i < n; i++) printf("%d\n", ids[i]);
    FILE *f = !rc && decoded ? fopen(decoded, "wb") : NULL;
    for (size_t i = 0; f && i < n; i++) {
        const char *s;
        size_t l;
        tok_piece(t, ids[i], 1, &s, &l);
        if (fwrite(s, 1, l, f) != l) rc = 1;
    }
    if (!rc && decoded && (!f || fclose(f) != 0)) {
        fprintf(stderr, "test_tok: cannot write %s\n", decoded);
        rc = 1;
    }
    free(ids);
    free(text);
    tok_free(t);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc >= 4 && strcmp(argv[1], "--ids") == 0)
        return ids_mode(argv[2], argv[3], argc > 4 ? argv[4] : NULL);
    RUN(test_merge_order);
    RUN(test_ties_leftmost);
    RUN(test_no_merge);
    RUN(test_digits);
    RUN(test_contractions);
    RUN(test_whitespace);
    RUN(test_letters_and_others);
    RUN(test_special);
    RUN(test_invalid_utf8);
    RUN(test_empty);
    RUN(test_decode);
    RUN(test_round_trip);
    RUN(test_unicode);
    RUN(test_refusals);
    RUN(test_gguf);
    return check_done();
}
