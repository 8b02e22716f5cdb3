/* testbed — runs a scenario on real processes, sockets and timers and
 * prints the simulator's metrics measured on them (docs/testbed.md).
 *
 *   build/testbed run SCENARIO [--set PATH=VALUE]... [--seed N] [--reps R]
 *                              [--json] [--out FILE] [--quiet]
 *
 * For each replication it forks a verifier (testbed/server.h) that listens
 * on an ephemeral port of 127.0.0.1, runs the edge fleet
 * (testbed/fleet.h) in this process, adds the verifier's tally to the
 * fleet's (testbed/tallyio.h) and computes the replication's metrics with
 * tally_finish, as `specsim run` does from a simulated one. The verifier
 * dies with this process (PR_SET_PDEATHSIG) and is killed and reaped on
 * every error path and on SIGINT/SIGTERM, so nothing is left running and
 * its port is closed. With --real-verify or --real-draft the real models'
 * memory is weighed against the machine's first (testbed/realmem.h), so
 * that a model too large is refused before anything starts. Exit status
 * as specsim: 0 ok, 1 runtime failure, 2 bad usage or bad scenario; 130
 * when interrupted.
 */
/* pipe2: Linux's, for a close-on-exec pipe in one call. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gsl/gsl_errno.h>

#include "config/overrides.h"
#include "fleet.h"
#include "lmserver.h"
#include "lmsteps.h"
#include "llm.h"
#include "prompts.h"
#include "io/infile.h"
#include "io/outfile.h"
#include "run/analytic.h"
#include "run/output.h"
#include "realmem.h"
#include "realverify.h"
#include "entity/repl.h"
#include "entity/proto.h"
#include "rt.h"
#include "config/scenario.h"
#include "server.h"
#include "run/sim.h"
#include "run/sweepfile.h"
#include "tallyio.h"
#include "base/wallclock.h"
#include "xio.h"
#include "model/cards.h"

static const char usage[] =
    "usage: testbed steps CARD [...]   (calibration rows: testbed steps --help)\n"
    "       testbed run SCENARIO [--set PATH=VALUE]... [--seed N] [--reps R]\n"
    "                            [--json] [--out FILE.csv|FILE.json] [--force]\n"
    "                            [--quiet] [--real-verify] [--real-draft[=TENANT]]\n"
    "                            [--real-model GGUF [--draft SPEC] [--prompts FILE]\n"
    "                             [--check] [--verbose]]\n"
    "\n"
    "Runs SCENARIO in real time: a verifier process (TCP on 127.0.0.1) and an\n"
    "edge-fleet process running the simulator's own protocol, batching and\n"
    "acceptance code, with emulated draft and verify times and the WAN delay\n"
    "injected on both directions; prints the same metrics as `specsim run`,\n"
    "measured with CLOCK_MONOTONIC. duration and warmup are wall-clock\n"
    "seconds; replications run back to back (docs/testbed.md), never side by\n"
    "side as specsim run -j runs them: they would compete for the cores and\n"
    "stretch each other's timings, so there is no -j.\n"
    "\n"
    "  --force        let --out replace a sweep's CSV or sidecar (refused\n"
    "                 without it, as by specsim run)\n"
    "  --real-verify  the verifier runs the target model's real batched forward\n"
    "                 pass on one CPU core with the project's fp16 kernels\n"
    "                 instead of waiting for the scenario's iteration time, and\n"
    "                 reports measured vs service-model times per batch size\n"
    "  --real-draft[=TENANT]  that tenant (default 0) drafts with the draft\n"
    "                 model's real decode steps (tenants.edge.draft at its quant,\n"
    "                 w4a16 or fp16) on one CPU core instead of the emulated\n"
    "                 draft time, and reports measured vs model times per token\n"
    "  --real-model GGUF  a real model end to end: every tenant drafts real\n"
    "                 tokens with the draft (--draft: w4a16 (default), w4a16-int8,\n"
    "                 fp16, each optionally :LAYERS) of GGUF's model, each draft\n"
    "                 lasting at least the scenario's draft time; the verifier\n"
    "                 (its own serving loop, testbed/lmserver.h) runs the fp16\n"
    "                 target's batched forward passes and decides by comparing\n"
    "                 tokens. Requests take the prompts of --prompts (default\n"
    "                 scenarios/real/prompts.txt) in turn; --check holds every\n"
    "                 finished request to the target's own greedy text, --verbose\n"
    "                 prints one. The real tokens replace the scenario's\n"
    "                 acceptance model and the real passes its verify times\n"
    "                 (said on stderr); the simulator keeps both\n"
    "  Both build their model in memory first: a run whose real models would\n"
    "  take more than 90% of the memory available (MemAvailable) is refused\n"
    "  (exit 2); otherwise their sizes go to stderr (not with --quiet, --json)\n";

/* The signal that asked us to stop (0 = none): read by the event loops. */
static volatile sig_atomic_t stop_sig;

static void on_signal(int sig)
{
    stop_sig = sig;
}

/* Sets sig's handler to fn (on_signal, SIG_DFL or SIG_IGN), without
 * SA_RESTART so that blocking calls return to look at stop_sig. 0, or -1
 * after the message (who: "testbed" or "testbed: verifier"). */
static int set_handler(const char *who, int sig, void (*fn)(int))
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = fn;
    const char *call;
    if (sigemptyset(&sa.sa_mask) != 0) call = "sigemptyset";
    else if (sigaction(sig, &sa, NULL) != 0) call = "sigaction";
    else return 0;
    fprintf(stderr, "%s: cannot handle signal %d (%s): %s: %s\n", who, sig, strsignal(sig),
            call, strerror(errno));
    return -1;
}

typedef struct opts {
    const char *scenario, *out;
    overrides_t sets;       /* --set, --seed, --reps */
    int json, quiet, real_verify;
    int force;              /* --force: --out may replace a sweep's CSV */
    int real_draft;         /* the tenant drafting for real, or -1 */
    const char *sched;      /* the scheduling policy in use, for the report */
    const char *model, *draft, *prompts;   /* --real-model, --draft, --prompts */
    int check, verbose;
} opts_t;

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "testbed run: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n(see testbed run --help)\n");
    return 2;
}

