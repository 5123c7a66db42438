"""People at the table: answers typed by a person, the human seat program, `naparena play`
driven in tmux (keys in, screen read back) and in Chromium, each run then verified."""

from __future__ import annotations

import json
import os
import random
import re
import shlex
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from naparena.bots import protocol
from naparena.game.cards import parse
from naparena.game.engine import Match
from naparena.game.rules import VARIANTS, make_rules
from naparena.people.table import (
    Table,
    after_exchanges,
    card_text,
    cards_text,
    choice_text,
    decisions,
    read_answer,
)
from naparena.people.terminal import wrap
from tests.helpers import (
    assert_same_files,
    child_env,
    naparena,
    run_dir_in,
    snapshot,
    start_naparena,
    wait_for,
    write_tournament,
)

# --- typed answers ------------------------------------------------------------------------

def test_a_card_is_read_by_number_or_by_name_in_any_case():
    legal = [parse("QH"), parse("10S")]
    assert read_answer("play", legal, "2") == (parse("10S"), None)
    assert read_answer("play", legal, "qh") == (parse("QH"), None)
    assert read_answer("play", legal, "10s") == (parse("10S"), None)


@pytest.mark.parametrize(("text", "says"), [("XX", "not one of the choices"), ("AS", "not a legal choice"),
                                             ("3", "not a choice: type 1 to 2"), ("", "not one of the choices")])
def test_a_mistyped_or_illegal_card_is_explained_never_answered(text, says):
    answer, error = read_answer("play", [parse("QH"), parse("10S")], text)
    assert answer is None and says in error


def test_bids_yes_no_trumps_keep_and_exchanges_by_their_words():
    assert read_answer("bid", ["pass", "three", "nap"], "NAP") == ("nap", None)
    assert read_answer("peep", [False, True], "y") == (True, None)
    assert read_answer("trumps", [0, 1, 2, 3], "hearts") == (2, None)
    assert read_answer("peep_exchange", [None, 5], "keep") == (None, None)
    legal = [[], [parse("2C")], [parse("2C"), parse("QH")]]
    assert read_answer("exchange", legal, "QH 2c") == ([parse("2C"), parse("QH")], None)
    assert read_answer("exchange", legal, "none") == ([], None)
    assert "cannot be thrown out" in read_answer("exchange", legal, "AS")[1]
    # Sir Garnet's taker must throw out five: "none" is neither legal nor offered
    garnet = [[parse("2C"), parse("3C"), parse("4C"), parse("5C"), parse("6C")]]
    answer, error = read_answer("garnet_discard", garnet, "none")
    assert answer is None and "none" not in error.split(":")[-1], error


def test_the_table_reads_views_by_field_name_and_ignores_fields_it_does_not_know():
    table = Table()
    table.feed({"type": "match", "seat": 1, "seats": ["a", "you"], "hands": 3, "rules": {}, "later": 1})
    table.feed({"type": "decide", "view": {"kind": "play", "legal": [parse("QH")], "hand": [parse("QH")],
                                           "pack": 24, "led": None, "hand_no": 0}})
    screen = table.screen()
    assert f"your hand: {card_text(parse('QH'))}" in screen and "Q♥" in screen
    assert table.choices() == ["1) Q♥"]


def test_a_hand_end_shows_what_everybody_held_once_it_is_known():
    table = Table()
    table.feed({"type": "match", "seat": 0, "seats": ["you", "heuristic"], "hands": 2, "rules": {}})
    record = {"n": 0, "contract": "three", "bidder": 1, "result": "made", "tricks": [], "chips": [-3, 3]}
    assert "what everybody held: shown when the match is over" in table.hand_end(record)
    table.held[0] = [[parse("QH"), parse("2C")], [parse("AS"), parse("10D")]]
    shown = table.hand_end(record)
    assert "what everybody held:\n  you: Q♥ 2♣\n  heuristic: A♠ 10♦\nsettlement:" in shown


def test_a_refused_card_says_which_rule_refuses_it():
    c = parse
    follow = {"kind": "play", "seat": 0, "hand": [c("2C"), c("9C"), c("10D")], "legal": [c("2C"), c("9C")],
              "trick": [[1, c("KC")]], "tricks": []}
    answer, error = read_answer("play", follow["legal"], "10d", follow)
    assert answer is None and error == "10♦ is not a legal choice now: you must follow ♣ clubs while you hold 2♣ 9♣"
    assert "you do not hold it" in read_answer("play", follow["legal"], "AS", follow)[1]
    # the Wellington bidder's first lead, where the variant holds him to the lowest of the suit he leads
    lead = {"kind": "play", "seat": 2, "bidder": 2, "contract": "wellington", "hand": [c("3S"), c("9S"), c("AH")],
            "legal": [c("3S"), c("AH")], "trick": [], "tricks": [], "rules": {"wellington_lead": "lowest_trump"}}
    assert "lowest card he holds of the suit he leads" in read_answer("play", lead["legal"], "9S", lead)[1]
    table = Table(seat=2, seats=["a", "b", "you"])
    table.view = lead
    assert table.unplayable() == ["not playable now: 9♠ (in this variant a Wellington bidder must lead the lowest "
                                  "card he holds of the suit he leads to the first trick)"]
    # the control: with the rule off the same card would be legal, and nothing is said
    table.view = {**lead, "legal": lead["hand"]}
    assert table.unplayable() == []


