"""How each process uses its optimizers and what its backward() calls add to, for the checks of
`sharebench exec` that judge training: optimizer-state-shared, grads-delivered, updates-shared and
model-learned (wings/exec/checks/). Loaded by sharebench_watch.py, which puts what this module
counts into its handoff, received and end events (their fields are in events_schema.json).

Optimizer state and counters are read, not matched to a pattern: every number a state entry, a
param_group or an attribute of the optimizer holds (a Python number or a one-element tensor) is a
counter, reported where the parent handed it over, where a child received it and where each
ended, so the runner sees which advanced where. Gradients are judged against backward(): after a
sampled step, the next backward() walks its graph to the leaves and reads whether the gradient
that step applied is still there, uncleared, to be added to (a running sum).

Costs: a fingerprint (sum and norm) of an optimizer's gradients on its first 8 steps, every 64th
up to step 1024 and every 1024th after, and one walk of the autograd graph after each sampled
step. Any other step() only counts, and any other backward() only checks a flag.
"""
import os
import sys

import sharebench_shared_state as _shared_state

_guarded = None
_hook_error = None
_user_location = None
_fingerprint = None
_all_shared = None
_seq = 0
uses = {}           # id(optimizer) -> _OptimizerUse, this process's
# Steps whose gradients are fingerprinted: the first 8, every 64th up to step 1024, every 1024th
# after. A sample costs about 100 us (a norm and a sum per gradient, the next backward's graph walk),
# against a Hogwild step of 100-300 us: every 64th for good cost a trainer of small steps 1.4 %.
_SAMPLE_FIRST, _SAMPLE_EVERY, _SAMPLE_THIN_AFTER, _SAMPLE_EVERY_LATER = 8, 64, 1024, 1024


# --- what an optimizer holds ----------------------------------------------------------------------------
def _scalar(value):
    """A counter's value: a Python number or a one-element tensor (not a parameter), else None; and its kind."""
    import torch
    if isinstance(value, bool):
        return None, None
    if isinstance(value, (int, float)):
        return float(value), "number"
    if torch.is_tensor(value) and value.numel() == 1 and not value.requires_grad and not value.is_sparse:
        try:
            return float(value.detach().reshape(()).double()), ("shared" if value.is_shared() else "private")
        except Exception:
            return None, None
    return None, None


def _counters(opt):
    """Every number the optimizer holds, by where it lives: state[key] (summed over parameters),
    param_groups[i][key], self.<attribute>. Each as [value, kind]."""
    out, not_counters = {}, set()
    for param, state in list(opt.state.items())[:4096]:
        if not isinstance(state, dict):
            continue
        for key, value in state.items():
            name = "state[%r]" % (key,)
            number, kind = _scalar(value)
            # A per-parameter tensor of a one-element parameter (a bias of size 1) is not a counter.
            if number is None or (hasattr(param, "numel") and param.numel() == 1 and kind != "number"):
                if number is None:
                    not_counters.add(name)
                continue
            previous = out.get(name)
            out[name] = [number + (previous[0] if previous else 0.0), kind if not previous or previous[1] == kind else "mixed"]
    for name in not_counters:
        out.pop(name, None)
    for i, group in enumerate(opt.param_groups[:64]):
        for key, value in group.items():
            if key == "params":
                continue
            number, kind = _scalar(value)
            if number is not None:
                out["param_groups[%d][%r]" % (i, key)] = [number, kind]
    for name, value in list(vars(opt).items()):
        if name.startswith("_sharebench") or name in ("state", "param_groups", "defaults"):
            continue
        number, kind = _scalar(value)
        if number is not None:
            out["self.%s" % name] = [number, kind]
    return out


def state_summary(opt):
    """Per state key, the kinds its values have: shared (tensor in shared memory), private (tensor), number;
    the counters (_counters)."""
    import torch
    keys, entries, counter, empty = {}, 0, None, 0
    for _, state in list(opt.state.items()):
        entries += 1
        empty += not state
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
    return {"entries": entries, "empty_entries": empty, "params": params, "keys": keys, "counter": counter,
            "counters": _counters(opt)}


def optimizer_params(opt):
    return [p for g in opt.param_groups for p in g["params"]]