/* The option's value: attached after '=' or the next argument. */
static const char *value_of(int argc, char **argv, int *k, const char *eq)
{
    if (eq) return eq[1] ? eq + 1 : NULL;
    return *k + 1 < argc && argv[*k + 1][0] ? argv[++*k] : NULL;
}

/* --real-draft or --real-draft=TENANT (a tenant index, checked against
 * the scenario once it is loaded). 0, or 2 after the message. */
static int parse_tenant(const char *a, int *tenant)
{
    *tenant = 0;
    if (!a[12]) return 0;
    char *end;
    errno = 0;
    long v = strtol(a + 13, &end, 10);
    if (!a[13] || *end || errno || v < 0 || v > INT_MAX)
        return usage_error("--real-draft wants a tenant index (an integer >= 0), got "
                           "'%s'", a + 13);
    *tenant = (int)v;
    return 0;
}

/* --draft and --prompts checked before anything starts (the fleet reads
 * them only after the verifier has loaded the target): 0, or 2 with one
 * line. */
static int check_lm_opts(const opts_t *o)
{
    err_t err = {0, {0}};
    llm_opts_t lo;
    if (llm_opts_parse(o->draft, &lo, &err) != 0) {
        fprintf(stderr, "testbed: --draft: %s\n", err.msg);
        return 2;
    }
    prompts_t *ps = prompts_load(o->prompts, &err);
    if (!ps) {
        fprintf(stderr, "testbed: %s\n", err.msg);
        return 2;
    }
    prompts_free(ps);
    return 0;
}

/* --real-model, --draft and --prompts (each once): 0 taken, 2 after a
 * message, -1 not one of them. */
static int parse_lm_opt(opts_t *o, int argc, char **argv, int *k)
{
    static const char *const names[3] = {"--real-model", "--draft", "--prompts"};
    const char **dest[3] = {&o->model, &o->draft, &o->prompts};
    const char *a = argv[*k], *eq = strchr(a, '=');
    size_t len = eq ? (size_t)(eq - a) : strlen(a);
    for (int j = 0; j < 3; j++) {
        if (len != strlen(names[j]) || strncmp(a, names[j], len) != 0) continue;
        if (*dest[j]) return usage_error("option '%s' given more than once", names[j]);
        const char *v = value_of(argc, argv, k, eq);
        if (!v) return usage_error("%s needs a value", names[j]);
        *dest[j] = v;
        return 0;
    }
    return -1;
}

static int parse(opts_t *o, int argc, char **argv)
{
    /* As specsim's parser (sim/cli/cli_opt.c): an option with a value may be
     * given once (only --set accumulates); flags may repeat. */
    int seen[3] = {0, 0, 0};   /* --seed, --reps, --out */
    for (int k = 1; k < argc; k++) {
        const char *a = argv[k];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(usage, stdout);
            return -1;
        }
        if (strcmp(a, "--json") == 0) { o->json = 1; continue; }
        if (strcmp(a, "--quiet") == 0) { o->quiet = 1; continue; }
        if (strcmp(a, "--force") == 0) { o->force = 1; continue; }
        if (strcmp(a, "--real-verify") == 0) { o->real_verify = 1; continue; }
        if (strcmp(a, "--check") == 0) { o->check = 1; continue; }
        if (strcmp(a, "--verbose") == 0) { o->verbose = 1; continue; }
        int lmopt = parse_lm_opt(o, argc, argv, &k);
        if (lmopt > 0) return lmopt;
        if (lmopt == 0) continue;
        if (strncmp(a, "--real-draft", 12) == 0 && (a[12] == 0 || a[12] == '=')) {
            if (o->real_draft >= 0)
                return usage_error("option '%s' given more than once", "--real-draft");
            if (parse_tenant(a, &o->real_draft)) return 2;
            continue;
        }
        /* specsim run's -j has no place here: the replications measure
         * real time, and run side by side they would compete for the cores
         * and stretch each other's timings. */
        if (strncmp(a, "-j", 2) == 0 || strncmp(a, "--jobs", 6) == 0)
            return usage_error("%s: the testbed takes no -j: its replications run one "
                               "after another in real time, since side by side they "
                               "would compete for the cores and stretch each other's "
                               "timings", a);
        if (a[0] != '-' || strcmp(a, "-") == 0) {
            if (o->scenario) return usage_error("more than one scenario ('%s')", a);
            o->scenario = a;
            continue;
        }
        const char *eq = strchr(a, '=');
        size_t len = eq ? (size_t)(eq - a) : strlen(a);
        /* The options with a value; -1 for --out, which is not an override. */
        static const struct { const char *name; int kind; } VALUED[] = {
            {"--set", OVERRIDES_SET}, {"--seed", OVERRIDES_SEED},
            {"--reps", OVERRIDES_REPS}, {"--out", -1}};
        int id = -1;
        for (int j = 0; j < 4 && id < 0; j++)
            if (len == strlen(VALUED[j].name) && strncmp(a, VALUED[j].name, len) == 0) id = j;
        if (id < 0) return usage_error("unknown option '%s'", a);
        const char *v = value_of(argc, argv, &k, eq);
        if (!v) return usage_error("%s needs a value", a);
        if (id > 0 && seen[id - 1]++)
            return usage_error("option '%s' given more than once", VALUED[id].name);
        if (VALUED[id].kind < 0) {
            o->out = v;
            continue;
        }
        err_t err = {0};
        if (overrides_add(&o->sets, (overrides_kind_t)VALUED[id].kind, v, &err) != 0) {
            if (err.code == ERR_INPUT) return usage_error("%s", err.msg);
            fprintf(stderr, "testbed: %s\n", err.msg);
            return 1;
        }
    }
    if (!o->scenario) return usage_error("%s", "needs a SCENARIO file");
    if (!o->model && (o->draft || o->prompts || o->check || o->verbose))
        return usage_error("%s", "--draft, --prompts, --check and --verbose go with "
                           "--real-model");
    if (o->model && (o->real_verify || o->real_draft >= 0))
        return usage_error("%s", "--real-model replaces --real-verify and --real-draft");
    if (o->model && !o->draft) o->draft = "w4a16";
    if (o->model && !o->prompts) o->prompts = SPECSIM_ROOT "/scenarios/real/prompts.txt";
    return o->model ? check_lm_opts(o) : 0;
}

