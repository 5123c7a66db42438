"""Registers naparena's own bots through the same hook as any plug-in. The one module
that knows all of them, so no bot module needs to import another to be registered."""

from collections.abc import Callable

from naparena.bots.bot import Bot
from naparena.bots.hookspecs import hookimpl
from naparena.bots.pimc import PimcBot
from naparena.bots.reference import BoldBot, CautiousBot, HeuristicBot, RandomBot


@hookimpl
def register_bots(register: Callable[[type[Bot]], None]) -> None:
    for cls in (RandomBot, HeuristicBot, CautiousBot, BoldBot, PimcBot):
        register(cls)
