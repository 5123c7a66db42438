"""Tournament files: TOML in, a validated frozen `Tournament` out (the schedule is `schedule.py`).

Errors are `ConfigError(path, key, message)`; keys are dotted, array entries 1-based as in the file.
"""

from __future__ import annotations

import dataclasses
import difflib
import hashlib
import json
import os
import math
import re
import stat
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tomli_w

from naparena.arena.seating import seatings
from naparena.arena.seats import Confinement
from naparena.errors import ConfigError, PluginError, RulesError
from naparena.game.rules import VARIANTS, Rules, make_rules
from naparena.stats.standings import STAND_IN_ALIAS

MAX_WORKERS = 256
PATH_RULE = "must be a folder path: not empty, at most 4096 characters, no NUL character"


def _path_ok(value: str) -> bool:
    return bool(value.strip()) and len(value) <= 4096 and "\0" not in value


# Names that end up in seed derivation, run directories and log files: no separators,
# so "|".join in derive_seed can never make two different tuples collide.
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}")
NAME_RULE = ("must be a short name of letters, digits and . _ + -"
             " (at most 64, starting with a letter or digit)")

TOP_LEVEL = ("tournament", "bots", "variants", "sprt", "seats")
SPRT_KEYS = ("a", "b", "delta", "alpha", "beta", "variant")
BOT_KEYS = ("name", "alias", "params", "command", "isolation")
ISOLATION = ("inline", "process")
REQUIRED = object()


@dataclass(frozen=True)
class Setting:
    """One key of the [tournament] table: default, type, range and the line that explains it."""

    default: Any
    kind: type
    ok: Callable[[Any], bool]
    rule: str
    help: str


def scheduler_kind(text: str) -> str | None:
    """What a `scheduler` value names: "pool" (this machine's workers), "local" (a local
    Dask cluster of N workers), "address" or "file"; None if it cannot be one."""
    if text in ("", "none"):
        return "pool"
    if text.split(":", 1)[0] == "local":
        return "local" if re.fullmatch(r"local:[1-9][0-9]{0,3}", text) else None
    if "://" in text:
        return "address" if re.fullmatch(r"[a-z][a-z0-9+.-]*://\S+", text) else None
    return "file" if text.strip() == text else None


SCHEDULER_RULE = ('must be tcp://host:port, a scheduler file, local:N (N from 1 to 9999) '
                  'or "" for the workers of this machine')

SETTINGS: dict[str, Setting] = {
    "name": Setting(REQUIRED, str, NAME.fullmatch, NAME_RULE, "names the run and its logs"),
    "seed": Setting(0, int, lambda v: 0 <= v < 2**63, "must be from 0 to 2**63 - 1",
                    "master seed: every deal and bot RNG derives from it"),
    "seeds": Setting(1, int, lambda v: 1 <= v <= 10_000, "must be from 1 to 10000",
                     "independent seed streams, to compare strategies across seeds"),
    "hands": Setting(100, int, lambda v: 1 <= v <= 1_000_000, "must be from 1 to 1000000", "hands per match"),
    "table": Setting(4, int, lambda v: 2 <= v <= 7, "must be from 2 to 7", "seats at each table"),
    "duplicate": Setting(True, bool, lambda v: True, "",
                         "replay each deal in every seating of the design, so luck of the cards cancels"),
    "workers": Setting(0, int, lambda v: 0 <= v <= MAX_WORKERS, f"must be from 0 to {MAX_WORKERS}",
                       "worker processes; 0 = one per core"),
    "stack": Setting(0, int, lambda v: 0 <= v <= 10**9, "must be from 0 to 1000000000",
                     "chips each seat starts a match with (results are net chips)"),
    "timeout": Setting(1.0, float, lambda v: 0.001 <= v <= 3600, "must be from 0.001 to 3600 seconds",
                       "seconds a bot may take per decision"),
    "max_fault_share": Setting(0.25, float, lambda v: 0 < v <= 1, "must be more than 0 and at most 1",
                               "disqualify a bot failing more than this share of its decisions "
                               "(after 20); 1.0 = never"),
    "isolation": Setting("inline", str, lambda v: v in ISOLATION, 'must be "inline" or "process"',
                         "Python bots in the match process, or each in its own seat process"),
    "bots_dir": Setting("bots", str, lambda v: _path_ok(v), PATH_RULE,
                        "drop-in bot folder beside this file (default: ./bots if there is none)"),
    "log_dir": Setting("logs", str, lambda v: _path_ok(v), PATH_RULE,
                       "where runs are written, relative to the current directory"),
    "scheduler": Setting("", str, lambda v: scheduler_kind(v) is not None, SCHEDULER_RULE,
                         'a Dask scheduler: tcp://host:port, a scheduler file, or local:N; "" = workers here'),
}

