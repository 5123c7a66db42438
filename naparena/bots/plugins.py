"""Finds every bot (naparena's own, installed entry points, drop-in files) and keeps them
in one ``Registry``; a broken plug-in is recorded as a failure and the rest still load.
"""

from __future__ import annotations

import copy
import importlib
import importlib.machinery
import importlib.metadata
import importlib.util
import os
import re
import signal
import sys
import threading
import traceback
import types
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from random import Random
from typing import Any

import pluggy

from naparena._version import __version__
from naparena.bots import hookspecs
from naparena.bots.bot import Bot
from naparena.errors import PluginError, did_you_mean

ENTRY_POINT_GROUP = "naparena"
#: Any non-empty value skips installed entry points; naparena's own bots still load.
DISABLE_AUTOLOAD_ENV = "NAPARENA_DISABLE_PLUGIN_AUTOLOAD"
BUILTIN_PLUGIN = "naparena.bots.builtin"
#: Drop-in files are imported as ``naparena_bots.<file stem>`` so their classes pickle.
DROP_IN_PACKAGE = "naparena_bots"
DEFAULT_BOTS_DIR = "bots"

# Bot names appear in tournament files, logs and tables, so keep them plain tokens.
_BOT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


@dataclass(frozen=True)
class BotEntry:
    """One registered bot and where it came from."""

    name: str
    cls: type[Bot]
    source: str
    description: str
    version: str = ""


@dataclass(frozen=True)
class PluginFailure:
    """A plug-in, drop-in file or bot that could not be loaded or registered."""

    name: str
    source: str
    error: str
    traceback: str = ""

    def __str__(self) -> str:
        return f"{self.name} ({self.source}): {self.error}"


class Registry:
    """The bots that loaded, by name, plus every failure and name clash met on the way."""

    def __init__(self) -> None:
        self.bots: dict[str, BotEntry] = {}
        self.failures: list[PluginFailure] = []
        #: bot name -> every source that registered it; such a name cannot be used.
        self.clashes: dict[str, tuple[str, ...]] = {}
        #: where bots were looked for, in words, for "unknown bot" messages.
        self.searched: list[str] = []

    def register(self, cls: Any, source: str, version: str = "") -> BotEntry:
        """Add ``cls`` under ``cls.name``; raise ``PluginError`` if it cannot be used.

        A name already registered by another source is a clash: the name is withdrawn
        (recorded in ``clashes``) so neither bot is picked silently.
        """
        name = _checked_bot(cls, source)
        if name in self.clashes:
            self.clashes[name] += (source,)
            raise PluginError(_clash_message(name, self.clashes[name]))
        first = self.bots.get(name)
        if first is not None:
            if first.cls is cls and first.source == source:
                return first
            del self.bots[name]
            self.clashes[name] = (first.source, source)
            raise PluginError(_clash_message(name, self.clashes[name]))
        entry = BotEntry(name, cls, source, _first_line(cls.description), version)
        self.bots[name] = entry
        return entry

    def get(self, name: str) -> BotEntry:
        """The bot registered as ``name``; ``PluginError`` if unknown or clashing."""
        if name in self.clashes:
            raise PluginError(_clash_message(name, self.clashes[name]))
        try:
            return self.bots[name]
        except KeyError:
            known = ", ".join(sorted(self.bots)) or "none"
            where = f" (searched: {'; '.join(self.searched)})" if self.searched else ""
            raise PluginError(f"unknown bot '{name}'{did_you_mean(name, self.bots)}; available bots: {known}{where}"
                              ) from None

    def make(self, name: str, params: Mapping[str, Any], rng: Random, seat: int) -> Bot:
        """A new bot for ``seat``, after checking ``params`` against the bot's own."""
        cls = self.get(name).cls
        # A deep copy: a bot that changes a list parameter must not change the next match's.
        return cls(rng, seat, **cls.validate_params(copy.deepcopy(dict(params))))


def bot_version(entry: BotEntry) -> str:
    """What to log as the bot's version: its package and version, or its file path."""
    return entry.version or entry.source


