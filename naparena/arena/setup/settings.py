"""What a tournament file may say: every key with its default, type, range and rule, the
names rules, the limits that keep a typo from starting an endless run, and the [seats]
limits of seat processes (`Confinement`). Plain data and checks, no process plumbing:
the reader, the schedule and the executors all take their settings from here.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Literal

from naparena.bots.bot import DEFAULT_TIMEOUT
from naparena.stats.standings import ADJUSTED, PLAIN

MAX_WORKERS = 256
MAX_ROUNDS = 10_000  # a league's tables per bot (the match bound usually binds first)
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
SPRT_DEFAULTS = {"alpha": 0.05, "beta": 0.05}  # error rates of the sequential test
BOT_KEYS = ("name", "alias", "params", "command", "isolation", "files", "preload")
REQUIRED = object()


class Isolation(StrEnum):
    """Where a Python bot plays: in the match process, or in a seat process of its own (an
    external bot always plays in its own). A str, so logs and hashes see the word."""

    INLINE = "inline"
    PROCESS = "process"


ISOLATION_RULE = "must be " + " or ".join(f'"{mode}"' for mode in Isolation)


def parse_isolation(value: str) -> Isolation:
    """`isolation` by its one rule, wherever it is read (a file, the command line, an
    environment's opponent): ValueError says the rule and what was given."""
    try:
        return Isolation(value)
    except ValueError:
        raise ValueError(f"{ISOLATION_RULE}, got {value!r}") from None


SCHEDULER_RULE = ('must be tcp://host:port, a scheduler file, local:N (N from 1 to 9999) '
                  'or "" for the workers of this machine')


@dataclass(frozen=True)
class Scheduler:
    """Where matches are played, as `scheduler` names it: this machine's workers ("pool",
    written "" or "none"), a local Dask cluster of N workers ("local", local:N), a
    scheduler's address ("address", tcp://host:port) or a scheduler file ("file")."""

    text: str  # as written; "" for this machine's workers
    kind: Literal["pool", "local", "address", "file"]

    @classmethod
    def parse(cls, text: str) -> Scheduler:
        """The scheduler `text` names; ValueError(SCHEDULER_RULE) if it cannot name one."""
        if text in ("", "none"):
            return cls("", "pool")
        if text.split(":", 1)[0] == "local":
            if re.fullmatch(r"local:[1-9][0-9]{0,3}", text):
                return cls(text, "local")
        elif "://" in text:
            if re.fullmatch(r"[a-z][a-z0-9+.-]*://\S+", text):
                return cls(text, "address")
        elif text.strip() == text:
            return cls(text, "file")
        raise ValueError(SCHEDULER_RULE)

    @property
    def on_dask(self) -> bool:
        return self.kind != "pool"

    @property
    def local_workers(self) -> int:
        """The N of local:N."""
        assert self.kind == "local", self
        return int(self.text.split(":", 1)[1])

    def __str__(self) -> str:
        return self.text


def _parses(parse: Callable[[Any], Any]) -> Callable[[Any], bool]:
    def ok(value: Any) -> bool:
        try:
            parse(value)
        except ValueError:
            return False
        return True
    return ok


def _same(value: Any) -> Any:
    return value


@dataclass(frozen=True)
class Setting:
    """One key of the [tournament] table: default, type, range and the line that explains
    it. `kind` is the type the file writes; `parse` makes the setting's own type of it
    (an `Isolation`, a `Scheduler`) once `ok` has passed it, and `plain` the file's value
    again, for the manifest and the config hash."""

    default: Any
    kind: type
    ok: Callable[[Any], bool]
    rule: str
    help: str
    parse: Callable[[Any], Any] = _same
    plain: Callable[[Any], Any] = _same

# The estimators the intervals may be taken with (`stats.standings`), and "auto": adjusted
# where it reaches a width for less CPU than plain play (`Tournament.luck_adjusted`).
AUTO = "auto"
ESTIMATORS = (AUTO, ADJUSTED, PLAIN)
ESTIMATOR_RULE = 'must be "auto", "adjusted" or "plain"'

SETTINGS: dict[str, Setting] = {
    "name": Setting(REQUIRED, str, lambda v: NAME.fullmatch(v) is not None, NAME_RULE, "names the run and its logs"),
    "seed": Setting(0, int, lambda v: 0 <= v < 2**63, "must be from 0 to 2**63 - 1",
                    "master seed: every deal and bot RNG derives from it"),
    "seeds": Setting(1, int, lambda v: 1 <= v <= 10_000, "must be from 1 to 10000",
                     "independent seed streams, to compare strategies across seeds"),
    "hands": Setting(100, int, lambda v: 1 <= v <= 1_000_000, "must be from 1 to 1000000", "hands per match"),
    "table": Setting(4, int, lambda v: 2 <= v <= 7, "must be from 2 to 7", "seats at each table"),
    "duplicate": Setting(True, bool, lambda v: True, "",
                         "replay each deal in the rotations of one cyclic order of the seats (every bot holds it in "
                         "every seat), so the luck of the cards cancels; where it was measured to widen a "
                         "built-in bot's interval (variant, table), the reader says so before play"),
    "workers": Setting(0, int, lambda v: 0 <= v <= MAX_WORKERS, f"must be from 0 to {MAX_WORKERS}",
                       "worker processes; 0 = one per core"),
    "stack": Setting(0, int, lambda v: 0 <= v <= 10**9, "must be from 0 to 1000000000",
                     "chips each seat starts a match with (results are net chips)"),
    "timeout": Setting(DEFAULT_TIMEOUT, float, lambda v: 0.001 <= v <= 3600, "must be from 0.001 to 3600 seconds",
                       "seconds a bot may take per decision"),
    "max_fault_share": Setting(0.25, float, lambda v: 0 < v <= 1, "must be more than 0 and at most 1",
                               "disqualify a bot failing more than this share of its decisions "
                               "(after 20); 1.0 = never"),
    "isolation": Setting(Isolation.INLINE.value, str, _parses(Isolation), ISOLATION_RULE,
                         "Python bots in the match process, or each in its own seat process",
                         Isolation, str),
    "bots_dir": Setting("bots", str, _path_ok, PATH_RULE,
                        "drop-in bot folder beside this file (default: ./bots if there is none)"),
    "log_dir": Setting("logs", str, _path_ok, PATH_RULE,
                       "where runs are written, relative to the current directory"),
    "estimator": Setting(AUTO, str, lambda v: v in ESTIMATORS, ESTIMATOR_RULE,
                         '"adjusted" takes the luck of random\'s answers, of a purchase\'s stock and of '
                         'the peep card out of the intervals (AIVAT, CPU for rollouts at each); "plain" counts '
                         'chips as they fell; "auto" adjusts where there is such luck beside a bot slower than '
                         'naparena\'s quick ones'),
    "scheduler": Setting("", str, _parses(Scheduler.parse), SCHEDULER_RULE,
                         'a Dask scheduler: tcp://host:port, a scheduler file, or local:N; "" = workers here',
                         Scheduler.parse, str),
}

@dataclass(frozen=True)
class Timing:
    """A decision's time limits, all from the one `timeout` (seconds): at `timeout` the
    bot is interrupted and faulted; at `hard` a bot that still has not answered (a hang
    in C code cannot be interrupted) is killed with its worker; a worker that shows no
    progress and no bot call for `stall` stops the run. A `Job` carries it to the match
    and to the executor that watches it."""

    timeout: float = SETTINGS["timeout"].default

    @property
    def hard(self) -> float:
        return self.timeout * 3 + 5.0

    @property
    def stall(self) -> float:
        # Between bot calls a match never waits this long, on any machine.
        return max(600.0, 10 * self.hard)


class Format(StrEnum):
    """Who meets whom: every line-up of the bots (round-robin), named challengers against
    the rest of the field (gauntlet), or sampled line-ups of many bots (league)."""

    ROUND_ROBIN = "round-robin"
    GAUNTLET = "gauntlet"
    LEAGUE = "league"


FORMAT_RULE = "must be " + ", ".join(f'"{f}"' for f in Format)
# [tournament] keys of the formats beside SETTINGS: written only when not round-robin, so a
# round-robin file's manifest, config hash and run directory name stay as they were.
FORMAT_KEYS = ("format", "rounds", "challengers")
ROUNDS_RULE = f"must be from 1 to {MAX_ROUNDS}"


@dataclass(frozen=True)
class Lineups:
    """The format and its settings: `rounds` is how many tables each bot (a league) or
    each field bot with each challenger (a gauntlet) sits at per seed stream, 0 for every
    combination; `challengers` the aliases a gauntlet tests."""

    format: Format = Format.ROUND_ROBIN
    rounds: int = 0
    challengers: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        """The keys a manifest records: none for a round-robin (as before formats existed)."""
        if self.format is Format.ROUND_ROBIN:
            return {}
        out: dict[str, Any] = {"format": self.format.value, "rounds": self.rounds}
        if self.format is Format.GAUNTLET:
            out["challengers"] = list(self.challengers)
        return out

    @classmethod
    def from_dict(cls, config: dict[str, Any]) -> Lineups:
        return cls(Format(config.get("format", Format.ROUND_ROBIN.value)), int(config.get("rounds", 0)),
                   tuple(config.get("challengers", ())))


# A fault share only means something once a bot has made this many decisions.
FAULT_MIN_DECISIONS = 20
# STAND_IN_ALIAS: the alias the standings give a seat once the stand-in plays it (a
# disqualified bot's seat, or one whose bot died in the match); defined with the standings.

# Bounds that keep a typo from starting a run that cannot end or fit in memory.
MAX_FILE_BYTES = 1 << 20
MAX_ENTRIES = 64           # [[bots]] and [[variants]] each
MAX_LEAGUE_BOTS = 1_000    # [[bots]] of a league or a gauntlet, whose schedules grow linearly
MAX_MATCHES = 100_000
MAX_TOTAL_HANDS = 10**9

# The [seats] table: key -> (type, check, rule); its values make a `Confinement`.
SEAT_KEYS: dict[str, tuple[type, Callable[[Any], bool], str]] = {
    "memory_mb": (int, lambda v: v >= 0, "must be 0 (no limit) or more"),
    "cpu_seconds": (int, lambda v: v >= 0, "must be 0 (no limit) or more"),
    "open_files": (int, lambda v: v >= 0, "must be 0 (no limit) or more"),
    "disk_mb": (int, lambda v: v >= 0, "must be 0 (no limit) or more"),
    "start_timeout": (float, lambda v: v > 0, "must be more than 0"),
}


#: [seats] disk_mb's default: far above what a bot's scratch files need.
DISK_MB = 256

#: [seats] cores: where seat processes run (`arena/match/cores.py` says why "match").
CORE_MODES = ("match", "any")

#: [seats] start: "warm" forks a Python bot's seats from a server that imported it once
#: (`arena/match/warm.py`); "cold" starts each in a fresh interpreter. The same bytes either way.
START_MODES = ("warm", "cold")

class Sandbox(StrEnum):
    """[seats] sandbox as a word. A run resolves AUTO and REQUIRED once, before any job is
    built, to BWRAP (bubblewrap works) or OFF, which the manifest records (in a file "bwrap"
    means "required"). A StrEnum is its word, so manifests and logs hold the same bytes."""

    AUTO = "auto"
    REQUIRED = "required"
    OFF = "off"
    BWRAP = "bwrap"


#: The words [seats] sandbox, --sandbox and a manifest may hold.
SANDBOX_MODES = tuple(Sandbox)
SANDBOX_RULE = ('must be "auto", "required", "off" or an argv prefix, '
                'e.g. ["podman", "run", "--rm", "-i", "image"]')


def parse_sandbox(value: str) -> Sandbox:
    """A sandbox mode given as a word (--sandbox, or a run's manifest: "bwrap" is what
    auto and required became there)."""
    if value not in SANDBOX_MODES:
        raise ValueError(f'must be "auto", "required" or "off", got {value!r}')
    return Sandbox(value)


@dataclass(frozen=True)
class Confinement:
    """How seat processes are started: rlimits, the sandbox (a `Sandbox` mode or an argv
    prefix; a run's jobs carry it resolved: BWRAP, OFF or a prefix), the start-up limit.
    Plain data, so it travels in a `Job` as `as_dict()`."""

    memory_mb: int = 2048          # the seat's memory (its cgroup; else each process's RLIMIT_AS); 0 = no limit
    cpu_seconds: int = 0           # CPU time of the whole match (RLIMIT_CPU); 0 = no limit
    open_files: int = 64           # RLIMIT_NOFILE
    sandbox: Sandbox | tuple[str, ...] = Sandbox.AUTO  # a mode, or an argv prefix such as a container runtime
    start_timeout: float = 10.0    # seconds from start to the bot's hello
    cores: str = "match"           # "match": seats share their match's core; "any": the kernel places them
    disk_mb: int = DISK_MB         # each private folder's size (sandboxed) and any one file's; 0 = no limit
    start: str = "warm"            # "warm": Python seats forked from their bot's server; "cold": each its own start

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"memory_mb": self.memory_mb, "cpu_seconds": self.cpu_seconds,
               "open_files": self.open_files,
               "sandbox": self.sandbox.value if isinstance(self.sandbox, Sandbox) else list(self.sandbox),
               "start_timeout": self.start_timeout}
        if self.cores != "match":  # said only where it applies, so other manifests stay as they were
            out["cores"] = self.cores
        if self.disk_mb != DISK_MB:
            out["disk_mb"] = self.disk_mb
        if self.start != "warm":
            out["start"] = self.start
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> Confinement:
        data = dict(data or {})
        mode = data.get("sandbox", Sandbox.AUTO)
        data["sandbox"] = parse_sandbox(mode) if isinstance(mode, str) else tuple(mode)
        return cls(**data)
