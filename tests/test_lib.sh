# Sourced by the shell tests that take SHAREBENCH OUTDIR: strict mode, $bin and $out from the
# arguments, a fresh $out, and fail(), which prints the failure and makes the test exit 1 at the
# end (`exit $status`) while the remaining checks still run.
#   source "$(dirname "$0")/test_lib.sh" "$@"
set -uo pipefail
bin=$1
out=$2
rm -rf "$out" && mkdir -p "$out"
status=0
fail() { echo "FAIL: $*"; status=1; }
# second_user NAME: makes (once) a system user without a home or shell, for tests that need a
# second uid; the caller checks for root first.
second_user() {
  id "$1" >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin "$1" ||
    { echo "FAIL: useradd $1"; exit 1; }
}
# second_user_reaches USER PATH...: skips the test (exit 77, saying why) when USER cannot reach one
# of the paths, as in a checkout under a directory only its owner may enter (mktemp -d makes 0700).
second_user_reaches() {
  local user=$1 path
  shift
  for path in "$@"; do
    runuser -u "$user" -- test -r "$path" && continue
    echo "SKIP: user $user cannot reach $path: a parent directory is closed to other users (a checkout under mktemp -d is 0700); clone where other users may enter"
    exit 77
  done
}
# exit_is WANT WHAT COMMAND...: runs it, output to $out/last.{out,err}; checks the exit code, and
# for 2 that stderr is one line; says "ok: WHAT" when both hold.
exit_is() {
  local want=$1 what=$2
  shift 2
  "$@" >"$out/last.out" 2>"$out/last.err"
  local code=$?
  if [ "$code" -ne "$want" ]; then
    fail "$what: exit $code, want $want; stderr: $(head -c 600 "$out/last.err")"
  elif [ "$want" -eq 2 ] && [ "$(wc -l <"$out/last.err")" -ne 1 ]; then
    fail "$what: exit 2 but $(wc -l <"$out/last.err") lines on stderr: $(head -c 600 "$out/last.err")"
  else
    echo "ok: $what"
  fi
}
