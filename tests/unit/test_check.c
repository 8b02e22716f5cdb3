/* What `specsim check` checks: the checks that need the whole scenario
 * (made by the loader once every section is resolved, so `check` accepts
 * exactly what `run` does) and the sweep: section (sweepspec_check), where
 * every such error points, which option an error names (overrides with their
 * own src), each tenant group's service-time source, and the units of the
 * arrival rate and the network sizes.
 *
 * The bad files under tests/data/scenarios/badrun/ have every key valid on
 * its own but are refused as a whole (or by `sweep`); each names its
 * expected LINE:COLUMN and key on its first line, shared with
 * tests/cli/bad_inputs.sh.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "config/build.h"
#include "config/scenario.h"
#include "scentext.h"
#include "run/sim.h"
#include "config/sweepspec.h"

#define ROOT SPECSIM_ROOT "/"
#define SET(p, v) {.path = (p), .value = (v)}

/* msg starts with prefix; says what it got otherwise. */
static int starts(const char *msg, const char *prefix)
{
    if (strncmp(msg, prefix, strlen(prefix)) == 0) return 1;
    printf("  got  '%s'\n  want '%s...'\n", msg, prefix);
    return 0;
}

static int load_str(const char *yaml, const scenario_override_t *ov, int nov,
                    scenario_t *s, err_t *err)
{
    memset(err, 0, sizeof *err);
    int rc = scenario_load_string("t.yaml", yaml, ov, nov, s, err);
    if (rc != 0) printf("  load: %s\n", err->msg);
    return rc;
}

/* The loader refuses yaml with a message starting with prefix. */
static void check_refused(const char *yaml, const scenario_override_t *ov,
                          int nov, const char *prefix)
{
    scenario_t s;
    err_t err = {0};
    CHECK(scenario_load_string("t.yaml", yaml, ov, nov, &s, &err) == -1);
    CHECK(err.code == ERR_INPUT && starts(err.msg, prefix));
}

/* --- item: check = run ---------------------------------------------------- */

/* One badrun/ file: "# expect: LINE:COL KEY" on its first line. */
static void check_badrun_file(const char *path)
{
    FILE *f = fopen(path, "r");
    char first[512] = "", loc[64], key[200], want[900];
    CHECK(f != NULL);
    if (!f) return;
    if (!fgets(first, sizeof first, f)) first[0] = 0;
    fclose(f);
    CHECK(sscanf(first, "# expect: %63s %199s", loc, key) == 2);
    snprintf(want, sizeof want, "%s:%s: %s: ", path, loc, key);
    scenario_t s;
    err_t err = {0};
    int rc = scenario_load(path, NULL, 0, &s, &err);
    if (strstr(path, "/sweep-")) {
        /* `run` ignores the sweep: section; `sweep` and `check` refuse it. */
        if (rc != 0) printf("  %s: %s\n", path, err.msg);
        CHECK(rc == 0);
        if (rc != 0) return;
        scenario_fini(&s);
        char *text;
        size_t len;
        sweepspec_t sp = {0};
        CHECK(scenario_read(path, &text, &len, &err) == 0);
        CHECK(sweepspec_check(path, text, NULL, 0, &sp, &err) == -1);
        sweepspec_fini(&sp);
        free(text);
    } else {
        CHECK(rc == -1);
    }
    CHECK(err.code == ERR_INPUT && starts(err.msg, want));
    /* A sweep axis is not a --set the user gave. */
    CHECK(strstr(err.msg, "--set") == NULL);
}

static void test_badrun_files(void)
{
    CHECK(check_each_file(ROOT "tests/data/scenarios/badrun", ".yaml", check_badrun_file) >= 9);
}

