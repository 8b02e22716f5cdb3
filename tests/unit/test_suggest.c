/* Tests of the one "did you mean" (sim/base/suggest.c), every expectation an edit
 * count made by hand. */
#include "check.h"
#include "base/suggest.h"

static const char *const KEYS[] = {"format", "provenance", "model", "quant", "ops",
                                   "context", "gamma", "window"};
#define NKEYS (sizeof KEYS / sizeof *KEYS)

static void test_typos(void)
{
    /* One deletion, one insertion, one substitution. */
    CHECK_STR(suggest_nearest("formt", KEYS, NKEYS), "format");
    CHECK_STR(suggest_nearest("modell", KEYS, NKEYS), "model");
    CHECK_STR(suggest_nearest("quamt", KEYS, NKEYS), "quant");
    /* An adjacent transposition is one edit, not two. */
    CHECK_STR(suggest_nearest("gmama", KEYS, NKEYS), "gamma");
    CHECK_STR(suggest_nearest("cnotext", KEYS, NKEYS), "context");
    /* Three edits on a long word ("provenance" -> "provnce": delete e, a, n). */
    CHECK_STR(suggest_nearest("provnce", KEYS, NKEYS), "provenance");
}

static void test_too_far(void)
{
    /* Words of up to 3 characters allow 1 edit: "opx" is 1 from "ops",
     * "oxx" is 2. */
    CHECK_STR(suggest_nearest("opx", KEYS, NKEYS), "ops");
    CHECK(suggest_nearest("oxx", KEYS, NKEYS) == NULL);
    /* Up to 6 characters allow 2: "wndw" is 2 from "window", "wnd" 3. */
    CHECK_STR(suggest_nearest("wndw", KEYS, NKEYS), "window");
    CHECK(suggest_nearest("wnd", KEYS, NKEYS) == NULL);
    /* Nothing alike, and no candidates at all. */
    CHECK(suggest_nearest("replicas", KEYS, NKEYS) == NULL);
    CHECK(suggest_nearest("model", KEYS, 0) == NULL);
}

static void test_ties(void)
{
    /* "ab" is one edit from both: the earlier candidate wins. */
    static const char *const two[] = {"ax", "xb"};
    CHECK_STR(suggest_nearest("ab", two, 2), "ax");
    static const char *const rev[] = {"xb", "ax"};
    CHECK_STR(suggest_nearest("ab", rev, 2), "xb");
}

/* The unknown-key text every reader prints: a suggestion when one is
 * close, else the list of what is allowed. */
static void test_unknown_key(void)
{
    char buf[200];
    suggest_unknown_key(buf, sizeof buf, "gama", KEYS, NKEYS);
    CHECK_STR(buf, "unknown key (did you mean 'gamma'?)");
    static const char *const two[] = {"ops", "window"};
    suggest_unknown_key(buf, sizeof buf, "replicas", two, 2);
    CHECK_STR(buf, "unknown key (allowed here: ops, window)");
    char small[8];
    suggest_join(small, sizeof small, two, 2);
    CHECK_STR(small, "ops");   /* cut at a whole name */
}

int main(void)
{
    RUN(test_unknown_key);
    RUN(test_typos);
    RUN(test_too_far);
    RUN(test_ties);
    return check_done();
}
