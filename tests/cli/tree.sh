# Token trees (protocol.tree, docs/design.md "Token trees"): a tree whose
# every branching factor is 1 is the chain, to the last event (sync, async
# and cloud-spec); a wider
# tree's block, counted by hand in the trace, drafts one step per level and
# sends and verifies every node. (Bad trees: tests/data/scenarios/bad/tree-*.)
. tests/cli/lib.sh

# The same scenario twice: a chain of gamma 4 under iid alpha, and the tree
# [1, 1, 1, 1] under Sequoia's model with p = [alpha]. Four tenants that
# share the cloud (batching, queueing), the service model's draft times
# (per context), a jittered link: every event must coincide, because the
# tree's draw walks the chain with the iid model's own primitive on the
# same stream (sim/model/accept_tree.c) and its levels of one node cost the
# chain's draft steps (sim/entity/edge.c, tree_draft_times). Not a special
# case: the same code serves the wide tree below.
scen() { # scen PROTOCOL ACCEPTANCE
    cat <<EOF
name: tree-chain
duration: 40s
warmup: 2s
seed: 5
protocol: $1
acceptance: $2
tenants:
  count: 4
  network: {rtt: 30ms, jitter: {dist: exponential, mean: 2ms}}
  workload: {arrival: poisson, rate: 12/min, prompt_tokens: 64, output_tokens: 48}
EOF
}
scen "{mode: sync, gamma: 4}" "{model: iid, alpha: 0.7}" >"$TMP/chain.yaml"
scen "{mode: sync, tree: {branching: [1, 1, 1, 1]}}" "{model: tree, p: [0.7]}" >"$TMP/tree.yaml"
"$SPECSIM" run "$TMP/chain.yaml" --quiet --trace "$TMP/chain.csv" >/dev/null 2>"$TMP/err"
"$SPECSIM" run "$TMP/tree.yaml" --quiet --trace "$TMP/tree.csv" >/dev/null 2>>"$TMP/err"
# Not a vacuous match: the trace has verdicts of every length 0 .. 4.
lens=$(awk -F, '$3 == "verify_end" { print $5 }' "$TMP/chain.csv" 2>/dev/null | sort -u | tr -d '\n')
if [ -s "$TMP/chain.csv" ] && [ "$lens" = 01234 ] && cmp -s "$TMP/chain.csv" "$TMP/tree.csv"
then pass tree_of_ones_is_the_chain
else fail tree_of_ones_is_the_chain "lens '$lens'; $(cmp "$TMP/chain.csv" "$TMP/tree.csv" 2>&1) $(head -c 300 "$TMP/err")"; fi

# The same under async (window 3): pipelining, rollbacks and purges too.
scen "{mode: async, window: 3, gamma: 4}" "{model: iid, alpha: 0.7}" >"$TMP/achain.yaml"
scen "{mode: async, window: 3, tree: {branching: [1, 1, 1, 1]}}" "{model: tree, p: [0.7]}" \
    >"$TMP/atree.yaml"
"$SPECSIM" run "$TMP/achain.yaml" --quiet --trace "$TMP/achain.csv" >/dev/null 2>"$TMP/err"
"$SPECSIM" run "$TMP/atree.yaml" --quiet --trace "$TMP/atree.csv" >/dev/null 2>>"$TMP/err"
if [ -s "$TMP/achain.csv" ] && grep -q ',rollback,' "$TMP/achain.csv" &&
   cmp -s "$TMP/achain.csv" "$TMP/atree.csv"
then pass async_tree_of_ones_is_the_chain
else fail async_tree_of_ones_is_the_chain "$(cmp "$TMP/achain.csv" "$TMP/atree.csv" 2>&1) $(head -c 300 "$TMP/err")"; fi

