/* Prompt files (kernels/llm/prompts.h) written byte by byte: what a good
 * file gives, and each thing a bad one must be refused for with one line
 * naming FILE (and LINE:COL where the fault is inside it):
 *   - text before the first `###`, a `###` line without one category
 *     word, a prompt with no text, a file without prompts;
 *   - a NUL byte and every kind of byte sequence that is not UTF-8
 *     (a stray continuation byte, an overlong form, a surrogate, a code
 *     point past U+10FFFF, a sequence cut by the end of the file), each at
 *     its line and byte column; well-formed multibyte text passes;
 *   - the 16 MiB cap: a file of exactly 16 MiB loads, one byte more is
 *     refused (a file one byte under the cap was once refused);
 *   - a directory and a missing path, each named for what it is (a
 *     directory once gave a bare "read error");
 * a leading byte order mark is skipped; and prompts_chat's ChatML wrapper
 * on a model file with and without a usable template. */
#include <stdint.h>
#include <sys/stat.h>

#include "check.h"
#include "ggufw.h"
#include "prompts.h"

static char dir[] = "/tmp/test_prompts.XXXXXX";

/* dir/name holding n bytes of s; the path in path. */
static void put_file(const char *name, const void *s, size_t n, char *path, size_t size)
{
    snprintf(path, size, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (!f) return;
    CHECK(fwrite(s, 1, n, f) == n);
    CHECK(fclose(f) == 0);
}

/* The file of text s loads; its prompts are returned (NULL: a failure
 * already counted). */
static prompts_t *load_ok(const char *name, const char *s)
{
    char path[512];
    put_file(name, s, strlen(s), path, sizeof path);
    err_t err = {0, ""};
    prompts_t *ps = prompts_load(path, &err);
    if (!ps) printf("  %s: unexpected error: %s\n", name, err.msg);
    CHECK(ps != NULL);
    return ps;
}

/* The file of bytes s[0..n) is refused with ERR_INPUT and one line that
 * starts "PATH<where>" (where: ":LINE:COL: " or ": ") and holds `what`. */
static void refused(const char *name, const void *s, size_t n, const char *where,
                    const char *what)
{
    char path[512], head[600];
    put_file(name, s, n, path, sizeof path);
    err_t err = {0, ""};
    prompts_t *ps = prompts_load(path, &err);
    CHECK(ps == NULL);
    prompts_free(ps);
    snprintf(head, sizeof head, "%s%s", path, where);
    int ok = err.code == ERR_INPUT && !strncmp(err.msg, head, strlen(head)) &&
             strstr(err.msg, what) && !strchr(err.msg, '\n');
    if (!ok) printf("  %s: got '%s' (code %d), expected '%s...%s'\n", name, err.msg, err.code,
                    head, what);
    CHECK(ok);
}

static void refused_text(const char *name, const char *s, const char *where, const char *what)
{
    refused(name, s, strlen(s), where, what);
}

static void test_good(void)
{
    prompts_t *ps = load_ok("good.txt", "# a comment\n\n### story\n\nOnce upon\n\na time\n\n"
                                        "###  code_2 \r\nint x;\n### last-one\nend");
    if (!ps) return;
    CHECK(ps->n == 3);
    CHECK_STR(ps->p[0].category, "story");
    CHECK_STR(ps->p[0].text, "Once upon\n\na time");
    CHECK(ps->p[0].line == 3);
    CHECK_STR(ps->p[1].category, "code_2");
    CHECK_STR(ps->p[1].text, "int x;");
    CHECK_STR(ps->p[2].category, "last-one");
    CHECK_STR(ps->p[2].text, "end");
    CHECK(ps->p[2].line == 11);
    prompts_free(ps);
}

static void test_structure(void)
{
    refused_text("empty.txt", "", ": ", "no prompt");
    refused_text("comments.txt", "# only\n\n# comments\n", ": ", "no prompt");
    refused_text("before.txt", "# c\nhello\n### a\nx\n", ":2:1: ", "text before the first");
    refused_text("nocat.txt", "### a\nx\n###\ny\n", ":3:4: ", "one category word");
    refused_text("twocat.txt", "### a b\nx\n", ":1:5: ", "one category word");
    refused_text("badcat.txt", "###a.b\nx\n", ":1:4: ", "one category word");
    refused_text("notext.txt", "### a\n\n  \t\n### b\nx\n", ":1:1: ", "prompt 'a' has no text");
    refused_text("lastempty.txt", "### a\nx\n### b\n\n", ":3:1: ", "prompt 'b' has no text");
}

static void test_utf8(void)
{
    prompts_t *ps = load_ok("utf8.txt", "### a\ncaf\xC3\xA9 \xE4\xB8\xAD \xF0\x9F\x98\x80 "
                                        "\xF4\x8F\xBF\xBF \xED\x9F\xBF\n");
    if (ps) CHECK_STR(ps->p[0].text, "caf\xC3\xA9 \xE4\xB8\xAD \xF0\x9F\x98\x80 "
                                     "\xF4\x8F\xBF\xBF \xED\x9F\xBF");
    prompts_free(ps);
    refused_text("ff.txt", "### a\nx\xFF\xFEy\n", ":2:2: ", "byte 0xff is not UTF-8");
    refused_text("cont.txt", "### a\nok\n  \x80\n", ":3:3: ", "byte 0x80 is not UTF-8");
    refused_text("overlong.txt", "### a\n\xC0\x80\n", ":2:1: ", "byte 0xc0 is not UTF-8");
    refused_text("overlong3.txt", "### a\n\xE0\x80\xAF\n", ":2:1: ", "byte 0xe0 is not UTF-8");
    refused_text("surrogate.txt", "### a\nab\xED\xA0\x80\n", ":2:3: ", "byte 0xed is not UTF-8");
    refused_text("beyond.txt", "### a\n\xF4\x90\x80\x80\n", ":2:1: ", "byte 0xf4 is not UTF-8");
    refused_text("f5.txt", "### a\n\xF5\x80\x80\x80\n", ":2:1: ", "byte 0xf5 is not UTF-8");
    refused_text("cut.txt", "### a\nabc\xE4\xB8", ":2:4: ", "byte 0xe4 is not UTF-8");
    refused_text("cutmid.txt", "### a\n\xE4\xB8x\n", ":2:1: ", "byte 0xe4 is not UTF-8");
    /* Before the first prompt too: comments are text of the file. */
    refused_text("comment.txt", "# caf\xE9\n### a\nx\n", ":1:6: ", "byte 0xe9 is not UTF-8");
    refused("nul.txt", "### a\nx\0y\n", 10, ":2:2: ", "a NUL byte");
}

static void test_bom(void)
{
    prompts_t *ps = load_ok("bom.txt", "\xEF\xBB\xBF### a\nx\n");
    if (ps) {
        CHECK(ps->n == 1);
        CHECK_STR(ps->p[0].category, "a");
    }
    prompts_free(ps);
}

/* Exactly the cap loads; one byte more does not. */
static void test_size_cap(void)
{
    size_t cap = (size_t)16 << 20;
    char *big = malloc(cap + 1);
    CHECK(big != NULL);
    if (!big) return;
    memcpy(big, "### a\n", 6);
    memset(big + 6, 'x', cap + 1 - 6);
    char path[512];
    err_t err = {0, ""};
    for (size_t n = cap - 1; n <= cap; n++) {
        put_file("cap.txt", big, n, path, sizeof path);
        prompts_t *ps = prompts_load(path, &err);
        if (!ps) printf("  %zu bytes: %s\n", n, err.msg);
        CHECK(ps != NULL && ps->n == 1 && strlen(ps->p[0].text) == n - 6);
        prompts_free(ps);
    }
    refused("over.txt", big, cap + 1, ": ", "larger than 16 MiB");
    free(big);
}

static void test_paths(void)
{
    err_t err = {0, ""};
    CHECK(prompts_load(dir, &err) == NULL);
    CHECK(err.code == ERR_INPUT && !strncmp(err.msg, dir, strlen(dir)) &&
          strstr(err.msg, ": not a regular file (a directory)"));
    char p[512];
    snprintf(p, sizeof p, "%s/absent.txt", dir);
    CHECK(prompts_load(p, &err) == NULL);
    CHECK(err.code == ERR_INPUT && !strncmp(err.msg, p, strlen(p)) &&
          strstr(err.msg, ": cannot open: No such file"));
}

/* A model file holding only a chat template (or none). */
static gguf_t *template_file(const char *name, const char *tpl)
{
    ggufw_t w = {0};
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    ggufw_kv_str(&w, "general.architecture", "llama");
    if (tpl) ggufw_kv_str(&w, "tokenizer.chat_template", tpl);
    CHECK(ggufw_save(&w, path) == 0);
    err_t err = {0, ""};
    gguf_t *g = gguf_open(path, &err);
    if (!g) printf("  %s: %s\n", name, err.msg);
    CHECK(g != NULL);
    return g;
}

static void test_chat(void)
{
    gguf_t *g = template_file("chat.gguf", "{% if x %}<|im_start|>system\nBe brief.<|im_end|>\n"
                                           "{% endif %}");
    err_t err = {0, ""};
    char *c = g ? prompts_chat(g, "hi", &err) : NULL;
    if (g) CHECK_STR(c, "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nhi"
                        "<|im_end|>\n<|im_start|>assistant\n");
    free(c);
    gguf_close(g);
    g = template_file("nosys.gguf", "{{ messages }}");
    CHECK(g && prompts_chat(g, "hi", &err) == NULL && err.code == ERR_INPUT &&
          strstr(err.msg, "nosys.gguf: tokenizer.chat_template is not a ChatML template"));
    gguf_close(g);
    g = template_file("none.gguf", NULL);
    CHECK(g && prompts_chat(g, "hi", &err) == NULL && err.code == ERR_INPUT &&
          strstr(err.msg, "none.gguf: key 'tokenizer.chat_template' is missing"));
    gguf_close(g);
}

/* Removes the files the tests wrote, then the directory. */
static void cleanup(void)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char p[800];
    while (d && (e = readdir(d)))
        if (e->d_name[0] != '.') {
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            remove(p);
        }
    if (d) closedir(d);
    rmdir(dir);
}

int main(void)
{
    if (!mkdtemp(dir)) return 1;
    RUN(test_good);
    RUN(test_structure);
    RUN(test_utf8);
    RUN(test_bom);
    RUN(test_size_cap);
    RUN(test_paths);
    RUN(test_chat);
    cleanup();
    return check_done();
}
