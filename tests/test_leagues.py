"""Leagues and gauntlets: line-ups counted from the schedule (tables per bot, tables each
pair shares, seats balanced within every table), the file's keys and bounds, real runs
that verify and replay byte for byte, and the rating list across runs."""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import pytest
import tomli_w

from naparena.arena.records.ledger import Ledger, load_standings
from naparena.arena.records.rundir import MATCHES, RunDir, config_hash
from naparena.arena.records.verify import audit_run
from naparena.arena.setup.league import cooccurrence, gauntlet_tables, league_tables
from naparena.arena.setup.reader import parse_tournament
from naparena.arena.setup.schedule import schedule, tables
from naparena.arena.setup.seating import SEATING_ORDERS, balance, imbalance, seatings
from naparena.bots import plugins
from naparena.errors import ConfigError
from naparena.stats.strength import rate
from naparena.tools.ratings import rating_lists
from tests.helpers import assert_same_files, errors, flat, invoke, snapshot


def league(n: int, table: int = 4, rounds: int = 3, fmt: str = "league", **settings: Any) -> dict:
    """A tournament mapping: `n` random bots (aliases b0, b1, …) in `fmt`."""
    tournament = {"name": "lg", "seed": 11, "hands": 2, "table": table, "format": fmt, "rounds": rounds,
                  "timeout": 5.0, **settings}
    return {"tournament": {k: v for k, v in tournament.items() if v is not None},
            "bots": [{"name": "random", "alias": f"b{i}"} for i in range(n)], "variants": [{"name": "classic"}]}


def pair_counts(lineups: list[tuple[str, ...]], bots: list[str]) -> list[int]:
    """Tables shared by every pair of bots, pairs that never met included as 0."""
    _, pairs = cooccurrence(lineups)
    return [pairs[p] for p in itertools.combinations(sorted(bots), 2)]


# --- league line-ups, counted --------------------------------------------------------------

@pytest.mark.parametrize("n", [10, 50, 200])
@pytest.mark.parametrize("table", [3, 4, 5])
def test_a_league_balances_tables_per_bot_and_pairs(n, table):
    rounds = 9 if n == 10 else 12
    t = parse_tournament(league(n, table, rounds), "lg.toml")
    lineups = tables(t)
    bots = [b.alias for b in t.bots]
    assert len(lineups) == math.ceil(n * rounds / table)  # linear in bots × rounds
    assert all(len(set(seats)) == table for seats in lineups)
    per_bot, _ = cooccurrence(lineups)
    # Every bot at `rounds` tables; where n × rounds does not fill the last table, some at one more.
    assert set(per_bot) == set(bots)
    assert rounds <= min(per_bot.values()) <= max(per_bot.values()) <= rounds + 1
    assert sum(per_bot.values()) == len(lineups) * table
    # Pairs: every pair within one table of its share λ of the table places, and the spread of
    # the counts near the least integers allow (all at floor λ or ceil λ): measured 0 to 0.18 above it.
    lam = rounds * (table - 1) / (n - 1)
    counts = pair_counts(lineups, bots)
    assert math.floor(lam) - 1 <= min(counts) and max(counts) <= math.ceil(lam) + 1, (min(counts), max(counts), lam)
    spread = sum((c - lam) ** 2 for c in counts) / len(counts)
    least = (lam - math.floor(lam)) * (math.ceil(lam) - lam)
    assert spread <= least + 0.25, (spread, least)
    if n == 200:  # a sparse league: no pair meets twice
        assert max(counts) == 1
    # Boards per bot, counted from the schedule: hands held over every deal set.
    boards: Counter[str] = Counter()
    for m in schedule(t):
        if m.rotation == 0:
            boards.update(dict.fromkeys(set(m.seats), m.hands))
    assert max(boards.values()) - min(boards.values()) <= t.hands


def test_a_small_league_finds_a_balanced_design_where_one_is_easy():
    # 7 bots at tables of 3, 3 rounds: the Fano plane, every pair exactly once.
    t = parse_tournament(league(7, 3, 3), "lg.toml")
    assert set(pair_counts(tables(t), [b.alias for b in t.bots])) == {1}


