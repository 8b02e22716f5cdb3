/* fuzz_scenario — the scenario loader with `--set` overrides
 * (sim/config/scenario.h).
 *
 * The input is a scenario file, optionally followed by a line `#--set` and
 * then one `--set` argument per line (PATH=VALUE; a line without '=' after a
 * non-empty PATH is skipped, as the command line refuses it before loading).
 * The file is loaded with the overrides through scenario_load. A scenario
 * that loads must also survive its own round trip: scenario_write_yaml's text
 * loads again (from the same directory, so that relative file references
 * resolve alike) and writes back identically, comments aside (the first
 * writing names each card file in a comment; the second sees inline cards).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "config/scenario.h"

enum { MAX_SETS = 64 };

/* Splits the --set lines in place into ov (at most MAX_SETS); returns how
 * many. */
static int parse_sets(char *lines, scenario_override_t *ov)
{
    int n = 0;
    char *cursor = lines;
    while (cursor && n < MAX_SETS) {
        char *line = cursor;
        char *nl = strchr(line, '\n');
        cursor = nl ? nl + 1 : NULL;
        if (nl) *nl = 0;
        char *eq = strchr(line, '=');
        if (!eq || eq == line) continue;
        *eq = 0;
        ov[n++] = (scenario_override_t){.path = line, .value = eq + 1};
    }
    return n;
}

/* The scenario as scenario_write_yaml writes it (malloc'ed). */
static char *written(const scenario_t *s)
{
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    if (!m || scenario_write_yaml(s, m) != 0 || fclose(m) != 0)
        fuzz_fail("scenario_write_yaml failed", NULL);
    return text;
}

/* Drops the comments scenario_write_yaml adds: whole-line ones and the
 * "  # ..." after a key. Values with '#' are written quoted (keytab). */
static void strip_comments(char *t)
{
    char *w = t;
    for (char *line = t; *line;) {
        char *nl = strchr(line, '\n');
        size_t n = nl ? (size_t)(nl - line) + 1 : strlen(line);
        char *c = memmem(line, n, "  # ", 4);
        const char *first = line + strspn(line, " ");
        if (*first != '#') {
            size_t keep = c ? (size_t)(c - line) : n - (nl != NULL);
            memmove(w, line, keep);
            w += keep;
            if (nl) *w++ = '\n';
        }
        line += n;
    }
    *w = 0;
}

static void round_trip(const scenario_t *s, const char *path)
{
    char *text = written(s);
    scenario_t s2;
    err_t err;
    if (scenario_load_text(path, text, strlen(text), NULL, 0, &s2, &err) != 0) {
        fprintf(stderr, "written:\n%s\n", text);
        fuzz_fail("a scenario written by scenario_write_yaml does not load", err.msg);
    }
    char *again = written(&s2);
    strip_comments(text);
    strip_comments(again);
    if (strcmp(text, again) != 0) {
        fprintf(stderr, "written:\n%s\nwritten again:\n%s\n", text, again);
        fuzz_fail("a scenario written back reads differently", NULL);
    }
    free(again);
    free(text);
    scenario_fini(&s2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_reset();
    size_t yaml_len, sets_len;
    const char *sets;
    fuzz_split((const char *)data, size, "#--set", &yaml_len, &sets, &sets_len);
    char path[4096];
    fuzz_write_file("scenario.yaml", data, yaml_len, path, sizeof path);
    char *lines = malloc(sets_len + 1);
    if (!lines) fuzz_fail("out of memory", NULL);
    if (sets_len) memcpy(lines, sets, sets_len);
    lines[sets_len] = 0;
    scenario_override_t ov[MAX_SETS];
    int nov = sets ? parse_sets(lines, ov) : 0;
    scenario_t s;
    err_t err;
    if (scenario_load(path, ov, nov, &s, &err) == 0) {
        round_trip(&s, path);
        scenario_fini(&s);
    }
    free(lines);
    return 0;
}
