#!/bin/sh
# scripts/slurm-sweep.sh — run a specsim sweep as a Slurm job array.
#
#   scripts/slurm-sweep.sh [-n SHARDS] [-c CPUS] [--dry-run] SCENARIO OUT.csv [-- SBATCH_OPTS...]
#   (the options may also follow SCENARIO OUT.csv)
#
# Submits SHARDS array tasks (default 16); task I runs
#   specsim sweep SCENARIO --shard I/SHARDS --resume -j CPUS --quiet --out OUT.partI.csv
# and a merge job that starts when every task succeeded (afterok) and writes
# OUT.csv — the same file an unsharded run writes. --resume makes a requeued
# or resubmitted task continue where it stopped; rerunning this script after a
# partial failure resubmits everything, and finished shards return at once.
# SPECSIM (default: build/specsim, made absolute) names the binary; the jobs
# run in the current directory. Options after `--` go to both sbatch calls
# (e.g. -- --partition=short --time=02:00:00). --dry-run prints the commands.
set -eu

shards=16 cpus=1 dry=0 scenario="" out=""
usage() { sed -n '2,/^set /{/^#/p;}' "$0" | sed 's/^# \{0,1\}//'; exit "$1"; }
# Options may come before or after the two positional arguments; everything
# after `--` goes to sbatch.
while [ $# -gt 0 ]; do
    case "$1" in
        -n) [ $# -ge 2 ] || usage 2 >&2; shards=$2; shift 2 ;;
        -c) [ $# -ge 2 ] || usage 2 >&2; cpus=$2; shift 2 ;;
        --dry-run) dry=1; shift ;;
        -h|--help) usage 0 ;;
        --) shift; break ;;
        -*) echo "slurm-sweep: unknown option $1" >&2; usage 2 >&2 ;;
        *)
            if [ -z "$scenario" ]; then scenario=$1
            elif [ -z "$out" ]; then out=$1
            else echo "slurm-sweep: unexpected argument $1 (sbatch options go after --)" >&2; exit 2
            fi
            shift ;;
    esac
done
if [ -z "$scenario" ] || [ -z "$out" ]; then usage 2 >&2; fi
case "$shards" in ''|*[!0-9]*|0) echo "slurm-sweep: -n needs a count >= 1" >&2; exit 2 ;; esac
case "$cpus" in ''|*[!0-9]*|0) echo "slurm-sweep: -c needs a count >= 1" >&2; exit 2 ;; esac

specsim=${SPECSIM:-build/specsim}
case "$specsim" in /*) ;; *) specsim="$(pwd)/$specsim" ;; esac
stem=${out%.csv}

# Quotes one word for the shell that runs --wrap.
q() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"; }

shard_cmd="$(q "$specsim") sweep $(q "$scenario") --shard \${SLURM_ARRAY_TASK_ID}/$shards --resume -j $cpus --quiet --out $(q "$stem").part\${SLURM_ARRAY_TASK_ID}.csv"
parts=""
i=0
while [ "$i" -lt "$shards" ]; do
    parts="$parts $(q "$stem.part$i.csv")"
    i=$((i + 1))
done
merge_cmd="$(q "$specsim") merge $(q "$out")$parts"

submit() { # prints the job id; a failed sbatch (or no id) stops the script
    if [ "$dry" -eq 1 ]; then
        printf 'sbatch' >&2
        for a in "$@"; do printf ' %s' "$(q "$a")" >&2; done
        echo >&2
        echo DRYRUN
        return 0
    fi
    if ! reply=$(sbatch --parsable "$@"); then
        echo "slurm-sweep: sbatch failed" >&2
        return 1
    fi
    id=${reply%%;*}
    case "$id" in
        ''|*[!0-9_]*) echo "slurm-sweep: sbatch gave no job id (got '$reply')" >&2; return 1 ;;
    esac
    echo "$id"
}

array=$(submit --job-name=specsim-sweep --array=0-$((shards - 1)) \
    --cpus-per-task="$cpus" --output="$stem.part%a.log" "$@" --wrap "$shard_cmd") || exit 1
merge=$(submit --job-name=specsim-merge --dependency=afterok:"$array" \
    --output="$stem.merge.log" "$@" --wrap "$merge_cmd") || {
    echo "slurm-sweep: the array job $array was submitted but not its merge job;" \
        "cancel it (scancel $array) or merge the parts yourself with specsim merge" >&2
    exit 1
}
echo "slurm-sweep: array job $array ($shards shards), merge job $merge -> $out" >&2
