"""Memory a forked child made its own of what it inherited, for the `copy-on-read` check of
`sharebench exec` (wings/exec/checks/copy_on_read.cc). Loaded by sharebench_watch.py.

A forked child shares its parent's pages until one of them writes a page; reading a Python object
writes its reference count, so a DataLoader worker that reads a dataset of Python lists copies it
page by page (pytorch#13246). At the fork the child notes the private writable mappings it
inherited (the heap, malloc's and Python's arenas, from /proc/self/maps); at its end it reports, of
those ranges, the kB now private to it and the kB resident ("inherited_private_kb",
"inherited_resident_kb" in its "end"), from /proc/self/pagemap for those ranges alone (about 2 ms with
torch loaded), or /proc/self/smaps where pagemap cannot be read.
"""
import os

_inherited = None  # a forked child: the (start, end) addresses of the private writable mappings it inherited
_failed = None


def _private_mappings():
    """This process's private, writable, anonymous mappings (the heap, malloc's and Python's arenas),
    from /proc/self/maps: (start, end) addresses."""
    ranges = []
    with open("/proc/self/maps") as maps:
        for line in maps:
            fields = line.split()
            if len(fields) >= 2 and fields[1].startswith("rw") and fields[1].endswith("p") and \
                    (len(fields) < 6 or fields[5] == "[heap]"):
                start, end = fields[0].split("-")
                ranges.append((int(start, 16), int(end, 16)))
    return ranges


# A page's /proc/self/pagemap entry, its top byte: bit 63 (present) and bit 56 (mapped by this process
# alone: a page it copied on writing, or made); 1 where both are set.
_PRESENT_AND_OWN = bytes(1 if b & 0x81 == 0x81 else 0 for b in range(256))
_PAGEMAP_CHUNK = 1 << 17  # pages read at a time (1 MiB of entries)


def _inherited_private_kb():
    """Of the mappings inherited at the fork, the kB now private to this process (pages it wrote after
    the fork and so copied; reading a Python object writes its reference count), and the kB of them
    resident (shared with the parent or not). Read from /proc/self/pagemap for those ranges alone:
    about 2 ms with torch loaded, where /proc/self/smaps takes 13 ms (every mapping's page walk,
    formatted, parsed)."""
    try:
        return _inherited_from_pagemap()
    except OSError:
        return _inherited_from_smaps()


def _inherited_from_pagemap():
    page = os.sysconf("SC_PAGE_SIZE")
    private = resident = 0
    fd = os.open("/proc/self/pagemap", os.O_RDONLY | os.O_CLOEXEC)
    try:
        for start, end in _inherited:
            for first in range(start // page, end // page, _PAGEMAP_CHUNK):
                count = min(_PAGEMAP_CHUNK, end // page - first)
                top = os.pread(fd, count * 8, first * 8)[7::8]
                resident += len(top.translate(None, bytes(range(128))))
                private += top.translate(_PRESENT_AND_OWN).count(1)
    finally:
        os.close(fd)
    if resident and not private:  # a kernel without bit 56 (before 4.2): the child wrote its heap at least
        return _inherited_from_smaps()
    return private * page // 1024, resident * page // 1024


def _inherited_from_smaps():
    starts = {"%x" % start for start, _ in _inherited}
    private, resident, inside = 0, 0, False
    with open("/proc/self/smaps") as smaps:
        for line in smaps:
            head = line.split(None, 1)[0]
            if "-" in head and not head.endswith(":"):
                inside = head.split("-")[0] in starts
            elif inside and head == "Private_Dirty:":
                private += int(line.split()[1])
            elif inside and head == "Rss:":
                resident += int(line.split()[1])
    return private, resident


def _end_fields():
    if not _inherited:
        return {}
    private, resident = _inherited_private_kb()
    return {"inherited_private_kb": private, "inherited_resident_kb": resident}


def install(hooks):
    global _failed
    _failed = hooks.shared_state.report_failure
    hooks.end_fields.append(_end_fields)


def after_fork_in_child():
    global _inherited
    try:
        _inherited = _private_mappings()
    except Exception as error:
        _inherited = None
        _failed("copy on read: fork", error)
