"""Reading a tournament file: TOML in, a validated frozen `Tournament` out (the keys and
their rules are `settings.py`; the schedule is `schedule.py`).

Errors are `ConfigError(path, key, message)`; keys are dotted, array entries 1-based as in the file.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import math
import re
import stat
import sys
import tomllib
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from naparena.arena.setup.league import gauntlet_size, league_size
from naparena.arena.setup.seating import deal_sets, seatings
from naparena.arena.setup.settings import (
    BOT_KEYS,
    CORE_MODES,
    FORMAT_KEYS,
    FORMAT_RULE,
    ISOLATION_RULE,
    MAX_ENTRIES,
    MAX_FILE_BYTES,
    MAX_LEAGUE_BOTS,
    MAX_MATCHES,
    MAX_ROUNDS,
    MAX_TOTAL_HANDS,
    NAME,
    NAME_RULE,
    REQUIRED,
    ROUNDS_RULE,
    SANDBOX_MODES,
    SANDBOX_RULE,
    SEAT_KEYS,
    SETTINGS,
    SPRT_DEFAULTS,
    SPRT_KEYS,
    START_MODES,
    TOP_LEVEL,
    Confinement,
    Format,
    Isolation,
    Lineups,
    Sandbox,
)
from naparena.arena.setup.tournament import BotSpec, SprtSpec, Tournament, VariantSpec
from naparena.errors import ConfigError, PluginError, RulesError, did_you_mean
from naparena.game.rules import VARIANTS, Rules, make_rules
from naparena.stats.standings import STAND_IN_ALIAS

#: A TOML table as parsed (or a manifest's JSON record of one): Any, as its values are
#: whatever the file wrote until the validators here have checked them.
Table = Mapping[str, Any]

#: The [tournament] settings, parsed: Tournament's keyword arguments, of each setting's own type.
Settings = dict[str, Any]

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


def parse_tournament(source: str | Table, path: str | Path | None, registry: Any = None, *,
                     label: str = "") -> Tournament:
    """Validate TOML text (or an already-parsed mapping) into a `Tournament`: of the file
    `path`, or of none (a mapping built in Python), which errors call `label`.

    With a `registry` (an object with `.bots: dict[name, entry]`, `entry.cls.validate_params`)
    bot names and params are checked too and params are filled with the bot's defaults;
    without one they are kept as written (check later with `check_bots`).
    """
    file = str(path) if path else ""
    path = file or label  # what every error below names
    data = _toml(source, path) if isinstance(source, str) else source
    if not isinstance(data, Mapping):
        raise ConfigError(path, "", "must be a TOML document of tables")
    _check_keys(data, TOP_LEVEL, path, "")
    settings = _settings(data, path)
    fmt = _format(data["tournament"], path)
    bots = _bots(data, path, MAX_ENTRIES if fmt is Format.ROUND_ROBIN else MAX_LEAGUE_BOTS)
    lineups = _lineups(data["tournament"], fmt, bots, settings["table"], path)
    variants = _variants(data, settings["table"], path)
    sprt = _sprt(data, bots, variants, path)
    _check_size(settings, bots, variants, lineups, path)
    t = Tournament(**settings, bots=bots, variants=variants, sprt=sprt, path=file, label="" if file else label,
                   seats=_seat_limits(data, path), lineups=lineups)
    return check_bots(t, registry) if registry is not None else t


def _check_size(settings: Settings, bots: tuple[BotSpec, ...], variants: tuple[VariantSpec, ...],
                lineups: Lineups, path: str) -> None:
    """Refuse a schedule too large to hold in memory or to finish: counted, not built."""
    table, n = settings["table"], len(bots)
    if lineups.format is Format.LEAGUE:
        tables, key = league_size(n, table, lineups.rounds), "tournament.rounds"
    elif lineups.format is Format.GAUNTLET:
        tables = gauntlet_size(n, len(lineups.challengers), table, lineups.rounds)
        key = "tournament.rounds"
    else:
        tables, key = (math.comb(n, table) if n > table else 1), "bots"
    if tables > MAX_MATCHES:
        hint = ("; a league or gauntlet samples line-ups (format, rounds)" if key == "bots" else
                "; without rounds a gauntlet plays every table of each challenger: set rounds = N to "
                "sample them" if not lineups.rounds else "")
        raise ConfigError(path, key, f"{n} bots at tables of {table} make {tables} tables; "
                          f"a tournament may have at most {MAX_MATCHES} matches{hint}")
    slots = tuple(str(i % n) for i in range(table)) if n <= table else tuple(map(str, range(table)))
    per_table = len(seatings(slots))
    matches = len(variants) * settings["seeds"] * tables * per_table
    if matches > MAX_MATCHES:
        key = "tournament.rounds" if lineups.rounds else "tournament.seeds"
        raise ConfigError(path, key, f"the schedule would hold {matches} matches "
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
            out.append(f"{t.shown}: variants[{i}]: Écarté Nap with {active} players: the source "
                       "recommends at most four, as the stock runs short")
    return out + duplicate_caveats(t) + interval_caveats(t)


#: Where duplicate boards were measured to widen a built-in bot's interval over plain play
#: on the same hands (`benchmarks/luck_bench.py duplicate`, docs/explanation/statistics.md):
#: (variant, table) → bot → the se ratio, duplicate over plain, whose interval lies above 1.
#: A bot that seldom bids scores as a defender, on the deal more than on its seat, and a
#: deal replayed in every seat pays that part once per rotation.
DUPLICATE_WIDENS: dict[tuple[str, int], dict[str, float]] = {
    ("hoyle", 4): {"cautious": 1.07},
    ("hoyle", 5): {"cautious": 1.18, "random": 1.06},
    ("ecarte", 5): {"random": 1.08},
    ("seven-card", 3): {"cautious": 1.06},
    ("seven-card", 4): {"cautious": 1.05},
    ("floater", 5): {"random": 1.23},
}


def duplicate_caveats(t: Tournament) -> list[str]:
    """Duplicate runs of a variant and table where it was measured to widen the interval of
    one of naparena's own bots that plays here, said before play (any bot's effect is
    measured in the run too: `duplicate_effect`)."""
    if not t.duplicate:
        return []
    out = []
    names = {b.name for b in t.bots if b.command is None}
    for i, v in enumerate(t.variants, 1):
        if v.rules != make_rules(v.base):  # measured on the named variants as they are
            continue
        widened = {n: r for n, r in DUPLICATE_WIDENS.get((v.base, t.table), {}).items() if n in names}
        if widened:
            who = ", ".join(f"{n} ({r:.2f}×)" for n, r in widened.items())
            out.append(f"{t.shown}: variants[{i}]: in {v.base} at tables of {t.table}, duplicate was measured "
                       f"to widen the interval of {who} over plain play on the same hands (its result rides on "
                       "the deal more than on its seat); for those bots set duplicate = false, "
                       "and see each bot's duplicate_effect in the standings")
    return out


def interval_caveats(t: Tournament) -> list[str]:
    """Designs in which an interval cannot exist, said before play with the setting to
    change: the standings' intervals need two boards in each line-up's deal set (with
    duplicate a board is a hand; without, a round of as many hands as seats), and a
    league's or gauntlet's ratings need at least as many boards as bots (the fit spends
    one on each)."""
    out = []
    slots = _first_table(t)
    if t.duplicate:
        per_set, sets = t.seeds * t.hands, max(deal_sets(slots)) + 1
        need = f"hands = {math.ceil(2 / t.seeds)}" + ("" if t.seeds > 1 else " (or seeds = 2)")
        what = f"{t.hands} hand{'s' if t.hands > 1 else ''} × {t.seeds} seed stream{'s' if t.seeds > 1 else ''}"
    else:
        per_set, sets = t.seeds * (t.hands // t.table), len(seatings(slots))
        need = f"hands = {t.table * math.ceil(2 / t.seeds)}"
        what = f"rounds of {t.table} hands (without duplicate a board is a round) × {t.seeds} seed streams"
    if per_set < 2:
        out.append(f"{t.shown}: tournament.hands: each line-up's deal set gets {per_set} board ({what}), and an "
                   f"interval needs two: the standings will give no chips-per-100 interval ('—'); set {need} "
                   "or more")
    if t.lineups.format is not Format.ROUND_ROBIN:
        boards = _tables_of(t, t.lineups.rounds) * t.seeds * sets * (t.hands if t.duplicate else t.hands // t.table)
        if boards <= len(t.bots) - 1:
            out.append(f"{t.shown}: tournament.rounds: this {t.lineups.format.value} deals {boards} boards for "
                       f"{len(t.bots)} bots, and the ratings' intervals need at least as many boards as "
                       "bots (the fit spends one on each): no rating will have an interval; set rounds, hands "
                       "or seeds higher")
    return out


def _first_table(t: Tournament) -> list[str]:
    """The slots of a table as the schedule fills them: `table` different bots, or fewer
    bots repeated (`schedule.tables`)."""
    aliases = [b.alias for b in t.bots]
    if len(aliases) >= t.table or t.lineups.format is not Format.ROUND_ROBIN:
        return [f"slot{i}" for i in range(t.table)]
    return [aliases[i % len(aliases)] for i in range(t.table)]


def _tables_of(t: Tournament, rounds: int) -> int:
    if t.lineups.format is Format.LEAGUE:
        return league_size(len(t.bots), t.table, rounds)
    return gauntlet_size(len(t.bots), len(t.lineups.challengers), t.table, rounds)


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
            raise ConfigError(t.shown, f"bots[{i}].name",
                              f"bot '{bot.name}' is registered by more than one plug-in: {', '.join(clash)}")
        if entry is None:
            available = ", ".join(sorted(registry.bots)) or "none"
            message = f"unknown bot '{bot.name}'{_hint(bot.name, registry.bots)}; available: {available}"
            if getattr(registry, "searched", None):
                message += f" (searched: {'; '.join(registry.searched)})"
            raise ConfigError(t.shown, f"bots[{i}].name", message)
        params = _bot_params(entry.cls, bot.params, t.shown, f"bots[{i}].params")
        for j, variant in enumerate(t.variants, 1):
            if (why := entry.cls.not_played(variant.rules)) is not None:
                raise ConfigError(t.shown, f"bots[{i}].name", f"bot '{bot.name}' does not play variant "
                                  f"'{variant.name}' (variants[{j}]): {why}")
        bots.append(dataclasses.replace(bot, params=params))
    return dataclasses.replace(t, bots=tuple(bots))


def _toml(text: str, path: str) -> dict[str, Any]:
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


def _settings(data: Table, path: str) -> Settings:
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
    _check_keys(table, (*SETTINGS, *FORMAT_KEYS), path, "tournament")
    values: Settings = {}
    for key, setting in SETTINGS.items():
        where = f"tournament.{key}"
        if key not in table:
            if setting.default is REQUIRED:
                raise ConfigError(path, where, "missing: this key is required")
            values[key] = setting.parse(setting.default)
            continue
        value = _typed(table[key], setting.kind, path, where)
        if not setting.ok(value):
            raise ConfigError(path, where, f"{setting.rule}, got {_show(table[key])}")
        values[key] = setting.parse(value)
    return values


def _format(table: Table, path: str) -> Format:
    """The [tournament] table's format (checked before the bots, whose bound it sets)."""
    written = table.get("format", Format.ROUND_ROBIN.value)
    try:
        return Format(_typed(written, str, path, "tournament.format"))
    except ValueError:
        raise ConfigError(path, "tournament.format", f"{FORMAT_RULE}, got {_show(written)}") from None


