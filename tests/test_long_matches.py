"""Long matches, as a new user meets them (issue 25, item 15): progress that moves within a
match, and Ctrl-C in the middle of one keeps its hands in a checkpoint that `resume`
continues to the very bytes of a run never interrupted. Real processes, real files."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from naparena.arena.match.job import Job, seat_record
from naparena.arena.match.play import play_job
from naparena.arena.records.checkpoint import EVERY_ENV, hands_path, saved_hand, saved_hands
from naparena.arena.records.rundir import CHECKPOINTS, STANDINGS
from naparena.arena.setup.settings import Isolation
from naparena.bots.plugins import load_registry
from naparena.game.rules import make_rules
from tests.helpers import (
    assert_same_files,
    child_env,
    naparena,
    run_dir_in,
    snapshot,
    wait_for,
    write_tournament,
)

HANDS = 30  # per match; the bot holds from hand HOLD_AT on, once a checkpoint is there
HOLD_AT = 10

# Answers from its own rng (so a resume must restore it), notes each match's first hand,
# and, told so, stops answering once a checkpoint at hand HOLD_AT or later exists: the
# run is then certainly in the middle of a match when the test interrupts it.
HOLDOUT = f'''
import glob, json, os, time
import naparena
from naparena import Bot


class Holdout(Bot):
    name = "holdout"

    def start_match(self, info):
        with open(os.environ["HOLDOUT_NOTES"], "a") as f:
            f.write(json.dumps(info["first_hand"]) + "\\n")

    def _answer(self, view):
        hold = os.environ.get("HOLDOUT_HOLD")
        while hold and any(_hand(p) >= {HOLD_AT} for p in glob.glob(hold)):
            time.sleep(0.05)
        return self.rng.choice(view.legal)

    bid = play = _answer


def _hand(path):
    try:
        with open(path) as f:
            return json.load(f)["hand"]
    except (OSError, ValueError):
        return -1


@naparena.hookimpl
def register_bots(register):
    register(Holdout)
'''


@pytest.fixture
def long_run(tmp_path: Path):
    """A tournament of two long matches (random and the holdout, heads up), and its
    uninterrupted run for comparison, checkpointing after every hand."""
    path = write_tournament(tmp_path, name="long", bots=("random", "holdout"), seeds=1, hands=HANDS, table=2,
                            workers=1, timeout=600.0, drop_ins={"holdout": HOLDOUT}, example=False)
    env = {EVERY_ENV: "0", "HOLDOUT_NOTES": str(tmp_path / "notes-whole")}
    whole = naparena("run", path, "--log-dir", tmp_path / "whole", cwd=tmp_path, env=env)
    assert whole.returncode == 0, whole.stderr
    return tmp_path, path, run_dir_in(tmp_path / "whole")


def test_ctrl_c_mid_match_keeps_its_hands_and_resume_ends_in_the_same_bytes(long_run):
    folder, path, whole = long_run
    log = folder / "cut.err"
    env = {EVERY_ENV: "0", "HOLDOUT_NOTES": str(folder / "notes-cut"),
           "HOLDOUT_HOLD": str(folder / "cut" / "*" / CHECKPOINTS / "*.json")}
    with open(log, "w") as stderr:
        run = subprocess.Popen([sys.executable, "-m", "naparena", "run", str(path), "--log-dir", str(folder / "cut")],
                               cwd=folder, env=child_env(env), stdout=subprocess.DEVNULL, stderr=stderr,
                               start_new_session=True,
                               preexec_fn=_ctrl_c_as_a_terminal_sends_it)  # noqa: PLW1509 - as a terminal does
    try:
        # Progress moves inside the first match: its hands are counted before any match is done.
        wait_for(lambda: re.search(r"^matches 0/2, [1-9]\d* hands of 60", log.read_text(), re.M),
                 "progress within the first match", proc=run)
        run_dir = run_dir_in(folder / "cut")
        os.killpg(run.pid, signal.SIGINT)
        run.wait(timeout=120)
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
    said = " ".join(log.read_text().split())
    assert run.returncode == 130, said
    assert f"0 of 2 matches are kept (and {HOLD_AT} hands of 1 unfinished match)" in said, said
    assert (run_dir / CHECKPOINTS).is_dir() and not (run_dir / STANDINGS).exists()

    resumed = naparena("resume", run_dir, cwd=folder, env={EVERY_ENV: "0", "HOLDOUT_NOTES": str(folder / "notes-cut")})
    assert resumed.returncode == 0, resumed.stderr
    # Match 0 started twice: from hand 0, then, resumed, from its checkpoint.
    firsts = [json.loads(line) for line in (folder / "notes-cut").read_text().split()]
    assert firsts[:2] == [0, HOLD_AT] and firsts[2:] == [0], firsts
    assert_same_files(snapshot(run_dir), snapshot(whole))
    assert not (run_dir / CHECKPOINTS).exists()
    assert naparena("verify", run_dir, cwd=folder).returncode == 0


def _ctrl_c_as_a_terminal_sends_it() -> None:
    """A shell starting pytest in the background makes it ignore SIGINT, and children inherit that."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_a_checkpoint_of_another_job_is_ignored(tmp_path: Path, monkeypatch):
    """Stand-ins, another seed or other bots make another match: its checkpoint is not this one's."""
    monkeypatch.setenv(EVERY_ENV, "0")
    registry = load_registry(None)
    job = Job(index=0, seed=5, variant="classic", rules=make_rules("classic"),
              seats=tuple(seat_record(a, "random", {}, i) for i, a in enumerate("ab")),
              hands=12, checkpoint=str(tmp_path / CHECKPOINTS / "000000.json"))
    fresh = bytes(play_job(dataclasses.replace(job, checkpoint=None), registry))
    assert bytes(play_job(job, registry)) == fresh  # checkpointing changes no byte
    assert saved_hands(job.checkpoint) == 12
    other = dataclasses.replace(job, seed=6)
    assert bytes(play_job(other, registry)) != fresh
    # The checkpoint is `other`'s now: this job starts afresh and plays its own match.
    assert bytes(play_job(job, registry)) == fresh


