"""Slips a user makes, each told plainly: flags that contradict each other, a folder where
a file is wanted, an unknown bot, bad tournament files, runs of different designs compared,
a run with nothing played rated; and the words shown beside the numbers fit the numbers."""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import tomli_w

from naparena.arena.records.logs import FORMAT
from naparena.arena.setup.reader import load_tournament, parse_tournament
from naparena.errors import ConfigError
from tests.helpers import REPO, child_env, flat, invoke, prepared_run, run_dir_in

README = (REPO / "README.md").read_text()
ARCHITECTURE = (REPO / "docs" / "ARCHITECTURE.md").read_text()


def clean_error(result, *phrases: str) -> str:
    """Exit 2, one message on stderr with every phrase, no traceback; the message."""
    assert result.exit_code == 2, result.output
    assert isinstance(result.exception, SystemExit), repr(result.exception)
    message = flat(result.stderr)
    assert message.startswith("error:") and "Traceback" not in result.output, message
    for phrase in phrases:
        assert phrase in message, (phrase, message)
    return message


def league_file(folder: Path, name: str = "lg", **settings: Any) -> Path:
    """A small league of random and heuristic bots, b0 to b4, at tables of three."""
    folder.mkdir(parents=True, exist_ok=True)
    data = {"tournament": {"name": name, "seed": 11, "hands": 2, "table": 3, "format": "league", "rounds": 2,
                           "timeout": 5.0, **settings},
            "bots": [{"name": "heuristic" if i % 2 else "random", "alias": f"b{i}"} for i in range(5)],
            "variants": [{"name": "classic"}]}
    path = folder / f"{name}.toml"
    path.write_text(tomli_w.dumps(data))
    return path


def played(file: Path) -> Path:
    result = invoke("run", file, "--workers", 1, "--log-dir", file.parent / "logs")
    assert result.exit_code == 0, result.output
    return run_dir_in(file.parent / "logs")


@pytest.fixture(scope="module")
def league_run(tmp_path_factory) -> Path:
    return played(league_file(tmp_path_factory.mktemp("slips") / "a"))


# --- check ----------------------------------------------------------------------------

def test_check_refuses_a_command_and_a_tournament_together(tmp_path):
    file = league_file(tmp_path)
    result = invoke("check", "b0", "--tournament", file, "--command", "python3 mybot.py")
    clean_error(result, "--command and --tournament both say how to start the bot")


@pytest.mark.parametrize("command", ["", "   "])
def test_check_refuses_an_empty_command(command):
    result = invoke("check", "--command", command)
    message = clean_error(result, "--command is empty")
    assert "bwrap" not in message and "usage" not in message.lower()


def test_check_refuses_a_command_it_cannot_split():
    clean_error(invoke("check", "--command", "python3 'mybot.py"), "cannot split it into words")


# --- replay, serve --------------------------------------------------------------------

def test_replay_of_a_run_folder_says_to_name_a_match_log(league_run):
    clean_error(invoke("replay", league_run), str(league_run.name), "a folder, not a match log",
                "matches/NNNNNN.json")


def test_serve_names_an_unknown_bot_before_waiting_for_hello(tmp_path):
    done = subprocess.run([sys.executable, "-m", "naparena", "serve", "nosuchbot"], input=b"", cwd=tmp_path,
                          capture_output=True, timeout=120, env=child_env())
    assert done.returncode == 2
    message = flat(done.stderr.decode())
    assert message.startswith("error:") and "nosuchbot" in message and "hello" not in message, message
    refusal = json.loads(done.stdout)  # the protocol's peer is told too, on its own channel
    assert refusal["type"] == "error" and "nosuchbot" in refusal["message"]


# --- bad tournament files ---------------------------------------------------------------