/* Every shipped scenario passes: check refuses nothing run accepts. */
static void test_shipped_pass(void)
{
    const char *dirs[] = {ROOT "scenarios/examples", ROOT "scenarios/paper"};
    int n = 0;
    for (int k = 0; k < 2; k++) {
        DIR *d = opendir(dirs[k]);
        CHECK(d != NULL);
        for (struct dirent *e; d && (e = readdir(d)) != NULL;) {
            size_t l = strlen(e->d_name);
            if (l < 6 || strcmp(e->d_name + l - 5, ".yaml") != 0) continue;
            char path[768];
            snprintf(path, sizeof path, "%s/%s", dirs[k], e->d_name);
            scenario_t s;
            sweepspec_t sp = {0};
            char *text = NULL;
            size_t len;
            err_t err = {0};
            int rc = scenario_read(path, &text, &len, &err);
            if (rc == 0) rc = scenario_load_text(path, text, len, NULL, 0, &s, &err);
            if (rc == 0) {
                rc = sweepspec_check(path, text, NULL, 0, &sp, &err);
                scenario_fini(&s);
            }
            if (rc != 0) printf("  %s: %s\n", path, err.msg);
            CHECK(rc == 0);
            sweepspec_fini(&sp);
            free(text);
            n++;
        }
        if (d) closedir(d);
    }
    CHECK(n >= 15);
}

/* --- item: run-time errors at FILE:LINE:COL and the key ----------------- */

static void test_runtime_error_marks(void)
{
    /* The value as written in the file... */
    check_refused("protocol: {gamma: 4}\ncloud:\n  batching: {max_tokens: 3}\n",
                  NULL, 0, "t.yaml:3:26: cloud.batching.max_tokens: 3 is below gamma + 1");
    /* ... or given by --set (the value's column inside PATH=VALUE) ... */
    scenario_override_t mt[] = {SET("protocol.gamma", "6"),
                                SET("cloud.batching.max_tokens", "5")};
    check_refused("", mt, 2, "--set:2:27: cloud.batching.max_tokens: 5 is below gamma + 1 = 7");
    /* ... a --set replacing a value the file gives points at the --set. */
    check_refused("cloud:\n  batching: {max_tokens: 64}\n", mt, 2,
                  "--set:2:27: cloud.batching.max_tokens:");
    /* Too big for the GPU: the target as written. */
    check_refused("cloud:\n  gpu: models/hardware/l4.yaml\n"
                  "  target: models/llm/llama-2-70b.yaml\n",
                  NULL, 0, "t.yaml:3:11: cloud.target: llama-2-70b weights");
    /* Defaulted target: the nearest enclosing key the scenario gives. */
    check_refused("seed: 2\ncloud:\n  replicas: 1\n  gpu: models/hardware/raspberry-pi-5.yaml\n",
                  NULL, 0, "t.yaml:2:1: cloud.target: llama-2-7b weights");
    /* ... where `cloud` itself came from a --set: at that --set. */
    scenario_override_t gpu[] = {SET("cloud.gpu", "models/hardware/raspberry-pi-5.yaml")};
    check_refused("", gpu, 1, "--set:1:1: cloud.target:");
    /* A table for another model, inherited by a group from tenants.edge. */
    check_refused("tenants:\n  edge:\n    calibration: "
                  "results/calibration/cpu-amd-epyc-tinyllama-1.1b-w4a16.yaml\n"
                  "  groups:\n    - {name: a, count: 1}\n",
                  NULL, 0, "t.yaml:3:18: tenants.edge.calibration: ");
    /* A group's own table, set by name on the command line. */
    scenario_override_t cal[] = {
        SET("tenants.groups.b.edge.calibration",
            "results/calibration/cpu-amd-epyc-tinyllama-1.1b-w4a16.yaml")};
    check_refused("tenants:\n  groups:\n    - {name: a, count: 1}\n    - {name: b, count: 1}\n",
                  cal, 1, "--set:1:35: tenants.groups.1.edge.calibration: ");
}

/* --- item: messages name the option the user typed ---------------------- */

