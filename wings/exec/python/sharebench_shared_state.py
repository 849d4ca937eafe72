"""Races on shared state, for `sharebench exec`: loaded by sharebench_watch.py into every Python
process of the program, torch or not. It watches what the program does with memory that several
processes map (multiprocessing's Value and Array, one-element shared tensors) and with the locks it
holds around that, and reports per process what the runner needs to judge three checks
(wings/exec/checks/: lost_updates.cc, consistent_snapshots.cc, mutual_exclusion.cc):

  lost-updates          a read-modify-write (`counter.value += 1`, `arr[i] += x`, `t[0] += 1` on a
                        shared tensor) done by two or more processes with no process-shared lock
                        held across it; with the increments each made and the value at the end
  consistent-snapshots  an element-by-element read of an Array (iteration, a loop of arr[i]) during
                        which the Array changed: fingerprints (its raw contents) at the read's first
                        and last element differ
  mutual-exclusion      a lock held around writes to shared memory (optimizer.step() on shared
                        parameters, a Value's or Array's set) in two or more processes, that is not
                        one lock shared by them: a threading lock, or a multiprocessing lock each
                        process made for itself

Identity across processes. A shared object lives in a file mapped MAP_SHARED (multiprocessing's
arenas, torch's /dev/shm segments, a POSIX semaphore's page): its identity is the file's device and
inode and the object's offset in it, read from /proc/self/maps. Two processes that name the same
(device, inode, offset) touch the same bytes, whatever start method brought them there; a lock
whose identity differs between two processes is two locks. A threading lock is never shared.

Costs: a Value's or Array's get and set go through one more Python call (about 1 us beside the
lock's own acquire); a multiprocessing lock's acquire and release too; threading locks are watched
only when the program's own code made them (not the standard library's, not torch's); a tensor's
in-place `+=` is looked at only for tensors of at most 16 elements; an Array read's fingerprints are
two raw copies of at most 4096 elements. What a process saw is emitted ("shared-state") when a
finding's first evidence appears and at its end, so a worker killed by terminate() has reported.
"""
import os
import sys
import time

_here = os.path.dirname(os.path.abspath(__file__))
_stdlib = os.path.dirname(os.__file__)
_emit = None            # sharebench_watch's _emit
_user_location = None   # sharebench_watch's _user_location
_get_ident = None       # _thread.get_ident

# --- where shared memory is ------------------------------------------------------------------------
_maps = []        # sorted (start, end, "dev:inode", file offset) of MAP_SHARED file mappings
_maps_read_at = 0.0


def _read_maps():
    global _maps, _maps_read_at
    found = []
    with open("/proc/self/maps") as maps:
        for line in maps:
            fields = line.split(None, 5)
            if len(fields) < 5 or len(fields[1]) < 4 or fields[1][3] != "s" or fields[4] == "0":
                continue
            start, end = fields[0].split("-")
            found.append((int(start, 16), int(end, 16), "%s:%s" % (fields[3], fields[4]), int(fields[2], 16), int(fields[4]),
                          "/proc/self/map_files/%s" % fields[0]))
    found.sort()
    _maps, _maps_read_at = found, time.monotonic()


def _location(address):
    """(file, offset) of a shared address, or None for private memory."""
    for attempt in (0, 1, 2):
        lo, hi = 0, len(_maps)
        while lo < hi:
            mid = (lo + hi) // 2
            if _maps[mid][1] <= address:
                lo = mid + 1
            else:
                hi = mid
        if lo < len(_maps) and _maps[lo][0] <= address < _maps[lo][1]:
            start, _, file, offset, inode, link = _maps[lo]
            if _still_mapped(link, inode):
                return file, offset + address - start
            _read_maps()  # unmapped since, and maybe another file mapped at the same addresses
            continue
        if attempt == 2 or time.monotonic() == _maps_read_at:
            break
        _read_maps()  # a mapping made since the last read (a new arena, a received segment); only
        # shared memory is asked about (a tensor's is_shared(), a Value's arena), so a miss is rare
    return None


def _still_mapped(link, inode):
    """Whether the range read from maps still maps the same file: a consumer that dropped one received
    buffer and mapped the next one at the same addresses must not name the new one after the old."""
    try:
        return os.stat(link).st_ino == inode
    except OSError:
        return False