def test_a_key_with_letters_beyond_ascii_is_named_as_written(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("t.toml").write_text(tomli_w.dumps({"tournament": {"name": "t", "tablé": 3}, "bots": [{"name": "random"}],
                                             "variants": [{"name": "classic"}]}))
    clean_error(invoke("run", "t.toml"), "t.toml: ", 'tournament."tablé": unknown key')


@pytest.mark.parametrize("where, problem", [("/proc/naparena-logs", "No such file or directory"),
                                            ("notes.txt", "notes.txt is a file, not a folder")])
def test_a_log_dir_that_cannot_hold_runs_names_the_file_and_key(tmp_path, monkeypatch, where, problem):
    if where.startswith("/proc") and not Path("/proc/self").exists():
        pytest.skip("needs Linux's /proc")
    monkeypatch.chdir(tmp_path)
    Path("notes.txt").write_text("not a folder")
    league_file(tmp_path, log_dir=where)
    clean_error(invoke("run", "lg.toml"), "lg.toml: tournament.log_dir: ", problem)
    # Given on the command line, the flag's folder is the one named, not the file's key.
    message = clean_error(invoke("run", "lg.toml", "--log-dir", "notes.txt"), "notes.txt is a file, not a folder")
    assert "tournament.log_dir" not in message
    assert Path("notes.txt").read_text() == "not a folder"


def test_a_gauntlet_too_large_without_rounds_is_told_to_set_rounds():
    data = {"tournament": {"name": "g", "format": "gauntlet", "challengers": ["b0"], "table": 4, "hands": 2},
            "bots": [{"name": "random", "alias": f"b{i}"} for i in range(1000)], "variants": [{"name": "classic"}]}
    with pytest.raises(ConfigError) as caught:
        parse_tournament(data, "g.toml")
    assert caught.value.key == "tournament.rounds"
    assert "set rounds = N" in caught.value.message and "a league or gauntlet" not in caught.value.message


# --- compare and ratings ----------------------------------------------------------------

def test_compare_says_when_the_two_designs_differ(league_run, tmp_path):
    other_seed = played(league_file(tmp_path / "b", seed=12))
    same = invoke("compare", league_run, other_seed, "--json")
    assert same.exit_code == 0, same.output
    assert json.loads(same.stdout)["design_differences"] == [] and "designs differ" not in flat(same.stderr)
    other = played(league_file(tmp_path / "c", table=4, duplicate=False))
    differ = invoke("compare", league_run, other, "--json")
    assert differ.exit_code == 0, differ.output
    said = json.loads(differ.stdout)["design_differences"]
    assert "'table' is 3 in A, 4 in B" in said and "'duplicate' is True in A, False in B" in said
    assert "the two runs' designs differ" in flat(differ.stderr)


def test_compare_says_when_b_replays_matches_of_a(league_run, tmp_path):
    """A renamed copy of a run, or a run sharing its seeds, was compared as if it were a
    second sample ("no real difference", a Welch interval) with no word; the shared
    matches are now counted by what was played, and said."""
    copy = tmp_path / "renamed"
    shutil.copytree(league_run, copy)
    twice = invoke("compare", league_run, copy, "--json")
    assert twice.exit_code == 0, twice.output
    kept = len(list((league_run / "matches").iterdir()))
    assert json.loads(twice.stdout)["shared_matches"] == kept > 0
    assert f"warning: {kept} of B's matches were played in A too" in flat(twice.stderr)
    half = played(league_file(tmp_path / "half", name="other", seeds=2))  # seed stream 0 is A's
    shared = json.loads(invoke("compare", league_run, half, "--json").stdout)["shared_matches"]
    assert 0 < shared < len(list((half / "matches").iterdir())), shared
    # Control: other seeds share nothing, and nothing is said.
    other = invoke("compare", league_run, played(league_file(tmp_path / "b", seed=12)), "--json")
    assert json.loads(other.stdout)["shared_matches"] == 0 and "played in A too" not in flat(other.stderr)


def test_a_rating_list_of_aliases_of_one_bot_says_why_it_is_empty(tmp_path):
    """Aliases of one bot are one bot to `ratings`: a league of six aliases of random was
    printed as an empty table, with no word. The control is any league of two bots or more."""
    file = league_file(tmp_path, name="same")
    data = tomllib.loads(file.read_text())
    data["bots"] = [{"name": "random", "alias": f"r{i}"} for i in range(6)]
    file.write_text(tomli_w.dumps(data))
    said = flat(invoke("ratings", played(file)).stdout)
    assert said.startswith("classic, tables of 3 (1 run): one bot only (aliases of a bot with the same name, "
                           "version and settings are one bot here): a rating needs at least two different bots"), said
    assert "┏" not in said  # no empty table under it


def test_ratings_under_the_places_model_say_what_places_are(league_run, tmp_path):
    margins = invoke("ratings", league_run)
    places = invoke("ratings", league_run, "--model", "places", "--html", tmp_path / "p.html")
    assert margins.exit_code == 0 and places.exit_code == 0, places.output
    assert "least squares on chip margins" in flat(margins.stdout)
    for text in (flat(places.stdout), (tmp_path / "p.html").read_text()):
        assert "Bradley" in text and "log-strength" in text
        assert "chip margins" not in text and "chips per 100 hands" not in text


def test_ratings_of_a_run_with_nothing_played_is_an_error(tmp_path):
    session = prepared_run(load_tournament(league_file(tmp_path)), tmp_path / "run")
    assert session.run_dir.started() and session.run_dir.match_files() == []  # its manifest alone
    clean_error(invoke("ratings", tmp_path / "run"), "no match played yet", "nothing to rate")


# --- the words beside the numbers -------------------------------------------------------

def test_the_docs_name_the_log_format_in_use():
    said = re.findall(r"`format` is (\d+)", README) + re.findall(r'\{"format": (\d+)', ARCHITECTURE)
    assert said and all(int(n) == FORMAT for n in said), said


def _league_bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("league_bench", REPO / "benchmarks" / "league_bench.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    return bench


def test_league_bench_null_tests_something_by_default(capsys):
    bench = _league_bench()
    defaults = bench.parser().parse_args(["null"])
    assert defaults.bot == "random" and not defaults.no_duplicate
    small = ["null", "--reps", "1", "--aliases", "6", "--table", "3", "--rounds", "2", "--hands", "2"]
    bench.null(bench.parser().parse_args(small))
    assert "no test" not in capsys.readouterr().out
    # The degenerate case (a bot that plays each deal alike from every seat, under duplicate) is named.
    bench.null(bench.parser().parse_args([*small, "--bot", "heuristic"]))
    assert "no test: every board of heuristic under duplicate ties" in capsys.readouterr().out


def test_league_bench_null_reports_alike_for_any_worker_count(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """The coverage studies spread their repetitions over processes: the same seeds, so the
    same report whatever the count (but its time)."""
    bench = _league_bench()
    monkeypatch.setitem(sys.modules, "league_bench", bench)  # the pool pickles its functions by name
    small = ["null", "--reps", "3", "--aliases", "6", "--table", "3", "--rounds", "2", "--hands", "2"]
    reports: list[str] = []
    for workers in ("1", "2"):
        bench.null(bench.parser().parse_args([*small, "--workers", workers]))
        reports.append(re.sub(r" in \d+ s$", "", capsys.readouterr().out, flags=re.M))
    assert "leagues rated" in reports[0] and reports[0] == reports[1]