# A fault share only means something once a bot has made this many decisions.
FAULT_MIN_DECISIONS = 20
# STAND_IN_ALIAS: the alias the standings give a seat once the stand-in plays it (a
# disqualified bot's seat, or one whose bot died in the match); defined with the standings.

# Bounds that keep a typo from starting a run that cannot end or fit in memory.
MAX_FILE_BYTES = 1 << 20
MAX_ENTRIES = 64           # [[bots]] and [[variants]] each
MAX_MATCHES = 100_000
MAX_TOTAL_HANDS = 10**9


@dataclass(frozen=True)
class BotSpec:
    """One [[bots]] entry: the registered bot `name`, its seat `alias` and its params; for
    an external bot the `command` that runs it (argv as written in the file); `isolation`
    when the entry sets its own."""

    name: str
    alias: str
    params: dict
    command: tuple[str, ...] | None = None
    isolation: str | None = None

    def as_dict(self) -> dict:
        out = {"name": self.name, "alias": self.alias, "params": dict(self.params)}
        if self.command is not None:
            out["command"] = list(self.command)
        if self.isolation is not None:
            out["isolation"] = self.isolation
        return out


@dataclass(frozen=True)
class VariantSpec:
    """One [[variants]] entry. `base` is the named variant the rules start from (for a
    named variant, its own name), so `make_rules(base, overrides)` rebuilds `rules`."""

    name: str
    base: str
    overrides: dict
    rules: Rules

    def as_dict(self) -> dict:
        return {"name": self.name, "base": self.base, "overrides": dict(self.overrides),
                "rules": self.rules.as_dict()}


@dataclass(frozen=True)
class SprtSpec:
    """The optional [sprt] table: stop the head-to-head of `a` and `b` in `variant` once a
    sequential test decides between "no difference" and "a − b = delta per 100 hands"."""

    a: str
    b: str
    delta: float
    alpha: float
    beta: float
    variant: str


@dataclass(frozen=True)
class Tournament:
    """A validated tournament file. `path` is the file as named by the caller ("" if none)."""

    name: str
    seed: int
    seeds: int
    hands: int
    table: int
    duplicate: bool
    workers: int
    stack: int
    timeout: float
    max_fault_share: float
    isolation: str
    bots_dir: str
    log_dir: str
    scheduler: str
    bots: tuple[BotSpec, ...]
    variants: tuple[VariantSpec, ...]
    sprt: SprtSpec | None = None
    path: str = ""
    seats: Confinement = Confinement()

    @property
    def bots_path(self) -> Path:
        """The drop-in folder: `bots_dir` beside the tournament file; for the default
        "bots", when the file has no such folder beside it, `./bots` in the current
        directory, the folder `naparena bots` and `naparena check` look in."""
        beside = Path(self.path).parent / self.bots_dir
        if self.bots_dir == SETTINGS["bots_dir"].default and not beside.is_dir():
            return Path(self.bots_dir)
        return beside

    @property
    def log_path(self) -> Path:
        return Path(self.log_dir)

    def variant(self, name: str) -> VariantSpec:
        """The variant called `name` (KeyError if there is none)."""
        return {v.name: v for v in self.variants}[name]

    def as_dict(self) -> dict:
        """Plain, JSON-able settings, bots and variants. `path` is left out: it differs
        between machines, and logs must not."""
        settings = {key: getattr(self, key) for key in SETTINGS}
        out = {**settings, "bots": [b.as_dict() for b in self.bots],
               "variants": [v.as_dict() for v in self.variants]}
        if self.sprt is not None:
            out["sprt"] = dataclasses.asdict(self.sprt)
        out["seats"] = self.seats.as_dict()
        return out

    def isolation_of(self, bot: BotSpec) -> str:
        """Where `bot` runs: an external bot always in a process; a Python bot as its
        entry says, else as [tournament] says."""
        return "process" if bot.command is not None else (bot.isolation or self.isolation)

    def command_of(self, bot: BotSpec) -> list[str]:
        """An external bot's argv, every argument naming a file or folder next to the
        tournament file made absolute (seat processes start in an empty directory)."""
        base = Path(self.path).parent
        # abspath, not resolve: a virtual environment's python is a symlink that must stay one.
        return [os.path.abspath(base / arg) if arg and (base / arg).exists() else arg for arg in bot.command]

    def command_hash(self, bot: BotSpec) -> str:
        """sha256 of the files an external bot's command names (as written, with contents)."""
        digest = hashlib.sha256()
        base = Path(self.path).parent
        for arg in bot.command:
            if arg and (base / arg).is_file():
                digest.update(arg.encode() + b"\0" + (base / arg).read_bytes() + b"\0")
        return "sha256:" + digest.hexdigest()[:16]


