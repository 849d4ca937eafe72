#!/usr/bin/env bash
# fetch_debs.sh: here, on a Debian machine with apt: download into .gpu/debs the Debian packages a
# build on the GPU machine needs that its image lacks (fmt, CLI11, nlohmann/json, GoogleTest,
# Google Benchmark, Gloo's headers, Chart.js). bench/gpu/device_checks.sh unpacks them there.
# Keep .gpu/ out of git (.gitignore has it) and carry it along to the GPU machine.
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p .gpu/debs
cd .gpu/debs
apt-get download -q libfmt-dev libfmt9 libgtest-dev libgmock-dev libbenchmark-dev libbenchmark1debian \
  libcli11-dev nlohmann-json3-dev libgloo-dev libjs-chart.js 2>&1 | grep -v 'unsandboxed' || true
ls -1