def test_every_league_table_plays_the_seating_design_and_balances_within_itself():
    t = parse_tournament(league(9, 4, 4), "lg.toml")
    by_table = defaultdict(list)
    for m in schedule(t):
        by_table[m.table_no].append((m.seats, m.hands))
    for table_no, seats in enumerate(tables(t)):
        assert len(by_table[table_no]) == len(seatings(seats)) == 24
        assert imbalance(balance(by_table[table_no])) is None


def test_league_line_ups_are_seeded():
    same = [tables(parse_tournament(league(30, 4, 5), "lg.toml")) for _ in range(2)]
    other = tables(parse_tournament(league(30, 4, 5, seed=12), "lg.toml"))
    assert same[0] == same[1] != other


def test_league_line_ups_are_the_same_on_every_python():
    # Drawn from random() alone, whose sequence Python promises to keep: pinned, so a run
    # started on one version resumes and verifies on another.
    assert league_tables([f"b{i}" for i in range(8)], 4, 2, 2026) == [
        ("b5", "b1", "b6", "b3"), ("b2", "b0", "b5", "b4"), ("b4", "b7", "b0", "b3"), ("b7", "b6", "b1", "b2")]


def digest(lineups: list[tuple[str, ...]]) -> str:
    return hashlib.sha256(json.dumps(lineups).encode()).hexdigest()[:16]


# Digests of the line-ups the design drew before its loops were made faster (league.py as
# it stood, Counter-based): the same seed must seat the same bots at the same tables, or a
# run would not resume, verify or match its manifest.
@pytest.mark.parametrize("bots, table, rounds, seed, expected", [
    (7, 3, 3, 1, "a5679e78cfa42560"),
    (50, 3, 9, 7, "ad8c523b22afee15"),
    (200, 4, 12, 2026, "af388c2437591159"),
    (301, 5, 7, 99, "3ed69bfa7385c73c"),
    pytest.param(1000, 4, 12, 1, "13dcba94f5cf8b6c", marks=pytest.mark.slow),
])
def test_league_line_ups_are_those_the_design_always_drew(bots, table, rounds, seed, expected):
    assert digest(league_tables([f"b{i}" for i in range(bots)], table, rounds, seed)) == expected


@pytest.mark.parametrize("bots, challengers, table, rounds, seed, expected", [
    (41, 2, 4, 6, 5, "6b27944283bfcd0d"),
    (12, 1, 3, 0, 5, "50a5113a5cbcf032"),
    (120, 3, 3, 4, 8, "074fd404f3c069ef"),
])
def test_gauntlet_line_ups_are_those_the_design_always_drew(bots, challengers, table, rounds, seed, expected):
    aliases = [f"b{i}" for i in range(bots)]
    assert digest(gauntlet_tables(aliases, aliases[:challengers], table, rounds, seed)) == expected


def test_a_league_of_a_thousand_bots_is_accepted_and_one_more_is_not():
    t = parse_tournament(league(1000, 4, 1), "lg.toml")
    assert len(tables(t)) == 250
    with pytest.raises(ConfigError) as e:
        parse_tournament(league(1001, 4, 1), "lg.toml")
    assert e.value.key == "bots" and "at most 1000" in str(e.value)


# --- gauntlets ----------------------------------------------------------------------------

def test_a_gauntlet_seats_each_challenger_with_every_line_up_of_the_field():
    data = league(6, 3, None, "gauntlet", challengers=["b0", "b5"])
    t = parse_tournament(data, "g.toml")
    field = ["b1", "b2", "b3", "b4"]
    expected = [(c, *rest) for c in ("b0", "b5") for rest in itertools.combinations(field, 2)]
    assert tables(t) == expected
    assert all(sum(a in ("b0", "b5") for a in seats) == 1 for seats in tables(t))  # the field never plays alone


def test_a_sampled_gauntlet_spreads_the_field_over_each_challenger():
    t = parse_tournament(league(41, 4, 6, "gauntlet", challengers=["b0"]), "g.toml")
    lineups = tables(t)
    assert all(seats[0] == "b0" and "b0" not in seats[1:] for seats in lineups)
    per_bot, _ = cooccurrence(seats[1:] for seats in lineups)
    assert 6 <= min(per_bot.values()) <= max(per_bot.values()) <= 7 and len(per_bot) == 40
    assert max(pair_counts([s[1:] for s in lineups], list(per_bot))) <= 2


# --- the file -----------------------------------------------------------------------------

