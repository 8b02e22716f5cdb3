#!/usr/bin/env python3
"""A SimPy 4 model of the system specsim simulates, for `make bench`'s
speed comparison (scripts/bench.sh): the same simulated seconds of the same
model, so that wall times can be compared and committed tokens checked.

The model (docs/design.md, "Protocols" and "The cloud"), restricted to what
scenarios/bench/simpy-*.yaml use:
  - N closed-loop tenants: exponential think time before each request,
    constant prompt and output lengths;
  - a request starts with the edge's prefill (a fixed time) while its prompt
    travels to the cloud, which prefills it in one iteration; the first
    token is committed once both are done;
  - sync: draft gamma tokens (a fixed time each), send the block (half the
    RTT), wait for the verdict (half the RTT back), commit the accepted
    drafts plus one target token;
  - async with a window: drafting goes on while fewer than `window` blocks
    await verdicts and the request could still need more tokens; a block
    accepted whole commits its gamma drafts; a rejection commits the
    accepted drafts plus the correction and ends the epoch, at the cloud
    (the tenant's queued blocks purged, later arrivals dropped) and at the
    edge when its verdict arrives (drafts in flight and in progress thrown
    away, drafting restarts);
  - acceptance iid with probability alpha per draft (accepted drafts: the
    count of successes before the first failure, capped at gamma);
  - one cloud replica, continuous batching: when idle it starts an
    iteration of up to max_batch queued jobs in FIFO order, one per tenant,
    each iteration a fixed time; jobs arriving at the instant it frees join.

Usage: simpy_peer.py SCENARIO.yaml — reads the keys above from the scenario
(flat YAML subset parsed here, so that no YAML package is needed) and prints
one line: `committed N wall S decode_rate R cpu C` (S: seconds in env.run,
C: the process's CPU seconds in it; R:
tokens per second of a request after its first token, over finished
requests: specsim's tokens_per_s_tenant).
"""
import random
import re
import sys
import time
from collections import deque

import simpy


def read_scenario(path):
    """The few keys the model needs, from the bench scenario's flow-style
    YAML. Anything unexpected is an error, not a guess."""
    text = open(path, encoding="utf-8").read()

    def num(key, unit=None):
        m = re.search(r"\b%s:\s*([0-9.]+)\s*(ms|s)?\b" % re.escape(key), text)
        if not m:
            sys.exit("%s: key '%s' not found" % (path, key))
        v = float(m.group(1))
        if m.group(2) == "ms":
            v /= 1000.0
        return v

    def word(key):
        m = re.search(r"\b%s:\s*([a-z_]+)" % re.escape(key), text)
        if not m:
            sys.exit("%s: key '%s' not found" % (path, key))
        return m.group(1)

    think = re.search(r"think:\s*\{dist:\s*exponential,\s*mean:\s*([0-9.]+)s\}", text)
    if not think:
        sys.exit("%s: think must be {dist: exponential, mean: Ns}" % path)
    if word("model") != "iid" or word("policy") != "continuous" or int(num("replicas")) != 1:
        sys.exit("%s: the model covers iid acceptance, continuous batching, one replica" % path)
    mode = word("mode")
    return {
        "mode": mode,
        "seed": int(num("seed")),
        "duration": num("duration"),
        "gamma": int(num("gamma")),
        "window": int(num("window")) if mode == "async" else 1,
        "alpha": num("alpha"),
        "tenants": int(num("count")),
        "draft": num("draft_time"),
        "prefill": num("prefill_time"),
        "half_rtt": num("rtt") / 2,
        "think": float(think.group(1)),
        "output": int(num("output_tokens")),
        "verify": num("verify_time"),
        "max_batch": int(num("max_batch")),
    }


class Job:
    __slots__ = ("tenant", "prefill", "epoch", "gamma")

    def __init__(self, tenant, prefill, epoch, gamma):
        self.tenant, self.prefill, self.epoch, self.gamma = tenant, prefill, epoch, gamma


class Cloud:
    """One replica: a FIFO queue and a process running iterations."""

    def __init__(self, env, cfg, rng):
        self.env, self.cfg, self.rng = env, cfg, rng
        self.queue = deque()
        self.idle = None          # the event the idle process waits on
        self.tenants = []         # CloudTenant by index
        env.process(self.run())

    def submit(self, job):
        self.queue.append(job)
        if self.idle is not None and not self.idle.triggered:
            self.idle.succeed()

    def live(self, job):
        # A verify job of an ended epoch was purged (lazily: skipped here).
        return job.prefill or job.epoch == self.tenants[job.tenant].epoch

    def pick(self):
        batch, held, seen = [], [], set()
        q, cap = self.queue, self.cfg["max_batch"]
        while q and len(batch) < cap:
            job = q.popleft()
            if not self.live(job):
                continue
            if job.tenant in seen:   # one job per tenant; it holds its later ones
                held.append(job)
                continue
            seen.add(job.tenant)
            batch.append(job)
        q.extendleft(reversed(held))
        return batch

    def run(self):
        env, verify = self.env, self.cfg["verify"]
        while True:
            if not self.queue:
                self.idle = env.event()
                yield self.idle
                self.idle = None
            batch = self.pick()
            if not batch:
                continue
            yield env.timeout(verify)
            for job in batch:
                self.tenants[job.tenant].job_done(job)
            # Jobs reaching the cloud at this same instant join the next batch.
            yield env.timeout(0)