def _lineups(table: Table, fmt: Format, bots: tuple[BotSpec, ...], seats: int, path: str) -> Lineups:
    """The format's keys: `rounds` (a league needs it, a gauntlet may set it) and a
    gauntlet's `challengers`; a key of another format is refused by name."""
    if "challengers" in table and fmt is not Format.GAUNTLET:
        raise ConfigError(path, "tournament.challengers", 'only a gauntlet has challengers: add format = "gauntlet"')
    if "rounds" in table and fmt is Format.ROUND_ROBIN:
        raise ConfigError(path, "tournament.rounds",
                          'a round-robin plays every line-up: add format = "league" or "gauntlet" to sample them')
    rounds = 0
    if "rounds" in table:
        rounds = _typed(table["rounds"], int, path, "tournament.rounds")
        if not 1 <= rounds <= MAX_ROUNDS:
            raise ConfigError(path, "tournament.rounds", f"{ROUNDS_RULE}, got {_show(table['rounds'])}")
    elif fmt is Format.LEAGUE:
        raise ConfigError(path, "tournament.rounds",
                          "missing: a league needs rounds = N, the tables each bot sits at per seed stream")
    if fmt is Format.LEAGUE and len(bots) < seats:
        raise ConfigError(path, "bots", f"a league of {len(bots)} bots cannot fill tables of {seats} "
                          "(tournament.table) with different bots")
    challengers = _challengers(table, bots, seats, path) if fmt is Format.GAUNTLET else ()
    return Lineups(fmt, rounds, challengers)


