"""Sharing checks for `sharebench exec`, loaded by the injected sitecustomize into every Python
process of the program (the program itself; children by fork, spawn, forkserver, mp.spawn, Pool
and DataLoader workers). It watches how the program shares its model and writes what it sees as
JSON lines to the file named by SHAREBENCH_EVENTS; the runner turns them into checks, notes and
the process table (scenarios/exec/sharing_findings.cc). It never raises into the program: a hook
that fails reports the failure once (event "hook-error") and the program goes on untouched.

Events, one JSON object a line, each with "event", "pid" and "t" (time.monotonic(), the runner's
clock too):
  start     a Python process began: its parent, argv; after a fork, what the forking process had
            alive at that moment (native threads started since torch's import, Python threads,
            intra-op threads, whether CUDA was initialised) and the line that forked it
  torch     torch finished importing here: intra-op threads
  handoff   a parent started a multiprocessing child: the child's pid, the start() line, every
            module, tensor and optimizer in the Process's args, kwargs and attributes, and whether
            their storage is shared (after start(): spawn and forkserver pickling shares storage)
  received  a child began: the same objects as it sees them, optimizer state included
  end       a process ended: exit code, its Python traceback's last lines, optimizer use (steps,
            steps without gradients, steps on an unchanged gradient, state kinds, the step
            counter), modules it received and changed, its intra-op threads
  reaped    a parent learnt a child's exit status (Process.join, is_alive, poll)
  error     an uncaught exception's traceback tail (sys.excepthook)

Costs: a fingerprint (sum and norm) of an optimizer's gradients on its first 8 steps and every
64th after, of a received module's parameters when a child begins and ends; nothing per tensor op.
"""
import json
import os
import sys
import time

_path = os.environ.get("SHAREBENCH_EVENTS")
_fd = None
_role = "program"
_ended = False
_error = None
_seq = 0
_baseline_tids = set()  # native threads alive right after torch's import (BLAS pools that are fork-safe)
_pending_fork = None    # what the forking process had alive, computed before the fork
_received = []          # (path, obj, kind, details) a child got from its parent
_optimizers = {}        # id(optimizer) -> _OptimizerUse, this process's
_state_dict_taken = set()
_handed = {}            # id(optimizer) -> optimizer this process handed to a child (its counter is read at the end)
_hook_errors = 0
_here = os.path.dirname(os.path.abspath(__file__))
_stdlib = os.path.dirname(os.__file__)
_SAMPLE_FIRST, _SAMPLE_EVERY = 8, 64
_MAX_FINGERPRINT_ELEMENTS = 1 << 26  # 256 MiB of float32 per object: larger ones are not fingerprinted


def _emit(kind, **fields):
    global _fd
    if not _path:
        return
    fields["event"] = kind
    fields["pid"] = os.getpid()
    fields["t"] = time.monotonic()
    line = (json.dumps(fields, default=str, ensure_ascii=True) + "\n").encode()
    try:
        if _fd is None:
            _fd = os.open(_path, os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC)
        os.write(_fd, line)  # one append: whole lines, even from many processes
    except OSError:
        pass


def _hook_error(where, error):
    global _hook_errors
    _hook_errors += 1
    if _hook_errors <= 3:
        _emit("hook-error", where=where, error="%s: %s" % (type(error).__name__, error))


def _guarded(where, fn, *args):
    try:
        return fn(*args)
    except Exception as error:  # never break the program over the harness's hooks
        _hook_error(where, error)
        return None


