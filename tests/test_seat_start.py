"""What a Python seat process costs to start, and what it needs to start at all.

A seat's CPU is mostly its start-up (an interpreter, naparena, the bot), paid four times a
match. The run's registry already knows each bot's class, so a seat imports that module
alone rather than loading every plug-in (importlib.metadata's scan, the plug-in host,
each built-in bot). And a seat's environment is scrubbed, so the folders of PYTHONPATH through which this
interpreter found naparena (or a bot its library) are given to the seat again: without
them, an installation on PYTHONPATH lost every process seat. Each test has a control."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import tomli_w

from naparena.arena.dispatch import Dispatch
from naparena.arena.executors.pool import IN_PROCESS_ENV
from naparena.arena.match import sandbox
from naparena.arena.match.channel import seat_argv
from naparena.arena.match.play import play_job
from naparena.arena.records.rundir import MATCHES, STANDINGS
from naparena.arena.session import Session
from naparena.bots.plugins import importable, load_registry

HEAVY = ("importlib.metadata", "naparena.bots.plugins", "naparena.bots.pimc", "naparena.bots.solver")
#: Modules the seat runtime needs not: the command line's parser, a JSON library beside the
#: standard library's (orjson imports uuid and more: milliseconds of every cold start).
LEAN = ("argparse", "orjson", "uuid")


def loaded_by(call: str) -> dict[str, bool]:
    """Which heavy modules a fresh interpreter has loaded after `call` found the bot."""
    code = (f"import sys, json; from naparena.bots import serve; {call}; "
            f"print(json.dumps({{m: m in sys.modules for m in {HEAVY!r}}}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def test_a_seat_told_its_class_imports_that_bot_alone():
    told = loaded_by("serve.imported('random', 'naparena.bots.reference:RandomBot', 'v')")
    assert not any(told.values()), told


def test_the_seat_runtime_imports_only_what_the_protocol_needs():
    code = ("import sys, json; from naparena.bots import serve, warm; "
            "serve.seat_args(['random', '--entry', 'naparena.bots.reference:RandomBot', '--version', 'v']); "
            f"print(json.dumps({{m: m in sys.modules for m in {LEAN!r}}}))")
    loaded = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                       check=True).stdout)
    assert not any(loaded.values()), loaded
    # Control: the match's side (its logs' writer) does load orjson, and the check sees it.
    control = code.replace("from naparena.bots import serve, warm", "import naparena.arena.records.logs")
    control = control.replace("serve.seat_args(['random', '--entry', 'naparena.bots.reference:RandomBot', "
                              "'--version', 'v']); ", "")
    loaded = json.loads(subprocess.run([sys.executable, "-c", control], capture_output=True, text=True,
                                       check=True).stdout)
    assert loaded["orjson"], loaded
    # Control: finding the bot by name loads every plug-in.
    by_name = loaded_by("serve.registered('random', None)")
    assert all(by_name.values()), by_name


def test_a_seat_told_a_class_that_is_no_bot_is_refused():
    from naparena.bots.serve import imported
    from naparena.errors import PluginError
    with pytest.raises(PluginError, match="not a Bot class"):
        imported("x", "naparena.game.rules:Rules", "")
    with pytest.raises(PluginError, match="cannot import"):
        imported("x", "naparena.bots.nowhere:Bot", "")


def tournament(folder: Path, bots: list[dict], mode: str = "off", start: str = "warm") -> Path:
    config = {"tournament": {"name": "starts", "seed": 5, "seeds": 1, "hands": 2, "table": 2, "workers": 2,
                             "timeout": 30.0, "isolation": "process", "bots_dir": str(folder / "bots")},
              "seats": {"sandbox": mode, "start": start}, "bots": bots, "variants": [{"name": "classic"}]}
    file = folder / "t.toml"
    file.write_text(tomli_w.dumps(config))
    return file


def test_the_run_tells_a_built_in_seat_its_class_and_a_drop_in_seat_nothing(tmp_path):
    (tmp_path / "bots").mkdir()
    (tmp_path / "bots" / "mine.py").write_text(
        "import naparena\nclass Mine(naparena.Bot):\n    name = 'mine'\n"
        "    def bid(self, view):\n        return view.legal[0]\n"
        "    def play(self, view):\n        return view.legal[0]\n"
        "@naparena.hookimpl\ndef register_bots(register):\n    register(Mine)\n")
    session = Session.open(tournament(tmp_path, [{"name": "random"}, {"name": "mine"}]), tmp_path / "run")
    seats = {s.alias: s for s in session.job(session.specs[0]).seats}
    argv, python = seat_argv(seats["random"], None)
    assert python and argv[argv.index("--entry") + 1] == "naparena.bots.reference:RandomBot"
    assert seats["random"].version  # the hello reports what the registry logs
    assert seats["mine"].serves is None  # a drop-in is found by its file, through the registry
    assert "--entry" not in seat_argv(seats["mine"], str(tmp_path / "bots"))[0]
    registry = load_registry(str(tmp_path / "bots"))
    assert importable(registry.get("mine")) is None
    assert importable(registry.get("pimc")) == "naparena.bots.pimc:PimcBot"


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["off", "required"])
def test_a_library_found_through_pythonpath_is_found_by_the_seat_too(tmp_path, monkeypatch, mode):
    if mode == "required" and sandbox.unavailable() is not None:
        pytest.skip(f"no seat sandbox here: {sandbox.unavailable()}")
    library = tmp_path / "lib"
    library.mkdir()
    (library / "napstrategy.py").write_text("def first(legal):\n    return legal[0]\n")
    (tmp_path / "bots").mkdir()
    (tmp_path / "bots" / "libbot.py").write_text(
        "import naparena, napstrategy\nclass LibBot(naparena.Bot):\n    name = 'libbot'\n"
        "    def bid(self, view):\n        return napstrategy.first(view.legal)\n"
        "    def play(self, view):\n        return napstrategy.first(view.legal)\n"
        "@naparena.hookimpl\ndef register_bots(register):\n    register(LibBot)\n")
    monkeypatch.setenv("PYTHONPATH", str(library))
    monkeypatch.syspath_prepend(str(library))
    monkeypatch.setenv(IN_PROCESS_ENV, "1")  # matches played here, so the control's patch holds
    file = tournament(tmp_path, [{"name": "libbot"}, {"name": "random"}], mode)

    def faults(run: Path) -> int:
        """Faults charged to libbot's seat (a seat that cannot import is refused at its handshake)."""
        assert (run / STANDINGS).exists()
        logs = [json.loads(p.read_bytes()) for p in sorted((run / MATCHES).glob("*.json"))]
        return sum(sum(log["summary"]["seats"][i]["faults"].values()) for log in logs
                   for i, bot in enumerate(log["bots"]) if bot["alias"] == "libbot")

    Session.open(file, tmp_path / "run", workers=1).play()
    assert faults(tmp_path / "run") == 0
    # Control: a seat given only naparena's own folder, as before, cannot import the library.
    monkeypatch.setattr(sandbox, "search_path", list)
    Session.open(file, tmp_path / "control", workers=1).play()
    assert faults(tmp_path / "control") > 0