def test_the_seat_speaks_of_you_in_the_second_person_and_keeps_a_running_score():
    table = Table(earlier={"you": 7, "heuristic": -7})
    table.feed({"type": "match", "seat": 1, "seats": ["heuristic", "you"], "hands": 1, "rules": {}})
    assert table.event_text({"type": "bid", "seat": 1, "bid": "pass"}) == "you bid pass"
    assert table.event_text({"type": "bid", "seat": 0, "bid": "pass"}) == "heuristic bids pass"
    assert table.event_text({"type": "play", "seat": 1, "card": parse("QH")}) == "you play Q♥"
    table.feed({"type": "hand_end", "record": {"n": 0, "chips": [3, -3]}})
    assert table.running() == {"you": 4, "heuristic": -4}


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_a_seats_turns_counted_from_its_hand_records_are_the_decisions_it_was_asked(variant):
    """A match resumed from its checkpoint tells the seat only the hands to come: the turns
    of the hands before are counted from their records, so they must be every decision the
    seat was asked (revokes and other faults included)."""
    rules, rng = make_rules(variant), random.Random(8)
    match = Match(rules, 4, 21)
    for _ in range(8):
        hand, asked = match.next_hand(), [0] * 4
        while not hand.over:
            view = hand.view()
            asked[hand.to_act] += 1
            if rng.random() < 0.05:  # now and then an illegal answer: a fault, in play a revoke
                hand.fault("a test's illegal answer")
            else:
                hand.apply(rng.choice(view.legal))
        record = orjson.loads(orjson.dumps(hand.record()))  # as a checkpoint or a log holds it
        match.finish(hand)
        assert [decisions(record, seat) for seat in range(4)] == asked


def test_a_resumed_match_counts_the_hands_played_before_in_its_score_and_turns():
    """`naparena play`, Ctrl-C in hand 3, `naparena resume`: the table showed 'chips this match:
    you +0' and 'turn 1'; the hands before, from the checkpoint, count as when played."""
    before = [{"n": 0, "deal": [[1], [2]], "bids": [[0, "pass"], [1, "two"]], "tricks": [[1, [[1, 2], [0, 1]], 1]],
               "chips": [-2, 2]},
              {"n": 1, "deal": [[3], [4]], "bids": [[1, "pass"], [0, "three"]], "tricks": [[0, [[0, 3], [1, 4]], 0]],
               "chips": [3, -3]}]
    table = Table(earlier={"you": 5, "heuristic": -5})
    table.feed({"type": "match", "seat": 0, "seats": ["you", "heuristic"], "hands": 3, "rules": {}, "first_hand": 2})
    table.went_before(before)
    table.feed({"type": "decide", "view": {"kind": "bid", "legal": ["pass"], "hand": [5], "hand_no": 2}})
    screen = table.screen()
    assert "hand 3 of 3 · turn 5 ·" in screen  # two decisions in each hand before, and this one
    assert "chips this match: you +1   heuristic -1" in screen
    assert "chips in all matches: you +6   heuristic -6" in screen
    assert set(table.held) == {0, 1}
    # at the match's end the log's chips are the match's, whatever the table heard
    table.logged([*before, {"n": 2, "deal": [[5], [6]], "chips": [4, -4]}])
    assert table.won == [5, -5] and table.running() == {"you": 10, "heuristic": -10}


def test_a_purchase_with_an_empty_stock_is_not_asked_and_hands_show_after_the_exchanges():
    table = Table()
    table.view = {"kind": "exchange", "legal": [[]]}
    assert table.only_answer() == (True, [])
    table.view = {"kind": "exchange", "legal": [[], [parse("2C")]]}
    assert table.only_answer() == (False, None)
    record = {"deal": [[1, 2, 3], [4, 5, 6]], "bought": [[0, [40, 41]]], "peep_card": 50,
              "pre": [[0, "exchange", [1, 3]], [1, "exchange", []], [1, "peep_exchange", 5]]}
    assert after_exchanges(record) == [[2, 40, 41], [4, 6, 50]]


def test_lines_wrap_between_words_at_the_width():
    line = "legal now: " + ", ".join(["10♣ K♣ J♠"] * 12)
    wrapped = wrap(line, 79).splitlines()
    assert len(wrapped) > 1 and all(len(x) <= 79 for x in wrapped)
    assert " ".join(x.strip() for x in wrapped) == line  # no word cut, nothing lost
    assert wrap("short", 79) == "short"


def test_the_human_seat_refuses_its_handshake_without_a_table(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "naparena.people.seat"], input='{"type":"hello","protocol":1}\n',
                          capture_output=True, text=True, cwd=tmp_path, env=child_env(), timeout=60)
    assert proc.returncode == 2
    assert '"type":"error"' in proc.stdout and "naparena play" in proc.stdout


# --- the terminal, in tmux -----------------------------------------------------------------