# --- optimizers ---------------------------------------------------------------------------------------
class _OptimizerUse:
    """One optimizer's use in this process."""

    def __init__(self, opt):
        self.opt = opt
        self.steps = 0
        self.next_sample = 0       # the next step (counted from 0) that _sampled() picks: until then step() only counts
        self.completed = 0         # steps that returned (one that raised applied nothing)
        self.no_grad_steps = 0
        self.sampled = 0
        self.same_grad = 0     # sampled steps whose gradient equalled the previous sampled step's
        self.last_grad = None
        self.state_entries_at_first_step = None
        self.zero_grad_steps = 0   # sampled steps whose gradients were all zero
        self.applied = {}          # data_ptr -> norm of each gradient the last sampled step applied
        self.probe_backward = False  # the next backward() looks for those gradients among its leaves
        self.expect = {}           # data_ptr -> norm after a backward() added to an uncleared applied gradient
        self.carried = 0           # steps that applied such a running sum again
        self.carry_checks = 0      # steps compared against what a backward() computed
        self.shared_grad_steps = 0  # sampled steps that applied a gradient in shared memory (.grad shared)


_backwards = 0  # backward() calls in this process
_probe_armed = False  # some optimizer's probe_backward may be set: backward() looks for its gradients


def _use_of(opt):
    use = uses.get(id(opt))
    if use is None or use.opt is not opt:
        use = uses[id(opt)] = _OptimizerUse(opt)
    return use


def _grad_norm(g):
    """A gradient's identity for the running-sum probe: its norm in float64 (a sum can be zero for a
    non-zero gradient: a softmax layer's bias gradient sums to zero)."""
    import torch
    return float(torch.linalg.vector_norm(g.detach(), dtype=torch.float64))


def _grad_sums(grads):
    import torch
    out = {}
    with torch.no_grad():
        for g in grads:
            if g is not None and g.is_floating_point() and not g.is_sparse and len(out) < 4096:
                out[g.data_ptr()] = _grad_norm(g)
    return out


def _close(a, b):
    """Equal norms of the same bits, computed twice: relative, so two tiny norms are not equal by being small."""
    return a > 0 and b > 0 and abs(a - b) <= 1e-12 * max(a, b)


def _sampled(steps):
    if steps < _SAMPLE_FIRST:
        return True
    return steps % (_SAMPLE_EVERY if steps < _SAMPLE_THIN_AFTER else _SAMPLE_EVERY_LATER) == 0


