"""naparena: seeded tournaments for bots that play Napoleon (Nap).

This module is the stable surface; these names will not move between releases.

For bot authors, everything a bot needs:

    from naparena import Bot, hookimpl, View, cards

For researchers, running tournaments from Python (`naparena.api`, documented there):

    from naparena import load_tournament, run_tournament, open_run

The running names are loaded on first use, so a bot that imports `naparena` does not
load the tournament runner. Internal module paths (``naparena.game``, ``naparena.bots``,
``naparena.arena`` …) may move between releases; these names will not.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from naparena._version import __version__
from naparena.bots.bot import Bot
from naparena.bots.hookspecs import hookimpl
from naparena.game import cards
from naparena.game.cards import NAMES, RANK, SUIT, SUIT_LETTERS
from naparena.game.view import View

if TYPE_CHECKING:
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

#: The names `naparena.api` defines, loaded when first asked for (PEP 562).
_API = ("Progress", "Quiet", "Run", "Tournament", "Watcher", "build_tournament", "load_tournament", "open_run",
        "resume_run", "run_tournament")

__all__ = ["Bot", "View", "cards", "hookimpl", "NAMES", "RANK", "SUIT", "SUIT_LETTERS", "__version__",
           "Progress", "Quiet", "Run", "Tournament", "Watcher", "build_tournament", "load_tournament", "open_run",
           "resume_run", "run_tournament"]


def __getattr__(name: str) -> Any:
    if name in _API:
        from naparena import api
        return getattr(api, name)
    raise AttributeError(f"module 'naparena' has no attribute {name!r}")
