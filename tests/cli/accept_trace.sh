#!/bin/sh
# Acceptance traces across gamma: the converter (scripts/accept-trace-convert.sh)
# round-trips a per-token log and turns block lengths into positions as
# counted by hand; a per-block trace run at another gamma is refused at its
# key with exit 2, the per-position example runs.
. tests/cli/lib.sh
CONV=scripts/accept-trace-convert.sh

# A per-token log: blocks 1101 | 1111 | 0 (one token per line, - ends a block).
printf '1\n1\n0\n1\n-\n1\n1\n1\n1\n-\n0\n-\n' >"$TMP/tok.txt"
printf '# format: positions\n1101\n1111\n0\n' >"$TMP/pos.want"
if sh "$CONV" "$TMP/tok.txt" >"$TMP/pos.txt" && cmp -s "$TMP/pos.txt" "$TMP/pos.want"; then
    pass convert_tokens; else fail convert_tokens "$(cat "$TMP/pos.txt")"; fi
if sh "$CONV" --to-tokens "$TMP/pos.txt" >"$TMP/tok2.txt" && cmp -s "$TMP/tok.txt" "$TMP/tok2.txt"; then
    pass convert_round_trip; else fail convert_round_trip "$(cat "$TMP/tok2.txt")"; fi
# Blank-line block ends and comments read the same.
printf '# log\n1\n1\n0\n1\n\n\n1\n1\n1\n1\n\n0\n' | sh "$CONV" >"$TMP/pos3.txt"
if cmp -s "$TMP/pos3.txt" "$TMP/pos.want"; then pass convert_blank_ends; else
    fail convert_blank_ends "$(cat "$TMP/pos3.txt")"; fi
# Lengths at gamma 3: 3 -> 111, 0 -> 0, 2 -> 110.
printf '3\n0\n2\n' | sh "$CONV" --from-lengths 3 >"$TMP/len.txt"
printf '# format: positions\n111\n0\n110\n' >"$TMP/len.want"
if cmp -s "$TMP/len.txt" "$TMP/len.want"; then pass convert_lengths; else
    fail convert_lengths "$(cat "$TMP/len.txt")"; fi
expect_exit convert_length_above_gamma 2 sh "$CONV" --from-lengths 2 "$TMP/len.want"
printf '1\n2\n' >"$TMP/bad.txt"
expect_exit convert_bad_token 2 sh "$CONV" "$TMP/bad.txt"
if grep -q "^accept-trace-convert: $TMP/bad.txt:2: " "$TMP/err"; then pass convert_bad_where; else
    fail convert_bad_where "$(cat "$TMP/err")"; fi

# A file name with '=' is a file, not an awk assignment (issue 28: the
# converter used to read standard input instead and print no block).
printf '1\n0\n' >"$TMP/a=b.txt"
printf '# format: positions\n10\n' >"$TMP/eq.want"
# (named bare, as awk reads only a NAME=... operand as an assignment)
conv_abs="$PWD/$CONV"
if (cd "$TMP" && sh "$conv_abs" a=b.txt </dev/null >eq.txt) && cmp -s "$TMP/eq.txt" "$TMP/eq.want"; then
    pass convert_name_with_equals; else fail convert_name_with_equals "$(cat "$TMP/eq.txt")"; fi
# A second input file is refused, not ignored.
expect_exit convert_two_inputs 2 sh "$CONV" "$TMP/tok.txt" "$TMP/tok.txt"
# The recorded gamma: "00" is 0 (it used to pass, and a length 0 became an
# empty block), above 1024 (the simulator's largest) is refused at once
# instead of writing lines of N characters.
expect_exit convert_gamma_00 2 sh "$CONV" --from-lengths 00 "$TMP/len.txt"
if grep -q "from 1 to 1024), got '00'" "$TMP/err"; then pass convert_gamma_00_says; else
    fail convert_gamma_00_says "$(cat "$TMP/err")"; fi
printf '5\n' >"$TMP/len5.txt"
expect_exit convert_gamma_huge 2 timeout 10 sh "$CONV" --from-lengths 99999999999 "$TMP/len5.txt"
expect_exit convert_gamma_1025 2 sh "$CONV" --from-lengths 1025 "$TMP/len5.txt"

# The per-block example at another gamma: refused at acceptance.file.
expect_exit lengths_other_gamma 2 "$SPECSIM" run scenarios/examples/accept-trace.yaml \
    --set protocol.gamma=8
if grep -q '^specsim: scenarios/examples/accept-trace.yaml:10:9: acceptance.file: .*blocks here have gamma = 8' "$TMP/err"; then
    pass lengths_other_gamma_where; else fail lengths_other_gamma_where "$(cat "$TMP/err")"; fi
expect_exit positions_example 0 "$SPECSIM" run scenarios/examples/accept-positions.yaml \
    --set duration=20s --set warmup=2s