class CloudTenant:
    """The cloud's view of one tenant's request."""

    def __init__(self, cloud, edge):
        self.cloud, self.edge = cloud, edge
        self.epoch = 0
        self.committed = 0

    def prompt(self, _ev=None):
        self.committed = 0
        self.cloud.submit(Job(self.edge.index, True, self.epoch, 0))

    def block(self, epoch, gamma):
        if epoch == self.epoch:
            self.cloud.submit(Job(self.edge.index, False, epoch, gamma))

    def job_done(self, job):
        env, cfg, edge = self.cloud.env, self.cloud.cfg, self.edge
        if job.prefill:
            self.committed = 1
            edge.send_down(edge.first_msg)
            return
        if job.epoch != self.epoch:
            return   # an earlier block of the batch ended the epoch
        gamma = job.gamma
        a = 0
        rand = self.cloud.rng.random
        while a < gamma and rand() < cfg["alpha"]:
            a += 1
        if cfg["mode"] == "async":
            want, reject = (gamma, False) if a == gamma else (a + 1, True)
        else:
            want, reject = a + 1, False
        n = min(want, cfg["output"] - self.committed)
        self.committed += n
        if reject or self.committed >= cfg["output"]:
            self.epoch += 1   # purges the queued blocks (Cloud.live)
        edge.send_down(lambda _ev: edge.verdict(a, n, gamma))


class Edge:
    """One tenant's device: a closed-loop process of requests; within a
    request, sync is a plain loop and async a state machine on callbacks."""

    def __init__(self, env, cfg, index, cloud, rng, stats):
        self.env, self.cfg, self.index, self.rng, self.stats = env, cfg, index, rng, stats
        self.ct = CloudTenant(cloud, self)
        cloud.tenants.append(self.ct)
        self.epoch = 0
        env.process(self.run())

    # -- network: constant half-RTT each way, infinite rate
    def send_up(self, fn):
        self.env.timeout(self.cfg["half_rtt"]).callbacks.append(fn)

    def send_down(self, fn):
        self.env.timeout(self.cfg["half_rtt"]).callbacks.append(fn)

    def commit(self, n):
        self.committed += n
        self.stats["committed"] += n

    def first_msg(self, _ev):
        self.first.succeed()

    def run(self):
        env, cfg = self.env, self.cfg
        while True:
            yield env.timeout(self.rng.expovariate(1.0 / cfg["think"]))
            self.committed = 0
            self.first = env.event()
            self.done = env.event()
            self.send_up(self.ct.prompt)
            yield env.timeout(cfg["prefill"])
            yield self.first
            self.commit(1)
            t_first = env.now
            if cfg["mode"] == "sync":
                yield from self.sync_request()
            else:
                self.unverified = self.inflight = 0
                self.drafting, self.draft_gen = False, 0
                self.block_start()
                yield self.done
            self.stats["decode_time"] += env.now - t_first
            self.stats["decode_tokens"] += self.committed - 1

    # -- sync
    def sync_request(self):
        env, cfg = self.env, self.cfg
        gamma = cfg["gamma"]
        while self.committed < cfg["output"]:
            yield env.timeout(gamma * cfg["draft"])
            self.reply = env.event()
            epoch = self.epoch
            self.send_up(lambda _ev: self.ct.block(epoch, gamma))
            n = yield self.reply
            self.commit(n)
        self.epoch += 1

    # -- async
    def block_start(self):
        self.drafting = True
        self.draft_gen += 1
        gen = self.draft_gen
        self.env.timeout(self.cfg["gamma"] * self.cfg["draft"]).callbacks.append(
            lambda _ev: self.draft_done(gen))

    def may_draft_more(self):
        return (self.unverified < self.cfg["window"] and
                self.committed + self.inflight < self.cfg["output"])

    def draft_done(self, gen):
        if not self.drafting or gen != self.draft_gen:
            return   # abandoned by a rollback or the request's end
        self.drafting = False
        gamma, epoch = self.cfg["gamma"], self.epoch
        self.unverified += 1
        self.inflight += gamma
        self.send_up(lambda _ev: self.ct.block(epoch, gamma))
        if self.may_draft_more():
            self.block_start()

    def discard(self):
        self.unverified = self.inflight = 0
        self.drafting = False
        self.draft_gen += 1
        self.epoch += 1

    def verdict(self, a, n, gamma):
        if self.cfg["mode"] == "sync":
            self.reply.succeed(n)
            return
        self.unverified -= 1
        self.inflight -= gamma
        self.commit(n)
        if self.committed >= self.cfg["output"]:
            self.discard()
            self.done.succeed()
        elif a < gamma:
            self.discard()
            self.block_start()
        elif not self.drafting and self.may_draft_more():
            self.block_start()


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: simpy_peer.py SCENARIO.yaml")
    cfg = read_scenario(sys.argv[1])
    rng = random.Random(cfg["seed"])
    env = simpy.Environment()
    stats = {"committed": 0, "decode_time": 0.0, "decode_tokens": 0}
    cloud = Cloud(env, cfg, rng)
    for i in range(cfg["tenants"]):
        Edge(env, cfg, i, cloud, rng, stats)
    t0, c0 = time.perf_counter(), time.process_time()
    env.run(until=cfg["duration"])
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    rate = stats["decode_tokens"] / stats["decode_time"] if stats["decode_time"] > 0 else 0
    print("committed %d wall %.6f decode_rate %.6g cpu %.6f" % (stats["committed"], wall, rate, cpu))


if __name__ == "__main__":
    main()
