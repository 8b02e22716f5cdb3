#!/bin/sh
# scripts/slurm-sweep.sh on a real single-node Slurm (tests/slurm/run.sh,
# also `make test-slurm`): once per `make test`, with the optimised build —
# the sanitiser build adds nothing to a test of job submission and merging.
# It needs root and Debian's slurm-wlm and munge (scripts/install-deps.sh
# installs them, or the test itself); without root, or without them on a
# system with no apt-get, it skips and says why (`make test-slurm` fails
# instead: there the user asked for it).
: "${BUILD:=build}"
case "$BUILD" in *asan*) exit 0 ;; esac
exec sh "$(dirname "$0")/../slurm/run.sh" "$BUILD"
