#!/bin/sh
# llm-venv.sh — the Python environment of the real-model checks: creates
# (once) a virtual environment at build/venv of this repository, whatever
# the working directory, with the pinned set below, and prints the path of
# its python on standard output.
#
#   py=$(scripts/llm-venv.sh) || exit 1
#
# Pins: gguf (reads and writes GGUF), numpy, and llama-cpp-python, which pip
# builds from its sdist with llama.cpp's own defaults (CPU only, tuned for
# this machine's CPU: GGML_NATIVE): several minutes on two cores, once per
# machine, since pip keeps the wheel it built in its cache and a later
# install of the same pin reuses it. CMAKE_ARGS in the environment reaches
# that build, but pip's cache does not key on it: clear the cached wheel
# (`python3 -m pip cache remove llama_cpp_python`) when changing it.
#
# The environment is built afresh when the pins (or the interpreter's
# version) change: build/venv/.specsim-pins records what was installed and
# is written last, so an interrupted build is redone. When that stamp
# matches, the script only prints the path (a few tens of milliseconds).
# Two runs at once: the second waits for the first (build/venv.lock).
# pip's output goes to build/venv.log. PYTHON names the interpreter that
# makes the environment (default python3).
#
# Errors: one line "llm-venv: what failed" on standard error, exit 1; bad
# usage exit 2.
set -u
pins="gguf==0.19.0 numpy==2.4.6 llama-cpp-python==0.3.36"
llama=${pins##*llama-cpp-python==}
llama=${llama%% *}

die() { echo "llm-venv: $*" >&2; exit 1; }
case $# in
0) ;;
*) case $1 in
   -h | --help) sed -n '2,26p' "$0"; exit 0 ;;
   *) echo "llm-venv: usage: scripts/llm-venv.sh (no arguments)" >&2; exit 2 ;;
   esac ;;
esac
root=$(cd "$(dirname "$0")/.." && pwd -P) || die "cannot find the repository root from $0"
venv=$root/build/venv
stamp=$venv/.specsim-pins
log=$root/build/venv.log
lock=$root/build/venv.lock

# "pins + interpreter version" of the environment as it stands, or nothing.
current() {
    [ -f "$stamp" ] && [ -x "$venv/bin/python" ] || return 0
    v=$("$venv/bin/python" -c 'import sys; print("python%d.%d" % sys.version_info[:2])' 2>/dev/null) ||
        return 0
    printf '%s %s\n' "$(cat "$stamp")" "$v"
}

base=${PYTHON:-python3}
command -v "$base" >/dev/null 2>&1 || die "no $base on PATH (a Python 3 with its venv module is needed)"
ver=$("$base" -c 'import sys; print("python%d.%d" % sys.version_info[:2])' 2>/dev/null) ||
    die "$base does not run"
want="$pins $ver"
if [ "$(current)" = "$want" ]; then
    echo "$venv/bin/python"
    exit 0
fi

mkdir -p "$root/build" || die "cannot create $root/build"
# One builder at a time: the lock is a directory holding the builder's pid;
# a lock whose process is gone is taken over.
said=0
while ! mkdir "$lock" 2>/dev/null; do
    holder=$(cat "$lock/pid" 2>/dev/null) || holder=
    if [ -n "$holder" ] && ! kill -0 "$holder" 2>/dev/null; then
        rm -rf "$lock"
        continue
    fi
    if [ "$said" -eq 0 ]; then
        echo "llm-venv: waiting for another llm-venv (pid ${holder:-?}) building build/venv" >&2
        said=1
    fi
    sleep 3
done
trap 'rm -rf "$lock"' EXIT
trap 'exit 1' HUP INT TERM
echo $$ > "$lock/pid"
# Another run may have finished the job while this one waited.
if [ "$(current)" = "$want" ]; then
    echo "$venv/bin/python"
    exit 0
fi

lastline() { grep -v '^[[:space:]]*$' "$log" | tail -n 1; }
rm -f "$stamp"
rm -rf "$venv" || die "cannot remove the old $venv"
# pip's cache holds the wheels it built, keyed by where the sdist came from:
# one there usually means no build (a wheel built from another copy of the
# sdist does not count, so this note can be optimistic).
if "$base" -m pip cache list "llama_cpp_python-$llama-*" 2>/dev/null | grep -q '\.whl'; then
    echo "llm-venv: creating build/venv (llama-cpp-python $llama from pip's wheel cache; log: build/venv.log)" >&2
else
    echo "llm-venv: building llama-cpp-python $llama from source (several minutes, once per machine; log: build/venv.log)" >&2
fi
{ echo "# llm-venv.sh $(date -u '+%Y-%m-%dT%H:%M:%SZ'): $base ($ver), $pins"; } > "$log" 2>/dev/null ||
    die "cannot write $log"
"$base" -m venv "$venv" >> "$log" 2>&1 ||
    die "$base -m venv $venv failed (is the venv module installed? see build/venv.log): $(lastline)"
# shellcheck disable=SC2086  # the pins are words
"$venv/bin/python" -m pip install --no-input --progress-bar off $pins >> "$log" 2>&1 ||
    die "pip could not install $pins (see build/venv.log): $(lastline)"
"$venv/bin/python" -c 'import gguf, numpy, llama_cpp' >> "$log" 2>&1 ||
    die "the new environment cannot import gguf, numpy and llama_cpp (see build/venv.log): $(lastline)"
"$venv/bin/python" -m pip freeze >> "$log" 2>&1
{ echo "$pins" > "$stamp.tmp.$$" && mv "$stamp.tmp.$$" "$stamp"; } || die "cannot write $stamp"
echo "$venv/bin/python"
