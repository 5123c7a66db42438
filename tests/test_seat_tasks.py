"""A seat that tries to fill the process table stops at its own limit in the sandbox (a
pids cgroup of its own, where this machine lets naparena make one), and the tournament
goes on; with the sandbox off the same forks all succeed (the control). Either way, no
process of it outlives the run."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import tomli_w

from naparena.arena.match import cgroups, sandbox, spares
from naparena.arena.match.job import seat_record
from naparena.arena.records.rundir import RUN_LOG
from naparena.arena.session import Session
from naparena.arena.setup.settings import Confinement

PROGRAMS = Path(__file__).parent / "seat_programs"
FORKER, PLAIN = PROGRAMS / "forker.py", PROGRAMS / "plain.py"
WANTED = cgroups.SEAT_TASKS + 60  # more than the limit, few enough for any machine


def _run(folder: Path, mode: str) -> tuple[dict, str]:
    config = {
        "tournament": {"name": "forks", "seed": 3, "seeds": 1, "hands": 2, "table": 2, "duplicate": False,
                       "workers": 1, "timeout": 30.0},
        # A tag naming this test's folder rides along in the forker's argv (it ignores it),
        # so `_left_behind` finds this test's processes, not a test's running beside it.
        "bots": [{"name": "plain", "alias": "forker",
                  "command": [sys.executable, str(FORKER), str(WANTED), _tag(folder), "--",
                              sys.executable, str(PLAIN)]},
                 {"name": "random"}],
        "variants": [{"name": "classic"}],
        "seats": {"sandbox": mode, "start_timeout": 60.0},
    }
    path = folder / f"{mode}.toml"
    path.write_text(tomli_w.dumps(config))
    session = Session.open(path, folder / mode)
    result = session.play()
    return result, (session.run_dir.path / RUN_LOG).read_text()


def _forked(log: str) -> list[int]:
    return [int(line.split("forked ")[1].split()[0]) for line in log.splitlines() if "forked " in line]


def _tag(folder: Path) -> str:
    # The whole path, hashed: another pytest session's folder of the same name (xdist, or
    # a second checkout testing at once) must not be taken for this test's.
    return f"tag:{folder.name}-{hashlib.sha256(str(folder).encode()).hexdigest()[:12]}"


def _left_behind(folder: Path) -> list[str]:
    ps = subprocess.run(["ps", "-ww", "-eo", "args"], capture_output=True, text=True, check=True).stdout
    return [line for line in ps.splitlines() if str(FORKER) in line and _tag(folder) in line.split()]


@pytest.mark.skipif(sandbox.unavailable() is not None, reason=f"no sandbox here: {sandbox.unavailable()}")
@pytest.mark.skipif(not cgroups.tasks_limited(), reason="no writable pids cgroup here (naparena needs root "
                    "and cgroup v1's pids hierarchy to limit a seat's tasks)")
def test_a_seat_filling_the_process_table_stops_at_its_limit_and_the_run_goes_on(tmp_path):
    result, log = _run(tmp_path, "required")
    counts = _forked(log)
    assert counts and all(n < cgroups.SEAT_TASKS for n in counts), counts
    assert result["matches"] == 2 and not _left_behind(tmp_path)


def test_unsandboxed_the_same_forks_all_succeed(tmp_path):
    """The control: without the sandbox nothing bounds the seat's forks."""
    result, log = _run(tmp_path, "off")
    counts = _forked(log)
    assert counts and all(n == WANTED for n in counts), counts
    assert result["matches"] == 2 and not _left_behind(tmp_path)


def test_a_worker_forked_where_spares_were_started_closes_its_own(tmp_path):
    """Spares arm their clean-up at their process's exit, once. A worker forked from a
    process that had armed it (a run played in-process, as tests do) starts with no
    finalizers, and must arm its own, or its spare's forks outlive the run."""
    plain = seat_record("plain", "plain", {}, 0, command=[sys.executable, str(PLAIN)])
    spares.prestart([plain], None, Confinement(sandbox="off"))
    try:
        assert spares._spares.armed and spares.spare_pids(), "this process has armed spares"
        result, _ = _run(tmp_path, "off")
        assert result["matches"] == 2 and not _left_behind(tmp_path)
    finally:
        spares.close_spares()


def test_the_check_for_processes_left_behind_finds_one(tmp_path):
    """The control for `_left_behind`: a tagged forker's child, left sleeping, is found."""
    forker = subprocess.Popen([sys.executable, str(FORKER), "1", _tag(tmp_path), "--", "sleep", "30"],
                              stderr=subprocess.PIPE, start_new_session=True)
    try:
        assert forker.stderr is not None and b"forked 1 of 1" in forker.stderr.readline()
        forker.wait(timeout=60)  # the forker itself gone (its command is not a path), its child not
        assert len(_left_behind(tmp_path)) == 1 and not _left_behind(tmp_path / "another")
    finally:
        os.killpg(forker.pid, signal.SIGKILL)
        forker.wait()
