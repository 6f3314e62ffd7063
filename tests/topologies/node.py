#!/usr/bin/python3
# One node of a generated topology played in Python (tests/topologies/README.md). The
# generator copies this file under the node's name (t12n3py), so that the process's comm
# is that name, and gives it the node's spec file (node.c's format, one node):
#
#   NODE SPEC_FILE
#
# It plays the event-loop server, its requester and its queued clients as node.c does
# (`server-WAIT` edges; README.md, "The event-loop server").
#
# Setup, the barrier (every node ready: files in ready/, at most 5 s), the inputs in order,
# the stage, the outputs, exit 0; times/NAME gets the monotonic ns of the barrier, the
# inputs' end and the stage's end. Paths are relative to the work folder run.sh made.
import ctypes
import fcntl
import os
import select
import signal
import socket
import struct
import sys
import time

STAGE_S = 1.2
SETUP_S = 5.0
BIG_WRITE = 256 * 1024
EDGE_SIGNAL = signal.SIGRTMIN + 1
NAME = os.path.basename(sys.argv[0])
TIMES = {}  # the server's loop ran the stage: its inputs' and stage's end (ns)


def fail(why):
    print(f"{NAME}: {why}", file=sys.stderr)
    sys.exit(1)


def write_file(path, text):
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.rename(path + ".tmp", path)


def wait_file(path):
    end = time.monotonic() + SETUP_S
    while not os.path.exists(path):
        if time.monotonic() > end:
            fail(f"{path} did not appear within 5 s")
        time.sleep(0.001)


def read_spec(path):
    spec = {"total": 0, "stage": "none", "in": [], "out": []}
    with open(path) as f:
        for at, line in enumerate(f, 1):
            words = line.split()
            if not words or words[0].startswith("#"):
                continue
            if words[0] == "total":
                spec["total"] = int(words[1])
            elif words[0] == "node":
                spec["name"] = words[1]
            elif words[0] == "stage":
                spec["stage"] = words[1]
            elif words[0] in ("in", "out"):
                e = {"mech": words[1], "chan": words[2]}
                if words[1].startswith("server-"):
                    if len(words) != 7:
                        fail(f"{path}:{at}: a server edge needs LISTEN TRANSPORT ACCEPT DELAY")
                    e["listen"], e["transport"], e["accept"] = words[3:6]
                    e["delay_ms"] = int(words[6])
                elif len(words) >= 5:
                    e["exe"], e["spec"] = words[3], words[4]
                spec[words[0]].append(e)
            else:
                fail(f"{path}:{at}: cannot read {line.strip()!r}")
    return spec


def is_fifo_wait(m):
    return m in ("pipe", "readt") or m.split("-")[0] in ("poll", "select", "epoll")


def is_server(spec):
    """The server: a node with server inputs (its requester's) and outputs (its clients')."""
    has = lambda side: any(e["mech"].startswith("server-") for e in spec[side])
    return has("in") and has("out")


def connect_server(e):
    if e["transport"] == "tcp":
        return connect_tcp(e["listen"])
    wait_file(e["listen"] + ".ok")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(e["listen"] + ".sock")
    return s


def lock_file(chan):
    return os.open(chan + ".lock", os.O_RDWR)


def setup(spec):
    for e in spec["in"]:
        m = e["mech"]
        if is_fifo_wait(m) or m == "pipefull":
            e["fd"] = os.open(e["chan"], os.O_RDWR)
            if m.startswith("epoll"):
                e["epoll"] = select.epoll()
                e["epoll"].register(e["fd"], select.EPOLLIN)
        elif m.startswith("eof"):
            e["fd"] = os.open(e["chan"], os.O_RDONLY | os.O_NONBLOCK)
            os.set_blocking(e["fd"], True)
            write_file(e["chan"] + ".ok", "ok\n")
        elif m in ("unix", "tcp", "accept"):
            e["listener"] = listen(e["chan"], "unix" if m == "unix" else "tcp")
        elif m.split("-")[0] in ("flock", "fcntl"):
            e["fd"] = lock_file(e["chan"])
        elif m == "wait4":
            e["child"] = os.posix_spawn(e["exe"], [e["exe"], e["spec"]], os.environ)
        elif m == "sigwaitinfo":
            write_file(e["chan"] + ".tid", f"{os.getpid()} {os.getpid()}\n")
        elif m.startswith("server-"):
            if is_server(spec):
                e["listener"] = listen(e["listen"], e["transport"])
        else:
            fail(f"unknown input mechanism {m}")
    for e in spec["out"]:
        m = e["mech"]
        if is_fifo_wait(m) or m == "pipefull":
            e["fd"] = os.open(e["chan"], os.O_RDWR)
        elif m.startswith("flock"):
            e["fd"] = lock_file(e["chan"])
            fcntl.flock(e["fd"], fcntl.LOCK_EX)
        elif m.startswith("fcntl"):
            e["fd"] = lock_file(e["chan"])
            fcntl.lockf(e["fd"], fcntl.LOCK_EX)
    for e in spec["out"]:
        m = e["mech"]
        if m == "unix":
            wait_file(e["chan"] + ".ok")
            e["sock"] = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            e["sock"].connect(e["chan"] + ".sock")
        elif m == "tcp":
            e["sock"] = connect_tcp(e["chan"])
        elif m.startswith("eof"):
            wait_file(e["chan"] + ".ok")
            e["fd"] = os.open(e["chan"], os.O_WRONLY | os.O_NONBLOCK)
            os.set_blocking(e["fd"], True)
        elif m.startswith("server-") and not is_server(spec):  # the requester
            e["sock"] = connect_server(e)
    # A queued client connects now, unless its connection is to wait in the listen backlog.
    for e in spec["in"]:
        if e["mech"].startswith("server-") and not is_server(spec) and e["accept"] != "backlog":
            e["sock"] = connect_server(e)
    for e in spec["in"]:
        if e["mech"] in ("unix", "tcp"):
            e["sock"] = accept_bounded(e["listener"], e["chan"])
        elif e["mech"].startswith("server-") and is_server(spec) and e["accept"] == "setup":
            clients = 1 + sum(o["mech"].startswith("server-") for o in spec["out"])
            e["conns"] = [accept_bounded(e["listener"], e["listen"]) for _ in range(clients)]


