"""Warm seats: a seat forked from its bot's server is as isolated as one started cold, and
plays the same bytes.

A bot that keeps notes, at its import and at every match, in every place a process can
keep one (a module global, an environment variable, files in /tmp, its home, /dev/shm,
/ and /dev), says at each match what it found of earlier matches and of its siblings.
Warm or cold, sandboxed, it finds nothing; the controls show that each test can fail:
inline, its module global carries from match to match; unsandboxed, /tmp does; and a
naive fork server (`seat_programs/naive_warm.py`: naparena's server with the per-seat
work taken out) leaks through every folder the wall leaves writable, shows each seat its
siblings and the server, and lets a seat write where the next match reads.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import tomli_w

from naparena.arena.match import warm
from naparena.arena.match.channel import seat_argv
from naparena.arena.match.job import Job, seat_record
from naparena.arena.match.play import play_job
from naparena.arena.match.sandbox import module_files, unavailable
from naparena.arena.records.rundir import MATCHES, STANDINGS
from naparena.arena.session import Session
from naparena.arena.setup.reader import load_tournament
from naparena.arena.setup.settings import Confinement, Sandbox, Timing
from naparena.bots.plugins import load_registry
from naparena.errors import ConfigError
from naparena.game.rules import make_rules
from tests.helpers import drop_in

NO_BWRAP = unavailable()
needs_bwrap = pytest.mark.skipif(NO_BWRAP is not None, reason=f"no seat sandbox here: {NO_BWRAP}")
NAIVE = Path(__file__).parent / "seat_programs" / "naive_warm.py"

NOTER = '''"""Keeps notes at its import and at every match; says what it finds of earlier ones."""
import hashlib
import json
import os
import random
import sys

import naparena
from naparena import Bot

TAG = hashlib.sha1(__file__.encode()).hexdigest()[:12]  # this test's own: tests run side by side
PLACES = {"tmp": "/tmp", "home": os.environ["HOME"], "shm": "/dev/shm", "root": "/", "dev": "/dev"}
NOTES = []
DRAWN = random.random()  # the random state at import
os.environ["NOTER_" + TAG] = "import"
for _folder in PLACES.values():
    try:
        with open(os.path.join(_folder, f"noter-{TAG}-import"), "w") as f:
            f.write("import")
    except OSError:
        pass


def _read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None


def _itself():
    """What a process sees of itself, its home's random name taken out."""
    home = os.environ["HOME"]
    status = dict(line.split(":\t", 1) for line in _read("/proc/self/status").splitlines() if ":\t" in line)
    try:
        os.close(os.open("/dev/null", os.O_WRONLY))
        null = True
    except OSError:
        null = False
    return {"argv": sys.argv, "cmdline": _read("/proc/self/cmdline"),
            "environ": _read("/proc/self/environ").replace(home, "HOME"), "cwd": os.getcwd().replace(home, "HOME"),
            "ids": {k: status[k] for k in ("Uid", "Gid", "Groups", "CapEff", "CapPrm", "CapBnd", "CapAmb",
                                           "NoNewPrivs", "Seccomp", "NSpid", "NSpgid", "NSsid", "PPid")},
            "host": os.uname().nodename, "fds": sorted(os.listdir("/proc/self/fd")), "dev/null": null,
            "umask": os.umask(0o022), "limits": _read("/proc/self/limits")}