/* ---- one replication ---------------------------------------------------- */

typedef struct run {
    const scenario_t *s;
    server_opts_t sopt;
    lmserver_opts_t lopt;   /* lopt.model: --real-model, else NULL */
    lmedge_opts_t eopt;
    repl_shared_t sh;
    tally_t *tl;
    pid_t child;            /* the verifier, -1 = none */
    int real_draft;         /* the tenant drafting for real, or -1 */
    int quiet;              /* no report of real draft times */
    double events, wall, late_sum, late_n, late_max;
} run_t;

static void reap(run_t *c, int sig)
{
    if (c->child <= 0) return;
    if (sig) kill(c->child, sig);
    while (waitpid(c->child, NULL, 0) < 0 && errno == EINTR) {}
    c->child = -1;
}

/* The verifier's side of replication rep; never returns. */
static void verifier(run_t *c, int rep, int ctl)
{
    /* Dies with ^C and with its parent; either failing, it exits with a
     * message (its parent then says it exited, status 1). */
    if (set_handler("testbed: verifier", SIGINT, SIG_DFL) ||
        set_handler("testbed: verifier", SIGTERM, SIG_DFL))
        _exit(1);
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) {
        fprintf(stderr, "testbed: verifier: prctl(PR_SET_PDEATHSIG): %s\n", strerror(errno));
        _exit(1);
    }
    err_t e = {0, {0}};
    int rc = c->lopt.model ? lmserver_run(c->s, &c->sh, rep, &c->lopt, ctl, NULL, &e)
                           : server_run(c->s, &c->sh, rep, &c->sopt, ctl, NULL, &e);
    if (rc) fprintf(stderr, "testbed: verifier: %s\n", e.msg);
    /* A bad input (a GGUF the verifier cannot load) is the user's: exit 2,
     * which the parent passes on without a line of its own. */
    _exit(rc ? (e.code == ERR_INPUT ? 2 : 1) : 0);
}

/* The verifier as the fleet waits on it for what (xio_watch_t): a wait
 * ends when it has moved no data and used no CPU for XIO_STALL_S (stopped,
 * or hung), not never. */
static xio_watch_t verifier_watch(const run_t *c, const char *what)
{
    return (xio_watch_t){.pid = c->child, .who = "the verifier", .what = what,
                         .stall_s = XIO_STALL_S};
}

/* Starts the verifier; *port gets its port. 0, or -1 with err. */
static int start_verifier(run_t *c, int rep, int *ctl_fd, int *port, err_t *err)
{
    int ctl[2];
    if (pipe2(ctl, O_CLOEXEC) != 0)
        return err_set(err, ERR_RUNTIME, "testbed: pipe: %s", strerror(errno));
    fflush(NULL);
    pid_t parent = getpid();
    c->child = fork();
    if (c->child < 0) {
        close(ctl[0]);
        close(ctl[1]);
        return err_set(err, ERR_RUNTIME, "testbed: fork: %s", strerror(errno));
    }
    if (c->child == 0) {
        close(ctl[0]);
        if (getppid() != parent) _exit(1);   /* orphaned before the death signal */
        verifier(c, rep, ctl[1]);
    }
    close(ctl[1]);
    *ctl_fd = ctl[0];
    uint32_t p = 0;
    xio_watch_t w = verifier_watch(c, "its port");
    if (xio_read(ctl[0], &p, sizeof p, &stop_sig, &w, err)) {
        /* No port. Interrupted, or the verifier stalled (stopped: waitpid
         * would wait for it forever): it is killed. */
        if (strcmp(err->msg, XIO_EOF_MSG) != 0) {
            reap(c, SIGKILL);
            return -1;
        }
        /* The pipe ended: the verifier exited before listening. When that
         * was a bad input it said so in one line and exited 2. */
        int status = 0;
        while (waitpid(c->child, &status, 0) < 0 && errno == EINTR) {}
        c->child = -1;
        if (WIFEXITED(status) && WEXITSTATUS(status) == 2) err_set(err, ERR_INPUT, "%s", "");
        else xio_describe_exit(err, status);
        return -1;
    }
    *port = (int)p;
    return 0;
}

/* After a wait on the verifier failed: when its pipe or a connection to
 * it ended early (XIO_EOF_MSG, XIO_HUNG_UP_MSG), the verifier has exited
 * or died, or is about to, so reap it and say which (a killed one printed
 * nothing: "see its message above" pointed at nothing). One still running
 * a second later is left to reap(). -1. */
static int verifier_gone(run_t *c, err_t *err)
{
    if ((strcmp(err->msg, XIO_EOF_MSG) != 0 && strcmp(err->msg, XIO_HUNG_UP_MSG) != 0) ||
        c->child < 0)
        return -1;
    int status = 0;
    pid_t got = 0;
    for (int k = 0; k < 100 && got == 0; k++) {
        got = waitpid(c->child, &status, WNOHANG);
        if (got < 0 && errno == EINTR) got = 0;
        if (got == 0) usleep(10000);
    }
    if (got != c->child) return -1;
    c->child = -1;
    xio_describe_exit(err, status);
    return -1;
}

/* Adds the verifier's tally and its lateness (late: sum, max, events) to
 * the fleet's, then waits for it to exit cleanly. */