def _key(address):
    where = _location(address)
    return None if where is None else "%s+%d" % where


# --- locks -----------------------------------------------------------------------------------------------
class _LockRecord:
    """One lock as this process holds it: where the program made it, whether it is process-shared and
    its identity (the semaphore's page for multiprocessing's, this process's own for threading's)."""
    __slots__ = ("site", "kind", "shared_key", "serial", "__weakref__")

    def __init__(self, site, kind, shared_key):
        self.site, self.kind, self.shared_key, self.serial = site, kind, shared_key, 0

    @property
    def shared(self):
        return self.shared_key is not None

    @property
    def key(self):
        """The lock's identity: the same in every process for a shared one; this process's own (a
        forked child's copy of a threading lock is another lock) otherwise."""
        return self.shared_key or "private:%d:%x" % (os.getpid(), id(self))


_held = {}        # thread id -> {record: depth}
_held_count = 0   # holds in this process, all threads: the step hook's fast test


def _acquired(record):
    global _held_count
    mine = _held.setdefault(_get_ident(), {})
    depth = mine.get(record, 0)
    if depth == 0:
        record.serial += 1
    mine[record] = depth + 1
    _held_count += 1


def _released(record):
    global _held_count
    mine = _held.get(_get_ident())
    if not mine or record not in mine:  # released by another thread than took it (a lock used as a signal)
        mine = next((m for m in _held.values() if record in m), None)
        if mine is None:
            return
    _held_count -= 1
    if mine[record] <= 1:
        del mine[record]
    else:
        mine[record] -= 1


def _holding():
    """{record: serial} of the locks this thread holds now."""
    mine = _held.get(_get_ident())
    return {r: r.serial for r in mine} if mine else {}


def _semlock_record(lock):
    record = getattr(lock, "_sharebench_lock", None)
    if record is None:
        handle = getattr(getattr(lock, "_semlock", None), "handle", None)
        key = _key(handle) if handle else None
        record = _LockRecord(getattr(lock, "_sharebench_made", None) or _user_location(),
                             "multiprocessing." + type(lock).__name__, key)
        lock._sharebench_lock = record
    return record


def _patch_semlock(synchronize):
    SemLock = synchronize.SemLock
    if getattr(SemLock, "_sharebench_patched", False):
        return
    SemLock._sharebench_patched = True
    # Locks only: a Semaphore (a Barrier's, a Condition's waiters') is released by another process
    # than took it, a signal rather than a lock held around anything.
    SemLock._sharebench_is_lock = False
    synchronize.Lock._sharebench_is_lock = synchronize.RLock._sharebench_is_lock = True
    init, make_methods = SemLock.__init__, SemLock._make_methods

    def __init__(self, *args, **kwargs):
        init(self, *args, **kwargs)
        try:
            self._sharebench_made = _user_location()
        except Exception:
            pass

    def _make_methods(self):
        make_methods(self)
        if not self._sharebench_is_lock:
            return
        acquire, release = self._semlock.acquire, self._semlock.release

        def watched_acquire(*args, **kwargs):
            got = acquire(*args, **kwargs)
            if got:
                _acquired(_semlock_record(self))
            return got

        def watched_release():
            release()
            _released(_semlock_record(self))

        self.acquire, self.release = watched_acquire, watched_release

    def __enter__(self):
        got = self._semlock.__enter__()
        if self._sharebench_is_lock:
            _acquired(_semlock_record(self))
        return got

    def __exit__(self, *args):
        result = self._semlock.__exit__(*args)
        if self._sharebench_is_lock:
            _released(_semlock_record(self))
        return result

    SemLock.__init__, SemLock._make_methods, SemLock.__enter__, SemLock.__exit__ = __init__, _make_methods, __enter__, __exit__


