# Scenario keys for weight formats and engines (issue 23; docs/formats.md
# tenants.edge.quant/engine, cloud.precision/engine):
#   formats_check_roundtrip  `check` prints quant: q4f16_1, engine: mlc,
#                            precision: q4_K_M, and its output reads back to
#                            the same output;
#   formats_edge_as_step     the edge draft step `analytic` prices equals
#                            `specsim step decode --precision q4f16_1
#                            --engine mlc` at the same context, to the digit;
#   formats_cloud_as_step    the cloud's verify of gamma + 1 tokens equals
#                            `step decode --tokens 5 --precision q4_K_M
#                            --engine mlc --overhead 0.5ms`;
#   formats_engine_changes   without `engine:` the verify time is step's
#                            without --engine, and differs from it with;
#   formats_run_uses_them    `run` (sim/config/build.c) takes the same draft:
#                            its edge-only ITL is within 0.1% of step's
#                            decode time, and moves with the engine;
#   formats_bad_*            an unknown format, an unknown engine and an
#                            engine the card lacks are refused at
#                            FILE:LINE:COL naming the key, exit status 2.
. tests/cli/lib.sh

cat >"$TMP/s.yaml" <<'YAML'
protocol: {mode: sync, gamma: 4}
tenants:
  count: 1
  edge:
    device: models/hardware/jetson-orin-nano.yaml
    draft: models/llm/llama-3.2-1b.yaml
    quant: q4f16_1
    engine: mlc
  workload: {prompt_tokens: 100, output_tokens: 100}
cloud:
  gpu: models/hardware/rtx-4090.yaml
  target: models/llm/llama-3-8b.yaml
  precision: q4_K_M
  engine: mlc
YAML

# analytic's JSON value of NAME (one line of "name": value pairs).
js() { tr ',' '\n' <"$1" | awk -F': ' -v n="\"$2\"" '$1 ~ n"$" { print $2 }'; }
# Step's time_s for the rest of the arguments.
step_t() { "$SPECSIM" step decode --batch 1 "$@" >"$TMP/step" 2>"$TMP/err" && col "$TMP/step" time_s; }

if "$SPECSIM" check "$TMP/s.yaml" >"$TMP/c1" 2>"$TMP/err" &&
   grep -q '^    quant: q4f16_1$' "$TMP/c1" && grep -q '^    engine: mlc$' "$TMP/c1" &&
   grep -q '^  precision: q4_K_M$' "$TMP/c1" && grep -q '^  engine: mlc$' "$TMP/c1" &&
   "$SPECSIM" check "$TMP/c1" >"$TMP/c2" 2>>"$TMP/err" &&
   grep -v '^#' "$TMP/c1" | sed 's/ *#.*//' >"$TMP/c1s" &&
   grep -v '^#' "$TMP/c2" | sed 's/ *#.*//' >"$TMP/c2s" &&
   cmp -s "$TMP/c1s" "$TMP/c2s"; then
    pass formats_check_roundtrip
else fail formats_check_roundtrip "$(head -c 400 "$TMP/err"; diff "$TMP/c1s" "$TMP/c2s" | head -5)"; fi

"$SPECSIM" analytic "$TMP/s.yaml" --json >"$TMP/a" 2>"$TMP/err"
ctx=$(js "$TMP/a" context_tokens)
got=$(js "$TMP/a" draft_time_s)
want=$(step_t --hardware jetson-orin-nano --model llama-3.2-1b --precision q4f16_1 \
              --engine mlc --context "$ctx")
if [ -n "$got" ] && [ "$got" = "$want" ]; then pass formats_edge_as_step
else fail formats_edge_as_step "analytic $got, step $want (context $ctx)"; fi

got=$(js "$TMP/a" verify_time_s)
want=$(step_t --hardware rtx-4090 --model llama-3-8b --precision q4_K_M --engine mlc \
              --tokens 5 --context "$ctx" --overhead 0.5ms)
if [ -n "$got" ] && [ "$got" = "$want" ]; then pass formats_cloud_as_step
else fail formats_cloud_as_step "analytic $got, step $want"; fi

grep -v '^  engine: mlc$' "$TMP/s.yaml" >"$TMP/n.yaml"
"$SPECSIM" analytic "$TMP/n.yaml" --json >"$TMP/an" 2>"$TMP/err"
plain=$(js "$TMP/an" verify_time_s)
want=$(step_t --hardware rtx-4090 --model llama-3-8b --precision q4_K_M \
              --tokens 5 --context "$ctx" --overhead 0.5ms)
