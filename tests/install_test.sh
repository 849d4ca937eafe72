#!/usr/bin/env bash
# The installed package works from another repository: install this build into a fresh prefix,
# build examples/counter against it with find_package(sharebench), and run its scenario through
# every start method with the default detectors and reports.
# usage: install_test.sh BUILD_DIR SOURCE_DIR OUTDIR
set -euo pipefail
build=$1
src=$2
out=$3
rm -rf "$out" && mkdir -p "$out"
cmake --install "$build" --prefix "$out/prefix" >"$out/install.log"
test -x "$out/prefix/bin/sharebench"
test -f "$out/prefix/lib/cmake/sharebench/sharebenchConfig.cmake"
cmake -S "$src/examples/counter" -B "$out/build" -G Ninja -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_PREFIX_PATH="$out/prefix" >"$out/configure.log"
cmake --build "$out/build" >"$out/build.log"
"$out/build/counter-bench" list | grep -q 'counter/locked'
"$out/build/counter-bench" run --scenario counter --start fork,spawn,forkserver,thread --procs 1,2 \
  --steps 20000 --out "$out/run" --format console,md
grep -q 'counter/locked@forkserver:2' "$out/run/report.md"
grep -q '"name": "count"' "$out/run/results.json"
echo "installed package: built and ran the out-of-tree scenario"
