#!/bin/sh
# llm_tree.sh — tree acceptance measured on the real model (build/llm accept
# --ranks, kernels/llm/accrank.h), 3 prompts x 40 tokens of
# scenarios/real/prompts.txt, the W4A16 draft against the fp16 target:
#   - the chain trace written from the ranks (rank 0: accepted) is the
#     trace the existing path writes (tforce_outcomes, without --ranks),
#     byte for byte;
#   - the ranks re-estimated as a width-1 profile (--refit --tree-width 1):
#     p_1 per depth is the chain's measured acceptance per draft position
#     in blocks of 8 (the .dat the existing path writes), to the profile's
#     6 decimals rounded down;
#   - a width-4 profile 2 deep, named by a scenario, gives under
#     `specsim analytic` (tree branching [4, 4], every node the profile
#     counted) the mean accepted length the measurement's blocks had;
#   - `--refit` of the rank stream writes the same profile (its comment
#     lines apart);
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
acc "$TMP/w4" --ranks 4 --tree-depth 2
# Under the sanitizers (build/asan), which look for memory errors, one
# measurement: the chain's own run (the existing path) is held in the
# optimised build, and the checks below read the --ranks run's chain files.
case "$BUILD" in
    *asan*) chain=$TMP/w4
            echo "skip llm_tree_ranks_give_the_chain_trace: held in the optimised build" ;;
    *) chain=$TMP/chain
       acc "$chain"
       if [ -s "$chain/w4a16-greedy.txt" ] &&
          cmp -s "$chain/w4a16-greedy.txt" "$TMP/w4/w4a16-greedy.txt"
       then pass llm_tree_ranks_give_the_chain_trace
       else fail llm_tree_ranks_give_the_chain_trace "$(cmp "$chain/w4a16-greedy.txt" \
           "$TMP/w4/w4a16-greedy.txt" 2>&1) $(head -c 300 "$TMP/w4/err")"; fi ;;
esac

# The ranks re-estimated 1 wide, 8 deep (a chain's blocks of 8) and 2 deep
# (the measurement's own cut).
mkdir -p "$TMP/rf"
"$BUILD/llm" accept --refit --out "$TMP/rf" --tree-width 1 "$TMP/w4/w4a16-greedy.ranks" \
    >/dev/null 2>"$TMP/err"
"$BUILD/llm" accept --refit --out "$TMP/rf" --tree-depth 2 "$TMP/w4/w4a16-greedy.ranks" \
    >/dev/null 2>>"$TMP/err"
rows() { grep -v '^#' "$1" 2>/dev/null; }
if [ -n "$(rows "$TMP/rf/w4a16-greedy-d2.tree")" ] &&
   [ "$(rows "$TMP/rf/w4a16-greedy-d2.tree")" = "$(rows "$TMP/w4/w4a16-greedy.tree")" ]
then pass llm_tree_refit_ranks
else fail llm_tree_refit_ranks "$(ls "$TMP/rf") $(head -c 300 "$TMP/err")"; fi

# The width-1 profile's row d, first value, against position d's measured
# acceptance in the chain's .dat, first table (rows stop at the deepest
# depth some block reached; the .dat says '-' past it).
bad=$(awk 'FNR == 1 { f++ }
    f == 1 && /^[0-9]/ { p1[++r] = $1 }
    f == 2 && /^$/ { f = 3 }
    f == 2 && /^[1-8] / && NF == 6 { if ($2 == "-") { if ($1 <= r) b++; next }
        d = p1[$1] - $2; if (!($1 in p1) || d > 1e-6 || d < -1.000001e-6) b++; n++ }
    END { print (n >= 4 ? b + 0 : "none") }' \
    "$TMP/rf/w4a16-greedy-w1.tree" "$chain/w4a16-greedy.dat" 2>/dev/null)
if [ "$bad" = 0 ]; then pass llm_tree_width1_is_the_chain
else fail llm_tree_width1_is_the_chain "bad: $bad; $(rows "$TMP/rf/w4a16-greedy-w1.tree" | head -8 | tr '\n' ' ')"; fi

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

expect_exit llm_tree_ranks_sampled 2 "$BUILD/llm" accept --model "$model" --prompts "$TMP/p.txt" \
    --out "$TMP" --ranks 4 --temp 1
expect_exit llm_tree_width_past_ranks 2 "$BUILD/llm" accept --model "$model" --prompts "$TMP/p.txt" \
    --out "$TMP" --ranks 4 --tree-width 5
expect_exit llm_tree_depth_alone 2 "$BUILD/llm" accept --model "$model" --prompts "$TMP/p.txt" \
    --out "$TMP" --tree-depth 4
expect_exit llm_tree_ranks_range 2 "$BUILD/llm" accept --model "$model" --prompts "$TMP/p.txt" \
    --out "$TMP" --ranks 33
expect_exit llm_tree_branching_needs_refit 2 "$BUILD/llm" accept --model "$model" \
    --prompts "$TMP/p.txt" --out "$TMP" --ranks 4 --tree-branching 2,1
expect_exit llm_tree_branching_past_k 2 "$BUILD/llm" accept --refit --out "$TMP/rf" \
    --tree-branching 5,1 "$TMP/w4/w4a16-greedy.ranks"
expect_exit llm_tree_branching_trailing_comma 2 "$BUILD/llm" accept --refit --out "$TMP/rf" \
    --tree-branching 2,1, "$TMP/w4/w4a16-greedy.ranks"
expect_exit llm_tree_options_need_ranks 2 "$BUILD/llm" accept --refit --out "$TMP/rf" \
    --tree-width 2 "$TMP/w4/w4a16-greedy.txt"
printf '# format: ranks 4\n# request: x\n0 1 7\n' >"$TMP/bad.ranks"
expect_exit llm_tree_refit_bad_rank 2 "$BUILD/llm" accept --refit --out "$TMP/rf" "$TMP/bad.ranks"
if grep -qF "bad.ranks:3:5: '7' is not a rank 0 .. 4" "$TMP/err"; then pass llm_tree_refit_bad_rank_where
else fail llm_tree_refit_bad_rank_where "$(cat "$TMP/err")"; fi