def importable(entry: BotEntry) -> str | None:
    """`module:qualname` of the bot's class where a fresh interpreter can import it by
    name (naparena's own bots, an installed package's); None for a drop-in file, which
    only the registry's loader finds."""
    module, qualname = entry.cls.__module__, entry.cls.__qualname__
    if module.partition(".")[0] == DROP_IN_PACKAGE or "<locals>" in qualname or module == "__main__":
        return None
    return f"{module}:{qualname}"


def load_registry(
    bots_dir: str | Path | None = DEFAULT_BOTS_DIR, extra_plugins: Iterable[object] = ()
) -> Registry:
    """Load every plug-in and return the registry of their bots.

    Order: naparena's reference bots, installed entry points (unless
    ``NAPARENA_DISABLE_PLUGIN_AUTOLOAD`` is set), ``bots_dir/*.py`` by file name,
    then ``extra_plugins`` (objects or modules, for tests and embedding).
    """
    loader = _Loader()
    searched = loader.registry.searched
    with _SIGINT:
        loader.add_builtin()
        searched.append("naparena's own bots")
        if not os.environ.get(DISABLE_AUTOLOAD_ENV):
            loader.add_entry_points()
            searched.append(f"installed packages (entry point group '{ENTRY_POINT_GROUP}')")
        else:
            searched.append(f"not installed packages ({DISABLE_AUTOLOAD_ENV} is set)")
        folder = _bots_folder(bots_dir)
        if folder is not None:
            loader.add_drop_ins(folder)
            searched.append(f"drop-in folder {folder.resolve()}")
        elif bots_dir is not None:
            searched.append(f"no drop-in folder ({Path(bots_dir).resolve()} does not exist)")
        for plugin in extra_plugins:
            name = getattr(plugin, "__name__", None) or type(plugin).__name__
            loader.add(plugin, _Origin(name, f"in-process plug-in '{name}'", "in-process"))
        loader.register_bots()
    return loader.registry


class _SigintWatch:
    """While plug-ins load, tell a real Ctrl-C from a KeyboardInterrupt a plug-in raises."""

    def __init__(self) -> None:
        self.seen, self.depth = False, 0
        self.previous: Callable[[int, types.FrameType | None], Any] | int | None = None

    def __enter__(self) -> _SigintWatch:
        self.depth += 1
        if self.depth == 1:
            self.seen = False
            if threading.current_thread() is threading.main_thread():
                self.previous = signal.getsignal(signal.SIGINT)
                if self.previous is signal.default_int_handler:
                    signal.signal(signal.SIGINT, self._on_sigint)
        return self

    def _on_sigint(self, signum: int, frame: types.FrameType | None) -> None:
        self.seen = True
        raise KeyboardInterrupt

    def __exit__(self, *exc: object) -> None:
        self.depth -= 1
        if self.depth == 0 and self.previous is signal.default_int_handler:
            signal.signal(signal.SIGINT, self.previous)
        if self.depth == 0:
            self.previous = None


_SIGINT = _SigintWatch()


@dataclass(frozen=True)
class _Origin:
    name: str  # what a user calls the plug-in: entry point name, file stem, ...
    source: str  # where it came from, in words
    version: str  # what bot_version reports for its bots


