#!/bin/sh
# scripts/validate-published.sh [SPECSIM [CSV]] — puts every published
# measurement of results/validation/published.csv (issue 23, docs/validation.md)
# through `specsim step` and prints, as Markdown, one table row per CSV row
# (setting, published, specsim, error) and a summary per group and split
# (fit, holdout, all): rows, rows predicted, rows without a card, median and
# worst |error|, median speed ratio.
#
#   SPECSIM  the specsim binary (default: build/specsim of this tree)
#   CSV      the measurements (default: results/validation/published.csv)
# Works from any directory: the cards are this tree's models/. Exit status 0,
# or 1 when a row's specsim call failed (its row says error) or an input is
# missing.
#
# How a row becomes a question (docs/validation.md, "How each row is
# predicted"):
#   decode_tok_s with a stated context, step_time of a decode call
#                                -> step decode (B jobs at that context):
#                                   1 / time_s, time_s
#   ttft, prefill_tok_s, step_time of a prompt call
#                                -> step prefill (B prompts of N tokens):
#                                   time_s, tok_s
#   decode_tok_s, output_tok_s(_per_gpu), itl, e2e_latency
#                                -> step batch (B prompts of N tokens, G
#                                   generated): 1 / itl_s (the decode steps'
#                                   rate), output_tok_s (/ tp), itl_s, total_s
# Cards: hardware_card and model_card; a hardware variant the source leaves
# open (unknown) is read as the nearest card (A100: a100-80g, H100: h100-sxm,
# AGX or IGX Orin: jetson-orin-agx, an M1 Max whose GPU is not stated:
# apple-m1-max, the 32-core GPU; both M1 Max GPUs have the same 400GB/s);
# none is listed as "no card" and counted.
# Precision: fp16 and bf16 are fp16; a named weight format is that format
# (its own bits per weight, computed at w8a16 or w4a16: int8 weight-only is
# int8-ch, gpt-fast int4 int4-g32, AWQ int4-g128, GGUF q4_0 and q4_K_M and
# MLC q4f16_1 by name); an unnamed 4-bit format is w4a16; fp8 is fp8 (e4m3
# weights and activations, the card's dense FP8 peak, an fp16 KV cache
# unless the row's notes say "FP8 KV cache", which they do only where the
# source states it: then --kv-precision fp8);
# unknown is fp16 for vLLM and w4a16 for Ollama (its default tags are 4-bit). Lengths: a 0-token prompt (llama-bench
# tg) is one token, so that the run is G one-token steps from an empty cache;
# an unstated prompt is 16 tokens, an unstated output 128; an unstated batch
# (an offline maximum-throughput run) is --batch max. Overhead: the
# scenario defaults, 0.5ms an iteration for data-centre GPUs
# (cloud.overhead) and 0s on edge devices (edge.overhead). Engine: the
# card's efficiency set for the row's engine (--engine llamacpp_cpu,
# llamacpp_gpu, mlc or qnn) where the card gives one. Every assumption a
# row needs is named in its last column.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
specsim=${1:-$root/build/specsim}
csv=${2:-$root/results/validation/published.csv}
# Made absolute before the cd below, so that they may be given relative to
# the caller's directory (a binary without a / is looked up on the PATH).
case $specsim in
/*) ;;
*/*) specsim=$(pwd)/$specsim ;;
*) specsim=$(command -v "$specsim" || echo "$specsim") ;;
esac
case $csv in /*) ;; *) csv=$(pwd)/$csv ;; esac
[ -x "$specsim" ] || { echo "validate-published: $specsim: not an executable (run make)" >&2; exit 1; }
[ -f "$csv" ] || { echo "validate-published: $csv: no such file" >&2; exit 1; }
cd "$root"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
tab=$(printf '\t')

# One plan line per data row, tab-separated, no field empty:
#   id group split setting metric unit published mode args column inverse
#   factor assumed
# mode "none" when the row cannot be predicted (args then says why).
awk -F, -v OFS="$tab" '
function v(name) { return $(col[name]) }
function note(s) { assumed = assumed (assumed == "" ? "" : "; ") s }
function card(dir, name) { return system("[ -f models/" dir "/" name ".yaml ]") == 0 }
# 1 when the engines: section of the card names the engine (a two-space key
# under it, as the cards write it).
function has_engine(name, e,    f, line, in_) {
    f = "models/hardware/" name ".yaml"; in_ = 0
    while ((getline line < f) > 0) {
        if (line ~ /^engines:/) { in_ = 1; continue }
        if (in_ && line ~ /^[^ #]/) in_ = 0
        if (in_ && line ~ ("^  " e ":")) { close(f); return 1 }
    }
    close(f)
    return 0
}
/^#/ || /^[[:space:]]*$/ { next }
!ncol { for (i = 1; i <= NF; i++) col[$i] = i; ncol = NF; next }
{
    id = v("id"); group = v("group"); engine = v("engine"); hw = v("hardware")
    hwc = v("hardware_card"); mc = v("model_card"); prec = v("precision")
    tp = v("tp"); b = v("batch"); in_ = v("input_tokens"); out = v("output_tokens")
    ctx = v("context"); metric = v("metric"); regime = v("regime"); unit = v("unit")
    assumed = ""
    if (group == "edge")
        group = engine ~ /MLC/ ? "edge: MLC" : engine ~ /Qualcomm|QNN/ ? "edge: QNN" \
                                             : "edge: llama.cpp, Ollama"
    if (hwc == "unknown") {
        hwc = hw ~ /A100/ ? "a100-80g" : hw ~ /H100/ ? "h100-sxm" \
            : hw ~ /Orin/ ? "jetson-orin-agx" : hw ~ /M1 Max/ ? "apple-m1-max" : "none"
        if (hwc != "none") note("hardware variant not stated: " hwc)
    }
    why = ""
    if (hwc == "none" || !card("hardware", hwc)) why = "hardware (" hw ")"
    # The efficiency set of the engine, where the card gives one (engines: in
    # models/hardware/, docs/validation.md "Engine profiles"): llama.cpp
    # and Ollama on a CPU or on a GPU, MLC, QNN.
    eng = engine ~ /MLC/ ? "mlc" : engine ~ /Qualcomm|QNN/ ? "qnn" \
        : engine ~ /llama[.]cpp|Ollama/ ? (engine ~ /CPU/ || hw ~ /[(]CPU[)]/ ? "llamacpp_cpu" \
                                                                           : "llamacpp_gpu") : ""
    if (why == "" && eng != "" && has_engine(hwc, eng)) note("engine: " eng)
    else eng = ""
    if (mc == "none" || !card("llm", mc))
        why = why (why == "" ? "" : ", ") "model (" v("model") ")"
    # A named layout is read at its own bits per weight (specsim step
    # --help): GGUF and MLC formats by name, gpt-fast int4 (group 32, bf16
    # scale and zero) int4-g32, its int8 (a scale per row) int8-ch, AWQ
    # (group 128, fp16 scale, 4-bit zero) int4-g128; a 4-bit format the
    # source does not name (QNN w4a16, int4) the w4a16 reference layout.
    if (prec == "fp16" || prec == "bf16") p = "fp16"
    else if (prec == "int8-wo") p = "int8-ch"
    else if (prec == "int4-wo-g32") p = "int4-g32"
    else if (prec == "awq-int4") p = "int4-g128"
    else if (prec ~ /^(q4_0|q4_K_M|q4f16_1)$/) p = prec
    else if (prec ~ /^(w4a16|int4)$/) p = "w4a16"
    else if (prec == "fp8") p = "fp8"
    else if (prec == "unknown" && engine ~ /Ollama/) { p = "w4a16"; note("precision not stated: w4a16") }
    else if (prec == "unknown") { p = "fp16"; note("precision not stated: fp16") }
    else why = why (why == "" ? "" : ", ") "precision " prec
    # The format of the K,V cache: fp16 unless the source states an FP8 cache
    # (recorded in the notes: TensorRT-LLM v0.6.1 builds with --fp8_kv_cache).
    kv = v("notes") ~ /FP8 KV cache/ ? "fp8" : ""
    # The question and the column that answers it.
    if ((metric == "decode_tok_s" && ctx ~ /^[0-9]+$/) ||
        (metric == "step_time" && regime == "decode")) {
        mode = "decode"; column = "time_s"; inverse = metric == "decode_tok_s"
    } else if (metric == "ttft" || metric == "prefill_tok_s" || metric == "step_time") {
        mode = "prefill"; column = metric == "prefill_tok_s" ? "tok_s" : "time_s"; inverse = 0
    } else {
        # The decode rate of one sequence leaves its prompt out (llama.cpp and
        # Ollama time the prompt apart, MLC too; gpt-fast counts a 5-token
        # prefill in, a step in 128).
        mode = "batch"; inverse = metric == "decode_tok_s"
        column = metric == "decode_tok_s" || metric == "itl" ? "itl_s" \
               : metric == "e2e_latency" ? "total_s" : "output_tok_s"
    }
    if (b !~ /^[0-9]+$/) { b = mode == "batch" ? "max" : 1; note("batch not stated: " b) }
    if (in_ == "0") in_ = 1
    if (mode != "decode" && in_ !~ /^[0-9]+$/) { in_ = 16; note("prompt not stated: 16") }
    if (mode == "batch" && (out !~ /^[0-9]+$/ || out == 0)) { out = 128; note("output not stated: 128") }
    setting = hwc " " mc " " prec (kv != "" ? " kv:" kv : "") (tp > 1 ? " TP" tp : "") " B" b
    if (mode == "decode") { args = "--batch " b " --context " ctx; setting = setting " ctx" ctx }
    else if (mode == "prefill") { args = "--batch " b " --prompt " in_; setting = setting " in" in_ }
    else { args = "--batch " b " --prompt " in_ " --generate " out
           setting = setting " in" in_ " out" out }
    args = "--hardware " hwc " --model " mc " --precision " p (kv != "" ? " --kv-precision " kv : "") \
           " --tp " tp " " args \
           " --overhead " (v("group") == "edge" ? "0s" : "0.5ms") (eng != "" ? " --engine " eng : "")
    factor = unit == "ms" ? 1000 : unit == "us" ? 1e6 : unit == "ns" ? 1e9 \
           : unit == "tok/s/GPU" ? 1 / tp : 1
    if (why != "") { mode = "none"; args = "no card: " why; setting = "-" }
    print id, group, v("split"), setting, metric, unit, v("value"), mode, args, column,
          inverse, factor, (assumed == "" ? "-" : assumed)
}' "$csv" >"$tmp/plan"

# The rows, answered: the plan line with specsim's value, the error and the
# speed ratio appended ("-" where none).
failed=0
while IFS=$tab read -r id group side setting metric unit pub mode args column inverse \
                       factor assumed; do
    got=- err=- ratio=-
    if [ "$mode" != none ]; then
        # shellcheck disable=SC2086  # args is a list of options and values
        if "$specsim" step "$mode" $args </dev/null >"$tmp/out" 2>"$tmp/err"; then
            x=$(awk -F, -v col="$column" -f scripts/csvcol.awk "$tmp/out")
            # shellcheck disable=SC2046  # three numbers, split on purpose
            set -- $(awk -v x="$x" -v inv="$inverse" -v f="$factor" -v pub="$pub" \
                         -v unit="$unit" 'BEGIN {
                y = (inv ? 1 / x : x) * f
                rate = unit ~ /^tok/
                printf "%.4g %+.1f %.2f\n", y, (y - pub) / pub * 100, rate ? y / pub : pub / y }')
            got=$1 err=$2 ratio=$3
        else
            got=error failed=1
            echo "validate-published: $id: specsim step $mode $args: $(cat "$tmp/err")" >&2
        fi
    else
        assumed=$args
    fi
    printf '%s\n' "$id$tab$group$tab$side$tab$setting$tab$metric$tab$unit$tab$pub$tab$got$tab$err$tab$ratio$tab$assumed"
done <"$tmp/plan" >"$tmp/rows"

echo "Published measurements against \`specsim step\` ($("$specsim" --version))."
echo "error = (specsim - published) / published in the metric's unit; speed"
echo "ratio = the speed specsim predicts / the speed published (> 1: specsim is"
echo "faster, whether the metric is a rate or a time)."
echo
echo "| id | group | split | setting | metric | published | specsim | error % | speed ratio | assumed |"
echo "|---|---|---|---|---|---:|---:|---:|---:|---|"
awk -F"$tab" '{ printf "| %s | %s | %s | %s | %s (%s) | %s | %s | %s | %s | %s |\n",
                $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11 }' "$tmp/rows"
echo
echo "Summary by group: rows, rows predicted, rows without a card; over the rows"
echo "predicted, the median |error|, the error of largest size and its row, the median"
echo "speed ratio."
echo
echo "| group | split | rows | predicted | no card | median abs error % | worst error % (row) | median speed ratio |"
echo "|---|---|---:|---:|---:|---:|---:|---:|"
awk -F"$tab" '
function median(a, n,    i, j, t) {
    for (i = 2; i <= n; i++)
        for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
function add(key, id, err, ratio, nocard) {
    rows[key]++
    if (nocard) { none[key]++; return }
    if (err == "-") return
    e = err < 0 ? -err : err
    n = ++pred[key]
    abserr[key, n] = e
    spd[key, n] = ratio
    if (n == 1 || e > worst[key]) { worst[key] = e; worstat[key] = err " (" id ")" }
}
BEGIN {
    # The order of docs/validation.md; a group not listed follows, as it comes.
    ngroups = split("decode verify prefill mixed tp quant fp8", order, " ")
    order[++ngroups] = "edge: llama.cpp, Ollama"
    order[++ngroups] = "edge: MLC"
    order[++ngroups] = "edge: QNN"
    for (g = 1; g <= ngroups; g++) seen[order[g]] = 1
}
{
    if (!($2 in seen)) { seen[$2] = 1; order[++ngroups] = $2 }
    nocard = $8 == "-" && $11 ~ /^no card/
    add($2 SUBSEP $3, $1, $9, $10, nocard); add($2 SUBSEP "all", $1, $9, $10, nocard)
    add("all" SUBSEP $3, $1, $9, $10, nocard); add("all" SUBSEP "all", $1, $9, $10, nocard)
}
END {
    order[++ngroups] = "all"
    split("fit holdout all", sides, " ")
    for (g = 1; g <= ngroups; g++)
        for (s = 1; s <= 3; s++) {
            key = order[g] SUBSEP sides[s]
            if (!rows[order[g] SUBSEP "all"]) continue
            n = pred[key] + 0
            for (i = 1; i <= n; i++) { a[i] = abserr[key, i]; r[i] = spd[key, i] }
            printf "| %s | %s | %d | %d | %d | %s | %s | %s |\n", order[g], sides[s],
                   rows[key], n, none[key] + 0,
                   n ? sprintf("%.1f", median(a, n)) : "-",
                   n ? worstat[key] : "-",
                   n ? sprintf("%.2f", median(r, n)) : "-"
        }
}' "$tmp/rows"
exit "$failed"
