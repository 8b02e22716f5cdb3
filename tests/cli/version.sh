# --version on specsim and every subcommand: one line, "specsim VERSION
# (commit HASH)" with VERSION from the VERSION file (build/calibrate: the
# same with "calibrate" for "specsim"); the same
# line in every output that must be reproducible (run --json, the sidecar of
# run --out, the sidecar of a sweep). Calibration tables: tests/unit/
# test_caltable_version.c.
. tests/cli/lib.sh

want_prefix="specsim $(tr -d ' \t\r\n' < VERSION) (commit "
v=$("$SPECSIM" --version 2>"$TMP/err")
rc=$?
case "$v" in
    "$want_prefix"*")") [ "$rc" -eq 0 ] && pass version_line || fail version_line "exit $rc" ;;
    *) fail version_line "got '$v', want '$want_prefix...)'" ;;
esac
[ "$(printf '%s\n' "$v" | wc -l)" -eq 1 ] && pass version_one_line || fail version_one_line "$v"

for c in run check analytic sweep merge roofline step; do
    got=$("$SPECSIM" "$c" --version 2>&1)
    [ "$got" = "$v" ] && pass "version_$c" || fail "version_$c" "got '$got'"
done
# Whatever follows --version (even a scenario that does not exist).
got=$("$SPECSIM" run "$TMP/none.yaml" --version 2>&1)
[ "$got" = "$v" ] && pass version_before_loading || fail version_before_loading "got '$got'"
# calibrate names itself, same number and commit; --version wins over a bad
# option, but a value that reads --version is a value.
got=$("$BUILD/calibrate" --version 2>&1)
[ "$got" = "calibrate ${v#specsim }" ] && pass version_calibrate || fail version_calibrate "got '$got'"
got=$("$BUILD/calibrate" --bogus --version 2>&1)
[ "$got" = "calibrate ${v#specsim }" ] && pass version_calibrate_first ||
    fail version_calibrate_first "got '$got'"
expect_exit version_calibrate_value 2 "$BUILD/calibrate" --model --version --bogus
"$BUILD/calibrate" --help >"$TMP/h" 2>&1
grep -q -- "--version" "$TMP/h" && pass version_in_calibrate_help || fail version_in_calibrate_help "$(cat "$TMP/h")"

short="--set duration=3s --set warmup=1s --reps 2 --quiet"
# shellcheck disable=SC2086
"$SPECSIM" run scenarios/default.yaml $short --json >"$TMP/r.json" 2>"$TMP/err"
got=$(sed -n 's/^  "version": "\(.*\)",$/\1/p' "$TMP/r.json")
[ "$got" = "$v" ] && pass version_in_json || fail version_in_json "got '$got' $(head -c 200 "$TMP/err")"

# The sidecar of --out: first line a comment naming the build, and it still
# loads as a scenario.
# shellcheck disable=SC2086
"$SPECSIM" run scenarios/default.yaml $short --out "$TMP/r.csv" >/dev/null 2>"$TMP/err"
first=$(head -n 1 "$TMP/r.scenario.yaml" 2>/dev/null)
[ "$first" = "# written by $v" ] && pass version_in_run_sidecar ||
    fail version_in_run_sidecar "first line '$first' $(head -c 200 "$TMP/err")"
expect_exit run_sidecar_loads 0 "$SPECSIM" check "$TMP/r.scenario.yaml"

cat >"$TMP/s.yaml" <<'YAML'
duration: 2s
warmup: 0s
replications: 1
tenants: {count: 2}
sweep:
  protocol.gamma: [2, 3]
YAML
"$SPECSIM" sweep "$TMP/s.yaml" --quiet -j1 --out "$TMP/s.csv" 2>"$TMP/err"
if grep -qxF "# written by $v" "$TMP/s.scenario.yaml" 2>/dev/null; then pass version_in_sweep_sidecar
else fail version_in_sweep_sidecar "$(head -n 3 "$TMP/s.scenario.yaml" 2>/dev/null) $(head -c 200 "$TMP/err")"; fi
# A sweep written by another build resumes: the version line is a comment.
sed "s/^# written by .*/# written by specsim 0.0.0 (commit other)/" "$TMP/s.scenario.yaml" >"$TMP/o"
mv "$TMP/o" "$TMP/s.scenario.yaml"
expect_exit sweep_resumes_across_versions 0 "$SPECSIM" sweep "$TMP/s.yaml" --quiet --resume \
    --out "$TMP/s.csv"
