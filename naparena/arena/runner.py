"""Runs a tournament: the worker entry point, match order, crashes, resume, standings.

Matches go to an executor (`executors/`) as plain data; each worker plays its match
(`match/`) and writes the match log itself. The parent books results strictly in schedule
order (`records/ledger.py`), so the standings, the disqualifications and every file in
the run directory (`records/rundir.py`) are the same for any number of workers and any
completion order.
"""

from __future__ import annotations

import json
import logging
import os
from concurrent.futures import FIRST_COMPLETED, wait
from pathlib import Path
from typing import Callable

from naparena.arena.executors.pool import WorkerDied, WorkerLost, make_executor
from naparena.arena.match.play import Job, play_job
from naparena.arena.records.ledger import (
    STAND_IN_BOT,
    booked_spec,
    end_of_unit,
    judge,
    skip_reason,
    stand_in_seats,
)
from naparena.arena.records.logs import FORMAT, dumps, read_match
from naparena.arena.records.rundir import (
    MANIFEST,
    MATCHES,
    STANDINGS,
    WHERE,
    make_run_dir,
    manifest,
    match_path,
    read_manifest,
    write_file,
)
from naparena.arena.setup.schedule import board_seeds, bot_seed, schedule
from naparena.arena.setup.tournament import Tournament
from naparena.bots.plugins import load_registry
from naparena.errors import ConfigError, RunError
from naparena.stats.standings import STAND_IN_ALIAS, Standings

log = logging.getLogger("naparena")

# A match whose worker is lost this often to something outside any bot stops the run.
MAX_LOSSES = 5


# --- in the worker --------------------------------------------------------------------

_registries: dict = {}


def _drop_in_key(folder: str | None) -> tuple:
    """What a worker's cached registry depends on: the folder and its files' mtimes."""
    if folder is None:
        return (None,)
    path = Path(folder).resolve()
    return (str(path),) + tuple(sorted((p.name, p.stat().st_mtime_ns) for p in path.glob("*.py")))


def run_job(job: Job) -> dict | tuple[dict, bytes]:
    """Worker entry point: play one match, write its log, return only its summary. A job
    without a path (played on another machine) returns (summary, log bytes) instead."""
    key = _drop_in_key(job.bots_dir)
    registry = _registries.get(key)
    if registry is None:
        registry = _registries[key] = load_registry(job.bots_dir)
    match_log = play_job(job, registry)
    if job.path is None:
        return match_log.summary, bytes(match_log)
    write_file(job.path, bytes(match_log))
    return match_log.summary


# --- the tournament's bots ------------------------------------------------------------

def bots_dir(t: Tournament) -> str | None:
    """The drop-in folder to load, or None when the default one is simply absent."""
    path = t.bots_path
    if t.bots_dir == "bots" and not path.exists():
        return None
    if not path.is_dir():
        problem = "is a file, not a folder" if path.exists() else "does not exist"
        raise ConfigError(t.path, "tournament.bots_dir", f"the drop-in bot folder {path} {problem}")
    return str(path.absolute())  # a worker whose bot changed directory must still find it


def registry_for(t: Tournament):
    registry = load_registry(bots_dir(t))
    if bots_dir(t) is None:
        registry.searched.append(f"no drop-in folder ({t.bots_path.resolve()} does not exist)")
    return registry


def _same_bots(run_dir: Path, old: dict | None, mine: dict) -> None:
    """Resuming must play the same bots: a drop-in file is known by its content hash, so an
    edited file, or another file of the same name (--bots-dir elsewhere), is refused."""
    old = old or {}
    for alias, now in mine.items():
        before = old.get(alias)
        if before != now:
            was = f"{before.get('source')} {before.get('version')}" if isinstance(before, dict) else "absent"
            raise RunError(f"{run_dir}: bot '{alias}' is not the one this run started with (then: {was};"
                           f" now: {now.get('source')} {now.get('version')}); start a new run")


# --- the run --------------------------------------------------------------------------

Progress = Callable[[int, int, int], None]  # (matches done, hands done, hands this session)


