"""Which model a process used after the children it handed a model to trained it, for the
`trained-model-used` check of `sharebench exec` (wings/exec/checks/trained_model_used.cc). Loaded by
sharebench_watch.py.

A parent that hands a model to its workers and, once they are done, evaluates or saves another
object of the same class reports numbers that are not the trained model's: a fresh `Net()` built
again for the test, a checkpoint loaded into a new object that a worker saved early (or never), a
model rebuilt by the same factory. The workers' updates are in the object they were handed; the
other one holds its own values.

How: for each module this process hands to a child (sharebench_watch's handoff), the class's calls
(`__call__`), `state_dict()` and `torch.save()` of objects of that class are recorded from then on:
the handed object's own uses, and up to 8 other objects' uses, each with whether it shares memory
with the handed one or holds the same values (compared at a use, at most every 0.2 s and never more
than about 2 % of the time, again after a `load_state_dict()` into it, and at the end). The runner
compares the times with the end of the children that trained the model: a process that, after
they ended, used only other objects of that class holding other values used a model they did not
train. Uses are kept apart per test (pytest's or unittest's), so a suite's tests do not mix.

Costs: nothing in a process that handed no module; per call of a module of a handed class, a
lookup and a time read; per comparison, one pass over the parameters until the first difference.
"""
import sys
import time
import weakref

_user_location = None
_current_test = None
_note_activity = None
_failed = None
_MAX_HANDED = 16
_MAX_OTHERS = 8      # other objects of a handed class recorded per handed model
_CHECK_EVERY = 0.2   # seconds between two comparisons of one object, at least
_CHECK_SHARE = 50    # and at least this many times the last comparison's own time (2 %)
_handed = {}         # id(handed module) -> _Handed (sharebench_watch keeps the module alive)
_by_class = {}       # class -> [_Handed]
_others = {}         # id(other module) -> _Other, of every handed model of its class


class _Handed:
    __slots__ = ("module", "test", "uses", "last_t", "site", "site_t", "others")

    def __init__(self, module, test):
        self.module, self.test = module, test
        self.uses, self.last_t, self.site, self.site_t = 0, None, None, 0.0
        self.others = []


class _Other:
    __slots__ = ("ref", "handed", "uses", "first_t", "last_t", "site", "checked_t", "next_check", "equal", "shares")

    def __init__(self, module, handed, now):
        self.ref, self.handed = weakref.ref(module), handed
        self.uses, self.first_t, self.last_t, self.site = 0, now, now, None
        self.checked_t, self.next_check, self.equal, self.shares = None, 0.0, None, None


def _compare(other, handed):
    """(same memory, same values): the other module's parameters against the handed one's."""
    torch = sys.modules["torch"]
    mine, theirs = list(other.parameters()), list(handed.parameters())
    if len(mine) != len(theirs):
        return False, False
    shares = bool(mine) and all(a.data_ptr() == b.data_ptr() for a, b in zip(mine, theirs))
    if shares:
        return True, True
    with torch.no_grad():
        for a, b in zip(mine, theirs):
            if a.shape != b.shape or not torch.equal(a, b.to(device=a.device, dtype=a.dtype)):
                return False, False
    return False, True


def _check(o, module, now):
    started = time.perf_counter()
    o.shares, o.equal = _compare(module, o.handed.module)
    o.checked_t = now
    o.next_check = now + max(_CHECK_EVERY, _CHECK_SHARE * (time.perf_counter() - started))


def _used(module):
    now = time.monotonic()
    h = _handed.get(id(module))
    if h is not None and h.module is module:
        h.uses += 1
        h.last_t = now
        if now - h.site_t > 1.0:
            h.site, h.site_t = _user_location(), now
        return
    o = _others.get(id(module))
    if o is not None and o.ref() is not module:
        o = None  # a dead object's id, taken again
    if o is None:
        test = _current_test()
        candidates = [c for c in _by_class.get(type(module), ()) if c.test == test and len(c.others) < _MAX_OTHERS]
        if not candidates:
            return
        o = _Other(module, candidates[-1], now)  # the latest handed model of its class, in this test
        candidates[-1].others.append(o)
        _others[id(module)] = o
    o.uses += 1
    o.last_t = now
    if now >= o.next_check:
        _check(o, module, now)
        o.site = _user_location()
        _note_activity()


