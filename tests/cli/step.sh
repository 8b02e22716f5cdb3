# `specsim step` (sim/run/step.h) and scripts/validate-published.sh:
#   step_decode_by_hand     a decode step of a toy model on a toy card is the
#                           roofline written out here, operator by operator,
#                           from the two cards' numbers; so are its weight
#                           bytes;
#   step_verify_by_hand     the same for B jobs of Q new tokens (--tokens), and
#                           --tokens 1 is the plain decode step;
#   step_linear_by_hand     one linear layer (step linear), with and without
#                           roofline_p 2 and a kernel floor;
#   step_prefill_by_hand    the same for a compute-bound prefill (lm_head
#                           over the last token only);
#   step_prefill_one_is_decode  a 1-token prefill is a decode step at context 0;
#   step_decode_context     a step over more context, or of more jobs, is
#                           longer;
#   step_batch_sum          a static batch run is its prefill plus G - 1
#                           decode steps (G = 2, 3 summed here), with
#                           itl_s, output_tok_s and seq_tok_s as defined;
#   step_kv_fp8_by_hand     --kv-precision fp8 halves exactly the K,V bytes
#                           attention reads (the hand roofline at 1 byte an
#                           element), nothing else; fp16 is the default;
#   step_kv_fp8_capacity    and halves the K,V a cached token holds, so
#                           --batch max doubles as written out here;
#   step_tp_halves          TP = 2 reads half the weights and K,V per GPU and
#                           adds the ring all-reduces written out here;
#   step_batch_max          --batch max is the largest batch whose K,V fits
#                           the memory the weights leave: one more does not;
#   step_fits               70B fp16 weights do not fit one 80GB card;
#   step_engine_flops       an engine set's own compute rate (engines.E.flops)
#                           times the efficiency in force is a compute-bound
#                           layer's rate exactly, at fp16 and w4a16;
#   step_bare_names         a bare card name is its file under models/, from
#                           any directory;
#   step_bad_*              bad usage exits 2 with a message naming the option;
#   step_quiet, step_help   --quiet changes nothing; --help names every option;
#   validate_*              the script prints one table row per CSV row
#                           (no card rows included and counted) and the
#                           summary, from another directory, and computes the
#                           error and speed ratio of a row as defined.
# $cards and $(hand ...) are lists of words, split on purpose.
# shellcheck disable=SC2086,SC2046
. tests/cli/lib.sh

# A toy card and model, so that the arithmetic below depends on nothing
# shipped: 1000 GB/s x 0.5, 100 TFLOP/s x 0.5; 2 layers, hidden 256, 4
# heads of 64, 2 KV heads, gated ffn 512, vocab 1000.
cat >"$TMP/hw.yaml" <<'EOF'
name: toy-gpu
kind: gpu
source: "tests/cli/step.sh"
mem: 10MB
mem_bw: 1000GB/s
flops:
  fp32: 10TFLOPS
  fp16: 100TFLOPS
bw_eff: 0.5
flops_eff: 0.5
interconnect_bw: 100GB/s
interconnect_latency: 10us
EOF
cat >"$TMP/llm.yaml" <<'EOF'
name: toy-llm
source: "tests/cli/step.sh"
layers: 2
hidden: 256
heads: 4
kv_heads: 2
ffn: 512
vocab: 1000
gated_mlp: true
EOF
cards="--hardware $TMP/hw.yaml --model $TMP/llm.yaml"

# col FILE NAME: the value of column NAME in a one-row CSV.
col() { awk -F, -v col="$2" -f scripts/csvcol.awk "$1"; }
# same A B: |A - B| <= 1e-9 |B|
same() { awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d
                                          exit !(d <= 1e-9 * (b < 0 ? -b : b)) }'; }
step() { "$SPECSIM" step "$@" >"$TMP/out" 2>"$TMP/err"; }

