"""A hostile external bot (no naparena import) for the sandbox tests. At the first
decision of every match it tries each attack of the sandbox's threat list once and
writes one line to stderr, `HOSTILE {json}`, naming every attack that succeeded; then it
plays the first legal answer. Its one argument is a JSON object of targets:

    run       the run directory (earlier rotations' match files are under matches/)
    files     the tournament file and another bot's file, to read
    port      a loopback port the test listens on
    victim    the pid of a process outside the seat (the test's), to signal and trace
    token     names the note it leaves in /tmp for its next match
    marker    the `sleep` argument of the children it leaves behind (the test counts them)
"""

import ctypes
import json
import os
import signal
import socket
import sys

TARGETS = json.loads(sys.argv[1])
PTRACE_SEIZE, PTRACE_DETACH = 0x4206, 17


def attempt(found, name, action):
    try:
        if action():
            found.append(name)
    except Exception:  # every failure is the sandbox doing its job
        pass


def read_match_file():
    folder = os.path.join(TARGETS["run"], "matches")
    return any('"deal"' in open(os.path.join(folder, f)).read() for f in os.listdir(folder))


def connect():
    with socket.create_connection(("127.0.0.1", TARGETS["port"]), timeout=1):
        return True


def other_processes():
    # Anything but this seat's own processes (bwrap's init is pid 1 of the namespace).
    mine = {os.getpid(), os.getppid(), 1}
    return any(p.isdigit() and int(p) not in mine and _not_mine(p) for p in os.listdir("/proc"))


def _not_mine(pid):
    try:
        return os.getsid(int(pid)) != os.getsid(0)
    except OSError:
        return False


def signal_victim(sig):
    os.kill(TARGETS["victim"], sig)
    return True


def trace_victim():
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.ptrace(PTRACE_SEIZE, TARGETS["victim"], 0, 0) != 0:
        return False
    libc.ptrace(PTRACE_DETACH, TARGETS["victim"], 0, 0)
    return True


def signal_worker():
    # The match's worker is this process's parent unless a sandbox's init stands between.
    parent = os.getppid()
    os.kill(parent, 0)
    return parent > 1


def leave_children(count, marker):
    """`count` sleepers, each in a session of its own, meant to outlive the match."""
    for _ in range(count):
        if os.fork() == 0:
            os.setsid()
            os.execvp("sleep", ["sleep", marker])
    return True


def note_from_last_match():
    path = f"/tmp/naparena-hostile-{TARGETS['token']}"
    seen = os.path.exists(path)
    with open(path, "a") as f:
        f.write("here\n")
    return seen


def attack():
    found = []
    attempt(found, "run_dir", read_match_file)
    for i, path in enumerate(TARGETS["files"]):
        attempt(found, f"file{i}", lambda path=path: bool(open(path).read(1)))  # noqa: SIM115 - a probe: may it open?
    attempt(found, "network", connect)
    attempt(found, "processes", other_processes)
    attempt(found, "signal", lambda: signal_victim(0))
    attempt(found, "stop", lambda: signal_victim(signal.SIGSTOP) and signal_victim(signal.SIGCONT))
    attempt(found, "trace", trace_victim)
    attempt(found, "worker", signal_worker)
    attempt(found, "note", note_from_last_match)
    leave_children(4, TARGETS["marker"])  # the test looks for them after the run
    sys.stderr.write("HOSTILE " + json.dumps(found) + "\n")
    sys.stderr.flush()


def main():
    attacked = False
    for line in sys.stdin:
        msg = json.loads(line)
        if msg["type"] == "hello":
            print(json.dumps({"type": "hello", "protocol": 1, "name": "hostile", "params": {}}), flush=True)
        elif msg["type"] == "match":
            attacked = False
        elif msg["type"] == "decide":
            if not attacked:
                attacked = True
                attack()
            print(json.dumps({"type": "answer", "answer": msg["view"]["legal"][0]}), flush=True)
        elif msg["type"] == "shutdown":
            return


if __name__ == "__main__":
    main()