def _challengers(table: Table, bots: tuple[BotSpec, ...], seats: int, path: str) -> tuple[str, ...]:
    where = "tournament.challengers"
    if "challengers" not in table:
        raise ConfigError(path, where, 'missing: a gauntlet names its challengers, e.g. challengers = ["mybot"]')
    value = table["challengers"]
    if not isinstance(value, list) or not value or not all(isinstance(a, str) for a in value):
        raise ConfigError(path, where, f'must be a non-empty array of bot aliases, got {_show(value)}')
    aliases = [b.alias for b in bots]
    for alias in value:
        if alias not in aliases:
            raise ConfigError(path, where, f"'{alias}' is not a bot of this tournament{_hint(alias, aliases)}")
    if len(set(value)) < len(value):
        raise ConfigError(path, where, "names a bot twice")
    field = len(aliases) - len(value)
    if field < seats - 1:
        raise ConfigError(path, where, f"leaves a field of {field} bots; each table of {seats} "
                          f"(tournament.table) needs {seats - 1} besides its challenger")
    return tuple(value)


def _bots(data: Table, path: str, limit: int = MAX_ENTRIES) -> tuple[BotSpec, ...]:
    bots: list[BotSpec] = []
    seated: dict[str, int] = {}
    for i, entry in _entries(data, "bots", path, limit):
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
        bots.append(BotSpec(name, alias, dict(params), command, isolation, _bot_files(entry, path, where),
                            _preload(entry, command, path, where)))
    return tuple(bots)


