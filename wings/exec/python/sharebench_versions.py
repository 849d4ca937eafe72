"""Versions of a shared model published whole while another process read it, for `sharebench exec`
(the consistent-snapshots check, wings/exec/checks/consistent_snapshots.cc). Loaded by
sharebench_watch.py.

A server that hot-reloads a shared model (`model.load_state_dict(new)`, or a loop of `p.copy_(q)`)
while inference workers run `forward()` on it, with no lock that both hold, lets a worker read a
mix of two versions: some layers old, some new. The same holds for an A3C-style sync that copies the
shared model (`local.load_state_dict(shared.state_dict())`) while another process publishes into it.
An optimizer's step (Hogwild) is not a version: its small increments may interleave by design, and
nothing here counts them.

How: each shared model a process watches (shared by share_memory() there, or received by a child)
has a version counter in a file of exec's private directory, named after the shared memory of the
model's first parameter, so that every process of the program maps the same one. A publish (a
load_state_dict into the model; copy_ into its first parameter, up to copy_ into its last) makes the
counter odd while it writes and even again after. Each forward() of a watched model, and each
load_state_dict whose source is a watched model's tensors, reads the counter before and after: odd,
or changed, means the read overlapped a publish. No sampling, no timing: every overlap is seen.

Costs: per call of a watched model (its __call__, which runs forward()), one Python call and two
reads of a mapped integer (about a microsecond); per publish, two writes; per copy_() called from Python in a process that watches a
model, one data_ptr() and a lookup. Nothing for other modules.
"""
import mmap
import os
import sys
import time

_user_location = None
_key = None            # sharebench_shared_state's _key(address): a shared storage's file and offset
_note_activity = None  # sharebench_shared_state's note_activity(): its events carry this report
_failed = None
_dir = None            # exec's private directory (the events file's): where the counters live
_MAX_WATCHED = 64
_watches = {}          # storage key of a model's first parameter -> _Watch
_by_module = {}        # id(module) -> (module, _Watch): the module is kept alive, so its id stays its own
_by_ptr = {}           # data_ptr of a watched model's parameter -> (_Watch, is_first, is_last)
_in_publish = 0        # inside a load_state_dict this module counts: its copy_ calls are that publish


class _Watch:
    __slots__ = ("key", "what", "counter", "mapping", "reads", "torn", "read_sites", "publishes", "publish_sites",
                 "first_publish_t", "last_publish_t", "open")

    def __init__(self, key, what, mapping):
        self.key, self.what, self.mapping = key, what, mapping
        self.counter = memoryview(mapping).cast("Q")
        self.reads = self.torn = self.publishes = 0
        self.read_sites, self.publish_sites = [], []
        self.first_publish_t = self.last_publish_t = None
        self.open = False  # a copy_ publish began at the first parameter and has not reached the last

    def reset(self):
        self.reads = self.torn = self.publishes = 0
        self.read_sites, self.publish_sites = [], []
        self.first_publish_t = self.last_publish_t = None


