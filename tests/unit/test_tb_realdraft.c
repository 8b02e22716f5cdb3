/* The testbed's real draft worker (testbed/realdraft.h): a draft handed
 * over while another computes supersedes it at the next token step (the
 * old one never reports), a draft of no tokens reports at once, and only
 * fp16 and w4a16 weights are taken. */
#include <poll.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "realdraft.h"

static llm_card_t tiny(void)
{
    llm_card_t c;
    memset(&c, 0, sizeof c);
    strcpy(c.name, "tiny");
    c.layers = 2;
    c.hidden = 128;   /* multiples of the W4A16 group */
    c.heads = 4;
    c.kv_heads = 2;
    c.ffn = 256;
    c.vocab = 500;
    c.gated_mlp = 1;
    return c;
}

/* Waits up to ms for a finished draft: 1 with it, 0 on timeout, -1 on a
 * failed step. */
static int wait_draft(realdraft_t *d, int ms, uint64_t *gen, int *n, double *dt)
{
    struct pollfd p = {.fd = realdraft_fd(d), .events = POLLIN};
    err_t err = {0, {0}};
    while (poll(&p, 1, ms) == 1) {
        int got = realdraft_take(d, gen, n, dt, &err);
        if (got != 0) return got;
    }
    return 0;
}

static void test_supersede(void)
{
    llm_card_t c = tiny();
    err_t err = {0, {0}};
    realdraft_t *d = realdraft_create(&c, PREC_W4A16, 64, &err);
    CHECK(d != NULL);
    if (!d) return;
    uint64_t gen = 0;
    int n = -1;
    double dt = -1;
    /* A draft of a million steps (minutes), superseded while it computes
     * (the pause lets the worker take it): the next one must be the only
     * report, within a second. */
    realdraft_start(d, 0, 1000000, 1);
    struct timespec pause = {0, 20000000};
    nanosleep(&pause, NULL);
    realdraft_start(d, 5, 3, 2);
    CHECK(wait_draft(d, 1000, &gen, &n, &dt) == 1);
    CHECK(gen == 2);
    CHECK(n == 3);
    CHECK(dt > 0);
    CHECK(wait_draft(d, 50, &gen, &n, &dt) == 0);
    /* No tokens: done at once, no time. */
    realdraft_start(d, 7, 0, 3);
    CHECK(wait_draft(d, 1000, &gen, &n, &dt) == 1);
    CHECK(gen == 3 && n == 0 && dt == 0);
    /* A long draft in progress at free: the worker leaves after its step. */
    realdraft_start(d, 0, 1000000, 4);
    realdraft_free(d);
}

static void test_quant(void)
{
    llm_card_t c = tiny();
    err_t err = {0, {0}};
    realdraft_t *d = realdraft_create(&c, PREC_FP16, 64, &err);
    CHECK(d != NULL);
    uint64_t gen = 0;
    int n = 0;
    double dt = 0;
    if (d) {
        realdraft_start(d, 60, 4, 9);   /* contexts past 64 are clamped */
        CHECK(wait_draft(d, 1000, &gen, &n, &dt) == 1);
        CHECK(gen == 9 && n == 4 && dt > 0);
    }
    realdraft_free(d);
    err_t e2 = {0, {0}};
    CHECK(realdraft_create(&c, PREC_W8A16, 64, &e2) == NULL);
    CHECK(e2.code == ERR_INPUT);
    /* W4A16 needs widths that are multiples of its group. */
    c.hidden = 96;
    c.heads = 3;
    c.kv_heads = 3;
    err_t e3 = {0, {0}};
    CHECK(realdraft_create(&c, PREC_W4A16, 64, &e3) == NULL);
    CHECK(strstr(e3.msg, "multiples") != NULL);
}

int main(void)
{
    RUN(test_supersede);
    RUN(test_quant);
    return check_done();
}
