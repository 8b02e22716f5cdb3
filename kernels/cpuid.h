/* cpuid — what the CPU we run on can do: SIMD features (for kernel dispatch),
 * cache size (to size working sets beyond the LLC), model name, core count.
 */
#ifndef SPECSIM_CPUID_H
#define SPECSIM_CPUID_H

#include <stddef.h>

enum cpu_feature {
    CPU_AVX2 = 1u << 0,     /* with FMA and F16C: our AVX2 path needs all three */
    CPU_AVX512 = 1u << 1,   /* F + BW + VL, with FMA and F16C */
    CPU_NEON = 1u << 2      /* Advanced SIMD (always present on AArch64) */
};

/* Bit set of cpu_feature usable here: the CPU has them and the OS saves the
 * registers (checked through __builtin_cpu_supports, which reads XCR0). */
unsigned cpu_features(void);

/* Last-level cache size in bytes (sysfs; 32 MiB when unknown). */
size_t cpu_llc_bytes(void);

/* Writes the CPU model ("model name" of /proc/cpuinfo) into buf. */
void cpu_model_name(char *buf, size_t n);

/* Online logical CPUs (≥ 1). */
int cpu_count(void);

#endif