static void test_option_sources(void)
{
    scenario_t s;
    err_t err = {0};
    /* --reps 0: the option, not a --set the user never gave. */
    scenario_override_t reps[] = {{.path = "replications", .value = "0", .src = "--reps"}};
    CHECK(scenario_load_string("t.yaml", "", reps, 1, &s, &err) == -1);
    CHECK(starts(err.msg, "--reps: replications: must be in [1, 1e+06], got 0"));
    /* The refused value as given, not rounded to 6 digits onto the bound it
     * exceeds ("got 1e+06" for 1000001, "got 1" for an alpha of 1.0000001). */
    scenario_override_t big[] = {{.path = "replications", .value = "1000001", .src = "--reps"}};
    CHECK(scenario_load_string("t.yaml", "", big, 1, &s, &err) == -1);
    CHECK(strstr(err.msg, "got 1000001") != NULL);
    scenario_override_t alpha[] = {SET("acceptance.alpha", "1.0000001")};
    CHECK(scenario_load_string("t.yaml", "", alpha, 1, &s, &err) == -1);
    CHECK(strstr(err.msg, "must be in [0, 1], got 1.0000001") != NULL);
    /* --seed before a --set does not shift the --set's number. */
    scenario_override_t two[] = {{.path = "seed", .value = "3", .src = "--seed"},
                                 SET("protocol.gama", "2")};
    CHECK(scenario_load_string("t.yaml", "", two, 2, &s, &err) == -1);
    CHECK(starts(err.msg, "--set:1:10: protocol.gama: unknown key"));
    scenario_override_t three[] = {SET("seed", "4"),
                                   {.path = "replications", .value = "2", .src = "--reps"},
                                   SET("protocol.gamma", "0")};
    CHECK(scenario_load_string("t.yaml", "", three, 3, &s, &err) == -1);
    CHECK(starts(err.msg, "--set:2:16: protocol.gamma: must be in [1, 1024]"));
    /* An override written in a file (a sweep axis) is marked there: the
     * path at line:col, the value at vline:vcol. */
    scenario_override_t ax[] = {{.path = "protocol.gama", .value = "2", .src = "s.yaml",
                                 .line = 7, .col = 3, .vline = 7, .vcol = 19}};
    CHECK(scenario_load_string("t.yaml", "", ax, 1, &s, &err) == -1);
    CHECK(starts(err.msg, "s.yaml:7:12: protocol.gama: unknown key"));
    ax[0].path = "protocol.gamma";
    ax[0].value = "[1";
    CHECK(scenario_load_string("t.yaml", "", ax, 1, &s, &err) == -1);
    CHECK(starts(err.msg, "s.yaml:7:21: protocol.gamma: syntax error"));
    ax[0].value = "0";
    CHECK(scenario_load_string("t.yaml", "", ax, 1, &s, &err) == -1);
    CHECK(starts(err.msg, "s.yaml:7:19: protocol.gamma: must be in"));
}

/* Sweep axis values are validated like `run` and name the axis in the file. */
static void test_sweep_axis_marks(void)
{
    const char *y = "protocol: {gamma: 4}\n"
                    "cloud: {batching: {max_tokens: 6}}\n"
                    "sweep:\n"
                    "  protocol.gamma: [1, 0]\n";
    sweepspec_t sp = {0};
    err_t err = {0};
    CHECK(sweepspec_check("s.yaml", y, NULL, 0, &sp, &err) == -1);
    CHECK(starts(err.msg, "s.yaml:4:23: sweep.protocol.gamma: value '0': protocol.gamma: "
                          "must be in [1, 1024], got 0"));
    sweepspec_fini(&sp);
    /* gamma 8 loads, but the file's max_tokens then refuses it: the value
     * is blamed, the message keeps the location of the key that refuses. */
    const char *z = "protocol: {gamma: 4}\n"
                    "cloud: {batching: {max_tokens: 6}}\n"
                    "sweep:\n"
                    "  protocol.gamma: [1,\n"
                    "                   8]\n";
    CHECK(sweepspec_check("s.yaml", z, NULL, 0, &sp, &err) == -1);
    CHECK(starts(err.msg, "s.yaml:5:20: sweep.protocol.gamma: value '8': s.yaml:2:32: "
                          "cloud.batching.max_tokens: 6 is below gamma + 1 = 9"));
    sweepspec_fini(&sp);
    /* No sweep: section: nothing to check, nothing read. */
    CHECK(sweepspec_check("s.yaml", "seed: 3\n", NULL, 0, &sp, &err) == 0);
    CHECK(sp.naxes == 0);
    sweepspec_fini(&sp);
}

