#!/bin/sh
# Tests of the figure helpers in scripts/ that compute numbers (not of how a
# figure looks): group-itl.awk on a hand-made trace against a hand count, and
# on a real run against the simulator's own ITL metrics; point-labels.awk
# merges labels closer than the gap and keeps the others.
. "$(dirname "$0")/lib.sh"

near() { # near A B RELTOL: |A - B| <= RELTOL * |B|
    awk -v a="$1" -v b="$2" -v r="$3" 'BEGIN {
        d = a - b; if (d < 0) d = -d; m = b < 0 ? -b : b; exit !(d <= r * m) }'
}
row() { grep "^$1," "$2"; }

# --- group-itl.awk by hand ----------------------------------------------
# Groups a (tenant 0) and b (tenant 1), warm-up 0.9 s. Tenant 0: first token
# at 0 s, commits of 2 tokens at 1.0 s (2 x 500 ms) and 1 token at 1.3 s
# (300 ms). Tenant 1: first token at 0.5 s, a commit at 0.8 s (before the
# warm-up: not counted, but it starts the next gap) and 1 token at 1.1 s
# (300 ms). So a: 3 tokens, mean 1300/3 ms, p50 = p99 = 500 ms; b: 1 token
# of 300 ms; all: 4 tokens, mean 400 ms, p50 300 ms (cdf 2/4 reaches 0.5).
cat >"$TMP/r.yaml" <<'EOF'
name: hand
warmup: 900ms  # s
tenants:
  count: 2
  groups:
    - name: a
      count: 1
    - name: b
      count: 1
EOF
cat >"$TMP/t.csv" <<'EOF'
time,tenant,event,block,tokens
0.0,0,first_token,-1,1
0.5,1,first_token,-1,1
0.8,1,commit,-1,2
1.0,0,commit,-1,2
1.1,1,commit,-1,1
1.3,0,commit,-1,1
EOF
if awk -F, -v out="$TMP/c.csv" -v summary="$TMP/s.csv" -f scripts/group-itl.awk \
        "$TMP/r.yaml" "$TMP/t.csv" 2>"$TMP/err"; then
    a=$(row a "$TMP/s.csv"); b=$(row b "$TMP/s.csv"); all=$(row all "$TMP/s.csv")
    IFS=, read -r _ na ta ma pa qa <<EOF
$a
EOF
    IFS=, read -r _ nb tb mb _ _ <<EOF
$b
EOF
    IFS=, read -r _ nall tall mall pall _ <<EOF
$all
EOF
    if [ "$na $ta $pa $qa $nb $tb $nall $tall" = "1 3 500.000000 500.000000 1 1 2 4" ] &&
        near "$ma" 433.333333 1e-6 && near "$mb" 300 1e-9 && near "$mall" 400 1e-9 &&
        near "$pall" 300 1e-9; then pass group_itl_hand_count
    else fail group_itl_hand_count "summary: $(cat "$TMP/s.csv")"; fi
    # The CDF of a ends at 1 and rises in order: 300 ms at 1/3, 500 ms at 1.
    if [ "$(grep '^a,' "$TMP/c.csv" | tr '\n' ' ')" = "a,300.000000,0.333333 a,500.000000,1.000000 " ]
    then pass group_itl_hand_cdf
    else fail group_itl_hand_cdf "cdf: $(cat "$TMP/c.csv")"; fi
else
    fail group_itl_hand_count "exit $?: $(cat "$TMP/err")"
fi

# A tenant outside the groups and an unreadable warm-up are refused.
printf '0.0,2,first_token,-1,1\n1.0,2,commit,-1,1\n' >>"$TMP/t.csv"
expect_exit group_itl_tenant_outside 2 awk -F, -v out="$TMP/c.csv" \
    -v summary="$TMP/s.csv" -f scripts/group-itl.awk "$TMP/r.yaml" "$TMP/t.csv"
sed 's/^warmup: .*/warmup: auto/' "$TMP/r.yaml" >"$TMP/auto.yaml"
expect_exit group_itl_warmup_auto 2 awk -F, -v out="$TMP/c.csv" \
    -v summary="$TMP/s.csv" -f scripts/group-itl.awk "$TMP/auto.yaml" "$TMP/t.csv"