class Pane:
    """`naparena play` in a tmux pane of its own server: keys in, the screen read back."""

    def __init__(self, socket: str, command: str, cwd: Path, size: tuple[int, int] = (150, 50)):
        if shutil.which("tmux") is None:
            pytest.skip("tmux is not installed (apt-get install tmux)")
        self.tmux = ["tmux", "-L", socket]
        env = " ".join(f"{k}={shlex.quote(v)}" for k, v in child_env({"LANG": "C.UTF-8"}).items()
                       if k in ("PATH", "NAPARENA_DISABLE_PLUGIN_AUTOLOAD", "PYTHONHASHSEED", "LANG"))
        # The shell stays after play ends, so its last screen can still be read.
        shell = f"cd {shlex.quote(str(cwd))} && env {env} {command} 2>&1; echo PLAY-EXIT=$?; sleep 600"
        subprocess.run([*self.tmux, "new-session", "-d", "-s", "play", "-x", str(size[0]), "-y", str(size[1]), shell],
                       check=True)

    def screen(self, joined: bool = True) -> str:
        """The pane's text; `joined=False`: its rows as shown, a line the terminal wrapped cut in two."""
        return subprocess.run([*self.tmux, "capture-pane", "-p", *(["-J"] if joined else []), "-S", "-2000",
                               "-t", "play"], capture_output=True, text=True).stdout

    def interrupt(self) -> None:
        subprocess.run([*self.tmux, "send-keys", "-t", "play", "C-c"], check=True)

    def send(self, text: str) -> None:
        subprocess.run([*self.tmux, "send-keys", "-t", "play", "-l", text], check=True)
        subprocess.run([*self.tmux, "send-keys", "-t", "play", "Enter"], check=True)

    def wait(self, pattern: str, what: str) -> re.Match[str]:
        return wait_for(lambda: re.search(pattern, self.screen()), what, 120)

    def close(self) -> None:
        subprocess.run([*self.tmux, "kill-server"], capture_output=True)


PROMPT = r"(> |to go on )\s*$"


def _play_one_match(pane: Pane, typo: bool) -> dict[int, str]:
    """Answer every prompt of match 0 with the first choice (or no exchange), then stop;
    return each hand's end as the screen showed it, by hand number from 0."""
    typed, ends = False, {}
    while True:
        screen = pane.wait(PROMPT, "a prompt").string.rstrip()
        last = screen.splitlines()[-1]
        if "q to stop here" in last:
            assert re.search(r"what everybody held:\nhand 1: you .+\nhand 2: ", screen), screen[-800:]
            pane.send("q")
            return ends
        if "to go on" in last:
            n = int(re.findall(r"^hand (\d+) over:", screen, re.M)[-1])
            ends[n - 1] = screen[screen.rindex(f"hand {n} over:"):]
            assert "settlement:" in ends[n - 1] and "cards played:" in ends[n - 1]
            pane.send("")
        elif "type the cards" in last:
            pane.send("none")
        elif typo and not typed and "play a card" in screen:
            pane.send("ZZ")
            pane.wait(r"'ZZ' is not one of the choices.*try again", "the typo explained")
            typed = True
            pane.send("1")
        else:
            pane.send("1")
        # Every answer redraws the screen, each turn numbered: wait for that before reading on.
        wait_for(lambda shown=screen: pane.screen().rstrip() != shown, "the answer to be taken", 120)


@pytest.mark.slow
@pytest.mark.parametrize(("variant", "from_file"), [("classic", False), ("peep", False), ("purchase", False),
                                                    ("floater", True), ("sir-garnet", True)])
def test_a_person_plays_whole_hands_in_the_terminal_and_the_run_verifies(tmp_path, variant, from_file):
    # An isolated Python bot's match keeps no checkpoint: the deals wait for the match's end.
    served = variant == "floater"
    if from_file:  # a tournament file with a human seat
        isolation = 'isolation = "process"\n' if served else ""
        (tmp_path / "t.toml").write_text(f'[tournament]\nname = "t"\nhands = 2\nseed = 3\ntable = 3\n'
                                         f'[[bots]]\nname = "human"\n[[bots]]\nname = "heuristic"\n'
                                         f'[[bots]]\nname = "random"\n{isolation}'
                                         f'[[variants]]\nname = "{variant}"\n')
        command = f"{shlex.quote(sys.executable)} -m naparena play t.toml"
    else:
        command = (f"{shlex.quote(sys.executable)} -m naparena play --variant {variant} --bots heuristic,random "
                   f"--hands 2 --seed 3 --log-dir logs")
    pane = Pane(f"naparena-test-{os.getpid()}-{tmp_path.name}", command, tmp_path)
    try:
        screen = pane.wait(r"your turn", "the first decision").string
        assert "your hand:" in screen and "bids:" in screen and "chips this match:" in screen
        assert "chips in all matches: you +0" in screen
        ends = _play_one_match(pane, typo=variant == "classic")
        done = pane.wait(r"PLAY-EXIT=(\d+)", "play to end")
        assert done.group(1) == "0", pane.screen()
        screen = pane.screen()
        assert "stopped after 1 of 6 matches" in " ".join(screen.split()), screen.strip()[-1500:]
        run_dir = tmp_path / re.search(r"naparena verify (\S+)", screen).group(1)
    finally:
        pane.close()
    assert sorted(p.name for p in run_dir.iterdir()) == ["manifest.json", "matches", "resume.json", "run.log"]
    assert sorted(p.name for p in (run_dir / "matches").iterdir()) == ["000000.json"]
    verified = naparena("verify", run_dir, cwd=tmp_path)
    assert verified.returncode == 0, verified.stderr
    assert "verify ok: 1 matches, 2 hands replayed, 0 problems" in verified.stdout
    # Hand 1's end was shown at the person's first turn of hand 2, so from the match's
    # checkpoint, not its log: every seat's whole hand, as the log has it. The last hand's
    # end is shown once the match is logged.
    held = _held_lines(run_dir)
    assert len(held[0]) == len(held[1]) == 3 and all(line in ends[1] for line in held[1]), (held, ends[1])
    if served:
        assert "what everybody held: shown when the match is over" in ends[0], ends[0]
        assert not any(line in ends[0] for line in held[0])
    else:
        assert all(line in ends[0] for line in held[0]), (held[0], ends[0])