def _guarded_use(module):
    try:
        _used(module)
    except Exception as error:
        _failed("model used", error)


def _wrap_call(cls):
    original = cls.__call__
    if getattr(original, "_sharebench_model_used", False):
        return

    def call(self, *args, **kwargs):
        if _by_class:  # nothing in a forked child that has handed nothing over
            _guarded_use(self)
        return original(self, *args, **kwargs)

    call._sharebench_model_used = True
    call._sharebench_restore = (original, "__call__" in vars(cls))  # what to put back, and whether the class had its own
    cls.__call__ = call


def on_hand_over(module):
    """sharebench_watch hands this every module this process hands to a child, once."""
    torch = sys.modules.get("torch")
    if torch is None or not isinstance(module, torch.nn.Module) or isinstance(module, torch.jit.ScriptModule):
        return
    if id(module) in _handed or len(_handed) >= _MAX_HANDED:
        return
    h = _Handed(module, _current_test())
    _handed[id(module)] = h
    o = _others.pop(id(module), None)
    if o is not None:  # used before it was handed over (a sweep's next model): its uses are its own now
        o.handed.others.remove(o)
    _by_class.setdefault(type(module), []).append(h)
    _wrap_call(type(module))


def _patch(torch):
    import functools
    Module = torch.nn.Module
    state_dict, load_state_dict, save = Module.state_dict, Module.load_state_dict, torch.save

    @functools.wraps(state_dict)
    def taking_state_dict(self, *args, **kwargs):
        if _by_class and type(self) in _by_class:
            _guarded_use(self)
        return state_dict(self, *args, **kwargs)

    @functools.wraps(load_state_dict)
    def loading(self, *args, **kwargs):
        o = _others.get(id(self)) if _others else None
        if o is not None:
            o.next_check = 0.0  # new values: compare again at the next use
        return load_state_dict(self, *args, **kwargs)

    @functools.wraps(save)
    def saving(obj, *args, **kwargs):
        if _by_class and type(obj) in _by_class:
            _guarded_use(obj)
        return save(obj, *args, **kwargs)

    Module.state_dict, Module.load_state_dict = taking_state_dict, loading
    torch.save = saving


def report():
    out = []
    for h in list(_handed.values()):
        others = []
        for o in h.others:
            module = o.ref()
            if module is not None and (o.checked_t is None or o.last_t > o.checked_t):
                try:  # uses since the last comparison: compare now, standing for the last of them
                    _check(o, module, o.last_t)
                except Exception as error:
                    _failed("model used", error)
            others.append({"site": o.site, "uses": o.uses, "first_t": o.first_t, "last_t": o.last_t,
                           "checked_t": o.checked_t, "equal": o.equal, "shares": o.shares})
        if h.uses or others:
            out.append({"oid": id(h.module), "class": type(h.module).__name__, "uses": h.uses, "last_t": h.last_t,
                        "site": h.site, "others": others})
    return {"model_uses": out}


def has_anything():
    return any(h.uses or h.others for h in _handed.values())


def install(hooks):
    global _user_location, _current_test, _note_activity, _failed
    shared_state = hooks.shared_state
    _user_location, _current_test = hooks.user_location, hooks.current_test
    _note_activity, _failed = shared_state.note_activity, shared_state.report_failure
    shared_state.add_report(report, has_anything)
    hooks.on_hand_over.append(on_hand_over)
    hooks.also_after_import("torch", _patch)


def after_fork_in_child():
    """A forked child handed nothing yet: its parent's handed models and uses are the parent's. Its
    classes' calls go straight to the model again (a worker calls its model at every step; a spawned
    one never had the wrapper), unless another wrapper was put over this one since."""
    for cls in list(_by_class):
        call = cls.__dict__.get("__call__")
        if getattr(call, "_sharebench_model_used", False):
            original, had_own = call._sharebench_restore
            if had_own:
                cls.__call__ = original
            else:
                del cls.__call__  # inherited again, as before the wrapper
    _handed.clear()
    _by_class.clear()
    _others.clear()
