"""Who learnt of a child's end, for the `deaths-noticed` check of `sharebench exec`
(wings/exec/checks/deaths_noticed.cc). Loaded by sharebench_watch.py.

A worker that dies (an exception, a segfault, the OOM killer) while its parent joins it and exits
0 without looking is a trainer that reports success on a model half its workers never trained.
The check asks of each child that ended badly whether the program was told: it read the exit
code, or torch raised to it about the group the child was in. This module reports those moments
as events (their fields are in events_schema.json):
  observed    the program read a child's exit code (Process.exitcode outside multiprocessing's own
              __repr__; mp.spawn's join reads them too), or torch's spawn context or a DataLoader
              raised to it about its group's dead processes: each of the group's ended processes
              counts as observed, whatever the program does with the exception (a test that
              expects it catches it)
  reaped      a parent learnt a child's exit status (Popen.poll: Process.join and is_alive poll)
  terminated  the program ended a child itself (Process.terminate or kill, or Popen's: Pool and
              DataLoader end their workers that way, and multiprocessing's exit function ends a
              process's daemonic children through Popen)
How each process ended, and its traceback, is sharebench_watch.py's "end" event.

Costs: a set lookup per exitcode read and per poll() that finds a child ended; nothing else.
"""
import os
import sys

_emit = None
_guarded = None
_user_location = None
_exit_code_reads = set()  # children whose exit code this process read (each reported once)


def _observed(pid, code, where):
    if pid not in _exit_code_reads:
        _exit_code_reads.add(pid)
        _emit("observed", child=pid, code=code, where=where)


def _patch_process(process_module):
    """Process.exitcode read by the program, and Process.terminate()/kill()."""
    BaseProcess = process_module.BaseProcess
    if getattr(BaseProcess.exitcode.fget, "_sharebench_wrapped", False):
        return
    exitcode = BaseProcess.exitcode

    def read_exitcode(self):
        code = exitcode.fget(self)
        if code is not None and self.pid not in _exit_code_reads:
            caller = sys._getframe(1).f_code.co_filename
            if not caller.endswith(os.path.join("multiprocessing", "process.py")):  # its own __repr__
                _observed(self.pid, code, _guarded("exitcode", _user_location))
        return code

    read_exitcode._sharebench_wrapped = True
    BaseProcess.exitcode = property(read_exitcode)
    for name in ("terminate", "kill"):
        original = getattr(BaseProcess, name, None)
        if original is None:
            continue

        def ending(self, _original=original, _name=name):
            if self.pid is not None:
                _emit("terminated", child=self.pid, how=_name)
            return _original(self)

        setattr(BaseProcess, name, ending)


def _patch_popen(popen_module):
    """poll() (a child's end seen), and terminate()/kill() called on the Popen itself."""
    Popen = popen_module.Popen
    for name in ("terminate", "kill"):
        original = vars(Popen).get(name)
        if original is None or getattr(original, "_sharebench_wrapped", False):
            continue

        def ending(self, _original=original, _name=name):
            if getattr(self, "pid", None) is not None and self.returncode is None:
                _emit("terminated", child=self.pid, how=_name)
            return _original(self)

        ending._sharebench_wrapped = True
        setattr(Popen, name, ending)
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


def _noticed_on_raise(owner, method, processes_of):
    """Wraps owner.method so that when it raises to the program (torch's spawn context reporting a
    failed rank; a DataLoader reporting a dead worker), every process of its group that has ended
    counts as observed: the program was told. The group's other ranks torch reaped without reading
    their codes."""
    original = vars(owner).get(method)
    if original is None or getattr(original, "_sharebench_wrapped", False):
        return

    def wrapped(self, *args, **kwargs):
        try:
            return original(self, *args, **kwargs)
        except StopIteration:
            raise  # a DataLoader's epoch ended: nothing was reported
        except Exception:
            _guarded("noticed", _note_ended, processes_of(self))
            raise

    wrapped._sharebench_wrapped = True
    setattr(owner, method, wrapped)


def _note_ended(processes):
    where = _user_location()
    for p in processes or ():
        popen = getattr(p, "_popen", None)
        code = popen.poll() if popen is not None else None
        if code is not None:
            _observed(p.pid, code, where)


def _patch_spawn_context(spawn_module):
    _noticed_on_raise(spawn_module.ProcessContext, "join", lambda ctx: getattr(ctx, "processes", ()))


def _patch_dataloader(dataloader_module):
    _noticed_on_raise(dataloader_module._MultiProcessingDataLoaderIter, "_next_data",
                      lambda it: getattr(it, "_workers", ()))


def install(hooks):
    global _emit, _guarded, _user_location
    _emit, _guarded, _user_location = hooks.emit, hooks.guarded, hooks.user_location
    for name, hook in (("multiprocessing.process", _patch_process),
                       ("multiprocessing.popen_fork", _patch_popen),
                       ("multiprocessing.popen_forkserver", _patch_popen),
                       ("torch.multiprocessing.spawn", _patch_spawn_context),
                       ("torch.utils.data.dataloader", _patch_dataloader)):
        hooks.also_after_import(name, hook)


def after_fork_in_child():
    _exit_code_reads.clear()
