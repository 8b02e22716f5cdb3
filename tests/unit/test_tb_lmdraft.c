/* The real-model testbed's drafter (testbed/lmdraft.h) on a tiny random
 * LLaMA: a prompt read ahead (a job of no drafts) longer than one chunk is
 * read whole before the job reports (issue 22, session 4: it reported
 * after its first 16 tokens, and the rest waited for the first draft), and
 * prompts submitted together are read in the order they came. */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "gguf.h"
#include "lmdraft.h"
#include "llm/ggufw.h"

static const tiny_spec_t SPEC = {2, 64, 4, 2, 96, 300, 0.3f, 7, 1};

/* Waits up to 10 s for finished jobs, appending their tenants to order;
 * the number taken, or -1 when the thread failed. */
static int wait_done(lmdraft_t *d, int want, int *order)
{
    struct pollfd p = {.fd = lmdraft_fd(d), .events = POLLIN};
    err_t err = {0, {0}};
    int n = 0;
    while (n < want && poll(&p, 1, 10000) == 1) {
        lmdraft_done_t o;
        int got;
        while ((got = lmdraft_take(d, &o, &err)) > 0) order[n++] = o.tenant;
        if (got < 0) return -1;
    }
    return n;
}

static char path[64];

static void test_read_ahead(void)
{
    err_t err = {0, {0}};
    gguf_t *g = gguf_open(path, &err);
    llm_opts_t lo = {LLM_FP16, 0, 0};
    llm_model_t *m = g ? llm_load(g, &lo, &err) : NULL;
    lmdraft_t *d = m ? lmdraft_create(m, 3, 256, 1, &err) : NULL;
    CHECK(d != NULL);
    if (!d) {
        printf("  %s\n", err.msg);
        llm_free(m);
        gguf_close(g);
        return;
    }
    int32_t text[3][40];
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < 40; k++) text[i][k] = (int32_t)((31 * k + 7 * i + 1) % SPEC.vocab);
    /* Three prompts of 40 tokens (three chunks each), handed over together. */
    for (int i = 0; i < 3; i++) CHECK(lmdraft_submit(d, i, 100 + i, text[i], 40, 0, &err) == 0);
    int order[3] = {-1, -1, -1};
    CHECK(wait_done(d, 3, order) == 3);
    for (int i = 0; i < 3; i++) {
        CHECK(lmdraft_held(d, i) == 40);
        CHECK(order[i] == i);
    }
    lmdraft_free(d);
    llm_free(m);
    gguf_close(g);
}

int main(void)
{
    char dir[] = "/tmp/specsim-lmdraft-XXXXXX";
    if (!mkdtemp(dir)) return 1;
    snprintf(path, sizeof path, "%s/tiny.gguf", dir);
    if (tiny_model(path, &SPEC) != 0) return 1;
    RUN(test_read_ahead);
    unlink(path);
    rmdir(dir);
    return check_done();
}
