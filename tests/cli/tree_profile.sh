# Tree acceptance profiles (acceptance: {model: tree, profile: PATH},
# docs/formats.md "Tree acceptance profiles"): a profile loads as the same
# rows given inline as p (the same run, event for event, and the same closed
# form, E[a + 1] counted by hand); check writes the profile back by its
# absolute path and the written scenario runs the same; the SmolLM2-135M
# profile measured by build/llm accept --ranks (scenarios/real/accept/)
# simulates to the closed form's expected accepted length within the run's
# confidence interval. Bad profiles: tests/data/scenarios/badref/tree-profile-*.
. tests/cli/lib.sh

scen() { # scen TREE ACCEPTANCE DURATION
    cat <<EOF
name: tree-profile
duration: $3
warmup: 2s
seed: 7
protocol: {mode: sync, tree: $1}
acceptance: $2
tenants:
  count: 2
  edge: {draft_time: 10ms}
  network: {rtt: 30ms, jitter: none}
  workload: {arrival: poisson, rate: 20/min, prompt_tokens: 64, output_tokens: 64}
cloud:
  verify_time: 5ms
EOF
}
hand=$(pwd)/tests/data/tree/hand.tree
scen "{branching: [2, 2, 1]}" "{model: tree, profile: $hand}" 40s >"$TMP/prof.yaml"
scen "{branching: [2, 2, 1]}" "{model: tree, p: [[0.5, 0.2, 0.1], [0.6, 0.3]]}" 40s >"$TMP/inl.yaml"
"$SPECSIM" run "$TMP/prof.yaml" --quiet --trace "$TMP/prof.csv" >/dev/null 2>"$TMP/err"
"$SPECSIM" run "$TMP/inl.yaml" --quiet --trace "$TMP/inl.csv" >/dev/null 2>>"$TMP/err"
if [ -s "$TMP/prof.csv" ] && cmp -s "$TMP/prof.csv" "$TMP/inl.csv"; then pass tree_profile_is_p
else fail tree_profile_is_p "$(cmp "$TMP/prof.csv" "$TMP/inl.csv" 2>&1) $(head -c 300 "$TMP/err")"; fi

# E[a] by hand: depth 1 holds ranks 1, 2 (0.5 + 0.2 = 0.7); depth 2 their
# ranks 1, 2 under the second row (0.7 x 0.9 = 0.63); depth 3 one rank-1
# child each under the second row repeating (0.63 x 0.6 = 0.378): E[a + 1] =
# 1 + 0.7 + 0.63 + 0.378 = 2.708.
"$SPECSIM" analytic "$TMP/prof.yaml" >"$TMP/an" 2>"$TMP/err"
if grep -Eq '^accepted_len_expected: +2\.708$' "$TMP/an"; then pass tree_profile_analytic_by_hand
else fail tree_profile_analytic_by_hand "$(grep accepted_len "$TMP/an") $(head -c 300 "$TMP/err")"; fi

"$SPECSIM" check "$TMP/prof.yaml" >"$TMP/c.yaml" 2>"$TMP/err"
"$SPECSIM" run "$TMP/c.yaml" --quiet --trace "$TMP/c.csv" >/dev/null 2>>"$TMP/err"
if grep -qF "  profile: $hand" "$TMP/c.yaml" && ! grep -q '^  p:' "$TMP/c.yaml" &&
   cmp -s "$TMP/prof.csv" "$TMP/c.csv"
then pass tree_profile_check_round_trip
else fail tree_profile_check_round_trip "$(grep -A3 '^acceptance' "$TMP/c.yaml") $(head -c 300 "$TMP/err")"; fi

# The measured profile: a budget tree of 32 nodes among the draft's top 4
# (Sequoia's best tree under the profile). The simulated mean of a + 1 over
# the run's verdicts against the closed form: within 4 standard errors of
# the mean (the verdicts' own sample deviation; blocks are independent
# under the model).
prof=$(pwd)/scenarios/real/accept/w4a16-greedy.tree
scen "{budget: 32, top_k: 4}" "{model: tree, profile: $prof}" 300s >"$TMP/real.yaml"
"$SPECSIM" analytic "$TMP/real.yaml" >"$TMP/an" 2>"$TMP/err"
"$SPECSIM" run "$TMP/real.yaml" --quiet --trace "$TMP/real.csv" >/dev/null 2>>"$TMP/err"
exp=$(awk '$1 == "accepted_len_expected:" { print $2 }' "$TMP/an")
res=$(awk -F, -v e="$exp" '$3 == "verify_end" { x = $5 + 1; n++; s += x; q += x * x }
    END { if (n < 500 || e == "") { print "none"; exit }
          m = s / n; se = sqrt((q / n - m * m) / (n - 1))
          printf "%s %.4f %.4f %d\n", (m - e < 4 * se && e - m < 4 * se) ? "ok" : "far", m, se, n }' \
    "$TMP/real.csv" 2>/dev/null)
case "$res" in ok*) pass "tree_profile_measured_sim_vs_analytic ($res vs $exp)" ;;
*) fail tree_profile_measured_sim_vs_analytic "sim '$res', analytic '$exp' $(head -c 300 "$TMP/err")" ;; esac