if [ -n "$plain" ] && [ "$plain" = "$want" ] && [ "$plain" != "$got" ]; then
    pass formats_engine_changes
else fail formats_engine_changes "no engine: analytic $plain, step $want; with mlc $got"; fi

# The simulation's own build of the edge service (edge-only: every token
# one draft step, its context growing from the prompt's 64 tokens).
edge_run() { # ENGINE_LINE
    cat <<YAML
protocol: {mode: edge-only}
replications: 1
tenants:
  count: 1
  edge:
    device: models/hardware/jetson-orin-nano.yaml
    draft: models/llm/llama-3.2-1b.yaml
    quant: q4f16_1
$1
  workload: {prompt_tokens: 64, output_tokens: 2}
YAML
}
edge_run "    engine: mlc" >"$TMP/e1.yaml"
edge_run "" >"$TMP/e0.yaml"
itl() { "$SPECSIM" run "$1" --json --quiet 2>"$TMP/err" |
        awk -F': ' '/"itl_mean_s"/ { sub(/,$/, "", $2); print $2; exit }'; }
i1=$(itl "$TMP/e1.yaml")
i0=$(itl "$TMP/e0.yaml")
s1=$(step_t --hardware jetson-orin-nano --model llama-3.2-1b --precision q4f16_1 \
            --engine mlc --context 64)
s0=$(step_t --hardware jetson-orin-nano --model llama-3.2-1b --precision q4f16_1 --context 64)
if awk -v a="$i1" -v b="$s1" -v c="$i0" -v d="$s0" 'BEGIN {
        r1 = a / b - 1; r0 = c / d - 1
        exit !(a > 0 && c > 0 && r1 < 1e-3 && r1 > -1e-3 && r0 < 1e-3 && r0 > -1e-3 &&
               (a - c) * (b - d) > 0) }'; then
    pass formats_run_uses_them
else fail formats_run_uses_them "run ITL $i1 (mlc) $i0 (none); step $s1 $s0"; fi

# Refusals: the key at FILE:LINE:COL, exit status 2, nothing on stdout.
bad() { # NAME SED KEY
    sed "$2" "$TMP/s.yaml" >"$TMP/b.yaml"
    "$SPECSIM" check "$TMP/b.yaml" >"$TMP/out" 2>"$TMP/err"
    rc=$?
    if [ "$rc" -eq 2 ] && [ ! -s "$TMP/out" ] &&
       grep -q "b.yaml:[0-9]*:[0-9]*: $3:" "$TMP/err"; then pass "$1"
    else fail "$1" "exit $rc; $(head -c 300 "$TMP/err")"; fi
}
bad formats_bad_format 's/quant: q4f16_1/quant: q5_X/' tenants.edge.quant
bad formats_bad_cloud_format 's/precision: q4_K_M/precision: q4_k_m/' cloud.precision
bad formats_bad_engine 's/    engine: mlc/    engine: vllm/' tenants.edge.engine
bad formats_bad_engine_card 's/^  engine: mlc/  engine: qnn/' cloud.engine

# cloud.kv_precision (the target's K,V cache): fp8 prices the verify as
# `step --kv-precision fp8` does, to the digit, and below fp16's; `run`
# sizes KV from it (half the bytes a cached token holds, so kv_capacity
# over the same memory fits twice the tokens: `step --batch max` doubles
# likewise, step.sh step_kv_fp8_capacity); a value it does not know, and
# fp8 over a calibration table (timed over an fp16 cache), are refused at
# the key.
# A long context, so that attention's reads pass the kernel floor.
sed 's/^  engine: mlc$/  engine: mlc\n  kv_precision: fp8/; s/prompt_tokens: 100/prompt_tokens: 16000/' \
    "$TMP/s.yaml" >"$TMP/k.yaml"
sed 's/prompt_tokens: 100/prompt_tokens: 16000/' "$TMP/s.yaml" >"$TMP/k16.yaml"
"$SPECSIM" analytic "$TMP/k.yaml" --json >"$TMP/ak" 2>"$TMP/err"
"$SPECSIM" analytic "$TMP/k16.yaml" --json >"$TMP/ak16" 2>>"$TMP/err"
kctx=$(js "$TMP/ak" context_tokens)
got8=$(js "$TMP/ak" verify_time_s)
got16=$(js "$TMP/ak16" verify_time_s)
want8=$(step_t --hardware rtx-4090 --model llama-3-8b --precision q4_K_M --engine mlc \
               --tokens 5 --context "$kctx" --overhead 0.5ms --kv-precision fp8)