def with_isolation(t: Tournament, mode: str) -> Tournament:
    """`--isolation`: every Python bot in `mode`, whatever the file says."""
    bots = tuple(dataclasses.replace(b, isolation=None) for b in t.bots)
    return dataclasses.replace(t, isolation=mode, bots=bots)


# --- loading ------------------------------------------------------------------------------

def load_tournament(path: str | Path, registry: Any = None) -> Tournament:
    """Read and validate a tournament file; see `parse_tournament`."""
    shown = str(path)
    try:
        text = _read_limited(Path(path), shown).decode("utf-8")
    except FileNotFoundError:
        raise ConfigError(shown, "", "no such tournament file") from None
    except IsADirectoryError:
        raise ConfigError(shown, "", "is a folder, not a tournament file") from None
    except UnicodeDecodeError as err:
        raise ConfigError(shown, "", f"is not UTF-8 text (byte {err.start})") from None
    except OSError as err:
        raise ConfigError(shown, "", f"cannot read the tournament file: {err.strerror}") from None
    return parse_tournament(text, shown, registry)


def _read_limited(path: Path, shown: str) -> bytes:
    """The file's bytes; a FIFO, a device or a huge file is refused before reading it
    (reading a FIFO would wait forever, /dev/zero would never end)."""
    info = path.stat()
    if stat.S_ISDIR(info.st_mode):
        raise IsADirectoryError
    if not stat.S_ISREG(info.st_mode):
        raise ConfigError(shown, "", "is not a regular file (a pipe, a device or a socket); "
                          "name a TOML file")
    if info.st_size > MAX_FILE_BYTES:
        raise ConfigError(shown, "", f"is {info.st_size} bytes; a tournament file may be at most "
                          f"{MAX_FILE_BYTES} bytes (1 MiB)")
    with path.open("rb") as f:
        data = f.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise ConfigError(shown, "", f"grew past {MAX_FILE_BYTES} bytes (1 MiB) while being read")
    return data


def parse_tournament(source: str | Mapping, path: str | Path | None, registry: Any = None) -> Tournament:
    """Validate TOML text (or an already-parsed mapping) into a `Tournament`.

    With a `registry` (an object with `.bots: dict[name, entry]`, `entry.cls.validate_params`)
    bot names and params are checked too and params are filled with the bot's defaults;
    without one they are kept as written (check later with `check_bots`).
    """
    path = str(path) if path else ""
    data = _toml(source, path) if isinstance(source, str) else source
    if not isinstance(data, Mapping):
        raise ConfigError(path, "", "must be a TOML document of tables")
    _check_keys(data, TOP_LEVEL, path, "")
    settings = _settings(data, path)
    bots = _bots(data, path)
    variants = _variants(data, settings["table"], path)
    sprt = _sprt(data, bots, variants, path)
    _check_size(settings, bots, variants, path)
    t = Tournament(**settings, bots=bots, variants=variants, sprt=sprt, path=path,
                   seats=_seat_limits(data, path))
    return check_bots(t, registry) if registry is not None else t


