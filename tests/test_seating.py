"""The seating design: every bot in every seat, and every other bot at every offset from
it, equally often on each deal set, counted from the schedule and from the match files
of real runs; the old design (rotations of one seating) fails the same count, and
`naparena verify` catches a run whose seats do not follow the design."""

from __future__ import annotations

import itertools
import json
import shutil
from collections import Counter
from pathlib import Path

import pytest
import tomli_w
from typer.testing import CliRunner

from naparena.arena.records.rundir import MANIFEST, MATCHES
from naparena.arena.records.verify import audit_run
from naparena.arena.session import Session
from naparena.arena.setup.reader import load_tournament, parse_tournament
from naparena.arena.setup.schedule import schedule, tables
from naparena.arena.setup.seating import SEATING_ORDERS, balance, imbalance, orders_for, seatings
from naparena.cli import app
from naparena.errors import ConfigError

SIZES = range(2, 8)
COST = {2: 2, 3: 6, 4: 24, 5: 20, 6: 120, 7: 42}  # seatings of a table of distinct bots


def offsets(orders) -> Counter:
    """(slot a, slot b, offset) over every order: how often b sits that far after a."""
    out: Counter = Counter()
    for order in orders:
        n = len(order)
        for i, j in itertools.permutations(range(n), 2):
            out[(order[i], order[j], (j - i) % n)] += 1
    return out