# --- group-itl.awk against the simulator ----------------------------------
# Over every tenant the script must reproduce the run's own ITL: the mean
# exactly (same tokens, same gaps), p50 and p99 within the histogram's 0.5%
# (docs/metrics.md); and the groups' tokens add up to all of them.
scen=scenarios/examples/groups.yaml
if "$SPECSIM" check "$scen" --set duration=60s >"$TMP/g.yaml" 2>"$TMP/err" &&
    "$SPECSIM" run "$scen" --set duration=60s --quiet --trace "$TMP/g.csv" \
        --json >"$TMP/g.json" 2>>"$TMP/err" &&
    awk -F, -v out="$TMP/gc.csv" -v summary="$TMP/gs.csv" -f scripts/group-itl.awk \
        "$TMP/g.yaml" "$TMP/g.csv" 2>>"$TMP/err"; then
    metric() { sed -n "s/^ *\"$1\": *\([-0-9.eE+]*\),*$/\1/p" "$TMP/g.json"; }
    IFS=, read -r _ n tok mean p50 p99 <<EOF
$(row all "$TMP/gs.csv")
EOF
    sum=$(awk -F, 'NR > 1 && $1 != "all" { t += $3; n += $2 } END { print n "," t }' "$TMP/gs.csv")
    m=$(metric itl_mean_s); q50=$(metric itl_p50_s); q99=$(metric itl_p99_s)
    if near "$mean" "$(awk -v v="$m" 'BEGIN { printf "%.9f", v * 1e3 }')" 1e-6 &&
        near "$p50" "$(awk -v v="$q50" 'BEGIN { printf "%.9f", v * 1e3 }')" 0.0051 &&
        near "$p99" "$(awk -v v="$q99" 'BEGIN { printf "%.9f", v * 1e3 }')" 0.0051 &&
        [ "$sum" = "$n,$tok" ] && [ "$n" = 11 ]
    then pass group_itl_matches_run
    else fail group_itl_matches_run "all: $n $tok $mean $p50 $p99; groups: $sum;" \
        "run: $m $q50 $q99"; fi
    # A simulator that reports each group's metrics in --json ("groups")
    # must agree with the trace-derived mean of every group.
    # (Exit 3: this simulator has no "groups" object, nothing to compare.)
    if command -v python3 >/dev/null 2>&1; then
        python3 - "$TMP/g.json" "$TMP/gs.csv" <<'PY'
import csv, json, sys
doc = json.load(open(sys.argv[1]))
if not isinstance(doc.get("groups"), dict):
    sys.exit(3)
groups = doc["groups"]
rows = {r["group"]: r for r in csv.DictReader(open(sys.argv[2])) if r["group"] != "all"}
assert set(rows) == set(groups), (set(rows), set(groups))
for name, m in groups.items():
    got, want = float(rows[name]["itl_mean_ms"]), m["itl_mean_s"] * 1e3
    assert abs(got - want) <= 1e-6 * want, (name, got, want)
PY
        case $? in
        0) pass group_itl_matches_groups_json ;;
        3) ;;
        *) fail group_itl_matches_groups_json ;;
        esac
    fi
else
    fail group_itl_matches_run "$(cat "$TMP/err")"
fi

# --- thermal-itl.awk by hand -----------------------------------------------
# Bins of 10 s. Bin 0: 2 tokens 5 s after the first token (2500 ms each);
# a throttle row to half speed at 12 s; bin 1: 1 token after 10 s and 2
# after 3 s, 13 s over 3 tokens (4333.333 ms), at speed 0.5.
printf 'time,tenant,event,block,tokens\n0.0,0,first_token,-1,1\n5.0,0,commit,-1,2\n12.0,0,throttle,1,500\n15.0,0,commit,-1,1\n18.0,0,commit,-1,2\n' >"$TMP/th.csv"
got=$(awk -F, -v bin=10 -f scripts/thermal-itl.awk "$TMP/th.csv" | tr '\n' ' ')
if [ "$got" = "t_min,itl_ms,speed 0.083333,2500.000000,1 0.250000,4333.333333,0.5 " ]
then pass thermal_itl_hand_count
else fail thermal_itl_hand_count "got: $got"; fi
# The same in seconds (unit=s, fallback-itl.gp): the bins' middles 5 s, 15 s.
got=$(awk -F, -v bin=10 -v unit=s -f scripts/thermal-itl.awk "$TMP/th.csv" | tr '\n' ' ')
if [ "$got" = "t_s,itl_ms,speed 5.000000,2500.000000,1 15.000000,4333.333333,0.5 " ]
then pass thermal_itl_seconds
else fail thermal_itl_seconds "got: $got"; fi

