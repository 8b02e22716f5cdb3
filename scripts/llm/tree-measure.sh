#!/bin/sh
# scripts/llm/tree-measure.sh [BUILD] — the tree acceptance profiles committed
# under scenarios/real/accept/ (docs/llm.md, "Measuring tree acceptance"):
# `build/llm accept --ranks 8` on SmolLM2-135M (scripts/fetch-model.sh) and
# the 124 prompts of scenarios/real/prompts.txt, greedy, up to 256 tokens per
# prompt (a text ends at its end of sequence), the W4A16 draft and the
# early exit after 28 of 30 layers against the fp16 target:
#   NAME-greedy.ranks  the rank of the target's token among the draft's at
#                      every position (8: not among the first 8)
#   NAME-greedy.tree   the profile a scenario names (acceptance: {model:
#                      tree, profile: PATH}): p_1 .. p_8 per depth 1 .. 8,
#                      cut in blocks of a tree 8 wide, with counts and
#                      standard errors
#   NAME-greedy-w1.tree  the same ranks cut in blocks of a chain (width 1):
#                      `llm accept --refit --tree-width 1` of the .ranks
#   REPORT-tree.txt    the command's report (the chain's as before, then
#                      the per-depth, per-rank table), and the refits' tables
#                      with six trees replayed on the ranks beside the
#                      profiles' closed forms (--tree-branching)
# The chain traces the same run writes are the committed NAME-greedy.txt
# when the runtime reproduces them (the script says whether they differ; it
# does not replace them: scripts/llm/accept-measure.sh owns those).
# About 15 minutes on 2 idle cores. LIMIT=N: the first N prompts only (a
# quick check of the script; not for the committed files).
set -eu
cd "$(dirname "$0")/../.."
build=${1:-build}
dst=scenarios/real/accept
[ -x "$build/llm" ] || { echo "tree-measure: $build/llm not built (run make)" >&2; exit 1; }
model=$(scripts/fetch-model.sh)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tree-measure.XXXXXX")
mkdir -p "$tmp/rf"
trap 'rm -rf "$tmp"' EXIT
"$build/llm" accept --model "$model" --prompts scenarios/real/prompts.txt --out "$tmp" \
    --batch 16 --tokens 256 --temp 0 --limit "${LIMIT:-0}" --drafts w4a16,w4a16:28 \
    --ranks 8 >"$tmp/REPORT-tree.txt"
for d in w4a16 w4a16-L28; do
    cmp -s "$tmp/$d-greedy.txt" "$dst/$d-greedy.txt" ||
        echo "tree-measure: note: $d-greedy.txt differs from the committed chain trace" >&2
    cp "$tmp/$d-greedy.ranks" "$tmp/$d-greedy.tree" "$dst/"
done
for d in w4a16 w4a16-L28; do
    for w in 8 1; do
        for b in 1,1,1,1,1,1,1,1 2,1,1,1 4,2,1,1 8,1,1,1,1 3,3,3 2,2,2,2,2; do
            "$build/llm" accept --refit --out "$tmp/rf" --tree-width $w --tree-branching $b \
                "$dst/$d-greedy.ranks" | grep '^tree branching' | sed "s/^/$d, cut $w wide: /"
        done
    done
    "$build/llm" accept --refit --tree-width 1 "$dst/$d-greedy.ranks" >/dev/null
done >>"$tmp/REPORT-tree.txt"
cp "$tmp/REPORT-tree.txt" "$dst/"