# The roofline by hand: per op max(flops / rate, bytes / bandwidth), bytes =
# fp16 weights + activations in and out. m tokens through the linear layers,
# h rows through lm_head, b jobs of q tokens over c cached; e bytes per K or
# V element (2, fp16, unless given). Prints the time, the weight bytes and
# the K,V bytes.
hand() {
    awk -v m="$1" -v h="$2" -v b="$3" -v q="$4" -v c="$5" -v e="${6:-2}" 'BEGIN {
        bw = 1000e9 * 0.5; rate = 100e12 * 0.5
        layers = 2; d = 256; hd = 256 / 4; kvh = 2; ffn = 512; vocab = 1000
        n[1] = (4 + 2 * kvh) * hd; k[1] = d     # qkv
        n[2] = d;                  k[2] = d     # o
        n[3] = 2 * ffn;            k[3] = d     # gate_up
        n[4] = d;                  k[4] = ffn   # down
        t = 0; w = 0
        for (i = 1; i <= 4; i++) { t += layers * lin(m, n[i], k[i]); w += layers * 2 * n[i] * k[i] }
        t += lin(h, vocab, d); w += 2 * vocab * d
        # Attention, one kernel over the batch, every layer; causal: each new
        # token attends to the c cached and on average half of the q new.
        fl = layers * b * 4 * q * (c + q / 2) * d
        by = layers * b * 2 * (c + q) * kvh * hd * e
        t += max(fl / rate, by / bw)
        printf "%.17g %.17g %.17g\n", t, w, by
    }
    function max(a, b) { return a > b ? a : b }
    function lin(m, n, k) { return max(2 * m * n * k / rate, (2 * n * k + 2 * m * (n + k)) / bw) }'
}

# --- by hand ----------------------------------------------------------------
set -- $(hand 1 1 1 1 0)
if step decode $cards && same "$(col "$TMP/out" time_s)" "$1" &&
   same "$(col "$TMP/out" weight_bytes)" "$2" && [ "$(col "$TMP/out" allreduce_s)" = 0 ]; then
    pass step_decode_by_hand
else fail step_decode_by_hand "want time_s $1 weight_bytes $2; got $(cat "$TMP/out" "$TMP/err")"; fi
cp "$TMP/out" "$TMP/decode0"

# A verification iteration: B jobs of Q new tokens, every token with logits.
set -- $(hand 12 12 3 4 100)
if step decode $cards --batch 3 --tokens 4 --context 100 &&
   same "$(col "$TMP/out" time_s)" "$1" && [ "$(col "$TMP/out" tokens)" = 4 ] &&
   step decode $cards --tokens 1 && cmp -s "$TMP/out" "$TMP/decode0"; then
    pass step_verify_by_hand
else fail step_verify_by_hand "want time_s $1; got $(cat "$TMP/out" "$TMP/err")"; fi

# An fp8 K,V cache: the same verification iteration with attention's K,V
# at 1 byte an element: 2 layers x 3 jobs x 2 (K and V) x 104 tokens x 2
# heads x 64 x 1 B = 159744 B, half of fp16's 319488, still memory-bound
# (159744 B / 500 GB/s = 0.32 us against 2.5 MFLOP / 50 TFLOP/s = 0.05 us);
# the weights and FLOPs do not change, and fp16 is the default.
set -- $(hand 12 12 3 4 100 1) $(hand 12 12 3 4 100 2)
if [ "$3" = 159744 ] && [ "$6" = 319488 ] &&
   step decode $cards --batch 3 --tokens 4 --context 100 && cp "$TMP/out" "$TMP/kv16" &&
   step decode $cards --batch 3 --tokens 4 --context 100 --kv-precision fp16 &&
   cmp -s "$TMP/out" "$TMP/kv16" &&
   step decode $cards --batch 3 --tokens 4 --context 100 --kv-precision fp8 &&
   same "$(col "$TMP/out" time_s)" "$1" && same "$(col "$TMP/out" kv_bytes)" "$3" &&
   same "$(col "$TMP/kv16" kv_bytes)" "$6" &&
   [ "$(col "$TMP/out" weight_bytes)" = "$(col "$TMP/kv16" weight_bytes)" ] &&
   [ "$(col "$TMP/out" flops)" = "$(col "$TMP/kv16" flops)" ] &&
   awk -v a="$(col "$TMP/out" time_s)" -v b="$(col "$TMP/kv16" time_s)" 'BEGIN { exit !(a < b) }'; then
    pass step_kv_fp8_by_hand
