"""Cases a stranger met on the ordinary path, each beside a control that shows the check
can fail: the ratings of an interrupted run given before the finished one."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from naparena.arena.records.rundir import MATCHES, STANDINGS
from naparena.arena.session import Session
from tests.helpers import invoke, write_tournament


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """logs/A, a finished run of two seed streams, and logs/cut, A as a Ctrl-C leaves it:
    its standings and its last half of matches not written."""
    root = tmp_path_factory.mktemp("runs")
    file = write_tournament(root / "A", name="N1", seed=7, seeds=2, hands=4)
    Session.open(file, root / "logs" / "A", workers=1).play()
    cut = shutil.copytree(root / "logs" / "A", root / "logs" / "cut")
    (cut / STANDINGS).unlink()
    files = sorted((cut / MATCHES).iterdir())
    for f in files[len(files) // 2:]:
        f.unlink()
    return root


def ratings(*runs: str) -> dict:
    result = invoke("ratings", "--json", *runs)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def boards(listing: dict) -> dict[str, int]:
    [entry] = listing["lists"]
    return {row["bot"]: row["boards"] for row in entry["bots"]}


def test_an_unfinished_run_given_first_leaves_none_of_the_finished_runs_matches_out(runs, monkeypatch):
    """`naparena ratings logs/cut logs/A`: the matches the interrupted run never played are
    booked from A (they were once counted as played in the first run, and lost from both)."""
    monkeypatch.chdir(runs)
    alone = boards(ratings("logs/A"))
    assert boards(ratings("logs/cut", "logs/A")) == alone == boards(ratings("logs/A", "logs/cut"))
    listed = ratings("logs/cut", "logs/A")["runs"]
    kept = len(list((runs / "logs" / "cut" / MATCHES).iterdir()))
    assert listed[0]["matches"] == kept  # the matches it holds, not its schedule's
    assert listed[1]["played_before"] == kept < listed[1]["matches"]
    # Control: the unfinished run alone has fewer boards, so equal counts above are no accident.
    assert all(n < alone[bot] for bot, n in boards(ratings("logs/cut")).items())
