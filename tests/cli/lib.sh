# tests/cli/lib.sh — sourced by the CLI tests. BUILD names the build directory.
# pass/fail print the lines tests/run.sh counts.
: "${BUILD:=build}"
# shellcheck disable=SC2034  # used by the scripts that source this file
SPECSIM="$BUILD/specsim"
TMP=$(mktemp -d) || exit 1
trap 'rm -rf "$TMP"' EXIT
pass() { echo "PASS $1"; }
fail() { echo "FAIL $1"; shift; [ $# -gt 0 ] && echo "  $*"; }
# col FILE NAME: a metric from a one-row run CSV (the header, then one row).
col() {
    awk -F, -v n="$2" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == n) c = i }
                       NR == 2 && c { print $c }' "$1"
}
# expect_exit NAME CODE CMD... : the command exits with CODE
expect_exit() {
    name=$1; code=$2; shift 2
    "$@" >"$TMP/out" 2>"$TMP/err"
    rc=$?
    if [ "$rc" -eq "$code" ]; then pass "$name"; else
        fail "$name" "exit $rc, expected $code; stderr: $(head -c 400 "$TMP/err")"; fi
}
