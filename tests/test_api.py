"""The researchers' Python API (`naparena.api`, exported from the package root): a
tournament built, run with a progress callback and its standings read; a run opened
again as the commands open it; the README's "Run from Python" example, run as written;
and one builder of a `Tournament`, so a run whose manifest records a setting no file may
have is refused, not verified."""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import naparena
from naparena import api
from naparena.arena.records.rundir import MANIFEST, config_hash
from naparena.cli import app
from naparena.errors import ConfigError, RunError
from tests.helpers import errors

ROOT = Path(__file__).resolve().parent.parent

CONFIG = {
    "tournament": {"name": "api", "hands": 6, "table": 3, "seeds": 1},
    "bots": [{"name": "heuristic"}, {"name": "cautious"}, {"name": "random"}],
    "variants": [{"name": "classic"}],
}


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    heard: list[naparena.Progress] = []
    run = naparena.run_tournament(naparena.build_tournament(CONFIG), log_dir=tmp_path_factory.mktemp("logs"),
                                  workers=1, on_progress=heard.append)
    return run, heard


def test_a_tournament_runs_through_the_api_and_tells_its_progress(played):
    run, heard = played
    assert isinstance(run, naparena.Run) and run.complete
    assert heard, "the progress callback was never called"
    assert [p.matches for p in heard] == sorted(p.matches for p in heard)
    last = heard[-1]
    assert (last.matches, last.hands) == (last.total_matches, last.total_hands) == (6, 36)
    standings = run.standings()
    assert standings == json.loads(run.dir.standings.read_bytes())
    assert {row["bot"] for row in standings["variants"]["classic"]["bots"]} == {"heuristic", "cautious", "random"}


def test_a_run_opens_again_as_the_commands_open_it(played):
    run, _ = played
    again = naparena.open_run(run.path)
    assert again.manifest == run.manifest and again.tournament == run.tournament
    assert again.manifest.matches == len(again.schedule()) == len(again.match_files()) == 6
    assert again.audit().problems == []
    shown = CliRunner().invoke(app, ["report", str(run.path), "--json"])
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.stdout[shown.stdout.index("{"):]) == json.loads(json.dumps(again.standings()))


def test_the_api_is_the_package_roots_and_loads_only_when_asked():
    for name in api.__all__:
        assert getattr(naparena, name) is getattr(api, name), name
        assert name in naparena.__all__, name
    code = ("import sys, naparena\nassert 'naparena.arena.session' not in sys.modules\n"
            "naparena.run_tournament\nassert 'naparena.arena.session' in sys.modules\n")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_a_bad_tournament_is_one_clear_error():
    with pytest.raises(ConfigError, match=r"from-python: tournament\.hands: must be from 1"):
        naparena.build_tournament({**CONFIG, "tournament": {"name": "x", "hands": 0}}, "from-python")


def test_a_damaged_manifest_is_refused_where_the_run_is_opened(played, tmp_path):
    run, _ = played
    copy = tmp_path / "run"
    subprocess.run(["cp", "-r", str(run.path), str(copy)], check=True)
    data = json.loads((copy / MANIFEST).read_bytes())
    data["matches"] = "six"
    (copy / MANIFEST).write_text(json.dumps(data))
    with pytest.raises(RunError, match="damaged: 'matches' must be a whole number"):
        naparena.open_run(copy)
    for command in ("report", "view", "verify"):
        done = CliRunner().invoke(app, [command, str(copy)])
        assert done.exit_code == 2 and "'matches' must be a whole number" in done.output, (command, done.output)


def test_verify_builds_the_recorded_tournament_through_the_files_reader(played, tmp_path):
    """A forger who writes a time-out no file may have (and recomputes the hash) is caught:
    the manifest's configuration is read as a file is. Before, verify rebuilt it unchecked."""
    run, _ = played
    copy = tmp_path / "run"
    subprocess.run(["cp", "-r", str(run.path), str(copy)], check=True)
    data = json.loads((copy / MANIFEST).read_bytes())
    data["tournament"]["timeout"] = -1.0
    data["config_hash"] = config_hash(dataclasses.replace(run.tournament, timeout=-1.0))
    (copy / MANIFEST).write_text(json.dumps(data))
    done = CliRunner().invoke(app, ["verify", str(copy)])
    assert done.exit_code != 0, done.output
    assert "tournament.timeout: must be from 0.001 to 3600 seconds" in " ".join(done.output.split())