@pytest.mark.slow
def test_at_80_columns_help_ctrl_c_shows_the_standings_and_resume_goes_on_at_the_table(tmp_path):
    command = (f"{shlex.quote(sys.executable)} -m naparena play --variant classic --bots heuristic,random "
               f"--hands 2 --seed 4 --log-dir logs")
    pane = Pane(f"naparena-test-{os.getpid()}-{tmp_path.name}", command, tmp_path, (80, 24))
    try:
        pane.wait(r"your turn", "the first decision")
        pane.send("help")
        screen = pane.wait(r"legal now: .+", "the help").string
        assert "bids, low to high" in screen and "nap: take 5 tricks; +10 / -5" in screen
        told = False
        while True:
            screen = pane.wait(PROMPT, "a prompt").string.rstrip()
            rows = pane.screen(joined=False).rstrip().splitlines()
            assert max(map(len, rows)) < 80, [r for r in rows if len(r) >= 80]  # wrapped by us, between words
            last = screen.splitlines()[-1]
            if "q to stop here" in last:
                break
            if "to go on" in last and not told:
                pane.send("1")  # an answer typed where none is asked is not taken as Enter
                pane.wait(r"'1' is not taken: nothing is asked now[\s\S]*to go on\s*$", "the word refused, asked again")
                screen = pane.screen().rstrip()  # the Enter below must bring a new screen, not this one
                told = True
            pane.send("" if "to go on" in last else "1")
            wait_for(lambda shown=screen: pane.screen().rstrip() != shown, "the answer to be taken", 120)
        assert told and " bid pass" not in screen.replace("you bid pass", "")
        pane.interrupt()
        done = pane.wait(r"PLAY-EXIT=(\d+)", "play to stop")
        assert done.group(1) == "130"
        screen = " ".join(pane.screen().split())
        assert "stopped after 1 of 6 matches (Ctrl-C); the standings above are so far" in screen, screen[-1500:]
        assert re.search(r"│ you +│", pane.screen()) and "per 100" in pane.screen()  # the standings table
        go_on = re.search(r"Go on with: (naparena resume \S+)", screen).group(1)
    finally:
        pane.close()
    run_dir = tmp_path / go_on.split()[-1]
    log = json.loads((run_dir / "matches" / "000000.json").read_text())
    you = log["match"]["seats"].index("you")
    total = sum(hand["chips"][you] for hand in log["hands"])
    resumed = Pane(f"naparena-test-{os.getpid()}-{tmp_path.name}-2",
                   f"{shlex.quote(sys.executable)} -m {go_on}", tmp_path, (80, 24))
    try:
        screen = resumed.wait(r"your turn", "the resumed table").string
        assert "naparena · match 1 ·" in screen
        assert f"chips in all matches: you {total:+d}" in screen  # the running score goes on from the logs
        resumed.send("q")
        done = resumed.wait(r"PLAY-EXIT=(\d+)", "the table left")
        assert done.group(1) == "0"
        assert "stopped after 1 of 6 matches (you left the table)" in " ".join(resumed.screen().split())
    finally:
        resumed.close()
    verified = naparena("verify", run_dir, cwd=tmp_path)
    assert verified.returncode == 0, verified.stdout + verified.stderr


def _answer_until(pane: Pane, pattern: str) -> str:
    """Answer every prompt with the first choice (Enter where asked to go on) until the
    screen at a prompt matches `pattern`; return that screen."""
    while True:
        screen = pane.wait(PROMPT, "a prompt").string.rstrip()
        last = screen.splitlines()[-1]
        if re.search(pattern, screen[screen.rfind("naparena · match"):] if "naparena ·" in screen else screen):
            return screen
        pane.send("" if "to go on" in last else "none" if "type the cards" in last else "1")
        wait_for(lambda shown=screen: pane.screen().rstrip() != shown, "the answer to be taken", 120)


def _chips(records: list[dict], seats: list[str]) -> str:
    return "   ".join(f"{alias} {sum(r['chips'][i] for r in records):+d}" for i, alias in enumerate(seats))