/* --- item: each group's edge source ---------------------------------------- */

static void test_group_sources(void)
{
    scenario_t s;
    err_t err = {0};
    output_sources_t src;
    int rc = scenario_load(ROOT "scenarios/examples/groups.yaml", NULL, 0, &s, &err);
    CHECK(rc == 0);
    if (rc) return;
    CHECK(sim_service_sources(&s, &src, &err) == 0);
    CHECK_STR(src.edge, "datasheet");   /* all agree */
    output_sources_fini(&src);
    scenario_fini(&s);
    /* laptops draft LLaMA-2-7B at W4A16: the table for exactly that loads. */
    scenario_override_t ov[] = {
        SET("tenants.groups.laptops.edge.calibration",
            "results/calibration/cpu-amd-epyc-llama-2-7b-w4a16.yaml")};
    rc = scenario_load(ROOT "scenarios/examples/groups.yaml", ov, 1, &s, &err);
    CHECK(rc == 0);
    if (rc) return;
    CHECK(sim_service_sources(&s, &src, &err) == 0);
    CHECK_STR(src.edge, "mixed");
    CHECK_STR(src.cloud, "datasheet");
    CHECK(s.ngroups == 3);
    CHECK_STR(sim_edge_source(&s, 0, &err), "datasheet");
    CHECK_STR(sim_edge_source(&s, 1, &err), "table");
    CHECK_STR(sim_edge_source(&s, 2, &err), "datasheet");
    CHECK(src.ngroups == 3 && src.edge_group);
    if (src.ngroups == 3 && src.edge_group) {
        CHECK_STR(src.edge_group[0], "datasheet");
        CHECK_STR(src.edge_group[1], "table");
        CHECK_STR(src.edge_group[2], "datasheet");
    }
    output_sources_fini(&src);
    scenario_fini(&s);
}

/* --- item: units of the arrival rate and the network sizes -------------- */

static void test_units(void)
{
    const char *rates[][2] = {{"2/s", "2/s"}, {"120/min", "2/s"}, {"7200/h", "2/s"},
                              {"2", "2/s"}, {"0.5", "0.5/s"}, {"1/min", "60/h"}};
    for (size_t i = 0; i < sizeof rates / sizeof *rates; i++) {
        char y[200];
        snprintf(y, sizeof y, "tenants:\n  workload: {arrival: poisson, rate: %s}\n",
                 rates[i][0]);
        scenario_t s, b;
        err_t err;
        if (load_str(y, NULL, 0, &s, &err)) { CHECK(0); continue; }
        double want = strcmp(rates[i][0], "0.5") == 0 ? 0.5
                    : strcmp(rates[i][0], "1/min") == 0 ? 1.0 / 60 : 2.0;
        CHECK(s.groups[0].workload.rate == want);
        /* check prints one canonical form, which loads back the same */
        char *out = scentext_yaml(&s);
        char line[64];
        snprintf(line, sizeof line, "rate: %s\n", rates[i][1]);
        CHECK(out && strstr(out, line) != NULL);
        if (out && load_str(out, NULL, 0, &b, &err) == 0) {
            CHECK(b.groups[0].workload.rate == want);
            scenario_fini(&b);
        }
        free(out);
        scenario_fini(&s);
    }
    scenario_t s;
    err_t err;
    if (load_str("tenants:\n  network: {overhead_bytes: 1KiB, bytes_per_token: 2kB}\n",
                 NULL, 0, &s, &err) == 0) {
        CHECK(s.groups[0].network.overhead_bytes == 1024);
        CHECK(s.groups[0].network.bytes_per_token == 2000);
        scenario_fini(&s);
    }
    if (load_str("tenants:\n  network: {overhead_bytes: 64B, bytes_per_token: 4}\n",
                 NULL, 0, &s, &err) == 0) {
        CHECK(s.groups[0].network.overhead_bytes == 64);
        CHECK(s.groups[0].network.bytes_per_token == 4);   /* bare: bytes */
        scenario_fini(&s);
    }
    scenario_override_t bad[] = {SET("tenants.workload.rate", "2/ms")};
    CHECK(scenario_load_string("t.yaml", "", bad, 1, &s, &err) == -1);
    CHECK(starts(err.msg, "--set:1:23: tenants.workload.rate: unknown unit '/ms'"));
    scenario_override_t bad2[] = {SET("tenants.network.bytes_per_token", "4Mbps")};
    CHECK(scenario_load_string("t.yaml", "", bad2, 1, &s, &err) == -1);
    CHECK(starts(err.msg, "--set:1:33: tenants.network.bytes_per_token: unknown unit"));
}

