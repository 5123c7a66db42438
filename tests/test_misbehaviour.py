"""Misbehaving bots in real tournaments on the fork pool: every fault is counted in the
standings, chips are conserved, the tournament completes, and no other match changes
(how that is checked: `tests/misbehaving.py`).

The bots live in `tests/bots_misbehaving/` (a drop-in folder).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
import tomli_w
from typer.testing import CliRunner

from naparena.arena.executors.pool import ForkPool, InlineExecutor
from naparena.arena.match.job import Job
from naparena.arena.records.rundir import MATCHES, STANDINGS
from naparena.arena.session import Session
from naparena.arena.setup.reader import parse_tournament
from naparena.arena.setup.settings import Timing
from naparena.bots.plugins import DISABLE_AUTOLOAD_ENV
from naparena.cli import app
from naparena.errors import RunError
from naparena.game.rules import make_rules
from tests.misbehaving import (
    BOTS_DIR,
    HARD,
    TIMEOUT,
    VARIANTS,
    bad_faults,
    bad_seat,
    check_run,
    config,
    control_run,
    logs,
    match_files,
    matches_with_bad,
    play,
    row,
    worker_cpu_seconds,
)


@pytest.fixture(scope="module")
def control(tmp_path_factory) -> tuple[dict, dict[int, bytes]]:
    """The tournament with `bad` well-behaved: what every other run is compared with."""
    return control_run(tmp_path_factory.mktemp("control") / "run")


# --- 1. exceptions ---------------------------------------------------------------------

def test_a_raising_bot_faults_with_exceptions_and_revokes(tmp_path, control):
    result = play(config({"mode": "raise", "every": 3}), tmp_path / "run")
    parsed = check_run(result, tmp_path / "run", control)
    for v in VARIANTS:
        bad = row(result, v, "bad")
        assert set(bad["faults"]) == {"exception"} and bad["faults"]["exception"] > 10
        assert bad["revokes"] > 0 and bad["crashes"] == 0
    for log in parsed.values():
        for _, (_, _, _, reason) in bad_faults(log):
            assert reason.startswith("exception: ValueError: deliberate failure at decision ")


# --- 2. illegal answers ------------------------------------------------------------------

def test_an_illegal_answer_is_a_fault_and_an_illegal_card_a_revoke(tmp_path, control):
    result = play(config({"mode": "illegal", "every": 4}), tmp_path / "run")
    parsed = check_run(result, tmp_path / "run", control)
    kinds = Counter()
    for log in parsed.values():
        seat = bad_seat(log)
        for hand in log["hands"]:
            for decision, s, kind, reason in hand.get("faults", ()):
                kinds[kind] += 1
                assert reason.startswith("illegal answer ")
                if kind == "play":
                    # A card it does not hold: a revoke, and the hand ends there.
                    assert hand["revoke"] == s == seat and hand["result"] == "revoke"
                    assert hand["faults"][-1][0] == decision
                else:
                    assert kind == "bid"
                    assert reason.startswith("illegal answer 'junk-bid': bid wants a bid name (str), one of ('pass'")
                    assert [s, "pass"] in hand["bids"]  # the default: a pass
    assert kinds["play"] > 0 and kinds["bid"] > 0
    for v in VARIANTS:
        bad = row(result, v, "bad")
        assert set(bad["faults"]) == {"illegal"} and bad["revokes"] > 0


# --- 3. time-outs ----------------------------------------------------------------------

@pytest.mark.slow
def test_a_bot_overrunning_its_time_is_interrupted_with_a_time_out(tmp_path, control):
    # Overrun once a match, at its 4th decision. The watchdog looks on a tick, so it
    # interrupts up to two ticks after the limit; sleeping three times the limit keeps
    # the answer from slipping in first on a loaded machine.
    result = play(config({"mode": "slow", "every": 4, "times": 1, "sleep": 3 * TIMEOUT}), tmp_path / "run")
    parsed = check_run(result, tmp_path / "run", control)
    for v in VARIANTS:
        bad = row(result, v, "bad")
        assert bad["faults"] == {"time-out": len(matches_with_bad(parsed, v))}
        assert bad["crashes"] == 0
    for i in matches_with_bad(parsed, "classic"):
        [(_, (_, _, _, reason))] = bad_faults(parsed[i])
        assert reason == f"time-out: no answer within {TIMEOUT:g} s"


@pytest.mark.slow
def test_a_bot_spinning_forever_is_interrupted_by_the_watchdog(tmp_path, control):
    result = play(config({"mode": "spin", "every": 4, "times": 1}), tmp_path / "run")
    parsed = check_run(result, tmp_path / "run", control)
    for v in VARIANTS:
        bad = row(result, v, "bad")
        assert bad["faults"] == {"time-out": len(matches_with_bad(parsed, v))}
        assert bad["crashes"] == 0  # interrupted in its worker, not killed
    assert all(log["crashes"] == [] for log in parsed.values())


# --- 4. a hang signals cannot end -------------------------------------------------------

@pytest.mark.slow
def test_a_hang_that_blocks_the_interrupt_is_killed_at_the_hard_limit(tmp_path, control):
    hang_match = 9  # classic, table 2, with bad; one hang keeps the test to one hard limit
    result = play(config({"mode": "block", "every": 5, "times": 1, "match": hang_match, "sleep": 120.0}),
                  tmp_path / "run")
    parsed = check_run(result, tmp_path / "run", control)
    bad = row(result, "classic", "bad")
    assert bad["faults"] == {"hang": 1} and bad["crashes"] == 1
    assert row(result, "floater", "bad")["faults"] == {}
    log = parsed[hang_match]
    seat = bad_seat(log)
    [[hand_no, crashed_seat, decision, reason]] = log["crashes"]
    assert crashed_seat == seat and reason == f"hang: killed after {HARD:g} s without an answer"
    [(n, [d, s, _, why])] = bad_faults(log)
    assert (n, d, s, why) == (hand_no, decision, seat, reason)
    assert log["summary"]["seats"][seat]["crashed_at"] == hand_no
    # Every other match with bad never saw it misbehave: identical to the control.
    assert [i for i, lg in parsed.items() if lg["crashes"]] == [hang_match]


# --- 5. a bot that kills its own process -------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("mode, reason", [
    ("exit", "crash: process exited with code 3"),
    ("segv", "crash: process killed by signal SIGSEGV"),
])
def test_a_bot_killing_its_process_is_a_crash_and_the_match_is_replayed(tmp_path, control, mode, reason):
    bad_params = {"mode": mode, "every": 13, "times": 1}  # dies at its 13th decision of every match
    result = play(config(bad_params), tmp_path / "run")
    parsed = check_run(result, tmp_path / "run", control)
    for v in VARIANTS:
        crashed = matches_with_bad(parsed, v)
        assert row(result, v, "bad")["crashes"] == len(crashed) > 0
        assert row(result, v, "bad")["faults"] == {"crash": len(crashed)}
    for log in parsed.values():
        seat = bad_seat(log)
        if seat is None:
            continue
        [[hand_no, crashed_seat, decision, why]] = log["crashes"]
        assert (crashed_seat, why) == (seat, reason)
        # The replay stops asking the bot at the decision it died in: its only fault is
        # there, and the engine's fallback answers legally for the rest of the match.
        [(n, fault)] = bad_faults(log)
        assert (n, fault[0], fault[3]) == (hand_no, decision, reason)
        assert log["summary"]["seats"][seat]["crashed_at"] == hand_no
        if log["variant"] == "classic":  # only bids and plays, so the bot's own count is the engine's
            # 12 answered and the 13th, where it died: a crash counts as a decision it faulted.
            assert log["summary"]["seats"][seat]["decisions"] == 13, "asked again after its crash"
    # Replays are deterministic: the same tournament again gives the same bytes.
    again = play(config(bad_params), tmp_path / "again")
    assert again == result
    assert match_files(tmp_path / "again") == match_files(tmp_path / "run")


# --- 6. disqualification -----------------------------------------------------------------

def test_a_bot_failing_every_decision_is_disqualified_the_same_for_any_worker_count(tmp_path, control):
    always = config({"mode": "raise", "every": 1}, share=0.25, timeout=60.0)  # one run is in-process
    result = play(always, tmp_path / "two", workers=2)
    inline = play(always, tmp_path / "one", workers=1)
    assert (tmp_path / "two" / STANDINGS).read_bytes() == (tmp_path / "one" / STANDINGS).read_bytes()
    assert match_files(tmp_path / "two") == match_files(tmp_path / "one")
    assert inline == result

    parsed = logs(tmp_path / "two")
    with_bad = [i for i, log in sorted(parsed.items()) if "bad" in log["match"]["seats"]]
    first, later = with_bad[0], with_bad[1:]
    played = parsed[first]
    assert played["summary"]["hands"] == 20
    seat = bad_seat(played)
    decisions = played["summary"]["seats"][seat]["decisions"]
    assert decisions >= 20
    assert result["disqualified"] == {"bad": {"after_match": first, "faults": decisions, "decisions": decisions}}
    # The rest of bad's line-ups are still played, by the stand-in in bad's seat, so the
    # well-behaved bots play every match; nothing is skipped.
    assert result["skipped"] == [] and later
    for i in later:
        seat = parsed[i]["match"]["seats"].index("bad")
        assert parsed[i]["match"]["stand_ins"] == [seat]
        assert parsed[i]["bots"][seat] == {"alias": "bad", "name": "random", "params": {}}
        assert not parsed[i]["hands"][0].get("faults")
    _, control_files = control
    for i, log in parsed.items():
        if "bad" not in log["match"]["seats"]:
            assert match_files(tmp_path / "two")[i] == control_files[i]
    variant = played["variant"]
    bad = row(result, variant, "bad")
    assert bad["disqualified"] and bad["faults"] == {"exception": decisions}
    assert bad["hands"] == 20  # its own match only: the stand-in's hands are booked apart
    stand_in = row(result, variant, "stand-in")
    assert stand_in["hands"] == 20 * len([i for i in later if parsed[i]["variant"] == variant])
    for table in result["variants"].values():
        assert sum(r["chips"] for r in table["bots"]) + table["kitty"] == 0


# --- 7. the view leaks nothing ----------------------------------------------------------

@pytest.fixture(scope="module")
def peeks(tmp_path_factory) -> tuple[list[dict], dict[int, dict]]:
    """What the peeking bot found at every decision, and the match logs to judge it by."""
    base = tmp_path_factory.mktemp("peek")
    out = base / "found"
    out.mkdir()
    seats = (("spy", "peeking", {"out": str(out)}), ("p1", "random", {}),
             ("p2", "heuristic", {}), ("p3", "bold", {}))
    # A generous time limit: walking the heap for referrers is slow, and a time-out
    # here would only hide what the bot could see.
    result = play(config({}, seats=seats, variants=("classic",), timeout=5.0), base / "run")
    assert row(result, "classic", "spy")["faults"] == {}
    found = [json.loads(line) for f in sorted(out.glob("*.jsonl")) for line in f.read_text().splitlines()]
    return found, logs(base / "run")


def _holdings(found: dict, parsed: dict[int, dict]) -> tuple[set, set]:
    """(own holding, other seats' dealt hands and holdings) at that decision, as card tuples."""
    hand = parsed[found["match"]]["hands"][found["hand"]]
    played = set(found["played"])
    own, others = None, set()
    for seat, dealt in enumerate(hand["deal"]):
        holding = tuple(c for c in dealt if c not in played)
        if seat == found["seat"]:
            own = holding
        else:
            others |= {t for t in (tuple(dealt), holding) if len(t) >= 2}
    return own, others


def test_the_view_leads_to_no_other_seats_cards(peeks):
    found, parsed = peeks
    assert {(f["match"]) for f in found} == set(parsed) and len(found) > 100
    for f in found:
        own, others = _holdings(f, parsed)
        seen = set(map(tuple, f["view"]))
        assert own in seen or len(own) < 2, "the walk must at least find the bot's own cards"
        assert not seen & others, f"match {f['match']} hand {f['hand']}: another seat's cards in the view"
        assert f["view_engine"] == []


# Not tested: objects *referring to* the view (gc.get_referrers, stack frames). Bots run
# in the worker's interpreter, so one that sets out to inspect the interpreter can find
# the engine; naparena compares strategies and is no sandbox (see README). What a bot is
# given, and everything reachable from it, is tested above.


# --- `naparena check` --------------------------------------------------------------------

def test_check_passes_a_well_behaved_drop_in_bot():
    result = CliRunner().invoke(app, ["check", "steady", "--bots-dir", str(BOTS_DIR), "--hands", "5"])
    assert result.exit_code == 0, result.output
    assert "steady: every decision legal in 12 variants" in result.stdout


def test_check_fails_a_raising_drop_in_bot_and_says_why():
    result = CliRunner().invoke(app, ["check", "misbehave", "--bots-dir", str(BOTS_DIR), "--hands", "5"])
    assert result.exit_code == 1, result.output
    assert "misbehave failed in 12 variant(s)" in result.stderr
    assert "exception" in result.stdout
    assert "every decision legal" not in result.output


# --- misbehaviour that is easy to get wrong ---------------------------------------------

def test_a_bot_calling_sys_exit_faults_like_any_raising_bot(tmp_path, control):
    result = play(config({"mode": "sysexit", "every": 7, "times": 1}), tmp_path / "run")
    check_run(result, tmp_path / "run", control)
    for v in VARIANTS:
        assert set(row(result, v, "bad")["faults"]) == {"exception"}


def test_a_bot_swallowing_the_interrupt_still_times_out(tmp_path, control):
    late_match = 9
    result = play(config({"mode": "swallow", "every": 4, "times": 2, "match": late_match,
                          "sleep": 3 * TIMEOUT}), tmp_path / "run")
    check_run(result, tmp_path / "run", control)
    assert row(result, "classic", "bad")["faults"] == {"time-out": 2}


@pytest.mark.parametrize("hook", ["start_match", "start_hand", "end_match"])
def test_a_bot_dying_in_a_lifecycle_hook_is_a_crash(tmp_path, control, hook):
    died_in = 9
    bad_params = {"hook": hook, "match": died_in, "hand": 2 if hook == "start_hand" else -1}
    result = play(config(bad_params, bad_name="fragile"), tmp_path / "run")
    assert result["skipped"] == [] and result["matches"] == len(control[1])
    assert row(result, "classic", "bad")["crashes"] == 1
    assert row(result, "floater", "bad")["crashes"] == 0


@pytest.mark.parametrize("mode", ["interrupt", "base"])
def test_a_bot_raising_any_base_exception_faults_like_any_raising_bot(tmp_path, control, mode):
    result = play(config({"mode": mode, "every": 7, "times": 1}), tmp_path / "run")
    check_run(result, tmp_path / "run", control)
    for v in VARIANTS:
        assert set(row(result, v, "bad")["faults"]) == {"exception"}


def test_a_bot_changing_its_hand_records_changes_no_chips(tmp_path):
    seats = (("p1", "random", {}), ("p2", "heuristic", {}), ("m", "meddler", {"out": str(tmp_path)}),
             ("p4", "bold", {}))
    meddled = play(config({}, seats=seats), tmp_path / "run")
    plain = play(config({}, seats=seats[:2] + (("m", "steady", {}),) + seats[3:]), tmp_path / "plain")
    for v in VARIANTS:
        table = meddled["variants"][v]
        assert sum(r["chips"] for r in table["bots"]) + table["kitty"] == 0
    # The meddler decides exactly as `steady` does, so nothing may differ.
    assert meddled["variants"] == plain["variants"]


@pytest.mark.slow
def test_slow_lifecycle_calls_are_timed_one_by_one(tmp_path):
    """Each `observe` takes a third of the limit; together they take far longer. Only a
    single call over the limit may be interrupted, so none is."""
    notes = tmp_path / "notes"
    notes.mkdir()
    seats = (("m", "meddler", {"out": str(notes), "nap": TIMEOUT / 3}), ("p2", "random", {}),
             ("p3", "random", {}), ("p4", "random", {}))
    result = play(config({}, seats=seats, variants=("classic",), hands=3), tmp_path / "run")
    assert row(result, "classic", "m")["crashes"] == 0
    assert [f.read_text() for f in notes.glob("*.txt")] == []


def test_public_records_show_faults_by_kind_only():
    from naparena.arena.match.play import public_record
    record = {"deal": [[1, 2]], "pre": [[0, "exchange", [1]]], "bids": [], "result": "passed",
              "faults": ((3, 0, "exchange", "illegal answer (7, 9)"),), "chips": (0,)}
    public = public_record(record)
    assert "deal" not in public and "pre" not in public
    assert public["faults"] == ((3, 0, "exchange", "illegal"),)


@pytest.mark.slow
def test_check_fails_a_bot_that_calls_sys_exit_or_hangs(tmp_path):
    bots = tmp_path / "bots"
    bots.mkdir()
    (bots / "quitter.py").write_text(QUITTER)
    for name, kind in (("quitter", "exception"), ("spinner", "time-out")):
        result = CliRunner().invoke(app, ["check", name, "--bots-dir", str(bots), "--hands", "2",
                                          "--timeout", "0.2"])
        assert result.exit_code == 1, result.output
        assert kind in result.stdout


QUITTER = """
import sys
import naparena
from naparena import Bot


class Quitter(Bot):
    name = "quitter"

    def bid(self, view):
        sys.exit(0)

    def play(self, view):
        return view.legal[0]


class Spinner(Quitter):
    name = "spinner"

    def bid(self, view):
        while True:
            pass


@naparena.hookimpl
def register_bots(register):
    register(Quitter)
    register(Spinner)
"""


def _a_decision_that_waits(seconds: float) -> str:
    """In a worker: a bot call (the slot shows a seat deciding) that waits without using
    the processor, as a quick bot does when the machine gives its worker no core."""
    from naparena.arena.match import play as play_module
    slot = play_module._slot
    slot[play_module.DECISION], slot[play_module.SEAT] = 1, 0
    try:
        time.sleep(seconds)
    finally:
        slot[play_module.SEAT] = -1
    return "answered"


def test_waiting_for_a_core_is_not_a_bots_time_under_the_tests_clock():
    """Why these tests cannot fail on a loaded machine: timed by CPU time, a decision held
    up five times its limit without running is not interrupted."""
    pool = ForkPool(1, Timing(TIMEOUT), clock=worker_cpu_seconds)
    try:
        assert pool.submit(_a_decision_that_waits, 5 * TIMEOUT).result(timeout=120) == "answered"
    finally:
        pool.shutdown()


def _a_decision_that_spins(job: Job) -> str:
    """A bot call that would not answer for a minute: only a time-out ends it sooner."""
    from naparena.arena.match import play as play_module
    slot = play_module._slot
    slot[play_module.DECISION], slot[play_module.SEAT] = 1, 0
    until = time.monotonic() + 60
    try:
        while time.monotonic() < until:
            pass
    except play_module.BotTimeout:
        return "interrupted"
    finally:
        slot[play_module.SEAT] = -1
    return "not interrupted"


@pytest.mark.parametrize("executor", ["pool", "inline"])
def test_every_executor_watches_a_match_by_the_timing_it_is_handed(executor):
    """One route: the executor's own limit (an hour) never binds a match, played with its own."""
    job = Job(index=0, seed=0, variant="classic", rules=make_rules("classic"), seats=(), hands=1)
    pool = (ForkPool(1, Timing(3600.0), clock=worker_cpu_seconds) if executor == "pool"
            else InlineExecutor(Timing(3600.0)))
    try:
        assert pool.play(_a_decision_that_spins, job, Timing(TIMEOUT)).result(timeout=120) == "interrupted"
    finally:
        pool.terminate()


# --- judging an answer runs none of the bot's code; process-wide mischief stays inside ----

@pytest.mark.slow
@pytest.mark.parametrize("mode", ["bad-repr", "hanging-repr", "bad-iter", "bad-items", "bad-str-answer",
                                  "huge", "huge-int"])
def test_an_answer_whose_judging_would_run_bot_code_is_an_illegal_answer(tmp_path, control, mode):
    # Its repr, iteration, ordering or comparison would run outside the watched call:
    # none of it runs; the answer is illegal by its type (or size), and named by it.
    result = play(config({"mode": mode, "every": 7, "times": 3}), tmp_path / "run")
    parsed = check_run(result, tmp_path / "run", control)
    reasons = [f[3] for log in parsed.values() for _, f in bad_faults(log)]
    assert reasons and all(r.startswith("illegal answer of type ") for r in reasons), reasons[:3]
    for v in VARIANTS:
        assert set(row(result, v, "bad")["faults"]) == {"illegal"}


@pytest.mark.slow
@pytest.mark.parametrize("mode, text", [("raise-bad-str", "UnprintableError: (its message could not be read)"),
                                        ("raise-hanging-str", "EndlessError: (its message could not be read)")])
def test_an_exception_whose_message_raises_or_hangs_is_still_only_that_bots_fault(tmp_path, control, mode, text):
    # A hanging message burns its decision's whole time limit in CPU, so it hangs in one
    # match (twice) rather than in all 240; every other match is still compared with the control.
    where = {"match": 0} if "hanging" in mode else {}
    result = play(config({"mode": mode, "every": 7, "times": 2, **where}), tmp_path / "run")
    parsed = check_run(result, tmp_path / "run", control)
    reasons = [f[3] for log in parsed.values() for _, f in bad_faults(log)]
    assert reasons and all(r == f"exception: {text}" for r in reasons), reasons[:3]


@pytest.mark.parametrize("mode", ["timer", "chdir", "print"])
def test_a_timer_a_directory_change_or_printing_in_a_bot_changes_nothing(tmp_path, monkeypatch, control, mode):
    # A timer left armed would end the worker between calls, a changed directory would
    # move the logs (so the run directory is given relative here), and printing would
    # land in the results on stdout.
    monkeypatch.chdir(tmp_path)
    result = play(config({"mode": mode, "every": 5}), Path("run"))
    parsed = check_run(result, tmp_path / "run", control)  # every hand as in the control run
    assert all(not bad_faults(log) and not log["crashes"] for log in parsed.values())


@pytest.mark.parametrize("mode", ["exit0", "interrupt"])
def test_with_one_worker_a_bot_exiting_or_interrupting_ends_only_its_own_decision(tmp_path, mode):
    # One worker is a worker process too: the run goes on, and the standings are written.
    result = play(config({"mode": mode, "every": 9, "match": 1, "times": 1}, timeout=60.0, workers=1),
                  tmp_path / "run", workers=1)
    assert result["matches"] == len(match_files(tmp_path / "run"))
    parsed = logs(tmp_path / "run")
    if mode == "exit0":
        assert [c[3] for c in parsed[1]["crashes"]] == ["crash: process exited with code 0"]
    else:
        assert [f[3] for _, f in bad_faults(parsed[1])] == ["exception: KeyboardInterrupt: "]


def test_printing_bots_leave_json_results_clean(tmp_path):
    data = config({"mode": "print", "every": 3}, hands=5, workers=1)
    (tmp_path / "t.toml").write_text(tomli_w.dumps(data))
    done = subprocess.run([sys.executable, "-m", "naparena", "run", str(tmp_path / "t.toml"), "--json",
                           "--log-dir", str(tmp_path / "logs")], capture_output=True, text=True, timeout=600,
                          env={**os.environ, DISABLE_AUTOLOAD_ENV: "1"})
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["matches"] > 0
    assert "the bot thinks out loud" in done.stderr and "writes to fd 1" in done.stderr


@pytest.mark.slow
def test_a_bot_tampering_with_the_watchdog_slot_stops_the_run_with_a_message_not_a_hang(tmp_path):
    # Inline, a bot can reach the slot and hide its own call from the watchdog; then the
    # pool sees a worker that makes no progress outside any bot call, and stops the run.
    data = config({"mode": "slot", "every": 5, "times": 1, "match": 1, "sleep": 3600.0})
    t = parse_tournament(data, tmp_path / "tournament.toml")
    run = Session.open(t, tmp_path / "run", workers=2)
    pool = ForkPool(2, clock=worker_cpu_seconds, stall=3.0)
    try:
        with pytest.raises(RunError, match="match 1: no progress for 3 s and no bot call under way"):
            run.play(executor=pool)
    finally:
        pool.terminate()
    assert (tmp_path / "run" / MATCHES / "000000.json").exists(), "finished matches are kept"
