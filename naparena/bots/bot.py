"""The base class bot authors subclass: one method per decision kind, safe defaults.

A bot sees only the ``View`` for its seat and answers with one of ``view.legal``.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Literal, NotRequired, Required, TypedDict

from naparena.errors import PluginError
from naparena.game.engine import DECISION_KINDS
from naparena.game.rules import Rules

if TYPE_CHECKING:
    from naparena.game.view import View

#: Seconds a bot may take per decision where the tournament does not say (its `timeout`):
#: the tournament file's default, and what a bot assumes when it is never told.
DEFAULT_TIMEOUT = 1.0

#: Every decision kind the engine asks for (the engine's `DECISION_KINDS`); each is also
#: the name of a ``Bot`` method.
DECISIONS = DECISION_KINDS

# How a wrong-typed parameter is described to the person writing the tournament file.
_TYPE_WORDS = {
    bool: "true or false (bool)",
    int: "a whole number (int)",
    float: "a number (float)",
    str: "text (str)",
}


# The payloads of the lifecycle hooks: plain dicts at run time, typed for the checker. The
# reference page (naparena docs) lists their keys; tests/test_docs.py holds the two together.

Trick = tuple[int, tuple[tuple[int, int], ...], int]  # (leader, ((seat, card), …), winner)


class MatchInfo(TypedDict):
    """What `start_match(info)` receives: the public match information."""

    match: int           # the match's index in the tournament's schedule
    seat: int            # this bot's seat for the whole match
    seats: list[str]     # every seat's alias, by seat
    players: int
    rules: Rules
    hands: int
    timeout: float       # seconds allowed for each decision
    first_hand: int      # 0, or the hand a match resumed from its checkpoint goes on from


class HandRecord(TypedDict):
    """What `end_hand(record)` receives: the hand's public record (no deal, no private decisions)."""

    n: int
    dealer: int
    bids: tuple[tuple[int, str], ...]
    bidder: int | None
    contract: str | None
    trumps: int | None
    tricks: tuple[Trick, ...]
    trick: NotRequired[tuple[tuple[int, int], ...]]   # an unfinished trick, only if the hand ended early
    revoke: NotRequired[int]                          # the revoking seat, only after a revoke
    faults: NotRequired[tuple[tuple[int, int, str, str], ...]]  # (decision, seat, kind, fault kind)
    result: Literal["made", "lost", "revoke", "passed"]
    chips: tuple[int, ...]
    kitty: int


class Event(TypedDict, total=False):
    """What `observe(event)` receives: `type`, and that type's keys (a "settle" event holds
    every key of the hand's `HandRecord` as well)."""

    type: Required[Literal["bid", "peep", "exchange", "garnet", "trumps", "play", "trick", "settle"]]
    seat: int
    bid: str
    cards: int
    suit: int
    card: int
    leader: int
    winner: int
    n: int
    dealer: int
    bids: tuple[tuple[int, str], ...]
    bidder: int | None
    contract: str | None
    trumps: int | None
    tricks: tuple[Trick, ...]
    trick: tuple[tuple[int, int], ...]
    revoke: int
    faults: tuple[tuple[int, int, str, str], ...]
    result: Literal["made", "lost", "revoke", "passed"]
    chips: tuple[int, ...]
    kitty: int


def _rank(card: int) -> int:
    return card % 13


def _low_first(card: int) -> tuple[int, int]:
    # Rank decides; the card int only breaks ties so the choice never depends on order.
    return (_rank(card), card)


