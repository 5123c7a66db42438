"""Tournament files: every way a file can be wrong, good files, the schedule, the starter."""

import dataclasses
import hashlib
import itertools
import json
import pickle
import random
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import pytest

from naparena.arena.setup.reader import check_bots, load_tournament, parse_tournament
from naparena.arena.setup.schedule import MatchSpec, bot_seed, derive_seed, schedule, tables, total_hands
from naparena.arena.setup.starter import starter_toml
from naparena.errors import ConfigError, PluginError
from naparena.game.rules import VARIANTS

TOURNAMENTS = Path(__file__).resolve().parent.parent / "tournaments"


class FakeBot:
    """Stands in for a registered bot class: typed params, PluginError naming the param."""

    params = {"samples": 32, "risk": 0.5}

    @classmethod
    def validate_params(cls, given):
        full = dict(cls.params)
        for key, value in given.items():
            expected = type(cls.params[key])
            if type(value) is not expected:
                raise PluginError(f"bot 'fake' parameter '{key}' must be {expected.__name__}, got {value!r}")
            full[key] = value
        return full

    @classmethod
    def not_played(cls, rules):
        return None  # plays every variant, as `Bot` does by default


class TerseBot:
    """A bot whose errors do not say which parameter is wrong."""

    @classmethod
    def validate_params(cls, given):
        if given:
            raise PluginError("bad parameters")
        return {}


REGISTRY = SimpleNamespace(bots={
    name: SimpleNamespace(cls=FakeBot) for name in ("heuristic", "random", "cautious", "bold")
} | {"terse": SimpleNamespace(cls=TerseBot)})

HEAD = '[tournament]\nname = "t"\n'
BOT = '[[bots]]\nname = "random"\n'
VARIANT = '[[variants]]\nname = "classic"\n'


def setting(line: str) -> str:
    return HEAD + line + "\n" + BOT + VARIANT


def bots(*blocks: str) -> str:
    return HEAD + "".join(f"[[bots]]\n{b}\n" for b in blocks) + VARIANT


def variants(*blocks: str, table: int = 4) -> str:
    return HEAD + f"table = {table}\n" + BOT + "".join(f"[[variants]]\n{b}\n" for b in blocks)


