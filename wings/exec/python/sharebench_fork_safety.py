"""What a process had alive when it forked, for the `fork-safety` check of `sharebench exec`
(wings/exec/checks/fork_safety.cc). Loaded by sharebench_watch.py.

A fork copies only the forking thread. A child forked while OpenMP's intra-op pool (or another
native pool started after torch's import) was alive inherits that pool's locks in whatever state
its threads left them, and its first parallel region can wait for threads that do not exist: the
fork-after-OpenMP hang. Just before each fork (os.register_at_fork), this module counts the
forking process's native threads (/proc/self/task) apart from its Python threads, and those alive
right after torch's import (BLAS pools that are fork-safe) apart from those started since; the
forked child carries that count, the line that forked it, its intra-op threads and whether CUDA
was initialised in its "start" event ("fork"). Costs: one directory listing per fork.
"""
import os
import sys

_user_location = None
_intra_op_threads = None
_failed = None
_baseline_tids = set()  # native threads alive right after torch's import (BLAS pools that are fork-safe)
_pending = None         # what the forking process had alive, computed before the fork


def _native_threads():
    try:
        return {int(t) for t in os.listdir("/proc/self/task")}
    except OSError:
        return set()


def _python_threads():
    threading = sys.modules.get("threading")
    if threading is None:
        return {}
    out = {}
    for t in threading.enumerate():
        if getattr(t, "native_id", None) is not None:
            out[t.native_id] = t.name
    return out


def _fork_info():
    torch = sys.modules.get("torch")
    python = _python_threads()
    main = os.getpid()
    native = sorted(t for t in _native_threads() if t not in python and t != main)
    cuda = False
    if torch is not None:
        try:
            cuda = bool(torch.cuda.is_initialized())
        except Exception:
            cuda = False
    return {"where": _user_location(), "pool_threads": len([t for t in native if t not in _baseline_tids]),
            "library_threads": len([t for t in native if t in _baseline_tids]),
            "python_threads": [n for tid, n in python.items() if tid != main], "intra_op": _intra_op_threads(),
            "cuda": cuda, "torch": torch is not None}


def _before_fork():
    global _pending
    try:
        _pending = _fork_info()
    except Exception as error:
        _pending = None
        _failed("fork", error)


def _on_torch(torch):
    global _baseline_tids
    _baseline_tids = {t for t in _native_threads() if t not in _python_threads() and t != os.getpid()}


def _child_start_fields():
    return {"fork": _pending}


def install(hooks):
    global _user_location, _intra_op_threads, _failed
    _user_location, _intra_op_threads = hooks.user_location, hooks.intra_op_threads
    _failed = hooks.shared_state.report_failure
    hooks.also_after_import("torch", _on_torch)
    hooks.child_start_fields.append(_child_start_fields)
    os.register_at_fork(before=_before_fork)


def after_fork_in_child():
    """The child keeps what its parent had alive at the fork: its "start" reports it."""
