#!/usr/bin/env bash
# The HTML report in a real headless Chromium: a real run (two repetitions, a planted bug, a cell
# skipped for want of a GPU) is rendered; the page must load with no script error and no console
# error, every chart must have drawn, and the skipped cell must show as skipped. A screenshot is
# kept in the output directory (report-screenshot.png) for a person to look at.
# usage: report_browser_test.sh SHAREBENCH OUTDIR
set -euo pipefail
bin=$1
out=$2
rm -rf "$out" && mkdir -p "$out"
"$bin" run --scenario locked,hogwild,locked/local-lock,ipc/cuda --start fork,forkserver --procs 1,2 --steps 300 \
  --repetitions 2 --out "$out/run" --format none
"$bin" report "$out/run/results.json" --format html --out "$out" >/dev/null

chromium=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$chromium" ]; then
  echo "FAIL: chromium is not installed (ci/setup installs it)"
  exit 1
fi
flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking
       --disable-component-update --disable-sync --enable-logging=stderr --v=0)
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT

dom=$(timeout 60 "$chromium" "${flags[@]}" --user-data-dir="$profile" --virtual-time-budget=10000 \
  --dump-dom "file://$out/report.html" 2>"$out/chromium.log")
body=$(grep -o '<body[^>]*>' <<<"$dom" || true)
html=$(grep -o '<html[^>]*>' <<<"$dom" || true)
total=$(sed -n 's/.*data-charts-total="\([0-9]*\)".*/\1/p' <<<"$body")
drawn=$(sed -n 's/.*data-charts-drawn="\([0-9]*\)".*/\1/p' <<<"$body")
echo "charts: $drawn of $total drawn"
status=0
if [ -z "$total" ] || [ "$total" -lt 12 ]; then echo "FAIL: expected at least 12 charts, page declares '${total}'"; status=1; fi
for id in chart-throughput-hogwild chart-efficiency-hogwild chart-efficiency-locked chart-lockwait-locked \
          chart-convergence-locked chart-convergence-hogwild chart-loss-steps-locked chart-loss-time-hogwild \
          chart-launch pick-loss-steps-locked evidence; do
  grep -q "id=\"$id\"" <<<"$dom" || { echo "FAIL: no $id on the page"; status=1; }
done
grep -q '<td>ipc/cuda@forkserver:2</td><td class="skip">skipped' <<<"$dom" || { echo "FAIL: the skipped cell does not show as skipped"; status=1; }
if [ "${drawn:-0}" != "${total:-x}" ]; then echo "FAIL: only ${drawn:-0} of ${total:-?} charts drew"; status=1; fi
if grep -q 'data-errors' <<<"$html"; then echo "FAIL: the page raised script errors: $html"; status=1; fi
if grep -E 'CONSOLE\(|Uncaught' "$out/chromium.log"; then echo "FAIL: console messages above"; status=1; fi

timeout 60 "$chromium" "${flags[@]}" --user-data-dir="$profile" --window-size=1300,3400 --virtual-time-budget=10000 \
  --screenshot="$out/report-screenshot.png" "file://$out/report.html" 2>>"$out/chromium.log" >/dev/null
size=$(stat -c %s "$out/report-screenshot.png" 2>/dev/null || echo 0)
if [ "$size" -lt 50000 ]; then echo "FAIL: screenshot missing or blank ($size bytes)"; status=1; fi
echo "screenshot: $out/report-screenshot.png ($size bytes)"
exit $status
