"""Cards as small ints (suit * 13 + rank), their names, packs and lookup tables."""

from functools import cache

SUIT_LETTERS = "CDHS"
RANK_NAMES = ("2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A")
DECK_SIZE = 52

# Precomputed so the hot loop does an index, not a division.
SUIT = tuple(c // 13 for c in range(DECK_SIZE))
RANK = tuple(c % 13 for c in range(DECK_SIZE))
NAMES = tuple(RANK_NAMES[RANK[c]] + SUIT_LETTERS[SUIT[c]] for c in range(DECK_SIZE))
_BY_NAME = {n: c for c, n in enumerate(NAMES)}

PACK_SIZES = (20, 24, 28, 32, 36, 40, 52)


def name(c: int) -> str:
    """Card int → its name: rank then suit letter, 'AS', '10H'."""
    return NAMES[c]


def parse(text: str) -> int:
    """'AS', '10h', 'TD' → card int; raises ValueError on anything else."""
    t = text.strip().upper().replace("T", "10", 1) if text[:1] in "Tt" else text.strip().upper()
    try:
        return _BY_NAME[t]
    except KeyError:
        raise ValueError(f"not a card: {text!r}") from None


def parse_many(text: str) -> list[int]:
    """'AS KS 10h' → their card ints, in order."""
    return [parse(t) for t in text.split()]


@cache  # every view's `pack` asks, once a decision
def pack(size: int) -> tuple[int, ...]:
    """The reduced pack of `size` cards: the top size/4 ranks of every suit."""
    lowest = 13 - size // 4
    return tuple(c for c in range(DECK_SIZE) if RANK[c] >= lowest)
