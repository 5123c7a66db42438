"""Hostile seat programs against the seat sandbox (README: "what each mode guarantees").

Two external bots not using naparena, one in Python and one in shell, play a duplicate
run on 2 workers and, at every match, try to read the run directory and the tournament
file and another bot's file, reach a loopback port, see, signal, stop and trace other
processes and their own worker, leave a note in /tmp for their next match, and leave
children behind in sessions of their own. Sandboxed, every attempt fails; with
`sandbox = "off"` the same attempts succeed, so the tests can fail.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import tomli_w

from naparena.arena.match import sandbox
from naparena.arena.records.rundir import MATCHES, STANDINGS
from naparena.arena.records.verify import verify_run
from naparena.arena.session import Session

PROGRAMS = Path(__file__).parent / "seat_programs"
HOSTILE_PY, HOSTILE_SH, PLAIN = PROGRAMS / "hostile.py", PROGRAMS / "hostile.sh", PROGRAMS / "plain.py"
NO_BWRAP = sandbox.unavailable()
needs_bwrap = pytest.mark.skipif(NO_BWRAP is not None, reason=f"no seat sandbox here: {NO_BWRAP}")
HOSTILE = ("hostile-py", "hostile-sh")


@pytest.fixture
def targets(tmp_path: Path) -> Iterator[dict]:
    """What the hostile seats aim at: a listening loopback port and a process of the test's."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    # Every connection is taken and closed: left in the backlog, the 65th would hang its
    # attacker until the seat's time-out (a run of time-outs from match 32 on, unsandboxed).
    threading.Thread(target=_accept_all, args=(listener,), daemon=True).start()
    victim = subprocess.Popen(["sleep", "600"])
    token = f"{os.getpid()}-{tmp_path.name}"
    try:
        yield {"port": listener.getsockname()[1], "victim": victim.pid, "token": token}
    finally:
        victim.kill()
        victim.wait()
        try:
            listener.shutdown(socket.SHUT_RDWR)  # wakes the accepting thread
        except OSError:
            pass
        listener.close()
        Path(f"/tmp/naparena-hostile-{token}").unlink(missing_ok=True)


def _accept_all(listener: socket.socket) -> None:
    while True:
        try:
            connection, _ = listener.accept()
        except OSError:  # the listener closed: the test is over
            return
        connection.close()


def hostile_run(tmp_path: Path, targets: dict, mode: str) -> tuple[Path, dict[str, list[list[str]]], int]:
    """Play the run in `mode`; the attacks each hostile seat reported, and how many of
    their children were still alive after it (those are killed here)."""
    folder = tmp_path / mode
    folder.mkdir()
    file, run = folder / "tournament.toml", folder / "run"
    marker = f"{9000 + os.getpid() % 900}.{len(mode)}"  # the children's `sleep` argument
    aims = {**targets, "run": str(run), "files": [str(file), str(PLAIN)], "marker": marker}
    shell_args = [str(run), str(file), str(targets["port"]), str(targets["victim"]), targets["token"], marker]
    config = {
        "tournament": {"name": "hostile", "seed": 5, "seeds": 1, "hands": 2, "table": 4, "duplicate": True,
                       "workers": 2, "timeout": 30.0},
        "seats": {"sandbox": mode},
        "bots": [{"name": "hostile-py", "command": [sys.executable, str(HOSTILE_PY), json.dumps(aims)]},
                 {"name": "hostile-sh", "command": ["bash", str(HOSTILE_SH), ":".join(shell_args)]},
                 {"name": "plain", "command": [sys.executable, str(PLAIN)]},
                 {"name": "random"}],
        "variants": [{"name": "classic"}]}
    file.write_text(tomli_w.dumps(config))
    Session.open(file, run, workers=2).play()
    found: dict[str, list[list[str]]] = {alias: [] for alias in HOSTILE}
    for line in (run / "run.log").read_text().splitlines():
        for alias in HOSTILE:
            if f"({alias}) stderr: HOSTILE " in line:
                found[alias].append(json.loads(line.split("HOSTILE ", 1)[1]))
    return run, found, _kill_left_behind(marker)


def _kill_left_behind(marker: str) -> int:
    left = 0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if cmdline == b"sleep\0" + marker.encode() + b"\0":
            left += 1
            os.kill(int(pid), signal.SIGKILL)
    return left


def check_run(run: Path) -> None:
    """Finished, verified, chips conserved in every hand, no fault on an innocent seat."""
    assert (run / STANDINGS).exists() and verify_run(run)[2] == []
    for path in sorted((run / MATCHES).glob("*.json")):
        log = json.loads(path.read_bytes())
        for hand in log["hands"]:
            assert sum(hand["chips"]) + hand["kitty"] == 0 or sum(hand["chips"]) == 0, hand
        faulted = {bot["alias"] for bot, seat in zip(log["bots"], log["summary"]["seats"]) if seat["faults"]}
        assert faulted <= set(HOSTILE), faulted


# --- the tests ------------------------------------------------------------------------

@pytest.mark.slow
@needs_bwrap
def test_hostile_seats_in_the_sandbox_achieve_nothing(tmp_path, targets):
    """README table, every "bwrap" line: each attack fails, every match, both programs."""
    run, found, left = hostile_run(tmp_path, targets, "required")
    matches = len(list((run / MATCHES).glob("*.json")))
    assert all(len(found[alias]) == matches for alias in HOSTILE), "each seat attacked in every match"
    assert found == {alias: [[]] * matches for alias in HOSTILE}
    assert left == 0, "no child outlives its match"
    assert json.loads((run / "manifest.json").read_bytes())["tournament"]["seats"]["sandbox"] == "bwrap"
    check_run(run)


@pytest.mark.slow
def test_the_same_attacks_unsandboxed_succeed(tmp_path, targets):
    """The control: with sandbox = "off" the same programs read, connect, signal, trace,
    pass notes between matches and leave children behind."""
    run, found, left = hostile_run(tmp_path, targets, "off")
    py = {attack for match in found["hostile-py"] for attack in match}
    sh = {attack for match in found["hostile-sh"] for attack in match}
    assert {"run_dir", "file0", "file1", "network", "processes", "signal", "stop", "worker", "note"} <= py
    assert {"run_dir", "file0", "network", "processes", "signal", "stop", "worker", "note"} <= sh
    if os.geteuid() == 0 or _ptrace_scope() == 0:  # Yama lets a normal user trace only its children
        assert "trace" in py
    assert left > 0, "unsandboxed, children in their own session outlive the match"
    check_run(run)


def _ptrace_scope() -> int:
    try:
        return int(Path("/proc/sys/kernel/yama/ptrace_scope").read_text())
    except (OSError, ValueError):
        return 0