def _check_size(settings: dict, bots: tuple, variants: tuple, path: str) -> None:
    """Refuse a schedule too large to hold in memory or to finish: counted, not built."""
    table, n = settings["table"], len(bots)
    tables = math.comb(n, table) if n > table else 1
    if tables > MAX_MATCHES:
        raise ConfigError(path, "bots", f"{n} bots at tables of {table} make {tables} tables; "
                          f"a tournament may have at most {MAX_MATCHES} matches")
    slots = tuple(str(i % n) for i in range(table)) if n <= table else tuple(map(str, range(table)))
    per_table = len(seatings(slots))
    matches = len(variants) * settings["seeds"] * tables * per_table
    if matches > MAX_MATCHES:
        raise ConfigError(path, "tournament.seeds", f"the schedule would hold {matches} matches "
                          f"({len(variants)} variants x {settings['seeds']} seeds x {tables} tables x "
                          f"{per_table} seatings of each table); at most {MAX_MATCHES}")
    if matches * settings["hands"] > MAX_TOTAL_HANDS:
        raise ConfigError(path, "tournament.hands", f"{matches} matches of {settings['hands']} hands are "
                          f"{matches * settings['hands']} hands; at most {MAX_TOTAL_HANDS} in one tournament")


def caveats(t: Tournament) -> list[str]:
    """Things a tournament may do but probably should not, said before it runs."""
    out = []
    for i, v in enumerate(t.variants, 1):
        active = t.table - v.rules.sits_out(t.table)
        if v.rules.purchase == "ecarte" and active > 4:
            out.append(f"{t.path}: variants[{i}]: Écarté Nap with {active} players: the source "
                       "recommends at most four, as the stock runs short")
    return out


def check_bots(t: Tournament, registry: Any) -> Tournament:
    """Check every bot name against `registry` and replace params by the validated full set.

    Separate from parsing because the registry may depend on the file's own `bots_dir`.
    """
    bots = []
    for i, bot in enumerate(t.bots, 1):
        if bot.command is not None:  # an external program: its handshake checks its params
            bots.append(bot)
            continue
        entry = registry.bots.get(bot.name)
        clash = getattr(registry, "clashes", {}).get(bot.name)
        if clash:
            raise ConfigError(t.path, f"bots[{i}].name",
                              f"bot '{bot.name}' is registered by more than one plug-in: {', '.join(clash)}")
        if entry is None:
            available = ", ".join(sorted(registry.bots)) or "none"
            message = f"unknown bot '{bot.name}'{_hint(bot.name, registry.bots)}; available: {available}"
            if getattr(registry, "searched", None):
                message += f" (searched: {'; '.join(registry.searched)})"
            raise ConfigError(t.path, f"bots[{i}].name", message)
        params = _bot_params(entry.cls, bot.params, t.path, f"bots[{i}].params")
        bots.append(dataclasses.replace(bot, params=params))
    return dataclasses.replace(t, bots=tuple(bots))


def _toml(text: str, path: str) -> dict:
    try:
        return tomllib.loads(text)
    except RecursionError:
        raise ConfigError(path, "", "TOML nested too deeply to read") from None
    except tomllib.TOMLDecodeError as err:
        # tomllib ends its message with "(at line L, column C)"; put the place first.
        message = str(err)
        found = re.search(r"\s*\(at line (\d+), column (\d+)\)$", message)
        if found:
            what = message[:found.start()]
            message = f"TOML syntax error at line {found[1]}, column {found[2]}: {what}"
        else:
            message = f"TOML syntax error: {message}"
        raise ConfigError(path, "", message) from None


def _settings(data: Mapping, path: str) -> dict:
    table = data.get("tournament")
    if table is None:
        raise ConfigError(path, "tournament",
                          'missing: the file needs a [tournament] table with name = "..."')
    if not isinstance(table, Mapping):
        raise ConfigError(path, "tournament", f"must be a table ([tournament]), got {_show(table)}")
    for key in TOP_LEVEL:
        if key in table:
            # A common TOML slip: `bots = [...]` written below [tournament] lands inside it.
            raise ConfigError(path, f"tournament.{key}",
                              f"belongs at the top level: write [[{key}]] tables, "
                              "or put it above [tournament]")
    _check_keys(table, SETTINGS, path, "tournament")
    values = {}
    for key, setting in SETTINGS.items():
        where = f"tournament.{key}"
        if key not in table:
            if setting.default is REQUIRED:
                raise ConfigError(path, where, "missing: this key is required")
            values[key] = setting.default
            continue
        value = _typed(table[key], setting.kind, path, where)
        if not setting.ok(value):
            raise ConfigError(path, where, f"{setting.rule}, got {_show(table[key])}")
        values[key] = value
    return values


