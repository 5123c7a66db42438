"""The validated tournament: frozen data for its settings, bots, variants and [sprt] table,
as the reader (`reader.py`) makes it from a file."""

from __future__ import annotations

import dataclasses
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from naparena.arena.setup.settings import AUTO, SETTINGS, Confinement, Isolation, Lineups, Scheduler, Timing
from naparena.game.rules import Rules
from naparena.stats.standings import ADJUSTED
from naparena.table.luck import DRAWN, KNOWN


@dataclass(frozen=True)
class BotSpec:
    """One [[bots]] entry: the registered bot `name`, its seat `alias` and its params; for
    an external bot the `command` that runs it (argv as written in the file); `isolation`
    when the entry sets its own."""

    name: str
    alias: str
    params: dict[str, Any]
    command: tuple[str, ...] | None = None
    isolation: Isolation | None = None
    files: tuple[str, ...] = ()   # more paths its seat sandbox shows, as written in the file
    preload: tuple[str, ...] = ()  # modules its seat server imports before it (a served Python bot)

    def as_dict(self) -> dict[str, Any]:
        out = {"name": self.name, "alias": self.alias, "params": dict(self.params)}
        if self.command is not None:
            out["command"] = list(self.command)
        if self.isolation is not None:
            out["isolation"] = self.isolation.value
        if self.files:
            out["files"] = list(self.files)
        if self.preload:
            out["preload"] = list(self.preload)
        return out


@dataclass(frozen=True)
class VariantSpec:
    """One [[variants]] entry. `base` is the named variant the rules start from (for a
    named variant, its own name), so `make_rules(base, overrides)` rebuilds `rules`."""

    name: str
    base: str
    overrides: dict[str, Any]
    rules: Rules

    def as_dict(self) -> dict[str, Any]:
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
    """A validated tournament. `path` is its file as named by the caller; a tournament built
    from a mapping has none (""), and then `label` is what its errors call it and `folder`
    where the relative paths it names are from ("": the current directory)."""

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
    isolation: Isolation
    bots_dir: str
    log_dir: str
    scheduler: Scheduler
    estimator: str
    bots: tuple[BotSpec, ...]
    variants: tuple[VariantSpec, ...]
    sprt: SprtSpec | None = None
    path: str = ""
    seats: Confinement = Confinement()
    lineups: Lineups = Lineups()
    label: str = ""
    folder: str = ""

    @property
    def shown(self) -> str:
        """What a message calls the tournament: its file, else its label ("" when neither)."""
        return self.path or self.label

    @property
    def base(self) -> Path:
        """Where the relative paths the tournament names (bots_dir, command, files) are from:
        the file's folder, else `folder`."""
        return Path(self.path).parent if self.path else Path(self.folder)

    @property
    def bots_path(self) -> Path:
        """The drop-in folder: `bots_dir` beside the tournament file; for the default
        "bots", when the file has no such folder beside it, `./bots` in the current
        directory, the folder `naparena bots` and `naparena check` look in."""
        beside = self.base / self.bots_dir
        if self.bots_dir == SETTINGS["bots_dir"].default and not beside.is_dir():
            return Path(self.bots_dir)
        return beside

    @property
    def timing(self) -> Timing:
        """The decision time-out and the limits that follow from it, for every match."""
        return Timing(self.timeout)

    @property
    def luck_adjusted(self) -> bool:
        """Whether the intervals take out the luck of random's answers and of the cards
        beyond the hands (a purchase's stock, the peep card: `table.luck`): as `estimator`
        says, and for "auto" where there is such luck (a bot drawing with known odds,
        random, or a variant with purchases or a peep card) beside a bot that is not one of
        naparena's quick built-ins. Among those alone the rollouts cost more CPU than the
        hands they save (docs/explanation/statistics.md); beside a search bot or a program
        they cost less."""
        if self.estimator != AUTO:
            return self.estimator == ADJUSTED
        plays = [b for b in self.bots if b.command is None]
        luck = (any(b.name in DRAWN for b in plays)
                or any(v.rules.purchase != "none" or v.rules.peep for v in self.variants))
        return luck and any(b.command is not None or b.name not in KNOWN for b in self.bots)

    @property
    def log_path(self) -> Path:
        return Path(self.log_dir)

    def variant(self, name: str) -> VariantSpec:
        """The variant called `name` (KeyError if there is none)."""
        return {v.name: v for v in self.variants}[name]

    def as_dict(self) -> dict[str, Any]:
        """Plain, JSON-able settings, bots and variants. `path`, `label` and `folder` are left
        out: they differ between machines, and logs must not."""
        settings = {key: setting.plain(getattr(self, key)) for key, setting in SETTINGS.items()}
        if self.estimator == SETTINGS["estimator"].default:  # written when set: older manifests stay as they were
            del settings["estimator"]
        out = {**settings, **self.lineups.as_dict(), "bots": [b.as_dict() for b in self.bots],
               "variants": [v.as_dict() for v in self.variants]}
        if self.sprt is not None:
            out["sprt"] = dataclasses.asdict(self.sprt)
        out["seats"] = self.seats.as_dict()
        return out

    def isolation_of(self, bot: BotSpec) -> Isolation:
        """Where `bot` runs: an external bot always in a process; a Python bot as its
        entry says, else as [tournament] says."""
        return Isolation.PROCESS if bot.command is not None else (bot.isolation or self.isolation)

    def command_of(self, bot: BotSpec) -> list[str]:
        """An external bot's argv, every argument naming a file or folder next to the
        tournament file made absolute (seat processes start in an empty directory)."""
        assert bot.command is not None, "a Python bot has no command"
        base = self.base
        # abspath, not resolve: a virtual environment's python is a symlink that must stay one.
        return [os.path.abspath(base / arg) if arg and (base / arg).exists() else arg for arg in bot.command]

    def files_of(self, bot: BotSpec) -> list[str]:
        """The paths `files = [...]` names for `bot`, made absolute."""
        base = self.base
        return [os.path.abspath(base / name) for name in bot.files]

    def command_hash(self, bot: BotSpec) -> str:
        """sha256 of the files an external bot's command names (as written, with contents)."""
        assert bot.command is not None, "a Python bot has no command"
        digest = hashlib.sha256()
        base = self.base
        for arg in (*bot.command, *bot.files):
            if arg and (base / arg).is_file():
                digest.update(arg.encode() + b"\0" + (base / arg).read_bytes() + b"\0")
        return "sha256:" + digest.hexdigest()[:16]


def with_isolation(t: Tournament, mode: Isolation) -> Tournament:
    """`--isolation`: every Python bot in `mode`, whatever the file says."""
    bots = tuple(dataclasses.replace(b, isolation=None) for b in t.bots)
    return dataclasses.replace(t, isolation=mode, bots=bots)