class _Loader:
    """Builds one plug-in manager, remembering where each plug-in came from."""

    def __init__(self) -> None:
        self.pm = pluggy.PluginManager("naparena")
        self.pm.add_hookspecs(hookspecs)
        self.registry = Registry()
        self.origins: dict[str, _Origin] = {}  # pluggy plug-in name -> origin

    def fail(self, name: str, source: str, error: BaseException | str) -> None:
        if isinstance(error, BaseException):
            message = _describe(error)
            trace = "" if isinstance(error, PluginError) else _trace(error)
        else:
            message, trace = error, ""
        self.registry.failures.append(PluginFailure(name, source, message, trace))

    def fail_unless_interrupted(self, origin: _Origin, error: BaseException) -> None:
        """A plug-in's SystemExit or KeyboardInterrupt is its failure like any other, so
        `naparena bots` and `run` still report it; only a real Ctrl-C stops loading."""
        if isinstance(error, KeyboardInterrupt) and _SIGINT.seen:
            raise error
        self.fail(origin.name, origin.source, error)

    def add(self, plugin: object, origin: _Origin, plugin_name: str | None = None) -> bool:
        try:
            registered = self.pm.register(plugin, name=plugin_name)
        except Exception as error:  # pluggy rejects bad hook signatures here
            self.fail(origin.name, origin.source, error)
            return False
        if registered is None:  # pluggy registers nothing under a blocked name; naparena blocks none
            return False
        unknown = _unknown_hooks(self.pm, plugin)
        if unknown:
            # A misspelt hook would otherwise register nothing without a word.
            self.pm.unregister(plugin)
            self.fail(origin.name, origin.source, f"unknown hook(s): {', '.join(unknown)}")
            return False
        self.origins[registered] = origin
        return True

    def add_builtin(self) -> None:
        # Loaded directly so the reference bots exist even with autoload off or when
        # naparena runs from a source tree that was never installed.
        origin = _Origin(
            "reference", f"built-in module '{BUILTIN_PLUGIN}'", f"naparena {__version__}"
        )
        try:
            module = importlib.import_module(BUILTIN_PLUGIN)
        except BaseException as error:
            self.fail_unless_interrupted(origin, error)
            return
        self.add(module, origin, BUILTIN_PLUGIN)

    def add_entry_points(self) -> None:
        for point in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
            package, version = _distribution(point)
            if _canonical(package) == "naparena":
                continue  # already loaded by add_builtin
            origin = _Origin(
                point.name,
                f"entry point '{point.name}' from package '{package}' {version}",
                f"{package} {version}",
            )
            try:
                plugin = point.load()
            except BaseException as error:
                self.fail_unless_interrupted(origin, error)
                continue
            self.add(plugin, origin, f"{package}:{point.name}")

    def add_drop_ins(self, folder: Path) -> None:
        package = _drop_in_package(folder)
        # Files starting with "_" are helpers the bots may import, not bots.
        files = sorted(folder.glob("*.py"), key=lambda path: path.name)
        for path in (path for path in files if not path.name.startswith("_")):
            origin = _Origin(path.stem, f"drop-in file {path}", str(path))
            try:
                module = _import_drop_in(package, path)
            except BaseException as error:
                self.fail_unless_interrupted(origin, error)
                continue
            if self.add(module, origin, module.__name__) and not self._has_bots_hook(module):
                missing = "no @naparena.hookimpl register_bots function"
                self.fail(origin.name, origin.source, missing)

    def register_bots(self) -> None:
        # Call each plug-in's hook ourselves, not pm.hook.register_bots(...), so one
        # plug-in raising cannot stop the others, and we know whose bots are whose.
        order = {name: index for index, name in enumerate(self.origins)}
        impls = [i for i in self.pm.hook.register_bots.get_hookimpls() if i.plugin_name in order]
        for impl in sorted(impls, key=lambda impl: order[impl.plugin_name]):
            origin = self.origins[impl.plugin_name]
            if impl.wrapper or impl.hookwrapper:
                self.fail(origin.name, origin.source, "register_bots must not be a hook wrapper")
                continue
            arguments = {"register": self._register_for(origin)}
            try:
                impl.function(*(arguments[name] for name in impl.argnames))
            except BaseException as error:
                self.fail_unless_interrupted(origin, error)

    def _register_for(self, origin: _Origin) -> Callable[[type[Bot]], None]:
        def register(cls: type[Bot]) -> None:
            try:
                self.registry.register(cls, origin.source, origin.version)
            except PluginError as error:
                # One bad bot is reported; the plug-in's other bots still register.
                self.fail(_label(cls), origin.source, error)

        return register

    def _has_bots_hook(self, plugin: object) -> bool:
        return any(impl.plugin is plugin for impl in self.pm.hook.register_bots.get_hookimpls())


def _bots_folder(bots_dir: str | Path | None) -> Path | None:
    if bots_dir is None:
        return None
    folder = Path(bots_dir)
    if folder.is_dir():
        return folder
    if str(bots_dir) == DEFAULT_BOTS_DIR and not folder.exists():
        return None  # most projects have no drop-ins
    problem = "is not a folder" if folder.exists() else "does not exist"
    raise PluginError(f"bots folder '{bots_dir}' {problem}")