_MODULE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")


def _preload(entry: Table, command: tuple[str, ...] | None, path: str, where: str) -> tuple[str, ...]:
    """An entry's `preload`: modules a Python bot's seat server imports first, each one this
    interpreter can find (its top-level package: nothing is imported to check)."""
    if "preload" not in entry:
        return ()
    value = entry["preload"]
    if not isinstance(value, list) or not all(isinstance(m, str) and _MODULE.fullmatch(m) for m in value):
        raise ConfigError(path, f"{where}.preload", 'must be an array of module names, e.g. ["numpy"], '
                          f"got {_show(value)}")
    if command is not None:
        raise ConfigError(path, f"{where}.preload", "is for a Python bot naparena serves; an external bot "
                          "(a command) imports what it imports itself")
    for i, module in enumerate(value):
        if importlib.util.find_spec(module.partition(".")[0]) is None:
            raise ConfigError(path, f"{where}.preload[{i}]", f"no module named '{module.partition('.')[0]}' "
                              f"where naparena runs ({sys.executable})")
    return tuple(value)


def _bot_files(entry: Table, path: str, where: str) -> tuple[str, ...]:
    """An entry's `files`: paths its seat sandbox shows read-only, each existing,
    relative to the tournament file (or absolute)."""
    if "files" not in entry:
        return ()
    value = entry["files"]
    if not isinstance(value, list) or not all(isinstance(a, str) and a for a in value):
        raise ConfigError(path, f"{where}.files", "must be an array of paths (files or folders) relative to "
                          f'this file, e.g. ["weights.bin", "data/"], got {_show(value)}')
    base = Path(path).parent
    for i, name in enumerate(value):
        if not (base / name).exists():
            raise ConfigError(path, f"{where}.files[{i}]", f"{name} does not exist (looked for {base / name})")
    return tuple(value)


