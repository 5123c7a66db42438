"""Strict JSON everywhere: every file of a run directory and every `--json` output parses
as strict JSON (no NaN or Infinity: JavaScript's JSON.parse is the judge where node is
installed) and is valid against its published schema in naparena/schemas/. A number that
cannot exist is `null` with a reason beside it. The run the issue found (a league whose
line-ups each hold one board) is among them."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
from pathlib import Path

import pytest
import tomli_w

from naparena.arena.records.jsontext import NotJson, dumps, loads
from naparena.arena.records.rundir import MANIFEST, MATCHES, STANDINGS, WHERE
from naparena.arena.session import Session
from tests.helpers import errors, invoke, write_tournament

NODE = shutil.which("node")


def one_board_league(folder: Path) -> Path:
    """12 bots (three aliases each of four), 4 rounds of tables of 5, one hand a match: one
    board a line-up's deal set."""
    folder.mkdir(parents=True, exist_ok=True)
    data = {"tournament": {"name": "lg", "seed": 3, "hands": 1, "table": 5, "format": "league", "rounds": 4,
                           "timeout": 5.0},
            "bots": [{"name": n, "alias": f"{n}{i}"} for n in ("random", "heuristic", "bold", "cautious")
                     for i in range(3)],
            "variants": [{"name": "classic"}]}
    path = folder / "lg.toml"
    path.write_text(tomli_w.dumps(data))
    return path


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("strict")
    files = {"round robin": write_tournament(root / "rr", name="rr", seeds=2, hands=4),
             "one-board league": one_board_league(root / "lg")}
    out = {}
    for name, file in files.items():
        run_dir = root / "logs" / file.stem
        Session.open(file, run_dir, workers=1).play()
        out[name] = run_dir
    return out


def strict(text: str | bytes) -> object:
    """Parsed as strict JSON, by node's JSON.parse where node is installed, and by ours."""
    if NODE is not None:
        done = subprocess.run([NODE, "-e", "JSON.parse(require('fs').readFileSync(0, 'utf8'))"],
                              input=text if isinstance(text, bytes) else text.encode(), capture_output=True,
                              timeout=60)
        assert done.returncode == 0, done.stderr.decode()[-500:]
    return loads(text)


@pytest.mark.parametrize("run", ["round robin", "one-board league"])
def test_every_file_of_a_run_is_strict_json_and_valid_against_its_schema(runs, run):
    run_dir = runs[run]
    assert errors("manifest", strict((run_dir / MANIFEST).read_bytes())) == []
    assert errors("standings", strict((run_dir / STANDINGS).read_bytes())) == []
    assert errors("resume", strict((run_dir / WHERE).read_bytes())) == []
    for f in sorted((run_dir / MATCHES).iterdir()):
        assert errors("match", loads(f.read_bytes())) == [], f.name


@pytest.mark.parametrize("run", ["round robin", "one-board league"])
def test_every_json_output_is_strict_json_and_valid_against_its_schema(runs, run):
    run_dir = runs[run]
    for args, schema in ((("report", "--json"), "standings"), (("ratings", "--json"), "ratings"),
                         (("compare", "--json", run_dir), "compare")):
        result = invoke(*args, run_dir)
        assert result.exit_code == 0, result.output
        assert errors(schema, strict(result.stdout)) == [], args
    listed = invoke("bots", "--json", "--bots-dir", run_dir.parent.parent / "rr" / "bots")
    assert errors("bots", strict(listed.stdout)) == []


def test_a_league_too_small_for_intervals_says_why_in_null_and_words(runs):
    # One hand a line-up's deal set: no chips-per-100 interval, null with its reason. The
    # ratings rest on the league's boards (four deal sets a table of five, 40 for 12
    # bots), so they have theirs; a fit with fewer boards than bots is tests/test_no_interval.py's.
    standings = loads((runs["one-board league"] / STANDINGS).read_bytes())
    for row in standings["variants"]["classic"]["bots"]:
        assert row["ci95"] is None and "single board" in row["no_interval"]
    fit = standings["strength"]["classic"]
    assert fit["boards"] == 40 and fit["df"] == 29 and "no_interval" not in fit
    assert all(row["no_interval"] is None and row["ci95"] is not None for row in fit["bots"])
    # ratings pools a bot's aliases (one identity): four bots, each over its three aliases' boards
    listed = json.loads(invoke("ratings", "--json", runs["one-board league"]).stdout)
    assert [row["no_interval"] for row in listed["lists"][0]["bots"]] == [None] * 4


def test_a_rating_with_an_interval_has_no_reason_and_a_finite_error(runs):
    # Control: the round robin's ratings have intervals, so the nulls above are the league's.
    listed = json.loads(invoke("ratings", "--json", runs["round robin"]).stdout)
    for row in listed["lists"][0]["bots"]:
        assert row["no_interval"] is None and math.isfinite(row["se"]) and row["ci95"] is not None


def test_the_one_writer_refuses_what_json_cannot_hold_and_names_where():
    assert loads(dumps({"a": [1.5, None]})) == {"a": [1.5, None]}
    with pytest.raises(NotJson, match=r"^variants\.classic\.bots\[2\]\.se is inf, which JSON cannot hold"):
        dumps({"variants": {"classic": {"bots": [{}, {}, {"se": math.inf}]}}})
    with pytest.raises(NotJson, match=r"^df is nan"):
        dumps({"df": math.nan})


def test_the_checks_above_can_fail():
    """Controls: what the league once wrote is refused by the strict reader and by node,
    and a negative df or se is refused by the schema."""
    written = '{"se": Infinity, "df": -1.0}'
    assert json.loads(written)["se"] == math.inf  # Python's reader takes it: not a judge
    with pytest.raises(ValueError, match="Infinity is not JSON"):
        loads(written)
    if NODE is not None:
        done = subprocess.run([NODE, "-e", "JSON.parse(require('fs').readFileSync(0, 'utf8'))"],
                              input=written.encode(), capture_output=True, timeout=60)
        assert done.returncode != 0
    row = {"rank": 1, "bot": "a", "rating": 1.0, "se": 1.0, "ci95": None, "no_interval": "why", "boards": 1}
    fit = {"model": "margins", "estimator": "plain", "boards": 1, "connected": True, "df": 1.0, "bots": [row]}
    minimal = {"matches": 0, "unit": "board", "variants": {}, "skipped": [], "disqualified": {}}
    assert errors("standings", {**minimal, "strength": {"classic": fit}}) == []
    assert errors("standings", {**minimal, "strength": {"classic": {**fit, "df": -1.0}}})
    assert errors("standings", {**minimal, "strength": {"classic": {**fit, "bots": [{**row, "se": -1.0}]}}})
