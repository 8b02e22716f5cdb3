#!/bin/sh
# llm_tree.sh — tree acceptance measured on the real model (build/llm accept
# --ranks, kernels/llm/accrank.h), 3 prompts x 40 tokens of
# scenarios/real/prompts.txt, the W4A16 draft against the fp16 target:
#   - the chain trace written from the ranks (rank 0: accepted) is the
#     trace the existing path writes (tforce_outcomes, without --ranks),
#     byte for byte;
#   - a width-1 profile's p_1 per depth is the chain's measured acceptance
#     per draft position in blocks of 8 (the .dat the existing path
#     writes), to the profile's 6 decimals rounded down;
#   - a width-4 profile 2 deep, named by a scenario, gives under
#     `specsim analytic` (tree branching [4, 4], every node the profile
#     counted) the mean accepted length the measurement's blocks had;
#   - `--refit` of the rank stream writes the same profile (its comment
#     lines apart), and a width-1 re-estimate the width-1 measurement's;
#   - bad options exit 2 before any model is read.
# No model is a failure, not a skip.
. tests/cli/lib.sh

if ! model=$(scripts/fetch-model.sh 2>"$TMP/err"); then
    fail llm_tree_model "$(tail -n 1 "$TMP/err")"; exit 1
fi
awk '/^### / { n++ } n >= 1 && n <= 3' scenarios/real/prompts.txt >"$TMP/p.txt"
acc() { # acc OUTDIR ARGS...
    o=$1; shift
    mkdir -p "$o"
    "$BUILD/llm" accept --model "$model" --prompts "$TMP/p.txt" --out "$o" --tokens 40 \
        --drafts w4a16 --quiet "$@" >"$o/report" 2>"$o/err"
}
acc "$TMP/chain"
acc "$TMP/w1" --ranks 4 --tree-width 1 --tree-depth 8
acc "$TMP/w4" --ranks 4 --tree-depth 2

if [ -s "$TMP/chain/w4a16-greedy.txt" ] &&
   cmp -s "$TMP/chain/w4a16-greedy.txt" "$TMP/w1/w4a16-greedy.txt"
then pass llm_tree_ranks_give_the_chain_trace
else fail llm_tree_ranks_give_the_chain_trace "$(cmp "$TMP/chain/w4a16-greedy.txt" \
    "$TMP/w1/w4a16-greedy.txt" 2>&1) $(head -c 300 "$TMP/w1/err")"; fi

# Row d's first value against position d's measured value in the .dat's
# first table (rows stop at the deepest depth some block reached; the .dat
# says '-' past it).
bad=$(awk 'FNR == 1 { f++ }
    f == 1 && /^[0-9]/ { p1[++r] = $1 }
    f == 2 && /^$/ { f = 3 }
    f == 2 && /^[1-8] / && NF == 6 { if ($2 == "-") { if ($1 <= r) b++; next }
        d = p1[$1] - $2; if (!($1 in p1) || d > 1e-6 || d < -1.000001e-6) b++; n++ }
    END { print (n >= 4 ? b + 0 : "none") }' \
    "$TMP/w1/w4a16-greedy.tree" "$TMP/chain/w4a16-greedy.dat" 2>/dev/null)
if [ "$bad" = 0 ]; then pass llm_tree_width1_is_the_chain
else fail llm_tree_width1_is_the_chain "bad: $bad; $(grep -v '^#' "$TMP/w1/w4a16-greedy.tree" | head -8 | tr '\n' ' ')"; fi

cat >"$TMP/s.yaml" <<EOF
protocol: {mode: sync, tree: {branching: [4, 4]}}
acceptance: {model: tree, profile: $TMP/w4/w4a16-greedy.tree}
EOF
mean=$(sed -n 's/.*mean accepted length \([0-9.]*\)$/\1/p' "$TMP/w4/w4a16-greedy.tree")
"$SPECSIM" analytic "$TMP/s.yaml" >"$TMP/an" 2>"$TMP/err"
exp=$(awk '$1 == "accepted_len_expected:" { print $2 }' "$TMP/an")
# Rounding: 8 values, each down by < 1e-6.
if [ -n "$mean" ] && [ -n "$exp" ] &&
   awk -v m="$mean" -v e="$exp" 'BEGIN { d = e - 1 - m; exit !(d < 1e-4 && d > -1e-4) }'
then pass "llm_tree_profile_analytic_is_measured ($exp - 1 vs $mean)"
else fail llm_tree_profile_analytic_is_measured "analytic '$exp', measured '$mean' $(head -c 300 "$TMP/err")"; fi

# The width-4 measurement's ranks re-estimated 2 deep (its own cut) and 1
# wide, 8 deep (the width-1 measurement's cut): the same rows.
mkdir -p "$TMP/rf"
"$BUILD/llm" accept --refit --out "$TMP/rf" --tree-depth 2 "$TMP/w4/w4a16-greedy.ranks" \
    >/dev/null 2>"$TMP/err"
"$BUILD/llm" accept --refit --out "$TMP/rf" --tree-width 1 "$TMP/w4/w4a16-greedy.ranks" \
    >/dev/null 2>>"$TMP/err"
rows() { grep -v '^#' "$1" 2>/dev/null; }
if [ -n "$(rows "$TMP/rf/w4a16-greedy-d2.tree")" ] &&
   [ "$(rows "$TMP/rf/w4a16-greedy-d2.tree")" = "$(rows "$TMP/w4/w4a16-greedy.tree")" ] &&
   [ "$(rows "$TMP/rf/w4a16-greedy-w1.tree")" = "$(rows "$TMP/w1/w4a16-greedy.tree")" ]
then pass llm_tree_refit_ranks
else fail llm_tree_refit_ranks "$(ls "$TMP/rf") $(head -c 300 "$TMP/err")"; fi

expect_exit llm_tree_ranks_sampled 2 "$BUILD/llm" accept --model "$model" --prompts "$TMP/p.txt" \
    --out "$TMP" --ranks 4 --temp 1
expect_exit llm_tree_width_past_ranks 2 "$BUILD/llm" accept --model "$model" --prompts "$TMP/p.txt" \
    --out "$TMP" --ranks 4 --tree-width 5
expect_exit llm_tree_depth_alone 2 "$BUILD/llm" accept --model "$model" --prompts "$TMP/p.txt" \
    --out "$TMP" --tree-depth 4
expect_exit llm_tree_ranks_range 2 "$BUILD/llm" accept --model "$model" --prompts "$TMP/p.txt" \
    --out "$TMP" --ranks 33