def _patch_manager_locks(managers):
    """A Manager's Lock is one lock in the manager's process: shared by every process holding a proxy."""
    Proxy = managers.AcquirerProxy
    if getattr(Proxy, "_sharebench_patched", False):
        return
    Proxy._sharebench_patched = True

    def record_of(proxy):
        record = proxy.__dict__.get("_sharebench_lock")
        if record is None:
            token = proxy._token
            record = _LockRecord(_user_location(), "multiprocessing.Manager().%s" % token.typeid,
                                 "manager:%s:%s" % (token.address, token.id))
            proxy.__dict__["_sharebench_lock"] = record
        return record

    for name, after in (("acquire", True), ("__enter__", True), ("release", False), ("__exit__", False)):
        original = getattr(Proxy, name)

        def wrapped(self, *args, _original=original, _after=after, **kwargs):
            result = _original(self, *args, **kwargs)
            if _after and result is not False:
                _acquired(record_of(self))
            elif not _after:
                _released(record_of(self))
            return result

        setattr(Proxy, name, wrapped)


class _WatchedLock:
    """A threading Lock or RLock the program's own code made: the real lock, and its holds recorded."""

    def __init__(self, lock, kind):
        self._lock = lock
        self._sharebench_lock = _LockRecord(_user_location(), kind, None)

    def acquire(self, blocking=True, timeout=-1):
        got = self._lock.acquire(blocking, timeout)
        if got:
            _acquired(self._sharebench_lock)
        return got

    def release(self):
        self._lock.release()
        _released(self._sharebench_lock)

    __enter__ = acquire

    def __exit__(self, *args):
        self.release()

    def locked(self):
        return self._lock.locked()

    def _at_fork_reinit(self):
        self._lock._at_fork_reinit()

    def __getattr__(self, name):  # an RLock's _is_owned, _release_save, _acquire_restore (Condition's)
        return getattr(self._lock, name)

    def __repr__(self):
        return repr(self._lock)


_made_lock = {}  # "Lock", "RLock" -> threading's own factory


def _made_by_program():
    name = sys._getframe(3).f_code.co_filename
    return not (name.startswith(_stdlib) or name.startswith(_here) or name.startswith("<") or
                os.sep + "site-packages" + os.sep in name or os.sep + "dist-packages" + os.sep in name)


def _watched(kind, args, kwargs):
    make = _made_lock.get(kind)
    if make is None:  # unpickled where threading was not patched (a Manager's server keeps a reference)
        import threading
        make = getattr(threading, "_CRLock" if kind == "RLock" else "_allocate_lock", None) or threading._PyRLock
    lock = make(*args, **kwargs)
    try:
        if _made_by_program():
            return _WatchedLock(lock, "threading." + kind)
    except Exception:
        pass
    return lock


# Module-level, so that what keeps a reference to threading.Lock (a Manager's registry, pickled to its
# server under spawn) pickles them by name.
def _threading_lock(*args, **kwargs):
    return _watched("Lock", args, kwargs)


def _threading_rlock(*args, **kwargs):
    return _watched("RLock", args, kwargs)


def _patch_threading(threading):
    """threading.Lock and RLock, when the program's own code calls them, give a watched lock; the
    standard library's and other packages' locks stay threading's own."""
    if getattr(threading, "_sharebench_patched", False):
        return
    threading._sharebench_patched = True
    _made_lock["Lock"], _made_lock["RLock"] = threading.Lock, threading.RLock
    threading.Lock, threading.RLock = _threading_lock, _threading_rlock


# --- what this process did to shared locations ---------------------------------------------------------
class _Place:
    """One shared location as this process used it."""
    __slots__ = ("key", "what", "made", "made_here", "rmw", "unguarded", "guards", "delta", "first", "last_t", "plain",
                 "plain_after", "sites", "value", "passes", "torn", "reader_sites", "writes", "writer_sites")

    def __init__(self, key, what, made):
        self.key, self.what, self.made, self.made_here = key, what, made, False
        self.value = None    # a callable reading the value now, raw
        self.reset()

    def reset(self):
        """Nothing seen yet: a forked child keeps its parent's places (objects cache them) and starts
        counting afresh."""
        self.made_here = False
        self.rmw = self.unguarded = self.plain = self.plain_after = self.passes = self.torn = self.writes = 0
        self.guards = None   # the process-shared lock keys held across every read-modify-write
        self.delta = 0.0     # the increments those made, summed
        self.first = None    # [t, the value the first read-modify-write read]
        self.last_t = None
        self.sites, self.reader_sites, self.writer_sites = {}, {}, {}

    def report(self):
        out = {"key": self.key, "what": self.what, "made": self.made}
        if self.rmw:
            out.update(rmw=self.rmw, unguarded=self.unguarded, guards=sorted(self.guards or ()), delta=self.delta,
                       first=self.first, last_t=self.last_t, plain_after=self.plain_after, sites=_top(self.sites))
            try:
                out["value"] = float(self.value()) if self.value else None
            except Exception:
                out["value"] = None
        if self.passes:
            out.update(passes=self.passes, torn=self.torn, reader_sites=_top(self.reader_sites))
        if self.writes:
            out.update(writes=self.writes, writer_sites=_top(self.writer_sites))
        return out