@pytest.mark.slow
def test_a_match_cut_in_its_third_hand_resumes_with_its_score_turns_and_totals_as_logged(tmp_path, loaded):
    """`naparena play --hands 3 …`, Ctrl-C in hand 3, `naparena resume RUN`, every core busy: the
    table said 'chips this match: you +0', 'turn 1', and at the match's end totals the log
    and the standings did not have."""
    from naparena.arena.records.rundir import RunDir
    from naparena.people.table import decisions
    command = (f"{shlex.quote(sys.executable)} -m naparena play --hands 3 --bots heuristic,pimc,random --seed 0 "
               "--log-dir logs")
    pane = Pane(f"naparena-test-{os.getpid()}-{tmp_path.name}", command, tmp_path, (120, 50))
    try:
        _answer_until(pane, r"hand 3 of 3 · turn \d+")
        pane.interrupt()
        done = pane.wait(r"PLAY-EXIT=(\d+)", "play to stop")
        assert done.group(1) == "130"
        said = " ".join(pane.screen().split())
        go_on = re.search(r"Go on with: (naparena resume \S+)", said).group(1)
    finally:
        pane.close()
    # No match was over: no standings were printed, and none are pointed at.
    assert "the standings above" not in said and "per 100" not in said
    assert "stopped after 0 of 24 matches (Ctrl-C); no match was over, so there are no standings yet; the 2 " \
           "hands played in the match under way are kept" in said, said[-600:]
    rd = RunDir(tmp_path / go_on.split()[-1])
    before = [rd.checkpointed_hand(0, n) for n in range(2)]
    seats = ["you", "heuristic", "pimc", "random"]
    turns = sum(decisions(r, 0) for r in before)
    resumed = Pane(f"naparena-test-{os.getpid()}-{tmp_path.name}-2",
                   f"{shlex.quote(sys.executable)} -m {go_on}", tmp_path, (120, 50))
    try:
        screen = resumed.wait(r"your turn", "the resumed table").string
        assert f"naparena · match 0 · hand 3 of 3 · turn {turns + 1} ·" in screen
        assert f"chips this match: {_chips(before, seats)}" in screen
        assert f"chips in all matches: {_chips(before, seats)}" in screen
        end = _answer_until(resumed, r"match 0 over:")
        log = json.loads((rd.path / "matches" / "000000.json").read_text())
        assert log["match"]["seats"] == seats
        assert f"match 0 over: {_chips(log['hands'], seats)}" in end, end[-800:]
        assert f"all matches so far: {_chips(log['hands'], seats)}" in end
        resumed.send("q")
        resumed.wait(r"PLAY-EXIT=0", "the table left")
    finally:
        resumed.close()
    from naparena.arena.records.ledger import load_standings
    booked = {r["bot"]: r["chips"] for r in load_standings(rd.path).result()["variants"]["classic"]["bots"]}
    assert booked == {alias: sum(r["chips"][i] for r in log["hands"]) for i, alias in enumerate(seats)}


def _held_lines(run_dir: Path) -> dict[int, list[str]]:
    """Each hand of match 0: every seat's dealt cards as the hand's end lists them."""
    log = json.loads((run_dir / "matches" / "000000.json").read_text())
    seats = [b["alias"] for b in log["bots"]]
    return {hand["n"]: [f"  {seats[s]}: {cards_text(cards)}" for s, cards in enumerate(hand["deal"]) if cards]
            for hand in log["hands"]}


def test_play_refuses_a_file_without_exactly_one_human_seat(tmp_path):
    path = tmp_path / "t.toml"
    path.write_text('[tournament]\nname = "t"\n[[bots]]\nname = "random"\n[[bots]]\nname = "heuristic"\n'
                    '[[variants]]\nname = "classic"\n')
    result = naparena("play", path, cwd=tmp_path)
    assert result.returncode == 2
    assert 'needs exactly one entry with name = "human"' in " ".join(result.stderr.split())


# --- the browser ------------------------------------------------------------------------------

def _browser():
    chromium = shutil.which("chromium")
    if chromium is None:
        pytest.skip("Debian's chromium is not installed (apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install playwright)")
    return sync_api, chromium