# (id, file text, key the error must name, what the message must say is wrong)
BAD_FILES = [
    ("no-tournament", BOT + VARIANT, "tournament", "missing"),
    ("tournament-not-table", "tournament = 3\n" + BOT + VARIANT, "tournament", "must be a table"),
    ("no-name", '[tournament]\nseed = 1\n' + BOT + VARIANT, "tournament.name", "missing"),
    ("name-with-slash", '[tournament]\nname = "my/run"\n' + BOT + VARIANT, "tournament.name",
     "letters, digits"),
    ("unknown-setting", setting("handz = 10"), "tournament.handz", "did you mean 'hands'"),
    ("bool-as-int", setting("hands = true"), "tournament.hands", "whole number, got true"),
    ("float-as-int", setting("hands = 2.5"), "tournament.hands", "whole number, got 2.5"),
    ("zero-hands", setting("hands = 0"), "tournament.hands", "from 1 to 1000000, got 0"),
    ("negative-seed", setting("seed = -1"), "tournament.seed", "from 0 to 2**63 - 1, got -1"),
    ("zero-seeds", setting("seeds = 0"), "tournament.seeds", "from 1 to 10000, got 0"),
    ("table-too-big", setting("table = 8"), "tournament.table", "from 2 to 7, got 8"),
    ("table-too-small", setting("table = 1"), "tournament.table", "from 2 to 7, got 1"),
    ("negative-workers", setting("workers = -2"), "tournament.workers", "from 0 to 256, got -2"),
    ("negative-stack", setting("stack = -5"), "tournament.stack", "from 0 to 1000000000, got -5"),
    ("int-as-bool", setting("duplicate = 1"), "tournament.duplicate", "true or false, got 1"),
    ("zero-timeout", setting("timeout = 0"), "tournament.timeout", "from 0.001 to 3600 seconds, got 0"),
    ("string-timeout", setting('timeout = "1s"'), "tournament.timeout", 'finite number, got "1s"'),
    ("infinite-timeout", setting("timeout = inf"), "tournament.timeout", "finite number, got inf"),
    ("zero-fault-share", setting("max_fault_share = 0"), "tournament.max_fault_share", "more than 0"),
    ("big-fault-share", setting("max_fault_share = 1.5"), "tournament.max_fault_share", "at most 1"),
    ("empty-log-dir", setting('log_dir = ""'), "tournament.log_dir", "must be a folder path: not empty"),
    ("int-bots-dir", setting("bots_dir = 3"), "tournament.bots_dir", "a string, got 3"),
    ("unknown-table", HEAD + BOT + VARIANT + '[[bot]]\nname = "x"\n', "bot", "did you mean 'bots'"),
    ("no-bots", HEAD + VARIANT, "bots", "missing"),
    ("bots-not-array", HEAD + '[bots]\nname = "random"\n' + VARIANT, "bots", "write [[bots]]"),
    ("bots-inside-tournament", HEAD + 'bots = [{ name = "random" }]\n' + VARIANT, "tournament.bots",
     "belongs at the top level"),
    ("bots-empty", "bots = []\n" + HEAD + VARIANT, "bots", "at least one"),
    ("bot-entry-not-table", "bots = [3]\n" + HEAD + VARIANT, "bots[1]", "must be a table"),
    ("bot-without-name", bots('alias = "x"'), "bots[1].name", "missing"),
    ("bot-name-not-string", bots("name = 7"), "bots[1].name", "non-empty string, got 7"),
    ("bot-unknown-key", bots('name = "random"\naliass = "r"'), "bots[1].aliass", "did you mean 'alias'"),
    ("same-bot-twice", bots('name = "random"', 'name = "random"'), "bots[2].alias", "bots[1]"),
    ("same-alias-twice", bots('name = "random"\nalias = "x"', 'name = "bold"\nalias = "x"'),
     "bots[2].alias", "'x' is already the seat name of bots[1]"),
    ("alias-with-space", bots('name = "random"\nalias = "my bot"'), "bots[1].alias", "letters, digits"),
    ("params-not-table", bots('name = "random"\nparams = 3'), "bots[1].params", "must be a table"),
    ("unknown-bot", bots('name = "random"', 'name = "heuristc"'), "bots[2].name",
     "unknown bot 'heuristc' (did you mean 'heuristic'?); "
     "available: bold, cautious, heuristic, random, terse"),
    ("unknown-param", bots('name = "random"\nparams = { sampels = 8 }'), "bots[1].params.sampels",
     "did you mean 'samples'"),
    ("bad-param-type", bots('name = "random"\nparams = { samples = "many" }'), "bots[1].params.samples",
     "must be int"),
    ("bad-param-unnamed", bots('name = "terse"\nparams = { x = 1 }'), "bots[1].params", "bad parameters"),
    ("no-variants", HEAD + BOT, "variants", "missing"),
    ("variants-not-array", HEAD + BOT + '[variants]\nname = "classic"\n', "variants", "write [[variants]]"),
    ("unknown-variant", variants('name = "clasic"'), "variants[1].name",
     "unknown variant 'clasic' (did you mean 'classic'?)"),
    ("variant-bad-name", variants('name = "my variant"\nbase = "classic"'), "variants[1].name",
     "letters, digits"),
    ("overrides-without-base", variants('name = "pagat"\nbids = ["three", "four"]'), "variants[1].bids",
     "explicit base"),
    ("unknown-base", variants('name = "mine"\nbase = "pagatt"'), "variants[1].base",
     "unknown base variant 'pagatt' (did you mean 'pagat'?)"),
    ("base-not-string", variants('name = "mine"\nbase = 1'), "variants[1].base", "non-empty string"),
    ("named-variant-with-base", variants('name = "classic"\nbase = "pagat"'), "variants[1].name",
     "'classic' is a named variant"),
    ("same-variant-twice", variants('name = "classic"', 'name = "pagat"', 'name = "classic"'),
     "variants[3].name", "already variants[1]"),
    ("bad-rules-value", variants('name = "mine"\nbase = "classic"\npack = 17'), "variants[1].pack",
     "17 is not allowed"),
    ("unknown-rules-option", variants('name = "classic"', 'name = "mine"\nbase = "classic"\npakc = 24'),
     "variants[2].pakc", "did you mean 'pack'"),
    ("unknown-bid", variants('name = "mine"\nbase = "classic"\nbids = ["three", "grand"]'),
     "variants[1].bids", "'grand' is not a bid"),
    ("table-too-small-for-variant", variants('name = "floater"', table=2), "variants[1]",
     "cannot deal a table of 2"),
    ("pack-too-small-for-table", variants('name = "mine"\nbase = "sir-garnet"\npack = 24', table=4),
     "variants[1].pack", "24-card pack"),
    ("sprt-unknown-bot", HEAD + BOT + VARIANT + '[sprt]\na = "random"\nb = "rando"\ndelta = 5.0\n',
     "sprt.b", "'rando' is not a bot of this tournament"),
    ("sprt-no-delta", HEAD + bots('name = "random"', 'name = "bold"').split(HEAD)[1]
     + '[sprt]\na = "random"\nb = "bold"\n',
     "sprt.delta", "missing"),
    ("sprt-bad-alpha", HEAD + bots('name = "random"', 'name = "bold"').split(HEAD)[1]
     + '[sprt]\na = "random"\nb = "bold"\ndelta = 5\nalpha = 0.7\n', "sprt.alpha", "between 0 and 0.5"),
    ("sprt-same-bot", HEAD + BOT + VARIANT + '[sprt]\na = "random"\nb = "random"\ndelta = 5.0\n',
     "sprt.b", "different bot"),
    ("syntax-error", '[tournament]\nname = "t\n', "", "TOML syntax error at line 2, column 10"),
    ("missing-value", '[tournament]\nname = "t"\nhands = \n', "", "line 3, column 9: Invalid value"),
]


