/* prompts — the prompt files of the real-model runtime and the chat
 * template that wraps a prompt for an instruction-tuned model.
 *
 * A prompt file (scenarios/real/prompts.txt) is UTF-8 text: lines starting
 * with `#` before the first prompt are comments; each prompt starts with a
 * line `### CATEGORY` (a word of letters, digits, '-' and '_') and runs to
 * the next `###` line or the end of the file; blank lines at its ends are
 * dropped, those inside kept. A prompt with no text, a `###` line without a
 * category, text before the first `###`, a NUL byte or a byte that is not
 * UTF-8 (columns count bytes) is an error at its FILE:LINE:COL; a file
 * without prompts, larger than 16 MiB or not a regular file is an error
 * naming FILE. A leading byte order mark is skipped.
 */
#ifndef SPECSIM_PROMPTS_H
#define SPECSIM_PROMPTS_H

#include "base/err.h"
#include "gguf.h"

typedef struct prompt {
    char *category;
    char *text;
    int line;            /* of its `###` line */
} prompt_t;

typedef struct prompts {
    prompt_t *p;
    int n;
} prompts_t;

/* NULL with err on a bad or unreadable file. The caller owns the result:
 * prompts_free. */
prompts_t *prompts_load(const char *path, err_t *err);
void prompts_free(prompts_t *ps);

/* The ChatML conversation the model's template makes of one user message:
 * its default system message (taken from the file's
 * tokenizer.chat_template), the user turn and the assistant's opening, as
 * SmolLM2's template writes them. NULL with err when the file has no
 * ChatML template. The caller frees the string. */
char *prompts_chat(const gguf_t *g, const char *user, err_t *err);

#endif
