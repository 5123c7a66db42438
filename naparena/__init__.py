"""naparena: seeded tournaments for bots that play Napoleon (Nap).

This module is the stable surface for bot authors; everything a bot needs is here:

    from naparena import Bot, hookimpl, View, cards

Internal module paths (``naparena.game``, ``naparena.bots``, ``naparena.arena`` …) may move
between releases; these names will not.
"""

from naparena._version import __version__
from naparena.bots.bot import Bot
from naparena.bots.hookspecs import hookimpl
from naparena.game import cards
from naparena.game.cards import NAMES, RANK, SUIT, SUIT_LETTERS
from naparena.game.view import View

__all__ = ["Bot", "View", "cards", "hookimpl", "NAMES", "RANK", "SUIT", "SUIT_LETTERS", "__version__"]
