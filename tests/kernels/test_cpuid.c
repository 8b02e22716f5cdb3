/* cpuid and membw: feature bits agree with the kernel's own flag list in
 * /proc/cpuinfo (an independent source: the OS's view, not CPUID+XGETBV
 * through libgcc), the best path is usable, and the bandwidth probe returns
 * a finite positive rate. */
#include <stdint.h>

#include "check.h"
#include "cpuid.h"
#include "gemv.h"
#include "membw.h"

/* 1 if the first "flags" line of /proc/cpuinfo lists every word of want
 * (space separated); -1 if there is no such line (not Linux/x86). */
static int has_flags(const char *want)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return -1;
    char line[8192];
    int found = -1;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, "flags", 5)) {
            found = 1;
            char w[64];
            const char *p = want;
            int n;
            while (sscanf(p, "%63s%n", w, &n) == 1) {
                char pat[70];
                snprintf(pat, sizeof pat, " %s", w);
                size_t L = strlen(pat);
                const char *hit = line;
                int ok = 0;
                while ((hit = strstr(hit, pat))) {
                    if (hit[L] == ' ' || hit[L] == '\n' || hit[L] == '\0') {
                        ok = 1;
                        break;
                    }
                    hit += L;
                }
                if (!ok) found = 0;
                p += n;
            }
            break;
        }
    fclose(f);
    return found;
}

/* 1 when this build targets AArch64 with Advanced SIMD. */
#if defined(__aarch64__) && defined(__ARM_NEON)
#define defined_neon() 1
#else
#define defined_neon() 0
#endif

static void test_features_match_proc(void)
{
    unsigned f = cpu_features();
#if !(defined(__x86_64__) || defined(__i386__))
    /* The x86 flags say nothing here (and under user-mode QEMU /proc/cpuinfo
     * is the host's); AArch64 always has Advanced SIMD, and it is the path
     * the dispatcher must pick. */
    CHECK(((f & CPU_NEON) != 0) == (defined_neon()));
    CHECK(gemv_isa_available(GEMV_ISA_AVX2) == 0 && gemv_isa_available(GEMV_ISA_AVX512) == 0);
    CHECK(!defined_neon() || gemv_isa_best() == GEMV_ISA_NEON);
    return;
#endif
    int avx2 = has_flags("avx2 fma f16c"), avx512 = has_flags("avx512f avx512bw avx512vl fma f16c");
    if (avx2 < 0) {
        printf("  (no flags line in /proc/cpuinfo: skipped)\n");
        return;
    }
    CHECK(((f & CPU_AVX2) != 0) == (avx2 == 1));
    CHECK(((f & CPU_AVX512) != 0) == (avx512 == 1));
#if defined(__x86_64__)
    CHECK(gemv_isa_available(GEMV_ISA_AVX512) == (avx512 == 1));
#else
    CHECK(gemv_isa_available(GEMV_ISA_AVX512) == 0);   /* scalar only (kernels/gemv_impl.h) */
#endif
}

static void test_topology(void)
{
    char name[256];
    cpu_model_name(name, sizeof name);
    CHECK(name[0] != '\0');
    CHECK(cpu_count() >= 1);
    size_t llc = cpu_llc_bytes();
    CHECK(llc >= ((size_t)256 << 10) && llc <= ((size_t)4 << 30));
}

static void test_membw(void)
{
    err_t e;
    gemv_ctx_t *c = gemv_ctx_create(0, GEMV_ISA_AUTO, &e);
    CHECK(c != NULL);
    if (!c) return;
    double g = membw_read_gbs(c, (size_t)8 << 20, 2, &e);
    CHECK(g > 0.01 && g < 1e4);   /* a read rate, in GB/s, of any real machine */
    /* Several streams per thread, on a buffer that does not split evenly
     * into them (the remainder loop runs); a stream count outside 1..16 is
     * refused. */
    double gm = membw_read_streams_gbs(c, ((size_t)8 << 20) + 4096 + 8, MEMBW_STREAMS, 2, &e);
    CHECK(gm > 0.01 && gm < 1e4);
    CHECK(membw_read_streams_gbs(c, (size_t)1 << 20, 0, 1, &e) < 0 && e.code == ERR_INPUT);
    CHECK(membw_read_streams_gbs(c, (size_t)1 << 20, 17, 1, &e) < 0 && e.code == ERR_INPUT);
    gemv_ctx_free(c);
}

int main(void)
{
    RUN(test_features_match_proc);
    RUN(test_topology);
    RUN(test_membw);
    return check_done();
}
