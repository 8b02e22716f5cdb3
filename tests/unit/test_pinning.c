/* pinning: cloud_pin's policies on hand-driven request streams (no
 * simulation: pins and unpins are called directly). power-of-two equals
 * least-loaded with two replicas (the two draws are always both replicas);
 * over eight replicas with one long request in eight, round-robin sends
 * every long one to replica 0 (its worst load is 10, counted by hand
 * below) while power-of-two, looking at the load, keeps its worst far
 * lower; the stream is its own (the draws repeat for a seed and differ for
 * another). Least-loaded, which keeps its lightest replica in a tournament
 * tree, picks what a scan over every replica picks (the test's own, on its
 * own count of the loads), with and without groups of different speeds. */
#include "check.h"
#include "entity/cloud.h"

typedef struct rig {
    engine_t *eng;
    tally_t *tl;
    cloud_t *c;
    cloud_cfg_t cfg;
} rig_t;

static int no_done(void *ctx, const cloud_job_t *j, double now)
{
    (void)ctx; (void)j; (void)now;
    return 0;
}

static int no_admit(void *ctx, int tenant, int replica, double now)
{
    (void)ctx; (void)tenant; (void)replica; (void)now;
    return 0;
}

static void rig_init(rig_t *r, int replicas, enum pin_policy pin, uint64_t seed)
{
    err_t err;
    memset(r, 0, sizeof *r);
    r->cfg.replicas = replicas;
    r->cfg.has_verify_time = 1;
    r->cfg.verify_time = dist_const(1.0);
    r->cfg.batching.max_batch = 4;
    r->cfg.pinning = pin;
    r->eng = engine_create(16, &err);
    r->tl = tally_create(0, 1e9, 1, (const int[]){4}, 0);
    cloud_cb_t cb = {r, no_done, no_admit, NULL};
    r->c = cloud_create(&r->cfg, 4, NULL, INFINITY, r->eng, 0, 1, &cb, r->tl, NULL, seed,
                        0, &err);
    CHECK(r->c != NULL);
}

static void rig_fini(rig_t *r)
{
    cloud_free(r->c);
    tally_free(r->tl);
    engine_free(r->eng);
}

#define STEPS 4000
#define LONG 80

/* One request per step; request k holds its replica LONG steps when k is a
 * multiple of 8, else 1 step (released before the next arrival). Returns
 * the most requests any replica held at once; *pins gets each request's
 * replica. */
static int drive(rig_t *r, int *pins)
{
    static int until[STEPS + LONG + 1][8];
    static int nuntil[STEPS + LONG + 1];
    memset(nuntil, 0, sizeof nuntil);
    int load[8] = {0}, worst = 0;
    for (int s = 0; s < STEPS; s++) {
        for (int k = 0; k < nuntil[s]; k++) {
            cloud_unpin(r->c, until[s][k]);
            load[until[s][k]]--;
        }
        int at = cloud_pin(r->c);
        if (pins) pins[s] = at;
        load[at]++;
        if (load[at] > worst) worst = load[at];
        int end = s + (s % 8 == 0 ? LONG : 1);
        until[end][nuntil[end]++] = at;
    }
    return worst;
}

static void test_two_equals_least_loaded(void)
{
    static int a[STEPS], b[STEPS];
    rig_t p2, ll;
    rig_init(&p2, 2, PIN_POWER_OF_TWO, 7);
    rig_init(&ll, 2, PIN_LEAST_LOADED, 7);
    drive(&p2, a);
    drive(&ll, b);
    int same = 1;
    for (int s = 0; s < STEPS; s++) same &= a[s] == b[s];
    CHECK(same);
    rig_fini(&p2);
    rig_fini(&ll);
}

/* Round-robin: request k goes to replica k % 8, so every long request lands
 * on replica 0; at an arrival there it holds the 9 long ones pinned in the
 * last 72 steps plus the new one: 10. Least-loaded sees the load: at an
 * arrival at most 9 long requests are held (the short one is gone) over 8
 * replicas, so the least loaded holds at most 1 and the worst is 2 (reached
 * once 9 are held). Power-of-two lies between, well below round-robin. */