static int collect(run_t *c, int ctl, double *events, double *late, err_t *err)
{
    uint64_t head[2];
    double vl[3];
    xio_watch_t w = verifier_watch(c, "its tally");
    if (xio_read(ctl, head, sizeof head, &stop_sig, &w, err) ||
        xio_read(ctl, vl, sizeof vl, &stop_sig, &w, err))
        return verifier_gone(c, err);
    late[0] += vl[0];
    if (vl[1] > late[1]) late[1] = vl[1];
    late[2] += vl[2];
    if (head[0] != tallyio_len(c->tl))
        return err_set(err, ERR_RUNTIME, "testbed: the verifier's tally has %llu "
                       "values, expected %zu", (unsigned long long)head[0],
                       tallyio_len(c->tl));
    double *v = malloc(head[0] * sizeof *v);
    if (!v) return err_set(err, ERR_RUNTIME, "testbed: out of memory");
    if (xio_read(ctl, v, head[0] * sizeof *v, &stop_sig, &w, err) != 0) {
        free(v);
        return verifier_gone(c, err);
    }
    int rc = tallyio_add(c->tl, v, head[0], err);
    free(v);
    *events += (double)head[1];
    int status = 0;
    pid_t pid = c->child;
    c->child = -1;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    if (rc == 0 && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
        rc = err_set(err, ERR_RUNTIME, "testbed: the verifier failed");
        xio_describe_exit(err, status);
    }
    return rc;
}

/* Real drafting: drafts finished, their tokens, and per token the measured
 * and the model's time (ms), on stderr. */
static void real_draft_report(const run_t *c, int rep, const fleet_stats_t *st)
{
    const tenant_group_t *G = scenario_tenant_group(c->s, c->real_draft);
    fprintf(stderr, "testbed: replication %d, real drafting by tenant %d of %s (%s) on "
            "one core: drafts, tokens, measured ms per token, %s ms per token\n", rep,
            c->real_draft, G->edge.draft.name, G->edge.quant == PREC_W4A16 ? "w4a16" : "fp16",
            G->edge.has_draft_time ? "scenario draft_time" : "service model");
    double k = st->rd_tokens;
    if (k > 0)
        fprintf(stderr, "  draft %6.0f %7.0f  %8.3f  %8.3f  (%+.1f%%)\n", st->rd_drafts, k,
                1e3 * st->rd_real_s / k, 1e3 * st->rd_model_s / k,
                100 * (st->rd_model_s - st->rd_real_s) / st->rd_real_s);
    else
        fprintf(stderr, "  draft %6.0f %7.0f\n", st->rd_drafts, k);
}

/* A real model: the drafts made, per token the drafter's measured time and
 * the scenario's, on stderr. */
static void lm_report(const run_t *c, int rep, const fleet_stats_t *st)
{
    double k = st->lm_tokens;
    fprintf(stderr, "testbed: replication %d, real drafting (%s): %.0f requests, %.0f drafts, "
            "%.0f tokens; per token %.3f ms computing (batched), %.3f ms by the scenario\n",
            rep, c->eopt.draft, st->lm_requests, st->lm_drafts, k,
            k > 0 ? 1e3 * st->lm_real_s / k : 0.0, k > 0 ? 1e3 * st->lm_model_s / k : 0.0);
    double nl = st->lm_late_measured;
    fprintf(stderr, "testbed: replication %d: %.0f of %.0f drafts ended after the scenario's "
            "draft time (%.3f ms late on average), %.0f of them after the warm-up "
            "(%.3f ms)%s\n", rep, st->lm_late, st->lm_drafts,
            st->lm_late > 0 ? 1e3 * st->lm_late_s / st->lm_late : 0.0, nl,
            nl > 0 ? 1e3 * st->lm_late_measured_s / nl : 0.0,
            nl > 0.05 * st->lm_drafts_measured ? ": the drafter fell behind, so the simulator's "
            "draft times are short of these" : "");
    if (rep == 0)
        fprintf(stderr, "testbed: verdicts came from real tokens, not acceptance.model (%s), "
                "and verify times from real forward passes, not the cloud's service model\n",
                c->s->acceptance.model ? c->s->acceptance.model->name : "iid");
}

static int run_rep(run_t *c, int rep, metrics_rep_t *out, metrics_rep_t *gout,
                   err_t *err)
{
    const scenario_t *s = c->s;
    tally_reset(c->tl);
    c->tl->warmup = s->warmup;
    int ctl = -1, port = -1, rc = 0;
    double t0 = wallclock_s(), events = 0;
    if (proto_any_cloud(s)) rc = start_verifier(c, rep, &ctl, &port, err);
    fleet_stats_t st;
    double late[3] = {0, 0, 0};   /* both processes: sum, max, events */
    if (rc == 0)
        rc = fleet_run(s, &c->sh, rep, port, c->child, c->real_draft,
                       c->lopt.model ? &c->eopt : NULL, c->tl, &st, &stop_sig, err);
    if (rc != 0) verifier_gone(c, err);
    if (rc == 0 && c->real_draft >= 0 && !c->quiet) real_draft_report(c, rep, &st);
    if (rc == 0 && c->lopt.model && !c->quiet) lm_report(c, rep, &st);
    if (rc == 0 && c->lopt.model && st.lm_mismatches > 0)
        rc = err_set(err, ERR_RUNTIME, "testbed: %.0f verdicts accepted ids that were not the "
                     "edge's drafts", st.lm_mismatches);
    if (rc == 0) {
        events = st.events;
        late[0] = st.late_mean * st.steps;
        late[1] = st.late_max;
        late[2] = st.steps;
    }
    if (rc == 0 && c->child > 0) rc = collect(c, ctl, &events, late, err);
    if (ctl >= 0) close(ctl);
    reap(c, SIGKILL);
    if (rc) return -1;
    double wall = wallclock_s() - t0;
    c->events += events;
    c->wall += wall;
    c->late_sum += late[0];
    c->late_n += late[2];
    if (late[1] > c->late_max) c->late_max = late[1];
    tally_finish(c->tl, proto_any_cloud(s) ? s->cloud.replicas : 0, events, wall,
                 out, gout);
    return 0;
}

/* ---- the whole run ------------------------------------------------------ */

