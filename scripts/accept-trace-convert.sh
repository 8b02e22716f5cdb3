#!/bin/sh
# accept-trace-convert.sh — acceptance traces into the per-position format
# that `acceptance: {model: trace}` replays at any gamma (docs/formats.md,
# "Acceptance trace files"), and back.
#
#   accept-trace-convert.sh [IN]                       per-token log -> positions
#   accept-trace-convert.sh --to-tokens [IN]           positions -> per-token log
#   accept-trace-convert.sh --from-lengths N [IN]      block lengths at gamma N -> positions
#
# IN defaults to standard input; the result goes to standard output.
#
# Per-token log: one drafted token per line, `1` when the target accepted it,
# `0` when not; a line `-` or a blank line ends a verified block (so does
# the end of the file); several in a row make no empty block. `#` lines are
# comments. Per-position output: the line `# format: positions`, then one
# line per block with its tokens' 0/1 in order (as logged: positions after a
# rejection are kept, and the simulator ignores them). --to-tokens writes a
# per-position file back as a per-token log with `-` after each block, so a
# log in that form comes back unchanged.
#
# Block lengths: the old per-block format (one accepted length per line),
# recorded with blocks of N drafts (1 to 1024, the simulator's largest
# gamma): a length v < N becomes v 1s and the rejecting 0, v = N becomes N
# 1s. A length above N is an error.
#
# Errors: "accept-trace-convert: IN:LINE: what" on standard error, exit 2.
set -u
mode=tokens
gamma=0
usage() {
    echo "accept-trace-convert: $1 (usage: accept-trace-convert.sh [--to-tokens |" \
        "--from-lengths N] [IN])" >&2
    exit 2
}
case "${1:-}" in
--to-tokens) mode=positions; shift ;;
--from-lengths)
    mode=lengths
    gamma=${2:-}
    # Digits only, at most four of them, then 1..1024 as a number ("00" is
    # 0; a huge N would make each block line N characters long).
    case "$gamma" in '' | *[!0-9]* | ?????*) gamma=0 ;; esac
    if [ "$gamma" -lt 1 ] || [ "$gamma" -gt 1024 ]; then
        echo "accept-trace-convert: --from-lengths needs the recorded gamma (an integer" \
            "from 1 to 1024), got '${2:-}'" >&2
        exit 2
    fi
    shift 2 ;;
-h | --help) sed -n '2,26p' "$0"; exit 0 ;;
-?*) usage "unknown option '$1'" ;;
esac
[ $# -le 1 ] || usage "one input file at most, got $#"
in=${1:--}
if [ "$in" != - ] && [ ! -r "$in" ]; then
    echo "accept-trace-convert: $in: cannot read" >&2
    exit 2
fi
name=$in
[ "$in" = - ] && name="<stdin>"
# The input comes on standard input and its name through the environment:
# awk would read a file operand with a '=' in its name as an assignment,
# and -v would expand backslashes in the name.
[ "$in" = - ] || exec <"$in"
CONV_NAME=$name
export CONV_NAME
exec awk -v mode="$mode" -v gamma="$gamma" '
function bad(what) {
    printf "accept-trace-convert: %s:%d: %s\n", ENVIRON["CONV_NAME"], NR, what > "/dev/stderr"
    failed = 1
    exit 2
}
function flush() {
    if (block != "") print block
    block = ""
}
BEGIN { if (mode != "positions") print "# format: positions" }
{ sub(/\r$/, ""); line = $0; gsub(/^[ \t]+|[ \t]+$/, "", line) }
line ~ /^#/ { next }
mode == "tokens" {
    if (line == "" || line == "-") { flush(); next }
    if (line != "0" && line != "1") bad("\"" line "\" is not 0, 1 or a block end (-)")
    block = block line
    next
}
mode == "positions" {
    if (line == "") next
    if (line !~ /^[01]+$/) bad("\"" line "\" is not a string of 0s and 1s")
    n = length(line)
    for (i = 1; i <= n; i++) print substr(line, i, 1)
    print "-"
    next
}
mode == "lengths" {
    if (line == "") next
    if (line !~ /^[0-9]+$/) bad("\"" line "\" is not an accepted length")
    v = line + 0
    if (v > gamma) bad(v " accepted drafts exceed the recorded gamma " gamma)
    s = ""
    for (i = 0; i < v; i++) s = s "1"
    if (v < gamma) s = s "0"
    print s
    next
}
END { if (!failed && mode == "tokens") flush(); if (failed) exit 2 }
'