def _user_location(made=None):
    """The innermost frame of the program's own code: not the standard library, torch or this file
    (nor, with `made`, a frame of that object's own methods: a subclass's __init__)."""
    frame = sys._getframe(1)
    torch_dir = None
    torch = sys.modules.get("torch")
    if torch is not None and getattr(torch, "__file__", None):
        torch_dir = os.path.dirname(torch.__file__)
    while frame is not None:
        name = frame.f_code.co_filename
        path = os.path.abspath(name) if not name.startswith("<") else name
        inside = (path.startswith(_stdlib + os.sep) or path.startswith(_here + os.sep) or
                  (torch_dir and path.startswith(torch_dir + os.sep)) or
                  (made is not None and frame.f_locals.get("self") is made))
        if not inside:
            shown = os.path.relpath(path) if not path.startswith("<") and path.startswith(os.getcwd()) else path
            return "%s:%d in %s" % (shown, frame.f_lineno, frame.f_code.co_name)
        frame = frame.f_back
    return "?"


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


def _intra_op_threads():
    torch = sys.modules.get("torch")
    try:
        return torch.get_num_threads() if torch is not None else None
    except Exception:
        return None


# --- fingerprints and summaries ---------------------------------------------------------------------
def _fingerprint(tensors):
    """(sum, norm) over tensors in float64: equal for equal contents, almost surely different otherwise."""
    import torch
    total, norm, elements = 0.0, 0.0, 0
    with torch.no_grad():
        for t in tensors:
            if t is None or not t.is_floating_point() or t.is_sparse:
                continue
            elements += t.numel()
            if elements > _MAX_FINGERPRINT_ELEMENTS:
                return None
            d = t.detach()
            total += float(d.sum(dtype=torch.float64))
            norm += float(torch.linalg.vector_norm(d)) ** 2
    return [total, norm]


def _all_shared(tensors):
    tensors = [t for t in tensors if t is not None]
    return sum(1 for t in tensors if t.is_shared()), len(tensors)


def _state_summary(opt):
    """Per state key, the kinds its values have: shared (tensor in shared memory), private (tensor), number."""
    import torch
    keys, entries, counter = {}, 0, None
    for _, state in list(opt.state.items()):
        entries += 1
        for key, value in state.items():
            if torch.is_tensor(value):
                kind = "shared" if value.is_shared() else "private"
            elif isinstance(value, (int, float)) and not isinstance(value, bool):
                kind = "number"
            else:
                continue
            kinds = keys.setdefault(str(key), [])
            if kind not in kinds:
                kinds.append(kind)
        if counter is None and "step" in state:
            step = state["step"]
            try:
                counter = float(step)
            except Exception:
                counter = None
    params = sum(len(g["params"]) for g in opt.param_groups)
    return {"entries": entries, "params": params, "keys": keys, "counter": counter}


def _optimizer_params(opt):
    return [p for g in opt.param_groups for p in g["params"]]


def _describe(obj, kind):
    """What a handoff or a child sees of one object."""
    if kind == "module":
        params = list(obj.parameters())
        shared, total = _all_shared(params)
        return {"class": type(obj).__name__, "params": total, "shared": shared}
    if kind == "tensor":
        return {"class": "Tensor", "shape": list(obj.shape), "params": 1, "shared": int(obj.is_shared())}
    shared, total = _all_shared(_optimizer_params(obj))
    return {"class": type(obj).__name__, "params": total, "shared": shared, "origin": getattr(obj, "_sharebench_origin", None),
            "where": getattr(obj, "_sharebench_where", None), "state": _state_summary(obj)}


def _kind_of(obj):
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    try:
        if isinstance(obj, torch.nn.Module):
            return "module"
        if isinstance(obj, torch.optim.Optimizer):
            return "optimizer"
        if torch.is_tensor(obj):
            return "tensor"
    except Exception:
        return None
    return None


