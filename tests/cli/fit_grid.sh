# scripts/fit-published.sh, the grid search of docs/validation.md ("The
# fit"), against scripts/validate-published.sh on the shipped cards:
#   fit_grid_shipped_value   the grid at every GPU card's shipped roofline_p
#                            (a no-op edit of the scratch copy) prints the
#                            fit and holdout medians validate-published
#                            prints for the tree as it is;
#   fit_grid_moves           another value changes what it prints (the edit
#                            reaches the cards the script reads);
#   fit_grid_bad_*           bad usage exits 2.
. tests/cli/lib.sh

p=$(sed -n 's/^roofline_p: *//p' models/hardware/h200.yaml)
sh scripts/validate-published.sh "$SPECSIM" >"$TMP/vp" 2>/dev/null
want=$(awk -F' *[|] *' '$2 == "all" && ($3 == "fit" || $3 == "holdout") { printf "%s ", $7 }' "$TMP/vp")
if sh scripts/fit-published.sh "$SPECSIM" "roofline_p=$p,0.5" >"$TMP/grid" 2>"$TMP/err"; then
    got=$(awk -F' [|] ' -v s="roofline_p=$p" '$1 == s { printf "%s %s ", $2, $3 }' "$TMP/grid")
    if [ -n "$want" ] && [ "$got" = "$want" ]; then pass fit_grid_shipped_value
    else fail fit_grid_shipped_value "grid '$got', validate-published '$want'"; fi
    other=$(awk -F' [|] ' '$1 == "roofline_p=0.5" { printf "%s %s ", $2, $3 }' "$TMP/grid")
    if [ -n "$other" ] && [ "$other" != "$got" ]; then pass fit_grid_moves
    else fail fit_grid_moves "roofline_p 0.5 printed '$other', the shipped value '$got'"; fi
else
    fail fit_grid_shipped_value "$(head -c 400 "$TMP/err")"
    fail fit_grid_moves "the grid did not run"
fi
expect_exit fit_grid_bad_none 2 sh scripts/fit-published.sh "$SPECSIM"
expect_exit fit_grid_bad_key 2 sh scripts/fit-published.sh "$SPECSIM" no_such_key=1
expect_exit fit_grid_bad_arg 2 sh scripts/fit-published.sh "$SPECSIM" roofline_p
expect_exit fit_grid_bad_value 2 sh scripts/fit-published.sh "$SPECSIM" 'roofline_p=2|x'
expect_exit fit_grid_bad_empty 2 sh scripts/fit-published.sh "$SPECSIM" 'roofline_p=2,'