@pytest.mark.parametrize("text, key, wrong", [c[1:] for c in BAD_FILES], ids=[c[0] for c in BAD_FILES])
def test_bad_file_names_file_key_and_problem(tmp_path, text, key, wrong):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as caught:
        load_tournament(path, REGISTRY)
    err = caught.value
    assert err.path == str(path)
    assert err.key == key
    assert wrong in err.message
    shown = str(err)
    assert shown.startswith(f"{path}: ")
    assert f": {key}: " in shown if key else wrong in shown


def test_there_are_at_least_fifteen_distinct_bad_files():
    assert len({c[1] for c in BAD_FILES}) >= 15
    assert len({c[0] for c in BAD_FILES}) == len(BAD_FILES)


def test_missing_file(tmp_path):
    path = tmp_path / "nowhere.toml"
    with pytest.raises(ConfigError, match="no such tournament file") as caught:
        load_tournament(path)
    assert caught.value.path == str(path)


def test_folder_is_not_a_file(tmp_path):
    with pytest.raises(ConfigError, match="is a folder"):
        load_tournament(tmp_path)


def test_file_that_is_not_utf8(tmp_path):
    path = tmp_path / "latin.toml"
    path.write_bytes(b'[tournament]\nname = "caf\xe9"\n')
    with pytest.raises(ConfigError, match="not UTF-8"):
        load_tournament(path)


# --- good files ------------------------------------------------------------------------

FULL = """
[tournament]
name = "quickstart"
seed = 2026
seeds = 4
hands = 250
table = 4
duplicate = true
workers = 0
stack = 0
timeout = 1.0
max_fault_share = 0.25
bots_dir = "bots"
log_dir = "logs"

[[bots]]
name = "heuristic"
[[bots]]
name = "random"
alias = "rnd"
params = {}
[[bots]]
name = "random"
alias = "rnd-64"
params = { samples = 64 }

[[variants]]
name = "classic"
[[variants]]
name = "house"
base = "classic"
bids = ["two", "three", "mis", "four", "nap", "wellington"]
payouts = "pagat"
"""