def _objects_of(process):
    """The modules, tensors and optimizers a Process carries to its child: args, kwargs, a subclass's
    attributes, and one level inside lists, tuples and dicts (mp.spawn's args, Pool's initargs)."""
    found, seen = [], set()

    def visit(path, obj, depth):
        if id(obj) in seen or len(found) >= 64:
            return
        kind = _kind_of(obj)
        if kind is not None:
            seen.add(id(obj))
            found.append((path, obj, kind))
            return
        if depth >= 2:
            return
        if isinstance(obj, (list, tuple)):
            for i, item in enumerate(obj[:64]):
                visit("%s[%d]" % (path, i), item, depth + 1)
        elif isinstance(obj, dict):
            for key, item in list(obj.items())[:64]:
                visit("%s[%r]" % (path, key), item, depth + 1)

    for i, arg in enumerate(getattr(process, "_args", ()) or ()):
        visit("args[%d]" % i, arg, 0)
    for key, arg in (getattr(process, "_kwargs", {}) or {}).items():
        visit("kwargs[%r]" % key, arg, 0)
    for key, value in list(vars(process).items()):
        if not key.startswith("_"):
            visit("self.%s" % key, value, 0)
    return found


# --- optimizers ---------------------------------------------------------------------------------------
class _OptimizerUse:
    """One optimizer's use in this process."""

    def __init__(self, opt):
        self.opt = opt
        self.steps = 0
        self.no_grad_steps = 0
        self.sampled = 0
        self.same_grad = 0     # sampled steps whose gradient equalled the previous sampled step's
        self.last_grad = None
        self.state_entries_at_first_step = None


def _use_of(opt):
    use = _optimizers.get(id(opt))
    if use is None or use.opt is not opt:
        use = _optimizers[id(opt)] = _OptimizerUse(opt)
    return use


def _before_step(opt):
    use = _use_of(opt)
    if use.steps == 0:
        use.state_entries_at_first_step = len(opt.state)
    if use.steps < _SAMPLE_FIRST or use.steps % _SAMPLE_EVERY == 0:
        grads = [p.grad for p in _optimizer_params(opt)]
        if all(g is None for g in grads):
            use.no_grad_steps += 1
            use.last_grad = None
        else:
            fp = _fingerprint(grads)
            if fp is not None:
                use.sampled += 1
                if fp == use.last_grad and fp != [0.0, 0.0]:
                    use.same_grad += 1
                use.last_grad = fp
    use.steps += 1


def _wrap_step(cls):
    import functools
    step = cls.step
    if getattr(step, "_sharebench_wrapped", False):
        return

    @functools.wraps(step)
    def wrapped(self, *args, **kwargs):
        _guarded("optimizer step", _before_step, self)
        return step(self, *args, **kwargs)

    wrapped._sharebench_wrapped = True
    cls.step = wrapped


def _patch_optimizer(optimizer_module):
    global _seq
    Optimizer = optimizer_module.Optimizer
    if getattr(Optimizer, "_sharebench_patched", False):
        return
    Optimizer._sharebench_patched = True
    init, getstate, setstate = Optimizer.__init__, Optimizer.__getstate__, Optimizer.__setstate__

    def __init__(self, *args, **kwargs):
        global _seq
        init(self, *args, **kwargs)
        try:
            _seq += 1
            self._sharebench_origin = "%d.%d" % (os.getpid(), _seq)
            self._sharebench_where = _user_location(self)
            _wrap_step(type(self))
        except Exception as error:
            _hook_error("optimizer init", error)

    def __getstate__(self):
        state = getstate(self)
        if isinstance(state, dict) and hasattr(self, "_sharebench_origin"):
            state = dict(state)
            state["_sharebench_origin"] = (self._sharebench_origin, getattr(self, "_sharebench_where", None))
        return state

    def __setstate__(self, state):
        origin = state.pop("_sharebench_origin", None) if isinstance(state, dict) else None
        setstate(self, state)
        if origin:
            self._sharebench_origin, self._sharebench_where = origin
        _guarded("optimizer unpickle", _wrap_step, type(self))

    Optimizer.__init__, Optimizer.__getstate__, Optimizer.__setstate__ = __init__, __getstate__, __setstate__