def test_the_readmes_run_from_python_runs_as_written(tmp_path):
    readme = (ROOT / "README.md").read_text()
    [code] = [body for body in re.findall(r"^```python\n(.*?)^```", readme, re.M | re.S) if "run_tournament" in body]
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    assert "6/6 matches" in lines
    assert sorted(line.split()[0] for line in lines[-3:]) == ["cautious", "heuristic", "random"]
    float(lines[-1].split()[1])


# --- a tournament built from a mapping, interrupted and resumed --------------------------------

DROP_IN = '''
from naparena import Bot, hookimpl


class Steady(Bot):
    name = "steady"

    def bid(self, view):
        return view.legal[0]

    def play(self, view):
        return view.legal[0]


@hookimpl
def register_bots(register):
    register(Steady)
'''


def interrupted(run_dir: Path) -> bytes:
    """The run as a Ctrl-C leaves it: its last match and its standings not written yet."""
    standings = (run_dir / "standings.json").read_bytes()
    (run_dir / "standings.json").unlink()
    sorted((run_dir / "matches").iterdir())[-1].unlink()
    return standings


def test_a_label_for_errors_is_never_recorded_as_a_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    t = naparena.build_tournament(CONFIG, "sweep config")
    assert (t.path, t.label) == ("", "sweep config")
    run = naparena.run_tournament(t, run_dir="run", workers=1)
    where = json.loads((run.dir.path / "resume.json").read_bytes())
    assert where == {"file": None, "bots_dir": None, "folder": str(tmp_path.resolve())}
    assert errors("resume", where) == []
    with pytest.raises(ConfigError, match=r"^sweep config: bots\[1\]\.name: unknown bot 'nosuch'"):
        naparena.run_tournament(naparena.build_tournament({**CONFIG, "bots": [{"name": "nosuch"}, *CONFIG["bots"]]},
                                                          "sweep config"), run_dir="other", workers=1)


def test_a_run_built_from_a_mapping_resumes_through_the_api_from_anywhere(tmp_path, monkeypatch):
    """Its drop-in folder named relatively, as a script in the project folder would; resumed
    from another folder, it ends as the uninterrupted run."""
    (tmp_path / "project" / "mybots").mkdir(parents=True)
    (tmp_path / "project" / "mybots" / "steady.py").write_text(DROP_IN)
    (tmp_path / "elsewhere").mkdir()
    config = {**CONFIG, "tournament": {**CONFIG["tournament"], "bots_dir": "mybots"},
              "bots": [*CONFIG["bots"][:2], {"name": "steady"}]}
    monkeypatch.chdir(tmp_path / "project")
    run = naparena.run_tournament(naparena.build_tournament(config, "sweep"), run_dir="logs/run", workers=1)
    whole = interrupted(run.dir.path)
    monkeypatch.chdir(tmp_path / "elsewhere")
    again = naparena.resume_run("../project/logs/run", workers=1)
    assert again.complete and (again.dir.path / "standings.json").read_bytes() == whole
    # The command line resumes it too (the same session).
    interrupted(run.dir.path)
    result = CliRunner().invoke(app, ["resume", "../project/logs/run", "--workers", "1", "--json"])
    assert result.exit_code == 0, result.output
    assert (run.dir.path / "standings.json").read_bytes() == whole


def test_a_run_that_does_not_say_where_it_came_from_is_refused_clearly(tmp_path, monkeypatch):
    """Control: without the recorded folder (as an older run wrote resume.json) there is
    nothing to resume from, and it says so."""
    monkeypatch.chdir(tmp_path)
    run = naparena.run_tournament(naparena.build_tournament(CONFIG, "sweep"), run_dir="run", workers=1)
    interrupted(run.dir.path)
    (run.dir.path / "resume.json").write_text('{"file": null, "bots_dir": null}\n')
    with pytest.raises(RunError, match="the run does not say which tournament file it came from"):
        naparena.resume_run("run")
