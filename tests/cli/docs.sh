# The documentation in the repository stays true to the tree:
#   metrics_documented  every key `specsim run --json` prints on the default
#                        scenario is documented in docs/metrics.md;
#   scenario_keys_documented  every key `specsim check` prints for the
#                        scenarios in scenarios/ is documented in
#                        docs/formats.md;
#   links_resolve        every relative link (and its #anchor) and every
#                        `path/to/file` reference in README.md and docs/*.md
#                        names a file or heading that exists;
#   no_outside_refs      no file in the tree cites a document that is not in
#                        it (the design contract, notes files) or an
#                        absolute path of some machine;
#   readme_example_output  the output the README's worked example shows is
#                        what `specsim run scenarios/default.yaml` prints,
#                        wall_s and events_per_s aside (they vary by run);
#   readme_short         README.md is at most 250 lines: a newcomer's first
#                        page (issue 27); the rest belongs in docs/guide.md.
# Each check lists every offender, not only the first.
. tests/cli/lib.sh

DOCS="README.md docs/guide.md docs/design.md docs/metrics.md docs/formats.md docs/testbed.md
      docs/llm.md docs/validation.md"

# --- metrics_documented ---------------------------------------------------
# Top-level keys are the lines indented by two spaces (output_json writes
# one key per line; the per-group sources object stays on its key's line).
# A key NAME_ci95 is documented by NAME and the _ci95 convention.
if "$SPECSIM" run scenarios/default.yaml --json >"$TMP/run.json" 2>"$TMP/err"; then
    sed -n 's/^  "\([^"]*\)":.*/\1/p' "$TMP/run.json" >"$TMP/keys"
    : >"$TMP/missing"
    while read -r key; do
        name=${key%_ci95}
        grep -qF "\`$name\`" docs/metrics.md || echo "$key" >>"$TMP/missing"
        if [ "$name" != "$key" ] && ! grep -qF '_ci95' docs/metrics.md; then
            echo "$key (the _ci95 convention)" >>"$TMP/missing"
        fi
    done <"$TMP/keys"
    if [ "$(wc -l <"$TMP/keys")" -lt 30 ]; then
        fail metrics_documented "only $(wc -l <"$TMP/keys") keys in the JSON output"
    elif [ -s "$TMP/missing" ]; then
        fail metrics_documented "not in docs/metrics.md: $(sort -u "$TMP/missing" | tr '\n' ' ')"
    else
        pass metrics_documented
    fi
else
    fail metrics_documented "specsim run --json failed: $(head -c 300 "$TMP/err")"
fi

# --- scenario_keys_documented ---------------------------------------------
# Every key `specsim check` writes for the scenarios in scenarios/ (every
# section, card and default filled in) has its row in docs/formats.md.
: >"$TMP/missing"
for f in scenarios/*.yaml scenarios/*/*.yaml; do
    if ! "$SPECSIM" check "$f" >"$TMP/resolved" 2>"$TMP/err"; then
        echo "($f: check failed: $(head -c 200 "$TMP/err"))" >>"$TMP/missing"
        continue
    fi
    grep -v '^#' "$TMP/resolved" |
        sed -n 's/^ *\(- \)\{0,1\}\([a-z_0-9]*\):.*/\2/p' >>"$TMP/skeys"
done
sort -u "$TMP/skeys" >"$TMP/skeys.u" 2>/dev/null
while read -r key; do
    grep -qF "\`$key\`" docs/formats.md || echo "$key" >>"$TMP/missing"
done <"$TMP/skeys.u"
if [ "$(wc -l <"$TMP/skeys.u")" -lt 40 ]; then
    fail scenario_keys_documented "only $(wc -l <"$TMP/skeys.u") keys found $(cat "$TMP/missing")"
elif [ -s "$TMP/missing" ]; then
    fail scenario_keys_documented "not in docs/formats.md: $(tr '\n' ' ' <"$TMP/missing")"
else
    pass scenario_keys_documented
fi

# --- links_resolve ----------------------------------------------------------
# Text outside fenced code blocks (``` lines): examples there may name files
# a command would create.
prose() { awk '/^```/ { fence = !fence; next } !fence' "$1"; }

# GitHub's anchor for a heading: lower case, punctuation dropped, spaces to
# hyphens.
anchors() {
    prose "$1" | sed -n 's/^#\{1,6\} \{1,\}//p' | tr 'A-Z' 'a-z' |
        LC_ALL=C sed -e 's/[^a-z0-9 _-]//g' -e 's/ /-/g'
}