def test_full_file_parses_every_key(tmp_path):
    path = tmp_path / "sub" / "full.toml"
    path.parent.mkdir()
    path.write_text(FULL)
    t = load_tournament(path, REGISTRY)
    assert (t.name, t.seed, t.seeds, t.hands, t.table) == ("quickstart", 2026, 4, 250, 4)
    assert (t.duplicate, t.workers, t.stack, t.timeout, t.max_fault_share) == (True, 0, 0, 1.0, 0.25)
    assert t.path == str(path)
    assert t.bots_path == Path("bots")  # none beside the file: ./bots, where naparena bots looks too
    (path.parent / "bots").mkdir()
    assert t.bots_path == path.parent / "bots"
    assert t.log_path == Path("logs")
    assert [(b.name, b.alias) for b in t.bots] == [("heuristic", "heuristic"), ("random", "rnd"),
                                                   ("random", "rnd-64")]
    # with a registry, params are the bot's full validated set
    assert t.bots[0].params == {"samples": 32, "risk": 0.5}
    assert t.bots[2].params == {"samples": 64, "risk": 0.5}
    classic, house = t.variants
    assert (classic.name, classic.base, classic.overrides) == ("classic", "classic", {})
    named = VARIANTS["classic"].options
    assert classic.rules.as_dict() == dict(named, bids=list(named["bids"]))
    assert (house.name, house.base) == ("house", "classic")
    assert house.overrides == {"bids": ["two", "three", "mis", "four", "nap", "wellington"],
                               "payouts": "pagat"}
    assert house.rules.bids == ("two", "three", "mis", "four", "nap", "wellington")
    assert house.rules.payouts == "pagat"
    assert t.variant("house") is house
    with pytest.raises(dataclasses.FrozenInstanceError):
        t.hands = 1


def test_defaults_fill_every_optional_key():
    t = parse_tournament(HEAD + BOT + VARIANT, "t.toml")
    assert (t.seed, t.seeds, t.hands, t.table, t.duplicate) == (0, 1, 100, 4, True)
    assert (t.workers, t.stack, t.timeout, t.max_fault_share) == (0, 0, 1.0, 0.25)
    assert (t.bots_dir, t.log_dir) == ("bots", "logs")


def test_whole_number_timeout_is_a_float():
    t = parse_tournament(setting("timeout = 2"), "t.toml")
    assert t.timeout == 2.0 and isinstance(t.timeout, float)


def test_without_registry_params_stay_as_written_and_check_bots_fills_them():
    t = parse_tournament(bots('name = "random"\nparams = { samples = 8 }'), "t.toml")
    assert t.bots[0].params == {"samples": 8}
    checked = check_bots(t, REGISTRY)
    assert checked.bots[0].params == {"samples": 8, "risk": 0.5}
    with pytest.raises(ConfigError) as caught:
        check_bots(parse_tournament(bots('name = "nobody"'), "t.toml"), REGISTRY)
    assert caught.value.key == "bots[1].name"


def test_parses_an_already_parsed_mapping():
    data = {"tournament": {"name": "t", "hands": 3}, "bots": [{"name": "random"}],
            "variants": [{"name": "peel"}]}
    t = parse_tournament(data, "")
    assert (t.hands, t.variants[0].rules.deal) == (3, "1")
    with pytest.raises(ConfigError) as caught:
        parse_tournament({**data, "tournament": {"name": "t", "hands": -1}}, "")
    assert caught.value.key == "tournament.hands"


def test_as_dict_is_json_and_leaves_out_the_path():
    t = parse_tournament(FULL, "somewhere/full.toml", REGISTRY)
    d = json.loads(json.dumps(t.as_dict()))
    assert "path" not in d
    assert d["hands"] == 250
    assert d["bots"][1] == {"name": "random", "alias": "rnd", "params": {"samples": 32, "risk": 0.5}}
    assert d["variants"][1]["rules"]["payouts"] == "pagat"