else fail step_kv_fp8_by_hand "want time_s $1 kv_bytes $3; got $(cat "$TMP/out" "$TMP/err"); fp16: $(cat "$TMP/kv16")"; fi

# One linear layer (gate_up: n = 2 x 512, k = 256) at M = 7: the plain
# maximum on the toy card; on a card with roofline_p 2 and a kernel floor,
# sqrt(memory^2 + compute^2), at least the floor.
linhand() {
    awk -v m="$1" -v p="$2" -v fl="$3" 'BEGIN { n = 1024; k = 256
        a = (2 * n * k + 2 * m * (n + k)) / (1000e9 * 0.5); b = 2 * m * n * k / (100e12 * 0.5)
        t = p == 2 ? sqrt(a * a + b * b) : (a > b ? a : b); if (t < fl) t = fl
        printf "%.17g %.17g %.17g\n", t, a, b }'
}
sed 's/^flops_eff: 0.5$/flops_eff: 0.5\nroofline_p: 2\nkernel_floor: 10us/' "$TMP/hw.yaml" >"$TMP/hw2.yaml"
set -- $(linhand 7 0 0) $(linhand 7 2 10e-6) $(linhand 3000 2 10e-6)
if step linear $cards --op gate_up --tokens 7 && same "$(col "$TMP/out" time_s)" "$1" &&
   same "$(col "$TMP/out" memory_s)" "$2" && same "$(col "$TMP/out" compute_s)" "$3" &&
   [ "$(col "$TMP/out" n)x$(col "$TMP/out" k)" = 1024x256 ] &&
   step linear --hardware "$TMP/hw2.yaml" --model "$TMP/llm.yaml" --op gate_up --tokens 7 &&
   same "$(col "$TMP/out" time_s)" "$4" &&
   step linear --hardware "$TMP/hw2.yaml" --model "$TMP/llm.yaml" --op gate_up --tokens 3000 &&
   same "$(col "$TMP/out" time_s)" "$7"; then
    pass step_linear_by_hand
else fail step_linear_by_hand "want $*; got $(cat "$TMP/out" "$TMP/err")"; fi

set -- $(hand 4096 1 1 4096 0)
if step prefill $cards --prompt 4096 && same "$(col "$TMP/out" time_s)" "$1" &&
   same "$(col "$TMP/out" tok_s)" "$(awk -v t="$1" 'BEGIN { printf "%.17g", 4096 / t }')"; then
    pass step_prefill_by_hand
else fail step_prefill_by_hand "want time_s $1; got $(cat "$TMP/out" "$TMP/err")"; fi

