# `make test` on machines unlike CI's: tests that cannot run there skip with
# a reason instead of failing, and scripts/install-deps.sh says what is
# missing instead of aborting.
#   slurm_skips_without_root   tests/slurm/run.sh as an unprivileged user
#                              prints "skip ...: needs root" and exits 0;
#   slurm_required_fails       the same with SLURM_REQUIRED=1 (`make
#                              test-slurm`) fails;
#   deps_not_debian_ok         install-deps.sh with no dpkg-query or apt-get
#                              on PATH and the build's tools present: 0;
#   deps_not_debian_missing    the same without pkg-config: 1, naming it.
. tests/cli/lib.sh

case "$BUILD" in *asan*) echo "skip no_root: scripts only, checked once"; exit 0 ;; esac

if [ "$(id -u)" -eq 0 ] && command -v su >/dev/null && id nobody >/dev/null 2>&1 &&
   su -s /bin/sh nobody -c "test -r tests/slurm/run.sh" 2>/dev/null; then
    su -s /bin/sh nobody -c "sh tests/slurm/run.sh $BUILD" >"$TMP/out" 2>&1
    rc=$?
    if [ "$rc" -eq 0 ] && grep -q '^skip slurm_real_sweep: needs root' "$TMP/out"; then
        pass slurm_skips_without_root
    else fail slurm_skips_without_root "exit $rc: $(cat "$TMP/out")"; fi
    su -s /bin/sh nobody -c "SLURM_REQUIRED=1 sh tests/slurm/run.sh $BUILD" >"$TMP/out" 2>&1
    rc=$?
    if [ "$rc" -eq 1 ] && grep -q '^FAIL slurm_real_sweep: needs root' "$TMP/out"; then
        pass slurm_required_fails
    else fail slurm_required_fails "exit $rc: $(cat "$TMP/out")"; fi
else
    echo "skip slurm_skips_without_root: needs root, su and a readable tree to become nobody"
fi

# A PATH with the tools the build needs but no dpkg-query or apt-get.
mkdir -p "$TMP/bin"
for c in sh cc gcc make pkg-config ar gnuplot id uname grep; do
    p=$(command -v "$c") && ln -s "$p" "$TMP/bin/$c"
done
PATH="$TMP/bin" sh scripts/install-deps.sh >"$TMP/out" 2>&1
rc=$?
if [ "$rc" -eq 0 ]; then pass deps_not_debian_ok
else fail deps_not_debian_ok "exit $rc: $(cat "$TMP/out")"; fi
rm -f "$TMP/bin/pkg-config"
PATH="$TMP/bin" sh scripts/install-deps.sh >"$TMP/out" 2>&1
rc=$?
if [ "$rc" -eq 1 ] && grep -q 'not a Debian system.*missing:.*pkg-config' "$TMP/out"; then
    pass deps_not_debian_missing
else fail deps_not_debian_missing "exit $rc: $(cat "$TMP/out")"; fi
