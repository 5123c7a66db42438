"""The starter file: a valid, commented tournament file to begin from (`naparena init`)."""

from __future__ import annotations

from collections.abc import Sequence

import tomli_w

from naparena.arena.setup.settings import REQUIRED, SETTINGS
from naparena.errors import ConfigError


def starter_toml(bot_names: Sequence[str], variant_names: Sequence[str], name: str = "starter") -> str:
    """A valid tournament file to start from: the first two bots, `classic` and one more
    variant, every [tournament] key at its default, and comments explaining each key."""
    if not bot_names:
        raise ConfigError("", "bots", "no bots are registered, so there is nothing to put in a tournament")
    if not variant_names:
        raise ConfigError("", "variants", "no variants are known, so there is nothing to put in a tournament")
    chosen = ["classic"] if "classic" in variant_names else [variant_names[0]]
    chosen += [v for v in variant_names if v not in chosen][:1]
    settings = {key: s.default for key, s in SETTINGS.items() if s.default is not REQUIRED}
    settings.update({key: value for key, (value, _) in STARTER.items()})
    # Each entry dumped on its own: tomli-w would fold short arrays of tables into
    # inline arrays, and [[bots]] blocks are what a person expects to copy and edit.
    blocks = [tomli_w.dumps({"tournament": {"name": name, **settings}})]
    blocks += ["[[bots]]\n" + tomli_w.dumps({"name": b}) for b in list(bot_names)[:2]]
    blocks += ["[[variants]]\n" + tomli_w.dumps({"name": v}) for v in chosen]
    return _starter_header(bot_names, variant_names) + "\n" + "\n".join(blocks)


# Where a starter file leaves the defaults, and why: one seed stream is one deal set per
# variant; the standings give intervals from one, as its boards are the units, and eight
# make them narrow enough to tell bots apart in seconds. Its two bots at four seats
# play 6 seatings of each deal, and 35 hands a match keep the run as short, and its
# intervals as narrow, as 100 hands of the 2 seatings that once put the bots on
# alternate seats.
STARTER = {"seeds": (8, "eight deal sets narrow the intervals"),
           "hands": (35, "as every deal is played in each seating of the design")}


def _starter_header(bot_names: Sequence[str], variant_names: Sequence[str]) -> str:
    width = max(map(len, SETTINGS))
    lines = ["naparena tournament file (TOML).", "", "[tournament]"]
    lines += [f"  {key:<{width}}  {s.help}" + (" (required)" if s.default is REQUIRED else "")
              + (f" (default {s.default}; {STARTER[key][0]} here, {STARTER[key][1]})" if key in STARTER else "")
              for key, s in SETTINGS.items()]
    lines += [
        "",
        "[[bots]]      one per player: name = a registered bot; optional alias = a unique",
        "              seat name (lets one bot sit twice with different params);",
        "              optional params = { ... } for the bot's parameters",
        "[[variants]]  name = a named variant; or name = your own, base = a named variant,",
        "              plus any rules option to override, e.g. bids = [...]",
        "",
        f"Available bots: {', '.join(bot_names)}",
        f"Named variants: {', '.join(variant_names)}",
    ]
    return "".join(f"# {line}".rstrip() + "\n" for line in lines)
