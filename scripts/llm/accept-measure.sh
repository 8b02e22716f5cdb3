#!/bin/sh
# scripts/llm/accept-measure.sh [BUILD] — the acceptance measurements
# committed under scenarios/real/accept/ (docs/llm.md, "Measuring
# acceptance"), with `build/llm accept` on SmolLM2-135M
# (scripts/fetch-model.sh) and the 124 prompts of scenarios/real/prompts.txt:
#   - the W4A16 draft and the early-exit drafts w4a16:28, :24, :16 against
#     the fp16 target, 256 tokens per prompt (a text ends at the end of
#     sequence), greedy and sampled at temperature 1: NAME-MODE.txt (a
#     per-position trace the simulator replays), .fit (the fitted models
#     as --set overrides), .dat (per position, measured and fitted), and
#     the printed report REPORT-MODE.txt;
#   - the W4A16 draft, greedy, 48 tokens past the end of sequence, as
#     build/testbed run --real-model decodes (scenarios/testbed/real-model-*
#     replay it): w4a16-greedy-48.*.
# About 20 minutes on 2 cores. Files are written to a temporary directory
# and moved into place at the end.
set -eu
cd "$(dirname "$0")/../.."
build=${1:-build}
dst=scenarios/real/accept
model=$(scripts/fetch-model.sh)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/accept-measure.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
run() { # OUTDIR REPORT ARGS...
    o=$1 r=$2; shift 2
    mkdir -p "$o"
    "$build/llm" accept --model "$model" --prompts scenarios/real/prompts.txt --out "$o" \
        --batch 16 "$@" >"$r"
}
run "$tmp/g" "$tmp/REPORT-greedy.txt" --drafts w4a16,w4a16:28,w4a16:24,w4a16:16 \
    --tokens 256 --temp 0
run "$tmp/s" "$tmp/REPORT-sampled.txt" --drafts w4a16,w4a16:28,w4a16:24,w4a16:16 \
    --tokens 256 --temp 1
run "$tmp/t" "$tmp/REPORT-greedy-48.txt" --drafts w4a16 --tokens 48 --temp 0 --no-eos \
    --label "48 tokens past the end of sequence, as build/testbed run --real-model decodes"
for f in "$tmp"/t/w4a16-greedy.*; do mv "$f" "$tmp/t/w4a16-greedy-48.${f##*.}"; done
mkdir -p "$dst"
mv "$tmp"/g/* "$tmp"/s/* "$tmp"/t/* "$tmp"/REPORT-*.txt "$dst"/
echo "accept-measure: written to $dst/" >&2