def _bot_process(entry: Table, path: str, where: str) -> tuple[tuple[str, ...] | None, Isolation | None]:
    """An entry's `command` (an external bot) and `isolation`, checked."""
    command = None if entry.get("command") is None else _argv(entry["command"], path, f"{where}.command")
    written = entry.get("isolation")
    if written is None:
        return command, None
    try:
        isolation = Isolation(written)
    except ValueError:
        raise ConfigError(path, f"{where}.isolation", f"{ISOLATION_RULE}, got {_show(written)}") from None
    if command is not None and isolation is Isolation.INLINE:
        raise ConfigError(path, f"{where}.isolation",
                          "an external bot (command = [...]) always runs in its own process")
    return command, isolation


def _argv(value: Any, path: str, where: str) -> tuple[str, ...]:
    if (not isinstance(value, list) or not value
            or not all(isinstance(a, str) and a for a in value)):
        raise ConfigError(path, where, "must be a non-empty array of non-empty strings, "
                          f'e.g. ["node", "bots/mybot.js"], got {_show(value)}')
    return tuple(value)



def _seat_limits(data: Table, path: str) -> Confinement:
    """The optional [seats] table: limits and sandbox prefix of every seat process."""
    table = data.get("seats")
    if table is None:
        return Confinement()
    if not isinstance(table, Mapping):
        raise ConfigError(path, "seats", f"must be a table ([seats]), got {_show(table)}")
    _check_keys(table, (*SEAT_KEYS, "sandbox", "cores", "start"), path, "seats")
    values: dict[str, Any] = {}
    for key, (kind, ok, rule) in SEAT_KEYS.items():
        if key in table:
            value = _typed(table[key], kind, path, f"seats.{key}")
            if not ok(value):
                raise ConfigError(path, f"seats.{key}", f"{rule}, got {_show(table[key])}")
            values[key] = value
    if "sandbox" in table:
        values["sandbox"] = _sandbox(table["sandbox"], path)
    if "cores" in table:
        if table["cores"] not in CORE_MODES:
            raise ConfigError(path, "seats.cores", f'must be "match" or "any", got {_show(table["cores"])}')
        values["cores"] = table["cores"]
    if "start" in table:
        if table["start"] not in START_MODES:
            raise ConfigError(path, "seats.start", f'must be "warm" or "cold", got {_show(table["start"])}')
        values["start"] = table["start"]
    return Confinement(**values)


def _sandbox(value: Any, path: str) -> Sandbox | tuple[str, ...]:
    if isinstance(value, str):
        if value in SANDBOX_MODES:
            return Sandbox(value)
        raise ConfigError(path, "seats.sandbox", f"{SANDBOX_RULE}, got {_show(value)}")
    return _argv(value, path, "seats.sandbox")


def _bot_params(cls: Any, params: Table, path: str, where: str) -> dict[str, Any]:
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


def _named_param(message: str, params: Table) -> str | None:
    # PluginError carries only a message; the bot contract quotes the parameter's name in it.
    return next((key for key in params if f"'{key}'" in message), None)


def _variants(data: Table, table: int, path: str) -> tuple[VariantSpec, ...]:
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


def _sprt(data: Table, bots: tuple[BotSpec, ...], variants: tuple[VariantSpec, ...], path: str) -> SprtSpec | None:
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
    values: dict[str, float] = {}
    rate = "must be between 0 and 0.5"
    checks: tuple[tuple[str, float | None, Callable[[float], bool], str], ...] = (
        ("delta", None, lambda v: v != 0, "must not be 0"),
        ("alpha", SPRT_DEFAULTS["alpha"], lambda v: 0 < v < 0.5, rate),
        ("beta", SPRT_DEFAULTS["beta"], lambda v: 0 < v < 0.5, rate))
    for key, default, ok, rule in checks:
        if key not in table:
            if default is None:
                raise ConfigError(path, f"sprt.{key}", "missing: the difference in chips per 100 hands to detect")
            values[key] = default
            continue
        value = _typed(table[key], float, path, f"sprt.{key}")
        if not ok(value) or math.isnan(value) or math.isinf(value):
            raise ConfigError(path, f"sprt.{key}", f"{rule}, got {_show(table[key])}")
        values[key] = value
    names = [v.name for v in variants]
    variant = _text(table, "variant", path, "sprt") if "variant" in table else names[0]
    if variant not in names:
        raise ConfigError(path, "sprt.variant",
                          f"'{variant}' is not a variant of this tournament; variants: {', '.join(names)}")
    return SprtSpec(pair[0], pair[1], values["delta"], values["alpha"], values["beta"], variant)