static void summarize(const run_t *c, const metrics_rep_t *reps,
                      const metrics_rep_t *greps, metrics_summary_t *m,
                      metrics_summary_t *groups)
{
    const scenario_t *s = c->s;
    int R = s->replications;
    metrics_summarize(reps, R, m);
    m->value[METRIC_EVENTS] = c->events;
    m->value[METRIC_WALL_S] = c->wall;
    m->value[METRIC_EVENTS_PER_S] = c->wall > 0 ? c->events / c->wall : 0;
    m->ci95[METRIC_EVENTS] = m->ci95[METRIC_WALL_S] = m->ci95[METRIC_EVENTS_PER_S] = 0;
    for (int g = 0; g < s->ngroups; g++) {
        metrics_summarize_group(greps, R, s->ngroups, g, &groups[g]);
        for (int k = METRIC_EVENTS; k <= METRIC_EVENTS_PER_S; k++) {
            groups[g].value[k] = m->value[k];
            groups[g].ci95[k] = 0;
        }
    }
    m->groups = groups;
    m->ngroups = s->ngroups;
}

static int run_all(run_t *c, metrics_summary_t *m, metrics_summary_t *groups,
                   err_t *err)
{
    const scenario_t *s = c->s;
    int R = s->replications;
    metrics_rep_t *reps = calloc((size_t)R, sizeof *reps);
    metrics_rep_t *greps = calloc((size_t)R * s->ngroups, sizeof *greps);
    int rc = reps && greps ? 0 : err_set(err, ERR_RUNTIME, "testbed: out of memory");
    if (rc == 0 && sim_shared_init(s, &c->sh, err)) rc = -1;
    if (rc == 0 && !(c->tl = sim_tally_create(s)))
        rc = err_set(err, ERR_RUNTIME, "testbed: out of memory");
    for (int r = 0; r < R && rc == 0; r++)
        rc = run_rep(c, r, &reps[r], &greps[(size_t)r * s->ngroups], err);
    if (rc == 0) summarize(c, reps, greps, m, groups);
    tally_free(c->tl);
    sim_shared_fini(&c->sh);
    free(reps);
    free(greps);
    return rc;
}

/* The real models this run builds weighed against the memory available
 * before anything is allocated, forked or written: the verifier's (a
 * forked process) and the draft worker's (this one) live at the same time
 * on this machine, so both count. 0 to go ahead, or 2 after the message. */
static int check_memory(const opts_t *o, const scenario_t *s)
{
    realmem_part_t parts[2];
    int n = 0, quant, jobs, context;
    char pre[96] = "tenants.", dkey[128], vadv[384], dadv[512];
    if (o->real_verify && proto_any_cloud(s)) {
        realverify_size_t z = server_real_bytes(s, &quant, &jobs, &context);
        snprintf(vadv, sizeof vadv, "--real-verify: a smaller cloud.target card (fewer layers, "
                 "as models/llm/tinyllama-1.1b-2l.yaml), a smaller cloud.batching.max_batch "
                 "(a KV cache of %d tokens per job) or max_tokens, or run without "
                 "--real-verify", context);
        parts[n++] = (realmem_part_t){"--real-verify", "cloud.target", s->cloud.target.name,
                                      s->cloud.target_ref, quant, jobs, context, z, vadv};
    }
    if (o->real_draft >= 0) {
        const tenant_group_t *G = scenario_tenant_group(s, o->real_draft);
        realverify_size_t z = fleet_real_draft_bytes(s, o->real_draft, &context);
        if (s->ngroups > 1) snprintf(pre, sizeof pre, "tenants.groups.%s.", G->name);
        snprintf(dkey, sizeof dkey, "%sedge.draft", pre);
        if (G->edge.quant == PREC_W4A16)
            snprintf(dadv, sizeof dadv, "--real-draft: a smaller %s card, or run without "
                     "--real-draft", dkey);
        else
            snprintf(dadv, sizeof dadv, "--real-draft: a smaller %s card, %sedge.quant: "
                     "w4a16 (about a quarter of fp16's weight bytes), or run without "
                     "--real-draft", dkey, pre);
        parts[n++] = (realmem_part_t){"--real-draft", dkey, G->edge.draft.name,
                                      G->edge.draft_ref, G->edge.quant, 1, context, z, dadv};
    }
    return n ? realmem_check(o->scenario, parts, n, o->quiet || o->json) : 0;
}

/* --out as `specsim run` holds it (docs/formats.md, "Output files"): a
 * target outfile.h accepts; neither it nor its sidecar the scenario or a
 * file the scenario reads (read), nor without --force a sweep's CSV or
 * sidecar; both creatable now, not after the real-time run. 0, or -1 with
 * err. */
static int check_out(const opts_t *o, infiles_t *read, err_t *err)
{
    char side[OUTFILE_PATH_MAX];
    const char *sidep = NULL;
    outfile_kind_t kind;
    if (output_check_path(o->out, err) != 0 || outfile_kind(o->out, &kind, err) != 0)
        return -1;
    if (kind != OUTFILE_STREAM && output_sidecar_path(o->out, side, sizeof side) == 0)
        sidep = side;
    const outfile_role_t r[] = {{o->scenario, "the scenario", 0}, {o->out, "--out", 1},
                                {sidep, "--out's sidecar", 1}};
    if (outfile_distinct(r, 3, err) != 0 || outfile_not_read(r, 3, read, err) != 0 ||
        (!o->force && (sweepfile_check_replace(o->out, "--out", err) != 0 ||
                       sweepfile_check_replace(sidep, "--out's sidecar", err) != 0)) ||
        outfile_probe(o->out, err) != 0 || (sidep && outfile_probe(sidep, err) != 0))
        return -1;
    return 0;
}

/* Loads and checks the scenario; o->out takes its output.file when the
 * command line gives no --out (it then points into *s). */