# --- named weight formats ----------------------------------------------------
# A format computes at its precision and reads its own bits per weight: the
# weights read are the fp16 ones x bits / 16 (q4_0: 4.5 bits, q4_K_M 4.85,
# q8_0 8.5), and w4a16 is the reference g128 layout, 4 + 20/128 bits.
w16=$(col "$TMP/decode0" weight_bytes)
ok=1
for fb in q4_0:4.5 q4_K_M:4.85 q8_0:8.5 int4-g128:4.15625 w4a16:4.15625; do
    f=${fb%%:*} b=${fb#*:}
    if step decode $cards --precision "$f" &&
       same "$(col "$TMP/out" weight_bytes)" "$(awk -v w="$w16" -v b="$b" 'BEGIN { printf "%.17g", w * b / 16 }')"; then :
    else ok=0; echo "$f: want $w16 x $b / 16; got $(cat "$TMP/out" "$TMP/err")"; fi
done
[ $ok = 1 ] && pass step_weight_formats || fail step_weight_formats "see above"

# --- engine efficiency sets --------------------------------------------------
# --engine E replaces the card's efficiencies by engines.E where it gives
# them: a w4a16 bandwidth twice the card's halves a memory-bound step's
# weight time; an engine the card does not give, or no such engine, is an
# input error about --engine.
cp "$TMP/hw.yaml" "$TMP/hw-eng.yaml"
cat >>"$TMP/hw-eng.yaml" <<'EOF'
bw_eff_by_precision:
  w4a16: 0.25
engines:
  mlc:
    bw_eff_by_precision:
      w4a16: 0.5
  llamacpp_cpu:
    bw_eff: 0.4
EOF
engcards="--hardware $TMP/hw-eng.yaml --model $TMP/llm.yaml"
# One linear layer's memory time is its bytes over the bandwidth in force,
# exactly: the card's w4a16 entry (0.25), mlc's own entry (0.5), and
# llamacpp_cpu's plain bw_eff (0.4), which stands for w4a16 too instead of
# the card's entry.
okeng=1
for e in -:0.25 mlc:0.5 llamacpp_cpu:0.4; do
    name=${e%%:*} eff=${e#*:}
    if [ "$name" = - ]; then set --; else set -- --engine "$name"; fi
    if step linear $engcards --precision w4a16 --op gate_up --tokens 1 "$@" &&
       same "$(col "$TMP/out" memory_s)" "$(awk -v b="$(col "$TMP/out" bytes)" -v e="$eff" \
           'BEGIN { printf "%.17g", b / (1000e9 * e) }')"; then :
    else okeng=0; echo "engine $name: want bw_eff $eff; got $(cat "$TMP/out" "$TMP/err")"; fi
done
[ $okeng = 1 ] && pass step_engine_exact || fail step_engine_exact "see above"
if step decode $engcards --precision w4a16 && m0=$(col "$TMP/out" memory_s) &&
   step decode $engcards --precision w4a16 --engine mlc && m1=$(col "$TMP/out" memory_s) &&
   awk -v a="$m0" -v b="$m1" 'BEGIN { exit !(b < a && b > a / 2.5) }'; then
    pass step_engine
else fail step_engine "memory_s without $m0, with --engine mlc $m1: $(cat "$TMP/err")"; fi

# An engine's own compute unit (engines.E.flops: QNN on a phone's NPU):
# a compute-bound linear layer's compute time is its FLOPs over that rate
# times the efficiency in force, exactly, at fp16 and at w4a16 (which
# computes in fp16); without --engine the card's rate; a set that gives
# only flops is a set.
cp "$TMP/hw.yaml" "$TMP/hw-npu.yaml"
printf 'engines:\n  qnn:\n    flops:\n      fp16: 400TFLOPS\n' >>"$TMP/hw-npu.yaml"
npucards="--hardware $TMP/hw-npu.yaml --model $TMP/llm.yaml"
oknpu=1
for e in -:100e12:fp16 qnn:400e12:fp16 qnn:400e12:w4a16; do
    name=${e%%:*} rest=${e#*:}; rate=${rest%%:*} prec=${rest#*:}
    if [ "$name" = - ]; then set --; else set -- --engine "$name"; fi
    if step linear $npucards --precision "$prec" --op gate_up --tokens 4096 "$@" &&
       same "$(col "$TMP/out" compute_s)" "$(awk -v f="$(col "$TMP/out" flops)" -v r="$rate" \
           'BEGIN { printf "%.17g", f / (r * 0.5) }')"; then :
    else oknpu=0; echo "engine $name $prec: want $rate FLOP/s x 0.5; got $(cat "$TMP/out" "$TMP/err")"; fi
done
[ $oknpu = 1 ] && pass step_engine_flops || fail step_engine_flops "see above"

# --- relations between the modes -------------------------------------------
if step prefill $cards --prompt 1 &&
   [ "$(col "$TMP/out" time_s)" = "$(col "$TMP/decode0" time_s)" ]; then
    pass step_prefill_one_is_decode
else fail step_prefill_one_is_decode "$(cat "$TMP/out" "$TMP/decode0" "$TMP/err")"; fi

step decode $cards --context 4096 && t_ctx=$(col "$TMP/out" time_s)
step decode $cards --batch 8 && t_b8=$(col "$TMP/out" time_s)
t0=$(col "$TMP/decode0" time_s)
if awk -v a="${t_ctx:-0}" -v b="${t_b8:-0}" -v z="$t0" 'BEGIN { exit !(a > z && b > z) }'; then
    pass step_decode_context
else fail step_decode_context "context 4096: $t_ctx, batch 8: $t_b8, one job at 0: $t0"; fi

# A run of G = 3: prefill of 4 x 100, then steps over 100 and 101 cached.
step prefill $cards --batch 4 --prompt 100 --overhead 0.5ms && p=$(col "$TMP/out" time_s)
step decode $cards --batch 4 --context 100 --overhead 0.5ms && d1=$(col "$TMP/out" time_s)
step decode $cards --batch 4 --context 101 --overhead 0.5ms && d2=$(col "$TMP/out" time_s)
step batch $cards --batch 4 --prompt 100 --generate 3 --overhead 0.5ms
cp "$TMP/out" "$TMP/run"
step batch $cards --batch 4 --prompt 100 --generate 1 --overhead 0.5ms
if same "$(col "$TMP/run" prefill_s)" "$p" && same "$(col "$TMP/run" decode_s)" "$(echo "$d1 $d2" | awk '{ printf "%.17g", $1 + $2 }')" &&
   same "$(col "$TMP/run" total_s)" "$(echo "$p $d1 $d2" | awk '{ printf "%.17g", $1 + $2 + $3 }')" &&
   same "$(col "$TMP/run" itl_s)" "$(echo "$d1 $d2" | awk '{ printf "%.17g", ($1 + $2) / 2 }')" &&
   same "$(col "$TMP/run" output_tok_s)" "$(col "$TMP/run" total_s | awk '{ printf "%.17g", 12 / $1 }')" &&
   same "$(col "$TMP/run" seq_tok_s)" "$(col "$TMP/run" total_s | awk '{ printf "%.17g", 3 / $1 }')" &&
   same "$(col "$TMP/out" total_s)" "$p" && [ "$(col "$TMP/out" itl_s)" = 0 ]; then
    pass step_batch_sum
else fail step_batch_sum "prefill $p, steps $d1 $d2; run: $(cat "$TMP/run"); G = 1: $(cat "$TMP/out" "$TMP/err")"; fi

# --- tensor parallelism -----------------------------------------------------
# Two ring all-reduces a layer of one token's 256 fp16 activations:
# 2 layers x 2 x (2 (2-1)/2 x 512 B / 100 GB/s + 10 us).
step decode $cards --tp 2 --context 10 && cp "$TMP/out" "$TMP/tp2"
step decode $cards --context 10
ar=$(awk 'BEGIN { printf "%.17g", 2 * 2 * (1 * 256 * 2 / 100e9 + 10e-6) }')
if same "$(col "$TMP/tp2" weight_bytes)" "$(col "$TMP/out" weight_bytes | awk '{ printf "%.17g", $1 / 2 }')" &&
   same "$(col "$TMP/tp2" kv_bytes)" "$(col "$TMP/out" kv_bytes | awk '{ printf "%.17g", $1 / 2 }')" &&
   same "$(col "$TMP/tp2" allreduce_s)" "$ar"; then
    pass step_tp_halves
else fail step_tp_halves "tp 2: $(cat "$TMP/tp2"); tp 1: $(cat "$TMP/out" "$TMP/err"); all-reduces $ar"; fi

# --- memory -----------------------------------------------------------------
# Weights: 2871296 B of layers and lm_head + 512000 B of fp16 embeddings;
# K,V: 2 layers x 2 x 2 heads x 64 x 2 B = 1024 B a token. 10 MB left to
# jobs of 10 + 10 tokens: (10e6 - 3383296) / 20480 = 323.08.
step batch $cards --batch max --prompt 10 --generate 10 && cp "$TMP/out" "$TMP/max"
step batch $cards --batch 324 --prompt 10 --generate 10
if [ "$(col "$TMP/max" batch)" = 323 ] && [ "$(col "$TMP/max" fits)" = 1 ] &&
   [ "$(col "$TMP/out" fits)" = 0 ]; then
    pass step_batch_max
else fail step_batch_max "max: $(cat "$TMP/max"); 324: $(cat "$TMP/out" "$TMP/err")"; fi
# With an fp8 K,V cache a token holds 512 B: (10e6 - 3383296) / 10240 =
# 646.16 jobs.
step batch $cards --batch max --prompt 10 --generate 10 --kv-precision fp8 && cp "$TMP/out" "$TMP/max"
step batch $cards --batch 647 --prompt 10 --generate 10 --kv-precision fp8
if [ "$(col "$TMP/max" batch)" = 646 ] && [ "$(col "$TMP/max" fits)" = 1 ] &&
   [ "$(col "$TMP/out" fits)" = 0 ]; then
    pass step_kv_fp8_capacity
else fail step_kv_fp8_capacity "max: $(cat "$TMP/max"); 647: $(cat "$TMP/out" "$TMP/err")"; fi

if step decode --hardware a100-80g --model llama-2-70b && [ "$(col "$TMP/out" fits)" = 0 ] &&
   step decode --hardware a100-80g --model llama-2-70b --tp 2 && [ "$(col "$TMP/out" fits)" = 1 ]; then
    pass step_fits
else fail step_fits "$(cat "$TMP/out" "$TMP/err")"; fi

# --- cards by name, from anywhere --------------------------------------------
here=$(pwd)
if (cd "$TMP" && "$here/$SPECSIM" step decode --hardware h100-sxm --model llama-2-7b >"$TMP/a") 2>"$TMP/err" &&
   step decode --hardware models/hardware/h100-sxm.yaml --model models/llm/llama-2-7b.yaml &&
   cmp -s "$TMP/a" "$TMP/out"; then
    pass step_bare_names
else fail step_bare_names "$(cat "$TMP/a" "$TMP/out" "$TMP/err")"; fi

# --- bad usage --------------------------------------------------------------
# bad NAME 'message' ARGS...: exit 2, and stderr holds the message.
bad() {
    name=$1 msg=$2; shift 2
    "$SPECSIM" step "$@" >"$TMP/out" 2>"$TMP/err"
    rc=$?
    if [ "$rc" -eq 2 ] && grep -qF -- "$msg" "$TMP/err" && [ ! -s "$TMP/out" ]; then pass "step_bad_$name"
    else fail "step_bad_$name" "exit $rc, want 2 and '$msg'; stderr: $(head -c 300 "$TMP/err")"; fi
}
bad no_mode "no mode given" $cards
bad mode "unknown mode 'verify'" verify $cards
bad linear_no_op "linear needs --op NAME and --tokens M" linear $cards --tokens 4
bad linear_no_tokens "linear needs --op NAME and --tokens M" linear $cards --op o
bad linear_op "unknown operator 'ffn'" linear $cards --op ffn --tokens 4
bad linear_batch "--batch does not go with linear" linear $cards --op o --tokens 4 --batch 2
bad op_decode "--op does not go with decode" decode $cards --op o
bad tokens_prefill "--tokens does not go with prefill" prefill $cards --prompt 4 --tokens 2
bad tokens_zero "--tokens needs an integer from 1" decode $cards --tokens 0
bad linear_overhead "--overhead does not go with linear" linear $cards --op o --tokens 4 --overhead 1ms
bad linear_kv_precision "--kv-precision does not go with linear" linear $cards --op o --tokens 4 --kv-precision fp8
bad two_modes "more than one mode given ('prefill')" decode prefill $cards
bad no_hardware "no --hardware CARD given" decode --model "$TMP/llm.yaml"
bad no_model "no --model CARD given" decode --hardware "$TMP/hw.yaml"
bad hardware_missing "--hardware: no hardware card 'nope'" decode --hardware nope --model "$TMP/llm.yaml"
bad hardware_is_model "--hardware: $TMP/llm.yaml" decode --hardware "$TMP/llm.yaml" --model "$TMP/llm.yaml"
bad model_missing "--model: no model card 'nope.yaml'" decode --hardware "$TMP/hw.yaml" --model nope.yaml
bad precision "--precision: unknown precision 'fp4'" decode $cards --precision fp4
bad precision_no_path "--precision: hardware card 'toy-gpu': no peak FLOP/s for fp8" decode $cards --precision fp8
bad kv_precision "--kv-precision: unknown KV-cache precision 'int8' (fp16 or fp8)" decode $cards --kv-precision int8
bad kv_precision_empty "option '--kv-precision' needs a non-empty value" decode $cards --kv-precision ''
bad engine_unknown "--engine: unknown engine 'tvm'" decode $cards --engine tvm
bad engine_not_on_card "--engine: hardware card 'toy-gpu' gives no engines.qnn" decode $cards --engine qnn
# --batch max that reaches step's largest batch (1048576 jobs: a tiny
# model's K,V leaves room for more on an H200) says it is capped, not found.
if "$SPECSIM" step batch --hardware h200 --model smollm2-135m --batch max --prompt 1 \
       --generate 1 >"$TMP/out" 2>"$TMP/err" && [ "$(col "$TMP/out" batch)" = 1048576 ] &&
   grep -q "warning: --batch max: 1048576 jobs or more fit; the batch is capped" "$TMP/err"
then pass step_batch_max_capped_warned
else fail step_batch_max_capped_warned "$(cat "$TMP/out" "$TMP/err" | head -c 300)"; fi
# A set written with no efficiency above 0 is refused where it is written,
# whether or not --engine names it (it was taken for no set, silently).
{ cat "$TMP/hw.yaml"; printf 'engines:\n  mlc: {}\n'; } >"$TMP/hw-empty.yaml"
line=$(grep -n '^  mlc:' "$TMP/hw-empty.yaml" | cut -d: -f1)
bad engine_empty_set "$TMP/hw-empty.yaml:$line:8: engines.mlc: gives no value above 0" \
    decode --hardware "$TMP/hw-empty.yaml" --model "$TMP/llm.yaml"
# w4a16 computes at the fp16 rate, so an engine's flops take no w4a16 key:
# refused at it, saying why, not ignored.
{ cat "$TMP/hw.yaml"; printf 'engines:\n  qnn:\n    flops:\n      w4a16: 9TFLOPS\n'; } >"$TMP/hw-npu-bad.yaml"
line=$(grep -n '^      w4a16:' "$TMP/hw-npu-bad.yaml" | cut -d: -f1)
bad engine_flops_w4a16 "$TMP/hw-npu-bad.yaml:$line:14: engines.qnn.flops.w4a16: w8a16 and w4a16 compute at the fp16 rate" \
    decode --hardware "$TMP/hw-npu-bad.yaml" --model "$TMP/llm.yaml"
bad tp_heads "--tp: 3 does not divide" decode $cards --tp 3
bad tp_link "--tp: 2 GPUs need an interconnect" decode --hardware apple-m2 --model "$TMP/llm.yaml" --tp 2
bad tp_zero "--tp needs an integer from 1" decode $cards --tp 0
bad batch_zero "--batch needs an integer from 1" decode $cards --batch 0
bad batch_word "--batch needs an integer from 1" batch $cards --batch most --prompt 1 --generate 1
bad context_negative "--context needs an integer from 0" decode $cards --context -1
bad tp_blank "--tp needs an integer from 1" decode $cards --tp ' 2'
bad batch_plus "--batch needs an integer from 1" decode $cards --batch +2
bad overhead "--overhead: '5' needs a unit" decode $cards --overhead 5
bad context_prefill "--context does not go with prefill" prefill $cards --prompt 8 --context 8
bad prompt_decode "--prompt does not go with decode" decode $cards --prompt 8
bad generate_prefill "--generate does not go with prefill" prefill $cards --prompt 8 --generate 8
bad prefill_prompt "prefill needs --prompt N" prefill $cards
bad batch_generate "batch needs --generate G" batch $cards --prompt 8
bad max_decode "--batch max goes with batch" decode $cards --batch max
bad max_none "--batch max: the K,V of one job" batch $cards --batch max --prompt 8000 --generate 8000
bad set "unknown option '--set'" decode $cards --set a=b

# --- --quiet, --help ----------------------------------------------------------
step batch $cards --prompt 8 --generate 8 && cp "$TMP/out" "$TMP/loud"
if step batch $cards --prompt 8 --generate 8 --quiet && cmp -s "$TMP/out" "$TMP/loud" &&
   [ ! -s "$TMP/err" ]; then pass step_quiet
else fail step_quiet "$(cat "$TMP/err")"; fi
"$SPECSIM" step --help >"$TMP/help" 2>&1
missing=""
for o in --hardware --model --precision --tp --batch --context --prompt --generate \
         --overhead --engine --kv-precision --tokens --op --quiet decode prefill batch \
         linear; do
    grep -q -- "$o" "$TMP/help" || missing="$missing $o"
done
if [ -z "$missing" ] && "$SPECSIM" --help | grep -q "step MODE"; then pass step_help
else fail step_help "not in the help:$missing"; fi

# --- scripts/validate-published.sh ------------------------------------------
csv=results/validation/published.csv
grep -v -e '^#' -e '^[[:space:]]*$' "$csv" | tail -n +2 | cut -d, -f1 >"$TMP/ids"
nrows=$(wc -l <"$TMP/ids")
# From another directory, the binary given relative to it.
if (cd "$TMP" && "$here/scripts/validate-published.sh" "$(
        case $SPECSIM in /*) echo "$SPECSIM" ;; *) echo "$here/$SPECSIM" ;; esac)") \
        >"$TMP/table" 2>"$TMP/err"; then
    pass validate_runs
else fail validate_runs "$(head -c 600 "$TMP/err")"; fi
# The table: one row per CSV row, in order; then the summary, whose last row
# counts them all.
awk -F' [|] ' '/^[|] [a-z0-9-]+-[0-9]+ [|]/ { sub(/^[|] /, "", $1); print $1 }' "$TMP/table" >"$TMP/got"
if [ "$nrows" -ge 100 ] && cmp -s "$TMP/ids" "$TMP/got"; then pass validate_one_row_each
else fail validate_one_row_each "$nrows ids; $(diff "$TMP/ids" "$TMP/got" | head -5)"; fi
last=$(grep '^| all | all |' "$TMP/table")
nocard=$(grep -c '| no card: ' "$TMP/table")
predicted=$(grep -c '^| [a-z0-9-]*-[0-9]* |.*| [+-][0-9.]* | [0-9.]* |' "$TMP/table")
if echo "$last" | awk -F' [|] ' -v n="$nrows" -v p="$predicted" -v u="$nocard" \
        '{ exit !($3 == n && $4 == p && $5 == u && p + u == n && p >= 60) }'; then
    pass validate_summary
else fail validate_summary "$nrows rows, $predicted predicted, $nocard without a card; last row: $last"; fi
missing=""
for g in decode verify prefill mixed tp quant fp8 "edge: llama.cpp, Ollama" "edge: MLC" "edge: QNN"; do
    for s in fit holdout all; do
        grep -qF "| $g | $s |" "$TMP/table" || missing="$missing [$g $s]"
    done
done
if [ -z "$missing" ]; then pass validate_groups
else fail validate_groups "no summary row for$missing"; fi

# The error and speed ratio of a row whose published value is twice the
# rate specsim predicts (and of one at half its time), and a row with no card.
step decode --hardware a100-80g --model llama-2-7b --context 512 --overhead 0.5ms &&
    t=$(col "$TMP/out" time_s)
head="$(grep -v '^#' "$csv" | head -n 1)"
row() { # ID METRIC VALUE UNIT HARDWARE_CARD
    echo "$1,decode,decode,fit,t,http://x,p,w,e,v,h,$5,m,llama-2-7b,fp16,1,1,NA,NA,512,$2,m,$3,$4,n"
}
{
    echo "$head"
    row t-01 decode_tok_s "$(awk -v t="$t" 'BEGIN { printf "%.10g", 2 / t }')" tok/s a100-80g
    row t-02 step_time "$(awk -v t="$t" 'BEGIN { printf "%.10g", t * 1e3 / 2 }')" ms a100-80g
    row t-03 step_time 1 ms none
} >"$TMP/mini.csv"
scripts/validate-published.sh "$SPECSIM" "$TMP/mini.csv" >"$TMP/mini" 2>"$TMP/err"
if grep -q '^| t-01 |.* | -50.0 | 0.50 | - |$' "$TMP/mini" &&
   grep -q '^| t-02 |.* | +100.0 | 0.50 | - |$' "$TMP/mini" &&
   grep -q '^| t-03 |.* | - | - | - | no card: hardware (h) |$' "$TMP/mini" &&
   grep -q '^| all | all | 3 | 2 | 1 | 75.0 | +100.0 (t-02) | 0.50 |$' "$TMP/mini"; then
    pass validate_error_defined
else fail validate_error_defined "$(cat "$TMP/mini" "$TMP/err")"; fi