def _drop_in_package(folder: Path) -> types.ModuleType:
    # A real parent package: pickle imports "naparena_bots" before the submodule, and
    # its __path__ lets drop-ins import their "_helper.py" files as naparena_bots._helper.
    package = sys.modules.get(DROP_IN_PACKAGE)
    if package is None:
        spec = importlib.machinery.ModuleSpec(DROP_IN_PACKAGE, None, is_package=True)
        package = importlib.util.module_from_spec(spec)
        sys.modules[DROP_IN_PACKAGE] = package
    package.__path__ = [str(folder)]
    return package


def _import_drop_in(package: types.ModuleType, path: Path) -> types.ModuleType:
    name = f"{DROP_IN_PACKAGE}.{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise PluginError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    # In sys.modules before it runs, so classes it defines pickle by module name.
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        if sys.modules.get(name) is module:
            del sys.modules[name]
        raise
    setattr(package, path.stem, module)
    return module


def _unknown_hooks(pm: pluggy.PluginManager, plugin: object) -> list[str]:
    callers = pm.get_hookcallers(plugin) or []
    return sorted(
        caller.name
        for caller in callers
        if not caller.has_spec()
        and any(impl.plugin is plugin and not impl.optionalhook for impl in caller.get_hookimpls())
    )


def _distribution(point: importlib.metadata.EntryPoint) -> tuple[str, str]:
    dist = getattr(point, "dist", None)
    if dist is None:
        return "unknown package", "unknown version"
    return dist.name, dist.version


def _canonical(package: str) -> str:
    return re.sub(r"[-_.]+", "-", package).lower()


def _checked_bot(cls: Any, source: str) -> str:
    if not (isinstance(cls, type) and issubclass(cls, Bot)):
        raise PluginError(f"{source} registered {cls!r}, which is not a naparena.bots.bot.Bot subclass")
    name = cls.name
    if not isinstance(name, str) or not name:
        raise PluginError(f"{source} registered {cls.__qualname__} without a name")
    if not _BOT_NAME.fullmatch(name):
        raise PluginError(
            f"{source} registered bot name {name!r}: use letters, digits, '_', '-' or '.'"
        )
    if not isinstance(cls.params, Mapping) or not all(isinstance(k, str) for k in cls.params):
        raise PluginError(f"{source}: bot '{name}' params must be a dict of name -> default")
    taken = sorted(k for k in cls.params if k in RESERVED_PARAMS)
    if taken:
        raise PluginError(f"{source}: bot '{name}' parameter(s) {', '.join(map(repr, taken))} would replace "
                          f"what the base class Bot uses under that name ({_reserved_uses(taken)}); rename them")
    missing = [kind for kind in ("bid", "play") if getattr(cls, kind) is getattr(Bot, kind)]
    if missing:
        raise PluginError(f"{source}: bot '{name}' does not define {' or '.join(missing)}(view)")
    return name


# Parameters become attributes of the bot, so they must not take a name the base class
# gives its arguments (rng, seat) or uses itself (decisions, hooks, name, params, ...).
RESERVED_PARAMS = frozenset({"rng", "seat"} | {n for n in dir(Bot) if not n.startswith("__")})


def _reserved_uses(names: list[str]) -> str:
    uses = {"rng": "the bot's seeded random.Random", "seat": "the bot's seat number"}
    return "; ".join(f"{n}: {uses.get(n, 'a method or attribute of Bot')}" for n in names)


def _clash_message(name: str, sources: tuple[str, ...]) -> str:
    unique = tuple(dict.fromkeys(sources))
    if len(unique) == 1:
        return f"bot name '{name}' is registered twice by {unique[0]}; rename one of them"
    listed = ", ".join(unique[:-1]) + " and " + unique[-1]
    return f"bot name '{name}' is registered by {listed}; rename one of them"


def _first_line(description: Any) -> str:
    lines = str(description or "").strip().splitlines()
    return lines[0].strip() if lines else ""


def _label(cls: Any) -> str:
    name = getattr(cls, "name", None)
    return name if isinstance(name, str) and name else getattr(cls, "__name__", repr(cls))


def _describe(error: BaseException) -> str:
    if isinstance(error, PluginError):
        return str(error)
    return f"{type(error).__name__}: {error}"


def _trace(error: BaseException) -> str:
    return "".join(traceback.format_exception(error))
