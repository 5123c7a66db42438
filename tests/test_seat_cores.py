"""A match's seat processes run on the core of the match that asks them (`[seats] cores`,
`arena/match/cores.py`): every seat of the match, a spare started during the previous
match, a child the bot started before its match, and a sandboxed bot (bubblewrap's
grandchild) alike. With `cores = "any"` they run wherever the kernel puts them (the
control, which shows the check can fail), and the results are the same bytes either way."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import tomli_w

from naparena.arena.match import sandbox
from naparena.arena.records.rundir import MATCHES, STANDINGS
from naparena.arena.session import Session
from naparena.errors import ConfigError

PLAIN = Path(__file__).parent / "seat_programs" / "plain.py"
ALLOWED = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
NO_BWRAP = sandbox.unavailable()
SANDBOX = ["off", pytest.param("required", marks=pytest.mark.skipif(
    NO_BWRAP is not None, reason=f"no seat sandbox here: {NO_BWRAP}"))]
#: What plain.py --cores writes at a match's first decision, as run.log holds it.
CORES = re.compile(r"^INFO match (\d+) seat (\d+) \(p\d\) stderr: cores \[([\d, ]*)\] child \[([\d, ]*)\]$")

pytestmark = pytest.mark.skipif(len(ALLOWED) < 2, reason="fewer than two cores allowed: there is nothing to share")


def run(folder: Path, cores: str, mode: str, workers: int) -> Path:
    """Three external seats and one inline bot, matches of three hands."""
    folder.mkdir(parents=True)
    command = [sys.executable, str(PLAIN), "--cores"]
    config = {
        "tournament": {"name": "cores", "seed": 5, "seeds": 2, "hands": 3, "table": 4, "workers": workers,
                       "timeout": 30.0},
        "seats": {"sandbox": mode, "cores": cores},
        "bots": [*({"name": "plain", "alias": f"p{i}", "command": command} for i in range(3)), {"name": "random"}],
        "variants": [{"name": "classic"}]}
    (folder / "t.toml").write_text(tomli_w.dumps(config))
    Session.open(folder / "t.toml", folder / "run", workers=workers).play()
    return folder / "run"


def seen(run: Path) -> dict[int, list[tuple[list[int], list[int]]]]:
    """Per match: each seat's (cores, its child's cores), as the bot saw them."""
    out: dict[int, list[tuple[list[int], list[int]]]] = {}
    for line in (run / "run.log").read_text().splitlines():
        found = CORES.match(line)
        if found is not None:
            cores, child = ([int(c) for c in group.split(", ")] for group in found.group(3, 4))
            out.setdefault(int(found[1]), []).append((cores, child))
    return out


def results(run: Path) -> dict[str, bytes]:
    files = sorted((run / MATCHES).glob("*.json")) + [run / STANDINGS]
    return {path.name: path.read_bytes() for path in files}


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("mode", SANDBOX)
def test_every_process_of_a_match_shares_one_core_and_the_bytes_do_not_change(tmp_path, mode, workers):
    shared = run(tmp_path / "match", "match", mode, workers)
    free = run(tmp_path / "any", "any", mode, workers)
    pinned, placed = seen(shared), seen(free)
    assert len(pinned) >= 6 and all(len(seats) == 3 for seats in pinned.values()), pinned
    for match, seats in pinned.items():
        core = seats[0][0]
        assert len(core) == 1 and core[0] in ALLOWED, (match, seats)
        assert all(cores == core and child == core for cores, child in seats), (match, seats)
    # The control: unshared, every process may run on every core, so the check above fails.
    assert placed.keys() == pinned.keys()
    assert all(cores == ALLOWED and child == ALLOWED for seats in placed.values() for cores, child in seats)
    assert results(shared) == results(free)


def test_cores_takes_match_or_any_and_says_so_otherwise(tmp_path):
    path = tmp_path / "t.toml"
    path.write_text(tomli_w.dumps({"tournament": {"name": "x", "seed": 1}, "seats": {"cores": "all"},
                                   "bots": [{"name": "random"}], "variants": [{"name": "classic"}]}))
    with pytest.raises(ConfigError) as e:
        Session.open(path, tmp_path / "run")
    assert "seats.cores" in str(e.value) and '"match" or "any"' in str(e.value)


def test_a_match_takes_its_core_and_the_next_matchs_spares_keep_off_it():
    """`sharing_core` directly: a seat and the child it started share the thread's core;
    a spare and its child get every other core; the thread's own mask comes back after."""
    from naparena.arena.match.cores import sharing_core

    start = "import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']);"
    family = [subprocess.Popen([sys.executable, "-c", start + " time.sleep(60)"]) for _ in range(2)]
    try:
        children = [_children_of(p.pid) for p in family]
        seat, spare = ([p.pid, *kids] for p, kids in zip(family, children))
        with sharing_core([seat[0]], "match", [spare[0]]):
            core = os.sched_getaffinity(0)
            assert len(core) == 1
            assert all(os.sched_getaffinity(pid) == core for pid in seat)
            assert all(os.sched_getaffinity(pid) == set(ALLOWED) - core for pid in spare)
        assert sorted(os.sched_getaffinity(0)) == ALLOWED
    finally:
        for p in family:
            _kill_tree(p)


def _children_of(pid: int) -> list[int]:
    """The child a test process starts first, once it is there."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        found = [int(name) for name in os.listdir("/proc") if name.isdigit() and _parent(int(name)) == pid]
        if found:
            return found
        time.sleep(0.01)
    raise AssertionError(f"process {pid} started no child")


def _parent(pid: int) -> int:
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return -1
    return int(stat[stat.rindex(b")") + 2:].split()[1])


def _kill_tree(process: subprocess.Popen) -> None:
    for pid in _children_of_now(process.pid):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    process.kill()
    process.wait()


def _children_of_now(pid: int) -> list[int]:
    return [int(name) for name in os.listdir("/proc") if name.isdigit() and _parent(int(name)) == pid]
