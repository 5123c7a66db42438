"""A design in which an interval cannot exist says so: before play, naming the setting to
change, and in the results, in words, with `null` where a number would be (never
Infinity or NaN, which JSON parsers refuse)."""

from __future__ import annotations

import json
import math

import tomli_w

from naparena.arena.setup.reader import interval_caveats, load_tournament
from naparena.stats.strength import LineupSums, rate
from tests.helpers import errors

FIELD = ["heuristic", "cautious", "bold", "random"]


def league(tmp_path, bots: int = 12, rounds: int = 4, hands: int = 1, table: int = 5, seeds: int = 1,
           duplicate: bool = True):
    data = {"tournament": {"name": "one-board", "seed": 3, "seeds": seeds, "hands": hands, "table": table,
                           "format": "league", "rounds": rounds, "duplicate": duplicate},
            "bots": [{"name": FIELD[i % len(FIELD)], "alias": f"b{i:02d}"} for i in range(bots)],
            "variants": [{"name": "classic"}]}
    path = tmp_path / "league.toml"
    path.write_text(tomli_w.dumps(data))
    return path


def strict(text: str) -> object:
    """JSON as a strict parser (JavaScript's JSON.parse) reads it: no NaN, no Infinity."""
    def refuse(word: str) -> None:
        raise ValueError(f"not JSON: {word}")
    return json.loads(text, parse_constant=refuse)


def test_a_league_of_one_board_line_ups_is_warned_of_naming_the_setting(tmp_path):
    t = load_tournament(league(tmp_path))
    (said,) = interval_caveats(t)
    assert "tournament.hands" in said and "set hands = 2 (or seeds = 2) or more" in said
    # The control: two hands a match, or two seed streams, and nothing to say.
    assert interval_caveats(load_tournament(league(tmp_path, hands=2))) == []
    assert interval_caveats(load_tournament(league(tmp_path, seeds=2))) == []


def test_without_duplicate_a_board_is_a_round_and_the_warning_says_so(tmp_path):
    t = load_tournament(league(tmp_path, hands=4, table=5, duplicate=False))
    standings, ratings = interval_caveats(t)  # four hands make no round of five: no board at all
    assert "a board is a round" in standings and "set hands = 10 or more" in standings
    assert "deals 0 boards for 12 bots" in ratings
    assert interval_caveats(load_tournament(league(tmp_path, hands=10, table=5, duplicate=False))) == []


def test_a_league_with_fewer_boards_than_bots_is_warned_of(tmp_path):
    t = load_tournament(league(tmp_path, bots=40, rounds=1, hands=1, table=3))
    said = interval_caveats(t)
    assert any("tournament.rounds" in s and "as many boards as bots" in s for s in said), said


def test_the_one_board_league_writes_strict_json_with_reasons(tmp_path, monkeypatch):
    """The league of the report (12 bots, 4 rounds, 1 hand, tables of 5), run as a user
    runs it: warned of before play, every standings interval null with its reason, and
    the ratings, over 4 deal sets a table, with theirs; nothing in the JSON is Infinity
    or NaN, neither the file nor what --json prints."""
    from typer.testing import CliRunner

    from naparena.cli import app
    monkeypatch.chdir(tmp_path)
    league(tmp_path)
    done = CliRunner().invoke(app, ["run", "league.toml", "--workers", "1", "--json"])
    assert done.exit_code == 0, done.output
    assert "warning:" in done.output and "tournament.hands" in done.output
    printed = strict(done.stdout[done.stdout.index("{"):])
    (run_dir,) = (tmp_path / "logs").iterdir()
    text = (run_dir / "standings.json").read_text()
    data = strict(text)
    assert data == printed and errors("standings", data) == []
    standings = data
    rows = standings["variants"]["classic"]["bots"]
    assert all(r["ci95"] is None and "single board" in r["no_interval"] for r in rows)
    pairs = standings["variants"]["classic"]["pairs"]
    assert pairs and all(p["ci95"] is None and p["no_interval"] for p in pairs)
    rated = standings["strength"]["classic"]
    assert rated["df"] is not None and all(r["ci95"] is not None for r in rated["bots"])


def test_a_rating_without_an_interval_is_null_with_its_reason():
    # Two bots at one table, one board each way: the fit has no degree of freedom left.
    sums = LineupSums([1, 1])
    sums.add([5, -5])
    rated = rate({(("a", "b"), (1, 1)): sums})
    assert rated["df"] is None and "as many boards as bots" in rated["no_interval"]
    assert all(r["se"] is None and r["ci95"] is None and r["no_interval"] for r in rated["bots"])
    assert all(math.isfinite(r["rating"]) for r in rated["bots"])
    text = json.dumps(rated)
    assert strict(text) == rated  # strict JSON: the control is below
    assert "Infinity" not in text and "NaN" not in text


def test_the_strict_reader_refuses_infinity():
    """The check above can fail: a number JSON has no word for is refused."""
    try:
        strict(json.dumps({"se": math.inf}))
    except ValueError as e:
        assert "Infinity" in str(e)
    else:
        raise AssertionError("Infinity was read")
