# sitecustomize for `sharebench exec`: the runner puts this file's directory first on PYTHONPATH,
# so every Python process of the program it runs imports it at start-up (children included: fork
# keeps it, spawn and forkserver start fresh interpreters that import it again). It does two
# things, each only when the runner asked for it through the environment, then runs the
# sitecustomize it shadows (Debian's), so nothing else changes:
#   SHAREBENCH_MP_START      multiprocessing's default start method in this process. A
#                            set_start_method() of the program's own is then ignored, with a note
#                            on stderr, so one command runs under fork, spawn and forkserver alike.
#   SHAREBENCH_STACKS_DIR,   faulthandler writes every thread's Python stack into
#   SHAREBENCH_STACK_SIGNAL  STACKS_DIR/py-<pid>.txt when the runner sends the signal (on a hang,
#                            before it freezes the tree). The file, made at start-up, is also how the
#                            runner knows the process is Python and safe to send that signal to; a
#                            byte written into the FIFO STACKS_DIR/births then wakes the supervisor,
#                            which reads the tree at once (wings/exec/python_births.h).
#   SHAREBENCH_EVENTS        the sharing checks (sharebench_watch.py beside this file) watch forks,
#                            the objects children receive, optimizers and how each process ends,
#                            and append what they see to this file (`exec --sharing-checks off`
#                            leaves it unset).
import os
import sys


def _sharebench_arm_stacks(directory, signum):
    import faulthandler

    state = {}

    def arm():
        try:
            stream = open(os.path.join(directory, "py-%d.txt" % os.getpid()), "w")
        except OSError:
            return
        previous = state.get("stream")
        state["stream"] = stream  # kept open: faulthandler writes to its descriptor from the handler
        faulthandler.register(signum, file=stream, all_threads=True, chain=False)
        if previous is not None:
            previous.close()  # a forked child's copy of its parent's file
        try:  # non-blocking: no reader (not under exec's supervisor) or a full FIFO is no matter
            births = os.open(os.path.join(directory, "births"), os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC)
            try:
                os.write(births, b".")
            finally:
                os.close(births)
        except OSError:
            pass

    arm()
    os.register_at_fork(after_in_child=arm)


def _sharebench_force_start_method(method):
    import multiprocessing
    import multiprocessing.context

    default = multiprocessing.context._default_context
    default.set_start_method(method, force=True)

    def set_start_method(wanted, force=False):
        if wanted != method:
            sys.stderr.write("sharebench: --mp-start %s: the program's set_start_method(%r) is ignored\n"
                             % (method, wanted))

    default.set_start_method = set_start_method
    multiprocessing.set_start_method = set_start_method


def _sharebench_chain():
    import importlib.machinery
    import importlib.util

    here = os.path.dirname(os.path.abspath(__file__))
    path = [p for p in sys.path if os.path.abspath(p or ".") != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", path)
    if spec is None or spec.origin is None or os.path.realpath(spec.origin) == os.path.realpath(__file__):
        return
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)


try:
    if os.environ.get("SHAREBENCH_STACKS_DIR") and os.environ.get("SHAREBENCH_STACK_SIGNAL"):
        _sharebench_arm_stacks(os.environ["SHAREBENCH_STACKS_DIR"], int(os.environ["SHAREBENCH_STACK_SIGNAL"]))
    if os.environ.get("SHAREBENCH_EVENTS"):
        import sharebench_watch

        sharebench_watch.install()
    if os.environ.get("SHAREBENCH_MP_START"):
        _sharebench_force_start_method(os.environ["SHAREBENCH_MP_START"])
except Exception as error:  # never break the program over the harness's hooks
    sys.stderr.write("sharebench: sitecustomize: %s\n" % error)
try:
    _sharebench_chain()
except Exception:
    pass
