"""What PyTorch's own CUDA IPC does in the failure modes users hit, measured on a GPU machine.

torch.multiprocessing passes a CUDA tensor as an IPC handle (torch/multiprocessing/reductions.py);
the producer keeps the block alive while a consumer's reference counter (a shared-memory file) says
it is held, parking freed blocks in a "limbo" it empties in ipc_collect() or as more are freed. The
C++ harness's `ipc/cuda*` cells measure raw CUDA IPC; this script measures the same situations
through torch's own machinery, one probe at a time, each in fresh processes (spawn: CUDA cannot
be used in a forked child):

  handoff           a 4 MiB tensor sent, checksummed by the consumer: handoff latency
  hold-1500         the consumer holds 1 500 received tensors at once (PyTorch's limbo limit is
                    1 000 events); the producer then frees its side: time and memory
  returned          after the consumer drops its tensors, does the producer's allocated memory
                    return, with and without torch.cuda.ipc_collect()?
  consumer-killed   the consumer is SIGKILLed while it holds a received tensor: does the producer's
                    memory ever return (it cannot: the reference counter is never decremented)?
  producer-exits    the producer exits while the consumer still holds its tensor: what the
                    consumer sees when it reads it

Prints one JSON object per probe on stdout. Needs torch with CUDA and a device; exits 2 otherwise.
usage: python3 torch_cuda_ipc_probe.py [PROBE ...]
"""
import json
import os
import signal
import sys
import time

import torch
import torch.multiprocessing as mp

MiB = 1 << 20


def emit(probe, **fields):
    print(json.dumps({"probe": probe, **fields}), flush=True)


def allocated_mib():
    torch.cuda.synchronize()
    return torch.cuda.memory_allocated() / MiB


# ---- consumers (module level: spawn pickles them by name) ---------------------------------------
def consume_sum(q, done):
    t = q.get()
    done.put(float(t.sum().item()))
    del t
    done.put("dropped")


def consume_hold(q, done, n):
    held = [q.get() for _ in range(n)]
    done.put(sum(float(t[0].item()) for t in held))
    q.get()  # wait for "drop"
    del held
    done.put("dropped")


def consume_and_wait(q, done):
    t = q.get()
    done.put(float(t.sum().item()))
    time.sleep(3600)  # killed while holding t


def consume_after_producer(q, done):
    t = q.get()
    done.put("received")
    time.sleep(1.0)  # the producer exits meanwhile
    try:
        value = float(t.sum().item())
        done.put(("read", value))
    except Exception as e:  # noqa: BLE001 - what the user sees is the finding
        done.put(("error", f"{type(e).__name__}: {e}"[:300]))


def produce_and_exit(q):
    t = torch.full((MiB,), 2.0, device="cuda")
    q.put(t)
    time.sleep(0.3)  # exits while the consumer holds t


# ---- probes --------------------------------------------------------------------------------------
def probe_handoff(ctx):
    q, done = ctx.Queue(), ctx.Queue()
    p = ctx.Process(target=consume_sum, args=(q, done))
    p.start()
    t = torch.ones(MiB, device="cuda")  # 4 MiB of float32
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    q.put(t)
    total = done.get(timeout=60)
    handoff_s = time.perf_counter() - t0
    done.get(timeout=60)
    p.join(30)
    emit("handoff", ok=total == MiB, handoff_ms=round(handoff_s * 1e3, 3), exitcode=p.exitcode)


