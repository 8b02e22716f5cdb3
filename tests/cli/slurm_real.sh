#!/bin/sh
# scripts/slurm-sweep.sh on a real single-node Slurm (tests/slurm/run.sh,
# also `make test-slurm`): once per `make test`, with the optimised build —
# the sanitiser build adds nothing to a test of job submission and merging.
# It needs root and Debian's slurm-wlm and munge (scripts/install-deps.sh
# installs them, or the test itself); without root it says so and counts
# as one failure rather than passing unseen.
: "${BUILD:=build}"
case "$BUILD" in *asan*) exit 0 ;; esac
exec sh "$(dirname "$0")/../slurm/run.sh" "$BUILD"