def _counter_file(key):
    name = "version-" + "".join(c if c.isalnum() else "-" for c in key)
    fd = os.open(os.path.join(_dir, name), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        if os.fstat(fd).st_size < 8:
            os.ftruncate(fd, 8)  # every process may be first; a file already 8 bytes keeps its count
        return mmap.mmap(fd, 8)
    finally:
        os.close(fd)


def _site(sites):
    if len(sites) < 3:
        site = _user_location()
        if site not in sites:
            sites.append(site)


def watch(module, what):
    """Counts this process's reads of `module` and publishes into it, when its parameters are shared."""
    torch = sys.modules.get("torch")
    if _dir is None or torch is None or id(module) in _by_module or len(_by_module) >= _MAX_WATCHED:
        return
    if isinstance(module, torch.jit.ScriptModule):
        return
    params = list(module.parameters())
    if not params or params[0].is_cuda or not params[0].is_shared():
        return
    key = _key(params[0].data_ptr())
    if key is None:
        return
    w = _watches.get(key)
    if w is None:
        w = _watches[key] = _Watch(key, what, _counter_file(key))
    _by_module[id(module)] = (module, w)
    for i, p in enumerate(params):
        if not p.is_cuda:
            _by_ptr[p.data_ptr()] = (w, i == 0, i == len(params) - 1)
    _wrap_call(type(module))


def _torn(w):
    w.torn += 1
    _site(w.read_sites)
    _note_activity()


def _wrap_call(cls):
    """Counts each call of a watched model of this class. The class's __call__ is wrapped, not its
    forward: TorchScript compiles forward() from its source (torch.jit.script of a model shared
    before), and torch.fx and inspect read its signature; neither looks at __call__."""
    original = cls.__call__
    if getattr(original, "_sharebench_versions", False):
        return

    def call(self, *args, **kwargs):
        watched = _by_module.get(id(self))
        if watched is None:
            return original(self, *args, **kwargs)
        w = watched[1]
        before = w.counter[0]
        result = original(self, *args, **kwargs)
        after = w.counter[0]
        w.reads += 1
        if before != after or before & 1:
            _torn(w)
        elif not w.reads & 1023:
            _note_activity()  # a worker the program terminates reports what it read as it goes
        return result

    call._sharebench_versions = True
    cls.__call__ = call


def _begin_publish(w):
    if not w.counter[0] & 1:
        w.counter[0] += 1
    now = time.monotonic()
    w.publishes += 1
    w.last_publish_t = now
    if w.first_publish_t is None:
        w.first_publish_t = now
    _site(w.publish_sites)


def _end_publish(w):
    if w.counter[0] & 1:
        w.counter[0] += 1
    w.last_publish_t = time.monotonic()
    _note_activity()


def _sources_of(state_dict):
    """The watched models whose tensors a state dict holds: a copy from them is a read of them."""
    torch = sys.modules["torch"]
    found = []
    for value in list(state_dict.values())[:4096]:
        if torch.is_tensor(value) and not value.is_cuda:
            entry = _by_ptr.get(value.data_ptr())
            if entry is not None and entry[0] not in found:
                found.append(entry[0])
    return found


def _patch_module(Module):
    load_state_dict = Module.load_state_dict

    def loading(self, state_dict, *args, **kwargs):
        global _in_publish
        if not _by_ptr:
            return load_state_dict(self, state_dict, *args, **kwargs)
        target, sources, before = None, [], []
        try:
            watched = _by_module.get(id(self))
            target = watched[1] if watched is not None else None
            sources = [w for w in _sources_of(state_dict) if w is not target] if hasattr(state_dict, "values") else []
            if target is not None:
                _begin_publish(target)
            before = [w.counter[0] for w in sources]
        except Exception as error:
            _failed("versions: load_state_dict", error)
        _in_publish += 1
        try:
            return load_state_dict(self, state_dict, *args, **kwargs)
        finally:
            _in_publish -= 1
            try:
                if target is not None:
                    _end_publish(target)
                for w, b in zip(sources, before):
                    w.reads += 1
                    if b != w.counter[0] or b & 1:
                        _torn(w)
            except Exception as error:
                _failed("versions: load_state_dict", error)

    Module.load_state_dict = loading


def _patch_copy(Tensor):
    copy_ = Tensor.copy_

    def copying(self, src, *args, **kwargs):
        if not _by_ptr or _in_publish:
            return copy_(self, src, *args, **kwargs)
        entry = _by_ptr.get(self.data_ptr()) if not self.is_cuda else None
        if entry is None:
            return copy_(self, src, *args, **kwargs)
        w, first, last = entry
        lone = not first and not w.open  # a copy_ into one parameter, not a loop from the first
        if first or lone:
            _begin_publish(w)
            w.open = not lone
        try:
            return copy_(self, src, *args, **kwargs)
        finally:
            if lone or last:
                w.open = False
                _end_publish(w)

    Tensor.copy_ = copying


def on_torch(torch):
    _patch_module(torch.nn.Module)
    _patch_copy(torch.Tensor)


def report():
    return {"versions": [{"key": w.key, "what": w.what, "reads": w.reads, "torn": w.torn, "read_sites": w.read_sites,
                          "publishes": w.publishes, "publish_sites": w.publish_sites,
                          "first_publish_t": w.first_publish_t, "last_publish_t": w.last_publish_t}
                         for w in list(_watches.values())[:_MAX_WATCHED] if w.reads or w.publishes]}


def has_anything():
    return any(w.reads or w.publishes for w in _watches.values())


def install(hooks):
    global _user_location, _key, _note_activity, _failed, _dir
    shared_state, events_path = hooks.shared_state, hooks.events_path
    _user_location, _key, _note_activity = hooks.user_location, shared_state._key, shared_state.note_activity
    _failed = shared_state.report_failure
    _dir = os.path.dirname(os.path.abspath(events_path)) if events_path else None
    shared_state.add_report(report, has_anything)
    hooks.also_after_import("torch", on_torch)


def after_fork_in_child():
    """A forked child keeps its parent's watches (the same models, the same counters) and none of its
    parent's counts: the parent reports those."""
    for w in _watches.values():
        w.reset()
