"""Duplicate boards: every rotation of a table gets the same deals in every variant, and
the standings measure it; boards, strata, positions and left-out deal sets."""

from __future__ import annotations

import json
import math
import random

import pytest
import tomli_w

from naparena.arena.records.rundir import MATCHES
from naparena.arena.records.verify import verify_run
from naparena.arena.session import Session
from naparena.arena.setup.schedule import MatchSpec
from naparena.bots.reference import RandomBot
from naparena.game.engine import Match
from naparena.game.rules import VARIANTS, make_rules
from naparena.stats.boards import SEATINGS_MAX, BoardBook, Moments, estimate
from naparena.stats.standings import Standings

AFTER_NAP = sorted(name for name, v in VARIANTS.items() if v.options.get("shuffle") == "after_nap")


def test_the_shuffle_after_nap_variants_are_the_ones_the_issue_names():
    assert AFTER_NAP == ["floater", "pagat", "pagat-full", "purchase"]


def run(tmp_path, variant: str, duplicate: bool = True, hands: int = 30):
    data = {"tournament": {"name": "t", "seed": 7, "seeds": 2, "hands": hands, "table": 4,
                           "duplicate": duplicate, "timeout": 5.0},
            "bots": [{"name": "random", "alias": f"r{i}"} for i in range(4)],
            "variants": [{"name": variant}]}
    path = tmp_path / "t.toml"
    path.write_text(tomli_w.dumps(data))
    session = Session.open(path, log_dir=tmp_path / "logs", workers=1)
    return session.run_dir.path, session.play()


def deals_by_rotation(run_dir) -> dict[tuple, list]:
    """(stream, table, deal set) → per rotation, the list of (dealer, deal) of every hand,
    from the logs."""
    out: dict[tuple, list] = {}
    for f in sorted((run_dir / MATCHES).glob("*.json")):
        log = json.loads(f.read_bytes())
        key = (log["match"]["stream"], log["match"]["table_no"], log["match"].get("deal_set", 0))
        out.setdefault(key, []).append([(h["dealer"], h["deal"]) for h in log["hands"]])
    return out


@pytest.mark.parametrize("variant", ["classic", *AFTER_NAP])
def test_every_rotation_is_dealt_the_same_boards(tmp_path, variant):
    run_dir, standings = run(tmp_path, variant)
    identity = standings["variants"][variant]["identity"]
    # 2 streams × 6 deal sets (one per cyclic order of the table of four) × 30 hands.
    assert {k: identity[k] for k in ("identical", "boards", "share")} == {"identical": 360, "boards": 360, "share": 1.0}
    assert ("gather-and-cut" in identity["dealing"]) == (variant != "classic")
    # Checked from the logs too, not only from the deal checksums: each deal set's four
    # rotations share their deals, and the deal sets of a table do not.
    deal_sets = deals_by_rotation(run_dir)
    assert len(deal_sets) == 12
    for rotations in deal_sets.values():
        assert len(rotations) == 4 and all(r == rotations[0] for r in rotations)
    firsts = [rotations[0][0] for rotations in deal_sets.values()]
    assert len({json.dumps(f) for f in firsts}) == len(firsts)
    manifest = json.loads((run_dir / "manifest.json").read_bytes())
    assert manifest.get("duplicate_boards", {}).get("variants") == (None if variant == "classic" else [variant])
    matches, hands, problems, missing = verify_run(run_dir)
    assert (matches, hands, problems, missing) == (48, 1440, [], 0)


def test_gather_and_cut_alone_would_share_only_the_first_deal():
    # What duplicate did before boards: the same match seed, different play.
    rules = make_rules("pagat")
    deals = []
    for bot_seed in (1, 2):
        match, bots = Match(rules, 4, 99), [RandomBot(random.Random(bot_seed * 10 + s), s) for s in range(4)]
        seq = []
        for _ in range(10):
            hand = match.next_hand()
            seq.append(hand.record()["deal"])
            while not hand.over:
                hand.apply(getattr(bots[hand.to_act], hand.kind)(hand.view()))
            match.finish(hand)
        deals.append(seq)
    assert deals[0][0] == deals[1][0] and deals[0][1:] != deals[1][1:]