def _variant_base(entry: Table, name: str, path: str, where: str) -> tuple[str, dict[str, Any]]:
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


def _rules(base: str, overrides: Table, path: str, where: str) -> Rules:
    try:
        return make_rules(base, overrides)
    except RulesError as err:
        key = f"{where}.{_key(err.option)}" if err.option in overrides else where
        raise ConfigError(path, key, err.message) from None


def _check_table(rules: Rules, table: int, overrides: Table, path: str, where: str) -> None:
    try:
        rules.check_players(table)
    except RulesError as err:
        key = f"{where}.{_key(err.option)}" if err.option in overrides else where
        message = f"cannot deal a table of {table} (tournament.table): {err.message}"
        raise ConfigError(path, key, message) from None


# --- small validators ---------------------------------------------------------------------

def _entries(data: Table, key: str, path: str, limit: int = MAX_ENTRIES) -> list[tuple[int, Table]]:
    value = data.get(key)
    if isinstance(value, list) and len(value) > limit:
        more = ("; a league or a gauntlet takes up to " f"{MAX_LEAGUE_BOTS}"
                if key == "bots" and limit == MAX_ENTRIES else "")
        raise ConfigError(path, key, f"has {len(value)} entries; at most {limit}{more}")
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


def _check_keys(table: Table, allowed: Sequence[str] | Mapping[str, object], path: str, where: str) -> None:
    for key in table:
        if key not in allowed:
            listed = ", ".join(allowed)
            raise ConfigError(path, _join(where, key),
                              f"unknown key{_hint(key, allowed)}; allowed here: {listed}")


def _text(entry: Table, key: str, path: str, where: str) -> str:
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


def _hint(word: Any, choices: Iterable[object]) -> str:
    return did_you_mean(word, choices)


def _key(key: Any) -> str:
    key = str(key)
    # Quoted as TOML writes it, letters as typed: "tablé", not "tabl\u00e9".
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else json.dumps(key, ensure_ascii=False)


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


# --- a recorded configuration -------------------------------------------------------------

def tournament_from_record(config: Any, path: str) -> Tournament:
    """The `Tournament` a run's manifest records (`Tournament.as_dict()`), validated as a
    file is: the record is put back into the file's tables and read by `parse_tournament`,
    so one reader builds every `Tournament`. Each variant's recorded rules must be the
    ones its base and overrides give (the record lists both)."""
    if not isinstance(config, Mapping):
        raise ConfigError(path, "tournament", f"must be a table, got {_show(config)}")
    data: dict[str, Any] = {"tournament": {k: v for k, v in config.items() if k in SETTINGS or k in FORMAT_KEYS}}
    for key in ("bots", "seats", "sprt"):
        if config.get(key) is not None:
            data[key] = config[key]
    recorded = config.get("variants")
    if isinstance(recorded, list):
        data["variants"] = [_variant_entry(v) for v in recorded]
    t = parse_tournament(data, path)
    for i, (variant, entry) in enumerate(zip(t.variants, recorded or (), strict=True), 1):
        if variant.rules.as_dict() != entry.get("rules"):
            raise ConfigError(path, f"variants[{i}].rules", "do not follow from its base and overrides")
    return t


def _variant_entry(recorded: Any) -> Any:
    """A recorded variant (name, base, overrides, rules) as the file writes it."""
    if not isinstance(recorded, Mapping) or not isinstance(recorded.get("overrides"), Mapping):
        return recorded  # parse_tournament names what is wrong with it
    if recorded.get("base") == recorded.get("name") and not recorded["overrides"]:
        return {"name": recorded["name"]}
    return {"name": recorded.get("name"), "base": recorded.get("base"), **recorded["overrides"]}
