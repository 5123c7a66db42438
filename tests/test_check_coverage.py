"""`naparena check` says which decision kinds a bot was asked, per variant and table size,
and `--thorough N` deals on until each kind the variant has was asked N times."""

from __future__ import annotations

import pytest

from naparena import Bot, hookimpl
from naparena.arena.setup.settings import Isolation
from naparena.bots.plugins import load_registry
from naparena.game.engine import DECISION_KINDS
from naparena.game.rules import VARIANTS, make_rules
from naparena.tools import check
from naparena.tools.check import check_bot, variant_kinds
from tests.helpers import flat, invoke


class Passer(Bot):
    """Never bids: so never asked what only a bidder is asked."""

    name = "passer"

    def bid(self, view):
        return "pass"

    def play(self, view):
        return view.legal[0]


class PasserPlugin:
    @hookimpl
    def register_bots(self, register):
        register(Passer)


def test_every_kind_a_variant_has_is_asked_and_no_other():
    """The variant's kinds, from its rules, are exactly what `random` is asked when dealt
    long enough: a kind listed but unreachable, or asked but unlisted, fails here."""
    results = check_bot(load_registry(None), "random", hands=10, thorough=2)
    assert [r.variant for r in results] == list(VARIANTS)
    for r in results:
        assert r.kinds == variant_kinds(make_rules(r.variant))
        for players in r.players:
            asked = r.asked[players]
            assert {k for k, n in asked.items() if n} == set(r.kinds), (r.variant, players, asked)
            assert all(asked[k] >= 2 for k in r.kinds), (r.variant, players, asked)
        assert sum(sum(a.values()) for a in r.asked.values()) == r.decisions
    assert {k for r in results for k in r.kinds} == set(DECISION_KINDS), "every kind exists in some variant"


def test_without_thorough_the_hands_asked_for_are_dealt_and_counted():
    [r] = check_bot(load_registry(None), "random", hands=4, variants=["floater"])
    assert r.hands == 4 * len(r.players)
    assert sum(sum(a.values()) for a in r.asked.values()) == r.decisions
    assert r.short(1), "four hands a table do not reach every floater decision"


def test_thorough_gives_up_at_its_cap_on_a_kind_the_bots_play_never_reaches(monkeypatch):
    monkeypatch.setattr(check, "THOROUGH_MAX_HANDS", 60)
    registry = load_registry(None, extra_plugins=[PasserPlugin()])
    [r] = check_bot(registry, "passer", hands=10, variants=["peep"], thorough=3)
    assert r.hands == 60 * len(r.players), "dealt up to the cap, in rounds of 10"
    for players in r.players:
        assert r.asked[players]["peep_exchange"] == 0
        assert r.asked[players]["peep"] >= 3 and r.asked[players]["bid"] >= 3
    assert r.short(3) == {players: ["peep_exchange"] for players in r.players}


def test_check_prints_the_coverage_and_names_what_was_never_asked():
    result = invoke("check", "random", "--hands", "3", env={"COLUMNS": "120"})
    assert result.exit_code == 0, result.output
    out = flat(result.output)
    assert "random: decisions asked, by kind" in out
    assert "pexch = peep_exchange" in out
    assert "was never asked some decision kinds" in out and "--thorough N" in out


def test_thorough_on_the_command_line_reaches_every_kind():
    result = invoke("check", "random", "--hands", "10", "--thorough", "2", env={"COLUMNS": "120"})
    assert result.exit_code == 0, result.output
    out = flat(result.output)
    assert "asked fewer than 2 times" in out
    assert "never asked" not in out and "warning" not in out


def test_thorough_must_be_a_positive_count():
    result = invoke("check", "random", "--thorough", "0")
    assert result.exit_code == 2


@pytest.mark.slow
def test_a_seat_process_is_counted_as_an_inline_bot_is():
    registry = load_registry(None)
    [inline] = check_bot(registry, "random", hands=3, variants=["peep"])
    [process] = check_bot(registry, "random", hands=3, variants=["peep"], isolation=Isolation.PROCESS)
    assert sum(sum(a.values()) for a in process.asked.values()) == process.decisions > 0
    assert {p: dict(a) for p, a in process.asked.items()} == {p: dict(a) for p, a in inline.asked.items()}
