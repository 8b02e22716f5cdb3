/* tok — the byte-level BPE tokenizer and detokenizer of a GGUF model
 * (`tokenizer.ggml.model = gpt2`), built from the file's vocabulary, token
 * types and merges.
 *
 * Encoding, as llama.cpp does it for this tokenizer family:
 *   1. the text is split at every occurrence of a special token's text,
 *      longest first, each of which becomes that token: user-defined tokens
 *      always, control and unknown ones with parse_special;
 *   2. each remaining fragment is split by the pre-tokenizer of the file's
 *      `tokenizer.ggml.pre` (the regular expressions of the GPT-2 family,
 *      Unicode categories from kernels/llm/tok_unicode.h);
 *   3. each piece's bytes are mapped to the GPT-2 byte alphabet and merged
 *      by rank (lowest first, leftmost on ties) until no listed merge
 *      applies; each resulting symbol is a vocabulary entry.
 * Decoding maps a token's text back through the byte alphabet (control
 * tokens decode to nothing unless asked for).
 *
 * One difference with llama.cpp, on text that is not UTF-8: llama.cpp
 * replaces each byte that starts no UTF-8 sequence by U+FFFD before
 * tokenizing; here the byte is kept (it becomes its byte symbol's token)
 * and cut where U+FFFD would be, so the pieces are the same and
 * decode(encode(x)) == x for every x whose bytes all have a token.
 *
 * Pre-tokenizers known: the ones tok_create accepts are listed in
 * docs/llm.md; any other `tokenizer.ggml.pre` is refused with its name.
 * A tok_t is read-only once built: threads may share one.
 */
#ifndef SPECSIM_TOK_H
#define SPECSIM_TOK_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "gguf.h"

typedef struct tok tok_t;

/* Builds the tokenizer of g. NULL with err ("FILE: what") when the file
 * has no or a malformed tokenizer (unknown model or pre-tokenizer, a merge
 * naming a symbol not in the vocabulary, a token id out of range). The
 * caller owns it: tok_free. g may be closed afterwards (everything is
 * copied). */
tok_t *tok_create(const gguf_t *g, err_t *err);
void tok_free(tok_t *t);

/* The same from arrays (what tok_create reads from the file, and what the
 * tests build by hand): tokens[i] (lens[i] bytes, may hold NULs) is token
 * i's text; types[i] its tokenizer.ggml.token_type (1 normal, 2 unknown,
 * 3 control, 4 user-defined, 5 unused, 6 byte; NULL: all normal);
 * merges[j] (mlens[j] bytes) is "A B", rank j; pre names the
 * pre-tokenizer (tokenizer.ggml.pre); bos and eos are ids or -1. NULL
 * with err ("KEY...: what", without a file name) when they do not make a
 * tokenizer: a merge whose sides or result are not tokens, a duplicate
 * token text, an unknown pre-tokenizer, an id out of range. Everything is
 * copied; the caller owns the result: tok_free. */
tok_t *tok_create_from(const char *const *tokens, const size_t *lens, const int *types, int n,
                       const char *const *merges, const size_t *mlens, int nmerges,
                       const char *pre, int bos, int eos, err_t *err);

int tok_vocab(const tok_t *t);
int tok_bos(const tok_t *t);   /* -1 when the file names none */
int tok_eos(const tok_t *t);
/* The id of a token whose text is exactly s (e.g. "<|im_end|>"), or -1. */
int tok_find(const tok_t *t, const char *s);

/* Encodes text[0..len) (UTF-8; a byte that is not is encoded as its byte
 * symbol's token, see above) and appends the ids to *ids (a malloc'd array
 * of *n ids with room for *cap, grown with realloc; start with NULL, 0,
 * 0). No BOS is added. 0, or -1 with err when out of memory. The caller
 * owns *ids. */
int tok_encode(const tok_t *t, const char *text, size_t len, int parse_special, int32_t **ids,
               size_t *n, size_t *cap, err_t *err);

/* The bytes token id stands for: *s points to them (owned by t), *len
 * their count. A control token gives its text when special is 1, nothing
 * otherwise. An id out of range gives nothing. */
void tok_piece(const tok_t *t, int32_t id, int special, const char **s, size_t *len);

#endif
