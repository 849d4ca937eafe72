#!/usr/bin/env bash
# device_checks.sh: the checks only a GPU machine can make, as one script with a time budget.
# Run from the project's root on a machine with PyTorch 2.x + CUDA (LibTorch inside the Python
# package), CMake and ninja, and the Debian -dev packages carried in .gpu/debs
# (bench/gpu/fetch_debs.sh, run here first). Steps, most important first; a step that
# would not fit in what is left of the budget is skipped and says so:
#   1. build sharebench against the Python package's LibTorch (no tests, no benchmarks), then
#      verify the harness's own CUDA-build fixes on CPU cells under fork
#   2. the CUDA IPC cells: ipc/cuda and ipc/cuda-hold-1024 (correct) and the planted
#      ipc/cuda-early-reuse and ipc/cuda-producer-exits, under fork (refused), spawn and
#      forkserver, at 2 and 3 processes, 3 repetitions each
#   3. a consumer SIGKILLed while it holds 1 024 mapped messages, and the producer killed
#   4. PyTorch's own CUDA IPC in the same situations (bench/gpu/torch_cuda_ipc_probe.py)
#   5. the scaling sweep at 1, 2, 4, 8, 16 processes beside the torch.multiprocessing peers
#   6. the chaos detection table (tests/chaos_detection.sh), 3 repetitions
#   7. two runs of the default matrix with --repetitions auto
# Everything lands in DEST (default $OUT, else /tmp/device-checks) as one results.tar.gz, packed
# again after every step so that a run stopped at its limit still returns what it finished.
# usage: bash bench/gpu/device_checks.sh [BUDGET_SECONDS]
# A shorter pass (a second try in what is left of a lease) narrows the matrix from the environment:
#   CUDA_PROCS=2 CUDA_REPS=2 SWEEP_PROCS=1,4,16 SWEEP_SCENARIOS=hogwild/lock-free,... SKIP=torch-probe,chaos-table
set -uo pipefail
budget=${1:-540}
dest=${OUT:-/tmp/device-checks}
work=/tmp/device-checks-work
rm -rf "$work" && mkdir -p "$work" "$dest"
start=$(date +%s)
left() { echo $((budget - ($(date +%s) - start))); }
log() { echo "[$(date +%T) +$(($(date +%s) - start))s] $*" | tee -a "$work/steps.log"; }
pack() { tar -C "$work" -czf "$dest/results.tar.gz.tmp" . && mv "$dest/results.tar.gz.tmp" "$dest/results.tar.gz"; }
# step NAME NEEDED_SECONDS COMMAND...: runs COMMAND under a timeout of what is left, logs its exit.
step() {
  local name=$1 need=$2
  shift 2
  if [[ ",${SKIP:-}," == *",$name,"* ]]; then
    log "SKIP $name: asked to (SKIP)"
    return 0
  fi
  if [ "$(left)" -lt "$need" ]; then
    log "SKIP $name: $(left) s left, it needs about $need"
    return 0
  fi
  log "BEGIN $name"
  timeout --kill-after=5 "$(($(left) - 10))" "$@" >"$work/$name.log" 2>&1
  log "END $name: exit $?"
  pack
}

{
  nproc
  nvidia-smi -L
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.get_device_name(0))'
  g++ --version | head -1
  cmake --version | head -1
  uname -r
} >"$work/machine.txt" 2>&1

prefix=/tmp/gpu-prefix
mkdir -p "$prefix"
for f in .gpu/debs/*.deb; do dpkg -x "$f" "$prefix"; done
torch_prefix=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')
torch_lib=$(python3 -c 'import torch, os; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')
export CPATH=$prefix/usr/include  # Gloo's headers, when the wheel has none of its own
export LD_LIBRARY_PATH=$prefix/usr/lib/x86_64-linux-gnu:$torch_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
build() {
  cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DSHAREBENCH_BUILD_TESTS=OFF \
    -DSHAREBENCH_BUILD_BENCH=OFF -DSHAREBENCH_CHARTJS=$prefix/usr/share/javascript/chart.js/chart.min.js \
    -DCMAKE_PREFIX_PATH="$torch_prefix;$prefix/usr;$prefix/usr/lib/x86_64-linux-gnu/cmake" &&
    cmake --build build-gpu -j"$(nproc)" -- -k 0
}
export -f build
export torch_prefix prefix
step build 120 bash -c build
b=build-gpu/sharebench
if [ ! -x "$b" ]; then
  log "no binary: the build failed (build.log)"
  grep -E "error|Error" "$work/build.log" | head -60 >"$work/build-errors.txt"
  pack
  exit 1
fi
"$b" --version >>"$work/machine.txt" 2>&1

# Fixes made after the first lease, checked before anything else leans on them: a CUDA build
# trains the serial reference in a child (else fork workers refuse autograd), and the driver's
# /dev/shm/cuda.shm.* file is not counted as a worker's leak.
step verify 30 "$b" run --scenario hogwild/lock-free,locked/update-only,ipc/cuda --start fork,spawn --procs 2 \
  --repetitions 1 --out "$work/verify" --format console,md
cuda_cells=ipc/cuda,ipc/cuda-hold-1024,ipc/cuda-early-reuse,ipc/cuda-producer-exits
step cuda-cells 60 "$b" run --scenario "$cuda_cells" --start fork,spawn,forkserver --procs "${CUDA_PROCS:-2,3}" --repetitions "${CUDA_REPS:-3}" \
  --stacks proc --out "$work/cuda-cells" --format console,md
step cuda-faults 40 bash -c "
  '$b' run --scenario ipc/cuda-hold-1024 --start spawn --procs 2 --fault kill:1@600 --stacks proc \
    --out '$work/cuda-kill-consumer' --format console; echo \"exit \$?\"
  '$b' run --scenario ipc/cuda --start spawn --procs 3 --fault kill:0@3 --stacks proc \
    --out '$work/cuda-kill-producer' --format console; echo \"exit \$?\""
step torch-probe 60 python3 bench/gpu/torch_cuda_ipc_probe.py
sweep_scenarios=()
[ -n "${SWEEP_SCENARIOS:-}" ] && sweep_scenarios=(--scenario "$SWEEP_SCENARIOS")
step peers-sweep 60 "$b" peers "${sweep_scenarios[@]}" --procs "${SWEEP_PROCS:-1,2,4,8,16}" --rounds 1 --steps 1000 \
  --out "$work/peers" --format console
planted() {
  cmake --install build-gpu --prefix /tmp/sharebench-prefix >/dev/null &&
    cmake -S tests/planted -B /tmp/planted-build -G Ninja -DPLANTED_WITH_TORCH=OFF \
      -DCMAKE_PREFIX_PATH="/tmp/sharebench-prefix;$prefix/usr;$prefix/usr/lib/x86_64-linux-gnu/cmake" >/dev/null &&
    cmake --build /tmp/planted-build --target planted-bench -j"$(nproc)" &&
    bash tests/chaos_detection.sh /tmp/planted-build/planted-bench "$work/chaos" 3 7
}
export -f planted
export work
step chaos-table 100 bash -c planted
# Two runs of the default matrix with --repetitions auto: the recommendation's stability on
# dedicated cores (each run's best strategy and its margin, side by side).
auto_runs() {
  for i in 1 2; do
    "$b" run --repetitions auto --out "$work/auto-$i" --format console,md || echo "exit $?"
  done
}
export -f auto_runs
export b
step auto-runs 150 bash -c auto_runs
log "done"
pack
