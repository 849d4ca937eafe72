#!/usr/bin/env bash
# Two sharebench processes as two torchrun nodes (RANK=0 and RANK=1, one MASTER_ADDR, MASTER_PORT
# and WORLD_SIZE=2) average over c10d Gloo on loopback: each node's cells must pass, agree across
# both nodes (the spread check spans the whole world), and converge against large-batch serial
# SGD over both nodes' batches.
# usage: gloo_torchrun_test.sh SHAREBENCH OUTDIR
source "$(dirname "$0")/test_lib.sh" "$@"

# A free base port; the two gloo cells use it and the next one.
port=$(python3 -c 'import socket
for base in range(29600, 29900, 2):
    try:
        for p in (base, base + 1):
            s = socket.socket(); s.bind(("127.0.0.1", p)); s.close()
        print(base); break
    except OSError:
        pass')
args=(run --scenario averaging/params-gloo,averaging/grads-gloo --start spawn --procs 1 --steps 100
      --hang-timeout 30 --format none)
export MASTER_ADDR=127.0.0.1 MASTER_PORT=$port WORLD_SIZE=2
RANK=0 timeout 300 "$bin" "${args[@]}" --out "$out/rank0" >"$out/rank0.log" 2>&1 &
pid0=$!
RANK=1 timeout 300 "$bin" "${args[@]}" --out "$out/rank1" >"$out/rank1.log" 2>&1
code1=$?
wait $pid0
code0=$?
[ $code0 -eq 0 ] || { fail "RANK=0 exited $code0"; tail -20 "$out/rank0.log"; }
[ $code1 -eq 0 ] || { fail "RANK=1 exited $code1"; tail -20 "$out/rank1.log"; }

for rank in 0 1; do
  python3 - "$out/rank$rank/results.json" "$rank" <<'PY' || status=1
import json, sys
results, rank = json.load(open(sys.argv[1])), sys.argv[2]
for cell in results["cells"]:
    rep = cell["repetitions"][0]
    checks = {c["name"]: c for c in rep["checks"]}
    agree = checks["replicas-agree"]
    if agree["verdict"] != "pass" or "2 replicas" not in agree["message"]:
        sys.exit(f"FAIL: rank {rank} {cell['config']['variant']}: {agree}")
    if checks["convergence"]["verdict"] != "pass":
        sys.exit(f"FAIL: rank {rank} {cell['config']['variant']}: {checks['convergence']}")
    if cell["config"]["variant"] == "grads-gloo" and rank == "0" and checks["matches-serial"]["verdict"] != "pass":
        sys.exit(f"FAIL: rank 0 grads-gloo: {checks['matches-serial']}")
    print(f"ok: rank {rank} {cell['config']['variant']}: {agree['message']}")
PY
done
exit $status
