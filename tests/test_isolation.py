"""Isolation: the same configuration and seed give byte-identical match logs and standings
inline and isolated; an isolated bot finds no trace of the deal in its process, where the
same bot inline finds the engine; seat processes start confined, and their stderr reaches
run.log tagged with the seat."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from naparena.arena.records.rundir import MATCHES, STANDINGS
from naparena.arena.session import Session
from naparena.arena.setup.reader import parse_tournament
from naparena.cli import app
from naparena.game.rules import VARIANTS

HERE = Path(__file__).resolve().parent
BOTS_DIR = HERE / "bots_seat"
ROGUE = HERE / "seat_programs" / "rogue.py"
PIMC = {"samples": 6, "bid_samples": 6, "max_nodes": 3000, "time_budget": 1000.0}  # nodes bind, not time


def play(config: dict, run_dir: Path, isolation: str | None = None, workers: int = 2) -> dict:
    t = parse_tournament(config, run_dir.parent / "tournament.toml")
    return Session.open(t, run_dir, isolation=isolation, workers=workers).play()


def canonical(run_dir: Path) -> dict[str, bytes]:
    files = {f"{MATCHES}/{p.name}": p.read_bytes() for p in sorted((run_dir / MATCHES).glob("*.json"))}
    return {**files, STANDINGS: (run_dir / STANDINGS).read_bytes()}


@pytest.mark.slow
def test_reference_bots_play_byte_for_byte_alike_inline_and_isolated(tmp_path):
    """random, heuristic and pimc (a node budget, so no clock decides) in every named
    variant: logs and standings identical, and isolated really was isolated. Three at a
    table of three: the 6 seatings of the design are 6 matches a variant, each starting a
    seat process per seat (cautious and bold are heuristic with other thresholds)."""
    config = {"tournament": {"name": "same", "seed": 31, "hands": 3, "table": 3, "duplicate": False,
                             "workers": 2, "timeout": 60.0},
              "bots": [{"name": "random"}, {"name": "heuristic"}, {"name": "pimc", "params": PIMC}],
              "variants": [{"name": v} for v in VARIANTS]}
    inline = play(config, tmp_path / "inline", "inline")
    isolated = play(config, tmp_path / "isolated", "process")
    assert inline == isolated
    a, b = canonical(tmp_path / "inline"), canonical(tmp_path / "isolated")
    assert len(a) == 6 * len(VARIANTS) + 1 and a == b
    manifest = json.loads((tmp_path / "isolated" / "manifest.json").read_text())
    assert {bot["isolation"] for bot in manifest["bots"].values()} == {"process"}
    assert sum(s["decisions"] for f in a if f != STANDINGS for s in json.loads(a[f])["summary"]["seats"]) > 0


def test_per_bot_isolation_mixes_with_inline_bots_to_the_same_bytes(tmp_path):
    bots = [{"name": "random"}, {"name": "heuristic", "isolation": "process"}, {"name": "bold"}]
    config = {"tournament": {"name": "mixed", "seed": 4, "hands": 30, "table": 3, "workers": 2},
              "bots": bots, "variants": [{"name": "classic"}, {"name": "floater"}]}
    play(config, tmp_path / "mixed")
    config["bots"][1].pop("isolation")
    play(config, tmp_path / "inline")
    assert canonical(tmp_path / "mixed") == canonical(tmp_path / "inline")
    manifest = json.loads((tmp_path / "mixed" / "manifest.json").read_text())
    assert manifest["bots"]["heuristic"]["isolation"] == "process"
    assert manifest["bots"]["random"]["isolation"] == "inline"


def _prying(tmp_path: Path, isolation: str) -> tuple[list[dict], dict]:
    out = tmp_path / f"notes-{isolation}"
    out.mkdir()
    config = {"tournament": {"name": "pry", "seed": 9, "hands": 3, "table": 4, "duplicate": False,
                             "workers": 2, "timeout": 60.0, "bots_dir": str(BOTS_DIR)},
              "bots": [{"name": "heuristic"}, {"name": "prying", "params": {"out": str(out)},
                                                "isolation": isolation},
                       {"name": "random"}, {"name": "bold"}],
              "variants": [{"name": "classic"}],
              # Unsandboxed: the bot reports through a folder a sandboxed seat cannot see.
              "seats": {"sandbox": "off"}}
    play(config, tmp_path / isolation)
    notes = [json.loads(line) for f in sorted(out.glob("*.jsonl")) for line in f.read_text().splitlines()]
    log = json.loads(next((tmp_path / isolation / MATCHES).glob("*.json")).read_bytes())
    return notes, log


def _other_hands_found(notes: list[dict], log: dict) -> int:
    found = 0
    for note in notes:
        deal = log["hands"][note["hand"]]["deal"]
        others = {tuple(sorted(cards)) for seat, cards in enumerate(deal) if seat != note["seat"] and cards}
        found += len(others & {tuple(c) for c in note["cards"]})
    return found


def test_an_isolated_bot_finds_no_engine_and_no_other_hand(tmp_path):
    notes, log = _prying(tmp_path, "process")
    assert notes, "the bot was asked and searched"
    for note in notes:
        assert note["engine"] == 0 and note["frames"] == [] and note["holders"] == []
        assert note["modules"] == [], "no arena code is even loaded in a seat process"
    assert _other_hands_found(notes, log) == 0


def test_the_same_search_inline_finds_the_engine_and_the_other_hands(tmp_path):
    """The search is not blind: in the match's process it finds what isolation hides."""
    notes, log = _prying(tmp_path, "inline")
    assert notes and all(note["engine"] > 0 and note["frames"] for note in notes)
    assert _other_hands_found(notes, log) > 0