class Noter(Bot):
    name = "noter"

    def start_match(self, info):
        match = info["match"]
        found = {"global": list(NOTES), "env": os.environ.get("NOTER_" + TAG)}
        found.update((name, _read(os.path.join(folder, f"noter-{TAG}-note"))) for name, folder in PLACES.items())
        imports = {name: _read(os.path.join(folder, f"noter-{TAG}-import")) == "import"
                   for name, folder in PLACES.items()}
        NOTES.append(match)
        os.environ["NOTER_" + TAG] += f",{match}"
        for folder in PLACES.values():
            try:
                with open(os.path.join(folder, f"noter-{TAG}-note"), "a") as f:
                    f.write(f"{match}.{info['seat']},")
            except OSError:
                pass
        try:  # its own file, shown read-only (under /tmp, as a test's is: bound again, not copied)
            with open(__file__, "a"):
                own_file_writable = True
        except OSError:
            own_file_writable = False
        pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
        report = {"match": match, "seat": info["seat"], "found": found, "imports": imports, "pids": pids,
                  "pid": os.getpid(), "drawn": DRAWN, "now": random.random(), "home": os.getcwd(),
                  "fractions": "fractions" in sys.modules, "itself": _itself(),
                  "own_file_writable": own_file_writable}
        print("NOTER " + json.dumps(report), file=sys.stderr, flush=True)

    def bid(self, view):
        return self.rng.choice(view.legal)

    play = peep = exchange = garnet = garnet_discard = trumps = bid
    floater_peep = peep_exchange = floater_discard = bid


@naparena.hookimpl
def register_bots(register):
    register(Noter)