@pytest.mark.parametrize("name", ["quickstart", "all-variants", "duplicate", "no-duplicate"])
def test_shipped_tournaments_load(name):
    t = load_tournament(TOURNAMENTS / f"{name}.toml", REGISTRY)
    assert t.name == name
    assert total_hands(t) == sum(m.hands for m in schedule(t))


def test_shipped_tournament_budgets():
    load = lambda name: load_tournament(TOURNAMENTS / f"{name}.toml", REGISTRY)  # noqa: E731
    quick = load("quickstart")
    assert {b.name for b in quick.bots} == {"heuristic", "random", "cautious", "bold"}
    assert [v.name for v in quick.variants] == ["classic", "pagat"]
    assert (quick.table, quick.duplicate, quick.seeds, total_hands(quick)) == (4, True, 8, 57_600)
    every = load("all-variants")
    assert [v.name for v in every.variants] == list(VARIANTS)
    assert {b.name for b in every.bots} == {"random", "heuristic"}
    dup, plain = load("duplicate"), load("no-duplicate")
    assert (dup.duplicate, plain.duplicate) == (True, False)
    assert dup.bots == plain.bots and dup.hands == plain.hands
    assert total_hands(dup) == total_hands(plain)
    assert len(schedule(dup)) == len(schedule(plain))


# --- the schedule ------------------------------------------------------------------------

def make(n_bots=4, table=4, duplicate=True, seeds=1, variant_names=("classic",), seed=2026, hands=10):
    text = (f'[tournament]\nname = "s"\nseed = {seed}\nseeds = {seeds}\nhands = {hands}\n'
            f"table = {table}\nduplicate = {str(duplicate).lower()}\n")
    text += "".join(f'[[bots]]\nname = "random"\nalias = "b{i}"\n' for i in range(n_bots))
    text += "".join(f'[[variants]]\nname = "{v}"\n' for v in variant_names)
    return parse_tournament(text, "s.toml")


def test_more_bots_than_seats_plays_every_combination():
    t = make(n_bots=6, table=4, variant_names=("classic", "pagat"), seeds=2)
    aliases = [f"b{i}" for i in range(6)]
    assert tables(t) == list(itertools.combinations(aliases, 4))
    matches = schedule(t)
    assert len(matches) == 2 * 2 * 15 * 24  # variants x streams x tables x seatings of four
    per_table = {(m.variant, m.stream, m.table_no): set(m.seats) for m in matches}
    assert len(per_table) == 2 * 2 * 15
    combinations = {frozenset(c) for c in itertools.combinations(aliases, 4)}
    assert {frozenset(s) for s in per_table.values()} == combinations


def test_exactly_table_bots_is_one_table():
    t = make(n_bots=5, table=5)
    assert tables(t) == [("b0", "b1", "b2", "b3", "b4")]
    assert len(schedule(t)) == 20  # 4 cyclic orders of five, each in 5 rotations


def test_fewer_bots_than_seats_fill_seats_cyclically():
    t = make(n_bots=3, table=5)
    assert tables(t) == [("b0", "b1", "b2", "b0", "b1")]
    matches = schedule(t)
    # 4 orders x 5 rotations of slots (b0 b1 b2 b0 b1); each distinct seating comes up
    # once, so none is dropped
    assert len(matches) == 20 == len({m.seats for m in matches})


def test_seatings_repeating_equally_often_are_played_once():
    t = make(n_bots=2, table=4)
    matches = schedule(t)
    # the 24 seatings of (b0 b1 b0 b1) are the 6 arrangements of two b0 and two b1, 4 times each
    assert sorted(m.seats for m in matches) == sorted(set(itertools.permutations(("b0", "b0", "b1", "b1"))))
    assert [m.rotation for m in matches] == list(range(6))
    assert total_hands(t) == 6 * t.hands
    held = Counter((alias, seat) for m in matches for seat, alias in enumerate(m.seats))
    assert set(held.values()) == {3} and len(held) == 2 * 4  # each bot in each seat alike