if [ -n "$got8" ] && [ "$got8" = "$want8" ] &&
   awk -v a="$got8" -v b="$got16" 'BEGIN { exit !(a < b) }' &&
   "$SPECSIM" check "$TMP/k.yaml" 2>/dev/null | grep -q '^  kv_precision: fp8$'; then
    pass formats_kv_fp8_as_step
else fail formats_kv_fp8_as_step "analytic $got8, step $want8, fp16 $got16; $(head -c 200 "$TMP/err")"; fi
bad formats_bad_kv 's/^  engine: mlc$/  engine: mlc\n  kv_precision: int8/' cloud.kv_precision
bad formats_kv_fp8_table \
    's|^  engine: mlc$|  engine: mlc\n  kv_precision: fp8\n  calibration: results/calibration/nvidia-h200-llama-2-7b-fp16.yaml|' \
    cloud.calibration

# A calibration table's linear rows were timed on its precision's reference
# layout (w4a16: 4.156 bits a weight), so a weight format of other bits over
# it is refused at the table's key, as fp8 K,V is (the table's times were
# taken unchanged, the format's bits silently dropped: q4_K_M, q4_0 and
# int4-g32 priced alike); int4-g128, which is that layout, is taken.
cat >"$TMP/t.yaml" <<'YAML'
protocol: {mode: sync, gamma: 4}
tenants:
  count: 1
  edge:
    draft: models/llm/llama-2-7b.yaml
    quant: w4a16
    calibration: results/calibration/cpu-amd-epyc-llama-2-7b-w4a16.yaml
cloud:
  target: models/llm/llama-2-7b.yaml
  precision: w4a16
  calibration: results/calibration/nvidia-h200-llama-2-7b-w4a16.yaml
YAML
tbad() { # NAME SED KEY
    sed "$2" "$TMP/t.yaml" >"$TMP/b.yaml"
    "$SPECSIM" check "$TMP/b.yaml" >"$TMP/out" 2>"$TMP/err"
    rc=$?
    if [ "$rc" -eq 2 ] && [ ! -s "$TMP/out" ] &&
       grep -q "b.yaml:[0-9]*:[0-9]*: $3: .*a weight format of $4 bits uses the datasheet" "$TMP/err"
    then pass "$1"
    else fail "$1" "exit $rc; $(head -c 300 "$TMP/err")"; fi
}
tbad formats_format_table_cloud 's/precision: w4a16/precision: q4_K_M/' cloud.calibration 4.85
tbad formats_format_table_edge 's/quant: w4a16/quant: q4_0/' tenants.edge.calibration 4.5
sed 's/precision: w4a16/precision: int4-g128/; s/quant: w4a16/quant: int4-g128/' "$TMP/t.yaml" >"$TMP/g.yaml"
if "$SPECSIM" check "$TMP/g.yaml" >/dev/null 2>"$TMP/err"; then pass formats_format_table_same_layout
else fail formats_format_table_same_layout "$(head -c 300 "$TMP/err")"; fi

# With replica groups the cloud: layer holds the groups' defaults, and
# kv_precision (cloud-wide) must still load there and survive `check`'s
# write-back (a defect: the layer refused it as an unknown key).
sed 's/^cloud:$/cloud:\n  kv_precision: fp8/' scenarios/examples/hetero-replicas.yaml >"$TMP/hr.yaml"
if "$SPECSIM" check "$TMP/hr.yaml" >"$TMP/h1" 2>"$TMP/err" &&
   grep -q '^  kv_precision: fp8$' "$TMP/h1" &&
   "$SPECSIM" check "$TMP/h1" >"$TMP/h2" 2>>"$TMP/err" &&
   grep -v '^#' "$TMP/h1" | sed 's/ *#.*//' >"$TMP/h1s" &&
   grep -v '^#' "$TMP/h2" | sed 's/ *#.*//' >"$TMP/h2s" && cmp -s "$TMP/h1s" "$TMP/h2s"; then
    pass formats_kv_replica_groups_roundtrip
else fail formats_kv_replica_groups_roundtrip "$(head -c 300 "$TMP/err")"; fi