class Run:
    """One run of a tournament into `run_dir`, fresh or resumed."""

    def __init__(self, t: Tournament, registry, run_dir: Path, workers: int | None = None,
                 scheduler: str | None = None):
        # Absolute: a bot that changes a worker's directory must not move where logs go.
        self.t, self.registry, self.run_dir = t, registry, Path(run_dir).absolute()
        self.workers = workers if workers else (t.workers or os.cpu_count() or 1)
        # A Dask scheduler (see executors/cluster.py), or "" for this machine's pool.
        self.scheduler = t.scheduler if scheduler is None else scheduler
        if self.scheduler == "none":
            self.scheduler = ""
        self.specs = [s.as_dict() for s in schedule(t)]
        self.aliases = [b.alias for b in t.bots]
        self.bots = {b.alias: b for b in t.bots}
        self.rules = {v.name: v.rules.as_dict() for v in t.variants}
        # How each bot is run: nothing extra inline; a seat process, and its argv if external.
        self.processes = {b.alias: _process(t, b) for b in t.bots}

    def prepare(self, resume: bool = False) -> int:
        """Write (or, resuming, check) the manifest; return how many matches are already done."""
        make_run_dir(self.run_dir)
        mine = manifest(self.t, self.registry)
        path = self.run_dir / MANIFEST
        if path.exists() and not resume:
            raise RunError(f"{self.run_dir} already holds a run; resume it or start a new one")
        if path.exists():
            old = read_manifest(self.run_dir)
            if old.get("format") != FORMAT:
                raise RunError(f"{self.run_dir}: written in log format {old.get('format')}, this naparena "
                               f"writes format {FORMAT}; resume it with the version that started it")
            if old.get("config_hash") != mine["config_hash"]:
                raise RunError(f"{self.run_dir}: was run with another configuration; start a new run")
            _same_bots(self.run_dir, old.get("bots"), mine["bots"])
        else:
            write_file(path, json.dumps(mine, indent=1, sort_keys=True).encode() + b"\n")
        # Absolute paths, for `naparena resume` from anywhere; kept out of the manifest,
        # which must not depend on where the run was started.
        drop_ins = bots_dir(self.t)
        where = {"file": str(Path(self.t.path).resolve()) if self.t.path else None,
                 "bots_dir": str(Path(drop_ins).resolve()) if drop_ins else None}
        write_file(self.run_dir / WHERE, json.dumps(where, indent=1).encode() + b"\n")
        self.clean()  # left by an interrupted worker; its match will be played again
        return sum(1 for s in self.specs if match_path(self.run_dir, s["index"]).exists())

    def clean(self) -> None:
        """Delete temporary files a stopped worker left half-written."""
        for tmp in (self.run_dir / MATCHES).glob("*.tmp*"):
            try:
                tmp.unlink()
            except OSError:
                pass

    def job(self, spec: dict, crashes: list | None = None, stand_ins: tuple = ()) -> Job:
        seats = []
        for i, alias in enumerate(spec["seats"]):
            b = self.bots[alias]
            # The stand-in is naparena's own random bot, played inline whatever the seat's bot was.
            name, params, process = (STAND_IN_BOT, {}, {}) if i in stand_ins else (b.name, b.params, self.processes[alias])
            seats.append({"alias": alias, "name": name, "params": params,
                          "seed": bot_seed(self.t.seed, spec["index"], i), **process})
        if stand_ins:  # the log says which seats the stand-in played
            spec = {**spec, "stand_ins": list(stand_ins)}
        return Job(index=spec["index"], seed=spec["seed"], variant=spec["variant"],
                   rules=self.rules[spec["variant"]], seats=seats, hands=spec["hands"],
                   stack=self.t.stack, timeout=self.t.timeout, bots_dir=bots_dir(self.t),
                   path=str(match_path(self.run_dir, spec["index"])), spec=spec, crashes=crashes or [],
                   confinement=self.t.seats.as_dict(),
                   boards=board_seeds(spec["seed"], spec["hands"]) if spec.get("boards") else None)

    def open_executor(self):
        """The executor this run asks for: a Dask cluster, or this machine's pool."""
        if self.scheduler:
            from naparena.arena.executors.cluster import ClusterExecutor
            return ClusterExecutor(self.scheduler, self.registry, [b.name for b in self.t.bots], bots_dir(self.t))
        return make_executor(self.workers, self.t.timeout)

    def execute(self, progress: Progress | None = None, executor=None,
                notice: Callable[[str], None] | None = None) -> dict:
        """Play every match not yet done; return the standings (also written to disk).
        `notice` hears what the executor has to say (a cluster's workers and dashboard)."""
        standings = Standings([v.name for v in self.t.variants], self.aliases + [STAND_IN_ALIAS],
                              self.t.duplicate, self.t.sprt)
        own = executor is None
        if own:
            executor = self.open_executor()
        if notice and getattr(executor, "description", None):
            notice(executor.description)
        self.losses: dict[int, list] = {}
        try:
            self._play_all(standings, executor, progress)
        except BaseException:
            if own:
                getattr(executor, "terminate", executor.shutdown)()
                self.clean()
            raise
        if own:
            executor.shutdown()
        self._check_files()
        result = standings.result()
        write_file(self.run_dir / STANDINGS, json.dumps(result, indent=1, sort_keys=True).encode() + b"\n")
        return result

    def _check_files(self) -> None:
        """Every file the run wrote must still be there before it says it is done (a bot,
        or anything else, may have deleted one meanwhile)."""
        gone = [MANIFEST] if not (self.run_dir / MANIFEST).exists() else []
        gone += [f"{MATCHES}/{match_path(self.run_dir, s['index']).name}" for s in self.specs
                 if not match_path(self.run_dir, s["index"]).exists()]
        if gone:
            shown = ", ".join(gone[:3]) + (f" and {len(gone) - 3} more" if len(gone) > 3 else "")
            raise RunError(f"{self.run_dir}: {shown} disappeared while the run went on (deleted by a bot?);"
                           " no standings were written")

    def _play_all(self, standings: Standings, executor, progress: Progress | None) -> None:
        # Bounded look-ahead keeps memory flat; a cluster says how many matches it plays at once.
        window = max(2, getattr(executor, "workers", self.workers) * 3)
        todo = iter(self.specs)
        futures: dict = {}   # future → (spec, crashes, stand-in seats)
        ready: dict[int, dict | None] = {}
        next_index, hands_done, session_hands = 0, 0, 0
        submitted = 0
        while next_index < len(self.specs):
            while submitted < len(self.specs) and len(futures) + len(ready) < window:
                spec = next(todo)
                submitted += 1
                path = match_path(self.run_dir, spec["index"])
                if path.exists():
                    ready[spec["index"]] = None  # done in an earlier session: read at its turn
                elif skip_reason(spec, standings):
                    ready[spec["index"]] = {"skip": True}
                else:
                    stand_ins = stand_in_seats(spec, standings)
                    futures[executor.submit(run_job, self.job(spec, None, stand_ins))] = (spec, [], stand_ins)
            if next_index not in ready:
                done, _ = wait(list(futures), return_when=FIRST_COMPLETED)
                for f in done:
                    spec, crashes, stand_ins = futures.pop(f)
                    self._collect(f, spec, crashes, stand_ins, futures, ready, executor)
                continue
            spec = self.specs[next_index]
            outcome = ready.pop(next_index)
            stale = self._stale(spec, outcome, standings)
            if stale is not None:  # a bot was disqualified since: play it again with the stand-in
                futures[executor.submit(run_job, self.job(spec, None, stale))] = (spec, [], stale)
                continue
            summary = self._consume(spec, outcome, standings)
            following = self.specs[next_index + 1] if next_index + 1 < len(self.specs) else None
            end_of_unit(standings, spec, following)
            if summary is not None:
                hands_done += summary["hands"]
                if outcome is not None:
                    session_hands += summary["hands"]
            next_index += 1
            if progress:
                progress(next_index, hands_done, session_hands)

    def _collect(self, future, spec, crashes, stand_ins, futures, ready, executor) -> None:
        try:
            ready[spec["index"]] = {"summary": future.result(), "stand_ins": stand_ins}
        except WorkerLost as lost:
            if not self._lost(spec, lost):
                futures[executor.submit(run_job, self.job(spec, crashes, stand_ins))] = (spec, crashes, stand_ins)
                return
            crash = self._crash(spec, lost, crashes)
            job = self.job(spec, crashes + [crash], stand_ins)
            futures[executor.submit(run_job, job)] = (spec, crashes + [crash], stand_ins)
        except WorkerDied as died:
            crash = self._crash(spec, died, crashes)
            job = self.job(spec, crashes + [crash], stand_ins)
            futures[executor.submit(run_job, job)] = (spec, crashes + [crash], stand_ins)
        except RunError:
            raise
        except RuntimeError as e:  # not a bot's doing: the engine or the runner failed
            raise RunError(f"match {spec['index']} failed outside any bot: {e}") from None

    def _lost(self, spec: dict, lost: WorkerLost) -> bool:
        """A worker lost to something outside any bot: replay the match on a fresh one.
        True when it is lost again in the same bot call: the bot does it (say, by killing
        its own process), so it is charged as a crash after all."""
        w = lost.where
        place = (w["hand"], w["seat"], w["decision"]) if w["match"] == spec["index"] and w["seat"] >= 0 else None
        seen = self.losses.setdefault(spec["index"], [])
        if place is not None and place in seen:
            return True
        seen.append(place)
        log.warning("match %d: worker lost (%s); playing the match again", spec["index"], lost.reason)
        if len(seen) >= MAX_LOSSES:
            raise RunError(f"match {spec['index']}: its worker was lost {len(seen)} times to something"
                           f" outside any bot (last: {lost.reason})")
        return False

    def _crash(self, spec: dict, died: WorkerDied, crashes: list) -> list:
        w = died.where
        if w["match"] != spec["index"] or w["seat"] < 0:
            raise RunError(f"match {spec['index']}: a worker died outside any bot ({died.reason})")
        crash = [w["hand"], w["seat"], w["decision"], died.reason]
        if crash in crashes:
            raise RunError(f"match {spec['index']}: crash replay did not reproduce ({died.reason})")
        return crash

    def _stale(self, spec: dict, outcome: dict | None, standings: Standings) -> tuple | None:
        """The stand-in seats match `spec` must be replayed with, if it was played before a
        bot in it was disqualified (in schedule order); None if it stands as played."""
        if skip_reason(spec, standings) or (outcome is not None and outcome.get("skip")):
            return None
        wanted = stand_in_seats(spec, standings)
        if outcome is None:
            data = read_match(match_path(self.run_dir, spec["index"]), spec)
            played = None if "skipped" in data else tuple(data["match"].get("stand_ins", ()))
        else:
            played = outcome["stand_ins"]
        return wanted if played != wanted else None

    def _consume(self, spec: dict, outcome: dict | None, standings: Standings) -> dict | None:
        """Book match `spec` in schedule order; skip it if too few of its bots are left."""
        path = match_path(self.run_dir, spec["index"])
        reason = skip_reason(spec, standings)
        if reason:
            write_file(path, dumps({"format": FORMAT, "match": spec, "skipped": reason}))
            standings.skip(spec, reason)
            return None
        if outcome is None:
            data = read_match(path, spec)
            if "skipped" in data:
                standings.skip(spec, data["skipped"])
                return None
            summary = data["summary"]
        else:
            summary = outcome["summary"]
        booked = booked_spec(spec, stand_in_seats(spec, standings))
        standings.add(booked, summary)
        _note(booked, summary)
        judge(standings, booked, self.t.max_fault_share)
        return summary


def _process(t: Tournament, bot) -> dict:
    if t.isolation_of(bot) != "process":
        return {}
    return {"isolation": "process", **({"command": t.command_of(bot)} if bot.command is not None else {})}


def _note(spec: dict, summary: dict) -> None:
    """Faults and crashes to run.log, in schedule order like everything else."""
    for seat, (alias, s) in enumerate(zip(spec["seats"], summary["seats"])):
        if s["faults"]:
            faults = ", ".join(f"{k} {n}" for k, n in sorted(s["faults"].items()))
            log.info("match %d seat %d (%s): %s", spec["index"], seat, alias, faults)
        if "crashed_at" in s:
            log.warning("match %d seat %d (%s) crashed in hand %d", spec["index"], seat, alias, s["crashed_at"])