def listen(chan, transport):
    if transport == "unix":
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(chan + ".sock")
        s.listen(8)
        write_file(chan + ".ok", "ok\n")
    else:
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        s.listen(8)
        write_file(chan + ".port", f"{s.getsockname()[1]}\n")
    return s


def accept_bounded(listener, chan):
    r, _, _ = select.select([listener], [], [], SETUP_S)
    if not r:
        fail(f"nobody connected to {chan} within 5 s")
    return listener.accept()[0]


def connect_tcp(chan):
    wait_file(chan + ".port")
    with open(chan + ".port") as f:
        port = int(f.read())
    return socket.create_connection(("127.0.0.1", port))


def barrier(spec):
    write_file(f"ready/{NAME}", "ready\n")
    end = time.monotonic() + SETUP_S
    while True:
        count = sum(1 for n in os.listdir("ready") if not n.endswith(".tmp"))
        if count >= spec["total"]:
            return
        if time.monotonic() > end:
            fail(f"only {count} of {spec['total']} nodes ready after 5 s")
        time.sleep(0.001)


def send_request(e):
    """A queued client's request (node.c's send_request): once the server has begun its
    requester's work, and the edge's delay later; connected now in the backlog case."""
    wait_file(e["listen"] + ".working")
    time.sleep(e["delay_ms"] / 1000)
    if e["accept"] == "backlog":
        e["sock"] = connect_server(e)
    e["sock"].send(b"q")


def recv_answer(e):
    if e["sock"].recv(1) != b"a":
        fail(f"no answer on {e['chan']}")


def serve(spec, e):
    """The server's event loop on its one thread (node.c's serve): waits in epoll, poll or
    select for its listener and clients, handles the ready descriptors one at a time
    (accepts, or reads one request and answers it); the requester's request (W) is worked
    on between its read and its answer, the queued clients' (q) are read after."""
    wait = e["mech"][len("server-"):]
    clients = 1 + sum(o["mech"].startswith("server-") for o in spec["out"])
    listener = e["listener"]
    socks = {s.fileno(): s for s in [listener] + e.get("conns", [])}
    gone = []  # clients that left: kept open, so that their numbers stay theirs
    poller = {"epoll": select.epoll, "poll": select.poll}.get(wait, lambda: None)()
    flag = select.EPOLLIN if wait == "epoll" else select.POLLIN
    for fd in socks:
        if poller is not None:
            poller.register(fd, flag)
    answered, worked = 0, False
    while answered < clients:
        if wait == "epoll":
            ready = [fd for fd, _ in poller.poll(-1)]
        elif wait == "poll":
            ready = [fd for fd, _ in poller.poll()]
        else:
            ready = [s.fileno() for s in select.select(list(socks.values()), [], [])[0]]
        for fd in ready:
            s = socks[fd]
            if s is listener:
                c, _ = listener.accept()
                socks[c.fileno()] = c
                if poller is not None:
                    poller.register(c.fileno(), flag)
                continue
            try:
                data = s.recv(1)
            except OSError:
                data = b""
            if not data:  # a client that left (the requester, once answered)
                gone.append(socks.pop(fd))
                if poller is not None:
                    poller.unregister(fd)
                continue
            if data == b"W":
                TIMES["inputs"] = time.monotonic_ns()
                write_file(e["listen"] + ".working", "working\n")
                stage(spec["stage"])
                TIMES["stage"] = time.monotonic_ns()
                worked = True
            elif not worked:
                fail("a queued client's request came before the requester's")
            s.send(b"a")
            answered += 1


