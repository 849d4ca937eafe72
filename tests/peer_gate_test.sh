#!/usr/bin/env bash
# ci/gate's ratio check, as the GitHub workflow runs it: the unchanged build against the stored
# baseline (bench/baselines/peers.json) passes three times in a row; a build slowed on purpose (a
# planted sleep per step, CMake SHAREBENCH_PLANTED_STEP_SLEEP_US, configured in a build tree of its
# own next to OUTDIR) fails it, naming what fell. Slow: about 15 minutes on the 2-core machine.
# usage: peer_gate_test.sh SHAREBENCH OUTDIR SOURCE_DIR
source "$(dirname "$0")/test_lib.sh" "$1" "$2"
src=$3
baseline=$src/bench/baselines/peers.json
[ -f "$baseline" ] || { echo "FAIL: no baseline at $baseline"; exit 1; }
sleep_us=100

slowed=$out.slowed-build  # beside OUTDIR, which test_lib empties: a rerun builds only what changed
cmake -S "$src" -B "$slowed" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld -DSHAREBENCH_BUILD_TESTS=OFF \
  -DSHAREBENCH_BUILD_BENCH=OFF -DSHAREBENCH_PLANTED_STEP_SLEEP_US=$sleep_us >"$out/slowed-configure.log" 2>&1 ||
  { echo "FAIL: configuring the slowed build: $(tail -5 "$out/slowed-configure.log")"; exit 1; }
cmake --build "$slowed" --target sharebench >"$out/slowed-build.log" 2>&1 ||
  { echo "FAIL: building the slowed build: $(tail -5 "$out/slowed-build.log")"; exit 1; }

for i in 1 2 3; do
  (cd "$src" && bash ci/gate --binary "$bin" --peers "$baseline" --peers-only --out "$out/unchanged-$i") \
    >"$out/unchanged-$i.txt" 2>"$out/unchanged-$i.err"
  rc=$?
  sed -n '/against the baseline/,$p' "$out/unchanged-$i.txt"
  [ $rc = 0 ] || fail "the unchanged build failed the ratio check (run $i, exit $rc)"
done

(cd "$src" && bash ci/gate --binary "$slowed/sharebench" --peers "$baseline" --peers-only --out "$out/slowed") \
  >"$out/slowed.txt" 2>"$out/slowed.err"
rc=$?
sed -n '/against the baseline/,$p' "$out/slowed.txt"
[ $rc = 1 ] || fail "the build with a ${sleep_us} us sleep per step passed the ratio check (exit $rc)"
grep -q REGRESSED "$out/slowed.txt" || fail "the slowed build's report names no regression"
exit $status