def _optimizer_report(use):
    opt = use.opt
    params = _optimizer_params(opt)
    shared, total = _all_shared(params)
    return {"origin": getattr(opt, "_sharebench_origin", None), "where": getattr(opt, "_sharebench_where", None),
            "class": type(opt).__name__, "steps": use.steps, "no_grad_steps": use.no_grad_steps,
            "sampled": use.sampled, "same_grad": use.same_grad, "params": total, "shared": shared,
            "state_entries_at_first_step": use.state_entries_at_first_step, "state": _state_summary(opt)}


# --- modules --------------------------------------------------------------------------------------------
def _patch_module(nn_module):
    Module = nn_module.Module
    if getattr(Module, "_sharebench_patched", False):
        return
    Module._sharebench_patched = True
    state_dict = Module.state_dict

    def wrapped(self, *args, **kwargs):
        if _role == "child":
            _state_dict_taken.add(id(self))
        return state_dict(self, *args, **kwargs)

    Module.state_dict = wrapped


# --- processes ------------------------------------------------------------------------------------------
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
    global _pending_fork
    _pending_fork = _guarded("fork", _fork_info)


def _after_fork_in_child():
    global _role, _ended, _error, _fd, _received
    _role, _ended, _error, _received = "child", False, None, []
    _optimizers.clear()
    _state_dict_taken.clear()
    _handed.clear()
    _emit("start", ppid=os.getppid(), argv=sys.argv[:8], forked=True, fork=_pending_fork)


def _after_start(process, where, carried):
    objects = []
    for path, obj, kind in carried or ():
        item = _describe(obj, kind)
        item.update({"path": path, "kind": kind})
        objects.append(item)
        if kind == "optimizer":
            _handed[id(obj)] = obj
    method = getattr(process, "_start_method", None) or getattr(getattr(process, "_popen", None), "method", None)
    _emit("handoff", child=process.pid, where=where, method=method, objects=objects)


def _child_begin(process):
    global _role, _received
    _role = "child"
    _received = []
    objects = []
    for path, obj, kind in _objects_of(process):
        item = _describe(obj, kind)
        item.update({"path": path, "kind": kind})
        if kind in ("module", "tensor"):
            tensors = list(obj.parameters()) if kind == "module" else [obj]
            fp = _fingerprint(tensors)
            _received.append((path, obj, kind, fp))
        else:
            _received.append((path, obj, kind, None))
        objects.append(item)
    _emit("received", target=getattr(getattr(process, "_target", None), "__qualname__", None) or type(process).__name__,
          objects=objects)
    # multiprocessing's bootstrap prints a failed run()'s traceback with traceback.print_exc():
    # remember its end as it does (wrapping run() itself would add a frame to every traceback).
    import traceback
    print_exc = traceback.print_exc

    def print_and_remember(*args, **kwargs):
        global _error
        _error = _traceback_tail()
        return print_exc(*args, **kwargs)

    traceback.print_exc = print_and_remember


def _stepped_param_ids():
    ids = set()
    for use in _optimizers.values():
        if use.steps > 0:
            ids.update(id(p) for p in _optimizer_params(use.opt))
    return ids


def _end_report(code):
    report = {"code": code, "error": _error, "intra_op": _intra_op_threads(), "role": _role}
    if "torch" in sys.modules:
        report["optimizers"] = [_optimizer_report(u) for u in list(_optimizers.values())]
        report["handed"] = [{"origin": getattr(o, "_sharebench_origin", None), "state": _state_summary(o)}
                            for o in list(_handed.values())]
        stepped = _stepped_param_ids()
        changes = []
        for path, obj, kind, before in _received:
            if kind not in ("module", "tensor") or before is None:
                continue
            tensors = list(obj.parameters()) if kind == "module" else [obj]
            after = _fingerprint(tensors)
            if after is None or after == before:
                continue
            shared, total = _all_shared(tensors)
            changes.append({"path": path, "kind": kind, "class": type(obj).__name__, "params": total, "shared": shared,
                            "by_optimizer": any(id(t) in stepped for t in tensors),
                            "state_dict_taken": id(obj) in _state_dict_taken})
        report["changed"] = changes
        try:
            import torch.distributed as dist
            report["distributed"] = bool(dist.is_available() and dist.is_initialized())
        except Exception:
            report["distributed"] = False
    return report