static int load(opts_t *o, scenario_t *s)
{
    err_t err = {0, {0}};
    scenario_src_t *src = NULL;
    int rc = scenario_src_open(o->scenario, &src, &err);
    if (rc == 0) {
        rc = scenario_src_load(src, o->sets.ov, o->sets.n, s, &err);
        if (rc == 0 && !o->out && s->output.file[0]) o->out = s->output.file;
        if (rc == 0 && o->out && check_out(o, scenario_src_files(src), &err) != 0) {
            scenario_fini(s);
            rc = -1;
        }
        scenario_src_free(src);
    }
    if (rc != 0) {
        fprintf(stderr, "testbed: %s\n", err.msg);
        return err.code ? err.code : 2;
    }
    if (s->warmup_auto) {
        fprintf(stderr, "testbed: %s: warmup: auto runs each replication twice with "
                "the same draws, which real time cannot repeat; give warmup in "
                "seconds\n", o->scenario);
        scenario_fini(s);
        return 2;
    }
    /* The output: section as `specsim run` reads it; the testbed writes no
     * trace (nor takes --trace), so a trace is refused, not ignored. */
    if (scenario_refuse_trace(s, "the testbed", "give it to `specsim run`", &err) != 0) {
        fprintf(stderr, "testbed: %s\n", err.msg);
        scenario_fini(s);
        return 2;
    }
    /* protocol.fallback's reconcile carries its body in the simulator's
     * memory (msg_resync_t), which the wire does not carry. */
    const char *why = NULL;
    for (int g = 0; g < s->ngroups && !why; g++)
        if (scenario_group_protocol(s, g)->fallback.mode != FALLBACK_OFF)
            why = "protocol.fallback is simulated only (give it to `specsim run`)";
    /* Real models draft and verify chains; a token tree's block
     * (protocol.tree) is emulated only. */
    for (int g = 0; g < s->ngroups && !why; g++)
        if (scenario_group_protocol(s, g)->tree.n > 0 &&
            (o->real_verify || o->model || o->real_draft >= 0))
            why = "protocol.tree: the real models draft and verify chains (run the "
                  "tree emulated, or give it to `specsim run`)";
    if (!why && o->real_verify) why = server_real_refusal(s);
    if (!why && o->model) why = lmserver_refusal(s);
    if (!why && o->real_draft >= 0) why = fleet_real_draft_refusal(s, o->real_draft);
    if (why) {
        fprintf(stderr, "testbed: %s: %s\n", o->scenario, why);
        scenario_fini(s);
        return 2;
    }
    if (check_memory(o, s) != 0) {
        scenario_fini(s);
        return 2;
    }
    return 0;
}

/* Real-time scheduling (SCHED_FIFO, low priority) when permitted, for
 * both processes (the verifier inherits it): on a loaded machine a timer
 * wake-up under SCHED_OTHER can wait for other processes' time slices
 * (milliseconds), which would stretch emulated draft and verify times.
 * The processes sleep between events, so they take little CPU from
 * others. Returns the policy's name for the report. */
static const char *realtime(void)
{
    struct sched_param sp = {.sched_priority = 10};
    return sched_setscheduler(0, SCHED_FIFO, &sp) == 0 ? "SCHED_FIFO" : "SCHED_OTHER "
           "(no permission for SCHED_FIFO)";
}

/* The scenario's smallest modelled time and what it is: a draft token and
 * a verify block as `analytic` prices them (the first group's, when it can),
 * and every group's one-way network delay. 0 when none is positive. */
static double smallest_time(const scenario_t *s, const char **what)
{
    double t = INFINITY;
    *what = "";
    analytic_t an;
    err_t e = {0, {0}};
    if (analytic_compute(s, &an, &e) == 0) {
        if (an.draft_time_s > 0 && an.draft_time_s < t) t = an.draft_time_s, *what = "a draft token";
        if (an.verify_time_s > 0 && an.verify_time_s < t)
            t = an.verify_time_s, *what = "a verify block";
    }
    for (int g = 0; g < s->ngroups; g++) {
        double d = s->groups[g].network.rtt / 2;
        if (d > 0 && d < t) t = d, *what = "a one-way network delay";
    }
    return isfinite(t) ? t : 0;
}

/* Events that ran late stretch every time the testbed measures; past 1%
 * of the scenario's smallest time, or of the ITL it measured, its numbers
 * carry that error (a loaded machine: one run read 195 ms of ITL where the
 * scenario gives 29 ms). Said even with --quiet and --json: a number that
 * cannot be trusted must not pass unflagged. */
static void warn_late(const scenario_t *s, double late_mean, double itl_mean)
{
    const char *what;
    double small = smallest_time(s, &what);
    if (small > 0 && late_mean > 0.01 * small)
        fprintf(stderr, "testbed: warning: events ran %.3g ms late on average, %.1f%% of the "
                "scenario's smallest time (%s, %.3g ms): the machine could not keep the "
                "schedule, and the measured times are stretched by about that much\n",
                1e3 * late_mean, 100 * late_mean / small, what, 1e3 * small);
    else if (itl_mean > 0 && late_mean > 0.01 * itl_mean)
        fprintf(stderr, "testbed: warning: events ran %.3g ms late on average, %.1f%% of the "
                "ITL measured (%.3g ms): the machine could not keep the schedule, and the "
                "measured times are stretched by about that much\n", 1e3 * late_mean,
                100 * late_mean / itl_mean, 1e3 * itl_mean);
}

/* Descriptors a process needs beyond one per tenant: the listener, the
 * pipes, the epoll set and timers, the model files, the standard ones. */
#define TESTBED_FD_SPARE 64

/* Each process holds one socket per tenant: raises the soft limit on open
 * files as far as the hard one allows, and refuses a fleet that would not
 * fit (exit 2) before anything starts, instead of a connection failing
 * half-way with a message about a peer. 0, or 2 with the message printed. */
static int fd_room(int ntenants)
{
    struct rlimit rl;
    rlim_t need = (rlim_t)ntenants + TESTBED_FD_SPARE;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= need) return 0;
    rlim_t want = rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= need ? need : rl.rlim_max;
    struct rlimit up = {want, rl.rlim_max};
    if (setrlimit(RLIMIT_NOFILE, &up) == 0 && want >= need) return 0;
    /* "1 tenant needs", not "1 tenants need": a fleet of one is refused
     * too when the limit is below the spare descriptors. */
    int one = ntenants == 1;
    fprintf(stderr, "testbed: %d tenant%s need%s about %llu open files in each process "
            "(one socket per tenant), but the limit is %llu (hard %llu): raise it "
            "(ulimit -n) or run fewer tenants\n", ntenants, one ? "" : "s", one ? "s" : "",
            (unsigned long long)need,
            (unsigned long long)rl.rlim_cur, (unsigned long long)rl.rlim_max);
    return 2;
}

