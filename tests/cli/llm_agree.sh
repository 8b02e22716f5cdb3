#!/bin/sh
# llm_agree.sh — the fp16 target against llama.cpp, a system nobody here
# wrote (issue 22): the same weights (llama.cpp loads the F16 copy that
# scripts/fetch-model.sh --f16 writes with the gguf package; `llm agree
# --f16` checks that our fp16 weights are that file's, bit for bit), the
# same ids (llama.cpp's tokenization of tests/data/llm/agree.txt, which
# tests/cli/llm_tok.sh holds equal to ours), teacher forced, sequences of
# 500 tokens. Bounds, on the first five sequences (2,500 positions; a
# full run of all 4,443 measured 0.9993 top-1 agreement, the 3 differing
# positions all near-ties, and a largest |logit difference| of 0.099):
#   - top-1 agreement at least 99.5% (the issue's target; `llm agree`
#     exits 1 below --min-top1);
#   - the largest |logit difference| over the full rows under 0.25: fp32
#     accumulation in another order moves logits by hundredths; a wrong
#     RoPE pairing, norm or head moves them by whole units (the scalar
#     reference of tests/llm/test_llm.c shows such a sabotage).
# No model, F16 copy or Python environment is a failure, not a skip.
. tests/cli/lib.sh

if ! model=$(scripts/fetch-model.sh 2>"$TMP/err"); then
    fail llm_agree_model "$(tail -n 1 "$TMP/err")"; exit 1
fi
if ! f16=$(scripts/fetch-model.sh --f16 2>"$TMP/err"); then
    fail llm_agree_f16 "$(tail -n 1 "$TMP/err")"; exit 1
fi
if ! py=$(scripts/llm-venv.sh 2>"$TMP/err"); then
    fail llm_agree_venv "$(tail -n 1 "$TMP/err")"; exit 1
fi

if ! "$py" scripts/llm/llamacpp-ref.py --tokenize "$model" tests/data/llm/agree.txt 500 \
        >"$TMP/all.ids" 2>"$TMP/err"; then
    fail llm_agree_ids "$(tail -n 1 "$TMP/err")"; exit 1
fi
# The first five sequences (paragraph mode: sequences are blank-line
# separated). Under the sanitizers (build/asan), which look for memory errors
# in the same code the optimised run measures, only the first sequence (500
# positions: the same forward pass, KV cache filled to the same length, the
# same bounds; it measured 500 of 500 top-1, largest difference 0.035, so
# 0.995 still allows at most 2 differing positions and fails on a third).
nseq=5; minpos=2000
case "$BUILD" in *asan*) nseq=1; minpos=500 ;; esac
awk -v RS= -v ORS='\n\n' -v n=$nseq 'NR <= n' "$TMP/all.ids" >"$TMP/a.ids"
npos=$(grep -c . "$TMP/a.ids")
if ! "$py" scripts/llm/llamacpp-ref.py "$f16" "$TMP/a.ids" "$TMP/a.ref" 2>"$TMP/err"; then
    fail llm_agree_ref "$(tail -n 1 "$TMP/err")"; exit 1
fi

"$BUILD/llm" agree --model "$model" --ids "$TMP/a.ids" --ref "$TMP/a.ref" --f16 "$f16" \
    --min-top1 0.995 >"$TMP/out" 2>"$TMP/err"
rc=$?
sed 's/^/  /' "$TMP/out"
# "positions N, top-1 agreement F (...)" and "largest |logit difference|: D ..."
pos=$(sed -n 's/^positions \([0-9]*\), top-1 agreement \([0-9.]*\).*/\1/p' "$TMP/out")
top1=$(sed -n 's/^positions \([0-9]*\), top-1 agreement \([0-9.]*\).*/\2/p' "$TMP/out")
diff=$(sed -n 's/^largest |logit difference|: \([0-9.e+-]*\) .*/\1/p' "$TMP/out")
if [ "$rc" -eq 0 ] && [ "${pos:-0}" -eq "$npos" ] && [ "$npos" -ge "$minpos" ] &&
   awk -v t="$top1" 'BEGIN { exit !(t >= 0.995) }'; then
    pass llm_agree_top1
else
    fail llm_agree_top1 "exit $rc, $pos of $npos positions, top-1 ${top1:-?}: $(tail -n 1 "$TMP/err")"
fi
if [ -n "$diff" ] && awk -v d="$diff" 'BEGIN { exit !(d < 0.25) }'; then
    pass llm_agree_logits
else
    fail llm_agree_logits "largest |logit difference| ${diff:-missing} (bound 0.25)"
fi
grep -q '^weights: 0 of [1-9][0-9]* values differ' "$TMP/out" && pass llm_agree_weights ||
    fail llm_agree_weights "$(grep '^weights' "$TMP/out")"