@pytest.mark.parametrize("change, key, words", [
    ({"format": "swiss"}, "tournament.format", 'must be "round-robin", "gauntlet", "league"'),
    ({"format": 3}, "tournament.format", "must be a string"),
    ({"rounds": None}, "tournament.rounds", "a league needs rounds"),
    ({"rounds": 0}, "tournament.rounds", "must be from 1 to 10000"),
    ({"rounds": 2.5}, "tournament.rounds", "must be a whole number"),
    ({"format": "round-robin"}, "tournament.rounds", "a round-robin plays every line-up"),
    ({"challengers": ["b1"]}, "tournament.challengers", "only a gauntlet has challengers"),
    ({"format": "gauntlet"}, "tournament.challengers", "missing"),
    ({"format": "gauntlet", "challengers": ["x"]}, "tournament.challengers", "'x' is not a bot"),
    ({"format": "gauntlet", "challengers": ["b1", "b1"]}, "tournament.challengers", "names a bot twice"),
    ({"format": "gauntlet", "challengers": ["b1", "b2", "b3"]}, "tournament.challengers", "leaves a field of 2"),
    ({"rounds": 9000}, "tournament.rounds", "at most 100000"),
])
def test_bad_format_keys_exit_2_naming_the_key(tmp_path, change, key, words):
    data = league(5, 4, 2)
    data["tournament"].update(change)
    data["tournament"] = {k: v for k, v in data["tournament"].items() if v is not None}
    path = tmp_path / "bad.toml"
    path.write_text(tomli_w.dumps(data))
    result = invoke("run", path, "--log-dir", tmp_path / "logs")
    assert result.exit_code == 2, result.output
    assert f"{key}:" in flat(result.output) and words in flat(result.output)
    assert not (tmp_path / "logs").exists()


def test_too_many_bots_for_a_round_robin_points_at_the_league(tmp_path):
    data = league(65, 4, 2, None)
    del data["tournament"]["rounds"]
    with pytest.raises(ConfigError) as e:
        parse_tournament(data, "rr.toml")
    assert e.value.key == "bots" and "a league or a gauntlet takes up to 1000" in str(e.value)


def test_a_round_robin_file_is_what_it_was_before_formats():
    data = league(5, 4, None, None)
    explicit = league(5, 4, None, "round-robin")
    plain, said = parse_tournament(data, "rr.toml"), parse_tournament(explicit, "rr.toml")
    assert plain == said
    assert not {"format", "rounds", "challengers"} & set(plain.as_dict())
    assert config_hash(plain) == config_hash(said)
    lg = parse_tournament(league(5, 4, 2), "lg.toml")
    assert lg.as_dict()["format"] == "league" and config_hash(lg) != config_hash(plain)


# --- real runs ----------------------------------------------------------------------------

