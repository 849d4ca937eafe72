"""Sharing checks for `sharebench exec`, loaded by the injected sitecustomize into every Python
process of the program (the program itself; children by fork, spawn, forkserver, mp.spawn, Pool
and DataLoader workers). It watches how the program shares its model and writes what it sees as
JSON lines to the file named by SHAREBENCH_EVENTS; the runner turns them into checks, notes and
the process table (wings/exec/sharing_findings.cc). It never raises into the program: a hook
that fails reports the failure once (event "hook-error") and the program goes on untouched.

Events, one JSON object a line, each with "event", "pid" and "t" (time.monotonic(), the runner's
clock too). Their fields are declared in events_schema.json beside this file, which the runner's
side is tested against too (tests/exec_protocol_test.py): a field renamed on one side fails that
test. Each process's "start" carries PROTOCOL; the runner refuses to judge events of another.
  start     a Python process began: its parent, argv; after a fork, what the forking process had
            alive at that moment (native threads started since torch's import, Python threads,
            intra-op threads, whether CUDA was initialised) and the line that forked it; the test
            the program's test runner was running then (pytest, unittest), if any
  torch     torch finished importing here: intra-op threads
  handoff   a parent started a multiprocessing child: the child's pid, the start() line, every
            module, tensor and optimizer in the Process's args, kwargs and attributes, and whether
            their storage is shared (after start(): spawn and forkserver pickling shares storage)
  received  a child began: the same objects as it sees them, optimizer state included
  end       a process ended: exit code, its Python traceback's last lines, optimizer use (steps,
            steps without gradients, steps on an unchanged gradient, state kinds, the step
            counter), modules it received and changed, its intra-op threads
  reaped, observed, terminated
            who learnt of a child's end, and who ended one (sharebench_deaths.py)
  error     an uncaught exception's traceback tail (sys.excepthook)

What the optimizers did and what backward() added to is counted by sharebench_optimizers.py and
reported in these events; each other check's module beside this file adds its own fields.

Costs: a fingerprint (sum and norm) of a received module's parameters when a child begins and
ends, and of a handed model before its first child starts; nothing per tensor op (the modules
beside this file say their own costs).
"""
import json
import os
import sys
import time

import sharebench_optimizers as _optimizers
import sharebench_random_streams as _random_streams
import sharebench_shared_state as _shared_state
import sharebench_versions as _versions

PROTOCOL = 1  # events_schema.json's "version"; the runner's kExecEventsProtocol
_path = os.environ.get("SHAREBENCH_EVENTS")
_fd = None
_role = "program"
_ended = False
_error = None
_received = []          # (path, obj, kind, details) a child got from its parent
_state_dict_taken = set()
_handed = {}            # id(optimizer) -> optimizer this process handed to a child (its counter is read at the end)
_handed_models = {}     # id(module or tensor) -> [obj, kind, fingerprint before the first child started]
_hook_errors = 0
_formatted_error = None  # the last traceback.format_exc() in a child: mp.spawn's wrapper reports a rank's exception so
_here = os.path.dirname(os.path.abspath(__file__))
_stdlib = os.path.dirname(os.__file__)
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


def _intra_op_threads():
    torch = sys.modules.get("torch")
    try:
        return torch.get_num_threads() if torch is not None else None
    except Exception:
        return None


# --- fingerprints and summaries ---------------------------------------------------------------------
def _fingerprint(tensors, norms=None):
    """(sum, norm) over tensors in float64: equal for equal contents, almost surely different otherwise.
    With `norms` (a dict), each tensor's own norm in float64 is put there by its data_ptr() too (the
    running-sum probe's identities, from the same pass)."""
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
            if norms is None:
                norm += float(torch.linalg.vector_norm(d)) ** 2
            else:
                own = float(torch.linalg.vector_norm(d, dtype=torch.float64))
                norm += own ** 2
                if len(norms) < 4096:
                    norms[d.data_ptr()] = own
    return [total, norm]


def _all_shared(tensors):
    tensors = [t for t in tensors if t is not None]
    return sum(1 for t in tensors if t.is_shared()), len(tensors)


def _describe(obj, kind):
    """What a handoff or a child sees of one object."""
    if kind == "module":
        params = list(obj.parameters())
        shared, total = _all_shared(params)
        return {"class": type(obj).__name__, "params": total, "shared": shared,
                "share_memory_at": getattr(obj, "_sharebench_share_memory_at", None)}
    if kind == "tensor":
        return {"class": "Tensor", "shape": list(obj.shape), "params": 1, "shared": int(obj.is_shared())}
    shared, total = _all_shared(_optimizers.optimizer_params(obj))
    return {"class": type(obj).__name__, "params": total, "shared": shared, "origin": getattr(obj, "_sharebench_origin", None),
            "where": getattr(obj, "_sharebench_where", None), "state": _optimizers.state_summary(obj)}


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