def test_seat_processes_start_confined_and_log_their_stderr_tagged(tmp_path, monkeypatch):
    """An empty working folder, a scrubbed environment, the file's rlimits (no core files),
    the sandbox prefix in front of the command; the seat's stderr in run.log with its tag."""
    monkeypatch.setenv("NAPARENA_SECRET_FOR_TEST", "leak")
    (tmp_path / "t.toml").write_text(
        '[tournament]\nname = "confined"\nhands = 2\ntable = 2\nworkers = 2\nlog_dir = "logs"\n'
        '[seats]\nmemory_mb = 1024\ncpu_seconds = 300\nopen_files = 32\n'
        'sandbox = ["env", "SANDBOXED=yes"]\n'
        f'[[bots]]\nname = "rogue"\ncommand = [{json.dumps(sys.executable)}, {json.dumps(str(ROGUE))}]\n'
        'params = { mode = "probe" }\n[[bots]]\nname = "random"\n[[variants]]\nname = "classic"\n')
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["run", "t.toml"])
    assert result.exit_code == 0, result.output
    run_dir = next((tmp_path / "logs").iterdir())
    lines = [line for line in (run_dir / "run.log").read_text().splitlines() if "(rogue) stderr: {" in line]
    assert len(lines) == 2 and all(" seat 0 (rogue) stderr: " in line or " seat 1 (rogue) stderr: " in line
                                   for line in lines)
    probe = json.loads(lines[0].split(" stderr: ", 1)[1])
    assert probe["files"] == [] and Path(probe["cwd"]).name.startswith("naparena-seat-")
    assert "NAPARENA_SECRET_FOR_TEST" not in probe["env"] and "SANDBOXED" in probe["env"]
    assert probe["limits"] == {"RLIMIT_AS": 1024 << 20, "RLIMIT_CPU": 300, "RLIMIT_NOFILE": 32, "RLIMIT_CORE": 0}
    assert not Path(probe["cwd"]).exists(), "the working folder is removed with the process"