def wait_input(spec, e):
    m = e["mech"]
    if m == "pipe":
        read_byte(e["fd"])
    elif m.startswith("server-"):
        if is_server(spec):
            serve(spec, e)
        else:
            recv_answer(e)
    elif m.startswith("poll"):
        p = select.poll()
        p.register(e["fd"], select.POLLIN)
        while not p.poll(None if m == "poll" else 20):
            pass
        read_byte(e["fd"])
    elif m.startswith("select"):
        while not select.select([e["fd"]], [], [], None if m == "select" else 0.02)[0]:
            pass
        read_byte(e["fd"])
    elif m.startswith("epoll"):
        while not e["epoll"].poll(-1 if m == "epoll" else 0.02):
            pass
        read_byte(e["fd"])
    elif m == "pipefull":
        data = b"x" * BIG_WRITE
        view = memoryview(data)
        while view:
            view = view[os.write(e["fd"], view) :]
    elif m in ("unix", "tcp"):
        if e["sock"].recv(1) != b"x":
            fail(f"recv on {e['chan']}: nothing")
    elif m == "accept":
        s, _ = e["listener"].accept()
        s.close()
    elif m.startswith("eof"):
        while os.read(e["fd"], 64):
            pass
    elif m.startswith("flock"):
        fcntl.flock(e["fd"], fcntl.LOCK_EX)
        fcntl.flock(e["fd"], fcntl.LOCK_UN)
    elif m.startswith("fcntl"):
        fcntl.lockf(e["fd"], fcntl.LOCK_EX)
        fcntl.lockf(e["fd"], fcntl.LOCK_UN)
    elif m == "wait4":
        _, status = os.waitpid(e["child"], 0)
        if os.waitstatus_to_exitcode(status) != 0:
            fail(f"child {e['child']} failed (status {status:#x})")
    elif m == "sigwaitinfo":
        signal.sigwaitinfo({EDGE_SIGNAL})


def read_byte(fd):
    if os.read(fd, 1) != b"x":
        fail("read: end of file")


def signal_output(spec, e):
    m = e["mech"]
    if m.startswith("server-"):
        # The requester: its request, then its answer (the server answers its queued
        # clients from its loop).
        if not is_server(spec):
            e["sock"].send(b"W")
            recv_answer(e)
    elif m == "readt":
        os.write(e["fd"], b"x" * 16)  # bash's read -t can drop a byte as it times out
    elif is_fifo_wait(m):
        os.write(e["fd"], b"x")
    elif m == "pipefull":
        got = 0
        while got < BIG_WRITE:
            chunk = os.read(e["fd"], BIG_WRITE - got)
            if not chunk:
                fail(f"drain {e['chan']}: end of file")
            got += len(chunk)
    elif m in ("unix", "tcp"):
        e["sock"].send(b"x")
    elif m == "accept":
        connect_tcp(e["chan"]).close()
    elif m in ("eof-close", "flock-close", "fcntl-close"):
        os.close(e["fd"])
    elif m == "flock-unlock":
        fcntl.flock(e["fd"], fcntl.LOCK_UN)
    elif m == "fcntl-unlock":
        fcntl.lockf(e["fd"], fcntl.LOCK_UN)
    elif m in ("sigwaitinfo", "sigsuspend", "signalfd"):
        with open(e["chan"] + ".tid") as f:
            pid, tid = (int(w) for w in f.read().split())
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.syscall(234, pid, tid, int(EDGE_SIGNAL)) != 0:  # tgkill
            fail(f"tgkill {pid} {tid}: {os.strerror(ctypes.get_errno())}")
    elif m == "inotify":
        open(f"{e['chan']}.dir/{NAME}", "w").close()
    # eof-exit, flock-exit, fcntl-exit, wait4, waitid, pidfd: the process's exit.


def stage(kind):
    if kind in ("sleep", "lock"):
        time.sleep(STAGE_S)
    elif kind == "busy":
        end = time.monotonic() + STAGE_S
        x = 0
        while time.monotonic() < end:
            for i in range(1000):
                x += i
    elif kind == "disk":
        fd = os.open(f"disk.{NAME}", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        block = b"d" * 4096
        end = time.monotonic() + STAGE_S
        at = 0
        while time.monotonic() < end:
            os.pwrite(fd, block, at)
            os.fdatasync(fd)
            at = (at + 4096) % (1 << 20)
        os.close(fd)
    elif kind != "none":
        fail(f"unknown stage {kind}")


def main():
    if len(sys.argv) != 2:
        fail("usage: NODE SPEC_FILE")
    spec = read_spec(sys.argv[1])
    signal.pthread_sigmask(signal.SIG_BLOCK, {EDGE_SIGNAL})
    write_file(f"pids/{NAME}", f"{os.getpid()}\n")
    setup(spec)
    barrier(spec)
    t_barrier = time.monotonic_ns()
    for e in spec["in"]:
        if e["mech"].startswith("server-") and not is_server(spec):
            send_request(e)
    for e in spec["in"]:
        wait_input(spec, e)
    t_inputs = time.monotonic_ns()
    if not TIMES:  # (the server's loop ran it, and kept its times)
        stage(spec["stage"])
    t_stage = time.monotonic_ns()
    if TIMES:
        t_inputs, t_stage = TIMES["inputs"], TIMES["stage"]
    for e in spec["out"]:
        signal_output(spec, e)
    write_file(f"times/{NAME}", f"{t_barrier} {t_inputs} {t_stage}\n")


if __name__ == "__main__":
    main()
