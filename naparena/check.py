"""Pre-flight for one bot (`naparena check`): play it through every named variant on fixed
seeded deals against `random` bots and report illegal answers, exceptions and decision times."""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field

from .bench import default_players
from .engine import Match
from .errors import RulesError
from .play import fault_kind
from .rules import VARIANTS, make_rules
from .tournament import derive_seed

CHECK_SEED = 2026  # fixed, so every check of a bot sees the same positions


@dataclass
class VariantCheck:
    variant: str
    players: int
    hands: int = 0
    decisions: int = 0
    faults: dict[str, int] = field(default_factory=dict)
    first_error: str = ""
    times: list[float] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.faults

    def percentile(self, q: float) -> float:
        if not self.times:
            return 0.0
        ordered = sorted(self.times)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def check_bot(registry, name: str, params: dict | None = None, hands: int = 30,
              timeout: float = 1.0, variants: list[str] | None = None) -> list[VariantCheck]:
    """Play `name` in seat 0 of every variant; its faults and decision times per variant."""
    entry = registry.get(name)
    params = entry.cls.validate_params(params or {})
    results = []
    for variant in variants or list(VARIANTS):
        players = default_players(variant)
        results.append(_check_variant(registry, name, params, variant, players, hands, timeout))
    return results


def _check_variant(registry, name, params, variant, players, hands, timeout) -> VariantCheck:
    rules = make_rules(variant)
    try:
        rules.check_players(players)
    except RulesError as e:  # pragma: no cover - default_players only returns dealable tables
        raise RulesError(e.option, f"{variant}: {e.message}") from None
    seed = derive_seed(CHECK_SEED, "check", variant)
    bots = [registry.make(name, params, random.Random(seed), 0)]
    bots += [registry.make("random", {}, random.Random(seed + s), s) for s in range(1, players)]
    report = VariantCheck(variant, players)
    match = Match(rules, players, seed)
    for _ in range(hands):
        hand = match.next_hand()
        while not hand.over:
            seat = hand.to_act
            if seat == 0:
                _ask(hand, bots[0], report, timeout)
            else:
                hand.apply(getattr(bots[seat], hand.kind)(hand.view()))
        for _, seat, kind, reason in hand.record().get("faults", ()):
            if seat == 0:
                key = fault_kind(reason)
                report.faults[key] = report.faults.get(key, 0) + 1
                report.first_error = report.first_error or f"hand {hand.hand_no}, {kind}: {reason}"
        match.finish(hand)
        report.hands += 1
    return report


def _ask(hand, bot, report: VariantCheck, timeout: float) -> None:
    report.decisions += 1
    start = time.perf_counter()
    try:
        answer = getattr(bot, hand.kind)(hand.view())
    except Exception as e:
        report.times.append(time.perf_counter() - start)
        return hand.fault(f"exception: {type(e).__name__}: {str(e)[:200]}")
    took = time.perf_counter() - start
    report.times.append(took)
    if took > timeout:
        return hand.fault(f"time-out: no answer within {timeout:g} s")
    hand.apply(answer)
