"""naparena: seeded tournaments for bots that play Napoleon (Nap)."""

import pluggy

__version__ = "0.1.0"

#: Mark a plug-in's hook functions with this, e.g. ``@naparena.hookimpl``.
hookimpl = pluggy.HookimplMarker("naparena")
