"""Every rule option of RULES.md as one immutable `Rules` object, and the named variants as data."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from naparena.errors import RulesError, did_you_mean
from naparena.game.cards import PACK_SIZES

# Bid ladders, low → high. The ladder a variant uses depends on its kind of game.
STANDARD_LADDER = ("one", "two", "three", "mis", "four", "nap", "wellington", "blucher", "sedan")
SEVEN_LADDER = ("three", "four", "nap", "mis", "six", "seven")
FLOATER_LADDER = (
    "four-with", "four-without", "nap-with", "nap-without",
    "bonaparte-with", "bonaparte-without", "wellington-with", "wellington-without",
)

# Tricks a contract needs; 0 means a misère-style contract: lose every trick.
TRICKS_NEEDED = {
    "one": 1, "two": 2, "three": 3, "four": 4, "nap": 5, "wellington": 5, "blucher": 5,
    "bonaparte": 5, "six": 6, "seven": 7, "mis": 0, "sedan": 0,
}
MISERE_BIDS = frozenset({"mis", "sedan"})
BIG_BIDS = frozenset({"nap", "wellington", "blucher"})  # what the doubling options double

# Stakes per opponent: bid → (win, loss). RULES.md §5, §7.4, §7.6.
PAYOUTS: dict[str, dict[str, tuple[int, int]]] = {
    "pagat": {"two": (2, 2), "three": (3, 3), "mis": (3, 3), "four": (4, 4), "nap": (5, 5),
              "wellington": (10, 10), "blucher": (20, 20)},
    "classic": {"three": (3, 3), "mis": (3, 3), "four": (4, 4), "nap": (10, 5),
                "wellington": (10, 10), "blucher": (20, 20)},
    "peel": {"one": (1, 1), "two": (2, 2), "three": (3, 3), "four": (4, 4), "nap": (10, 5)},
    # Hoyle's Wellington "takes triple stakes" and sedan's stake are interpretations.
    "hoyle": {"two": (2, 2), "three": (3, 3), "four": (4, 4), "nap": (10, 5),
              "wellington": (15, 15), "sedan": (5, 5)},
    # Seven-card: losers of nap, mis, six, seven pay half stakes (interpretation of amounts).
    "seven-card": {"three": (3, 3), "four": (4, 4), "nap": (10, 5), "mis": (10, 5),
                   "six": (12, 6), "seven": (14, 7)},
    # Floater: win from each player; loss = stake × players paid into the kitty.
    "floater": {"four": (2, 2), "nap": (5, 5), "bonaparte": (10, 10), "wellington": (20, 20)},
}

# Pack size by number of active players: pagat's table (6–7 an interpretation), and 2 → 20.
AUTO_PACK = {2: 20, 3: 24, 4: 28, 5: 32, 6: 36, 7: 40}
FLOATER_PACK = {3: 20, 4: 24, 5: 28, 6: 32, 7: 36}

CHOICES: dict[str, tuple[Any, ...]] = {
    "dealer_sits_out": ("never", "six", "five_and_six"),
    "shuffle": ("every_hand", "after_nap"),
    "deal": ("3-2", "2-3", "1"),
    "hand_size": (5, 7),
    "all_pass": ("redeal", "eldest_one"),
    "wellington_lead": ("any", "lowest_trump"),
    "payouts": tuple(PAYOUTS),
    "doubling": ("none", "double_big_wins", "double_big_both"),
    "purchase": ("none", "purchase", "ecarte"),
    "kitty_at_end": ("carried", "split"),
}


@dataclass(frozen=True)
class Rules:
    """The complete option set one match is played under (RULES.md §1–§7)."""

    pack: int | str = "auto"
    dealer_sits_out: str = "six"
    shuffle: str = "every_hand"
    deal: str = "3-2"
    hand_size: int = 5
    bids: tuple[str, ...] = ("three", "four", "nap")
    all_pass: str = "redeal"
    wellington_lead: str = "any"
    misere_trumps: bool = False
    sedan_trumps: bool = True
    stop_when_decided: bool = True
    payouts: str = "classic"
    doubling: str = "none"
    dealer_ante: int = 0
    peep: bool = False
    purchase: str = "none"
    sir_garnet: bool = False
    floater: bool = False
    kitty_at_end: str = "carried"

    def __hash__(self) -> int:
        # Rules key the engine's lookup caches once per hand: hash the fields once.
        h = self.__dict__.get("_hash")
        if h is None:
            h = hash(tuple(getattr(self, f.name) for f in dataclasses.fields(self)))
            object.__setattr__(self, "_hash", h)
        return h

    @property
    def ladder(self) -> tuple[str, ...]:
        if self.floater:
            return FLOATER_LADDER
        return SEVEN_LADDER if self.hand_size == 7 else STANDARD_LADDER

    def as_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["bids"] = list(self.bids)
        return d

    @classmethod
    def from_dict(cls, options: Mapping[str, Any]) -> Rules:
        """The rules `as_dict` gave (in a job, a match log or a match message, its bids a
        list), as they were: not checked again, nor the bids reordered."""
        return cls(**{**options, "bids": tuple(options["bids"])})

    def sits_out(self, players: int) -> bool:
        """Does the dealer sit out (no cards, no bid) at a table of this size?"""
        if self.dealer_sits_out == "six":
            return players == 6
        if self.dealer_sits_out == "five_and_six":
            return players in (5, 6)
        return False

    def pack_size(self, players: int) -> int:
        if isinstance(self.pack, int):  # otherwise "auto"
            return self.pack
        active = players - self.sits_out(players)
        table = FLOATER_PACK if self.floater else AUTO_PACK
        return table.get(active, 52)

    def extra_cards(self) -> int:
        """Cards dealt beyond the hands: peep card, floater, Sir Garnet hand, purchase stock."""
        extra = int(self.peep) + int(self.floater) + 5 * int(self.sir_garnet)
        # Interpretation: a purchase stock must allow at least one full exchange of 5.
        return extra + (5 if self.purchase != "none" else 0)

    def check_players(self, players: int) -> None:
        """Refuse, before any play, a table this rule set cannot deal."""
        low = 3 if self.floater else 2
        if not low <= players <= 7:
            raise RulesError("players", f"{players} players cannot play this variant; allowed {low}–7")
        active = players - self.sits_out(players)
        size = self.pack_size(players)
        need = active * self.hand_size + self.extra_cards()
        if need > size:
            raise RulesError(
                "pack",
                f"a {size}-card pack cannot deal {active} hands of {self.hand_size}"
                f" plus {self.extra_cards()} extra cards ({need} needed)",
            )


def default_table(rules: Rules) -> int:
    """4 seats where the variant allows it, else the nearest table it can deal."""
    for players in (4, 5, 3, 6, 7, 2):
        try:
            rules.check_players(players)
            return players
        except RulesError:
            continue
    raise RulesError("players", "this variant cannot be dealt at any table size")


def stakes(rules: Rules, base: str) -> tuple[int, int]:
    """(win, loss) per opponent for contract `base` (no floater suffix), doubling applied."""
    win, loss = PAYOUTS[rules.payouts][base]
    if base in BIG_BIDS and rules.doubling != "none":
        win *= 2
        if rules.doubling == "double_big_both":
            loss *= 2
    return win, loss


def lead_names_trumps(rules: Rules, base: str) -> bool:
    """Does the first card led make its suit trumps in contract `base`? In every contract
    but misère, and in misère too with `misere_trumps`. Sedan, though a contract to lose
    every trick, is played with trumps (004: "the first card played is the trump suit")
    unless `sedan_trumps` is off."""
    if base == "sedan":
        return rules.sedan_trumps
    if base in MISERE_BIDS:
        return rules.misere_trumps
    return True


@lru_cache(maxsize=1024)
def nap_or_above(rules: Rules, base: str) -> bool:
    """Does contract `base` rank at Nap or above on this game's ladder? Such a contract,
    made, takes the pool (001, 004) and, with `shuffle = "after_nap"`, brings a shuffle."""
    bases = [b.split("-", 1)[0] for b in rules.ladder]
    return "nap" in bases and bases.index(base) >= bases.index("nap")


@dataclass(frozen=True)
class Variant:
    name: str
    description: str
    options: dict[str, Any]
    sources: dict[str, str]


def _choices_error(option: str, value: Any, allowed: Iterable[Any]) -> RulesError:
    return RulesError(option, f"{value!r} is not allowed; choose one of {', '.join(map(repr, allowed))}")


def _check_type(option: str, value: Any, default: Any) -> None:
    if option == "pack":
        if value != "auto" and (type(value) is not int or value not in PACK_SIZES):
            raise RulesError("pack", f"{value!r} is not allowed; use 'auto' or one of {list(PACK_SIZES)}")
        return
    if option == "bids":
        if not isinstance(value, (list, tuple)) or not all(isinstance(b, str) for b in value):
            raise RulesError("bids", "must be a list of bid names")
        return
    if type(value) is not type(default):
        raise RulesError(option, f"expected {type(default).__name__}, got {type(value).__name__} {value!r}")
    if option in CHOICES and value not in CHOICES[option]:
        raise _choices_error(option, value, CHOICES[option])
    if option == "dealer_ante" and not 0 <= value <= 1000:
        raise RulesError(option, "must be from 0 to 1000")


def _check_bids(r: Rules) -> None:
    ladder = r.ladder
    if not r.bids:
        raise RulesError("bids", "at least one bid must be enabled")
    for b in r.bids:
        if b not in ladder or b == "one":
            allowed = [x for x in ladder if x != "one"]
            hint = " ('one' arises only from all_pass = 'eldest_one')" if b == "one" else ""
            raise RulesError("bids", f"{b!r} is not a bid of this game{hint}; allowed: {', '.join(allowed)}")
    if len(set(r.bids)) != len(r.bids):
        raise RulesError("bids", "a bid is listed twice")
    if "wellington" in r.bids and "nap" not in r.bids:
        raise RulesError("bids", "'wellington' can only be bid after 'nap': enable 'nap' too")
    if "blucher" in r.bids and "wellington" not in r.bids:
        raise RulesError("bids", "'blucher' can only be bid after 'wellington': enable 'wellington' too")
    table = PAYOUTS[r.payouts]
    needed = {b.split("-")[0] for b in r.bids} | ({"one"} if r.all_pass == "eldest_one" else set())
    for b in sorted(needed):
        if b not in table:
            raise RulesError("payouts", f"table {r.payouts!r} has no stake for bid {b!r}")


def _check_combinations(r: Rules) -> None:
    extras = [n for n, on in (("peep", r.peep), ("purchase", r.purchase != "none"),
                              ("sir_garnet", r.sir_garnet), ("floater", r.floater)) if on]
    if len(extras) > 1:
        raise RulesError(extras[1], f"cannot be combined with {extras[0]!r}: one extra-card feature per variant")
    if r.hand_size == 7 and extras:
        raise RulesError(extras[0], "Seven-card Nap has no exchange, no peep and no extra hand")
    if (r.hand_size == 7) != (r.payouts == "seven-card"):
        raise RulesError("payouts", "hand_size = 7 goes with payouts = 'seven-card', and only with it")
    if r.floater != (r.payouts == "floater"):
        raise RulesError("payouts", "floater = true goes with payouts = 'floater', and only with it")
    if r.sir_garnet and "nap" not in r.bids:
        raise RulesError("sir_garnet", "taking up Sir Garnet obliges a Nap: enable 'nap'")
    if r.floater and r.all_pass != "redeal":
        raise RulesError("all_pass", "Nap with a floater redeals when all pass")
    if r.hand_size == 7 and r.all_pass != "redeal":
        raise RulesError("all_pass", "'eldest_one' needs the five-card game")


def make_rules(base: str = "classic", overrides: Mapping[str, Any] | None = None) -> Rules:
    """A validated `Rules`: the named variant `base` with `overrides` applied."""
    if base not in VARIANTS:
        hint = did_you_mean(base, VARIANTS)
        raise RulesError("base", f"unknown variant {base!r}{hint}; known: {', '.join(VARIANTS)}")
    options = dict(VARIANTS[base].options)
    defaults = Rules()
    for option, value in (overrides or {}).items():
        if option not in options:
            hint = did_you_mean(option, options)
            raise RulesError(option, f"unknown rules option{hint}; known: {', '.join(options)}")
        _check_type(option, value, getattr(defaults, option))
        options[option] = value
    return _build(options)


def _build(options: dict[str, Any]) -> Rules:
    ladder_rules = Rules(**{**options, "bids": ()})
    unknown = [b for b in options["bids"] if b not in ladder_rules.ladder]
    order = {b: i for i, b in enumerate(ladder_rules.ladder)}
    bids = tuple(options["bids"]) if unknown else tuple(sorted(options["bids"], key=order.__getitem__))
    rules = Rules(**{**options, "bids": bids})
    _check_combinations(rules)
    _check_bids(rules)
    return canonical(rules)


_CANONICAL: dict[Rules, Rules] = {}


def canonical(rules: Rules) -> Rules:
    """This process's one instance of these rules. The engine looks its tables up by rules
    once per hand; with one instance the lookup hits on identity instead of comparing
    every option (a few variants at most, so the dict stays small)."""
    return _CANONICAL.setdefault(rules, rules)


# --- the named variants (RULES.md §8), as data --------------------------------------------

_BASE = dataclasses.asdict(Rules())
_BASE["bids"] = ()

# Where each option's default comes from; variants override per option.
_DEFAULT_SOURCES = {
    "pack": "001 pagat: reduced pack by active players (2, 6 and 7 players: interpretation)",
    "dealer_sits_out": "000, 003: with six the dealer sits out",
    "shuffle": "000: shuffle before every deal",
    "deal": "000, 001: a round of three, then a round of two",
    "hand_size": "000–004: five cards each",
    "all_pass": "001: if all pass the next dealer deals",
    "wellington_lead": "001: no lead restriction",
    "misere_trumps": "000: misère has no trump suit",
    "sedan_trumps": "004: the first card played is the trump suit (false: the no-trump reading)",
    "stop_when_decided": "003: the hand ends once the bid is decided",
    "doubling": "001: no doubling",
    "dealer_ante": "no pool unless a variant has one",
    "peep": "000: Peep Nap is a variation",
    "purchase": "000, 001: buying cards is a variation",
    "sir_garnet": "000: Sir Garnet is a variation",
    "floater": "001: Nap with a floater is a variation",
    "kitty_at_end": "interpretation: chips left in the kitty stay there and are reported",
}


def _variant(name: str, description: str, sources: dict[str, str], **options: Any) -> Variant:
    opts = {**_BASE, **options}
    opts["bids"] = tuple(opts["bids"])
    _build(dict(opts))  # a shipped variant must itself be valid
    return Variant(name, description, opts, {**_DEFAULT_SOURCES, **sources})


_CLASSIC = {"bids": ("three", "four", "nap", "wellington", "blucher"), "payouts": "classic",
            "wellington_lead": "lowest_trump"}
_CLASSIC_SRC = {
    "bids": "000: three, four, nap, plus its Wellington (after Nap) and Blücher (after Wellington)"
            " variations (interpretation: both included in classic)",
    "payouts": "000: 1 per trick under five; Nap wins 10, loses 5",
    "wellington_lead": "000, 002: the Wellington bidder leads his lowest trump",
}
_PAGAT = {"bids": ("three", "four", "nap", "wellington"), "payouts": "pagat", "shuffle": "after_nap"}
_PAGAT_SRC = {
    "bids": "001: three, four, nap, Wellington (after Nap)",
    "payouts": "001: 3, 4, 5, 10 units won or lost",
    "shuffle": "001: shuffle only at the start and after Nap or above is won; else gather and cut",
}

VARIANTS: dict[str, Variant] = {v.name: v for v in (
    _variant("classic", "Modern Wikipedia rules: three to Blücher, Nap pays 10/5", _CLASSIC_SRC, **_CLASSIC),
    _variant("pagat", "pagat.com: three, four, nap, Wellington; shuffle only after a won Nap",
             _PAGAT_SRC, **_PAGAT),
    _variant("pagat-full", "pagat.com with every optional bid: two, mis, Blücher",
             {**_PAGAT_SRC, "bids": "001: the variations add two, mis and Blücher"},
             **{**_PAGAT, "bids": ("two", "three", "mis", "four", "nap", "wellington", "blucher")}),
    _variant("peel", "W. H. Peel: full pack dealt singly; if all pass the first caller stands for one",
             {"bids": "003: two, three, four, Nap", "payouts": "003: a stake a trick; Nap 10/5",
              "all_pass": "003: the first caller must stand for one trick", "deal": "003: one at a time",
              "pack": "003: an ordinary pack of fifty-two cards"},
             bids=("two", "three", "four", "nap"), payouts="peel", all_pass="eldest_one",
             deal="1", pack=52),
    _variant("hoyle", "Hoyle-style: full pack dealt singly; Wellington at triple stakes; sedan",
             {"bids": "004: two to Nap, Wellington after Nap, sedan above all (interpretation)",
              "payouts": "004: a stake a trick, Nap double, Wellington triple (interpretation)",
              "deal": "004: dealt one at a time", "pack": "004: a full pack",
              "dealer_ante": "004: a pool by dealer's half-stake is occasional; off here"},
             bids=("two", "three", "four", "nap", "wellington", "sedan"), payouts="hoyle",
             deal="1", pack=52),
    _variant("misere", "classic plus misère (between three and four, no trumps)",
             {**_CLASSIC_SRC, "bids": "000: mis ranks between three and four"},
             **{**_CLASSIC, "bids": ("three", "mis", "four", "nap", "wellington", "blucher")}),
    _variant("peep", "classic plus a peep card: pay 1 to see it, the bidder may exchange for it",
             {**_CLASSIC_SRC, "peep": "000: Peep Nap (interpretation: the pool goes to the next bidder"
              " who makes Nap or above)"},
             **_CLASSIC, peep=True),
    _variant("purchase", "pagat plus Purchase Nap: pay 1 to swap any number of cards before bidding",
             {**_PAGAT_SRC, "purchase": "001: Purchase Nap, pool to the first made Nap or above"},
             **_PAGAT, purchase="purchase"),
    _variant("ecarte", "classic plus Écarté Nap: buy up to five fresh cards at 1 each",
             {**_CLASSIC_SRC, "purchase": "000: Écarté Nap, 1 per card, up to five"},
             **_CLASSIC, purchase="ecarte"),
    _variant("sir-garnet", "classic plus Sir Garnet: take up an extra hand of five and bid Nap",
             {**_CLASSIC_SRC, "sir_garnet": "000: Sir Garnet"}, **_CLASSIC, sir_garnet=True),
    _variant("seven-card", "Seven-card Nap: seven cards each, bids three to seven, mis above Nap",
             {"hand_size": "000: seven cards each", "bids": "000: three, four, nap, mis, six, seven",
              "payouts": "000: losers of nap, mis, six, seven pay half (amounts: interpretation)",
              "pack": "interpretation: a full pack, so that seven hands of seven can be dealt"},
             bids=SEVEN_LADDER, payouts="seven-card", hand_size=7, pack=52),
    _variant("floater", "Nap with a floater: antes, bids with or without the floater, kitty",
             {"floater": "001: Nap with a floater", "bids": "001: four to Wellington, each with or without",
              "payouts": "001: win from each player, loss paid into the kitty",
              "pack": "001: 20/24/28/32/36 cards for 3–7 players",
              "shuffle": "001: shuffle only at the start and after Nap or above is won",
              "dealer_sits_out": "001: 3–7 players, all dealt in (32 cards for 6)"},
             bids=FLOATER_LADDER, payouts="floater", floater=True, shuffle="after_nap",
             dealer_sits_out="never"),
)}

OPTION_NAMES = tuple(f.name for f in dataclasses.fields(Rules))