def _bots(data: Mapping, path: str) -> tuple[BotSpec, ...]:
    bots: list[BotSpec] = []
    seated: dict[str, int] = {}
    for i, entry in _entries(data, "bots", path):
        where = f"bots[{i}]"
        _check_keys(entry, BOT_KEYS, path, where)
        name = _text(entry, "name", path, where)
        alias = name
        if "alias" in entry:
            alias = _text(entry, "alias", path, where)
            if not NAME.fullmatch(alias):
                raise ConfigError(path, f"{where}.alias", f"{NAME_RULE}, got {_show(alias)}")
        if alias == STAND_IN_ALIAS:
            raise ConfigError(path, f"{where}.alias" if "alias" in entry else f"{where}.name",
                              f"'{STAND_IN_ALIAS}' names the seat that replaces a disqualified bot; "
                              "give this bot another alias")
        if alias in seated:
            raise ConfigError(path, f"{where}.alias",
                              f"'{alias}' is already the seat name of bots[{seated[alias]}]; "
                              "give each entry a different alias")
        params = entry.get("params", {})
        if not isinstance(params, Mapping):
            raise ConfigError(path, f"{where}.params",
                              f"must be a table, e.g. params = {{}}, got {_show(params)}")
        seated[alias] = i
        command, isolation = _bot_process(entry, path, where)
        if command is not None and not NAME.fullmatch(name):
            raise ConfigError(path, f"{where}.name", f"{NAME_RULE}, got {_show(name)}")
        bots.append(BotSpec(name, alias, dict(params), command, isolation))
    return tuple(bots)


def _bot_process(entry: Mapping, path: str, where: str) -> tuple[tuple[str, ...] | None, str | None]:
    """An entry's `command` (an external bot) and `isolation`, checked."""
    command = entry.get("command")
    if command is not None:
        command = _argv(command, path, f"{where}.command")
    isolation = entry.get("isolation")
    if isolation is not None:
        if isolation not in ISOLATION:
            raise ConfigError(path, f"{where}.isolation", f'must be "inline" or "process", got {_show(isolation)}')
        if command is not None and isolation == "inline":
            raise ConfigError(path, f"{where}.isolation",
                              "an external bot (command = [...]) always runs in its own process")
    return command, isolation


def _argv(value: Any, path: str, where: str) -> tuple[str, ...]:
    if (not isinstance(value, list) or not value
            or not all(isinstance(a, str) and a for a in value)):
        raise ConfigError(path, where, "must be a non-empty array of non-empty strings, "
                          f'e.g. ["node", "bots/mybot.js"], got {_show(value)}')
    return tuple(value)


SEAT_KEYS = {  # [seats]: key -> (type, check, rule)
    "memory_mb": (int, lambda v: v >= 0, "must be 0 (no limit) or more"),
    "cpu_seconds": (int, lambda v: v >= 0, "must be 0 (no limit) or more"),
    "open_files": (int, lambda v: v >= 0, "must be 0 (no limit) or more"),
    "start_timeout": (float, lambda v: v > 0, "must be more than 0"),
}


def _seat_limits(data: Mapping, path: str) -> Confinement:
    """The optional [seats] table: limits and sandbox prefix of every seat process."""
    table = data.get("seats")
    if table is None:
        return Confinement()
    if not isinstance(table, Mapping):
        raise ConfigError(path, "seats", f"must be a table ([seats]), got {_show(table)}")
    _check_keys(table, (*SEAT_KEYS, "sandbox"), path, "seats")
    values: dict[str, Any] = {}
    for key, (kind, ok, rule) in SEAT_KEYS.items():
        if key in table:
            value = _typed(table[key], kind, path, f"seats.{key}")
            if not ok(value):
                raise ConfigError(path, f"seats.{key}", f"{rule}, got {_show(table[key])}")
            values[key] = value
    if "sandbox" in table:
        values["sandbox"] = _argv(table["sandbox"], path, "seats.sandbox")
    return Confinement(**values)


def _bot_params(cls: Any, params: Mapping, path: str, where: str) -> dict:
    known = getattr(cls, "params", None)
    if isinstance(known, Mapping):
        for key in params:
            if key not in known:
                listed = ", ".join(sorted(known)) or "none"
                raise ConfigError(path, f"{where}.{_key(key)}",
                                  f"unknown parameter{_hint(key, known)}; this bot's parameters: {listed}")
    try:
        return dict(cls.validate_params(dict(params)))
    except PluginError as err:
        culprit = _named_param(str(err), params)
        raise ConfigError(path, f"{where}.{_key(culprit)}" if culprit else where, str(err)) from None


