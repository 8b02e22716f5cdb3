# scripts/validate-published.sh against results/validation/published.csv
# (issue 23, docs/validation.md) keeps the service model's fit:
#   published_fit_runs     the script runs and predicts every row it has
#                          cards for (exit status 0);
#   published_fit_GROUP    the held-out median |error| of GROUP (and of all
#                          held-out rows) stays at or below its limit: the
#                          guard below, or the issue's target where the
#                          group meets it.
# A group's limit is its GUARD, the held-out median the fit of
# docs/validation.md reached plus 2 percentage points, so that a later
# change that undoes the fit fails here; but a group that meets the
# issue's target (10%, 5% for decode and verify) is held to the target
# when that is the lower: today mixed (9.4%), edge llama.cpp (7.9%) and
# QNN (9.8%). A change that improves the model may lower the guards, with
# the new table in docs/validation.md.
. tests/cli/lib.sh

if sh scripts/validate-published.sh "$SPECSIM" >"$TMP/out" 2>"$TMP/err"; then
    pass published_fit_runs
else
    fail published_fit_runs "$(head -c 400 "$TMP/err")"
fi

# group|held-out median |error| % this fit reached. Re-recorded when the
# hardware cards of the published points were added (RTX 4090, A100 40GB and
# 80GB PCIe, H100 PCIe, Apple M1 / M1 Max / M3 Max, Jetson Orin Nano,
# Snapdragon 8 Gen 2 and 8 Elite): 41 rows more are predicted, so a group's
# median is over other rows. prefill rose (one row before, four now: the
# llama.cpp prefills on the PCIe cards are 1.9-2.8x optimistic); decode,
# quant and QNN fell. Then again when the named weight formats were read
# at their own bits per weight (more bytes than the w4a16 reference
# layout the 0.5 efficiency was fitted with): quant 37.5 -> 39.1, edge
# llama.cpp 11.6 -> 14.7 (the M1 and M3 Max Q4_K_M decodes slower), all
# 28.2 -> 26.9 (docs/validation.md, "After the fit"). Then tightened when
# the MLC and QNN efficiency sets were fitted (docs/validation.md, "Engine
# profiles"): quant 39.1 -> 28.0, QNN 85.5 -> 39.5, all 26.9 -> 26.5.
# Then tightened when the llamacpp_gpu set was fitted on the llama.cpp CUDA
# fit rows of llama.cpp's own pull requests (the held-out rows unchanged,
# docs/validation.md "Engine profiles"): decode 45.0 -> 13.3, prefill
# 52.4 -> 13.2, quant 28.0 -> 26.5, all 26.5 -> 24.8.
# Then re-recorded when the data were read as their sources state them (no
# fit changed; docs/validation.md "What the errors say"): the ten
# TensorRT-LLM v0.6.1 H100 FP8 rows run with the FP8 K,V cache their
# engines were built with (--fp8_kv_cache), fp8 32.0 -> 24.2; the four
# v0.6.1 A100 TP throughput rows are per GPU, as a later revision of the
# same file labels the same figures, tp 190.1 -> 3.0; all 24.8 -> 20.1.
# Then re-recorded when the model cards for Llama-3.x-70B and Llama-3.2-1B
# and 3B made every row predictable (20 rows more, 7 of them held out, so
# a group's median is over other rows): tp 3.0 -> 6.3 (vLLM's 70B at TP 4
# 1.08-1.13x), quant 26.5 -> 26.0, fp8 24.2 -> 18.6 (NIM's 70B),
# QNN 39.5 -> 38.4, all 20.1 -> 17.3.
# Then re-recorded when verify-sized rows (first-token latency of a
# 128-token prompt at batch 1) were added from two more revisions of
# TensorRT-LLM's performance page, trtllm-perf-v08 (held out) and
# trtllm-perf-v09 (fit), with no fit changed: verify 17.3 -> 17.6 (a second
# held-out A100 row, 1.22x optimistic like trt061-14), tp 6.3 -> 7.4 (the
# A100 70B at TP 8), fp8 18.6 -> 22.8 (four H100/H200 FP8 first-token rows,
# each 1.34-1.41x optimistic), all 17.3 -> 19.1.
# Then re-recorded when single-GPU FP16/BF16 rows came from three new
# sources, torchao-readme and tinychat-readme (held out) and
# llm-inference-bench (fit), and from the 2048-token rows of
# trtllm-perf-v08 (held out) and -v09 (fit), with no fit changed: decode
# 13.3 -> 9.6 (six held-out rows on A100, H100 and RTX 4090 beside the
# four llama.cpp ones), prefill 13.2 -> 12.2, quant 26.0 -> 27.9 (TinyChat's
# AWQ rows on the RTX 4090, 1.4-1.7x faster than predicted), all 19.1 -> 18.0.
# Then tightened when three edge sources were added (llamacpp-d4167 and
# aihub-2024b fit, normiebench held out) and the llamacpp_gpu sets of the
# Apple cards and the NPU rates of the Snapdragon qnn sets were fitted on
# them (docs/validation.md "Engine profiles"): edge llama.cpp 14.7 -> 7.9,
# QNN 38.4 -> 9.8, all 18.0 -> 13.7.
# Then re-recorded when verify-regime rows were added, with no fit changed
# (docs/validation.md "Verify-regime rows added later"): dli-trtllm09 on
# the fit side, dli-nim's first tokens held out (timed through NIM's HTTP
# server, 1.3-2.1x optimistic): verify 17.6 -> 21.5, tp 7.4 -> 29.3 (the
# group no longer meets its target), fp8 22.8 -> 26.6, all 13.7 -> 17.5.
# group|held-out median reached|the issue's target (- for "all"). A group
# that meets its target is held to it: its limit is the lesser of the
# guard and the target.
limits="decode|9.6|5
verify|21.5|5
prefill|12.2|10
mixed|9.4|10
tp|29.3|10
quant|27.9|10
fp8|26.6|10
edge: llama.cpp, Ollama|7.9|10
edge: QNN|9.8|10
all|17.5|-"
echo "$limits" | while IFS='|' read -r group reached target; do
    name=published_fit_$(echo "$group" | tr "A-Z" "a-z" | sed 's/[^a-z0-9]\{1,\}/_/g; s/_$//')
    got=$(awk -F' *[|] *' -v g="$group" '$2 == g && $3 == "holdout" { print $7 }' "$TMP/out")
    lim=$(awk -v r="$reached" -v t="$target" 'BEGIN {
        l = r + 2.0; if (t != "-" && r <= t && t < l) l = t; print l }')
    if [ -z "$got" ] || [ "$got" = - ]; then
        fail "$name" "no held-out median for group '$group' in the script's summary"
    elif awk -v got="$got" -v lim="$lim" 'BEGIN { exit !(got <= lim) }'; then
        pass "$name"
    else
        fail "$name" "held-out median |error| $got% > $lim% (the fit's guard: $reached% + 2, or the target $target% the group meets)"
    fi
done
