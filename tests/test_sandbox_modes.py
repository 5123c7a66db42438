"""The sandbox mode changes where a seat runs, never what it plays: a duplicate run with an
isolated Python bot and an external program is the same bytes with sandbox "required" and
"off". On Dask, a worker that cannot sandbox refuses `required` with one clear error."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest
import tomli_w

from naparena.arena.match import sandbox
from naparena.arena.records.logs import FORMAT
from naparena.arena.records.rundir import MATCHES, STANDINGS, Manifest
from naparena.arena.session import Session, recorded_sandbox
from naparena.arena.setup.reader import load_tournament
from naparena.arena.setup.settings import Sandbox
from naparena.errors import RunError

PLAIN = Path(__file__).parent / "seat_programs" / "plain.py"
NO_BWRAP = sandbox.unavailable()
needs_dask = pytest.mark.skipif(importlib.util.find_spec("distributed") is None,
                                reason="the dask extra is not installed")


def write_tournament(folder: Path, mode: str, workers: int = 2, external: bool = True) -> Path:
    """Well-behaved seats only: an isolated Python bot, an external program (unless not
    `external`: this machine shakes its hand before play), an inline bot."""
    config = {
        "tournament": {"name": "modes", "seed": 11, "seeds": 1, "hands": 3, "table": 4, "duplicate": True,
                       "workers": workers, "timeout": 30.0},
        "seats": {"sandbox": mode},
        "bots": [{"name": "random", "isolation": "process"}, {"name": "heuristic"}],
        "variants": [{"name": "classic"}]}
    if external:
        config["bots"].insert(1, {"name": "plain", "command": [sys.executable, str(PLAIN)]})
    folder.mkdir(parents=True)
    (folder / "t.toml").write_text(tomli_w.dumps(config))
    return folder / "t.toml"


def results(run: Path) -> dict[str, bytes]:
    files = sorted((run / MATCHES).glob("*.json")) + [run / STANDINGS]
    return {path.name: path.read_bytes() for path in files}


@pytest.mark.skipif(NO_BWRAP is not None, reason=f"no seat sandbox here: {NO_BWRAP}")
def test_a_run_is_the_same_bytes_sandboxed_or_not(tmp_path):
    """README table, "bwrap and off" line."""
    played = {}
    for mode in ("required", "off"):
        run = tmp_path / mode / "run"
        Session.open(write_tournament(tmp_path / mode, mode), run, workers=2).play()
        played[mode] = results(run)
        recorded = json.loads((run / "manifest.json").read_bytes())["tournament"]["seats"]["sandbox"]
        assert recorded == ("bwrap" if mode == "required" else "off")
    assert len(played["off"]) > 2, "several matches played"
    assert played["required"] == played["off"]


@needs_dask
def test_required_on_a_dask_worker_without_bubblewrap_is_one_clear_error(tmp_path, monkeypatch):
    """This process believes it can sandbox; the local cluster's worker, started with a PATH
    that holds no bwrap, finds it cannot, and says so instead of playing unguarded."""
    monkeypatch.setattr(sandbox, "unavailable", lambda: None)
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    file = write_tournament(tmp_path / "dask", "required", workers=1, external=False)
    with pytest.raises(RunError) as caught:
        Session.open(file, tmp_path / "run", scheduler="local:1").play()
    message = str(caught.value)
    assert "this worker cannot sandbox seat processes: bwrap (bubblewrap) is not on PATH" in message
    assert sandbox.INSTALL_HINT in message
    assert not list((tmp_path / "run" / MATCHES).glob("*.json")), "no match played unguarded"


@pytest.mark.parametrize("mode", ["auto", "off"] + (["required"] if NO_BWRAP is None else []))
def test_the_mode_travels_parsed_then_resolved(tmp_path, mode):
    """Read once as a `Sandbox`, resolved once by the session: a job's seats compare
    BWRAP or OFF, never a word still to resolve (and never a bare str)."""
    path = write_tournament(tmp_path / "t", mode, external=False)
    assert load_tournament(path).seats.sandbox is Sandbox(mode)
    session = Session.open(path, tmp_path / "run")
    used = session.job(session.specs[0]).confinement.sandbox
    assert used is (Sandbox.OFF if mode == "off" or NO_BWRAP is not None else Sandbox.BWRAP)


def recorded(tournament: dict) -> Manifest:
    """A manifest as the run owner reads one back, recording `tournament`."""
    return Manifest(format=FORMAT, naparena="0", python="3", config_hash="x", seed=1, matches=1, hands=1,
                    tournament=tournament, bots={}, seating={}, fields={})


def test_a_manifests_mode_is_parsed_where_it_is_read():
    assert recorded_sandbox(recorded({"seats": {"sandbox": "bwrap"}})) is Sandbox.BWRAP
    assert recorded_sandbox(recorded({"seats": {"sandbox": ["env"]}})) is None
    with pytest.raises(RunError, match="manifest: tournament.seats.sandbox must be"):
        recorded_sandbox(recorded({"seats": {"sandbox": "bwarp"}}))
