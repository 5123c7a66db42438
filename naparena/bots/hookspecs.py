"""The hooks a naparena plug-in may implement (pluggy project name ``"naparena"``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from naparena.bots.bot import Bot

hookspec = pluggy.HookspecMarker("naparena")
#: Mark a plug-in's hook functions with this: ``@hookimpl`` (``from naparena import hookimpl``).
hookimpl = pluggy.HookimplMarker("naparena")


@hookspec
def register_bots(register: Callable[[type[Bot]], None]) -> None:
    """Add this plug-in's bots: call ``register(MyBot)`` once per ``Bot`` subclass.

    Not ``firstresult``: every plug-in's implementation is called and return values
    are ignored. A bot's ``name`` must be unique across all plug-ins; a name two
    plug-ins both register is a clash, reported as a failure, and neither bot can be
    used under that name. An exception raised here is reported as a failure of this
    plug-in only; other plug-ins still register their bots.
    """