# --- modules --------------------------------------------------------------------------------------------
def _model_words(module):
    where = getattr(module, "_sharebench_share_memory_at", None)
    return "the shared %s%s" % (type(module).__name__, " (share_memory() at %s)" % where if where else "")


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
    share_memory = Module.share_memory

    def shared(self, *args, **kwargs):
        result = share_memory(self, *args, **kwargs)
        try:  # where the program shared it: the advice when its parameters are private anyway
            self._sharebench_share_memory_at = _user_location(self)
            _versions.watch(self, _model_words(self))
        except Exception as error:
            _hook_error("share_memory", error)
        return result

    Module.share_memory = shared


# --- processes ------------------------------------------------------------------------------------------
def _after_fork_in_child():
    global _role, _ended, _error, _fd, _received, _formatted_error
    _role, _ended, _error, _received, _formatted_error = "child", False, None, [], None
    _state_dict_taken.clear()
    _handed.clear()
    _handed_models.clear()
    for module in _check_modules:
        _guarded("fork", module.after_fork_in_child)
    fields = {}
    for more in _child_start_fields:
        fields.update(_guarded("fork", more) or {})
    _emit("start", ppid=os.getppid(), argv=sys.argv[:8], forked=True, protocol=PROTOCOL, **fields, **_test_field())


def _before_start(carried):
    """The models this process hands over, fingerprinted before the first child that gets each one
    starts: a child that trains fast could otherwise change it before the parent looked."""
    for path, obj, kind in carried or ():
        if kind in ("module", "tensor") and id(obj) not in _handed_models:
            tensors = list(obj.parameters()) if kind == "module" else [obj]
            _handed_models[id(obj)] = [obj, kind, _fingerprint(tensors)]
            if kind == "module":
                for hand_over in _on_hand_over:
                    _guarded("hand over", hand_over, obj)


def _after_start(process, where, carried):
    objects = []
    for path, obj, kind in carried or ():
        item = _describe(obj, kind)
        item.update({"path": path, "kind": kind})
        if id(obj) in _handed_models:
            item["oid"] = id(obj)
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
            if kind == "module":
                _guarded("versions", _versions.watch, obj, _model_words(obj))
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
    # torch.multiprocessing.spawn's wrapper catches a rank's exception, sends traceback.format_exc()
    # to the parent and exits 1: remember the last one, shown if the process then ends badly.
    format_exc = traceback.format_exc

    def format_and_remember(*args, **kwargs):
        global _formatted_error
        text = format_exc(*args, **kwargs)
        lines = [l for l in text.splitlines() if l.strip()]
        if lines and lines[-1] != "NoneType: None":
            _formatted_error = "\n".join(lines[-4:])
        return text

    traceback.format_exc = format_and_remember


def _end_report(code):
    report = {"code": code, "error": _error, "intra_op": _intra_op_threads(), "role": _role}
    if _shared_state.has_anything():
        report["shared_state"] = _shared_state.report()
    for fields in _end_fields:
        report.update(_guarded("end", fields) or {})
    if "torch" in sys.modules:
        report["optimizers"] = [_optimizers.optimizer_report(u) for u in list(_optimizers.uses.values())]
        report["handed"] = [{"origin": getattr(o, "_sharebench_origin", None), "state": _optimizers.state_summary(o)}
                            for o in list(_handed.values())]
        stepped = _optimizers.stepped_param_ids()
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
        # What this process stepped of what it received, and whether its own handed models changed:
        # the runner judges the learning from the two ends (model-learned).
        trained = []
        for path, obj, kind, _ in _received:
            if kind not in ("module", "tensor"):
                continue
            # Parameters that can learn: a frozen model (requires_grad False) an optimizer happens
            # to hold is not expected to change.
            ids = {id(t) for t in (obj.parameters() if kind == "module" else [obj]) if t.requires_grad}
            steps = sum(u.completed for u in list(_optimizers.uses.values())
                        if ids & {id(p) for p in _optimizers.optimizer_params(u.opt)})
            if steps > 0:
                trained.append({"path": path, "class": type(obj).__name__, "steps": steps})
        report["trained"] = trained
        models = []
        for oid, (obj, kind, before) in list(_handed_models.items()):
            tensors = list(obj.parameters()) if kind == "module" else [obj]
            after = _fingerprint(tensors)
            models.append({"oid": oid, "class": type(obj).__name__,
                           "changed": None if before is None or after is None else after != before})
        report["handed_models"] = models
        streams = _guarded("random streams", _random_streams.report)
        if streams is not None:
            # A trainer of a model it was handed: it received a module (or a tensor that learns) and
            # ran backward() or an optimizer step. Only trainers' streams are compared.
            received = any(kind == "module" or (kind == "tensor" and getattr(obj, "requires_grad", False))
                           for _, obj, kind, _ in _received)
            trained = _optimizers.backwards() > 0 or any(u.steps > 0 for u in list(_optimizers.uses.values()))
            streams["received_model"] = bool(received and trained)
            report["random_streams"] = streams
        try:
            import torch.distributed as dist
            report["distributed"] = bool(dist.is_available() and dist.is_initialized())
        except Exception:
            report["distributed"] = False
    return report


