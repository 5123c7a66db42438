"""A run of a tournament, from its file to its standings: the one lifecycle object the CLI,
the tests and the benchmarks all go through.

`Session.open` reads the tournament file, loads the bots, checks them and starts each
external bot once (preflight); `Session.resume` does the same for a run directory.
`Session.play` writes (or, resuming, checks) the manifest, opens the executor — this
machine's pool, forked while the process has one thread, or a Dask cluster — sends the
matches out as plain data (`Job`) through a `Dispatch` (arena/dispatch.py), which books
the results strictly in schedule order in a `Ledger`, and writes the standings; meanwhile
it owns `run.log`, the workers' log records and SIGTERM. Whoever runs it hears what happens through a `Watcher`. So the
standings, the disqualifications and every file in the run directory are the same for
any number of workers and any completion order.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import Any, Protocol

from naparena.arena.dispatch import Dispatch
from naparena.arena.executors.executor import MatchExecutor
from naparena.arena.executors.pool import in_process, make_executor
from naparena.arena.executors.worker_logs import WorkerLogs
from naparena.arena.match import bot_files, sandbox
from naparena.arena.match.job import Fault, Job, SeatRecord, seat_record
from naparena.arena.match.preflight import preflight
from naparena.arena.match.spares import close_spares
from naparena.arena.match.wall import Places, sandbox_own
from naparena.arena.match.warm import close_servers
from naparena.arena.records.checkpoint import saved_hands
from naparena.arena.records.ledger import STAND_IN_BOT, Ledger
from naparena.arena.records.rundir import Manifest, RunDir, latest_run_dir, manifest, new_run_dir, run_places
from naparena.arena.setup.reader import caveats, check_bots, load_tournament
from naparena.arena.setup.schedule import MatchSpec, bot_seed, schedule, total_hands
from naparena.arena.setup.settings import (
    SCHEDULER_RULE,
    Confinement,
    Isolation,
    Sandbox,
    Scheduler,
    parse_isolation,
    parse_sandbox,
)
from naparena.arena.setup.tournament import BotSpec, Tournament, with_isolation
from naparena.bots.plugins import Registry, bot_version, importable, load_registry
from naparena.errors import ConfigError, RunError

log = logging.getLogger("naparena")

# --- the tournament's bots ------------------------------------------------------------

def bots_dir(t: Tournament) -> str | None:
    """The drop-in folder to load, or None when the default one is simply absent."""
    path = t.bots_path
    if t.bots_dir == "bots" and not path.exists():
        return None
    if not path.is_dir():
        problem = "is a file, not a folder" if path.exists() else "does not exist"
        raise ConfigError(t.shown, "tournament.bots_dir", f"the drop-in bot folder {path} {problem}")
    return str(path.absolute())  # a worker whose bot changed directory must still find it


def registry_for(t: Tournament) -> Registry:
    registry = load_registry(bots_dir(t))
    if bots_dir(t) is None:
        registry.searched.append(f"no drop-in folder ({t.bots_path.resolve()} does not exist)")
    return registry


# --- who listens ----------------------------------------------------------------------

class Watcher(Protocol):
    """What a session tells whoever runs it (the CLI shows it; tests may record it).
    `Quiet` is one that does nothing: subclass it and override what you want to hear."""

    # A bare `return`, not just a docstring: mypy counts a protocol method whose body is
    # only a docstring as abstract, and `Quiet` must be instantiable.
    def failures(self, registry: Registry) -> None:
        """Plug-ins that failed to load (the rest loaded)."""
        return

    def caveat(self, text: str) -> None:
        """A warning about the tournament file, before any play."""
        return

    def started(self, session: Session, done: int) -> None:
        """The run directory is ready; `done` matches were played in an earlier session."""
        return

    def live(self) -> AbstractContextManager[Any]:
        """Entered once the workers are forked, left when play ends: a progress display's
        threads may start here, never before the fork."""
        return nullcontext()

    def notice(self, text: str) -> None:
        """What the executor has to say (a cluster's workers and dashboard)."""
        return

    def progress(self, matches: int, hands: int, session_hands: int) -> None:
        """Matches booked, hands booked, hands played in this session."""
        return


class Quiet(Watcher):
    """A watcher that hears everything and says nothing."""


# --- the session ----------------------------------------------------------------------

class Session:
    """One run of a tournament into a run directory, fresh or resumed."""

    def __init__(self, t: Tournament, registry: Registry, run_dir: str | Path | RunDir,
                 workers: int | None = None, scheduler: str | Scheduler | None = None, resuming: bool = False,
                 watcher: Watcher | None = None, replaying: str | Path | None = None):
        self.t, self.registry, self.run_dir = t, registry, RunDir(run_dir)
        self.resuming = resuming
        self.watcher = watcher or Quiet()
        # None: the file's; 0, on the command line as in the file: one per core.
        self.workers = (t.workers if workers is None else workers) or os.cpu_count() or 1
        # A Dask scheduler (see executors/cluster.py), or this machine's pool.
        self.scheduler: Scheduler = t.scheduler if scheduler is None else _scheduler(scheduler)
        self.specs: list[MatchSpec] = schedule(t)
        self.bots = {b.alias: b for b in t.bots}
        self.rules = {v.name: v.rules for v in t.variants}
        # How each bot's seat is started, its seed aside.
        # `replaying`: the run `verify --rerun` plays again, hidden from its seats as their own run is.
        runs = (str(self.run_dir.path), *((str(replaying),) if replaying else ()))
        self.seat_plans = {b.alias: _seat_plan(t, b, registry, runs) for b in t.bots}
        # Hands each match had in its checkpoint when this session took it up: not played now.
        self.earlier: dict[int, int] = {}
        # `verify --rerun`: per match index, the time-dependent faults its log holds,
        # taken as given: (hangs, as crash replays; time-outs, as `Job.given`).
        self.given: dict[int, tuple[list[Any], list[Any]]] = {}
        # Whether the run directory goes under the file's own log_dir: its errors name that key.
        self.in_files_log_dir = False
        # The public key the run is signed with (run --sign, resume --sign): the manifest says so.
        self.signed_by: str | None = None

    # --- opening ---

    # Ten arguments (PLR0913 waived): run_dir is positional in every caller; the rest are
    # keyword-only overrides, one per flag of `run`.
    @classmethod
    def open(cls, source: str | Path | Tournament, run_dir: str | Path | None = None, *,  # noqa: PLR0913
             log_dir: str | Path | None = None, bots_dir: str | Path | None = None,
             isolation: str | None = None, workers: int | None = None, scheduler: str | Scheduler | None = None,
             resume: bool = False, watcher: Watcher | None = None, sandbox: str | Sandbox | None = None) -> Session:
        """A tournament (its file, or one already read) ready to play: bots loaded and
        checked, external bots started once. Into `run_dir`, else a new directory under
        `log_dir` (or, with `resume`, the newest run of this configuration there).
        `sandbox` overrides [seats] sandbox; auto and required are resolved here, once."""
        t = source if isinstance(source, Tournament) else load_tournament(source)
        watcher = watcher or Quiet()
        t = with_sandbox(t, sandbox, watcher)
        t, registry = _ready(t, bots_dir, isolation, watcher)
        in_files_log_dir = run_dir is None and log_dir is None and bool(t.path)
        if run_dir is None:
            run_dir = latest_run_dir(t, log_dir) if resume else new_run_dir(t, log_dir)
        session = cls(t, registry, run_dir, workers, scheduler, resuming=resume, watcher=watcher)
        session.in_files_log_dir = in_files_log_dir
        return session

    @classmethod
    def resume(cls, run_dir: str | Path, *, bots_dir: str | Path | None = None, isolation: str | None = None,
               workers: int | None = None, scheduler: str | Scheduler | None = None,
               watcher: Watcher | None = None, sandbox: str | Sandbox | None = None) -> Session:
        """The run in `run_dir` ready to continue, from its own tournament file and bots,
        in the sandbox mode its manifest records unless `sandbox` says another."""
        rd = RunDir(run_dir)
        rd.check_format()
        where = rd.read_where()
        drop_ins = bots_dir or where.get("bots_dir")
        if sandbox is None:
            rd.check_format()  # a run of another format is refused as such, before its fields
            sandbox = recorded_sandbox(rd.load_manifest())
        return cls.open(_resumed(rd, where), Path(run_dir), bots_dir=drop_ins, isolation=isolation,
                        workers=workers, scheduler=scheduler, resume=True, watcher=watcher, sandbox=sandbox)

    @property
    def matches(self) -> int:
        return len(self.specs)

    @property
    def hands(self) -> int:
        return total_hands(self.t)

    @property
    def where(self) -> str:
        """Where the matches are played, in words."""
        return f"Dask ({self.scheduler})" if self.scheduler.on_dask else f"{self.workers} worker(s)"

    # --- playing ---

    def play(self, executor: MatchExecutor | None = None) -> dict[str, Any]:
        """Play every match not yet done; return the standings (also written to disk).
        With `executor` given, play on it (and leave it to the caller); else open the one
        the run asks for. The run's log goes to `run.log`; SIGTERM interrupts like Ctrl-C."""
        watcher = self.watcher
        if self.scheduler.on_dask and executor is None:
            from naparena.arena.executors.cluster import require_distributed
            require_distributed()  # before anything is written: say how to install it
        worker_logs = None
        with _sigterm_interrupts():
            try:
                done = self.prepare()
                worker_logs = WorkerLogs(_log_to(self.run_dir))
                watcher.started(self, done)
                if executor is not None:
                    worker_logs.start()
                    with watcher.live():
                        return self.execute(watcher, executor)
                # Fork the workers while this process has one thread; the log reader and
                # the progress display start theirs after (a fork copies held locks).
                if not self.scheduler.on_dask and not in_process():
                    worker_logs.arm()
                executor = self.open_executor()
                worker_logs.start()
                try:
                    with watcher.live():
                        result = self.execute(watcher, executor)
                except BaseException:
                    executor.terminate()
                    self.run_dir.clean()
                    raise
                executor.shutdown()
                return result
            finally:
                close_spares()  # a run played in this process (NAPARENA_IN_PROCESS) started its own
                close_servers()  # and its seat servers, after the seats they forked
                if worker_logs is not None:
                    worker_logs.stop()  # every record the workers sent is in run.log
                _drop_run_logging()

    def prepare(self) -> int:
        """Write (or, resuming, check) the manifest; return how many matches are already done."""
        rd = self.run_dir
        try:
            rd.make()
        except RunError as e:
            if not self.in_files_log_dir:
                raise
            raise ConfigError(self.t.shown, "tournament.log_dir", str(e)) from None
        mine = manifest(self.t, self.registry)
        if rd.started() and not self.resuming:
            raise RunError(f"{rd} already holds a run; resume it or start a new one")
        if rd.started():
            rd.check_resume(mine, self.t.shown)
        else:
            rd.write_manifest(mine)
        if self.signed_by is not None:
            rd.mark_signed(self.signed_by)
        rd.write_where(self.t.path, bots_dir(self.t), None if self.t.path else str(self.t.base.resolve()))
        rd.clean()  # left by an interrupted worker; its match will be played again
        done = rd.done_matches()
        return sum(1 for spec in self.specs if spec.index in done)

    def job(self, entry: MatchSpec, crashes: list[Any] | None = None,
            stand_ins: tuple[Any, ...] = (), prestart: bool = False) -> Job:
        hangs, time_outs = self.given.get(entry.index, ([], []))
        seats = []
        for i, alias in enumerate(entry.seats):
            seed = bot_seed(self.t.seed, entry.index, i)
            # The stand-in is naparena's own random bot, played inline whatever the seat's bot was.
            seats.append(seat_record(alias, STAND_IN_BOT, {}, seed) if i in stand_ins
                         else self.seat_plans[alias](seed))
        return Job(index=entry.index, seed=entry.seed, variant=entry.variant,
                   rules=self.rules[entry.variant], seats=tuple(seats), hands=entry.hands,
                   stack=self.t.stack, timing=self.t.timing, bots_dir=self.drop_ins,
                   path=str(self.run_dir.match_path(entry.index)), spec=entry, stand_ins=tuple(stand_ins),
                   crashes=_faults(hangs + (crashes or [])), given=_faults(time_outs),
                   checkpoint=self._checkpoint(entry.index), confinement=self.t.seats, prestart=prestart,
                   luck=self.t.luck_adjusted)

    @functools.cached_property
    def drop_ins(self) -> str | None:
        """The drop-in folder every job names (`bots_dir`), found once: three stat calls a job."""
        return bots_dir(self.t)

    @functools.cached_property
    def _checkpoints(self) -> set[Path]:
        """The checkpoints earlier sessions left, listed before this one builds its first job:
        a match's own is written only after its job is built (and `earlier` keeps the first
        count), so no file is opened for a match without one."""
        return self.run_dir.checkpoint_files()

    def _checkpoint(self, index: int) -> str:
        path = self.run_dir.checkpoint_path(index)
        if index not in self.earlier:  # read once: a match played again keeps what it began with
            self.earlier[index] = saved_hands(path) if path in self._checkpoints else 0
        return str(path)

    def open_executor(self) -> MatchExecutor:
        """The executor this run asks for: a Dask cluster, or this machine's pool."""
        if self.scheduler.on_dask:
            from naparena.arena.executors.cluster import ClusterExecutor
            return ClusterExecutor(self.scheduler, self.registry, [b.name for b in self.t.bots], bots_dir(self.t))
        return make_executor(self.workers)

    def execute(self, watcher: Watcher, executor: MatchExecutor) -> dict[str, Any]:
        """Play every match not yet done on `executor`; write and return the standings."""
        ledger = Ledger.of(self.t)
        if executor.description:
            watcher.notice(executor.description)
        Dispatch(self.specs, self.run_dir, self.job, self.t.timing, self.earlier).play_all(
            ledger, executor, watcher.progress)
        self._check_files()
        self.run_dir.drop_checkpoints()
        result = ledger.result()
        self.run_dir.write_standings(result)
        return result

    def _check_files(self) -> None:
        """Every file the run wrote must still be there before it says it is done (a bot,
        or anything else, may have deleted one meanwhile)."""
        gone = self.run_dir.missing([spec.index for spec in self.specs])
        if gone:
            shown = ", ".join(gone[:3]) + (f" and {len(gone) - 3} more" if len(gone) > 3 else "")
            raise RunError(f"{self.run_dir}: {shown} disappeared while the run went on (deleted by a bot?);"
                           " no standings were written")


def _scheduler(text: str | Scheduler) -> Scheduler:
    """--scheduler as given: already parsed, or text to parse (one clear error if not)."""
    if isinstance(text, Scheduler):
        return text
    try:
        return Scheduler.parse(text)
    except ValueError:
        raise RunError(f"--scheduler '{text}' {SCHEDULER_RULE}") from None


def _ready(t: Tournament, drop_ins: str | Path | None, isolation: str | Isolation | None,
           watcher: Watcher) -> tuple[Tournament, Registry]:
    """The tournament with its bots loaded and checked, and external bots started once."""
    if drop_ins is not None:
        folder = Path(drop_ins)
        if not folder.is_dir():
            problem = "is a file, not a folder" if folder.exists() else "does not exist"
            raise RunError(f"--bots-dir: the drop-in bot folder {folder} {problem}")
        # Between resolved paths: a tournament folder reached through a link has another
        # parent than its spelling says, and "../" from the link would leave the real one.
        beside = t.base.resolve()
        t = dataclasses.replace(t, bots_dir=os.path.relpath(folder.resolve(), beside))
    if isolation is not None:
        try:
            t = with_isolation(t, parse_isolation(isolation))
        except ValueError as e:
            raise RunError(f"--isolation {e}") from None
    registry = registry_for(t)
    watcher.failures(registry)
    for caveat in caveats(t):
        watcher.caveat(caveat)
    t = check_bots(t, registry)
    shake_hands(t, registry)  # external bots: a command that cannot start is a bad file, before any play
    return t, registry


def shake_hands(t: Tournament, registry: Registry) -> None:
    """`preflight` each external bot as its seats will start: sandboxed, with its own files."""
    preflight(t, {b.alias: seat_files(t, b, registry) for b in t.bots if b.command is not None}
              if t.seats.sandbox == Sandbox.BWRAP else {})


def _seat_plan(t: Tournament, bot: BotSpec, registry: Registry, runs: tuple[str, ...]) -> Callable[[int], SeatRecord]:
    """How a seat of `bot` is built, given its seed: inline, or in a seat process (an
    external bot's argv; sandboxed, its own files shown read-only, the run's places masked)."""
    isolation = t.isolation_of(bot)
    command = t.command_of(bot) if bot.command is not None else None
    files: tuple[list[str], list[str]] = ([], [])
    if isolation is Isolation.PROCESS and t.seats.sandbox == Sandbox.BWRAP:
        files = seat_files(t, bot, registry, *runs)
    serves = None
    if isolation is Isolation.PROCESS and command is None:
        entry = registry.get(bot.name)
        where = importable(entry)
        serves = (where, bot_version(entry)) if where is not None else None
    return functools.partial(seat_record, bot.alias, bot.name, bot.params, isolation=isolation, command=command,
                             files=files[0], hidden=files[1], serves=serves, preload=bot.preload)


def _faults(faults: list[list[Any]]) -> tuple[Fault, ...]:
    """Crashes or time-outs as a job carries them: (hand, seat, decision, reason)."""
    return tuple((int(h), int(s), int(d), str(r)) for h, s, d, r in faults)


def seat_files(t: Tournament, bot: BotSpec, registry: Registry, *runs: str) -> tuple[list[str], list[str]]:
    """(the paths a sandboxed seat of `bot` is shown besides its command's footprint,
    the paths masked from it): its `files` (and a Python bot's module); the run directories
    (`runs`) and the runs beside them, the log folders (`rundir.run_places`), the tournament
    file and every other bot's own paths. A path the file names
    for it that is, or lies in, one of those, or that is `/` or holds a home folder, is
    a bad tournament file (`ConfigError`), before any play."""
    drop_ins = str(t.bots_path.resolve())

    def module(b: BotSpec) -> list[str]:
        return [] if b.command is not None or b.name not in registry.bots else \
            sandbox.module_files(registry.get(b.name).cls)

    def own(b: BotSpec, files: bool = True) -> list[str]:
        # A drop-in's module is its own; an installed bot's (naparena's reference bots, a
        # plug-in package) is shared code every Python seat imports.
        mine = [m for m in module(b) if m.startswith(drop_ins + os.sep)]
        return bot_files.own_paths(t.command_of(b) if b.command is not None else None,
                                   t.files_of(b) if files else [], mine)

    shown = t.files_of(bot) + module(bot)
    places = run_places(t, *runs)
    if t.path:  # a tournament built from a dict has no file to hide
        places[t.path] = "the tournament file"
    others = {p: f"bot '{b.alias}''s own path" for b in t.bots if b.alias != bot.alias for p in own(b)}
    i = t.bots.index(bot) + 1
    # What the entry's `files` name is checked against every other bot's paths except a
    # folder its own command shares with them (drop-ins in one folder, say).
    # What the entry names is checked against every other bot's paths but those it shares:
    # a folder holding its own folder (drop-ins side by side), or a path inside its own
    # folder (two entries running one program).
    folder = bot_files.bot_folder(t.command_of(bot)) if bot.command is not None else None
    mine = [folder] if folder else own(bot, files=False)
    theirs = {p: why for p, why in others.items() if p in bot_files.masks(mine, [p], [])
              and not (folder and os.path.abspath(p).startswith(os.path.abspath(folder) + os.sep))}
    _check_named(t, bot, i, {**theirs, **places})
    try:
        hidden = bot_files.masks(own(bot), list(others), list(places))
    except bot_files.InsideRunPlace as e:
        raise ConfigError(t.shown, f"bots[{i}].command" if bot.command else f"bots[{i}].files",
                          f"bot '{bot.alias}' has its own files in {e}, which no seat may see; "
                          "move the bot, or the run's log folder, elsewhere") from None
    return shown, list(hidden)


def _check_named(t: Tournament, bot: BotSpec, i: int, places: dict[str, str]) -> None:
    """One clear error for a path `bot`'s entry names that no seat may see: a place of
    the run or another bot's (equal, inside, or the same file or folder by another name),
    `/` or a folder the sandbox makes itself, or a home folder or one above it."""
    wall = Places.of(tuple(places))
    named = [("files", p) for p in t.files_of(bot)]
    if bot.command is not None:
        command = t.command_of(bot)
        named += [("command", a) for a in command if os.path.isabs(a) and os.path.exists(a)]
    for key, path in named:
        problem = None
        if sandbox_own(path):
            if key == "command":
                continue  # the seat's own /tmp, /dev/shm: the sandbox makes them
            problem = "a place the sandbox makes itself for every seat; it is never shown from this machine"
        elif (home := wall.holds_home(path)) is not None:
            problem = f"is or holds the home folder {home}, which no seat may see whole"
        elif (found := wall.relation(path)) is not None:
            how, place = found
            problem = f"{how} {places.get(place, place)} ({place}), which no seat may see"
        if problem is not None:
            written = next((w for w in (bot.files if key == "files" else bot.command or ())
                            if os.path.abspath(t.base / w) == path), path)
            raise ConfigError(t.shown, f"bots[{i}].{key}", f"bot '{bot.alias}' names {written}: {problem}")


def with_sandbox(t: Tournament, mode: str | Sandbox | None, watcher: Watcher) -> Tournament:
    """The tournament with its sandbox mode (`mode` if given, else [seats]) resolved to
    the one the run uses (BWRAP, OFF or a prefix), before any job is built: the seats then
    only compare it. Auto without bubblewrap warns once, required refuses."""
    seats, warning = resolve_sandbox(t.seats, mode)
    if warning is not None:
        watcher.caveat(warning)
    return dataclasses.replace(t, seats=seats)


def resolve_sandbox(seats: Confinement, mode: str | Sandbox | None) -> tuple[Confinement, str | None]:
    """The one place a sandbox mode is resolved (a run's, `naparena check`'s): `mode`
    (--sandbox) if given, else [seats] sandbox, as the seats will use it, with the warning
    to give once."""
    wanted: Sandbox | tuple[str, ...] = seats.sandbox
    if isinstance(mode, Sandbox):  # a manifest's, parsed where it was read
        wanted = mode
    elif mode is not None:
        try:
            wanted = parse_sandbox(mode)
        except ValueError as e:
            raise RunError(f"--sandbox {e}") from None
    used, warning = sandbox.resolve(wanted)
    return dataclasses.replace(seats, sandbox=used), warning


def _resumed(rd: RunDir, where: Mapping[str, Any]) -> Path | Tournament:
    """What a run is resumed from: its tournament file; or, for a tournament built from a
    mapping in Python (no file), the configuration its manifest records, its relative
    paths from the folder they were from when it started."""
    if where.get("file"):
        return Path(where["file"])
    folder = where.get("folder")
    if not isinstance(folder, str):
        raise RunError(f"{rd}: the run does not say which tournament file it came from")
    return dataclasses.replace(rd.recorded_tournament(), path="", label=str(rd.manifest), folder=folder)


def recorded_sandbox(manifest: Manifest) -> Sandbox | None:
    """The sandbox mode a run's manifest records (None for a prefix, which the tournament
    file still holds)."""
    seats = manifest.tournament.get("seats", {})
    mode = seats.get("sandbox") if isinstance(seats, Mapping) else None
    if not isinstance(mode, str):
        return None
    try:
        return parse_sandbox(mode)
    except ValueError as e:
        raise RunError(f"the run's manifest: tournament.seats.sandbox {e}") from None


# --- signals and run.log --------------------------------------------------------------

def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt  # SIGTERM ends a run the way Ctrl-C does: finished matches kept


@contextmanager
def _sigterm_interrupts() -> Iterator[None]:
    """SIGTERM as Ctrl-C while a run plays (signals reach only the main thread)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _log_to(run_dir: RunDir) -> list[logging.Handler]:
    """Warnings to stderr; everything (per-match faults too) to run.log in the run directory.
    Returns the two handlers, which also handle the workers' records (executors/worker_logs.py)."""
    root = logging.getLogger()
    _drop_run_logging()
    try:
        file_handler = logging.FileHandler(run_dir.log)
    except OSError as e:
        raise RunError(f"{run_dir.log}: cannot write it: {e.strerror}") from None
    file_handler.setFormatter(logging.Formatter("%(levelname)s %(message)s"))
    file_handler.setLevel(logging.INFO)
    stderr_handler = logging.StreamHandler(sys.stderr)
    stderr_handler.setLevel(logging.WARNING)
    stderr_handler.setFormatter(logging.Formatter("%(levelname)s %(message)s"))
    for h in (file_handler, stderr_handler):
        setattr(h, "_naparena", True)  # noqa: B010 (marks the handlers a run added)
        root.addHandler(h)
    log.setLevel(logging.INFO)
    return [file_handler, stderr_handler]


def _drop_run_logging() -> None:
    """Remove (and close) the handlers a run added."""
    root = logging.getLogger()
    for h in list(root.handlers):
        if getattr(h, "_naparena", False):
            root.removeHandler(h)
            h.close()