# And under cloud-spec, the draft model on the cloud's GPU (service model,
# batched with the other tenants' work).
cs="cloud: {draft: models/llm/tinyllama-1.1b.yaml}"
{ scen "{mode: cloud-spec, gamma: 4}" "{model: iid, alpha: 0.7}"; echo "$cs"; } >"$TMP/cchain.yaml"
{ scen "{mode: cloud-spec, tree: {branching: [1, 1, 1, 1]}}" "{model: tree, p: [0.7]}"
  echo "$cs"; } >"$TMP/ctree.yaml"
"$SPECSIM" run "$TMP/cchain.yaml" --quiet --trace "$TMP/cchain.csv" >/dev/null 2>"$TMP/err"
"$SPECSIM" run "$TMP/ctree.yaml" --quiet --trace "$TMP/ctree.csv" >/dev/null 2>>"$TMP/err"
if [ -s "$TMP/cchain.csv" ] && grep -q ',cloud_draft_start,' "$TMP/cchain.csv" &&
   cmp -s "$TMP/cchain.csv" "$TMP/ctree.csv"
then pass cloud_spec_tree_of_ones_is_the_chain
else fail cloud_spec_tree_of_ones_is_the_chain "$(cmp "$TMP/cchain.csv" "$TMP/ctree.csv" 2>&1) $(head -c 300 "$TMP/err")"; fi

# [3, 2, 1] drafted on the cloud: per block three draft steps of 3, 6 and 6
# tokens (one per level), then a verify of 16.
sed -e 's/mode: cloud-spec, tree: {branching: \[1, 1, 1, 1\]}/mode: cloud-spec, tree: {branching: [3, 2, 1]}/' \
    -e 's/p: \[0.7\]/p: [0.5, 0.2, 0.1]/' "$TMP/ctree.yaml" >"$TMP/cwide.yaml"
"$SPECSIM" run "$TMP/cwide.yaml" --quiet --trace "$TMP/cwide.csv" >/dev/null 2>"$TMP/err"
steps=$(awk -F, '$2 == 0 && $3 == "cloud_draft_start" { printf "%s ", $5 }
                 $2 == 0 && $3 == "verify_start" { printf "v%s ", $5 }' "$TMP/cwide.csv" |
        cut -d' ' -f1-8)
if [ "$steps" = "3 6 6 v16 3 6 6 v16" ]; then pass cloud_spec_tree_levels
else fail cloud_spec_tree_levels "steps '$steps' $(head -c 300 "$TMP/err")"; fi

# [3, 2, 1]: 3 + 6 + 6 = 15 nodes in 3 levels. One tenant, draft_time
# 10 ms: each block is drafted in 3 steps (30 ms from draft_start to
# block_sent), sent as 15 drafts (block_sent and block_arrive carry 15),
# and every verdict accepts at most the depth, 3. No drift: the 30 ms are
# exact with perfect clocks (docs/formats.md, "drift").
cat >"$TMP/wide.yaml" <<'EOF'
name: tree-wide
duration: 20s
warmup: 1s
drift: {start: 0s, edge: 0, cloud: 0}
protocol: {mode: sync, tree: {branching: [3, 2, 1]}}
acceptance: {model: tree, p: [0.5, 0.2, 0.1]}
tenants:
  count: 1
  edge: {draft_time: 10ms}
  network: {rtt: 40ms, jitter: none}
cloud:
  verify_time: 5ms