static void test_spread(void)
{
    rig_t rr, p2, ll;
    rig_init(&rr, 8, PIN_ROUND_ROBIN, 7);
    rig_init(&p2, 8, PIN_POWER_OF_TWO, 7);
    rig_init(&ll, 8, PIN_LEAST_LOADED, 7);
    int wrr = drive(&rr, NULL), wp2 = drive(&p2, NULL), wll = drive(&ll, NULL);
    CHECK(wrr == 10);
    CHECK(wll == 2);
    CHECK(wp2 >= wll && wp2 <= 4);
    rig_fini(&rr);
    rig_fini(&p2);
    rig_fini(&ll);
}

/* The draws come from the seed's own stream: the same seed repeats them,
 * another seed gives another sequence. */
static void test_stream(void)
{
    static int a[STEPS], b[STEPS], c[STEPS];
    rig_t x, y, z;
    rig_init(&x, 8, PIN_POWER_OF_TWO, 7);
    rig_init(&y, 8, PIN_POWER_OF_TWO, 7);
    rig_init(&z, 8, PIN_POWER_OF_TWO, 8);
    drive(&x, a);
    drive(&y, b);
    drive(&z, c);
    int same = 1, diff = 0;
    for (int s = 0; s < STEPS; s++) {
        same &= a[s] == b[s];
        diff |= a[s] != c[s];
    }
    CHECK(same && diff);
    rig_fini(&x);
    rig_fini(&y);
    rig_fini(&z);
}

/* One replica: every request goes to it, no draws needed. */
static void test_one_replica(void)
{
    rig_t r;
    rig_init(&r, 1, PIN_POWER_OF_TWO, 7);
    for (int k = 0; k < 5; k++) CHECK(cloud_pin(r.c) == 0);
    rig_fini(&r);
}

/* Least-loaded against a scan written here: `count` replicas in two
 * groups whose reference times are t0 and t1 (equal: plain counts; else
 * (load + 1) x time, ties to the lower index); random pins, unpins and
 * pins to a given replica, each pin checked. */
static void scan_check(int count, double t0, double t1, uint64_t seed)
{
    err_t err;
    cloud_cfg_t cfg = {.replicas = count, .has_verify_time = 1};
    cfg.verify_time = dist_const(1.0);
    cfg.batching.max_batch = 4;
    cfg.pinning = PIN_LEAST_LOADED;
    engine_t *eng = engine_create(16, &err);
    tally_t *tl = tally_create(0, 1e9, 1, (const int[]){4}, 0);
    int n0 = count / 3;
    cloud_group_t g[2] = {
        {.count = n0, .verify_time = &cfg.verify_time, .kv_capacity = INFINITY, .ref_time = t0},
        {.count = count - n0, .verify_time = &cfg.verify_time, .kv_capacity = INFINITY,
         .ref_time = t1}};
    cloud_cb_t cb = {NULL, no_done, no_admit, NULL};
    cloud_t *c = cloud_create_groups(&cfg, 4, g, 2, eng, 0, 1, &cb, tl, NULL, seed, 0, &err);
    CHECK(c != NULL);
    int load[64] = {0}, bad = 0;
    uint64_t x = seed;
    for (int s = 0; s < 20000 && c; s++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        int op = (int)(x >> 60), at = (int)((x >> 33) % (uint64_t)count);
        if (op < 5 && load[at] > 0) {
            cloud_unpin(c, at);
            load[at]--;
        } else if (op < 7) {
            cloud_pin_to(c, at);
            load[at]++;
        } else {
            int best = 0;
            for (int i = 1; i < count; i++) {
                double li = (load[i] + 1) * (i < n0 ? t0 : t1);
                double lb = (load[best] + 1) * (best < n0 ? t0 : t1);
                if (li < lb) best = i;
            }
            int got = cloud_pin(c);
            bad += got != best;
            load[got]++;
        }
    }
    CHECK(bad == 0);
    cloud_free(c);
    tally_free(tl);
    engine_free(eng);
}

static void test_least_loaded_is_the_scan(void)
{
    scan_check(37, 1.0, 1.0, 3);    /* plain counts, not a power of two */
    scan_check(64, 1.0, 1.0, 4);
    scan_check(37, 2.0, 3.0, 5);    /* weighted: many ties of (load + 1) x time */
    scan_check(5, 0.7, 0.25, 6);
}

int main(void)
{
    RUN(test_least_loaded_is_the_scan);
    RUN(test_two_equals_least_loaded);
    RUN(test_spread);
    RUN(test_stream);
    RUN(test_one_replica);
    return check_done();
}