'''

FOLDERS = ("tmp", "home", "shm", "root", "dev")


@pytest.fixture
def noter(tmp_path: Path) -> Iterator[Path]:
    folder = drop_in(tmp_path / "bots", {"noter": NOTER})
    yield folder
    tag = __import__("hashlib").sha1(str(folder / "noter.py").encode()).hexdigest()[:12]
    for leftover in Path("/tmp").glob(f"noter-{tag}-*"):  # the unsandboxed control's notes
        leftover.unlink()


def play(bots_dir: Path, sandbox: str, start: str, isolation: str = "process", matches: int = 3,
         extra: tuple[str, ...] = (), preload: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    """`matches` matches, one after another in this process as a worker plays them, of two
    noters and two random bots; each noter's reports, in order."""
    registry = load_registry(bots_dir)
    files = tuple(module_files(registry.get("noter").cls)) + extra
    seats = tuple(seat_record(f"n{i}", "noter", {}, 5 + i, isolation=isolation, files=files, preload=preload)
                  for i in range(2)) + tuple(seat_record(f"r{i}", "random", {}, 9 + i) for i in range(2))
    # a long start-up allowance: on a loaded machine a server that forks no seat within it is
    # given up and its seats start cold, which these tests would read as a warm seat's answer
    confinement = Confinement(sandbox=Sandbox(sandbox), start=start, start_timeout=600.0)
    reports: list[dict[str, Any]] = []
    handler = _Reports(reports)
    logging.getLogger("naparena").addHandler(handler)
    logging.getLogger("naparena").setLevel(logging.INFO)
    try:
        for index in range(matches):
            job = Job(index=index, seed=21 + index, variant="classic", rules=make_rules("classic"), seats=seats,
                      hands=2, bots_dir=str(bots_dir), timing=Timing(timeout=30.0), confinement=confinement)
            play_job(job, registry, prestart=index + 1 < matches)
    finally:
        logging.getLogger("naparena").removeHandler(handler)
        warm.close_servers()
    return sorted(reports, key=lambda r: (r["match"], r["seat"]))


class _Reports(logging.Handler):
    def __init__(self, reports: list[dict[str, Any]]):
        super().__init__()
        self.reports = reports

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage()
        if " stderr: NOTER " in text:
            self.reports.append(json.loads(text.split(" stderr: NOTER ", 1)[1]))


def leaks(reports: list[dict[str, Any]]) -> dict[str, list[Any]]:
    """What each report found of an earlier match or a sibling, by place."""
    out: dict[str, list[Any]] = {}
    for r in reports:
        for place, value in r["found"].items():
            if place == "global" and value or place == "env" and value != "import" or \
                    place in FOLDERS and value is not None:
                out.setdefault(place, []).append(value)
    return out


@needs_bwrap
@pytest.mark.parametrize("start", ["warm", "cold"])
def test_a_sandboxed_seat_warm_or_cold_finds_no_note_of_another_match(noter, start):
    reports = play(noter, "bwrap", start)
    assert len(reports) == 6, "two noters reported at each of three matches"
    assert leaks(reports) == {}
    for r in reports:
        # What its import wrote is there, as in any fresh process after that import ...
        assert {k for k, v in r["imports"].items() if v} >= {"tmp", "home", "shm"}
        # ... it sees its own PID namespace alone: PID 1 and itself, PID 2, as bubblewrap's
        assert r["pids"] == [1, 2] and r["pid"] == 2
        # ... and its own file, under /tmp here as a test's is, is the one shown, read-only
        assert r["own_file_writable"] is False
    # Warm, the bot was imported once, by its server: what its import drew is the same in
    # every seat (and carries nothing of a match); at play, each seat draws its own.
    assert len({r["drawn"] for r in reports}) == (1 if start == "warm" else len(reports))
    assert len({r["now"] for r in reports}) == len(reports)


@needs_bwrap
def test_a_sandboxed_warm_seat_sees_itself_as_a_cold_one_would(noter):
    """What a seat can read of its own process (argv, /proc/self/cmdline and environ, ids,
    capabilities, session, PID, descriptors, limits, a writable /dev/null) is the same warm
    and cold: forked seats are started with a cold seat's own command and environment.
    (What still differs is listed in docs/explanation/sandbox.md: PID 1's command line,
    the mount table's order, modules the seat runtime loaded; none of it carries a note.)"""
    seen = {start: [r["itself"] for r in play(noter, "bwrap", start, matches=2)] for start in ("warm", "cold")}
    assert len(seen["cold"]) == 4
    for key in seen["cold"][0]:
        assert [s[key] for s in seen["warm"]] == [s[key] for s in seen["cold"]], key


@needs_bwrap
def test_control_a_naive_fork_server_leaks_through_every_folder(noter, monkeypatch):
    """The same bot, forked by a server that only forks: each seat finds the notes of the
    matches (and the sibling) before it in every place the wall leaves writable (home,
    /tmp, /dev/shm; / and /dev are read-only to the server too), and sees the server and
    its siblings in /proc."""
    monkeypatch.setattr(warm.SeatServer, "program", (str(NAIVE),))
    reports = play(noter, "bwrap", "warm", extra=(str(NAIVE),))
    assert len(reports) == 6
    found = leaks(reports)
    assert {"tmp", "home", "shm"} <= set(found), found
    assert any(len(r["pids"]) > 2 for r in reports), "it sees the server and its siblings"
    # ... and sees itself as no cold seat would: not PID 2 of a namespace of its own.
    assert all(r["itself"]["ids"]["NSpid"] != "2" for r in reports)


def test_control_inline_the_module_global_carries_from_match_to_match(noter, capfd):
    play(noter, "off", "cold", isolation="inline")
    reports = [json.loads(line.split("NOTER ", 1)[1]) for line in capfd.readouterr().err.splitlines()
               if line.startswith("NOTER ")]
    assert len(reports) == 6
    assert "global" in leaks(reports) and "env" in leaks(reports)


@pytest.mark.parametrize("start", ["warm", "cold"])
def test_control_unsandboxed_warm_or_cold_tmp_carries(noter, start):
    """Unsandboxed, a seat shares the machine's /tmp with every process (the sandbox's
    reason to be); its memory and environment are still its own, warm or cold. (Its home
    too, cold; warm, a bot that keeps its import's $HOME keeps the server's.)"""
    found = leaks(play(noter, "off", start))
    assert "tmp" in found and not {"global", "env"} & set(found), found
    assert ("home" in found) == (start == "warm")


def test_a_warm_seat_runs_where_its_own_cold_start_would(noter):
    """Unsandboxed too, each forked seat has a fresh home of its own, with what the bot's
    import wrote there, and its own random state."""
    reports = play(noter, "off", "warm")
    assert len({r["home"] for r in reports}) == len(reports)
    assert all(r["imports"]["home"] for r in reports)
    assert len({r["drawn"] for r in reports}) == 1, "one import, in the server"
    assert len({r["now"] for r in reports}) == len(reports), "reseeded at every fork, as Python does"


@pytest.mark.parametrize("sandbox", ["off"] + (["bwrap"] if NO_BWRAP is None else []))
def test_preloaded_modules_are_in_every_warm_seat_and_cold_ones_import_their_own(noter, sandbox):
    for start in ("warm", "cold"):
        reports = play(noter, sandbox, start, matches=2, preload=("fractions",))
        found = leaks(reports)
        assert len(reports) == 4
        # Unsandboxed, the machine's folders carry notes (the sandbox's reason to be: the
        # control above); memory and environment do not, preloaded or not.
        assert found == {} if sandbox == "bwrap" else not {"global", "env"} & set(found), found
        assert all(r["fractions"] == (start == "warm") for r in reports), start


@pytest.mark.parametrize(("entry", "said"), [
    ({"name": "random", "preload": "numpy"}, 'bots[1].preload: must be an array of module names, e.g. ["numpy"]'),
    ({"name": "random", "preload": ["numpy; import os"]}, "bots[1].preload: must be an array of module names"),
    ({"name": "random", "preload": ["no_such_module_here.sub"]}, "bots[1].preload[0]: no module named "
                                                                  "'no_such_module_here' where naparena runs"),
    ({"name": "plain", "command": ["true"], "preload": ["json"]}, "bots[1].preload: is for a Python bot"),
])
def test_a_bad_preload_is_one_clear_error(tmp_path, entry, said):
    file = tmp_path / "t.toml"
    file.write_text(tomli_w.dumps({"tournament": {"name": "p", "seed": 1, "hands": 2, "table": 2},
                                   "bots": [entry, {"name": "heuristic"}], "variants": [{"name": "classic"}]}))
    with pytest.raises(ConfigError) as caught:
        load_tournament(file)
    assert said in str(caught.value)


def test_a_bad_start_is_one_clear_error_and_a_good_one_is_recorded_when_not_the_default(tmp_path):
    file = tmp_path / "t.toml"
    config = {"tournament": {"name": "p", "seed": 1, "hands": 2, "table": 2}, "seats": {"start": "hot"},
              "bots": [{"name": "random"}, {"name": "heuristic"}], "variants": [{"name": "classic"}]}
    file.write_text(tomli_w.dumps(config))
    with pytest.raises(ConfigError) as caught:
        load_tournament(file)
    assert 'seats.start: must be "warm" or "cold", got "hot"' in str(caught.value)
    for start, recorded in (("cold", {"start": "cold"}), ("warm", {})):
        config["seats"] = {"start": start}
        file.write_text(tomli_w.dumps(config))
        seats = load_tournament(file).seats.as_dict()
        assert {k: v for k, v in seats.items() if k == "start"} == recorded


def test_a_good_preload_travels_to_the_manifest(tmp_path):
    file = tmp_path / "t.toml"
    file.write_text(tomli_w.dumps({"tournament": {"name": "p", "seed": 1, "hands": 2, "table": 2},
                                   "bots": [{"name": "random", "preload": ["json", "os.path"]}, {"name": "heuristic"}],
                                   "variants": [{"name": "classic"}]}))
    assert load_tournament(file).bots[0].as_dict()["preload"] == ["json", "os.path"]


THREADED = '''"""A bot whose import starts a thread of its own: it cannot be forked warm."""
import threading
import time