@pytest.mark.slow
@pytest.mark.parametrize("by", ["clicks", "keys"])
def test_a_person_plays_whole_hands_on_the_web_table_by_clicks_or_keys(tmp_path, by):
    sync_api, chromium = _browser()
    args = ("play", "--web", "--bots", "heuristic,random", "--hands", "2", "--seed", "5", "--log-dir", "logs",
            "--pause", "0.2")
    if by == "clicks":
        proc = start_naparena(*args, cwd=tmp_path)
    else:  # as a background job of a script starts it: SIGINT ignored, so leaving must not need it
        proc = subprocess.Popen(["sh", "-c", 'trap "" INT; exec "$0" -m naparena "$@"', sys.executable, *args],
                                cwd=tmp_path, env=child_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, start_new_session=True)
    try:
        first = wait_for(proc.stderr.readline, "the table's address", proc=proc)
        if by == "keys":  # the control: naparena (exec'd by now) has SIGINT ignored
            ignored = int(re.search(r"SigIgn:\s*([0-9a-f]+)", Path(f"/proc/{proc.pid}/status").read_text()).group(1),
                          16)
            assert ignored & (1 << (signal.SIGINT - 1))
        url = re.search(r"http://127\.0\.0\.1:\d+/", first).group(0)
        with sync_api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1280, "height": 800} if by == "clicks" else
                                    {"width": 390, "height": 844})
            errors = _watch(page)
            requests: list[str] = []
            page.on("request", lambda r: requests.append(r.url))
            page.goto(url)
            assert page.locator("meta[name=viewport]").count() == 1
            turn, first_end, plays = "", "", 0
            while True:
                page.wait_for_function(f"!['', {turn!r}].includes(document.body.dataset.turn || '')"
                                       " || document.querySelector('#next')", timeout=120_000)
                if page.locator("#next").count():
                    break
                turn = page.evaluate("document.body.dataset.turn")
                if not first_end and "hand 1 over" in page.locator("#ended").text_content():
                    first_end = page.locator("#ended").text_content()  # shown in hand 2, before the match's end
                # the table is drawn: a seat for each player, the person's at the bottom
                assert page.locator("#table .nt-seat").count() == 3
                legal = page.locator("#table button.nt-card.legal")
                if legal.count():
                    plays += 1
                    if by == "clicks":
                        legal.first.click()
                    else:  # the first legal card has the focus, visibly: Enter plays it
                        focused = page.evaluate("document.activeElement.className")
                        assert "nt-card" in focused and "legal" in focused, focused
                        outline = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
                        assert outline != "none"
                        page.keyboard.press("Enter")
                elif page.locator("#throw").count():
                    page.locator("#throw").click()
                elif by == "clicks":
                    page.locator(".choice").first.click()
                else:
                    page.keyboard.press("1")  # the first choice
                if turn == "0.3":
                    page.screenshot(path=str(tmp_path / f"web-table-{by}.png"))
            assert plays >= 5  # every trick of the two hands had a card of the person's
            assert "match 0 over" in page.locator("#message").text_content()
            assert "what everybody held:" in page.locator("#ended").text_content()
            assert "settlement:" in page.locator("#ended").text_content()
            assert re.search(r"all matches so far: you [+-]\d+", page.locator("#running").text_content())
            page.locator("#quit").click()
            page.wait_for_function("!document.querySelector('#standings').hidden", timeout=120_000)
            assert re.search(r"you: [+-]\d+\.\d\d chips per 100 hands", page.locator("#standings").text_content())
            page.wait_for_function("document.querySelector('#message').textContent === "
                                   "'you left the table: the standings so far (the table has closed)'", timeout=60_000)
            assert page.locator("#resume code").text_content().startswith("naparena resume ")
            asked = len(requests)
            page.wait_for_timeout(3000)  # the page has stopped listening: nothing more is asked
            assert len(requests) == asked
            page.screenshot(path=str(tmp_path / f"web-standings-{by}.png"))
            browser.close()
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert errors == []
    assert "you left the table" in " ".join(err.split())
    run_dir = tmp_path / re.search(r"naparena verify (\S+)", " ".join(err.split())).group(1)
    verified = naparena("verify", run_dir, cwd=tmp_path)
    assert verified.returncode == 0 and "1 matches, 2 hands replayed, 0 problems" in verified.stdout
    held = _held_lines(run_dir)[0]
    assert "what everybody held:" in first_end and len(held) == 3
    assert all(line in first_end for line in held), (held, first_end)


# --- the hand viewer ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def small_run(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("viewer")
    path = write_tournament(folder, bots=("random", "heuristic"), seeds=2, hands=3, table=3, example=False,
                            workers=1)
    result = naparena("run", path, "--log-dir", folder / "logs", cwd=folder)
    assert result.returncode == 0, result.stderr
    return run_dir_in(folder / "logs")


def test_the_report_links_each_pair_to_the_hands_where_they_differed_most(small_run, tmp_path):
    from naparena.report.viewer import Catalogue, widest_hands
    catalogue = Catalogue(small_run)
    widest = widest_hands(catalogue, "classic", "random", "heuristic")
    def chips(seats: list[str], hand: list[int], bot: str) -> float:  # a bot the table repeats: its seats' mean
        mine = [c for c, alias in zip(hand, seats) if alias == bot]
        return sum(mine) / len(mine)
    diffs = [abs(chips(e.seats, h, "random") - chips(e.seats, h, "heuristic"))
             for e in catalogue.entries for h in e.chips]
    assert [abs(d) for _, _, d in widest] == sorted(diffs, reverse=True)[:3]
    result = naparena("view", small_run, "--out", tmp_path / "r.html", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    text = (tmp_path / "r.html").read_text()
    match, hand, _ = widest[0]
    assert f"href='#hand-{match}-{hand}'" in text and "id='viewer'" in text
    # the page embeds no hand: each is in the data files beside it, every match of the run there
    assert '"deal"' not in text and '"tricks"' not in text
    logged = sorted(p.stem for p in (small_run / "matches").iterdir())
    assert sorted(p.stem[1:] for p in (tmp_path / "r-hands").glob("m*.js")) == logged


def test_head_to_head_links_open_the_pairs_own_hands_in_that_variant(tmp_path):
    """Two variants: each variant's links point at its own matches, where both bots sat."""
    from naparena.report.viewer import Catalogue, pair_links, widest_hands
    path = write_tournament(tmp_path, bots=("random", "heuristic", "cautious"), seeds=1, hands=2, table=3,
                            example=False, workers=1, variants=("classic", "pagat"))
    result = naparena("run", path, "--log-dir", tmp_path / "logs", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    catalogue = Catalogue(run_dir_in(tmp_path / "logs"))
    variant_of = {e.index: e.variant for e in catalogue.entries}
    for variant in ("classic", "pagat"):
        for match, _, _ in widest_hands(catalogue, variant, "random", "cautious"):
            assert variant_of[match] == variant
        links = pair_links(catalogue, variant, "random", "cautious")
        assert f"#hands?variant={variant}&amp;bot=random&amp;with=cautious" in links
        shown = {int(m) for m in re.findall(r"#hand-(\d+)-\d+", links)}
        assert shown and {variant_of[m] for m in shown} == {variant}


@pytest.mark.slow
def test_a_hand_is_stepped_through_forward_and_back_in_chromium(small_run, tmp_path):
    sync_api, chromium = _browser()
    naparena("view", small_run, "--out", tmp_path / "r.html", cwd=tmp_path)
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1000, "height": 900})
        errors = _watch(page)
        page.goto((tmp_path / "r.html").as_uri())
        page.locator("a.board").first.click()
        target = page.locator("a.board").first.get_attribute("href")
        m, h = re.fullmatch(r"#hand-(\d+)-(\d+)", target).groups()
        step = page.locator("#v-step")
        page.wait_for_function(f"document.querySelector('#v-step').textContent.startsWith('match {m}, hand {h}:')")
        assert step.text_content().startswith(f"match {m}, hand {h}: step 1 of ")
        assert page.locator("#v-table .nt-seat .nt-card").count() >= 10  # the deal, face up, at the seats
        total = int(step.text_content().rsplit(" ", 1)[1])
        for _ in range(total - 1):
            page.locator("#v-next").click()
        assert "settlement:" in page.locator("#v-log").text_content()
        page.screenshot(path=str(tmp_path / "viewer-end.png"))
        page.keyboard.press("ArrowLeft")
        assert step.text_content().endswith(f"step {total - 1} of {total}")
        assert "settlement:" not in page.locator("#v-log").text_content()
        browser.close()
    assert errors == []