def test_a_checkpoint_gives_back_each_hand_it_vouches_for_and_nothing_half_written(tmp_path: Path, monkeypatch):
    """What `naparena play` shows as a hand ends: the hand's whole record, as the log will hold it."""
    monkeypatch.setenv(EVERY_ENV, "0")
    job = Job(index=0, seed=5, variant="classic", rules=make_rules("classic"),
              seats=tuple(seat_record(a, "random", {}, i) for i, a in enumerate("abc")),
              hands=4, checkpoint=str(tmp_path / CHECKPOINTS / "000000.json"))
    logged = json.loads(bytes(play_job(job, load_registry(None))))["hands"]
    with open(hands_path(job.checkpoint), "ab") as f:
        f.write(b'{"n":4,"deal":[[1')  # the next hand, being appended as the table reads
    assert [saved_hand(job.checkpoint, n) for n in range(5)] == [*logged, None]
    assert saved_hand(tmp_path / "none.json", 0) is None


def test_a_match_with_an_isolated_python_bot_keeps_no_checkpoint(tmp_path: Path, monkeypatch):
    """Its rng lives in the seat process, out of the checkpoint's reach: the match restarts on
    resume instead, so isolation changes no byte. The same job inline does keep one (control)."""
    monkeypatch.setenv(EVERY_ENV, "0")
    registry = load_registry(None)
    seats = tuple(seat_record(a, "random", {}, i, isolation=iso)
                  for i, (a, iso) in enumerate((("a", "inline"), ("b", "process"))))
    job = Job(index=0, seed=5, variant="classic", rules=make_rules("classic"), seats=seats,
              hands=6, checkpoint=str(tmp_path / "served" / "000000.json"))
    inline = dataclasses.replace(job, seats=tuple(dataclasses.replace(s, isolation=Isolation.INLINE) for s in seats),
                                 checkpoint=str(tmp_path / "inline" / "000000.json"))
    assert bytes(play_job(job, registry)) == bytes(play_job(inline, registry))
    assert saved_hands(inline.checkpoint) == 6
    assert saved_hands(job.checkpoint) == 0