import naparena
from naparena import Bot

threading.Thread(target=time.sleep, args=(600,), daemon=True).start()


class Threaded(Bot):
    name = "threaded"

    def bid(self, view):
        return view.legal[0]

    play = peep = exchange = garnet = garnet_discard = trumps = bid
    floater_peep = peep_exchange = floater_discard = bid


@naparena.hookimpl
def register_bots(register):
    register(Threaded)
'''


def tournament(folder: Path, sandbox: str, start: str, bots: list[dict[str, Any]]) -> Path:
    config = {"tournament": {"name": "warm", "seed": 5, "seeds": 1, "hands": 4, "table": 4, "duplicate": True,
                             "workers": 2, "timeout": 30.0, "bots_dir": str(folder.parent / "bots"),
                             "isolation": "process"},
              "seats": {"sandbox": sandbox, "start": start}, "bots": bots, "variants": [{"name": "classic"}]}
    folder.mkdir(parents=True)
    (folder / "t.toml").write_text(tomli_w.dumps(config))
    return folder / "t.toml"


def results(run: Path) -> dict[str, bytes]:
    files = sorted((run / MATCHES).glob("*.json")) + [run / STANDINGS]
    return {path.name: path.read_bytes() for path in files}


def test_warm_and_cold_seats_play_the_same_bytes_in_every_sandbox_mode(tmp_path, bots_dir):
    """Reference bots and a drop-in (one that cannot be forked warm among them: its seats
    start cold, said once in run.log), duplicate seatings on two workers; warm on one
    worker too (one server per bot there, two here)."""
    bots_dir(threaded=THREADED)
    bots = [{"name": "random"}, {"name": "heuristic"}, {"name": "threaded"}, {"name": "cautious"}]
    played: dict[tuple[Any, ...], dict[str, bytes]] = {}
    for sandbox in ("off",) + (("required",) if NO_BWRAP is None else ()):
        for start in ("warm", "cold"):
            run = tmp_path / f"{sandbox}-{start}" / "run"
            Session.open(tournament(tmp_path / f"{sandbox}-{start}", sandbox, start, bots), run).play()
            played[sandbox, start] = results(run)
            log = (run / "run.log").read_text()
            said = "seat server (threaded): its seats start cold: _Refused: its import left 1 Python thread(s)"
            assert (said in log) == (start == "warm"), log[-2000:]
    one = tmp_path / "one-worker" / "run"
    Session.open(tournament(tmp_path / "one-worker", "off", "warm", bots), one, workers=1).play()
    played["off", "warm", 1] = results(one)
    assert len(played["off", "warm"]) == 24 + 1, "every seating played"
    first = next(iter(played.values()))
    assert all(p == first for p in played.values())


def test_a_server_that_cannot_start_leaves_its_seats_cold(noter, monkeypatch, caplog):
    """A server that dies at its start: its seats start cold, and play."""
    monkeypatch.setattr(warm.SeatServer, "program", ("-c", "raise SystemExit(3)"))
    caplog.set_level(logging.INFO, "naparena")
    reports = play(noter, "off", "warm", matches=2)
    assert len(reports) == 4, "every noter played, cold"
    assert len({r["drawn"] for r in reports}) == 4, "each seat imported the bot itself"
    assert "seat server (noter): its seats start cold" in caplog.text


def test_the_servers_of_a_run_played_here_end_with_it(tmp_path, bots_dir, monkeypatch):
    bots_dir()
    monkeypatch.setenv("NAPARENA_IN_PROCESS", "1")
    file = tournament(tmp_path / "t", "off", "warm", [{"name": "random"}, {"name": "heuristic"}])
    Session.open(file, tmp_path / "run", workers=1).play()
    assert not [pid for pid in _children(os.getpid()) if _is_server(pid)]
    # Control: a server that lives is found by the same look-out.
    argv, python = seat_argv(seat_record("r", "random", {}, 1, isolation="process"), None)
    channel, why = warm.spawn(argv, python, {}, Confinement(sandbox=Sandbox("off")))
    try:
        assert channel is not None, why
        assert [pid for pid in _children(os.getpid()) if _is_server(pid)]
    finally:
        if channel is not None:
            channel.abandon()
        warm.close_servers()


def _children(pid: int) -> list[int]:
    out = []
    for tid in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{tid}/children") as f:
            out += [int(p) for p in f.read().split()]
    return out


def _is_server(pid: int) -> bool:
    """A seat server: a served seat's command line, its stdin a socket (a seat's is a pipe)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            served = b"naparena.bots.serve" in f.read()
        return served and os.readlink(f"/proc/{pid}/fd/0").startswith("socket:")
    except OSError:
        return False


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__]))
