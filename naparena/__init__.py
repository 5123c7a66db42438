"""naparena: seeded tournaments for bots that play Napoleon (Nap).

This module is the stable surface; these names will not move between releases.

For bot authors, everything a bot needs:

    from naparena import Bot, hookimpl, View, cards

For researchers, running tournaments from Python (`naparena.api`, documented there):

    from naparena import load_tournament, run_tournament, open_run

Every name is loaded on first use, so a bot that imports `naparena` does not load the
tournament runner, and the `naparena` command starts before anything is loaded.
Internal module paths (``naparena.game``, ``naparena.bots``, ``naparena.arena`` …) may
move between releases; these names will not.
"""

from __future__ import annotations

import importlib

from naparena._version import __version__

# Not `typing.TYPE_CHECKING`: importing typing is most of what `import naparena` would
# cost, and type checkers read this name the same.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from naparena.api import (
        Progress,
        Quiet,
        Run,
        Tournament,
        Watcher,
        build_tournament,
        load_tournament,
        open_run,
        resume_run,
        run_tournament,
    )
    from naparena.bots.bot import Bot
    from naparena.bots.hookspecs import hookimpl
    from naparena.game import cards
    from naparena.game.cards import NAMES, RANK, SUIT, SUIT_LETTERS
    from naparena.game.view import View

#: Every name, and the module it comes from: loaded when first asked for (PEP 562), so
#: that `import naparena` costs nothing, and the `naparena` command starts catching Ctrl-C
#: (`__main__.main`) before anything is loaded.
_FROM = {"Bot": "naparena.bots.bot", "hookimpl": "naparena.bots.hookspecs", "View": "naparena.game.view",
         **dict.fromkeys(("NAMES", "RANK", "SUIT", "SUIT_LETTERS"), "naparena.game.cards"),
         **dict.fromkeys(("Progress", "Quiet", "Run", "Tournament", "Watcher", "build_tournament", "load_tournament",
                          "open_run", "resume_run", "run_tournament"), "naparena.api")}

__all__ = ["Bot", "View", "cards", "hookimpl", "NAMES", "RANK", "SUIT", "SUIT_LETTERS", "__version__",
           "Progress", "Quiet", "Run", "Tournament", "Watcher", "build_tournament", "load_tournament", "open_run",
           "resume_run", "run_tournament"]


def __getattr__(name: str) -> Any:
    if name == "cards":
        return importlib.import_module("naparena.game.cards")
    if name in _FROM:
        value = getattr(importlib.import_module(_FROM[name]), name)
        globals()[name] = value  # asked once
        return value
    raise AttributeError(f"module 'naparena' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