COUNTER = '''import os, sys
import naparena
if "serve" in sys.argv[0]:  # a seat process, started for a match or as a spare
    with open(os.environ.get("COUNT_FILE") or os.path.join(os.path.dirname(__file__), "starts"), "a") as f:
        f.write(f"{os.getpid()}\\n")
class Counted(naparena.Bot):
    name = "counted"
    def bid(self, view):
        return view.legal[0]
    def play(self, view):
        return view.legal[0]
@naparena.hookimpl
def register_bots(register):
    register(Counted)
'''


@pytest.mark.slow
def test_a_worker_starts_no_seats_for_a_match_that_will_not_come(tmp_path, monkeypatch):
    (tmp_path / "bots").mkdir()
    (tmp_path / "bots" / "counted.py").write_text(COUNTER)
    # Cold: each seat process imports the bot, which counts it (warm, only its server does).
    file = tournament(tmp_path, [{"name": "counted"}, {"name": "random"}], start="cold")
    sent: list[tuple[int, bool]] = []
    send = Dispatch._send

    def recording(self, executor, job):
        sent.append((job.index, job.prestart))
        return send(self, executor, job)
    monkeypatch.setattr(Dispatch, "_send", recording)
    session = Session.open(file, tmp_path / "run", workers=1)
    session.play()
    matches = session.matches
    # One worker plays every match in turn: it starts the next match's seats while one
    # plays, except during the last, after which none comes.
    assert [p for _, p in sorted(sent)] == [True] * (matches - 1) + [False]
    starts = (tmp_path / "bots" / "starts").read_text().split()
    assert len(starts) == matches  # one seat process of `counted` a match, none wasted
    # Control: spares started during the last match too (as before) are closed unused.
    (tmp_path / "bots" / "starts").unlink()
    monkeypatch.setattr("naparena.arena.worker.play_job",
                        lambda job, registry, **_: play_job(job, registry, prestart=True))
    Session.open(file, tmp_path / "control", workers=1).play()
    assert len((tmp_path / "bots" / "starts").read_text().split()) == matches + 1
