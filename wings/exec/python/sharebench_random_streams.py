"""Where each process's torch random stream began, for the `random-streams` check of `sharebench exec`.

Workers that train one shared model (Hogwild, A3C) are meant to explore differently: each
reseeds (`torch.manual_seed(seed + rank)`) before it draws. Two that draw from the same stream
sample the same actions, the same dropout masks and the same batch order, and the model learns as
if from one of them. That happens when every worker seeds with the same number, or when a forked
worker never reseeds (it inherits its parent's generator, state and all).

This module records the origin of this process's stream, the state torch's default CPU generator
had at the last point its draws started from:
  seeded     the last torch.manual_seed() (or torch.random.manual_seed()) call here, and where;
  inherited  a forked child that has not reseeded: the state it had at the fork;
  unseeded   the state when torch finished importing here. torch seeds its default generator
             from the OS at start-up, so two workers under spawn or forkserver that never seed
             draw apart (two forkserver children measured: two seeds).
and, at the end, whether the process drew from it since (the state moved). The runner compares
the origins of the processes that train a model they were handed and drew (wings/exec/checks/
random_streams.cc). A hash of the generator's state (5 KiB on CPU) is taken at torch's import,
each seeding, each fork and the end: nothing per draw.
"""
import hashlib
import sys

_origin = None  # {"how", "seed", "state", "where"}: set at torch's import, each seeding and each fork
_user_location = None
_fork_where = None  # the program's line that forked last (a child inherits it with its memory)


def _state_hash(state_tensor):
    return hashlib.blake2b(bytes(state_tensor.numpy()), digest_size=8).hexdigest()


def _current():
    torch = sys.modules.get("torch")
    return _state_hash(torch.get_rng_state()) if torch is not None else None


def _patch_manual_seed(random_module):
    original = random_module.manual_seed
    if getattr(original, "_sharebench_patched", False):
        return

    def manual_seed(seed):
        result = original(seed)
        global _origin
        try:
            _origin = {"how": "seeded", "seed": int(seed), "state": _current(), "where": _user_location()}
        except Exception:
            pass
        return result

    manual_seed._sharebench_patched = True
    manual_seed.__doc__ = original.__doc__
    random_module.manual_seed = manual_seed


def _remember_fork_site():
    global _fork_where
    try:
        _fork_where = _user_location() if "torch" in sys.modules else None
    except Exception:
        _fork_where = None


def install(hooks):
    """`torch.random` is patched as soon as it has executed, before torch's __init__ takes
    manual_seed from it: torch.manual_seed is then the patched function too. Where the program
    forks is remembered before each fork: the child's inherited stream began there."""
    import os
    global _user_location
    _user_location = hooks.user_location
    hooks.after_import["torch.random"] = _patch_manual_seed
    os.register_at_fork(before=_remember_fork_site)


def on_torch(torch):
    """torch finished importing: torch.manual_seed is the patched one even where torch.random was
    imported before the hooks were; the generator's state now is where an unseeded stream begins."""
    global _origin
    _patch_manual_seed(torch.random)
    if not getattr(torch.manual_seed, "_sharebench_patched", False):
        torch.manual_seed = torch.random.manual_seed
    if _origin is None:
        _origin = {"how": "unseeded", "seed": int(torch.initial_seed()), "state": _current(), "where": None}


def after_fork_in_child():
    global _origin
    torch = sys.modules.get("torch")
    if torch is None:
        _origin = None  # torch imported later: its import sets the origin
        return
    _origin = {"how": "inherited", "seed": int(torch.initial_seed()), "state": _current(), "where": _fork_where}


def report():
    """The origin and whether this process drew from it, or None without torch (or without a known
    origin: torch imported before these hooks were installed)."""
    if sys.modules.get("torch") is None or _origin is None:
        return None
    return dict(_origin, drew=_current() != _origin["state"])
