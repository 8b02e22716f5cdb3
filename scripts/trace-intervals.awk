# trace-intervals.awk — turns a `specsim run --trace` timeline (CSV
# time,tenant,event,block,tokens) into drawable rows "t0,t1,y,kind,label".
# Each tenant has four lanes, y = 5*tenant + lane (the fifth slot is the gap
# between tenants): 0 edge drafting, 1 uplink, 2 cloud (waiting in the
# verify queue, then on the GPU), 3 downlink. Kinds:
#   1 drafting (block later sent)   2 drafting thrown away by a rollback
#   3 uplink   4 queue   5 verify   6 downlink
#   7 prefill (edge: request start to first token; GPU: the cloud prefill)
#   8 rollback (t0 = t1)            9 commit of `label` tokens (t0 = t1)
# GPU work (kinds 5 and the cloud prefill) lasts a few ms, a hairline at the
# scale of a pipeline; minw (seconds, default 0) draws it at least that wide,
# from its true start. Queue waits keep their true length: a short wait is
# meant to look short.
# Usage: awk -F, -v tmax=SECONDS [-v minw=SECONDS] -f scripts/trace-intervals.awk TRACE.csv
function out(t0, t1, y, kind, label) {
    if (t0 > tmax) return
    if (t1 > tmax) t1 = tmax
    printf "%.9f,%.9f,%d,%d,%s\n", t0, t1, y, kind, label
}
function gpu(t0, t1, y, kind) { out(t0, (t1 - t0 < minw) ? t0 + minw : t1, y, kind, "") }
BEGIN { if (tmax == "") tmax = 1e300; minw += 0 }
NR == 1 { next }
{
    t = $1 + 0; k = $2 + 0; ev = $3; b = $4; y = 5 * k
    if (ev == "request_start") req[k] = t
    else if (ev == "first_token" && (k in req)) { out(req[k], t, y, 7, ""); delete req[k] }
    else if (ev == "draft_start") { dstart[k] = t; dblock[k] = b }
    else if (ev == "block_sent") {
        if ((k in dstart) && dblock[k] == b) { out(dstart[k], t, y, 1, ""); delete dstart[k] }
        sent[k, b] = t
    }
    else if (ev == "block_arrive" || ev == "block_drop") {
        if ((k, b) in sent) { out(sent[k, b], t, y + 1, 3, ""); delete sent[k, b] }
        if (ev == "block_arrive") arrive[k, b] = t
    }
    else if (ev == "verify_start" && ((k, b) in arrive)) {
        if (t > arrive[k, b]) out(arrive[k, b], t, y + 2, 4, "")
        delete arrive[k, b]; vstart[k, b] = t
    }
    else if (ev == "verify_end") {
        if ((k, b) in vstart) { gpu(vstart[k, b], t, y + 2, 5); delete vstart[k, b] }
        # Verdicts come back in order on the downlink: queue their send times.
        n = vtail[k] + 0; vq[k, n] = t; vtail[k] = n + 1
    }
    else if (ev == "verdict_arrive") {
        n = vhead[k] + 0
        if (n < vtail[k] + 0) { out(vq[k, n], t, y + 3, 6, ""); delete vq[k, n]; vhead[k] = n + 1 }
    }
    else if (ev == "prefill_start") pstart[k] = t
    else if (ev == "prefill_done" && (k in pstart)) { gpu(pstart[k], t, y + 2, 7); delete pstart[k] }
    else if (ev == "rollback") {
        if (k in dstart) { out(dstart[k], t, y, 2, ""); delete dstart[k] }
        out(t, t, y, 8, "")
    }
    else if (ev == "commit") out(t, t, y, 9, $5)
}
