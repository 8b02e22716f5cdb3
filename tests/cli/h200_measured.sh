# scripts/validate-h200.sh against the measurements made on an NVIDIA H200
# (results/validation/h200-gemm.csv, h200-hf-steps.csv; docs/validation.md,
# "An H200, measured here"). cuBLAS, cuBLASLt and Hugging Face transformers
# are not this project's code. What is judged against them, and what only
# guards what is recorded:
#   h200_validate_runs     the script runs and prints one row per measurement
#                          (every CSV data row), no specsim call failing;
#   h200_row_defined       the script's plumbing: a row's error is
#                          (specsim - measured) / measured, specsim's time
#                          asked of `specsim step linear` here;
#   h200_gemm_GROUP        the median |error| of the linear layers of a
#                          group (precision x side of the ridge) stays at or
#                          below the value recorded in docs/validation.md + 2
#                          percentage points: GUARDS, not targets, that fail
#                          a change undoing the agreement;
#   h200_inductor_decode   the decode step (B = 1) of llama-2-7b as
#                          TorchInductor compiles transformers (fused
#                          element-wise kernels, cuBLAS GEMMs) is within 5%
#                          of the model, issue 23's target for single-GPU
#                          decode; its verification iteration (32 x 5) is
#                          not (the model is 19% fast there, recorded as a
#                          guard of 21%);
#   h200_not_slower_than_hf  no whole step is predicted more than 5% slower
#                          than Hugging Face transformers measured it: the
#                          service model stands for an efficient engine, and
#                          HF (unfused element-wise kernels) is a slow one.
. tests/cli/lib.sh

if sh scripts/validate-h200.sh "$SPECSIM" >"$TMP/out" 2>"$TMP/err"; then
    want=$(( $(wc -l <results/validation/h200-gemm.csv) - 1 +
             $(wc -l <results/validation/h200-hf-steps.csv) - 1 ))
    got=$(grep -c '^| \(gemm\|hf\|inductor\) [^|]* | [^|]* x\{0,1\}[^|]* | [0-9]' "$TMP/out")
    if [ "$got" -eq "$want" ]; then pass h200_validate_runs
    else fail h200_validate_runs "$got table rows, want $want"; fi
else
    fail h200_validate_runs "$(head -c 400 "$TMP/err")"
fi

# The first fp16 row of llama-2-70b's down projection at M = 64, by hand.
meas=$(awk -F, '$2 == "llama-2-70b" && $3 == "down" && $6 == 64 && $7 == "fp16" { printf "%.1f", $8 }' \
    results/validation/h200-gemm.csv)
t=$("$SPECSIM" step linear --hardware h200 --model llama-2-70b --op down --tokens 64 |
    awk -F, 'NR == 2 { printf "%.1f", $5 * 1e6 }')
err=$(awk -v t="$t" -v m="$meas" 'BEGIN { printf "%+.1f", 100 * (t - m) / m }')
if [ -n "$meas" ] && grep -qF "| gemm fp16 M<=128 | llama-2-70b down 8192x28672 M64 fp16 | $meas | $t | $err |" "$TMP/out"; then
    pass h200_row_defined
else fail h200_row_defined "want measured $meas, specsim $t, error $err; got $(grep 'llama-2-70b down.*M64 fp16' "$TMP/out")"; fi

# group|median |error| % recorded in docs/validation.md
limits="gemm fp16 M<=128|8.2
gemm fp8 M<=128|8.2
gemm fp16 M=256|14.5
gemm fp8 M=256|14.7
gemm fp16 M>=512|5.9
gemm fp8 M>=512|3.4"
echo "$limits" | while IFS='|' read -r group reached; do
    name=h200_$(echo "$group" | sed 's/<=/le/; s/>=/ge/; s/=/eq/; s/[^a-z0-9]\{1,\}/_/g')
    got=$(awk -F' *[|] *' -v g="$group" '$2 == g && $3 ~ /^[0-9]+$/ { print $4 }' "$TMP/out")
    if [ -z "$got" ]; then
        fail "$name" "no summary row for '$group'"
    elif awk -v got="$got" -v lim="$reached" 'BEGIN { exit !(got <= lim + 2.0) }'; then
        pass "$name"
    else
        fail "$name" "median |error| $got% > $reached% + 2 (the recorded guard)"
    fi
done

slow=$(awk -F' *[|] *' '$2 ~ /^hf / && $7 + 0 > 0 && $7 + 0 < 0.95 { print $3 ": " $7 }' "$TMP/out")
nhf=$(grep -c '^| hf [a-z]* | [a-z]' "$TMP/out")
if [ -z "$slow" ] && [ "$nhf" -gt 0 ]; then pass h200_not_slower_than_hf
else fail h200_not_slower_than_hf "$nhf rows; slower than HF by more than 5%: $slow"; fi

# inductor rows: group|limit on |error| %
echo "inductor decode|5
inductor verify|21" | while IFS='|' read -r group lim; do
    name=h200_$(echo "$group" | tr ' ' _)
    got=$(awk -F' *[|] *' -v g="$group" '$2 == g && $3 ~ /^[0-9]+$/ { print $5 }' "$TMP/out")
    if [ -n "$got" ] && awk -v got="$got" -v lim="$lim" 'BEGIN { exit !(got <= lim) }'; then
        pass "$name"
    else fail "$name" "worst |error| '$got'% > $lim%"; fi
done