def _top(sites):
    return [s for s, _ in sorted(sites.items(), key=lambda kv: -kv[1])[:3]]


_places = {}       # key -> _Place
_holds = {}        # (lock key, place key, what was written) -> [record, count, first t, site]
_last_read = {}    # thread id -> (place, index, value, holding)
_passes = {}       # thread id -> [place, next index, fingerprint, site]
_reported = set()  # (kind, key) whose first evidence was emitted already
_SITES_PER_PLACE = 4
_FINGERPRINT_MAX = 4096
_dirty = False
_emitted_at = 0.0


def _note_site(sites):
    if len(sites) < _SITES_PER_PLACE or sum(sites.values()) < 64:
        site = _user_location()
        sites[site] = sites.get(site, 0) + 1


def _first_evidence(kind, key):
    """The first sign of a finding at this place: reported at once (the process may be terminated
    before it ends), at most 16 times a process."""
    if (kind, key) not in _reported and len(_reported) < 16:
        _reported.add((kind, key))
        emit_now()


def _maybe_emit(now):
    if _dirty and now - _emitted_at > 2.0:  # what changed, every 2 s at most, for a process killed later
        emit_now()


def _note_holds(place_key, what):
    """The locks this thread holds around a write to shared memory."""
    mine = _held.get(_get_ident())
    if not mine:
        return
    now = time.monotonic()
    for record in mine:
        key = record.key
        entry = _holds.get((key, place_key, what))
        if entry is None:
            entry = _holds[(key, place_key, what)] = [record, 0, now, _user_location()]
            _first_evidence("hold", key + place_key)
        entry[1] += 1


def _read(place, index, value):
    global _dirty
    _last_read[_get_ident()] = (place, index, value, _holding())


def _write(place, index, value, plain_ok=True):
    """A set of a watched location: a read-modify-write when this thread's last watched read was of it."""
    global _dirty
    _dirty = True
    tid = _get_ident()
    last = _last_read.pop(tid, None)
    place.writes += 1
    _note_site(place.writer_sites)
    if _held_count:
        _note_holds(place.key, "set")
    now = time.monotonic()
    if last is None or last[0] is not place or last[1] != index:
        place.plain += 1
        if place.rmw:
            place.plain_after += 1
        return
    _, _, before, holding = last
    held_across = {r.shared_key for r, serial in _holding().items() if r.shared_key and holding.get(r) == serial}
    place.rmw += 1
    place.guards = held_across if place.guards is None else (place.guards & held_across)
    if not held_across:
        place.unguarded += 1
    try:
        place.delta += float(value) - float(before)
    except (TypeError, ValueError):
        pass
    if place.first is None:
        place.first = [now, _number(before)]
    place.last_t = now
    _note_site(place.sites)
    if not held_across and place.unguarded == 1:
        _first_evidence("rmw", place.key)
    _maybe_emit(now)


def _number(value):
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