@pytest.mark.parametrize("n", SIZES)
def test_every_set_of_orders_balances_its_slots(n):
    orders = SEATING_ORDERS[n]
    assert all(sorted(o) == list(range(n)) for o in orders)
    assert len({o[o.index(0):] + o[:o.index(0)] for o in orders}) == len(orders)  # distinct cyclic orders
    counts = offsets(orders)
    assert len(counts) == n * (n - 1) * (n - 1)  # every ordered pair at every nonzero offset
    assert set(counts.values()) == {len(orders) // (n - 1)}


@pytest.mark.parametrize("n", [5, 7])
def test_prime_tables_use_the_multiples(n):
    assert SEATING_ORDERS[n] == tuple(tuple(i * k % n for i in range(n)) for k in range(1, n))


def test_three_orders_of_four_never_balance():
    """Why a table of four plays all 24 seatings."""
    every = [(0, *p) for p in itertools.permutations(range(1, 4))]
    assert all(len(set(offsets(s).values())) > 1 for s in itertools.combinations(every, 3))


def make(n_bots: int, table: int, duplicate: bool = True, seeds: int = 1, hands: int = 3):
    text = (f'[tournament]\nname = "s"\nseeds = {seeds}\nhands = {hands}\ntable = {table}\n'
            f"duplicate = {str(duplicate).lower()}\n")
    text += "".join(f'[[bots]]\nname = "random"\nalias = "b{i}"\n' for i in range(n_bots))
    return parse_tournament(text + '[[variants]]\nname = "classic"\n', "s.toml")


def cases():
    """(bots, table) for every table size with more bots than seats, exactly as many, and
    fewer (down to two bots), small enough to count quickly."""
    for n in SIZES:
        for bots in sorted({2, n - 1, n, n + 1, n + 2} - {1}):
            yield bots, n


@pytest.mark.parametrize("duplicate", [True, False])
@pytest.mark.parametrize("bots, table", list(cases()))
def test_the_schedule_balances_seats_and_offsets(bots, table, duplicate):
    t = make(bots, table, duplicate, seeds=2)
    matches = schedule(t)
    by_deal_set: dict = {}
    for m in matches:
        by_deal_set.setdefault((m.stream, m.table_no) if duplicate else m.stream, []).append((m.seats, m.hands))
    for group in by_deal_set.values():
        assert imbalance(balance(group)) is None
    counts = balance((m.seats, m.hands) for m in matches)
    aliases = {b.alias for b in t.bots}
    # every bot in every seat, every ordered pair of distinct bots at every offset: all equal
    seat = {k: v for k, v in counts.items() if k[0] == "seat"}
    assert set(seat) == {("seat", a, s) for a in aliases for s in range(table)}
    assert len(set(seat.values())) == 1
    offset = {k: v for k, v in counts.items() if k[0] == "offset"}
    assert set(offset) == {("offset", a, b, d) for a in aliases for b in aliases if a != b
                           for d in range(1, table)}
    assert len(set(offset.values())) == 1
    if bots >= table:  # each bot holds one seat: raw hands, no division
        assert all(v.denominator == 1 for v in counts.values())
        assert len(matches) == 2 * len(tables(t)) * COST[table]


def test_a_bot_holding_two_seats_keeps_its_own_counts():
    """Three bots at five seats: b0 and b1 hold two slots, b2 one; each pair is still at
    every offset equally often, and each bot in every seat."""
    played = seatings(("b0", "b1", "b2", "b0", "b1"))
    raw: Counter = Counter()
    for seats in played:
        for i, j in itertools.permutations(range(5), 2):
            if seats[i] != seats[j]:
                raw[(seats[i], seats[j], (j - i) % 5)] += 1
    for a, b in itertools.permutations(("b0", "b1", "b2"), 2):
        assert len({raw[(a, b, d)] for d in range(1, 5)}) == 1
    assert raw[("b0", "b1", 1)] == 2 * raw[("b2", "b1", 1)] > 0  # 2 x 2 slot pairs against 1 x 2


# --- the control: the old design ---------------------------------------------------------

def old_design(slots: tuple[str, ...]) -> list[tuple[str, ...]]:
    """The cyclic rotations of one seating, as the schedule was before this design."""
    return list(dict.fromkeys(slots[r:] + slots[:r] for r in range(len(slots))))


@pytest.mark.parametrize("slots", [("r1", "r2", "heuristic", "bold"), ("a", "b", "c", "d", "e"),
                                   ("a", "b", "c", "a", "b")])
def test_rotations_of_one_seating_fail_the_count(slots):
    counts = balance((s, 100) for s in old_design(slots))
    problem = imbalance(counts)
    assert problem is not None and " after " in problem
    # seats alone balance: what rotation gave, and all it gave
    assert len({v for k, v in counts.items() if k[0] == "seat"}) == 1
    if slots[0] == "r1":  # r2 always bids right after r1, and never two seats after it
        assert (counts[("offset", "r1", "r2", 1)], counts[("offset", "r1", "r2", 2)]) == (400, 0)
    # and the design's seatings of the same table pass
    assert imbalance(balance((s, 100) for s in seatings(slots))) is None


# --- real runs ------------------------------------------------------------------------------

def run(folder: Path, *, bots: int, table: int, duplicate: bool, hands: int = 2, seeds: int = 1,
        workers: int = 2) -> Path:
    folder.mkdir(parents=True)
    data = {"tournament": {"name": "seating", "seed": 7, "seeds": seeds, "hands": hands, "table": table,
                           "duplicate": duplicate, "timeout": 60.0},
            "bots": [{"name": "random", "alias": f"r{i}"} for i in range(bots)],
            "variants": [{"name": "classic"}]}
    (folder / "t.toml").write_text(tomli_w.dumps(data))
    result = CliRunner().invoke(app, ["run", str(folder / "t.toml"), "--workers", str(workers),
                                      "--log-dir", str(folder / "logs"), "--json"])
    assert result.exit_code == 0, result.output
    [run_dir] = (folder / "logs").iterdir()
    return run_dir


def logged(run_dir: Path) -> list[tuple[list[str], int]]:
    """(seats, hands played) of every match file of a run."""
    out = []
    for f in sorted((run_dir / MATCHES).glob("*.json")):
        data = json.loads(f.read_bytes())
        out.append((data["match"]["seats"], len(data["hands"])))
    return out


@pytest.mark.parametrize("bots, table, duplicate", [
    (4, 4, True),   # the quickstart's shape
    (3, 4, False),  # fewer bots than seats, without duplicate
    (2, 5, True),   # fewer: two bots at five seats
    (4, 3, False),  # more bots than seats, without duplicate
    (5, 3, True),   # more, duplicate
])
def test_runs_on_two_workers_log_balanced_seatings(tmp_path, bots, table, duplicate):
    run_dir = run(tmp_path / "run", bots=bots, table=table, duplicate=duplicate)
    matches = logged(run_dir)
    t = load_tournament(run_dir.parent.parent / "t.toml")
    assert len(matches) == len(schedule(t))
    counts = balance(matches)
    assert imbalance(counts) is None
    seat = {v for k, v in counts.items() if k[0] == "seat"}
    offset = {v for k, v in counts.items() if k[0] == "offset"}
    assert len(seat) == 1 and len(offset) == 1
    manifest = json.loads((run_dir / MANIFEST).read_bytes())
    # With duplicate a deal set is one cyclic order's rotations (all the distinct seatings
    # where a bot holds several seats); without, each match has its own deals.
    per_deal_set = (table if bots >= table else len(seatings(tables(t)[0]))) if duplicate else 1
    assert manifest["seating"]["seatings_per_deal_set"] == per_deal_set
    assert manifest["seating"]["deal_sets_per_table"] * per_deal_set == len(seatings(tables(t)[0]))
    assert manifest["seating"]["orders"] == [list(o) for o in orders_for(tables(t)[0])]
    audit = audit_run(run_dir, replay=False)
    assert audit.problems == []


def run_in_process(folder: Path, **kwargs) -> Path:
    folder.mkdir(parents=True)
    data = {"tournament": {"name": "seating", "seed": 7, "seeds": 1, "hands": 2, "timeout": 60.0, **kwargs},
            "bots": [{"name": "random", "alias": a} for a in ("r1", "r2", "heuristic", "bold")],
            "variants": [{"name": "classic"}]}
    (folder / "t.toml").write_text(tomli_w.dumps(data))
    session = Session.open(folder / "t.toml", log_dir=folder / "logs", workers=1)
    session.play()
    return session.run_dir.path


def test_verify_finds_a_run_seated_by_the_old_design_unbalanced(tmp_path, monkeypatch):
    # A schedule that rotates one seating (the old design), verified under the same
    # schedule: every file is its match, and only the seating count objects.
    monkeypatch.setitem(SEATING_ORDERS, 4, ((0, 1, 2, 3),))
    run_dir = run_in_process(tmp_path / "old", table=4, duplicate=True)
    problems = audit_run(run_dir, replay=False).problems
    assert problems == [(MATCHES, "the seatings of classic, seed stream 0, are not balanced: heuristic sat 1 seat "
                                  "after bold on 0 hands but r2 sat 1 seat after r1 on 8")]


def test_verify_catches_match_files_whose_seats_break_the_design(tmp_path):
    run_dir = run(tmp_path / "run", bots=4, table=4, duplicate=True, workers=1)
    assert audit_run(run_dir, replay=False).problems == []
    copy = tmp_path / "copy"
    shutil.copytree(run_dir, copy)
    # Seat r0 and r1 as the old design did in one match: swap them in the header, the
    # bots and the summary, so the file is a consistent match with other seats.
    f = sorted((copy / MATCHES).glob("*.json"))[5]
    data = json.loads(f.read_bytes())
    seats = data["match"]["seats"]
    i, j = seats.index("r0"), seats.index("r1")
    for row in (seats, data["bots"], data["summary"]["seats"]):
        row[i], row[j] = row[j], row[i]
    f.write_text(json.dumps(data))
    result = CliRunner().invoke(app, ["verify", str(copy)])
    assert result.exit_code != 0
    assert f"matches/{f.name}" in result.output


# --- the bound on the schedule -----------------------------------------------------------

def test_the_match_bound_counts_seatings():
    make(4, 4, seeds=4_000)  # 4,000 streams x 24 seatings = 96,000 matches: allowed
    with pytest.raises(ConfigError) as caught:
        make(4, 4, seeds=4_200)
    assert caught.value.key == "tournament.seeds"
    assert "100800 matches (1 variants x 4200 seeds x 1 tables x 24 seatings of each table)" in str(caught.value)
    make(2, 4, seeds=10_000)  # two bots at four seats: 6 distinct seatings, 60,000 matches
    make(2, 6, seeds=4_000)  # 20 seatings: 80,000
    with pytest.raises(ConfigError, match="x 1 tables x 90 seatings"):
        make(3, 6, seeds=2_000)


# --- a mixed field: two copies of one bot, told apart only by where they sit ----------------

def mixed_field(folder: Path, hands: int) -> dict:
    """`random` twice (r1, r2) with heuristic and bold at a table of four, duplicate."""
    folder.mkdir(parents=True)
    data = {"tournament": {"name": "mixed", "seed": 2026, "seeds": 2, "hands": hands, "table": 4,
                           "duplicate": True, "timeout": 60.0},
            "bots": [{"name": "random", "alias": "r1"}, {"name": "random", "alias": "r2"},
                     {"name": "heuristic"}, {"name": "bold"}],
            "variants": [{"name": "classic"}]}
    (folder / "t.toml").write_text(tomli_w.dumps(data))
    return Session.open(folder / "t.toml", log_dir=folder / "logs", workers=2).play()


def alias_pair(result: dict) -> dict:
    [pair] = [p for p in result["variants"]["classic"]["pairs"] if {p["a"], p["b"]} == {"r1", "r2"}]
    return pair


def test_two_copies_of_one_bot_in_a_mixed_field_are_not_told_apart(tmp_path, monkeypatch):
    lo, hi = alias_pair(mixed_field(tmp_path / "balanced", hands=30))["ci95"]
    assert lo <= 0 <= hi
    # The control: the old design (one seating, rotated) on as many hands, where r2 always
    # bids right after r1, calls two copies of one bot different.
    monkeypatch.setitem(SEATING_ORDERS, 4, ((0, 1, 2, 3),))
    lo, hi = alias_pair(mixed_field(tmp_path / "rotated", hands=180))["ci95"]
    assert not lo <= 0 <= hi