/* --- item: each service is built once, by the loader ---------------------- */

/* Copies file src to a new temporary file; its name in out (size n). */
static int copy_tmp(const char *src, char *out, size_t n)
{
    snprintf(out, n, "/tmp/specsim_test_table_XXXXXX");
    int fd = mkstemp(out);
    FILE *in = fopen(src, "rb"), *to = fd >= 0 ? fdopen(fd, "wb") : NULL;
    int rc = in && to ? 0 : -1;
    char buf[4096];
    for (size_t got; rc == 0 && (got = fread(buf, 1, sizeof buf, in)) > 0;)
        if (fwrite(buf, 1, got, to) != got) rc = -1;
    if (in) fclose(in);
    if (to && fclose(to) != 0) rc = -1;
    return rc;
}

/* The loader builds the edge's service from its calibration table and the
 * scenario keeps it: with the table gone after loading, the sources and the
 * run still work, so neither built the service a second time (each did
 * once, reading the table again). A fixed verify time needs no cloud
 * model. */
static void test_services_built_once(void)
{
    char table[64], yaml[512];
    CHECK(copy_tmp(ROOT "results/calibration/cpu-amd-epyc-llama-2-7b-w4a16.yaml",
                   table, sizeof table) == 0);
    snprintf(yaml, sizeof yaml,
             "duration: 2s\nwarmup: 0s\nprotocol: {mode: sync, gamma: 3}\n"
             "tenants:\n  count: 2\n  edge: {calibration: %s}\n"
             "  workload: {prompt_tokens: 8, output_tokens: 20}\n"
             "cloud: {verify_time: 5ms}\n", table);
    scenario_t s;
    err_t err = {0};
    int rc = load_str(yaml, NULL, 0, &s, &err);
    unlink(table);
    CHECK(rc == 0);
    if (rc != 0) return;
    CHECK(s.built && s.built->edge[0] != NULL);
    CHECK(s.built && s.built->replica[0].sv == NULL);
    output_sources_t src;
    CHECK(sim_service_sources(&s, &src, &err) == 0);
    CHECK_STR(src.edge, "table");
    CHECK_STR(src.cloud, "fixed");
    output_sources_fini(&src);
    metrics_summary_t m;
    sim_options_t opt = {.trace = NULL, .progress = NULL};
    rc = sim_run(&s, &opt, &m, &err);
    if (rc != 0) printf("  run: %s\n", err.msg);
    CHECK(rc == 0);
    scenario_fini(&s);
}

int main(void)
{
    RUN(test_badrun_files);
    RUN(test_shipped_pass);
    RUN(test_runtime_error_marks);
    RUN(test_option_sources);
    RUN(test_sweep_axis_marks);
    RUN(test_group_sources);
    RUN(test_services_built_once);
    RUN(test_units);
    return check_done();
}