# --- multiprocessing's Value and Array ------------------------------------------------------------------
def _place_of(synchronized, index=None):
    """The _Place of a Synchronized (index None) or one element of a SynchronizedArray; None when private."""
    import ctypes
    cache = synchronized.__dict__.get("_sharebench_places")
    if cache is None:
        cache = synchronized.__dict__["_sharebench_places"] = {}
    place = cache.get(index, False)
    if place is not False:
        return place
    obj = synchronized._obj
    address = ctypes.addressof(obj)
    if index is not None:
        address += index * ctypes.sizeof(obj._type_)
    key = _key(address)
    place = None
    if key is not None:
        place = _places.get(key)
        if place is None:
            if index is None:
                what = "Value(%r)" % getattr(type(obj), "_type_", type(obj).__name__)
            else:
                what = "Array(%r, %d)[%d]" % (getattr(obj, "_type_", object).__name__ if hasattr(obj, "_type_") else "?", len(obj), index)
            place = _places[key] = _Place(key, what, synchronized.__dict__.get("_sharebench_made"))
            place.value = (lambda o=obj: o.value) if index is None else (lambda o=obj, i=index: o[i])
    if place is not None and len(cache) < 1 << 16:  # a miss is asked again: maps may have been read too early
        cache[index] = place
    return place


def _array_place(synchronized):
    """The whole Array, for its reads element by element (keyed by its first element's location)."""
    cache = synchronized.__dict__.get("_sharebench_places")
    whole = cache.get("whole", False) if cache else False
    if whole is not False:
        return whole
    first = _place_of(synchronized, 0)
    whole = None
    if first is not None:
        key = first.key + "[]"
        whole = _places.get(key)
        if whole is None:
            obj = synchronized._obj
            whole = _places[key] = _Place(key, "Array(%r, %d)" % (obj._type_.__name__ if hasattr(obj._type_, "__name__") else "?", len(obj)),
                                          synchronized.__dict__.get("_sharebench_made"))
    synchronized.__dict__["_sharebench_places"]["whole"] = whole
    return whole


def _fingerprint_array(synchronized):
    obj = synchronized._obj
    return obj[:_FINGERPRINT_MAX] if len(obj) <= _FINGERPRINT_MAX else None


def _element_read(synchronized, index, value):
    """Reads of an Array's elements in order, 0 to its end, by one thread: one read of the whole Array.
    Its fingerprints at the first and the last element differ when it changed meanwhile."""
    tid = _get_ident()
    length = len(synchronized._obj)
    current = _passes.get(tid)
    if index == 0 and length > 1:
        whole = _array_place(synchronized)
        if whole is not None:
            _passes[tid] = [whole, 1, _fingerprint_array(synchronized), synchronized]
        return
    if current is None or current[3] is not synchronized or current[1] != index:
        _passes.pop(tid, None)
        return
    current[1] += 1
    if index == length - 1:
        del _passes[tid]
        whole, _, before, _ = current
        if before is None:
            return
        global _dirty
        _dirty = True
        whole.passes += 1
        _note_site(whole.reader_sites)
        if _fingerprint_array(synchronized) != before:
            whole.torn += 1
            _first_evidence("torn", whole.key)
        elif whole.passes == 1:
            _first_evidence("read", whole.key)
        _maybe_emit(time.monotonic())


def _patch_sharedctypes(sharedctypes):
    if getattr(sharedctypes, "_sharebench_patched", False):
        return
    sharedctypes._sharebench_patched = True
    for name in ("Value", "Array"):
        make = getattr(sharedctypes, name)

        def made(*args, _make=make, _name=name, **kwargs):
            obj = _make(*args, **kwargs)
            try:
                if isinstance(obj, sharedctypes.SynchronizedBase):  # lock=False gives the raw object: not watched
                    obj.__dict__["_sharebench_made"] = _user_location()
                    # Known where it was made, for the processes that use it and do not know.
                    place = _place_of(obj) if _name == "Value" else _array_place(obj)
                    if place is not None:
                        place.made_here = True
            except Exception as error:
                _failed("Value or Array made", error)
            return obj

        setattr(sharedctypes, name, made)

    Synchronized = sharedctypes.Synchronized
    value = Synchronized.value

    def get(self):
        result = value.fget(self)
        try:
            place = _place_of(self)
            if place is not None:
                _read(place, None, result)
        except Exception as error:
            _failed("Value get", error)
        return result

    def set_(self, new):
        value.fset(self, new)
        try:
            place = _place_of(self)
            if place is not None:
                _write(place, None, new)
        except Exception as error:
            _failed("Value set", error)

    Synchronized.value = property(get, set_)
    Array = sharedctypes.SynchronizedArray
    getitem, setitem = Array.__getitem__, Array.__setitem__

    def __getitem__(self, i):
        result = getitem(self, i)
        if type(i) is int:
            try:
                index = i if i >= 0 else i + len(self._obj)
                place = _place_of(self, index)
                if place is not None:
                    _read(place, index, result)
                    _element_read(self, index, result)
            except Exception as error:
                _failed("Array get", error)
        return result

    def __setitem__(self, i, new):
        setitem(self, i, new)
        if type(i) is int:
            try:
                index = i if i >= 0 else i + len(self._obj)
                place = _place_of(self, index)
                if place is not None:
                    current = _passes.get(_get_ident())
                    if current is not None and current[3] is self:
                        del _passes[_get_ident()]  # a loop that writes as it goes reads nobody else's version
                    _write(place, index, new)
                    whole = _array_place(self)
                    if whole is not None:
                        whole.writes += 1
                        _note_site(whole.writer_sites)
            except Exception as error:
                _failed("Array set", error)

    Array.__getitem__, Array.__setitem__ = __getitem__, __setitem__


