"""Tensors sent between processes and changed before they were received, for `sharebench exec`
(the buffer-lifetime check, wings/exec/checks/buffer_lifetime.cc). Loaded by sharebench_watch.py.

A tensor put on a torch.multiprocessing Queue, SimpleQueue or Pipe is shared, not copied:
the receiver maps the sender's storage. A producer that refills the buffer it just sent makes the
consumer read the next batch's data. Each send and each receive of a tensor is fingerprinted (a
strided sample of at most 1 024 of its elements, summed) with its time, and its storage named as the
shared-state hooks name memory (file and offset of its pages). For a storage sent two or more times,
the runner pairs its sends and its receives in order (a queue is first in, first out) and finds the
receives whose contents differ from their send's: changed between the send and the receive. A tensor sent once (a
model's parameters handed over, then trained in place; a DataLoader batch) is never judged.

A tensor sent while still private (a Queue's feeder thread pickles it later, which moves it into
shared memory) is named when it is pickled (ForkingPickler.dumps, in the thread that pickles it), or at
the next send: a producer whose puts all run before the feeder thread first does (a busy machine) and
that drops the buffer before its end is still judged.

Costs: a sample's sum per tensor sent or received (a few microseconds); per message pickled while a
sent tensor awaits its name, a look at its tensors; nothing for other objects.
"""
import _thread
import sys
import time
import weakref

_emit = None
_user_location = None
_key = None                # sharebench_shared_state's _key(address)
_note_activity = None      # sharebench_shared_state's note_activity(): its events carry this module's report
_SAMPLE = 1024
_MAX_FPS = 4096            # fingerprints kept per storage
_pending = {}              # id(tensor) -> [weakref, [fingerprints], [sites]]: sent while still private
_sends = {}                # key -> {"count", "fps": set, "complete", "sites", "shape"}
_receives = {}             # key -> {"count", "fps": list, "sites"}
_lock = _thread.allocate_lock()  # _pending and _sends, between the sending thread and the one that pickles


def _tensors_in(obj):
    torch = sys.modules.get("torch")
    if torch is None:
        return []
    if torch.is_tensor(obj):
        return [obj]
    items = obj[:64] if isinstance(obj, (list, tuple)) else list(obj.values())[:64] if isinstance(obj, dict) else ()
    return [t for t in items if torch.is_tensor(t)]


