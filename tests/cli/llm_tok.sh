#!/bin/sh
# llm_tok.sh — the tokenizer (kernels/llm/tok.c) against llama.cpp on the
# real model (scripts/fetch-model.sh): for each text, our ids (test_tok
# --ids, special tokens parsed) must be llama.cpp's, one by one
# (scripts/llm/llamacpp-tokenize.py in the Python of scripts/llm-venv.sh,
# built once: minutes), and the concatenation of our pieces must be the
# text itself and what llama.cpp's llama_detokenize makes of the ids.
# Texts: tests/data/llm/tok-text.txt (prose, code with tabs, numbers, a
# chat template, a dozen scripts, emoji, odd white space) and three drawn
# at random (fixed seeds) from its characters, runs of them and
# special-token texts, so that the pre-tokenizer meets unusual neighbours.
# No model or no Python environment is a failure, not a skip.
. tests/cli/lib.sh
bin=$BUILD/tests/llm/test_tok
text=tests/data/llm/tok-text.txt

if ! model=$(scripts/fetch-model.sh 2>"$TMP/err"); then
    fail llm_tok_model "$(tail -n 1 "$TMP/err")"
    exit 1
fi
if ! py=$(scripts/llm-venv.sh 2>"$TMP/err"); then
    fail llm_tok_venv "$(tail -n 1 "$TMP/err")"
    exit 1
fi

# The random texts: N characters, each a character of the text, a run of
# one, or one of a few strings the cutting rules single out.
"$py" - "$text" "$TMP" <<'EOF' 2>"$TMP/err" || { fail llm_tok_gen "$(tail -n 1 "$TMP/err")"; exit 1; }
import random, sys
chars = sorted(set(open(sys.argv[1], encoding="utf-8").read()))
extra = ["<|im_start|>", "<|im_end|>", "<|endoftext|>", "<file_sep>", "'s", "'ll", "'RE",
         " ", "  ", "\n", "\n\n", "\t", "\r\n", "\u00a0", "\u3000", "12", "\u0663", "\u00b2",
         "\u0301", "\u200d", "<|im_"]
for seed in (1, 2, 3):
    r = random.Random(seed)
    out = []
    while len(out) < 3000:
        k = r.random()
        if k < 0.15:
            out.append(r.choice(extra))
        elif k < 0.3:
            out.append(r.choice(chars) * r.randint(1, 6))
        else:
            out.append(r.choice(chars))
    with open(f"{sys.argv[2]}/random{seed}.txt", "w", encoding="utf-8", newline="") as f:
        f.write("".join(out))
EOF

# compare NAME FILE
compare() {
    name=$1 f=$2
    if ! "$bin" --ids "$model" "$f" "$TMP/$name.dec" >"$TMP/$name.our" 2>"$TMP/err"; then
        fail "llm_tok_ids_$name" "test_tok --ids: $(tail -n 1 "$TMP/err")"
        return
    fi
    # llama.cpp prints notes on stderr even when quiet: only the last line counts.
    if ! "$py" scripts/llm/llamacpp-tokenize.py "$model" "$f" "$TMP/$name.ref" \
        "$TMP/$name.refdec" 2>"$TMP/err"; then
        fail "llm_tok_ids_$name" "llamacpp-tokenize.py: $(tail -n 1 "$TMP/err")"
        return
    fi
    # "OURS REF DIFFERING FIRST": id counts, positions that differ (a
    # position only one side has counts), the first such (1-based), 0 if none.
    res=$(awk 'NR == FNR { a[FNR] = $0; na = FNR; next }
               { nb = FNR; if (a[FNR] != $0) { d++; if (!first) first = FNR } }
               END { n = na > nb ? na : nb
                     for (i = nb + 1; i <= na; i++) { d++; if (!first) first = i }
                     printf "%d %d %d %d\n", na, nb, d, first }' \
        "$TMP/$name.our" "$TMP/$name.ref")
    # shellcheck disable=SC2086  # four numbers
    set -- $res
    echo "  $name: $1 ids, llama.cpp $2, $3 differ"
    if [ "$1" -gt 0 ] && [ "$3" -eq 0 ]; then
        pass "llm_tok_ids_$name"
    else
        fail "llm_tok_ids_$name" "$1 ids, llama.cpp $2, $3 positions differ, the first at" \
            "id $4: ours $(sed -n "$4p" "$TMP/$name.our"), llama.cpp's $(sed -n "$4p" "$TMP/$name.ref")"
    fi
    if cmp -s "$TMP/$name.dec" "$f"; then pass "llm_tok_decode_$name"; else
        fail "llm_tok_decode_$name" "our pieces do not give the text back: $(cmp "$TMP/$name.dec" "$f" 2>&1)"
    fi
    if cmp -s "$TMP/$name.dec" "$TMP/$name.refdec"; then pass "llm_tok_detok_$name"; else
        fail "llm_tok_detok_$name" "our pieces differ from llama_detokenize's text: $(cmp "$TMP/$name.dec" "$TMP/$name.refdec" 2>&1)"
    fi
}

compare text "$text"
# The text of the llama.cpp agreement test (tests/cli/llm_agree.sh), whose
# ids both sides must also share.
compare agree tests/data/llm/agree.txt
for seed in 1 2 3; do compare "random$seed" "$TMP/random$seed.txt"; done