# --- point-labels.awk -----------------------------------------------------
# On a 0..10 x 0..10 panel with gap 0.1: (1,1) (1.5,1) (1.5,1.5) are within
# 0.1 of the first and share "a–c"; (5,5) and (9,9) get their own labels.
printf 'm,x,y,l\nk,1,1,a\nk,1.5,1,b\nk,1.5,1.5,c\nk,5,5,d\nj,6,6,z\nk,9,9,e\n' >"$TMP/p.csv"
got=$(awk -F, -v sel=m -v val=k -v xcol=x -v ycol=y -v lcol=l -v x0=0 -v x1=10 \
    -v y0=0 -v y1=10 -v gap=0.1 -f scripts/point-labels.awk "$TMP/p.csv" | tr '\n' ' ')
if [ "$got" = "1,1,a–c 5,5,d 9,9,e " ]; then pass point_labels_merge
else fail point_labels_merge "got: $got"; fi
got=$(awk -F, -v sel=m -v val=k -v xcol=x -v ycol=y -v lcol=l -v x0=0 -v x1=10 \
    -v y0=0 -v y1=10 -v gap=0.1 -v at=xmax -f scripts/point-labels.awk "$TMP/p.csv" | head -n 1)
if [ "$got" = "1.5,1,a–c" ]; then pass point_labels_at_xmax
else fail point_labels_at_xmax "got: $got"; fi

# --- the sweeps of gamma-policy-rtt.gp and order-slo.gp --------------------
# Short runs of the paper sweeps: the CSV must have every column the script
# reads, and the points by hand count: 3 policies x 3 gammas x 16 RTTs (10 to
# 310 ms by 20), of which each plotted series (fixed at 4 and 8, rtt and
# goodput at 10) has 16; 5 orders x 11 batch-group sizes (4 to 84 by 8).
# sweep_cols NAME SCENARIO COLUMN...: runs the short sweep into $TMP/NAME.csv
# and prints the columns missing from its header.
sweep_cols() {
    name=$1 scen=$2; shift 2
    "$SPECSIM" sweep "$scen" --set duration=3s --set warmup=1s --set replications=2 \
        -j 1 --force --quiet --out "$TMP/$name.csv" 2>"$TMP/err" || { echo "exit $?"; return; }
    for c in "$@"; do
        head -n 1 "$TMP/$name.csv" | tr , '\n' | grep -qx "$c" || printf '%s ' "$c"
    done
}
# series CSV POLICY GAMMA: rows of that policy and gamma (columns 2 and 3).
series() { awk -F, -v p="$2" -v g="$3" 'NR > 1 && $2 == p && $3 == g' "$1" | wc -l; }
miss=$(sweep_cols gp scenarios/paper/gamma-policy-rtt.yaml protocol.gamma_policy \
    protocol.gamma tenants.network.rtt itl_mean_s itl_mean_s_ci95)
n="$(($(wc -l <"$TMP/gp.csv") - 1)) $(series "$TMP/gp.csv" fixed 4) \
$(series "$TMP/gp.csv" fixed 8) $(series "$TMP/gp.csv" rtt 10) $(series "$TMP/gp.csv" goodput 10)"
if [ -z "$miss" ] && [ "$n" = "144 16 16 16 16" ]; then pass gamma_policy_rtt_sweep
else fail gamma_policy_rtt_sweep "missing: $miss; points: $n; $(head -c 400 "$TMP/err")"; fi
miss=$(sweep_cols os scenarios/paper/order-slo.yaml cloud.batching.order \
    tenants.groups.batch.count slo_attainment slo_attainment_ci95)
n=$(awk -F, 'NR > 1 { n[$2]++ } END { for (o in n) print o, n[o] }' "$TMP/os.csv" | sort | tr '\n' ' ')
if [ -z "$miss" ] && [ "$n" = "edf 11 fair 11 fcfs 11 least-slack 11 priority 11 " ]
then pass order_slo_sweep
else fail order_slo_sweep "missing: $miss; points: $n; $(head -c 400 "$TMP/err")"; fi