# Directories the repository ignores (/results/sweeps/ in .gitignore, and the
# build directory): a reference there names an output, not a file of the tree.
: >"$TMP/ignored"
[ -f .gitignore ] && sed -n 's|^/\([^*]*\)/$|\1/|p' .gitignore >"$TMP/ignored"
is_output() {
    case "$1" in build/*) return 0 ;; esac
    while read -r dir; do
        case "$1" in "$dir"*) return 0 ;; esac
    done <"$TMP/ignored"
    return 1
}

# Top-level entries of the tree: a `word/...` reference starting with one of
# them is a path; `B/s` or `tok/s` is not.
tops=$(ls -d -- */ | tr -d /)
is_path() {
    first=${1%%/*}
    for t in $tops; do [ "$t" = "$first" ] && return 0; done
    return 1
}

: >"$TMP/bad"
for doc in $DOCS; do
    [ -f "$doc" ] || { echo "$doc: missing" >>"$TMP/bad"; continue; }
    dir=$(dirname "$doc")
    # Markdown links and images: ](target)
    prose "$doc" | grep -o '](\([^)]*\))' | sed 's/^](\(.*\))$/\1/' |
    while read -r target; do
        case "$target" in http://* | https://* | mailto:*) continue ;; esac
        file=${target%%#*}
        frag=
        case "$target" in *'#'*) frag=${target#*#} ;; esac
        if [ -z "$file" ]; then path=$doc; else path=$dir/$file; fi
        if [ ! -e "$path" ]; then
            echo "$doc: link ($target): no such file" >>"$TMP/bad"
        elif [ -n "$frag" ]; then
            case "$path" in
            *.md) anchors "$path" | grep -qxF -- "$frag" ||
                      echo "$doc: link ($target): no such heading" >>"$TMP/bad" ;;
            esac
        fi
    done
    # Inline code that is a repository path: `sim/model/caltable.h`, `models/llm/`.
    prose "$doc" | grep -o '`[^` ]*/[^` ]*`' | tr -d '`' | sort -u |
    while read -r ref; do
        is_path "$ref" || continue
        case "$ref" in *'*'* | *'<'* | *NAME* | *FILE* | *PATH*) continue ;; esac   # a pattern
        is_output "$ref" && continue
        [ -e "$ref" ] || echo "$doc: \`$ref\`: no such file" >>"$TMP/bad"
    done
done
if [ -s "$TMP/bad" ]; then fail links_resolve "$(sort -u "$TMP/bad" | tr '\n' ';')"
else pass links_resolve; fi

# --- no_outside_refs --------------------------------------------------------
# The tracked files when this is a git checkout, else everything but build
# outputs. This script names the patterns, so it is left out.
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git ls-files >"$TMP/files"
else
    find . -path ./build -prune -o -type f -print | sed 's|^\./||' >"$TMP/files"
fi
grep -v -e '^tests/cli/docs\.sh$' -e '^build/' "$TMP/files" >"$TMP/files2"
: >"$TMP/outside"
while read -r f; do
    [ -f "$f" ] || continue
    grep -InE 'DESIGN|notes/|semantics\.md|/w[o]rk/|/h[o]me/' "$f" 2>/dev/null |
        sed "s|^|$f:|" | cut -c1-160 >>"$TMP/outside"
done <"$TMP/files2"
if [ -s "$TMP/outside" ]; then
    fail no_outside_refs "$(wc -l <"$TMP/outside") lines cite a document outside the tree or an absolute path:
$(cat "$TMP/outside")"
else
    pass no_outside_refs
fi

# --- readme_example_output ------------------------------------------------
# The block after "`make run` prints:" in README.md, against a real run.
awk '/`make run` prints:/ {f=1; next} f && /^```$/ && !g {g=1; next} g && /^```$/ {exit} g' \
    README.md | grep -v -e '^  wall_s ' -e '^  events_per_s ' >"$TMP/readme.out"
if "$SPECSIM" run scenarios/default.yaml 2>"$TMP/err" |
    grep -v -e '^  wall_s ' -e '^  events_per_s ' >"$TMP/real.out"; then
    if [ "$(wc -l <"$TMP/readme.out")" -lt 40 ]; then
        fail readme_example_output "README.md: the worked example's output block not found"
    elif diff "$TMP/readme.out" "$TMP/real.out" >"$TMP/diff"; then
        pass readme_example_output
    else
        fail readme_example_output "README.md's worked example differs from a real run:
$(head -n 20 "$TMP/diff")"
    fi
else
    fail readme_example_output "specsim run failed: $(head -c 300 "$TMP/err")"
fi

# --- readme_short -----------------------------------------------------------
n=$(wc -l <README.md)
if [ "$n" -le 250 ]; then pass readme_short
else fail readme_short "README.md has $n lines (at most 250: move sections to docs/guide.md)"; fi