EOF
"$SPECSIM" run "$TMP/wide.yaml" --quiet --trace "$TMP/wide.csv" >/dev/null 2>"$TMP/err"
bad=$(awk -F, '
    $3 == "draft_start" { t0 = $1; if ($5 != 15) n++ }
    $3 == "block_sent" { if ($5 != 15 || ($1 - t0) < 0.0299999 || ($1 - t0) > 0.0300001) n++; s++ }
    $3 == "block_arrive" && $5 != 15 { n++ }
    $3 == "verify_end" { if ($5 > 3) n++; if ($5 == 3) full++ }
    END { print (s > 10 && full > 0 ? n + 0 : "none") }' "$TMP/wide.csv" 2>/dev/null)
if [ "$bad" = 0 ]; then pass tree_block_counts
else fail tree_block_counts "bad events: $bad; $(head -c 300 "$TMP/err")"; fi

# check writes the tree back; the written scenario loads to the same run.
"$SPECSIM" check "$TMP/wide.yaml" >"$TMP/w1.yaml" 2>"$TMP/err"
"$SPECSIM" run "$TMP/w1.yaml" --quiet --trace "$TMP/w1.csv" >/dev/null 2>>"$TMP/err"
if grep -q '^  tree: {branching: \[3, 2, 1\]}$' "$TMP/w1.yaml" &&
   grep -q '^  gamma: 15$' "$TMP/w1.yaml" && cmp -s "$TMP/wide.csv" "$TMP/w1.csv"
then pass tree_check_round_trip
else fail tree_check_round_trip "$(grep -n 'tree\|gamma' "$TMP/w1.yaml") $(head -c 300 "$TMP/err")"; fi

# parents: the same [3, 2, 1] as an explicit list (3 roots, 2 children of
# each, 1 child of each of those), in level order: the same tree, so the
# same run.
par="-1, -1, -1, 0, 0, 1, 1, 2, 2, 3, 4, 5, 6, 7, 8"
sed "s/tree: {branching: \[3, 2, 1\]}/tree: {parents: [$par]}/" "$TMP/wide.yaml" >"$TMP/par.yaml"
"$SPECSIM" run "$TMP/par.yaml" --quiet --trace "$TMP/par.csv" >/dev/null 2>"$TMP/err"
if grep -q parents "$TMP/par.yaml" && cmp -s "$TMP/wide.csv" "$TMP/par.csv"
then pass tree_parents_same_as_branching
else fail tree_parents_same_as_branching "$(head -c 300 "$TMP/err")"; fi

# analytic: E[a + 1] of the tree by hand (tests/unit/test_tree.c):
# 1 + 0.8 + 0.56 + 0.28 = 2.64.
"$SPECSIM" analytic "$TMP/wide.yaml" >"$TMP/an" 2>"$TMP/err"
if grep -Eq '^accepted_len_expected: +2\.64$' "$TMP/an"; then pass tree_analytic_expected_len
else fail tree_analytic_expected_len "$(head -3 "$TMP/an") $(head -c 300 "$TMP/err")"; fi

# budget: the 5 most likely nodes under p, best first (tests/unit/test_tree.c
# derives the shape): E[a + 1] = 1 + 0.5 + 0.25 + 0.2 + 0.125 + 0.1 = 2.175;
# check writes the budget back and the written scenario runs the same.
sed "s/tree: {branching: \[3, 2, 1\]}/tree: {budget: 5, top_k: 3}/" "$TMP/wide.yaml" >"$TMP/bud.yaml"
"$SPECSIM" analytic "$TMP/bud.yaml" >"$TMP/an" 2>"$TMP/err"
"$SPECSIM" check "$TMP/bud.yaml" >"$TMP/b1.yaml" 2>>"$TMP/err"
"$SPECSIM" run "$TMP/bud.yaml" --quiet --trace "$TMP/bud.csv" >/dev/null 2>>"$TMP/err"
"$SPECSIM" run "$TMP/b1.yaml" --quiet --trace "$TMP/b1.csv" >/dev/null 2>>"$TMP/err"
if grep -Eq '^accepted_len_expected: +2\.175$' "$TMP/an" &&
   grep -q '^  tree: {budget: 5, top_k: 3}$' "$TMP/b1.yaml" && grep -q '^  gamma: 5$' "$TMP/b1.yaml" &&
   grep -q ',block_sent,0,5$' "$TMP/bud.csv" && cmp -s "$TMP/bud.csv" "$TMP/b1.csv"
then pass tree_budget
else fail tree_budget "$(head -3 "$TMP/an") $(grep tree "$TMP/b1.yaml") $(head -c 300 "$TMP/err")"; fi
