"""Hand-built deals for scenario tests: choose every seat's cards, get an engine Hand."""

from naparena import cards
from naparena.game.engine import Hand, deal_order
from naparena.game.rules import Rules


def stacked_deck(rules: Rules, players: int, dealer: int, hands: dict[int, str], extras: str = "") -> list[int]:
    """A deck order that deals `hands` (seat → "AS KS …") then `extras` (peep card,
    floater, Sir Garnet hand, stock in that order), the rest of the pack after them."""
    _, slots = deal_order(rules, players, dealer)
    size = len(cards.pack(rules.pack_size(players)))
    deck: list[int | None] = [None] * size
    used = set()
    in_pack = set(cards.pack(size))
    for seat, text in hands.items():
        chosen = cards.parse_many(text)
        assert len(chosen) == len(slots[seat]), f"seat {seat} needs {len(slots[seat])} cards"
        assert in_pack.issuperset(chosen), f"seat {seat}: cards outside the {size}-card pack"
        for pos, c in zip(slots[seat], chosen):
            deck[pos] = c
            used.add(c)
    nxt = sum(len(s) for s in slots)
    for c in cards.parse_many(extras):
        assert c in in_pack, f"extra card {cards.name(c)} outside the pack"
        deck[nxt] = c
        used.add(c)
        nxt += 1
    rest = iter(c for c in cards.pack(rules.pack_size(players)) if c not in used)
    return [c if c is not None else next(rest) for c in deck]


def make_hand(rules: Rules, hands: dict[int, str], players: int = 4, dealer: int = 3,
              extras: str = "", chips=None, kitty: int = 0) -> Hand:
    deck = stacked_deck(rules, players, dealer, hands, extras)
    return Hand(rules, players, dealer, deck, tuple(chips or [0] * players), kitty)


def play(hand: Hand, *answers) -> Hand:
    """Apply answers in turn; cards may be given as names ("AS")."""
    for given in answers:
        a = given
        if isinstance(a, str) and a[:-1] in cards.RANK_NAMES and a[-1] in cards.SUIT_LETTERS:
            a = cards.parse(a)
        hand.apply(a)
    return hand
