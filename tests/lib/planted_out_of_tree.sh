# Sourced by the tests that build tests/planted as a user's project is built: against the package
# installed from BUILD_DIR into OUT/prefix, with find_package(sharebench), nothing of the tree.
# build_planted_out_of_tree BUILD_DIR SOURCE_DIR OUT [CMAKE_ARG...] [-- BUILD_ARG...]
# Exits the calling script with 1, saying which step failed, when one does.
build_planted_out_of_tree() {
  local build=$1 src=$2 out=$3
  shift 3
  local configure_args=() build_args=()
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do configure_args+=("$1"); shift; done
  [ "${1:-}" = "--" ] && shift
  build_args=("$@")
  cmake --install "$build" --prefix "$out/prefix" >"$out/install.log" || { echo "FAIL: install"; exit 1; }
  cmake -S "$src/tests/planted" -B "$out/build" -G Ninja -DCMAKE_CXX_COMPILER=clang++ "${configure_args[@]}" \
    -DCMAKE_PREFIX_PATH="$out/prefix" >"$out/configure.log" 2>&1 || { cat "$out/configure.log"; echo "FAIL: configure"; exit 1; }
  cmake --build "$out/build" "${build_args[@]}" >"$out/build.log" 2>&1 || { tail -40 "$out/build.log"; echo "FAIL: build"; exit 1; }
}