static int cmd_run(int argc, char **argv)
{
    opts_t o;
    memset(&o, 0, sizeof o);
    o.real_draft = -1;
    int rc = parse(&o, argc, argv);
    scenario_t s;
    if (rc == 0) rc = load(&o, &s);
    if (rc == 0 && (rc = fd_room(s.ntenants)) != 0) scenario_fini(&s);
    if (rc != 0) {
        overrides_fini(&o.sets);
        return rc < 0 ? 0 : rc;
    }
    run_t c = {.s = &s, .child = -1, .real_draft = o.real_draft, .quiet = o.quiet || o.json,
               .sopt = {.real_verify = o.real_verify, .quiet = o.quiet || o.json},
               .lopt = {o.model, 1, o.check, o.verbose, o.quiet || o.json},
               .eopt = {o.model, o.draft, o.prompts, 1, s.warmup}};
    metrics_summary_t m, *groups = calloc((size_t)s.ngroups, sizeof *groups);
    output_sources_t src = {0};
    err_t err = {0, {0}};
    if (!groups) rc = err_set(&err, ERR_RUNTIME, "testbed: out of memory");
    o.sched = realtime();
    if (rc == 0) rc = sim_service_sources(&s, &src, &err);
    if (rc == 0) rc = run_all(&c, &m, groups, &err);
    if (rc == 0 && o.out) rc = output_write_file(o.out, &s, &src, &m, &err);
    if (rc != 0) {
        if (err.msg[0])   /* empty: the verifier has said it */
            fprintf(stderr, "%s%s\n", strncmp(err.msg, "testbed", 7) ? "testbed: " : "",
                    err.msg);
        rc = stop_sig ? 130 : err.code ? err.code : 1;
    } else {
        double late = c.late_n > 0 ? c.late_sum / c.late_n : 0;
        if (!o.quiet && !o.json)
            fprintf(stderr, "testbed: scheduling %s; events ran %.1f us late on "
                    "average (at most %.1f us)\n", o.sched, 1e6 * late, 1e6 * c.late_max);
        warn_late(&s, late, m.value[METRIC_ITL_MEAN]);
        const output_extra_t x[] = {{"testbed_scheduling", o.sched, 0},
                                    {"testbed_late_mean_s", NULL, late},
                                    {"testbed_late_max_s", NULL, c.late_max}};
        int w = o.json ? output_json_extra(stdout, &s, &src, &m, x, 3)
                       : output_summary(stdout, &s, &src, &m);
        if (w != 0 || fflush(stdout) != 0) {
            fprintf(stderr, "testbed: cannot write results: %s\n", strerror(errno));
            rc = 1;
        }
    }
    output_sources_fini(&src);
    free(groups);
    scenario_fini(&s);
    overrides_fini(&o.sets);
    return rc;
}

/* ---- steps: whole verify steps of batches, as calibration rows --------- */

static const char usage_steps[] =
    "usage: testbed steps CARD [--gamma G] [--max-tokens N] [--context C] [--reps R]\n"
    "                     [--quiet]\n"
    "       testbed steps --real-model GGUF [--gamma G] [--max-tokens N] [--context C]\n"
    "                     [--reps R] [--prefill P,P,...] [--quiet]\n"
    "\n"
    "Runs the verify step --real-verify runs (testbed/realverify.h) on one core\n"
    "for batches of 1, 2, ... blocks of G + 1 tokens (up to N tokens) over C\n"
    "cached tokens each, and prints one calibration-table row per batch size\n"
    "(`op: token` with q and batch, sim/model/caltable.h; the median of R runs) to\n"
    "append to the ops: of a table build/calibrate wrote for CARD, so that the\n"
    "service model's step factor covers batched steps (docs/testbed.md).\n"
    "With --real-model, the steps of the real-model verifier instead\n"
    "(testbed/lmsteps.h: the GGUF's fp16 target on one thread), and with\n"
    "--prefill one row more per prompt length P (one prefill of P tokens).\n"
    "Defaults: G 4, N 16, C 64, R 7.\n"
    "--quiet: the model's memory is not reported on stderr (with --real-model\n"
    "none is reported, so there it has nothing to silence).\n";

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int int_opt(const char *name, const char *v, long lo, long hi, int *out)
{
    char *end;
    long x = v ? strtol(v, &end, 10) : 0;
    if (!v || *end || x < lo || x > hi) {
        fprintf(stderr, "testbed steps: %s wants an integer in [%ld, %ld], got '%s'\n",
                name, lo, hi, v ? v : "");
        return 2;
    }
    *out = (int)x;
    return 0;
}

#define STEPS_PREFILL_MAX 16

/* --prefill P,P,...: prompt lengths in [1, 4096], at most
 * STEPS_PREFILL_MAX of them. 0, or 2 with the message printed. */
static int prefill_opt(const char *v, int *p, int *n)
{
    const char *c = v ? v : "";
    *n = 0;
    do {
        char *end;
        long x = strtol(c, &end, 10);
        if (end == c || (*end && *end != ',') || x < 1 || x > 4096 || *n == STEPS_PREFILL_MAX) {
            fprintf(stderr, "testbed steps: --prefill wants up to %d prompt lengths in "
                    "[1, 4096] separated by commas, got '%s'\n", STEPS_PREFILL_MAX, v ? v : "");
            return 2;
        }
        p[(*n)++] = (int)x;
        c = *end ? end + 1 : end;
    } while (*c);
    return 0;
}

static int steps_real(const lmsteps_opts_t *o)
{
    err_t err = {0, {0}};
    int rc = lmsteps_print(stdout, o, &err);
    if (rc == 0 && fflush(stdout) != 0)
        rc = err_set(&err, ERR_RUNTIME, "testbed steps: cannot write the rows: %s",
                     strerror(errno));
    if (rc) fprintf(stderr, "%s\n", err.msg);
    return rc ? (err.code == ERR_INPUT ? 2 : 1) : 0;
}

