"""Pre-flight for one bot (`naparena check`): play it through every named variant, at every
table size from 2 to 7 seats the variant allows, on fixed seeded deals against `random`
bots, and report illegal answers, exceptions, decision times and how many decisions of
each kind it was asked (with `thorough`, dealing on until every kind the variant has was
asked often enough); and start a tournament file's external bots for their handshake
(`naparena bots --tournament`)."""

from __future__ import annotations

import logging
import random
import re
import time
from collections import Counter, deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import orjson

from naparena.arena.executors.pool import InlineExecutor
from naparena.arena.match import sandbox
from naparena.arena.match.bot_files import footprint
from naparena.arena.match.channel import STDERR_TAIL
from naparena.arena.match.job import Job, seat_record
from naparena.arena.match.play import play_job, supervisor
from naparena.arena.match.preflight import probe, with_stderr
from naparena.arena.session import registry_for, resolve_sandbox, seat_files
from naparena.arena.setup.reader import load_tournament
from naparena.arena.setup.schedule import derive_seed
from naparena.arena.setup.settings import SETTINGS, Confinement, Isolation, Sandbox, Timing
from naparena.bots.protocol import ProtocolError
from naparena.errors import HandshakeError, RulesError, RunError
from naparena.game.engine import (
    BID,
    DECISION_KINDS,
    EXCHANGE,
    FLOATER_DISCARD,
    FLOATER_PEEP,
    GARNET,
    GARNET_DISCARD,
    PEEP,
    PEEP_EXCHANGE,
    PLAY,
    TRUMPS,
    Match,
    base_bid,
)
from naparena.game.rules import VARIANTS, Rules, make_rules
from naparena.table import Seat, Supervisor, Table, fault_kind

CHECK_SEED = 2026  # fixed, so every check of a bot sees the same positions
NEAR_LIMIT = 0.5  # a decision taking this share of the time-out is warned about
#: With `thorough`, the most hands dealt at one table size before giving up on a kind the
#: bot's own play never reaches (one that never wins a bid is never asked to discard).
THOROUGH_MAX_HANDS = 5_000


def variant_kinds(rules: Rules) -> tuple[str, ...]:
    """The decision kinds a hand under `rules` can ask for, in `DECISION_KINDS` order."""
    kinds = {BID, PLAY}
    if rules.peep:
        kinds |= {PEEP, PEEP_EXCHANGE}
    if rules.floater:
        kinds |= {FLOATER_PEEP, FLOATER_DISCARD}
        if any(base_bid(b) == "wellington" for b in rules.bids):
            kinds.add(TRUMPS)  # floater Wellington names trumps
    if rules.purchase != "none":
        kinds.add(EXCHANGE)
    if rules.sir_garnet:
        kinds |= {GARNET, GARNET_DISCARD}
    return tuple(k for k in DECISION_KINDS if k in kinds)