# --- edge-vs-cloud.awk by hand ----------------------------------------------
# Two edge variants (a, b) and one cloud variant (x) at 2 points. ITL at 1
# tenant: x wins, best edge a 0.020 / 0.010 = 2; at 8: b 0.028 against x
# 0.0285, closer than the CIs (0.001 + 0.001): b wins but a tie. GPU-s at 1
# tenant: b 0.8 / 2.0 = 0.4, beyond the CIs; $ at 1 tenant: x wins, 5 / 4.
h=point,tenants.network.rtt,tenants.count,itl_mean_s,itl_mean_s_ci95,gpu_s_per_ktok,gpu_s_per_ktok_ci95,usd_per_mtok,usd_per_mtok_ci95
printf '%s\n0,10ms,1,0.020,0.001,1.0,0.1,5,0.1\n1,10ms,8,0.030,0.001,0.5,0.01,1,0.01\n' "$h" >"$TMP/ea.csv"
printf '%s\n0,10ms,1,0.025,0.001,0.8,0.1,6,0.1\n1,10ms,8,0.028,0.001,0.55,0.01,1.1,0.01\n' "$h" >"$TMP/eb.csv"
printf '%s\n0,10ms,1,0.010,0.001,2.0,0.1,4,0.1\n1,10ms,8,0.0285,0.001,0.6,0.01,1.2,0.01\n' "$h" >"$TMP/cx.csv"
evc() { awk -F, -f scripts/edge-vs-cloud.awk "$@"; }
got=$(evc v=edge-a "$TMP/ea.csv" v=edge-b "$TMP/eb.csv" v=cloud-x "$TMP/cx.csv" 2>"$TMP/err" |
    grep -E '^(itl_mean_s|gpu_s_per_ktok,10ms,1,|usd_per_mtok,10ms,1,)' | tr '\n' ' ')
want="itl_mean_s,10ms,1,1,1,cloud-x,3,0.02,0.01,2.0000,0 itl_mean_s,10ms,8,1,2,edge-b,2,0.028,0.0285,0.9825,1 \
gpu_s_per_ktok,10ms,1,1,1,edge-b,2,0.8,2,0.4000,0 usd_per_mtok,10ms,1,1,1,cloud-x,3,5,4,1.2500,0 "
if [ "$got" = "$want" ]; then pass edge_vs_cloud_hand_count
else fail edge_vs_cloud_hand_count "got: $got; $(cat "$TMP/err")"; fi
# A point missing from one file, an empty value (usd_per_mtok without
# cloud.gpu_hour_usd) and no cloud variant are refused, with nothing printed.
head -n 2 "$TMP/cx.csv" >"$TMP/cx1.csv"
sed 's/,1\.2,0\.01$/,,/' "$TMP/cx.csv" >"$TMP/cxe.csv"
for c in "cx1:v=edge-a $TMP/ea.csv v=cloud-x $TMP/cx1.csv" \
         "cxe:v=edge-a $TMP/ea.csv v=cloud-x $TMP/cxe.csv" \
         "edge:v=edge-a $TMP/ea.csv v=edge-b $TMP/eb.csv"; do
    # shellcheck disable=SC2086 # the arguments are split on purpose
    out=$(evc ${c#*:} 2>/dev/null); rc=$?
    if [ "$rc" = 2 ] && [ -z "$out" ]; then pass "edge_vs_cloud_refuses_${c%%:*}"
    else fail "edge_vs_cloud_refuses_${c%%:*}" "exit $rc, printed: $out"; fi
done

# --- the edge-vs-cloud sweep ------------------------------------------------
# A short run of the paper sweep (as edge-chain): every column the awk reads,
# 6 RTTs x 8 tenant counts, and a usd_per_mtok in every row (the scenario
# prices the GPU, so the figure's panel (c) is not empty).
miss=$(sweep_cols evc scenarios/paper/edge-vs-cloud.yaml tenants.network.rtt tenants.count \
    itl_mean_s itl_mean_s_ci95 gpu_s_per_ktok gpu_s_per_ktok_ci95 usd_per_mtok usd_per_mtok_ci95)
n=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "usd_per_mtok") c = i; next }
    $c != "" && $c + 0 > 0 { k++ } END { print NR - 1, k + 0 }' "$TMP/evc.csv")
if [ -z "$miss" ] && [ "$n" = "48 48" ]; then pass edge_vs_cloud_sweep
else fail edge_vs_cloud_sweep "missing: $miss; points, priced: $n; $(head -c 400 "$TMP/err")"; fi