def probe_hold(ctx, n=1500):
    q, done = ctx.Queue(), ctx.Queue()
    p = ctx.Process(target=consume_hold, args=(q, done, n))
    p.start()
    base = allocated_mib()
    ts = [torch.full((1024,), float(i), device="cuda") for i in range(n)]
    t0 = time.perf_counter()
    for t in ts:
        q.put(t)
    total = done.get(timeout=120)
    sent_s = time.perf_counter() - t0
    t1 = time.perf_counter()
    del ts, t  # the producer's side freed while the consumer holds all n: into the limbo
    free_s = time.perf_counter() - t1
    held_mib = allocated_mib() - base
    q.put("drop")
    done.get(timeout=60)
    p.join(30)
    t2 = time.perf_counter()
    torch.cuda.ipc_collect()
    collect_s = time.perf_counter() - t2
    emit("hold-1500", tensors=n, ok=total == sum(range(n)), send_and_receive_s=round(sent_s, 3),
         producer_free_s=round(free_s, 3), allocated_while_held_mib=round(held_mib, 3),
         allocated_after_collect_mib=round(allocated_mib() - base, 3), ipc_collect_s=round(collect_s, 4),
         exitcode=p.exitcode)


def probe_returned(ctx):
    for collect in (False, True):
        q, done = ctx.Queue(), ctx.Queue()
        p = ctx.Process(target=consume_sum, args=(q, done))
        p.start()
        base = allocated_mib()
        t = torch.ones(64 * MiB // 4, device="cuda")  # 64 MiB
        q.put(t)
        done.get(timeout=60)
        del t
        during = allocated_mib() - base
        done.get(timeout=60)  # the consumer dropped it
        p.join(30)
        if collect:
            torch.cuda.ipc_collect()
        else:
            time.sleep(0.5)
        emit("returned", ipc_collect=collect, allocated_mib_while_consumer_held=round(during, 1),
             allocated_mib_after_consumer_dropped=round(allocated_mib() - base, 1))


def probe_consumer_killed(ctx):
    q, done = ctx.Queue(), ctx.Queue()
    p = ctx.Process(target=consume_and_wait, args=(q, done))
    p.start()
    base = allocated_mib()
    t = torch.ones(64 * MiB // 4, device="cuda")
    q.put(t)
    done.get(timeout=60)
    os.kill(p.pid, signal.SIGKILL)
    p.join(30)
    del t
    torch.cuda.ipc_collect()
    time.sleep(0.5)
    torch.cuda.ipc_collect()
    emit("consumer-killed", consumer_exitcode=p.exitcode, allocated_mib_after_kill_and_collect=round(allocated_mib() - base, 1))


def probe_producer_exits(ctx):
    q, done = ctx.Queue(), ctx.Queue()
    consumer = ctx.Process(target=consume_after_producer, args=(q, done))
    producer = ctx.Process(target=produce_and_exit, args=(q,))
    consumer.start()
    producer.start()
    first = done.get(timeout=60)
    producer.join(30)
    try:
        seen = done.get(timeout=30)
    except Exception as e:  # noqa: BLE001
        seen = ("no answer", repr(e))
    consumer.join(30)
    if consumer.exitcode is None:
        consumer.kill()
        consumer.join()
    emit("producer-exits", consumer_got=first, producer_exitcode=producer.exitcode, consumer_saw=list(seen),
         consumer_exitcode=consumer.exitcode)


PROBES = {"handoff": probe_handoff, "hold-1500": probe_hold, "returned": probe_returned,
          "consumer-killed": probe_consumer_killed, "producer-exits": probe_producer_exits}


def main():
    if not torch.cuda.is_available():
        print("torch_cuda_ipc_probe: no CUDA device (torch.cuda.is_available() is False)", file=sys.stderr)
        return 2
    names = sys.argv[1:] or list(PROBES)
    unknown = [n for n in names if n not in PROBES]
    if unknown:
        print(f"torch_cuda_ipc_probe: unknown probe {unknown[0]!r}; probes: {', '.join(PROBES)}", file=sys.stderr)
        return 2
    emit("device", name=torch.cuda.get_device_name(0), torch=torch.__version__, cuda=torch.version.cuda)
    ctx = mp.get_context("spawn")
    for name in names:
        t0 = time.perf_counter()
        try:
            PROBES[name](ctx)
        except Exception as e:  # noqa: BLE001 - one probe's failure is a finding, not the end
            emit(name, error=f"{type(e).__name__}: {e}"[:500])
        print(f"# {name}: {time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
