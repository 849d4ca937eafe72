"""Progress reports for `sharebench exec`, from any process of the program it runs.

    import sharebench_progress
    for step in range(steps):
        train_one_step()
        sharebench_progress.beat(step + 1)   # this process's steps so far

Each process reports its own count; the runner sums the last count of every process, so steps/s
is the whole program's. While any process beats, the runner's hang detector goes by beats alone
(no beat for --hang-timeout is a hang); a program that never beats is judged by CPU time.
Outside `sharebench exec` (SHAREBENCH_PROGRESS unset) beat() does nothing.

The channel is a file named by SHAREBENCH_PROGRESS that each process appends "PID STEP\\n" to;
C programs can use <sharebench/progress.h>, a shell script `echo "$$ $step" >> "$SHAREBENCH_PROGRESS"`.
"""
import os

_path = os.environ.get("SHAREBENCH_PROGRESS")
_fd = None


def enabled():
    """True when running under `sharebench exec`."""
    return bool(_path)


def beat(step):
    """Reports that this process has done `step` units of work in all (a count that only grows)."""
    global _fd
    if not _path:
        return
    if _fd is None:
        _fd = os.open(_path, os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC)
    os.write(_fd, b"%d %d\n" % (os.getpid(), int(step)))  # one append: whole lines, even from many processes
