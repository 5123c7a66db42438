"""What one seat may know at a decision: an immutable snapshot plus the legal answers."""

from __future__ import annotations

from typing import NamedTuple

from .rules import Rules


class View(NamedTuple):
    """Everything the acting seat may know, and nothing else.

    A NamedTuple because a view is built at every decision: it must be cheap and
    immutable. It never holds another seat's cards, the stock, the Sir Garnet hand or
    the floater (unless this seat paid to see it or took it up).
    """

    # What changes from decision to decision…
    kind: str | None           # the decision: bid, play, peep, exchange, … (None outside a turn)
    seat: int
    legal: tuple               # the legal answers; return one of them
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