def _end(code):
    global _ended, _error
    if _ended:
        return
    _ended = True
    if _error is None and code not in (None, 0) and _formatted_error:
        _error = _formatted_error
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
        _guarded("start", _before_start, carried)
        start(self)
        _guarded("start", _after_start, self, where, carried)

    def patched_bootstrap(self, *args, **kwargs):
        _guarded("child", _child_begin, self)
        code = bootstrap(self, *args, **kwargs)
        _end(code)
        return code

    BaseProcess.start, BaseProcess._bootstrap = patched_start, patched_bootstrap


def _on_torch(torch):
    _patch_module(sys.modules["torch.nn.modules.module"])
    _guarded("torch", _random_streams.on_torch, torch)
    _emit("torch", intra_op=_intra_op_threads())


_AFTER_IMPORT = {
    "torch": _on_torch,
    "multiprocessing.process": _patch_process,
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


def _current_test():
    """The test the program's test runner is running, as it names it: pytest's PYTEST_CURRENT_TEST
    without its phase ("tests/test_x.py::test_y"), or the id of the unittest test running
    (SHAREBENCH_TEST, set around TestCase.run below); "" outside a test. Inherited through the
    environment, so a child started during a test carries that test."""
    current = os.environ.get("PYTEST_CURRENT_TEST", "")
    if current:
        return current.rsplit(" (", 1)[0] if current.endswith(")") else current
    return os.environ.get("SHAREBENCH_TEST", "")


def _test_field():
    test = _current_test()
    return {"test": test} if test else {}


def _hook_unittest(case):
    """unittest names no running test in the environment: set SHAREBENCH_TEST to its id while it runs."""
    run = case.TestCase.run

    def run_naming_the_test(self, *args, **kwargs):
        before = os.environ.get("SHAREBENCH_TEST")
        try:
            os.environ["SHAREBENCH_TEST"] = self.id()
        except Exception:
            return run(self, *args, **kwargs)
        try:
            return run(self, *args, **kwargs)
        finally:
            if before is None:
                os.environ.pop("SHAREBENCH_TEST", None)
            else:
                os.environ["SHAREBENCH_TEST"] = before

    case.TestCase.run = run_naming_the_test


# The hook modules beside this file (sharebench_*.py, but for this one and the program's progress
# module), one per concern of the race checks: each has install(hooks) and after_fork_in_child(),
# and is installed in its INSTALL_ORDER (sharebench_shared_state first: the others report through its
# events). A new one is a new file here (CMakeLists.txt embeds the folder whole) and nothing else.
_check_modules = []
_on_hand_over = []  # what a check module runs on each module this process hands to a child, once
_end_fields = []    # what check modules add to this process's "end": each a function returning a dict
_child_start_fields = []  # and to a forked child's "start"


def _also_after_import(name, hook):
    """Runs `hook` once `name` is imported, after the hooks already set for it."""
    previous = _AFTER_IMPORT.get(name)

    def both(module):
        if previous is not None:
            previous(module)
        hook(module)

    _AFTER_IMPORT[name] = both


def _install_check_modules():
    import importlib
    import types
    names = sorted(f[:-3] for f in os.listdir(_here) if f.startswith("sharebench_") and f.endswith(".py")
                   and f not in ("sharebench_watch.py", "sharebench_progress.py"))
    modules = sorted((importlib.import_module(n) for n in names), key=lambda m: getattr(m, "INSTALL_ORDER", 50))
    hooks = types.SimpleNamespace(emit=_emit, user_location=_user_location, after_import=_AFTER_IMPORT,
                                  also_after_import=_also_after_import, events_path=_path, shared_state=_shared_state,
                                  current_test=_current_test, on_hand_over=_on_hand_over,
                                  end_fields=_end_fields, child_start_fields=_child_start_fields,
                                  intra_op_threads=_intra_op_threads, guarded=_guarded,
                                  hook_error=_hook_error, fingerprint=_fingerprint, all_shared=_all_shared)
    for module in modules:
        if hasattr(module, "install") and hasattr(module, "after_fork_in_child"):
            module.install(hooks)
            _check_modules.append(module)


def install():
    import atexit
    _emit("start", ppid=os.getppid(), argv=sys.argv[:8], forked=False, protocol=PROTOCOL, **_test_field())
    _AFTER_IMPORT["unittest.case"] = _hook_unittest
    _install_check_modules()
    for name in list(_AFTER_IMPORT):
        if name in sys.modules:  # imported before us (rare): hook it now
            _guarded("import " + name, _AFTER_IMPORT.pop(name), sys.modules[name])
    sys.meta_path.insert(0, _AfterImport())
    os.register_at_fork(after_in_child=_after_fork_in_child)
    sys.excepthook = _excepthook(sys.excepthook)
    atexit.register(lambda: _end(None))