static int cmd_steps(int argc, char **argv)
{
    const char *card_path = NULL, *gguf = NULL;
    int gamma = 4, maxm = 16, context = 64, reps = 7, rc = 0, quiet = 0;
    int prefill[STEPS_PREFILL_MAX], nprefill = 0;
    static const char *const once[] = {"--gamma", "--max-tokens", "--context", "--reps",
                                       "--real-model", "--prefill"};
    int seen[6] = {0, 0, 0, 0, 0, 0};   /* each may be given once */
    for (int k = 1; k < argc && rc == 0; k++) {
        const char *a = argv[k], *v = k + 1 < argc ? argv[k + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) { fputs(usage_steps, stdout); return 0; }
        for (int j = 0; j < 6; j++)
            if (!strcmp(a, once[j]) && seen[j]++) {
                fprintf(stderr, "testbed steps: option '%s' given more than once\n", a);
                return 2;
            }
        if (!strcmp(a, "--gamma")) { rc = int_opt(a, v, 1, 64, &gamma); k++; }
        else if (!strcmp(a, "--max-tokens")) { rc = int_opt(a, v, 2, 4096, &maxm); k++; }
        else if (!strcmp(a, "--context")) { rc = int_opt(a, v, 0, 1 << 20, &context); k++; }
        else if (!strcmp(a, "--reps")) { rc = int_opt(a, v, 1, 1000, &reps); k++; }
        else if (!strcmp(a, "--prefill")) { rc = prefill_opt(v, prefill, &nprefill); k++; }
        else if (!strcmp(a, "--real-model") && v) { gguf = v; k++; }
        else if (!strcmp(a, "--quiet")) quiet = 1;
        else if (a[0] == '-' || card_path) {
            fprintf(stderr, "testbed steps: unexpected '%s'\n%s", a, usage_steps);
            return 2;
        } else card_path = a;
    }
    if (rc) return rc;
    if (gguf && card_path) {
        fprintf(stderr, "testbed steps: give a CARD or --real-model, not both\n");
        return 2;
    }
    if (nprefill && !gguf) {
        fprintf(stderr, "testbed steps: --prefill needs --real-model\n");
        return 2;
    }
    if (gguf && (gamma + 1 > maxm || context > 65536)) {
        fprintf(stderr, "testbed steps: %s\n", gamma + 1 > maxm
                ? "--max-tokens holds no block of --gamma + 1 tokens"
                : "--context above 65536 with --real-model");
        return 2;
    }
    if (gguf) {
        lmsteps_opts_t lo = {gguf, gamma, maxm, context, reps, prefill, nprefill, 1};
        return steps_real(&lo);
    }
    if (!card_path) { fputs(usage_steps, stderr); return 2; }
    err_t err = {0, {0}};
    llm_card_t card;
    if (cards_load_llm_file(card_path, &card, &err)) {
        fprintf(stderr, "testbed steps: %s\n", err.msg);
        return 2;
    }
    int q = gamma + 1, nb = maxm / q;
    if (nb < 1) {
        fprintf(stderr, "testbed steps: --max-tokens %d holds no block of %d tokens\n", maxm, q);
        return 2;
    }
    realmem_part_t part = {"testbed steps", NULL, card.name, card_path, PREC_FP16, nb,
                           context + q + 1,
                           realverify_bytes(&card, PREC_FP16, nb * q, nb, context + q + 1),
                           "a card with fewer layers, or a smaller --max-tokens or --context"};
    if (realmem_check(card_path, &part, 1, quiet) != 0) return 2;
    const char *sched = realtime();
    realverify_t *v = realverify_create(&card, part.quant, nb * q, nb, part.context, 1, &err);
    double *t = malloc((size_t)reps * sizeof *t);
    service_job_t *jobs = malloc((size_t)nb * sizeof *jobs);
    if (!v || !t || !jobs) {
        fprintf(stderr, "testbed steps: %s\n", v ? "out of memory" : err.msg);
        realverify_free(v);
        free(t);
        free(jobs);
        return 1;
    }
    printf("  # testbed steps %s: whole verify steps (testbed/realverify.c) on one core, "
           "%s, median of %d\n", card.name, sched, reps);
    for (int b = 1; b <= nb && rc == 0; b++) {
        for (int j = 0; j < b; j++) jobs[j] = (service_job_t){q, context, 0};
        for (int r = -1; r < reps && rc == 0; r++) {   /* r = -1: warm-up */
            double dt = realverify_run(v, jobs, b, &err);
            if (dt < 0) rc = 1;
            else if (r >= 0) t[r] = dt;
        }
        if (rc) break;
        qsort(t, (size_t)reps, sizeof *t, cmp_dbl);
        printf("  - {op: token, m: %d, context: %d, q: %d, batch: %d, time_s: %.9g}\n", b * q,
               context, q, b, t[reps / 2]);
    }
    if (rc) fprintf(stderr, "testbed steps: %s\n", err.msg);
    realverify_free(v);
    free(t);
    free(jobs);
    return rc;
}

/* The library's warnings (a rerun sidecar whose data file changed since,
 * sim/base/err.h), as specsim prints them. */
static void print_warning(void *ctx, const char *msg)
{
    (void)ctx;
    fprintf(stderr, "testbed: warning: %s\n", msg);
}

int main(int argc, char **argv)
{
    gsl_set_error_handler_off();
    err_set_warn_handler(print_warning, NULL);
    /* ^C and SIGTERM end the run cleanly (the verifier killed and reaped);
     * a peer gone is an error of send, not death by SIGPIPE. */
    if (set_handler("testbed", SIGINT, on_signal) || set_handler("testbed", SIGTERM, on_signal) ||
        set_handler("testbed", SIGPIPE, SIG_IGN))
        return 1;
    if (argc >= 2 && strcmp(argv[1], "run") == 0) return cmd_run(argc - 1, argv + 1);
    if (argc >= 2 && strcmp(argv[1], "steps") == 0) return cmd_steps(argc - 1, argv + 1);
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        fputs(usage, stdout);
        return 0;
    }
    fputs(usage, stderr);
    return 2;
}
