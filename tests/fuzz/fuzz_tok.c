/* fuzz_tok — the tokenizer (kernels/llm/tok.h) on any bytes.
 *
 * The vocabulary is fixed and built here for each input (it takes
 * microseconds, and no state outlives the input): the 256 byte symbols
 * (ids 0..255, GPT-2's byte alphabet), merges that build a few words,
 * space and newline runs, digit pairs and "é", a control token "<|s|>", a
 * longer control token "<|s|>x" that starts with it, and a user-defined
 * token "<u>". The input is encoded with each implemented kind of
 * pre-tokenizer (digits apart, "smollm"; digits in runs, "gpt-2") and with
 * parse_special 0 and 1; each time
 *   - every id is a token of the vocabulary;
 *   - with parse_special 0 no control token comes out;
 *   - the pieces of the ids (special = 1) are the input again, byte for
 *     byte (every byte has a token here, so nothing can be lost).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "llm/tok.h"

/* Byte b's symbol in GPT-2's byte alphabet, as UTF-8. */
static void byte_symbol(int b, char out[3])
{
    int printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
    int cp = b;
    if (!printable) {
        cp = 256;
        for (int c = 0; c < b; c++)
            cp += !((c >= '!' && c <= '~') || (c >= 0xA1 && c <= 0xAC) || (c >= 0xAE && c <= 0xFF));
    }
    if (cp < 0x80) {
        out[0] = (char)cp;
        out[1] = '\0';
    } else {
        out[0] = (char)(0xC0 | cp >> 6);
        out[1] = (char)(0x80 | (cp & 0x3F));
        out[2] = '\0';
    }
}

/* Ġ is the symbol of ' ', Ċ of '\n'; "Ã©" is "é" (C3 A9). */
static const char *const EXTRA[] = {
    "<|s|>", "<|s|>x", "<u>",   /* 256, 257 control; 258 user-defined */
    "th", "the", "\xc4\xa0t", "\xc4\xa0th", "\xc4\xa0the", "in", "ing",
    "\xc4\xa0\xc4\xa0", "\xc4\xa0\xc4\xa0\xc4\xa0\xc4\xa0", "\xc4\x8a\xc4\x8a", "12", "00",
    "\xc3\x83\xc2\xa9", "'s", "<|",
};
static const int EXTRA_TYPE[] = {3, 3, 4};   /* the rest normal */
static const char *const MERGES[] = {
    "t h", "th e", "\xc4\xa0 t", "\xc4\xa0t h", "\xc4\xa0th e", "i n", "in g", "\xc4\xa0 \xc4\xa0",
    "\xc4\xa0\xc4\xa0 \xc4\xa0\xc4\xa0", "\xc4\x8a \xc4\x8a", "1 2", "0 0", "\xc3\x83 \xc2\xa9",
    "' s", "< |",
};

/* The vocabulary with pre-tokenizer pre; aborts if it cannot be built
 * (a broken tokenizer, not an input problem). */
static tok_t *vocab(const char *pre)
{
    enum { NE = sizeof EXTRA / sizeof EXTRA[0], NM = sizeof MERGES / sizeof MERGES[0] };
    char sym[256][3];
    const char *text[256 + NE];
    size_t len[256 + NE], mlen[NM];
    int type[256 + NE], n = 0;
    for (int b = 0; b < 256; b++) {
        byte_symbol(b, sym[b]);
        text[n] = sym[b], type[n] = 1;
        len[n] = strlen(text[n]);
        n++;
    }
    for (int i = 0; i < NE; i++) {
        text[n] = EXTRA[i];
        len[n] = strlen(EXTRA[i]);
        type[n] = i < 3 ? EXTRA_TYPE[i] : 1;
        n++;
    }
    for (int i = 0; i < NM; i++) mlen[i] = strlen(MERGES[i]);
    err_t err;
    tok_t *t = tok_create_from(text, len, type, n, MERGES, mlen, NM, pre, -1, -1, &err);
    if (!t) fuzz_fail("the fixed vocabulary is refused", err.msg);
    return t;
}

static void check(const tok_t *t, const uint8_t *data, size_t size, int special)
{
    int32_t *ids = NULL;
    size_t n = 0, cap = 0, at = 0;
    err_t err;
    if (tok_encode(t, (const char *)data, size, special, &ids, &n, &cap, &err) != 0)
        fuzz_fail("tok_encode failed", err.msg);
    for (size_t i = 0; i < n; i++) {
        char detail[96];
        snprintf(detail, sizeof detail, "id %d at %zu of %zu", ids[i], i, n);
        if (ids[i] < 0 || ids[i] >= tok_vocab(t)) fuzz_fail("an id out of the vocabulary", detail);
        if (!special && (ids[i] == 256 || ids[i] == 257))
            fuzz_fail("a control token without parse_special", detail);
        const char *s;
        size_t len;
        tok_piece(t, ids[i], 1, &s, &len);
        if (len > size - at || memcmp(s, data + at, len) != 0)
            fuzz_fail("the pieces are not the input", detail);
        at += len;
    }
    if (at != size) fuzz_fail("the pieces are shorter than the input", NULL);
    free(ids);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const pres[] = {"smollm", "gpt-2"};
    for (int p = 0; p < 2; p++) {
        tok_t *t = vocab(pres[p]);
        check(t, data, size, 0);
        check(t, data, size, 1);
        tok_free(t);
    }
    return 0;
}
