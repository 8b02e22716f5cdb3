#!/bin/sh
# Replays the committed fuzzing corpora (tests/fuzz/corpus/TARGET) through
# each fuzz target linked with tests/fuzz/replay.c instead of libFuzzer: on
# the ASan+UBSan build every input must run without a sanitizer report or a
# broken round trip (tests/fuzz/fuzz.h), and leave nothing behind in its
# temporary directory. `make fuzz` grows the corpora; this keeps what they
# found fixed.
. "$(dirname "$0")/lib.sh"
for src in tests/fuzz/fuzz_*.c; do
    t=${src#tests/fuzz/fuzz_}
    t=${t%.c}
    bin=$BUILD/tests/fuzz/fuzz_$t
    corpus=tests/fuzz/corpus/$t
    n=$(find "$corpus" -type f 2>/dev/null | wc -l)
    if [ ! -x "$bin" ] || [ "$n" -eq 0 ]; then
        fail "fuzz_replay_$t" "missing $bin or an empty $corpus"
        continue
    fi
    mkdir "$TMP/$t"
    TMPDIR=$TMP/$t "$bin" "$corpus" >"$TMP/out" 2>"$TMP/err"
    rc=$?
    left=$(find "$TMP/$t" -mindepth 1 | head -n 3)
    if [ "$rc" -eq 0 ] && grep -qx "replayed $n inputs" "$TMP/out" && [ -z "$left" ]; then
        pass "fuzz_replay_$t"
    else
        fail "fuzz_replay_$t" "exit $rc; $(cat "$TMP/out"); left behind: $left;" \
            "$(grep -v '^replay: ' "$TMP/err" | head -c 600)" \
            "$(grep '^replay: ' "$TMP/err" | tail -n 1)"
    fi
done