class Bot:
    """Subclass this: set ``name``, ``description``, ``params``; answer ``bid`` and ``play``."""

    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    #: Parameter name -> default (its type is the type a tournament file must give). Read-only
    #: to the checker: a subclass declares its own dict, never changes its base's (a plain dict
    #: still, so that the listings that print it as JSON keep working).
    params: ClassVar[Mapping[str, Any]] = {}
    #: Optional bounds of numeric parameters, name -> (lowest, highest), checked with the types.
    limits: ClassVar[Mapping[str, tuple[float, float]]] = {}

    def __init__(self, rng: random.Random, seat: int, **params: Any):
        # The runner seeds rng per (match seed, seat), so a bot's own randomness
        # never changes the deals or another bot's choices.
        self.rng = rng
        self.seat = seat
        for key, value in self.validate_params(params).items():
            setattr(self, key, value)

    @classmethod
    def validate_params(cls, given: Mapping[str, Any]) -> dict[str, Any]:
        """Return the full parameter dict (defaults overridden by ``given``).

        Raises ``PluginError`` naming the bot, the parameter and what is allowed.
        """
        full = dict(cls.params)
        for key, value in given.items():
            if key not in cls.params:
                raise PluginError(_unknown_param(cls, key))
            full[key] = _checked(cls, key, cls.params[key], value)
            _within(cls, key, full[key])
        return full

    @classmethod
    def not_played(cls, rules: Rules) -> str | None:
        """Why this bot does not play a game under `rules`, or None when it does (the
        default: every variant). A bot that declares a variant here is reported "not
        played" there by `naparena check`, and a tournament that seats it in such a
        variant is refused before play."""
        return None

    # Required decisions --------------------------------------------------------

    def bid(self, view: View[str]) -> str:
        """Return a bid name from ``view.legal``, e.g. ``"pass"`` or ``"three"``."""
        raise NotImplementedError(f"bot '{self.name}' must define bid(view)")

    def play(self, view: View[int]) -> int:
        """Return a card from ``view.legal``."""
        raise NotImplementedError(f"bot '{self.name}' must define play(view)")

    # Optional decisions: defaults that are always legal and never cost chips -----

    def peep(self, view: View[bool]) -> bool:
        """Peep Nap, before your bid: True to pay 1 and see the peep card. Default: decline."""
        return False

    def floater_peep(self, view: View[bool]) -> bool:
        """Nap with a floater, before your bid: True to pay 1 and see the floater. Default: decline."""
        return False

    def exchange(self, view: View[tuple[int, ...]]) -> tuple[int, ...]:
        """Purchase or Écarté Nap: the cards to throw out, from ``view.legal``. Default: none."""
        return ()

    def garnet(self, view: View[bool]) -> bool:
        """Sir Garnet: True to take up the extra hand (then you must bid Nap). Default: decline."""
        return False

    def garnet_discard(self, view: View[tuple[int, ...]]) -> tuple[int, ...]:
        """Keep the five highest-ranked of the ten cards; suits are ignored."""
        return tuple(sorted(sorted(view.hand, key=_low_first)[:5]))

    def peep_exchange(self, view: View[int | None]) -> int | None:
        """You won the bid and peeped: a hand card to give for the peep card, or None. Default: keep."""
        return None

    def floater_discard(self, view: View[int]) -> int:
        """You won a "with" bid and took the floater: the card to discard. Default: the lowest."""
        return min(view.legal, key=_low_first)

    def trumps(self, view: View[int]) -> int:
        """Name the legal suit we hold most of; ties go to the highest suit."""
        held = [card // 13 for card in view.hand]
        return max(view.legal, key=lambda s: (held.count(s), s))

    # Lifecycle hooks: no-ops unless a bot needs memory across decisions ----------

    def start_match(self, info: MatchInfo) -> None:
        """A match starts: ``info`` is the public match information (the bot reference lists it)."""

    def start_hand(self, view: View) -> None:
        """A hand starts: the seat's view before any decision."""

    def observe(self, event: Event) -> None:
        """A public event (a bid, a card, a trick…); sent only to bots that define this method."""

    def end_hand(self, record: HandRecord) -> None:
        """A hand is over: its public record (bids, tricks, result, chips; not the deal)."""

    def end_match(self) -> None:
        """The match is over."""


def wants_events(bot: Bot | type[Bot]) -> bool:
    """True if the bot's class overrides ``observe``; others are not sent events, for speed."""
    cls = bot if isinstance(bot, type) else type(bot)
    return cls.observe is not Bot.observe


def _bot_label(cls: type[Bot]) -> str:
    return f"bot '{cls.name or cls.__name__}'"


def _unknown_param(cls: type[Bot], key: str) -> str:
    known = ", ".join(sorted(cls.params))
    allowed = f"its parameters are: {known}" if known else "it takes no parameters"
    return f"{_bot_label(cls)} has no parameter '{key}'; {allowed}"


def _within(cls: type[Bot], key: str, value: Any) -> None:
    if isinstance(value, float) and math.isnan(value) or value in (float("inf"), float("-inf")):
        raise PluginError(f"{_bot_label(cls)} parameter '{key}' must be a finite number, got {value!r}")
    bounds = cls.limits.get(key)
    if bounds and not isinstance(value, bool) and isinstance(value, (int, float)) \
            and not bounds[0] <= value <= bounds[1]:
        raise PluginError(f"{_bot_label(cls)} parameter '{key}' must be from {bounds[0]:g} to {bounds[1]:g},"
                          f" got {value!r}")


def _checked(cls: type[Bot], key: str, default: Any, value: Any) -> Any:
    if default is None:  # no default type to check against
        return value
    expected = type(default)
    if expected is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    # bool is a subclass of int, but `samples = true` is a mistake, not 1.
    if isinstance(value, expected) and isinstance(value, bool) == (expected is bool):
        return value
    words = _TYPE_WORDS.get(expected, expected.__name__)
    raise PluginError(
        f"{_bot_label(cls)} parameter '{key}' must be {words}, "
        f"got {value!r} ({type(value).__name__})"
    )
