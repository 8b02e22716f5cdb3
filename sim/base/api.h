/* api — the mark of libspecsim's public functions.
 *
 * The library is compiled with -fvisibility=hidden; a function declared
 * SPECSIM_API keeps default visibility. The Makefile links the library's
 * objects into one (ld -r) and localizes every hidden symbol (objcopy
 * --localize-hidden), so build/libspecsim.a exports exactly the functions
 * so marked, which sim/specsim.h gathers; a program that calls anything
 * else fails to link. The in-tree tools that are part of the simulator
 * (the testbed, the kernels' calibrate and llm, the tests) link
 * build/libspecsim_all.a, which keeps every symbol.
 */
#ifndef SPECSIM_API_H
#define SPECSIM_API_H

#define SPECSIM_API __attribute__((visibility("default")))

#endif