def write(folder: Path, data: dict, name: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    data["tournament"]["name"] = name
    path = folder / f"{name}.toml"
    path.write_text(tomli_w.dumps(data))
    return path


def mixed(n: int, **settings: Any) -> dict:
    """A league of random and heuristic bots (so the ratings have something to find)."""
    data = league(n, **settings)
    data["bots"] = [{"name": "heuristic" if i % 2 else "random", "alias": f"b{i}"} for i in range(n)]
    return data


def distinct(n: int, **settings: Any) -> dict:
    """A league of a random bot and heuristic bots each with its own aggression."""
    data = league(n, **settings)
    data["bots"] = [{"name": "random", "alias": "b0"}] + [
        {"name": "heuristic", "alias": f"b{i}", "params": {"aggression": i / 4}} for i in range(1, n)]
    return data


@pytest.mark.parametrize("fmt", ["league", "gauntlet"])
def test_a_sampled_run_verifies_and_is_the_same_on_any_worker_count(tmp_path, run_session, fmt):
    data = (mixed(7, table=3, rounds=3) if fmt == "league"
            else mixed(7, table=3, rounds=2, fmt=fmt, challengers=["b0"], hands=4))
    path = write(tmp_path, data, "lg")
    one, result = run_session(path, tmp_path / "one", workers=1)
    two, _ = run_session(path, tmp_path / "two", workers=2)
    assert_same_files(snapshot(two), snapshot(one))
    audit = audit_run(one)
    assert audit.problems == [] and audit.hands > 0
    assert errors("manifest", json.loads((one / "manifest.json").read_bytes())) == []
    assert errors("standings", json.loads((one / "standings.json").read_bytes())) == []
    rated = result["strength"]["classic"]
    assert rated["connected"] and {r["bot"] for r in rated["bots"]} == {f"b{i}" for i in range(7)}
    assert all(r["ci95"][0] <= r["rating"] <= r["ci95"][1] for r in rated["bots"])


@pytest.mark.slow
def test_a_league_on_a_dask_cluster_plays_the_same_bytes(tmp_path, run_session):
    pytest.importorskip("distributed", reason="needs the dask extra")
    path = write(tmp_path, mixed(6, table=3, rounds=2), "lg")
    here, _ = run_session(path, tmp_path / "here", workers=1)
    there, _ = run_session(path, tmp_path / "there", scheduler="local:1")
    assert_same_files(snapshot(there), snapshot(here))


def test_an_interrupted_league_resumes_to_the_same_files_and_reports_its_ratings(tmp_path, run_session):
    run_dir, result = run_session(write(tmp_path, mixed(6, table=3, rounds=2), "lg"), tmp_path / "run", workers=1)
    expected = snapshot(run_dir)
    for f in sorted((run_dir / MATCHES).glob("*.json"))[5:]:
        f.unlink()
    (run_dir / "standings.json").unlink()
    resumed = invoke("resume", run_dir, "--workers", 1, "--json")
    assert resumed.exit_code == 0, resumed.output
    assert_same_files(snapshot(run_dir), expected)
    assert json.loads(resumed.stdout)["strength"] == result["strength"]
    shown = invoke("report", run_dir, "--html", tmp_path / "r.html")
    assert shown.exit_code == 0 and "ratings, line-ups adjusted" in flat(shown.stdout)
    assert "Ratings, line-ups adjusted" in (tmp_path / "r.html").read_text()


def test_verify_balances_each_league_table_within_itself(tmp_path, run_session, monkeypatch):
    # Tables of three rotating one order (the old design), verified under that same
    # schedule: every file is its match, and only the count within each table objects.
    monkeypatch.setitem(SEATING_ORDERS, 3, ((0, 1, 2),))
    run_dir, _ = run_session(write(tmp_path, mixed(6, table=3, rounds=2), "lg"), tmp_path / "run", workers=1)
    problems = audit_run(run_dir, replay=False).problems
    assert len(problems) == 4 and all(name == MATCHES for name, _ in problems)
    assert problems[0][1].startswith("the seatings of classic, seed stream 0, table 0, are not balanced: ")


def test_ratings_across_two_runs_are_the_ratings_of_the_two_runs_merged(tmp_path, run_session):
    # Two leagues that share some bots: neither alone rates b0 against b6. Each bot its own
    # identity (a random bot, and heuristic bots of different aggression).
    a, b = distinct(7, table=3, rounds=2), distinct(7, table=3, rounds=2, seed=5)
    a["bots"], b["bots"] = a["bots"][:5], b["bots"][2:]
    run_a, _ = run_session(write(tmp_path / "a", a, "a"), tmp_path / "ra", workers=1)
    run_b, _ = run_session(write(tmp_path / "b", b, "b"), tmp_path / "rb", workers=1)
    [listed] = rating_lists([run_a, run_b])["lists"]
    # The merged run: both runs' match files booked, in their schedule order, into one ledger.
    ledger = Ledger(["classic"], [f"b{i}" for i in range(7)], True, None, 1.0, strength=True)
    for run_dir in (run_a, run_b):
        rd = RunDir(run_dir)
        files = [rd.read_match_file(f) for f in rd.match_files()]
        for logged, following in zip(files, [*files[1:], None]):
            ledger.book_log(logged)
            ledger.end_of_unit(logged.spec, following.spec if following else None)
    merged = ledger.result()["strength"]["classic"]
    assert [(r["bot"], r["rating"], r["ci95"], r["boards"]) for r in listed["bots"]] == \
        [(r["bot"], r["rating"], r["ci95"], r["boards"]) for r in merged["bots"]]
    assert len(listed["bots"]) == 7 and listed["runs"] == ["a", "b"]
    swapped = rating_lists([run_b, run_a])["lists"][0]
    assert [(r["bot"], r["rating"]) for r in swapped["bots"]] == [(r["bot"], r["rating"]) for r in listed["bots"]]
    alone = rating_lists([run_a])["lists"][0]
    assert len(alone["bots"]) == 5


def test_the_ratings_command_knows_a_bot_by_its_identity_not_its_alias(tmp_path, run_session):
    a = mixed(5, table=3, rounds=2)
    b = mixed(5, table=3, rounds=2, seed=5)
    for bot in b["bots"]:
        bot["alias"] = "x" + bot["alias"]
    b["bots"][0]["params"] = {}  # the same bot, written out: still the same identity
    run_a, _ = run_session(write(tmp_path / "a", a, "a"), tmp_path / "ra", workers=1)
    run_b, _ = run_session(write(tmp_path / "b", b, "b"), tmp_path / "rb", workers=1)
    result = invoke("ratings", run_a, run_b, "--json", "--html", tmp_path / "r.html")
    assert result.exit_code == 0, result.output
    lists = json.loads(result.output[:result.output.rindex("}") + 1])
    [entry] = lists["lists"]
    # Two identities in all: random and heuristic, each under all its aliases of both runs.
    assert sorted(r["bot"] for r in entry["bots"]) == ["b0", "b1"]
    assert {tuple(r["aliases"]) for r in entry["bots"]} == {("b0", "b2", "b4", "xb0", "xb2", "xb4"),
                                                            ("b1", "b3", "xb1", "xb3")}
    assert "ratings" in (tmp_path / "r.html").read_text()
    again = invoke("ratings", run_a, run_a, "--json")
    assert again.exit_code == 0 and "booked once" in flat(again.stderr)
    assert json.loads(again.stdout)["lists"] == rating_lists([run_a])["lists"]


def _rows(lists: dict) -> list[tuple]:
    return [(r["bot"], r["rating"], r["ci95"], r["boards"]) for e in lists["lists"] for r in e["bots"]]


def test_two_runs_that_played_the_same_matches_count_once_whatever_their_names(tmp_path, run_session):
    a = mixed(5, table=3, rounds=2)
    b = mixed(5, table=3, rounds=2)
    for bot in b["bots"]:
        bot["alias"] = "x" + bot["alias"]  # other aliases, another run name below: the same play
    run_a, _ = run_session(write(tmp_path / "a", a, "a"), tmp_path / "ra", workers=1)
    run_b, _ = run_session(write(tmp_path / "b", b, "renamed"), tmp_path / "rb", workers=1)
    assert RunDir(run_a).read_manifest()["config_hash"] != RunDir(run_b).read_manifest()["config_hash"]
    both = invoke("ratings", run_a, run_b, "--json")
    assert both.exit_code == 0, both.output
    matches = RunDir(run_a).read_manifest()["matches"]
    assert f"{matches} of its {matches} matches were played in" in flat(both.stderr)
    alone = rating_lists([run_a])
    assert _rows(json.loads(both.stdout)) == [(f"b{bot[1:]}" if bot.startswith("x") else bot, *rest)
                                              for bot, *rest in _rows(alone)]
    # A run that shares only some matches (the same seed, one more round: some of its tables
    # are the shorter league's) books only its own; in either order the same lists.
    run_c, _ = run_session(write(tmp_path / "c", mixed(5, table=3, rounds=3), "c"), tmp_path / "rc", workers=1)
    merged = rating_lists([run_a, run_c])
    [shorter, longer] = merged["runs"]
    assert shorter["played_before"] == 0 and 0 < longer["played_before"] < longer["matches"]
    assert _rows(rating_lists([run_c, run_a])) == _rows(merged)
    boards = lambda lists: sum(r["boards"] for e in lists["lists"] for r in e["bots"])  # noqa: E731
    assert boards(rating_lists([run_a])) < boards(merged) < boards(alone) + boards(rating_lists([run_c]))
    # The control: another seed plays other matches, and both runs are booked in full.
    run_d, _ = run_session(write(tmp_path / "d", mixed(5, table=3, rounds=2, seed=12), "d"),
                           tmp_path / "rd", workers=1)
    assert boards(rating_lists([run_a, run_d])) == 2 * boards(alone)


COPYCAT = """
from naparena import Bot, hookimpl


class Copycat(Bot):
    name = "copycat"
    description = "random answers"

    def bid(self, view):
        return self.rng.choice(view.legal)

    def play(self, view):
        return self.rng.choice(view.legal)


@hookimpl
def register_bots(register):
    register(Copycat)
"""


def test_the_same_tournament_with_a_changed_bot_is_another_run(tmp_path, run_session):
    data = mixed(5, table=3, rounds=2)
    data["bots"][0]["name"] = "copycat"
    bots = tmp_path / "bots"
    bots.mkdir()
    (bots / "copycat.py").write_text(COPYCAT)
    path = write(tmp_path, data, "lg")
    before, _ = run_session(path, tmp_path / "before", workers=1, bots_dir=bots)
    (bots / "copycat.py").write_text(COPYCAT + "# a new version that plays the same cards\n")
    sys.modules.pop(plugins.DROP_IN_PACKAGE + ".copycat", None)
    after, _ = run_session(path, tmp_path / "after", workers=1, bots_dir=bots)
    versions = {RunDir(d).read_manifest()["bots"]["b0"]["version"] for d in (before, after)}
    assert len(versions) == 2
    merged = rating_lists([before, after])
    [entry] = merged["lists"]
    copies = [r for r in entry["bots"] if r["identity"]["name"] == "copycat"]
    assert len(copies) == 2 and all(r["aliases"] == ["b0"] for r in copies)
    # Every match copycat sits in is new; only the tables without it were played before.
    [_, again] = merged["runs"]
    without = sum("b0" not in s.seats for s in schedule(parse_tournament(data, "lg.toml")))
    assert again["played_before"] == without < again["matches"]


def test_the_ratings_command_keeps_variants_apart_unless_pooled(tmp_path, run_session):
    data = mixed(5, table=3, rounds=2)
    data["variants"] = [{"name": "classic"}, {"name": "pagat"}]
    run_dir, _ = run_session(write(tmp_path, data, "v"), tmp_path / "run", workers=1)
    lists = rating_lists([run_dir])["lists"]
    assert sorted(e["variant"] for e in lists) == ["classic", "pagat"]
    [pooled] = rating_lists([run_dir], pool=True)["lists"]
    assert pooled["variant"] == "pooled: classic, pagat"
    assert pooled["boards"] == sum(e["boards"] for e in lists)


FIELD = [{"name": "heuristic", "alias": f"h{i}", "params": {"aggression": a}}
         for i, a in enumerate((-1.0, 0.0, 1.0))] + [{"name": "bold", "alias": "bold"},
                                                     {"name": "cautious", "alias": "cautious"}]


@pytest.mark.slow
@pytest.mark.parametrize("fmt,duplicate", [("league", True), ("league", False), ("gauntlet", True),
                                           ("gauntlet", False)])
def test_identical_bots_under_different_names_rate_alike_in_a_mixed_field(tmp_path, run_session, fmt, duplicate):
    # Three aliases of one bot among a varied field: their truths are equal, so every two
    # ratings differ by no more than their intervals allow, whatever the design (a
    # gauntlet's challengers are the aliases). Seeded, so it passes or fails the same way.
    aliases = [{"name": "random", "alias": f"same{i}"} for i in range(3)]
    data = {"tournament": {"name": "mix", "seed": 5, "hands": 4, "table": 4, "format": fmt, "rounds": 4,
                           "timeout": 5.0, "duplicate": duplicate, "seeds": 2,
                           **({"challengers": [a["alias"] for a in aliases]} if fmt == "gauntlet" else {})},
            "bots": aliases + FIELD, "variants": [{"name": "classic"}]}
    run_dir, result = run_session(write(tmp_path, data, "mix"), tmp_path / "run", workers=1)
    lineups = load_standings(run_dir).book.lineups["classic"]
    # A field of naparena's quick bots is rated plain ("auto"), from the chips as they fell.
    assert {**rate(lineups), "estimator": "plain"} == result["strength"]["classic"]
    for model in ("margins", "places"):
        rows = {r["bot"]: r for r in rate(lineups, model)["bots"]}
        same = [rows[a["alias"]] for a in aliases]
        for a, b in itertools.combinations(same, 2):
            assert abs(a["rating"] - b["rating"]) <= 3 * math.hypot(a["se"], b["se"]), (model, a, b)
        assert rows["h1"]["rating"] > max(r["rating"] for r in same), model  # and the field is seen