def _end(code):
    global _ended
    if _ended:
        return
    _ended = True
    report = _guarded("end", _end_report, code) or {"code": code, "error": _error}
    _emit("end", **report)


def _traceback_tail(limit=4):
    import traceback
    lines = [l for l in traceback.format_exc().splitlines() if l.strip()]
    return "\n".join(lines[-limit:])


def _patch_process(process_module):
    BaseProcess = process_module.BaseProcess
    if getattr(BaseProcess, "_sharebench_patched", False):
        return
    BaseProcess._sharebench_patched = True
    start, bootstrap = BaseProcess.start, BaseProcess._bootstrap

    def patched_start(self):
        where = _guarded("start", _user_location)
        carried = _guarded("start", _objects_of, self)  # before start(): it deletes _args and _kwargs
        start(self)
        _guarded("start", _after_start, self, where, carried)

    def patched_bootstrap(self, *args, **kwargs):
        _guarded("child", _child_begin, self)
        code = bootstrap(self, *args, **kwargs)
        _end(code)
        return code

    BaseProcess.start, BaseProcess._bootstrap = patched_start, patched_bootstrap


def _patch_poll(popen_module):
    Popen = popen_module.Popen
    if "poll" not in vars(Popen) or getattr(Popen.poll, "_sharebench_wrapped", False):
        return
    poll = Popen.poll

    def patched(self, *args, **kwargs):
        known = self.returncode is not None
        code = poll(self, *args, **kwargs)
        if code is not None and not known:
            _emit("reaped", child=self.pid, code=code)
        return code

    patched._sharebench_wrapped = True
    Popen.poll = patched


def _on_torch(torch):
    global _baseline_tids
    _baseline_tids = {t for t in _native_threads() if t not in _python_threads() and t != os.getpid()}
    _patch_optimizer(sys.modules["torch.optim.optimizer"])
    _patch_module(sys.modules["torch.nn.modules.module"])
    _emit("torch", intra_op=_intra_op_threads())


_AFTER_IMPORT = {
    "torch": _on_torch,
    "multiprocessing.process": _patch_process,
    "multiprocessing.popen_fork": _patch_poll,
    "multiprocessing.popen_forkserver": _patch_poll,
}


class _AfterImport:
    """A meta path finder that lets the real finders find a watched module, then runs its hook once
    the module has executed."""

    def find_spec(self, name, path=None, target=None):
        hook = _AFTER_IMPORT.get(name)
        if hook is None:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                break
        else:
            return None
        loader = spec.loader
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        exec_module = loader.exec_module

        def exec_then_hook(module):
            exec_module(module)
            _AFTER_IMPORT.pop(name, None)
            _guarded("import " + name, hook, module)

        loader.exec_module = exec_then_hook
        return spec


def _excepthook(previous):
    def hook(kind, value, tb):
        global _error
        try:
            import traceback
            lines = [l for l in "".join(traceback.format_exception(kind, value, tb)).splitlines() if l.strip()]
            _error = "\n".join(lines[-4:])
            _emit("error", error=_error)
        except Exception:
            pass
        previous(kind, value, tb)

    return hook


def install():
    import atexit
    _emit("start", ppid=os.getppid(), argv=sys.argv[:8], forked=False)
    for name in list(_AFTER_IMPORT):
        if name in sys.modules:  # imported before us (rare): hook it now
            _guarded("import " + name, _AFTER_IMPORT.pop(name), sys.modules[name])
    sys.meta_path.insert(0, _AfterImport())
    os.register_at_fork(before=_before_fork, after_in_child=_after_fork_in_child)
    sys.excepthook = _excepthook(sys.excepthook)
    atexit.register(lambda: _end(None))