def _named_param(message: str, params: Mapping) -> str | None:
    # PluginError carries only a message; the bot contract quotes the parameter's name in it.
    return next((key for key in params if f"'{key}'" in message), None)


def _variants(data: Mapping, table: int, path: str) -> tuple[VariantSpec, ...]:
    variants: list[VariantSpec] = []
    named: dict[str, int] = {}
    for i, entry in _entries(data, "variants", path):
        where = f"variants[{i}]"
        name = _text(entry, "name", path, where)
        if not NAME.fullmatch(name):
            raise ConfigError(path, f"{where}.name", f"{NAME_RULE}, got {_show(name)}")
        if name in named:
            raise ConfigError(path, f"{where}.name",
                              f"'{name}' is already variants[{named[name]}]; variant names must be unique")
        base, overrides = _variant_base(entry, name, path, where)
        rules = _rules(base, overrides, path, where)
        _check_table(rules, table, overrides, path, where)
        named[name] = i
        variants.append(VariantSpec(name, base, overrides, rules))
    return tuple(variants)


def _sprt(data: Mapping, bots: tuple[BotSpec, ...], variants: tuple[VariantSpec, ...], path: str) -> SprtSpec | None:
    table = data.get("sprt")
    if table is None:
        return None
    if not isinstance(table, Mapping):
        raise ConfigError(path, "sprt", f"must be a table ([sprt]), got {_show(table)}")
    _check_keys(table, SPRT_KEYS, path, "sprt")
    aliases = [b.alias for b in bots]
    pair = []
    for key in ("a", "b"):
        if key not in table:
            raise ConfigError(path, f"sprt.{key}", "missing: name the two bots (aliases) to compare")
        alias = _text(table, key, path, "sprt")
        if alias not in aliases:
            raise ConfigError(path, f"sprt.{key}", f"'{alias}' is not a bot of this tournament{_hint(alias, aliases)}; "
                              f"bots: {', '.join(aliases)}")
        pair.append(alias)
    if pair[0] == pair[1]:
        raise ConfigError(path, "sprt.b", "must name a different bot from sprt.a")
    values = {}
    for key, default, ok, rule in (("delta", None, lambda v: v != 0, "must not be 0"),
                                   ("alpha", 0.05, lambda v: 0 < v < 0.5, "must be between 0 and 0.5"),
                                   ("beta", 0.05, lambda v: 0 < v < 0.5, "must be between 0 and 0.5")):
        if key not in table:
            if default is None:
                raise ConfigError(path, f"sprt.{key}", "missing: the difference in chips per 100 hands to detect")
            values[key] = default
            continue
        value = _typed(table[key], float, path, f"sprt.{key}")
        if not ok(value) or value != value or value in (float("inf"), float("-inf")):
            raise ConfigError(path, f"sprt.{key}", f"{rule}, got {_show(table[key])}")
        values[key] = value
    names = [v.name for v in variants]
    variant = _text(table, "variant", path, "sprt") if "variant" in table else names[0]
    if variant not in names:
        raise ConfigError(path, "sprt.variant", f"'{variant}' is not a variant of this tournament; variants: {', '.join(names)}")
    return SprtSpec(pair[0], pair[1], values["delta"], values["alpha"], values["beta"], variant)


def _variant_base(entry: Mapping, name: str, path: str, where: str) -> tuple[str, dict]:
    """The named variant to start from, and the option overrides on top of it.

    Overrides need an explicit `base`, so a named variant's name always means exactly
    that variant and a tuned one always carries a name of its own.
    """
    overrides = {k: v for k, v in entry.items() if k not in ("name", "base")}
    known = ", ".join(VARIANTS)
    if "base" not in entry:
        if name not in VARIANTS:
            raise ConfigError(path, f"{where}.name",
                              f"unknown variant '{name}'{_hint(name, VARIANTS)}; named variants: {known}. "
                              'To define your own, add base = "<named variant>"')
        if overrides:
            first = next(iter(overrides))
            raise ConfigError(path, f"{where}.{_key(first)}",
                              f"rules options can only be overridden with an explicit base: "
                              f'write name = "my-{name}" and base = "{name}"')
        return name, {}
    base = _text(entry, "base", path, where)
    if base not in VARIANTS:
        raise ConfigError(path, f"{where}.base",
                          f"unknown base variant '{base}'{_hint(base, VARIANTS)}; named variants: {known}")
    if name in VARIANTS:
        raise ConfigError(path, f"{where}.name",
                          f"'{name}' is a named variant, so with base = '{base}' it would mean two things; "
                          f"give your variant its own name, e.g. 'my-{name}'")
    return base, overrides


