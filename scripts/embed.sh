#!/bin/sh
# embed.sh NAME FILE — prints a C translation unit defining
# `const char NAME[]` with FILE's bytes (text), for built-in defaults.
set -eu
name=$1
file=$2
printf '/* Generated from %s by scripts/embed.sh; do not edit. */\n' "$file"
printf 'const char %s[] =\n' "$name"
sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/\t/\\t/g' -e 's/^/    "/' -e 's/$/\\n"/' "$file"
printf '    "";\n'
