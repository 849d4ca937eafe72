#!/usr/bin/env bash
# PyTorch's own multiprocessing tests under `sharebench exec`: test_multiprocessing.py,
# test_multiprocessing_spawn.py and test_dataloader.py's TestDataLoader, as Debian's source package
# of python3-torch (pytorch 1.13.1+dfsg) holds them, under fork, spawn and forkserver and the
# files' own choice. They kill and crash their children on purpose and assert on it; exec must
# call every cell ok (a false alarm on a correct program is a bug) and each file's tests must pass.
#   bash tests/pytorch_own_tests.sh SHAREBENCH OUTDIR SOURCE_DIR [CACHE_DIR]
# The source tarball (18 MB) comes from Debian's source package (the archive apt is configured with) once into CACHE_DIR (default: OUTDIR/..),
# checked against the sha256 of its .dsc; without it the test fails, saying so.
source "$(dirname "$0")/test_lib.sh" "$@"
src=$3
cache=${4:-$(dirname "$out")/pytorch-source}
py=/usr/bin/python3
tarball=pytorch_1.13.1+dfsg.orig.tar.xz
sha256=d0355588b8528566d477e6ebf1b4d9d036a6fd75711339f66b27472ce5879dc7
mkdir -p "$cache"
# The archive apt is configured with (its first URIs/deb line that is not a security archive).
mirror=$( (grep -h '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '{print $2}';
           grep -h '^deb ' /etc/apt/sources.list 2>/dev/null | awk '{print $2}') | grep -v security | head -1)
if ! echo "$sha256  $cache/$tarball" | sha256sum -c --quiet 2>/dev/null; then
  [ -n "$mirror" ] || { echo "FAIL: no Debian archive in apt's sources to fetch PyTorch's source package from"; exit 1; }
  curl -sSf --max-time 300 -o "$cache/$tarball.part" "$mirror/pool/main/p/pytorch/$tarball" &&
    mv "$cache/$tarball.part" "$cache/$tarball"
  echo "$sha256  $cache/$tarball" | sha256sum -c --quiet ||
    { echo "FAIL: PyTorch's source ($tarball) could not be fetched from $mirror or its sha256 differs"; exit 1; }
fi
tests=pytorch-1.13.1/test
tar -xf "$cache/$tarball" -C "$out" "$tests/test_multiprocessing.py" "$tests/test_multiprocessing_spawn.py" \
  "$tests/test_dataloader.py" || { echo "FAIL: the three test files are not in $tarball"; exit 1; }

# run NAME MP_STARTS FILE [ARGS...]: exec into $out/NAME; every cell ok, and each cell's program
# printed unittest's "OK" with the count it ran.
run() {
  local name=$1 starts=$2
  shift 2
  local mp=()
  [ "$starts" = own ] || mp=(--mp-start "$starts")
  (cd "$out/$tests" && PYTHONPATH="$src/tests/pytorch_own" "$bin" exec "${mp[@]}" --deadline 900 --format none \
    --out "$out/$name" -- "$py" "$@" >"$out/$name.log" 2>&1)
  local code=$?
  [ "$code" = 0 ] || { fail "$name: exec exited $code, want 0"; tail -40 "$out/$name.log"; }
  "$py" - "$out/$name/results.json" "$name" <<'PY' || fail "$name: see above"
import json, re, sys
run, name = json.load(open(sys.argv[1])), sys.argv[2]
bad = 0
for cell in run["cells"]:
    for rep in cell["repetitions"]:
        tail = rep["workers"][0].get("stderr_tail", "")
        ran = re.search(r"Ran (\d+) tests? in", tail)
        ok = re.search(r"^OK\b", tail, re.M)
        failed = [(c["name"], c["message"][:300]) for c in rep["checks"] if c["verdict"] not in ("pass", "not-exercised")]
        print(f"{name}: {cell['id']}: {ran.group(1) if ran else '?'} tests, {'OK' if ok else 'NOT OK'}, "
              f"{len(rep['checks'])} checks, {len(failed)} not passed", *failed, sep="\n  ")
        bad += (not ran or not ok or bool(failed))
sys.exit(1 if bad else 0)
PY
}
all=fork,spawn,forkserver
run spawn-tests "$all" test_multiprocessing_spawn.py
run spawn-tests-own own test_multiprocessing_spawn.py
run mp-tests "$all" test_multiprocessing.py
run mp-tests-own own test_multiprocessing.py
run dataloader-tests "$all" test_dataloader.py TestDataLoader
run dataloader-tests-own own test_dataloader.py TestDataLoader
exit $status
