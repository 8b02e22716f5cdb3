#!/bin/sh
# scripts/llm/accept-measure.sh [--refit] [BUILD] — the acceptance
# measurements committed under scenarios/real/accept/ (docs/llm.md,
# "Measuring acceptance"), with `build/llm accept` on SmolLM2-135M
# (scripts/fetch-model.sh) and the 124 prompts of scenarios/real/prompts.txt:
#   - the W4A16 draft and the early-exit drafts w4a16:28, :24, :16 against
#     the fp16 target, up to 256 tokens per prompt (a text ends at the end
#     of sequence), greedy and sampled at temperature 1: NAME-MODE.txt (a
#     per-position trace the simulator replays, one `# request` line per
#     prompt), .fit (the fitted models as --set overrides), .dat (per
#     position and per accepted length at gamma 2, 4, 8, measured and
#     fitted: the figure's data);
#   - the W4A16 draft, greedy, 48 tokens past the end of sequence, as
#     build/testbed run --real-model decodes (scenarios/testbed/real-model-*
#     replay it): w4a16-greedy-48.*;
#   - the reports: REPORT-greedy.txt, REPORT-sampled.txt, REPORT-greedy-48.txt
#     (llm accept --refit over the traces: alpha, acceptance per position,
#     accepted lengths, runs, the fits and their goodness of fit).
# About 25 minutes on 2 cores (the target's texts about 2 minutes per mode,
# each draft 2 to 3). Everything is written to a temporary directory and
# moved into place at the end. The measurement is deterministic: a rerun
# writes the same traces.
#   --refit  measure nothing: refit the committed traces (a few seconds),
#            rewriting their .fit, .dat and the reports.
#   ACCEPT_OUT: write there instead of scenarios/real/accept (--refit reads
#   the traces there too); LIMIT=N: the first N prompts only (a quick check
#   of the script; not for the committed files).
set -eu
cd "$(dirname "$0")/../.."
refit=0
if [ "${1:-}" = --refit ]; then
    refit=1
    shift
fi
build=${1:-build}
dst=${ACCEPT_OUT:-scenarios/real/accept}
limit=${LIMIT:-0}
[ -x "$build/llm" ] || { echo "accept-measure: $build/llm not built (run make)" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/accept-measure.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
drafts="w4a16 w4a16-L28 w4a16-L24 w4a16-L16"

if [ $refit = 0 ]; then
    model=$(scripts/fetch-model.sh)
    measure() { # OUTDIR ARGS...
        o=$1
        shift
        mkdir -p "$o"
        "$build/llm" accept --model "$model" --prompts scenarios/real/prompts.txt --out "$o" \
            --batch 16 --limit "$limit" "$@" >"$o/report.txt"
    }
    measure "$tmp/g" --drafts w4a16,w4a16:28,w4a16:24,w4a16:16 --tokens 256 --temp 0
    measure "$tmp/s" --drafts w4a16,w4a16:28,w4a16:24,w4a16:16 --tokens 256 --temp 1
    measure "$tmp/t" --drafts w4a16 --tokens 48 --temp 0 --no-eos \
        --label "48 tokens past the end of sequence, as build/testbed run --real-model decodes"
    mkdir -p "$tmp/out"
    for d in $drafts; do
        cp "$tmp/g/$d-greedy.txt" "$tmp/s/$d-sampled.txt" "$tmp/out/"
    done
    cp "$tmp/t/w4a16-greedy.txt" "$tmp/out/w4a16-greedy-48.txt"
else
    mkdir -p "$tmp/out"
    for d in $drafts; do
        cp "$dst/$d-greedy.txt" "$dst/$d-sampled.txt" "$tmp/out/"
    done
    cp "$dst/w4a16-greedy-48.txt" "$tmp/out/"
fi
# The fits and the reports, from the traces as written.
fit() { # REPORT TRACES...
    r=$1
    shift
    "$build/llm" accept --refit "$@" >"$tmp/out/$r"
}
set --
for d in $drafts; do set -- "$@" "$tmp/out/$d-greedy.txt"; done
fit REPORT-greedy.txt "$@"
set --
for d in $drafts; do set -- "$@" "$tmp/out/$d-sampled.txt"; done
fit REPORT-sampled.txt "$@"
fit REPORT-greedy-48.txt "$tmp/out/w4a16-greedy-48.txt"
mkdir -p "$dst"
mv "$tmp"/out/* "$dst"/
echo "accept-measure: written to $dst/ ($(du -sk "$dst" | cut -f1) KB)" >&2