def _fingerprint(t):
    import torch
    with torch.no_grad():
        flat = t.detach().reshape(-1)
        n = flat.numel()
        if n == 0:
            return 0.0
        sample = flat[::max(1, n // _SAMPLE)]
        return float(sample.double().sum()) if not sample.is_complex() else None


def _usable(t):
    return not t.is_cuda and not t.is_sparse and t.numel() > 0 and not t.requires_grad


def _site(sites):
    if len(sites) < 3:
        site = _user_location()
        if site not in sites:
            sites.append(site)


def _sent_as(key, t):
    entry = _sends.get(key)
    if entry is None:
        entry = _sends[key] = {"count": 0, "fps": [], "complete": True, "sites": [], "shape": list(t.shape)}
    return entry


def _add(entry, record):
    entry["count"] += 1
    if record[1] is None or len(entry["fps"]) >= _MAX_FPS:
        entry["complete"] = False
    else:
        entry["fps"].append(record)


def _resolve(tid, t, pending):
    key = _key(t.data_ptr())
    if key is not None and _pending.pop(tid, None) is not None:
        entry = _sent_as(key, t)
        for record in pending[1]:
            _add(entry, record)
        for site in pending[2]:
            if site not in entry["sites"] and len(entry["sites"]) < 3:
                entry["sites"].append(site)


def _resolve_pending():
    """Tensors sent while private (a Queue's feeder thread pickles them later, which moves them into
    shared memory) are named once they are shared."""
    for tid, pending in list(_pending.items()):
        t = pending[0]()
        if t is None:
            _pending.pop(tid, None)
        elif t.is_shared():
            _resolve(tid, t, pending)


def _pickled(obj):
    """A message just pickled for a queue or a pipe: its tensors are shared now. Named here, in the
    thread that pickled them, while the message still holds them: a producer that puts all its
    batches before the queue's feeder thread first runs (the feeder waits for the GIL) may have
    dropped the buffer by its end."""
    for t in _tensors_in(obj):
        with _lock:
            pending = _pending.get(id(t))
            if pending is not None and pending[0]() is t and t.is_shared():
                _resolve(id(t), t, pending)


def _sent_one(t, record):
    """Records one send; True when it was named (shared). Called with _lock held."""
    if _pending:
        _resolve_pending()
    key = _key(t.data_ptr()) if t.is_shared() else None
    if key is None:  # private until pickled: named once shared (_pickled, or the next send)
        pending = _pending.get(id(t))
        if pending is None or pending[0]() is not t:
            if len(_pending) >= 1024:
                _pending.pop(next(iter(_pending)))
            pending = _pending[id(t)] = [weakref.ref(t), [], []]
        if len(pending[1]) < _MAX_FPS:
            pending[1].append(record)
        _site(pending[2])
        return False
    entry = _sent_as(key, t)
    _add(entry, record)
    _site(entry["sites"])
    return True


def sent(obj):
    for t in _tensors_in(obj):
        if not _usable(t):
            continue
        record = [time.monotonic(), _fingerprint(t)]
        with _lock:  # a queue's feeder thread may name this tensor's pending sends meanwhile (_pickled)
            named = _sent_one(t, record)
        if named:
            _note_activity()


def received(obj):
    for t in _tensors_in(obj):
        if not _usable(t) or not t.is_shared():
            continue
        key = _key(t.data_ptr())
        if key is None:
            continue
        entry = _receives.get(key)
        if entry is None:
            entry = _receives[key] = {"count": 0, "fps": [], "sites": []}
        entry["count"] += 1
        if len(entry["fps"]) < _MAX_FPS:
            entry["fps"].append([time.monotonic(), _fingerprint(t)])
        _site(entry["sites"])
        _note_activity()  # a consumer is often terminate()d: what it received is reported as it goes


def report():
    locked = _lock.acquire(timeout=1.0)  # never waits long: a report may come at an odd moment (the process's end)
    try:
        _resolve_pending()
    finally:
        if locked:
            _lock.release()
    sends = []
    for k, e in list(_sends.items())[:64]:
        if e["count"] >= 2:
            sends.append({"key": k, "count": e["count"], "fps": e["fps"], "complete": e["complete"],
                          "sites": e["sites"], "shape": e["shape"]})
    return {"sends": sends,
            "receives": [{"key": k, "count": e["count"], "fps": e["fps"], "sites": e["sites"]}
                         for k, e in list(_receives.items())[:64] if e["count"] >= 1]}


def has_anything():
    return bool(_pending) or any(e["count"] >= 2 for e in _sends.values()) or bool(_receives)


def _wrap(owner, name, before=None, after=None):
    original = vars(owner).get(name)
    if original is None or getattr(original, "_sharebench_wrapped", False):
        return

    if before is not None:
        def wrapped(self, obj, *args, **kwargs):
            try:
                before(obj)
            except Exception as error:
                _failed("sends: " + name, error)
            return original(self, obj, *args, **kwargs)
    else:
        def wrapped(self, *args, **kwargs):
            result = original(self, *args, **kwargs)
            try:
                after(result)
            except Exception as error:
                _failed("sends: " + name, error)
            return result

    wrapped._sharebench_wrapped = True
    setattr(owner, name, wrapped)


_failed = None  # sharebench_shared_state's: a hook that fails reports it (at most 3 times) and goes on


def _patch_queues(queues):
    for cls in (queues.Queue, queues.SimpleQueue):
        _wrap(cls, "put", before=sent)
        _wrap(cls, "get", after=received)


def _patch_reduction(reduction):
    """Queue (in its feeder thread), SimpleQueue and Connection pickle with ForkingPickler.dumps."""
    pickler = reduction.ForkingPickler
    original = vars(pickler).get("dumps")
    func = getattr(original, "__func__", None)
    if func is None or getattr(func, "_sharebench_wrapped", False):
        return

    def dumps(cls, obj, *args, **kwargs):
        result = func(cls, obj, *args, **kwargs)
        if _pending:
            try:
                _pickled(obj)
            except Exception as error:
                _failed("sends: pickled", error)
        return result

    dumps._sharebench_wrapped = True
    pickler.dumps = classmethod(dumps)


def _patch_connection(connection):
    _wrap(connection._ConnectionBase, "send", before=sent)
    _wrap(connection._ConnectionBase, "recv", after=received)


def install(hooks):
    global _emit, _user_location, _key, _note_activity, _failed
    shared_state, after_import = hooks.shared_state, hooks.after_import
    _emit, _user_location, _key, _note_activity = hooks.emit, hooks.user_location, shared_state._key, shared_state.note_activity
    _failed = shared_state.report_failure
    shared_state.add_report(report, has_anything)
    after_import["multiprocessing.queues"] = _patch_queues
    after_import["multiprocessing.connection"] = _patch_connection
    after_import["multiprocessing.reduction"] = _patch_reduction


def after_fork_in_child():
    global _lock
    _lock = _thread.allocate_lock()  # a feeder thread of the parent's may have held it at the fork
    _pending.clear()
    _sends.clear()
    _receives.clear()