def _watch(page) -> list[str]:
    """The page's console errors and uncaught exceptions, as they come."""
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    return errors


# --- the live page --------------------------------------------------------------------------

GATE_BOT = '''
import os
import time

from naparena import Bot, hookimpl


class GateBot(Bot):
    """Plays the first legal answer; from match 2 on, waits at the match's start until the
    file NAPARENA_TEST_GATE names exists, so a test can watch a run stand half done."""

    name = "gate"

    def start_match(self, info):
        gate = os.environ.get("NAPARENA_TEST_GATE")
        if gate and info["match"] >= 2:
            while not os.path.exists(gate):
                time.sleep(0.05)

    def bid(self, view):
        return view.legal[0]

    def play(self, view):
        return view.legal[0]


@hookimpl
def register_bots(register):
    register(GateBot)
'''


def _gated_tournament(folder: Path) -> Path:
    return write_tournament(folder, bots=("gate", "random"), drop_ins={"gate": GATE_BOT}, example=False,
                            seeds=3, hands=4, table=2, workers=1, timeout=600.0,
                            sprt={"a": "gate", "b": "random", "delta": 50.0})


def test_a_run_writes_the_same_files_with_and_without_the_live_page(tmp_path):
    path = _gated_tournament(tmp_path)
    dirs = []
    for where, extra in (("plain", ()), ("live", ("--live",))):
        result = naparena("run", path, "--log-dir", tmp_path / where, *extra, cwd=tmp_path)
        assert result.returncode == 0, result.stderr
        assert ("live page is at http://127.0.0.1:" in result.stderr) == bool(extra)
        dirs.append(run_dir_in(tmp_path / where))
    assert_same_files(snapshot(dirs[1]), snapshot(dirs[0]))


def _live_page(p, chromium, url: str, width: int = 900, height: int = 700):
    browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
    page = browser.new_page(viewport={"width": width, "height": height})
    errors = _watch(page)
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.goto(url)
    return browser, page, errors, requests


@pytest.mark.slow
def test_the_live_page_follows_a_short_run_and_shows_its_end_as_printed(tmp_path):
    sync_api, chromium = _browser()
    path = _gated_tournament(tmp_path)
    gate = tmp_path / "gate"
    proc = start_naparena("run", path, "--live", "--log-dir", "logs", cwd=tmp_path,
                          env={"NAPARENA_TEST_GATE": str(gate)})
    try:
        first = wait_for(proc.stderr.readline, "the live page's address", proc=proc)
        url = re.search(r"http://127\.0\.0\.1:\d+/", first).group(0)
        with sync_api.sync_playwright() as p:
            browser, page, errors, requests = _live_page(p, chromium, url)
            # Matches 0 and 1 are booked; match 2 waits at the gate, so the page must say so.
            page.wait_for_function("document.querySelector('#done').textContent.startsWith('2 of ')",
                                   timeout=120_000)
            total = page.locator("#done").text_content().split()[2]
            manifest = json.loads((run_dir_in(tmp_path / "logs") / "manifest.json").read_text())
            assert total == str(manifest["matches"])
            assert page.locator("#state").text_content() == "playing"
            # the standings and the newest hand come from the tally thread, a rebuild after the count
            page.wait_for_function("document.querySelectorAll('table.standings tr').length === 3"
                                   " && (document.querySelector('#table .nt-info') || {textContent: ''})"
                                   ".textContent.replace(/\\s/g, '').includes('match1,hand4of4')",
                                   timeout=120_000)  # the header, gate and random
            assert re.fullmatch(r"SPRT gate vs random \(delta 50\): \d+ boards, LLR \S+ in \[\S+, \S+\], undecided",
                                page.locator("#sprt").text_content())
            page.wait_for_function("document.querySelector('#clock').textContent.includes('table')")
            assert re.match(r"elapsed (\d+ min )?\d+ s; .+; 1 table in play", page.locator("#clock").text_content())
            # the newest booked hand on the drawn table: match 1's last hand, its seats named
            assert "match1,hand4of4" in page.locator("#table .nt-info").text_content().replace(" ", "")
            assert page.locator("#table .nt-seat").count() == 2 and page.locator("#last li").count() == 4
            gate.touch()
            page.wait_for_function("document.querySelector('#state').textContent === 'finished'", timeout=120_000)
            assert page.locator("#done").text_content().startswith(f"{total} of {total} matches booked")
            shown = page.locator("#final").text_content()
            out, err = proc.communicate(timeout=120)
            assert shown == out and "gate" in shown and "random" in shown, (shown, out)
            # the page stops listening once it heard the end: no request after the server went
            asked = len(requests)
            page.wait_for_timeout(4000)
            assert len(requests) == asked and page.locator("#state").text_content() == "finished"
            browser.close()
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert errors == []