def _rules(base: str, overrides: dict, path: str, where: str) -> Rules:
    try:
        return make_rules(base, overrides)
    except RulesError as err:
        key = f"{where}.{_key(err.option)}" if err.option in overrides else where
        raise ConfigError(path, key, err.message) from None


def _check_table(rules: Rules, table: int, overrides: dict, path: str, where: str) -> None:
    try:
        rules.check_players(table)
    except RulesError as err:
        key = f"{where}.{_key(err.option)}" if err.option in overrides else where
        message = f"cannot deal a table of {table} (tournament.table): {err.message}"
        raise ConfigError(path, key, message) from None


# --- small validators ---------------------------------------------------------------------

def _entries(data: Mapping, key: str, path: str) -> list[tuple[int, Mapping]]:
    value = data.get(key)
    if isinstance(value, list) and len(value) > MAX_ENTRIES:
        raise ConfigError(path, key, f"has {len(value)} entries; at most {MAX_ENTRIES}")
    if value is None:
        raise ConfigError(path, key, f"missing: add at least one [[{key}]] table")
    if isinstance(value, Mapping):
        raise ConfigError(path, key, f"must be an array of tables: write [[{key}]], not [{key}]")
    if not isinstance(value, list):
        raise ConfigError(path, key, f"must be an array of tables ([[{key}]]), got {_show(value)}")
    if not value:
        raise ConfigError(path, key, f"is empty: add at least one [[{key}]] table")
    for i, entry in enumerate(value, 1):
        if not isinstance(entry, Mapping):
            raise ConfigError(path, f"{key}[{i}]", f"must be a table, got {_show(entry)}")
    return list(enumerate(value, 1))


def _check_keys(table: Mapping, allowed: Sequence[str] | Mapping, path: str, where: str) -> None:
    for key in table:
        if key not in allowed:
            listed = ", ".join(allowed)
            raise ConfigError(path, _join(where, key),
                              f"unknown key{_hint(key, allowed)}; allowed here: {listed}")


def _text(entry: Mapping, key: str, path: str, where: str) -> str:
    if key not in entry:
        raise ConfigError(path, f"{where}.{key}", "missing: this key is required")
    value = entry[key]
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(path, f"{where}.{key}", f"must be a non-empty string, got {_show(value)}")
    return value


def _typed(value: Any, kind: type, path: str, where: str) -> Any:
    # bool is an int subclass in Python, but `hands = true` is a mistake, not 1.
    if isinstance(value, bool) != (kind is bool):
        ok = False
    elif kind is float:
        # The comparison also refuses nan, inf and integers too large to be a float.
        ok = isinstance(value, (int, float)) and abs(value) < 1e300
        value = float(value) if ok else value
    else:
        ok = isinstance(value, kind)
    if not ok:
        words = {int: "a whole number", float: "a finite number", bool: "true or false", str: "a string"}
        raise ConfigError(path, where, f"must be {words[kind]}, got {_show(value)}")
    return value


def _hint(word: Any, choices) -> str:
    close = difflib.get_close_matches(str(word), [str(c) for c in choices], n=1)
    return f" (did you mean '{close[0]}'?)" if close else ""


def _key(key: Any) -> str:
    key = str(key)
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else json.dumps(key)


def _join(where: str, key: Any) -> str:
    return f"{where}.{_key(key)}" if where else _key(key)


def _show(value: Any) -> str:
    """A value as the person wrote it in TOML, so messages quote their own file."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, Mapping):
        return "a table"
    if isinstance(value, list):
        return "an array"
    return repr(value)


# --- the starter file -----------------------------------------------------------------------

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
# variant, and a confidence interval needs at least two; eight give useful ones in
# seconds. Its two bots at four seats play 6 seatings of each deal, and 35 hands a match
# keep the run as short, and its intervals as narrow, as 100 hands of the 2 seatings
# that once put the bots on alternate seats.
STARTER = {"seeds": (8, "for confidence intervals"),
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