@dataclass
class VariantCheck:
    """One variant's check, over every table size it was played at (`players`)."""

    variant: str
    players: tuple[int, ...]
    hands: int = 0
    decisions: int = 0
    faults: dict[str, int] = field(default_factory=dict)
    first_error: str = ""
    times: list[float] = field(default_factory=list)
    not_played: str | None = None  # the bot declines the variant (`Bot.not_played`): why
    #: decisions the bot was asked, by kind, per table size
    asked: dict[int, Counter[str]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.faults

    @property
    def kinds(self) -> tuple[str, ...]:
        return variant_kinds(make_rules(self.variant))

    def short(self, at_least: int) -> dict[int, list[str]]:
        """Per table size, the variant's kinds asked fewer than `at_least` times."""
        out = {}
        for players in self.players:
            missing = [k for k in self.kinds if self.asked.get(players, Counter())[k] < at_least]
            if missing:
                out[players] = missing
        return out

    def _enough(self, players: int, at_least: int) -> bool:
        asked = self.asked.get(players, Counter())
        return all(asked[k] >= at_least for k in self.kinds)

    def near_limit(self, timeout: float) -> str | None:
        """How close its slowest decisions came to the time-out, when it is within 50%:
        the check's positions are not the hardest a tournament deals."""
        p95, slowest = self.percentile(0.95), self.percentile(1.0)
        if slowest < NEAR_LIMIT * timeout:
            return None
        return (f"p95 {p95 * 1e3:.0f} ms, max {slowest * 1e3:.0f} ms against a {timeout:g} s time-out "
                f"({slowest / timeout:.0%} of it)")

    def percentile(self, q: float) -> float:
        if not self.times:
            return 0.0
        ordered = sorted(self.times)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def table_sizes(variant: str) -> list[int]:
    """The table sizes from 2 to 7 seats a named variant can deal."""
    rules = make_rules(variant)
    sizes = []
    for players in range(2, 8):
        try:
            rules.check_players(players)
        except RulesError:
            continue
        sizes.append(players)
    return sizes


@dataclass(frozen=True)
class _Check:
    """One bot's check: the bot, and the options every table of its check shares."""

    registry: Any
    name: str
    params: dict[str, Any]
    hands: int
    timeout: float
    thorough: int
    command: list[str] | None = None
    confinement: Confinement = field(default_factory=Confinement)
    files: list[str] = field(default_factory=list)
    hidden: list[str] = field(default_factory=list)  # the tournament's places and other bots' paths


def check_bot(  # noqa: PLR0913 - `naparena check`'s entry point: each option its own keyword
        registry: Any, name: str, *, params: dict[str, Any] | None = None, hands: int = 30,
        timeout: float = SETTINGS["timeout"].default, variants: list[str] | None = None,
        isolation: Isolation = Isolation.INLINE,
        command: list[str] | None = None, confinement: Confinement | None = None,
        progress: Callable[[int, int, str], None] | None = None, thorough: int = 0,
        files: list[str] | None = None, hidden: list[str] | None = None) -> list[VariantCheck]:
    """Play `name` in seat 0 of every variant at every table size it allows; its faults,
    decision times and decisions asked by kind per variant. With `thorough` = N, deal on
    in rounds of `hands` until every kind the variant has was asked at least N times at
    each table size (at most THOROUGH_MAX_HANDS hands a table size).
    `progress(done, total, variant)` is called after each variant.

    Decisions are supervised as in a tournament (exceptions, illegal answers, the
    watchdog's time-outs); inline, a bot that kills the process cannot be survived here.
    With `isolation = "process"` (always, for an external `command`) the bot is a seat
    process, and a protocol violation is a fault quoting the offending line.
    """
    if command is not None or isolation == Isolation.PROCESS:
        check = _Check(registry, name, params or {}, hands, timeout, thorough, command,
                       resolve_sandbox(confinement or Confinement(), None)[0], files or [], hidden or [])
        if command is not None:
            _shake_hands(name, check.params, command, check.confinement, check.files, check.hidden)
        names, results = variants or list(VARIANTS), []
        # An external program declares nothing; an unregistered name fails as it did before.
        cls = registry.bots[name].cls if command is None and name in registry.bots else None
        for n, variant in enumerate(names, 1):
            results.append(_declined(cls, variant) or _check_process(check, variant))
            if progress:
                progress(n, len(names), variant)
        return results
    entry = registry.get(name)
    check = _Check(registry, name, entry.cls.validate_params(params or {}), hands, timeout, thorough)
    executor = InlineExecutor(Timing(timeout))  # its watchdog thread interrupts an overrunning bot
    try:
        watch = supervisor(timeout)  # on the slot the executor's watchdog reads
        names = variants or list(VARIANTS)
        results = []
        for n, variant in enumerate(names, 1):
            report = _declined(entry.cls, variant)
            if report is None:
                report = VariantCheck(variant, tuple(table_sizes(variant)))
                for players in report.players:
                    _check_variant(check, variant, players, watch, report)
            results.append(report)
            if progress:
                progress(n, len(names), variant)
        return results
    finally:
        executor.shutdown()


def _declined(cls: Any, variant: str) -> VariantCheck | None:
    """The report of a variant the bot's class declares it does not play (not a fault), or None."""
    why = cls.not_played(make_rules(variant)) if cls is not None else None
    return VariantCheck(variant, tuple(table_sizes(variant)), not_played=why) if why is not None else None


def _rounds(report: VariantCheck, players: int, hands: int, thorough: int) -> Iterator[int]:
    """The hands to deal in each round at one table size: `hands` once, then, with
    `thorough`, more rounds until every kind was asked often enough or the cap is reached."""
    dealt = 0
    while dealt == 0 or (thorough and not report._enough(players, thorough) and dealt < THOROUGH_MAX_HANDS):
        n = min(hands, THOROUGH_MAX_HANDS - dealt) if dealt else hands
        yield n
        dealt += n


def _check_variant(check: _Check, variant: str, players: int, watch: Supervisor,
                   report: VariantCheck) -> VariantCheck:
    """The bot in seat 0 against `random` bots, at the table a tournament plays at: its
    hooks are called, its decisions supervised, timed and counted by kind."""
    rules = make_rules(variant)
    seed = derive_seed(CHECK_SEED, "check", variant, players)
    registry, name = check.registry, check.name
    bot = Seat(registry.make(name, check.params, random.Random(seed), 0), name)
    asked = report.asked.setdefault(players, Counter())
    bot.decide = {kind: _timed(decide, kind, report, asked) for kind, decide in bot.decide.items()}
    others = [Seat(registry.make("random", {}, random.Random(seed + s), s), f"random{s}") for s in range(1, players)]
    table = Table([bot, *others], watch)
    match = Match(rules, players, seed)
    table.start_match(0, [bot.alias, *(o.alias for o in others)], rules, check.hands, watch.timeout)

    def book(record: dict[str, Any]) -> None:
        for _, seat, kind, reason in record.get("faults", ()):
            if seat == 0:
                key = fault_kind(reason)
                report.faults[key] = report.faults.get(key, 0) + 1
                report.first_error = report.first_error or f"{players} seats, hand {record['n']}, {kind}: {reason}"
        report.hands += 1

    for n in _rounds(report, players, check.hands, check.thorough):
        table.play(match, n, book)
    table.end_match(match.hand_no)
    return report


def _timed(decide: Callable[[Any], Any], kind: str, report: VariantCheck,
           asked: Counter[str]) -> Callable[[Any], Any]:
    """`decide`, counted as asked and timed into the report."""
    def timed(view: Any) -> Any:
        report.decisions += 1
        asked[kind] += 1
        start = time.perf_counter()
        try:
            return decide(view)
        finally:
            report.times.append(time.perf_counter() - start)
    return timed


def _shake_hands(name: str, params: dict[str, Any], command: list[str], confinement: Confinement,
                 files: list[str], hidden: list[str]) -> None:
    """One handshake before any play: an external bot that cannot start fails once, not
    at every variant and table size (each would wait out `start_timeout`)."""
    try:
        probe(command, params, confinement, mounts=(tuple(files), (), tuple(hidden)))
    except ProtocolError as e:
        raise HandshakeError(f"{name} failed its handshake: {e}") from None


def _check_process(check: _Check, variant: str) -> VariantCheck:
    """One variant through real matches at every table size it allows, the bot a seat
    process in seat 0 (one process a match, as in a tournament); with `thorough`, one
    more match for each round of hands."""
    report = VariantCheck(variant, tuple(table_sizes(variant)))
    for players in report.players:
        for round_no, n in enumerate(_rounds(report, players, check.hands, check.thorough)):
            _check_process_table(check, variant, players, n, report, round_no)
    return report


def _check_process_table(check: _Check, variant: str, players: int, hands: int, report: VariantCheck,
                         round_no: int = 0) -> None:
    registry, name, command = check.registry, check.name, check.command
    rules = make_rules(variant)
    seed = derive_seed(CHECK_SEED, "check", variant, players)
    if round_no:  # a later round of --thorough: other deals
        seed = derive_seed(CHECK_SEED, "check", variant, players, round_no)
    bot = seat_record(name, name, check.params, seed, isolation=Isolation.PROCESS, command=command or None,
                      files=check.files + ([] if command else _own_files(registry, name)), hidden=check.hidden)
    others = [seat_record(f"random{s}", "random", {}, seed + s) for s in range(1, players)]
    job = Job(index=0, seed=seed, variant=variant, rules=rules, seats=(bot, *others), hands=hands,
              timing=Timing(check.timeout), confinement=check.confinement)
    with _stderr_of_seat(0) as stderr:
        data = orjson.loads(bytes(play_job(job, registry, report.times,
                                           asked=report.asked.setdefault(players, Counter()))))
    mine = data["summary"]["seats"][0]
    report.hands += len(data["hands"])
    report.decisions += mine["decisions"]
    for kind, n in mine["faults"].items():
        report.faults[kind] = report.faults.get(kind, 0) + n
    for record in data["hands"]:
        for _, seat, kind, reason in record.get("faults", ()):
            if seat == 0 and not report.first_error:
                report.first_error = f"{players} seats, hand {record['n']}, {kind}: {reason}"
                if fault_kind(reason) in DEADLY:
                    report.first_error += with_stderr(stderr)


def _own_files(registry: Any, name: str) -> list[str]:
    """A Python bot's own module, for the seat sandbox to show it (as a run does)."""
    return sandbox.module_files(registry.get(name).cls) if name in registry.bots else []


#: The faults that end a seat process: its stderr is shown with them.
DEADLY = ("crash", "time-out", "protocol")


@contextmanager
def _stderr_of_seat(seat: int) -> Iterator[deque[str]]:
    """The last lines seat `seat`'s process wrote to stderr during the block, as the
    match logs them (the seat's tag, then 'stderr: ')."""
    lines: deque[str] = deque(maxlen=STDERR_TAIL)
    mark = re.compile(rf" seat {seat} \(.*?\) stderr: ")

    class Tail(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            found = mark.search(text := record.getMessage())
            if found:
                lines.append(text[found.end():])

    logger, handler = logging.getLogger("naparena"), Tail(logging.INFO)
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(min(level or logging.WARNING, logging.INFO))
    try:
        yield lines
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


@dataclass(frozen=True)
class ExternalBot:
    """An external bot of a tournament file, as its handshake answered (`naparena bots -t`)."""

    alias: str
    command: tuple[str, ...]
    files: str           # the hash of the files its command names
    said: str = ""       # the name it gave
    version: str = ""
    failed: str | None = None  # why it did not answer


def external_bots(file: str | Path) -> list[ExternalBot]:
    """The file's external bots, each started once for its handshake, as a run starts it
    (sandboxed: shown its own files, the run's places hidden)."""
    t = load_tournament(file)
    t = replace(t, seats=resolve_sandbox(t.seats, None)[0])
    registry = registry_for(t)
    found = []
    for bot in (b for b in t.bots if b.command is not None):
        assert bot.command is not None
        entry = ExternalBot(bot.alias, tuple(bot.command), t.command_hash(bot))
        try:
            shown, hidden = seat_files(t, bot, registry) if t.seats.sandbox == Sandbox.BWRAP else ([], [])
            hello = probe(t.command_of(bot), bot.params, t.seats, mounts=(tuple(shown), (), tuple(hidden)))
            entry = replace(entry, said=str(hello["name"]), version=str(hello.get("version", "")))
        except ProtocolError as e:
            entry = replace(entry, failed=str(e))
        found.append(entry)
    return found


def checked_entry(file: str | Path, name: str, registry: Any = None) -> dict[str, Any]:
    """What `naparena check --tournament` needs of the file's entry `name` (alias or bot name),
    and the file's `timeout`, which its bots are played under: its files, and the places
    its sandbox hides (the tournament file, its log folder, the other bots' paths)."""
    t = load_tournament(file)
    entry = next((b for b in t.bots if b.alias == name), None) or next((b for b in t.bots if b.name == name), None)
    if entry is None:
        raise RunError(f"{file}: no bot with alias or name '{name}'; bots: {', '.join(b.alias for b in t.bots)}")
    files, hidden = seat_files(t, entry, registry if registry is not None else registry_for(t))
    return {"params": entry.params, "isolation": t.isolation_of(entry), "confinement": t.seats, "timeout": t.timeout,
            "files": files if entry.command is not None else t.files_of(entry), "hidden": hidden,
            **({"command": t.command_of(entry)} if entry.command is not None else {})}


def seat_sees(registry: Any, name: str, command: list[str] | None, files: list[str],
              hidden: list[str] | None = None) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """What a sandboxed seat of the bot is shown read-only besides the system, each
    (path, why and who asked), and what its own files named that it is not shown, each
    (path, why not)."""
    if command is not None:
        found = footprint(tuple(command), tuple(files), tuple(hidden or ()))
        return list(found.mounts), list(found.refused)
    own = [(p, "the bot's module") for p in _own_files(registry, name)]
    return [(p, "the interpreter and naparena") for p in sandbox.python_files()] + own + \
        [(p, "files = [...] (the tournament file)") for p in files], []