def _next_sample(steps):
    """The least step >= `steps` that _sampled() picks."""
    if steps < _SAMPLE_FIRST:
        return steps
    if steps < _SAMPLE_THIN_AFTER:
        n = -(-steps // _SAMPLE_EVERY) * _SAMPLE_EVERY
        if n < _SAMPLE_THIN_AFTER:
            return n
        steps = _SAMPLE_THIN_AFTER
    return -(-steps // _SAMPLE_EVERY_LATER) * _SAMPLE_EVERY_LATER


def _before_step(opt):
    global _probe_armed
    use = _use_of(opt)
    if use.steps == 0:
        use.state_entries_at_first_step = len(opt.state)
    sampled = _sampled(use.steps)
    if use.expect:  # a backward() added to a gradient this optimizer applied before: is that sum applied again?
        sums = _grad_sums([p.grad for p in optimizer_params(opt)])
        use.carry_checks += 1
        if any(ptr in sums and _close(sums[ptr], total) for ptr, total in use.expect.items()):
            use.carried += 1
        use.expect = {}
    if sampled:
        grads = [p.grad for p in optimizer_params(opt)]
        if any(g is not None and g.is_shared() for g in grads):
            use.shared_grad_steps += 1
        if all(g is None for g in grads):
            use.no_grad_steps += 1
            use.last_grad = None
        else:
            norms = {}
            fp = _fingerprint(grads, norms)
            if fp is not None:
                use.sampled += 1
                if fp == [0.0, 0.0]:
                    use.zero_grad_steps += 1
                elif fp == use.last_grad:
                    use.same_grad += 1
                use.last_grad = fp
            else:  # too large to fingerprint: the probe's norms alone
                norms = _grad_sums(grads)
            use.applied = {ptr: norm for ptr, norm in norms.items() if norm > 0.0}
            use.probe_backward = bool(use.applied)
            if use.probe_backward:
                _probe_armed = True
    use.steps += 1
    use.next_sample = _next_sample(use.steps)


def _graph_leaves(tensors):
    """The leaf tensors a backward() from `tensors` accumulates into (AccumulateGrad nodes), at most 20 000 nodes walked."""
    import torch
    roots = [tensors] if torch.is_tensor(tensors) else list(tensors or ())
    stack = [t.grad_fn for t in roots if torch.is_tensor(t) and t.grad_fn is not None]
    # Each node's Python object lives only while referenced, and a new one may reuse a dead one's id:
    # hold every node visited, so ids stay unique and a node reached twice is the same object.
    seen, held, leaves = set(), [], []
    while stack and len(seen) < 20000:
        fn = stack.pop()
        if fn is None or id(fn) in seen:
            continue
        seen.add(id(fn))
        held.append(fn)
        variable = getattr(fn, "variable", None)
        if variable is not None:
            leaves.append(variable)
            continue
        stack.extend(next_fn for next_fn, _ in fn.next_functions if next_fn is not None)
    return leaves


def _probe_before_backward(tensors, pending):
    """Leaves whose .grad is a gradient a pending optimizer applied at its last sampled step, not cleared since."""
    import torch
    found = []
    leaves = _graph_leaves(tensors)
    with torch.no_grad():
        for use in pending:
            use.probe_backward = False
            for leaf in leaves:
                g = leaf.grad
                if g is None or g.data_ptr() not in use.applied or not g.is_floating_point():
                    continue
                if _close(_grad_norm(g), use.applied[g.data_ptr()]):
                    found.append((use, leaf, g.data_ptr()))
    return found


def _after_backward(found):
    for use, leaf, ptr in found:
        g = leaf.grad
        if g is not None and g.data_ptr() == ptr:
            use.expect[ptr] = _grad_norm(g)


def _patch_backward(autograd):
    backward = autograd.backward
    if getattr(backward, "_sharebench_wrapped", False):
        return
    import functools

    @functools.wraps(backward)
    def wrapped(tensors, *args, **kwargs):
        global _backwards, _probe_armed
        _backwards += 1
        if not _probe_armed:  # the common backward(): no probe waits on it
            return backward(tensors, *args, **kwargs)
        pending = [u for u in list(uses.values()) if u.probe_backward]
        _probe_armed = bool(pending)
        found = _guarded("backward", _probe_before_backward, tensors, pending) if pending else None
        result = backward(tensors, *args, **kwargs)
        if found:
            _guarded("backward", _after_backward, found)
        return result

    wrapped._sharebench_wrapped = True
    autograd.backward = wrapped


def _wrap_step(cls):
    import functools
    step = cls.step
    if getattr(step, "_sharebench_wrapped", False):
        return

    @functools.wraps(step)
    def wrapped(self, *args, **kwargs):
        use = uses.get(id(self))
        # The common step, neither sampled nor awaited by the running-sum probe, only counts: a
        # Hogwild worker's step takes a few hundred microseconds, and the hooks' share stays small.
        if _shared_state._held_count:  # a lock held around it: a write to shared memory under that lock
            _guarded("optimizer step", _shared_state.note_optimizer_step,
                     [p for g in self.param_groups for p in g["params"][:1]])
        _shared_state._in_optimizer_step += 1  # its own counters are its state, not the program's races
        try:
            if use is not None and use.steps < use.next_sample and use.opt is self and not use.expect:
                use.steps += 1
                result = step(self, *args, **kwargs)
                use.completed += 1
                return result
            _guarded("optimizer step", _before_step, self)
            result = step(self, *args, **kwargs)
            _guarded("optimizer step", _after_step, self)
            return result
        finally:
            _shared_state._in_optimizer_step -= 1

    wrapped._sharebench_wrapped = True
    cls.step = wrapped


def _after_step(opt):
    _use_of(opt).completed += 1


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


def optimizer_report(use):
    opt = use.opt
    params = optimizer_params(opt)
    shared, total = _all_shared(params)
    return {"origin": getattr(opt, "_sharebench_origin", None), "where": getattr(opt, "_sharebench_where", None),
            "class": type(opt).__name__, "steps": use.steps, "no_grad_steps": use.no_grad_steps,
            "sampled": use.sampled, "same_grad": use.same_grad, "params": total, "shared": shared,
            "zero_grad_steps": use.zero_grad_steps, "carried": use.carried, "carry_checks": use.carry_checks,
            "shared_grad_steps": use.shared_grad_steps,
            "backwards": _backwards,
            "state_entries_at_first_step": use.state_entries_at_first_step, "state": state_summary(opt)}


def stepped_param_ids():
    """The parameters of every optimizer this process stepped."""
    ids = set()
    for use in uses.values():
        if use.steps > 0:
            ids.update(id(p) for p in optimizer_params(use.opt))
    return ids


def backwards():
    """backward() calls in this process."""
    return _backwards


def on_torch(torch):
    _patch_optimizer(sys.modules["torch.optim.optimizer"])
    _patch_backward(sys.modules["torch.autograd"])


def install(hooks):
    global _guarded, _hook_error, _user_location, _fingerprint, _all_shared
    _guarded, _hook_error, _user_location = hooks.guarded, hooks.hook_error, hooks.user_location
    _fingerprint, _all_shared = hooks.fingerprint, hooks.all_shared
    hooks.also_after_import("torch", on_torch)


def after_fork_in_child():
    global _backwards, _probe_armed
    uses.clear()
    _backwards, _probe_armed = 0, False