# --- shared tensors: a counter's `+=`, an optimizer's step under a lock ---------------------------------
_SMALL = 16
_item = None  # torch.Tensor.item as torch made it (the watched one records a read)
# Addresses of small shared tensors this process wrote through the hooks (a `+=`, an indexed set):
# item() is called everywhere (every loss.item()), so it looks only at these, a set lookup, and not
# at is_shared(), which costs a microsecond (an inference request of 20 us paid 7 % for it).
_known = set()


_in_optimizer_step = 0  # inside an Optimizer's step(): its counters are its state (optimizer-state-shared's)
_library_dirs = ()  # torch's directory: an optimizer's own `step_t += 1` is its state, judged elsewhere


def _from_program(depth):
    """Whether the frame `depth` levels above the caller is the program's own code, not torch's (an
    optimizer's step counter, shared in an A3C SharedAdam, is counted by torch and raced by design)."""
    if _in_optimizer_step:  # a SharedAdam's `state["step"] += 1`, raced by design in Hogwild A3C
        return False
    name = sys._getframe(depth + 1).f_code.co_filename
    return not name.startswith(_library_dirs)


def _tensor_place(t):
    key = _key(t.data_ptr())
    if key is None:
        return None
    place = _places.get(key)
    if place is None:
        place = _places[key] = _Place(key, "shared tensor of %d element(s)" % t.numel(), None)
        place.value = lambda t=t: _item(t.detach().reshape(-1)[0])
    return place


def _patch_tensor(torch):
    global _library_dirs, _item
    Tensor = torch.Tensor
    if getattr(Tensor, "_sharebench_patched", False):
        return
    Tensor._sharebench_patched = True
    _library_dirs = (os.path.dirname(torch.__file__) + os.sep,)
    for name in ("__iadd__", "__isub__"):
        original = getattr(Tensor, name)

        def inplace(self, other, _original=original, name=name):
            if self.numel() > _SMALL or self.requires_grad or self.is_cuda or not _from_program(1) or not self.is_shared():
                return _original(self, other)
            place = None
            try:
                place = _tensor_place(self)
                if place is not None:
                    if len(_known) < 4096:
                        _known.add(self.data_ptr())
                    before = _item(self.detach().reshape(-1)[0])
                    _read(place, 0, before)
            except Exception as error:
                _failed("tensor +=", error)
            result = _original(self, other)
            if place is not None:
                try:  # the increment is the operand: what the value became also holds others' writes
                    step = float(other) if isinstance(other, (int, float)) or (torch.is_tensor(other) and other.numel() == 1) else None
                    if step is not None and name == "__isub__":
                        step = -step
                    _write(place, 0, None if step is None else before + step)
                except Exception as error:
                    _failed("tensor +=", error)
            return result

        setattr(Tensor, name, inplace)

    # `value = t[0].item(); t[0] = value + 1`: a read by item() and a write by an indexed set.
    item, setitem = Tensor.item, Tensor.__setitem__
    _item = item

    def watched_item(self):
        result = item(self)
        if _known and self.data_ptr() in _known and _from_program(1):
            try:
                place = _tensor_place(self)
                if place is not None:
                    _read(place, 0, result)
            except Exception as error:
                _failed("tensor item()", error)
        return result

    def watched_setitem(self, index, value):
        result = setitem(self, index, value)
        if type(index) is int and self.dim() >= 1 and self.numel() <= _SMALL and not self.is_cuda and _from_program(1) and \
                self.is_shared():
            try:
                element = self[index]
                if element.numel() == 1:
                    place = _tensor_place(element)
                    if place is not None:
                        if len(_known) < 4096:
                            _known.add(element.data_ptr())
                        _write(place, 0, _item(element))
            except Exception as error:
                _failed("tensor set", error)
        return result

    Tensor.item, Tensor.__setitem__ = watched_item, watched_setitem


