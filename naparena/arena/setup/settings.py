"""What a tournament file may say: every key with its default, type, range and rule, the
names rules, the limits that keep a typo from starting an endless run, and the [seats]
limits of seat processes (`Confinement`). Plain data and checks, no process plumbing:
the reader, the schedule and the executors all take their settings from here.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

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

# The [seats] table: key -> (type, check, rule); its values make a `Confinement`.
SEAT_KEYS = {
    "memory_mb": (int, lambda v: v >= 0, "must be 0 (no limit) or more"),
    "cpu_seconds": (int, lambda v: v >= 0, "must be 0 (no limit) or more"),
    "open_files": (int, lambda v: v >= 0, "must be 0 (no limit) or more"),
    "start_timeout": (float, lambda v: v > 0, "must be more than 0"),
}


@dataclass(frozen=True)
class Confinement:
    """How seat processes are started: rlimits, an optional sandbox prefix, the start-up
    limit. Plain data, so it travels in a `Job` as `as_dict()`."""

    memory_mb: int = 2048          # address space (RLIMIT_AS); 0 = no limit
    cpu_seconds: int = 0           # CPU time of the whole match (RLIMIT_CPU); 0 = no limit
    open_files: int = 64           # RLIMIT_NOFILE
    sandbox: tuple[str, ...] = ()  # argv prefix, e.g. ("bwrap", "--ro-bind", "/", "/", ...)
    start_timeout: float = 10.0    # seconds from start to the bot's hello

    def as_dict(self) -> dict:
        return {"memory_mb": self.memory_mb, "cpu_seconds": self.cpu_seconds,
                "open_files": self.open_files, "sandbox": list(self.sandbox),
                "start_timeout": self.start_timeout}

    @classmethod
    def from_dict(cls, data: dict | None) -> "Confinement":
        data = dict(data or {})
        data["sandbox"] = tuple(data.get("sandbox", ()))
        return cls(**data)
