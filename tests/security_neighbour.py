# The hostile neighbour of tests/security_test.sh, run as another user while a run is live:
# every way in it can find, over and over until it is killed. Prints what it tried.
#   python3 security_neighbour.py RUNNER_PID VICTIM_FILE [--no-tcp]
# --no-tcp leaves loopback TCP listeners alone: c10d Gloo's pairs listen there, and c10d assumes
# a trusted network (docs/security.md), so the Gloo cells are probed with everything else.
import os, socket, sys, time

runner, victim = sys.argv[1], sys.argv[2]
probe_tcp = "--no-tcp" not in sys.argv[3:]
attempts = {"unix-connect": 0, "unix-connected": 0, "tcp-connect": 0, "tcp-connected": 0,
            "abstract-bind": 0, "symlink": 0, "private-dir-entered": 0}
held = []  # connections kept open (a flood holds them)
squatted = set()  # the abstract names this neighbour bound itself: not the run's

def unix_sockets():
    # /proc/net/unix lists every Unix socket's path (abstract ones start with '@').
    try:
        lines = open("/proc/net/unix").read().splitlines()[1:]
    except OSError:
        return []
    return [l.split()[7] for l in lines if len(l.split()) >= 8 and "sharebench" in l.split()[7]]

def tcp_listeners():
    ports = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            for l in open(table).read().splitlines()[1:]:
                f = l.split()
                if f[3] == "0A":  # LISTEN
                    ports.add(int(f[1].rsplit(":", 1)[1], 16))
        except OSError:
            pass
    return ports

deadline = time.time() + 600
while time.time() < deadline:
    for path in unix_sockets():
        if path.startswith("@") and path[1:] in squatted:
            continue
        attempts["unix-connect"] += 1
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.settimeout(0.2)
            s.connect("\0" + path[1:] if path.startswith("@") else path)
            attempts["unix-connected"] += 1
            s.sendall(b"\xff" * 4096)
            held.append(s)
        except OSError:
            s.close()
    for port in (tcp_listeners() if probe_tcp else ()):
        attempts["tcp-connect"] += 1
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            s.settimeout(0.2)
            s.connect(("127.0.0.1", port))
            attempts["tcp-connected"] += 1
            s.sendall(b"\xff" * 4096)
            held.append(s)
        except OSError:
            s.close()
    for n in range(4):  # the names an older sharebench used, squatted before the run could take them
        for name in (f"sharebench-{runner}-ipc-{n}", f"sharebench-{runner}-averaging-{n}"):
            attempts["abstract-bind"] += 1
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                s.bind("\0" + name)
                s.listen(8)
                held.append(s)
                squatted.add(name)
            except OSError:
                s.close()
            link = f"/tmp/{name}"
            if not os.path.lexists(link):
                try:
                    os.symlink(victim, link)
                    attempts["symlink"] += 1
                except OSError:
                    pass
    for entry in os.listdir("/tmp"):
        if entry.startswith(f"sharebench-{runner}-") and os.path.isdir(f"/tmp/{entry}"):
            try:
                os.listdir(f"/tmp/{entry}")
                attempts["private-dir-entered"] += 1
            except OSError:
                pass
    if len(held) > 500:
        for s in held[:250]:
            s.close()
        del held[:250]
    print("attempts:", sum(attempts.values()), attempts, flush=True)
    time.sleep(0.05)
