# `make run` installs and builds only what running the default scenario
# needs (issue 27): planned with `make -n` into a scratch build directory,
# it installs in the minimal mode (scripts/install-deps.sh run), compiles
# sim/*/*.c and the generated sources, archives libspecsim.a (through
# its one linked object, libspecsim.o) and links
# build/specsim, and nothing else: no test program, calibrate, testbed,
# llm, kernel or CUDA object.
. tests/cli/lib.sh

# A make started by `make test` hands its jobserver to its children through
# MAKEFLAGS; the make planned here is a separate one.
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -n --no-print-directory run BUILD="$TMP/b" \
    >"$TMP/plan" 2>"$TMP/err"
rc=$?
if [ "$rc" -ne 0 ]; then
    fail make_run_plan "make -n run: exit $rc; $(head -c 300 "$TMP/err")"
    exit 1
fi

grep -qx '\./scripts/install-deps\.sh run' "$TMP/plan" && pass make_run_installs_minimal ||
    fail make_run_installs_minimal "$(grep install-deps "$TMP/plan")"

# Every file the plan writes with -o or ar: the objects of sim/ and gen/,
# the library and the binary.
{
    grep -o -- ' -o [^ ]*' "$TMP/plan" | sed 's/^ -o //'
    sed -n 's/^ar rcs \([^ ]*\).*/\1/p' "$TMP/plan"
} | sed "s|^$TMP/b/||" | sort -u >"$TMP/outputs"
grep -v -e '^sim/.*\.o$' -e '^gen/[^/]*\.o$' -e '^libspecsim\.[ao]$' -e '^specsim$' \
    "$TMP/outputs" >"$TMP/extra"
if [ ! -s "$TMP/extra" ]; then pass make_run_builds_specsim_only
else fail make_run_builds_specsim_only "also builds: $(head -n 10 "$TMP/extra" | tr '\n' ' ')"; fi
# (sim/ and its sub-folders: every source there is the simulator's.)
nsim=$(find sim -name '*.c' | wc -l)
nobj=$(grep -c '^sim/' "$TMP/outputs")
grep -qx specsim "$TMP/outputs" && [ "$nobj" -eq "$nsim" ] && pass make_run_links_specsim ||
    fail make_run_links_specsim "$nobj of $nsim sim objects; outputs: $(tr '\n' ' ' <"$TMP/outputs" | head -c 300)"
grep -q "^$TMP/b/specsim run scenarios/default.yaml\$" "$TMP/plan" && pass make_run_runs_default ||
    fail make_run_runs_default "$(tail -n 3 "$TMP/plan")"
