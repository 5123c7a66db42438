"""The seat protocol: real traffic of real seat processes validated against the shipped
JSON Schemas, views and answers that survive the wire unchanged, and protocol violations
reported with the offending line."""

from __future__ import annotations

import functools
import json
import random
import sys
from collections import Counter
from pathlib import Path

import jsonschema
import orjson
import pytest
from typer.testing import CliRunner

from naparena.arena.session import Session
from naparena.arena.setup.reader import parse_tournament
from naparena.bots import protocol
from naparena.bots.bot import DECISIONS
from naparena.cli import app
from naparena.game.engine import DECISION_KINDS, Match
from naparena.game.rules import VARIANTS, make_rules

HERE = Path(__file__).resolve().parent
SCHEMAS = HERE.parent / "naparena" / "schemas"
TAP, ROGUE = HERE / "seat_programs" / "tap.py", HERE / "seat_programs" / "rogue.py"
BOTS_DIR = HERE / "bots_seat"
TO_BOT = {"hello", "match", "hand_start", "decide", "event", "hand_end", "match_end", "shutdown"}
FROM_BOT = {"hello": "bot_hello", "answer": "answer", "error": "error"}


@functools.cache
def validator(name: str) -> jsonschema.Draft202012Validator:
    schema = json.loads((SCHEMAS / "protocol" / f"{name}.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def play(config: dict, run_dir: Path, workers: int = 2) -> dict:
    t = parse_tournament(config, run_dir.parent / "tournament.toml")
    return Session.open(t, run_dir, workers=workers).play()


def tapped(record: Path, *command: str) -> list[str]:
    return [sys.executable, str(TAP), str(record), "--", *command]


def serve(bot: str) -> list[str]:
    return [sys.executable, "-m", "naparena.bots.serve", bot, "--bots-dir", str(BOTS_DIR)]


@pytest.mark.slow
def test_every_message_of_real_traffic_matches_its_schema(tmp_path):
    """Two tapped seat processes (one asking for events and hand starts) and an inline bot
    play every named variant on two workers, in the 6 seatings of a table of three; every
    line either way is validated."""
    record = tmp_path / "traffic.jsonl"
    config = {"tournament": {"name": "wire", "seed": 5, "hands": 3, "table": 3, "duplicate": False,
                             "workers": 2, "timeout": 20.0, "bots_dir": str(BOTS_DIR)},
              "bots": [{"name": "listener", "command": tapped(record, *serve("listener"))},
                       {"name": "random", "alias": "rnd", "command": tapped(record, *serve("random"))},
                       {"name": "heuristic"}],
              "variants": [{"name": v} for v in VARIANTS],
              "seats": {"sandbox": "off"}}  # the taps write their record outside any seat's own folder
    result = play(config, tmp_path / "run")
    assert result["matches"] == 6 * len(VARIANTS)
    for v in VARIANTS:  # the tapped bots answered every decision themselves
        rows = {r["bot"]: r for r in result["variants"][v]["bots"]}
        assert rows["listener"]["faults"] == {} and rows["rnd"]["faults"] == {}

    checks = {name: validator(name) for name in TO_BOT | set(FROM_BOT.values())}
    seen, kinds = Counter(), Counter()
    for entry in map(json.loads, record.read_text().splitlines()):
        message = json.loads(entry["line"])
        name = message["type"] if entry["to"] == "bot" else FROM_BOT[message["type"]]
        errors = [e.message for e in checks[name].iter_errors(message)]
        assert not errors, f"{entry['to']}: {entry['line'][:300]} → {errors[:3]}"
        seen[(entry["to"], name)] += 1
        if name == "decide":
            kinds[message["view"]["kind"]] += 1
    assert {n for to, n in seen if to == "bot"} == TO_BOT
    assert {n for to, n in seen if to == "match"} == {"bot_hello", "answer"}
    assert set(kinds) == set(DECISIONS), "every decision kind went over the wire"
    assert seen[("bot", "decide")] == seen[("match", "answer")]


def test_invalid_messages_fail_their_schemas():
    """The schemas are not vacuous: each refuses a near miss."""
    assert list(validator("answer").iter_errors({"type": "answer", "answer": 52}))
    assert list(validator("answer").iter_errors({"type": "answer"}))
    assert list(validator("bot_hello").iter_errors({"type": "hello", "protocol": 2, "name": "x"}))
    assert list(validator("decide").iter_errors({"type": "decide", "view": {"kind": "bid"}}))


def _views(variant: str, hands: int = 8):
    """Every acting view of a few hands of random play in `variant`."""
    rules = make_rules(variant)
    match, rng = Match(rules, 4, 7), random.Random(3)
    for _ in range(hands):
        hand = match.next_hand()
        while not hand.over:
            view = hand.view()
            yield rules, view
            hand.apply(rng.choice(view.legal))
        match.finish(hand)


def _shape(value):
    """A value's exact types, all the way down."""
    if isinstance(value, tuple):
        return ("tuple", tuple(_shape(v) for v in value))
    return type(value).__name__


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_a_view_crosses_the_wire_unchanged(variant):
    """What a seat process rebuilds is the very `View` an inline bot gets, types included,
    and every legal answer survives the trip back."""
    for rules, view in _views(variant):
        message = orjson.loads(protocol.request(view))
        assert not list(validator("decide").iter_errors(message))
        again = protocol.read_view(message["view"], rules)
        assert again == view and _shape(tuple(again)) == _shape(tuple(view))
        for answer in view.legal:
            sent, error = protocol.read_answer(protocol.answer(answer))
            assert error is None and sent == answer and type(sent) is type(answer)


def test_the_protocol_schemas_use_the_logs_encoding():
    """Cards, seats, bids and rules are the match log's definitions, not copies that drift."""
    logs = json.loads((SCHEMAS / "match.schema.json").read_text())["$defs"]
    shared = {"card", "seat", "suit", "bid", "contract", "rules", "trick", "name"}
    for path in sorted((SCHEMAS / "protocol").glob("*.json")):
        defs = json.loads(path.read_text()).get("$defs", {})
        for name in shared & set(defs):
            assert defs[name] == logs[name], f"{path.name}: {name}"
    decide = json.loads((SCHEMAS / "protocol" / "decide.json").read_text())["$defs"]
    assert {"card", "seat", "suit", "bid", "contract"} <= set(decide)
    assert "rules" in json.loads((SCHEMAS / "protocol" / "match.json").read_text())["$defs"]


@pytest.mark.parametrize("mode, shown", [
    ("stdout", "not a JSON line: 'thinking about"),
    ("malformed", "not a JSON line: '{\"type\":\"answer\",\"answer\":'"),
    ("wrong", "expected an answer message, got '{\"type\":\"hello\""),
    ("huge", "a line of more than 65536 bytes: b'{\"type\":\"answer\",\"answer\":\"xxx"),
])
def test_check_reports_a_protocol_violation_with_its_line(tmp_path, mode, shown):
    config = tmp_path / "t.toml"
    config.write_text(f'[tournament]\nname = "t"\ntimeout = 5.0\n[[bots]]\nname = "rogue"\n'
                      f'command = [{json.dumps(sys.executable)}, {json.dumps(str(ROGUE))}]\n'
                      f'params = {{ mode = "{mode}", every = 2, sleep = 0.0 }}\n'
                      '[[variants]]\nname = "classic"\n')
    result = CliRunner().invoke(app, ["check", "rogue", "--tournament", str(config), "--hands", "3", "--timeout", "10"])
    assert result.exit_code == 1, result.output
    assert "protocol: " in result.output and shown in " ".join(result.output.split())


def _kind_enums(node) -> list[list]:
    """Every enum in a schema that lists decision kinds (named by one only a kind has)."""
    if isinstance(node, dict):
        found = [node["enum"]] if "peep_exchange" in node.get("enum", ()) else []
        return found + [e for value in node.values() for e in _kind_enums(value)]
    if isinstance(node, list):
        return [e for value in node for e in _kind_enums(value)]
    return []


def test_the_schemas_list_the_engines_decision_kinds():
    """The kinds are listed once, in game/; every schema that names them says the same."""
    paths = sorted((SCHEMAS / "protocol").glob("*.json")) + [SCHEMAS / "match.schema.json"]
    found = {path.name: _kind_enums(json.loads(path.read_text())) for path in paths}
    assert found["decide.json"], "decide.json lists the kinds a view may ask for"
    for name, enums in found.items():
        for enum in enums:
            assert enum == list(DECISION_KINDS), name
    assert DECISIONS is DECISION_KINDS
    assert _kind_enums({"x": {"enum": ["bid", "peep_exchange"]}}) == [["bid", "peep_exchange"]]  # the control