@pytest.mark.slow
def test_an_interrupted_run_says_so_on_its_live_page_with_the_resume_command(tmp_path):
    sync_api, chromium = _browser()
    path = _gated_tournament(tmp_path)
    proc = start_naparena("run", path, "--live", "--log-dir", "logs", cwd=tmp_path,
                          env={"NAPARENA_TEST_GATE": str(tmp_path / "never")})
    try:
        first = wait_for(proc.stderr.readline, "the live page's address", proc=proc)
        url = re.search(r"http://127\.0\.0\.1:\d+/", first).group(0)
        with sync_api.sync_playwright() as p:
            browser, page, errors, requests = _live_page(p, chromium, url, 390, 844)
            page.wait_for_function("document.querySelector('#done').textContent.startsWith('2 of ')",
                                   timeout=120_000)
            proc.send_signal(signal.SIGINT)
            page.wait_for_function("document.querySelector('#state').textContent === 'interrupted'",
                                   timeout=120_000)
            out, err = proc.communicate(timeout=120)
            command = re.search(r"Resume with: (naparena resume \S+)", " ".join(err.split())).group(1)
            assert page.locator("#resume code").text_content() == command
            kept = re.search(r"interrupted: (\d+) of \d+ matches", " ".join(err.split())).group(1)
            assert f": {kept} of " in page.locator("#resume").text_content()  # as many as the run says it kept
            page.screenshot(path=str(tmp_path / "live-interrupted-390.png"))
            asked = len(requests)
            page.wait_for_timeout(4000)
            assert len(requests) == asked
            browser.close()
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert errors == []


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_every_legal_answer_of_every_decision_reads_back_from_its_words_and_its_number(variant):
    """The table sees each view as the protocol sends it; every choice, typed as the screen
    shows it or by its number, is read back as that very legal answer (every kind: bids,
    peeps, exchanges, Sir Garnet, floater, trumps, cards)."""
    rules, kinds = make_rules(variant), set()
    match, rng = Match(rules, 4, 11), random.Random(5)
    for _ in range(6):
        hand = match.next_hand()
        while not hand.over:
            view = hand.view()
            sent = orjson.loads(protocol.request(view))["view"]
            kinds.add(sent["kind"])
            for n, value in enumerate(sent["legal"], 1):
                typed = choice_text(sent["kind"], value)
                assert read_answer(sent["kind"], sent["legal"], typed) == (value, None), (sent["kind"], typed)
                assert read_answer(sent["kind"], sent["legal"], str(n)) == (value, None)
            hand.apply(rng.choice(view.legal))
        match.finish(hand)
    assert {"bid", "play"} <= kinds


# --- configuration and pages ------------------------------------------------------------------

def test_the_human_seat_is_an_external_bot_with_the_longest_timeout_a_file_allows(tmp_path):
    from naparena.arena.setup.settings import SETTINGS
    from naparena.people.play import PERSON_TIMEOUT, file_tournament, quick_tournament
    assert SETTINGS["timeout"].ok(PERSON_TIMEOUT) and not SETTINGS["timeout"].ok(PERSON_TIMEOUT + 1)
    t = quick_tournament("peep", ["heuristic", "random", "random"], 3, 0, str(tmp_path))
    human = t.bots[0]
    assert (human.alias, human.command[1:]) == ("you", ("-m", "naparena.people.seat"))
    assert [b.alias for b in t.bots[1:]] == ["heuristic", "random", "random-2"]
    assert (t.timeout, t.workers, t.table) == (PERSON_TIMEOUT, 1, 4)
    path = tmp_path / "t.toml"
    path.write_text('[tournament]\nname = "mine"\ntimeout = 90.0\n[[bots]]\nname = "human"\n'
                    '[[bots]]\nname = "random"\n[[variants]]\nname = "classic"\n')
    mine = file_tournament(path)
    assert mine.timeout == 90.0 and mine.bots[0].command is not None and mine.bots[0].alias == "you"


@pytest.mark.parametrize("page", ["web", "live", "report"])
def test_pages_load_nothing_from_the_network(page, small_run):
    from naparena.people import live, web
    from naparena.report.html import page as report_page
    text = {"web": web.page(), "live": live.page(), "report": report_page(small_run) if page == "report" else ""}[page]
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", text)
    assert "@import" not in text and "url(" not in text


def test_the_web_table_listens_on_loopback_only():
    from naparena.people.web import WebFront
    front = WebFront(0)
    try:
        assert front.httpd.server_address[0] == "127.0.0.1" and front.url.startswith("http://127.0.0.1:")
    finally:
        front.close()
