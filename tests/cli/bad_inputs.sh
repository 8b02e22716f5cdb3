# Every file in tests/data/scenarios/bad/, badref/ and badrun/ is rejected by
# `specsim check` with exit status 2 and a message naming FILE:LINE:COLUMN and
# the dotted key given on the file's first line: `# expect: LINE:COLUMN key`
# (the scenario itself), or `# expect: PATH:LINE:COLUMN key` when the error
# lies in a file the scenario references (matched as a path suffix). badrun/
# files load but fail the checks `run` makes before simulating: `run` must
# reject those (all but the sweep ones) with the same location.
. tests/cli/lib.sh
n=0
for f in tests/data/scenarios/bad/*.yaml tests/data/scenarios/badref/*.yaml \
         tests/data/scenarios/badrun/*.yaml; do
    [ -f "$f" ] || continue
    n=$((n + 1))
    name=bad_$(basename "$f" .yaml)
    exp=$(sed -n '1s/^# expect: *//p' "$f")
    loc=${exp%% *}
    key=${exp#* }
    "$SPECSIM" check "$f" >"$TMP/out" 2>"$TMP/err"
    rc=$?
    if [ "$rc" -ne 2 ]; then fail "$name" "exit $rc, expected 2"; continue; fi
    if [ -s "$TMP/out" ]; then fail "$name" "wrote to stdout on error"; continue; fi
    case "$loc" in
        *[!0-9:]*) where=$loc ;;   # names another file
        *) where=$f:$loc ;;
    esac
    if ! grep -qF "$where" "$TMP/err"; then fail "$name" "no $where in: $(cat "$TMP/err")"; continue; fi
    if [ -n "$key" ] && [ "$key" != "$exp" ] && ! grep -qF "$key" "$TMP/err"; then
        fail "$name" "key $key not named in: $(cat "$TMP/err")"; continue; fi
    pass "$name"
    case "$f" in */badrun/sweep-*) continue ;; */badrun/*) ;; *) continue ;; esac
    "$SPECSIM" run "$f" --quiet >"$TMP/out" 2>"$TMP/err"
    rc=$?
    if [ "$rc" -eq 2 ] && grep -qF "$where: $key:" "$TMP/err"; then pass "run_$name"
    else fail "run_$name" "exit $rc: $(cat "$TMP/err")"; fi
done
set -- tests/data/scenarios/badrun/*.yaml
[ $# -ge 9 ] && pass badrun_files || fail badrun_files "only $# files in badrun/"
[ "$n" -ge 12 ] && pass at_least_12_bad_inputs || fail at_least_12_bad_inputs "only $n"

# An empty scenario file, or one of comments only, is an input error (exit 2)
# for every command that loads one; it once ran every default silently.
: >"$TMP/empty.yaml"
printf '# nothing but a comment\n\n# and another\n' >"$TMP/comments.yaml"
for f in empty comments; do
    for cmd in run check analytic sweep; do
        "$SPECSIM" $cmd "$TMP/$f.yaml" >"$TMP/out" 2>"$TMP/err"
        rc=$?
        if [ "$rc" -eq 2 ] && grep -qF "$TMP/$f.yaml: empty scenario" "$TMP/err" &&
           [ ! -s "$TMP/out" ]; then pass "empty_scenario_${f}_$cmd"
        else fail "empty_scenario_${f}_$cmd" "exit $rc: $(cat "$TMP/err")"; fi
    done
done
"$SPECSIM" check - </dev/null >"$TMP/out" 2>"$TMP/err"
rc=$?
if [ "$rc" -eq 2 ] && grep -qF "<stdin>: empty scenario" "$TMP/err"; then pass empty_scenario_stdin
else fail empty_scenario_stdin "exit $rc: $(cat "$TMP/err")"; fi
