/* realmem — the testbed's up-front memory check of its real models
 * (--real-verify, --real-draft, `testbed steps`; docs/testbed.md, "Memory
 * for real models").
 *
 * A real forward pass fills every byte of its model (random weights and
 * KV caches, testbed/realverify.h), so all of it becomes resident. Under
 * Linux's overcommit a malloc of more than the machine has succeeds, and
 * the process is killed by the OOM killer while it fills the weights, or
 * the machine swaps to a crawl, without a word to the user. So the
 * testbed adds up the models it will build (realverify_bytes) and weighs
 * them against the memory available before it allocates, forks or writes
 * anything.
 */
#ifndef TESTBED_REALMEM_H
#define TESTBED_REALMEM_H

#include <stddef.h>
#include <stdint.h>

#include "realverify.h"

/* The share of the available memory the models may take (percent): the
 * rest is for what realverify_bytes does not count (the kernels' scratch
 * at run time, under 10 bytes per token and width; the bookkeeping;
 * malloc's and the page tables' overhead; the two processes' own tallies,
 * engines and thread stacks) and for the estimate itself, which moves as
 * other processes run (MemAvailable counts page cache the kernel may not
 * be able to drop in time). */
#define REALMEM_PERCENT 90

/* One real model a run builds. */
typedef struct realmem_part {
    const char *option;     /* "--real-verify", "--real-draft", "testbed steps" */
    const char *key;        /* the scenario key naming the card, or NULL */
    const char *name;       /* the card's name */
    const char *ref;        /* the card as written: a file, "inline", ... */
    int quant;              /* PREC_FP16 or PREC_W4A16 (sim/model/cards.h) */
    int jobs, context;      /* the KV caches: jobs × context tokens */
    realverify_size_t size;
    const char *advice;     /* what the user can do instead */
} realmem_part_t;

/* MemAvailable in bytes from the text of /proc/meminfo: 0, or -1 when it
 * is absent or malformed. */
int realmem_parse_meminfo(const char *text, uint64_t *bytes);
/* The bytes this machine can give now: MemAvailable of /proc/meminfo (the
 * kernel's estimate of what can be allocated without swapping), else the
 * free pages times the page size (sysconf, where /proc is missing). 0 with
 * *source naming where it came from, or -1 when neither tells. */
int realmem_available(uint64_t *bytes, const char **source);
/* 1 when need bytes are at most REALMEM_PERCENT of avail. */
int realmem_fits(size_t need, uint64_t avail);
/* Weighs the n parts, built at the same time and so added up, against
 * realmem_available: 0 to go ahead (with their sizes on stderr unless
 * quiet), or 2 after a message on stderr, prefixed with where (the
 * scenario or card file), that names each part's option, key, card and
 * GiB, the GiB available and what to do instead. */
int realmem_check(const char *where, const realmem_part_t *parts, int n, int quiet);
/* realmem_check's weighing against a figure the caller read once: avail
 * bytes, from source (named in the messages). Returns 0 or 2 as
 * realmem_check. */
int realmem_check_against(const char *where, const realmem_part_t *parts, int n, int quiet,
                          uint64_t avail, const char *source);

#endif