def test_seatings_repeating_unequally_are_all_played():
    # (b0 b1 b2 b0 b1 b2) under the 20 orders of six: distinct seatings come up unequally
    # often, and every cyclic order gives fewer (90 distinct, 8 times each)
    t = make(n_bots=3, table=6)
    assert len(schedule(t)) == 90 == len({m.seats for m in schedule(t)})
    t = make(n_bots=4, table=6)  # (b0 b1 b2 b3 b0 b1): the 20 orders, none dropped
    assert len(schedule(t)) == 120 > len({m.seats for m in schedule(t)})


@pytest.mark.parametrize("n_bots, table, seatings", [(4, 4, 24), (5, 3, 6), (7, 7, 42), (3, 2, 2)])
def test_duplicate_seatings_share_a_seed_per_cyclic_order_and_seat_each_bot_everywhere_alike(n_bots, table, seatings):
    # With duplicate, each cyclic order's `table` rotations replay one deal set: every bot
    # holds each deal in every seat once, and the table's orders balance the offsets.
    t = make(n_bots=n_bots, table=table, seeds=2)
    tables: dict = {}
    for m in schedule(t):
        tables.setdefault((m.variant, m.stream, m.table_no), []).append(m)
    for group in tables.values():
        assert len(group) == seatings
        assert [m.rotation for m in group] == list(range(seatings))
        assert [m.deal_set for m in group] == [r // table for r in range(seatings)]
        for seat in range(table):
            assert Counter(m.seats[seat] for m in group) == dict.fromkeys(group[0].seats, seatings // table)
        for d in range(seatings // table):
            deal_set = [m for m in group if m.deal_set == d]
            assert len({m.seed for m in deal_set}) == 1
            for seat in range(table):
                assert sorted(m.seats[seat] for m in deal_set) == sorted(group[0].seats)
    # different deal sets, tables and streams get different deals
    seeds = {(m.variant, m.stream, m.table_no, m.deal_set): m.seed for m in schedule(t)}
    assert len(set(seeds.values())) == len(seeds)


def test_a_table_whose_bots_repeat_is_one_deal_set():
    # Two bots in four seats: the 6 distinct seatings, not 6 orders' rotations, so one deal set.
    t = make(n_bots=2, table=4)
    assert {m.deal_set for m in schedule(t)} == {0} and len({m.seed for m in schedule(t)}) == 1


def test_without_duplicate_every_match_has_its_own_seed():
    t = make(n_bots=6, table=4, duplicate=False, seeds=3, variant_names=("classic", "peel"))
    matches = schedule(t)
    assert len(matches) == 2 * 3 * 15 * 24  # every seating of the design, each on its own deals
    assert {m.rotation for m in matches} == set(range(24))
    assert len({m.seed for m in matches}) == len(matches)


def test_seeds_differ_across_streams_variants_and_tables():
    t = make(n_bots=5, table=4, seeds=3, variant_names=("classic", "pagat", "peel"))
    seeds = {(m.variant, m.stream, m.table_no): m.seed for m in schedule(t)}
    assert len(seeds) == 3 * 3 * 5
    assert len(set(seeds.values())) == len(seeds)


def test_order_is_variant_stream_table_rotation_and_index_dense():
    t = make(n_bots=5, table=4, seeds=2, variant_names=("pagat", "classic"))
    matches = schedule(t)
    assert [m.index for m in matches] == list(range(len(matches)))
    keys = [(("pagat", "classic").index(m.variant), m.stream, m.table_no, m.rotation) for m in matches]
    assert keys == sorted(keys)
    assert all(m.hands == t.hands for m in matches)


def test_schedule_is_identical_across_calls_and_ignores_the_global_rng():
    t = make(n_bots=5, table=4, seeds=2, variant_names=("classic", "pagat"))
    random.seed(1)
    first = schedule(t)
    state = random.getstate()
    random.seed(99999)
    random.random()
    second = schedule(t)
    assert first == second
    random.setstate(state)
    schedule(t)
    assert random.getstate() == state  # schedule draws nothing from the global RNG


def test_master_seed_changes_every_deal():
    a, b = schedule(make(seed=1)), schedule(make(seed=2))
    assert {m.seed for m in a}.isdisjoint({m.seed for m in b})


def test_adding_a_variant_keeps_the_other_variants_deals():
    one = schedule(make(variant_names=("classic",)))
    two = schedule(make(variant_names=("pagat", "classic")))
    assert [m.seed for m in one] == [m.seed for m in two if m.variant == "classic"]


def test_derive_seed_follows_the_documented_formula():
    expected = int.from_bytes(hashlib.blake2b(b"2026|deal|classic|1|3").digest()[:8], "big")
    assert derive_seed(2026, "deal", "classic", 1, 3) == expected
    assert 0 <= expected < 2**64
    t = make(seeds=2)
    m = next(m for m in schedule(t) if m.stream == 1)
    assert m.seed == derive_seed(2026, "deal", "classic", 1, 0)
    plain = schedule(make(duplicate=False))
    assert plain[0].seed == derive_seed(2026, "deal", "classic", 0, 0, 0)


def test_bot_seeds_differ_by_match_and_seat():
    assert bot_seed(7, 3, 1) == derive_seed(7, "bot", 3, 1)
    seeds = {bot_seed(7, i, seat) for i in range(20) for seat in range(7)}
    assert len(seeds) == 20 * 7


def test_match_spec_is_plain_data():
    m = schedule(make())[1]
    assert pickle.loads(pickle.dumps(m)) == m
    d = json.loads(json.dumps(m.as_dict()))
    assert d == {"index": 1, "variant": "classic", "stream": 0, "table_no": 0, "rotation": 1,
                 "seed": m.seed, "seats": ["b1", "b2", "b3", "b0"], "hands": 10}
    assert MatchSpec(**{**d, "seats": tuple(d["seats"])}) == m


@pytest.mark.parametrize("n_bots, table, duplicate, seeds", [
    (4, 4, True, 2), (6, 4, True, 1), (6, 4, False, 3), (2, 4, True, 1), (3, 5, True, 2), (1, 3, True, 1),
])
def test_total_hands_counts_the_schedule(n_bots, table, duplicate, seeds):
    t = make(n_bots=n_bots, table=table, duplicate=duplicate, seeds=seeds, variant_names=("classic", "peel"))
    assert total_hands(t) == sum(m.hands for m in schedule(t)) > 0


# --- the starter file ------------------------------------------------------------------

def test_starter_round_trips():
    names = ["heuristic", "random", "cautious", "bold"]
    text = starter_toml(names, list(VARIANTS))
    t = parse_tournament(text, "starter.toml", REGISTRY)
    assert [b.name for b in t.bots] == ["heuristic", "random"]
    assert [v.name for v in t.variants] == ["classic", "pagat"]
    assert (t.name, t.hands, t.table, t.duplicate) == ("starter", 35, 4, True)
    header = text.split("\n[tournament]")[0]
    assert all(line.startswith("#") for line in header.splitlines() if line)
    for key in ("seed", "seeds", "hands", "table", "duplicate", "workers", "stack", "timeout",
                "max_fault_share", "bots_dir", "log_dir"):
        assert f"#   {key} " in header
        assert f"\n{key} = " in text
    assert "bold" in header and "floater" in header  # every available choice is listed
    assert "[[bots]]\nname = " in text


def test_starter_with_one_bot_and_no_classic():
    t = parse_tournament(starter_toml(["random"], ["peel"], name="mine"), "s.toml")
    assert [b.name for b in t.bots] == ["random"]
    assert [v.name for v in t.variants] == ["peel"]
    assert t.name == "mine"


def test_starter_needs_a_bot():
    with pytest.raises(ConfigError, match="no bots"):
        starter_toml([], list(VARIANTS))