def test_board_seeds_deal_each_hand_the_same_whatever_was_played():
    rules, boards = make_rules("pagat"), tuple(range(100, 110))
    seen = []
    for bot_seed in (1, 2):
        match = Match(rules, 4, 99, boards=boards)
        bots = [RandomBot(random.Random(bot_seed * 10 + s), s) for s in range(4)]
        seq = []
        for _ in range(10):
            hand = match.next_hand()
            seq.append(hand.record()["deal"])
            while not hand.over:
                hand.apply(getattr(bots[hand.to_act], hand.kind)(hand.view()))
            match.finish(hand)
        seen.append(seq)
    assert seen[0] == seen[1] and len({str(d) for d in seen[0]}) == 10


def test_without_duplicate_gather_and_cut_stays_and_nothing_is_claimed(tmp_path):
    run_dir, standings = run(tmp_path, "pagat", duplicate=False, hands=10)
    assert standings["variants"]["pagat"]["identity"] is None
    logs = [json.loads(f.read_bytes()) for f in sorted((run_dir / MATCHES).glob("*.json"))]
    assert all("boards" not in log["match"] for log in logs)


def test_classic_match_specs_are_unchanged_by_boards(tmp_path):
    run_dir, _ = run(tmp_path, "classic", hands=5)
    logs = [json.loads(f.read_bytes()) for f in sorted((run_dir / MATCHES).glob("*.json"))]
    # The first deal set of a table keeps the schedule entry logs had before deal sets;
    # the others name theirs.
    assert set(logs[0]["match"]) == {"index", "variant", "stream", "table_no", "rotation", "seed", "seats", "hands"}
    assert [log["match"].get("deal_set", 0) for log in logs[:24]] == [i // 4 for i in range(24)]


# --- the board book on hand-made summaries ---------------------------------------------

def summary(chips: list[list[int]], keys: list[int], dealer: int = 0) -> dict:
    seats = len(chips[0])
    return {"seats": [{"chips": sum(c[s] for c in chips)} for s in range(seats)], "kitty": 0,
            "dealer": dealer, "hand_chips": chips, "deal_keys": keys}


def spec(rotation: int, seats: list[str], table_no: int = 0) -> MatchSpec:
    return MatchSpec(rotation, "v", 0, table_no, rotation, 0, tuple(seats), 0)


def test_a_board_averages_a_bot_over_its_seats_and_rotations():
    book = BoardBook(["v"], ["a", "b"], duplicate=True)
    unit = ("v", 0, 0)
    # Seats a b a b, then rotated: b a b a. Two boards.
    book.add(unit, spec(0, ["a", "b", "a", "b"]), summary([[3, -1, -1, -1], [0, 2, 0, -2]], [5, 6]))
    book.add(unit, spec(1, ["b", "a", "b", "a"]), summary([[-3, 1, 1, 1], [4, -4, 0, 0]], [5, 9]))
    boards = book.close(unit).boards()
    assert boards == [{"a": [3 - 1 + 1 + 1, 4], "b": [-1 - 1 - 3 + 1, 4]},
                      {"a": [0 + 0 - 4 + 0, 4], "b": [2 - 2 + 4 + 0, 4]}]
    a = book.bots["v"]["a"][(0, 4)]
    assert (a.n, a.s1, a.s2, a.scale) == (2, 4 - 4, 16 + 16, 4)
    pair = book.pairs["v"][("a", "b")][(0, 4, 4)]
    assert (pair.n, pair.s1, pair.scale) == (2, 4 * 4 - (-4) * 4 + (-4) * 4 - 4 * 4, 16)
    assert book.identity("v")["share"] == 0.5  # the second board's deal differed


def test_positions_count_from_the_eldest_hand():
    book = BoardBook(["v"], ["a", "b", "c"], duplicate=True)
    unit = ("v", 0, 0)
    # Dealer is seat 1 in hand 0, so the eldest hand is seat 2; in hand 1 the dealer is seat 2.
    book.add(unit, spec(0, ["a", "b", "c"]), summary([[1, 2, 3], [10, 20, 30]], [1, 2], dealer=1))
    book.close(unit)
    eldest = book.positions["v"][0][(0, 1)]
    assert (eldest.n, eldest.s1) == (2, 3 + 10)
    last = book.positions["v"][2][(0, 1)]
    assert last.s1 == 2 + 30  # the dealer is last to bid


def test_a_deal_set_missing_a_rotation_is_left_out_of_the_intervals():
    book = BoardBook(["v"], ["a", "b"], duplicate=True)
    unit = ("v", 0, 0)
    book.add(unit, spec(0, ["a", "b", "a", "b"]), summary([[3, -1, -1, -1]], [5]))
    book.skip(unit)
    assert book.close(unit) is None
    assert book.left_out["v"] == 1 and not book.bots["v"]


def test_line_ups_are_strata():
    book = BoardBook(["v"], ["a", "b", "c"], duplicate=False)
    for table_no, seats in enumerate((["a", "b"], ["a", "c"])):
        unit = ("v", 0, table_no, 0)
        book.add(unit, spec(0, seats, table_no), summary([[5, -5], [1, -1]], [1, 2]))
        book.close(unit)
    # (line-up, hands held on a board): without duplicate a board is a round of two hands,
    # and the line-up is the table and its seating (table × SEATINGS_MAX + seating)
    assert set(book.bots["v"]["a"]) == {(0, 2), (SEATINGS_MAX, 2)}
    assert set(book.pairs["v"]) == {("a", "b"), ("a", "c")}


def test_without_duplicate_a_board_is_a_round_of_the_deal():
    """One seating, four hands at a table of two: the deal passes left every hand, so
    the first seat is dealer every other hand. A fixed position effect (+10 a hand for the
    eldest hand) is design, not noise: a round of two hands cancels it inside the board."""
    book = BoardBook(["v"], ["a", "b"], duplicate=False)
    noise = [5, -5, 2, -2, 3, -3]
    unit = ("v", 0, 0, 0)
    # dealer 0 first: seat 1 is eldest in hands 0, 2, 4; seat 0 in hands 1, 3, 5
    chips = [[-(10 if n % 2 == 0 else -10) + e, (10 if n % 2 == 0 else -10) - e] for n, e in enumerate(noise)]
    book.add(unit, spec(0, ["a", "b"], 0), summary(chips + [[1, -1]], [1, 2, 3, 4, 5, 6, 7]))
    book.close(unit)
    [(key, rounds)] = book.pairs["v"][("a", "b")].items()
    assert key == (0, 2, 2) and rounds.n == 3  # the seventh hand, a part round, is left out
    by_hand = Moments(1)
    for a, b in chips:
        by_hand.add(a - b)
    per_round, per_hand = estimate([rounds]), estimate([by_hand])
    assert per_round["mean"] == per_hand["mean"] == 0
    # Hand by hand, the ±20 position swing would be counted as noise: an interval far too wide.
    assert per_hand["se"] > 2.5 * per_round["se"]


def test_without_duplicate_each_seating_is_a_stratum():
    """Two seatings of one table, each its own match: a fixed seating effect (+10 a round
    for whoever sits first, balanced over the two) is design, not noise."""
    book = BoardBook(["v"], ["a", "b"], duplicate=False)
    noise = [1, -1, 2, -2]
    for seating, seats in enumerate((["a", "b"], ["b", "a"])):
        unit = ("v", 0, 0, seating)
        chips = [[5 + e, -5 - e] for e in noise for _ in range(2)]  # seat 0 always +5 a hand
        book.add(unit, spec(seating, seats, 0), summary(chips, list(range(8))))
        book.close(unit)
    strata = book.pairs["v"][("a", "b")]
    assert set(strata) == {(0, 2, 2), (1, 2, 2)}
    pooled = Moments(4)
    for m in strata.values():
        pooled.n, pooled.s1, pooled.s2 = pooled.n + m.n, pooled.s1 + m.s1, pooled.s2 + m.s2
    by_seating, one = estimate(list(strata.values())), estimate([pooled])
    assert by_seating["mean"] == one["mean"] == 0
    assert one["se"] > 2 * by_seating["se"]



class _Pair:
    a, b, delta, alpha, beta, variant = "a", "b", 5.0, 0.05, 0.05, "v"


@pytest.mark.parametrize("duplicate", [True, False])
def test_the_sequential_test_judges_the_units_the_intervals_do(duplicate):
    """Boards with duplicate, rounds of as many hands as seats without: the SPRT gets one
    difference per unit of the pair's interval, the same values, so the two cannot
    disagree about what the data are."""
    standings = Standings(["v"], ["a", "b"], duplicate=duplicate, sprt=_Pair())
    chips = [[-(10 if n % 2 == 0 else -10) + e, (10 if n % 2 == 0 else -10) - e]
             for n, e in enumerate([5, -5, 2, -2, 3, -3, 1])]
    seatings = (["a", "b"], ["b", "a"]) if duplicate else (["a", "b"],)
    for rotation, seats in enumerate(seatings):
        unit = ("v", 0, 0) if duplicate else ("v", 0, 0, rotation)
        rows = chips if seats[0] == "a" else [row[::-1] for row in chips]
        standings.book.add(unit, spec(rotation, seats), summary(rows, list(range(len(rows)))))
    standings.close_unit(("v", 0, 0) if duplicate else ("v", 0, 0, 0))
    assert standings.sprt is not None
    [pair] = standings.book.pairs["v"][("a", "b")].values()
    diffs = standings.sprt.diffs
    assert len(diffs) == pair.n == (7 if duplicate else 3)  # a part round is left out, as in the interval
    # Per 100 hands: the interval's unit value (scaled by its seats) is the same difference.
    assert math.fsum(diffs) == pytest.approx(100 * pair.s1 / pair.scale)


@pytest.mark.parametrize("replays, effect", [("together", 2.0), ("independent", 1.0), ("opposite", 0.0)])
def test_the_design_effect_measures_how_a_bots_replays_of_a_deal_go_together(replays, effect):
    # Two rotations of one deal set, 2,000 boards: bot a's two hands of a board are the same
    # (its board varies twice as much as two independent hands), unrelated, or cancel.
    rng = random.Random(7)
    book = BoardBook(["v"], ["a", "b"], duplicate=True)
    unit = ("v", 0, 0)
    first = [rng.choice([-6, -2, 1, 3, 9]) for _ in range(2000)]
    second = {"together": first, "opposite": [-x for x in first],
              "independent": [rng.choice([-6, -2, 1, 3, 9]) for _ in first]}[replays]
    book.add(unit, spec(0, ["a", "b"]), summary([[x, -x] for x in first], [1] * 2000))
    book.add(unit, spec(1, ["b", "a"]), summary([[-x, x] for x in second], [1] * 2000))
    book.close(unit)
    assert book.design_effect("v", "a") == pytest.approx(effect, abs=0.1)
    assert book.design_effect("v", "a") == pytest.approx(book.design_effect("v", "b"))  # zero-sum: the same


def test_the_standings_say_where_duplicate_widened_a_bots_interval(tmp_path):
    # cautious seldom bids: in hoyle at five its replays of a deal in other seats go together.
    data = {"tournament": {"name": "h5", "seed": 40000, "seeds": 2, "hands": 24, "table": 5, "duplicate": True},
            "bots": [{"name": "heuristic"}, {"name": "random"}, {"name": "cautious"}, {"name": "bold"},
                     {"name": "heuristic", "alias": "heuristic+1", "params": {"aggression": 1.0}}],
            "variants": [{"name": "hoyle"}]}
    path = tmp_path / "h5.toml"
    path.write_text(tomli_w.dumps(data))
    from typer.testing import CliRunner

    from naparena.cli import app
    done = CliRunner().invoke(app, ["run", str(path), "--workers", "1", "--log-dir", str(tmp_path / "logs")])
    assert done.exit_code == 0, done.output
    rows = {r["bot"]: r for r in json.loads(next((tmp_path / "logs").iterdir()).joinpath("standings.json")
                                           .read_text())["variants"]["hoyle"]["bots"]}
    assert rows["cautious"]["duplicate_effect"] > 1.05 > rows["heuristic"]["duplicate_effect"]
    text = " ".join(done.output.split())
    assert "hoyle: duplicate widened the interval of cautious" in text
    assert "heuristic " not in text[text.index("duplicate widened"):text.index("docs/explanation")]
    # Control: without duplicate there is no design effect to speak of.
    data["tournament"]["duplicate"] = False
    path.write_text(tomli_w.dumps(data))
    done = CliRunner().invoke(app, ["run", str(path), "--workers", "1", "--log-dir", str(tmp_path / "plain")])
    assert done.exit_code == 0 and "duplicate widened" not in done.output
