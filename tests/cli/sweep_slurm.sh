#!/bin/sh
# scripts/slurm-sweep.sh against a stand-in `sbatch` that runs each job at
# once (array tasks in turn): the shards it submits, merged by the dependent
# job, must give the file an unsharded sweep writes.
. "$(dirname "$0")/lib.sh"

mkdir -p "$TMP/bin"
cat >"$TMP/bin/sbatch" <<'SB'
#!/bin/sh
# Minimal sbatch: --array=0-K, --dependency (recorded), --wrap CMD.
array="" wrap="" 
while [ $# -gt 0 ]; do
    case "$1" in
        --array=*) array=${1#--array=} ;;
        --dependency=*) echo "$1" >>"$SBATCH_LOG" ;;
        --wrap) wrap=$2; shift ;;
    esac
    shift
done
n=$(($(cat "$SBATCH_LOG.n" 2>/dev/null || echo 100) + 1)); echo $n >"$SBATCH_LOG.n"
if [ -n "$array" ]; then
    i=${array%-*}
    while [ "$i" -le "${array#*-}" ]; do
        SLURM_ARRAY_TASK_ID=$i sh -c "$wrap" || exit 1
        i=$((i + 1))
    done
else
    sh -c "$wrap" || exit 1
fi
echo "$n"
SB
chmod +x "$TMP/bin/sbatch"

cp tests/slurm/sweep.yaml "$TMP/s.yaml"
$SPECSIM sweep "$TMP/s.yaml" -j 2 --out "$TMP/ref.csv" 2>"$TMP/err"
SBATCH_LOG="$TMP/sbatch.log" PATH="$TMP/bin:$PATH" SPECSIM="$SPECSIM" \
    sh scripts/slurm-sweep.sh -n 4 -c 1 "$TMP/s.yaml" "$TMP/out.csv" >>"$TMP/err" 2>&1
rc=$?
if [ $rc -eq 0 ] && cmp -s "$TMP/out.csv" "$TMP/ref.csv" &&
   grep -q -- '--dependency=afterok:101' "$TMP/sbatch.log"; then
    pass slurm_sweep_merged
else
    fail slurm_sweep_merged "exit $rc; $(tail -c 400 "$TMP/err")"
fi

# A failing sbatch stops the script with an error (no merge job is queued
# behind an empty dependency).
mkdir -p "$TMP/badbin"
printf '#!/bin/sh\necho "sbatch: error: invalid partition" >&2\nexit 1\n' >"$TMP/badbin/sbatch"
chmod +x "$TMP/badbin/sbatch"
PATH="$TMP/badbin:$PATH" SPECSIM="$SPECSIM" \
    sh scripts/slurm-sweep.sh -n 2 "$TMP/s.yaml" "$TMP/out2.csv" >"$TMP/err2" 2>&1
rc=$?
if [ $rc -ne 0 ] && grep -q 'sbatch failed' "$TMP/err2"; then pass slurm_sbatch_failure_reported
else fail slurm_sbatch_failure_reported "exit $rc; $(tail -c 300 "$TMP/err2")"; fi

# --dry-run after the positional arguments still only prints (sbatch is
# the failing stand-in: it must not be called).
PATH="$TMP/badbin:$PATH" SPECSIM="$SPECSIM" \
    sh scripts/slurm-sweep.sh -n 2 "$TMP/s.yaml" "$TMP/out3.csv" --dry-run >"$TMP/err3" 2>&1
rc=$?
if [ $rc -eq 0 ] && grep -q -- '--array=0-1' "$TMP/err3" && [ ! -e "$TMP/out3.csv" ]; then
    pass slurm_dry_run_any_position
else fail slurm_dry_run_any_position "exit $rc; $(tail -c 300 "$TMP/err3")"; fi
