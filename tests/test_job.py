"""The job a worker plays, typed from the session to the seat, and the executor interface
the session plays it on: one seat builder, one isolation rule, no attribute probes."""

import ast
import dataclasses
import json
import pickle
import re
from pathlib import Path

import pytest

from naparena.arena.executors.cluster import ClusterExecutor
from naparena.arena.executors.executor import MatchExecutor
from naparena.arena.executors.pool import ForkPool, InlineExecutor
from naparena.arena.match.job import Job, SeatRecord, seat_record
from naparena.arena.records.logs import parse_header
from naparena.arena.setup.schedule import MatchSpec, board_seeds
from naparena.arena.setup.settings import Confinement, Isolation, Timing
from naparena.game.rules import make_rules

PACKAGE = Path(__file__).resolve().parents[1] / "naparena"
SESSION = PACKAGE / "arena" / "session.py"


def test_an_external_bot_always_plays_in_a_process_and_a_misspelt_isolation_is_refused():
    assert seat_record("a", "x", {}, 1, command=["./bot"]).isolation is Isolation.PROCESS
    assert seat_record("a", "random", {}, 1).isolation is Isolation.INLINE
    with pytest.raises(ValueError, match='must be "inline" or "process", got \'proces\''):
        seat_record("a", "random", {}, 1, isolation="proces")


def test_a_job_travels_pickled_as_it_is_and_writes_the_schedule_entry_as_before():
    spec = MatchSpec(3, "classic", 0, 1, 2, 99, ("a", "b"), 5)
    job = Job(index=3, seed=99, variant="classic", rules=make_rules("classic"),
              seats=(seat_record("a", "random", {"p": 1}, 7), seat_record("b", "random", {}, 8, isolation="process")),
              hands=5, timing=Timing(2.0), spec=spec, stand_ins=(1,), crashes=((0, 1, 2, "crash"),),
              confinement=Confinement(memory_mb=0))
    assert pickle.loads(pickle.dumps(job)) == job
    assert job.match_entry() == {**spec.as_dict(), "stand_ins": [1]}
    assert job.isolated and isinstance(job.seats[0], SeatRecord)
    with pytest.raises(AttributeError):
        job.seats[0].seed = 1  # type: ignore[misc]


@pytest.mark.parametrize("boards, deal_set", [(False, 0), (True, 0), (False, 2), (True, 5)])
def test_a_schedule_entry_as_a_log_records_it_has_every_field_in_order(boards, deal_set):
    # Written by hand (the dispatch asks for it six times a match): a field added to MatchSpec
    # must reach the logs too, in the order asdict gives, `boards` and `deal_set` only where
    # set (a table's first deal set is logged as before deal sets were).
    spec = MatchSpec(3, "classic", 0, 1, 2, 99, ("a", "b"), 5, boards, deal_set)
    expected = {**dataclasses.asdict(spec), "seats": ["a", "b"]}
    if not boards:
        del expected["boards"]
    if not deal_set:
        del expected["deal_set"]
    assert list(spec.as_dict().items()) == list(expected.items())
    assert spec.as_dict() is not spec.as_dict()  # fresh each time: a caller may change its copy


@pytest.mark.parametrize("boards", [False, True])
def test_a_logs_schedule_entry_reads_back_as_the_spec_it_was(boards):
    spec = MatchSpec(3, "classic", 0, 1, 2, 99, ("a", "b"), 5, boards)
    assert MatchSpec.from_dict(json.loads(json.dumps(spec.as_dict()))) == spec
    logged, stand_ins = parse_header({**spec.as_dict(), "stand_ins": [1]})
    assert (logged, stand_ins) == (spec, (1,))


@pytest.mark.parametrize(("change", "problem"), [
    ({"seats": "ab"}, "match.seats is missing or not a list"),
    ({"index": 3.0}, "match.index is missing or not a int"),
    ({"seats": ["a", 2]}, "match.seats must be bot aliases"),
    ({"boards": False}, "match.boards, where present, must be true"),
    ({"lineup": ["a", "b"]}, "match.lineup is not a field of a schedule entry"),
    ({"stand_ins": [2]}, "match.stand_ins must list seats of the table"),
    ({"stand_ins": [1, 0]}, "match.stand_ins must list seats of the table"),
    ({"stand_ins": []}, "match.stand_ins must list seats of the table"),
])
def test_a_damaged_schedule_entry_is_refused_where_the_log_is_read(change, problem):
    record = {**MatchSpec(3, "classic", 0, 1, 2, 99, ("a", "b"), 5).as_dict(), **change}
    with pytest.raises(ValueError, match=problem):
        parse_header(record)


def test_no_reader_takes_a_match_apart_by_string_keys():
    """A log's schedule entry is parsed once (`MatchSpec.from_dict`): no module reads
    `spec["…"]` or `["match"]["…"]` (there were 47 such reads), so mypy sees every use."""
    found = [f"{path.relative_to(PACKAGE.parent)}:{n}" for path in sorted(PACKAGE.rglob("*.py"))
             for n, line in enumerate(path.read_text().splitlines(), 1)
             if re.search(r"""spec\[["']|\["match"\]\[""", line)]
    assert found == []


@pytest.mark.parametrize("executor", [ForkPool, InlineExecutor, ClusterExecutor])
def test_every_executor_offers_what_the_session_uses(executor):
    wanted = {name for name in dir(MatchExecutor) if not name.startswith("_")}
    assert wanted <= set(dir(executor)) | {"workers", "description"}  # attributes an instance sets


def test_the_session_asks_its_executor_and_never_probes_it():
    tree = ast.parse(SESSION.read_text())
    probes = [node.lineno for node in ast.walk(tree)
              if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
              and node.func.id in ("getattr", "hasattr") and node.args
              and isinstance(node.args[0], ast.Name) and node.args[0].id == "executor"]
    assert probes == []


def test_a_worker_derives_a_jobs_board_seeds_from_its_schedule_entry():
    spec = MatchSpec(3, "pagat", 0, 1, 2, 99, ("a", "b", "c"), 6, boards=True)
    seats = tuple(seat_record(a, "random", {}, 7) for a in "abc")
    job = Job(index=3, seed=99, variant="pagat", rules=make_rules("pagat"), seats=seats, hands=6, spec=spec)
    assert job.deal_boards() == board_seeds(99, 6) and job.by_boards
    plain = dataclasses.replace(job, spec=dataclasses.replace(spec, boards=False))
    assert plain.deal_boards() is None and not plain.by_boards
    given = dataclasses.replace(plain, boards=(1, 2, 3, 4, 5, 6))
    assert given.deal_boards() == (1, 2, 3, 4, 5, 6) and given.by_boards
