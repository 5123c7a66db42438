"""Cases a stranger met on the ordinary path, each beside a control that shows the check
can fail: the ratings of an interrupted run given before the finished one."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest

from naparena.arena.records.rundir import MATCHES, STANDINGS
from naparena.arena.session import Session
from naparena.people.play import Stop
from naparena.people.terminal import TerminalFront
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


# --- play's flags: a slip is told by the flag typed, not by a file's key ------------------------

@pytest.mark.parametrize(("flags", "flag", "said"), [
    (("--bots", "heuristc,random"), "--bots", "unknown bot 'heuristc' (did you mean 'heuristic'?)"),
    (("--variant", "clasic"), "--variant", "unknown variant 'clasic' (did you mean 'classic'?)"),
    (("--bots", ",".join(["random"] * 7)), "--bots", "you and 7 bots are 8 players"),
    (("--variant", "floater", "--bots", "random"), "--bots", "you and 1 bot are 2 players, and in floater"),
])
def test_play_names_the_flag_a_person_typed_wrong(tmp_path, monkeypatch, flags, flag, said):
    monkeypatch.chdir(tmp_path)
    result = invoke("play", *flags)
    message = " ".join(result.output.split())
    assert result.exit_code == 2 and message.startswith(f"error: {flag}: "), message
    assert said in message, message
    # No key of a file the person never wrote, nor advice for one.
    assert not any(key in message for key in ("bots[", "variants[", "tournament.", "base =")), message
    assert not (tmp_path / "logs").exists()


def test_a_tournament_file_with_the_same_slip_is_still_told_by_its_key(tmp_path, monkeypatch):
    """Control: the file's message names its key, so the flag above is play's own doing."""
    monkeypatch.chdir(tmp_path)
    write_tournament(tmp_path, name="t", bots=("heuristc", "random"), example=False)
    result = invoke("run", "t.toml")
    assert result.exit_code == 2 and "t.toml: bots[1].name: unknown bot 'heuristc'" in " ".join(result.output.split())


# --- the terminal: what is said after the table starts on a line of its own ---------------------

def test_a_prompt_left_unanswered_is_ended_before_the_run_says_more():
    """Ctrl-C or the end of input at a prompt left the cursor after it, and "stopped after …"
    (or the standings' title) was printed there, its wrapping off by the prompt's width."""
    screen = io.StringIO()
    front = TerminalFront(io.StringIO(""), screen)  # the input ends at the first prompt
    with pytest.raises(Stop):
        front._go_on()
    front.end_line()
    front.end_line()  # once
    assert screen.getvalue() == "press Enter to go on \n"
    # Control: a prompt answered ended its own line (the person's Enter): nothing is added.
    screen = io.StringIO()
    front = TerminalFront(io.StringIO("\n"), screen)
    front._go_on()
    front.end_line()
    assert screen.getvalue() == "press Enter to go on "
