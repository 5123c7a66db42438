"""What one seat may know at a decision: an immutable snapshot plus the legal answers."""

from __future__ import annotations

from collections.abc import Iterable
from operator import itemgetter
from types import GenericAlias
from typing import TYPE_CHECKING, Any, Generic, Literal, NamedTuple, TypeAlias

from naparena.game.cards import pack as _pack
from naparena.game.rules import Rules

try:  # the C field getter namedtuple itself uses; a plain property elsewhere
    from _collections import _tuplegetter  # type: ignore[import-not-found]  # private CPython module, no stub
except ImportError:  # pragma: no cover - not CPython
    def _tuplegetter(index: int, doc: str) -> property:
        return property(itemgetter(index), doc=doc)


if TYPE_CHECKING:  # a default, so that a bare `View` (a bot author's annotation) means View[Any]
    from typing_extensions import TypeVar

    Legal = TypeVar("Legal", default=Any)
else:
    from typing import TypeVar

    Legal = TypeVar("Legal")

#: The decisions the engine asks for; each is also the name of the Bot method that answers it.
Kind: TypeAlias = Literal["bid", "play", "peep", "floater_peep", "exchange", "garnet", "garnet_discard",
                          "peep_exchange", "floater_discard", "trumps"]


class _Fields(NamedTuple, Generic[Legal]):
    """Everything the acting seat may know, and nothing else.

    It never holds another seat's cards, the stock, the Sir Garnet hand or the floater
    (unless this seat paid to see it or took it up).
    """

    # What changes from decision to decision…
    kind: Kind | None          # the decision: bid, play, peep, exchange, … (None outside a turn)
    seat: int
    legal: tuple[Legal, ...]   # the legal answers; return one of them
    hand: tuple[int, ...]      # own cards, sorted
    trumps: int | None
    trick: tuple[tuple[int, int], ...]          # (seat, card) played to the current trick
    tricks: tuple[tuple[int, tuple[tuple[int, int], ...], int], ...]  # (leader, plays, winner)
    won: tuple[int, ...]                        # tricks won so far, per seat
    seen: tuple[int, ...]                       # cards seen privately: peep card, floater, own discards
    bids: tuple[tuple[int, str], ...]           # (seat, bid) in bidding order, "pass" included
    bidder: int | None                          # the high bidder so far, then the bidder
    contract: str | None
    # …and the table: rules, seats, money, peeks and exchanges.
    rules: Rules
    players: int
    dealer: int
    active: tuple[int, ...]    # seats holding cards, in bidding order
    hand_no: int
    chips: tuple[int, ...]     # chip totals now, per seat (this hand's antes and fees included)
    kitty: int
    peeps: tuple[int, ...]                      # seats that paid to peep / see the floater
    exchanges: tuple[tuple[int, int], ...]      # (seat, number of cards exchanged)
    garnet_taker: int | None

    @property
    def led(self) -> int | None:
        """Suit led to the current trick, or None when this seat leads."""
        return self.trick[0][1] // 13 if self.trick else None

    @property
    def pack(self) -> tuple[int, ...]:
        """Every card of the pack this hand was dealt from (a reduced pack holds the top
        ranks of each suit), sorted: the cards not in `hand` or seen are the unknowns."""
        return _pack(self.rules.pack_size(self.players))

    @property
    def peep_card(self) -> int | None:
        """The peep card (or the floater) this seat paid to see, None if it did not: seen
        before bidding, so it is the first card of `seen`."""
        return self.seen[0] if self.seat in self.peeps and self.seen else None


if TYPE_CHECKING:
    class View(_Fields[Legal]):
        """As the checker sees it: `_Fields`, built from one tuple of the 22 fields. `View[int]` is
        a view whose legal answers are cards (play, trumps, floater_discard), `View[str]` bids,
        `View[bool]` yes or no, `View[tuple[int, ...]]` sets of cards, `View[int | None]` the
        peep exchange; a bare `View` is any of them."""

        def __new__(cls, fields: Iterable[Any], /) -> View[Any]: ...
else:
    class View(tuple):
        """A `_Fields` NamedTuple in all but its constructor: `View(values)` takes the 22
        fields as one tuple and goes straight to tuple's C constructor. The engine builds
        one at every decision, and NamedTuple's Python `__new__` (or `tuple.__new__`
        called from Python) cost a quarter of the view."""

        __slots__ = ()
        __class_getitem__ = classmethod(GenericAlias)  # View[int] in an annotation read at run time
        _fields = _Fields._fields
        __match_args__ = _Fields._fields
        __doc__ = _Fields.__doc__
        led = _Fields.led
        pack = _Fields.pack
        peep_card = _Fields.peep_card

        def __repr__(self) -> str:
            return "View(" + ", ".join(f"{n}={v!r}" for n, v in zip(self._fields, self)) + ")"

        def _asdict(self) -> dict[str, Any]:
            return dict(zip(self._fields, self))

        def _replace(self, **changes: Any) -> View[Any]:
            unknown = set(changes) - set(self._fields)
            if unknown:
                raise ValueError(f"got unexpected field names: {sorted(unknown)!r}")
            return View(changes.get(n, v) for n, v in zip(self._fields, self))

        @classmethod
        def _make(cls, iterable: Iterable[Any]) -> View[Any]:
            return cls(iterable)

    for _i, _name in enumerate(_Fields._fields):
        setattr(View, _name, _tuplegetter(_i, f"Alias for field number {_i}"))
