/* sha256 (sim/base/sha256.h) against the FIPS 180-4 / NIST test vectors,
 * at every length around the padding's block boundary against a second
 * computation fed the same bytes, and its speed (printed: the digest is
 * taken of every file a command reads). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "base/sha256.h"

static void hex_of(const void *data, size_t len, char hex[SHA256_HEX])
{
    uint8_t d[SHA256_BYTES];
    sha256(data, len, d);
    sha256_hex(d, hex);
}

static void test_vectors(void)
{
    static const struct { const char *in, *want; } v[] = {
        {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
        {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
        {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
        {"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopq"
         "klmnopqrlmnopqrsmnopqrstnopqrstu",
         "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"},
    };
    char hex[SHA256_HEX];
    for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
        hex_of(v[i].in, strlen(v[i].in), hex);
        CHECK(strcmp(hex, v[i].want) == 0);
        if (strcmp(hex, v[i].want)) printf("  '%s': got %s\n", v[i].in, hex);
    }
    /* One million 'a' (NIST). */
    size_t n = 1000000;
    char *a = malloc(n);
    CHECK(a != NULL);
    if (!a) return;
    memset(a, 'a', n);
    hex_of(a, n, hex);
    CHECK(strcmp(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0") == 0);
    free(a);
}

/* Lengths 0..200 cross the one- and two-block padding cases; each digest
 * differs from its neighbours' and is the same when recomputed from a
 * copy at another address. */
static void test_lengths(void)
{
    unsigned char buf[201], copy[208];
    for (int i = 0; i < 201; i++) buf[i] = (unsigned char)(i * 37 + 11);
    char prev[SHA256_HEX] = "", hex[SHA256_HEX], again[SHA256_HEX];
    int bad = 0;
    for (size_t len = 0; len <= 200; len++) {
        hex_of(buf, len, hex);
        memcpy(copy + 3, buf, len);
        hex_of(copy + 3, len, again);
        bad += strcmp(hex, again) != 0 || strcmp(hex, prev) == 0 || strlen(hex) != 64;
        memcpy(prev, hex, sizeof prev);
    }
    CHECK(bad == 0);
}

static void test_speed(void)
{
    size_t n = (size_t)64 << 20;
    unsigned char *p = malloc(n);
    CHECK(p != NULL);
    if (!p) return;
    for (size_t i = 0; i < n; i++) p[i] = (unsigned char)(i * 2654435761u >> 13);
    uint8_t d[SHA256_BYTES];
    struct timespec t0, t1;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
    sha256(p, n, d);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
    double s = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    printf("  %.0f MB/s\n", (double)n / 1e6 / s);
    free(p);
}

int main(void)
{
    RUN(test_vectors);
    RUN(test_lengths);
    RUN(test_speed);
    return check_done();
}
