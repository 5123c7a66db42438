"""Dead seats are never credited: from the hand a seat dies in (a broken seat process, a
worker crash), the stand-in played it and is booked for it; the bot's boards from there
leave its own intervals only; a bot with no boards or no hands ranks below every bot
rated over boards; a disqualified bot shows its real rate. Real runs on two workers,
rebuilt from the logs byte for byte and verified, and the booking on crafted summaries.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

import pytest
from typer.testing import CliRunner

from naparena.arena.records.ledger import standings_from_logs
from naparena.arena.records.rundir import STANDINGS
from naparena.arena.records.verify import verify_run
from naparena.arena.setup.schedule import MatchSpec
from naparena.cli import app
from naparena.stats.boards import BoardBook
from naparena.stats.standings import STAND_IN_ALIAS, Standings
from tests.helpers import errors
from tests.misbehaving import ROGUE, config, logs, play, row

HANDS = 20


# --- real runs ----------------------------------------------------------------------------

def garbage_config() -> dict:
    """`bad` is a seat process whose every answer is a malformed line: it dies at its first
    decision of every match, and the first legal answer plays its seat from there."""
    data = config({"mode": "none"}, timeout=2.0, hands=HANDS, variants=("classic",))
    for bot in data["bots"]:
        if bot["alias"] == "bad":
            bot.update(name="rogue", command=[sys.executable, str(ROGUE)],
                       params={"mode": "malformed", "every": 1, "sleep": 0.0})
    return data


@pytest.fixture(scope="module")
def garbage(tmp_path_factory) -> tuple[Path, dict]:
    run_dir = tmp_path_factory.mktemp("garbage") / "run"
    return run_dir, play(garbage_config(), run_dir)


@pytest.fixture(scope="module")
def crashing(tmp_path_factory) -> tuple[Path, dict]:
    """`bad` is inline and kills its worker at its 25th bid or play of every match: a
    crash mid-match, replayed, the seat dead from that hand on."""
    run_dir = tmp_path_factory.mktemp("crashing") / "run"
    return run_dir, play(config({"mode": "exit", "every": 25, "times": 1}, hands=HANDS), run_dir)


@pytest.fixture(scope="module")
def disqualified(tmp_path_factory) -> tuple[Path, dict]:
    """`bad` raises at every decision: disqualified after its first match."""
    run_dir = tmp_path_factory.mktemp("disqualified") / "run"
    return run_dir, play(config({"mode": "raise", "every": 1}, share=0.25, hands=HANDS), run_dir)


def bad_seat(log: dict) -> int | None:
    seats = log["match"]["seats"]
    return seats.index("bad") if "bad" in seats else None


def deal_set(log: dict) -> tuple:
    m = log["match"]
    return m["variant"], m["stream"], m["table_no"], m.get("deal_set", 0)


def check_books(run_dir: Path, result: dict) -> None:
    """What holds in every run: chips conserved in every hand and in the standings; the
    standings rebuilt from the logs are the live ones byte for byte and pass their schema;
    `naparena verify` passes; the stand-in is in no interval."""
    for i, log in logs(run_dir).items():
        kitty = 0
        for hand in log["hands"]:
            assert sum(hand["chips"]) + hand["kitty"] - kitty == 0, f"match {i} hand {hand['n']}"
            kitty = hand["kitty"]
    for v, table in result["variants"].items():
        assert sum(r["chips"] for r in table["bots"]) + table["kitty"] == 0, f"{v}: chips not conserved"
        assert all(STAND_IN_ALIAS not in (p["a"], p["b"]) for p in table["pairs"])
        assert row(result, v, STAND_IN_ALIAS)["units"] == 0
    written = (run_dir / STANDINGS).read_bytes()
    assert json.dumps(standings_from_logs(run_dir), indent=1, sort_keys=True).encode() + b"\n" == written
    assert errors("standings", json.loads(written)) == []
    assert verify_run(run_dir)[2] == []
    shown = CliRunner().invoke(app, ["report", "--json", str(run_dir)])
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.stdout) == json.loads(written)


def test_a_garbage_seat_program_is_never_credited_and_ranks_last(garbage):
    run_dir, result = garbage
    check_books(run_dir, result)
    with_bad = [log for log in logs(run_dir).values() if bad_seat(log) is not None]
    assert with_bad
    credited = 0  # what the bot was booked before: every chip its dead seat's first legal answers won
    for log in with_bad:
        seat = log["summary"]["seats"][bad_seat(log)]
        assert seat["crashed_at"] == 0 and seat["faults"] == {"protocol": 1}
        credited += seat["chips"]
    bad, stand_in, rnd = (row(result, "classic", a) for a in ("bad", STAND_IN_ALIAS, "p1"))
    stood_in = HANDS * len(with_bad)
    assert (bad["hands"], bad["chips"], bad["per100"], bad["basis"]) == (0, 0, None, None)
    assert bad["stood_in_hands"] == stood_in and bad["crashes"] == len(with_bad)
    assert bad["no_interval"].startswith("no hands of its own")
    assert bad["units"] == 0 and bad["boards_left_out"] == HANDS * len({deal_set(log) for log in with_bad})
    # The stand-in row holds what the dead seats won, and only that.
    assert (stand_in["hands"], stand_in["chips"]) == (stood_in, credited)
    # Booked to the bot, as before, it would have ranked above random: the check can fail.
    assert credited * 100 / stood_in > rnd["per100"]
    bots = [r["bot"] for r in result["variants"]["classic"]["bots"]]
    assert bots[-1] == "bad" and result["ranking"][-1]["bot"] == "bad"
    assert result["ranking"][-1]["per100"] is None
    # The other bots keep every board of the tables they shared with it.
    for alias in ("p1", "p2", "p3", "p4"):
        r = row(result, "classic", alias)
        # four tables, each with six deal sets (one per cyclic order of four seats)
        assert r["boards_left_out"] == 0 and r["units"] == HANDS * 4 * 6 and r["ci95"] is not None
    assert all("bad" not in (p["a"], p["b"]) for p in result["variants"]["classic"]["pairs"])


def test_the_terminal_tables_show_the_dead_bot_without_a_rate(garbage):
    run_dir, _ = garbage
    shown = CliRunner().invoke(app, ["report", str(run_dir)], terminal_width=200)
    assert shown.exit_code == 0, shown.output
    line = next(x for x in shown.stdout.splitlines() if x.startswith("│ bad "))
    assert line.split("│")[4].strip() == "—" and "+0.00" not in line  # per 100: no hands, no rate
    text = " ".join(shown.stdout.split())
    assert "bad: *no hands of its own" in text
    assert "the stand-in held it): bad 480;" in text  # its boards left out: 4 tables × 6 deal sets
    assert "faults = every fault: illegal answers (in play a revoke), exceptions, time-outs, hangs, crashes" in text


def test_a_worker_crash_mid_match_books_the_rest_to_the_stand_in(crashing):
    run_dir, result = crashing
    check_books(run_dir, result)
    own = defaultdict(lambda: [0, 0])       # variant → bad's own [hands, chips]
    after = defaultdict(lambda: [0, 0])     # variant → the stand-in's [hands, chips]
    cut: dict[tuple, int] = {}              # deal set → first board bad missed in some rotation
    line_ups: dict[tuple, set] = {}
    mid = 0
    for log in logs(run_dir).values():
        s = bad_seat(log)
        if s is None:
            continue
        died = log["summary"]["seats"][s]["crashed_at"]
        mid += 0 < died < HANDS
        v = log["variant"]
        chips = [hand[s] for hand in log["summary"]["hand_chips"]]
        own[v][0] += died
        own[v][1] += sum(chips[:died])  # the hand it died in is the stand-in's: it did not finish it
        after[v][0] += HANDS - died
        after[v][1] += sum(chips[died:])
        cut[deal_set(log)] = min(cut.get(deal_set(log), HANDS), died)
        line_ups[deal_set(log)] = set(log["match"]["seats"])
    assert mid, "the crash must fall in the middle of some match"
    for v in ("classic", "floater"):
        bad, stand_in = row(result, v, "bad"), row(result, v, STAND_IN_ALIAS)
        assert [bad["hands"], bad["chips"]] == own[v] and [stand_in["hands"], stand_in["chips"]] == after[v]
        assert bad["stood_in_hands"] == after[v][0]
        assert bad["defender_chips"] == bad["chips"] - bad["bidder_chips"]
        boards = sum(c for key, c in cut.items() if key[0] == v)
        assert bad["units"] == boards and bad["boards_left_out"] == HANDS * len(
            [k for k in cut if k[0] == v]) - boards
        assert bad["per100"] != pytest.approx((own[v][1] + after[v][1]) * 100 / (own[v][0] + after[v][0]))
        for p in result["variants"][v]["pairs"]:  # with bad: the boards both held in full
            if "bad" in (p["a"], p["b"]):
                other = p["b"] if p["a"] == "bad" else p["a"]
                assert p["units"] == sum(c for k, c in cut.items() if k[0] == v and other in line_ups[k])
        for alias in ("p1", "p2", "p3", "p4"):  # the others keep every board
            r = row(result, v, alias)
            assert r["boards_left_out"] == 0 and r["units"] == HANDS * 4 * 6  # four tables, six deal sets each


def test_a_disqualified_bot_shows_its_real_rate_below_better_bots(disqualified):
    run_dir, result = disqualified
    check_books(run_dir, result)
    (first,) = [log for log in logs(run_dir).values()
                if bad_seat(log) is not None and not log["match"].get("stand_ins")]
    v = first["variant"]
    seat = first["summary"]["seats"][bad_seat(first)]
    bad = row(result, v, "bad")
    assert result["disqualified"]["bad"]["after_match"] == first["match"]["index"]
    # Its own match only: the stand-in's chips in its later seats are not added to it.
    assert (bad["hands"], bad["chips"]) == (seat["hands"], seat["chips"]) == (HANDS, bad["chips"])
    assert bad["chips"] < 0 and bad["per100"] == round(bad["chips"] * 100 / bad["hands"], 3)
    assert bad["basis"] == "hands" and bad["ci95"] is None and "left out" in bad["no_interval"]
    assert bad["disqualified"] and bad["units"] == 0 and bad["boards_left_out"] > 0
    assert bad["stood_in_hands"] > 0
    rows = result["variants"][v]["bots"]
    better = [r["bot"] for r in rows if r["basis"] == "boards"]
    assert better and all(rows.index(row(result, v, b)) < rows.index(bad) for b in better)
    ranked = [r["bot"] for r in result["ranking"]]
    assert all(ranked.index(b) < ranked.index("bad") for b in ("p1", "p2", "p3", "p4"))
    # The others keep the boards of the deal set it left: nothing is left out for them.
    assert result["variants"][v]["left_out"] == 0
    for alias in ("p1", "p2", "p3", "p4"):
        assert row(result, v, alias)["boards_left_out"] == 0


# --- the booking, on crafted summaries -----------------------------------------------------

def summary(hand_chips: list[list[int]], crashed: dict[int, int] | None = None) -> dict:
    """A match summary as play.MatchSummary gives it, no kitty; seat `s` crashed in hand `crashed[s]`."""
    seats = []
    for s in range(len(hand_chips[0])):
        chips = sum(h[s] for h in hand_chips)
        seats.append({"chips": chips, "hands": len(hand_chips), "bidder_hands": 1, "bidder_chips": 2,
                      "defender_chips": chips - 2, "contracts": {"three": [1, 1]}, "revokes": 0,
                      "faults": {}, "decisions": 10})
    for s, hand in (crashed or {}).items():
        seats[s].update(crashed_at=hand, faults={"crash": 1})
    return {"seats": seats, "final": [0] * len(seats), "kitty": 0, "hands": len(hand_chips),
            "dealer": 0, "hand_chips": hand_chips, "deal_keys": list(range(len(hand_chips)))}


def spec(rotation: int, seats: list[str]) -> MatchSpec:
    return MatchSpec(rotation, "v", 0, 0, rotation, 0, tuple(seats), 4)


ROTATION_0 = [[3, -1, -2], [-4, 2, 2], [1, 1, -2], [6, -3, -3]]
ROTATION_1 = [[-1, 2, -1], [2, -4, 2], [5, -2, -3], [-2, 4, -2]]


def book_two_rotations(crashed: dict[int, int] | None = None, lineup: bool = False) -> Standings:
    st = Standings(["v"], ["a", "b", "c", STAND_IN_ALIAS])
    st.add(spec(0, ["a", "b", "c"]), summary(ROTATION_0))
    booked = ["c", STAND_IN_ALIAS, "b"] if lineup else None
    st.add(spec(1, ["c", "a", "b"]), summary(ROTATION_1, crashed), booked)
    st.close_unit(st.unit_of(spec(0, [])))
    return st


def test_a_seat_dying_in_hand_two_books_hands_two_on_to_the_stand_in():
    st = book_two_rotations({1: 2})  # a, in seat 1 of rotation 1, dies in hand 2
    result = st.result()
    a, stand_in = (next(r for r in result["variants"]["v"]["bots"] if r["bot"] == x) for x in ("a", STAND_IN_ALIAS))
    assert (a["hands"], a["chips"]) == (4 + 2, 6 + 2 - 4)  # rotation 0, and hands 0 and 1 of rotation 1
    assert (stand_in["hands"], stand_in["chips"]) == (2, -2 + 4)
    assert a["stood_in_hands"] == 2 and a["defender_chips"] == a["chips"] - a["bidder_chips"]
    assert stand_in["bidder_chips"] == 0 and stand_in["defender_chips"] == stand_in["chips"]
    assert sum(r["chips"] for r in result["variants"]["v"]["bots"]) == 0
    # Boards: a held boards 0 and 1 in full, so only they are in its interval; b and c keep all four.
    book = st.book
    assert {k: m.n for k, m in book.bots["v"]["a"].items()} == {(0, 2): 2}
    assert {k: m.n for k, m in book.bots["v"]["b"].items()} == {(0, 2): 4}
    assert book.bots["v"]["a"][(0, 2)].s1 == (3 + 2) + (-4 - 4)
    assert {pair: sum(m.n for m in strata.values()) for pair, strata in book.pairs["v"].items()} == {
        ("a", "b"): 2, ("a", "c"): 2, ("b", "c"): 4}
    assert sum(m.n for m in book.positions["v"][0].values()) == 2
    assert dict(book.bots_left_out["v"]) == {"a": 2} and book.left_out["v"] == 0
    assert not book.bots["v"].get(STAND_IN_ALIAS)  # never in an interval
    assert a["units"] == 2 and a["boards_left_out"] == 2 and a["basis"] == "boards"


def test_the_old_booking_would_have_credited_the_bot():
    """The check can fail: booked as played, a's chips include the stand-in's."""
    dead, alive = book_two_rotations({1: 2}).result(), book_two_rotations().result()
    a = next(r for r in dead["variants"]["v"]["bots"] if r["bot"] == "a")
    as_played = next(r for r in alive["variants"]["v"]["bots"] if r["bot"] == "a")
    assert as_played["chips"] - a["chips"] == 2 and as_played["hands"] - a["hands"] == 2


def test_a_stood_in_seat_leaves_the_board_out_for_its_bot_only():
    st = book_two_rotations(lineup=True)  # a disqualified: the stand-in holds its seat in rotation 1
    book = st.book
    assert not book.bots["v"]["a"] and dict(book.bots_left_out["v"]) == {"a": 4}
    assert sum(m.n for m in book.bots["v"]["b"].values()) == 4 and book.left_out["v"] == 0
    a = next(r for r in st.result()["variants"]["v"]["bots"] if r["bot"] == "a")
    assert (a["basis"], a["per100"], a["ci95"], a["units"]) == ("hands", 150.0, None, 0)
    assert a["stood_in_hands"] == 4


def test_a_match_not_played_still_drops_the_whole_deal_set():
    book = BoardBook(["v"], ["a", "b", "c"], duplicate=True)
    book.add(("v", 0, 0), spec(0, ["a", "b", "c"]), summary(ROTATION_0))
    book.skip(("v", 0, 0))
    assert book.close(("v", 0, 0)) is None
    assert book.left_out["v"] == 4 and not book.bots["v"] and not book.bots_left_out["v"]


def test_a_bot_without_boards_ranks_below_every_bot_with_them_whatever_its_chips():
    st = book_two_rotations(lineup=True)
    st.bots["v"]["a"]["chips"] = 10_000  # rated over its own hands only: still last but the hand-less
    rows = st.result()["variants"]["v"]["bots"]
    assert [r["basis"] for r in rows] == ["boards", "boards", "hands", "hands"]
    assert rows[2]["bot"] == "a" and rows[2]["per100"] > rows[0]["per100"]