def note_optimizer_step(params):
    """Called by the step hook when some lock is held in this process: a write to shared parameters
    under it."""
    if not _held.get(_get_ident()):
        return
    for p in params:
        if p is not None and not p.is_cuda:
            key = _key(p.data_ptr())
            if key is not None:
                global _dirty
                _dirty = True
                _note_holds(key, "optimizer.step()")
            return


# --- reports -----------------------------------------------------------------------------------------------
_failures = 0


def report_failure(where, error):
    """A hook of these modules failed: said (the first 3 times) and the program goes on."""
    global _failures
    _failures += 1
    if _failures <= 3 and _emit is not None:
        _emit("hook-error", where=where, error="%s: %s" % (type(error).__name__, error))


def _failed(where, error):
    report_failure("shared state: " + where, error)


_extra_reports = []  # (report, has_anything) of the other modules that report with these events


def add_report(report_fn, has_fn):
    """Another module's findings, carried in the same events (sharebench_sends.py's)."""
    _extra_reports.append((report_fn, has_fn))


def note_activity():
    """Something another module reports changed: emitted with the rest, every 2 s at most."""
    global _dirty
    _dirty = True
    _maybe_emit(time.monotonic())


def report():
    places = [p.report() for p in list(_places.values())[:256] if p.rmw or p.passes or p.writes or p.made_here]
    holds = [{"lock": key, "site": r.site, "kind": r.kind, "shared": r.shared, "place": place, "what": what,
              "count": count, "first_t": first_t, "where": where}
             for (key, place, what), (r, count, first_t, where) in list(_holds.items())[:256]]
    out = {"places": places, "holds": holds}
    for report_fn, has_fn in _extra_reports:
        if has_fn():
            out.update(report_fn())
    return out


def emit_now():
    global _dirty, _emitted_at
    _dirty, _emitted_at = False, time.monotonic()
    if _emit is not None:
        _emit("shared-state", **report())


def has_anything():
    return bool(_places or _holds) or any(has_fn() for _, has_fn in _extra_reports)


INSTALL_ORDER = 0  # first: the other modules report through this one's events (add_report)


def install(hooks):
    """Hooks multiprocessing's locks, Value and Array, user-made threading locks and small shared
    tensors' `+=`, through sharebench_watch's after-import table."""
    global _emit, _user_location, _get_ident
    import _thread
    _emit, _user_location, _get_ident = hooks.emit, hooks.user_location, _thread.get_ident
    after_import = hooks.after_import
    after_import["threading"] = _patch_threading
    after_import["multiprocessing.synchronize"] = _patch_semlock
    after_import["multiprocessing.sharedctypes"] = _patch_sharedctypes
    after_import["multiprocessing.managers"] = _patch_manager_locks
    hooks.also_after_import("torch", _patch_tensor)


def after_fork_in_child():
    """A forked child starts with none of its parent's records: its parent reports those."""
    global _held_count
    for place in _places.values():
        place.reset()
    _known.clear()  # the parent's writes are its own; the child's register as it writes
    _holds.clear()
    _last_read.clear()
    _passes.clear()
    _reported.clear()
    mine = _held.get(_get_ident(), {})  # locks the forking thread held stay held in the child (copies)
    _held.clear()
    if mine:
        _held[_get_ident()] = mine
    _held_count = sum(mine.values())