def test_an_isolated_bot_printing_to_stdout_breaks_nothing(tmp_path, monkeypatch):
    """print() and writes to fd 1 land in run.log, tagged; the protocol never sees them."""
    (tmp_path / "t.toml").write_text(
        f'[tournament]\nname = "chat"\nhands = 3\ntable = 2\nworkers = 2\ntimeout = 30.0\nlog_dir = "logs"\n'
        f'bots_dir = {json.dumps(str(BOTS_DIR))}\nisolation = "process"\n'
        '[[bots]]\nname = "chatty"\n[[bots]]\nname = "random"\n[[variants]]\nname = "classic"\n')
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["run", "t.toml", "--json"])
    assert result.exit_code == 0, result.output
    rows = {r["bot"]: r for r in json.loads(result.output[result.output.index("{"):])["variants"]["classic"]["bots"]}
    assert rows["chatty"]["faults"] == {} and rows["chatty"]["crashes"] == 0
    log = (next((tmp_path / "logs").iterdir()) / "run.log").read_text()
    assert "(chatty) stderr: chatty thinks about bid" in log
    assert "(chatty) stderr: chatty writes to fd 1" in log


def test_a_served_bot_ends_quickly_and_its_atexit_hooks_still_run(tmp_path, monkeypatch):
    """A served seat skips the interpreter's teardown at shutdown (`serve.exit_now`), but
    what a bot registered with atexit runs, and its output reaches run.log."""
    (tmp_path / "t.toml").write_text(
        f'[tournament]\nname = "bye"\nhands = 3\ntable = 2\nworkers = 2\ntimeout = 30.0\nlog_dir = "logs"\n'
        f'bots_dir = {json.dumps(str(BOTS_DIR))}\nisolation = "process"\n'
        '[[bots]]\nname = "farewell"\n[[bots]]\nname = "random"\n[[variants]]\nname = "classic"\n')
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["run", "t.toml"])
    assert result.exit_code == 0, result.output
    log = (next((tmp_path / "logs").iterdir()) / "run.log").read_text()
    said = [line for line in log.splitlines() if "(farewell) stderr: farewell after" in line]
    assert len(said) == 2 and all(line.endswith("farewell after 3 hands") for line in said), said


def _isolated_job(index: int, seed: int):
    from naparena.arena.match.job import Job, seat_record
    from naparena.game.rules import make_rules
    seats = tuple(seat_record(f"r{i}", "random", {}, seed + i, isolation="process") for i in range(3))
    return Job(index=index, seed=seed, variant="classic", rules=make_rules("classic"), seats=seats, hands=5)


def test_the_next_matchs_seats_are_started_while_one_plays_and_serve_one_match_each(monkeypatch):
    """After a match, fresh greeted processes wait for the next; it takes them (no process
    started on its critical path), each serves that match alone and is closed with it,
    and the log is the one a match starting its own processes writes."""
    import os

    from naparena.arena.match import seats
    from naparena.arena.match.play import play_job
    from naparena.arena.match.spares import _spares, close_spares
    from naparena.bots.plugins import load_registry

    registry = load_registry(None)
    taken: list[int] = []
    start = seats.start_seats

    def start_and_note(*args, **kwargs):
        bots = start(*args, **kwargs)
        taken.extend(b.channel.proc.pid for b in bots.values())
        return bots

    monkeypatch.setattr("naparena.arena.match.play.start_seats", start_and_note)
    try:
        first = bytes(play_job(_isolated_job(0, 7), registry, prestart=True))
        spares = [c.proc for waiting in _spares.ready.values() for c in waiting]
        assert len(spares) == 3 and all(p.poll() is None for p in spares), "three live spares wait"
        assert not {p.pid for p in spares} & set(taken), "none of them played the first match"
        second = bytes(play_job(_isolated_job(1, 11), registry, prestart=True))
        assert sorted(taken[3:6]) == sorted(p.pid for p in spares), "the second match took the spares"
        assert all(p.poll() is not None for p in spares), "and closed them with it"
        left = [c for waiting in _spares.ready.values() for c in waiting]
        assert len(left) == 3 and not {c.proc.pid for c in left} & set(taken)
    finally:
        close_spares()
    assert not _spares.ready
    assert all(c.proc.poll() is not None and not os.path.exists(c.home) for c in left), "closed at the end"
    assert first == bytes(play_job(_isolated_job(0, 7), registry))
    assert second == bytes(play_job(_isolated_job(1, 11), registry))
    assert not _spares.ready, "without prestart no spare is started"
